//! Directory stamps that one process leaves for the next (decision 0037).
//!
//! The `dircache` module lets a long-lived provider answer a known
//! directory's absent candidate names from an unchanged stamp of a held
//! handle. A one-shot process — the agent hook, one process per event —
//! holds no handle from the last event, so without this module it opens
//! every known directory again and looks every candidate name up again:
//! about nine syscalls per known directory per event (R-HOOK-6).
//!
//! A [`DirMemory`] carries the *facts* of those stamps across processes:
//! for each directory path, the trusted stamp (dev, ino, ctime, mtime) it
//! had and which candidate names had no entry; for a directory that did not
//! exist, the trusted stamp its parent had when the absence was seen. The
//! next process proves each fact again with one `statx` per directory
//! (relative to the root's handle, not following the last component) and
//! takes the full path for anything that does not match.
//!
//! # Why a remembered answer is the answer a fresh probe would give
//!
//! The argument of the `dircache` module, with "a handle held since the last
//! batch" replaced by "a stamp recorded by an earlier process":
//!
//! * Stamps are recorded only when trusted (their ctime lies at least the
//!   margin before the clock reading taken before them), so an equal stamp
//!   later means no entry of that directory was added, removed or renamed
//!   since the facts recorded with it were observed.
//! * A path `root/a/b` is proven when every directory from the root down —
//!   `a`, then `a/b` — is a real directory (not a symlink: the last
//!   component is never followed) whose current stamp equals its recorded
//!   one. The root's handle is valid by definition; each proven directory's
//!   unchanged entries prove the next component still names the same real
//!   directory, so the kernel's lookup of `a/b` walks exactly the
//!   directories the recording process walked beneath the root.
//! * Then a candidate recorded as having no entry still has none; a
//!   directory recorded missing in a proven, unchanged parent is still
//!   missing. Present names are looked up again (their content can change
//!   in place), through the same proven path; a symlink among them takes the
//!   full, re-anchoring probe.
//!
//! The memory is derived and disposable: an empty, unreadable or
//! other-format encoding is an empty memory (every directory takes the full
//! path once); it never decides what the model sees beyond what a fresh
//! probe would. Only on Linux (`statx`); elsewhere a memory is accepted and
//! recorded into but never consulted.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::stamp::{PathMap, Stamp};

/// Directories remembered at most: beyond it new directories are simply
/// not remembered (they take the full path every process).
const MAX_DIRS: usize = 100_000;

/// The first line of [`DirMemory::encode`]: format name and version.
const HEADER: &str = "dsh-dir-stamps 1";

/// One remembered directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rec {
    /// A real directory with this trusted stamp; bit `i` of `absent`: name
    /// `i` of the candidate list hashed as `names` had no entry.
    Dir {
        /// The directory's trusted stamp when the facts were observed.
        stamp: Stamp,
        /// Hash of the candidate-name list `absent` indexes (0: none).
        names: u64,
        /// Names without an entry, one bit per candidate.
        absent: u64,
    },
    /// No such directory, seen while its parent had this trusted stamp.
    Missing {
        /// The parent's trusted stamp when the absence was seen.
        parent: Stamp,
    },
}

/// The records behind a [`DirMemory`].
#[derive(Debug, Default)]
pub(crate) struct Records {
    map: PathMap<Rec>,
    /// Something was recorded or forgotten since [`DirMemory::decode`].
    changed: bool,
}

impl Records {
    /// What is remembered of `dir` (a normalized absolute path).
    pub(crate) fn get(&self, dir: &str) -> Option<Rec> {
        self.map.get(dir).copied()
    }

    /// Records `dir` as a real directory with `stamp`, keeping its names
    /// when the stamp is the one they were observed under.
    pub(crate) fn stamp(&mut self, dir: &str, stamp: Stamp) {
        match self.map.get(dir) {
            Some(Rec::Dir { stamp: s, .. }) if *s == stamp => {}
            _ => self.put(
                dir,
                Rec::Dir {
                    stamp,
                    names: 0,
                    absent: 0,
                },
            ),
        }
    }

