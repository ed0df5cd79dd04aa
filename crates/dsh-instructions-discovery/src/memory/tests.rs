//! Tests of the in-memory provider: links, roots, faults, gates, stale
//! sizes, latency, counters and cancellation.

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
    assert_eq!(name.parse::<FsOp>().ok(), Some(op));
    assert_eq!(op.to_string(), name);
}

#[rstest]
#[case("EACCES", Errno::Eacces, Unavailable::PermissionDenied)]
#[case("ELOOP", Errno::Eloop, Unavailable::Loop)]
#[case("ETIMEDOUT", Errno::Etimedout, Unavailable::TimedOut)]
fn parses_and_maps_errors(#[case] name: &str, #[case] error: Errno, #[case] reason: Unavailable) {
    assert_eq!(name.parse::<Errno>().ok(), Some(error));
    assert_eq!(error.to_string(), name);
    assert_eq!(error.unavailable(), reason);
}

#[test]
fn eio_maps_to_io() {
    assert_eq!("EIO".parse::<Errno>().ok(), Some(Errno::Eio));
    assert!(matches!(Errno::Eio.unavailable(), Unavailable::Io(_)));
}

#[rstest]
#[case("Stat")]
#[case("open")]
#[case("")]
fn rejects_unknown_ops(#[case] name: &str) {
    let error = name.parse::<FsOp>().unwrap_err();
    assert!(
        matches!(&error, crate::DiscoveryError::UnknownName { value, .. } if value == name),
        "{error:?}"
    );
}

#[rstest]
#[case("eacces")]
#[case("ENOENT")]
fn rejects_unknown_errors(#[case] name: &str) {
    assert!(name.parse::<Errno>().is_err());
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
        MemNode::file("x").with_fault(op, Errno::Eacces),
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
        MemNode::file("x").with_fault(FsOp::Stat, Errno::Etimedout),
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
        MemNode::link("AGENTS.md").with_fault(FsOp::Resolve, Errno::Eloop),
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
        MemNode::file("x").with_fault(FsOp::Read, Errno::Eio),
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
    // A hang guard (decision 0082).
    let outcome = tokio::time::timeout(Duration::from_secs(60), marker(&fs, "/r/.git")).await;
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
    // A hang guard far below the hour of latency the token must cut short.
    let outcome = tokio::time::timeout(Duration::from_secs(60), pending)
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
