//! Architecture tidy checks: `docs/architecture.md` is true of the code.
//!
//! * Every crate's internal dependencies (normal, dev, build, per target)
//!   are allowed by the doc's "Dependency rules" table.
//! * Crates the table marks `pure` (render, state) use no filesystem,
//!   environment, clock, network, process, thread or async runtime in their
//!   non-test sources, and list no I/O crate as a dependency.
//! * Every `<crate>/src/….rs` file the doc names exists.
//!
//! It lives in the conformance crate because that crate is a default member
//! (xtask is not), so `cargo test --workspace` runs it. Parsing is by hand:
//! the formats it reads are small and fixed, and the checks must not need a
//! TOML or Rust parser to be trusted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What one row of the dependency table allows.
#[derive(Debug, Default, PartialEq, Eq)]
struct Rule {
    allowed: BTreeSet<String>,
    pure: bool,
}

const RULES_HEADING: &str = "## Dependency rules";

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

/// The dependency table under [`RULES_HEADING`]: `| crate | may depend on |
/// pure |`, crate names in backticks, `—` for none.
fn parse_rules(doc: &str) -> Result<BTreeMap<String, Rule>, String> {
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(RULES_HEADING));
    if lines.next().is_none() {
        return Err(format!("no `{RULES_HEADING}` section"));
    }
    let mut rules = BTreeMap::new();
    for line in lines.take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        // `| a | b | c |` splits into ["", a, b, c, ""].
        let [_, name, deps, pure, _] = cells[..] else {
            continue;
        };
        let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) else {
            continue; // the header and separator rows
        };
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

/// A manifest's package name and dependencies as `(section, name)`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Manifest {
    name: String,
    deps: Vec<(String, String)>,
}

fn is_dependency_table(section: &str) -> bool {
    let last = section.rsplit('.').next().unwrap_or(section);
    matches!(
        last,
        "dependencies" | "dev-dependencies" | "build-dependencies"
    )
}

fn parse_manifest(text: &str) -> Manifest {
    let mut m = Manifest::default();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = header.trim().to_owned();
            // `[dependencies.foo]` names one dependency.
            if let Some((table, dep)) = section.rsplit_once('.')
                && is_dependency_table(table)
            {
                m.deps.push((table.to_owned(), dep.to_owned()));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if section == "package" && key == "name" {
            m.name = value.trim().trim_matches('"').to_owned();
        } else if is_dependency_table(&section) {
            // `foo.workspace = true`, `foo = "1"`, `foo = { package = "bar" }`.
            let dep = key.split('.').next().unwrap_or(key).trim();
            let renamed = value
                .split_once("package")
                .and_then(|(_, rest)| rest.split('"').nth(1));
            m.deps
                .push((section.clone(), renamed.unwrap_or(dep).to_owned()));
        }
    }
    m
}

