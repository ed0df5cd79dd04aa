//! What one hook invocation ends with: the answer it gives the agent
//! ([`Given`]), with the log's reason and its finishing turn ([`Handled`]),
//! and the one-line summary of a delivered message for the diagnostic log
//! ([`summary`]).
//!
//! Separate from `handle.rs` because the Gemini handler (`gemini.rs`)
//! answers in the same terms while the adapter dispatches to it: with these
//! names here, each of the two imports this module and neither the other.

use dsh_instructions_runtime::WorkspaceMessage;
use dsh_instructions_session::Session;
use serde_json::Value;

/// What an invocation answers.
#[derive(Debug)]
pub(crate) enum Given {
    /// `additionalContext` text.
    Context(String),
    /// Gemini CLI `BeforeModel`: the modified leading messages.
    Request(Vec<Value>),
    /// `{}`.
    Nothing,
}

/// What handling an event ended with: the answer, the log's reason and,
/// for a piece of a split message in Claude Code, its finishing turn.
#[derive(Debug)]
pub(crate) struct Handled {
    pub(crate) given: Given,
    pub(crate) why: String,
    pub(crate) turn: Option<crate::order::Turn>,
}

impl Handled {
    /// Nothing to give, for the reason `why`.
    pub(crate) fn nothing(why: String) -> Self {
        Self {
            given: Given::Nothing,
            why,
            turn: None,
        }
    }

    /// An answer that waits for no other piece.
    pub(crate) fn untimed((given, why): (Given, String)) -> Self {
        Self {
            given,
            why,
            turn: None,
        }
    }
}

/// `why` with the entries the session's configuration validation ignored
/// (R-CFG-4: a `config.json` name that is no plain file name, say), so
/// they reach the adapter's log instead of being dropped with the mount.
pub(crate) fn with_config_warnings(mut why: String, session: &Session) -> String {
    for w in session.opened().warnings() {
        why.push_str("; config warning: ");
        why.push_str(&w.to_string());
    }
    why
}

/// `baseline: set AGENTS.md, …` for the log.
pub(crate) fn summary(m: &WorkspaceMessage) -> String {
    dsh_instructions_state::describe::source_summary(
        m.source.baseline,
        m.source.changes.iter().map(|c| {
            (
                c.action.as_str(),
                c.path.as_str(),
                c.previous_path.as_deref(),
            )
        }),
    )
}
