//! The decision records of `docs/decisions/` and their index (issue 46
//! item 5). The rules, also stated in `docs/decisions/README.md`:
//!
//! * A record is `docs/decisions/NNNN-slug.md`, headed `# NNNN — Title`
//!   (or `# NNNN: title`), with a paragraph starting `Status:` before its
//!   first section. The status is the paragraph's first word — `accepted`,
//!   `proposed`, `superseded` (then `superseded by NNNN` follows) or
//!   `withdrawn` — plus every `amended by NNNN` and, for a record still in
//!   force, every `superseded by NNNN` of a part of it, which count as
//!   amendments. A record whose status says it `supersedes` or `amends`
//!   another must be named by that other's status.
//! * A citation is `decision NNNN` or `decisions NNNN, NNNN and NNNN`
//!   (any case; line breaks and comment markers may stand between the
//!   words), or a path `decisions/NNNN…`, in any UTF-8 file of the working
//!   tree but the index itself and the tidy files whose tests hold made-up
//!   numbers (`tree::FIXTURE_FILES`). `amended by`, `amends`,
//!   `superseded by`, `supersedes` and `superseding` introduce numbers too.
//! * A record in force (not superseded or withdrawn) is cited by some file
//!   outside `docs/decisions/`: the code, test, doc or spec page where the
//!   behaviour it decides lives. A cited number must be a record.
//! * The index's table is generated from the records (number, title,
//!   status, what cites it); `cargo xtask tidy --bless` writes it, and the
//!   check fails, naming the rows, when it is stale.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail, ensure};

use super::tree::{FIXTURE_FILES, Report, Tree};

pub(crate) const DIR: &str = "docs/decisions";
pub(crate) const INDEX: &str = "docs/decisions/README.md";

/// Where the generated table starts and ends in the index.
const BEGIN: &str =
    "<!-- begin generated index: `cargo xtask tidy --bless` writes what follows -->";
const END: &str = "<!-- end generated index -->";

/// One record, as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    number: String,
    file: String,
    title: String,
    status: Result<Status, String>,
}

/// A record's status, from its `Status:` paragraph.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Status {
    /// `accepted`, `proposed`, `superseded` or `withdrawn`.
    base: String,
    /// The record that replaced this one, when `superseded`.
    superseded_by: Option<String>,
    /// Records that changed a part of this one.
    amended_by: Vec<String>,
    /// Records this one says it supersedes or amends (in part or whole).
    changes: Vec<String>,
}

impl Status {
    fn in_force(&self) -> bool {
        self.superseded_by.is_none() && self.base != "withdrawn"
    }

    /// As the index shows it: `accepted; amended by 0072`.
    fn render(&self) -> String {
        let mut out = match &self.superseded_by {
            Some(n) => format!("superseded by {n}"),
            None => self.base.clone(),
        };
        if !self.amended_by.is_empty() {
            out.push_str("; amended by ");
            out.push_str(&self.amended_by.join(", "));
        }
        out
    }
}

fn is_number(s: &str) -> bool {
    s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())
}

/// The 4-digit numbers in `text`, in order (not part of a longer number).
fn numbers(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let glued = s > 0 && b[s - 1].is_ascii_alphanumeric();
        // `2026-12-06` is a date.
        let date = b.get(i) == Some(&b'-') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if i - s == 4 && !glued && !date && !b.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            out.push(text[s..i].to_owned());
        }
        i += usize::from(i == s);
    }
    out
}

/// The number right after `phrase` (optionally `decision ` in between), at
/// each place `phrase` stands in `text`.
fn numbers_after(text: &str, phrase: &str) -> Vec<String> {
    text.match_indices(phrase)
        .filter_map(|(i, _)| {
            let rest = text[i + phrase.len()..].trim_start();
            let rest = rest.strip_prefix("decision ").unwrap_or(rest);
            let n = rest.get(..4)?;
            is_number(n).then(|| n.to_owned())
        })
        .collect()
}

