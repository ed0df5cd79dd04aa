//! Command-line grammar (clap derive). Every subcommand carries an example
//! in its `--help` (`after_help`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Shows which workspace instruction files (AGENTS.md, CLAUDE.md, *.local.md,
/// the user-global file) a coding agent would load, exactly as the model
/// would see them, and why.
#[derive(Debug, Parser)]
#[command(
    name = "dsh-instructions",
    version,
    after_help = "\
Exit status: 0 success, 1 `check` (or `hook doctor`) found a problem, 2 any error.
Configuration: flags win over $DSH_HOME/settings.yaml (section
agent_instructions), which wins over presets and defaults.

Example:
  dsh-instructions explain --cwd ~/src/app/web"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print exactly the baseline text the model would receive.
    #[command(after_help = "\
The text is printed byte for byte, followed by one newline; nothing is
printed when no instructions load.

Example:
  dsh-instructions show --cwd ~/src/app/pkg --max-bytes 8192")]
    Show(ViewArgs),
    /// Explain every candidate file from the project root to the cwd.
    #[command(after_help = "\
Lists the project root and why, the DSH home, every directory from the root
to the cwd with each candidate's fate (loaded, shadowed, points to, duplicate,
absent, unavailable, outside trusted roots, omitted or truncated by the
budget), with imports on each loaded file's @path import tree and each
target's fate, the byte ledger and the baseline identity. With rule formats
on (--rules, or rule_formats), every rule file with its kind (always on,
path-scoped with its globs, manual, unavailable) and whether it is attached
at the cwd; --touch PATH... shows what touching those paths would attach.

Example:
  dsh-instructions explain --cwd ~/src/app/pkg --policy all-distinct --json
  dsh-instructions explain --rules claude,cursor --touch src/api/h.ts")]
    Explain(ExplainArgs),
    /// Exit 1 when any instruction file would not load whole (for CI).
    #[command(after_help = "\
Exit status: 0 when every instruction file from the root to the cwd loads
whole; 1 with one line per cause when a file would be omitted, truncated,
unavailable, outside the trusted roots, or shadowed by a sibling whose content
differs (a small pointer file naming the winner, e.g. `@AGENTS.md`, is fine),
or (with imports on) an @path import would not expand, or (with rule formats
on) a rule file cannot load; 2 for usage or configuration errors.

Example:
  dsh-instructions check --cwd . --max-bytes 16384")]
    Check(LookArgs),
    /// Drive a persisted session and watch workspace messages appear.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Run as an agent's hook, or install, remove and check that hook.
    #[command(after_help = "\
Without a subcommand, reads one hook event on stdin and answers on stdout in
the agent's format (SPEC §12); with `--part K`, only the K-th piece of at
most 9,000 bytes of the event's message (one registered entry per piece). `install` registers this binary as the hook of
the agent and switches the agent's own instruction loading off; `uninstall`
undoes both; `doctor` reports what is installed.

Example:
  dsh-instructions hook install --agent claude --dry-run")]
    Hook(HookArgs),
}

/// `hook`: the event handler (no subcommand) or its installer (R-HOOK-1, R-HOOK-5).
#[derive(Debug, Clone, Args)]
pub(crate) struct HookArgs {
    /// The agent: claude, codex, gemini, copilot, qwen, pi, opencode or cline.
    #[arg(long, value_name = "AGENT", global = true)]
    pub agent: Option<dsh_instructions_hooks::Agent>,
    /// Answer only piece K (1..=8) of the event's composed message, `{}`
    /// when it has none; without it, the whole message in one answer.
    #[arg(long, value_name = "K")]
    pub part: Option<u32>,
    /// The event being answered, for an agent whose stdin names none
    /// (Copilot CLI's camelCase events; the installed command says which).
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
    /// Install, uninstall or check; none: handle one event from stdin.
    #[command(subcommand)]
    pub action: Option<HookAction>,
}

/// `hook install | uninstall | doctor` (R-HOOK-5).
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum HookAction {
    /// Register the hook in the agent's settings; switch native loading off.
    #[command(after_help = "\
Merges into the agent's settings (other hooks and keys are kept; running it
again changes nothing), saves the previous file as <file>.dsh-backup, and
records the agent's native-loading setting in $DSH_HOME/hooks/<agent>/install.json
so `uninstall` can restore it. For Codex it also persists the hooks' trust.

