//! Architecture tidy checks: `docs/architecture.md` is true of the code.
//!
//! * Every crate's internal dependencies (normal, dev, build, per target)
//!   are allowed by the doc's "Dependency rules" table.
//! * Crates the table marks `pure` (render, state) use no filesystem,
//!   environment, clock, network, process, thread or async runtime in their
//!   non-test sources, and list no I/O crate as a dependency.
//! * Every `<crate>/src/….rs` file the doc names exists.
//! * Every requirement id cited anywhere in the repository is defined in
//!   `docs/spec/`, and every id defined there is cited outside it or listed
//!   as not yet implemented (`tidy/spec_ids.rs`).
//!
//!
//! It lives in the conformance crate because that crate is a default member
//! (xtask is not), so `cargo test --workspace` runs it. Manifests come from
//! `cargo metadata` (`tidy/workspace.rs`); Rust sources are read by a small
//! lexer (`tidy/source.rs`) that blanks comments and literals, enough for
//! the paths and item keywords the checks look for.

// The crate root of a test target resolves `mod` next to itself, where
// Cargo would take each file for a test target of its own: hence `#[path]`.
#[path = "tidy/doc.rs"]
mod doc;
#[path = "tidy/modules.rs"]
mod modules;
#[path = "tidy/source.rs"]
mod source;
#[path = "tidy/spec_ids.rs"]
mod spec_ids;
#[path = "tidy/surface.rs"]
mod surface;
#[path = "tidy/workspace.rs"]
mod workspace;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use doc::{
    FS_HEADING, ROOT_NAMES_HEADING, Rule, invariant_tests, parse_diagram, parse_fs_table,
    parse_root_names, parse_rules,
};
use source::{code_only, is_ident, rust_files, shipped_files, strip_test_items};
use workspace::{Kind, Package};

/// Crates a pure crate must not list among its normal dependencies.
const IO_CRATES: &[&str] = &[
    "tokio",
    "tokio-util",
    "cap-std",
    "cap-fs-ext",
    "rustix",
    "tempfile",
];

/// Paths a pure crate's code must not name (matched on identifier bounds).
const IMPURE_PATHS: &[&str] = &[
    "std::fs",
    "std::env",
    "std::net",
    "std::process",
    "std::thread",
    "SystemTime",
    "Instant",
    "tokio",
    "cap_std",
    "async",
];

/// Modules of `std` a pure crate must not bring in through a `use std::{…}`
/// group.
const IMPURE_STD_MODULES: &[&str] = &["fs", "env", "net", "process", "thread"];

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Canonical, so failure messages show paths relative to it.
    std::fs::canonicalize(&root).unwrap_or(root)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Violations of one package's dependencies against the rules, one line
/// each. `members` are the workspace's crates: a dependency on one of them
/// is internal. A crate may dev-depend on itself (to turn on its own
/// `test-support` feature for its tests).
fn check_package(
    p: &Package,
    members: &BTreeSet<String>,
    rules: &BTreeMap<String, Rule>,
) -> Vec<String> {
    let Some(rule) = rules.get(&p.name) else {
        return vec![format!(
            "{} has no row in the docs/architecture.md dependency table",
            p.name
        )];
    };
    let mut out = Vec::new();
    for dep in &p.deps {
        let internal = dep.name.starts_with("dsh-")
            || members.contains(&dep.name)
            || rules.contains_key(&dep.name);
        let own_tests = dep.name == p.name && dep.kind == Kind::Dev;
        if internal && !own_tests && !rule.allowed.contains(&dep.name) {
            out.push(format!(
                "{} depends on {} in [{}], which docs/architecture.md does not allow (allowed: {})",
                p.name,
                dep.name,
                dep.section(),
                list(&rule.allowed)
            ));
        }
        if rule.pure && dep.kind == Kind::Normal && IO_CRATES.contains(&dep.name.as_str()) {
            out.push(format!(
                "{} is pure but depends on the I/O crate {}",
                p.name, dep.name
            ));
        }
    }
    out
}

