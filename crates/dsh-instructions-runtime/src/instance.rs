//! One loop instance of the adapter: a serial lane per session that owns the
//! plugin state (frozen root, version cache, budget exclusions) and handles
//! one request at a time (R-RT-6), plus the lock-free front door that stages
//! touches (R-RT-3 .. R-RT-5).
//!
//! One job per submodule: what the front door stages (`front`) and the
//! lane that composes (`lane`); this file holds the mount, the instance and
//! its front door's entry points.

mod front;
mod lane;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use camino::{Utf8Path, Utf8PathBuf};

use dsh_instructions_discovery::{CancellationToken, Cancelled, provider::FileVersion};
use dsh_instructions_state::{
    Config, ScopeKey,
    cache::{CacheEntry, VersionCache},
};
use tokio::sync::{mpsc, oneshot};

use crate::derived::Mount;
use crate::error::RuntimeError;
use crate::host::{BatchEntry, Decision, Host, SessionEvent, ToolExecution, WorkspaceMessage};
use crate::inbox::Inbox;
use crate::rule_facts::RuleFacts;
use crate::settle::SettleMemo;
use crate::touch::TouchKind;
use crate::user_file::UserFile;
use crate::view::VisibleView;
use front::{Front, Touch, touch_of, typed_touch};
use lane::{DecisionKind, Lane, Request, Slot};

/// The result of a pre-step (R-RT-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreStepOutcome<M> {
    /// The batch that enters, with the workspace message folded in; `None`
    /// when the decision was a reject.
    pub batch: Option<Vec<BatchEntry<M>>>,
    /// The workspace message folded into this batch, if any.
    pub entered: Option<WorkspaceMessage>,
}

#[derive(Debug)]
struct Active {
    config: Config,
    tx: mpsc::UnboundedSender<Request>,
    front: Mutex<Front>,
    cwd: Utf8PathBuf,
}

/// A mounted adapter for one session's loop instance.
///
/// Start it with [`crate::Opened::instance`] inside a Tokio runtime; a
/// resume is a new instance over the same history, a hot remount is
/// [`crate::Opened::remount`].
#[derive(Debug)]
pub struct Instance {
    active: Option<Active>,
    cancel: CancellationToken,
    /// Held while the lane applies effects; dispose takes it so nothing is
    /// applied after it returns.
    apply: Arc<Mutex<()>>,
    /// What of the lane's version cache may outlive this process
    /// ([`Instance::remembered_versions`]).
    remembered: Arc<Mutex<Remembered>>,
    /// The next-step inbox (R-RT-2): memory only (R-RT-7), shared with the
    /// lane, which alone changes it.
    inbox: Arc<Mutex<Inbox>>,
}

/// The version-cache entries a host may persist for the next loop instance
/// over the same session (decision 0036): settled versions only, and only
/// scopes whose content depends on no import (an import's version would
/// need the same care). Kept beside the lane's cache, updated when it is.
#[derive(Debug, Default)]
struct Remembered {
    entries: HashMap<ScopeKey, CacheEntry<FileVersion>>,
    /// Changed since the instance was mounted.
    changed: bool,
}

