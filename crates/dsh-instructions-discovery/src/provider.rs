//! The filesystem provider contract (R-DISC-4 .. R-DISC-8).
//!
//! Every operation is async, observes a [`CancellationToken`], and classifies
//! its result instead of failing: a probe is [`Probe::Present`],
//! [`Probe::Absent`] (confirmed) or [`Probe::Unavailable`] (with a reason).
//! The only error an operation returns is [`Cancelled`].

use std::future::Future;
use std::pin::Pin;

use camino::{Utf8Path, Utf8PathBuf};
use tokio_util::sync::CancellationToken;

mod forward;

pub use crate::text::decode_text;
pub use forward::{Answer, Call, Forward, Observe};

/// Symlink hops every provider follows before an operation reports
/// [`Unavailable::Loop`] (the Linux kernel's limit, so the providers agree on
/// deep chains). Part of the contract, so it lives here, not with either
/// provider.
pub const MAX_LINK_HOPS: u32 = 40;

/// A boxed, sendable future: the return type of [`FsProvider`] methods, so the
/// trait stays object safe (`Arc<dyn FsProvider>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The operation observed its cancellation token and stopped (R-DISC-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("operation cancelled")]
pub struct Cancelled;

/// Opaque version of a file as the provider sees it: equal versions mean the
/// provider vouches that the content did not change (R-STATE-8).
///
/// Providers build it from whatever they have (inode, size, timestamps, a
/// counter); callers only compare it. A provider may also mark a version
/// *settled*: the file had not changed for a while when it was looked at,
/// so no later change can share its timestamps (the "racy timestamp" rule).
/// Only a settled version may be remembered beyond the process that saw it
/// ([`FileVersion::is_settled`](crate::provider::FileVersion::is_settled)); the mark is not part of equality.
#[derive(Debug, Clone, Copy)]
pub struct FileVersion {
    words: [u64; 4],
    settled: bool,
}

impl PartialEq for FileVersion {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
    }
}

impl Eq for FileVersion {}

impl std::hash::Hash for FileVersion {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.words.hash(state);
    }
}

impl FileVersion {
    /// Builds a version from four provider-chosen words (not settled).
    ///
    /// ```
    /// use dsh_instructions_discovery::provider::FileVersion;
    /// assert_eq!(FileVersion::new([1, 2, 3, 4]), FileVersion::new([1, 2, 3, 4]));
    /// assert_ne!(FileVersion::new([1, 2, 3, 4]), FileVersion::new([1, 2, 3, 5]));
    /// ```
    pub const fn new(words: [u64; 4]) -> Self {
        Self {
            words,
            settled: false,
        }
    }

    /// A version the provider vouches for beyond this process: the file's
    /// last change lies far enough before the moment it was looked at that
    /// any later change gets other words.
    ///
    /// ```
    /// use dsh_instructions_discovery::provider::FileVersion;
    /// let settled = FileVersion::settled([1, 2, 3, 4]);
    /// assert!(settled.is_settled() && !FileVersion::new([1, 2, 3, 4]).is_settled());
    /// assert_eq!(settled, FileVersion::new([1, 2, 3, 4]), "the mark is not compared");
    /// ```
    pub const fn settled(words: [u64; 4]) -> Self {
        Self {
            words,
            settled: true,
        }
    }

    /// Whether it may be remembered beyond the process that saw it.
    pub const fn is_settled(&self) -> bool {
        self.settled
    }

    /// The four words, for a host that persists versions (with
    /// [`FileVersion::settled`](crate::provider::FileVersion::settled) to read them back).
    pub const fn words(&self) -> [u64; 4] {
        self.words
    }
}

/// Identity of the underlying file a candidate resolves to, used to load the
/// same file at most once (R-DISC-3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileIdentity {
    /// Device and inode of the resolved target.
    Inode {
        /// Device number.
        dev: u64,
        /// Inode number.
        ino: u64,
    },
    /// Canonical absolute path of the resolved target, for providers without
    /// inodes.
    Path(Utf8PathBuf),
}

