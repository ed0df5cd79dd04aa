#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

// The facade is an embedder's only dependency, so its root holds every name
// of the production path (the mount entry, the session, configuration, the
// instance over an own host) by one short path; what only an implementation
// of `FsProvider` or `Host` names, and the inspection reports, live in the
// modules below (docs/architecture.md, "Root names").

pub use dsh_home_paths::{DshHome, HomeEnv};
pub use dsh_instructions_discovery::cap_std::ambient_authority;
pub use dsh_instructions_discovery::{CancellationToken, Cancelled, FsProvider};
pub use dsh_instructions_runtime::{
    BatchEntry, BatchItem, CapStdFactory, Decision, Host, Instance, MountBuilder, Opened,
    PreStepOutcome, ProviderFactory, RuntimeError, SessionEvent, ToolExecution, TouchKind,
    WorkspaceMessage,
};
pub use dsh_instructions_session::{
    LogHost, Record, Session, SessionError, SessionSettings, SessionStore,
};
pub use dsh_instructions_state::{Budget, Config, ConfigInput, Preset, StateError, TypedSource};

/// The configuration's vocabulary beyond [`ConfigInput`], [`Config`] and
/// [`Preset`]: the field types of the input and what validation reports.
pub mod config {
    pub use dsh_instructions_state::config::{
        CandidatePolicy, ConfigWarning, ContentTransform, FallbackScope, NumberInput,
        ResolvedConfig, RuleFormat,
    };
}

/// Everything an implementation of [`FsProvider`] names (its methods'
/// arguments and results, and what those are built from), so an embedder
/// can bring its own filesystem with this crate alone. The in-memory
/// provider (feature `test-support`) is one such implementation.
pub mod fs {
    pub use camino::{Utf8Path, Utf8PathBuf};
    #[cfg(feature = "test-support")]
    pub use dsh_instructions_discovery::memory::{MemNode, MemoryProvider};
    pub use dsh_instructions_discovery::provider::{
        BoxFuture, FileIdentity, FileVersion, LoadedText, MAX_LINK_HOPS, MarkerProbe, PathKind,
        PresentFile, Probe, ReadOutcome, Unavailable,
    };
    pub use dsh_instructions_discovery::{DiscoveryError, ProjectRoot, root::RootReason};
}

/// Everything an implementation of [`Host`] names beyond the root: the
/// visible surface and its marks, the kept fold, the typed source a
/// workspace message carries, and the reference in-memory host.
pub mod host {
    pub use dsh_instructions_runtime::host_support::{
        HistoryItem, MemoryHost, ViewSnapshot, VisibleMark, VisibleUpdate,
    };
    pub use dsh_instructions_state::Digest;
    pub use dsh_instructions_state::source::{Action, Change};
}

/// What a session's log reports when it fails ([`SessionError::Log`]), how
/// long a [`SessionStore`] waits for a session's lock (R-LOG-4) and the ids
/// it names new sessions with, so a product can tell a busy session from a
/// damaged one with this crate alone.
pub mod log {
    pub use dsh_instructions_session::log::{LockWait, LogError, new_session_id};
}

/// What `explain`, `check` and `show` report ([`Opened::inspect`],
/// [`Opened::preview`], [`Opened::inspect_rules`]).
pub mod report {
    pub use dsh_instructions_runtime::report::*;
}
