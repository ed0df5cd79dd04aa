//! What a configured event does over the agent session's persisted log
//! (`$DSH_HOME/hooks/<agent>/sessions/<id>/`, R-HOOK-2), in order: the
//! session locked or created ([`crate::session`]); a peer part's recorded
//! piece ([`crate::piece`]), or the quiet memo's proof that nothing is new
//! ([`crate::quiet`]), answering before the log is read; else the session
//! mounted and the event's touches made ([`crate::touch`]), the message
//! that enters ([`crate::deliver`]), and the piece this part answers.
//!
//! Each invocation is its own process and its own loop instance, opened
//! under the session lock (R-LOG-4), so concurrent invocations for parallel
//! tool calls serialize and each answer holds only what that invocation
//! committed. What the adapter gives the model is appended to the log
//! before it is printed.

use std::sync::Arc;

use camino::Utf8Path;
use dsh_home_paths::HomeEnv;
use dsh_instructions_discovery::{CancellationToken, cap_std::ambient_authority};
use dsh_instructions_runtime::{CapStdFactory, Host as _, MountBuilder};

use crate::agent::Agent;
use crate::config::HookConfig;
use crate::error::HookError;
use crate::event::{Action, HookEvent};
use crate::outcome::{Given, Handled, with_config_warnings};
use crate::piece::{self, Piece, Recorded};
use crate::session::{Opening, store_id};
use crate::touch::Mounting;

/// One hook invocation: what the `dsh-instructions hook --agent A` process
/// was given.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    /// The agent whose event this is.
    pub agent: Agent,
    /// `--part K`: piece `K` (1-based) of the event's one composition
    /// (R-HOOK-4, decision 0018); `None` answers the whole message. Gemini
    /// CLI has no parts: part 1 answers as the whole, the others `{}`.
    pub part: Option<u32>,
    /// `--event E`: the event's name when its stdin names none (GitHub
    /// Copilot CLI's camelCase events, decision 0065); a stdin that names
    /// its event keeps that name.
    pub event: Option<&'a str>,
    /// The event's bytes, as the agent wrote them on stdin.
    pub stdin: &'a [u8],
    /// The home variables.
    pub env: &'a HomeEnv,
    /// The process exits with status 0 right after the answer: the event's
    /// state (the mounted session, the version cache, the directory stamps
    /// of every known directory) is left to the operating system instead
    /// of being freed piece by piece, which at 1,000 known directories is a
    /// measurable part of an event (R-HOOK-6, decision 0062). Everything
    /// the event writes is written first.
    pub exit: bool,
}

impl<'a> Invocation<'a> {
    /// An invocation for the whole message, returning after the answer.
    pub fn new(agent: Agent, stdin: &'a [u8], env: &'a HomeEnv) -> Self {
        Self {
            agent,
            part: None,
            event: None,
            stdin,
            env,
            exit: false,
        }
    }
}

/// How an event's state ends once its answer is composed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Dropped: everything is freed (a library call).
    Drop,
    /// Closed (log, lock, side files) and left to the operating system: the
    /// process exits right after ([`Invocation::exit`]).
    Exit,
}

/// Handles `event` of the agent whose directory is `dir`, on a
/// current-thread runtime when the event needs its session; the log line
/// gains the session's id and the configuration's warnings.
///
/// # Errors
/// What the session, the records or the async runtime refused.
pub(crate) fn handle(
    call: &Invocation<'_>,
    dir: &Utf8Path,
    config: &HookConfig,
    event: HookEvent,
) -> Result<Handled, HookError> {
    let ending = if call.exit {
        Ending::Exit
    } else {
        Ending::Drop
    };
    let mut line = format!("session {} ", store_id(&event.session_id));
    let mut handled = match &event.action {
        // Cheap for every part: no lock, no session (R-HOOK-6).
        Action::NoContext => Handled::nothing("no context for this event".to_owned()),
        Action::PreCompress => Handled::nothing("advisory".to_owned()),
        _ => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|source| HookError::AsyncRuntime { source })?;
            let handled = runtime.block_on(session(call, ending, dir, config, &event));
            if ending == Ending::Exit {
                // Its tasks hold the rest of the event's state.
                std::mem::forget(runtime);
            }
            handled?
        }
    };
    line.push_str(&handled.why);
    for w in &config.warnings {
        line.push_str("; warning: ");
        line.push_str(w);
    }
    handled.why = line;
    Ok(handled)
}

