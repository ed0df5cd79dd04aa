//! The quick pass behind `cargo xtask bench` (issue 7, item 3): per case, our
//! median beside the median of the in-process floor measured in the same run,
//! their ratio, content bytes we read and provider operations per directory.
//!
//! Output (stable): a header line, then one case per line,
//! `case  ours_ms  floor_ms  ratio  bytes_read  ops_per_dir  floor_bytes`;
//! then the memory rows under their own header (`mem/<tree>/<budget>`:
//! `rss_kib  over_kib  output_b  largest_b  target_kib  met`); lines
//! starting with `#` are notes (peer rows, whole-process lines, tree
//! sizes). Arguments not starting with `-` filter cases by substring.
//! `DSH_BENCH_CLI` names a built `dsh-instructions` binary for the memory,
//! whole-process and peer lines; `DSH_BENCH_CODEX` the pinned Codex CLI
//! for the peer lines (`cargo xtask bench` sets both when it can).
//!
//! Ours and the floor alternate run by run so machine noise hits both; the
//! first run of each is an untimed warm-up (ours counted through the
//! [`counting::Counting`] decorator), timed runs are undecorated — except touch
//! sequences, whose counted run is also their first timed run.

mod support;

use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_instructions_discovery::FsProvider;
use dsh_instructions_render::{BaselineFile, BaselineKind, Budget, render_baseline};
use support::counting::{self, Counted, Snapshot};
use support::cpu;
use support::drive::{self, Session};
use support::floor::{self, NaiveSession};
use support::tree::{IMPORTS_PER_FILE, MAX_SOURCE_BYTES, Shape, Tree, import_rel};

/// Wall-clock spent per case after the warm-ups, at most.
const CASE_BUDGET: Duration = Duration::from_secs(4);
/// Timed runs per side that every case gets, time allowing.
const MAX_RUNS: usize = 9;
/// A case faster than this keeps running, up to [`MANY_RUNS`]: nine
/// samples of a 0.05 ms job move its median by 10-20% from run to run.
const SETTLE: Duration = Duration::from_secs(1);
/// Timed runs per side at most.
const MANY_RUNS: usize = 1001;

/// Whether a case with `runs` timed runs per side, started at `start`,
/// takes another: at least one; then up to [`MAX_RUNS`] within
/// [`CASE_BUDGET`], and more while the case has run less than [`SETTLE`].
fn more(runs: usize, start: Instant) -> bool {
    let elapsed = start.elapsed();
    runs == 0
        || (elapsed < CASE_BUDGET && (runs < MAX_RUNS || (elapsed < SETTLE && runs < MANY_RUNS)))
}

struct Row {
    case: String,
    ours_ms: f64,
    floor_ms: f64,
    bytes_read: Option<u64>,
    ops_per_dir: Option<f64>,
    /// Content bytes the floor read (its own count, same job).
    floor_bytes: Option<u64>,
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2].as_secs_f64() * 1e3,
        n => (v[n / 2 - 1] + v[n / 2]).as_secs_f64() * 1e3 / 2.0,
    }
}

fn print_row(r: &Row) {
    let bytes = r
        .bytes_read
        .map_or_else(|| "-".to_owned(), |b| b.to_string());
    let ops = r
        .ops_per_dir
        .map_or_else(|| "-".to_owned(), |o| format!("{o:.2}"));
    let floor_bytes = r
        .floor_bytes
        .map_or_else(|| "-".to_owned(), |b| b.to_string());
    println!(
        "{:<40} {:>10.3} {:>10.3} {:>7.2} {:>11} {:>11} {:>11}",
        r.case,
        r.ours_ms,
        r.floor_ms,
        r.ours_ms / r.floor_ms,
        bytes,
        ops,
        floor_bytes
    );
}

