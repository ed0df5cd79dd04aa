//! Splitting one composed workspace message into parts the agents keep
//! whole (R-HOOK-4, decision 0018).
//!
//! Claude Code and Codex keep about 10,000 characters of one
//! `additionalContext` whole, but each of several command hooks on one
//! event keeps its own. So a message larger than [`PART_BYTES`] is cut into
//! parts of at most that size, one per registered `--part K` entry. The cut
//! falls between sections (a section starts at a line beginning with one of
//! the R-REN header prefixes); a section longer than a part continues in
//! the next one with its header repeated and ` (continued)`. Every part of a
//! split message is its own `<system-reminder>` frame and opens with a label
//! naming its place (`part 2 of 3`) and the precedence, because Claude Code
//! shows hook outputs in the order they finished, not the order registered.

use dsh_instructions_render::{FRAME_CLOSE, FRAME_OPEN, SECTION_HEADER_PREFIXES};

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
/// use dsh_instructions_hooks::part_label;
/// assert!(part_label(2, 3).starts_with("Workspace instructions, part 2 of 3."));
/// ```
pub fn part_label(k: usize, n: usize) -> String {
    format!(
        "Workspace instructions, part {k} of {n}. The {n} parts are one message, in the order of \
         their numbers: where two parts conflict, the higher-numbered part takes precedence."
    )
}

/// Splits `text` (one or more R-REN frames, as [`WorkspaceMessage::joined_text`]
/// gives them) into part bodies: each a list of blocks that fits a part of
/// `part_bytes` with its frame and label. Use [`render_part`] to frame one.
/// A text that fits one part is one part holding it unchanged.
///
/// [`WorkspaceMessage::joined_text`]: dsh_instructions_runtime::WorkspaceMessage::joined_text
pub fn split(text: &str, part_bytes: usize) -> Vec<Part> {
    if text.is_empty() {
        return Vec::new();
    }
    if text.len() <= part_bytes {
        return vec![Part::Whole(text.to_owned())];
    }
    let cap = part_bytes
        .saturating_sub(FRAME_OPEN.len() + FRAME_CLOSE.len() + LABEL_RESERVE)
        .max(64);
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let mut size = 0usize;
    for block in blocks(text) {
        let mut block = block.to_owned();
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
            block = continued(&rest, header_of(&cur_header_source(&parts)));
        }
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts.into_iter().map(Part::Blocks).collect()
}

/// The header line of the last block of the last finished part (the
/// section being continued).
fn cur_header_source(parts: &[Vec<String>]) -> String {
    parts
        .last()
        .and_then(|p| p.last())
        .cloned()
        .unwrap_or_default()
}

/// The section header a block starts with, if it is a section; for a
/// continued block, the original header (without ` (continued)`).
fn header_of(block: &str) -> Option<String> {
    let line = block.lines().next()?;
    SECTION_HEADER_PREFIXES
        .iter()
        .any(|p| line.starts_with(p))
        .then(|| line.trim_end_matches(CONTINUED).to_owned())
}

/// The rest of a cut section, under its repeated header.
fn continued(rest: &str, header: Option<String>) -> String {
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

/// The blocks of every frame of `text`: the preamble (notice, intro) and
/// each section, in order, without the frames.
fn blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let frames = text.split(concat_close_open());
    for frame in frames {
        let body = frame
            .strip_prefix(FRAME_OPEN)
            .unwrap_or(frame)
            .strip_suffix(FRAME_CLOSE)
            .unwrap_or_else(|| frame.strip_prefix(FRAME_OPEN).unwrap_or(frame));
        let mut start = 0;
        let mut from = 0;
        while let Some(rel) = body[from..].find("\n\n") {
            let at = from + rel;
            let next = &body[at + 2..];
            if SECTION_HEADER_PREFIXES.iter().any(|p| next.starts_with(p)) {
                out.push(&body[start..at]);
                start = at + 2;
            }
            from = at + 2;
        }
        out.push(&body[start..]);
    }
    out.retain(|b| !b.is_empty());
    out
}

