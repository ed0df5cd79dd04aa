//! Codex specifics: persisted hook trust and `project_doc_max_bytes`.
//!
//! Codex runs a hook from `hooks.json` only when the user config holds
//! `[hooks.state."<hooks.json path>:<event label>:<group>:<handler>"]` with a
//! `trusted_hash` equal to the hook's current hash (unless run with
//! `--dangerously-bypass-hook-trust`); untrusted hooks are skipped silently
//! (harness README). The hash, as `codex-rs/hooks` computes it: the hook's
//! normalized identity — `event_name` (the snake-case label), the group's
//! `matcher` (only for events that take one, else left out) and `hooks`
//! holding just this handler with `type`, `command`, `timeout` (default 600,
//! at least 1) and `async` (false) — is turned into JSON with every object's
//! keys sorted, serialized compactly, hashed with SHA-256 and written as
//! `sha256:<lowercase hex>`. Decision 0012 records how this was verified.

use std::path::Path;

use sha2::Digest as _;
use toml_edit::{DocumentMut, Item, Table, TableLike, value};

use crate::error::InstallError;
use crate::hooks::{Moves, Pos};
use dsh_instructions_hooks::agents::EventSpec;

/// The config key that caps the bytes Codex reads from `AGENTS.md` files;
/// `0` switches its own loading off (measured, harness README).
pub(crate) const PROJECT_DOC_MAX_BYTES: &str = "project_doc_max_bytes";

/// Whether Codex keeps the group matcher of `event` in a hook's identity
/// (it ignores matchers of the events that dispatch on nothing).
fn event_takes_matcher(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse" | "PermissionRequest" | "PostToolUse" | "SessionStart"
    )
}

/// Codex's label of an event in trust keys: `PostToolUse` → `post_tool_use`.
pub(crate) fn event_label(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON string literal, escaped the way serde_json writes it.
fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// The trust hash of a command handler registered for `event` under
/// `matcher` with `timeout` seconds (see the module docs).
pub fn trust_hash(event: &str, matcher: Option<&str>, command: &str, timeout: u64) -> String {
    // Keys written in sorted order: async, command, timeout, type; then
    // event_name, hooks, matcher.
    let handler = format!(
        "{{\"async\":false,\"command\":{},\"timeout\":{},\"type\":\"command\"}}",
        json_str(command),
        timeout.max(1)
    );
    let mut identity = format!(
        "{{\"event_name\":{},\"hooks\":[{handler}]",
        json_str(&event_label(event))
    );
    if let Some(m) = matcher.filter(|_| event_takes_matcher(event)) {
        identity.push_str(&format!(",\"matcher\":{}", json_str(m)));
    }
    identity.push('}');
    let digest = sha2::Sha256::digest(identity.as_bytes());
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// The trust key of the handler at `pos` of `event` in `hooks_json`.
pub fn trust_key(hooks_json: &Path, event: &str, pos: Pos) -> String {
    format!(
        "{}:{}:{}:{}",
        hooks_json.display(),
        event_label(event),
        pos.0,
        pos.1
    )
}

/// The `hooks.state` table of a config, if present; an error when `hooks`
/// or `hooks.state` is not a table (a `[hooks]` section and an inline
/// `hooks = { … }` both are).
fn state_table<'a>(
    doc: &'a DocumentMut,
    path: &Path,
) -> Result<Option<&'a dyn TableLike>, InstallError> {
    let Some(hooks) = doc.get("hooks") else {
        return Ok(None);
    };
    let hooks = hooks
        .as_table_like()
        .ok_or_else(|| InstallError::wrong_type(path, "hooks", "a table"))?;
    match hooks.get("state") {
        None => Ok(None),
        Some(item) => item
            .as_table_like()
            .map(Some)
            .ok_or_else(|| InstallError::wrong_type(path, "hooks.state", "a table")),
    }
}

fn state_table_mut<'a>(
    doc: &'a mut DocumentMut,
    path: &Path,
) -> Result<&'a mut dyn TableLike, InstallError> {
    let root = doc.as_table_mut();
    if !root.contains_key("hooks") {
        let mut t = Table::new();
        t.set_implicit(true);
        root.insert("hooks", Item::Table(t));
    }
    let hooks = root
        .get_mut("hooks")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| InstallError::wrong_type(path, "hooks", "a table"))?;
    if !hooks.contains_key("state") {
        let mut t = Table::new();
        t.set_implicit(true);
        // Into an inline `hooks = { … }` this goes as an inline table.
        hooks.insert("state", Item::Table(t));
    }
    hooks
        .get_mut("state")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| InstallError::wrong_type(path, "hooks.state", "a table"))
}

