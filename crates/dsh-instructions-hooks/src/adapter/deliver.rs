//! Stage 5, deliver: the pre-step whose batch is the workspace message
//! alone, persisted with the event that delivered it (R-HOOK-1, R-RT-12).

use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_runtime::WorkspaceMessage;
use dsh_instructions_session::{Session, SessionError};
use serde_json::{Map, Value};

use crate::event::{Action, HookEvent};
use crate::outcome::summary;

/// The source-JSON field that records which hook event delivered a message
/// (ignored by the typed source, R-STATE-1).
const DELIVERED_BY: &str = "hookEvent";

/// What a delivery entered, and the log's words for it.
#[derive(Debug)]
pub(crate) struct Delivered {
    pub(crate) message: Option<WorkspaceMessage>,
    pub(crate) why: String,
}

/// The note a delivery of `event` is persisted with.
fn note(event: &HookEvent) -> Map<String, Value> {
    let mut note = Map::new();
    note.insert(DELIVERED_BY.into(), Value::String(event.name.clone()));
    note
}

/// Delivers what `event` gives, after its touches (`deferred` of them
/// reconciled from earlier invocations).
///
/// # Errors
/// The session's delivery errors.
pub(crate) async fn deliver(
    session: &Session,
    event: &HookEvent,
    deferred: usize,
    cancel: &CancellationToken,
) -> Result<Delivered, SessionError> {
    let note = note(event);
    // After a tool event's touches their projections reconciled every known
    // scope a moment ago: the delivery takes that as its own instead of
    // probing every known directory twice (R-HOOK-6).
    let message = match &event.action {
        Action::Tool { .. } | Action::Shell { .. } => {
            session.deliver_after_tools(&note, cancel).await?
        }
        _ => session.deliver(&note, cancel).await?,
    };
    let mut why = match &message {
        Some(m) => summary(m),
        None => "nothing new".to_owned(),
    };
    if deferred > 0 {
        why.push_str(&format!("; {deferred} deferred touches reconciled"));
    }
    Ok(Delivered { message, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_delivering_event() {
        let v = serde_json::json!({
            "hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/w",
        });
        let tools = crate::default_tools(crate::Agent::Codex);
        let event = crate::event::event_from_value(crate::Agent::Codex, &v, &tools).expect("event");
        let n = note(&event);
        assert_eq!(n.len(), 1);
        assert_eq!(n["hookEvent"], "UserPromptSubmit");
    }
}
