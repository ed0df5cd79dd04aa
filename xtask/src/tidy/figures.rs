//! The figures `docs/architecture.md` states hold (issue 46 item 5).
//!
//! A figure is a number written in digits in the page's prose and tables,
//! outside code spans. Not figures: requirement ids (`R-RT-3`), decision
//! numbers (`0043`), issue, item, step, phase and section numbers, ordered
//! list markers, and the rows of the root-names table, whose counts
//! `root_names_per_crate_are_counted_and_justified` checks. Every other
//! figure must stand in one of the phrases of [`FIGURES`], with the value
//! the code has now; a figure no phrase covers fails until it is checked
//! here or taken out of the page.
//!
//! The page's file-size limit is checked here too: no file under
//! `crates/*/src/` has more than [`FILE_LINES_LIMIT`] lines, except the
//! files its "File sizes" table lists with a reason, and a listed file
//! that is back under the limit fails until its row goes.

use std::collections::BTreeSet;

use anyhow::{Context, Result, anyhow, ensure};

use super::arch::DOC;
use super::source::rust_files;
use super::surface::ROOT_NAMES_LIMIT;
use super::tree::{Report, Tree};

/// Lines a file under `crates/*/src/` may have (tests in it included).
pub(crate) const FILE_LINES_LIMIT: usize = 1000;

pub(crate) const SIZES_HEADING: &str = "## File sizes";

/// A phrase of the page holding a figure (`{}`), and where the code keeps
/// the figure.
struct Figure {
    phrase: &'static str,
    value: fn(&Tree) -> Result<u64>,
}

const FIGURES: &[Figure] = &[
    Figure {
        phrase: "at most {} names",
        value: |_| Ok(ROOT_NAMES_LIMIT as u64),
    },
    Figure {
        phrase: "more than {} root names",
        value: |_| Ok(ROOT_NAMES_LIMIT as u64),
    },
    Figure {
        phrase: "more than {} lines",
        value: |_| Ok(FILE_LINES_LIMIT as u64),
    },
    Figure {
        phrase: "at most {} candidate paths",
        value: |tree| {
            const_value(
                tree,
                "crates/dsh-instructions-runtime/src/shell.rs",
                "pub const MAX_SHELL_TOUCHES: usize = ",
            )
        },
    },
    Figure {
        phrase: "in the last {} seconds",
        value: |tree| {
            const_value(
                tree,
                "crates/dsh-instructions-discovery/src/dircache.rs",
                "const STAMP_MARGIN: Duration = Duration::from_secs(",
            )
        },
    },
];

/// The number right after `prefix` in the file at `rel`.
fn const_value(tree: &Tree, rel: &str, prefix: &str) -> Result<u64> {
    let text = tree.read(rel)?;
    let at = text
        .find(prefix)
        .with_context(|| format!("{rel} has no `{prefix}…`"))?;
    let digits: String = text[at + prefix.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    digits
        .parse()
        .with_context(|| format!("{rel}: no number after `{prefix}`"))
}

/// `1000` as the page writes it: `1,000`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One figure of the page: where it starts (byte offset into the page),
/// its line, its text and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    at: usize,
    line: usize,
    text: String,
    value: Option<u64>,
}

/// The largest char boundary of `s` at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Whitespace runs collapsed to one space.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` as spaces of the same byte length, newlines kept.
fn blanked(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\n' {
                "\n".to_owned()
            } else {
                " ".repeat(c.len_utf8())
            }
        })
        .collect()
}

/// The page with everything that is no figure blanked, every byte offset
/// and newline kept.
fn prose(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut in_code = false;
    let mut in_root_names = false;
    for line in doc.split_inclusive('\n') {
        if line.starts_with("## ") {
            in_root_names = line.starts_with(super::doc::ROOT_NAMES_HEADING);
        }
        let fence = line.trim_start().starts_with("```");
        let blank_line = in_code || fence || (in_root_names && line.trim_start().starts_with('|'));
        if fence {
            in_code = !in_code;
        }
        if blank_line {
            out.push_str(&blanked(line));
            continue;
        }
        // Ordered list markers: `1. **Plan**`.
        let indent = line.len() - line.trim_start().len();
        let marker = line[indent..]
            .find(". ")
            .filter(|&n| n > 0 && line[indent..indent + n].bytes().all(|b| b.is_ascii_digit()))
            .map_or(0, |n| indent + n + 1);
        let mut code_span = false;
        for (i, c) in line.char_indices() {
            if c == '`' {
                code_span = !code_span;
            }
            if c != '\n' && (code_span || c == '`' || i < marker) {
                out.push_str(&" ".repeat(c.len_utf8()));
            } else {
                out.push(c);
            }
        }
    }
    blank_ids(&out)
}

