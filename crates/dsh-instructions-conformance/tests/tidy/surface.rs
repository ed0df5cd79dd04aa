//! A library crate's root names: the public items a user sees at
//! `crate_name::…` — every leaf of a `pub use` tree and every `pub` fn,
//! struct, enum, trait, type, const, static, union and mod declared in
//! `lib.rs` at the top level. Names inside a `pub mod` are not counted: a
//! module is one name at the root, its contents a deliberate second step.

use super::source::{is_ident, shipped_code};

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
