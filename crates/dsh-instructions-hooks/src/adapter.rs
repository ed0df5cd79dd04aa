//! The event handler: one agent hook invocation from stdin to stdout
//! (SPEC §12, R-HOOK-1..4).
//!
//! Each invocation is its own process and its own loop instance over the
//! agent session's persisted log (`$DSH_HOME/hooks/<agent>/<session>/`,
//! R-HOOK-2), opened under the session lock (R-LOG-4), so concurrent
//! invocations for parallel tool calls serialize and each answer holds only
//! what that invocation committed. What the adapter gives the model is
//! appended to the log before it is printed.

use std::io::Write as _;
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeEnv, resolve_dsh_home};
use dsh_instructions_discovery::{CancellationToken, ambient_authority};
use dsh_instructions_runtime::CapStdFactory;
use dsh_instructions_session::{Record, Session};
use dsh_instructions_session::{SessionError, SessionSettings, SessionStore};
use dsh_instructions_state::{ConfigInput, Digest};
use dsh_session_log::{LockWait, LogError};
use serde_json::{Map, Value, json};

use crate::agent::{Agent, PARTS};
use crate::deferred::apply_deferred;
use crate::event::{Action, event_from_value};
use crate::outcome::{AdapterError, Given, summary};
use crate::parts::PART_BYTES;
use crate::preset::{CONFIG_FILE_NAME, HookConfig, load_config};
use crate::record::Records;
use crate::touch::apply;
use dsh_instructions_render::Framing;

/// The largest event the adapter reads; a larger one is answered `{}` and
/// logged (docs/hooks.md). Gemini CLI's `BeforeModel` stdin carries the
/// whole text history, so the bound sits far above what its 1M-token window
/// can hold (about 4 MB of text): no session loses its instructions to it.
/// Only what the adapter needs is parsed (`crate::lean`).
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// How long an invocation waits for its session's lock: well inside the
/// agents' hook timeout (10 s as installed), so a stuck peer never makes
/// the agent kill us.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Overrides [`LOCK_WAIT`] in milliseconds (at most 60 s), for the process
/// tests that count deliveries under a slow debug build and for people
/// whose agents allow their hooks more time (docs/hooks.md).
pub const LOCK_WAIT_ENV: &str = "DSH_HOOK_LOCK_WAIT_MS";

fn lock_wait() -> Duration {
    std::env::var(LOCK_WAIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(LOCK_WAIT, |ms| Duration::from_millis(ms.min(60_000)))
}

/// The diagnostic log is rotated (one old copy kept) past this size.
const LOG_ROTATE_BYTES: u64 = 1 << 20;

/// The source-JSON field that records which hook event delivered a message
/// (ignored by the typed source, R-STATE-1).
const DELIVERED_BY: &str = "hookEvent";

/// The diagnostic log and its one rotated copy, next to the sessions.
const LOG_FILE_NAME: &str = "hook.log";
const OLD_LOG_FILE_NAME: &str = "hook.log.1";

/// Prefix of a digest store id.
const DIGEST_PREFIX: &str = "id-";

/// The store id of an agent session: the id itself when it is a plain,
/// short path component; else a digest, so no id can name a path outside
/// the store (R-HOOK-2). The names the adapter keeps in the store for
/// itself (its configuration and diagnostic log) and the digest prefix are
/// not plain: a session named `config.json` would otherwise break every
/// session of the agent, and one named `id-…` could meet a digest.
///
/// ```
/// use dsh_instructions_hooks::store_id;
/// assert_eq!(store_id("83c8193c-ac79"), "83c8193c-ac79");
/// assert!(store_id("../../etc").starts_with("id-"));
/// assert!(store_id("config.json").starts_with("id-"));
/// ```
pub fn store_id(session_id: &str) -> String {
    let plain = session_id.len() <= 128
        && !session_id.starts_with('.')
        && !session_id.starts_with(DIGEST_PREFIX)
        && ![CONFIG_FILE_NAME, LOG_FILE_NAME, OLD_LOG_FILE_NAME].contains(&session_id)
        && session_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        session_id.to_owned()
    } else {
        format!("{DIGEST_PREFIX}{}", Digest::of(session_id).to_hex())
    }
}

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
    let answered = answer_event(agent, part, input, env);
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
    let answered = answer_event(agent, part, input, env);
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
            log_line(
                dir,
                &format!("{line}{waited} {}ms", self.started.elapsed().as_millis()),
            );
            // One line per side file this event found damaged and rebuilt.
            let now = dsh_session_log::rfc3339_utc(std::time::SystemTime::now());
            for heal in crate::heal::report_lines(dir) {
                log_line(dir, &format!("{now} {heal}"));
            }
        }
    }
}

