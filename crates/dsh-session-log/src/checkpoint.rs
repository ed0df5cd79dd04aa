//! The checkpoint side file (R-LOG-5): `session.checkpoint.json`, the state
//! derived from the first `log_len` bytes of the log, so an open reads only
//! what was appended since.
//!
//! It is derived and rebuildable: a missing, unreadable, other-version or
//! stale one (the log is shorter than `log_len`, or the log's first and last
//! 4 KiB before `log_len` do not hash to `digest`) is ignored and the log is
//! read whole. A damaged one (not a file, unreadable, not a checkpoint's
//! JSON) is also removed and reported ([`crate::side`]). Writers replace it
//! with [`crate::side::write`] under the session lock, as a
//! [`Durability::Cache`]: not fsync'd; after a crash it is old, new, or
//! unreadable, and each of those is detected; the log itself was fsync'd
//! before any checkpoint covering it was written.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

use crate::event::SessionHeader;
use crate::parse::SkippedLine;
use crate::side::{self, Durability};
use crate::summary::SurfaceSummary;
use crate::{CHECKPOINT_FILE_NAME, LogError};

/// `format` of a checkpoint file.
const FORMAT: &str = "dsh-session-checkpoint";
/// `version` this build writes and reads; any other is ignored (rebuilt).
const VERSION: u32 = 1;
/// Bytes hashed at each end of the covered range.
const EDGE: u64 = 4096;

/// The on-disk checkpoint.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    pub format: String,
    pub version: u32,
    /// Log length covered: whole lines only.
    pub log_len: u64,
    /// Lines in the covered range, header included.
    pub lines: usize,
    /// SHA-1 (hex) of `log_len` and the first and last [`EDGE`] bytes of the
    /// covered range.
    pub digest: String,
    pub header: SessionHeader,
    pub summary: SurfaceSummary,
    /// Skipped lines in the covered range, so an open reports what a whole
    /// read would.
    pub skipped: Vec<SkippedLine>,
}

impl Checkpoint {
    pub(crate) fn new(
        log_len: u64,
        lines: usize,
        digest: String,
        header: SessionHeader,
        summary: SurfaceSummary,
        skipped: Vec<SkippedLine>,
    ) -> Self {
        Self {
            format: FORMAT.into(),
            version: VERSION,
            log_len,
            lines,
            digest,
            header,
            summary,
            skipped,
        }
    }
}

/// The checkpoint path next to `log_path`.
pub(crate) fn path_for(log_path: &Utf8Path) -> Utf8PathBuf {
    log_path.with_file_name(CHECKPOINT_FILE_NAME)
}

/// The digest of the first `len` bytes of `file` (see [`Checkpoint::digest`]).
pub(crate) fn digest(mut file: &File, len: u64) -> io::Result<String> {
    let mut hasher = Sha1::new();
    hasher.update(len.to_le_bytes());
    let head = len.min(EDGE);
    let tail_start = len.saturating_sub(EDGE).max(head);
    let mut buf = vec![0; usize::try_from(EDGE).unwrap_or(4096)];
    for (start, end) in [(0, head), (tail_start, len)] {
        let n = usize::try_from(end - start).unwrap_or(0);
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The checkpoint at `path` when it is readable, of this version, and still
/// describes a prefix of `log` (whose length is `log_len`); `None` otherwise.
/// A damaged file is removed and reported (called under the session lock).
pub(crate) fn load(path: &Utf8Path, log: &File, log_len: u64) -> Option<Checkpoint> {
    let checkpoint: Checkpoint = crate::side::load_json(
        path,
        "a checkpoint",
        "removed; rebuilt from the log, read whole",
    )?;
    let usable = checkpoint.format == FORMAT
        && checkpoint.version == VERSION
        && checkpoint.log_len <= log_len
        && checkpoint.lines >= 1
        && digest(log, checkpoint.log_len).ok()? == checkpoint.digest;
    usable.then_some(checkpoint)
}

/// Replaces the checkpoint at `path` atomically (a cache: not fsync'd).
pub(crate) fn store(path: &Utf8Path, checkpoint: &Checkpoint) -> Result<(), LogError> {
    let bytes = serde_json::to_vec(checkpoint).map_err(|e| LogError::InvalidEvent {
        reason: format!("checkpoint: {e}"),
    })?;
    side::write(path, &bytes, Durability::Cache).map_err(|source| LogError::Io {
        op: "write checkpoint",
        path: path.to_owned(),
        source,
    })
}
