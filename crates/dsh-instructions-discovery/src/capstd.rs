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
//! Limitation: roots are matched lexically, so a link whose absolute text
//! names a root through a different spelling (e.g. via a symlinked parent of
//! the root) is reported as outside the trusted roots.

use std::fmt;
use std::io::{self, Read};
use std::sync::{Arc, OnceLock};

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::OpenOptionsSyncExt;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata, MetadataExt, OpenOptions};
use rustix::io::Errno;
use tokio_util::sync::CancellationToken;

use crate::memory::MAX_LINK_HOPS;
use crate::paths::{link_target, normalize};
use crate::provider::{
    BoxFuture, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText, MarkerProbe,
    PresentFile, Probe, ReadOutcome, Unavailable,
};
use crate::text::decode_text;

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
/// use dsh_instructions_discovery::{CancellationToken, CapStdProvider, FsProvider, ReadOutcome};
///
/// let tmp = tempfile::tempdir().unwrap();
/// let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
/// std::fs::write(root.join("AGENTS.md"), "\u{FEFF}rule").unwrap();
///
/// let fs = CapStdProvider::new([root.clone()]).unwrap();
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
}

struct Inner {
    /// Deepest first, so a root nested in another (the DSH home inside the
    /// project) owns its subtree.
    roots: Vec<Root>,
}

struct Root {
    path: Utf8PathBuf,
    /// Opened at construction, or on first use for a root that did not exist
    /// yet (a DSH home created mid-session).
    dir: OnceLock<Dir>,
}

