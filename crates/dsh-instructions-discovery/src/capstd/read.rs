//! Reading a file's text: resolved like a probe, opened without blocking on
//! a FIFO, read a chunk at a time up to the cap the metadata cannot be
//! trusted to enforce (R-DISC-4, R-DISC-6).

use std::io::{self, Read};

use camino::Utf8Path;
use cap_fs_ext::OpenOptionsSyncExt;
use cap_std::fs::OpenOptions;
use tokio_util::sync::CancellationToken;

use super::Inner;
use super::classify::{Class, classify, version_of};
use super::resolve::Resolution;
use crate::blocking::check;
use crate::paths::normalized;
use crate::provider::{Cancelled, FileIdentity, LoadedText, ReadOutcome, Unavailable};
use crate::stamp::{Raw, RawKind};
use crate::text::decode_owned;

/// Bytes per `read(2)`: the token is checked between chunks.
const CHUNK: usize = 64 * 1024;

impl Inner {
    pub(super) fn read_text(
        &self,
        path: &Utf8Path,
        cap: u64,
        cancel: &CancellationToken,
    ) -> Result<ReadOutcome, Cancelled> {
        check(cancel)?;
        if let Some((root, rel)) = self.admit_named(path) {
            return self.read_named(root, &rel, cap, cancel);
        }
        let file = match self.open_plain(path, cap) {
            Some(file) => file,
            None => match self.open_resolved(path, cap, cancel)? {
                Ok(file) => file,
                Err(outcome) => return Ok(outcome),
            },
        };
        self.read_open(file, cap, cancel)
    }

