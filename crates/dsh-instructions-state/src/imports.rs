//! The pure half of `@path` imports (SPEC §13): finding import tokens in a
//! file's text (R-IMP-1) and assembling a candidate's section content from
//! its own text and the imported files (R-IMP-3). Resolution and reads live
//! in the runtime, through the provider (R-IMP-2).

/// Deepest import level expanded below a candidate file (R-IMP-2).
pub const IMPORT_MAX_DEPTH: usize = 5;

/// Most imports expanded into one candidate (R-IMP-2).
pub const IMPORT_MAX_COUNT: usize = 64;

/// An `@path` token found outside code (R-IMP-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportToken {
    /// The path as written, trailing sentence punctuation and closing
    /// brackets or quotes removed.
    pub path: String,
    /// Byte offset of the `@` in the text; `text[offset..]` starts with
    /// `@` followed by `path`.
    pub offset: usize,
}

/// Characters that end a sentence or close a bracket or quote: written
/// after a path ("see @AGENTS.md."), never part of it (R-IMP-1).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];

/// A fence opening or closing line: the fence character and run length,
/// plus whether anything follows the run (an info string).
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let body = line.trim_start_matches([' ', '\t']);
    let ch = body.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = body.len() - body.trim_start_matches(ch).len();
    if run < 3 {
        return None;
    }
    let rest = &body[run..];
    // CommonMark: a backtick fence's info string holds no backtick (else
    // the line is inline code, e.g. "```x```").
    if ch == '`' && rest.contains('`') {
        return None;
    }
    Some((ch, run, rest))
}

/// Every import token of `text`, in order of appearance (R-IMP-1): an `@`
/// at the start of a line or after white space, followed by a relative
/// path (`name`, `./…`, `../…` or `~/…`) that runs to the next white space
/// (or backtick). Nothing inside a fenced code block (``` or ~~~, closed by
/// a run of the same character at least as long; an unclosed fence runs to
/// the end) or an inline code span (a backtick run closed by a run of the
/// same length on the same line) is a token. Absolute paths, `~user/…` and
/// an e-mail address (`@` after a letter) are not tokens. Whether a token
/// names an import is decided by resolving it (R-IMP-2).
///
/// ```
/// use dsh_instructions_state::imports::import_tokens;
/// let text = "See @AGENTS.md.\nMail ops@example.com or read `@not-this`.\n```\n@nor-this\n```\n- @docs/style.md";
/// let paths: Vec<String> = import_tokens(text).into_iter().map(|t| t.path).collect();
/// assert_eq!(paths, ["AGENTS.md", "docs/style.md"]);
/// ```
pub fn import_tokens(text: &str) -> Vec<ImportToken> {
    let mut out = Vec::new();
    if !text.contains('@') {
        return out;
    }
    // The open fence: its character and run length.
    let mut open: Option<(char, usize)> = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        match (open, fence(line)) {
            (Some((ch, run)), Some((c, r, rest)))
                if c == ch && r >= run && rest.trim().is_empty() =>
            {
                open = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, Some((c, r, _))) => {
                open = Some((c, r));
                continue;
            }
            (None, None) => {}
        }
        scan_line(line, start, &mut out);
    }
    out
}

/// Tokens of one line outside any fence, skipping inline code spans.
fn scan_line(line: &str, base: usize, out: &mut Vec<ImportToken>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => {
                let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
                i += run;
                if let Some(close) = closing_run(&bytes[i..], run) {
                    i += close + run;
                }
            }
            b'@' if i == 0 || line[..i].ends_with(char::is_whitespace) => {
                let rest = &line[i + 1..];
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '`')
                    .unwrap_or(rest.len());
                let path = rest[..end].trim_end_matches(TRAILING);
                if is_relative_path(path) {
                    out.push(ImportToken {
                        path: path.to_owned(),
                        offset: base + i,
                    });
                }
                i += 1 + end;
            }
            _ => i += 1,
        }
    }
}

