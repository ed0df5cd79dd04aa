//! One loop instance of the adapter: a serial lane per session that owns the
//! plugin state (frozen root, version cache, budget exclusions) and handles
//! one request at a time (R-RT-6), plus the lock-free front door that stages
//! touches (R-RT-3 .. R-RT-5).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::DshHome;
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FileVersion, FsProvider, PathKind, ProjectRoot, find_project_root,
};
use dsh_instructions_state::{Budget, CacheEntry, Config, ScopeKey, VersionCache};
use tokio::sync::{mpsc, oneshot};

use crate::compose::{ComposeInput, Composition, compose};
use crate::error::MountError;
use crate::host::{
    BatchEntry, Decision, Host, InboxId, SessionEvent, ToolExecution, WorkspaceMessage,
};
use crate::shell::command_paths;
use crate::touch::TouchKind;
use crate::user_file::UserFile;
use crate::view::VisibleView;

/// What a product mounts (R-CFG-1, R-RT-9).
#[derive(Debug, Clone)]
pub struct Mount {
    /// `None` = the plugin is disabled.
    pub config: Option<Config>,
    /// `None` = no filesystem: the adapter is a no-op.
    pub provider: Option<Arc<dyn FsProvider>>,
    /// The resolved DSH home (see `dsh_home_paths::resolve_dsh_home`).
    pub home: DshHome,
    /// The project root, when the caller already found it (the entry point
    /// [`crate::open_mount`] always does, with the provider opened for it):
    /// the instance then never walks for markers itself (R-DISC-2, R-RT-11).
    /// `None`: the instance finds it at its first composition.
    pub root: Option<ProjectRoot>,
    /// The agent user-level files of `config.user_instruction_files`,
    /// resolved against the OS home ([`crate::open_mount`] does this and
    /// trusts their directories); a file not listed here is not loaded.
    pub user_files: Vec<UserFile>,
}

/// The result of a pre-step (R-RT-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreStepOutcome<M> {
    /// The batch that enters, with the workspace message folded in; `None`
    /// when the decision was a reject.
    pub batch: Option<Vec<BatchEntry<M>>>,
    /// The workspace message folded into this batch, if any.
    pub entered: Option<WorkspaceMessage>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DecisionKind {
    Reject,
    EnterEmpty,
    EnterSome,
}

/// Outcome slot shared by a pre-step's caller and the lane, so that exactly
/// one of "applied" and "cancelled" wins.
#[derive(Debug)]
enum Slot {
    Running,
    Done(Option<WorkspaceMessage>),
    Abandoned,
}

/// One touch as the front door stages it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Touch {
    /// A file's path (a read, a write, a touch tool's path; R-RT-3): it
    /// touches its directory, existing or not.
    File(Utf8PathBuf),
    /// A directory's path (a listing, a search root): it touches the
    /// directory itself, existing or not.
    Dir(Utf8PathBuf),
    /// A shell command's candidate paths (R-DISC-10): only those the
    /// provider finds, by metadata, to be a file (its directory) or a
    /// directory (itself) inside the trusted roots touch anything.
    Shell(Vec<Utf8PathBuf>),
}

#[derive(Debug)]
enum Request {
    Project(Vec<Touch>),
    PreStep {
        step: u32,
        kind: DecisionKind,
        token: CancellationToken,
        slot: Arc<Mutex<Slot>>,
        done: oneshot::Sender<()>,
    },
    Settle(oneshot::Sender<()>),
}

/// Parent tokens whose bubbled touches are kept at once. A composite call
/// has one parent however many children it runs, so only results that never
/// arrive (a host that drops them) come near this; it bounds what such a
/// host can make an instance hold within one turn (decision 0011).
pub(crate) const MAX_WAITING_PARENTS: usize = 1024;

#[derive(Debug, Default)]
struct Front {
    step_open: bool,
    staged: Vec<Touch>,
    /// Touches bubbled to a parent token, waiting for it to settle (R-RT-4).
    /// Dropped when the parent settles, when the turn ends, and oldest first
    /// beyond [`MAX_WAITING_PARENTS`] (decision 0011).
    children: HashMap<String, Waiting>,
    /// Order stamp of the next parent that starts waiting.
    next_parent: u64,
}

