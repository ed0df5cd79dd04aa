//! The [`Driver`] over the real runtime: `dsh_instructions_runtime::Instance`
//! mounted on its reference [`MemoryHost`].
//!
//! This is the only module that knows runtime, state and provider types; the
//! runner and matcher see plain observed data.

use std::collections::BTreeMap;
use std::sync::Arc;

use dsh_home_paths::{HomeEnv, resolve_dsh_home};
use dsh_instructions_discovery::{
    CancellationToken, CapStdProvider, FsProvider, ambient_authority,
};
use dsh_instructions_runtime::{
    BatchEntry, BatchItem, Decision as RtDecision, HistoryItem, Host, Instance, MemoryHost, Mount,
    SessionEvent, ToolExecution, WorkspaceMessage,
};
use dsh_instructions_state as state;

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
    mount: Option<Mount>,
    /// Resolved `touch_tools` of the current mount, to build tool arguments.
    touch_tools: BTreeMap<String, Vec<String>>,
}

/// Builds the runtime mount for a spec; a config the state crate refuses or
/// an unresolvable home fails the scenario with that message.
fn runtime_mount(spec: &MountSpec) -> Result<(Mount, BTreeMap<String, Vec<String>>), String> {
    let config = match &spec.config {
        None => None,
        // Validation (and its typed errors) is the state crate's job.
        Some(c) => Some(c.resolve().map_err(|e| format!("config: {e}"))?.config),
    };
    let env = HomeEnv {
        home: Some(spec.env.home.clone().into()),
        dsh_home: spec.env.dsh_home.clone().map(Into::into),
        cwd: spec.cwd.clone().into(),
        account_home: None,
    };
    let explicit = config.as_ref().and_then(|c| c.dsh_home.clone());
    let home = resolve_dsh_home(explicit.as_deref(), &env).map_err(|e| format!("home: {e}"))?;
    let provider: Option<Arc<dyn FsProvider>> = match &spec.provider {
        ProviderHandle::Memory(p) => Some(Arc::new(p.clone())),
        ProviderHandle::Disk => Some(Arc::new(
            CapStdProvider::new(spec.trusted_roots.iter().cloned(), ambient_authority())
                .map_err(|e| format!("cap-std provider: {e}"))?,
        )),
        ProviderHandle::None => None,
    };
    let touch_tools = config
        .as_ref()
        .map(|c| c.touch_tools.clone())
        .unwrap_or_default();
    Ok((
        Mount {
            config,
            provider,
            home,
            root: None,
        },
        touch_tools,
    ))
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
                    state::Action::Set => ChangeActionObs::Set,
                    state::Action::Replace => ChangeActionObs::Replace,
                    state::Action::Remove => ChangeActionObs::Remove,
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

const NOT_MOUNTED: &str = "driver used before mount";

impl RuntimeDriver {
    fn host(&self) -> Result<&Arc<MemoryHost>, String> {
        self.host.as_ref().ok_or_else(|| NOT_MOUNTED.to_owned())
    }

    fn instance(&self) -> Result<&Instance, String> {
        self.instance.as_ref().ok_or_else(|| NOT_MOUNTED.to_owned())
    }

    fn start(&mut self, mount: Mount) -> Result<(), String> {
        let host: Arc<dyn Host> = self.host()?.clone();
        self.instance = Some(Instance::mount(mount.clone(), host));
        self.mount = Some(mount);
        Ok(())
    }

    fn dispose(&mut self) {
        if let Some(i) = self.instance.take() {
            i.dispose();
        }
    }
}

impl Driver for RuntimeDriver {
    async fn mount(&mut self, spec: &MountSpec) -> Result<(), String> {
        let (mount, tools) = runtime_mount(spec)?;
        self.host = Some(Arc::new(MemoryHost::new(spec.cwd.clone())));
        self.touch_tools = tools;
        self.start(mount)
    }

    async fn pre_step(&mut self, input: PreStepInput<'_>) -> Result<PreStepResult, String> {
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

    async fn tool(&mut self, input: &ToolInput) -> Result<(), String> {
        // The path goes under every argument name configured for the tool
        // (and `file_path` for tools outside touch_tools), so the scenario
        // needs no knowledge of argument names.
        let mut args = serde_json::Map::new();
        if let Some(path) = &input.path {
            let names = self
                .touch_tools
                .get(&input.name)
                .cloned()
                .unwrap_or_else(|| vec!["file_path".to_owned()]);
            for n in names {
                args.insert(n, serde_json::Value::String(path.clone()));
            }
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

    async fn event(&mut self, event: EventKind) -> Result<(), String> {
        let e = match event {
            EventKind::StepStart => SessionEvent::StepStart,
            EventKind::StepEnd => SessionEvent::StepEnd,
            EventKind::TurnEnd => SessionEvent::TurnEnd,
        };
        self.host()?.append_event(e);
        self.instance()?.session_event(e);
        Ok(())
    }

    async fn compact(&mut self, compact: &Compact) -> Result<(), String> {
        let host = self.host()?;
        match compact {
            Compact::Baseline => host.compact_baseline(),
            Compact::Workspace => host.compact_workspace(),
            Compact::All => host.compact_all(),
            Compact::Hide(indexes) => host.hide_user_messages(indexes),
        }
        Ok(())
    }

    async fn resume(&mut self) -> Result<(), String> {
        self.dispose();
        // The inbox is not persisted (R-RT-7).
        self.host()?.clear_inbox();
        let mount = self.mount.clone().ok_or_else(|| NOT_MOUNTED.to_owned())?;
        self.start(mount)
    }

    async fn remount(&mut self, spec: &MountSpec) -> Result<(), String> {
        self.dispose();
        let (mount, tools) = runtime_mount(spec)?;
        self.touch_tools = tools;
        self.start(mount)
    }

    async fn settle(&mut self) -> Result<(), String> {
        self.instance()?.settle().await;
        Ok(())
    }

    async fn observe(&mut self) -> Result<HostState, String> {
        let host = self.host()?;
        Ok(HostState {
            inbox: host.inbox().iter().map(observed).collect(),
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
