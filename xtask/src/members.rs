//! The workspace's members as `cargo metadata` describes them: what both
//! the API snapshots (`api.rs`) and the packaging check (`package.rs`)
//! walk, kept apart so neither imports the other for it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

/// One workspace member as `cargo metadata` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) version: String,
    /// `publish = false` (metadata: an empty registry list).
    pub(crate) private: bool,
    pub(crate) dir: PathBuf,
}

impl Member {
    /// The file name `cargo package` gives this crate.
    pub(crate) fn crate_file(&self) -> String {
        format!("{}-{}.crate", self.name, self.version)
    }
}

/// The workspace members, from `cargo metadata --no-deps` JSON.
pub(crate) fn members(metadata: &Value) -> Result<Vec<Member>> {
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata: no `packages` array")?;
    packages
        .iter()
        .map(|p| {
            let name = p["name"].as_str().context("package without a name")?;
            let version = p["version"].as_str().context("package without a version")?;
            let manifest = p["manifest_path"]
                .as_str()
                .context("package without a manifest_path")?;
            // `publish`: null = any registry; [] = `publish = false`; a list = only those.
            let private = p["publish"].as_array().is_some_and(Vec::is_empty);
            Ok(Member {
                name: name.to_owned(),
                version: version.to_owned(),
                private,
                dir: Path::new(manifest)
                    .parent()
                    .map_or_else(PathBuf::new, Path::to_path_buf),
            })
        })
        .collect()
}

pub(crate) fn cargo_bin() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// `cargo metadata --no-deps` of the workspace at `root`.
pub(crate) fn metadata(root: &Path) -> Result<Value> {
    let out = Command::new(cargo_bin())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .context("cannot run cargo metadata")?;
    ensure!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).context("cargo metadata printed no JSON")
}
