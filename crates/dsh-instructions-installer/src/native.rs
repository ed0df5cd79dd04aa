//! Switching each agent's own instruction loading off, and back (R-HOOK-5).
//! Measured in the harness (README, "Switching each agent's own instruction
//! loading off"):
//! - Claude Code: `claudeMdExcludes` glob patterns; we add the default
//!   candidates and their `.local.md` overlays to whatever is there.
//! - Gemini CLI: `context.fileName: []` loads no `AGENTS.md`/`CLAUDE.md`
//!   (`GEMINI.md` is always loaded: see [`GEMINI_MD_NOTE`]).
//! - Codex: `project_doc_max_bytes = 0` in `config.toml`.
//! - Qwen Code: `context.fileName` names one file no layout holds
//!   (decision 0068); its `.qwen/rules` stay on (see [`QWEN_RULES_NOTE`]).
//! - GitHub Copilot CLI: no setting, only a flag (decision 0067): its
//!   loading stays on and the hook gives what it lacks
//!   ([`COPILOT_NATIVE_NOTE`]).

use std::path::Path;

use serde_json::{Map, Value};
use toml_edit::DocumentMut;

use crate::codex;
use crate::error::InstallError;
use crate::hooks::root_mut;
use crate::install_record::NativeRecord;

/// The instruction file names the adapter delivers: if Gemini CLI loads
/// any of them itself, they reach the model twice. `GEMINI.md` is not here:
/// Gemini CLI 0.61 always loads it, whatever `context.fileName` says (its
/// setter adds the names to the built-in default instead of replacing it;
/// measured, decision 0012), so the adapter leaves `GEMINI.md` to Gemini.
const GEMINI_DELIVERED: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    "AGENTS.local.md",
    "CLAUDE.local.md",
];

/// Told by doctor for every Gemini CLI installation.
pub(crate) const GEMINI_MD_NOTE: &str = "Gemini CLI loads GEMINI.md itself whatever `context.fileName` says \
(0.61); the adapter must not deliver GEMINI.md too (decision 0012)";

/// Told by doctor for every Qwen Code installation.
pub(crate) const QWEN_RULES_NOTE: &str = "Qwen Code loads its own `.qwen/rules` whatever \
`context.fileName` says (0.24.4, measured); the adapter leaves them to Qwen (decision 0068)";

/// Why Copilot CLI's native loading stays on, told by doctor.
pub(crate) const COPILOT_NATIVE_NOTE: &str = "kept on: only the `--no-custom-instructions` flag \
switches it off, which a hook cannot set; the hook delivers only what Copilot CLI does not load \
(the .local.md overlays, the user-global file, nested overlays on touches, decision 0067)";

/// Why pi's and opencode's native loading stays on, told by doctor.
pub(crate) const IN_PROCESS_NATIVE_NOTE: &str = "kept on: no setting switches it off; the \
extension or plugin leaves out of what it gives every file the agent holds with the same content \
and gives the rest (overlays, the user-global file, nested files on every touch, changes, the \
baseline after compaction; decision 0086)";
/// Why Cline's own loading stays on (decision 0089).
pub(crate) const CLINE_NATIVE_NOTE: &str = "kept on: no setting switches it off; Cline loads the \
    `AGENTS.md` of its working directory itself, and the hook leaves it out";

/// What Cline loads that the hook leaves to it.
pub(crate) const CLINE_RULES_NOTE: &str = "Cline loads its own rules (`.clinerules/`, \
    `.cline/rules/`, `~/.cline/rules/`, `~/Documents/Cline/Rules/`) and `~/.agents/AGENTS.md` \
    itself, always on (it ignores `paths:`); the hook gives CLAUDE.md, the overlays, nested \
    files and updates with Cline's tool hooks only: the first request of a task holds none of them";

const CLAUDE_KEY: &str = "claudeMdExcludes";
const GEMINI_PARENT: &str = "context";
const GEMINI_KEY: &str = "fileName";
const GEMINI_DOTTED: &str = "context.fileName";

/// Whether the agent's native loading is off, per a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NativeStatus {
    /// The agent does not load the files the adapter delivers.
    Off,
    /// It does: double delivery is possible. The text says why.
    On(String),
    /// It stays on by design and the hook delivers only what the agent
    /// does not load, so nothing arrives twice (Copilot CLI, decision
    /// 0067). The text says why.
    Kept(String),
}

