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
use dsh_instructions_runtime::{CapStdFactory, ToolExecution, WorkspaceMessage};
use dsh_instructions_session::{Session, SessionError, SessionSettings, SessionStore};
use dsh_instructions_state::{ConfigInput, ContentTransform, Digest, FallbackScope, NumberInput};
use dsh_session_log::{LockWait, LogError};
use serde_json::{Map, Value, json};

use crate::agent::{Agent, PARTS};
use crate::event::{Action, PathArg, StartSource, ToolMap, default_tools, event_from_value};
use crate::parts::PART_BYTES;
use crate::record::Records;

/// The largest event the adapter reads; a larger one is answered `{}` and
/// logged (docs/hooks.md). Gemini CLI's `BeforeModel` stdin carries the
/// whole text history, so the bound sits far above what its 1M-token window
/// can hold (about 4 MB of text): no session loses its instructions to it.
/// Only what the adapter needs is parsed ([`crate::lean`]).
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// How long an invocation waits for its session's lock: well inside the
/// agents' hook timeout (10 s as installed), so a stuck peer never makes
/// the agent kill us.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Claude Code and Codex keep about 10,000 characters of one context whole
/// (harness README): parts stay below it ([`crate::PART_BYTES`]).
pub const AGENT_CONTEXT_LIMIT: i64 = 10_000;

/// The hook budget for the whole message, every agent (R-HOOK-4).
pub const HOOK_MAX_BYTES: i64 = 65_536;

/// The diagnostic log is rotated (one old copy kept) past this size.
const LOG_ROTATE_BYTES: u64 = 1 << 20;

/// File name of the per-agent configuration overrides.
pub const CONFIG_FILE_NAME: &str = "config.json";

/// The internal touch tool the adapter reports to the runtime: agent tools
/// are mapped to paths here, in [`crate::event`].
const TOUCH_TOOL: &str = "touch";
const TOUCH_ARG: &str = "path";
/// The entry name a directory touch is reported with (only its parent
/// matters to the runtime).
const DIR_ENTRY: &str = ".dsh-touch";

/// The source-JSON field that records which hook event delivered a message
/// (ignored by the typed source, R-STATE-1).
const DELIVERED_BY: &str = "hookEvent";

/// The adapter's configuration for one agent (R-HOOK-4): the hook preset,
/// with what `$DSH_HOME/hooks/<agent>/config.json` overrides.
#[derive(Debug, Clone)]
pub struct HookConfig {
    /// The configuration sessions are created with.
    pub input: ConfigInput,
    /// Agent tool → path arguments (R-HOOK-3, configurable like R-CFG-8).
    pub tools: ToolMap,
    /// Warnings about the configuration, for the diagnostic log.
    pub warnings: Vec<String>,
}

