//! Validation of the name lists (R-CFG-4/5): candidate and marker file
//! names, and the `~/` paths of `user_instruction_files`. Separate because
//! the CLI and the hooks call these on their own, outside a full resolve.

use super::{ConfigWarning, reasons};

/// Why a single file name is unusable, if it is.
pub(super) fn name_problem(entry: &str) -> Option<&'static str> {
    if entry.is_empty() {
        Some(reasons::EMPTY)
    } else if entry == "." || entry == ".." {
        Some(reasons::DOT)
    } else if entry.contains('\0') {
        Some(reasons::NUL)
    } else if entry.contains(['/', '\\']) {
        Some(reasons::SEPARATOR)
    } else {
        None
    }
}

/// Validates a candidate or marker list (R-CFG-4/5): drops entries that are
/// not a single file name and repeats (the first position is kept), and
/// reports each dropped entry.
///
/// ```
/// use dsh_instructions_state::config::validate_names;
/// let input = ["AGENTS.md", "", "a/b", "AGENTS.md", "CLAUDE.md"].map(String::from);
/// let (kept, warnings) = validate_names("instruction_file_candidates", &input);
/// assert_eq!(kept, ["AGENTS.md", "CLAUDE.md"]);
/// assert_eq!(warnings.len(), 3);
/// ```
pub fn validate_names(
    field: &'static str,
    entries: &[String],
) -> (Vec<String>, Vec<ConfigWarning>) {
    validate_path_list(field, entries, |entry| {
        name_problem(entry).map_or(Ok(()), Err)
    })
}

/// Validates `user_instruction_files`: each entry must be `~/` followed by
/// a relative path to a file (no empty, `.` or `..` component, no `\` or
/// NUL); repeats keep the first position. Dropped entries are reported.
///
/// ```
/// use dsh_instructions_state::config::validate_user_files;
/// let input = ["~/.claude/CLAUDE.md", "/etc/x", "~/", "~/a/../b", "~/.claude/CLAUDE.md"].map(String::from);
/// let (kept, warnings) = validate_user_files(&input);
/// assert_eq!(kept, ["~/.claude/CLAUDE.md"]);
/// assert_eq!(warnings.len(), 4);
/// ```
pub fn validate_user_files(entries: &[String]) -> (Vec<String>, Vec<ConfigWarning>) {
    validate_path_list("user_instruction_files", entries, |entry| {
        entry
            .strip_prefix("~/")
            .is_some_and(plain_relative_path)
            .then_some(())
            .ok_or(reasons::NOT_HOME_PATH)
    })
}

/// One path list's validation: `check` says why an entry is refused;
/// repeats keep the first position; every dropped entry is reported under
/// `field`.
fn validate_path_list(
    field: &'static str,
    entries: &[String],
    check: impl Fn(&str) -> Result<(), &'static str>,
) -> (Vec<String>, Vec<ConfigWarning>) {
    let mut kept: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    for entry in entries {
        let problem = match check(entry) {
            Err(reason) => Some(reason),
            Ok(()) => kept.contains(entry).then_some(reasons::DUPLICATE),
        };
        match problem {
            Some(reason) => warnings.push(ConfigWarning {
                field,
                entry: entry.clone(),
                reason,
            }),
            None => kept.push(entry.clone()),
        }
    }
    (kept, warnings)
}

/// Whether `entry` is a plain relative path to a file, as
/// `ancestor_instruction_files` entries must be: not absolute, no empty,
/// `.` or `..` component, no `\` or NUL. The scope-key parser applies
/// the same test to persisted keys.
pub(crate) fn plain_relative_path(entry: &str) -> bool {
    // By bytes: rule keys are checked with it on every sort and lookup.
    !entry.is_empty()
        && entry.as_bytes().split(|b| *b == b'/').all(|c| {
            !c.is_empty() && c != b"." && c != b".." && !c.contains(&b'\\') && !c.contains(&0)
        })
}

/// Validates `ancestor_instruction_files` (R-HOOK-8): each entry must be a
/// plain relative path ([`plain_relative_path`]); repeats keep the first
/// position. Dropped entries are reported, as for the other name lists.
pub(crate) fn validate_ancestor_files(entries: &[String]) -> (Vec<String>, Vec<ConfigWarning>) {
    validate_path_list("ancestor_instruction_files", entries, |entry| {
        plain_relative_path(entry)
            .then_some(())
            .ok_or(reasons::NOT_RELATIVE_PATH)
    })
}
