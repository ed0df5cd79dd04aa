//! Materializing a scenario's filesystem on a provider.
//!
//! The same `fs` / `write` / `remove` values are applied either to the
//! in-memory provider or to a fresh temporary directory `T`. On disk every
//! absolute scenario path is rewritten as `T + path` ([`PathMap`]); the
//! model-visible text only shows root-relative paths and home labels, so the
//! expectations are identical on both providers.

use std::future::Future;
use std::pin::Pin;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::memory::{Errno, FsOp, MemNode, MemoryProvider};

use crate::error::ConformanceError;
use crate::matcher::StepCounters;
use crate::schema::{FaultErrno, FsContent, FsEntry, FsOpName};

/// Lexically normalizes an absolute scenario path: collapses `//`, drops `.`,
/// resolves `..` (never above `/`).
///
/// ```
/// use dsh_instructions_conformance::fsmodel::normalize;
/// assert_eq!(normalize("/work//repo/./pkg/../AGENTS.md"), "/work/repo/AGENTS.md");
/// assert_eq!(normalize("/.."), "/");
/// ```
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Rewrites absolute scenario paths into the provider's namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathMap {
    root: Option<Utf8PathBuf>,
}

impl PathMap {
    /// Identity mapping (the in-memory provider).
    pub fn identity() -> Self {
        Self { root: None }
    }

    /// `path` becomes `root + path` (the disk provider).
    pub fn under(root: Utf8PathBuf) -> Self {
        Self { root: Some(root) }
    }

    /// Maps an absolute scenario path; relative paths are returned unchanged.
    ///
    /// ```
    /// use dsh_instructions_conformance::fsmodel::PathMap;
    /// let m = PathMap::under("/tmp/t".into());
    /// assert_eq!(m.map("/work/repo"), "/tmp/t/work/repo");
    /// assert_eq!(m.map("pkg/a.rs"), "pkg/a.rs");
    /// assert_eq!(PathMap::identity().map("/work/repo"), "/work/repo");
    /// ```
    pub fn map(&self, path: &str) -> String {
        if !path.starts_with('/') {
            return path.to_owned();
        }
        let n = normalize(path);
        match &self.root {
            None => n,
            Some(root) if n == "/" => root.to_string(),
            Some(root) => format!("{root}{n}"),
        }
    }

    /// The inverse of [`PathMap::map`] inside observed text: every
    /// occurrence of the temporary root is taken off (`T/x` becomes `/x`,
    /// `T` alone `/`).
    ///
    /// ```
    /// use dsh_instructions_conformance::fsmodel::PathMap;
    /// let m = PathMap::under("/tmp/t".into());
    /// assert_eq!(m.unmap_in_text("Instructions from: /tmp/t/w/CLAUDE.md"), "Instructions from: /w/CLAUDE.md");
    /// assert_eq!(m.unmap_in_text("ancestor\0/tmp/t\0CLAUDE.md"), "ancestor\0/\0CLAUDE.md");
    /// assert_eq!(PathMap::identity().unmap_in_text("/tmp/t/x"), "/tmp/t/x");
    /// ```
    pub fn unmap_in_text(&self, text: &str) -> String {
        match &self.root {
            Some(root) if text.contains(root.as_str()) => text
                .replace(&format!("{root}/"), "/")
                .replace(root.as_str(), "/"),
            _ => text.to_owned(),
        }
    }

