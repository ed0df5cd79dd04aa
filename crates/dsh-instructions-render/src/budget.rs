//! Section templates and the byte-budget algorithm (SPEC R-REN-1, R-REN-3,
//! R-REN-4, R-REN-6).
//!
//! Every candidate render is first *measured* arithmetically from
//! precomputed escaped lengths; only the chosen one is built. That keeps the
//! whole algorithm linear in the input: step 2 walks the files once with
//! running sums, and step 3's binary search evaluates a closed formula
//! (prefix length + tags fully inside the prefix + notice digits) instead of
//! re-rendering. The bounded omitted list of R-REN-4 is tracked the same
//! way ([`Omitted`]): its length is updated in amortised constant time per
//! dropped input.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::escape::{push_escaped, tag_positions, tags_within};
use crate::{
    BaselineFile, Block, BlockKind, FRAME_CLOSE, FRAME_OPEN, Fate, Framing, HEADER_BASELINE,
    HEADER_REMOVE, HEADER_REPLACE, HEADER_SET, IntroUsed, NOTICE_PREFIX, Rendered, Section,
};

/// Block separator inside a part: one blank line.
const SEP: &str = "\n\n";
const SEP_LEN: u64 = SEP.len() as u64;
const FRAME_LEN: u64 = (FRAME_OPEN.len() + FRAME_CLOSE.len()) as u64;

const SET_PROJECT_BEFORE_DIR: &str = "These instructions apply to work under `";
const SET_PROJECT_AFTER_DIR: &str = "`. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.";
const SET_RULE_BEFORE_GLOBS: &str = "These instructions apply to files matching ";
const SET_RULE_BEFORE_DIR: &str = " under `";
const SET_USER_GLOBAL: &str = "These instructions apply to all work. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.";
const REPLACE_TEXT: &str = "This file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.";
const REPLACE_PATH_BEFORE_PREV: &str =
    "These instructions take the place of the instructions previously loaded from ";
const REPLACE_PATH_AFTER_PREV: &str = ", which no longer apply.";
const REMOVE_TEXT: &str = "The instructions previously loaded from this file no longer apply.";

const NOTICE_UNIT: &str = " bytes: ";
const NOTICE_OMITTED: &str = "omitted ";
const NOTICE_LIST_SEP: &str = ", ";
const NOTICE_PART_SEP: &str = "; ";
const NOTICE_TRUNCATED: &str = "truncated ";
const NOTICE_FROM: &str = " from ";
const NOTICE_TO: &str = " to ";
const NOTICE_BYTES: &str = " bytes";
const NOTICE_AND: &str = " and ";
const NOTICE_MORE: &str = " more";
const NOTICE_FILES: &str = " files";
/// Smallest bound on the omitted part of the notice (R-REN-4).
const OMITTED_BOUND_MIN: u64 = 512;
/// The bound grows with the budget: `max_bytes / 16` (R-REN-4).
const OMITTED_BOUND_DIVISOR: u64 = 16;

/// One input, prepared for measuring: everything before the content is
/// rendered and escaped up front; the content stays raw so it can be cut.
#[derive(Debug)]
pub(crate) struct Prep<'a> {
    /// Escaped header block(s) of a dynamic section, already joined;
    /// `None` for a baseline file or an unread input, whose header (the
    /// heading line, plus the blank line of an empty file) is written from
    /// `path` only when the section is built ([`Prep::push_fixed`]): a
    /// deep chain omits hundreds of them (issue 35 item 3), and on one that
    /// is all shown a copy of each path was held through the whole render
    /// (issue 46 item 4).
    fixed: Option<String>,
    /// Length of the header line at the start of `fixed`.
    header_len: usize,
    /// Escaped display path, as the notice names it.
    path: Cow<'a, str>,
    /// Raw content; empty for a remove (which then can never be cut).
    content: &'a str,
    /// Tag offsets in `content` (see `escape::tag_positions`).
    tags: Vec<usize>,
    /// Not read by the caller, known never to be represented: measured as
    /// larger than any budget.
    unread: bool,
}

/// Size standing in for an unread input: larger than any real budget, small
/// enough that sums over many inputs cannot overflow.
const UNREAD_LEN: u64 = 1 << 48;

impl<'a> Prep<'a> {
    pub(crate) fn baseline(file: &BaselineFile<'a>) -> Self {
        let path = crate::escape(file.path);
        let header_len = HEADER_BASELINE.len() + path.len();
        Self::new(None, header_len, path, file.content)
    }

