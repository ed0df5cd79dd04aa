//! `session …` (R-CLI-3): a persisted session in
//! `<DSH_HOME>/sessions/<id>/session.jsonl` driven one command per process.
//!
//! Every command is a resume: it opens (and repairs) the log, mounts a fresh
//! loop instance over a [`LogHost`], and leaves no turn open behind it. The
//! next-step inbox lives only in memory, so it is not persisted across
//! processes; instead each command re-derives the pending workspace message
//! by replaying the tool results recorded since the last persisted message.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};

use camino::Utf8PathBuf;
use dsh_agent_instructions::discovery::CancellationToken;
use dsh_agent_instructions::runtime::{
    BatchEntry, BatchItem, Decision, Host, Inbox, InboxId, Instance, Mount, SessionEvent,
    ToolExecution, WorkspaceMessage,
};
use dsh_agent_instructions::session_log::{
    self as slog, Event, EventKind, LOG_FILE_NAME, OpenReport, SessionHeader, SessionLog,
};
use dsh_agent_instructions::state::{Config, TypedSource};
use serde_json::{Value, json};

use crate::args::{ConfigArgs, SessionCommand};
use crate::describe::{source_summary, tool_outcome};
use crate::error::CliError;
use crate::setup::{self, Setup};

/// A [`Host`] over a session log: visible workspace state and step gating
/// come from the log's surface; the inbox is kept in memory.
#[derive(Debug)]
pub struct LogHost {
    cwd: Utf8PathBuf,
    state: Mutex<LogState>,
}

#[derive(Debug)]
struct LogState {
    log: SessionLog,
    inbox: Inbox,
}

