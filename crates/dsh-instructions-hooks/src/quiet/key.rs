//! The memo's key of an event: which events it may answer, and what an
//! answer of it depends on besides stamps.

use camino::Utf8Path;
use dsh_home_paths::HomeEnv;
use dsh_instructions_state::ConfigInput;
use sha2::{Digest as _, Sha256};

use super::stamp::{Look, is_absent, look};
use crate::agent::Agent;
use crate::event::{Action, HookEvent};

#[cfg(test)]
thread_local! {
    /// Tests comparing with the full path switch the memo off.
    pub(crate) static TEST_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The memo's keys of an event inside its claim (see the module's doc).
#[derive(Debug, Clone)]
pub(crate) struct Key {
    /// The event itself, every field: a memo written after an event with
    /// this key answers it.
    pub(crate) exact: String,
    /// The event without its name and action: the key of the claim that a
    /// file or directory touch reaching only known directories answers as
    /// the event that wrote the claim did (decision 0085).
    pub(crate) claim: String,
    /// Whether a quiet full path of this event may write the claim: a
    /// prompt, or a tool event (no shell) whose own touches reach only
    /// known directories, checked when it is written.
    pub(crate) writes_claim: bool,
}

/// The memo's keys of `event`, or `None` when the event is outside the
/// memo's claim (see the module's doc).
pub(crate) fn key(
    agent: Agent,
    event: &HookEvent,
    input: &ConfigInput,
    env: &HomeEnv,
    session_dir: &Utf8Path,
) -> Option<Key> {
    #[cfg(test)]
    if TEST_OFF.with(std::cell::Cell::get) {
        return None;
    }
    let eligible = agent != Agent::Gemini
        && matches!(
            event.action,
            Action::Prompt | Action::FollowUp | Action::Tool { .. } | Action::Shell { .. }
        )
        && crate::touch::marks_only(agent, &event.action).is_none();
    if !eligible || deferred_waiting(session_dir) {
        return None;
    }
    let (exact, claim) = keys_of(agent, event, input, env, &build()?);
    Some(Key {
        exact,
        claim,
        writes_claim: !matches!(event.action, Action::Shell { .. }),
    })
}

/// The keys of `event` as `build` composes it: the exact key, of every
/// field of each (their `Debug` forms are total and ordered), and the
/// claim key, of the same but the event's name and action, which a
/// claim's touches do not depend on (decision 0085).
pub(super) fn keys_of(
    agent: Agent,
    event: &HookEvent,
    input: &ConfigInput,
    env: &HomeEnv,
    build: &str,
) -> (String, String) {
    let hash = |text: String| crate::record::hex(&Sha256::digest(text.as_bytes()));
    let agent = agent.as_str();
    let exact = hash(format!("{build}\n{agent}\n{event:?}\n{input:?}\n{env:?}"));
    let claim = hash(format!(
        "{build}\nclaim\n{agent}\n{:?}\n{:?}\n{input:?}\n{env:?}",
        event.session_id, event.cwd
    ));
    (exact, claim)
}

/// This build: its version and its executable's stamp. Another build may
/// compose the same inputs otherwise (an upgrade that reads a new kind of
/// file), so a memo another build wrote never answers for this one. `None`
/// when the executable cannot be looked at: no memo.
pub(super) fn build() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let stamp = look(Utf8Path::from_path(&exe)?, Look::Target).ok()?;
    Some(format!("{} {:?}", env!("CARGO_PKG_VERSION"), stamp.0))
}

/// Touches a busy session kept for the next event: that event's
/// composition depends on them.
fn deferred_waiting(session_dir: &Utf8Path) -> bool {
    match std::fs::symlink_metadata(session_dir.join(crate::deferred::DEFERRED_FILE_NAME)) {
        Ok(meta) => meta.len() > 0 || !meta.is_file(),
        Err(e) => !is_absent(&e),
    }
}
