//! The in-process floor: the same jobs done with plain `std::fs` and nothing
//! else — absolute-path stats, whole-file reads and SHA-1, no rendering, no
//! async, no capability checks. It is the "naive C" program of issue 7 written
//! in Rust, so a ratio to it says how much the runtime adds on top of the
//! syscalls the job needs.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;

use camino::{Utf8Path, Utf8PathBuf};
use sha1::{Digest as _, Sha1};

/// The default candidate lists (R-CFG-4), base then local.
pub(crate) const BASE: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// Local overlay candidates.
pub(crate) const LOCAL: [&str; 2] = ["AGENTS.local.md", "CLAUDE.local.md"];

/// What a floor run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FloorCounts {
    /// Files read.
    pub reads: u64,
    /// Content bytes read.
    pub bytes_read: u64,
    /// `stat` calls (candidates and markers).
    pub stats: u64,
}

/// The nearest ancestor of `cwd` holding `.git` (the cwd when none does).
pub(crate) fn find_root(cwd: &Utf8Path, counts: &mut FloorCounts) -> Utf8PathBuf {
    for dir in cwd.ancestors() {
        counts.stats += 1;
        if fs::symlink_metadata(dir.join(".git")).is_ok() {
            return dir.to_owned();
        }
    }
    cwd.to_owned()
}

/// Root-to-cwd chain, root first.
pub(crate) fn chain(root: &Utf8Path, cwd: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut dirs: Vec<Utf8PathBuf> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Utf8Path::to_owned)
        .collect();
    dirs.reverse();
    dirs
}

/// Reads a file whole (refusing more than `cap` bytes by metadata) and
/// returns its SHA-1.
fn read_digest(path: &Utf8Path, cap: u64, counts: &mut FloorCounts) -> io::Result<[u8; 20]> {
    let bytes = fs::read(path)?;
    counts.reads += 1;
    counts.bytes_read += bytes.len() as u64;
    if bytes.len() as u64 > cap {
        return Err(io::Error::other("too large"));
    }
    Ok(Sha1::digest(&bytes).into())
}

