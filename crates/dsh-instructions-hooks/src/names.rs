//! The names of the five agents and the two install scopes, as the command
//! line and the paths spell them: the one module both the installer's
//! facts ([`crate::agent`]) and the tool table (`crate::tools`) build on.

use std::fmt;
use std::str::FromStr;

use crate::error::HookError;

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
}

/// Where the hooks are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    /// The user's own settings: every project of that user.
    #[default]
    User,
    /// One project's settings (`<project>/.claude/`, `.codex/`, `.gemini/`,
    /// `.github/hooks/`, `.qwen/`).
    Project,
}

impl Agent {
    /// All agents, in a stable order.
    pub const ALL: [Agent; 7] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Qwen,
        Agent::Pi,
        Agent::Opencode,
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
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Agent {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "claude" => Ok(Agent::Claude),
            "codex" => Ok(Agent::Codex),
            "gemini" => Ok(Agent::Gemini),
            "copilot" => Ok(Agent::Copilot),
            "qwen" => Ok(Agent::Qwen),
            "pi" => Ok(Agent::Pi),
            "opencode" => Ok(Agent::Opencode),
            _ => Err(HookError::UnknownName {
                what: "agent",
                given: s.to_owned(),
                expected: "claude, codex, gemini, copilot, qwen, pi or opencode",
            }),
        }
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

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "user" => Ok(Scope::User),
            "project" => Ok(Scope::Project),
            _ => Err(HookError::UnknownName {
                what: "scope",
                given: s.to_owned(),
                expected: "user or project",
            }),
        }
    }
}
