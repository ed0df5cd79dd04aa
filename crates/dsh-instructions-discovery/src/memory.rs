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
//!   check is `stat` of the marker itself (no symlink following).
//! * A fault or a gate applies to an operation on its own path or on any path
//!   the operation passes through while following links (the link itself, each
//!   hop, the final target).
//! * Links are followed with a hop limit of [`MAX_LINK_HOPS`]; `..` in link
//!   text is resolved lexically against the link's directory.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use camino::{Utf8Path, Utf8PathBuf};
//! use dsh_instructions_discovery::{
//!     CancellationToken, FsProvider, MemNode, MemoryProvider, Probe,
//! };
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

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Bound;
use std::pin::pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::paths::{link_target, normalize};
use crate::provider::{
    BoxFuture, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText, MarkerProbe, PathKind,
    PresentFile, Probe, ReadOutcome, Unavailable,
};
use crate::text::decode_text;

pub(crate) use crate::provider::MAX_LINK_HOPS;

/// Bytes consumed per read step, so a streaming read observes the cap and the
/// cancellation token the way a disk read does.
const CHUNK: usize = 8 * 1024;

/// Operation counts since creation or the last [`MemoryProvider::reset_counters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounters {
    /// Files opened for content: one per `read_text` call that found a regular
    /// file within the size cap by metadata (whatever the number of chunks).
    pub reads: u64,
    /// One per probe (resolve + stat), per name in `probe_many`, per marker
    /// check.
    pub probes: u64,
    /// Raw bytes consumed by reads.
    pub bytes_read: u64,
}

/// What a path holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A regular file with these bytes.
    File(Vec<u8>),
    /// A directory.
    Dir,
    /// A symbolic link with this target text (relative or absolute).
    Link(String),
    /// A named pipe: always absent, never opened.
    Fifo,
}

/// One name table per enum, so `as_str`, `Display` and `FromStr` cannot
/// drift apart.
macro_rules! named {
    ($ty:ident, $what:literal, $doc:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            const ALL: &'static [Self] = &[$(Self::$variant),+];

            #[doc = $doc]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| UnknownName {
                        what: $what,
                        value: s.to_owned(),
                    })
            }
        }
    };
}

/// A filesystem operation, the unit faults and gates apply to.
///
/// ```
/// use dsh_instructions_discovery::FsOp;
/// assert_eq!(FsOp::Stat.as_str(), "stat");
/// assert_eq!("stat".parse::<FsOp>(), Ok(FsOp::Stat));
/// assert!("open".parse::<FsOp>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsOp {
    /// Following the path and its links to a target.
    Resolve,
    /// Reading the target's metadata (also the root-marker check).
    Stat,
    /// Reading the target's content.
    Read,
}

named!(FsOp, "filesystem operation", "The name used by the conformance format.", {
    Resolve => "resolve",
    Stat => "stat",
    Read => "read",
});

/// An injectable error.
///
/// ```
/// use dsh_instructions_discovery::FaultError;
/// assert_eq!("EACCES".parse::<FaultError>(), Ok(FaultError::Eacces));
/// assert_eq!(FaultError::Eio.as_str(), "EIO");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultError {
    /// Permission denied → [`Unavailable::PermissionDenied`].
    Eacces,
    /// I/O error → [`Unavailable::Io`].
    Eio,
    /// Too many symlink levels → [`Unavailable::Loop`].
    Eloop,
    /// Timed out → [`Unavailable::TimedOut`].
    Etimedout,
}

named!(FaultError, "fault error", "The errno name used by the conformance format.", {
    Eacces => "EACCES",
    Eio => "EIO",
    Eloop => "ELOOP",
    Etimedout => "ETIMEDOUT",
});

impl FaultError {
    /// The classification a real error of this kind gets (R-DISC-4).
    ///
    /// ```
    /// use dsh_instructions_discovery::{FaultError, Unavailable};
    /// assert_eq!(FaultError::Eloop.unavailable(), Unavailable::Loop);
    /// ```
    pub fn unavailable(self) -> Unavailable {
        match self {
            Self::Eacces => Unavailable::PermissionDenied,
            Self::Eio => Unavailable::Io("input/output error (injected)".to_owned()),
            Self::Eloop => Unavailable::Loop,
            Self::Etimedout => Unavailable::TimedOut,
        }
    }
}

/// A name that [`FsOp`] or [`FaultError`] does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what}: {value:?}")]
pub struct UnknownName {
    /// What was being parsed.
    pub what: &'static str,
    /// The rejected text.
    pub value: String,
}

/// An operation on a path that fails with an error until the path is written
/// again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The failing operation.
    pub op: FsOp,
    /// The error it fails with.
    pub error: FaultError,
}

