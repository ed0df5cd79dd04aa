//! Deterministic operation counts (issue 7, item 6): what the adapter asks of
//! the filesystem, counted by the in-memory provider, never timed. Bounds are
//! derived by hand from the tree each test builds: `C` candidate names per
//! directory (4 by default: two base, two local, R-CFG-4), one probe of the
//! user-global file (R-HOME-4), one marker check per directory walked up to
//! the root (R-DISC-1, only before the root is frozen, R-DISC-2).

mod common;
use common::config_of;
use std::sync::Arc;

use camino::Utf8PathBuf;
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::{
    CancellationToken,
    memory::{MemNode, MemoryProvider},
};
use dsh_instructions_runtime::{
    BatchItem, Decision, Host, Instance, ToolExecution, WorkspaceMessage, host_support::MemoryHost,
    report::CandidateFate,
};
use dsh_instructions_state::Config;
use rstest::rstest;

/// Candidate names per directory with the default lists.
const C: u64 = 4;

fn home() -> DshHome {
    DshHome {
        path: "/home/u/.dsh".into(),
        label: HomeLabel::Default,
    }
}

/// `/repo/d1/d2/…/d{depth}`, each level (root included) holding an
/// `AGENTS.md` of `size` bytes whose content differs per level.
fn chain(fs: &MemoryProvider, depth: usize, size: usize) -> Vec<Utf8PathBuf> {
    fs.insert("/repo/.git".into(), MemNode::dir());
    let mut dirs = vec![Utf8PathBuf::from("/repo")];
    for level in 1..=depth {
        let next = dirs[level - 1].join(format!("d{level}"));
        dirs.push(next);
    }
    for (level, dir) in dirs.iter().enumerate() {
        fs.insert(dir, MemNode::dir());
        let text = format!("level {level} ").repeat(size / 8 + 1);
        fs.insert(
            &dir.join("AGENTS.md"),
            MemNode::file(&text.as_bytes()[..size]),
        );
    }
    dirs
}

struct Session {
    host: Arc<MemoryHost>,
    instance: Instance,
    step: u32,
}

impl Session {
    async fn mount(fs: &MemoryProvider, cwd: &str, config: Config) -> Self {
        let host = Arc::new(MemoryHost::new(cwd.into()));
        let instance = common::open(fs.clone(), cwd, Some(config), &home())
            .await
            .instance(host.clone() as Arc<dyn Host>)
            .expect("mounted inside a runtime");
        Self {
            host,
            instance,
            step: 0,
        }
    }

    async fn pre_step(&mut self, items: Vec<BatchItem<String>>) -> Option<WorkspaceMessage> {
        self.step += 1;
        let out = self
            .instance
            .pre_step(self.step, Decision::Enter(items), &CancellationToken::new())
            .await
            .expect("not cancelled");
        if let Some(batch) = &out.batch {
            self.host.append_batch(batch);
        }
        out.entered
    }

    async fn prompt(&mut self) -> Option<WorkspaceMessage> {
        self.pre_step(vec![BatchItem {
            message: "go".into(),
            claimed: true,
        }])
        .await
    }

    async fn touch(&mut self, path: &str) -> Option<WorkspaceMessage> {
        self.instance
            .tool_result(&read_of(path, &format!("t{}", self.step)));
        self.pre_step(Vec::new()).await
    }
}

/// A successful `read` of `path`.
fn read_of(path: &str, token: &str) -> ToolExecution {
    ToolExecution {
        name: "read".into(),
        arguments: serde_json::json!({ "file_path": path }),
        token: token.into(),
        parent: None,
        is_error: false,
        cancelled: false,
    }
}

#[rstest]
#[case::shallow(1)]
#[case::deep(8)]
#[case::deeper(31)]
#[tokio::test]
async fn a_first_baseline_probes_each_candidate_once_per_directory(#[case] depth: usize) {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, depth, 100);
    let cwd = dirs[depth].to_string();
    let mut s = Session::mount(&fs, &cwd, Config::with_max_bytes(1 << 20)).await;
    assert!(s.prompt().await.is_some(), "the baseline enters");
    let n = (depth + 1) as u64;
    let counts = fs.counters();
    // Markers from the cwd up to the root, the user-global file, C per dir.
    assert_eq!(counts.probes, n + 1 + C * n, "probes for {n} directories");
    // Every winner read exactly once: n files of 100 bytes (no user file).
    assert_eq!(counts.reads, n);
    assert_eq!(counts.bytes_read, 100 * n);
}

