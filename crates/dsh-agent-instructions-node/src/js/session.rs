//! The session path: [`SessionStore`], [`Session`], and `explain` /
//! `preview` for a cwd.

use std::sync::Arc;

use dsh_agent_instructions::WorkspaceMessage as RsMessage;
use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Unknown};
use napi_derive::napi;

use super::promise::{Abort, js_error, queued, settle};
use super::types::{
    CreateOptions, Inspection, MountOptions, Preview, StoreOptions, TouchOptions, WorkspaceMessage,
};
use crate::error::{Code, Failure};
use crate::ops::{self, Live, Store};
use crate::queue::Serial;

fn message(m: Option<RsMessage>) -> Option<WorkspaceMessage> {
    m.as_ref().map(Into::into)
}

/// A directory of persisted sessions, one sub-directory per session id
/// (`<dir>/<id>/session.jsonl` and the settings it was created with): the
/// store the `dsh-instructions` CLI and agent hooks use.
///
/// ```ts
/// const store = new SessionStore(); // $DSH_HOME/sessions, or ~/.dsh/sessions
/// const session = await store.create("/work/repo", { preset: "dsh" });
/// ```
#[napi]
#[derive(Debug)]
pub struct SessionStore {
    store: Arc<Store>,
}

#[napi]
impl SessionStore {
    /// A store at `options.dir`, or at `$DSH_HOME/sessions` of
    /// `options.env` (default: the process's environment). Nothing is
    /// created until the first session.
    ///
    /// @throws `ERR_DSH_RELATIVE_PATH` for a relative `dir`;
    /// `ERR_DSH_HOME` when no DSH home can be resolved.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, options: Option<StoreOptions>) -> napi::Result<Self> {
        let options = options.unwrap_or_default();
        let store = napi::bindgen_prelude::block_on(Store::new(
            options.dir,
            options.env.map(Into::into),
            options.lock_wait_ms,
        ));
        match store {
            Ok(store) => Ok(Self {
                store: Arc::new(store),
            }),
            Err(failure) => Err(js_error(&env, &failure, None)?),
        }
    }

    /// The store's directory.
    #[napi(getter)]
    pub fn dir(&self) -> String {
        self.store.store.dir().to_string()
    }

    /// Creates a session for `cwd` (absolute, an existing directory) with
    /// its configuration, and opens it: the returned session holds the
    /// session lock until {@link Session.close}.
    ///
    /// @throws `ERR_DSH_RELATIVE_PATH`, `ERR_DSH_MISSING_CWD`,
    /// `ERR_DSH_NUL_IN_ARGUMENT` (`path` / `field`); `ERR_DSH_CONFIG`
    /// (`field`); `ERR_DSH_SESSION_EXISTS`; `ABORT_ERR` (the session
    /// directory may exist: {@link SessionStore.open} it).
    #[napi(
        catch_unwind,
        ts_args_type = "cwd: string, options?: CreateOptions | undefined | null, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<Session>"
    )]
    pub fn create<'env>(
        &self,
        env: &'env Env,
        cwd: String,
        options: Option<CreateOptions>,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, Session>> {
        let abort = Abort::new(env, signal)?;
        let store = Arc::clone(&self.store);
        let (id, config) = options.unwrap_or_default().split();
        settle(
            env,
            abort,
            move |cancel| async move {
                let args = config.args()?;
                store.create(id, cwd, args, cancel).await
            },
            |_, live| Ok(Session::new(live)),
        )
    }

    /// Opens (resumes) session `id` under the configuration it was created
    /// with. The session's pending message, lost with the process that
    /// composed it, is composed again from the touches its log kept.
    ///
    /// @throws `ERR_DSH_NO_SESSION`; `ERR_DSH_SESSION_LOCKED` when another
    /// process holds it longer than the store waits;
    /// `ERR_DSH_SESSION_DAMAGED` for a damaged or foreign session
    /// directory (`path`); `ABORT_ERR`.
    #[napi(
        catch_unwind,
        ts_args_type = "id: string, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<Session>"
    )]
    pub fn open<'env>(
        &self,
        env: &'env Env,
        id: String,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, Session>> {
        let abort = Abort::new(env, signal)?;
        let store = Arc::clone(&self.store);
        settle(
            env,
            abort,
            move |cancel| async move { store.open(id, cancel).await },
            |_, live| Ok(Session::new(live)),
        )
    }

    /// Whether session `id` exists in this store.
    #[napi(
        catch_unwind,
        ts_args_type = "id: string, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn exists<'env>(
        &self,
        env: &'env Env,
        id: String,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, bool>> {
        let store = Arc::clone(&self.store);
        settle(
            env,
            Abort::new(env, signal)?,
            move |cancel| async move {
                if cancel.is_cancelled() {
                    return Err(Failure::aborted());
                }
                store.exists(id).await
            },
            |_, v| Ok(v),
        )
    }
}

