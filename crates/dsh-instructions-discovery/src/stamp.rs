//! A directory's stamp and the raw `statx` it and a file's version are
//! built from (decision 0007), shared by the in-process handle cache
//! (`dircache`) and the cross-process memory (`dirmemory`, decision 0037),
//! plus the short hash their path-keyed maps use.

use std::collections::HashMap;
use std::hash::Hasher;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cap_std::fs::Dir;
use cap_std::fs::{Metadata, MetadataExt};

/// A directory's identity and change times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

impl Stamp {
    /// The stamp of `metadata`, or `None` when its ctime is too close to
    /// `now` (or in the future) to rule out a later change in the same tick.
    pub(crate) fn trusted(metadata: &Metadata, now: SystemTime, margin: Duration) -> Option<Self> {
        Self::trusted_raw(&Raw::of(metadata), now, margin)
    }

    /// [`Stamp::trusted`] of a raw `statx` result.
    pub(crate) fn trusted_raw(raw: &Raw, now: SystemTime, margin: Duration) -> Option<Self> {
        let ctime = raw.ctime;
        let changed = u64::try_from(ctime.0)
            .ok()
            .map(|secs| UNIX_EPOCH + Duration::new(secs, u32::try_from(ctime.1).unwrap_or(0)))?;
        let settled = now.checked_sub(margin)?;
        (changed < settled).then_some(Self {
            dev: raw.dev,
            ino: raw.ino,
            ctime,
            mtime: raw.mtime,
        })
    }

    /// The stamp as six words (what `DirMemory::encode` writes).
    pub(crate) fn words(self) -> [u64; 6] {
        // Bit-for-bit casts: the words are only stored and compared.
        #[allow(clippy::cast_sign_loss)]
        [
            self.dev,
            self.ino,
            self.ctime.0 as u64,
            self.ctime.1 as u64,
            self.mtime.0 as u64,
            self.mtime.1 as u64,
        ]
    }

    /// The stamp [`Stamp::words`] gave.
    pub(crate) fn from_words(w: [u64; 6]) -> Self {
        #[allow(clippy::cast_possible_wrap)]
        Self {
            dev: w[0],
            ino: w[1],
            ctime: (w[2] as i64, w[3] as i64),
            mtime: (w[4] as i64, w[5] as i64),
        }
    }
}

/// What a stamp or a file version is made of, from cap-std's metadata or
/// from a raw `statx` (the remembered path of `DirMemory`), so both give
/// bit-identical stamps and versions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
    pub(crate) kind: RawKind,
}

/// The entry kinds a probe distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawKind {
    File,
    Dir,
    Symlink,
    Other,
}

impl Raw {
    pub(crate) fn of(metadata: &Metadata) -> Self {
        let t = metadata.file_type();
        Self {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.size(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
            kind: if t.is_symlink() {
                RawKind::Symlink
            } else if t.is_file() {
                RawKind::File
            } else if t.is_dir() {
                RawKind::Dir
            } else {
                RawKind::Other
            },
        }
    }

    /// `lstat` of `rel` relative to `dir`'s handle, intermediate components
    /// followed by the kernel (the caller proves them), the last not.
    /// Built as cap-std builds its metadata from `statx` (same device
    /// number), so stamps and versions compare equal across both paths.
    #[cfg(target_os = "linux")]
    pub(crate) fn lstat_at(dir: &Dir, rel: &str) -> Result<Self, rustix::io::Errno> {
        use rustix::fs::{AtFlags, StatxFlags, statx};
        let st = statx(dir, rel, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BASIC_STATS)?;
        Ok(Self::of_statx(&st))
    }

    /// The fields of a raw `statx` result.
    #[cfg(target_os = "linux")]
    fn of_statx(st: &rustix::fs::Statx) -> Self {
        use rustix::fs::{FileType, makedev};
        let kind = match FileType::from_raw_mode(u32::from(st.stx_mode)) {
            FileType::RegularFile => RawKind::File,
            FileType::Directory => RawKind::Dir,
            FileType::Symlink => RawKind::Symlink,
            _ => RawKind::Other,
        };
        Self {
            dev: makedev(st.stx_dev_major, st.stx_dev_minor),
            ino: st.stx_ino,
            size: st.stx_size,
            mtime: (st.stx_mtime.tv_sec, i64::from(st.stx_mtime.tv_nsec)),
            ctime: (st.stx_ctime.tv_sec, i64::from(st.stx_ctime.tv_nsec)),
            kind,
        }
    }

    /// `fstat` of a handle (an `O_PATH` one included), built as
    /// [`Raw::lstat_at`] builds its result, so versions compare equal.
    #[cfg(target_os = "linux")]
    pub(crate) fn fstat(fd: impl rustix::fd::AsFd) -> Result<Self, rustix::io::Errno> {
        use rustix::fs::{AtFlags, StatxFlags, statx};
        let st = statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS)?;
        Ok(Self::of_statx(&st))
    }

    /// `lstat` of the plain name `name` in `dir`. On Linux one raw `statx`
    /// of the basic fields: cap-std's metadata asks for every field and
    /// converts them all, which costs more than the call itself on the
    /// probe path; elsewhere cap-std's.
    pub(crate) fn lstat_name(dir: &Dir, name: &str) -> std::io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            Self::lstat_at(dir, name).map_err(std::io::Error::from)
        }
        #[cfg(not(target_os = "linux"))]
        {
            dir.symlink_metadata(name).map(|m| Self::of(&m))
        }
    }

    /// `fstat` of an open file ([`Raw::lstat_name`]'s counterpart).
    pub(crate) fn of_file(file: &cap_std::fs::File) -> std::io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            Self::fstat(file).map_err(std::io::Error::from)
        }
        #[cfg(not(target_os = "linux"))]
        {
            file.metadata().map(|m| Self::of(&m))
        }
    }

    /// `fstat` of a directory handle ([`Raw::lstat_name`]'s counterpart).
    pub(crate) fn of_dir(dir: &Dir) -> std::io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            Self::fstat(dir).map_err(std::io::Error::from)
        }
        #[cfg(not(target_os = "linux"))]
        {
            dir.dir_metadata().map(|m| Self::of(&m))
        }
    }
}

/// FNV-1a, for what must hash the same in every process and build (the
/// candidate-name list `DirMemory` stores); maps use [`PathMap`]'s hasher.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A map keyed by a directory path, looked up several times per directory
/// per batch: foldhash reads eight bytes at a time where FNV reads one (a
/// seeded hash, so crafted names cannot pile into one bucket).
pub(crate) type PathMap<V> = HashMap<String, V, foldhash::fast::RandomState>;