#[tokio::test]
async fn an_unchanged_revalidation_probes_but_reads_nothing() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    chain(&fs, 0, 64);
    fs.insert("/home/u/.dsh/AGENTS.md".into(), MemNode::file("global"));
    for pkg in ["a", "b", "c"] {
        let dir = Utf8PathBuf::from(format!("/repo/pkg/{pkg}"));
        fs.insert(&dir.join("src"), MemNode::dir());
        fs.insert(
            &dir.join("AGENTS.md"),
            MemNode::file(format!("rules of {pkg}")),
        );
    }
    let mut s = Session::mount(&fs, "/repo", Config::with_max_bytes(65_536)).await;
    s.prompt().await.expect("baseline");
    for pkg in ["a", "b", "c"] {
        let entered = s.touch(&format!("/repo/pkg/{pkg}/src/lib.rs")).await;
        assert!(entered.is_some(), "touching {pkg} sets its file");
    }
    fs.reset_counters();
    assert_eq!(s.pre_step(Vec::new()).await, None, "nothing changed");
    let counts = fs.counters();
    assert_eq!(counts.reads, 0, "the version cache vouches for every file");
    assert_eq!(counts.bytes_read, 0);
    // Known: the root (chain) and the three package directories, plus the
    // user-global file; nothing else needs a probe.
    assert!(counts.probes > 0, "revalidation still probes (R-RT-10)");
    assert!(counts.probes <= 1 + C * 4, "{} probes", counts.probes);
}

#[tokio::test]
async fn an_edit_costs_one_read_of_the_edited_file_only() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 5, 200);
    let cwd = dirs[5].to_string();
    let mut s = Session::mount(&fs, &cwd, Config::with_max_bytes(1 << 20)).await;
    s.prompt().await.expect("baseline");
    fs.insert(
        &dirs[2].join("AGENTS.md"),
        MemNode::file("edited, 16 bytes"),
    );
    fs.reset_counters();
    let m = s.pre_step(Vec::new()).await.expect("a replace enters");
    assert_eq!(m.source.changes.len(), 1);
    let counts = fs.counters();
    assert_eq!(counts.reads, 1);
    assert_eq!(counts.bytes_read, 16);
}

#[tokio::test]
async fn a_touch_probes_each_candidate_of_each_reconciled_directory_once() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 2, 50);
    fs.insert("/repo/d1/d2/x/y".into(), MemNode::dir());
    fs.insert(
        "/repo/d1/d2/x/y/AGENTS.md".into(),
        MemNode::file("deep rule"),
    );
    let mut s = Session::mount(&fs, dirs[2].as_str(), Config::with_max_bytes(65_536)).await;
    s.prompt().await.expect("baseline");
    fs.reset_counters();
    let m = s
        .touch("/repo/d1/d2/x/y/main.rs")
        .await
        .expect("a set enters");
    assert_eq!(m.source.changes.len(), 1);
    let counts = fs.counters();
    // User-global file, the three chain directories, x and x/y.
    assert_eq!(counts.probes, 1 + C * 5, "probes");
    assert_eq!(counts.reads, 1, "only the new file is read");
    assert_eq!(counts.bytes_read, 9);
}

/// A touch that finds nothing new, then the step that carries the tool
/// result: as a later step (`pre_step`) it reconciles every known scope
/// again; right after the tool (`pre_step_after_tools`) the projection's
/// reconciliation is its own — unless the visible surface moved in between.
#[rstest]
#[case::later_step(false, false, 2)]
#[case::right_after_the_tool(true, false, 1)]
#[case::after_the_surface_moved(true, true, 2)]
#[tokio::test]
async fn a_step_right_after_a_touch_reconciles_the_known_scopes_once(
    #[case] after_tools: bool,
    #[case] moved: bool,
    #[case] passes: u64,
) {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 2, 50);
    let mut s = Session::mount(&fs, dirs[2].as_str(), Config::with_max_bytes(65_536)).await;
    s.prompt().await.expect("baseline");
    fs.reset_counters();
    s.instance.tool_result(&read_of("/repo/d1/main.rs", "t"));
    s.instance.settle().await;
    if moved {
        s.host
            .append_user(vec!["other".into()], Some(Default::default()));
    }
    let cancel = CancellationToken::new();
    let decision = Decision::<String>::Enter(Vec::new());
    let out = if after_tools {
        s.instance.pre_step_after_tools(2, decision, &cancel).await
    } else {
        s.instance.pre_step(2, decision, &cancel).await
    }
    .expect("not cancelled");
    assert_eq!(out.entered, None, "nothing changed on disk");
    // Per pass: the user-global file and the three chain directories.
    assert_eq!(fs.counters().probes, passes * (1 + C * 3), "probes");
    assert_eq!(fs.counters().reads, 0);
}