    /// The bounded read of a file opened (without blocking) for reading:
    /// its own `fstat` decides kind and size, then chunks up to the cap.
    pub(super) fn read_open(
        &self,
        mut file: cap_std::fs::File,
        cap: u64,
        cancel: &CancellationToken,
    ) -> Result<ReadOutcome, Cancelled> {
        check(cancel)?;
        let seen = std::time::SystemTime::now();
        let raw = match Raw::of_file(&file) {
            Ok(raw) => raw,
            Err(error) => return Ok(ReadOutcome::Unavailable(Unavailable::Io(error.to_string()))),
        };
        if raw.kind != RawKind::File {
            return Ok(ReadOutcome::Absent);
        }
        if raw.size > cap {
            return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                limit: cap,
            }));
        }
        // Metadata may lie (R-DISC-6): the count below is what enforces the cap.
        let expected = usize::try_from(raw.size).unwrap_or(0).min(1 << 24);
        // Read straight into the text buffer, a chunk at a time (the token
        // is checked between chunks); only the bytes a chunk may receive
        // are zeroed, so a small file never pays for a whole chunk.
        let mut bytes: Vec<u8> = Vec::with_capacity(expected + 1);
        loop {
            check(cancel)?;
            let start = bytes.len();
            // At the expected size, the read that tells the end comes
            // into the one spare byte already allocated: growing by a
            // chunk there would double a small file's buffer for nothing
            // (issue 35 item 3). Only a file longer than its metadata said
            // grows it.
            let want = match start.cmp(&expected) {
                std::cmp::Ordering::Less => (expected - start + 1).min(CHUNK),
                std::cmp::Ordering::Equal => 1,
                std::cmp::Ordering::Greater => CHUNK.min(start.max(4096)),
            };
            bytes.resize(start + want, 0);
            let read = file.read(&mut bytes[start..]);
            bytes.truncate(start + read.as_ref().map_or(0, |n| *n));
            let n = match read {
                Ok(0) => break,
                Ok(n) => n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    return Ok(ReadOutcome::Unavailable(match classify(&error) {
                        Class::Unavailable(reason) => reason,
                        _ => Unavailable::Io(error.to_string()),
                    }));
                }
            };
            if (start + n) as u64 > cap {
                return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                    limit: cap,
                }));
            }
        }
        let bytes_read = bytes.len() as u64;
        Ok(ReadOutcome::Loaded(LoadedText {
            text: decode_owned(bytes),
            version: version_of(&raw, seen),
            identity: FileIdentity::Inode {
                dev: raw.dev,
                ino: raw.ino,
            },
            bytes_read,
        }))
    }

    /// The common case, a regular file reached through no symlink at all,
    /// in two or three system calls fewer than [`Self::open_resolved`] (no
    /// `O_PATH` open and close to learn what the path is). What it is comes
    /// from the probe that just found it (the `probed` module), or else
    /// from a `statx` that does not follow the last component; only a
    /// regular file (within the cap, when the `statx` tells) is opened, by
    /// `openat2` beneath the root refusing every symlink on the way, so what
    /// opens lies inside the root. Anything else — a link anywhere on the
    /// path, another kind of entry, an error, a kernel without `openat2` —
    /// answers `None` and the caller takes the general path, which decides
    /// exactly as before. The caller's `fstat` of the opened file still
    /// decides its kind and size (R-DISC-4: a path replaced by a FIFO in
    /// between opens without blocking and reads as absent).
    #[cfg(target_os = "linux")]
    pub(super) fn open_plain(&self, path: &Utf8Path, cap: u64) -> Option<cap_std::fs::File> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let path = normalized(path);
        let (root, rel) = self.locate(&path)?;
        if rel.as_str() == "." {
            return None;
        }
        let dir = root.handle()?;
        let probed = self
            .probed
            .try_lock()
            .is_ok_and(|mut p| p.take(path.as_str()));
        if !probed {
            // A hint only: it may follow a link in a middle component,
            // which the open below refuses.
            let raw = Raw::lstat_at(dir, rel.as_str()).ok()?;
            if raw.kind != RawKind::File || raw.size > cap {
                return None;
            }
        }
        let fd = rustix::fs::openat2(
            dir.as_ref(),
            rel.as_str(),
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )
        .ok()?;
        Some(cap_std::fs::File::from_std(std::fs::File::from(fd)))
    }

    /// Elsewhere every read takes the general path.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn open_plain(&self, _path: &Utf8Path, _cap: u64) -> Option<cap_std::fs::File> {
        None
    }

    /// The general path: the target resolved like a probe (links re-anchored
    /// across roots, R-DISC-7), refused unless a regular file within the cap,
    /// then opened without blocking. `Err` holds the outcome to report.
    fn open_resolved(
        &self,
        path: &Utf8Path,
        cap: u64,
        cancel: &CancellationToken,
    ) -> Result<Result<cap_std::fs::File, ReadOutcome>, Cancelled> {
        let (root, rel) = match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } if !metadata.is_file() => {
                return Ok(Err(ReadOutcome::Absent));
            }
            Resolution::Found { metadata, .. } if metadata.len() > cap => {
                return Ok(Err(ReadOutcome::Unavailable(Unavailable::TooLarge {
                    limit: cap,
                })));
            }
            Resolution::Found { root, rel, .. } => (root, rel),
            Resolution::Absent => return Ok(Err(ReadOutcome::Absent)),
            Resolution::Unavailable(reason) => {
                return Ok(Err(ReadOutcome::Unavailable(reason)));
            }
        };
        check(cancel)?;
        // Nonblocking: if the path became a FIFO since the stat, open(2)
        // returns at once and the fstat below classifies it as absent.
        let mut options = OpenOptions::new();
        options.read(true).nonblock(true);
        let Some(root_dir) = root.handle() else {
            return Ok(Err(ReadOutcome::Absent));
        };
        Ok(match root_dir.open_with(rel.as_std_path(), &options) {
            Ok(file) => Ok(file),
            Err(error) => Err(match Resolution::from(classify(&error)) {
                Resolution::Unavailable(reason) => ReadOutcome::Unavailable(reason),
                _ => ReadOutcome::Absent,
            }),
        })
    }
}
