//! Black-box tests of the `dsh-instructions-replay` binary (R-CLI-4), which
//! moved here from the shipped CLI so the product never links the harness.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_dsh-instructions-replay");

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(BIN).args(args).output().expect("run binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

const SCENARIO: &str = "name: replay-demo
cwd: /work/repo
config: {max_bytes: 65536}
fs:
  /work/repo/.git: dir
  /work/repo/AGENTS.md: \"root rule\"
steps:
  - pre_step: {claimed: [hi]}
    expect:
      batch: [hi, workspace]
  - write: {/work/repo/AGENTS.md: \"new rule\"}
  - tool: {name: read, path: AGENTS.md}
    expect:
      inbox:
        - sections: [\"Updated instructions from: AGENTS.md\"]
";

#[test]
fn replay_prints_each_step_and_the_result() {
    let t = tempfile::tempdir().expect("tempdir");
    let path = t.path().join("s.yaml");
    std::fs::write(&path, SCENARIO).expect("write");
    let out = run(&[path.as_os_str()]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let order = [
        "scenario replay-demo [memory]",
        "step 1: pre_step",
        "  batch: [hi, workspace]",
        "  entered: baseline: set AGENTS.md",
        "  | root rule",
        "step 2: write /work/repo/AGENTS.md",
        "step 3: tool read \"AGENTS.md\" ok",
        "  inbox[0]: dynamic: replace AGENTS.md",
        "  | new rule",
        "result   ok",
    ];
    let mut at = 0;
    for want in order {
        let found = text[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} missing after byte {at}:\n{text}"));
        at += found + want.len();
    }
}

#[test]
fn replay_exits_1_when_an_expectation_fails_and_2_on_a_bad_file() {
    let t = tempfile::tempdir().expect("tempdir");
    let path = t.path().join("s.yaml");
    std::fs::write(&path, SCENARIO.replace("[hi, workspace]", "[hi]")).expect("write");
    let out = run(&[path.as_os_str()]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out)
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("result   FAIL "))
    );
    let bad = t.path().join("bad.yaml");
    std::fs::write(&bad, "name: x\nsteps: 7\n").expect("write");
    let out = run(&[bad.as_os_str()]);
    assert_eq!(code(&out), 2);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn help_shows_an_example_and_bad_usage_is_exit_2() {
    let out = run(&["--help".as_ref()]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("Example:"));
    let out = run(&[]);
    assert_eq!(code(&out), 2);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}
