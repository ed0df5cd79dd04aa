//! The provider contract (R-DISC-4, R-DISC-6, R-DISC-7), written once and run
//! against both providers: the in-memory one and cap-std over a tempdir.
//!
//! Every fixture path is "virtual" (`/r1/AGENTS.md`); the disk fixture maps it
//! and absolute link targets under a fresh temporary directory, the way the
//! conformance runner does.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, CapStdProvider, FsProvider,
    cap_std::ambient_authority,
    listing::{RuleFileProblem, RuleFiles, list_rule_files},
    memory::{MemNode, MemoryProvider},
    provider::{
        FileIdentity, LoadedText, MarkerProbe, PathKind, PresentFile, Probe, ReadOutcome,
        Unavailable,
    },
};

/// Trusted roots of every fixture; `/outside` exists but is not trusted.
const ROOTS: [&str; 2] = ["/r1", "/r2"];
const CAP: u64 = 1024;

trait Fixture {
    type Provider: FsProvider;
    fn new() -> Self;
    fn provider(&self) -> &Self::Provider;
    /// The real path of a virtual one.
    fn path(&self, virtual_path: &str) -> Utf8PathBuf;
    fn file(&self, path: &str, bytes: &[u8]);
    fn dir(&self, path: &str);
    fn link(&self, path: &str, target: &str);
    fn fifo(&self, path: &str);
    /// Adds names-only roots (virtual directories) with these names.
    fn names_only(&mut self, dirs: &[&str], names: &[&str]);
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

struct Memory {
    fs: MemoryProvider,
}

impl Fixture for Memory {
    type Provider = MemoryProvider;

    fn new() -> Self {
        let fs = MemoryProvider::new(ROOTS.iter().map(Utf8PathBuf::from).collect());
        for dir in ROOTS.iter().chain(&["/outside"]) {
            fs.insert(Utf8Path::new(dir), MemNode::dir());
        }
        Self { fs }
    }
    fn provider(&self) -> &MemoryProvider {
        &self.fs
    }
    fn path(&self, virtual_path: &str) -> Utf8PathBuf {
        Utf8PathBuf::from(virtual_path)
    }
    fn file(&self, path: &str, bytes: &[u8]) {
        self.fs.insert(Utf8Path::new(path), MemNode::file(bytes));
    }
    fn dir(&self, path: &str) {
        self.fs.insert(Utf8Path::new(path), MemNode::dir());
    }
    fn link(&self, path: &str, target: &str) {
        self.fs.insert(Utf8Path::new(path), MemNode::link(target));
    }
    fn fifo(&self, path: &str) {
        self.fs.insert(Utf8Path::new(path), MemNode::fifo());
    }
    fn names_only(&mut self, dirs: &[&str], names: &[&str]) {
        let dirs = dirs.iter().map(Utf8PathBuf::from).collect();
        self.fs = self.fs.with_names_only(dirs, &strings(names));
    }
}

struct Disk {
    _tmp: tempfile::TempDir,
    base: Utf8PathBuf,
    provider: CapStdProvider,
}

impl Fixture for Disk {
    type Provider = CapStdProvider;

    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        for dir in ROOTS.iter().chain(&["/outside"]) {
            std::fs::create_dir_all(base.join(&dir[1..])).unwrap();
        }
        let provider = CapStdProvider::new(
            ROOTS.iter().map(|r| base.join(&r[1..])),
            ambient_authority(),
        )
        .unwrap();
        Self {
            _tmp: tmp,
            base,
            provider,
        }
    }
    fn provider(&self) -> &CapStdProvider {
        &self.provider
    }
    fn path(&self, virtual_path: &str) -> Utf8PathBuf {
        self.base.join(virtual_path.trim_start_matches('/'))
    }
    fn file(&self, path: &str, bytes: &[u8]) {
        let real = self.path(path);
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(real, bytes).unwrap();
    }
    fn dir(&self, path: &str) {
        std::fs::create_dir_all(self.path(path)).unwrap();
    }
    fn link(&self, path: &str, target: &str) {
        let real = self.path(path);
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        let target = if target.starts_with('/') {
            self.path(target)
        } else {
            Utf8PathBuf::from(target)
        };
        std::os::unix::fs::symlink(target, real).unwrap();
    }
    fn fifo(&self, path: &str) {
        let real = self.path(path);
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, real.as_std_path(), 0o644.into()).unwrap();
    }
    fn names_only(&mut self, dirs: &[&str], names: &[&str]) {
        let dirs: Vec<Utf8PathBuf> = dirs.iter().map(|d| self.path(d)).collect();
        self.provider = CapStdProvider::new(
            ROOTS.iter().map(|r| self.base.join(&r[1..])),
            ambient_authority(),
        )
        .unwrap()
        .names_only(dirs, &strings(names));
    }
}

fn token() -> CancellationToken {
    CancellationToken::new()
}

async fn probe<F: Fixture>(fx: &F, path: &str) -> Probe {
    fx.provider().probe(&fx.path(path), &token()).await.unwrap()
}