    pub(crate) fn dynamic(section: &Section<'a>) -> Self {
        let path = crate::escape(section.path());
        let prefix = match *section {
            Section::SetProject { .. }
            | Section::SetRule { .. }
            | Section::SetUserGlobal { .. } => HEADER_SET,
            Section::Replace { .. } | Section::ReplacePath { .. } => HEADER_REPLACE,
            Section::Remove { .. } => HEADER_REMOVE,
        };
        let header_len = prefix.len() + path.len();
        let fixed = match *section {
            Section::SetProject { dir, .. } => [
                HEADER_SET,
                &path,
                SEP,
                SET_PROJECT_BEFORE_DIR,
                &crate::escape(dir),
                SET_PROJECT_AFTER_DIR,
            ]
            .concat(),
            Section::SetRule { globs, dir, .. } => [
                HEADER_SET,
                &path,
                SEP,
                SET_RULE_BEFORE_GLOBS,
                &crate::escape(globs),
                SET_RULE_BEFORE_DIR,
                &crate::escape(dir),
                SET_PROJECT_AFTER_DIR,
            ]
            .concat(),
            Section::SetUserGlobal { .. } => [HEADER_SET, &path, SEP, SET_USER_GLOBAL].concat(),
            Section::Replace { .. } => [HEADER_REPLACE, &path, SEP, REPLACE_TEXT].concat(),
            Section::ReplacePath { previous_path, .. } => [
                HEADER_REPLACE,
                &path,
                SEP,
                REPLACE_PATH_BEFORE_PREV,
                &crate::escape(previous_path),
                REPLACE_PATH_AFTER_PREV,
            ]
            .concat(),
            Section::Remove { .. } => [HEADER_REMOVE, &path, SEP, REMOVE_TEXT].concat(),
        };
        debug_assert!(fixed.starts_with(prefix));
        Self::new(
            Some(fixed),
            header_len,
            path,
            section.content().unwrap_or(""),
        )
    }

    /// A broad baseline file the caller did not read because it cannot be
    /// represented (see `render_baseline_skipping`).
    pub(crate) fn unread(path: &'a str) -> Self {
        let path = crate::escape(path);
        Self {
            header_len: HEADER_BASELINE.len() + path.len(),
            fixed: None,
            path,
            content: "",
            tags: Vec::new(),
            unread: true,
        }
    }

    fn new(fixed: Option<String>, header_len: usize, path: Cow<'a, str>, content: &'a str) -> Self {
        Self {
            fixed,
            header_len,
            path,
            content,
            tags: tag_positions(content),
            unread: false,
        }
    }

    /// What follows a baseline heading in its fixed text. R-REN-1: a
    /// section is heading + blank line + content, and an empty file is a
    /// section too, so its heading keeps the blank line after it
    /// (`Instructions from: <path>\n\n`); the blank line belongs to the
    /// fixed text, because the empty content is no block of its own.
    fn trailer(&self) -> &'static str {
        if self.content.is_empty() && !self.unread {
            SEP
        } else {
            ""
        }
    }

    /// Appends the escaped header block(s) (see the field).
    fn push_fixed(&self, out: &mut String) {
        match &self.fixed {
            Some(fixed) => out.push_str(fixed),
            None => {
                out.push_str(HEADER_BASELINE);
                out.push_str(&self.path);
                out.push_str(self.trailer());
            }
        }
    }

    /// Length of the text [`Prep::push_fixed`] appends.
    fn fixed_len(&self) -> u64 {
        match &self.fixed {
            Some(fixed) => len(fixed),
            None => (self.header_len + self.trailer().len()) as u64,
        }
    }

    /// Escaped length of the whole section. Empty content is an empty block
    /// and is skipped, so the section is then just its fixed part (which for
    /// an empty baseline file already ends in the blank line of R-REN-1).
    fn full_len(&self) -> u64 {
        if self.unread {
            UNREAD_LEN
        } else if self.content.is_empty() {
            self.fixed_len()
        } else {
            self.cut_len(self.content.len())
        }
    }

    /// Escaped length of the section with its content cut to `kept >= 1` raw
    /// bytes: each tag fully inside the prefix grows by one byte.
    fn cut_len(&self, kept: usize) -> u64 {
        self.fixed_len() + SEP_LEN + (kept + tags_within(&self.tags, kept)) as u64
    }

    fn path_len(&self) -> u64 {
        len(&self.path)
    }
}

