//! `cargo xtask package`: `cargo package` (with its verify build) for every
//! publishable crate, in one invocation so cargo orders them by dependency
//! and resolves the not-yet-published internal ones from a local overlay
//! registry. Nothing is uploaded (decision 0033).
//!
//! After cargo, the produced `.crate` files are checked: one per publishable
//! crate, none for a private one, and each holds its `README.md` (the crate
//! doc includes it, so a crate without it would not even build from the
//! registry) and nothing but sources, README, licence and manifest
//! ([`stray_files`]). Last, every README example is built against its
//! own crate alone (`readme_examples.rs`): a product that depends on one
//! crate can compile what that crate's README shows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};

pub(crate) use crate::members::{Member, cargo_bin, members, metadata};

/// What is wrong with the `.crate` files found after packaging: `found` is
/// the file names in `target/package`, `contents` lists the paths inside
/// one `.crate` (by file name). An empty result means the set is right.
pub(crate) fn check_crates(
    members: &[Member],
    found: &BTreeSet<String>,
    contents: &dyn Fn(&str) -> Result<Vec<String>>,
) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    if !members.iter().any(|m| !m.private) {
        // Nothing to package is not a pass (issue 34 item 3).
        problems.push("no publishable crate: nothing was packaged or verified".to_owned());
    }
    for m in members {
        let file = m.crate_file();
        match (m.private, found.contains(&file)) {
            (true, true) => problems.push(format!("{file}: private crate was packaged")),
            (false, false) => problems.push(format!("{file}: publishable crate not packaged")),
            (false, true) => {
                let paths = contents(&file)?;
                let readme = format!("{}-{}/README.md", m.name, m.version);
                if !paths.iter().any(|p| p == &readme) {
                    problems.push(format!("{file}: has no README.md"));
                }
                for stray in stray_files(&format!("{}-{}/", m.name, m.version), &paths) {
                    problems.push(format!(
                        "{file}: `{stray}` is not source, README, licence or manifest"
                    ));
                }
            }
            (true, false) => {}
        }
    }
    let known: BTreeSet<String> = members.iter().map(Member::crate_file).collect();
    for f in found.difference(&known) {
        problems.push(format!("{f}: not a crate of this workspace"));
    }
    Ok(problems)
}

/// The paths inside one `.crate` (each under `prefix`, `<name>-<version>/`)
/// that have no business in a published crate: anything but the sources
/// (`src/**/*.rs`, `build.rs`, and everything under `tests/`, `benches/`,
/// `examples/`: their `.rs` files and fixtures), the README, a licence file
/// and the manifest files cargo writes (`Cargo.toml`, `Cargo.toml.orig`,
/// `Cargo.lock`, `.cargo_vcs_info.json`). Catches editor and merge leftovers
/// (`README.md.orig`) and stray data before they ship.
pub(crate) fn stray_files<'a>(prefix: &str, paths: &'a [String]) -> Vec<&'a str> {
    let allowed = |rel: &str| match rel.split_once('/') {
        None => {
            matches!(
                rel,
                "Cargo.toml" | "Cargo.toml.orig" | "Cargo.lock" | ".cargo_vcs_info.json"
            ) || rel == "README.md"
                || rel == "build.rs"
                || ["LICENSE", "LICENCE", "COPYING"]
                    .iter()
                    .any(|l| rel.starts_with(l))
        }
        Some(("src", rest)) => rest.ends_with(".rs"),
        Some(("tests" | "benches" | "examples", rest)) => !rest.is_empty(),
        Some(_) => false,
    };
    paths
        .iter()
        .map(String::as_str)
        // A tar lists directories too (`name-1.0.0/src/`); only files count.
        .filter(|p| !p.ends_with('/'))
        .filter(|p| !p.strip_prefix(prefix).is_some_and(allowed))
        .collect()
}

/// The unpacked copies of this workspace's crates that cargo would reuse
/// in the verify builds: under `<cargo home>/registry/src`, every source
/// directory of a path-based registry (cargo's temporary overlay registry
/// is one; crates.io's directories start with `index.`), the
/// `<name>-<version>` of a member.
///
/// Why: cargo unpacks each crate of its overlay registry into a directory
/// keyed by the registry's path and reuses an existing one of the same
/// name and version without comparing it with the new `.crate`. A second
/// run from the same target directory after a source change (same version,
/// unpublished) would verify the old copy: a new method looked missing.
pub(crate) fn stale_unpacked(
    registry_src: &Path,
    members: &[Member],
    dirs: &dyn Fn(&Path) -> Vec<PathBuf>,
) -> Vec<PathBuf> {
    let mut stale = Vec::new();
    for source in dirs(registry_src) {
        let overlay = source
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| !n.starts_with("index."));
        if !overlay {
            continue;
        }
        for m in members {
            let unpacked = source.join(format!("{}-{}", m.name, m.version));
            if dirs(&source).contains(&unpacked) {
                stale.push(unpacked);
            }
        }
    }
    stale
}

