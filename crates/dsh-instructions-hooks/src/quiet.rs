//! The quiet memo (decisions 0076, 0077): an event that can only answer "nothing
//! new", proved from stamps alone.
//!
//! At 1,000 known directories a "nothing new" event spends most of its time
//! decoding the session's side files and revisiting every known directory,
//! to conclude what the filesystem's stamps already say: nothing changed
//! (R-HOOK-6). After an event whose full path answered nothing and wrote
//! nothing to the log, the hook keeps `quiet.memo` beside the log:
//!
//! - the **keys** of such events: a digest of the build, the agent, the parsed event
//!   (its name, session, cwd and action with its touched paths, never the
//!   bytes, which carry ids that differ every time), the configuration and
//!   the home paths; each with the reason its event logged;
//! - the stamp of the **log** and of the session's **settings**: every
//!   append changes the log's size, so equal stamps mean the state the
//!   composition started from;
//! - the stamp of every **path** the composition depended on, recorded by a
//!   decorator around the event's provider factory ([`Recorder`]): a file
//!   read or probed and found (its own stamp, and its target's when it is a
//!   symbolic link); a path found absent (the nearest directory above it
//!   that exists, whose entries change when it appears); a listed
//!   directory; a root marker (the directory holding it).
//!
//! An event whose key is in the memo, with the log, the settings and every
//! path as stamped and no deferred touches waiting, answers nothing without
//! reading the log or any other side file: the stamps of the floor and no
//! more ([`quiet`]). Anything else takes the full path, which writes the
//! memo anew when it is quiet again ([`remember`]): with its key added when
//! the memo held whole at the same state of the log, else with its key
//! alone — but what of the old stamps still holds is taken over, not looked
//! at again, and a probe batch the old memo stamped whole (the known
//! directories, asked at every event) costs only its paths under a
//! directory that changed (decision 0077).
//!
//! Why a stamp vouches (the racy-timestamp argument, as for the versions
//! and the directory stamps): a path is stamped after the composition,
//! and only when its last change (ctime) lies at least [`MARGIN`] before a
//! clock reading taken before the event began. Then it did not change while
//! the event read it, and any later change gives it another ctime. Otherwise
//! no memo is written and the next quiet event tries again.
//!
//! Outside its claim, so never answered from it: session starts and
//! compaction (they write the log), Gemini CLI (its `BeforeModel` carries
//! the history), events with deferred touches, marks-only events. A
//! missing, damaged or foreign memo is only the full path once: a damaged
//! one is removed and reported ([`dsh_session_log::side`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::HomeEnv;
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider,
    provider::{
        BoxFuture, DirListing, MarkerProbe, PathKind, Probe, ProbedDirs, ReadOutcome, Unavailable,
    },
};
use dsh_instructions_runtime::{ProviderFactory, RuntimeError};
use dsh_instructions_session::SETTINGS_FILE_NAME;
use dsh_instructions_state::ConfigInput;
use dsh_session_log::side::{self, Durability, Found};
use sha2::{Digest as _, Sha256};

use crate::agent::Agent;
use crate::event::{Action, HookEvent};

/// File name of the memo, beside `session.jsonl`.
pub(crate) const MEMO_FILE_NAME: &str = "quiet.memo";

/// First line of the format.
const HEADER: &str = "dsh-quiet-memo 1";

/// Keys kept at most (the newest): each distinct quiet event of a session
/// (a prompt, a read of one file) is a key.
const MAX_KEYS: usize = 64;

/// How old a stamped change must be, before the event began, to vouch.
pub(crate) const MARGIN: Duration = Duration::from_secs(2);

