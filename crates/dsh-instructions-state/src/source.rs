//! The typed source every workspace message carries (R-STATE-1).

use serde_json::{Map, Value, json};

use crate::digest::Digest;
use crate::scope::ScopeKey;

/// `kind` of a workspace message's typed source.
pub const SOURCE_KIND: &str = "agent-instructions";
/// `form` of a workspace message's typed source.
pub const SOURCE_FORM: &str = "instructions";
/// `schema` of the typed source, also part of the baseline identity.
pub const SCHEMA: u64 = 1;

/// What a change does to its scope (R-STATE-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// The scope starts being loaded (or reappears after a tombstone).
    Set,
    /// A loaded scope has new content or a new path.
    Replace,
    /// A loaded scope no longer applies (a tombstone).
    Remove,
}

impl Action {
    /// The persisted spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
        }
    }

    /// Parses the persisted spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "set" => Some(Self::Set),
            "replace" => Some(Self::Replace),
            "remove" => Some(Self::Remove),
            _ => None,
        }
    }

    /// True for `set`/`replace`: after it, the scope is loaded.
    pub fn loads(self) -> bool {
        matches!(self, Self::Set | Self::Replace)
    }
}

/// One entry of a typed source's `changes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// What happens to the scope.
    pub action: Action,
    /// The scope.
    pub scope: ScopeKey,
    /// Display path of the file (for a `remove`, the path that was loaded).
    pub path: String,
    /// For a `replace` whose path changed: the earlier display path.
    pub previous_path: Option<String>,
    /// Digest of the full loaded text; `None` for a `remove`.
    pub digest: Option<Digest>,
}

/// The typed source of a workspace message (R-STATE-1), persisted as JSON and
/// never rendered.
///
/// ```
/// use dsh_instructions_state::{TypedSource, source::Action};
/// let v = serde_json::json!({
///     "kind": "agent-instructions", "form": "instructions", "schema": 1,
///     "baseline": true, "future": "ignored",
///     "changes": [
///         {"action": "set", "scope": "project\u{0}.\u{0}base", "path": "AGENTS.md",
///          "digest": "d89b0bf28ccca41f95a0aac894b4d0a41ddfe664"},
///         {"action": "explode", "scope": "user\u{0}AGENTS.md", "path": "x"}
///     ]
/// });
/// let source = TypedSource::from_json(&v).unwrap();
/// assert!(source.baseline);
/// assert_eq!(source.changes.len(), 1); // the malformed entry is skipped
/// assert_eq!(source.changes[0].action, Action::Set);
/// assert_eq!(TypedSource::from_json(&source.to_json()), Some(source));
///
/// // Another plugin's metadata is not ours.
/// assert_eq!(TypedSource::from_json(&serde_json::json!({"kind": "other"})), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TypedSource {
    /// The message has a baseline part.
    pub baseline: bool,
    /// Baseline identity (R-STATE-4) of that baseline part.
    pub baseline_identity: Option<String>,
    /// Changes in section order (R-REN-3).
    pub changes: Vec<Change>,
}

fn change_to_json(c: &Change) -> Value {
    let mut m = Map::new();
    m.insert("action".into(), c.action.as_str().into());
    m.insert("scope".into(), c.scope.as_str().into());
    m.insert("path".into(), c.path.as_str().into());
    if let Some(prev) = &c.previous_path {
        m.insert("previousPath".into(), prev.as_str().into());
    }
    // R-STATE-1: a remove carries no digest.
    if c.action.loads()
        && let Some(d) = c.digest
    {
        m.insert("digest".into(), d.to_hex().into());
    }
    Value::Object(m)
}

/// One change entry, or `None` when it is malformed (skipped by the caller).
fn change_from_json(v: &Value) -> Option<Change> {
    let action = Action::parse(v.get("action")?.as_str()?)?;
    let scope = ScopeKey::parse(v.get("scope")?.as_str()?)?;
    let path = v
        .get("path")?
        .as_str()
        .filter(|p| !p.is_empty())?
        .to_owned();
    // A wrong-typed previousPath only loses the hint for the replace text;
    // the state the change carries is still valid, so keep it.
    let previous_path = v
        .get("previousPath")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let digest = if action.loads() {
        Some(Digest::from_hex(v.get("digest")?.as_str()?)?)
    } else {
        None
    };
    Some(Change {
        action,
        scope,
        path,
        previous_path,
        digest,
    })
}

