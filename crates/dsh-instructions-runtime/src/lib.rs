//! The runtime adapter that plugs workspace instruction files into an agent
//! loop (SPEC §8).
//!
//! A product mounts one [`Instance`] per session loop instance over its
//! [`Host`] (session view + inbox), then reports pre-steps, tool results and
//! session events. The adapter composes baselines, reconciles touched and
//! known directories, keeps exactly one pending workspace message in the
//! inbox and folds it into the next entering batch.
//!
//! Internally every composition is plan → gather (async, cancellable, no
//! mutation) → decide (pure) → apply, run on one serial lane per instance.
#![forbid(unsafe_code)]

mod compose;
mod host;
mod inspect;
mod instance;
mod memory_host;
mod scan;

pub use host::{
    BatchEntry, BatchItem, Decision, Host, InboxId, SessionEvent, ToolExecution, WorkspaceMessage,
};
pub use inspect::{CandidateFate, InspectedCandidate, Inspection, inspect};
pub use instance::{Instance, Mount, PreStepOutcome};
pub use memory_host::{HistoryItem, MemoryHost};
