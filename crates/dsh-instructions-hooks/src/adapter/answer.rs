//! Stage 7, answer: what the adapter prints for the agent.

use serde_json::json;

use crate::agent::Agent;
use crate::outcome::Given;

/// The agent's answer, shaped for it (harness README, "For the adapter"):
/// GitHub Copilot CLI reads a top-level `additionalContext`, the others
/// `hookSpecificOutput.additionalContext` — never both, since Codex drops
/// an answer that carries both (measured); Gemini CLI's `BeforeModel` reads
/// `llm_request`. The context text comes already framed for the agent (its
/// profile's [`crate::Framing`], applied where the text is rendered:
/// decision 0055).
pub(crate) fn answer(agent: Agent, event_name: &str, given: Given) -> String {
    match given {
        Given::Nothing => "{}".to_owned(),
        Given::Context(text) if agent == Agent::Copilot => json!({
            "additionalContext": text,
        })
        .to_string(),
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

    #[rstest::rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Copilot)]
    #[case(Agent::Qwen)]
    fn nothing_is_an_empty_object(#[case] agent: Agent) {
        assert_eq!(answer(agent, "SessionStart", Given::Nothing), "{}");
    }

    /// Copilot CLI reads the top-level key only (harness README); every
    /// other agent the nested one, and no answer carries both (Codex drops
    /// such an answer whole).
    #[rstest::rstest]
    #[case(Agent::Claude, false)]
    #[case(Agent::Codex, false)]
    #[case(Agent::Gemini, false)]
    #[case(Agent::Copilot, true)]
    #[case(Agent::Qwen, false)]
    fn the_context_key_is_the_agents_own(#[case] agent: Agent, #[case] top_level: bool) {
        let a = parsed(&answer(agent, "postToolUse", Given::Context("CTX".into())));
        let object = a.as_object().expect("object");
        assert_eq!(object.len(), 1, "{a}");
        if top_level {
            assert_eq!(a["additionalContext"], "CTX");
        } else {
            assert_eq!(a["hookSpecificOutput"]["additionalContext"], "CTX");
            assert_eq!(a["hookSpecificOutput"]["hookEventName"], "postToolUse");
        }
    }

    /// The text is given as it is: the framing was chosen when it was cut
    /// (a frame here is not stripped, decision 0055).
    #[test]
    fn context_is_additional_context_under_the_event_name() {
        let framed = format!(
            "{}body{}",
            dsh_instructions_render::text::FRAME_OPEN,
            dsh_instructions_render::text::FRAME_CLOSE
        );
        let a = parsed(&answer(
            Agent::Codex,
            "UserPromptSubmit",
            Given::Context(framed.clone()),
        ));
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], framed);
    }

    #[test]
    fn a_request_answers_the_leading_messages() {
        let m = vec![json!({"role": "user", "parts": [{"text": "hi"}]})];
        let a = parsed(&answer(
            Agent::Gemini,
            "BeforeModel",
            Given::Request(m.clone()),
        ));
        assert_eq!(
            a["hookSpecificOutput"]["llm_request"]["messages"],
            Value::Array(m)
        );
    }
}
