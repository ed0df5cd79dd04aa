//! A library crate's root names: the public items a user sees at
//! `crate_name::…` — every leaf of a `pub use` tree and every `pub` fn,
//! struct, enum, trait, type, const, static, union and mod declared in
//! `lib.rs` at the top level. Names inside a `pub mod` are not counted: a
//! module is one name at the root, its contents a deliberate second step.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, ensure};

use super::arch::DOC;
use super::doc::{ROOT_NAMES_HEADING, parse_root_names};
use super::source::{is_ident, shipped_code};
use super::tree::{Report, Tree};

/// A crate with more root names than this needs a reason in the doc's
/// root-names table (issue 19 item 4).
pub(crate) const ROOT_NAMES_LIMIT: usize = 25;

/// The leaves of a `use` tree (`a::{b, c::{d, e}}` → 3).
fn use_leaves(tree: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let leaf = tree.rsplit("::").next().unwrap_or(tree);
        // `x as y` is named `y`.
        let leaf = leaf.split_whitespace().next_back().unwrap_or(leaf);
        return vec![leaf.to_owned()];
    };
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.extend(leaves_of(&inner[start..i], tree, open));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.extend(leaves_of(&inner[start..], tree, open));
    out
}

fn leaves_of(part: &str, tree: &str, open: usize) -> Vec<String> {
    let part = part.trim();
    match part {
        "" => Vec::new(),
        // `a::{self, …}` names the module `a`.
        "self" => use_leaves(tree[..open].trim_end_matches("::")),
        _ => use_leaves(part),
    }
}

/// The root names of a `lib.rs`, in order of appearance.
pub(crate) fn root_names(lib_rs: &str) -> Vec<String> {
    let code = shipped_code(lib_rs);
    let bytes = code.as_bytes();
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < code.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b'p' if depth == 0
                && code[i..].starts_with("pub")
                && !code[..i].chars().next_back().is_some_and(is_ident)
                && code[i + 3..].starts_with(char::is_whitespace) =>
            {
                let rest = code[i + 3..].trim_start();
                let mut words = rest.split_whitespace();
                let mut kw = words.next().unwrap_or_default();
                while matches!(kw, "async" | "unsafe" | "extern" | "\"C\"") {
                    kw = words.next().unwrap_or_default();
                }
                if kw == "use" {
                    let tree_start = rest.find("use").unwrap_or(0) + 3;
                    let tree = &rest[tree_start..];
                    let end = tree.find(';').unwrap_or(tree.len());
                    names.extend(use_leaves(&tree[..end]));
                } else if matches!(
                    kw,
                    "fn" | "struct"
                        | "enum"
                        | "trait"
                        | "type"
                        | "const"
                        | "static"
                        | "mod"
                        | "union"
                ) {
                    let after = rest[rest.find(kw).unwrap_or(0) + kw.len()..].trim_start();
                    // `pub const fn f` is a function.
                    let after = after.strip_prefix("fn ").unwrap_or(after).trim_start();
                    let name: String = after.chars().take_while(|&c| is_ident(c)).collect();
                    names.push(name);
                }
                i += 3;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    names
}

fn check_root_names(
    counts: &BTreeMap<String, usize>,
    table: &BTreeMap<String, (usize, String)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, &n) in counts {
        match table.get(name) {
            Some((listed, _)) if *listed != n => out.push(format!(
                "{name} has {n} root names; {DOC} says {listed}"
            )),
            Some((_, why)) if n > ROOT_NAMES_LIMIT && why.len() < 20 => out.push(format!(
                "{name} has {n} root names (over {ROOT_NAMES_LIMIT}) and no justification"
            )),
            None if n > ROOT_NAMES_LIMIT => out.push(format!(
                "{name} has {n} root names (over {ROOT_NAMES_LIMIT}) and no row under `{ROOT_NAMES_HEADING}` in {DOC}"
            )),
            _ => {}
        }
    }
    for name in table.keys().filter(|n| !counts.contains_key(*n)) {
        out.push(format!(
            "{DOC} lists root names of {name}, which is no library crate"
        ));
    }
    out
}

/// Root names per library crate: noted, and every crate with more than
/// [`ROOT_NAMES_LIMIT`] has a row in the doc's "Root names" table giving
/// its count and why.
pub(crate) fn root_names_per_crate_are_counted_and_justified(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let mut counts = BTreeMap::new();
    for p in tree.packages()?.iter().filter(|p| p.has_lib) {
        let names = root_names(&tree.read(p.dir.join("src/lib.rs"))?);
        report.note(format!("root names: {} {}", p.name, names.len()));
        counts.insert(p.name.clone(), names.len());
    }
    report.note(format!(
        "root names: total {}",
        counts.values().sum::<usize>()
    ));
    ensure!(
        counts.len() >= 10,
        "only {} library crates: {counts:?}",
        counts.len()
    );
    let table = parse_root_names(&tree.read(DOC)?).map_err(|e| anyhow!("{DOC}: {e}"))?;
    report.fail_all(check_root_names(&counts, &table));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_names_count_use_leaves_and_top_level_items_only() {
        let lib = r#"//! pub fn in_doc() {}
mod private;
pub mod tools;
pub use a::{B, c::{D, E as F}, self};
pub use g::H;
pub(crate) use i::J;
pub const fn k() {}
pub async fn l() {}
pub struct M { pub field: u8 }
impl M { pub fn method(&self) {} }
pub trait N { fn o(); }
pub type P = u8;
pub const Q: &str = "pub fn r() {}";
#[cfg(test)]
pub mod tests { pub fn s() {} }
"#;
        assert_eq!(
            root_names(lib),
            [
                "tools", "B", "D", "F", "a", "H", "k", "l", "M", "N", "P", "Q"
            ]
        );
        let counts = BTreeMap::from([("big".to_owned(), 30), ("small".to_owned(), 3)]);
        let ok = parse_root_names(
            "## Root names\n| crate | root names | why |\n|---|---|---|\n| `big` | 30 | every name is one an embedder implements against |\n| `small` | 3 | |\n",
        )
        .expect("valid");
        assert!(check_root_names(&counts, &ok).is_empty());
        let stale = parse_root_names(
            "## Root names\n| `big` | 29 | a long enough reason, really |\n| `gone` | 1 | x |\n",
        )
        .expect("valid");
        let problems = check_root_names(&counts, &stale);
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].contains("big has 30 root names; docs/architecture.md says 29"));
        assert!(problems[1].contains("gone, which is no library crate"));
        let missing = parse_root_names("## Root names\n").expect("valid");
        assert!(check_root_names(&counts, &missing)[0].contains("no row"));
    }
}
