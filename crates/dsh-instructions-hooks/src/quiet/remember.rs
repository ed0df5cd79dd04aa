//! After a full path that answered nothing: the memo written with the
//! event's key and the stamps of everything the composition read.

use std::collections::BTreeSet;
use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_session_log::side::{self, Durability};
use sha2::{Digest as _, Sha256};

use super::MEMO_FILE_NAME;
use super::format::{Changed, Memo, PathStamps};
use super::hit::{MemoRead, log_path, session_stamps};
use super::key::Key;
use super::record::{Read, Reads};
use super::stamp::{Look, Stamp, is_absent, is_link, look};
use crate::event::{Action, HookEvent};

/// Keys kept at most (the newest): each distinct quiet event of a session
/// (a prompt, a read of one file) is a key.
const MAX_KEYS: usize = 64;

/// What an event's full path started from, for [`remember`].
#[derive(Debug)]
pub(crate) struct Start {
    /// A clock reading taken before the event read anything.
    pub(crate) t0: SystemTime,
    /// The log's stamp once it was open (and repaired).
    log: Stamp,
}

impl Start {
    /// Stamps the open log; `None` when it cannot be looked at (no memo).
    pub(crate) fn after_open(session_dir: &Utf8Path, t0: SystemTime) -> Option<Self> {
        let log = look(&log_path(session_dir), Look::Entry).ok()?;
        Some(Self { t0, log })
    }
}

/// What a claim is written with (decision 0085): the session's cwd and
/// the directories its instance knows, absolute, as of the composition
/// ([`dsh_instructions_runtime::Instance::known_directories`]).
#[derive(Debug)]
pub(crate) struct Known {
    /// The session's cwd (the log header's), which touches are read against.
    pub(crate) cwd: Utf8PathBuf,
    /// The known directories.
    pub(crate) dirs: Vec<Utf8PathBuf>,
}

/// After a full path that answered nothing: writes the memo with `key`
/// (its event's `why`) and the stamps of everything `reads` recorded.
/// When the memo already there still holds whole and was written at this
/// state of the log, the key joins its keys; otherwise the new memo has
/// this key alone, but what of the old one still holds is not looked at
/// twice (a changed directory costs its own paths, not every known one).
/// With `known` (given when [`Reads::may_claim`]), the key's claim is
/// written too, when the event's own touches reached only known
/// directories (decision 0085).
/// Writes nothing when the log changed during the event or anything read
/// changed too recently to vouch. Called under the session lock; a failure
/// only costs the next event the full path, so it is not reported.
pub(crate) fn remember(
    session_dir: &Utf8Path,
    memo: MemoRead,
    (key, why): (Key, &str),
    event: &HookEvent,
    known: Option<Known>,
    reads: &Reads,
    start: &Start,
) {
    let Some((log, settings)) = session_stamps(session_dir) else {
        return;
    };
    if log != start.log
        || settings.is_some_and(|s| !s.old(start.t0))
        || touched_fresh(event, start.t0)
    {
        return;
    }
    let mut old = memo.decode(session_dir).unwrap_or_default();
    // What of it still holds stays; it is not looked at again below.
    let changed = old.paths.retain_holding();
    let same = changed.is_empty() && old.log == Some(log) && old.settings == settings;
    let Some((fresh, batches)) = stamps(reads, start.t0, &old.paths, &changed, &old.batches) else {
        return;
    };
    let mut memo = if same {
        old
    } else {
        // Only this key is vouched for; the stamps that hold stay (a later
        // key that reads them finds them here), the batches do not.
        Memo {
            log: Some(log),
            settings,
            paths: old.paths,
            ..Memo::default()
        }
    };
    let before = (memo.paths.len(), memo.batches.len(), memo.claims.len());
    memo.paths.extend(fresh);
    memo.batches.extend(batches);
    let claim = known.and_then(|k| claimable(event, k, &mut memo, start.t0));
    let had = memo.keys.iter().any(|(k, w)| *k == key.exact && w == why);
    let had_claim = claim.is_none() || memo.claims.iter().any(|(k, w)| *k == key.claim && w == why);
    if had && had_claim && (memo.paths.len(), memo.batches.len(), memo.claims.len()) == before {
        return;
    }
    for (list, k) in [
        (&mut memo.keys, Some(key.exact)),
        (&mut memo.claims, claim.map(|()| key.claim)),
    ] {
        let Some(k) = k else { continue };
        list.retain(|(have, _)| *have != k);
        list.push((k, why.to_owned()));
        if list.len() > MAX_KEYS {
            list.drain(..list.len() - MAX_KEYS);
        }
    }
    let _ = side::write(
        &session_dir.join(MEMO_FILE_NAME),
        memo.encode().as_bytes(),
        Durability::Cache,
    );
}