impl Remembered {
    fn update(&mut self, scope: &ScopeKey, entry: &CacheEntry<FileVersion>) {
        if entry.version.is_settled() && entry.imports.is_empty() {
            if self.entries.get(scope) != Some(entry) {
                self.entries.insert(scope.clone(), entry.clone());
                self.changed = true;
            }
        } else if self.entries.remove(scope).is_some() {
            self.changed = true;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Instance {
    /// Mounts the adapter over a host. With no config, a disabled budget or
    /// no provider it is a no-op that never fails the loop (R-RT-9).
    ///
    /// The instance's serial lane (R-RT-6) is a task on the current Tokio
    /// runtime, so this must be called inside one.
    ///
    /// # Errors
    ///
    /// [`RuntimeError::NoRuntime`] when no Tokio runtime is current — also for
    /// a no-op mount, so an embedding mistake shows up whatever the config.
    #[cfg(test)]
    pub(crate) fn mount(mount: Mount, host: Arc<dyn Host>) -> Result<Self, RuntimeError> {
        Self::mount_remembering(mount, host, Vec::new())
    }

    /// [`Instance::mount`] with a version cache seeded from `versions`: what
    /// an earlier loop instance over the same session gave
    /// ([`Instance::remembered_versions`]) and its host persisted. A seed
    /// only lets a read be skipped when the file still probes with that
    /// version *and* the model still sees that scope with that digest
    /// (R-STATE-8), so a stale or foreign entry costs a read, never context.
    /// Entries that are not settled or depend on imports are ignored.
    ///
    /// # Errors
    /// As [`Instance::mount`].
    pub(crate) fn mount_remembering(
        mount: Mount,
        host: Arc<dyn Host>,
        versions: Vec<(ScopeKey, CacheEntry<FileVersion>)>,
    ) -> Result<Self, RuntimeError> {
        Self::mount_with(mount, host, versions, Inbox::default())
    }

    /// A hot remount (R-RT-7): disposes this instance and mounts a new one
    /// over `host` with `mount` (another configuration, say) that takes
    /// over this one's pending message — the inbox is kept across a hot
    /// remount, lost on a resume (a plain [`Instance::mount`]).
    ///
    /// # Errors
    /// As [`Instance::mount`].
    pub(crate) fn remount(&self, mount: Mount, host: Arc<dyn Host>) -> Result<Self, RuntimeError> {
        self.dispose();
        let inbox = lock(&self.inbox).clone();
        Self::mount_with(mount, host, Vec::new(), inbox)
    }

    fn mount_with(
        mount: Mount,
        host: Arc<dyn Host>,
        versions: Vec<(ScopeKey, CacheEntry<FileVersion>)>,
        inbox: Inbox,
    ) -> Result<Self, RuntimeError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| RuntimeError::NoRuntime)?;
        let cancel = CancellationToken::new();
        let apply = Arc::new(Mutex::new(()));
        let mut cache = VersionCache::new();
        let mut remembered = Remembered::default();
        for (scope, entry) in versions {
            if entry.version.is_settled() && entry.imports.is_empty() {
                remembered.entries.insert(scope.clone(), entry.clone());
                cache.insert(scope, entry);
            }
        }
        let remembered = Arc::new(Mutex::new(remembered));
        let inbox = Arc::new(Mutex::new(inbox));
        // A `Config` is valid by construction (only `ConfigInput::resolve`
        // and the default constructors build one): nothing to check again
        // before a name reaches a probe (R-RT-11). A disabled one mounts
        // nothing, as no config does.
        let enabled = mount.config.filter(|c| !c.max_bytes().is_disabled());
        let (Some(config), Some(provider)) = (enabled, mount.provider) else {
            return Ok(Self {
                active: None,
                cancel,
                apply,
                remembered,
                inbox,
            });
        };
        let budget = config.max_bytes();
        let cwd = host.cwd();
        // Only the entries the validated config still lists, in its order.
        let user_files: Vec<UserFile> = config
            .user_instruction_files()
            .iter()
            .filter_map(|label| mount.user_files.iter().find(|f| &f.label == label).cloned())
            .collect();
        let (tx, rx) = mpsc::unbounded_channel();
        let lane = Lane {
            user_files,
            host: host.clone(),
            provider,
            config: config.clone(),
            budget,
            home: mount.home,
            cwd: cwd.clone(),
            root: mount.root.map(|r| r.root),
            cache,
            remembered: remembered.clone(),
            inbox: inbox.clone(),
            excluded: None,
            view: VisibleView::default(),
            cancel: cancel.clone(),
            apply: apply.clone(),
            reconciled: None,
            rule_facts: RuleFacts::default(),
            settle: SettleMemo::default(),
        };
        runtime.spawn(lane.run(rx));
        let front = Front {
            step_open: host.step_open(),
            ..Front::default()
        };
        Ok(Self {
            active: Some(Active {
                config,
                tx,
                front: Mutex::new(front),
                cwd,
            }),
            cancel,
            apply,
            remembered,
            inbox,
        })
    }

    /// The workspace messages pending in the next-step inbox, in inbox
    /// order; at most one once the lane settled (R-RT-2). The inbox lives
    /// in this instance only: a new instance over the same history starts
    /// with none and composes again (R-RT-7).
    pub fn pending(&self) -> Vec<WorkspaceMessage> {
        lock(&self.inbox).messages().cloned().collect()
    }

    /// The version-cache entries a host may persist for the next loop
    /// instance over this session ([`crate::MountBuilder::remembered`]), in
    /// scope order, and whether they changed since the mount (so a host
    /// writes only when there is news). Never instruction text (R-STATE-8).
    pub fn remembered_versions(&self) -> (Vec<(ScopeKey, CacheEntry<FileVersion>)>, bool) {
        let r = lock(&self.remembered);
        let mut all: Vec<_> = r
            .entries
            .iter()
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        (all, r.changed)
    }

    /// [`Instance::remembered_versions`] when they changed since the mount,
    /// else `None` without copying them: what a host that writes only news
    /// needs (the agent hook at every event, R-HOOK-6).
    pub fn changed_remembered_versions(&self) -> Option<Vec<(ScopeKey, CacheEntry<FileVersion>)>> {
        if !lock(&self.remembered).changed {
            return None;
        }
        Some(self.remembered_versions().0)
    }

    /// Whether the adapter does anything (config, budget and provider present).
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// Runs the adapter's part of a pre-step and folds the workspace message
    /// into the downstream decision (R-RT-1, R-RT-2, R-RT-10). `step` is the
    /// step number within the turn (1 = first).
    ///
    /// Cancelling `cancel` returns `Err(Cancelled)` promptly, even while a
    /// provider operation is blocked, and changes nothing (R-DISC-8).
    pub async fn pre_step<M>(
        &self,
        step: u32,
        decision: Decision<M>,
        cancel: &CancellationToken,
    ) -> Result<PreStepOutcome<M>, Cancelled> {
        self.run_pre_step(step, decision, false, cancel).await
    }

    /// [`Instance::pre_step`] for a step that follows the tool results just
    /// reported, at once (an agent hook answering a tool event with the
    /// context to add to its result). When their projections reconciled
    /// every known scope since the last pre-step and nothing reached the
    /// visible surface since, that reconciliation is this pre-step's
    /// (R-RT-10: a change in between is indistinguishable from one right
    /// after it), so the known scopes are not probed twice; otherwise it is
    /// exactly [`Instance::pre_step`]. Not for a step that comes later —
    /// then the files may have changed since the projection.
    ///
    /// ```
    /// # async fn demo(instance: &dsh_instructions_runtime::Instance) {
    /// use dsh_instructions_runtime::{Decision, ToolExecution};
    /// use dsh_instructions_discovery::CancellationToken;
    /// let exec = ToolExecution {
    ///     name: "read".into(),
    ///     arguments: serde_json::json!({"path": "pkg/src/lib.rs"}),
    ///     token: "call-1".into(),
    ///     parent: None,
    ///     is_error: false,
    ///     cancelled: false,
    /// };
    /// instance.tool_result(&exec);
    /// instance.settle().await;
    /// let cancel = CancellationToken::new();
    /// let outcome = instance
    ///     .pre_step_after_tools::<String>(2, Decision::Enter(Vec::new()), &cancel)
    ///     .await;
    /// # let _ = outcome;
    /// # }
    /// ```
    pub async fn pre_step_after_tools<M>(
        &self,
        step: u32,
        decision: Decision<M>,
        cancel: &CancellationToken,
    ) -> Result<PreStepOutcome<M>, Cancelled> {
        self.run_pre_step(step, decision, true, cancel).await
    }

    async fn run_pre_step<M>(
        &self,
        step: u32,
        decision: Decision<M>,
        after_tools: bool,
        cancel: &CancellationToken,
    ) -> Result<PreStepOutcome<M>, Cancelled> {
        let Some(active) = &self.active else {
            return Ok(passthrough(decision));
        };
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        let kind = match &decision {
            Decision::Reject => DecisionKind::Reject,
            Decision::Enter(items) if items.is_empty() => DecisionKind::EnterEmpty,
            Decision::Enter(_) => DecisionKind::EnterSome,
        };
        let token = self.cancel.child_token();
        let slot = Arc::new(Mutex::new(Slot::Running));
        let (done_tx, done_rx) = oneshot::channel();
        let sent = active.tx.send(Request::PreStep {
            step,
            kind,
            after_tools,
            token: token.clone(),
            slot: slot.clone(),
            done: done_tx,
        });
        if sent.is_err() {
            return Ok(passthrough(decision));
        }
        tokio::select! {
            _ = done_rx => {}
            _ = cancel.cancelled() => {}
        }
        let message = {
            let mut s = lock(&slot);
            match std::mem::replace(&mut *s, Slot::Abandoned) {
                Slot::Done(m) => m,
                Slot::Running | Slot::Abandoned => {
                    token.cancel();
                    return Err(Cancelled);
                }
            }
        };
        Ok(fold(decision, message))
    }

    /// Reports a finished tool execution (R-RT-3, R-RT-4). Never blocks on
    /// discovery: touches are queued for the lane.
    pub fn tool_result(&self, exec: &ToolExecution) {
        let Some(active) = &self.active else { return };
        let own = touch_of(&active.config, &active.cwd, exec);
        stage_tool(active, exec, own);
    }

    /// Reports what a tool did at `path` (absolute, or relative to the
    /// instance's cwd), as the host knows it ([`TouchKind`], R-RT-3,
    /// R-DISC-10). Like a top-level [`Instance::tool_result`] it never
    /// blocks on discovery: the touch is staged while a step is open and
    /// queued for the lane otherwise. It needs no `touch_tools` or
    /// `shell_tools` entry: the kind says what those maps say for tool
    /// executions.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// use std::sync::Arc;
    /// use dsh_instructions_runtime::{Host, MountBuilder, TouchKind, host_support::MemoryHost};
    /// use dsh_instructions_runtime::discovery::{CancellationToken, memory::{MemNode, MemoryProvider}};
    /// use dsh_instructions_runtime::{home::HomeEnv, state::Config};
    ///
    /// let fs = MemoryProvider::new(vec!["/".into()]);
    /// fs.insert("/repo/.git".into(), MemNode::dir());
    /// fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("Use pnpm."));
    /// let host = Arc::new(MemoryHost::new("/repo".into()));
    /// let instance = MountBuilder::new("/repo")
    ///     .validated(Config::with_max_bytes(65_536))
    ///     .env(HomeEnv { home: Some("/home/me".into()), ..Default::default() })
    ///     .fs(fs)
    ///     .open(&CancellationToken::new())
    ///     .await?
    ///     .instance(host.clone() as Arc<dyn Host>)?;
    /// // Listing `pkg` touches `pkg` itself: its rule is pending.
    /// instance.touch("pkg".into(), TouchKind::List);
    /// instance.settle().await;
    /// assert_eq!(instance.pending()[0].source.changes[0].path, "pkg/AGENTS.md");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn touch(&self, path: &Utf8Path, kind: TouchKind) {
        let Some(active) = &self.active else { return };
        let Some(touch) = typed_touch(&active.cwd, path, &kind) else {
            return;
        };
        let mut front = lock(&active.front);
        if front.step_open {
            front.staged.push(touch);
        } else {
            let _ = active.tx.send(Request::Project(vec![touch]));
        }
    }
}

