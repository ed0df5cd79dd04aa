//! The cap-std provider's tests: cancellation and inline work, roots,
//! devices, error classes, and the directory stamps against a fresh
//! provider (`stamps`).

use super::*;
use cap_std::ambient_authority;
use rustix::io::Errno;
use std::io;
use std::sync::mpsc;
use std::time::Duration;

#[tokio::test]
async fn cancel_returns_while_the_blocking_work_is_still_stuck() {
    let cancel = CancellationToken::new();
    let (entered_tx, entered_rx) = tokio::sync::oneshot::channel();
    let (stuck_tx, stuck_rx) = mpsc::channel::<()>();
    let work = run_blocking(false, &cancel, move |_| {
        let _ = entered_tx.send(());
        // Stands in for a syscall that cannot be interrupted (released
        // when the test drops its sender).
        let _ = stuck_rx.recv_timeout(Duration::from_secs(3600));
        Ok(())
    });
    let canceller = async {
        let _ = entered_rx.await;
        cancel.cancel();
    };
    // A hang guard (decision 0082), far below the stuck work's hour.
    let (result, ()) = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(work, canceller)
    })
    .await
    .expect("cancellation waited for the blocking work");
    assert_eq!(result, Err(Cancelled));
    drop(stuck_tx);
}

/// Inline work runs on the polling thread, pooled work elsewhere
/// (R-HOOK-6: the hook's provider hands nothing to the blocking pool).
#[rstest::rstest]
#[case::inline(true)]
#[case::pooled(false)]
#[tokio::test(flavor = "current_thread")]
async fn inline_work_runs_on_the_calling_thread(#[case] inline: bool) {
    let caller = std::thread::current().id();
    let ran_on = run_blocking(inline, &CancellationToken::new(), |_| {
        Ok(std::thread::current().id())
    })
    .await
    .expect("not cancelled");
    assert_eq!(ran_on == caller, inline);
}

/// Inline or pooled, the provider sees the same files, and a token
/// cancelled before the call is honoured either way.
#[rstest::rstest]
#[case::inline(true)]
#[case::pooled(false)]
#[tokio::test(flavor = "current_thread")]
async fn inline_provider_reads_what_the_pooled_one_reads(#[case] inline: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    std::fs::write(base.join("AGENTS.md"), "be brief\n").unwrap();
    let provider = CapStdProvider::new([base.clone()], ambient_authority())
        .unwrap()
        .run_inline(inline);
    let cancel = CancellationToken::new();
    assert!(matches!(
        provider.probe(&base.join("AGENTS.md"), &cancel).await,
        Ok(Probe::Present(_))
    ));
    match provider
        .read_text(&base.join("AGENTS.md"), 1024, &cancel)
        .await
    {
        Ok(ReadOutcome::Loaded(text)) => assert_eq!(text.text, "be brief\n"),
        other => panic!("not loaded: {other:?}"),
    }
    assert_eq!(
        provider.probe(&base.join("missing.md"), &cancel).await,
        Ok(Probe::Absent)
    );
    cancel.cancel();
    assert_eq!(
        provider.probe(&base.join("AGENTS.md"), &cancel).await,
        Err(Cancelled)
    );
}

#[tokio::test]
async fn missing_roots_are_skipped_and_relative_roots_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    std::fs::write(base.join("file"), "x").unwrap();
    let provider = CapStdProvider::new(
        [
            base.join("missing"),
            base.join("file"),
            base.clone(),
            base.join("."),
        ],
        ambient_authority(),
    )
    .unwrap();
    assert_eq!(provider.roots().collect::<Vec<_>>(), [base.as_path()]);
    // A missing root is kept: nothing under it until it appears, then it
    // is trusted like the others (a DSH home created mid-session).
    let late = CapStdProvider::new([base.join("late")], ambient_authority()).unwrap();
    let cancel = CancellationToken::new();
    let file = base.join("late/AGENTS.md");
    assert_eq!(late.probe(&file, &cancel).await, Ok(Probe::Absent));
    std::fs::create_dir(base.join("late")).unwrap();
    std::fs::write(&file, "late rule").unwrap();
    assert!(matches!(
        late.probe(&file, &cancel).await,
        Ok(Probe::Present(_))
    ));
    assert!(matches!(
        late.read_text(&file, 100, &cancel).await,
        Ok(ReadOutcome::Loaded(t)) if t.text == "late rule"
    ));
    assert!(matches!(
        CapStdProvider::new([Utf8PathBuf::from("relative")], ambient_authority()),
        Err(DiscoveryError::RelativeRoot { .. })
    ));
}