    /// Records which of the names hashed as `names` had no entry in `dir`
    /// under `stamp` (`None`: untrusted, so `dir` is forgotten).
    pub(crate) fn names(&mut self, dir: &str, stamp: Option<Stamp>, names: u64, absent: u64) {
        let Some(stamp) = stamp else {
            self.forget(dir);
            return;
        };
        let rec = Rec::Dir {
            stamp,
            names,
            absent: if names == 0 { 0 } else { absent },
        };
        if self.map.get(dir) != Some(&rec) {
            self.put(dir, rec);
        }
    }

    /// Records that `dir` did not exist while its parent had `parent`.
    pub(crate) fn missing(&mut self, dir: &str, parent: Stamp) {
        let rec = Rec::Missing { parent };
        if self.map.get(dir) != Some(&rec) {
            self.put(dir, rec);
        }
    }

    /// Forgets `dir` (its remembered facts no longer hold).
    pub(crate) fn forget(&mut self, dir: &str) {
        if self.map.remove(dir).is_some() {
            self.changed = true;
        }
    }

    fn put(&mut self, dir: &str, rec: Rec) {
        if self.map.len() >= MAX_DIRS && !self.map.contains_key(dir) {
            return;
        }
        self.map.insert(dir.to_owned(), rec);
        self.changed = true;
    }
}

/// Directory stamps carried from one process to the next, so a one-shot
/// process (the agent hook) proves a known, unchanged directory with one
/// `statx` instead of opening it and looking up every candidate name again
/// (R-HOOK-6, decision 0037).
///
/// A provider given a memory ([`CapStdProvider::remembering`]) consults it
/// before its own handle cache and records into it what its probes observe;
/// the host encodes it when the process is done and decodes it in the next
/// one. Clones share one memory. The encoding is a small line-oriented text
/// (a header, then one directory per line); any malformed line is skipped,
/// and any other header gives an empty memory.
///
/// ```
/// use dsh_instructions_discovery::DirMemory;
/// let memory = DirMemory::decode(b"not a memory");
/// assert!(memory.is_empty());
/// // Round trip: what a process encodes, the next decodes.
/// let again = DirMemory::decode(&memory.encode());
/// assert_eq!(again.len(), 0);
/// assert!(!again.changed());
/// ```
///
/// [`CapStdProvider::remembering`]: crate::CapStdProvider::remembering
#[derive(Debug, Clone, Default)]
pub struct DirMemory {
    inner: Arc<Mutex<Records>>,
}

impl DirMemory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The memory a previous [`DirMemory::encode`] wrote; empty when the
    /// bytes are not one (wrong header), without the lines it cannot read.
    pub fn decode(bytes: &[u8]) -> Self {
        let mut records = Records::default();
        // Read as bytes: each line is split and its numbers parsed in place;
        // only the path, which must be UTF-8, becomes a string (a hook
        // decodes this at every event, one line per known directory).
        let mut lines = bytes.split(|&b| b == b'\n');
        if lines.next() == Some(HEADER.as_bytes()) {
            // One record a line: size the map once instead of growing it
            // through every power of two.
            let lines_left = bytes.iter().filter(|&&b| b == b'\n').count();
            records.map.reserve(lines_left.min(MAX_DIRS));
            for line in lines {
                if let Some((dir, rec)) = parse_line(line) {
                    if records.map.len() >= MAX_DIRS {
                        break;
                    }
                    records.map.insert(dir.to_owned(), rec);
                }
            }
        }
        Self {
            inner: Arc::new(Mutex::new(records)),
        }
    }

    /// The encoding [`DirMemory::decode`] reads, in path order (so equal
    /// memories encode to equal bytes).
    pub fn encode(&self) -> Vec<u8> {
        let records = self.lock();
        let mut dirs: Vec<(&String, &Rec)> = records.map.iter().collect();
        dirs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = String::with_capacity(HEADER.len() + 1 + dirs.len() * 96);
        out.push_str(HEADER);
        out.push('\n');
        for (dir, rec) in dirs {
            // A path with a line break cannot be written in this format;
            // that directory is simply not remembered.
            if dir.contains('\n') {
                continue;
            }
            let (tag, stamp, names, absent) = match *rec {
                Rec::Dir {
                    stamp,
                    names,
                    absent,
                } => ('D', stamp, names, absent),
                Rec::Missing { parent } => ('M', parent, 0, 0),
            };
            let w = stamp.words();
            use std::fmt::Write as _;
            let _ = writeln!(
                out,
                "{tag} {:x} {:x} {:x} {:x} {:x} {:x} {names:x} {absent:x} {dir}",
                w[0], w[1], w[2], w[3], w[4], w[5]
            );
        }
        out.into_bytes()
    }

    /// Directories remembered.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Something was recorded or forgotten since it was decoded (or
    /// created): whether the host has news to write back.
    pub fn changed(&self) -> bool {
        self.lock().changed
    }

    /// The records, for one probe batch. A poisoned lock (a panic mid-batch
    /// elsewhere) still yields the records: each is self-validating.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Records> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One line of the encoding: `D|M`, six stamp words, names, absent (hex,
