//! An agent user-level file of a mount (`user_instruction_files`, R-CFG-9):
//! resolved once by `MountBuilder::open`, carried by the mount and read
//! by the gather passes. Its own module so the gather code (`scan.rs`,
//! `compose.rs`) needs nothing from the instance that drives it.

use camino::Utf8PathBuf;

/// An agent user-level file (`user_instruction_files`), resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserFile {
    /// Absolute path (the `~/…` entry expanded, R-HOME-2).
    pub(crate) path: Utf8PathBuf,
    /// The entry as configured, `~/…`: its display label and scope
    /// (`user\0<label>`, R-STATE-2).
    pub(crate) label: String,
}
