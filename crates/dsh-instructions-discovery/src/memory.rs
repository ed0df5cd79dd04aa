//! The in-memory provider: a deterministic filesystem model for tests, the
//! conformance suite and benchmarks, with fault, gate, stale-size and latency
//! injection (conformance format, "Filesystem" table).
//!
//! Clones share the filesystem, the gates and the counters, so a test can keep
//! one handle to drive the filesystem while the code under test owns another.
//!
//! # Model
//!
//! * Every operation a provider call performs is one of [`FsOp`]: a probe is
//!   `resolve` + `stat`, a read is `resolve` + `stat` + `read`, a root-marker
//!   check is `stat` of the marker itself (its own link not followed).
//! * A fault or a gate applies to an operation on its own path or on any path
//!   the operation passes through while following links (the link itself, each
//!   hop, the final target).
//! * Paths are followed exactly as the cap-std provider follows them on disk
//!   (the `walk` module, decision 0042): roots matched lexically and opened
//!   through their links, lookups beneath a root with physical `..`,
//!   escaping links re-anchored across roots, [`MAX_LINK_HOPS`](crate::provider::MAX_LINK_HOPS) links per
//!   lookup and re-anchorings per path.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use camino::{Utf8Path, Utf8PathBuf};
//! use dsh_instructions_discovery::{CancellationToken, FsProvider, memory::{MemNode, MemoryProvider}, provider::Probe};
//!
//! let fs = MemoryProvider::new(vec![Utf8PathBuf::from("/repo")]);
//! fs.insert(Utf8Path::new("/repo/AGENTS.md"), MemNode::file("rule"));
//! fs.insert(Utf8Path::new("/repo/CLAUDE.md"), MemNode::link("AGENTS.md"));
//! let cancel = CancellationToken::new();
//! let probe = fs.probe(Utf8Path::new("/repo/CLAUDE.md"), &cancel).await.unwrap();
//! assert!(matches!(probe, Probe::Present(ref file) if file.size == 4));
//! assert_eq!(fs.counters().probes, 1);
//! # });
//! ```
//!
//! The parts: the public vocabulary of nodes, operations and faults
//! (`nodes`), the shared state behind the lock with its gates (`state`), and
//! what each provider call asks of the walk (`requests`), how a path is
//! followed (`walk`); this file holds the provider itself and its
//! [`FsProvider`] impl.

mod named;
mod nodes;
mod requests;
mod state;
#[cfg(test)]
mod tests;
mod walk;

pub use nodes::{Errno, Fault, FsOp, MemKind, MemNode, OpCounters};

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use tokio_util::sync::CancellationToken;

use crate::DiscoveryError;
use crate::paths::normalize;
use crate::provider::{
    BoxFuture, Cancelled, DirListing, EntryKind, FileIdentity, FileVersion, FsProvider, LoadedText,
    MarkerProbe, PathKind, PresentFile, Probe, ReadOutcome, Unavailable, each,
};
use crate::text::decode_text;
use requests::{KIND, MARKER, PROBE, ReadRequest, ReadStep, Request, Resolved, Step};
use state::{BlockGuard, Entry, Gate, Shared, State, lock, remove_subtree};
use walk::{MemRoot, RootError};

#[cfg(test)]
use crate::provider::MAX_LINK_HOPS;

/// Bytes consumed per read step, so a streaming read observes the cap and the
/// cancellation token the way a disk read does.
const CHUNK: usize = 8 * 1024;

/// The in-memory filesystem provider (see the module docs).
#[derive(Clone, Debug)]
pub struct MemoryProvider {
    shared: Arc<Shared>,
    /// Deepest first; clones share what each root opened as.
    roots: Arc<[MemRoot]>,
    /// Names-only roots ([`MemoryProvider::with_names_only`](crate::memory::MemoryProvider::with_names_only)).
    named: Option<Arc<named::MemNamed>>,
}

impl MemoryProvider {
    /// An empty filesystem (only `/`) whose reads are confined to
    /// `trusted_roots` (R-DISC-7).
    ///
    /// ```
    /// use camino::Utf8PathBuf;
    /// use dsh_instructions_discovery::memory::MemoryProvider;
    /// let fs = MemoryProvider::new(vec![Utf8PathBuf::from("/repo")]);
    /// assert_eq!(fs.counters().probes, 0);
    /// ```
    pub fn new(trusted_roots: Vec<Utf8PathBuf>) -> Self {
        Self::on(Arc::default(), trusted_roots)
    }