/// First-wins winner of one list in `dir`: stat by absolute path in order,
/// stop at the first regular file or at an error other than absence.
fn winner(
    dir: &Utf8Path,
    names: &[&str],
    counts: &mut FloorCounts,
) -> Option<(Utf8PathBuf, fs::Metadata)> {
    for name in names {
        let path = dir.join(name);
        counts.stats += 1;
        match fs::metadata(&path) {
            Ok(m) if m.is_file() => return Some((path, m)),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    None
}

/// A complete baseline's I/O: root walk, user-global file, then every
/// winner from the root to the cwd read and hashed (no budget: the naive
/// program reads everything).
pub(crate) fn compose(home: &Utf8Path, cwd: &Utf8Path, cap: u64) -> FloorCounts {
    let mut counts = FloorCounts::default();
    let root = find_root(cwd, &mut counts);
    let user = home.join("AGENTS.md");
    counts.stats += 1;
    if fs::metadata(&user).is_ok_and(|m| m.is_file() && m.len() <= cap) {
        let _ = read_digest(&user, cap, &mut counts);
    }
    for dir in chain(&root, cwd) {
        for list in [&BASE[..], &LOCAL[..]] {
            if let Some((path, m)) = winner(&dir, list, &mut counts)
                && m.len() <= cap
            {
                let _ = read_digest(&path, cap, &mut counts);
            }
        }
    }
    counts
}

/// A complete baseline's I/O with imports: [`compose`], then every named
/// import target of every chain directory read and hashed (the floor knows
/// the names; it does not parse).
pub(crate) fn compose_imports(
    home: &Utf8Path,
    cwd: &Utf8Path,
    cap: u64,
    targets: &[String],
) -> FloorCounts {
    let mut counts = compose(home, cwd, cap);
    let root = find_root(cwd, &mut FloorCounts::default());
    for dir in chain(&root, cwd) {
        for rel in targets {
            let path = dir.join(rel);
            counts.stats += 1;
            if fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= cap) {
                let _ = read_digest(&path, cap, &mut counts);
            }
        }
    }
    counts
}

/// An unchanged revalidation's I/O with imports: one stat per candidate of
/// the user-global file and the chain, one per import target, no reads.
pub(crate) fn revalidate_imports(
    home: &Utf8Path,
    root: &Utf8Path,
    cwd: &Utf8Path,
    targets: &[String],
) -> FloorCounts {
    let mut counts = FloorCounts::default();
    counts.stats += 1;
    let _ = fs::metadata(home.join("AGENTS.md"));
    for dir in chain(root, cwd) {
        for name in BASE.iter().chain(LOCAL.iter()) {
            counts.stats += 1;
            let _ = fs::metadata(dir.join(name));
        }
        for rel in targets {
            counts.stats += 1;
            let _ = fs::metadata(dir.join(rel));
        }
    }
    counts
}

type Stamp = (u64, u64, i64, i64);

fn stamp(m: &fs::Metadata) -> Stamp {
    (m.ino(), m.size(), m.mtime(), m.mtime_nsec())
}

/// The naive reconciler: on every touch, re-stat every candidate of every
/// known directory by absolute path, and read + hash the winners that are new
/// or whose metadata moved. Known = the root-to-cwd chain plus every
/// directory where something loaded (what R-RT-3 b makes known).
#[derive(Debug)]
pub(crate) struct NaiveSession {
    cwd: Utf8PathBuf,
    user: Utf8PathBuf,
    known: BTreeSet<Utf8PathBuf>,
    seen: HashMap<Utf8PathBuf, (Stamp, [u8; 20])>,
    cap: u64,
    /// Running totals.
    pub counts: FloorCounts,
}

impl NaiveSession {
    /// Starts a session in `cwd` and loads its baseline.
    pub(crate) fn start(home: &Utf8Path, cwd: &Utf8Path, cap: u64) -> Self {
        let mut counts = FloorCounts::default();
        let root = find_root(cwd, &mut counts);
        let mut session = Self {
            cwd: cwd.to_owned(),
            user: home.join("AGENTS.md"),
            known: chain(&root, cwd).into_iter().collect(),
            seen: HashMap::new(),
            cap,
            counts,
        };
        session.reconcile(&[]);
        session
    }

    fn check(&mut self, path: &Utf8Path, m: &fs::Metadata) {
        if m.len() > self.cap {
            return;
        }
        let now = stamp(m);
        if self.seen.get(path).is_some_and(|(s, _)| *s == now) {
            return;
        }
        if let Ok(digest) = read_digest(path, self.cap, &mut self.counts) {
            self.seen.insert(path.to_owned(), (now, digest));
        }
    }

    fn scan(&mut self, dir: &Utf8Path) -> bool {
        let mut loaded = false;
        for list in [&BASE[..], &LOCAL[..]] {
            if let Some((path, m)) = winner(dir, list, &mut self.counts) {
                self.check(&path, &m);
                loaded = true;
            }
        }
        loaded
    }

    /// Reconciles the user-global file, every known directory and `extra`.
    pub(crate) fn reconcile(&mut self, extra: &[Utf8PathBuf]) {
        self.counts.stats += 1;
        if let Ok(m) = fs::metadata(&self.user)
            && m.is_file()
        {
            let user = self.user.clone();
            self.check(&user, &m);
        }
        let known: Vec<Utf8PathBuf> = self.known.iter().cloned().collect();
        for dir in &known {
            self.scan(dir);
        }
        for dir in extra {
            if !self.known.contains(dir) && self.scan(dir) {
                self.known.insert(dir.clone());
            }
        }
    }

    /// A touch of `file`: the directories strictly below the cwd down to the
    /// file's parent, plus every known directory.
    pub(crate) fn touch(&mut self, file: &Utf8Path) {
        let mut extra = Vec::new();
        if let Some(parent) = file.parent()
            && let Ok(below) = parent.strip_prefix(&self.cwd)
        {
            let mut dir = self.cwd.clone();
            for comp in below.components() {
                dir.push(comp.as_str());
                extra.push(dir.clone());
            }
        }
        self.reconcile(&extra);
    }
}
