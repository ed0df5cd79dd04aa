//! Every failure the binding reports, as plain data: a stable code, a
//! message, and the path or field it concerns (R-NODE-3). `js.rs` turns one
//! into a JavaScript `Error` on the JavaScript thread; everything here is
//! testable without Node.

use dsh_agent_instructions::fs::DiscoveryError;
use dsh_agent_instructions::log::LogError;
use dsh_agent_instructions::{RuntimeError, SessionError, StateError};

/// The stable `code` of an `Error` the binding rejects with. The strings are
/// API: a product matches on them, so a code is never renamed or reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    /// A path argument is relative where it must be absolute (`path`).
    RelativePath,
    /// The cwd does not exist or is not a directory (`path`).
    MissingCwd,
    /// A path or string argument holds a NUL character (`field`).
    Nul,
    /// The configuration is invalid: an unknown key, a wrong type, an
    /// unknown preset (`field`).
    Config,
    /// An argument has the wrong shape: an unknown touch kind, an invalid
    /// session id, a non-string path (`field`).
    InvalidArgument,
    /// No session with that id in the store (`path`).
    NoSession,
    /// A session with that id already exists (`path`).
    SessionExists,
    /// The session directory is damaged or not a session: a bad header, an
    /// unknown schema, malformed settings (`path`).
    SessionDamaged,
    /// Another process holds the session lock longer than the store waits
    /// (`path`).
    SessionLocked,
    /// The session was closed (by `close()`, or after a panic).
    SessionClosed,
    /// The DSH home could not be resolved (`field`: the variable).
    Home,
    /// A filesystem operation on the store failed (`path`).
    Io,
    /// The call's `AbortSignal` fired; Node's own code for it.
    Aborted,
    /// A Rust panic inside the binding; the process goes on.
    Panic,
}

impl Code {
    /// The `code` property's value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::RelativePath => "ERR_DSH_RELATIVE_PATH",
            Self::MissingCwd => "ERR_DSH_MISSING_CWD",
            Self::Nul => "ERR_DSH_NUL_IN_ARGUMENT",
            Self::Config => "ERR_DSH_CONFIG",
            Self::InvalidArgument => "ERR_DSH_INVALID_ARGUMENT",
            Self::NoSession => "ERR_DSH_NO_SESSION",
            Self::SessionExists => "ERR_DSH_SESSION_EXISTS",
            Self::SessionDamaged => "ERR_DSH_SESSION_DAMAGED",
            Self::SessionLocked => "ERR_DSH_SESSION_LOCKED",
            Self::SessionClosed => "ERR_DSH_SESSION_CLOSED",
            Self::Home => "ERR_DSH_HOME",
            Self::Io => "ERR_DSH_IO",
            // What Node's own cancellable APIs reject with (fs, fetch,
            // timers/promises), so one `code === "ABORT_ERR"` check serves
            // every call a product cancels.
            Self::Aborted => "ABORT_ERR",
            Self::Panic => "ERR_DSH_PANIC",
        }
    }

    /// Every code, for the tests and the README's table.
    #[cfg(test)]
    pub(crate) const ALL: [Code; 14] = [
        Self::RelativePath,
        Self::MissingCwd,
        Self::Nul,
        Self::Config,
        Self::InvalidArgument,
        Self::NoSession,
        Self::SessionExists,
        Self::SessionDamaged,
        Self::SessionLocked,
        Self::SessionClosed,
        Self::Home,
        Self::Io,
        Self::Aborted,
        Self::Panic,
    ];
}

/// One failure: what becomes the rejected `Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) code: Code,
    pub(crate) message: String,
    /// The filesystem path the failure concerns.
    pub(crate) path: Option<String>,
    /// The argument or configuration field the failure concerns.
    pub(crate) field: Option<String>,
}

impl Failure {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            path: None,
            field: None,
        }
    }

    pub(crate) fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub(crate) fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub(crate) fn aborted() -> Self {
        Self::new(Code::Aborted, "The operation was aborted")
    }

    pub(crate) fn closed(why: &str) -> Self {
        Self::new(Code::SessionClosed, format!("the session is closed: {why}"))
    }
}

impl From<LogError> for Failure {
    fn from(e: LogError) -> Self {
        let message = e.to_string();
        match e {
            LogError::Io { path, .. } => Self::new(Code::Io, message).with_path(path),
            LogError::AlreadyExists { path } => {
                Self::new(Code::SessionExists, message).with_path(path)
            }
            LogError::InvalidSessionId { .. } => {
                Self::new(Code::InvalidArgument, message).with_field("id")
            }
            LogError::LockTimeout { path, .. } => {
                Self::new(Code::SessionLocked, message).with_path(path)
            }
            // A header or event this build cannot read: the directory is
            // damaged or another program's.
            LogError::InvalidHeader { .. }
            | LogError::UnsupportedSchema { .. }
            | LogError::InvalidEvent { .. }
            | LogError::Poisoned => Self::new(Code::SessionDamaged, message),
        }
    }
}