/// An edit the projection found still enters with the step right after it.
#[tokio::test]
async fn a_step_right_after_a_touch_enters_what_the_touch_found() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 2, 50);
    let mut s = Session::mount(&fs, dirs[2].as_str(), Config::with_max_bytes(65_536)).await;
    s.prompt().await.expect("baseline");
    fs.insert("/repo/d1/AGENTS.md".into(), MemNode::file("edited rule"));
    s.instance.tool_result(&read_of("/repo/d1/main.rs", "t"));
    s.instance.settle().await;
    let out = s
        .instance
        .pre_step_after_tools::<String>(2, Decision::Enter(Vec::new()), &CancellationToken::new())
        .await
        .expect("not cancelled");
    let entered = out.entered.expect("the replace enters");
    assert!(entered.joined_text().contains("edited rule"));
}

/// Bound of issue 7 item 4: max_bytes + C x max_source_bytes.
#[tokio::test]
async fn a_small_budget_baseline_reads_at_most_budget_plus_one_file_per_candidate() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 31, 4096);
    let config = config_of(serde_json::json!({"max_bytes": 8192, "max_source_bytes": 8192}));
    let mut s = Session::mount(&fs, dirs[31].as_str(), config).await;
    s.prompt().await.expect("a budgeted baseline enters");
    let bytes = fs.counters().bytes_read;
    assert!(
        bytes <= 8192 + C * 8192,
        "{bytes} bytes read for an 8 KiB budget"
    );
}

#[tokio::test]
async fn show_under_a_small_budget_reads_at_most_budget_plus_one_file_per_candidate() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 31, 4096);
    let config = config_of(serde_json::json!({"max_bytes": 8192, "max_source_bytes": 8192}));
    let seen = common::open(fs.clone(), dirs[31].as_str(), Some(config.clone()), &home())
        .await
        .inspect(&CancellationToken::new())
        .await
        .expect("not cancelled");
    assert!(seen.baseline.notice.is_some(), "the budget drops files");
    let bytes = fs.counters().bytes_read;
    assert!(
        bytes <= 8192 + C * 8192,
        "{bytes} bytes read for an 8 KiB budget"
    );
}

