//! The hook's configuration for one agent (R-HOOK-4, R-HOOK-8): the hook
//! preset, and what `$DSH_HOME/hooks/<agent>/config.json` lays over it
//! through the state crate's one overlay ([`ConfigInput::overlay`]).

use camino::Utf8Path;
use dsh_instructions_state::{
    Config, ConfigInput, Preset,
    config::{FallbackScope, NumberInput, RuleFormat},
};
use serde_json::Value;

use crate::agent::{Agent, PARTS};
use crate::error::HookError;
use crate::split::PART_BYTES;
use crate::tools::is_installed_tool;
use crate::tools::{ToolMap, default_tools, shell_tool};
use dsh_instructions_runtime::tool_args::PathArg;

/// Claude Code and Codex keep about 10,000 characters of one context whole
/// (harness README): parts stay below it ([`crate::parts::PART_BYTES`]).
pub const AGENT_CONTEXT_LIMIT: i64 = 10_000;

/// The hook budget for the whole message, every agent (R-HOOK-4).
pub const HOOK_MAX_BYTES: i64 = 65_536;

/// File name of the per-agent configuration overrides.
pub const CONFIG_FILE_NAME: &str = "config.json";

/// The adapter's configuration for one agent (R-HOOK-4): the hook preset,
/// with what `$DSH_HOME/hooks/<agent>/config.json` overrides.
#[derive(Debug, Clone)]
pub struct HookConfig {
    /// The configuration sessions are created with.
    pub input: ConfigInput,
    /// Agent tool → path arguments (R-HOOK-3, configurable like R-CFG-8).
    pub tools: ToolMap,
    /// Warnings about the configuration, for the diagnostic log.
    pub warnings: Vec<String>,
}

