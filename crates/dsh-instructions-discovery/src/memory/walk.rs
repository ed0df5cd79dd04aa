//! How the in-memory provider follows a path: the steps the cap-std
//! provider takes (`capstd.rs`, "How a path is followed"), replayed on the
//! modelled tree so both providers answer alike (decision 0042).
//!
//! * A trusted root is matched lexically, deepest first, and then opened
//!   the way the OS opens a directory by absolute path: from `/`, every
//!   link on the way followed, the last one included ([`MemRoot::real`]).
//!   The first opening that finds a directory is kept, like the disk
//!   provider's handle: a linked cwd or root reads its target.
//! * Below the root the path is followed like cap-std's lookup beneath a
//!   directory handle ([`walk`] with `beneath`): name by name, `..` to the
//!   parent of the directory the walk has reached (not the lexical parent),
//!   a relative link's text taken from the directory holding the link, at
//!   most [`MAX_LINK_HOPS`](crate::provider::MAX_LINK_HOPS) links per lookup (`ELOOP`). An absolute link,
//!   or `..` from the root itself, is an escape.
//! * An escape is re-anchored as the disk provider does it ([`reanchor`]):
//!   the first link along the root-relative path (not necessarily the one
//!   that escaped) is replaced by its text, resolved lexically against the
//!   link's path under the root's own spelling, and the lookup starts over
//!   in the deepest root containing the result. More than
//!   [`MAX_LINK_HOPS`](crate::provider::MAX_LINK_HOPS) re-anchorings is a loop; no root containing it is
//!   "outside trusted roots" (R-DISC-7).
//! * A root-marker check follows every link but the last, from `/`, with
//!   no root at all (R-DISC-7: existence only, anywhere).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};

#[cfg(test)]
mod tests;

use super::nodes::MemKind;
use super::requests::Resolved;
use super::state::Entry;
use crate::paths::{link_target, normalize};
use crate::provider::{MAX_LINK_HOPS, Unavailable};

type Nodes = BTreeMap<Utf8PathBuf, Entry>;

/// Where one lookup (one system call on disk) ends.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Walk {
    /// The entry the path names (a directory, file, FIFO, or an unfollowed
    /// final link), by its path without links.
    Found(Utf8PathBuf),
    /// `ENOENT` or `ENOTDIR`.
    Absent,
    /// Left the directory the lookup is confined to (cap-std's escape).
    Escape,
    /// `ELOOP`: more than [`MAX_LINK_HOPS`](crate::provider::MAX_LINK_HOPS) links in one lookup.
    Loop,
}

/// A trusted root: its lexical path (what paths are matched against) and
/// the directory it opened as.
#[derive(Debug)]
pub(super) struct MemRoot {
    pub(super) path: Utf8PathBuf,
    /// Set by the first opening that finds a directory, then kept (the
    /// disk provider's root handle).
    real: OnceLock<Utf8PathBuf>,
}

/// Why a root does not open as a directory.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RootError {
    /// Nothing there, or not a directory: paths under it are absent until
    /// it exists (the disk provider skips such a root and retries).
    Missing,
    /// A link loop: the disk provider refuses to be built on it.
    Loop,
}

impl MemRoot {
    pub(super) fn new(path: Utf8PathBuf) -> Self {
        Self {
            path,
            real: OnceLock::new(),
        }
    }

    /// The directory this root opened as, opening it now if it has not
    /// yet.
    pub(super) fn real(&self, nodes: &Nodes) -> Result<&Utf8Path, RootError> {
        if let Some(real) = self.real.get() {
            return Ok(real);
        }
        let opened = open_dir(nodes, &self.path)?;
        Ok(self.real.get_or_init(|| opened))
    }
}

/// Opens `path` as a directory by absolute path (`open(O_DIRECTORY)`).
fn open_dir(nodes: &Nodes, path: &Utf8Path) -> Result<Utf8PathBuf, RootError> {
    match walk(
        nodes,
        Utf8Path::new("/"),
        path,
        true,
        false,
        &mut Vec::new(),
    ) {
        Walk::Found(dir) if is_dir(nodes, &dir) => Ok(dir),
        Walk::Found(_) | Walk::Absent | Walk::Escape => Err(RootError::Missing),
        Walk::Loop => Err(RootError::Loop),
    }
}

pub(super) fn is_dir(nodes: &Nodes, path: &Utf8Path) -> bool {
    path.parent().is_none() || matches!(nodes.get(path).map(|e| &e.kind), Some(MemKind::Dir))
}

/// Sorts roots deepest first (a root nested in another owns its subtree)
/// and drops repeats, as the disk provider does.
pub(super) fn roots_of(roots: Vec<Utf8PathBuf>) -> Vec<MemRoot> {
    let mut out: Vec<MemRoot> = Vec::new();
    for root in roots {
        let path = normalize(&root);
        if !out.iter().any(|r| r.path == path) {
            out.push(MemRoot::new(path));
        }
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.path.components().count()));
    out
}

/// Pushes `path`'s names onto `todo` so the first one is popped first.
fn push_names(todo: &mut Vec<String>, path: &Utf8Path) {
    let start = todo.len();
    for component in path.components() {
        match component {
            Utf8Component::Normal(name) => todo.push(name.to_owned()),
            Utf8Component::ParentDir => todo.push("..".to_owned()),
            Utf8Component::CurDir | Utf8Component::RootDir | Utf8Component::Prefix(_) => {}
        }
    }
    todo[start..].reverse();
}

