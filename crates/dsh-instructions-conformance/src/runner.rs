//! The scenario loop: one run per scenario and provider, through a [`Driver`].
//!
//! The runner owns everything the format defines (filesystem changes, path
//! rewriting, step numbering, settling before checks, counters, output lines);
//! a [`Driver`] only turns steps into calls on a host + runtime and reports
//! what the model would see. That seam lets the runner be tested with a
//! scripted driver and lets another host implementation reuse it. An
//! [`Observer`] sees each step and what came of it, in order, as structured
//! data: `replay` prints its transcript from one ([`crate::transcript`]).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use camino::Utf8PathBuf;
use dsh_instructions_discovery::MemoryProvider;

use crate::error::{DriverError, StepError};
use crate::fsmodel::{DiskFixture, FsFixture, LocalFuture, MemoryFixture, PathMap};
use crate::matcher::{self, Observation, ObservedMessage, ObservedSource};
use crate::schema::{
    Action, Compact, ConfigInput, Decision, Env, EventKind, FsMap, Outcome, ParseError,
    ProviderKind, Scenario, Step,
};

/// How long one step may take before the runner gives up on it: a safety
/// net against a scenario that leaves a pre-step blocked on a gate, not a
/// performance check.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// The filesystem provider a mount uses.
#[derive(Clone, Debug)]
pub enum ProviderHandle {
    /// The in-memory provider (already restricted to the mount's trusted roots).
    Memory(MemoryProvider),
    /// A cap-std provider the driver opens on the mount's trusted roots.
    Disk,
    /// `no_provider: true`.
    None,
}

/// Everything a driver needs to mount a plugin instance. Paths are already
/// rewritten into the provider's namespace.
#[derive(Clone, Debug)]
pub struct MountSpec {
    /// Which provider the scenario runs on.
    pub kind: ProviderKind,
    /// The filesystem provider.
    pub provider: ProviderHandle,
    /// Raw configuration (`dsh_home` rewritten); `None` = disabled.
    pub config: Option<ConfigInput>,
    /// Environment for home resolution (values rewritten).
    pub env: Env,
    /// Explicit trusted roots; `None`: the default of the mount entry point
    /// (project root + DSH home, R-RT-11), which the driver derives — the
    /// runner never computes roots itself.
    pub trusted_roots: Option<Vec<Utf8PathBuf>>,
    /// Session cwd.
    pub cwd: Utf8PathBuf,
}

/// A pre-step as the driver runs it.
#[derive(Debug)]
pub struct PreStepInput<'a> {
    /// Step number in the turn.
    pub step: u32,
    /// Direct prompt messages claimed by this step.
    pub claimed: &'a [String],
    /// Messages appended after them by the host.
    pub extra: &'a [String],
    /// Downstream decision.
    pub decision: Decision,
    /// When given, cancel the step as soon as this resolves.
    pub cancel: Option<CancelSignal<'a>>,
}

/// A future that fires when the step must be cancelled.
pub struct CancelSignal<'a>(pub LocalFuture<'a, ()>);

impl std::fmt::Debug for CancelSignal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelSignal")
    }
}

/// What a pre-step returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreStepResult {
    /// Completed or cancelled.
    pub outcome: Outcome,
    /// Labels of the decision's messages (`workspace`, `rejected`, texts).
    pub batch: Vec<String>,
    /// The workspace message folded into the batch.
    pub entered: Option<ObservedMessage>,
}

/// A tool result as the driver delivers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInput {
    /// Tool name.
    pub name: String,
    /// Path argument (absolute values rewritten).
    pub path: Option<String>,
    /// Explicit string arguments (absolute paths inside rewritten).
    pub args: std::collections::BTreeMap<String, String>,
    /// `false` = error result.
    pub ok: bool,
    /// Cancelled execution.
    pub cancelled: bool,
    /// Execution token.
    pub token: String,
    /// Parent token.
    pub parent: Option<String>,
}

/// Host state a driver reports after settling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostState {
    /// Pending workspace messages in the next-step inbox.
    pub inbox: Vec<ObservedMessage>,
    /// Labels of persisted user messages.
    pub history: Vec<String>,
    /// Sources of the visible workspace messages, oldest first.
    pub visible: Vec<ObservedSource>,
}

