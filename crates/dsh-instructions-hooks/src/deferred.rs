//! Touches of invocations that could not get their session's lock within
//! the bound (R-LOG-4): instead of being lost, they wait in
//! `deferred.jsonl` beside the log and the next invocation that holds the
//! lock reconciles them with its own event, so their files reach the model
//! one event later rather than never (R-HOOK-8, issue 18 item 6).
//!
//! The file has its own short lock (std `File::lock`, held only while one
//! line is appended or the file is drained), so an appender never waits
//! for the session lock and a drain never misses a line appended during it.

use std::fs::OpenOptions;
use std::io::{Read as _, Seek as _, Write as _};

use camino::Utf8Path;
use dsh_instructions_runtime::TouchKind;
use dsh_instructions_runtime::tool_args::TouchedPath;
use dsh_instructions_session::{Record, Session, SessionError};
use serde::{Deserialize, Serialize};

/// File name beside `session.jsonl`.
pub(crate) const DEFERRED_FILE_NAME: &str = "deferred.jsonl";

/// A deferred touch as one line of the file.
#[derive(Serialize, Deserialize)]
struct Line {
    path: String,
    /// [`TouchKind::as_str`].
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
}

impl Line {
    fn of(d: &TouchedPath) -> Self {
        Self {
            path: d.path.clone(),
            kind: d.kind.as_str().to_owned(),
            command: match &d.kind {
                TouchKind::Shell { command } => Some(command.clone()),
                _ => None,
            },
        }
    }

    fn deferred(self) -> Option<TouchedPath> {
        let kind = match self.kind.as_str() {
            "read" => TouchKind::Read,
            "write" => TouchKind::Write,
            "list" => TouchKind::List,
            "search" => TouchKind::Search,
            "shell" => TouchKind::Shell {
                command: self.command?,
            },
            _ => return None,
        };
        Some(TouchedPath {
            path: self.path,
            kind,
        })
    }
}

/// Appends `items` to the session's deferred touches (one write).
pub(crate) fn push(session_dir: &Utf8Path, items: &[TouchedPath]) -> std::io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(&Line::of(item)).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    std::fs::create_dir_all(session_dir)?;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(session_dir.join(DEFERRED_FILE_NAME))?;
    file.lock()?;
    file.write_all(text.as_bytes())
}

/// Takes every deferred touch of the session, leaving the file empty. A
/// line that does not parse (a torn write of a killed appender) is skipped.
pub(crate) fn take(session_dir: &Utf8Path) -> std::io::Result<Vec<TouchedPath>> {
    let path = session_dir.join(DEFERRED_FILE_NAME);
    let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(f) => f,
        Err(e) => {
            // Something unusable in its place (a directory, a dangling
            // link, no permission): its touches are lost either way; clear
            // the place so the next busy event can defer again.
            use dsh_session_log::side::{self, Found};
            if let Found::Damaged(damage) = side::read(&path) {
                let _ = side::discard(&path);
                side::report(&path, &damage, "removed; its deferred touches are lost");
                return Ok(Vec::new());
            }
            if e.kind() == std::io::ErrorKind::NotFound {
                return Ok(Vec::new());
            }
            return Err(e);
        }
    };
    file.lock()?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    file.set_len(0)?;
    file.rewind()?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok()?.deferred())
        .collect())
}

/// Reconciles the touches earlier invocations deferred while the session
/// was busy; returns how many. With [`Record::Keep`], they are kept in the
/// log as the event's own would be (Gemini CLI).
pub(crate) async fn apply_deferred(
    session: &Session,
    session_dir: &Utf8Path,
    record: Record,
) -> Result<usize, SessionError> {
    // Unreadable: the touches are as lost as without the file; the event
    // itself still goes on.
    let Ok(items) = take(session_dir) else {
        return Ok(0);
    };
    for item in &items {
        session
            .touch(Utf8Path::new(&item.path), item.kind.clone(), record)
            .await?;
    }
    Ok(items.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, camino::Utf8PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = camino::Utf8PathBuf::from_path_buf(tmp.path().join("s")).expect("utf-8");
        (tmp, dir)
    }

    #[test]
    fn pushed_touches_are_taken_once_in_order() {
        let (_tmp, dir) = dir();
        assert!(take(&dir).expect("nothing yet").is_empty());
        let a = TouchedPath {
            path: "/w/a/f.rs".into(),
            kind: TouchKind::Read,
        };
        let b = TouchedPath {
            path: "/w".into(),
            kind: TouchKind::Shell {
                command: "cat b/x".into(),
            },
        };
        push(&dir, std::slice::from_ref(&a)).expect("push");
        push(&dir, std::slice::from_ref(&b)).expect("push");
        assert_eq!(take(&dir).expect("take"), [a.clone(), b]);
        assert!(take(&dir).expect("again").is_empty(), "taken once");
        push(&dir, std::slice::from_ref(&a)).expect("push after a take");
        assert_eq!(take(&dir).expect("take"), [a]);
    }

    #[test]
    fn a_torn_line_is_skipped_alone() {
        let (_tmp, dir) = dir();
        let a = TouchedPath {
            path: "/w/a".into(),
            kind: TouchKind::List,
        };
        push(&dir, std::slice::from_ref(&a)).expect("push");
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(DEFERRED_FILE_NAME))
            .expect("open");
        f.write_all(b"{\"path\":\"/w/b\",\"kind\":\"sea")
            .expect("torn");
        assert_eq!(take(&dir).expect("take"), [a]);
    }

    /// Appenders racing a drain: every line is taken exactly once.
    #[test]
    fn concurrent_pushes_and_takes_lose_nothing() {
        let (_tmp, dir) = dir();
        std::fs::create_dir_all(&dir).expect("dir");
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let item = TouchedPath {
                            path: format!("/w/{w}/{i}"),
                            kind: TouchKind::Write,
                        };
                        push(&dir, &[item]).expect("push");
                    }
                })
            })
            .collect();
        let mut taken = Vec::new();
        while writers.iter().any(|w| !w.is_finished()) {
            taken.extend(take(&dir).expect("take"));
        }
        for w in writers {
            w.join().expect("writer");
        }
        taken.extend(take(&dir).expect("last take"));
        let mut paths: Vec<String> = taken.into_iter().map(|d| d.path).collect();
        paths.sort();
        let before = paths.len();
        paths.dedup();
        assert_eq!((before, paths.len()), (800, 800));
    }
}
