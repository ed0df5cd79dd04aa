//! Cline CLI's own spellings (decision 0089): its `sessionContext`, its
//! tool call and result, its `hookName`s, and its tool inputs read into the
//! shapes of its tool table (`crate::tools`).

use serde::Deserialize;
use serde_json::Value;

/// Cline's `sessionContext`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ClineSession {
    #[serde(rename = "rootSessionId")]
    pub(super) root_session_id: Option<Value>,
}

/// Cline's `tool_call` / `tool_result`: the tool's name and input (its
/// output is skipped unread).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ClineTool {
    pub(super) name: Option<Value>,
    pub(super) input: Option<Value>,
}

/// The hook event name of Cline's `hookName` (its hook files' names).
pub(super) fn cline_event(hook_name: &str) -> Option<&'static str> {
    Some(match hook_name {
        "tool_call" => "PreToolUse",
        "tool_result" => "PostToolUse",
        "agent_start" => "TaskStart",
        "agent_resume" => "TaskResume",
        "agent_end" => "TaskComplete",
        "agent_abort" => "TaskCancel",
        "agent_error" => "TaskError",
        "prompt_submit" => "UserPromptSubmit",
        "session_shutdown" => "SessionShutdown",
        _ => return None,
    })
}

/// Cline's tool input in the shapes of its tool table (`crate::tools`):
/// `read_files`' `files` (a list of paths or of `{path}` objects, one
/// such object, or a path) as a list of paths; `apply_patch`'s `input` as
/// the patch `command`; `run_commands`' `commands` (strings, or
/// `{command, args}`) as one `command`, a line each.
pub(super) fn cline_input(tool: &str, mut input: Value) -> Value {
    fn path_of(v: &Value) -> Option<Value> {
        match v {
            Value::String(_) => Some(v.clone()),
            Value::Object(o) => ["path", "file_path", "filePath"]
                .iter()
                .find_map(|k| o.get(*k).filter(|p| p.is_string()).cloned()),
            _ => None,
        }
    }
    let Some(obj) = input.as_object_mut() else {
        return input;
    };
    match tool {
        "read_files" => {
            for key in ["files", "file_paths", "paths"] {
                if let Some(v) = obj.remove(key) {
                    let paths: Vec<Value> = match &v {
                        Value::Array(items) => items.iter().filter_map(path_of).collect(),
                        // A JSON text of the list, as Cline's own
                        // `preToolUse.parameters` spells it.
                        Value::String(s) => match serde_json::from_str::<Value>(s) {
                            Ok(Value::Array(items)) => items.iter().filter_map(path_of).collect(),
                            _ => vec![v.clone()],
                        },
                        other => path_of(other).into_iter().collect(),
                    };
                    obj.insert("files".to_owned(), Value::Array(paths));
                    break;
                }
            }
        }
        "apply_patch" => {
            if let Some(text) = obj.remove("input") {
                obj.insert("command".to_owned(), text);
            }
        }
        "run_commands" => {
            let line = |c: &Value| match c {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => {
                    let mut words = vec![o.get("command")?.as_str()?.to_owned()];
                    if let Some(Value::Array(args)) = o.get("args") {
                        let quoter = shlex::Quoter::new().allow_nul(true);
                        words.extend(args.iter().filter_map(Value::as_str).map(|a| {
                            quoter
                                .quote(a)
                                .map_or_else(|_| a.to_owned(), |q| q.into_owned())
                        }));
                    }
                    Some(words.join(" "))
                }
                _ => None,
            };
            let command = match obj.get("commands") {
                Some(Value::Array(items)) => {
                    Some(items.iter().filter_map(line).collect::<Vec<_>>().join("\n"))
                }
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            };
            if let Some(command) = command.filter(|c| !c.is_empty()) {
                obj.insert("command".to_owned(), Value::String(command));
            }
        }
        _ => {}
    }
    input
}

/// Cline CLI 3.0.65's recorded payloads (`tests/fixtures/cline/`, verbatim
/// from the agent harness) and the other input shapes of its tool schemas
/// (decision 0089).
#[cfg(test)]
mod tests {
    use super::super::*;
    use rstest::rstest;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/cline/hook-stdin.{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_slice(&std::fs::read(&path).expect("fixture")).expect("json")
    }

    /// Read as the adapter reads it: the process's cwd given, since
    /// Cline's stdin names none.
    fn read(v: &Value) -> Result<HookEvent, HookError> {
        let Read::Event(mut wire) = Read::bytes(v.to_string().as_bytes(), None) else {
            panic!("an event");
        };
        assert!(wire.cwd.is_none(), "Cline names no cwd");
        wire.cwd = Some("/WORKSPACE".into());
        wire.typed(Agent::Cline, &default_tools(Agent::Cline))
    }

    #[rstest]
    #[case("TaskStart", "TaskStart", Action::NoContext)]
    #[case("TaskResume", "TaskResume", Action::NoContext)]
    #[case("TaskComplete", "TaskComplete", Action::NoContext)]
    #[case("SessionShutdown", "SessionShutdown", Action::NoContext)]
    #[case("PreToolUse", "PreToolUse", Action::Prompt)]
    fn events_map_to_actions(#[case] fixture_name: &str, #[case] name: &str, #[case] want: Action) {
        let e = read(&fixture(fixture_name)).expect("parses");
        assert_eq!(e.name, name);
        assert_eq!(e.action, want);
        // Not `taskId`, which changes with every process.
        assert_eq!(e.session_id, "1796654980314_l5e1r");
        assert_eq!(e.cwd, "/WORKSPACE");
    }

