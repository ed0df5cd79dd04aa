//! The one way in (R-RT-11): a [`MountBuilder`] names a session's cwd,
//! configuration, environment, extra trusted roots and filesystem; its
//! [`MountBuilder::open`] derives the DSH home, the project root and the
//! trusted roots in exactly one place and opens the provider on them, so
//! the root the provider was opened for is the root the instance uses
//! (R-DISC-2). The [`Opened`] mount starts instances
//! ([`Opened::instance`]) and answers `explain` and `show`
//! ([`Opened::inspect`], [`Opened::preview`]).
//!
//! The CLI, the agent hook, the persisted session
//! (`dsh-instructions-session`), the conformance driver and the Node
//! binding all mount through it.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeEnv, expand_tilde, normalize_lexically, resolve_dsh_home};
use dsh_instructions_discovery::provider::FileVersion;
use dsh_instructions_discovery::{
    CancellationToken, FsProvider, ProjectRoot, find_project_root, offload,
};
use dsh_instructions_state::cache::CacheEntry;
use dsh_instructions_state::config::{ConfigWarning, ResolvedConfig, RuleFormat};
use dsh_instructions_state::{Config, ConfigInput, ScopeKey};

use crate::ancestors::ancestor_dirs;
use crate::derived::Mount;
use crate::error::RuntimeError;
use crate::factory::ProviderFactory;
use crate::host::Host;
use crate::inspect::{Inspection, Preview};
use crate::instance::Instance;
use crate::rules::InspectedRules;
use crate::user_file::UserFile;

/// The configuration a mount is built with.
#[derive(Debug, Clone, Default)]
enum Configured {
    /// None: the plugin is disabled (R-CFG-1).
    #[default]
    Disabled,
    /// As the product or person wrote it; validated when the mount opens.
    Input(Box<ConfigInput>),
    /// Validated already, by a caller that needed it sooner (a CLI that
    /// names the flag or file line of an error).
    Validated(Box<Config>),
}

/// Version-cache entries an earlier loop instance over the same session
/// left ([`Instance::remembered_versions`]).
type Versions = Vec<(ScopeKey, CacheEntry<FileVersion>)>;

/// How to mount the adapter for one session's loop instance: the one entry
/// for every kind of caller (R-RT-11).
///
/// Set what differs from the defaults (no configuration = disabled, an
/// empty environment, no extra trusted roots, no filesystem = a no-op),
/// then [`MountBuilder::open`] it. A resume or remount opens the builder
/// again: when the project root moved (a nested `.git` removed), the new
/// mount's provider is opened for the new root.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use std::sync::Arc;
/// use dsh_instructions_runtime::{BatchItem, CapStdFactory, Decision, MountBuilder, discovery::{CancellationToken, camino::Utf8PathBuf, cap_std::ambient_authority}, home::HomeEnv, host_support::MemoryHost, state::{ConfigInput, Preset}};
///
/// let tmp = tempfile::tempdir()?;
/// let base = Utf8PathBuf::try_from(tmp.path().to_path_buf())?;
/// std::fs::create_dir_all(base.join("repo/.git"))?;
/// std::fs::create_dir_all(base.join("repo/pkg"))?;
/// std::fs::write(base.join("repo/AGENTS.md"), "Run make test.")?;
/// let env = HomeEnv { home: Some(base.join("home").into_string().into()), ..Default::default() };
/// let cancel = CancellationToken::new();
///
/// let opened = MountBuilder::new(base.join("repo/pkg"))
///     .config(ConfigInput { preset: Some(Preset::Dsh), ..Default::default() })
///     .env(env)
///     .fs(CapStdFactory::new(ambient_authority()))
///     .open(&cancel)
///     .await?;
/// assert_eq!(opened.root().unwrap().root, base.join("repo"));
/// assert_eq!(opened.trusted_roots(), [base.join("repo"), base.join("home/.dsh")]);
///
/// let instance = opened.instance(Arc::new(MemoryHost::new(base.join("repo/pkg"))))?;
/// let prompt = Decision::Enter(vec![BatchItem { message: "hi".to_owned(), claimed: true }]);
/// let entered = instance.pre_step(1, prompt, &cancel).await?.entered.expect("a baseline");
/// assert!(entered.parts[0].contains("Instructions from: AGENTS.md\n\nRun make test."));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct MountBuilder {
    cwd: Utf8PathBuf,
    config: Configured,
    env: HomeEnv,
    trust: Vec<Utf8PathBuf>,
    trust_only: Option<Vec<Utf8PathBuf>>,
    ceiling: Option<Utf8PathBuf>,
    fs: Option<Arc<dyn ProviderFactory>>,
    versions: Versions,
}

