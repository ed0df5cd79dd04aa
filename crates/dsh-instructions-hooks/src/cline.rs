//! Cline CLI fires no event after it compacts its history (harness
//! `agents/cline.md`), and the `<hook_context>` messages the compaction
//! folds into its summary are gone from what the model sees. What it does
//! leave is its session's compaction file,
//! `<sessions>/<root id>/<root id>.compaction.json`, written at every
//! compaction: the adapter keeps the stamp it last saw beside its own log.
//! Cline's compaction keeps some messages verbatim (a hook context right
//! after a folded tool result survived, measured), so a changed stamp is
//! checked against the compacted view the file holds: only when one of the
//! adapter's answers is no longer in it does the event give the complete
//! baseline again (decision 0089).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use camino::Utf8Path;

/// The side file beside the session's log holding the last stamp seen.
pub(crate) const STAMP_FILE_NAME: &str = "cline-compaction";

/// The side file holding a fingerprint of each answer given since the last
/// compaction, one JSON string a line.
pub(crate) const GIVEN_FILE_NAME: &str = "cline-given.jsonl";

/// How much of an answer's text its fingerprint keeps: enough to tell the
/// answers of a session apart (their first section header is in it).
const FINGERPRINT_CHARS: usize = 400;

/// The fingerprint of an answer: its trimmed start, as Cline puts it into
/// its `<hook_context>` (it trims the text).
fn fingerprint(text: &str) -> String {
    text.trim().chars().take(FINGERPRINT_CHARS).collect()
}

/// Notes an answer given (a failed write only means a later compaction
/// that kept it gives the baseline once more).
pub(crate) fn given(session_dir: &Utf8Path, text: &str) {
    use std::io::Write as _;
    let Ok(line) = serde_json::to_string(&fingerprint(text)) else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(session_dir.join(GIVEN_FILE_NAME))
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Whether every answer noted since the last compaction is still in the
/// compacted view `compaction` (the file's text, JSON-escaped as Cline
/// wrote it); no answer noted is nothing lost.
fn all_kept(session_dir: &Utf8Path, compaction: &str) -> bool {
    let Ok(view) = serde_json::from_str::<serde_json::Value>(compaction) else {
        return false;
    };
    let mut texts = String::new();
    for m in view["messages"].as_array().into_iter().flatten() {
        match &m["content"] {
            serde_json::Value::String(s) => texts.push_str(s),
            serde_json::Value::Array(parts) => {
                for p in parts {
                    texts.push_str(p["text"].as_str().unwrap_or(""));
                }
            }
            _ => {}
        }
        texts.push('\n');
    }
    // A line that does not parse (torn, garbage) names an answer that may
    // be gone: a loss, so the baseline comes again rather than too little.
    std::fs::read_to_string(session_dir.join(GIVEN_FILE_NAME))
        .unwrap_or_default()
        .lines()
        .all(|l| serde_json::from_str::<String>(l).is_ok_and(|fp| texts.contains(&fp)))
}

/// Cline's sessions directory, as Cline resolves it:
/// `$CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`, else
/// `$CLINE_DIR/data/sessions`, else `~/.cline/data/sessions` (read in
/// `@cline/shared` 0.0.86). `var` reads the environment; `home` is the
/// user's home.
pub(crate) fn sessions_dir(
    var: impl Fn(&str) -> Option<OsString>,
    home: Option<&std::path::Path>,
) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.to_string_lossy().trim().is_empty());
    if let Some(d) = set("CLINE_SESSION_DATA_DIR") {
        return Some(d.into());
    }
    let data = match set("CLINE_DATA_DIR") {
        Some(d) => PathBuf::from(d),
        None => match set("CLINE_DIR") {
            Some(d) => PathBuf::from(d).join("data"),
            None => home?.join(".cline").join("data"),
        },
    };
    Some(data.join("sessions"))
}

