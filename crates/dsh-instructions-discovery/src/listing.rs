//! Listing a rules directory (R-RULE-1): one provider primitive,
//! [`FsProvider::list_dir`] (the names in one directory, with what each
//! entry is before any link is followed), and one provider-independent
//! walk over it, [`list_rule_files`], so both providers bound, order and
//! confine a listing alike by construction.
//!
//! The walk never opens a file: a link is classified with
//! [`FsProvider::path_kinds`], which follows it only inside the trusted
//! roots, and a FIFO or device is never more than a name here. Its bounds
//! (depth, rule files, directories, entries) make every listing finish,
//! link loops included.

use camino::{Utf8Path, Utf8PathBuf};
use tokio_util::sync::CancellationToken;

use crate::provider::{Cancelled, DirListing, EntryKind, FsProvider, PathKind, Unavailable};

/// Something a rules-directory listing skipped, for a diagnostic naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleFileProblem {
    /// An entry named like a rule file that is no regular file (a FIFO,
    /// socket or device, or a link to one), never opened.
    NotARegularFile {
        /// Path relative to the rules directory.
        rel: String,
    },
    /// An entry or directory that could not be classified or listed
    /// (a link out of the trusted roots, a loop, permissions).
    Unavailable {
        /// Path relative to the rules directory (`.` for itself).
        rel: String,
        /// Why.
        reason: Unavailable,
    },
    /// More rule files than [`RuleFiles::MAX_FILES`](crate::listing::RuleFiles::MAX_FILES): the ones after the
    /// first in path order were skipped.
    TooManyFiles {
        /// How many were skipped.
        skipped: usize,
    },
    /// Subdirectories deeper than [`RuleFiles::MAX_DEPTH`](crate::listing::RuleFiles::MAX_DEPTH) levels, or more
    /// directories or entries than the walk visits, were not searched.
    TooDeep {
        /// The first directory not searched, relative to the rules
        /// directory.
        rel: String,
    },
}

/// The rule files of one rules directory, from [`list_rule_files`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleFiles {
    /// Paths relative to the rules directory, `/`-separated, in byte order
    /// (so `a.md` before `a/z.md`), at most [`RuleFiles::MAX_FILES`](crate::listing::RuleFiles::MAX_FILES).
    pub files: Vec<String>,
    /// What was skipped, in the order met.
    pub problems: Vec<RuleFileProblem>,
}

impl RuleFiles {
    /// A rule file's path has at most this many components below the rules
    /// directory (the directory itself and three levels of subdirectories).
    pub const MAX_DEPTH: usize = 4;
    /// At most this many rule files per rules directory.
    pub const MAX_FILES: usize = 256;
    /// At most this many directories are listed per rules directory (links
    /// to directories can multiply them).
    pub const MAX_DIRS: usize = 256;
}

/// Lists the rule files under `rules_dir` (R-RULE-1): the files whose name
/// ends with `suffix` after a non-empty stem, searching subdirectories when
/// `recursive`, bounded by [`RuleFiles::MAX_DEPTH`](crate::listing::RuleFiles::MAX_DEPTH),
/// [`RuleFiles::MAX_FILES`](crate::listing::RuleFiles::MAX_FILES) and [`RuleFiles::MAX_DIRS`](crate::listing::RuleFiles::MAX_DIRS). Links are followed
/// only inside the trusted roots (by the provider); no file is opened. An
/// absent rules directory is an empty listing.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use dsh_instructions_discovery::{CancellationToken, camino::Utf8Path, listing::list_rule_files, memory::{MemNode, MemoryProvider}};
/// let fs = MemoryProvider::new(vec!["/p".into()]);
/// fs.insert("/p/.claude/rules/a/z.md".into(), MemNode::file("z"));
/// fs.insert("/p/.claude/rules/a.md".into(), MemNode::file("a"));
/// fs.insert("/p/.claude/rules/notes.txt".into(), MemNode::file("n"));
/// let cancel = CancellationToken::new();
/// let found = list_rule_files(&fs, Utf8Path::new("/p/.claude/rules"), ".md", true, &cancel)
///     .await
///     .unwrap();
/// assert_eq!(found.files, ["a.md", "a/z.md"]);
/// assert!(found.problems.is_empty());
/// # });
/// ```
pub async fn list_rule_files(
    provider: &dyn FsProvider,
    rules_dir: &Utf8Path,
    suffix: &str,
    recursive: bool,
    cancel: &CancellationToken,
) -> Result<RuleFiles, Cancelled> {
    walk(provider, rules_dir, None, suffix, recursive, cancel).await
}

