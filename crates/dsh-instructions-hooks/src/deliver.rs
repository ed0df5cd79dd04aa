//! Stage 5, deliver: the pre-step whose batch is the workspace message
//! alone, persisted with the event that delivered it (R-HOOK-1, R-RT-12).

use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_runtime::WorkspaceMessage;
use dsh_instructions_session::{Session, SessionError};
use serde_json::{Map, Value};

use crate::event::{Action, HookEvent};
use crate::outcome::summary;
#[cfg(test)]
use crate::touch::dropped_on_resume;
use crate::touch::{DELIVERED_BY, FOLLOW_UP};

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
    if event.action == Action::FollowUp {
        note.insert(FOLLOW_UP.into(), Value::Bool(true));
    }
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
        let tools = crate::event::default_tools(crate::Agent::Codex);
        let event =
            crate::event::HookEvent::parse(crate::Agent::Codex, v.to_string().as_bytes(), &tools)
                .expect("event");
        let n = note(&event);
        assert_eq!(n.len(), 1);
        assert_eq!(n["hookEvent"], "UserPromptSubmit");
    }

    /// Decision 0072: a resume of Copilot CLI or Qwen Code hides what a
    /// session start or a Qwen follow-up delivered, nothing else.
    #[rstest::rstest]
    #[case::qwen_start(crate::Agent::Qwen, "SessionStart", "hi", true)]
    #[case::copilot_start(crate::Agent::Copilot, "sessionStart", "hi", true)]
    #[case::qwen_follow_up(crate::Agent::Qwen, "UserPromptSubmit", "", true)]
    #[case::qwen_prompt(crate::Agent::Qwen, "UserPromptSubmit", "hi", false)]
    #[case::copilot_prompt(crate::Agent::Copilot, "userPromptSubmitted", "", false)]
    #[case::qwen_tool(crate::Agent::Qwen, "PostToolUse", "", false)]
    fn what_a_resume_drops(
        #[case] agent: crate::Agent,
        #[case] name: &str,
        #[case] prompt: &str,
        #[case] dropped: bool,
    ) {
        let v = serde_json::json!({
            "hook_event_name": name, "session_id": "s", "cwd": "/w", "prompt": prompt,
        });
        let tools = crate::event::default_tools(agent);
        let event =
            crate::event::HookEvent::parse(agent, v.to_string().as_bytes(), &tools).expect("event");
        let source = Value::Object(note(&event));
        assert_eq!(dropped_on_resume(&source), dropped, "{source}");
    }
}