async fn read<F: Fixture>(fx: &F, path: &str, cap: u64) -> ReadOutcome {
    fx.provider()
        .read_text(&fx.path(path), cap, &token())
        .await
        .unwrap()
}

async fn marker<F: Fixture>(fx: &F, path: &str) -> MarkerProbe {
    fx.provider()
        .marker(&fx.path(path), &token())
        .await
        .unwrap()
}

#[track_caller]
fn present(probe: Probe) -> PresentFile {
    match probe {
        Probe::Present(file) => file,
        other => panic!("expected present, got {other:?}"),
    }
}

#[track_caller]
fn loaded(outcome: ReadOutcome) -> LoadedText {
    match outcome {
        ReadOutcome::Loaded(text) => text,
        other => panic!("expected loaded, got {other:?}"),
    }
}

/// Probe and read agree that `path` is unavailable for `reason`.
async fn assert_unavailable<F: Fixture>(fx: &F, path: &str, reason: Unavailable) {
    assert_eq!(
        probe(fx, path).await,
        Probe::Unavailable(reason.clone()),
        "probe {path}"
    );
    assert_eq!(
        read(fx, path, CAP).await,
        ReadOutcome::Unavailable(reason),
        "read {path}"
    );
}

/// Probe and read agree that `path` is absent.
async fn assert_absent<F: Fixture>(fx: &F, path: &str) {
    assert_eq!(probe(fx, path).await, Probe::Absent, "probe {path}");
    assert_eq!(
        read(fx, path, CAP).await,
        ReadOutcome::Absent,
        "read {path}"
    );
}

/// `path` reads as `text`, and the probe and the read see the same file.
async fn assert_reads<F: Fixture>(fx: &F, path: &str, text: &str) -> PresentFile {
    let file = present(probe(fx, path).await);
    let got = loaded(read(fx, path, CAP).await);
    assert_eq!(got.text, text, "{path}");
    assert_eq!(got.identity, file.identity, "{path}");
    assert_eq!(got.version, file.version, "{path}");
    file
}

async fn regular_file<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"rule\n");
    let file = assert_reads(&fx, "/r1/AGENTS.md", "rule\n").await;
    assert_eq!(file.size, 5);
    assert_eq!(loaded(read(&fx, "/r1/AGENTS.md", CAP).await).bytes_read, 5);
}

async fn missing_file_is_absent<F: Fixture>() {
    let fx = F::new();
    assert_absent(&fx, "/r1/AGENTS.md").await;
    assert_absent(&fx, "/r1/no/such/dir/AGENTS.md").await;
}

async fn directory_is_absent<F: Fixture>() {
    let fx = F::new();
    fx.dir("/r1/AGENTS.md");
    assert_absent(&fx, "/r1/AGENTS.md").await;
}

async fn link_in_same_dir<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"rule");
    fx.link("/r1/CLAUDE.md", "AGENTS.md");
    let via_link = assert_reads(&fx, "/r1/CLAUDE.md", "rule").await;
    let direct = present(probe(&fx, "/r1/AGENTS.md").await);
    // R-DISC-3: the link and its target are the same file.
    assert_eq!(via_link.identity, direct.identity);
}

async fn link_into_subdirectory<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/docs/agents.md", b"sub rule");
    fx.link("/r1/AGENTS.md", "docs/agents.md");
    assert_reads(&fx, "/r1/AGENTS.md", "sub rule").await;
}

async fn absolute_link_within_root<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/b/real.md", b"abs");
    fx.link("/r1/a/AGENTS.md", "/r1/b/real.md");
    assert_reads(&fx, "/r1/a/AGENTS.md", "abs").await;
}

async fn absolute_link_into_other_root<F: Fixture>() {
    let fx = F::new();
    fx.file("/r2/shared.md", b"shared");
    fx.link("/r1/AGENTS.md", "/r2/shared.md");
    assert_reads(&fx, "/r1/AGENTS.md", "shared").await;
}

async fn relative_link_into_other_root<F: Fixture>() {
    let fx = F::new();
    fx.file("/r2/shared.md", b"shared");
    fx.link("/r1/pkg/AGENTS.md", "../../r2/shared.md");
    assert_reads(&fx, "/r1/pkg/AGENTS.md", "shared").await;
}

async fn chained_links_across_roots<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/final.md", b"end");
    fx.link("/r2/hop.md", "/r1/final.md");
    fx.link("/r1/AGENTS.md", "../r2/hop.md");
    assert_reads(&fx, "/r1/AGENTS.md", "end").await;
}

async fn directory_link_in_the_middle<F: Fixture>() {
    let fx = F::new();
    fx.file("/r2/real/AGENTS.md", b"through dir link");
    fx.link("/r1/pkg", "/r2/real");
    assert_reads(&fx, "/r1/pkg/AGENTS.md", "through dir link").await;
}

