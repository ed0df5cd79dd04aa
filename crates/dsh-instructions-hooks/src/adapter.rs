//! The event handler: one agent hook invocation from stdin to stdout
//! (SPEC §12, R-HOOK-1..4), as a pipeline of typed stages, one module
//! each:
//!
//! 1. [`parse`]: the bytes to the lean event ([`parse::Parsed`]);
//! 2. [`profile`]: the agent's configuration and the event read with it
//!    ([`profile::Configured`]);
//! 3. [`session`]: the agent session's log opened under its lock, or
//!    created ([`session::Opening`]);
//! 4. [`touches`]: the session mounted and the event's touches made
//!    ([`touches::Touched`]);
//! 5. [`deliver`]: the workspace message that enters
//!    ([`deliver::Delivered`]);
//! 6. [`parts`]: the piece of it this `--part K` answers
//!    ([`crate::outcome::Handled`]; a peer's recorded split is looked up
//!    before stage 4, so an event is composed once);
//! 7. [`answer`]: the agent's JSON.
//!
//! Each invocation is its own process and its own loop instance over the
//! agent session's persisted log (`$DSH_HOME/hooks/<agent>/sessions/<id>/`,
//! R-HOOK-2), opened under the session lock (R-LOG-4), so concurrent
//! invocations for parallel tool calls serialize and each answer holds only
//! what that invocation committed. What the adapter gives the model is
//! appended to the log before it is printed. Every problem answers `{}`
//! and is one line of the adapter's own log ([`hooklog`]).

#[cfg(test)]
mod agents_tests;
mod answer;
mod deliver;
mod hooklog;
mod parse;
mod parts;
mod profile;
mod session;
mod touches;

use std::time::Instant;

use camino::Utf8PathBuf;
use dsh_home_paths::{DshHome, HomeEnv, resolve_dsh_home};
use dsh_instructions_discovery::{CancellationToken, cap_std::ambient_authority};
use std::sync::Arc;

use dsh_instructions_runtime::{CapStdFactory, MountBuilder};

pub use parse::MAX_EVENT_BYTES;
pub use session::{LOCK_WAIT, LOCK_WAIT_ENV, store_id};

use crate::agent::Agent;
use crate::event::Action;
use crate::outcome::{AdapterError, Given, Handled, with_config_warnings};
use crate::touch::Mounting;
use parse::Parsed;
use profile::Configured;
use session::Opening;

/// Handles one event and returns what to print on stdout (R-HOOK-1): the
/// agent's JSON with the context, or `{}`. It never fails: every problem is
/// written to the adapter's own log (`$DSH_HOME/hooks/<agent>/hook.log`),
/// never to the model. The whole message in one answer; see
/// [`respond_part`] for the parts.
pub fn respond(agent: Agent, input: &[u8], env: &HomeEnv) -> String {
    respond_part(agent, None, input, env)
}

/// [`respond`] for the `--part K` entry of an event (R-HOOK-4, decision
/// 0018): piece `part` (1-based) of the event's one composition, or `{}`
/// when there is none. `None` = the whole message. Gemini CLI has no parts:
/// part 1 answers as the whole, the others `{}`.
///
/// In Claude Code a piece of a split message returns only after its
/// predecessor's process has printed its own, plus a gap (decision 0043);
/// this form counts the piece as finished when it returns, so a process
/// that prints the answer should use [`respond_part_to`], which counts it
/// only once it is printed.
pub fn respond_part(agent: Agent, part: Option<u32>, input: &[u8], env: &HomeEnv) -> String {
    let answered = answer_event(agent, part, None, input, env);
    let waited = answered.turn.as_ref().map(|t| t.wait(answered.started));
    if let Some(t) = &answered.turn {
        t.finished();
    }
    answered.log(waited);
    answered.stdout
}

/// [`respond_part`], printing the answer (and a newline) to `out` and
/// flushing it before the piece counts as finished: what the
/// `dsh-instructions hook` process does, so that in Claude Code its
/// successor part finishes after it (R-HOOK-4, decision 0043).
///
/// ```
/// use dsh_home_paths::HomeEnv;
/// use dsh_instructions_hooks::{Agent, respond_part_to};
///
/// let tmp = tempfile::tempdir()?;
/// let env = HomeEnv { home: Some(tmp.path().to_str().unwrap().into()), ..HomeEnv::default() };
/// let mut out = Vec::new();
/// respond_part_to(Agent::Claude, Some(2), b"not an event", &env, &mut out)?;
/// assert_eq!(out, b"{}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn respond_part_to(
    agent: Agent,
    part: Option<u32>,
    input: &[u8],
    env: &HomeEnv,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    respond_event_to(agent, part, None, input, env, out)
}

