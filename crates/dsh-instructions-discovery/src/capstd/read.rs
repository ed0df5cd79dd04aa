//! Reading a file's text: resolved like a probe, opened without blocking on
//! a FIFO, read a chunk at a time up to the cap the metadata cannot be
//! trusted to enforce (R-DISC-4, R-DISC-6).

use std::io::{self, Read};

use camino::Utf8Path;
use cap_fs_ext::OpenOptionsSyncExt;
use cap_std::fs::{MetadataExt, OpenOptions};
use tokio_util::sync::CancellationToken;

use super::Inner;
use super::blocking::check;
use super::classify::{Class, classify, version_of};
use super::resolve::Resolution;
use crate::provider::{Cancelled, FileIdentity, LoadedText, ReadOutcome, Unavailable};
use crate::stamp::Raw;
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
        let (root, rel) = match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } if !metadata.is_file() => {
                return Ok(ReadOutcome::Absent);
            }
            Resolution::Found { metadata, .. } if metadata.len() > cap => {
                return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                    limit: cap,
                }));
            }
            Resolution::Found { root, rel, .. } => (root, rel),
            Resolution::Absent => return Ok(ReadOutcome::Absent),
            Resolution::Unavailable(reason) => return Ok(ReadOutcome::Unavailable(reason)),
        };
        check(cancel)?;
        // Nonblocking: if the path became a FIFO since the stat, open(2)
        // returns at once and the fstat below classifies it as absent.
        let mut options = OpenOptions::new();
        options.read(true).nonblock(true);
        let Some(root_dir) = root.handle() else {
            return Ok(ReadOutcome::Absent);
        };
        let mut file = match root_dir.open_with(rel.as_std_path(), &options) {
            Ok(file) => file,
            Err(error) => {
                return Ok(match Resolution::from(classify(&error)) {
                    Resolution::Unavailable(reason) => ReadOutcome::Unavailable(reason),
                    _ => ReadOutcome::Absent,
                });
            }
        };
        check(cancel)?;
        let seen = std::time::SystemTime::now();
        let metadata = match file.metadata() {
            Ok(metadata) => metadata,
            Err(error) => return Ok(ReadOutcome::Unavailable(Unavailable::Io(error.to_string()))),
        };
        if !metadata.is_file() {
            return Ok(ReadOutcome::Absent);
        }
        if metadata.len() > cap {
            return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                limit: cap,
            }));
        }
        // Metadata may lie (R-DISC-6): the count below is what enforces the cap.
        let expected = usize::try_from(metadata.len()).unwrap_or(0).min(1 << 24);
        // Read straight into the text buffer, a chunk at a time (the token
        // is checked between chunks); only the bytes a chunk may receive
        // are zeroed, so a small file never pays for a whole chunk.
        let mut bytes: Vec<u8> = Vec::with_capacity(expected + 1);
        loop {
            check(cancel)?;
            let start = bytes.len();
            let want = if start < expected {
                (expected - start + 1).min(CHUNK)
            } else {
                CHUNK.min(start.max(4096))
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
            version: version_of(&Raw::of(&metadata), seen),
            identity: FileIdentity::Inode {
                dev: metadata.dev(),
                ino: metadata.ino(),
            },
            bytes_read,
        }))
    }
}
