//! Reading a scenario file: the raw serde shapes, the checks serde cannot
//! express (exactly one action per step, …), the [`ConformanceError`] that names
//! file, step and key, and the memory-only uses of a parsed scenario.
//! Separate so the types of the format read apart from how a file becomes
//! them.

use std::collections::BTreeMap;
use std::path::Path;

use super::expect::{Expect, nullable};
use super::fs::FsMap;
use super::steps::{Action, Compact, EventKind, PreStep, Remount, Resume, Step, ToolStep};
use super::{ConfigInput, Env, ProviderKind, Scenario};
use crate::error::ConformanceError;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    about: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    providers: Option<Vec<ProviderKind>>,
    config: Option<ConfigInput>,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    no_provider: bool,
    #[serde(default)]
    env: Env,
    trusted_roots: Option<Vec<String>>,
    cwd: String,
    #[serde(default)]
    fs: FsMap,
    #[serde(default)]
    steps: Vec<Spanned<RawStep>>,
}

/// A step before the "exactly one action" check. A present-but-null action
/// value (`resume:` or `pre_step:`) counts as given with defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default, deserialize_with = "nullable")]
    pre_step: Option<Option<PreStep>>,
    tool: Option<ToolStep>,
    event: Option<EventKind>,
    write: Option<FsMap>,
    remove: Option<Vec<String>>,
    release: Option<String>,
    blocked: Option<String>,
    compact: Option<Compact>,
    #[serde(default, deserialize_with = "nullable")]
    resume: Option<Option<Resume>>,
    #[serde(default, deserialize_with = "nullable")]
    remount: Option<Option<Remount>>,
    expect: Option<Expect>,
}

impl RawStep {
    fn into_step(self, line: Option<u64>) -> Result<Step, (String, String)> {
        let mut actions: Vec<Action> = [
            self.pre_step
                .map(|p| Action::PreStep(p.unwrap_or_default())),
            self.tool.map(Action::Tool),
            self.event.map(Action::Event),
            self.write.map(Action::Write),
            self.remove.map(Action::Remove),
            self.release.map(Action::Release),
            self.blocked.map(Action::Blocked),
            self.compact.map(Action::Compact),
            self.resume.map(|_| Action::Resume),
            self.remount
                .map(|r| Action::Remount(Box::new(r.unwrap_or_default()))),
        ]
        .into_iter()
        .flatten()
        .collect();
        if actions.len() != 1 {
            let names: Vec<_> = actions.iter().map(Action::name).collect();
            let label = if names.is_empty() {
                "no action".to_owned()
            } else {
                names.join(", ")
            };
            return Err((
                label.clone(),
                format!("a step needs exactly one action key, got {label}"),
            ));
        }
        let action = actions.remove(0);
        if matches!(action, Action::Blocked(_)) && self.expect.is_some() {
            // Settling would wait for the very projection held at the gate.
            return Err((
                "blocked".to_owned(),
                "a `blocked` step takes no `expect` (settling would wait on the gate)".to_owned(),
            ));
        }
        Ok(Step {
            action,
            expect: self.expect,
            line,
        })
    }
}

/// Where in a scenario file a parse error happened, as far as known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The step the error is in, when it is inside `steps`.
    pub step: Option<StepRef>,
    /// The offending key, when known.
    pub key: Option<String>,
    /// 1-based line and column, when known.
    pub position: Option<(u64, u64)>,
}

/// Where a parse error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRef {
    /// 1-based step number.
    pub index: usize,
    /// Action key(s) of that step.
    pub action: String,
}

/// Loose view used only to locate an error inside `steps`.
#[derive(Deserialize)]
struct LooseDoc {
    #[serde(default)]
    steps: Vec<Spanned<BTreeMap<String, IgnoredAny>>>,
}

fn action_of(keys: &BTreeMap<String, IgnoredAny>) -> String {
    let names: Vec<&str> = keys
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "expect")
        .collect();
    if names.is_empty() {
        "no action".to_owned()
    } else {
        names.join(", ")
    }
}

/// Finds the key a serde error is about: the name in "unknown field `x`",
/// else the mapping key written before the error column on its line.
fn key_of(message: &str, source: &str, position: Option<(u64, u64)>) -> Option<String> {
    if let Some(rest) = message.split("unknown field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    if let Some(rest) = message.split("missing field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    let (line, col) = position?;
    let text = source
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let upto: String = text
        .chars()
        .take(usize::try_from(col).ok()?.saturating_sub(1))
        .collect();
    // The last `key:` before the error column (block or flow mapping), else
    // the first one after it (errors reported at the start of a mapping).
    let before = match upto.rfind(':') {
        Some(i) => &upto[..i],
        None => {
            let after = &text[upto.len()..];
            let end = after.find(':')?;
            &after[..end]
        }
    };
    let key = before
        .rsplit(|c: char| c == '{' || c == ',' || c == '-' || c.is_whitespace())
        .find(|s| !s.is_empty())?
        .trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty()).then(|| key.to_owned())
}