/// The verify builds' compiled copies of this workspace's crates in
/// `<target>/debug`: cargo treats a registry crate as immutable, so after a
/// source change (same, unpublished version) it would link the old build.
/// Matches `deps/lib<name>-<hash>.*`, `deps/<name>-<hash>.d` and
/// `.fingerprint/<name>-<hash>` (names with `-` or `_`, a 16-digit hex
/// hash); the path builds of the same crates go too and are rebuilt by
/// the next `cargo build`, as any source change rebuilds them.
pub(crate) fn stale_verify_builds(
    debug: &Path,
    members: &[Member],
    entries: &[PathBuf],
) -> Vec<PathBuf> {
    let hashed = |file: &str, stem: &str| {
        file.strip_prefix(stem)
            .and_then(|rest| rest.strip_prefix('-'))
            .map(|rest| rest.split('.').next().unwrap_or(rest))
            .is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    entries
        .iter()
        .filter(|path| {
            let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
                return false;
            };
            let in_deps = path.parent() == Some(&debug.join("deps"));
            let in_fingerprints = path.parent() == Some(&debug.join(".fingerprint"));
            members.iter().any(|m| {
                let underscored = m.name.replace('-', "_");
                (in_deps
                    && (hashed(file, &format!("lib{underscored}")) || hashed(file, &underscored)))
                    || (in_fingerprints && hashed(file, &m.name))
            })
        })
        .cloned()
        .collect()
}

