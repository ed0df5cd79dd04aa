//! One profile per agent (issue 31 item 4): everything the hook and its
//! installer know about an agent, in one value — the configuration hook
//! sessions start from and the library preset it follows (with every
//! difference and its reason), the tool table, the registered events and
//! their matchers, the setting that switches the agent's own instruction
//! loading off, how the answer is framed, and the parts.

use dsh_instructions_state::{ConfigInput, Preset};

use crate::agent::{Agent, CLAUDE_EXCLUDES, EventSpec};
use crate::tools::{AgentTool, agent_tools};

/// Everything about one agent, as [`Agent::profile`] gives it.
///
/// ```
/// use dsh_instructions_hooks::{Agent, agents::{Framing, NativeSwitch}};
/// let claude = Agent::Claude.profile();
/// assert_eq!(claude.framing, Framing::Bare);
/// assert!(matches!(claude.native, NativeSwitch::ClaudeMdExcludes(_)));
/// assert_eq!(claude.parts, 8);
/// assert!(claude.differences.iter().any(|d| d.field == "fallback_scope"));
/// ```
#[derive(Debug, Clone)]
pub struct AgentProfile {
    /// The agent.
    pub agent: Agent,
    /// The configuration hook sessions start from, before `config.json`
    /// ([`crate::config::hook_preset`]).
    pub preset: ConfigInput,
    /// The library preset the hook's configuration follows (R-CFG-9).
    pub library_preset: Preset,
    /// Where [`AgentProfile::preset`] differs from
    /// [`AgentProfile::library_preset`], field by field, and why; a test
    /// fails on any other difference.
    pub differences: &'static [PresetDifference],
    /// The one tool table: the tools the matcher names and what each
    /// touches (R-HOOK-3).
    pub tools: &'static [AgentTool],
    /// The events registered and their matchers (R-HOOK-3).
    pub events: &'static [EventSpec],
    /// The setting that switches the agent's own instruction loading off
    /// (R-HOOK-5), which the installer writes and doctor checks.
    pub native: NativeSwitch,
    /// How the agent wants the context framed (decision 0019).
    pub framing: Framing,
    /// The entries registered per event, one part each (R-HOOK-4).
    pub parts: u32,
    /// Whether the agent shows its hooks' answers in the order they
    /// finished, so part K must finish after part K−1 (decision 0043).
    pub parts_by_finish: bool,
}

/// One field where the hook's configuration departs from the library
/// preset, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresetDifference {
    /// The configuration field (as `config.json` spells it).
    pub field: &'static str,
    /// Why the hook differs there.
    pub reason: &'static str,
}

/// The agent setting that switches its own instruction loading off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeSwitch {
    /// Claude Code: `claudeMdExcludes` lists these patterns.
    ClaudeMdExcludes(&'static [&'static str]),
    /// Gemini CLI: `context.fileName` names no file the adapter delivers
    /// (Gemini still loads `GEMINI.md` itself, decision 0012).
    GeminiContextFileName,
    /// Codex: `project_doc_max_bytes = 0` in `config.toml`.
    CodexProjectDocMaxBytes,
    /// Qwen Code: `context.fileName` names only this file, which no
    /// instruction layout holds (decision 0068): Qwen loads no `QWEN.md` or
    /// `AGENTS.md` (its `.qwen/rules` stay on, measured).
    QwenContextFileName(&'static str),
    /// GitHub Copilot CLI: no setting switches its loading off (only the
    /// `--no-custom-instructions` flag, which a hook cannot set): it stays
    /// on, and the hook delivers only what Copilot lacks (decision 0067).
    CopilotKeptOn,
    /// pi and opencode: no setting switches their loading off (pi's
    /// `--no-context-files` is a flag; opencode has none): it stays on,
    /// and the extension or plugin leaves out of what it gives every
    /// section the agent holds with the same content (decision 0086).
    InProcessKeptOn,
}

/// The one name Qwen Code's `context.fileName` is set to (decision 0068):
/// a name of this project's own, which no instruction layout uses. Were
/// Qwen's memory tool to save into it (it writes the first name), that file
/// is Qwen's own memory, which Qwen then loads and the hook never delivers.
pub const QWEN_NO_SUCH_FILE: &str = "DSH-INSTRUCTIONS-NO-SUCH-FILE.md";

