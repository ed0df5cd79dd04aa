//! Driving the runtime the way a product does: a mount's `preview()` for a baseline
//! (the `show` job), an [`Instance`] over a [`MemoryHost`] for touches and
//! pre-step revalidation.

use std::io;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeEnv, HomeLabel};
use dsh_instructions_discovery::{
    CancellationToken, CapStdProvider, FsProvider, cap_std::ambient_authority,
};
use dsh_instructions_runtime::{
    BatchItem, Decision, Host, Instance, MountBuilder, Opened, ToolExecution, WorkspaceMessage,
    host_support::MemoryHost, report::Preview,
};
use dsh_instructions_state::{
    Config, Digest, ScopeKey, TypedSource,
    scope::SLOT_BASE,
    source::{Action, Change},
};

use super::tree::{Shape, Tree, package_rel};

/// The runtime the CLI uses: one thread (file work inline on it, or on the
/// blocking pool for [`pooled_disk`]).
///
/// # Panics
///
/// When tokio cannot start (bench setup, not input).
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Default config with `max_bytes`.
pub(crate) fn config(max_bytes: i64) -> Config {
    Config::with_max_bytes(max_bytes)
}

/// The configuration of the import cases: the defaults with imports on.
///
/// # Panics
///
/// Never: the input is a valid configuration.
pub(crate) fn imports_config() -> Config {
    let input = dsh_instructions_state::ConfigInput {
        max_bytes: Some(dsh_instructions_state::config::NumberInput::Int(65_536)),
        imports: Some(true),
        ..Default::default()
    };
    input.resolve().expect("a valid configuration").config
}

/// The tree's DSH home.
pub(crate) fn home(tree: &Tree) -> DshHome {
    DshHome {
        path: tree.home.clone(),
        label: HomeLabel::Default,
    }
}

/// A cap-std provider trusting the project root and the home, as the CLI
/// and the hook open it: inline, every filesystem call on the calling
/// thread (neither ever cancels a composition).
///
/// # Errors
///
/// When a root cannot be opened.
pub(crate) fn disk(tree: &Tree) -> io::Result<Arc<dyn FsProvider>> {
    open_disk(tree, true)
}

/// [`disk`] with every filesystem call on tokio's blocking pool, as an
/// embedder that must be able to abandon a stuck call opens it: the rows
/// that use it show what those thread hand-offs cost.
///
/// # Errors
///
/// When a root cannot be opened.
pub(crate) fn pooled_disk(tree: &Tree) -> io::Result<Arc<dyn FsProvider>> {
    open_disk(tree, false)
}

fn open_disk(tree: &Tree, inline: bool) -> io::Result<Arc<dyn FsProvider>> {
    CapStdProvider::new([tree.root.clone(), tree.home.clone()], ambient_authority())
        .map(|p| Arc::new(p.run_inline(inline)) as Arc<dyn FsProvider>)
        .map_err(io::Error::other)
}

/// The `show` job: a complete baseline for the tree's cwd.
///
/// # Panics
///
/// Never cancelled, so never.
pub(crate) async fn show(provider: Arc<dyn FsProvider>, tree: &Tree, max_bytes: i64) -> Preview {
    show_with(provider, tree, &config(max_bytes)).await
}

/// [`show`] with a given configuration (imports on, for instance).
///
/// # Panics
///
/// Never cancelled, so never.
pub(crate) async fn show_with(
    provider: Arc<dyn FsProvider>,
    tree: &Tree,
    config: &Config,
) -> Preview {
    let cancel = CancellationToken::new();
    open(provider, tree, &tree.cwd, config.clone())
        .await
        .preview(&cancel)
        .await
        .expect("not cancelled")
}

/// Mounts `cwd` over `provider` as it is (the root walk and the content
/// through it) through the one entry, as the CLI does.
///
/// # Panics
///
/// Never: the tree's paths are absolute and nothing is cancelled.
pub(crate) async fn open(
    provider: Arc<dyn FsProvider>,
    tree: &Tree,
    cwd: &Utf8Path,
    config: Config,
) -> Opened {
    MountBuilder::new(cwd)
        .validated(config)
        .env(HomeEnv {
            home: tree.home.parent().map(|p| p.as_str().into()),
            ..HomeEnv::default()
        })
        .fs(provider)
        .open(&CancellationToken::new())
        .await
        .expect("opens")
}