#[cfg(test)]
thread_local! {
    /// Tests that cannot wait for [`MARGIN`] shorten it.
    pub(crate) static TEST_MARGIN: std::cell::Cell<Option<Duration>> =
        const { std::cell::Cell::new(None) };
    /// Tests comparing with the full path switch the memo off.
    pub(crate) static TEST_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn margin() -> Duration {
    #[cfg(test)]
    if let Some(m) = TEST_MARGIN.with(std::cell::Cell::get) {
        return m;
    }
    MARGIN
}

/// One path's stamp: device, inode, mode, size, mtime and ctime (seconds,
/// nanoseconds), as the operating system reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp([u64; 8]);

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        // Seconds before 1970 keep their bits: only equality and the
        // margin (which such a ctime passes) read them.
        Self([
            meta.dev(),
            meta.ino(),
            u64::from(meta.mode()),
            meta.size(),
            meta.mtime().cast_unsigned(),
            meta.mtime_nsec().cast_unsigned(),
            meta.ctime().cast_unsigned(),
            meta.ctime_nsec().cast_unsigned(),
        ])
    }

    /// Whether its last change lies at least the margin before `t0`.
    fn old(&self, t0: SystemTime) -> bool {
        let secs = self.0[6].cast_signed();
        let Ok(secs) = u64::try_from(secs) else {
            return true;
        };
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(secs, 0)
            + Duration::from_nanos(self.0[7].min(999_999_999));
        t0.checked_sub(margin())
            .is_some_and(|limit| changed <= limit)
    }
}

/// How a path is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Look {
    /// Its own entry (`lstat`): a file, or a symbolic link itself.
    Entry,
    /// What it resolves to (`stat`): a directory, or a link's target.
    Target,
}

impl Look {
    const fn tag(self) -> char {
        match self {
            Self::Entry => 'e',
            Self::Target => 't',
        }
    }
}

#[cfg(unix)]
fn look(path: &Utf8Path, how: Look) -> std::io::Result<Stamp> {
    let meta = match how {
        Look::Entry => std::fs::symlink_metadata(path)?,
        Look::Target => std::fs::metadata(path)?,
    };
    Ok(Stamp::of(&meta))
}

#[cfg(not(unix))]
fn look(_path: &Utf8Path, _how: Look) -> std::io::Result<Stamp> {
    // No stamps to vouch with: the memo is never written.
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Whether an error says nothing is at the path (or a file stands where a
/// directory of it should).
fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// The memo as stored.
#[derive(Debug, Default, PartialEq)]
struct Memo {
    log: Option<Stamp>,
    settings: Option<Stamp>,
    /// Key and its event's reason, oldest first.
    keys: Vec<(String, String)>,
    /// Digests of the probe batches whose every path is stamped below
    /// ([`batch_digest`]): a later event asking the same batch (the known
    /// directories, every event) adds its key without stamping it again.
    batches: BTreeSet<String>,
    /// Every path's stamp, by how it is looked at.
    paths: PathStamps,
}

/// The paths of an earlier memo whose stamps no longer hold.
#[derive(Debug, Default)]
struct Changed {
    entries: std::collections::HashSet<String>,
    targets: std::collections::HashSet<String>,
}

impl Changed {
    fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.targets.is_empty()
    }
}

/// Stamps by path, one map for each way of looking.
#[derive(Debug, Default, Clone, PartialEq)]
struct PathStamps {
    entries: HashMap<String, Stamp>,
    targets: HashMap<String, Stamp>,
}

impl PathStamps {
    fn map(&self, how: Look) -> &HashMap<String, Stamp> {
        match how {
            Look::Entry => &self.entries,
            Look::Target => &self.targets,
        }
    }

    fn get(&self, path: &str, how: Look) -> Option<Stamp> {
        self.map(how).get(path).copied()
    }

    fn insert(&mut self, path: &str, how: Look, stamp: Stamp) {
        let map = match how {
            Look::Entry => &mut self.entries,
            Look::Target => &mut self.targets,
        };
        map.insert(path.to_owned(), stamp);
    }

    fn len(&self) -> usize {
        self.entries.len() + self.targets.len()
    }

    fn extend(&mut self, other: Self) {
        self.entries.extend(other.entries);
        self.targets.extend(other.targets);
    }

    /// Every stamp, by path (byte order) and way of looking.
    fn sorted(&self) -> Vec<(&str, Look, Stamp)> {
        let mut all: Vec<(&str, Look, Stamp)> = [Look::Entry, Look::Target]
            .into_iter()
            .flat_map(|how| {
                self.map(how)
                    .iter()
                    .map(move |(p, s)| (p.as_str(), how, *s))
            })
            .collect();
        all.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        all
    }

    /// Keeps those still as stamped (each looked at again) and returns
    /// the paths of the others.
    fn retain_holding(&mut self) -> Changed {
        let mut changed = Changed::default();
        self.entries.retain(|path, stamp| {
            let holds = look(Utf8Path::new(path), Look::Entry).ok() == Some(*stamp);
            if !holds {
                changed.entries.insert(path.clone());
            }
            holds
        });
        self.targets.retain(|path, stamp| {
            let holds = look(Utf8Path::new(path), Look::Target).ok() == Some(*stamp);
            if !holds {
                changed.targets.insert(path.clone());
            }
            holds
        });
        changed
    }
}

fn encode_stamp(out: &mut String, s: &Stamp) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for w in s.0 {
        out.push(' ');
        // Lowercase hex without leading zeros (one digit for zero).
        let digits = (64 - w.leading_zeros()).div_ceil(4).max(1);
        for i in (0..digits).rev() {
            out.push(char::from(DIGITS[((w >> (i * 4)) & 0xf) as usize]));
        }
    }
}

