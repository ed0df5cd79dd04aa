//! The hook's one way in: [`answer`] one [`Invocation`], from the event's
//! bytes to the agent's JSON on the writer (SPEC §12, R-HOOK-1..4).
//!
//! The event is read once into its typed form ([`crate::event`]) with the
//! agent's configuration ([`crate::config`]); [`crate::handle`] does what
//! it asks over the agent session's persisted log; this module shapes the
//! answer for the agent, prints it, and writes the adapter's log line
//! ([`crate::hooklog`]). Nothing here fails the agent: every problem
//! answers `{}` and is one line of that log.

#[cfg(test)]
mod agents_tests;
#[cfg(test)]
mod cline_tests;
#[cfg(test)]
mod machine_tests;
#[cfg(test)]
mod tests;

use std::io::Write;
use std::time::Instant;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, resolve_dsh_home};
use serde_json::json;

use crate::agent::Agent;
use crate::event::{self, Got, MAX_EVENT_BYTES};
use crate::handle::{Invocation, handle};
use crate::hooklog;
use crate::outcome::{Given, Handled};

/// Answers one event (R-HOOK-1): the agent's JSON with the context, or
/// `{}`, and a newline, printed to `out` and flushed before the piece
/// counts as finished — in Claude Code a piece of a split message finishes
/// only after its predecessor's process printed its own, plus a gap
/// (R-HOOK-4, decision 0043). It never fails the agent: every problem is
/// written to the adapter's own log (`$DSH_HOME/hooks/<agent>/hook.log`),
/// never to the model. With [`Invocation::exit`] the process exits with
/// status 0 after the answer, and this never returns.
///
/// ```
/// use dsh_instructions_hooks::{Agent, Invocation, answer, home::HomeEnv};
///
/// let tmp = tempfile::tempdir()?;
/// let env = HomeEnv { home: Some(tmp.path().to_str().unwrap().into()), ..HomeEnv::default() };
/// let mut out = Vec::new();
/// // Copilot's `agentStop` (named on the command line) takes no context.
/// let stdin = br#"{"sessionId": "s1", "cwd": "/w", "stopReason": "end_turn"}"#;
/// let call = Invocation { event: Some("agentStop"), ..Invocation::new(Agent::Copilot, stdin, &env) };
/// answer(&call, &mut out)?;
/// assert_eq!(out, b"{}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Writing the answer to `out` failed (the adapter's log still gets its
/// line).
pub fn answer(call: &Invocation<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let started = Instant::now();
    let home = resolve_dsh_home(None, call.env).ok();
    let dir = home.as_ref().map(|home| agent_dir(home, call.agent));
    let (event_name, got) = event::read(
        call.stdin,
        call.event,
        call.agent,
        dir.as_deref(),
        &call.env.cwd,
    );
    let result = got.and_then(|got| match got {
        Got::Oversized => Ok(Handled::nothing(format!(
            "ignored: event larger than {MAX_EVENT_BYTES} bytes"
        ))),
        Got::Event(read) => {
            let (config, event) = *read;
            let dir = dir.as_deref().unwrap_or(Utf8Path::new("."));
            handle(call, dir, &config, event)
        }
    });
    let (stdout, line, turn) = match result {
        Ok(h) => (shaped(call.agent, &event_name, h.given), h.why, h.turn),
        Err(e) => ("{}".to_owned(), format!("error: {e}"), None),
    };
    let waited = turn.as_ref().map(|t| t.wait(started));
    let printed = out
        .write_all(stdout.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Some(t) = &turn {
        t.finished();
    }
    if let Some(dir) = &dir {
        let part = call.part.map_or_else(String::new, |k| format!(" part {k}"));
        let waited = waited.map_or_else(String::new, |w| format!("; finished {w}"));
        let now = dsh_session_log::rfc3339_utc(std::time::SystemTime::now());
        hooklog::log_line(
            dir,
            &format!(
                "{now} {event_name}{part} {line}{waited} {}ms",
                started.elapsed().as_millis()
            ),
        );
        // One line per side file this event found damaged and rebuilt.
        for heal in crate::heal::report_lines(dir) {
            hooklog::log_line(dir, &format!("{now} {heal}"));
        }
    }
    if call.exit {
        std::process::exit(0);
    }
    printed
}

/// The agent's directory below the DSH home: its `config.json`,
/// `hook.log` and `sessions/`.
pub(crate) fn agent_dir(home: &DshHome, agent: Agent) -> Utf8PathBuf {
    home.path.join("hooks").join(agent.to_string())
}

/// The agent's answer, shaped for it (harness README, "For the adapter"):
/// GitHub Copilot CLI reads a top-level `additionalContext`, the others
/// `hookSpecificOutput.additionalContext` — never both, since Codex drops
/// an answer that carries both (measured); Gemini CLI's `BeforeModel` reads
/// `llm_request`. The context text comes already framed for the agent (its
/// profile's [`crate::agents::Framing`], applied where the text is rendered:
/// decision 0055).
fn shaped(agent: Agent, event_name: &str, given: Given) -> String {
    match given {
        Given::Nothing => "{}".to_owned(),
        // Cline reads `context` (measured; `hookSpecificOutput` is
        // ignored there).
        Given::Context(text) if agent == Agent::Cline => json!({ "context": text }).to_string(),
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
