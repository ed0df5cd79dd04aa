//! Large-case property tests for the typed-source parser (R-STATE-1): it
//! reads persisted metadata that anything may have written, so it must never
//! panic, and what it accepts must survive a write/read round trip.

use dsh_instructions_state::{TypedSource, source::Action};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Keys biased towards the ones the parser looks at.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "kind", "form", "schema", "baseline", "baselineIdentity", "changes", "action",
            "scope", "path", "previousPath", "digest",
        ])
        .prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

/// A field value that is sometimes valid, sometimes subtly not.
fn field(valid: Vec<Value>) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => prop::sample::select(valid).prop_map(Some),
        1 => any_json().prop_map(Some),
        1 => Just(None),
    ]
}

fn change() -> impl Strategy<Value = Value> {
    (
        field(vec![
            json!("set"),
            json!("replace"),
            json!("remove"),
            json!("SET"),
        ]),
        field(vec![
            json!("user\u{0}AGENTS.md"),
            json!("project\u{0}.\u{0}base"),
            json!("project\u{0}a/b\u{0}local"),
            json!("project\u{0}a\u{0}CLAUDE.md"),
            json!("project\u{0}/abs\u{0}base"),
            json!("user-global"),
        ]),
        field(vec![
            json!("AGENTS.md"),
            json!("a/b/AGENTS.local.md"),
            json!(""),
        ]),
        field(vec![json!("old/AGENTS.md"), json!(7)]),
        field(vec![
            json!("d89b0bf28ccca41f95a0aac894b4d0a41ddfe664"),
            json!("D89B0BF28CCCA41F95A0AAC894B4D0A41DDFE664"),
            json!("d89b0bf28ccca41f95a0aac894b4d0a41ddfe66"),
            json!("ü9b0bf28ccca41f95a0aac894b4d0a41ddfe664"),
        ]),
    )
        .prop_map(|(action, scope, path, prev, digest)| {
            let mut m = Map::new();
            for (k, v) in [
                ("action", action),
                ("scope", scope),
                ("path", path),
                ("previousPath", prev),
                ("digest", digest),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

/// Mostly well-formed sources with noisy changes.
fn source() -> impl Strategy<Value = Value> {
    (
        field(vec![json!("agent-instructions")]),
        field(vec![json!("instructions")]),
        field(vec![json!(1), json!(1.0), json!(2)]),
        field(vec![json!(true), json!(false)]),
        field(vec![json!("{\"schema\":1}")]),
        prop::collection::vec(change(), 0..8),
    )
        .prop_map(|(kind, form, schema, baseline, identity, changes)| {
            let mut m = Map::new();
            for (k, v) in [
                ("kind", kind),
                ("form", form),
                ("schema", schema),
                ("baseline", baseline),
                ("baselineIdentity", identity),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            m.insert("changes".to_owned(), Value::Array(changes));
            Value::Object(m)
        })
}

/// A source whose header is valid (ours) and whose changes are noisy.
fn valid_source() -> impl Strategy<Value = Value> {
    (any::<bool>(), prop::collection::vec(change(), 0..8)).prop_map(|(baseline, changes)| {
        json!({
            "kind": "agent-instructions",
            "form": "instructions",
            "schema": 1,
            "baseline": baseline,
            "changes": changes,
        })
    })
}

/// A change as the oracle expects the parser to keep it.
#[derive(Debug, PartialEq)]
struct Expected {
    action: &'static str,
    scope: String,
    path: String,
    previous_path: Option<String>,
    digest: Option<String>,
}

/// Independent oracle of R-STATE-1's change rules, written from the parser's
/// documented contract: exact action names, a scope of one of the two
/// shapes with a clean relative directory and a slot, a non-empty string
/// path, a 40-digit lowercase hex digest for `set`/`replace` (dropped on a
/// `remove`), a `previousPath` kept only when it is a string.
fn well_formed(v: &Value) -> Option<Expected> {
    let action = match v.get("action")?.as_str()? {
        "set" => "set",
        "replace" => "replace",
        "remove" => "remove",
        _ => return None,
    };
    let scope = v.get("scope")?.as_str()?;
    let scope_ok = scope == "user\u{0}AGENTS.md"
        || scope.strip_prefix("project\u{0}").is_some_and(|rest| {
            rest.split_once('\u{0}').is_some_and(|(dir, slot)| {
                (dir == "."
                    || dir
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != ".."))
                    && !slot.is_empty()
                    && !slot.contains(['\u{0}', '/'])
            })
        });
    if !scope_ok {
        return None;
    }
    let path = v.get("path")?.as_str().filter(|p| !p.is_empty())?;
    let digest = if action == "remove" {
        None
    } else {
        let d = v.get("digest")?.as_str()?;
        let hex = d.len() == 40
            && d.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return None;
        }
        Some(d.to_owned())
    };
    Some(Expected {
        action,
        scope: scope.to_owned(),
        path: path.to_owned(),
        previous_path: v
            .get("previousPath")
            .and_then(Value::as_str)
            .map(str::to_owned),
        digest,
    })
}

fn accepted_is_stable(v: &Value) -> Result<(), TestCaseError> {
    let Some(parsed) = TypedSource::from_json(v) else {
        return Ok(());
    };
    let written = parsed.to_json();
    prop_assert_eq!(TypedSource::from_json(&written), Some(parsed.clone()));
    // The written form is canonical: writing it again changes nothing.
    prop_assert_eq!(
        TypedSource::from_json(&written).map(|s| s.to_json()),
        Some(written.clone())
    );
    for (change, json) in parsed.changes.iter().zip(
        written["changes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default(),
    ) {
        prop_assert!(!change.path.is_empty());
        prop_assert_eq!(change.digest.is_some(), change.action != Action::Remove);
        prop_assert_eq!(
            json.get("digest").is_some(),
            change.action != Action::Remove
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn arbitrary_json_never_panics_and_round_trips(v in any_json()) {
        accepted_is_stable(&v)?;
    }

    #[test]
    fn near_valid_sources_keep_every_well_formed_change(v in valid_source()) {
        // Always ours: the interesting branch (which changes survive) runs
        // in every case, not only when the header happens to be valid.
        let parsed = TypedSource::from_json(&v);
        prop_assert!(parsed.is_some(), "a valid header is ours: {v}");
        let parsed = parsed.unwrap_or_else(|| unreachable!());
        let offered = v["changes"].as_array().map(Vec::as_slice).unwrap_or_default();
        let want: Vec<Expected> = offered.iter().filter_map(well_formed).collect();
        let got: Vec<Expected> = parsed
            .changes
            .iter()
            .map(|c| Expected {
                action: match c.action {
                    Action::Set => "set",
                    Action::Replace => "replace",
                    Action::Remove => "remove",
                },
                scope: c.scope.as_str().to_owned(),
                path: c.path.clone(),
                previous_path: c.previous_path.clone(),
                digest: c.digest.as_ref().map(|d| d.to_hex()),
            })
            .collect();
        prop_assert_eq!(got, want);
        accepted_is_stable(&v)?;
    }

    #[test]
    fn arbitrary_fields_under_a_valid_header_round_trip(
        extra in prop::collection::btree_map(key(), any_json(), 0..6),
        changes in prop::collection::vec(any_json(), 0..6),
    ) {
        // Random JSON alone practically never says `kind: agent-instructions`,
        // so the round trip of `accepted_is_stable` is forced to run here.
        let mut m: Map<String, Value> = extra.into_iter().collect();
        m.insert("kind".into(), json!("agent-instructions"));
        m.insert("form".into(), json!("instructions"));
        m.insert("schema".into(), json!(1));
        m.insert("changes".into(), Value::Array(changes));
        let v = Value::Object(m);
        prop_assert!(TypedSource::from_json(&v).is_some());
        accepted_is_stable(&v)?;
    }

    #[test]
    fn near_valid_headers_never_panic_and_round_trip(v in source()) {
        accepted_is_stable(&v)?;
    }

    #[test]
    fn arbitrary_text_parsed_as_json_never_panics(s in any::<String>()) {
        if let Ok(v) = serde_json::from_str::<Value>(&s) {
            accepted_is_stable(&v)?;
        }
    }
}