/// A word of [`encode_stamp`]: 1 to 16 lowercase hex digits.
fn hex(field: &str) -> Option<u64> {
    if field.is_empty() || field.len() > 16 {
        return None;
    }
    field.bytes().try_fold(0u64, |acc, b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        Some(acc << 4 | u64::from(digit))
    })
}

fn decode_stamp<'a>(fields: &mut impl Iterator<Item = &'a str>) -> Option<Stamp> {
    let mut words = [0u64; 8];
    for w in &mut words {
        *w = hex(fields.next()?)?;
    }
    Some(Stamp(words))
}

/// One path line: how, stamp, path. Parsed byte by byte: the fast path
/// reads thousands of them.
fn decode_path_line(line: &str) -> Option<(Look, Stamp, &str)> {
    let bytes = line.as_bytes();
    let how = match bytes.first()? {
        b'e' => Look::Entry,
        b't' => Look::Target,
        _ => return None,
    };
    let mut at = 1;
    let mut words = [0u64; 8];
    for w in &mut words {
        (*bytes.get(at)? == b' ').then_some(())?;
        at += 1;
        let start = at;
        let mut value = 0u64;
        while let Some(&b) = bytes.get(at) {
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                _ => break,
            };
            value = value << 4 | u64::from(digit);
            at += 1;
        }
        (at > start && at - start <= 16).then_some(())?;
        *w = value;
    }
    (*bytes.get(at)? == b' ').then_some(())?;
    // The path (which may hold spaces) is the rest.
    let path = line.get(at + 1..)?;
    path.starts_with('/').then_some((how, Stamp(words), path))
}

/// The lines of a memo after its header, or `None` when `bytes` are not
/// of this format or torn (every encoding ends its last line).
fn body(bytes: &[u8]) -> Option<std::str::Split<'_, char>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.strip_suffix('\n')?.split('\n');
    (lines.next()? == HEADER).then_some(lines)
}

/// The stamp of a `log` or `settings` line (`None` inside for `-`).
fn decode_session_line(line: Option<&str>, tag: &str) -> Option<Option<Stamp>> {
    let rest = line?.strip_prefix(tag)?.strip_prefix(' ')?;
    if rest == "-" {
        Some(None)
    } else {
        decode_stamp(&mut rest.split(' ')).map(Some)
    }
}

