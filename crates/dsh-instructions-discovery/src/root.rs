//! Project-root discovery (R-DISC-1) and the directory-chain helpers that
//! order sources from the root down to the cwd (R-DISC-3).

use camino::{Utf8Path, Utf8PathBuf};
use tokio_util::sync::CancellationToken;

use crate::paths::normalize;
use crate::provider::{Cancelled, FsProvider, MarkerProbe, Unavailable};

/// The project root of a session and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRoot {
    /// Absolute, lexically normalized root directory.
    pub root: Utf8PathBuf,
    /// Why this directory is the root.
    pub reason: RootReason,
}

/// Why a directory became the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootReason {
    /// The nearest directory (from the cwd up) holding this marker.
    Marker {
        /// The marker name found.
        marker: String,
    },
    /// No marker anywhere up to `/`: the cwd is the root.
    NoMarker,
    /// Checking this marker failed for a reason other than absence; the walk
    /// stopped here rather than cross into an ancestor project.
    ProbeFailed {
        /// The marker whose check failed.
        marker: String,
        /// Why it failed.
        error: Unavailable,
    },
}

/// Finds the project root: from `cwd` upward, the first directory in which
/// any of `markers` exists as a file, directory or symlink (R-DISC-1).
///
/// Within one directory the markers are checked in order and the first one
/// that does not report "missing" decides. A failed check makes that
/// directory the root (with a warning). No marker anywhere: `cwd` is the
/// root. Only existence is checked; nothing is read.
///
/// # Errors
///
/// [`Cancelled`] when `cancel` fires.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use camino::{Utf8Path, Utf8PathBuf};
/// use dsh_instructions_discovery::{find_project_root, root::RootReason};
/// use dsh_instructions_discovery::{CancellationToken, memory::{MemNode, MemoryProvider}};
///
/// let fs = MemoryProvider::new(vec![Utf8PathBuf::from("/")]);
/// fs.insert(Utf8Path::new("/repo/.git"), MemNode::dir());
/// fs.insert(Utf8Path::new("/repo/pkg/src"), MemNode::dir());
/// let found = find_project_root(
///     &fs,
///     Utf8Path::new("/repo/pkg/src"),
///     &[".git".to_owned()],
///     &CancellationToken::new(),
/// )
/// .await
/// .unwrap();
/// assert_eq!(found.root, "/repo");
/// assert_eq!(found.reason, RootReason::Marker { marker: ".git".to_owned() });
/// # });
/// ```
pub async fn find_project_root(
    provider: &dyn FsProvider,
    cwd: &Utf8Path,
    markers: &[String],
    cancel: &CancellationToken,
) -> Result<ProjectRoot, Cancelled> {
    let cwd = normalize(cwd);
    // Every (directory, marker) pair from the cwd upward, in walk order; the
    // provider checks them in one batch and stops at the first hit.
    let pairs: Vec<(&Utf8Path, &String)> = cwd
        .ancestors()
        .flat_map(|dir| markers.iter().map(move |m| (dir, m)))
        .collect();
    let paths: Vec<Utf8PathBuf> = pairs.iter().map(|(dir, m)| dir.join(m)).collect();
    let found = provider.markers_until_found(&paths, cancel).await?;
    for ((dir, marker), (path, probe)) in pairs.iter().zip(paths.iter().zip(found)) {
        match probe {
            MarkerProbe::Missing => {}
            MarkerProbe::Exists => {
                return Ok(ProjectRoot {
                    root: (*dir).to_owned(),
                    reason: RootReason::Marker {
                        marker: (*marker).clone(),
                    },
                });
            }
            MarkerProbe::Failed(error) => {
                tracing::warn!(
                    marker = %path,
                    %error,
                    "project-root marker check failed; stopping the walk here"
                );
                return Ok(ProjectRoot {
                    root: (*dir).to_owned(),
                    reason: RootReason::ProbeFailed {
                        marker: (*marker).clone(),
                        error,
                    },
                });
            }
        }
    }
    Ok(ProjectRoot {
        root: cwd,
        reason: RootReason::NoMarker,
    })
}

/// The directories from `root` down to `cwd`, both included, root first.
/// If `cwd` is not under `root`, just `[cwd]`.
///
/// ```
/// use camino::Utf8Path;
/// use dsh_instructions_discovery::root::chain;
/// assert_eq!(chain(Utf8Path::new("/r"), Utf8Path::new("/r/a/b")), ["/r", "/r/a", "/r/a/b"]);
/// assert_eq!(chain(Utf8Path::new("/r"), Utf8Path::new("/elsewhere")), ["/elsewhere"]);
/// ```
pub fn chain(root: &Utf8Path, cwd: &Utf8Path) -> Vec<Utf8PathBuf> {
    let (root, cwd) = (normalize(root), normalize(cwd));
    let Ok(rel) = cwd.strip_prefix(&root) else {
        return vec![cwd];
    };
    let mut dirs = Vec::with_capacity(rel.components().count() + 1);
    let mut current = root.clone();
    dirs.push(root);
    for name in rel {
        current.push(name);
        dirs.push(current.clone());
    }
    dirs
}

