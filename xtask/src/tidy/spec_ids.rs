//! Requirement ids: `docs/spec/` defines every id the repository cites, and
//! the repository cites every id `docs/spec/` defines (issue 31 item 1).
//!
//! The rules, also stated in `docs/spec/README.md`:
//!
//! * A definition is a heading line `### R-AREA-N — title` in a Markdown
//!   file directly under `docs/spec/`. Any other `### R-` line there is
//!   malformed; an id defined twice is an error.
//! * A citation is `R-AREA-N` anywhere in a UTF-8 file of the working tree
//!   (code, tests, scenarios, docs, manifests, CI scripts), not preceded by
//!   a letter, digit or `_`. What follows the number is ignored, so
//!   `R-RT-3 (b)` cites `R-RT-3`. `R-IMP-1..5` cites R-IMP-1 to R-IMP-5;
//!   `R-DISC-1/3/7` cites R-DISC-1, R-DISC-3 and R-DISC-7.
//! * Skipped: `.git`, `target`, `target-*`, `node_modules`, the Node
//!   package's build output (`tree::is_build_output`), and the tidy
//!   files whose tests hold made-up ids (`tree::FIXTURE_FILES`, this one
//!   among them: its allowlist and fixtures are no citations). Citations inside
//!   `docs/spec/` must be defined too, but do not make an id "cited".

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, ensure};

use super::tree::{FIXTURE_FILES, Report, Tree};

/// The directory that defines the ids, relative to the workspace root.
pub(crate) const SPEC_DIR: &str = "docs/spec";

/// This file, relative to the workspace root, where the list below is.
pub(crate) const THIS_FILE: &str = "xtask/src/tidy/spec_ids.rs";

/// Ids that SPEC specifies and `docs/spec/` defines, but that no code,
/// test or scenario cites because nothing implements them yet. An entry
/// must be defined and must not be cited elsewhere: once the feature
/// lands and cites its id, the entry has to go.
pub(crate) const NOT_YET_IMPLEMENTED: &[(&str, &str)] = &[];

/// Ids or messages by 1-based line number.
pub(crate) type Lines = Vec<(usize, String)>;

/// One place an id occurs: file (relative to the root) and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place {
    pub(crate) file: String,
    pub(crate) line: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The ids `text` cites, as `(line, id)` in order of appearance.
pub(crate) fn citations(text: &str) -> Lines {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let b = line.as_bytes();
        let mut i = 0;
        while let Some(off) = line[i..].find("R-") {
            let s = i + off;
            i = s + 2;
            if s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_') {
                continue;
            }
            let Some((area, first, mut e)) = id_at(b, s + 2) else {
                continue;
            };
            let mut numbers = vec![first];
            if b[e..].starts_with(b"..") {
                if let Some((last, end)) = number_at(b, e + 2) {
                    if last > first {
                        numbers.extend(first + 1..=last);
                    }
                    e = end;
                }
            } else {
                while b.get(e) == Some(&b'/') {
                    let Some((k, end)) = number_at(b, e + 1) else {
                        break;
                    };
                    numbers.push(k);
                    e = end;
                }
            }
            out.extend(
                numbers
                    .into_iter()
                    .map(|k| (n + 1, format!("R-{area}-{k}"))),
            );
            i = e;
        }
    }
    out
}

/// `AREA-N` at byte `s`: the area, the number and the end of the number.
fn id_at(b: &[u8], s: usize) -> Option<(&str, u32, usize)> {
    let mut e = s;
    while b.get(e).is_some_and(u8::is_ascii_uppercase) {
        e += 1;
    }
    if e == s || b.get(e) != Some(&b'-') {
        return None;
    }
    let area = std::str::from_utf8(&b[s..e]).ok()?;
    let (k, end) = number_at(b, e + 1)?;
    Some((area, k, end))
}

/// A decimal number at byte `s` (no leading zero) and where it ends.
fn number_at(b: &[u8], s: usize) -> Option<(u32, usize)> {
    let mut e = s;
    while b.get(e).is_some_and(u8::is_ascii_digit) {
        e += 1;
    }
    if e == s || (b[s] == b'0' && e > s + 1) {
        return None;
    }
    std::str::from_utf8(&b[s..e])
        .ok()?
        .parse()
        .ok()
        .map(|k| (k, e))
}

/// The ids one spec page defines, as `(line, id)`, or one problem per
/// malformed heading (`### R-…` not in the form `### R-AREA-N — title`).
pub(crate) fn definitions(text: &str) -> (Lines, Lines) {
    let mut defs = Vec::new();
    let mut bad = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("### R-") else {
            continue;
        };
        let b = rest.as_bytes();
        let parsed = id_at(b, 0).and_then(|(area, k, e)| {
            let title = rest[e..].strip_prefix(" — ")?;
            (!title.trim().is_empty()).then(|| format!("R-{area}-{k}"))
        });
        match parsed {
            Some(id) => defs.push((n + 1, id)),
            None => bad.push((
                n + 1,
                format!("`{line}` is not a requirement heading `### R-AREA-N — title`"),
            )),
        }
    }
    (defs, bad)
}

