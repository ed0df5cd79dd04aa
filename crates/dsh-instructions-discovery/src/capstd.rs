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
//! hop; more than [`MAX_LINK_HOPS`] is a loop.
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
//! `dircache` module. Directories reached through a symlink, or edited in the
//! last two seconds, take the full path.
//!
//! Limitation: roots are matched lexically, so a link whose absolute text
//! names a root through a different spelling (e.g. via a symlinked parent of
//! the root) is reported as outside the trusted roots.

use std::fmt;
use std::io::{self, Read};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::OpenOptionsSyncExt;
use cap_std::AmbientAuthority;
use cap_std::fs::{Dir, Metadata, MetadataExt, OpenOptions};
use rustix::io::Errno;
use tokio_util::sync::CancellationToken;

use crate::dircache::{Batch, DirCache, STAMP_MARGIN, name_bit, plain};
use crate::dirmemory::{DirMemory, Rec};
use crate::paths::{link_target, normalize, normalized};
use crate::provider::MAX_LINK_HOPS;
use crate::provider::{
    BoxFuture, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText, MarkerProbe, PathKind,
    PresentFile, Probe, ReadOutcome, Unavailable,
};
use crate::stamp::{Raw, RawKind, Stamp};
use crate::text::decode_owned;

/// Bytes per `read(2)`: the token is checked between chunks.
const CHUNK: usize = 64 * 1024;

/// A fatal error while setting up a [`CapStdProvider`].
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// Trusted roots must be absolute: a relative one would depend on the
    /// process cwd.
    #[error("trusted root {path} is not an absolute path")]
    RelativeRoot {
        /// The rejected root.
        path: Utf8PathBuf,
    },
    /// The root exists but could not be opened (permission, descriptor
    /// exhaustion, ...).
    #[error("cannot open trusted root {path}: {source}")]
    OpenRoot {
        /// The root that failed.
        path: Utf8PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// Filesystem provider over capability handles on trusted roots.
///
/// Cheap to clone (the handles are shared).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use camino::Utf8PathBuf;
/// use dsh_instructions_discovery::{ambient_authority, CancellationToken, CapStdProvider, FsProvider, ReadOutcome};
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

/// What an `io::Error` means for classification.
enum Class {
    /// `ENOENT`/`ENOTDIR`: confirmed absent.
    Absent,
    /// cap-std refused to leave the root (no OS error code).
    Escape,
    Unavailable(Unavailable),
}

fn classify(error: &io::Error) -> Class {
    match Errno::from_io_error(error) {
        Some(Errno::NOENT | Errno::NOTDIR) => Class::Absent,
        Some(Errno::LOOP) => Class::Unavailable(Unavailable::Loop),
        Some(Errno::ACCESS | Errno::PERM) => Class::Unavailable(Unavailable::PermissionDenied),
        Some(Errno::TIMEDOUT) => Class::Unavailable(Unavailable::TimedOut),
        Some(_) => Class::Unavailable(Unavailable::Io(error.to_string())),
        None => match error.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Class::Absent,
            io::ErrorKind::PermissionDenied => Class::Escape,
            io::ErrorKind::TimedOut => Class::Unavailable(Unavailable::TimedOut),
            _ => Class::Unavailable(Unavailable::Io(error.to_string())),
        },
    }
}

/// Where a path leads.
enum Resolution<'a> {
    Found {
        root: &'a Root,
        rel: Utf8PathBuf,
        metadata: Metadata,
    },
    Absent,
    Unavailable(Unavailable),
}

/// Result of re-anchoring an escaping path.
enum Hop<'a> {
    Next(Utf8PathBuf),
    Done(Resolution<'a>),
}

impl From<Class> for Resolution<'_> {
    fn from(class: Class) -> Self {
        match class {
            Class::Absent => Self::Absent,
            Class::Escape => Self::Unavailable(Unavailable::OutsideTrustedRoots),
            Class::Unavailable(reason) => Self::Unavailable(reason),
        }
    }
}

fn nanos(secs: i64, nsec: i64) -> u64 {
    // Wrapping is fine: the value is only compared for equality.
    (secs as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(nsec as u64)
}

/// How long a file must have stood unchanged before the moment it was
/// looked at for its version to be settled ([`FileVersion::settled`]): far
/// above any file system's timestamp tick, as for the directory stamps
/// (decision 0007).
const SETTLED_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// (dev, ino, size, mtime, ctime) folded into four words; equal versions of a
/// real file imply none of these changed on one device. Settled when both
/// timestamps lie [`SETTLED_AFTER`] before `seen` (a clock reading taken at
/// the stat), so no later change can share them.
fn version_of(raw: &Raw, seen: std::time::SystemTime) -> FileVersion {
    let latest = raw.mtime.0.max(raw.ctime.0);
    let settled = seen
        .checked_sub(SETTLED_AFTER)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_secs()).ok())
        // Whole seconds, rounded down on both sides: a change in the same
        // second as the bound is never settled.
        .is_some_and(|bound| latest < bound);
    let build = if settled {
        FileVersion::settled
    } else {
        FileVersion::new
    };
    build([
        raw.ino,
        raw.size,
        nanos(raw.mtime.0, raw.mtime.1),
        nanos(raw.ctime.0, raw.ctime.1) ^ raw.dev.rotate_left(32),
    ])
}

/// A resolved target is present only if it is a regular file (R-DISC-4).
fn classify_metadata(metadata: &Metadata) -> Probe {
    classify_raw(&Raw::of(metadata))
}

/// [`classify_metadata`] of a raw `statx` (never a symlink here: callers
/// resolve those first).
fn classify_raw(raw: &Raw) -> Probe {
    if raw.kind == RawKind::File {
        Probe::Present(PresentFile {
            size: raw.size,
            version: version_of(raw, std::time::SystemTime::now()),
            identity: FileIdentity::Inode {
                dev: raw.dev,
                ino: raw.ino,
            },
        })
    } else {
        Probe::Absent
    }
}

