#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};

/// Name of the default DSH home directory inside the OS home (`~/.dsh`).
pub const DEFAULT_HOME_DIR_NAME: &str = ".dsh";

/// File name of the user-global instruction file inside the DSH home (R-HOME-4).
pub const USER_GLOBAL_FILE_NAME: &str = "AGENTS.md";

/// Directory inside the DSH home that holds persisted sessions.
pub const SESSIONS_DIR_NAME: &str = "sessions";

/// The slice of the process environment that home resolution depends on.
///
/// Built from the real process by [`HomeEnv::from_process`], or by hand in
/// tests and scenario runners (nothing here ever reads the process itself).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HomeEnv {
    /// `$HOME`, exactly as the environment holds it (`None` when unset).
    pub home: Option<OsString>,
    /// `$DSH_HOME`, exactly as the environment holds it (`None` when unset).
    pub dsh_home: Option<OsString>,
    /// The process working directory; relative paths are made absolute against it.
    pub cwd: PathBuf,
    /// The platform's account lookup of the home directory, used when `$HOME`
    /// is unset or blank.
    pub account_home: Option<PathBuf>,
}

impl HomeEnv {
    /// Reads `$HOME`, `$DSH_HOME`, the working directory and the account home
    /// directory of the running process.
    ///
    /// The account lookup is [`std::env::home_dir`]; when `$HOME` is empty it
    /// consults the account database, which is the case where this crate needs
    /// it (a non-empty `$HOME` is used directly by [`os_home`]).
    ///
    /// # Errors
    /// Fails only when the working directory cannot be determined (for
    /// example, it was deleted).
    ///
    /// ```
    /// let env = dsh_home_paths::HomeEnv::from_process()?;
    /// assert!(env.cwd.is_absolute());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn from_process() -> std::io::Result<Self> {
        Ok(Self {
            home: std::env::var_os("HOME"),
            dsh_home: std::env::var_os("DSH_HOME"),
            cwd: std::env::current_dir()?,
            account_home: std::env::home_dir(),
        })
    }

    /// The working directory as an absolute UTF-8 path (R-HOME-5).
    ///
    /// # Errors
    /// [`HomeError::NonUtf8`] when it is not UTF-8, [`HomeError::RelativeCwd`]
    /// when it is not absolute.
    ///
    /// ```
    /// use dsh_home_paths::{HomeEnv, HomeError};
    /// let env = HomeEnv { cwd: "/work/./repo".into(), ..HomeEnv::default() };
    /// assert_eq!(env.utf8_cwd()?, "/work/repo");
    /// # Ok::<(), HomeError>(())
    /// ```
    pub fn utf8_cwd(&self) -> Result<Utf8PathBuf, HomeError> {
        let cwd = utf8_path(&self.cwd, "current directory")?;
        if !cwd.is_absolute() {
            return Err(HomeError::RelativeCwd {
                path: cwd.into_string(),
            });
        }
        Ok(normalize_lexically(&cwd))
    }
}

/// Why a home path could not be resolved.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum HomeError {
    /// A path from the environment (or the working directory) is not valid
    /// UTF-8 (R-HOME-5). `path` is a lossy rendering for the message.
    #[error("{what} is not valid UTF-8: {path}")]
    NonUtf8 {
        /// Which input was affected, e.g. `"HOME"` or `"current directory"`.
        what: &'static str,
        /// The path with invalid sequences replaced by U+FFFD.
        path: String,
    },
    /// Neither `$HOME` nor the account lookup gives a home directory.
    #[error("no home directory: HOME is unset or blank and the account lookup found none")]
    NoHomeDirectory,
    /// A path to expand is empty or whitespace-only.
    #[error("{what} is empty")]
    Empty {
        /// Which input was empty.
        what: &'static str,
    },
    /// A relative path had to be made absolute but the working directory is
    /// itself relative.
    #[error("current directory is not absolute: {path}")]
    RelativeCwd {
        /// The working directory as given.
        path: String,
    },
}

