//! The session-log cases of `cargo xtask bench` (R-LOG-5): one whole
//! writer cycle — `SessionLog::open` (lock, checkpoint, tail, repair check)
//! plus one durable `append`, then drop — on a session about to get its
//! 10,000th event, beside the same cycle on one about to get its 10th.
//!
//! Output: rows in the quick pass's format,
//! `case  ours_ms  floor_ms  ratio  bytes_read  ops_per_dir`: ours is the
//! 10,000th-event cycle, the floor the 10th-event one, measured alternately
//! in the same run; `bytes_read` is what ours parsed of the log
//! ([`dsh_session_log::OpenReport::bytes_read`]). Arguments not starting with
//! `-` filter cases by substring. Before every timed cycle the session's
//! files are restored to the same bytes (not timed), so every run opens the
//! same session.

use std::hint::black_box;
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_session_log::{CHECKPOINT_FILE_NAME, EventKind, LOG_FILE_NAME, SessionHeader, SessionLog};
use serde_json::json;

/// Timed runs per side.
const RUNS: usize = 41;

/// The events of a realistic session, in a repeating pattern: prompts,
/// workspace messages with their typed source (two per ten events, a heavy
/// share), touches, steps, and every 500 events a compaction.
fn event(i: u64) -> EventKind {
    match i % 10 {
        0 => EventKind::TurnStart,
        1 => EventKind::Message {
            role: "user".into(),
            parts: vec![format!("prompt {i}")],
            source: None,
        },
        2 | 6 => EventKind::Message {
            role: "user".into(),
            parts: vec![format!(
                "<system-reminder>{}</system-reminder>",
                "x".repeat(200)
            )],
            source: Some(json!({
                "kind": "agent-instructions",
                "baseline": i % 100 == 2,
                "changes": [{"action": "set", "path": format!("pkg{i}/AGENTS.md"), "digest": "0123456789abcdef0123456789abcdef01234567"}]
            })),
        },
        3 => EventKind::StepStart,
        4 | 5 => EventKind::Tool {
            name: "read".into(),
            args: json!({"file_path": format!("pkg{i}/src/lib.rs")}),
            ok: true,
            cancelled: false,
            token: Some(format!("t{i}")),
            parent: None,
        },
        7 => EventKind::StepEnd,
        // The agent compacts when its context fills, hiding everything
        // before (R-HOOK-3): the visible surface stays bounded, as in a real
        // session, while the history grows.
        8 if i % 500 == 8 => EventKind::Compaction {
            hide: (i.saturating_sub(500)..i).collect(),
        },
        _ => EventKind::TurnEnd,
    }
}

/// A closed session with `events` events, written through the store (so it
/// has the checkpoints a real one would); returns the log's path.
fn session(root: &Utf8Path, name: &str, events: u64) -> Utf8PathBuf {
    let dir = root.join(name);
    let mut log = SessionLog::create(&dir, SessionHeader::new(name, "/work/repo")).expect("create");
    for i in 0..events {
        log.append(event(i)).expect("append");
    }
    log.path().to_owned()
}

/// The files of a session, to restore before each run.
struct Snapshot {
    dir: Utf8PathBuf,
    files: Vec<(String, Vec<u8>)>,
}

impl Snapshot {
    fn take(log: &Utf8Path, with_checkpoint: bool) -> Self {
        let dir = log.parent().expect("dir").to_owned();
        let mut files = vec![(
            LOG_FILE_NAME.to_owned(),
            std::fs::read(log).expect("read log"),
        )];
        if with_checkpoint && let Ok(bytes) = std::fs::read(dir.join(CHECKPOINT_FILE_NAME)) {
            files.push((CHECKPOINT_FILE_NAME.to_owned(), bytes));
        }
        Self { dir, files }
    }

    fn restore(&self) {
        let _ = std::fs::remove_file(self.dir.join(CHECKPOINT_FILE_NAME));
        for (name, bytes) in &self.files {
            std::fs::write(self.dir.join(name), bytes).expect("restore");
        }
    }
}