fn answer_event(agent: Agent, part: Option<u32>, input: &[u8], env: &HomeEnv) -> Answered {
    let started = Instant::now();
    let home = resolve_dsh_home(None, env).ok();
    // Parsed once, keeping only what the adapter reads. An oversized event
    // is not parsed at all.
    let parsed = (input.len() <= MAX_EVENT_BYTES).then(|| {
        let object = input
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b == b'{');
        if !object {
            return Err(crate::event::EventError::NotJson("not an object".into()));
        }
        crate::lean::parse(input).map_err(|e| crate::event::EventError::NotJson(e.to_string()))
    });
    let event_name = parsed
        .as_ref()
        .and_then(|p| p.as_ref().ok())
        .map_or_else(|| "-".to_owned(), |l| event_name(&l.to_value()));
    let result = match (&home, parsed) {
        (None, _) => Err(AdapterError::Config(
            "the DSH home cannot be resolved".into(),
        )),
        (Some(_), None) => Ok(Handled::nothing(format!(
            "ignored: event larger than {MAX_EVENT_BYTES} bytes"
        ))),
        (Some(_), Some(Err(e))) => Err(e.into()),
        (Some(home), Some(Ok(lean))) => {
            let ctx = Call {
                agent,
                part,
                input,
                env,
                home,
            };
            run_blocking(&ctx, lean)
        }
    };
    let (stdout, line, turn) = match result {
        Ok(h) => (answer(&event_name, h.given), h.why, h.turn),
        Err(e) => ("{}".to_owned(), format!("error: {e}"), None),
    };
    let log = home.as_ref().map(|home| {
        let part = part.map_or_else(String::new, |k| format!(" part {k}"));
        (
            agent_dir(home, agent),
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

/// How the context given to `agent` is wrapped: Claude Code wraps hook
/// context in its own `<system-reminder>` and escapes ours, so it gets the
/// blocks without our frame (decision 0019).
fn framing(agent: Agent) -> Framing {
    match agent {
        Agent::Claude => Framing::Bare,
        Agent::Codex | Agent::Gemini => Framing::Reminder,
    }
}

/// The agent's answer (all three read `hookSpecificOutput.additionalContext`,
/// harness README; Gemini CLI's `BeforeModel` reads `llm_request`).
/// The context text is already framed for the agent ([`framing`]).
fn answer(event_name: &str, given: Given) -> String {
    match given {
        Given::Nothing => "{}".to_owned(),
        Given::Context(text) => json!({
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "additionalContext": text,
            }
        })
        .to_string(),
        Given::Request(messages) => json!({
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "llm_request": { "messages": messages },
            }
        })
        .to_string(),
    }
}

/// `hook_event_name`, for the answer and the log, before full parsing
/// (`-` unless it is a plain short name, so the log stays one clean line).
fn event_name(v: &Value) -> String {
    v.get("hook_event_name")
        .and_then(Value::as_str)
        .filter(|n| n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("-")
        .to_owned()
}

fn agent_dir(home: &DshHome, agent: Agent) -> Utf8PathBuf {
    home.path.join("hooks").join(agent.to_string())
}

/// The agent's session stores: `sessions/` below its directory, apart from
/// the adapter's `config.json` and `hook.log` (R-HOOK-10, the same place as
/// [`crate::sessions_dir`]).
fn sessions_dir(agent_dir: &Utf8Path) -> Utf8PathBuf {
    agent_dir.join(SESSIONS_DIR_NAME)
}

/// The folder of the agent's session stores.
const SESSIONS_DIR_NAME: &str = "sessions";

/// A session an earlier version kept directly in the agent's directory
/// (`hooks/<agent>/<id>/`) moves into `sessions/` on its next event, so an
/// upgrade in the middle of a session neither loses its state nor gives its
/// files a second time. A rename is atomic: of two invocations racing, one
/// moves it and the other finds it moved. The old place is only a session
/// when it holds a log (never the adapter's own files).
fn adopt_old_store(agent_dir: &Utf8Path, sessions: &Utf8Path, id: &str) {
    if id == SESSIONS_DIR_NAME {
        return;
    }
    let old = agent_dir.join(id);
    let new = sessions.join(id);
    if old.join(dsh_session_log::LOG_FILE_NAME).is_file() && !new.exists() {
        let _ = std::fs::create_dir_all(sessions);
        let _ = std::fs::rename(&old, &new);
    }
}

/// One invocation's inputs.
struct Call<'a> {
    agent: Agent,
    part: Option<u32>,
    input: &'a [u8],
    env: &'a HomeEnv,
    home: &'a DshHome,
}

/// What handling an event ended with: the answer, the log's reason and,
/// for a piece of a split message in Claude Code, its finishing turn.
struct Handled {
    given: Given,
    why: String,
    turn: Option<crate::order::Turn>,
}

impl Handled {
    fn nothing(why: String) -> Self {
        Self {
            given: Given::Nothing,
            why,
            turn: None,
        }
    }

    fn untimed((given, why): (Given, String)) -> Self {
        Self {
            given,
            why,
            turn: None,
        }
    }
}

fn run_blocking(call: &Call<'_>, lean: crate::lean::LeanEvent) -> Result<Handled, AdapterError> {
    let dir = agent_dir(call.home, call.agent);
    let config = load_config(call.agent, &dir)?;
    let event = event_from_value(call.agent, &lean.to_value(), &config.tools)?;
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
            let req = lean.llm_request.map(|r| r.messages.0);
            runtime.block_on(handle(call, &event, &config, &dir, req))?
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

async fn handle(
    call: &Call<'_>,
    event: &crate::event::HookEvent,
    config: &HookConfig,
    dir: &Utf8Path,
    leading: Option<Vec<Value>>,
) -> Result<Handled, AdapterError> {
    let sessions = sessions_dir(dir);
    let store = SessionStore::new(sessions.clone()).with_lock_wait(LockWait::up_to(lock_wait()));
    let id = store_id(&event.session_id);
    adopt_old_store(dir, &sessions, &id);
    let session_dir = dsh_session_log::session_dir(store.dir(), &id).map_err(SessionError::from)?;
    let (log, settings, fresh) = match open_or_create(&store, &id, &event.cwd, &config.input) {
        Err(busy @ SessionError::Log(LogError::LockTimeout { .. })) => {
            // A peer holds the lock past the bound: keep this event's
            // touches for the next invocation instead of losing them.
            let items = deferrable(event);
            let why = match crate::deferred::push(&session_dir, &items) {
                Ok(()) if items.is_empty() => format!("error: {busy}"),
                Ok(()) => format!(
                    "error: {busy}; {} touches deferred to the next event",
                    items.len()
                ),
                Err(e) => format!("error: {busy}; its touches are lost: {e}"),
            };
            return Ok(Handled::nothing(why));
        }
        other => other?,
    };
    if matches!(event.action, Action::Start(_)) {
        // A session start is a new loop instance in the agent (startup,
        // resume, clear, compact): its version cache starts empty
        // (R-STATE-8); the events after it share what it read (decision
        // 0036). Without the file every known file is read once more.
        let _ = dsh_instructions_session::forget_versions(&session_dir);
    }
    // The hook's one grant of ambient authority: every mount of this
    // invocation opens its roots through this factory.
    // What the last event's process proved about the known directories
    // (decision 0037), written back when this one is done.
    let stamps = crate::dirstamps::SaveOnDrop {
        session_dir: &session_dir,
        memory: crate::dirstamps::load(&session_dir),
    };
    let fs = CapStdFactory::new(ambient_authority())
        .inline()
        .remembering(stamps.memory.clone());
    if call.agent == Agent::Gemini {
        let ctx = crate::gemini::Mounting {
            env: call.env,
            fs: &fs,
            session_dir: &session_dir,
        };
        return crate::gemini::handle(&ctx, event, log, &settings, leading)
            .await
            .map(Handled::untimed);
    }
    let records_path = session_dir.join(crate::record::RECORDS_FILE_NAME);
    let key = crate::record::event_key(call.input);
    let mut records = None;
    if let Some(k) = call.part {
        let (mut recs, warn) = Records::load(&records_path);
        if let Some(r) = recs.find_mut(&key) {
            // A peer part of this event composed already: answer our piece
            // of its composition (never compose twice).
            let n = r.parts.len();
            let (given, turn) = match r.claim(k as usize) {
                Some(i) => (
                    Given::Context(crate::parts::render_part(
                        &r.parts[i],
                        k as usize,
                        n,
                        framing(call.agent),
                    )),
                    turn_of(call.agent, &session_dir, &key, k as usize, n),
                ),
                None => (Given::Nothing, None),
            };
            let why = match &given {
                Given::Context(_) => format!("gave part {k} of {n} of the event's composition"),
                _ => format!("no part {k} (the event has {n})"),
            };
            recs.save(&records_path)?;
            drop(log);
            return Ok(Handled { given, why, turn });
        }
        records = Some((recs, warn));
    }
    let cancel = CancellationToken::new();
    let session = Session::mount(log, &settings, call.env, &fs, &cancel).await?;
    let deferred = apply_deferred(&session, &session_dir, Record::Transient).await?;
    apply(&session, call.agent, event, fresh).await?;
    let mut note = Map::new();
    note.insert(DELIVERED_BY.into(), Value::String(event.name.clone()));
    // After a tool event's touches their projections reconciled every known
    // scope a moment ago: the delivery takes that as its own instead of
    // probing every known directory twice (R-HOOK-6).
    let message = match &event.action {
        Action::Tool { .. } | Action::Shell { .. } => {
            session.deliver_after_tools(&note, &cancel).await?
        }
        _ => session.deliver(&note, &cancel).await?,
    };
    let mut why = match &message {
        Some(m) => summary(m),
        None => "nothing new".to_owned(),
    };
    if deferred > 0 {
        why.push_str(&format!("; {deferred} deferred touches reconciled"));
    }
    let Some((mut recs, warn)) = records else {
        drop(session);
        return Ok(Handled::untimed((
            message.map_or(Given::Nothing, |m| {
                Given::Context(m.framed_text(framing(call.agent)))
            }),
            why,
        )));
    };
    // The first part of this event to hold the lock: record the split so
    // the peers answer from it; pieces earlier events left unclaimed come
    // first (given again, never dropped).
    let k = call.part.unwrap_or(1) as usize;
    let mut parts = recs.take_unclaimed();
    let carried = parts.len();
    if let Some(m) = &message {
        parts.extend(crate::parts::split(m, PART_BYTES));
    }
    let n = parts.len();
    let turn = turn_of(call.agent, &session_dir, &key, k, n);
    let mut record = crate::record::Record {
        key,
        claimed: vec![false; n],
        parts,
    };
    let (given, turn) = match record.claim(k) {
        Some(i) => (
            Given::Context(crate::parts::render_part(
                &record.parts[i],
                k,
                n,
                framing(call.agent),
            )),
            turn,
        ),
        None => (Given::Nothing, None),
    };
    if n > 0 {
        why.push_str(&format!("; {n} parts"));
    }
    if carried > 0 {
        why.push_str(&format!(", {carried} carried from earlier events"));
    }
    if n > PARTS as usize {
        why.push_str(&format!(
            "; {} parts beyond the {PARTS} registered are given with the next event",
            n - PARTS as usize
        ));
    }
    if let Some(w) = warn {
        why.push_str(&format!("; unreadable records replaced: {w}"));
    }
    recs.push(record);
    if let Err(e) = recs.save(&records_path) {
        why.push_str(&format!(
            "; the parts record was not saved ({e}): the other parts of this event are lost"
        ));
    }
    if n > 1 && call.agent.orders_parts_by_finish() {
        let keys: Vec<&str> = recs.records.iter().map(|r| r.key.as_str()).collect();
        crate::order::forget_others(&session_dir, &keys);
    }
    drop(session);
    Ok(Handled { given, why, turn })
}

/// The finishing turn of piece `k` of `n`, where the agent orders hook
/// answers by when they finish (decision 0043).
fn turn_of(
    agent: Agent,
    session_dir: &Utf8Path,
    key: &str,
    k: usize,
    n: usize,
) -> Option<crate::order::Turn> {
    if agent.orders_parts_by_finish() {
        crate::order::Turn::of(session_dir, key, k, n)
    } else {
        None
    }
}

/// What of `event` a busy session keeps for later ([`crate::deferred`]).
fn deferrable(event: &crate::event::HookEvent) -> Vec<crate::deferred::Deferred> {
    use crate::deferred::Deferred;
    match &event.action {
        Action::Tool { touched, .. } => touched
            .iter()
            .map(|t| Deferred {
                path: t.path.clone(),
                kind: t.kind.clone(),
            })
            .collect(),
        Action::Shell { command, .. } => vec![Deferred {
            path: event.cwd.to_string(),
            kind: dsh_instructions_runtime::TouchKind::Shell {
                command: command.clone(),
            },
        }],
        _ => Vec::new(),
    }
}

/// Opens the session's log under its lock, creating it (with `input` as its
/// settings and `cwd` from this first event, R-HOOK-2) when it is new. Two
/// first invocations racing to create: the loser opens the winner's log.
fn open_or_create(
    store: &SessionStore,
    id: &str,
    cwd: &Utf8Path,
    input: &ConfigInput,
) -> Result<(dsh_session_log::SessionLog, SessionSettings, bool), SessionError> {
    if !store.exists(id)? {
        let settings = SessionSettings {
            config: Some(input.clone()),
            trust: Vec::new(),
        };
        match store.create(id, cwd.to_owned(), &settings) {
            Ok(log) => return Ok((log, settings, true)),
            Err(SessionError::Log(LogError::AlreadyExists { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    let (log, _report) = store.open(id)?;
    let settings = crate::heal::settings(store, id, input)?;
    Ok((log, settings, false))
}

/// Appends one line to the diagnostic log, rotating it past its size bound;
/// a log that cannot be written is silently skipped (R-HOOK-1).
fn log_line(dir: &Utf8Path, line: &str) {
    let path = dir.join(LOG_FILE_NAME);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let _ = std::fs::rename(&path, dir.join(OLD_LOG_FILE_NAME));
    }
    let _ = std::fs::create_dir_all(dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        // One write per line: `writeln!` issues the text and the newline
        // as two writes, which concurrent invocations interleave; a single
        // append-mode write of a short line lands whole.
        // Control characters (a NUL or newline in a cwd, an id) are
        // escaped, so every entry stays one readable line (R-HOOK-10).
        let mut whole = crate::shown::escape_control(line).into_owned();
        whole.push('\n');
        let _ = f.write_all(whole.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// R-HOOK-2: a plain id is its own directory; anything that could name
    /// another path, or is too long for one component, becomes a digest.
    #[rstest]
    #[case::uuid("95a9dab2-9315-417b-93cf-ed41c268f299", true)]
    #[case::underscore_dot("thread_01.a", true)]
    #[case::longest_plain(&"a".repeat(128), true)]
    #[case::too_long(&"a".repeat(129), false)]
    #[case::dot_dot("..", false)]
    #[case::dot(".", false)]
    #[case::hidden(".git", false)]
    #[case::parent_path("../../x", false)]
    #[case::slash("a/b", false)]
    #[case::backslash("a\\b", false)]
    #[case::absolute("/etc/passwd", false)]
    #[case::nul("a\0b", false)]
    #[case::space("a b", false)]
    #[case::non_ascii("sitzung-ä", false)]
    #[case::config_file("config.json", false)]
    #[case::log_file("hook.log", false)]
    #[case::old_log_file("hook.log.1", false)]
    #[case::digest_like("id-0123456789abcdef0123456789abcdef01234567", false)]
    #[case::log_like_but_other("hook.log.2", true)]
    fn store_ids_are_one_safe_component(#[case] id: &str, #[case] plain: bool) {
        let s = store_id(id);
        if plain {
            assert_eq!(s, id);
        } else {
            let hex = s.strip_prefix("id-").expect("digest form");
            assert_eq!(hex.len(), 40);
            assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
            assert_eq!(store_id(id), s, "stable");
        }
        assert!(dsh_session_log::session_dir(Utf8Path::new("/store"), &s).is_ok());
    }

    #[test]
    fn different_unsafe_ids_get_different_directories() {
        assert_ne!(store_id("a/b"), store_id("a/c"));
        assert_ne!(store_id(&"x".repeat(300)), store_id(&"x".repeat(301)));
    }

    fn tmp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
        (tmp, dir)
    }

    /// Concurrent invocations append to one diagnostic log: each line must
    /// reach it whole (one write per line), never interleaved with another.
    #[test]
    fn concurrent_log_lines_never_interleave() {
        let (_tmp, dir) = tmp_dir();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    for i in 0..300 {
                        log_line(&dir, &format!("line {t} {i} {}", "x".repeat(200)));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let text = std::fs::read_to_string(dir.join("hook.log")).expect("log");
        let mut seen = std::collections::BTreeSet::new();
        for l in text.lines() {
            let parts: Vec<&str> = l.split(' ').collect();
            assert!(
                parts.len() == 4 && parts[0] == "line" && parts[3] == "x".repeat(200),
                "torn line: {l}"
            );
            assert!(
                seen.insert((parts[1].to_owned(), parts[2].to_owned())),
                "twice: {l}"
            );
        }
        assert_eq!(seen.len(), 8 * 300, "lines lost");
    }
}
