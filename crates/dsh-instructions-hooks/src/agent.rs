//! The three agents and the facts the installer needs about each: which
//! events to register, with which matcher, in which unit the timeout is
//! given, where the settings live and which setting switches the agent's own
//! instruction loading off (R-HOOK-3, R-HOOK-5). The measured facts come from
//! the agent harness (`../shared/agent-harness/README.md`) and, for Codex,
//! from its `codex-rs/hooks` source; `docs/hooks.md` lists them per agent.

use std::path::{Path, PathBuf};

pub use crate::names::{Agent, ParseNameError, Scope};

/// One hook event the adapter is registered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSpec {
    /// The event's name as it appears in the settings file.
    pub name: &'static str,
    /// The matcher of our group, `None` for "every occurrence" (the key is
    /// then left out, which all three agents read as match-all).
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

/// The instruction files the agents load natively and that the adapter
/// delivers instead: the default candidates and their overlays (R-HOOK-4).
pub const CLAUDE_EXCLUDES: &[&str] = &[
    "**/CLAUDE.md",
    "**/AGENTS.md",
    "**/CLAUDE.local.md",
    "**/AGENTS.local.md",
];

/// The agent's configuration directories, resolved by the caller from the
/// environment (`$HOME`, `$CODEX_HOME`, the project directory, `$DSH_HOME`):
/// the library never reads the environment itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locations {
    /// The user's home directory (`$HOME`).
    pub home: PathBuf,
    /// Codex's home (`$CODEX_HOME`, default `~/.codex`).
    pub codex_home: PathBuf,
    /// The project directory, used for [`Scope::Project`].
    pub project: PathBuf,
    /// The DSH home; the installer keeps what it needs to undo its changes
    /// in `installer/<agent>.json`.
    pub dsh_home: PathBuf,
}

/// The files one installation touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The JSON file holding the `hooks` object.
    pub hooks: PathBuf,
    /// The file holding the native-loading setting (for Claude Code and
    /// Gemini CLI the same as `hooks`; for Codex a `config.toml`).
    pub native: PathBuf,
    /// Codex only: the user `config.toml` that holds persisted hook trust
    /// (Codex reads trust only from user-controlled layers, so it is the
    /// user file even for a project install).
    pub trust: Option<PathBuf>,
    /// The installer's own record (`$DSH_HOME/installer/<agent>.json`).
    pub state: PathBuf,
    /// Where earlier versions kept it (`$DSH_HOME/hooks/<agent>/install.json`,
    /// beside the hook's session directories): read when `state` is absent,
    /// removed once the record moved.
    pub legacy_state: PathBuf,
}

impl Agent {
    /// The events the adapter is registered for.
    pub fn events(self) -> &'static [EventSpec] {
        match self {
            Agent::Claude => CLAUDE_EVENTS,
            Agent::Codex => CODEX_EVENTS,
            Agent::Gemini => GEMINI_EVENTS,
        }
    }

    /// The `timeout` value written into each handler: Gemini CLI counts
    /// milliseconds, the other two seconds (harness README).
    pub fn timeout_value(self) -> u64 {
        match self {
            Agent::Gemini => TIMEOUT_SECONDS * 1000,
            Agent::Claude | Agent::Codex => TIMEOUT_SECONDS,
        }
    }

    /// The per-user or per-project configuration directory's name.
    fn config_dir_name(self) -> &'static str {
        match self {
            Agent::Claude => ".claude",
            Agent::Codex => ".codex",
            Agent::Gemini => ".gemini",
        }
    }

    /// The files an installation at `scope` touches.
    pub fn files(self, scope: Scope, loc: &Locations) -> Files {
        let state = installer_dir(&loc.dsh_home).join(format!("{}.json", self.as_str()));
        let legacy_state = loc
            .dsh_home
            .join("hooks")
            .join(self.as_str())
            .join("install.json");
        let dir = match (self, scope) {
            (Agent::Codex, Scope::User) => loc.codex_home.clone(),
            (_, Scope::User) => loc.home.join(self.config_dir_name()),
            (_, Scope::Project) => loc.project.join(self.config_dir_name()),
        };
        match self {
            Agent::Claude | Agent::Gemini => {
                let settings = dir.join("settings.json");
                Files {
                    hooks: settings.clone(),
                    native: settings,
                    trust: None,
                    state,
                    legacy_state,
                }
            }
            Agent::Codex => Files {
                hooks: dir.join("hooks.json"),
                native: dir.join("config.toml"),
                trust: Some(loc.codex_home.join("config.toml")),
                state,
                legacy_state,
            },
        }
    }

    /// How many entries are registered per event: [`PARTS`] for Claude Code
    /// and Codex, one for Gemini CLI (it has no per-hook size limit).
    pub fn parts(self) -> u32 {
        match self {
            Agent::Gemini => 1,
            Agent::Claude | Agent::Codex => PARTS,
        }
    }

    /// Whether the agent shows its hooks' answers in the order the processes
    /// finished rather than the order registered, so that part K must
    /// finish after part K−1 (Claude Code, measured; decision 0043). Codex
    /// keeps registration order; Gemini CLI has one part.
    pub fn orders_parts_by_finish(self) -> bool {
        matches!(self, Agent::Claude)
    }

    /// The commands registered per event, in order: `<base> --part K` for
    /// K = 1..=PARTS (Claude Code, Codex), `<base>` alone for Gemini CLI.
    pub fn commands(self, base: &str) -> Vec<String> {
        match self {
            Agent::Gemini => vec![base.to_owned()],
            Agent::Claude | Agent::Codex => {
                (1..=PARTS).map(|k| format!("{base} --part {k}")).collect()
            }
        }
    }
}

