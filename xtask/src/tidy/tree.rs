//! The working tree as the tidy checks read it: the workspace root, its
//! members from `cargo metadata`, and every text file, each read at most
//! once per process. A file that cannot be read is an error naming it,
//! never a panic, so `cargo xtask tidy` reports it like any other failure.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, anyhow};

use super::workspace::{self, Package};

/// The tidy modules whose tests hold made-up requirement ids and record
/// numbers: neither kind of citation is read from them.
pub(crate) const FIXTURE_FILES: &[&str] = &[
    "xtask/src/tidy/decisions.rs",
    "xtask/src/tidy/figures.rs",
    "xtask/src/tidy/spec_ids.rs",
    "xtask/src/tidy/spec_index.rs",
];

/// Whether `rel` is a file the Node package's build writes into the tree
/// and git ignores (decision 0094): napi-rs's loader and the compiled pi
/// extension and opencode plugin. A clean clone has none of them, and what
/// they cite their sources cite (tsc keeps the comments), so no check
/// reads them.
pub(crate) fn is_build_output(rel: &str) -> bool {
    use crate::npm_node::{AGENTS_OUTPUT, CRATE_DIR};
    rel.strip_prefix(CRATE_DIR)
        .and_then(|r| r.strip_prefix('/'))
        .is_some_and(|file| file == "native.js" || AGENTS_OUTPUT.contains(&file))
}

/// One working tree: a root and what the checks read under it.
#[derive(Debug)]
pub(crate) struct Tree {
    root: PathBuf,
    metadata: OnceLock<Result<serde_json::Value, String>>,
    texts: OnceLock<Vec<(String, String)>>,
}

impl Tree {
    /// The tree at `root`, canonical so messages show paths relative to it.
    pub(crate) fn at(root: &Path) -> Tree {
        Tree {
            root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned()),
            metadata: OnceLock::new(),
            texts: OnceLock::new(),
        }
    }

    /// The workspace this xtask belongs to (one level above its manifest).
    #[cfg(test)]
    pub(crate) fn workspace() -> Tree {
        Tree::at(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// `path` relative to the root, for messages.
    pub(crate) fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The file at `rel` (relative to the root) or at an absolute path.
    pub(crate) fn read(&self, rel: impl AsRef<Path>) -> Result<String> {
        let path = self.root.join(rel);
        std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", self.relative(&path)))
    }

    /// The raw `cargo metadata --no-deps` JSON of the workspace.
    pub(crate) fn metadata(&self) -> Result<&serde_json::Value> {
        self.metadata
            .get_or_init(|| crate::members::metadata(&self.root).map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| anyhow!("{e}"))
    }

    /// The workspace members, sorted by name.
    pub(crate) fn packages(&self) -> Result<Vec<Package>> {
        workspace::packages_from(self.metadata()?).map_err(|e| anyhow!("cargo metadata: {e}"))
    }

    /// Every UTF-8 file of the working tree ([`files`] says which directories
    /// are skipped) but the [`FIXTURE_FILES`] and the build output
    /// ([`is_build_output`]), as (path relative to the root, text), in path
    /// order.
    pub(crate) fn texts(&self) -> &[(String, String)] {
        self.texts.get_or_init(|| {
            let mut paths = Vec::new();
            files(&self.root, &mut paths);
            paths
                .iter()
                .filter_map(|p| {
                    let rel = self.relative(p);
                    if FIXTURE_FILES.contains(&rel.as_str()) || is_build_output(&rel) {
                        return None;
                    }
                    let text = String::from_utf8(std::fs::read(p).ok()?).ok()?;
                    Some((rel, text))
                })
                .collect()
        })
    }
}

/// What one check found: problems (any one fails it) and notes (what it
/// saw, printed with `--verbose` and by the test wrappers).
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) problems: Vec<String>,
    pub(crate) notes: Vec<String>,
}

impl Report {
    pub(crate) fn fail(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    pub(crate) fn fail_all(&mut self, problems: impl IntoIterator<Item = String>) {
        self.problems.extend(problems);
    }

    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }
}

/// A check: reads the tree, reports what is wrong. An `Err` means it could
/// not run (a file or section it needs is missing), which fails it too.
pub(crate) type CheckFn = fn(&Tree, &mut Report) -> Result<()>;

/// Every file under `dir` the checks read, in path order: all but `.git`,
/// `target`, `target-*` and `node_modules`.
pub(crate) fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let skipped = name == ".git"
            || name == "target"
            || name.starts_with("target-")
            || name == "node_modules";
        if skipped {
            continue;
        }
        if p.is_dir() {
            files(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}
