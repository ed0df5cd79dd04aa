//! The event records that let the `--part K` invocations of one event give
//! pieces of ONE composition (R-HOOK-4, decision 0018).
//!
//! The first part invocation of an event to take the session lock composes,
//! commits the message to the session log and records its split here under
//! the event's key (a digest of the stdin bytes, which the agent sends
//! alike to every entry of the event); the others find the record and
//! answer their piece without composing. Each piece is claimed once. Pieces
//! nobody claimed — more parts than registered entries, or an entry that
//! never ran — are carried to the front of the next event's split: given
//! again later, never dropped. The file is only read and written under the
//! session lock.

use camino::Utf8Path;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::error::HookError;
use crate::split::Part;

/// The records file inside a session's directory.
pub(crate) const RECORDS_FILE_NAME: &str = "parts.json";

/// How many recent events keep their record (late part invocations of a
/// recent event find it; older records only hold claimed pieces).
const KEEP: usize = 32;

/// The record of one event's split.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The event key ([`event_key`]).
    pub key: String,
    /// The pieces, in composed order (carried pieces of earlier events first).
    pub parts: Vec<Part>,
    /// Which pieces have been answered.
    pub claimed: Vec<bool>,
}

/// Every recent record of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Records {
    /// Oldest first.
    pub records: Vec<Record>,
}

/// The key of an event: the SHA-256 of its stdin bytes.
pub(crate) fn event_key(input: &[u8]) -> String {
    hex(&Sha256::digest(input))
}

/// Lowercase hex of a digest's bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Records {
    /// The session's records; an absent or unreadable file is none (a
    /// torn file cannot give a piece twice: its pieces were claimed or are
    /// in the log as committed — the loss is logged by the caller).
    pub(crate) fn load(path: &Utf8Path) -> (Self, Option<HookError>) {
        use dsh_session_log::side::{self, Found};
        let (source, malformed) = match side::read(path) {
            Found::Bytes(bytes) => match serde_json::from_slice(&bytes) {
                Ok(r) => return (r, None),
                Err(e) => (std::io::Error::other(e), true),
            },
            Found::Missing => return (Self::default(), None),
            Found::Damaged(damage) => (std::io::Error::other(damage), false),
        };
        // Called under the session lock: the damaged file goes, and the
        // next save writes it anew.
        let _ = side::discard(path);
        let damage = if malformed {
            format!("not parts records ({path}: {source})")
        } else {
            source.to_string()
        };
        let error = HookError::Records {
            path: path.to_owned(),
            source,
        };
        side::report(
            path,
            &damage,
            "removed; started empty (pieces already given are in the log)",
        );
        (Self::default(), Some(error))
    }

    /// Writes the records atomically ([`dsh_session_log::side::write`]; a
    /// cache: not fsync'd).
    pub(crate) fn save(&self, path: &Utf8Path) -> Result<(), HookError> {
        let records = |source| HookError::Records {
            path: path.to_owned(),
            source,
        };
        let text = serde_json::to_vec(self).map_err(|e| records(std::io::Error::other(e)))?;
        dsh_session_log::side::write(path, &text, dsh_session_log::side::Durability::Cache)
            .map_err(records)
    }

    /// The record of `key`, if recorded.
    pub(crate) fn find_mut(&mut self, key: &str) -> Option<&mut Record> {
        self.records.iter_mut().rev().find(|r| r.key == key)
    }

    /// Takes every unclaimed piece of the earlier records (they are given
    /// with the next event instead), marking them claimed.
    pub(crate) fn take_unclaimed(&mut self) -> Vec<Part> {
        let mut out = Vec::new();
        for r in &mut self.records {
            for (i, p) in r.parts.iter().enumerate() {
                if !r.claimed.get(i).copied().unwrap_or(true) {
                    out.push(p.clone());
                    if let Some(c) = r.claimed.get_mut(i) {
                        *c = true;
                    }
                }
            }
        }
        out
    }

    /// Adds a record, dropping the oldest beyond [`KEEP`].
    pub(crate) fn push(&mut self, record: Record) {
        self.records.push(record);
        let extra = self.records.len().saturating_sub(KEEP);
        self.records.drain(..extra);
    }
}

