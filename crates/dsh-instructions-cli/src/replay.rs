//! `replay SCENARIO.yaml` (R-CLI-4): runs a conformance scenario through the
//! conformance runner with the real runtime driver and prints, step by step,
//! what happened and what the model would see.
//!
//! The runner exposes no transcript itself, so a [`Transcript`] driver wraps
//! the runtime driver and prints each call as the runner makes it. Filesystem
//! steps (`write`, `remove`, `release`) never reach a driver; they are printed
//! from the scenario in their place. The state (inbox, history, visible) is
//! printed where the scenario has an `expect`, because only there does the
//! runner settle — settling elsewhere could block on a gate the scenario
//! leaves closed on purpose.

use std::process::ExitCode;

use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::matcher::{ObservedMessage, ObservedSource};
use dsh_instructions_conformance::runner::{
    Driver, DriverFactory, HostState, MountSpec, PreStepInput, PreStepResult, ToolInput,
    run_scenario,
};
use dsh_instructions_conformance::schema::{Action, Compact, EventKind, ProviderKind, Step};
use dsh_instructions_conformance::{Scenario, Verdict};

use crate::args::ReplayArgs;
use crate::describe;
use crate::error::{CliError, EXIT_PROBLEMS};

/// Prints the transcript; exit 0 when the scenario's expectations hold, 1
/// when one fails (the reason is printed), 2 when the file cannot be parsed.
pub fn run(args: &ReplayArgs) -> Result<ExitCode, CliError> {
    let scenario = Scenario::load(&args.scenario).map_err(|e| CliError::new(e.to_string()))?;
    // Memory when the scenario allows it: it runs every scenario, faults
    // and gates included.
    let kind = if scenario.providers.contains(&ProviderKind::Memory) {
        ProviderKind::Memory
    } else {
        ProviderKind::Disk
    };
    out!("scenario {} [{kind}]", scenario.name);
    if let Some(about) = &scenario.about {
        out!("about    {about}");
    }
    out!("cwd      {}", scenario.cwd);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    let mut printer = Printer::new(&scenario.steps);
    let verdict = rt.block_on(run_scenario(
        &scenario,
        kind,
        Transcript {
            inner: RuntimeDriverFactory.create(),
            printer: &mut printer,
        },
    ));
    printer.finish();
    match verdict {
        Verdict::Pass => {
            out!("result   ok");
            Ok(ExitCode::SUCCESS)
        }
        Verdict::Fail(reason) => {
            out!("result   FAIL {reason}");
            Ok(ExitCode::from(EXIT_PROBLEMS))
        }
    }
}

/// Whether the runner hands this step to the driver.
fn reaches_driver(action: &Action) -> bool {
    !matches!(
        action,
        Action::Write(_) | Action::Remove(_) | Action::Release(_)
    )
}

/// Tracks which scenario step each driver call belongs to.
struct Printer<'s> {
    steps: &'s [Step],
    /// Index of the next step not yet printed.
    next: usize,
    /// The step printed last (whose observation may follow).
    current: Option<usize>,
    observed: bool,
}

impl<'s> Printer<'s> {
    fn new(steps: &'s [Step]) -> Self {
        Self {
            steps,
            next: 0,
            current: None,
            observed: false,
        }
    }

    fn header(&mut self, i: usize) {
        let Some(step) = self.steps.get(i) else {
            return;
        };
        let line = step
            .line
            .map(|l| format!(" (line {l})"))
            .unwrap_or_default();
        out!();
        out!("step {}: {}{line}", i + 1, describe(&step.action));
        self.current = Some(i);
        self.observed = false;
        self.next = i + 1;
    }

    /// Prints filesystem steps up to the next driver step, then that one.
    fn action(&mut self) {
        while let Some(step) = self.steps.get(self.next) {
            let i = self.next;
            self.header(i);
            if reaches_driver(&step.action) {
                return;
            }
        }
    }

    /// Finds the step an observation belongs to: the current one when it
    /// has an unobserved `expect`, else the next filesystem step with one.
    fn observation(&mut self) {
        let current_expects = self
            .current
            .and_then(|i| self.steps.get(i))
            .is_some_and(|s| s.expect.is_some());
        if current_expects && !self.observed {
            self.observed = true;
            return;
        }
        while let Some(step) = self.steps.get(self.next) {
            let i = self.next;
            self.header(i);
            if step.expect.is_some() {
                self.observed = true;
                return;
            }
        }
    }

    fn finish(&mut self) {
        while self.next < self.steps.len() {
            let i = self.next;
            self.header(i);
        }
    }
}

