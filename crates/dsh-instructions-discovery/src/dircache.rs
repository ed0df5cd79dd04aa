//! Directory handles a [`CapStdProvider`] keeps between probe batches, so
//! that revalidating a known directory costs an `fstat` of a held handle
//! instead of a path walk from the root, and a candidate name that had no
//! entry costs nothing while its directory is unchanged (issue 7).
//!
//! # Why a cached answer is the answer a fresh probe would give
//!
//! A directory's ctime moves whenever an entry in it is created, removed or
//! renamed, and when the directory itself is chmod-ed or chown-ed. So if a
//! stamp (dev, ino, ctime, mtime) of a directory is taken *before* some
//! lookups in it, and a later `fstat` of the same handle returns the same
//! stamp, no entry was added, removed or renamed in between — unless both
//! changes fell in one timestamp tick. A stamp whose ctime lies within
//! [`STAMP_MARGIN`] of the clock reading taken before it is therefore never
//! trusted (the "racy timestamp" rule), so a tree edited in the last seconds
//! always takes the full path.
//!
//! From trusted, unchanged stamps two facts follow, and nothing else is
//! assumed:
//! * a handle opened by *name* from its parent's handle, without following a
//!   symlink, still names the directory at that path while the parent's stamp
//!   is unchanged and the parent's handle is itself still valid (a trusted
//!   root's handle is valid by definition);
//! * a candidate name whose `lstat` found no entry still has none.
//!
//! Present files (content changes in place), symlinks (their target can change
//! anywhere), other entries and errors are probed again in every batch. A
//! present regular file is probed again through a handle on it: from the
//! second batch on that finds the directory unchanged, the candidate is
//! opened `O_PATH` by name without following a link (after the stamp was
//! taken) and kept while the stamp holds. An unchanged stamp means no entry
//! of the directory was added, removed or renamed since, so the name still
//! leads to that inode and an `fstat` of the handle answers exactly what an
//! `lstat` by name would — in place of a name lookup per batch.
//!
//! Not covered, as documented in `docs/performance.md`: a filesystem mounted
//! over a known directory mid-session (mounting changes no ctime), and a
//! filesystem whose timestamps lag this host's clock by more than the margin.
//!
//! [`CapStdProvider`]: crate::CapStdProvider

use std::hash::Hasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use camino::Utf8Path;
use cap_fs_ext::DirExt;
use cap_std::fs::Dir;

use crate::dirmemory::Records;
use crate::stamp::{Fnv, PathMap, Raw, Stamp};

/// How old a directory's ctime must be, relative to the clock reading taken
/// before its stamp, for the stamp to vouch for anything.
pub(crate) const STAMP_MARGIN: Duration = Duration::from_secs(2);

/// Handles kept at most, whatever the descriptor limit allows.
const MAX_HANDLES: u64 = 8192;

/// Handles held by every cache in the process together, so several
/// providers (one per session, say) share one budget instead of each taking
/// its own quarter of the descriptor limit.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// A quarter of the soft descriptor limit, at most [`MAX_HANDLES`], read
/// once: a product with a low limit keeps most descriptors for itself.
fn handle_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(MAX_HANDLES * 4);
        usize::try_from((soft / 4).min(MAX_HANDLES)).unwrap_or(0)
    })
}