/// Drives a host + runtime through scenario steps. Errors are driver or
/// runtime failures ([`DriverError`]) and fail the scenario.
pub trait Driver {
    /// Mounts the first plugin instance over an empty session.
    fn mount(&mut self, spec: &MountSpec) -> impl Future<Output = Result<(), DriverError>>;
    /// Runs a pre-step.
    fn pre_step(
        &mut self,
        input: PreStepInput<'_>,
    ) -> impl Future<Output = Result<PreStepResult, DriverError>>;
    /// Delivers a tool result.
    fn tool(&mut self, input: &ToolInput) -> impl Future<Output = Result<(), DriverError>>;
    /// Appends a session event.
    fn event(&mut self, event: EventKind) -> impl Future<Output = Result<(), DriverError>>;
    /// Hides events from the visible surface.
    fn compact(&mut self, compact: &Compact) -> impl Future<Output = Result<(), DriverError>>;
    /// New loop instance over the same history (inbox and plugin state gone).
    fn resume(&mut self) -> impl Future<Output = Result<(), DriverError>>;
    /// Disposes the plugin instance and mounts a new one (inbox kept).
    fn remount(&mut self, spec: &MountSpec) -> impl Future<Output = Result<(), DriverError>>;
    /// Awaits the runtime's `settle()`.
    fn settle(&mut self) -> impl Future<Output = Result<(), DriverError>>;
    /// Reports inbox, history and visible sources.
    fn observe(&mut self) -> impl Future<Output = Result<HostState, DriverError>>;
}

/// What one scenario step did, as the runner saw it.
#[derive(Clone, Copy, Debug)]
pub struct StepRecord<'a> {
    /// Position of the step in the scenario (0-based).
    pub index: usize,
    /// The step as parsed.
    pub step: &'a Step,
    /// For a pre-step: the step number within the turn it ran as.
    pub step_number: Option<u32>,
    /// For a pre-step that returned: what it returned.
    pub pre_step: Option<&'a PreStepResult>,
    /// Host state after settling; only steps with an `expect` settle and
    /// observe (settling elsewhere could wait on a gate left closed on
    /// purpose).
    pub host: Option<&'a HostState>,
    /// Why the step's driver call, settle or observe failed (a timeout
    /// included); the run stops after this step. An unmet expectation is
    /// not an error here: it is the run's [`Verdict`].
    pub error: Option<&'a str>,
}

/// Watches a run: told about the first mount and then about every step
/// that ran, in scenario order, after it finished (or failed). Filesystem
/// steps (`write`, `remove`, `release`) are reported too, though no driver
/// sees them. The default methods ignore everything.
pub trait Observer {
    /// Before the first mount, with the spec the driver gets.
    fn mounting(&mut self, spec: &MountSpec) {
        let _ = spec;
    }
    /// After a step.
    fn step(&mut self, record: &StepRecord<'_>) {
        let _ = record;
    }
}

/// Observes nothing.
impl Observer for () {}

/// Makes a fresh driver per scenario run.
pub trait DriverFactory {
    /// The driver type.
    type Driver: Driver;
    /// A new driver with an empty session.
    fn create(&self) -> Self::Driver;
}

/// Result of one scenario on one provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every expectation held.
    Pass,
    /// Something failed; the reason is ready for the output line.
    Fail(String),
}

/// One line of runner output for a scenario × provider.
///
/// ```
/// use dsh_instructions_conformance::runner::{line, Verdict};
/// use dsh_instructions_conformance::schema::ProviderKind;
/// assert_eq!(line("a", ProviderKind::Memory, &Verdict::Pass), "ok   a [memory]");
/// assert_eq!(
///     line("a", ProviderKind::Disk, &Verdict::Fail("step 1 (pre_step): x".into())),
///     "FAIL a [disk]: step 1 (pre_step): x"
/// );
/// ```
pub fn line(name: &str, kind: ProviderKind, verdict: &Verdict) -> String {
    match verdict {
        Verdict::Pass => format!("ok   {name} [{kind}]"),
        Verdict::Fail(reason) => format!("FAIL {name} [{kind}]: {reason}"),
    }
}

struct Mounting {
    config: Option<ConfigInput>,
    env: Env,
    trusted_roots: Option<Vec<String>>,
}

fn rewrite_config(config: &Option<ConfigInput>, paths: &PathMap) -> Option<ConfigInput> {
    config.as_ref().map(|c| {
        let mut c = c.clone();
        c.dsh_home = c.dsh_home.map(|h| paths.map_home_value(&h));
        c
    })
}

fn rewrite_env(env: &Env, paths: &PathMap) -> Env {
    Env {
        home: paths.map_home_value(&env.home),
        dsh_home: env.dsh_home.as_ref().map(|h| paths.map_home_value(h)),
    }
}