/// The compaction file's stamp (modification time in nanoseconds and
/// length), `None` when there is none (the session never compacted).
fn stamp(sessions: &std::path::Path, session_id: &str) -> Option<String> {
    // A session id that could leave the directory names no file of Cline's.
    if session_id.is_empty()
        || session_id.contains(['/', '\\', '\0'])
        || session_id.starts_with('.')
    {
        return None;
    }
    let meta = std::fs::metadata(compaction_path(sessions, session_id)).ok()?;
    let nanos = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(format!("{nanos} {}", meta.len()))
}

/// Whether Cline compacted the session since the adapter last looked, and
/// the stamp to [`remember`] once the event is handled. The first look at
/// a session only learns the stamp: a new session of the adapter gives the
/// baseline anyway.
pub(crate) fn compacted(
    sessions: Option<&std::path::Path>,
    session_id: &str,
    session_dir: &Utf8Path,
) -> (bool, Option<String>) {
    let Some(sessions) = sessions else {
        return (false, None);
    };
    let Some(now) = stamp(sessions, session_id) else {
        return (false, None);
    };
    let seen = std::fs::read_to_string(session_dir.join(STAMP_FILE_NAME)).ok();
    let changed = seen.is_some_and(|s| s.trim() != now) || seen_none_but_logged(session_dir);
    if !changed {
        return (false, Some(now));
    }
    let view = std::fs::read_to_string(compaction_path(sessions, session_id)).unwrap_or_default();
    let lost = !all_kept(session_dir, &view);
    if lost {
        // The complete baseline this event gives is noted anew; what the
        // view kept stays noted otherwise, for the next compaction to check.
        let _ = std::fs::remove_file(session_dir.join(GIVEN_FILE_NAME));
    }
    (lost, Some(now))
}

fn compaction_path(sessions: &std::path::Path, session_id: &str) -> PathBuf {
    sessions
        .join(session_id)
        .join(format!("{session_id}.compaction.json"))
}

/// A session the adapter has a log of but no stamp for: it delivered
/// before the first compaction, which has happened since.
fn seen_none_but_logged(session_dir: &Utf8Path) -> bool {
    !session_dir.join(STAMP_FILE_NAME).exists()
        && session_dir.join(dsh_session_log::LOG_FILE_NAME).exists()
}