/// One persisted session, open: a loop instance over its log that composes
/// what the model should see of the workspace's instruction files.
///
/// Calls are served one at a time in the order they were made; each
/// returns a Promise and does its work off the JavaScript thread. The
/// session holds its lock (R-LOG-4) while open: {@link Session.close} it
/// when the agent session ends (garbage collection releases it too, later).
#[napi]
#[derive(Debug)]
pub struct Session {
    line: Arc<Serial<Live>>,
    /// The runtime the session was opened on, for a drop off this thread.
    runtime: Option<tokio::runtime::Handle>,
    id: String,
    cwd: String,
}

impl Session {
    fn new(live: Live) -> Self {
        Self {
            id: live.id.clone(),
            cwd: live.cwd.clone(),
            runtime: live.runtime.clone(),
            line: Serial::new(live),
        }
    }
}

impl Drop for Session {
    /// Collected without `close()`: calls still in line hold the session
    /// (their promises may be pending), so it closes once the last of them
    /// is done. The last reference is dropped on a blocking thread where
    /// the runtime still runs, here while the environment tears down.
    fn drop(&mut self) {
        let line = Arc::clone(&self.line);
        match &self.runtime {
            Some(rt) => drop(rt.spawn_blocking(move || drop(line))),
            None => drop(line),
        }
    }
}

/// A session call returning the workspace message it composed, if any.
type MessagePromise<'env> = napi::Result<PromiseRaw<'env, Option<WorkspaceMessage>>>;

#[napi]
impl Session {
    /// The session id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The session's cwd, fixed when it was created.
    #[napi(getter)]
    pub fn cwd(&self) -> String {
        self.cwd.clone()
    }

    /// Whether the session is closed (by {@link Session.close}, or after a
    /// panic); every later call rejects with `ERR_DSH_SESSION_CLOSED`.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.line.closed().is_some()
    }

    /// A turn's first step: `prompt` is persisted as the user's message and
    /// the workspace message folded in after it (the complete baseline on
    /// the first turn, later what changed). Resolves to the workspace
    /// message that entered, or `null`.
    ///
    /// @throws `ABORT_ERR` (nothing entered; the turn is recorded as
    /// ended); `ERR_DSH_SESSION_CLOSED`.
    #[napi(
        catch_unwind,
        ts_args_type = "prompt: string, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<WorkspaceMessage | null>"
    )]
    pub fn prompt<'env>(
        &self,
        env: &'env Env,
        prompt: String,
        signal: Option<Unknown<'_>>,
    ) -> MessagePromise<'env> {
        queued(
            &self.line,
            env,
            "prompt",
            signal,
            move |live, cancel| async move { live.prompt(prompt, &cancel).await },
            |_, m| Ok(message(m)),
        )
    }

    /// Reports what a tool did at `path` (absolute, or relative to the
    /// session's cwd) and waits until it is reconciled. Resolves to the
    /// pending workspace message: nested instruction files of a directory
    /// touched for the first time, updates and removals. `kind` is `read`,
    /// `write` (also an edit, create, delete or move), `list`, `search`
    /// (a grep or glob root) or `shell` (with `options.command`; `path` is
    /// its working directory).
    ///
    /// An abort stops the wait, not the touch: it is recorded, and what it
    /// finds is pending for the next step.
    ///
    /// @throws `ERR_DSH_INVALID_ARGUMENT` (`field`: `kind`, `command`,
    /// `record`); `ERR_DSH_NUL_IN_ARGUMENT`; `ABORT_ERR`;
    /// `ERR_DSH_SESSION_CLOSED`.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string, kind: 'read' | 'write' | 'list' | 'search' | 'shell', options?: TouchOptions | undefined | null, signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<WorkspaceMessage | null>"
    )]
    pub fn touch<'env>(
        &self,
        env: &'env Env,
        path: String,
        kind: String,
        options: Option<TouchOptions>,
        signal: Option<Unknown<'_>>,
    ) -> MessagePromise<'env> {
        let options = options.unwrap_or_default();
        queued(
            &self.line,
            env,
            "touch",
            signal,
            move |live, cancel| async move {
                if path.contains('\0') {
                    return Err(
                        Failure::new(Code::Nul, "path holds a NUL character").with_field("path")
                    );
                }
                let kind = ops::touch_kind(&kind, options.command)?;
                let record = ops::record(options.record.as_deref())?;
                live.touch(path.as_str().into(), kind, record, &cancel)
                    .await
            },
            |_, m| Ok(message(m)),
        )
    }

    /// Ends a tool step; the tool continuation enters the pending workspace
    /// message alone. Resolves to the message that entered (append it to
    /// the model's input after the tool results), or `null`.
    ///
    /// @throws `ABORT_ERR` (nothing entered: it stays pending);
    /// `ERR_DSH_SESSION_CLOSED`.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<WorkspaceMessage | null>"
    )]
    pub fn step_end<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> MessagePromise<'env> {
        queued(
            &self.line,
            env,
            "step_end",
            signal,
            move |live, cancel| async move { live.step_end(&cancel).await },
            |_, m| Ok(message(m)),
        )
    }

    /// Records that the agent's history compaction dropped every workspace
    /// message: the next composition is the complete baseline again.
    /// Resolves to the log sequence numbers hidden (none: nothing
    /// appended).
    ///
    /// @throws `ERR_DSH_SESSION_CLOSED`.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<number[]>"
    )]
    pub fn compact_workspace<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, Vec<i64>>> {
        queued(
            &self.line,
            env,
            "compact_workspace",
            signal,
            move |live, _| async move { live.compact_workspace() },
            |_, seqs| Ok(seqs.into_iter().map(|s| s as i64).collect()),
        )
    }

    /// The workspace message pending for the next step, with its parts, or
    /// `null`. Appends nothing.
    ///
    /// @throws `ERR_DSH_SESSION_CLOSED`.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<WorkspaceMessage | null>"
    )]
    pub fn pending<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> MessagePromise<'env> {
        queued(
            &self.line,
            env,
            "pending",
            signal,
            move |live, _| async move { Ok(live.pending()) },
            |_, m| Ok(message(m)),
        )
    }

    /// What the next step would enter, composed now; appends nothing.
    ///
    /// @throws `ABORT_ERR`; `ERR_DSH_SESSION_CLOSED`.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<WorkspaceMessage | null>"
    )]
    pub fn preview_next<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> MessagePromise<'env> {
        queued(
            &self.line,
            env,
            "preview_next",
            signal,
            move |live, cancel| async move { live.preview_next(&cancel).await },
            |_, m| Ok(message(m)),
        )
    }

    /// Closes the session once the calls made before it are done: the
    /// instance is disposed, what it remembers saved, the log closed and
    /// the session lock released. Later calls reject with
    /// `ERR_DSH_SESSION_CLOSED`; closing again does nothing. An abort while
    /// it waits in line leaves the session open.
    ///
    /// @throws `ABORT_ERR`.
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    pub fn close<'env>(
        &self,
        env: &'env Env,
        signal: Option<Unknown<'_>>,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let abort = Abort::new(env, signal)?;
        let line = Arc::clone(&self.line);
        let closing = Arc::clone(&self.line);
        settle(
            env,
            abort,
            |cancel| {
                let queued = line.submit("close", cancel, move |live, _| async move {
                    // In line: the calls before it are done, none after it runs.
                    drop(live);
                    if let Some(live) = closing.close("closed by close()") {
                        tokio::task::spawn_blocking(move || drop(live))
                            .await
                            .map_err(|e| Failure::new(Code::Panic, e.to_string()))?;
                    }
                    Ok(())
                });
                async move {
                    match queued.await {
                        // Closed already: closing again does nothing.
                        Err(f) if f.code == Code::SessionClosed => Ok(()),
                        other => other,
                    }
                }
            },
            |_, ()| Ok(()),
        )
    }
}