/// What the trust table says about one handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// A `trusted_hash` equal to the handler's current hash.
    Trusted,
    /// No trust entry: Codex skips the hook silently.
    Untrusted,
    /// A `trusted_hash` for an earlier version of the handler.
    Modified,
    /// `enabled = false`: the user switched it off.
    Disabled,
}

/// Looks up the trust of the handler at `key` whose current hash is `hash`.
pub(crate) fn trust_of(
    doc: &DocumentMut,
    path: &Path,
    key: &str,
    hash: &str,
) -> Result<Trust, InstallError> {
    let Some(state) = state_table(doc, path)? else {
        return Ok(Trust::Untrusted);
    };
    let Some(entry) = state.get(key).and_then(Item::as_table_like) else {
        return Ok(Trust::Untrusted);
    };
    if entry.get("enabled").and_then(Item::as_bool) == Some(false) {
        return Ok(Trust::Disabled);
    }
    Ok(match entry.get("trusted_hash").and_then(Item::as_str) {
        Some(h) if h == hash => Trust::Trusted,
        Some(_) => Trust::Modified,
        None => Trust::Untrusted,
    })
}

/// Brings the trust entries of `hooks_json` in line with a merge: entries of
/// removed handlers of ours go, entries of foreign handlers follow them to
/// their new positions, and (after an install) each of our handlers gets a
/// `trusted_hash`.
pub(crate) fn apply_trust(
    doc: &mut DocumentMut,
    path: &Path,
    hooks_json: &Path,
    moves: &Moves,
    ours: &[(&EventSpec, Vec<String>, u64)],
) -> Result<(), InstallError> {
    if moves.removed.is_empty() && moves.moved.is_empty() && ours.is_empty() {
        return Ok(());
    }
    let state = state_table_mut(doc, path)?;
    for (event, removed) in &moves.removed {
        let moved = moves.moved.get(event).map(Vec::as_slice).unwrap_or(&[]);
        // Take every entry of this event out first, then put the survivors
        // back under their new keys, so a rename never overwrites another.
        let mut taken: Vec<(Pos, Item)> = Vec::new();
        for &(old, _) in moved {
            if let Some(item) = state.remove(&trust_key(hooks_json, event, old)) {
                taken.push((old, item));
            }
        }
        for &old in removed {
            state.remove(&trust_key(hooks_json, event, old));
        }
        for (old, item) in taken {
            if let Some(&(_, new)) = moved.iter().find(|(o, _)| *o == old) {
                state.insert(&trust_key(hooks_json, event, new), item);
            }
        }
    }
    for (spec, commands, timeout) in ours {
        let Some(positions) = moves.ours.get(spec.name) else {
            continue;
        };
        for (&pos, command) in positions.iter().zip(commands) {
            let key = trust_key(hooks_json, spec.name, pos);
            let hash = trust_hash(spec.name, spec.matcher, command, *timeout);
            let entry = state
                .entry(&key)
                .or_insert_with(|| Item::Table(Table::new()));
            let Some(t) = entry.as_table_like_mut() else {
                return Err(InstallError::wrong_type(
                    path,
                    &format!("hooks.state.\"{key}\""),
                    "a table",
                ));
            };
            if t.get("trusted_hash").and_then(Item::as_str) != Some(hash.as_str()) {
                t.insert("trusted_hash", value(hash));
            }
        }
    }
    prune_empty(doc);
    Ok(())
}

/// Drops `hooks.state` and `hooks` when they were left empty.
fn prune_empty(doc: &mut DocumentMut) {
    let root = doc.as_table_mut();
    let mut drop_hooks = false;
    if let Some(hooks) = root.get_mut("hooks").and_then(Item::as_table_like_mut) {
        if hooks
            .get("state")
            .and_then(Item::as_table_like)
            .is_some_and(TableLike::is_empty)
        {
            hooks.remove("state");
        }
        drop_hooks = hooks.is_empty();
    }
    if drop_hooks {
        root.remove("hooks");
    }
}

/// The current `project_doc_max_bytes`, if set; an error when it is not an
/// integer.
pub(crate) fn doc_max_bytes(doc: &DocumentMut, path: &Path) -> Result<Option<i64>, InstallError> {
    match doc.get(PROJECT_DOC_MAX_BYTES) {
        None => Ok(None),
        Some(item) => item
            .as_integer()
            .map(Some)
            .ok_or_else(|| InstallError::wrong_type(path, PROJECT_DOC_MAX_BYTES, "an integer")),
    }
}

/// Sets (or, with `None`, removes) `project_doc_max_bytes`, keeping the
/// line's comments when the value is only replaced.
pub(crate) fn set_doc_max_bytes(doc: &mut DocumentMut, to: Option<i64>) {
    match to {
        None => {
            doc.remove(PROJECT_DOC_MAX_BYTES);
        }
        Some(n) => {
            if let Some(Item::Value(v)) = doc.get_mut(PROJECT_DOC_MAX_BYTES) {
                let decor = v.decor().clone();
                *v = toml_edit::Value::from(n);
                *v.decor_mut() = decor;
            } else {
                doc.insert(PROJECT_DOC_MAX_BYTES, value(n));
            }
        }
    }
}

