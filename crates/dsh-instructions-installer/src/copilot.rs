//! GitHub Copilot CLI's hooks: a file of the adapter's own,
//! `~/.copilot/hooks/dsh-instructions.json` (a project's
//! `.github/hooks/dsh-instructions.json`), in Copilot's shape
//! `{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "…",
//! "timeoutSec": N}]}}` (harness README). Copilot reads every `*.json` in
//! that directory, so no other file is touched; each command names its
//! event (`--event E`, decision 0065), as Copilot's stdin does not. Our
//! handlers are recognised by their `bash` command; anything else someone
//! put into the file is kept.

use std::path::Path;

use serde_json::{Value, json};

use dsh_instructions_hooks::{
    Agent,
    agents::{EventSpec, is_our_command},
};

use crate::error::InstallError;
use crate::hooks::{
    EventStatus, Found, event_list, event_list_mut, hooks_mut, hooks_to_strip, root_mut,
};
use crate::layout::same_command;

/// The version of Copilot's hook-file format written.
const VERSION: u64 = 1;

/// The handler object we register for `event`.
fn handler(base: &str, event: &str) -> Value {
    let command = Agent::Copilot
        .event_commands(base, event)
        .pop()
        .unwrap_or_default();
    json!({"type": "command", "bash": command, "timeoutSec": Agent::Copilot.timeout_value()})
}

fn is_ours(handler: &Value) -> bool {
    handler
        .get("bash")
        .and_then(Value::as_str)
        .is_some_and(is_our_command)
}

/// Whether one event's list holds a handler of ours.
pub(crate) fn any_ours(list: &[Value]) -> bool {
    list.iter().any(is_ours)
}

/// Registers our handler for every event of Copilot CLI (in place of ours
/// already there, after anyone else's) and removes ours from any other
/// event.
pub(crate) fn install(doc: &mut Value, path: &Path, base: &str) -> Result<(), InstallError> {
    let root = root_mut(doc, path)?;
    if !root.contains_key("version") {
        root.insert("version".to_owned(), Value::from(VERSION));
    }
    let hooks = hooks_mut(root, path)?;
    let events = Agent::Copilot.events();
    for (name, list) in hooks.iter_mut() {
        if events.iter().any(|e| e.name == name) {
            continue;
        }
        if let Value::Array(list) = list {
            list.retain(|h| !is_ours(h));
        }
    }
    hooks.retain(|name, v| {
        events.iter().any(|e| e.name == name) || !matches!(v, Value::Array(l) if l.is_empty())
    });
    for spec in events {
        let want = handler(base, spec.name);
        let list = event_list_mut(hooks, spec.name, path)?;
        match list.iter().position(is_ours) {
            Some(first) => {
                if list[first] != want {
                    list[first] = want;
                }
                let mut seen = 0;
                list.retain(|h| {
                    let ours = is_ours(h);
                    seen += usize::from(ours);
                    !ours || seen == 1
                });
            }
            None => list.push(want),
        }
    }
    Ok(())
}

/// Removes our handlers; an event list, then `hooks`, then the `version`
/// we wrote, that only held ours go too, so a file install created is
/// removed whole.
pub(crate) fn uninstall(doc: &mut Value, path: &Path) -> Result<(), InstallError> {
    let Some(hooks) = hooks_to_strip(doc, path)? else {
        return Ok(());
    };
    let mut removed = false;
    for list in hooks.values_mut() {
        if let Value::Array(list) = list {
            let before = list.len();
            list.retain(|h| !is_ours(h));
            removed |= list.len() != before;
            if list.is_empty() && before > 0 {
                *list = Vec::new();
            }
        }
    }
    if !removed {
        return Ok(());
    }
    hooks.retain(|_, v| !matches!(v, Value::Array(l) if l.is_empty()));
    if hooks.is_empty()
        && let Some(root) = doc.as_object_mut()
    {
        root.remove("hooks");
        if root.len() == 1 && root.get("version") == Some(&Value::from(VERSION)) {
            root.remove("version");
        }
    }
    Ok(())
}