--rules FORMATS writes the rule formats the hook reads (claude, cursor,
copilot, windsurf, comma-separated; none for none) as rule_formats into
$DSH_HOME/hooks/<agent>/config.json; uninstall takes that out again. The
Claude Code hook reads claude rules without it; Codex and Gemini read none.

pi and opencode have no command hooks: install writes one file where they
load extensions (~/.pi/agent/extensions/dsh-instructions.ts) or plugins
(~/.config/opencode/plugin/dsh-instructions.js), which loads the extension or
plugin of the npm package dsh-agent-instructions by its absolute path
(--package DIR, default: the one in `npm root -g`); their own loading stays on.

Example:
  dsh-instructions hook install --agent codex --scope user
  dsh-instructions hook install --agent codex --rules claude,cursor
  npm install -g dsh-agent-instructions && dsh-instructions hook install --agent pi")]
    Install(HookInstallArgs),
    /// Remove the hook and restore the agent's native loading.
    #[command(after_help = "\
Example:
  dsh-instructions hook uninstall --agent gemini --dry-run")]
    Uninstall(HookChangeArgs),
    /// Report what is installed; exit 1 when anything is missing or stale.
    #[command(after_help = "\
Per event: present, missing or stale; whether the agent's own instruction
loading is off (else files may reach the model twice); for Codex whether the
hooks are trusted. Exit status 0 when healthy, 1 when not, 2 on errors.

Example:
  dsh-instructions hook doctor --agent claude")]
    Doctor(HookTargetArgs),
}

/// Which settings `hook install|uninstall|doctor` work on.
#[derive(Debug, Clone, Args)]
pub(crate) struct HookTargetArgs {
    /// user (the agent's settings in your home) or project.
    #[arg(long, value_name = "SCOPE", default_value = "user")]
    pub scope: dsh_instructions_hooks::Scope,
    /// The project for --scope project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The hook command to register (default: this binary with `hook --agent A`).
    #[arg(long, value_name = "CMD", hide = true)]
    pub command: Option<String>,
}

/// Arguments of `hook install` and `hook uninstall`.
#[derive(Debug, Clone, Args)]
pub(crate) struct HookChangeArgs {
    #[command(flatten)]
    pub target: HookTargetArgs,
    /// Print the change as a unified diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `hook install`.
#[derive(Debug, Clone, Args)]
pub(crate) struct HookInstallArgs {
    #[command(flatten)]
    pub change: HookChangeArgs,
    /// Rule formats the hook reads, comma-separated: claude, cursor,
    /// copilot, windsurf (`none` for none), written into the hook's
    /// config.json (R-RULE-7).
    #[arg(long, value_name = "FORMATS")]
    pub rules: Option<String>,
    /// pi and opencode: the directory of the installed npm package
    /// dsh-agent-instructions (default: `$(npm root -g)/dsh-agent-instructions`).
    #[arg(long, value_name = "DIR")]
    pub package: Option<PathBuf>,
}

/// Flags that shape the configuration (SPEC §3); they win over
/// `$DSH_HOME/settings.yaml`, which wins over presets and defaults.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ConfigArgs {
    /// Byte budget of one rendered baseline (default 65536; <= 0 disables loading).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_bytes: Option<i64>,
    /// Per-file cap in bytes (default 1048576).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_source_bytes: Option<i64>,
    /// Preset: dsh, codex, claude, opencode, gemini, copilot or qwen (claude = Claude Code's own selection:
    /// CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, AGENTS.md where no CLAUDE file is on
    /// the path, ~/.claude/CLAUDE.md, imports to depth 4).
    #[arg(long, value_name = "P")]
    pub preset: Option<String>,
    /// Use the hook adapter's configuration for this agent (claude, codex,
    /// gemini, copilot, qwen, pi or opencode; `$DSH_HOME/hooks/<agent>/config.json` included) instead of
    /// `settings.yaml`: shows exactly what that agent's hook delivers here
    /// (R-HOOK-8). Other flags still win over it.
    #[arg(long, value_name = "AGENT", conflicts_with = "preset")]
    pub agent: Option<dsh_instructions_hooks::Agent>,
    /// Candidate policy: first-wins or all-distinct.
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<String>,
    /// Base candidate names, comma-separated (default AGENTS.md,CLAUDE.md).
    #[arg(long, value_name = "A,B")]
    pub candidates: Option<String>,
    /// Overlay candidate names, comma-separated; "" disables overlays.
    #[arg(long, value_name = "A,B")]
    pub local_candidates: Option<String>,
    /// Project root markers, comma-separated (default .git).
    #[arg(long, value_name = "M,..")]
    pub markers: Option<String>,
    /// DSH home directory (default $DSH_HOME, else ~/.dsh).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Also trust this directory for reading instruction files (repeatable).
    #[arg(long = "trust", value_name = "DIR")]
    pub trust: Vec<PathBuf>,
    /// Trust the whole filesystem (`/`).
    #[arg(long)]
    pub trust_all: bool,
    /// Expand `@path` imports in instruction files (on in the claude and
    /// gemini presets).
    #[arg(long, conflicts_with = "no_imports")]
    pub imports: bool,
    /// Do not expand `@path` imports, whatever the preset says.
    #[arg(long)]
    pub no_imports: bool,
    /// Rule formats to read, comma-separated: claude, cursor, copilot,
    /// windsurf (`none` for none; the claude preset reads claude).
    #[arg(long, value_name = "FORMATS")]
    pub rules: Option<String>,
}

