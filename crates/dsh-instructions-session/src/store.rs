//! [`SessionStore`]: where persisted sessions live, and what each one keeps
//! besides its log (the settings it was created with).

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::DshHome;
use dsh_instructions_runtime::MountBuilder;
use dsh_instructions_state::ConfigInput;
use dsh_session_log::side::{self, Durability, Found};
use dsh_session_log::{
    LOG_FILE_NAME, LockWait, LogError, OpenReport, SessionHeader, SessionLock, SessionLog,
    session_dir,
};
use serde::{Deserialize, Serialize};

use crate::SessionError;

/// File name of a session's settings, beside its `session.jsonl`.
pub const SETTINGS_FILE_NAME: &str = "settings.json";

/// The configuration a session was created with, kept beside its log so
/// every later command composes under the same configuration — and so the
/// same baseline identity — unless told otherwise (R-CLI-3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    /// The configuration input (`None`: the adapter was disabled).
    #[serde(default)]
    pub config: Option<ConfigInput>,
    /// Extra trusted roots (R-DISC-7), absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trust: Vec<Utf8PathBuf>,
}

impl SessionSettings {
    /// `mount` with this session's configuration (none: disabled) and
    /// extra trusted roots, so a later process mounts under the settings
    /// the session was created with (R-CLI-3).
    ///
    /// ```
    /// use dsh_instructions_session::SessionSettings;
    /// use dsh_instructions_session::runtime::{MountBuilder, state::{ConfigInput, Preset}};
    /// let settings = SessionSettings {
    ///     config: Some(ConfigInput { preset: Some(Preset::Codex), ..Default::default() }),
    ///     trust: vec!["/opt/rules".into()],
    /// };
    /// let mount = settings.apply(MountBuilder::default());
    /// assert!(format!("{mount:?}").contains("/opt/rules"));
    /// ```
    #[must_use]
    pub fn apply(&self, mount: MountBuilder) -> MountBuilder {
        let mount = match &self.config {
            Some(input) => mount.config(input.clone()),
            None => mount.disabled(),
        };
        mount.trust(self.trust.iter().cloned())
    }
}

/// A directory of sessions, one sub-directory per session id:
/// `<dir>/<id>/session.jsonl` and `<dir>/<id>/settings.json`.
///
/// ```
/// use dsh_instructions_session::{SessionSettings, SessionStore};
/// let tmp = tempfile::tempdir()?;
/// let store = SessionStore::new(camino::Utf8Path::from_path(tmp.path()).unwrap());
/// store.create("s1", "/work/repo".into(), &SessionSettings::default())?;
/// assert!(store.exists("s1")?);
/// assert_eq!(store.settings("s1")?, SessionSettings::default());
/// assert!(store.log_path("../escape").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: Utf8PathBuf,
    wait: LockWait,
}