/// A status paragraph (`Status:` and what follows, up to a blank line).
fn parse_status(paragraph: &str) -> Result<Status, String> {
    let text = paragraph
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let base: String = text.chars().take_while(char::is_ascii_alphabetic).collect();
    if !["accepted", "proposed", "superseded", "withdrawn"].contains(&base.as_str()) {
        return Err(format!(
            "its status `{paragraph}` does not start with accepted, proposed, superseded or withdrawn"
        ));
    }
    let superseded = numbers_after(&text, "superseded by ");
    let mut status = Status {
        base,
        superseded_by: None,
        amended_by: numbers_after(&text, "amended by "),
        changes: Vec::new(),
    };
    if status.base == "superseded" {
        let Some(by) = superseded.first() else {
            return Err("it is superseded but its status names no `superseded by NNNN`".to_owned());
        };
        status.superseded_by = Some(by.clone());
    } else {
        status.amended_by.extend(superseded);
    }
    status.amended_by.sort();
    status.amended_by.dedup();
    for word in ["supersedes", "amends"] {
        for (i, _) in text.match_indices(word) {
            let clause = text[i..].split([';', '.']).next().unwrap_or("");
            status.changes.extend(numbers(clause));
        }
    }
    Ok(status)
}

/// A record from its file name and text.
fn parse_record(file: &str, text: &str) -> Result<Record, String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let number = name.get(..4).filter(|n| is_number(n)).ok_or("no number")?;
    let heading = text.lines().next().unwrap_or("");
    let title = heading
        .strip_prefix("# ")
        .and_then(|h| h.strip_prefix(number))
        .map(|t| t.trim_start_matches([' ', ':', '—', '-']).trim())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("its first line `{heading}` is not `# {number} — Title`"))?;
    let head: Vec<&str> = text.lines().take_while(|l| !l.starts_with("## ")).collect();
    let status = match head.iter().position(|l| l.starts_with("Status:")) {
        None => Err("it has no `Status:` line before its first section".to_owned()),
        Some(at) => {
            let paragraph: Vec<&str> = head[at..]
                .iter()
                .take_while(|l| !l.trim().is_empty())
                .copied()
                .collect();
            parse_status(paragraph.join(" ").trim_start_matches("Status:").trim())
        }
    };
    Ok(Record {
        number: number.to_owned(),
        file: file.to_owned(),
        title: title.to_owned(),
        status,
    })
}

/// Words a list of record numbers follows (any case), longest first.
const INTRODUCERS: &[&str] = &[
    "superseded by",
    "amended by",
    "superseding",
    "supersedes",
    "decisions",
    "decision",
    "amends",
];

/// The end of the introducer word standing at `i`, if one does.
fn introducer_at(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    INTRODUCERS.iter().find_map(|w| {
        let e = i + w.len();
        let word = text.get(i..e)?;
        (word.eq_ignore_ascii_case(w) && !b.get(e).is_some_and(u8::is_ascii_alphanumeric))
            .then_some(e)
    })
}

/// Blanks, comment markers, list separators and a Markdown link's `[`.
fn is_separator(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'/' | b'#' | b'*' | b'!' | b'[' | b','
    )
}

/// The record numbers `text` cites, as `(line, number)`.
fn citations(text: &str) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let line_of = |i: usize| text[..i].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (i, _) in text.match_indices("decisions/") {
        if let Some(n) = text.get(i + 10..i + 14).filter(|n| is_number(n)) {
            out.push((line_of(i), n.to_owned()));
        }
    }
    let mut i = 0;
    while i < b.len() {
        let Some(mut e) = introducer_at(text, i) else {
            i += 1;
            continue;
        };
        if b.get(e) == Some(&b'/') {
            i = e; // a path: counted above
            continue;
        }
        loop {
            while e < b.len() && is_separator(b[e]) {
                e += 1;
            }
            if let Some(n) = text.get(e..e + 4).filter(|n| is_number(n))
                && !b.get(e + 4).is_some_and(u8::is_ascii_digit)
            {
                out.push((line_of(e), n.to_owned()));
                e += 4;
                // A Markdown link's text closes: `[0043](…)`.
                if text[e..].starts_with("](")
                    && let Some(close) = text[e..].find(')')
                {
                    e += close + 1;
                }
                continue;
            }
            let rest = &text[e..];
            let joiner = ["and ", "or ", "decisions ", "decision "].iter().find(|w| {
                rest.get(..w.len())
                    .is_some_and(|r| r.eq_ignore_ascii_case(w))
            });
            match joiner {
                Some(w) => e += w.len(),
                None => break,
            }
        }
        i = e.max(i + 1);
    }
    out.sort();
    out.dedup();
    out
}

