//! What each call of the Node API does, in plain Rust over the facade: the
//! production path of `dsh-agent-instructions` and nothing else (R-NODE-1).
//! Arguments are checked here, before anything touches the disk, so bad
//! input is an error naming its path or field (R-NODE-3). `js.rs` only
//! converts values and promises.

use dsh_agent_instructions::fs::{Utf8Path, Utf8PathBuf};
use dsh_agent_instructions::log::LockWait;
use dsh_agent_instructions::report::{Inspection, Preview};
use dsh_agent_instructions::{
    CancellationToken, CapStdFactory, ConfigInput, HomeEnv, MountBuilder, Record, Session,
    SessionSettings, SessionStore, TouchKind, WorkspaceMessage, ambient_authority,
};

use crate::error::{Code, Failure};

/// The environment variables a mount reads (R-HOME): given by the caller,
/// or the process's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EnvInput {
    /// `HOME`.
    pub(crate) home: Option<String>,
    /// `DSH_HOME`.
    pub(crate) dsh_home: Option<String>,
}

impl EnvInput {
    /// Given variables replace the process's `HOME` and `DSH_HOME` whole (an
    /// absent key is unset), so a product that passes an environment gets
    /// exactly it; `None` reads the process.
    pub(crate) fn home_env(given: Option<&Self>) -> Result<HomeEnv, Failure> {
        let process = HomeEnv::from_process().map_err(|e| {
            Failure::new(
                Code::Home,
                format!("cannot read the current directory: {e}"),
            )
        })?;
        let Some(given) = given else {
            return Ok(process);
        };
        for (field, value) in [("env.HOME", &given.home), ("env.DSH_HOME", &given.dsh_home)] {
            if let Some(v) = value {
                no_nul(field, v)?;
            }
        }
        Ok(HomeEnv {
            home: given.home.clone().map(Into::into),
            dsh_home: given.dsh_home.clone().map(Into::into),
            ..process
        })
    }
}

fn no_nul(field: &str, value: &str) -> Result<(), Failure> {
    if value.contains('\0') {
        return Err(
            Failure::new(Code::Nul, format!("{field} holds a NUL character")).with_field(field),
        );
    }
    Ok(())
}

/// An absolute path without NUL.
pub(crate) fn absolute(field: &str, path: &str) -> Result<Utf8PathBuf, Failure> {
    no_nul(field, path)?;
    let p = Utf8PathBuf::from(path);
    if !p.is_absolute() {
        return Err(Failure::new(
            Code::RelativePath,
            format!("{field} must be an absolute path, got {path:?}"),
        )
        .with_path(path)
        .with_field(field));
    }
    Ok(p)
}

/// A session or mount cwd: absolute, and an existing directory.
pub(crate) fn cwd(path: &str) -> Result<Utf8PathBuf, Failure> {
    let p = absolute("cwd", path)?;
    match std::fs::metadata(&p) {
        Ok(m) if m.is_dir() => Ok(p),
        Ok(_) => Err(
            Failure::new(Code::MissingCwd, format!("cwd {p} is not a directory"))
                .with_path(p.as_str())
                .with_field("cwd"),
        ),
        Err(e) => Err(Failure::new(Code::MissingCwd, format!("cwd {p}: {e}"))
            .with_path(p.as_str())
            .with_field("cwd")),
    }
}

/// The configuration a call gives: the keys of `settings.yaml` (snake_case,
/// SPEC §3) as an object, a `preset` shorthand, extra trusted roots.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConfigArgs {
    pub(crate) config: Option<serde_json::Map<String, serde_json::Value>>,
    pub(crate) preset: Option<String>,
    pub(crate) trust: Vec<String>,
}