/// The OS home directory: `$HOME` when it is set and not blank, else the
/// account lookup (R-HOME-2). The result is absolute and lexically normalized.
///
/// # Errors
/// [`HomeError::NonUtf8`] for a non-UTF-8 `$HOME` (no silent fallback: `$HOME`
/// was set) or account home, [`HomeError::NoHomeDirectory`] when neither
/// gives a directory.
///
/// ```
/// use dsh_home_paths::{os_home, HomeEnv};
/// let env = HomeEnv {
///     home: Some("  ".into()),
///     account_home: Some("/home/ada".into()),
///     ..HomeEnv::default()
/// };
/// assert_eq!(os_home(&env)?, "/home/ada");
/// # Ok::<(), dsh_home_paths::HomeError>(())
/// ```
pub fn os_home(env: &HomeEnv) -> Result<Utf8PathBuf, HomeError> {
    let from_var = match env.home.as_deref() {
        Some(raw) if !is_blank(raw) => Some(utf8_path(Path::new(raw), "HOME")?),
        _ => None,
    };
    let home = match from_var {
        Some(home) => home,
        None => match env.account_home.as_deref() {
            Some(raw) if !is_blank(raw.as_os_str()) => utf8_path(raw, "account home directory")?,
            _ => return Err(HomeError::NoHomeDirectory),
        },
    };
    absolutize(home, env)
}

/// Expands a leading `~` and makes the result absolute and normalized
/// (R-HOME-2).
///
/// - `~`, `~/…` and `~\…` expand against [`os_home`]; only the separator right
///   after `~` is interpreted, the rest is kept verbatim.
/// - `~user/…`, `$VAR/…` and any other shell syntax are not expanded; like any
///   relative path they are resolved against `env.cwd`.
/// - The result goes through [`normalize_lexically`]; the filesystem is never
///   touched.
///
/// # Errors
/// [`HomeError::Empty`] for blank input; [`os_home`]'s errors when a tilde
/// form needs the OS home; [`HomeEnv::utf8_cwd`]'s errors when a relative path
/// needs the working directory.
///
/// ```
/// use dsh_home_paths::{expand_tilde, HomeEnv};
/// let env = HomeEnv {
///     home: Some("/home/ada".into()),
///     cwd: "/work/repo".into(),
///     ..HomeEnv::default()
/// };
/// assert_eq!(expand_tilde("~/notes/../.dsh", &env)?, "/home/ada/.dsh");
/// assert_eq!(expand_tilde("~bob/x", &env)?, "/work/repo/~bob/x");
/// assert_eq!(expand_tilde("../other", &env)?, "/work/other");
/// # Ok::<(), dsh_home_paths::HomeError>(())
/// ```
pub fn expand_tilde(input: &str, env: &HomeEnv) -> Result<Utf8PathBuf, HomeError> {
    if input.trim().is_empty() {
        return Err(HomeError::Empty { what: "path" });
    }
    let rest = if input == "~" {
        Some("")
    } else {
        input
            .strip_prefix("~/")
            .or_else(|| input.strip_prefix("~\\"))
    };
    match rest {
        Some(rest) => {
            let home = os_home(env)?;
            Ok(normalize_lexically(&home.join(rest)))
        }
        None => absolutize(Utf8PathBuf::from(input), env),
    }
}

/// Removes `.` and `..` components without touching the filesystem.
///
/// `..` pops the previous normal component; at the root it stays at the root
/// (`/..` is `/`). In a relative path a leading `..` that has nothing to pop is
/// kept, and a relative path that normalizes to nothing becomes `.`. Repeated
/// and trailing separators disappear. Symlinks are deliberately not consulted:
/// `a/link/..` is `a`.
///
/// ```
/// use camino::Utf8Path;
/// use dsh_home_paths::normalize_lexically;
/// assert_eq!(normalize_lexically(Utf8Path::new("/a/./b/../../../c/")), "/c");
/// assert_eq!(normalize_lexically(Utf8Path::new("a/../../b")), "../b");
/// assert_eq!(normalize_lexically(Utf8Path::new("a/..")), ".");
/// ```
pub fn normalize_lexically(path: &Utf8Path) -> Utf8PathBuf {
    if is_lexically_normal(path) {
        // Nothing to fold: every caller on a hot path (import targets,
        // provider paths) passes paths like this, and the component walk
        // below costs more than the syscall it guards.
        return path.to_owned();
    }
    fold_components(path)
}