impl From<StateError> for Failure {
    fn from(e: StateError) -> Self {
        let field = e.field();
        Self::new(Code::Config, e.to_string()).with_field(field)
    }
}

impl From<RuntimeError> for Failure {
    fn from(e: RuntimeError) -> Self {
        let message = e.to_string();
        match e {
            RuntimeError::Config(s) => s.into(),
            RuntimeError::Home(h) => Self::new(Code::Home, h.to_string()),
            RuntimeError::RelativeCwd { path } => {
                Self::new(Code::RelativePath, message).with_path(path)
            }
            RuntimeError::RelativeRoot { path } => Self::new(Code::RelativePath, message)
                .with_path(path)
                .with_field("trust"),
            RuntimeError::Discovery(DiscoveryError::RelativeRoot { path }) => {
                Self::new(Code::RelativePath, message).with_path(path)
            }
            RuntimeError::Discovery(DiscoveryError::OpenRoot { path, .. }) => {
                Self::new(Code::Io, message).with_path(path)
            }
            RuntimeError::Cancelled => Self::aborted(),
            _ => Self::new(Code::Io, message),
        }
    }
}

impl From<SessionError> for Failure {
    fn from(e: SessionError) -> Self {
        let message = e.to_string();
        match e {
            SessionError::Log(l) => l.into(),
            SessionError::Runtime(r) => r.into(),
            SessionError::NoSession { path, .. } => {
                Self::new(Code::NoSession, message).with_path(path)
            }
            SessionError::Settings { path, .. } => {
                Self::new(Code::SessionDamaged, message).with_path(path)
            }
            SessionError::RelativeCwd { path } => {
                Self::new(Code::SessionDamaged, message).with_path(path)
            }
            SessionError::Cancelled => Self::aborted(),
            _ => Self::new(Code::SessionDamaged, message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn codes_are_distinct_and_node_shaped() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "{c:?} repeats a code");
            assert!(c.as_str().starts_with("ERR_DSH_") || c == Code::Aborted);
            assert_eq!(c.as_str(), c.as_str().to_ascii_uppercase());
        }
        assert_eq!(Code::Aborted.as_str(), "ABORT_ERR");
    }

    #[rstest]
    #[case::lock(LogError::LockTimeout { path: "/s/x/session.lock".into(), waited: std::time::Duration::from_secs(1) }, Code::SessionLocked, Some("/s/x/session.lock"), None)]
    #[case::exists(LogError::AlreadyExists { path: "/s/x/session.jsonl".into() }, Code::SessionExists, Some("/s/x/session.jsonl"), None)]
    #[case::id(LogError::InvalidSessionId { id: "../x".into() }, Code::InvalidArgument, None, Some("id"))]
    #[case::header(LogError::InvalidHeader { reason: "not json".into() }, Code::SessionDamaged, None, None)]
    #[case::schema(LogError::UnsupportedSchema { found: 99 }, Code::SessionDamaged, None, None)]
    fn log_errors_keep_their_path_or_field(
        #[case] e: LogError,
        #[case] code: Code,
        #[case] path: Option<&str>,
        #[case] field: Option<&str>,
    ) {
        let f = Failure::from(SessionError::Log(e));
        assert_eq!(f.code, code);
        assert_eq!(f.path.as_deref(), path);
        assert_eq!(f.field.as_deref(), field);
    }

    #[test]
    fn a_config_error_names_its_field() {
        let f = Failure::from(RuntimeError::Config(StateError::UnknownPreset {
            name: "vim".into(),
        }));
        assert_eq!(f.code, Code::Config);
        assert_eq!(f.field.as_deref(), Some("preset"));
        assert!(f.message.contains("vim"), "{}", f.message);
    }

    #[test]
    fn cancellation_is_node_s_abort_error() {
        assert_eq!(Failure::from(SessionError::Cancelled).code, Code::Aborted);
        assert_eq!(Failure::from(RuntimeError::Cancelled).code, Code::Aborted);
    }

    #[test]
    fn a_relative_cwd_names_the_path() {
        let f = Failure::from(RuntimeError::RelativeCwd {
            path: "rel/dir".into(),
        });
        assert_eq!(
            (f.code, f.path.as_deref()),
            (Code::RelativePath, Some("rel/dir"))
        );
    }
}