/// Which instruction files load at `cwd` and why, as `dsh-instructions
/// explain` shows it: the baseline and every candidate's fate.
///
/// @throws `ERR_DSH_RELATIVE_PATH`, `ERR_DSH_MISSING_CWD`,
/// `ERR_DSH_CONFIG`, `ABORT_ERR`.
#[napi(
    catch_unwind,
    ts_args_type = "cwd: string, options?: MountOptions | undefined | null, signal?: AbortSignal | undefined | null",
    ts_return_type = "Promise<Inspection>"
)]
pub fn explain<'env>(
    env: &'env Env,
    cwd: String,
    options: Option<MountOptions>,
    signal: Option<Unknown<'_>>,
) -> napi::Result<PromiseRaw<'env, Inspection>> {
    let (config, home) = options.unwrap_or_default().split();
    settle(
        env,
        Abort::new(env, signal)?,
        move |cancel| async move { ops::explain(cwd, config.args()?, home, cancel).await },
        |_, i| Ok((&i).into()),
    )
}

/// The baseline the model would receive at `cwd`, as `dsh-instructions
/// show` prints it.
///
/// @throws `ERR_DSH_RELATIVE_PATH`, `ERR_DSH_MISSING_CWD`,
/// `ERR_DSH_CONFIG`, `ABORT_ERR`.
#[napi(
    catch_unwind,
    ts_args_type = "cwd: string, options?: MountOptions | undefined | null, signal?: AbortSignal | undefined | null",
    ts_return_type = "Promise<Preview>"
)]
pub fn preview<'env>(
    env: &'env Env,
    cwd: String,
    options: Option<MountOptions>,
    signal: Option<Unknown<'_>>,
) -> napi::Result<PromiseRaw<'env, Preview>> {
    let (config, home) = options.unwrap_or_default().split();
    settle(
        env,
        Abort::new(env, signal)?,
        move |cancel| async move { ops::preview(cwd, config.args()?, home, cancel).await },
        |_, p| Ok((&p).into()),
    )
}
