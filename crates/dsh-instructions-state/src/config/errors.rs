//! What validation reports: the refusals ([`ConfigError`], each naming its
//! field) and the ignored entries ([`ConfigWarning`], with the reason texts
//! of [`reasons`]). Separate so the parsers of every field share one
//! vocabulary of problems.

use std::fmt;

/// A configuration the plugin refuses; every message names its field (R-CLI-5).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// Neither `max_bytes` nor a preset was given (R-CFG-1).
    #[error("max_bytes is required: give a byte budget (<= 0 disables loading) or choose a preset")]
    MissingMaxBytes,
    /// A numeric field holds a value of the wrong kind.
    #[error("{field} must be {expected}, got {got}")]
    InvalidNumber {
        /// The configuration key.
        field: &'static str,
        /// What the field accepts.
        expected: &'static str,
        /// The value as written.
        got: String,
    },
    /// `preset` names no known preset.
    #[error("preset must be one of dsh, codex, claude, opencode, gemini, got {name:?}")]
    UnknownPreset {
        /// The name as written.
        name: String,
    },
    /// `candidate_policy` names no known policy.
    #[error("candidate_policy must be first-wins or all-distinct, got {name:?}")]
    UnknownPolicy {
        /// The name as written.
        name: String,
    },
    /// `rule_formats` names no known rule format (R-CFG-12).
    #[error("rule_formats entries must be claude, cursor, copilot or windsurf, got {name:?}")]
    UnknownRuleFormat {
        /// The name as written.
        name: String,
    },
}

impl ConfigError {
    /// The configuration key the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            Self::MissingMaxBytes => "max_bytes",
            Self::InvalidNumber { field, .. } => field,
            Self::UnknownPreset { .. } => "preset",
            Self::UnknownPolicy { .. } => "candidate_policy",
            Self::UnknownRuleFormat { .. } => "rule_formats",
        }
    }
}

/// A configured value that validation ignored: a list entry (R-CFG-4/5) or a
/// blank `dsh_home`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The configuration key (a name list, or `dsh_home`).
    pub field: &'static str,
    /// The entry as written.
    pub entry: String,
    /// Why it was ignored.
    pub reason: &'static str,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: ignored entry \"{}\": {}",
            self.field,
            self.entry.escape_debug(),
            self.reason
        )
    }
}

/// Reason texts of [`ConfigWarning::reason`].
pub mod reasons {
    /// An empty string.
    pub const EMPTY: &str = "empty name";
    /// `.` or `..`.
    pub const DOT: &str = "not a file name";
    /// Contains `/` or `\`.
    pub const SEPARATOR: &str = "contains a path separator";
    /// Contains NUL.
    pub const NUL: &str = "contains NUL";
    /// Repeats an earlier entry.
    pub const DUPLICATE: &str = "duplicate of an earlier entry";
    /// A blank `dsh_home`.
    pub const BLANK_HOME: &str = "blank, treated as unset";
    /// A user instruction file that is not a `~/…` path to a file.
    pub const NOT_HOME_PATH: &str = "not a ~/ path to a file";
    /// An ancestor instruction file that is not a plain relative path (no
    /// empty, `.` or `..` component, no leading `/`, no `\` or NUL).
    pub const NOT_RELATIVE_PATH: &str = "not a plain relative path to a file";
}
