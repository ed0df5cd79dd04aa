//! The adapter end to end for Cline CLI 3.0.65, on its recorded stdin
//! payloads (`tests/fixtures/cline/`, the harness's `/WORKSPACE` replaced
//! by a test machine's project): the answer shape, the session key, the
//! cwd Cline's stdin lacks, what Cline holds itself and is left out, and
//! the 50,000-character bound (decision 0089).

use rstest::rstest;
use serde_json::Value;

use super::machine_tests::Machine;
use crate::agent::{Agent, CLINE_PART_BYTES};

/// What Cline keeps of one hook's context (measured: the rest is cut).
const CLINE_KEEPS: usize = 50_000;

fn machine() -> Machine {
    // Cline's stdin names no cwd: the hook runs in Cline's working
    // directory, which the process's environment says (the project).
    Machine::new(&[("sub/CLAUDE.md", "SUB-CLAUDE be exact.\n")])
}

impl Machine {
    /// Cline's recorded payload, placed in this machine.
    fn cline_payload(&self, name: &str) -> Value {
        let v = self.payload(Agent::Cline, name);
        assert!(v.get("cwd").is_none(), "Cline names no cwd");
        v
    }

    /// The same payload of another process of the session (Cline's
    /// `taskId` and `agent_id` change with every process).
    fn other_process(mut v: Value) -> Value {
        v["taskId"] = "conv_2".into();
        v["agent_id"] = "agent_2".into();
        v
    }

    fn cline(&self, payload: &Value) -> Value {
        self.answer(Agent::Cline, None, payload)
    }
}

/// Cline's context: `context`, and nothing else (it ignores
/// `hookSpecificOutput`, measured).
fn context(answer: &Value) -> Option<&str> {
    let object = answer.as_object().expect("object");
    if object.is_empty() {
        return None;
    }
    assert_eq!(object.len(), 1, "only context: {answer}");
    Some(answer["context"].as_str().expect("text"))
}

/// `PreToolUse` gives the baseline Cline lacks — the overlay — and leaves
/// out the `AGENTS.md` Cline loads itself; `PostToolUse` of the
/// `read_files` call gives the nested `CLAUDE.md` Cline never loads.
#[test]
fn the_tool_hooks_give_what_cline_lacks() {
    let m = machine();
    let pre = m.cline(&m.cline_payload("PreToolUse"));
    let text = context(&pre).expect("a baseline");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");
    assert!(!text.contains("ROOT-AGENTS"), "Cline holds it: {text}");
    assert!(!text.contains("SUB-CLAUDE"), "not touched yet: {text}");
    let post = m.cline(&m.cline_payload("PostToolUse"));
    let text = context(&post).expect("the nested file");
    assert!(text.contains("sub/CLAUDE.md"), "{text}");
    assert!(text.contains("SUB-CLAUDE be exact."), "{text}");
    assert!(!text.contains("ROOT-LOCAL"), "given once: {text}");
}

/// The session is `sessionContext.rootSessionId`: another process of the
/// same session (a resume, whose history Cline replays whole) gives
/// nothing again; another root id is another session.
#[test]
fn the_session_is_the_root_session_id() {
    let m = machine();
    let pre = m.cline_payload("PreToolUse");
    assert!(context(&m.cline(&pre)).is_some());
    let again = Machine::other_process(pre.clone());
    assert_eq!(context(&m.cline(&again)), None);
    let mut other = again;
    other["sessionContext"]["rootSessionId"] = "another".into();
    let text = context(&m.cline(&other)).map(str::to_owned);
    assert!(text.is_some_and(|t| t.contains("ROOT-LOCAL")));
}

/// Cline re-reads its `AGENTS.md` for every request: an edit of it is not
/// said again; an edit of the overlay, which Cline does not read, is.
#[test]
fn an_edit_of_cline_s_own_file_is_left_to_cline() {
    let m = machine();
    let pre = m.cline_payload("PreToolUse");
    assert!(context(&m.cline(&pre)).is_some());
    std::fs::write(m.project.join("AGENTS.md"), "ROOT-AGENTS be kinder.\n").expect("edit");
    assert_eq!(context(&m.cline(&pre)), None, "Cline shows it itself");
    std::fs::write(
        m.project.join("AGENTS.local.md"),
        "ROOT-LOCAL be briefer.\n",
    )
    .expect("edit");
    let a = m.cline(&pre);
    let text = context(&a).expect("the update");
    assert!(text.contains("ROOT-LOCAL be briefer."), "{text}");
    assert!(!text.contains("ROOT-AGENTS"), "{text}");
}