impl Root {
    /// The root's handle, opening it now if it appeared since.
    fn handle(&self) -> Option<&Dir> {
        if let Some(dir) = self.dir.get() {
            return Some(dir);
        }
        let dir = Dir::open_ambient_dir(&self.path, ambient_authority()).ok()?;
        let _ = self.dir.set(dir);
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

/// (dev, ino, size, mtime, ctime) folded into four words; equal versions of a
/// real file imply none of these changed on one device.
fn version_of(metadata: &Metadata) -> FileVersion {
    FileVersion::new([
        metadata.ino(),
        metadata.size(),
        nanos(metadata.mtime(), metadata.mtime_nsec()),
        nanos(metadata.ctime(), metadata.ctime_nsec()) ^ metadata.dev().rotate_left(32),
    ])
}

fn identity_of(metadata: &Metadata) -> FileIdentity {
    FileIdentity::Inode {
        dev: metadata.dev(),
        ino: metadata.ino(),
    }
}

/// A resolved target is present only if it is a regular file (R-DISC-4).
fn classify_metadata(metadata: &Metadata) -> Probe {
    if metadata.is_file() {
        Probe::Present(PresentFile {
            size: metadata.len(),
            version: version_of(metadata),
            identity: identity_of(metadata),
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
async fn run_blocking<T, F>(cancel: &CancellationToken, work: F) -> Result<T, Cancelled>
where
    T: Send + 'static,
    F: FnOnce(&CancellationToken) -> Result<T, Cancelled> + Send + 'static,
{
    check(cancel)?;
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
    pub fn new(roots: impl IntoIterator<Item = Utf8PathBuf>) -> Result<Self, ProviderError> {
        let mut opened: Vec<Root> = Vec::new();
        for root in roots {
            if !root.is_absolute() {
                return Err(ProviderError::RelativeRoot { path: root });
            }
            let path = normalize(&root);
            if opened.iter().any(|r| r.path == path) {
                continue;
            }
            match Dir::open_ambient_dir(&path, ambient_authority()) {
                Ok(dir) => opened.push(Root {
                    path,
                    dir: OnceLock::from(dir),
                }),
                Err(error) if matches!(classify(&error), Class::Absent) => {
                    // Kept: paths under it are absent until it exists.
                    tracing::debug!(root = %path, %error, "trusted root does not exist yet");
                    opened.push(Root {
                        path,
                        dir: OnceLock::new(),
                    });
                }
                Err(source) => return Err(ProviderError::OpenRoot { path, source }),
            }
        }
        opened.sort_by_key(|r| std::cmp::Reverse(r.path.components().count()));
        Ok(Self {
            inner: Arc::new(Inner { roots: opened }),
        })
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
        self.locate(dir)
            .and_then(|(root, rel)| root.handle()?.open_dir(rel.as_std_path()).ok())
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
            let plain = !name.is_empty() && name != "." && name != ".." && !name.contains('/');
            let fast = match handle {
                // lstat first: one `fstatat` answers a miss, a regular file
                // and any other non-link entry; only a symlink pays for the
                // following `metadata` (an `openat2` + `fstat` in cap-std).
                Some(handle) if plain => match handle.symlink_metadata(name) {
                    Ok(metadata) if !metadata.file_type().is_symlink() => {
                        Some(classify_metadata(&metadata))
                    }
                    Ok(_) => handle
                        .metadata(name)
                        .map_or_else(|e| fast_error(&e), |m| Some(classify_metadata(&m))),
                    Err(error) => fast_error(&error),
                },
                _ => None,
            };
            probes.push(match fast {
                Some(probe) => probe,
                None => self.probe(&dir.join(name), cancel)?,
            });
        }
        Ok(probes)
    }

    /// Probes a list of directories; a directory that is a plain child of
    /// the previous one is opened relative to the previous handle, so a long
    /// chain never re-walks its path from the root (O(depth), not
    /// O(depth²), component lookups).
    fn probe_dirs(
        &self,
        dirs: &[Utf8PathBuf],
        names: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Vec<Probe>>, Cancelled> {
        let mut out = Vec::with_capacity(dirs.len());
        let mut previous: Option<(Utf8PathBuf, Dir)> = None;
        for dir in dirs {
            check(cancel)?;
            let dir = normalize(dir);
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
            let handle = child.or_else(|| self.open_dir(&dir));
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
        let mut bytes = Vec::with_capacity(expected);
        let mut chunk = vec![0u8; CHUNK];
        loop {
            check(cancel)?;
            let n = match file.read(&mut chunk) {
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
            if (bytes.len() + n) as u64 > cap {
                return Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
                    limit: cap,
                }));
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
        Ok(ReadOutcome::Loaded(LoadedText {
            text: decode_text(&bytes),
            version: version_of(&metadata),
            identity: identity_of(&metadata),
            bytes_read: bytes.len() as u64,
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
        Box::pin(run_blocking(cancel, move |token| inner.probe(&path, token)))
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
        Box::pin(run_blocking(cancel, move |token| {
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
        Box::pin(run_blocking(cancel, move |token| {
            inner.probe_dirs(&dirs, &names, token)
        }))
    }

    /// One blocking task for the whole marker walk.
    fn markers_until_found<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<MarkerProbe>, Cancelled>> {
        let paths = paths.to_vec();
        Box::pin(run_blocking(cancel, move |token| {
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
        Box::pin(run_blocking(cancel, move |token| {
            inner.read_text(&path, max_source_bytes, token)
        }))
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        let path = path.to_owned();
        Box::pin(run_blocking(cancel, move |_| Ok(marker_sync(&path))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[tokio::test]
    async fn cancel_returns_while_the_blocking_work_is_still_stuck() {
        let cancel = CancellationToken::new();
        let (entered_tx, entered_rx) = tokio::sync::oneshot::channel();
        let (stuck_tx, stuck_rx) = mpsc::channel::<()>();
        let work = run_blocking(&cancel, move |_| {
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

    #[tokio::test]
    async fn missing_roots_are_skipped_and_relative_roots_rejected() {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::write(base.join("file"), "x").unwrap();
        let provider = CapStdProvider::new([
            base.join("missing"),
            base.join("file"),
            base.clone(),
            base.join("."),
        ])
        .unwrap();
        assert_eq!(provider.roots().collect::<Vec<_>>(), [base.as_path()]);
        // A missing root is kept: nothing under it until it appears, then it
        // is trusted like the others (a DSH home created mid-session).
        let late = CapStdProvider::new([base.join("late")]).unwrap();
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
            CapStdProvider::new([Utf8PathBuf::from("relative")]),
            Err(ProviderError::RelativeRoot { .. })
        ));
    }

    #[tokio::test]
    async fn nested_root_owns_its_subtree() {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::create_dir_all(base.join("home")).unwrap();
        std::fs::write(base.join("home/AGENTS.md"), "g").unwrap();
        let provider = CapStdProvider::new([base.clone(), base.join("home")]).unwrap();
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
        let provider = CapStdProvider::new([Utf8PathBuf::from("/dev")]).unwrap();
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
}
