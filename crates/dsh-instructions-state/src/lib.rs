#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod cache;
mod claude;
mod config;
pub mod describe;
mod digest;
mod identity;
mod imports;
mod rules;
mod scope;
mod source;
mod transition;
mod visible;

pub use cache::{CacheEntry, ImportKey, VersionCache};
pub use claude::claude_transform;
pub use config::{
    CLAUDE_DIR_FILE, CLAUDE_MAX_IMPORT_DEPTH, CandidatePolicy, Config, ConfigError, ConfigInput,
    ConfigWarning, ContentTransform, DEFAULT_MAX_IMPORT_DEPTH, DEFAULT_MAX_SOURCE_BYTES,
    DEFAULT_PRESET_MAX_BYTES, FallbackScope, NumberInput, Preset, ResolvedConfig, RuleFormat,
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
pub use rules::{
    MAX_GLOB_BYTES, MAX_GLOBS, ParsedRule, RuleDiagnostic, RuleError, RuleGlobs, RuleKind,
    parse_rule, split_front_matter,
};
pub use scope::{
    RulePlace, SLOT_BASE, SLOT_CLAUDE_DIR, SLOT_LOCAL, ScopeKey, ScopeKind, section_order,
};
pub use source::{Action, Change, SCHEMA, SOURCE_FORM, SOURCE_KIND, TypedSource};
pub use transition::{
    Observation, ProbeClass, SlotOutcome, dedup_keep, reconcile_directory, select_first_wins,
    select_first_wins_iter, transition,
};
pub use visible::{VisibleBaseline, VisibleEntry, VisibleState};