/// The hook preset of `agent` (R-HOOK-4, R-HOOK-8): the agent's library
/// preset ([`Agent::library_preset`]) with only the fields set where the
/// hook differs from it, each for the reason its profile writes down
/// ([`crate::agents::AgentProfile::differences`], decision 0051):
///
/// - every agent: 65,536 bytes for the whole message (delivered in parts,
///   [`crate::parts::split`]) and the agent's shell tool read as shell calls;
/// - Claude Code: both overlays (`CLAUDE.local.md`, then ours,
///   `AGENTS.local.md`), and `AGENTS.md` wherever a directory has no
///   `CLAUDE.md` (per directory); its `claude` rules are the library
///   preset's, which the hook takes over from Claude Code (R-RULE-7);
/// - Codex: the default overlays, which Codex itself does not read;
/// - Gemini CLI: the default candidates and overlays — it always loads
///   `GEMINI.md` itself, so the adapter leaves that name to it (decision
///   0012);
/// - GitHub Copilot CLI: Copilot's own candidates, which the hook composes
///   but gives only where Copilot lacks them — nested directories, updates,
///   removals (its chain's are in Copilot's system prompt, decision 0073) —
///   and its `copilot` rules the same way; no user file and no
///   `.claude/rules` (Copilot loads them itself; its loading cannot be
///   switched off from a settings file, decision 0067), the default
///   overlays;
/// - Qwen Code: the default overlays (Qwen's `.qwen/rules` stay Qwen's,
///   decision 0068);
/// - pi: pi's own names (`AGENTS.md`, `AGENTS.MD`, `CLAUDE.md`,
///   `CLAUDE.MD`, first-wins per directory), above the project root too,
///   and its user file, with the default overlays; pi keeps loading its
///   files and its extension leaves out what pi holds (decision 0086);
/// - opencode: its three names (`AGENTS.md`, `CLAUDE.md`, `CONTEXT.md`),
///   first-wins per directory, and the default overlays; its user file
///   stays its own (decision 0086).
///
/// The agent's tools are no `touch_tools` here: the hook reports them as
/// typed touches (`crate::tools`).
///
/// ```
/// use dsh_instructions_hooks::{Agent, config::hook_preset};
/// use dsh_instructions_state::{Preset, config::FallbackScope};
/// let claude = hook_preset(Agent::Claude);
/// assert_eq!(claude.preset, Some(Preset::Claude));
/// let resolved = claude.resolve()?.config;
/// assert!(resolved.imports());
/// assert_eq!(resolved.instruction_file_candidates(), ["CLAUDE.md"]);
/// assert_eq!(resolved.local_instruction_file_candidates(), ["CLAUDE.local.md", "AGENTS.local.md"]);
/// assert_eq!(resolved.fallback_scope(), FallbackScope::Directory);
/// assert_eq!(resolved.user_instruction_files(), ["~/.claude/CLAUDE.md"]);
/// assert_eq!(claude.touch_tools, None);
/// assert_eq!(resolved.rule_formats(), [dsh_instructions_state::config::RuleFormat::Claude]);
/// let codex = hook_preset(Agent::Codex).resolve()?.config;
/// assert!(!codex.imports());
/// assert!(codex.ancestor_instruction_files().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn hook_preset(agent: Agent) -> ConfigInput {
    let names = |n: &[String]| Some(n.to_vec());
    let defaults = Config::preset(Preset::Dsh);
    let shell = shell_tool(agent).to_owned();
    let mut input = ConfigInput {
        preset: Some(agent.library_preset()),
        max_bytes: Some(NumberInput::Int(HOOK_MAX_BYTES)),
        // R-CFG-11: the agent's shell tool's `command` is a shell call; the
        // adapter gives shell touches only while the session's config says
        // so (a `config.json` with `"shell_tools": {}` turns them off).
        shell_tools: Some([(shell, vec!["command".to_owned()])].into_iter().collect()),
        ..ConfigInput::default()
    };
    match agent {
        Agent::Claude => {
            input.local_instruction_file_candidates = Some(
                ["CLAUDE.local.md", "AGENTS.local.md"]
                    .map(String::from)
                    .to_vec(),
            );
            input.fallback_scope = Some(FallbackScope::Directory);
        }
        Agent::Codex => {
            input.local_instruction_file_candidates =
                names(defaults.local_instruction_file_candidates());
        }
        Agent::Gemini => {
            input.instruction_file_candidates = names(defaults.instruction_file_candidates());
            input.local_instruction_file_candidates =
                names(defaults.local_instruction_file_candidates());
        }
        Agent::Copilot => {
            // Copilot CLI's own loading cannot be switched off from its
            // settings (decision 0067): it keeps its user file and both rule
            // formats. Its candidates are composed, so the nested ones reach
            // the model on every touch and the chain's updates and removals
            // are said; the chain's baseline sections, which Copilot holds,
            // are left out of the answer (decision 0073).
            input.user_instruction_files = Some(Vec::new());
            // Copilot's own `copilot` rules are composed like its files:
            // the always-on ones of the chain are left to its system prompt,
            // a path-scoped one comes on every touch Copilot does not attach
            // it on (decision 0073). `.claude/rules` stay Copilot's: how it
            // reads `paths:` there is not measured.
            input.rule_formats = Some(vec![RuleFormat::Copilot.as_str().to_owned()]);
            input.local_instruction_file_candidates =
                names(defaults.local_instruction_file_candidates());
        }
        Agent::Qwen => {
            input.local_instruction_file_candidates =
                names(defaults.local_instruction_file_candidates());
        }
        Agent::Pi => {
            // pi's own selection (agents/pi.md): the first of four names
            // per directory, from the cwd up to `/`, and its user file; pi
            // keeps loading them itself, and the extension leaves out what
            // pi holds (decision 0086).
            let own = PI_NAMES.map(String::from).to_vec();
            input.instruction_file_candidates = Some(own.clone());
            input.ancestor_instruction_files = Some(own);
            input.user_instruction_files =
                Some(PI_NAMES.map(|n| format!("~/.pi/agent/{n}")).to_vec());
        }
        Agent::Opencode => {
            input.instruction_file_candidates = Some(
                ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]
                    .map(String::from)
                    .to_vec(),
            );
            input.local_instruction_file_candidates =
                names(defaults.local_instruction_file_candidates());
        }
    }
    input
}

