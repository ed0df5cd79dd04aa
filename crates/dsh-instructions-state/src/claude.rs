//! Claude Code's own transformations of an instruction file's text
//! (R-HOOK-4), as measured against Claude Code 2.1.328
//! (`../shared/agent-harness/README.md`, "Native instruction loading").

/// Claude Code's transformations of an instruction file, in its order:
///
/// 1. YAML front matter at byte 0 (a `---` line, anything, a closing `---`
///    line) is removed together with the blank lines after it; an opening
///    `---` with no closing line is not front matter and stays.
/// 2. An HTML comment that starts a line (after at most three spaces of
///    indentation, outside fenced code blocks) is removed; when the comment
///    ends with only white space after it on its last line, its lines go
///    entirely (single- or multi-line), else the rest of that line stays. A
///    comment that does not start a line, one inside a fence, one in a code
///    span, one on a line indented four spaces or more (indented code) and
///    an unclosed `<!--` stay as written.
/// 3. The result is trimmed at both ends.
///
/// Where the measurements left a case open (four-space indentation, an
///    unclosed comment) the text stays: the model never sees less than the
/// file says.
///
/// ```
/// use dsh_instructions_state::config::claude_transform;
/// let text = "---\ntitle: x\n---\n\n# Rules\n<!-- hidden -->\nKeep <!-- this -->.\n";
/// assert_eq!(claude_transform(text), "# Rules\nKeep <!-- this -->.");
/// ```
pub fn claude_transform(text: &str) -> String {
    let body = strip_front_matter(text);
    strip_comment_lines(body).trim().to_owned()
}

/// A line without its line ending (`\n` or `\r\n`).
fn content(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

fn is_fence_line(line: &str) -> bool {
    line.trim_end() == "---"
}

/// The text after the front matter and the blank lines that follow it.
fn strip_front_matter(text: &str) -> &str {
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if is_fence_line(content(first)) && first.ends_with('\n') => {}
        _ => return text,
    }
    let mut offset = 0;
    let mut closed = None;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        if offset == line.len() {
            continue; // the opening line
        }
        if is_fence_line(content(line)) {
            closed = Some(offset);
            break;
        }
    }
    let Some(end) = closed else {
        return text;
    };
    let mut rest = &text[end..];
    // The blank lines right after the closing line go with it.
    while let Some(line) = rest.split_inclusive('\n').next() {
        if !content(line).trim().is_empty() || !line.ends_with('\n') {
            break;
        }
        rest = &rest[line.len()..];
    }
    rest
}

/// A fence opening or closing line: at most three spaces, then three or
/// more backticks or tildes. Returns the fence character and its length.
fn fence(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = rest.len() - rest.trim_start_matches(ch).len();
    (run >= 3).then_some((ch, run))
}

/// If `line` starts (after at most three spaces) with `<!--`, the byte
/// offset of `<!--` in it.
fn comment_start(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    (indent <= 3 && line[indent..].starts_with("<!--")).then_some(indent)
}