impl SessionStore {
    /// A store rooted at `dir` (created on the first session).
    pub fn new(dir: impl Into<Utf8PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            wait: LockWait::default(),
        }
    }

    /// The same store, waiting at most `wait` for a session's lock
    /// (R-LOG-4); the default is [`LockWait::default`].
    pub fn with_lock_wait(mut self, wait: LockWait) -> Self {
        self.wait = wait;
        self
    }

    /// The CLI's store: `<DSH home>/sessions`.
    pub fn for_home(home: &DshHome) -> Self {
        Self::new(home.sessions_dir())
    }

    /// The store's directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// The log file of session `id`.
    ///
    /// # Errors
    /// [`SessionError::Log`] with `InvalidSessionId` unless `id` is one plain
    /// path component, so an id can never name a file outside the store.
    pub fn log_path(&self, id: &str) -> Result<Utf8PathBuf, SessionError> {
        Ok(session_dir(&self.dir, id)?.join(LOG_FILE_NAME))
    }

    /// Whether session `id` has a log.
    ///
    /// # Errors
    /// An invalid id; a failure other than "not found" while checking.
    pub fn exists(&self, id: &str) -> Result<bool, SessionError> {
        let path = self.log_path(id)?;
        match std::fs::symlink_metadata(&path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(SessionError::Log(LogError::Io {
                op: "stat",
                path,
                source,
            })),
        }
    }

    /// Creates session `id` in `cwd` with `settings`: the settings file
    /// first, then the log atomically (R-LOG-2), so a log never exists
    /// without its settings.
    ///
    /// # Errors
    /// [`SessionError::Log`] (`AlreadyExists` when the log is there);
    /// [`SessionError::Settings`] when the settings cannot be written.
    pub fn create(
        &self,
        id: &str,
        cwd: Utf8PathBuf,
        settings: &SessionSettings,
    ) -> Result<SessionLog, SessionError> {
        let dir = session_dir(&self.dir, id)?;
        if self.exists(id)? {
            return Err(SessionError::Log(LogError::AlreadyExists {
                path: dir.join(LOG_FILE_NAME),
            }));
        }
        std::fs::create_dir_all(&dir).map_err(|e| settings_error(&dir, e))?;
        write_settings(&dir.join(SETTINGS_FILE_NAME), settings)?;
        Ok(SessionLog::create_locked(
            &dir,
            SessionHeader::new(id, cwd.into_string()),
            self.wait,
        )?)
    }

    /// Opens session `id` for writing (repairing a torn tail, R-LOG-2).
    ///
    /// # Errors
    /// [`SessionError::NoSession`] when it does not exist; log errors.
    pub fn open(&self, id: &str) -> Result<(SessionLog, OpenReport), SessionError> {
        Ok(SessionLog::open_locked(&self.existing_log(id)?, self.wait)?)
    }

    /// The log of session `id`, which must exist.
    fn existing_log(&self, id: &str) -> Result<Utf8PathBuf, SessionError> {
        let path = self.log_path(id)?;
        if self.exists(id)? {
            Ok(path)
        } else {
            Err(SessionError::NoSession {
                id: id.to_owned(),
                path,
            })
        }
    }

    /// Takes the lock of session `id` without reading its log: for a
    /// writer that may find nothing to do under it. Open the log under it
    /// with [`SessionLog::open_held`].
    ///
    /// ```
    /// use dsh_instructions_session::{SessionSettings, SessionStore};
    /// use dsh_session_log::SessionLog;
    /// let tmp = tempfile::tempdir()?;
    /// let store = SessionStore::new(camino::Utf8Path::from_path(tmp.path()).unwrap());
    /// drop(store.create("s1", "/w".into(), &SessionSettings::default())?);
    /// let held = store.lock("s1")?;
    /// let (log, _report) = SessionLog::open_held(held)?;
    /// assert_eq!(log.header().id, "s1");
    /// assert!(store.lock("nope").is_err(), "no such session");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SessionError::NoSession`] when it does not exist; lock errors.
    pub fn lock(&self, id: &str) -> Result<SessionLock, SessionError> {
        Ok(SessionLock::acquire(&self.existing_log(id)?, self.wait)?)
    }

    /// The settings session `id` was created with; a session created before
    /// settings were kept has none (the defaults).
    ///
    /// # Errors
    /// [`SessionError::Settings`] for an unreadable or malformed file.
    pub fn settings(&self, id: &str) -> Result<SessionSettings, SessionError> {
        let path = session_dir(&self.dir, id)?.join(SETTINGS_FILE_NAME);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| SessionError::Settings {
                path,
                reason: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SessionSettings::default()),
            Err(e) => Err(settings_error(&path, e)),
        }
    }
}

