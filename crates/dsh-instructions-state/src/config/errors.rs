//! What validation reports besides refusals ([`crate::StateError`]): the ignored entries ([`ConfigWarning`](crate::config::ConfigWarning), with the reason texts
//! of [`reasons`](crate::config::reasons)). Separate so the parsers of every field share one
//! vocabulary of problems.

use std::fmt;

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

/// Reason texts of [`ConfigWarning::reason`](crate::config::ConfigWarning::reason).
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
