//! The fast path: a memo read under the session lock, and the answer it
//! proves from stamps alone ([`quiet`]); its damage, for `hook doctor`.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_session::SETTINGS_FILE_NAME;
use dsh_session_log::side::{self, Found};

use super::MEMO_FILE_NAME;
use super::format::{Line, Memo, body, parse};
use dsh_instructions_runtime::tool_args::TouchedPath;

use super::key::Key;
use super::stamp::{Look, Stamp, is_absent, look};

pub(super) fn log_path(session_dir: &Utf8Path) -> Utf8PathBuf {
    session_dir.join(dsh_session_log::LOG_FILE_NAME)
}

/// The session's own files as they stand: the log and the settings.
pub(super) fn session_stamps(session_dir: &Utf8Path) -> Option<(Stamp, Option<Stamp>)> {
    let log = look(&log_path(session_dir), Look::Entry).ok()?;
    let settings = match look(&session_dir.join(SETTINGS_FILE_NAME), Look::Entry) {
        Ok(s) => Some(s),
        Err(e) if is_absent(&e) => None,
        Err(_) => return None,
    };
    Some((log, settings))
}

/// The memo of a session as this event read it, under the session lock
/// (so it cannot change before [`super::remember()`] writes it again).
#[derive(Debug)]
pub(crate) struct MemoRead(pub(super) Option<Vec<u8>>);

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
    pub(super) fn decode(self, session_dir: &Utf8Path) -> Option<Memo> {
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
/// keyed `key` answers nothing — its own key is in the memo, or its claim
/// is and its `touches` (a tool event's) reach only the memo's known
/// directories (decision 0085) — `None` when the full path must run. Called under the session
/// lock. Reads the memo line by line, looking at each path as it goes: no
/// map, no allocation per path.
pub(crate) fn quiet(
    memo: &MemoRead,
    session_dir: &Utf8Path,
    key: &Key,
    touches: Option<&[TouchedPath]>,
) -> Option<String> {
    let (log, settings, lines) = parse(memo.0.as_deref()?)?;
    let (now_log, now_settings) = session_stamps(session_dir)?;
    if log != Some(now_log) || settings != now_settings {
        return None;
    }
    let mut cwd = None;
    let (mut why, mut claimed) = (None, None);
    // The directories the claim needs known, each with whether its `k`
    // line was seen; computed once the keys are read.
    let mut needed: Option<Vec<(Utf8PathBuf, bool)>> = None;
    for line in lines {
        let line = line?;
        match line {
            Line::Cwd(c) => cwd = Some(c),
            Line::Key(k, w) if k == key.exact => why = Some(w),
            Line::Claim(k, w) if k == key.claim && touches.is_some() => claimed = Some(w),
            Line::Key(..) | Line::Claim(..) => {}
            Line::Batch(_) | Line::Path(..) => {
                // The keys come first: a memo that proves nothing for this
                // event is not read on.
                if needed.is_none() {
                    needed = Some(match why {
                        Some(_) => Vec::new(),
                        None => reached(touches, cwd, claimed)?,
                    });
                }
                if let Line::Path(how, stamp, path, known) = line {
                    (look(Utf8Path::new(path), how).ok() == Some(stamp)).then_some(())?;
                    if known && let Some(needed) = needed.as_mut() {
                        for (dir, seen) in needed.iter_mut() {
                            *seen |= dir.as_str() == path;
                        }
                    }
                }
            }
        }
    }
    if let Some(why) = why {
        return Some(format!("{why} (unchanged since a quiet event)"));
    }
    let needed = match needed {
        Some(n) => n,
        None => reached(touches, cwd, claimed)?,
    };
    let known = needed.iter().all(|(_, seen)| *seen);
    claimed
        .filter(|_| known)
        .map(|why| format!("{why} (unchanged since a quiet event)"))
}

/// The directories the claimed touches reach, read against the memo's
/// cwd; `None` when there is no claim for them or one of them is a shell
/// touch.
fn reached(
    touches: Option<&[TouchedPath]>,
    cwd: Option<&str>,
    claimed: Option<&str>,
) -> Option<Vec<(Utf8PathBuf, bool)>> {
    claimed?;
    let cwd = Utf8Path::new(cwd?);
    let mut out = Vec::new();
    for t in touches? {
        out.extend(t.reaches(cwd)?.into_iter().map(|d| (d, false)));
    }
    Some(out)
}
