//! Turning flags, environment and settings into what the libraries need:
//! a validated configuration, the DSH home, the cwd, and a cap-std provider
//! opened on the trusted roots.

use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeEnv, normalize_lexically, resolve_dsh_home};
use dsh_instructions_discovery::{CancellationToken, cap_std::ambient_authority};
use dsh_instructions_runtime::{CapStdFactory, MountBuilder, Opened};
use dsh_instructions_state::{Config, ConfigInput};

use crate::args::ConfigArgs;
use crate::error::CliError;
use crate::settings;

/// The resolved environment of one command.
#[derive(Debug)]
pub(crate) struct Setup {
    /// The process environment slice home resolution reads.
    pub env: HomeEnv,
    /// The validated configuration.
    pub config: Config,
    /// The input it was validated from (what a session keeps, R-RT-11).
    pub input: ConfigInput,
    /// The DSH home (user-global file, sessions).
    pub home: DshHome,
    /// Ignored list entries (already printed on stderr), for JSON output.
    pub warnings: Vec<String>,
}

fn utf8<'a>(path: &'a Path, what: &str) -> Result<&'a Utf8Path, CliError> {
    Utf8Path::from_path(path)
        .ok_or_else(|| CliError::new(format!("{what} is not valid UTF-8: {}", path.display())))
}

/// The process environment, with a UTF-8 cwd check (R-HOME-5).
pub(crate) fn process_env() -> Result<HomeEnv, CliError> {
    HomeEnv::from_process()
        .map_err(|e| CliError::new(format!("cannot determine the current directory: {e}")))
}

/// `path` made absolute against the process cwd and normalized lexically.
pub(crate) fn absolute(env: &HomeEnv, path: &Path, what: &str) -> Result<Utf8PathBuf, CliError> {
    let path = utf8(path, what)?;
    if path.is_absolute() {
        Ok(normalize_lexically(path))
    } else {
        Ok(normalize_lexically(&env.utf8_cwd()?.join(path)))
    }
}

/// The DSH home a command starts from: `--home`, else `$DSH_HOME`, else
/// `~/.dsh` (R-HOME-1). It locates `settings.yaml` and the sessions.
pub(crate) fn flag_home(env: &HomeEnv, home: Option<&Path>) -> Result<DshHome, CliError> {
    let explicit = home.map(|h| utf8(h, "--home")).transpose()?;
    Ok(resolve_dsh_home(explicit.map(Utf8Path::as_str), env)?)
}

/// Reads `settings.yaml` from the home given by `--home`/`$DSH_HOME`/`~/.dsh`,
/// overlays the flags and resolves the final home: a `dsh_home` key in the
/// file moves the home for instructions and sessions unless `--home` is given
/// (the file itself is always read from the flag/env home). Ignored list
/// entries are printed as warnings on stderr (R-CFG-4).
pub(crate) fn load(flags: &ConfigArgs) -> Result<Setup, CliError> {
    let env = process_env()?;
    let start = flag_home(&env, flags.home.as_deref())?;
    let settings = match flags.agent {
        Some(agent) => settings::Settings::of_hook(agent, &start.path)?,
        None => settings::load(&start.path.join(settings::SETTINGS_FILE))?,
    };
    let resolved = settings::resolve(&settings, flags)?;
    let input = settings::merged_input(&settings, flags)?;
    for w in &resolved.warnings {
        err!("dsh-instructions: warning: {w}");
    }
    let home = resolve_dsh_home(resolved.config.dsh_home(), &env)?;
    Ok(Setup {
        env,
        config: resolved.config,
        input,
        home,
        warnings: resolved.warnings.iter().map(ToString::to_string).collect(),
    })
}

/// The session cwd: `--cwd` (relative to the process cwd) or the process
/// cwd; it must be an existing directory.
pub(crate) fn cwd(env: &HomeEnv, flag: Option<&Path>) -> Result<Utf8PathBuf, CliError> {
    let cwd = match flag {
        Some(p) => absolute(env, p, "--cwd")?,
        None => env.utf8_cwd()?,
    };
    existing_dir(&cwd, "cwd")?;
    Ok(cwd)
}

/// Errors unless `path` is an existing directory.
pub(crate) fn existing_dir(path: &Utf8Path, what: &str) -> Result<(), CliError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(CliError::new(format!("{what} {path}: not a directory"))),
        Err(e) => Err(CliError::new(format!("{what} {path}: {e}"))),
    }
}