/// Requirement ids (`R-RT-3`, `R-IMP-1..5`, `R-DISC-1/3/7`) blanked.
fn blank_ids(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = text.as_bytes().to_vec();
    let mut i = 0;
    while let Some(off) = text[i..].find("R-") {
        let s = i + off;
        let mut e = s + 2;
        while e < b.len() && b[e].is_ascii_uppercase() {
            e += 1;
        }
        if e < b.len() && b[e] == b'-' {
            e += 1;
            while e < b.len() && (b[e].is_ascii_digit() || b[e] == b'/' || b[e] == b'.') {
                e += 1;
            }
            out[s..e].fill(b' ');
        }
        i = e.max(s + 2);
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// Words after which a number names something, not a quantity.
const NAMING_WORDS: &[&str] = &[
    "issue",
    "issues",
    "item",
    "items",
    "step",
    "steps",
    "phase",
    "§",
    "decision",
    "decisions",
];

/// The figures of the page's [`prose`], in order.
fn figures(text: &str) -> Vec<Found> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit()
            || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            i += 1;
            continue;
        }
        let mut e = i;
        while e < b.len()
            && (b[e].is_ascii_digit()
                || ((b[e] == b',' || b[e] == b'.') && b.get(e + 1).is_some_and(u8::is_ascii_digit)))
        {
            e += 1;
        }
        let token = &text[i..e];
        let before = squeeze(&text[floor(text, i.saturating_sub(20))..i]);
        let word = before
            .rsplit(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or("");
        // A decision number (`0043`) or a number that names something; the
        // closing number of a range like `items 5–7` or `issue 19 item 5`.
        let record = token.len() == 4 && token.starts_with('0');
        let named = NAMING_WORDS.contains(&word)
            || NAMING_WORDS.contains(&word.trim_end_matches(['–', '-']))
            || before.ends_with('–');
        if !record && !named {
            out.push(Found {
                at: i,
                line: text[..i].matches('\n').count() + 1,
                text: token.to_owned(),
                value: token.replace(',', "").parse().ok(),
            });
        }
        i = e;
    }
    out
}

/// Whether `found` stands in `phrase`: the text around it reads
/// `prefix {} suffix`.
fn stands_in(text: &str, found: &Found, phrase: &str) -> bool {
    let Some((prefix, suffix)) = phrase.split_once("{}") else {
        return false;
    };
    let before = squeeze(&text[floor(text, found.at.saturating_sub(prefix.len() + 40))..found.at]);
    let end = found.at + found.text.len();
    let after = squeeze(&text[end..floor(text, text.len().min(end + suffix.len() + 40))]);
    // `squeeze` drops the blank between the figure and its words.
    (prefix.trim().is_empty() || format!("{before} ").ends_with(prefix))
        && (suffix.trim().is_empty() || format!(" {after}").starts_with(suffix))
}

/// Problems of the page's figures against their values: a figure no
/// phrase covers, a phrase whose figure is not the code's, and a phrase
/// the page does not state at all.
fn check_figures(doc: &str, values: &[(&str, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stated = BTreeSet::new();
    let text = prose(doc);
    for found in figures(&text) {
        let covering: Vec<&(&str, u64)> = values
            .iter()
            .filter(|(phrase, _)| stands_in(&text, &found, phrase))
            .collect();
        if covering.is_empty() {
            out.push(format!(
                "{DOC}:{}: the figure {} is checked by nothing; check it in xtask/src/tidy/figures.rs or take it out",
                found.line, found.text
            ));
        }
        for (phrase, value) in covering {
            if found.value == Some(*value) {
                stated.insert(*phrase);
            } else {
                out.push(format!(
                    "{DOC}:{}: `{}` says {}, the code {}",
                    found.line,
                    phrase.replace("{}", &found.text),
                    found.text,
                    grouped(*value)
                ));
            }
        }
    }
    for (phrase, value) in values {
        if !stated.contains(phrase) {
            out.push(format!(
                "{DOC} no longer states `{}`; drop the figure from xtask/src/tidy/figures.rs or put it back",
                phrase.replace("{}", &grouped(*value))
            ));
        }
    }
    out
}

pub(crate) fn every_figure_of_the_architecture_page_holds(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let doc = tree.read(DOC)?;
    let mut values = Vec::new();
    for figure in FIGURES {
        values.push((figure.phrase, (figure.value)(tree)?));
    }
    for found in figures(&prose(&doc)) {
        report.note(format!("{DOC}:{}: {}", found.line, found.text));
    }
    report.fail_all(check_figures(&doc, &values));
    Ok(())
}

/// The files the page's "File sizes" table lets be over the limit, with
/// their reasons: `| `crate/src/file.rs` | why |`, paths relative to
/// `crates/`.
fn size_exemptions(doc: &str) -> Result<Vec<(String, String)>, String> {
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(SIZES_HEADING));
    if lines.next().is_none() {
        return Err(format!("no `{SIZES_HEADING}` section"));
    }
    let mut out = Vec::new();
    for line in lines.take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        let [_, file, why, _] = cells[..] else {
            continue;
        };
        let Some(file) = file.strip_prefix('`').and_then(|f| f.strip_suffix('`')) else {
            continue;
        };
        if why.len() < 20 {
            return Err(format!("row `{file}` gives no reason"));
        }
        out.push((file.to_owned(), why.to_owned()));
    }
    Ok(out)
}