/// One handle's share of a budget counter ([`HELD`]), given back on drop.
#[derive(Debug)]
struct Held(&'static AtomicUsize);

impl Held {
    /// A share, or `None` when the process-wide budget is spent (the
    /// directory then takes the uncached path).
    fn acquire() -> Option<Self> {
        Self::acquire_from(&HELD, handle_budget())
    }

    fn acquire_from(counter: &'static AtomicUsize, budget: usize) -> Option<Self> {
        counter
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < budget).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(counter))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct Entry {
    /// This directory's name among its subdirectories' keys (`DirCache::index`).
    id: u64,
    dir: Arc<Dir>,
    /// This entry's share of the process-wide handle budget.
    _held: Held,
    /// The parent's trusted stamp, taken before this handle was opened by
    /// name from the parent's handle.
    parent: Stamp,
    /// This directory's trusted stamp taken before `absent` was observed.
    own: Option<Stamp>,
    /// Bit `i`: candidate `i` of the name list `names` had no entry (`lstat`
    /// found nothing) after `own` was taken.
    absent: u64,
    /// Which name list `absent` indexes (a hash of the list).
    names: u64,
    /// Candidates that were regular files, by index in the name list, each
    /// with a handle opened by name after `own` was taken; valid exactly
    /// while `absent` is.
    files: Vec<HeldFile>,
    /// Bit `i`: candidate `i` was no regular file when a handle on it was
    /// tried under `own` (a symlink such as `CLAUDE.md -> AGENTS.md`, a
    /// directory): probed by name without trying again while `own` holds.
    unheld: u64,
    /// The directory's entries as a listing (`FsProvider::list_dir`) read
    /// them after the trusted stamp beside them was taken: the same while
    /// the directory's stamp is that one (no entry added, removed or
    /// renamed; an entry's kind cannot change without one of those).
    listing: Option<(Stamp, Arc<Listed>)>,
}

/// The entries of a listed directory, as [`DirListing::Entries`] holds
/// them.
///
/// [`DirListing::Entries`]: crate::provider::DirListing::Entries
#[derive(Debug)]
pub(crate) struct Listed {
    pub(crate) entries: Vec<(String, crate::provider::EntryKind)>,
    pub(crate) truncated: bool,
}

/// A handle on one candidate file of a cached directory, with its share of
/// the process-wide handle budget.
#[derive(Debug)]
struct HeldFile {
    index: usize,
    fd: rustix::fd::OwnedFd,
    _held: Held,
}

/// The handles, indexed by their parent's id and their name ([`child_key`]):
/// a directory is only ever opened by name from its parent's handle, and a
/// key of an id and a name holds no path (a deep chain's absolute paths,
/// one per cached directory, were a large share of a composition's memory,
/// issue 35 item 3). A directory keeps its slot for the life of the cache
/// (a stale handle is replaced in place), so a batch looks it up once and
/// then uses its slot.
#[derive(Debug)]
pub(crate) struct DirCache {
    slots: Vec<Option<Entry>>,
    index: PathMap<usize>,
    /// The ids of the roots directories were opened from (their handles
    /// are the provider's, not cached here).
    roots: PathMap<u64>,
    /// The next id for an entry or a root: ids are never reused, so a key
    /// never names the child of another directory that took a freed slot.
    next_id: u64,
    /// Slots of directories that could not be reopened (gone, or no longer
    /// a plain subdirectory): their handle and budget share were given back.
    free: Vec<usize>,
    /// Candidate lookups answered from a stamp instead of a syscall (read by
    /// tests to show the fast path is taken).
    pub(crate) skipped: u64,
    /// Candidates answered by an `fstat` of a kept file handle instead of a
    /// lookup by name (read by tests, like `skipped`).
    pub(crate) held_hits: u64,
    /// Handles tried on candidates (read by tests: a symlinked candidate is
    /// tried once per stamp, not once per batch).
    pub(crate) hold_tries: u64,
    /// Listings answered from a kept listing (read by tests, like
    /// `skipped`).
    pub(crate) listings_kept: u64,
}

impl DirCache {
    /// An empty cache; it grows while the process-wide handle budget
    /// ([`handle_budget`]) allows, and new directories simply take the
    /// uncached path once it is spent.
    pub(crate) fn new() -> Self {
        Self {
            slots: Vec::new(),
            index: PathMap::default(),
            roots: PathMap::default(),
            next_id: 0,
            free: Vec::new(),
            skipped: 0,
            held_hits: 0,
            hold_tries: 0,
            listings_kept: 0,
        }
    }

    /// Handles held now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The id of the root at `path`, given on first use.
    fn root_id(&mut self, path: &str) -> u64 {
        if let Some(&id) = self.roots.get(path) {
            return id;
        }
        let id = self.new_id();
        self.roots.insert(path.to_owned(), id);
        id
    }

    /// The id of the parent of `child`, held in `slot` (`None`: a root,
    /// looked up by its path only then, or a directory the full cache
    /// could not take, which has none).
    fn parent_id(&self, slot: Option<usize>, child: &str) -> Option<u64> {
        match slot {
            Some(i) => self.slots[i].as_ref().map(|e| e.id),
            None => self.roots.get(parent_of(child)).copied(),
        }
    }
}

/// Writes into `key` the index key of the subdirectory `name` of the
/// directory whose id is `parent`: the id in hex digits, NUL (which no
/// name holds), the name. Built by hand: it runs per directory per batch,
/// and the formatting machinery cost a touch 4% of its instructions.
fn child_key(key: &mut String, parent: u64, name: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    key.clear();
    let digits = (u64::BITS - parent.leading_zeros()).div_ceil(4).max(1);
    for shift in (0..digits).rev() {
        let nibble = (parent >> (shift * 4)) & 0xf;
        key.push(char::from(HEX[nibble as usize]));
    }
    key.push('\0');
    key.push_str(name);
}

/// The parent of the absolute, normalized `path` (as [`Batch::handle`]
/// walks up: `/` above `/x`).
fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => "",
    }
}