/// A node to [`MemoryProvider::insert`], with its injections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemNode {
    /// What the path holds.
    pub kind: MemKind,
    /// An operation that fails on this path.
    pub fault: Option<Fault>,
    /// Size reported by `stat` instead of the real one.
    pub stale_size: Option<u64>,
    /// The first operation of this kind on this path blocks until released or
    /// cancelled.
    pub gate: Option<FsOp>,
    /// Keep the file's previous version although its content changes.
    pub keep_version: bool,
}

impl MemNode {
    fn new(kind: MemKind) -> Self {
        Self {
            kind,
            fault: None,
            stale_size: None,
            gate: None,
            keep_version: false,
        }
    }

    /// A regular file with these bytes.
    pub fn file(bytes: impl Into<Vec<u8>>) -> Self {
        Self::new(MemKind::File(bytes.into()))
    }

    /// A directory (inserting one where a directory exists keeps its content).
    pub fn dir() -> Self {
        Self::new(MemKind::Dir)
    }

    /// A symbolic link with this target text.
    pub fn link(target: impl Into<String>) -> Self {
        Self::new(MemKind::Link(target.into()))
    }

    /// A named pipe.
    pub fn fifo() -> Self {
        Self::new(MemKind::Fifo)
    }

    /// Makes `op` on this path fail with `error`.
    pub fn with_fault(self, op: FsOp, error: FaultError) -> Self {
        Self {
            fault: Some(Fault { op, error }),
            ..self
        }
    }

    /// Makes `stat` report `size` instead of the real size.
    pub fn with_stale_size(self, size: u64) -> Self {
        Self {
            stale_size: Some(size),
            ..self
        }
    }

    /// Blocks the first `op` on this path until released or cancelled.
    pub fn with_gate(self, op: FsOp) -> Self {
        Self {
            gate: Some(op),
            ..self
        }
    }

    /// Keeps the previous version of the file at this path on insert.
    pub fn keeping_version(self) -> Self {
        Self {
            keep_version: true,
            ..self
        }
    }
}

/// The in-memory filesystem provider (see the module docs).
#[derive(Clone, Debug)]
pub struct MemoryProvider {
    shared: Arc<Shared>,
    roots: Arc<[Utf8PathBuf]>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Woken on every gate and blocked-set change.
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    nodes: BTreeMap<Utf8PathBuf, Entry>,
    /// Gates live apart from nodes: writing or removing a path does not open
    /// its gate, only `release` or a cancellation does.
    gates: HashMap<Utf8PathBuf, Gate>,
    /// Paths an operation is currently blocked on (with multiplicity).
    blocked: HashMap<Utf8PathBuf, usize>,
    counters: OpCounters,
    latency: Option<Duration>,
    next_version: u64,
    next_gate: u64,
}

#[derive(Debug)]
struct Entry {
    kind: MemKind,
    fault: Option<Fault>,
    stale_size: Option<u64>,
    version: u64,
}

#[derive(Debug)]
struct Gate {
    op: FsOp,
    id: u64,
    /// Set once an operation blocks on it: later operations pass.
    blocking: bool,
}

/// What a provider call wants from the filesystem, and how each stage's
/// result becomes that call's output.
trait Request {
    type Output;
    /// Probes and reads follow links and stay inside the trusted roots;
    /// marker checks do neither and perform no `resolve` operation.
    const FOLLOW: bool;
    fn absent(&self) -> Self::Output;
    fn not_a_file(&self) -> Self::Output;
    /// The target is a directory (only path-kind requests tell it apart).
    fn directory(&self) -> Self::Output {
        self.not_a_file()
    }
    fn unavailable(&self, reason: Unavailable) -> Self::Output;
    /// The last stage, once the target is a regular file.
    fn file(
        &self,
        state: &mut State,
        chain: &[Utf8PathBuf],
        target: &Utf8Path,
        meta: PresentFile,
    ) -> Step<Self::Output>;
}

struct ProbeRequest;
struct MarkerRequest;
/// A shell-touch classification (metadata only, links followed, confined).
struct KindRequest;
struct ReadRequest {
    cap: u64,
}

/// Where a read stands when the lock is released.
enum ReadStep {
    Finished(ReadOutcome),
    /// The file is open: stream these bytes under the cap.
    Stream {
        bytes: Vec<u8>,
        cap: u64,
        version: FileVersion,
        identity: FileIdentity,
    },
}

impl Request for ProbeRequest {
    type Output = Probe;
    const FOLLOW: bool = true;
    fn absent(&self) -> Probe {
        Probe::Absent
    }
    fn not_a_file(&self) -> Probe {
        Probe::Absent
    }
    fn unavailable(&self, reason: Unavailable) -> Probe {
        Probe::Unavailable(reason)
    }
    fn file(
        &self,
        _: &mut State,
        _: &[Utf8PathBuf],
        _: &Utf8Path,
        meta: PresentFile,
    ) -> Step<Probe> {
        Step::Done(Probe::Present(meta))
    }
}

