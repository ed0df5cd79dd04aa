//! Crash safety of the session log (R-LOG-2): a writer process is killed
//! with SIGKILL at random moments, again and again on the same log; after
//! each kill the log is reopened and must hold every event the writer had
//! acknowledged, with a whole tail and a derivable surface.
//!
//! The writer is this test binary re-invoked with `DSH_CRASH_WRITER` set
//! (`--ignored --exact writer_child`; ignored in a normal run): it
//! creates or reopens the log, then appends events forever, printing
//! `ACK <seq>` (flushed) after each `append` returned `Ok`. An ACK line that
//! reached the parent is therefore an acknowledged event.
//!
//! SIGKILL loses no page-cache data, so this exercises the write/repair
//! protocol (whole lines, torn-tail truncation, atomic create, interrupted
//! markers), not the fsync calls themselves.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_session_log::{
    Event, EventKind, LOG_FILE_NAME, SessionHeader, SessionLog, parse::read_log, surface,
};

const WRITER_ENV: &str = "DSH_CRASH_WRITER";
const KILLS: u64 = 30;
/// Limits tried by the forced-tear rounds before the test gives up.
const FORCED_TRIES: u64 = 4;

/// The event the writer appends as sequence number `seq`, so the parent can
/// check content, not just presence. Some lines are large, so that a kill
/// can land in the middle of a `write(2)` and tear the tail.
fn event_for(seq: u64) -> EventKind {
    match seq % 9 {
        0 => EventKind::TurnStart,
        1 => EventKind::StepStart,
        2 | 5 => EventKind::Message {
            role: "user".into(),
            parts: vec![format!("message {seq} ✓ ").repeat((seq % 40) as usize + 1)],
            source: None,
        },
        3 => EventKind::Message {
            role: "assistant".into(),
            parts: vec!["x".repeat(if seq % 27 == 3 { 2 << 20 } else { 300 })],
            source: Some(serde_json::json!({"kind": "agent-instructions", "seq": seq})),
        },
        4 => EventKind::Tool {
            name: "read".into(),
            args: serde_json::json!({"file_path": format!("src/{seq}.rs")}),
            ok: true,
            cancelled: false,
            token: Some(format!("t{seq}")),
            parent: None,
        },
        6 => EventKind::Compaction {
            hide: vec![seq.saturating_sub(4), seq.saturating_sub(1)],
        },
        7 => EventKind::StepEnd,
        _ => EventKind::TurnEnd,
    }
}

/// The child side: never returns while the parent lets it run.
fn writer(dir: &Utf8Path) {
    let path = dir.join(LOG_FILE_NAME);
    let mut log = if path.exists() {
        SessionLog::open(&path).expect("reopen").0
    } else {
        match SessionLog::create(dir, SessionHeader::new("crash", "/work/repo")) {
            Ok(log) => log,
            // A previous child was killed after the link but before return.
            Err(_) => SessionLog::open(&path).expect("open after create race").0,
        }
    };
    let mut out = std::io::stdout().lock();
    // libtest may have printed a partial line; start ours on a fresh one.
    writeln!(out).expect("stdout");
    for _ in 0..1_000_000 {
        let next = log.summary().next_seq().expect("seq");
        let seq = log.append(event_for(next)).expect("append");
        assert_eq!(seq, next);
        writeln!(out, "ACK {seq}").expect("stdout");
        out.flush().expect("flush");
    }
}

/// The writer process, not a test of its own: ignored in a normal run (so
/// it is not counted as a pass), and run by [`run_and_kill`] with
/// `--ignored --exact writer_child` and the log directory in
/// `DSH_CRASH_WRITER`. Without that variable it fails.
#[test]
#[ignore = "writer child of acknowledged_events_survive_sigkill_r_log_2; started by it"]
fn writer_child() {
    let dir = std::env::var(WRITER_ENV)
        .expect("the writer child: started by acknowledged_events_survive_sigkill_r_log_2");
    writer(Utf8Path::new(&dir));
}

/// splitmix64, seeded, for kill timing.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// When to kill a writer.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// After this many acknowledgements (0 = during start-up).
    Acks(usize),
    /// Right after the acknowledgement that precedes a 2 MiB line, so the
    /// kill tends to land inside its `write(2)`.
    BeforeBigLine,
}