/// A handle proven (in this batch) to name its path, with the directory's
/// stamp taken before any lookup of this batch in it, and its cache slot
/// (`None` for a root or a directory the full cache could not take).
pub(crate) type Valid = (Arc<Dir>, Option<Stamp>, Option<usize>);

/// One probe batch over the cache: every directory is validated and
/// `fstat`-ed at most once per visit, all against one clock reading taken
/// before the first stamp.
pub(crate) struct Batch<'c> {
    cache: &'c mut DirCache,
    now: SystemTime,
    margin: Duration,
    /// Hash of the batch's candidate names (what `Entry::absent` indexes).
    names: u64,
    /// The directories validated last, each an ancestor of the next, as
    /// lengths of prefixes of `last`: a chain or a run of siblings (the
    /// runtime sorts batches that way) revalidates nothing twice.
    stack: Vec<(usize, Valid)>,
    /// The directory asked for last (the deepest stack entry's path).
    last: String,
    /// Scratch for [`Batch::handle`].
    below: Vec<usize>,
    /// Scratch for the index keys ([`child_key`]).
    key: String,
    /// What this batch observes is also recorded here for later processes
    /// (`DirMemory`, decision 0037).
    pub(crate) memory: Option<&'c mut Records>,
    /// Directories whose remembered facts this batch proved (`Some`: the
    /// current, recorded stamp) or disproved (`None`).
    pub(crate) proven: PathMap<Option<Stamp>>,
}

/// Bit `i` of a per-directory name mask (`Entry::absent`, `DirMemory`);
/// 0 past the 64 names a mask holds, so those are always probed.
pub(crate) fn name_bit(i: usize) -> u64 {
    1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

/// Hash of a candidate-name list, stable across processes and builds (it is
/// stored by `DirMemory`): FNV-1a of the names, each followed by a NUL.
pub(crate) fn names_hash(names: &[String]) -> u64 {
    if names.len() > 64 {
        return 0;
    }
    let mut h = Fnv::default();
    for name in names {
        h.write(name.as_bytes());
        h.write(&[0]);
    }
    // 0 means "no list"; a real list never hashes to it in practice, and
    // if one did it would only never be trusted.
    h.finish()
}

/// A plain single component: what `open_dir_nofollow` may open by name.
pub(crate) fn plain(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/')
}

/// `dir` is `ancestor` or lies below it.
fn within(ancestor: &str, dir: &str) -> bool {
    dir.strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || ancestor.ends_with('/'))
}

impl<'c> Batch<'c> {
    /// Up to 64 candidate names are remembered per directory (more are
    /// simply always probed).
    pub(crate) fn new(
        cache: &'c mut DirCache,
        margin: Duration,
        names: &[String],
        memory: Option<&'c mut Records>,
    ) -> Self {
        Self {
            cache,
            now: SystemTime::now(),
            margin,
            names: names_hash(names),
            stack: Vec::new(),
            last: String::new(),
            below: Vec::new(),
            key: String::new(),
            memory,
            proven: PathMap::default(),
        }
    }

    /// The clock reading every stamp of this batch is judged against.
    pub(crate) fn now(&self) -> SystemTime {
        self.now
    }

    /// The racy-timestamp margin of this batch.
    pub(crate) fn margin(&self) -> Duration {
        self.margin
    }

    /// Hash of this batch's candidate names.
    pub(crate) fn names(&self) -> u64 {
        self.names
    }

    /// Marks `path` (a prefix of `last`, deeper than the stack's top)
    /// valid for this batch, stamping it now.
    fn validate(&mut self, path: &str, dir: Arc<Dir>, slot: Option<usize>) -> Valid {
        let stamp = Raw::of_dir(&dir)
            .ok()
            .and_then(|raw| Stamp::trusted_raw(&raw, self.now, self.margin));
        if let (Some(memory), Some(stamp)) = (self.memory.as_deref_mut(), stamp) {
            memory.stamp(path, stamp);
        }
        self.stack
            .push((path.len(), (Arc::clone(&dir), stamp, slot)));
        (dir, stamp, slot)
    }