/// Claude Code: adds our exclusion `patterns` (the profile's
/// [`NativeSwitch::ClaudeMdExcludes`](dsh_instructions_hooks::agents::NativeSwitch))
/// to `claudeMdExcludes`. `prior` is the record of an earlier install, kept
/// when present.
pub(crate) fn claude_off(
    doc: &mut Value,
    path: &Path,
    patterns: &[&str],
    prior: Option<&NativeRecord>,
) -> Result<NativeRecord, InstallError> {
    let root = root_mut(doc, path)?;
    let cur = root.get(CLAUDE_KEY).cloned();
    let mut list = match &cur {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => {
            return Err(InstallError::wrong_type(
                path,
                CLAUDE_KEY,
                "an array of glob patterns",
            ));
        }
    };
    for pat in patterns {
        if !list.iter().any(|v| v.as_str() == Some(pat)) {
            list.push(Value::String((*pat).to_owned()));
        }
    }
    let set = Value::Array(list);
    if cur.as_ref() != Some(&set) {
        root.insert(CLAUDE_KEY.to_owned(), set.clone());
    }
    Ok(NativeRecord::of_set(CLAUDE_KEY, cur, set, false, prior))
}

/// Gemini CLI: sets `context.fileName` to `[]`.
pub(crate) fn gemini_off(
    doc: &mut Value,
    path: &Path,
    prior: Option<&NativeRecord>,
) -> Result<NativeRecord, InstallError> {
    context_file_name(doc, path, Value::Array(Vec::new()), prior)
}

/// Qwen Code: sets `context.fileName` to `[name]`, a file no layout holds
/// (`[]` changes nothing in Qwen, measured).
pub(crate) fn qwen_off(
    doc: &mut Value,
    path: &Path,
    name: &str,
    prior: Option<&NativeRecord>,
) -> Result<NativeRecord, InstallError> {
    let set = Value::Array(vec![Value::String(name.to_owned())]);
    context_file_name(doc, path, set, prior)
}

/// Sets `context.fileName` to `set`, recording what was there.
fn context_file_name(
    doc: &mut Value,
    path: &Path,
    set: Value,
    prior: Option<&NativeRecord>,
) -> Result<NativeRecord, InstallError> {
    let root = root_mut(doc, path)?;
    let created_parent = !root.contains_key(GEMINI_PARENT);
    let ctx = root
        .entry(GEMINI_PARENT)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| InstallError::wrong_type(path, GEMINI_PARENT, "an object"))?;
    let cur = ctx.get(GEMINI_KEY).cloned();
    if cur.as_ref() != Some(&set) {
        ctx.insert(GEMINI_KEY.to_owned(), set.clone());
    }
    Ok(NativeRecord::of_set(
        GEMINI_DOTTED,
        cur,
        set,
        created_parent,
        prior,
    ))
}

/// Codex: sets `project_doc_max_bytes = 0`.
pub(crate) fn codex_off(
    doc: &mut DocumentMut,
    path: &Path,
    prior: Option<&NativeRecord>,
) -> Result<NativeRecord, InstallError> {
    let cur = codex::doc_max_bytes(doc, path)?;
    if cur != Some(0) {
        codex::set_doc_max_bytes(doc, Some(0));
    }
    let set = Value::from(0);
    Ok(NativeRecord::of_set(
        codex::PROJECT_DOC_MAX_BYTES,
        cur.map(Value::from),
        set,
        false,
        prior,
    ))
}

/// Puts a JSON setting back per its record; returns a note when it was
/// changed since install and so left as it is.
pub(crate) fn json_restore(
    doc: &mut Value,
    path: &Path,
    rec: &NativeRecord,
) -> Result<Option<String>, InstallError> {
    let root = root_mut(doc, path)?;
    let Some((parent, key)) = rec.key.split_once('.') else {
        return Ok(restore_in(root, &rec.key, rec, path));
    };
    let Some(Value::Object(obj)) = root.get_mut(parent) else {
        return Ok(Some(format!(
            "`{parent}` is gone from {}; nothing to restore",
            path.display()
        )));
    };
    let note = restore_in(obj, key, rec, path);
    if note.is_none() && rec.created_parent && obj.is_empty() {
        root.remove(parent);
    }
    Ok(note)
}

fn restore_in(
    obj: &mut Map<String, Value>,
    key: &str,
    rec: &NativeRecord,
    path: &Path,
) -> Option<String> {
    let cur = obj.get(key).cloned();
    if cur.as_ref() == Some(&rec.set) {
        if rec.existed {
            obj.insert(key.to_owned(), rec.prior.clone());
        } else {
            obj.remove(key);
        }
    } else if let (Some(Value::Array(cur)), Value::Array(set)) = (&cur, &rec.set) {
        // Changed since install: take out only the entries install added.
        let prior: &[Value] = rec.prior.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let added: Vec<&Value> = set.iter().filter(|v| !prior.contains(v)).collect();
        let kept: Vec<Value> = cur.iter().filter(|v| !added.contains(v)).cloned().collect();
        if kept.is_empty() && !rec.existed {
            obj.remove(key);
        } else {
            obj.insert(key.to_owned(), Value::Array(kept));
        }
    } else {
        return Some(format!(
            "`{}` in {} was changed since install; left as it is",
            rec.key,
            path.display()
        ));
    }
    None
}

