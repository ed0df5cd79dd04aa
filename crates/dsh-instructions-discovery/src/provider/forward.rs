//! The one forwarding decorator of [`FsProvider`]: [`Forward`] passes every
//! method to the wrapped provider as it is — its batches stay batches, so a
//! decorator never costs the wrapped provider its batching — and shows each
//! call and its answer to an [`Observe`]r. A decorator that counts, records
//! or disturbs calls is an observer, never a second hand-written copy of
//! the trait's eleven methods.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use tokio_util::sync::CancellationToken;

use super::{
    BoxFuture, Cancelled, DirListing, FsProvider, MarkerProbe, PathKind, Probe, ProbedDirs,
    ReadOutcome,
};

/// One call of an [`FsProvider`] method, with its arguments (the
/// cancellation token aside), as a [`Forward`] shows it to its observer.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    /// [`FsProvider::probe`].
    Probe(&'a Utf8Path),
    /// [`FsProvider::probe_many`]: the names in one directory.
    ProbeMany {
        /// The directory.
        dir: &'a Utf8Path,
        /// The names probed in it.
        names: &'a [String],
    },
    /// [`FsProvider::probe_dirs`]: the same names in each directory.
    ProbeDirs {
        /// The directories.
        dirs: &'a [Utf8PathBuf],
        /// The names probed in each.
        names: &'a [String],
    },
    /// [`FsProvider::probe_dirs_missing`]: as [`Call::ProbeDirs`].
    ProbeDirsMissing {
        /// The directories.
        dirs: &'a [Utf8PathBuf],
        /// The names probed in each.
        names: &'a [String],
    },
    /// [`FsProvider::probe_paths`].
    ProbePaths(&'a [Utf8PathBuf]),
    /// [`FsProvider::markers_until_found`].
    MarkersUntilFound(&'a [Utf8PathBuf]),
    /// [`FsProvider::read_text`].
    ReadText {
        /// The file.
        path: &'a Utf8Path,
        /// The read's bound.
        max_source_bytes: u64,
    },
    /// [`FsProvider::read_many`].
    ReadMany {
        /// The files.
        paths: &'a [Utf8PathBuf],
        /// Each read's bound.
        max_source_bytes: u64,
    },
    /// [`FsProvider::path_kinds`].
    PathKinds(&'a [Utf8PathBuf]),
    /// [`FsProvider::list_dir`].
    ListDir(&'a Utf8Path),
    /// [`FsProvider::marker`].
    Marker(&'a Utf8Path),
}

/// What the wrapped provider answered a [`Call`] (of the same name).
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    /// [`Call::Probe`].
    Probe(&'a Probe),
    /// [`Call::ProbeMany`] and [`Call::ProbePaths`]: one probe per name or path.
    Probes(&'a [Probe]),
    /// [`Call::ProbeDirs`]: one list per directory.
    ProbeDirs(&'a [Vec<Probe>]),
    /// [`Call::ProbeDirsMissing`].
    ProbedDirs(&'a ProbedDirs),
    /// [`Call::MarkersUntilFound`]: a prefix of the paths, one each.
    Markers(&'a [MarkerProbe]),
    /// [`Call::ReadText`].
    Read(&'a ReadOutcome),
    /// [`Call::ReadMany`]: one outcome per path.
    Reads(&'a [ReadOutcome]),
    /// [`Call::PathKinds`]: one kind per path.
    PathKinds(&'a [PathKind]),
    /// [`Call::ListDir`].
    Listing(&'a DirListing),
    /// [`Call::Marker`].
    Marker(&'a MarkerProbe),
}

/// What a [`Forward`] decorator adds to the calls it forwards. Both
/// methods do nothing by default: an observer implements what it needs.
pub trait Observe: Send + Sync + std::fmt::Debug {
    /// Before `call` reaches the wrapped provider.
    fn before(&self, call: Call<'_>) {
        let _ = call;
    }

    /// After the wrapped provider answered `call` (a cancelled call has no
    /// answer, so it comes here never).
    fn after(&self, call: Call<'_>, answer: Answer<'_>) {
        let _ = (call, answer);
    }
}

/// A provider that forwards every method to `inner` and shows each call,
/// and each answer, to its observer (see the module's documentation).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use dsh_instructions_discovery::{CancellationToken, CapStdProvider, FsProvider, camino::Utf8PathBuf, cap_std::ambient_authority};
/// use dsh_instructions_discovery::provider::{Call, Forward, Observe};
///
/// /// Counts the paths probed, one by one or in batches.
/// #[derive(Debug, Default)]
/// struct Probes(AtomicUsize);
/// impl Observe for Probes {
///     fn before(&self, call: Call<'_>) {
///         let n = match call {
///             Call::Probe(_) => 1,
///             Call::ProbeDirs { dirs, names } => dirs.len() * names.len(),
///             _ => 0,
///         };
///         self.0.fetch_add(n, Ordering::Relaxed);
///     }
/// }
///
/// let tmp = tempfile::tempdir().unwrap();
/// let root = Utf8PathBuf::from_path_buf(tmp.path().canonicalize().unwrap()).unwrap();
/// let disk: Arc<dyn FsProvider> = Arc::new(CapStdProvider::new([root.clone()], ambient_authority()).unwrap());
/// let fs = Forward::new(disk, Probes::default());
/// let names = ["AGENTS.md".to_owned(), "CLAUDE.md".to_owned()];
/// fs.probe_dirs(&[root.clone()], &names, &CancellationToken::new()).await.unwrap();
/// assert_eq!(fs.observer().0.load(Ordering::Relaxed), 2);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Forward<O> {
    inner: Arc<dyn FsProvider>,
    observer: O,
}

impl<O> Forward<O> {
    /// Wraps `inner`, showing its calls to `observer`.
    pub fn new(inner: Arc<dyn FsProvider>, observer: O) -> Self {
        Self { inner, observer }
    }

    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }

    /// The wrapped provider.
    pub fn inner(&self) -> &Arc<dyn FsProvider> {
        &self.inner
    }
}

impl<O: Observe> Forward<O> {
    /// Shows `call` to the observer, runs `answer`, shows what it gave.
    fn around<'a, T: Send + 'a>(
        &'a self,
        call: Call<'a>,
        answer: BoxFuture<'a, Result<T, Cancelled>>,
        shown: fn(&T) -> Answer<'_>,
    ) -> BoxFuture<'a, Result<T, Cancelled>> {
        self.observer.before(call);
        Box::pin(async move {
            let out = answer.await?;
            self.observer.after(call, shown(&out));
            Ok(out)
        })
    }
}

/// The methods of [`FsProvider`] that [`Forward`] forwards, each written
/// once as its arguments, its [`Call`] and its [`Answer`]: a method added to
/// the trait is one more line here.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $out:ty, $call:expr, $answer:path;)*) => {$(
        fn $name<'a>(
            &'a self,
            $($arg: $ty,)*
            cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<$out, Cancelled>> {
            self.around($call, self.inner.$name($($arg,)* cancel), |x| $answer(x))
        }
    )*};
}

impl<O: Observe> FsProvider for Forward<O> {
    forward! {
        probe(path: &'a Utf8Path) -> Probe, Call::Probe(path), Answer::Probe;
        probe_many(dir: &'a Utf8Path, names: &'a [String]) -> Vec<Probe>,
            Call::ProbeMany { dir, names }, Answer::Probes;
        probe_dirs(dirs: &'a [Utf8PathBuf], names: &'a [String]) -> Vec<Vec<Probe>>,
            Call::ProbeDirs { dirs, names }, Answer::ProbeDirs;
        probe_dirs_missing(dirs: &'a [Utf8PathBuf], names: &'a [String]) -> ProbedDirs,
            Call::ProbeDirsMissing { dirs, names }, Answer::ProbedDirs;
        probe_paths(paths: &'a [Utf8PathBuf]) -> Vec<Probe>,
            Call::ProbePaths(paths), Answer::Probes;
        markers_until_found(paths: &'a [Utf8PathBuf]) -> Vec<MarkerProbe>,
            Call::MarkersUntilFound(paths), Answer::Markers;
        read_text(path: &'a Utf8Path, max_source_bytes: u64) -> ReadOutcome,
            Call::ReadText { path, max_source_bytes }, Answer::Read;
        read_many(paths: &'a [Utf8PathBuf], max_source_bytes: u64) -> Vec<ReadOutcome>,
            Call::ReadMany { paths, max_source_bytes }, Answer::Reads;
        path_kinds(paths: &'a [Utf8PathBuf]) -> Vec<PathKind>,
            Call::PathKinds(paths), Answer::PathKinds;
        list_dir(dir: &'a Utf8Path) -> DirListing, Call::ListDir(dir), Answer::Listing;
        marker(path: &'a Utf8Path) -> MarkerProbe, Call::Marker(path), Answer::Marker;
    }

    fn pooled(&self) -> bool {
        self.inner.pooled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Every call, in order, with the size of its answer.
    #[derive(Debug, Default)]
    struct Log(Mutex<Vec<String>>);

    impl Observe for Log {
        fn before(&self, call: Call<'_>) {
            self.0.lock().unwrap().push(format!("{call:?}"));
        }
        fn after(&self, _call: Call<'_>, answer: Answer<'_>) {
            let n = match answer {
                Answer::Probes(p) => p.len(),
                Answer::ProbeDirs(p) => p.len(),
                Answer::ProbedDirs(p) => p.probes.len(),
                Answer::Markers(m) => m.len(),
                Answer::Reads(r) => r.len(),
                Answer::PathKinds(k) => k.len(),
                Answer::Probe(_) | Answer::Read(_) | Answer::Listing(_) | Answer::Marker(_) => 1,
            };
            self.0.lock().unwrap().push(format!("= {n}"));
        }
    }

    /// A provider that answers its batches itself and says which of its
    /// methods were called: every probe absent, every read absent.
    #[derive(Debug, Default)]
    struct Batching(Mutex<Vec<&'static str>>);

    impl Batching {
        fn called(&self, name: &'static str) {
            self.0.lock().unwrap().push(name);
        }
    }

    impl FsProvider for Batching {
        fn probe<'a>(
            &'a self,
            _path: &'a Utf8Path,
            cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<Probe, Cancelled>> {
            self.called("probe");
            Box::pin(async move {
                if cancel.is_cancelled() {
                    return Err(Cancelled);
                }
                Ok(Probe::Absent)
            })
        }
        fn probe_dirs<'a>(
            &'a self,
            dirs: &'a [Utf8PathBuf],
            names: &'a [String],
            _cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<Vec<Vec<Probe>>, Cancelled>> {
            self.called("probe_dirs");
            Box::pin(async move { Ok(vec![vec![Probe::Absent; names.len()]; dirs.len()]) })
        }
        fn read_text<'a>(
            &'a self,
            _path: &'a Utf8Path,
            _max_source_bytes: u64,
            _cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>> {
            self.called("read_text");
            Box::pin(async { Ok(ReadOutcome::Absent) })
        }
        fn read_many<'a>(
            &'a self,
            paths: &'a [Utf8PathBuf],
            _max_source_bytes: u64,
            _cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<Vec<ReadOutcome>, Cancelled>> {
            self.called("read_many");
            Box::pin(async move { Ok(vec![ReadOutcome::Absent; paths.len()]) })
        }
        fn marker<'a>(
            &'a self,
            _path: &'a Utf8Path,
            cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
            self.called("marker");
            Box::pin(async move {
                if cancel.is_cancelled() {
                    return Err(Cancelled);
                }
                Ok(MarkerProbe::Missing)
            })
        }
    }

    /// The batches reach the wrapped provider as batches (not one probe
    /// or read per item, which the trait's defaults would make), the
    /// answers are the wrapped provider's, and the observer sees each
    /// call before and its answer after.
    #[tokio::test]
    async fn batches_reach_the_wrapped_provider_whole() {
        let inner = Arc::new(Batching::default());
        let wrapped = Forward::new(inner.clone() as Arc<dyn FsProvider>, Log::default());
        let cancel = CancellationToken::new();
        let dirs = ["/r".into(), "/r/a".into()];
        let names = ["AGENTS.md".to_owned()];
        let probes = wrapped.probe_dirs(&dirs, &names, &cancel).await.unwrap();
        assert_eq!(probes, [[Probe::Absent], [Probe::Absent]]);
        let reads = wrapped
            .read_many(&["/r/a".into(), "/r/b".into()], 100, &cancel)
            .await
            .unwrap();
        assert_eq!(reads.len(), 2);
        assert_eq!(*inner.0.lock().unwrap(), ["probe_dirs", "read_many"]);
        let log = wrapped.observer().0.lock().unwrap().clone();
        assert_eq!(log.len(), 4, "{log:?}");
        assert!(log[0].starts_with("ProbeDirs"), "{log:?}");
        assert_eq!(log[1], "= 2");
        assert!(log[2].starts_with("ReadMany"), "{log:?}");
        assert_eq!(log[3], "= 2");
    }

    /// A cancelled call is shown before, and has no answer to show.
    #[tokio::test]
    async fn a_cancelled_call_has_no_answer() {
        let wrapped = Forward::new(
            Arc::new(Batching::default()) as Arc<dyn FsProvider>,
            Log::default(),
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        let got = wrapped.marker("/r/.git".into(), &cancel).await;
        assert_eq!(got, Err(Cancelled));
        let log = wrapped.observer().0.lock().unwrap().clone();
        assert_eq!(log.len(), 1, "{log:?}");
        assert!(log[0].starts_with("Marker"), "{log:?}");
    }
}