/// The component walk behind [`normalize_lexically`].
fn fold_components(path: &Utf8Path) -> Utf8PathBuf {
    // Prefix/root components first, then the stack of remaining names.
    let mut anchor = Utf8PathBuf::new();
    let mut names: Vec<&str> = Vec::new();
    for component in path.components() {
        match component {
            Utf8Component::Prefix(_) | Utf8Component::RootDir => {
                anchor.push(component.as_str());
            }
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => match names.last() {
                Some(&last) if last != ".." => {
                    names.pop();
                }
                // Nothing to pop: at a root `..` is the root itself; in a
                // relative path it must be kept to stay meaningful.
                _ if anchor.as_str().is_empty() => names.push(".."),
                _ => {}
            },
            Utf8Component::Normal(name) => names.push(name),
        }
    }
    let mut out = anchor;
    for name in names {
        out.push(name);
    }
    if out.as_str().is_empty() {
        out.push(".");
    }
    out
}

/// Whether `path` is already what [`normalize_lexically`] returns for it:
/// on Unix, `/` or names joined by single `/` (absolute or not) with no `.`
/// or `..` and no trailing `/`. Elsewhere (prefixes, `\\`) always `false`,
/// which only means "normalize to be sure".
///
/// ```
/// use camino::Utf8Path;
/// use dsh_home_paths::is_lexically_normal;
/// assert!(is_lexically_normal(Utf8Path::new("/a/b")));
/// assert!(!is_lexically_normal(Utf8Path::new("/a/./b")));
/// assert!(!is_lexically_normal(Utf8Path::new("/a/b/")));
/// ```
pub fn is_lexically_normal(path: &Utf8Path) -> bool {
    let s = path.as_str();
    if !cfg!(unix) {
        return false;
    }
    if s == "/" {
        return true;
    }
    let names = s.strip_prefix('/').unwrap_or(s).as_bytes();
    // Each name between slashes is non-empty and neither `.` nor `..`. A
    // name that is not starts with `/`, `.` or the end, right at the start
    // or after a `/`: only those places are looked at, the `/`s found eight
    // bytes at a time (a probe batch checks every known directory's path:
    // a byte-by-byte pass was a tenth of a touch's instructions, issue 35,
    // and a search byte by byte for each next `/` still 6%, issue 46).
    let bad_name_at = |i: usize| match names.get(i) {
        None | Some(b'/') => true,
        Some(b'.') => match names.get(i + 1) {
            None | Some(b'/') => true,
            Some(b'.') => matches!(names.get(i + 2), None | Some(b'/')),
            Some(_) => false,
        },
        Some(_) => false,
    };
    if bad_name_at(0) {
        return false;
    }
    let words = names.chunks_exact(8);
    let tail = words.remainder();
    // The last word zero past the end: no `/` there.
    let mut last = [0u8; 8];
    for (to, &b) in last.iter_mut().zip(tail) {
        *to = b;
    }
    let words = words
        .map(|w| <[u8; 8]>::try_from(w).unwrap_or_default())
        .chain(std::iter::once(last));
    for (k, word) in words.enumerate() {
        let mut slashes = bytes_equal(u64::from_le_bytes(word), b'/');
        while slashes != 0 {
            let at = k * 8 + (slashes.trailing_zeros() / 8) as usize;
            if bad_name_at(at + 1) {
                return false;
            }
            slashes &= slashes - 1;
        }
    }
    true
}

/// The high bit of each byte of `word` that equals `byte`, and no other
/// bit: the bytes of `word ^ byte…` that are zero, found without a carry
/// from one byte into the next.
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// How a DSH home is shown to people and the model (R-HOME-3): never as an
/// absolute machine path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HomeLabel {
    /// The home is the default `~/.dsh`.
    Default,
    /// Any other home (from `$DSH_HOME` or an explicit configured path).
    EnvVar,
}