impl TypedSource {
    /// The persisted JSON form; `baseline` appears only when true,
    /// `baselineIdentity`, `previousPath` and `digest` only when present (never
    /// a digest on a `remove`).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), SOURCE_KIND.into());
        m.insert("form".into(), SOURCE_FORM.into());
        m.insert("schema".into(), json!(SCHEMA));
        if self.baseline {
            m.insert("baseline".into(), true.into());
        }
        if let Some(id) = &self.baseline_identity {
            m.insert("baselineIdentity".into(), id.as_str().into());
        }
        m.insert(
            "changes".into(),
            Value::Array(self.changes.iter().map(change_to_json).collect()),
        );
        Value::Object(m)
    }

    /// Reads a persisted typed source. `None` when `kind`, `form` or `schema`
    /// say it is not ours. Unknown fields are ignored; malformed change
    /// entries (unknown action, bad scope, missing or empty path, a
    /// `set`/`replace` without a valid digest) are skipped; a `remove`'s
    /// digest is dropped. Never panics.
    ///
    /// ```
    /// use dsh_instructions_state::{ScopeKey, TypedSource};
    /// let v = serde_json::json!({
    ///     "kind": "agent-instructions", "form": "instructions", "schema": 1,
    ///     "changes": [{"action": "remove", "scope": "user\u{0}AGENTS.md",
    ///                  "path": "~/.dsh/AGENTS.md", "digest": "ignored on a remove"}]
    /// });
    /// let s = TypedSource::from_json(&v).unwrap();
    /// assert!(!s.baseline);
    /// assert_eq!(s.changes[0].scope, ScopeKey::user_global());
    /// assert_eq!(s.changes[0].digest, None);
    /// ```
    pub fn from_json(v: &Value) -> Option<Self> {
        let ours = v.get("kind")?.as_str()? == SOURCE_KIND
            && v.get("form")?.as_str()? == SOURCE_FORM
            && v.get("schema")?.as_u64()? == SCHEMA;
        if !ours {
            return None;
        }
        let changes = v
            .get("changes")
            .and_then(Value::as_array)
            .map(|entries| entries.iter().filter_map(change_from_json).collect())
            .unwrap_or_default();
        Some(Self {
            baseline: v.get("baseline").and_then(Value::as_bool).unwrap_or(false),
            baseline_identity: v
                .get("baselineIdentity")
                .and_then(Value::as_str)
                .map(str::to_owned),
            changes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    const HEX: &str = "d89b0bf28ccca41f95a0aac894b4d0a41ddfe664";

    fn wrap(changes: Value) -> Value {
        json!({"kind": "agent-instructions", "form": "instructions", "schema": 1, "changes": changes})
    }

    #[rstest]
    #[case::other_kind(json!({"kind": "x", "form": "instructions", "schema": 1, "changes": []}))]
    #[case::other_form(json!({"kind": "agent-instructions", "form": "x", "schema": 1}))]
    #[case::other_schema(json!({"kind": "agent-instructions", "form": "instructions", "schema": 2}))]
    #[case::schema_string(json!({"kind": "agent-instructions", "form": "instructions", "schema": "1"}))]
    #[case::no_schema(json!({"kind": "agent-instructions", "form": "instructions"}))]
    #[case::not_object(json!(["agent-instructions"]))]
    #[case::null(Value::Null)]
    fn not_ours(#[case] v: Value) {
        // R-STATE-1
        assert_eq!(TypedSource::from_json(&v), None);
    }

    #[rstest]
    #[case::unknown_action(json!({"action": "upsert", "scope": "user\u{0}AGENTS.md", "path": "p", "digest": HEX}))]
    #[case::bad_scope(json!({"action": "set", "scope": "user-global", "path": "p", "digest": HEX}))]
    #[case::missing_path(json!({"action": "set", "scope": "user\u{0}AGENTS.md", "digest": HEX}))]
    #[case::empty_path(json!({"action": "remove", "scope": "user\u{0}AGENTS.md", "path": ""}))]
    #[case::path_not_string(json!({"action": "remove", "scope": "user\u{0}AGENTS.md", "path": 3}))]
    #[case::set_without_digest(json!({"action": "set", "scope": "user\u{0}AGENTS.md", "path": "p"}))]
    #[case::replace_bad_digest(json!({"action": "replace", "scope": "user\u{0}AGENTS.md", "path": "p", "digest": HEX.to_uppercase()}))]
    #[case::not_an_object(json!("set"))]
    fn malformed_change_is_skipped_not_fatal(#[case] bad: Value) {
        // R-STATE-1: the well-formed neighbours survive.
        let good =
            json!({"action": "remove", "scope": "project\u{0}.\u{0}base", "path": "AGENTS.md"});
        let s = TypedSource::from_json(&wrap(json!([good.clone(), bad, good]))).unwrap();
        assert_eq!(s.changes.len(), 2);
        assert!(s.changes.iter().all(|c| c.action == Action::Remove));
    }

    #[test]
    fn remove_digest_is_dropped_and_not_written() {
        let v = wrap(
            json!([{"action": "remove", "scope": "user\u{0}AGENTS.md", "path": "~/.dsh/AGENTS.md", "digest": HEX}]),
        );
        let s = TypedSource::from_json(&v).unwrap();
        assert_eq!(s.changes[0].digest, None);
        let mut with_digest = s.clone();
        with_digest.changes[0].digest = Digest::from_hex(HEX);
        assert_eq!(with_digest.to_json()["changes"][0].get("digest"), None);
    }

    #[test]
    fn json_shape_matches_spec() {
        // R-STATE-1: exact field names, baseline omitted when false.
        let change = Change {
            action: Action::Replace,
            scope: ScopeKey::project("a", "base"),
            path: "a/CLAUDE.md".into(),
            previous_path: Some("a/AGENTS.md".into()),
            digest: Digest::from_hex(HEX),
        };
        let s = TypedSource {
            baseline: false,
            baseline_identity: None,
            changes: vec![change],
        };
        assert_eq!(
            s.to_json(),
            json!({"kind": "agent-instructions", "form": "instructions", "schema": 1,
                   "changes": [{"action": "replace", "scope": "project\u{0}a\u{0}base",
                                "path": "a/CLAUDE.md", "previousPath": "a/AGENTS.md", "digest": HEX}]})
        );
        let b = TypedSource {
            baseline: true,
            baseline_identity: Some("id".into()),
            changes: vec![],
        };
        let v = b.to_json();
        assert_eq!(v["baseline"], json!(true));
        assert_eq!(v["baselineIdentity"], json!("id"));
    }

    #[rstest]
    #[case::missing(json!({}), false)]
    #[case::not_bool(json!({"baseline": "yes"}), false)]
    #[case::explicit_false(json!({"baseline": false}), false)]
    #[case::is_true(json!({"baseline": true}), true)]
    fn baseline_flag(#[case] extra: Value, #[case] expected: bool) {
        let mut v = wrap(json!([]));
        if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
            m.extend(e);
        }
        assert_eq!(TypedSource::from_json(&v).unwrap().baseline, expected);
    }

    #[test]
    fn missing_changes_is_empty() {
        let v = json!({"kind": "agent-instructions", "form": "instructions", "schema": 1});
        assert_eq!(TypedSource::from_json(&v), Some(TypedSource::default()));
    }

    fn arb_scope() -> impl Strategy<Value = ScopeKey> {
        prop_oneof![
            Just(ScopeKey::user_global()),
            ("[a-z]{1,3}(/[a-z.]{1,3}){0,2}", "[A-Za-z.]{1,6}")
                .prop_filter_map("valid key", |(d, s)| ScopeKey::try_project(&d, &s)),
        ]
    }

    fn arb_change() -> impl Strategy<Value = Change> {
        (
            prop_oneof![
                Just(Action::Set),
                Just(Action::Replace),
                Just(Action::Remove)
            ],
            arb_scope(),
            ".{1,12}",
            proptest::option::of(".{0,12}"),
            proptest::array::uniform20(any::<u8>()),
        )
            .prop_map(|(action, scope, path, previous_path, d)| Change {
                action,
                scope,
                path,
                previous_path,
                digest: action.loads().then(|| Digest::from(d)),
            })
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            prop_oneof![
                Just("agent-instructions".to_owned()),
                Just("instructions".to_owned()),
                Just("set".to_owned()),
                Just("project\0.\0base".to_owned()),
                Just(HEX.to_owned()),
                ".{0,8}"
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            let key = prop_oneof![
                Just("kind".to_owned()),
                Just("form".to_owned()),
                Just("schema".to_owned()),
                Just("changes".to_owned()),
                Just("action".to_owned()),
                Just("scope".to_owned()),
                Just("path".to_owned()),
                Just("digest".to_owned()),
                Just("previousPath".to_owned()),
                Just("baseline".to_owned()),
                "[a-z]{1,4}"
            ];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map(key, inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn round_trip(
            baseline in any::<bool>(),
            baseline_identity in proptest::option::of(".{0,20}"),
            changes in prop::collection::vec(arb_change(), 0..6),
        ) {
            let s = TypedSource { baseline, baseline_identity, changes };
            prop_assert_eq!(TypedSource::from_json(&s.to_json()), Some(s.clone()));
            // Through text too, as persisted (R-LOG-3).
            let text = serde_json::to_string(&s.to_json()).unwrap();
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(TypedSource::from_json(&back), Some(s));
        }

        #[test]
        fn from_json_never_panics(v in arb_json()) {
            if let Some(s) = TypedSource::from_json(&v) {
                // Whatever was accepted is well-formed and re-reads identically.
                prop_assert!(s.changes.iter().all(|c| c.action.loads() == c.digest.is_some()));
                prop_assert_eq!(TypedSource::from_json(&s.to_json()), Some(s));
            }
        }

        #[test]
        fn from_json_wrapped_arbitrary_changes(changes in prop::collection::vec(arb_json(), 0..6)) {
            let s = TypedSource::from_json(&wrap(Value::Array(changes))).unwrap();
            prop_assert!(s.changes.iter().all(|c| !c.path.is_empty()));
        }
    }
}
