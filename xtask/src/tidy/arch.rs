//! `docs/architecture.md` is true of the code:
//!
//! * Every crate's internal dependencies (normal, dev, build, per target)
//!   are allowed by the doc's "Dependency rules" table, and the diagram is
//!   the real graph of normal dependencies, both ways.
//! * Crates the table marks `pure` (render, state) use no filesystem,
//!   environment, clock, network, process, thread or async runtime in their
//!   non-test sources, and list no I/O crate as a dependency.
//! * Every source file the doc names exists; every invariant names a test
//!   that exists; only the crates of its filesystem table touch files.
//! * The shipped binary links no conformance harness; ambient authority is
//!   granted once per front end; YAML is parsed where the doc says; every
//!   crate root forbids unsafe code.
//!
//! Manifests come from `cargo metadata` (`workspace.rs`); Rust sources are
//! read by a small lexer (`source.rs`) that blanks comments and literals,
//! enough for the paths and item keywords the checks look for.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{Result, anyhow, ensure};

use super::doc::{FS_HEADING, Rule, invariant_tests, parse_diagram, parse_fs_table, parse_rules};
use super::source::{code_only, is_ident, rust_files, shipped_files, strip_test_items};
use super::tree::{Report, Tree};
use super::workspace::{self, Kind, Package};

/// The page these checks hold to the code.
pub(crate) const DOC: &str = "docs/architecture.md";

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

fn doc_err(e: String) -> anyhow::Error {
    anyhow!("{DOC}: {e}")
}

fn rules(tree: &Tree) -> Result<BTreeMap<String, Rule>> {
    parse_rules(&tree.read(DOC)?).map_err(doc_err)
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
            "{} has no row in the {DOC} dependency table",
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
                "{} depends on {} in [{}], which {DOC} does not allow (allowed: {})",
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

pub(crate) fn crate_dependencies_follow_the_layer_table(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let rules = rules(tree)?;
    let packages = tree.packages()?;
    let members = workspace::member_names(&packages);
    // The check must see the crates it is about, xtask included.
    for needed in ["dsh-instructions-cli", "dsh-instructions-render", "xtask"] {
        ensure!(
            members.contains(needed),
            "{needed} missing from {members:?}"
        );
    }
    for p in &packages {
        report.fail_all(check_package(p, &members, &rules));
    }
    Ok(())
}

/// Offending uses in shipped code, as `(line, what)`.
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

pub(crate) fn pure_crates_touch_no_io_clock_or_runtime(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let rules = rules(tree)?;
    let mut checked = Vec::new();
    for p in tree.packages()? {
        if rules.get(&p.name).is_some_and(|r| r.pure) {
            for (file, code) in shipped_files(&p.dir.join("src"))? {
                for (line, what) in impure_code(&code) {
                    report.fail(format!(
                        "{}:{line}: `{what}` in {}, which {DOC} marks pure",
                        tree.relative(&file),
                        p.name
                    ));
                }
            }
            checked.push(p.name);
        }
    }
    // The invariant names these two; the check must not go quiet.
    for name in ["dsh-instructions-render", "dsh-instructions-state"] {
        ensure!(
            checked.iter().any(|c| c == name),
            "{name} is not checked as pure"
        );
    }
    Ok(())
}

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs`; a path without a group, itself.
fn expand_braces(span: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (span.find('{'), span.find('}')) else {
        return vec![span.to_owned()];
    };
    if close < open {
        return vec![span.to_owned()];
    }
    span[open + 1..close]
        .split(',')
        .map(|part| format!("{}{}{}", &span[..open], part.trim(), &span[close + 1..]))
        .collect()
}

/// The crate whose directory is `short` or ends in `-short`.
fn crate_dir<'a>(short: &str, crate_dirs: &'a [PathBuf]) -> Option<&'a PathBuf> {
    crate_dirs.iter().find(|d| {
        d.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n == short || n.ends_with(&format!("-{short}")))
    })
}

/// Source paths named in the doc whose file does not exist: every
/// `<crate>/src/….rs` span (`{a,b}` groups expanded), and every bare
/// `….rs` span in a row of the crate table, which must be under that row's
/// crate's `src/`.
fn missing_doc_paths(tree: &Tree, doc: &str, crate_dirs: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for span in doc.split('`').skip(1).step_by(2) {
        let Some((short, rest)) = span.split_once("/src/") else {
            continue;
        };
        if !rest.ends_with(".rs") || short.contains(' ') {
            continue;
        }
        let Some(dir) = crate_dir(short, crate_dirs) else {
            out.push(format!(
                "{DOC} names `{span}`, but no crate is called `{short}`"
            ));
            continue;
        };
        for rest in expand_braces(rest) {
            let file = dir.join("src").join(&rest);
            if !file.is_file() {
                out.push(format!(
                    "{DOC} names `{span}`, but {} does not exist",
                    tree.relative(&file)
                ));
            }
        }
    }
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, name, holds, _never, _] = cells[..] else {
            continue;
        };
        let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) else {
            continue;
        };
        let Some(dir) = crate_dirs
            .iter()
            .find(|d| d.file_name().is_some_and(|n| n == name))
        else {
            continue;
        };
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for span in holds.split('`').skip(1).step_by(2) {
            if !span.ends_with(".rs") || span.contains("/src/") || span.contains(' ') {
                continue;
            }
            for rel in expand_braces(span) {
                if !files.iter().any(|f| f.ends_with(&rel)) {
                    out.push(format!(
                        "{DOC}: the row of {name} names `{span}`, but no {rel} is under {}",
                        tree.relative(&dir.join("src"))
                    ));
                }
            }
        }
    }
    out
}

