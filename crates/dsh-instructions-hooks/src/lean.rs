//! Reading only what the adapter needs from an event (R-HOOK-9): Gemini
//! CLI's `BeforeModel` stdin carries the whole text history of the session
//! and grows with it, and Claude Code's `PostToolUse` carries the tool's
//! whole output. The event is parsed in one streaming pass that keeps the
//! fields [`crate::event`] reads and, of `llm_request.messages`, only the
//! messages up to the first user message; everything else is skipped
//! without being built.

use std::fmt;

use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The fields of an event the adapter reads.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LeanEvent {
    hook_event_name: Option<Value>,
    /// Copilot CLI's camelCase events say `sessionId`, `toolName` and
    /// `toolArgs`: read into the names [`crate::event`] reads.
    #[serde(alias = "sessionId")]
    session_id: Option<Value>,
    cwd: Option<Value>,
    source: Option<Value>,
    #[serde(alias = "toolName")]
    tool_name: Option<Value>,
    #[serde(alias = "toolArgs")]
    tool_input: Option<Value>,
    /// Gemini CLI `BeforeModel`.
    pub llm_request: Option<LeanRequest>,
}

/// `llm_request` of Gemini CLI's `BeforeModel` (its `LLMRequest`): only
/// the leading messages up to and including the first user message.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LeanRequest {
    /// Messages `0..=i`, `i` the first with `role: "user"`.
    #[serde(default)]
    pub messages: Leading,
}

/// The messages up to the first user message.
#[derive(Debug, Default)]
pub(crate) struct Leading(pub Vec<Value>);

impl<'de> Deserialize<'de> for Leading {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Leading;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of messages")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Leading, A::Error> {
                let mut out = Vec::new();
                while let Some(m) = seq.next_element::<Value>()? {
                    let user = m.get("role").and_then(Value::as_str) == Some("user");
                    out.push(m);
                    if user {
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        break;
                    }
                }
                Ok(Leading(out))
            }
        }
        d.deserialize_seq(V)
    }
}

impl LeanEvent {
    /// Names the event `name` when its stdin names none (Copilot CLI's
    /// camelCase events: the installed command line says which it is,
    /// decision 0065). An event that names itself keeps its own name.
    pub(crate) fn name_if_unnamed(&mut self, name: &str) {
        if self.hook_event_name.is_none() {
            self.hook_event_name = Some(Value::String(name.to_owned()));
        }
    }

    /// The event's fields as the JSON object [`crate::event`] reads.
    pub(crate) fn to_value(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in [
            ("hook_event_name", &self.hook_event_name),
            ("session_id", &self.session_id),
            ("cwd", &self.cwd),
            ("source", &self.source),
            ("tool_name", &self.tool_name),
            ("tool_input", &self.tool_input),
        ] {
            if let Some(v) = v {
                m.insert(k.to_owned(), v.clone());
            }
        }
        Value::Object(m)
    }
}

/// Parses `input` keeping only what the adapter reads.
pub(crate) fn parse(input: &[u8]) -> Result<LeanEvent, serde_json::Error> {
    serde_json::from_slice(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_messages_up_to_the_first_user_message() {
        let v = json!({
            "hook_event_name": "BeforeModel", "session_id": "s", "cwd": "/w",
            "llm_request": {"model": "m", "messages": [
                {"role": "model", "content": "hello"},
                {"role": "user", "content": "first"},
                {"role": "model", "content": "x"},
                {"role": "user", "content": "second"}
            ]},
            "other": [1, 2, 3]
        });
        let e = parse(v.to_string().as_bytes()).expect("parses");
        let m = &e.llm_request.as_ref().expect("request").messages.0;
        assert_eq!(m.len(), 2);
        assert_eq!(m[1]["content"], "first");
        assert_eq!(
            e.to_value(),
            json!({"hook_event_name": "BeforeModel", "session_id": "s", "cwd": "/w"})
        );
    }

    /// A Copilot CLI camelCase event, as recorded: read into the snake_case
    /// fields, named by the command line's `--event`.
    #[test]
    fn copilot_camel_case_reads_as_the_common_fields() {
        let text = include_str!("../tests/fixtures/copilot/hook-stdin.postToolUse-view.json");
        let mut e = parse(text.as_bytes()).expect("parses");
        e.name_if_unnamed("postToolUse");
        assert_eq!(
            e.to_value(),
            json!({"hook_event_name": "postToolUse",
                "session_id": "0ee10845-c111-4d84-966c-d64f9963f017", "cwd": "/WORKSPACE",
                "tool_name": "view", "tool_input": {"path": "/WORKSPACE/sub/file.txt"}})
        );
        // An event that names itself keeps its name.
        let mut named = parse(br#"{"hook_event_name": "Stop"}"#).expect("parses");
        named.name_if_unnamed("postToolUse");
        assert_eq!(named.to_value()["hook_event_name"], "Stop");
    }

    #[test]
    fn not_an_object_is_an_error() {
        assert!(parse(b"[1]").is_err());
        assert!(parse(b"{").is_err());
    }
}