/// Cargo's home: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// The subdirectories of `dir` (none when it cannot be read).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// The paths inside a `.crate` (a gzipped tar), through the system `tar`.
fn tar_list(path: &Path) -> Result<Vec<String>> {
    let out = Command::new("tar")
        .arg("-tzf")
        .arg(path)
        .output()
        .with_context(|| format!("cannot run tar on {}", path.display()))?;
    ensure!(
        out.status.success(),
        "tar -tzf {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    if let Some(a) = args.first() {
        bail!("`package` takes no arguments, got `{a}`");
    }
    let meta = metadata(root)?;
    let members = members(&meta)?;
    let target = PathBuf::from(
        meta["target_directory"]
            .as_str()
            .context("cargo metadata: no target_directory")?,
    );
    // Before the slow part: nothing to package, or an API snapshot of a
    // crate that is gone, fails the run (issue 34 item 3).
    let early: Vec<String> = check_crates(&members, &BTreeSet::new(), &|_| Ok(Vec::new()))?
        .into_iter()
        .filter(|p| p.starts_with("no publishable crate"))
        .chain(crate::api::orphan_snapshots(
            &crate::api::library_crates(members.clone())
                .into_iter()
                .map(|m| m.name)
                .collect::<Vec<_>>(),
            &crate::api::snapshot_files(root)?,
        ))
        .collect();
    if !early.is_empty() {
        for p in &early {
            eprintln!("xtask package: {p}");
        }
        return Ok(ExitCode::FAILURE);
    }
    let out_dir = target.join("package");
    // Stale .crate files from an earlier run would hide a crate that is no
    // longer packaged; everything else there (the verify builds) is kept so
    // a second run is incremental.
    if let Ok(entries) = std::fs::read_dir(&out_dir) {
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "crate") {
                std::fs::remove_file(e.path())
                    .with_context(|| format!("cannot remove {}", e.path().display()))?;
            }
        }
    }

    if let Some(home) = cargo_home() {
        for stale in stale_unpacked(&home.join("registry/src"), &members, &subdirs) {
            std::fs::remove_dir_all(&stale)
                .with_context(|| format!("cannot remove {}", stale.display()))?;
        }
    }
    let debug = target.join("debug");
    let entries: Vec<PathBuf> = [debug.join("deps"), debug.join(".fingerprint")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.path())
        .collect();
    for stale in stale_verify_builds(&debug, &members, &entries) {
        let removed = if stale.is_dir() {
            std::fs::remove_dir_all(&stale)
        } else {
            std::fs::remove_file(&stale)
        };
        removed.with_context(|| format!("cannot remove {}", stale.display()))?;
    }

    let mut cmd = Command::new(cargo_bin());
    // --allow-dirty: this is a check of the working tree (CI's is clean);
    // nothing is uploaded, so there is no published state to keep honest.
    cmd.args(["package", "--allow-dirty", "--locked"]);
    // The verify builds only have to compile: without debug info they take
    // a fraction of the disk (CI ran out of it with full debug info).
    cmd.env("CARGO_PROFILE_DEV_DEBUG", "false");
    for m in members.iter().filter(|m| !m.private) {
        cmd.args(["-p", &m.name]);
    }
    cmd.current_dir(root);
    println!(
        "== cargo package (verify build) of {} crates",
        members.iter().filter(|m| !m.private).count()
    );
    let start = Instant::now();
    let status = cmd.status().context("cannot run cargo package")?;
    if !status.success() {
        eprintln!("xtask package: cargo package failed");
        return Ok(ExitCode::FAILURE);
    }

    let found: BTreeSet<String> = std::fs::read_dir(&out_dir)
        .with_context(|| format!("cannot read {}", out_dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".crate"))
        .collect();
    let mut problems = check_crates(&members, &found, &|f| tar_list(&out_dir.join(f)))?;
    // Issue 31 item 6: each README example builds against its crate alone.
    println!("== README examples, each built against its own crate alone");
    problems.extend(crate::readme_examples::check(
        root, &target, &members, &meta,
    )?);
    for p in &problems {
        eprintln!("xtask package: {p}");
    }
    println!(
        "package: {} crates packaged and verified in {:.0}s{}",
        found.len(),
        start.elapsed().as_secs_f64(),
        if problems.is_empty() {
            String::new()
        } else {
            format!(", {} problems", problems.len())
        }
    );
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::Value;

    /// Only the members' unpacked copies in path-based registries go; the
    /// crates.io sources and other crates stay.
    #[test]
    fn stale_unpacked_copies_are_the_members_in_overlay_registries() {
        let src = Path::new("/home/.cargo/registry/src");
        let tree = |dir: &Path| -> Vec<PathBuf> {
            let names: &[&str] = match dir.to_str() {
                Some("/home/.cargo/registry/src") => &["index.crates.io-1949cf8c", "-14cd1cce"],
                Some("/home/.cargo/registry/src/index.crates.io-1949cf8c") => {
                    &["a-0.1.0", "serde-1.0.0"]
                }
                Some("/home/.cargo/registry/src/-14cd1cce") => &["a-0.1.0", "b-0.2.0", "x-0.1.0"],
                _ => &[],
            };
            names.iter().map(|n| dir.join(n)).collect()
        };
        let members = [member("a", false), member("b", true)];
        assert_eq!(
            stale_unpacked(src, &members, &tree),
            vec![src.join("-14cd1cce/a-0.1.0")],
            "b is at 0.1.0 in the workspace, 0.2.0 unpacked: not the same copy"
        );
    }

    #[test]
    fn stale_verify_builds_are_the_members_hashed_artifacts() {
        let debug = Path::new("/t/debug");
        let entries: Vec<PathBuf> = [
            "deps/libdsh_a-0123456789abcdef.rlib",
            "deps/libdsh_a-0123456789abcdef.rmeta",
            "deps/dsh_a-0123456789abcdef.d",
            "deps/libdsh_a_b-0123456789abcdef.rlib",
            "deps/libserde-0123456789abcdef.rlib",
            "deps/libdsh_a-notahash.rlib",
            ".fingerprint/dsh-a-0123456789abcdef",
            ".fingerprint/serde-0123456789abcdef",
            "build/dsh-a-0123456789abcdef",
        ]
        .iter()
        .map(|p| debug.join(p))
        .collect();
        let got = stale_verify_builds(debug, &[member("dsh-a", false)], &entries);
        let want: Vec<PathBuf> = [
            "deps/libdsh_a-0123456789abcdef.rlib",
            "deps/libdsh_a-0123456789abcdef.rmeta",
            "deps/dsh_a-0123456789abcdef.d",
            ".fingerprint/dsh-a-0123456789abcdef",
        ]
        .iter()
        .map(|p| debug.join(p))
        .collect();
        assert_eq!(got, want, "dsh-a-b's and serde's artifacts stay");
    }

    fn member(name: &str, private: bool) -> Member {
        Member {
            name: name.to_owned(),
            version: "0.1.0".to_owned(),
            private,
            dir: PathBuf::new(),
        }
    }

    #[rstest]
    #[case::null_is_public(serde_json::json!(null), false)]
    #[case::empty_list_is_private(serde_json::json!([]), true)]
    #[case::named_registry_is_public(serde_json::json!(["crates-io"]), false)]
    fn publish_field(#[case] publish: Value, #[case] private: bool) {
        let meta = serde_json::json!({ "packages": [{
            "name": "a", "version": "1.2.3", "publish": publish,
            "manifest_path": "/w/crates/a/Cargo.toml"
        }]});
        let m = members(&meta).unwrap();
        assert_eq!(m[0].private, private);
        assert_eq!(m[0].crate_file(), "a-1.2.3.crate");
        assert_eq!(m[0].dir, Path::new("/w/crates/a"));
    }

    fn with_readme(file: &str) -> Result<Vec<String>> {
        let stem = file.trim_end_matches(".crate");
        Ok(vec![
            format!("{stem}/Cargo.toml"),
            format!("{stem}/README.md"),
        ])
    }

    #[rstest]
    #[case::all_right(&["lib-0.1.0.crate"], &[])]
    #[case::missing(&[], &["lib-0.1.0.crate: publishable crate not packaged"])]
    #[case::private_packaged(
        &["lib-0.1.0.crate", "conf-0.1.0.crate"],
        &["conf-0.1.0.crate: private crate was packaged"]
    )]
    #[case::stranger(
        &["lib-0.1.0.crate", "other-9.0.0.crate"],
        &["other-9.0.0.crate: not a crate of this workspace"]
    )]
    fn crate_set(#[case] found: &[&str], #[case] want: &[&str]) {
        let members = [member("lib", false), member("conf", true)];
        let found = found.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(check_crates(&members, &found, &with_readme).unwrap(), want);
    }

    /// Zero crates packaged because there was nothing to package is a
    /// failure, not an empty list of problems (issue 34 item 3).
    #[rstest]
    #[case::no_members(&[])]
    #[case::only_private(&[member("conf", true)])]
    fn nothing_to_package_is_a_problem(#[case] members: &[Member]) {
        let problems = check_crates(members, &BTreeSet::new(), &with_readme).unwrap();
        assert_eq!(
            problems,
            ["no publishable crate: nothing was packaged or verified"]
        );
    }

    #[test]
    fn a_crate_without_its_readme_is_a_problem() {
        let members = [member("lib", false)];
        let found = ["lib-0.1.0.crate".to_owned()].into();
        // A README elsewhere in the archive does not count.
        let contents = |_: &str| {
            Ok(vec![
                "lib-0.1.0/Cargo.toml".into(),
                "lib-0.1.0/docs/README.md".into(),
            ])
        };
        assert_eq!(
            check_crates(&members, &found, &contents).unwrap(),
            [
                "lib-0.1.0.crate: has no README.md",
                "lib-0.1.0.crate: `lib-0.1.0/docs/README.md` is not source, README, licence or manifest"
            ]
        );
    }

    #[rstest]
    #[case::manifest("Cargo.toml")]
    #[case::manifest_orig("Cargo.toml.orig")]
    #[case::lock("Cargo.lock")]
    #[case::vcs_info(".cargo_vcs_info.json")]
    #[case::readme("README.md")]
    #[case::licence_mit("LICENSE-MIT")]
    #[case::licence_apache("LICENSE-APACHE")]
    #[case::licence("LICENSE")]
    #[case::lib("src/lib.rs")]
    #[case::module("src/config/mod.rs")]
    #[case::build_script("build.rs")]
    #[case::test("tests/tidy/main.rs")]
    #[case::test_fixture("tests/fixtures/hooks/claude/settings.json")]
    #[case::bench("benches/support/mod.rs")]
    #[case::example("examples/compose.rs")]
    #[case::directory("src/")]
    fn what_a_crate_may_hold(#[case] rel: &str) {
        let paths = [format!("a-0.1.0/{rel}")];
        assert!(stray_files("a-0.1.0/", &paths).is_empty(), "{rel}");
    }

    #[rstest]
    #[case::merge_leftover("README.md.orig")]
    #[case::patch_reject("src/lib.rs.rej")]
    #[case::data_in_src("src/table.json")]
    #[case::proptest_regressions("proptest-regressions/view.txt")]
    #[case::other_docs("docs/guide.md")]
    #[case::notes("NOTES.txt")]
    #[case::editor_backup("src/lib.rs~")]
    fn what_a_crate_may_not_hold(#[case] rel: &str) {
        let paths = [
            "a-0.1.0/Cargo.toml".to_owned(),
            format!("a-0.1.0/{rel}"),
            "a-0.1.0/src/lib.rs".to_owned(),
        ];
        assert_eq!(stray_files("a-0.1.0/", &paths), [paths[1].as_str()]);
    }

    #[test]
    fn a_path_outside_the_crate_directory_is_stray() {
        let paths = ["b-0.1.0/src/lib.rs".to_owned()];
        assert_eq!(stray_files("a-0.1.0/", &paths), ["b-0.1.0/src/lib.rs"]);
    }

    #[test]
    fn a_stray_file_fails_the_package_check() {
        let members = [member("lib", false)];
        let found = ["lib-0.1.0.crate".to_owned()].into();
        let contents = |_: &str| {
            Ok(vec![
                "lib-0.1.0/Cargo.toml".into(),
                "lib-0.1.0/README.md".into(),
                "lib-0.1.0/README.md.orig".into(),
            ])
        };
        assert_eq!(
            check_crates(&members, &found, &contents).unwrap(),
            [
                "lib-0.1.0.crate: `lib-0.1.0/README.md.orig` is not source, README, licence or manifest"
            ]
        );
    }
}
