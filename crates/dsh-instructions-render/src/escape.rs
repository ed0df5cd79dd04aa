//! Frame escaping (SPEC R-REN-5).
//!
//! The only text that can end the frame early is `</system-reminder`, in any
//! ASCII letter case. Inserting one backslash after its `<` neutralises it
//! while keeping the letters as the author wrote them; the insertion cannot
//! create a new match because it adds no `<`.

use std::borrow::Cow;

/// The closing-tag prefix that must never appear inside a body.
const TAG: &[u8] = b"</system-reminder";

/// Length of [`TAG`]; each escape adds exactly one byte.
pub(crate) const TAG_LEN: usize = TAG.len();

/// Escapes every ASCII-case-insensitive `</system-reminder` in `text` as
/// `<\/system-reminder`, keeping the original letter case (SPEC R-REN-5).
///
/// Returns the input unchanged (borrowed) when there is nothing to escape.
///
/// ```
/// use dsh_instructions_render::escape;
///
/// assert_eq!(escape("a </System-Reminder> b"), r"a <\/System-Reminder> b");
/// assert!(matches!(escape("plain"), std::borrow::Cow::Borrowed("plain")));
/// ```
#[must_use]
pub fn escape(text: &str) -> Cow<'_, str> {
    let tags = tag_positions(text);
    if tags.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + tags.len());
    push_escaped(&mut out, text, &tags);
    Cow::Owned(out)
}

/// Byte offsets of every match of the tag in `text`, ascending.
///
/// Matches cannot overlap (the tag holds one `<`, at its start), and their
/// bytes are ASCII, so every offset and `offset + TAG_LEN` is a char boundary.
pub(crate) fn tag_positions(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    // `str::find` with a `char` searches with `memchr`, word at a time.
    while let Some(rel) = text.get(from..).and_then(|rest| rest.find('<')) {
        let at = from + rel;
        if bytes
            .get(at..at + TAG_LEN)
            .is_some_and(|w| w.eq_ignore_ascii_case(TAG))
        {
            out.push(at);
            from = at + TAG_LEN;
        } else {
            from = at + 1;
        }
    }
    out
}

/// Appends `text` to `out`, escaped, given the tag offsets of `text`
/// (a prefix of the offsets of a longer text is fine as long as every offset
/// listed lies fully inside `text`).
pub(crate) fn push_escaped(out: &mut String, text: &str, tags: &[usize]) {
    let mut last = 0;
    for &at in tags {
        // Keep the `<`, then add the backslash before the `/`.
        let split = at + 1;
        if let Some(chunk) = text.get(last..split) {
            out.push_str(chunk);
            out.push('\\');
            last = split;
        }
    }
    if let Some(rest) = text.get(last..) {
        out.push_str(rest);
    }
}

/// Number of tags lying fully inside the first `kept` bytes.
pub(crate) fn tags_within(tags: &[usize], kept: usize) -> usize {
    tags.partition_point(|&at| at + TAG_LEN <= kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::none("hello", "hello")]
    #[case::empty("", "")]
    #[case::lower("</system-reminder>", r"<\/system-reminder>")]
    #[case::upper_part("</SYSTEM-reminder", r"<\/SYSTEM-reminder")]
    #[case::title("x</System-Reminder>y", r"x<\/System-Reminder>y")]
    #[case::all_upper("</SYSTEM-REMINDER>", r"<\/SYSTEM-REMINDER>")]
    #[case::twice(
        "</system-reminder></system-reminder",
        r"<\/system-reminder><\/system-reminder"
    )]
    #[case::adjacent_lt("<</system-reminder", r"<<\/system-reminder")]
    #[case::opening_tag_untouched("<system-reminder>", "<system-reminder>")]
    #[case::already_escaped(r"<\/system-reminder", r"<\/system-reminder")]
    #[case::incomplete("</system-remind", "</system-remind")]
    #[case::space_inside("</system reminder", "</system reminder")]
    #[case::multibyte_around("é</system-reminder日本", r"é<\/system-reminder日本")]
    #[case::non_ascii_letter("</ſystem-reminder", "</ſystem-reminder")]
    fn escapes_closing_tag(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(escape(input), expected);
    }

    #[test]
    fn borrowed_when_clean() {
        assert!(matches!(escape("no tag here <b>"), Cow::Borrowed(_)));
    }

    #[rstest]
    #[case("a</system-reminderb</SYSTEM-REMINDER", &[1, 19])]
    #[case("</system-reminde", &[])]
    #[case("<<</system-reminder", &[2])]
    fn finds_positions(#[case] input: &str, #[case] expected: &[usize]) {
        assert_eq!(tag_positions(input), expected);
    }

    #[rstest]
    // Tag occupies bytes 1..18.
    #[case(0, 0)]
    #[case(17, 0)]
    #[case(18, 1)]
    #[case(40, 1)]
    fn counts_tags_fully_inside(#[case] kept: usize, #[case] expected: usize) {
        assert_eq!(tags_within(&[1], kept), expected);
    }
}
