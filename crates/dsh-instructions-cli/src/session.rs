//! `session …` (R-CLI-3): a persisted session in
//! `<DSH_HOME>/sessions/<id>/` driven one command per process, through the
//! library's persistent host (`dsh_instructions_session`).
//!
//! Every command is a resume: it opens (and repairs) the log, mounts a fresh
//! loop instance, and leaves no turn open behind it. A session keeps the
//! configuration it was created with (`settings.json` beside its log);
//! configuration flags given to a later command override it for that
//! command, and the command says so on stderr.

use std::path::Path;
use std::process::ExitCode;

use camino::Utf8Path;
use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_runtime::{MountBuilder, RuntimeError, TouchKind, WorkspaceMessage};
use dsh_instructions_session::{
    Record, Session, SessionError, SessionSettings, SessionStore, typed_source,
};
use dsh_instructions_state::TypedSource;
use dsh_session_log::{self as slog, Event, EventKind, OpenReport};
use serde_json::Value;

use crate::args::{ConfigArgs, SessionCommand};
use crate::describe::{source_summary, tool_outcome};
use crate::error::CliError;
use crate::settings;
use crate::setup::{self, Setup};

impl From<SessionError> for CliError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Log(e) => e.into(),
            other => Self::new(other.to_string()),
        }
    }
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

/// An open session.
struct Open {
    session: Session,
}

async fn open(setup: &Setup, id: &str, flags: &ConfigArgs) -> Result<Open, CliError> {
    let store = SessionStore::for_home(&setup.home);
    let stored = store.settings(id)?;
    let given = settings::given_flags(flags);
    let input = match stored.config.clone() {
        Some(config) => {
            if !given.is_empty() {
                err!(
                    "dsh-instructions: note: overriding the configuration session {id} was created with: {}",
                    given.join(", ")
                );
            }
            settings::session_input(config, flags)?
        }
        // A session from before settings were kept: the flags and settings.yaml.
        None => setup.input.clone(),
    };
    let mut trust = stored.trust;
    trust.extend(setup::extra_roots(&setup.env, flags)?);
    let (log, report) = store.open(id)?;
    print_repairs(&report);
    let cwd = camino::Utf8PathBuf::from(log.header().cwd.clone());
    if cwd.is_absolute() {
        setup::existing_dir(&cwd, "session cwd")?;
    }
    let run_settings = SessionSettings {
        config: Some(input),
        trust,
    };
    let base = MountBuilder::default()
        .env(setup.env.clone())
        .fs(setup::disk());
    // The configuration is resolved once, in the mount; a bad flag is
    // still named as one (R-CLI-5).
    let session = Session::mount(log, run_settings.apply(base), &CancellationToken::new())
        .await
        .map_err(|e| match e {
            SessionError::Runtime(RuntimeError::Config(e)) => settings::flag_error(&e),
            other => other.into(),
        })?;
    Ok(Open { session })
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
pub(crate) fn run(cmd: SessionCommand) -> Result<ExitCode, CliError> {
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
    let settings = SessionSettings {
        config: Some(setup.input.clone()),
        trust: setup::extra_roots(&setup.env, flags)?,
    };
    SessionStore::for_home(&setup.home).create(&id, cwd, &settings)?;
    out!("{id}");
    Ok(ExitCode::SUCCESS)
}

/// A whole turn's first step: `turn_start`, the entered batch (prompt, then
/// the folded workspace message), `turn_end`.
async fn prompt(o: Open, text: String) -> Result<(), CliError> {
    let entered = o.session.prompt(text, &CancellationToken::new()).await?;
    print_message(entered.as_ref(), "entered");
    Ok(())
}

/// Records a successful read of `path` (a typed touch kept in the log,
/// whatever `touch_tools` says) and prints the pending message.
async fn touch(o: Open, path: String) -> Result<(), CliError> {
    let pending = o
        .session
        .touch(Utf8Path::new(&path), TouchKind::Read, Record::Keep)
        .await?;
    print_message(pending.as_ref(), "pending");
    Ok(())
}

/// Ends a tool step: `step_end`, then the tool-continuation pre-step enters
/// the pending workspace message alone (R-RT-1).
async fn step_end(o: Open) -> Result<(), CliError> {
    let entered = o.session.step_end(&CancellationToken::new()).await?;
    print_message(entered.as_ref(), "entered");
    Ok(())
}

/// What the next pre-step of a new loop instance would enter; writes nothing.
async fn resume(o: Open) -> Result<(), CliError> {
    let next = o.session.preview_next(&CancellationToken::new()).await?;
    print_message(next.as_ref(), "next pre-step would enter");
    Ok(())
}

/// The home holding the sessions, resolved exactly as the other session
/// commands do (`--home`, `$DSH_HOME`, `~/.dsh`, then a `dsh_home` key of
/// `settings.yaml`), so every command finds the same sessions.
fn store_only(home: Option<&Path>) -> Result<SessionStore, CliError> {
    let flags = ConfigArgs {
        home: home.map(Path::to_path_buf),
        ..ConfigArgs::default()
    };
    Ok(SessionStore::for_home(&setup::load(&flags)?.home))
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
    let (mut log, report) = store_only(home)?.open(id)?;
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
        EventKind::Touch {
            path,
            kind,
            command,
            ..
        } => match command {
            Some(command) => format!("touch {kind} {path} {command:?}"),
            None => format!("touch {kind} {path}"),
        },
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
    let store = store_only(home)?;
    if !store.exists(id)? {
        return Err(SessionError::NoSession {
            id: id.to_owned(),
            path: store.log_path(id)?,
        }
        .into());
    }
    let parsed = slog::read_log_file(&store.log_path(id)?)?;
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
    use serde_json::json;

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

    #[test]
    fn a_source_that_is_not_ours_is_not_a_baseline_to_compact() {
        let foreign = EventKind::Message {
            role: "user".into(),
            parts: vec!["x".into()],
            source: Some(json!({"kind": "other", "baseline": true})),
        };
        let events = vec![ev(1, ws(true)), ev(2, foreign)];
        assert_eq!(typed_source(&events[1]), None);
        assert_eq!(compaction_targets(&events, false, false), vec![1]);
    }
}