/// One lookup of `rel` from the directory `start`, as the kernel does it.
/// `beneath`: confined to `start` (cap-std's lookup from a directory
/// handle); otherwise `start` is `/`, an absolute link restarts there and
/// `..` never climbs above it. `chain` gets the path the lookup stands at
/// after each link it follows (where faults and gates apply).
pub(super) fn walk(
    nodes: &Nodes,
    start: &Utf8Path,
    rel: &Utf8Path,
    follow_final: bool,
    beneath: bool,
    chain: &mut Vec<Utf8PathBuf>,
) -> Walk {
    let mut at = start.to_owned();
    let mut todo = Vec::new();
    push_names(&mut todo, rel);
    let mut links = 0u32;
    while let Some(name) = todo.pop() {
        if name == ".." {
            if beneath && at == start {
                return Walk::Escape;
            }
            if let Some(parent) = at.parent() {
                at = parent.to_owned();
            }
            continue;
        }
        let next = at.join(&name);
        let last = todo.is_empty();
        match nodes.get(&next).map(|e| &e.kind) {
            None => return Walk::Absent,
            Some(MemKind::Dir) => at = next,
            Some(MemKind::File(_) | MemKind::Fifo) if last => return Walk::Found(next),
            // ENOTDIR
            Some(MemKind::File(_) | MemKind::Fifo) => return Walk::Absent,
            Some(MemKind::Link(_)) if last && !follow_final => return Walk::Found(next),
            Some(MemKind::Link(text)) => {
                links += 1;
                if links > MAX_LINK_HOPS {
                    return Walk::Loop;
                }
                let text = Utf8Path::new(text);
                let mut hop = link_target(&next, text);
                for rest in todo.iter().rev() {
                    hop.push(rest);
                }
                chain.push(normalize(&hop));
                if text.as_str().is_empty() {
                    return Walk::Absent;
                }
                if text.is_absolute() {
                    if beneath {
                        return Walk::Escape;
                    }
                    at = Utf8PathBuf::from("/");
                }
                push_names(&mut todo, text);
            }
        }
    }
    Walk::Found(at)
}

/// The deepest root containing `path`, with the path relative to it.
fn locate<'r>(roots: &'r [MemRoot], path: &Utf8Path) -> Option<(&'r MemRoot, Utf8PathBuf)> {
    roots.iter().find_map(|root| {
        let rel = path.strip_prefix(&root.path).ok()?;
        Some((root, rel.to_owned()))
    })
}

/// What re-anchoring an escape found.
enum Hop {
    /// The path through the first link, to look up again.
    Next(Utf8PathBuf),
    /// Where the search for a link ended instead.
    Done(Resolved),
}

/// After an escape: the path through the first link along `rel` (by its
/// text, resolved lexically against the link's path under `root`'s
/// spelling), or where the search for it ended.
fn reanchor(nodes: &Nodes, root: &Utf8Path, real: &Utf8Path, rel: &Utf8Path) -> Hop {
    let names: Vec<&str> = rel.iter().filter(|n| *n != ".").collect();
    let mut at = real.to_owned();
    for (index, name) in names.iter().enumerate() {
        at.push(name);
        match nodes.get(&at).map(|e| &e.kind) {
            None => return Hop::Done(Resolved::Absent),
            Some(MemKind::Link(text)) => {
                let mut lexical = root.to_owned();
                for name in &names[..=index] {
                    lexical.push(name);
                }
                let mut next = link_target(&lexical, Utf8Path::new(text));
                for rest in &names[index + 1..] {
                    next.push(rest);
                }
                return Hop::Next(normalize(&next));
            }
            // Below a file the next name is ENOTDIR: absent, as above.
            Some(_) => {}
        }
    }
    // An escape no link explains: stay conservative, as the disk does.
    Hop::Done(Resolved::Unavailable(Unavailable::OutsideTrustedRoots))
}

/// Follows the normalized absolute `path`, final link included, inside
/// the trusted `roots` (probes, reads, path kinds).
pub(super) fn resolve_confined(
    nodes: &Nodes,
    roots: &[MemRoot],
    path: &Utf8Path,
    chain: &mut Vec<Utf8PathBuf>,
) -> Resolved {
    let mut current = path.to_owned();
    let mut hops = 0u32;
    loop {
        let Some((root, rel)) = locate(roots, &current) else {
            return Resolved::Unavailable(Unavailable::OutsideTrustedRoots);
        };
        let Ok(real) = root.real(nodes) else {
            // A trusted root that does not exist (yet): nothing under it.
            return Resolved::Absent;
        };
        if real != root.path {
            chain.push(normalize(&real.join(&rel)));
        }
        match walk(nodes, real, &rel, true, true, chain) {
            Walk::Found(target) => {
                if chain.last() != Some(&target) {
                    chain.push(target.clone());
                }
                return Resolved::Node(target);
            }
            Walk::Absent => return Resolved::Absent,
            Walk::Loop => return Resolved::Unavailable(Unavailable::Loop),
            Walk::Escape => match reanchor(nodes, &root.path, real, &rel) {
                Hop::Next(next) => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Resolved::Unavailable(Unavailable::Loop);
                    }
                    chain.push(next.clone());
                    current = next;
                }
                Hop::Done(done) => return done,
            },
        }
    }
}

/// Follows `path` from `/` without any root and without following its
/// final link (the root-marker check, an `lstat`).
pub(super) fn resolve_marker(
    nodes: &Nodes,
    path: &Utf8Path,
    chain: &mut Vec<Utf8PathBuf>,
) -> Resolved {
    match walk(nodes, Utf8Path::new("/"), path, false, false, chain) {
        Walk::Found(target) => {
            if chain.last() != Some(&target) {
                chain.push(target.clone());
            }
            Resolved::Node(target)
        }
        Walk::Absent | Walk::Escape => Resolved::Absent,
        Walk::Loop => Resolved::Unavailable(Unavailable::Loop),
    }
}