impl LogHost {
    /// Wraps an open log; the session cwd comes from its header.
    pub fn new(log: SessionLog) -> Self {
        Self {
            cwd: Utf8PathBuf::from(log.header().cwd.clone()),
            state: Mutex::new(LogState {
                log,
                inbox: Inbox::default(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, LogState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends one event.
    pub fn append(&self, kind: EventKind) -> Result<u64, CliError> {
        Ok(self.lock().log.append(kind)?)
    }

    /// Appends an entered batch in order; workspace messages keep their typed
    /// source verbatim (R-LOG-3).
    pub fn append_batch(&self, batch: &[BatchEntry<String>]) -> Result<(), CliError> {
        for entry in batch {
            self.append(match entry {
                BatchEntry::Host(text) => EventKind::Message {
                    role: "user".into(),
                    parts: vec![text.clone()],
                    source: None,
                },
                BatchEntry::Workspace(m) => EventKind::Message {
                    role: "user".into(),
                    parts: m.parts.clone(),
                    source: Some(m.source.to_json()),
                },
            })?;
        }
        Ok(())
    }

    /// Every event of the log (a whole read of the file).
    #[cfg(test)]
    pub fn events(&self) -> Result<Vec<Event>, CliError> {
        Ok(self.lock().log.events()?)
    }

    /// The tool events after the last message (R-LOG-5: from the summary).
    pub fn tools_since_message(&self) -> Vec<Event> {
        self.lock().log.summary().tools_since_message().to_vec()
    }
}

impl Host for LogHost {
    fn cwd(&self) -> Utf8PathBuf {
        self.cwd.clone()
    }

    fn visible_workspace(&self) -> Vec<TypedSource> {
        let s = self.lock();
        s.log
            .summary()
            .workspace()
            .iter()
            .filter_map(|w| TypedSource::from_json(&w.source))
            .collect()
    }

    fn step_open(&self) -> bool {
        self.lock().log.summary().step_open()
    }

    fn pending(&self) -> Vec<(InboxId, WorkspaceMessage)> {
        self.lock().inbox.pending().to_vec()
    }

    fn inbox_prepend(&self, message: WorkspaceMessage) -> InboxId {
        self.lock().inbox.prepend(message)
    }

    fn inbox_replace(&self, id: InboxId, message: WorkspaceMessage) {
        self.lock().inbox.replace(id, message);
    }

    fn inbox_remove(&self, id: InboxId) {
        self.lock().inbox.remove(id);
    }
}

/// The typed source a workspace message was persisted with; `None` for
/// other events and for a source this version cannot read.
fn typed_source(e: &Event) -> Option<TypedSource> {
    match &e.kind {
        EventKind::Message {
            source: Some(v), ..
        } => TypedSource::from_json(v),
        _ => None,
    }
}

/// Tool results recorded after the last persisted message: their touches
/// made the pending message the previous process held (and lost).
fn tools_since_last_message(events: &[Event]) -> Vec<ToolExecution> {
    let start = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::Message { .. }))
        .map_or(0, |i| i + 1);
    events
        .get(start..)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Tool {
                name,
                args,
                ok,
                cancelled,
                token,
                parent,
            } => Some(ToolExecution {
                name: name.clone(),
                arguments: args.clone(),
                token: token.clone().unwrap_or_else(|| format!("seq-{}", e.seq)),
                parent: parent.clone(),
                is_error: !ok,
                cancelled: *cancelled,
            }),
            _ => None,
        })
        .collect()
}

/// The tool and argument a `touch` records: `read`/`file_path` when the
/// configured touch tools have it (the default), else the first configured
/// tool and its first path argument.
fn touch_tool(config: &Config) -> Option<(String, String)> {
    let arg_of = |args: &Vec<String>| args.first().cloned();
    if let Some(arg) = config.touch_tools.get("read").and_then(arg_of) {
        return Some(("read".into(), arg));
    }
    config
        .touch_tools
        .iter()
        .find_map(|(tool, args)| arg_of(args).map(|a| (tool.clone(), a)))
}

fn sessions_log_path(setup_home: &Utf8PathBuf, id: &str) -> Result<Utf8PathBuf, CliError> {
    let dir = slog::session_dir(&setup_home.join("sessions"), id)?;
    Ok(dir.join(LOG_FILE_NAME))
}

fn print_repairs(report: &OpenReport) {
    if let Some(t) = &report.truncated {
        err!(
            "dsh-instructions: repaired session log: removed a torn final line ({} bytes at offset {})",
            t.len,
            t.offset
        );
    }
    for s in &report.skipped {
        err!(
            "dsh-instructions: session log line {} skipped: {}",
            s.line,
            s.reason
        );
    }
    if let Some(seq) = report.interrupted {
        err!(
            "dsh-instructions: repaired session log: closed an open turn (interrupted, seq {seq})"
        );
    }
}

/// An open session: its host and a fresh loop instance with the pending
/// message re-derived.
struct Open {
    host: Arc<LogHost>,
    instance: Instance,
    config: Config,
}

async fn open(setup: &Setup, id: &str, flags: &ConfigArgs) -> Result<Open, CliError> {
    let path = sessions_log_path(&setup.home.path, id)?;
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(CliError::new(format!(
            "no session {id:?} (looked for {path})"
        )));
    }
    let (log, report) = SessionLog::open(&path)?;
    print_repairs(&report);
    let host = Arc::new(LogHost::new(log));
    let cwd = host.cwd();
    if !cwd.is_absolute() {
        return Err(CliError::new(format!(
            "session {id}: header cwd is not absolute: {cwd}"
        )));
    }
    setup::existing_dir(&cwd, "session cwd")?;
    let provider = setup::provider(setup, &cwd, flags).await?;
    let instance = Instance::mount(
        Mount {
            config: Some(setup.config.clone()),
            provider: Some(Arc::new(provider)),
            home: setup.home.clone(),
        },
        host.clone(),
    );
    for exec in tools_since_last_message(&host.tools_since_message()) {
        instance.tool_result(&exec);
    }
    instance.settle().await;
    Ok(Open {
        host,
        instance,
        config: setup.config.clone(),
    })
}

fn print_message(message: Option<&WorkspaceMessage>, what: &str) {
    match message {
        Some(m) => {
            err!("# {what}: {}", summary(&m.source));
            out!("{}", m.joined_text());
        }
        None => err!("# {what}: none"),
    }
}

