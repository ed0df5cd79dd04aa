//! An embedder brings its own filesystem and its own history store, naming
//! only `dsh_agent_instructions::` paths (issue 19 item 4): if a type one of
//! the facade's traits names is not reachable from the facade, this file
//! does not compile. The implementations are minimal but real: the runtime
//! mounts on them and composes through them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_agent_instructions::fs::{
    BoxFuture, FileIdentity, FileVersion, LoadedText, MarkerProbe, PresentFile, Probe, ReadOutcome,
    Utf8Path, Utf8PathBuf,
};
use dsh_agent_instructions::host::{VisibleMark, VisibleUpdate};
use dsh_agent_instructions::{
    BatchEntry, BatchItem, CancellationToken, Cancelled, ConfigInput, Decision, FsProvider,
    HomeEnv, Host, Instance, MountBuilder, Preset, ProviderFactory, RuntimeError, TypedSource,
    WorkspaceMessage,
};

/// Files and directories in a map; every file's version is its length and
/// a per-path edit counter.
#[derive(Debug, Default)]
struct MapFs {
    files: Mutex<BTreeMap<Utf8PathBuf, (String, u64)>>,
    dirs: BTreeSet<Utf8PathBuf>,
    reads: AtomicUsize,
}

impl MapFs {
    fn write(&self, path: &str, text: &str) {
        let mut files = self.files.lock().unwrap();
        let edits = files.get(Utf8Path::new(path)).map_or(0, |f| f.1 + 1);
        files.insert(path.into(), (text.to_owned(), edits));
    }

    fn version(text: &str, edits: u64) -> FileVersion {
        FileVersion::new([text.len() as u64, edits, 0, 0])
    }
}

impl FsProvider for MapFs {
    fn probe<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Probe, Cancelled>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(Cancelled);
            }
            Ok(match self.files.lock().unwrap().get(path) {
                Some((text, edits)) => Probe::Present(PresentFile {
                    size: text.len() as u64,
                    version: Self::version(text, *edits),
                    identity: FileIdentity::Path(path.to_owned()),
                }),
                None => Probe::Absent,
            })
        })
    }

    fn read_text<'a>(
        &'a self,
        path: &'a Utf8Path,
        max_source_bytes: u64,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ReadOutcome, Cancelled>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(Cancelled);
            }
            self.reads.fetch_add(1, Ordering::Relaxed);
            Ok(match self.files.lock().unwrap().get(path) {
                Some((text, _)) if text.len() as u64 > max_source_bytes => ReadOutcome::Absent,
                Some((text, edits)) => ReadOutcome::Loaded(LoadedText {
                    text: text.clone(),
                    version: Self::version(text, *edits),
                    identity: FileIdentity::Path(path.to_owned()),
                    bytes_read: text.len() as u64,
                }),
                None => ReadOutcome::Absent,
            })
        })
    }

    fn marker<'a>(
        &'a self,
        path: &'a Utf8Path,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<MarkerProbe, Cancelled>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(Cancelled);
            }
            let exists = self.dirs.contains(path) || self.files.lock().unwrap().contains_key(path);
            Ok(if exists {
                MarkerProbe::Exists
            } else {
                MarkerProbe::Missing
            })
        })
    }
}

/// The embedder's factory: one shared map for the root walk and the reads.
struct MapFactory(Arc<MapFs>);

impl ProviderFactory for MapFactory {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.0.clone())
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        assert!(
            trusted_roots.iter().any(|r| r == "/repo"),
            "{trusted_roots:?}"
        );
        Ok(self.0.clone())
    }
}

/// The embedder's history: entered workspace sources (the inbox is the
/// instance's own).
#[derive(Debug, Default)]
struct Store {
    entered: Mutex<Vec<TypedSource>>,
}

impl Host for Store {
    fn cwd(&self) -> Utf8PathBuf {
        "/repo".into()
    }

    fn visible_workspace(&self) -> Vec<TypedSource> {
        self.entered.lock().unwrap().clone()
    }

    fn visible_since(&self, mark: Option<VisibleMark>) -> (VisibleUpdate, Option<VisibleMark>) {
        // Append-only history: report only what entered since the mark.
        let entered = self.entered.lock().unwrap();
        let now = VisibleMark {
            generation: 0,
            len: entered.len(),
        };
        let update = match mark {
            Some(m) if m.generation == 0 && m.len <= entered.len() => {
                VisibleUpdate::Appended(entered[m.len..].to_vec())
            }
            _ => VisibleUpdate::Whole(entered.clone()),
        };
        (update, Some(now))
    }

    fn step_open(&self) -> bool {
        false
    }
}

fn env() -> HomeEnv {
    HomeEnv {
        home: Some("/home/u".into()),
        dsh_home: None,
        cwd: "/repo".into(),
        account_home: None,
    }
}

/// Enters one prompt; returns the workspace message folded in, and records
/// it as the host must (persist before reporting anything else).
async fn step(instance: &Instance, host: &Store, n: u32) -> Option<WorkspaceMessage> {
    let prompt = BatchItem {
        message: format!("prompt {n}"),
        claimed: true,
    };
    let outcome = instance
        .pre_step(n, Decision::Enter(vec![prompt]), &CancellationToken::new())
        .await
        .expect("not cancelled");
    let workspace = outcome
        .batch
        .unwrap_or_default()
        .into_iter()
        .find_map(|e| match e {
            BatchEntry::Workspace(m) => Some(m),
            BatchEntry::Host(_) => None,
        });
    if let Some(m) = &workspace {
        host.entered.lock().unwrap().push(m.source.clone());
    }
    workspace
}

#[test]
fn an_embedder_implements_the_traits_from_the_facade_alone() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let fs = Arc::new(MapFs {
            dirs: BTreeSet::from(["/repo/.git".into()]),
            ..MapFs::default()
        });
        fs.write("/repo/AGENTS.md", "Run the tests.");
        let config = ConfigInput {
            preset: Some(Preset::Dsh),
            ..Default::default()
        };
        let opened = MountBuilder::new("/repo")
            .config(config)
            .env(env())
            .fs(MapFactory(fs.clone()))
            .open(&CancellationToken::new())
            .await
            .expect("mounts on the embedder's filesystem");
        assert_eq!(opened.root().map(|r| r.root.as_str()), Some("/repo"));
        let host = Arc::new(Store::default());
        let instance: Instance = opened.instance(host.clone()).expect("a runtime");

        // The baseline comes from the embedder's files, through its provider.
        let baseline = step(&instance, &host, 1).await.expect("a baseline");
        assert!(baseline.source.baseline);
        assert!(
            baseline
                .joined_text()
                .contains("Instructions from: AGENTS.md\n\nRun the tests."),
            "{baseline:?}"
        );
        let reads = fs.reads.load(Ordering::Relaxed);
        assert!(
            reads >= 1,
            "the runtime read through the embedder's provider"
        );

        // Nothing changed: the next step adds nothing and reads nothing new
        // (the host's append-only marks and the provider's versions agree).
        assert_eq!(step(&instance, &host, 2).await, None);
        assert_eq!(fs.reads.load(Ordering::Relaxed), reads);

        // An edit is seen through the provider's versions and enters once.
        fs.write("/repo/AGENTS.md", "Run the tests twice.");
        let update = step(&instance, &host, 3).await.expect("an update");
        assert!(
            update.joined_text().contains("Run the tests twice."),
            "{update:?}"
        );
        assert_eq!(update.source.changes[0].path, "AGENTS.md");
        assert!(instance.pending().is_empty(), "nothing left in the inbox");
    });
}