impl Request for KindRequest {
    type Output = PathKind;
    const FOLLOW: bool = true;
    fn absent(&self) -> PathKind {
        PathKind::Absent
    }
    fn not_a_file(&self) -> PathKind {
        PathKind::Other
    }
    fn directory(&self) -> PathKind {
        PathKind::Directory
    }
    fn unavailable(&self, reason: Unavailable) -> PathKind {
        PathKind::Unavailable(reason)
    }
    fn file(
        &self,
        _: &mut State,
        _: &[Utf8PathBuf],
        _: &Utf8Path,
        _: PresentFile,
    ) -> Step<PathKind> {
        Step::Done(PathKind::File)
    }
}

impl Request for MarkerRequest {
    type Output = MarkerProbe;
    const FOLLOW: bool = false;
    fn absent(&self) -> MarkerProbe {
        MarkerProbe::Missing
    }
    fn not_a_file(&self) -> MarkerProbe {
        MarkerProbe::Exists
    }
    fn unavailable(&self, reason: Unavailable) -> MarkerProbe {
        MarkerProbe::Failed(reason)
    }
    fn file(
        &self,
        _: &mut State,
        _: &[Utf8PathBuf],
        _: &Utf8Path,
        _: PresentFile,
    ) -> Step<MarkerProbe> {
        Step::Done(MarkerProbe::Exists)
    }
}

impl Request for ReadRequest {
    type Output = ReadStep;
    const FOLLOW: bool = true;
    fn absent(&self) -> ReadStep {
        ReadStep::Finished(ReadOutcome::Absent)
    }
    fn not_a_file(&self) -> ReadStep {
        ReadStep::Finished(ReadOutcome::Absent)
    }
    fn unavailable(&self, reason: Unavailable) -> ReadStep {
        ReadStep::Finished(ReadOutcome::Unavailable(reason))
    }
    fn file(
        &self,
        state: &mut State,
        chain: &[Utf8PathBuf],
        target: &Utf8Path,
        meta: PresentFile,
    ) -> Step<ReadStep> {
        if meta.size > self.cap {
            // Rejected by metadata: never opened (R-DISC-6).
            return Step::Done(self.unavailable(Unavailable::TooLarge { limit: self.cap }));
        }
        if let Some(hit) = state.gate_or_fault(chain, FsOp::Read) {
            if matches!(hit, GateOrFault::Fault(_)) {
                // The file was opened; the read itself failed.
                state.counters.reads += 1;
            }
            return hit.into_step(self);
        }
        let Some(Entry {
            kind: MemKind::File(bytes),
            ..
        }) = state.nodes.get(target)
        else {
            return Step::Done(self.not_a_file());
        };
        let bytes = bytes.clone();
        state.counters.reads += 1;
        Step::Done(ReadStep::Stream {
            bytes,
            cap: self.cap,
            version: meta.version,
            identity: meta.identity,
        })
    }
}

enum Resolved {
    Node(Utf8PathBuf),
    Absent,
    Unavailable(Unavailable),
}

enum Step<T> {
    /// An operation hit an armed gate (now marked blocking).
    Blocked {
        gate: Utf8PathBuf,
        id: u64,
        chain: Vec<Utf8PathBuf>,
    },
    Done(T),
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A panicking test thread must not wedge every other user of the fs.
    shared.state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryProvider {
    /// An empty filesystem (only `/`) whose reads are confined to
    /// `trusted_roots` (R-DISC-7).
    ///
    /// ```
    /// use camino::Utf8PathBuf;
    /// use dsh_instructions_discovery::MemoryProvider;
    /// let fs = MemoryProvider::new(vec![Utf8PathBuf::from("/repo")]);
    /// assert_eq!(fs.counters().probes, 0);
    /// ```
    pub fn new(trusted_roots: Vec<Utf8PathBuf>) -> Self {
        Self {
            shared: Arc::default(),
            roots: normalize_roots(trusted_roots),
        }
    }

    /// A handle on the same filesystem, gates and counters with other trusted
    /// roots (a remount with a new `trusted_roots` list).
    pub fn with_trusted_roots(&self, roots: Vec<Utf8PathBuf>) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            roots: normalize_roots(roots),
        }
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