/// Puts `project_doc_max_bytes` back per its record.
pub(crate) fn codex_restore(
    doc: &mut DocumentMut,
    path: &Path,
    rec: &NativeRecord,
) -> Result<Option<String>, InstallError> {
    let cur = codex::doc_max_bytes(doc, path)?;
    if cur.map(Value::from).as_ref() != Some(&rec.set) {
        return Ok(Some(format!(
            "`{}` in {} was changed since install; left as it is",
            rec.key,
            path.display()
        )));
    }
    codex::set_doc_max_bytes(
        doc,
        if rec.existed {
            rec.prior.as_i64()
        } else {
            None
        },
    );
    Ok(None)
}

/// Claude Code's status per a settings document.
pub(crate) fn claude_status(doc: &Value, patterns: &[&str]) -> NativeStatus {
    let list: Vec<&str> = doc
        .get(CLAUDE_KEY)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = patterns
        .iter()
        .copied()
        .filter(|p| !list.contains(p))
        .collect();
    if missing.is_empty() {
        NativeStatus::Off
    } else {
        NativeStatus::On(format!(
            "`{CLAUDE_KEY}` lacks {}: Claude Code also loads those files itself",
            missing.join(", ")
        ))
    }
}

/// Gemini CLI's status per a settings document.
pub(crate) fn gemini_status(doc: &Value) -> NativeStatus {
    let names = context_file_names(doc);
    loading_itself(names, GEMINI_DELIVERED, "Gemini CLI")
}

/// The names the Qwen Code hook delivers: Qwen loading any of them itself
/// means twice.
const QWEN_DELIVERED: &[&str] = &["QWEN.md", "AGENTS.md", "AGENTS.local.md", "CLAUDE.local.md"];

/// Qwen Code's status per `context.fileName`: off when it names files and
/// none the hook delivers. Absent or `[]` (or only blank names) is Qwen's
/// default, `QWEN.md` and `AGENTS.md` (measured).
pub(crate) fn qwen_status(doc: &Value) -> NativeStatus {
    let names = context_file_names(doc);
    let names: Vec<&str> = names
        .into_iter()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return NativeStatus::On(format!(
            "`{GEMINI_DOTTED}` is not set (or empty): Qwen Code loads QWEN.md and AGENTS.md itself"
        ));
    }
    loading_itself(names, QWEN_DELIVERED, "Qwen Code")
}

