//! The Node binding's npm packages (issue 47, decision 0084, R-NODE-5), as napi-rs
//! projects ship them:
//!
//! - `dsh-agent-instructions`: `index.js` (the entry, which names the
//!   platform when no addon is installed), `native.js` (napi-rs's loader),
//!   `index.d.ts`, the README, and one optional dependency per platform;
//! - `@dsh-agent-instructions/binding-<platform>`: the prebuilt addon,
//!   built here for linux-x64-gnu; the other targets are declared for a
//!   release machine.
//!
//! The build runs `napi build` of the pinned `@napi-rs/cli` and `tsc -p
//! agents` of the pinned TypeScript (the crate's `package.json`, installed
//! with `npm ci`). What they make is build output, not committed (decision
//! 0094): napi-rs's loader `native.js` and the compiled pi extension and
//! opencode plugin; only `index.d.ts`, the package's API as review reads it,
//! is committed, and the build fails when it differs from what napi makes.
//! `--test`
//! installs both tarballs offline into a scratch project and runs the
//! package's `node:test` suites (the README example among them) and a
//! strict TypeScript check against the installed package under this
//! machine's Node; then the same suites under Bun, installed from npm
//! at a pinned version where the registry can be reached.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};
use serde_json::json;

/// The crate (and npm project) of the binding.
pub(crate) const CRATE_DIR: &str = "crates/dsh-agent-instructions-node";
const MAIN: &str = "dsh-agent-instructions";
const SCOPE: &str = "@dsh-agent-instructions";
/// Bun, the runtime of opencode's plugins: the suites run under it too.
const BUN: &str = "bun@1.3.4";
/// What `tsc -p agents` makes: the pi extension, the opencode plugin and
/// what they share, shipped in the main package (its `files`); build
/// output, ignored by git (decision 0094).
pub(crate) const AGENTS_OUTPUT: [&str; 6] = [
    "agents/core.mjs",
    "agents/core.d.mts",
    "agents/pi.mjs",
    "agents/pi.d.mts",
    "agents/opencode.mjs",
    "agents/opencode.d.mts",
];

/// A napi-rs target: the npm platform suffix, its `os`/`cpu`/`libc`, and
/// the Rust triple a release machine builds it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) npm: &'static str,
    os: &'static str,
    cpu: &'static str,
    libc: Option<&'static str>,
    pub(crate) triple: &'static str,
}

pub(crate) const TARGETS: [Target; 8] = [
    Target {
        npm: "linux-x64-gnu",
        os: "linux",
        cpu: "x64",
        libc: Some("glibc"),
        triple: "x86_64-unknown-linux-gnu",
    },
    Target {
        npm: "linux-arm64-gnu",
        os: "linux",
        cpu: "arm64",
        libc: Some("glibc"),
        triple: "aarch64-unknown-linux-gnu",
    },
    Target {
        npm: "linux-x64-musl",
        os: "linux",
        cpu: "x64",
        libc: Some("musl"),
        triple: "x86_64-unknown-linux-musl",
    },
    Target {
        npm: "linux-arm64-musl",
        os: "linux",
        cpu: "arm64",
        libc: Some("musl"),
        triple: "aarch64-unknown-linux-musl",
    },
    Target {
        npm: "darwin-x64",
        os: "darwin",
        cpu: "x64",
        libc: None,
        triple: "x86_64-apple-darwin",
    },
    Target {
        npm: "darwin-arm64",
        os: "darwin",
        cpu: "arm64",
        libc: None,
        triple: "aarch64-apple-darwin",
    },
    Target {
        npm: "win32-x64-msvc",
        os: "win32",
        cpu: "x64",
        libc: None,
        triple: "x86_64-pc-windows-msvc",
    },
    Target {
        npm: "win32-arm64-msvc",
        os: "win32",
        cpu: "arm64",
        libc: None,
        triple: "aarch64-pc-windows-msvc",
    },
];

/// The target this machine builds: linux-x64-gnu (the only one built here).
fn host_target() -> Option<Target> {
    let triple = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("windows", "x86_64") => "x86_64-pc-windows-msvc",
        _ => return None,
    };
    TARGETS.into_iter().find(|t| t.triple == triple)
}

/// The addon's file name for a target, as napi-rs names it.
fn addon(t: Target) -> String {
    format!("{MAIN}.{}.node", t.npm)
}

/// The file name of this machine's addon, as `napi build --platform`
/// writes it into the crate's directory.
pub(crate) fn host_addon() -> Result<String> {
    host_target()
        .map(addon)
        .context("this host builds no Node binding")
}