/// each followed by one space), then the path (the rest of the line, spaces
/// included: absolute, UTF-8).
fn parse_line(line: &[u8]) -> Option<(&str, Rec)> {
    let (tag, mut rest) = match line {
        [tag, b' ', rest @ ..] => (*tag, rest),
        _ => return None,
    };
    let mut words = [0_u64; 8];
    for word in &mut words {
        let end = rest.iter().position(|&b| b == b' ')?;
        *word = hex_word(&rest[..end])?;
        rest = &rest[end + 1..];
    }
    let dir = std::str::from_utf8(rest)
        .ok()
        .filter(|d| d.starts_with('/'))?;
    let [w0, w1, w2, w3, w4, w5, names, absent] = words;
    let stamp = Stamp::from_words([w0, w1, w2, w3, w4, w5]);
    let rec = match tag {
        b'D' => Rec::Dir {
            stamp,
            names,
            absent,
        },
        b'M' => Rec::Missing { parent: stamp },
        _ => return None,
    };
    Some((dir, rec))
}

/// A hexadecimal `u64` as [`u64::from_str_radix`] reads it (digits of
/// either case after an optional `+`; none, another byte or an overflow:
/// `None`), without going through `&str`.
fn hex_word(field: &[u8]) -> Option<u64> {
    let digits = field.strip_prefix(b"+").unwrap_or(field);
    if digits.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    for &b in digits {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        value = value.checked_mul(16)? | u64::from(digit);
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn stamp(n: u64) -> Stamp {
        Stamp::from_words([n, n + 1, n + 2, 3, n + 4, 5])
    }

    #[test]
    fn encoding_round_trips_every_kind_of_record() {
        let memory = DirMemory::new();
        {
            let mut r = memory.lock();
            r.stamp("/repo", stamp(1));
            r.names("/repo/a b", Some(stamp(2)), 0xabc, 0b1011);
            r.missing("/repo/a b/.claude", stamp(2));
        }
        assert!(memory.changed());
        let again = DirMemory::decode(&memory.encode());
        assert!(!again.changed(), "a decoded memory has no news");
        let r = again.lock();
        assert_eq!(
            r.get("/repo"),
            Some(Rec::Dir {
                stamp: stamp(1),
                names: 0,
                absent: 0
            })
        );
        assert_eq!(
            r.get("/repo/a b"),
            Some(Rec::Dir {
                stamp: stamp(2),
                names: 0xabc,
                absent: 0b1011
            })
        );
        assert_eq!(
            r.get("/repo/a b/.claude"),
            Some(Rec::Missing { parent: stamp(2) })
        );
        drop(r);
        assert_eq!(again.encode(), memory.encode(), "stable bytes");
    }

    #[rstest]
    #[case::other_header(b"dsh-dir-stamps 2\nD 1 2 3 4 5 6 0 0 /a\n".as_slice(), 0)]
    #[case::relative_path(b"dsh-dir-stamps 1\nD 1 2 3 4 5 6 0 0 a\n".as_slice(), 0)]
    #[case::short_line(b"dsh-dir-stamps 1\nD 1 2 3 /a\nD 1 2 3 4 5 6 0 0 /b\n".as_slice(), 1)]
    #[case::bad_tag(b"dsh-dir-stamps 1\nX 1 2 3 4 5 6 0 0 /a\n".as_slice(), 0)]
    #[case::not_hex(b"dsh-dir-stamps 1\nD 1 2 3 4 5 zz 0 0 /a\n".as_slice(), 0)]
    #[case::empty(b"".as_slice(), 0)]
    fn malformed_input_is_skipped_never_trusted(#[case] bytes: &[u8], #[case] kept: usize) {
        assert_eq!(DirMemory::decode(bytes).len(), kept);
    }

    /// The parse before issue 35 (`&str`, `splitn`, `from_str_radix`), the
    /// reference the byte parse must agree with.
    fn reference_line(line: &str) -> Option<(&str, Rec)> {
        let mut fields = line.splitn(10, ' ');
        let tag = fields.next()?;
        let mut word = || u64::from_str_radix(fields.next()?, 16).ok();
        let w = [word()?, word()?, word()?, word()?, word()?, word()?];
        let names = word()?;
        let absent = word()?;
        let dir = fields.next().filter(|d| d.starts_with('/'))?;
        let stamp = Stamp::from_words(w);
        let rec = match tag {
            "D" => Rec::Dir {
                stamp,
                names,
                absent,
            },
            "M" => Rec::Missing { parent: stamp },
            _ => return None,
        };
        Some((dir, rec))
    }

    #[rstest]
    #[case::upper_case_digits("D A B C D E F 0 0 /a")]
    #[case::plus_sign("M +1 2 3 4 5 6 0 0 /a")]
    #[case::lone_plus("D + 2 3 4 5 6 0 0 /a")]
    #[case::sixteen_digits("D ffffffffffffffff 2 3 4 5 6 0 0 /a")]
    #[case::overflow("D 10000000000000000 2 3 4 5 6 0 0 /a")]
    #[case::leading_zeros("D 00000000000000000001 2 3 4 5 6 0 0 /a")]
    #[case::double_space("D 1  2 3 4 5 6 0 0 /a")]
    #[case::path_with_spaces("D 1 2 3 4 5 6 0 0 /a b  c ")]
    #[case::no_path("D 1 2 3 4 5 6 0 0")]
    #[case::empty_path("D 1 2 3 4 5 6 0 0 ")]
    #[case::long_tag("DD 1 2 3 4 5 6 0 0 /a")]
    #[case::no_tag(" 1 2 3 4 5 6 0 0 /a")]
    #[case::empty("")]
    fn the_byte_parse_reads_a_line_as_the_str_parse_did(#[case] line: &str) {
        assert_eq!(
            parse_line(line.as_bytes()),
            reference_line(line),
            "{line:?}"
        );
    }

    proptest::proptest! {
        /// Lines built from the encoding's own tokens and near misses: the
        /// byte parse keeps exactly the records the reference keeps.
        #[test]
        fn the_byte_parse_agrees_with_the_str_parse(
            line in "[DMX ]{0,2}([0-9a-fA-Fg+]{0,18} ){0,9}[/a ]{0,4}[é\\x00]?[a-z/ ]{0,6}"
        ) {
            proptest::prop_assert_eq!(parse_line(line.as_bytes()), reference_line(&line));
        }

        /// Mostly well-formed lines, so that kept records are compared too.
        #[test]
        fn the_byte_parse_agrees_on_nearly_valid_lines(
            line in "[DMX] (\\+?[0-9a-fA-F]{1,17} ){8}/[a-z é]{0,8}"
        ) {
            proptest::prop_assert_eq!(parse_line(line.as_bytes()), reference_line(&line));
        }
    }

    #[test]
    fn a_path_that_is_not_utf8_is_skipped_alone() {
        let mut bytes = b"dsh-dir-stamps 1\nD 1 2 3 4 5 6 0 0 /a\xff\n".to_vec();
        bytes.extend_from_slice(b"D 1 2 3 4 5 6 0 0 /b\n");
        let memory = DirMemory::decode(&bytes);
        assert_eq!(memory.len(), 1);
        assert!(memory.lock().get("/b").is_some());
    }

    #[test]
    fn untrusted_names_forget_the_directory() {
        let memory = DirMemory::new();
        let mut r = memory.lock();
        r.names("/a", Some(stamp(1)), 7, 1);
        r.names("/a", None, 7, 1);
        assert_eq!(r.get("/a"), None);
    }

    #[test]
    fn a_new_stamp_drops_the_names_seen_under_the_old_one() {
        let memory = DirMemory::new();
        let mut r = memory.lock();
        r.names("/a", Some(stamp(1)), 7, 1);
        r.stamp("/a", stamp(1));
        assert!(matches!(r.get("/a"), Some(Rec::Dir { absent: 1, .. })));
        r.stamp("/a", stamp(9));
        assert_eq!(
            r.get("/a"),
            Some(Rec::Dir {
                stamp: stamp(9),
                names: 0,
                absent: 0
            })
        );
    }
}