/// Between two frames of one message (`joined_text` joins with `\n`).
fn concat_close_open() -> &'static str {
    "\n</system-reminder>\n<system-reminder>\n"
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The whole message, unchanged (it fits one part).
    Whole(String),
    /// Blocks of a split message, framed and labelled by [`render_part`].
    Blocks(Vec<String>),
}

/// The text of part `k` of `n`.
pub fn render_part(part: &Part, k: usize, n: usize) -> String {
    match part {
        Part::Whole(text) if n == 1 => text.clone(),
        Part::Whole(text) => {
            // A whole message carried next to other parts gets a label too.
            let body = blocks(text).join("\n\n");
            format!("{FRAME_OPEN}{}\n\n{body}{FRAME_CLOSE}", part_label(k, n))
        }
        Part::Blocks(blocks) => format!(
            "{FRAME_OPEN}{}\n\n{}{FRAME_CLOSE}",
            part_label(k, n),
            blocks.join("\n\n")
        ),
    }
}

/// `text` without this project's `<system-reminder>` frames, for an agent
/// that wraps hook context in its own (decision 0019): frames become blank
/// lines between their bodies. Escaped closing tags in content stay escaped.
pub fn unframe(text: &str) -> String {
    text.split(concat_close_open())
        .map(|f| {
            let f = f.strip_prefix(FRAME_OPEN).unwrap_or(f);
            f.strip_suffix(FRAME_CLOSE).unwrap_or(f)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn frame(body: &str) -> String {
        format!("{FRAME_OPEN}{body}{FRAME_CLOSE}")
    }

    fn section(path: &str, content: &str) -> String {
        format!("Instructions from: {path}\n\n{content}")
    }

    /// Every part rendered, as the model would read them.
    fn rendered(text: &str, size: usize) -> Vec<String> {
        let parts = split(text, size);
        let n = parts.len();
        parts
            .iter()
            .enumerate()
            .map(|(i, p)| render_part(p, i + 1, n))
            .collect()
    }

    #[rstest]
    #[case::empty("", 0)]
    #[case::small("<system-reminder>\nx\n</system-reminder>", 1)]
    fn small_messages_are_one_part_unchanged(#[case] text: &str, #[case] n: usize) {
        let parts = rendered(text, PART_BYTES);
        assert_eq!(parts.len(), n);
        if n == 1 {
            assert_eq!(parts[0], text);
        }
    }

    /// Sections are never cut when they fit: the cut falls between them,
    /// every part fits, is one frame, names its place, and the sections
    /// come out whole and in order.
    #[rstest]
    #[case::three_files(3, 4_000)]
    #[case::many_small(40, 700)]
    #[case::two_big(2, 8_000)]
    fn sections_stay_whole_and_in_order(#[case] files: usize, #[case] each: usize) {
        let secs: Vec<String> = (0..files)
            .map(|i| {
                section(
                    &format!("d{i}/AGENTS.md"),
                    &format!("{i}:{}", "x".repeat(each)),
                )
            })
            .collect();
        let text = frame(&format!("INTRO\n\n{}", secs.join("\n\n")));
        let parts = rendered(&text, PART_BYTES);
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
        let text = frame(&format!("INTRO\n\n{}", section("AGENTS.md", &content)));
        let parts = rendered(&text, PART_BYTES);
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
                rest.strip_prefix("INTRO\n\n").expect("intro first")
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

    /// Both frames of a two-part message (baseline + dynamic batch) split as
    /// one sequence of sections.
    #[test]
    fn two_frames_split_as_one_message() {
        let a = frame(&format!(
            "INTRO\n\n{}",
            section("AGENTS.md", &"a".repeat(6_000))
        ));
        let b = frame(&format!(
            "Additional instructions from: x/AGENTS.md\n\n{}",
            "b".repeat(6_000)
        ));
        let parts = rendered(&format!("{a}\n{b}"), PART_BYTES);
        assert_eq!(parts.len(), 2);
        assert!(parts[0].contains(&"a".repeat(6_000)));
        assert!(parts[1].contains("Additional instructions from: x/AGENTS.md\n\n"));
    }

    #[test]
    fn unframe_drops_only_our_frames() {
        let text = format!("{}\n{}", frame("A <\\/system-reminder> z"), frame("B"));
        assert_eq!(unframe(&text), "A <\\/system-reminder> z\n\nB");
    }
}