/// `package.json` of the main package: the crate's, without what only
/// the repository needs, with the platform packages as optional
/// dependencies.
pub(crate) fn main_manifest(source: &serde_json::Value, version: &str) -> serde_json::Value {
    let mut m = source.clone();
    if let Some(o) = m.as_object_mut() {
        o.remove("private");
        o.remove("devDependencies");
        o.remove("scripts");
        o.insert("version".into(), json!(version));
        let optional: serde_json::Map<String, serde_json::Value> = TARGETS
            .iter()
            .map(|t| (format!("{SCOPE}/binding-{}", t.npm), json!(version)))
            .collect();
        o.insert("optionalDependencies".into(), optional.into());
    }
    m
}

/// `package.json` of one platform package.
pub(crate) fn platform_manifest(t: Target, version: &str, repository: &str) -> serde_json::Value {
    let mut m = json!({
        "name": format!("{SCOPE}/binding-{}", t.npm),
        "version": version,
        "description": format!("The dsh-agent-instructions addon for {} (used by the dsh-agent-instructions package).", t.npm),
        "license": "MIT OR Apache-2.0",
        "repository": { "type": "git", "url": format!("git+{repository}.git") },
        "main": addon(t),
        "files": [addon(t), "README.md"],
        "os": [t.os],
        "cpu": [t.cpu],
        "engines": { "node": ">= 18" },
    });
    if let Some(libc) = t.libc {
        m["libc"] = json!([libc]);
    }
    m
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("cannot run {what}"))?;
    ensure!(status.success(), "{what} failed ({status})");
    Ok(())
}

/// Builds the binding's packages into `out`; returns the two tarballs.
pub(crate) fn build(
    root: &Path,
    out: &Path,
    version: &str,
    repository: &str,
) -> Result<[PathBuf; 2]> {
    let target = host_target().context("this host builds no binding package")?;
    let dir = root.join(CRATE_DIR);
    let committed = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let dts = committed("index.d.ts");
    generate(&dir, Profile::Release, Install::Always)?;
    ensure!(
        committed("index.d.ts") == dts,
        "{CRATE_DIR}/index.d.ts is generated by napi build and differs from the committed one: \
         review and commit it"
    );

    let main_dir = out.join(MAIN);
    let plat_dir = out.join(format!("binding-{}", target.npm));
    for d in [&main_dir, &plat_dir] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d)?;
    }
    let source: serde_json::Value =
        serde_json::from_str(&committed("package.json")).context("the binding's package.json")?;
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    std::fs::write(
        main_dir.join("package.json"),
        pretty(&main_manifest(&source, version)),
    )?;
    std::fs::create_dir_all(main_dir.join("agents"))?;
    for f in ["index.js", "native.js", "index.d.ts", "README.md"]
        .into_iter()
        .chain(AGENTS_OUTPUT)
    {
        std::fs::copy(dir.join(f), main_dir.join(f)).with_context(|| format!("copy {f}"))?;
    }
    std::fs::write(
        plat_dir.join("package.json"),
        pretty(&platform_manifest(target, version, repository)),
    )?;
    std::fs::write(
        plat_dir.join("README.md"),
        format!(
            "# {SCOPE}/binding-{}\n\nThe prebuilt addon of `dsh-agent-instructions` for {}; install `dsh-agent-instructions` instead.\n",
            target.npm, target.npm
        ),
    )?;
    std::fs::copy(dir.join(addon(target)), plat_dir.join(addon(target)))
        .with_context(|| format!("no addon {} after napi build", addon(target)))?;
    let main_tgz = crate::npm_util::npm_pack(&main_dir, out)?;
    let plat_tgz = crate::npm_util::npm_pack(&plat_dir, out)?;
    println!("npm: {}\nnpm: {}", main_tgz.display(), plat_tgz.display());
    Ok([main_tgz, plat_tgz])
}

/// Which addon `generate` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// `napi build --release`: what the packages ship and the benchmarks load.
    Release,
    /// A debug build, like the CLI the e2e runs.
    Debug,
}

/// When `generate` runs `npm ci` in the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Install {
    /// Always: the packages are built from exactly the pinned tools.
    Always,
    /// Only when the pinned CLI is not installed yet.
    IfMissing,
}