async fn link_leaving_the_roots<F: Fixture>() {
    let fx = F::new();
    fx.file("/outside/secret.md", b"secret");
    fx.link("/r1/abs.md", "/outside/secret.md");
    fx.link("/r1/rel.md", "../outside/secret.md");
    fx.link("/r1/gone.md", "/outside/missing.md");
    fx.link("/r1/dir", "/outside");
    for path in [
        "/r1/abs.md",
        "/r1/rel.md",
        "/r1/gone.md",
        "/r1/dir/secret.md",
    ] {
        assert_unavailable(&fx, path, Unavailable::OutsideTrustedRoots).await;
    }
}

async fn path_outside_every_root<F: Fixture>() {
    let fx = F::new();
    fx.file("/outside/AGENTS.md", b"x");
    assert_unavailable(&fx, "/outside/AGENTS.md", Unavailable::OutsideTrustedRoots).await;
}

async fn link_to_directory_is_absent<F: Fixture>() {
    let fx = F::new();
    fx.dir("/r1/docs");
    fx.link("/r1/AGENTS.md", "docs");
    fx.link("/r1/CLAUDE.md", "/r2");
    assert_absent(&fx, "/r1/AGENTS.md").await;
    assert_absent(&fx, "/r1/CLAUDE.md").await;
}

async fn dangling_link_is_absent<F: Fixture>() {
    let fx = F::new();
    fx.link("/r1/AGENTS.md", "missing.md");
    fx.link("/r1/CLAUDE.md", "/r2/missing.md");
    assert_absent(&fx, "/r1/AGENTS.md").await;
    assert_absent(&fx, "/r1/CLAUDE.md").await;
}

async fn link_loop_is_unavailable<F: Fixture>() {
    let fx = F::new();
    fx.link("/r1/a.md", "b.md");
    fx.link("/r1/b.md", "a.md");
    fx.link("/r1/self.md", "self.md");
    fx.link("/r1/x.md", "/r2/y.md");
    fx.link("/r2/y.md", "/r1/x.md");
    for path in ["/r1/a.md", "/r1/self.md", "/r1/x.md"] {
        assert_unavailable(&fx, path, Unavailable::Loop).await;
    }
}

async fn fifo_is_absent_and_never_opened<F: Fixture>() {
    let fx = F::new();
    fx.fifo("/r1/AGENTS.md");
    fx.link("/r1/CLAUDE.md", "AGENTS.md");
    // A regression that opens the FIFO blocks forever: fail instead of
    // hanging (a hang guard, decision 0082; the probes take microseconds).
    let guarded = tokio::time::timeout(Duration::from_secs(60), async {
        assert_absent(&fx, "/r1/AGENTS.md").await;
        assert_absent(&fx, "/r1/CLAUDE.md").await;
    });
    guarded.await.expect("a FIFO was opened");
}

async fn parent_is_a_file<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/pkg", b"not a dir");
    assert_absent(&fx, "/r1/pkg/AGENTS.md").await;
    assert_eq!(marker(&fx, "/r1/pkg/.git").await, MarkerProbe::Missing);
}

async fn oversized_by_metadata<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/big.md", &[b'a'; 100]);
    fx.file("/r1/exact.md", &[b'b'; 10]);
    // The probe still reports the file: only the read enforces the cap.
    assert_eq!(present(probe(&fx, "/r1/big.md").await).size, 100);
    assert_eq!(
        read(&fx, "/r1/big.md", 99).await,
        ReadOutcome::Unavailable(Unavailable::TooLarge { limit: 99 })
    );
    assert_eq!(
        loaded(read(&fx, "/r1/exact.md", 10).await).text,
        "b".repeat(10)
    );
    assert_eq!(
        read(&fx, "/r1/exact.md", 9).await,
        ReadOutcome::Unavailable(Unavailable::TooLarge { limit: 9 })
    );
}

async fn many_chunks_read_whole<F: Fixture>() {
    let fx = F::new();
    // Bigger than either provider's chunk size, not a multiple of it.
    let content: String = (0..30_000).map(|i| format!("{i:05}\n")).collect();
    fx.file("/r1/AGENTS.md", content.as_bytes());
    let got = loaded(read(&fx, "/r1/AGENTS.md", content.len() as u64).await);
    assert_eq!(got.bytes_read, content.len() as u64);
    assert_eq!(got.text, content);
}

async fn bom_is_dropped<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"\xEF\xBB\xBFrule");
    let got = loaded(read(&fx, "/r1/AGENTS.md", CAP).await);
    assert_eq!(got.text, "rule");
    assert_eq!(got.bytes_read, 7, "the BOM is read, then dropped");
}

async fn invalid_utf8_is_replaced<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"a\xFF\xFEb\xC3");
    assert_eq!(
        loaded(read(&fx, "/r1/AGENTS.md", CAP).await).text,
        "a\u{FFFD}\u{FFFD}b\u{FFFD}"
    );
}

