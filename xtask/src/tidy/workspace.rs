//! The workspace as Cargo sees it: `cargo metadata --no-deps` (the
//! workspace's own manifests, no registry, so it works offline).
//! Cargo parses the manifests, so renamed, target-specific and dotted-key
//! dependencies need no TOML handling here.

use std::collections::BTreeSet;
use std::path::PathBuf;

/// How a dependency is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Normal,
    Dev,
    Build,
}

impl Kind {
    pub(crate) fn section(self) -> &'static str {
        match self {
            Self::Normal => "dependencies",
            Self::Dev => "dev-dependencies",
            Self::Build => "build-dependencies",
        }
    }
}

/// One dependency line of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dep {
    /// The package depended on (its real name, whatever the key).
    pub(crate) name: String,
    pub(crate) kind: Kind,
    /// `cfg(…)` or triple of a `[target.….dependencies]` table.
    pub(crate) target: Option<String>,
    /// Features the dependency line enables.
    pub(crate) features: Vec<String>,
}

impl Dep {
    /// The manifest section the line is in, as a person would look for it.
    pub(crate) fn section(&self) -> String {
        match &self.target {
            Some(t) => format!("target.'{t}'.{}", self.kind.section()),
            None => self.kind.section().to_owned(),
        }
    }
}

/// One workspace member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Package {
    pub(crate) name: String,
    /// The directory holding its `Cargo.toml`.
    pub(crate) dir: PathBuf,
    pub(crate) deps: Vec<Dep>,
    /// Whether it has a library target (`src/lib.rs`).
    pub(crate) has_lib: bool,
}

impl Package {
    /// Internal crates it links: normal dependencies on other members.
    pub(crate) fn normal_internal<'a>(
        &'a self,
        members: &'a BTreeSet<String>,
    ) -> impl Iterator<Item = &'a str> + 'a {
        self.deps
            .iter()
            .filter(move |d| {
                d.kind == Kind::Normal && d.name != self.name && members.contains(&d.name)
            })
            .map(|d| d.name.as_str())
    }
}

/// Packages from `cargo metadata` JSON, sorted by name.
pub(crate) fn packages_from(metadata: &serde_json::Value) -> Result<Vec<Package>, String> {
    let packages = metadata["packages"].as_array().ok_or("no packages")?;
    let mut out = Vec::new();
    for p in packages {
        let name = p["name"].as_str().ok_or("a package without a name")?;
        let manifest = p["manifest_path"]
            .as_str()
            .ok_or_else(|| format!("{name}: no manifest_path"))?;
        let dir = PathBuf::from(manifest)
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let mut deps = Vec::new();
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep_name = d["name"]
                .as_str()
                .ok_or_else(|| format!("{name}: a dependency without a name"))?;
            let kind = match d["kind"].as_str() {
                None => Kind::Normal,
                Some("dev") => Kind::Dev,
                Some("build") => Kind::Build,
                Some(other) => return Err(format!("{name}: dependency kind `{other}`")),
            };
            deps.push(Dep {
                name: dep_name.to_owned(),
                kind,
                target: d["target"].as_str().map(str::to_owned),
                features: d["features"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect(),
            });
        }
        let has_lib = p["targets"].as_array().into_iter().flatten().any(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "lib"))
        });
        out.push(Package {
            name: name.to_owned(),
            dir,
            deps,
            has_lib,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The names of `packages`.
pub(crate) fn member_names(packages: &[Package]) -> BTreeSet<String> {
    packages.iter().map(|p| p.name.clone()).collect()
}