/// Budgeted reads are batched by probed sizes; a file that grew after its
/// probe must not change which files are read as content: the result is
/// that of reading one directory at a time (reads beyond the stop are put
/// back as unread), whatever the probes claimed.
#[tokio::test]
async fn a_stale_probe_size_changes_nothing_a_budgeted_baseline_shows() {
    let inspect_with = |stale: bool| async move {
        let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
        let dirs = chain(&fs, 4, 4096);
        // A copy whose fate shows whether `d2` was read: read, it is a
        // duplicate of `d2/AGENTS.md`; unread, both are left out unread.
        let copy = "level 2 ".repeat(4096 / 8 + 1);
        fs.insert(
            &dirs[2].join("AGENTS.local.md"),
            MemNode::file(&copy.as_bytes()[..4096]),
        );
        if stale {
            let text = "level 4 ".repeat(4096 / 8 + 1);
            fs.insert(
                &dirs[4].join("AGENTS.md"),
                MemNode::file(&text.as_bytes()[..4096]).with_stale_size(10),
            );
        }
        let config = config_of(serde_json::json!({"max_bytes": 6144, "max_source_bytes": 8192}));
        common::open(fs.clone(), dirs[4].as_str(), Some(config.clone()), &home())
            .await
            .inspect(&CancellationToken::new())
            .await
            .expect("not cancelled")
    };
    let honest = inspect_with(false).await;
    let stale = inspect_with(true).await;
    assert_eq!(stale.baseline.text, honest.baseline.text);
    assert_eq!(stale.baseline.source, honest.baseline.source);
    let fates = |i: &dsh_instructions_runtime::report::Inspection| {
        i.candidates
            .iter()
            .map(|c| (c.path.clone(), c.fate.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(fates(&stale), fates(&honest));
    // Sanity: the budget really left broader files unread in both.
    assert!(
        honest.candidates.iter().any(|c| matches!(
            c.fate,
            dsh_instructions_runtime::report::CandidateFate::OmittedByBudget { .. }
        )),
        "{honest:#?}"
    );
}

/// R-CLI-6: a shadowed sibling is read to tell whether it is a pointer only
/// when it can be one (at most 512 bytes); next to a winner that was not
/// read (left out by the budget) a larger sibling is not read at all.
#[rstest]
#[case::pointer("@AGENTS.md\n".to_owned(), 1)]
#[case::too_large_to_be_one(format!("@AGENTS.md\n{}", "x".repeat(600)), 0)]
#[tokio::test]
async fn a_shadowed_sibling_is_read_only_when_it_can_be_a_pointer(
    #[case] claude: String,
    #[case] extra_reads: u64,
) {
    let inspect_with = |claude: Option<String>| async move {
        let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
        fs.insert("/repo/.git".into(), MemNode::dir());
        fs.insert("/repo/AGENTS.md".into(), MemNode::file("r".repeat(2_000)));
        fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("p".repeat(500)));
        if let Some(text) = &claude {
            fs.insert("/repo/CLAUDE.md".into(), MemNode::file(text.as_str()));
        }
        let seen = common::open(
            fs.clone(),
            "/repo/pkg",
            Some(Config::with_max_bytes(400)),
            &home(),
        )
        .await
        .inspect(&CancellationToken::new())
        .await
        .expect("not cancelled");
        (seen, fs.counters().reads)
    };
    let (_, reads_without) = inspect_with(None).await;
    let (seen, reads_with) = inspect_with(Some(claude)).await;
    assert_eq!(reads_with, reads_without + extra_reads);
    let fate = seen
        .candidates
        .iter()
        .find(|c| c.path == "CLAUDE.md")
        .map(|c| c.fate.clone());
    let expected = if extra_reads == 1 {
        CandidateFate::PointsTo {
            winner: "AGENTS.md".into(),
        }
    } else {
        CandidateFate::ShadowedBy {
            winner: "AGENTS.md".into(),
            differs: None,
        }
    };
    assert_eq!(fate, Some(expected));
}

/// The defaults with `@path` imports on (R-CFG-10).
fn with_imports(max_bytes: i64) -> Config {
    config_of(serde_json::json!({"max_bytes": max_bytes, "imports": true}))
}

#[rstest]
#[case::imports_off(false)]
#[case::imports_on(true)]
#[tokio::test]
async fn files_without_imports_cost_the_same_with_imports_on(#[case] on: bool) {
    // R-CFG-10: switching imports on costs nothing where no file uses them.
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 8, 100);
    let cwd = dirs[8].to_string();
    let config = if on {
        with_imports(1 << 20)
    } else {
        Config::with_max_bytes(1 << 20)
    };
    let mut s = Session::mount(&fs, &cwd, config).await;
    s.prompt().await.expect("baseline");
    let first = fs.counters();
    fs.reset_counters();
    assert_eq!(s.pre_step(Vec::new()).await, None);
    let again = fs.counters();
    assert_eq!((first.reads, first.bytes_read), (9, 900));
    assert!(first.probes <= 9 + 1 + C * 9, "{} probes", first.probes);
    assert_eq!(again.reads, 0);
    assert!(again.probes <= 1 + C * 9, "{} probes", again.probes);
}

#[tokio::test]
async fn imported_files_are_read_once_per_pass_and_probed_once_on_revalidation() {
    // R-IMP-2, R-IMP-4: three candidates share two targets.
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 2, 10);
    fs.insert("/repo/docs/a.md".into(), MemNode::file("AAAA"));
    fs.insert("/repo/docs/b.md".into(), MemNode::file("BBBB"));
    for (level, dir) in dirs.iter().enumerate() {
        let up = "../".repeat(level);
        fs.insert(
            &dir.join("CLAUDE.local.md"),
            MemNode::file(format!("local {level}: @{up}docs/a.md @{up}docs/b.md")),
        );
    }
    let cwd = dirs[2].to_string();
    let mut s = Session::mount(&fs, &cwd, with_imports(1 << 20)).await;
    let baseline = s.prompt().await.expect("baseline");
    assert_eq!(baseline.parts[0].matches("\n\nAAAA").count(), 3);
    let counts = fs.counters();
    // Three AGENTS.md, three overlays, each target once for all of them.
    assert_eq!(counts.reads, 3 + 3 + 2);
    fs.reset_counters();
    assert_eq!(s.pre_step(Vec::new()).await, None, "nothing changed");
    let again = fs.counters();
    assert_eq!(again.reads, 0, "targets cost a probe, not a read");
    // The user-global file, C per chain directory, the two targets once.
    assert!(again.probes <= 1 + C * 3 + 2, "{} probes", again.probes);
    fs.insert("/repo/docs/b.md".into(), MemNode::file("BBBB, edited"));
    fs.reset_counters();
    let m = s.pre_step(Vec::new()).await.expect("the edit surfaces");
    assert_eq!(m.source.changes.len(), 3, "one replace per importing scope");
    assert_eq!(
        fs.counters().reads,
        3 + 2,
        "the importing files and the targets"
    );
}