/// Touches waiting for one parent token.
#[derive(Debug, Default)]
struct Waiting {
    /// When the parent first received a touch (smaller = older).
    since: u64,
    touches: Vec<Touch>,
}

impl Front {
    /// Adds `touches` to what waits for `parent`, evicting the oldest waiting
    /// parent when the bound is exceeded.
    fn bubble(&mut self, parent: &str, touches: impl IntoIterator<Item = Touch>) {
        let next = &mut self.next_parent;
        let entry = self.children.entry(parent.to_owned()).or_insert_with(|| {
            *next += 1;
            Waiting {
                since: *next,
                touches: Vec::new(),
            }
        });
        entry.touches.extend(touches);
        if self.children.len() > MAX_WAITING_PARENTS
            && let Some(oldest) = self
                .children
                .iter()
                .min_by_key(|(_, w)| w.since)
                .map(|(token, _)| token.clone())
            && let Some(dropped) = self.children.remove(&oldest)
        {
            tracing::warn!(
                parent = %oldest,
                touches = dropped.touches.len(),
                "dropping touches bubbled to a parent tool call that never reported"
            );
        }
    }

    /// Forgets every waiting parent: no tool call of an ended turn reports.
    fn end_turn(&mut self) {
        if !self.children.is_empty() {
            tracing::debug!(
                parents = self.children.len(),
                "turn ended with parent tool calls that never reported; their touches are dropped"
            );
            self.children.clear();
        }
    }
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
/// Create it with [`Instance::mount`] inside a Tokio runtime; a resume is a
/// new instance over the same history, a hot remount is [`Instance::dispose`]
/// followed by a new mount.
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
    /// [`MountError::NoRuntime`] when no Tokio runtime is current — also for
    /// a no-op mount, so an embedding mistake shows up whatever the config.
    pub fn mount(mount: Mount, host: Arc<dyn Host>) -> Result<Self, MountError> {
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
    pub fn mount_remembering(
        mount: Mount,
        host: Arc<dyn Host>,
        versions: Vec<(ScopeKey, CacheEntry<FileVersion>)>,
    ) -> Result<Self, MountError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| MountError::NoRuntime)?;
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
        let (Some(config), Some(provider)) = (mount.config, mount.provider) else {
            return Ok(Self {
                active: None,
                cancel,
                apply,
                remembered,
            });
        };
        // A `Config` is valid by construction (only `ConfigInput::resolve`
        // and the default constructors build one): nothing to check again
        // before a name reaches a probe (R-RT-11).
        let budget = config.max_bytes();
        if budget.is_disabled() {
            return Ok(Self {
                active: None,
                cancel,
                apply,
                remembered,
            });
        }
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
            excluded: None,
            view: VisibleView::default(),
            cancel: cancel.clone(),
            apply: apply.clone(),
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
        })
    }

    /// The version-cache entries a host may persist for the next loop
    /// instance over this session ([`Instance::mount_remembering`]), in
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
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use dsh_home_paths::{DshHome, HomeLabel};
    /// use dsh_instructions_discovery::{MemNode, MemoryProvider};
    /// use dsh_instructions_runtime::{Host, Instance, MemoryHost, Mount, TouchKind};
    /// use dsh_instructions_state::Config;
    ///
    /// let fs = MemoryProvider::new(vec!["/repo".into(), "/home/me/.dsh".into()]);
    /// fs.insert("/repo/.git".into(), MemNode::dir());
    /// fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("Use pnpm."));
    /// let host = Arc::new(MemoryHost::new("/repo".into()));
    /// let mount = Mount {
    ///     config: Some(Config::with_max_bytes(65_536)),
    ///     provider: Some(Arc::new(fs)),
    ///     home: DshHome { path: "/home/me/.dsh".into(), label: HomeLabel::Default },
    ///     root: None,
    ///     user_files: Vec::new(),
    /// };
    /// let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
    /// // Listing `pkg` touches `pkg` itself: its rule is pending.
    /// instance.touch("pkg".into(), TouchKind::List);
    /// instance.settle().await;
    /// assert_eq!(host.inbox()[0].source.changes[0].path, "pkg/AGENTS.md");
    /// # });
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