/// `baseline: set AGENTS.md, remove pkg/AGENTS.md` style summary of a source.
fn summary(source: &TypedSource) -> String {
    source_summary(
        source.baseline,
        source.changes.iter().map(|c| {
            (
                c.action.as_str(),
                c.path.as_str(),
                c.previous_path.as_deref(),
            )
        }),
    )
}

/// Runs one `session` subcommand.
pub fn run(cmd: SessionCommand) -> Result<ExitCode, CliError> {
    match cmd {
        SessionCommand::New { cwd, config } => new(cwd.as_deref(), &config),
        SessionCommand::Log { id, home, full } => log(&id, home.as_deref(), full),
        SessionCommand::Compact {
            id,
            workspace,
            all,
            home,
        } => compact(&id, workspace, all, home.as_deref()),
        SessionCommand::Prompt { id, text, config } => with_open(&id, &config, |o| {
            Box::pin(async move { prompt(o, text).await })
        }),
        SessionCommand::Touch { id, path, config } => with_open(&id, &config, |o| {
            Box::pin(async move { touch(o, path).await })
        }),
        SessionCommand::StepEnd { id, config } => {
            with_open(&id, &config, |o| Box::pin(async move { step_end(o).await }))
        }
        SessionCommand::Resume { id, config } => {
            with_open(&id, &config, |o| Box::pin(async move { resume(o).await }))
        }
    }
}

type Job = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), CliError>>>>;

fn with_open(
    id: &str,
    flags: &ConfigArgs,
    job: impl FnOnce(Open) -> Job,
) -> Result<ExitCode, CliError> {
    let setup = setup::load(flags)?;
    let rt = setup::runtime()?;
    rt.block_on(async {
        let opened = open(&setup, id, flags).await?;
        job(opened).await
    })?;
    Ok(ExitCode::SUCCESS)
}

fn new(cwd: Option<&Path>, flags: &ConfigArgs) -> Result<ExitCode, CliError> {
    let setup = setup::load(flags)?;
    let cwd = setup::cwd(&setup.env, cwd)?;
    let id = slog::new_session_id();
    let dir = slog::session_dir(&setup.home.sessions_dir(), &id)?;
    SessionLog::create(&dir, SessionHeader::new(id.clone(), cwd.as_str()))?;
    out!("{id}");
    Ok(ExitCode::SUCCESS)
}

/// A whole turn's first step: `turn_start`, the entered batch (prompt, then
/// the folded workspace message), `turn_end`.
async fn prompt(o: Open, text: String) -> Result<(), CliError> {
    o.host.append(EventKind::TurnStart)?;
    let decision = Decision::Enter(vec![BatchItem {
        message: text,
        claimed: true,
    }]);
    let outcome = o
        .instance
        .pre_step(1, decision, &CancellationToken::new())
        .await
        .map_err(|e| CliError::new(format!("pre-step: {e}")))?;
    o.host
        .append_batch(outcome.batch.as_deref().unwrap_or_default())?;
    o.host.append(EventKind::TurnEnd)?;
    print_message(outcome.entered.as_ref(), "entered");
    Ok(())
}

/// Records a successful read of `path` and prints the pending message.
async fn touch(o: Open, path: String) -> Result<(), CliError> {
    let Some((tool, arg)) = touch_tool(&o.config) else {
        return Err(CliError::new(
            "touch_tools is empty: no tool counts as a touch",
        ));
    };
    let token = format!("cli-{}", slog::new_session_id());
    let args = json!({ arg: path });
    o.host.append(EventKind::Tool {
        name: tool.clone(),
        args: args.clone(),
        ok: true,
        cancelled: false,
        token: Some(token.clone()),
        parent: None,
    })?;
    o.instance.tool_result(&ToolExecution {
        name: tool,
        arguments: args,
        token,
        parent: None,
        is_error: false,
        cancelled: false,
    });
    o.instance.settle().await;
    let pending = o.host.pending();
    print_message(pending.first().map(|(_, m)| m), "pending");
    Ok(())
}

