//! README examples built against their own crate alone (issue 31 item 6).
//!
//! A crate's README is its crate doc, so its Rust blocks already run as
//! doctests — but a doctest sees every dev-dependency, so an example that
//! quietly names a type from a sibling crate (`dsh_instructions_state::…`
//! in the runtime's README) passes there and fails for a product that
//! depends on the runtime alone. Here each block becomes a binary of a
//! scratch package whose only workspace dependency is the crate itself,
//! with the features its own doctests turn on, plus the registry crates the
//! block names by path (`tokio::`, `tempfile::`) at the versions the crate's
//! manifest asks for.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::members::{Member, cargo_bin};

/// The Rust blocks of a Markdown text that rustdoc would compile: fenced
/// blocks with no info string, `rust`, or only rustdoc's own attributes;
/// `ignore` and `compile_fail` blocks are not built (rustdoc builds neither
/// into a program).
pub(crate) fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<(bool, String)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((compiled(info.trim()), String::new()));
                }
            }
            Some((keep, body)) => {
                if trimmed.starts_with("```") {
                    if *keep {
                        blocks.push(std::mem::take(body));
                    }
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    blocks
}

/// Whether rustdoc compiles a block with this info string into a program.
fn compiled(info: &str) -> bool {
    const RUSTDOC: &[&str] = &[
        "rust",
        "no_run",
        "should_panic",
        "edition2018",
        "edition2021",
        "edition2024",
    ];
    let tokens: Vec<&str> = info
        .split([',', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    tokens.iter().all(|t| RUSTDOC.contains(t))
}

/// The program rustdoc makes of a block: hidden lines (`# …`) shown, and,
/// without a `fn main`, the body wrapped in one — returning a `Result` when
/// the block ends in `Ok::<…>(())`, as rustdoc does.
pub(crate) fn program(block: &str) -> String {
    let mut body = String::new();
    for line in block.lines() {
        let trimmed = line.trim_start();
        let shown = if trimmed == "#" {
            ""
        } else if let Some(rest) = trimmed.strip_prefix("# ") {
            rest
        } else if let Some(rest) = trimmed.strip_prefix("##") {
            // `##` escapes a line that really starts with `#`.
            &trimmed[trimmed.len() - rest.len() - 1..]
        } else {
            line
        };
        body.push_str(shown);
        body.push('\n');
    }
    if body.contains("fn main") {
        return body;
    }
    let ends_in_ok = body
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("Ok::<"));
    if ends_in_ok {
        format!(
            "fn main() {{\n    fn inner() -> Result<(), impl core::fmt::Debug> {{\n{body}    }}\n    inner().unwrap();\n}}\n"
        )
    } else {
        format!("fn main() {{\n{body}}}\n")
    }
}

/// A registry dependency of a member, as `cargo metadata` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dep {
    pub(crate) name: String,
    pub(crate) req: String,
    pub(crate) features: Vec<String>,
}

/// The registry crates (normal or dev dependencies of `package`, a
/// `cargo metadata` package object) and the features the crate's own
/// doctests give itself (a dev-dependency on itself), for one member.
pub(crate) fn deps_of(package: &Value) -> (Vec<Dep>, Vec<String>) {
    let name = package["name"].as_str().unwrap_or_default();
    let mut registry = Vec::new();
    let mut own = Vec::new();
    for d in package["dependencies"].as_array().into_iter().flatten() {
        let dep_name = d["name"].as_str().unwrap_or_default().to_owned();
        let features: Vec<String> = d["features"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        if dep_name == name {
            own.extend(features);
        } else if d["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("registry+"))
        {
            // A crate listed as both a normal and a dev dependency is one
            // dependency of the example, with the features of both.
            match registry.iter_mut().find(|r: &&mut Dep| r.name == dep_name) {
                Some(known) => {
                    for f in features {
                        if !known.features.contains(&f) {
                            known.features.push(f);
                        }
                    }
                }
                None => registry.push(Dep {
                    name: dep_name,
                    req: d["req"].as_str().unwrap_or("*").to_owned(),
                    features,
                }),
            }
        }
    }
    (registry, own)
}

/// What is wrong with an example before anything is built: every name of
/// another workspace crate it uses (`members` as Rust identifiers).
pub(crate) fn foreign_crates(program: &str, own: &str, members: &[String]) -> Vec<String> {
    members
        .iter()
        .map(|m| m.replace('-', "_"))
        .filter(|m| m != &own.replace('-', "_"))
        .filter(|m| mentions(program, m))
        .collect()
}

/// Whether `code` names the crate `ident` as a path (`ident::`), not as a
/// part of a longer identifier.
fn mentions(code: &str, ident: &str) -> bool {
    code.match_indices(&format!("{ident}::")).any(|(at, _)| {
        code[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// The manifest of the scratch package for `member`'s examples.
pub(crate) fn manifest(
    member: &Member,
    own_features: &[String],
    deps: &[Dep],
    programs: &[String],
) -> String {
    let mut toml = format!(
        "[package]\nname = \"readme-{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n",
        member.name
    );
    let quoted = |fs: &[String]| {
        fs.iter()
            .map(|f| format!("{f:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        toml,
        "{} = {{ path = {:?}, features = [{}] }}",
        member.name,
        member.dir.display().to_string(),
        quoted(own_features)
    );
    // `deps_of` lists each registry crate once, so no set is needed.
    let named = deps.iter().filter(|d| {
        programs
            .iter()
            .any(|p| mentions(p, &d.name.replace('-', "_")))
    });
    for d in named {
        let _ = writeln!(
            toml,
            "{} = {{ version = {:?}, features = [{}] }}",
            d.name,
            d.req,
            quoted(&d.features)
        );
    }
    for i in 0..programs.len() {
        let _ = write!(
            toml,
            "\n[[bin]]\nname = \"{}-example-{}\"\npath = \"example{}.rs\"\n",
            member.name,
            i + 1,
            i + 1
        );
    }
    toml
}

/// Builds every publishable crate's README examples against that crate
/// alone; returns the problems (an empty list is a pass).
pub(crate) fn check(
    root: &Path,
    target: &Path,
    members: &[Member],
    full_metadata: &Value,
) -> Result<Vec<String>> {
    let scratch = target.join("readme-examples");
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let names: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
    let mut problems = Vec::new();
    let mut packages: Vec<(String, PathBuf)> = Vec::new();
    for m in members.iter().filter(|m| !m.private) {
        let readme = std::fs::read_to_string(m.dir.join("README.md")).unwrap_or_default();
        let programs: Vec<String> = rust_blocks(&readme).iter().map(|b| program(b)).collect();
        if programs.is_empty() {
            continue;
        }
        let mut clean = true;
        for (i, p) in programs.iter().enumerate() {
            for other in foreign_crates(p, &m.name, &names) {
                clean = false;
                problems.push(format!(
                    "{}: README example {} names `{other}`: a product depending on {} alone cannot build it",
                    m.name,
                    i + 1,
                    m.name
                ));
            }
        }
        if !clean {
            continue;
        }
        let package = full_metadata["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"].as_str() == Some(m.name.as_str()))
            .with_context(|| format!("cargo metadata: no package {}", m.name))?;
        let (deps, own) = deps_of(package);
        let dir = scratch.join(&m.name);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("Cargo.toml"), manifest(m, &own, &deps, &programs))?;
        for (i, p) in programs.iter().enumerate() {
            std::fs::write(dir.join(format!("example{}.rs", i + 1)), p)?;
        }
        packages.push((format!("readme-{}", m.name), dir));
    }
    if packages.is_empty() {
        return Ok(problems);
    }
    let mut workspace = String::from("[workspace]\nresolver = \"3\"\nmembers = [\n");
    for (_, dir) in &packages {
        let _ = writeln!(
            workspace,
            "    {:?},",
            dir.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    workspace.push_str("]\n");
    std::fs::write(scratch.join("Cargo.toml"), workspace)?;
    // The workspace's lock: the same versions the crates were tested with,
    // and nothing fetched that the workspace did not already resolve.
    std::fs::copy(root.join("Cargo.lock"), scratch.join("Cargo.lock"))
        .context("cannot copy Cargo.lock")?;
    for (package, _) in &packages {
        // One package per build: features of one crate's examples must not
        // unify into another's.
        let status = Command::new(cargo_bin())
            .args(["build", "--quiet", "--bins", "-p", package])
            .env("CARGO_TARGET_DIR", target.join("readme-examples-target"))
            // Built to prove they compile, never run under a debugger: debug
            // info would only fill the disk (a second full dependency build).
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .env("CARGO_INCREMENTAL", "0")
            .current_dir(&scratch)
            .status()
            .context("cannot run cargo build for the README examples")?;
        if !status.success() {
            problems.push(format!(
                "{}: a README example does not build against that crate alone (see the errors above)",
                package.trim_start_matches("readme-")
            ));
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::rust("```rust\nlet a = 1;\n```\n", 1)]
    #[case::unlabeled("```\nlet a = 1;\n```\n", 1)]
    #[case::no_run("```rust,no_run\nloop {}\n```\n", 1)]
    #[case::ignore("```rust,ignore\nnot rust\n```\n", 0)]
    #[case::compile_fail("```compile_fail\nlet x: u8 = 300;\n```\n", 0)]
    #[case::shell("```sh\ncargo run\n```\n", 0)]
    #[case::text("```text\nplain\n```\n", 0)]
    fn which_blocks_are_built(#[case] md: &str, #[case] count: usize) {
        assert_eq!(rust_blocks(md).len(), count, "{md}");
    }

    #[test]
    fn a_block_after_a_shell_block_keeps_its_own_text() {
        let md = "intro\n```sh\necho hi\n```\ntext\n```rust\nlet b = 2;\n```\n";
        assert_eq!(rust_blocks(md), ["let b = 2;\n"]);
    }

    #[test]
    fn hidden_lines_are_shown_and_a_result_block_returns_its_error() {
        let p = program("# let x = 1;\nlet y = x + 1;\n# Ok::<(), std::io::Error>(())\n");
        assert!(
            p.contains("\nlet x = 1;\nlet y = x + 1;\nOk::<(), std::io::Error>(())\n"),
            "{p}"
        );
        assert!(
            p.contains("fn inner() -> Result<(), impl core::fmt::Debug>"),
            "{p}"
        );
        assert!(p.contains("inner().unwrap();"), "{p}");
    }

    #[test]
    fn a_block_without_a_result_gets_a_plain_main_and_one_with_main_is_kept() {
        assert_eq!(program("let a = 1;\n"), "fn main() {\nlet a = 1;\n}\n");
        assert_eq!(program("fn main() {}\n"), "fn main() {}\n");
    }

    #[test]
    fn naming_a_sibling_crate_is_a_problem_and_the_own_crate_is_not() {
        let members = [
            "dsh-instructions-runtime".to_owned(),
            "dsh-instructions-state".to_owned(),
        ];
        let code = "use dsh_instructions_runtime::state::Config;\nlet p = dsh_instructions_state::Preset::Dsh;\n";
        assert_eq!(
            foreign_crates(code, "dsh-instructions-runtime", &members),
            ["dsh_instructions_state"]
        );
        // A longer identifier that ends in a crate's name is not a use of it.
        let code = "let my_dsh_instructions_state::x;";
        assert!(foreign_crates(code, "dsh-instructions-runtime", &members).is_empty());
    }

    #[test]
    fn the_manifest_names_the_crate_with_its_doctest_features_and_only_the_named_registry_crates() {
        let member = Member {
            name: "lib".into(),
            version: "0.1.0".into(),
            private: false,
            dir: PathBuf::from("/w/crates/lib"),
        };
        let deps = [
            Dep {
                name: "tokio".into(),
                req: "^1.54".into(),
                features: vec!["rt".into()],
            },
            Dep {
                name: "serde_json".into(),
                req: "^1".into(),
                features: vec![],
            },
        ];
        let toml = manifest(
            &member,
            &["test-support".into()],
            &deps,
            &["tokio::spawn(x);".into()],
        );
        assert!(
            toml.contains("lib = { path = \"/w/crates/lib\", features = [\"test-support\"] }"),
            "{toml}"
        );
        assert!(
            toml.contains("tokio = { version = \"^1.54\", features = [\"rt\"] }"),
            "{toml}"
        );
        assert!(!toml.contains("serde_json"), "{toml}");
        assert!(
            toml.contains("[[bin]]\nname = \"lib-example-1\"\npath = \"example1.rs\""),
            "{toml}"
        );
    }

    #[test]
    fn dependencies_come_from_metadata_with_the_crates_own_features() {
        let pkg = serde_json::json!({
            "name": "lib",
            "dependencies": [
                {"name": "lib", "source": null, "req": "*", "features": ["test-support"], "kind": "dev"},
                {"name": "tokio", "source": "registry+https://github.com/rust-lang/crates.io-index", "req": "^1", "features": ["rt"], "kind": null},
                {"name": "dsh-home-paths", "source": null, "req": "^0.1.0", "features": [], "kind": null},
                {"name": "tokio", "source": "registry+https://github.com/rust-lang/crates.io-index", "req": "^1", "features": ["rt", "test-util"], "kind": "dev"}
            ]
        });
        let (deps, own) = deps_of(&pkg);
        assert_eq!(own, ["test-support"]);
        let features = vec!["rt".to_owned(), "test-util".to_owned()];
        assert_eq!(
            deps,
            [Dep {
                name: "tokio".into(),
                req: "^1".into(),
                features
            }]
        );
    }
}
