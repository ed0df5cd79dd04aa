//! A provider decorator that counts what the runtime asks of the filesystem,
//! for the `bytes_read` and `ops_per_dir` columns on disk cases (the memory
//! provider has its own counters; the cap-std one has none).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_instructions_discovery::{
    FsProvider,
    provider::{Answer, Call, Forward, Observe, ReadOutcome},
};

/// Counts, shared between clones.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Candidate probes (one per name, also inside `probe_many`).
    pub probes: AtomicU64,
    /// `probe_many` calls: one per directory reconciled.
    pub dirs: AtomicU64,
    /// `read_text` calls.
    pub reads: AtomicU64,
    /// Raw content bytes returned by reads.
    pub bytes_read: AtomicU64,
    /// Root-marker checks.
    pub markers: AtomicU64,
}

/// A snapshot of [`Counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// See [`Counts::probes`].
    pub probes: u64,
    /// See [`Counts::dirs`].
    pub dirs: u64,
    /// See [`Counts::reads`].
    pub reads: u64,
    /// See [`Counts::bytes_read`].
    pub bytes_read: u64,
    /// See [`Counts::markers`].
    pub markers: u64,
}

impl Snapshot {
    /// What happened between `before` and this snapshot.
    pub(crate) fn since(&self, before: &Self) -> Self {
        Self {
            probes: self.probes - before.probes,
            dirs: self.dirs - before.dirs,
            reads: self.reads - before.reads,
            bytes_read: self.bytes_read - before.bytes_read,
            markers: self.markers - before.markers,
        }
    }

    /// Provider operations per directory reconciled (probes + reads +
    /// marker checks, over `probe_many` calls).
    pub(crate) fn ops_per_dir(&self) -> f64 {
        let ops = self.probes + self.reads + self.markers;
        if self.dirs == 0 {
            ops as f64
        } else {
            ops as f64 / self.dirs as f64
        }
    }
}

impl Counts {
    /// Reads every counter.
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot {
            probes: self.probes.load(Ordering::Relaxed),
            dirs: self.dirs.load(Ordering::Relaxed),
            reads: self.reads.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            markers: self.markers.load(Ordering::Relaxed),
        }
    }
}

/// Counts a provider's operations: a [`Forward`] observer, so results pass
/// through untouched and every batched operation (`probe_many`,
/// `probe_dirs`, `markers_until_found`, …) reaches the wrapped provider as
/// a batch: the provider's own batching (one blocking task per batch on
/// disk) is what gets measured.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally(Arc<Counts>);

/// A provider counting what is asked of it ([`Tally`]).
pub(crate) type Counting = Forward<Tally>;

/// Wraps `inner`, counting its operations.
pub(crate) fn new(inner: Arc<dyn FsProvider>) -> Counting {
    Forward::new(inner, Tally::default())
}

/// The shared counts of a [`Counting`] provider.
pub(crate) trait Counted {
    /// The counts, shared between clones.
    fn counts(&self) -> &Counts;
}

impl Counted for Counting {
    fn counts(&self) -> &Counts {
        &self.observer().0
    }
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

fn loaded_bytes(out: &ReadOutcome) -> u64 {
    match out {
        ReadOutcome::Loaded(text) => text.bytes_read,
        _ => 0,
    }
}

impl Observe for Tally {
    fn before(&self, call: Call<'_>) {
        let c = &self.0;
        match call {
            Call::Probe(_) => add(&c.probes, 1),
            Call::ProbeMany { names, .. } => {
                add(&c.dirs, 1);
                add(&c.probes, names.len() as u64);
            }
            Call::ProbeDirs { dirs, names } | Call::ProbeDirsMissing { dirs, names } => {
                add(&c.dirs, dirs.len() as u64);
                add(&c.probes, (dirs.len() * names.len()) as u64);
            }
            Call::ProbePaths(paths) | Call::PathKinds(paths) => {
                add(&c.probes, paths.len() as u64);
            }
            Call::ReadText { .. } => add(&c.reads, 1),
            Call::ReadMany { paths, .. } => add(&c.reads, paths.len() as u64),
            // A rules directory listing (R-RULE-1) counts as one probe.
            Call::ListDir(_) => add(&c.probes, 1),
            Call::Marker(_) => add(&c.markers, 1),
            // Counted by what was checked, after.
            Call::MarkersUntilFound(_) => {}
        }
    }

    fn after(&self, _call: Call<'_>, answer: Answer<'_>) {
        let c = &self.0;
        match answer {
            Answer::Markers(found) => add(&c.markers, found.len() as u64),
            Answer::Read(out) => add(&c.bytes_read, loaded_bytes(out)),
            Answer::Reads(outs) => add(&c.bytes_read, outs.iter().map(loaded_bytes).sum()),
            _ => {}
        }
    }
}
