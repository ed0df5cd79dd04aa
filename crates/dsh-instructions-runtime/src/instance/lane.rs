//! The serial lane (R-RT-6): the task that owns one loop instance's plugin
//! state and handles the front door's requests one at a time — touch
//! projections, pre-steps and settles.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::DshHome;
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider, find_project_root,
    provider::{FileVersion, PathKind},
};
use dsh_instructions_state::{
    Budget, Config, ScopeKey, cache::VersionCache, scope::ScopeKind, source::Action,
};
use tokio::sync::{mpsc, oneshot};

use super::front::Touch;
use super::{Remembered, lock};
use crate::compose::{ComposeInput, Composition, compose};
use crate::dir_path::dir_abs;
use crate::host::{Host, VisibleMark, WorkspaceMessage};
use crate::inbox::{Inbox, InboxId};
use crate::rule_facts::RuleFacts;
use crate::settle::SettleMemo;
use crate::touch::below_cwd;
use crate::user_file::UserFile;
use crate::view::{Refreshed, VisibleView};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DecisionKind {
    Reject,
    EnterEmpty,
    EnterSome,
}

/// Outcome slot shared by a pre-step's caller and the lane, so that exactly
/// one of "applied" and "cancelled" wins.
#[derive(Debug)]
pub(super) enum Slot {
    Running,
    Done(Option<WorkspaceMessage>),
    Abandoned,
}

#[derive(Debug)]
pub(super) enum Request {
    Project(Vec<Touch>),
    PreStep {
        step: u32,
        kind: DecisionKind,
        /// The caller says this pre-step follows the tool results it just
        /// reported, at once ([`super::Instance::pre_step_after_tools`]).
        after_tools: bool,
        token: CancellationToken,
        slot: Arc<Mutex<Slot>>,
        done: oneshot::Sender<()>,
    },
    Settle(oneshot::Sender<()>),
    /// The known directories, absolute ([`super::Instance::known_directories`]).
    Known(oneshot::Sender<Vec<Utf8PathBuf>>),
}

/// The serial lane: owns the plugin state of one loop instance.
#[derive(Debug)]
pub(super) struct Lane {
    pub(super) host: Arc<dyn Host>,
    pub(super) provider: Arc<dyn FsProvider>,
    pub(super) config: Config,
    pub(super) budget: Budget,
    pub(super) home: DshHome,
    pub(super) user_files: Vec<UserFile>,
    pub(super) cwd: Utf8PathBuf,
    /// Frozen at the first composition (R-DISC-2).
    pub(super) root: Option<Utf8PathBuf>,
    pub(super) cache: VersionCache<FileVersion>,
    /// The persistable part of `cache`, shared with the [`Instance`](super::Instance).
    pub(super) remembered: Arc<Mutex<Remembered>>,
    /// The next-step inbox, shared with the [`Instance`](super::Instance)
    /// that reads it; only the lane changes it.
    pub(super) inbox: Arc<Mutex<Inbox>>,
    pub(super) excluded: Option<BTreeSet<ScopeKey>>,
    /// The visible surface as of the last composition (advanced by appends).
    pub(super) view: VisibleView,
    pub(super) cancel: CancellationToken,
    pub(super) apply: Arc<Mutex<()>>,
    /// The visible mark a projection's composition reconciled every known
    /// scope at, since the last pre-step; `None` when none did.
    pub(super) reconciled: Option<Option<VisibleMark>>,
    /// Rule front matter by file version ([`RuleFacts`]).
    pub(super) rule_facts: RuleFacts,
    /// Directories found settled against `view` and `cache`
    /// ([`SettleMemo`]): kept in step with both here.
    pub(super) settle: SettleMemo,
}

