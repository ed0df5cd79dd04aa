//! The runtime-backed driver end to end: a correct scenario passes on both
//! providers, and the same scenario with one wrong expectation fails with a
//! reason naming the step, action and field.

use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::{RunOptions, run_all};

const SCENARIO: &str = r#"
name: driver-smoke
cwd: /work/repo
config: {max_bytes: 65536}
fs:
  /work/repo/.git: dir
  /work/repo/AGENTS.md: root rule
  /work/repo/pkg/CLAUDE.md: pkg rule
steps:
  - pre_step: {claimed: [hi], extra: [ctx]}
    expect:
      batch: [hi, workspace, ctx]
      entered: {sections: ["Instructions from: AGENTS.md"], intro: normal}
      history: [hi, workspace, ctx]
  - tool: {name: read, path: /work/repo/pkg/main.rs}
    expect:
      inbox:
        - sections: ["Additional instructions from: pkg/CLAUDE.md"]
          source: {changes: [{action: set, path: pkg/CLAUDE.md, digest_of: pkg rule, scope: "project\0pkg\0base"}]}
  - pre_step: {decision: reject}
    expect:
      batch: [rejected]
      inbox: [{intro: none}]
      history: [hi, workspace, ctx]
  - compact: workspace
    expect:
      visible: {AGENTS.md: none}
"#;

fn run(text: &str) -> (Vec<String>, bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("driver-smoke.yaml");
    std::fs::write(&file, text).unwrap();
    let s = run_all(
        &[file],
        &RunOptions::default(),
        &RuntimeDriverFactory,
        |_| {},
    );
    (s.lines.clone(), s.success())
}

#[test]
fn correct_scenario_passes_on_both_providers() {
    let (lines, ok) = run(SCENARIO);
    assert_eq!(
        lines,
        [
            "ok   driver-smoke [memory]",
            "ok   driver-smoke [disk]",
            "2 passed, 0 failed"
        ]
    );
    assert!(ok);
}

#[test]
fn one_wrong_expectation_fails_the_run() {
    let broken = SCENARIO.replace("batch: [rejected]", "batch: [prompt]");
    let (lines, ok) = run(&broken);
    assert!(!ok);
    let want = "step 3 (pre_step): batch: expected [\"prompt\"], got [\"rejected\"]";
    assert_eq!(
        lines,
        [
            format!("FAIL driver-smoke [memory]: {want}"),
            format!("FAIL driver-smoke [disk]: {want}"),
            "0 passed, 2 failed".to_owned()
        ]
    );
}

#[test]
fn a_config_the_state_crate_refuses_fails_the_mount() {
    let bad = SCENARIO.replace(
        "config: {max_bytes: 65536}",
        "config: {max_bytes: 10, max_source_bytes: 0}",
    );
    let (lines, ok) = run(&bad);
    assert!(!ok);
    assert!(
        lines[0].starts_with("FAIL driver-smoke [memory]: mount: config:"),
        "{lines:?}"
    );
    assert!(lines[0].contains("max_source_bytes"), "{lines:?}");
}

/// A touch whose projection parks at a read gate, with the `blocked` step
/// between the touch and the release: `{TOUCH}` is the touched path.
const GATED: &str = r#"
name: blocked-step
cwd: /work/repo
providers: [memory]
config: {max_bytes: 65536}
fs:
  /work/repo/.git: dir
  /work/repo/pkg/AGENTS.md: {text: pkg rule, gate: read}
  /work/repo/other/AGENTS.md: other rule
steps:
  - pre_step: {}
  - tool: {name: read, path: "{TOUCH}"}
  - blocked: /work/repo/pkg/AGENTS.md
  - release: /work/repo/pkg/AGENTS.md
"#;

/// `blocked` passes when the projection is parked at the gate, and fails
/// at once (no timeout) when the work under test never got there — here a
/// touch elsewhere, so nothing reads the gated file.
#[rstest::rstest]
#[case::reached("pkg/lib.rs", None)]
#[case::never_reached(
    "other/lib.rs",
    Some(
        "FAIL blocked-step [memory]: step 3 (blocked): no operation on /work/repo/pkg/AGENTS.md is blocked on its gate: the gate was never reached"
    )
)]
fn a_blocked_step_fails_unless_the_gate_was_reached(
    #[case] touch: &str,
    #[case] failure: Option<&str>,
) {
    let (lines, ok) = run(&GATED.replace("{TOUCH}", touch));
    assert_eq!(ok, failure.is_none(), "{lines:?}");
    let want = match failure {
        None => vec![
            "ok   blocked-step [memory]".to_owned(),
            "1 passed, 0 failed".to_owned(),
        ],
        Some(f) => vec![f.to_owned(), "0 passed, 1 failed".to_owned()],
    };
    assert_eq!(lines, want);
}