/// How the composition's text reaches the agent: the render crate's one
/// framing option (decision 0055). Claude Code wraps hook context in its
/// own `<system-reminder>` and escapes ours, so it gets the blocks without
/// our frame ([`Framing::Bare`], decision 0019); the others get ours.
pub use dsh_instructions_render::Framing;

/// The reason every agent's hook names its shell tool.
const SHELL: PresetDifference = PresetDifference {
    field: "shell_tools",
    reason: "the hook reads the agent's shell tool's `command` as a shell call (R-CFG-11), \
             which a library session without a shell tool never sees",
};

const CLAUDE_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "local_instruction_file_candidates",
        reason: "the hook delivers both overlays, ours (`AGENTS.local.md`) after Claude's \
                 (`CLAUDE.local.md`): R-HOOK-4 keeps the .local.md overlays",
    },
    PresetDifference {
        field: "fallback_scope",
        reason: "`AGENTS.md` loads wherever a directory has no `CLAUDE.md` (per directory), a \
                 superset of Claude Code's path-wide fallback, so no AGENTS.md the hook \
                 silenced natively goes undelivered (R-HOOK-4)",
    },
    SHELL,
];

const CODEX_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "local_instruction_file_candidates",
        reason: "the hook delivers the default .local.md overlays (`AGENTS.local.md`, \
                 `CLAUDE.local.md`, R-HOOK-4); Codex itself, which the library preset \
                 imitates, reads none",
    },
    PresetDifference {
        field: "max_bytes",
        reason: "the hook's budget is the same 65,536 bytes for every agent, delivered in parts \
                 (R-HOOK-4); Codex's own `project_doc_max_bytes` of 32,768 is what the \
                 library preset imitates",
    },
    SHELL,
];

const COPILOT_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "user_instruction_files",
        reason: "Copilot CLI loads `~/.copilot/copilot-instructions.md` itself (decision 0067)",
    },
    PresetDifference {
        field: "rule_formats",
        reason: "Copilot CLI loads `.claude/rules` itself and how it reads their `paths:` is not \
                 measured, so the hook reads only the `copilot` format, whose chain rules it \
                 leaves to Copilot (decisions 0067, 0073)",
    },
    PresetDifference {
        field: "local_instruction_file_candidates",
        reason: "Copilot CLI reads no .local.md overlay: the hook delivers the default ones \
                 (R-HOOK-4), which is what it adds to Copilot's own loading",
    },
    SHELL,
];

const QWEN_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "local_instruction_file_candidates",
        reason: "Qwen Code reads no .local.md overlay: the hook delivers the default ones \
                 (R-HOOK-4)",
    },
    SHELL,
];

const PI_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "instruction_file_candidates",
        reason: "pi's own names, first-wins per directory (`AGENTS.md`, `AGENTS.MD`, \
                 `CLAUDE.md`, `CLAUDE.MD`): the extension composes what pi loads, so it can \
                 leave out what pi holds and say when it changes (decision 0086)",
    },
    PresetDifference {
        field: "ancestor_instruction_files",
        reason: "pi reads every directory from the cwd up to `/`, above the project root \
                 too; the extension keeps pi's first name per directory there (decision 0086)",
    },
    PresetDifference {
        field: "user_instruction_files",
        reason: "pi loads `~/.pi/agent/AGENTS.md` (its first name there) at start; composed so \
                 an edit of it reaches the model in the same process (decision 0086)",
    },
    SHELL,
];

const OPENCODE_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "instruction_file_candidates",
        reason: "opencode's three names (`AGENTS.md`, `CLAUDE.md`, `CONTEXT.md`), first-wins \
                 per directory: a superset of opencode's one name for the whole path, so no \
                 file opencode loads goes undelivered (decision 0086)",
    },
    PresetDifference {
        field: "local_instruction_file_candidates",
        reason: "opencode reads no .local.md overlay: the plugin delivers the default ones \
                 (R-HOOK-4)",
    },
    SHELL,
];

