//! The module graph of one crate, from its shipped code: an edge `a → b`
//! when module `a` names `crate::b…` or `super::…` resolving to `b`
//! (through the crate root's re-exports too). The crate root itself is left
//! out: it declares every module and re-exports their names, so it is the
//! table of contents, not a participant.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Result, ensure};

use super::source::{is_ident, shipped_files};
use super::tree::{Report, Tree};

/// Module path (`"scan"`, `"e2e::mock"`) → the modules it names.
pub(crate) type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module path of a file under `src/` (`""` for the crate root).
fn module_path(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "main" | "mod")
    ) {
        parts.pop();
    }
    parts.join("::")
}

fn parent(module: &str) -> &str {
    module.rsplit_once("::").map_or("", |(p, _)| p)
}

fn join(base: &str, seg: &str) -> String {
    if base.is_empty() {
        seg.to_owned()
    } else {
        format!("{base}::{seg}")
    }
}

/// The idents of a path starting at `s` (`a::b::{c, d::e}` → the paths
/// `a::b::c` and `a::b::d::e`, shortened to what resolution needs).
fn paths_at(code: &str, base: &str, out: &mut Vec<String>) {
    let mut path = base.to_owned();
    let mut rest = code;
    loop {
        let ident: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if !ident.is_empty() {
            path = join(&path, &ident);
            rest = &rest[ident.len()..];
            match rest.strip_prefix("::") {
                Some(r) => rest = r.trim_start(),
                None => break,
            }
        } else if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        paths_at(group[start..i].trim(), &path, out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        paths_at(group[start..i].trim(), &path, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        } else {
            break;
        }
    }
    out.push(path);
}

/// Every path the code names through `crate::` or `super::`, absolute
/// within the crate.
fn named_paths(code: &str, module: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        // `x::crate::` is no crate path; the second `super::` of
        // `super::super::` belongs to the first.
        if code[..i].chars().next_back().is_some_and(is_ident) || code[..i].ends_with("::") {
            continue;
        }
        let mut rest = &code[i..];
        let mut base = if let Some(r) = rest.strip_prefix("crate::") {
            rest = r;
            String::new()
        } else {
            parent(module).to_owned()
        };
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r.trim_start();
            if rest.starts_with("super::") {
                base = parent(&base).to_owned();
            }
        }
        paths_at(rest.trim_start(), &base, &mut out);
    }
    out
}

/// `name → module` for the crate root's `use module::{name, …}` lines.
fn root_reexports(root_code: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stmt in root_code.split(';') {
        let stmt = stmt.trim();
        let Some(tree) = stmt
            .strip_prefix("pub use ")
            .or_else(|| stmt.strip_prefix("use "))
        else {
            continue;
        };
        let mut paths = Vec::new();
        paths_at(tree.trim().trim_start_matches("crate::"), "", &mut paths);
        for p in paths {
            let first = p.split("::").next().unwrap_or_default();
            if modules.contains(first)
                && let Some(name) = p.rsplit("::").next()
            {
                let name = name.split_whitespace().next_back().unwrap_or(name);
                out.insert(name.to_owned(), first.to_owned());
            }
        }
    }
    out
}

/// The module a crate-absolute path lands in: its longest prefix that is a
/// module, else the module a root re-export points to, else none (an item
/// of the root).
fn resolve(
    path: &str,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    for n in (1..=segs.len()).rev() {
        let prefix = segs[..n].join("::");
        if modules.contains(&prefix) {
            return Some(prefix);
        }
    }
    reexports.get(segs[0]).cloned()
}

/// The module graph of sources given as `(path under src/, text)`.
#[cfg(test)]
fn graph_of(files: &[(String, String)]) -> Graph {
    graph_of_code(
        files
            .iter()
            .map(|(rel, text)| {
                (
                    module_path(Path::new(rel)),
                    super::source::shipped_code(text),
                )
            })
            .collect(),
    )
}

