//! The six agents and the facts the hook and its installer share about
//! each: which events to register, with which matcher, in which unit the
//! timeout is given, how many parts answer, and which instruction files the
//! agent loads natively (R-HOOK-3, R-HOOK-5); where the settings live is the
//! installer's (`dsh-instructions-installer`). The measured facts come from
//! the agent harness (`../shared/agent-harness/README.md`) and, for Codex,
//! from its `codex-rs/hooks` source; `docs/hooks.md` lists them per agent.

use std::path::{Path, PathBuf};

pub(crate) use crate::names::Agent;

/// One hook event the adapter is registered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSpec {
    /// The event's name as it appears in the settings file.
    pub name: &'static str,
    /// The matcher of our group, `None` for "every occurrence" (the key is
    /// then left out, which every agent reads as match-all; Copilot CLI's
    /// hook files have no matchers at all).
    pub matcher: Option<&'static str>,
}

/// Timeout of every registered hook, in seconds. The adapter answers in
/// milliseconds (R-HOOK-6); the timeout only bounds a pathological run, and
/// an agent that hits it goes on without the context (harness README).
pub const TIMEOUT_SECONDS: u64 = 10;

// The tool matchers are generated from the one tool table
// (`crate::tools`), which the event parser reads too (R-HOOK-3).
use crate::tools::{
    CLAUDE_MATCHER as CLAUDE_TOOLS, CODEX_MATCHER as CODEX_TOOLS, GEMINI_MATCHER as GEMINI_TOOLS,
    QWEN_MATCHER as QWEN_TOOLS,
};

/// How many parts one context answer is split into for Claude Code and
/// Codex: each registered entry `… hook --agent A --part K` answers the
/// K-th slice, so no single answer passes the agents' per-hook limit
/// (ceil(65,536 / 9,000), R-HOOK-4).
pub const PARTS: u32 = 8;

const fn ev(name: &'static str, matcher: Option<&'static str>) -> EventSpec {
    EventSpec { name, matcher }
}

const CLAUDE_EVENTS: &[EventSpec] = &[
    ev("SessionStart", None),
    ev("UserPromptSubmit", None),
    ev("PostToolUse", Some(CLAUDE_TOOLS)),
];

const CODEX_EVENTS: &[EventSpec] = &[
    ev("SessionStart", None),
    ev("UserPromptSubmit", None),
    ev("PostToolUse", Some(CODEX_TOOLS)),
];

/// `PreCompress` is registered so the adapter can notice compression (it
/// answers `{}`: the event is advisory, harness README); `BeforeModel`
/// lets it give context right before each model request (R-HOOK-9).
const GEMINI_EVENTS: &[EventSpec] = &[
    ev("SessionStart", None),
    ev("BeforeAgent", None),
    ev("AfterTool", Some(GEMINI_TOOLS)),
    ev("PreCompress", None),
    ev("BeforeModel", None),
];

/// GitHub Copilot CLI's camelCase events (harness README): their stdin
/// names no event, so each installed command names its own
/// (`hook --agent copilot --event E`, decision 0065). `preCompact` takes no
/// context; it marks the session so the next event gives a complete
/// baseline (decision 0066). Copilot's hook files have no matcher: every
/// tool call reaches `postToolUse`, and the parser keeps only the tool
/// table's.
const COPILOT_EVENTS: &[EventSpec] = &[
    ev("sessionStart", None),
    ev("userPromptSubmitted", None),
    ev("postToolUse", None),
    ev("preCompact", None),
];

/// Qwen Code, in Claude Code's shape; `PreCompact` marks the session
/// (it answers `{}`: a context there would only go into the compaction
/// prompt, decision 0066).
const QWEN_EVENTS: &[EventSpec] = &[
    ev("SessionStart", None),
    ev("UserPromptSubmit", None),
    ev("PostToolUse", Some(QWEN_TOOLS)),
    ev("PreCompact", None),
];

/// Cline CLI 3.0.65: the only events it awaits and whose answer reaches
/// the model (harness `agents/cline.md`): both land in one user message
/// right after the tool's result, `PreToolUse`'s first. Its hook files
/// have no matcher; the stdin names its event (`hookName`). `PreToolUse`
/// gives what a prompt would (the baseline, updates, removals), the tool's
/// touches come with `PostToolUse`, after the tool ran (decision 0089).
const CLINE_EVENTS: &[EventSpec] = &[ev("PreToolUse", None), ev("PostToolUse", None)];

