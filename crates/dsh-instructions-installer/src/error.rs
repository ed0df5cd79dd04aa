//! The one error type of the installer. Every variant names the file it is
//! about; when one is returned, nothing has been written (R-HOOK-5).

use std::io;
use std::path::PathBuf;

/// Why an install, uninstall or doctor run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The file exists but could not be read.
    #[error("cannot read {}: {source}", crate::shown::shown(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file is not UTF-8 text.
    #[error("{} is not UTF-8 text", crate::shown::shown(path))]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// The file does not parse (invalid JSON or TOML).
    #[error("{} is malformed: {problem}", crate::shown::shown(path))]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        problem: String,
    },
    /// A key the installer must edit holds a value of the wrong type.
    #[error("{}: `{key}` must be {expected}", crate::shown::shown(path))]
    WrongType {
        /// The file.
        path: PathBuf,
        /// The key's path inside the file, dotted (`hooks.PostToolUse`).
        key: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A symlinked settings file whose target is missing or unreadable.
    #[error(
        "{} is a link to {}: {reason}",
        crate::shown::shown(link),
        crate::shown::shown(target)
    )]
    Link {
        /// The link.
        link: PathBuf,
        /// Where it points (the last link of a chain resolved).
        target: PathBuf,
        /// What is wrong with the target.
        reason: String,
    },
    /// pi's extension or opencode's plugin needs the Node binding's
    /// package (`dsh-agent-instructions`), and it is not where it was
    /// looked for (decision 0086).
    #[error(
        "no {} (the npm package dsh-agent-instructions): install it with `npm install -g dsh-agent-instructions`, or name its directory with --package",
        crate::shown::shown(path)
    )]
    NoPackage {
        /// The module the extension or plugin would load.
        path: PathBuf,
    },
    /// Writing a file, its backup or a directory failed.
    #[error("cannot write {}: {source}", crate::shown::shown(path))]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl InstallError {
    pub(crate) fn wrong_type(path: &std::path::Path, key: &str, expected: &'static str) -> Self {
        InstallError::WrongType {
            path: path.to_owned(),
            key: key.to_owned(),
            expected,
        }
    }
}
