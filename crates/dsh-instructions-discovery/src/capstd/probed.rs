//! The regular files the latest probes found, kept for the reads that
//! follow them. A read of a path noted here opens it without first asking
//! what it is (one `statx` less; on a chain, a walk from the root less): the
//! probe a moment ago found a regular file there, reached through no link,
//! and the read's open refuses every link and its `fstat` still decides
//! what was opened. So a FIFO or device is opened only if one replaced the
//! file within that moment — the same race the general path has between
//! its `statx` and its open (R-DISC-4), bounded here by [`NOTE_LIFETIME`].

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::time::{Duration, Instant};

/// Files remembered at most: a batch of thousands of directories costs no
/// more than this many notes.
const MAX_NOTES: usize = 256;

/// How long a note stands in for the `statx` it saves: reads follow their
/// probes within the same composition, microseconds later.
const NOTE_LIFETIME: Duration = Duration::from_secs(1);

/// Normalized absolute path → when a probe found a regular file there,
/// keyed by the path's hash under this process's random keys: a deep
/// chain's paths are long, and a copy of each was the largest share of a
/// probe batch's memory (issue 35 item 3). A collision (not something a
/// tree's names can aim at, the keys being random) would only let one read
/// skip the `statx` that its open and `fstat` stand in for anyway.
#[derive(Debug, Default)]
pub(super) struct ProbedFiles {
    files: HashMap<u64, Instant>,
    keys: RandomState,
}

impl ProbedFiles {
    /// Notes that a probe just found a regular file at `path` through no
    /// link; when full, the older notes are dropped first.
    /// `path` is given in pieces, joined as written (`dir`, `/`, `name`):
    /// nothing is built to note it.
    pub(super) fn note(&mut self, path: &[&str]) {
        if self.files.len() >= MAX_NOTES {
            self.files.clear();
        }
        let key = self.key(path);
        self.files.insert(key, Instant::now());
    }

    /// The hash of the pieces' concatenation (a hasher's `write` is a byte
    /// stream: the pieces hash as their joined text does).
    fn key(&self, pieces: &[&str]) -> u64 {
        let mut hasher = self.keys.build_hasher();
        for piece in pieces {
            hasher.write(piece.as_bytes());
        }
        hasher.finish()
    }

    /// Takes the note for `path`: whether a probe found a regular file
    /// there less than [`NOTE_LIFETIME`] ago.
    pub(super) fn take(&mut self, path: &str) -> bool {
        self.take_at(path, Instant::now())
    }

    fn take_at(&mut self, path: &str, now: Instant) -> bool {
        if self.files.is_empty() {
            return false;
        }
        self.files
            .remove(&self.key(&[path]))
            .is_some_and(|noted| now.saturating_duration_since(noted) < NOTE_LIFETIME)
    }

    /// Notes held now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.files.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_taken_once_while_fresh_and_the_notes_stay_bounded() {
        let mut probed = ProbedFiles::default();
        // Taken as of a moment before the note: fresh however long the
        // thread is descheduled in between (decision 0082).
        let before = Instant::now();
        probed.note(&["/r", "/", "AGENTS.md"]);
        assert!(!probed.take_at("/r/CLAUDE.md", before));
        assert!(probed.take_at("/r/AGENTS.md", before));
        assert!(!probed.take_at("/r/AGENTS.md", before), "taken once");
        probed.note(&["/r", "/", "AGENTS.md"]);
        let later = Instant::now() + NOTE_LIFETIME;
        assert!(!probed.take_at("/r/AGENTS.md", later), "expired");
        let before = Instant::now();
        for i in 0..(MAX_NOTES * 3) {
            probed.note(&[&format!("/r/{i}"), "/", "AGENTS.md"]);
        }
        assert!(probed.len() <= MAX_NOTES);
        let last = MAX_NOTES * 3 - 1;
        assert!(
            probed.take_at(&format!("/r/{last}/AGENTS.md"), before),
            "the newest note survives"
        );
    }
}