/// A session at the project root, driven through pre-steps and touches.
#[derive(Debug)]
pub(crate) struct Session {
    /// The reference host.
    pub host: Arc<MemoryHost>,
    instance: Instance,
    step: u32,
}

impl Session {
    /// Mounts an instance at `cwd` and runs the first pre-step (baseline).
    /// Call inside the runtime.
    pub(crate) async fn start(
        provider: Arc<dyn FsProvider>,
        tree: &Tree,
        cwd: &Utf8Path,
        max_bytes: i64,
    ) -> Self {
        Self::start_with(provider, tree, cwd, config(max_bytes)).await
    }

    /// [`Session::start`] with a given configuration.
    pub(crate) async fn start_with(
        provider: Arc<dyn FsProvider>,
        tree: &Tree,
        cwd: &Utf8Path,
        config: Config,
    ) -> Self {
        let host = Arc::new(MemoryHost::new(cwd.to_owned()));
        let instance = open(provider, tree, cwd, config)
            .await
            .instance(host.clone() as Arc<dyn Host>)
            .expect("mounted inside a runtime");
        let mut session = Self {
            host,
            instance,
            step: 0,
        };
        session
            .pre_step(Decision::Enter(vec![BatchItem {
                message: "start".to_owned(),
                claimed: true,
            }]))
            .await;
        session
    }

    async fn pre_step(&mut self, decision: Decision<String>) -> Option<WorkspaceMessage> {
        self.step += 1;
        let out = self
            .instance
            .pre_step(self.step, decision, &CancellationToken::new())
            .await
            .expect("not cancelled");
        if let Some(batch) = &out.batch {
            self.host.append_batch(batch);
        }
        out.entered
    }

    /// A successful `read` of `file`, then the tool continuation's pre-step
    /// (which waits for the projection and enters its message).
    pub(crate) async fn touch(&mut self, file: &Utf8Path) -> Option<WorkspaceMessage> {
        self.instance.tool_result(&ToolExecution {
            name: "read".to_owned(),
            arguments: serde_json::json!({ "file_path": file.as_str() }),
            token: format!("t{}", self.step),
            parent: None,
            is_error: false,
            cancelled: false,
        });
        self.pre_step(Decision::Enter(Vec::new())).await
    }

    /// A pre-step with nothing pending: revalidates every known scope
    /// (R-RT-10).
    pub(crate) async fn revalidate(&mut self) -> Option<WorkspaceMessage> {
        self.pre_step(Decision::Enter(Vec::new())).await
    }
}

/// The file a touch of package `p` reads.
pub(crate) fn package_file(tree: &Tree, p: usize) -> Utf8PathBuf {
    tree.root.join(package_rel(p)).join("src/lib.rs")
}

/// The `k`-th package a touch sequence reaches: a permutation of the
/// packages (7 is coprime with every package count used).
pub(crate) fn nth_package(k: usize, packages: usize) -> usize {
    (k * 7 + 3) % packages
}

/// Visible state as if every package of a wide tree had been touched and
/// loaded: one message with a `set` per package `AGENTS.md` (the oversized
/// one is unavailable and left out). Digests are computed from the
/// generator, not from the runtime.
pub(crate) fn all_packages_loaded(tree: &Tree) -> TypedSource {
    let Shape::Wide { packages } = tree.shape else {
        return TypedSource::default();
    };
    let changes = (0..packages)
        .filter(|p| *p != packages / 2)
        .map(|p| {
            let rel = package_rel(p);
            Change {
                action: Action::Set,
                scope: ScopeKey::project(&rel, SLOT_BASE),
                path: format!("{rel}/AGENTS.md"),
                previous_path: None,
                digest: Some(Digest::of(&tree.package_text(p))),
            }
        })
        .collect();
    TypedSource {
        baseline: false,
        baseline_identity: None,
        changes,
    }
}

/// Packages edited before touch `k`: 1% of those already touched (at least
/// one), spread deterministically; the quick
/// pass and the profile bench edit the same packages.
pub(crate) fn edits_before(k: usize, packages: usize) -> Vec<usize> {
    if k == 0 {
        return Vec::new();
    }
    let n = k.div_ceil(100);
    (0..n)
        .map(|i| nth_package((k * 31 + i * 97) % k, packages))
        .collect()
}