async fn markers_check_existence_only<F: Fixture>() {
    let fx = F::new();
    fx.dir("/outside/repo/.git");
    fx.file("/outside/wt/.git", b"gitdir: x");
    fx.link("/outside/dangling/.git", "nowhere");
    fx.fifo("/outside/pipe/.git");
    fx.dir("/outside/none");
    // Markers are checked outside the trusted roots too (R-DISC-7).
    for path in [
        "/outside/repo/.git",
        "/outside/wt/.git",
        "/outside/dangling/.git",
        "/outside/pipe/.git",
    ] {
        assert_eq!(marker(&fx, path).await, MarkerProbe::Exists, "{path}");
    }
    assert_eq!(
        marker(&fx, "/outside/none/.git").await,
        MarkerProbe::Missing
    );
    assert_eq!(
        marker(&fx, "/outside/absent/.git").await,
        MarkerProbe::Missing
    );
}

async fn probe_many_matches_probe<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/pkg/AGENTS.md", b"a");
    fx.link("/r1/pkg/CLAUDE.md", "/outside/x");
    fx.dir("/r1/pkg/AGENTS.local.md");
    fx.file("/r1/top.md", b"top");
    // Links a per-directory handle cannot follow by itself.
    fx.link("/r1/pkg/up.md", "../top.md");
    fx.link("/r1/pkg/abs.md", "/r1/top.md");
    fx.link("/r1/pkg/loop.md", "loop.md");
    let names: Vec<String> = [
        "AGENTS.md",
        "CLAUDE.md",
        "AGENTS.local.md",
        "CLAUDE.local.md",
        "up.md",
        "abs.md",
        "loop.md",
    ]
    .map(String::from)
    .to_vec();
    let many = fx
        .provider()
        .probe_many(&fx.path("/r1/pkg"), &names, &token())
        .await
        .unwrap();
    let mut one_by_one = Vec::new();
    for name in &names {
        one_by_one.push(probe(&fx, &format!("/r1/pkg/{name}")).await);
    }
    assert_eq!(many, one_by_one);
    assert!(matches!(many[0], Probe::Present(_)));
    assert_eq!(
        many[1],
        Probe::Unavailable(Unavailable::OutsideTrustedRoots)
    );
    assert_eq!(many[2..4], [Probe::Absent, Probe::Absent]);
    let top = present(probe(&fx, "/r1/top.md").await);
    assert_eq!(many[4], Probe::Present(top.clone()));
    assert_eq!(many[5], Probe::Present(top));
    assert_eq!(many[6], Probe::Unavailable(Unavailable::Loop));
}

async fn probe_many_through_a_linked_directory<F: Fixture>() {
    let fx = F::new();
    fx.file("/r2/real/AGENTS.md", b"a");
    fx.link("/r1/pkg", "/r2/real");
    let names = ["AGENTS.md".to_owned(), "CLAUDE.md".to_owned()];
    let many = fx
        .provider()
        .probe_many(&fx.path("/r1/pkg"), &names, &token())
        .await
        .unwrap();
    assert!(matches!(many[0], Probe::Present(_)));
    assert_eq!(many[1], Probe::Absent);
    let missing = fx
        .provider()
        .probe_many(&fx.path("/r1/none"), &names, &token())
        .await
        .unwrap();
    assert_eq!(missing, [Probe::Absent, Probe::Absent]);
}

async fn version_tracks_content<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"one");
    let first = present(probe(&fx, "/r1/AGENTS.md").await);
    assert_eq!(
        present(probe(&fx, "/r1/AGENTS.md").await).version,
        first.version
    );
    // A size change alters the version whatever the timestamp granularity.
    fx.file("/r1/AGENTS.md", b"three");
    let second = present(probe(&fx, "/r1/AGENTS.md").await);
    assert_ne!(second.version, first.version);
    assert_eq!(second.identity, first.identity, "rewritten in place");
}

async fn distinct_files_have_distinct_identities<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"same");
    fx.file("/r1/CLAUDE.md", b"same");
    let a = present(probe(&fx, "/r1/AGENTS.md").await);
    let b = present(probe(&fx, "/r1/CLAUDE.md").await);
    assert_ne!(a.identity, b.identity);
    assert!(matches!(
        a.identity,
        FileIdentity::Inode { .. } | FileIdentity::Path(_)
    ));
}

async fn cancelled_token_cancels_every_operation<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"x");
    let cancel = token();
    cancel.cancel();
    let path = fx.path("/r1/AGENTS.md");
    let provider = fx.provider();
    assert_eq!(provider.probe(&path, &cancel).await, Err(Cancelled));
    assert_eq!(
        provider.read_text(&path, CAP, &cancel).await,
        Err(Cancelled)
    );
    assert_eq!(provider.marker(&path, &cancel).await, Err(Cancelled));
    let names = ["AGENTS.md".to_owned()];
    assert_eq!(
        provider.probe_many(&fx.path("/r1"), &names, &cancel).await,
        Err(Cancelled)
    );
}