    /// Maps every absolute path inside `text` (a tool's string argument,
    /// such as a shell command) whose first component is one of `tops`
    /// (`/work`, `/home`, …): a path starts the text or follows a blank, a
    /// quote, `=`, `:`, `(`, a redirection or a command separator, and its
    /// first component ends there or at `/`.
    ///
    /// ```
    /// use dsh_instructions_conformance::fsmodel::PathMap;
    /// let m = PathMap::under("/tmp/t".into());
    /// let tops = ["/w".to_owned()];
    /// assert_eq!(
    ///     m.map_in_text("cat /w/a '/w/b' >/w/c /wx /v/d x/w/e", &tops),
    ///     "cat /tmp/t/w/a '/tmp/t/w/b' >/tmp/t/w/c /wx /v/d x/w/e"
    /// );
    /// assert_eq!(PathMap::identity().map_in_text("cat /w/a", &tops), "cat /w/a");
    /// ```
    pub fn map_in_text(&self, text: &str, tops: &[String]) -> String {
        let Some(root) = &self.root else {
            return text.to_owned();
        };
        let mut out = String::with_capacity(text.len());
        let mut previous: Option<char> = None;
        for (i, c) in text.char_indices() {
            let starts_path = c == '/'
                && previous.is_none_or(|p| p.is_whitespace() || "'\"=:(<>;|&`".contains(p))
                && tops.iter().any(|top| {
                    text[i..].strip_prefix(top.as_str()).is_some_and(|rest| {
                        rest.chars()
                            .next()
                            .is_none_or(|n| !(n.is_alphanumeric() || "_-.".contains(n)))
                    })
                });
            if starts_path {
                out.push_str(root.as_str());
            }
            out.push(c);
            previous = Some(c);
        }
        out
    }

    /// Maps an absolute path as a [`Utf8PathBuf`].
    pub fn map_path(&self, path: &str) -> Utf8PathBuf {
        Utf8PathBuf::from(self.map(path))
    }

    /// Maps a home-like value: absolute paths are rewritten, `~…` and
    /// relative values are left for home resolution.
    pub fn map_home_value(&self, value: &str) -> String {
        self.map(value)
    }

    /// The temporary root, on disk.
    pub fn root(&self) -> Option<&Utf8Path> {
        self.root.as_deref()
    }
}

/// A boxed future that is not tied to `Send` (the runner is single-threaded).
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A filesystem the runner can change between steps.
pub trait FsFixture: std::fmt::Debug {
    /// Creates or replaces `path` (a scenario path) with `entry`; parents are implied.
    fn insert(&self, path: &str, entry: &FsEntry) -> Result<(), ConformanceError>;
    /// Deletes a file, link or (recursively) a directory; `false` if nothing was there.
    fn remove(&self, path: &str) -> Result<bool, ConformanceError>;
    /// Opens a gate (memory only).
    fn release(&self, path: &str) -> Result<(), ConformanceError>;
    /// Resolves once an operation on `path` is blocked on a gate (memory only).
    fn wait_blocked(&self, path: &str) -> LocalFuture<'_, ()>;
    /// Op counters since the last reset (memory only).
    fn counters(&self) -> Option<StepCounters>;
    /// Starts a new counting window.
    fn reset_counters(&self);
    /// How scenario paths map into this fixture.
    fn paths(&self) -> &PathMap;
}

fn fs_op(op: FsOpName) -> FsOp {
    match op {
        FsOpName::Resolve => FsOp::Resolve,
        FsOpName::Stat => FsOp::Stat,
        FsOpName::Read => FsOp::Read,
    }
}

fn fault_error(e: FaultErrno) -> Errno {
    match e {
        FaultErrno::Eacces => Errno::Eacces,
        FaultErrno::Eio => Errno::Eio,
        FaultErrno::Eloop => Errno::Eloop,
        FaultErrno::Etimedout => Errno::Etimedout,
    }
}

/// Converts a scenario value into a memory node (absolute link targets are
/// kept: the memory namespace is the scenario namespace).
pub fn mem_node(entry: &FsEntry) -> MemNode {
    let mut node = match &entry.content {
        FsContent::File(bytes) => MemNode::file(bytes.clone()),
        FsContent::Dir => MemNode::dir(),
        FsContent::Link(target) => MemNode::link(target.clone()),
        FsContent::Fifo => MemNode::fifo(),
    };
    if let Some(f) = entry.fault {
        node = node.with_fault(fs_op(f.op), fault_error(f.error));
    }
    if let Some(s) = entry.stale_size {
        node = node.with_stale_size(s);
    }
    if let Some(g) = entry.gate {
        node = node.with_gate(fs_op(g));
    }
    if entry.keep_version {
        node = node.keeping_version();
    }
    node
}