/// The largest answer Cline keeps whole: it cuts each hook's context at
/// 50,000 characters (measured). A part is at most this many bytes, so at
/// most this many characters, with room for Cline's escaping of a
/// `<hook_context` inside the text (one character each).
pub const CLINE_PART_BYTES: usize = 48_000;

/// The instruction files the agents load natively and that the adapter
/// delivers instead: the default candidates and their overlays (R-HOOK-4),
/// and Claude Code's rules, the project's and the user's (R-RULE-7). The
/// installer adds the user's rules directory by its absolute path too
/// (decision 0059): which form Claude Code matches `~/` entries in is not
/// measured.
pub const CLAUDE_EXCLUDES: &[&str] = &[
    "**/CLAUDE.md",
    "**/AGENTS.md",
    "**/CLAUDE.local.md",
    "**/AGENTS.local.md",
    "**/.claude/rules/**",
    "~/.claude/rules/**",
];

impl Agent {
    /// The library preset the agent's hook preset starts from
    /// ([`crate::config::hook_preset`]: this preset plus the differences its
    /// profile names, decision 0051).
    pub fn library_preset(self) -> dsh_instructions_state::Preset {
        use dsh_instructions_state::Preset;
        match self {
            Agent::Claude => Preset::Claude,
            Agent::Codex => Preset::Codex,
            Agent::Gemini => Preset::Gemini,
            Agent::Copilot => Preset::Copilot,
            Agent::Qwen => Preset::Qwen,
            Agent::Pi => Preset::Dsh,
            Agent::Opencode => Preset::Opencode,
            // Cline has no preset of its own: the hook delivers the
            // project's defaults, Cline's own file left to it.
            Agent::Cline => Preset::Dsh,
        }
    }