/// Makes the package in the crate's directory loadable in place: the pinned
/// tools installed, `napi build --platform` (the addon, `native.js`,
/// `index.d.ts`; a no-op build when nothing changed) and `tsc -p agents`
/// (the pi extension and the opencode plugin). Everything it writes but
/// `index.d.ts` is build output, not committed (decision 0094), so every
/// tool that loads the package from the crate's directory calls this first:
/// `npm`, `conformance-node`, `bench node` and the e2e's pi and opencode.
pub(crate) fn generate(dir: &Path, profile: Profile, install: Install) -> Result<()> {
    if install == Install::Always || !dir.join("node_modules/.bin/napi").exists() {
        println!("== npm ci ({CRATE_DIR}: the pinned @napi-rs/cli, typescript, yaml)");
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(dir),
            "npm ci",
        )?;
    }
    let mut napi = Command::new(dir.join("node_modules/.bin/napi"));
    napi.args(["build", "--platform"]);
    if profile == Profile::Release {
        napi.arg("--release");
    }
    println!("== napi build --platform ({profile:?}: the addon the package loads in place)");
    run(
        napi.args(["--js", "native.js", "--dts", "index.d.ts"])
            .current_dir(dir),
        "napi build",
    )?;
    println!("== tsc -p agents (the pi extension and the opencode plugin)");
    run(
        Command::new(dir.join("node_modules/.bin/tsc"))
            .args(["-p", "agents"])
            .current_dir(dir),
        "tsc -p agents",
    )
}

/// The package's test files, run from the installed copy.
fn test_files(dir: &Path) -> Result<Vec<String>> {
    let mut files: Vec<String> = std::fs::read_dir(dir.join("test"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".test.mjs"))
        .collect();
    files.sort();
    ensure!(!files.is_empty(), "no test/*.test.mjs in {CRATE_DIR}");
    Ok(files)
}

/// Installs the tarballs offline into a scratch project and runs the
/// suites there, under Node and under Bun.
pub(crate) fn install_test(root: &Path, tarballs: &[PathBuf; 2]) -> Result<()> {
    let dir = root.join(CRATE_DIR);
    let tmp = tempfile::tempdir()?;
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&project)?;
    std::fs::create_dir_all(&home)?;
    std::fs::write(project.join("package.json"), "{\"private\": true}\n")?;
    let [main, plat] = tarballs
        .each_ref()
        .map(|p| p.to_string_lossy().into_owned());
    crate::npm_util::npm(&project, &home, &["install", &main, &plat])?;
    let installed = project.join("node_modules").join(MAIN);
    ensure!(
        installed.join("index.d.ts").is_file(),
        "npm installed no {MAIN}"
    );
    copy_tree(&dir.join("test"), &project.join("test"))?;
    let files = test_files(&dir)?;

    println!(
        "== node --test (the installed package, Node {})",
        version_of("node")?
    );
    let mut node = Command::new("node");
    node.arg("--test")
        .args(files.iter().map(|f| format!("test/{f}")))
        .env("DSH_NODE_PACKAGE", &installed)
        .current_dir(&project);
    run(&mut node, "node --test")?;

    println!("== tsc --strict (test/types.ts against the installed index.d.ts)");
    run(
        Command::new(dir.join("node_modules/.bin/tsc"))
            .args(["--strict", "--noEmit", "--module", "nodenext"])
            .args(["--moduleResolution", "nodenext", "--target", "es2022"])
            .args(["--types", "node", "--typeRoots"])
            .arg(dir.join("node_modules/@types"))
            .arg("test/types.ts")
            .current_dir(&project),
        "tsc --strict",
    )?;

    no_binary_names_the_platform(&tarballs[0], &home, tmp.path())?;

    // Bun where it can be installed from npm; where it cannot, the line
    // says so (the Node run above is the one that must pass).
    let tools = tmp.path().join("bun");
    std::fs::create_dir_all(&tools)?;
    let bun_installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&tools)
        .arg(BUN)
        .status()
        .is_ok_and(|s| s.success());
    let bun = tools.join("node_modules/.bin/bun");
    if bun_installed && bun.exists() {
        println!("== bun test (the installed package, {BUN})");
        let mut cmd = Command::new(&bun);
        cmd.arg("test")
            .args(files.iter().map(|f| format!("./test/{f}")))
            .env("DSH_NODE_PACKAGE", &installed)
            .current_dir(&project);
        run(&mut cmd, "bun test")?;
    } else {
        println!("bun: NOT run ({BUN} could not be installed from npm on this machine)");
    }
    Ok(())
}

/// Copies the directory `from` (files and subdirectories: the suites and
/// their recorded fixtures) to `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The main package alone (its platform package left out): requiring it
/// fails with an error that names this platform.
fn no_binary_names_the_platform(main: &Path, home: &Path, tmp: &Path) -> Result<()> {
    let project = tmp.join("no-binary");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("package.json"), "{\"private\": true}\n")?;
    crate::npm_util::npm(
        &project,
        home,
        &["install", "--omit=optional", &main.to_string_lossy()],
    )?;
    let out = Command::new("node")
        .args([
            "-e",
            "try { require('dsh-agent-instructions'); console.log('loaded') } \
             catch (e) { console.log(e.code + ' ' + e.platform + ' ' + e.message) }",
        ])
        .current_dir(&project)
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let want = host_target().map_or("", |t| t.npm);
    if !(text.starts_with("ERR_DSH_NO_BINARY ") && text.contains(want)) {
        bail!("without its platform package the binding said: {text}");
    }
    println!("no platform package: {}", text.trim());
    Ok(())
}