    fn inside_roots(&self, path: &Utf8Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
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

    /// Follows `path` to a node. `chain` collects every path passed through,
    /// for faults and gates.
    fn resolve(
        &self,
        state: &State,
        path: &Utf8Path,
        follow_final: bool,
        confine: bool,
        chain: &mut Vec<Utf8PathBuf>,
    ) -> Resolved {
        let mut current = path.to_owned();
        chain.push(current.clone());
        let mut hops = 0u32;
        'walk: loop {
            if confine && !self.inside_roots(&current) {
                return Resolved::Unavailable(Unavailable::OutsideTrustedRoots);
            }
            let mut ancestors: Vec<&Utf8Path> = current.ancestors().skip(1).collect();
            ancestors.reverse();
            for ancestor in ancestors {
                match state.nodes.get(ancestor).map(|e| &e.kind) {
                    None if ancestor.parent().is_none() => {}
                    None => return Resolved::Absent,
                    Some(MemKind::Dir) => {}
                    // ENOTDIR
                    Some(MemKind::File(_) | MemKind::Fifo) => return Resolved::Absent,
                    Some(MemKind::Link(text)) => {
                        hops += 1;
                        if hops > MAX_LINK_HOPS {
                            return Resolved::Unavailable(Unavailable::Loop);
                        }
                        let rest = current.strip_prefix(ancestor).unwrap_or(Utf8Path::new(""));
                        let next =
                            normalize(&link_target(ancestor, Utf8Path::new(text)).join(rest));
                        chain.push(next.clone());
                        current = next;
                        continue 'walk;
                    }
                }
            }
            match state.nodes.get(&current).map(|e| &e.kind) {
                None if current.parent().is_none() => return Resolved::Node(current),
                None => return Resolved::Absent,
                Some(MemKind::Link(text)) if follow_final => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Resolved::Unavailable(Unavailable::Loop);
                    }
                    let next = link_target(&current, Utf8Path::new(text));
                    chain.push(next.clone());
                    current = next;
                }
                Some(_) => return Resolved::Node(current),
            }
        }
    }

    /// One synchronous pass over the request: either it finishes, or it
    /// blocks on the first armed gate in operation order.
    fn plan<R: Request>(&self, state: &mut State, path: &Utf8Path, request: &R) -> Step<R::Output> {
        let mut chain = Vec::new();
        let resolved = self.resolve(state, path, R::FOLLOW, R::FOLLOW, &mut chain);
        if R::FOLLOW
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
            let dir = target.parent().is_none()
                || matches!(
                    state.nodes.get(&target).map(|e| &e.kind),
                    Some(MemKind::Dir)
                );
            return Step::Done(if dir {
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

enum GateOrFault {
    Gate {
        gate: Utf8PathBuf,
        id: u64,
        chain: Vec<Utf8PathBuf>,
    },
    Fault(Unavailable),
}

impl GateOrFault {
    fn into_step<R: Request>(self, request: &R) -> Step<R::Output> {
        match self {
            Self::Gate { gate, id, chain } => Step::Blocked { gate, id, chain },
            Self::Fault(reason) => Step::Done(request.unavailable(reason)),
        }
    }
}

impl State {
    fn bump_version(&mut self) -> u64 {
        self.next_version += 1;
        self.next_version
    }

    /// The first armed gate, else the first fault, for `op` along `chain`.
    /// Arming is consumed here, under the lock, so only one operation blocks.
    fn gate_or_fault(&mut self, chain: &[Utf8PathBuf], op: FsOp) -> Option<GateOrFault> {
        for path in chain {
            if let Some(gate) = self.gates.get_mut(path)
                && gate.op == op
                && !gate.blocking
            {
                gate.blocking = true;
                let id = gate.id;
                for p in chain {
                    *self.blocked.entry(p.clone()).or_default() += 1;
                }
                return Some(GateOrFault::Gate {
                    gate: path.clone(),
                    id,
                    chain: chain.to_vec(),
                });
            }
        }
        chain.iter().find_map(|path| {
            let fault = self.nodes.get(path)?.fault?;
            (fault.op == op).then(|| GateOrFault::Fault(fault.error.unavailable()))
        })
    }
}

impl Entry {
    fn dir(version: u64) -> Self {
        Self {
            kind: MemKind::Dir,
            fault: None,
            stale_size: None,
            version,
        }
    }
}

/// An operation blocked on a gate. Dropping it (cancelled, released, or the
/// future dropped) unregisters the operation and spends the gate.
struct BlockGuard<'a> {
    shared: &'a Shared,
    gate: Utf8PathBuf,
    id: u64,
    chain: Vec<Utf8PathBuf>,
}

impl BlockGuard<'_> {
    async fn wait(self, cancel: &CancellationToken) -> Result<(), Cancelled> {
        loop {
            let mut notified = pin!(self.shared.changed.notified());
            notified.as_mut().enable();
            let open = lock(self.shared)
                .gates
                .get(&self.gate)
                .is_none_or(|g| g.id != self.id);
            if open {
                return Ok(());
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Cancelled),
                () = notified => {}
            }
        }
    }
}

impl Drop for BlockGuard<'_> {
    fn drop(&mut self) {
        let mut state = lock(self.shared);
        if state.gates.get(&self.gate).is_some_and(|g| g.id == self.id) {
            state.gates.remove(&self.gate);
        }
        for path in &self.chain {
            if let Some(count) = state.blocked.get_mut(path) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    state.blocked.remove(path);
                }
            }
        }
        drop(state);
        self.shared.changed.notify_waiters();
    }
}