/// Why a path could not be classified as present or absent (R-DISC-4).
///
/// `Unavailable` never removes loaded instructions (R-DISC-5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// `EACCES`/`EPERM`.
    #[error("permission denied")]
    PermissionDenied,
    /// `ELOOP` or too many symlink hops.
    #[error("too many levels of symbolic links")]
    Loop,
    /// The operation timed out.
    #[error("timed out")]
    TimedOut,
    /// A symlink (or the path itself) leads outside every trusted root (R-DISC-7).
    #[error("outside trusted roots")]
    OutsideTrustedRoots,
    /// The file is larger than `max_source_bytes` (by metadata or while
    /// streaming, R-DISC-6).
    #[error("larger than max_source_bytes ({limit} bytes)")]
    TooLarge {
        /// The configured per-file cap.
        limit: u64,
    },
    /// Any other I/O failure, with the OS message.
    #[error("I/O error: {0}")]
    Io(String),
}

/// A regular file found by a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentFile {
    /// Size reported by metadata (may be stale; reads re-check, R-DISC-6).
    pub size: u64,
    /// Opaque version for the version cache.
    pub version: FileVersion,
    /// What the candidate resolves to, for identity dedup.
    pub identity: FileIdentity,
}

/// Classification of one candidate path (R-DISC-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// A regular file (after following symlinks).
    Present(PresentFile),
    /// Confirmed absent: not found, `ENOTDIR`, dangling link, or not a regular
    /// file (directory, FIFO, socket, device).
    Absent,
    /// Could not be classified; see the reason.
    Unavailable(Unavailable),
}

/// Text loaded by a bounded read (R-DISC-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedText {
    /// Content with a leading UTF-8 BOM dropped and invalid UTF-8 replaced by
    /// U+FFFD.
    pub text: String,
    /// Version of the file that was read (from the open handle).
    pub version: FileVersion,
    /// Identity of the file that was read.
    pub identity: FileIdentity,
    /// Raw bytes read from the file.
    pub bytes_read: u64,
}

/// Result of a bounded read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The whole file was read within the cap.
    Loaded(LoadedText),
    /// The file disappeared or stopped being a regular file since the probe.
    Absent,
    /// The read failed or exceeded the cap.
    Unavailable(Unavailable),
}

/// Result of a root-marker existence check (R-DISC-1): the marker may be a
/// file, a directory or a symlink; its content is never read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkerProbe {
    /// Something exists under that name.
    Exists,
    /// Nothing exists under that name (`ENOENT`/`ENOTDIR`).
    Missing,
    /// The check failed for another reason: the root walk stops here.
    Failed(Unavailable),
}

/// What a path names, for shell touches (R-DISC-10): its kind after
/// following symlinks inside the trusted roots, from metadata alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Something else that exists (FIFO, socket, device).
    Other,
    /// Nothing there (`ENOENT`, `ENOTDIR`, a dangling link).
    Absent,
    /// Could not be classified (outside every trusted root included).
    Unavailable(Unavailable),
}

/// What a directory entry is, as the directory itself says (no link
/// followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (its target not looked at).
    Link,
    /// Anything else: FIFO, socket, device.
    Other,
}

/// The entries of one directory, from [`FsProvider::list_dir`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirListing {
    /// The entries, in byte order of their names (`.` and `..` left out,
    /// names that are not UTF-8 left out), at most
    /// [`DirListing::MAX_ENTRIES`](crate::provider::DirListing::MAX_ENTRIES); `truncated` when there were more.
    Entries {
        /// Name and kind of each entry.
        entries: Vec<(String, EntryKind)>,
        /// More entries than [`DirListing::MAX_ENTRIES`](crate::provider::DirListing::MAX_ENTRIES) existed.
        truncated: bool,
    },
    /// No directory there (nothing, a file, a dangling link).
    Absent,
    /// Could not be listed (outside the trusted roots included).
    Unavailable(Unavailable),
}

impl DirListing {
    /// At most this many entries of one directory are returned.
    pub const MAX_ENTRIES: usize = 65_536;
}

/// What [`FsProvider::probe_dirs_missing`] returns: the probes of every
/// directory, as [`FsProvider::probe_dirs`] gives them, and which of the
/// directories the provider saw to be missing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbedDirs {
    /// One list of probes per directory, one probe per name.
    pub probes: Vec<Vec<Probe>>,
    /// One flag per directory: `true` when the provider saw that no
    /// directory is there (every probe in it is then [`Probe::Absent`]);
    /// `false` when it is there or the provider does not know.
    pub missing: Vec<bool>,
}