    /// The events the adapter is registered for.
    pub fn events(self) -> &'static [EventSpec] {
        match self {
            Agent::Claude => CLAUDE_EVENTS,
            Agent::Codex => CODEX_EVENTS,
            Agent::Gemini => GEMINI_EVENTS,
            Agent::Copilot => COPILOT_EVENTS,
            Agent::Qwen => QWEN_EVENTS,
            Agent::Cline => CLINE_EVENTS,
            // No command hooks: the extension and the plugin run inside
            // the agent (decision 0086).
            Agent::Pi | Agent::Opencode => &[],
        }
    }

    /// The `timeout` value written into each handler: Gemini CLI counts
    /// milliseconds, the others seconds (Copilot CLI's key is
    /// `timeoutSec`; harness README). Cline's hook files take none (its
    /// own is 120 s): nothing is written for it.
    pub fn timeout_value(self) -> u64 {
        match self {
            Agent::Gemini => TIMEOUT_SECONDS * 1000,
            Agent::Claude
            | Agent::Codex
            | Agent::Copilot
            | Agent::Qwen
            | Agent::Pi
            | Agent::Opencode
            | Agent::Cline => TIMEOUT_SECONDS,
        }
    }

    /// How many entries are registered per event: [`PARTS`] for Claude Code
    /// and Codex, one for the others. Gemini CLI and Qwen Code keep a whole
    /// answer (20,000 characters arrived whole, harness README); Copilot
    /// CLI cuts only `postToolUse` context, at 10,240 characters, and how it
    /// joins several hooks' answers is not measured, so its one entry gives
    /// a tool event's message a part at a time, the rest with the next
    /// events (decision 0066).
    pub fn parts(self) -> u32 {
        match self {
            // Cline: one file per event; a message beyond one answer's
            // 50,000 characters goes a part per event (decision 0089).
            Agent::Gemini
            | Agent::Copilot
            | Agent::Qwen
            | Agent::Pi
            | Agent::Opencode
            | Agent::Cline => 1,
            Agent::Claude | Agent::Codex => PARTS,
        }
    }

    /// Whether a resumed session's history no longer holds the
    /// session-start context (Copilot CLI and Qwen Code replace it with the
    /// resuming process's, measured), so a resume gives the complete
    /// baseline again (decision 0066). Claude Code and Codex keep it.
    pub fn resume_replaces_start_context(self) -> bool {
        matches!(self, Agent::Copilot | Agent::Qwen)
    }

    /// The instruction files the agent loads itself from every directory
    /// of the project's chain at each start, keeps through compaction and
    /// cannot be told not to load: the hook composes them like any file
    /// but leaves their baseline sections out of its answers (GitHub
    /// Copilot CLI, decision 0073). Empty for the agents whose loading the
    /// installer switches off.
    ///
    /// ```
    /// use dsh_instructions_hooks::Agent;
    /// assert_eq!(Agent::Copilot.own_chain_files(), ["AGENTS.md", "CLAUDE.md", "GEMINI.md"]);
    /// assert!(Agent::Qwen.own_chain_files().is_empty());
    /// ```
    pub fn own_chain_files(self) -> &'static [&'static str] {
        self.loads_itself().chain_files
    }

    /// The instruction files the agent loads itself from its working
    /// directory alone, re-read for every request, so it holds their
    /// current text all the time (Cline CLI: `AGENTS.md` there, measured;
    /// never a nested or an ancestor one, never `CLAUDE.md`). The hook
    /// composes them like any file but leaves their sections out of its
    /// answers: the baseline's, and an update's or a removal's too, which
    /// Cline's next request already shows (decision 0089).
    ///
    /// ```
    /// use dsh_instructions_hooks::Agent;
    /// assert_eq!(Agent::Cline.own_cwd_files(), ["AGENTS.md"]);
    /// assert!(Agent::Copilot.own_cwd_files().is_empty());
    /// ```
    pub fn own_cwd_files(self) -> &'static [&'static str] {
        self.loads_itself().cwd_files
    }

    /// The largest part of a message one answer gives, in bytes:
    /// [`crate::parts::PART_BYTES`], below the ~10,000 characters Claude
    /// Code and Codex keep whole, or [`CLINE_PART_BYTES`] for Cline, which
    /// keeps 50,000.
    pub fn part_bytes(self) -> usize {
        match self {
            Agent::Cline => CLINE_PART_BYTES,
            Agent::Claude
            | Agent::Codex
            | Agent::Gemini
            | Agent::Copilot
            | Agent::Qwen
            | Agent::Pi
            | Agent::Opencode => crate::split::PART_BYTES,
        }
    }

    /// The rule places the agent loads itself at each start, always-on
    /// rules of which it keeps in its system prompt: a project path under
    /// one of these (a file, or a directory ending in `/`) names an own
    /// rule, whose baseline section the hook leaves out as it does
    /// [`Agent::own_chain_files`]' (GitHub Copilot CLI's `copilot` format,
    /// decision 0073). A path-scoped rule is never left out: Copilot
    /// attaches it only after a `view`, for one request.
    pub(crate) fn own_rule_places(self) -> &'static [&'static str] {
        self.loads_itself().rule_places
    }

    /// What the agent loads itself beside the hook, one row an agent:
    /// [`Agent::own_chain_files`], [`Agent::own_cwd_files`],
    /// [`Agent::own_rule_places`].
    fn loads_itself(self) -> LoadsItself {
        const NOTHING: LoadsItself = LoadsItself {
            chain_files: &[],
            cwd_files: &[],
            rule_places: &[],
        };
        match self {
            Agent::Copilot => LoadsItself {
                chain_files: &["AGENTS.md", "CLAUDE.md", "GEMINI.md"],
                rule_places: &[".github/copilot-instructions.md", ".github/instructions/"],
                ..NOTHING
            },
            Agent::Cline => LoadsItself {
                cwd_files: &["AGENTS.md"],
                ..NOTHING
            },
            Agent::Claude
            | Agent::Codex
            | Agent::Gemini
            | Agent::Qwen
            | Agent::Pi
            | Agent::Opencode => NOTHING,
        }
    }

    /// Whether the agent's stdin names no event, so the installed command
    /// does (`--event E`, decision 0065): Copilot CLI's camelCase events.
    pub fn event_on_command_line(self) -> bool {
        matches!(self, Agent::Copilot)
    }

    /// Whether the agent shows its hooks' answers in the order the processes
    /// finished rather than the order registered, so that part K must
    /// finish after part K−1 (Claude Code, measured; decision 0043). Codex
    /// keeps registration order; Gemini CLI has one part.
    pub fn orders_parts_by_finish(self) -> bool {
        matches!(self, Agent::Claude)
    }

    /// Whether the integration runs inside the agent — pi's extension and
    /// opencode's plugin on the Node binding, one file the installer
    /// writes — rather than as this crate's command hook (decision 0086).
    ///
    /// ```
    /// use dsh_instructions_hooks::Agent;
    /// assert!(Agent::Pi.in_process() && Agent::Opencode.in_process());
    /// assert!(!Agent::Claude.in_process());
    /// ```
    pub fn in_process(self) -> bool {
        matches!(self, Agent::Pi | Agent::Opencode)
    }

    /// The commands registered per event, in order: `<base> --part K` for
    /// K = 1..=PARTS (Claude Code, Codex), `<base>` alone for Gemini CLI
    /// and Qwen Code. Copilot CLI's name their event: see
    /// [`Agent::event_commands`].
    pub fn commands(self, base: &str) -> Vec<String> {
        match self {
            Agent::Gemini | Agent::Qwen | Agent::Copilot | Agent::Cline => vec![base.to_owned()],
            // Nothing is registered for them (no events).
            Agent::Pi | Agent::Opencode => Vec::new(),
            Agent::Claude | Agent::Codex => {
                (1..=PARTS).map(|k| format!("{base} --part {k}")).collect()
            }
        }
    }

    /// The commands registered for `event`: [`Agent::commands`], each
    /// followed by `--event <event>` where the agent's stdin names no event
    /// (Copilot CLI, decision 0065).
    ///
    /// ```
    /// use dsh_instructions_hooks::Agent;
    /// assert_eq!(
    ///     Agent::Copilot.event_commands("x hook --agent copilot", "sessionStart"),
    ///     ["x hook --agent copilot --event sessionStart"]
    /// );
    /// assert_eq!(Agent::Qwen.event_commands("x hook --agent qwen", "SessionStart"), ["x hook --agent qwen"]);
    /// ```
    pub fn event_commands(self, base: &str, event: &str) -> Vec<String> {
        let commands = self.commands(base);
        if self.event_on_command_line() {
            commands
                .into_iter()
                .map(|c| format!("{c} --event {event}"))
                .collect()
        } else {
            commands
        }
    }
}

