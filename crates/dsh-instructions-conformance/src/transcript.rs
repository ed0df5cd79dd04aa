//! The transcript of one scenario run (R-CLI-4, `dsh-instructions-replay`):
//! each step as the scenario wrote it, what the runtime returned, and — where
//! the scenario checks — what the model would see.
//!
//! A [`Transcript`] is an [`Observer`] of the runner, so every line comes
//! from what the runner actually did, step by step; nothing is inferred from
//! the order of driver calls. Host state is printed only after steps with an
//! `expect`, because only those settle; a run that fails stops after the
//! failing step, so steps that never ran are not printed.

use dsh_instructions_state::describe::{source_summary, tool_outcome};

use crate::matcher::{ObservedMessage, ObservedSource};
use crate::runner::{
    DriverFactory, MountSpec, Observer, StepRecord, Trial, Verdict, run_observed, trial_runtime,
};
use crate::schema::{Action, Compact, EventKind, ProviderKind, Scenario};

/// The provider `replay` uses for a scenario: memory when the scenario
/// allows it (it runs every scenario, faults and gates included), else disk.
pub fn replay_provider(scenario: &Scenario) -> ProviderKind {
    if scenario.providers.contains(&ProviderKind::Memory) {
        ProviderKind::Memory
    } else {
        ProviderKind::Disk
    }
}

/// Runs `trial` with a fresh driver from `factory` on its own runtime and
/// hands each transcript line to `sink` as it is produced, the last being
/// `result   ok` or `result   FAIL <reason>`.
///
/// ```
/// use dsh_instructions_conformance::driver::RuntimeDriverFactory;
/// use dsh_instructions_conformance::runner::{Trial, Verdict};
/// use dsh_instructions_conformance::transcript::{replay, replay_provider};
/// use dsh_instructions_conformance::Scenario;
///
/// let yaml = "cwd: /r\nconfig: {max_bytes: 100}\nfs: {/r/AGENTS.md: a}\nsteps:\n  - pre_step: {claimed: [hi]}\n";
/// let scenario = Scenario::parse("t.yaml".as_ref(), yaml).unwrap();
/// let trial = Trial { provider: replay_provider(&scenario), scenario };
/// let mut lines = Vec::new();
/// let verdict = replay(&trial, &RuntimeDriverFactory, |l| lines.push(l.to_owned()));
/// assert_eq!(verdict, Verdict::Pass);
/// assert_eq!(lines.last().map(String::as_str), Some("result   ok"));
/// ```
pub fn replay<F: DriverFactory>(trial: &Trial, factory: &F, sink: impl FnMut(&str)) -> Verdict {
    let mut transcript = Transcript::new(sink);
    transcript.header(&trial.scenario, trial.provider);
    let verdict = match trial_runtime() {
        Ok(rt) => rt.block_on(run_observed(
            &trial.scenario,
            trial.provider,
            factory.create(),
            &mut transcript,
        )),
        Err(v) => v,
    };
    transcript.result(&verdict);
    verdict
}

/// Formats a run as text lines, handed one by one to a sink.
pub struct Transcript<F> {
    sink: F,
}

impl<F> std::fmt::Debug for Transcript<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Transcript")
    }
}

impl<F: FnMut(&str)> Transcript<F> {
    /// A transcript writing to `sink`.
    pub fn new(sink: F) -> Self {
        Self { sink }
    }

    fn out(&mut self, line: impl AsRef<str>) {
        (self.sink)(line.as_ref());
    }

    /// The scenario's name, provider, description and cwd.
    pub fn header(&mut self, scenario: &Scenario, kind: ProviderKind) {
        self.out(format!("scenario {} [{kind}]", scenario.name));
        if let Some(about) = &scenario.about {
            self.out(format!("about    {about}"));
        }
        self.out(format!("cwd      {}", scenario.cwd));
    }

    /// The closing line.
    pub fn result(&mut self, verdict: &Verdict) {
        match verdict {
            Verdict::Pass => self.out("result   ok"),
            Verdict::Fail(reason) => self.out(format!("result   FAIL {reason}")),
        }
    }

    fn message(&mut self, label: &str, m: &ObservedMessage) {
        self.out(format!("  {label}: {}", summary(&m.source)));
        for line in m.parts.join("\n").lines() {
            self.out(format!("  | {line}"));
        }
    }
}

impl<F: FnMut(&str)> Observer for Transcript<F> {
    fn mounting(&mut self, spec: &MountSpec) {
        let state = if spec.config.is_some() {
            "enabled"
        } else {
            "disabled"
        };
        let roots = spec.trusted_roots.as_ref().map_or_else(
            || "project root + DSH home".to_owned(),
            |roots| {
                let roots: Vec<&str> = roots.iter().map(|r| r.as_str()).collect();
                roots.join(", ")
            },
        );
        self.out(format!("mount    {state} (trusted roots: {roots})"));
    }

