//! Ours alone, in a loop, for a sampling profiler (`perf record`): the same
//! jobs as the quick pass's cases, without the floor or the counting
//! decorator in between. `cargo bench -p dsh-instructions-runtime --bench
//! profile -- CASE [RUNS]`, where CASE is one of `baseline/<tree>`
//! (`deep-16`, `noise-16`, `wide-1000`, `imports-16`, ...),
//! `touch/<touches>` (wide-1000, clean), `floor/<tree>` (the baseline's
//! same-job floor alone, to count its system calls beside ours) or
//! `touch-floor/<touches>` (the touch sequence's floor alone) or
//! `rules-touch` (the quick pass's `touch/rules-50/1`: each run a fresh
//! session, its first touch alone timed; `rules-start` runs the same
//! sessions without the touch, so that an instruction count of the two
//! tells the touch's share), or `calls/<tree>` (the provider calls of one
//! `show` through the pooled provider, each a blocking-pool hand-off,
//! named and counted). Prints the
//! median per run; `perf stat -e user_time,system_time` over many runs and
//! over one splits each side's time between user space and the kernel.

mod support;

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_instructions_discovery::provider::{Call, Forward, Observe};

use support::drive::{self, Session};
use support::floor;
use support::tree::{IMPORTS_PER_FILE, MAX_SOURCE_BYTES, Shape, Tree, import_rel};

fn shape(label: &str) -> Option<Shape> {
    let (kind, n) = label.split_once('-')?;
    let n: usize = n.parse().ok()?;
    Some(match kind {
        "deep" => Shape::Deep { depth: n },
        "noise" => Shape::Noise {
            depth: n,
            noise: 1000,
        },
        "wide" => Shape::Wide { packages: n },
        "imports" => Shape::Imports { depth: n },
        _ => return None,
    })
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let case = args.first().map_or("baseline/wide-1000", String::as_str);
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(2000);
    let rt = drive::runtime();
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    if let Some(label) = case.strip_prefix("calls/") {
        calls(&rt, label);
        return;
    }
    if let Some(label) = case.strip_prefix("baseline/") {
        let shape = shape(label).expect("a tree label such as deep-16");
        let tree = Tree::get(shape).expect("build tree");
        let config = config_for(label);
        for _ in 0..runs {
            let t = Instant::now();
            rt.block_on(async {
                let provider = drive::disk(&tree).expect("open roots");
                black_box(drive::show_with(provider, &tree, &config).await);
            });
            times.push(t.elapsed());
        }
    } else if let Some(label) = case.strip_prefix("floor/") {
        let shape = shape(label).expect("a tree label such as deep-16");
        let tree = Tree::get(shape).expect("build tree");
        // An imports tree's floor also states and reads the import
        // targets, as the quick pass's `baseline/imports-N` row has it.
        let targets: Vec<String> = match shape {
            Shape::Imports { .. } => (0..IMPORTS_PER_FILE).map(import_rel).collect(),
            _ => Vec::new(),
        };
        for _ in 0..runs {
            let t = Instant::now();
            if targets.is_empty() {
                black_box(floor::compose(
                    &tree.home,
                    &tree.cwd,
                    MAX_SOURCE_BYTES,
                    Some(65_536),
                ));
            } else {
                black_box(floor::compose_imports(
                    &tree.home,
                    &tree.cwd,
                    MAX_SOURCE_BYTES,
                    Some(65_536),
                    &targets,
                ));
            }
            times.push(t.elapsed());
        }
    } else if let Some(n) = case.strip_prefix("touch-floor/") {
        let touches: usize = n.parse().expect("a touch count");
        let tree = Tree::get(Shape::Wide { packages: 1000 }).expect("build tree");
        for _ in 0..runs {
            let mut session = floor::NaiveSession::start(&tree.home, &tree.root, MAX_SOURCE_BYTES);
            let mut spent = Duration::ZERO;
            for k in 0..touches {
                let file = drive::package_file(&tree, drive::nth_package(k, 1000));
                let t = Instant::now();
                session.touch(&file);
                spent += t.elapsed();
            }
            black_box(&session);
            times.push(spent);
        }
    } else if case == "rules-touch" || case == "rules-start" {
        let tree = support::rules::tree().expect("build the rules tree");
        let config = support::rules::config();
        let file = support::rules::touched(&tree);
        for _ in 0..runs {
            let spent = rt.block_on(async {
                let provider = drive::disk(&tree).expect("open roots");
                let mut session =
                    Session::start_with(provider, &tree, &tree.cwd, config.clone()).await;
                let t = Instant::now();
                if case == "rules-touch" {
                    black_box(session.touch(&file).await);
                }
                t.elapsed()
            });
            times.push(spent);
        }
    } else if let Some(n) = case.strip_prefix("touch/") {
        // `touch/N` or `touch/N/edit1pct`, as the quick pass times them:
        // the touches only (not the session start, not the edits).
        let (n, edit) = match n.strip_suffix("/edit1pct") {
            Some(n) => (n, true),
            None => (n, false),
        };
        let touches: usize = n.parse().expect("a touch count");
        let tree = Tree::get(Shape::Wide { packages: 1000 }).expect("build tree");
        if edit {
            tree.begin_edits().expect("unstamp");
        }
        for run in 0..runs {
            let mut spent = Duration::ZERO;
            rt.block_on(async {
                let provider = drive::disk(&tree).expect("open roots");
                let mut session = Session::start(provider, &tree, &tree.root, 65_536).await;
                for k in 0..touches {
                    if edit {
                        let rev = u32::try_from(run * touches + k).unwrap_or(u32::MAX);
                        for p in drive::edits_before(k, 1000) {
                            tree.edit_package(p, rev + 1).expect("edit");
                        }
                    }
                    let file = drive::package_file(&tree, drive::nth_package(k, 1000));
                    let t = Instant::now();
                    black_box(session.touch(&file).await);
                    spent += t.elapsed();
                }
            });
            times.push(spent);
        }
        if edit {
            for k in 1..touches {
                for p in drive::edits_before(k, 1000) {
                    tree.edit_package(p, 0).expect("restore");
                }
            }
            tree.end_edits().expect("stamp");
        }
    } else {
        panic!("unknown case {case}");
    }
    times.sort();
    println!(
        "{case}: median {:.3} ms over {runs} runs",
        times[runs / 2].as_secs_f64() * 1e3
    );
}

