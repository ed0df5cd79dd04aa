#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod budget;
mod bytes;
mod escape;
#[cfg(test)]
mod tests;
pub mod text;

pub use bytes::Budget;
pub use escape::escape;

use text::*;

/// Which intro a baseline gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaselineKind {
    /// A first or re-composed baseline with a compatible identity.
    Normal,
    /// A baseline superseding an incompatible one (R-RT-7).
    Replacement,
}

/// One file of a baseline, as it is shown to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaselineFile<'a> {
    /// Display path (`pkg/AGENTS.md`, `~/.dsh/AGENTS.md`); escaped on output.
    pub path: &'a str,
    /// Loaded text (R-DISC-6); escaped on output.
    pub content: &'a str,
}

/// One dynamic transition section (R-REN-3). Every string is escaped on
/// output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section<'a> {
    /// A project file became visible; `dir` is its project-relative directory
    /// (`.` for the root).
    SetProject {
        /// Display path.
        path: &'a str,
        /// Project-relative directory label.
        dir: &'a str,
        /// Loaded text.
        content: &'a str,
    },
    /// A path-scoped rule became visible (R-RULE-5): its line names the
    /// globs and the directory they are relative to.
    ///
    /// ```
    /// use dsh_instructions_render::{Budget, Section, render_dynamic};
    /// let set = Section::SetRule {
    ///     path: ".claude/rules/ts.md",
    ///     globs: "`*.ts`",
    ///     dir: ".",
    ///     content: "Use strict mode.",
    /// };
    /// let out = render_dynamic(&[set], Budget::bytes(1_000));
    /// assert!(out.text.contains(
    ///     "These instructions apply to files matching `*.ts` under `.`. Follow them"
    /// ));
    /// ```
    SetRule {
        /// Display path.
        path: &'a str,
        /// The globs, each in backticks, joined by `, `.
        globs: &'a str,
        /// Project-relative directory the globs are relative to (`.` for
        /// the root).
        dir: &'a str,
        /// Loaded text (the rule's content, without its front matter).
        content: &'a str,
    },
    /// The user-global file became visible.
    SetUserGlobal {
        /// Display path.
        path: &'a str,
        /// Loaded text.
        content: &'a str,
    },
    /// A visible file changed content.
    Replace {
        /// Display path.
        path: &'a str,
        /// Loaded text.
        content: &'a str,
    },
    /// A visible scope is now served by another path.
    ReplacePath {
        /// Display path.
        path: &'a str,
        /// Display path of the scope's latest visible change.
        previous_path: &'a str,
        /// Loaded text.
        content: &'a str,
    },
    /// A visible file no longer applies. It has no content and can never be
    /// truncated.
    Remove {
        /// Display path.
        path: &'a str,
    },
}

impl<'a> Section<'a> {
    /// The display path the section names (the one listed in a notice).
    ///
    /// ```
    /// use dsh_instructions_render::Section;
    /// assert_eq!(Section::Remove { path: "a/AGENTS.md" }.path(), "a/AGENTS.md");
    /// ```
    #[must_use]
    pub fn path(&self) -> &'a str {
        match *self {
            Section::SetProject { path, .. }
            | Section::SetRule { path, .. }
            | Section::SetUserGlobal { path, .. }
            | Section::Replace { path, .. }
            | Section::ReplacePath { path, .. }
            | Section::Remove { path } => path,
        }
    }

    /// The content the section carries; `None` for a remove.
    ///
    /// ```
    /// use dsh_instructions_render::Section;
    /// assert_eq!(Section::Replace { path: "AGENTS.md", content: "x" }.content(), Some("x"));
    /// assert_eq!(Section::Remove { path: "AGENTS.md" }.content(), None);
    /// ```
    #[must_use]
    pub fn content(&self) -> Option<&'a str> {
        match *self {
            Section::SetProject { content, .. }
            | Section::SetRule { content, .. }
            | Section::SetUserGlobal { content, .. }
            | Section::Replace { content, .. }
            | Section::ReplacePath { content, .. } => Some(content),
            Section::Remove { .. } => None,
        }
    }
}

