//! Merging our handlers into the `hooks` object the three agents share:
//! `{"hooks": {"<Event>": [{"matcher": "…", "hooks": [{"type": "command",
//! "command": "…", "timeout": N}]}]}}` (harness README). Other groups,
//! handlers and keys are left alone; our handler is recognised by its
//! command (`agent::is_our_command`) and updated in place, never duplicated.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use dsh_instructions_hooks::{
    Agent,
    agents::{EventSpec, is_our_command},
};

use crate::error::InstallError;
use crate::layout::same_command;

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
    /// Per event of the agent: where our handlers are after an install,
    /// one per part, in part order.
    pub ours: BTreeMap<String, Vec<Pos>>,
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
) -> Result<Option<&'a Map<String, Value>>, InstallError> {
    match doc.get("hooks") {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(InstallError::wrong_type(path, "hooks", "an object")),
    }
}

/// The top-level object of a JSON settings or hook file.
pub(crate) fn root_mut<'a>(
    doc: &'a mut Value,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, InstallError> {
    doc.as_object_mut()
        .ok_or_else(|| InstallError::wrong_type(path, "(top level)", "a JSON object"))
}

/// The `hooks` object of `root`, created empty when absent.
pub(crate) fn hooks_mut<'a>(
    root: &'a mut Map<String, Value>,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, InstallError> {
    root.entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| InstallError::wrong_type(path, "hooks", "an object"))
}

/// The `hooks` object of `doc` to remove handlers from: `None` when the
/// document or its `hooks` holds nothing to remove.
pub(crate) fn hooks_to_strip<'a>(
    doc: &'a mut Value,
    path: &Path,
) -> Result<Option<&'a mut Map<String, Value>>, InstallError> {
    match doc.get_mut("hooks") {
        None => Ok(None),
        Some(Value::Object(hooks)) => Ok(Some(hooks)),
        Some(_) => Err(InstallError::wrong_type(path, "hooks", "an object")),
    }
}

/// The handler list of `event` in `hooks`, created empty when absent.
pub(crate) fn event_list_mut<'a>(
    hooks: &'a mut Map<String, Value>,
    event: &str,
    path: &Path,
) -> Result<&'a mut Vec<Value>, InstallError> {
    match hooks
        .entry(event)
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(list) => Ok(list),
        _ => Err(not_a_list(path, event)),
    }
}

/// The handler list of `event` in `doc`, empty when absent (doctor).
pub(crate) fn event_list<'a>(
    doc: &'a Value,
    event: &str,
    path: &Path,
) -> Result<&'a [Value], InstallError> {
    match hooks_of(doc, path)?.and_then(|h| h.get(event)) {
        None => Ok(&[]),
        Some(Value::Array(list)) => Ok(list),
        Some(_) => Err(not_a_list(path, event)),
    }
}

fn not_a_list(path: &Path, event: &str) -> InstallError {
    InstallError::wrong_type(path, &format!("hooks.{event}"), "an array")
}

/// Removes our handlers from one event's list, dropping groups that only
/// held ours; returns the position changes.
fn strip_list(list: &mut Vec<Value>) -> (Vec<(Pos, Pos)>, Vec<Pos>) {
    let mut moved = Vec::new();
    let mut removed = Vec::new();
    let old = std::mem::take(list);
    for (g, mut grp) in old.into_iter().enumerate() {
        if strip_group(&mut grp, (g, list.len()), &mut moved, &mut removed) {
            list.push(grp);
        }
    }
    (moved, removed)
}

/// Takes our handlers out of group `g` of an event's list, the group
/// landing at `new_g`: where each other handler moves goes to `moved`,
/// where each of ours was to `ours`. Whether the group stays: it does
/// unless it held only ours.
fn strip_group(
    grp: &mut Value,
    (g, new_g): (usize, usize),
    moved: &mut Vec<(Pos, Pos)>,
    ours: &mut Vec<Pos>,
) -> bool {
    let Some(hs) = grp.get_mut("hooks").and_then(Value::as_array_mut) else {
        return true;
    };
    let had = ours.len();
    let mut kept = Vec::new();
    for (h, hd) in std::mem::take(hs).into_iter().enumerate() {
        if is_ours(&hd) {
            ours.push((g, h));
        } else {
            moved.push(((g, h), (new_g, kept.len())));
            kept.push(hd);
        }
    }
    *hs = kept;
    !hs.is_empty() || ours.len() == had
}

