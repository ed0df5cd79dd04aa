//! The cap-std provider: reads instruction files through capability handles
//! on a set of trusted roots (R-DISC-7), never blocking the async executor
//! (R-DISC-8) and never opening a FIFO or device (R-DISC-4).
//!
//! # How a path is followed
//!
//! An absolute path is mapped to the deepest trusted root containing it and
//! looked up relative to that root's [`Dir`]. cap-std follows relative links
//! that stay inside the root by itself; any link it refuses (an absolute
//! target, or `..` leaving the root) is re-anchored here: the link text is read,
//! resolved lexically against the link's directory, and the walk continues in
//! whichever trusted root contains the result. Each re-anchoring counts as a
//! hop; more than [`MAX_LINK_HOPS`](crate::provider::MAX_LINK_HOPS) is a loop.
//!
//! # Directories probed again
//!
//! `probe_dirs` keeps handles on the directories it probes, opened by name
//! from a root without following symlinks (so they can only lie inside it);
//! all providers of the process together hold at most a quarter of the
//! descriptor limit. A later batch revalidates a handle with one `fstat` of
//! its parent instead of a walk from the root, and skips candidate names that
//! had no entry while the directory's ctime is unchanged and old enough to
//! trust; why that gives the same answer as a fresh probe is argued in the
//! `dircache` module. A candidate found as a regular file is then probed
//! through an `O_PATH` handle kept on it while that stamp holds (an
//! `fstat` instead of a lookup by name, decision 0041). Directories
//! reached through a symlink, or edited in the last two seconds, take the
//! full path.
//!
//! Limitation: roots are matched lexically, so a link whose absolute text
//! names a root through a different spelling (e.g. via a symlinked parent of
//! the root) is reported as outside the trusted roots.
//!
//! # Modules
//!
//! One job each (where the blocking work runs is the crate's `blocking`
//! module, shared with [`offload`](crate::offload)): what an OS
//! error or a file's metadata means (`classify`), how a path is followed
//! (`resolve`), the names-only roots above the project root (`named`),
//! candidate names probed in directories (`dirs`), directories
//! answered from an earlier process's stamps (`remembered`), the regular
//! files the latest probes found (`probed`) and reading a file's text
//! (`read`). This file holds the provider, its roots and its
//! [`FsProvider`] implementation.

mod classify;
mod dirs;
mod list;
mod named;
mod probed;
mod read;
mod remembered;
mod resolve;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::AmbientAuthority;
use cap_std::fs::Dir;
use tokio_util::sync::CancellationToken;

use crate::DiscoveryError;
use crate::blocking::{check, run_blocking};
use crate::dircache::{DirCache, STAMP_MARGIN};
use crate::dirmemory::DirMemory;
use crate::paths::normalize;
use crate::provider::{
    BoxFuture, Cancelled, DirListing, FsProvider, MarkerProbe, PathKind, Probe, ProbedDirs,
    ReadOutcome, Unavailable,
};
use classify::{Class, classify};
use probed::ProbedFiles;

/// Filesystem provider over capability handles on trusted roots.
///
/// Cheap to clone (the handles are shared).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use camino::Utf8PathBuf;
/// use dsh_instructions_discovery::{CancellationToken, CapStdProvider, FsProvider, cap_std::ambient_authority, provider::ReadOutcome};
///
/// let tmp = tempfile::tempdir().unwrap();
/// let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
/// std::fs::write(root.join("AGENTS.md"), "\u{FEFF}rule").unwrap();
///
/// let fs = CapStdProvider::new([root.clone()], ambient_authority()).unwrap();
/// let cancel = CancellationToken::new();
/// match fs.read_text(&root.join("AGENTS.md"), 1024, &cancel).await.unwrap() {
///     ReadOutcome::Loaded(loaded) => assert_eq!(loaded.text, "rule"),
///     other => panic!("{other:?}"),
/// }
/// # });
/// ```
#[derive(Clone)]
pub struct CapStdProvider {
    inner: Arc<Inner>,
    /// Run the blocking work on the calling thread instead of the blocking
    /// pool (see [`CapStdProvider::run_inline`]).
    inline: bool,
}