/// Runs one writer, kills it at `at` plus `extra_us` microseconds, and
/// returns the acknowledged sequence numbers. With `fsize_blocks` the writer
/// runs under `ulimit -f` (512- or 1024-byte blocks, as the shell counts):
/// the append that crosses the limit is cut short by the kernel and the
/// writer dies of SIGXFSZ, leaving the line it was writing torn.
fn run_and_kill(dir: &Utf8Path, at: KillAt, extra_us: u64, fsize_blocks: Option<u64>) -> Vec<u64> {
    let exe = std::env::current_exe().expect("test binary");
    let mut command = match fsize_blocks {
        None => Command::new(exe),
        Some(blocks) => {
            let mut c = Command::new("sh");
            // `ulimit -c 0`: the signal would otherwise leave a core file.
            c.args([
                "-c",
                r#"ulimit -c 0; ulimit -f "$1" || exit 99; shift; exec "$@""#,
                "sh",
            ])
            .arg(blocks.to_string())
            .arg(exe);
            c
        }
    };
    let mut child = command
        .args([
            "--ignored",
            "--exact",
            "writer_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_ENV, dir.as_str())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn writer");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(seq) = line
                .rsplit_once("ACK ")
                .and_then(|(_, n)| n.trim().parse::<u64>().ok())
            {
                seen.push(seq);
                let _ = tx.send(seq);
            }
        }
        seen
    });
    let mut count = 0;
    loop {
        let done = match at {
            KillAt::Acks(n) => count >= n,
            KillAt::BeforeBigLine => false,
        };
        if done {
            break;
        }
        // Patience, not a verdict: a writer silent this long is killed as
        // it stands (decision 0082; a debug writer starts in well under a
        // second beside other work).
        let Ok(seq) = rx.recv_timeout(Duration::from_secs(120)) else {
            break;
        };
        count += 1;
        if matches!(at, KillAt::BeforeBigLine) && (seq + 1) % 27 == 3 {
            break;
        }
    }
    if matches!(at, KillAt::BeforeBigLine) {
        // Kill as soon as the big line starts reaching the file (the size
        // grows page by page during the write), or after `extra_us`.
        let path = dir.join(LOG_FILE_NAME);
        let size = || std::fs::metadata(&path).map_or(0, |m| m.len());
        let start = size();
        let deadline = std::time::Instant::now() + Duration::from_micros(extra_us);
        while size() == start && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
    } else {
        std::thread::sleep(Duration::from_micros(extra_us));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    // Lines already in the pipe were printed before the kill: acknowledged.
    reader.join().expect("reader thread")
}

fn check_events(events: &[Event], acked: &[u64], round: u64) {
    for pair in events.windows(2) {
        assert!(pair[0].seq < pair[1].seq, "round {round}: seq order");
    }
    for &seq in acked {
        let event = events
            .iter()
            .find(|e| e.seq == seq)
            .unwrap_or_else(|| panic!("round {round}: acknowledged event {seq} lost"));
        assert_eq!(
            event.kind,
            event_for(seq),
            "round {round}: event {seq} changed"
        );
    }
}

/// What one round left behind, before repair.
struct Seen {
    torn: bool,
    interrupted: bool,
}

/// Checks the log after a kill: every acknowledged event is there, before
/// and after repair, and the repaired log is whole. `None`: no log yet.
fn check_round(path: &Utf8Path, acked: &[u64], round: u64) -> Option<Seen> {
    if !path.exists() {
        // Killed before the log was linked into place: nothing was
        // acknowledged, and no partial log is visible.
        assert!(acked.is_empty(), "round {round}: log vanished");
        return None;
    }
    // Before repair: the header is always whole (atomic create) and the
    // bytes parse whatever the tail holds.
    let bytes = std::fs::read(path).expect("read log");
    let raw = read_log(&bytes).unwrap_or_else(|e| panic!("round {round}: {e}"));
    check_events(&raw.events, acked, round);
    let torn = raw.torn_tail.is_some();

    let (log, report) = SessionLog::open(path).expect("reopen");
    let interrupted = report.interrupted.is_some();
    let events = log.events().expect("events");
    check_events(&events, acked, round);
    assert!(report.skipped.is_empty(), "round {round}: {report:?}");

    // After repair: the tail is whole and nothing is left to repair.
    let bytes = std::fs::read(path).expect("read repaired log");
    assert_eq!(bytes.last(), Some(&b'\n'), "round {round}: tail not whole");
    let repaired = read_log(&bytes).expect("repaired log parses");
    assert_eq!(repaired.torn_tail, None, "round {round}");
    assert_eq!(repaired.valid_len, bytes.len() as u64);
    assert!(!repaired.has_open_turn(), "round {round}: turn left open");
    assert_eq!(repaired.events, events);
    // The summary kept through checkpoint + tail equals a whole fold
    // (R-LOG-5).
    assert_eq!(
        log.summary(),
        &dsh_session_log::SurfaceSummary::of(&events),
        "round {round}"
    );

    // The surface derives, and hides exactly what compactions list.
    let shown: Vec<u64> = surface(&events).iter().map(|e| e.seq).collect();
    assert_eq!(
        shown,
        repaired.surface().iter().map(|e| e.seq).collect::<Vec<_>>()
    );
    for event in &events {
        let hidden = events.iter().any(|c| {
            matches!(&c.kind, EventKind::Compaction { hide } if c.seq > event.seq && hide.contains(&event.seq))
        });
        let compaction = matches!(event.kind, EventKind::Compaction { .. });
        assert_eq!(
            shown.contains(&event.seq),
            !hidden && !compaction,
            "round {round}: surface of {}",
            event.seq
        );
    }
    drop(log);
    Some(Seen { torn, interrupted })
}

