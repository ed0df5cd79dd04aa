//! Side files that heal (issue 34 item 1, decision 0046): what the
//! adapter rebuilds a hook session's settings from, the one line per
//! rebuilt file it writes to its own log, and what `hook doctor` says of
//! sessions whose side files are damaged.
//!
//! Every side file is read through [`dsh_session_log::side`], which tells a
//! damaged file from a missing one; each reader rebuilds its file from
//! what is authoritative — the log for the derived caches, the hook's
//! `config.json` ([`crate::config::load_config`]) for `settings.json` — and reports
//! it. The adapter drains those reports into `hook.log` after each event.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::DirMemory;
use dsh_instructions_session::{SETTINGS_FILE_NAME, SessionError, SessionSettings, SessionStore};
use dsh_instructions_session::{VERSIONS_FILE_NAME, VIEW_FILE_NAME};
use dsh_instructions_state::ConfigInput;
use dsh_session_log::side::{self, Found};
use dsh_session_log::{CHECKPOINT_FILE_NAME, LOCK_FILE_NAME, LOG_FILE_NAME};

use crate::deferred::DEFERRED_FILE_NAME;
use crate::dirstamps::DIR_STAMPS_FILE_NAME;
use crate::record::RECORDS_FILE_NAME;

/// The settings of hook session `id`: as created, or, when `settings.json`
/// is damaged, rebuilt from the hook's configuration `input` — what every
/// hook session is created with (R-HOOK-2; its trusted roots are always
/// none). Called under the session lock. When the configuration changed
/// since the session began, the rebuilt settings give another baseline
/// identity and the runtime answers the next event with a replacement
/// baseline (R-RT-7) instead of going silent.
pub(crate) fn settings(
    store: &SessionStore,
    id: &str,
    input: &ConfigInput,
) -> Result<SessionSettings, SessionError> {
    let authority = SessionSettings {
        config: Some(input.clone()),
        trust: Vec::new(),
    };
    store.settings_or_rebuild(id, &authority, |s| s.config.is_some())
}

/// The hook-log lines for the side files this process found damaged and
/// rebuilt, each naming the file below `agent_dir`, what was wrong and
/// what it was rebuilt from; the reports are taken.
pub(crate) fn report_lines(agent_dir: &Utf8Path) -> Vec<String> {
    side::take_reports()
        .into_iter()
        .map(|r| {
            let file = r.path.strip_prefix(agent_dir).unwrap_or(&r.path);
            format!("heal {file}: {}; {}", r.damage, r.rebuilt)
        })
        .collect()
}

/// What `hook doctor` says about the hook sessions under `sessions_dir`
/// (an agent's [`crate::agents::sessions_dir`]; the installer's doctor prints it): one
/// line per damaged side file (which the session's next event rebuilds)
/// and per session keeping damaged copies set aside. Writes nothing.
pub fn doctor_notes(sessions_dir: &Utf8Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<Utf8PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| Utf8PathBuf::from_path_buf(e.path()).ok())
        .filter(|d| d.join(LOG_FILE_NAME).is_file())
        .collect();
    dirs.sort();
    let mut notes = Vec::new();
    for dir in dirs {
        let id = dir.file_name().unwrap_or("?");
        for (file, damage) in damaged_side_files(&dir) {
            notes.push(format!(
                "session {id}: {file} is damaged ({damage}); its next event rebuilds it"
            ));
        }
        let aside = std::fs::read_dir(&dir).map_or(0, |e| {
            e.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(side::is_set_aside))
                .count()
        });
        if aside > 0 {
            notes.push(format!(
                "session {id}: {aside} damaged side files were set aside in {dir} (safe to delete)"
            ));
        }
    }
    notes
}