/// What the repository holds: definitions by id, citations outside
/// `docs/spec/` by id, and citations inside it.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    pub(crate) defined: BTreeMap<String, Vec<Place>>,
    pub(crate) cited: BTreeMap<String, Vec<Place>>,
    pub(crate) cited_in_spec: BTreeMap<String, Vec<Place>>,
    pub(crate) malformed: Vec<String>,
}

impl Ids {
    /// Reads `(path relative to the root, text)` pairs; non-UTF-8 files
    /// are left out by the caller.
    pub(crate) fn from_texts<'a>(texts: impl IntoIterator<Item = (&'a str, &'a str)>) -> Ids {
        let mut ids = Ids::default();
        for (file, text) in texts {
            if FIXTURE_FILES.contains(&file) {
                continue;
            }
            let in_spec = file
                .strip_prefix(SPEC_DIR)
                .is_some_and(|r| r.starts_with('/'));
            let place = |line| Place {
                file: file.to_owned(),
                line,
            };
            if in_spec && file.ends_with(".md") && !file[SPEC_DIR.len() + 1..].contains('/') {
                let (defs, bad) = definitions(text);
                for (line, id) in defs {
                    ids.defined.entry(id).or_default().push(place(line));
                }
                for (line, why) in bad {
                    ids.malformed.push(format!("{}: {why}", place(line)));
                }
            }
            let into = if in_spec {
                &mut ids.cited_in_spec
            } else {
                &mut ids.cited
            };
            for (line, id) in citations(text) {
                into.entry(id).or_default().push(place(line));
            }
        }
        for places in ids.cited.values_mut().chain(ids.cited_in_spec.values_mut()) {
            places.dedup();
        }
        ids
    }

    /// Problems of direction (a): malformed or duplicate definitions, and
    /// cited ids with no definition, each with where it is cited.
    pub(crate) fn undefined(&self) -> Vec<String> {
        let mut out = self.malformed.clone();
        for (id, places) in &self.defined {
            if places.len() > 1 {
                out.push(format!("{id} is defined more than once: {}", list(places)));
            }
        }
        let mut missing: BTreeMap<&String, Vec<&Place>> = BTreeMap::new();
        for (id, places) in self.cited.iter().chain(&self.cited_in_spec) {
            if !self.defined.contains_key(id) {
                missing.entry(id).or_default().extend(places);
            }
        }
        for (id, places) in missing {
            let places: Vec<Place> = places.into_iter().cloned().collect();
            out.push(format!(
                "{id} is cited but no `### {id} — …` heading in {SPEC_DIR}/ defines it: {}",
                list(&places)
            ));
        }
        out
    }

    /// Problems of direction (b): defined ids nothing outside `docs/spec/`
    /// cites, unless `allowed` lists them; and allowlist entries that are
    /// undefined, cited after all, or give no reason.
    pub(crate) fn uncited(&self, allowed: &[(&str, &str)]) -> Vec<String> {
        let mut out = Vec::new();
        let allow: BTreeMap<&str, &str> = allowed.iter().copied().collect();
        for (id, places) in &self.defined {
            if !self.cited.contains_key(id) && !allow.contains_key(id.as_str()) {
                out.push(format!(
                    "{id} is defined ({}) but nothing outside {SPEC_DIR}/ cites it; cite it where it is implemented or tested, or add it to NOT_YET_IMPLEMENTED in {THIS_FILE} with a reason",
                    list(places)
                ));
            }
        }
        for (id, why) in allowed {
            if !self.defined.contains_key(*id) {
                out.push(format!(
                    "{id} is listed in NOT_YET_IMPLEMENTED but {SPEC_DIR}/ does not define it"
                ));
            }
            if let Some(places) = self.cited.get(*id) {
                out.push(format!(
                    "{id} is listed in NOT_YET_IMPLEMENTED but is cited now ({}); remove it from the list",
                    list(places)
                ));
            }
            if why.trim().len() < 10 {
                out.push(format!(
                    "{id} is listed in NOT_YET_IMPLEMENTED without a reason"
                ));
            }
        }
        let unique: BTreeSet<&str> = allowed.iter().map(|(id, _)| *id).collect();
        if unique.len() != allowed.len() {
            out.push("NOT_YET_IMPLEMENTED lists an id twice".to_owned());
        }
        out
    }
}