fn list(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        "none".to_owned()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// Offending uses in one pure source file, as `(line, what)`.
fn impure_uses(src: &str) -> (Vec<(usize, String)>, Vec<String>) {
    let mut code = code_only(src);
    let test_files = strip_test_items(&mut code);
    (impure_code(&code), test_files)
}

/// Offending uses in shipped code (see [`impure_uses`]).
fn impure_code(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for pat in IMPURE_PATHS {
            let mut from = 0;
            while let Some(off) = line[from..].find(pat) {
                let s = from + off;
                let e = s + pat.len();
                let before = line[..s].chars().next_back().is_some_and(is_ident);
                let after = line[e..].chars().next().is_some_and(is_ident);
                if !before && !after {
                    found.push((n + 1, (*pat).to_owned()));
                }
                from = e;
            }
        }
    }
    // `use std::{fs, …}`: the group may span lines.
    let mut from = 0;
    while let Some(off) = code[from..].find("std::{") {
        let s = from + off + "std::{".len();
        let e = code[s..].find('}').map_or(code.len(), |x| s + x);
        let line = code[..s].matches('\n').count() + 1;
        for word in code[s..e].split(|c: char| !is_ident(c)) {
            if IMPURE_STD_MODULES.contains(&word) {
                found.push((line, format!("std::{{{word}}}")));
            }
        }
        from = e;
    }
    found.sort();
    found
}

/// Violations of a pure crate's sources, one line each naming file and line.
fn check_pure_sources(root: &Path, crate_dir: &Path, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (file, code) in shipped_files(&crate_dir.join("src")) {
        for (line, what) in impure_code(&code) {
            out.push(format!(
                "{}:{line}: `{what}` in {name}, which docs/architecture.md marks pure",
                relative(root, &file)
            ));
        }
    }
    out
}

/// `<crate>/src/….rs` paths named in the doc whose file does not exist.
fn missing_doc_paths(root: &Path, doc: &str, crate_dirs: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for span in doc.split('`').skip(1).step_by(2) {
        let Some((short, rest)) = span.split_once("/src/") else {
            continue;
        };
        if !rest.ends_with(".rs") || short.contains(' ') {
            continue;
        }
        let owner = crate_dirs.iter().find(|d| {
            d.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == short || n.ends_with(&format!("-{short}")))
        });
        match owner {
            Some(dir) if dir.join("src").join(rest).is_file() => {}
            Some(dir) => out.push(format!(
                "docs/architecture.md names `{span}`, but {} does not exist",
                relative(root, &dir.join("src").join(rest))
            )),
            None => out.push(format!(
                "docs/architecture.md names `{span}`, but no crate is called `{short}`"
            )),
        }
    }
    out
}

fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn rules(root: &Path) -> BTreeMap<String, Rule> {
    parse_rules(&read(&root.join("docs/architecture.md")))
        .unwrap_or_else(|e| panic!("docs/architecture.md: {e}"))
}