    fn step(&mut self, r: &StepRecord<'_>) {
        let line = r
            .step
            .line
            .map(|l| format!(" (line {l})"))
            .unwrap_or_default();
        self.out("");
        self.out(format!(
            "step {}: {}{line}",
            r.index + 1,
            describe(&r.step.action)
        ));
        if let (Some(number), Some(pre)) = (r.step_number, r.pre_step) {
            self.out(format!("  step number {number}, outcome {:?}", pre.outcome));
            self.out(format!("  batch: [{}]", pre.batch.join(", ")));
            match &pre.entered {
                Some(m) => self.message("entered", m),
                None => self.out("  entered: none"),
            }
        }
        if let Some(e) = r.error {
            self.out(format!("  error: {e}"));
        }
        if let Some(host) = r.host {
            if host.inbox.is_empty() {
                self.out("  inbox: empty");
            }
            for (i, m) in host.inbox.iter().enumerate() {
                self.message(&format!("inbox[{i}]"), m);
            }
            self.out(format!("  history: [{}]", host.history.join(", ")));
            for v in &host.visible {
                self.out(format!("  visible: {}", summary(v)));
            }
        }
    }
}

fn summary(s: &ObservedSource) -> String {
    source_summary(
        s.baseline,
        s.changes
            .iter()
            .map(|c| (c.action.name(), c.path.as_str(), c.previous_path.as_deref())),
    )
}

/// A step's action in one line.
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
            s.push_str(tool_outcome(t.ok, t.cancelled));
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
        Action::Blocked(p) => format!("blocked {p}"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::RuntimeDriverFactory;
    use rstest::rstest;
    use std::path::Path;

    fn transcript(yaml: &str) -> (Verdict, Vec<String>) {
        let scenario = Scenario::parse(Path::new("t.yaml"), yaml).expect("valid scenario");
        let trial = Trial {
            provider: replay_provider(&scenario),
            scenario,
        };
        let mut lines = Vec::new();
        let v = replay(&trial, &RuntimeDriverFactory, |l| lines.push(l.to_owned()));
        (v, lines)
    }

    const HEAD: &str = "name: demo\ncwd: /r\nconfig: {max_bytes: 1000}\nproviders: [memory]\nfs:\n  /r/.git: dir\n  /r/AGENTS.md: root rule\n";

    /// R-CLI-4: every step in order, with what the runner saw of it; host
    /// state only where the scenario expects.
    #[rstest]
    fn steps_print_in_order_with_their_outcomes() {
        let yaml = format!(
            "{HEAD}steps:\n  - pre_step: {{claimed: [hi]}}\n  - write: {{/r/AGENTS.md: new rule}}\n  - tool: {{name: read, path: AGENTS.md}}\n    expect: {{inbox: [{{sections: [\"Updated instructions from: AGENTS.md\"]}}]}}\n"
        );
        let (v, lines) = transcript(&yaml);
        assert_eq!(v, Verdict::Pass, "{lines:#?}");
        let want = [
            "scenario demo [memory]",
            "cwd      /r",
            "mount    enabled (trusted roots: project root + DSH home)",
            "",
            "step 1: pre_step [\"hi\"] decision enter (line 9)",
            "  step number 1, outcome Ok",
            "  batch: [hi, workspace]",
            "  entered: baseline: set AGENTS.md",
        ];
        assert_eq!(&lines[..want.len()], want);
        let rest = &lines[want.len()..];
        let at = |l: &str| rest.iter().position(|x| x == l);
        let write = at("step 2: write /r/AGENTS.md (line 10)").expect("write step");
        let tool = at("step 3: tool read \"AGENTS.md\" ok (line 11)").expect("tool step");
        let inbox = at("  inbox[0]: dynamic: replace AGENTS.md").expect("inbox");
        assert!(write < tool && tool < inbox, "{lines:#?}");
        assert!(rest.contains(&"  | new rule".to_owned()));
        assert_eq!(rest.last().map(String::as_str), Some("result   ok"));
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("  history")).count(),
            1,
            "only the step with expect observes"
        );
    }

    /// A failing expectation shows the observed state, then the reason; the
    /// steps after it never ran and are not printed.
    #[rstest]
    fn a_failing_run_stops_at_the_failing_step() {
        let yaml = format!(
            "{HEAD}steps:\n  - pre_step: {{claimed: [hi]}}\n    expect: {{batch: [hi]}}\n  - resume: {{}}\n"
        );
        let (v, lines) = transcript(&yaml);
        assert!(matches!(v, Verdict::Fail(_)), "{v:?}");
        let last = lines.last().expect("lines");
        assert!(
            last.starts_with("result   FAIL step 1 (pre_step): batch"),
            "{last}"
        );
        assert!(lines.iter().any(|l| l.starts_with("  history: [")));
        assert!(!lines.iter().any(|l| l.starts_with("step 2")), "{lines:#?}");
    }

    #[rstest]
    #[case::tool_with_parent(
        "tool: {name: read, path: a.rs, ok: false, parent: p1}",
        "tool read \"a.rs\" error (parent p1)"
    )]
    #[case::cancelled_tool("tool: {name: edit, cancelled: true}", "tool edit cancelled")]
    #[case::event("event: turn_end", "event turn_end")]
    #[case::compact_hide("compact: {hide: [0, 2]}", "compact hide [0, 2]")]
    #[case::remove("remove: [/r/a, /r/b]", "remove /r/a, /r/b")]
    #[case::reject(
        "pre_step: {decision: reject}",
        "pre_step [\"prompt\"] decision reject"
    )]
    fn actions_read_as_one_line(#[case] step: &str, #[case] want: &str) {
        let yaml = format!("{HEAD}steps:\n  - {step}\n");
        let sc = Scenario::parse(Path::new("t.yaml"), &yaml).expect("valid");
        assert_eq!(describe(&sc.steps[0].action), want);
    }
}