/// Keeps the stamp for the next event (a failed write only means the next
/// event gives the baseline once more).
pub(crate) fn remember(session_dir: &Utf8Path, stamp: &str) {
    let _ = std::fs::write(session_dir.join(STAMP_FILE_NAME), stamp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(&[], Some("/h/.cline/data/sessions"))]
    #[case(&[("CLINE_DIR", "/c")], Some("/c/data/sessions"))]
    #[case(&[("CLINE_DIR", "/c"), ("CLINE_DATA_DIR", "/d")], Some("/d/sessions"))]
    #[case(&[("CLINE_DATA_DIR", "/d"), ("CLINE_SESSION_DATA_DIR", "/s")], Some("/s"))]
    #[case(&[("CLINE_DIR", "  ")], Some("/h/.cline/data/sessions"))]
    fn the_sessions_directory_is_cline_s(
        #[case] vars: &[(&str, &str)],
        #[case] want: Option<&str>,
    ) {
        let var = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        };
        assert_eq!(
            sessions_dir(var, Some(std::path::Path::new("/h"))),
            want.map(PathBuf::from)
        );
        assert_eq!(sessions_dir(|_| None, None), None);
    }

    fn view(texts: &[&str]) -> String {
        let messages: Vec<serde_json::Value> = texts
            .iter()
            .map(|t| serde_json::json!({"role": "user", "content": [{"type": "text", "text": t}]}))
            .collect();
        serde_json::json!({"version": 1, "messages": messages}).to_string()
    }

    /// The first stamp is learnt; a compaction whose view lost an answer
    /// is seen once; one whose view kept every answer is no loss; a session
    /// that never compacted, or an id that would leave the directory, is
    /// never compacted.
    #[test]
    fn a_compaction_that_lost_an_answer_is_seen_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let sessions = tmp.path().join("sessions");
        let session_dir =
            camino::Utf8PathBuf::from_path_buf(tmp.path().join("ours")).expect("utf-8");
        std::fs::create_dir_all(&session_dir).expect("mkdir");
        let id = "1796654980314_l5e1r";
        assert_eq!(compacted(Some(&sessions), id, &session_dir), (false, None));
        let file = sessions.join(id).join(format!("{id}.compaction.json"));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(&file, view(&["Context summary: x"])).expect("write");
        let (changed, stamp) = compacted(Some(&sessions), id, &session_dir);
        assert!(!changed, "no log of ours yet: nothing given before it");
        remember(&session_dir, &stamp.expect("a stamp"));
        assert!(!compacted(Some(&sessions), id, &session_dir).0);
        given(&session_dir, "  BASELINE answer text\nsecond line\n");
        given(&session_dir, "UPDATE answer text");
        // Both kept, inside Cline's wrapper: no loss.
        let kept = view(&[
            "Context summary: x",
            "<hook_context source=\"PreToolUse\">\nBASELINE answer text\nsecond line\n</hook_context>",
            "<hook_context source=\"PostToolUse\">\nUPDATE answer text\n</hook_context>",
        ]);
        std::fs::write(&file, &kept).expect("write");
        let (changed, stamp) = compacted(Some(&sessions), id, &session_dir);
        assert!(!changed, "every answer kept");
        remember(&session_dir, &stamp.expect("a stamp"));
        // The baseline folded into the summary: lost, seen once.
        std::fs::write(&file, view(&["Context summary: y", "UPDATE answer text"])).expect("write");
        let (changed, stamp) = compacted(Some(&sessions), id, &session_dir);
        assert!(changed);
        remember(&session_dir, &stamp.expect("a stamp"));
        assert!(!compacted(Some(&sessions), id, &session_dir).0, "seen once");
        assert!(!compacted(Some(&sessions), "../x", &session_dir).0);
        // A view that does not parse is a loss.
        given(&session_dir, "NEW BASELINE");
        std::fs::write(&file, "not json at all").expect("write");
        let (changed, stamp) = compacted(Some(&sessions), id, &session_dir);
        assert!(changed);
        remember(&session_dir, &stamp.expect("a stamp"));
        // A damaged note of what was given is a loss too, even when the
        // view keeps the one answer that still reads.
        given(&session_dir, "KEPT answer");
        let mut notes = std::fs::read_to_string(session_dir.join(GIVEN_FILE_NAME)).expect("notes");
        notes.push_str("\"torn, never closed\n");
        std::fs::write(session_dir.join(GIVEN_FILE_NAME), notes).expect("damage");
        std::fs::write(&file, view(&["Context summary: z", "KEPT answer"])).expect("write");
        assert!(
            compacted(Some(&sessions), id, &session_dir).0,
            "a damaged note is a loss"
        );
    }

    /// A session given an answer before the adapter first saw a compaction
    /// file: the compaction happened since, and its view lost the answer.
    #[test]
    fn a_first_compaction_after_a_delivery_is_seen() {
        let tmp = tempfile::tempdir().expect("tmp");
        let sessions = tmp.path().join("sessions");
        let session_dir =
            camino::Utf8PathBuf::from_path_buf(tmp.path().join("ours")).expect("utf-8");
        std::fs::create_dir_all(&session_dir).expect("mkdir");
        std::fs::write(session_dir.join(dsh_session_log::LOG_FILE_NAME), "").expect("log");
        given(&session_dir, "BASELINE before any compaction");
        let id = "s1";
        let file = sessions.join(id).join(format!("{id}.compaction.json"));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(&file, "{}").expect("write");
        assert!(compacted(Some(&sessions), id, &session_dir).0);
    }
}
