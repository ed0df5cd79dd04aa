//! The one way in, end to end: the configuration's warnings in the log,
//! the answer's shape per agent, the event read with the configured tool
//! map, and where the configuration is resolved.

use camino::Utf8PathBuf;
use dsh_home_paths::{DshHome, HomeEnv};
use rstest::rstest;
use serde_json::{Value, json};

use super::*;
use crate::event::Action;
use crate::testdir::respond;

struct Machine {
    _tmp: tempfile::TempDir,
    env: HomeEnv,
    project: Utf8PathBuf,
    agent_dir: Utf8PathBuf,
}

fn machine(agent: Agent) -> Machine {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
    let project = root.join("repo");
    std::fs::create_dir_all(project.join(".git")).expect("mkdir");
    std::fs::write(project.join("AGENTS.md"), "Be kind.\n").expect("write");
    let dsh_home = root.join("home/.dsh");
    let env = HomeEnv {
        home: Some(root.join("home").into_std_path_buf().into_os_string()),
        dsh_home: Some(dsh_home.clone().into_std_path_buf().into_os_string()),
        cwd: project.clone().into_std_path_buf(),
        account_home: None,
    };
    let agent_dir = dsh_home.join("hooks").join(agent.as_str());
    Machine {
        _tmp: tmp,
        env,
        project,
        agent_dir,
    }
}

/// Issue 31 item 4: what validation of the session's configuration
/// ignored (R-CFG-4) reaches the hook's log, beside the hook's own
/// warnings about `config.json`, for every agent.
#[rstest]
#[case(Agent::Claude, "UserPromptSubmit")]
#[case(Agent::Codex, "UserPromptSubmit")]
#[case(Agent::Gemini, "AfterTool")]
fn config_json_warnings_reach_the_hook_log(#[case] agent: Agent, #[case] name: &str) {
    let m = machine(agent);
    std::fs::create_dir_all(&m.agent_dir).expect("mkdir");
    std::fs::write(
        m.agent_dir.join("config.json"),
        r#"{"instruction_file_candidates": ["a/b", "AGENTS.md"],
            "touch_tools": {"NoSuchTool": ["path"]}}"#,
    )
    .expect("config");
    let mut event = serde_json::json!({
        "session_id": "s1", "hook_event_name": name, "cwd": m.project, "prompt": "hi",
    });
    if agent == Agent::Gemini {
        // `touch_tools` replaced the path tools; the shell tool stays.
        event["tool_name"] = "run_shell_command".into();
        event["tool_input"] = serde_json::json!({"command": "cat AGENTS.md"});
    }
    let answer = respond(agent, event.to_string().as_bytes(), &m.env);
    let log = std::fs::read_to_string(m.agent_dir.join("hook.log")).expect("hook.log");
    assert!(
        log.contains(r#"config warning: instruction_file_candidates: ignored entry "a/b""#),
        "{log}"
    );
    assert!(
        log.contains("warning: touch_tools: NoSuchTool is not in the installed tool matcher"),
        "{log}"
    );
    if agent != Agent::Gemini {
        assert!(answer.contains("Be kind."), "{answer}");
    }
}

/// The shipped code of `dir` (every `.rs` below it, each up to its
/// `#[cfg(test)] mod tests`), by file.
fn shipped(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            shipped(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            // A module's tests in a file of their own are no shipped code.
            && !path.file_name().is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"))
        {
            let text = std::fs::read_to_string(&path).expect("source");
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            out.push((path.display().to_string(), code.to_owned()));
        }
    }
}

/// Issue 31 item 4: a hook event resolves its configuration once, in
/// the mount (`MountBuilder::open`, through `Session::mount`), whose warnings
/// the log shows; no stage resolves a `ConfigInput` of its own.
#[test]
fn the_hook_resolves_its_configuration_only_in_the_mount() {
    let mut files = Vec::new();
    shipped(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 20, "{}", files.len());
    let resolving: Vec<&str> = files
        .iter()
        .filter(|(_, code)| {
            code.lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .any(|l| l.contains(".resolve()"))
        })
        .map(|(f, _)| f.as_str())
        .collect();
    assert!(resolving.is_empty(), "{resolving:?}");
    let mounting: Vec<&str> = files
        .iter()
        .filter(|(_, code)| code.contains("Session::mount("))
        .map(|(f, _)| f.rsplit('/').next().unwrap_or_default())
        .collect();
    let mut mounting = mounting;
    mounting.sort_unstable();
    assert_eq!(mounting, ["gemini.rs", "touch.rs"]);
}

// ---------------------------------------------------------------------------
// The answer's shape per agent.
// ---------------------------------------------------------------------------

fn parsed(s: &str) -> Value {
    serde_json::from_str(s).expect("json")
}

