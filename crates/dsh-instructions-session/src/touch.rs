//! How a session keeps a typed touch in its log, and reads it back.
//!
//! A kept touch is a `tool` event named [`TOUCH_RECORD`] whose `args` hold
//! the path and the kind (`{"path": "pkg", "kind": "list"}`; a shell touch
//! adds `"command"`), so the surface summary, the `settled` marker
//! (decision 0025) and every reader of the log treat it as the tool event
//! it replaces. Logs written before typed touches recorded the hook's
//! touches the same way without a `kind`, a directory as a `.dsh-touch`
//! entry inside it: those still mount (decision 0027).

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_runtime::{ToolExecution, TouchKind};
use dsh_session_log::EventKind;
use serde_json::{Map, Value};

/// Whether an operation's report is kept in the session log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Appended to the log first, so a later process composes its pending
    /// message again ([`crate::Session::mount`] replays it until a message
    /// or a `settled` event follows).
    Keep,
    /// Reported to this process's instance only: the caller delivers what
    /// it composes before the process ends (an agent hook).
    Transient,
}

/// The tool name a kept touch is recorded under.
pub const TOUCH_RECORD: &str = "touch";

/// The entry name earlier versions recorded a directory touch with.
const LEGACY_DIR_ENTRY: &str = ".dsh-touch";

/// The log event that keeps a touch.
pub(crate) fn touch_event(path: &Utf8Path, kind: &TouchKind, token: String) -> EventKind {
    let mut args = Map::new();
    args.insert("path".into(), Value::String(path.as_str().to_owned()));
    args.insert("kind".into(), Value::String(kind.as_str().to_owned()));
    if let TouchKind::Shell { command } = kind {
        args.insert("command".into(), Value::String(command.clone()));
    }
    EventKind::Tool {
        name: TOUCH_RECORD.to_owned(),
        args: Value::Object(args),
        ok: true,
        cancelled: false,
        token: Some(token),
        parent: None,
    }
}

/// The typed touch a replayed tool event records, if it is one: named
/// [`TOUCH_RECORD`], top level, successful, with a string `path`. Without
/// a `kind` (an earlier version's record) it is a read, or a listing of
/// the directory a `.dsh-touch` entry names; an unknown kind is read as a
/// read, and a shell record without its command is none.
pub(crate) fn recorded_touch(exec: &ToolExecution) -> Option<(Utf8PathBuf, TouchKind)> {
    if exec.name != TOUCH_RECORD || exec.parent.is_some() || exec.is_error || exec.cancelled {
        return None;
    }
    let path = Utf8PathBuf::from(exec.arguments.get("path")?.as_str()?);
    let kind = match exec.arguments.get("kind").and_then(Value::as_str) {
        Some("write") => TouchKind::Write,
        Some("list") => TouchKind::List,
        Some("search") => TouchKind::Search,
        Some("shell") => TouchKind::Shell {
            command: exec.arguments.get("command")?.as_str()?.to_owned(),
        },
        Some(_) => TouchKind::Read,
        None if path.file_name() == Some(LEGACY_DIR_ENTRY) => {
            let dir = path.parent().map(Utf8Path::to_owned).unwrap_or_default();
            return Some((dir, TouchKind::List));
        }
        None => TouchKind::Read,
    };
    Some((path, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn exec(name: &str, args: Value) -> ToolExecution {
        ToolExecution {
            name: name.into(),
            arguments: args,
            token: "t".into(),
            parent: None,
            is_error: false,
            cancelled: false,
        }
    }

    fn event_exec(event: EventKind) -> ToolExecution {
        let EventKind::Tool { name, args, .. } = event else {
            panic!("a tool event")
        };
        exec(&name, args)
    }

    /// Every kind survives the log: what is recorded reads back the same.
    #[rstest]
    #[case::read("a/b.rs", TouchKind::Read)]
    #[case::write("/w/x.txt", TouchKind::Write)]
    #[case::list("pkg", TouchKind::List)]
    #[case::search("src", TouchKind::Search)]
    #[case::shell("/w/pkg", TouchKind::Shell { command: "cat src/x.ts".into() })]
    fn kept_touches_read_back(#[case] path: &str, #[case] kind: TouchKind) {
        let event = touch_event(Utf8Path::new(path), &kind, "k".into());
        assert_eq!(
            recorded_touch(&event_exec(event)),
            Some((Utf8PathBuf::from(path), kind))
        );
    }

    /// Decision 0027: the records of the previous version (the hook's
    /// internal `touch` tool) mean what they meant.
    #[rstest]
    #[case::legacy_file(json!({"path": "/w/pkg/a.ts"}), Some(("/w/pkg/a.ts", TouchKind::Read)))]
    #[case::legacy_directory(json!({"path": "/w/pkg/.dsh-touch"}), Some(("/w/pkg", TouchKind::List)))]
    #[case::legacy_relative_directory(json!({"path": "pkg/.dsh-touch"}), Some(("pkg", TouchKind::List)))]
    #[case::unknown_kind(json!({"path": "a.ts", "kind": "open"}), Some(("a.ts", TouchKind::Read)))]
    #[case::shell_without_command(json!({"path": "/w", "kind": "shell"}), None)]
    #[case::no_path(json!({"file_path": "a.ts"}), None)]
    #[case::path_not_a_string(json!({"path": 3}), None)]
    fn recorded_touches(#[case] args: Value, #[case] want: Option<(&str, TouchKind)>) {
        assert_eq!(
            recorded_touch(&exec(TOUCH_RECORD, args)),
            want.map(|(p, k)| (Utf8PathBuf::from(p), k))
        );
    }

    /// Other tools, and failed or nested `touch` executions, go the generic
    /// way (R-CFG-8).
    #[test]
    fn other_tool_events_are_no_touch_records() {
        assert_eq!(recorded_touch(&exec("read", json!({"path": "a"}))), None);
        let mut failed = exec(TOUCH_RECORD, json!({"path": "a"}));
        failed.is_error = true;
        assert_eq!(recorded_touch(&failed), None);
        let mut child = exec(TOUCH_RECORD, json!({"path": "a"}));
        child.parent = Some("p".into());
        assert_eq!(recorded_touch(&child), None);
    }
}