/// pi's instruction file names, in its order (`loadContextFileFromDir`,
/// agents/pi.md): the first that exists in a directory is its file.
const PI_NAMES: [&str; 4] = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// The agent's configuration: the preset, overlaid with the fields
/// `config.json` in `dir` sets ([`ConfigInput::overlay`]: a field given
/// there replaces the preset's). Two keys read differently:
///
/// - `preset`: names the base instead of the hook preset (the hook preset
///   is the agent's preset; a named one replaces it, keeping the agent's
///   `imports` unless the file sets it, decision 0026);
/// - `touch_tools`: the agent's tool map (R-CFG-8's one meaning: tool →
///   argument names holding a touched path, a trailing `/` marking a
///   directory), replacing the built-in path tools of the agent's tool
///   table; the shell and patch tools stay. A tool the installed matcher
///   does not list is warned about: the agent never reports it.
///
/// # Errors
/// A malformed or unreadable `config.json` ([`HookError`], naming the
/// file and the problem).
pub fn load_config(agent: Agent, dir: &Utf8Path) -> Result<HookConfig, HookError> {
    // The base: the preset of the agent's profile (decision 0051).
    let mut input = hook_preset(agent);
    let mut tools = default_tools(agent);
    let mut warnings = Vec::new();
    let path = dir.join(CONFIG_FILE_NAME);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let value: Value =
                serde_json::from_slice(&bytes).map_err(|source| HookError::ConfigNotJson {
                    path: path.clone(),
                    line: source.line(),
                    column: source.column(),
                    source,
                })?;
            // serde reads a struct from an array too (`[]` is "no fields"):
            // a file that is not an object is a mistake, said as one.
            if !value.is_object() {
                return Err(HookError::ConfigNotAnObject { path });
            }
            let mut over: ConfigInput =
                serde_json::from_value(value).map_err(|source| HookError::ConfigInvalid {
                    path: path.clone(),
                    source,
                })?;
            if let Some(map) = over.touch_tools.take() {
                for tool in map.keys().filter(|t| !is_installed_tool(agent, t)) {
                    warnings.push(format!(
                        "touch_tools: {tool} is not in the installed tool matcher ({}), \
                         so {agent} never reports it to the hook",
                        crate::tools::tool_matcher(agent)
                    ));
                }
                tools = map
                    .into_iter()
                    .map(|(tool, keys)| {
                        let args = keys.iter().map(|k| PathArg::configured(k)).collect();
                        (tool, args)
                    })
                    .collect();
            }
            // The one overlay rule (issue 31 item 4): a field given here
            // replaces the hook preset's; a `preset` here replaces the base
            // preset and resets nothing else, so the hook's differences
            // (budget, overlays, shell tool, fallback) stay unless this
            // file sets them too (decision 0052, superseding 0026's reset).
            input = input.overlay(over);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(HookError::ConfigUnreadable { path, source }),
    }
    if matches!(agent, Agent::Claude | Agent::Codex)
        && let Some(NumberInput::Int(n)) = input.max_bytes
        && n > HOOK_MAX_BYTES
    {
        warnings.push(format!(
            "max_bytes {n} is above the {HOOK_MAX_BYTES} bytes {PARTS} parts of {PART_BYTES} hold: \
             what the registered parts cannot hold is given with the next event"
        ));
    }
    Ok(HookConfig {
        input,
        tools,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_runtime::TouchKind;
    use rstest::rstest;

    use crate::testdir::tmp_dir;

    fn load(agent: Agent, text: &str) -> HookConfig {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(dir.join(CONFIG_FILE_NAME), text).expect("write");
        load_config(agent, &dir).expect("valid")
    }

    #[rstest]
    #[case::truncated("{\"max_bytes\": ", "invalid json")]
    #[case::trailing_garbage("{} x", "invalid json")]
    #[case::array("[]", "not an object")]
    #[case::array_of_fields("[9000]", "not an object")]
    #[case::string("\"max_bytes\"", "not an object")]
    #[case::unknown_field(r#"{"max_byte": 9000}"#, "invalid settings")]
    #[case::wrong_type(r#"{"max_bytes": []}"#, "invalid settings")]
    fn a_malformed_config_is_an_error_naming_the_file(#[case] text: &str, #[case] kind: &str) {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(dir.join(CONFIG_FILE_NAME), text).expect("write");
        let e = load_config(Agent::Claude, &dir).expect_err("malformed");
        let got = match &e {
            HookError::ConfigUnreadable { .. } => "unreadable",
            HookError::ConfigNotJson { .. } => "invalid json",
            HookError::ConfigNotAnObject { .. } => "not an object",
            HookError::ConfigInvalid { .. } => "invalid settings",
            other => panic!("not a config error: {other:?}"),
        };
        assert_eq!(got, kind, "{e}");
        let message = e.to_string();
        let file = dir.join(CONFIG_FILE_NAME);
        assert!(message.starts_with(&format!("{file}: ")), "{message}");
    }

    /// The message keeps the parser's words, its position included.
    #[test]
    fn invalid_json_says_where() {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(dir.join(CONFIG_FILE_NAME), "{\n  \"max_bytes\": ,\n}").expect("write");
        let e = load_config(Agent::Claude, &dir).expect_err("invalid");
        let HookError::ConfigNotJson { line, column, .. } = &e else {
            panic!("not invalid JSON: {e:?}");
        };
        assert_eq!((*line, *column), (2, 16));
        assert!(e.to_string().ends_with("at line 2 column 16"), "{e}");
    }

    /// A `config.json` that is no readable file (here: a directory) is
    /// an error with the OS's reason; a missing one is the preset.
    #[test]
    fn an_unreadable_config_is_an_error_with_its_cause() {
        let (_tmp, dir) = tmp_dir();
        assert!(load_config(Agent::Claude, &dir).is_ok(), "missing is fine");
        std::fs::create_dir(dir.join(CONFIG_FILE_NAME)).expect("mkdir");
        let e = load_config(Agent::Claude, &dir).expect_err("unreadable");
        assert!(
            matches!(&e, HookError::ConfigUnreadable { path, .. } if path.ends_with(CONFIG_FILE_NAME)),
            "{e:?}"
        );
        assert!(std::error::Error::source(&e).is_some());
    }

    /// R-HOOK-4: above what the registered parts hold, a warning; Gemini
    /// CLI has no parts and no such limit.
    #[rstest]
    #[case::claude_over(Agent::Claude, 70_000, true)]
    #[case::claude_at(Agent::Claude, 65_536, false)]
    #[case::codex_over(Agent::Codex, 65_537, true)]
    #[case::gemini_over(Agent::Gemini, 100_000, false)]
    fn a_budget_above_the_agent_limit_warns(
        #[case] agent: Agent,
        #[case] max: i64,
        #[case] warns: bool,
    ) {
        let c = load(agent, &format!("{{\"max_bytes\": {max}}}"));
        assert_eq!(c.input.max_bytes, Some(NumberInput::Int(max)));
        assert_eq!(!c.warnings.is_empty(), warns, "{:?}", c.warnings);
    }

    /// A configured tool map replaces the default; a trailing `/` marks a
    /// directory argument; the map stays out of the sessions' configuration
    /// (no internal touch tool either).
    #[test]
    fn configured_tools_replace_the_defaults() {
        let c = load(
            Agent::Claude,
            r#"{"touch_tools": {"Read": ["target"], "LS": ["root/"]}}"#,
        );
        let keys: Vec<&str> = c.tools.keys().map(String::as_str).collect();
        assert_eq!(keys, ["LS", "Read"]);
        assert_eq!(
            c.tools["LS"],
            [PathArg {
                key: "root".into(),
                kind: TouchKind::List,
            }]
        );
        assert_eq!(c.input.touch_tools, None);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    /// A tool the installed matcher lacks never reaches the hook: said in
    /// the log, once per tool.
    #[rstest]
    #[case::claude_unknown(Agent::Claude, r#"{"touch_tools": {"open": ["p"], "Read": ["file_path"]}}"#, &["open"])]
    #[case::gemini_claude_name(Agent::Gemini, r#"{"touch_tools": {"Read": ["file_path"]}}"#, &["Read"])]
    #[case::codex_shell_is_installed(Agent::Codex, r#"{"touch_tools": {"Bash": ["command"]}}"#, &[])]
    fn tools_outside_the_matcher_warn(
        #[case] agent: Agent,
        #[case] text: &str,
        #[case] missing: &[&str],
    ) {
        let c = load(agent, text);
        assert_eq!(c.warnings.len(), missing.len(), "{:?}", c.warnings);
        for (w, tool) in c.warnings.iter().zip(missing) {
            assert!(
                w.starts_with(&format!("touch_tools: {tool} is not in")),
                "{w}"
            );
        }
    }

    /// The one overlay rule (decision 0052): a field of `config.json`
    /// replaces the hook preset's; a `preset` there replaces the base preset
    /// and nothing else, so the hook's own differences stay unless the file
    /// sets them too. Read back from the resolved configuration.
    #[rstest]
    #[case::field_wins(r#"{"max_bytes": 9000}"#, 9000, &["CLAUDE.md"], &["CLAUDE.local.md", "AGENTS.local.md"], true)]
    #[case::preset_replaces_the_base_only(
        r#"{"preset": "codex"}"#,
        65_536,
        &["AGENTS.override.md", "AGENTS.md"],
        &["CLAUDE.local.md", "AGENTS.local.md"],
        false
    )]
    #[case::preset_with_fields(
        r#"{"preset": "codex", "max_bytes": 100, "imports": true, "local_instruction_file_candidates": []}"#,
        100,
        &["AGENTS.override.md", "AGENTS.md"],
        &[],
        true
    )]
    fn config_json_over_the_hook_preset(
        #[case] text: &str,
        #[case] max: u64,
        #[case] base: &[&str],
        #[case] local: &[&str],
        #[case] imports: bool,
    ) {
        let c = load(Agent::Claude, text)
            .input
            .resolve()
            .expect("valid")
            .config;
        assert_eq!(c.max_bytes().max_bytes(), max, "{text}");
        assert_eq!(c.instruction_file_candidates(), base, "{text}");
        assert_eq!(c.local_instruction_file_candidates(), local, "{text}");
        assert_eq!(c.imports(), imports, "{text}");
        // The hook's shell tool stays whatever the base.
        assert!(c.is_shell_tool("Bash"), "{text}");
    }
}
