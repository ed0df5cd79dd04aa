//! The three wire protocols the agents speak, reduced to what the script
//! needs: turn a request body into [`Item`]s, and turn a [`Decision`] into the
//! response bytes (SSE or JSON). Tool calls use whatever tool the request
//! offers: Claude Code `Read`/`Write`/`Edit`; Codex `exec_command` (a shell
//! `cat`, never a touch: R-DISC-9) and `apply_patch` (a freeform "custom" tool
//! or a function, whichever the request lists); Gemini CLI `read_file`,
//! `write_file`, `replace`. Chat Completions (Copilot CLI, Qwen Code) is in
//! `chat.rs`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::script::{Action, Decision, EDIT_AFTER, EDIT_BEFORE, Item, Op, WRITE_CONTENT};

/// Where the agent runs, for building tool arguments.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place<'a> {
    /// The workspace root (scenario paths are relative to it).
    pub workspace: &'a Path,
    /// The agent's working directory (Codex patch paths are relative to it).
    pub cwd: &'a Path,
}

impl Place<'_> {
    pub(crate) fn abs(&self, rel: &str) -> String {
        self.workspace.join(rel).display().to_string()
    }

    /// `rel` as seen from the cwd when the cwd is the workspace or above the
    /// file; otherwise absolute.
    fn seen_from_cwd(&self, rel: &str) -> String {
        let abs = self.workspace.join(rel);
        match abs.strip_prefix(self.cwd) {
            Ok(p) => p.display().to_string(),
            Err(_) => abs.display().to_string(),
        }
    }
}

/// A response ready to send, and what was answered (for the log).
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// `text/event-stream` or `application/json`.
    pub content_type: &'static str,
    /// Response body.
    pub body: Vec<u8>,
    /// The recorded action (`tool`, `final`, `summary`, `plain`, `no-tool`).
    pub action: String,
    /// The answer's content, for the log.
    pub answer: Value,
}

impl Reply {
    /// The answer `resp` as the request asked for it: the event stream
    /// `sse` renders when `stream`, else `resp` as one JSON body.
    pub(crate) fn shaped(
        stream: bool,
        resp: &Value,
        sse: impl FnOnce(&Value) -> String,
        action: String,
        answer: Value,
    ) -> Self {
        let (content_type, body) = if stream {
            ("text/event-stream", sse(resp))
        } else {
            ("application/json", resp.to_string())
        };
        Self {
            content_type,
            body: body.into_bytes(),
            action,
            answer,
        }
    }
}

pub(crate) fn texts_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn sse_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// A scripted tool the request does not offer: answer with text that says so,
/// so the step's assertions fail with a visible reason.
pub(crate) fn missing_tool(decision: &Decision, tool: &str) -> (String, String) {
    (
        "no-tool".to_owned(),
        format!("{} (mock: no {tool} tool offered)", decision.action.text()),
    )
}

// ---------------------------------------------------------------- Anthropic