/// Unrelated paths probed in one batch (import targets, R-IMP-2) equal the
/// paths probed one by one: present, absent, through a link, outside every
/// root; a cancelled batch is `Cancelled`.
async fn probe_paths_matches_probe<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/docs/a.md", b"a");
    fx.file("/r2/b.md", b"b");
    fx.link("/r1/link.md", "/r2/b.md");
    fx.file("/outside/c.md", b"c");
    let paths: Vec<Utf8PathBuf> = [
        "/r1/docs/a.md",
        "/r1/none.md",
        "/r1/link.md",
        "/r2/b.md",
        "/outside/c.md",
    ]
    .iter()
    .map(|p| fx.path(p))
    .collect();
    let batch = fx.provider().probe_paths(&paths, &token()).await.unwrap();
    let mut single = Vec::new();
    for p in &paths {
        single.push(fx.provider().probe(p, &token()).await.unwrap());
    }
    assert_eq!(batch, single);
    assert!(matches!(batch[0], Probe::Present(_)));
    assert_eq!(batch[1], Probe::Absent);
    assert!(matches!(batch[2], Probe::Present(_)));
    assert_eq!(
        batch[4],
        Probe::Unavailable(Unavailable::OutsideTrustedRoots)
    );
    let cancel = token();
    cancel.cancel();
    assert_eq!(
        fx.provider().probe_paths(&paths, &cancel).await,
        Err(Cancelled)
    );
}

/// A chain probed in one batch equals the chain probed directory by
/// directory, also through a linked directory, an absolute link and a
/// missing directory in the middle.
async fn probe_dirs_matches_probe_many<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"root");
    fx.file("/r1/a/CLAUDE.md", b"a");
    fx.link("/r1/a/AGENTS.local.md", "/r1/AGENTS.md");
    fx.file("/r2/real/AGENTS.md", b"linked dir");
    fx.file("/r2/real/c/AGENTS.md", b"under the link");
    fx.link("/r2/real/c/CLAUDE.md", "../AGENTS.md");
    fx.link("/r1/a/b", "/r2/real");
    let names: Vec<String> = ["AGENTS.md", "CLAUDE.md", "AGENTS.local.md"]
        .map(String::from)
        .to_vec();
    let dirs: Vec<Utf8PathBuf> = [
        "/r1",
        "/r1/a",
        "/r1/a/b",
        "/r1/a/b/c",
        "/r1/a/b/c/none",
        "/r1/a/b/c/none/x",
    ]
    .iter()
    .map(|d| fx.path(d))
    .collect();
    let batch = fx
        .provider()
        .probe_dirs(&dirs, &names, &token())
        .await
        .unwrap();
    let mut single = Vec::new();
    for dir in &dirs {
        single.push(
            fx.provider()
                .probe_many(dir, &names, &token())
                .await
                .unwrap(),
        );
    }
    assert_eq!(batch, single);
    assert!(
        matches!(batch[2][0], Probe::Present(_)),
        "through the linked directory"
    );
    assert!(
        matches!(batch[3][1], Probe::Present(_)),
        "a link climbing back out of c"
    );
    assert_eq!(batch[4], [Probe::Absent, Probe::Absent, Probe::Absent]);
}

/// A list read in one call equals the files read one by one, including a
/// link, a missing file, a directory and one over the cap.
async fn read_many_matches_read_text<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/AGENTS.md", b"root");
    fx.file("/r1/a/CLAUDE.md", &[b'c'; 64]);
    fx.link("/r1/a/AGENTS.md", "../AGENTS.md");
    fx.dir("/r1/d");
    let paths: Vec<Utf8PathBuf> = [
        "/r1/a/AGENTS.md",
        "/r1/AGENTS.md",
        "/r1/missing.md",
        "/r1/d",
        "/r1/a/CLAUDE.md",
    ]
    .iter()
    .map(|p| fx.path(p))
    .collect();
    let batch = fx.provider().read_many(&paths, 16, &token()).await.unwrap();
    let mut single = Vec::new();
    for path in &paths {
        single.push(fx.provider().read_text(path, 16, &token()).await.unwrap());
    }
    assert_eq!(batch, single);
    assert!(matches!(&batch[0], ReadOutcome::Loaded(t) if t.text == "root"));
    assert!(matches!(
        batch[4],
        ReadOutcome::Unavailable(Unavailable::TooLarge { limit: 16 })
    ));
}

/// The marker walk stops at the first path that is not missing.
async fn markers_until_found_stops_at_the_first_hit<F: Fixture>() {
    let fx = F::new();
    fx.dir("/r1/repo/.git");
    fx.dir("/r1/repo/a");
    let paths: Vec<Utf8PathBuf> = [
        "/r1/repo/a/.git",
        "/r1/repo/a/.hg",
        "/r1/repo/.git",
        "/r1/.git",
    ]
    .iter()
    .map(|p| fx.path(p))
    .collect();
    let found = fx
        .provider()
        .markers_until_found(&paths, &token())
        .await
        .unwrap();
    assert_eq!(
        found,
        [
            MarkerProbe::Missing,
            MarkerProbe::Missing,
            MarkerProbe::Exists
        ]
    );
}