impl std::fmt::Debug for MountBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MountBuilder")
            .field("cwd", &self.cwd)
            .field("config", &self.config)
            .field("env", &self.env)
            .field("trust", &self.trust)
            .field("trust_only", &self.trust_only)
            .field("ceiling", &self.ceiling)
            .field("fs", &self.fs.as_ref().map(|_| "..."))
            .field("versions", &self.versions.len())
            .finish()
    }
}

impl MountBuilder {
    /// A mount for the session working directory `cwd` (absolute; it is
    /// normalized lexically, never resolved through links), disabled until
    /// a configuration is given.
    ///
    /// [`MountBuilder::default`] names no cwd yet: what a persisted session
    /// takes, which mounts at the cwd its log was created with.
    pub fn new(cwd: impl Into<Utf8PathBuf>) -> Self {
        Self::default().cwd(cwd)
    }

    /// The session working directory (absolute).
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<Utf8PathBuf>) -> Self {
        self.cwd = cwd.into();
        self
    }

    /// The configuration as the product or person wrote it (R-CFG-1..12),
    /// validated when the mount opens; its ignored entries are
    /// [`Opened::warnings`].
    #[must_use]
    pub fn config(mut self, input: ConfigInput) -> Self {
        self.config = Configured::Input(Box::new(input));
        self
    }

    /// No configuration: the plugin is disabled (R-CFG-1), the default.
    #[must_use]
    pub fn disabled(mut self) -> Self {
        self.config = Configured::Disabled;
        self
    }

    /// A configuration the caller validated already
    /// ([`ConfigInput::resolve`]), mounted as it is: for a caller that needs
    /// it before anything mounts (its `dsh_home`, or an error that names a
    /// flag), so it is resolved once.
    #[must_use]
    pub fn validated(mut self, config: Config) -> Self {
        self.config = Configured::Validated(Box::new(config));
        self
    }

    /// The home variables (`HOME`, `DSH_HOME`) and process cwd the DSH home
    /// and `~/…` entries are resolved from (R-HOME-1/2):
    /// [`HomeEnv::from_process`] in a product. Default: empty, so only an
    /// absolute `dsh_home` in the configuration resolves.
    #[must_use]
    pub fn env(mut self, env: HomeEnv) -> Self {
        self.env = env;
        self
    }

    /// Trusted roots beyond the project root and the DSH home (R-DISC-7): a
    /// product's shared rules directory, the CLI's `--trust`. Absolute;
    /// they replace any given before.
    #[must_use]
    pub fn trust(mut self, roots: impl IntoIterator<Item = Utf8PathBuf>) -> Self {
        self.trust = roots.into_iter().collect();
        self
    }

    /// Exactly these trusted roots, instead of the ones R-DISC-7 derives
    /// (the project root, the DSH home, the user files' directories and
    /// [`MountBuilder::trust`]): for a harness that states its roots, such
    /// as a conformance scenario's `trusted_roots`. Absolute.
    #[must_use]
    pub fn trust_only(mut self, roots: impl IntoIterator<Item = Utf8PathBuf>) -> Self {
        self.trust_only = Some(roots.into_iter().collect());
        self
    }

    /// No ancestor instruction file (R-HOOK-8) above `dir` is read, as
    /// git's ceiling directories bound its search: for a harness whose
    /// filesystem starts at `dir` (a scenario's `/` in a temporary
    /// directory), so the machine's own directories above it never count.
    #[must_use]
    pub fn ceiling(mut self, dir: impl Into<Utf8PathBuf>) -> Self {
        self.ceiling = Some(dir.into());
        self
    }

    /// The filesystem: [`crate::CapStdFactory`] in production, the
    /// in-memory provider in tests. Without one the mount is a no-op
    /// (R-RT-9).
    #[must_use]
    pub fn fs(mut self, factory: impl ProviderFactory + 'static) -> Self {
        self.fs = Some(Arc::new(factory));
        self
    }

    /// Seeds the instance's version cache with what an earlier loop
    /// instance over the same session gave
    /// ([`Instance::remembered_versions`]) and its host persisted. A seed
    /// only lets a read be skipped when the file still probes with that
    /// version *and* the model still sees that scope with that digest
    /// (R-STATE-8), so a stale or foreign entry costs a read, never
    /// context. Entries that are not settled or depend on imports are
    /// ignored.
    #[must_use]
    pub fn remembered(mut self, versions: Vec<(ScopeKey, CacheEntry<FileVersion>)>) -> Self {
        self.versions = versions;
        self
    }

    /// Resolves the DSH home (the configuration's `dsh_home` included),
    /// finds the project root from the cwd (R-DISC-1), opens the provider
    /// on the trusted roots of R-DISC-7 and returns the mount with that
    /// root in it, so the instance computes nothing twice (R-RT-11,
    /// R-DISC-2).
    ///
    /// # Errors
    /// [`RuntimeError`]: an invalid configuration, an unresolvable home, a
    /// relative cwd or root, a root that cannot be opened, or cancellation.
    pub async fn open(&self, cancel: &CancellationToken) -> Result<Opened, RuntimeError> {
        self.check_paths()?;
        let cwd = normalize_lexically(&self.cwd);
        let resolved = match &self.config {
            Configured::Disabled => {
                let home = resolve_dsh_home(None, &self.env)?;
                return Ok(Opened::disabled(cwd, home));
            }
            Configured::Input(input) => input.resolve()?,
            Configured::Validated(config) => ResolvedConfig {
                config: (**config).clone(),
                warnings: Vec::new(),
            },
        };
        let config = resolved.config;
        let home = resolve_dsh_home(config.dsh_home(), &self.env)?;
        let Some(factory) = &self.fs else {
            // No filesystem: a no-op (R-RT-9) that still knows its home.
            let mut opened = Opened::disabled(cwd, home);
            opened.mount.config = Some(config);
            opened.warnings = resolved.warnings;
            return Ok(opened);
        };
        // A zero budget (R-CFG-2) still opens the provider: the instance is
        // a no-op (R-RT-9), while `inspect` can report what would have
        // loaded.
        let walker = factory.marker_walker()?;
        let root =
            find_project_root(walker.as_ref(), &cwd, config.project_root_markers(), cancel).await?;
        let user_files = user_files(config.user_instruction_files(), &self.env);
        // Each user-level file's directory is trusted, for that file and
        // its imports (R-DISC-7, R-HOOK-4): nothing else of the OS home is.
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
        let extra: Vec<Utf8PathBuf> = self
            .trust
            .iter()
            .cloned()
            .chain(user_dirs)
            .chain(user_rules)
            .collect();
        let trusted_roots = match &self.trust_only {
            Some(roots) => roots.clone(),
            None => trusted_roots(&root.root, &home, &extra),
        };
        // The directories above the root admit their ancestor files by name
        // only (R-HOOK-8, docs/decisions/0044): they are no trusted roots.
        let names = config.ancestor_instruction_files();
        let provider = if names.is_empty() {
            factory.open(&trusted_roots)?
        } else {
            let mut dirs = ancestor_dirs(&root.root);
            if let Some(top) = &self.ceiling {
                dirs.retain(|d| d.starts_with(top));
            }
            factory.open_with_names(&trusted_roots, &dirs, names)?
        };
        Ok(Opened {
            mount: Mount {
                config: Some(config),
                provider: Some(provider),
                home,
                root: Some(root),
                user_files,
            },
            cwd,
            trusted_roots,
            warnings: resolved.warnings,
            versions: self.versions.clone(),
        })
    }

    /// The cwd and the extra roots must be absolute (R-RT-11).
    fn check_paths(&self) -> Result<(), RuntimeError> {
        if !self.cwd.is_absolute() {
            return Err(RuntimeError::RelativeCwd {
                path: self.cwd.clone(),
            });
        }
        let roots = self.trust.iter().chain(self.trust_only.iter().flatten());
        if let Some(r) = roots.into_iter().find(|r| !r.is_absolute()) {
            return Err(RuntimeError::RelativeRoot { path: r.clone() });
        }
        Ok(())
    }
}