/// `dir` relative to `root` with `/` separators: `.` for the root itself,
/// `None` when `dir` is not under `root`.
///
/// ```
/// use camino::Utf8Path;
/// use dsh_instructions_discovery::root::relative_dir;
/// assert_eq!(relative_dir(Utf8Path::new("/r"), Utf8Path::new("/r")).as_deref(), Some("."));
/// assert_eq!(relative_dir(Utf8Path::new("/r"), Utf8Path::new("/r/a/b")).as_deref(), Some("a/b"));
/// assert_eq!(relative_dir(Utf8Path::new("/r"), Utf8Path::new("/rx")), None);
/// ```
pub fn relative_dir(root: &Utf8Path, dir: &Utf8Path) -> Option<String> {
    let (root, dir) = (normalize(root), normalize(dir));
    let rel = dir.strip_prefix(&root).ok()?;
    if rel.as_str().is_empty() {
        Some(".".to_owned())
    } else {
        Some(slash_join(rel))
    }
}

/// The project-relative `/` path of a file under `root` (the form shown to
/// the model); `None` when `file` is not strictly under `root`.
///
/// ```
/// use camino::Utf8Path;
/// use dsh_instructions_discovery::root::display_path;
/// let root = Utf8Path::new("/r");
/// assert_eq!(display_path(root, Utf8Path::new("/r/pkg/AGENTS.md")).as_deref(), Some("pkg/AGENTS.md"));
/// assert_eq!(display_path(root, Utf8Path::new("/r")), None);
/// ```
pub fn display_path(root: &Utf8Path, file: &Utf8Path) -> Option<String> {
    let (root, file) = (normalize(root), normalize(file));
    let rel = file.strip_prefix(&root).ok()?;
    (!rel.as_str().is_empty()).then(|| slash_join(rel))
}