/// Whether the claim can be written into `memo`: the event's own touches
/// reach only known directories, and every known directory below the cwd
/// has a target stamp that vouches (each looked at now when the
/// composition stamped none). Records the cwd and the known directories in
/// `memo`. A memo holding a claim of another cwd takes none.
fn claimable(event: &HookEvent, known: Known, memo: &mut Memo, t0: SystemTime) -> Option<()> {
    let cwd = known.cwd;
    if memo.cwd.as_deref().is_some_and(|c| c != cwd.as_str()) {
        return None;
    }
    let below: BTreeSet<String> = known
        .dirs
        .into_iter()
        .filter(|d| d.starts_with(&cwd) && *d != cwd)
        .map(Utf8PathBuf::into_string)
        .collect();
    if let Action::Tool { touched, .. } = &event.action {
        for t in touched {
            if !t.reaches(&cwd)?.iter().all(|d| below.contains(d.as_str())) {
                return None;
            }
        }
    }
    for dir in &below {
        if memo.paths.get(dir, Look::Target).is_some() {
            continue;
        }
        let stamp = look(Utf8Path::new(dir), Look::Target).ok()?;
        (stamp.old(t0) && !dir.contains(['\n', '\r'])).then_some(())?;
        memo.paths.insert(dir, Look::Target, stamp);
    }
    memo.cwd = Some(cwd.into_string());
    memo.known = below;
    Some(())
}

/// Whether a path the event's tool touched, or its directory, changed
/// within the margin: a tool that wrote a file is followed by its event at
/// once, and that file cannot vouch yet. Looked at first, so such an event
/// gives up after a stamp or two instead of after all of them.
fn touched_fresh(event: &HookEvent, t0: SystemTime) -> bool {
    let Action::Tool { touched, .. } = &event.action else {
        return false;
    };
    touched.iter().any(|t| {
        let path = event.cwd.join(&t.path);
        [Some(path.as_path()), path.parent()]
            .into_iter()
            .flatten()
            .any(|p| look(p, Look::Target).is_ok_and(|s| !s.old(t0)))
    })
}

/// The stamp of everything read (see the module's doc), or `None` when
/// something cannot vouch: changed within the margin before `t0`, not
/// looked at (permissions, a loop), or a dangling link. With the digest
/// of every probe batch, each now stamped whole.
///
/// `held`: the stamps of an earlier memo that still hold (`changed`:
/// those that did not); they are not looked at again, and not
/// returned. A batch it had stamped whole (`covered`) costs only its
/// paths under a directory that changed.
fn stamps(
    reads: &Reads,
    t0: SystemTime,
    held: &PathStamps,
    changed: &Changed,
    covered: &BTreeSet<String>,
) -> Option<(PathStamps, BTreeSet<String>)> {
    let reads = reads.all();
    let mut out = Stamps {
        t0,
        fresh: PathStamps::default(),
        held,
        changed,
        buf: String::new(),
    };
    let mut batches = BTreeSet::new();
    for read in reads.iter() {
        match read {
            Read::Path(p) => out.path(p)?,
            Read::Batch(dirs, names) => {
                let digest = batch_digest(dirs, names);
                if batches.contains(&digest) {
                    continue;
                }
                let covered = covered.contains(&digest);
                for dir in dirs {
                    for name in names {
                        out.batch_path(dir, name, covered)?;
                    }
                }
                batches.insert(digest);
            }
            Read::Listed(dir) => out.existing_above(dir)?,
            Read::Marker(p) => out.existing_above(p.parent().unwrap_or(p))?,
            Read::Unvouched => return None,
        }
    }
    Some((out.fresh, batches))
}

/// The digest of a probe batch: its directories and names, in order.
fn batch_digest(dirs: &[Utf8PathBuf], names: &[String]) -> String {
    let mut hash = Sha256::new();
    for dir in dirs {
        hash.update(dir.as_str().as_bytes());
        hash.update([0]);
    }
    hash.update([1]);
    for name in names {
        hash.update(name.as_bytes());
        hash.update([0]);
    }
    crate::record::hex(&hash.finalize())
}