fn assert_none(problems: Vec<String>) {
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn crate_dependencies_follow_the_layer_table() {
    let rules = rules(&workspace_root());
    let packages = workspace::packages();
    let members = workspace::member_names(&packages);
    // The check must see the crates it is about, xtask included.
    for needed in ["dsh-instructions-cli", "dsh-instructions-render", "xtask"] {
        assert!(
            members.contains(needed),
            "{needed} missing from {members:?}"
        );
    }
    let mut problems = Vec::new();
    for p in &packages {
        problems.extend(check_package(p, &members, &rules));
    }
    assert_none(problems);
}

#[test]
fn pure_crates_touch_no_io_clock_or_runtime() {
    let root = workspace_root();
    let rules = rules(&root);
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for p in workspace::packages() {
        if rules.get(&p.name).is_some_and(|r| r.pure) {
            problems.extend(check_pure_sources(&root, &p.dir, &p.name));
            checked.push(p.name);
        }
    }
    assert_none(problems);
    // The invariant names these two; the check must not go quiet.
    for name in ["dsh-instructions-render", "dsh-instructions-state"] {
        assert!(
            checked.iter().any(|c| c == name),
            "{name} is not checked as pure"
        );
    }
}

#[test]
fn every_source_file_the_doc_names_exists() {
    let root = workspace_root();
    let doc = read(&root.join("docs/architecture.md"));
    assert_none(missing_doc_paths(&root, &doc, &crate_dirs(&root)));
}

/// The doc's Decide phase: `compose.rs` calls no provider, and its one
/// async function only sequences the gather passes of `gather.rs`.
#[test]
fn compose_rs_makes_no_provider_call() {
    let root = workspace_root();
    let path = root.join("crates/dsh-instructions-runtime/src/compose.rs");
    let mut code = code_only(&read(&path));
    strip_test_items(&mut code);
    let mut problems = Vec::new();
    for (n, line) in code.lines().enumerate() {
        if line.contains("provider.") {
            problems.push(format!(
                "{}:{}: a provider call; gathering belongs in gather.rs or scan.rs",
                relative(&root, &path),
                n + 1
            ));
        }
    }
    let asyncs = code.matches("async fn").count();
    if asyncs != 1 {
        problems.push(format!(
            "{} has {asyncs} async functions; docs/architecture.md says one (`compose()`)",
            relative(&root, &path)
        ));
    }
    assert_none(problems);
}

// The checks themselves, on inputs that break the rules.

#[test]
fn rules_parse_from_the_dependency_table_only() {
    let doc = "| `a` | x | y |\n## Dependency rules\n\n| crate | may depend on | pure |\n|---|---|---|\n| `low` | — | yes |\n| `high` | `low`, `mid` | no |\n## Next\n| `other` | — | no |\n";
    let rules = parse_rules(doc).expect("valid");
    assert_eq!(rules.keys().collect::<Vec<_>>(), ["high", "low"]);
    assert!(rules["low"].pure && rules["low"].allowed.is_empty());
    assert_eq!(
        rules["high"].allowed.iter().collect::<Vec<_>>(),
        ["low", "mid"]
    );
    assert!(parse_rules("# nothing\n").is_err());
    let bad = "## Dependency rules\n| `a` | — | maybe |\n";
    assert!(parse_rules(bad).unwrap_err().contains("`a`"));
}

#[test]
fn an_upward_dependency_names_crate_and_dependency() {
    let rules = parse_rules(
        "## Dependency rules\n| `dsh-low` | — | yes |\n| `dsh-high` | `dsh-low` | no |\n",
    )
    .expect("valid");
    // As `cargo metadata` reports a manifest with a renamed dev-dependency
    // and a target-specific build dependency.
    let metadata = serde_json::json!({"packages": [{
        "name": "dsh-low",
        "manifest_path": "/w/crates/low/Cargo.toml",
        "targets": [{"kind": ["lib"]}],
        "dependencies": [
            {"name": "serde", "kind": null, "target": null, "features": []},
            {"name": "tokio", "kind": null, "target": null, "features": []},
            {"name": "dsh-high", "rename": "alias", "kind": "dev", "target": null, "features": []},
            {"name": "dsh-other", "kind": "build", "target": "cfg(unix)", "features": []},
            {"name": "dsh-low", "kind": "dev", "target": null, "features": ["test-support"]},
        ],
    }]});
    let packages = workspace::packages_from(&metadata).expect("valid");
    let [low] = &packages[..] else {
        panic!("{packages:#?}")
    };
    assert!(low.has_lib && low.dir == Path::new("/w/crates/low"));
    let members = BTreeSet::from(["dsh-low".to_owned(), "dsh-high".to_owned()]);
    let problems = check_package(low, &members, &rules);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("is pure but depends on the I/O crate tokio"));
    assert!(problems[1].starts_with("dsh-low depends on dsh-high in [dev-dependencies]"));
    assert!(
        problems[2].contains("depends on dsh-other in [target.'cfg(unix)'.build-dependencies]")
    );
    let unknown = Package {
        name: "dsh-new".into(),
        ..low.clone()
    };
    assert!(check_package(&unknown, &members, &rules)[0].contains("has no row"));
}