const GEMINI_DIFFERENCES: &[PresetDifference] = &[
    PresetDifference {
        field: "instruction_file_candidates",
        reason: "Gemini CLI always loads `GEMINI.md` itself, so the hook leaves that name to \
                 it and delivers the defaults (`AGENTS.md`, `CLAUDE.md`, decision 0012)",
    },
    PresetDifference {
        field: "local_instruction_file_candidates",
        reason: "with the default candidates come their default overlays (decision 0012)",
    },
    SHELL,
];

impl Agent {
    /// The agent's profile: everything the hook and its installer know
    /// about it, in one value.
    pub fn profile(self) -> AgentProfile {
        let library_preset = self.library_preset();
        let (differences, native) = match self {
            Agent::Claude => (
                CLAUDE_DIFFERENCES,
                NativeSwitch::ClaudeMdExcludes(CLAUDE_EXCLUDES),
            ),
            Agent::Codex => (CODEX_DIFFERENCES, NativeSwitch::CodexProjectDocMaxBytes),
            Agent::Gemini => (GEMINI_DIFFERENCES, NativeSwitch::GeminiContextFileName),
            Agent::Copilot => (COPILOT_DIFFERENCES, NativeSwitch::CopilotKeptOn),
            Agent::Qwen => (
                QWEN_DIFFERENCES,
                NativeSwitch::QwenContextFileName(QWEN_NO_SUCH_FILE),
            ),
            Agent::Pi => (PI_DIFFERENCES, NativeSwitch::InProcessKeptOn),
            Agent::Opencode => (OPENCODE_DIFFERENCES, NativeSwitch::InProcessKeptOn),
        };
        let framing = self.framing();
        AgentProfile {
            agent: self,
            preset: crate::config::hook_preset(self),
            library_preset,
            differences,
            tools: agent_tools(self),
            events: self.events(),
            native,
            framing,
            parts: self.parts(),
            parts_by_finish: self.orders_parts_by_finish(),
        }
    }