/// Shell touches classify by metadata (R-DISC-10): files, directories (also
/// through links, across roots), the rest; never a read; outside every root
/// is unavailable whatever exists there.
async fn path_kinds_classify_without_reading<F: Fixture>() {
    let fx = F::new();
    fx.file("/r1/a/f.rs", b"x");
    fx.dir("/r1/a/sub");
    fx.link("/r1/a/to_dir", "sub");
    fx.link("/r1/a/to_r2", "/r2/g.rs");
    fx.file("/r2/g.rs", b"y");
    fx.fifo("/r1/a/pipe");
    fx.file("/outside/h.rs", b"z");
    fx.link("/r1/a/escape", "/outside/h.rs");
    let paths: Vec<Utf8PathBuf> = [
        "/r1/a/f.rs",
        "/r1/a/sub",
        "/r1/a/to_dir",
        "/r1/a/to_r2",
        "/r1/a/pipe",
        "/r1/a/missing",
        "/r1/a/f.rs/below",
        "/outside/h.rs",
        "/r1/a/escape",
        "/r1",
    ]
    .iter()
    .map(|p| fx.path(p))
    .collect();
    let kinds = fx.provider().path_kinds(&paths, &token()).await.unwrap();
    assert_eq!(
        kinds,
        [
            PathKind::File,
            PathKind::Directory,
            PathKind::Directory,
            PathKind::File,
            PathKind::Other,
            PathKind::Absent,
            PathKind::Absent,
            PathKind::Unavailable(Unavailable::OutsideTrustedRoots),
            PathKind::Unavailable(Unavailable::OutsideTrustedRoots),
            PathKind::Directory,
        ]
    );
    let cancelled = token();
    cancelled.cancel();
    assert_eq!(
        fx.provider().path_kinds(&paths, &cancelled).await,
        Err(Cancelled)
    );
}

const CLAUDE_NAMES: [&str; 3] = ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"];

/// R-HOOK-8 (docs/decisions/0044): a names-only root admits its listed
/// names and nothing else of its directory; links from trusted roots never
/// lead into it; shell touches never see it.
async fn names_only_roots_admit_their_names_alone<F: Fixture>() {
    let mut fx = F::new();
    fx.file("/top/CLAUDE.md", b"top");
    fx.file("/top/.claude/CLAUDE.md", b"claude dir");
    fx.file("/top/AGENTS.md", b"sibling");
    fx.link("/top/CLAUDE.local.md", "AGENTS.md");
    fx.file("/top/notes.md", b"private");
    fx.file("/top/sub/CLAUDE.md", b"below");
    fx.link("/r1/AGENTS.md", "/top/CLAUDE.md");
    fx.link("/r1/CLAUDE.md", "../top/CLAUDE.md");
    fx.names_only(&["/top"], &CLAUDE_NAMES);
    assert_reads(&fx, "/top/CLAUDE.md", "top").await;
    assert_reads(&fx, "/top/.claude/CLAUDE.md", "claude dir").await;
    // A link to an entry of the same directory is followed...
    assert_reads(&fx, "/top/CLAUDE.local.md", "sibling").await;
    let outside = Unavailable::OutsideTrustedRoots;
    // ...but that entry is not readable by its own name, nor is any other.
    assert_unavailable(&fx, "/top/AGENTS.md", outside.clone()).await;
    assert_unavailable(&fx, "/top/notes.md", outside.clone()).await;
    assert_unavailable(&fx, "/top/sub/CLAUDE.md", outside.clone()).await;
    assert_unavailable(&fx, "/top/.claude", outside.clone()).await;
    // Links of a trusted root are never re-anchored into it.
    assert_unavailable(&fx, "/r1/AGENTS.md", outside.clone()).await;
    assert_unavailable(&fx, "/r1/CLAUDE.md", outside.clone()).await;
    let kinds = fx
        .provider()
        .path_kinds(&[fx.path("/top/CLAUDE.md")], &token())
        .await
        .unwrap();
    assert_eq!(kinds, [PathKind::Unavailable(outside)]);
    // The batched forms admit the same.
    let paths = [fx.path("/top/CLAUDE.md"), fx.path("/top/notes.md")];
    let probes = fx.provider().probe_paths(&paths, &token()).await.unwrap();
    assert!(matches!(probes[0], Probe::Present(_)), "{probes:?}");
    assert_eq!(
        probes[1],
        Probe::Unavailable(Unavailable::OutsideTrustedRoots)
    );
    let reads = fx
        .provider()
        .read_many(&paths, CAP, &token())
        .await
        .unwrap();
    assert_eq!(loaded(reads[0].clone()).text, "top");
}

