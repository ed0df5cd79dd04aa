//! Paths as messages show them.

use std::path::Path;

use dsh_instructions_hooks::escape_control;

/// A path for a message: lossy UTF-8 with control characters escaped.
pub(crate) fn shown(path: &Path) -> String {
    escape_control(&path.to_string_lossy()).into_owned()
}
