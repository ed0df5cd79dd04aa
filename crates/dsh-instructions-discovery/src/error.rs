//! The crate's one error type.

use std::io;

use camino::Utf8PathBuf;

/// Why a provider could not be set up, each naming the path it concerns.
///
/// Filesystem trouble while probing or reading is never an error: it is a
/// classification ([`crate::provider::Unavailable`], R-DISC-4), and a
/// cancelled call returns [`crate::Cancelled`], which carries nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// Trusted roots must be absolute: a relative one would depend on the
    /// process cwd.
    #[error("trusted root {path} is not an absolute path")]
    RelativeRoot {
        /// The rejected root.
        path: Utf8PathBuf,
    },
    /// The root exists but could not be opened (permission, descriptor
    /// exhaustion, ...).
    #[error("cannot open trusted root {path}: {source}")]
    OpenRoot {
        /// The root that failed.
        path: Utf8PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A name the in-memory provider's vocabulary ([`crate::memory::FsOp`],
    /// [`crate::memory::Errno`]) does not know (test support).
    #[cfg(feature = "test-support")]
    #[error("unknown {what}: {value:?}")]
    UnknownName {
        /// What was being parsed.
        what: &'static str,
        /// The rejected text.
        value: String,
    },
}