impl ConfigArgs {
    /// Checked settings: each key of the object alone first, so an unknown
    /// key or a wrong value names its field, then the whole resolved the
    /// way a mount resolves it. No `config` and no `preset` is the `dsh`
    /// preset (the project's defaults).
    pub(crate) fn settings(&self) -> Result<SessionSettings, Failure> {
        let mut object = self.config.clone().unwrap_or_default();
        for (key, value) in &object {
            let one =
                serde_json::Value::Object(std::iter::once((key.clone(), value.clone())).collect());
            if let Err(e) = serde_json::from_value::<ConfigInput>(one) {
                let text = e.to_string();
                let message = if text.starts_with("unknown field") {
                    format!("unknown configuration key {key:?}")
                } else {
                    format!("configuration key {key:?}: {text}")
                };
                return Err(Failure::new(Code::Config, message).with_field(key.as_str()));
            }
        }
        if let Some(preset) = &self.preset {
            match object.get("preset") {
                Some(serde_json::Value::String(p)) if p != preset => {
                    return Err(Failure::new(
                        Code::Config,
                        format!("preset {preset:?} and config.preset {p:?} disagree"),
                    )
                    .with_field("preset"));
                }
                _ => {
                    object.insert("preset".into(), preset.clone().into());
                }
            }
        }
        if object.is_empty() {
            object.insert("preset".into(), "dsh".into());
        }
        let input: ConfigInput = serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|e| Failure::new(Code::Config, e.to_string()).with_field("preset"))?;
        input.resolve().map_err(Failure::from)?;
        let trust = self
            .trust
            .iter()
            .map(|t| absolute("trust", t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SessionSettings {
            config: Some(input),
            trust,
        })
    }
}

/// A touch's kind by its Rust name; `command` is a shell touch's command
/// line.
pub(crate) fn touch_kind(kind: &str, command: Option<String>) -> Result<TouchKind, Failure> {
    let bad = |m: String| Failure::new(Code::InvalidArgument, m);
    let kind = match (kind, command) {
        ("read", None) => TouchKind::Read,
        ("write", None) => TouchKind::Write,
        ("list", None) => TouchKind::List,
        ("search", None) => TouchKind::Search,
        ("shell", Some(command)) => {
            no_nul("command", &command)?;
            TouchKind::Shell { command }
        }
        ("shell", None) => {
            return Err(bad("a shell touch needs options.command".into()).with_field("command"));
        }
        ("read" | "write" | "list" | "search", Some(_)) => {
            return Err(
                bad(format!("only a shell touch takes a command, not {kind:?}"))
                    .with_field("command"),
            );
        }
        (other, _) => {
            return Err(bad(format!(
                "touch kind must be read, write, list, search or shell, got {other:?}"
            ))
            .with_field("kind"));
        }
    };
    Ok(kind)
}

/// Whether a touch is kept in the log.
pub(crate) fn record(name: Option<&str>) -> Result<Record, Failure> {
    match name {
        None | Some("keep") => Ok(Record::Keep),
        Some("transient") => Ok(Record::Transient),
        Some(other) => Err(Failure::new(
            Code::InvalidArgument,
            format!("record must be keep or transient, got {other:?}"),
        )
        .with_field("record")),
    }
}

/// A session store and the environment its sessions mount with.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    pub(crate) store: SessionStore,
    pub(crate) env: Option<EnvInput>,
}

impl Store {
    /// A store at `dir`, or at `<DSH home>/sessions` of the environment.
    pub(crate) async fn new(
        dir: Option<String>,
        env: Option<EnvInput>,
        lock_wait_ms: Option<u32>,
    ) -> Result<Self, Failure> {
        let dir = match dir {
            Some(d) => absolute("dir", &d)?,
            None => {
                let home_env = EnvInput::home_env(env.as_ref())?;
                MountBuilder::new("/")
                    .env(home_env)
                    .disabled()
                    .open(&CancellationToken::new())
                    .await
                    .map_err(Failure::from)?
                    .home()
                    .sessions_dir()
            }
        };
        let mut store = SessionStore::new(dir);
        if let Some(ms) = lock_wait_ms {
            store = store.with_lock_wait(LockWait::up_to(std::time::Duration::from_millis(
                u64::from(ms),
            )));
        }
        Ok(Self { store, env })
    }

    fn mount_base(&self) -> Result<MountBuilder, Failure> {
        Ok(MountBuilder::default()
            .env(EnvInput::home_env(self.env.as_ref())?)
            .fs(CapStdFactory::new(ambient_authority())))
    }

    /// Creates session `id` (a new id when none) at `cwd` and mounts it.
    pub(crate) async fn create(
        &self,
        id: Option<String>,
        cwd_arg: String,
        args: ConfigArgs,
        cancel: CancellationToken,
    ) -> Result<Live, Failure> {
        let cwd = cwd(&cwd_arg)?;
        let settings = args.settings()?;
        let id = match id {
            Some(id) => {
                no_nul("id", &id)?;
                id
            }
            None => dsh_agent_instructions::log::new_session_id(),
        };
        let base = self.mount_base()?;
        let store = self.store.clone();
        let (sid, s) = (id.clone(), settings.clone());
        // Creating takes the session lock, which may wait: not on a worker.
        let log = blocking(move || store.create(&sid, cwd, &s).map_err(Failure::from)).await?;
        let session = Session::mount(log, settings.apply(base), &cancel)
            .await
            .map_err(Failure::from)?;
        Ok(Live::new(id, session))
    }