/// The damaged side files of the session in `dir`, with what is wrong, by
/// the readers' own judgement (decision 0046).
pub(crate) fn damaged_side_files(dir: &Utf8Path) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // A missing settings file is damage too: every session has one.
    match side::read(&dir.join(SETTINGS_FILE_NAME)) {
        Found::Missing => out.push((SETTINGS_FILE_NAME, "missing".to_owned())),
        Found::Damaged(d) => out.push((SETTINGS_FILE_NAME, d)),
        Found::Bytes(b) => {
            let ok = b.trim_ascii_start().starts_with(b"{")
                && serde_json::from_slice::<SessionSettings>(&b).is_ok_and(|s| s.config.is_some());
            if !ok {
                out.push((
                    SETTINGS_FILE_NAME,
                    "not a hook session's settings".to_owned(),
                ));
            }
        }
    }
    let formats = [
        (CHECKPOINT_FILE_NAME, Some("dsh-session-checkpoint")),
        (VIEW_FILE_NAME, Some("dsh-session-view")),
        (VERSIONS_FILE_NAME, Some("dsh-session-versions")),
        (RECORDS_FILE_NAME, None),
    ];
    for (name, format) in formats {
        match side::read(&dir.join(name)) {
            Found::Missing => {}
            Found::Damaged(d) => out.push((name, d)),
            Found::Bytes(b) => {
                let v = serde_json::from_slice::<serde_json::Value>(&b).ok();
                let ok = match (format, &v) {
                    (Some(f), Some(v)) => v.get("format").and_then(|x| x.as_str()) == Some(f),
                    (None, Some(v)) => v.get("records").is_some_and(serde_json::Value::is_array),
                    (_, None) => false,
                };
                if !ok {
                    out.push((name, "not of its format".to_owned()));
                }
            }
        }
    }
    match side::read(&dir.join(DIR_STAMPS_FILE_NAME)) {
        Found::Missing => {}
        Found::Damaged(d) => out.push((DIR_STAMPS_FILE_NAME, d)),
        Found::Bytes(b) => {
            let decoded = DirMemory::decode(&b);
            if !b.ends_with(b"\n") || (decoded.is_empty() && b != DirMemory::new().encode()) {
                out.push((DIR_STAMPS_FILE_NAME, "not directory stamps".to_owned()));
            }
        }
    }
    if let Some(damage) = crate::quiet::damage(dir) {
        out.push((crate::quiet::MEMO_FILE_NAME, damage));
    }
    for name in [LOCK_FILE_NAME, DEFERRED_FILE_NAME] {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            if let Found::Damaged(d) = side::read(&path) {
                out.push((name, d));
            } else {
                out.push((name, "not a regular file".to_owned()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctor_names_each_damaged_file_of_a_session() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = Utf8Path::from_path(tmp.path()).expect("utf-8");
        let store = SessionStore::new(root);
        let settings = SessionSettings {
            config: Some(ConfigInput::default()),
            trust: Vec::new(),
        };
        drop(store.create("ok", "/w".into(), &settings).expect("create"));
        drop(store.create("bad", "/w".into(), &settings).expect("create"));
        assert!(doctor_notes(root).is_empty(), "{:?}", doctor_notes(root));
        std::fs::write(root.join("bad").join(SETTINGS_FILE_NAME), "{\"con").expect("w");
        std::fs::write(root.join("bad").join(VIEW_FILE_NAME), "[1]").expect("w");
        std::fs::write(root.join("bad").join(crate::quiet::MEMO_FILE_NAME), "memo?").expect("w");
        std::fs::remove_file(root.join("bad").join(LOCK_FILE_NAME)).expect("rm");
        std::fs::create_dir(root.join("bad").join(LOCK_FILE_NAME)).expect("mkdir");
        let notes = doctor_notes(root);
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(
            notes.iter().all(|n| n.starts_with("session bad: ")),
            "{notes:?}"
        );
        for f in [
            SETTINGS_FILE_NAME,
            VIEW_FILE_NAME,
            LOCK_FILE_NAME,
            crate::quiet::MEMO_FILE_NAME,
        ] {
            assert!(notes.iter().any(|n| n.contains(f)), "{f}: {notes:?}");
        }
    }
}