/// The members' directories (the crates under `crates/` and xtask).
fn crate_dirs(tree: &Tree) -> Result<Vec<PathBuf>> {
    Ok(tree.packages()?.into_iter().map(|p| p.dir).collect())
}

pub(crate) fn every_source_file_the_doc_names_exists(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let doc = tree.read(DOC)?;
    report.fail_all(missing_doc_paths(tree, &doc, &crate_dirs(tree)?));
    Ok(())
}

/// The doc's Decide phase: `compose.rs` calls no provider, and its one
/// async function only sequences the gather passes of `gather.rs`.
pub(crate) fn compose_rs_makes_no_provider_call(tree: &Tree, report: &mut Report) -> Result<()> {
    let rel = "crates/dsh-instructions-runtime/src/compose.rs";
    let mut code = code_only(&tree.read(rel)?);
    strip_test_items(&mut code);
    for (n, line) in code.lines().enumerate() {
        if line.contains("provider.") {
            report.fail(format!(
                "{rel}:{}: a provider call; gathering belongs in gather.rs or scan.rs",
                n + 1
            ));
        }
    }
    let asyncs = code.matches("async fn").count();
    if asyncs != 1 {
        report.fail(format!(
            "{rel} has {asyncs} async functions; {DOC} says one (`compose()`)"
        ));
    }
    Ok(())
}

/// The workspace crates reachable from `root_name` through normal
/// dependencies, on every platform (dev and build dependencies are not
/// linked into it), from `cargo metadata --no-deps`. An internal crate can
/// only be reached through workspace crates, so the walk stays inside the
/// workspace.
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

/// The binary every agent runs as its hook must not link the test harness
/// (issue 19 item 3, decision 0024), nor turn on its in-memory test double.
pub(crate) fn the_shipped_binary_does_not_link_the_conformance_harness(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let metadata = tree.metadata()?;
    let linked = normal_closure(metadata, "dsh-instructions-cli").map_err(anyhow::Error::msg)?;
    // The walk must reach what the binary does link, or it proves nothing:
    // runtime only through hooks/session, and the YAML parser for settings.yaml.
    for needed in [
        "dsh-instructions-hooks",
        "dsh-instructions-runtime",
        "dsh-instructions-render",
        "serde-saphyr",
    ] {
        ensure!(linked.contains(needed), "{needed} missing from {linked:?}");
    }
    if linked.contains("dsh-instructions-conformance") {
        report.fail(format!(
            "dsh-instructions (the shipped binary) links dsh-instructions-conformance: {linked:?}"
        ));
    }
    // And it would notice: xtask links the harness through a normal dependency.
    let xtask = normal_closure(metadata, "xtask").map_err(anyhow::Error::msg)?;
    ensure!(
        xtask.contains("dsh-instructions-conformance"),
        "the walk does not see xtask link the harness: {xtask:?}"
    );
    // Nor does it turn on the in-memory test double: no normal dependency
    // line inside what it links enables a `test-support` feature.
    let packages = tree.packages()?;
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
    if !on.is_empty() {
        report.fail(format!("the shipped binary turns on test-support: {on:?}"));
    }
    // The conformance crate does (its memory provider), so the walk would see it.
    ensure!(
        !enabling(&xtask).is_empty(),
        "no test-support seen through xtask"
    );
    Ok(())
}

