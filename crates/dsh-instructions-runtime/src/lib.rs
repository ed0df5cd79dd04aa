#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod ancestors;
mod compose;
mod dir_path;
mod error;
mod gather;
mod host;
mod imports;
mod inbox;
mod inspect;
mod instance;
mod maps;
mod memory_host;
mod open;
mod pointer;
mod rule_slots;
mod rules;
mod scan;
mod shell;
mod slots;
mod touch;
mod user_file;
mod view;

pub use error::MountError;
pub use host::{
    BatchEntry, BatchItem, Decision, Host, SessionEvent, ToolExecution, ViewSnapshot, VisibleMark,
    VisibleUpdate, WorkspaceMessage,
};
pub use imports::{ImportFate, InspectedImport};
pub use inspect::{CandidateFate, InspectedCandidate, Inspection, Preview, inspect, preview};
pub use instance::{Instance, Mount, PreStepOutcome};
pub use memory_host::{HistoryItem, MemoryHost};
pub use open::{
    CapStdFactory, OpenError, Opened, ProviderFactory, SessionSpec, open_mount, open_resolved,
};
pub use pointer::{POINTER_MAX_BYTES, is_pointer_to};
pub use rules::{InspectedRule, InspectedRules, RuleFate, inspect_rules};
pub use shell::{MAX_SHELL_TOUCHES, changes_directory, command_paths};
pub use touch::TouchKind;
pub use user_file::UserFile;

// The foreign types this crate's public signatures name, and the types of
// their public fields a caller fills in or reads, so a product can depend on
// this crate alone (its README examples do).
pub use camino::{Utf8Path, Utf8PathBuf};
pub use dsh_home_paths::{DshHome, HomeEnv, HomeError, HomeLabel};
pub use dsh_instructions_discovery::{
    AmbientAuthority, CancellationToken, Cancelled, DirMemory, FileVersion, FsProvider,
    ProjectRoot, ProviderError, RootReason, Unavailable, ambient_authority,
};
#[cfg(feature = "test-support")]
pub use dsh_instructions_discovery::{MemNode, MemoryProvider};
pub use dsh_instructions_render::{Block, BlockKind, Framing};
pub use dsh_instructions_state::{
    Action, Budget, CacheEntry, CandidatePolicy, Change, Config, ConfigError, ConfigInput,
    ConfigWarning, ContentTransform, Digest, FallbackScope, NumberInput, Preset, ResolvedConfig,
    RuleFormat, ScopeKey, TypedSource,
};
pub use serde_json::Value;