impl Scenario {
    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Self, ConformanceError> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            ConformanceError::scenario(path.to_owned(), format!("cannot read: {e}"))
        })?;
        Self::parse(path, &source)
    }

    /// Parses scenario text; `file` names it in errors and gives the default name.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::Scenario;
    /// let s = Scenario::parse(
    ///     "smoke.yaml".as_ref(),
    ///     "cwd: /r\nconfig: {max_bytes: 100}\nsteps:\n  - pre_step: {}\n",
    /// )
    /// .unwrap();
    /// assert_eq!(s.name, "smoke");
    /// assert_eq!(s.steps.len(), 1);
    ///
    /// let err = Scenario::parse("bad.yaml".as_ref(), "cwd: /r\nsteps:\n  - pre_step: {claimd: []}\n")
    ///     .unwrap_err();
    /// let dsh_instructions_conformance::ConformanceError::Scenario { at, .. } = err else { panic!() };
    /// assert_eq!(at.step.unwrap().index, 1);
    /// assert_eq!(at.key.as_deref(), Some("claimd"));
    /// ```
    pub fn parse(file: &Path, source: &str) -> Result<Self, ConformanceError> {
        let raw: RawScenario = match serde_saphyr::from_str_with_options(source, yaml_options()) {
            Ok(r) => r,
            Err(e) => return Err(Self::serde_error(file, source, &e)),
        };
        let err = |step: Option<StepRef>, key: Option<&str>, message: String, line: Option<u64>| {
            ConformanceError::Scenario {
                file: file.to_owned(),
                at: Box::new(Place {
                    step,
                    key: key.map(str::to_owned),
                    position: line.map(|l| (l, 1)),
                }),
                message,
            }
        };
        let mut steps = Vec::with_capacity(raw.steps.len());
        for (i, spanned) in raw.steps.into_iter().enumerate() {
            let line = Some(spanned.referenced.line());
            let step = spanned.value.into_step(line).map_err(|(action, m)| {
                err(
                    Some(StepRef {
                        index: i + 1,
                        action,
                    }),
                    None,
                    m,
                    line,
                )
            })?;
            if let Action::Remount(r) = &step.action
                && r.trusted_roots.as_ref().is_some_and(Vec::is_empty)
            {
                return Err(err(
                    Some(StepRef {
                        index: i + 1,
                        action: "remount".to_owned(),
                    }),
                    Some("trusted_roots"),
                    "an empty trusted_roots list is a scenario error".to_owned(),
                    line,
                ));
            }
            steps.push(step);
        }
        if raw.trusted_roots.as_ref().is_some_and(Vec::is_empty) {
            return Err(err(
                None,
                Some("trusted_roots"),
                "an empty trusted_roots list is a scenario error".to_owned(),
                None,
            ));
        }
        if !raw.cwd.starts_with('/') {
            return Err(err(
                None,
                Some("cwd"),
                format!("`{}` must be absolute", raw.cwd),
                None,
            ));
        }
        if raw.disabled && raw.config.is_some() {
            return Err(err(
                None,
                Some("config"),
                "`disabled: true` mounts with no config; drop `config`".to_owned(),
                None,
            ));
        }
        let providers = match raw.providers {
            Some(p) if p.is_empty() => {
                return Err(err(
                    None,
                    Some("providers"),
                    "must not be empty".to_owned(),
                    None,
                ));
            }
            Some(mut p) => {
                p.sort();
                p.dedup();
                p
            }
            None => vec![ProviderKind::Memory, ProviderKind::Disk],
        };
        let name = raw.name.unwrap_or_else(|| {
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(Self {
            name,
            file: file.to_owned(),
            about: raw.about,
            tags: raw.tags,
            providers,
            config: if raw.disabled {
                None
            } else {
                Some(raw.config.unwrap_or_default())
            },
            disabled: raw.disabled,
            no_provider: raw.no_provider,
            env: raw.env,
            trusted_roots: raw.trusted_roots,
            cwd: raw.cwd,
            fs: raw.fs,
            steps,
        })
    }

    fn serde_error(file: &Path, source: &str, e: &serde_saphyr::Error) -> ConformanceError {
        let position = e.location().map(|l| (l.line(), l.column()));
        let mut message = first_line(&e.without_snippet().to_string());
        // The position is printed in front already.
        if position.is_some()
            && let Some(i) = message.rfind(" at line ")
        {
            message.truncate(i);
        }
        let key = key_of(&message, source, position);
        let step = position.and_then(|(line, _)| {
            let loose: LooseDoc =
                serde_saphyr::from_str_with_options(source, yaml_options()).ok()?;
            let idx = loose
                .steps
                .iter()
                .rposition(|s| s.referenced.line() <= line && s.referenced.line() > 0)?;
            Some(StepRef {
                index: idx + 1,
                action: action_of(&loose.steps[idx].value),
            })
        });
        ConformanceError::Scenario {
            file: file.to_owned(),
            at: Box::new(Place {
                step,
                key,
                position,
            }),
            message,
        }
    }

    /// Memory-only knobs this scenario uses, each with where it is written
    /// (`fs./work/a.md: fault`, `step 3: reads`); empty when it runs anywhere.
    pub fn memory_only_uses(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (path, entry) in &self.fs.0 {
            for k in entry.memory_knobs() {
                out.push(format!("fs.{path}: {k}"));
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            let n = i + 1;
            match &step.action {
                Action::Write(w) => {
                    for (path, entry) in &w.0 {
                        for k in entry.memory_knobs() {
                            out.push(format!("step {n} (write) {path}: {k}"));
                        }
                    }
                }
                Action::PreStep(p) if p.cancel_when_blocked.is_some() => {
                    out.push(format!("step {n} (pre_step): cancel_when_blocked"));
                }
                Action::Release(_) => out.push(format!("step {n} (release)")),
                Action::Blocked(_) => out.push(format!("step {n} (blocked)")),
                _ => {}
            }
            if let Some(e) = &step.expect {
                if e.reads.is_some() {
                    out.push(format!("step {n} ({}): expect.reads", step.action.name()));
                }
                if e.probes_max.is_some() {
                    out.push(format!(
                        "step {n} ({}): expect.probes_max",
                        step.action.name()
                    ));
                }
            }
        }
        out
    }
}

/// Strict options (duplicate keys are errors, the default) that still let
/// `.inf`/`.nan` through: R-CFG-2 gives non-finite budgets a meaning.
fn yaml_options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    o
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().trim().to_owned()
}