/// Where and with what configuration `show`, `explain` and `check` look
/// (the arguments of `check`).
#[derive(Debug, Clone, Args)]
pub(crate) struct LookArgs {
    /// Session working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// Arguments of `show` and `explain`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ViewArgs {
    #[command(flatten)]
    pub look: LookArgs,
    /// Print a JSON document instead of text (shape: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `explain`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ExplainArgs {
    #[command(flatten)]
    pub view: ViewArgs,
    /// Show which rules a touch of these paths would attach (relative to
    /// the cwd or absolute).
    #[arg(long = "touch", value_name = "PATH", num_args = 1..)]
    pub touch: Vec<PathBuf>,
}

/// `session …` subcommands (R-CLI-3).
#[derive(Debug, Subcommand)]
pub(crate) enum SessionCommand {
    /// Create a session and print its id.
    #[command(after_help = "\
Sessions live in $DSH_HOME/sessions/<id>/session.jsonl.

Example:
  id=$(dsh-instructions session new --cwd ~/src/app)")]
    New {
        /// Session working directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Run a turn's first pre-step with a prompt; print the folded workspace message.
    #[command(after_help = "\
Appends turn_start, the entered batch (the prompt, then the workspace message
with its typed source) and turn_end.

Example:
  dsh-instructions session prompt \"$id\" 'fix the build'")]
    Prompt {
        /// Session id.
        id: String,
        /// Prompt text.
        text: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Record a successful `read` of PATH; print the pending workspace message.
    #[command(after_help = "\
The pending message lives in the inbox, which is not persisted: the next
command re-derives it from the tool results recorded since the last message.

Example:
  dsh-instructions session touch \"$id\" pkg/src/lib.rs")]
    Touch {
        /// Session id.
        id: String,
        /// Touched path, relative to the session cwd or absolute.
        path: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// End a tool step: the pending workspace message enters history alone.
    #[command(after_help = "\
Appends step_end and runs the pre-step of the tool-continuation step, which
enters the pending workspace message (if any) on its own.

Example:
  dsh-instructions session step-end \"$id\"")]
    StepEnd {
        /// Session id.
        id: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Hide events from the visible surface (default: the latest visible baseline).
    #[command(after_help = "\
Example:
  dsh-instructions session compact \"$id\" --workspace")]
    Compact {
        /// Session id.
        id: String,
        /// Hide every visible workspace message.
        #[arg(long, conflicts_with = "all")]
        workspace: bool,
        /// Hide every visible event.
        #[arg(long)]
        all: bool,
        /// Override the DSH home that holds the sessions.
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
    },
    /// Print what the next pre-step of a new loop instance would enter.
    #[command(after_help = "\
Nothing is written (except a repair of a torn log). Edit files between
commands to watch replace/remove transitions appear.