/// Offset of the next run of exactly `run` backticks in `rest`.
fn closing_run(rest: &[u8], run: usize) -> Option<usize> {
    let mut j = 0;
    while j < rest.len() {
        if rest[j] == b'`' {
            let n = rest[j..].iter().take_while(|b| **b == b'`').count();
            if n == run {
                return Some(j);
            }
            j += n;
        } else {
            j += 1;
        }
    }
    None
}

/// `name`, `./…`, `../…` or `~/…`; not empty, not absolute, not `~user`.
fn is_relative_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('\\')
        && (!path.starts_with('~') || path.starts_with("~/"))
        && !path.contains('\0')
}

/// One expanded import of a candidate, in order of first appearance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportBlock<'a> {
    /// Display path (R-IMP-3).
    pub display: &'a str,
    /// The imported file's own text; `None` when the file is loaded as its
    /// own section in the same baseline (its block then has no content).
    pub content: Option<&'a str>,
}

impl ImportBlock<'_> {
    /// Bytes this block adds to the section content.
    pub fn len(&self) -> usize {
        const HEAD: usize = "\n\nImported from: ".len();
        match self.content {
            Some(c) => HEAD + self.display.len() + 2 + c.len(),
            None => HEAD + self.display.len() + OWN_SECTION.len(),
        }
    }

    /// Never true: a block always carries its header.
    pub fn is_empty(&self) -> bool {
        false
    }
}

const OWN_SECTION: &str = " (loaded as its own section)";