/// Everything the checks need: the records by number, and who cites whom.
struct Records {
    records: BTreeMap<String, Record>,
    duplicates: Vec<String>,
    /// Number → citing files (relative paths), each with its first line.
    cited_by: BTreeMap<String, BTreeMap<String, usize>>,
}

fn is_record_file(rel: &str) -> bool {
    rel.strip_prefix(DIR)
        .and_then(|r| r.strip_prefix('/'))
        .is_some_and(|name| {
            !name.contains('/')
                && name.ends_with(".md")
                && name.get(..4).is_some_and(is_number)
                && name.as_bytes().get(4) == Some(&b'-')
        })
}

fn read_records(texts: &[(String, String)]) -> Records {
    let mut records = BTreeMap::new();
    let mut duplicates = Vec::new();
    let mut cited_by: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (file, text) in texts {
        if is_record_file(file) {
            match parse_record(file, text) {
                Ok(r) => {
                    if let Some(old) = records.insert(r.number.clone(), r.clone()) {
                        duplicates.push(format!(
                            "{} and {} share the number {}",
                            old.file, r.file, r.number
                        ));
                    }
                }
                Err(e) => duplicates.push(format!("{file}: {e}")),
            }
        }
        if file == INDEX || FIXTURE_FILES.contains(&file.as_str()) {
            continue;
        }
        for (line, n) in citations(text) {
            let own = file.starts_with(&format!("{DIR}/{n}-"));
            if !own {
                cited_by
                    .entry(n)
                    .or_default()
                    .entry(file.clone())
                    .or_insert(line);
            }
        }
    }
    Records {
        records,
        duplicates,
        cited_by,
    }
}

impl Records {
    /// Problems of the records themselves and of their citations.
    fn problems(&self) -> Vec<String> {
        let mut out = self.duplicates.clone();
        for (n, r) in &self.records {
            let status = match &r.status {
                Ok(s) => s,
                Err(e) => {
                    out.push(format!("{}: {e}", r.file));
                    continue;
                }
            };
            let related = status
                .superseded_by
                .iter()
                .chain(&status.amended_by)
                .chain(&status.changes);
            for m in related {
                if !self.records.contains_key(m) {
                    out.push(format!(
                        "{}: its status names {m}, which is no record",
                        r.file
                    ));
                }
            }
            for m in &status.changes {
                let named = self
                    .records
                    .get(m)
                    .and_then(|o| o.status.as_ref().ok())
                    .is_some_and(|o| {
                        o.superseded_by.as_ref() == Some(n) || o.amended_by.contains(n)
                    });
                if self.records.contains_key(m) && !named {
                    out.push(format!(
                        "{}: its status says it supersedes or amends {m}, but {m}'s status does not say `amended by {n}` or `superseded by {n}`",
                        r.file
                    ));
                }
            }
            let outside = self
                .cited_by
                .get(n)
                .is_some_and(|files| files.keys().any(|f| !f.starts_with(&format!("{DIR}/"))));
            if status.in_force() && !outside {
                out.push(format!(
                    "{} is cited nowhere outside {DIR}/: cite it (`decision {n}`) where the behaviour it decides lives, or mark it superseded or withdrawn with the reason",
                    r.file
                ));
            }
        }
        for (n, files) in &self.cited_by {
            if !self.records.contains_key(n) {
                for (file, line) in files {
                    out.push(format!(
                        "{file}:{line} cites decision {n}, which is no record in {DIR}/"
                    ));
                }
            }
        }
        out
    }

    /// What cites record `n`, as the index shows it: files by path, other
    /// records by number.
    fn citers(&self, n: &str) -> String {
        let mut files = Vec::new();
        let mut records = Vec::new();
        for file in self.cited_by.get(n).into_iter().flat_map(BTreeMap::keys) {
            if is_record_file(file) {
                records.push(file[DIR.len() + 1..DIR.len() + 5].to_owned());
            } else {
                files.push(format!("`{file}`"));
            }
        }
        files.extend(records);
        if files.is_empty() {
            "—".to_owned()
        } else {
            files.join(", ")
        }
    }

