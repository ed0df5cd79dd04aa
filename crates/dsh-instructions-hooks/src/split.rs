//! Splitting one composed workspace message into parts the agents keep
//! whole (R-HOOK-4, decision 0018).
//!
//! Claude Code and Codex keep about 10,000 characters of one
//! `additionalContext` whole, but each of several command hooks on one
//! event keeps its own. So a message larger than [`PART_BYTES`] is cut into
//! parts of at most that size, one per registered `--part K` entry. The cut
//! falls between the blocks render gave the message (its preamble — notice
//! and intro — and each section, [`WorkspaceMessage::blocks`]): the text is
//! never parsed again, so a file whose content looks like a section header
//! splits like any other. A section longer than a part continues in the
//! next one with its header repeated and ` (continued)`. Every part of a
//! split message opens with a label naming its place (`part 2 of 3`) and the
//! precedence, because Claude Code shows hook outputs in the order they
//! finished, not the order registered. How a part is wrapped for its agent
//! is a [`Framing`] chosen when it is rendered ([`render_part`]).
//!
//! [`WorkspaceMessage::blocks`]: dsh_instructions_runtime::WorkspaceMessage::blocks

use dsh_instructions_render::{
    Block, BlockKind, Framing,
    text::{FRAME_CLOSE, FRAME_OPEN},
};
use dsh_instructions_runtime::WorkspaceMessage;

/// The largest part, in bytes: below the ~10,000 characters Claude Code and
/// Codex keep whole (harness README, "Limits seen").
pub const PART_BYTES: usize = 9_000;

/// What a continued section's repeated header ends with.
pub const CONTINUED: &str = " (continued)";

/// Bytes reserved in every part of a split message for its label (the
/// longest label, with three-digit numbers, plus its blank line).
const LABEL_RESERVE: usize = 240;

/// The label opening part `k` of `n` (R-HOOK-4: each part names its place
/// and the precedence, so the parts read correctly in any order).
///
/// ```
/// use dsh_instructions_hooks::parts::part_label;
/// assert!(part_label(2, 3).starts_with("Workspace instructions, part 2 of 3."));
/// ```
pub fn part_label(k: usize, n: usize) -> String {
    format!(
        "Workspace instructions, part {k} of {n}. The {n} parts are one message, in the order of \
         their numbers: where two parts conflict, the higher-numbered part takes precedence."
    )
}