fn describe(action: &Action) -> String {
    match action {
        Action::PreStep(p) => {
            format!("pre_step {:?} decision {:?}", p.claimed, p.decision).to_lowercase()
        }
        Action::Tool(t) => {
            let mut s = format!("tool {}", t.name);
            if let Some(p) = &t.path {
                s.push_str(&format!(" {p:?}"));
            }
            s.push(' ');
            s.push_str(describe::tool_outcome(t.ok, t.cancelled));
            if let Some(parent) = &t.parent {
                s.push_str(&format!(" (parent {parent})"));
            }
            s
        }
        Action::Event(e) => format!("event {}", event_name(*e)),
        Action::Write(w) => format!(
            "write {}",
            w.0.iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Action::Remove(paths) => format!("remove {}", paths.join(", ")),
        Action::Release(p) => format!("release {p}"),
        Action::Compact(c) => format!("compact {}", compact_name(c)),
        Action::Resume => "resume".to_owned(),
        Action::Remount(_) => "remount".to_owned(),
    }
}

fn event_name(e: EventKind) -> &'static str {
    match e {
        EventKind::StepStart => "step_start",
        EventKind::StepEnd => "step_end",
        EventKind::TurnEnd => "turn_end",
    }
}

fn compact_name(c: &Compact) -> String {
    match c {
        Compact::Baseline => "baseline".to_owned(),
        Compact::Workspace => "workspace".to_owned(),
        Compact::All => "all".to_owned(),
        Compact::Hide(idx) => format!("hide {idx:?}"),
    }
}

fn source_summary(s: &ObservedSource) -> String {
    describe::source_summary(
        s.baseline,
        s.changes
            .iter()
            .map(|c| (c.action.name(), c.path.as_str(), c.previous_path.as_deref())),
    )
}

fn print_message(label: &str, m: &ObservedMessage) {
    out!("  {label}: {}", source_summary(&m.source));
    for line in m.parts.join("\n").lines() {
        out!("  | {line}");
    }
}

/// A driver that prints every call of the runner before passing it on.
struct Transcript<'p, 's, D> {
    inner: D,
    printer: &'p mut Printer<'s>,
}

impl<D: Driver> Driver for Transcript<'_, '_, D> {
    async fn mount(&mut self, spec: &MountSpec) -> Result<(), String> {
        out!(
            "mount    {} (trusted roots: {})",
            if spec.config.is_some() {
                "enabled"
            } else {
                "disabled"
            },
            spec.trusted_roots.as_ref().map_or_else(
                || "default".to_owned(),
                |roots| roots
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        self.inner.mount(spec).await
    }

    async fn pre_step(&mut self, input: PreStepInput<'_>) -> Result<PreStepResult, String> {
        self.printer.action();
        let step = input.step;
        let result = self.inner.pre_step(input).await;
        match &result {
            Ok(r) => {
                out!("  step number {step}, outcome {:?}", r.outcome);
                out!("  batch: [{}]", r.batch.join(", "));
                match &r.entered {
                    Some(m) => print_message("entered", m),
                    None => out!("  entered: none"),
                }
            }
            Err(e) => out!("  error: {e}"),
        }
        result
    }

    async fn tool(&mut self, input: &ToolInput) -> Result<(), String> {
        self.printer.action();
        self.inner.tool(input).await
    }

    async fn event(&mut self, event: EventKind) -> Result<(), String> {
        self.printer.action();
        self.inner.event(event).await
    }

    async fn compact(&mut self, compact: &Compact) -> Result<(), String> {
        self.printer.action();
        self.inner.compact(compact).await
    }

    async fn resume(&mut self) -> Result<(), String> {
        self.printer.action();
        self.inner.resume().await
    }

    async fn remount(&mut self, spec: &MountSpec) -> Result<(), String> {
        self.printer.action();
        self.inner.remount(spec).await
    }

    async fn settle(&mut self) -> Result<(), String> {
        self.inner.settle().await
    }

    async fn observe(&mut self) -> Result<HostState, String> {
        self.printer.observation();
        let state = self.inner.observe().await;
        if let Ok(s) = &state {
            if s.inbox.is_empty() {
                out!("  inbox: empty");
            }
            for (i, m) in s.inbox.iter().enumerate() {
                print_message(&format!("inbox[{i}]"), m);
            }
            out!("  history: [{}]", s.history.join(", "));
            for v in &s.visible {
                out!("  visible: {}", source_summary(v));
            }
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(yaml_steps: &str) -> Vec<Step> {
        let text = format!("name: t\ncwd: /r\nconfig: {{max_bytes: 100}}\nsteps:\n{yaml_steps}");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.yaml");
        std::fs::write(&path, text).expect("write");
        Scenario::load(&path).expect("valid scenario").steps
    }

    #[test]
    fn observations_attach_to_the_step_that_expects_them() {
        let s = steps(
            "  - pre_step: {}\n  - write: {/r/A.md: x}\n    expect: {inbox: []}\n  - remove: [/r/A.md]\n  - event: step_end\n    expect: {inbox: []}\n",
        );
        let mut p = Printer::new(&s);
        p.action(); // pre_step: no expect, so no observation follows
        assert_eq!(p.current, Some(0));
        p.observation(); // belongs to the write step
        assert_eq!(p.current, Some(1));
        p.action(); // prints remove, then the event
        assert_eq!(p.current, Some(3));
        p.observation();
        assert_eq!(p.current, Some(3));
        p.finish();
        assert_eq!(p.next, 4);
    }
}
