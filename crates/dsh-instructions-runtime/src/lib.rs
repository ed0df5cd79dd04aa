#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod ancestors;
mod compose;
mod derived;
mod dir_id;
mod dir_path;
mod error;
mod factory;
mod gather;
mod host;
mod imports;
mod inbox;
mod inspect;
mod instance;
mod maps;
mod memory_host;
mod mount;
mod pointer;
mod rule_facts;
mod rule_slots;
mod rules;
mod scan;
mod settle;
pub mod shell;
mod slots;
mod touch;
mod user_file;
mod view;

pub use error::RuntimeError;
pub use factory::{CapStdFactory, ProviderFactory};
pub use host::{
    BatchEntry, BatchItem, Decision, Host, SessionEvent, ToolExecution, WorkspaceMessage,
};
pub use instance::{Instance, PreStepOutcome};
pub use mount::{MountBuilder, Opened};
pub use touch::TouchKind;

/// What an implementation of [`Host`] names beyond the root's pre-step
/// vocabulary: the kept fold, the marks of the visible surface, and the
/// reference in-memory host.
pub mod host_support {
    pub use crate::host::{ViewSnapshot, VisibleMark, VisibleUpdate};
    pub use crate::memory_host::{HistoryItem, MemoryHost};
}

/// How a tool's arguments name the paths it touched and which directories
/// a touch reaches (R-CFG-8, R-RT-3, decision 0027): the one owner of
/// those rules, for the front door's `touch_tools` and the agent hook's
/// tool tables.
pub mod tool_args {
    pub use crate::touch::{PathArg, TouchedPath};
}

/// What `explain`, `check` and `show` report ([`Opened::inspect`],
/// [`Opened::preview`], [`Opened::inspect_rules`]).
pub mod report {
    pub use crate::imports::{ImportFate, InspectedImport};
    pub use crate::inspect::{CandidateFate, InspectedCandidate, Inspection, Preview};
    pub use crate::pointer::{POINTER_MAX_BYTES, is_pointer_to};
    pub use crate::rules::{InspectedRule, InspectedRules, RuleFate};
}

// The crates this one's signatures name, re-exported whole, so a product
// can depend on this crate alone (its README examples do) and this root
// stays a short list.
pub use camino;
pub use dsh_home_paths as home;
pub use dsh_instructions_discovery as discovery;
pub use dsh_instructions_render as render;
pub use dsh_instructions_state as state;
pub use serde_json;