/// The names `context.fileName` holds (Gemini CLI's and Qwen Code's): one
/// string or a list of them; anything else names nothing.
fn context_file_names(doc: &Value) -> Vec<&str> {
    match doc.get(GEMINI_PARENT).and_then(|c| c.get(GEMINI_KEY)) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Off when `agent` loads none of the names the hook `delivered` itself,
/// else on, naming those it loads.
fn loading_itself(names: Vec<&str>, delivered: &[&str], agent: &str) -> NativeStatus {
    let loaded: Vec<&str> = names
        .into_iter()
        .filter(|n| delivered.contains(n))
        .collect();
    if loaded.is_empty() {
        NativeStatus::Off
    } else {
        NativeStatus::On(format!(
            "`{GEMINI_DOTTED}` makes {agent} load {} itself",
            loaded.join(", ")
        ))
    }
}

/// Codex's status per the value of `project_doc_max_bytes`.
pub(crate) fn codex_status(value: Option<i64>) -> NativeStatus {
    match value {
        Some(0) => NativeStatus::Off,
        Some(n) => NativeStatus::On(format!(
            "`project_doc_max_bytes = {n}`: Codex loads AGENTS.md itself"
        )),
        None => NativeStatus::On(
            "`project_doc_max_bytes` is not set: Codex loads AGENTS.md itself".to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_hooks::agents::CLAUDE_EXCLUDES;
    use rstest::rstest;
    use serde_json::json;

    #[test]
    fn claude_keeps_the_users_patterns_and_restores_them() {
        let original = json!({"claudeMdExcludes": ["vendor/**"]});
        let mut doc = original.clone();
        let rec = claude_off(&mut doc, Path::new("s"), CLAUDE_EXCLUDES, None).expect("ok");
        assert_eq!(doc["claudeMdExcludes"][0], "vendor/**");
        assert_eq!(claude_status(&doc, CLAUDE_EXCLUDES), NativeStatus::Off);
        assert_eq!(
            json_restore(&mut doc, Path::new("s"), &rec).expect("ok"),
            None
        );
        assert_eq!(doc, original);
    }

    #[test]
    fn claude_restore_after_a_user_edit_removes_only_ours() {
        let mut doc = json!({});
        let rec = claude_off(&mut doc, Path::new("s"), CLAUDE_EXCLUDES, None).expect("ok");
        doc["claudeMdExcludes"]
            .as_array_mut()
            .expect("array")
            .push(json!("x/**"));
        json_restore(&mut doc, Path::new("s"), &rec).expect("ok");
        assert_eq!(doc, json!({"claudeMdExcludes": ["x/**"]}));
    }

    #[rstest]
    #[case(json!({}), false)]
    #[case(json!({"context": {"fileName": "AGENTS.md", "other": 1}}), true)]
    #[case(json!({"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}), true)]
    #[case(json!({"context": {"fileName": ["GEMINI.md"]}}), false)]
    fn gemini_off_and_back(#[case] original: Value, #[case] double: bool) {
        let mut doc = original.clone();
        assert_eq!(matches!(gemini_status(&doc), NativeStatus::On(_)), double);
        let rec = gemini_off(&mut doc, Path::new("s"), None).expect("ok");
        assert_eq!(doc["context"]["fileName"], json!([]));
        assert_eq!(gemini_status(&doc), NativeStatus::Off);
        json_restore(&mut doc, Path::new("s"), &rec).expect("ok");
        assert_eq!(doc, original);
    }

    /// Qwen Code: `[]` is no switch (measured), so the name of no file is
    /// set; a user's own list is put back on restore.
    #[rstest]
    #[case(json!({}), true)]
    #[case(json!({"context": {"fileName": []}}), true)]
    #[case(json!({"context": {"fileName": [" "]}}), true)]
    #[case(json!({"context": {"fileName": ["QWEN.md", "MEMORY.md"], "x": 1}}), true)]
    #[case(json!({"context": {"fileName": "MEMORY.md"}}), false)]
    fn qwen_off_and_back(#[case] original: Value, #[case] double: bool) {
        let name = dsh_instructions_hooks::agents::QWEN_NO_SUCH_FILE;
        let mut doc = original.clone();
        assert_eq!(matches!(qwen_status(&doc), NativeStatus::On(_)), double);
        let rec = qwen_off(&mut doc, Path::new("s"), name, None).expect("ok");
        assert_eq!(doc["context"]["fileName"], json!([name]));
        assert_eq!(qwen_status(&doc), NativeStatus::Off);
        json_restore(&mut doc, Path::new("s"), &rec).expect("ok");
        assert_eq!(doc, original);
    }

    #[test]
    fn a_second_install_keeps_the_first_prior() {
        let mut doc = json!({"context": {"fileName": "AGENTS.md"}});
        let first = gemini_off(&mut doc, Path::new("s"), None).expect("ok");
        let second = gemini_off(&mut doc, Path::new("s"), Some(&first)).expect("ok");
        assert_eq!(second, first);
        assert_eq!(second.prior, json!("AGENTS.md"));
    }

    #[test]
    fn changed_setting_is_left_alone_with_a_note() {
        let mut doc = json!({});
        let rec = gemini_off(&mut doc, Path::new("s"), None).expect("ok");
        doc["context"]["fileName"] = json!("MINE.md");
        let note = json_restore(&mut doc, Path::new("s"), &rec).expect("ok");
        assert!(note.is_some_and(|n| n.contains("changed since install")));
        assert_eq!(doc["context"]["fileName"], "MINE.md");
    }

    #[rstest]
    #[case(json!({"claudeMdExcludes": "**/CLAUDE.md"}), "claudeMdExcludes")]
    fn claude_wrong_type_is_an_error(#[case] doc: Value, #[case] key: &str) {
        let mut d = doc;
        let e = claude_off(&mut d, Path::new("/s"), CLAUDE_EXCLUDES, None).unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }

    #[test]
    fn codex_restores_a_prior_value() {
        let mut doc: DocumentMut = "project_doc_max_bytes = 1000\n".parse().expect("toml");
        let rec = codex_off(&mut doc, Path::new("c"), None).expect("ok");
        assert_eq!(
            codex_status(codex::doc_max_bytes(&doc, Path::new("c")).expect("int")),
            NativeStatus::Off
        );
        codex_restore(&mut doc, Path::new("c"), &rec).expect("ok");
        assert_eq!(doc.to_string(), "project_doc_max_bytes = 1000\n");
    }
}