    /// The index table's rows, one per record.
    fn rows(&self) -> Vec<String> {
        self.records
            .iter()
            .map(|(n, r)| {
                let status = r
                    .status
                    .as_ref()
                    .map_or_else(|_| "(no status)".to_owned(), Status::render);
                format!(
                    "| [{n}]({}) | {} | {status} | {} |",
                    &r.file[DIR.len() + 1..],
                    r.title.replace('|', "\\|"),
                    self.citers(n)
                )
            })
            .collect()
    }

    /// The generated part of the index, markers included.
    fn table(&self) -> String {
        let mut out =
            format!("{BEGIN}\n\n| record | title | status | cited by |\n|---|---|---|---|\n");
        for row in self.rows() {
            out.push_str(&row);
            out.push('\n');
        }
        out.push('\n');
        out.push_str(END);
        out
    }
}

/// The index's generated part: (text before, the part, text after).
fn split_index(index: &str) -> Result<(&str, &str, &str)> {
    let start = index
        .find(BEGIN)
        .with_context(|| format!("{INDEX} has no `{BEGIN}` line"))?;
    let end = index[start..]
        .find(END)
        .map(|e| start + e + END.len())
        .with_context(|| format!("{INDEX} has no `{END}` line"))?;
    Ok((&index[..start], &index[start..end], &index[end..]))
}

/// Row-by-row differences between the index's table and the generated one.
fn stale_rows(written: &str, wanted: &[String]) -> Vec<String> {
    let key = |row: &str| row.get(3..7).filter(|n| is_number(n)).map(str::to_owned);
    let have: BTreeMap<String, &str> = written.lines().filter_map(|l| Some((key(l)?, l))).collect();
    let want: BTreeMap<String, &str> = wanted
        .iter()
        .filter_map(|l| Some((key(l)?, l.as_str())))
        .collect();
    let mut out = Vec::new();
    for (n, row) in &want {
        match have.get(n) {
            None => out.push(format!("{INDEX} has no row for record {n}")),
            Some(h) if h != row => {
                let cells = |r: &str| r.split(" | ").map(str::to_owned).collect::<Vec<_>>();
                let (h, w) = (cells(h), cells(row));
                let cell = |c: &[String], i: usize| {
                    c.get(i)
                        .map_or("", |s| s.trim_matches(['|', ' ']))
                        .to_owned()
                };
                for (i, name) in ["record", "title", "status"].iter().enumerate() {
                    if cell(&h, i) != cell(&w, i) {
                        out.push(format!(
                            "{INDEX}: record {n}'s {name} is `{}`, the record says `{}`",
                            cell(&h, i),
                            cell(&w, i)
                        ));
                    }
                }
                let citers = |c: String| -> BTreeSet<String> {
                    c.split(", ")
                        .map(|s| s.trim_matches('`').to_owned())
                        .collect()
                };
                let (had, has) = (citers(cell(&h, 3)), citers(cell(&w, 3)));
                for new in has.difference(&had) {
                    out.push(format!("{INDEX}: record {n} is cited by {new} too"));
                }
                for gone in had.difference(&has) {
                    out.push(format!("{INDEX}: record {n} is no longer cited by {gone}"));
                }
            }
            Some(_) => {}
        }
    }
    for n in have.keys().filter(|n| !want.contains_key(*n)) {
        out.push(format!("{INDEX} has a row for {n}, which is no record"));
    }
    out
}

pub(crate) fn every_decision_record_has_a_status_and_a_citation(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let records = read_records(tree.texts());
    ensure!(
        records.records.len() >= 50,
        "only {} records found under {DIR}/",
        records.records.len()
    );
    report.note(format!(
        "{} records, {} of them in force",
        records.records.len(),
        records
            .records
            .values()
            .filter(|r| r.status.as_ref().is_ok_and(Status::in_force))
            .count()
    ));
    report.fail_all(records.problems());
    Ok(())
}

