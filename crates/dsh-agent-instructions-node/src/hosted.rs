//! The runtime's instance-level calls over the reference in-memory host
//! (`host::MemoryHost`) on the disk provider: what a scenario of the
//! conformance suite drives (pre-steps with claimed and extra messages and
//! a decision, tool results with tokens and parents, session events,
//! compaction of chosen history indexes, resume, remount), so the suite
//! runs through the Node API (R-NODE-6). The session path (`ops.rs`) stays
//! the documented entry; this is for conformance and an embedder's tests.

use std::collections::BTreeMap;
use std::sync::Arc;

use dsh_agent_instructions::fs::Utf8PathBuf;
use dsh_agent_instructions::host::{HistoryItem, MemoryHost};
use dsh_agent_instructions::{
    BatchEntry, BatchItem, CancellationToken, CapStdFactory, ConfigInput, Decision, Host, Instance,
    MountBuilder, Opened, SessionEvent, ToolExecution, TypedSource, WorkspaceMessage,
    ambient_authority,
};

use crate::error::{Code, Failure};
use crate::ops::EnvInput;

/// How an instance is mounted: a scenario's mount, with its paths already
/// on disk.
#[derive(Debug, Clone, Default)]
pub(crate) struct MountArgs {
    pub(crate) cwd: String,
    /// The configuration object; `None`: mounted disabled.
    pub(crate) config: Option<serde_json::Value>,
    pub(crate) env: EnvInput,
    /// Explicit trusted roots replacing the mount's defaults.
    pub(crate) trusted_roots: Option<Vec<String>>,
    /// No ancestor file above this directory is read (the scenario's `/`).
    pub(crate) fs_top: Option<String>,
    /// Mount without a filesystem: a no-op (R-RT-9).
    pub(crate) no_provider: bool,
}

async fn open(args: &MountArgs) -> Result<(Opened, BTreeMap<String, Vec<String>>), Failure> {
    let cwd = crate::ops::absolute("cwd", &args.cwd)?;
    let mut mount = MountBuilder::new(cwd).env(EnvInput::home_env(Some(&args.env))?);
    match &args.config {
        None => mount = mount.disabled(),
        Some(value) => {
            let input: ConfigInput = serde_json::from_value(value.clone())
                .map_err(|e| Failure::new(Code::Config, e.to_string()).with_field("config"))?;
            mount = mount.config(input);
        }
    }
    if !args.no_provider {
        mount = mount.fs(CapStdFactory::new(ambient_authority()));
    }
    if let Some(top) = &args.fs_top {
        mount = mount.ceiling(crate::ops::absolute("fsTop", top)?);
    }
    if let Some(roots) = &args.trusted_roots {
        let roots = roots
            .iter()
            .map(|r| crate::ops::absolute("trustedRoots", r))
            .collect::<Result<Vec<_>, _>>()?;
        mount = mount.trust_only(roots);
    }
    let opened = mount
        .open(&CancellationToken::new())
        .await
        .map_err(Failure::from)?;
    let tools = opened
        .config()
        .map(|c| c.touch_tools().clone())
        .unwrap_or_default();
    Ok((opened, tools))
}

/// What a pre-step returned, as the scenario format labels it.
#[derive(Debug, Clone)]
pub(crate) struct PreStep {
    pub(crate) cancelled: bool,
    /// Host texts, `workspace` for the folded message, `rejected` for a
    /// reject.
    pub(crate) batch: Vec<String>,
    pub(crate) entered: Option<WorkspaceMessage>,
}

/// A tool result as a scenario gives it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolArgs {
    pub(crate) name: String,
    /// The path argument; fills the tool's first configured path argument
    /// (`file_path` for a tool outside `touch_tools`).
    pub(crate) path: Option<String>,
    pub(crate) args: BTreeMap<String, String>,
    pub(crate) token: String,
    pub(crate) parent: Option<String>,
    pub(crate) ok: bool,
    pub(crate) cancelled: bool,
}

/// The settled host state.
#[derive(Debug, Clone)]
pub(crate) struct HostState {
    pub(crate) inbox: Vec<WorkspaceMessage>,
    /// Persisted user messages: texts, `workspace` for a workspace message.
    pub(crate) history: Vec<String>,
    pub(crate) visible: Vec<TypedSource>,
}

