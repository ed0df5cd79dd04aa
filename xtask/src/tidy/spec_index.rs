//! `docs/spec/README.md` is true of the spec pages and the code (issue 46
//! item 5): its page table lists every page with exactly the ids the page
//! defines, its agent table names exactly the agents `hook --agent`
//! accepts, and its table of differences from SPEC lists exactly the
//! entries a page marks in bold as a deviation, a gap, not met, not
//! implemented or beyond SPEC, and the ids nothing implements yet
//! (`spec_ids::NOT_YET_IMPLEMENTED`).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, anyhow, ensure};

use super::spec_ids::{self, SPEC_DIR};
use super::tree::{Report, Tree};

pub(crate) const README: &str = "docs/spec/README.md";
/// Where the hook adapter names its agents (`Agent::as_str`).
const AGENT_NAMES: &str = "crates/dsh-instructions-hooks/src/names.rs";

const PAGES_HEADING: &str = "## Pages";
const AGENTS_HEADING: &str = "## Agents";
const DIFFERENCES_HEADING: &str = "## Where this project differs from SPEC";

/// The bold openings that mark an entry as differing from SPEC (matched
/// on the lower-cased text after `**`).
const MARKERS: &[&str] = &[
    "deviation",
    "gap",
    "not met",
    "not implemented",
    "beyond spec",
];

/// The cells of the table rows under `heading`, up to the next `## `.
fn table(doc: &str, heading: &str) -> Result<Vec<Vec<String>>, String> {
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(heading));
    if lines.next().is_none() {
        return Err(format!("no `{heading}` section"));
    }
    let rows: Vec<Vec<String>> = lines
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.trim_start().starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').collect();
            cells.iter().map(|c| c.trim().to_owned()).collect()
        })
        // The header and its separator.
        .skip(2)
        .collect();
    if rows.is_empty() {
        return Err(format!("the `{heading}` section has no table rows"));
    }
    Ok(rows)
}

/// `R-CFG-1 … R-CFG-12, R-BENCH-1` → every id it names; `—` names none.
fn expand_ids(cell: &str) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    for part in cell.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.starts_with('—') {
            continue;
        }
        let (first, last) = part.split_once('…').unwrap_or((part, part));
        let parse = |id: &str| -> Result<(String, u32), String> {
            let id = id.trim();
            let (area, n) = id
                .strip_prefix("R-")
                .and_then(|r| r.rsplit_once('-'))
                .ok_or_else(|| format!("`{id}` is no requirement id"))?;
            let n = n
                .parse()
                .map_err(|_| format!("`{id}` is no requirement id"))?;
            Ok((area.to_owned(), n))
        };
        let (area, a) = parse(first)?;
        let (area_b, b) = parse(last)?;
        if area != area_b || b < a {
            return Err(format!("`{part}` is no range of one area"));
        }
        out.extend((a..=b).map(|k| format!("R-{area}-{k}")));
    }
    Ok(out)
}

/// The ids each page defines: page file name → ids.
fn page_ids(tree: &Tree) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let mut out = BTreeMap::new();
    for (file, text) in tree.texts() {
        let Some(name) = file
            .strip_prefix(SPEC_DIR)
            .and_then(|r| r.strip_prefix('/'))
        else {
            continue;
        };
        if name.contains('/') || !name.ends_with(".md") || name == "README.md" {
            continue;
        }
        let (defs, _) = spec_ids::definitions(text);
        out.insert(
            name.to_owned(),
            defs.into_iter().map(|(_, id)| id).collect(),
        );
    }
    ensure!(out.len() >= 10, "only {} spec pages found", out.len());
    Ok(out)
}

/// Problems of the page table against the pages.
fn check_pages(rows: &[Vec<String>], pages: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    let mut listed = BTreeSet::new();
    for row in rows {
        let [page, _, ids] = &row[..] else {
            out.push(format!(
                "{README}: the page row `{}` has not 3 cells",
                row.join(" | ")
            ));
            continue;
        };
        let Some(name) = page.split_once("](").and_then(|(_, t)| t.strip_suffix(')')) else {
            out.push(format!("{README}: `{page}` is no link to a page"));
            continue;
        };
        listed.insert(name.to_owned());
        let Some(defined) = pages.get(name) else {
            out.push(format!(
                "{README} lists {name}, which is no page of {SPEC_DIR}/"
            ));
            continue;
        };
        match expand_ids(ids) {
            Err(e) => out.push(format!("{README}, row {name}: {e}")),
            Ok(stated) if stated != *defined => {
                let missing: Vec<&String> = defined.difference(&stated).collect();
                let extra: Vec<&String> = stated.difference(defined).collect();
                out.push(format!(
                    "{README} says {name} defines `{ids}`, but it does not define {extra:?} and also defines {missing:?}"
                ));
            }
            Ok(_) => {}
        }
    }
    for name in pages.keys().filter(|n| !listed.contains(*n)) {
        out.push(format!(
            "{SPEC_DIR}/{name} has no row under `{PAGES_HEADING}` in {README}"
        ));
    }
    out
}