/// [`list_rule_files`] of each of `rules_dirs`, in order: their own
/// listings in one [`FsProvider::list_dirs`] call (a chain's rules
/// directories in one pass over a provider's handles), their
/// subdirectories as [`list_rule_files`] lists them.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use dsh_instructions_discovery::{CancellationToken, camino::Utf8PathBuf, listing::list_rule_dirs, memory::{MemNode, MemoryProvider}};
/// let fs = MemoryProvider::new(vec!["/p".into()]);
/// fs.insert("/p/.claude/rules/a.md".into(), MemNode::file("a"));
/// fs.insert("/p/d/.claude/rules/b/c.md".into(), MemNode::file("c"));
/// let dirs: Vec<Utf8PathBuf> = vec!["/p/.claude/rules".into(), "/p/x/.claude/rules".into(), "/p/d/.claude/rules".into()];
/// let found = list_rule_dirs(&fs, &dirs, ".md", true, &CancellationToken::new()).await.unwrap();
/// let files: Vec<&[String]> = found.iter().map(|f| f.files.as_slice()).collect();
/// assert_eq!(files, [&["a.md".to_owned()][..], &[], &["b/c.md".to_owned()]]);
/// # });
/// ```
pub async fn list_rule_dirs(
    provider: &dyn FsProvider,
    rules_dirs: &[Utf8PathBuf],
    suffix: &str,
    recursive: bool,
    cancel: &CancellationToken,
) -> Result<Vec<RuleFiles>, Cancelled> {
    let listings = provider.list_dirs(rules_dirs, cancel).await?;
    let mut listings = listings.into_iter();
    let mut out = Vec::with_capacity(rules_dirs.len());
    for dir in rules_dirs {
        // A provider that answered too few lists the rest itself.
        let first = listings.next();
        out.push(walk(provider, dir, first, suffix, recursive, cancel).await?);
    }
    Ok(out)
}

/// The walk of [`list_rule_files`], `first` the rules directory's own
/// listing when the caller has it.
async fn walk(
    provider: &dyn FsProvider,
    rules_dir: &Utf8Path,
    mut first: Option<DirListing>,
    suffix: &str,
    recursive: bool,
    cancel: &CancellationToken,
) -> Result<RuleFiles, Cancelled> {
    let is_rule = |name: &str| name.len() > suffix.len() && name.ends_with(suffix);
    let mut out = RuleFiles::default();
    let mut found: Vec<String> = Vec::new();
    // Depth-first in name order, so what the bounds cut is the same on
    // every provider and every run.
    let mut pending: Vec<String> = vec![String::new()];
    let mut listed = 0usize;
    while let Some(rel) = pending.pop() {
        if listed == RuleFiles::MAX_DIRS {
            out.problems
                .push(RuleFileProblem::TooDeep { rel: shown(&rel) });
            break;
        }
        listed += 1;
        let dir = if rel.is_empty() {
            rules_dir.to_owned()
        } else {
            rules_dir.join(&rel)
        };
        let listing = match first.take() {
            Some(listing) if rel.is_empty() => listing,
            _ => provider.list_dir(&dir, cancel).await?,
        };
        let (entries, truncated) = match listing {
            DirListing::Entries { entries, truncated } => (entries, truncated),
            DirListing::Absent => continue,
            DirListing::Unavailable(reason) => {
                out.problems.push(RuleFileProblem::Unavailable {
                    rel: shown(&rel),
                    reason,
                });
                continue;
            }
        };
        if truncated {
            out.problems
                .push(RuleFileProblem::TooDeep { rel: shown(&rel) });
        }
        let depth = if rel.is_empty() {
            1
        } else {
            rel.split('/').count() + 1
        };
        let child = |name: &str| {
            if rel.is_empty() {
                name.to_owned()
            } else {
                format!("{rel}/{name}")
            }
        };
        // Links are classified together, one batch per directory.
        let links: Vec<Utf8PathBuf> = entries
            .iter()
            .filter(|(_, k)| *k == EntryKind::Link)
            .map(|(name, _)| dir.join(name))
            .collect();
        let mut link_kinds = if links.is_empty() {
            Vec::new()
        } else {
            provider.path_kinds(&links, cancel).await?
        }
        .into_iter();
        let mut subdirs = Vec::new();
        for (name, kind) in entries {
            let kind = match kind {
                EntryKind::Link => match link_kinds.next() {
                    Some(PathKind::File) => EntryKind::File,
                    Some(PathKind::Directory) => EntryKind::Dir,
                    Some(PathKind::Other) => EntryKind::Other,
                    Some(PathKind::Absent) | None => continue,
                    Some(PathKind::Unavailable(reason)) => {
                        out.problems.push(RuleFileProblem::Unavailable {
                            rel: child(&name),
                            reason,
                        });
                        continue;
                    }
                },
                k => k,
            };
            match kind {
                EntryKind::File if is_rule(&name) => found.push(child(&name)),
                EntryKind::Other if is_rule(&name) => {
                    out.problems
                        .push(RuleFileProblem::NotARegularFile { rel: child(&name) });
                }
                EntryKind::Dir if recursive => {
                    if depth < RuleFiles::MAX_DEPTH {
                        subdirs.push(child(&name));
                    } else {
                        out.problems
                            .push(RuleFileProblem::TooDeep { rel: child(&name) });
                    }
                }
                _ => {}
            }
        }
        // Popped in name order.
        pending.extend(subdirs.into_iter().rev());
    }
    found.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    if found.len() > RuleFiles::MAX_FILES {
        out.problems.push(RuleFileProblem::TooManyFiles {
            skipped: found.len() - RuleFiles::MAX_FILES,
        });
        found.truncate(RuleFiles::MAX_FILES);
    }
    out.files = found;
    Ok(out)
}

fn shown(rel: &str) -> String {
    if rel.is_empty() {
        ".".to_owned()
    } else {
        rel.to_owned()
    }
}