/// Conversation items of an Anthropic Messages request.
pub(crate) fn anthropic_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    for msg in body["messages"].as_array().into_iter().flatten() {
        match &msg["content"] {
            Value::String(s) => items.push(Item::Text(s.clone())),
            Value::Array(blocks) => {
                for b in blocks {
                    match b["type"].as_str() {
                        Some("text") => {
                            items.push(Item::Text(b["text"].as_str().unwrap_or("").to_owned()));
                        }
                        Some("tool_use") => items.push(Item::ToolCall),
                        Some("tool_result") => items.push(Item::ToolResult),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    items
}

fn tool_names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

/// The answer to an Anthropic Messages request.
pub(crate) fn anthropic_reply(
    body: &Value,
    d: &Decision,
    place: Place<'_>,
    ids: &mut dyn FnMut() -> u64,
) -> Reply {
    let names = tool_names(&body["tools"]);
    let mut action = d.action.name().to_owned();
    let mut content = Vec::new();
    if let Action::Tool { op, .. } = &d.action {
        let calls: Option<Vec<(&str, Value)>> = match op {
            Op::Read(paths) => names.contains(&"Read").then(|| {
                paths
                    .iter()
                    .map(|p| ("Read", json!({"file_path": place.abs(p)})))
                    .collect()
            }),
            Op::Write(p) => names.contains(&"Write").then(|| {
                vec![("Write", json!({"file_path": place.abs(p), "content": WRITE_CONTENT}))]
            }),
            Op::Shell(cmd) => names.contains(&"Bash").then(|| {
                vec![("Bash", json!({"command": cmd, "description": "e2e scripted shell call"}))]
            }),
            Op::Edit(p) => names.contains(&"Edit").then(|| {
                vec![(
                    "Edit",
                    json!({"file_path": place.abs(p), "old_string": EDIT_BEFORE, "new_string": EDIT_AFTER}),
                )]
            }),
        };
        match calls {
            Some(calls) => {
                for (name, input) in calls {
                    content.push(
                        json!({"type": "tool_use", "id": format!("toolu_mock{:04}", ids()),
                                        "name": name, "input": input}),
                    );
                }
            }
            None => {
                let (a, text) = missing_tool(d, "Read/Write/Edit");
                action = a;
                content.push(json!({"type": "text", "text": text}));
            }
        }
    } else {
        content.push(json!({"type": "text", "text": d.action.text()}));
    }
    let stop = if action == "tool" {
        "tool_use"
    } else {
        "end_turn"
    };
    let usage = json!({"input_tokens": d.usage, "output_tokens": 12,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let msg = json!({"id": format!("msg_mock{:04}", ids()), "type": "message", "role": "assistant",
                     "model": body["model"].as_str().unwrap_or("mock"), "content": content,
                     "stop_reason": stop, "stop_sequence": null, "usage": usage});
    let answer = msg["content"].clone();
    let stream = body["stream"].as_bool() == Some(true);
    Reply::shaped(stream, &msg, anthropic_sse, action, answer)
}

/// A complete message as the Anthropic event stream.
pub(crate) fn anthropic_sse(msg: &Value) -> String {
    let mut start = msg.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    let mut out = sse_event(
        "message_start",
        &json!({"type": "message_start", "message": start}),
    );
    for (i, block) in msg["content"].as_array().into_iter().flatten().enumerate() {
        let (first, delta) = if block["type"] == "text" {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        } else {
            let mut b = block.clone();
            b["input"] = json!({});
            (
                b,
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        };
        out += &sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": i, "content_block": first}),
        );
        out += &sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": i, "delta": delta}),
        );
        out += &sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": i}),
        );
    }
    out += &sse_event(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": null},
                "usage": {"output_tokens": msg["usage"]["output_tokens"]}}),
    );
    out += &sse_event("message_stop", &json!({"type": "message_stop"}));
    out
}

// ------------------------------------------------------- OpenAI Responses

/// Conversation items of an OpenAI Responses request.
pub(crate) fn responses_items(body: &Value) -> Vec<Item> {
    if let Some(s) = body["input"].as_str() {
        return vec![Item::Text(s.to_owned())];
    }
    let mut items = Vec::new();
    for it in body["input"].as_array().into_iter().flatten() {
        match it["type"].as_str() {
            Some("message") => items.push(Item::Text(texts_of(&it["content"]))),
            None if it.get("role").is_some() => items.push(Item::Text(texts_of(&it["content"]))),
            Some("function_call" | "custom_tool_call" | "local_shell_call") => {
                items.push(Item::ToolCall);
            }
            Some(t) if t.ends_with("_output") => items.push(Item::ToolResult),
            _ => {}
        }
    }
    items
}

/// How Codex offers a tool: as a function or as a freeform custom tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolKind {
    /// `{"type":"function"}`: JSON arguments.
    Function,
    /// `{"type":"custom"}`: free text input (Codex's freeform `apply_patch`).
    Custom,
}

/// The kind of the tool called `name` in a Responses tool list.
pub(crate) fn responses_tool(tools: &Value, name: &str) -> Option<ToolKind> {
    tools.as_array().into_iter().flatten().find_map(|t| {
        if t["name"].as_str() != Some(name) {
            return None;
        }
        match t["type"].as_str() {
            Some("custom") => Some(ToolKind::Custom),
            _ => Some(ToolKind::Function),
        }
    })
}

/// The command line of a shell op (empty for other ops).
fn shell_line(op: &Op) -> String {
    match op {
        Op::Shell(c) => c.clone(),
        _ => String::new(),
    }
}

/// An `apply_patch` body adding or editing one file.
pub(crate) fn patch_for(op: &Op, path: &str) -> String {
    match op {
        Op::Write(_) => {
            let lines: String = WRITE_CONTENT.lines().map(|l| format!("+{l}\n")).collect();
            format!("*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n")
        }
        _ => format!(
            "*** Begin Patch\n*** Update File: {path}\n@@\n-{EDIT_BEFORE}\n+{EDIT_AFTER}\n*** End Patch\n"
        ),
    }
}

/// The answer to a Responses request (always SSE: Codex streams).
pub(crate) fn responses_reply(
    body: &Value,
    d: &Decision,
    place: Place<'_>,
    ids: &mut dyn FnMut() -> u64,
) -> Reply {
    let tools = &body["tools"];
    let mut action = d.action.name().to_owned();
    let mut output = Vec::new();
    let mut text = None;
    if let Action::Tool { op, .. } = &d.action {
        let n = ids();
        match op {
            Op::Read(_) | Op::Shell(_) => {
                let (cmd, ws) = match op {
                    Op::Read(paths) => (
                        format!("cat {}", paths.join(" ")),
                        place.workspace.display().to_string(),
                    ),
                    // The agent's cwd, as a model's own shell calls would.
                    _ => (shell_line(op), place.cwd.display().to_string()),
                };
                let call = if responses_tool(tools, "exec_command").is_some() {
                    Some(("exec_command", json!({"cmd": cmd, "workdir": ws})))
                } else if responses_tool(tools, "shell_command").is_some() {
                    Some(("shell_command", json!({"command": cmd, "workdir": ws})))
                } else if responses_tool(tools, "shell").is_some() {
                    Some((
                        "shell",
                        json!({"command": ["bash", "-lc", cmd], "workdir": ws}),
                    ))
                } else {
                    None
                };
                match call {
                    Some((name, args)) => output.push(json!({
                        "type": "function_call", "id": format!("fc_mock{n:04}"), "name": name,
                        "arguments": args.to_string(), "call_id": format!("call_mock{n:04}")})),
                    None => {
                        let (a, t) = missing_tool(d, "shell");
                        action = a;
                        text = Some(t);
                    }
                }
            }
            Op::Write(p) | Op::Edit(p) => {
                let patch = patch_for(op, &place.seen_from_cwd(p));
                match responses_tool(tools, "apply_patch") {
                    Some(ToolKind::Custom) => output.push(json!({
                        "type": "custom_tool_call", "id": format!("ctc_mock{n:04}"), "status": "completed",
                        "call_id": format!("call_mock{n:04}"), "name": "apply_patch", "input": patch})),
                    Some(ToolKind::Function) => output.push(json!({
                        "type": "function_call", "id": format!("fc_mock{n:04}"), "name": "apply_patch",
                        "arguments": json!({"input": patch}).to_string(),
                        "call_id": format!("call_mock{n:04}")})),
                    None => {
                        let (a, t) = missing_tool(d, "apply_patch");
                        action = a;
                        text = Some(t);
                    }
                }
            }
        }
    } else {
        text = Some(d.action.text());
    }
    let id = ids();
    if let Some(t) = text {
        output.push(
            json!({"type": "message", "role": "assistant", "id": format!("msg_mock{id:04}"),
                           "status": "completed",
                           "content": [{"type": "output_text", "text": t, "annotations": []}]}),
        );
    }
    let usage = json!({"input_tokens": d.usage, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": d.usage + 12});
    let resp = json!({"id": format!("resp_mock{id:04}"), "object": "response", "status": "completed",
                      "model": body["model"], "output": output, "usage": usage});
    Reply {
        content_type: "text/event-stream",
        body: responses_sse(&resp).into_bytes(),
        action,
        answer: resp["output"].clone(),
    }
}

/// A complete response as the Responses event stream.
pub(crate) fn responses_sse(resp: &Value) -> String {
    let ev = |data: Value| sse_event(data["type"].as_str().unwrap_or("event"), &data);
    let created = json!({"id": resp["id"], "object": "response", "status": "in_progress",
                         "model": resp["model"], "output": []});
    let mut out = ev(json!({"type": "response.created", "response": created}));
    for (i, item) in resp["output"].as_array().into_iter().flatten().enumerate() {
        out += &ev(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        if item["type"] == "message" {
            out += &ev(
                json!({"type": "response.output_text.delta", "output_index": i,
                              "content_index": 0, "item_id": item["id"],
                              "delta": item["content"][0]["text"]}),
            );
        }
        out += &ev(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    out += &ev(json!({"type": "response.completed", "response": resp}));
    out
}

// ------------------------------------------------------------------ Gemini

/// Conversation items of a Gemini request (`contents` only: the system
/// instruction is not conversation).
pub(crate) fn gemini_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    for c in body["contents"].as_array().into_iter().flatten() {
        for p in c["parts"].as_array().into_iter().flatten() {
            if let Some(t) = p.get("text") {
                items.push(Item::Text(t.as_str().unwrap_or("").to_owned()));
            } else if p.get("functionCall").is_some() {
                items.push(Item::ToolCall);
            } else if p.get("functionResponse").is_some() {
                items.push(Item::ToolResult);
            }
        }
    }
    items
}

/// The function declarations a Gemini request offers.
pub(crate) fn gemini_decls(body: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for tools in [&body["tools"], &body["config"]["tools"]] {
        for t in tools.as_array().into_iter().flatten() {
            out.extend(t["functionDeclarations"].as_array().into_iter().flatten());
        }
    }
    out
}

/// Arguments for a Gemini tool from its declared schema: the path goes to the
/// path-like property, `known` fills named ones, and any other required
/// property gets a harmless value so the CLI's validation passes.
fn gemini_args(decl: &Value, path: String, known: &[(&str, Value)]) -> Value {
    let schema = if decl["parametersJsonSchema"].is_object() {
        &decl["parametersJsonSchema"]
    } else {
        &decl["parameters"]
    };
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let path_key = ["file_path", "absolute_path", "path"]
        .into_iter()
        .find(|k| props.contains_key(*k))
        .map_or_else(
            || {
                props
                    .keys()
                    .next()
                    .cloned()
                    .unwrap_or_else(|| "file_path".into())
            },
            str::to_owned,
        );
    let mut args = Map::new();
    args.insert(path_key, Value::String(path));
    for (k, v) in known {
        if props.is_empty() || props.contains_key(*k) {
            args.insert((*k).to_owned(), v.clone());
        }
    }
    for req in schema["required"].as_array().into_iter().flatten() {
        let Some(k) = req.as_str() else { continue };
        if !args.contains_key(k) {
            let ty = props
                .get(k)
                .and_then(|p| p["type"].as_str())
                .unwrap_or("string");
            let v = match ty.to_ascii_lowercase().as_str() {
                "integer" | "number" => json!(1),
                "boolean" => json!(false),
                _ => json!("E2E scripted edit"),
            };
            args.insert(k.to_owned(), v);
        }
    }
    Value::Object(args)
}

/// The answer to a Gemini `generateContent`/`streamGenerateContent` request.
pub(crate) fn gemini_reply(
    body: &Value,
    d: &Decision,
    model: &str,
    stream: bool,
    place: Place<'_>,
) -> Reply {
    let decls = gemini_decls(body);
    let find = |name: &str| decls.iter().copied().find(|x| x["name"] == name);
    let mut action = d.action.name().to_owned();
    let mut parts = Vec::new();
    if let Action::Tool { op, .. } = &d.action {
        let calls: Option<Vec<Value>> = match op {
            // Relative, as the harness measured the model writing it.
            Op::Read(paths) => find("read_file").map(|decl| {
                paths
                    .iter()
                    .map(|p| {
                        json!({"functionCall": {"name": "read_file",
                                                     "args": gemini_args(decl, p.clone(), &[])}})
                    })
                    .collect()
            }),
            Op::Write(p) => find("write_file").map(|decl| {
                vec![
                    json!({"functionCall": {"name": "write_file", "args": gemini_args(
                    decl, place.abs(p), &[("content", json!(WRITE_CONTENT))])}}),
                ]
            }),
            Op::Shell(cmd) => find("run_shell_command").map(|_| {
                vec![json!({"functionCall": {"name": "run_shell_command",
                    "args": {"command": cmd, "description": "e2e scripted shell call"}}})]
            }),
            Op::Edit(p) => find("replace").map(|decl| {
                vec![
                    json!({"functionCall": {"name": "replace", "args": gemini_args(
                    decl, place.abs(p),
                    &[("old_string", json!(EDIT_BEFORE)), ("new_string", json!(EDIT_AFTER)),
                      ("expected_replacements", json!(1))])}}),
                ]
            }),
        };
        match calls {
            Some(c) => parts = c,
            None => {
                let (a, t) = missing_tool(d, "read_file/write_file/replace");
                action = a;
                parts.push(json!({"text": t}));
            }
        }
    } else {
        parts.push(json!({"text": d.action.text()}));
    }
    let resp = json!({"candidates": [{"content": {"role": "model", "parts": parts},
                                      "finishReason": "STOP", "index": 0}],
                      "usageMetadata": {"promptTokenCount": d.usage, "candidatesTokenCount": 12,
                                        "totalTokenCount": d.usage + 12},
                      "modelVersion": model});
    let answer = resp["candidates"][0]["content"]["parts"].clone();
    Reply::shaped(
        stream,
        &resp,
        |r| format!("data: {r}\r\n\r\n"),
        action,
        answer,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2e::script::DEFAULT_USAGE;
    use std::path::PathBuf;

    fn tool(tag: &str, op: Op) -> Decision {
        Decision {
            action: Action::Tool {
                tag: tag.into(),
                op,
            },
            usage: DEFAULT_USAGE,
        }
    }

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

    /// Parses an SSE body into (event name, data) pairs.
    fn events(body: &[u8]) -> Vec<(String, Value)> {
        let text = String::from_utf8(body.to_vec()).unwrap();
        text.split("\n\n")
            .filter(|e| !e.trim().is_empty())
            .map(|e| {
                let mut name = String::new();
                let mut data = Value::Null;
                for line in e.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = n.to_owned();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d.trim_end()).unwrap();
                    }
                }
                (name, data)
            })
            .collect()
    }

    #[test]
    fn anthropic_parallel_reads_are_tool_use_blocks_with_streamed_input() {
        let ws = PathBuf::from("/w");
        let body = json!({"stream": true, "model": "m", "tools": [{"name": "Read"}],
                          "messages": [{"role": "user", "content": "x [p:t1]"}]});
        let r = anthropic_reply(
            &body,
            &tool("t1", Op::Read(vec!["p/f.txt".into(), "q/f.txt".into()])),
            place(&ws),
            &mut counter(),
        );
        assert_eq!(r.action, "tool");
        let ev = events(&r.body);
        let names: Vec<_> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(names.last(), Some(&"message_stop"));
        let inputs: Vec<Value> = ev
            .iter()
            .filter(|(n, d)| n == "content_block_delta" && d["delta"]["type"] == "input_json_delta")
            .map(|(_, d)| {
                serde_json::from_str(d["delta"]["partial_json"].as_str().unwrap()).unwrap()
            })
            .collect();
        assert_eq!(
            inputs,
            vec![
                json!({"file_path": "/w/p/f.txt"}),
                json!({"file_path": "/w/q/f.txt"})
            ]
        );
        let delta = ev.iter().find(|(n, _)| n == "message_delta").unwrap();
        assert_eq!(delta.1["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn anthropic_without_the_tool_says_so_in_text() {
        let ws = PathBuf::from("/w");
        let body = json!({"tools": [{"name": "Read"}], "messages": []});
        let r = anthropic_reply(
            &body,
            &tool("t1", Op::Write("n/a.txt".into())),
            place(&ws),
            &mut counter(),
        );
        assert_eq!(r.action, "no-tool");
        let msg: Value = serde_json::from_slice(&r.body).unwrap();
        assert!(
            msg["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("no Read/Write/Edit tool")
        );
        assert_eq!(msg["stop_reason"], "end_turn");
    }

    #[test]
    fn anthropic_items_follow_block_order() {
        let body = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "a [p:t1]"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "x"}, {"type": "tool_use"}]},
            {"role": "user", "content": [{"type": "tool_result"}, {"type": "text", "text": "ctx"}]}]});
        assert_eq!(
            anthropic_items(&body),
            vec![
                Item::Text("a [p:t1]".into()),
                Item::ToolCall,
                Item::ToolCall,
                Item::ToolResult,
                Item::Text("ctx".into())
            ]
        );
    }

    #[test]
    fn codex_reads_are_one_cat_and_patches_use_the_offered_tool_kind() {
        let ws = PathBuf::from("/w");
        let custom = json!({"model": "m", "tools": [{"type": "function", "name": "exec_command"},
                                                     {"type": "custom", "name": "apply_patch"}]});
        let r = responses_reply(
            &custom,
            &tool("t", Op::Read(vec!["p/f".into(), "q/f".into()])),
            place(&ws),
            &mut counter(),
        );
        let item = &r.answer[0];
        assert_eq!(item["type"], "function_call");
        let args: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args, json!({"cmd": "cat p/f q/f", "workdir": "/w"}));

        let r = responses_reply(
            &custom,
            &tool("t", Op::Write("n/new.txt".into())),
            place(&ws),
            &mut counter(),
        );
        assert_eq!(r.answer[0]["type"], "custom_tool_call");
        let patch = r.answer[0]["input"].as_str().unwrap();
        assert!(patch.starts_with("*** Begin Patch\n*** Add File: n/new.txt\n+E2E-WRITTEN"));
        assert!(patch.ends_with("*** End Patch\n"));

        let func = json!({"tools": [{"type": "function", "name": "apply_patch"}]});
        let r = responses_reply(
            &func,
            &tool("t", Op::Edit("e/f.txt".into())),
            place(&ws),
            &mut counter(),
        );
        assert_eq!(r.answer[0]["type"], "function_call");
        let args: Value = serde_json::from_str(r.answer[0]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(
            args["input"],
            patch_for(&Op::Edit(String::new()), "e/f.txt")
        );

        let none = json!({"tools": [{"type": "function", "name": "exec_command"}]});
        let r = responses_reply(
            &none,
            &tool("t", Op::Edit("e/f.txt".into())),
            place(&ws),
            &mut counter(),
        );
        assert_eq!(r.action, "no-tool");
    }

    #[test]
    fn codex_patch_paths_are_relative_to_the_cwd() {
        let ws = PathBuf::from("/w");
        let cwd = PathBuf::from("/w/a");
        let p = Place {
            workspace: &ws,
            cwd: &cwd,
        };
        assert_eq!(p.seen_from_cwd("a/b.txt"), "b.txt");
        assert_eq!(p.seen_from_cwd("c/d.txt"), "/w/c/d.txt");
    }

    #[test]
    fn responses_stream_brackets_items_and_completes() {
        let ws = PathBuf::from("/w");
        let d = Decision {
            action: Action::Final { tag: "t9".into() },
            usage: 150_000,
        };
        let r = responses_reply(&json!({"model": "m"}), &d, place(&ws), &mut counter());
        let ev = events(&r.body);
        let names: Vec<_> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.added",
                "response.output_text.delta",
                "response.output_item.done",
                "response.completed"
            ]
        );
        assert_eq!(ev[4].1["response"]["usage"]["input_tokens"], 150_000);
        assert!(ev[2].1["delta"].as_str().unwrap().contains("MOCK-FINAL t9"));
    }

    #[test]
    fn responses_items_see_calls_and_outputs() {
        let body = json!({"input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go [p:t1]"}]},
            {"type": "custom_tool_call"}, {"type": "message", "role": "developer", "content": "ctx"},
            {"type": "custom_tool_call_output"}]});
        assert_eq!(
            responses_items(&body),
            vec![
                Item::Text("go [p:t1]".into()),
                Item::ToolCall,
                Item::Text("ctx".into()),
                Item::ToolResult
            ]
        );
    }

    #[test]
    fn gemini_args_follow_the_declared_schema() {
        let ws = PathBuf::from("/w");
        let body = json!({"tools": [{"functionDeclarations": [
            {"name": "read_file", "parametersJsonSchema": {"properties": {"absolute_path": {}}}},
            {"name": "replace", "parametersJsonSchema": {
                "properties": {"file_path": {}, "old_string": {}, "new_string": {}, "instruction": {"type": "string"}},
                "required": ["file_path", "instruction"]}}]}]});
        let r = gemini_reply(
            &body,
            &tool("t", Op::Read(vec!["x/f".into()])),
            "g",
            true,
            place(&ws),
        );
        assert_eq!(
            r.answer[0]["functionCall"]["args"],
            json!({"absolute_path": "x/f"})
        );
        let text = String::from_utf8(r.body).unwrap();
        assert!(text.starts_with("data: {") && text.ends_with("\r\n\r\n"));

        let r = gemini_reply(
            &body,
            &tool("t", Op::Edit("e/f".into())),
            "g",
            false,
            place(&ws),
        );
        assert_eq!(
            r.answer[0]["functionCall"]["args"],
            json!({"file_path": "/w/e/f", "old_string": EDIT_BEFORE, "new_string": EDIT_AFTER,
                          "instruction": "E2E scripted edit"})
        );
        let r = gemini_reply(
            &body,
            &tool("t", Op::Write("n/f".into())),
            "g",
            false,
            place(&ws),
        );
        assert_eq!(r.action, "no-tool");
    }

    #[test]
    fn gemini_items_read_parts() {
        let body = json!({"contents": [
            {"role": "user", "parts": [{"text": "a [p:t1]"}]},
            {"role": "model", "parts": [{"functionCall": {}}, {"functionCall": {}}]},
            {"role": "user", "parts": [{"functionResponse": {}}, {"functionResponse": {}}]}]});
        assert_eq!(gemini_items(&body).len(), 5);
        assert_eq!(gemini_items(&body)[3], Item::ToolResult);
    }
}
