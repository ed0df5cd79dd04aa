//! What an event does to its session before the adapter delivers
//! (R-HOOK-3): the session mounted, the touches earlier invocations
//! deferred while it was busy reconciled, then the event's own — typed
//! touches through [`Session::touch`], no fake tool executions.

use camino::Utf8Path;
use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_runtime::tool_args::TouchedPath;
use dsh_instructions_runtime::{Host as _, TouchKind, shell::changes_directory};
use dsh_instructions_session::{Record, Session, SessionError, SessionSettings};
use dsh_session_log::SessionLog;
use serde_json::Value;

use crate::agent::Agent;
use crate::deferred::apply_deferred;
use crate::event::{Action, HookEvent, StartSource};

/// A mounted session with the event's touches made.
#[derive(Debug)]
pub(crate) struct Mounted {
    pub(crate) session: Session,
    /// How many deferred touches were reconciled first.
    pub(crate) deferred: usize,
}

/// Mounts the session over `log` and makes the event's touches, after the
/// ones earlier invocations deferred.
///
/// # Errors
/// The mount's and the touches' session errors.
pub(crate) async fn mount_and_touch(
    m: &Mounting<'_>,
    log: SessionLog,
    settings: &SessionSettings,
    agent: Agent,
    event: &HookEvent,
    fresh: bool,
    cancel: &CancellationToken,
) -> Result<Mounted, SessionError> {
    let session = Session::mount(log, settings.apply(m.base.clone()), cancel).await?;
    let deferred = apply_deferred(&session, m.session_dir, Record::Transient).await?;
    apply(&session, agent, event, fresh).await?;
    Ok(Mounted { session, deferred })
}

/// What an event mounts its session with: the process's half of the one
/// mount entry (the environment, and the adapter's one factory:
/// `handle.rs` grants the ambient authority), and the session's
/// directory (its deferred touches).
#[derive(Clone)]
pub(crate) struct Mounting<'a> {
    pub base: dsh_instructions_runtime::MountBuilder,
    /// The session's directory (its deferred touches).
    pub session_dir: &'a Utf8Path,
}

/// The source-JSON field that records which hook event delivered a message
/// (ignored by the typed source, R-STATE-1).
pub(crate) const DELIVERED_BY: &str = "hookEvent";

/// The source-JSON field that marks a delivery by Qwen Code's empty-prompt
/// follow-up firing ([`Action::FollowUp`]; decision 0072).
pub(crate) const FOLLOW_UP: &str = "followUp";

/// Whether a message persisted with `source` is gone from the history of
/// an agent that replaces its session-start context on resume (Copilot
/// CLI, Qwen Code, harness README): what a session start delivered, and
/// what Qwen's empty-prompt follow-ups delivered. Prompt and tool-result
/// contexts stay (decision 0072).
pub(crate) fn dropped_on_resume(source: &Value) -> bool {
    let by = source.get(DELIVERED_BY).and_then(Value::as_str);
    matches!(by, Some("SessionStart" | "sessionStart"))
        || source.get(FOLLOW_UP).and_then(Value::as_bool) == Some(true)
}

/// The event's effect on the session before delivering (R-HOOK-3).
async fn apply(
    session: &Session,
    agent: Agent,
    event: &HookEvent,
    fresh: bool,
) -> Result<(), SessionError> {
    match &event.action {
        // History is gone (compaction, clear) or new while we have a log for
        // this id: every earlier workspace message is hidden, so the next
        // composition is a complete baseline (R-RT-8).
        // Copilot CLI fires `sessionStart(new)` and the first
        // `userPromptSubmitted` in either order (2 of 47 pairs prompt first,
        // measured): a new session its prompt already created holds that
        // baseline in its history, so the start gives only what is new.
        Action::Start(StartSource::Startup) if !fresh && agent == Agent::Copilot => {}
        Action::Start(StartSource::Compact | StartSource::Clear | StartSource::Startup)
            if !fresh =>
        {
            session.compact_workspace()?;
        }
        // Copilot CLI and Qwen Code replace the session-start context on a
        // resume instead of keeping it (harness README), and Qwen drops its
        // empty-prompt follow-ups' messages: exactly those are hidden, so
        // the resumed history lacks the baseline and gets it complete again,
        // while what prompts and tool results delivered stays visible and
        // is reconciled — an offline edit or removal of a nested file is
        // said (R-RT-7, R-RT-8; decision 0072).
        Action::Start(StartSource::Resume) if !fresh && agent.resume_replaces_start_context() => {
            session.compact_where(dropped_on_resume)?;
        }
        // About to compact, and no later event of these agents takes
        // context right after it: marked here, so the next event that
        // reaches the model gives the complete baseline (decision 0066).
        Action::PreCompact if !fresh => {
            session.compact_workspace()?;
        }
        Action::Tool { touched, .. } => {
            touch(session, touched, Record::Transient).await?;
        }
        Action::Shell { name, command } => {
            shell(session, event, name, command, Record::Transient).await?;
            // Claude Code reports the shell's cwd *after* the command, so a
            // `cd s3 && cat f.txt` arrives with cwd `s3` already and its
            // words must be read from where the command started. That is
            // unknown (Claude keeps a `cd` across calls); the session's cwd
            // is the usual start. Only a command that changes directory needs
            // the second reading, and only existing paths inside the trusted
            // roots touch, so it can add a touch, never a wrong one
            // (R-DISC-10, R-HOOK-8). Codex gives the call's own workdir.
            if agent == Agent::Claude && changes_directory(command) && shell_on(session, name) {
                let start = session.host().cwd();
                let kind = TouchKind::Shell {
                    command: command.clone(),
                };
                session.touch(&start, kind, Record::Transient).await?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Why an event only marks its session and gives nothing (decision 0066):
/// a pre-compaction event, whose context would go into the compaction
/// prompt (Qwen Code) or nowhere (Copilot CLI), and Qwen Code's
/// `SessionStart(compact)`, which Qwen fires without waiting for its
/// answer, so the request right after the compaction would not carry it.
pub(crate) fn marks_only(agent: Agent, action: &Action) -> Option<&'static str> {
    match action {
        Action::PreCompact => {
            Some("compaction ahead: marked, the next event gives a complete baseline")
        }
        Action::Start(StartSource::Compact) if agent == Agent::Qwen => Some(
            "compacted (Qwen does not wait for this answer): the next event gives a complete baseline",
        ),
        _ => None,
    }
}

/// Whether the session's configuration makes `tool` a shell tool
/// (R-CFG-11: the hook preset does for the agent's shell tool; a
/// `config.json` can switch it off).
fn shell_on(session: &Session, tool: &str) -> bool {
    session
        .opened()
        .config()
        .is_some_and(|c| c.is_shell_tool(tool))
}

/// A shell call as the runtime reads it (contract 1): the command, with
/// the event's cwd as its workdir (Codex sends the call's workdir there).
pub(crate) async fn shell(
    session: &Session,
    event: &HookEvent,
    name: &str,
    command: &str,
    record: Record,
) -> Result<(), SessionError> {
    if shell_on(session, name) {
        let kind = TouchKind::Shell {
            command: command.to_owned(),
        };
        session.touch(&event.cwd, kind, record).await?;
    }
    Ok(())
}

/// Reports each touched path to the session as what the tool did there.
pub(crate) async fn touch(
    session: &Session,
    touched: &[TouchedPath],
    record: Record,
) -> Result<(), SessionError> {
    for t in touched {
        session
            .touch(Utf8Path::new(&t.path), t.kind.clone(), record)
            .await?;
    }
    Ok(())
}
