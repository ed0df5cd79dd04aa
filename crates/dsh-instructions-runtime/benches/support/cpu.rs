//! The calling thread's CPU time, split between user space and the kernel,
//! for the quick pass's `split/` rows: where a ratio's gap is spent. Read
//! from `/proc/thread-self/stat` (no `unsafe`, no C library call), in
//! clock ticks, so a side is run back to back for long enough that a tick
//! is a small part of it.

use std::time::{Duration, Instant};

/// Thread CPU time so far, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ticks {
    /// Spent in user space.
    pub user: u64,
    /// Spent in the kernel on the thread's behalf.
    pub system: u64,
}

/// Parses the `utime` and `stime` fields (14 and 15) of a
/// `/proc/<pid>/task/<tid>/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces, so fields are counted after its last
/// `)`.
pub(crate) fn parse_stat(line: &str) -> Option<Ticks> {
    let rest = &line[line.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // After `)`: field 3 (state) is the first; utime is field 14.
    let user = fields.nth(11)?.parse().ok()?;
    let system = fields.next()?.parse().ok()?;
    Some(Ticks { user, system })
}

/// This thread's CPU time so far; `None` where `/proc` is not there.
pub(crate) fn now() -> Option<Ticks> {
    parse_stat(&std::fs::read_to_string("/proc/thread-self/stat").ok()?)
}

/// Per-run CPU time of one side, in microseconds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PerRun {
    /// User space.
    pub user_us: f64,
    /// Kernel.
    pub system_us: f64,
}

/// Runs `job` back to back for at least `span` (and at least once) and
/// returns its CPU time per run; `None` without `/proc`.
pub(crate) fn per_run(span: Duration, mut job: impl FnMut()) -> Option<PerRun> {
    let start = Instant::now();
    let before = now()?;
    let mut runs = 0u32;
    while runs == 0 || start.elapsed() < span {
        job();
        runs += 1;
    }
    let after = now()?;
    let tick_us = 1e6 / rustix::param::clock_ticks_per_second() as f64;
    let per = |a: u64, b: u64| (b.saturating_sub(a)) as f64 * tick_us / f64::from(runs);
    Some(PerRun {
        user_us: per(before.user, after.user),
        system_us: per(before.system, after.system),
    })
}