/// The touch of a successful execution: a shell tool's candidate paths
/// (R-CFG-11, R-DISC-10; a tool in both maps is a shell tool), else a touch
/// tool's path (R-RT-3, R-CFG-8): the first listed argument holding a
/// non-blank string; an argument listed with a trailing `/` holds a
/// directory, touched itself.
fn touch_of(config: &Config, cwd: &Utf8Path, exec: &ToolExecution) -> Option<Touch> {
    if exec.is_error || exec.cancelled {
        return None;
    }
    if let Some(args) = config.shell_tools().get(&exec.name) {
        // The optional `workdir` argument is the base for relative words.
        let base = match exec.arguments.get("workdir").and_then(|w| w.as_str()) {
            Some(dir) if !dir.trim().is_empty() => cwd.join(dir),
            _ => cwd.to_owned(),
        };
        let commands = args
            .iter()
            .filter_map(|arg| exec.arguments.get(arg).and_then(|c| c.as_str()));
        return shell_touch(&base, commands);
    }
    let args = config.touch_tools().get(&exec.name)?;
    let (raw, kind) = args.iter().find_map(|a| {
        let (key, kind) = match a.strip_suffix('/') {
            Some(key) => (key, TouchKind::List),
            None => (a.as_str(), TouchKind::Read),
        };
        let raw = exec.arguments.get(key)?.as_str()?;
        (!raw.trim().is_empty()).then_some((raw, kind))
    })?;
    typed_touch(cwd, Utf8Path::new(raw), &kind)
}

/// A typed touch as the front door stages it; `None` for a blank path of a
/// file or directory kind (it names nothing).
fn typed_touch(cwd: &Utf8Path, path: &Utf8Path, kind: &TouchKind) -> Option<Touch> {
    let raw = path.as_str().trim();
    if let TouchKind::Shell { command } = kind {
        let base = if raw.is_empty() {
            cwd.to_owned()
        } else {
            cwd.join(raw)
        };
        return shell_touch(&base, [command.as_str()]);
    }
    if raw.is_empty() {
        return None;
    }
    let abs = dsh_home_paths::normalize_lexically(&cwd.join(raw));
    Some(if kind.names_a_directory() {
        Touch::Dir(abs)
    } else {
        Touch::File(abs)
    })
}

