//! Decoding of instruction file bytes into text (R-DISC-6).
//!
//! Both providers share this so that the same bytes always give the same text,
//! and therefore the same digest, whichever filesystem they came from.

/// The UTF-8 encoding of U+FEFF, which editors on some platforms prepend.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Decodes raw file bytes into text: one leading UTF-8 BOM is dropped and
/// every invalid UTF-8 sequence is replaced with U+FFFD.
///
/// Only the first BOM is dropped: a second one is content (R-DISC-6 says "a
/// leading BOM", and digests are over the resulting text).
///
/// ```
/// use dsh_instructions_discovery::provider::decode_text;
/// assert_eq!(decode_text(b"\xEF\xBB\xBFrule"), "rule");
/// assert_eq!(decode_text(b"a\xFFb"), "a\u{FFFD}b");
/// ```
pub fn decode_text(bytes: &[u8]) -> String {
    let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    String::from_utf8_lossy(body).into_owned()
}

/// [`decode_text`](crate::provider::decode_text) taking the buffer: valid UTF-8 (the usual case) becomes
/// the text without a copy.
pub(crate) fn decode_owned(mut bytes: Vec<u8>) -> String {
    if bytes.starts_with(UTF8_BOM) {
        bytes.drain(..UTF8_BOM.len());
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::decode_text;
    use rstest::rstest;

    #[rstest]
    #[case::plain(b"hello\n", "hello\n")]
    #[case::empty(b"", "")]
    #[case::bom_only(b"\xEF\xBB\xBF", "")]
    #[case::bom_dropped(b"\xEF\xBB\xBFA", "A")]
    #[case::only_first_bom(b"\xEF\xBB\xBF\xEF\xBB\xBFA", "\u{FEFF}A")]
    #[case::bom_not_leading(b"A\xEF\xBB\xBF", "A\u{FEFF}")]
    #[case::truncated_bom_is_invalid(b"\xEF\xBBA", "\u{FFFD}A")]
    #[case::invalid_byte(b"a\xFFb", "a\u{FFFD}b")]
    #[case::lone_continuation(b"\x80", "\u{FFFD}")]
    #[case::truncated_multibyte_at_end(b"ok\xE2\x82", "ok\u{FFFD}")]
    #[case::valid_multibyte(b"\xE2\x82\xAC", "\u{20AC}")]
    fn decodes(#[case] input: &[u8], #[case] expected: &str) {
        assert_eq!(decode_text(input), expected);
        assert_eq!(super::decode_owned(input.to_vec()), expected);
    }
}
