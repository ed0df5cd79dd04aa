//! How a path or id appears in a message or log line: control characters
//! escaped, so nothing read from an event or the filesystem can break a
//! line or a terminal. Its own module because the error type and the file
//! code both print paths, and neither should need the other for it.

use std::borrow::Cow;

/// `s` with control characters (and backslashes) escaped as `\n`, `\t`,
/// `\u{1b}`…, so a path or id from an event or the file system cannot
/// break a log line or a terminal. Text without them is returned as is.
///
/// ```
/// use dsh_instructions_hooks::escape_control;
/// assert_eq!(escape_control("/tmp/a\0b\nc"), r"/tmp/a\u{0}b\nc");
/// assert_eq!(escape_control("/plain/ü"), "/plain/ü");
/// ```
pub fn escape_control(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() || c == '\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '\n' => out.push_str(r"\n"),
            '\r' => out.push_str(r"\r"),
            '\t' => out.push_str(r"\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("plain", "plain")]
    #[case("a\0b", r"a\u{0}b")]
    #[case("a\nb\x1b", r"a\nb\u{1b}")]
    #[case(r"a\b", r"a\\b")]
    fn control_characters_are_escaped(#[case] s: &str, #[case] want: &str) {
        assert_eq!(escape_control(s), want);
    }
}