fn version_of(tool: &str) -> Result<String> {
    let out = Command::new(tool).arg("--version").output()?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_is_an_optional_dependency_with_os_cpu_and_libc() {
        let source =
            json!({"name": MAIN, "private": true, "devDependencies": {"x": "1"}, "napi": {}});
        let main = main_manifest(&source, "1.2.3");
        assert!(main.get("private").is_none() && main.get("devDependencies").is_none());
        for t in TARGETS {
            assert_eq!(
                main["optionalDependencies"][format!("{SCOPE}/binding-{}", t.npm)],
                "1.2.3"
            );
            let m = platform_manifest(t, "1.2.3", "https://example.org/r");
            assert_eq!(m["os"], json!([t.os]));
            assert_eq!(m["cpu"], json!([t.cpu]));
            assert_eq!(m["main"], addon(t));
            assert_eq!(t.libc.is_some(), t.os == "linux");
            assert!(t.npm.starts_with(&format!("{}-{}", t.os, t.cpu)));
        }
    }

    /// Every declaration of the committed (generated) `index.d.ts` — an
    /// export, a class member, an interface field — follows a TSDoc
    /// comment (issue 47 item 1): an undocumented `#[napi]` item fails here.
    #[test]
    fn every_item_of_index_d_ts_has_tsdoc() {
        let dts =
            std::fs::read_to_string(crate::workspace_root().join(CRATE_DIR).join("index.d.ts"))
                .expect("index.d.ts");
        let mut previous = "";
        let mut items = 0;
        for (n, line) in dts.lines().enumerate() {
            let member = line.starts_with("  ")
                && !line.starts_with("   ")
                && line
                    .trim_start()
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if line.starts_with("export ") || member {
                items += 1;
                assert!(
                    previous.trim_end().ends_with("*/"),
                    "index.d.ts:{}: `{line}` has no TSDoc",
                    n + 1
                );
            }
            if !line.trim().is_empty() {
                previous = line;
            }
        }
        assert!(items > 40, "only {items} items: the parse is wrong");
    }

    /// The package's `files` name every file `tsc -p agents` makes, each
    /// from its committed source (tsconfig's `files`), and git ignores them
    /// and napi-rs's loader: build output, never committed (decision 0094).
    #[test]
    fn the_package_ships_the_compiled_agents_which_git_ignores() {
        let root = crate::workspace_root().join(CRATE_DIR);
        let read = |f: &str| std::fs::read_to_string(root.join(f)).expect(f);
        let pkg: serde_json::Value = serde_json::from_str(&read("package.json")).expect("json");
        let files: Vec<&str> = pkg["files"]
            .as_array()
            .expect("files")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        let tsconfig = read("agents/tsconfig.json");
        for f in AGENTS_OUTPUT {
            assert!(files.contains(&f), "{f} not in package.json files");
            let source = f.replace(".d.mts", ".mts").replace(".mjs", ".mts");
            assert!(root.join(&source).is_file(), "{source}");
            let name = source.trim_start_matches("agents/");
            assert!(
                tsconfig.contains(&format!("\"{name}\"")),
                "{name} not in tsconfig"
            );
            // What tidy reads is the source, never the output.
            assert!(crate::tidy::is_build_output(&format!("{CRATE_DIR}/{f}")));
            assert!(!crate::tidy::is_build_output(&format!(
                "{CRATE_DIR}/{source}"
            )));
        }
        assert!(crate::tidy::is_build_output(&format!(
            "{CRATE_DIR}/native.js"
        )));
        let ignored: Vec<String> = read(".gitignore").lines().map(str::to_owned).collect();
        for pattern in ["native.js", "agents/*.mjs", "agents/*.d.mts"] {
            assert!(
                ignored.iter().any(|l| l == pattern),
                "{CRATE_DIR}/.gitignore does not ignore {pattern}"
            );
        }
        assert!(
            files.contains(&"native.js"),
            "native.js not in package.json files"
        );
    }

    /// The targets here, the napi config's and the entry's list agree.
    #[test]
    fn the_targets_are_the_package_json_s_and_the_entry_s() {
        let root = crate::workspace_root().join(CRATE_DIR);
        let pkg: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("package.json")).expect("package.json"),
        )
        .expect("json");
        let triples: Vec<&str> = pkg["napi"]["targets"]
            .as_array()
            .expect("napi.targets")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(triples, TARGETS.map(|t| t.triple));
        let entry = std::fs::read_to_string(root.join("index.js")).expect("index.js");
        for t in TARGETS {
            assert!(entry.contains(&format!("\"{}\"", t.npm)), "{}", t.npm);
        }
    }
}
