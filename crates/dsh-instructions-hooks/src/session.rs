//! Stage 3, session: the agent session's store below the agent's
//! directory (its id made one safe path component, [`store_id`]; a store an
//! earlier version kept elsewhere adopted), its log opened under the
//! session lock or created with the configuration (R-HOOK-2, R-LOG-4) —
//! and, when a peer holds the lock past the bound, this event's touches
//! kept for the next invocation instead of lost.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_session::{SessionError, SessionSettings, SessionStore};
use dsh_instructions_state::{ConfigInput, Digest};
use dsh_session_log::{LockWait, LogError, SessionLock, SessionLog};

use crate::config::CONFIG_FILE_NAME;
use crate::event::{Action, HookEvent};
use crate::hooklog::{LOG_FILE_NAME, OLD_LOG_FILE_NAME};
use dsh_instructions_runtime::tool_args::TouchedPath;

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

/// The agent's session stores: `sessions/` below its directory, apart from
/// the adapter's `config.json` and `hook.log` (R-HOOK-10, the same place as
/// [`crate::agents::sessions_dir`]).
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

/// The agent session of one event, its log open under the lock.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The session's log, holding the session lock until dropped.
    pub(crate) log: SessionLog,
    /// The settings the session was created with (or rebuilt from).
    pub(crate) settings: SessionSettings,
    /// Whether this event created the session.
    pub(crate) fresh: bool,
}

/// The agent session of one event under its lock, its log not read yet: a
/// `--part K` whose peer already composed the event answers from the
/// record without it (R-HOOK-6: at 1,000 known directories reading the
/// log's checkpoint is most of such a part's work).
#[derive(Debug)]
pub(crate) struct Locked {
    store: SessionStore,
    id: String,
    held: Held,
    /// The event starts a loop instance (its version cache starts empty).
    start: bool,
    /// The session's directory, for its side files.
    pub(crate) session_dir: Utf8PathBuf,
}

/// What [`Locked`] holds.
#[derive(Debug)]
enum Held {
    /// The event created the session: its new log and settings.
    Created(Box<(SessionLog, SessionSettings)>),
    /// The lock of an existing session.
    Lock(SessionLock),
}

impl Locked {
    /// Opens the log under the held lock (repairing it, R-LOG-2) with the
    /// session's settings (rebuilt from `input` when damaged). A session
    /// start forgets the version cache first: it is a new loop instance
    /// in the agent (startup, resume, clear, compact), whose cache starts
    /// empty (R-STATE-8); the events after it share what it read
    /// (decision 0036). Without the file every known file is read once
    /// more.
    ///
    /// # Errors
    /// The log's and the settings' errors.
    pub(crate) fn open(self, input: &ConfigInput) -> Result<Opened, SessionError> {
        let (log, settings, fresh) = match self.held {
            Held::Created(created) => {
                let (log, settings) = *created;
                (log, settings, true)
            }
            Held::Lock(lock) => {
                let (log, _report) = SessionLog::open_held(lock)?;
                let settings = crate::heal::settings(&self.store, &self.id, input)?;
                (log, settings, false)
            }
        };
        if self.start {
            let _ = dsh_instructions_session::forget_versions(&self.session_dir);
        }
        Ok(Opened {
            log,
            settings,
            fresh,
        })
    }
}

/// What locking the event's session came to.
#[derive(Debug)]
pub(crate) enum Opening {
    /// Locked (or created, and so locked).
    Open(Box<Locked>),
    /// A peer held the lock past the bound: the log's reason, the event's
    /// touches deferred (or why they are lost).
    Busy(String),
}

