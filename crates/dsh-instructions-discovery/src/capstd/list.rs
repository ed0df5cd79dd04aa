//! Listing one directory (R-RULE-1, [`FsProvider::list_dir`]): the
//! directory followed like a probe (links inside the trusted roots), then
//! opened beneath its root's handle and read entry by entry; no entry is
//! opened or followed.
//!
//! [`FsProvider::list_dir`]: crate::FsProvider::list_dir

use camino::Utf8Path;
use tokio_util::sync::CancellationToken;

use super::Inner;
use super::blocking::check;
use super::classify::{Class, classify};
use super::resolve::Resolution;
use crate::provider::{Cancelled, DirListing, EntryKind, Unavailable};

impl Inner {
    pub(super) fn list_dir(
        &self,
        dir: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<DirListing, Cancelled> {
        let (root, rel) = match self.resolve(dir, cancel)? {
            Resolution::Found {
                root,
                rel,
                metadata,
            } if metadata.is_dir() => (root, rel),
            Resolution::Found { .. } | Resolution::Absent => return Ok(DirListing::Absent),
            Resolution::Unavailable(reason) => return Ok(DirListing::Unavailable(reason)),
        };
        let Some(handle) = root.handle() else {
            return Ok(DirListing::Absent);
        };
        let opened = if rel.as_str() == "." {
            handle.try_clone()
        } else {
            handle.open_dir(rel.as_std_path())
        };
        let read = opened.and_then(|d| d.entries());
        let entries = match read {
            Ok(entries) => entries,
            Err(error) => return Ok(failed(&error)),
        };
        let mut out = Vec::new();
        let mut truncated = false;
        for entry in entries {
            check(cancel)?;
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if out.len() == DirListing::MAX_ENTRIES {
                truncated = true;
                break;
            }
            let kind = match entry.file_type() {
                Ok(t) if t.is_symlink() => EntryKind::Link,
                Ok(t) if t.is_dir() => EntryKind::Dir,
                Ok(t) if t.is_file() => EntryKind::File,
                Ok(_) => EntryKind::Other,
                // Raced away: leave it out, as a later listing would.
                Err(_) => continue,
            };
            out.push((name, kind));
        }
        out.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        Ok(DirListing::Entries {
            entries: out,
            truncated,
        })
    }
}

fn failed(error: &std::io::Error) -> DirListing {
    match classify(error) {
        Class::Absent => DirListing::Absent,
        Class::Escape => DirListing::Unavailable(Unavailable::OutsideTrustedRoots),
        Class::Unavailable(reason) => DirListing::Unavailable(reason),
    }
}