/// The module graph of `(module path, shipped code)` pairs.
fn graph_of_code(coded: Vec<(String, String)>) -> Graph {
    let modules: BTreeSet<String> = coded
        .iter()
        .map(|(m, _)| m.clone())
        .filter(|m| !m.is_empty())
        .collect();
    let reexports = coded
        .iter()
        .find(|(m, _)| m.is_empty())
        .map(|(_, code)| root_reexports(code, &modules))
        .unwrap_or_default();
    let mut graph = Graph::new();
    for (module, code) in coded.iter().filter(|(m, _)| !m.is_empty()) {
        let targets = graph.entry(module.clone()).or_default();
        for path in named_paths(code, module) {
            if let Some(t) = resolve(&path, &modules, &reexports)
                && t != *module
            {
                targets.insert(t);
            }
        }
    }
    graph
}

/// The module graph of a crate's `src/` (binaries under `src/bin/` are
/// crates of their own and test-only files are not shipped: both left out).
pub(crate) fn crate_graph(crate_dir: &Path) -> anyhow::Result<Graph> {
    let src = crate_dir.join("src");
    Ok(graph_of_code(
        shipped_files(&src)?
            .into_iter()
            .filter_map(|(p, code)| {
                let rel = p.strip_prefix(&src).ok()?;
                (!rel.starts_with("bin")).then(|| (module_path(rel), code))
            })
            .collect(),
    ))
}

/// Module loops: the strongly connected components with more than one
/// module (Tarjan), each sorted, in a stable order.
pub(crate) fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// The graph as lines `module → a, b`, for the test output.
pub(crate) fn render(graph: &Graph) -> Vec<String> {
    graph
        .iter()
        .map(|(m, ts)| {
            let ts: Vec<&str> = ts.iter().map(String::as_str).collect();
            if ts.is_empty() {
                format!("{m} → (none)")
            } else {
                format!("{m} → {}", ts.join(", "))
            }
        })
        .collect()
}

/// No crate's modules import each other in a loop (issue 19 item 5): a
/// loop means neither module can be read, tested or moved without the
/// other. Notes each crate's module graph.
pub(crate) fn no_module_imports_another_in_a_loop(tree: &Tree, report: &mut Report) -> Result<()> {
    let mut seen = 0;
    for p in tree.packages()? {
        let graph = crate_graph(&p.dir)?;
        report.note(format!("module graph of {}:", p.name));
        for line in render(&graph) {
            report.note(format!("  {line}"));
        }
        seen += graph.values().map(BTreeSet::len).sum::<usize>();
        for cycle in cycles(&graph) {
            report.fail(format!(
                "{}: modules {} import each other in a loop",
                p.name,
                cycle.join(", ")
            ));
        }
    }
    // The parse must find edges, or it proves nothing.
    ensure!(seen > 50, "only {seen} module edges found");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn a_module_loop_is_found_through_crate_super_and_reexports() {
        let files = owned(&[
            ("lib.rs", "mod a; mod b; mod c; mod d; pub use c::Thing;"),
            // a → b through a `use` group, b → c through a root re-export,
            // c → a through `super::`.
            ("a.rs", "use crate::{b::{f, g}, x};"),
            ("b.rs", "fn h() -> crate::Thing { todo!() }"),
            ("c.rs", "pub struct Thing; fn k() { super::a::run() }"),
            // d names the others only in comments, strings and tests.
            (
                "d.rs",
                "// crate::a\nconst S: &str = \"crate::b\";\n#[cfg(test)]\nmod tests { use crate::c::Thing; }",
            ),
        ]);
        let graph = graph_of(&files);
        assert_eq!(render(&graph), ["a → b", "b → c", "c → a", "d → (none)"]);
        assert_eq!(cycles(&graph), [["a", "b", "c"]]);
        // Nested modules: `super::super::` from `x::y::z` is `x`.
        let nested = owned(&[
            ("x/mod.rs", "mod y;"),
            ("x/y/mod.rs", "mod z;"),
            ("x/y/z.rs", "use super::super::w;"),
            ("x/w.rs", ""),
        ]);
        let graph = graph_of(&nested);
        assert_eq!(graph["x::y::z"], BTreeSet::from(["x::w".to_owned()]));
        assert!(cycles(&graph).is_empty());
    }
}
