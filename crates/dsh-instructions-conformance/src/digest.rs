//! The digest scenarios name: `digest_of: <text>` in a scenario stands for
//! the SHA-1 of that text, as the runtime's typed sources carry it
//! (R-STATE-1). Its own module because the schema (which resolves
//! `digest_of`) and the matcher (which compares digests) both need it and
//! neither should depend on the other for it.

use sha1::{Digest, Sha1};

/// Lowercase hex SHA-1 of `bytes` (sha1 0.11 output has no `LowerHex`).
///
/// ```
/// use dsh_instructions_conformance::digest::sha1_hex;
/// assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
/// ```
pub fn sha1_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha1::digest(bytes);
    let mut out = String::with_capacity(40);
    for b in digest.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}