/// From a names-only file, a link is followed only to an entry of that
/// same directory: never out of it, into a subdirectory, or into a trusted
/// root; a FIFO or a directory under the name is absent.
async fn names_only_links_stay_in_their_directory<F: Fixture>() {
    let mut fx = F::new();
    fx.file("/outside/secret.md", b"secret");
    fx.link("/top/a/CLAUDE.md", "/outside/secret.md");
    fx.file("/r1/AGENTS.md", b"project");
    fx.link("/top/b/CLAUDE.md", "../../r1/AGENTS.md");
    fx.file("/top/c/docs/x.md", b"deeper");
    fx.link("/top/c/CLAUDE.md", "docs/x.md");
    fx.file("/top/d/AGENTS.md", b"absolute sibling");
    fx.link("/top/d/CLAUDE.md", "/top/d/AGENTS.md");
    fx.fifo("/top/e/CLAUDE.md");
    fx.dir("/top/f/CLAUDE.md");
    fx.file("/top/g/real/CLAUDE.md", b"through a linked .claude");
    fx.link("/top/g/.claude", "real");
    fx.link("/top/h/CLAUDE.md", "CLAUDE.local.md");
    fx.link("/top/h/CLAUDE.local.md", "CLAUDE.md");
    fx.link("/top/i/CLAUDE.md", "gone.md");
    let dirs = [
        "/top/a", "/top/b", "/top/c", "/top/d", "/top/e", "/top/f", "/top/g", "/top/h", "/top/i",
    ];
    fx.names_only(&dirs, &CLAUDE_NAMES);
    let outside = Unavailable::OutsideTrustedRoots;
    assert_unavailable(&fx, "/top/a/CLAUDE.md", outside.clone()).await;
    assert_unavailable(&fx, "/top/b/CLAUDE.md", outside.clone()).await;
    assert_unavailable(&fx, "/top/c/CLAUDE.md", outside.clone()).await;
    assert_reads(&fx, "/top/d/CLAUDE.md", "absolute sibling").await;
    assert_absent(&fx, "/top/e/CLAUDE.md").await;
    assert_absent(&fx, "/top/f/CLAUDE.md").await;
    assert_unavailable(&fx, "/top/g/.claude/CLAUDE.md", outside).await;
    assert_unavailable(&fx, "/top/h/CLAUDE.md", Unavailable::Loop).await;
    assert_absent(&fx, "/top/i/CLAUDE.md").await;
}

/// A trusted root answers for its whole subtree, names-only root or not.
async fn a_trusted_root_wins_over_a_names_only_root<F: Fixture>() {
    let mut fx = F::new();
    fx.file("/r1/notes.md", b"trusted");
    fx.file("/r2/AGENTS.md", b"shared");
    fx.link("/r1/CLAUDE.md", "/r2/AGENTS.md");
    fx.names_only(&["/r1"], &CLAUDE_NAMES);
    assert_reads(&fx, "/r1/notes.md", "trusted").await;
    assert_reads(&fx, "/r1/CLAUDE.md", "shared").await;
}

async fn rules<F: Fixture>(fx: &F, dir: &str, suffix: &str, recursive: bool) -> RuleFiles {
    list_rule_files(fx.provider(), &fx.path(dir), suffix, recursive, &token())
        .await
        .unwrap()
}

/// R-RULE-1 / R-RULE-8: rule files by suffix, in byte order of their path
/// relative to the rules directory (`a.md` before `a/z.md`); subdirectories
/// only when recursive; nothing else listed.
async fn rule_listing_orders_and_filters<F: Fixture>() {
    let fx = F::new();
    let d = "/r1/.claude/rules";
    fx.file(&format!("{d}/a/z.md"), b"z");
    fx.file(&format!("{d}/a.md"), b"a");
    fx.file(&format!("{d}/B.md"), b"B");
    fx.file(&format!("{d}/notes.txt"), b"n");
    fx.file(&format!("{d}/.md"), b"bare suffix");
    fx.dir(&format!("{d}/empty.md"));
    let found = rules(&fx, d, ".md", true).await;
    assert_eq!(found.files, ["B.md", "a.md", "a/z.md"]);
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    let flat = rules(&fx, d, ".md", false).await;
    assert_eq!(flat.files, ["B.md", "a.md"]);
    // An absent rules directory, or a file in its place, has no rules.
    assert_eq!(
        rules(&fx, "/r1/.cursor/rules", ".mdc", true).await,
        RuleFiles::default()
    );
    fx.file("/r1/.windsurf/rules", b"not a directory");
    assert_eq!(
        rules(&fx, "/r1/.windsurf/rules", ".md", false).await,
        RuleFiles::default()
    );
}

/// R-RULE-1: at most 4 path components and 256 rule files; the rest is
/// skipped with a problem naming it.
async fn rule_listing_is_bounded<F: Fixture>() {
    let fx = F::new();
    let d = "/r1/.claude/rules";
    fx.file(&format!("{d}/a/b/c/d.md"), b"four");
    fx.file(&format!("{d}/a/b/c/d/e.md"), b"five");
    let found = rules(&fx, d, ".md", true).await;
    assert_eq!(found.files, ["a/b/c/d.md"]);
    assert_eq!(
        found.problems,
        [RuleFileProblem::TooDeep {
            rel: "a/b/c/d".into()
        }]
    );
    let many = "/r2/.cursor/rules";
    for i in 0..300 {
        fx.file(&format!("{many}/r{i:03}.mdc"), b"x");
    }
    let found = rules(&fx, many, ".mdc", true).await;
    assert_eq!(found.files.len(), 256);
    assert_eq!(found.files[0], "r000.mdc");
    assert_eq!(found.files[255], "r255.mdc");
    assert_eq!(
        found.problems,
        [RuleFileProblem::TooManyFiles { skipped: 44 }]
    );
}

