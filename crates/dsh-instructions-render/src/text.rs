//! The exact texts of every message the model can see (SPEC §6, R-REN-2):
//! frames, intros, section headers and the budget notice prefix.

// The texts are defined once as literal macros so the combined intros can be
// built with `concat!` and can never drift from their parts.
macro_rules! lit_normal {
    () => {
        "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions."
    };
}
macro_rules! lit_supersede {
    () => {
        "This complete workspace instruction baseline supersedes every earlier one. "
    };
}
macro_rules! lit_compact {
    () => {
        "Workspace instructions were shortened to fit the configured byte budget."
    };
}

/// Opens every rendered part (SPEC §6).
pub const FRAME_OPEN: &str = "<system-reminder>\n";
/// Closes every rendered part (SPEC §6). Escaping guarantees it is the only
/// closing tag in the part.
pub const FRAME_CLOSE: &str = "\n</system-reminder>";
/// Normal baseline intro (R-REN-2).
pub const INTRO_NORMAL: &str = lit_normal!();
/// Prefix of every replacement-baseline intro (R-REN-2). Note the trailing
/// space: it is glued directly to the text that follows it.
pub const SUPERSEDE: &str = lit_supersede!();
/// Intro of a replacement baseline: [`SUPERSEDE`] + [`INTRO_NORMAL`].
pub const INTRO_REPLACEMENT: &str = concat!(lit_supersede!(), lit_normal!());
/// The whole body of the empty replacement baseline (R-REN-2, R-RT-7).
pub const EMPTY_REPLACEMENT: &str = concat!(
    lit_supersede!(),
    "No workspace instructions are active now."
);
/// Compact intro used by step 3 of the budget algorithm (R-REN-2, R-REN-6).
pub const INTRO_COMPACT: &str = lit_compact!();
/// Compact intro of a replacement baseline: [`SUPERSEDE`] + [`INTRO_COMPACT`].
pub const INTRO_REPLACEMENT_COMPACT: &str = concat!(lit_supersede!(), lit_compact!());

/// Start of a baseline section's header line (R-REN-1).
pub const HEADER_BASELINE: &str = "Instructions from: ";
/// Start of a dynamic `set` section's header line (R-REN-3).
pub const HEADER_SET: &str = "Additional instructions from: ";
/// Start of a dynamic `replace` section's header line (R-REN-3).
pub const HEADER_REPLACE: &str = "Updated instructions from: ";
/// Start of a dynamic `remove` section's header line (R-REN-3).
pub const HEADER_REMOVE: &str = "Instructions removed: ";
/// Every section header prefix: a line starting with one of these is a
/// section header (what the conformance `sections:` matcher lists).
///
/// ```
/// use dsh_instructions_render::{Budget, Section, render_dynamic, text::SECTION_HEADER_PREFIXES};
///
/// let out = render_dynamic(&[Section::Remove { path: "a/AGENTS.md" }], Budget::bytes(1_000));
/// let headers: Vec<&str> = out
///     .text
///     .lines()
///     .filter(|l| SECTION_HEADER_PREFIXES.iter().any(|p| l.starts_with(p)))
///     .collect();
/// assert_eq!(headers, ["Instructions removed: a/AGENTS.md"]);
/// ```
pub const SECTION_HEADER_PREFIXES: [&str; 4] =
    [HEADER_BASELINE, HEADER_SET, HEADER_REPLACE, HEADER_REMOVE];
/// Start of every budget notice (R-REN-4); the budget in bytes follows.
pub const NOTICE_PREFIX: &str = "Workspace instruction budget ";