/// An instance over its host; resume and remount replace the instance.
#[derive(Debug)]
pub(crate) struct Hosted {
    host: Arc<MemoryHost>,
    instance: Option<Instance>,
    args: MountArgs,
    touch_tools: BTreeMap<String, Vec<String>>,
}

impl Hosted {
    /// Mounts the first instance over an empty host.
    pub(crate) async fn mount(args: MountArgs) -> Result<Self, Failure> {
        let (opened, touch_tools) = open(&args).await?;
        // Keeping folds, as the Rust driver does, so every remount starts
        // from the last one (decision 0039).
        let host = Arc::new(MemoryHost::new(Utf8PathBuf::from(&args.cwd)).with_kept_views());
        let instance = opened
            .instance(host.clone() as Arc<dyn Host>)
            .map_err(Failure::from)?;
        Ok(Self {
            host,
            instance: Some(instance),
            args,
            touch_tools,
        })
    }

    fn instance(&self) -> Result<&Instance, Failure> {
        self.instance
            .as_ref()
            .ok_or_else(|| Failure::closed("the instance was disposed"))
    }

    pub(crate) async fn pre_step(
        &self,
        step: u32,
        decision: &str,
        claimed: Vec<String>,
        extra: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<PreStep, Failure> {
        let decision = match decision {
            "reject" => Decision::Reject,
            "empty" => Decision::Enter(Vec::new()),
            "enter" => Decision::Enter(
                claimed
                    .into_iter()
                    .map(|message| BatchItem {
                        message,
                        claimed: true,
                    })
                    .chain(extra.into_iter().map(|message| BatchItem {
                        message,
                        claimed: false,
                    }))
                    .collect(),
            ),
            other => {
                return Err(Failure::new(
                    Code::InvalidArgument,
                    format!("decision must be enter, reject or empty, got {other:?}"),
                )
                .with_field("decision"));
            }
        };
        let Ok(outcome) = self.instance()?.pre_step(step, decision, cancel).await else {
            // A cancelled pre-step appends nothing and enters nothing.
            return Ok(PreStep {
                cancelled: true,
                batch: Vec::new(),
                entered: None,
            });
        };
        let batch = match &outcome.batch {
            None => vec!["rejected".to_owned()],
            Some(entries) => {
                self.host.append_batch(entries);
                entries
                    .iter()
                    .map(|e| match e {
                        BatchEntry::Host(text) => text.clone(),
                        BatchEntry::Workspace(_) => "workspace".to_owned(),
                    })
                    .collect()
            }
        };
        Ok(PreStep {
            cancelled: false,
            batch,
            entered: outcome.entered,
        })
    }

    pub(crate) fn tool_result(&self, tool: ToolArgs) -> Result<(), Failure> {
        let mut args: serde_json::Map<String, serde_json::Value> = tool
            .args
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect();
        if let Some(path) = tool.path {
            let name = self
                .touch_tools
                .get(&tool.name)
                .and_then(|names| names.first())
                .map_or("file_path", String::as_str);
            args.insert(name.to_owned(), serde_json::Value::String(path));
        }
        self.instance()?.tool_result(&ToolExecution {
            name: tool.name,
            arguments: serde_json::Value::Object(args),
            token: tool.token,
            parent: tool.parent,
            is_error: !tool.ok,
            cancelled: tool.cancelled,
        });
        Ok(())
    }

    pub(crate) fn session_event(&self, event: &str) -> Result<(), Failure> {
        let e = match event {
            "step_start" => SessionEvent::StepStart,
            "step_end" => SessionEvent::StepEnd,
            "turn_end" => SessionEvent::TurnEnd,
            other => {
                return Err(Failure::new(
                    Code::InvalidArgument,
                    format!("event must be step_start, step_end or turn_end, got {other:?}"),
                )
                .with_field("event"));
            }
        };
        self.host.append_event(e);
        self.instance()?.session_event(e);
        Ok(())
    }

    /// `baseline`, `workspace`, `all`, or `hide` with history indexes.
    pub(crate) fn compact(&self, what: &str, hide: Vec<usize>) -> Result<(), Failure> {
        match what {
            "baseline" => self.host.compact_baseline(),
            "workspace" => self.host.compact_workspace(),
            "all" => self.host.compact_all(),
            "hide" => self.host.hide_user_messages(&hide),
            other => {
                return Err(Failure::new(
                    Code::InvalidArgument,
                    format!("compact must be baseline, workspace, all or hide, got {other:?}"),
                )
                .with_field("compact"));
            }
        }
        Ok(())
    }

    /// A new loop instance over the same history: the inbox is gone.
    pub(crate) async fn resume(&mut self) -> Result<(), Failure> {
        if let Some(i) = self.instance.take() {
            i.dispose();
        }
        let (opened, _) = open(&self.args).await?;
        self.instance = Some(
            opened
                .instance(self.host.clone() as Arc<dyn Host>)
                .map_err(Failure::from)?,
        );
        Ok(())
    }

    /// A hot remount with new mount arguments: the inbox is kept.
    pub(crate) async fn remount(&mut self, args: MountArgs) -> Result<(), Failure> {
        let (opened, tools) = open(&args).await?;
        self.args = args;
        self.touch_tools = tools;
        let host = self.host.clone() as Arc<dyn Host>;
        let next = match self.instance.take() {
            Some(previous) => opened.remount(&previous, host),
            None => opened.instance(host),
        }
        .map_err(Failure::from)?;
        self.instance = Some(next);
        Ok(())
    }

    pub(crate) async fn settle(&self) -> Result<(), Failure> {
        self.instance()?.settle().await;
        Ok(())
    }

    pub(crate) fn observe(&self) -> HostState {
        HostState {
            inbox: self
                .instance
                .as_ref()
                .map(Instance::pending)
                .unwrap_or_default(),
            history: self
                .host
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
            visible: self.host.visible_workspace(),
        }
    }

    pub(crate) fn dispose(&mut self) {
        if let Some(i) = self.instance.take() {
            i.dispose();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pre-step folds the baseline after the claimed prompt and before
    /// the extra message, and the host keeps what entered; a resume loses
    /// the pending message a touch composed, a remount keeps it.
    #[test]
    fn a_scenario_s_calls_reach_the_instance_and_its_host() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = tmp.path().to_str().expect("utf-8").to_owned();
        std::fs::create_dir_all(format!("{base}/repo/.git")).expect("git");
        std::fs::create_dir_all(format!("{base}/repo/pkg")).expect("pkg");
        std::fs::write(format!("{base}/repo/AGENTS.md"), "root rule").expect("write");
        std::fs::write(format!("{base}/repo/pkg/AGENTS.md"), "pkg rule").expect("write");
        let args = MountArgs {
            cwd: format!("{base}/repo"),
            config: Some(serde_json::json!({"max_bytes": 65536})),
            env: EnvInput {
                home: Some(format!("{base}/home")),
                dsh_home: None,
            },
            fs_top: Some(base.clone()),
            ..MountArgs::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        rt.block_on(async {
            let mut h = Hosted::mount(args.clone()).await.expect("mount");
            let cancel = CancellationToken::new();
            let p = h
                .pre_step(1, "enter", vec!["hi".into()], vec!["ctx".into()], &cancel)
                .await
                .expect("pre_step");
            assert_eq!(p.batch, ["hi", "workspace", "ctx"]);
            assert!(p.entered.expect("baseline").source.baseline);
            h.tool_result(ToolArgs {
                name: "read".into(),
                path: Some(format!("{base}/repo/pkg/a.rs")),
                token: "t1".into(),
                ok: true,
                ..ToolArgs::default()
            })
            .expect("tool");
            h.settle().await.expect("settle");
            let seen = h.observe();
            assert_eq!(seen.history, ["hi", "workspace", "ctx"]);
            assert_eq!(seen.inbox.len(), 1, "the nested file is pending");
            h.remount(args.clone()).await.expect("remount");
            assert_eq!(h.observe().inbox.len(), 1, "a remount keeps the inbox");
            h.resume().await.expect("resume");
            assert!(h.observe().inbox.is_empty(), "a resume loses it");
            assert_eq!(
                h.compact("sideways", Vec::new())
                    .expect_err("bad")
                    .field
                    .as_deref(),
                Some("compact")
            );
            h.dispose();
            assert_eq!(
                h.settle().await.expect_err("disposed").code,
                Code::SessionClosed
            );
        });
    }
}