#[test]
fn acknowledged_events_survive_sigkill_r_log_2() {
    // tmpfs where there is one: its 4 KiB pages let a kill land between
    // pages of a large write (a torn tail), and it spares the disk.
    let shm = std::path::Path::new("/dev/shm");
    let tmp = match shm.is_dir().then(|| tempfile::tempdir_in(shm)) {
        Some(Ok(tmp)) => tmp,
        _ => tempfile::tempdir().expect("tempdir"),
    };
    let dir = Utf8PathBuf::try_from(tmp.path().join("session")).expect("utf-8");
    let path = dir.join(LOG_FILE_NAME);
    let mut rng = Rng(0xc4a5_11fe);
    let mut acked_total: Vec<u64> = Vec::new();
    let mut torn = 0;
    let mut interrupted = 0;
    for round in 0..KILLS {
        // Mostly mid-stream kills; some right at start-up (during create or
        // open-and-repair).
        let at = match rng.next() % 6 {
            0 => KillAt::Acks(0),
            1 | 2 => KillAt::BeforeBigLine,
            _ => KillAt::Acks((rng.next() % 25) as usize),
        };
        let extra_us = match at {
            // A deadline only: the kill comes when the big line's write
            // starts (encoding 2 MiB takes tens of ms in a debug build).
            KillAt::BeforeBigLine => 3_000_000,
            KillAt::Acks(_) => rng.next() % 3_000,
        };
        let acked = run_and_kill(&dir, at, extra_us, None);
        if std::env::var_os("DSH_CRASH_DEBUG").is_some() {
            eprintln!(
                "round {round}: {at:?} +{extra_us}us acked {:?} len {:?}",
                acked.last(),
                std::fs::metadata(&path).map(|m| m.len()).ok()
            );
        }
        acked_total.extend(&acked);

        let Some(seen) = check_round(&path, &acked_total, round) else {
            continue;
        };
        torn += u64::from(seen.torn);
        interrupted += u64::from(seen.interrupted);
    }
    assert!(
        acked_total.len() as u64 > KILLS,
        "the writers acknowledged almost nothing: {}",
        acked_total.len()
    );
    let random_torn = torn;

    // A random kill tears a tail only when it lands inside a write, which is
    // rare. These rounds tear one by construction: the writer runs under a
    // file-size limit a few KiB above the log's size, so the append that
    // crosses it is cut short by the kernel and the writer dies of SIGXFSZ
    // mid-line. A line that happens to end exactly on the limit tears
    // nothing, so a few limits are tried; each round is checked like the
    // random ones.
    let mut forced = 0;
    for attempt in 0..FORCED_TRIES {
        let round = KILLS + attempt;
        let size = std::fs::metadata(&path).expect("log exists by now").len();
        let blocks = size.div_ceil(512) + 8 + 3 * attempt;
        // The append that crosses the limit may be the writer's first (when
        // the next event is the 2 MiB line, which depends on how far the
        // random rounds got): it then acknowledges nothing, and the round is
        // checked all the same. A writer that never ran (the limit refused)
        // tears nothing, which the count of forced tears below catches.
        let acked = run_and_kill(&dir, KillAt::Acks(usize::MAX), 0, Some(blocks));
        acked_total.extend(&acked);
        let seen = check_round(&path, &acked_total, round).expect("the log exists");
        interrupted += u64::from(seen.interrupted);
        if seen.torn {
            forced += 1;
            break;
        }
    }
    torn += forced;
    assert_eq!(
        forced, 1,
        "no append cut short by the file-size limit left a torn tail in {FORCED_TRIES} tries"
    );
    assert!(torn > 0);
    eprintln!(
        "{KILLS} kills + {forced} forced tear, {} acknowledged events, {torn} torn tails \
         ({random_torn} from random kills), {interrupted} interrupted turns",
        acked_total.len()
    );
}