fn mount_spec(
    sc: &Scenario,
    kind: ProviderKind,
    m: &Mounting,
    fixture: &dyn FsFixture,
    memory: Option<&MemoryProvider>,
) -> MountSpec {
    let paths = fixture.paths();
    let trusted_roots = m
        .trusted_roots
        .as_ref()
        .map(|r| r.iter().map(|p| paths.map_path(p)).collect());
    let provider = if sc.no_provider {
        ProviderHandle::None
    } else {
        match memory {
            Some(p) => ProviderHandle::Memory(p.clone()),
            None => ProviderHandle::Disk,
        }
    };
    MountSpec {
        kind,
        provider,
        config: rewrite_config(&m.config, paths),
        env: rewrite_env(&m.env, paths),
        trusted_roots,
        cwd: paths.map_path(&sc.cwd),
    }
}

/// Applies `fs` or a `write` step to the provider's tree.
fn write_entries(fixture: &dyn FsFixture, entries: &FsMap) -> Result<(), StepError> {
    for (path, entry) in &entries.0 {
        fixture.insert(path, entry).map_err(StepError::Fixture)?;
    }
    Ok(())
}

async fn timed<T>(
    what: &'static str,
    f: impl Future<Output = Result<T, DriverError>>,
) -> Result<T, StepError> {
    match tokio::time::timeout(STEP_TIMEOUT, f).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(StepError::Timeout {
            what,
            secs: STEP_TIMEOUT.as_secs(),
        }),
    }
}

/// How many times the runner yields after a step without `expect`.
const BACKGROUND_YIELDS: usize = 64;

/// Lets spawned runtime work (projections) advance as far as it can without
/// waiting on time or a gate, so "not settled" still means "already
/// running": a projection started by a touch is blocked on its gate by the
/// time the next step (say, a `remount`) runs, as it would be on a real host.
/// Deterministic on the single-threaded runtime the runner uses.
async fn let_background_run() {
    for _ in 0..BACKGROUND_YIELDS {
        tokio::task::yield_now().await;
    }
}

/// A `blocked` step: some operation on `path` is blocked on its gate now,
/// or becomes so while background work advances as far as it can without
/// time (the same bounded yields as after a step without `expect`). Fails
/// at once otherwise, so a scenario that relies on work parked at a gate
/// cannot pass when that work never started or never got there.
async fn await_blocked(fixture: &dyn FsFixture, path: &str) -> Result<(), String> {
    let reached = tokio::select! {
        biased;
        () = fixture.wait_blocked(path) => true,
        () = let_background_run() => false,
    };
    if reached {
        Ok(())
    } else {
        Err(format!(
            "no operation on {path} is blocked on its gate: the gate was never reached"
        ))
    }
}

/// Runs one scenario on one provider. Must be called inside a tokio runtime
/// with time enabled.
pub async fn run_scenario<D: Driver>(sc: &Scenario, kind: ProviderKind, driver: D) -> Verdict {
    run_observed(sc, kind, driver, &mut ()).await
}

/// [`run_scenario`], telling `observer` about each step as it finishes.
pub async fn run_observed<D: Driver>(
    sc: &Scenario,
    kind: ProviderKind,
    mut driver: D,
    observer: &mut dyn Observer,
) -> Verdict {
    match run_inner(sc, kind, &mut driver, observer).await {
        Ok(()) => Verdict::Pass,
        Err(reason) => Verdict::Fail(reason),
    }
}

/// The step number a pre-step runs as, and the next default (R-CONF format:
/// numbering restarts after `turn_end`, `resume` and `remount`).
fn step_numbers(action: &Action, next: u32) -> (Option<u32>, u32) {
    match action {
        Action::PreStep(p) => {
            let number = p.step.unwrap_or(next);
            (Some(number), number.saturating_add(1))
        }
        Action::Event(EventKind::TurnEnd) | Action::Resume | Action::Remount(_) => (None, 1),
        _ => (None, next),
    }
}

/// What a step's action needs besides the driver.
struct StepContext<'a> {
    fixture: &'a dyn FsFixture,
    mounting: &'a mut Mounting,
    spec_for: &'a dyn Fn(&Mounting) -> MountSpec,
    /// First components of the scenario's absolute paths (`/work`, …): the
    /// prefixes rewritten inside tool arguments on disk.
    tops: &'a [String],
}

