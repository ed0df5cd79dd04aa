//! Plugin configuration (SPEC §3, R-CFG-1..10): the validated [`Config`] every
//! crate shares, the loosely typed [`ConfigInput`] read from JSON/YAML/CLI, and
//! the named [`Preset`]s.
//!
//! One job per submodule: the field value sets and defaults (`values`), the
//! validated configuration and its presets (`validated`), the input as read
//! (`input`), how layers overlay (`overlay`), how an input resolves
//! (`resolve`), the name-list validation (`names`) and the reported problems
//! (`errors`).

mod errors;
mod input;
mod names;
mod overlay;
mod resolve;
#[cfg(test)]
mod tests;
mod validated;
mod values;

pub use crate::claude::claude_transform;
pub use errors::{ConfigWarning, reasons};
pub use input::{ConfigInput, NumberInput};
pub(crate) use names::plain_relative_path;
pub use names::{validate_names, validate_user_files};
pub use resolve::ResolvedConfig;
pub use validated::{Config, default_touch_tools};
pub use values::{
    CLAUDE_DIR_FILE, CLAUDE_MAX_IMPORT_DEPTH, CandidatePolicy, ContentTransform,
    DEFAULT_MAX_IMPORT_DEPTH, DEFAULT_MAX_SOURCE_BYTES, DEFAULT_PRESET_MAX_BYTES, FallbackScope,
    Preset, RuleFormat,
};