    /// Opens (resumes) session `id` under the settings it was created with.
    pub(crate) async fn open(
        &self,
        id: String,
        cancel: CancellationToken,
    ) -> Result<Live, Failure> {
        no_nul("id", &id)?;
        let base = self.mount_base()?;
        let store = self.store.clone();
        let sid = id.clone();
        let (log, settings) = blocking(move || {
            let settings = store.settings(&sid).map_err(Failure::from)?;
            let (log, _report) = store.open(&sid).map_err(Failure::from)?;
            Ok((log, settings))
        })
        .await?;
        let session = Session::mount(log, settings.apply(base), &cancel)
            .await
            .map_err(Failure::from)?;
        Ok(Live::new(id, session))
    }

    /// Whether session `id` exists.
    pub(crate) async fn exists(&self, id: String) -> Result<bool, Failure> {
        no_nul("id", &id)?;
        let store = self.store.clone();
        blocking(move || store.exists(&id).map_err(Failure::from)).await
    }
}

/// Runs blocking filesystem work on the runtime's blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(Failure::new(Code::Panic, format!("a panic: {e}"))))
}

/// An open session: what the line of calls ([`crate::queue::Serial`]) holds.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) id: String,
    pub(crate) cwd: String,
    pub(crate) session: Session,
    /// The runtime it was mounted on (its lane runs there).
    pub(crate) runtime: Option<tokio::runtime::Handle>,
}