    #[test]
    fn read_files_touches_its_paths_after_the_tool_ran() {
        let e = read(&fixture("PostToolUse")).expect("parses");
        assert_eq!(e.name, "PostToolUse");
        assert_eq!(
            e.action,
            Action::Tool {
                name: "read_files".into(),
                touched: vec![TouchedPath {
                    path: "/WORKSPACE/sub/file.txt".into(),
                    kind: TouchKind::Read
                }]
            }
        );
    }

    /// The input shapes Cline's schemas accept, as `PostToolUse` reads them.
    #[rstest]
    #[case::strings("read_files", json!({"files": ["a/x.md", "b/y.md"]}), Some(vec![("a/x.md", TouchKind::Read), ("b/y.md", TouchKind::Read)]))]
    #[case::objects("read_files", json!({"files": [{"path": "a/x.md", "start_line": 2}, {"file_path": "b/y.md"}]}), Some(vec![("a/x.md", TouchKind::Read), ("b/y.md", TouchKind::Read)]))]
    #[case::one_object("read_files", json!({"files": {"filePath": "a/x.md"}}), Some(vec![("a/x.md", TouchKind::Read)]))]
    #[case::json_text("read_files", json!({"files": "[{\"path\":\"a/x.md\"}]"}), Some(vec![("a/x.md", TouchKind::Read)]))]
    #[case::file_paths("read_files", json!({"file_paths": ["a/x.md"]}), Some(vec![("a/x.md", TouchKind::Read)]))]
    #[case::bare_path("read_files", json!({"path": "a/x.md"}), Some(vec![("a/x.md", TouchKind::Read)]))]
    #[case::editor("editor", json!({"path": "/w/a/new.txt", "new_text": "x"}), Some(vec![("/w/a/new.txt", TouchKind::Write)]))]
    #[case::patch("apply_patch", json!({"input": "*** Begin Patch\n*** Add File: a/n.txt\n+x\n*** End Patch\n"}), Some(vec![("a/n.txt", TouchKind::Write)]))]
    #[case::search("search_codebase", json!({"queries": ["x"]}), None)]
    #[case::nothing("read_files", json!({"files": [1, null]}), None)]
    fn tools_touch_their_paths(
        #[case] tool: &str,
        #[case] input: Value,
        #[case] want: Option<Vec<(&str, TouchKind)>>,
    ) {
        let mut v = fixture("PostToolUse");
        v["tool_result"]["name"] = tool.into();
        v["tool_result"]["input"] = input;
        let action = read(&v).expect("parses").action;
        match want {
            Some(want) => assert_eq!(
                action,
                Action::Tool {
                    name: tool.into(),
                    touched: want
                        .into_iter()
                        .map(|(p, kind)| TouchedPath {
                            path: p.into(),
                            kind
                        })
                        .collect()
                }
            ),
            None => assert_eq!(action, Action::NoContext),
        }
    }

    /// `run_commands` takes a list: one shell touch of its lines, a
    /// structured entry's words quoted back.
    #[test]
    fn run_commands_is_one_shell_call_of_its_lines() {
        let mut v = fixture("PostToolUse");
        v["tool_result"]["name"] = "run_commands".into();
        v["tool_result"]["input"] = json!({"commands": [
            "cat a/b.txt",
            {"command": "ls", "args": ["my dir"]}
        ]});
        assert_eq!(
            read(&v).expect("parses").action,
            Action::Shell {
                name: "run_commands".into(),
                command: "cat a/b.txt\nls 'my dir'".into()
            }
        );
    }

    #[rstest]
    #[case::no_root(json!({"hookName": "tool_call", "sessionContext": {}}))]
    #[case::blank_root(json!({"hookName": "tool_call", "sessionContext": {"rootSessionId": " "}}))]
    #[case::root_not_text(json!({"hookName": "tool_call", "sessionContext": {"rootSessionId": 5}}))]
    #[case::context_not_object(json!({"hookName": "tool_call", "sessionContext": "s"}))]
    fn no_session_is_an_error(#[case] v: Value) {
        let read = Read::bytes(v.to_string().as_bytes(), None);
        match read {
            Read::Event(wire) => {
                assert!(
                    wire.typed(Agent::Cline, &default_tools(Agent::Cline))
                        .is_err()
                )
            }
            Read::NotEvent(_) => {}
            Read::Oversized => panic!("small"),
        }
    }

    /// An unknown `hookName` names no event: the command line's name, if
    /// any, stands.
    #[test]
    fn an_unknown_hook_name_names_nothing() {
        let v = br#"{"hookName": "agent_dance"}"#;
        assert_eq!(Read::bytes(v, None).event_name(), "-");
        assert_eq!(
            Read::bytes(v, Some("PostToolUse")).event_name(),
            "PostToolUse"
        );
    }
}