/// A mount opened by [`MountBuilder::open`]: configuration, provider, home
/// and project root, consistent with each other, and how they were
/// derived.
#[derive(Debug, Clone)]
pub struct Opened {
    mount: Mount,
    cwd: Utf8PathBuf,
    trusted_roots: Vec<Utf8PathBuf>,
    warnings: Vec<ConfigWarning>,
    versions: Versions,
}

impl Opened {
    fn disabled(cwd: Utf8PathBuf, home: DshHome) -> Self {
        Self {
            mount: Mount {
                config: None,
                provider: None,
                home,
                root: None,
                user_files: Vec::new(),
            },
            cwd,
            trusted_roots: Vec::new(),
            warnings: Vec::new(),
            versions: Vec::new(),
        }
    }

    /// Starts a loop instance over `host` (R-RT-6): a new instance over the
    /// same history is a resume. With no configuration, a disabled budget
    /// or no filesystem it is a no-op that never fails the loop (R-RT-9).
    ///
    /// # Errors
    /// [`RuntimeError::NoRuntime`] outside a Tokio runtime — also for a
    /// no-op mount, so an embedding mistake shows up whatever the
    /// configuration.
    pub fn instance(&self, host: Arc<dyn Host>) -> Result<Instance, RuntimeError> {
        Instance::mount_remembering(self.mount.clone(), host, self.versions.clone())
    }

