//! [`Instance`]: the runtime's instance-level calls over the reference
//! in-memory host, on the disk provider — what the conformance suite drives
//! through the Node API (R-NODE-6). Products use the session path.

use std::collections::HashMap;
use std::sync::Arc;

use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Unknown};
use napi_derive::napi;

use super::promise::{Abort, queued, settle};
use super::types::{HomeVariables, TypedSource, WorkspaceMessage};
use crate::error::Failure;
use crate::hosted::{self, Hosted, MountArgs};
use crate::queue::Serial;

/// How an {@link Instance} is mounted.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct InstanceOptions {
    /// The session cwd, absolute.
    pub cwd: String,
    /// The configuration (the keys of `settings.yaml`); `null` or absent:
    /// the adapter is disabled (R-CFG-1).
    #[napi(ts_type = "Record<string, unknown> | null")]
    pub config: Option<serde_json::Value>,
    /// The environment; a key left out is unset.
    pub env: Option<HomeVariables>,
    /// Trusted roots replacing the mount's defaults (project root, DSH
    /// home, agent user-file directories).
    pub trusted_roots: Option<Vec<String>>,
    /// No ancestor instruction file is read above this directory.
    pub fs_top: Option<String>,
    /// Mount without a filesystem: a no-op (R-RT-9).
    pub no_provider: Option<bool>,
}

impl From<InstanceOptions> for MountArgs {
    fn from(o: InstanceOptions) -> Self {
        Self {
            cwd: o.cwd,
            config: o.config.filter(|c| !c.is_null()),
            env: o.env.map(Into::into).unwrap_or_default(),
            trusted_roots: o.trusted_roots,
            fs_top: o.fs_top,
            no_provider: o.no_provider.unwrap_or(false),
        }
    }
}

/// A tool execution's result, as the host reports it (R-RT-3, R-RT-4).
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct ToolResult {
    /// The tool name, matched against `touch_tools`.
    pub name: String,
    /// The path argument: fills the tool's first configured path argument
    /// (`file_path` for a tool outside `touch_tools`).
    pub path: Option<String>,
    /// Further string arguments (a shell tool's `command`, …).
    pub args: Option<HashMap<String, String>>,
    /// The execution's unique token.
    pub token: String,
    /// The parent execution's token (a code-mode child).
    pub parent: Option<String>,
    /// `false`: an error result. Default `true`.
    pub ok: Option<bool>,
    /// Whether the execution was cancelled.
    pub cancelled: Option<bool>,
}

/// What a pre-step returned.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct PreStepOutcome {
    /// `ok`, or `cancelled` (nothing appended, nothing entered).
    #[napi(ts_type = "'ok' | 'cancelled'")]
    pub outcome: String,
    /// The batch that entered: host texts, `workspace` for the folded
    /// workspace message; `["rejected"]` for a reject.
    pub batch: Vec<String>,
    /// The workspace message folded into the batch, or `null`.
    pub entered: Option<WorkspaceMessage>,
}

/// The host's state after settling.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct HostState {
    /// Workspace messages pending in the next-step inbox.
    pub inbox: Vec<WorkspaceMessage>,
    /// Every persisted user message: its text, `workspace` for a workspace
    /// message.
    pub history: Vec<String>,
    /// The sources of the visible workspace messages, oldest first.
    pub visible: Vec<TypedSource>,
}

/// One loop instance of the adapter over the reference in-memory host, on
/// the disk provider: the runtime's instance-level calls, for the
/// conformance suite and an embedder's tests. A product uses
/// {@link SessionStore} and {@link Session} instead.
#[napi]
#[derive(Debug)]
pub struct Instance {
    line: Arc<Serial<tokio::sync::Mutex<Hosted>>>,
}