pub(crate) fn the_spec_index_lists_every_page_with_its_ids(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let rows = table(&tree.read(README)?, PAGES_HEADING).map_err(|e| anyhow!("{README}: {e}"))?;
    report.fail_all(check_pages(&rows, &page_ids(tree)?));
    Ok(())
}

/// The names `Agent::as_str` gives (`Agent::Claude => "claude"`).
fn agent_names(names_rs: &str) -> BTreeSet<String> {
    names_rs
        .match_indices("Agent::")
        .filter_map(|(i, _)| {
            let rest = &names_rs[i..];
            let (_, after) = rest.split_once("=> \"")?;
            let arm = &rest[..rest.find("=>")?];
            // Only `Agent::X => "name"` arms: nothing else between.
            if arm.trim().contains(char::is_whitespace) {
                return None;
            }
            Some(after[..after.find('"')?].to_owned())
        })
        .collect()
}

/// Problems of the agent table (`| product | `--agent` name |`) against
/// the names the code accepts.
fn check_agents(rows: &[Vec<String>], names: &BTreeSet<String>) -> Vec<String> {
    let listed: BTreeSet<String> = rows
        .iter()
        .filter_map(|r| r.get(1))
        .map(|c| c.trim_matches('`').to_owned())
        .collect();
    let mut out = Vec::new();
    for name in names.difference(&listed) {
        out.push(format!(
            "`hook --agent {name}` is supported ({AGENT_NAMES}), but {README} does not list it under `{AGENTS_HEADING}`"
        ));
    }
    for name in listed.difference(names) {
        out.push(format!(
            "{README} lists the agent `{name}` under `{AGENTS_HEADING}`, but {AGENT_NAMES} names no such agent"
        ));
    }
    out
}

pub(crate) fn the_spec_index_names_every_supported_agent(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let names = agent_names(&tree.read(AGENT_NAMES)?);
    ensure!(names.len() >= 5, "only {names:?} found in {AGENT_NAMES}");
    let rows = table(&tree.read(README)?, AGENTS_HEADING).map_err(|e| anyhow!("{README}: {e}"))?;
    report.fail_all(check_agents(&rows, &names));
    Ok(())
}

/// The entries a page marks as differing from SPEC: `(id, page:line)`.
fn marked(file: &str, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut entry: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("### ") {
            entry = rest.split_whitespace().next().map(str::to_owned);
        }
        for bold in line.split("**").skip(1).step_by(2) {
            let bold = bold.to_lowercase();
            if MARKERS.iter().any(|m| bold.starts_with(m))
                && let Some(id) = &entry
            {
                out.push((id.clone(), format!("{file}:{}", n + 1)));
            }
        }
    }
    out
}

/// Problems of the differences table against the marked entries.
fn check_differences(rows: &[Vec<String>], marked: &[(String, String)]) -> Vec<String> {
    let listed: BTreeSet<String> = rows
        .iter()
        .filter_map(|r| r.first())
        .map(|c| c.trim_matches('`').to_owned())
        .collect();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (id, place) in marked {
        seen.insert(id.clone());
        if !listed.contains(id) {
            out.push(format!(
                "{place} marks {id} as differing from SPEC, but {README} does not list it under `{DIFFERENCES_HEADING}`"
            ));
        }
    }
    for id in listed.difference(&seen) {
        out.push(format!(
            "{README} lists {id} under `{DIFFERENCES_HEADING}`, but no entry of {SPEC_DIR}/ marks it (**Deviation**, **Gap**, **Not met**, **Not implemented** or **Beyond SPEC**)"
        ));
    }
    out
}

