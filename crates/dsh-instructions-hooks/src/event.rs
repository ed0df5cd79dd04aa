//! One agent hook event, read once from the bytes an agent writes on stdin
//! into its typed form (R-HOOK-1, R-HOOK-3): [`HookEvent`], whose tool
//! events carry the paths they touched.
//!
//! The field names are the ones measured in `../shared/agent-harness/`
//! (`fixtures/<agent>/hook-stdin.*.json`): every event of Claude Code,
//! Codex, Gemini CLI and Qwen Code carries `session_id`, `cwd` and
//! `hook_event_name`; session start adds `source`; post-tool events add
//! `tool_name` and `tool_input`. GitHub Copilot CLI's camelCase events
//! spell them `sessionId`, `toolName` and `toolArgs` and name no event: the
//! installed command line does (`--event`, decision 0065).
//!
//! The bytes are parsed in one streaming pass that keeps only these fields
//! (R-HOOK-9: Gemini CLI's `BeforeModel` stdin carries the whole text
//! history and grows with it, Claude Code's `PostToolUse` the tool's whole
//! output) and, of `llm_request.messages`, only the messages up to the
//! first user message; everything else is skipped without being built.
//! Which arguments of a tool name paths, and how, is the runtime's
//! ([`dsh_instructions_runtime::tool_args`]); which tools an agent has is
//! its tool table's (`crate::tools`).

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_runtime::TouchKind;
#[cfg(test)]
use dsh_instructions_runtime::tool_args::PathArg;
use dsh_instructions_runtime::tool_args::TouchedPath;
use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;

use crate::agent::Agent;
use crate::config::{HookConfig, load_config};
use crate::error::HookError;
use crate::tools::is_patch_tool;
pub use crate::tools::{ToolMap, default_tools, shell_tool};

/// The largest event the adapter reads; a larger one is answered `{}` and
/// logged (docs/hooks.md). Gemini CLI's `BeforeModel` stdin carries the
/// whole text history, so the bound sits far above what its 1M-token window
/// can hold (about 4 MB of text): no session loses its instructions to it.
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// How a session started (`source` of `SessionStart`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartSource {
    /// A new session.
    Startup,
    /// A resumed session (`--resume`, `/resume`).
    Resume,
    /// History was cleared (`/clear`).
    Clear,
    /// After the agent compacted its history (Claude Code, Codex; Qwen
    /// Code fires it without waiting for its answer, decision 0066).
    Compact,
    /// A source this build does not know: handled like a start.
    Other(String),
}

/// What the adapter does with an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Session start (R-HOOK-3).
    Start(StartSource),
    /// A prompt was submitted: a turn's first pre-step.
    Prompt,
    /// Qwen Code's `UserPromptSubmit` with an empty prompt, fired before
    /// every follow-up model call of a turn: handled as a prompt, but its
    /// context is a message of its own that Qwen drops from the history on
    /// resume (measured), so what it delivered is hidden then (decision
    /// 0072).
    FollowUp,
    /// A tool finished: its touched paths.
    Tool {
        /// The agent's tool name.
        name: String,
        /// The paths it touched (as the agent wrote them) and how.
        touched: Vec<TouchedPath>,
    },
    /// A shell tool call (Claude Code and Codex `Bash`, Gemini CLI
    /// `run_shell_command`): its command, forwarded to the runtime's shell
    /// touches (R-DISC-10, contract 1) with the event's cwd as workdir.
    Shell {
        /// The agent's tool name.
        name: String,
        /// The command exactly as the model wrote it.
        command: String,
    },
    /// Gemini CLI's advisory `PreCompress`.
    PreCompress,
    /// Copilot CLI's `preCompact`, Qwen Code's `PreCompact`: the history is
    /// about to be compacted and no event after it takes context the model
    /// sees, so the session is marked and the next event gives a complete
    /// baseline (decision 0066). Answers `{}`.
    PreCompact,
    /// Gemini CLI's `BeforeModel`: a main-chat model request (R-HOOK-9).
    Model {
        /// The request's messages up to and including the first user
        /// message (the rest is not read).
        leading: Vec<Value>,
    },
    /// Any other event: no context (R-HOOK-1).
    NoContext,
}