/// The in-memory provider as a fixture.
#[derive(Clone, Debug)]
pub struct MemoryFixture {
    provider: MemoryProvider,
    paths: PathMap,
}

impl MemoryFixture {
    /// Wraps a provider (clones share its filesystem and counters).
    pub fn new(provider: MemoryProvider) -> Self {
        Self {
            provider,
            paths: PathMap::identity(),
        }
    }

    /// The provider, for mounting.
    pub fn provider(&self) -> &MemoryProvider {
        &self.provider
    }
}

impl FsFixture for MemoryFixture {
    fn insert(&self, path: &str, entry: &FsEntry) -> Result<(), ConformanceError> {
        self.provider
            .insert(&self.paths.map_path(path), mem_node(entry));
        Ok(())
    }

    fn remove(&self, path: &str) -> Result<bool, ConformanceError> {
        Ok(self.provider.remove(&self.paths.map_path(path)))
    }

    fn release(&self, path: &str) -> Result<(), ConformanceError> {
        self.provider.release(&self.paths.map_path(path));
        Ok(())
    }

    fn wait_blocked(&self, path: &str) -> LocalFuture<'_, ()> {
        let p = self.paths.map_path(path);
        Box::pin(async move { self.provider.wait_blocked(&p).await })
    }

    fn counters(&self) -> Option<StepCounters> {
        let c = self.provider.counters();
        Some(StepCounters {
            reads: c.reads,
            probes: c.probes,
        })
    }

    fn reset_counters(&self) {
        self.provider.reset_counters();
    }

    fn paths(&self) -> &PathMap {
        &self.paths
    }
}

/// A real temporary directory `T`; removed when dropped.
#[derive(Debug)]
pub struct DiskFixture {
    _dir: tempfile::TempDir,
    paths: PathMap,
}

impl DiskFixture {
    /// Creates a fresh temporary root.
    pub fn new() -> Result<Self, ConformanceError> {
        let dir = tempfile::Builder::new()
            .prefix("dsh-conformance-")
            .tempdir()
            .map_err(|e| ConformanceError::io("create a temporary directory".into(), e))?;
        // Canonical, so the cap-std provider and the runtime see the same
        // spelling of T as the rewritten scenario paths (macOS /tmp → /private/tmp).
        let canonical = dir
            .path()
            .canonicalize()
            .map_err(|e| ConformanceError::io("canonicalize the temporary directory".into(), e))?;
        let root = Utf8PathBuf::from_path_buf(canonical).map_err(ConformanceError::NotUtf8)?;
        Ok(Self {
            _dir: dir,
            paths: PathMap::under(root),
        })
    }

    fn clear(path: &Utf8Path) -> Result<(), ConformanceError> {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(path)
                .map_err(|e| ConformanceError::io(format!("remove directory {path}"), e)),
            Ok(_) => std::fs::remove_file(path)
                .map_err(|e| ConformanceError::io(format!("remove {path}"), e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ConformanceError::io(format!("inspect {path}"), e)),
        }
    }
}