/// A fast-path failure: absent or unavailable, or `None` when cap-std refused
/// the name from the directory handle (the full probe re-anchors it).
fn fast_error(error: &io::Error) -> Option<Probe> {
    match classify(error) {
        Class::Absent => Some(Probe::Absent),
        Class::Escape => None,
        Class::Unavailable(reason) => Some(Probe::Unavailable(reason)),
    }
}

fn check(cancel: &CancellationToken) -> Result<(), Cancelled> {
    if cancel.is_cancelled() {
        Err(Cancelled)
    } else {
        Ok(())
    }
}

/// Runs blocking filesystem work on the blocking pool; returns as soon as the
/// token fires, leaving the worker to notice the token at its next check.
/// `inline`: on the calling thread instead (the work still checks the token
/// at its own checkpoints, but a stuck syscall is not abandoned).
async fn run_blocking<T, F>(
    inline: bool,
    cancel: &CancellationToken,
    work: F,
) -> Result<T, Cancelled>
where
    T: Send + 'static,
    F: FnOnce(&CancellationToken) -> Result<T, Cancelled> + Send + 'static,
{
    check(cancel)?;
    if inline {
        return work(cancel);
    }
    let token = cancel.clone();
    let handle = tokio::task::spawn_blocking(move || work(&token));
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Cancelled),
        joined = handle => match joined {
            Ok(result) => result,
            // A panic in the worker is a bug: surface it where it would have
            // surfaced had the code run inline.
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // The runtime is shutting down.
            Err(_) => Err(Cancelled),
        },
    }
}