/// A parsed hook event.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEvent {
    /// `hook_event_name`, echoed in the answer.
    pub name: String,
    /// The agent's session id.
    pub session_id: String,
    /// The session cwd (absolute).
    pub cwd: Utf8PathBuf,
    /// What to do.
    pub action: Action,
}

/// Event names per agent for the actions the adapter takes.
fn classify(agent: Agent, name: &str) -> Kind {
    use Agent::{Claude, Codex, Copilot, Gemini, Qwen};
    match (agent, name) {
        (Claude | Codex | Gemini | Qwen, "SessionStart") | (Copilot, "sessionStart") => Kind::Start,
        (Claude | Codex | Qwen, "UserPromptSubmit")
        | (Gemini, "BeforeAgent")
        | (Copilot, "userPromptSubmitted") => Kind::Prompt,
        (Claude | Codex | Qwen, "PostToolUse")
        | (Gemini, "AfterTool")
        | (Copilot, "postToolUse") => Kind::Tool,
        (Gemini, "PreCompress") => Kind::PreCompress,
        (Copilot, "preCompact") | (Qwen, "PreCompact") => Kind::PreCompact,
        (Gemini, "BeforeModel") => Kind::Model,
        _ => Kind::Other,
    }
}

enum Kind {
    Start,
    Prompt,
    Tool,
    PreCompress,
    PreCompact,
    Model,
    Other,
}

/// The fields of an event the adapter reads, as the one streaming pass
/// keeps them (see the module's doc).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Wire {
    hook_event_name: Option<Value>,
    #[serde(alias = "sessionId")]
    session_id: Option<Value>,
    cwd: Option<Value>,
    source: Option<Value>,
    /// Only whether it is empty (Qwen Code's follow-up firings).
    prompt: Option<Emptiness>,
    #[serde(alias = "toolName")]
    tool_name: Option<Value>,
    #[serde(alias = "toolArgs")]
    tool_input: Option<Value>,
    /// Gemini CLI `BeforeModel`.
    llm_request: Option<LeanRequest>,
}

/// Whether a string is empty, read without keeping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Emptiness(bool);