/// One line of a memo after its log and settings lines.
enum Line<'a> {
    /// A key and its event's reason.
    Key(&'a str, &'a str),
    /// A probe batch stamped whole.
    Batch(&'a str),
    /// A path's stamp.
    Path(Look, Stamp, &'a str),
}

/// The log and settings stamps of a memo and its other lines, each `None`
/// when it is not of this format; `None` for a memo not of it at all.
fn parse(
    bytes: &[u8],
) -> Option<(
    Option<Stamp>,
    Option<Stamp>,
    impl Iterator<Item = Option<Line<'_>>>,
)> {
    let mut lines = body(bytes)?;
    let log = decode_session_line(lines.next(), "log")?;
    let settings = decode_session_line(lines.next(), "settings")?;
    let rest = lines.map(|line| {
        if let Some(rest) = line.strip_prefix("key ") {
            rest.split_once(' ').map(|(k, w)| Line::Key(k, w))
        } else if let Some(batch) = line.strip_prefix("batch ") {
            Some(Line::Batch(batch))
        } else {
            decode_path_line(line).map(|(how, stamp, path)| Line::Path(how, stamp, path))
        }
    });
    Some((log, settings, rest))
}

impl Memo {
    fn encode(&self) -> String {
        let mut out = String::with_capacity(64 + self.paths.len() * 120);
        out.push_str(HEADER);
        out.push('\n');
        for (tag, stamp) in [("log", &self.log), ("settings", &self.settings)] {
            out.push_str(tag);
            match stamp {
                Some(s) => encode_stamp(&mut out, s),
                None => out.push_str(" -"),
            }
            out.push('\n');
        }
        for (key, why) in &self.keys {
            out.push_str("key ");
            out.push_str(key);
            out.push(' ');
            // One line: a reason never holds a line break, but a
            // configuration warning might quote one.
            out.push_str(&why.replace(['\n', '\r'], " "));
            out.push('\n');
        }
        for batch in &self.batches {
            out.push_str("batch ");
            out.push_str(batch);
            out.push('\n');
        }
        for (path, how, stamp) in self.paths.sorted() {
            out.push(how.tag());
            encode_stamp(&mut out, &stamp);
            out.push(' ');
            out.push_str(path);
            out.push('\n');
        }
        out
    }

    /// The memo `bytes` hold; `None` for anything not of this format or
    /// torn.
    fn decode(bytes: &[u8]) -> Option<Self> {
        let (log, settings, lines) = parse(bytes)?;
        let mut memo = Self {
            log,
            settings,
            ..Self::default()
        };
        for line in lines {
            match line? {
                Line::Key(key, why) => memo.keys.push((key.to_owned(), why.to_owned())),
                Line::Batch(batch) => {
                    memo.batches.insert(batch.to_owned());
                }
                Line::Path(how, stamp, path) => memo.paths.insert(path, how, stamp),
            }
        }
        Some(memo)
    }
}

/// The memo's key of `event`, or `None` when the event is outside the
/// memo's claim (see the module's doc).
pub(crate) fn key(
    agent: Agent,
    event: &HookEvent,
    input: &ConfigInput,
    env: &HomeEnv,
    session_dir: &Utf8Path,
) -> Option<String> {
    #[cfg(test)]
    if TEST_OFF.with(std::cell::Cell::get) {
        return None;
    }
    let eligible = agent != Agent::Gemini
        && matches!(
            event.action,
            Action::Prompt | Action::FollowUp | Action::Tool { .. } | Action::Shell { .. }
        )
        && crate::touch::marks_only(agent, &event.action).is_none();
    if !eligible || deferred_waiting(session_dir) {
        return None;
    }
    Some(key_of(agent, event, input, env, &build()?))
}

/// The key of `event` as `build` composes it: every field of each (their
/// `Debug` forms are total and ordered).
fn key_of(
    agent: Agent,
    event: &HookEvent,
    input: &ConfigInput,
    env: &HomeEnv,
    build: &str,
) -> String {
    let text = format!("{build}\n{}\n{event:?}\n{input:?}\n{env:?}", agent.as_str());
    crate::record::hex(&Sha256::digest(text.as_bytes()))
}

/// This build: its version and its executable's stamp. Another build may
/// compose the same inputs otherwise (an upgrade that reads a new kind of
/// file), so a memo another build wrote never answers for this one. `None`
/// when the executable cannot be looked at: no memo.
fn build() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let stamp = look(Utf8Path::from_path(&exe)?, Look::Target).ok()?;
    Some(format!("{} {:?}", env!("CARGO_PKG_VERSION"), stamp.0))
}

/// Touches a busy session kept for the next event: that event's
/// composition depends on them.
fn deferred_waiting(session_dir: &Utf8Path) -> bool {
    match std::fs::symlink_metadata(session_dir.join(crate::deferred::DEFERRED_FILE_NAME)) {
        Ok(meta) => meta.len() > 0 || !meta.is_file(),
        Err(e) => !is_absent(&e),
    }
}

