//! The one table of each agent's tools the hook touches with (R-HOOK-3):
//! the installed `PostToolUse`/`AfterTool` matcher is generated from it
//! (byte for byte what earlier versions wrote, so Codex's trust hashes and
//! the installer's status stay the same), and so is the event parser's
//! tool map ([`default_tools`]).

use std::collections::BTreeMap;

use crate::names::Agent;
use dsh_instructions_runtime::TouchKind;
use dsh_instructions_runtime::tool_args::PathArg;

/// How a call of one agent tool touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolTouch {
    /// Each listed argument holds a path (a string or an array of strings)
    /// touched with `kind`; a glob's literal prefix is a searched directory.
    Paths {
        /// What the tool does at the path.
        kind: TouchKind,
        /// The `tool_input` keys, tried all.
        keys: &'static [&'static str],
    },
    /// Codex `apply_patch`: the files the patch text adds, updates,
    /// deletes or moves to are written.
    Patch,
    /// The agent's shell tool: its `command` is a shell touch (R-DISC-10)
    /// with the event's cwd as workdir.
    Shell,
}

/// One agent tool and how it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentTool {
    /// The tool name as the agent's hook events (and matchers) spell it.
    pub name: &'static str,
    /// What its calls touch.
    pub touch: ToolTouch,
}

const fn paths(kind: TouchKind, keys: &'static [&'static str]) -> ToolTouch {
    ToolTouch::Paths { kind, keys }
}

/// Declares an agent's tool table and the matcher holding exactly its
/// names, in table order, joined by `|` (the agents' matchers are regular
/// expressions over the tool name).
macro_rules! tool_table {
    ($table:ident, $matcher:ident, $first:literal => $first_touch:expr $(, $name:literal => $touch:expr)* $(,)?) => {
        const $table: &[AgentTool] = &[
            AgentTool { name: $first, touch: $first_touch }
            $(, AgentTool { name: $name, touch: $touch })*
        ];
        /// The installed tool matcher: every name of the table.
        pub(crate) const $matcher: &str = concat!($first $(, "|", $name)*);
    };
}

// Claude Code: `Bash` is matched too, for shell touches (contract 1).
tool_table!(CLAUDE_TOOLS, CLAUDE_MATCHER,
    "Read" => paths(TouchKind::Read, &["file_path"]),
    "Write" => paths(TouchKind::Write, &["file_path"]),
    "Edit" => paths(TouchKind::Write, &["file_path"]),
    "MultiEdit" => paths(TouchKind::Write, &["file_path"]),
    "NotebookEdit" => paths(TouchKind::Write, &["notebook_path"]),
    "Grep" => paths(TouchKind::Search, &["path"]),
    "Glob" => paths(TouchKind::Search, &["path"]),
    "LS" => paths(TouchKind::List, &["path"]),
    "Bash" => ToolTouch::Shell,
);

// Codex reports file edits as `apply_patch` (with `Write` and `Edit` as
// matcher aliases); shell commands arrive as `Bash` (harness README).
tool_table!(CODEX_TOOLS, CODEX_MATCHER,
    "apply_patch" => ToolTouch::Patch,
    "Bash" => ToolTouch::Shell,
);

// Gemini CLI.
tool_table!(GEMINI_TOOLS, GEMINI_MATCHER,
    "read_file" => paths(TouchKind::Read, &["file_path", "absolute_path"]),
    "write_file" => paths(TouchKind::Write, &["file_path"]),
    "replace" => paths(TouchKind::Write, &["file_path"]),
    "read_many_files" => paths(TouchKind::Read, &["paths", "include"]),
    "list_directory" => paths(TouchKind::List, &["dir_path", "path"]),
    "run_shell_command" => ToolTouch::Shell,
);

// pi 0.73.1's built-in tools (agents/pi.md); the extension reads them the
// same way (`piTouches` in the Node binding's agents/pi.mts).
tool_table!(PI_TOOLS, PI_MATCHER,
    "read" => paths(TouchKind::Read, &["path"]),
    "write" => paths(TouchKind::Write, &["path"]),
    "edit" => paths(TouchKind::Write, &["path"]),
    "grep" => paths(TouchKind::Search, &["path"]),
    "find" => paths(TouchKind::Search, &["path"]),
    "ls" => paths(TouchKind::List, &["path"]),
    "bash" => ToolTouch::Shell,
);

