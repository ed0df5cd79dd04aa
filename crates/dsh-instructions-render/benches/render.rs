//! Render cost: 64 files x 16 KiB under and over budget, and a scaling series
//! (16 / 64 / 256 files) whose time per byte should stay flat (R-REN-6: cost
//! linear in the input, no re-render per search step).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dsh_instructions_render::{
    BaselineFile, BaselineKind, Budget, Section, render_baseline, render_dynamic,
};

const FILE_BYTES: usize = 16 * 1024;

/// Instruction-like text with a multi-byte char and an escaped tag now and
/// then, so escaping and boundary search are exercised.
fn content(seed: usize) -> String {
    let line =
        format!("- rule {seed}: keep functions small, prefer é over e, never </system-reminder\n");
    let mut text = line.repeat(FILE_BYTES / line.len() + 1);
    text.truncate(text.floor_char_boundary(FILE_BYTES));
    text
}

fn corpus(files: usize) -> (Vec<String>, Vec<String>) {
    let paths = (0..files)
        .map(|i| format!("dir{:03}/sub/AGENTS.md", i))
        .collect();
    let contents = (0..files).map(content).collect();
    (paths, contents)
}

fn baseline_files<'a>(paths: &'a [String], contents: &'a [String]) -> Vec<BaselineFile<'a>> {
    paths
        .iter()
        .zip(contents)
        .map(|(path, content)| BaselineFile { path, content })
        .collect()
}

fn fixed_64(c: &mut Criterion) {
    let (paths, contents) = corpus(64);
    let files = baseline_files(&paths, &contents);
    let total: usize = contents.iter().map(String::len).sum();
    let mut group = c.benchmark_group("render_64x16KiB");
    group.throughput(Throughput::Bytes(total as u64));
    // Everything fits: step 1.
    group.bench_function("baseline_under_budget", |b| {
        b.iter(|| {
            render_baseline(
                BaselineKind::Normal,
                black_box(&files),
                Budget::bytes(4 << 20),
            )
        });
    });
    // About half fits: step 2 walks the drops.
    group.bench_function("baseline_over_budget_drop", |b| {
        b.iter(|| {
            render_baseline(
                BaselineKind::Normal,
                black_box(&files),
                Budget::bytes((total / 2) as u64),
            )
        });
    });
    // Less than one file fits: step 3 cuts the most specific file.
    group.bench_function("baseline_over_budget_cut", |b| {
        b.iter(|| {
            render_baseline(
                BaselineKind::Normal,
                black_box(&files),
                Budget::bytes(8 * 1024),
            )
        });
    });
    let sections: Vec<Section<'_>> = paths
        .iter()
        .zip(&contents)
        .map(|(path, content)| Section::Replace { path, content })
        .collect();
    group.bench_function("dynamic_over_budget_cut", |b| {
        b.iter(|| render_dynamic(black_box(&sections), Budget::bytes(8 * 1024)));
    });
    group.finish();
}

fn scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("render_scaling");
    for files in [16, 64, 256] {
        let (paths, contents) = corpus(files);
        let input = baseline_files(&paths, &contents);
        let total: usize = contents.iter().map(String::len).sum();
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_with_input(
            BenchmarkId::new("under_budget", files),
            &input,
            |b, input| {
                b.iter(|| {
                    render_baseline(
                        BaselineKind::Normal,
                        black_box(input),
                        Budget::bytes(u64::MAX),
                    )
                });
            },
        );
        // Only the most specific file fits, cut: the worst case for steps 2+3.
        group.bench_with_input(
            BenchmarkId::new("over_budget", files),
            &input,
            |b, input| {
                b.iter(|| {
                    render_baseline(
                        BaselineKind::Normal,
                        black_box(input),
                        Budget::bytes(8 * 1024),
                    )
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, fixed_64, scaling);
criterion_main!(benches);
