//! What the composition asked of the filesystem: [`Recorder`], a
//! [`ProviderFactory`] whose providers forward every call
//! ([`Forward`]) and record it into [`Reads`], from which
//! `remember` stamps what the answer depended on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use camino::Utf8PathBuf;
use dsh_instructions_discovery::{
    FsProvider,
    provider::{
        Answer, Call, DirListing, Forward, MarkerProbe, Observe, PathKind, Probe, ReadOutcome,
        Unavailable,
    },
};
use dsh_instructions_runtime::{ProviderFactory, RuntimeError};

use super::key::Key;

/// One thing the composition asked of the filesystem.
#[derive(Debug)]
pub(super) enum Read {
    /// A path probed, read or classified.
    Path(Utf8PathBuf),
    /// The same names probed in each of several directories.
    Batch(Vec<Utf8PathBuf>, Vec<String>),
    /// A directory listed.
    Listed(Utf8PathBuf),
    /// A root marker checked for existence only.
    Marker(Utf8PathBuf),
    /// An answer that depends on more than stamps show.
    Unvouched,
}

/// What the providers of one event were asked, shared by every provider
/// the [`Recorder`] opened.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reads {
    all: Arc<Mutex<Vec<Read>>>,
    /// A listed directory had an entry: a rules directory held a file,
    /// and a path-scoped rule may attach on a touched path.
    entries: Arc<AtomicBool>,
}

impl Reads {
    /// Every read so far, in order.
    pub(super) fn all(&self) -> MutexGuard<'_, Vec<Read>> {
        self.all.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the full path of the event keyed `key` may write its claim
    /// (decision 0085): the event may (a prompt or a tool event, no
    /// shell), and no directory the composition listed (the rules
    /// directories, R-RULE-1) had an entry — else a touched path may
    /// attach a path-scoped rule that the claim's event did not.
    pub(crate) fn may_claim(&self, key: &Key) -> bool {
        key.writes_claim && !self.entries.load(Ordering::Relaxed)
    }

    fn push(&self, read: Read) {
        self.all().push(read);
    }

    fn push_paths(&self, paths: &[Utf8PathBuf]) {
        self.all().extend(paths.iter().cloned().map(Read::Path));
    }
}

/// A [`ProviderFactory`] that opens what the wrapped one opens, each
/// provider wrapped to record what it is asked into [`Reads`].
pub(crate) struct Recorder {
    inner: Arc<dyn ProviderFactory>,
    reads: Reads,
}

impl Recorder {
    pub(crate) fn new(inner: Arc<dyn ProviderFactory>) -> Self {
        Self {
            inner,
            reads: Reads::default(),
        }
    }

    pub(crate) fn reads(&self) -> &Reads {
        &self.reads
    }

    fn wrap(&self, inner: Arc<dyn FsProvider>) -> Arc<dyn FsProvider> {
        Arc::new(Forward::new(inner, self.reads.clone()))
    }
}

impl ProviderFactory for Recorder {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.wrap(self.inner.marker_walker()?))
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.wrap(self.inner.open(trusted_roots)?))
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.wrap(self.inner.open_with_names(trusted_roots, dirs, names)?))
    }
}

/// Whether a provider's reason depends on more than stamps show (a
/// permission, a loop, a timeout, an I/O failure): the memo is not written.
fn unvouched(reason: &Unavailable) -> bool {
    matches!(
        reason,
        Unavailable::PermissionDenied
            | Unavailable::Loop
            | Unavailable::TimedOut
            | Unavailable::Io(_)
    )
}

fn probe_unvouched(probe: &Probe) -> bool {
    matches!(probe, Probe::Unavailable(r) if unvouched(r))
}

fn read_unvouched(read: &ReadOutcome) -> bool {
    matches!(read, ReadOutcome::Unavailable(r) if unvouched(r))
}

/// Each call is recorded before it is made, except a marker walk, whose
/// answer says how far it went; each answer that stamps cannot vouch for
/// is recorded after.
impl Observe for Reads {
    fn before(&self, call: Call<'_>) {
        match call {
            Call::Probe(path) | Call::ReadText { path, .. } => {
                self.push(Read::Path(path.to_owned()))
            }
            Call::ProbeMany { dir, names } => {
                self.push(Read::Batch(vec![dir.to_owned()], names.to_vec()));
            }
            Call::ProbeDirs { dirs, names } | Call::ProbeDirsMissing { dirs, names } => {
                self.push(Read::Batch(dirs.to_vec(), names.to_vec()));
            }
            Call::ProbePaths(paths) | Call::ReadMany { paths, .. } | Call::PathKinds(paths) => {
                self.push_paths(paths);
            }
            Call::ListDir(dir) => self.push(Read::Listed(dir.to_owned())),
            Call::Marker(path) => self.push(Read::Marker(path.to_owned())),
            Call::MarkersUntilFound(_) => {}
        }
    }

    fn after(&self, call: Call<'_>, answer: Answer<'_>) {
        if let Answer::Listing(DirListing::Entries { entries, .. }) = answer
            && !entries.is_empty()
        {
            self.entries.store(true, Ordering::Relaxed);
        }
        if let (Call::MarkersUntilFound(paths), Answer::Markers(found)) = (call, answer) {
            for p in &paths[..found.len().min(paths.len())] {
                self.push(Read::Marker(p.clone()));
            }
        }
        let unvouched_answer = match answer {
            Answer::Probe(p) => probe_unvouched(p),
            Answer::Probes(p) => p.iter().any(probe_unvouched),
            Answer::ProbeDirs(p) => p.iter().flatten().any(probe_unvouched),
            Answer::ProbedDirs(p) => p.probes.iter().flatten().any(probe_unvouched),
            Answer::Markers(m) => m.iter().any(|m| matches!(m, MarkerProbe::Failed(_))),
            Answer::Marker(m) => matches!(m, MarkerProbe::Failed(_)),
            Answer::Read(r) => read_unvouched(r),
            Answer::Reads(r) => r.iter().any(read_unvouched),
            Answer::PathKinds(k) => k
                .iter()
                .any(|k| matches!(k, PathKind::Unavailable(r) if unvouched(r))),
            Answer::Listing(l) => matches!(l, DirListing::Unavailable(r) if unvouched(r)),
        };
        if unvouched_answer {
            self.push(Read::Unvouched);
        }
    }
}
