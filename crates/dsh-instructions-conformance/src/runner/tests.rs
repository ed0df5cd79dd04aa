//! Tests of the runner with a scripted driver: step order, counters,
//! settling, timeouts, planning and the observer's records.

use std::path::Path;

use crate::error::ConformanceError;
use crate::schema::{Compact, EventKind, Outcome, ProviderKind, Scenario};

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
    async fn mount(&mut self, spec: &MountSpec) -> Result<(), ConformanceError> {
        self.push("mount".into());
        self.0.borrow_mut().specs.push(spec.clone());
        Ok(())
    }
    async fn pre_step(
        &mut self,
        input: PreStepInput<'_>,
    ) -> Result<PreStepResult, ConformanceError> {
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
    async fn tool(&mut self, input: &ToolInput) -> Result<(), ConformanceError> {
        self.push("tool".into());
        self.0.borrow_mut().tools.push(input.clone());
        if self.0.borrow().fail_tools {
            return Err(ConformanceError::NotMounted);
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
    async fn event(&mut self, event: EventKind) -> Result<(), ConformanceError> {
        self.push(format!("event {event:?}"));
        Ok(())
    }
    async fn compact(&mut self, _: &Compact) -> Result<(), ConformanceError> {
        self.push("compact".into());
        Ok(())
    }
    async fn resume(&mut self) -> Result<(), ConformanceError> {
        self.push("resume".into());
        Ok(())
    }
    async fn remount(&mut self, spec: &MountSpec) -> Result<(), ConformanceError> {
        let ran = self.1.load(std::sync::atomic::Ordering::SeqCst);
        self.push(format!("remount (background ran: {ran})"));
        self.0.borrow_mut().specs.push(spec.clone());
        Ok(())
    }
    async fn settle(&mut self) -> Result<(), ConformanceError> {
        self.push("settle".into());
        Ok(())
    }
    async fn observe(&mut self) -> Result<HostState, ConformanceError> {
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
    std::fs::write(
        dir.path().join("sub/good.yaml"),
        "cwd: /w\ntags: [x]\nsteps:\n  - pre_step: {}\n    expect: {batch: [prompt, workspace]}\n",
    )
    .unwrap();
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
