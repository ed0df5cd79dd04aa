//! A known directory answered from the stamps an earlier process left
//! (decision 0037, argued in the `dirmemory` module): proven again with one
//! `statx` relative to its root instead of reopened.

use camino::Utf8Path;
#[cfg(target_os = "linux")]
use cap_std::fs::Dir;
#[cfg(target_os = "linux")]
use rustix::io::Errno;
use tokio_util::sync::CancellationToken;

use super::Inner;
#[cfg(target_os = "linux")]
use super::classify::classify_raw;
#[cfg(target_os = "linux")]
use crate::blocking::check;
use crate::dircache::Batch;
#[cfg(target_os = "linux")]
use crate::dircache::{name_bit, plain};
#[cfg(target_os = "linux")]
use crate::dirmemory::Rec;
use crate::provider::{Cancelled, Probe};
#[cfg(target_os = "linux")]
use crate::stamp::{Raw, RawKind, Stamp};

impl Inner {
    /// Answers `dir` from the facts an earlier process remembered
    /// (decision 0037, argued in the `dirmemory` module), or `None` when it
    /// has none or they no longer hold (the caller takes the handle path,
    /// which records the new facts); with the probes, whether the
    /// directory is remembered missing.
    #[cfg(target_os = "linux")]
    pub(super) fn probe_remembered(
        &self,
        batch: &mut Batch<'_>,
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<(Vec<Probe>, bool)>, Cancelled> {
        let Some(rec) = batch.memory.as_deref().and_then(|m| m.get(dir.as_str())) else {
            return Ok(None);
        };
        // The deepest root containing `dir`, by string prefix at a component
        // boundary (`locate` builds a relative path, not needed here).
        let Some(root) = self.roots.iter().find(|r| {
            dir.as_str()
                .strip_prefix(r.path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        }) else {
            return Ok(None);
        };
        let Some(handle) = root.handle() else {
            return Ok(None);
        };
        let root_path = root.path.as_str();
        match rec {
            Rec::Missing { parent } => {
                let Some(up) = dir.parent() else {
                    return Ok(None);
                };
                if self.proven(batch, root_path, handle, up.as_str()) == Some(parent) {
                    return Ok(Some((vec![Probe::Absent; names.len()], true)));
                }
            }
            Rec::Dir {
                names: hash,
                absent,
                ..
            } => {
                if hash == batch.names()
                    && self
                        .proven(batch, root_path, handle, dir.as_str())
                        .is_some()
                {
                    let rel = dir.as_str()[root_path.len()..].trim_start_matches('/');
                    let mut probes = Vec::with_capacity(names.len());
                    let mut skipped = 0;
                    for (i, name) in names.iter().enumerate() {
                        let bit = name_bit(i);
                        if absent & bit != 0 {
                            skipped += 1;
                            probes.push(Probe::Absent);
                            continue;
                        }
                        check(cancel)?;
                        probes.push(self.probe_through(handle, rel, dir, name, cancel)?);
                    }
                    batch.count_skipped(skipped);
                    return Ok(Some((probes, false)));
                }
            }
        }
        if let Some(memory) = batch.memory.as_deref_mut() {
            memory.forget(dir.as_str());
        }
        Ok(None)
    }

    /// Elsewhere a memory is recorded into but never consulted.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn probe_remembered(
        &self,
        _batch: &mut Batch<'_>,
        _dir: &Utf8Path,
        _names: &[String],
        _cancel: &CancellationToken,
    ) -> Result<Option<(Vec<Probe>, bool)>, Cancelled> {
        Ok(None)
    }

    /// One candidate of a proven directory `rel` (relative to the root
    /// `handle`): a regular file or a miss from one `statx`; a symlink or
    /// anything unusual takes the full probe.
    #[cfg(target_os = "linux")]
    fn probe_through(
        &self,
        handle: &Dir,
        rel: &str,
        dir: &Utf8Path,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<Probe, Cancelled> {
        if plain(name) {
            let path = if rel.is_empty() {
                name.to_owned()
            } else {
                format!("{rel}/{name}")
            };
            match Raw::lstat_at(handle, &path) {
                Ok(raw) if raw.kind != RawKind::Symlink => return Ok(classify_raw(&raw)),
                Err(Errno::NOENT) => return Ok(Probe::Absent),
                _ => {}
            }
        }
        self.probe(&dir.join(name), cancel)
    }

    /// The current stamp of `path` (`root_path` or below it) when every
    /// directory from the root down to it is a real directory whose
    /// current stamp is the one remembered for it; `None` otherwise.
    /// Memoized per batch, so siblings share their ancestors' proofs.
    #[cfg(target_os = "linux")]
    fn proven(
        &self,
        batch: &mut Batch<'_>,
        root_path: &str,
        handle: &Dir,
        path: &str,
    ) -> Option<Stamp> {
        if let Some(known) = batch.proven.get(path) {
            return *known;
        }
        let remembered = match batch.memory.as_deref().and_then(|m| m.get(path)) {
            Some(Rec::Dir { stamp, .. }) => Some(stamp),
            _ => None,
        };
        let current = remembered.and_then(|remembered| {
            let (now, margin) = (batch.now(), batch.margin());
            let current = if path == root_path {
                // The root's handle names the root by definition.
                let metadata = handle.dir_metadata().ok()?;
                Stamp::trusted(&metadata, now, margin)?
            } else {
                let parent = path.rfind('/').map(|i| &path[..i.max(1)])?;
                if parent.len() < root_path.len() {
                    return None;
                }
                self.proven(batch, root_path, handle, parent)?;
                let rel = path[root_path.len()..].trim_start_matches('/');
                let raw = Raw::lstat_at(handle, rel).ok()?;
                if raw.kind != RawKind::Dir {
                    return None;
                }
                Stamp::trusted_raw(&raw, now, margin)?
            };
            (current == remembered).then_some(current)
        });
        batch.proven.insert(path.to_owned(), current);
        current
    }
}