/// The hook preset of `agent` (R-HOOK-4, R-HOOK-8): 65,536 bytes for the
/// whole message (delivered in parts, [`crate::split`]), each agent's own
/// precedence, imports on for Claude Code and Gemini CLI.
///
/// - Claude Code: `CLAUDE.md` first, `AGENTS.md` where a directory has no
///   `CLAUDE.md`, overlay `CLAUDE.local.md` (then ours, `AGENTS.local.md`).
/// - Codex: `AGENTS.override.md`, `AGENTS.md`, the overlays; Codex keeps
///   loading `~/.codex/AGENTS.md` itself.
/// - Gemini CLI: `AGENTS.md`, `CLAUDE.md`; it always loads `GEMINI.md`
///   itself, so the adapter leaves that name to it (decision 0012).
///
/// ```
/// use dsh_instructions_hooks::{hook_preset, Agent};
/// let claude = hook_preset(Agent::Claude);
/// assert_eq!(claude.imports, Some(true));
/// assert_eq!(claude.instruction_file_candidates.as_deref(), Some(&["CLAUDE.md".to_owned()][..]));
/// assert_eq!(claude.fallback_instruction_file_candidates.as_deref(), Some(&["AGENTS.md".to_owned()][..]));
/// assert_eq!(claude.user_instruction_files.as_deref(), Some(&["~/.claude/CLAUDE.md".to_owned()][..]));
/// assert_eq!(hook_preset(Agent::Codex).imports, Some(false));
/// ```
pub fn hook_preset(agent: Agent) -> ConfigInput {
    let names = |n: &[&str]| Some(n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    let (base, local) = match agent {
        // Claude Code's own selection (the `claude` preset, R-HOOK-8) with
        // the fallback per directory: `AGENTS.md` loads wherever a directory
        // has no `CLAUDE.md` — a superset of Claude's path-wide fallback
        // (R-HOOK-4). Both overlays stay (R-HOOK-4: "the .local.md overlays").
        Agent::Claude => (
            names(&["CLAUDE.md"]),
            names(&["CLAUDE.local.md", "AGENTS.local.md"]),
        ),
        Agent::Codex => (names(&["AGENTS.override.md", "AGENTS.md"]), None),
        Agent::Gemini => (None, None),
    };
    let claude = agent == Agent::Claude;
    let shell = crate::event::shell_tool(agent).to_owned();
    ConfigInput {
        max_bytes: Some(NumberInput::Int(HOOK_MAX_BYTES)),
        // R-CFG-11: the agent's shell tool's `command` is a shell call.
        shell_tools: Some([(shell, vec!["command".to_owned()])].into_iter().collect()),
        instruction_file_candidates: base,
        local_instruction_file_candidates: local,
        imports: Some(matches!(agent, Agent::Claude | Agent::Gemini)),
        touch_tools: Some(
            [(TOUCH_TOOL.to_owned(), vec![TOUCH_ARG.to_owned()])]
                .into_iter()
                .collect(),
        ),
        // Claude Code's rules (contract 2): `.claude/CLAUDE.md`, its own
        // transformations, imports to depth 4, and its user file — which
        // `claudeMdExcludes` switches off natively, so the adapter delivers
        // it (never lost, never twice).
        fallback_instruction_file_candidates: claude.then(|| vec!["AGENTS.md".to_owned()]),
        fallback_scope: claude.then_some(FallbackScope::Directory),
        claude_dir: claude.then_some(true),
        content_transform: claude.then_some(ContentTransform::Claude),
        user_instruction_files: claude.then(|| vec!["~/.claude/CLAUDE.md".to_owned()]),
        max_import_depth: claude.then_some(4),
        ..ConfigInput::default()
    }
}

/// The agent's configuration: the preset, overlaid with the fields
/// `config.json` in `dir` sets (a `touch_tools` there is the agent's tool
/// map: tool → argument names, a trailing `/` marking a directory
/// argument).
///
/// # Errors
/// A malformed `config.json` (named with the problem).
pub fn load_config(agent: Agent, dir: &Utf8Path) -> Result<HookConfig, String> {
    let mut input = hook_preset(agent);
    let mut tools = default_tools(agent);
    let mut warnings = Vec::new();
    let path = dir.join(CONFIG_FILE_NAME);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let value: Value =
                serde_json::from_slice(&bytes).map_err(|e| format!("{path}: {e}"))?;
            // serde reads a struct from an array too (`[]` is "no fields"):
            // a file that is not an object is a mistake, said as one.
            if !value.is_object() {
                return Err(format!("{path}: not a JSON object"));
            }
            let over: ConfigInput =
                serde_json::from_value(value).map_err(|e| format!("{path}: {e}"))?;
            if let Some(map) = &over.touch_tools {
                tools = map
                    .iter()
                    .map(|(tool, keys)| {
                        let args = keys
                            .iter()
                            .map(|k| PathArg {
                                key: k.trim_end_matches('/').to_owned(),
                                dir: k.ends_with('/'),
                            })
                            .collect();
                        (tool.clone(), args)
                    })
                    .collect();
            }
            overlay(&mut input, over);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{path}: {e}")),
    }
    if matches!(agent, Agent::Claude | Agent::Codex)
        && let Some(NumberInput::Int(n)) = input.max_bytes
        && n > HOOK_MAX_BYTES
    {
        warnings.push(format!(
            "max_bytes {n} is above the {HOOK_MAX_BYTES} bytes {PARTS} parts of {PART_BYTES} hold: \
             what the registered parts cannot hold is given with the next event"
        ));
    }
    Ok(HookConfig {
        input,
        tools,
        warnings,
    })
}

