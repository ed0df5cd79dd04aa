//! The sections of docs/architecture.md the tidy checks read: the crate
//! diagram, the dependency, root-name and filesystem tables, and the
//! invariant lines with the tests they name. Each parser reads its section
//! only (up to the next `## ` heading) and reports a malformed row instead
//! of skipping it.

use std::collections::{BTreeMap, BTreeSet};

/// What one row of the dependency table allows.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) allowed: BTreeSet<String>,
    pub(crate) pure: bool,
}

/// The lines of `doc`'s section under `heading`, up to the next `## `.
fn section<'d>(doc: &'d str, heading: &str) -> Result<impl Iterator<Item = &'d str>, String> {
    let mut lines = doc.lines().skip_while(move |l| !l.starts_with(heading));
    if lines.next().is_none() {
        return Err(format!("no `{heading}` section"));
    }
    Ok(lines.take_while(|l| !l.starts_with("## ")))
}

/// The rows of the section's crate table `| `name` | a | b |`: the name
/// without its backticks, and the two cells after it. The header and
/// separator rows (no name in backticks) are none of them.
fn crate_rows<'d>(
    doc: &'d str,
    heading: &str,
) -> Result<impl Iterator<Item = (&'d str, [&'d str; 2])>, String> {
    Ok(section(doc, heading)?.filter_map(|line| {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        // `| a | b | c |` splits into ["", a, b, c, ""].
        let [_, name, a, b, _] = cells[..] else {
            return None;
        };
        let name = name.strip_prefix('`')?.strip_suffix('`')?;
        Some((name, [a, b]))
    }))
}

pub(crate) const RULES_HEADING: &str = "## Dependency rules";

/// The dependency table under [`RULES_HEADING`]: `| crate | may depend on |
/// pure |`, crate names in backticks, `—` for none.
pub(crate) fn parse_rules(doc: &str) -> Result<BTreeMap<String, Rule>, String> {
    let mut rules = BTreeMap::new();
    for (name, [deps, pure]) in crate_rows(doc, RULES_HEADING)? {
        let allowed = deps
            .split(',')
            .map(|d| d.trim().trim_matches('`'))
            .filter(|d| !d.is_empty() && *d != "—")
            .map(str::to_owned)
            .collect();
        let pure = match pure {
            "yes" => true,
            "no" => false,
            other => {
                return Err(format!(
                    "row `{name}`: pure must be yes or no, not `{other}`"
                ));
            }
        };
        if rules
            .insert(name.to_owned(), Rule { allowed, pure })
            .is_some()
        {
            return Err(format!("row `{name}` appears twice"));
        }
    }
    if rules.is_empty() {
        return Err(format!("the `{RULES_HEADING}` section has no table rows"));
    }
    Ok(rules)
}

pub(crate) const ROOT_NAMES_HEADING: &str = "## Root names";

/// The doc's root-names table: crate → (count, why).
pub(crate) fn parse_root_names(doc: &str) -> Result<BTreeMap<String, (usize, String)>, String> {
    let mut out = BTreeMap::new();
    for (name, [count, why]) in crate_rows(doc, ROOT_NAMES_HEADING)? {
        let count = count
            .parse()
            .map_err(|_| format!("row `{name}`: `{count}` is not a count"))?;
        out.insert(name.to_owned(), (count, why.to_owned()));
    }
    Ok(out)
}

/// The edges of the first ```` ```mermaid ```` block of `doc`, by crate
/// name: `a[crate-a] --> b[crate-b]` or, once a node is labelled, `a --> b`.
pub(crate) fn parse_diagram(doc: &str) -> Result<BTreeSet<(String, String)>, String> {
    let mut lines = doc.lines().skip_while(|l| l.trim() != "```mermaid");
    if lines.next().is_none() {
        return Err("no ```mermaid diagram".to_owned());
    }
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    let mut raw = Vec::new();
    for line in lines.take_while(|l| l.trim() != "```") {
        let line = line.trim();
        if line.is_empty() || line.starts_with("graph ") || line.starts_with("%%") {
            continue;
        }
        let Some((from, to)) = line.split_once("-->") else {
            return Err(format!("diagram line `{line}` is no `a --> b` edge"));
        };
        let mut node = |text: &str| -> Result<String, String> {
            let text = text.trim();
            match text.split_once('[') {
                Some((id, label)) => {
                    let label = label
                        .strip_suffix(']')
                        .ok_or_else(|| format!("unclosed label in `{line}`"))?;
                    labels.insert(id.trim().to_owned(), label.trim().to_owned());
                    Ok(id.trim().to_owned())
                }
                None => Ok(text.to_owned()),
            }
        };
        raw.push((node(from)?, node(to)?));
    }
    raw.into_iter()
        .map(|(a, b)| {
            let name = |id: &str| {
                labels
                    .get(id)
                    .cloned()
                    .ok_or_else(|| format!("diagram node `{id}` has no [crate-name] label"))
            };
            Ok((name(&a)?, name(&b)?))
        })
        .collect()
}

pub(crate) const INVARIANTS_HEADING: &str = "## Architecture invariants";

/// The test names each invariant line gives (`Checked by `name``), per line.
pub(crate) fn invariant_tests(doc: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut items: Vec<String> = Vec::new();
    for line in section(doc, INVARIANTS_HEADING)? {
        if let Some(item) = line.strip_prefix("- ") {
            items.push(item.to_owned());
        } else if line.starts_with("  ")
            && let Some(last) = items.last_mut()
        {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    if items.is_empty() {
        return Err(format!("`{INVARIANTS_HEADING}` lists no invariant"));
    }
    items
        .into_iter()
        .map(|item| {
            let Some((_, checked)) = item.split_once("Checked by ") else {
                return Err(format!("invariant `{item}` names no test (`Checked by …`)"));
            };
            let names: Vec<String> = checked
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            if names.is_empty() {
                return Err(format!("invariant `{item}` names no test in backticks"));
            }
            Ok((item, names))
        })
        .collect()
}

pub(crate) const FS_HEADING: &str = "## Filesystem access";

/// The crate names of the doc's filesystem table.
pub(crate) fn parse_fs_table(doc: &str) -> Result<BTreeSet<String>, String> {
    Ok(section(doc, FS_HEADING)?
        .filter_map(|l| {
            let cell = l.trim().strip_prefix('|')?.split('|').next()?.trim();
            Some(cell.strip_prefix('`')?.strip_suffix('`')?.to_owned())
        })
        .collect())
}