    /// A handle on the same filesystem, gates and counters with other trusted
    /// roots (a remount with a new `trusted_roots` list).
    ///
    /// Each root is opened now, as the cap-std provider opens its roots when
    /// it is built: through every link on its path, so a linked root (a
    /// symlinked cwd) reads its target, and the directory it opened as is
    /// kept for this handle and its clones even if the link changes later.
    /// A root that is missing or no directory yet is opened on first use.
    pub fn with_trusted_roots(&self, roots: Vec<Utf8PathBuf>) -> Self {
        Self::on(Arc::clone(&self.shared), roots)
    }

    /// [`Self::with_trusted_roots`], refusing what
    /// [`CapStdProvider::new`](crate::CapStdProvider::new) refuses, with the
    /// same error: a relative root, and a root whose path is a link loop
    /// (`ELOOP`); the first in the given order.
    ///
    /// # Errors
    ///
    /// [`DiscoveryError::RelativeRoot`] and [`DiscoveryError::OpenRoot`].
    ///
    /// ```
    /// use camino::Utf8Path;
    /// use dsh_instructions_discovery::memory::{MemNode, MemoryProvider};
    /// let fs = MemoryProvider::new(Vec::new());
    /// fs.insert(Utf8Path::new("/w/a"), MemNode::link("b"));
    /// fs.insert(Utf8Path::new("/w/b"), MemNode::link("a"));
    /// assert!(fs.try_with_trusted_roots(vec!["/w/a".into()]).is_err());
    /// assert!(fs.try_with_trusted_roots(vec!["relative".into()]).is_err());
    /// assert!(fs.try_with_trusted_roots(vec!["/w/missing".into()]).is_ok());
    /// ```
    pub fn try_with_trusted_roots(&self, roots: Vec<Utf8PathBuf>) -> Result<Self, DiscoveryError> {
        let provider = self.with_trusted_roots(roots.clone());
        let state = lock(&provider.shared);
        for root in roots {
            if !root.is_absolute() {
                return Err(DiscoveryError::RelativeRoot { path: root });
            }
            let path = normalize(&root);
            let opened = provider.roots.iter().find(|r| r.path == path);
            if opened.is_some_and(|r| matches!(r.real(&state.nodes), Err(RootError::Loop))) {
                return Err(DiscoveryError::OpenRoot {
                    path,
                    source: std::io::Error::from_raw_os_error(
                        rustix::io::Errno::LOOP.raw_os_error(),
                    ),
                });
            }
        }
        drop(state);
        Ok(provider)
    }

    fn on(shared: Arc<Shared>, roots: Vec<Utf8PathBuf>) -> Self {
        let roots: Arc<[MemRoot]> = walk::roots_of(roots).into();
        let state = lock(&shared);
        for root in roots.iter() {
            // Opened now where it can be; retried on use otherwise.
            let _ = root.real(&state.nodes);
        }
        drop(state);
        Self {
            shared,
            roots,
            named: None,
        }
    }