/// Ends a tool step: `step_end`, then the tool-continuation pre-step enters
/// the pending workspace message alone (R-RT-1).
async fn step_end(o: Open) -> Result<(), CliError> {
    o.host.append(EventKind::StepEnd)?;
    o.instance.session_event(SessionEvent::StepEnd);
    o.instance.settle().await;
    let outcome = o
        .instance
        .pre_step::<String>(2, Decision::Enter(Vec::new()), &CancellationToken::new())
        .await
        .map_err(|e| CliError::new(format!("pre-step: {e}")))?;
    o.host
        .append_batch(outcome.batch.as_deref().unwrap_or_default())?;
    print_message(outcome.entered.as_ref(), "entered");
    Ok(())
}

/// What the next pre-step of a new loop instance would enter; writes nothing.
async fn resume(o: Open) -> Result<(), CliError> {
    // A reject leaves the composed message pending instead of entering it.
    o.instance
        .pre_step::<String>(1, Decision::Reject, &CancellationToken::new())
        .await
        .map_err(|e| CliError::new(format!("pre-step: {e}")))?;
    let pending = o.host.pending();
    print_message(pending.first().map(|(_, m)| m), "next pre-step would enter");
    Ok(())
}

/// The home holding the sessions, resolved exactly as the other session
/// commands do (`--home`, `$DSH_HOME`, `~/.dsh`, then a `dsh_home` key of
/// `settings.yaml`), so every command finds the same sessions.
fn home_only(home: Option<&Path>) -> Result<Utf8PathBuf, CliError> {
    let flags = ConfigArgs {
        home: home.map(Path::to_path_buf),
        ..ConfigArgs::default()
    };
    Ok(setup::load(&flags)?.home.path)
}

/// Which surface events a compaction hides.
fn compaction_targets(events: &[Event], workspace: bool, all: bool) -> Vec<u64> {
    let surface = slog::surface(events);
    let is_ws = |e: &&&Event| {
        matches!(
            &e.kind,
            EventKind::Message {
                source: Some(_),
                ..
            }
        )
    };
    if all {
        surface.iter().map(|e| e.seq).collect()
    } else if workspace {
        surface.iter().filter(is_ws).map(|e| e.seq).collect()
    } else {
        surface
            .iter()
            .rev()
            .find(|e| typed_source(e).is_some_and(|s| s.baseline))
            .map(|e| vec![e.seq])
            .unwrap_or_default()
    }
}

fn compact(
    id: &str,
    workspace: bool,
    all: bool,
    home: Option<&Path>,
) -> Result<ExitCode, CliError> {
    let home = home_only(home)?;
    let path = sessions_log_path(&home, id)?;
    let (mut log, report) = SessionLog::open(&path)?;
    print_repairs(&report);
    let hide = compaction_targets(&log.events()?, workspace, all);
    if hide.is_empty() {
        err!("# nothing to compact");
        return Ok(ExitCode::SUCCESS);
    }
    let listed = hide
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let seq = log.append(EventKind::Compaction { hide })?;
    out!("compaction {seq} hides {listed}");
    Ok(ExitCode::SUCCESS)
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let more = text.lines().nth(1).is_some();
    let mut short: String = line.chars().take(60).collect();
    if more || short.len() < line.len() {
        short.push('…');
    }
    short
}