#[rstest::rstest]
#[case(Agent::Claude)]
#[case(Agent::Copilot)]
#[case(Agent::Qwen)]
fn nothing_is_an_empty_object(#[case] agent: Agent) {
    assert_eq!(shaped(agent, "SessionStart", Given::Nothing), "{}");
}

/// Copilot CLI reads the top-level key only (harness README); every
/// other agent the nested one, and no answer carries both (Codex drops
/// such an answer whole).
#[rstest::rstest]
#[case(Agent::Claude, false)]
#[case(Agent::Codex, false)]
#[case(Agent::Gemini, false)]
#[case(Agent::Copilot, true)]
#[case(Agent::Qwen, false)]
fn the_context_key_is_the_agents_own(#[case] agent: Agent, #[case] top_level: bool) {
    let a = parsed(&shaped(agent, "postToolUse", Given::Context("CTX".into())));
    let object = a.as_object().expect("object");
    assert_eq!(object.len(), 1, "{a}");
    if top_level {
        assert_eq!(a["additionalContext"], "CTX");
    } else {
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], "CTX");
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "postToolUse");
    }
}

/// The text is given as it is: the framing was chosen when it was cut
/// (a frame here is not stripped, decision 0055).
#[test]
fn context_is_additional_context_under_the_event_name() {
    let framed = format!(
        "{}body{}",
        dsh_instructions_render::text::FRAME_OPEN,
        dsh_instructions_render::text::FRAME_CLOSE
    );
    let a = parsed(&shaped(
        Agent::Codex,
        "UserPromptSubmit",
        Given::Context(framed.clone()),
    ));
    assert_eq!(a["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert_eq!(a["hookSpecificOutput"]["additionalContext"], framed);
}

#[test]
fn a_request_answers_the_leading_messages() {
    let m = vec![json!({"role": "user", "parts": [{"text": "hi"}]})];
    let a = parsed(&shaped(
        Agent::Gemini,
        "BeforeModel",
        Given::Request(m.clone()),
    ));
    assert_eq!(
        a["hookSpecificOutput"]["llm_request"]["messages"],
        Value::Array(m)
    );
}

// ---------------------------------------------------------------------------
// The event read with the agent's configuration.
// ---------------------------------------------------------------------------

fn home() -> (tempfile::TempDir, DshHome) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
    let home = DshHome {
        path,
        label: dsh_home_paths::HomeLabel::EnvVar,
    };
    (tmp, home)
}

/// The event as the adapter reads it: with the agent's configuration.
fn configured(
    agent: Agent,
    home: &DshHome,
    text: &str,
) -> Result<crate::event::HookEvent, crate::HookError> {
    let dir = agent_dir(home, agent);
    match event::read(text.as_bytes(), None, agent, Some(&dir)) {
        (_, Ok(Got::Event(read))) => Ok(read.1),
        (_, Ok(Got::Oversized)) => panic!("not oversized"),
        (_, Err(e)) => Err(e),
    }
}

#[test]
fn the_event_is_read_with_the_configured_tool_map() {
    let (_tmp, home) = home();
    let dir = agent_dir(&home, Agent::Claude);
    assert_eq!(dir, home.path.join("hooks/claude"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    // `config.json` makes `Grep`'s `path` the only path tool.
    std::fs::write(
        dir.join("config.json"),
        r#"{"touch_tools": {"Grep": ["path"]}}"#,
    )
    .expect("config");
    let event = r#"{"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w",
        "tool_name": "Grep", "tool_input": {"path": "/w/src"}}"#;
    let e = configured(Agent::Claude, &home, event).expect("configured");
    let Action::Tool { touched, .. } = &e.action else {
        panic!("{:?}", e.action);
    };
    assert_eq!(touched.len(), 1);
    assert_eq!(touched[0].path, "/w/src");
    // The built-in `Read` is no path tool any more.
    let read = r#"{"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w",
        "tool_name": "Read", "tool_input": {"file_path": "/w/a.md"}}"#;
    let e = configured(Agent::Claude, &home, read).expect("configured");
    assert!(
        !matches!(&e.action, Action::Tool { touched, .. } if !touched.is_empty()),
        "{:?}",
        e.action
    );
}

#[test]
fn a_malformed_config_is_an_error_naming_the_file() {
    let (_tmp, home) = home();
    let dir = agent_dir(&home, Agent::Codex);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("config.json"), "[]").expect("config");
    let event = r#"{"hook_event_name": "SessionStart", "session_id": "s", "cwd": "/w"}"#;
    let e = configured(Agent::Codex, &home, event).expect_err("not an object");
    assert!(e.to_string().contains("config.json"), "{e}");
}