/// Stages (or queues) an execution's own touch with what its children
/// bubbled to it (R-RT-4).
fn stage_tool(active: &Active, exec: &ToolExecution, own: Option<Touch>) {
    let mut front = lock(&active.front);
    let bubbled = front
        .children
        .remove(&exec.token)
        .map(|w| w.touches)
        .unwrap_or_default();
    match &exec.parent {
        Some(parent) => {
            // A failed or cancelled child contributes nothing.
            if exec.is_error || exec.cancelled {
                return;
            }
            front.bubble(parent, bubbled.into_iter().chain(own));
        }
        None => {
            let mut touches = bubbled;
            touches.extend(own);
            if touches.is_empty() {
                return;
            }
            if front.step_open {
                front.staged.extend(touches);
            } else {
                let _ = active.tx.send(Request::Project(touches));
            }
        }
    }
}

impl Instance {
    /// Reports a session event after the host appended it (R-RT-5).
    pub fn session_event(&self, event: SessionEvent) {
        let Some(active) = &self.active else { return };
        let mut front = lock(&active.front);
        match event {
            SessionEvent::StepStart => front.step_open = true,
            SessionEvent::StepEnd | SessionEvent::TurnEnd => {
                front.step_open = false;
                if event == SessionEvent::TurnEnd {
                    front.end_turn();
                }
                let staged = std::mem::take(&mut front.staged);
                if !staged.is_empty() {
                    let _ = active.tx.send(Request::Project(staged));
                }
            }
        }
    }