#[tokio::test]
async fn nested_root_owns_its_subtree() {
    let tmp = tempfile::tempdir().unwrap();
    let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::write(base.join("home/AGENTS.md"), "g").unwrap();
    let provider =
        CapStdProvider::new([base.clone(), base.join("home")], ambient_authority()).unwrap();
    assert_eq!(provider.roots().next(), Some(base.join("home").as_path()));
    let probe = provider
        .probe(&base.join("home/AGENTS.md"), &CancellationToken::new())
        .await
        .unwrap();
    assert!(matches!(probe, Probe::Present(_)));
}

#[tokio::test]
async fn devices_are_absent_and_never_opened() {
    // `/dev` as a trusted root needs no privileges; `/dev/zero` would
    // never end if it were read, so a regression fails by timeout.
    let provider = CapStdProvider::new([Utf8PathBuf::from("/dev")], ambient_authority()).unwrap();
    let cancel = CancellationToken::new();
    let checks = async {
        for device in ["/dev/null", "/dev/zero"] {
            let path = Utf8Path::new(device);
            assert_eq!(provider.probe(path, &cancel).await, Ok(Probe::Absent));
            assert_eq!(
                provider.read_text(path, u64::MAX, &cancel).await,
                Ok(ReadOutcome::Absent)
            );
        }
    };
    tokio::time::timeout(Duration::from_secs(60), checks)
        .await
        .expect("a device was read");
}

#[test]
fn classifies_os_errors() {
    let of = |errno: Errno| classify(&io::Error::from_raw_os_error(errno.raw_os_error()));
    assert!(matches!(of(Errno::NOENT), Class::Absent));
    assert!(matches!(of(Errno::NOTDIR), Class::Absent));
    assert!(matches!(
        of(Errno::LOOP),
        Class::Unavailable(Unavailable::Loop)
    ));
    assert!(matches!(
        of(Errno::ACCESS),
        Class::Unavailable(Unavailable::PermissionDenied)
    ));
    assert!(matches!(
        of(Errno::TIMEDOUT),
        Class::Unavailable(Unavailable::TimedOut)
    ));
    assert!(matches!(
        of(Errno::IO),
        Class::Unavailable(Unavailable::Io(_))
    ));
    // cap-std's sandbox refusal carries no OS code.
    let escape = io::Error::new(io::ErrorKind::PermissionDenied, "a path led outside");
    assert!(matches!(classify(&escape), Class::Escape));
}

