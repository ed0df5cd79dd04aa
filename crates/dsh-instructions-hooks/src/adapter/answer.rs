//! Stage 7, answer: what the adapter prints for the agent.

use serde_json::json;

use crate::outcome::Given;

/// The agent's answer (all three read `hookSpecificOutput.additionalContext`,
/// harness README; Gemini CLI's `BeforeModel` reads `llm_request`). The
/// context text comes already framed for the agent (its profile's
/// [`crate::Framing`], applied where the text is rendered: decision 0055).
pub(crate) fn answer(event_name: &str, given: Given) -> String {
    match given {
        Given::Nothing => "{}".to_owned(),
        Given::Context(text) => json!({
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "additionalContext": text,
            }
        })
        .to_string(),
        Given::Request(messages) => json!({
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "llm_request": { "messages": messages },
            }
        })
        .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn parsed(s: &str) -> Value {
        serde_json::from_str(s).expect("json")
    }

    #[test]
    fn nothing_is_an_empty_object() {
        assert_eq!(answer("SessionStart", Given::Nothing), "{}");
    }

    /// The text is given as it is: the framing was chosen when it was cut
    /// (a frame here is not stripped, decision 0055).
    #[test]
    fn context_is_additional_context_under_the_event_name() {
        let framed = format!(
            "{}body{}",
            dsh_instructions_render::FRAME_OPEN,
            dsh_instructions_render::FRAME_CLOSE
        );
        let a = parsed(&answer("UserPromptSubmit", Given::Context(framed.clone())));
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], framed);
    }

    #[test]
    fn a_request_answers_the_leading_messages() {
        let m = vec![json!({"role": "user", "parts": [{"text": "hi"}]})];
        let a = parsed(&answer("BeforeModel", Given::Request(m.clone())));
        assert_eq!(
            a["hookSpecificOutput"]["llm_request"]["messages"],
            Value::Array(m)
        );
    }
}