fn normalize_roots(roots: Vec<Utf8PathBuf>) -> Arc<[Utf8PathBuf]> {
    roots.iter().map(|root| normalize(root)).collect()
}

/// Removes `path` and everything below it; `true` if anything was there.
fn remove_subtree(nodes: &mut BTreeMap<Utf8PathBuf, Entry>, path: &Utf8Path) -> bool {
    // Paths order component-wise, so a subtree is one contiguous range.
    let doomed: Vec<Utf8PathBuf> = nodes
        .range::<Utf8Path, _>((Bound::Included(path), Bound::Unbounded))
        .take_while(|(key, _)| key.starts_with(path))
        .map(|(key, _)| key.clone())
        .collect();
    for key in &doomed {
        nodes.remove(key);
    }
    !doomed.is_empty()
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
        Box::pin(async move {
            self.begin(cancel, true).await?;
            self.execute(path, &ProbeRequest, cancel).await
        })
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
        Box::pin(async move {
            let mut out = Vec::with_capacity(paths.len());
            for path in paths {
                self.begin(cancel, true).await?;
                out.push(self.execute(path, &KindRequest, cancel).await?);
            }
            Ok(out)
        })
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        Box::pin(async move {
            self.begin(cancel, true).await?;
            self.execute(path, &MarkerRequest, cancel).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const CAP: u64 = 1 << 20;

    fn fs() -> MemoryProvider {
        MemoryProvider::new(vec![Utf8PathBuf::from("/r")])
    }

    fn p(path: &str) -> &Utf8Path {
        Utf8Path::new(path)
    }

    async fn probe(fs: &MemoryProvider, path: &str) -> Probe {
        fs.probe(p(path), &CancellationToken::new()).await.unwrap()
    }

    async fn read(fs: &MemoryProvider, path: &str, cap: u64) -> ReadOutcome {
        fs.read_text(p(path), cap, &CancellationToken::new())
            .await
            .unwrap()
    }

    async fn marker(fs: &MemoryProvider, path: &str) -> MarkerProbe {
        fs.marker(p(path), &CancellationToken::new()).await.unwrap()
    }

    fn text(outcome: &ReadOutcome) -> Option<&str> {
        match outcome {
            ReadOutcome::Loaded(loaded) => Some(&loaded.text),
            _ => None,
        }
    }

    fn version(probe: &Probe) -> Option<FileVersion> {
        match probe {
            Probe::Present(file) => Some(file.version),
            _ => None,
        }
    }

    #[rstest]
    #[case("resolve", FsOp::Resolve)]
    #[case("stat", FsOp::Stat)]
    #[case("read", FsOp::Read)]
    fn parses_ops(#[case] name: &str, #[case] op: FsOp) {
        assert_eq!(name.parse::<FsOp>(), Ok(op));
        assert_eq!(op.to_string(), name);
    }

    #[rstest]
    #[case("EACCES", FaultError::Eacces, Unavailable::PermissionDenied)]
    #[case("ELOOP", FaultError::Eloop, Unavailable::Loop)]
    #[case("ETIMEDOUT", FaultError::Etimedout, Unavailable::TimedOut)]
    fn parses_and_maps_errors(
        #[case] name: &str,
        #[case] error: FaultError,
        #[case] reason: Unavailable,
    ) {
        assert_eq!(name.parse::<FaultError>(), Ok(error));
        assert_eq!(error.to_string(), name);
        assert_eq!(error.unavailable(), reason);
    }

    #[test]
    fn eio_maps_to_io() {
        assert_eq!("EIO".parse::<FaultError>(), Ok(FaultError::Eio));
        assert!(matches!(FaultError::Eio.unavailable(), Unavailable::Io(_)));
    }

    #[rstest]
    #[case("Stat")]
    #[case("open")]
    #[case("")]
    fn rejects_unknown_ops(#[case] name: &str) {
        let error = name.parse::<FsOp>().unwrap_err();
        assert_eq!(error.value, name);
    }

    #[rstest]
    #[case("eacces")]
    #[case("ENOENT")]
    fn rejects_unknown_errors(#[case] name: &str) {
        assert!(name.parse::<FaultError>().is_err());
    }

    #[rstest]
    #[case::resolve(FsOp::Resolve, true, true)]
    #[case::stat(FsOp::Stat, true, true)]
    #[case::read(FsOp::Read, false, true)]
    #[tokio::test]
    async fn fault_fails_the_operations_that_perform_it(
        #[case] op: FsOp,
        #[case] probe_fails: bool,
        #[case] read_fails: bool,
    ) {
        let fs = fs();
        fs.insert(
            p("/r/AGENTS.md"),
            MemNode::file("x").with_fault(op, FaultError::Eacces),
        );
        let denied = Unavailable::PermissionDenied;
        assert_eq!(
            probe(&fs, "/r/AGENTS.md").await == Probe::Unavailable(denied.clone()),
            probe_fails
        );
        assert_eq!(
            read(&fs, "/r/AGENTS.md", CAP).await == ReadOutcome::Unavailable(denied.clone()),
            read_fails
        );
        // Root-marker checks use `stat` only.
        let expected_marker = if op == FsOp::Stat {
            MarkerProbe::Failed(denied)
        } else {
            MarkerProbe::Exists
        };
        assert_eq!(marker(&fs, "/r/AGENTS.md").await, expected_marker);
    }

    #[tokio::test]
    async fn fault_applies_through_a_link() {
        let fs = fs();
        fs.insert(
            p("/r/AGENTS.md"),
            MemNode::file("x").with_fault(FsOp::Stat, FaultError::Etimedout),
        );
        fs.insert(p("/r/CLAUDE.md"), MemNode::link("AGENTS.md"));
        assert_eq!(
            probe(&fs, "/r/CLAUDE.md").await,
            Probe::Unavailable(Unavailable::TimedOut)
        );
        // The marker check does not follow the link, so it does not see it.
        assert_eq!(marker(&fs, "/r/CLAUDE.md").await, MarkerProbe::Exists);
    }

    #[tokio::test]
    async fn fault_on_the_link_itself_applies() {
        let fs = fs();
        fs.insert(p("/r/AGENTS.md"), MemNode::file("x"));
        fs.insert(
            p("/r/CLAUDE.md"),
            MemNode::link("AGENTS.md").with_fault(FsOp::Resolve, FaultError::Eloop),
        );
        assert_eq!(
            probe(&fs, "/r/CLAUDE.md").await,
            Probe::Unavailable(Unavailable::Loop)
        );
        assert!(matches!(
            probe(&fs, "/r/AGENTS.md").await,
            Probe::Present(_)
        ));
    }

    #[tokio::test]
    async fn writing_the_path_clears_its_fault() {
        let fs = fs();
        fs.insert(
            p("/r/AGENTS.md"),
            MemNode::file("x").with_fault(FsOp::Read, FaultError::Eio),
        );
        assert!(matches!(
            read(&fs, "/r/AGENTS.md", CAP).await,
            ReadOutcome::Unavailable(Unavailable::Io(_))
        ));
        fs.insert(p("/r/AGENTS.md"), MemNode::file("y"));
        assert_eq!(text(&read(&fs, "/r/AGENTS.md", CAP).await), Some("y"));
    }

    #[tokio::test]
    async fn stale_size_is_reported_and_caught_while_streaming() {
        let fs = fs();
        let content = vec![b'z'; 3 * CHUNK];
        fs.insert(
            p("/r/AGENTS.md"),
            MemNode::file(content.clone()).with_stale_size(10),
        );
        match probe(&fs, "/r/AGENTS.md").await {
            Probe::Present(file) => assert_eq!(file.size, 10),
            other => panic!("{other:?}"),
        }
        let cap = CHUNK as u64 + 5;
        assert_eq!(
            read(&fs, "/r/AGENTS.md", cap).await,
            ReadOutcome::Unavailable(Unavailable::TooLarge { limit: cap })
        );
        // Opened (metadata said small), then stopped one byte past the cap.
        assert_eq!(
            fs.counters(),
            OpCounters {
                reads: 1,
                probes: 1,
                bytes_read: cap + 1
            }
        );
        // Within the cap the real content loads, whatever stat said.
        let loaded = read(&fs, "/r/AGENTS.md", content.len() as u64).await;
        assert_eq!(text(&loaded).map(str::len), Some(content.len()));
    }

    #[tokio::test]
    async fn oversized_by_metadata_is_never_opened() {
        let fs = fs();
        fs.insert(p("/r/big.md"), MemNode::file(vec![b'a'; 100]));
        fs.insert(p("/r/liar.md"), MemNode::file("tiny").with_stale_size(1000));
        for path in ["/r/big.md", "/r/liar.md"] {
            assert_eq!(
                read(&fs, path, 50).await,
                ReadOutcome::Unavailable(Unavailable::TooLarge { limit: 50 })
            );
        }
        assert_eq!(fs.counters(), OpCounters::default());
    }

    #[tokio::test]
    async fn counters_count_each_kind_of_call() {
        let fs = fs();
        fs.insert(p("/r/AGENTS.md"), MemNode::file("12345"));
        fs.insert(p("/r/pipe"), MemNode::fifo());
        probe(&fs, "/r/AGENTS.md").await;
        probe(&fs, "/r/missing.md").await;
        marker(&fs, "/r/.git").await;
        let names = ["AGENTS.md", "CLAUDE.md", "x"].map(String::from);
        fs.probe_many(p("/r"), &names, &CancellationToken::new())
            .await
            .unwrap();
        read(&fs, "/r/AGENTS.md", CAP).await;
        read(&fs, "/r/missing.md", CAP).await;
        read(&fs, "/r/pipe", CAP).await;
        assert_eq!(
            fs.counters(),
            OpCounters {
                reads: 1,
                probes: 6,
                bytes_read: 5
            }
        );
        fs.reset_counters();
        assert_eq!(fs.counters(), OpCounters::default());
    }

    #[tokio::test]
    async fn versions_change_on_write_unless_kept() {
        let fs = fs();
        fs.insert(p("/r/AGENTS.md"), MemNode::file("one"));
        let first = version(&probe(&fs, "/r/AGENTS.md").await);
        fs.insert(p("/r/AGENTS.md"), MemNode::file("one"));
        let rewritten = version(&probe(&fs, "/r/AGENTS.md").await);
        assert_ne!(
            first, rewritten,
            "every write is a new version, even same bytes"
        );
        fs.insert(p("/r/AGENTS.md"), MemNode::file("two").keeping_version());
        assert_eq!(version(&probe(&fs, "/r/AGENTS.md").await), rewritten);
        assert_eq!(text(&read(&fs, "/r/AGENTS.md", CAP).await), Some("two"));
        // keep_version on a new path still needs some version.
        fs.insert(p("/r/new.md"), MemNode::file("n").keeping_version());
        assert!(version(&probe(&fs, "/r/new.md").await).is_some());
    }

    #[tokio::test]
    async fn identity_is_the_resolved_path() {
        let fs = fs();
        fs.insert(p("/r/docs/a.md"), MemNode::file("a"));
        fs.insert(p("/r/AGENTS.md"), MemNode::link("./docs/../docs/a.md"));
        match probe(&fs, "/r/AGENTS.md").await {
            Probe::Present(file) => {
                assert_eq!(file.identity, FileIdentity::Path("/r/docs/a.md".into()));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn deep_link_chain_hits_the_hop_limit() {
        let fs = fs();
        fs.insert(p("/r/f0"), MemNode::file("end"));
        let hops = MAX_LINK_HOPS as usize + 1;
        for i in 1..=hops {
            fs.insert(p(&format!("/r/f{i}")), MemNode::link(format!("f{}", i - 1)));
        }
        let last = format!("/r/f{hops}");
        let below = format!("/r/f{}", hops - 1);
        assert_eq!(
            probe(&fs, &last).await,
            Probe::Unavailable(Unavailable::Loop)
        );
        assert!(matches!(probe(&fs, &below).await, Probe::Present(_)));
    }

    #[tokio::test]
    async fn insert_and_remove_manage_subtrees() {
        let fs = fs();
        fs.insert(p("/r/a/b/AGENTS.md"), MemNode::file("x"));
        fs.insert(p("/r/a/sibling.md"), MemNode::file("s"));
        // A directory over a directory keeps what is inside.
        fs.insert(p("/r/a"), MemNode::dir());
        assert!(matches!(
            probe(&fs, "/r/a/b/AGENTS.md").await,
            Probe::Present(_)
        ));
        // A file over a directory replaces the whole subtree.
        fs.insert(p("/r/a/b"), MemNode::file("now a file"));
        assert_eq!(probe(&fs, "/r/a/b/AGENTS.md").await, Probe::Absent);
        assert!(matches!(
            probe(&fs, "/r/a/sibling.md").await,
            Probe::Present(_)
        ));
        assert!(fs.remove(p("/r/a")));
        assert_eq!(probe(&fs, "/r/a/sibling.md").await, Probe::Absent);
        assert!(!fs.remove(p("/r/a")));
        // A name that merely shares a prefix is not in the subtree.
        fs.insert(p("/r/ab.md"), MemNode::file("keep"));
        fs.insert(p("/r/a"), MemNode::file("gone"));
        assert!(fs.remove(p("/r/a")));
        assert!(matches!(probe(&fs, "/r/ab.md").await, Probe::Present(_)));
    }

    #[tokio::test]
    async fn trusted_roots_confine_and_clones_share() {
        let fs = fs();
        fs.insert(p("/home/u/.dsh/AGENTS.md"), MemNode::file("global"));
        assert_eq!(
            probe(&fs, "/home/u/.dsh/AGENTS.md").await,
            Probe::Unavailable(Unavailable::OutsideTrustedRoots)
        );
        let wider = fs.with_trusted_roots(vec!["/r".into(), "/home/u/.dsh/".into()]);
        assert!(matches!(
            probe(&wider, "/home/u/.dsh/AGENTS.md").await,
            Probe::Present(_)
        ));
        // Same filesystem and counters through either handle.
        wider.insert(p("/r/new.md"), MemNode::file("n"));
        assert!(matches!(probe(&fs, "/r/new.md").await, Probe::Present(_)));
        assert_eq!(fs.counters().probes, 3);
    }

    #[tokio::test]
    async fn gate_blocks_the_first_operation_only_until_released() {
        let fs = fs();
        fs.insert(
            p("/r/AGENTS.md"),
            MemNode::file("old").with_gate(FsOp::Read),
        );
        // Probes do not read: the read gate lets them through.
        assert!(matches!(
            probe(&fs, "/r/AGENTS.md").await,
            Probe::Present(_)
        ));
        let blocked = tokio::spawn({
            let fs = fs.clone();
            async move { read(&fs, "/r/AGENTS.md", CAP).await }
        });
        fs.wait_blocked(p("/r/AGENTS.md")).await;
        // A second read passes while the first is blocked.
        assert_eq!(text(&read(&fs, "/r/AGENTS.md", CAP).await), Some("old"));
        // A write does not open the gate; the released read sees the new content.
        fs.insert(p("/r/AGENTS.md"), MemNode::file("new"));
        assert!(!blocked.is_finished());
        fs.release(p("/r/AGENTS.md"));
        assert_eq!(text(&blocked.await.unwrap()), Some("new"));
        // Spent: no further blocking.
        assert_eq!(text(&read(&fs, "/r/AGENTS.md", CAP).await), Some("new"));
    }

    #[tokio::test]
    async fn cancelled_gated_read_returns_promptly_and_spends_the_gate() {
        let fs = fs();
        fs.insert(p("/r/AGENTS.md"), MemNode::file("x").with_gate(FsOp::Read));
        let cancel = CancellationToken::new();
        let blocked = tokio::spawn({
            let (fs, cancel) = (fs.clone(), cancel.clone());
            async move { fs.read_text(p("/r/AGENTS.md"), CAP, &cancel).await }
        });
        fs.wait_blocked(p("/r/AGENTS.md")).await;
        cancel.cancel();
        // No release: only the cancellation can end the wait.
        let outcome = tokio::time::timeout(Duration::from_secs(10), blocked)
            .await
            .expect("cancellation did not end the blocked read")
            .unwrap();
        assert_eq!(outcome, Err(Cancelled));
        assert_eq!(text(&read(&fs, "/r/AGENTS.md", CAP).await), Some("x"));
    }

    #[tokio::test]
    async fn gate_through_a_link_is_visible_on_both_paths() {
        let fs = fs();
        fs.insert(p("/r/AGENTS.md"), MemNode::file("x").with_gate(FsOp::Stat));
        fs.insert(p("/r/CLAUDE.md"), MemNode::link("AGENTS.md"));
        let blocked = tokio::spawn({
            let fs = fs.clone();
            async move { probe(&fs, "/r/CLAUDE.md").await }
        });
        fs.wait_blocked(p("/r/CLAUDE.md")).await;
        fs.wait_blocked(p("/r/AGENTS.md")).await;
        fs.release(p("/r/AGENTS.md"));
        assert!(matches!(blocked.await.unwrap(), Probe::Present(_)));
    }

    #[tokio::test]
    async fn released_gate_before_use_is_spent() {
        let fs = fs();
        fs.insert(p("/r/.git"), MemNode::dir().with_gate(FsOp::Stat));
        fs.release(p("/r/.git"));
        let outcome = tokio::time::timeout(Duration::from_secs(10), marker(&fs, "/r/.git")).await;
        assert_eq!(
            outcome.expect("a released gate blocked"),
            MarkerProbe::Exists
        );
    }

    #[tokio::test]
    async fn latency_is_cancellable() {
        let fs = fs();
        fs.insert(p("/r/AGENTS.md"), MemNode::file("x"));
        fs.set_latency(Some(Duration::from_secs(3600)));
        let cancel = CancellationToken::new();
        let pending = tokio::spawn({
            let (fs, cancel) = (fs.clone(), cancel.clone());
            async move { fs.probe(p("/r/AGENTS.md"), &cancel).await }
        });
        cancel.cancel();
        let outcome = tokio::time::timeout(Duration::from_secs(10), pending)
            .await
            .expect("latency ignored the token")
            .unwrap();
        assert_eq!(outcome, Err(Cancelled));
        fs.set_latency(None);
        assert!(matches!(
            probe(&fs, "/r/AGENTS.md").await,
            Probe::Present(_)
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn latency_delays_each_call() {
        let fs = fs();
        fs.set_latency(Some(Duration::from_millis(250)));
        let start = tokio::time::Instant::now();
        probe(&fs, "/r/missing.md").await;
        marker(&fs, "/r/.git").await;
        // Paused clock: auto-advance makes this exact, not a timing test.
        assert_eq!(start.elapsed(), Duration::from_millis(500));
    }
}