/// Shell commands' candidate paths, absolute and normalized: relative
/// words resolve against `base` (the call's working directory). Pure text
/// work: whether a candidate exists is asked later, on the lane.
fn shell_touch<'a>(base: &Utf8Path, commands: impl IntoIterator<Item = &'a str>) -> Option<Touch> {
    let mut paths = Vec::new();
    for command in commands {
        for word in command_paths(command) {
            // `~/…` needs the OS home, which an instance does not know;
            // touching less is the conservative side (decision 0015).
            if word.as_str().starts_with("~/") {
                continue;
            }
            let path = dsh_home_paths::normalize_lexically(&base.join(&word));
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    (!paths.is_empty()).then_some(Touch::Shell(paths))
}

/// The serial lane: owns the plugin state of one loop instance.
#[derive(Debug)]
struct Lane {
    host: Arc<dyn Host>,
    provider: Arc<dyn FsProvider>,
    config: Config,
    budget: Budget,
    home: DshHome,
    user_files: Vec<UserFile>,
    cwd: Utf8PathBuf,
    /// Frozen at the first composition (R-DISC-2).
    root: Option<Utf8PathBuf>,
    cache: VersionCache<FileVersion>,
    /// The persistable part of `cache`, shared with the [`Instance`].
    remembered: Arc<Mutex<Remembered>>,
    excluded: Option<BTreeSet<ScopeKey>>,
    /// The visible surface as of the last composition (advanced by appends).
    view: VisibleView,
    cancel: CancellationToken,
    apply: Arc<Mutex<()>>,
}

impl Lane {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request>) {
        loop {
            let request = tokio::select! {
                r = rx.recv() => r,
                _ = self.cancel.cancelled() => None,
            };
            let Some(request) = request else { break };
            match request {
                Request::Settle(reply) => {
                    let _ = reply.send(());
                }
                Request::Project(touches) => {
                    let token = self.cancel.child_token();
                    if let Err(Cancelled) = self.project(&touches, &token).await {
                        tracing::debug!("projection cancelled");
                    }
                }
                Request::PreStep {
                    step,
                    kind,
                    token,
                    slot,
                    done,
                } => {
                    if let Err(Cancelled) = self.pre_step(step, kind, &token, &slot).await {
                        tracing::debug!("pre-step cancelled");
                    }
                    let _ = done.send(());
                }
            }
        }
    }

    async fn root(&mut self, cancel: &CancellationToken) -> Result<Utf8PathBuf, Cancelled> {
        if let Some(root) = &self.root {
            return Ok(root.clone());
        }
        let found = find_project_root(
            self.provider.as_ref(),
            &self.cwd,
            self.config.project_root_markers(),
            cancel,
        )
        .await?;
        Ok(found.root)
    }

    async fn compose(
        &mut self,
        root: &Utf8Path,
        extra_dirs: &BTreeSet<String>,
        cancel: &CancellationToken,
    ) -> Result<Composition, Cancelled> {
        self.view.refresh(self.host.as_ref(), &self.cwd);
        compose(&ComposeInput {
            provider: self.provider.as_ref(),
            config: &self.config,
            budget: self.budget,
            home: &self.home,
            user_files: &self.user_files,
            cwd: &self.cwd,
            root,
            cancel,
            view: &self.view,
            cache: &self.cache,
            excluded: self.excluded.as_ref(),
            extra_dirs,
        })
        .await
    }

    /// Applies a composition's state updates (the only mutation besides the
    /// inbox).
    fn commit(&mut self, root: Utf8PathBuf, composition: &mut Composition) {
        self.root = Some(root);
        if !composition.cache_updates.is_empty() {
            let mut remembered = lock(&self.remembered);
            for (scope, entry) in composition.cache_updates.drain(..) {
                remembered.update(&scope, &entry);
                self.cache.insert(scope, entry);
            }
        }
        if let Some(excluded) = composition.excluded.take() {
            self.excluded = Some(excluded);
        }
    }

    /// A touch projection: reconcile against the visible state and replace
    /// the pending message with the result (R-RT-3, R-RT-6).
    async fn project(
        &mut self,
        touches: &[Touch],
        cancel: &CancellationToken,
    ) -> Result<(), Cancelled> {
        let dirs = self.touched(touches, cancel).await?;
        if dirs.is_empty() {
            // Only shell words that name nothing: no reconciliation, no
            // read (R-HOOK-6).
            return Ok(());
        }
        let root = self.root(cancel).await?;
        let mut extra = BTreeSet::new();
        for dir in &dirs {
            touched_dirs(&root, &self.cwd, dir, &mut extra);
        }
        for (_, pending) in self.host.pending() {
            for change in &pending.source.changes {
                if let Some(dir) = change.scope.dir() {
                    extra.insert(dir.to_owned());
                }
            }
        }
        let mut composition = self.compose(&root, &extra, cancel).await?;
        let apply = self.apply.clone();
        let _guard = lock(&apply);
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        sync_inbox(self.host.as_ref(), composition.message.take());
        self.commit(root, &mut composition);
        Ok(())
    }

    /// The directories `touches` touch: a file its parent, a directory
    /// itself; a shell candidate only when the provider classifies it (one batch,
    /// metadata only) as a file (its parent) or a directory (itself).
    async fn touched(
        &self,
        touches: &[Touch],
        cancel: &CancellationToken,
    ) -> Result<Vec<Utf8PathBuf>, Cancelled> {
        let mut dirs = Vec::new();
        let mut candidates = Vec::new();
        for touch in touches {
            match touch {
                Touch::File(path) => dirs.extend(path.parent().map(Utf8Path::to_owned)),
                Touch::Dir(path) => dirs.push(path.clone()),
                Touch::Shell(paths) => candidates.extend(paths.iter().cloned()),
            }
        }
        if candidates.is_empty() {
            return Ok(dirs);
        }
        let kinds = self.provider.path_kinds(&candidates, cancel).await?;
        for (path, kind) in candidates.into_iter().zip(kinds) {
            match kind {
                PathKind::File => dirs.extend(path.parent().map(Utf8Path::to_owned)),
                PathKind::Directory => dirs.push(path),
                PathKind::Other | PathKind::Absent | PathKind::Unavailable(_) => {}
            }
        }
        Ok(dirs)
    }

    async fn pre_step(
        &mut self,
        step: u32,
        kind: DecisionKind,
        cancel: &CancellationToken,
        slot: &Mutex<Slot>,
    ) -> Result<(), Cancelled> {
        let pending = self.host.pending();
        // A pending message is reused as it is (R-RT-10); otherwise compose.
        let (message, pending_id, mut composition, root) = match pending.first() {
            Some((id, m)) => (Some(m.clone()), Some(*id), None, None),
            None => {
                let root = self.root(cancel).await?;
                let mut c = self.compose(&root, &BTreeSet::new(), cancel).await?;
                (c.message.take(), None, Some(c), Some(root))
            }
        };
        let apply = self.apply.clone();
        let _guard = lock(&apply);
        let mut s = lock(slot);
        if cancel.is_cancelled() || !matches!(*s, Slot::Running) {
            return Err(Cancelled);
        }
        let enters = match kind {
            DecisionKind::EnterSome => true,
            DecisionKind::EnterEmpty => step > 1,
            DecisionKind::Reject => false,
        };
        // Stale extra copies never survive (R-RT-2).
        for (id, _) in pending.iter().skip(1) {
            self.host.inbox_remove(*id);
        }
        let entered = match (&message, enters) {
            (Some(m), true) => {
                if let Some(id) = pending_id {
                    self.host.inbox_remove(id);
                }
                Some(m.clone())
            }
            (Some(m), false) => {
                if pending_id.is_none() {
                    self.host.inbox_prepend(m.clone());
                }
                None
            }
            (None, _) => None,
        };
        if let (Some(c), Some(root)) = (composition.as_mut(), root) {
            self.commit(root, c);
        }
        *s = Slot::Done(entered);
        Ok(())
    }
}

/// Makes the inbox hold exactly `desired` as its one pending workspace
/// message (R-RT-2).
fn sync_inbox(host: &dyn Host, desired: Option<WorkspaceMessage>) {
    let pending = host.pending();
    let mut rest: &[(InboxId, WorkspaceMessage)] = &pending;
    match (desired, pending.first()) {
        (Some(m), Some((id, current))) => {
            if *current != m {
                host.inbox_replace(*id, m);
            }
            rest = &pending[1..];
        }
        (Some(m), None) => {
            host.inbox_prepend(m);
        }
        (None, _) => {}
    }
    for (id, _) in rest {
        host.inbox_remove(*id);
    }
}

/// Directories strictly below the cwd down to the touched directory (a
/// touched file's parent), when it lies under the cwd (R-RT-3 a), as
/// root-relative keys.
fn touched_dirs(root: &Utf8Path, cwd: &Utf8Path, dir: &Utf8Path, out: &mut BTreeSet<String>) {
    let Ok(below) = dir.strip_prefix(cwd) else {
        return;
    };
    let Ok(cwd_rel) = cwd.strip_prefix(root) else {
        return;
    };
    let mut acc = cwd_rel.to_owned();
    for comp in below.components() {
        acc.push(comp.as_str());
        out.insert(acc.as_str().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryHost;
    use dsh_home_paths::HomeLabel;
    use dsh_instructions_discovery::{MemNode, MemoryProvider};
    use rstest::rstest;

    fn mount_of(config: Option<Config>) -> (Mount, Arc<MemoryHost>) {
        let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
        fs.insert("/repo/.git".into(), MemNode::dir());
        fs.insert("/repo/AGENTS.md".into(), MemNode::file("root rule"));
        fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("pkg rule"));
        fs.insert("/repo/lib/AGENTS.md".into(), MemNode::file("lib rule"));
        let mount = Mount {
            config,
            provider: Some(Arc::new(fs)),
            home: DshHome {
                path: "/home/u/.dsh".into(),
                label: HomeLabel::Default,
            },
            root: None,
            user_files: Vec::new(),
        };
        (mount, Arc::new(MemoryHost::new("/repo".into())))
    }

    fn read(path: &str, token: &str, parent: Option<&str>) -> ToolExecution {
        ToolExecution {
            name: "read".into(),
            arguments: serde_json::json!({ "file_path": path }),
            token: token.into(),
            parent: parent.map(str::to_owned),
            is_error: false,
            cancelled: false,
        }
    }

    fn file(path: &str) -> Touch {
        Touch::File(path.into())
    }

    /// Mounting from plain synchronous code is an embedding mistake reported
    /// as a value, never a panic — active or no-op alike (R-RT-9).
    #[rstest]
    #[case::active(Some(Config::with_max_bytes(4096)))]
    #[case::disabled(None)]
    fn mount_outside_a_runtime_is_no_runtime(#[case] config: Option<Config>) {
        let (mount, host) = mount_of(config);
        let got = Instance::mount(mount, host as Arc<dyn Host>);
        assert_eq!(got.err(), Some(MountError::NoRuntime));
    }

    #[tokio::test]
    async fn mount_inside_a_runtime_runs_the_lane() {
        let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
        let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
        assert!(instance.is_active());
        instance.tool_result(&read("pkg/x.ts", "t1", None));
        instance.settle().await;
        assert_eq!(host.inbox().len(), 1, "the lane projected the touch");
    }

    /// R-RT-4 keeps a child's touches until its parent settles; a parent
    /// that never reports holds nothing past the end of the turn (decision
    /// 0011), but still gets its touches within the turn, across step ends.
    #[tokio::test]
    async fn waiting_parents_are_dropped_at_turn_end() {
        let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
        let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
        instance.tool_result(&read("pkg/a.ts", "c1", Some("p1")));
        instance.tool_result(&read("lib/b.ts", "c2", Some("lost")));
        instance.session_event(SessionEvent::StepEnd);
        assert_eq!(instance.waiting_parents(), 2);

        instance.tool_result(&read("x", "p1", None));
        assert_eq!(instance.waiting_parents(), 1, "a settled parent is freed");
        instance.settle().await;
        let inbox = host.inbox();
        let paths: Vec<&str> = inbox[0]
            .source
            .changes
            .iter()
            .map(|c| c.path.as_str())
            .collect();
        assert!(paths.contains(&"pkg/AGENTS.md"), "{paths:?}");
        assert!(!paths.contains(&"lib/AGENTS.md"), "{paths:?}");

        instance.session_event(SessionEvent::TurnEnd);
        assert_eq!(instance.waiting_parents(), 0);
    }

    fn bash(command: &str, workdir: Option<&str>) -> ToolExecution {
        let mut arguments = serde_json::json!({ "command": command });
        if let Some(dir) = workdir {
            arguments["workdir"] = dir.into();
        }
        ToolExecution {
            name: "Bash".into(),
            arguments,
            token: "b1".into(),
            parent: None,
            is_error: false,
            cancelled: false,
        }
    }

    fn shell_config(also_a_touch_tool: bool) -> Config {
        let mut input =
            serde_json::json!({"max_bytes": 4096, "shell_tools": {"Bash": ["command"]}});
        if also_a_touch_tool {
            input["touch_tools"] = serde_json::json!({"Bash": ["command"]});
        }
        serde_json::from_value::<dsh_instructions_state::ConfigInput>(input)
            .expect("config input")
            .resolve()
            .expect("valid")
            .config
    }

    /// Runs one Bash call after the baseline entered, on a memory tree with
    /// `pkg/src/x.ts` and `/outside/o.ts`; returns the paths the projected
    /// message changes and the reads the projection made.
    async fn shell_run(config: Config, exec: ToolExecution) -> (Vec<String>, u64) {
        run_after_baseline(config, |i| i.tool_result(&exec)).await
    }

    /// [`shell_run`] for any report the instance gets.
    async fn run_after_baseline(
        config: Config,
        report: impl FnOnce(&Instance),
    ) -> (Vec<String>, u64) {
        let fs = Arc::new(MemoryProvider::new(vec![
            "/repo".into(),
            "/home/u/.dsh".into(),
        ]));
        fs.insert("/repo/.git".into(), MemNode::dir());
        fs.insert("/repo/AGENTS.md".into(), MemNode::file("root rule"));
        fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("pkg rule"));
        fs.insert("/repo/pkg/src/x.ts".into(), MemNode::file("code"));
        fs.insert("/outside/pkg/AGENTS.md".into(), MemNode::file("no"));
        fs.insert("/outside/o.ts".into(), MemNode::file("no"));
        let mount = Mount {
            config: Some(config),
            provider: Some(fs.clone()),
            home: DshHome {
                path: "/home/u/.dsh".into(),
                label: HomeLabel::Default,
            },
            root: None,
            user_files: Vec::new(),
        };
        let host = Arc::new(MemoryHost::new("/repo".into()));
        let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
        let entered = instance
            .pre_step(
                1,
                Decision::Enter(vec![crate::host::BatchItem {
                    message: "prompt".to_owned(),
                    claimed: true,
                }]),
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        assert!(entered.entered.is_some(), "the baseline entered");
        host.append_batch(&entered.batch.expect("entered"));
        fs.reset_counters();
        report(&instance);
        instance.settle().await;
        let paths = host
            .inbox()
            .iter()
            .flat_map(|m| m.source.changes.iter().map(|c| c.path.clone()))
            .collect();
        (paths, fs.counters().reads)
    }

    /// R-DISC-10 / R-CFG-11: which shell calls touch which directories.
    #[rstest]
    #[case::file_word(shell_config(false), bash("cat pkg/src/x.ts", None), &["pkg/AGENTS.md"])]
    #[case::directory_word(shell_config(false), bash("ls pkg", None), &["pkg/AGENTS.md"])]
    #[case::cd_then_file(shell_config(false), bash("cd pkg && cat src/x.ts", None), &["pkg/AGENTS.md"])]
    #[case::workdir_relative(shell_config(false), bash("cat src/x.ts", Some("pkg")), &["pkg/AGENTS.md"])]
    #[case::workdir_absolute(shell_config(false), bash("cat x.ts", Some("/repo/pkg/src")), &["pkg/AGENTS.md"])]
    #[case::in_both_maps_is_a_shell_tool(shell_config(true), bash("cat pkg/src/x.ts", None), &["pkg/AGENTS.md"])]
    #[case::off_by_default(Config::with_max_bytes(4096), bash("cat pkg/src/x.ts", None), &[])]
    #[case::missing_path(shell_config(false), bash("cat pkg/nope.ts", None), &[])]
    #[case::glob_is_no_path(shell_config(false), bash("cat pkg/*", None), &[])]
    #[case::outside_the_roots(shell_config(false), bash("cat /outside/o.ts /outside/pkg", None), &[])]
    #[tokio::test]
    async fn shell_touches(
        #[case] config: Config,
        #[case] exec: ToolExecution,
        #[case] expected: &[&str],
    ) {
        let (paths, reads) = shell_run(config, exec).await;
        assert_eq!(paths, expected);
        if expected.is_empty() {
            // R-HOOK-6: words that name nothing cost no read.
            assert_eq!(reads, 0);
        }
    }

    fn shell(command: &str) -> TouchKind {
        TouchKind::Shell {
            command: command.to_owned(),
        }
    }

    /// Typed touches (issue 19): a file kind touches the file's directory,
    /// existing or not; a directory kind the directory itself; a shell
    /// touch reads its words from the path as workdir — none of them needs
    /// a `touch_tools` or `shell_tools` entry.
    #[rstest]
    #[case::read_missing_file("pkg/new.ts", TouchKind::Read, &["pkg/AGENTS.md"])]
    #[case::write_absolute("/repo/pkg/src/x.ts", TouchKind::Write, &["pkg/AGENTS.md"])]
    #[case::read_of_a_directory_is_its_parent("pkg", TouchKind::Read, &[])]
    #[case::list_directory("pkg", TouchKind::List, &["pkg/AGENTS.md"])]
    #[case::search_missing_directory("pkg/gone", TouchKind::Search, &["pkg/AGENTS.md"])]
    #[case::list_normalized("pkg/src/..", TouchKind::List, &["pkg/AGENTS.md"])]
    #[case::shell_in_workdir("pkg", shell("cat src/x.ts"), &["pkg/AGENTS.md"])]
    #[case::shell_blank_workdir_is_the_cwd("", shell("ls pkg"), &["pkg/AGENTS.md"])]
    #[case::shell_missing_word("pkg", shell("cat nope.ts"), &[])]
    #[case::blank_path("  ", TouchKind::Read, &[])]
    #[case::outside_the_cwd("/outside/pkg", TouchKind::List, &[])]
    #[tokio::test]
    async fn typed_touches(#[case] path: &str, #[case] kind: TouchKind, #[case] expected: &[&str]) {
        // The default config: no shell tools, no tool named for the kind.
        let (paths, reads) = run_after_baseline(Config::with_max_bytes(4096), |i| {
            i.touch(Utf8Path::new(path), kind)
        })
        .await;
        assert_eq!(paths, expected);
        if expected.is_empty() {
            assert_eq!(reads, 0);
        }
    }

    /// R-CFG-8: a `touch_tools` argument listed with a trailing `/` holds a
    /// directory, touched itself; without it, the path is a file's.
    #[rstest]
    #[case::directory_argument(&["path/"], "pkg", &["pkg/AGENTS.md"])]
    #[case::file_argument(&["path"], "pkg", &[])]
    #[case::first_argument_that_holds_a_string(&["dir/", "path"], "pkg/src/x.ts", &["pkg/AGENTS.md"])]
    #[tokio::test]
    async fn touch_tool_directory_arguments(
        #[case] args: &[&str],
        #[case] value: &str,
        #[case] expected: &[&str],
    ) {
        let input = serde_json::json!({"max_bytes": 4096, "touch_tools": {"ls": args}});
        let config = serde_json::from_value::<dsh_instructions_state::ConfigInput>(input)
            .expect("input")
            .resolve()
            .expect("valid")
            .config;
        let exec = ToolExecution {
            name: "ls".into(),
            arguments: serde_json::json!({ "path": value }),
            token: "l1".into(),
            parent: None,
            is_error: false,
            cancelled: false,
        };
        let (paths, _) = shell_run(config, exec).await;
        assert_eq!(paths, expected);
    }

    /// A touch while a step is open waits for the step's end (R-RT-5), as a
    /// tool result does.
    #[tokio::test]
    async fn typed_touches_wait_for_the_step_end() {
        let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
        let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
        instance.session_event(SessionEvent::StepStart);
        instance.touch(Utf8Path::new("pkg"), TouchKind::List);
        instance.settle().await;
        assert!(host.inbox().is_empty(), "staged while the step is open");
        instance.session_event(SessionEvent::StepEnd);
        instance.settle().await;
        assert_eq!(host.inbox().len(), 1);
    }

    /// A failed or cancelled shell call touches nothing, like any tool
    /// (R-RT-3).
    #[rstest]
    #[case::error(true, false)]
    #[case::cancelled(false, true)]
    #[tokio::test]
    async fn failed_shell_calls_touch_nothing(#[case] is_error: bool, #[case] cancelled: bool) {
        let mut exec = bash("cat pkg/src/x.ts", None);
        exec.is_error = is_error;
        exec.cancelled = cancelled;
        let (paths, _) = shell_run(shell_config(false), exec).await;
        assert!(paths.is_empty(), "{paths:?}");
    }

    #[rstest]
    fn the_oldest_waiting_parent_goes_beyond_the_bound() {
        let mut front = Front::default();
        for i in 0..MAX_WAITING_PARENTS {
            front.bubble(&format!("p{i}"), [file(&format!("/r/{i}"))]);
        }
        // A later touch for p0 does not make it younger: age is first bubble.
        front.bubble("p0", [file("/r/again")]);
        assert_eq!(front.children.len(), MAX_WAITING_PARENTS);
        front.bubble("newest", [file("/r/n")]);
        assert_eq!(front.children.len(), MAX_WAITING_PARENTS);
        assert!(!front.children.contains_key("p0"));
        assert!(front.children.contains_key("p1"));
        assert_eq!(front.children["newest"].touches, [file("/r/n")]);
    }

    #[rstest]
    fn turn_end_forgets_every_waiting_parent() {
        let mut front = Front::default();
        front.bubble("p", [file("/r/a")]);
        front.bubble("q", []);
        front.end_turn();
        assert!(front.children.is_empty());
    }
}