    /// A handle on `dir` that provably names that path now, with the
    /// directory's current trusted stamp (taken before the caller's lookups).
    /// Missing ancestors are opened by name from the nearest root (`root_of`
    /// returns a root's handle for a root path) and cached. `None` when the
    /// path cannot be followed that way — a symlinked component, a racy or
    /// unreadable ancestor, a path outside the roots — and the caller takes
    /// the uncached path.
    pub(crate) fn handle(
        &mut self,
        root_of: &dyn Fn(&Utf8Path) -> Option<Arc<Dir>>,
        dir: &Utf8Path,
    ) -> Option<Valid> {
        let last = &self.last;
        while self
            .stack
            .last()
            .is_some_and(|(len, _)| !within(&last[..*len], dir.as_str()))
        {
            self.stack.pop();
        }
        self.last.clear();
        self.last.push_str(dir.as_str());
        // Up to the nearest directory proven in this batch, or a root. Every
        // stack entry and `cursor` are prefixes of `dir`: equal lengths mean
        // the same directory. `dir` is normalized and absolute, so its
        // parents are its prefixes up to a `/`.
        // Lengths of the prefixes of `dir` still to open, deepest first
        // (a buffer kept across calls: one allocation per batch, not per
        // directory).
        let mut below = std::mem::take(&mut self.below);
        below.clear();
        let mut cursor = dir.as_str();
        let valid = loop {
            if let Some((len, valid)) = self.stack.last()
                && *len == cursor.len()
            {
                break valid.clone();
            }
            if let Some(root) = root_of(Utf8Path::new(cursor)) {
                self.cache.root_id(cursor);
                break self.validate(cursor, root, None);
            }
            below.push(cursor.len());
            cursor = match cursor.rfind('/') {
                Some(0) if cursor.len() > 1 => "/",
                Some(i) if i > 0 => &cursor[..i],
                _ => {
                    self.below = below;
                    return None;
                }
            };
        };
        let valid = self.open_below(dir, &below, valid);
        self.below = below;
        valid
    }

    /// Opens, validates and caches the prefixes of `dir` of lengths `below`
    /// (deepest first), each from the one above it, starting from `valid`.
    fn open_below(&mut self, dir: &Utf8Path, below: &[usize], mut valid: Valid) -> Option<Valid> {
        for &len in below.iter().rev() {
            let path = &dir.as_str()[..len];
            let (handle, stamp, parent_slot) = valid;
            let parent = stamp?;
            let name = path.rsplit('/').next().filter(|n| plain(n))?;
            // A directory whose parent has no id (not cached) is not
            // cached either: it has no key.
            let keyed = match self.cache.parent_id(parent_slot, path) {
                Some(id) => {
                    child_key(&mut self.key, id, name);
                    true
                }
                None => false,
            };
            let slot = keyed
                .then(|| self.cache.index.get(self.key.as_str()).copied())
                .flatten();
            let cached = slot
                .and_then(|i| self.cache.slots[i].as_ref())
                .filter(|e| e.parent == parent)
                .map(|e| Arc::clone(&e.dir));
            let (dir, slot) = match cached {
                Some(dir) => (dir, slot),
                None => {
                    let opened = match handle.open_dir_nofollow(name) {
                        Ok(opened) => Ok(opened),
                        Err(error) => {
                            if rustix::io::Errno::from_io_error(&error)
                                == Some(rustix::io::Errno::NOENT)
                                && let Some(memory) = self.memory.as_deref_mut()
                            {
                                // No entry in a parent with a trusted stamp:
                                // missing while that stamp holds.
                                memory.missing(path, parent);
                            }
                            Err(error)
                        }
                    };
                    let Ok(opened) = opened else {
                        // Gone or replaced by something else: give the stale
                        // handle back rather than hold it for the session.
                        if let Some(i) = slot {
                            self.cache.slots[i] = None;
                            self.cache.index.remove(self.key.as_str());
                            self.cache.free.push(i);
                        }
                        return None;
                    };
                    let opened = Arc::new(opened);
                    let slot = match slot.and_then(|i| Some((i, self.cache.slots[i].as_mut()?))) {
                        Some((i, e)) => {
                            // Replaced in place: the entry keeps its share.
                            e.dir = Arc::clone(&opened);
                            e.parent = parent;
                            e.own = None;
                            e.absent = 0;
                            e.names = 0;
                            e.files.clear();
                            e.unheld = 0;
                            e.listing = None;
                            Some(i)
                        }
                        None if !keyed => None,
                        None => Held::acquire().map(|held| {
                            let entry = Entry {
                                id: self.cache.new_id(),
                                dir: Arc::clone(&opened),
                                _held: held,
                                parent,
                                own: None,
                                absent: 0,
                                names: 0,
                                files: Vec::new(),
                                unheld: 0,
                                listing: None,
                            };
                            let i = match self.cache.free.pop() {
                                Some(i) => {
                                    self.cache.slots[i] = Some(entry);
                                    i
                                }
                                None => {
                                    self.cache.slots.push(Some(entry));
                                    self.cache.slots.len() - 1
                                }
                            };
                            self.cache.index.insert(self.key.clone(), i);
                            i
                        }),
                    };
                    (opened, slot)
                }
            };
            valid = self.validate(path, dir, slot);
        }
        Some(valid)
    }