    /// The profile's [`AgentProfile::framing`] alone, for the answer of
    /// every event (no preset built).
    pub(crate) fn framing(self) -> Framing {
        match self {
            // Qwen Code wraps each context in a tag of its own and escapes
            // `<` and `>` in ours, as Claude Code does (decision 0019).
            Agent::Claude | Agent::Qwen => Framing::Bare,
            // Copilot CLI shows the text verbatim (harness README); pi and
            // opencode put it in a message as it is (agents/pi.md,
            // agents/opencode.md).
            Agent::Codex | Agent::Gemini | Agent::Copilot | Agent::Pi | Agent::Opencode => {
                Framing::Reminder
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use dsh_instructions_state::Config;
    use rstest::rstest;

    use super::*;

    /// A configuration's fields, each as its `Debug` text: every field,
    /// including any added later, without a list kept by hand.
    fn fields(c: &Config) -> BTreeMap<String, String> {
        let text = format!("{c:#?}");
        let mut out = BTreeMap::new();
        let mut current: Option<String> = None;
        for line in text.lines().skip(1) {
            let top = line.strip_prefix("    ").filter(|l| !l.starts_with(' '));
            match top.and_then(|l| l.split_once(": ")) {
                Some((name, value)) if name.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                    out.insert(name.to_owned(), value.to_owned());
                    current = Some(name.to_owned());
                }
                _ => {
                    if let Some(v) = current.as_ref().and_then(|n| out.get_mut(n)) {
                        v.push_str(line.trim());
                    }
                }
            }
        }
        out
    }

    /// Issue 31 item 4: one selection per agent. The hook's configuration
    /// (the hook preset, resolved) and the library preset it follows agree
    /// on every field except the ones the profile names with a reason —
    /// for Claude Code: both overlays, the per-directory fallback and the
    /// shell tool.
    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    #[case(Agent::Copilot)]
    #[case(Agent::Qwen)]
    #[case(Agent::Pi)]
    #[case(Agent::Opencode)]
    fn the_hook_and_the_library_preset_differ_only_where_a_reason_says(#[case] agent: Agent) {
        let p = agent.profile();
        let hook = p.preset.resolve().expect("the hook preset is valid").config;
        let library = Config::preset(p.library_preset);
        let (h, l) = (fields(&hook), fields(&library));
        assert!(h.len() > 10, "the Debug reading found the fields: {h:?}");
        assert_eq!(h.keys().collect::<Vec<_>>(), l.keys().collect::<Vec<_>>());
        let differing: BTreeSet<&str> = h
            .iter()
            .filter(|(k, v)| l.get(*k) != Some(v))
            .map(|(k, _)| k.as_str())
            .collect();
        let reasoned: BTreeSet<&str> = p.differences.iter().map(|d| d.field).collect();
        assert_eq!(
            differing, reasoned,
            "{agent}: fields that differ vs fields with a written reason\nhook: {h:#?}\nlibrary: {l:#?}"
        );
        assert!(p.differences.iter().all(|d| d.reason.len() > 20));
    }

    /// The differences the Claude Code hook is known for (issue 31), read
    /// back from the two configurations rather than the table.
    #[test]
    fn the_claude_differences_are_the_overlay_and_the_fallback_scope() {
        let hook = hook_claude();
        let library = Config::preset(Preset::Claude);
        assert_eq!(
            hook.local_instruction_file_candidates(),
            ["CLAUDE.local.md", "AGENTS.local.md"]
        );
        assert_eq!(
            library.local_instruction_file_candidates(),
            ["CLAUDE.local.md"]
        );
        assert_eq!(
            hook.fallback_scope(),
            dsh_instructions_state::config::FallbackScope::Directory
        );
        assert_eq!(
            library.fallback_scope(),
            dsh_instructions_state::config::FallbackScope::Path
        );
        assert_eq!(
            hook.instruction_file_candidates(),
            library.instruction_file_candidates()
        );
        assert_eq!(hook.max_bytes(), library.max_bytes());
    }

    /// R-RULE-7: the Claude Code hook takes `.claude/rules` and the user's
    /// `~/.claude/rules` over — it reads `claude` rules as the library
    /// preset does and its excludes keep Claude from loading them too;
    /// Codex, Gemini and Qwen read no rules unless told to; Copilot's hook
    /// reads Copilot's own format (decision 0073, its own test below).
    #[test]
    fn the_claude_hook_takes_the_rules_over_and_the_others_read_none() {
        use dsh_instructions_state::config::RuleFormat;
        assert_eq!(hook_claude().rule_formats(), [RuleFormat::Claude]);
        let NativeSwitch::ClaudeMdExcludes(excludes) = Agent::Claude.profile().native else {
            panic!("Claude Code is switched off by claudeMdExcludes");
        };
        for pattern in ["**/.claude/rules/**", "~/.claude/rules/**"] {
            assert!(excludes.contains(&pattern), "{pattern} in {excludes:?}");
        }
        for agent in [Agent::Codex, Agent::Gemini, Agent::Qwen] {
            let config = agent.profile().preset.resolve().expect("valid").config;
            assert!(config.rule_formats().is_empty(), "{agent}");
        }
    }

    fn hook_claude() -> Config {
        Agent::Claude
            .profile()
            .preset
            .resolve()
            .expect("valid")
            .config
    }

    #[rstest]
    #[case(Agent::Claude, Framing::Bare, 8, true)]
    #[case(Agent::Codex, Framing::Reminder, 8, false)]
    #[case(Agent::Gemini, Framing::Reminder, 1, false)]
    #[case(Agent::Copilot, Framing::Reminder, 1, false)]
    #[case(Agent::Qwen, Framing::Bare, 1, false)]
    #[case(Agent::Pi, Framing::Reminder, 1, false)]
    #[case(Agent::Opencode, Framing::Reminder, 1, false)]
    fn the_profile_gathers_the_agent_facts(
        #[case] agent: Agent,
        #[case] framing: Framing,
        #[case] parts: u32,
        #[case] by_finish: bool,
    ) {
        let p = agent.profile();
        assert_eq!(p.agent, agent);
        assert_eq!(p.framing, framing);
        assert_eq!(p.parts, parts);
        assert_eq!(p.parts_by_finish, by_finish);
        assert_eq!(p.events, agent.events());
        // The tool event's matcher names exactly the tool table's tools
        // (Copilot CLI's hook files have none: every tool reaches it; pi
        // and opencode register no events at all).
        let names: Vec<&str> = p.tools.iter().map(|t| t.name).collect();
        match p.events.iter().find_map(|e| e.matcher) {
            Some(matcher) => assert_eq!(matcher, names.join("|")),
            None => assert!(
                agent == Agent::Copilot || (agent.in_process() && p.events.is_empty()),
                "{agent}"
            ),
        }
    }

    /// Decision 0086: pi's extension composes pi's own selection — four
    /// names first-wins per directory, above the root too, its user file —
    /// and opencode's plugin opencode's three names; both the default
    /// overlays, no rules unless asked; their loading stays on.
    #[test]
    fn pi_and_opencode_compose_their_own_selection_and_keep_it_on() {
        let pi = Agent::Pi.profile();
        assert_eq!(pi.native, NativeSwitch::InProcessKeptOn);
        let c = pi.preset.resolve().expect("valid").config;
        let names = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];
        assert_eq!(c.instruction_file_candidates(), names);
        assert_eq!(c.ancestor_instruction_files(), names);
        assert_eq!(
            c.user_instruction_files(),
            names.map(|n| format!("~/.pi/agent/{n}"))
        );
        assert_eq!(
            c.local_instruction_file_candidates(),
            ["AGENTS.local.md", "CLAUDE.local.md"]
        );
        assert!(c.rule_formats().is_empty());
        let oc = Agent::Opencode.profile();
        assert_eq!(oc.native, NativeSwitch::InProcessKeptOn);
        let c = oc.preset.resolve().expect("valid").config;
        assert_eq!(
            c.instruction_file_candidates(),
            ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]
        );
        assert!(c.user_instruction_files().is_empty());
        assert!(c.ancestor_instruction_files().is_empty());
        assert_eq!(
            c.local_instruction_file_candidates(),
            ["AGENTS.local.md", "CLAUDE.local.md"]
        );
    }