impl Record {
    /// Claims piece `k` (1-based): its index, unless it does not exist or
    /// was claimed already.
    pub(crate) fn claim(&mut self, k: usize) -> Option<usize> {
        let i = k.checked_sub(1)?;
        let c = self.claimed.get_mut(i)?;
        if *c {
            return None;
        }
        *c = true;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn rec(key: &str, n: usize) -> Record {
        Record {
            key: key.into(),
            parts: (0..n)
                .map(|i| Part::Whole(vec![vec![format!("{key}{i}")]]))
                .collect(),
            claimed: vec![false; n],
        }
    }

    #[test]
    fn each_piece_is_claimed_once() {
        let mut r = rec("a", 2);
        assert_eq!(r.claim(2), Some(1));
        assert_eq!(r.claim(2), None);
        assert_eq!(r.claim(3), None);
        assert_eq!(r.claim(0), None);
        assert_eq!(r.claim(1), Some(0));
    }

    #[test]
    fn unclaimed_pieces_are_carried_once() {
        let mut rs = Records::default();
        rs.push(rec("a", 3));
        rs.find_mut("a").expect("a").claim(1);
        let carried = rs.take_unclaimed();
        assert_eq!(
            carried,
            [
                Part::Whole(vec![vec!["a1".into()]]),
                Part::Whole(vec![vec!["a2".into()]])
            ]
        );
        assert!(rs.take_unclaimed().is_empty());
    }

    #[test]
    fn only_recent_records_are_kept() {
        let mut rs = Records::default();
        for i in 0..(KEEP + 5) {
            rs.push(rec(&format!("k{i}"), 0));
        }
        assert_eq!(rs.records.len(), KEEP);
        assert_eq!(rs.records[0].key, "k5");
    }

    use crate::testdir::tmp_dir;

    #[test]
    fn saved_records_load_back() {
        let (_tmp, dir) = tmp_dir();
        let path = dir.join(RECORDS_FILE_NAME);
        let mut rs = Records::default();
        rs.push(rec("a", 2));
        rs.save(&path).expect("saved");
        let (back, warn) = Records::load(&path);
        assert!(warn.is_none(), "{warn:?}");
        assert_eq!(back, rs);
    }

    /// An unreadable or torn file is none, with the reason naming the file;
    /// a missing one is none without a word.
    #[rstest]
    #[case::missing(None, None)]
    #[case::torn(Some(b"{\"records\": [".as_slice()), Some("malformed"))]
    #[case::foreign(Some(b"[1, 2]".as_slice()), Some("malformed"))]
    #[case::a_directory(None, Some("read"))]
    fn a_bad_records_file_is_none_with_the_reason(
        #[case] text: Option<&[u8]>,
        #[case] kind: Option<&str>,
    ) {
        let (_tmp, dir) = tmp_dir();
        let path = dir.join(RECORDS_FILE_NAME);
        match text {
            Some(text) => std::fs::write(&path, text).expect("write"),
            None if kind.is_some() => std::fs::create_dir(&path).expect("mkdir"),
            None => {}
        }
        let (rs, warn) = Records::load(&path);
        assert_eq!(rs, Records::default());
        let got = warn.as_ref().map(|w| match w {
            HookError::Records { source, .. }
                if source
                    .get_ref()
                    .is_some_and(|e| e.is::<serde_json::Error>()) =>
            {
                "malformed"
            }
            HookError::Records { .. } => "read",
            other => panic!("not a records error: {other:?}"),
        });
        assert_eq!(got, kind, "{warn:?}");
        if let Some(w) = warn {
            assert!(w.to_string().starts_with(&format!("{path}: ")), "{w}");
        }
    }

    /// A save that cannot write says which file it could not write.
    #[test]
    fn a_failed_save_names_the_file() {
        let (_tmp, dir) = tmp_dir();
        let path = dir.join("gone").join(RECORDS_FILE_NAME);
        let e = Records::default()
            .save(&path)
            .expect_err("no such directory");
        assert!(
            matches!(&e, HookError::Records { path: p, .. } if *p == path),
            "{e:?}"
        );
        assert!(e.to_string().starts_with(&format!("{path}: ")), "{e}");
    }
}
