//! Path-scoped rule files (SPEC §14): a rule file's front matter, its kind
//! and its globs, decided from its text alone (R-RULE-2, R-RULE-3,
//! R-RULE-8). Pure, like the rest of this crate: the runtime lists and
//! reads the files, this module says what one of them is.
//!
//! One job per submodule: splitting the text and reading the front matter
//! (`frontmatter`), compiling and matching globs (`globs`).

mod frontmatter;
mod globs;
#[cfg(test)]
mod tests;

pub use frontmatter::{
    MAX_GLOB_BYTES, MAX_GLOBS, ParsedRule, RuleKind, parse_rule, split_front_matter,
};
pub use globs::{RuleDiagnostic, RuleGlobs};