/// The stamps being collected.
struct Stamps<'a> {
    t0: SystemTime,
    /// This event's, looked at now.
    fresh: PathStamps,
    /// An earlier memo's that still hold.
    held: &'a PathStamps,
    /// That memo's that no longer do.
    changed: &'a Changed,
    /// Scratch for a batch's paths.
    buf: String,
}

impl Stamps<'_> {
    /// Stamped by this event, or by an earlier memo's that still holds
    /// (it vouched at its time, so it does now).
    fn get(&self, path: &str, how: Look) -> Option<Stamp> {
        self.fresh
            .get(path, how)
            .or_else(|| self.held.get(path, how))
    }

    fn known(&self, path: &str, how: Look) -> bool {
        self.get(path, how).is_some()
    }

    fn put(&mut self, path: &Utf8Path, how: Look, stamp: Stamp) -> Option<()> {
        // A line break would end the memo's line.
        (stamp.old(self.t0) && !path.as_str().contains(['\n', '\r'])).then_some(())?;
        self.fresh.insert(path.as_str(), how, stamp);
        Some(())
    }

    /// A path the composition looked at: its entry (and its target when
    /// it is a link), or, when nothing is there, the directory above.
    fn path(&mut self, path: &Utf8Path) -> Option<()> {
        if let Some(entry) = self.get(path.as_str(), Look::Entry) {
            return if is_link(entry) {
                self.target(path)
            } else {
                Some(())
            };
        }
        match look(path, Look::Entry) {
            Ok(entry) => {
                self.put(path, Look::Entry, entry)?;
                if is_link(entry) {
                    self.target(path)?;
                }
                Some(())
            }
            Err(e) if is_absent(&e) => self.existing_above(path.parent()?),
            Err(_) => None,
        }
    }

    /// What a link resolves to; a dangling one could come to resolve
    /// anywhere, so it cannot vouch.
    fn target(&mut self, path: &Utf8Path) -> Option<()> {
        if self.known(path.as_str(), Look::Target) {
            return Some(());
        }
        let target = look(path, Look::Target).ok()?;
        self.put(path, Look::Target, target)
    }

    /// `dir/name` of a probe batch. When an earlier memo stamped the same
    /// batch whole (`covered`), a name it found absent is still absent if
    /// the directory that proved it (the nearest above it with a stamp)
    /// still holds: then nothing is looked at.
    fn batch_path(&mut self, dir: &Utf8Path, name: &str, covered: bool) -> Option<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.push_str(dir.as_str());
        buf.push('/');
        buf.push_str(name);
        let path = buf.as_str();
        let settled = covered
            && self.get(path, Look::Entry).is_none()
            && !self.changed.entries.contains(path)
            && self.absent_still(path);
        let out = if settled {
            Some(())
        } else {
            self.path(Utf8Path::new(path))
        };
        self.buf = buf;
        out
    }

    /// Whether `path`, absent when an earlier memo was written, still is:
    /// the nearest directory above it with a stamp (the one that proved
    /// it) still holds, and none between changed since.
    fn absent_still(&self, path: &str) -> bool {
        let mut at = path;
        while let Some(cut) = at.rfind('/') {
            at = if cut == 0 { "/" } else { &at[..cut] };
            if self.held.get(at, Look::Target).is_some() {
                return true;
            }
            if self.changed.targets.contains(at) || self.fresh.get(at, Look::Target).is_some() {
                // That directory changed since (or is new): look again.
                return false;
            }
            if at == "/" {
                return false;
            }
        }
        false
    }

    /// The nearest of `dir` and the directories above it that exists,
    /// followed through links: where an absent path would appear.
    fn existing_above(&mut self, dir: &Utf8Path) -> Option<()> {
        let mut at = dir;
        loop {
            if self.known(at.as_str(), Look::Target) {
                return Some(());
            }
            match look(at, Look::Target) {
                Ok(stamp) => return self.put(at, Look::Target, stamp),
                Err(e) if is_absent(&e) => {
                    // A dangling link here could come to resolve anywhere.
                    if std::fs::symlink_metadata(at).is_ok() {
                        return None;
                    }
                    at = at.parent()?;
                }
                Err(_) => return None,
            }
        }
    }
}