    /// Whether a trusted root contains `path` lexically (as the cap-std
    /// provider locates a path): such a path is never a names-only one.
    fn inside_roots(&self, path: &Utf8Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(&root.path))
    }

    /// Writes `node` at `path`, creating parent directories (a non-directory
    /// parent is replaced by a directory) and replacing what was there,
    /// recursively for directories — except that a directory written over a
    /// directory keeps its content. Faults on `path` are cleared unless the
    /// node brings its own; a gate is armed only if the node has one (writing
    /// never opens a gate). A file gets a new version unless
    /// `node.keep_version` and a file was there.
    pub fn insert(&self, path: &Utf8Path, node: MemNode) {
        let path = normalize(path);
        let mut state = lock(&self.shared);
        if let Some(op) = node.gate {
            state.next_gate += 1;
            let id = state.next_gate;
            state.gates.insert(
                path.clone(),
                Gate {
                    op,
                    id,
                    blocking: false,
                },
            );
        }
        if path.parent().is_some() {
            let mut ancestors: Vec<Utf8PathBuf> =
                path.ancestors().skip(1).map(Utf8Path::to_owned).collect();
            ancestors.pop(); // `/` is always a directory
            // Top-down: a file or link standing where a parent directory must
            // be is replaced (it has nothing below it to lose).
            for ancestor in ancestors.into_iter().rev() {
                if !matches!(
                    state.nodes.get(&ancestor).map(|e| &e.kind),
                    Some(MemKind::Dir)
                ) {
                    let version = state.bump_version();
                    state.nodes.insert(ancestor, Entry::dir(version));
                }
            }
            let previous = state
                .nodes
                .get(&path)
                .map(|e| (matches!(e.kind, MemKind::Dir), e.version));
            let version = match previous {
                Some((_, version)) if node.keep_version => version,
                _ => state.bump_version(),
            };
            let keep_children =
                previous.is_some_and(|(was_dir, _)| was_dir) && node.kind == MemKind::Dir;
            if !keep_children {
                remove_subtree(&mut state.nodes, &path);
            }
            state.nodes.insert(
                path,
                Entry {
                    kind: node.kind,
                    fault: node.fault,
                    stale_size: node.stale_size,
                    version,
                },
            );
        }
        drop(state);
        self.shared.changed.notify_waiters();
    }

    /// Removes a file, link or (recursively) directory; `false` if nothing
    /// was there. Gates on the path stay armed.
    pub fn remove(&self, path: &Utf8Path) -> bool {
        let path = normalize(path);
        remove_subtree(&mut lock(&self.shared).nodes, &path)
    }

    /// Opens the gate on `path`: an operation blocked on it proceeds, and a
    /// gate not yet hit is spent without blocking anything.
    pub fn release(&self, path: &Utf8Path) {
        let path = normalize(path);
        lock(&self.shared).gates.remove(&path);
        self.shared.changed.notify_waiters();
    }

    /// Resolves once some operation on `path`, or through a link resolving
    /// to it, is blocked on a gate.
    pub async fn wait_blocked(&self, path: &Utf8Path) {
        let path = normalize(path);
        loop {
            let mut notified = pin!(self.shared.changed.notified());
            // Registered before checking, so a change in between is not lost.
            notified.as_mut().enable();
            if lock(&self.shared)
                .blocked
                .get(&path)
                .is_some_and(|n| *n > 0)
            {
                return;
            }
            notified.await;
        }
    }

    /// Operation counts so far.
    pub fn counters(&self) -> OpCounters {
        lock(&self.shared).counters
    }

    /// Sets every counter to zero.
    pub fn reset_counters(&self) {
        lock(&self.shared).counters = OpCounters::default();
    }

    /// Makes every provider call sleep this long first (cancellable); `None`
    /// removes the latency.
    pub fn set_latency(&self, latency: Option<Duration>) {
        lock(&self.shared).latency = latency;
    }

    /// Sleeps the configured latency, then counts a probe if asked.
    async fn begin(&self, cancel: &CancellationToken, probe: bool) -> Result<(), Cancelled> {
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        let latency = lock(&self.shared).latency;
        if let Some(latency) = latency {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Cancelled),
                () = tokio::time::sleep(latency) => {}
            }
        }
        if probe {
            lock(&self.shared).counters.probes += 1;
        }
        Ok(())
    }

    /// A request answered from metadata alone (probe, path kind, marker):
    /// counted as one probe, then executed.
    async fn counted<R: Request>(
        &self,
        path: &Utf8Path,
        request: &R,
        cancel: &CancellationToken,
    ) -> Result<R::Output, Cancelled> {
        self.begin(cancel, true).await?;
        self.execute(path, request, cancel).await
    }

    /// Plans the request, waiting on gates, until it can finish.
    async fn execute<R: Request>(
        &self,
        path: &Utf8Path,
        request: &R,
        cancel: &CancellationToken,
    ) -> Result<R::Output, Cancelled> {
        let path = normalize(path);
        loop {
            if cancel.is_cancelled() {
                return Err(Cancelled);
            }
            let step = {
                let mut state = lock(&self.shared);
                self.plan(&mut state, &path, request)
            };
            match step {
                Step::Done(output) => return Ok(output),
                Step::Blocked { gate, id, chain } => {
                    // The guard unregisters and spends the gate on every exit,
                    // including this future being dropped.
                    let guard = BlockGuard {
                        shared: &self.shared,
                        gate,
                        id,
                        chain,
                    };
                    self.shared.changed.notify_waiters();
                    guard.wait(cancel).await?;
                }
            }
        }
    }

    /// One synchronous pass over the request: either it finishes, or it
    /// blocks on the first armed gate in operation order.
    fn plan<R: Request>(&self, state: &mut State, path: &Utf8Path, request: &R) -> Step<R::Output> {
        let mut chain = vec![path.to_owned()];
        let named = if request.named() {
            self.resolve_named(state, path, &mut chain)
        } else {
            None
        };
        let resolved = if let Some(resolved) = named {
            resolved
        } else if request.follow() {
            walk::resolve_confined(&state.nodes, &self.roots, path, &mut chain)
        } else {
            walk::resolve_marker(&state.nodes, path, &mut chain)
        };
        if request.follow()
            && let Some(hit) = state.gate_or_fault(&chain, FsOp::Resolve)
        {
            return hit.into_step(request);
        }
        let target = match resolved {
            Resolved::Node(target) => target,
            Resolved::Absent => return Step::Done(request.absent()),
            Resolved::Unavailable(reason) => return Step::Done(request.unavailable(reason)),
        };
        if let Some(hit) = state.gate_or_fault(&chain, FsOp::Stat) {
            return hit.into_step(request);
        }
        let Some(Entry {
            kind: MemKind::File(bytes),
            stale_size,
            version,
            ..
        }) = state.nodes.get(&target)
        else {
            return Step::Done(if walk::is_dir(&state.nodes, &target) {
                request.directory()
            } else {
                request.not_a_file()
            });
        };
        let meta = PresentFile {
            size: stale_size.unwrap_or(bytes.len() as u64),
            version: FileVersion::new([*version, 0, 0, 0]),
            identity: FileIdentity::Path(target.clone()),
        };
        request.file(state, &chain, &target, meta)
    }
}

