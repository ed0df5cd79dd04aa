//! Workspace instruction files for coding agents, behind one dependency.
//!
//! A product that wants `AGENTS.md` / `CLAUDE.md` / `*.local.md` overlays and
//! one user-global file delivered to its model as bounded, always-current
//! context depends on this crate alone. Its root re-exports exactly the
//! names an embedder needs, each reachable by this one path:
//!
//! | to | use |
//! |---|---|
//! | keep a persisted session (the production path) | [`SessionStore`], [`SessionSettings`], [`Session`], [`Record`] |
//! | mount on a real directory (R-RT-11) | [`open_mount`] with a [`SessionSpec`], [`CapStdFactory`] and [`ambient_authority`] |
//! | run the adapter over your own host | [`Instance`], [`Host`], [`Decision`], [`BatchItem`], [`ToolExecution`], [`TouchKind`], [`SessionEvent`] |
//! | configure | [`ConfigInput`], [`Preset`], [`Config`], [`Budget`] |
//! | show a person what loads and why | [`inspect`], [`preview`] |
//! | test without a filesystem | [`MemoryProvider`], [`MemNode`], [`MemoryHost`] |
//!
//! Everything else lives in the layer crates (SPEC §2) a product may also
//! depend on directly: `dsh-home-paths`, `dsh-instructions-discovery`,
//! `dsh-instructions-render`, `dsh-instructions-state`,
//! `dsh-instructions-runtime`, `dsh-session-log`, `dsh-instructions-session`.
//!
//! # The production path: a persisted session on a real directory
//!
//! ```
//! use dsh_agent_instructions::{
//!     ambient_authority, CancellationToken, CapStdFactory, ConfigInput, HomeEnv, Preset, Record, Session,
//!     SessionSettings, SessionStore, TouchKind,
//! };
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let tmp = tempfile::tempdir()?;
//! let base = camino::Utf8PathBuf::try_from(tmp.path().to_path_buf())?;
//! std::fs::create_dir_all(base.join("repo/.git"))?;
//! std::fs::create_dir_all(base.join("repo/pkg"))?;
//! std::fs::write(base.join("repo/AGENTS.md"), "Run the tests.")?;
//! std::fs::write(base.join("repo/pkg/AGENTS.md"), "Use pnpm.")?;
//! let env = HomeEnv { home: Some(base.join("home").into_string().into()), ..HomeEnv::from_process()? };
//!
//! let store = SessionStore::new(base.join("home/.dsh/sessions"));
//! let settings = SessionSettings {
//!     config: Some(ConfigInput { preset: Some(Preset::Dsh), ..Default::default() }),
//!     ..Default::default()
//! };
//! let (fs, cancel) = (CapStdFactory::new(ambient_authority()), CancellationToken::new());
//!
//! // A turn's first step: the baseline is folded in after the prompt.
//! let log = store.create("s1", base.join("repo"), &settings)?;
//! let session = Session::mount(log, &settings, &env, &fs, &cancel).await?;
//! let baseline = session.prompt("hi".into(), &cancel).await?.expect("baseline");
//! assert!(baseline.joined_text().contains("Instructions from: AGENTS.md\n\nRun the tests."));
//!
//! // A tool read below the cwd: the nested file enters at the continuation.
//! session.touch("pkg/index.ts".into(), TouchKind::Read, Record::Keep).await?;
//! let set = session.step_end(&cancel).await?.expect("a set");
//! assert_eq!(set.source.changes[0].path, "pkg/AGENTS.md");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Over your own host, in memory
//!
//! ```
//! use std::sync::Arc;
//! use dsh_agent_instructions::{
//!     BatchEntry, BatchItem, CancellationToken, Config, Decision, DshHome, HomeLabel, Instance,
//!     MemNode, MemoryHost, MemoryProvider, Mount,
//! };
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
//! fs.insert("/repo/.git".into(), MemNode::dir());
//! fs.insert("/repo/AGENTS.md".into(), MemNode::file("Run the tests."));
//!
//! let host = Arc::new(MemoryHost::new("/repo".into()));
//! let instance = Instance::mount(
//!     Mount {
//!         config: Some(Config::with_max_bytes(65_536)),
//!         provider: Some(Arc::new(fs)),
//!         home: DshHome { path: "/home/u/.dsh".into(), label: HomeLabel::Default },
//!         root: None,
//!         user_files: Vec::new(),
//!     },
//!     host.clone(),
//! )?;
//!
//! let prompt = BatchItem { message: "hi".to_string(), claimed: true };
//! let outcome = instance
//!     .pre_step(1, Decision::Enter(vec![prompt]), &CancellationToken::new())
//!     .await?;
//! let batch = outcome.batch.unwrap_or_default();
//! assert!(matches!(&batch[0], BatchEntry::Host(text) if text == "hi"));
//! let BatchEntry::Workspace(message) = &batch[1] else { panic!("baseline not folded") };
//! assert!(message.source.baseline);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub use dsh_home_paths::{DshHome, HomeEnv, HomeError, HomeLabel};
pub use dsh_instructions_discovery::{
    AmbientAuthority, CancellationToken, Cancelled, CapStdProvider, FsProvider, ProjectRoot,
    RootReason, ambient_authority,
};
#[cfg(feature = "test-support")]
pub use dsh_instructions_discovery::{MemNode, MemoryProvider};
pub use dsh_instructions_runtime::{
    BatchEntry, BatchItem, CandidateFate, CapStdFactory, Decision, Host, InspectedCandidate,
    Inspection, Instance, MemoryHost, Mount, MountError, OpenError, Opened, PreStepOutcome,
    Preview, ProviderFactory, SessionEvent, SessionSpec, ToolExecution, TouchKind,
    WorkspaceMessage, inspect, open_mount, preview,
};
pub use dsh_instructions_session::{
    LogHost, Record, Session, SessionError, SessionSettings, SessionStore,
};
pub use dsh_instructions_state::{
    Action, Budget, CandidatePolicy, Change, Config, ConfigError, ConfigInput, ConfigWarning,
    Preset, TypedSource,
};

/// Everything an implementation of [`FsProvider`] names (its methods'
/// arguments and results, and what those are built from), so an embedder
/// can bring its own filesystem with this crate alone. The in-memory
/// provider (feature `test-support`) is one such implementation.
pub mod fs {
    pub use camino::{Utf8Path, Utf8PathBuf};
    pub use dsh_instructions_discovery::{
        BoxFuture, CancellationToken, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText,
        MAX_LINK_HOPS, MarkerProbe, PathKind, PresentFile, Probe, ProviderError, ReadOutcome,
        Unavailable,
    };
    pub use dsh_instructions_runtime::{OpenError, ProviderFactory};
}

/// Everything an implementation of [`Host`] names: the inbox, the visible
/// surface and its marks, and the typed source a workspace message carries,
/// so an embedder can keep history in its own store with this crate alone
/// ([`MemoryHost`] is the reference implementation).
pub mod host {
    pub use camino::Utf8PathBuf;
    pub use dsh_instructions_runtime::{
        Host, InboxId, VisibleMark, VisibleUpdate, WorkspaceMessage,
    };
    pub use dsh_instructions_state::{Action, Change, Digest, TypedSource};
}