pub(crate) fn the_spec_index_lists_every_marked_difference(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let mut found = Vec::new();
    for (file, text) in tree.texts() {
        let page = file
            .strip_prefix(SPEC_DIR)
            .and_then(|r| r.strip_prefix('/'))
            .is_some_and(|n| !n.contains('/') && n.ends_with(".md") && n != "README.md");
        if page {
            found.extend(marked(file, text));
        }
    }
    for (id, place) in &found {
        report.note(format!("{place}: {id} differs from SPEC"));
    }
    // An id nothing implements yet differs from SPEC as much as a marked one.
    for (id, _) in spec_ids::NOT_YET_IMPLEMENTED {
        found.push((
            (*id).to_owned(),
            format!("{}'s NOT_YET_IMPLEMENTED", spec_ids::THIS_FILE),
        ));
    }
    let rows =
        table(&tree.read(README)?, DIFFERENCES_HEADING).map_err(|e| anyhow!("{README}: {e}"))?;
    report.fail_all(check_differences(&rows, &found));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_cells_expand_ranges_and_lists() {
        let ids = expand_ids("R-CFG-1 … R-CFG-3, R-BENCH-1").expect("valid");
        assert_eq!(
            ids.into_iter().collect::<Vec<_>>(),
            ["R-BENCH-1", "R-CFG-1", "R-CFG-2", "R-CFG-3"]
        );
        assert!(
            expand_ids("— (points elsewhere)")
                .expect("valid")
                .is_empty()
        );
        assert!(expand_ids("R-A-1 … R-B-2").is_err());
        assert!(expand_ids("SPEC").is_err());
    }

    #[test]
    fn the_page_table_must_match_the_pages() {
        let doc = "## Pages\n\n| page | SPEC | ids |\n|---|---|---|\n\
                   | [a.md](a.md) | §1 | R-A-1 … R-A-2 |\n| [b.md](b.md) | §2 | R-B-1 |\n\
                   | [gone.md](gone.md) | §3 | — |\n## Next\n";
        let rows = table(doc, PAGES_HEADING).expect("valid");
        let pages = BTreeMap::from([
            (
                "a.md".to_owned(),
                BTreeSet::from(["R-A-1".to_owned(), "R-A-2".to_owned()]),
            ),
            (
                "b.md".to_owned(),
                BTreeSet::from(["R-B-1".to_owned(), "R-B-2".to_owned()]),
            ),
            ("c.md".to_owned(), BTreeSet::new()),
        ]);
        let problems = check_pages(&rows, &pages);
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(
            problems[0].contains("says b.md defines `R-B-1`")
                && problems[0].contains("also defines [\"R-B-2\"]")
        );
        assert!(problems[1].contains("lists gone.md, which is no page"));
        assert!(problems[2].contains("docs/spec/c.md has no row"));
        assert!(table("# none", PAGES_HEADING).is_err());
    }

    #[test]
    fn the_agent_table_must_name_what_the_code_accepts() {
        let code = "match self {\n    Agent::Claude => \"claude\",\n    Agent::Qwen => \"qwen\",\n}\n\
                    \"claude\" => Ok(Agent::Claude),\n";
        let names = agent_names(code);
        assert_eq!(names.iter().collect::<Vec<_>>(), ["claude", "qwen"]);
        let rows = vec![
            vec!["Claude Code".to_owned(), "`claude`".to_owned()],
            vec!["Cursor".to_owned(), "`cursor`".to_owned()],
        ];
        let problems = check_agents(&rows, &names);
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].starts_with("`hook --agent qwen` is supported"));
        assert!(problems[1].contains("lists the agent `cursor`"));
    }

    #[test]
    fn a_marked_entry_must_be_listed_and_a_listed_one_marked() {
        let page = "### R-A-1 — One\n- **Deviation,** decision x\n### R-A-2 — Two\n\
                    **Order.** fine\n### R-A-3 — Three\n- **Not met at 1,000,** x\n";
        let found = marked("docs/spec/a.md", page);
        assert_eq!(
            found,
            [
                ("R-A-1".to_owned(), "docs/spec/a.md:2".to_owned()),
                ("R-A-3".to_owned(), "docs/spec/a.md:6".to_owned()),
            ]
        );
        let rows = vec![
            vec!["R-A-1".to_owned(), "x".to_owned()],
            vec!["R-A-2".to_owned(), "y".to_owned()],
        ];
        let problems = check_differences(&rows, &found);
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].starts_with("docs/spec/a.md:6 marks R-A-3"));
        assert!(problems[1].contains("lists R-A-2"));
    }
}
