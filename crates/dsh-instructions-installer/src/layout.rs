//! Where an installation writes: the agents' configuration directories as
//! the caller resolved them ([`Locations`]), the files one installation at a
//! scope touches ([`Files`]) and the installer's own namespace under the
//! DSH home. The facts about the agents themselves (events, matchers,
//! parts, timeouts) are the hook's (`dsh_instructions_hooks::Agent`).

use std::path::{Path, PathBuf};

use dsh_instructions_hooks::{Agent, Scope};

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
    /// pi's agent directory (`$PI_CODING_AGENT_DIR`, default
    /// `~/.pi/agent`): its extensions are in `extensions/`.
    pub pi_agent_dir: PathBuf,
    /// opencode's global configuration directory (`$XDG_CONFIG_HOME/opencode`,
    /// default `~/.config/opencode`): its plugins are in `plugin/`.
    pub opencode_config: PathBuf,
}

impl Locations {
    /// The locations of a `home` with every agent directory at its default:
    /// `~/.codex`, `~/.dsh`, `~/.pi/agent`, `~/.config/opencode`.
    ///
    /// ```
    /// use dsh_instructions_installer::Locations;
    /// let loc = Locations::in_home("/h".into(), "/p".into());
    /// assert_eq!(loc.pi_agent_dir, std::path::Path::new("/h/.pi/agent"));
    /// ```
    pub fn in_home(home: PathBuf, project: PathBuf) -> Self {
        Self {
            codex_home: home.join(".codex"),
            dsh_home: home.join(".dsh"),
            pi_agent_dir: home.join(".pi").join("agent"),
            opencode_config: home.join(".config").join("opencode"),
            home,
            project,
        }
    }
}

/// The files one installation touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The JSON file holding the `hooks` object; for Cline, the directory
    /// of its hook files (one per event).
    pub hooks: PathBuf,
    /// The file holding the native-loading setting (for Claude Code,
    /// Gemini CLI and Qwen Code the same as `hooks`; for Codex a
    /// `config.toml`; Copilot CLI has no such setting, decision 0067, and
    /// this is its `hooks` file too).
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

/// The adapter's own file in Copilot CLI's hooks directory (Copilot reads
/// every `*.json` there).
const COPILOT_HOOKS_FILE: &str = "dsh-instructions.json";

/// The file's name in the agent's directory: pi loads `extensions/*.ts`
/// (through jiti), opencode `plugin/*.js` (agents/pi.md, agents/opencode.md).
fn in_process_file(agent: Agent) -> &'static str {
    match agent {
        Agent::Pi => "extensions/dsh-instructions.ts",
        _ => "plugin/dsh-instructions.js",
    }
}

/// The per-user or per-project configuration directory's name.
fn config_dir_name(agent: Agent, scope: Scope) -> &'static str {
    match (agent, scope) {
        (Agent::Claude, _) => ".claude",
        (Agent::Codex, _) => ".codex",
        (Agent::Gemini, _) => ".gemini",
        (Agent::Qwen, _) => ".qwen",
        (Agent::Copilot, Scope::User) => ".copilot",
        (Agent::Copilot, Scope::Project) => ".github",
        (Agent::Pi, _) => ".pi",
        (Agent::Opencode, _) => ".opencode",
        (Agent::Cline, Scope::User) => ".cline",
        (Agent::Cline, Scope::Project) => ".clinerules",
    }
}

