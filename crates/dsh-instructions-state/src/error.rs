//! The crate's one error type: a configuration the plugin refuses, or a
//! rule file's front matter that cannot load. Every variant names the field
//! it is about ([`StateError::field`]); a caller adds the file or flag.

use crate::rules::{MAX_GLOB_BYTES, MAX_GLOBS};

/// Why a configuration is refused (R-CFG-1..5, R-CLI-5) or a rule is
/// unavailable (R-RULE-2). Every message starts with the field it is about;
/// the caller names the file or flag.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
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

    /// The front matter is neither a YAML mapping nor (for `cursor`) a block
    /// of `key: value` lines.
    #[error("front matter: not a YAML mapping ({detail})")]
    NotAMapping {
        /// What the parser said, or what it found instead of a mapping.
        detail: String,
    },
    /// A known field holds a value of the wrong type.
    #[error("{field}: must be {expected}")]
    WrongType {
        /// The front matter key.
        field: &'static str,
        /// What it accepts.
        expected: &'static str,
    },
    /// More than [`MAX_GLOBS`](crate::rules::MAX_GLOBS) globs.
    #[error("{field}: {count} globs, at most {MAX_GLOBS}")]
    TooManyGlobs {
        /// The front matter key.
        field: &'static str,
        /// How many it holds.
        count: usize,
    },
    /// A glob over [`MAX_GLOB_BYTES`](crate::rules::MAX_GLOB_BYTES) bytes.
    #[error("{field}: a glob of {bytes} bytes, at most {MAX_GLOB_BYTES}")]
    GlobTooLong {
        /// The front matter key.
        field: &'static str,
        /// Its length.
        bytes: usize,
    },
    /// A path-scoped rule none of whose globs compiles (never promoted to
    /// always on, R-RULE-8).
    #[error("{field}: no glob compiles")]
    NoGlobCompiles {
        /// The front matter key.
        field: &'static str,
    },
}

impl StateError {
    /// The configuration key or front matter key the error is about
    /// (`front matter` for a rule's block as a whole).
    pub fn field(&self) -> &'static str {
        match self {
            Self::MissingMaxBytes => "max_bytes",
            Self::InvalidNumber { field, .. } => field,
            Self::UnknownPreset { .. } => "preset",
            Self::UnknownPolicy { .. } => "candidate_policy",
            Self::UnknownRuleFormat { .. } => "rule_formats",
            Self::NotAMapping { .. } => "front matter",
            Self::WrongType { field, .. }
            | Self::TooManyGlobs { field, .. }
            | Self::GlobTooLong { field, .. }
            | Self::NoGlobCompiles { field } => field,
        }
    }
}