#[test]
fn impure_uses_are_found_outside_comments_strings_and_tests() {
    let src = r##"//! Uses std::fs in a comment.
use std::{collections::BTreeMap, env};
/* block std::process */
fn f() -> u64 { let s = "std::net tokio"; let r = r#"Instant"#; let c = '"'; g::<'a>() }
fn now() { let _ = std::time::SystemTime::now(); }
fn fine(instant_ish: u8, is_tokio_like: u8) {}
async fn later() {}
#[cfg(test)]
mod tests {
    fn t() { std::fs::read("x"); }
}
#[cfg(test)]
mod more;
"##;
    let (found, test_files) = impure_uses(src);
    assert_eq!(
        found,
        [
            (2, "std::{env}".to_owned()),
            (5, "SystemTime".to_owned()),
            (7, "async".to_owned()),
        ]
    );
    assert_eq!(test_files, ["more"]);
}

#[test]
fn a_stale_doc_path_is_reported() {
    let root = workspace_root();
    let dirs = crate_dirs(&root);
    let doc = "`runtime/src/instance.rs` and `runtime/src/gone.rs` and `nosuch/src/x.rs`";
    let missing = missing_doc_paths(&root, doc, &dirs);
    assert_eq!(missing.len(), 2, "{missing:#?}");
    assert!(
        missing[0].ends_with("but crates/dsh-instructions-runtime/src/gone.rs does not exist"),
        "{missing:#?}"
    );
    assert!(missing[1].contains("no crate is called `nosuch`"));
}

/// The binary every agent runs as its hook must not link the test harness
/// (issue 19 item 3, decision 0024). From `cargo metadata --no-deps` (the
/// workspace's own manifests, no download, so it works offline): the
/// workspace crates reachable from `root_name` through normal dependencies,
/// on every platform (dev and build dependencies are not linked into it). An
/// internal crate can only be reached through workspace crates, so the walk
/// stays inside the workspace.
fn normal_closure(
    metadata: &serde_json::Value,
    root_name: &str,
) -> Result<BTreeSet<String>, String> {
    let packages = metadata["packages"].as_array().ok_or("no packages")?;
    let by_name: BTreeMap<&str, &serde_json::Value> = packages
        .iter()
        .filter_map(|p| Some((p["name"].as_str()?, p)))
        .collect();
    if !by_name.contains_key(root_name) {
        return Err(format!("no workspace package {root_name}"));
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![root_name.to_owned()];
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(pkg) = by_name.get(name.as_str()) else {
            continue; // an external crate: it cannot name a workspace crate
        };
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            if dep["kind"].is_null()
                && let Some(n) = dep["name"].as_str()
            {
                todo.push(n.to_owned());
            }
        }
    }
    Ok(seen)
}

#[test]
fn the_shipped_binary_does_not_link_the_conformance_harness() {
    let metadata = workspace::metadata();
    let linked = normal_closure(metadata, "dsh-instructions-cli").expect("closure");
    // The walk must reach what the binary does link, or it proves nothing:
    // runtime only through hooks/session, and the YAML parser for settings.yaml.
    for needed in [
        "dsh-instructions-hooks",
        "dsh-instructions-runtime",
        "dsh-instructions-render",
        "serde-saphyr",
    ] {
        assert!(linked.contains(needed), "{needed} missing from {linked:?}");
    }
    assert!(
        !linked.contains("dsh-instructions-conformance"),
        "dsh-instructions (the shipped binary) links dsh-instructions-conformance: {linked:?}"
    );
    // And it would notice: xtask links the harness through a normal dependency.
    let xtask = normal_closure(metadata, "xtask").expect("closure");
    assert!(xtask.contains("dsh-instructions-conformance"));
    // Nor does it turn on the in-memory test double: no normal dependency
    // line inside what it links enables a `test-support` feature.
    let packages = workspace::packages();
    let enabling = |names: &BTreeSet<String>| -> Vec<String> {
        packages
            .iter()
            .filter(|p| names.contains(&p.name))
            .flat_map(|p| {
                p.deps
                    .iter()
                    .filter(|d| {
                        d.kind == Kind::Normal && d.features.iter().any(|f| f == "test-support")
                    })
                    .map(move |d| format!("{} → {}", p.name, d.name))
            })
            .collect()
    };
    let on = enabling(&linked);
    assert!(
        on.is_empty(),
        "the shipped binary turns on test-support: {on:?}"
    );
    // The conformance crate does (its memory provider), so the walk would see it.
    assert!(!enabling(&xtask).is_empty());
}

/// The library crates and xtask, for the source checks: (name, dir).
fn source_crates() -> Vec<(String, PathBuf)> {
    workspace::packages()
        .into_iter()
        .map(|p| (p.name, p.dir))
        .collect()
}