/// Directory stamps: the cached path must answer exactly what a fresh,
/// uncached provider answers, after every kind of change. Timestamps
/// tick coarsely, so two changes in one tick could share a stamp: instead
/// of waiting past a tick, every entry a change touched gets an explicit,
/// never-used modification time (`Fixture::change`), as a later tick
/// would give it. The margin is zero so the stamps of this just-built
/// tree are trusted at all.
mod stamps {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};
    use std::os::unix::fs::symlink;
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    use std::time::{SystemTime, UNIX_EPOCH};

    const NAMES: [&str; 4] = [
        "AGENTS.md",
        "CLAUDE.md",
        "AGENTS.local.md",
        "CLAUDE.local.md",
    ];
    /// What an entry under the root is, as far as any stamp or version
    /// could tell, plus what a same-tick change would leave the times of
    /// unchanged: its listing, bytes, mode and link target.
    #[derive(Debug, PartialEq, Eq)]
    struct Seen {
        link: Option<std::path::PathBuf>,
        ino: u64,
        mode: u32,
        size: u64,
        times: (i64, i64, i64, i64),
        listing: Vec<std::ffi::OsString>,
        bytes: Vec<u8>,
    }

    /// Every path under `root` (links to directories followed once, so a
    /// directory reached through a link is seen at that path too).
    fn seen(root: &Utf8Path) -> BTreeMap<std::path::PathBuf, Seen> {
        fn walk(
            path: &std::path::Path,
            out: &mut BTreeMap<std::path::PathBuf, Seen>,
            dirs: &mut BTreeSet<(u64, u64)>,
        ) {
            let link = std::fs::read_link(path).ok();
            // Through a link: the target's (a dangling or looping link
            // is seen as the link alone).
            let Ok(meta) = std::fs::metadata(path) else {
                if let Some(to) = link {
                    out.insert(
                        path.to_owned(),
                        Seen {
                            link: Some(to),
                            ino: 0,
                            mode: 0,
                            size: 0,
                            times: (0, 0, 0, 0),
                            listing: Vec::new(),
                            bytes: Vec::new(),
                        },
                    );
                }
                return;
            };
            let mut listing: Vec<_> = std::fs::read_dir(path)
                .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default();
            listing.sort();
            let bytes = if meta.is_file() {
                std::fs::read(path).unwrap_or_default()
            } else {
                Vec::new()
            };
            out.insert(
                path.to_owned(),
                Seen {
                    link,
                    ino: meta.ino(),
                    mode: meta.mode(),
                    size: meta.size(),
                    times: (
                        meta.mtime(),
                        meta.mtime_nsec(),
                        meta.ctime(),
                        meta.ctime_nsec(),
                    ),
                    listing: listing.clone(),
                    bytes,
                },
            );
            if meta.is_dir() && dirs.insert((meta.dev(), meta.ino())) {
                for name in listing {
                    walk(&path.join(name), out, dirs);
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(root.as_std_path(), &mut out, &mut BTreeSet::new());
        out
    }

    /// Gives `path` (through a link: its target) the modification time
    /// `at`; a directory without permissions is opened for it briefly.
    fn restamp(path: &std::path::Path, at: SystemTime) {
        let times = std::fs::FileTimes::new().set_modified(at);
        if let Ok(f) = std::fs::File::open(path) {
            f.set_times(times).unwrap();
            return;
        }
        let Ok(meta) = std::fs::metadata(path) else {
            return; // dangling: nothing behind the link to stamp
        };
        let mode = meta.permissions().mode();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o500)).unwrap();
        let f = std::fs::File::open(path).unwrap();
        f.set_times(times).unwrap();
        drop(f);
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    struct Fixture {
        _tmp: tempfile::TempDir,
        root: Utf8PathBuf,
        cached: CapStdProvider,
        /// `Some`: every probe is a new provider (a new process) that
        /// only has the memory the previous one encoded (decision 0037).
        memory: Option<std::cell::RefCell<DirMemory>>,
        /// Lookups answered without a syscall, over all providers.
        skipped: std::cell::Cell<u64>,
        /// Explicit modification times handed out so far (each once).
        stamped: std::cell::Cell<u64>,
    }

    /// How a fixture's probes carry what they learned to the next.
    #[derive(Debug, Clone, Copy)]
    enum Carry {
        /// One provider, its handle cache (`dircache`).
        Handles,
        /// A new provider per probe, with the encoded `DirMemory`.
        Memory,
    }

    impl Fixture {
        fn carrying(carry: Carry) -> Self {
            let mut fx = Self::new();
            if matches!(carry, Carry::Memory) {
                fx.memory = Some(std::cell::RefCell::new(DirMemory::new()));
            }
            fx
        }

        /// A provider as a new process builds it: margin zero (the tree
        /// is seconds old), the memory decoded from its encoding.
        fn process(&self, memory: DirMemory) -> CapStdProvider {
            let mut p = CapStdProvider::new([self.root.clone()], ambient_authority()).unwrap();
            Arc::get_mut(&mut p.inner).unwrap().margin = Duration::ZERO;
            p.remembering(memory)
        }

        fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
            std::fs::create_dir_all(root.join("a/b")).unwrap();
            std::fs::write(root.join("a/b/AGENTS.md"), "rules").unwrap();
            let mut cached = CapStdProvider::new([root.clone()], ambient_authority()).unwrap();
            Arc::get_mut(&mut cached.inner).unwrap().margin = Duration::ZERO;
            Self {
                _tmp: tmp,
                root,
                cached,
                memory: None,
                skipped: std::cell::Cell::new(0),
                stamped: std::cell::Cell::new(0),
            }
        }

        fn dirs(&self) -> Vec<Utf8PathBuf> {
            ["a", "a/b", "a/b/c", "a/b/c/d"]
                .iter()
                .map(|d| self.root.join(d))
                .collect()
        }

        /// Probes through the cache and checks the answer against a
        /// provider that has never seen the tree.
        fn probe(&self) -> Vec<Vec<Probe>> {
            let names: Vec<String> = NAMES.map(str::to_owned).to_vec();
            let cancel = CancellationToken::new();
            let got = match &self.memory {
                None => self
                    .cached
                    .inner
                    .probe_dirs(&self.dirs(), &names, &cancel)
                    .unwrap(),
                Some(memory) => {
                    let carried = DirMemory::decode(&memory.borrow().encode());
                    let provider = self.process(carried.clone());
                    let got = provider
                        .inner
                        .probe_dirs(&self.dirs(), &names, &cancel)
                        .unwrap();
                    let skipped = provider.inner.dirs.lock().unwrap().skipped;
                    self.skipped.set(self.skipped.get() + skipped);
                    *memory.borrow_mut() = carried;
                    got
                }
            };
            let fresh = CapStdProvider::new([self.root.clone()], ambient_authority()).unwrap();
            let want = fresh
                .inner
                .probe_dirs(&self.dirs(), &names, &cancel)
                .unwrap();
            // Missing directories included: what memory and kept handles
            // say is missing, a fresh lookup says too, and the disk agrees
            // (a directory it cannot see, out of the roots or behind a
            // permission, is not "missing": it does not know).
            assert_eq!(got, want, "cached probes differ from a fresh provider's");
            for (dir, missing) in self.dirs().iter().zip(&got.missing) {
                let gone = match std::fs::metadata(dir) {
                    Ok(meta) => !meta.is_dir(),
                    Err(e) => matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ),
                };
                assert!(!missing || gone, "{dir} is there, not missing");
            }
            got.probes
        }

        fn skipped(&self) -> u64 {
            self.cached.inner.dirs.lock().unwrap().skipped + self.skipped.get()
        }

        /// Runs `f` on the tree, then gives every entry it changed (and
        /// every directory it changed the listing of) a modification time
        /// no entry had before: what the kernel gives them a tick later,
        /// without waiting for the tick. Unchanged entries keep their
        /// times, so their stamps must still hold.
        fn change(&self, f: impl FnOnce(&Utf8Path)) {
            let before = seen(&self.root);
            f(&self.root);
            for (path, now) in seen(&self.root) {
                if before.get(&path) != Some(&now) {
                    let n = self.stamped.get() + 1;
                    self.stamped.set(n);
                    // Far in the past and one second apart: distinct from
                    // every kernel-given time and from each other.
                    let at = UNIX_EPOCH + Duration::from_secs(1_000_000_000 + n);
                    restamp(&path, at);
                    // The helper's own check: what changed now carries a
                    // time no stamp taken before can hold.
                    if let Ok(meta) = std::fs::metadata(&path) {
                        assert_eq!(meta.modified().unwrap(), at, "{}", path.display());
                    }
                }
            }
        }
    }

    fn present(p: &Probe) -> bool {
        matches!(p, Probe::Present(_))
    }

    #[test]
    fn unchanged_directories_answer_absent_names_without_a_lookup() {
        let fx = Fixture::new();
        let first = fx.probe();
        assert!(present(&first[1][0]));
        assert_eq!(fx.skipped(), 0);
        fx.probe();
        // a: 4 absent names, a/b: 3; a/b/c does not exist.
        assert_eq!(fx.skipped(), 7);
        assert!(fx.cached.inner.dirs.lock().unwrap().len() >= 2);
    }

    /// A new process with the memory of the last one answers an
    /// unchanged tree's absent names, and a directory that is missing,
    /// without a lookup (decision 0037).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_new_process_with_the_memory_skips_what_it_proves() {
        let fx = Fixture::carrying(Carry::Memory);
        fx.probe();
        assert_eq!(fx.skipped(), 0, "the first process has no memory");
        fx.probe();
        // a: 4 absent names, a/b: 3 (a/b/c is missing: no lookup at all).
        assert_eq!(fx.skipped(), 7);
        let memory = fx.memory.as_ref().unwrap().borrow().clone();
        assert_eq!(memory.len(), 4, "the root, a, a/b, and a/b/c as missing");
        // Both say so: a/b/c remembered missing, a/b/c/d below it.
        let names: Vec<String> = NAMES.map(str::to_owned).to_vec();
        let carried = DirMemory::decode(&memory.encode());
        let got = fx
            .process(carried)
            .inner
            .probe_dirs(&fx.dirs(), &names, &CancellationToken::new())
            .unwrap();
        assert_eq!(got.missing, [false, false, true, true]);
        assert!(!memory.changed(), "nothing new to write back");
    }

    /// A memory whose facts no longer hold is never used: a stale
    /// encoding (here: the tree rebuilt under the same paths) gives
    /// exactly a fresh provider's answers.
    #[test]
    fn a_stale_memory_is_never_trusted() {
        let fx = Fixture::carrying(Carry::Memory);
        fx.probe();
        let stale = fx.memory.as_ref().unwrap().borrow().encode();
        fx.change(|r| {
            std::fs::rename(r.join("a"), r.join("old-a")).unwrap();
            std::fs::create_dir_all(r.join("a/b/c")).unwrap();
            std::fs::write(r.join("a/b/CLAUDE.md"), "new").unwrap();
            std::fs::write(r.join("a/b/c/AGENTS.md"), "deep").unwrap();
        });
        *fx.memory.as_ref().unwrap().borrow_mut() = DirMemory::decode(&stale);
        let p = fx.probe();
        assert!(present(&p[1][1]) && present(&p[2][0]));
        assert!(!present(&p[1][0]));
    }

    #[rstest::rstest]
    #[case::handles(Carry::Handles)]
    #[case::memory(Carry::Memory)]
    fn every_kind_of_change_is_seen(#[case] carry: Carry) {
        let fx = Fixture::carrying(carry);
        fx.probe();
        fx.probe();
        // A file created in a known directory.
        fx.change(|r| std::fs::write(r.join("a/b/CLAUDE.local.md"), "local").unwrap());
        assert!(present(&fx.probe()[1][3]));
        // Edited in place: no entry changes, the version must.
        let before = fx.probe()[1][0].clone();
        fx.change(|r| std::fs::write(r.join("a/b/AGENTS.md"), "rules, longer").unwrap());
        assert_ne!(fx.probe()[1][0], before);
        // Removed.
        fx.change(|r| std::fs::remove_file(r.join("a/b/CLAUDE.local.md")).unwrap());
        assert_eq!(fx.probe()[1][3], Probe::Absent);
        // The directory replaced under its name (its parent changes).
        fx.change(|r| {
            std::fs::rename(r.join("a/b"), r.join("a/old-b")).unwrap();
            std::fs::create_dir(r.join("a/b")).unwrap();
            std::fs::write(r.join("a/b/CLAUDE.md"), "other").unwrap();
        });
        let p = fx.probe();
        assert_eq!(p[1][0], Probe::Absent);
        assert!(present(&p[1][1]));
        // An ancestor replaced: only the root's stamp moves.
        fx.change(|r| {
            std::fs::rename(r.join("a"), r.join("old-a")).unwrap();
            std::fs::create_dir_all(r.join("a/b/c")).unwrap();
            std::fs::write(r.join("a/b/c/AGENTS.local.md"), "deep").unwrap();
        });
        let p = fx.probe();
        assert!(!present(&p[1][1]));
        assert!(present(&p[2][2]));
        // A known directory moved out of the root and linked back: the
        // same directory, now reached through a symlink that leaves it.
        let outside = tempfile::tempdir().unwrap();
        fx.change(|r| {
            std::fs::rename(r.join("a/b"), outside.path().join("b")).unwrap();
            symlink(outside.path().join("b"), r.join("a/b")).unwrap();
        });
        fx.probe();
        fx.change(|r| {
            std::fs::remove_file(r.join("a/b")).unwrap();
            std::fs::rename(outside.path().join("b"), r.join("a/b")).unwrap();
        });
        fx.probe();
        // A dangling link whose target appears in another directory.
        fx.change(|r| symlink("../../t.md", r.join("a/b/AGENTS.md")).unwrap());
        fx.probe();
        fx.change(|r| std::fs::write(r.join("t.md"), "target").unwrap());
        assert!(present(&fx.probe()[1][0]));
        // Permissions of a known directory (its ctime moves).
        fx.change(|r| {
            std::fs::set_permissions(
                r.join("a/b/c"),
                std::os::unix::fs::PermissionsExt::from_mode(0o000),
            )
            .unwrap()
        });
        fx.probe();
        fx.change(|r| {
            std::fs::set_permissions(
                r.join("a/b/c"),
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .unwrap()
        });
        assert!(present(&fx.probe()[2][2]));
    }

    /// From the third batch on, a present candidate of an unchanged
    /// directory is answered through a handle on the file, and an edit in
    /// place (no entry changes, so the stamp holds) is still seen.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_kept_file_handle_answers_and_sees_edits_in_place() {
        let fx = Fixture::new();
        let hits = || fx.cached.inner.dirs.lock().unwrap().held_hits;
        let first = fx.probe();
        fx.probe();
        assert_eq!(hits(), 0, "the handle is opened on the second batch");
        assert_eq!(fx.probe(), first);
        assert_eq!(hits(), 1, "a/b/AGENTS.md through its handle");
        fx.change(|r| std::fs::write(r.join("a/b/AGENTS.md"), "rules, rewritten").unwrap());
        let edited = fx.probe();
        assert_eq!(hits(), 2);
        assert_ne!(edited[1][0], first[1][0], "the edit in place is seen");
        // Replaced by a rename: the directory changes, the old handle goes.
        fx.change(|r| {
            std::fs::write(r.join("a/b/new.md"), "renamed over").unwrap();
            std::fs::rename(r.join("a/b/new.md"), r.join("a/b/AGENTS.md")).unwrap();
        });
        let renamed = fx.probe();
        assert_eq!(hits(), 2, "a changed directory is probed by name");
        assert_ne!(renamed[1][0], edited[1][0]);
    }

    /// A candidate that is a link (`CLAUDE.md -> AGENTS.md`, the usual
    /// mirror) must be followed, so no handle is kept on it: it is tried
    /// once while the directory's stamp holds, not on every batch, and
    /// the answers stay a fresh provider's.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_linked_candidate_is_tried_for_a_handle_once_per_stamp() {
        let fx = Fixture::new();
        fx.change(|r| symlink("AGENTS.md", r.join("a/b/CLAUDE.md")).unwrap());
        let tries = || fx.cached.inner.dirs.lock().unwrap().hold_tries;
        fx.probe();
        assert_eq!(tries(), 0, "no handle on a first visit");
        let second = fx.probe();
        assert!(present(&second[1][0]) && present(&second[1][1]));
        // a/b: AGENTS.md (kept) and CLAUDE.md (a link, refused).
        assert_eq!(tries(), 2);
        for _ in 0..3 {
            assert_eq!(fx.probe(), second);
        }
        assert_eq!(tries(), 2, "the link is not tried again");
        // A change of the directory lets it be tried again.
        fx.change(|r| std::fs::write(r.join("a/b/AGENTS.local.md"), "local").unwrap());
        fx.probe();
        fx.probe();
        fx.probe();
        assert_eq!(
            tries(),
            5,
            "AGENTS.md, CLAUDE.md and the new AGENTS.local.md, once each after the change"
        );
    }

    #[test]
    fn a_directory_that_is_gone_gives_its_handle_back() {
        let fx = Fixture::new();
        fx.change(|r| std::fs::create_dir(r.join("a/b/c")).unwrap());
        fx.probe();
        let held = || fx.cached.inner.dirs.lock().unwrap().len();
        assert_eq!(held(), 3, "a, a/b and a/b/c");
        fx.change(|r| std::fs::remove_dir(r.join("a/b/c")).unwrap());
        fx.probe();
        assert_eq!(held(), 2);
        // The freed slot serves the next directory.
        fx.change(|r| std::fs::create_dir(r.join("a/b/c")).unwrap());
        fx.probe();
        assert_eq!(held(), 3);
    }

    /// Listings and path probes through the handle cache (issue 46 item
    /// 2) answer what a provider that never saw the tree answers, after
    /// each change; an unchanged directory's listing is the kept one.
    #[test]
    fn kept_listings_and_path_probes_match_a_fresh_provider() {
        let fx = Fixture::new();
        let rules = fx.root.join("a/b/rules");
        std::fs::create_dir_all(&rules).unwrap();
        std::fs::write(rules.join("r1.md"), "one").unwrap();
        let dirs = vec![fx.root.join("a/rules"), rules.clone(), fx.root.join("a/b")];
        let paths = vec![
            rules.join("r1.md"),
            rules.join("r2.md"),
            fx.root.join("a/b/AGENTS.md"),
            fx.root.join("a/nothing/x.md"),
        ];
        let cancel = CancellationToken::new();
        let check = |fx: &Fixture| {
            let fresh = CapStdProvider::new([fx.root.clone()], ambient_authority()).unwrap();
            let listed = fx.cached.inner.list_dirs(&dirs, &cancel).unwrap();
            let want: Vec<DirListing> = dirs
                .iter()
                .map(|d| fresh.inner.list_dir(d, &cancel).unwrap())
                .collect();
            assert_eq!(listed, want, "kept listings differ from a fresh provider's");
            let probed = fx.cached.inner.probe_paths(&paths, &cancel).unwrap();
            let want: Vec<Probe> = paths
                .iter()
                .map(|p| fresh.inner.probe(p, &cancel).unwrap())
                .collect();
            assert_eq!(probed, want, "path probes differ from a fresh provider's");
            listed
        };
        let kept = || fx.cached.inner.dirs.lock().unwrap().listings_kept;
        let first = check(&fx);
        assert!(matches!(&first[0], DirListing::Absent));
        assert_eq!(kept(), 0);
        check(&fx);
        // `a/b/rules` and `a/b` unchanged: both answered from what the
        // first pass read (`a/rules` has no directory to keep one for).
        assert_eq!(kept(), 2);
        fx.change(|root| std::fs::write(root.join("a/b/rules/r2.md"), "two").unwrap());
        let after = check(&fx);
        let DirListing::Entries { entries, .. } = &after[1] else {
            panic!("a/b/rules is listed: {:?}", after[1]);
        };
        assert_eq!(entries.len(), 2, "the new rule file is listed");
        // Only `a/b` was kept this time: the rules directory changed.
        assert_eq!(kept(), 3);
        fx.change(|root| std::fs::remove_file(root.join("a/b/rules/r1.md")).unwrap());
        check(&fx);
        fx.change(|root| std::fs::write(root.join("a/b/rules/r2.md"), "longer now").unwrap());
        check(&fx);
    }

    #[test]
    fn a_directory_changed_within_the_margin_is_never_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        // This tree was written just now, and the margin is a day: no run
        // of the test, however slow the machine, ages it past that (the
        // default margin of 2 s could pass between the write and the
        // third probe on a loaded machine, decision 0082).
        let mut provider = CapStdProvider::new([root.clone()], ambient_authority()).unwrap();
        Arc::get_mut(&mut provider.inner).unwrap().margin = Duration::from_secs(24 * 3600);
        let names: Vec<String> = NAMES.map(str::to_owned).to_vec();
        let cancel = CancellationToken::new();
        for _ in 0..3 {
            let p = provider
                .inner
                .probe_dirs(&[root.join("a")], &names, &cancel)
                .unwrap();
            assert_eq!(p.probes, vec![vec![Probe::Absent; 4]]);
            assert_eq!(p.missing, [false]);
        }
        assert_eq!(provider.inner.dirs.lock().unwrap().skipped, 0);
    }

    /// A seeded walk of random changes, checked against a fresh provider
    /// after each: what a table of cases cannot enumerate.
    #[rstest::rstest]
    #[case::handles(Carry::Handles)]
    #[case::memory(Carry::Memory)]
    fn random_changes_match_a_fresh_provider(#[case] carry: Carry) {
        let fx = Fixture::carrying(carry);
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let dirs = ["a", "a/b", "a/b/c"];
        for step in 0..40 {
            let dir = fx.root.join(dirs[next(3) as usize]);
            let name = NAMES[next(4) as usize];
            let path = dir.join(name);
            fx.change(|_| {
                let op = next(6);
                if op == 5 {
                    // Rewritten in place, when it is a file: no entry
                    // changes, so only a kept file handle can see it.
                    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                        let _ = std::fs::write(&path, format!("edited in place at step {step}"));
                    }
                    return;
                }
                let _ = std::fs::remove_file(&path);
                match op {
                    0 => {}
                    1 => {
                        let _ = std::fs::create_dir_all(&dir);
                        let _ = std::fs::write(&path, format!("v{step}"));
                    }
                    2 => {
                        let _ = std::fs::create_dir_all(&dir);
                        let _ = symlink(NAMES[next(4) as usize], &path);
                    }
                    3 => {
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                    _ => {
                        let _ = std::fs::rename(
                            fx.root.join("a/b"),
                            fx.root.join(format!("gone{step}")),
                        );
                        let _ = std::fs::create_dir_all(fx.root.join("a/b"));
                    }
                }
            });
            fx.probe();
            fx.probe();
        }
        assert!(fx.skipped() > 0, "the walk never took the fast path");
    }
}