/// The extra trusted roots the flags name (R-DISC-7): every `--trust`
/// directory, and `/` with `--trust-all`. The project root and the home are
/// added by the entry point.
pub(crate) fn extra_roots(env: &HomeEnv, flags: &ConfigArgs) -> Result<Vec<Utf8PathBuf>, CliError> {
    let mut roots = Vec::new();
    for t in &flags.trust {
        roots.push(absolute(env, t, "--trust")?);
    }
    if flags.trust_all {
        roots.push(Utf8PathBuf::from("/"));
    }
    Ok(roots)
}

/// The CLI's one grant of ambient authority: every command that mounts on
/// the real filesystem (`show`/`explain`/`check` and the `session`
/// commands) opens its provider through this factory, so the place the
/// binary may open paths by name is this one line (docs/architecture.md).
/// The agent hook (`hook`) mounts inside the hooks crate, which grants its
/// own for its inline provider.
///
/// Inline, like the hook's: a CLI command never cancels a composition (every
/// call passes a fresh token), so running each filesystem call on tokio's
/// blocking pool would buy nothing and cost a thread hand-off per call —
/// about 0.3 ms per composition, and a `show` whose wall time was several
/// times its CPU time (issue 19 item 8, decision 0038).
pub(crate) fn disk() -> CapStdFactory {
    CapStdFactory::new(ambient_authority()).inline()
}

/// Mounts `cwd` through the library's one entry point (R-RT-11): the same
/// root, home and trusted roots every other caller gets, with the
/// configuration [`load`] resolved — resolved once per command (issue 31
/// item 4; its warnings were printed there).
pub(crate) async fn mount(
    setup: &Setup,
    cwd: &Utf8Path,
    extra_roots: Vec<Utf8PathBuf>,
) -> Result<Opened, CliError> {
    MountBuilder::new(cwd)
        .validated(setup.config.clone())
        .env(setup.env.clone())
        .trust(extra_roots)
        .fs(disk())
        .open(&CancellationToken::new())
        .await
        .map_err(|e| CliError::new(e.to_string()))
}

/// A small runtime for the async libraries: one thread is plenty for one
/// command, and the filesystem calls run inline on it ([`disk`]).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_absolutized_and_normalized() {
        let env = HomeEnv {
            cwd: "/work/repo".into(),
            ..HomeEnv::default()
        };
        let got = absolute(&env, Path::new("pkg/../lib/./x"), "--cwd").expect("utf-8");
        assert_eq!(got, "/work/repo/lib/x");
    }

    #[test]
    fn trust_all_adds_the_filesystem_root() {
        let env = HomeEnv {
            cwd: "/w".into(),
            ..HomeEnv::default()
        };
        let flags = ConfigArgs {
            trust: vec!["extra".into()],
            trust_all: true,
            ..ConfigArgs::default()
        };
        let roots = extra_roots(&env, &flags).expect("utf-8");
        assert_eq!(roots, ["/w/extra", "/"]);
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_paths_are_errors_not_panics() {
        use std::os::unix::ffi::OsStrExt;
        let env = HomeEnv {
            cwd: "/w".into(),
            ..HomeEnv::default()
        };
        let bad = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
        let err = absolute(&env, bad, "--cwd").expect_err("not UTF-8");
        assert!(
            err.to_string().starts_with("--cwd is not valid UTF-8"),
            "{err}"
        );
    }

    /// Issue 31 item 4: a command resolves its configuration once. Only
    /// `settings.rs` resolves an input (`load`'s merged configuration, and
    /// the file's own section to name its line when it is invalid); every
    /// mount takes that result (`MountBuilder::validated`), and a session's
    /// stored configuration is resolved by its mount alone — no shipped
    /// file hands a mount an input (`MountBuilder::config`), which would
    /// resolve it again.
    #[test]
    fn the_cli_resolves_its_configuration_once() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut checked = 0;
        for entry in std::fs::read_dir(&src).expect("src") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read");
            let shipped = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            let code: Vec<&str> = shipped
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            checked += 1;
            assert!(
                !code.iter().any(|l| l.contains(".config(")),
                "{name} hands a mount a configuration input, resolving it again"
            );
            if name != "settings.rs" {
                assert!(
                    !code.iter().any(|l| l.contains(".resolve()")),
                    "{name} resolves a configuration itself"
                );
            }
        }
        assert!(checked >= 9, "{checked}");
    }
}
