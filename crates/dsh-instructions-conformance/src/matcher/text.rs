//! Reading a message's text the way the format's matcher does: its section
//! header lines, its budget notice and the kind of its intro, against the
//! exact texts of SPEC. Separate because it is about the rendered text
//! alone, not about any expectation.

use crate::schema::Intro;

/// Lines of `text` that are section headers (conformance format, "Message matcher").
///
/// ```
/// use dsh_instructions_conformance::matcher::section_lines;
/// let t = "<system-reminder>\nintro\n\nInstructions from: AGENTS.md\n\nx\n</system-reminder>";
/// assert_eq!(section_lines(t), vec!["Instructions from: AGENTS.md"]);
/// ```
pub fn section_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| SECTION_HEADERS.iter().any(|p| l.starts_with(p)))
        .collect()
}

/// R-REN-2 normal intro.
pub const INTRO_NORMAL: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";
/// R-REN-2 SUPERSEDE sentence (with its trailing space).
pub const SUPERSEDE: &str =
    "This complete workspace instruction baseline supersedes every earlier one. ";
/// R-REN-2 empty replacement baseline sentence pair.
pub const INTRO_EMPTY_REPLACEMENT: &str = "This complete workspace instruction baseline supersedes every earlier one. No workspace instructions are active now.";
/// R-REN-2 compact intro.
pub const INTRO_COMPACT: &str =
    "Workspace instructions were shortened to fit the configured byte budget.";
const NOTICE_PREFIX: &str = "Workspace instruction budget";

/// The body of a `<system-reminder>` frame, or the text itself when unframed.
fn body(part: &str) -> &str {
    part.strip_prefix("<system-reminder>\n")
        .and_then(|b| b.strip_suffix("\n</system-reminder>"))
        .unwrap_or(part)
}

/// Splits a part into its notice line (if its first block is one) and the
/// block after it.
fn notice_and_intro_block(part: &str) -> (Option<&str>, Option<&str>) {
    let mut blocks = body(part).split("\n\n").filter(|b| !b.is_empty());
    let first = blocks.next();
    let first_line = first.and_then(|b| b.lines().next()).unwrap_or_default();
    // A replacement notice-only frame puts SUPERSEDE before the notice on the
    // same line, so the notice is taken from its prefix to the end of line.
    let notice_at = if first_line.starts_with(NOTICE_PREFIX) {
        Some(0)
    } else if first_line.starts_with(SUPERSEDE)
        && first_line[SUPERSEDE.len()..].starts_with(NOTICE_PREFIX)
    {
        Some(SUPERSEDE.len())
    } else {
        None
    };
    match notice_at {
        Some(i) => (Some(&first_line[i..]), blocks.next()),
        None => (None, first),
    }
}

/// The budget notice line of a part, if any.
///
/// ```
/// use dsh_instructions_conformance::matcher::notice_of;
/// let t = "<system-reminder>\nWorkspace instruction budget 10 bytes: omitted AGENTS.md\n</system-reminder>";
/// assert_eq!(notice_of(t), Some("Workspace instruction budget 10 bytes: omitted AGENTS.md"));
/// ```
pub fn notice_of(part: &str) -> Option<&str> {
    notice_and_intro_block(part).0
}

/// Classifies the first block after any notice (R-REN-2).
///
/// ```
/// use dsh_instructions_conformance::matcher::{classify_intro, INTRO_COMPACT};
/// use dsh_instructions_conformance::schema::Intro;
/// let t = format!("<system-reminder>\n{INTRO_COMPACT}\n\nInstructions from: a\n\nx\n</system-reminder>");
/// assert_eq!(classify_intro(&t), Intro::Compact);
/// ```
pub fn classify_intro(part: &str) -> Intro {
    let Some(block) = notice_and_intro_block(part).1 else {
        return Intro::None;
    };
    if block == INTRO_NORMAL {
        Intro::Normal
    } else if block == INTRO_EMPTY_REPLACEMENT {
        Intro::EmptyReplacement
    } else if block == INTRO_COMPACT {
        Intro::Compact
    } else if let Some(rest) = block.strip_prefix(SUPERSEDE) {
        match rest {
            INTRO_NORMAL => Intro::Replacement,
            INTRO_COMPACT => Intro::ReplacementCompact,
            _ => Intro::Unrecognised,
        }
    } else if SECTION_HEADERS.iter().any(|h| block.starts_with(h)) {
        // FORMAT.md: `none` is "no intro block" — the first block is already
        // a section (a dynamic batch, or a baseline without intro).
        Intro::None
    } else {
        Intro::Unrecognised
    }
}

/// The section header prefixes of R-REN-1 and R-REN-3, typed from SPEC.
const SECTION_HEADERS: [&str; 4] = [
    "Instructions from: ",
    "Additional instructions from: ",
    "Updated instructions from: ",
    "Instructions removed: ",
];