/// Locks (or creates, with `input`) the session of `event` in the stores
/// below `agent_dir`; [`Locked::open`] reads its log.
///
/// # Errors
/// The store's errors other than a lock held past the bound.
pub(crate) fn open(
    agent_dir: &Utf8Path,
    event: &HookEvent,
    input: &ConfigInput,
) -> Result<Opening, SessionError> {
    let sessions = sessions_dir(agent_dir);
    let store = SessionStore::new(sessions.clone()).with_lock_wait(LockWait::up_to(lock_wait()));
    let id = store_id(&event.session_id);
    adopt_old_store(agent_dir, &sessions, &id);
    let session_dir = dsh_session_log::session_dir(store.dir(), &id).map_err(SessionError::from)?;
    let held = match lock_or_create(&store, &id, &event.cwd, input) {
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
            return Ok(Opening::Busy(why));
        }
        other => other?,
    };
    Ok(Opening::Open(Box::new(Locked {
        store,
        id,
        held,
        start: matches!(event.action, Action::Start(_)),
        session_dir,
    })))
}

/// What of `event` a busy session keeps for later ([`crate::deferred`]).
fn deferrable(event: &HookEvent) -> Vec<TouchedPath> {
    match &event.action {
        Action::Tool { touched, .. } => touched.clone(),
        Action::Shell { command, .. } => vec![TouchedPath {
            path: event.cwd.to_string(),
            kind: dsh_instructions_runtime::TouchKind::Shell {
                command: command.clone(),
            },
        }],
        _ => Vec::new(),
    }
}

/// Takes the session's lock, creating the session (with `input` as its
/// settings and `cwd` from this first event, R-HOOK-2) when it is new. Two
/// first invocations racing to create: the loser locks the winner's.
fn lock_or_create(
    store: &SessionStore,
    id: &str,
    cwd: &Utf8Path,
    input: &ConfigInput,
) -> Result<Held, SessionError> {
    if !store.exists(id)? {
        let settings = SessionSettings {
            config: Some(input.clone()),
            trust: Vec::new(),
        };
        match store.create(id, cwd.to_owned(), &settings) {
            Ok(log) => return Ok(Held::Created(Box::new((log, settings)))),
            Err(SessionError::Log(LogError::AlreadyExists { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Held::Lock(store.lock(id)?))
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

    fn event(id: &str, cwd: &Utf8Path, name: &str) -> HookEvent {
        let v = serde_json::json!({
            "hook_event_name": name, "session_id": id, "cwd": cwd, "source": "startup",
        });
        crate::event::HookEvent::parse(
            crate::Agent::Codex,
            v.to_string().as_bytes(),
            &crate::event::default_tools(crate::Agent::Codex),
        )
        .expect("event")
    }

    use crate::testdir::tmp_dir;

    /// The first event creates the session with the configuration; the
    /// next opens it, not fresh, with the settings it was created with.
    #[test]
    fn the_first_event_creates_the_next_opens() {
        let (_tmp, dir) = tmp_dir();
        let input = crate::config::hook_preset(crate::Agent::Codex);
        let e = event("s1", &dir, "SessionStart");
        let Opening::Open(first) = open(&dir, &e, &input).expect("open") else {
            panic!("busy")
        };
        assert_eq!(first.session_dir, dir.join("sessions/s1"));
        let first = first.open(&input).expect("log");
        assert!(first.fresh);
        assert_eq!(first.settings.config.as_ref(), Some(&input));
        drop(first);
        let Opening::Open(second) = open(&dir, &e, &ConfigInput::default()).expect("open") else {
            panic!("busy")
        };
        let second = second.open(&ConfigInput::default()).expect("log");
        assert!(!second.fresh);
        assert_eq!(second.settings.config.as_ref(), Some(&input), "as created");
    }

    /// A session an earlier version kept in the agent's directory moves
    /// into `sessions/` and goes on.
    #[test]
    fn an_old_store_is_adopted() {
        let (_tmp, dir) = tmp_dir();
        let input = crate::config::hook_preset(crate::Agent::Codex);
        let e = event("old", &dir, "SessionStart");
        let Opening::Open(o) = open(&dir, &e, &input).expect("open") else {
            panic!("busy")
        };
        drop(o);
        std::fs::rename(dir.join("sessions/old"), dir.join("old")).expect("move back");
        let Opening::Open(o) = open(&dir, &e, &input).expect("open") else {
            panic!("busy")
        };
        assert!(!o.open(&input).expect("log").fresh, "the old log goes on");
        assert!(!dir.join("old").exists());
    }
}