impl HomeLabel {
    /// The label text: `"~/.dsh"` or `"$DSH_HOME"`.
    ///
    /// ```
    /// use dsh_home_paths::HomeLabel;
    /// assert_eq!(HomeLabel::Default.as_str(), "~/.dsh");
    /// assert_eq!(HomeLabel::EnvVar.to_string(), "$DSH_HOME");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Default => "~/.dsh",
            Self::EnvVar => "$DSH_HOME",
        }
    }
}

impl fmt::Display for HomeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resolved DSH home: an absolute, normalized path and its display label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DshHome {
    /// Absolute, lexically normalized directory.
    pub path: Utf8PathBuf,
    /// How to show it (R-HOME-3).
    pub label: HomeLabel,
}

impl DshHome {
    /// The user-global instruction file, always `<home>/AGENTS.md` (R-HOME-4).
    ///
    /// ```
    /// use dsh_home_paths::{DshHome, HomeLabel};
    /// let home = DshHome { path: "/opt/dsh".into(), label: HomeLabel::EnvVar };
    /// assert_eq!(home.user_global_file(), "/opt/dsh/AGENTS.md");
    /// ```
    pub fn user_global_file(&self) -> Utf8PathBuf {
        self.path.join(USER_GLOBAL_FILE_NAME)
    }

    /// Display form of the user-global file: `~/.dsh/AGENTS.md` or
    /// `$DSH_HOME/AGENTS.md` (R-HOME-4).
    ///
    /// ```
    /// use dsh_home_paths::{DshHome, HomeLabel};
    /// let home = DshHome { path: "/opt/dsh".into(), label: HomeLabel::EnvVar };
    /// assert_eq!(home.user_global_label(), "$DSH_HOME/AGENTS.md");
    /// ```
    pub fn user_global_label(&self) -> String {
        format!("{}/{USER_GLOBAL_FILE_NAME}", self.label)
    }

    /// Directory holding persisted sessions: `<home>/sessions`.
    ///
    /// ```
    /// use dsh_home_paths::{DshHome, HomeLabel};
    /// let home = DshHome { path: "/opt/dsh".into(), label: HomeLabel::EnvVar };
    /// assert_eq!(home.sessions_dir(), "/opt/dsh/sessions");
    /// ```
    pub fn sessions_dir(&self) -> Utf8PathBuf {
        self.path.join(SESSIONS_DIR_NAME)
    }
}

/// Resolves the DSH home (R-HOME-1) and its label (R-HOME-3).
///
/// Precedence: `explicit` (a configured path), then `$DSH_HOME` (empty or
/// whitespace-only counts as unset), then `~/.dsh`. The chosen value goes
/// through [`expand_tilde`]. The label is [`HomeLabel::Default`] exactly when
/// the result equals the normalized `<os home>/.dsh` — so an explicit path
/// that names the default home is still shown as `~/.dsh` — and
/// [`HomeLabel::EnvVar`] otherwise, including when no OS home is known.
///
/// # Errors
/// [`HomeError::Empty`] when `explicit` is blank (a configured empty path is a
/// mistake, not a request for the default); [`HomeError::NonUtf8`] for a
/// non-UTF-8 `$DSH_HOME`; otherwise [`expand_tilde`]'s errors.
///
/// ```
/// use dsh_home_paths::{resolve_dsh_home, HomeEnv, HomeLabel};
/// let env = HomeEnv {
///     home: Some("/home/ada".into()),
///     dsh_home: Some("/opt/dsh".into()),
///     cwd: "/".into(),
///     ..HomeEnv::default()
/// };
/// let from_env = resolve_dsh_home(None, &env)?;
/// assert_eq!((from_env.path.as_str(), from_env.label), ("/opt/dsh", HomeLabel::EnvVar));
/// let explicit = resolve_dsh_home(Some("~/.dsh"), &env)?;
/// assert_eq!((explicit.path.as_str(), explicit.label), ("/home/ada/.dsh", HomeLabel::Default));
/// # Ok::<(), dsh_home_paths::HomeError>(())
/// ```
pub fn resolve_dsh_home(explicit: Option<&str>, env: &HomeEnv) -> Result<DshHome, HomeError> {
    let path = if let Some(explicit) = explicit {
        if explicit.trim().is_empty() {
            return Err(HomeError::Empty {
                what: "configured dsh_home",
            });
        }
        expand_tilde(explicit, env)?
    } else if let Some(raw) = env.dsh_home.as_deref().filter(|raw| !is_blank(raw)) {
        let value = raw.to_str().ok_or_else(|| HomeError::NonUtf8 {
            what: "DSH_HOME",
            path: raw.to_string_lossy().into_owned(),
        })?;
        expand_tilde(value, env)?
    } else {
        normalize_lexically(&os_home(env)?.join(DEFAULT_HOME_DIR_NAME))
    };
    // A broken or missing OS home cannot be the default home; it must not
    // fail a home that was given explicitly.
    let is_default = os_home(env)
        .map(|home| normalize_lexically(&home.join(DEFAULT_HOME_DIR_NAME)) == path)
        .unwrap_or(false);
    let label = if is_default {
        HomeLabel::Default
    } else {
        HomeLabel::EnvVar
    };
    Ok(DshHome { path, label })
}