/// [`respond_part_to`] for an event the command line names (`--event E`):
/// GitHub Copilot CLI's camelCase events carry no event name on stdin, so
/// each installed command names its own (decision 0065). A stdin that
/// names its event keeps that name.
///
/// ```
/// use dsh_home_paths::HomeEnv;
/// use dsh_instructions_hooks::{Agent, respond_event_to};
///
/// let tmp = tempfile::tempdir()?;
/// let env = HomeEnv { home: Some(tmp.path().to_str().unwrap().into()), ..HomeEnv::default() };
/// let mut out = Vec::new();
/// // Copilot's `agentStop` takes no context.
/// let stdin = br#"{"sessionId": "s1", "cwd": "/w", "stopReason": "end_turn"}"#;
/// respond_event_to(Agent::Copilot, None, Some("agentStop"), stdin, &env, &mut out)?;
/// assert_eq!(out, b"{}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Writing the answer to `out` failed.
pub fn respond_event_to(
    agent: Agent,
    part: Option<u32>,
    event: Option<&str>,
    input: &[u8],
    env: &HomeEnv,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let answered = answer_event(agent, part, event, input, env);
    let waited = answered.turn.as_ref().map(|t| t.wait(answered.started));
    let printed = out
        .write_all(answered.stdout.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Some(t) = &answered.turn {
        t.finished();
    }
    answered.log(waited);
    printed
}

/// [`respond_event_to`] for a process that exits right after the answer:
/// what the `dsh-instructions hook` process runs. Everything the event
/// writes is written as in [`respond_part_to`] — the log, the side files,
/// the answer (flushed), the adapter's log line — and the session lock is
/// released, but the event's in-memory state (the mounted session, the
/// version cache, the directory stamps of every known directory) is left
/// to the operating system instead of being freed piece by piece, which at
/// 1,000 known directories is a measurable part of an event (R-HOOK-6,
/// issue 35). Then the process exits with status 0 (R-HOOK-1).
pub fn respond_part_to_and_exit(
    agent: Agent,
    part: Option<u32>,
    event: Option<&str>,
    input: &[u8],
    env: &HomeEnv,
    out: &mut dyn std::io::Write,
) -> ! {
    let answered = answer_event_leaving(agent, part, event, input, env, Ending::Exit);
    let waited = answered.turn.as_ref().map(|t| t.wait(answered.started));
    let _ = out
        .write_all(answered.stdout.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Some(t) = &answered.turn {
        t.finished();
    }
    answered.log(waited);
    std::process::exit(0)
}

/// How an event's state ends once its answer is composed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Dropped: everything is freed (a library call).
    Drop,
    /// Closed (log, lock, side files) and left to the operating system: the
    /// process exits right after ([`respond_part_to_and_exit`]).
    Exit,
}

/// One event's answer before it is printed.
struct Answered {
    started: Instant,
    stdout: String,
    /// Where the piece stands in its event's finishing order (Claude Code).
    turn: Option<crate::order::Turn>,
    /// The diagnostic log's directory and this invocation's line.
    log: Option<(Utf8PathBuf, String)>,
}

impl Answered {
    fn log(&self, waited: Option<crate::order::Waited>) {
        if let Some((dir, line)) = &self.log {
            let waited = waited.map_or_else(String::new, |w| format!("; finished {w}"));
            hooklog::log_line(
                dir,
                &format!("{line}{waited} {}ms", self.started.elapsed().as_millis()),
            );
            // One line per side file this event found damaged and rebuilt.
            let now = dsh_session_log::rfc3339_utc(std::time::SystemTime::now());
            for heal in crate::heal::report_lines(dir) {
                hooklog::log_line(dir, &format!("{now} {heal}"));
            }
        }
    }
}

/// The pipeline, stage 1 and 7 around the rest ([`run_blocking`]).
fn answer_event(
    agent: Agent,
    part: Option<u32>,
    event: Option<&str>,
    input: &[u8],
    env: &HomeEnv,
) -> Answered {
    answer_event_leaving(agent, part, event, input, env, Ending::Drop)
}

/// [`answer_event`], its state ending as `ending` says.
fn answer_event_leaving(
    agent: Agent,
    part: Option<u32>,
    event: Option<&str>,
    input: &[u8],
    env: &HomeEnv,
    ending: Ending,
) -> Answered {
    let started = Instant::now();
    let home = resolve_dsh_home(None, env).ok();
    // Parsed once, keeping only what the adapter reads. An oversized event
    // is not parsed at all.
    let mut parsed = parse::parse(input);
    if let (Some(name), Parsed::Event(lean)) = (event, &mut parsed) {
        lean.name_if_unnamed(name);
    }
    let event_name = parsed.event_name();
    let result = match (&home, parsed) {
        (None, _) => Err(AdapterError::Config(
            "the DSH home cannot be resolved".into(),
        )),
        (Some(_), Parsed::Oversized) => Ok(Handled::nothing(format!(
            "ignored: event larger than {MAX_EVENT_BYTES} bytes"
        ))),
        (Some(_), Parsed::NotEvent(e)) => Err(e.into()),
        (Some(home), Parsed::Event(lean)) => {
            profile::configure(agent, home, *lean).and_then(|configured| {
                let ctx = Call {
                    agent,
                    part,
                    input,
                    env,
                    ending,
                };
                run_blocking(&ctx, configured)
            })
        }
    };
    let (stdout, line, turn) = match result {
        Ok(h) => (answer::answer(agent, &event_name, h.given), h.why, h.turn),
        Err(e) => ("{}".to_owned(), format!("error: {e}"), None),
    };
    let log = home.as_ref().map(|home: &DshHome| {
        let part = part.map_or_else(String::new, |k| format!(" part {k}"));
        (
            profile::agent_dir(home, agent),
            format!(
                "{} {event_name}{part} {line}",
                dsh_session_log::rfc3339_utc(std::time::SystemTime::now()),
            ),
        )
    });
    Answered {
        started,
        stdout,
        turn,
        log,
    }
}

/// One invocation's inputs.
struct Call<'a> {
    agent: Agent,
    part: Option<u32>,
    input: &'a [u8],
    env: &'a HomeEnv,
    ending: Ending,
}