fn record(moves: &mut Moves, event: &str, moved: Vec<(Pos, Pos)>, removed: Vec<Pos>) {
    if removed.is_empty() && moved.iter().all(|(a, b)| a == b) {
        return;
    }
    moves.moved.insert(event.to_owned(), moved);
    moves.removed.insert(event.to_owned(), removed);
}

/// Registers our commands (`Agent::commands(base)`: one per part) for every
/// event of `agent` in `doc`, and removes our handlers from any other event
/// (left over from an older layout). Our entries already there — with or
/// without `--part`, any binary path — are rewritten where the first of
/// them stands; without any, ours go after the user's groups.
pub(crate) fn install(
    doc: &mut Value,
    path: &Path,
    agent: Agent,
    base: &str,
) -> Result<Moves, InstallError> {
    let hooks = hooks_mut(root_mut(doc, path)?, path)?;
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
    let handlers: Vec<Value> = agent
        .commands(base)
        .iter()
        .map(|c| handler(agent, c))
        .collect();
    for spec in agent.events() {
        let list = event_list_mut(hooks, spec.name, path)?;
        let (moved, removed, ours) = merge_list(list, spec, &handlers);
        record(&mut moves, spec.name, moved, removed);
        moves.ours.insert(spec.name.to_owned(), ours);
    }
    Ok(moves)
}

/// Whether a group holds handlers and only ours.
fn ours_only(grp: &Value) -> bool {
    grp.get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hs| !hs.is_empty() && hs.iter().all(is_ours))
}