/// R-RULE-1: links followed only inside the trusted roots, loops end, a
/// FIFO named like a rule is never opened and is reported.
async fn rule_listing_links_and_specials<F: Fixture>() {
    let fx = F::new();
    let d = "/r1/.claude/rules";
    fx.file("/r2/shared.md", b"shared");
    fx.link(&format!("{d}/shared.md"), "/r2/shared.md");
    fx.file("/outside/secret.md", b"secret");
    fx.link(&format!("{d}/secret.md"), "/outside/secret.md");
    fx.link(&format!("{d}/gone.md"), "nothing-here.md");
    fx.link(&format!("{d}/p.md"), "q.md");
    fx.link(&format!("{d}/q.md"), "p.md");
    fx.fifo(&format!("{d}/x.md"));
    fx.file(&format!("{d}/sub/s.md"), b"s");
    fx.link(&format!("{d}/sub/again"), "..");
    let found = rules(&fx, d, ".md", true).await;
    // The directory link re-lists the same directory until the depth
    // bound: four components at most, the fifth level reported.
    assert_eq!(
        found.files,
        [
            "shared.md",
            "sub/again/shared.md",
            "sub/again/sub/s.md",
            "sub/s.md",
        ]
    );
    assert!(found.problems.contains(&RuleFileProblem::TooDeep {
        rel: "sub/again/sub/again".into()
    }));
    let outside = |rel: &str| RuleFileProblem::Unavailable {
        rel: rel.into(),
        reason: Unavailable::OutsideTrustedRoots,
    };
    assert!(
        found.problems.contains(&outside("secret.md")),
        "{:?}",
        found.problems
    );
    assert!(
        found.problems.contains(&RuleFileProblem::Unavailable {
            rel: "p.md".into(),
            reason: Unavailable::Loop
        }),
        "{:?}",
        found.problems
    );
    assert!(
        found
            .problems
            .contains(&RuleFileProblem::NotARegularFile { rel: "x.md".into() })
    );
    // A rules directory that is itself a link out of the roots.
    fx.link("/r2/.claude", "/outside");
    fx.dir("/outside/rules");
    let escaped = rules(&fx, "/r2/.claude/rules", ".md", true).await;
    assert!(escaped.files.is_empty());
    assert_eq!(escaped.problems, [outside(".")]);
}

/// R-RULE-1: a rules directory of 10,000 files lists its first 256 rule
/// files, in order, and says how many it skipped. How long that takes is
/// the bench's `list/rules-10000` row (decision 0082).
async fn rule_listing_of_ten_thousand_files<F: Fixture>() {
    let fx = F::new();
    let d = "/r1/.github/instructions";
    for i in 0..10_000 {
        fx.file(&format!("{d}/f{i:05}.instructions.md"), b"");
    }
    let found = rules(&fx, d, ".instructions.md", true).await;
    let first: Vec<String> = (0..256)
        .map(|i| format!("f{i:05}.instructions.md"))
        .collect();
    assert_eq!(found.files, first);
    assert_eq!(
        found.problems,
        [RuleFileProblem::TooManyFiles { skipped: 9_744 }]
    );
}

macro_rules! contract {
    ($module:ident, $fixture:ty) => {
        contract!(@tests $module, $fixture;
            regular_file, missing_file_is_absent, directory_is_absent, link_in_same_dir,
            link_into_subdirectory, absolute_link_within_root, absolute_link_into_other_root,
            relative_link_into_other_root, chained_links_across_roots,
            directory_link_in_the_middle, link_leaving_the_roots, path_outside_every_root,
            link_to_directory_is_absent, dangling_link_is_absent, link_loop_is_unavailable,
            fifo_is_absent_and_never_opened, parent_is_a_file, oversized_by_metadata,
            many_chunks_read_whole, bom_is_dropped, invalid_utf8_is_replaced,
            markers_check_existence_only, probe_many_matches_probe, probe_many_through_a_linked_directory, probe_dirs_matches_probe_many, probe_paths_matches_probe,
            read_many_matches_read_text, markers_until_found_stops_at_the_first_hit, version_tracks_content,
            distinct_files_have_distinct_identities, cancelled_token_cancels_every_operation,
            path_kinds_classify_without_reading, names_only_roots_admit_their_names_alone,
            names_only_links_stay_in_their_directory, a_trusted_root_wins_over_a_names_only_root,
            rule_listing_orders_and_filters, rule_listing_is_bounded,
            rule_listing_links_and_specials, rule_listing_of_ten_thousand_files);
    };
    (@tests $module:ident, $fixture:ty; $($name:ident),* $(,)?) => {
        mod $module {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name::<$fixture>().await;
                }
            )*
        }
    };
}

contract!(memory, super::Memory);
contract!(disk, super::Disk);