/// One timed writer cycle; returns its time and the bytes the open parsed.
fn cycle(snapshot: &Snapshot) -> (Duration, u64) {
    snapshot.restore();
    let path = snapshot.dir.join(LOG_FILE_NAME);
    let start = Instant::now();
    let (mut log, report) = SessionLog::open(&path).expect("open");
    let seq = log
        .append(EventKind::Tool {
            name: "read".into(),
            args: json!({"file_path": "src/main.rs"}),
            ok: true,
            cancelled: false,
            token: Some("bench".into()),
            parent: None,
        })
        .expect("append");
    black_box((seq, log.summary().workspace().len()));
    drop(log);
    (start.elapsed(), report.bytes_read)
}

/// Visible workspace messages of a session.
fn visible(log: &Utf8Path) -> usize {
    let (log, _) = SessionLog::open(log).expect("open");
    log.summary().workspace().len()
}

fn median_ms(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

/// Alternates both sides; returns (ours_ms, floor_ms, ours bytes_read).
fn alternate(ours: &Snapshot, floor: &Snapshot) -> (f64, f64, u64) {
    // Warm-up of each (page cache, allocator), not timed.
    let (_, bytes) = cycle(ours);
    cycle(floor);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        a.push(cycle(ours).0);
        b.push(cycle(floor).0);
    }
    (median_ms(a), median_ms(b), bytes)
}

fn print_row(case: &str, ours: f64, floor: f64, bytes: u64) {
    println!(
        "{case:<36} {ours:>10.3} {floor:>10.3} {:>7.2} {bytes:>11} {:>11}",
        ours / floor,
        "-"
    );
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |case: &str| filters.is_empty() || filters.iter().any(|f| case.contains(f));
    let cases = [
        "log/open-append/10000th-vs-10th",
        "log/open-append/10000th-no-checkpoint",
        "log/open-append/10000th-vs-10th/tmpfs",
        "log/open-append/10000th-vs-1000th/tmpfs",
    ];
    if !cases.iter().any(|c| wanted(c)) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    // tmpfs, where there is one: fdatasync is free there, so its rows show
    // the CPU cost that the disk's flush hides.
    let shm = std::path::Path::new("/dev/shm");
    let tmpfs = shm
        .is_dir()
        .then(|| tempfile::tempdir_in(shm).ok())
        .flatten();
    for (i, dir) in [Some(&tmp), tmpfs.as_ref()].into_iter().enumerate() {
        let Some(dir) = dir else { continue };
        let selected: Vec<&str> = cases
            .iter()
            .copied()
            .filter(|c| c.ends_with("/tmpfs") == (i == 1) && wanted(c))
            .collect();
        if selected.is_empty() {
            continue;
        }
        let root = Utf8Path::from_path(dir.path()).expect("utf-8 temp dir");
        let long = session(root, "long", 9_999);
        let short = session(root, "short", 9);
        let mid = session(root, "mid", 999);
        for case in selected {
            // The no-checkpoint case: what the cycle costs when the
            // checkpoint is lost — a whole read (the open then writes a new
            // one, restored away before each run).
            let with_checkpoint = !case.ends_with("no-checkpoint");
            let floor = if case.contains("1000th") {
                &mid
            } else {
                &short
            };
            let (ours, floor_ms, bytes) = alternate(
                &Snapshot::take(&long, with_checkpoint),
                &Snapshot::take(floor, true),
            );
            print_row(case, ours, floor_ms, bytes);
        }
        let size = |p: &Utf8Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let ck = |p: &Utf8Path| size(&p.with_file_name(CHECKPOINT_FILE_NAME));
        println!(
            "# log: sessions of 9,999 / 999 / 9 events: {} / {} / {} bytes, checkpoints {} / {} / {} bytes, {} / {} / {} visible workspace messages, in {root}",
            size(&long),
            size(&mid),
            size(&short),
            ck(&long),
            ck(&mid),
            ck(&short),
            visible(&long),
            visible(&mid),
            visible(&short),
        );
    }
    println!(
        "# log: each run opens the session (lock, checkpoint, tail), appends one event (fdatasync) and drops it"
    );
}