// opencode 1.18.33's tools (agents/opencode.md); the plugin reads them the
// same way (`opencodeTouches` in agents/opencode.mts).
tool_table!(OPENCODE_TOOLS, OPENCODE_MATCHER,
    "read" => paths(TouchKind::Read, &["filePath"]),
    "write" => paths(TouchKind::Write, &["filePath"]),
    "edit" => paths(TouchKind::Write, &["filePath"]),
    "grep" => paths(TouchKind::Search, &["path"]),
    "glob" => paths(TouchKind::Search, &["path"]),
    "list" => paths(TouchKind::List, &["path"]),
    "apply_patch" => ToolTouch::Patch,
    "bash" => ToolTouch::Shell,
);

// GitHub Copilot CLI: its tools' arguments are camelCase `toolArgs`, read
// as `tool_input` (`crate::event`); `grep` and `glob` take `path` or
// `paths` (read from the 1.0.102 bundle's tool schemas). Copilot's hook
// files have no matcher: this names the tools the parser keeps. `view` is
// no touch: after it Copilot attaches the viewed directories' files itself
// (a message of its own, in the next request only), so a persistent copy of
// ours would put them there twice (decision 0073).
tool_table!(COPILOT_TOOLS, COPILOT_MATCHER,
    "create" => paths(TouchKind::Write, &["path"]),
    "edit" => paths(TouchKind::Write, &["path"]),
    "grep" => paths(TouchKind::Search, &["path", "paths"]),
    "glob" => paths(TouchKind::Search, &["path", "paths"]),
    "bash" => ToolTouch::Shell,
);

// Qwen Code 0.24.4 (its 14 tools, harness README; argument names from its
// bundle's `extractToolFilePaths`).
tool_table!(QWEN_TOOLS, QWEN_MATCHER,
    "read_file" => paths(TouchKind::Read, &["file_path"]),
    "write_file" => paths(TouchKind::Write, &["file_path"]),
    "edit" => paths(TouchKind::Write, &["file_path"]),
    "notebook_edit" => paths(TouchKind::Write, &["notebook_path"]),
    "grep_search" => paths(TouchKind::Search, &["path"]),
    "glob" => paths(TouchKind::Search, &["path"]),
    "run_shell_command" => ToolTouch::Shell,
);

/// Tool name → its path arguments (R-HOOK-3; configurable like R-CFG-8).
pub type ToolMap = BTreeMap<String, Vec<PathArg>>;

/// The built-in tool map of an agent (SPEC R-HOOK-3): the path-bearing
/// tools of its tool table (`crate::tools`). Codex's `apply_patch` and
/// the shell tool are handled apart: their paths are in a patch text or a
/// command.
pub fn default_tools(agent: Agent) -> ToolMap {
    agent_tools(agent)
        .iter()
        .filter_map(|t| match &t.touch {
            ToolTouch::Paths { kind, keys } => Some((
                t.name.to_owned(),
                keys.iter()
                    .map(|k| PathArg {
                        key: (*k).to_owned(),
                        kind: kind.clone(),
                    })
                    .collect(),
            )),
            ToolTouch::Patch | ToolTouch::Shell => None,
        })
        .collect()
}

/// The agent's shell tool, as its hook events name it (harness README:
/// Codex reports `exec_command` as `Bash`): the table's shell entry.
pub fn shell_tool(agent: Agent) -> &'static str {
    agent_tools(agent)
        .iter()
        .find(|t| t.touch == ToolTouch::Shell)
        .map_or("", |t| t.name)
}

/// Whether `tool` is the agent's patch tool (Codex `apply_patch`).
pub(crate) fn is_patch_tool(agent: Agent, tool: &str) -> bool {
    agent_tools(agent)
        .iter()
        .any(|t| t.name == tool && t.touch == ToolTouch::Patch)
}

/// The tools of `agent` the hook is installed for, in matcher order.
pub fn agent_tools(agent: Agent) -> &'static [AgentTool] {
    match agent {
        Agent::Claude => CLAUDE_TOOLS,
        Agent::Codex => CODEX_TOOLS,
        Agent::Gemini => GEMINI_TOOLS,
        Agent::Copilot => COPILOT_TOOLS,
        Agent::Qwen => QWEN_TOOLS,
        Agent::Pi => PI_TOOLS,
        Agent::Opencode => OPENCODE_TOOLS,
    }
}