#[napi]
impl Instance {
    /// Mounts an instance over an empty in-memory host.
    ///
    /// @throws `ERR_DSH_CONFIG`, `ERR_DSH_RELATIVE_PATH`, `ABORT_ERR`.
    #[napi(
        catch_unwind,
        ts_args_type = "options: InstanceOptions, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<Instance>"
    )]
    pub fn mount<'env>(
        env: &'env Env,
        options: InstanceOptions,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, Instance>> {
        let abort = Abort::new(env, signal)?;
        settle(
            env,
            abort,
            move |cancel| async move {
                if cancel.is_cancelled() {
                    return Err(Failure::aborted());
                }
                Hosted::mount(options.into()).await
            },
            |_, hosted| {
                Ok(Instance {
                    line: Serial::new(tokio::sync::Mutex::new(hosted)),
                })
            },
        )
    }

    /// A pre-step (R-RT-1): `decision` `enter` with the `claimed` prompt
    /// messages and the `extra` ones after them, `empty` (enter with no
    /// messages) or `reject`. The entering batch is appended to the host's
    /// history. An abort before its turn rejects with `ABORT_ERR`; one
    /// while it runs cancels the pre-step: outcome `cancelled`, nothing
    /// appended.
    #[napi(
        catch_unwind,
        ts_args_type = "step: number, decision: 'enter' | 'reject' | 'empty', claimed: string[], extra: string[], signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<PreStepOutcome>"
    )]
    pub fn pre_step<'env>(
        &self,
        env: &'env Env,
        step: u32,
        decision: String,
        claimed: Vec<String>,
        extra: Vec<String>,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, PreStepOutcome>> {
        queued(
            &self.line,
            env,
            "pre_step",
            signal,
            move |h, cancel| async move {
                let guard = h.lock().await;
                guard
                    .pre_step(step, &decision, claimed, extra, &cancel)
                    .await
            },
            |_, p| {
                Ok(PreStepOutcome {
                    outcome: if p.cancelled { "cancelled" } else { "ok" }.to_owned(),
                    batch: p.batch,
                    entered: p.entered.as_ref().map(Into::into),
                })
            },
        )
    }

    /// A finished tool execution (R-RT-3, R-RT-4).
    #[napi(
        catch_unwind,
        ts_args_type = "tool: ToolResult, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn tool_result<'env>(
        &self,
        env: &'env Env,
        tool: ToolResult,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let args = hosted::ToolArgs {
            name: tool.name,
            path: tool.path,
            args: tool.args.unwrap_or_default().into_iter().collect(),
            token: tool.token,
            parent: tool.parent,
            ok: tool.ok.unwrap_or(true),
            cancelled: tool.cancelled.unwrap_or(false),
        };
        queued(
            &self.line,
            env,
            "tool_result",
            signal,
            move |h, _| async move { h.lock().await.tool_result(args) },
            |_, ()| Ok(()),
        )
    }

    /// A session event: `step_start`, `step_end` or `turn_end` (R-RT-5).
    #[napi(
        catch_unwind,
        ts_args_type = "event: 'step_start' | 'step_end' | 'turn_end', signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn session_event<'env>(
        &self,
        env: &'env Env,
        event: String,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        queued(
            &self.line,
            env,
            "session_event",
            signal,
            move |h, _| async move { h.lock().await.session_event(&event) },
            |_, ()| Ok(()),
        )
    }

    /// Hides events from the host's visible surface: the latest visible
    /// `baseline` message, every `workspace` message, `all` events so far,
    /// or (`hide`) the persisted user messages at `indexes`.
    #[napi(
        catch_unwind,
        ts_args_type = "what: 'baseline' | 'workspace' | 'all' | 'hide', indexes?: number[] | undefined | null, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn compact<'env>(
        &self,
        env: &'env Env,
        what: String,
        indexes: Option<Vec<u32>>,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let hide: Vec<usize> = indexes
            .unwrap_or_default()
            .into_iter()
            .map(|i| i as usize)
            .collect();
        queued(
            &self.line,
            env,
            "compact",
            signal,
            move |h, _| async move { h.lock().await.compact(&what, hide) },
            |_, ()| Ok(()),
        )
    }

    /// A new loop instance over the same history (R-RT-7): the inbox and
    /// the instance's state are gone.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn resume<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        queued(
            &self.line,
            env,
            "resume",
            signal,
            move |h, _| async move { h.lock().await.resume().await },
            |_, ()| Ok(()),
        )
    }

    /// A hot remount (R-RT-7) with new options: the instance is disposed
    /// and a new one takes over its pending message.
    #[napi(
        catch_unwind,
        ts_args_type = "options: InstanceOptions, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn remount<'env>(
        &self,
        env: &'env Env,
        options: InstanceOptions,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        queued(
            &self.line,
            env,
            "remount",
            signal,
            move |h, _| async move { h.lock().await.remount(options.into()).await },
            |_, ()| Ok(()),
        )
    }

    /// Resolves once every projection queued so far is done (R-RT-6).
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn settle<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        queued(
            &self.line,
            env,
            "settle",
            signal,
            move |h, _| async move { h.lock().await.settle().await },
            |_, ()| Ok(()),
        )
    }

    /// The inbox, the history and the visible sources.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<HostState>"
    )]
    pub fn observe<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, HostState>> {
        queued(
            &self.line,
            env,
            "observe",
            signal,
            move |h, _| async move { Ok(h.lock().await.observe()) },
            |_, s| {
                Ok(HostState {
                    inbox: s.inbox.iter().map(Into::into).collect(),
                    history: s.history,
                    visible: s.visible.iter().map(Into::into).collect(),
                })
            },
        )
    }

    /// Disposes the instance: nothing is applied after this resolves.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn dispose<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        queued(
            &self.line,
            env,
            "dispose",
            signal,
            move |h, _| async move {
                h.lock().await.dispose();
                Ok(())
            },
            |_, ()| Ok(()),
        )
    }
}