impl Live {
    fn new(id: String, session: Session) -> Self {
        let cwd = session.opened().cwd().to_string();
        Self {
            id,
            cwd,
            session,
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    pub(crate) async fn prompt(
        &self,
        text: String,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, Failure> {
        self.session
            .prompt(text, cancel)
            .await
            .map_err(Failure::from)
    }

    /// A touch; an abort stops the wait for its projection, which the
    /// session's lane still finishes (a touch is the session's state, not
    /// the call's: its nested file stays pending, R-DISC-8).
    pub(crate) async fn touch(
        &self,
        path: &Utf8Path,
        kind: TouchKind,
        record: Record,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, Failure> {
        tokio::select! {
            biased;
            r = self.session.touch(path, kind, record) => r.map_err(Failure::from),
            () = cancel.cancelled() => Err(Failure::aborted()),
        }
    }

    pub(crate) async fn step_end(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, Failure> {
        self.session.step_end(cancel).await.map_err(Failure::from)
    }

    pub(crate) fn compact_workspace(&self) -> Result<Vec<u64>, Failure> {
        self.session.compact_workspace().map_err(Failure::from)
    }

    pub(crate) fn pending(&self) -> Option<WorkspaceMessage> {
        self.session.pending()
    }

    pub(crate) async fn preview_next(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<WorkspaceMessage>, Failure> {
        self.session
            .preview_next(cancel)
            .await
            .map_err(Failure::from)
    }
}

/// `explain` and `preview` for a cwd, without a session.
pub(crate) async fn opened(
    cwd_arg: String,
    args: ConfigArgs,
    env: Option<EnvInput>,
    cancel: &CancellationToken,
) -> Result<dsh_agent_instructions::Opened, Failure> {
    let cwd = cwd(&cwd_arg)?;
    let settings = args.settings()?;
    let base = MountBuilder::new(cwd)
        .env(EnvInput::home_env(env.as_ref())?)
        .fs(CapStdFactory::new(ambient_authority()));
    settings
        .apply(base)
        .open(cancel)
        .await
        .map_err(Failure::from)
}

pub(crate) async fn explain(
    cwd: String,
    args: ConfigArgs,
    env: Option<EnvInput>,
    cancel: CancellationToken,
) -> Result<Inspection, Failure> {
    let opened = opened(cwd, args, env, &cancel).await?;
    opened.inspect(&cancel).await.map_err(Failure::from)
}

pub(crate) async fn preview(
    cwd: String,
    args: ConfigArgs,
    env: Option<EnvInput>,
    cancel: CancellationToken,
) -> Result<Preview, Failure> {
    let opened = opened(cwd, args, env, &cancel).await?;
    opened.preview(&cancel).await.map_err(Failure::from)
}

/// A configuration object of these pairs.
#[cfg(test)]
fn config(pairs: &[(&str, serde_json::Value)]) -> ConfigArgs {
    ConfigArgs {
        config: Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        ),
        ..ConfigArgs::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::unknown_key(&[("max_byts", json!(1000))], "max_byts", "unknown configuration key")]
    #[case::wrong_type(&[("max_bytes", json!("lots"))], "max_bytes", "max_bytes")]
    #[case::unknown_preset(&[("preset", json!("vim"))], "preset", "vim")]
    fn a_bad_configuration_names_its_field(
        #[case] pairs: &[(&str, serde_json::Value)],
        #[case] field: &str,
        #[case] says: &str,
    ) {
        let e = config(pairs).settings().expect_err("refused");
        assert_eq!(e.code, Code::Config);
        assert_eq!(e.field.as_deref(), Some(field));
        assert!(e.message.contains(says), "{}", e.message);
    }

    #[test]
    fn no_configuration_is_the_dsh_preset_and_a_preset_fills_it() {
        let none = ConfigArgs::default().settings().expect("defaults");
        assert_eq!(
            none.config.and_then(|c| c.preset),
            Some(dsh_agent_instructions::Preset::Dsh)
        );
        let args = ConfigArgs {
            preset: Some("codex".into()),
            ..config(&[("max_bytes", json!(1000))])
        };
        let s = args.settings().expect("valid");
        let input = s.config.expect("config");
        assert_eq!(input.preset, Some(dsh_agent_instructions::Preset::Codex));
        assert!(input.max_bytes.is_some());
    }

    #[test]
    fn a_preset_that_disagrees_with_the_config_is_refused() {
        let args = ConfigArgs {
            preset: Some("codex".into()),
            ..config(&[("preset", json!("claude"))])
        };
        assert_eq!(
            args.settings().expect_err("refused").field.as_deref(),
            Some("preset")
        );
    }

    #[rstest]
    #[case::relative("repo/pkg", Code::RelativePath)]
    #[case::nul("/tmp/a\0b", Code::Nul)]
    #[case::missing("/no/such/dir/anywhere", Code::MissingCwd)]
    fn a_bad_cwd_is_refused_with_its_code(#[case] path: &str, #[case] code: Code) {
        let e = cwd(path).expect_err("refused");
        assert_eq!(e.code, code);
        assert!(e.path.is_some() || e.field.is_some(), "{e:?}");
    }

    #[test]
    fn a_file_is_no_cwd() {
        let tmp = tempfile::NamedTempFile::new().expect("file");
        let e = cwd(tmp.path().to_str().expect("utf-8")).expect_err("refused");
        assert_eq!(e.code, Code::MissingCwd);
    }

    #[rstest]
    #[case::unknown("edit", None, "kind")]
    #[case::shell_without_command("shell", None, "command")]
    #[case::command_on_a_read("read", Some("cat x"), "command")]
    fn a_bad_touch_names_its_field(
        #[case] kind: &str,
        #[case] command: Option<&str>,
        #[case] field: &str,
    ) {
        let e = touch_kind(kind, command.map(str::to_owned)).expect_err("refused");
        assert_eq!(
            (e.code, e.field.as_deref()),
            (Code::InvalidArgument, Some(field))
        );
    }

    #[test]
    fn a_shell_touch_keeps_its_command() {
        assert_eq!(
            touch_kind("shell", Some("cat a.rs".into())).expect("valid"),
            TouchKind::Shell {
                command: "cat a.rs".into()
            }
        );
    }

    #[test]
    fn a_given_environment_replaces_home_and_dsh_home_whole() {
        let given = EnvInput {
            home: Some("/home/u".into()),
            dsh_home: None,
        };
        let env = EnvInput::home_env(Some(&given)).expect("env");
        assert_eq!(env.home.as_deref(), Some(std::ffi::OsStr::new("/home/u")));
        assert_eq!(env.dsh_home, None);
        let nul = EnvInput {
            home: Some("/a\0".into()),
            dsh_home: None,
        };
        assert_eq!(
            EnvInput::home_env(Some(&nul))
                .expect_err("NUL")
                .field
                .as_deref(),
            Some("env.HOME")
        );
    }
}