/// Removes the HTML comments that start a line outside fences (step 2 of
/// [`claude_transform`](crate::config::claude_transform)).
fn strip_comment_lines(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    let mut open_fence: Option<(char, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let body = content(line);
        if let Some((ch, len)) = open_fence {
            if fence(body).is_some_and(|(c, l)| {
                c == ch && l >= len && body.trim_start().trim_start_matches(ch).trim().is_empty()
            }) {
                open_fence = None;
            }
            out.push_str(line);
            i += 1;
            continue;
        }
        if let Some(f) = fence(body) {
            open_fence = Some(f);
            out.push_str(line);
            i += 1;
            continue;
        }
        let Some(start) = comment_start(body) else {
            out.push_str(line);
            i += 1;
            continue;
        };
        // Find the end of the comment: in this line after `<!--`, or in a
        // later line.
        let mut end = None;
        let mut search_from = start + 4;
        for (j, l) in lines.iter().enumerate().skip(i) {
            let b = content(l);
            let from = if j == i { search_from } else { 0 };
            if let Some(pos) = b[from..].find("-->") {
                end = Some((j, from + pos + 3));
                break;
            }
            search_from = 0;
        }
        let Some((j, after)) = end else {
            // Unclosed: not a comment we know how Claude treats; keep it.
            out.push_str(line);
            i += 1;
            continue;
        };
        let last = lines[j];
        let rest = &content(last)[after..];
        if rest.trim().is_empty() {
            // The comment's lines go entirely.
        } else {
            // Only the comment goes; indentation and the rest stay.
            out.push_str(&body[..start]);
            out.push_str(&last[after..]);
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    // R-HOOK-4: Claude Code's transformations, one behaviour per case.
    #[rstest]
    #[case::plain("# A\nbody\n", "# A\nbody")]
    #[case::trims_both_ends("\n\n  # A\nbody  \n\n", "# A\nbody")]
    #[case::front_matter("---\nname: x\n---\n# A\n", "# A")]
    #[case::front_matter_blank_lines_after("---\nname: x\n---\n\n\n# A\n", "# A")]
    #[case::front_matter_crlf("---\r\nname: x\r\n---\r\n\r\n# A\r\n", "# A")]
    #[case::front_matter_only("---\nname: x\n---\n", "")]
    #[case::front_matter_empty("---\n---\nA", "A")]
    #[case::front_matter_not_at_byte_0("\n---\nname: x\n---\n# A", "---\nname: x\n---\n# A")]
    #[case::front_matter_after_bom_space(" ---\nname: x\n---\nA", "---\nname: x\n---\nA")]
    #[case::front_matter_unclosed("---\nname: x\n# A\n", "---\nname: x\n# A")]
    #[case::later_rule_stays("# A\n---\nB\n---\nC", "# A\n---\nB\n---\nC")]
    #[case::comment_line("A\n<!-- note -->\nB\n", "A\nB")]
    #[case::comment_line_trailing_space("A\n<!-- note -->  \nB", "A\nB")]
    #[case::comment_indented("A\n   <!-- note -->\nB", "A\nB")]
    #[case::comment_multi_line("A\n<!--\nline 1\nline 2\n-->\nB", "A\nB")]
    #[case::comment_multi_line_indented("A\n  <!-- one\n  two -->\nB", "A\nB")]
    #[case::comment_first_line("<!-- top -->\n# A", "# A")]
    #[case::comment_starting_line_keeps_rest("<!-- c --> keep\nB", "keep\nB")]
    #[case::comment_starting_line_keeps_rest_mid("A\n<!-- c -->keep\nB", "A\nkeep\nB")]
    #[case::multi_line_comment_keeps_rest("A\n<!-- c\nd --> keep\nB", "A\n keep\nB")]
    #[case::comment_mid_line_stays("A <!-- c --> B", "A <!-- c --> B")]
    #[case::comment_in_code_span_stays("`<!-- c -->` B", "`<!-- c -->` B")]
    #[case::comment_in_backtick_fence_stays("```\n<!-- c -->\n```\nB", "```\n<!-- c -->\n```\nB")]
    #[case::comment_in_tilde_fence_stays(
        "~~~md\n<!-- c -->\n~~~\n<!-- d -->\nB",
        "~~~md\n<!-- c -->\n~~~\nB"
    )]
    #[case::comment_after_fence_closes("```\nx\n```\n<!-- c -->\nB", "```\nx\n```\nB")]
    #[case::shorter_fence_does_not_close(
        "````\n```\n<!-- c -->\n````\nB",
        "````\n```\n<!-- c -->\n````\nB"
    )]
    #[case::four_spaces_is_code("A\n    <!-- c -->\nB", "A\n    <!-- c -->\nB")]
    #[case::unclosed_comment_stays("A\n<!-- open\nB", "A\n<!-- open\nB")]
    #[case::two_comments("<!-- a -->\n<!-- b -->\nA", "A")]
    #[case::front_matter_then_comment("---\nx: 1\n---\n\n<!-- c -->\n\nA", "A")]
    #[case::empty("", "")]
    fn transforms(#[case] input: &str, #[case] want: &str) {
        assert_eq!(claude_transform(input), want);
    }

    proptest! {
        #[test]
        fn never_panics_and_is_trimmed(s in "[-<!>`~ \\na-z\r]{0,60}") {
            let out = claude_transform(&s);
            prop_assert_eq!(out.trim(), out.as_str());
        }

        #[test]
        fn idempotent_on_text_without_markup(s in "[a-z #\\n]{0,60}") {
            let once = claude_transform(&s);
            prop_assert_eq!(claude_transform(&once), once.clone());
            prop_assert_eq!(once, s.trim());
        }
    }
}