fn log_path(session_dir: &Utf8Path) -> Utf8PathBuf {
    session_dir.join(dsh_session_log::LOG_FILE_NAME)
}

/// The session's own files as they stand: the log and the settings.
fn session_stamps(session_dir: &Utf8Path) -> Option<(Stamp, Option<Stamp>)> {
    let log = look(&log_path(session_dir), Look::Entry).ok()?;
    let settings = match look(&session_dir.join(SETTINGS_FILE_NAME), Look::Entry) {
        Ok(s) => Some(s),
        Err(e) if is_absent(&e) => None,
        Err(_) => return None,
    };
    Some((log, settings))
}

/// The memo of a session as this event read it, under the session lock
/// (so it cannot change before [`remember`] writes it again).
#[derive(Debug)]
pub(crate) struct MemoRead(Option<Vec<u8>>);

impl MemoRead {
    /// The memo in `session_dir`, if a file is there; a damaged one
    /// (unreadable, not of this format, torn) is removed and reported.
    pub(crate) fn of(session_dir: &Utf8Path) -> Self {
        let path = session_dir.join(MEMO_FILE_NAME);
        let damage = match side::read(&path) {
            Found::Missing => return Self(None),
            Found::Bytes(bytes) if body(&bytes).is_some() => return Self(Some(bytes)),
            Found::Bytes(_) => "not a quiet memo (or torn)".to_owned(),
            Found::Damaged(damage) => damage,
        };
        discard(&path, &damage);
        Self(None)
    }

    /// What it holds, decoded; a memo with a line not of this format is
    /// removed and reported.
    fn decode(self, session_dir: &Utf8Path) -> Option<Memo> {
        let memo = Memo::decode(&self.0?);
        if memo.is_none() {
            discard(&session_dir.join(MEMO_FILE_NAME), "not a quiet memo");
        }
        memo
    }
}

fn discard(path: &Utf8Path, damage: &str) {
    let _ = side::discard(path);
    side::report(path, damage, "removed; the next quiet event writes it anew");
}

/// What is wrong with the memo in `session_dir`, if anything (for `hook
/// doctor`; reads, writes nothing).
pub(crate) fn damage(session_dir: &Utf8Path) -> Option<String> {
    match side::read(&session_dir.join(MEMO_FILE_NAME)) {
        Found::Missing => None,
        Found::Bytes(bytes) if Memo::decode(&bytes).is_some() => None,
        Found::Bytes(_) => Some("not a quiet memo (or torn)".to_owned()),
        Found::Damaged(damage) => Some(damage),
    }
}

/// The fast path: the reason to log when `memo` proves that the event
/// keyed `key` answers nothing, `None` when the full path must run. Called
/// under the session lock. Reads the memo line by line, looking at each
/// path as it goes: no map, no allocation per path.
pub(crate) fn quiet(memo: &MemoRead, session_dir: &Utf8Path, key: &str) -> Option<String> {
    let (log, settings, lines) = parse(memo.0.as_deref()?)?;
    let (now_log, now_settings) = session_stamps(session_dir)?;
    if log != Some(now_log) || settings != now_settings {
        return None;
    }
    let mut why = None;
    for line in lines {
        match line? {
            Line::Key(k, w) if k == key => why = Some(w),
            Line::Key(..) => {}
            // The keys come first: a memo without this one is not read on.
            Line::Batch(_) => {
                why?;
            }
            Line::Path(how, stamp, path) => {
                why?;
                if look(Utf8Path::new(path), how).ok() != Some(stamp) {
                    return None;
                }
            }
        }
    }
    why.map(|w| format!("{w} (unchanged since a quiet event)"))
}

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