    /// Bit `i` set: candidate `i` is known to have no entry in the directory
    /// in `slot`, whose current stamp is `stamp`.
    pub(crate) fn known_absent(&self, slot: Option<usize>, stamp: Option<Stamp>) -> u64 {
        match slot.and_then(|i| self.cache.slots[i].as_ref()) {
            Some(e) if stamp.is_some() && e.own == stamp && e.names == self.names => e.absent,
            _ => 0,
        }
    }

    /// The directory in `slot` is provably unchanged since the last batch
    /// recorded it: its current trusted `stamp` is the one recorded then, for
    /// the same name list.
    fn unchanged(&self, slot: Option<usize>, stamp: Option<Stamp>) -> Option<&Entry> {
        slot.and_then(|i| self.cache.slots[i].as_ref())
            .filter(|e| stamp.is_some() && e.own == stamp && e.names == self.names && e.names != 0)
    }

    /// The handle kept on candidate `index` of the directory in `slot`, if
    /// the directory is unchanged since it was opened (counted as a hit).
    pub(crate) fn held_file(
        &mut self,
        slot: Option<usize>,
        stamp: Option<Stamp>,
        index: usize,
    ) -> Option<&rustix::fd::OwnedFd> {
        let at = self
            .unchanged(slot, stamp)?
            .files
            .iter()
            .position(|f| f.index == index)?;
        self.cache.held_hits += 1;
        let entry = self.cache.slots[slot?].as_ref()?;
        Some(&entry.files[at].fd)
    }

    /// Whether a handle on a candidate may be kept now: the directory is
    /// unchanged since the last batch, so a handle opened after this batch's
    /// stamp stays valid while the stamp holds.
    pub(crate) fn may_hold_file(
        &mut self,
        slot: Option<usize>,
        stamp: Option<Stamp>,
        index: usize,
    ) -> bool {
        let may = self
            .unchanged(slot, stamp)
            .is_some_and(|e| e.unheld & name_bit(index) == 0);
        if may {
            self.cache.hold_tries += 1;
        }
        may
    }

    /// Candidate `index` of the directory in `slot` is no regular file
    /// (or could not be opened): no handle is tried on it again while the
    /// directory's stamp holds.
    pub(crate) fn refuse_hold(&mut self, slot: Option<usize>, index: usize) {
        if let Some(entry) = slot.and_then(|i| self.cache.slots[i].as_mut()) {
            entry.unheld |= name_bit(index);
        }
    }

    /// Keeps `fd` as the handle on candidate `index` of the directory in
    /// `slot` (see [`Batch::may_hold_file`]); dropped when the budget is
    /// spent.
    pub(crate) fn hold_file(&mut self, slot: Option<usize>, index: usize, fd: rustix::fd::OwnedFd) {
        let Some(held) = Held::acquire() else {
            return;
        };
        if let Some(entry) = slot.and_then(|i| self.cache.slots[i].as_mut()) {
            entry.files.retain(|f| f.index != index);
            entry.files.push(HeldFile {
                index,
                fd,
                _held: held,
            });
        }
    }

    /// The entries a listing of the directory in `slot` read while its
    /// stamp was `stamp`, when `stamp` (its current trusted stamp) is that
    /// one.
    pub(crate) fn listing(
        &mut self,
        slot: Option<usize>,
        stamp: Option<Stamp>,
    ) -> Option<Arc<Listed>> {
        let stamp = stamp?;
        let entry = slot.and_then(|i| self.cache.slots[i].as_ref())?;
        let (at, listed) = entry.listing.as_ref()?;
        if *at != stamp {
            return None;
        }
        self.cache.listings_kept += 1;
        Some(Arc::clone(listed))
    }

