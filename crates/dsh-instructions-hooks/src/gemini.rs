//! Gemini CLI through `BeforeModel` (R-HOOK-9, decision 0020).
//!
//! Gemini CLI loses prompt-attached context on resume and gives no signal
//! after compressing, so nothing the adapter gives is kept in Gemini's
//! history: every main-chat model request carries the current composition
//! (the baseline and every nested file touched so far, current versions),
//! prefixed to the first user message's text and ended with a blank line.
//! `BeforeModel`'s answer is never persisted by Gemini, so "visible" is
//! always empty: the session log holds the touches (the tool events) and
//! never a workspace message, and each request composes afresh over it. The
//! log grows with the touches, not with the requests. Other events answer
//! `{}`: session start and prompt submit only create the session (cwd from
//! the first event), a tool call records its touches.

use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_session::{Session, SessionSettings};
use dsh_session_log::SessionLog;
use serde_json::Value;

use crate::event::{Action, HookEvent};

use dsh_instructions_session::Record;

use crate::deferred::apply_deferred;
use crate::error::HookError;
use crate::outcome::{Given, summary, with_config_warnings};
use crate::touch::{Mounting, shell, touch};

/// Handles one Gemini CLI event over the session's log (held locked).
pub(crate) async fn handle(
    ctx: &Mounting<'_>,
    event: &HookEvent,
    log: SessionLog,
    settings: &SessionSettings,
) -> Result<(Given, String), HookError> {
    let cancel = CancellationToken::new();
    let session_dir = ctx.session_dir;
    let mount = || settings.apply(ctx.base.clone());
    match &event.action {
        Action::Tool { touched, .. } => {
            let session = Session::mount(log, mount(), &cancel).await?;
            apply_deferred(&session, session_dir, Record::Keep).await?;
            touch(&session, touched, Record::Keep).await?;
            Ok((
                Given::Nothing,
                with_config_warnings("touch recorded".to_owned(), &session),
            ))
        }
        Action::Shell { name, command } => {
            let session = Session::mount(log, mount(), &cancel).await?;
            apply_deferred(&session, session_dir, Record::Keep).await?;
            shell(&session, event, name, command, Record::Keep).await?;
            let why = with_config_warnings("shell touch recorded".to_owned(), &session);
            Ok((Given::Nothing, why))
        }
        Action::Model { leading } => {
            let Some(mut leading) = Some(leading.clone()).filter(|m| !m.is_empty()) else {
                return Ok((Given::Nothing, "no llm_request messages".to_owned()));
            };
            let session = Session::mount(log, mount(), &cancel).await?;
            apply_deferred(&session, session_dir, Record::Keep).await?;
            // A session an earlier adapter version delivered into keeps
            // those messages visible: hide them once, so the composition is
            // complete again (nothing is committed after this).
            session.compact_workspace()?;
            let Some(message) = session.preview_next(&cancel).await? else {
                return Ok((Given::Nothing, "no instructions".to_owned()));
            };
            let prefix = format!("{}\n\n", message.joined_text());
            let Some(first) = leading.last_mut().filter(|m| is_user(m)) else {
                return Ok((Given::Nothing, "no user message".to_owned()));
            };
            if !prefix_text(first, &prefix) {
                return Ok((
                    Given::Nothing,
                    "the first user message has no text".to_owned(),
                ));
            }
            let why = format!("request prefixed: {}", summary(&message));
            Ok((Given::Request(leading), with_config_warnings(why, &session)))
        }
        _ => {
            drop(log);
            Ok((
                Given::Nothing,
                "gemini: context comes with each model request".to_owned(),
            ))
        }
    }
}

fn is_user(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str) == Some("user")
}

/// Prefixes `prefix` to the message's text: a string `content`, or the
/// first text item of an array `content`. False when it has no text.
fn prefix_text(message: &mut Value, prefix: &str) -> bool {
    match message.get_mut("content") {
        Some(Value::String(s)) => {
            s.insert_str(0, prefix);
            true
        }
        Some(Value::Array(items)) => {
            for item in items {
                if item.get("type").and_then(Value::as_str) == Some("text")
                    && let Some(Value::String(t)) = item.get_mut("text")
                {
                    t.insert_str(0, prefix);
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::string(json!({"role": "user", "content": "hi"}), Some(json!("P\n\nhi")))]
    #[case::array(json!({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "hi"}]}), Some(json!([{"type": "image"}, {"type": "text", "text": "P\n\nhi"}])))]
    #[case::no_text(json!({"role": "user", "content": [{"type": "image"}]}), None)]
    #[case::no_content(json!({"role": "user"}), None)]
    fn the_prefix_goes_before_the_first_text(#[case] mut m: Value, #[case] want: Option<Value>) {
        let ok = prefix_text(&mut m, "P\n\n");
        assert_eq!(ok, want.is_some());
        if let Some(w) = want {
            assert_eq!(m["content"], w);
        }
    }
}
