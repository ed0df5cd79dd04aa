//! Merging our handlers into the `hooks` object the three agents share:
//! `{"hooks": {"<Event>": [{"matcher": "…", "hooks": [{"type": "command",
//! "command": "…", "timeout": N}]}]}}` (harness README). Other groups,
//! handlers and keys are left alone; our handler is recognised by its
//! command (`agent::is_our_command`) and updated in place, never duplicated.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::agent::{Agent, EventSpec, is_our_command};
use crate::error::HookError;

/// A handler's position: (group index, handler index) inside one event's list.
pub(crate) type Pos = (usize, usize);

/// What a merge did to the positions of the handlers, per event name: Codex
/// keys its persisted trust by position, so the trust table follows these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Moves {
    /// Per event: where each surviving foreign handler moved (old → new).
    pub moved: BTreeMap<String, Vec<(Pos, Pos)>>,
    /// Per event: the positions of our handlers that were removed.
    pub removed: BTreeMap<String, Vec<Pos>>,
    /// Per event of the agent: where our handler is after an install.
    pub ours: BTreeMap<String, Pos>,
}

/// The handler object we register.
pub(crate) fn handler(agent: Agent, command: &str) -> Value {
    json!({"type": "command", "command": command, "timeout": agent.timeout_value()})
}

fn group(spec: &EventSpec, handler: Value) -> Value {
    let mut g = Map::new();
    if let Some(m) = spec.matcher {
        g.insert("matcher".to_owned(), Value::String(m.to_owned()));
    }
    g.insert("hooks".to_owned(), Value::Array(vec![handler]));
    Value::Object(g)
}

/// Whether a handler object is one of ours.
pub(crate) fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(is_our_command)
}

/// The `hooks` object of `doc`, `None` when absent; an error when it is not
/// an object.
pub(crate) fn hooks_of<'a>(
    doc: &'a Value,
    path: &Path,
) -> Result<Option<&'a Map<String, Value>>, HookError> {
    match doc.get("hooks") {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(HookError::wrong_type(path, "hooks", "an object")),
    }
}

fn hooks_mut<'a>(doc: &'a mut Value, path: &Path) -> Result<&'a mut Map<String, Value>, HookError> {
    let Value::Object(root) = doc else {
        return Err(HookError::wrong_type(path, "(top level)", "a JSON object"));
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    hooks
        .as_object_mut()
        .ok_or_else(|| HookError::wrong_type(path, "hooks", "an object"))
}

/// Removes our handlers from one event's list, dropping groups that only
/// held ours; returns the position changes.
fn strip_list(list: &mut Vec<Value>) -> (Vec<(Pos, Pos)>, Vec<Pos>) {
    let mut moved = Vec::new();
    let mut removed = Vec::new();
    let old = std::mem::take(list);
    for (g, mut grp) in old.into_iter().enumerate() {
        let handlers = grp.get_mut("hooks").and_then(Value::as_array_mut);
        match handlers {
            Some(hs) if hs.iter().any(is_ours) => {
                let new_g = list.len();
                let mut kept = Vec::new();
                for (h, hd) in std::mem::take(hs).into_iter().enumerate() {
                    if is_ours(&hd) {
                        removed.push((g, h));
                    } else {
                        moved.push(((g, h), (new_g, kept.len())));
                        kept.push(hd);
                    }
                }
                if !kept.is_empty() {
                    *hs = kept;
                    list.push(grp);
                }
            }
            other => {
                let n = other.map_or(0, |hs| hs.len());
                let new_g = list.len();
                moved.extend((0..n).map(|h| ((g, h), (new_g, h))));
                list.push(grp);
            }
        }
    }
    (moved, removed)
}

fn record(moves: &mut Moves, event: &str, moved: Vec<(Pos, Pos)>, removed: Vec<Pos>) {
    if removed.is_empty() && moved.iter().all(|(a, b)| a == b) {
        return;
    }
    moves.moved.insert(event.to_owned(), moved);
    moves.removed.insert(event.to_owned(), removed);
}