/// The first components of every absolute path the scenario names for its
/// filesystem: `cwd`, `fs` and `write` keys, trusted roots.
fn scenario_tops(sc: &Scenario) -> Vec<String> {
    let written = sc.steps.iter().flat_map(|s| match &s.action {
        Action::Write(w) => w.0.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        _ => Vec::new(),
    });
    let mut tops: Vec<String> = std::iter::once(sc.cwd.clone())
        .chain(sc.fs.0.iter().map(|(k, _)| k.clone()))
        .chain(written)
        .chain(sc.trusted_roots.iter().flatten().cloned())
        .filter_map(|p| {
            let first = p.strip_prefix('/')?.split('/').next()?;
            (!first.is_empty() && first != "." && first != "..").then(|| format!("/{first}"))
        })
        .collect();
    tops.sort();
    tops.dedup();
    tops
}

/// Performs one step's action; returns the pre-step's result, if any.
async fn run_action<D: Driver>(
    driver: &mut D,
    cx: &mut StepContext<'_>,
    step: &Step,
    n: usize,
    number: Option<u32>,
) -> Result<Option<PreStepResult>, StepError> {
    let fixture = cx.fixture;
    match &step.action {
        Action::PreStep(p) => {
            let cancel = p
                .cancel_when_blocked
                .as_deref()
                .map(|path| CancelSignal(fixture.wait_blocked(path)));
            let input = PreStepInput {
                step: number.unwrap_or(1),
                claimed: &p.claimed,
                extra: &p.extra,
                decision: p.decision,
                cancel,
            };
            return timed("pre_step", driver.pre_step(input)).await.map(Some);
        }
        Action::Tool(t) => {
            let input = ToolInput {
                name: t.name.clone(),
                path: t.path.as_deref().map(|p| fixture.paths().map(p)),
                args: t
                    .args
                    .iter()
                    .map(|(k, v)| (k.clone(), fixture.paths().map_in_text(v, cx.tops)))
                    .collect(),
                ok: t.ok,
                cancelled: t.cancelled,
                token: t.token.clone().unwrap_or_else(|| format!("step-{n}")),
                parent: t.parent.clone(),
            };
            timed("tool", driver.tool(&input)).await?;
        }
        Action::Event(e) => timed("event", driver.event(*e)).await?,
        Action::Write(w) => write_entries(fixture, w)?,
        Action::Remove(paths) => {
            for path in paths {
                fixture.remove(path).map_err(StepError::Fixture)?;
            }
        }
        Action::Release(path) => fixture.release(path).map_err(StepError::Fixture)?,
        Action::Blocked(path) => await_blocked(fixture, path)
            .await
            .map_err(StepError::Fixture)?,
        Action::Compact(c) => timed("compact", driver.compact(c)).await?,
        Action::Resume => timed("resume", driver.resume()).await?,
        Action::Remount(r) => {
            if let Some(c) = &r.config {
                cx.mounting.config = Some(c.clone());
            }
            if let Some(e) = &r.env {
                cx.mounting.env = e.clone();
            }
            if let Some(t) = &r.trusted_roots {
                cx.mounting.trusted_roots = Some(t.clone());
            }
            let spec = (cx.spec_for)(cx.mounting);
            timed("remount", driver.remount(&spec)).await?;
        }
    }
    Ok(None)
}

/// Settles and observes after a step with an `expect`.
async fn settle_and_observe<D: Driver>(driver: &mut D) -> Result<HostState, StepError> {
    timed("settle", driver.settle()).await?;
    timed("observe", driver.observe()).await
}