/// One line per event (plus the full text of messages with `--full`).
fn event_line(e: &Event, hidden: bool, full: bool) -> String {
    let mark = if hidden { "  [hidden]" } else { "" };
    let body = match &e.kind {
        EventKind::Message {
            role,
            parts,
            source,
        } => {
            let text = parts.join("\n");
            let head = match source.as_ref().and_then(TypedSource::from_json) {
                Some(s) => format!("message workspace {}", summary(&s)),
                None => format!("message {role} {:?}", first_line(&text)),
            };
            if full {
                format!("{head}{mark}\n{text}")
            } else {
                return format!("{:>4}  {head}{mark}", e.seq);
            }
        }
        EventKind::Tool {
            name,
            args,
            ok,
            cancelled,
            ..
        } => {
            format!(
                "tool {name} {} {}",
                compact_json(args),
                tool_outcome(*ok, *cancelled)
            )
        }
        EventKind::Compaction { hide } => format!(
            "compaction hides {}",
            hide.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.type_name().unwrap_or("unknown").to_owned(),
    };
    if full && matches!(e.kind, EventKind::Message { .. }) {
        return format!("{:>4}  {body}", e.seq);
    }
    format!("{:>4}  {body}{mark}", e.seq)
}

fn compact_json(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn log(id: &str, home: Option<&Path>, full: bool) -> Result<ExitCode, CliError> {
    let home = home_only(home)?;
    let path = sessions_log_path(&home, id)?;
    let parsed = slog::read_log_file(&path)?;
    out!(
        "session {}  cwd {}  created {}",
        parsed.header.id,
        parsed.header.cwd,
        parsed.header.created_at
    );
    let visible: std::collections::BTreeSet<u64> = parsed.surface().iter().map(|e| e.seq).collect();
    for e in &parsed.events {
        let hidden = !matches!(e.kind, EventKind::Compaction { .. }) && !visible.contains(&e.seq);
        out!("{}", event_line(e, hidden, full));
    }
    if let Some(t) = &parsed.torn_tail {
        err!(
            "# torn final line ({} bytes) ignored; the next writing command repairs it",
            t.len
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn ev(seq: u64, kind: EventKind) -> Event {
        Event { seq, kind }
    }

    fn ws(baseline: bool) -> EventKind {
        EventKind::Message {
            role: "user".into(),
            parts: vec!["x".into()],
            source: Some(
                TypedSource {
                    baseline,
                    baseline_identity: None,
                    changes: Vec::new(),
                }
                .to_json(),
            ),
        }
    }

    fn tool(token: &str) -> EventKind {
        EventKind::Tool {
            name: "read".into(),
            args: json!({"file_path": "a"}),
            ok: true,
            cancelled: false,
            token: Some(token.into()),
            parent: None,
        }
    }

    #[rstest]
    #[case(vec![], false)]
    #[case(vec![EventKind::StepStart], true)]
    #[case(vec![EventKind::StepStart, EventKind::StepEnd], false)]
    #[case(vec![EventKind::StepStart, EventKind::Interrupted], false)]
    #[case(vec![EventKind::StepStart, tool("t")], true)]
    fn step_gating_is_seeded_from_the_log(#[case] kinds: Vec<EventKind>, #[case] open: bool) {
        let events: Vec<Event> = kinds
            .into_iter()
            .enumerate()
            .map(|(i, k)| ev(i as u64 + 1, k))
            .collect();
        assert_eq!(slog::SurfaceSummary::of(&events).step_open(), open);
    }

    #[test]
    fn only_tools_after_the_last_message_are_replayed() {
        let events = vec![
            ev(1, tool("old")),
            ev(2, ws(true)),
            ev(3, tool("a")),
            ev(4, EventKind::TurnEnd),
            ev(5, tool("b")),
        ];
        let tokens: Vec<String> = tools_since_last_message(&events)
            .into_iter()
            .map(|t| t.token)
            .collect();
        assert_eq!(tokens, ["a", "b"]);
    }

    #[rstest]
    #[case(false, false, vec![4])]
    #[case(true, false, vec![2, 4])]
    #[case(false, true, vec![1, 2, 3, 4])]
    fn compaction_modes(#[case] workspace: bool, #[case] all: bool, #[case] want: Vec<u64>) {
        let events = vec![
            ev(1, EventKind::TurnStart),
            ev(2, ws(true)),
            ev(3, EventKind::TurnEnd),
            ev(4, ws(true)),
        ];
        assert_eq!(compaction_targets(&events, workspace, all), want);
    }

    #[test]
    fn default_compaction_reaches_an_older_baseline_once_the_latest_is_hidden() {
        let events = vec![
            ev(1, ws(true)),
            ev(2, ws(false)),
            ev(3, ws(true)),
            ev(4, EventKind::Compaction { hide: vec![3] }),
        ];
        assert_eq!(compaction_targets(&events, false, false), vec![1]);
    }

    /// A message some other product persisted with a source that is not ours.
    fn foreign_source() -> EventKind {
        EventKind::Message {
            role: "user".into(),
            parts: vec!["x".into()],
            source: Some(json!({"kind": "other", "baseline": true})),
        }
    }

    #[test]
    fn a_source_that_is_not_ours_is_neither_visible_nor_a_baseline_to_compact() {
        let events = vec![ev(1, ws(true)), ev(2, foreign_source())];
        assert_eq!(typed_source(&events[1]), None);
        assert_eq!(compaction_targets(&events, false, false), vec![1]);
        let (_tmp, host) = log_host();
        host.append(foreign_source()).expect("append");
        assert!(host.visible_workspace().is_empty());
    }

    fn log_host() -> (tempfile::TempDir, LogHost) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = camino::Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join("s");
        let log = SessionLog::create(&dir, SessionHeader::new("s", "/work/repo")).expect("create");
        (tmp, LogHost::new(log))
    }

    #[test]
    fn log_host_sees_only_visible_workspace_sources() {
        let (_tmp, host) = log_host();
        assert_eq!(host.cwd(), "/work/repo");
        let first = host.append(ws(true)).expect("append");
        host.append(EventKind::Message {
            role: "user".into(),
            parts: vec!["hi".into()],
            source: None,
        })
        .expect("append");
        host.append(ws(false)).expect("append");
        assert_eq!(host.visible_workspace().len(), 2);
        host.append(EventKind::Compaction { hide: vec![first] })
            .expect("append");
        let visible = host.visible_workspace();
        assert_eq!(visible.len(), 1);
        assert!(!visible[0].baseline, "the hidden baseline no longer counts");
    }

    #[test]
    fn log_host_inbox_prepends_replaces_and_removes() {
        let (_tmp, host) = log_host();
        let msg = |t: &str| WorkspaceMessage {
            parts: vec![t.into()],
            source: TypedSource::default(),
        };
        let a = host.inbox_prepend(msg("a"));
        let b = host.inbox_prepend(msg("b"));
        assert_ne!(a, b);
        host.inbox_replace(a, msg("a2"));
        let texts: Vec<String> = host
            .pending()
            .into_iter()
            .map(|(_, m)| m.joined_text())
            .collect();
        assert_eq!(texts, ["b", "a2"]);
        host.inbox_remove(b);
        assert_eq!(host.pending().len(), 1);
        // Nothing of the inbox reaches the log.
        assert!(host.events().expect("events").is_empty());
    }

    #[test]
    fn appended_batches_keep_the_typed_source_verbatim() {
        let (_tmp, host) = log_host();
        let source = TypedSource {
            baseline: true,
            baseline_identity: Some("id".into()),
            changes: Vec::new(),
        };
        host.append_batch(&[
            BatchEntry::Host("hi".to_owned()),
            BatchEntry::Workspace(WorkspaceMessage {
                parts: vec!["<system-reminder>…</system-reminder>".into()],
                source: source.clone(),
            }),
        ])
        .expect("append");
        let events = host.events().expect("events");
        assert!(
            matches!(&events[0].kind, EventKind::Message { source: None, parts, .. } if parts == &["hi"])
        );
        let EventKind::Message {
            source: Some(v), ..
        } = &events[1].kind
        else {
            panic!("workspace message not persisted with a source")
        };
        assert_eq!(v, &source.to_json());
        assert_eq!(host.visible_workspace(), [source]);
    }

    #[test]
    fn touch_prefers_read() {
        let mut config = Config::with_max_bytes(10);
        assert_eq!(
            touch_tool(&config),
            Some(("read".into(), "file_path".into()))
        );
        config.touch_tools = [("grep".to_owned(), vec!["path".to_owned()])]
            .into_iter()
            .collect();
        assert_eq!(touch_tool(&config), Some(("grep".into(), "path".into())));
        config.touch_tools.clear();
        assert_eq!(touch_tool(&config), None);
    }
}