/// Registers `command` for every event of `agent` in `doc`, and removes our
/// handlers from any other event (left over from an older layout).
pub(crate) fn install(
    doc: &mut Value,
    path: &Path,
    agent: Agent,
    command: &str,
) -> Result<Moves, HookError> {
    let hooks = hooks_mut(doc, path)?;
    let mut moves = Moves::default();
    let wanted: Vec<&str> = agent.events().iter().map(|e| e.name).collect();
    for (name, list) in hooks.iter_mut() {
        if wanted.contains(&name.as_str()) {
            continue;
        }
        if let Value::Array(list) = list {
            let (moved, removed) = strip_list(list);
            record(&mut moves, name, moved, removed);
        }
    }
    hooks.retain(|name, v| {
        wanted.contains(&name.as_str())
            || !matches!(v, Value::Array(l) if l.is_empty())
            || !moves.removed.contains_key(name)
    });
    for spec in agent.events() {
        let list = hooks
            .entry(spec.name)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(HookError::wrong_type(
                path,
                &format!("hooks.{}", spec.name),
                "an array",
            ));
        };
        let want = handler(agent, command);
        let ours: Vec<Pos> = positions(list);
        let in_place = match ours.as_slice() {
            [(g, 0)] => list[*g]
                .get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.len() == 1),
            _ => false,
        };
        if in_place {
            let g = ours[0].0;
            update_group(&mut list[g], spec, want);
            moves.ours.insert(spec.name.to_owned(), (g, 0));
        } else {
            let (moved, removed) = strip_list(list);
            record(&mut moves, spec.name, moved, removed);
            list.push(group(spec, want));
            moves.ours.insert(spec.name.to_owned(), (list.len() - 1, 0));
        }
    }
    Ok(moves)
}

/// Sets our group's matcher and handler, keeping any other keys of the group.
fn update_group(grp: &mut Value, spec: &EventSpec, want: Value) {
    let Some(obj) = grp.as_object_mut() else {
        return;
    };
    match spec.matcher {
        Some(m) => {
            if obj.get("matcher").and_then(Value::as_str) != Some(m) {
                obj.insert("matcher".to_owned(), Value::String(m.to_owned()));
            }
        }
        None => {
            // Absent, "" and "*" all match everything, but Codex hashes a
            // present "" into the hook's trust identity: keep one form, absent.
            obj.remove("matcher");
        }
    }
    if let Some(Value::Array(hs)) = obj.get_mut("hooks")
        && let Some(h) = hs.first_mut()
        && *h != want
    {
        *h = want;
    }
}

/// Our handlers' positions in one event's list.
pub(crate) fn positions(list: &[Value]) -> Vec<Pos> {
    let mut out = Vec::new();
    for (g, grp) in list.iter().enumerate() {
        if let Some(hs) = grp.get("hooks").and_then(Value::as_array) {
            out.extend(
                hs.iter()
                    .enumerate()
                    .filter(|(_, h)| is_ours(h))
                    .map(|(h, _)| (g, h)),
            );
        }
    }
    out
}

/// Removes every handler of ours from `doc`; an event list, and then the
/// `hooks` object, that only held ours is removed too.
pub(crate) fn uninstall(doc: &mut Value, path: &Path) -> Result<Moves, HookError> {
    let mut moves = Moves::default();
    let Value::Object(root) = doc else {
        return Ok(moves);
    };
    let Some(hooks) = root.get_mut("hooks") else {
        return Ok(moves);
    };
    let Value::Object(hooks) = hooks else {
        return Err(HookError::wrong_type(path, "hooks", "an object"));
    };
    for (name, list) in hooks.iter_mut() {
        if let Value::Array(list) = list {
            let (moved, removed) = strip_list(list);
            record(&mut moves, name, moved, removed);
        }
    }
    hooks.retain(|name, v| {
        !(moves.removed.contains_key(name) && matches!(v, Value::Array(l) if l.is_empty()))
    });
    if hooks.is_empty() && !moves.removed.is_empty() {
        root.remove("hooks");
    }
    Ok(moves)
}