struct Inner {
    /// Deepest first, so a root nested in another (the DSH home inside the
    /// project) owns its subtree.
    roots: Vec<Root>,
    /// Handles on directories probed before (see the `dircache` module);
    /// a batch that finds it busy takes the uncached path.
    dirs: Mutex<DirCache>,
    /// [`STAMP_MARGIN`], shortened by tests that cannot wait for it.
    margin: Duration,
    /// Stamps carried across processes ([`CapStdProvider::remembering`]).
    memory: OnceLock<DirMemory>,
    /// Regular files the latest probes found, for the reads that follow
    /// them (the `read` module's short path).
    probed: Mutex<ProbedFiles>,
    /// Names-only roots ([`CapStdProvider::names_only`]), set at most once.
    named: OnceLock<named::Named>,
    /// The caller's grant, kept to open names-only roots on first use.
    authority: AmbientAuthority,
}

struct Root {
    path: Utf8PathBuf,
    /// The caller's grant, kept to open a root that appears later.
    authority: AmbientAuthority,
    /// Opened at construction, or on first use for a root that did not exist
    /// yet (a DSH home created mid-session).
    dir: OnceLock<Arc<Dir>>,
}

impl Root {
    /// The root's handle, opening it now if it appeared since.
    fn handle(&self) -> Option<&Arc<Dir>> {
        if let Some(dir) = self.dir.get() {
            return Some(dir);
        }
        let dir = Dir::open_ambient_dir(&self.path, self.authority).ok()?;
        let _ = self.dir.set(Arc::new(dir));
        self.dir.get()
    }
}