/// Alternates timed runs of both sides while [`more`] says so.
fn alternate(
    mut ours: impl FnMut() -> Duration,
    mut floor: impl FnMut() -> Duration,
) -> (f64, f64) {
    let start = Instant::now();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    while more(a.len(), start) {
        a.push(ours());
        b.push(floor());
    }
    (median(a), median(b))
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn baseline_case(rt: &tokio::runtime::Runtime, tree: &Tree, max_bytes: i64) -> Row {
    baseline_case_on(rt, tree, max_bytes, drive::disk, "")
}

/// [`baseline_case`] with a provider opened by `open`; `suffix` names it in
/// the case (`/pool` for the blocking-pool provider).
fn baseline_case_on(
    rt: &tokio::runtime::Runtime,
    tree: &Tree,
    max_bytes: i64,
    open: fn(&Tree) -> std::io::Result<Arc<dyn FsProvider>>,
    suffix: &str,
) -> Row {
    let counted = rt.block_on(async {
        let counting = counting::new(drive::disk(tree).expect("open roots"));
        drive::show(Arc::new(counting.clone()), tree, max_bytes).await;
        counting.counts().snapshot()
    });
    let budget = Some(max_bytes.unsigned_abs());
    let floor_counts = floor::compose(&tree.home, &tree.cwd, MAX_SOURCE_BYTES, budget);
    let (ours_ms, floor_ms) = alternate(
        || {
            timed(|| {
                rt.block_on(async {
                    // Opening the roots is part of the job (the CLI does it).
                    let provider = open(tree).expect("open roots");
                    black_box(drive::show(provider, tree, max_bytes).await);
                });
            })
        },
        || {
            timed(|| {
                let _ = black_box(floor::compose(
                    &tree.home,
                    &tree.cwd,
                    MAX_SOURCE_BYTES,
                    budget,
                ));
            })
        },
    );
    Row {
        case: format!(
            "baseline/{}/{}K{suffix}",
            tree.shape.label(),
            max_bytes / 1024
        ),
        ours_ms,
        floor_ms,
        bytes_read: Some(counted.bytes_read),
        ops_per_dir: Some(counted.ops_per_dir()),
        floor_bytes: Some(floor_counts.bytes_read),
    }
}

/// One touch sequence by us; returns the time spent in touches (edits
/// excluded) and the counts.
fn ours_touches(
    rt: &tokio::runtime::Runtime,
    tree: &Tree,
    touches: usize,
    edit: bool,
    rev: u32,
    counted: bool,
) -> (Duration, Snapshot) {
    let Shape::Wide { packages } = tree.shape else {
        return (Duration::ZERO, Snapshot::default());
    };
    rt.block_on(async {
        let disk = drive::disk(tree).expect("open roots");
        let counting = counting::new(disk.clone());
        let provider: Arc<dyn FsProvider> = if counted {
            Arc::new(counting.clone())
        } else {
            disk
        };
        let mut session = Session::start(provider, tree, &tree.root, 65_536).await;
        let before = counting.counts().snapshot();
        let mut spent = Duration::ZERO;
        let mut edited = Vec::new();
        for k in 0..touches {
            if edit {
                for p in drive::edits_before(k, packages) {
                    tree.edit_package(p, rev + k as u32).expect("edit");
                    edited.push(p);
                }
            }
            let file = drive::package_file(tree, drive::nth_package(k, packages));
            let t = Instant::now();
            black_box(session.touch(&file).await);
            spent += t.elapsed();
        }
        for p in edited {
            tree.edit_package(p, 0).expect("restore");
        }
        let after = counting.counts().snapshot();
        (
            spent,
            Snapshot {
                probes: after.probes - before.probes,
                dirs: after.dirs - before.dirs,
                reads: after.reads - before.reads,
                bytes_read: after.bytes_read - before.bytes_read,
                markers: after.markers - before.markers,
            },
        )
    })
}

fn floor_touches(tree: &Tree, touches: usize, edit: bool, rev: u32) -> (Duration, u64) {
    let Shape::Wide { packages } = tree.shape else {
        return (Duration::ZERO, 0);
    };
    let mut session = NaiveSession::start(&tree.home, &tree.root, MAX_SOURCE_BYTES);
    let start_bytes = session.counts.bytes_read;
    let mut spent = Duration::ZERO;
    let mut edited = Vec::new();
    for k in 0..touches {
        if edit {
            for p in drive::edits_before(k, packages) {
                tree.edit_package(p, rev + k as u32).expect("edit");
                edited.push(p);
            }
        }
        let file = drive::package_file(tree, drive::nth_package(k, packages));
        spent += timed(|| session.touch(&file));
    }
    for p in edited {
        tree.edit_package(p, 0).expect("restore");
    }
    (spent, session.counts.bytes_read - start_bytes)
}

fn touch_case(rt: &tokio::runtime::Runtime, tree: &Tree, touches: usize, edit: bool) -> Row {
    if edit {
        tree.begin_edits().expect("unstamp");
    }
    // Each run edits to fresh revisions so every edit really changes bytes.
    let mut rev = 1u32;
    let mut next_rev = || {
        rev += 100_000;
        rev
    };
    // Sequences are long: the counted run is also the first timed run of
    // ours (the decorator adds an atomic add per operation, noise next to a
    // syscall), and the floor runs right after it on the same warm cache.
    let (first, counted) = ours_touches(rt, tree, touches, edit, next_rev(), true);
    let (ours_ms, floor_ms, floor_bytes) = {
        let start = Instant::now();
        let (first_floor, floor_bytes) = floor_touches(tree, touches, edit, next_rev());
        let (mut a, mut b) = (vec![first], vec![first_floor]);
        while more(a.len(), start) {
            a.push(ours_touches(rt, tree, touches, edit, next_rev(), false).0);
            b.push(floor_touches(tree, touches, edit, next_rev()).0);
        }
        (median(a), median(b), floor_bytes)
    };
    if edit {
        tree.end_edits().expect("stamp");
    }
    Row {
        case: format!(
            "touch/{}/{touches}/{}",
            tree.shape.label(),
            if edit { "edit1pct" } else { "clean" }
        ),
        ours_ms,
        floor_ms,
        bytes_read: Some(counted.bytes_read),
        ops_per_dir: Some(counted.ops_per_dir()),
        floor_bytes: Some(floor_bytes),
    }
}

/// A pre-step with nothing pending and nothing changed, repeated on one
/// warm in-process session (its handle caches and version cache stay warm
/// between samples, which a hook process never has: the row's name says
/// `warm-session`), interleaved sample by sample with the naive session's
/// reconciliation of the same known directories.
fn revalidate_case(rt: &tokio::runtime::Runtime, tree: &Tree) -> Row {
    let Shape::Wide { packages } = tree.shape else {
        unreachable!("revalidation runs on wide trees")
    };
    let (mut session, counted) = rt.block_on(async {
        let disk = drive::disk(tree).expect("open roots");
        let counting = counting::new(disk);
        let mut session =
            Session::start(Arc::new(counting.clone()), tree, &tree.root, 65_536).await;
        session.host.append_user(
            vec!["known".to_owned()],
            Some(drive::all_packages_loaded(tree)),
        );
        // Cold: the version cache learns every file (reads, digests match).
        let cold = session.revalidate().await;
        assert!(
            cold.is_none(),
            "synthetic state must match the tree: {cold:?}"
        );
        let before = counting.counts().snapshot();
        session.revalidate().await;
        let after = counting.counts().snapshot();
        (session, after.since(&before))
    });
    let mut naive = NaiveSession::start(&tree.home, &tree.root, MAX_SOURCE_BYTES);
    let all: Vec<_> = (0..packages)
        .map(|p| tree.root.join(support::tree::package_rel(p)))
        .collect();
    naive.reconcile(&all);
    let before = naive.counts.bytes_read;
    naive.reconcile(&[]);
    let floor_bytes = naive.counts.bytes_read - before;
    let (ours_ms, floor_ms) = alternate(
        || {
            timed(|| {
                black_box(rt.block_on(session.revalidate()));
            })
        },
        || timed(|| naive.reconcile(&[])),
    );
    Row {
        case: format!("revalidate/{}/warm-session", tree.shape.label()),
        ours_ms,
        floor_ms,
        bytes_read: Some(counted.bytes_read),
        ops_per_dir: Some(counted.ops_per_dir()),
        floor_bytes: Some(floor_bytes),
    }
}

fn import_targets() -> Vec<String> {
    (0..IMPORTS_PER_FILE).map(import_rel).collect()
}

/// A baseline over a chain whose every file imports ten small files
/// (SPEC §13), beside the floor's stats and reads of the same files.
fn imports_baseline_case(rt: &tokio::runtime::Runtime, tree: &Tree) -> Row {
    let config = drive::imports_config();
    let targets = import_targets();
    let counted = rt.block_on(async {
        let counting = counting::new(drive::disk(tree).expect("open roots"));
        let shown = drive::show_with(Arc::new(counting.clone()), tree, &config).await;
        assert!(shown.text.contains("Imported from: "), "imports expand");
        counting.counts().snapshot()
    });
    let floor_counts = floor::compose_imports(
        &tree.home,
        &tree.cwd,
        MAX_SOURCE_BYTES,
        Some(65_536),
        &targets,
    );
    let (ours_ms, floor_ms) = alternate(
        || {
            timed(|| {
                rt.block_on(async {
                    let provider = drive::disk(tree).expect("open roots");
                    black_box(drive::show_with(provider, tree, &config).await);
                });
            })
        },
        || {
            timed(|| {
                let _ = black_box(floor::compose_imports(
                    &tree.home,
                    &tree.cwd,
                    MAX_SOURCE_BYTES,
                    Some(65_536),
                    &targets,
                ));
            })
        },
    );
    Row {
        case: format!("baseline/{}/64K", tree.shape.label()),
        ours_ms,
        floor_ms,
        bytes_read: Some(counted.bytes_read),
        ops_per_dir: Some(counted.ops_per_dir()),
        floor_bytes: Some(floor_counts.bytes_read),
    }
}

/// A pre-step revalidation with nothing changed on the same tree: the
/// import targets cost a probe each and nothing is read (R-IMP-4).
fn imports_revalidate_case(rt: &tokio::runtime::Runtime, tree: &Tree) -> Row {
    let targets = import_targets();
    let (mut session, counted) = rt.block_on(async {
        let counting = counting::new(drive::disk(tree).expect("open roots"));
        let mut session = Session::start_with(
            Arc::new(counting.clone()),
            tree,
            &tree.cwd,
            drive::imports_config(),
        )
        .await;
        let before = counting.counts().snapshot();
        let nothing = session.revalidate().await;
        assert!(nothing.is_none(), "unchanged: {nothing:?}");
        let after = counting.counts().snapshot();
        assert_eq!(
            after.reads, before.reads,
            "an unchanged revalidation reads nothing"
        );
        (session, after.since(&before))
    });
    let (ours_ms, floor_ms) = alternate(
        || {
            timed(|| {
                black_box(rt.block_on(session.revalidate()));
            })
        },
        || {
            timed(|| {
                let _ = black_box(floor::revalidate_imports(
                    &tree.home, &tree.root, &tree.cwd, &targets,
                ));
            })
        },
    );
    Row {
        case: format!("revalidate/{}/warm-session", tree.shape.label()),
        ours_ms,
        floor_ms,
        bytes_read: Some(counted.bytes_read),
        ops_per_dir: Some(counted.ops_per_dir()),
        floor_bytes: Some(0),
    }
}

fn render_case(over: bool) -> Row {
    let paths: Vec<String> = (0..64)
        .map(|i| format!("dir{i:03}/sub/AGENTS.md"))
        .collect();
    let contents: Vec<String> = (0..64)
        .map(|i| {
            String::from_utf8_lossy(&support::tree::content(&paths[i], 16 * 1024, 0)).into_owned()
        })
        .collect();
    let files: Vec<BaselineFile<'_>> = paths
        .iter()
        .zip(&contents)
        .map(|(path, content)| BaselineFile { path, content })
        .collect();
    let total: usize = contents.iter().map(String::len).sum();
    let budget = if over { (total / 2) as u64 } else { 4 << 20 };
    // The floor: the bytes any renderer must at least copy once.
    let concat = || {
        let mut out = String::with_capacity(total + 64 * 64);
        for f in &files {
            out.push_str("Instructions from: ");
            out.push_str(f.path);
            out.push_str("\n\n");
            out.push_str(f.content);
            out.push_str("\n\n");
        }
        black_box(out);
    };
    let (ours_ms, floor_ms) = alternate(
        || {
            let t = Instant::now();
            for _ in 0..20 {
                black_box(render_baseline(
                    BaselineKind::Normal,
                    black_box(&files),
                    Budget::bytes(budget),
                ));
            }
            t.elapsed() / 20
        },
        || {
            let t = Instant::now();
            for _ in 0..20 {
                concat();
            }
            t.elapsed() / 20
        },
    );
    Row {
        case: format!("render/64x16K/{}", if over { "over" } else { "under" }),
        ours_ms,
        floor_ms,
        bytes_read: None,
        ops_per_dir: None,
        floor_bytes: None,
    }
}

/// Runs the memory rows' processes with address-space randomization off
/// (`setarch -R`, where there is one). With it on, the same process's max
/// RSS moved by up to ±250 KiB from run to run, with where the binary was
/// loaded (the code pages mapped in beside each one faulted in differ);
/// rows near their bound flipped between met and missed. With it off, the
/// figure repeats to the KiB (issue 46 item 4).
const SETARCH: &str = "/usr/bin/setarch";

/// Whether [`SETARCH`] `-R` runs here (it needs the `personality` call).
fn randomization_off() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OFF.get_or_init(|| {
        Command::new(SETARCH)
            .args(["-R", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Max RSS (KiB) of one `dsh-instructions show` process at `cwd` under
/// `max_bytes` (`/usr/bin/time -f %M`, under [`SETARCH`] `-R` where it
/// runs), and the bytes it printed.
fn peak_rss(
    cli: &str,
    home: &camino::Utf8Path,
    cwd: &camino::Utf8Path,
    max_bytes: i64,
) -> Option<(u64, usize)> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .args(if randomization_off() {
            &[SETARCH, "-R"][..]
        } else {
            &[]
        })
        .args([cli, "show", "--cwd", cwd.as_str(), "--home", home.as_str()])
        .args(["--max-bytes", &max_bytes.to_string()])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib = stderr.lines().last()?.trim().parse().ok()?;
    Some((kib, out.stdout.len()))
}

/// Median of five [`peak_rss`] runs (the output of the last).
fn median_rss(
    cli: &str,
    home: &camino::Utf8Path,
    cwd: &camino::Utf8Path,
    max_bytes: i64,
) -> Option<(u64, usize)> {
    let mut peaks = Vec::new();
    let mut printed = 0;
    for _ in 0..5 {
        let (kib, out) = peak_rss(cli, home, cwd, max_bytes)?;
        peaks.push(kib);
        printed = out;
    }
    peaks.sort_unstable();
    Some((peaks[peaks.len() / 2], printed))
}

/// The `mem/…` rows (`cargo xtask bench mem`, issue 35 item 3): per tree
/// and budget, the max RSS of a `show` process over that of the same
/// binary and job on an empty tree (a `.git` root holding no instruction
/// file, an empty home), beside the bytes it printed and the largest file
/// on the chain; target: at most 2 x (output + largest file) + 1 MiB.
/// Every tree at 64 and 32 KiB; deep-256 and wide-10000 also at 64 MiB
/// (issue 46 item 4), where deep-256 prints its whole chain.
fn memory_rows(trees: &[Tree], wanted: &dyn Fn(&str) -> bool) {
    let cases: Vec<(&Tree, i64, &str)> = trees
        .iter()
        .filter(|t| !matches!(t.shape, Shape::Imports { .. }))
        .flat_map(|t| {
            let big = matches!(
                t.shape,
                Shape::Deep { depth: 256 } | Shape::Wide { packages: 10_000 }
            );
            [(t, 65_536, "64K"), (t, 32_768, "32K")]
                .into_iter()
                .chain(big.then_some((t, 64 << 20, "64M")))
        })
        .filter(|(t, _, b)| wanted(&format!("mem/{}/{b}", t.shape.label())))
        .collect();
    let Some(first) = cases.first() else {
        return;
    };
    let Ok(cli) = std::env::var("DSH_BENCH_CLI") else {
        println!("# mem: skipped (set DSH_BENCH_CLI to a built dsh-instructions)");
        return;
    };
    let empty = first.0.base.join("empty");
    let empty_home = empty.join("home");
    let _ = std::fs::create_dir_all(empty.join(".git"));
    let _ = std::fs::create_dir_all(&empty_home);
    let Some((idle, _)) = median_rss(&cli, &empty_home, &empty, 65_536) else {
        println!("# mem: /usr/bin/time or {cli} failed on the empty tree");
        return;
    };
    println!(
        "{:<40} {:>10} {:>10} {:>11} {:>11} {:>10} {:>6}",
        "case", "rss_kib", "over_kib", "output_b", "largest_b", "target_kib", "met"
    );
    for (tree, max_bytes, budget) in cases {
        let case = format!("mem/{}/{budget}", tree.shape.label());
        let Some((rss, output)) = median_rss(&cli, &tree.home, &tree.cwd, max_bytes) else {
            println!("# {case}: {cli} show failed");
            continue;
        };
        let over = rss.saturating_sub(idle);
        let target = (2 * (output as u64 + tree.largest_on_chain)).div_ceil(1024) + 1024;
        println!(
            "{case:<40} {rss:>10} {over:>10} {output:>11} {:>11} {target:>10} {:>6}",
            tree.largest_on_chain,
            if over <= target { "yes" } else { "NO" }
        );
    }
    println!(
        "# mem: empty-tree show {idle} KiB max RSS (median of 5 per row; {})",
        if randomization_off() {
            "address-space randomization off, `setarch -R`"
        } else {
            "address-space randomization on (no `setarch -R` here): rows move by up to 250 KiB"
        }
    );
}

/// One whole process with stdout and stderr discarded; its wall time when
/// it succeeded.
fn wall(command: &mut Command) -> Option<Duration> {
    let t = Instant::now();
    let ok = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| t.elapsed())
}

/// The `peer/codex/…` rows (issue 35 item 4): whole-process `show` against
/// the pinned Codex CLI's `codex debug prompt-input` on the same tree at
/// the same budget (`project_doc_max_bytes`, the user-global file in
/// `CODEX_HOME`), 21 runs each, interleaved; ratio Codex over ours, target
/// at least 10. Two budgets: 64 KiB (the hook's default) and 64 MiB, where
/// both read every file of the chain (the deep-256 case). Skipped
/// with a line when `DSH_BENCH_CODEX` (set by `cargo xtask bench` from the
/// e2e cache) names no executable.
fn peer_rows(trees: &[Tree], wanted: &dyn Fn(&str) -> bool) {
    let cases: Vec<(&Tree, i64, &str)> = trees
        .iter()
        .filter(|t| !matches!(t.shape, Shape::Imports { .. }))
        .flat_map(|t| [(t, 65_536, "64K"), (t, 64 << 20, "64M")])
        .filter(|(t, _, b)| wanted(&format!("peer/codex/{}/{b}", t.shape.label())))
        .collect();
    if cases.is_empty() {
        return;
    }
    let (Ok(cli), Some(codex)) = (
        std::env::var("DSH_BENCH_CLI"),
        std::env::var_os("DSH_BENCH_CODEX").filter(|c| std::path::Path::new(c).exists()),
    ) else {
        println!(
            "# peer/codex: skipped (the pinned Codex CLI is not in the e2e cache, \
             ${{XDG_CACHE_HOME:-~/.cache}}/dsh-e2e/agents; `cargo xtask e2e --agent codex` installs it)"
        );
        return;
    };
    for (tree, max_bytes, budget) in cases {
        let case = format!("peer/codex/{}/{budget}", tree.shape.label());
        // Codex writes its own state into its home: give it a copy of the
        // user-global file in a home of its own, not the tree's.
        let codex_home = tree.base.join(format!("codex-home-{}", tree.shape.label()));
        let _ = std::fs::create_dir_all(&codex_home);
        let _ = std::fs::copy(tree.home.join("AGENTS.md"), codex_home.join("AGENTS.md"));
        let ours = || {
            wall(
                Command::new(&cli)
                    .args(["show", "--cwd", tree.cwd.as_str(), "--home"])
                    .arg(tree.home.as_str())
                    .args(["--max-bytes", &max_bytes.to_string()]),
            )
        };
        let theirs = || {
            wall(
                Command::new(&codex)
                    .args(["debug", "prompt-input", "-c"])
                    .arg(format!("project_doc_max_bytes={max_bytes}"))
                    .current_dir(tree.cwd.as_std_path())
                    .env("CODEX_HOME", codex_home.as_std_path()),
            )
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..21 {
            match (ours(), theirs()) {
                (Some(x), Some(y)) => {
                    a.push(x);
                    b.push(y);
                }
                _ => break,
            }
        }
        if a.len() < 21 {
            println!("# {case}: a run failed (ours or `codex debug prompt-input`)");
            continue;
        }
        let (ours_ms, codex_ms) = (median(a), median(b));
        println!(
            "# {case}: ours {ours_ms:.2} ms, codex {codex_ms:.2} ms, {:.1}x, target >= 10x -> {}",
            codex_ms / ours_ms,
            if codex_ms / ours_ms >= 10.0 {
                "met"
            } else {
                "MISSED"
            }
        );
    }
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |case: &str| filters.is_empty() || filters.iter().any(|f| case.contains(f));
    let rt = drive::runtime();
    println!(
        "{:<40} {:>10} {:>10} {:>7} {:>11} {:>11} {:>11}",
        "case", "ours_ms", "floor_ms", "ratio", "bytes_read", "ops_per_dir", "floor_bytes"
    );
    let shapes = [
        Shape::Deep { depth: 16 },
        Shape::Deep { depth: 64 },
        Shape::Deep { depth: 256 },
        Shape::Noise {
            depth: 16,
            noise: 1000,
        },
        Shape::Wide { packages: 1000 },
        Shape::Wide { packages: 10_000 },
        Shape::Imports { depth: 16 },
    ];
    let mut trees = Vec::new();
    for shape in shapes {
        let label = shape.label();
        // A filter naming a whole case (`touch/wide-1000/100/clean`) is
        // longer than the prefix, so it selects the tree too.
        let any = [
            "baseline/",
            "touch/",
            "revalidate/",
            "mem/",
            "split/",
            "process/",
            "peer/codex/",
        ]
        .iter()
        .any(|k| {
            let prefix = format!("{k}{label}");
            wanted(&prefix) || filters.iter().any(|f| f.starts_with(&prefix))
        });
        if !any {
            continue;
        }
        let tree = Tree::get(shape).expect("build tree");
        if let Shape::Imports { .. } = shape {
            if wanted(&format!("baseline/{label}/64K")) {
                print_row(&imports_baseline_case(&rt, &tree));
            }
            if wanted(&format!("revalidate/{label}")) {
                print_row(&imports_revalidate_case(&rt, &tree));
            }
            trees.push(tree);
            continue;
        }
        for kib in [64, 32] {
            let case = format!("baseline/{label}/{kib}K");
            if wanted(&case) {
                print_row(&baseline_case(&rt, &tree, kib * 1024));
            }
        }
        // The blocking-pool provider on one small and one wide tree: what a
        // thread hand-off per filesystem call costs an embedder that needs
        // abandonable calls (the CLI and the hook run inline).
        if matches!(label.as_str(), "deep-16" | "wide-1000") {
            let case = format!("baseline/{label}/64K/pool");
            if wanted(&case) {
                print_row(&baseline_case_on(
                    &rt,
                    &tree,
                    64 * 1024,
                    drive::pooled_disk,
                    "/pool",
                ));
            }
        }
        trees.push(tree);
    }
    for tree in &trees {
        let label = tree.shape.label();
        if label == "wide-1000" {
            for touches in [100, 1000] {
                for edit in [false, true] {
                    let case = format!(
                        "touch/{label}/{touches}/{}",
                        if edit { "edit1pct" } else { "clean" }
                    );
                    if wanted(&case) {
                        print_row(&touch_case(&rt, tree, touches, edit));
                    }
                }
            }
        }
        if matches!(tree.shape, Shape::Wide { .. }) && wanted(&format!("revalidate/{label}")) {
            print_row(&revalidate_case(&rt, tree));
        }
    }
    for over in [false, true] {
        if wanted(if over {
            "render/64x16K/over"
        } else {
            "render/64x16K/under"
        }) {
            print_row(&render_case(over));
        }
    }
    rules_rows(&rt, &wanted);
    listing_row(&rt, &wanted);
    split_rows(&rt, &trees, &wanted);
    memory_rows(&trees, &wanted);
    peer_rows(&trees, &wanted);
    for tree in &trees {
        println!(
            "# tree {}: {} candidate bytes, cwd {} levels below the root",
            tree.shape.label(),
            tree.candidate_bytes,
            tree.cwd
                .strip_prefix(&tree.root)
                .map_or(0, |p| p.components().count())
        );
        if wanted(&format!("process/{}", tree.shape.label())) {
            process_note(tree);
        }
    }
}

/// How long each side of a `split/` row runs back to back. The kernel
/// splits a thread's time by sampling it at each scheduler tick, so a
/// side's split is a count of a few hundred samples: half a second moved
/// wide-1000's kernel ratio between 0.97x and 1.45x from run to run.
const SPLIT_SPAN: Duration = Duration::from_secs(2);

/// The `split/` rows (decision 0080): each side's CPU time per run, split
/// between user space and the kernel, for the baseline on the trees where
/// the ratio is furthest from 1.0 and for the 100-touch sequence. A side
/// runs back to back (not interleaved: the split is read from the thread's
/// clock ticks, once per side); the touch rows include each side's session
/// start, which is under 2% of the sequence.
fn split_rows(rt: &tokio::runtime::Runtime, trees: &[Tree], wanted: &dyn Fn(&str) -> bool) {
    let print = |case: &str, ours: Option<cpu::PerRun>, floor: Option<cpu::PerRun>| {
        let (Some(o), Some(f)) = (ours, floor) else {
            println!("# {case}: no /proc/thread-self/stat here, no user/kernel split");
            return;
        };
        println!(
            "{case:<40} user {:>9.1} / {:>9.1} us ({:.2}x)   kernel {:>9.1} / {:>9.1} us ({:.2}x)",
            o.user_us,
            f.user_us,
            o.user_us / f.user_us,
            o.system_us,
            f.system_us,
            o.system_us / f.system_us,
        );
    };
    for tree in trees {
        let label = tree.shape.label();
        let case = format!("split/baseline/{label}/64K");
        if matches!(
            label.as_str(),
            "deep-16" | "noise-16" | "wide-1000" | "deep-256"
        ) && wanted(&case)
        {
            let budget = Some(64 * 1024);
            let ours = cpu::per_run(SPLIT_SPAN, || {
                rt.block_on(async {
                    let provider = drive::disk(tree).expect("open roots");
                    black_box(drive::show(provider, tree, 64 * 1024).await);
                });
            });
            let floor = cpu::per_run(SPLIT_SPAN, || {
                black_box(floor::compose(
                    &tree.home,
                    &tree.cwd,
                    MAX_SOURCE_BYTES,
                    budget,
                ));
            });
            print(&case, ours, floor);
        }
        let case = format!("split/touch/{label}/100/clean");
        if label == "wide-1000" && wanted(&case) {
            let ours = cpu::per_run(SPLIT_SPAN, || {
                black_box(ours_touches(rt, tree, 100, false, 0, false));
            });
            let floor = cpu::per_run(SPLIT_SPAN, || {
                black_box(floor_touches(tree, 100, false, 0));
            });
            print(&case, ours, floor);
        }
    }
}

/// The rules rows (issue 32 item 4, `support/rules.rs`): a session's
/// complete baseline with 50 rules in 10 rules directories, and one touch that
/// attaches the 10 rules matching it; ours and the floor alternate sample
/// by sample (the touch: each sample a fresh session, the touch alone timed).
fn rules_rows(rt: &tokio::runtime::Runtime, wanted: &dyn Fn(&str) -> bool) {
    let (base_case, touch_case) = ("baseline/rules-50/64K", "touch/rules-50/1");
    if !wanted(base_case) && !wanted(touch_case) {
        return;
    }
    let tree = support::rules::tree().expect("build the rules tree");
    let config = support::rules::config();
    let file = support::rules::touched(&tree);
    // Warm-up and counts; both sides must have done the job. Ours is a
    // session's first pre-step (the hook's baseline): `show`'s preview
    // composes no rules yet.
    let start = |provider: Arc<dyn FsProvider>| {
        rt.block_on(Session::start_with(
            provider,
            &tree,
            &tree.cwd,
            config.clone(),
        ))
    };
    let disk = drive::disk(&tree).expect("open roots");
    let counting = counting::new(disk);
    let first = start(Arc::new(counting.clone()));
    let counted = counting.counts().snapshot();
    let text: String = first
        .host
        .user_messages()
        .into_iter()
        .filter_map(|m| match m {
            dsh_instructions_runtime::host_support::HistoryItem::User { parts, .. } => {
                Some(parts.concat())
            }
            dsh_instructions_runtime::host_support::HistoryItem::Event(_) => None,
        })
        .collect();
    let floor_base = support::rules::FloorRules::baseline(&tree);
    let always = support::rules::LEVELS;
    assert_eq!(
        floor_base.attached(),
        always,
        "floor: one always-on rule per level"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("Instructions from: ") && l.ends_with(".claude/rules/r0.md"))
            .count(),
        always,
        "ours: every always-on rule in the baseline"
    );
    if wanted(base_case) {
        let (ours_ms, floor_ms) = alternate(
            || {
                timed(|| {
                    // Opening the roots is part of the job (the hook does it).
                    drop(black_box(start(drive::disk(&tree).expect("open roots"))));
                })
            },
            || timed(|| drop(black_box(support::rules::FloorRules::baseline(&tree)))),
        );
        print_row(&Row {
            case: base_case.to_owned(),
            ours_ms,
            floor_ms,
            bytes_read: Some(counted.bytes_read),
            ops_per_dir: Some(counted.ops_per_dir()),
            floor_bytes: Some(floor_base.bytes_read()),
        });
    }
    if wanted(touch_case) {
        let ours = |counted: bool| {
            rt.block_on(async {
                let disk = drive::disk(&tree).expect("open roots");
                let counting = counting::new(disk.clone());
                let provider: Arc<dyn FsProvider> = if counted {
                    Arc::new(counting.clone())
                } else {
                    disk
                };
                let mut session =
                    Session::start_with(provider, &tree, &tree.cwd, config.clone()).await;
                let before = counting.counts().snapshot();
                let t = Instant::now();
                let message = black_box(session.touch(&file).await);
                let spent = t.elapsed();
                (spent, counting.counts().snapshot().since(&before), message)
            })
        };
        let (_, snap, message) = ours(true);
        let attached = message
            .map(|m| {
                m.parts
                    .concat()
                    .matches("These instructions apply to files matching `**/*.rs`")
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(
            attached,
            support::rules::LEVELS,
            "ours: the touch attaches one rule per level"
        );
        let floor_touch = || {
            let mut f = support::rules::FloorRules::baseline(&tree);
            let before = f.bytes_read();
            let spent = timed(|| f.touch(&file));
            (spent, f.attached(), f.bytes_read() - before)
        };
        let (_, floor_attached, floor_bytes) = floor_touch();
        assert_eq!(
            floor_attached,
            2 * support::rules::LEVELS,
            "floor: one rule per level attached"
        );
        let (ours_ms, floor_ms) = alternate(|| ours(false).0, || floor_touch().0);
        print_row(&Row {
            case: touch_case.to_owned(),
            ours_ms,
            floor_ms,
            bytes_read: Some(snap.bytes_read),
            ops_per_dir: Some(snap.ops_per_dir()),
            floor_bytes: Some(floor_bytes),
        });
    }
}

/// The listing row (R-RULE-1, decision 0082): a rules directory of 10,000
/// rule files, of which the first 256 in byte order are listed and the
/// rest reported skipped. Ours: `list_rule_files` through the disk
/// provider the CLI and the hook open (inline); the floor: `read_dir`, the
/// suffix and file type from each entry, a sort, the first 256. The
/// contract test (`rule_listing_of_ten_thousand_files`) checks what is
/// listed; this row says how long it takes, which a test must not.
fn listing_row(rt: &tokio::runtime::Runtime, wanted: &dyn Fn(&str) -> bool) {
    const CASE: &str = "list/rules-10000";
    const FILES: usize = 10_000;
    const SUFFIX: &str = ".instructions.md";
    if !wanted(CASE) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = camino::Utf8PathBuf::from_path_buf(tmp.path().to_path_buf()).expect("utf-8");
    let dir = root.join(".github/instructions");
    std::fs::create_dir_all(&dir).expect("rules directory");
    for i in 0..FILES {
        std::fs::write(dir.join(format!("f{i:05}{SUFFIX}")), b"").expect("rule file");
    }
    let provider = dsh_instructions_discovery::CapStdProvider::new(
        [root.clone()],
        dsh_instructions_discovery::cap_std::ambient_authority(),
    )
    .expect("open the root")
    .run_inline(true);
    let cancel = dsh_instructions_discovery::CancellationToken::new();
    let ours = || {
        rt.block_on(dsh_instructions_discovery::listing::list_rule_files(
            &provider, &dir, SUFFIX, true, &cancel,
        ))
        .expect("not cancelled")
    };
    let floor = || {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("read_dir")
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.len() > SUFFIX.len() && n.ends_with(SUFFIX))
            .collect();
        names.sort_unstable();
        let skipped = names.len().saturating_sub(256);
        names.truncate(256);
        (names, skipped)
    };
    let listed = ours();
    let (want, skipped) = floor();
    assert_eq!(listed.files, want, "both sides list the same files");
    assert_eq!(
        listed.problems,
        [dsh_instructions_discovery::listing::RuleFileProblem::TooManyFiles { skipped }]
    );
    let (ours_ms, floor_ms) = alternate(
        || timed(|| drop(black_box(ours()))),
        || timed(|| drop(black_box(floor()))),
    );
    print_row(&Row {
        case: CASE.to_owned(),
        ours_ms,
        floor_ms,
        bytes_read: Some(0),
        ops_per_dir: None,
        floor_bytes: Some(0),
    });
}

/// CPU time (user + system) of this process's reaped children so far, from
/// `/proc/self/stat` (fields 16 and 17, in clock ticks of 10 ms): summed
/// over many runs, fine enough for a per-run mean.
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; fields after it are plain.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3, so field N is at index N - 3.
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Whole-process `dsh-instructions show` on the tree (issue 19 item 8):
/// the median wall time of one run beside the mean CPU time of one run.
/// A wall time well above the CPU time is threads waiting on each other.
fn process_note(tree: &Tree) {
    let Ok(cli) = std::env::var("DSH_BENCH_CLI") else {
        println!("# process: skipped (set DSH_BENCH_CLI to a built dsh-instructions)");
        return;
    };
    let run = || {
        let t = Instant::now();
        let ok = Command::new(&cli)
            .args([
                "show",
                "--cwd",
                tree.cwd.as_str(),
                "--home",
                tree.home.as_str(),
            ])
            .args(["--max-bytes", "65536"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| t.elapsed())
    };
    let _ = run();
    let runs = 40;
    let Some(cpu_before) = children_cpu() else {
        println!("# process: /proc/self/stat unreadable");
        return;
    };
    let walls: Option<Vec<Duration>> = (0..runs).map(|_| run()).collect();
    let (Some(walls), Some(cpu_after)) = (walls, children_cpu()) else {
        println!("# process show/{}: {cli} failed", tree.shape.label());
        return;
    };
    let wall_ms = median(walls);
    let cpu_ms = (cpu_after - cpu_before).as_secs_f64() * 1000.0 / f64::from(runs);
    let ratio = wall_ms / cpu_ms.max(0.01);
    println!(
        "# process show/{}: wall {wall_ms:.2} ms, cpu {cpu_ms:.2} ms, wall/cpu {ratio:.2}, target <= 1.25 -> {}",
        tree.shape.label(),
        if ratio <= 1.25 { "met" } else { "MISSED" }
    );
}
