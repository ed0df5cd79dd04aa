//! A path's stamp as the operating system reports it, and when a stamp
//! vouches: its last change lies at least [`MARGIN`] before the event
//! began (the racy-timestamp argument of the module's doc).

use std::time::{Duration, SystemTime};

use camino::Utf8Path;

/// How old a stamped change must be, before the event began, to vouch.
pub(crate) const MARGIN: Duration = Duration::from_secs(2);

#[cfg(test)]
thread_local! {
    /// Tests that cannot wait for [`MARGIN`] shorten it.
    pub(crate) static TEST_MARGIN: std::cell::Cell<Option<Duration>> =
        const { std::cell::Cell::new(None) };
}

pub(super) fn margin() -> Duration {
    #[cfg(test)]
    if let Some(m) = TEST_MARGIN.with(std::cell::Cell::get) {
        return m;
    }
    MARGIN
}

/// One path's stamp: device, inode, mode, size, mtime and ctime (seconds,
/// nanoseconds), as the operating system reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp(pub(super) [u64; 8]);

impl Stamp {
    #[cfg(unix)]
    pub(super) fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        // Seconds before 1970 keep their bits: only equality and the
        // margin (which such a ctime passes) read them.
        Self([
            meta.dev(),
            meta.ino(),
            u64::from(meta.mode()),
            meta.size(),
            meta.mtime().cast_unsigned(),
            meta.mtime_nsec().cast_unsigned(),
            meta.ctime().cast_unsigned(),
            meta.ctime_nsec().cast_unsigned(),
        ])
    }

    /// Whether its last change lies at least the margin before `t0`.
    pub(super) fn old(&self, t0: SystemTime) -> bool {
        let secs = self.0[6].cast_signed();
        let Ok(secs) = u64::try_from(secs) else {
            return true;
        };
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(secs, 0)
            + Duration::from_nanos(self.0[7].min(999_999_999));
        t0.checked_sub(margin())
            .is_some_and(|limit| changed <= limit)
    }
}

/// How a path is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Look {
    /// Its own entry (`lstat`): a file, or a symbolic link itself.
    Entry,
    /// What it resolves to (`stat`): a directory, or a link's target.
    Target,
}

impl Look {
    pub(super) const fn tag(self) -> char {
        match self {
            Self::Entry => 'e',
            Self::Target => 't',
        }
    }
}

#[cfg(unix)]
pub(super) fn look(path: &Utf8Path, how: Look) -> std::io::Result<Stamp> {
    let meta = match how {
        Look::Entry => std::fs::symlink_metadata(path)?,
        Look::Target => std::fs::metadata(path)?,
    };
    Ok(Stamp::of(&meta))
}

#[cfg(not(unix))]
pub(super) fn look(_path: &Utf8Path, _how: Look) -> std::io::Result<Stamp> {
    // No stamps to vouch with: the memo is never written.
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Whether an error says nothing is at the path (or a file stands where a
/// directory of it should).
pub(super) fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// Whether an entry's stamp is a symbolic link's.
pub(super) fn is_link(entry: Stamp) -> bool {
    entry.0[2] & 0o170_000 == 0o120_000
}