async fn run_inner<D: Driver>(
    sc: &Scenario,
    kind: ProviderKind,
    driver: &mut D,
    observer: &mut dyn Observer,
) -> Result<(), String> {
    if kind == ProviderKind::Disk {
        let uses = sc.memory_only_uses();
        if !uses.is_empty() {
            return Err(format!(
                "refused: memory-only knobs need `providers: [memory]` ({})",
                uses.join("; ")
            ));
        }
    }
    let memory = (kind == ProviderKind::Memory).then(|| MemoryProvider::new(Vec::new()));
    let fixture: Box<dyn FsFixture> = match &memory {
        Some(p) => Box::new(MemoryFixture::new(p.clone())),
        None => Box::new(DiskFixture::new()?),
    };
    write_entries(fixture.as_ref(), &sc.fs).map_err(|e| format!("fs: {e}"))?;
    let mut mounting = Mounting {
        config: sc.config.clone(),
        env: sc.env.clone(),
        trusted_roots: sc.trusted_roots.clone(),
    };
    // Mount and every remount derive their spec from the same scenario,
    // provider and fixture; only the mounting parts and the tree change.
    let spec_for =
        |mounting: &Mounting| mount_spec(sc, kind, mounting, fixture.as_ref(), memory.as_ref());
    let spec = spec_for(&mounting);
    observer.mounting(&spec);
    timed("mount", driver.mount(&spec))
        .await
        .map_err(|e| format!("mount: {e}"))?;

    let mut next_step: u32 = 1;
    let tops = scenario_tops(sc);
    let mut cx = StepContext {
        fixture: fixture.as_ref(),
        mounting: &mut mounting,
        spec_for: &spec_for,
        tops: &tops,
    };
    for (i, step) in sc.steps.iter().enumerate() {
        let n = i + 1;
        let at = |e: &str| format!("step {n} ({}): {e}", step.action.name());
        cx.fixture.reset_counters();
        let (number, next) = step_numbers(&step.action, next_step);
        next_step = next;
        let (pre, host, error) = match run_action(driver, &mut cx, step, n, number).await {
            Err(e) => (None, None, Some(e.to_string())),
            Ok(pre) if step.expect.is_none() => {
                let_background_run().await;
                (pre, None, None)
            }
            Ok(pre) => match settle_and_observe(driver).await {
                Ok(host) => (pre, Some(host), None),
                Err(e) => (pre, None, Some(e.to_string())),
            },
        };
        observer.step(&StepRecord {
            index: i,
            step,
            step_number: number,
            pre_step: pre.as_ref(),
            host: host.as_ref(),
            error: error.as_deref(),
        });
        if let Some(e) = error {
            return Err(at(&e));
        }
        let (Some(expect), Some(host)) = (&step.expect, host) else {
            continue;
        };
        let obs = Observation {
            outcome: pre.as_ref().map(|p| p.outcome),
            batch: pre.as_ref().map(|p| p.batch.clone()),
            entered: pre.and_then(|p| p.entered),
            inbox: host.inbox,
            history: host.history,
            visible: host.visible,
            counters: cx.fixture.counters(),
        };
        let reasons = matcher::check(expect, &obs);
        if !reasons.is_empty() {
            return Err(at(&reasons.join("; ")));
        }
    }
    Ok(())
}

/// Every `*.yaml` file under the given files or directories (recursive),
/// sorted; a directory that cannot be read is reported as an error.
pub fn collect_files(roots: &[PathBuf]) -> (Vec<PathBuf>, Vec<ParseError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for root in roots {
        walk(root, &mut files, &mut errors, true);
    }
    files.sort();
    files.dedup();
    (files, errors)
}