/// A candidate's section content (R-IMP-3): its own text, unchanged, then
/// per block `\n\nImported from: <display path>\n\n<content>`, or
/// `\n\nImported from: <display path> (loaded as its own section)`.
///
/// ```
/// use dsh_instructions_state::imports::{ImportBlock, assemble_imports};
/// let got = assemble_imports("See @AGENTS.md", &[
///     ImportBlock { display: "AGENTS.md", content: Some("Run make test.") },
///     ImportBlock { display: "pkg/AGENTS.md", content: None },
/// ]);
/// assert_eq!(got, "See @AGENTS.md\n\nImported from: AGENTS.md\n\nRun make test.\
///     \n\nImported from: pkg/AGENTS.md (loaded as its own section)");
/// ```
pub fn assemble_imports(own: &str, blocks: &[ImportBlock<'_>]) -> String {
    let mut out =
        String::with_capacity(own.len() + blocks.iter().map(ImportBlock::len).sum::<usize>());
    out.push_str(own);
    for b in blocks {
        out.push_str("\n\nImported from: ");
        out.push_str(b.display);
        match b.content {
            Some(c) => {
                out.push_str("\n\n");
                out.push_str(c);
            }
            None => out.push_str(OWN_SECTION),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn paths(text: &str) -> Vec<String> {
        import_tokens(text).into_iter().map(|t| t.path).collect()
    }

    // R-IMP-1, one rule per case.
    #[rstest]
    #[case::pointer("See consolidated agents instructions in @AGENTS.md", &["AGENTS.md"])]
    #[case::line_start("@docs/a.md", &["docs/a.md"])]
    #[case::after_tab("x\t@a.md", &["a.md"])]
    #[case::dot_slash("@./a.md @../b.md", &["./a.md", "../b.md"])]
    #[case::home("@~/notes.md", &["~/notes.md"])]
    #[case::trailing_period("read @a.md.", &["a.md"])]
    #[case::trailing_mix("(see @a.md);", &["a.md"])]
    #[case::inside_parens_not_after_space("(@a.md)", &[])]
    #[case::quotes("say \"@a.md\" or '@b.md'", &[])]
    #[case::quote_after_space("say @a.md\"", &["a.md"])]
    #[case::all_closers("@a.md)]}'\"!?:;,.", &["a.md"])]
    #[case::email("mail ops@example.com", &[])]
    #[case::mention_alone("ping @", &[])]
    #[case::only_punctuation("@.", &[])]
    #[case::absolute("@/etc/passwd", &[])]
    #[case::tilde_user("@~root/x", &[])]
    #[case::bare_tilde("@~", &[])]
    #[case::inline_code("use `@a.md` here", &[])]
    #[case::double_backtick_span("``x @a.md ` y`` @b.md", &["b.md"])]
    #[case::unclosed_backtick_is_text("a ` @a.md", &["a.md"])]
    #[case::token_stops_at_backtick("@a.md`x`", &["a.md"])]
    #[case::fenced("```\n@a.md\n```\n@b.md", &["b.md"])]
    #[case::tilde_fence("~~~md\n@a.md\n~~~\n@b.md", &["b.md"])]
    #[case::longer_fence_needs_longer_close("````\n```\n@a.md\n````\n@b.md", &["b.md"])]
    #[case::other_char_does_not_close("```\n~~~\n@a.md\n```\n@b.md", &["b.md"])]
    #[case::unclosed_fence("text\n```\n@a.md\n", &[])]
    #[case::indented_fence("  ```\n  @a.md\n  ```\n@b.md", &["b.md"])]
    #[case::inline_triple_backticks_not_a_fence("```x``` @a.md\n@b.md", &["a.md", "b.md"])]
    #[case::close_with_info_is_not_a_close("```\n``` x\n@a.md\n```\n@b.md", &["b.md"])]
    #[case::crlf("@a.md\r\n@b.md\r\n", &["a.md", "b.md"])]
    #[case::multibyte_before("é @a.md ü", &["a.md"])]
    #[case::unicode_space("x\u{00a0}@a.md", &["a.md"])]
    #[case::repeated("@a.md @a.md", &["a.md", "a.md"])]
    fn tokens(#[case] text: &str, #[case] want: &[&str]) {
        assert_eq!(paths(text), want);
    }

    #[test]
    fn offsets_point_at_the_at_sign() {
        let text = "é\n  see @a.md, @b.md";
        for t in import_tokens(text) {
            assert!(text[t.offset..].starts_with(&format!("@{}", t.path)));
        }
        assert_eq!(import_tokens(text).len(), 2);
    }

    #[rstest]
    fn a_block_reports_the_bytes_it_adds() {
        for b in [
            ImportBlock {
                display: "docs/a.md",
                content: Some("héllo"),
            },
            ImportBlock {
                display: "x",
                content: None,
            },
        ] {
            assert_eq!(assemble_imports("own", &[b]).len(), 3 + b.len());
            assert!(!b.is_empty());
        }
    }

    #[test]
    fn no_blocks_is_the_own_text_unchanged() {
        assert_eq!(assemble_imports("@a.md stays", &[]), "@a.md stays");
    }

    proptest! {
        #[test]
        fn never_panics_and_offsets_round_trip(text in "(\\PC|[@`~ \n\t.])*") {
            for t in import_tokens(&text) {
                let at = text.get(t.offset..).unwrap_or("");
                prop_assert!(at.starts_with('@'));
                prop_assert!(at[1..].starts_with(&t.path));
                prop_assert!(!t.path.is_empty());
                prop_assert!(!t.path.starts_with('/'));
                prop_assert!(!t.path.contains(char::is_whitespace));
            }
        }

        #[test]
        fn never_matches_inside_code(
            before in "[a-z @.\n]{0,20}",
            code in "[a-z @./\n]{0,30}",
            fence_char in prop::sample::select(vec!["```", "~~~", "````"]),
            span in "[a-z @./]{0,15}",
        ) {
            // Code holds tokens only inside the fence or the span; the
            // fence opens on its own line and is closed by the same run.
            let code = code.replace(['`', '~'], "");
            let text = format!("{before}\n{fence_char}\n{code}\n{fence_char}\nx `{span}` y\n");
            let inside: Vec<ImportToken> = import_tokens(&text)
                .into_iter()
                .filter(|t| t.offset > before.len())
                .collect();
            prop_assert!(inside.is_empty(), "{:?} in {:?}", inside, text);
        }

        #[test]
        fn a_written_token_is_found_again(
            path in "(\\./|\\.\\./|~/)?[A-Za-z0-9_-]{1,8}(/[A-Za-z0-9_.-]{0,8}[A-Za-z0-9_-])?",
            punct in "[.,;:!?)\\]}'\"]{0,3}",
            lead in "[a-z ]{0,10}",
        ) {
            let text = format!("{lead} @{path}{punct}\nmore");
            prop_assert_eq!(paths(&text), vec![path]);
        }
    }
}