/// Problems of files (`(path under crates/, lines)`) against the limit and
/// the exemptions.
fn check_sizes(files: &[(String, usize)], exempt: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (file, lines) in files {
        let listed = exempt.iter().any(|(f, _)| f == file);
        if *lines > FILE_LINES_LIMIT && !listed {
            out.push(format!(
                "crates/{file} has {} lines, more than {}; split it, or list it under `{SIZES_HEADING}` in {DOC} with a reason",
                grouped(*lines as u64),
                grouped(FILE_LINES_LIMIT as u64)
            ));
        }
    }
    for (file, _) in exempt {
        match files.iter().find(|(f, _)| f == file) {
            None => out.push(format!(
                "{DOC} lets crates/{file} be over the limit, but there is no such file; remove its row"
            )),
            Some((_, lines)) if *lines <= FILE_LINES_LIMIT => out.push(format!(
                "{DOC} lets crates/{file} be over the limit, but it has {lines} lines now; remove its row"
            )),
            Some(_) => {}
        }
    }
    out
}

pub(crate) fn no_source_file_is_over_the_line_limit(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let exempt = size_exemptions(&tree.read(DOC)?).map_err(|e| anyhow!("{DOC}: {e}"))?;
    let crates = tree.root().join("crates");
    let mut files = Vec::new();
    for p in tree.packages()? {
        if !p.dir.starts_with(&crates) {
            continue; // xtask: a tool, not a product crate
        }
        let mut paths = Vec::new();
        rust_files(&p.dir.join("src"), &mut paths);
        for path in paths {
            let lines = tree.read(&path)?.lines().count();
            let rel = path.strip_prefix(&crates).unwrap_or(&path);
            files.push((rel.display().to_string(), lines));
        }
    }
    ensure!(files.len() > 100, "only {} source files found", files.len());
    let largest = files.iter().max_by_key(|(_, n)| *n);
    if let Some((file, lines)) = largest {
        report.note(format!("largest: crates/{file}, {lines} lines"));
    }
    report.fail_all(check_sizes(&files, &exempt));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_numbers_in_prose_not_ids_records_or_code() {
        let doc = "# T\n\
                   One `f(64)` and R-RT-3 (b), R-IMP-1..5 and R-DISC-1/3/7; decision 0043,\n\
                   decisions 0067, 0073 (issue 19 item 5, items 5–7), SPEC §13, phase 4.\n\
                   1. **Plan** at most 64 candidate paths, 1,000 lines or 1.5x.\n\
                   ```\nlet x = 12;\n```\n\
                   ## Root names\n| `a` | 63 | its 17 names |\nAbove 25.\n## Next\n| `b` | 9 |\n";
        let found: Vec<(usize, String)> = figures(&prose(doc))
            .into_iter()
            .map(|f| (f.line, f.text))
            .collect();
        assert_eq!(
            found,
            [
                (4, "64".to_owned()),
                (4, "1,000".to_owned()),
                (4, "1.5".to_owned()),
                (10, "25".to_owned()),
                (12, "9".to_owned()),
            ]
        );
    }

    #[test]
    fn a_figure_is_checked_by_its_phrase_or_reported() {
        let values = [("at most {} names", 25), ("more than {} lines", 1000)];
        let good = "A root has at most 25\nnames; no file has more than 1,000 lines.\n";
        assert!(
            check_figures(good, &values).is_empty(),
            "{:?}",
            check_figures(good, &values)
        );
        let stale =
            "A root has at most 30 names and 7 friends; no file has more than 1,000 lines.\n";
        let problems = check_figures(stale, &values);
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert_eq!(
            problems[0],
            "docs/architecture.md:1: `at most 30 names` says 30, the code 25"
        );
        assert!(
            problems[1].starts_with("docs/architecture.md:1: the figure 7 is checked by nothing")
        );
        assert!(problems[2].contains("no longer states `at most 25 names`"));
    }

    #[test]
    fn grouped_writes_thousands_as_the_page_does() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn a_file_over_the_limit_needs_a_row_and_a_row_a_file_over_it() {
        let doc = "## File sizes\n| file | why |\n|---|---|\n| `a/src/big.rs` | being split into modules (issue 46) |\n| `a/src/small.rs` | once large, now split up for good |\n## Next\n";
        let exempt = size_exemptions(doc).expect("valid");
        assert_eq!(exempt.len(), 2);
        let files = [
            ("a/src/big.rs".to_owned(), 1185),
            ("a/src/small.rs".to_owned(), 400),
            ("b/src/huge.rs".to_owned(), 1001),
            ("b/src/edge.rs".to_owned(), 1000),
        ];
        let problems = check_sizes(&files, &exempt);
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].starts_with("crates/b/src/huge.rs has 1,001 lines, more than 1,000"));
        assert!(
            problems[1].contains("crates/a/src/small.rs be over the limit, but it has 400 lines")
        );
        let gone = check_sizes(&files[1..], &exempt[..1]);
        assert!(gone.iter().any(|p| p.contains("no such file")), "{gone:#?}");
        assert!(
            size_exemptions("## File sizes\n| `x.rs` | later |\n")
                .unwrap_err()
                .contains("no reason")
        );
        assert!(size_exemptions("# none\n").is_err());
    }
}