/// Started in a subdirectory, Cline loads that directory's `AGENTS.md`
/// and not the root's (measured): the root's is given, the cwd's left out.
#[test]
fn cline_s_own_file_is_the_one_of_its_working_directory() {
    let mut m = machine();
    std::fs::write(m.project.join("sub/AGENTS.md"), "SUB-AGENTS be terse.\n").expect("write");
    m.env.cwd = m.project.join("sub").into_std_path_buf();
    let text = context(&m.cline(&m.cline_payload("PreToolUse")))
        .expect("a baseline")
        .to_owned();
    assert!(text.contains("ROOT-AGENTS be kind."), "{text}");
    assert!(!text.contains("SUB-AGENTS"), "Cline holds it: {text}");
}

/// Cline cuts a hook's context at 50,000 characters: a larger message
/// goes a part per answer, none longer than that, each part once, all of
/// them by the next tool call's hooks.
#[test]
fn no_answer_passes_cline_s_bound_and_nothing_is_lost() {
    let m = machine();
    let big: String = (0..1_100)
        .map(|i| format!("LOCAL-LINE-{i:04} keep every line of this overlay.\n"))
        .collect();
    assert!(big.len() > CLINE_KEEPS);
    std::fs::write(m.project.join("AGENTS.local.md"), &big).expect("write");
    let mut given = String::new();
    for name in ["PreToolUse", "PostToolUse", "PreToolUse", "PostToolUse"] {
        let a = m.cline(&Machine::other_process(m.cline_payload(name)));
        if let Some(text) = context(&a) {
            assert!(text.chars().count() <= CLINE_KEEPS, "{}", text.len());
            assert!(text.len() <= CLINE_PART_BYTES, "{}", text.len());
            given.push_str(text);
        }
    }
    // Within the budget (65,536 bytes), in two parts (the overlay's
    // section continued in the second): every line given, each once, and
    // the nested file after them.
    assert!(
        given.contains("AGENTS.local.md (continued)"),
        "a second part came"
    );
    for i in 0..1_100 {
        let line = format!("LOCAL-LINE-{i:04} ");
        assert_eq!(given.matches(&line).count(), 1, "{line}");
    }
    let last = given.find("LOCAL-LINE-1099").expect("the last line");
    assert!(
        given
            .find("SUB-CLAUDE be exact.")
            .is_some_and(|at| at > last)
    );
}

/// The events Cline fires without awaiting them (their output is dropped)
/// give nothing and touch no session.
#[rstest]
#[case("TaskStart")]
#[case("TaskResume")]
#[case("TaskComplete")]
#[case("SessionShutdown")]
fn the_other_events_give_nothing(#[case] name: &str) {
    let m = machine();
    assert_eq!(m.cline(&m.cline_payload(name)), serde_json::json!({}));
    let sessions = m.env.cwd.join("../home/.dsh/hooks/cline/sessions");
    assert!(!sessions.exists(), "{name} opened a session");
}

/// Cline fires nothing when it compacts, but writes its session's
/// compaction file: the next tool call's `PreToolUse` gives the complete
/// baseline again (what the compaction folded away), once.
#[test]
fn a_compaction_cline_wrote_down_brings_the_baseline_back() {
    let m = machine();
    let pre = m.cline_payload("PreToolUse");
    assert!(context(&m.cline(&pre)).is_some());
    assert_eq!(context(&m.cline(&pre)), None, "nothing new");
    let id = pre["sessionContext"]["rootSessionId"].as_str().expect("id");
    let home = std::path::PathBuf::from(m.env.home.clone().expect("home"));
    let file = home
        .join(".cline/data/sessions")
        .join(id)
        .join(format!("{id}.compaction.json"));
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(&file, "{\"compacted\": 1}").expect("write");
    let a = m.cline(&Machine::other_process(pre.clone()));
    let text = context(&a).expect("the baseline again");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");
    assert!(!text.contains("ROOT-AGENTS"), "still Cline's own: {text}");
    assert_eq!(context(&m.cline(&pre)), None, "once");
}