impl<'de> Deserialize<'de> for Emptiness {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Anything but a string is no empty prompt: read past it.
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Emptiness;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a prompt")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Emptiness, E> {
                Ok(Emptiness(v.is_empty()))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Emptiness, E> {
                Ok(Emptiness(false))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Emptiness, E> {
                Ok(Emptiness(false))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Emptiness, E> {
                Ok(Emptiness(false))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Emptiness, E> {
                Ok(Emptiness(false))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Emptiness, E> {
                Ok(Emptiness(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Emptiness, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Emptiness(false))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Emptiness, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Emptiness(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// `llm_request` of Gemini CLI's `BeforeModel` (its `LLMRequest`): only
/// the leading messages up to and including the first user message.
#[derive(Debug, Default, Deserialize)]
struct LeanRequest {
    /// Messages `0..=i`, `i` the first with `role: "user"`.
    #[serde(default)]
    messages: Leading,
}

/// The messages up to the first user message.
#[derive(Debug, Default)]
struct Leading(Vec<Value>);

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

/// What the bytes of one event are.
#[derive(Debug)]
pub(crate) enum Read {
    /// Larger than [`MAX_EVENT_BYTES`]: not read.
    Oversized,
    /// Not a JSON object of an event.
    NotEvent(HookError),
    /// An event's fields, not yet read with its agent's tool map.
    Event(Box<Wire>),
}

impl Read {
    /// Reads one event's bytes in the one streaming pass; `name` names an
    /// event whose stdin names none (Copilot CLI's camelCase events: the
    /// installed command line says which it is, decision 0065). An event
    /// that names itself keeps its own name.
    pub(crate) fn bytes(input: &[u8], name: Option<&str>) -> Self {
        if input.len() > MAX_EVENT_BYTES {
            return Self::Oversized;
        }
        let object = input
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b == b'{');
        if !object {
            return Self::NotEvent(HookError::NotJson {
                reason: "not an object".into(),
            });
        }
        match serde_json::from_slice::<Wire>(input) {
            Ok(mut wire) => {
                if let (Some(name), None) = (name, &wire.hook_event_name) {
                    wire.hook_event_name = Some(Value::String(name.to_owned()));
                }
                Self::Event(Box::new(wire))
            }
            Err(e) => Self::NotEvent(HookError::NotJson {
                reason: e.to_string(),
            }),
        }
    }

    /// `hook_event_name`, for the answer and the log, before the event is
    /// read with its tool map (`-` unless it is a plain short name, so the
    /// log stays one clean line).
    pub(crate) fn event_name(&self) -> &str {
        let Self::Event(wire) = self else {
            return "-";
        };
        wire.hook_event_name
            .as_ref()
            .and_then(Value::as_str)
            .filter(|n| n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric()))
            .unwrap_or("-")
    }
}

/// What one event's bytes came to, read once with its agent's
/// configuration ([`read`]).
#[derive(Debug)]
pub(crate) enum Got {
    /// Larger than [`MAX_EVENT_BYTES`]: not read.
    Oversized,
    /// The event, with the configuration it was read with.
    Event(Box<(HookConfig, HookEvent)>),
}

/// Reads one event of `agent` once, from its bytes to its typed form:
/// the one streaming pass, then the agent's configuration from `dir`
/// (`$DSH_HOME/hooks/<agent>/`, `None` when the DSH home cannot be
/// resolved) and the event's tool call read with its tool map. Returns the
/// event's name for the answer and the log ([`Read::event_name`]) beside
/// what the bytes came to; `name` names an event whose stdin names none.
pub(crate) fn read(
    input: &[u8],
    name: Option<&str>,
    agent: Agent,
    dir: Option<&Utf8Path>,
) -> (String, Result<Got, HookError>) {
    let read = Read::bytes(input, name);
    let event_name = read.event_name().to_owned();
    let got = match (dir, read) {
        (None, _) => Err(HookError::NoHome),
        (Some(_), Read::Oversized) => Ok(Got::Oversized),
        (Some(_), Read::NotEvent(e)) => Err(e),
        (Some(dir), Read::Event(wire)) => load_config(agent, dir).and_then(|config| {
            let event = wire.typed(agent, &config.tools)?;
            Ok(Got::Event(Box::new((config, event))))
        }),
    };
    (event_name, got)
}

/// A required text field: present, a string, not blank.
fn text(v: Option<Value>, field: &'static str) -> Result<String, HookError> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        _ => Err(HookError::MissingField { field }),
    }
}

impl Wire {
    /// The typed event of `agent`, its tool calls read with `tools`
    /// (R-HOOK-1: anything unusable is an error the caller turns into
    /// `{}`). The fields move into it; nothing is parsed again.
    ///
    /// # Errors
    /// A missing field or a relative cwd.
    pub(crate) fn typed(self, agent: Agent, tools: &ToolMap) -> Result<HookEvent, HookError> {
        let name = text(self.hook_event_name, "hook_event_name")?;
        let session_id = text(self.session_id, "session_id")?;
        let cwd = text(self.cwd, "cwd")?;
        if !cwd.starts_with('/') {
            return Err(HookError::RelativeCwd { cwd });
        }
        let cwd = Utf8PathBuf::from(cwd);
        let action = match classify(agent, &name) {
            Kind::Start => Action::Start(
                match self
                    .source
                    .as_ref()
                    .and_then(Value::as_str)
                    .unwrap_or("startup")
                {
                    // Copilot CLI says `new`.
                    "startup" | "new" => StartSource::Startup,
                    "resume" => StartSource::Resume,
                    "clear" => StartSource::Clear,
                    "compact" => StartSource::Compact,
                    other => StartSource::Other(other.to_owned()),
                },
            ),
            Kind::Prompt if agent == Agent::Qwen && self.prompt == Some(Emptiness(true)) => {
                Action::FollowUp
            }
            Kind::Prompt => Action::Prompt,
            Kind::PreCompress => Action::PreCompress,
            Kind::PreCompact => Action::PreCompact,
            Kind::Model => Action::Model {
                leading: self.llm_request.map(|r| r.messages.0).unwrap_or_default(),
            },
            Kind::Other => Action::NoContext,
            Kind::Tool => tool_action(agent, self.tool_name, self.tool_input, tools),
        };
        Ok(HookEvent {
            name,
            session_id,
            cwd,
            action,
        })
    }
}

/// A tool call's action: a shell command, the paths it touched, or none.
fn tool_action(agent: Agent, tool: Option<Value>, input: Option<Value>, tools: &ToolMap) -> Action {
    let tool = match tool {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let input = input.unwrap_or(Value::Null);
    if tool == shell_tool(agent)
        && let Some(command) = input.get("command").and_then(Value::as_str)
    {
        return Action::Shell {
            name: tool,
            command: command.to_owned(),
        };
    }
    let touched = touched_paths(agent, &tool, &input, tools);
    if touched.is_empty() {
        Action::NoContext
    } else {
        Action::Tool {
            name: tool,
            touched,
        }
    }
}

impl HookEvent {
    /// Reads one event of `agent` from its stdin bytes, its tool calls
    /// with `tools` (R-HOOK-1: anything unusable is an error the adapter
    /// turns into `{}`).
    ///
    /// # Errors
    /// [`HookError::NotJson`] for bytes that are no JSON object,
    /// [`HookError::MissingField`], [`HookError::RelativeCwd`].
    ///
    /// ```
    /// use dsh_instructions_hooks::{Agent, event::{Action, HookEvent, default_tools}};
    /// let stdin = br#"{"session_id":"s1","cwd":"/work/repo","hook_event_name":"PostToolUse",
    ///   "tool_name":"Read","tool_input":{"file_path":"/work/repo/pkg/a.ts"}}"#;
    /// let event = HookEvent::parse(Agent::Claude, stdin, &default_tools(Agent::Claude))?;
    /// let Action::Tool { touched, .. } = event.action else { panic!() };
    /// assert_eq!(touched[0].path, "/work/repo/pkg/a.ts");
    /// # Ok::<(), dsh_instructions_hooks::HookError>(())
    /// ```
    pub fn parse(agent: Agent, input: &[u8], tools: &ToolMap) -> Result<Self, HookError> {
        match Read::bytes(input, None) {
            Read::Event(wire) => wire.typed(agent, tools),
            Read::NotEvent(e) => Err(e),
            Read::Oversized => Err(HookError::NotJson {
                reason: format!("larger than {MAX_EVENT_BYTES} bytes"),
            }),
        }
    }
}

/// The paths a tool call touched: the configured arguments of the tool
/// ([`dsh_instructions_runtime::tool_args::PathArg::paths`]), and for Codex the files an `apply_patch` adds,
/// updates, deletes or moves to.
pub(crate) fn touched_paths(
    agent: Agent,
    tool: &str,
    input: &Value,
    tools: &ToolMap,
) -> Vec<TouchedPath> {
    let mut out = Vec::new();
    if is_patch_tool(agent, tool) {
        collect_patch_paths(input, &mut out);
    }
    for arg in tools.get(tool).map(Vec::as_slice).unwrap_or_default() {
        arg.paths(input, &mut out);
    }
    out
}

/// Codex `apply_patch`: file headers in any string of the input.
fn collect_patch_paths(input: &Value, out: &mut Vec<TouchedPath>) {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    match input {
        Value::String(s) => {
            for line in s.lines() {
                let line = line.trim_start();
                if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
                    let path = path.trim();
                    if !path.is_empty() {
                        out.push(TouchedPath {
                            path: path.to_owned(),
                            kind: TouchKind::Write,
                        });
                    }
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_patch_paths(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_patch_paths(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn parse(agent: Agent, v: &Value) -> Result<HookEvent, HookError> {
        HookEvent::parse(agent, v.to_string().as_bytes(), &default_tools(agent))
    }

    fn base(name: &str) -> Value {
        json!({"session_id": "s", "cwd": "/w", "hook_event_name": name})
    }

    #[rstest]
    #[case::claude_start(
        Agent::Claude,
        "SessionStart",
        Some("compact"),
        Action::Start(StartSource::Compact)
    )]
    #[case::claude_resume(
        Agent::Claude,
        "SessionStart",
        Some("resume"),
        Action::Start(StartSource::Resume)
    )]
    #[case::claude_prompt(Agent::Claude, "UserPromptSubmit", None, Action::Prompt)]
    #[case::codex_prompt(Agent::Codex, "UserPromptSubmit", None, Action::Prompt)]
    #[case::gemini_prompt(Agent::Gemini, "BeforeAgent", None, Action::Prompt)]
    #[case::gemini_precompress(Agent::Gemini, "PreCompress", None, Action::PreCompress)]
    #[case::gemini_before_model(Agent::Gemini, "BeforeModel", None, Action::Model { leading: Vec::new() })]
    #[case::claude_before_model(Agent::Claude, "BeforeModel", None, Action::NoContext)]
    #[case::claude_stop(Agent::Claude, "Stop", None, Action::NoContext)]
    #[case::claude_precompact(Agent::Claude, "PreCompact", None, Action::NoContext)]
    #[case::gemini_before_tool(Agent::Gemini, "BeforeTool", None, Action::NoContext)]
    #[case::claude_name_of_gemini(Agent::Claude, "BeforeAgent", None, Action::NoContext)]
    #[case::unknown_source(Agent::Codex, "SessionStart", Some("later"), Action::Start(StartSource::Other("later".into())))]
    fn events_map_to_actions(
        #[case] agent: Agent,
        #[case] name: &str,
        #[case] source: Option<&str>,
        #[case] want: Action,
    ) {
        let mut v = base(name);
        if let Some(s) = source {
            v["source"] = json!(s);
        }
        assert_eq!(parse(agent, &v).expect("parses").action, want);
    }

    #[rstest]
    #[case::not_json(b"{".as_slice())]
    #[case::array(b"[]".as_slice())]
    #[case::no_session(br#"{"cwd":"/w","hook_event_name":"Stop"}"#.as_slice())]
    #[case::blank_session(br#"{"session_id":" ","cwd":"/w","hook_event_name":"Stop"}"#.as_slice())]
    #[case::relative_cwd(br#"{"session_id":"s","cwd":"w","hook_event_name":"Stop"}"#.as_slice())]
    #[case::cwd_number(br#"{"session_id":"s","cwd":5,"hook_event_name":"Stop"}"#.as_slice())]
    fn bad_input_is_an_error(#[case] input: &[u8]) {
        assert!(HookEvent::parse(Agent::Claude, input, &default_tools(Agent::Claude)).is_err());
    }

    fn tool(agent: Agent, name: &str, input: Value) -> Vec<TouchedPath> {
        let mut v = base(if agent == Agent::Gemini {
            "AfterTool"
        } else {
            "PostToolUse"
        });
        v["tool_name"] = json!(name);
        v["tool_input"] = input;
        match parse(agent, &v).expect("parses").action {
            Action::Tool { touched, .. } => touched,
            _ => Vec::new(),
        }
    }

    fn t(path: &str, kind: TouchKind) -> TouchedPath {
        TouchedPath {
            path: path.into(),
            kind,
        }
    }
    const R: TouchKind = TouchKind::Read;
    const W: TouchKind = TouchKind::Write;
    const S: TouchKind = TouchKind::Search;
    const L: TouchKind = TouchKind::List;

    #[rstest]
    #[case::read(Agent::Claude, "Read", json!({"file_path": "/w/a/b.rs"}), vec![t("/w/a/b.rs", R)])]
    #[case::edit(Agent::Claude, "Edit", json!({"file_path": "a/b.rs"}), vec![t("a/b.rs", W)])]
    #[case::notebook(Agent::Claude, "NotebookEdit", json!({"notebook_path": "n/x.ipynb"}), vec![t("n/x.ipynb", W)])]
    #[case::grep_dir(Agent::Claude, "Grep", json!({"pattern": "x", "path": "/w/src/"}), vec![t("/w/src", S)])]
    #[case::ls(Agent::Claude, "LS", json!({"path": "/w/src"}), vec![t("/w/src", L)])]
    #[case::grep_without_path(Agent::Claude, "Grep", json!({"pattern": "x"}), vec![])]
    #[case::gemini_relative(Agent::Gemini, "read_file", json!({"file_path": "sub/file.txt"}), vec![t("sub/file.txt", R)])]
    #[case::gemini_many(Agent::Gemini, "read_many_files", json!({"paths": ["a/x.md", "src/**/*.ts", "*.md"]}), vec![t("a/x.md", R), t("src", S), t(".", S)])]
    #[case::gemini_list(Agent::Gemini, "list_directory", json!({"dir_path": "/w/pkg"}), vec![t("/w/pkg", L)])]
    #[case::codex_patch(Agent::Codex, "apply_patch", json!({"command": "*** Begin Patch\n*** Add File: x/new.txt\n+hi\n*** Update File: y/old.txt\n*** Move to: z/moved.txt\n*** End Patch\n"}), vec![t("x/new.txt", W), t("y/old.txt", W), t("z/moved.txt", W)])]
    fn tools_touch_their_paths(
        #[case] agent: Agent,
        #[case] name: &str,
        #[case] input: Value,
        #[case] want: Vec<TouchedPath>,
    ) {
        assert_eq!(tool(agent, name, input), want);
    }

    #[test]
    fn a_configured_map_replaces_the_default() {
        let mut tools = ToolMap::new();
        tools.insert("open".into(), vec![PathArg::configured("target")]);
        let mut v = base("PostToolUse");
        v["tool_name"] = json!("open");
        v["tool_input"] = json!({"target": "q/r.txt"});
        let e = HookEvent::parse(Agent::Claude, v.to_string().as_bytes(), &tools).expect("parses");
        assert!(
            matches!(e.action, Action::Tool { ref touched, .. } if touched == &[t("q/r.txt", R)])
        );
        v["tool_name"] = json!("Read");
        v["tool_input"] = json!({"file_path": "q/r.txt"});
        let e = HookEvent::parse(Agent::Claude, v.to_string().as_bytes(), &tools).expect("parses");
        assert_eq!(e.action, Action::NoContext, "Read is no longer configured");
    }
}

/// The recorded payloads of GitHub Copilot CLI 1.0.102 and Qwen Code
/// 0.24.4 (`tests/fixtures/`, verbatim from the agent harness), each read
/// as the event the adapter registered it for.
#[cfg(test)]
mod recorded {
    use super::*;
    use rstest::rstest;

    fn fixture(agent: &str, name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/{agent}/hook-stdin.{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Copilot CLI's camelCase stdin names no event: the command line's
    /// `--event` does (decision 0065), as the adapter puts it in.
    fn copilot(name: &str, event: &str) -> HookEvent {
        let mut v: Value = serde_json::from_slice(&fixture("copilot", name)).expect("json");
        assert!(v.get("hook_event_name").is_none(), "{name} names no event");
        v["hook_event_name"] = Value::String(event.to_owned());
        HookEvent::parse(
            Agent::Copilot,
            v.to_string().as_bytes(),
            &default_tools(Agent::Copilot),
        )
        .expect("parses")
    }

    #[rstest]
    #[case(
        "sessionStart-new",
        "sessionStart",
        Action::Start(StartSource::Startup)
    )]
    #[case(
        "sessionStart-resume",
        "sessionStart",
        Action::Start(StartSource::Resume)
    )]
    #[case("userPromptSubmitted", "userPromptSubmitted", Action::Prompt)]
    #[case("preCompact-auto", "preCompact", Action::PreCompact)]
    #[case("preCompact-manual", "preCompact", Action::PreCompact)]
    #[case("preToolUse-view", "preToolUse", Action::NoContext)]
    #[case("agentStop", "agentStop", Action::NoContext)]
    #[case("sessionEnd", "sessionEnd", Action::NoContext)]
    fn copilot_events_map_to_actions(
        #[case] name: &str,
        #[case] event: &str,
        #[case] want: Action,
    ) {
        let e = copilot(name, event);
        assert_eq!(e.action, want);
        assert_eq!(e.session_id, "0ee10845-c111-4d84-966c-d64f9963f017");
        assert_eq!(e.cwd, "/WORKSPACE");
        assert_eq!(e.name, event);
    }

    /// Decision 0073: Copilot attaches a viewed directory's files itself,
    /// so `view` is no touch; `edit` at the same path is a write there.
    #[test]
    fn copilot_edit_touches_its_path_and_view_does_not() {
        assert_eq!(
            copilot("postToolUse-view", "postToolUse").action,
            Action::NoContext
        );
        let mut v: Value =
            serde_json::from_slice(&fixture("copilot", "postToolUse-view")).expect("json");
        v["toolName"] = "edit".into();
        v["hook_event_name"] = "postToolUse".into();
        let e = HookEvent::parse(
            Agent::Copilot,
            v.to_string().as_bytes(),
            &default_tools(Agent::Copilot),
        )
        .expect("event");
        assert_eq!(
            e.action,
            Action::Tool {
                name: "edit".into(),
                touched: vec![TouchedPath {
                    path: "/WORKSPACE/sub/file.txt".into(),
                    kind: TouchKind::Write,
                }],
            }
        );
    }

    /// Copilot CLI's other tools, in the argument shapes of its 1.0.102
    /// schemas: `grep`/`glob` take `path` or `paths`, `bash` a command.
    #[rstest]
    #[case("create", serde_json::json!({"path": "/w/a/new.txt", "file_text": "x"}), Some(vec![("/w/a/new.txt", TouchKind::Write)]))]
    #[case("edit", serde_json::json!({"path": "a/b.rs", "old_str": "x", "new_str": "y"}), Some(vec![("a/b.rs", TouchKind::Write)]))]
    #[case("grep", serde_json::json!({"pattern": "x", "paths": ["/w/src", "/w/lib/**/*.rs"]}), Some(vec![("/w/src", TouchKind::Search), ("/w/lib", TouchKind::Search)]))]
    #[case("glob", serde_json::json!({"pattern": "*.md", "path": "/w/docs"}), Some(vec![("/w/docs", TouchKind::Search)]))]
    #[case("fetch_copilot_cli_documentation", serde_json::json!({"path": "/w/x"}), None)]
    fn copilot_tools_touch_their_paths(
        #[case] tool: &str,
        #[case] args: Value,
        #[case] want: Option<Vec<(&str, TouchKind)>>,
    ) {
        let v = serde_json::json!({"sessionId": "s", "cwd": "/w", "hook_event_name": "postToolUse",
            "toolName": tool, "toolArgs": args});
        let e = HookEvent::parse(
            Agent::Copilot,
            v.to_string().as_bytes(),
            &default_tools(Agent::Copilot),
        )
        .expect("parses");
        match want {
            Some(want) => {
                let want: Vec<TouchedPath> = want
                    .into_iter()
                    .map(|(p, kind)| TouchedPath {
                        path: p.into(),
                        kind,
                    })
                    .collect();
                assert_eq!(
                    e.action,
                    Action::Tool {
                        name: tool.into(),
                        touched: want
                    }
                );
            }
            None => assert_eq!(e.action, Action::NoContext),
        }
        let bash = serde_json::json!({"sessionId": "s", "cwd": "/w", "hook_event_name": "postToolUse",
            "toolName": "bash", "toolArgs": {"command": "cat a/b"}});
        let e = HookEvent::parse(
            Agent::Copilot,
            bash.to_string().as_bytes(),
            &default_tools(Agent::Copilot),
        )
        .expect("parses");
        assert!(matches!(e.action, Action::Shell { ref command, .. } if command == "cat a/b"));
    }

    fn qwen(name: &str) -> HookEvent {
        HookEvent::parse(
            Agent::Qwen,
            &fixture("qwen", name),
            &default_tools(Agent::Qwen),
        )
        .expect("parses")
    }

    #[rstest]
    #[case("SessionStart-startup", Action::Start(StartSource::Startup))]
    #[case("SessionStart-resume", Action::Start(StartSource::Resume))]
    #[case("SessionStart-compact", Action::Start(StartSource::Compact))]
    #[case("UserPromptSubmit", Action::Prompt)]
    #[case("PreCompact-auto", Action::PreCompact)]
    #[case("PreCompact-manual", Action::PreCompact)]
    #[case("PostCompact-auto", Action::NoContext)]
    #[case("PreToolUse-read_file", Action::NoContext)]
    #[case("PostToolBatch", Action::NoContext)]
    #[case("Stop", Action::NoContext)]
    #[case("InstructionsLoaded", Action::NoContext)]
    fn qwen_events_map_to_actions(#[case] name: &str, #[case] want: Action) {
        let e = qwen(name);
        assert_eq!(e.action, want, "{name}");
        assert_eq!(e.session_id, "ebd60154-88bd-4664-9d8a-c1780aaad1e9");
    }

    #[test]
    fn qwen_read_file_touches_its_path() {
        let e = qwen("PostToolUse-read_file");
        assert_eq!(
            e.action,
            Action::Tool {
                name: "read_file".into(),
                touched: vec![TouchedPath {
                    path: "/WORKSPACE/sub/file.txt".into(),
                    kind: TouchKind::Read,
                }],
            }
        );
    }
}

/// The one streaming pass: what it keeps, what it names, what it refuses.
#[cfg(test)]
mod wire {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn event(agent: Agent, v: &Value) -> HookEvent {
        HookEvent::parse(agent, v.to_string().as_bytes(), &default_tools(agent)).expect("event")
    }

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
        let Action::Model { leading } = event(Agent::Gemini, &v).action else {
            panic!("a model request");
        };
        assert_eq!(leading.len(), 2);
        assert_eq!(leading[1]["content"], "first");
    }

    /// A Copilot CLI camelCase event, as recorded: read into the common
    /// fields, named by the command line's `--event`; an event that names
    /// itself keeps its name.
    #[test]
    fn copilot_camel_case_reads_as_the_common_fields() {
        let text = include_str!("../tests/fixtures/copilot/hook-stdin.postToolUse-view.json");
        let read = Read::bytes(text.as_bytes(), Some("postToolUse"));
        assert_eq!(read.event_name(), "postToolUse");
        let Read::Event(wire) = read else {
            panic!("an event")
        };
        let mut tools = default_tools(Agent::Copilot);
        tools.insert("view".into(), vec![PathArg::configured("path")]);
        let e = wire.typed(Agent::Copilot, &tools).expect("typed");
        assert_eq!(e.session_id, "0ee10845-c111-4d84-966c-d64f9963f017");
        assert_eq!(e.cwd, "/WORKSPACE");
        assert_eq!(
            e.action,
            Action::Tool {
                name: "view".into(),
                touched: vec![TouchedPath {
                    path: "/WORKSPACE/sub/file.txt".into(),
                    kind: TouchKind::Read
                }]
            }
        );
        let named = Read::bytes(br#"{"hook_event_name": "Stop"}"#, Some("postToolUse"));
        assert_eq!(named.event_name(), "Stop");
    }

    #[rstest]
    #[case::array(b"[1]".as_slice())]
    #[case::text(b"not json".as_slice())]
    #[case::empty(b"".as_slice())]
    #[case::torn(b"{\"hook_event_name\": ".as_slice())]
    fn what_is_no_object_is_no_event(#[case] input: &[u8]) {
        let read = Read::bytes(input, None);
        assert!(
            matches!(read, Read::NotEvent(HookError::NotJson { .. })),
            "{read:?}"
        );
        assert_eq!(read.event_name(), "-");
    }

    #[test]
    fn an_oversized_event_is_not_read() {
        let mut input = b"{\"hook_event_name\": \"SessionStart\", \"x\": \"".to_vec();
        input.resize(MAX_EVENT_BYTES + 1, b'a');
        assert!(matches!(Read::bytes(&input, None), Read::Oversized));
    }

    #[rstest]
    #[case::plain(r#"{"hook_event_name": "PostToolUse"}"#, "PostToolUse")]
    #[case::not_plain(r#"{"hook_event_name": "Post Tool\nUse"}"#, "-")]
    #[case::too_long(&format!(r#"{{"hook_event_name": "{}"}}"#, "A".repeat(65)), "-")]
    #[case::missing(r#"{"session_id": "s"}"#, "-")]
    #[case::leading_space("  \n{\"hook_event_name\": \"Stop\"}", "Stop")]
    fn the_event_name_is_plain_or_a_dash(#[case] input: &str, #[case] want: &str) {
        let read = Read::bytes(input.as_bytes(), None);
        assert!(matches!(read, Read::Event(_)), "{read:?}");
        assert_eq!(read.event_name(), want);
    }

    /// Decision 0072: Qwen Code's empty-prompt firing is a follow-up, read
    /// from stdin as any other field (the prompt's text is not kept); any
    /// other prompt, or none, is a prompt.
    #[rstest]
    #[case::empty(json!(""), Action::FollowUp)]
    #[case::text(json!("go on"), Action::Prompt)]
    #[case::null(json!(null), Action::Prompt)]
    #[case::object(json!({"text": ""}), Action::Prompt)]
    #[case::array(json!(["", 1]), Action::Prompt)]
    fn a_qwen_empty_prompt_is_a_follow_up(#[case] prompt: Value, #[case] want: Action) {
        let v = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/w",
            "prompt": prompt, "after": 1});
        assert_eq!(event(Agent::Qwen, &v).action, want);
        // Only Qwen fires it.
        assert_eq!(event(Agent::Claude, &v).action, Action::Prompt);
    }
}
