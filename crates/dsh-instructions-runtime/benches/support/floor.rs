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

/// The directories from `cwd` up to and including the nearest one holding
/// `.git` (just `cwd` when none does), nearest first: the root marker walk
/// and the chain in one pass, one `stat` per directory.
pub(crate) fn walk_chain<'a>(cwd: &'a Utf8Path, counts: &mut FloorCounts) -> Vec<&'a Utf8Path> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir);
        counts.stats += 1;
        if fs::symlink_metadata(dir.join(".git")).is_ok() {
            return dirs;
        }
    }
    vec![cwd]
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

/// Reads the first `limit` bytes of a file and returns their SHA-1: the
/// prefix a budget cut keeps of the most specific file (R-REN-6 step 3).
fn read_prefix_digest(
    path: &Utf8Path,
    limit: u64,
    counts: &mut FloorCounts,
) -> io::Result<[u8; 20]> {
    use std::io::Read as _;
    let mut bytes = Vec::with_capacity(usize::try_from(limit).unwrap_or(0));
    fs::File::open(path)?.take(limit).read_to_end(&mut bytes)?;
    counts.reads += 1;
    counts.bytes_read += bytes.len() as u64;
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

/// One unit the budget keeps or drops whole: a winner and, with imports,
/// the files it names; `size` is their sum by metadata.
struct Unit {
    files: Vec<Utf8PathBuf>,
    size: u64,
}

/// Reads `units` (nearest first) the way R-REN-6 keeps them: whole units
/// while their sizes fit `budget`, stopping at the first that does not;
/// when not even the nearest fits, only the prefix of its first file that
/// the budget can keep (step 3). No budget reads everything.
fn read_nearest_first(units: &[Unit], cap: u64, budget: Option<u64>, counts: &mut FloorCounts) {
    let mut kept = 0u64;
    for unit in units {
        if let Some(b) = budget
            && kept + unit.size > b
        {
            if kept == 0
                && let Some(first) = unit.files.first()
            {
                let _ = read_prefix_digest(first, b, counts);
            }
            return;
        }
        for file in &unit.files {
            let _ = read_digest(file, cap, counts);
        }
        kept += unit.size;
    }
}

/// A complete baseline's I/O with the fewest operations: one walk up from
/// the cwd that stats each directory's `.git` and its candidates (first
/// wins per list), the user-global file, then reads — nearest first, only
/// what the budget keeps (R-REN-6), each file once, hashed. No rendering:
/// sizes by metadata stand for rendered sizes.
pub(crate) fn compose(
    home: &Utf8Path,
    cwd: &Utf8Path,
    cap: u64,
    budget: Option<u64>,
) -> FloorCounts {
    compose_imports(home, cwd, cap, budget, &[])
}

/// [`compose`] with imports: each winner's unit also holds the named import
/// targets of its directory that exist (the floor knows the names; it does
/// not parse), stated in the same walk.
pub(crate) fn compose_imports(
    home: &Utf8Path,
    cwd: &Utf8Path,
    cap: u64,
    budget: Option<u64>,
    targets: &[String],
) -> FloorCounts {
    let mut counts = FloorCounts::default();
    let mut units = Vec::new();
    for dir in walk_chain(cwd, &mut counts) {
        // Nearest first: the local overlay is more specific than the base.
        for list in [&LOCAL[..], &BASE[..]] {
            let Some((path, m)) = winner(dir, list, &mut counts) else {
                continue;
            };
            if m.len() > cap {
                continue;
            }
            let mut unit = Unit {
                size: m.len(),
                files: vec![path],
            };
            if list == &BASE[..] {
                for rel in targets {
                    let target = dir.join(rel);
                    counts.stats += 1;
                    if let Ok(t) = fs::metadata(&target)
                        && t.is_file()
                        && t.len() <= cap
                    {
                        unit.size += t.len();
                        unit.files.push(target);
                    }
                }
            }
            units.push(unit);
        }
    }
    let user = home.join("AGENTS.md");
    counts.stats += 1;
    if let Ok(m) = fs::metadata(&user)
        && m.is_file()
        && m.len() <= cap
    {
        units.push(Unit {
            size: m.len(),
            files: vec![user],
        });
    }
    read_nearest_first(&units, cap, budget, &mut counts);
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
