//! Pure state rules for workspace instruction files (SPEC §3 and §7): the
//! shared [`Config`], typed sources ([`TypedSource`]), scope keys
//! ([`ScopeKey`]), SHA-1 [`Digest`]s, baseline identity, visible-state
//! derivation ([`VisibleState`]), transitions ([`transition`],
//! [`reconcile_directory`]), per-directory candidate selection and dedup, and
//! the per-instance [`VersionCache`], and the pure half of `@path` imports
//! ([`import_tokens`], [`assemble_imports`], SPEC §13).
//!
//! Nothing here does I/O: the runtime gathers probes and reads, then calls
//! these functions to decide what changes.
//!
//! # What is an API boundary
//!
//! Products build on the configuration ([`ConfigInput`], [`Config`],
//! [`Preset`], …) and the persisted metadata ([`TypedSource`], [`Change`],
//! [`Action`], [`ScopeKey`], [`Digest`]): their shapes are part of SPEC
//! (R-CFG, R-STATE-1..3) and change only with it. The decision rules —
//! [`VisibleState`], [`transition`], [`reconcile_directory`],
//! [`select_first_wins`], [`dedup_keep`], [`VersionCache`], the import
//! assembly — are public so the runtime, the conformance suite and property
//! tests can drive them with plain values; they are **not an API boundary**
//! and follow the runtime's needs.

#![forbid(unsafe_code)]

mod cache;
mod claude;
mod config;
pub mod describe;
mod digest;
mod identity;
mod imports;
mod scope;
mod source;
mod transition;
mod visible;

pub use cache::{CacheEntry, ImportKey, VersionCache};
pub use claude::claude_transform;
pub use config::{
    CLAUDE_DIR_FILE, CLAUDE_MAX_IMPORT_DEPTH, CandidatePolicy, Config, ConfigError, ConfigInput,
    ConfigWarning, ContentTransform, DEFAULT_MAX_IMPORT_DEPTH, DEFAULT_MAX_SOURCE_BYTES,
    DEFAULT_PRESET_MAX_BYTES, FallbackScope, NumberInput, Preset, ResolvedConfig,
    default_touch_tools, reasons, validate_names, validate_user_files,
};
pub use digest::Digest;
/// The byte budget, defined where it is rendered and re-used here so one
/// type goes from the configuration to the render (R-CFG-2).
pub use dsh_instructions_render::Budget;
pub use identity::{baseline_identity, root_relative_to_cwd};
pub use imports::{
    IMPORT_MAX_COUNT, IMPORT_MAX_DEPTH, ImportBlock, ImportToken, assemble_imports, import_tokens,
};
pub use scope::{SLOT_BASE, SLOT_CLAUDE_DIR, SLOT_LOCAL, ScopeKey, ScopeKind, section_order};
pub use source::{Action, Change, SCHEMA, SOURCE_FORM, SOURCE_KIND, TypedSource};
pub use transition::{
    Observation, ProbeClass, SlotOutcome, dedup_keep, reconcile_directory, select_first_wins,
    select_first_wins_iter, transition,
};
pub use visible::{VisibleBaseline, VisibleEntry, VisibleState};