pub(crate) fn the_decision_index_is_current(tree: &Tree, report: &mut Report) -> Result<()> {
    let records = read_records(tree.texts());
    let index = tree.read(INDEX)?;
    let (_, written, _) = split_index(&index)?;
    if written != records.table() {
        let mut problems = stale_rows(written, &records.rows());
        if problems.is_empty() {
            problems.push(format!(
                "{INDEX}: the table's layout differs from the generated one"
            ));
        }
        problems.push("run `cargo xtask tidy --bless` to write the index".to_owned());
        report.fail_all(problems);
    }
    Ok(())
}

/// Writes the index's generated part; returns the index's path.
pub(crate) fn bless(tree: &Tree) -> Result<String> {
    let records = read_records(tree.texts());
    let index = tree.read(INDEX)?;
    let (before, _, after) = split_index(&index)?;
    let text = format!("{before}{}{after}", records.table());
    if records.records.is_empty() {
        bail!("no records under {DIR}/");
    }
    std::fs::write(tree.root().join(INDEX), text)
        .with_context(|| format!("cannot write {INDEX}"))?;
    Ok(INDEX.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn citations_take_words_lists_links_and_paths() {
        let text = "see decision 9001, Decisions 9002,\n/// 9003 and 9004;\n\
                    decisions [9005](../decisions/9005-x.md), [9006](../decisions/9006-y.md)\n\
                    docs/decisions/9007-z.md; decision\n   9008. indecision 9009, decision 12345, decisions/9010";
        let found = citations(text);
        let found: Vec<(usize, &str)> = found.iter().map(|(l, n)| (*l, n.as_str())).collect();
        let numbers: BTreeSet<&str> = found.iter().map(|(_, n)| *n).collect();
        assert_eq!(
            numbers.into_iter().collect::<Vec<_>>(),
            [
                "9001", "9002", "9003", "9004", "9005", "9006", "9007", "9008", "9010"
            ]
        );
        assert!(
            found.contains(&(2, "9003")) && found.contains(&(5, "9008")),
            "{found:?}"
        );
        assert!(citations("the 9001 records, decision-making 9002").is_empty());
        let relations = citations(
            "Status: accepted; amended by 9072. Supersedes decision 9017 (superseding 9016), amends 9048's paragraph",
        );
        let relations: Vec<&str> = relations.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(relations, ["9016", "9017", "9048", "9072"]);
    }

    #[test]
    fn statuses_read_their_first_word_and_relations() {
        let s = parse_status("accepted (2026-12-04); its resume paragraph amended by 9072, its hook paragraph superseded by decision 9052").expect("valid");
        assert_eq!(s.render(), "accepted; amended by 9052, 9072");
        assert!(s.in_force());
        let s = parse_status("superseded by decision 9044 (issue 30 item 2): the hook reads them.")
            .expect("valid");
        assert_eq!(s.render(), "superseded by 9044");
        assert!(!s.in_force());
        let s = parse_status("accepted (2026-12-06); amends 9067. Supersedes the \"Order\" paragraph of decision 9018; the rest stays.").expect("valid");
        assert_eq!(s.changes, ["9018", "9067"]);
        let dated =
            parse_status("accepted; supersedes decision 9017 (2026-12-01).").expect("valid");
        assert_eq!(dated.changes, ["9017"]);
        assert!(parse_status("Withdrawn: never built.").is_ok_and(|s| !s.in_force()));
        assert!(
            parse_status("resolved by SPEC")
                .unwrap_err()
                .contains("does not start with")
        );
        assert!(
            parse_status("superseded, see below")
                .unwrap_err()
                .contains("names no")
        );
    }

    #[test]
    fn records_need_a_heading_and_a_status_line() {
        let r = parse_record(
            "docs/decisions/9001-a.md",
            "# 9001 — A title\n\nStatus: accepted\n(2026-12-01)\n\n## Context\n",
        )
        .expect("valid");
        assert_eq!(
            (r.title.as_str(), r.status.expect("status").render()),
            ("A title", "accepted".to_owned())
        );
        let r = parse_record(
            "docs/decisions/9002-b.md",
            "# 9002: lower case\n\n## Context\nStatus: accepted\n",
        )
        .expect("valid");
        assert!(r.status.unwrap_err().contains("no `Status:` line"));
        assert!(
            parse_record("docs/decisions/9003-c.md", "# 9004 — wrong number\n")
                .unwrap_err()
                .contains("is not `# 9003")
        );
    }

    const A: &str = "# 9001 — Kept\n\nStatus: accepted; amended by 9003\n";
    const B: &str = "# 9002 — Old\n\nStatus: superseded by decision 9003\n";
    const C: &str = "# 9003 — New\n\nStatus: accepted. Supersedes decision 9002; amends 9001.\n";
    const D: &str = "# 9004 — Forgotten\n\nStatus: accepted. Amends 9001.\n";

    #[test]
    fn every_rule_of_the_records_is_reported() {
        let good = read_records(&texts(&[
            ("docs/decisions/9001-kept.md", A),
            ("docs/decisions/9002-old.md", B),
            ("docs/decisions/9003-new.md", C),
            ("src/lib.rs", "// decisions 9001 and 9003"),
        ]));
        assert!(good.problems().is_empty(), "{:#?}", good.problems());
        let bad = read_records(&texts(&[
            ("docs/decisions/9001-kept.md", A),
            ("docs/decisions/9001-twin.md", A),
            ("docs/decisions/9003-new.md", C),
            ("docs/decisions/9004-forgotten.md", D),
            ("docs/decisions/9005-none.md", "# 9005 — No status\n"),
            ("docs/decisions/README.md", "decision 9004"),
            ("docs/spec/a.md", "decision 9001, decision 9099"),
        ]));
        let problems = bad.problems();
        let expect = [
            "docs/decisions/9001-twin.md share the number 9001",
            "docs/decisions/9003-new.md: its status names 9002, which is no record",
            "docs/decisions/9003-new.md is cited nowhere outside docs/decisions/",
            "docs/decisions/9004-forgotten.md: its status says it supersedes or amends 9001, but 9001's status does not say `amended by 9004`",
            "docs/decisions/9004-forgotten.md is cited nowhere",
            "docs/decisions/9005-none.md: it has no `Status:` line",
            "docs/decisions/9003-new.md:3 cites decision 9002, which is no record",
            "docs/spec/a.md:1 cites decision 9099, which is no record",
        ];
        for e in expect {
            assert!(
                problems.iter().any(|p| p.contains(e)),
                "missing {e:?} in {problems:#?}"
            );
        }
        assert_eq!(problems.len(), expect.len(), "{problems:#?}");
    }

    #[test]
    fn a_stale_index_names_the_rows_and_columns() {
        let records = read_records(&texts(&[
            ("docs/decisions/9001-kept.md", A),
            ("docs/decisions/9003-new.md", C),
            ("src/lib.rs", "// decision 9001\n"),
        ]));
        let table = records.table();
        assert!(
            table.contains(
                "| [9001](9001-kept.md) | Kept | accepted; amended by 9003 | `src/lib.rs`, 9003 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| [9003](9003-new.md) | New | accepted | 9001 |"),
            "{table}"
        );
        assert!(stale_rows(&table, &records.rows()).is_empty());
        let written = table
            .replace(
                "accepted; amended by 9003 | `src/lib.rs`, 9003",
                "accepted | `src/old.rs`, 9003",
            )
            .replace(
                "| [9003](9003-new.md) | New | accepted | 9001 |\n",
                "| [9099](9099-gone.md) | Gone | accepted | — |\n",
            );
        let problems = stale_rows(&written, &records.rows());
        assert_eq!(
            problems,
            [
                "docs/decisions/README.md: record 9001's status is `accepted`, the record says `accepted; amended by 9003`",
                "docs/decisions/README.md: record 9001 is cited by src/lib.rs too",
                "docs/decisions/README.md: record 9001 is no longer cited by src/old.rs",
                "docs/decisions/README.md has no row for record 9003",
                "docs/decisions/README.md has a row for 9099, which is no record",
            ]
        );
        let index = format!("# Decisions\n\nintro\n\n{table}\n");
        let (before, part, after) = split_index(&index).expect("markers");
        assert_eq!(
            (before, part, after),
            ("# Decisions\n\nintro\n\n", table.as_str(), "\n")
        );
        assert!(split_index("no markers").is_err());
    }
}
