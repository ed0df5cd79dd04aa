//! Names-only roots on disk (the rules: the crate's `named` module,
//! docs/decisions/0044): the directories' handles, opened on first use,
//! and the probe and bounded read of an admitted path through them.

use std::sync::OnceLock;

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, OpenOptions};
use tokio_util::sync::CancellationToken;

use super::classify::{Class, classify, classify_metadata};
use super::{Inner, Root};
use crate::blocking::check;
use crate::named::{Entry, Walk, admitted, walk};
use crate::paths::{normalize, normalized};
use crate::provider::{Cancelled, Probe, ReadOutcome, Unavailable};

/// The names-only roots of a provider: the directories and the relative
/// paths each of them admits.
pub(super) struct Named {
    roots: Vec<Root>,
    /// Plain relative paths (validated by the configuration).
    names: Vec<String>,
}

impl Named {
    pub(super) fn new(
        dirs: impl IntoIterator<Item = Utf8PathBuf>,
        names: &[String],
        authority: cap_std::AmbientAuthority,
    ) -> Self {
        let mut roots: Vec<Root> = Vec::new();
        for dir in dirs.into_iter().filter(|d| d.is_absolute()) {
            let path = normalize(&dir);
            if roots.iter().all(|r| r.path != path) {
                roots.push(Root {
                    path,
                    authority,
                    dir: OnceLock::new(),
                });
            }
        }
        Self {
            roots,
            names: names.to_vec(),
        }
    }

    /// The directories, in the order given.
    pub(super) fn dirs(&self) -> impl Iterator<Item = &Utf8Path> {
        self.roots.iter().map(|r| r.path.as_path())
    }
}

fn entry(dir: &Dir, rel: &Utf8Path) -> Entry {
    match dir.symlink_metadata(rel.as_std_path()) {
        Ok(m) if m.file_type().is_symlink() => match dir.read_link_contents(rel.as_std_path()) {
            Ok(text) => match Utf8PathBuf::from_path_buf(text) {
                Ok(text) => Entry::Link(text),
                Err(_) => Entry::Failed(Unavailable::Io(
                    "symlink target is not valid UTF-8".to_owned(),
                )),
            },
            Err(error) => failed(&error),
        },
        Ok(m) if m.is_dir() => Entry::Dir,
        Ok(_) => Entry::Other,
        Err(error) => failed(&error),
    }
}

fn failed(error: &std::io::Error) -> Entry {
    match classify(error) {
        Class::Absent => Entry::Missing,
        Class::Escape => Entry::Failed(Unavailable::OutsideTrustedRoots),
        Class::Unavailable(reason) => Entry::Failed(reason),
    }
}

impl Inner {
    /// The names-only root admitting `path` and the name it is there, when
    /// no trusted root contains `path`.
    pub(super) fn admit_named(&self, path: &Utf8Path) -> Option<(&Root, Utf8PathBuf)> {
        let named = self.named.get()?;
        let path = normalized(path);
        if self.locate(&path).is_some() {
            return None;
        }
        let (dir, rel) = admitted(named.dirs(), &named.names, &path)?;
        let root = named.roots.iter().find(|r| r.path == dir)?;
        Some((root, rel))
    }

    /// The walk of an admitted path: its target relative to the
    /// directory, or what to report.
    fn walk_named<'a>(
        &self,
        root: &'a Root,
        rel: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Result<(&'a Dir, Utf8PathBuf), Walk>, Cancelled> {
        check(cancel)?;
        let Some(dir) = root.handle() else {
            return Ok(Err(Walk::Absent));
        };
        let names = self.named.get().map_or(&[][..], |n| &n.names[..]);
        Ok(match walk(&root.path, names, rel, |p| entry(dir, p)) {
            Walk::Target(target) => Ok((dir.as_ref(), target)),
            other => Err(other),
        })
    }

    /// A probe of an admitted names-only path.
    pub(super) fn probe_named(
        &self,
        root: &Root,
        rel: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Probe, Cancelled> {
        Ok(match self.walk_named(root, rel, cancel)? {
            Ok((dir, target)) => match dir.symlink_metadata(target.as_std_path()) {
                Ok(metadata) if !metadata.file_type().is_symlink() => classify_metadata(&metadata),
                // Replaced by a link since the walk: not followed.
                Ok(_) => Probe::Unavailable(Unavailable::OutsideTrustedRoots),
                Err(error) => match failed(&error) {
                    Entry::Failed(reason) => Probe::Unavailable(reason),
                    _ => Probe::Absent,
                },
            },
            Err(Walk::Unavailable(reason)) => Probe::Unavailable(reason),
            Err(_) => Probe::Absent,
        })
    }

    /// A bounded read of an admitted names-only path: walked as
    /// [`Self::probe_named`] does, then opened without blocking (a FIFO is
    /// never waited on) and without following a link, from the directory's
    /// own handle; what opened decides its kind and size.
    pub(super) fn read_named(
        &self,
        root: &Root,
        rel: &Utf8Path,
        cap: u64,
        cancel: &CancellationToken,
    ) -> Result<ReadOutcome, Cancelled> {
        let (dir, target) = match self.walk_named(root, rel, cancel)? {
            Ok(found) => found,
            Err(Walk::Unavailable(reason)) => return Ok(ReadOutcome::Unavailable(reason)),
            Err(_) => return Ok(ReadOutcome::Absent),
        };
        check(cancel)?;
        let mut options = OpenOptions::new();
        options.read(true).nonblock(true).follow(FollowSymlinks::No);
        let file = match dir.open_with(target.as_std_path(), &options) {
            Ok(file) => file,
            Err(error) => {
                return Ok(match failed(&error) {
                    Entry::Failed(reason) => ReadOutcome::Unavailable(reason),
                    _ => ReadOutcome::Absent,
                });
            }
        };
        self.read_open(file, cap, cancel)
    }
}