/// The installer's own namespace: `$DSH_HOME/installer/`, apart from the
/// hook's session stores, so no session id can name an installer file.
pub fn installer_dir(dsh_home: &Path) -> PathBuf {
    dsh_home.join("installer")
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

/// Whether two handler commands run the same thing: equal text, or the same
/// words after the shell's quote removal. Earlier installs quoted some paths
/// by hand (`'it'\''s'` where `shlex` writes `"it's"`; `%`, `=` and `,`
/// bare), and such an entry is still the command we would write.
pub(crate) fn same_command(found: &str, wanted: &str) -> bool {
    found == wanted
        || shlex::split(found).is_some_and(|f| shlex::split(wanted).is_some_and(|w| f == w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    fn agent_names_round_trip(#[case] agent: Agent) {
        assert_eq!(agent.to_string().parse::<Agent>(), Ok(agent));
    }

    #[test]
    fn unknown_agent_is_a_typed_error_naming_the_choices() {
        let e = "cursor".parse::<Agent>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown agent `cursor` (expected claude, codex or gemini)"
        );
    }

    #[rstest]
    #[case(Agent::Claude, 10)]
    #[case(Agent::Codex, 10)]
    #[case(Agent::Gemini, 10_000)]
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

    /// Entries written by the hand-written quoting of earlier versions are
    /// the same command, so `hook doctor` does not call them stale.
    #[rstest]
    #[case(
        r"'/tmp/it'\''s/dsh-instructions' hook --agent codex",
        "/tmp/it's/dsh-instructions"
    )]
    #[case(
        "/opt/a,b%c=d/dsh-instructions hook --agent codex",
        "/opt/a,b%c=d/dsh-instructions"
    )]
    #[case(
        "'/opt/x]y/dsh-instructions' hook --agent codex",
        "/opt/x]y/dsh-instructions"
    )]
    fn old_quoting_is_the_same_command(#[case] old: &str, #[case] exe: &str) {
        let cmd = hook_command(Path::new(exe), Agent::Codex);
        assert_ne!(old, cmd, "the case should differ in bytes");
        assert!(same_command(old, &cmd));
        assert!(same_command(
            &format!("{old} --part 2"),
            &format!("{cmd} --part 2")
        ));
    }

    #[rstest]
    #[case(
        "/a/dsh-instructions hook --agent codex",
        "/b/dsh-instructions hook --agent codex"
    )]
    #[case(
        "/a/dsh-instructions hook --agent codex --part 1",
        "/a/dsh-instructions hook --agent codex --part 2"
    )]
    #[case(
        "'/a b/dsh-instructions' hook --agent codex",
        "/a b/dsh-instructions hook --agent codex"
    )]
    #[case(
        "'/a/dsh-instructions hook --agent codex",
        "/a/dsh-instructions hook --agent codex"
    )]
    fn different_commands_stay_different(#[case] found: &str, #[case] wanted: &str) {
        assert!(!same_command(found, wanted));
    }

    #[rstest]
    #[case("python3 marker-hook.py", false)]
    #[case("dsh-instructions show", false)]
    #[case("/x/dsh-instructions hook --agent claude", true)]
    fn recognises_only_our_handlers(#[case] cmd: &str, #[case] ours: bool) {
        assert_eq!(is_our_command(cmd), ours);
    }

    #[test]
    fn codex_project_trust_stays_in_the_user_config() {
        let loc = Locations {
            home: "/h".into(),
            codex_home: "/h/.codex".into(),
            project: "/p".into(),
            dsh_home: "/h/.dsh".into(),
        };
        let f = Agent::Codex.files(Scope::Project, &loc);
        assert_eq!(f.hooks, PathBuf::from("/p/.codex/hooks.json"));
        assert_eq!(f.native, PathBuf::from("/p/.codex/config.toml"));
        assert_eq!(f.trust, Some(PathBuf::from("/h/.codex/config.toml")));
        assert_eq!(f.state, PathBuf::from("/h/.dsh/installer/codex.json"));
        assert_eq!(
            f.legacy_state,
            PathBuf::from("/h/.dsh/hooks/codex/install.json")
        );
        assert_eq!(
            sessions_dir(&loc.dsh_home, Agent::Codex),
            PathBuf::from("/h/.dsh/hooks/codex/sessions")
        );
        let g = Agent::Gemini.files(Scope::User, &loc);
        assert_eq!(g.hooks, PathBuf::from("/h/.gemini/settings.json"));
        assert_eq!(g.native, g.hooks);
    }
}
