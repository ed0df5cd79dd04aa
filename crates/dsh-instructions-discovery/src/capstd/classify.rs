//! What the OS said, in the provider's terms: an `io::Error` as absent,
//! an escape from the root or a reason the path is unavailable, and a
//! file's metadata as a probe with its version (R-DISC-4).

use std::io;

use cap_std::fs::Metadata;
use rustix::io::Errno;

use crate::provider::{FileIdentity, FileVersion, PresentFile, Probe, Unavailable};
use crate::stamp::{Raw, RawKind};

/// What an `io::Error` means for classification.
pub(super) enum Class {
    /// `ENOENT`/`ENOTDIR`: confirmed absent.
    Absent,
    /// cap-std refused to leave the root (no OS error code).
    Escape,
    Unavailable(Unavailable),
}

pub(super) fn classify(error: &io::Error) -> Class {
    match Errno::from_io_error(error) {
        Some(Errno::NOENT | Errno::NOTDIR) => Class::Absent,
        Some(Errno::LOOP) => Class::Unavailable(Unavailable::Loop),
        Some(Errno::ACCESS | Errno::PERM) => Class::Unavailable(Unavailable::PermissionDenied),
        Some(Errno::TIMEDOUT) => Class::Unavailable(Unavailable::TimedOut),
        Some(_) => Class::Unavailable(Unavailable::Io(error.to_string())),
        None => match error.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Class::Absent,
            io::ErrorKind::PermissionDenied => Class::Escape,
            io::ErrorKind::TimedOut => Class::Unavailable(Unavailable::TimedOut),
            _ => Class::Unavailable(Unavailable::Io(error.to_string())),
        },
    }
}

fn nanos(secs: i64, nsec: i64) -> u64 {
    // Wrapping is fine: the value is only compared for equality.
    (secs as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(nsec as u64)
}

/// How long a file must have stood unchanged before the moment it was
/// looked at for its version to be settled ([`FileVersion::settled`](crate::provider::FileVersion::settled)): far
/// above any file system's timestamp tick, as for the directory stamps
/// (decision 0007).
const SETTLED_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// (dev, ino, size, mtime, ctime) folded into four words; equal versions of a
/// real file imply none of these changed on one device. Settled when both
/// timestamps lie [`SETTLED_AFTER`] before `seen` (a clock reading taken at
/// the stat), so no later change can share them.
pub(super) fn version_of(raw: &Raw, seen: std::time::SystemTime) -> FileVersion {
    let latest = raw.mtime.0.max(raw.ctime.0);
    let settled = seen
        .checked_sub(SETTLED_AFTER)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_secs()).ok())
        // Whole seconds, rounded down on both sides: a change in the same
        // second as the bound is never settled.
        .is_some_and(|bound| latest < bound);
    let build = if settled {
        FileVersion::settled
    } else {
        FileVersion::new
    };
    build([
        raw.ino,
        raw.size,
        nanos(raw.mtime.0, raw.mtime.1),
        nanos(raw.ctime.0, raw.ctime.1) ^ raw.dev.rotate_left(32),
    ])
}

/// A resolved target is present only if it is a regular file (R-DISC-4).
pub(super) fn classify_metadata(metadata: &Metadata) -> Probe {
    classify_raw(&Raw::of(metadata))
}

/// [`classify_metadata`] of a raw `statx` (never a symlink here: callers
/// resolve those first).
pub(super) fn classify_raw(raw: &Raw) -> Probe {
    classify_raw_seen(raw, std::time::SystemTime::now())
}

/// [`classify_raw`] judged against `seen`, a clock reading taken before the
/// `statx` (a batch's, read once for all its probes: an earlier reading
/// only settles fewer versions).
pub(super) fn classify_raw_seen(raw: &Raw, seen: std::time::SystemTime) -> Probe {
    if raw.kind == RawKind::File {
        Probe::Present(PresentFile {
            size: raw.size,
            version: version_of(raw, seen),
            identity: FileIdentity::Inode {
                dev: raw.dev,
                ino: raw.ino,
            },
        })
    } else {
        Probe::Absent
    }
}

/// A fast-path failure: absent or unavailable, or `None` when cap-std refused
/// the name from the directory handle (the full probe re-anchors it).
pub(super) fn fast_error(error: &io::Error) -> Option<Probe> {
    match classify(error) {
        Class::Absent => Some(Probe::Absent),
        Class::Escape => None,
        Class::Unavailable(reason) => Some(Probe::Unavailable(reason)),
    }
}