/// At most five places, then how many more.
fn list(places: &[Place]) -> String {
    let shown: Vec<String> = places.iter().take(5).map(Place::to_string).collect();
    match places.len().saturating_sub(5) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The requirement ids of the working tree, noted, with a guard that the
/// walk saw the code and the spec (or the checks would go quiet).
fn requirement_ids(tree: &Tree, report: &mut Report) -> Result<Ids> {
    let ids = Ids::from_texts(tree.texts().iter().map(|(f, t)| (f.as_str(), t.as_str())));
    report.note(format!(
        "requirement ids: {} defined in {SPEC_DIR}/, {} cited outside it, {} listed as not yet implemented",
        ids.defined.len(),
        ids.cited.len(),
        NOT_YET_IMPLEMENTED.len()
    ));
    ensure!(
        ids.defined.len() >= 80,
        "only {} ids defined: {:?}",
        ids.defined.len(),
        ids.defined.keys()
    );
    ensure!(
        ids.cited.len() >= 80,
        "only {} ids cited: {:?}",
        ids.cited.len(),
        ids.cited.keys()
    );
    Ok(ids)
}

pub(crate) fn every_cited_requirement_id_is_defined_in_docs_spec(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let problems = requirement_ids(tree, report)?.undefined();
    report.fail_all(problems);
    Ok(())
}

pub(crate) fn every_requirement_id_in_docs_spec_is_cited_or_not_yet_implemented(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let problems = requirement_ids(tree, report)?.uncited(NOT_YET_IMPLEMENTED);
    report.fail_all(problems);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(pairs: &[(usize, String)]) -> Vec<&str> {
        pairs.iter().map(|(_, id)| id.as_str()).collect()
    }

    #[test]
    fn citations_take_sub_clauses_ranges_and_slash_lists() {
        let text = "R-RT-3 (b) and `R-DISC-7`,\n(R-IMP-1..3) R-DISC-1/3/7; R-LOG-5.\n";
        let found = citations(text);
        assert_eq!(
            ids(&found),
            [
                "R-RT-3", "R-DISC-7", "R-IMP-1", "R-IMP-2", "R-IMP-3", "R-DISC-1", "R-DISC-3",
                "R-DISC-7", "R-LOG-5"
            ]
        );
        assert_eq!(found[2].0, 2, "line numbers are 1-based");
    }

    #[test]
    fn what_is_no_citation() {
        // Glued to a word, no number, lower case, a leading zero, a family
        // alone; a range that does not grow cites its start only.
        let text = "ERR-X-1 xR-A-1 _R-A-1 R-CFG R-cfg-1 R-CFG- R-A-01 SPEC R-LOG: R-B-4..2 R-C-2/x";
        assert_eq!(ids(&citations(text)), ["R-B-4", "R-C-2"]);
    }

    #[test]
    fn headings_define_and_malformed_ones_are_reported() {
        let page = "# Area\n### R-AB-1 — First\ntext R-AB-2\n### R-AB-2 — Second one\n\
                    ### R-AB-3 - hyphen\n### R-AB-4 —\n### R-AB-5..6 — range\n## R-AB-7 — h2 is prose\n";
        let (defs, bad) = definitions(page);
        assert_eq!(ids(&defs), ["R-AB-1", "R-AB-2"]);
        assert_eq!(
            bad.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [5, 6, 7],
            "{bad:#?}"
        );
    }

    #[test]
    fn both_directions_name_ids_and_places() {
        let texts = [
            (
                "docs/spec/a.md",
                "### R-AB-1 — One\n### R-AB-2 — Two\nsee R-AB-9\n",
            ),
            ("docs/spec/b.md", "### R-AB-1 — Again\n### R-AB-3 — Three\n"),
            (
                "docs/spec/sub/c.md",
                "### R-AB-4 — not a page of the index\n",
            ),
            ("src/lib.rs", "// R-AB-1, R-AB-5\n\n/// R-AB-5 (b)\n"),
            (THIS_FILE, "R-AB-2 R-AB-6\n"),
        ];
        let ids = Ids::from_texts(texts);
        let undefined = ids.undefined();
        assert_eq!(undefined.len(), 4, "{undefined:#?}");
        assert_eq!(
            undefined[0],
            "R-AB-1 is defined more than once: docs/spec/a.md:1, docs/spec/b.md:1"
        );
        assert!(
            undefined[1].starts_with("R-AB-4 is cited"),
            "{undefined:#?}"
        );
        assert!(
            undefined[2].starts_with("R-AB-5 is cited")
                && undefined[2].ends_with("src/lib.rs:1, src/lib.rs:3"),
            "{undefined:#?}"
        );
        assert!(undefined[3].ends_with("docs/spec/a.md:3"), "{undefined:#?}");
        let uncited = ids.uncited(&[("R-AB-3", "not built yet, on purpose")]);
        assert_eq!(uncited.len(), 1, "{uncited:#?}");
        assert!(uncited[0].starts_with("R-AB-2 is defined (docs/spec/a.md:2) but nothing"));
        let stale = ids.uncited(&[
            ("R-AB-2", "not built yet, on purpose"),
            ("R-AB-1", "cited after all, so stale"),
            ("R-AB-3", ""),
            ("R-AB-8", "not defined anywhere at all"),
        ]);
        assert_eq!(stale.len(), 3, "{stale:#?}");
        assert!(stale[0].contains("R-AB-1 is listed") && stale[0].contains("src/lib.rs:1"));
        assert!(stale[1].contains("R-AB-3 is listed in NOT_YET_IMPLEMENTED without a reason"));
        assert!(stale[2].contains("R-AB-8") && stale[2].contains("does not define it"));
    }
}
