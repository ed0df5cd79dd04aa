//! A provider decorator that counts what the runtime asks of the filesystem,
//! for the `bytes_read` and `ops_per_dir` columns on disk cases (the memory
//! provider has its own counters; the cap-std one has none).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider,
    provider::{BoxFuture, DirListing, MarkerProbe, PathKind, Probe, ProbedDirs, ReadOutcome},
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

/// Wraps a provider and counts its operations; results pass through
/// untouched, and every batched operation (`probe_many`, `probe_dirs`,
/// `markers_until_found`) forwards to the inner override, so the provider's
/// own batching (one blocking task per batch on disk) is what gets measured
/// — the trait's per-item defaults would add a hand-off per directory.
#[derive(Debug, Clone)]
pub(crate) struct Counting {
    inner: Arc<dyn FsProvider>,
    /// The shared counts.
    pub counts: Arc<Counts>,
}

impl Counting {
    /// Wraps `inner`.
    pub(crate) fn new(inner: Arc<dyn FsProvider>) -> Self {
        Self {
            inner,
            counts: Arc::default(),
        }
    }
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl FsProvider for Counting {
    fn probe<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Probe, Cancelled>> {
        add(&self.counts.probes, 1);
        self.inner.probe(path, cancel)
    }

    fn probe_many<'a>(
        &'a self,
        dir: &'a Utf8Path,
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        add(&self.counts.dirs, 1);
        add(&self.counts.probes, names.len() as u64);
        self.inner.probe_many(dir, names, cancel)
    }

    fn probe_dirs<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Vec<Probe>>, Cancelled>> {
        add(&self.counts.dirs, dirs.len() as u64);
        add(&self.counts.probes, (dirs.len() * names.len()) as u64);
        self.inner.probe_dirs(dirs, names, cancel)
    }

    fn probe_dirs_missing<'a>(
        &'a self,
        dirs: &'a [Utf8PathBuf],
        names: &'a [String],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ProbedDirs, Cancelled>> {
        add(&self.counts.dirs, dirs.len() as u64);
        add(&self.counts.probes, (dirs.len() * names.len()) as u64);
        self.inner.probe_dirs_missing(dirs, names, cancel)
    }

    fn probe_paths<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<Probe>, Cancelled>> {
        add(&self.counts.probes, paths.len() as u64);
        self.inner.probe_paths(paths, cancel)
    }

    fn path_kinds<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<PathKind>, Cancelled>> {
        add(&self.counts.probes, paths.len() as u64);
        self.inner.path_kinds(paths, cancel)
    }

    fn markers_until_found<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<MarkerProbe>, Cancelled>> {
        Box::pin(async move {
            let out = self.inner.markers_until_found(paths, cancel).await?;
            add(&self.counts.markers, out.len() as u64);
            Ok(out)
        })
    }

    fn read_text<'a>(
        &'a self,
        path: &'a Utf8Path,
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>> {
        add(&self.counts.reads, 1);
        Box::pin(async move {
            let out = self.inner.read_text(path, max_source_bytes, cancel).await?;
            if let ReadOutcome::Loaded(text) = &out {
                add(&self.counts.bytes_read, text.bytes_read);
            }
            Ok(out)
        })
    }

    fn read_many<'a>(
        &'a self,
        paths: &'a [Utf8PathBuf],
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ReadOutcome>, Cancelled>> {
        add(&self.counts.reads, paths.len() as u64);
        Box::pin(async move {
            let out = self
                .inner
                .read_many(paths, max_source_bytes, cancel)
                .await?;
            for outcome in &out {
                if let ReadOutcome::Loaded(text) = outcome {
                    add(&self.counts.bytes_read, text.bytes_read);
                }
            }
            Ok(out)
        })
    }

    /// A rules directory listing (R-RULE-1) counts as one probe; without
    /// this forward the default answers "cannot list" and a counted run
    /// would compose no rules at all.
    fn list_dir<'a>(
        &'a self,
        dir: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DirListing, Cancelled>> {
        add(&self.counts.probes, 1);
        self.inner.list_dir(dir, cancel)
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        add(&self.counts.markers, 1);
        self.inner.marker(path, cancel)
    }
}
