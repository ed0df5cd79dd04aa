//! The crate's one error type. The hook itself never fails the agent
//! (R-HOOK-1): an event's error is one line of the adapter's own log and
//! the answer `{}`; the library calls ([`crate::config::load_config`],
//! [`crate::event::HookEvent::parse`], parsing an [`crate::Agent`] or
//! [`crate::Scope`] name) return it.

use camino::Utf8PathBuf;
use dsh_instructions_session::SessionError;

/// Why a hook call could not do what it was asked; each variant names the
/// file, field or name it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// An agent or scope name that is not one of the known ones.
    #[error("unknown {what} `{given}` (expected {expected})")]
    UnknownName {
        /// `agent` or `scope`.
        what: &'static str,
        /// The name as given.
        given: String,
        /// The names there are.
        expected: &'static str,
    },
    /// The event's bytes are not a JSON object.
    #[error("the event is not a JSON object: {reason}")]
    NotJson {
        /// What the parser said.
        reason: String,
    },
    /// A field the event needs is missing, empty or of the wrong type.
    #[error("the event has no usable `{field}`")]
    MissingField {
        /// The field's name, as Claude Code spells it.
        field: &'static str,
    },
    /// The event's cwd is relative.
    #[error("the event's cwd is not absolute: {cwd}")]
    RelativeCwd {
        /// The cwd as given.
        cwd: String,
    },
    /// An agent's `config.json` exists but could not be read.
    #[error("{path}: {source}")]
    ConfigUnreadable {
        /// The file.
        path: Utf8PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An agent's `config.json` is not JSON.
    #[error("{path}: {source}")]
    ConfigNotJson {
        /// The file.
        path: Utf8PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What the parser said (its message includes line and column).
        source: serde_json::Error,
    },
    /// An agent's `config.json` is JSON but no object (serde would read
    /// `[]` as "no fields": a file that is not an object is a mistake,
    /// said as one).
    #[error("{path}: not a JSON object")]
    ConfigNotAnObject {
        /// The file.
        path: Utf8PathBuf,
    },
    /// The fields of an agent's `config.json` are no valid settings (an
    /// unknown key, a value of the wrong type).
    #[error("{path}: {source}")]
    ConfigInvalid {
        /// The file.
        path: Utf8PathBuf,
        /// What the settings reader said.
        source: serde_json::Error,
    },
    /// A session's `parts.json` (the record peer parts answer from) could
    /// not be read or written.
    #[error("{path}: {source}")]
    Records {
        /// The file.
        path: Utf8PathBuf,
        /// The I/O or encoding error.
        source: std::io::Error,
    },
    /// The agent session's store, log or settings.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The DSH home, where the hook keeps its state, cannot be resolved.
    #[error("the DSH home cannot be resolved")]
    NoHome,
    /// The process could not start its async runtime.
    #[error("cannot start the async runtime: {source}")]
    AsyncRuntime {
        /// The I/O error.
        source: std::io::Error,
    },
}
