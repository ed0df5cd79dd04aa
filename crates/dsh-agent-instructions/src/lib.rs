#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub use dsh_home_paths::{DshHome, HomeEnv, HomeError, HomeLabel};
pub use dsh_instructions_discovery::{
    AmbientAuthority, CancellationToken, Cancelled, CapStdProvider, DirMemory, FsProvider,
    ProjectRoot, RootReason, ambient_authority,
};
#[cfg(feature = "test-support")]
pub use dsh_instructions_discovery::{MemNode, MemoryProvider};
pub use dsh_instructions_runtime::{
    BatchEntry, BatchItem, CandidateFate, CapStdFactory, Decision, Host, ImportFate,
    InspectedCandidate, InspectedImport, Inspection, Instance, MemoryHost, Mount, MountError,
    OpenError, Opened, PreStepOutcome, Preview, ProviderFactory, SessionEvent, SessionSpec,
    ToolExecution, TouchKind, WorkspaceMessage, inspect, open_mount, preview,
};
pub use dsh_instructions_session::{
    LogHost, Record, Session, SessionError, SessionSettings, SessionStore,
};
pub use dsh_instructions_state::{
    Action, Budget, CandidatePolicy, Change, Config, ConfigError, ConfigInput, ConfigWarning,
    ContentTransform, FallbackScope, NumberInput, Preset, TypedSource,
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

/// Everything an implementation of [`Host`] names: the visible
/// surface and its marks, and the typed source a workspace message carries,
/// so an embedder can keep history in its own store with this crate alone
/// ([`MemoryHost`] is the reference implementation).
pub mod host {
    pub use camino::Utf8PathBuf;
    pub use dsh_instructions_runtime::{
        Host, ViewSnapshot, VisibleMark, VisibleUpdate, WorkspaceMessage,
    };
    pub use dsh_instructions_state::{Action, Change, Digest, TypedSource};
}
