//! The session's remembered file versions (decision 0036): the settled part
//! of the last loop instance's version cache, in `versions.json` next to the
//! log, so the next process over the same session probes a known file
//! instead of reading and hashing it again (R-HOOK-6, R-LOG-5).
//!
//! Derived and disposable, like the log's checkpoint: a missing, unreadable
//! or other-format file is an empty cache (every known file is read once
//! more); it never decides what the model sees, because the runtime skips a
//! read only when the probed version *and* the visible digest both match
//! (R-STATE-8). A damaged one (unusable, or bytes that are not versions)
//! is also removed and reported ([`dsh_session_log::side`]). Written with
//! [`dsh_session_log::side::write`] by the lock holder, as a cache (not
//! fsync'd); never instruction text.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::provider::FileVersion;
use dsh_instructions_state::{Digest, ScopeKey, cache::CacheEntry};
use dsh_session_log::side::{self, Durability, Found};
use serde::{Deserialize, Serialize};

/// File name of the remembered versions, beside `session.jsonl`.
pub const VERSIONS_FILE_NAME: &str = "versions.json";

const FORMAT: &str = "dsh-session-versions";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct File {
    format: String,
    version: u32,
    entries: Vec<Entry>,
}

/// One scope's remembered read: compact, one line per scope.
#[derive(Serialize, Deserialize)]
struct Entry {
    /// [`ScopeKey::as_str`].
    scope: String,
    path: String,
    /// [`FileVersion::words`] of a settled version.
    words: [u64; 4],
    digest: String,
    trimmed: String,
}

/// Where `log_path`'s session keeps its versions.
pub(crate) fn path_for(log_path: &Utf8Path) -> Utf8PathBuf {
    log_path.with_file_name(VERSIONS_FILE_NAME)
}

/// The remembered versions at `path`; empty when there are none or they
/// cannot be read (they are only an acceleration).
pub(crate) fn load(path: &Utf8Path) -> Vec<(ScopeKey, CacheEntry<FileVersion>)> {
    let Some(file) = side::load_json::<File>(
        path,
        "remembered versions",
        "removed; known files are read again",
    ) else {
        return Vec::new();
    };
    if file.format != FORMAT || file.version != VERSION {
        return Vec::new();
    }
    file.entries
        .into_iter()
        .filter_map(|e| {
            Some((
                ScopeKey::parse(&e.scope)?,
                CacheEntry {
                    path: e.path,
                    version: FileVersion::settled(e.words),
                    digest: Digest::from_hex(&e.digest)?,
                    trimmed_digest: Digest::from_hex(&e.trimmed)?,
                    imports: Vec::new(),
                },
            ))
        })
        .collect()
}

/// Replaces the versions at `path` atomically; a failure leaves the old file
/// (or none), which is only slower.
pub(crate) fn store(
    path: &Utf8Path,
    entries: &[(ScopeKey, CacheEntry<FileVersion>)],
) -> std::io::Result<()> {
    let file = File {
        format: FORMAT.into(),
        version: VERSION,
        entries: entries
            .iter()
            .map(|(scope, e)| Entry {
                scope: scope.as_str().to_owned(),
                path: e.path.clone(),
                words: e.version.words(),
                digest: e.digest.to_hex(),
                trimmed: e.trimmed_digest.to_hex(),
            })
            .collect(),
    };
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    side::write(path, &bytes, Durability::Cache)
}

/// Forgets what a session remembers, so its next loop instance starts with
/// an empty version cache, as R-STATE-8 says of a resume. `session_dir` is
/// the directory holding its `session.jsonl`.
///
/// # Errors
/// When an existing file cannot be removed.
pub fn forget_versions(session_dir: &Utf8Path) -> std::io::Result<()> {
    let path = session_dir.join(VERSIONS_FILE_NAME);
    if let Found::Damaged(damage) = side::read(&path) {
        side::report(&path, &damage, "removed; known files are read again");
    }
    side::discard(&path).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn entry(n: u64) -> (ScopeKey, CacheEntry<FileVersion>) {
        (
            ScopeKey::project(&format!("d{n}"), "base"),
            CacheEntry {
                path: format!("d{n}/AGENTS.md"),
                version: FileVersion::settled([n, 2, 3, 4]),
                digest: Digest::of(&format!("text {n}")),
                trimmed_digest: Digest::of(&format!("trimmed {n}")),
                imports: Vec::new(),
            },
        )
    }

    #[test]
    fn stored_versions_read_back_the_same() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join(VERSIONS_FILE_NAME);
        let entries: Vec<_> = (0..3).map(entry).collect();
        store(&path, &entries).expect("store");
        let back = load(&path);
        assert_eq!(back, entries);
        assert!(back.iter().all(|(_, e)| e.version.is_settled()));
        forget_versions(path.parent().expect("dir")).expect("forget");
        assert!(load(&path).is_empty());
        forget_versions(path.parent().expect("dir")).expect("forgetting nothing is fine");
    }

    /// Anything but this format is an empty cache, never an error.
    #[rstest]
    #[case::garbage("not json")]
    #[case::other_format(r#"{"format":"x","version":1,"entries":[]}"#)]
    #[case::other_version(r#"{"format":"dsh-session-versions","version":2,"entries":[]}"#)]
    #[case::truncated(r#"{"format":"dsh-session-versions","version":1,"entries":[{"sco"#)]
    fn unreadable_versions_are_an_empty_cache(#[case] text: &str) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join(VERSIONS_FILE_NAME);
        std::fs::write(&path, text).expect("write");
        assert!(load(&path).is_empty());
    }

    /// An entry with a bad digest or scope is dropped alone.
    #[test]
    fn a_bad_entry_is_dropped_alone() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join(VERSIONS_FILE_NAME);
        store(&path, &[entry(1)]).expect("store");
        let text = std::fs::read_to_string(&path).expect("read");
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
        let good = v["entries"][0].clone();
        let mut bad = good.clone();
        bad["digest"] = "zz".into();
        v["entries"] = serde_json::json!([bad, good]);
        std::fs::write(&path, v.to_string()).expect("write");
        assert_eq!(load(&path), vec![entry(1)]);
    }
}
