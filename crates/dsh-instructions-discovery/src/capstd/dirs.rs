//! Candidate names probed in directories: through one handle per
//! directory, through the handles kept between batches (the `dircache`
//! module), and a list of directories in one pass (`probe_dirs`).

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::fs::Dir;
use rustix::io::Errno;
use tokio_util::sync::CancellationToken;

use super::Inner;
use super::classify::{
    Class, classify, classify_metadata, classify_raw, classify_raw_seen, fast_error,
};
use crate::blocking::check;
use crate::dircache::{Batch, name_bit, plain};
use crate::dirmemory::DirMemory;
use crate::paths::{normalize, normalized};
use crate::provider::{Cancelled, Probe, ProbedDirs, Unavailable};
use crate::stamp::{Raw, RawKind, Stamp};

impl Inner {
    /// Probes `names` in `dir` through one handle on the directory when it
    /// opens plainly inside a root: a miss then costs one `statat`. A name
    /// cap-std refuses from that handle (a link with an absolute target or
    /// one climbing out of the directory) falls back to the full [`probe`],
    /// so results are identical.
    ///
    /// [`probe`]: Self::probe
    pub(super) fn probe_many(
        &self,
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Probe>, Cancelled> {
        let dir = normalize(dir);
        check(cancel)?;
        if let Some(probes) =
            self.probe_root_names(&self.named_roots(names), &dir, names, cancel)?
        {
            return Ok(probes);
        }
        let handle = self.open_dir(&dir);
        self.probe_names(&dir, handle.as_ref(), names, cancel)
    }

    /// The full [`probe`] of every name when one of them is itself a
    /// trusted root (a DSH home at `<dir>/AGENTS.md`): that path belongs to
    /// the deeper root, which a handle on `dir` does not know, so the
    /// handle paths and stamps would answer for the wrong root. `None`
    /// (the usual case, one comparison per root): no name is a root.
    ///
    /// [`probe`]: Self::probe
    ///
    /// `named` is [`Self::named_roots`] of `names`, computed once per batch:
    /// with no root named by a candidate (the usual case) no directory pays
    /// a path comparison.
    fn probe_root_names(
        &self,
        named: &[&Utf8Path],
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<Probe>>, Cancelled> {
        if !named.contains(&dir) {
            return Ok(None);
        }
        let mut probes = Vec::with_capacity(names.len());
        for name in names {
            probes.push(self.probe(&dir.join(name), cancel)?);
        }
        Ok(Some(probes))
    }

    /// The parent directories of the trusted roots whose last component is
    /// one of `names`: the directories [`Self::probe_root_names`] takes the
    /// full probe in.
    fn named_roots(&self, names: &[String]) -> Vec<&Utf8Path> {
        self.roots
            .iter()
            .filter(|root| {
                root.path
                    .file_name()
                    .is_some_and(|leaf| names.iter().any(|n| n == leaf))
            })
            .filter_map(|root| root.path.parent())
            .collect()
    }

    /// A handle on `dir` opened plainly inside its root, if it opens.
    fn open_dir(&self, dir: &Utf8Path) -> Option<Dir> {
        self.open_dir_classified(dir).ok()
    }

    /// [`Self::open_dir`], saying why it did not open: [`Class::Absent`]
    /// only when the OS said there is no such directory.
    fn open_dir_classified(&self, dir: &Utf8Path) -> Result<Dir, Class> {
        let (root, rel) = self
            .locate(dir)
            .ok_or(Class::Unavailable(Unavailable::OutsideTrustedRoots))?;
        let handle = root
            .handle()
            .ok_or(Class::Unavailable(Unavailable::OutsideTrustedRoots))?;
        handle.open_dir(rel.as_std_path()).map_err(|e| classify(&e))
    }

    /// Probes `names` in `dir`, through `handle` where it can: a miss then
    /// costs one `statat`. A name cap-std refuses from that handle (a link
    /// with an absolute target or one climbing out of the directory) falls
    /// back to the full [`probe`], so results are identical.
    ///
    /// [`probe`]: Self::probe
    fn probe_names(
        &self,
        dir: &Utf8Path,
        handle: Option<&Dir>,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Probe>, Cancelled> {
        let mut probes = Vec::with_capacity(names.len());
        for name in names {
            check(cancel)?;
            probes.push(self.probe_name(dir, handle, name, cancel)?.0);
        }
        Ok(probes)
    }

    /// One candidate; the flag says `lstat` found no entry at all (what a
    /// directory stamp can vouch for later).
    fn probe_name(
        &self,
        dir: &Utf8Path,
        handle: Option<&Dir>,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<(Probe, bool), Cancelled> {
        let fast = match handle {
            // lstat first: one `fstatat` answers a miss, a regular file
            // and any other non-link entry; only a symlink pays for the
            // following `metadata` (an `openat2` + `fstat` in cap-std).
            Some(handle) if plain(name) => match Raw::lstat_name(handle, name) {
                Ok(raw) if raw.kind != RawKind::Symlink => {
                    if raw.kind == RawKind::File {
                        self.note_probed(&[dir.as_str(), "/", name]);
                    }
                    Some((classify_raw(&raw), false))
                }
                Ok(_) => handle
                    .metadata(name)
                    .map_or_else(|e| fast_error(&e), |m| Some(classify_metadata(&m)))
                    .map(|p| (p, false)),
                Err(error) => {
                    let no_entry = Errno::from_io_error(&error) == Some(Errno::NOENT);
                    fast_error(&error).map(|p| (p, no_entry))
                }
            },
            _ => None,
        };
        Ok(match fast {
            Some(found) => found,
            None => (self.probe(&dir.join(name), cancel)?, false),
        })
    }

    /// Probes `names` in `dir` through a cached handle: names the
    /// directory's unchanged stamp vouches for cost nothing.
    fn probe_cached(
        &self,
        batch: &mut Batch<'_>,
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<Probe>>, Cancelled> {
        let root_of = |path: &Utf8Path| {
            self.roots
                .iter()
                .find(|r| r.path.as_str() == path.as_str())
                .and_then(|r| r.handle().cloned())
        };
        let Some((handle, stamp, slot)) = batch.handle(&root_of, dir) else {
            return Ok(None);
        };
        let known = batch.known_absent(slot, stamp);
        let mut probes = Vec::with_capacity(names.len());
        let mut absent = 0u64;
        let mut skipped = 0;
        for (i, name) in names.iter().enumerate() {
            let bit = name_bit(i);
            let (probe, no_entry) = if known & bit != 0 {
                skipped += 1;
                (Probe::Absent, true)
            } else if let Some(probe) = held_probe(batch, slot, stamp, i, &handle, name) {
                (probe, false)
            } else {
                check(cancel)?;
                self.probe_name(dir, Some(&handle), name, cancel)?
            };
            if no_entry {
                absent |= bit;
            }
            probes.push(probe);
        }
        batch.count_skipped(skipped);
        batch.record(dir.as_str(), slot, stamp, absent);
        Ok(Some(probes))
    }

    /// Probes unrelated paths (rule files, import targets, R-IMP-2) in one
    /// pass: a path whose directory the handle cache reaches through real
    /// subdirectories is probed by name through that handle, as
    /// [`Self::probe_many`] probes a name (one `statat`, not a walk from
    /// the root), and a run of paths in one directory validates it once.
    /// A path that is itself a trusted root, or whose directory the cache
    /// does not reach, takes the full [`probe`], so results are identical.
    ///
    /// [`probe`]: Self::probe
    pub(super) fn probe_paths(
        &self,
        paths: &[Utf8PathBuf],
        cancel: &CancellationToken,
    ) -> Result<Vec<Probe>, Cancelled> {
        let mut cache = self.dirs.try_lock().ok();
        let mut batch = cache
            .as_deref_mut()
            .map(|c| Batch::new(c, self.margin, &[], None));
        let root_of = |path: &Utf8Path| {
            self.roots
                .iter()
                .find(|r| r.path.as_str() == path.as_str())
                .and_then(|r| r.handle().cloned())
        };
        let mut out = Vec::with_capacity(paths.len());
        for path in paths {
            check(cancel)?;
            let path = normalized(path);
            let through = match (batch.as_mut(), path.parent(), path.file_name()) {
                (Some(batch), Some(dir), Some(name))
                    if plain(name)
                        && !self.roots.iter().any(|r| r.path.as_str() == path.as_str()) =>
                {
                    batch
                        .handle(&root_of, dir)
                        .map(|(handle, _, _)| (dir, name, handle))
                }
                _ => None,
            };
            out.push(match through {
                Some((dir, name, handle)) => self.probe_name(dir, Some(&handle), name, cancel)?.0,
                None => self.probe(&path, cancel)?,
            });
        }
        Ok(out)
    }

    /// Probes a list of directories in one pass. Directories reachable from
    /// a root through real (non-symlink) subdirectories use handles kept
    /// between batches (the `dircache` module); the others are opened
    /// relative to the previous handle when they are its plain child, so a
    /// long chain never re-walks its path from the root (O(depth), not
    /// O(depth²), component lookups). Also returns which directories were
    /// seen missing ([`crate::ProbedDirs::missing`]).
    pub(super) fn probe_dirs(
        &self,
        dirs: &[Utf8PathBuf],
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<ProbedDirs, Cancelled> {
        let mut out = Vec::with_capacity(dirs.len());
        let mut missing = Vec::with_capacity(dirs.len());
        let named = self.named_roots(names);
        let mut previous: Option<(Utf8PathBuf, Dir)> = None;
        // The last directory of this batch seen missing: a directory below
        // it is missing too, with no lookup (a known directory's absent
        // `.claude/`, then its `.claude/rules/`, R-HOOK-6).
        let mut gone: Option<String> = None;
        let mut cache = self.dirs.try_lock().ok();
        let mut memory = self.memory.get().map(DirMemory::lock);
        let mut batch = cache
            .as_deref_mut()
            .map(|c| Batch::new(c, self.margin, names, memory.as_deref_mut()));
        for dir in dirs {
            check(cancel)?;
            let dir = normalized(dir);
            if gone.as_deref().is_some_and(|g| {
                dir.as_str()
                    .strip_prefix(g)
                    .is_some_and(|rest| rest.starts_with('/'))
            }) {
                out.push(vec![Probe::Absent; names.len()]);
                missing.push(true);
                previous = None;
                continue;
            }
            if let Some(probes) = self.probe_root_names(&named, &dir, names, cancel)? {
                out.push(probes);
                missing.push(false);
                previous = None;
                continue;
            }
            if let Some(batch) = batch.as_mut()
                && let Some((probes, is_missing)) =
                    self.probe_remembered(batch, &dir, names, cancel)?
            {
                out.push(probes);
                missing.push(is_missing);
                if is_missing {
                    gone = Some(dir.as_str().to_owned());
                }
                previous = None;
                continue;
            }
            if let Some(batch) = batch.as_mut()
                && let Some(probes) = self.probe_cached(batch, &dir, names, cancel)?
            {
                out.push(probes);
                missing.push(false);
                previous = None;
                continue;
            }
            let dir = dir.into_owned();
            let child = previous.as_ref().and_then(|(path, handle)| {
                let name = dir.strip_prefix(path).ok()?.as_str();
                let plain = !name.is_empty() && !name.contains('/') && name != "..";
                if !plain {
                    return None;
                }
                // Only a real directory entry: a symlinked component goes
                // through the full root-relative open, which re-anchors it.
                let meta = handle.symlink_metadata(name).ok()?;
                meta.is_dir().then(|| handle.open_dir(name).ok()).flatten()
            });
            let handle = match child {
                Some(handle) => Some(handle),
                None => match self.open_dir_classified(&dir) {
                    Ok(handle) => Some(handle),
                    // No such directory (or a component is no directory):
                    // every name in it probes absent, as the full probe of
                    // each would say (ENOENT/ENOTDIR) — without paying one
                    // root-relative walk per name (Claude Code's absent
                    // `.claude/` in every known directory, R-HOOK-6).
                    Err(Class::Absent) => {
                        out.push(vec![Probe::Absent; names.len()]);
                        missing.push(true);
                        gone = Some(dir.into_string());
                        previous = None;
                        continue;
                    }
                    Err(_) => None,
                },
            };
            out.push(self.probe_names(&dir, handle.as_ref(), names, cancel)?);
            missing.push(false);
            previous = handle.map(|h| (dir, h));
        }
        Ok(ProbedDirs {
            probes: out,
            missing,
        })
    }
}

/// Candidate `index` of a cached directory answered through a handle on the
/// file instead of a lookup by name (argued in the `dircache` module): an
/// `fstat` of the handle kept since an earlier batch, or, the first time
/// the directory is found unchanged, an `O_PATH` open by name that follows
/// no link, kept when it is a regular file. `None`: probe by name.
#[cfg(target_os = "linux")]
fn held_probe(
    batch: &mut Batch<'_>,
    slot: Option<usize>,
    stamp: Option<Stamp>,
    index: usize,
    dir: &Dir,
    name: &str,
) -> Option<Probe> {
    use rustix::fs::{Mode, OFlags};
    let seen = batch.now();
    if let Some(fd) = batch.held_file(slot, stamp, index) {
        return Raw::fstat(fd)
            .ok()
            .filter(|raw| raw.kind == RawKind::File)
            .map(|raw| classify_raw_seen(&raw, seen));
    }
    if !plain(name) || !batch.may_hold_file(slot, stamp, index) {
        return None;
    }
    let opened = rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
    .and_then(|fd| {
        let raw = Raw::fstat(&fd)
            .ok()
            .filter(|raw| raw.kind == RawKind::File)?;
        Some((fd, raw))
    });
    let Some((fd, raw)) = opened else {
        // A link (it must be followed), a directory, an error: by name,
        // and not tried again while the stamp holds.
        batch.refuse_hold(slot, index);
        return None;
    };
    batch.hold_file(slot, index, fd);
    Some(classify_raw_seen(&raw, seen))
}

/// Elsewhere every candidate is probed by name.
#[cfg(not(target_os = "linux"))]
fn held_probe(
    _batch: &mut Batch<'_>,
    _slot: Option<usize>,
    _stamp: Option<Stamp>,
    _index: usize,
    _dir: &Dir,
    _name: &str,
) -> Option<Probe> {
    None
}