/// Whether `[projects."<dir>"] trust_level = "trusted"` is in the user
/// config: Codex ignores a project's `.codex/` layer otherwise.
pub(crate) fn project_trusted(doc: &DocumentMut, dir: &Path) -> bool {
    doc.get("projects")
        .and_then(Item::as_table_like)
        .and_then(|p| p.get(&dir.to_string_lossy()))
        .and_then(Item::as_table_like)
        .and_then(|t| t.get("trust_level"))
        .and_then(Item::as_str)
        == Some("trusted")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::collections::BTreeMap;

    #[rstest]
    #[case("SessionStart", "session_start")]
    #[case("UserPromptSubmit", "user_prompt_submit")]
    #[case("PostToolUse", "post_tool_use")]
    #[case("Stop", "stop")]
    fn labels_are_snake_case(#[case] event: &str, #[case] want: &str) {
        assert_eq!(event_label(event), want);
    }

    #[test]
    fn hash_is_sha256_of_the_sorted_compact_identity() {
        // `printf '%s' '{"event_name":"post_tool_use","hooks":[{"async":false,"command":"echo hi","timeout":10,"type":"command"}],"matcher":"apply_patch"}' | sha256sum`
        assert_eq!(
            trust_hash("PostToolUse", Some("apply_patch"), "echo hi", 10),
            "sha256:7c55a9ad5e95bcfad72bedc1d3c6a75c42ed13550cba8520b9faf4e63017333a"
        );
    }

    #[test]
    fn matcher_of_a_matcherless_event_is_not_hashed() {
        assert_eq!(
            trust_hash("UserPromptSubmit", Some("x"), "c", 10),
            trust_hash("UserPromptSubmit", None, "c", 10)
        );
        assert_ne!(
            trust_hash("SessionStart", Some("startup"), "c", 10),
            trust_hash("SessionStart", None, "c", 10)
        );
    }

    #[test]
    fn trust_entries_follow_moved_handlers() {
        let hooks_json = Path::new("/h/hooks.json");
        let mut doc: DocumentMut = "# mine\nmodel = \"m\"\n\n[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"ours\"\n\n[hooks.state.\"/h/hooks.json:stop:1:0\"]\ntrusted_hash = \"theirs\"\n"
            .parse()
            .expect("toml");
        let moves = Moves {
            moved: BTreeMap::from([("Stop".to_owned(), vec![((1, 0), (0, 0))])]),
            removed: BTreeMap::from([("Stop".to_owned(), vec![(0, 0)])]),
            ours: BTreeMap::new(),
        };
        apply_trust(&mut doc, Path::new("c"), hooks_json, &moves, &[]).expect("ok");
        let text = doc.to_string();
        assert!(text.starts_with("# mine\nmodel = \"m\"\n"), "{text}");
        assert!(
            text.contains("[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"theirs\""),
            "{text}"
        );
        assert!(!text.contains("ours"), "{text}");
    }

    #[test]
    fn doc_max_bytes_keeps_its_comment() {
        let mut doc: DocumentMut = "project_doc_max_bytes = 32768 # big\n"
            .parse()
            .expect("toml");
        set_doc_max_bytes(&mut doc, Some(0));
        assert_eq!(doc.to_string(), "project_doc_max_bytes = 0 # big\n");
        assert_eq!(doc_max_bytes(&doc, Path::new("c")).expect("int"), Some(0));
        set_doc_max_bytes(&mut doc, None);
        assert_eq!(doc.to_string(), "");
    }

    #[test]
    fn an_inline_hooks_table_is_a_table() {
        let mut doc: DocumentMut = "hooks = { foo = 1 }\n".parse().expect("toml");
        let spec = dsh_instructions_hooks::agents::EventSpec {
            name: "Stop",
            matcher: None,
        };
        let moves = Moves {
            ours: BTreeMap::from([("Stop".to_owned(), vec![(0, 0)])]),
            ..Moves::default()
        };
        apply_trust(
            &mut doc,
            Path::new("c"),
            Path::new("/h/hooks.json"),
            &moves,
            &[(&spec, vec!["c".to_owned()], 10)],
        )
        .expect("an inline table is a table");
        let key = trust_key(Path::new("/h/hooks.json"), "Stop", (0, 0));
        let hash = trust_hash("Stop", None, "c", 10);
        assert_eq!(
            trust_of(&doc, Path::new("c"), &key, &hash).expect("ok"),
            Trust::Trusted
        );
        assert!(doc.to_string().contains("foo = 1"), "{doc}");
    }
}