/// After a full path that answered nothing: writes the memo with `key`
/// (its event's `why`) and the stamps of everything `reads` recorded.
/// When the memo already there still holds whole and was written at this
/// state of the log, the key joins its keys; otherwise the new memo has
/// this key alone, but what of the old one still holds is not looked at
/// twice (a changed directory costs its own paths, not every known one).
/// Writes nothing when the log changed during the event or anything read
/// changed too recently to vouch. Called under the session lock; a failure
/// only costs the next event the full path, so it is not reported.
pub(crate) fn remember(
    session_dir: &Utf8Path,
    memo: MemoRead,
    (key, why): (String, &str),
    event: &HookEvent,
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
    let Some((fresh, batches)) = reads.stamps(start.t0, &old.paths, &changed, &old.batches) else {
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
    let before = (memo.paths.len(), memo.batches.len());
    memo.paths.extend(fresh);
    memo.batches.extend(batches);
    let known = memo.keys.iter().any(|(k, w)| *k == key && w == why);
    if known && (memo.paths.len(), memo.batches.len()) == before {
        return;
    }
    memo.keys.retain(|(k, _)| *k != key);
    memo.keys.push((key, why.to_owned()));
    if memo.keys.len() > MAX_KEYS {
        memo.keys.drain(..memo.keys.len() - MAX_KEYS);
    }
    let _ = side::write(
        &session_dir.join(MEMO_FILE_NAME),
        memo.encode().as_bytes(),
        Durability::Cache,
    );
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

/// One thing the composition asked of the filesystem.
#[derive(Debug)]
enum Read {
    /// A path probed, read or classified.
    Path(Utf8PathBuf),
    /// The same names probed in each of several directories.
    Batch(Vec<Utf8PathBuf>, Vec<String>),
    /// A directory listed.
    Listed(Utf8PathBuf),
    /// A root marker checked for existence only.
    Marker(Utf8PathBuf),
    /// An answer that depends on more than stamps show.
    Unvouched,
}

/// What the providers of one event were asked, shared by every provider
/// the [`Recorder`] opened.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reads(Arc<Mutex<Vec<Read>>>);

impl Reads {
    fn push(&self, read: Read) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(read);
    }

    fn push_paths(&self, paths: &[Utf8PathBuf]) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(paths.iter().cloned().map(Read::Path));
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
        &self,
        t0: SystemTime,
        held: &PathStamps,
        changed: &Changed,
        covered: &BTreeSet<String>,
    ) -> Option<(PathStamps, BTreeSet<String>)> {
        let reads = self.0.lock().unwrap_or_else(PoisonError::into_inner);
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

/// Whether an entry's stamp is a symbolic link's.
fn is_link(entry: Stamp) -> bool {
    entry.0[2] & 0o170_000 == 0o120_000
}

/// A [`ProviderFactory`] that opens what the wrapped one opens, each
/// provider wrapped to record what it is asked into [`Reads`].
pub(crate) struct Recorder {
    inner: Arc<dyn ProviderFactory>,
    reads: Reads,
}

impl Recorder {
    pub(crate) fn new(inner: Arc<dyn ProviderFactory>) -> Self {
        Self {
            inner,
            reads: Reads::default(),
        }
    }

    pub(crate) fn reads(&self) -> &Reads {
        &self.reads
    }

    fn wrap(&self, inner: Arc<dyn FsProvider>) -> Arc<dyn FsProvider> {
        Arc::new(Recording {
            inner,
            reads: self.reads.clone(),
        })
    }
}

impl ProviderFactory for Recorder {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.wrap(self.inner.marker_walker()?))
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.wrap(self.inner.open(trusted_roots)?))
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.wrap(self.inner.open_with_names(trusted_roots, dirs, names)?))
    }
}

/// A provider that forwards every method (keeping the wrapped provider's
/// batching) and records what it was asked.
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn FsProvider>,
    reads: Reads,
}

/// Whether a provider's reason depends on more than stamps show (a
/// permission, a loop, a timeout, an I/O failure): the memo is not written.
fn unvouched(reason: &Unavailable) -> bool {
    matches!(
        reason,
        Unavailable::PermissionDenied
            | Unavailable::Loop
            | Unavailable::TimedOut
            | Unavailable::Io(_)
    )
}

fn probe_unvouched(probe: &Probe) -> bool {
    matches!(probe, Probe::Unavailable(r) if unvouched(r))
}