/// Rewrites one event's list so it holds `handlers`, each in its own group,
/// in order; returns (foreign handlers moved, our handlers removed, where
/// ours are now). A group of ours is reused (its other keys kept) where
/// possible, so an install over an identical one changes nothing.
fn merge_list(
    list: &mut Vec<Value>,
    spec: &EventSpec,
    handlers: &[Value],
) -> (Vec<(Pos, Pos)>, Vec<Pos>, Vec<Pos>) {
    let old = std::mem::take(list);
    let first = old.iter().position(ours_only);
    let mut reuse: Vec<Value> = old.iter().filter(|g| ours_only(g)).cloned().collect();
    reuse.reverse();
    let mut moved = Vec::new();
    let mut old_ours = Vec::new();
    let mut ours = Vec::new();
    let mut emit = |list: &mut Vec<Value>, reuse: &mut Vec<Value>| {
        for want in handlers {
            let g = match reuse.pop() {
                Some(mut g) => {
                    update_group(&mut g, spec, want.clone());
                    g
                }
                None => group(spec, want.clone()),
            };
            ours.push((list.len(), 0));
            list.push(g);
        }
    };
    for (g, mut grp) in old.into_iter().enumerate() {
        if ours_only(&grp) {
            let n = grp["hooks"].as_array().map_or(0, Vec::len);
            old_ours.extend((0..n).map(|h| (g, h)));
            if Some(g) == first {
                emit(list, &mut reuse);
            }
            continue;
        }
        // Not ours only, so the group stays.
        strip_group(&mut grp, (g, list.len()), &mut moved, &mut old_ours);
        list.push(grp);
    }
    if first.is_none() {
        emit(list, &mut reuse);
    }
    // A position that holds one of ours before and after keeps its trust
    // entry (its hash is brought up to date); only the others are removed.
    let removed = old_ours.into_iter().filter(|p| !ours.contains(p)).collect();
    (moved, removed, ours)
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
pub(crate) fn uninstall(doc: &mut Value, path: &Path) -> Result<Moves, InstallError> {
    let mut moves = Moves::default();
    let Some(hooks) = hooks_to_strip(doc, path)? else {
        return Ok(moves);
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
    if hooks.is_empty()
        && !moves.removed.is_empty()
        && let Some(root) = doc.as_object_mut()
    {
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

/// The part number of one of our commands (`… --part K`), `None` without.
pub(crate) fn part_of(command: &str) -> Option<u32> {
    command
        .rsplit_once(" --part ")
        .and_then(|(_, k)| k.trim().parse().ok())
}

/// What doctor finds for one registered entry of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The part (`None` for Gemini CLI, or an old entry without `--part`).
    pub part: Option<u32>,
    /// Its status.
    pub status: EventStatus,
    /// Where it is, when found.
    pub pos: Option<Pos>,
}

/// Checks one event of `doc` against what `install` would write for
/// `base`: one finding per part (per event for Gemini CLI), plus one for
/// any old entry of ours without `--part` where parts are expected.
pub(crate) fn check(
    doc: &Value,
    path: &Path,
    agent: Agent,
    spec: &EventSpec,
    base: &str,
) -> Result<Vec<Found>, InstallError> {
    let list = event_list(doc, spec.name, path)?;
    let ours = positions(list);
    let cmd_at = |&(g, h): &Pos| {
        list[g]["hooks"][h]
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut out = Vec::new();
    let commands = agent.commands(base);
    let parted = commands.len() > 1;
    for (k, command) in commands.iter().enumerate() {
        let part = parted.then_some(k as u32 + 1);
        let mine: Vec<Pos> = ours
            .iter()
            .filter(|p| !parted || part_of(&cmd_at(p)) == part)
            .copied()
            .collect();
        let found = match mine.as_slice() {
            [] => Found {
                part,
                status: EventStatus::Missing,
                pos: None,
            },
            [one] => Found {
                part,
                status: status_of(list, *one, agent, spec, command),
                pos: Some(*one),
            },
            many => Found {
                part,
                status: EventStatus::Duplicated { count: many.len() },
                pos: Some(many[0]),
            },
        };
        out.push(found);
    }
    if parted {
        let stray: Vec<Pos> = ours
            .iter()
            .filter(|p| part_of(&cmd_at(p)).is_none_or(|k| k == 0 || k > agent.parts()))
            .copied()
            .collect();
        if let Some(&pos) = stray.first() {
            out.push(Found {
                part: None,
                status: EventStatus::Stale {
                    detail: format!(
                        "`{}` is an entry of an older install (no valid --part): install rewrites it",
                        cmd_at(&pos)
                    ),
                },
                pos: Some(pos),
            });
        }
    }
    Ok(out)
}

fn status_of(
    list: &[Value],
    (g, h): Pos,
    agent: Agent,
    spec: &EventSpec,
    command: &str,
) -> EventStatus {
    let grp = &list[g];
    let found = &grp["hooks"][h];
    let found_cmd = found.get("command").and_then(Value::as_str).unwrap_or("");
    let matcher = grp.get("matcher").and_then(Value::as_str);
    let matcher_ok = match spec.matcher {
        Some(m) => matcher == Some(m),
        None => matches!(matcher, None | Some("" | "*")),
    };
    if !same_command(found_cmd, command) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_hooks::agents::PARTS;

    const CMD: &str = "/bin/dsh-instructions hook --agent claude";

    fn part(k: u32) -> String {
        format!("{CMD} --part {k}")
    }

    fn cmds(list: &Value) -> Vec<String> {
        list.as_array()
            .expect("array")
            .iter()
            .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
            .map(|h| h["command"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    #[test]
    fn install_appends_one_group_per_part_after_foreign_groups() {
        let mut d = json!({"hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}
        ]}});
        let moves = install(&mut d, Path::new("s"), Agent::Claude, CMD).expect("ok");
        let list = d["hooks"]["PostToolUse"].as_array().expect("array");
        assert_eq!(list.len(), 1 + PARTS as usize);
        assert_eq!(list[0]["hooks"][0]["command"], "lint");
        for k in 1..=PARTS {
            let g = &list[k as usize];
            assert_eq!(g["hooks"].as_array().map(Vec::len), Some(1));
            assert_eq!(g["hooks"][0]["command"], part(k).as_str());
            assert_eq!(
                g["matcher"],
                "Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|LS|Bash"
            );
        }
        let want: Vec<Pos> = (1..=PARTS as usize).map(|g| (g, 0)).collect();
        assert_eq!(moves.ours["PostToolUse"], want);
        assert!(moves.removed.is_empty());
    }

    #[test]
    fn a_second_install_changes_nothing() {
        let mut d = json!({});
        install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        let once = d.clone();
        let moves = install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        assert_eq!(d, once);
        assert!(moves.removed.is_empty() && moves.moved.is_empty());
    }

    #[test]
    fn an_old_entry_without_part_is_rewritten_where_it_stood() {
        let mut d = json!({"hooks": {"SessionStart": [
            {"hooks": [{"type": "command", "command": "/old/dsh-instructions hook --agent claude", "timeout": 10}]},
            {"hooks": [{"type": "command", "command": "other"}]}
        ]}});
        let moves = install(&mut d, Path::new("s"), Agent::Claude, CMD).expect("ok");
        let mut want: Vec<String> = (1..=PARTS).map(part).collect();
        want.push("other".to_owned());
        assert_eq!(cmds(&d["hooks"]["SessionStart"]), want);
        assert_eq!(moves.ours["SessionStart"][0], (0, 0));
        assert_eq!(
            moves.moved["SessionStart"],
            vec![((1, 0), (PARTS as usize, 0))]
        );
        // The old entry's position is reused by part 1: its trust entry stays.
        assert!(moves.removed["SessionStart"].is_empty());
    }

    #[test]
    fn gemini_gets_one_entry_per_event() {
        let mut d = json!({});
        install(
            &mut d,
            Path::new("s"),
            Agent::Gemini,
            "g hook --agent gemini",
        )
        .expect("ok");
        assert_eq!(cmds(&d["hooks"]["BeforeModel"]), ["g hook --agent gemini"]);
        assert_eq!(d["hooks"]["BeforeModel"][0].get("matcher"), None);
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
    fn mixed_groups_lose_ours_and_foreign_handlers_shift() {
        let ours = json!({"type": "command", "command": CMD, "timeout": 10});
        let mut d = json!({"hooks": {"UserPromptSubmit": [
            {"hooks": [ours.clone(), {"type": "command", "command": "keep"}]},
            {"hooks": [ours]}
        ]}});
        let moves = install(&mut d, Path::new("s"), Agent::Codex, CMD).expect("ok");
        let list = &d["hooks"]["UserPromptSubmit"];
        let mut want = vec!["keep".to_owned()];
        want.extend((1..=PARTS).map(part));
        assert_eq!(cmds(list), want);
        assert_eq!(moves.moved["UserPromptSubmit"], vec![((0, 1), (0, 0))]);
        assert_eq!(moves.removed["UserPromptSubmit"], vec![(0, 0)]);
        assert_eq!(moves.ours["UserPromptSubmit"][0], (1, 0));
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
    fn check_reports_each_part_present_missing_stale_duplicated_or_old() {
        let mut d = json!({});
        install(&mut d, Path::new("s"), Agent::Claude, CMD).expect("ok");
        let spec = &Agent::Claude.events()[2];
        let st = |d: &Value, cmd: &str| {
            check(d, Path::new("s"), Agent::Claude, spec, cmd)
                .expect("ok")
                .into_iter()
                .map(|f| (f.part, f.status))
                .collect::<Vec<_>>()
        };
        let all = st(&d, CMD);
        assert_eq!(all.len(), PARTS as usize);
        assert!(all.iter().all(|(_, s)| *s == EventStatus::Present));
        assert_eq!(all[3].0, Some(4));
        assert!(matches!(
            st(&d, "/new/dsh-instructions hook --agent claude")[0].1,
            EventStatus::Stale { .. }
        ));
        d["hooks"]["PostToolUse"][2]["matcher"] = json!("Read");
        assert!(
            matches!(&st(&d, CMD)[2].1, EventStatus::Stale { detail } if detail.contains("matcher"))
        );
        let extra = d["hooks"]["PostToolUse"][0].clone();
        let list = d["hooks"]["PostToolUse"].as_array_mut().expect("array");
        list.push(extra);
        list.remove(4); // part 5 gone
        let now = st(&d, CMD);
        assert_eq!(now[0].1, EventStatus::Duplicated { count: 2 });
        assert_eq!(now[4].1, EventStatus::Missing);
        let old =
            json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": CMD}]}]}});
        let found = st(&old, CMD);
        assert!(
            matches!(&found[PARTS as usize], (None, EventStatus::Stale { detail }) if detail.contains("older install"))
        );
        assert_eq!(st(&json!({}), CMD)[0].1, EventStatus::Missing);
    }
}