/// Differences between the doc's edges and the real ones, one line each.
fn diagram_differences(
    doc: &BTreeSet<(String, String)>,
    real: &BTreeSet<(String, String)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (a, b) in doc.difference(real) {
        out.push(format!(
            "{DOC} draws {a} --> {b}, but {a} does not depend on {b}"
        ));
    }
    for (a, b) in real.difference(doc) {
        out.push(format!(
            "{a} depends on {b}, but the {DOC} diagram has no {a} --> {b}"
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

pub(crate) fn the_crate_diagram_is_the_dependency_graph(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let drawn = parse_diagram(&tree.read(DOC)?).map_err(doc_err)?;
    let real = real_edges(&tree.packages()?);
    report.note("crate graph (normal dependencies):");
    for (a, b) in &real {
        report.note(format!("  {a} → {b}"));
    }
    ensure!(real.len() > 20, "only {} crate edges found", real.len());
    report.fail_all(diagram_differences(&drawn, &real));
    Ok(())
}

/// Whether `name` is a test function somewhere in `files`: `fn name(`
/// under a test attribute, or inside a `proptest!` block.
pub(crate) fn test_fn_exists(name: &str, files: &[(PathBuf, String)]) -> bool {
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

/// Every Rust file of every member, with its text.
pub(crate) fn all_rust_sources(tree: &Tree) -> Result<Vec<(PathBuf, String)>> {
    let mut paths = Vec::new();
    for p in tree.packages()? {
        rust_files(&p.dir, &mut paths);
    }
    paths
        .into_iter()
        .map(|p| Ok((p.clone(), tree.read(&p)?)))
        .collect()
}

pub(crate) fn every_architecture_invariant_names_a_test_that_exists(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let invariants = invariant_tests(&tree.read(DOC)?).map_err(doc_err)?;
    let files = all_rust_sources(tree)?;
    for (item, names) in &invariants {
        for name in names {
            if !test_fn_exists(name, &files) {
                report.fail(format!(
                    "{DOC}: invariant `{item}` names `{name}`, which is no test function"
                ));
            }
        }
    }
    ensure!(
        invariants.len() >= 10,
        "only {} invariants found",
        invariants.len()
    );
    Ok(())
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

pub(crate) fn only_the_listed_crates_touch_the_filesystem(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let listed = parse_fs_table(&tree.read(DOC)?).map_err(doc_err)?;
    // Crates whose shipped code names a filesystem API, each with one place.
    let mut touching = BTreeMap::new();
    for p in tree.packages()? {
        for (file, code) in shipped_files(&p.dir.join("src"))? {
            if let Some((line, pat)) = fs_use(&code) {
                touching
                    .entry(p.name.clone())
                    .or_insert(format!("{}:{line} (`{pat}`)", tree.relative(&file)));
            }
        }
    }
    for (name, place) in &touching {
        report.note(format!("{name} touches the filesystem: {place}"));
        if !listed.contains(name) {
            report.fail(format!(
                "{name} touches the filesystem ({place}) but has no row under `{FS_HEADING}` in {DOC}"
            ));
        }
    }
    for name in listed.iter().filter(|n| !touching.contains_key(*n)) {
        report.fail(format!(
            "{DOC} lists {name} under `{FS_HEADING}`, but its shipped code names no filesystem API"
        ));
    }
    // The pure crates are the control: they must not show up.
    ensure!(
        !touching.contains_key("dsh-instructions-render"),
        "the pure render crate counts as touching files: {touching:?}"
    );
    Ok(())
}

pub(crate) fn the_cli_grants_ambient_authority_once(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    // Each shipped front end grants it in one place: the CLI for its
    // commands, the hooks crate for an agent's event.
    for (krate, place) in [
        (
            "dsh-instructions-cli",
            "crates/dsh-instructions-cli/src/setup.rs:",
        ),
        (
            "dsh-instructions-hooks",
            "crates/dsh-instructions-hooks/src/handle.rs:",
        ),
    ] {
        let mut grants = Vec::new();
        for (file, code) in shipped_files(&tree.root().join("crates").join(krate).join("src"))? {
            for (n, line) in code.lines().enumerate() {
                if line.contains("ambient_authority()") {
                    grants.push(format!("{}:{}", tree.relative(&file), n + 1));
                }
            }
        }
        if grants.len() != 1 || !grants[0].starts_with(place) {
            report.fail(format!(
                "{krate} must grant ambient authority in one place, {place} ({DOC}); found: {grants:?}"
            ));
        }
    }
    Ok(())
}

pub(crate) fn yaml_is_parsed_only_by_the_harness_xtask_cli_and_state(
    tree: &Tree,
    report: &mut Report,
) -> Result<()> {
    let parsing: BTreeSet<String> = tree
        .packages()?
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
    for extra in parsing.iter().filter(|n| !allowed.contains(&n.as_str())) {
        report.fail(format!("the YAML parser is linked by {extra} ({DOC})"));
    }
    ensure!(
        parsing.contains("dsh-instructions-cli"),
        "the CLI is not seen parsing YAML: {parsing:?}"
    );
    Ok(())
}

/// Crates whose macros need unsafe code, each with the one module it is
/// allowed in and why. Such a crate denies unsafe code at its root and
/// allows it in that module only, and no file of the crate has an
/// `unsafe` written by hand (decision 0084).
pub(crate) const UNSAFE_EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "dsh-agent-instructions-node",
    "js",
    "napi-derive's #[napi] macros expand to unsafe FFI glue (decision 0084)",
)];

/// What is wrong with an excepted crate: `root` is its `lib.rs`, `files`
/// its sources as (path relative to `src/`, code without comments and
/// strings), `module` the one module allowed unsafe code.
fn unsafe_exception_problems(root: &str, files: &[(String, String)], module: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !root.contains("#![deny(unsafe_code)]") {
        out.push("lib.rs does not #![deny(unsafe_code)]".to_owned());
    }
    let allowed_in = [format!("{module}/mod.rs"), format!("{module}.rs")];
    let mut allowed = false;
    for (rel, code) in files {
        if code.contains("allow(unsafe_code)") {
            if allowed_in.contains(rel) {
                allowed = true;
            } else {
                out.push(format!(
                    "{rel} allows unsafe code outside the `{module}` module"
                ));
            }
        }
        let words = code.split(|c: char| !(c.is_alphanumeric() || c == '_'));
        if words.filter(|w| *w == "unsafe").count() > 0 {
            out.push(format!("{rel} has `unsafe` written by hand"));
        }
    }
    if !allowed {
        out.push(format!(
            "no #![allow(unsafe_code)] at the top of the `{module}` module"
        ));
    }
    out
}

pub(crate) fn every_crate_root_forbids_unsafe_code(tree: &Tree, report: &mut Report) -> Result<()> {
    let mut roots = Vec::new();
    for p in tree.packages()? {
        let src = p.dir.join("src");
        if let Some((_, module, why)) = UNSAFE_EXCEPTIONS.iter().find(|(n, ..)| *n == p.name) {
            let mut paths = Vec::new();
            rust_files(&src, &mut paths);
            let mut files = Vec::new();
            for f in &paths {
                let rel = f
                    .strip_prefix(&src)
                    .unwrap_or(f)
                    .to_string_lossy()
                    .into_owned();
                files.push((rel, code_only(&tree.read(f)?)));
            }
            let root = code_only(&tree.read(src.join("lib.rs"))?);
            for problem in unsafe_exception_problems(&root, &files, module) {
                report.fail(format!("{}: {problem}", p.name));
            }
            report.note(format!(
                "{} denies unsafe code, allowed in `{module}` only: {why}",
                p.name
            ));
            continue;
        }
        for f in ["lib.rs", "main.rs"] {
            if src.join(f).is_file() {
                roots.push(src.join(f));
            }
        }
        let mut bins = Vec::new();
        rust_files(&src.join("bin"), &mut bins);
        roots.extend(bins);
    }
    ensure!(roots.len() >= 12, "only {} crate roots found", roots.len());
    for f in &roots {
        if !code_only(&tree.read(f)?).contains("#![forbid(unsafe_code)]") {
            report.fail(format!(
                "no #![forbid(unsafe_code)] in {}",
                tree.relative(f)
            ));
        }
    }
    Ok(())
}

// The checks themselves, on inputs that break the rules.
#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::tidy::source::strip_test_items;

    #[test]
    fn an_unsafe_exception_allows_it_in_its_module_only_and_never_by_hand() {
        let f = |rel: &str, code: &str| (rel.to_owned(), code.to_owned());
        let good = [
            f("lib.rs", "mod js;"),
            f("js/mod.rs", "#![allow(unsafe_code)] mod a;"),
            f("js/a.rs", "fn x() {}"),
        ];
        assert!(unsafe_exception_problems("#![deny(unsafe_code)]", &good, "js").is_empty());
        let bad = [
            f("js/mod.rs", "#![allow(unsafe_code)]"),
            f("ops.rs", "#![allow(unsafe_code)]"),
            f("js/a.rs", "fn x() { unsafe { y() } }"),
        ];
        let problems = unsafe_exception_problems("#![forbid(unsafe_code)]", &bad, "js");
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("deny"));
        assert!(problems[1].contains("ops.rs allows unsafe code outside"));
        assert!(problems[2].contains("js/a.rs has `unsafe` written by hand"));
        let none = unsafe_exception_problems("#![deny(unsafe_code)]", &[f("js/mod.rs", "")], "js");
        assert_eq!(
            none,
            ["no #![allow(unsafe_code)] at the top of the `js` module"]
        );
    }

    /// Offending uses in one pure source file, and its test-only modules.
    fn impure_uses(src: &str) -> (Vec<(usize, String)>, Vec<String>) {
        let mut code = code_only(src);
        let test_files = strip_test_items(&mut code);
        (impure_code(&code), test_files)
    }

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
        let tree = Tree::workspace();
        let dirs = crate_dirs(&tree).expect("metadata");
        let doc = "`runtime/src/instance.rs` and `runtime/src/gone.rs` and `nosuch/src/x.rs`\n\
                   `runtime/src/instance/{front,nope}.rs` `xtask/src/tidy.rs`\n\
                   | `dsh-instructions-runtime` | `view.rs`, `instance/lane.rs`, `lost.rs` | x |\n";
        let missing = missing_doc_paths(&tree, doc, &dirs);
        assert_eq!(missing.len(), 4, "{missing:#?}");
        assert!(
            missing[0].ends_with("but crates/dsh-instructions-runtime/src/gone.rs does not exist"),
            "{missing:#?}"
        );
        assert!(missing[1].contains("no crate is called `nosuch`"));
        assert!(
            missing[2].ends_with(
                "but crates/dsh-instructions-runtime/src/instance/nope.rs does not exist"
            ),
            "{missing:#?}"
        );
        assert!(
            missing[3].contains("the row of dsh-instructions-runtime names `lost.rs`"),
            "{missing:#?}"
        );
    }

    #[test]
    fn brace_groups_expand_to_one_path_each() {
        assert_eq!(expand_braces("a/{b, c}.rs"), ["a/b.rs", "a/c.rs"]);
        assert_eq!(expand_braces("a/b.rs"), ["a/b.rs"]);
        assert_eq!(expand_braces("a}{.rs"), ["a}{.rs"]);
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

    #[test]
    fn an_invariant_without_an_existing_test_is_reported() {
        let doc = "## Architecture invariants\n- A holds. Checked by\n  `real_one`.\n- B holds.\n## Next\n";
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

    #[test]
    fn the_closure_walks_normal_dependencies_only() {
        let metadata = serde_json::json!({"packages": [
            {"name": "bin", "dependencies": [
                {"name": "lib", "kind": null},
                {"name": "harness", "kind": "dev"},
            ]},
            {"name": "lib", "dependencies": [{"name": "serde", "kind": null}]},
            {"name": "harness", "dependencies": []},
        ]});
        let linked = normal_closure(&metadata, "bin").expect("closure");
        assert_eq!(
            linked.into_iter().collect::<Vec<_>>(),
            ["bin", "lib", "serde"]
        );
        assert!(normal_closure(&metadata, "gone").is_err());
    }
}
