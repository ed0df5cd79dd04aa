#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod host;
mod store;
mod touch;
mod versions;
mod views;

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_runtime::{
    BatchItem, Decision, Host, Instance, MountBuilder, Opened, RuntimeError, SessionEvent,
    ToolExecution, TouchKind, WorkspaceMessage,
};
use dsh_session_log::{EventKind, LogError, SessionLog};

pub use host::{LogHost, typed_source};
pub use store::{SETTINGS_FILE_NAME, SessionSettings, SessionStore};
pub use touch::{Record, TOUCH_RECORD};
pub use versions::{VERSIONS_FILE_NAME, forget_versions};
pub use views::VIEW_FILE_NAME;

// The crates this one's signatures name, re-exported whole, so a product
// can depend on this crate alone (its README example does, and `cargo
// xtask package` builds it so) and this root stays a short list.
pub use dsh_instructions_runtime as runtime;
pub use dsh_session_log as log;

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The session log failed (I/O, a bad header, an invalid id, …).
    #[error(transparent)]
    Log(#[from] LogError),
    /// The mount could not be opened or started (configuration, home,
    /// trusted roots, no Tokio runtime).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// No session with that id.
    #[error("no session {id:?} (looked for {path})")]
    NoSession {
        /// The id asked for.
        id: String,
        /// Where its log would be.
        path: Utf8PathBuf,
    },
    /// The session's settings file is unreadable or malformed.
    #[error("session settings {path}: {reason}")]
    Settings {
        /// The settings file.
        path: Utf8PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The log's header names a relative cwd.
    #[error("session header cwd is not absolute: {path}")]
    RelativeCwd {
        /// The cwd the header names.
        path: String,
    },
    /// The operation's cancellation token fired; nothing was appended.
    #[error("cancelled")]
    Cancelled,
}

/// A loop instance mounted over a persisted session.
#[derive(Debug)]
pub struct Session {
    host: Arc<LogHost>,
    instance: Instance,
    opened: Opened,
    /// Where the settled versions of this loop instance's reads are kept for
    /// the next one ([`forget_versions`], decision 0036).
    versions_path: Utf8PathBuf,
}

impl Session {
    /// Mounts a fresh loop instance over `log` through the one entry: at
    /// the cwd of the log's header (a session's cwd is fixed when it is
    /// created, whatever cwd `mount` names), with the rest of `mount` —
    /// the session's settings applied to it ([`SessionSettings::apply`]),
    /// the environment and the filesystem — and the version cache the last
    /// process over this session kept (decision 0036). Tool executions and
    /// touches recorded after the last persisted message are reported
    /// again, so the pending message an earlier process lost with its inbox
    /// is composed again.
    ///
    /// # Errors
    /// [`SessionError::RelativeCwd`]; [`SessionError::Runtime`].
    pub async fn mount(
        log: SessionLog,
        mount: MountBuilder,
        cancel: &CancellationToken,
    ) -> Result<Self, SessionError> {
        let cwd = Utf8PathBuf::from(log.header().cwd.clone());
        if !cwd.is_absolute() {
            return Err(SessionError::RelativeCwd {
                path: cwd.into_string(),
            });
        }
        let versions_path = versions::path_for(log.path());
        let opened = mount
            .cwd(cwd)
            .remembered(versions::load(&versions_path))
            .open(cancel)
            .await?;
        let host = Arc::new(LogHost::new(log));
        let instance = opened.instance(host.clone() as Arc<dyn Host>)?;
        let replay = host.replay_since_last_message();
        for item in replay.iter().cloned() {
            // A kept typed touch goes back the typed way; a tool event
            // through the configured maps (R-CFG-8, R-CFG-11).
            match item {
                touch::Replay::Touch(path, kind) => instance.touch(&path, kind),
                touch::Replay::Tool(exec) => instance.tool_result(&exec),
            }
        }
        if !replay.is_empty() {
            instance.settle().await;
        }
        Ok(Self {
            host,
            instance,
            opened,
            versions_path,
        })
    }

    /// The host: the log and the visible state.
    pub fn host(&self) -> &LogHost {
        &self.host
    }

    /// How the mount was derived (root, trusted roots, warnings).
    pub fn opened(&self) -> &Opened {
        &self.opened
    }

    /// The mounted instance, for hosts that drive it directly.
    pub fn instance(&self) -> &Instance {
        &self.instance
    }

    /// A pre-step that enters now (R-RT-1, R-RT-10): with `prompt`, a turn's
    /// step whose batch is the prompt (persisted as a user message) with the
    /// workspace message folded in after it; without, a batch that is the
    /// workspace message alone, which enters at a later step (`step > 1`,
    /// a tool continuation or a hook's context) and stays pending at step 1.
    /// Returns the workspace message that entered and was appended.
    ///
    /// # Errors
    /// [`SessionError::Cancelled`] (nothing appended); log errors.
    pub async fn enter(
        &self,
        step: u32,
        prompt: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        let items = prompt
            .map(|message| BatchItem {
                message,
                claimed: true,
            })
            .into_iter()
            .collect();
        let outcome = self
            .instance
            .pre_step(step, Decision::Enter(items), cancel)
            .await
            .map_err(|_| SessionError::Cancelled)?;
        self.host
            .append_batch(outcome.batch.as_deref().unwrap_or_default())?;
        Ok(outcome.entered)
    }

    /// A pre-step whose batch is the workspace message alone, entering now
    /// (a tool continuation, or an agent hook's context), persisted with
    /// `note`'s fields added to its source JSON (fields the typed source
    /// ignores, R-STATE-1; an agent hook records which event delivered it).
    ///
    /// # Errors
    /// As [`Session::enter`].
    pub async fn deliver(
        &self,
        note: &serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        self.deliver_step(note, false, cancel).await
    }

    /// [`Session::deliver`] right after the touches this caller just made
    /// (an agent hook's tool event): their projections' reconciliation is
    /// this step's, so the known scopes are not probed twice
    /// ([`Instance::pre_step_after_tools`]).
    ///
    /// # Errors
    /// As [`Session::enter`].
    pub async fn deliver_after_tools(
        &self,
        note: &serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        self.deliver_step(note, true, cancel).await
    }

    async fn deliver_step(
        &self,
        note: &serde_json::Map<String, serde_json::Value>,
        after_tools: bool,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        let decision = Decision::Enter(Vec::new());
        let outcome = if after_tools {
            self.instance
                .pre_step_after_tools::<String>(2, decision, cancel)
                .await
        } else {
            self.instance.pre_step::<String>(2, decision, cancel).await
        }
        .map_err(|_| SessionError::Cancelled)?;
        if let Some(m) = &outcome.entered {
            let mut source = m.source.to_json();
            if let Some(map) = source.as_object_mut() {
                for (k, v) in note {
                    map.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            self.host.append(EventKind::Message {
                role: "user".into(),
                parts: m.parts.clone(),
                source: Some(source),
            })?;
        }
        Ok(outcome.entered)
    }

    /// Hides the visible workspace messages whose persisted source JSON
    /// satisfies `hide` (see [`Session::deliver`]); returns their sequence
    /// numbers (none: nothing appended).
    ///
    /// # Errors
    /// Log errors.
    pub fn compact_where(
        &self,
        hide: impl Fn(&serde_json::Value) -> bool,
    ) -> Result<Vec<u64>, SessionError> {
        let seqs: Vec<u64> = self
            .host
            .visible_workspace_sources()
            .into_iter()
            .filter(|(_, source)| hide(source))
            .map(|(seq, _)| seq)
            .collect();
        if !seqs.is_empty() {
            self.host
                .append(EventKind::Compaction { hide: seqs.clone() })?;
        }
        Ok(seqs)
    }

    /// A whole turn's first step as a person runs it: `turn_start`, the
    /// prompt with the workspace message folded in, `turn_end`.
    ///
    /// # Errors
    /// As [`Session::enter`].
    pub async fn prompt(
        &self,
        text: String,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        self.host.append(EventKind::TurnStart)?;
        let entered = self.enter(1, Some(text), cancel).await;
        self.host.append(EventKind::TurnEnd)?;
        entered
    }

    /// Reports a finished tool execution (R-RT-3) and waits for its
    /// projection; returns the pending workspace message. With
    /// [`Record::Keep`], the execution is appended to the log first, so a
    /// later process composes its pending message again
    /// ([`Session::mount`]); when nothing is pending afterwards a `settled`
    /// event follows it, so later mounts do not replay tool events that
    /// produced nothing.
    ///
    /// # Errors
    /// Log errors while recording.
    pub async fn tool(
        &self,
        exec: &ToolExecution,
        record: Record,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        if record == Record::Keep {
            self.host.append(EventKind::Tool {
                name: exec.name.clone(),
                args: exec.arguments.clone(),
                ok: !exec.is_error,
                cancelled: exec.cancelled,
                token: Some(exec.token.clone()),
                parent: exec.parent.clone(),
            })?;
        }
        self.instance.tool_result(exec);
        self.settle_after(record).await
    }

    /// Reports what a tool did at `path` (absolute, or relative to the
    /// session's cwd; [`TouchKind`]) and waits for its projection; returns
    /// the pending workspace message. [`Record::Keep`] appends it to the
    /// log first (a `touch` event, decision 0054) and a `settled`
    /// event after it when nothing is pending, as [`Session::tool`] does.
    ///
    /// # Errors
    /// Log errors while recording.
    pub async fn touch(
        &self,
        path: &Utf8Path,
        kind: TouchKind,
        record: Record,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        if record == Record::Keep {
            let token = format!("touch-{}", dsh_session_log::new_session_id());
            self.host.append(touch::touch_event(path, &kind, token))?;
        }
        self.instance.touch(path, kind);
        self.settle_after(record).await
    }

    /// Waits for the projections queued so far; after a kept report with
    /// nothing pending, marks the recorded tool events settled.
    async fn settle_after(&self, record: Record) -> Result<Option<WorkspaceMessage>, SessionError> {
        self.instance.settle().await;
        let pending = self.pending();
        if record == Record::Keep && pending.is_none() {
            // Nothing is pending, so no recorded tool event has a message a
            // later process could lose: mark them settled, and the next
            // mount replays none of them (R-LOG-5, issue 18 item 7). A crash
            // before this line only means they are replayed once more.
            self.host.append(EventKind::Settled)?;
        }
        Ok(pending)
    }

    /// The workspace message pending in the inbox, if any.
    pub fn pending(&self) -> Option<WorkspaceMessage> {
        self.instance.pending().into_iter().next()
    }

    /// Ends a tool step (`step_end`, R-RT-5), then the tool continuation
    /// enters the pending workspace message alone (R-RT-1).
    ///
    /// # Errors
    /// As [`Session::enter`].
    pub async fn step_end(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        self.host.append(EventKind::StepEnd)?;
        self.instance.session_event(SessionEvent::StepEnd);
        self.instance.settle().await;
        self.enter(2, None, cancel).await
    }

    /// What the next pre-step of this loop instance would enter; appends
    /// nothing (a rejected pre-step leaves the composition pending).
    ///
    /// # Errors
    /// [`SessionError::Cancelled`].
    pub async fn preview_next(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, SessionError> {
        self.instance
            .pre_step::<String>(1, Decision::Reject, cancel)
            .await
            .map_err(|_| SessionError::Cancelled)?;
        Ok(self.pending())
    }

    /// Hides every workspace message on the visible surface, as an agent's
    /// history compaction drops them (R-RT-8): the next composition is a
    /// complete baseline. Returns the hidden sequence numbers (none: nothing
    /// appended).
    ///
    /// # Errors
    /// Log errors.
    pub fn compact_workspace(&self) -> Result<Vec<u64>, SessionError> {
        let hide = self.host.visible_workspace_seqs();
        if !hide.is_empty() {
            self.host
                .append(EventKind::Compaction { hide: hide.clone() })?;
        }
        Ok(hide)
    }
}

impl Session {
    /// Ends the session as dropping it does — the instance disposed, the
    /// remembered versions and the kept fold saved, the log closed and the
    /// session lock released — but leaves its memory to the operating
    /// system instead of freeing it piece by piece: for a process that exits
    /// right after (the agent hook, R-HOOK-6, where freeing the state of
    /// 1,000 known directories is a measurable part of an event). Anything
    /// else should simply drop the session.
    ///
    /// ```no_run
    /// # async fn demo(session: dsh_instructions_session::Session) {
    /// // ... the answer is composed and written ...
    /// session.close_for_exit();
    /// std::process::exit(0);
    /// # }
    /// ```
    pub fn close_for_exit(self) {
        self.close_now();
        std::mem::forget(self);
    }

    /// What [`Drop`] does, shared with [`Session::close_for_exit`].
    fn close_now(&self) {
        self.instance.dispose();
        // Still under the session lock: the next process over this session
        // probes what this one read instead of reading it again (decision
        // 0036). Only when there is news; a failure only costs reads.
        if let Some(versions) = self.instance.changed_remembered_versions()
            && let Err(error) = versions::store(&self.versions_path, &versions)
        {
            tracing::debug!(%error, "the remembered versions were not saved");
        }
        self.host.close();
    }
}

impl Drop for Session {
    /// Releases the session lock deterministically: the instance is disposed
    /// (nothing more is applied), the remembered versions saved, and the log
    /// closed, whatever still holds a handle on the host.
    fn drop(&mut self) {
        self.close_now();
    }
}

#[cfg(test)]
mod tests;