/// Under a budget, a directory whose files the budget leaves out has
/// nothing read, its imports included: a chain of 16 files importing five
/// files each, a budget that keeps three of them, reads those, the one that
/// crosses the budget and nothing further up (R-REN-6, R-IMP-2). Predicted
/// at their own sizes, every file of the chain and all 80 imports were
/// read.
#[tokio::test]
async fn a_budget_leaves_the_imports_of_omitted_directories_unread() {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    let dirs = chain(&fs, 15, 1000);
    for (level, dir) in dirs.iter().enumerate() {
        let mut text = format!("level {level} ").repeat(1000 / 8 + 1);
        text.truncate(1000);
        for i in 0..5 {
            text.push_str(&format!(" @docs/i{i}.md"));
            let body = format!("import {i} of level {level} ").repeat(60);
            fs.insert(
                &dir.join(format!("docs/i{i}.md")),
                MemNode::file(&body[..1000]),
            );
        }
        fs.insert(&dir.join("AGENTS.md"), MemNode::file(text));
    }
    let mut s = Session::mount(&fs, dirs[15].as_str(), with_imports(20_000)).await;
    let baseline = s.prompt().await.expect("a budgeted baseline enters");
    let text = baseline.joined_text();
    assert!(text.contains("import 4 of level 15"), "the nearest expands");
    assert!(
        !text.contains("import 0 of level 0"),
        "the root is left out"
    );
    // Each file and its five imports, for the three kept and the one that
    // crosses the budget.
    let reads = fs.counters().reads;
    assert!(reads <= 4 * 6, "{reads} reads");
}

/// A pooled disk provider hands each call it is given to tokio's blocking
/// pool: the marker walk of the mount is one call, and the composition of
/// `show` (the user-global probe, the chain's probes, one read of the
/// chain) runs whole on one pool thread, where those calls run inline — two
/// hand-offs in all, whatever the chain's depth (R-DISC-1, R-DISC-3,
/// R-DISC-8, decision 0092).
#[rstest]
#[case::shallow(1)]
#[case::deep(24)]
#[tokio::test]
async fn a_pooled_baseline_hands_off_twice(#[case] depth: usize) {
    use dsh_instructions_discovery::{
        CapStdProvider, FsProvider,
        cap_std::ambient_authority,
        provider::{Call, Forward, Observe},
    };
    use std::sync::Mutex;
    use std::thread::ThreadId;

    /// The thread each call is made from.
    #[derive(Debug, Default)]
    struct Calls(Mutex<Vec<ThreadId>>);
    impl Observe for Calls {
        fn before(&self, _call: Call<'_>) {
            let mut calls = self.0.lock().expect("not poisoned");
            calls.push(std::thread::current().id());
        }
    }

    let tmp = tempfile::tempdir().expect("temp dir");
    let top = Utf8PathBuf::from_path_buf(tmp.path().canonicalize().expect("canonical"))
        .expect("UTF-8 temp dir");
    let (root, home) = (top.join("repo"), top.join(".dsh"));
    std::fs::create_dir_all(root.join(".git")).expect("marker");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("AGENTS.md"), "user-global").expect("user file");
    let mut cwd = root.clone();
    for level in 0..=depth {
        if level > 0 {
            cwd.push(format!("d{level}"));
        }
        std::fs::create_dir_all(&cwd).expect("chain");
        std::fs::write(cwd.join("AGENTS.md"), format!("level {level}")).expect("file");
    }
    let disk = CapStdProvider::new([root, home.clone()], ambient_authority())
        .expect("roots")
        .run_inline(false);
    let fs = Arc::new(Forward::new(Arc::new(disk), Calls::default()));
    let shown = common::open(
        Arc::clone(&fs) as Arc<dyn FsProvider>,
        cwd.as_str(),
        Some(Config::with_max_bytes(65_536)),
        &DshHome {
            path: home,
            label: HomeLabel::Default,
        },
    )
    .await
    .preview(&CancellationToken::new())
    .await
    .expect("not cancelled");
    assert!(shown.text.contains(&format!("level {depth}")));
    assert!(shown.text.contains("user-global"));
    let calls = fs.observer().0.lock().expect("not poisoned").clone();
    let here = std::thread::current().id();
    // The marker walk, made from here; then the composition's three calls,
    // all made from the one pool thread it runs on.
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[0], here);
    assert!(calls[1] != here && calls[1..].iter().all(|t| *t == calls[1]));
}