/// Streams `bytes` in chunks through a `cap + 1` window, like a disk read.
fn stream(
    bytes: &[u8],
    cap: u64,
    cancel: &CancellationToken,
) -> Result<(Result<usize, Unavailable>, u64), Cancelled> {
    let mut count: u64 = 0;
    for chunk in bytes.chunks(CHUNK) {
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        let room = cap.saturating_add(1).saturating_sub(count);
        let taken = (chunk.len() as u64).min(room);
        count += taken;
        if count > cap {
            return Ok((Err(Unavailable::TooLarge { limit: cap }), count));
        }
    }
    Ok((Ok(bytes.len()), count))
}

impl FsProvider for MemoryProvider {
    fn probe<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Probe, Cancelled>> {
        Box::pin(self.counted(path, &PROBE, cancel))
    }

    fn read_text<'a>(
        &'a self,
        path: &'a Utf8Path,
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>> {
        Box::pin(async move {
            self.begin(cancel, false).await?;
            let request = ReadRequest {
                cap: max_source_bytes,
            };
            let (bytes, cap, version, identity) = match self.execute(path, &request, cancel).await?
            {
                ReadStep::Finished(outcome) => return Ok(outcome),
                ReadStep::Stream {
                    bytes,
                    cap,
                    version,
                    identity,
                } => (bytes, cap, version, identity),
            };
            let streamed = stream(&bytes, cap, cancel);
            if let Ok((_, count)) = &streamed {
                lock(&self.shared).counters.bytes_read += count;
            }
            Ok(match streamed?.0 {
                Ok(len) => ReadOutcome::Loaded(LoadedText {
                    text: decode_text(&bytes),
                    version,
                    identity,
                    bytes_read: len as u64,
                }),
                Err(reason) => ReadOutcome::Unavailable(reason),
            })
        })
    }

    /// One counted probe per path, like [`FsProvider::probe`].
    fn path_kinds<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<PathKind>, Cancelled>> {
        Box::pin(each(paths, |path| self.counted(path, &KIND, cancel)))
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        Box::pin(self.counted(path, &MARKER, cancel))
    }

    /// The directory followed as the disk provider follows it (confined,
    /// links re-anchored), then its children by name, one counted probe.
    fn list_dir<'a>(
        &'a self,
        dir: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DirListing, Cancelled>> {
        Box::pin(async move {
            self.begin(cancel, true).await?;
            let path = normalize(dir);
            let state = lock(&self.shared);
            let mut chain = vec![path.clone()];
            let target = match walk::resolve_confined(&state.nodes, &self.roots, &path, &mut chain)
            {
                Resolved::Node(target) => target,
                Resolved::Absent => return Ok(DirListing::Absent),
                Resolved::Unavailable(reason) => return Ok(DirListing::Unavailable(reason)),
            };
            if !walk::is_dir(&state.nodes, &target) {
                return Ok(DirListing::Absent);
            }
            let mut entries = Vec::new();
            let mut truncated = false;
            let below = state
                .nodes
                .range::<Utf8PathBuf, _>((
                    std::ops::Bound::Excluded(&target),
                    std::ops::Bound::Unbounded,
                ))
                .take_while(|(p, _)| p.starts_with(&target));
            for (p, entry) in below {
                if p.parent() != Some(target.as_path()) {
                    continue;
                }
                let Some(name) = p.file_name() else { continue };
                if entries.len() == DirListing::MAX_ENTRIES {
                    truncated = true;
                    break;
                }
                let kind = match entry.kind {
                    MemKind::File(_) => EntryKind::File,
                    MemKind::Dir => EntryKind::Dir,
                    MemKind::Link(_) => EntryKind::Link,
                    MemKind::Fifo => EntryKind::Other,
                };
                entries.push((name.to_owned(), kind));
            }
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            Ok(DirListing::Entries { entries, truncated })
        })
    }
}