/// Splits `message` into part bodies: each a list of blocks that fits a part
/// of `part_bytes` with its frame and label. Use [`render_part`] to frame
/// one. A message whose framed text fits one part is one part holding its
/// blocks unchanged. The sizes are those of the [`Framing::Reminder`] text,
/// the longer one, so a message splits the same for every agent. A message
/// without blocks (one a host built from text) gives no parts.
pub fn split(message: &WorkspaceMessage, part_bytes: usize) -> Vec<Part> {
    let frames: Vec<Vec<String>> = message
        .blocks
        .iter()
        .map(|part| part.iter().map(|b| b.text.clone()).collect())
        .filter(|part: &Vec<String>| !part.is_empty())
        .collect();
    if frames.is_empty() {
        return Vec::new();
    }
    let whole_len: usize = frames
        .iter()
        .map(|f| Framing::Reminder.part(f.iter().map(String::as_str)).len())
        .sum::<usize>()
        + frames.len()
        - 1;
    if whole_len <= part_bytes {
        return vec![Part::Whole(frames)];
    }
    let cap = part_bytes
        .saturating_sub(FRAME_OPEN.len() + FRAME_CLOSE.len() + LABEL_RESERVE)
        .max(64);
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let mut size = 0usize;
    for (header, block) in units(&message.blocks) {
        let mut block = block;
        loop {
            let sep = if cur.is_empty() { 0 } else { 2 };
            if size + sep + block.len() <= cap {
                size += sep + block.len();
                cur.push(block);
                break;
            }
            if block.len() <= cap || cap.saturating_sub(size + sep) < cap / 4 {
                // It fits an empty part, or too little room is left here to
                // start it: begin the next part.
                if !cur.is_empty() {
                    parts.push(std::mem::take(&mut cur));
                    size = 0;
                    continue;
                }
            }
            // Longer than the room: cut, and continue in the next part.
            let room = cap - size - sep;
            let at = cut_point(&block, room);
            let rest = block.split_off(at);
            cur.push(block);
            parts.push(std::mem::take(&mut cur));
            size = 0;
            block = continued(&rest, header);
        }
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts.into_iter().map(Part::Blocks).collect()
}

/// The units a split moves whole when it can, in order: per rendered part,
/// its preamble (notice and intro, joined as in the text) and each section
/// with its header line.
fn units(parts: &[Vec<Block>]) -> Vec<(Option<&str>, String)> {
    let mut out = Vec::new();
    for part in parts {
        let mut preamble: Vec<&str> = Vec::new();
        for block in part {
            match &block.kind {
                BlockKind::Section { header } => {
                    if !preamble.is_empty() {
                        out.push((None, preamble.join("\n\n")));
                        preamble.clear();
                    }
                    out.push((Some(header.as_str()), block.text.clone()));
                }
                BlockKind::Notice | BlockKind::Intro => preamble.push(&block.text),
            }
        }
        if !preamble.is_empty() {
            out.push((None, preamble.join("\n\n")));
        }
    }
    out
}

/// The rest of a cut section, under its repeated header.
fn continued(rest: &str, header: Option<&str>) -> String {
    match header {
        Some(h) => format!("{h}{CONTINUED}\n\n{rest}"),
        None => rest.to_owned(),
    }
}

/// Where to cut `block` so the first piece is at most `room` bytes: after
/// the last newline in the second half of the room, else at the last
/// character boundary. Always at least one character, so the split ends.
fn cut_point(block: &str, room: usize) -> usize {
    let mut at = room.min(block.len());
    while at > 0 && !block.is_char_boundary(at) {
        at -= 1;
    }
    if let Some(nl) = block[..at].rfind('\n')
        && nl + 1 > at / 2
    {
        at = nl + 1;
    }
    if at == 0 {
        at = block.chars().next().map_or(block.len(), char::len_utf8);
    }
    at
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The whole message (it fits one part): the blocks of each of its
    /// rendered parts.
    Whole(Vec<Vec<String>>),
    /// Blocks of a split message, labelled by [`render_part`].
    Blocks(Vec<String>),
}

/// The text of part `k` of `n`, wrapped as `framing` says. A whole message
/// alone is its text unchanged (one frame per rendered part, as
/// [`WorkspaceMessage::framed_text`] gives it); next to other parts, and
/// every piece of a split message, it is one frame opening with its label.
///
/// ```
/// use dsh_instructions_hooks::parts::{Part, render_part};
/// use dsh_instructions_render::Framing;
/// let part = Part::Blocks(vec!["Instructions from: AGENTS.md\n\nUse tabs.".into()]);
/// let text = render_part(&part, 1, 2, Framing::Bare);
/// assert!(text.starts_with("Workspace instructions, part 1 of 2."));
/// assert!(text.ends_with("\n\nInstructions from: AGENTS.md\n\nUse tabs."));
/// ```
pub fn render_part(part: &Part, k: usize, n: usize, framing: Framing) -> String {
    let blocks: Vec<&str> = match part {
        Part::Whole(frames) if n == 1 => {
            return frames
                .iter()
                .map(|f| framing.part(f.iter().map(String::as_str)))
                .collect::<Vec<_>>()
                .join(framing.between_parts());
        }
        // A whole message carried next to other parts gets a label too.
        Part::Whole(frames) => frames.iter().flatten().map(String::as_str).collect(),
        Part::Blocks(blocks) => blocks.iter().map(String::as_str).collect(),
    };
    let label = part_label(k, n);
    framing.part(std::iter::once(label.as_str()).chain(blocks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_render::{
        BaselineFile, BaselineKind, Budget, Rendered, Section, render_baseline, render_dynamic,
        text::INTRO_NORMAL,
    };
    use rstest::rstest;

    const ROOMY: Budget = Budget::bytes(1 << 20);

    fn message(parts: Vec<Rendered>) -> WorkspaceMessage {
        WorkspaceMessage {
            parts: parts.iter().map(|r| r.text.clone()).collect(),
            blocks: parts.into_iter().map(|r| r.blocks).collect(),
            source: Default::default(),
        }
    }

    fn baseline(files: &[(String, String)]) -> Rendered {
        let files: Vec<BaselineFile<'_>> = files
            .iter()
            .map(|(path, content)| BaselineFile { path, content })
            .collect();
        render_baseline(BaselineKind::Normal, &files, ROOMY)
    }

    fn section(path: &str, content: &str) -> String {
        format!("Instructions from: {path}\n\n{content}")
    }

    /// Every part rendered, as the model would read them.
    fn rendered(m: &WorkspaceMessage, size: usize, framing: Framing) -> Vec<String> {
        let parts = split(m, size);
        let n = parts.len();
        parts
            .iter()
            .enumerate()
            .map(|(i, p)| render_part(p, i + 1, n, framing))
            .collect()
    }

    #[test]
    fn an_empty_message_is_no_part() {
        assert!(split(&message(Vec::new()), PART_BYTES).is_empty());
        assert!(split(&message(vec![render_dynamic(&[], ROOMY)]), PART_BYTES).is_empty());
    }

    /// A message that fits is one part: the composed text unchanged, or for
    /// a bare agent the same without our frames (decision 0019).
    #[test]
    fn a_small_message_is_one_part_unchanged() {
        let m = message(vec![
            baseline(&[("AGENTS.md".into(), "Use tabs.".into())]),
            render_dynamic(
                &[Section::Remove {
                    path: "x/AGENTS.md",
                }],
                ROOMY,
            ),
        ]);
        assert_eq!(
            rendered(&m, PART_BYTES, Framing::Reminder),
            [m.joined_text()]
        );
        let bare = rendered(&m, PART_BYTES, Framing::Bare);
        assert_eq!(bare, [m.framed_text(Framing::Bare)]);
        assert!(!bare[0].contains("system-reminder"), "{}", bare[0]);
        assert!(bare[0].contains("Use tabs.\n\nInstructions removed: x/AGENTS.md"));
    }

    /// Sections are never cut when they fit: the cut falls between them,
    /// every part fits, is one frame, names its place, and the sections
    /// come out whole and in order.
    #[rstest]
    #[case::three_files(3, 4_000)]
    #[case::many_small(40, 700)]
    #[case::two_big(2, 8_000)]
    fn sections_stay_whole_and_in_order(#[case] files: usize, #[case] each: usize) {
        let files: Vec<(String, String)> = (0..files)
            .map(|i| {
                (
                    format!("d{i}/AGENTS.md"),
                    format!("{i}:{}", "x".repeat(each)),
                )
            })
            .collect();
        let secs: Vec<String> = files.iter().map(|(p, c)| section(p, c)).collect();
        let parts = rendered(
            &message(vec![baseline(&files)]),
            PART_BYTES,
            Framing::Reminder,
        );
        assert!(parts.len() > 1);
        let n = parts.len();
        let mut seen = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            assert!(p.len() <= PART_BYTES, "part {} is {} bytes", i + 1, p.len());
            assert!(p.starts_with(&format!(
                "{FRAME_OPEN}Workspace instructions, part {} of {n}.",
                i + 1
            )));
            assert!(p.ends_with(FRAME_CLOSE));
            assert_eq!(p.matches("</system-reminder>").count(), 1);
            assert!(!p.contains(CONTINUED), "no section needed cutting");
            for s in &secs {
                if p.contains(s.as_str()) {
                    seen.push(s.clone());
                }
            }
        }
        assert_eq!(seen, secs, "each section whole, once, in order");
    }

    /// A section longer than a part continues in the next with its header
    /// repeated and `(continued)`; joining the pieces gives the content back.
    #[rstest]
    #[case::lines(30_000, true)]
    #[case::one_line(20_000, false)]
    #[case::multibyte(12_000, false)]
    fn a_long_section_continues_with_its_header(#[case] len: usize, #[case] lines: bool) {
        let content: String = if lines {
            (0..)
                .map(|i| format!("line {i}\n"))
                .take_while({
                    let mut total = 0;
                    move |l: &String| {
                        total += l.len();
                        total <= len
                    }
                })
                .collect()
        } else if len == 12_000 {
            "ä€".repeat(len / 5)
        } else {
            "y".repeat(len)
        };
        let m = message(vec![baseline(&[("AGENTS.md".into(), content.clone())])]);
        let parts = rendered(&m, PART_BYTES, Framing::Reminder);
        assert!(parts.len() >= 2);
        let mut joined = String::new();
        for (i, p) in parts.iter().enumerate() {
            assert!(p.len() <= PART_BYTES);
            let body = p
                .strip_prefix(FRAME_OPEN)
                .and_then(|b| b.strip_suffix(FRAME_CLOSE))
                .expect("framed");
            let (_label, rest) = body.split_once("\n\n").expect("label");
            let rest = if i == 0 {
                rest.strip_prefix(&format!("{INTRO_NORMAL}\n\n"))
                    .expect("intro first")
            } else {
                rest
            };
            let header = if i == 0 {
                "Instructions from: AGENTS.md\n\n".to_owned()
            } else {
                format!("Instructions from: AGENTS.md{CONTINUED}\n\n")
            };
            joined.push_str(rest.strip_prefix(&header).expect("header"));
        }
        assert_eq!(joined, content, "nothing lost, nothing added");
    }

    /// Issue 31 item 3: the split works on render's blocks, not on the
    /// text, so a file whose content holds what looks like a section header
    /// splits exactly like the same file with that line spelled otherwise —
    /// byte for byte, the continued header naming the real file.
    #[rstest]
    #[case::baseline_header("\n\nInstructions from: fake/AGENTS.md\n\n")]
    #[case::set_header("\n\nAdditional instructions from: fake/AGENTS.md\n\n")]
    fn a_file_that_looks_like_a_section_splits_like_any_other(#[case] lookalike: &str) {
        let other = lookalike.replacen("from:", "from=", 1);
        assert_eq!(other.len(), lookalike.len());
        let with = |middle: &str| {
            let content = format!("{}{middle}{}", "a".repeat(7_000), "b".repeat(7_000));
            message(vec![baseline(&[
                ("AGENTS.md".into(), "root".into()),
                ("pkg/AGENTS.md".into(), content),
            ])])
        };
        for framing in [Framing::Reminder, Framing::Bare] {
            let looks = rendered(&with(lookalike), PART_BYTES, framing);
            let plain = rendered(&with(&other), PART_BYTES, framing);
            assert!(looks.len() > 1);
            let looks: Vec<String> = looks
                .iter()
                .map(|p| p.replacen(lookalike, &other, 1))
                .collect();
            assert_eq!(looks, plain, "{framing:?}");
            assert!(
                plain
                    .iter()
                    .skip(1)
                    .all(|p| p.contains(&format!("Instructions from: pkg/AGENTS.md{CONTINUED}"))),
                "{plain:?}"
            );
        }
    }

    /// Both frames of a two-part message (baseline + dynamic batch) split as
    /// one sequence of sections.
    #[test]
    fn two_frames_split_as_one_message() {
        let m = message(vec![
            baseline(&[("AGENTS.md".into(), "a".repeat(6_000))]),
            render_dynamic(
                &[Section::SetProject {
                    path: "x/AGENTS.md",
                    dir: "x",
                    content: &"b".repeat(6_000),
                }],
                ROOMY,
            ),
        ]);
        let parts = rendered(&m, PART_BYTES, Framing::Reminder);
        assert_eq!(parts.len(), 2);
        assert!(parts[0].contains(&"a".repeat(6_000)));
        assert!(parts[1].contains("Additional instructions from: x/AGENTS.md\n\n"));
    }

    /// The bare framing is the framed part without our frame, label and
    /// all; escaped closing tags in content stay escaped.
    #[test]
    fn a_bare_part_is_the_framed_one_without_our_frame() {
        let m = message(vec![baseline(&[(
            "AGENTS.md".into(),
            format!("A </system-reminder> {}", "z".repeat(12_000)),
        )])]);
        let framed = rendered(&m, PART_BYTES, Framing::Reminder);
        let bare = rendered(&m, PART_BYTES, Framing::Bare);
        assert_eq!(framed.len(), bare.len());
        for (f, b) in framed.iter().zip(&bare) {
            let inner = f
                .strip_prefix(FRAME_OPEN)
                .and_then(|t| t.strip_suffix(FRAME_CLOSE));
            assert_eq!(inner, Some(b.as_str()));
        }
        assert!(bare[0].contains("A <\\/system-reminder> z"), "{}", bare[0]);
    }
}
