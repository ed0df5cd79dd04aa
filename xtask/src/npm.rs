//! `cargo xtask npm [--target TRIPLE] [--no-build] [--test]`: the npm
//! packages for agent users, in the esbuild/Codex style (decision 0035).
//!
//! - `dsh-instructions`: a small JS launcher as its `bin`, with one
//!   optional dependency per platform package (npm installs only the one
//!   whose `os`/`cpu` match);
//! - `@dsh-instructions/<platform>`: the prebuilt release binary.
//!
//! Nothing is downloaded at install time and there is no install script.
//! Both are packed with `npm pack` into `target/npm/`. `--test` then installs
//! the two tarballs into a throwaway prefix with the registry unreachable and
//! drives the installed `bin` through `hook install`, `hook doctor`, one hook
//! event, `hook uninstall` and `npm uninstall`.
//!
//! Built for the host, the command also builds the Node binding's packages
//! (`dsh-agent-instructions` and its platform package, `npm_node.rs`) and,
//! with `--test`, installs and tests them the same way.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail, ensure};
use serde_json::json;

use crate::npm_util::{npm, npm_pack};
use crate::package::{members, metadata};

/// An npm platform package and the Rust target that builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Platform {
    /// `process.platform`-`process.arch`, the package's name suffix.
    pub(crate) npm: &'static str,
    pub(crate) os: &'static str,
    pub(crate) cpu: &'static str,
    pub(crate) triple: &'static str,
    pub(crate) exe: &'static str,
}

pub(crate) const PLATFORMS: [Platform; 5] = [
    Platform {
        npm: "linux-x64",
        os: "linux",
        cpu: "x64",
        triple: "x86_64-unknown-linux-gnu",
        exe: "dsh-instructions",
    },
    Platform {
        npm: "linux-arm64",
        os: "linux",
        cpu: "arm64",
        triple: "aarch64-unknown-linux-gnu",
        exe: "dsh-instructions",
    },
    Platform {
        npm: "darwin-x64",
        os: "darwin",
        cpu: "x64",
        triple: "x86_64-apple-darwin",
        exe: "dsh-instructions",
    },
    Platform {
        npm: "darwin-arm64",
        os: "darwin",
        cpu: "arm64",
        triple: "aarch64-apple-darwin",
        exe: "dsh-instructions",
    },
    Platform {
        npm: "win32-x64",
        os: "win32",
        cpu: "x64",
        triple: "x86_64-pc-windows-msvc",
        exe: "dsh-instructions.exe",
    },
];

const SCOPE: &str = "@dsh-instructions";
const MAIN: &str = "dsh-instructions";

/// The platform this xtask runs on (what a plain `cargo build` produces).
fn host_platform() -> Option<Platform> {
    let (os, cpu) = crate::npm_util::npm_platform();
    PLATFORMS.into_iter().find(|p| p.os == os && p.cpu == cpu)
}