/// Stages 3 to 6 for a configured event, on a current-thread runtime when
/// the event needs its session; the log line gains the session's id and
/// the configuration's warnings.
fn run_blocking(call: &Call<'_>, configured: Configured) -> Result<Handled, AdapterError> {
    let Configured {
        dir,
        config,
        event,
        leading,
    } = configured;
    let mut line = format!("session {} ", store_id(&event.session_id));
    let mut handled = match &event.action {
        // Cheap for every part: no lock, no session (R-HOOK-6).
        Action::NoContext => Handled::nothing("no context for this event".to_owned()),
        Action::PreCompress => Handled::nothing("advisory".to_owned()),
        _ => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    AdapterError::Config(format!("cannot start the async runtime: {e}"))
                })?;
            let handled = runtime.block_on(handle(call, &event, &config.input, &dir, leading));
            if call.ending == Ending::Exit {
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

/// Stages 3 to 6: session, (a peer's recorded parts), touches, deliver,
/// parts.
async fn handle(
    call: &Call<'_>,
    event: &crate::event::HookEvent,
    input: &dsh_instructions_state::ConfigInput,
    dir: &camino::Utf8Path,
    leading: Option<Vec<serde_json::Value>>,
) -> Result<Handled, AdapterError> {
    // Before anything is read: what the quiet memo's stamps are held
    // against (decision 0077).
    let t0 = std::time::SystemTime::now();
    let locked = match session::open(dir, event, input)? {
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
        (Agent::Copilot, _) => Some(parts::Piece::single(
            call.agent,
            !matches!(event.action, Action::Tool { .. } | Action::Shell { .. }),
            call.input,
            session_dir,
        )),
        (agent, Some(k)) => Some(parts::Piece::new(agent, k, call.input, session_dir)),
        (_, None) => None,
    };
    // A peer's record answers before the log is read (R-HOOK-6).
    let records = match &piece {
        Some(p) => match parts::recorded(p)? {
            parts::Recorded::Answered(handled) => return Ok(handled),
            parts::Recorded::Compose(recs, warn) => Some((recs, warn)),
        },
        None => None,
    };
    // An event the quiet memo proves to answer nothing, from stamps alone
    // (decision 0077, R-HOOK-6).
    let key = crate::quiet::key(call.agent, event, input, call.env, session_dir);
    let memo = key
        .as_ref()
        .map(|_| crate::quiet::MemoRead::of(session_dir));
    if let Some(why) = key
        .as_deref()
        .zip(memo.as_ref())
        .and_then(|(k, m)| crate::quiet::quiet(m, session_dir, k))
    {
        return Ok(match (&piece, records) {
            (Some(piece), Some(records)) => parts::record(piece, records, None, why),
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
        return crate::gemini::handle(&mounting, event, opened.log, &opened.settings, leading)
            .await
            .map(Handled::untimed);
    }
    let cancel = CancellationToken::new();
    let touched = touches::touch(
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
        drop(touched);
        return Ok(Handled::nothing(why.to_owned()));
    }
    let delivered = deliver::deliver(&touched.session, event, touched.deferred, &cancel).await?;
    let why = with_config_warnings(delivered.why, &touched.session);
    let quiet_why = start.as_ref().map(|_| why.clone());
    let message = delivered.message.as_ref();
    let handled = match (&piece, records) {
        (Some(piece), Some(records)) => parts::record(piece, records, message, why),
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
        // Still under the lock: the next event may answer from it.
        crate::quiet::remember(
            session_dir,
            memo,
            (key, why),
            event,
            recorder.reads(),
            start,
        );
    }
    match call.ending {
        Ending::Drop => drop(touched),
        Ending::Exit => {
            touched.session.close_for_exit();
            stamps.save_and_leave();
            std::mem::forget(recorder);
            std::mem::forget(fs);
        }
    }
    Ok(handled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    struct Machine {
        _tmp: tempfile::TempDir,
        env: HomeEnv,
        project: Utf8PathBuf,
        agent_dir: Utf8PathBuf,
    }

    fn machine(agent: Agent) -> Machine {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
        let project = root.join("repo");
        std::fs::create_dir_all(project.join(".git")).expect("mkdir");
        std::fs::write(project.join("AGENTS.md"), "Be kind.\n").expect("write");
        let dsh_home = root.join("home/.dsh");
        let env = HomeEnv {
            home: Some(root.join("home").into_std_path_buf().into_os_string()),
            dsh_home: Some(dsh_home.clone().into_std_path_buf().into_os_string()),
            cwd: project.clone().into_std_path_buf(),
            account_home: None,
        };
        let agent_dir = dsh_home.join("hooks").join(agent.as_str());
        Machine {
            _tmp: tmp,
            env,
            project,
            agent_dir,
        }
    }

    /// Issue 31 item 4: what validation of the session's configuration
    /// ignored (R-CFG-4) reaches the hook's log, beside the hook's own
    /// warnings about `config.json`, for every agent.
    #[rstest]
    #[case(Agent::Claude, "UserPromptSubmit")]
    #[case(Agent::Codex, "UserPromptSubmit")]
    #[case(Agent::Gemini, "AfterTool")]
    fn config_json_warnings_reach_the_hook_log(#[case] agent: Agent, #[case] name: &str) {
        let m = machine(agent);
        std::fs::create_dir_all(&m.agent_dir).expect("mkdir");
        std::fs::write(
            m.agent_dir.join("config.json"),
            r#"{"instruction_file_candidates": ["a/b", "AGENTS.md"],
                "touch_tools": {"NoSuchTool": ["path"]}}"#,
        )
        .expect("config");
        let mut event = serde_json::json!({
            "session_id": "s1", "hook_event_name": name, "cwd": m.project, "prompt": "hi",
        });
        if agent == Agent::Gemini {
            // `touch_tools` replaced the path tools; the shell tool stays.
            event["tool_name"] = "run_shell_command".into();
            event["tool_input"] = serde_json::json!({"command": "cat AGENTS.md"});
        }
        let answer = respond(agent, event.to_string().as_bytes(), &m.env);
        let log = std::fs::read_to_string(m.agent_dir.join("hook.log")).expect("hook.log");
        assert!(
            log.contains(r#"config warning: instruction_file_candidates: ignored entry "a/b""#),
            "{log}"
        );
        assert!(
            log.contains("warning: touch_tools: NoSuchTool is not in the installed tool matcher"),
            "{log}"
        );
        if agent != Agent::Gemini {
            assert!(answer.contains("Be kind."), "{answer}");
        }
    }

    /// The shipped code of `dir` (every `.rs` below it, each up to its
    /// `#[cfg(test)] mod tests`), by file.
    fn shipped(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).expect("src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                shipped(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source");
                let code = text
                    .split("#[cfg(test)]\nmod tests")
                    .next()
                    .unwrap_or_default();
                out.push((path.display().to_string(), code.to_owned()));
            }
        }
    }

    /// Issue 31 item 4: a hook event resolves its configuration once, in
    /// the mount (`MountBuilder::open`, through `Session::mount`), whose warnings
    /// the log shows; no stage resolves a `ConfigInput` of its own.
    #[test]
    fn the_hook_resolves_its_configuration_only_in_the_mount() {
        let mut files = Vec::new();
        shipped(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        assert!(files.len() > 20, "{}", files.len());
        let resolving: Vec<&str> = files
            .iter()
            .filter(|(_, code)| {
                code.lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .any(|l| l.contains(".resolve()"))
            })
            .map(|(f, _)| f.as_str())
            .collect();
        assert!(resolving.is_empty(), "{resolving:?}");
        let mounting: Vec<&str> = files
            .iter()
            .filter(|(_, code)| code.contains("Session::mount("))
            .map(|(f, _)| f.rsplit('/').next().unwrap_or_default())
            .collect();
        let mut mounting = mounting;
        mounting.sort_unstable();
        assert_eq!(mounting, ["gemini.rs", "touches.rs"]);
    }
}