/// Empty or whitespace-only. Non-UTF-8 values are never blank: they carry bytes.
fn is_blank(raw: &OsStr) -> bool {
    raw.to_str().is_some_and(|s| s.trim().is_empty())
}

fn utf8_path(raw: &Path, what: &'static str) -> Result<Utf8PathBuf, HomeError> {
    Utf8Path::from_path(raw)
        .map(Utf8Path::to_path_buf)
        .ok_or_else(|| HomeError::NonUtf8 {
            what,
            path: raw.to_string_lossy().into_owned(),
        })
}

/// Relative → absolute against the cwd, then normalized.
fn absolutize(path: Utf8PathBuf, env: &HomeEnv) -> Result<Utf8PathBuf, HomeError> {
    if path.is_absolute() {
        Ok(normalize_lexically(&path))
    } else {
        Ok(normalize_lexically(&env.utf8_cwd()?.join(path)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;
    use std::os::unix::ffi::OsStringExt;

    fn env(home: Option<&str>, dsh_home: Option<&str>) -> HomeEnv {
        HomeEnv {
            home: home.map(OsString::from),
            dsh_home: dsh_home.map(OsString::from),
            cwd: PathBuf::from("/work/repo"),
            account_home: Some(PathBuf::from("/accounts/ada")),
        }
    }

    fn invalid_utf8() -> OsString {
        OsString::from_vec(b"/home/\xff\xfeada".to_vec())
    }

    #[rstest]
    #[case::home_wins(Some("/home/ada"), "/home/ada")]
    #[case::home_normalized(Some("/home/./ada/x/.."), "/home/ada")]
    #[case::empty_home_falls_back(Some(""), "/accounts/ada")]
    #[case::blank_home_falls_back(Some(" \t "), "/accounts/ada")]
    #[case::unset_home_falls_back(None, "/accounts/ada")]
    #[case::relative_home_made_absolute(Some("me"), "/work/repo/me")]
    fn os_home_prefers_nonblank_home(#[case] home: Option<&str>, #[case] expected: &str) {
        assert_eq!(os_home(&env(home, None)).unwrap(), expected);
    }

    #[test]
    fn os_home_without_any_source_is_typed_error() {
        let mut e = env(None, None);
        e.account_home = None;
        assert_eq!(os_home(&e), Err(HomeError::NoHomeDirectory));
        e.account_home = Some(PathBuf::from("  "));
        assert_eq!(os_home(&e), Err(HomeError::NoHomeDirectory));
    }

    #[rstest]
    #[case::bare("~", "/home/ada")]
    #[case::slash("~/", "/home/ada")]
    #[case::subpath("~/.dsh", "/home/ada/.dsh")]
    #[case::backslash("~\\.dsh", "/home/ada/.dsh")]
    #[case::dotdot_under_home("~/a/../b", "/home/ada/b")]
    #[case::dotdot_out_of_home("~/../../../x", "/x")]
    #[case::other_user("~bob/x", "/work/repo/~bob/x")]
    #[case::tilde_not_leading("a/~/b", "/work/repo/a/~/b")]
    #[case::env_var("$HOME/x", "/work/repo/$HOME/x")]
    #[case::braced_var("${HOME}", "/work/repo/${HOME}")]
    #[case::tilde_plus("~+/x", "/work/repo/~+/x")]
    #[case::relative("sub/dir", "/work/repo/sub/dir")]
    #[case::dot("./x/./y", "/work/repo/x/y")]
    #[case::parent("../other", "/work/other")]
    #[case::absolute("/opt//dsh/./", "/opt/dsh")]
    #[case::root_parent("/../..", "/")]
    fn expand_tilde_forms(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(
            expand_tilde(input, &env(Some("/home/ada"), None)).unwrap(),
            expected
        );
    }

    #[test]
    fn expand_tilde_backslash_keeps_rest_verbatim() {
        // Only the separator after `~` is interpreted; on Unix `\` inside a
        // name is an ordinary character.
        let got = expand_tilde("~\\a\\b", &env(Some("/h"), None)).unwrap();
        assert_eq!(got, "/h/a\\b");
    }

    #[rstest]
    #[case("")]
    #[case("   ")]
    fn expand_tilde_rejects_blank(#[case] input: &str) {
        assert_eq!(
            expand_tilde(input, &env(Some("/h"), None)),
            Err(HomeError::Empty { what: "path" })
        );
    }

    #[test]
    fn absolute_input_needs_no_cwd_or_home() {
        let e = HomeEnv {
            cwd: PathBuf::from(OsString::from_vec(b"\xff".to_vec())),
            ..HomeEnv::default()
        };
        assert_eq!(expand_tilde("/a/../b", &e).unwrap(), "/b");
    }

    #[test]
    fn relative_input_with_relative_cwd_is_typed_error() {
        let e = HomeEnv {
            cwd: PathBuf::from("rel"),
            ..HomeEnv::default()
        };
        assert_eq!(
            expand_tilde("x", &e),
            Err(HomeError::RelativeCwd { path: "rel".into() })
        );
    }

    #[rstest]
    #[case::explicit_wins(Some("/cfg/home"), Some("/env/home"), "/cfg/home", HomeLabel::EnvVar)]
    #[case::explicit_tilde(Some("~/cfg"), Some("/env/home"), "/home/ada/cfg", HomeLabel::EnvVar)]
    #[case::explicit_equals_default(
        Some("~/.dsh"),
        Some("/env"),
        "/home/ada/.dsh",
        HomeLabel::Default
    )]
    #[case::explicit_default_spelled_differently(
        Some("/home/ada/x/../.dsh/"),
        None,
        "/home/ada/.dsh",
        HomeLabel::Default
    )]
    #[case::explicit_relative(Some(".dsh"), None, "/work/repo/.dsh", HomeLabel::EnvVar)]
    #[case::env_used(None, Some("/env/home"), "/env/home", HomeLabel::EnvVar)]
    #[case::env_tilde(None, Some("~/other"), "/home/ada/other", HomeLabel::EnvVar)]
    #[case::env_equals_default(None, Some("/home/ada/.dsh"), "/home/ada/.dsh", HomeLabel::Default)]
    #[case::env_empty_is_unset(None, Some(""), "/home/ada/.dsh", HomeLabel::Default)]
    #[case::env_blank_is_unset(None, Some(" \t\n"), "/home/ada/.dsh", HomeLabel::Default)]
    #[case::default(None, None, "/home/ada/.dsh", HomeLabel::Default)]
    fn resolve_precedence_and_labels(
        #[case] explicit: Option<&str>,
        #[case] dsh_home: Option<&str>,
        #[case] path: &str,
        #[case] label: HomeLabel,
    ) {
        let home = resolve_dsh_home(explicit, &env(Some("/home/ada"), dsh_home)).unwrap();
        assert_eq!(home.path, path);
        assert_eq!(home.label, label);
    }

    #[test]
    fn default_home_uses_account_lookup_when_home_blank() {
        let home = resolve_dsh_home(None, &env(Some(""), None)).unwrap();
        assert_eq!(home.path, "/accounts/ada/.dsh");
        assert_eq!(home.label, HomeLabel::Default);
    }

    #[test]
    fn blank_explicit_is_an_error_not_the_default() {
        assert_eq!(
            resolve_dsh_home(Some("  "), &env(Some("/h"), None)),
            Err(HomeError::Empty {
                what: "configured dsh_home"
            })
        );
    }

    #[test]
    fn explicit_home_survives_missing_os_home() {
        let mut e = env(None, None);
        e.account_home = None;
        let home = resolve_dsh_home(Some("/opt/dsh"), &e).unwrap();
        assert_eq!(home.label, HomeLabel::EnvVar);
        assert_eq!(resolve_dsh_home(None, &e), Err(HomeError::NoHomeDirectory));
    }

    #[rstest]
    #[case::default(HomeLabel::Default, "~/.dsh/AGENTS.md")]
    #[case::env(HomeLabel::EnvVar, "$DSH_HOME/AGENTS.md")]
    fn user_global_file_and_label(#[case] label: HomeLabel, #[case] shown: &str) {
        let home = DshHome {
            path: "/x/y".into(),
            label,
        };
        assert_eq!(home.user_global_file(), "/x/y/AGENTS.md");
        assert_eq!(home.user_global_label(), shown);
        assert_eq!(home.sessions_dir(), "/x/y/sessions");
        assert!(!home.user_global_label().contains("/x/y"));
    }

    #[test]
    fn non_utf8_home_is_typed_error() {
        let mut e = env(None, None);
        e.home = Some(invalid_utf8());
        match os_home(&e) {
            Err(HomeError::NonUtf8 { what: "HOME", path }) => {
                assert!(path.contains('\u{FFFD}'), "{path}");
            }
            other => panic!("unexpected {other:?}"),
        }
        // The default home needs HOME, so it fails too; no fallback to the
        // account lookup because HOME was set.
        assert!(matches!(
            resolve_dsh_home(None, &e),
            Err(HomeError::NonUtf8 { what: "HOME", .. })
        ));
        // An explicit home does not need HOME and is labelled as non-default.
        let home = resolve_dsh_home(Some("/opt/dsh"), &e).unwrap();
        assert_eq!(home.label, HomeLabel::EnvVar);
    }

    #[test]
    fn non_utf8_dsh_home_is_typed_error() {
        let mut e = env(Some("/h"), None);
        e.dsh_home = Some(invalid_utf8());
        assert!(matches!(
            resolve_dsh_home(None, &e),
            Err(HomeError::NonUtf8 {
                what: "DSH_HOME",
                ..
            })
        ));
    }

    #[test]
    fn non_utf8_account_home_is_typed_error() {
        let mut e = env(None, None);
        e.account_home = Some(PathBuf::from(invalid_utf8()));
        assert!(matches!(
            os_home(&e),
            Err(HomeError::NonUtf8 {
                what: "account home directory",
                ..
            })
        ));
    }

    #[test]
    fn non_utf8_cwd_is_typed_error_when_needed() {
        let mut e = env(Some("/h"), None);
        e.cwd = PathBuf::from(invalid_utf8());
        assert!(matches!(
            expand_tilde("rel", &e),
            Err(HomeError::NonUtf8 {
                what: "current directory",
                ..
            })
        ));
        assert_eq!(expand_tilde("~/x", &e).unwrap(), "/h/x");
    }

    #[rstest]
    #[case("/", "/")]
    #[case("/..", "/")]
    #[case("/a/b/../../..", "/")]
    #[case("/a/./b/", "/a/b")]
    #[case("//a//b", "/a/b")]
    #[case("a/b/..", "a")]
    #[case("a/../..", "..")]
    #[case("../../a", "../../a")]
    #[case(".", ".")]
    #[case("./a/..", ".")]
    #[case("", ".")]
    fn normalize_table(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(normalize_lexically(Utf8Path::new(input)), expected);
    }

    /// Names that only start like `.` or `..`, relative paths and the
    /// places a bad name can sit (first, middle, last).
    #[rstest]
    #[case("/", true)]
    #[case("", false)]
    #[case("a/b", true)]
    #[case("...", true)]
    #[case(".a/..b/b..", true)]
    #[case("/a/.../.x", true)]
    #[case(".", false)]
    #[case("./a", false)]
    #[case("a/..", false)]
    #[case("a/../b", false)]
    #[case("a//b", false)]
    #[case("//a", false)]
    #[case("a/", false)]
    #[case("/a/b/.", false)]
    // A `/` as the last byte of an eight-byte word, the name after it in
    // the next word (the `/`s are found a word at a time).
    #[case("/abcdefg/./x", false)]
    #[case("/abcdefg//x", false)]
    #[case("/abcdefg/..", false)]
    #[case("/abcdefg/", false)]
    #[case("/abcdefg/.x/abcdef/..y", true)]
    #[case("/abcdefgh/ijklmnop/q", true)]
    fn lexically_normal_names(#[case] path: &str, #[case] normal: bool) {
        assert_eq!(is_lexically_normal(Utf8Path::new(path)), normal, "{path}");
    }

    proptest! {
        #[test]
        fn normalize_is_idempotent_and_clean_for_absolute(
            parts in proptest::collection::vec(
                prop_oneof![Just(".".to_string()), Just("..".to_string()), Just(String::new()), "[a-z~$.]{1,4}"],
                0..12,
            )
        ) {
            let input = format!("/{}", parts.join("/"));
            let once = normalize_lexically(Utf8Path::new(&input));
            prop_assert!(once.is_absolute());
            prop_assert_eq!(&normalize_lexically(&once), &once);
            for c in once.components() {
                prop_assert!(
                    !matches!(c, Utf8Component::CurDir | Utf8Component::ParentDir),
                    "{} -> {}", input, once
                );
            }
        }

        /// The one-pass check says "normal" exactly when folding the
        /// components would change nothing (absolute paths, Unix).
        #[test]
        fn normal_exactly_when_folding_changes_nothing(
            parts in proptest::collection::vec(
                prop_oneof![Just(".".to_string()), Just("..".to_string()), Just(String::new()), "[a-z.]{1,3}"],
                0..8,
            )
        ) {
            let input = format!("/{}", parts.join("/"));
            let path = Utf8Path::new(&input);
            prop_assert_eq!(is_lexically_normal(path), fold_components(path).as_str() == input, "{}", input);
        }

        /// The same over longer names, so that a bad name starts at every
        /// place of an eight-byte word the check reads at once.
        #[test]
        fn normal_exactly_when_folding_changes_nothing_across_words(
            parts in proptest::collection::vec(
                prop_oneof![Just(".".to_string()), Just("..".to_string()), Just(String::new()), "[a-z.]{1,9}"],
                0..10,
            )
        ) {
            let input = format!("/{}", parts.join("/"));
            let path = Utf8Path::new(&input);
            prop_assert_eq!(is_lexically_normal(path), fold_components(path).as_str() == input, "{}", input);
        }

        #[test]
        fn expand_tilde_is_total_and_absolute(input in "[~/\\\\.a$ ]{0,10}") {
            // Any input either fails with a typed error (blank) or yields an
            // absolute, normalized path.
            let e = env(Some("/home/ada"), None);
            match expand_tilde(&input, &e) {
                Ok(path) => {
                    prop_assert!(path.is_absolute(), "{} -> {}", input, path);
                    prop_assert_eq!(normalize_lexically(&path), path);
                }
                Err(err) => prop_assert_eq!(err, HomeError::Empty { what: "path" }),
            }
        }

        #[test]
        fn the_fast_path_answers_what_the_component_walk_does(
            absolute in any::<bool>(),
            trailing in any::<bool>(),
            parts in proptest::collection::vec(
                prop_oneof![Just(".".to_string()), Just("..".to_string()), Just(String::new()), "[a-z.]{1,3}"],
                0..8,
            )
        ) {
            let mut input = format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"));
            if trailing {
                input.push('/');
            }
            let path = Utf8Path::new(&input);
            prop_assert_eq!(normalize_lexically(path), fold_components(path), "{}", input);
        }

        #[test]
        fn normalize_is_idempotent_for_relative(
            parts in proptest::collection::vec(
                prop_oneof![Just(".".to_string()), Just("..".to_string()), "[a-z]{1,3}"],
                0..12,
            )
        ) {
            let input = parts.join("/");
            let once = normalize_lexically(Utf8Path::new(&input));
            prop_assert_eq!(&normalize_lexically(&once), &once);
        }
    }
}
