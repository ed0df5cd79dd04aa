//! What each provider call asks of the in-memory filesystem (`Request`:
//! probe, path kind, marker, read) and how each stage's result becomes that
//! call's output. Separate so the one resolution walk of `memory.rs`
//! serves every call and each call's answers read in one place.

use camino::{Utf8Path, Utf8PathBuf};

use super::nodes::{FsOp, MemKind};
use super::state::{Entry, GateOrFault, State};
use crate::provider::{
    FileIdentity, FileVersion, MarkerProbe, PathKind, PresentFile, Probe, ReadOutcome, Unavailable,
};

/// What a provider call wants from the filesystem, and how each stage's
/// result becomes that call's output.
pub(super) trait Request {
    type Output;
    /// Probes and reads follow links and stay inside the trusted roots;
    /// marker checks do neither and perform no `resolve` operation.
    fn follow(&self) -> bool;
    /// Whether a names-only root may admit the path (probes and reads
    /// only, never path kinds or markers; docs/decisions/0044).
    fn named(&self) -> bool;
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

/// A request answered from metadata alone: what each stage's result
/// becomes, one row a request ([`PROBE`], [`KIND`], [`MARKER`]).
pub(super) struct Metadata<T: 'static> {
    follow: bool,
    named: bool,
    absent: T,
    not_a_file: T,
    directory: T,
    unavailable: fn(Unavailable) -> T,
    file: fn(PresentFile) -> T,
}

pub(super) static PROBE: Metadata<Probe> = Metadata {
    follow: true,
    named: true,
    absent: Probe::Absent,
    not_a_file: Probe::Absent,
    directory: Probe::Absent,
    unavailable: Probe::Unavailable,
    file: Probe::Present,
};

/// A shell-touch classification (links followed, confined).
pub(super) static KIND: Metadata<PathKind> = Metadata {
    follow: true,
    named: false,
    absent: PathKind::Absent,
    not_a_file: PathKind::Other,
    directory: PathKind::Directory,
    unavailable: PathKind::Unavailable,
    file: |_| PathKind::File,
};

pub(super) static MARKER: Metadata<MarkerProbe> = Metadata {
    follow: false,
    named: false,
    absent: MarkerProbe::Missing,
    not_a_file: MarkerProbe::Exists,
    directory: MarkerProbe::Exists,
    unavailable: MarkerProbe::Failed,
    file: |_| MarkerProbe::Exists,
};

pub(super) struct ReadRequest {
    pub(super) cap: u64,
}

/// Where a read stands when the lock is released.
pub(super) enum ReadStep {
    Finished(ReadOutcome),
    /// The file is open: stream these bytes under the cap.
    Stream {
        bytes: Vec<u8>,
        cap: u64,
        version: FileVersion,
        identity: FileIdentity,
    },
}

impl<T: Clone> Request for Metadata<T> {
    type Output = T;
    fn follow(&self) -> bool {
        self.follow
    }
    fn named(&self) -> bool {
        self.named
    }
    fn absent(&self) -> T {
        self.absent.clone()
    }
    fn not_a_file(&self) -> T {
        self.not_a_file.clone()
    }
    fn directory(&self) -> T {
        self.directory.clone()
    }
    fn unavailable(&self, reason: Unavailable) -> T {
        (self.unavailable)(reason)
    }
    fn file(&self, _: &mut State, _: &[Utf8PathBuf], _: &Utf8Path, meta: PresentFile) -> Step<T> {
        Step::Done((self.file)(meta))
    }
}

impl Request for ReadRequest {
    type Output = ReadStep;
    fn follow(&self) -> bool {
        true
    }
    fn named(&self) -> bool {
        true
    }
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

pub(super) enum Resolved {
    Node(Utf8PathBuf),
    Absent,
    Unavailable(Unavailable),
}

pub(super) enum Step<T> {
    /// An operation hit an armed gate (now marked blocking).
    Blocked {
        gate: Utf8PathBuf,
        id: u64,
        chain: Vec<Utf8PathBuf>,
    },
    Done(T),
}

impl GateOrFault {
    pub(super) fn into_step<R: Request>(self, request: &R) -> Step<R::Output> {
        match self {
            Self::Gate { gate, id, chain } => Step::Blocked { gate, id, chain },
            Self::Fault(reason) => Step::Done(request.unavailable(reason)),
        }
    }
}