impl Lane {
    pub(super) async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request>) {
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
                Request::Known(reply) => {
                    let known = match &self.root {
                        Some(root) => self.view.known().map(|rel| dir_abs(root, rel)).collect(),
                        None => Vec::new(),
                    };
                    let _ = reply.send(known);
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
                    after_tools,
                    token,
                    slot,
                    done,
                } => {
                    let reuse = after_tools && self.reconciled_now();
                    self.reconciled = None;
                    if let Err(Cancelled) = self.pre_step(step, kind, reuse, &token, &slot).await {
                        tracing::debug!("pre-step cancelled");
                    }
                    let _ = done.send(());
                }
            }
        }
    }

    /// Whether a projection since the last pre-step reconciled every known
    /// scope and nothing reached the visible surface after it: a pre-step
    /// that follows at once may take that reconciliation as its own
    /// (R-RT-10), since a change in between is indistinguishable from one
    /// just after it.
    fn reconciled_now(&mut self) -> bool {
        let Some(Some(at)) = self.reconciled else {
            return false;
        };
        self.refresh_view();
        self.view.mark() == Some(at)
    }

    /// Brings the view up to the host's surface, dropping the settled
    /// records of whatever changed in it.
    fn refresh_view(&mut self) {
        match self.view.refresh(self.host.as_ref(), &self.cwd) {
            Refreshed::All => self.settle.clear(),
            Refreshed::Dirs(dirs) => {
                for dir in &dirs {
                    self.settle.forget(dir);
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
        touched: &[Utf8PathBuf],
        cancel: &CancellationToken,
    ) -> Result<Composition, Cancelled> {
        self.refresh_view();
        // Rules a pending projection attached stay attached when this
        // composition replaces it (R-RULE-4, R-RT-6).
        let mut pending_rules = BTreeSet::new();
        if !self.config.rule_formats().is_empty() {
            for pending in lock(&self.inbox).messages() {
                for change in &pending.source.changes {
                    if matches!(change.scope.kind(), ScopeKind::Rule { .. })
                        && change.action != Action::Remove
                    {
                        pending_rules.insert(change.scope.clone());
                    }
                }
            }
        }
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
            touched,
            pending_rules: &pending_rules,
            rule_facts: &self.rule_facts,
            settle: &self.settle,
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
                if let Some(dir) = scope.dir() {
                    self.settle.forget(dir);
                }
                self.cache.insert(scope, entry);
            }
        }
        if let Some(excluded) = composition.excluded.take() {
            // What a pass skips changed: every record's `skip` bits may.
            self.settle.clear();
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
        self.reconciled = None;
        let (dirs, paths) = self.touched(touches, cancel).await?;
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
        for pending in lock(&self.inbox).messages() {
            for change in &pending.source.changes {
                if let Some(dir) = change.scope.dir() {
                    extra.insert(dir.to_owned());
                }
            }
        }
        let mut composition = self.compose(&root, &extra, &paths, cancel).await?;
        let apply = self.apply.clone();
        let _guard = lock(&apply);
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        sync_inbox(&mut lock(&self.inbox), composition.message.take());
        self.commit(root, &mut composition);
        self.reconciled = Some(self.view.mark());
        Ok(())
    }

    /// The directories `touches` touch: a file its parent, a directory
    /// itself; a shell candidate only when the provider classifies it (one batch,
    /// metadata only) as a file (its parent) or a directory (itself).
    /// Second, the touched paths themselves (files and directories), which
    /// path-scoped rules match (R-RULE-3).
    async fn touched(
        &self,
        touches: &[Touch],
        cancel: &CancellationToken,
    ) -> Result<(Vec<Utf8PathBuf>, Vec<Utf8PathBuf>), Cancelled> {
        let mut dirs = Vec::new();
        let mut paths = Vec::new();
        let mut candidates = Vec::new();
        for touch in touches {
            match touch {
                Touch::Path(touched) => {
                    dirs.extend(touched.dir().map(Utf8Path::to_owned));
                    paths.push(touched.path().to_owned());
                }
                Touch::Shell(paths) => candidates.extend(paths.iter().cloned()),
            }
        }
        if candidates.is_empty() {
            return Ok((dirs, paths));
        }
        let kinds = self.provider.path_kinds(&candidates, cancel).await?;
        for (path, kind) in candidates.into_iter().zip(kinds) {
            match kind {
                PathKind::File => {
                    dirs.extend(path.parent().map(Utf8Path::to_owned));
                    paths.push(path);
                }
                PathKind::Directory => {
                    dirs.push(path.clone());
                    paths.push(path);
                }
                PathKind::Other | PathKind::Absent | PathKind::Unavailable(_) => {}
            }
        }
        Ok((dirs, paths))
    }

    async fn pre_step(
        &mut self,
        step: u32,
        kind: DecisionKind,
        reuse: bool,
        cancel: &CancellationToken,
        slot: &Mutex<Slot>,
    ) -> Result<(), Cancelled> {
        let pending = lock(&self.inbox).pending().to_vec();
        // A pending message is reused as it is (R-RT-10); otherwise compose,
        // unless the tool results' projections just reconciled everything.
        let (message, pending_id, mut composition, root) = match pending.first() {
            Some((id, m)) => (Some(m.clone()), Some(*id), None, None),
            None if reuse => (None, None, None, None),
            None => {
                let root = self.root(cancel).await?;
                let mut c = self.compose(&root, &BTreeSet::new(), &[], cancel).await?;
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
        let mut inbox = lock(&self.inbox);
        // Stale extra copies never survive (R-RT-2).
        for (id, _) in pending.iter().skip(1) {
            inbox.remove(*id);
        }
        let entered = match (&message, enters) {
            (Some(m), true) => {
                if let Some(id) = pending_id {
                    inbox.remove(id);
                }
                Some(m.clone())
            }
            (Some(m), false) => {
                if pending_id.is_none() {
                    inbox.prepend(m.clone());
                }
                None
            }
            (None, _) => None,
        };
        drop(inbox);
        if let (Some(c), Some(root)) = (composition.as_mut(), root) {
            self.commit(root, c);
        }
        *s = Slot::Done(entered);
        Ok(())
    }
}

/// Makes the inbox hold exactly `desired` as its one pending workspace
/// message (R-RT-2).
fn sync_inbox(inbox: &mut Inbox, desired: Option<WorkspaceMessage>) {
    let ids: Vec<InboxId> = inbox.pending().iter().map(|(id, _)| *id).collect();
    let mut rest: &[InboxId] = &ids;
    match (desired, ids.first()) {
        (Some(m), Some(&id)) => {
            if inbox.pending()[0].1 != m {
                inbox.replace(id, m);
            }
            rest = &ids[1..];
        }
        (Some(m), None) => {
            inbox.prepend(m);
        }
        (None, _) => {}
    }
    for id in rest {
        inbox.remove(*id);
    }
}

/// Directories strictly below the cwd down to the touched directory (a
/// touched file's parent), when it lies under the cwd (R-RT-3 a), as
/// root-relative keys ([`crate::touch::below_cwd`], which
/// [`crate::tool_args::TouchedPath::reaches`] reads the same way).
pub(super) fn touched_dirs(
    root: &Utf8Path,
    cwd: &Utf8Path,
    dir: &Utf8Path,
    out: &mut BTreeSet<String>,
) {
    let Ok(cwd_rel) = cwd.strip_prefix(root) else {
        return;
    };
    let mut acc = cwd_rel.to_owned();
    for name in below_cwd(cwd, Some(dir)) {
        acc.push(name);
        out.insert(acc.as_str().to_owned());
    }
}
