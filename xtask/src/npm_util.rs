//! What both npm commands' halves share (and the e2e's installs of the
//! agents): this machine as npm names it, packing a directory and npm with
//! the registry unreachable (`npm.rs` for the CLI's packages, `npm_node.rs`
//! for the Node binding's).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

/// This machine's `(os, arch)` as npm names them (`process.platform`,
/// `process.arch`).
pub(crate) fn npm_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

pub(crate) fn npm_pack(dir: &Path, dest: &Path) -> Result<PathBuf> {
    let out = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(dest)
        .current_dir(dir)
        .output()
        .context("cannot run npm pack")?;
    ensure!(
        out.status.success(),
        "npm pack in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("npm pack --json printed no JSON")?;
    let name = v[0]["filename"]
        .as_str()
        .context("npm pack --json: no filename")?;
    Ok(dest.join(name))
}

/// npm with the registry unreachable: only the tarballs can satisfy it.
pub(crate) fn npm(prefix: &Path, home: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("npm")
        .args(args)
        .args(["--prefix"])
        .arg(prefix)
        .args([
            "--no-audit",
            "--no-fund",
            "--registry",
            "http://127.0.0.1:9",
        ])
        .args(["--fetch-retries", "0", "--fetch-timeout", "5000"])
        // A cache of its own, so nothing cached elsewhere can stand in.
        .env("npm_config_cache", home.join("npm-cache"))
        .output()
        .context("cannot run npm")?;
    ensure!(
        out.status.success(),
        "npm {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
