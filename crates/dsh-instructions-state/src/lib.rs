#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

// Each module is a vocabulary of its own, public as a module so the root
// stays a short list (docs/architecture.md, "Root names"): the names nearly
// every caller needs are at the root as well.
/// `Display` as the value's `as_str`: the closed value sets print as the
/// configuration spells them.
macro_rules! display_as_str {
    ($($ty:ty),+ $(,)?) => {$(
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )+};
}
pub(crate) use display_as_str;

pub mod cache;
mod claude;
pub mod config;
pub mod describe;
mod digest;
mod error;
pub mod identity;
pub mod imports;
pub mod rules;
pub mod scope;
pub mod source;
pub mod transition;
pub mod visible;

pub use config::{Config, ConfigInput, Preset};
pub use digest::Digest;
/// The byte budget, defined where it is rendered and re-used here so one
/// type goes from the configuration to the render (R-CFG-2).
pub use dsh_instructions_render::Budget;
pub use error::StateError;
pub use scope::ScopeKey;
pub use source::TypedSource;