/// The files an installation of `agent` at `scope` touches.
pub(crate) fn files(agent: Agent, scope: Scope, loc: &Locations) -> Files {
    let state = installer_dir(&loc.dsh_home).join(format!("{}.json", agent.as_str()));
    let legacy_state = loc
        .dsh_home
        .join("hooks")
        .join(agent.as_str())
        .join("install.json");
    let dir = match (agent, scope) {
        (Agent::Codex, Scope::User) => loc.codex_home.clone(),
        (Agent::Pi, Scope::User) => loc.pi_agent_dir.clone(),
        (Agent::Opencode, Scope::User) => loc.opencode_config.clone(),
        (_, Scope::User) => loc.home.join(config_dir_name(agent, scope)),
        (_, Scope::Project) => loc.project.join(config_dir_name(agent, scope)),
    };
    // Every agent but Codex keeps its hooks and its native switch in one
    // place.
    let one = match agent {
        // Cline's hooks directory: one file per event (`crate::cline`).
        Agent::Cline => dir.join("hooks"),
        Agent::Copilot => dir.join("hooks").join(COPILOT_HOOKS_FILE),
        Agent::Claude | Agent::Gemini | Agent::Qwen => dir.join("settings.json"),
        // One file of our own, where the agent loads extensions or
        // plugins from (decision 0086).
        Agent::Pi | Agent::Opencode => dir.join(in_process_file(agent)),
        Agent::Codex => {
            return Files {
                hooks: dir.join("hooks.json"),
                native: dir.join("config.toml"),
                trust: Some(loc.codex_home.join("config.toml")),
                state,
                legacy_state,
            };
        }
    };
    Files {
        hooks: one.clone(),
        native: one,
        trust: None,
        state,
        legacy_state,
    }
}

/// The installer's own namespace: `$DSH_HOME/installer/`, apart from the
/// hook's session stores, so no session id can name an installer file.
pub fn installer_dir(dsh_home: &Path) -> PathBuf {
    dsh_home.join("installer")
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
    use dsh_instructions_hooks::agents::{hook_command, sessions_dir};
    use rstest::rstest;

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

    #[test]
    fn codex_project_trust_stays_in_the_user_config() {
        let loc = Locations::in_home("/h".into(), "/p".into());
        let f = files(Agent::Codex, Scope::Project, &loc);
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
        let g = files(Agent::Gemini, Scope::User, &loc);
        assert_eq!(g.hooks, PathBuf::from("/h/.gemini/settings.json"));
        assert_eq!(g.native, g.hooks);
    }

    /// Copilot CLI: a file of our own in its hooks directory (user:
    /// `~/.copilot/hooks/`, project: `.github/hooks/`); Qwen Code: its
    /// `settings.json`, hooks and native setting in one.
    #[rstest]
    #[case(Agent::Copilot, Scope::User, "/h/.copilot/hooks/dsh-instructions.json")]
    #[case(
        Agent::Copilot,
        Scope::Project,
        "/p/.github/hooks/dsh-instructions.json"
    )]
    #[case(Agent::Qwen, Scope::User, "/h/.qwen/settings.json")]
    #[case(Agent::Qwen, Scope::Project, "/p/.qwen/settings.json")]
    #[case(Agent::Pi, Scope::User, "/h/.pi/agent/extensions/dsh-instructions.ts")]
    #[case(Agent::Pi, Scope::Project, "/p/.pi/extensions/dsh-instructions.ts")]
    #[case(
        Agent::Opencode,
        Scope::User,
        "/h/.config/opencode/plugin/dsh-instructions.js"
    )]
    #[case(
        Agent::Opencode,
        Scope::Project,
        "/p/.opencode/plugin/dsh-instructions.js"
    )]
    #[case(Agent::Cline, Scope::User, "/h/.cline/hooks")]
    #[case(Agent::Cline, Scope::Project, "/p/.clinerules/hooks")]
    fn the_files_of_agents_with_one_file(
        #[case] agent: Agent,
        #[case] scope: Scope,
        #[case] hooks: &str,
    ) {
        let loc = Locations::in_home("/h".into(), "/p".into());
        let f = files(agent, scope, &loc);
        assert_eq!(f.hooks, PathBuf::from(hooks));
        assert_eq!(f.native, f.hooks);
        assert_eq!(f.trust, None);
        assert_eq!(
            f.state,
            PathBuf::from(format!("/h/.dsh/installer/{agent}.json"))
        );
    }
}