    /// Decisions 0067, 0073: the Copilot CLI hook composes Copilot's own
    /// candidates (their chain sections are left out of its answers, the
    /// nested ones are what Copilot lacks), no user file or rule format of
    /// Copilot's own, the overlays — read back from the resolved
    /// configuration.
    #[test]
    fn the_copilot_hook_delivers_only_what_copilot_lacks() {
        let p = Agent::Copilot.profile();
        assert_eq!(p.native, NativeSwitch::CopilotKeptOn);
        let hook = p.preset.resolve().expect("valid").config;
        let library = Config::preset(Preset::Copilot);
        assert_eq!(
            hook.instruction_file_candidates(),
            Agent::Copilot.own_chain_files()
        );
        assert!(hook.user_instruction_files().is_empty());
        assert_eq!(
            hook.rule_formats(),
            [dsh_instructions_state::config::RuleFormat::Copilot]
        );
        assert_eq!(
            hook.local_instruction_file_candidates(),
            ["AGENTS.local.md", "CLAUDE.local.md"]
        );
        assert_eq!(
            library.instruction_file_candidates(),
            ["AGENTS.md", "CLAUDE.md", "GEMINI.md"]
        );
    }

    /// The Qwen Code hook delivers what Qwen's switched-off loading read —
    /// `QWEN.md` and `AGENTS.md`, above the root too, and `~/.qwen/QWEN.md`
    /// — plus the overlays; no rule format (decision 0068).
    #[test]
    fn the_qwen_hook_delivers_what_qwen_loaded() {
        let p = Agent::Qwen.profile();
        assert_eq!(
            p.native,
            NativeSwitch::QwenContextFileName(QWEN_NO_SUCH_FILE)
        );
        let hook = p.preset.resolve().expect("valid").config;
        assert_eq!(hook.instruction_file_candidates(), ["QWEN.md", "AGENTS.md"]);
        assert_eq!(hook.ancestor_instruction_files(), ["QWEN.md", "AGENTS.md"]);
        assert_eq!(hook.user_instruction_files(), ["~/.qwen/QWEN.md"]);
        assert!(hook.rule_formats().is_empty());
        assert!(hook.imports());
        assert_eq!(
            hook.local_instruction_file_candidates(),
            ["AGENTS.local.md", "CLAUDE.local.md"]
        );
        assert!(
            p.preset.instruction_file_candidates.is_none(),
            "the library's own"
        );
    }
}
