//! Finding scenario files, planning the trials (scenario × provider, with
//! filters and skips), and running them all into a [`Summary`]. Separate
//! because it is about the suite, not about any one scenario.

use std::path::{Path, PathBuf};

use super::contract::{DriverFactory, Verdict, line};
use super::scenario::run_scenario;
use crate::error::ConformanceError;
use crate::schema::{ProviderKind, Scenario};

/// Every `*.yaml` file under the given files or directories (recursive),
/// sorted; a directory that cannot be read is reported as an error.
pub fn collect_files(roots: &[PathBuf]) -> (Vec<PathBuf>, Vec<ConformanceError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for root in roots {
        walk(root, &mut files, &mut errors, true);
    }
    files.sort();
    files.dedup();
    (files, errors)
}

fn walk(path: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<ConformanceError>, explicit: bool) {
    let read_err = |message: String| ConformanceError::scenario(path.to_owned(), message);
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => match std::fs::read_dir(path) {
            Ok(entries) => {
                let mut children: Vec<PathBuf> =
                    entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
                children.sort();
                for c in children {
                    walk(&c, files, errors, false);
                }
            }
            Err(e) => errors.push(read_err(format!("cannot read directory: {e}"))),
        },
        Ok(_) => {
            // A file named explicitly runs whatever its extension.
            if explicit || path.extension().is_some_and(|e| e == "yaml") {
                files.push(path.to_owned());
            }
        }
        Err(e) => errors.push(read_err(format!("cannot read: {e}"))),
    }
}

/// Filters of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Only scenarios carrying this tag.
    pub tag: Option<String>,
    /// Only this provider.
    pub provider: Option<ProviderKind>,
}

/// Totals of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Output lines, the last being `N passed, N failed`.
    pub lines: Vec<String>,
    /// Passed scenario runs.
    pub passed: usize,
    /// Failed scenario runs and unparsable files.
    pub failed: usize,
}

impl Summary {
    /// Whether the run should exit with status 0.
    pub fn success(&self) -> bool {
        self.failed == 0
    }
}

/// One scenario × provider to run, after parsing and filtering.
#[derive(Clone, Debug)]
pub struct Trial {
    /// The scenario.
    pub scenario: Scenario,
    /// The provider.
    pub provider: ProviderKind,
}

/// Parses the files and expands them into trials; unparsable files and
/// duplicate names come back as failure lines.
pub fn plan(paths: &[PathBuf], opts: &RunOptions) -> (Vec<Trial>, Vec<String>) {
    let (files, errors) = collect_files(paths);
    let mut failures: Vec<String> = errors.iter().map(|e| format!("FAIL {e}")).collect();
    let mut trials = Vec::new();
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    for file in files {
        let sc = match Scenario::load(&file) {
            Ok(sc) => sc,
            Err(e) => {
                failures.push(format!("FAIL {e}"));
                continue;
            }
        };
        if let Some((_, other)) = seen.iter().find(|(n, _)| *n == sc.name) {
            failures.push(format!(
                "FAIL {}: duplicate scenario name `{}` (also {})",
                file.display(),
                sc.name,
                other.display()
            ));
            continue;
        }
        seen.push((sc.name.clone(), file.clone()));
        if opts.tag.as_ref().is_some_and(|t| !sc.tags.contains(t)) {
            continue;
        }
        for &p in &sc.providers {
            if opts.provider.is_none_or(|only| only == p) {
                trials.push(Trial {
                    scenario: sc.clone(),
                    provider: p,
                });
            }
        }
    }
    (trials, failures)
}

/// The single-threaded runtime a trial runs on (deterministic background
/// progress, see `let_background_run`), or the failing verdict.
pub(crate) fn trial_runtime() -> Result<tokio::runtime::Runtime, Verdict> {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| Verdict::Fail(format!("cannot start a tokio runtime: {e}")))
}

/// Runs one trial on a fresh single-threaded tokio runtime.
pub fn run_trial<F: DriverFactory>(trial: &Trial, factory: &F) -> Verdict {
    let rt = match trial_runtime() {
        Ok(rt) => rt,
        Err(v) => return v,
    };
    rt.block_on(run_scenario(
        &trial.scenario,
        trial.provider,
        factory.create(),
    ))
}

/// [`run_trial`], telling `observer` about each step.
pub fn run_trial_observed<F: DriverFactory>(
    trial: &Trial,
    factory: &F,
    observer: &mut dyn super::contract::Observer,
) -> Verdict {
    let rt = match trial_runtime() {
        Ok(rt) => rt,
        Err(v) => return v,
    };
    rt.block_on(super::scenario::run_observed(
        &trial.scenario,
        trial.provider,
        factory.create(),
        observer,
    ))
}

/// Runs every scenario under `paths`, printing each line through `emit` as
/// it is produced.
pub fn run_all<F: DriverFactory>(
    paths: &[PathBuf],
    opts: &RunOptions,
    factory: &F,
    mut emit: impl FnMut(&str),
) -> Summary {
    let mut summary = Summary::default();
    let (trials, failures) = plan(paths, opts);
    for f in failures {
        emit(&f);
        summary.lines.push(f);
        summary.failed += 1;
    }
    for t in &trials {
        let v = run_trial(t, factory);
        match v {
            Verdict::Pass => summary.passed += 1,
            Verdict::Fail(_) => summary.failed += 1,
        }
        let l = line(&t.scenario.name, t.provider, &v);
        emit(&l);
        summary.lines.push(l);
    }
    let last = format!("{} passed, {} failed", summary.passed, summary.failed);
    emit(&last);
    summary.lines.push(last);
    summary
}
