//! Listing one directory (R-RULE-1, [`FsProvider::list_dir`]): the
//! directory followed like a probe (links inside the trusted roots), then
//! opened beneath its root's handle and read entry by entry; no entry is
//! opened or followed.
//!
//! A directory the handle cache (the `dircache` module) reaches through
//! real subdirectories is listed through its kept handle instead, and its
//! entries are kept beside its trusted stamp: while the stamp is unchanged
//! no entry was added, removed or renamed, so the kept entries are what a
//! new listing would read (an `fstat` per directory of the path instead of
//! a walk, an open and a read of the entries; issue 46 item 2, decision
//! 0090).
//!
//! [`FsProvider::list_dir`]: crate::FsProvider::list_dir

use std::sync::Arc;

use camino::Utf8Path;
use cap_std::fs::Dir;
use tokio_util::sync::CancellationToken;

use super::Inner;
use super::classify::{Class, classify};
use super::resolve::Resolution;
use crate::blocking::check;
use crate::dircache::{Batch, Listed};
use crate::paths::normalized;
use crate::provider::{Cancelled, DirListing, EntryKind, Unavailable};

impl Inner {
    pub(super) fn list_dir(
        &self,
        dir: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<DirListing, Cancelled> {
        check(cancel)?;
        if let Some(listing) = self.list_cached(dir, cancel)? {
            return Ok(listing);
        }
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
        match opened {
            Ok(dir) => Ok(read_entries(&dir, cancel)?.map_or_else(
                |error| failed(&error),
                |listed| DirListing::Entries {
                    entries: listed.entries,
                    truncated: listed.truncated,
                },
            )),
            Err(error) => Ok(failed(&error)),
        }
    }

    /// [`Self::list_dir`] of each of `dirs`, in one pass over the handle
    /// cache: a run of directories below one another (a chain's rules
    /// directories) validates each ancestor once, not once per listing.
    pub(super) fn list_dirs(
        &self,
        dirs: &[camino::Utf8PathBuf],
        cancel: &CancellationToken,
    ) -> Result<Vec<DirListing>, Cancelled> {
        let mut out = Vec::with_capacity(dirs.len());
        let mut cache = self.dirs.try_lock().ok();
        let mut batch = cache
            .as_deref_mut()
            .map(|c| Batch::new(c, self.margin, &[], None));
        for dir in dirs {
            check(cancel)?;
            let cached = match batch.as_mut() {
                Some(batch) => self.list_in(batch, dir, cancel)?,
                None => None,
            };
            out.push(match cached {
                Some(listing) => listing,
                // The cache is held by this pass: the full path.
                None => self.list_dir(dir, cancel)?,
            });
        }
        Ok(out)
    }

    /// The listing of `dir` through the handle cache, when it reaches
    /// `dir` (see the module docs); `None`: take the full path.
    fn list_cached(
        &self,
        dir: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Option<DirListing>, Cancelled> {
        let Ok(mut cache) = self.dirs.try_lock() else {
            return Ok(None);
        };
        let mut batch = Batch::new(&mut cache, self.margin, &[], None);
        self.list_in(&mut batch, dir, cancel)
    }

    /// [`Self::list_cached`] within `batch`.
    fn list_in(
        &self,
        batch: &mut Batch<'_>,
        dir: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Option<DirListing>, Cancelled> {
        let dir = normalized(dir);
        let root_of = |path: &Utf8Path| {
            self.roots
                .iter()
                .find(|r| r.path.as_str() == path.as_str())
                .and_then(|r| r.handle().cloned())
        };
        let Some((handle, stamp, slot)) = batch.handle(&root_of, &dir) else {
            return Ok(None);
        };
        let listed = match batch.listing(slot, stamp) {
            Some(listed) => listed,
            None => match read_entries(&handle, cancel)? {
                Ok(listed) => {
                    let listed = Arc::new(listed);
                    batch.keep_listing(slot, stamp, Arc::clone(&listed));
                    listed
                }
                // Whatever went wrong, the full path says what it is.
                Err(_) => return Ok(None),
            },
        };
        Ok(Some(DirListing::Entries {
            entries: listed.entries.clone(),
            truncated: listed.truncated,
        }))
    }
}

/// The entries of the open directory `dir`, in byte order of their names.
fn read_entries(
    dir: &Dir,
    cancel: &CancellationToken,
) -> Result<std::io::Result<Listed>, Cancelled> {
    {
        let entries = match dir.entries() {
            Ok(entries) => entries,
            Err(error) => return Ok(Err(error)),
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
        Ok(Ok(Listed {
            entries: out,
            truncated,
        }))
    }
}

fn failed(error: &std::io::Error) -> DirListing {
    match classify(error) {
        Class::Absent => DirListing::Absent,
        Class::Escape => DirListing::Unavailable(Unavailable::OutsideTrustedRoots),
        Class::Unavailable(reason) => DirListing::Unavailable(reason),
    }
}