impl fmt::Debug for CapStdProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapStdProvider")
            .field(
                "roots",
                &self.inner.roots.iter().map(|r| &r.path).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl CapStdProvider {
    /// Opens every trusted root. Roots that do not exist (or are not
    /// directories) are skipped with a warning; duplicates are opened once.
    ///
    /// # Errors
    ///
    /// [`DiscoveryError::RelativeRoot`] for a relative root, and
    /// [`DiscoveryError::OpenRoot`] when an existing root cannot be opened.
    ///
    /// Opening a directory by absolute path is ambient authority: the caller
    /// grants it explicitly with [`cap_std::ambient_authority()`] (re-exported
    /// as [`crate::cap_std::ambient_authority`]), so every place that does so is easy
    /// to audit (R-RT-11). The provider keeps the grant only to open roots
    /// that did not exist yet on first use.
    ///
    /// ```
    /// use dsh_instructions_discovery::{CapStdProvider, cap_std::ambient_authority};
    /// let tmp = tempfile::tempdir()?;
    /// let root = camino::Utf8PathBuf::from_path_buf(tmp.path().to_path_buf()).unwrap();
    /// let provider = CapStdProvider::new([root.clone()], ambient_authority())?;
    /// assert_eq!(provider.roots().count(), 1);
    /// assert!(CapStdProvider::new(["relative".into()], ambient_authority()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(
        roots: impl IntoIterator<Item = Utf8PathBuf>,
        authority: AmbientAuthority,
    ) -> Result<Self, DiscoveryError> {
        let mut opened: Vec<Root> = Vec::new();
        for root in roots {
            if !root.is_absolute() {
                return Err(DiscoveryError::RelativeRoot { path: root });
            }
            let path = normalize(&root);
            if opened.iter().any(|r| r.path == path) {
                continue;
            }
            match Dir::open_ambient_dir(&path, authority) {
                Ok(dir) => opened.push(Root {
                    path,
                    authority,
                    dir: OnceLock::from(Arc::new(dir)),
                }),
                Err(error) if matches!(classify(&error), Class::Absent) => {
                    // Kept: paths under it are absent until it exists.
                    tracing::debug!(root = %path, %error, "trusted root does not exist yet");
                    opened.push(Root {
                        path,
                        authority,
                        dir: OnceLock::new(),
                    });
                }
                Err(source) => return Err(DiscoveryError::OpenRoot { path, source }),
            }
        }
        opened.sort_by_key(|r| std::cmp::Reverse(r.path.components().count()));
        Ok(Self {
            inner: Arc::new(Inner {
                roots: opened,
                dirs: Mutex::new(DirCache::new()),
                margin: STAMP_MARGIN,
                memory: OnceLock::new(),
                probed: Mutex::new(ProbedFiles::default()),
                named: OnceLock::new(),
                authority,
            }),
            inline: false,
        })
    }

    /// Runs the filesystem work on the thread that polls the future instead
    /// of handing each operation to tokio's blocking pool. For one-shot
    /// processes whose runtime has nothing else to run while it waits, such
    /// as the agent hook (R-HOOK-6): there every hand-off is a thread
    /// start-up or wake-up and nothing gains from the overlap. A cancelled
    /// token is still seen at the work's own checkpoints, but a syscall
    /// that hangs (a dead network mount) is no longer abandoned.
    ///
    /// ```
    /// use dsh_instructions_discovery::{CapStdProvider, cap_std::ambient_authority};
    /// let provider = CapStdProvider::new(Vec::new(), ambient_authority())?.run_inline(true);
    /// assert_eq!(provider.roots().count(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn run_inline(mut self, inline: bool) -> Self {
        self.inline = inline;
        self
    }

    /// Consults and records into `memory` the directory stamps an earlier
    /// process left (decision 0037): a known directory unchanged since then
    /// costs one `statx`, plus one per candidate that exists, instead of an
    /// open and a lookup per candidate name. For one-shot processes such as
    /// the agent hook (R-HOOK-6); the host decodes the memory before and
    /// encodes it after ([`DirMemory`]). A provider keeps the first memory
    /// it is given (clones share it). Consulted on Linux only.
    ///
    /// ```
    /// use dsh_instructions_discovery::{CapStdProvider, DirMemory, cap_std::ambient_authority};
    /// let tmp = tempfile::tempdir()?;
    /// let root = camino::Utf8PathBuf::from_path_buf(tmp.path().to_path_buf()).unwrap();
    /// // Decoded from what the previous process encoded (here: nothing yet).
    /// let memory = DirMemory::decode(b"");
    /// let provider = CapStdProvider::new([root], ambient_authority())?
    ///     .run_inline(true)
    ///     .remembering(memory.clone());
    /// // ... compose through `provider`; then write `memory.encode()` back
    /// // when `memory.changed()`.
    /// # drop(provider);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn remembering(self, memory: DirMemory) -> Self {
        let _ = self.inner.memory.set(memory);
        self
    }

    /// Adds names-only roots (R-HOOK-8, docs/decisions/0044): in each of
    /// `dirs` exactly the relative paths `names` may be probed and read,
    /// and only where no trusted root contains them; nothing else of those
    /// directories, no listing, no link out of the admitted entries. Links
    /// from trusted roots never lead into them, and shell touches
    /// ([`FsProvider::path_kinds`]) never see them. A provider keeps the
    /// first set it is given (clones share it); relative directories are
    /// skipped. `names` must be plain relative paths (the configuration's
    /// `ancestor_instruction_files` are validated so).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use camino::Utf8PathBuf;
    /// use dsh_instructions_discovery::{CancellationToken, CapStdProvider, FsProvider, cap_std::ambient_authority, provider::{Probe, Unavailable}};
    /// let tmp = tempfile::tempdir().unwrap();
    /// let top = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    /// std::fs::create_dir_all(top.join("repo")).unwrap();
    /// std::fs::write(top.join("CLAUDE.md"), "for all my repositories").unwrap();
    /// std::fs::write(top.join("notes.md"), "private").unwrap();
    /// let fs = CapStdProvider::new([top.join("repo")], ambient_authority())
    ///     .unwrap()
    ///     .names_only([top.clone()], &["CLAUDE.md".to_owned()]);
    /// let cancel = CancellationToken::new();
    /// assert!(matches!(fs.probe(&top.join("CLAUDE.md"), &cancel).await.unwrap(), Probe::Present(_)));
    /// assert_eq!(
    ///     fs.probe(&top.join("notes.md"), &cancel).await.unwrap(),
    ///     Probe::Unavailable(Unavailable::OutsideTrustedRoots)
    /// );
    /// # });
    /// ```
    #[must_use]
    pub fn names_only(self, dirs: impl IntoIterator<Item = Utf8PathBuf>, names: &[String]) -> Self {
        if self.inner.named.get().is_none() {
            let named = named::Named::new(dirs, names, self.inner.authority);
            let _ = self.inner.named.set(named);
        }
        self
    }

    /// The roots that exist as directories now, deepest first.
    pub fn roots(&self) -> impl Iterator<Item = &Utf8Path> {
        self.inner
            .roots
            .iter()
            .filter(|r| r.handle().is_some())
            .map(|r| r.path.as_path())
    }
}