fn read_unvouched(read: &ReadOutcome) -> bool {
    matches!(read, ReadOutcome::Unavailable(r) if unvouched(r))
}

impl Recording {
    fn check(&self, unvouched: bool) {
        if unvouched {
            self.reads.push(Read::Unvouched);
        }
    }
}

impl FsProvider for Recording {
    fn probe<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Probe, Cancelled>> {
        Box::pin(async move {
            self.reads.push(Read::Path(path.to_owned()));
            let probe = self.inner.probe(path, cancel).await?;
            self.check(probe_unvouched(&probe));
            Ok(probe)
        })
    }

    fn probe_many<'a>(
        &'a self,
        dir: &'a Utf8Path,
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        Box::pin(async move {
            self.reads
                .push(Read::Batch(vec![dir.to_owned()], names.to_vec()));
            let probes = self.inner.probe_many(dir, names, cancel).await?;
            self.check(probes.iter().any(probe_unvouched));
            Ok(probes)
        })
    }

    fn probe_dirs<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Vec<Probe>>, Cancelled>> {
        Box::pin(async move {
            self.reads.push(Read::Batch(dirs.to_vec(), names.to_vec()));
            let probes = self.inner.probe_dirs(dirs, names, cancel).await?;
            self.check(probes.iter().flatten().any(probe_unvouched));
            Ok(probes)
        })
    }

    fn probe_dirs_missing<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ProbedDirs, Cancelled>> {
        Box::pin(async move {
            self.reads.push(Read::Batch(dirs.to_vec(), names.to_vec()));
            let probed = self.inner.probe_dirs_missing(dirs, names, cancel).await?;
            self.check(probed.probes.iter().flatten().any(probe_unvouched));
            Ok(probed)
        })
    }

    fn probe_paths<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        Box::pin(async move {
            self.reads.push_paths(paths);
            let probes = self.inner.probe_paths(paths, cancel).await?;
            self.check(probes.iter().any(probe_unvouched));
            Ok(probes)
        })
    }

    fn markers_until_found<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<MarkerProbe>, Cancelled>> {
        Box::pin(async move {
            let found = self.inner.markers_until_found(paths, cancel).await?;
            for p in &paths[..found.len().min(paths.len())] {
                self.reads.push(Read::Marker(p.clone()));
            }
            self.check(found.iter().any(|m| matches!(m, MarkerProbe::Failed(_))));
            Ok(found)
        })
    }

    fn read_text<'a>(
        &'a self,
        path: &'a Utf8Path,
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>> {
        Box::pin(async move {
            self.reads.push(Read::Path(path.to_owned()));
            let read = self.inner.read_text(path, max_source_bytes, cancel).await?;
            self.check(read_unvouched(&read));
            Ok(read)
        })
    }

    fn read_many<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ReadOutcome>, Cancelled>> {
        Box::pin(async move {
            self.reads.push_paths(paths);
            let reads = self
                .inner
                .read_many(paths, max_source_bytes, cancel)
                .await?;
            self.check(reads.iter().any(read_unvouched));
            Ok(reads)
        })
    }

    fn path_kinds<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<PathKind>, Cancelled>> {
        Box::pin(async move {
            self.reads.push_paths(paths);
            let kinds = self.inner.path_kinds(paths, cancel).await?;
            self.check(
                kinds
                    .iter()
                    .any(|k| matches!(k, PathKind::Unavailable(r) if unvouched(r))),
            );
            Ok(kinds)
        })
    }

    fn list_dir<'a>(
        &'a self,
        dir: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DirListing, Cancelled>> {
        Box::pin(async move {
            self.reads.push(Read::Listed(dir.to_owned()));
            let listing = self.inner.list_dir(dir, cancel).await?;
            self.check(matches!(&listing, DirListing::Unavailable(r) if unvouched(r)));
            Ok(listing)
        })
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        Box::pin(async move {
            self.reads.push(Read::Marker(path.to_owned()));
            let found = self.inner.marker(path, cancel).await?;
            self.check(matches!(found, MarkerProbe::Failed(_)));
            Ok(found)
        })
    }
}

#[cfg(test)]
mod tests;