fn walk(path: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<ParseError>, explicit: bool) {
    let read_err = |message: String| ParseError {
        file: path.to_owned(),
        step: None,
        key: None,
        position: None,
        message,
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Debug, Default)]
    struct Log {
        calls: Vec<String>,
        specs: Vec<MountSpec>,
        tools: Vec<ToolInput>,
        /// Every tool call fails.
        fail_tools: bool,
    }

    /// Answers every pre-step with `[claimed…, workspace]`, records calls.
    #[derive(Debug, Default, Clone)]
    struct Scripted(
        Rc<RefCell<Log>>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    );

    impl Scripted {
        fn push(&self, s: String) {
            self.0.borrow_mut().calls.push(s);
        }
    }

    impl Driver for Scripted {
        async fn mount(&mut self, spec: &MountSpec) -> Result<(), DriverError> {
            self.push("mount".into());
            self.0.borrow_mut().specs.push(spec.clone());
            Ok(())
        }
        async fn pre_step(
            &mut self,
            input: PreStepInput<'_>,
        ) -> Result<PreStepResult, DriverError> {
            self.push(format!("pre_step {}", input.step));
            if let Some(CancelSignal(signal)) = input.cancel {
                signal.await;
                return Ok(PreStepResult {
                    outcome: Outcome::Cancelled,
                    batch: vec![],
                    entered: None,
                });
            }
            let mut batch = input.claimed.to_vec();
            batch.push("workspace".into());
            Ok(PreStepResult {
                outcome: Outcome::Ok,
                batch,
                entered: None,
            })
        }
        async fn tool(&mut self, input: &ToolInput) -> Result<(), DriverError> {
            self.push("tool".into());
            self.0.borrow_mut().tools.push(input.clone());
            if self.0.borrow().fail_tools {
                return Err(DriverError::NotMounted);
            }
            // Background work that needs a few polls, like a projection.
            let flag = self.1.clone();
            tokio::spawn(async move {
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            Ok(())
        }
        async fn event(&mut self, event: EventKind) -> Result<(), DriverError> {
            self.push(format!("event {event:?}"));
            Ok(())
        }
        async fn compact(&mut self, _: &Compact) -> Result<(), DriverError> {
            self.push("compact".into());
            Ok(())
        }
        async fn resume(&mut self) -> Result<(), DriverError> {
            self.push("resume".into());
            Ok(())
        }
        async fn remount(&mut self, spec: &MountSpec) -> Result<(), DriverError> {
            let ran = self.1.load(std::sync::atomic::Ordering::SeqCst);
            self.push(format!("remount (background ran: {ran})"));
            self.0.borrow_mut().specs.push(spec.clone());
            Ok(())
        }
        async fn settle(&mut self) -> Result<(), DriverError> {
            self.push("settle".into());
            Ok(())
        }
        async fn observe(&mut self) -> Result<HostState, DriverError> {
            Ok(HostState::default())
        }
    }

    impl DriverFactory for Scripted {
        type Driver = Scripted;
        fn create(&self) -> Scripted {
            self.clone()
        }
    }

    fn run(src: &str, kind: ProviderKind) -> (Verdict, Scripted) {
        let sc = Scenario::parse(Path::new("t.yaml"), src).unwrap();
        let d = Scripted::default();
        let v = run_trial(
            &Trial {
                scenario: sc,
                provider: kind,
            },
            &d,
        );
        (v, d)
    }

    /// Records what the runner reports, one line per call.
    #[derive(Default)]
    struct Seen(Vec<String>);

    impl Observer for Seen {
        fn mounting(&mut self, spec: &MountSpec) {
            self.0.push(format!("mounting {}", spec.cwd));
        }
        fn step(&mut self, r: &StepRecord<'_>) {
            self.0.push(format!(
                "{} {} number={:?} pre={:?} host={} error={:?}",
                r.index,
                r.step.action.name(),
                r.step_number,
                r.pre_step.map(|p| p.batch.join("+")),
                r.host.is_some(),
                r.error,
            ));
        }
    }

    fn observed(src: &str, driver: Scripted) -> (Verdict, Vec<String>) {
        let sc = Scenario::parse(Path::new("t.yaml"), src).unwrap();
        let rt = trial_runtime().unwrap();
        let mut seen = Seen::default();
        let v = rt.block_on(run_observed(&sc, ProviderKind::Memory, driver, &mut seen));
        (v, seen.0)
    }

    /// Every step reaches the observer in order once it is done, filesystem
    /// steps included; only steps with `expect` carry host state.
    #[test]
    fn the_observer_sees_each_step_with_its_outcome() {
        let src = "cwd: /w\nfs: {/w/gate: {text: a, gate: read}}\nsteps:\n  - pre_step: {claimed: [hi]}\n  - write: {/w/a: x}\n    expect: {}\n  - release: /w/gate\n  - event: turn_end\n  - pre_step: {}\n";
        let (v, seen) = observed(src, Scripted::default());
        assert_eq!(v, Verdict::Pass);
        assert_eq!(
            seen,
            [
                "mounting /w",
                "0 pre_step number=Some(1) pre=Some(\"hi+workspace\") host=false error=None",
                "1 write number=None pre=None host=true error=None",
                "2 release number=None pre=None host=false error=None",
                "3 event number=None pre=None host=false error=None",
                "4 pre_step number=Some(1) pre=Some(\"prompt+workspace\") host=false error=None",
            ]
        );
    }

    /// A failing step is reported with its error, and nothing after it.
    #[test]
    fn the_observer_sees_the_failing_step_last() {
        let src =
            "cwd: /w\nsteps:\n  - tool: {name: read, path: a}\n    expect: {}\n  - pre_step: {}\n";
        let driver = Scripted::default();
        driver.0.borrow_mut().fail_tools = true;
        let (v, seen) = observed(src, driver);
        assert_eq!(
            v,
            Verdict::Fail("step 1 (tool): driver used before mount".into())
        );
        assert_eq!(
            seen,
            [
                "mounting /w",
                "0 tool number=None pre=None host=false error=Some(\"driver used before mount\")",
            ]
        );
    }

    #[test]
    fn passing_and_failing_expectations() {
        let src = "cwd: /w/r\nconfig: {max_bytes: 100}\nsteps:\n  - pre_step: {claimed: [hi]}\n    expect: {batch: [hi, workspace]}\n  - pre_step: {}\n    expect: {batch: [prompt], outcome: ok}\n";
        let (v, d) = run(src, ProviderKind::Memory);
        assert_eq!(
            v,
            Verdict::Fail(
                "step 2 (pre_step): batch: expected [\"prompt\"], got [\"prompt\",\"workspace\"]"
                    .into()
            )
        );
        assert_eq!(
            d.0.borrow().calls,
            ["mount", "pre_step 1", "settle", "pre_step 2", "settle"],
            "settle runs before every check"
        );
        assert_eq!(
            line("t", ProviderKind::Memory, &v),
            "FAIL t [memory]: step 2 (pre_step): batch: expected [\"prompt\"], got [\"prompt\",\"workspace\"]"
        );
        let ok = src.replace("batch: [prompt]", "batch: [prompt, workspace]");
        assert_eq!(run(&ok, ProviderKind::Disk).0, Verdict::Pass);
    }

    #[test]
    fn step_numbers_follow_the_format_defaults() {
        let src = "cwd: /w\nsteps:\n  - pre_step: {}\n  - pre_step: {decision: reject}\n  - event: turn_end\n  - pre_step: {}\n  - pre_step: {}\n  - resume: {}\n  - pre_step: {step: 5}\n  - pre_step: {}\n  - remount: {}\n  - event: step_start\n  - pre_step: {}\n";
        let (v, d) = run(src, ProviderKind::Memory);
        assert_eq!(v, Verdict::Pass);
        let steps: Vec<_> =
            d.0.borrow()
                .calls
                .iter()
                .filter(|c| c.starts_with("pre_step"))
                .cloned()
                .collect();
        assert_eq!(
            steps,
            [
                "pre_step 1",
                "pre_step 2",
                "pre_step 1",
                "pre_step 2",
                "pre_step 5",
                "pre_step 6",
                "pre_step 1"
            ]
        );
        assert!(
            !d.0.borrow().calls.contains(&"settle".to_owned()),
            "no expect, no settle"
        );
    }

    #[test]
    fn background_work_advances_between_unsettled_steps() {
        let (v, d) = run(
            "cwd: /w\nsteps:\n  - tool: {name: read, path: a}\n  - remount: {}\n",
            ProviderKind::Memory,
        );
        assert_eq!(v, Verdict::Pass);
        assert_eq!(
            d.0.borrow().calls,
            ["mount", "tool", "remount (background ran: true)"]
        );
    }

    #[test]
    fn disk_refuses_memory_only_knobs_but_memory_runs_them() {
        let src = "cwd: /w\nfs:\n  /w/AGENTS.md: {text: a, gate: read}\nsteps:\n  - pre_step: {cancel_when_blocked: /w/AGENTS.md}\n  - release: /w/AGENTS.md\n";
        let (v, d) = run(src, ProviderKind::Disk);
        let Verdict::Fail(reason) = v else {
            panic!("disk must refuse")
        };
        assert!(
            reason.starts_with("refused: memory-only knobs need `providers: [memory]`"),
            "{reason}"
        );
        assert!(
            reason.contains("fs./w/AGENTS.md: gate") && reason.contains("cancel_when_blocked"),
            "{reason}"
        );
        assert!(d.0.borrow().calls.is_empty(), "nothing ran");
    }

    #[test]
    fn tool_args_rewrite_absolute_paths_inside_strings_on_disk() {
        let src = "cwd: /w/r\nfs:\n  /w/r/.git: dir\nsteps:\n  - tool: {name: bash, path: a.rs, args: {command: \"cat /w/r/a '/w/b' /wx /v\", workdir: /w/r/pkg}}\n";
        for (kind, prefix) in [(ProviderKind::Memory, false), (ProviderKind::Disk, true)] {
            let (v, d) = run(src, kind);
            assert_eq!(v, Verdict::Pass);
            let log = d.0.borrow();
            let t = log.specs[0]
                .cwd
                .as_str()
                .strip_suffix("/w/r")
                .unwrap()
                .to_owned();
            assert_eq!(t.is_empty(), !prefix, "{t}");
            let args = &log.tools[0].args;
            assert_eq!(args["command"], format!("cat {t}/w/r/a '{t}/w/b' /wx /v"));
            assert_eq!(args["workdir"], format!("{t}/w/r/pkg"));
            assert_eq!(log.tools[0].path.as_deref(), Some("a.rs"));
        }
    }

    #[test]
    fn disk_rewrites_every_absolute_path() {
        let src = "cwd: /w/r/pkg\nconfig: {max_bytes: 100, dsh_home: /opt/dsh}\nenv: {HOME: /home/u, DSH_HOME: /x}\nfs:\n  /w/r/.git: dir\n  /w/r/pkg/AGENTS.md: {link: /w/r/AGENTS.md}\nsteps:\n  - tool: {name: read, path: /w/r/a.rs}\n  - tool: {name: read, path: pkg/b.rs, token: t9}\n  - remount: {trusted_roots: [/w]}\n";
        let (v, d) = run(src, ProviderKind::Disk);
        assert_eq!(v, Verdict::Pass);
        let log = d.0.borrow();
        let spec = &log.specs[0];
        let t = spec
            .cwd
            .as_str()
            .strip_suffix("/w/r/pkg")
            .unwrap()
            .to_owned();
        assert!(t.len() > 1 && t.starts_with('/'), "{t}");
        assert_eq!(spec.env.home, format!("{t}/home/u"));
        assert_eq!(
            spec.env.dsh_home.as_deref(),
            Some(format!("{t}/x").as_str())
        );
        assert_eq!(
            spec.config.as_ref().unwrap().dsh_home.as_deref(),
            Some(format!("{t}/opt/dsh").as_str())
        );
        // Default roots are the entry point's to derive, not the runner's.
        assert_eq!(spec.trusted_roots, None);
        assert_eq!(
            log.tools[0].path.as_deref(),
            Some(format!("{t}/w/r/a.rs").as_str())
        );
        assert_eq!(log.tools[0].token, "step-1");
        assert!(log.tools[0].args.is_empty());
        assert_eq!(log.tools[1].path.as_deref(), Some("pkg/b.rs"));
        assert_eq!(log.tools[1].token, "t9");
        let remount_roots: Vec<String> = log.specs[1]
            .trusted_roots
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect();
        assert_eq!(remount_roots, [format!("{t}/w")]);
        assert_eq!(
            log.specs[1].config, spec.config,
            "config not given on remount stays"
        );
    }

    #[test]
    fn memory_keeps_paths_and_leaves_default_roots_to_the_entry_point() {
        let src = "cwd: /w/r\nfs:\n  /w/r/AGENTS.md: a\n";
        let (v, d) = run(src, ProviderKind::Memory);
        assert_eq!(v, Verdict::Pass);
        let log = d.0.borrow();
        assert_eq!(log.specs[0].trusted_roots, None);
        assert!(matches!(log.specs[0].provider, ProviderHandle::Memory(_)));
    }

    #[test]
    fn run_all_counts_unparsable_files_as_failures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/good.yaml"), "cwd: /w\ntags: [x]\nsteps:\n  - pre_step: {}\n    expect: {batch: [prompt, workspace]}\n").unwrap();
        std::fs::write(dir.path().join("bad.yaml"), "cwd: /w\nstepz: []\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let mut printed = Vec::new();
        let s = run_all(
            &[dir.path().to_owned()],
            &RunOptions::default(),
            &Scripted::default(),
            |l| printed.push(l.to_owned()),
        );
        assert_eq!((s.passed, s.failed), (2, 1));
        assert!(!s.success());
        assert!(
            printed[0].starts_with("FAIL ") && printed[0].contains("bad.yaml:2:1: key `stepz`"),
            "{printed:?}"
        );
        assert_eq!(
            &printed[1..],
            [
                "ok   good [memory]",
                "ok   good [disk]",
                "2 passed, 1 failed"
            ]
        );
        assert_eq!(printed, s.lines);

        let only = RunOptions {
            tag: Some("y".into()),
            provider: None,
        };
        let s = run_all(
            &[dir.path().join("sub")],
            &only,
            &Scripted::default(),
            |_| {},
        );
        assert_eq!(s.lines, ["0 passed, 0 failed"]);
        let disk = RunOptions {
            tag: Some("x".into()),
            provider: Some(ProviderKind::Disk),
        };
        let s = run_all(
            &[dir.path().join("sub/good.yaml")],
            &disk,
            &Scripted::default(),
            |_| {},
        );
        assert_eq!(s.lines, ["ok   good [disk]", "1 passed, 0 failed"]);
        assert!(s.success());
        let missing = run_all(
            &[dir.path().join("nope")],
            &RunOptions::default(),
            &Scripted::default(),
            |_| {},
        );
        assert_eq!(missing.failed, 1);
    }
}