/// The files and places an agent loads itself ([`Agent::loads_itself`]).
struct LoadsItself {
    chain_files: &'static [&'static str],
    cwd_files: &'static [&'static str],
    rule_places: &'static [&'static str],
}

/// Where the hook keeps one agent's session stores:
/// `$DSH_HOME/hooks/<agent>/sessions/` — a directory of their own, apart
/// from the hook's `config.json` and `hook.log` and from the installer's
/// record, so a session named `install.json` or `config.json` names nothing
/// else (R-HOOK-10). The adapter puts each store at
/// `sessions_dir(..).join(store_id(id))`.
pub fn sessions_dir(dsh_home: &Path, agent: Agent) -> PathBuf {
    dsh_home.join("hooks").join(agent.as_str()).join("sessions")
}

/// Whether `command` is a handler this installer wrote: it runs the
/// `dsh-instructions` binary with ` hook --agent `.
pub fn is_our_command(command: &str) -> bool {
    command.contains("dsh-instructions") && command.contains(" hook --agent ")
}

/// The hook command for `exe`: `<exe> hook --agent <agent>`, with the path
/// quoted for the POSIX shell the agents run hooks through, by `shlex`, only
/// when it needs quoting.
pub fn hook_command(exe: &Path, agent: Agent) -> String {
    // A NUL cannot be in a path the OS gave us; allowing it keeps this
    // infallible for a `Path` built by hand (its command never runs anyway).
    let quoter = shlex::Quoter::new().allow_nul(true);
    let exe = exe.to_string_lossy();
    let exe = quoter.quote(&exe).unwrap_or_else(|_| exe.clone());
    format!("{exe} hook --agent {agent}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    #[case(Agent::Copilot)]
    #[case(Agent::Qwen)]
    #[case(Agent::Pi)]
    #[case(Agent::Opencode)]
    #[case(Agent::Cline)]
    fn agent_names_round_trip(#[case] agent: Agent) {
        assert_eq!(agent.to_string().parse::<Agent>().ok(), Some(agent));
    }

    #[test]
    fn unknown_agent_is_a_typed_error_naming_the_choices() {
        let e = "cursor".parse::<Agent>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown agent `cursor` (expected claude, codex, gemini, copilot, qwen, pi, opencode or cline)"
        );
    }

    #[rstest]
    #[case(Agent::Claude, 10)]
    #[case(Agent::Codex, 10)]
    #[case(Agent::Gemini, 10_000)]
    #[case(Agent::Copilot, 10)]
    #[case(Agent::Qwen, 10)]
    #[case(Agent::Cline, 10)]
    fn gemini_counts_milliseconds(#[case] agent: Agent, #[case] want: u64) {
        assert_eq!(agent.timeout_value(), want);
    }

    #[test]
    fn events_match_spec_r_hook_3() {
        let names = |a: Agent| a.events().iter().map(|e| e.name).collect::<Vec<_>>();
        assert_eq!(
            names(Agent::Claude),
            ["SessionStart", "UserPromptSubmit", "PostToolUse"]
        );
        assert_eq!(
            names(Agent::Codex),
            ["SessionStart", "UserPromptSubmit", "PostToolUse"]
        );
        assert_eq!(
            names(Agent::Gemini),
            [
                "SessionStart",
                "BeforeAgent",
                "AfterTool",
                "PreCompress",
                "BeforeModel"
            ]
        );
        assert_eq!(
            names(Agent::Copilot),
            [
                "sessionStart",
                "userPromptSubmitted",
                "postToolUse",
                "preCompact"
            ]
        );
        assert_eq!(
            names(Agent::Qwen),
            [
                "SessionStart",
                "UserPromptSubmit",
                "PostToolUse",
                "PreCompact"
            ]
        );
        assert_eq!(names(Agent::Cline), ["PreToolUse", "PostToolUse"]);
        assert!(Agent::Cline.events().iter().all(|e| e.matcher.is_none()));
    }

    /// Decision 0065: Copilot CLI's commands carry their event, one entry
    /// each; nobody else's do.
    #[test]
    fn copilot_commands_name_their_event() {
        for spec in Agent::Copilot.events() {
            let c = Agent::Copilot
                .event_commands("/b/dsh-instructions hook --agent copilot", spec.name);
            assert_eq!(
                c,
                [format!(
                    "/b/dsh-instructions hook --agent copilot --event {}",
                    spec.name
                )]
            );
            assert!(is_our_command(&c[0]));
        }
        let q = Agent::Qwen.event_commands("/b/dsh-instructions hook --agent qwen", "SessionStart");
        assert_eq!(q, ["/b/dsh-instructions hook --agent qwen"]);
        let c = Agent::Codex.event_commands("b hook --agent codex", "SessionStart");
        assert_eq!(c, Agent::Codex.commands("b hook --agent codex"));
    }

    #[test]
    fn claude_and_codex_get_parts_gemini_one_command() {
        let c = Agent::Codex.commands("/b/dsh-instructions hook --agent codex");
        assert_eq!(c.len(), PARTS as usize);
        assert_eq!(c[0], "/b/dsh-instructions hook --agent codex --part 1");
        assert_eq!(c[7], "/b/dsh-instructions hook --agent codex --part 8");
        assert!(c.iter().all(|c| is_our_command(c)));
        assert_eq!(
            Agent::Gemini.commands("x hook --agent gemini"),
            ["x hook --agent gemini"]
        );
    }

    #[rstest]
    #[case(Agent::Claude, "|Bash")]
    #[case(Agent::Codex, "apply_patch|Bash")]
    #[case(Agent::Gemini, "|run_shell_command")]
    #[case(Agent::Qwen, "|run_shell_command")]
    fn tool_matchers_include_the_shell(#[case] agent: Agent, #[case] tail: &str) {
        let m = agent
            .events()
            .iter()
            .find_map(|e| e.matcher)
            .expect("a tool event");
        assert!(m.ends_with(tail), "{m}");
    }

    #[rstest]
    #[case(
        "/usr/bin/dsh-instructions",
        "/usr/bin/dsh-instructions hook --agent codex"
    )]
    #[case(
        "/opt/my tools/dsh-instructions",
        "'/opt/my tools/dsh-instructions' hook --agent codex"
    )]
    #[case(
        "/tmp/it's/dsh-instructions",
        r#""/tmp/it's/dsh-instructions" hook --agent codex"#
    )]
    #[case(
        "/opt/a,b/dsh-instructions",
        "'/opt/a,b/dsh-instructions' hook --agent codex"
    )]
    #[case(
        "/opt/$HOME/dsh-instructions",
        "'/opt/$HOME/dsh-instructions' hook --agent codex"
    )]
    #[case(
        "/opt/é/dsh-instructions",
        "'/opt/é/dsh-instructions' hook --agent codex"
    )]
    fn hook_command_quotes_only_when_needed(#[case] exe: &str, #[case] want: &str) {
        let cmd = hook_command(Path::new(exe), Agent::Codex);
        assert_eq!(cmd, want);
        assert!(is_our_command(&cmd));
        // The shell reads the path back exactly.
        assert_eq!(
            shlex::split(&cmd).expect("quoted")[0],
            exe,
            "{cmd} does not name {exe}"
        );
    }

    #[rstest]
    #[case("python3 marker-hook.py", false)]
    #[case("dsh-instructions show", false)]
    #[case("/x/dsh-instructions hook --agent claude", true)]
    fn recognises_only_our_handlers(#[case] cmd: &str, #[case] ours: bool) {
        assert_eq!(is_our_command(cmd), ours);
    }
}