Example:
  dsh-instructions session resume \"$id\"")]
    Resume {
        /// Session id.
        id: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Print the session's events, one per line.
    #[command(after_help = "\
Example:
  dsh-instructions session log \"$id\"")]
    Log {
        /// Session id.
        id: String,
        /// Override the DSH home that holds the sessions.
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        /// Print full message texts, not only one-line summaries.
        #[arg(long)]
        full: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use rstest::rstest;

    #[test]
    fn grammar_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_an_example() {
        let cli = Cli::command();
        let mut missing = Vec::new();
        for sub in cli.get_subcommands() {
            let leaves: Vec<_> = if sub.has_subcommands() {
                sub.get_subcommands().collect()
            } else {
                vec![sub]
            };
            for leaf in leaves {
                let help = leaf
                    .get_after_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if !help.contains("Example:\n  dsh-instructions ")
                    && !help.contains("$(dsh-instructions ")
                {
                    missing.push(leaf.get_name().to_owned());
                }
            }
        }
        assert!(missing.is_empty(), "no example in --help of {missing:?}");
    }

    #[rstest]
    #[case(&["dsh-instructions", "show", "--max-bytes", "-1"], Some(-1))]
    #[case(&["dsh-instructions", "show", "--max-bytes", "10"], Some(10))]
    #[case(&["dsh-instructions", "show"], None)]
    fn negative_budgets_parse(#[case] argv: &[&str], #[case] want: Option<i64>) {
        let cli = Cli::try_parse_from(argv).expect("valid argv");
        let Command::Show(a) = cli.command else {
            panic!("not show")
        };
        assert_eq!(a.look.config.max_bytes, want);
    }

    #[test]
    fn trust_is_repeatable() {
        let cli =
            Cli::try_parse_from(["x", "check", "--trust", "/a", "--trust", "/b"]).expect("valid");
        let Command::Check(a) = cli.command else {
            panic!("not check")
        };
        assert_eq!(a.config.trust, [PathBuf::from("/a"), PathBuf::from("/b")]);
    }

    #[rstest]
    #[case(&["x", "show"], false, false)]
    #[case(&["x", "show", "--imports"], true, false)]
    #[case(&["x", "explain", "--no-imports"], false, true)]
    fn import_flags_parse(#[case] argv: &[&str], #[case] on: bool, #[case] off: bool) {
        // R-CFG-10
        let cli = Cli::try_parse_from(argv).expect("valid argv");
        let a = match cli.command {
            Command::Show(a) => a,
            Command::Explain(e) => e.view,
            _ => panic!("not show/explain"),
        };
        let c = a.look.config;
        assert_eq!((c.imports, c.no_imports), (on, off));
    }

    #[test]
    fn explain_takes_touches_and_rules() {
        // R-RULE-1: --rules names formats; --touch takes several paths.
        let cli = Cli::try_parse_from([
            "x",
            "explain",
            "--rules",
            "claude,cursor",
            "--touch",
            "a.ts",
            "b/c.py",
        ])
        .expect("valid");
        let Command::Explain(e) = cli.command else {
            panic!("not explain")
        };
        assert_eq!(e.touch, [PathBuf::from("a.ts"), PathBuf::from("b/c.py")]);
        assert_eq!(e.view.look.config.rules.as_deref(), Some("claude,cursor"));
    }

    #[test]
    fn import_flags_conflict() {
        assert!(Cli::try_parse_from(["x", "show", "--imports", "--no-imports"]).is_err());
    }

    #[test]
    fn compact_modes_conflict() {
        assert!(
            Cli::try_parse_from(["x", "session", "compact", "s", "--workspace", "--all"]).is_err()
        );
    }

    #[rstest]
    #[case(&["x", "hook", "--agent", "codex"], None)]
    #[case(&["x", "hook", "install", "--agent", "codex"], Some("install"))]
    #[case(&["x", "hook", "--agent", "codex", "doctor"], Some("doctor"))]
    fn hook_takes_the_agent_before_or_after_the_action(
        #[case] argv: &[&str],
        #[case] action: Option<&str>,
    ) {
        let cli = Cli::try_parse_from(argv).expect("valid");
        let Command::Hook(h) = cli.command else {
            panic!("not hook")
        };
        assert_eq!(h.agent, Some(dsh_instructions_hooks::Agent::Codex));
        let got = h.action.as_ref().map(|a| match a {
            HookAction::Install(_) => "install",
            HookAction::Uninstall(_) => "uninstall",
            HookAction::Doctor(_) => "doctor",
        });
        assert_eq!(got, action);
    }

    #[test]
    fn hook_rejects_unknown_agents_and_scopes() {
        assert!(Cli::try_parse_from(["x", "hook", "--agent", "cursor"]).is_err());
        assert!(
            Cli::try_parse_from([
                "x", "hook", "doctor", "--agent", "claude", "--scope", "team"
            ])
            .is_err()
        );
    }
}