/// A filesystem as the instruction loader sees it.
///
/// Paths are absolute and lexically normalized. Implementations must observe
/// `cancel` between (and, where they can block, during) operations and must
/// never block the async executor.
pub trait FsProvider: Send + Sync + std::fmt::Debug {
    /// Resolves `path` (following a final-component symlink) and classifies it.
    fn probe<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Probe, Cancelled>>;

    /// Probes several candidate names in one directory, in order. Providers
    /// may override this to probe relative to one open directory handle.
    fn probe_many<'a>(
        &'a self,
        dir: &'a Utf8Path,
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        Box::pin(each(names, move |name| async move {
            self.probe(&dir.join(name), cancel).await
        }))
    }

    /// Probes the same candidate names in several directories (for example a
    /// root-to-cwd chain, each directory the child of the one before), in
    /// order. Providers may override this to do the whole batch in one
    /// blocking task and to open each directory relative to its parent.
    ///
    /// A decorator (counting, logging, tracing) must forward this,
    /// [`FsProvider::markers_until_found`] and [`FsProvider::read_many`] to
    /// the wrapped provider: the
    /// default falls back to one [`FsProvider::probe_many`] per directory,
    /// which is correct but costs the wrapped provider's batching (on disk,
    /// a blocking hand-off per directory instead of one per batch).
    /// [`Forward`] forwards every method; a decorator is its observer.
    fn probe_dirs<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Vec<Probe>>, Cancelled>> {
        Box::pin(each(dirs, |dir| self.probe_many(dir, names, cancel)))
    }

    /// [`FsProvider::probe_dirs`], also telling which of `dirs` the
    /// provider saw to be no directory at all (no entry, or a path through
    /// something that is no directory) while probing them: then
    /// [`FsProvider::list_dir`] of it would say [`DirListing::Absent`] too,
    /// and a caller may skip that listing (a known directory's absent rules
    /// directories, R-RULE-1, R-HOOK-6). `missing[i]` is `true` only when the
    /// provider knows; the default knows nothing and says `false` for every
    /// directory, which only costs the caller its listings. Decorators must
    /// forward it (see [`FsProvider::probe_dirs`]).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use dsh_instructions_discovery::{CancellationToken, CapStdProvider, FsProvider, camino::Utf8PathBuf, cap_std::ambient_authority, provider::Probe};
    /// let tmp = tempfile::tempdir().unwrap();
    /// let root = Utf8PathBuf::from_path_buf(tmp.path().canonicalize().unwrap()).unwrap();
    /// std::fs::create_dir(root.join("pkg")).unwrap();
    /// let fs = CapStdProvider::new(vec![root.clone()], ambient_authority()).unwrap();
    /// let dirs = [root.join("pkg"), root.join("pkg/.claude/rules")];
    /// let names = ["AGENTS.md".to_owned()];
    /// let probed = fs
    ///     .probe_dirs_missing(&dirs, &names, &CancellationToken::new())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(probed.probes, [vec![Probe::Absent], vec![Probe::Absent]]);
    /// assert_eq!(probed.missing, [false, true]);
    /// # });
    /// ```
    fn probe_dirs_missing<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ProbedDirs, Cancelled>> {
        Box::pin(async move {
            let probes = self.probe_dirs(dirs, names, cancel).await?;
            let missing = vec![false; probes.len()];
            Ok(ProbedDirs { probes, missing })
        })
    }

    /// Probes several unrelated paths, in order, one result each (the
    /// targets of `@path` imports, R-IMP-2). Providers may override this to
    /// probe the whole list in one blocking task; decorators must forward it
    /// (see [`FsProvider::probe_dirs`]).
    fn probe_paths<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        Box::pin(each(paths, |path| self.probe(path, cancel)))
    }

    /// Checks root markers in order and stops after the first result that is
    /// not [`MarkerProbe::Missing`]: the returned list is a prefix of
    /// `paths`, one result each (R-DISC-1 walks markers this way).
    fn markers_until_found<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<MarkerProbe>, Cancelled>> {
        Box::pin(async move {
            let mut out = Vec::new();
            for path in paths {
                let found = self.marker(path, cancel).await?;
                let stop = found != MarkerProbe::Missing;
                out.push(found);
                if stop {
                    break;
                }
            }
            Ok(out)
        })
    }

    /// Reads `path` as text, refusing more than `max_source_bytes` raw bytes
    /// (R-DISC-6). FIFOs and devices are never opened.
    fn read_text<'a>(
        &'a self,
        path: &'a Utf8Path,
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>>;

    /// Reads several files, in order, one outcome each (same rules as
    /// [`FsProvider::read_text`]). Providers may override this to read the
    /// whole list in one blocking task; decorators must forward it (see
    /// [`FsProvider::probe_dirs`]).
    fn read_many<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ReadOutcome>, Cancelled>> {
        Box::pin(each(paths, move |path| {
            self.read_text(path, max_source_bytes, cancel)
        }))
    }

    /// Classifies several paths, in order, one result each, by metadata
    /// only: never opens a file (shell touches, R-DISC-10). Links are
    /// followed inside the trusted roots like [`FsProvider::probe`]; a path
    /// outside every root is [`PathKind::Unavailable`].
    ///
    /// The default knows only what [`FsProvider::probe`] tells: a regular
    /// file, or absent (a directory reads as absent, which errs on the side
    /// of touching less). Providers override it to recognise directories
    /// and to classify the whole list in one blocking task; decorators must
    /// forward it (see [`FsProvider::probe_dirs`]).
    fn path_kinds<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<PathKind>, Cancelled>> {
        // Through `probe_paths`, so a provider that batches that list
        // batches this one too.
        Box::pin(async move {
            Ok(self
                .probe_paths(paths, cancel)
                .await?
                .into_iter()
                .map(|probe| match probe {
                    Probe::Present(_) => PathKind::File,
                    Probe::Absent => PathKind::Absent,
                    Probe::Unavailable(reason) => PathKind::Unavailable(reason),
                })
                .collect())
        })
    }

    /// Lists the entries of the directory `dir` (R-RULE-1's rules
    /// directories; see [`crate::listing::list_rule_files`]): `dir` itself is
    /// followed like [`FsProvider::probe`] follows a path (links inside the
    /// trusted roots only), its entries are named with what they are before
    /// any link is followed, and no entry is opened.
    ///
    /// The default cannot list: it answers
    /// [`DirListing::Unavailable`], so a provider without a listing reports
    /// its rules as unavailable instead of silently having none. Decorators
    /// must forward it (see [`FsProvider::probe_dirs`]).
    fn list_dir<'a>(
        &'a self,
        dir: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DirListing, Cancelled>> {
        let _ = (dir, cancel);
        Box::pin(async {
            Ok(DirListing::Unavailable(Unavailable::Io(
                "this provider does not list directories".to_owned(),
            )))
        })
    }

    /// Lists several directories, in order, one listing each (as
    /// [`FsProvider::list_dir`] lists one). Providers may override this to
    /// list them all in one blocking task; the default lists them one by
    /// one. A decorator may leave it to the default: its `list_dir` then
    /// sees every directory, at the cost of the wrapped provider's batching.
    fn list_dirs<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<DirListing>, Cancelled>> {
        Box::pin(each(dirs, |dir| self.list_dir(dir, cancel)))
    }

    /// Checks whether a root marker exists at `path` (no symlink following
    /// needed, no content read).
    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>>;

    /// Whether each call is handed to tokio's blocking pool: a job of
    /// several calls then costs one hand-off in all when it runs whole on
    /// one pool thread through [`offload`](crate::offload), where the calls
    /// run inline.
    /// `false` by default; decorators must forward it ([`Forward`] does).
    fn pooled(&self) -> bool {
        false
    }
}

/// The batch defaults of [`FsProvider`]: `one` for each item, in order,
/// each awaited before the next starts, the first cancellation ending the
/// batch.
pub(crate) async fn each<'a, I, T, F>(
    items: &'a [I],
    mut one: impl FnMut(&'a I) -> F,
) -> Result<Vec<T>, Cancelled>
where
    F: Future<Output = Result<T, Cancelled>>,
{
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(one(item).await?);
    }
    Ok(out)
}