    /// Resolves once every projection queued before this call has finished
    /// (R-RT-6). Touches staged by an open step stay staged.
    pub async fn settle(&self) {
        let Some(active) = &self.active else { return };
        let (tx, rx) = oneshot::channel();
        if active.tx.send(Request::Settle(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// The directories this instance knows (R-RT-3 b: those whose files a
    /// message the model still sees holds), absolute, as of its last
    /// composition, after every projection queued before this call; none
    /// before a composition or for a no-op instance. A touch that reaches
    /// only these ([`crate::tool_args::TouchedPath::reaches`]) makes a
    /// composition reconcile nothing a pre-step would not (the agent hook's
    /// quiet memo answers such touches from stamps, decision 0085).
    pub async fn known_directories(&self) -> Vec<Utf8PathBuf> {
        let Some(active) = &self.active else {
            return Vec::new();
        };
        let (tx, rx) = oneshot::channel();
        if active.tx.send(Request::Known(tx)).is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }

    /// Parent tokens with bubbled touches waiting (tests count them).
    #[cfg(test)]
    fn waiting_parents(&self) -> usize {
        self.active
            .as_ref()
            .map_or(0, |a| lock(&a.front).children.len())
    }

    /// Cancels in-flight work; nothing is written to the inbox afterwards.
    pub fn dispose(&self) {
        let _guard = lock(&self.apply);
        self.cancel.cancel();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.dispose();
    }
}

fn passthrough<M>(decision: Decision<M>) -> PreStepOutcome<M> {
    PreStepOutcome {
        batch: match decision {
            Decision::Reject => None,
            Decision::Enter(items) => Some(
                items
                    .into_iter()
                    .map(|i| BatchEntry::Host(i.message))
                    .collect(),
            ),
        },
        entered: None,
    }
}

/// Folds the message right after the last claimed message (position 0 when
/// none survived), R-RT-1.
fn fold<M>(decision: Decision<M>, message: Option<WorkspaceMessage>) -> PreStepOutcome<M> {
    let Decision::Enter(items) = decision else {
        return PreStepOutcome {
            batch: None,
            entered: None,
        };
    };
    let at = items.iter().rposition(|i| i.claimed).map_or(0, |p| p + 1);
    let mut batch: Vec<BatchEntry<M>> = items
        .into_iter()
        .map(|i| BatchEntry::Host(i.message))
        .collect();
    if let Some(m) = &message {
        batch.insert(at, BatchEntry::Workspace(m.clone()));
    }
    PreStepOutcome {
        batch: Some(batch),
        entered: message,
    }
}