    /// A hot remount (R-RT-7): disposes `previous` and starts an instance
    /// of this mount over `host` (another configuration, say) that takes
    /// over `previous`'s pending message — the inbox is kept across a hot
    /// remount, lost on a resume ([`Opened::instance`]).
    ///
    /// # Errors
    /// As [`Opened::instance`].
    pub fn remount(
        &self,
        previous: &Instance,
        host: Arc<dyn Host>,
    ) -> Result<Instance, RuntimeError> {
        previous.remount(self.mount.clone(), host)
    }

    /// The project root found for the cwd (`None` when disabled or without
    /// a filesystem).
    pub fn root(&self) -> Option<&ProjectRoot> {
        self.mount.root.as_ref()
    }

    /// The session cwd, normalized lexically.
    pub fn cwd(&self) -> &Utf8Path {
        &self.cwd
    }

    /// The trusted roots the provider was opened on, in order: project
    /// root, DSH home, then the extra roots. Empty when disabled.
    pub fn trusted_roots(&self) -> &[Utf8PathBuf] {
        &self.trusted_roots
    }

    /// Configuration entries validation ignored (R-CFG-4), for a log or a
    /// CLI to print.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// The validated configuration (`None`: disabled).
    pub fn config(&self) -> Option<&Config> {
        self.mount.config.as_ref()
    }

    /// The resolved DSH home.
    pub fn home(&self) -> &DshHome {
        &self.mount.home
    }

    /// The provider opened on the trusted roots (`None`: disabled or no
    /// filesystem): for a caller that probes or reads with exactly the
    /// confinement the instance has.
    pub fn provider(&self) -> Option<&Arc<dyn FsProvider>> {
        self.mount.provider.as_ref()
    }

    /// Configuration, provider and root, or why there is nothing to look
    /// at.
    fn looking(&self) -> Result<(&dyn FsProvider, &Config, &ProjectRoot), RuntimeError> {
        match (&self.mount.provider, &self.mount.config, &self.mount.root) {
            (Some(p), Some(c), Some(r)) => Ok((p.as_ref(), c, r)),
            _ => Err(RuntimeError::Disabled),
        }
    }