impl FsFixture for DiskFixture {
    fn insert(&self, path: &str, entry: &FsEntry) -> Result<(), ConformanceError> {
        let target = self.paths.map_path(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                ConformanceError::io(format!("create parent directories of {path}"), e)
            })?;
        }
        Self::clear(&target)?;
        match &entry.content {
            FsContent::File(bytes) => std::fs::write(&target, bytes)
                .map_err(|e| ConformanceError::io(format!("write {path}"), e)),
            FsContent::Dir => std::fs::create_dir(&target)
                .map_err(|e| ConformanceError::io(format!("create {path}"), e)),
            FsContent::Link(link) => std::os::unix::fs::symlink(self.paths.map(link), &target)
                .map_err(|e| ConformanceError::io(format!("create link {path}"), e)),
            FsContent::Fifo => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                target.as_std_path(),
                rustix::fs::Mode::from_raw_mode(0o644),
            )
            .map_err(|e| ConformanceError::io(format!("create fifo {path}"), e.into())),
        }
    }

    fn remove(&self, path: &str) -> Result<bool, ConformanceError> {
        let target = self.paths.map_path(path);
        let existed = std::fs::symlink_metadata(&target).is_ok();
        Self::clear(&target)?;
        Ok(existed)
    }

    fn release(&self, path: &str) -> Result<(), ConformanceError> {
        Err(ConformanceError::NoGates {
            path: path.to_owned(),
        })
    }

    fn wait_blocked(&self, _path: &str) -> LocalFuture<'_, ()> {
        // No gates on disk: never resolves (the runner refuses such scenarios first).
        Box::pin(std::future::pending())
    }

    fn counters(&self) -> Option<StepCounters> {
        None
    }

    fn reset_counters(&self) {}

    fn paths(&self) -> &PathMap {
        &self.paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/a/b/c", "/a/b/c")]
    #[case("/a/./b/../c", "/a/c")]
    #[case("//a//", "/a")]
    #[case("/", "/")]
    fn normalize_cases(#[case] input: &str, #[case] want: &str) {
        assert_eq!(normalize(input), want);
    }

    #[test]
    fn disk_fixture_materializes_every_kind() {
        let d = DiskFixture::new().unwrap();
        let file = FsEntry::plain(FsContent::File(b"root rule".to_vec()));
        d.insert("/work/repo/AGENTS.md", &file).unwrap();
        d.insert(
            "/work/repo/CLAUDE.md",
            &FsEntry::plain(FsContent::Link("/work/repo/AGENTS.md".into())),
        )
        .unwrap();
        d.insert("/work/repo/pipe", &FsEntry::plain(FsContent::Fifo))
            .unwrap();
        d.insert("/work/repo/sub", &FsEntry::plain(FsContent::Dir))
            .unwrap();
        let root = d.paths().root().unwrap().to_owned();
        let link = std::fs::read_link(root.join("work/repo/CLAUDE.md")).unwrap();
        assert_eq!(link, root.join("work/repo/AGENTS.md").as_std_path());
        assert_eq!(
            std::fs::read(root.join("work/repo/CLAUDE.md")).unwrap(),
            b"root rule"
        );
        use std::os::unix::fs::FileTypeExt;
        let ft = std::fs::symlink_metadata(root.join("work/repo/pipe"))
            .unwrap()
            .file_type();
        assert!(ft.is_fifo());
        assert!(root.join("work/repo/sub").is_dir());
        // Replacing a directory with a file, then removing it.
        d.insert("/work/repo/sub", &file).unwrap();
        assert!(root.join("work/repo/sub").is_file());
        assert!(d.remove("/work/repo").unwrap());
        assert!(!d.remove("/work/repo").unwrap());
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        fn scenario_path() -> impl Strategy<Value = String> {
            prop::collection::vec(prop_oneof!["a", "b", "\\.", "\\.\\.", "", "c d"], 0..8)
                .prop_map(|parts| format!("/{}", parts.join("/")))
        }

        proptest! {
            #[test]
            fn normalize_is_idempotent_and_clean(p in scenario_path()) {
                let n = normalize(&p);
                prop_assert!(n.starts_with('/'));
                prop_assert_eq!(normalize(&n), n.clone());
                prop_assert!(n == "/" || n.split('/').skip(1).all(|c| !c.is_empty() && c != "." && c != ".."));
            }

            #[test]
            fn disk_mapping_prefixes_the_normalized_path(p in scenario_path()) {
                let m = PathMap::under("/tmp/T".into());
                let mapped = m.map(&p);
                let n = normalize(&p);
                prop_assert!(mapped.starts_with("/tmp/T"));
                let rest = &mapped["/tmp/T".len()..];
                prop_assert_eq!(if rest.is_empty() { "/" } else { rest }, n.as_str());
            }

        }
    }
}