/// What doctor finds for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventStatus {
    /// Our handler is there with the expected command and matcher.
    Present,
    /// No handler of ours for this event.
    Missing,
    /// Ours is there but differs (another binary path, matcher or timeout).
    Stale {
        /// What differs, for the report.
        detail: String,
    },
    /// More than one handler of ours: the adapter would run twice.
    Duplicated {
        /// How many.
        count: usize,
    },
}

/// Checks one event of `doc` against what `install` would write.
pub(crate) fn check(
    doc: &Value,
    path: &Path,
    agent: Agent,
    spec: &EventSpec,
    command: &str,
) -> Result<(EventStatus, Option<Pos>), HookError> {
    let Some(hooks) = hooks_of(doc, path)? else {
        return Ok((EventStatus::Missing, None));
    };
    let Some(list) = hooks.get(spec.name) else {
        return Ok((EventStatus::Missing, None));
    };
    let Value::Array(list) = list else {
        return Err(HookError::wrong_type(
            path,
            &format!("hooks.{}", spec.name),
            "an array",
        ));
    };
    let ours = positions(list);
    let Some(&(g, h)) = ours.first() else {
        return Ok((EventStatus::Missing, None));
    };
    if ours.len() > 1 {
        return Ok((EventStatus::Duplicated { count: ours.len() }, Some((g, h))));
    }
    let grp = &list[g];
    let found = &grp["hooks"][h];
    let found_cmd = found.get("command").and_then(Value::as_str).unwrap_or("");
    let matcher = grp.get("matcher").and_then(Value::as_str);
    let matcher_ok = match spec.matcher {
        Some(m) => matcher == Some(m),
        None => matches!(matcher, None | Some("" | "*")),
    };
    let status = if found_cmd != command {
        EventStatus::Stale {
            detail: format!("command is `{found_cmd}`, expected `{command}`"),
        }
    } else if !matcher_ok {
        EventStatus::Stale {
            detail: format!(
                "matcher is {:?}, expected {:?}",
                matcher.unwrap_or(""),
                spec.matcher.unwrap_or("")
            ),
        }
    } else if found.get("timeout").and_then(Value::as_u64) != Some(agent.timeout_value()) {
        EventStatus::Stale {
            detail: format!(
                "timeout is {}, expected {}",
                found
                    .get("timeout")
                    .map_or("absent".to_owned(), Value::to_string),
                agent.timeout_value()
            ),
        }
    } else {
        EventStatus::Present
    };
    Ok((status, Some((g, h))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/bin/dsh-instructions hook --agent claude";

    fn doc(v: Value) -> Value {
        v
    }

    #[test]
    fn install_appends_after_foreign_groups_and_keeps_them() {
        let mut d = doc(json!({"hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}
        ]}}));
        let moves = install(&mut d, Path::new("s"), Agent::Claude, CMD).expect("ok");
        let list = d["hooks"]["PostToolUse"].as_array().expect("array");
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["hooks"][0]["command"], "lint");
        assert_eq!(list[1]["hooks"][0]["command"], CMD);
        assert_eq!(
            list[1]["matcher"],
            "Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|LS"
        );
        assert_eq!(moves.ours["PostToolUse"], (1, 0));
        assert!(moves.removed.is_empty());
    }

    #[test]
    fn a_second_install_changes_nothing() {
        let mut d = json!({});
        install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        let once = d.clone();
        install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        assert_eq!(d, once);
    }

    #[test]
    fn a_moved_binary_is_updated_in_place() {
        let mut d = json!({"hooks": {"SessionStart": [
            {"hooks": [{"type": "command", "command": "/old/dsh-instructions hook --agent claude", "timeout": 10}]},
            {"hooks": [{"type": "command", "command": "other"}]}
        ]}});
        let moves = install(&mut d, Path::new("s"), Agent::Claude, CMD).expect("ok");
        assert_eq!(d["hooks"]["SessionStart"][0]["hooks"][0]["command"], CMD);
        assert_eq!(
            d["hooks"]["SessionStart"][1]["hooks"][0]["command"],
            "other"
        );
        assert_eq!(moves.ours["SessionStart"], (0, 0));
    }

    #[test]
    fn a_match_all_matcher_of_ours_is_dropped_so_codex_hashes_what_we_hash() {
        let mut d = json!({"hooks": {"SessionStart": [
            {"matcher": "", "hooks": [{"type": "command", "command": CMD, "timeout": 10}]}
        ]}});
        install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        assert_eq!(d["hooks"]["SessionStart"][0].get("matcher"), None);
    }

    #[test]
    fn duplicates_collapse_into_one_group_and_foreign_handlers_shift() {
        let ours = json!({"type": "command", "command": CMD, "timeout": 10});
        let mut d = json!({"hooks": {"UserPromptSubmit": [
            {"hooks": [ours.clone(), {"type": "command", "command": "keep"}]},
            {"hooks": [ours]}
        ]}});
        let moves = install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        let list = d["hooks"]["UserPromptSubmit"].as_array().expect("array");
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0]["hooks"],
            json!([{"type": "command", "command": "keep"}])
        );
        assert_eq!(moves.moved["UserPromptSubmit"], vec![((0, 1), (0, 0))]);
        assert_eq!(moves.removed["UserPromptSubmit"], vec![(0, 0), (1, 0)]);
        assert_eq!(moves.ours["UserPromptSubmit"], (1, 0));
    }

    #[test]
    fn uninstall_removes_only_ours_and_the_containers_they_emptied() {
        let mut d = json!({"model": "x", "hooks": {}});
        install(&mut d, Path::new("s"), Agent::Gemini, CMD).expect("ok");
        d["hooks"]["AfterTool"]
            .as_array_mut()
            .expect("array")
            .insert(0, json!({"hooks": [{"type": "command", "command": "fmt"}]}));
        let moves = uninstall(&mut d, Path::new("s")).expect("ok");
        assert_eq!(
            d,
            json!({"model": "x", "hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "fmt"}]}]}})
        );
        assert_eq!(moves.removed["AfterTool"], vec![(1, 0)]);
    }

    #[test]
    fn wrong_types_are_errors_naming_the_key() {
        let mut d = json!({"hooks": []});
        let e = install(&mut d, Path::new("/s.json"), Agent::Claude, CMD).unwrap_err();
        assert_eq!(e.to_string(), "/s.json: `hooks` must be an object");
        let mut d = json!({"hooks": {"SessionStart": {}}});
        let e = install(&mut d, Path::new("/s.json"), Agent::Claude, CMD).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/s.json: `hooks.SessionStart` must be an array"
        );
    }

    #[test]
    fn check_reports_present_missing_stale_and_duplicated() {
        let mut d = json!({});
        install(&mut d, Path::new("s"), Agent::Claude, CMD).expect("ok");
        let spec = &Agent::Claude.events()[2];
        let st = |d: &Value, cmd: &str| {
            check(d, Path::new("s"), Agent::Claude, spec, cmd)
                .expect("ok")
                .0
        };
        assert_eq!(st(&d, CMD), EventStatus::Present);
        assert!(matches!(
            st(&d, "/new/dsh-instructions hook --agent claude"),
            EventStatus::Stale { .. }
        ));
        d["hooks"]["PostToolUse"][0]["matcher"] = json!("Read");
        assert!(matches!(st(&d, CMD), EventStatus::Stale { detail } if detail.contains("matcher")));
        let extra = d["hooks"]["PostToolUse"][0].clone();
        d["hooks"]["PostToolUse"]
            .as_array_mut()
            .expect("array")
            .push(extra);
        assert_eq!(st(&d, CMD), EventStatus::Duplicated { count: 2 });
        assert_eq!(st(&json!({}), CMD), EventStatus::Missing);
    }
}
