//! The OpenAI Chat Completions wire (GitHub Copilot CLI's "bring your own
//! key" provider, Qwen Code): request messages as [`Item`]s, and a
//! [`Decision`] as a streamed `chat.completion.chunk` sequence (role, content
//! or `tool_calls` deltas, the finish reason, a usage chunk for
//! `stream_options.include_usage`, `[DONE]`) or one JSON completion.
//!
//! Only `user` messages are prompts: the user messages an agent adds after a
//! tool result (Copilot's nested-instructions reminder and preToolUse
//! context, Qwen's follow-up UserPromptSubmit context) carry no tag, so they
//! never start a turn. Tools come from the request's list, arguments from
//! each tool's declared schema (harness README, "GitHub Copilot CLI 1.0.102"
//! and "Qwen Code 0.24.4"): Copilot `view`/`create`/`edit`/`bash` with
//! `path`, Qwen `read_file`/`write_file`/`edit`/`run_shell_command` with
//! `file_path`. Why the mock answers so: decision 0069.

use serde_json::{Map, Value, json};

use super::script::{Action, Decision, EDIT_AFTER, EDIT_BEFORE, Item, Op, WRITE_CONTENT};
use super::wire::{Place, Reply, missing_tool, texts_of};

/// Conversation items of a Chat Completions request: user text, the
/// assistant's tool calls, tool results. System and assistant text are not
/// items (never a prompt, never a summary request).
pub(crate) fn chat_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    for msg in body["messages"].as_array().into_iter().flatten() {
        match msg["role"].as_str() {
            Some("user") => items.push(Item::Text(texts_of(&msg["content"]))),
            Some("assistant") => {
                for _ in msg["tool_calls"].as_array().into_iter().flatten() {
                    items.push(Item::ToolCall);
                }
            }
            Some("tool" | "function") => items.push(Item::ToolResult),
            _ => {}
        }
    }
    items
}

/// Whether the request has a prompt tag in its last user message.
fn last_user_tagged(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .is_some_and(|m| super::script::prompt_tag(&texts_of(&m["content"])).is_some())
}

/// A side request after the turn: the last tagged prompt already got a text
/// answer and the request ends in an untagged user message (Qwen Code's
/// memory-extraction agent).
pub(crate) fn side_request(body: &Value) -> bool {
    let msgs: Vec<&Value> = body["messages"].as_array().into_iter().flatten().collect();
    let Some(prompt) = msgs.iter().rposition(|m| {
        m["role"] == "user" && super::script::prompt_tag(&texts_of(&m["content"])).is_some()
    }) else {
        return false;
    };
    let after = &msgs[prompt + 1..];
    let answered = after
        .iter()
        .any(|m| m["role"] == "assistant" && !texts_of(&m["content"]).trim().is_empty());
    answered && after.last().is_some_and(|m| m["role"] == "user")
}

/// The decision for a Chat Completions request, from the script's: a
/// request that forbids tools (`tool_choice: "none"`, Copilot CLI's
/// compaction) and has no tagged prompt last is a summary request; a side
/// request after the turn gets plain text.
pub(crate) fn chat_decision(body: &Value, d: Decision) -> Decision {
    if (body["tool_choice"] == "none" && !last_user_tagged(body)) || cline_summary(body) {
        return Decision {
            action: Action::Summary,
            usage: d.usage,
        };
    }
    match d.action {
        Action::Tool { .. } | Action::Final { .. } if side_request(body) => Decision {
            action: Action::Plain,
            usage: d.usage,
        },
        _ => d,
    }
}

/// Cline CLI's compaction request: no tools, and the last user message asks
/// for the summary (harness `agents/cline.md`), whatever prompt tags the
/// conversation it quotes holds.
fn cline_summary(body: &Value) -> bool {
    let no_tools = body["tools"].as_array().is_none_or(|t| t.is_empty());
    no_tools
        && body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .rev()
            .find(|m| m["role"] == "user")
            .is_some_and(|m| {
                texts_of(&m["content"])
                    .trim_start()
                    .starts_with("Summarize this session for continuation.")
            })
}

/// The function declaration (`{"name", "parameters"}`) of tool `name`.
fn tool<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            if t["function"].is_object() {
                &t["function"]
            } else {
                t
            }
        })
        .find(|f| f["name"] == name)
}

