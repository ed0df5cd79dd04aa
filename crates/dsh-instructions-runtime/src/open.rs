//! The one entry point from a session cwd to a [`Mount`] (R-RT-11).
//!
//! Everything that mounts an instance on a real directory — the CLI, the
//! conformance runner's disk provider, the benchmarks, the agent hook
//! adapter — goes through [`open_mount`], so the DSH home, the project root
//! and the trusted roots are derived in exactly one place and the root the
//! provider was opened for is the root the instance uses (R-DISC-2).

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{
    DshHome, HomeEnv, HomeError, expand_tilde, normalize_lexically, resolve_dsh_home,
};
use dsh_instructions_discovery::{
    AmbientAuthority, CancellationToken, CapStdProvider, DirMemory, FsProvider, ProjectRoot,
    ProviderError, find_project_root,
};
use dsh_instructions_state::{ConfigError, ConfigInput, ConfigWarning, ResolvedConfig, RuleFormat};

use crate::ancestors::ancestor_dirs;
use crate::instance::Mount;
use crate::user_file::UserFile;

/// What one session loop instance is mounted from (R-RT-11).
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The session's working directory; absolute (it is normalized
    /// lexically, never resolved through links).
    pub cwd: Utf8PathBuf,
    /// The configuration as the product or person wrote it, validated here;
    /// `None` mounts a disabled adapter (R-CFG-1).
    pub config: Option<ConfigInput>,
    /// The home variables (`HOME`, `DSH_HOME`) and process cwd used to
    /// resolve the DSH home (R-HOME-1/2); [`HomeEnv::from_process`] in a
    /// product.
    pub env: HomeEnv,
    /// Trusted roots beyond the project root and the DSH home (R-DISC-7):
    /// a product's shared rules directory, the CLI's `--trust`. Absolute.
    pub extra_roots: Vec<Utf8PathBuf>,
}

impl SessionSpec {
    /// A spec for `cwd` with `config`, the given environment and no extra
    /// trusted roots.
    pub fn new(cwd: impl Into<Utf8PathBuf>, config: Option<ConfigInput>, env: HomeEnv) -> Self {
        Self {
            cwd: cwd.into(),
            config,
            env,
            extra_roots: Vec::new(),
        }
    }
}

/// How [`open_mount`] reaches a filesystem.
///
/// [`CapStdFactory`] is the production implementation; the in-memory provider
/// implements it too, for tests and the conformance suite.
pub trait ProviderFactory: Send + Sync {
    /// A provider for the project-root walk: it answers
    /// [`FsProvider::marker`] (existence only, R-DISC-7) along the cwd's
    /// ancestors and is used for nothing else.
    ///
    /// # Errors
    /// When it cannot be built.
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, OpenError>;

    /// The content provider, confined to `trusted_roots`.
    ///
    /// # Errors
    /// When a root cannot be opened.
    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, OpenError>;

    /// The content provider, confined to `trusted_roots` plus names-only
    /// roots: in each of `dirs` (the directories above the project root)
    /// exactly the relative paths `names` may be probed and read, nothing
    /// else of them (`ancestor_instruction_files`, R-HOOK-8,
    /// docs/decisions/0044). Only called with a non-empty `names`.
    ///
    /// The default ignores the names-only roots, so a factory that does
    /// not implement it reports those files as outside the trusted roots
    /// (`explain` shows it) rather than reading them some other way.
    ///
    /// # Errors
    /// When a root cannot be opened.
    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, OpenError> {
        let _ = (dirs, names);
        self.open(trusted_roots)
    }
}

/// The [`ProviderFactory`] of the real filesystem: it opens a
/// [`CapStdProvider`] (the provider itself, in the discovery crate) on the
/// trusted roots [`open_mount`] derives. Constructing it takes the caller's
/// [`AmbientAuthority`] (`dsh_instructions_discovery::ambient_authority()`),
/// so the one place a product grants access by absolute path is visible.
#[derive(Clone)]
pub struct CapStdFactory {
    authority: AmbientAuthority,
    /// Providers run their filesystem work inline (see [`CapStdFactory::inline`]).
    inline: bool,
    /// Directory stamps shared by every provider this factory opens
    /// (see [`CapStdFactory::remembering`]).
    memory: Option<DirMemory>,
}

impl std::fmt::Debug for CapStdFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CapStdFactory")
    }
}

