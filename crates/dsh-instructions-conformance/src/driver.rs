//! The [`Driver`] over the real runtime: `dsh_instructions_runtime::Instance`
//! mounted on its reference [`MemoryHost`].
//!
//! This is the only module that knows runtime, state and provider types; the
//! runner and matcher see plain observed data.

use std::collections::BTreeMap;
use std::sync::Arc;

use dsh_home_paths::HomeEnv;
use dsh_instructions_discovery::{CancellationToken, cap_std::ambient_authority};
use dsh_instructions_runtime::{
    BatchEntry, BatchItem, CapStdFactory, Decision as RtDecision, Host, Instance, MountBuilder,
    Opened, SessionEvent, ToolExecution, WorkspaceMessage,
    host_support::{HistoryItem, MemoryHost},
};
use dsh_instructions_state as state;

use crate::error::ConformanceError;
use crate::matcher::{ChangeActionObs, ObservedChange, ObservedMessage, ObservedSource};
use crate::runner::{
    CancelSignal, Driver, DriverFactory, HostState, MountSpec, PreStepInput, PreStepResult,
    ProviderHandle, ToolInput,
};
use crate::schema::{Compact, Decision, EventKind, Outcome};

/// Makes a [`RuntimeDriver`] per scenario run.
///
/// ```
/// use dsh_instructions_conformance::driver::RuntimeDriverFactory;
/// use dsh_instructions_conformance::{run_all, RunOptions};
/// let summary = run_all(&[], &RunOptions::default(), &RuntimeDriverFactory, |_| {});
/// assert_eq!(summary.lines, ["0 passed, 0 failed"]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RuntimeDriverFactory;

impl DriverFactory for RuntimeDriverFactory {
    type Driver = RuntimeDriver;
    fn create(&self) -> RuntimeDriver {
        RuntimeDriver::default()
    }
}

/// Runs scenario steps against a runtime [`Instance`] over a [`MemoryHost`].
#[derive(Debug, Default)]
pub struct RuntimeDriver {
    host: Option<Arc<MemoryHost>>,
    instance: Option<Instance>,
    /// The spec of the current mount, for a resume to mount again.
    spec: Option<MountSpec>,
    /// Resolved `touch_tools` of the current mount, to build tool arguments.
    touch_tools: BTreeMap<String, Vec<String>>,
}

async fn runtime_mount(
    spec: &MountSpec,
) -> Result<(Opened, BTreeMap<String, Vec<String>>), ConformanceError> {
    let env = HomeEnv {
        home: Some(spec.env.home.clone().into()),
        dsh_home: spec.env.dsh_home.clone().map(Into::into),
        cwd: spec.cwd.clone().into(),
        account_home: None,
    };
    let mut mount = MountBuilder::new(spec.cwd.clone()).env(env);
    if let Some(config) = &spec.config {
        mount = mount.config(config.clone());
    }
    match &spec.provider {
        ProviderHandle::Memory(p) => mount = mount.fs(p.clone()),
        ProviderHandle::Disk => mount = mount.fs(CapStdFactory::new(ambient_authority())),
        // No filesystem: the mount is a no-op (R-RT-9).
        ProviderHandle::None => {}
    }
    // The directories above the disk fixture's temporary directory belong
    // to the test machine: no ancestor file there counts.
    if let Some(top) = &spec.fs_top {
        mount = mount.ceiling(top.clone());
    }
    if let Some(roots) = &spec.trusted_roots {
        mount = mount.trust_only(roots.clone());
    }
    let opened = mount.open(&CancellationToken::new()).await?;
    let touch_tools = opened
        .config()
        .map(|c| c.touch_tools().clone())
        .unwrap_or_default();
    Ok((opened, touch_tools))
}

fn observed_source(s: &state::TypedSource) -> ObservedSource {
    ObservedSource {
        baseline: s.baseline,
        identity: s.baseline_identity.clone(),
        changes: s
            .changes
            .iter()
            .map(|c| ObservedChange {
                action: match c.action {
                    state::source::Action::Set => ChangeActionObs::Set,
                    state::source::Action::Replace => ChangeActionObs::Replace,
                    state::source::Action::Remove => ChangeActionObs::Remove,
                },
                scope: c.scope.as_str().to_owned(),
                path: c.path.clone(),
                previous_path: c.previous_path.clone(),
                digest: c.digest.map(|d| d.to_hex()),
            })
            .collect(),
    }
}

fn observed(m: &WorkspaceMessage) -> ObservedMessage {
    ObservedMessage {
        parts: m.parts.clone(),
        source: observed_source(&m.source),
    }
}

impl RuntimeDriver {
    fn host(&self) -> Result<&Arc<MemoryHost>, ConformanceError> {
        self.host.as_ref().ok_or(ConformanceError::NotMounted)
    }

    fn instance(&self) -> Result<&Instance, ConformanceError> {
        self.instance.as_ref().ok_or(ConformanceError::NotMounted)
    }

    fn start(&mut self, mount: &Opened) -> Result<(), ConformanceError> {
        let host: Arc<dyn Host> = self.host()?.clone();
        self.instance = Some(mount.instance(host)?);
        Ok(())
    }

    fn dispose(&mut self) {
        if let Some(i) = self.instance.take() {
            i.dispose();
        }
    }
}

impl Driver for RuntimeDriver {
    async fn mount(&mut self, spec: &MountSpec) -> Result<(), ConformanceError> {
        let (mount, tools) = runtime_mount(spec).await?;
        self.spec = Some(spec.clone());
        // Keeping folds, so every remount of a scenario starts from the
        // last one (decision 0039) and the restore path is conformance-tested.
        self.host = Some(Arc::new(
            MemoryHost::new(spec.cwd.clone()).with_kept_views(),
        ));
        self.touch_tools = tools;
        self.start(&mount)
    }