/// No crate's modules import each other in a loop (issue 19 item 5): a
/// loop means neither module can be read, tested or moved without the
/// other. Prints each crate's module graph (`--nocapture`).
#[test]
fn no_module_imports_another_in_a_loop() {
    let mut problems = Vec::new();
    let mut seen = 0;
    for (name, dir) in source_crates() {
        let graph = modules::crate_graph(&dir);
        println!("module graph of {name}:");
        for line in modules::render(&graph) {
            println!("  {line}");
        }
        seen += graph.values().map(BTreeSet::len).sum::<usize>();
        for cycle in modules::cycles(&graph) {
            problems.push(format!(
                "{name}: modules {} import each other in a loop",
                cycle.join(", ")
            ));
        }
    }
    // The parse must find edges, or it proves nothing.
    assert!(seen > 50, "only {seen} module edges found");
    assert_none(problems);
}

#[test]
fn a_module_loop_is_found_through_crate_super_and_reexports() {
    let files = [
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
    ];
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect();
    let graph = modules::graph_of(&files);
    assert_eq!(
        modules::render(&graph),
        ["a → b", "b → c", "c → a", "d → (none)"]
    );
    assert_eq!(modules::cycles(&graph), [["a", "b", "c"]]);
    // Nested modules: `super::super::` from `x::y::z` is `x`.
    let nested: Vec<(String, String)> = [
        ("x/mod.rs", "mod y;"),
        ("x/y/mod.rs", "mod z;"),
        ("x/y/z.rs", "use super::super::w;"),
        ("x/w.rs", ""),
    ]
    .iter()
    .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
    .collect();
    let graph = modules::graph_of(&nested);
    assert_eq!(graph["x::y::z"], BTreeSet::from(["x::w".to_owned()]));
    assert!(modules::cycles(&graph).is_empty());
}

/// Root names per library crate (issue 19 item 4): printed, and every crate
/// with more than [`ROOT_NAMES_LIMIT`] has a row in the doc's "Root names"
/// table giving its count and why.
const ROOT_NAMES_LIMIT: usize = 25;

fn check_root_names(
    counts: &BTreeMap<String, usize>,
    table: &BTreeMap<String, (usize, String)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, &n) in counts {
        match table.get(name) {
            Some((listed, _)) if *listed != n => out.push(format!(
                "{name} has {n} root names; docs/architecture.md says {listed}"
            )),
            Some((_, why)) if n > ROOT_NAMES_LIMIT && why.len() < 20 => out.push(format!(
                "{name} has {n} root names (over {ROOT_NAMES_LIMIT}) and no justification"
            )),
            None if n > ROOT_NAMES_LIMIT => out.push(format!(
                "{name} has {n} root names (over {ROOT_NAMES_LIMIT}) and no row under `{ROOT_NAMES_HEADING}` in docs/architecture.md"
            )),
            _ => {}
        }
    }
    for name in table.keys().filter(|n| !counts.contains_key(*n)) {
        out.push(format!(
            "docs/architecture.md lists root names of {name}, which is no library crate"
        ));
    }
    out
}

#[test]
fn root_names_per_crate_are_counted_and_justified() {
    let root = workspace_root();
    let mut counts = BTreeMap::new();
    for p in workspace::packages().iter().filter(|p| p.has_lib) {
        let names = surface::root_names(&read(&p.dir.join("src/lib.rs")));
        println!("root names: {} {}", p.name, names.len());
        counts.insert(p.name.clone(), names.len());
    }
    println!("root names: total {}", counts.values().sum::<usize>());
    assert!(counts.len() >= 10, "{counts:?}");
    let table = parse_root_names(&read(&root.join("docs/architecture.md")))
        .unwrap_or_else(|e| panic!("docs/architecture.md: {e}"));
    assert_none(check_root_names(&counts, &table));
}

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
        surface::root_names(lib),
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

/// Differences between the doc's edges and the real ones, one line each.
fn diagram_differences(
    doc: &BTreeSet<(String, String)>,
    real: &BTreeSet<(String, String)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (a, b) in doc.difference(real) {
        out.push(format!(
            "docs/architecture.md draws {a} --> {b}, but {a} does not depend on {b}"
        ));
    }
    for (a, b) in real.difference(doc) {
        out.push(format!(
            "{a} depends on {b}, but the docs/architecture.md diagram has no {a} --> {b}"
        ));
    }
    out
}

