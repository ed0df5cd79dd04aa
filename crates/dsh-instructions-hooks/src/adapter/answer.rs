//! Stage 7, answer: what the adapter prints for the agent.

use serde_json::json;

use crate::agent::Agent;
use crate::outcome::Given;
use crate::profile::Framing;

/// The agent's answer (all three read `hookSpecificOutput.additionalContext`,
/// harness README; Gemini CLI's `BeforeModel` reads `llm_request`).
/// Claude Code wraps hook context in its own `<system-reminder>` and
/// escapes ours, so it gets the text without our frame (decision 0019).
pub(crate) fn answer(agent: Agent, event_name: &str, given: Given) -> String {
    match given {
        Given::Nothing => "{}".to_owned(),
        Given::Context(text) => {
            let text = match agent.framing() {
                Framing::AgentFrames => crate::parts::unframe(&text),
                Framing::Ours => text,
            };
            json!({
                "hookSpecificOutput": {
                    "hookEventName": event_name,
                    "additionalContext": text,
                }
            })
            .to_string()
        }
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
    use rstest::rstest;
    use serde_json::Value;

    fn parsed(s: &str) -> Value {
        serde_json::from_str(s).expect("json")
    }

    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    fn nothing_is_an_empty_object(#[case] agent: Agent) {
        assert_eq!(answer(agent, "SessionStart", Given::Nothing), "{}");
    }

    #[test]
    fn context_is_additional_context_under_the_event_name() {
        let a = parsed(&answer(
            Agent::Codex,
            "UserPromptSubmit",
            Given::Context("text".into()),
        ));
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], "text");
    }

    /// Claude Code gets the text without our frame; Codex keeps it.
    #[test]
    fn only_claude_gets_the_text_unframed() {
        let framed = format!(
            "{}Instructions from: /w/AGENTS.md\nbody{}",
            dsh_instructions_render::FRAME_OPEN,
            dsh_instructions_render::FRAME_CLOSE
        );
        let claude = parsed(&answer(Agent::Claude, "E", Given::Context(framed.clone())));
        let codex = parsed(&answer(Agent::Codex, "E", Given::Context(framed.clone())));
        assert_eq!(
            claude["hookSpecificOutput"]["additionalContext"],
            "Instructions from: /w/AGENTS.md\nbody"
        );
        assert_eq!(codex["hookSpecificOutput"]["additionalContext"], framed);
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