/// What the budget did to one input (R-REN-7). Byte counts are raw content
/// bytes, before escaping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Rendered whole.
    Included,
    /// Rendered with its content cut to `kept` of `original` bytes.
    Truncated {
        /// Raw content length.
        original: usize,
        /// Raw bytes kept (a char-boundary prefix).
        kept: usize,
    },
    /// Not rendered (only named in the notice, if a notice was rendered).
    Omitted,
}

impl Fate {
    /// Whether the input counts as represented (R-REN-7, R-STATE-7): rendered
    /// whole, or truncated with at least one content byte kept. Only
    /// represented inputs may be committed.
    ///
    /// ```
    /// use dsh_instructions_render::Fate;
    /// assert!(Fate::Included.is_represented());
    /// assert!(Fate::Truncated { original: 10, kept: 1 }.is_represented());
    /// assert!(!Fate::Truncated { original: 10, kept: 0 }.is_represented());
    /// assert!(!Fate::Omitted.is_represented());
    /// ```
    #[must_use]
    pub fn is_represented(self) -> bool {
        match self {
            Fate::Included => true,
            Fate::Truncated { kept, .. } => kept > 0,
            Fate::Omitted => false,
        }
    }
}

/// Which intro block the rendered part starts with (after any notice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntroUsed {
    /// [`INTRO_NORMAL`].
    Normal,
    /// [`INTRO_REPLACEMENT`].
    Replacement,
    /// [`EMPTY_REPLACEMENT`].
    EmptyReplacement,
    /// [`INTRO_COMPACT`].
    Compact,
    /// [`INTRO_REPLACEMENT_COMPACT`].
    ReplacementCompact,
    /// No intro block: dynamic batches, notice-only frames (a replacement's
    /// notice-only frame carries [`SUPERSEDE`] on the notice line, see
    /// `docs/decisions/0002-replacement-notice-only-frame.md`), and empty
    /// results.
    None,
}

/// What a block of a rendered part is (see [`Block`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// The budget notice (R-REN-4), with the [`SUPERSEDE`] lead of a
    /// replacement's notice-only frame when it has one.
    Notice,
    /// The intro block (R-REN-2): [`IntroUsed`] says which.
    Intro,
    /// One section (R-REN-1, R-REN-3): its header line, the blank line and
    /// everything up to the next section.
    Section {
        /// The header line: one of [`SECTION_HEADER_PREFIXES`] and the
        /// escaped display path.
        header: String,
    },
}

/// One block of a rendered part, escaped, as it appears between the frame's
/// blank lines; blocks are joined by one blank line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    /// What the block is.
    pub kind: BlockKind,
    /// Its text (escaped; a section's starts with its header line).
    pub text: String,
}

/// How the blocks of a part are wrapped for the agent that reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Each part in its own [`FRAME_OPEN`] … [`FRAME_CLOSE`] frame (SPEC §6).
    #[default]
    Reminder,
    /// No frame of ours: for an agent that wraps the context it is given
    /// in its own frame (Claude Code, decision 0019).
    Bare,
}