/// The event over its session: lock, (a peer's recorded parts, the quiet
/// memo), touches, delivery, parts.
async fn session(
    call: &Invocation<'_>,
    ending: Ending,
    dir: &Utf8Path,
    config: &HookConfig,
    event: &HookEvent,
) -> Result<Handled, HookError> {
    let input = &config.input;
    // Before anything is read: what the quiet memo's stamps are held
    // against (decision 0077).
    let t0 = std::time::SystemTime::now();
    let locked = match crate::session::open(dir, event, input)? {
        Opening::Busy(why) => return Ok(Handled::nothing(why)),
        Opening::Open(locked) => locked,
    };
    let session_dir = &locked.session_dir.clone();
    // Copilot CLI registers one entry per event, which gives the message in
    // pieces only where Copilot cuts the context (`postToolUse`); the
    // others' `--part K` entries each give their piece. Gemini CLI has no
    // pieces.
    let piece = match (call.agent, call.part) {
        (Agent::Gemini, _) => None,
        (Agent::Copilot, _) => Some(Piece::single(
            call.agent,
            !matches!(event.action, Action::Tool { .. } | Action::Shell { .. }),
            call.stdin,
            session_dir,
        )),
        (agent, Some(k)) => Some(Piece::new(agent, k, call.stdin, session_dir)),
        (_, None) => None,
    };
    // A peer's record answers before the log is read (R-HOOK-6).
    let records = match &piece {
        Some(p) => match piece::recorded(p)? {
            Recorded::Answered(handled) => return Ok(handled),
            Recorded::Compose(recs, warn) => Some((recs, warn)),
        },
        None => None,
    };
    // An event the quiet memo proves to answer nothing, from stamps alone
    // (decisions 0077, 0085; R-HOOK-6).
    let key = crate::quiet::key(call.agent, event, input, call.env, session_dir);
    let memo = key
        .as_ref()
        .map(|_| crate::quiet::MemoRead::of(session_dir));
    if let Some(why) = key.as_ref().zip(memo.as_ref()).and_then(|(k, m)| {
        let touches = match &event.action {
            Action::Tool { touched, .. } => Some(touched.as_slice()),
            _ => None,
        };
        crate::quiet::quiet(m, session_dir, k, touches)
    }) {
        return Ok(match (&piece, records) {
            (Some(piece), Some(records)) => piece::record(piece, records, None, why),
            _ => Handled::nothing(why),
        });
    }
    let opened = locked.open(input)?;
    let start = key
        .as_ref()
        .and_then(|_| crate::quiet::Start::after_open(session_dir, t0));
    // What the last event's process proved about the known directories
    // (decision 0037), written back when this one is done.
    let stamps = crate::dirstamps::SaveOnDrop {
        session_dir,
        memory: crate::dirstamps::load(session_dir),
    };
    // The hook's one grant of ambient authority: every mount of this
    // invocation opens its roots through this factory.
    let fs = CapStdFactory::new(ambient_authority())
        .inline()
        .remembering(stamps.memory.clone());
    let recorder = Arc::new(crate::quiet::Recorder::new(Arc::new(fs.clone())));
    let base = MountBuilder::default().env(call.env.clone());
    let mounting = Mounting {
        base: if start.is_some() {
            base.fs(recorder.clone())
        } else {
            base.fs(fs.clone())
        },
        session_dir,
    };
    if call.agent == Agent::Gemini {
        return crate::gemini::handle(&mounting, event, opened.log, &opened.settings)
            .await
            .map(Handled::untimed);
    }
    let cancel = CancellationToken::new();
    let mounted = crate::touch::mount_and_touch(
        &mounting,
        opened.log,
        &opened.settings,
        call.agent,
        event,
        opened.fresh,
        &cancel,
    )
    .await?;
    if let Some(why) = crate::touch::marks_only(call.agent, &event.action) {
        // The session is marked (every earlier message hidden); the next
        // event that reaches the model gives the complete baseline
        // (decision 0066). Peer parts have nothing to give either.
        drop(mounted);
        return Ok(Handled::nothing(why.to_owned()));
    }
    let delivered =
        crate::deliver::deliver(&mounted.session, event, mounted.deferred, &cancel).await?;
    let why = with_config_warnings(delivered.why, &mounted.session);
    let quiet_why = start.as_ref().map(|_| why.clone());
    let message = delivered.message.as_ref();
    let handled = match (&piece, records) {
        (Some(piece), Some(records)) => piece::record(piece, records, message, why),
        _ => Handled::untimed((
            message.map_or(Given::Nothing, |m| {
                Given::Context(m.framed_text(call.agent.framing()))
            }),
            why,
        )),
    };
    if let (Some(key), Some(memo), Some(start), Some(why), None) =
        (key, memo, &start, &quiet_why, message)
    {
        // What a claim is written with (decision 0085), when one may be.
        let known = if recorder.reads().may_claim(&key) {
            Some(crate::quiet::Known {
                cwd: mounted.session.host().cwd(),
                dirs: mounted.session.instance().known_directories().await,
            })
        } else {
            None
        };
        // Still under the lock: the next event may answer from it.
        crate::quiet::remember(
            session_dir,
            memo,
            (key, why),
            event,
            known,
            recorder.reads(),
            start,
        );
    }
    match ending {
        Ending::Drop => drop(mounted),
        Ending::Exit => {
            mounted.session.close_for_exit();
            stamps.save_and_leave();
            std::mem::forget(recorder);
            std::mem::forget(fs);
        }
    }
    Ok(handled)
}