impl CapStdFactory {
    /// Grants [`open_mount`] the right to open the trusted roots by path.
    pub fn new(authority: AmbientAuthority) -> Self {
        Self {
            authority,
            inline: false,
            memory: None,
        }
    }

    /// Providers that run their filesystem work on the polling thread,
    /// not on tokio's blocking pool ([`CapStdProvider::run_inline`]): for a
    /// one-shot process with nothing else to run, such as the agent hook
    /// (R-HOOK-6), where each hand-off to the pool is a thread wake-up.
    ///
    /// ```
    /// use dsh_instructions_discovery::ambient_authority;
    /// use dsh_instructions_runtime::CapStdFactory;
    /// let fs = CapStdFactory::new(ambient_authority()).inline();
    /// # let _ = fs;
    /// ```
    #[must_use]
    pub fn inline(mut self) -> Self {
        self.inline = true;
        self
    }

    /// Providers that prove known directories from the stamps an earlier
    /// process left in `memory` and record what they observe into it
    /// ([`CapStdProvider::remembering`], decision 0037): for a one-shot
    /// process over a long session, such as the agent hook (R-HOOK-6).
    /// The caller decodes the memory before mounting and writes
    /// [`DirMemory::encode`] back afterwards when [`DirMemory::changed`].
    ///
    /// ```
    /// use dsh_instructions_discovery::{ambient_authority, DirMemory};
    /// use dsh_instructions_runtime::CapStdFactory;
    /// let memory = DirMemory::decode(b"");
    /// let fs = CapStdFactory::new(ambient_authority()).inline().remembering(memory.clone());
    /// # let _ = fs;
    /// assert!(!memory.changed());
    /// ```
    #[must_use]
    pub fn remembering(mut self, memory: DirMemory) -> Self {
        self.memory = Some(memory);
        self
    }

    fn provider(&self, roots: &[Utf8PathBuf]) -> Result<CapStdProvider, ProviderError> {
        let provider =
            CapStdProvider::new(roots.iter().cloned(), self.authority)?.run_inline(self.inline);
        Ok(match &self.memory {
            Some(memory) => provider.remembering(memory.clone()),
            None => provider,
        })
    }
}