/// A read takes the short path (no `O_PATH` open) only for a regular file
/// within the cap reached through no link; every other path goes the
/// general way, which answers as before (R-DISC-4, R-DISC-7).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn only_plain_regular_files_take_the_short_read_path() {
    let (_tmp, base) = tree_with_a();
    std::fs::write(base.join("a/AGENTS.md"), "plain\n").unwrap();
    std::fs::write(base.join("big.md"), "x".repeat(2048)).unwrap();
    std::os::unix::fs::symlink("a/AGENTS.md", base.join("link.md")).unwrap();
    std::os::unix::fs::symlink("a", base.join("via")).unwrap();
    mkfifo(&base.join("fifo"));
    let provider = CapStdProvider::new([base.clone()], ambient_authority()).unwrap();
    let inner = &provider.inner;
    assert!(inner.open_plain(&base.join("a/AGENTS.md"), 1024).is_some());
    assert!(
        inner
            .open_plain(&base.join("a/./AGENTS.md"), 1024)
            .is_some()
    );
    for refused in [
        "link.md",
        "via/AGENTS.md",
        "fifo",
        "big.md",
        "a",
        "missing.md",
    ] {
        assert!(
            inner.open_plain(&base.join(refused), 1024).is_none(),
            "{refused} took the short path"
        );
    }
    assert!(inner.open_plain(&base, 1024).is_none(), "the root itself");
    assert!(
        inner
            .open_plain(Utf8Path::new("/etc/hostname"), 1024)
            .is_none()
    );
    // The general path still answers for what the short one refused.
    let cancel = CancellationToken::new();
    for linked in ["link.md", "via/AGENTS.md"] {
        match provider.read_text(&base.join(linked), 1024, &cancel).await {
            Ok(ReadOutcome::Loaded(text)) => assert_eq!(text.text, "plain\n", "{linked}"),
            other => panic!("{linked}: {other:?}"),
        }
    }
    assert_eq!(
        provider.read_text(&base.join("fifo"), 1024, &cancel).await,
        Ok(ReadOutcome::Absent)
    );
    assert!(matches!(
        provider
            .read_text(&base.join("big.md"), 1024, &cancel)
            .await,
        Ok(ReadOutcome::Unavailable(Unavailable::TooLarge {
            limit: 1024
        }))
    ));
}