/// What doctor finds for one event: our one handler with the command
/// install would write, or how it differs.
pub(crate) fn check(
    doc: &Value,
    path: &Path,
    spec: &EventSpec,
    base: &str,
) -> Result<Found, InstallError> {
    let list = event_list(doc, spec.name, path)?;
    let ours: Vec<&Value> = list.iter().filter(|h| is_ours(h)).collect();
    let want = handler(base, spec.name);
    let status = match ours.as_slice() {
        [] => EventStatus::Missing,
        [one] => {
            let found = one.get("bash").and_then(Value::as_str).unwrap_or("");
            let wanted = want["bash"].as_str().unwrap_or("");
            if !same_command(found, wanted) {
                EventStatus::Stale {
                    detail: format!("runs `{found}`, expected `{wanted}`"),
                }
            } else if one.get("timeoutSec") != want.get("timeoutSec") {
                EventStatus::Stale {
                    detail: format!(
                        "timeoutSec {}, expected {}",
                        one.get("timeoutSec").unwrap_or(&Value::Null),
                        want["timeoutSec"]
                    ),
                }
            } else {
                EventStatus::Present
            }
        }
        many => EventStatus::Duplicated { count: many.len() },
    };
    Ok(Found {
        part: None,
        status,
        pos: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "/b/dsh-instructions hook --agent copilot";

    #[test]
    fn install_writes_one_handler_per_event_naming_it() {
        let mut doc = json!({});
        install(&mut doc, Path::new("f"), BASE).expect("ok");
        assert_eq!(doc["version"], 1);
        for spec in Agent::Copilot.events() {
            assert_eq!(
                doc["hooks"][spec.name],
                json!([{"type": "command", "bash": format!("{BASE} --event {}", spec.name), "timeoutSec": 10}])
            );
            let found = check(&doc, Path::new("f"), spec, BASE).expect("ok");
            assert_eq!(found.status, EventStatus::Present);
        }
        let again = doc.clone();
        install(&mut doc, Path::new("f"), BASE).expect("ok");
        assert_eq!(doc, again, "idempotent");
    }

    /// Someone else's handler in our file stays, ours is rewritten in
    /// place (another binary), and ours on an event we no longer register
    /// goes.
    #[test]
    fn install_keeps_others_and_moves_ours() {
        let mut doc = json!({"version": 1, "hooks": {
            "sessionStart": [{"type": "command", "bash": "echo hi"},
                             {"type": "command", "bash": "/old/dsh-instructions hook --agent copilot --event sessionStart", "timeoutSec": 10}],
            "agentStop": [{"type": "command", "bash": "/old/dsh-instructions hook --agent copilot --event agentStop"}]
        }});
        let spec = &Agent::Copilot.events()[0];
        let before = check(&doc, Path::new("f"), spec, BASE).expect("ok");
        assert!(
            matches!(before.status, EventStatus::Stale { .. }),
            "{before:?}"
        );
        install(&mut doc, Path::new("f"), BASE).expect("ok");
        assert_eq!(doc["hooks"]["sessionStart"][0]["bash"], "echo hi");
        assert_eq!(
            doc["hooks"]["sessionStart"][1]["bash"],
            format!("{BASE} --event sessionStart")
        );
        assert!(doc["hooks"].get("agentStop").is_none());
        uninstall(&mut doc, Path::new("f")).expect("ok");
        assert_eq!(
            doc,
            json!({"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi"}]}})
        );
    }

    #[test]
    fn uninstall_of_our_file_leaves_nothing() {
        let mut doc = json!({});
        install(&mut doc, Path::new("f"), BASE).expect("ok");
        uninstall(&mut doc, Path::new("f")).expect("ok");
        assert_eq!(doc, json!({}));
    }

    #[test]
    fn a_duplicate_is_reported_and_a_wrong_type_refused() {
        let h = json!({"type": "command", "bash": format!("{BASE} --event sessionStart"), "timeoutSec": 10});
        let doc = json!({"hooks": {"sessionStart": [h.clone(), h]}});
        let spec = &Agent::Copilot.events()[0];
        let found = check(&doc, Path::new("f"), spec, BASE).expect("ok");
        assert_eq!(found.status, EventStatus::Duplicated { count: 2 });
        let mut bad = json!({"hooks": {"sessionStart": {}}});
        let e = install(&mut bad, Path::new("f"), BASE).expect_err("not an array");
        assert!(e.to_string().contains("hooks.sessionStart"), "{e}");
    }
}