/// Explicit fields of `over` win (the internal touch tool stays).
fn overlay(input: &mut ConfigInput, over: ConfigInput) {
    let ConfigInput {
        max_bytes,
        max_source_bytes,
        instruction_file_candidates,
        local_instruction_file_candidates,
        project_root_markers,
        candidate_policy,
        dsh_home,
        touch_tools: _,
        shell_tools,
        preset,
        imports,
        fallback_instruction_file_candidates,
        fallback_scope,
        claude_dir,
        content_transform,
        user_instruction_files,
        max_import_depth,
    } = over;
    if preset.is_some() {
        // A preset names candidate lists and a budget; explicit fields of
        // the file still win over it below.
        let keep_tools = input.touch_tools.take();
        *input = ConfigInput {
            preset,
            touch_tools: keep_tools,
            imports: input.imports,
            ..ConfigInput::default()
        };
    }
    macro_rules! set {
        ($($f:ident),*) => { $( if $f.is_some() { input.$f = $f; } )* };
    }
    set!(
        max_bytes,
        max_source_bytes,
        instruction_file_candidates,
        local_instruction_file_candidates,
        project_root_markers,
        candidate_policy,
        dsh_home,
        shell_tools,
        imports,
        fallback_instruction_file_candidates,
        fallback_scope,
        claude_dir,
        content_transform,
        user_instruction_files,
        max_import_depth
    );
}

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

