//! SHA-1 digests of loaded instruction text (R-STATE-3).

use std::fmt;

use sha1::Digest as _;

/// The SHA-1 of a loaded text (R-STATE-3), shown as 40 lowercase hex digits.
///
/// [`Digest::of`] is the change digest (always of the full content, even when
/// the rendered section is truncated); [`Digest::of_trimmed`] is the
/// per-directory dedup key of R-CFG-7.
///
/// ```
/// use dsh_instructions_state::Digest;
/// let d = Digest::of("abc");
/// assert_eq!(d.to_hex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
/// assert_eq!(Digest::from_hex(&d.to_hex()), Some(d));
/// assert_eq!(Digest::of_trimmed("  abc\n"), d);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 20]);

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Digest {
    /// SHA-1 of the UTF-8 bytes of `text`: the change digest of R-STATE-3.
    ///
    /// ```
    /// use dsh_instructions_state::Digest;
    /// // `printf 'root rule' | sha1sum`
    /// assert_eq!(Digest::of("root rule").to_hex(), "d89b0bf28ccca41f95a0aac894b4d0a41ddfe664");
    /// // The change digest keeps white space; the dedup key does not.
    /// assert_ne!(Digest::of("root rule\n"), Digest::of("root rule"));
    /// assert_eq!(Digest::of_trimmed("root rule\n"), Digest::of("root rule"));
    /// ```
    pub fn of(text: &str) -> Self {
        Self(sha1::Sha1::digest(text.as_bytes()).into())
    }

    /// SHA-1 of `text` with leading and trailing Unicode white space removed
    /// (`str::trim`), the dedup key of R-CFG-7.
    pub fn of_trimmed(text: &str) -> Self {
        Self::of(text.trim())
    }

    /// `(Digest::of(text), Digest::of_trimmed(text))` in one pass over the
    /// text when it has no leading white space (the usual case): the trimmed
    /// text is then a prefix, and the full digest continues its hash state.
    ///
    /// ```
    /// use dsh_instructions_state::Digest;
    /// let text = "rules\n\n";
    /// assert_eq!(Digest::of_and_trimmed(text), (Digest::of(text), Digest::of_trimmed(text)));
    /// ```
    pub fn of_and_trimmed(text: &str) -> (Self, Self) {
        let trimmed = text.trim();
        if text.len() - text.trim_start().len() != 0 {
            return (Self::of(text), Self::of(trimmed));
        }
        let mut hasher = sha1::Sha1::new();
        hasher.update(trimmed.as_bytes());
        let short = Self(hasher.clone().finalize().into());
        hasher.update(&text.as_bytes()[trimmed.len()..]);
        (Self(hasher.finalize().into()), short)
    }

    /// The raw 20 bytes.
    pub fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }

    /// 40 lowercase hex digits, the form persisted in typed sources.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(40);
        for b in self.0 {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
        s
    }

    /// Parses exactly 40 lowercase hex digits; anything else (upper case,
    /// other lengths, non-hex) is `None`, as R-STATE-1 persists lowercase only.
    pub fn from_hex(s: &str) -> Option<Self> {
        // Each byte's nibble value, or 0xff for anything but `0-9a-f`: a
        // hook process parses thousands of digests from its side files, so
        // the loop is one lookup per character and one check per digest.
        const NIBBLE: [u8; 256] = {
            let mut t = [0xffu8; 256];
            let mut i = 0;
            while i < 10 {
                t[b'0' as usize + i] = i as u8;
                i += 1;
            }
            let mut i = 0;
            while i < 6 {
                t[b'a' as usize + i] = 10 + i as u8;
                i += 1;
            }
            t
        };
        let bytes = s.as_bytes();
        if bytes.len() != 40 {
            return None;
        }
        let mut out = [0u8; 20];
        let mut bad = 0u8;
        for (slot, pair) in out.iter_mut().zip(bytes.as_chunks::<2>().0) {
            let [hi, lo] = *pair;
            let (hi, lo) = (NIBBLE[usize::from(hi)], NIBBLE[usize::from(lo)]);
            bad |= hi | lo;
            *slot = (hi << 4) | (lo & 0x0f);
        }
        (bad & 0xf0 == 0).then_some(Self(out))
    }
}

impl From<[u8; 20]> for Digest {
    fn from(bytes: [u8; 20]) -> Self {
        Self(bytes)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    proptest! {
        #[test]
        fn one_pass_digests_equal_two_passes(text in "[ \t\n\u{3000}a-z\u{e9}]{0,40}") {
            prop_assert_eq!(
                Digest::of_and_trimmed(&text),
                (Digest::of(&text), Digest::of_trimmed(&text))
            );
        }
    }

    // Expected values computed independently with `printf '<text>' | sha1sum`.
    #[rstest]
    #[case::root_rule("root rule", "d89b0bf28ccca41f95a0aac894b4d0a41ddfe664")]
    #[case::empty("", "da39a3ee5e6b4b0d3255bfef95601890afd80709")]
    #[case::abc("abc", "a9993e364706816aba3e25717850c26c9cd0d89d")]
    fn of_is_real_sha1_lowercase_hex(#[case] text: &str, #[case] hex: &str) {
        // R-STATE-3
        let d = Digest::of(text);
        assert_eq!(d.to_hex(), hex);
        assert_eq!(d.to_string(), hex);
    }

    #[rstest]
    #[case::surrounding_ws("\n\t root rule \r\n", "root rule")]
    #[case::unicode_ws("\u{3000}root rule\u{2003}", "root rule")]
    #[case::only_ws(" \n\t", "")]
    fn of_trimmed_uses_str_trim(#[case] text: &str, #[case] same_as: &str) {
        // R-STATE-3 dedup key
        assert_eq!(Digest::of_trimmed(text), Digest::of(same_as));
        assert_ne!(Digest::of(text), Digest::of(same_as));
    }

    #[test]
    fn inner_whitespace_is_significant_for_dedup() {
        assert_ne!(Digest::of_trimmed("a b"), Digest::of_trimmed("a  b"));
    }

    #[rstest]
    #[case::uppercase("D89B0BF28CCCA41F95A0AAC894B4D0A41DDFE664")]
    #[case::short("d89b0bf28ccca41f95a0aac894b4d0a41ddfe66")]
    #[case::long("d89b0bf28ccca41f95a0aac894b4d0a41ddfe6640")]
    #[case::non_hex("g89b0bf28ccca41f95a0aac894b4d0a41ddfe664")]
    #[case::empty("")]
    #[case::multibyte("é9b0bf28ccca41f95a0aac894b4d0a41ddfe664")]
    fn from_hex_rejects(#[case] s: &str) {
        assert_eq!(Digest::from_hex(s), None);
    }

    proptest! {
        #[test]
        fn hex_round_trip(bytes in proptest::array::uniform20(any::<u8>())) {
            let d = Digest::from(bytes);
            let hex = d.to_hex();
            prop_assert_eq!(hex.len(), 40);
            prop_assert!(hex.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
            prop_assert_eq!(Digest::from_hex(&hex), Some(d));
        }

        #[test]
        fn from_hex_agrees_with_a_plain_parse(s in "[0-9a-fA-Fgz]{40}") {
            // The table-driven parse against the obvious one: lowercase hex
            // only, two digits a byte.
            let plain = s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)).then(|| {
                let mut out = [0u8; 20];
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex");
                }
                Digest::from(out)
            });
            prop_assert_eq!(Digest::from_hex(&s), plain);
        }

        #[test]
        fn from_hex_never_panics(s in ".{0,60}") {
            let _ = Digest::from_hex(&s);
        }
    }
}
