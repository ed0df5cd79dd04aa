//! Cline CLI fires no event after it compacts its history (harness
//! `agents/cline.md`), and the `<hook_context>` messages the compaction
//! folds into its summary are gone from what the model sees. What it does
//! leave is its session's compaction file,
//! `<sessions>/<root id>/<root id>.compaction.json`, written at every
//! compaction: the adapter keeps the stamp it last saw beside its own log,
//! and an event that finds the stamp changed gives the complete baseline
//! again (decision 0089).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use camino::Utf8Path;

/// The side file beside the session's log holding the last stamp seen.
pub(crate) const STAMP_FILE_NAME: &str = "cline-compaction";

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
    let path = sessions
        .join(session_id)
        .join(format!("{session_id}.compaction.json"));
    let meta = std::fs::metadata(path).ok()?;
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
    let Some(now) = sessions.and_then(|s| stamp(s, session_id)) else {
        return (false, None);
    };
    let seen = std::fs::read_to_string(session_dir.join(STAMP_FILE_NAME)).ok();
    let changed = seen.is_some_and(|s| s.trim() != now) || (seen_none_but_logged(session_dir));
    (changed, Some(now))
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

    /// The first stamp is learnt; a new compaction is seen once; a session
    /// that never compacted, or an id that would leave the directory, is
    /// never compacted.
    #[test]
    fn a_compaction_is_seen_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let sessions = tmp.path().join("sessions");
        let session_dir =
            camino::Utf8PathBuf::from_path_buf(tmp.path().join("ours")).expect("utf-8");
        std::fs::create_dir_all(&session_dir).expect("mkdir");
        let id = "1796654980314_l5e1r";
        assert_eq!(compacted(Some(&sessions), id, &session_dir), (false, None));
        let file = sessions.join(id).join(format!("{id}.compaction.json"));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(&file, "{}").expect("write");
        let (changed, stamp) = compacted(Some(&sessions), id, &session_dir);
        assert!(!changed, "no log of ours yet: nothing delivered before it");
        remember(&session_dir, &stamp.expect("a stamp"));
        assert!(!compacted(Some(&sessions), id, &session_dir).0);
        std::fs::write(&file, "{\"again\": 1}").expect("write");
        let (changed, stamp) = compacted(Some(&sessions), id, &session_dir);
        assert!(changed);
        remember(&session_dir, &stamp.expect("a stamp"));
        assert!(!compacted(Some(&sessions), id, &session_dir).0, "seen once");
        assert!(!compacted(Some(&sessions), "../x", &session_dir).0);
    }

    /// A session delivered to before the adapter first saw a compaction
    /// file: the compaction happened since.
    #[test]
    fn a_first_compaction_after_a_delivery_is_seen() {
        let tmp = tempfile::tempdir().expect("tmp");
        let sessions = tmp.path().join("sessions");
        let session_dir =
            camino::Utf8PathBuf::from_path_buf(tmp.path().join("ours")).expect("utf-8");
        std::fs::create_dir_all(&session_dir).expect("mkdir");
        std::fs::write(session_dir.join(dsh_session_log::LOG_FILE_NAME), "").expect("log");
        let id = "s1";
        let file = sessions.join(id).join(format!("{id}.compaction.json"));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(&file, "{}").expect("write");
        assert!(compacted(Some(&sessions), id, &session_dir).0);
    }
}