/// A read right after a probe opens without asking what the path is (the
/// probe's note is taken), and a path replaced in between (by another
/// file, a FIFO) still reads as a fresh provider reads it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_read_after_a_probe_reads_what_is_there_now() {
    let (_tmp, base) = tree_with_a();
    std::fs::write(base.join("a/AGENTS.md"), "probed\n").unwrap();
    std::fs::write(base.join("a/CLAUDE.md"), "other\n").unwrap();
    let provider = CapStdProvider::new([base.clone()], ambient_authority()).unwrap();
    let cancel = CancellationToken::new();
    let names = vec!["AGENTS.md".to_owned(), "CLAUDE.md".to_owned()];
    let probe = |provider: &CapStdProvider| {
        provider
            .inner
            .probe_dirs(&[base.join("a")], &names, &cancel)
            .unwrap()
    };
    let read = |path: Utf8PathBuf| {
        let provider = provider.clone();
        let cancel = cancel.clone();
        async move { provider.read_text(&path, 1024, &cancel).await.unwrap() }
    };
    // Unchanged: the note is used (and taken).
    probe(&provider);
    assert_eq!(provider.inner.probed.lock().unwrap().len(), 2);
    match read(base.join("a/AGENTS.md")).await {
        ReadOutcome::Loaded(text) => assert_eq!(text.text, "probed\n"),
        other => panic!("{other:?}"),
    }
    assert_eq!(provider.inner.probed.lock().unwrap().len(), 1, "taken");
    // Replaced by another file after the probe: the new file's text and
    // identity, as a fresh provider reads it.
    probe(&provider);
    std::fs::rename(base.join("a/CLAUDE.md"), base.join("a/AGENTS.md")).unwrap();
    let fresh = CapStdProvider::new([base.clone()], ambient_authority()).unwrap();
    let want = fresh
        .read_text(&base.join("a/AGENTS.md"), 1024, &cancel)
        .await
        .unwrap();
    let got = read(base.join("a/AGENTS.md")).await;
    match (&got, &want) {
        (ReadOutcome::Loaded(got), ReadOutcome::Loaded(want)) => {
            assert_eq!(got.text, "other\n");
            assert_eq!(got.identity, want.identity);
        }
        other => panic!("{other:?}"),
    }
    // Replaced by a FIFO after the probe: absent, and no read blocks.
    probe(&provider);
    std::fs::remove_file(base.join("a/AGENTS.md")).unwrap();
    mkfifo(&base.join("a/AGENTS.md"));
    // A hang guard (decision 0082): a FIFO opened would block for ever.
    let fifo = tokio::time::timeout(Duration::from_secs(60), read(base.join("a/AGENTS.md")))
        .await
        .expect("a FIFO blocked the read");
    assert_eq!(fifo, ReadOutcome::Absent);
}

