//! The installer's own record, `$DSH_HOME/installer/<agent>.json` (earlier
//! versions: `$DSH_HOME/hooks/<agent>/install.json`, still read): what
//! each native-loading setting was before `install` changed it, so
//! `uninstall` can put it back (R-HOOK-5), and which files `install`
//! created, so `uninstall` can remove them again when they end up empty,
//! and per file its bytes before the first install with a digest of what
//! the last install wrote: a file nobody changed since gets exactly its
//! original bytes back (R-HOOK-10).
//! It lives outside the agents' files because none of the three documents a
//! key it promises to ignore.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::InstallError;
use crate::files;

/// Current layout version of `install.json`.
pub(crate) const VERSION: u32 = 1;

/// The record of one agent's installations (all scopes and projects).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct InstallState {
    /// Layout version.
    pub version: u32,
    /// Per settings file (absolute path): its native-loading setting.
    #[serde(default)]
    pub native: BTreeMap<String, NativeRecord>,
    /// Files `install` created (absolute paths).
    #[serde(default)]
    pub created: Vec<String>,
    /// Per file install changed (absolute path): its original bytes.
    #[serde(default)]
    pub files: BTreeMap<String, FileRecord>,
}

/// One file as it was before the first install, and who changed it since.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileRecord {
    /// Its text before the first install (`None`: it did not exist).
    pub original: Option<String>,
    /// SHA-256 (hex) of the text the last install left there.
    pub installed: String,
    /// The installations that changed it (`user`, `project:<dir>`): the
    /// original comes back only when the last of them is uninstalled.
    pub owners: Vec<String>,
}

/// The hex SHA-256 of a file's text (`None`: absent).
pub(crate) fn digest(text: Option<&str>) -> String {
    use sha2::Digest as _;
    match text {
        None => "absent".to_owned(),
        Some(t) => sha2::Sha256::digest(t.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    }
}

/// A native-loading setting as it was before the first install, and what
/// install set it to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct NativeRecord {
    /// The setting's dotted key (`claudeMdExcludes`, `context.fileName`,
    /// `project_doc_max_bytes`).
    pub key: String,
    /// Whether the key existed before.
    pub existed: bool,
    /// Its value before (`null` when it did not exist).
    pub prior: Value,
    /// The value install wrote.
    pub set: Value,
    /// Whether install created the key's parent object (`context`).
    #[serde(default)]
    pub created_parent: bool,
}

impl NativeRecord {
    /// The record of an install that set `key` to `set`: an earlier
    /// install's record (`prior`) kept, with the new value, so uninstall
    /// gives back what was there before the first; else what the key held
    /// (`cur`).
    pub(crate) fn of_set(
        key: &str,
        cur: Option<Value>,
        set: Value,
        created_parent: bool,
        prior: Option<&NativeRecord>,
    ) -> Self {
        match prior {
            Some(r) => NativeRecord { set, ..r.clone() },
            None => NativeRecord {
                key: key.to_owned(),
                existed: cur.is_some(),
                prior: cur.unwrap_or(Value::Null),
                set,
                created_parent,
            },
        }
    }
}

impl InstallState {
    /// Reads the record (`None` text: no record yet).
    pub(crate) fn parse(path: &Path, text: Option<&str>) -> Result<Self, InstallError> {
        match text {
            None => Ok(Self {
                version: VERSION,
                ..Self::default()
            }),
            Some(t) => serde_json::from_str(t).map_err(|e| InstallError::Malformed {
                path: path.to_owned(),
                problem: e.to_string(),
            }),
        }
    }

    /// Whether nothing is recorded any more.
    pub(crate) fn is_empty(&self) -> bool {
        self.native.is_empty() && self.created.is_empty() && self.files.is_empty()
    }

    /// The record as text.
    pub(crate) fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Remembers that `path` was created by install.
    pub(crate) fn mark_created(&mut self, path: &Path) {
        let p = path.to_string_lossy().into_owned();
        if !self.created.contains(&p) {
            self.created.push(p);
        }
    }

    /// Whether install created `path`.
    pub(crate) fn was_created(&self, path: &Path) -> bool {
        self.created.iter().any(|p| Path::new(p) == path)
    }

    /// Forgets that install created `path`.
    pub(crate) fn forget_created(&mut self, path: &Path) {
        self.created.retain(|p| Path::new(p) != path);
    }
}

/// Reads the record at `path`, or (when absent) at `legacy`, the layout of
/// earlier versions. Returns the text of each (for the run to remove the
/// legacy one once the record moved) and the record. A directory at the
/// legacy path — an old hook store for a session named `install.json` —
/// is not a record.
pub(crate) fn load(
    path: &Path,
    legacy: &Path,
) -> Result<(Option<String>, Option<String>, InstallState), InstallError> {
    let text = files::read_optional(path)?;
    let legacy_text = if legacy.is_dir() {
        None
    } else {
        files::read_optional(legacy)?
    };
    let state = match (&text, &legacy_text) {
        (Some(t), _) => InstallState::parse(path, Some(t))?,
        (None, Some(t)) => InstallState::parse(legacy, Some(t))?,
        (None, None) => InstallState::parse(path, None)?,
    };
    Ok((text, legacy_text, state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_including_a_null_prior() {
        let mut s = InstallState::parse(Path::new("x"), None).expect("empty");
        s.native.insert(
            "/h/.claude/settings.json".into(),
            NativeRecord {
                key: "claudeMdExcludes".into(),
                existed: true,
                prior: Value::Null,
                set: json!(["**/CLAUDE.md"]),
                created_parent: false,
            },
        );
        s.mark_created(Path::new("/h/.claude/settings.json"));
        s.files.insert(
            "/h/.claude/settings.json".into(),
            FileRecord {
                original: Some("{\"a\": \"\\u00e9\"}".into()),
                installed: digest(Some("x")),
                owners: vec!["user".into()],
            },
        );
        let back = InstallState::parse(Path::new("x"), Some(&s.render())).expect("parses");
        assert_eq!(back, s);
        assert!(back.was_created(Path::new("/h/.claude/settings.json")));
    }

    #[test]
    fn the_legacy_record_is_read_and_a_directory_there_is_none() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let new = tmp.path().join("installer/claude.json");
        let old = tmp.path().join("hooks/claude/install.json");
        std::fs::create_dir_all(old.parent().expect("p")).expect("mkdir");
        std::fs::write(&old, r#"{"version":1,"created":["/x"]}"#).expect("write");
        let (t, lt, s) = load(&new, &old).expect("loads");
        assert!(t.is_none() && lt.is_some());
        assert!(s.was_created(Path::new("/x")));
        std::fs::remove_file(&old).expect("rm");
        std::fs::create_dir_all(old.join("session")).expect("mkdir");
        let (_, lt, s) = load(&new, &old).expect("a directory is no record");
        assert!(lt.is_none() && s.is_empty());
    }

    #[test]
    fn malformed_record_is_an_error() {
        let e = InstallState::parse(Path::new("/d/install.json"), Some("{")).unwrap_err();
        assert!(
            e.to_string().starts_with("/d/install.json is malformed"),
            "{e}"
        );
    }
}
