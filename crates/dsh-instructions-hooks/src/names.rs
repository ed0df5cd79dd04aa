//! The names of the five agents and the two install scopes, as the command
//! line and the paths spell them: the one module both the installer's
//! facts ([`crate::agent`]) and the tool table (`crate::tools`) build on.

use std::fmt;
use std::str::FromStr;

use crate::error::HookError;

// Both print as the command line spells them.
macro_rules! display_as_str {
    ($($ty:ty),+) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )+};
}
display_as_str!(Agent, Scope);

/// A coding agent the adapter can be installed into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code (`~/.claude/settings.json`).
    Claude,
    /// OpenAI Codex CLI (`$CODEX_HOME/hooks.json` and `config.toml`).
    Codex,
    /// Gemini CLI (`~/.gemini/settings.json`).
    Gemini,
    /// GitHub Copilot CLI (`~/.copilot/hooks/dsh-instructions.json`, a file
    /// of the adapter's own).
    Copilot,
    /// Qwen Code (`~/.qwen/settings.json`).
    Qwen,
    /// The pi coding agent: no command hooks; an extension on the Node
    /// binding (`~/.pi/agent/extensions/dsh-instructions.ts`, decision 0086).
    Pi,
    /// opencode: no command hooks; a plugin on the Node binding
    /// (`~/.config/opencode/plugin/dsh-instructions.js`, decision 0086).
    Opencode,
    /// Cline CLI (`~/.cline/hooks/PreToolUse` and `PostToolUse`, files of
    /// the adapter's own: Cline runs every file named after an event).
    Cline,
}

/// Where the hooks are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    /// The user's own settings: every project of that user.
    #[default]
    User,
    /// One project's settings (`<project>/.claude/`, `.codex/`, `.gemini/`,
    /// `.github/hooks/`, `.qwen/`, `.clinerules/hooks/`).
    Project,
}

impl Agent {
    /// All agents, in a stable order.
    pub const ALL: [Agent; 8] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Qwen,
        Agent::Pi,
        Agent::Opencode,
        Agent::Cline,
    ];

    /// The name used on the command line and in paths.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
            Agent::Pi => "pi",
            Agent::Opencode => "opencode",
            Agent::Cline => "cline",
        }
    }
}

impl FromStr for Agent {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let expected = "claude, codex, gemini, copilot, qwen, pi, opencode or cline";
        by_name(&Agent::ALL, Agent::as_str, s, "agent", expected)
    }
}

impl Scope {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

impl FromStr for Scope {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        by_name(
            &[Scope::User, Scope::Project],
            Scope::as_str,
            s,
            "scope",
            "user or project",
        )
    }
}

/// The one of `all` whose `name` is `given`: `FromStr` reads the same
/// table `as_str` writes.
fn by_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    given: &str,
    what: &'static str,
    expected: &'static str,
) -> Result<T, HookError> {
    all.iter()
        .copied()
        .find(|v| name(*v) == given)
        .ok_or_else(|| HookError::UnknownName {
            what,
            given: given.to_owned(),
            expected,
        })
}