fn marker_sync(path: &Utf8Path) -> MarkerProbe {
    // Ambient on purpose: markers sit on cwd ancestors, possibly outside every
    // trusted root, and only their existence is checked (R-DISC-7).
    match std::fs::symlink_metadata(path) {
        Ok(_) => MarkerProbe::Exists,
        Err(error) => match classify(&error) {
            Class::Absent => MarkerProbe::Missing,
            Class::Escape => MarkerProbe::Failed(Unavailable::PermissionDenied),
            Class::Unavailable(reason) => MarkerProbe::Failed(reason),
        },
    }
}

impl FsProvider for CapStdProvider {
    /// Unless it runs inline ([`CapStdProvider::run_inline`]).
    fn pooled(&self) -> bool {
        !self.inline
    }

    fn probe<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Probe, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let path = path.to_owned();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            inner.probe(&path, token)
        }))
    }

    /// One blocking task and one directory handle for the whole directory.
    fn probe_many<'a>(
        &'a self,
        dir: &'a Utf8Path,
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let dir = dir.to_owned();
        let names = names.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            inner.probe_many(&dir, &names, token)
        }))
    }

    /// One blocking task for the whole list, directories opened relative to
    /// their parent along a chain.
    fn probe_dirs<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Vec<Probe>>, Cancelled>> {
        Box::pin(async move { Ok(self.probe_dirs_missing(dirs, names, cancel).await?.probes) })
    }

    /// [`FsProvider::probe_dirs`]'s one blocking task, telling the
    /// directories it found missing (by a lookup, from what it remembers,
    /// or below one of them in the same batch).
    fn probe_dirs_missing<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ProbedDirs, Cancelled>> {
        if self.inline {
            // On the calling thread, nothing has to outlive the call: no
            // copy of a batch whose paths may be long (issue 35 item 3).
            return Box::pin(async move {
                check(cancel)?;
                self.inner.probe_dirs(dirs, names, cancel)
            });
        }
        let inner = Arc::clone(&self.inner);
        let dirs = dirs.to_vec();
        let names = names.to_vec();
        Box::pin(run_blocking(false, cancel, move |token| {
            inner.probe_dirs(&dirs, &names, token)
        }))
    }

    /// One blocking task for the whole list.
    fn probe_paths<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let paths = paths.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            inner.probe_paths(&paths, token)
        }))
    }

    /// One blocking task for the whole list, metadata only.
    fn path_kinds<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<PathKind>, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let paths = paths.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            paths
                .iter()
                .map(|path| inner.path_kind(path, token))
                .collect()
        }))
    }

    /// One blocking task for the whole marker walk.
    fn markers_until_found<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<MarkerProbe>, Cancelled>> {
        let paths = paths.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            let mut out = Vec::new();
            for path in &paths {
                check(token)?;
                let found = marker_sync(path);
                let stop = found != MarkerProbe::Missing;
                out.push(found);
                if stop {
                    break;
                }
            }
            Ok(out)
        }))
    }

    fn read_text<'a>(
        &'a self,
        path: &'a Utf8Path,
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let path = path.to_owned();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            inner.read_text(&path, max_source_bytes, token)
        }))
    }

    /// One blocking task for the whole list.
    fn read_many<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ReadOutcome>, Cancelled>> {
        if self.inline {
            // On the calling thread, nothing has to outlive the call: no
            // copy of the batch, one long path per file of a deep chain
            // (issue 46 item 4).
            return Box::pin(async move {
                check(cancel)?;
                // Sized once: collected through a `Result`, the list grew
                // by doubling, half of it unused.
                let mut outcomes = Vec::with_capacity(paths.len());
                for path in paths {
                    outcomes.push(self.inner.read_text(path, max_source_bytes, cancel)?);
                }
                Ok(outcomes)
            });
        }
        let inner = Arc::clone(&self.inner);
        let paths = paths.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            paths
                .iter()
                .map(|path| inner.read_text(path, max_source_bytes, token))
                .collect()
        }))
    }

    /// One blocking task for the directory (R-RULE-1).
    fn list_dir<'a>(
        &'a self,
        dir: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DirListing, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let dir = dir.to_owned();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            inner.list_dir(&dir, token)
        }))
    }

    /// One blocking task for the whole list, every directory through one
    /// pass over the handle cache.
    fn list_dirs<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<DirListing>, Cancelled>> {
        let inner = Arc::clone(&self.inner);
        let dirs = dirs.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            inner.list_dirs(&dirs, token)
        }))
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        let path = path.to_owned();
        Box::pin(run_blocking(self.inline, cancel, move |_| {
            Ok(marker_sync(&path))
        }))
    }
}