    /// Keeps what a listing of the directory in `slot` read after its
    /// trusted `stamp` was taken (nothing without one).
    pub(crate) fn keep_listing(
        &mut self,
        slot: Option<usize>,
        stamp: Option<Stamp>,
        listed: Arc<Listed>,
    ) {
        if let (Some(stamp), Some(entry)) = (stamp, slot.and_then(|i| self.cache.slots[i].as_mut()))
        {
            entry.listing = Some((stamp, listed));
        }
    }

    /// Counts lookups answered by a stamp (tests read the total).
    pub(crate) fn count_skipped(&mut self, n: u32) {
        self.cache.skipped += u64::from(n);
    }

    /// Records what a batch saw in the directory in `slot`: its stamp taken
    /// before the lookups and (bit per candidate) the names whose `lstat`
    /// found no entry.
    pub(crate) fn record(
        &mut self,
        dir: &str,
        slot: Option<usize>,
        stamp: Option<Stamp>,
        absent: u64,
    ) {
        let names = self.names;
        if let Some(memory) = self.memory.as_deref_mut() {
            memory.names(dir, stamp, names, absent);
        }
        if let Some(entry) = slot.and_then(|i| self.cache.slots[i].as_mut()) {
            if entry.own != stamp || entry.names != names || stamp.is_none() {
                // Entries may have changed: no kept file handle is proven.
                entry.files.clear();
                entry.unheld = 0;
            }
            entry.own = stamp;
            let usable = stamp.is_some() && names != 0;
            entry.absent = if usable { absent } else { 0 };
            entry.names = names;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_shares_are_bounded_and_given_back() {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let a = Held::acquire_from(&COUNTER, 2);
        let b = Held::acquire_from(&COUNTER, 2);
        assert!(a.is_some() && b.is_some());
        assert!(Held::acquire_from(&COUNTER, 2).is_none(), "budget spent");
        drop(a);
        assert!(
            Held::acquire_from(&COUNTER, 2).is_some(),
            "a drop gives one back"
        );
        drop(b);
        assert_eq!(COUNTER.load(Ordering::Relaxed), 0);
    }

    /// An id and a name make one key each: hex digits, NUL, the name.
    #[test]
    fn child_keys_are_the_id_in_hex_then_the_name() {
        let mut key = String::from("stale");
        for (id, name, want) in [
            (0, "a", "0\0a"),
            (0xf, "b", "f\0b"),
            (0x10, "c", "10\0c"),
            (u64::MAX, "d", "ffffffffffffffff\0d"),
        ] {
            child_key(&mut key, id, name);
            assert_eq!(key, want);
        }
    }

    /// Handles are keyed by their parent and their name, not by path: two
    /// roots' subdirectories of the same name, and two parents' children of
    /// the same name, each get their own handle, and a second batch finds
    /// every one in its slot.
    #[test]
    fn same_names_under_other_parents_are_other_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let base = camino::Utf8Path::from_path(tmp.path()).unwrap();
        for dir in ["r1/a/x", "r2/a/x", "r1/b/x"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
            std::fs::write(base.join(dir).join("mark"), dir).unwrap();
        }
        let roots: Vec<(camino::Utf8PathBuf, Arc<Dir>)> = ["r1", "r2"]
            .iter()
            .map(|r| {
                let path = base.join(r);
                let dir = Dir::open_ambient_dir(&path, cap_std::ambient_authority()).unwrap();
                (path, Arc::new(dir))
            })
            .collect();
        let root_of = |p: &Utf8Path| {
            roots
                .iter()
                .find(|(r, _)| r == p)
                .map(|(_, d)| Arc::clone(d))
        };
        let mut cache = DirCache::new();
        let dirs = ["r1/a/x", "r2/a/x", "r1/b/x"];
        let mut slots = Vec::new();
        for round in 0..2 {
            let mut batch = Batch::new(&mut cache, Duration::ZERO, &[], None);
            for (i, dir) in dirs.iter().enumerate() {
                let (handle, _, slot) = batch.handle(&root_of, &base.join(dir)).unwrap();
                let mark = handle.read_to_string("mark").unwrap();
                assert_eq!(mark, *dir, "round {round}");
                if round == 0 {
                    slots.push(slot.expect("cached"));
                } else {
                    assert_eq!(slot, Some(slots[i]), "{dir}: found again");
                }
            }
        }
        assert_eq!(cache.len(), 6, "a, a/x under each root, and r1/b, r1/b/x");
    }
}