    /// Everything `explain` and `check` show for the cwd: every candidate's
    /// fate and the baseline the model would get (R-CLI-2, R-CLI-3).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// use dsh_instructions_runtime::{MountBuilder, discovery::{CancellationToken, memory::{MemNode, MemoryProvider}}};
    /// use dsh_instructions_runtime::{home::HomeEnv, state::Config};
    ///
    /// let fs = MemoryProvider::new(vec!["/".into()]);
    /// fs.insert("/repo/.git".into(), MemNode::dir());
    /// fs.insert("/repo/AGENTS.md".into(), MemNode::file("Use tabs."));
    /// let env = HomeEnv { home: Some("/home/u".into()), ..Default::default() };
    /// let cancel = CancellationToken::new();
    /// let opened = MountBuilder::new("/repo")
    ///     .validated(Config::with_max_bytes(65_536))
    ///     .env(env)
    ///     .fs(fs)
    ///     .open(&cancel)
    ///     .await?;
    /// let seen = opened.inspect(&cancel).await?;
    /// assert!(seen.baseline.text.contains("Instructions from: AGENTS.md\n\nUse tabs."));
    /// // `show` renders the same baseline, without the per-candidate report.
    /// assert_eq!(opened.preview(&cancel).await?, seen.baseline);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RuntimeError::Disabled`]; [`RuntimeError::Cancelled`].
    pub async fn inspect(&self, cancel: &CancellationToken) -> Result<Inspection, RuntimeError> {
        self.composed(cancel, true).await
    }

    /// The baseline the model would get at the cwd, without the
    /// per-candidate report (`show`, R-CLI-1).
    ///
    /// # Errors
    /// As [`Opened::inspect`].
    pub async fn preview(&self, cancel: &CancellationToken) -> Result<Preview, RuntimeError> {
        Ok(self.composed(cancel, false).await?.baseline)
    }

    /// Runs the composition (`inspect`, or with `report` off the baseline
    /// alone) on one pool thread when the provider is pooled
    /// ([`Opened::offloaded`]), here otherwise.
    async fn composed(
        &self,
        cancel: &CancellationToken,
        report: bool,
    ) -> Result<Inspection, RuntimeError> {
        if let Some(job) = self.offloaded(cancel) {
            return Ok(offload(cancel, move || async move {
                let (fs, config, home, cwd, root, cancel) = job.parts();
                crate::inspect::inspect(fs, config, home, cwd, root, cancel, report).await
            })
            .await?);
        }
        let (provider, config, root) = self.looking()?;
        let home = self.home();
        Ok(
            crate::inspect::inspect(provider, config, home, &self.cwd, root, cancel, report)
                .await?,
        )
    }

    /// What a composition needs, owned, when the provider hands each call
    /// to the blocking pool: the whole composition then runs on one pool
    /// thread, its calls inline there, one hand-off in all instead of one
    /// per call (decision 0092).
    fn offloaded(&self, cancel: &CancellationToken) -> Option<Job> {
        let (Some(fs), Some(config), Some(root)) =
            (&self.mount.provider, &self.mount.config, &self.mount.root)
        else {
            return None;
        };
        fs.pooled().then(|| Job {
            fs: Arc::clone(fs),
            config: config.clone(),
            home: self.home().clone(),
            cwd: self.cwd.clone(),
            root: root.clone(),
            cancel: cancel.clone(),
        })
    }