impl Framing {
    /// One part's text from its blocks: joined by a blank line, inside the
    /// frame this framing gives; `""` for no blocks.
    ///
    /// ```
    /// use dsh_instructions_render::{Budget, Framing, Section, render_dynamic};
    ///
    /// let out = render_dynamic(&[Section::Remove { path: "a/AGENTS.md" }], Budget::bytes(1_000));
    /// let texts: Vec<&str> = out.blocks.iter().map(|b| b.text.as_str()).collect();
    /// assert_eq!(Framing::Reminder.part(texts.iter().copied()), out.text);
    /// assert!(Framing::Bare.part(texts.iter().copied()).starts_with("Instructions removed: a/AGENTS.md\n\n"));
    /// ```
    pub fn part<'b>(self, blocks: impl IntoIterator<Item = &'b str>) -> String {
        let blocks: Vec<&str> = blocks.into_iter().collect();
        if blocks.is_empty() {
            return String::new();
        }
        // Sized once: a part is as large as the budget, and growing by
        // doubling would leave up to as much again unused (issue 35 item 3).
        let framing = if self == Self::Reminder {
            FRAME_OPEN.len() + FRAME_CLOSE.len()
        } else {
            0
        };
        let joins = 2 * (blocks.len() - 1);
        let mut text =
            String::with_capacity(framing + joins + blocks.iter().map(|b| b.len()).sum::<usize>());
        if self == Self::Reminder {
            text.push_str(FRAME_OPEN);
        }
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 {
                text.push_str("\n\n");
            }
            text.push_str(block);
        }
        if self == Self::Reminder {
            text.push_str(FRAME_CLOSE);
        }
        debug_assert_eq!(text.len(), text.capacity(), "sized exactly");
        text
    }

    /// What separates two parts of one message shown as one text: a line
    /// break between two frames, a blank line between two bare parts.
    pub fn between_parts(self) -> &'static str {
        match self {
            Self::Reminder => "\n",
            Self::Bare => "\n\n",
        }
    }
}

/// The result of rendering one part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The part text: `""` when nothing was rendered, otherwise exactly one
    /// frame, never longer than `max_bytes`. It is [`Framing::Reminder`]'s
    /// text of [`Rendered::blocks`] (when they were built).
    pub text: String,
    /// The blocks of the part in order — notice, intro, sections — as
    /// values, so a caller that cuts or reframes the part works on them
    /// instead of parsing `text` again. Empty when nothing was rendered,
    /// and from [`render_baseline_text`], which builds the text only.
    pub blocks: Vec<Block>,
    /// One fate per input, in input order — also when `text` is empty, so the
    /// caller still gets the budget report (R-REN-6 step 5).
    pub fates: Vec<Fate>,
    /// The budget notice exactly as it appears in `text` (escaped), without
    /// the [`SUPERSEDE`] prefix of a replacement notice-only frame; `None`
    /// when no notice was rendered.
    pub notice: Option<String>,
    /// The intro block used.
    pub intro: IntroUsed,
}

impl Rendered {
    /// Whether nothing was rendered.
    ///
    /// ```
    /// use dsh_instructions_render::{Budget, render_dynamic};
    /// assert!(render_dynamic(&[], Budget::bytes(100)).is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The part's text under `framing`: [`Rendered::text`] for
    /// [`Framing::Reminder`].
    ///
    /// ```
    /// use dsh_instructions_render::{Budget, Framing, render_empty_replacement, text::EMPTY_REPLACEMENT};
    /// let out = render_empty_replacement(Budget::bytes(1_000));
    /// assert_eq!(out.framed(Framing::Reminder), out.text);
    /// assert_eq!(out.framed(Framing::Bare), EMPTY_REPLACEMENT);
    /// ```
    #[must_use]
    pub fn framed(&self, framing: Framing) -> String {
        framing.part(self.blocks.iter().map(|b| b.text.as_str()))
    }

    /// Byte length of the rendered text (what the budget counts).
    ///
    /// ```
    /// use dsh_instructions_render::{Budget, render_empty_replacement};
    /// let out = render_empty_replacement(Budget::bytes(1_000));
    /// assert_eq!(out.len(), out.text.len());
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.text.len()
    }
}

