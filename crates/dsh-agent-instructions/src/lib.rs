#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub use dsh_home_paths::{DshHome, HomeEnv, HomeError, HomeLabel};
pub use dsh_instructions_discovery::{
    AmbientAuthority, CancellationToken, Cancelled, CapStdProvider, FsProvider, MemNode,
    MemoryProvider, ProjectRoot, RootReason, ambient_authority,
};
pub use dsh_instructions_runtime::{
    BatchEntry, BatchItem, CandidateFate, CapStd, Decision, Host, InspectedCandidate, Inspection,
    Instance, MemoryHost, Mount, MountError, OpenError, Opened, PreStepOutcome, Preview,
    ProviderFactory, SessionEvent, SessionSpec, ToolExecution, WorkspaceMessage, inspect,
    open_mount, preview,
};
pub use dsh_instructions_session::{LogHost, Session, SessionError, SessionSettings, SessionStore};
pub use dsh_instructions_state::{
    Action, CandidatePolicy, Change, Config, ConfigError, ConfigInput, ConfigWarning, Preset,
    TypedSource,
};