/// Names the provider calls of one `show` of `label`'s tree through the
/// pooled provider, one line each, and counts them: each is one hand-off
/// to the blocking pool.
fn calls(rt: &tokio::runtime::Runtime, label: &str) {
    /// The kind of each call, in order.
    #[derive(Debug, Default)]
    struct Log(Mutex<Vec<String>>);
    impl Observe for Log {
        fn before(&self, call: Call<'_>) {
            let line = format!("{call:?}");
            let kind = line.split([' ', '(']).next().unwrap_or_default().to_owned();
            self.0.lock().expect("not poisoned").push(kind);
        }
    }
    let shape = shape(label).expect("a tree label such as deep-16");
    let tree = Tree::get(shape).expect("build tree");
    let config = config_for(label);
    rt.block_on(async {
        let pooled = drive::pooled_disk(&tree).expect("open roots");
        let logged = Arc::new(Forward::new(pooled, Log::default()));
        black_box(drive::show_with(logged.clone(), &tree, &config).await);
        let log = logged.observer().0.lock().expect("not poisoned");
        for kind in log.iter() {
            println!("{kind}");
        }
        println!("calls/{label}: {} provider calls", log.len());
    });
}

/// The configuration of `label`'s baseline: imports on for an imports tree.
fn config_for(label: &str) -> dsh_instructions_state::Config {
    if label.starts_with("imports") {
        drive::imports_config()
    } else {
        drive::config(65_536)
    }
}