    /// The rule files around the cwd and which of them `touches` (absolute
    /// paths) would attach (R-RULE-1..3), for `explain` and `check`: in
    /// each directory of the chain root→cwd, the user's `~/.claude/rules/`
    /// and Copilot's root file, plus the directories between the chain
    /// and each touched path. Nothing when `rule_formats` is empty.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// use dsh_instructions_runtime::{MountBuilder, report::RuleFate};
    /// use dsh_instructions_runtime::discovery::{CancellationToken, camino::Utf8Path, memory::{MemNode, MemoryProvider}};
    /// use dsh_instructions_runtime::{home::HomeEnv, state::ConfigInput};
    ///
    /// let fs = MemoryProvider::new(vec!["/".into()]);
    /// fs.insert("/p/.git".into(), MemNode::dir());
    /// fs.insert("/p/.claude/rules/ts.md".into(), MemNode::file("---\npaths: \"*.ts\"\n---\nTS."));
    /// let config: ConfigInput = serde_json::from_str(r#"{"max_bytes": 1000, "rule_formats": ["claude"]}"#)?;
    /// let env = HomeEnv { dsh_home: Some("/h/.dsh".into()), ..Default::default() };
    /// let cancel = CancellationToken::new();
    /// let opened = MountBuilder::new("/p").config(config).env(env).fs(fs).open(&cancel).await?;
    /// let touch = [Utf8Path::new("/p/src/a.ts").to_owned()];
    /// let seen = opened.inspect_rules(&touch, &cancel).await?;
    /// assert_eq!(seen.rules[0].path, ".claude/rules/ts.md");
    /// assert_eq!(seen.rules[0].fate, RuleFate::PathScoped { globs: vec!["*.ts".into()] });
    /// assert!(!seen.rules[0].attached_at_cwd);
    /// assert_eq!(seen.rules[0].attached_by, touch);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Opened::inspect`].
    pub async fn inspect_rules(
        &self,
        touches: &[Utf8PathBuf],
        cancel: &CancellationToken,
    ) -> Result<InspectedRules, RuntimeError> {
        let (provider, config, root) = self.looking()?;
        let home = self.home();
        Ok(crate::rules::inspect_rules(
            provider, config, home, &self.cwd, &root.root, touches, cancel,
        )
        .await?)
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

/// An offloaded composition's inputs ([`Opened::offloaded`]).
struct Job {
    fs: Arc<dyn FsProvider>,
    config: Config,
    home: DshHome,
    cwd: Utf8PathBuf,
    root: ProjectRoot,
    cancel: CancellationToken,
}

impl Job {
    /// Borrowed as the compositions take them.
    fn parts(
        &self,
    ) -> (
        &dyn FsProvider,
        &Config,
        &DshHome,
        &Utf8Path,
        &ProjectRoot,
        &CancellationToken,
    ) {
        (
            self.fs.as_ref(),
            &self.config,
            &self.home,
            &self.cwd,
            &self.root,
            &self.cancel,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_home_paths::HomeLabel;
    use dsh_instructions_discovery::{
        memory::{MemNode, MemoryProvider},
        provider::{Probe, Unavailable},
        root::RootReason,
    };
    use dsh_instructions_state::{Preset, config::NumberInput};
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

    async fn open(b: MountBuilder) -> Result<Opened, RuntimeError> {
        b.fs(fs()).open(&CancellationToken::new()).await
    }

    fn builder(cwd: &str, config: Option<ConfigInput>, env: HomeEnv) -> MountBuilder {
        let b = MountBuilder::new(cwd).env(env);
        match config {
            Some(c) => b.config(c),
            None => b,
        }
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
        let spec = builder("/w/repo/pkg/src", Some(input(markers)), env());
        let opened = open(spec).await.expect("opens");
        let found = opened.root().expect("a root");
        assert_eq!(found.root, root);
        assert_eq!(
            found.reason,
            RootReason::Marker {
                marker: marker.into()
            }
        );
        assert_eq!(opened.trusted_roots(), [root, "/home/u/.dsh"]);
        let config = opened.config().expect("config");
        assert!(config.project_root_markers().iter().all(|m| m != ".git/"));
    }

    #[tokio::test]
    async fn home_comes_from_the_configured_dsh_home() {
        let mut config = input(&[".git"]);
        config.dsh_home = Some("~/rules".into());
        let spec =
            builder("/w/repo", Some(config), env()).trust(["/opt/shared".into(), "/w/repo".into()]);
        let opened = open(spec).await.expect("opens");
        assert_eq!(opened.mount.home.path, "/home/u/rules");
        assert_eq!(opened.mount.home.label, HomeLabel::EnvVar);
        assert_eq!(
            opened.trusted_roots(),
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
        let spec = builder("/w/repo", Some(config), env());
        let opened = open(spec).await.expect("opens");
        assert_eq!(
            opened.mount.user_files,
            [UserFile {
                path: "/home/u/.claude/CLAUDE.md".into(),
                label: "~/.claude/CLAUDE.md".into(),
            }]
        );
        assert_eq!(
            opened.trusted_roots(),
            ["/w/repo", "/home/u/.dsh", "/home/u/.claude"]
        );
        // The dsh preset adds nothing.
        let spec = builder("/w/repo", Some(input(&[".git"])), env());
        let opened = open(spec).await.expect("opens");
        assert!(opened.mount.user_files.is_empty());
        assert_eq!(opened.trusted_roots(), ["/w/repo", "/home/u/.dsh"]);
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
        let spec = builder("/w/repo", Some(config), env());
        let opened = open(spec).await.expect("opens");
        assert_eq!(
            opened.trusted_roots(),
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
        let spec = builder("/w/repo", Some(config), env());
        let opened = spec
            .fs(fs.clone())
            .open(&CancellationToken::new())
            .await
            .expect("opens");
        assert_eq!(
            opened.trusted_roots(),
            ["/w/repo", "/home/u/.dsh", "/home/u/.claude"],
            "no ancestor is a trusted root"
        );
        let provider = opened.mount.provider.clone().expect("a provider");
        let cancel = CancellationToken::new();
        let probe = |p: &'static str| provider.probe(Utf8Path::new(p), &cancel);
        assert!(matches!(probe("/w/CLAUDE.md").await, Ok(Probe::Present(_))));
        assert_eq!(
            probe("/w/notes.md").await,
            Ok(Probe::Unavailable(Unavailable::OutsideTrustedRoots))
        );
        // Without the field the directories above stay closed.
        let spec = builder("/w/repo", Some(input(&[".git"])), env());
        let opened = spec
            .fs(fs.clone())
            .open(&CancellationToken::new())
            .await
            .expect("opens");
        let provider = opened.mount.provider.clone().expect("a provider");
        assert_eq!(
            provider.probe(Utf8Path::new("/w/CLAUDE.md"), &cancel).await,
            Ok(Probe::Unavailable(Unavailable::OutsideTrustedRoots))
        );
    }

    #[tokio::test]
    async fn no_config_opens_nothing() {
        let spec = builder("/w/repo", None, env());
        let opened = open(spec).await.expect("opens");
        assert!(opened.mount.provider.is_none());
        assert!(opened.root().is_none());
        assert!(opened.trusted_roots().is_empty());
    }

    #[tokio::test]
    async fn a_zero_budget_mounts_an_inactive_instance() {
        let config = ConfigInput {
            max_bytes: Some(NumberInput::Int(0)),
            ..ConfigInput::default()
        };
        let opened = open(builder("/w/repo", Some(config), env()))
            .await
            .expect("opens");
        assert!(opened.mount.provider.is_some(), "inspect can still look");
        let host = std::sync::Arc::new(crate::memory_host::MemoryHost::new("/w/repo".into()));
        let instance = opened.instance(host).expect("inside a runtime");
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
        let spec = builder(cwd, config, env());
        let error = open(spec).await.expect_err("refused");
        assert!(error.to_string().contains(message), "{error}");
    }

    #[tokio::test]
    async fn a_relative_extra_root_is_refused() {
        let spec = builder("/w/repo", Some(input(&[".git"])), env()).trust(["shared".into()]);
        let error = open(spec).await.expect_err("refused");
        assert!(
            matches!(error, RuntimeError::RelativeRoot { .. }),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn cancellation_is_reported() {
        let spec = builder("/w/repo", Some(input(&[".git"])), env());
        let cancel = CancellationToken::new();
        cancel.cancel();
        let error = spec.fs(fs()).open(&cancel).await.expect_err("cancelled");
        assert!(matches!(error, RuntimeError::Cancelled));
    }
}
