//! Pointer files (SPEC R-CLI-6): a small shadowed sibling whose whole job
//! is to send tools that read only it to the winning file, e.g. a
//! `CLAUDE.md` holding `@AGENTS.md` or "See AGENTS.md." next to the real
//! `AGENTS.md`. Such a file is not silently ignored content, so `check`
//! does not fail on it. Pure: the caller reads the file.
//!
//! # The rule
//!
//! A shadowed file is a pointer to the winner when
//!
//! 1. its raw size is at most [`POINTER_MAX_BYTES`] (512) bytes, and
//! 2. its text contains the winner's *file name* (`AGENTS.md`, not the
//!    display path), compared ASCII-case-insensitively, as a whole token:
//!    - optionally preceded by `./` (`see ./AGENTS.md`);
//!    - before it (before the `./` if any): the start of the text,
//!      white space, or ASCII punctuation other than `/`, `\`, `.`, `-` and
//!      `_` — so `@AGENTS.md`, `` `AGENTS.md` ``, `(AGENTS.md)` count but
//!      `docs/AGENTS.md`, `../AGENTS.md` and `MY-AGENTS.md` (other files)
//!      do not;
//!    - after it: the end of the text, white space, or ASCII punctuation
//!      other than `/`, `\`, `-` and `_`; a `.` counts only when what
//!      follows it would itself end the token (the end, white space or
//!      punctuation), so "See AGENTS.md." counts and `AGENTS.md.bak` or
//!      `AGENTS.mdx` do not.

/// Largest shadowed file, in raw bytes, that can be a pointer (R-CLI-6).
pub const POINTER_MAX_BYTES: u64 = 512;

/// Whether a shadowed file of `raw_bytes` bytes with loaded text `text`
/// points to the winning candidate named `winner_name` (see the module
/// docs for the exact rule).
///
/// ```
/// use dsh_instructions_runtime::report::is_pointer_to;
/// assert!(is_pointer_to("@AGENTS.md\n", 11, "AGENTS.md"));
/// assert!(!is_pointer_to("Use tabs.", 9, "AGENTS.md"));
/// ```
#[must_use]
pub fn is_pointer_to(text: &str, raw_bytes: u64, winner_name: &str) -> bool {
    if raw_bytes > POINTER_MAX_BYTES || text.len() as u64 > POINTER_MAX_BYTES {
        return false;
    }
    let hay = text.as_bytes();
    let name = winner_name.as_bytes();
    if name.is_empty() || name.len() > hay.len() {
        return false;
    }
    (0..=hay.len() - name.len()).any(|at| {
        hay[at..at + name.len()].eq_ignore_ascii_case(name)
            && starts_token(hay, at)
            && ends_token(hay, at + name.len())
    })
}

/// Punctuation that continues a path or a file name rather than ending it.
fn joins_name(b: u8) -> bool {
    matches!(b, b'/' | b'\\' | b'-' | b'_')
}

/// A byte that may border a token: white space or ASCII punctuation that
/// does not continue a name. Non-ASCII bytes (letters of other scripts)
/// never do.
fn borders(b: u8) -> bool {
    b.is_ascii_whitespace() || (b.is_ascii_punctuation() && !joins_name(b))
}

/// Whether the name found at `at` starts a token (an optional `./` before
/// it is skipped).
fn starts_token(hay: &[u8], at: usize) -> bool {
    let start = if at >= 2 && &hay[at - 2..at] == b"./" {
        at - 2
    } else {
        at
    };
    match start.checked_sub(1).map(|i| hay[i]) {
        None => true,
        Some(b) => b != b'.' && borders(b),
    }
}

/// Whether the name ending at `end` ends a token.
fn ends_token(hay: &[u8], end: usize) -> bool {
    match hay.get(end) {
        None => true,
        // A full stop ends a sentence only if nothing name-like follows it.
        Some(b'.') => hay.get(end + 1).is_none_or(|&b| borders(b)),
        Some(&b) => borders(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn raw(text: &str) -> u64 {
        text.len() as u64
    }

    #[rstest]
    #[case::at_import("@AGENTS.md", true)]
    #[case::at_import_with_newline("@AGENTS.md\n", true)]
    #[case::see_sentence("See AGENTS.md.", true)]
    #[case::see_dot_slash("see ./AGENTS.md", true)]
    #[case::at_dot_slash("@./AGENTS.md", true)]
    #[case::case_insensitive("Read agents.md first", true)]
    #[case::backticks("Instructions live in `AGENTS.md`.", true)]
    #[case::markdown_link("See [the rules](AGENTS.md).", true)]
    #[case::comma("AGENTS.md, then the code", true)]
    #[case::longer_name("see AGENTS.mdx", false)]
    #[case::backup("see AGENTS.md.bak", false)]
    #[case::other_directory("see docs/AGENTS.md", false)]
    #[case::parent_directory("see ../AGENTS.md", false)]
    #[case::prefixed_name("see MY-AGENTS.md", false)]
    #[case::underscore_name("see X_AGENTS.md", false)]
    #[case::suffixed_dash("see AGENTS.md-old", false)]
    #[case::glued_word("seeAGENTS.md", false)]
    #[case::different_winner("@CLAUDE.md", false)]
    #[case::no_mention("Use tabs.", false)]
    #[case::empty("", false)]
    fn names_the_winner_as_a_whole_token_r_cli_6(#[case] text: &str, #[case] pointer: bool) {
        assert_eq!(
            is_pointer_to(text, raw(text), "AGENTS.md"),
            pointer,
            "{text:?}"
        );
    }

    #[test]
    fn the_winner_name_is_what_counts_r_cli_6() {
        // A local overlay slot: the winner is AGENTS.local.md.
        assert!(is_pointer_to("@AGENTS.local.md", 16, "AGENTS.local.md"));
        assert!(!is_pointer_to("@AGENTS.md", 10, "AGENTS.local.md"));
        assert!(is_pointer_to("see CLAUDE.md", 13, "CLAUDE.md"));
    }

    #[rstest]
    #[case::at_the_limit(512, true)]
    #[case::one_byte_over(513, false)]
    fn at_most_512_bytes_r_cli_6(#[case] size: usize, #[case] pointer: bool) {
        let text = format!("@AGENTS.md\n{}", " ".repeat(size - 11));
        assert_eq!(text.len(), size);
        assert_eq!(is_pointer_to(&text, raw(&text), "AGENTS.md"), pointer);
    }

    #[test]
    fn the_raw_size_counts_even_when_the_text_is_shorter_r_cli_6() {
        // A BOM or replaced bytes can make the loaded text differ in length
        // from the file; the file's own size decides.
        assert!(!is_pointer_to("@AGENTS.md", 513, "AGENTS.md"));
    }
}