/// Which intros a part may use.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The part's own intro (`None` for a dynamic batch).
    pub(crate) intro: Option<(&'static str, IntroUsed)>,
    /// The second try of step 3 (`None`: no second try).
    pub(crate) compact: Option<(&'static str, IntroUsed)>,
    /// Text glued before the notice of a notice-only frame (step 4).
    pub(crate) notice_lead: &'static str,
    /// Whether the result carries its blocks besides its text.
    pub(crate) blocks: bool,
}

/// Accumulates a frame's size from its non-empty blocks.
#[derive(Clone, Copy, Debug, Default)]
struct Size {
    bytes: u64,
    blocks: u64,
}

impl Size {
    fn block(self, len: u64) -> Self {
        self.blocks(len, u64::from(len > 0))
    }

    fn blocks(self, bytes: u64, blocks: u64) -> Self {
        Self {
            bytes: self.bytes + bytes,
            blocks: self.blocks + blocks,
        }
    }

    fn framed(self) -> u64 {
        FRAME_LEN + self.bytes + SEP_LEN * self.blocks.saturating_sub(1)
    }
}

/// Whether a render of `size` bytes is allowed under `max_bytes`.
pub(crate) fn fits(size: u64, max_bytes: u64) -> bool {
    size <= max_bytes
}

/// The empty result for `inputs` inputs, all omitted.
pub(crate) fn nothing(inputs: usize) -> Rendered {
    Rendered {
        text: String::new(),
        blocks: Vec::new(),
        fates: vec![Fate::Omitted; inputs],
        notice: None,
        intro: IntroUsed::None,
    }
}

fn len(s: &str) -> u64 {
    s.len() as u64
}

fn decimal_len(mut value: u64) -> u64 {
    let mut digits = 1;
    while value >= 10 {
        value /= 10;
        digits += 1;
    }
    digits
}

/// What a chosen render contains.
struct Choice<'p, 'a> {
    /// Inputs dropped from the broad end.
    omitted: usize,
    /// The notice text (already escaped), if any.
    notice: Option<String>,
    /// Prefix glued to the notice in its block (step 4 of a replacement).
    notice_lead: &'static str,
    intro: Option<(&'static str, IntroUsed)>,
    /// The rendered sections, broadest first.
    sections: &'p [Prep<'a>],
    /// Raw bytes kept of the last rendered section's content, when cut.
    cut: Option<usize>,
    /// The measured size, checked against the built text.
    size: u64,
}

/// The budget algorithm of R-REN-6 over prepared inputs (broadest first).
pub(crate) fn render(preps: &[Prep<'_>], plan: &Plan, max_bytes: u64) -> Rendered {
    let n = preps.len();
    let Some(last) = preps.last() else {
        return nothing(0);
    };
    let intro_len = plan.intro.map_or(0, |(text, _)| len(text));
    let total: u64 = preps.iter().map(Prep::full_len).sum();

    // Step 1: everything.
    let size = Size::default()
        .block(intro_len)
        .blocks(total, n as u64)
        .framed();
    if fits(size, max_bytes) {
        return build(
            plan.blocks,
            Choice {
                omitted: 0,
                notice: None,
                notice_lead: "",
                intro: plan.intro,
                sections: preps,
                cut: None,
                size,
            },
            n,
            max_bytes,
        );
    }

    // Step 2: drop whole inputs from the broad end; the first fit wins.
    let head_len = len(NOTICE_PREFIX) + decimal_len(max_bytes) + len(NOTICE_UNIT);
    let mut dropped = 0;
    // The (bounded) "omitted …" part over the inputs dropped so far.
    let mut omitted = Omitted::new(max_bytes);
    for k in 1..n {
        dropped += preps[k - 1].full_len();
        omitted.push(preps);
        let size = Size::default()
            .block(head_len + omitted.len())
            .block(intro_len)
            .blocks(total - dropped, (n - k) as u64)
            .framed();
        if fits(size, max_bytes) {
            return build(
                plan.blocks,
                Choice {
                    omitted: k,
                    notice: Some(notice(max_bytes, preps, &omitted, None)),
                    notice_lead: "",
                    intro: plan.intro,
                    sections: &preps[k..],
                    cut: None,
                    size,
                },
                n,
                max_bytes,
            );
        }
    }

    // Step 3: only the most specific input, cut to the longest fitting
    // char-boundary prefix; own intro first, then the compact one.
    // `omitted` now covers preps[..n - 1].
    let omitted_len = omitted.len();
    let tries: &[Option<(&'static str, IntroUsed)>] = match plan.compact {
        Some(compact) => &[plan.intro, Some(compact)],
        None => &[plan.intro],
    };
    for &intro in tries {
        let base = Size::default().block(intro.map_or(0, |(text, _)| len(text)));
        let whole_notice = if omitted_len > 0 {
            head_len + omitted_len
        } else {
            0
        };
        let size = base.block(whole_notice).block(last.full_len()).framed();
        if fits(size, max_bytes) {
            let notice = (n > 1).then(|| notice(max_bytes, preps, &omitted, None));
            return build(
                plan.blocks,
                Choice {
                    omitted: n - 1,
                    notice,
                    notice_lead: "",
                    intro,
                    sections: &preps[n - 1..],
                    cut: None,
                    size,
                },
                n,
                max_bytes,
            );
        }
        if let Some(kept) = longest_cut(last, base, head_len, omitted_len, max_bytes) {
            let cut_notice = notice(
                max_bytes,
                preps,
                &omitted,
                Some((last, last.content.len(), kept)),
            );
            let size = base
                .block(len(&cut_notice))
                .block(last.cut_len(kept))
                .framed();
            return build(
                plan.blocks,
                Choice {
                    omitted: n - 1,
                    notice: Some(cut_notice),
                    notice_lead: "",
                    intro,
                    sections: &preps[n - 1..],
                    cut: Some(kept),
                    size,
                },
                n,
                max_bytes,
            );
        }
    }

    // Step 4: a frame holding only the notice, every input omitted.
    omitted.push(preps);
    let size = Size::default()
        .block(len(plan.notice_lead) + head_len + omitted.len())
        .framed();
    if fits(size, max_bytes) {
        return build(
            plan.blocks,
            Choice {
                omitted: n,
                notice: Some(notice(max_bytes, preps, &omitted, None)),
                notice_lead: plan.notice_lead,
                intro: None,
                sections: &[],
                cut: None,
                size,
            },
            n,
            max_bytes,
        );
    }

    // Step 5: nothing fits.
    nothing(n)
}

/// Longest raw prefix of `last`'s content (at least one byte, shorter than
/// the whole, ending on a char boundary) whose render fits, given the blocks
/// before the notice (`base`) and the omitted list length.
///
/// The render size grows monotonically with the cut point (prefix bytes,
/// tags fully inside it, digits of the kept count in the notice), so a binary
/// search over byte offsets followed by flooring to a char boundary finds it.
fn longest_cut(
    last: &Prep<'_>,
    base: Size,
    head_len: u64,
    omitted_len: u64,
    max_bytes: u64,
) -> Option<usize> {
    let original = last.content.len();
    if original < 2 {
        // Nothing shorter than the whole keeps a byte.
        return None;
    }
    let fixed_notice = head_len
        + if omitted_len > 0 {
            omitted_len + len(NOTICE_PART_SEP)
        } else {
            0
        }
        + len(NOTICE_TRUNCATED)
        + last.path_len()
        + len(NOTICE_FROM)
        + decimal_len(original as u64)
        + len(NOTICE_TO)
        + len(NOTICE_BYTES);
    let size_at = |kept: usize| {
        base.block(fixed_notice + decimal_len(kept as u64))
            .block(last.cut_len(kept))
            .framed()
    };
    if !fits(size_at(1), max_bytes) {
        return None;
    }
    // Invariant: `lo` fits; everything above `hi` does not.
    let (mut lo, mut hi) = (1, original - 1);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(size_at(mid), max_bytes) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let kept = last.content.floor_char_boundary(lo);
    (kept > 0).then_some(kept)
}

/// The omitted part of the notice (R-REN-4) over the first `count` inputs,
/// grown one dropped input at a time.
///
/// With every path listed it is `omitted p1, …, pk`; once that is longer
/// than the bound `L` it becomes `omitted p1, …, pj and <k - j> more` with
/// the largest fitting `j`, or `omitted <k> files` when no `j >= 1` fits.
/// That text grows strictly with `j` (each path adds its length plus the
/// separator, the count of the rest loses at most one digit), so the largest
/// fitting `j` is found by walking down; and that largest `j` never grows
/// when `k` grows (for a fixed `j` the count of the rest only gains digits),
/// so one pointer walking down serves every `k`: amortised constant work
/// per input.
#[derive(Debug)]
struct Omitted {
    /// `L`.
    bound: u64,
    /// Inputs dropped so far (`k`).
    count: usize,
    /// Length of `omitted p1, …, pk` (0 when nothing is dropped).
    full: u64,
    /// Once `full > bound`: paths still listed (`j`, possibly 0) and the
    /// length of `omitted p1, …, pj` (0 when `j = 0`).
    listed: Option<(usize, u64)>,
}

impl Omitted {
    fn new(max_bytes: u64) -> Self {
        Self {
            bound: OMITTED_BOUND_MIN.max(max_bytes / OMITTED_BOUND_DIVISOR),
            count: 0,
            full: 0,
            listed: None,
        }
    }

    /// Length a path adds to the list at position `index` (0-based).
    fn item_len(preps: &[Prep<'_>], index: usize) -> u64 {
        let lead = if index == 0 {
            NOTICE_OMITTED
        } else {
            NOTICE_LIST_SEP
        };
        len(lead) + preps[index].path_len()
    }

    /// Length of `omitted p1, …, pj and <rest> more`.
    fn first_len(listed_len: u64, rest: usize) -> u64 {
        listed_len + len(NOTICE_AND) + decimal_len(rest as u64) + len(NOTICE_MORE)
    }

    /// Drops the next input, `preps[self.count]`.
    fn push(&mut self, preps: &[Prep<'_>]) {
        let added = Self::item_len(preps, self.count);
        self.full += added;
        self.count += 1;
        if self.full <= self.bound {
            return;
        }
        // The text with every path but the newest is the largest candidate
        // the first time the bound is passed; later, the previous `j`.
        let (mut j, mut listed_len) = self.listed.unwrap_or((self.count - 1, self.full - added));
        while j > 0 && Self::first_len(listed_len, self.count - j) > self.bound {
            j -= 1;
            listed_len -= Self::item_len(preps, j);
        }
        self.listed = Some((j, listed_len));
    }

    /// Length of the omitted part as rendered; 0 when nothing is dropped.
    fn len(&self) -> u64 {
        match self.listed {
            None => self.full,
            Some((0, _)) => {
                len(NOTICE_OMITTED) + decimal_len(self.count as u64) + len(NOTICE_FILES)
            }
            Some((j, listed_len)) => Self::first_len(listed_len, self.count - j),
        }
    }

    /// Appends the omitted part, naming paths from `preps`.
    fn write(&self, out: &mut String, preps: &[Prep<'_>]) {
        if self.count == 0 {
            return;
        }
        let shown = match self.listed {
            None => self.count,
            Some((0, _)) => {
                // Writing to a String cannot fail.
                let _ = write!(out, "{NOTICE_OMITTED}{}{NOTICE_FILES}", self.count);
                return;
            }
            Some((j, _)) => j,
        };
        for (i, prep) in preps[..shown].iter().enumerate() {
            out.push_str(if i == 0 {
                NOTICE_OMITTED
            } else {
                NOTICE_LIST_SEP
            });
            out.push_str(&prep.path);
        }
        if shown < self.count {
            let _ = write!(out, "{NOTICE_AND}{}{NOTICE_MORE}", self.count - shown);
        }
    }
}

/// The notice text (R-REN-4), from escaped paths: the omitted part over the
/// first `omitted.count` of `preps`, then the truncated part if any.
fn notice(
    max_bytes: u64,
    preps: &[Prep<'_>],
    omitted: &Omitted,
    truncated: Option<(&Prep<'_>, usize, usize)>,
) -> String {
    let mut out = format!("{NOTICE_PREFIX}{max_bytes}{NOTICE_UNIT}");
    omitted.write(&mut out, preps);
    if let Some((prep, original, kept)) = truncated {
        if omitted.count > 0 {
            out.push_str(NOTICE_PART_SEP);
        }
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "{NOTICE_TRUNCATED}{}{NOTICE_FROM}{original}{NOTICE_TO}{kept}{NOTICE_BYTES}",
            prep.path
        );
    }
    out
}

/// Builds the chosen render and its report; its blocks only when `blocks`.
fn build(blocks: bool, choice: Choice<'_, '_>, inputs: usize, max_bytes: u64) -> Rendered {
    let (text, blocks) = if blocks {
        let blocks = build_blocks(&choice);
        (
            Framing::Reminder.part(blocks.iter().map(|b| b.text.as_str())),
            blocks,
        )
    } else {
        (build_text(&choice), Vec::new())
    };
    debug_assert_eq!(len(&text), choice.size, "measured size must match the text");
    // Defence in depth: a measuring bug must never produce an oversized part.
    if !fits(len(&text), max_bytes) {
        return nothing(inputs);
    }

    let count = choice.sections.len();
    let mut fates = vec![Fate::Omitted; choice.omitted];
    fates.extend(
        choice
            .sections
            .iter()
            .enumerate()
            .map(|(i, prep)| match choice.cut {
                Some(kept) if i + 1 == count && kept < prep.content.len() => Fate::Truncated {
                    original: prep.content.len(),
                    kept,
                },
                _ => Fate::Included,
            }),
    );
    Rendered {
        text,
        blocks,
        fates,
        notice: choice.notice,
        intro: choice.intro.map_or(IntroUsed::None, |(_, used)| used),
    }
}

/// Raw bytes kept of section `i` of the choice.
fn kept(choice: &Choice<'_, '_>, i: usize) -> usize {
    match choice.cut {
        Some(kept) if i + 1 == choice.sections.len() => kept,
        _ => choice.sections[i].content.len(),
    }
}

/// The chosen render's non-empty blocks: notice, intro, sections.
fn build_blocks(choice: &Choice<'_, '_>) -> Vec<Block> {
    let mut blocks = Vec::with_capacity(choice.sections.len() + 2);
    if let Some(notice) = &choice.notice {
        blocks.push(Block {
            kind: BlockKind::Notice,
            text: [choice.notice_lead, notice].concat(),
        });
    }
    if let Some((intro, _)) = choice.intro {
        blocks.push(Block {
            kind: BlockKind::Intro,
            text: intro.to_owned(),
        });
    }
    for (i, prep) in choice.sections.iter().enumerate() {
        blocks.push(section_block(prep, kept(choice, i)));
    }
    blocks.retain(|b| !b.text.is_empty());
    blocks
}

/// The chosen render's text written directly, sized once: what
/// [`Framing::Reminder`] makes of [`build_blocks`], without holding the
/// blocks too.
fn build_text(choice: &Choice<'_, '_>) -> String {
    let mut text = String::with_capacity(usize::try_from(choice.size).unwrap_or(0));
    text.push_str(FRAME_OPEN);
    let mut any = false;
    let mut next_block = |text: &mut String| {
        if any {
            text.push_str(SEP);
        }
        any = true;
    };
    if let Some(notice) = &choice.notice {
        next_block(&mut text);
        text.push_str(choice.notice_lead);
        text.push_str(notice);
    }
    if let Some((intro, _)) = choice.intro.filter(|(intro, _)| !intro.is_empty()) {
        next_block(&mut text);
        text.push_str(intro);
    }
    for (i, prep) in choice.sections.iter().enumerate() {
        next_block(&mut text);
        push_section(&mut text, prep, kept(choice, i));
    }
    if !any {
        return String::new();
    }
    text.push_str(FRAME_CLOSE);
    text
}

/// One section's block: its fixed text, then (after a blank line) the
/// first `kept` raw bytes of its content escaped, when any are kept.
/// Sized once: grown from its header, a block was reallocated once per
/// section, and on a chain shown whole the freed headers stayed in the
/// process (issue 46 item 4).
fn section_block(prep: &Prep<'_>, kept: usize) -> Block {
    let size = if kept > 0 {
        prep.cut_len(kept)
    } else {
        prep.fixed_len()
    };
    let mut text = String::with_capacity(usize::try_from(size).unwrap_or(0));
    push_section(&mut text, prep, kept);
    debug_assert_eq!(len(&text), size, "measured size must match the block");
    Block {
        kind: BlockKind::Section {
            header: text[..prep.header_len].to_owned(),
        },
        text,
    }
}

/// Appends what [`section_block`] holds.
fn push_section(out: &mut String, prep: &Prep<'_>, kept: usize) {
    prep.push_fixed(out);
    if let Some(content) = prep.content.get(..kept).filter(|c| !c.is_empty()) {
        out.push_str(SEP);
        let tags = &prep.tags[..tags_within(&prep.tags, kept)];
        push_escaped(out, content, tags);
    }
}