/// The tool matcher of `agent` (generated from [`agent_tools`]): the one
/// installed, except for Copilot CLI, whose hook files have none.
pub(crate) fn tool_matcher(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude => CLAUDE_MATCHER,
        Agent::Codex => CODEX_MATCHER,
        Agent::Gemini => GEMINI_MATCHER,
        Agent::Copilot => COPILOT_MATCHER,
        Agent::Qwen => QWEN_MATCHER,
        Agent::Pi => PI_MATCHER,
        Agent::Opencode => OPENCODE_MATCHER,
    }
}

/// Whether the installed hooks of `agent` let calls of `tool` reach the
/// hook: `tool` is one of the matcher's alternatives, or the agent has no
/// matcher (Copilot CLI: every call reaches it).
pub fn is_installed_tool(agent: Agent, tool: &str) -> bool {
    let matched = agent.events().iter().any(|e| e.matcher.is_some());
    !matched || tool_matcher(agent).split('|').any(|t| t == tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Action, HookEvent};
    use rstest::rstest;
    use serde_json::json;

    /// The installed matcher and the table hold the same tools, in order,
    /// and every other tool the parser knows (the path map, the shell) is
    /// in the matcher: no tool the parser handles is one the agent never
    /// reports, and none the agent reports is one the parser drops.
    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    #[case(Agent::Copilot)]
    #[case(Agent::Qwen)]
    fn the_matcher_and_the_parser_hold_the_same_tools(#[case] agent: Agent) {
        let names: Vec<&str> = agent_tools(agent).iter().map(|t| t.name).collect();
        let matcher: Vec<&str> = tool_matcher(agent).split('|').collect();
        assert_eq!(matcher, names);
        match agent.events().iter().find_map(|e| e.matcher) {
            Some(tool_event) => {
                assert_eq!(tool_event, tool_matcher(agent), "installed as generated")
            }
            // No matcher: every tool reaches the hook.
            None => {
                assert_eq!(agent, Agent::Copilot);
                assert!(is_installed_tool(agent, "fetch_copilot_cli_documentation"));
            }
        }
        for name in default_tools(agent).keys() {
            assert!(
                is_installed_tool(agent, name),
                "{name} is parsed, never reported"
            );
        }
        assert!(is_installed_tool(agent, shell_tool(agent)));
    }

    /// Every tool of the table, called with its arguments, is an event the
    /// adapter acts on; a tool outside the matcher is none.
    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    #[case(Agent::Copilot)]
    #[case(Agent::Qwen)]
    fn every_table_tool_parses_to_a_touch(#[case] agent: Agent) {
        let event = match agent {
            Agent::Gemini => "AfterTool",
            Agent::Copilot => "postToolUse",
            _ => "PostToolUse",
        };
        let call = |name: &str, input: serde_json::Value| {
            let v = if agent == Agent::Copilot {
                json!({"sessionId": "s", "cwd": "/w", "hook_event_name": event,
                    "toolName": name, "toolArgs": input})
            } else {
                json!({"session_id": "s", "cwd": "/w", "hook_event_name": event,
                    "tool_name": name, "tool_input": input})
            };
            HookEvent::parse(agent, v.to_string().as_bytes(), &default_tools(agent))
                .expect("parses")
                .action
        };
        for tool in agent_tools(agent) {
            let input = match &tool.touch {
                ToolTouch::Paths { keys, .. } => json!({ keys[0]: "a/b" }),
                ToolTouch::Patch => json!({"command": "*** Add File: a/b\n"}),
                ToolTouch::Shell => json!({"command": "cat a/b"}),
            };
            let action = call(tool.name, input);
            assert!(
                matches!(action, Action::Tool { .. } | Action::Shell { .. }),
                "{}: {action:?}",
                tool.name
            );
        }
        assert_eq!(
            call("WebFetch", json!({"file_path": "a/b"})),
            Action::NoContext
        );
    }

    /// The generated matchers are the strings earlier versions installed
    /// (Codex hashes them for trust; a change would re-ask every user).
    #[rstest]
    #[case(
        Agent::Claude,
        "Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|LS|Bash"
    )]
    #[case(Agent::Codex, "apply_patch|Bash")]
    #[case(
        Agent::Gemini,
        "read_file|write_file|replace|read_many_files|list_directory|run_shell_command"
    )]
    #[case(
        Agent::Qwen,
        "read_file|write_file|edit|notebook_edit|grep_search|glob|run_shell_command"
    )]
    fn matchers_are_unchanged(#[case] agent: Agent, #[case] want: &str) {
        assert_eq!(tool_matcher(agent), want);
    }
}