fn settings_error(path: &Utf8Path, e: std::io::Error) -> SessionError {
    SessionError::Settings {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

impl SessionStore {
    /// The settings session `id` was created with, as
    /// [`SessionStore::settings`] reads them — but a file that is missing,
    /// unusable or not settings (empty, torn, foreign bytes, other JSON, a
    /// directory or a dangling link in its place), or settings the caller
    /// finds not `usable` (a hook session always has a configuration), is
    /// rebuilt from
    /// `authority` (what the caller's own configuration says the session
    /// was created with): the damaged file is set aside, `authority` is
    /// written in its place (durably) and the rebuild is reported
    /// ([`dsh_session_log::side::report`]). Call it while holding the
    /// session's lock.
    ///
    /// # Errors
    /// An invalid id. A rebuilt file that cannot be written is reported, and
    /// `authority` returned all the same.
    ///
    /// ```
    /// use dsh_instructions_session::{SessionSettings, SessionStore};
    /// let tmp = tempfile::tempdir()?;
    /// let store = SessionStore::new(camino::Utf8Path::from_path(tmp.path()).unwrap());
    /// store.create("s1", "/work/repo".into(), &SessionSettings::default())?;
    /// std::fs::write(tmp.path().join("s1/settings.json"), "{\"conf")?;
    /// let authority = SessionSettings { trust: vec!["/opt".into()], ..Default::default() };
    /// assert_eq!(store.settings_or_rebuild("s1", &authority, |_| true)?, authority);
    /// assert_eq!(store.settings("s1")?, authority);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn settings_or_rebuild(
        &self,
        id: &str,
        authority: &SessionSettings,
        usable: impl FnOnce(&SessionSettings) -> bool,
    ) -> Result<SessionSettings, SessionError> {
        let path = session_dir(&self.dir, id)?.join(SETTINGS_FILE_NAME);
        let damage = match side::read(&path) {
            // Serde reads a struct of defaults from `[]`: only an object is
            // settings.
            Found::Bytes(bytes) if !bytes.trim_ascii_start().starts_with(b"{") => {
                if bytes.is_empty() {
                    "empty".to_owned()
                } else {
                    "not a JSON object".to_owned()
                }
            }
            Found::Bytes(bytes) => match serde_json::from_slice::<SessionSettings>(&bytes) {
                Ok(settings) if usable(&settings) => return Ok(settings),
                Ok(_) => "settings without a configuration".to_owned(),
                Err(e) => format!("not settings ({e})"),
            },
            Found::Missing => "missing".to_owned(),
            Found::Damaged(damage) => damage,
        };
        // The damaged bytes are kept beside it, not lost.
        let aside = match side::read(&path) {
            Found::Missing => None,
            _ => side::set_aside(&path).ok(),
        };
        let kept = aside.map_or_else(String::new, |a| {
            format!(
                " (the damaged one kept as {})",
                a.file_name().unwrap_or("?")
            )
        });
        let rebuilt = match write_settings(&path, authority) {
            Ok(()) => format!("rebuilt from the configuration{kept}"),
            // The session goes on under the configuration all the same; the
            // next event tries the write again.
            Err(e) => format!("used from the configuration, but not rewritten: {e}"),
        };
        side::report(&path, &damage, &rebuilt);
        Ok(authority.clone())
    }
}

/// Written atomically and durably (the session's configuration must
/// survive a crash), so a reader never sees half a file.
fn write_settings(path: &Utf8Path, settings: &SessionSettings) -> Result<(), SessionError> {
    let json = serde_json::to_vec_pretty(settings).map_err(|e| SessionError::Settings {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    side::write(path, &json, Durability::Crash).map_err(|e| settings_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::{Preset, config::NumberInput};

    fn store() -> (tempfile::TempDir, SessionStore) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8Path::from_path(tmp.path()).expect("utf-8").to_owned();
        (tmp, SessionStore::new(dir))
    }

    #[test]
    fn settings_round_trip_and_a_second_create_is_refused() {
        let (_tmp, store) = store();
        let settings = SessionSettings {
            config: Some(ConfigInput {
                preset: Some(Preset::Claude),
                max_bytes: Some(NumberInput::Int(9000)),
                ..ConfigInput::default()
            }),
            trust: vec!["/opt/rules".into()],
        };
        store.create("a", "/w".into(), &settings).expect("created");
        assert_eq!(store.settings("a").expect("read"), settings);
        let again = store.create("a", "/w".into(), &SessionSettings::default());
        assert!(matches!(
            again,
            Err(SessionError::Log(LogError::AlreadyExists { .. }))
        ));
        assert_eq!(store.settings("a").expect("read"), settings, "kept");
    }

    #[test]
    fn a_missing_session_and_malformed_settings_are_typed_errors() {
        let (_tmp, store) = store();
        assert!(matches!(
            store.open("nope"),
            Err(SessionError::NoSession { .. })
        ));
        store
            .create("b", "/w".into(), &SessionSettings::default())
            .expect("created");
        let path = store.dir().join("b").join(SETTINGS_FILE_NAME);
        std::fs::write(&path, "{\"config\": 5").expect("write");
        let err = store.settings("b").expect_err("malformed");
        assert!(err.to_string().contains("settings.json"), "{err}");
    }

    #[test]
    fn settings_of_an_old_session_default() {
        let (_tmp, store) = store();
        store
            .create("c", "/w".into(), &SessionSettings::default())
            .expect("created");
        std::fs::remove_file(store.dir().join("c").join(SETTINGS_FILE_NAME)).expect("rm");
        assert_eq!(
            store.settings("c").expect("read"),
            SessionSettings::default()
        );
    }
}
