//! The crate's one error type.

use camino::Utf8PathBuf;
use dsh_home_paths::HomeError;
use dsh_instructions_discovery::DiscoveryError;
use dsh_instructions_state::StateError;

/// Why a mount could not be opened or an instance started.
///
/// Nothing the session or the filesystem does makes a mount fail (R-RT-9):
/// these are embedding mistakes and invalid input, reported as values that
/// name the path or configuration field they concern.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The configuration is invalid; the message starts with its field
    /// ([`StateError::field`]).
    #[error(transparent)]
    Config(#[from] StateError),
    /// The DSH home could not be resolved (R-HOME-5).
    #[error(transparent)]
    Home(#[from] HomeError),
    /// The session cwd is relative.
    #[error("session cwd {path} is not absolute")]
    RelativeCwd {
        /// The cwd as given.
        path: Utf8PathBuf,
    },
    /// An extra trusted root is relative.
    #[error("trusted root {path} is not absolute")]
    RelativeRoot {
        /// The root as given.
        path: Utf8PathBuf,
    },
    /// A trusted root could not be opened.
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    /// The cancellation token fired; nothing was changed.
    #[error("cancelled")]
    Cancelled,
    /// An instance was started outside a Tokio runtime. The instance runs
    /// its serial lane (R-RT-6) as a task on the current runtime, so start
    /// it from inside one (e.g. within `Runtime::block_on` or a
    /// `#[tokio::main]` function).
    #[error("the instructions adapter must be mounted inside a Tokio runtime")]
    NoRuntime,
    /// The mount has no configuration or no filesystem, so there is
    /// nothing to inspect (R-CFG-1, R-RT-9).
    #[error("the mount is disabled: no configuration or no filesystem")]
    Disabled,
}

impl From<dsh_instructions_discovery::Cancelled> for RuntimeError {
    fn from(_: dsh_instructions_discovery::Cancelled) -> Self {
        Self::Cancelled
    }
}
