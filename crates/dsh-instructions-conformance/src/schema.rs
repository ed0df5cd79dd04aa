//! Scenario types and strict YAML parsing (conformance format, version 1).
//!
//! Parsing is two-layered: serde (via `serde-saphyr`) rejects unknown keys and
//! bad enum values with a line and column, then [`Scenario::parse`] checks the
//! rules serde cannot express (exactly one action per step, a non-empty
//! `trusted_roots`, valid hex, …). Every error names the file and, inside a
//! step, the step number and action, so a scenario author can find it at once.
//!
//! The parts: the filesystem values (`fs`), the step actions (`steps`), the
//! expectations (`expect`) and the loading of a file (`load`); this file
//! holds the scenario itself and what it runs with.

mod expect;
mod fs;
mod load;
mod steps;
#[cfg(test)]
mod tests;

pub use expect::{
    ChangeAction, ChangeExpect, DigestExpect, Expect, IdentityExpect, Intro, MessageMatcher,
    Outcome, SourceExpect, VisibleExpect, VisibleMap,
};
pub use fs::{FaultErrno, FaultSpec, FsContent, FsEntry, FsMap, FsOpName};
pub use load::{Place, StepRef};
pub use steps::{Action, Compact, Decision, EventKind, PreStep, Remount, Resume, Step, ToolStep};

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

/// The `config` block is the state crate's own input type (SPEC §3 keys in
/// snake_case, unknown keys rejected): the scenario reads exactly what a
/// settings file would, and validation stays with the state crate.
pub use dsh_instructions_state::ConfigInput;

/// A filesystem provider a scenario runs on (R-CONF-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// The in-memory provider of `dsh-instructions-discovery`.
    Memory,
    /// The cap-std provider over a real temporary directory.
    Disk,
}

impl ProviderKind {
    /// The label used in runner output (`[memory]`, `[disk]`).
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::ProviderKind;
    /// assert_eq!(ProviderKind::Disk.label(), "disk");
    /// ```
    pub fn label(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Disk => "disk",
        }
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "memory" => Ok(Self::Memory),
            "disk" => Ok(Self::Disk),
            other => Err(format!("unknown provider `{other}` (memory | disk)")),
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Environment used for home resolution.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// `HOME`, default `/home/user`.
    #[serde(rename = "HOME", default = "default_home")]
    pub home: String,
    /// `DSH_HOME`, default unset.
    #[serde(rename = "DSH_HOME", default)]
    pub dsh_home: Option<String>,
}

fn default_home() -> String {
    "/home/user".to_owned()
}

impl Default for Env {
    fn default() -> Self {
        Self {
            home: default_home(),
            dsh_home: None,
        }
    }
}

/// A parsed scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Unique name (default: the file stem).
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// One line saying what is pinned.
    pub about: Option<String>,
    /// Free words for `--tag` filters.
    pub tags: Vec<String>,
    /// Providers to run on (default both).
    pub providers: Vec<ProviderKind>,
    /// Raw configuration, `None` when `disabled: true`.
    pub config: Option<ConfigInput>,
    /// Mount with no config (plugin off).
    pub disabled: bool,
    /// Mount without a filesystem provider.
    pub no_provider: bool,
    /// Environment for home resolution.
    pub env: Env,
    /// Explicit trusted roots (non-empty), or `None` for the default.
    pub trusted_roots: Option<Vec<String>>,
    /// Session cwd (absolute, scenario filesystem).
    pub cwd: String,
    /// Initial tree.
    pub fs: FsMap,
    /// Steps in order.
    pub steps: Vec<Step>,
}