/// Normal dependencies between workspace crates, as `(from, to)`.
fn real_edges(packages: &[Package]) -> BTreeSet<(String, String)> {
    let members = workspace::member_names(packages);
    packages
        .iter()
        .flat_map(|p| {
            p.normal_internal(&members)
                .map(|d| (p.name.clone(), d.to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_crate_diagram_is_the_dependency_graph() {
    let doc = read(&workspace_root().join("docs/architecture.md"));
    let drawn = parse_diagram(&doc).unwrap_or_else(|e| panic!("docs/architecture.md: {e}"));
    let real = real_edges(&workspace::packages());
    println!("crate graph (normal dependencies):");
    for (a, b) in &real {
        println!("  {a} → {b}");
    }
    assert!(real.len() > 20, "{real:?}");
    assert_none(diagram_differences(&drawn, &real));
}

#[test]
fn a_diagram_edge_missing_or_extra_is_reported() {
    let doc =
        "x\n```mermaid\ngraph TD\n  cli[c-cli] --> f[c-facade]\n  cli --> s[c-session]\n```\n";
    let drawn = parse_diagram(doc).expect("valid");
    let real = BTreeSet::from([
        ("c-cli".to_owned(), "c-session".to_owned()),
        ("c-cli".to_owned(), "c-hooks".to_owned()),
    ]);
    let problems = diagram_differences(&drawn, &real);
    assert_eq!(
        problems,
        [
            "docs/architecture.md draws c-cli --> c-facade, but c-cli does not depend on c-facade",
            "c-cli depends on c-hooks, but the docs/architecture.md diagram has no c-cli --> c-hooks",
        ]
    );
    assert!(
        parse_diagram("```mermaid\n a --> b\n```")
            .unwrap_err()
            .contains("label")
    );
    assert!(parse_diagram("no diagram").is_err());
}

/// Whether `name` is a test function somewhere in `files`: `fn name(`
/// under a test attribute, or inside a `proptest!` block.
fn test_fn_exists(name: &str, files: &[(PathBuf, String)]) -> bool {
    let needle = format!("fn {name}(");
    files.iter().any(|(_, text)| {
        text.match_indices(&needle).any(|(i, _)| {
            let before = &text[..i];
            // The attributes and doc lines right above the `fn` line.
            let line_start = before.rfind('\n').map_or(0, |n| n + 1);
            let attrs: Vec<&str> = before[..line_start]
                .lines()
                .rev()
                .map(str::trim)
                .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
                .collect();
            attrs.iter().any(|a| {
                a.starts_with("#[test]")
                    || a.starts_with("#[rstest")
                    || a.starts_with("#[tokio::test")
            }) || before.contains("proptest!")
        })
    })
}

fn all_rust_sources(root: &Path) -> Vec<(PathBuf, String)> {
    let mut paths = Vec::new();
    for p in workspace::packages() {
        rust_files(&p.dir, &mut paths);
    }
    let _ = root;
    paths
        .into_iter()
        .map(|p| {
            let text = read(&p);
            (p, text)
        })
        .collect()
}

#[test]
fn every_architecture_invariant_names_a_test_that_exists() {
    let root = workspace_root();
    let doc = read(&root.join("docs/architecture.md"));
    let invariants = invariant_tests(&doc).unwrap_or_else(|e| panic!("docs/architecture.md: {e}"));
    let files = all_rust_sources(&root);
    let mut problems = Vec::new();
    for (item, names) in &invariants {
        for name in names {
            if !test_fn_exists(name, &files) {
                problems.push(format!(
                    "docs/architecture.md: invariant `{item}` names `{name}`, which is no test function"
                ));
            }
        }
    }
    assert!(invariants.len() >= 10, "{invariants:#?}");
    assert_none(problems);
}

#[test]
fn an_invariant_without_an_existing_test_is_reported() {
    let doc =
        "## Architecture invariants\n- A holds. Checked by\n  `real_one`.\n- B holds.\n## Next\n";
    assert!(invariant_tests(doc).unwrap_err().contains("B holds"));
    let doc = "## Architecture invariants\n- A holds. Checked by\n  `real_one`, `gone`.\n";
    let [(_, names)] = &invariant_tests(doc).expect("valid")[..] else {
        panic!()
    };
    assert_eq!(names, &["real_one", "gone"]);
    let files = vec![(
        PathBuf::from("t.rs"),
        "#[test]\nfn real_one() {}\nfn gone() {}\nproptest! { fn in_macro(x in 0..1) {} }\n"
            .to_owned(),
    )];
    assert!(test_fn_exists("real_one", &files));
    assert!(!test_fn_exists("gone", &files), "not a test: no attribute");
    assert!(test_fn_exists("in_macro", &files));
    assert!(!test_fn_exists("real", &files));
}

/// Filesystem APIs, matched on identifier bounds in shipped code.
const FS_PATTERNS: &[&str] = &["fs::", "File::", "OpenOptions", "tempfile::"];

/// The first filesystem API the code names, as `(line, pattern)`.
fn fs_use(code: &str) -> Option<(usize, &'static str)> {
    for (n, line) in code.lines().enumerate() {
        for pat in FS_PATTERNS {
            for (i, _) in line.match_indices(pat) {
                if !line[..i].chars().next_back().is_some_and(is_ident) {
                    return Some((n + 1, pat));
                }
            }
        }
        // `use std::{fs, …}` / `use cap_std::{fs::…}`.
        if line.contains("std::{") && line.split(|c: char| !is_ident(c)).any(|w| w == "fs") {
            return Some((n + 1, "fs"));
        }
    }
    None
}

/// Crates whose shipped code names a filesystem API, each with one place.
fn crates_touching_files() -> BTreeMap<String, String> {
    let root = workspace_root();
    let mut out = BTreeMap::new();
    for p in workspace::packages() {
        for (file, code) in shipped_files(&p.dir.join("src")) {
            if let Some((line, pat)) = fs_use(&code) {
                out.entry(p.name.clone())
                    .or_insert(format!("{}:{line} (`{pat}`)", relative(&root, &file)));
            }
        }
    }
    out
}

#[test]
fn only_the_listed_crates_touch_the_filesystem() {
    let doc = read(&workspace_root().join("docs/architecture.md"));
    let listed = parse_fs_table(&doc).unwrap_or_else(|e| panic!("docs/architecture.md: {e}"));
    let touching = crates_touching_files();
    println!("crates touching the filesystem: {touching:#?}");
    let mut problems = Vec::new();
    for (name, place) in &touching {
        if !listed.contains(name) {
            problems.push(format!(
                "{name} touches the filesystem ({place}) but has no row under `{FS_HEADING}` in docs/architecture.md"
            ));
        }
    }
    for name in listed.iter().filter(|n| !touching.contains_key(*n)) {
        problems.push(format!(
            "docs/architecture.md lists {name} under `{FS_HEADING}`, but its shipped code names no filesystem API"
        ));
    }
    // The pure crates are the control: they must not show up.
    assert!(!touching.contains_key("dsh-instructions-render"));
    assert_none(problems);
}

#[test]
fn filesystem_uses_are_found_in_code_not_comments() {
    assert_eq!(
        fs_use(&code_only("// std::fs::read\nlet s = \"File::open\";")),
        None
    );
    assert_eq!(fs_use("use std::{io, fs};"), Some((1, "fs")));
    assert_eq!(
        fs_use("x\nlet f = std::fs::File::open(p);"),
        Some((2, "fs::"))
    );
    assert_eq!(
        fs_use("cap_std::fs::Dir::open_ambient_dir(p, a)"),
        Some((1, "fs::"))
    );
    assert_eq!(
        fs_use("let t = tempfile::NamedTempFile::new_in(d);"),
        Some((1, "tempfile::"))
    );
    assert_eq!(fs_use("fn my_fs::x() {} struct MyFile::y;"), None);
    let doc = "## Filesystem access\n| crate | touches |\n|---|---|\n| `a` | x |\n| `b` | y |\n## Next\n| `c` | z |\n";
    assert_eq!(
        parse_fs_table(doc).expect("valid"),
        BTreeSet::from(["a".to_owned(), "b".to_owned()])
    );
}

/// Lines of a crate's shipped code (all of `src/`) that contain `needle`,
/// as `file:line`.
fn shipped_lines_with(crate_dir: &Path, needle: &str) -> Vec<String> {
    let root = workspace_root();
    let mut out = Vec::new();
    for (file, code) in shipped_files(&crate_dir.join("src")) {
        for (n, line) in code.lines().enumerate() {
            if line.contains(needle) {
                out.push(format!("{}:{}", relative(&root, &file), n + 1));
            }
        }
    }
    out
}

#[test]
fn the_cli_grants_ambient_authority_once() {
    let root = workspace_root();
    // Each shipped front end grants it in one place: the CLI for its
    // commands, the hooks crate for an agent's event.
    for (krate, place) in [
        (
            "dsh-instructions-cli",
            "crates/dsh-instructions-cli/src/setup.rs:",
        ),
        (
            "dsh-instructions-hooks",
            "crates/dsh-instructions-hooks/src/adapter.rs:",
        ),
    ] {
        let grants = shipped_lines_with(&root.join("crates").join(krate), "ambient_authority()");
        assert_eq!(
            grants.len(),
            1,
            "{krate} must grant ambient authority in one place (docs/architecture.md), found: {grants:#?}"
        );
        assert!(grants[0].starts_with(place), "{grants:?}");
    }
}

#[test]
fn yaml_is_parsed_only_by_the_harness_xtask_cli_and_state() {
    let parsing: BTreeSet<String> = workspace::packages()
        .into_iter()
        .filter(|p| {
            p.deps
                .iter()
                .any(|d| d.kind == Kind::Normal && d.name == "serde-saphyr")
        })
        .map(|p| p.name)
        .collect();
    // The state crate reads rule files' front matter (R-RULE-2), a pure
    // parse of text the runtime read (decision 0047).
    let allowed = [
        "dsh-instructions-cli",
        "dsh-instructions-conformance",
        "dsh-instructions-state",
        "xtask",
    ];
    let extra: Vec<&String> = parsing
        .iter()
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "YAML parser linked by {extra:?} (docs/architecture.md)"
    );
    assert!(parsing.contains("dsh-instructions-cli"), "{parsing:?}");
}

#[test]
fn every_crate_root_forbids_unsafe_code() {
    let root = workspace_root();
    let mut roots = Vec::new();
    for p in workspace::packages() {
        let src = p.dir.join("src");
        for f in ["lib.rs", "main.rs"] {
            if src.join(f).is_file() {
                roots.push(src.join(f));
            }
        }
        let mut bins = Vec::new();
        rust_files(&src.join("bin"), &mut bins);
        roots.extend(bins);
    }
    assert!(roots.len() >= 12, "{roots:?}");
    let missing: Vec<String> = roots
        .iter()
        .filter(|f| !code_only(&read(f)).contains("#![forbid(unsafe_code)]"))
        .map(|f| relative(&root, f))
        .collect();
    assert!(
        missing.is_empty(),
        "no #![forbid(unsafe_code)] in {missing:#?}"
    );
}

/// The requirement ids of the working tree (`tidy/spec_ids.rs` says what
/// counts as a definition and as a citation).
fn requirement_ids() -> spec_ids::Ids {
    let root = workspace_root();
    let mut paths = Vec::new();
    spec_ids::files(&root, &mut paths);
    let texts: Vec<(String, String)> = paths
        .iter()
        .filter_map(|p| {
            let text = String::from_utf8(std::fs::read(p).ok()?).ok()?;
            Some((relative(&root, p), text))
        })
        .collect();
    let ids = spec_ids::Ids::from_texts(texts.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    println!(
        "requirement ids: {} defined in {}/, {} cited outside it, {} listed as not yet implemented",
        ids.defined.len(),
        spec_ids::SPEC_DIR,
        ids.cited.len(),
        spec_ids::NOT_YET_IMPLEMENTED.len()
    );
    // The walk must see the code and the spec, or the check goes quiet.
    assert!(ids.defined.len() >= 80, "{:?}", ids.defined.keys());
    assert!(ids.cited.len() >= 80, "{:?}", ids.cited.keys());
    ids
}

#[test]
fn every_cited_requirement_id_is_defined_in_docs_spec() {
    assert_none(requirement_ids().undefined());
}

#[test]
fn every_requirement_id_in_docs_spec_is_cited_or_not_yet_implemented() {
    assert_none(requirement_ids().uncited(spec_ids::NOT_YET_IMPLEMENTED));
}