/// Violations of one manifest against the rules, one line each.
fn check_manifest(path: &str, m: &Manifest, rules: &BTreeMap<String, Rule>) -> Vec<String> {
    let Some(rule) = rules.get(&m.name) else {
        return vec![format!(
            "{} ({path}) has no row in the docs/architecture.md dependency table",
            m.name
        )];
    };
    let mut out = Vec::new();
    for (section, dep) in &m.deps {
        let internal = dep.starts_with("dsh-") || rules.contains_key(dep);
        if internal && !rule.allowed.contains(dep) {
            out.push(format!(
                "{} ({path}) depends on {dep} in [{section}], which docs/architecture.md does not allow (allowed: {})",
                m.name,
                list(&rule.allowed)
            ));
        }
        if rule.pure && section == "dependencies" && IO_CRATES.contains(&dep.as_str()) {
            out.push(format!(
                "{} ({path}) is pure but depends on the I/O crate {dep}",
                m.name
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

fn blank(out: &mut String, c: char) {
    out.push(if c == '\n' { '\n' } else { ' ' });
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with comments and the contents of string and character
/// literals replaced by spaces, newlines kept (so line numbers still hold).
fn code_only(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        let prev_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && !prev_ident && (at(i + 1) == '"' || at(i + 1) == '#') {
            let mut j = i + 1;
            while at(j) == '#' {
                j += 1;
            }
            if at(j) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            for &k in &chars[i..=j] {
                blank(&mut out, k);
            }
            i = j + 1;
            while i < chars.len() {
                let closes = chars[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#');
                if closes {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal (a lifetime has no closing quote).
            out.push(' ');
            i += 1;
            if at(i) == '\\' {
                out.push(' ');
                i += 1;
            }
            while i < chars.len() && chars[i] != '\'' {
                blank(&mut out, chars[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Blanks every `#[cfg(test)]` item of code from [`code_only`]; returns the
/// names of test modules declared without a body (`mod tests;`).
fn strip_test_items(code: &mut String) -> Vec<String> {
    const ATTR: &str = "#[cfg(test)]";
    let mut files = Vec::new();
    while let Some(start) = code.find(ATTR) {
        let bytes = code.as_bytes();
        let mut end = start + ATTR.len();
        let mut depth = 0usize;
        let mut header = String::new();
        while end < bytes.len() {
            let b = bytes[end];
            end += 1;
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ if depth == 0 => header.push(b as char),
                _ => {}
            }
        }
        let words: Vec<&str> = header.split_whitespace().collect();
        if let [.., "mod", name] = words[..]
            && code.as_bytes()[end - 1] == b';'
        {
            files.push(name.to_owned());
        }
        let blanked: String = code[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(start..end, &blanked);
    }
    files
}

/// Offending uses in one pure source file, as `(line, what)`.
fn impure_uses(src: &str) -> (Vec<(usize, String)>, Vec<String>) {
    let mut code = code_only(src);
    let test_files = strip_test_items(&mut code);
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
    (found, test_files)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Violations of a pure crate's sources, one line each naming file and line.
fn check_pure_sources(root: &Path, crate_dir: &Path, name: &str) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&crate_dir.join("src"), &mut files);
    let mut results = Vec::new();
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    for file in &files {
        let (found, tests) = impure_uses(&read(file));
        let dir = match file.file_stem().and_then(|s| s.to_str()) {
            Some("lib" | "main" | "mod") => file.parent().map(Path::to_owned),
            _ => file.with_extension("").into(),
        };
        if let Some(dir) = dir {
            for t in tests {
                test_files.insert(dir.join(format!("{t}.rs")));
                test_files.insert(dir.join(&t).join("mod.rs"));
            }
        }
        results.push((file.clone(), found));
    }
    let mut out = Vec::new();
    for (file, found) in results {
        if test_files.contains(&file) {
            continue;
        }
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (line, what) in found {
            out.push(format!(
                "{shown}:{line}: `{what}` in {name}, which docs/architecture.md marks pure"
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
    let root = workspace_root();
    let rules = rules(&root);
    let mut manifests: Vec<PathBuf> = crate_dirs(&root)
        .iter()
        .map(|d| d.join("Cargo.toml"))
        .collect();
    manifests.push(root.join("xtask/Cargo.toml"));
    let mut problems = Vec::new();
    for path in manifests.iter().filter(|p| p.is_file()) {
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        problems.extend(check_manifest(&shown, &parse_manifest(&read(path)), &rules));
    }
    assert_none(problems);
}

#[test]
fn pure_crates_touch_no_io_clock_or_runtime() {
    let root = workspace_root();
    let rules = rules(&root);
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for dir in crate_dirs(&root) {
        let m = parse_manifest(&read(&dir.join("Cargo.toml")));
        if rules.get(&m.name).is_some_and(|r| r.pure) {
            problems.extend(check_pure_sources(&root, &dir, &m.name));
            checked.push(m.name);
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
    let manifest = "[package]\nname = \"dsh-low\"\n\n[dependencies]\nserde.workspace = true\ntokio = { workspace = true }  # comment\n\n[dev-dependencies]\nalias = { package = \"dsh-high\", path = \"x\" }\n\n[target.'cfg(unix)'.build-dependencies.dsh-other]\npath = \"y\"\n";
    let m = parse_manifest(manifest);
    assert_eq!(m.name, "dsh-low");
    let problems = check_manifest("crates/low/Cargo.toml", &m, &rules);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("is pure but depends on the I/O crate tokio"));
    assert!(
        problems[1].starts_with(
            "dsh-low (crates/low/Cargo.toml) depends on dsh-high in [dev-dependencies]"
        )
    );
    assert!(
        problems[2].contains("depends on dsh-other in [target.'cfg(unix)'.build-dependencies]")
    );
    let unknown = parse_manifest("[package]\nname = \"dsh-new\"\n");
    assert!(check_manifest("p", &unknown, &rules)[0].contains("has no row"));
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
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let linked = normal_closure(&metadata, "dsh-instructions-cli").expect("closure");
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
    let xtask = normal_closure(&metadata, "xtask").expect("closure");
    assert!(xtask.contains("dsh-instructions-conformance"));
}
