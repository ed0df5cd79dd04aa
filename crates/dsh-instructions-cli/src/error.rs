//! The one error type of the binary: a message and an exit code.

use std::fmt;

/// Exit code of `check` when it found a problem.
pub(crate) const EXIT_PROBLEMS: u8 = 1;
/// Exit code of every error (usage, configuration, I/O).
pub(crate) const EXIT_ERROR: u8 = 2;

/// An error that ends the command with one line on stderr (R-CLI-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CliError {
    message: String,
}

impl CliError {
    /// An error with this message.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The exit code for this error.
    pub(crate) fn code(&self) -> u8 {
        EXIT_ERROR
    }

    /// The message on one line: embedded line breaks (from library errors
    /// that render snippets) become `; ` so stderr stays one line per error.
    pub(crate) fn one_line(&self) -> String {
        self.message
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<dsh_home_paths::HomeError> for CliError {
    fn from(e: dsh_home_paths::HomeError) -> Self {
        Self::new(e.to_string())
    }
}

impl From<dsh_session_log::LogError> for CliError {
    fn from(e: dsh_session_log::LogError) -> Self {
        Self::new(format!("session log: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("plain", "plain")]
    #[case("first\n  | snippet\n\nlast", "first;   | snippet; last")]
    #[case("trailing\n", "trailing")]
    fn one_line_never_breaks(#[case] input: &str, #[case] want: &str) {
        let e = CliError::new(input);
        assert_eq!(e.one_line(), want);
        assert!(!e.one_line().contains('\n'));
    }
}
