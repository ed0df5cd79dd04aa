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
mod tests;

use std::io::Write;
use std::time::Instant;

use camino::Utf8PathBuf;
use dsh_home_paths::{DshHome, HomeEnv, resolve_dsh_home};
use serde_json::json;

use crate::agent::Agent;
use crate::config::load_config;
use crate::error::HookError;
use crate::event::{MAX_EVENT_BYTES, Read};
use crate::handle::{Ending, handle};
use crate::hooklog;
use crate::outcome::{Given, Handled};

/// One hook invocation: what the `dsh-instructions hook --agent A` process
/// was given.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    /// The agent whose event this is.
    pub agent: Agent,
    /// `--part K`: piece `K` (1-based) of the event's one composition
    /// (R-HOOK-4, decision 0018); `None` answers the whole message. Gemini
    /// CLI has no parts: part 1 answers as the whole, the others `{}`.
    pub part: Option<u32>,
    /// `--event E`: the event's name when its stdin names none (GitHub
    /// Copilot CLI's camelCase events, decision 0065); a stdin that names
    /// its event keeps that name.
    pub event: Option<&'a str>,
    /// The event's bytes, as the agent wrote them on stdin.
    pub stdin: &'a [u8],
    /// The home variables.
    pub env: &'a HomeEnv,
    /// The process exits with status 0 right after the answer: the event's
    /// state (the mounted session, the version cache, the directory stamps
    /// of every known directory) is left to the operating system instead
    /// of being freed piece by piece, which at 1,000 known directories is a
    /// measurable part of an event (R-HOOK-6, decision 0062). Everything
    /// the event writes is written first.
    pub exit: bool,
}

impl<'a> Invocation<'a> {
    /// An invocation for the whole message, returning after the answer.
    pub fn new(agent: Agent, stdin: &'a [u8], env: &'a HomeEnv) -> Self {
        Self {
            agent,
            part: None,
            event: None,
            stdin,
            env,
            exit: false,
        }
    }
}

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
    let read = Read::bytes(call.stdin, call.event);
    let event_name = read.event_name().to_owned();
    let ending = if call.exit {
        Ending::Exit
    } else {
        Ending::Drop
    };
    let result = match (&home, read) {
        (None, _) => Err(HookError::NoHome),
        (Some(_), Read::Oversized) => Ok(Handled::nothing(format!(
            "ignored: event larger than {MAX_EVENT_BYTES} bytes"
        ))),
        (Some(_), Read::NotEvent(e)) => Err(e),
        (Some(home), Read::Event(wire)) => {
            let dir = agent_dir(home, call.agent);
            load_config(call.agent, &dir).and_then(|config| {
                let event = wire.typed(call.agent, &config.tools)?;
                handle(call, ending, &dir, &config, event)
            })
        }
    };
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
    if let Some(home) = &home {
        let dir = agent_dir(home, call.agent);
        let part = call.part.map_or_else(String::new, |k| format!(" part {k}"));
        let waited = waited.map_or_else(String::new, |w| format!("; finished {w}"));
        let now = dsh_session_log::rfc3339_utc(std::time::SystemTime::now());
        hooklog::log_line(
            &dir,
            &format!(
                "{now} {event_name}{part} {line}{waited} {}ms",
                started.elapsed().as_millis()
            ),
        );
        // One line per side file this event found damaged and rebuilt.
        for heal in crate::heal::report_lines(&dir) {
            hooklog::log_line(&dir, &format!("{now} {heal}"));
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