/// Why an invocation gave nothing although it should have tried.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdapterError {
    #[error("{0}")]
    Event(#[from] crate::event::EventError),
    #[error("{0}")]
    Session(#[from] SessionError),
    #[error("{0}")]
    Config(String),
}

/// What an invocation answers.
#[derive(Debug)]
pub(crate) enum Given {
    /// `additionalContext` text.
    Context(String),
    /// Gemini CLI `BeforeModel`: the modified leading messages.
    Request(Vec<Value>),
    /// `{}`.
    Nothing,
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
pub fn respond_part(agent: Agent, part: Option<u32>, input: &[u8], env: &HomeEnv) -> String {
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
        (Some(_), None) => Ok((
            Given::Nothing,
            format!("ignored: event larger than {MAX_EVENT_BYTES} bytes"),
        )),
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
    let (stdout, line) = match result {
        Ok((given, outcome)) => (answer(agent, &event_name, given), outcome),
        Err(e) => ("{}".to_owned(), format!("error: {e}")),
    };
    if let Some(home) = &home {
        let part = part.map_or_else(String::new, |k| format!(" part {k}"));
        log_line(
            &agent_dir(home, agent),
            &format!(
                "{} {event_name}{part} {line} {}ms",
                dsh_session_log::rfc3339_utc(std::time::SystemTime::now()),
                started.elapsed().as_millis()
            ),
        );
    }
    stdout
}

/// The agent's answer (all three read `hookSpecificOutput.additionalContext`,
/// harness README; Gemini CLI's `BeforeModel` reads `llm_request`).
/// Claude Code wraps hook context in its own `<system-reminder>` and
/// escapes ours, so it gets the text without our frame (decision 0019).
fn answer(agent: Agent, event_name: &str, given: Given) -> String {
    match given {
        Given::Nothing => "{}".to_owned(),
        Given::Context(text) => {
            let text = match agent {
                Agent::Claude => crate::parts::unframe(&text),
                Agent::Codex | Agent::Gemini => text,
            };
            json!({
                "hookSpecificOutput": {
                    "hookEventName": event_name,
                    "additionalContext": text,
                }
            })
            .to_string()
        }
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

/// One invocation's inputs.
struct Call<'a> {
    agent: Agent,
    part: Option<u32>,
    input: &'a [u8],
    env: &'a HomeEnv,
    home: &'a DshHome,
}

type Handled = (Given, String);

fn run_blocking(call: &Call<'_>, lean: crate::lean::LeanEvent) -> Result<Handled, AdapterError> {
    let dir = agent_dir(call.home, call.agent);
    let config = load_config(call.agent, &dir).map_err(AdapterError::Config)?;
    let event = event_from_value(call.agent, &lean.to_value(), &config.tools)?;
    let mut line = format!("session {} ", store_id(&event.session_id));
    let (given, why) = match &event.action {
        // Cheap for every part: no lock, no session (R-HOOK-6).
        Action::NoContext => (Given::Nothing, "no context for this event".to_owned()),
        Action::PreCompress => (Given::Nothing, "advisory".to_owned()),
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
    line.push_str(&why);
    for w in &config.warnings {
        line.push_str("; warning: ");
        line.push_str(w);
    }
    Ok((given, line))
}

async fn handle(
    call: &Call<'_>,
    event: &crate::event::HookEvent,
    config: &HookConfig,
    dir: &Utf8Path,
    leading: Option<Vec<Value>>,
) -> Result<(Given, String), AdapterError> {
    let store = SessionStore::new(dir.to_owned()).with_lock_wait(LockWait::up_to(LOCK_WAIT));
    let id = store_id(&event.session_id);
    let (log, settings, fresh) = open_or_create(&store, &id, &event.cwd, &config.input)?;
    if call.agent == Agent::Gemini {
        return crate::gemini::handle(call.env, event, log, &settings, leading).await;
    }
    let records_path = dsh_session_log::session_dir(store.dir(), &id)
        .map_err(SessionError::from)?
        .join(crate::record::RECORDS_FILE_NAME);
    let key = crate::record::event_key(call.input);
    let mut records = None;
    if let Some(k) = call.part {
        let (mut recs, warn) = Records::load(&records_path);
        if let Some(r) = recs.find_mut(&key) {
            // A peer part of this event composed already: answer our piece
            // of its composition (never compose twice).
            let n = r.parts.len();
            let given = match r.claim(k as usize) {
                Some(i) => Given::Context(crate::parts::render_part(&r.parts[i], k as usize, n)),
                None => Given::Nothing,
            };
            let why = match &given {
                Given::Context(_) => format!("gave part {k} of {n} of the event's composition"),
                _ => format!("no part {k} (the event has {n})"),
            };
            recs.save(&records_path).map_err(AdapterError::Config)?;
            drop(log);
            return Ok((given, why));
        }
        records = Some((recs, warn));
    }
    let cancel = CancellationToken::new();
    let fs = CapStdFactory::new(ambient_authority()).inline();
    let session = Session::mount(log, &settings, call.env, &fs, &cancel).await?;
    apply(&session, call.agent, event, fresh).await?;
    let mut note = Map::new();
    note.insert(DELIVERED_BY.into(), Value::String(event.name.clone()));
    let message = session.deliver(&note, &cancel).await?;
    let mut why = match &message {
        Some(m) => summary(m),
        None => "nothing new".to_owned(),
    };
    let Some((mut recs, warn)) = records else {
        drop(session);
        return Ok((
            message.map_or(Given::Nothing, |m| Given::Context(m.joined_text())),
            why,
        ));
    };
    // The first part of this event to hold the lock: record the split so
    // the peers answer from it; pieces earlier events left unclaimed come
    // first (given again, never dropped).
    let k = call.part.unwrap_or(1) as usize;
    let mut parts = recs.take_unclaimed();
    let carried = parts.len();
    if let Some(m) = &message {
        parts.extend(crate::parts::split(&m.joined_text(), PART_BYTES));
    }
    let n = parts.len();
    let mut record = crate::record::Record {
        key,
        claimed: vec![false; n],
        parts,
    };
    let given = match record.claim(k) {
        Some(i) => Given::Context(crate::parts::render_part(&record.parts[i], k, n)),
        None => Given::Nothing,
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
    drop(session);
    Ok((given, why))
}

/// The event's effect on the session before delivering (R-HOOK-3).
async fn apply(
    session: &Session,
    agent: Agent,
    event: &crate::event::HookEvent,
    fresh: bool,
) -> Result<(), AdapterError> {
    match &event.action {
        // History is gone (compaction, clear) or new while we have a log for
        // this id: every earlier workspace message is hidden, so the next
        // composition is a complete baseline (R-RT-8).
        Action::Start(StartSource::Compact | StartSource::Clear | StartSource::Startup)
            if !fresh =>
        {
            session.compact_workspace()?;
        }
        Action::Tool { touched, .. } => {
            touch(session, touched, false).await?;
        }
        Action::Shell { name, command } => {
            session
                .tool(&shell_call(event, name, command), false)
                .await?;
            // Claude Code reports the shell's cwd *after* the command, so a
            // `cd s3 && cat f.txt` arrives with cwd `s3` already and its
            // words must be read from where the command started. That is
            // unknown (Claude keeps a `cd` across calls); the session's cwd
            // is the usual start. Only a command that changes directory needs
            // the second reading, and only existing paths inside the trusted
            // roots touch, so it can add a touch, never a wrong one
            // (R-DISC-10, R-HOOK-8). Codex gives the call's own workdir.
            if agent == Agent::Claude && changes_directory(command) {
                let mut from_session = shell_call(event, name, command);
                from_session.arguments = json!({ "command": command });
                session.tool(&from_session, false).await?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `command` has a `cd` word, so the shell's cwd after it differs
/// from the one it started in.
fn changes_directory(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '\'' | '"'))
        .any(|w| w == "cd")
}

/// A shell call as the runtime reads it (contract 1): the command, and the
/// event's cwd as its workdir (Codex sends the call's workdir there).
pub(crate) fn shell_call(
    event: &crate::event::HookEvent,
    name: &str,
    command: &str,
) -> ToolExecution {
    ToolExecution {
        name: name.to_owned(),
        arguments: json!({ "command": command, "workdir": event.cwd.as_str() }),
        token: "hook-shell".to_owned(),
        parent: None,
        is_error: false,
        cancelled: false,
    }
}

/// Reports each touched path to the runtime through the internal touch
/// tool; with `record`, the touch is kept in the log for later mounts.
pub(crate) async fn touch(
    session: &Session,
    touched: &[crate::event::Touched],
    record: bool,
) -> Result<(), SessionError> {
    for (i, t) in touched.iter().enumerate() {
        let path = if t.dir {
            // A directory touches down to itself (R-HOOK-3): the runtime
            // reconciles the parents of a touched file, so the touch names
            // a (never opened) entry inside it.
            format!("{}/{DIR_ENTRY}", t.path.trim_end_matches('/'))
        } else {
            t.path.clone()
        };
        let exec = ToolExecution {
            name: TOUCH_TOOL.into(),
            arguments: json!({ TOUCH_ARG: path }),
            token: format!("hook-{i}"),
            parent: None,
            is_error: false,
            cancelled: false,
        };
        session.tool(&exec, record).await?;
    }
    Ok(())
}

/// `baseline: set AGENTS.md, …` for the log.
pub(crate) fn summary(m: &WorkspaceMessage) -> String {
    dsh_instructions_state::describe::source_summary(
        m.source.baseline,
        m.source.changes.iter().map(|c| {
            (
                c.action.as_str(),
                c.path.as_str(),
                c.previous_path.as_deref(),
            )
        }),
    )
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
    let settings = store.settings(id)?;
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
        let mut whole = line.replace('\n', " ");
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

    /// Only a command that changes directory is read a second time from
    /// the session's cwd (Claude Code's post-command cwd).
    #[rstest]
    #[case::cd_then_cat("cd s3 && cat f.txt", true)]
    #[case::wrapped("bash -lc 'cd s3; cat f.txt'", true)]
    #[case::subshell("(cd s3 && ls)", true)]
    #[case::plain("cat s3/f.txt", false)]
    #[case::word_with_cd("abcd cdrom/cd.txt", false)]
    fn only_a_cd_changes_directory(#[case] command: &str, #[case] changes: bool) {
        assert_eq!(changes_directory(command), changes);
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

    #[rstest]
    #[case::truncated("{\"max_bytes\": ")]
    #[case::array("[]")]
    #[case::array_of_fields("[9000]")]
    #[case::string("\"max_bytes\"")]
    #[case::unknown_field(r#"{"max_byte": 9000}"#)]
    fn a_malformed_config_is_an_error_naming_the_file(#[case] text: &str) {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(dir.join(CONFIG_FILE_NAME), text).expect("write");
        let e = load_config(Agent::Claude, &dir).expect_err("malformed");
        assert!(e.contains("config.json"), "{e}");
    }

    /// R-HOOK-4: above what the registered parts hold, a warning; Gemini
    /// CLI has no parts and no such limit.
    #[rstest]
    #[case::claude_over(Agent::Claude, 70_000, true)]
    #[case::claude_at(Agent::Claude, 65_536, false)]
    #[case::codex_over(Agent::Codex, 65_537, true)]
    #[case::gemini_over(Agent::Gemini, 100_000, false)]
    fn a_budget_above_the_agent_limit_warns(
        #[case] agent: Agent,
        #[case] max: i64,
        #[case] warns: bool,
    ) {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(
            dir.join(CONFIG_FILE_NAME),
            format!("{{\"max_bytes\": {max}}}"),
        )
        .expect("write");
        let c = load_config(agent, &dir).expect("valid");
        assert_eq!(c.input.max_bytes, Some(NumberInput::Int(max)));
        assert_eq!(!c.warnings.is_empty(), warns, "{:?}", c.warnings);
    }

    /// A configured tool map replaces the default; a trailing `/` marks a
    /// directory argument, and the internal touch tool stays.
    #[test]
    fn configured_tools_replace_the_defaults() {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(
            dir.join(CONFIG_FILE_NAME),
            r#"{"touch_tools": {"open": ["target"], "scan": ["root/"]}}"#,
        )
        .expect("write");
        let c = load_config(Agent::Claude, &dir).expect("valid");
        let keys: Vec<&str> = c.tools.keys().map(String::as_str).collect();
        assert_eq!(keys, ["open", "scan"]);
        assert_eq!(
            c.tools["scan"],
            [PathArg {
                key: "root".into(),
                dir: true
            }]
        );
        assert!(
            c.input
                .touch_tools
                .as_ref()
                .is_some_and(|m| m.contains_key(TOUCH_TOOL))
        );
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