impl ProviderFactory for CapStdFactory {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, OpenError> {
        // Marker probes check existence by absolute path; a provider with no
        // trusted root can do that and can read nothing.
        Ok(Arc::new(self.provider(&[])?))
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, OpenError> {
        Ok(Arc::new(self.provider(trusted_roots)?))
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, OpenError> {
        let provider = self
            .provider(trusted_roots)?
            .names_only(dirs.iter().cloned(), names);
        Ok(Arc::new(provider))
    }
}

/// The in-memory provider mounts through [`open_mount`] like the disk: its
/// root walk and content provider are views of the same tree, and it
/// refuses the roots the cap-std provider refuses, with the same error.
#[cfg(feature = "test-support")]
impl ProviderFactory for dsh_instructions_discovery::MemoryProvider {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, OpenError> {
        Ok(Arc::new(self.clone()))
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, OpenError> {
        Ok(Arc::new(
            self.try_with_trusted_roots(trusted_roots.to_vec())?,
        ))
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, OpenError> {
        // The same refusals as `open` (a relative or looping root).
        let provider = self
            .try_with_trusted_roots(trusted_roots.to_vec())?
            .with_names_only(dirs.to_vec(), names);
        Ok(Arc::new(provider))
    }
}

/// A [`Mount`] ready for [`crate::Instance::mount`], and how it was derived.
#[derive(Debug, Clone)]
pub struct Opened {
    /// Config, provider, home and project root, consistent with each other.
    pub mount: Mount,
    /// The trusted roots the provider was opened on, in order: project root,
    /// DSH home, then the extra roots. Empty when the adapter is disabled.
    pub trusted_roots: Vec<Utf8PathBuf>,
    /// Configuration entries validation ignored (R-CFG-4), for a log or the
    /// CLI to print.
    pub warnings: Vec<ConfigWarning>,
}

impl Opened {
    /// The project root found for the session cwd (`None` when disabled).
    pub fn root(&self) -> Option<&ProjectRoot> {
        self.mount.root.as_ref()
    }
}

/// Why [`open_mount`] could not produce a mount.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The configuration is invalid; the message names the field.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The DSH home could not be resolved (R-HOME-5).
    #[error(transparent)]
    Home(#[from] HomeError),
    /// The session cwd is relative.
    #[error("session cwd {0} is not absolute")]
    RelativeCwd(Utf8PathBuf),
    /// An extra trusted root is relative.
    #[error("trusted root {0} is not absolute")]
    RelativeRoot(Utf8PathBuf),
    /// A trusted root could not be opened (or is relative).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The cancellation token fired during the root walk.
    #[error("cancelled")]
    Cancelled,
}

/// Resolves the DSH home (the config's `dsh_home` included), finds the
/// project root from the cwd (R-DISC-1), opens the provider on the trusted
/// roots of R-DISC-7 and returns the [`Mount`] with that root in it, so the
/// instance computes nothing twice (R-RT-11, R-DISC-2).
///
/// A resume or remount calls it again: when the root moved (a nested `.git`
/// removed), the new mount's provider is opened for the new root.
///
/// # Errors
/// [`OpenError`]: an invalid configuration, an unresolvable home, a
/// relative cwd or root, a root that cannot be opened, or cancellation.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use dsh_instructions_discovery::{ambient_authority, CancellationToken};
/// use dsh_instructions_runtime::{open_mount, CapStdFactory, SessionSpec};
/// use dsh_instructions_state::{ConfigInput, Preset};
///
/// let tmp = tempfile::tempdir()?;
/// let base = camino::Utf8PathBuf::try_from(tmp.path().to_path_buf())?;
/// std::fs::create_dir_all(base.join("repo/.git"))?;
/// std::fs::create_dir_all(base.join("repo/pkg"))?;
/// let env = dsh_home_paths::HomeEnv {
///     home: Some(base.join("home").into_string().into()),
///     cwd: base.clone().into(),
///     ..Default::default()
/// };
/// let config = ConfigInput { preset: Some(Preset::Dsh), ..Default::default() };
/// let spec = SessionSpec::new(base.join("repo/pkg"), Some(config), env);
///
/// let opened = open_mount(&spec, &CapStdFactory::new(ambient_authority()), &CancellationToken::new()).await?;
/// assert_eq!(opened.root().unwrap().root, base.join("repo"));
/// assert_eq!(opened.trusted_roots, [base.join("repo"), base.join("home/.dsh")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn open_mount(
    spec: &SessionSpec,
    factory: &dyn ProviderFactory,
    cancel: &CancellationToken,
) -> Result<Opened, OpenError> {
    check_paths(spec)?;
    let Some(input) = &spec.config else {
        let home = resolve_dsh_home(None, &spec.env)?;
        return Ok(disabled(home));
    };
    open_resolved(spec, input.resolve()?, factory, cancel).await
}

/// [`open_mount`] for a caller that has resolved the configuration itself
/// (a CLI that validates it to name the flag or file line of an error, and
/// needs its `dsh_home` before anything mounts): `resolved` is mounted as
/// it is and `spec.config` is not read, so the configuration is resolved
/// once per command (issue 31 item 4).
///
/// # Errors
/// As [`open_mount`], except a configuration error.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use dsh_instructions_runtime::{
///     ambient_authority, open_resolved, CancellationToken, CapStdFactory, ConfigInput, HomeEnv,
///     Preset, SessionSpec, Utf8PathBuf,
/// };
///
/// let tmp = tempfile::tempdir()?;
/// let base = Utf8PathBuf::try_from(tmp.path().to_path_buf())?;
/// std::fs::create_dir_all(base.join("repo/.git"))?;
/// let env = HomeEnv { home: Some(base.join("home").into_string().into()), ..Default::default() };
/// let input = ConfigInput { preset: Some(Preset::Codex), ..Default::default() };
/// let resolved = input.resolve()?; // once, by the caller
/// let spec = SessionSpec::new(base.join("repo"), None, env);
/// let factory = CapStdFactory::new(ambient_authority());
/// let opened = open_resolved(&spec, resolved, &factory, &CancellationToken::new()).await?;
/// let config = opened.mount.config.as_ref().expect("mounted");
/// assert_eq!(config.instruction_file_candidates(), ["AGENTS.override.md", "AGENTS.md"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn open_resolved(
    spec: &SessionSpec,
    resolved: ResolvedConfig,
    factory: &dyn ProviderFactory,
    cancel: &CancellationToken,
) -> Result<Opened, OpenError> {
    check_paths(spec)?;
    let cwd = normalize_lexically(&spec.cwd);
    let config = resolved.config;
    let home = resolve_dsh_home(config.dsh_home(), &spec.env)?;
    // A zero budget (R-CFG-2) still opens the provider: the instance is a
    // no-op (R-RT-9), while `inspect` can report what would have loaded.
    let walker = factory.marker_walker()?;
    let root = find_project_root(walker.as_ref(), &cwd, config.project_root_markers(), cancel)
        .await
        .map_err(|_| OpenError::Cancelled)?;
    let user_files = user_files(config.user_instruction_files(), &spec.env);
    // Each user-level file's directory is trusted, for that file and its
    // imports (R-DISC-7, R-HOOK-4): nothing else of the OS home is.
    let user_dirs: Vec<Utf8PathBuf> = user_files
        .iter()
        .filter_map(|f| f.path.parent().map(Utf8Path::to_owned))
        .collect();
    // The user's `~/.claude/rules/` is trusted when `claude` rules load
    // (R-RULE-1) and no user file's directory holds it already; a root
    // that does not exist admits nothing.
    let user_rules = config
        .rule_formats()
        .contains(&RuleFormat::Claude)
        .then(|| crate::rule_slots::user_rules_dir(&user_files, &home))
        .flatten()
        .filter(|d| !user_dirs.iter().any(|u| d.starts_with(u)));
    let extra: Vec<Utf8PathBuf> = spec
        .extra_roots
        .iter()
        .cloned()
        .chain(user_dirs)
        .chain(user_rules)
        .collect();
    let trusted_roots = trusted_roots(&root.root, &home, &extra);
    // The directories above the root admit their ancestor files by name
    // only (R-HOOK-8, docs/decisions/0044): they are no trusted roots.
    let names = config.ancestor_instruction_files();
    let provider = if names.is_empty() {
        factory.open(&trusted_roots)?
    } else {
        factory.open_with_names(&trusted_roots, &ancestor_dirs(&root.root), names)?
    };
    Ok(Opened {
        mount: Mount {
            config: Some(config),
            provider: Some(provider),
            home,
            root: Some(root),
            user_files,
        },
        trusted_roots,
        warnings: resolved.warnings,
    })
}

/// The spec's paths must be absolute (R-RT-11).
fn check_paths(spec: &SessionSpec) -> Result<(), OpenError> {
    if !spec.cwd.is_absolute() {
        return Err(OpenError::RelativeCwd(spec.cwd.clone()));
    }
    if let Some(r) = spec.extra_roots.iter().find(|r| !r.is_absolute()) {
        return Err(OpenError::RelativeRoot(r.clone()));
    }
    Ok(())
}

fn disabled(home: DshHome) -> Opened {
    Opened {
        mount: Mount {
            config: None,
            provider: None,
            home,
            root: None,
            user_files: Vec::new(),
        },
        trusted_roots: Vec::new(),
        warnings: Vec::new(),
    }
}

/// The `user_instruction_files` entries expanded against the OS home
/// (R-HOME-2). Without a usable OS home an entry cannot name a file: it is
/// left out, with a diagnostic, and the rest of the mount goes on.
fn user_files(entries: &[String], env: &HomeEnv) -> Vec<UserFile> {
    entries
        .iter()
        .filter_map(|label| match expand_tilde(label, env) {
            Ok(path) => Some(UserFile {
                path,
                label: label.clone(),
            }),
            Err(error) => {
                tracing::warn!(entry = %label, %error, "user instruction file left out");
                None
            }
        })
        .collect()
}

/// R-DISC-7: the project root, the DSH home, then the extra roots, each once.
fn trusted_roots(root: &Utf8Path, home: &DshHome, extra: &[Utf8PathBuf]) -> Vec<Utf8PathBuf> {
    let mut roots: Vec<Utf8PathBuf> = Vec::with_capacity(2 + extra.len());
    for r in [root, home.path.as_path()]
        .into_iter()
        .chain(extra.iter().map(Utf8PathBuf::as_path))
    {
        let r = normalize_lexically(r);
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_home_paths::HomeLabel;
    use dsh_instructions_discovery::{MemNode, MemoryProvider, Probe, RootReason, Unavailable};
    use dsh_instructions_state::{NumberInput, Preset};
    use rstest::rstest;

    fn env() -> HomeEnv {
        HomeEnv {
            home: Some("/home/u".into()),
            cwd: "/".into(),
            ..HomeEnv::default()
        }
    }

    fn fs() -> MemoryProvider {
        let fs = MemoryProvider::new(vec!["/".into()]);
        fs.insert("/w/repo/.git".into(), MemNode::dir());
        fs.insert("/w/repo/pkg/.hg".into(), MemNode::dir());
        fs.insert("/w/repo/pkg/src".into(), MemNode::dir());
        fs
    }

    fn input(markers: &[&str]) -> ConfigInput {
        ConfigInput {
            max_bytes: Some(NumberInput::Int(4096)),
            project_root_markers: Some(markers.iter().map(|m| (*m).to_owned()).collect()),
            ..ConfigInput::default()
        }
    }

    async fn open(spec: &SessionSpec) -> Result<Opened, OpenError> {
        open_mount(spec, &fs(), &CancellationToken::new()).await
    }

    /// The external-suite failure of issue 12: a marker list with an invalid
    /// entry (`.git/`) must find the root from the validated list, the one
    /// the instance uses, and the provider must trust that root.
    #[rstest]
    #[case::invalid_entry_is_dropped(&[".git/", ".git"], "/w/repo", ".git")]
    #[case::nearest_marker_wins(&[".hg", ".git"], "/w/repo/pkg", ".hg")]
    #[tokio::test]
    async fn the_root_comes_from_the_validated_markers(
        #[case] markers: &[&str],
        #[case] root: &str,
        #[case] marker: &str,
    ) {
        let spec = SessionSpec::new("/w/repo/pkg/src", Some(input(markers)), env());
        let opened = open(&spec).await.expect("opens");
        let found = opened.root().expect("a root");
        assert_eq!(found.root, root);
        assert_eq!(
            found.reason,
            RootReason::Marker {
                marker: marker.into()
            }
        );
        assert_eq!(opened.trusted_roots, [root, "/home/u/.dsh"]);
        let config = opened.mount.config.expect("config");
        assert!(config.project_root_markers().iter().all(|m| m != ".git/"));
    }

    #[tokio::test]
    async fn home_comes_from_the_configured_dsh_home() {
        let mut config = input(&[".git"]);
        config.dsh_home = Some("~/rules".into());
        let mut spec = SessionSpec::new("/w/repo", Some(config), env());
        spec.extra_roots = vec!["/opt/shared".into(), "/w/repo".into()];
        let opened = open(&spec).await.expect("opens");
        assert_eq!(opened.mount.home.path, "/home/u/rules");
        assert_eq!(opened.mount.home.label, HomeLabel::EnvVar);
        assert_eq!(
            opened.trusted_roots,
            ["/w/repo", "/home/u/rules", "/opt/shared"],
            "each root once, in R-DISC-7 order"
        );
    }

    #[tokio::test]
    async fn user_files_are_expanded_and_only_their_directories_trusted() {
        // R-HOOK-4, R-DISC-7: ~/.claude is trusted for ~/.claude/CLAUDE.md,
        // the rest of the OS home is not.
        let config = ConfigInput {
            preset: Some(Preset::Claude),
            ..ConfigInput::default()
        };
        let spec = SessionSpec::new("/w/repo", Some(config), env());
        let opened = open(&spec).await.expect("opens");
        assert_eq!(
            opened.mount.user_files,
            [UserFile {
                path: "/home/u/.claude/CLAUDE.md".into(),
                label: "~/.claude/CLAUDE.md".into(),
            }]
        );
        assert_eq!(
            opened.trusted_roots,
            ["/w/repo", "/home/u/.dsh", "/home/u/.claude"]
        );
        // The dsh preset adds nothing.
        let spec = SessionSpec::new("/w/repo", Some(input(&[".git"])), env());
        let opened = open(&spec).await.expect("opens");
        assert!(opened.mount.user_files.is_empty());
        assert_eq!(opened.trusted_roots, ["/w/repo", "/home/u/.dsh"]);
    }

    /// R-RULE-1: `claude` rules in another agent's preset trust the
    /// user's `~/.claude/rules/` alone, not the rest of `~/.claude`.
    #[tokio::test]
    async fn claude_rules_trust_the_user_rules_directory_alone() {
        let config = ConfigInput {
            preset: Some(Preset::Codex),
            rule_formats: Some(vec!["claude".to_owned()]),
            ..ConfigInput::default()
        };
        let spec = SessionSpec::new("/w/repo", Some(config), env());
        let opened = open(&spec).await.expect("opens");
        assert_eq!(
            opened.trusted_roots,
            ["/w/repo", "/home/u/.dsh", "/home/u/.claude/rules"]
        );
    }

    /// R-HOOK-8, decision 0044: the claude preset opens the directories
    /// above the root as names-only roots, never as trusted roots.
    #[tokio::test]
    async fn ancestors_are_names_only_never_trusted_roots() {
        let fs = fs();
        fs.insert("/w/CLAUDE.md".into(), MemNode::file("above"));
        fs.insert("/w/notes.md".into(), MemNode::file("private"));
        let config = ConfigInput {
            preset: Some(Preset::Claude),
            ..ConfigInput::default()
        };
        let spec = SessionSpec::new("/w/repo", Some(config), env());
        let opened = open_mount(&spec, &fs, &CancellationToken::new())
            .await
            .expect("opens");
        assert_eq!(
            opened.trusted_roots,
            ["/w/repo", "/home/u/.dsh", "/home/u/.claude"],
            "no ancestor is a trusted root"
        );
        let provider = opened.mount.provider.expect("a provider");
        let cancel = CancellationToken::new();
        let probe = |p: &'static str| provider.probe(Utf8Path::new(p), &cancel);
        assert!(matches!(probe("/w/CLAUDE.md").await, Ok(Probe::Present(_))));
        assert_eq!(
            probe("/w/notes.md").await,
            Ok(Probe::Unavailable(Unavailable::OutsideTrustedRoots))
        );
        // Without the field the directories above stay closed.
        let spec = SessionSpec::new("/w/repo", Some(input(&[".git"])), env());
        let opened = open_mount(&spec, &fs, &CancellationToken::new())
            .await
            .expect("opens");
        let provider = opened.mount.provider.expect("a provider");
        assert_eq!(
            provider.probe(Utf8Path::new("/w/CLAUDE.md"), &cancel).await,
            Ok(Probe::Unavailable(Unavailable::OutsideTrustedRoots))
        );
    }

    #[tokio::test]
    async fn no_config_opens_nothing() {
        let spec = SessionSpec::new("/w/repo", None, env());
        let opened = open(&spec).await.expect("opens");
        assert!(opened.mount.provider.is_none());
        assert!(opened.root().is_none());
        assert!(opened.trusted_roots.is_empty());
    }

    #[tokio::test]
    async fn a_zero_budget_mounts_an_inactive_instance() {
        let config = ConfigInput {
            max_bytes: Some(NumberInput::Int(0)),
            ..ConfigInput::default()
        };
        let opened = open(&SessionSpec::new("/w/repo", Some(config), env()))
            .await
            .expect("opens");
        assert!(opened.mount.provider.is_some(), "inspect can still look");
        let host = std::sync::Arc::new(crate::MemoryHost::new("/w/repo".into()));
        let instance = crate::Instance::mount(opened.mount, host).expect("inside a runtime");
        assert!(!instance.is_active(), "R-RT-9: a no-op");
    }

    #[rstest]
    #[case::relative_cwd("repo", None, "not absolute")]
    #[case::bad_config("/w/repo", Some(ConfigInput::default()), "max_bytes is required")]
    #[tokio::test]
    async fn bad_input_is_a_typed_error(
        #[case] cwd: &str,
        #[case] config: Option<ConfigInput>,
        #[case] message: &str,
    ) {
        let config = config.or(Some(ConfigInput {
            preset: Some(Preset::Dsh),
            ..ConfigInput::default()
        }));
        let spec = SessionSpec::new(cwd, config, env());
        let error = open(&spec).await.expect_err("refused");
        assert!(error.to_string().contains(message), "{error}");
    }

    #[tokio::test]
    async fn a_relative_extra_root_is_refused() {
        let mut spec = SessionSpec::new("/w/repo", Some(input(&[".git"])), env());
        spec.extra_roots = vec!["shared".into()];
        let error = open(&spec).await.expect_err("refused");
        assert!(matches!(error, OpenError::RelativeRoot(_)), "{error:?}");
    }

    #[tokio::test]
    async fn cancellation_is_reported() {
        let spec = SessionSpec::new("/w/repo", Some(input(&[".git"])), env());
        let cancel = CancellationToken::new();
        cancel.cancel();
        let error = open_mount(&spec, &fs(), &cancel)
            .await
            .expect_err("cancelled");
        assert!(matches!(error, OpenError::Cancelled));
    }
}