/// The first of `names` the request offers.
fn first_tool<'a>(body: &'a Value, names: &[&'static str]) -> Option<(&'static str, &'a Value)> {
    names
        .iter()
        .find_map(|n| tool(body, n).map(|decl| (*n, decl)))
}

/// Arguments for a tool from its declared schema: `path` (if any) under the
/// path-like property, the `known` ones the schema declares (all of them if
/// it declares none), and a harmless value for any other required property.
pub(crate) fn schema_args(decl: &Value, path: Option<String>, known: &[(&str, Value)]) -> Value {
    let schema = &decl["parameters"];
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut args = Map::new();
    if let Some(path) = path {
        let key = ["file_path", "filePath", "absolute_path", "path"]
            .into_iter()
            .find(|k| props.contains_key(*k))
            .unwrap_or("path");
        args.insert(key.to_owned(), Value::String(path));
    }
    for (k, v) in known {
        if props.is_empty() || props.contains_key(*k) {
            args.insert((*k).to_owned(), v.clone());
        }
    }
    for req in schema["required"].as_array().into_iter().flatten() {
        let Some(k) = req.as_str() else { continue };
        if !args.contains_key(k) {
            let v = match props.get(k).and_then(|p| p["type"].as_str()) {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(false),
                _ => json!("e2e scripted call"),
            };
            args.insert(k.to_owned(), v);
        }
    }
    Value::Object(args)
}

/// The calls of one scripted round, or `None` when the request offers no
/// tool for it.
fn calls_for(body: &Value, op: &Op, place: Place<'_>) -> Option<Vec<(&'static str, Value)>> {
    match op {
        Op::Read(paths) if tool(body, "read_files").is_some() => Some(
            paths
                .iter()
                .map(|p| ("read_files", json!({"files": [{"path": place.abs(p)}]})))
                .collect(),
        ),
        Op::Write(p) if tool(body, "editor").is_some() => Some(vec![(
            "editor",
            json!({"path": place.abs(p), "new_text": WRITE_CONTENT}),
        )]),
        Op::Edit(p) if tool(body, "editor").is_some() => Some(vec![(
            "editor",
            json!({"path": place.abs(p), "old_text": EDIT_BEFORE, "new_text": EDIT_AFTER}),
        )]),
        Op::Shell(cmd) if tool(body, "run_commands").is_some() => {
            Some(vec![("run_commands", json!({"commands": [cmd]}))])
        }
        Op::Read(paths) => {
            let (name, decl) = first_tool(body, &["view", "read_file", "read"])?;
            Some(
                paths
                    .iter()
                    .map(|p| (name, schema_args(decl, Some(place.abs(p)), &[])))
                    .collect(),
            )
        }
        Op::Write(p) => {
            let (name, decl) = first_tool(body, &["create", "write_file", "write"])?;
            let known = [
                ("file_text", json!(WRITE_CONTENT)),
                ("content", json!(WRITE_CONTENT)),
            ];
            Some(vec![(name, schema_args(decl, Some(place.abs(p)), &known))])
        }
        Op::Edit(p) => {
            let (name, decl) = first_tool(body, &["edit", "replace"])?;
            let known = [
                ("old_str", json!(EDIT_BEFORE)),
                ("new_str", json!(EDIT_AFTER)),
                ("old_string", json!(EDIT_BEFORE)),
                ("new_string", json!(EDIT_AFTER)),
                // opencode's `edit`; pi's takes a list of replacements.
                ("oldString", json!(EDIT_BEFORE)),
                ("newString", json!(EDIT_AFTER)),
                (
                    "edits",
                    json!([{"oldText": EDIT_BEFORE, "newText": EDIT_AFTER}]),
                ),
            ];
            Some(vec![(name, schema_args(decl, Some(place.abs(p)), &known))])
        }
        Op::Shell(cmd) => {
            let (name, decl) = first_tool(body, &["bash", "run_shell_command"])?;
            let known = [
                ("command", json!(cmd)),
                ("description", json!("e2e scripted shell call")),
                ("mode", json!("sync")),
                ("is_background", json!(false)),
            ];
            Some(vec![(name, schema_args(decl, None, &known))])
        }
    }
}

