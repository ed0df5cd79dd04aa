#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod checkpoint;
mod event;
mod lock;
pub mod parse;
pub mod side;
mod store;
mod summary;
mod time;

use std::collections::BTreeSet;

use camino::{Utf8Path, Utf8PathBuf};

pub use event::{Event, EventKind, SCHEMA_VERSION, SessionHeader};
pub use lock::{LockWait, SessionLock};
pub use store::{CHECKPOINT_AFTER_BYTES, OpenReport, SessionLog};
pub use summary::{RawSource, SurfaceSummary, VisibleSource};
pub use time::{new_session_id, rfc3339_utc};

use parse::{ParsedLog, read_log};

/// File name of a session log inside its session directory.
pub const LOG_FILE_NAME: &str = "session.jsonl";

/// File name of the session lock next to the log (R-LOG-4). Never remove it
/// while the session may be in use.
pub const LOCK_FILE_NAME: &str = "session.lock";

/// File name of the derived checkpoint next to the log (R-LOG-5).
pub const CHECKPOINT_FILE_NAME: &str = "session.checkpoint.json";

/// Why a session log operation failed.
#[derive(thiserror::Error, Debug)]
pub enum LogError {
    /// A filesystem operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done, e.g. `"append"`.
        op: &'static str,
        /// The file or directory concerned.
        path: Utf8PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// [`SessionLog::create`] found a log already there.
    #[error("session log already exists: {path}")]
    AlreadyExists {
        /// The existing log.
        path: Utf8PathBuf,
    },
    /// Line 1 is missing, unterminated or not a valid header.
    #[error("invalid session log header: {reason}")]
    InvalidHeader {
        /// What is wrong.
        reason: String,
    },
    /// The header names a schema this build does not read.
    #[error("unsupported session log schema {found} (this build reads {SCHEMA_VERSION})")]
    UnsupportedSchema {
        /// The schema found in the header.
        found: u64,
    },
    /// An event cannot be written (an [`EventKind::Unknown`] without a string
    /// `type` of its own).
    #[error("invalid event: {reason}")]
    InvalidEvent {
        /// What is wrong.
        reason: String,
    },
    /// A session id that is not a single plain path component.
    #[error("invalid session id {id:?}")]
    InvalidSessionId {
        /// The rejected id.
        id: String,
    },
    /// Another writer held the session lock for longer than the
    /// [`LockWait`] bound (R-LOG-4). Nothing was read or written.
    #[error(
        "session is busy: another process held its lock {path} for {waited:.1?}, longer than this command waits"
    )]
    LockTimeout {
        /// The lock file.
        path: Utf8PathBuf,
        /// How long this process waited.
        waited: std::time::Duration,
    },
    /// An earlier append failed and could not be rolled back; reopen the log.
    #[error("session log is in an unknown state after a failed append; reopen it")]
    Poisoned,
}

/// The directory of session `id` under `sessions_root`: `<root>/<id>`.
///
/// # Errors
/// [`LogError::InvalidSessionId`] unless `id` is one plain path component:
/// not empty, not `.`/`..`, no `/`, `\` or NUL (so an id can never point
/// outside the root).
///
/// ```
/// use camino::Utf8Path;
/// let root = Utf8Path::new("/home/ada/.dsh/sessions");
/// assert_eq!(dsh_session_log::session_dir(root, "abc")?, "/home/ada/.dsh/sessions/abc");
/// assert!(dsh_session_log::session_dir(root, "../x").is_err());
/// # Ok::<(), dsh_session_log::LogError>(())
/// ```
pub fn session_dir(sessions_root: &Utf8Path, id: &str) -> Result<Utf8PathBuf, LogError> {
    let plain = !id.is_empty() && id != "." && id != ".." && !id.contains(['/', '\\', '\0']);
    if plain {
        Ok(sessions_root.join(id))
    } else {
        Err(LogError::InvalidSessionId { id: id.to_owned() })
    }
}

/// Reads and parses a log file without repairing or locking it (for viewers
/// such as `dsh-instructions session log`).
///
/// # Errors
/// [`LogError::Io`] when the file cannot be read; header errors of
/// [`read_log`].
pub fn read_log_file(path: &Utf8Path) -> Result<ParsedLog, LogError> {
    let bytes = std::fs::read(path).map_err(|source| LogError::Io {
        op: "read",
        path: path.to_owned(),
        source,
    })?;
    read_log(&bytes)
}

/// The surface of `events` (R-LOG-1): every event not hidden by a compaction,
/// in order, without the compaction events themselves. A compaction hides
/// only sequence numbers *earlier* than its own; listing a later or unknown
/// number has no effect.
///
/// ```
/// use dsh_session_log::{Event, EventKind, surface};
/// let events = [
///     Event { seq: 1, kind: EventKind::TurnStart },
///     Event { seq: 2, kind: EventKind::Compaction { hide: vec![1, 3] } },
///     Event { seq: 3, kind: EventKind::TurnEnd },
/// ];
/// let seqs: Vec<u64> = surface(&events).iter().map(|e| e.seq).collect();
/// assert_eq!(seqs, [3]);
/// ```
pub fn surface(events: &[Event]) -> Vec<&Event> {
    let mut hidden = BTreeSet::new();
    for event in events {
        if let EventKind::Compaction { hide } = &event.kind {
            hidden.extend(hide.iter().copied().filter(|&s| s < event.seq));
        }
    }
    events
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::Compaction { .. }) && !hidden.contains(&e.seq))
        .collect()
}

#[cfg(test)]
mod tests;