/// A temporary root holding an empty directory `a` (kept alive by the
/// returned guard).
#[cfg(target_os = "linux")]
fn tree_with_a() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    std::fs::create_dir_all(base.join("a")).unwrap();
    (tmp, base)
}

/// A FIFO at `path`.
#[cfg(target_os = "linux")]
fn mkfifo(path: &Utf8Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path.as_std_path(),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
}

/// A trusted root at a candidate's path (a DSH home at `repo/AGENTS.md`,
/// here a link to a file, so the root does not open): the batched probes
/// answer what the probe of that one path answers, the deeper root's
/// "nothing under it", not the handle on `repo`'s view of the name. Found
/// by the differential test of the two providers (decision 0042).
#[rstest::rstest]
#[case::link_to_a_file(true)]
#[case::plain_file(false)]
#[tokio::test]
async fn a_root_at_a_candidate_path_is_probed_as_that_root(#[case] linked: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    std::fs::write(base.join("CLAUDE.md"), "rule").unwrap();
    if linked {
        std::os::unix::fs::symlink("CLAUDE.md", base.join("AGENTS.md")).unwrap();
    } else {
        std::fs::write(base.join("AGENTS.md"), "rule").unwrap();
    }
    let provider =
        CapStdProvider::new([base.clone(), base.join("AGENTS.md")], ambient_authority()).unwrap();
    let cancel = CancellationToken::new();
    let names = vec!["AGENTS.md".to_owned(), "CLAUDE.md".to_owned()];
    let one = provider
        .probe(&base.join("AGENTS.md"), &cancel)
        .await
        .unwrap();
    assert_eq!(one, Probe::Absent);
    let many = provider.probe_many(&base, &names, &cancel).await.unwrap();
    // Twice: the second batch may answer from kept handles and stamps.
    for _ in 0..2 {
        let dirs = provider
            .probe_dirs(std::slice::from_ref(&base), &names, &cancel)
            .await
            .unwrap();
        assert_eq!(dirs.as_slice(), std::slice::from_ref(&many));
    }
    assert_eq!(many[0], one);
    assert!(matches!(many[1], Probe::Present(_)));
}