    async fn pre_step(
        &mut self,
        input: PreStepInput<'_>,
    ) -> Result<PreStepResult, ConformanceError> {
        let decision = match input.decision {
            Decision::Reject => RtDecision::Reject,
            Decision::Empty => RtDecision::Enter(Vec::new()),
            Decision::Enter => RtDecision::Enter(
                input
                    .claimed
                    .iter()
                    .map(|m| BatchItem {
                        message: m.clone(),
                        claimed: true,
                    })
                    .chain(input.extra.iter().map(|m| BatchItem {
                        message: m.clone(),
                        claimed: false,
                    }))
                    .collect(),
            ),
        };
        let instance = self.instance()?;
        let token = CancellationToken::new();
        let run = instance.pre_step(input.step, decision, &token);
        tokio::pin!(run);
        let result = match input.cancel {
            None => run.await,
            Some(CancelSignal(signal)) => {
                tokio::select! {
                    r = &mut run => r,
                    () = signal => {
                        token.cancel();
                        run.await
                    }
                }
            }
        };
        let Ok(outcome) = result else {
            // A cancelled pre-step appends nothing and enters nothing.
            return Ok(PreStepResult {
                outcome: Outcome::Cancelled,
                batch: Vec::new(),
                entered: None,
            });
        };
        let batch = match &outcome.batch {
            None => vec!["rejected".to_owned()],
            Some(entries) => {
                self.host()?.append_batch(entries);
                entries
                    .iter()
                    .map(|e| match e {
                        BatchEntry::Host(text) => text.clone(),
                        BatchEntry::Workspace(_) => "workspace".to_owned(),
                    })
                    .collect()
            }
        };
        Ok(PreStepResult {
            outcome: Outcome::Ok,
            batch,
            entered: outcome.entered.as_ref().map(observed),
        })
    }

    async fn tool(&mut self, input: &ToolInput) -> Result<(), ConformanceError> {
        // Explicit arguments as given; the path fills the first argument
        // name configured for the tool (`file_path` for tools outside
        // touch_tools), so the scenario needs no knowledge of names.
        let mut args: serde_json::Map<String, serde_json::Value> = input
            .args
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        if let Some(path) = &input.path {
            let name = self
                .touch_tools
                .get(&input.name)
                .and_then(|names| names.first())
                .map_or("file_path", String::as_str);
            args.insert(name.to_owned(), serde_json::Value::String(path.clone()));
        }
        self.instance()?.tool_result(&ToolExecution {
            name: input.name.clone(),
            arguments: serde_json::Value::Object(args),
            token: input.token.clone(),
            parent: input.parent.clone(),
            is_error: !input.ok,
            cancelled: input.cancelled,
        });
        Ok(())
    }

    async fn event(&mut self, event: EventKind) -> Result<(), ConformanceError> {
        let e = match event {
            EventKind::StepStart => SessionEvent::StepStart,
            EventKind::StepEnd => SessionEvent::StepEnd,
            EventKind::TurnEnd => SessionEvent::TurnEnd,
        };
        self.host()?.append_event(e);
        self.instance()?.session_event(e);
        Ok(())
    }

    async fn compact(&mut self, compact: &Compact) -> Result<(), ConformanceError> {
        let host = self.host()?;
        match compact {
            Compact::Baseline => host.compact_baseline(),
            Compact::Workspace => host.compact_workspace(),
            Compact::All => host.compact_all(),
            Compact::Hide(indexes) => host.hide_user_messages(indexes),
        }
        Ok(())
    }

    async fn resume(&mut self) -> Result<(), ConformanceError> {
        // The inbox is the instance's and is not persisted (R-RT-7): a new
        // instance starts without it.
        self.dispose();
        // A new loop instance finds its root again (R-DISC-2): mount through
        // the entry point, so the provider is opened for the root it finds.
        let spec = self.spec.clone().ok_or(ConformanceError::NotMounted)?;
        let (mount, _) = runtime_mount(&spec).await?;
        self.start(&mount)
    }

    async fn remount(&mut self, spec: &MountSpec) -> Result<(), ConformanceError> {
        let (mount, tools) = runtime_mount(spec).await?;
        self.spec = Some(spec.clone());
        self.touch_tools = tools;
        // A hot remount keeps the pending message (R-RT-7): the new
        // instance takes over the old one's inbox.
        let host: Arc<dyn Host> = self.host()?.clone();
        let next = match self.instance.take() {
            Some(previous) => mount.remount(&previous, host)?,
            None => mount.instance(host)?,
        };
        self.instance = Some(next);
        Ok(())
    }

    async fn settle(&mut self) -> Result<(), ConformanceError> {
        self.instance()?.settle().await;
        Ok(())
    }

    async fn observe(&mut self) -> Result<HostState, ConformanceError> {
        let host = self.host()?;
        Ok(HostState {
            inbox: self
                .instance
                .as_ref()
                .map(Instance::pending)
                .unwrap_or_default()
                .iter()
                .map(observed)
                .collect(),
            history: host
                .user_messages()
                .into_iter()
                .filter_map(|h| match h {
                    HistoryItem::User {
                        source: Some(_), ..
                    } => Some("workspace".to_owned()),
                    HistoryItem::User {
                        parts,
                        source: None,
                    } => Some(parts.join("\n")),
                    HistoryItem::Event(_) => None,
                })
                .collect(),
            visible: host
                .visible_workspace()
                .iter()
                .map(observed_source)
                .collect(),
        })
    }
}
