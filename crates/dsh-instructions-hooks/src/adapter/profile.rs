//! Stage 2, profile and configuration: the agent's directory in the DSH
//! home, its configuration (the hook preset with `config.json` laid over
//! it, [`crate::load_config`]) and the event read with that
//! configuration's tool map ([`crate::event_from_value`]).

use camino::Utf8PathBuf;
use dsh_home_paths::DshHome;
use serde_json::Value;

use crate::agent::Agent;
use crate::event::{HookEvent, event_from_value};
use crate::lean::LeanEvent;
use crate::outcome::AdapterError;
use crate::preset::{HookConfig, load_config};

/// An event read in its agent's configuration.
#[derive(Debug)]
pub(crate) struct Configured {
    /// `$DSH_HOME/hooks/<agent>/`: its `config.json`, `hook.log` and
    /// `sessions/`.
    pub(crate) dir: Utf8PathBuf,
    /// The configuration new sessions are created with, and its warnings.
    pub(crate) config: HookConfig,
    /// The event.
    pub(crate) event: HookEvent,
    /// Gemini CLI `BeforeModel`: the leading messages of its request.
    pub(crate) leading: Option<Vec<Value>>,
}

/// The agent's directory below the DSH home.
pub(crate) fn agent_dir(home: &DshHome, agent: Agent) -> Utf8PathBuf {
    home.path.join("hooks").join(agent.to_string())
}

/// Reads `lean` as `agent`'s event under the agent's configuration.
///
/// # Errors
/// A malformed `config.json`; an event the agent's parser refuses.
pub(crate) fn configure(
    agent: Agent,
    home: &DshHome,
    lean: LeanEvent,
) -> Result<Configured, AdapterError> {
    let dir = agent_dir(home, agent);
    let config = load_config(agent, &dir)?;
    let event = event_from_value(agent, &lean.to_value(), &config.tools)?;
    Ok(Configured {
        dir,
        config,
        event,
        leading: lean.llm_request.map(|r| r.messages.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Action;

    fn home() -> (tempfile::TempDir, DshHome) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
        let home = DshHome {
            path,
            label: dsh_home_paths::HomeLabel::EnvVar,
        };
        (tmp, home)
    }

    fn lean(text: &str) -> LeanEvent {
        crate::lean::parse(text.as_bytes()).expect("lean")
    }

    #[test]
    fn the_event_is_read_with_the_configured_tool_map() {
        let (_tmp, home) = home();
        let dir = agent_dir(&home, Agent::Claude);
        std::fs::create_dir_all(&dir).expect("mkdir");
        // `config.json` makes `Grep`'s `path` the only path tool.
        std::fs::write(
            dir.join("config.json"),
            r#"{"touch_tools": {"Grep": ["path"]}}"#,
        )
        .expect("config");
        let event = r#"{"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w",
            "tool_name": "Grep", "tool_input": {"path": "/w/src"}}"#;
        let c = configure(Agent::Claude, &home, lean(event)).expect("configured");
        assert_eq!(c.dir, home.path.join("hooks/claude"));
        let Action::Tool { touched, .. } = &c.event.action else {
            panic!("{:?}", c.event.action);
        };
        assert_eq!(touched.len(), 1);
        assert_eq!(touched[0].path, "/w/src");
        // The built-in `Read` is no path tool any more.
        let read = r#"{"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w",
            "tool_name": "Read", "tool_input": {"file_path": "/w/a.md"}}"#;
        let c = configure(Agent::Claude, &home, lean(read)).expect("configured");
        assert!(
            !matches!(&c.event.action, Action::Tool { touched, .. } if !touched.is_empty()),
            "{:?}",
            c.event.action
        );
    }

    #[test]
    fn a_malformed_config_is_an_error_naming_the_file() {
        let (_tmp, home) = home();
        let dir = agent_dir(&home, Agent::Codex);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("config.json"), "[]").expect("config");
        let event = r#"{"hook_event_name": "SessionStart", "session_id": "s", "cwd": "/w"}"#;
        let e = configure(Agent::Codex, &home, lean(event)).expect_err("not an object");
        assert!(e.to_string().contains("config.json"), "{e}");
    }
}