/// Renders a baseline part (R-REN-1, R-REN-2, R-REN-6). `files` are ordered
/// broadest first (user-global, then root to cwd). A [`BaselineKind::Replacement`]
/// with no files is the empty replacement baseline
/// ([`render_empty_replacement`]); a normal baseline with no files renders
/// nothing.
///
/// ```
/// use dsh_instructions_render::{BaselineFile, BaselineKind, Budget, Fate, IntroUsed, render_baseline};
///
/// let root = "Root rule. ".repeat(20);
/// let files = [
///     BaselineFile { path: "AGENTS.md", content: &root },
///     BaselineFile { path: "pkg/AGENTS.md", content: "pkg" },
/// ];
/// // Too small for both files: the broadest one is dropped and named.
/// let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(420));
/// assert_eq!(out.fates, [Fate::Omitted, Fate::Included]);
/// assert_eq!(out.intro, IntroUsed::Normal);
/// assert_eq!(
///     out.notice.as_deref(),
///     Some("Workspace instruction budget 420 bytes: omitted AGENTS.md")
/// );
/// assert!(out.len() <= 420);
/// ```
#[must_use]
pub fn render_baseline(kind: BaselineKind, files: &[BaselineFile<'_>], budget: Budget) -> Rendered {
    let max_bytes = budget.max_bytes();
    if files.is_empty() {
        return match kind {
            BaselineKind::Normal => budget::nothing(0),
            BaselineKind::Replacement => render_empty_replacement(budget),
        };
    }
    render_baseline_preps(kind, &[], files, max_bytes, true)
}

/// Like [`render_baseline`], for a caller that skipped reading the broadest
/// files because they can never be represented: `unread` holds their display
/// paths, broadest first, all broader than every entry of `files`.
///
/// The caller must only skip files that the budget would omit anyway: when
/// the raw content of the more specific `files` alone exceeds `max_bytes`,
/// no render holding a broader file fits (step 2 drops from the broad end),
/// so the result equals [`render_baseline`] over the full list. Unread files
/// are reported [`Fate::Omitted`] and named in the notice; the fates cover
/// `unread` first, then `files`.
///
/// ```
/// use dsh_instructions_render::{BaselineFile, BaselineKind, Budget, Fate, render_baseline_skipping};
///
/// // The specific file alone is over the budget: the broad one cannot fit.
/// let near = "n".repeat(500);
/// let files = [BaselineFile { path: "pkg/AGENTS.md", content: &near }];
/// let out = render_baseline_skipping(BaselineKind::Normal, &["AGENTS.md"], &files, Budget::bytes(400));
/// assert_eq!(out.fates[0], Fate::Omitted);
/// assert!(matches!(out.fates[1], Fate::Truncated { original: 500, .. }));
/// assert!(out.notice.unwrap().starts_with(
///     "Workspace instruction budget 400 bytes: omitted AGENTS.md; truncated pkg/AGENTS.md from 500 to "
/// ));
/// ```
pub fn render_baseline_skipping(
    kind: BaselineKind,
    unread: &[&str],
    files: &[BaselineFile<'_>],
    budget: Budget,
) -> Rendered {
    if unread.is_empty() {
        return render_baseline(kind, files, budget);
    }
    render_baseline_preps(kind, unread, files, budget.max_bytes(), true)
}

/// Like [`render_baseline_skipping`], for a caller that uses only the
/// text: the result's [`Rendered::blocks`] is empty, everything else is
/// the same. The blocks are a second copy of the text, and a baseline
/// under a large budget holds every file of a deep chain (issue 46 item 4).
///
/// ```
/// use dsh_instructions_render::{Budget, render_baseline_skipping, render_baseline_text, BaselineFile, BaselineKind};
///
/// let files = [BaselineFile { path: "AGENTS.md", content: "Use tabs." }];
/// let full = render_baseline_skipping(BaselineKind::Normal, &[], &files, Budget::bytes(4_096));
/// let text = render_baseline_text(BaselineKind::Normal, &[], &files, Budget::bytes(4_096));
/// assert_eq!(text.text, full.text);
/// assert_eq!((text.fates, text.notice, text.intro), (full.fates, full.notice, full.intro));
/// assert!(text.blocks.is_empty() && !full.blocks.is_empty());
/// ```
#[must_use]
pub fn render_baseline_text(
    kind: BaselineKind,
    unread: &[&str],
    files: &[BaselineFile<'_>],
    budget: Budget,
) -> Rendered {
    if files.is_empty() && unread.is_empty() {
        let mut out = render_baseline(kind, files, budget);
        out.blocks = Vec::new();
        return out;
    }
    render_baseline_preps(kind, unread, files, budget.max_bytes(), false)
}

/// The baseline of the `unread` files (each omitted, as its path) and
/// the `files`, in that order; `blocks` says whether the blocks are kept.
fn render_baseline_preps(
    kind: BaselineKind,
    unread: &[&str],
    files: &[BaselineFile<'_>],
    max_bytes: u64,
    blocks: bool,
) -> Rendered {
    let preps: Vec<_> = unread
        .iter()
        .map(|p| budget::Prep::unread(p))
        .chain(files.iter().map(budget::Prep::baseline))
        .collect();
    let plan = match kind {
        BaselineKind::Normal => budget::Plan {
            intro: Some((INTRO_NORMAL, IntroUsed::Normal)),
            compact: Some((INTRO_COMPACT, IntroUsed::Compact)),
            notice_lead: "",
            blocks,
        },
        BaselineKind::Replacement => budget::Plan {
            intro: Some((INTRO_REPLACEMENT, IntroUsed::Replacement)),
            compact: Some((INTRO_REPLACEMENT_COMPACT, IntroUsed::ReplacementCompact)),
            notice_lead: SUPERSEDE,
            blocks,
        },
    };
    budget::render(&preps, &plan, max_bytes)
}

/// Renders the empty replacement baseline (R-REN-2, R-RT-7): one frame
/// holding [`EMPTY_REPLACEMENT`], or nothing when that does not fit.
///
/// ```
/// use dsh_instructions_render::{Budget, IntroUsed, render_empty_replacement, text::EMPTY_REPLACEMENT};
///
/// let out = render_empty_replacement(Budget::bytes(1_000));
/// assert_eq!(out.text, format!("<system-reminder>\n{EMPTY_REPLACEMENT}\n</system-reminder>"));
/// assert_eq!(out.intro, IntroUsed::EmptyReplacement);
/// assert!(render_empty_replacement(Budget::bytes(out.len() as u64 - 1)).is_empty());
/// ```
#[must_use]
pub fn render_empty_replacement(budget: Budget) -> Rendered {
    let max_bytes = budget.max_bytes();
    let len = FRAME_OPEN.len() + EMPTY_REPLACEMENT.len() + FRAME_CLOSE.len();
    if budget::fits(len as u64, max_bytes) {
        let blocks = vec![Block {
            kind: BlockKind::Intro,
            text: EMPTY_REPLACEMENT.to_owned(),
        }];
        Rendered {
            text: Framing::Reminder.part([EMPTY_REPLACEMENT]),
            blocks,
            fates: Vec::new(),
            notice: None,
            intro: IntroUsed::EmptyReplacement,
        }
    } else {
        budget::nothing(0)
    }
}

/// Renders a dynamic batch (R-REN-3, R-REN-6): no intro, sections already in
/// section order (broadest first).
///
/// ```
/// use dsh_instructions_render::{Budget, Fate, Section, render_dynamic};
///
/// let out = render_dynamic(&[Section::Remove { path: "old/AGENTS.md" }], Budget::bytes(1_000));
/// assert_eq!(
///     out.text,
///     "<system-reminder>\nInstructions removed: old/AGENTS.md\n\n\
///      The instructions previously loaded from this file no longer apply.\n</system-reminder>"
/// );
/// assert_eq!(out.fates, [Fate::Included]);
/// ```
#[must_use]
pub fn render_dynamic(sections: &[Section<'_>], budget: Budget) -> Rendered {
    let max_bytes = budget.max_bytes();
    if sections.is_empty() {
        return budget::nothing(0);
    }
    let preps: Vec<_> = sections.iter().map(budget::Prep::dynamic).collect();
    let plan = budget::Plan {
        intro: None,
        compact: None,
        notice_lead: "",
        blocks: true,
    };
    budget::render(&preps, &plan, max_bytes)
}
