//! criterion benchmarks on large nested trees (R-BENCH-1, issue 7 item 2):
//! baseline compose per tree and budget, touch reconciliation sequences,
//! pre-step revalidation with many known scopes. Each group also measures the
//! in-process floor (`floor`) on the same tree so criterion's report shows
//! both. Rendering 64 x 16 KiB files lives in the render crate's
//! `benches/render.rs` and is not repeated here.
//!
//! Small sample sizes and short measurement times: the machine is shared and
//! the sequences are long; `cargo xtask bench` is the quick comparison.

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use support::drive::{self, Session};
use support::floor::{self, NaiveSession};
use support::tree::{MAX_SOURCE_BYTES, Shape, Tree, package_rel};

fn quick(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    c.benchmark_group("dsh")
}

fn baseline(c: &mut Criterion) {
    let rt = drive::runtime();
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
    ];
    let mut group = quick(c);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for shape in shapes {
        let tree = Tree::get(shape).expect("build tree");
        let label = shape.label();
        for kib in [64i64, 32] {
            group.bench_function(
                BenchmarkId::new("baseline", format!("{label}/{kib}K")),
                |b| {
                    b.iter(|| {
                        rt.block_on(async {
                            let provider = drive::disk(&tree).expect("open roots");
                            black_box(drive::show(provider, &tree, kib * 1024).await)
                        })
                    });
                },
            );
        }
        group.bench_function(BenchmarkId::new("baseline-floor", &label), |b| {
            b.iter(|| {
                black_box(floor::compose(
                    &tree.home,
                    &tree.cwd,
                    MAX_SOURCE_BYTES,
                    Some(65_536),
                ))
            });
        });
    }
    group.finish();
}

/// Edits 1% of the packages touched so far (at least one) before touch `k`.
fn edit_before(tree: &Tree, k: usize, packages: usize, rev: u32, edited: &mut Vec<usize>) {
    if k == 0 {
        return;
    }
    for i in 0..k.div_ceil(100) {
        let p = drive::nth_package((k * 31 + i * 97) % k, packages);
        tree.edit_package(p, rev + k as u32).expect("edit");
        edited.push(p);
    }
}

fn touches(c: &mut Criterion) {
    let rt = drive::runtime();
    let packages = 1000;
    let tree = Tree::get(Shape::Wide { packages }).expect("build tree");
    let mut group = quick(c);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5));
    let mut rev = 0u32;
    for count in [100usize, 1000] {
        for edit in [false, true] {
            let id = format!("{count}/{}", if edit { "edit1pct" } else { "clean" });
            if edit {
                tree.begin_edits().expect("unstamp");
            }
            group.bench_function(BenchmarkId::new("touch", &id), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        rev += 10_000;
                        let mut edited = Vec::new();
                        total += rt.block_on(async {
                            let provider = drive::disk(&tree).expect("open roots");
                            let mut s = Session::start(provider, &tree, &tree.root, 65_536).await;
                            let mut spent = Duration::ZERO;
                            for k in 0..count {
                                if edit {
                                    edit_before(&tree, k, packages, rev, &mut edited);
                                }
                                let file =
                                    drive::package_file(&tree, drive::nth_package(k, packages));
                                let t = Instant::now();
                                black_box(s.touch(&file).await);
                                spent += t.elapsed();
                            }
                            spent
                        });
                        for p in edited {
                            tree.edit_package(p, 0).expect("restore");
                        }
                    }
                    total
                });
            });
            group.bench_function(BenchmarkId::new("touch-floor", &id), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        rev += 10_000;
                        let mut edited = Vec::new();
                        let mut s = NaiveSession::start(&tree.home, &tree.root, MAX_SOURCE_BYTES);
                        for k in 0..count {
                            if edit {
                                edit_before(&tree, k, packages, rev, &mut edited);
                            }
                            let file = drive::package_file(&tree, drive::nth_package(k, packages));
                            let t = Instant::now();
                            s.touch(&file);
                            total += t.elapsed();
                        }
                        for p in edited {
                            tree.edit_package(p, 0).expect("restore");
                        }
                    }
                    total
                });
            });
            if edit {
                tree.end_edits().expect("stamp");
            }
        }
    }
    group.finish();
}

fn revalidate(c: &mut Criterion) {
    let rt = drive::runtime();
    let mut group = quick(c);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for packages in [1000usize, 10_000] {
        let tree = Tree::get(Shape::Wide { packages }).expect("build tree");
        let mut session = rt.block_on(async {
            let provider = drive::disk(&tree).expect("open roots");
            let mut s = Session::start(provider, &tree, &tree.root, 65_536).await;
            s.host.append_user(
                vec!["known".to_owned()],
                Some(drive::all_packages_loaded(&tree)),
            );
            assert!(s.revalidate().await.is_none(), "synthetic state matches");
            s
        });
        group.bench_function(BenchmarkId::new("revalidate", packages), |b| {
            b.iter(|| rt.block_on(async { black_box(session.revalidate().await) }));
        });
        let mut naive = NaiveSession::start(&tree.home, &tree.root, MAX_SOURCE_BYTES);
        let all: Vec<_> = (0..packages)
            .map(|p| tree.root.join(package_rel(p)))
            .collect();
        naive.reconcile(&all);
        group.bench_function(BenchmarkId::new("revalidate-floor", packages), |b| {
            b.iter(|| naive.reconcile(&[]));
        });
    }
    group.finish();
}

criterion_group!(benches, baseline, touches, revalidate);
criterion_main!(benches);