impl CapStdProvider {
    /// Opens every trusted root. Roots that do not exist (or are not
    /// directories) are skipped with a warning; duplicates are opened once.
    ///
    /// # Errors
    ///
    /// [`ProviderError::RelativeRoot`] for a relative root, and
    /// [`ProviderError::OpenRoot`] when an existing root cannot be opened.
    ///
    /// Opening a directory by absolute path is ambient authority: the caller
    /// grants it explicitly with [`cap_std::ambient_authority()`] (re-exported
    /// as [`crate::ambient_authority`]), so every place that does so is easy
    /// to audit (R-RT-11). The provider keeps the grant only to open roots
    /// that did not exist yet on first use.
    ///
    /// ```
    /// use dsh_instructions_discovery::{ambient_authority, CapStdProvider};
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
    ) -> Result<Self, ProviderError> {
        let mut opened: Vec<Root> = Vec::new();
        for root in roots {
            if !root.is_absolute() {
                return Err(ProviderError::RelativeRoot { path: root });
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
                Err(source) => return Err(ProviderError::OpenRoot { path, source }),
            }
        }
        opened.sort_by_key(|r| std::cmp::Reverse(r.path.components().count()));
        Ok(Self {
            inner: Arc::new(Inner {
                roots: opened,
                dirs: Mutex::new(DirCache::new()),
                margin: STAMP_MARGIN,
                memory: OnceLock::new(),
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
    /// use dsh_instructions_discovery::{ambient_authority, CapStdProvider};
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
    /// use dsh_instructions_discovery::{ambient_authority, CapStdProvider, DirMemory};
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

    /// The roots that exist as directories now, deepest first.
    pub fn roots(&self) -> impl Iterator<Item = &Utf8Path> {
        self.inner
            .roots
            .iter()
            .filter(|r| r.handle().is_some())
            .map(|r| r.path.as_path())
    }
}

impl Inner {
    /// The deepest root containing `path`, with the path relative to it.
    fn locate(&self, path: &Utf8Path) -> Option<(&Root, Utf8PathBuf)> {
        self.roots.iter().find_map(|root| {
            let rel = path.strip_prefix(&root.path).ok()?;
            let rel = if rel.as_str().is_empty() {
                Utf8PathBuf::from(".")
            } else {
                rel.to_owned()
            };
            Some((root, rel))
        })
    }

    /// Follows `path` (final symlink included) to its target's metadata.
    fn resolve(
        &self,
        path: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Resolution<'_>, Cancelled> {
        let mut current = normalize(path);
        let mut hops = 0u32;
        loop {
            check(cancel)?;
            let Some((root, rel)) = self.locate(&current) else {
                return Ok(Resolution::Unavailable(Unavailable::OutsideTrustedRoots));
            };
            let Some(dir) = root.handle() else {
                // A trusted root that does not exist (yet): nothing under it.
                return Ok(Resolution::Absent);
            };
            let error = match dir.metadata(rel.as_std_path()) {
                Ok(metadata) => {
                    return Ok(Resolution::Found {
                        root,
                        rel,
                        metadata,
                    });
                }
                Err(error) => error,
            };
            match classify(&error) {
                Class::Escape => match self.reanchor(root, &rel, cancel)? {
                    Hop::Next(next) => {
                        hops += 1;
                        if hops > MAX_LINK_HOPS {
                            return Ok(Resolution::Unavailable(Unavailable::Loop));
                        }
                        current = next;
                    }
                    Hop::Done(resolution) => return Ok(resolution),
                },
                class => return Ok(class.into()),
            }
        }
    }

    /// Finds the first symlink along `rel` (cap-std refused the path, so one
    /// of them leaves the root) and rewrites the path through its text.
    fn reanchor<'a>(
        &'a self,
        root: &'a Root,
        rel: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Hop<'a>, Cancelled> {
        let Some(root_dir) = root.handle() else {
            return Ok(Hop::Done(Resolution::Absent));
        };
        let names: Vec<&str> = rel.iter().collect();
        let mut prefix = Utf8PathBuf::new();
        for (index, name) in names.iter().enumerate() {
            check(cancel)?;
            prefix.push(name);
            let metadata = match root_dir.symlink_metadata(prefix.as_std_path()) {
                Ok(metadata) => metadata,
                Err(error) => return Ok(Hop::Done(classify(&error).into())),
            };
            if !metadata.file_type().is_symlink() {
                continue;
            }
            check(cancel)?;
            let text = match root_dir.read_link_contents(prefix.as_std_path()) {
                Ok(text) => text,
                Err(error) => return Ok(Hop::Done(classify(&error).into())),
            };
            let Ok(text) = Utf8PathBuf::from_path_buf(text) else {
                return Ok(Hop::Done(Resolution::Unavailable(Unavailable::Io(
                    "symlink target is not valid UTF-8".to_owned(),
                ))));
            };
            let mut next = link_target(&root.path.join(&prefix), &text);
            for rest in &names[index + 1..] {
                next.push(rest);
            }
            return Ok(Hop::Next(normalize(&next)));
        }
        // cap-std saw an escape no link explains: stay conservative.
        Ok(Hop::Done(Resolution::Unavailable(
            Unavailable::OutsideTrustedRoots,
        )))
    }

    fn probe(&self, path: &Utf8Path, cancel: &CancellationToken) -> Result<Probe, Cancelled> {
        Ok(match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } => classify_metadata(&metadata),
            Resolution::Absent => Probe::Absent,
            Resolution::Unavailable(reason) => Probe::Unavailable(reason),
        })
    }

    /// Classifies `path` by the metadata of its resolved target (no open).
    fn path_kind(
        &self,
        path: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<PathKind, Cancelled> {
        Ok(match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } if metadata.is_file() => PathKind::File,
            Resolution::Found { metadata, .. } if metadata.is_dir() => PathKind::Directory,
            Resolution::Found { .. } => PathKind::Other,
            Resolution::Absent => PathKind::Absent,
            Resolution::Unavailable(reason) => PathKind::Unavailable(reason),
        })
    }

    /// Probes `names` in `dir` through one handle on the directory when it
    /// opens plainly inside a root: a miss then costs one `statat`. A name
    /// cap-std refuses from that handle (a link with an absolute target or
    /// one climbing out of the directory) falls back to the full [`probe`],
    /// so results are identical.
    ///
    /// [`probe`]: Self::probe
    fn probe_many(
        &self,
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Probe>, Cancelled> {
        let dir = normalize(dir);
        check(cancel)?;
        let handle = self.open_dir(&dir);
        self.probe_names(&dir, handle.as_ref(), names, cancel)
    }

    /// A handle on `dir` opened plainly inside its root, if it opens.
    fn open_dir(&self, dir: &Utf8Path) -> Option<Dir> {
        self.open_dir_classified(dir).ok()
    }

    /// [`Self::open_dir`], saying why it did not open: [`Class::Absent`]
    /// only when the OS said there is no such directory.
    fn open_dir_classified(&self, dir: &Utf8Path) -> Result<Dir, Class> {
        let (root, rel) = self
            .locate(dir)
            .ok_or(Class::Unavailable(Unavailable::OutsideTrustedRoots))?;
        let handle = root
            .handle()
            .ok_or(Class::Unavailable(Unavailable::OutsideTrustedRoots))?;
        handle.open_dir(rel.as_std_path()).map_err(|e| classify(&e))
    }

    /// Probes `names` in `dir`, through `handle` where it can: a miss then
    /// costs one `statat`. A name cap-std refuses from that handle (a link
    /// with an absolute target or one climbing out of the directory) falls
    /// back to the full [`probe`], so results are identical.
    ///
    /// [`probe`]: Self::probe
    fn probe_names(
        &self,
        dir: &Utf8Path,
        handle: Option<&Dir>,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Probe>, Cancelled> {
        let mut probes = Vec::with_capacity(names.len());
        for name in names {
            check(cancel)?;
            probes.push(self.probe_name(dir, handle, name, cancel)?.0);
        }
        Ok(probes)
    }

    /// One candidate; the flag says `lstat` found no entry at all (what a
    /// directory stamp can vouch for later).
    fn probe_name(
        &self,
        dir: &Utf8Path,
        handle: Option<&Dir>,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<(Probe, bool), Cancelled> {
        let fast = match handle {
            // lstat first: one `fstatat` answers a miss, a regular file
            // and any other non-link entry; only a symlink pays for the
            // following `metadata` (an `openat2` + `fstat` in cap-std).
            Some(handle) if plain(name) => match handle.symlink_metadata(name) {
                Ok(metadata) if !metadata.file_type().is_symlink() => {
                    Some((classify_metadata(&metadata), false))
                }
                Ok(_) => handle
                    .metadata(name)
                    .map_or_else(|e| fast_error(&e), |m| Some(classify_metadata(&m)))
                    .map(|p| (p, false)),
                Err(error) => {
                    let no_entry = Errno::from_io_error(&error) == Some(Errno::NOENT);
                    fast_error(&error).map(|p| (p, no_entry))
                }
            },
            _ => None,
        };
        Ok(match fast {
            Some(found) => found,
            None => (self.probe(&dir.join(name), cancel)?, false),
        })
    }

    /// Probes `names` in `dir` through a cached handle: names the
    /// directory's unchanged stamp vouches for cost nothing.
    fn probe_cached(
        &self,
        batch: &mut Batch<'_>,
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<Probe>>, Cancelled> {
        let root_of = |path: &Utf8Path| {
            self.roots
                .iter()
                .find(|r| r.path.as_str() == path.as_str())
                .and_then(|r| r.handle().cloned())
        };
        let Some((handle, stamp, slot)) = batch.handle(&root_of, dir) else {
            return Ok(None);
        };
        let known = batch.known_absent(slot, stamp);
        let mut probes = Vec::with_capacity(names.len());
        let mut absent = 0u64;
        let mut skipped = 0;
        for (i, name) in names.iter().enumerate() {
            let bit = name_bit(i);
            let (probe, no_entry) = if known & bit != 0 {
                skipped += 1;
                (Probe::Absent, true)
            } else {
                check(cancel)?;
                self.probe_name(dir, Some(&handle), name, cancel)?
            };
            if no_entry {
                absent |= bit;
            }
            probes.push(probe);
        }
        batch.count_skipped(skipped);
        batch.record(dir.as_str(), slot, stamp, absent);
        Ok(Some(probes))
    }

    /// Answers `dir` from the facts an earlier process remembered
    /// (decision 0037, argued in the `dirmemory` module), or `None` when it
    /// has none or they no longer hold (the caller takes the handle path,
    /// which records the new facts).
    #[cfg(target_os = "linux")]
    fn probe_remembered(
        &self,
        batch: &mut Batch<'_>,
        dir: &Utf8Path,
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<Probe>>, Cancelled> {
        let Some(rec) = batch.memory.as_deref().and_then(|m| m.get(dir.as_str())) else {
            return Ok(None);
        };
        // The deepest root containing `dir`, by string prefix at a component
        // boundary (`locate` builds a relative path, not needed here).
        let Some(root) = self.roots.iter().find(|r| {
            dir.as_str()
                .strip_prefix(r.path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        }) else {
            return Ok(None);
        };
        let Some(handle) = root.handle() else {
            return Ok(None);
        };
        let root_path = root.path.as_str();
        match rec {
            Rec::Missing { parent } => {
                let Some(up) = dir.parent() else {
                    return Ok(None);
                };
                if self.proven(batch, root_path, handle, up.as_str()) == Some(parent) {
                    return Ok(Some(vec![Probe::Absent; names.len()]));
                }
            }
            Rec::Dir {
                names: hash,
                absent,
                ..
            } => {
                if hash == batch.names()
                    && self
                        .proven(batch, root_path, handle, dir.as_str())
                        .is_some()
                {
                    let rel = dir.as_str()[root_path.len()..].trim_start_matches('/');
                    let mut probes = Vec::with_capacity(names.len());
                    let mut skipped = 0;
                    for (i, name) in names.iter().enumerate() {
                        let bit = name_bit(i);
                        if absent & bit != 0 {
                            skipped += 1;
                            probes.push(Probe::Absent);
                            continue;
                        }
                        check(cancel)?;
                        probes.push(self.probe_through(handle, rel, dir, name, cancel)?);
                    }
                    batch.count_skipped(skipped);
                    return Ok(Some(probes));
                }
            }
        }
        if let Some(memory) = batch.memory.as_deref_mut() {
            memory.forget(dir.as_str());
        }
        Ok(None)
    }

    /// Elsewhere a memory is recorded into but never consulted.
    #[cfg(not(target_os = "linux"))]
    fn probe_remembered(
        &self,
        _batch: &mut Batch<'_>,
        _dir: &Utf8Path,
        _names: &[String],
        _cancel: &CancellationToken,
    ) -> Result<Option<Vec<Probe>>, Cancelled> {
        Ok(None)
    }

    /// One candidate of a proven directory `rel` (relative to the root
    /// `handle`): a regular file or a miss from one `statx`; a symlink or
    /// anything unusual takes the full probe.
    #[cfg(target_os = "linux")]
    fn probe_through(
        &self,
        handle: &Dir,
        rel: &str,
        dir: &Utf8Path,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<Probe, Cancelled> {
        if plain(name) {
            let path = if rel.is_empty() {
                name.to_owned()
            } else {
                format!("{rel}/{name}")
            };
            match Raw::lstat_at(handle, &path) {
                Ok(raw) if raw.kind != RawKind::Symlink => return Ok(classify_raw(&raw)),
                Err(Errno::NOENT) => return Ok(Probe::Absent),
                _ => {}
            }
        }
        self.probe(&dir.join(name), cancel)
    }

    /// The current stamp of `path` (`root_path` or below it) when every
    /// directory from the root down to it is a real directory whose
    /// current stamp is the one remembered for it; `None` otherwise.
    /// Memoized per batch, so siblings share their ancestors' proofs.
    #[cfg(target_os = "linux")]
    fn proven(
        &self,
        batch: &mut Batch<'_>,
        root_path: &str,
        handle: &Dir,
        path: &str,
    ) -> Option<Stamp> {
        if let Some(known) = batch.proven.get(path) {
            return *known;
        }
        let remembered = match batch.memory.as_deref().and_then(|m| m.get(path)) {
            Some(Rec::Dir { stamp, .. }) => Some(stamp),
            _ => None,
        };
        let current = remembered.and_then(|remembered| {
            let (now, margin) = (batch.now(), batch.margin());
            let current = if path == root_path {
                // The root's handle names the root by definition.
                let metadata = handle.dir_metadata().ok()?;
                Stamp::trusted(&metadata, now, margin)?
            } else {
                let parent = path.rfind('/').map(|i| &path[..i.max(1)])?;
                if parent.len() < root_path.len() {
                    return None;
                }
                self.proven(batch, root_path, handle, parent)?;
                let rel = path[root_path.len()..].trim_start_matches('/');
                let raw = Raw::lstat_at(handle, rel).ok()?;
                if raw.kind != RawKind::Dir {
                    return None;
                }
                Stamp::trusted_raw(&raw, now, margin)?
            };
            (current == remembered).then_some(current)
        });
        batch.proven.insert(path.to_owned(), current);
        current
    }

    /// Probes a list of directories in one pass. Directories reachable from
    /// a root through real (non-symlink) subdirectories use handles kept
    /// between batches (the `dircache` module); the others are opened
    /// relative to the previous handle when they are its plain child, so a
    /// long chain never re-walks its path from the root (O(depth), not
    /// O(depth²), component lookups).
    fn probe_dirs(
        &self,
        dirs: &[Utf8PathBuf],
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Vec<Probe>>, Cancelled> {
        let mut out = Vec::with_capacity(dirs.len());
        let mut previous: Option<(Utf8PathBuf, Dir)> = None;
        let mut cache = self.dirs.try_lock().ok();
        let mut memory = self.memory.get().map(DirMemory::lock);
        let mut batch = cache
            .as_deref_mut()
            .map(|c| Batch::new(c, self.margin, names, memory.as_deref_mut()));
        for dir in dirs {
            check(cancel)?;
            let dir = normalized(dir);
            if let Some(batch) = batch.as_mut()
                && let Some(probes) = self.probe_remembered(batch, &dir, names, cancel)?
            {
                out.push(probes);
                previous = None;
                continue;
            }
            if let Some(batch) = batch.as_mut()
                && let Some(probes) = self.probe_cached(batch, &dir, names, cancel)?
            {
                out.push(probes);
                previous = None;
                continue;
            }
            let dir = dir.into_owned();
            let child = previous.as_ref().and_then(|(path, handle)| {
                let name = dir.strip_prefix(path).ok()?.as_str();
                let plain = !name.is_empty() && !name.contains('/') && name != "..";
                if !plain {
                    return None;
                }
                // Only a real directory entry: a symlinked component goes
                // through the full root-relative open, which re-anchors it.
                let meta = handle.symlink_metadata(name).ok()?;
                meta.is_dir().then(|| handle.open_dir(name).ok()).flatten()
            });
            let handle = match child {
                Some(handle) => Some(handle),
                None => match self.open_dir_classified(&dir) {
                    Ok(handle) => Some(handle),
                    // No such directory (or a component is no directory):
                    // every name in it probes absent, as the full probe of
                    // each would say (ENOENT/ENOTDIR) — without paying one
                    // root-relative walk per name (Claude Code's absent
                    // `.claude/` in every known directory, R-HOOK-6).
                    Err(Class::Absent) => {
                        out.push(vec![Probe::Absent; names.len()]);
                        previous = None;
                        continue;
                    }
                    Err(_) => None,
                },
            };
            out.push(self.probe_names(&dir, handle.as_ref(), names, cancel)?);
            previous = handle.map(|h| (dir, h));
        }
        Ok(out)
    }

    fn read_text(
        &self,
        path: &Utf8Path,
        cap: u64,
        cancel: &CancellationToken,
    ) -> Result<ReadOutcome, Cancelled> {
        let (root, rel) = match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } if !metadata.is_file() => {
                return Ok(ReadOutcome::Absent);
            }
            Resolution::Found { metadata, .. } if metadata.len() > cap => {
                return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                    limit: cap,
                }));
            }
            Resolution::Found { root, rel, .. } => (root, rel),
            Resolution::Absent => return Ok(ReadOutcome::Absent),
            Resolution::Unavailable(reason) => return Ok(ReadOutcome::Unavailable(reason)),
        };
        check(cancel)?;
        // Nonblocking: if the path became a FIFO since the stat, open(2)
        // returns at once and the fstat below classifies it as absent.
        let mut options = OpenOptions::new();
        options.read(true).nonblock(true);
        let Some(root_dir) = root.handle() else {
            return Ok(ReadOutcome::Absent);
        };
        let mut file = match root_dir.open_with(rel.as_std_path(), &options) {
            Ok(file) => file,
            Err(error) => {
                return Ok(match Resolution::from(classify(&error)) {
                    Resolution::Unavailable(reason) => ReadOutcome::Unavailable(reason),
                    _ => ReadOutcome::Absent,
                });
            }
        };
        check(cancel)?;
        let seen = std::time::SystemTime::now();
        let metadata = match file.metadata() {
            Ok(metadata) => metadata,
            Err(error) => return Ok(ReadOutcome::Unavailable(Unavailable::Io(error.to_string()))),
        };
        if !metadata.is_file() {
            return Ok(ReadOutcome::Absent);
        }
        if metadata.len() > cap {
            return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                limit: cap,
            }));
        }
        // Metadata may lie (R-DISC-6): the count below is what enforces the cap.
        let expected = usize::try_from(metadata.len()).unwrap_or(0).min(1 << 24);
        // Read straight into the text buffer, a chunk at a time (the token
        // is checked between chunks); only the bytes a chunk may receive
        // are zeroed, so a small file never pays for a whole chunk.
        let mut bytes: Vec<u8> = Vec::with_capacity(expected + 1);
        loop {
            check(cancel)?;
            let start = bytes.len();
            let want = if start < expected {
                (expected - start + 1).min(CHUNK)
            } else {
                CHUNK.min(start.max(4096))
            };
            bytes.resize(start + want, 0);
            let read = file.read(&mut bytes[start..]);
            bytes.truncate(start + read.as_ref().map_or(0, |n| *n));
            let n = match read {
                Ok(0) => break,
                Ok(n) => n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    return Ok(ReadOutcome::Unavailable(match classify(&error) {
                        Class::Unavailable(reason) => reason,
                        _ => Unavailable::Io(error.to_string()),
                    }));
                }
            };
            if (start + n) as u64 > cap {
                return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                    limit: cap,
                }));
            }
        }
        let bytes_read = bytes.len() as u64;
        Ok(ReadOutcome::Loaded(LoadedText {
            text: decode_owned(bytes),
            version: version_of(&Raw::of(&metadata), seen),
            identity: FileIdentity::Inode {
                dev: metadata.dev(),
                ino: metadata.ino(),
            },
            bytes_read,
        }))
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
        let inner = Arc::clone(&self.inner);
        let dirs = dirs.to_vec();
        let names = names.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
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
            paths.iter().map(|path| inner.probe(path, token)).collect()
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
        let inner = Arc::clone(&self.inner);
        let paths = paths.to_vec();
        Box::pin(run_blocking(self.inline, cancel, move |token| {
            paths
                .iter()
                .map(|path| inner.read_text(path, max_source_bytes, token))
                .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use std::sync::mpsc;
    use std::time::Duration;

    #[tokio::test]
    async fn cancel_returns_while_the_blocking_work_is_still_stuck() {
        let cancel = CancellationToken::new();
        let (entered_tx, entered_rx) = tokio::sync::oneshot::channel();
        let (stuck_tx, stuck_rx) = mpsc::channel::<()>();
        let work = run_blocking(false, &cancel, move |_| {
            let _ = entered_tx.send(());
            // Stands in for a syscall that cannot be interrupted.
            let _ = stuck_rx.recv_timeout(Duration::from_secs(30));
            Ok(())
        });
        let canceller = async {
            let _ = entered_rx.await;
            cancel.cancel();
        };
        let (result, ()) = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::join!(work, canceller)
        })
        .await
        .expect("cancellation waited for the blocking work");
        assert_eq!(result, Err(Cancelled));
        drop(stuck_tx);
    }

    /// Inline work runs on the polling thread, pooled work elsewhere
    /// (R-HOOK-6: the hook's provider hands nothing to the blocking pool).
    #[rstest::rstest]
    #[case::inline(true)]
    #[case::pooled(false)]
    #[tokio::test(flavor = "current_thread")]
    async fn inline_work_runs_on_the_calling_thread(#[case] inline: bool) {
        let caller = std::thread::current().id();
        let ran_on = run_blocking(inline, &CancellationToken::new(), |_| {
            Ok(std::thread::current().id())
        })
        .await
        .expect("not cancelled");
        assert_eq!(ran_on == caller, inline);
    }

    /// Inline or pooled, the provider sees the same files, and a token
    /// cancelled before the call is honoured either way.
    #[rstest::rstest]
    #[case::inline(true)]
    #[case::pooled(false)]
    #[tokio::test(flavor = "current_thread")]
    async fn inline_provider_reads_what_the_pooled_one_reads(#[case] inline: bool) {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::write(base.join("AGENTS.md"), "be brief\n").unwrap();
        let provider = CapStdProvider::new([base.clone()], ambient_authority())
            .unwrap()
            .run_inline(inline);
        let cancel = CancellationToken::new();
        assert!(matches!(
            provider.probe(&base.join("AGENTS.md"), &cancel).await,
            Ok(Probe::Present(_))
        ));
        match provider
            .read_text(&base.join("AGENTS.md"), 1024, &cancel)
            .await
        {
            Ok(ReadOutcome::Loaded(text)) => assert_eq!(text.text, "be brief\n"),
            other => panic!("not loaded: {other:?}"),
        }
        assert_eq!(
            provider.probe(&base.join("missing.md"), &cancel).await,
            Ok(Probe::Absent)
        );
        cancel.cancel();
        assert_eq!(
            provider.probe(&base.join("AGENTS.md"), &cancel).await,
            Err(Cancelled)
        );
    }

    #[tokio::test]
    async fn missing_roots_are_skipped_and_relative_roots_rejected() {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::write(base.join("file"), "x").unwrap();
        let provider = CapStdProvider::new(
            [
                base.join("missing"),
                base.join("file"),
                base.clone(),
                base.join("."),
            ],
            ambient_authority(),
        )
        .unwrap();
        assert_eq!(provider.roots().collect::<Vec<_>>(), [base.as_path()]);
        // A missing root is kept: nothing under it until it appears, then it
        // is trusted like the others (a DSH home created mid-session).
        let late = CapStdProvider::new([base.join("late")], ambient_authority()).unwrap();
        let cancel = CancellationToken::new();
        let file = base.join("late/AGENTS.md");
        assert_eq!(late.probe(&file, &cancel).await, Ok(Probe::Absent));
        std::fs::create_dir(base.join("late")).unwrap();
        std::fs::write(&file, "late rule").unwrap();
        assert!(matches!(
            late.probe(&file, &cancel).await,
            Ok(Probe::Present(_))
        ));
        assert!(matches!(
            late.read_text(&file, 100, &cancel).await,
            Ok(ReadOutcome::Loaded(t)) if t.text == "late rule"
        ));
        assert!(matches!(
            CapStdProvider::new([Utf8PathBuf::from("relative")], ambient_authority()),
            Err(ProviderError::RelativeRoot { .. })
        ));
    }

    #[tokio::test]
    async fn nested_root_owns_its_subtree() {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::create_dir_all(base.join("home")).unwrap();
        std::fs::write(base.join("home/AGENTS.md"), "g").unwrap();
        let provider =
            CapStdProvider::new([base.clone(), base.join("home")], ambient_authority()).unwrap();
        assert_eq!(provider.roots().next(), Some(base.join("home").as_path()));
        let probe = provider
            .probe(&base.join("home/AGENTS.md"), &CancellationToken::new())
            .await
            .unwrap();
        assert!(matches!(probe, Probe::Present(_)));
    }

    #[tokio::test]
    async fn devices_are_absent_and_never_opened() {
        // `/dev` as a trusted root needs no privileges; `/dev/zero` would
        // never end if it were read, so a regression fails by timeout.
        let provider =
            CapStdProvider::new([Utf8PathBuf::from("/dev")], ambient_authority()).unwrap();
        let cancel = CancellationToken::new();
        let checks = async {
            for device in ["/dev/null", "/dev/zero"] {
                let path = Utf8Path::new(device);
                assert_eq!(provider.probe(path, &cancel).await, Ok(Probe::Absent));
                assert_eq!(
                    provider.read_text(path, u64::MAX, &cancel).await,
                    Ok(ReadOutcome::Absent)
                );
            }
        };
        tokio::time::timeout(Duration::from_secs(10), checks)
            .await
            .expect("a device was read");
    }

    #[test]
    fn classifies_os_errors() {
        let of = |errno: Errno| classify(&io::Error::from_raw_os_error(errno.raw_os_error()));
        assert!(matches!(of(Errno::NOENT), Class::Absent));
        assert!(matches!(of(Errno::NOTDIR), Class::Absent));
        assert!(matches!(
            of(Errno::LOOP),
            Class::Unavailable(Unavailable::Loop)
        ));
        assert!(matches!(
            of(Errno::ACCESS),
            Class::Unavailable(Unavailable::PermissionDenied)
        ));
        assert!(matches!(
            of(Errno::TIMEDOUT),
            Class::Unavailable(Unavailable::TimedOut)
        ));
        assert!(matches!(
            of(Errno::IO),
            Class::Unavailable(Unavailable::Io(_))
        ));
        // cap-std's sandbox refusal carries no OS code.
        let escape = io::Error::new(io::ErrorKind::PermissionDenied, "a path led outside");
        assert!(matches!(classify(&escape), Class::Escape));
    }

    /// Directory stamps: the cached path must answer exactly what a fresh,
    /// uncached provider answers, after every kind of change. Timestamps
    /// tick coarsely, so each change waits past a tick first; the margin is
    /// zero so the stamps of this just-built tree are trusted at all.
    mod stamps {
        use super::*;
        use std::os::unix::fs::symlink;

        const NAMES: [&str; 4] = [
            "AGENTS.md",
            "CLAUDE.md",
            "AGENTS.local.md",
            "CLAUDE.local.md",
        ];
        /// Longer than any kernel timestamp tick (1-10 ms).
        const TICK: Duration = Duration::from_millis(25);

        struct Fixture {
            _tmp: tempfile::TempDir,
            root: Utf8PathBuf,
            cached: CapStdProvider,
            /// `Some`: every probe is a new provider (a new process) that
            /// only has the memory the previous one encoded (decision 0037).
            memory: Option<std::cell::RefCell<DirMemory>>,
            /// Lookups answered without a syscall, over all providers.
            skipped: std::cell::Cell<u64>,
        }

        /// How a fixture's probes carry what they learned to the next.
        #[derive(Debug, Clone, Copy)]
        enum Carry {
            /// One provider, its handle cache (`dircache`).
            Handles,
            /// A new provider per probe, with the encoded `DirMemory`.
            Memory,
        }

        impl Fixture {
            fn carrying(carry: Carry) -> Self {
                let mut fx = Self::new();
                if matches!(carry, Carry::Memory) {
                    fx.memory = Some(std::cell::RefCell::new(DirMemory::new()));
                }
                fx
            }

            /// A provider as a new process builds it: margin zero (the tree
            /// is seconds old), the memory decoded from its encoding.
            fn process(&self, memory: DirMemory) -> CapStdProvider {
                let mut p = CapStdProvider::new([self.root.clone()], ambient_authority()).unwrap();
                Arc::get_mut(&mut p.inner).unwrap().margin = Duration::ZERO;
                p.remembering(memory)
            }

            fn new() -> Self {
                let tmp = tempfile::tempdir().unwrap();
                let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
                std::fs::create_dir_all(root.join("a/b")).unwrap();
                std::fs::write(root.join("a/b/AGENTS.md"), "rules").unwrap();
                let mut cached = CapStdProvider::new([root.clone()], ambient_authority()).unwrap();
                Arc::get_mut(&mut cached.inner).unwrap().margin = Duration::ZERO;
                std::thread::sleep(TICK);
                Self {
                    _tmp: tmp,
                    root,
                    cached,
                    memory: None,
                    skipped: std::cell::Cell::new(0),
                }
            }

            fn dirs(&self) -> Vec<Utf8PathBuf> {
                ["a", "a/b", "a/b/c"]
                    .iter()
                    .map(|d| self.root.join(d))
                    .collect()
            }

            /// Probes through the cache and checks the answer against a
            /// provider that has never seen the tree.
            fn probe(&self) -> Vec<Vec<Probe>> {
                let names: Vec<String> = NAMES.map(str::to_owned).to_vec();
                let cancel = CancellationToken::new();
                let got = match &self.memory {
                    None => self
                        .cached
                        .inner
                        .probe_dirs(&self.dirs(), &names, &cancel)
                        .unwrap(),
                    Some(memory) => {
                        let carried = DirMemory::decode(&memory.borrow().encode());
                        let provider = self.process(carried.clone());
                        let got = provider
                            .inner
                            .probe_dirs(&self.dirs(), &names, &cancel)
                            .unwrap();
                        let skipped = provider.inner.dirs.lock().unwrap().skipped;
                        self.skipped.set(self.skipped.get() + skipped);
                        *memory.borrow_mut() = carried;
                        got
                    }
                };
                let fresh = CapStdProvider::new([self.root.clone()], ambient_authority()).unwrap();
                let want = fresh
                    .inner
                    .probe_dirs(&self.dirs(), &names, &cancel)
                    .unwrap();
                assert_eq!(got, want, "cached probes differ from a fresh provider's");
                got
            }

            fn skipped(&self) -> u64 {
                self.cached.inner.dirs.lock().unwrap().skipped + self.skipped.get()
            }

            fn change(&self, f: impl FnOnce(&Utf8Path)) {
                f(&self.root);
                std::thread::sleep(TICK);
            }
        }

        fn present(p: &Probe) -> bool {
            matches!(p, Probe::Present(_))
        }

        #[test]
        fn unchanged_directories_answer_absent_names_without_a_lookup() {
            let fx = Fixture::new();
            let first = fx.probe();
            assert!(present(&first[1][0]));
            assert_eq!(fx.skipped(), 0);
            fx.probe();
            // a: 4 absent names, a/b: 3; a/b/c does not exist.
            assert_eq!(fx.skipped(), 7);
            assert!(fx.cached.inner.dirs.lock().unwrap().len() >= 2);
        }

        /// A new process with the memory of the last one answers an
        /// unchanged tree's absent names, and a directory that is missing,
        /// without a lookup (decision 0037).
        #[cfg(target_os = "linux")]
        #[test]
        fn a_new_process_with_the_memory_skips_what_it_proves() {
            let fx = Fixture::carrying(Carry::Memory);
            fx.probe();
            assert_eq!(fx.skipped(), 0, "the first process has no memory");
            fx.probe();
            // a: 4 absent names, a/b: 3 (a/b/c is missing: no lookup at all).
            assert_eq!(fx.skipped(), 7);
            let memory = fx.memory.as_ref().unwrap().borrow().clone();
            assert_eq!(memory.len(), 4, "the root, a, a/b, and a/b/c as missing");
            assert!(!memory.changed(), "nothing new to write back");
        }

        /// A memory whose facts no longer hold is never used: a stale
        /// encoding (here: the tree rebuilt under the same paths) gives
        /// exactly a fresh provider's answers.
        #[test]
        fn a_stale_memory_is_never_trusted() {
            let fx = Fixture::carrying(Carry::Memory);
            fx.probe();
            let stale = fx.memory.as_ref().unwrap().borrow().encode();
            fx.change(|r| {
                std::fs::rename(r.join("a"), r.join("old-a")).unwrap();
                std::fs::create_dir_all(r.join("a/b/c")).unwrap();
                std::fs::write(r.join("a/b/CLAUDE.md"), "new").unwrap();
                std::fs::write(r.join("a/b/c/AGENTS.md"), "deep").unwrap();
            });
            *fx.memory.as_ref().unwrap().borrow_mut() = DirMemory::decode(&stale);
            let p = fx.probe();
            assert!(present(&p[1][1]) && present(&p[2][0]));
            assert!(!present(&p[1][0]));
        }

        #[rstest::rstest]
        #[case::handles(Carry::Handles)]
        #[case::memory(Carry::Memory)]
        fn every_kind_of_change_is_seen(#[case] carry: Carry) {
            let fx = Fixture::carrying(carry);
            fx.probe();
            fx.probe();
            // A file created in a known directory.
            fx.change(|r| std::fs::write(r.join("a/b/CLAUDE.local.md"), "local").unwrap());
            assert!(present(&fx.probe()[1][3]));
            // Edited in place: no entry changes, the version must.
            let before = fx.probe()[1][0].clone();
            fx.change(|r| std::fs::write(r.join("a/b/AGENTS.md"), "rules, longer").unwrap());
            assert_ne!(fx.probe()[1][0], before);
            // Removed.
            fx.change(|r| std::fs::remove_file(r.join("a/b/CLAUDE.local.md")).unwrap());
            assert_eq!(fx.probe()[1][3], Probe::Absent);
            // The directory replaced under its name (its parent changes).
            fx.change(|r| {
                std::fs::rename(r.join("a/b"), r.join("a/old-b")).unwrap();
                std::fs::create_dir(r.join("a/b")).unwrap();
                std::fs::write(r.join("a/b/CLAUDE.md"), "other").unwrap();
            });
            let p = fx.probe();
            assert_eq!(p[1][0], Probe::Absent);
            assert!(present(&p[1][1]));
            // An ancestor replaced: only the root's stamp moves.
            fx.change(|r| {
                std::fs::rename(r.join("a"), r.join("old-a")).unwrap();
                std::fs::create_dir_all(r.join("a/b/c")).unwrap();
                std::fs::write(r.join("a/b/c/AGENTS.local.md"), "deep").unwrap();
            });
            let p = fx.probe();
            assert!(!present(&p[1][1]));
            assert!(present(&p[2][2]));
            // A known directory moved out of the root and linked back: the
            // same directory, now reached through a symlink that leaves it.
            let outside = tempfile::tempdir().unwrap();
            fx.change(|r| {
                std::fs::rename(r.join("a/b"), outside.path().join("b")).unwrap();
                symlink(outside.path().join("b"), r.join("a/b")).unwrap();
            });
            fx.probe();
            fx.change(|r| {
                std::fs::remove_file(r.join("a/b")).unwrap();
                std::fs::rename(outside.path().join("b"), r.join("a/b")).unwrap();
            });
            fx.probe();
            // A dangling link whose target appears in another directory.
            fx.change(|r| symlink("../../t.md", r.join("a/b/AGENTS.md")).unwrap());
            fx.probe();
            fx.change(|r| std::fs::write(r.join("t.md"), "target").unwrap());
            assert!(present(&fx.probe()[1][0]));
            // Permissions of a known directory (its ctime moves).
            fx.change(|r| {
                std::fs::set_permissions(
                    r.join("a/b/c"),
                    std::os::unix::fs::PermissionsExt::from_mode(0o000),
                )
                .unwrap()
            });
            fx.probe();
            fx.change(|r| {
                std::fs::set_permissions(
                    r.join("a/b/c"),
                    std::os::unix::fs::PermissionsExt::from_mode(0o755),
                )
                .unwrap()
            });
            assert!(present(&fx.probe()[2][2]));
        }

        #[test]
        fn a_directory_that_is_gone_gives_its_handle_back() {
            let fx = Fixture::new();
            fx.change(|r| std::fs::create_dir(r.join("a/b/c")).unwrap());
            fx.probe();
            let held = || fx.cached.inner.dirs.lock().unwrap().len();
            assert_eq!(held(), 3, "a, a/b and a/b/c");
            fx.change(|r| std::fs::remove_dir(r.join("a/b/c")).unwrap());
            fx.probe();
            assert_eq!(held(), 2);
            // The freed slot serves the next directory.
            fx.change(|r| std::fs::create_dir(r.join("a/b/c")).unwrap());
            fx.probe();
            assert_eq!(held(), 3);
        }

        #[test]
        fn a_directory_changed_within_the_margin_is_never_trusted() {
            let tmp = tempfile::tempdir().unwrap();
            let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
            std::fs::create_dir_all(root.join("a")).unwrap();
            // The default margin: this tree was written just now.
            let provider = CapStdProvider::new([root.clone()], ambient_authority()).unwrap();
            let names: Vec<String> = NAMES.map(str::to_owned).to_vec();
            let cancel = CancellationToken::new();
            for _ in 0..3 {
                let p = provider
                    .inner
                    .probe_dirs(&[root.join("a")], &names, &cancel)
                    .unwrap();
                assert_eq!(p, vec![vec![Probe::Absent; 4]]);
            }
            assert_eq!(provider.inner.dirs.lock().unwrap().skipped, 0);
        }

        /// A seeded walk of random changes, checked against a fresh provider
        /// after each: what a table of cases cannot enumerate.
        #[rstest::rstest]
        #[case::handles(Carry::Handles)]
        #[case::memory(Carry::Memory)]
        fn random_changes_match_a_fresh_provider(#[case] carry: Carry) {
            let fx = Fixture::carrying(carry);
            let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut next = move |n: u64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % n
            };
            let dirs = ["a", "a/b", "a/b/c"];
            for step in 0..40 {
                let dir = fx.root.join(dirs[next(3) as usize]);
                let name = NAMES[next(4) as usize];
                let path = dir.join(name);
                fx.change(|_| {
                    let _ = std::fs::remove_file(&path);
                    match next(5) {
                        0 => {}
                        1 => {
                            let _ = std::fs::create_dir_all(&dir);
                            let _ = std::fs::write(&path, format!("v{step}"));
                        }
                        2 => {
                            let _ = std::fs::create_dir_all(&dir);
                            let _ = symlink(NAMES[next(4) as usize], &path);
                        }
                        3 => {
                            let _ = std::fs::remove_dir_all(&dir);
                        }
                        _ => {
                            let _ = std::fs::rename(
                                fx.root.join("a/b"),
                                fx.root.join(format!("gone{step}")),
                            );
                            let _ = std::fs::create_dir_all(fx.root.join("a/b"));
                        }
                    }
                });
                fx.probe();
                fx.probe();
            }
            assert!(fx.skipped() > 0, "the walk never took the fast path");
        }
    }
}