/// The launcher: picks the platform package, runs its binary with the same
/// arguments, stdin, stdout and stderr, and exits with its exit code.
pub(crate) const LAUNCHER: &str = r#"#!/usr/bin/env node
// dsh-instructions launcher: runs the prebuilt binary of this platform's
// package (installed by npm as an optional dependency; nothing downloads).
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = __PLATFORMS__;
const key = `${process.platform}-${process.arch}`;
const exe = PLATFORMS[key];
if (!exe) {
  process.stderr.write(
    `dsh-instructions: no prebuilt binary for ${key} (built for: ${Object.keys(PLATFORMS).join(", ")}).\n` +
      "Build it from source instead: cargo install dsh-instructions-cli\n"
  );
  process.exit(2);
}
const pkg = `@dsh-instructions/${key}`;
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch (e) {
  process.stderr.write(
    `dsh-instructions: the platform package ${pkg} is not installed.\n` +
      "It is an optional dependency: reinstall without --omit=optional / --no-optional,\n" +
      "or build from source: cargo install dsh-instructions-cli\n"
  );
  process.exit(2);
}
const r = spawnSync(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (r.error) {
  process.stderr.write(`dsh-instructions: cannot run ${bin}: ${r.error.message}\n`);
  process.exit(2);
}
if (r.signal) {
  process.kill(process.pid, r.signal);
}
process.exit(r.status === null ? 1 : r.status);
"#;

fn launcher() -> String {
    let map: serde_json::Map<String, serde_json::Value> = PLATFORMS
        .iter()
        .map(|p| (p.npm.to_owned(), json!(p.exe)))
        .collect();
    LAUNCHER.replace("__PLATFORMS__", &serde_json::Value::Object(map).to_string())
}

/// `package.json` of the launcher package.
pub(crate) fn main_manifest(version: &str, repository: &str) -> serde_json::Value {
    let optional: serde_json::Map<String, serde_json::Value> = PLATFORMS
        .iter()
        .map(|p| (format!("{SCOPE}/{}", p.npm), json!(version)))
        .collect();
    json!({
        "name": MAIN,
        "version": version,
        "description": "Workspace instruction files (AGENTS.md, CLAUDE.md) for Claude Code, Codex CLI and Gemini CLI, through their hooks.",
        "license": "MIT OR Apache-2.0",
        "repository": { "type": "git", "url": format!("git+{repository}.git") },
        "bin": { MAIN: "bin/dsh-instructions.js" },
        "files": ["bin", "README.md"],
        "engines": { "node": ">=16" },
        "optionalDependencies": optional,
    })
}

/// `package.json` of one platform package.
pub(crate) fn platform_manifest(p: Platform, version: &str, repository: &str) -> serde_json::Value {
    json!({
        "name": format!("{SCOPE}/{}", p.npm),
        "version": version,
        "description": format!("The dsh-instructions binary for {} (used by the dsh-instructions package).", p.npm),
        "license": "MIT OR Apache-2.0",
        "repository": { "type": "git", "url": format!("git+{repository}.git") },
        "os": [p.os],
        "cpu": [p.cpu],
        "files": ["bin", "README.md"],
        "preferUnplugged": true,
    })
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    let mut target: Option<String> = None;
    let mut build = true;
    let mut test = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--target" => target = Some(it.next().context("--target needs a triple")?.clone()),
            "--no-build" => build = false,
            "--test" => test = true,
            other => {
                bail!("unknown option `{other}` (npm [--target TRIPLE] [--no-build] [--test])")
            }
        }
    }
    let platform = match &target {
        Some(t) => PLATFORMS
            .into_iter()
            .find(|p| p.triple == t)
            .with_context(|| format!("no npm platform for target `{t}`"))?,
        None => host_platform().context("this host has no npm platform package")?,
    };
    // No npm is a failure, never a skip (issue 34 item 3): a green run
    // must mean the packages were built and, with --test, installed.
    npm_present(
        Command::new("npm")
            .arg("--version")
            .stdout(Stdio::null())
            .status(),
    )?;
    let meta = metadata(root)?;
    let cli = members(&meta)?
        .into_iter()
        .find(|m| m.name == "dsh-instructions-cli")
        .context("no dsh-instructions-cli crate")?;
    let repository = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "dsh-instructions-cli")
        .and_then(|p| p["repository"].as_str())
        .unwrap_or_default()
        .to_owned();
    let target_dir = PathBuf::from(meta["target_directory"].as_str().unwrap_or("target"));

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    if build {
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--release",
            "--locked",
            "-p",
            "dsh-instructions-cli",
        ]);
        if let Some(t) = &target {
            cmd.args(["--target", t]);
        }
        println!(
            "== cargo build --release -p dsh-instructions-cli ({})",
            platform.triple
        );
        ensure!(
            cmd.current_dir(root).status()?.success(),
            "cargo build failed"
        );
    }
    let binary = match &target {
        Some(t) => target_dir.join(t).join("release"),
        None => target_dir.join("release"),
    }
    .join(platform.exe);
    ensure!(binary.is_file(), "no binary at {}", binary.display());

    let out = target_dir.join("npm");
    let _ = std::fs::remove_dir_all(&out);
    let main_dir = out.join(MAIN);
    let plat_dir = out.join(platform.npm);
    let readme = std::fs::read_to_string(root.join("crates/dsh-instructions-cli/README.md"))
        .context("cannot read the CLI README")?;
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    write(
        &main_dir.join("package.json"),
        &pretty(&main_manifest(&cli.version, &repository)),
    )?;
    write(&main_dir.join("bin/dsh-instructions.js"), &launcher())?;
    write(&main_dir.join("README.md"), &readme)?;
    write(
        &plat_dir.join("package.json"),
        &pretty(&platform_manifest(platform, &cli.version, &repository)),
    )?;
    write(
        &plat_dir.join("README.md"),
        &format!(
            "# {SCOPE}/{}\n\nThe prebuilt `dsh-instructions` binary for {}; install `dsh-instructions` instead.\n",
            platform.npm, platform.npm
        ),
    )?;
    let bin = plat_dir.join("bin").join(platform.exe);
    std::fs::create_dir_all(plat_dir.join("bin"))?;
    std::fs::copy(&binary, &bin).with_context(|| format!("cannot copy {}", binary.display()))?;
    set_executable(&bin)?;
    set_executable(&main_dir.join("bin/dsh-instructions.js"))?;

    let main_tgz = npm_pack(&main_dir, &out)?;
    let plat_tgz = npm_pack(&plat_dir, &out)?;
    println!("npm: {}\nnpm: {}", main_tgz.display(), plat_tgz.display());
    if test {
        if Some(platform) != host_platform() {
            bail!(
                "--test runs the binary: it needs the host's platform, not {}",
                platform.npm
            );
        }
        install_test(&main_tgz, &plat_tgz)?;
        println!(
            "npm install test: ok (install, doctor, one SessionStart event, uninstall, npm uninstall)"
        );
    }
    // The Node binding's packages (issue 47): built for the host only.
    if target.is_none() {
        let tarballs = crate::npm_node::build(root, &out, &cli.version, &repository)?;
        if test {
            crate::npm_node::install_test(root, &tarballs)?;
            println!(
                "npm binding test: ok (installed offline; node:test suites, README example, tsc --strict, no-binary error)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `npm --version` answered, as a reason to stop: npm missing or
/// broken fails the command (`.ci/run` installs npm before it runs this;
/// a skip would be a green that cannot fail, decision 0045).
fn npm_present(status: std::io::Result<std::process::ExitStatus>) -> Result<()> {
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => bail!(
            "`npm --version` exited with {s}: the npm packages were NOT built or tested \
             (install Node.js and npm, e.g. `apt-get install nodejs npm`)"
        ),
        Err(e) => bail!(
            "npm is not installed ({e}): the npm packages were NOT built or tested \
             (install Node.js and npm, e.g. `apt-get install nodejs npm`)"
        ),
    }
}

#[cfg(unix)]
fn set_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot chmod {}", p.display()))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// Runs the installed `bin` with HOME and DSH_HOME in `home`.
fn run_bin(
    bin: &Path,
    home: &Path,
    cwd: &Path,
    args: &[&str],
    stdin: &[u8],
) -> Result<(i32, String)> {
    let mut child = Command::new(bin)
        .args(args)
        .env("HOME", home)
        .env("DSH_HOME", home.join(".dsh"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    child.stdin.take().context("no stdin")?.write_all(stdin)?;
    let out = child.wait_with_output()?;
    let code = out.status.code().unwrap_or(-1);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    Ok((code, text))
}

fn install_test(main_tgz: &Path, plat_tgz: &Path) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let prefix = tmp.path().join("prefix");
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&prefix)?;
    std::fs::create_dir_all(home.join(".claude"))?;
    std::fs::create_dir_all(repo.join(".git"))?;
    std::fs::write(
        repo.join("CLAUDE.md"),
        "Run make check before committing.\n",
    )?;
    // A settings file of the user's own: uninstall must give its bytes back.
    let settings = home.join(".claude/settings.json");
    let before = b"{\n  // mine\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(&settings, before)?;

    let main = main_tgz.to_string_lossy().into_owned();
    let plat = plat_tgz.to_string_lossy().into_owned();
    npm(&prefix, &home, &["install", &main, &plat])?;
    let bin = prefix.join("node_modules/.bin/dsh-instructions");
    ensure!(bin.exists(), "npm installed no bin at {}", bin.display());

    // The installed launcher in `repo`, with HOME and DSH_HOME in `home`.
    let cli = |args: &[&str], stdin: &[u8]| run_bin(&bin, &home, &repo, args, stdin);
    let (code, _) = cli(&["hook", "install", "--agent", "claude"], b"")?;
    ensure!(code == 0, "hook install exited {code}");
    ensure!(
        std::fs::read(&settings)? != before,
        "hook install left settings.json unchanged"
    );
    let (code, out) = cli(&["hook", "doctor", "--agent", "claude"], b"")?;
    ensure!(code == 0, "hook doctor exited {code}:\n{out}");

    let event = json!({
        "session_id": "npm-test-1",
        "transcript_path": home.join(".claude/projects/x/npm-test-1.jsonl"),
        "cwd": repo,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let (code, out) = cli(&["hook", "--agent", "claude"], event.to_string().as_bytes())?;
    ensure!(code == 0, "hook event exited {code}");
    ensure!(
        out.contains("Run make check before committing."),
        "the SessionStart answer does not carry CLAUDE.md:\n{out}"
    );

    // The launcher forwards a failing exit code as is (2: usage error).
    let (code, _) = cli(&["--no-such-flag"], b"")?;
    ensure!(
        code == 2,
        "a usage error exited {code} through the launcher, not 2"
    );

    let (code, _) = cli(&["hook", "uninstall", "--agent", "claude"], b"")?;
    ensure!(code == 0, "hook uninstall exited {code}");
    ensure!(
        std::fs::read(&settings)? == before,
        "settings.json is not byte-identical after uninstall"
    );

    npm(
        &prefix,
        &home,
        &[
            "uninstall",
            MAIN,
            &format!("{SCOPE}/{}", host_platform().map_or("", |p| p.npm)),
        ],
    )?;
    ensure!(!bin.exists(), "npm uninstall left {}", bin.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_is_an_optional_dependency_with_its_os_and_cpu() {
        let main = main_manifest("1.2.3", "https://example.org/r");
        for p in PLATFORMS {
            assert_eq!(
                main["optionalDependencies"][format!("{SCOPE}/{}", p.npm)],
                "1.2.3"
            );
            let m = platform_manifest(p, "1.2.3", "https://example.org/r");
            assert_eq!(m["os"], json!([p.os]));
            assert_eq!(m["cpu"], json!([p.cpu]));
            assert_eq!(p.npm, format!("{}-{}", p.os, p.cpu));
        }
        // No install-time scripts: nothing is downloaded or run by npm.
        assert!(main.get("scripts").is_none());
        assert_eq!(main["bin"][MAIN], "bin/dsh-instructions.js");
    }

    /// A missing or broken npm fails the command instead of passing it
    /// with a skip line (issue 34 item 3).
    #[cfg(unix)]
    #[rstest::rstest]
    #[case::missing(
        Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        "npm is not installed"
    )]
    #[case::broken(Ok(exit(1)), "`npm --version` exited")]
    fn npm_missing_or_broken_is_an_error(
        #[case] status: std::io::Result<std::process::ExitStatus>,
        #[case] want: &str,
    ) {
        let e = npm_present(status)
            .expect_err("no npm must fail")
            .to_string();
        assert!(e.contains(want) && e.contains("NOT built or tested"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_working_npm_passes() {
        assert!(npm_present(Ok(exit(0))).is_ok());
    }

    #[cfg(unix)]
    fn exit(code: i32) -> std::process::ExitStatus {
        std::os::unix::process::ExitStatusExt::from_raw(code << 8)
    }

    #[test]
    fn the_launcher_knows_every_platform_binary() {
        let js = launcher();
        assert!(!js.contains("__PLATFORMS__"));
        for p in PLATFORMS {
            assert!(
                js.contains(&format!("\"{}\":\"{}\"", p.npm, p.exe)),
                "{}",
                p.npm
            );
        }
        assert!(js.contains("stdio: \"inherit\""));
    }
}