fn slash_join(rel: &Utf8Path) -> String {
    // Explicit `/` so the text is the same on every platform.
    rel.iter().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Errno, FsOp, MemNode, MemoryProvider};
    use rstest::rstest;

    fn markers(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    fn fs_with(entries: &[(&str, MemNode)]) -> MemoryProvider {
        let fs = MemoryProvider::new(vec![Utf8PathBuf::from("/")]);
        for (path, node) in entries {
            fs.insert(Utf8Path::new(path), node.clone());
        }
        fs
    }

    async fn find(fs: &MemoryProvider, cwd: &str, names: &[&str]) -> ProjectRoot {
        find_project_root(
            fs,
            Utf8Path::new(cwd),
            &markers(names),
            &CancellationToken::new(),
        )
        .await
        .unwrap()
    }

    fn marker(name: &str) -> RootReason {
        RootReason::Marker {
            marker: name.to_owned(),
        }
    }

    #[tokio::test]
    async fn git_dir_marks_the_root() {
        let fs = fs_with(&[
            ("/w/repo/.git", MemNode::dir()),
            ("/w/repo/a/b", MemNode::dir()),
        ]);
        let found = find(&fs, "/w/repo/a/b", &[".git"]).await;
        assert_eq!(found.root, "/w/repo");
        assert_eq!(found.reason, marker(".git"));
    }

    #[tokio::test]
    async fn git_file_of_a_worktree_counts() {
        let fs = fs_with(&[
            ("/w/repo/.git", MemNode::file("gitdir: /elsewhere")),
            ("/w/repo/a", MemNode::dir()),
        ]);
        assert_eq!(find(&fs, "/w/repo/a", &[".git"]).await.root, "/w/repo");
    }

    #[tokio::test]
    async fn dangling_marker_symlink_counts() {
        let fs = fs_with(&[
            ("/w/repo/.git", MemNode::link("/nowhere")),
            ("/w/repo/a", MemNode::dir()),
        ]);
        assert_eq!(find(&fs, "/w/repo/a", &[".git"]).await.root, "/w/repo");
    }

    #[tokio::test]
    async fn no_marker_means_cwd_is_the_root() {
        let fs = fs_with(&[("/w/repo/a", MemNode::dir())]);
        let found = find(&fs, "/w/repo/a", &[".git"]).await;
        assert_eq!(found.root, "/w/repo/a");
        assert_eq!(found.reason, RootReason::NoMarker);
    }

    #[tokio::test]
    async fn empty_marker_list_means_cwd() {
        let fs = fs_with(&[("/w/.git", MemNode::dir()), ("/w/a", MemNode::dir())]);
        assert_eq!(find(&fs, "/w/a", &[]).await.root, "/w/a");
    }

    #[tokio::test]
    async fn nested_repositories_pick_the_nearest() {
        let fs = fs_with(&[
            ("/w/outer/.git", MemNode::dir()),
            ("/w/outer/inner/.git", MemNode::file("gitdir: x")),
            ("/w/outer/inner/src", MemNode::dir()),
        ]);
        assert_eq!(
            find(&fs, "/w/outer/inner/src", &[".git"]).await.root,
            "/w/outer/inner"
        );
        assert_eq!(find(&fs, "/w/outer", &[".git"]).await.root, "/w/outer");
    }

    #[tokio::test]
    async fn any_marker_of_the_list_counts() {
        let fs = fs_with(&[
            ("/w/outer/.git", MemNode::dir()),
            ("/w/outer/inner/.hg", MemNode::dir()),
        ]);
        let found = find(&fs, "/w/outer/inner", &[".git", ".hg"]).await;
        assert_eq!(found.root, "/w/outer/inner");
        assert_eq!(found.reason, marker(".hg"));
    }

    #[tokio::test]
    async fn failed_marker_check_stops_the_walk() {
        let fs = fs_with(&[
            ("/w/outer/.git", MemNode::dir()),
            (
                "/w/outer/inner/.git",
                MemNode::dir().with_fault(FsOp::Stat, Errno::Eacces),
            ),
            ("/w/outer/inner/src", MemNode::dir()),
        ]);
        let found = find(&fs, "/w/outer/inner/src", &[".git"]).await;
        assert_eq!(found.root, "/w/outer/inner");
        assert_eq!(
            found.reason,
            RootReason::ProbeFailed {
                marker: ".git".to_owned(),
                error: Unavailable::PermissionDenied
            }
        );
    }

    #[tokio::test]
    async fn read_faults_do_not_affect_marker_checks() {
        let fs = fs_with(&[
            ("/w/.git", MemNode::dir()),
            (
                "/w/a/.git",
                MemNode::file("x").with_fault(FsOp::Read, Errno::Eio),
            ),
        ]);
        assert_eq!(find(&fs, "/w/a", &[".git"]).await.reason, marker(".git"));
    }

    #[tokio::test]
    async fn walk_probes_each_ancestor_once_per_marker() {
        let fs = fs_with(&[("/a/b/c", MemNode::dir())]);
        find(&fs, "/a/b/c", &[".git", ".hg"]).await;
        // c, b, a, / × two markers
        assert_eq!(fs.counters().probes, 8);
        assert_eq!(fs.counters().reads, 0);
    }

    #[tokio::test]
    async fn cancelled_walk_reports_cancelled() {
        let fs = fs_with(&[("/a", MemNode::dir())]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result =
            find_project_root(&fs, Utf8Path::new("/a"), &markers(&[".git"]), &cancel).await;
        assert_eq!(result, Err(Cancelled));
    }

    #[tokio::test]
    async fn git_dir_on_disk_marks_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::create_dir_all(base.join("repo/.git")).unwrap();
        std::fs::create_dir_all(base.join("repo/a/b")).unwrap();
        let fs = crate::CapStdProvider::new([base.clone()], cap_std::ambient_authority()).unwrap();
        let found = find_project_root(
            &fs,
            &base.join("repo/a/b"),
            &markers(&[".git"]),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(found.root, base.join("repo"));
    }

    #[rstest]
    #[case("/r", "/r", &["/r"])]
    #[case("/r", "/r/a/b", &["/r", "/r/a", "/r/a/b"])]
    #[case("/", "/a", &["/", "/a"])]
    #[case("/r", "/rx/a", &["/rx/a"])]
    #[case("/r/a", "/r", &["/r"])]
    #[case("/r/", "/r/./a/", &["/r", "/r/a"])]
    fn chains(#[case] root: &str, #[case] cwd: &str, #[case] expected: &[&str]) {
        let got = chain(Utf8Path::new(root), Utf8Path::new(cwd));
        assert_eq!(
            got,
            expected.iter().map(Utf8PathBuf::from).collect::<Vec<_>>()
        );
    }

    #[rstest]
    #[case("/r", "/r", Some("."))]
    #[case("/r", "/r/a", Some("a"))]
    #[case("/r", "/r/a/b", Some("a/b"))]
    #[case("/r", "/ra", None)]
    #[case("/r/a", "/r", None)]
    #[case("/", "/x/y", Some("x/y"))]
    fn relative_dirs(#[case] root: &str, #[case] dir: &str, #[case] expected: Option<&str>) {
        assert_eq!(
            relative_dir(Utf8Path::new(root), Utf8Path::new(dir)).as_deref(),
            expected
        );
    }

    #[rstest]
    #[case("/r", "/r/AGENTS.md", Some("AGENTS.md"))]
    #[case("/r", "/r/pkg/CLAUDE.local.md", Some("pkg/CLAUDE.local.md"))]
    #[case("/r", "/r", None)]
    #[case("/r", "/other/AGENTS.md", None)]
    #[case("/r", "/rr/AGENTS.md", None)]
    fn display_paths(#[case] root: &str, #[case] file: &str, #[case] expected: Option<&str>) {
        assert_eq!(
            display_path(Utf8Path::new(root), Utf8Path::new(file)).as_deref(),
            expected
        );
    }
}
