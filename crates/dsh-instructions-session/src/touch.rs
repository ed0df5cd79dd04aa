//! How a session keeps a typed touch in its log, and reads it back.
//!
//! A kept touch is a `touch` event ([`EventKind::Touch`]: the path, the
//! kind, a shell touch's command), so a product tool that happens to be
//! called `touch` is recorded and replayed as the tool call it is. The
//! surface summary and the `settled` marker (decision 0025) treat both
//! alike. Logs created before touches had their own event (their header
//! lacks `touch_events`) recorded them as a `tool` event named
//! [`TOUCH_RECORD`] with the same fields in `args`, and earlier still
//! without a `kind`, a directory as a `.dsh-touch` entry inside it: in
//! those logs such a tool event is still a touch (decisions 0027, 0054).

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_runtime::{ToolExecution, TouchKind};
use dsh_session_log::EventKind;
use serde_json::Value;

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

/// The tool name a log created before touches had their own event kept a
/// touch under (a `tool` event; in a newer log, a tool of that name is a
/// tool call).
pub const TOUCH_RECORD: &str = "touch";

/// The entry name earlier versions recorded a directory touch with.
const LEGACY_DIR_ENTRY: &str = ".dsh-touch";

/// What a mount reports again from the log: a tool execution through the
/// configured maps, or a typed touch the typed way.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Replay {
    /// A tool call (R-CFG-8, R-CFG-11).
    Tool(ToolExecution),
    /// A typed touch (R-RT-3).
    Touch(Utf8PathBuf, TouchKind),
}

/// The log event that keeps a touch.
pub(crate) fn touch_event(path: &Utf8Path, kind: &TouchKind, token: String) -> EventKind {
    EventKind::Touch {
        path: path.as_str().to_owned(),
        kind: kind.as_str().to_owned(),
        command: match kind {
            TouchKind::Shell { command } => Some(command.clone()),
            _ => None,
        },
        token: Some(token),
    }
}

/// The typed touch of a `touch` event's fields: an unknown kind is read as
/// a read (a newer build's kind), a shell touch without its command is none.
pub(crate) fn touch_of(path: &str, kind: Option<&str>, command: Option<&str>) -> Option<TouchKind> {
    Some(match kind {
        Some("write") => TouchKind::Write,
        Some("list") => TouchKind::List,
        Some("search") => TouchKind::Search,
        Some("shell") => TouchKind::Shell {
            command: command?.to_owned(),
        },
        Some(_) => TouchKind::Read,
        None if Utf8Path::new(path).file_name() == Some(LEGACY_DIR_ENTRY) => TouchKind::List,
        None => TouchKind::Read,
    })
}

/// The typed touch a replayed `tool` event of a log created before touches
/// had their own event records, if it is one: named [`TOUCH_RECORD`], top
/// level, successful, with a string `path`. Without a `kind` (an earlier
/// version's record) it is a read, or a listing of the directory a
/// `.dsh-touch` entry names; an unknown kind is read as a read, and a
/// shell record without its command is none.
pub(crate) fn legacy_touch(exec: &ToolExecution) -> Option<(Utf8PathBuf, TouchKind)> {
    if exec.name != TOUCH_RECORD || exec.parent.is_some() || exec.is_error || exec.cancelled {
        return None;
    }
    let path = exec.arguments.get("path")?.as_str()?;
    let str_arg = |key: &str| exec.arguments.get(key).and_then(Value::as_str);
    let kind = touch_of(path, str_arg("kind"), str_arg("command"))?;
    let path = Utf8PathBuf::from(path);
    if str_arg("kind").is_none() && path.file_name() == Some(LEGACY_DIR_ENTRY) {
        let dir = path.parent().map(Utf8Path::to_owned).unwrap_or_default();
        return Some((dir, kind));
    }
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

    /// The touch a `touch` event reads back as.
    fn read_back(event: EventKind) -> Option<(Utf8PathBuf, TouchKind)> {
        let EventKind::Touch {
            path,
            kind,
            command,
            ..
        } = event
        else {
            panic!("a touch event")
        };
        let touch = touch_of(&path, Some(&kind), command.as_deref())?;
        Some((Utf8PathBuf::from(path), touch))
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
        assert_eq!(read_back(event), Some((Utf8PathBuf::from(path), kind)));
    }

    /// Decisions 0027 and 0054: in a log created before touches had their
    /// own event, the `touch` tool's records mean what they meant.
    #[rstest]
    #[case::legacy_file(json!({"path": "/w/pkg/a.ts"}), Some(("/w/pkg/a.ts", TouchKind::Read)))]
    #[case::legacy_directory(json!({"path": "/w/pkg/.dsh-touch"}), Some(("/w/pkg", TouchKind::List)))]
    #[case::legacy_relative_directory(json!({"path": "pkg/.dsh-touch"}), Some(("pkg", TouchKind::List)))]
    #[case::typed_list(json!({"path": "pkg", "kind": "list"}), Some(("pkg", TouchKind::List)))]
    #[case::typed_shell(json!({"path": "/w", "kind": "shell", "command": "ls"}), Some(("/w", TouchKind::Shell { command: "ls".into() })))]
    #[case::unknown_kind(json!({"path": "a.ts", "kind": "open"}), Some(("a.ts", TouchKind::Read)))]
    #[case::shell_without_command(json!({"path": "/w", "kind": "shell"}), None)]
    #[case::no_path(json!({"file_path": "a.ts"}), None)]
    #[case::path_not_a_string(json!({"path": 3}), None)]
    fn recorded_touches(#[case] args: Value, #[case] want: Option<(&str, TouchKind)>) {
        assert_eq!(
            legacy_touch(&exec(TOUCH_RECORD, args)),
            want.map(|(p, k)| (Utf8PathBuf::from(p), k))
        );
    }

    /// Other tools, and failed or nested `touch` executions, go the generic
    /// way (R-CFG-8).
    #[test]
    fn other_tool_events_are_no_touch_records() {
        assert_eq!(legacy_touch(&exec("read", json!({"path": "a"}))), None);
        let mut failed = exec(TOUCH_RECORD, json!({"path": "a"}));
        failed.is_error = true;
        assert_eq!(legacy_touch(&failed), None);
        let mut child = exec(TOUCH_RECORD, json!({"path": "a"}));
        child.parent = Some("p".into());
        assert_eq!(legacy_touch(&child), None);
    }
}