/// The answer to a Chat Completions request: streamed when it asks to be.
pub(crate) fn chat_reply(
    body: &Value,
    d: &Decision,
    place: Place<'_>,
    ids: &mut dyn FnMut() -> u64,
) -> Reply {
    let mut action = d.action.name().to_owned();
    let mut msg = json!({"role": "assistant", "content": null});
    let mut finish = "stop";
    if let Action::Tool { op, .. } = &d.action {
        match calls_for(body, op, place) {
            Some(calls) => {
                let calls: Vec<Value> = calls
                    .into_iter()
                    .map(|(name, args)| {
                        json!({"id": format!("call_mock{:04}", ids()), "type": "function",
                               "function": {"name": name, "arguments": args.to_string()}})
                    })
                    .collect();
                msg["tool_calls"] = Value::Array(calls);
                finish = "tool_calls";
            }
            None => {
                let (a, text) = missing_tool(d, "view/read_file, create/write_file, edit, bash");
                action = a;
                msg["content"] = json!(text);
            }
        }
    } else {
        msg["content"] = json!(d.action.text());
    }
    let usage = json!({"prompt_tokens": d.usage, "completion_tokens": 12,
                       "total_tokens": d.usage + 12,
                       "prompt_tokens_details": {"cached_tokens": 0}});
    let resp = json!({"id": format!("chatcmpl-mock{:04}", ids()), "object": "chat.completion",
                      "created": 0, "model": body["model"].as_str().unwrap_or("mock-model"),
                      "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                      "usage": usage});
    let answer = resp["choices"][0]["message"].clone();
    let stream = body["stream"].as_bool() == Some(true);
    Reply::shaped(stream, &resp, chat_sse, action, answer)
}

/// A complete completion as the chunk stream: the role, the content or each
/// tool call (its id and name, then its arguments), the finish reason, the
/// usage chunk with no choices, `[DONE]`.
pub(crate) fn chat_sse(resp: &Value) -> String {
    let chunk = |choices: Value, usage: Option<&Value>| {
        let mut c = json!({"id": resp["id"], "object": "chat.completion.chunk",
                           "created": resp["created"], "model": resp["model"], "choices": choices});
        if let Some(u) = usage {
            c["usage"] = u.clone();
        }
        format!("data: {c}\n\n")
    };
    let delta = |d: Value, fin: Value| json!([{"index": 0, "delta": d, "finish_reason": fin}]);
    let msg = &resp["choices"][0]["message"];
    let mut out = chunk(
        delta(json!({"role": "assistant", "content": ""}), Value::Null),
        None,
    );
    if let Some(text) = msg["content"].as_str() {
        out += &chunk(delta(json!({"content": text}), Value::Null), None);
    }
    for (i, tc) in msg["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        out += &chunk(
            delta(
                json!({"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                                       "function": {"name": tc["function"]["name"], "arguments": ""}}]}),
                Value::Null,
            ),
            None,
        );
        out += &chunk(
            delta(
                json!({"tool_calls": [{"index": i, "function": {"arguments": tc["function"]["arguments"]}}]}),
                Value::Null,
            ),
            None,
        );
    }
    out += &chunk(
        delta(json!({}), resp["choices"][0]["finish_reason"].clone()),
        None,
    );
    out += &chunk(json!([]), Some(&resp["usage"]));
    out += "data: [DONE]\n\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2e::script::{self, DEFAULT_USAGE};
    use std::collections::HashSet;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    fn counter() -> impl FnMut() -> u64 {
        let mut n = 0;
        move || {
            n += 1;
            n
        }
    }

    fn place(ws: &Path) -> Place<'_> {
        Place {
            workspace: ws,
            cwd: ws,
        }
    }

    fn decl(name: &str, props: &[&str], required: &[&str]) -> Value {
        let p: Map<String, Value> = props
            .iter()
            .map(|k| {
                let ty = if *k == "is_background" {
                    "boolean"
                } else {
                    "string"
                };
                ((*k).to_owned(), json!({"type": ty}))
            })
            .collect();
        json!({"type": "function", "function": {"name": name,
               "parameters": {"type": "object", "properties": p, "required": required}}})
    }

    /// Copilot CLI's tools (names and parameters from its 1.0.102 bundle).
    fn copilot_tools() -> Value {
        json!([
            decl(
                "bash",
                &["command", "description", "mode", "initial_wait"],
                &["command"]
            ),
            decl("view", &["path", "view_range"], &["path"]),
            decl("create", &["path", "file_text"], &["path", "file_text"]),
            decl(
                "edit",
                &["path", "old_str", "new_str"],
                &["path", "old_str", "new_str"]
            ),
        ])
    }

    /// Qwen Code's tools.
    fn qwen_tools() -> Value {
        json!([
            decl(
                "read_file",
                &["file_path", "offset", "limit"],
                &["file_path"]
            ),
            decl(
                "write_file",
                &["file_path", "content"],
                &["file_path", "content"]
            ),
            decl(
                "edit",
                &["file_path", "old_string", "new_string"],
                &["file_path", "old_string", "new_string"]
            ),
            decl(
                "run_shell_command",
                &["command", "description", "is_background"],
                &["command", "is_background"]
            ),
        ])
    }

    /// pi's tools (0.73.1: `edit` takes a list of replacements).
    fn pi_tools() -> Value {
        json!([
            decl("read", &["path", "offset", "limit"], &["path"]),
            decl("bash", &["command", "timeout"], &["command"]),
            decl("edit", &["path", "edits"], &["path", "edits"]),
            decl("write", &["path", "content"], &["path", "content"]),
        ])
    }

    /// opencode's tools (1.18.33: `filePath`).
    fn opencode_tools() -> Value {
        json!([
            decl(
                "bash",
                &["command", "timeout", "workdir", "description"],
                &["command", "description"]
            ),
            decl(
                "edit",
                &["filePath", "oldString", "newString", "replaceAll"],
                &["filePath", "oldString", "newString"]
            ),
            decl("glob", &["pattern", "path"], &["pattern"]),
            decl("read", &["filePath", "offset", "limit"], &["filePath"]),
            decl("write", &["content", "filePath"], &["content", "filePath"]),
        ])
    }

    fn tool_d(op: Op) -> Decision {
        Decision {
            action: Action::Tool {
                tag: "t1".into(),
                op,
            },
            usage: DEFAULT_USAGE,
        }
    }

    /// The data lines of a chunk stream, `[DONE]` as a string.
    fn chunks(body: &[u8]) -> Vec<Value> {
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
        text.split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                let d = e
                    .strip_prefix("data: ")
                    .expect("every event is a data line");
                serde_json::from_str(d).unwrap_or_else(|_| json!(d))
            })
            .collect()
    }

    /// Reassembles tool calls from the deltas as a client does.
    fn calls_from(chunks: &[Value]) -> Vec<(String, Value)> {
        let mut calls: Vec<(String, String)> = Vec::new();
        for c in chunks {
            for tc in c["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let i = tc["index"].as_u64().unwrap() as usize;
                if calls.len() <= i {
                    calls.push((String::new(), String::new()));
                }
                if let Some(n) = tc["function"]["name"].as_str() {
                    calls[i].0.push_str(n);
                }
                if let Some(a) = tc["function"]["arguments"].as_str() {
                    calls[i].1.push_str(a);
                }
            }
        }
        calls
            .into_iter()
            .map(|(n, a)| (n, serde_json::from_str(&a).unwrap()))
            .collect()
    }

    #[test]
    fn parallel_reads_stream_one_call_each_with_the_agents_path_key() {
        let ws = PathBuf::from("/w");
        let d = tool_d(Op::Read(vec!["p/f.txt".into(), "q/f.txt".into()]));
        for (tools, name, key) in [
            (copilot_tools(), "view", "path"),
            (qwen_tools(), "read_file", "file_path"),
        ] {
            let body = json!({"stream": true, "model": "m", "tools": tools, "messages": []});
            let r = chat_reply(&body, &d, place(&ws), &mut counter());
            assert_eq!(
                (r.content_type, r.action.as_str()),
                ("text/event-stream", "tool")
            );
            let ch = chunks(&r.body);
            assert_eq!(ch[0]["choices"][0]["delta"]["role"], "assistant");
            assert!(
                ch.iter()
                    .all(|c| c == "[DONE]" || c["object"] == "chat.completion.chunk")
            );
            assert_eq!(
                calls_from(&ch),
                vec![
                    (name.to_owned(), json!({key: "/w/p/f.txt"})),
                    (name.to_owned(), json!({key: "/w/q/f.txt"}))
                ]
            );
            let fin: Vec<&Value> = ch
                .iter()
                .filter(|c| !c["choices"][0]["finish_reason"].is_null() && c != &&json!("[DONE]"))
                .collect();
            assert_eq!(fin.len(), 1);
            assert_eq!(fin[0]["choices"][0]["finish_reason"], "tool_calls");
            // include_usage: the last chunk before [DONE] has no choices and the usage.
            let usage = &ch[ch.len() - 2];
            assert_eq!(usage["choices"], json!([]));
            assert_eq!(usage["usage"]["prompt_tokens"], DEFAULT_USAGE);
        }
    }

    #[rstest::rstest]
    #[case::copilot_write(copilot_tools(), Op::Write("n/a.txt".into()), "create",
        json!({"path": "/w/n/a.txt", "file_text": WRITE_CONTENT}))]
    #[case::qwen_write(qwen_tools(), Op::Write("n/a.txt".into()), "write_file",
        json!({"file_path": "/w/n/a.txt", "content": WRITE_CONTENT}))]
    #[case::copilot_edit(copilot_tools(), Op::Edit("e/f.txt".into()), "edit",
        json!({"path": "/w/e/f.txt", "old_str": EDIT_BEFORE, "new_str": EDIT_AFTER}))]
    #[case::qwen_edit(qwen_tools(), Op::Edit("e/f.txt".into()), "edit",
        json!({"file_path": "/w/e/f.txt", "old_string": EDIT_BEFORE, "new_string": EDIT_AFTER}))]
    #[case::copilot_shell(copilot_tools(), Op::Shell("cd s3 && cat f.txt".into()), "bash",
        json!({"command": "cd s3 && cat f.txt", "description": "e2e scripted shell call", "mode": "sync"}))]
    #[case::qwen_shell(qwen_tools(), Op::Shell("cat s1/f.txt".into()), "run_shell_command",
        json!({"command": "cat s1/f.txt", "description": "e2e scripted shell call", "is_background": false}))]
    #[case::pi_read(pi_tools(), Op::Read(vec!["a/f.txt".into()]), "read",
        json!({"path": "/w/a/f.txt"}))]
    #[case::pi_write(pi_tools(), Op::Write("w/n.txt".into()), "write",
        json!({"path": "/w/w/n.txt", "content": WRITE_CONTENT}))]
    #[case::pi_edit(pi_tools(), Op::Edit("e/f.txt".into()), "edit",
        json!({"path": "/w/e/f.txt", "edits": [{"oldText": EDIT_BEFORE, "newText": EDIT_AFTER}]}))]
    #[case::opencode_read(opencode_tools(), Op::Read(vec!["a/f.txt".into()]), "read",
        json!({"filePath": "/w/a/f.txt"}))]
    #[case::opencode_write(opencode_tools(), Op::Write("w/n.txt".into()), "write",
        json!({"filePath": "/w/w/n.txt", "content": WRITE_CONTENT}))]
    #[case::opencode_edit(opencode_tools(), Op::Edit("e/f.txt".into()), "edit",
        json!({"filePath": "/w/e/f.txt", "oldString": EDIT_BEFORE, "newString": EDIT_AFTER}))]
    #[case::opencode_shell(opencode_tools(), Op::Shell("cat s1/f.txt".into()), "bash",
        json!({"command": "cat s1/f.txt", "description": "e2e scripted shell call"}))]
    fn each_op_uses_the_offered_tool_and_its_schema(
        #[case] tools: Value,
        #[case] op: Op,
        #[case] name: &str,
        #[case] args: Value,
    ) {
        let ws = PathBuf::from("/w");
        let body = json!({"tools": tools, "messages": []});
        let r = chat_reply(&body, &tool_d(op), place(&ws), &mut counter());
        // Not streamed: one JSON completion.
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        let tc = &v["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(tc["function"]["name"], name);
        let got: Value =
            serde_json::from_str(tc["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(got, args);
        assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    }

    #[test]
    fn a_missing_tool_is_said_in_text() {
        let ws = PathBuf::from("/w");
        let body =
            json!({"stream": true, "tools": [decl("view", &["path"], &["path"])], "messages": []});
        let r = chat_reply(
            &body,
            &tool_d(Op::Write("x".into())),
            place(&ws),
            &mut counter(),
        );
        assert_eq!(r.action, "no-tool");
        let ch = chunks(&r.body);
        let text: String = ch
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert!(text.contains("mock: no view/read_file"), "{text}");
        assert!(calls_from(&ch).is_empty());
    }

    /// Copilot's history after a `view`: the tool result, its nested
    /// instructions reminder and the preToolUse context as user messages.
    fn copilot_after_view() -> Value {
        json!({"messages": [
            {"role": "system", "content": "You are the GitHub Copilot CLI [p:sys]"},
            {"role": "user", "content": "session start context"},
            {"role": "user", "content": "<current_datetime>x</current_datetime>\n\nRead [p:t1] [mock:read=a] [mock:edit=a]"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "view", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "file text"},
            {"role": "user", "content": "\n<system_reminder>\nCustom instructions from a/AGENTS.md.\n</system_reminder>"},
            {"role": "user", "content": "Additional context from preToolUse hook:\nctx"}]})
    }

    #[test]
    fn user_messages_after_a_tool_result_do_not_start_a_turn() {
        let body = copilot_after_view();
        let items = chat_items(&body);
        assert_eq!(items.len(), 6, "system text is no item: {items:?}");
        let done = Mutex::new(HashSet::new());
        let d = chat_decision(&body, script::decide(&items, true, &done));
        assert_eq!(
            d.action,
            Action::Tool {
                tag: "t1".into(),
                op: Op::Edit("a".into())
            }
        );
    }

    #[test]
    fn copilot_compaction_is_a_summary_and_qwen_memory_extraction_is_plain() {
        let done = Mutex::new(HashSet::new());
        let mut body = copilot_after_view();
        body["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "user", "content": "Please compact. [sic: no known phrase]"}));
        body["tool_choice"] = json!("none");
        let d = chat_decision(&body, script::decide(&chat_items(&body), true, &done));
        assert_eq!(d.action, Action::Summary);

        // Qwen's side agent: the turn was answered, then an untagged ask.
        let qwen = json!({"tools": qwen_tools(), "messages": [
            {"role": "system", "content": "You are now acting as the managed memory extraction subagent"},
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                         {"type": "text", "text": "Hello [p:t1] [mock:read=a]"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "read_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r"}]},
            {"role": "assistant", "content": "MOCK-FINAL t1: done."},
            {"role": "user", "content": "Extract memories now."}]});
        let items = chat_items(&qwen);
        assert_eq!(
            script::decide(&items, true, &done).action,
            Action::Final { tag: "t1".into() }
        );
        assert_eq!(
            chat_decision(&qwen, script::decide(&items, true, &done)).action,
            Action::Plain
        );
        // A tagged prompt last, even with tool_choice none, is a turn.
        let mut turn = qwen.clone();
        turn["tool_choice"] = json!("none");
        turn["messages"][5] = json!({"role": "user", "content": "Next [p:t2] [mock:text]"});
        let d = chat_decision(&turn, script::decide(&chat_items(&turn), true, &done));
        assert_eq!(d.action, Action::Final { tag: "t2".into() });
    }

    #[test]
    fn qwen_compress_prompt_is_a_summary_request() {
        let done = Mutex::new(HashSet::new());
        let body = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi [p:t1] [mock:text]"}]},
            {"role": "assistant", "content": "MOCK-FINAL t1: done."},
            {"role": "user", "content": [{"type": "text", "text":
                "You are the component that summarizes a conversation when its context window is about to overflow."}]}]});
        let d = chat_decision(&body, script::decide(&chat_items(&body), true, &done));
        assert_eq!(d.action, Action::Summary);
        let r = chat_reply(&body, &d, place(Path::new("/w")), &mut counter());
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert!(
            v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap()
                .contains("<summary>")
        );
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
    }
}
