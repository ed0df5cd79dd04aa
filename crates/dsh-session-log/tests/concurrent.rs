//! Several writer processes on one session (R-LOG-4), with real processes:
//! this test binary re-invoked with `DSH_LOG_CHILD=<role>` runs one child
//! role (`--ignored --exact child --nocapture`; `child` is ignored in a
//! normal run, so it never counts as a passing test) and answers on stdout.
//!
//! - `append`: create-or-open the session locked, note what it saw, append
//!   `K` events, answer `SAW <events> <last_seq> ACK <seq>…`.
//! - `hold`: open locked, optionally leave half a line in the file as an
//!   append in progress would, answer `HOLDING`, then wait to be killed.
//!
//! Every wait is bounded; children still running at a bound are killed and
//! the test fails naming the bound.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_session_log::{
    EventKind, LOCK_FILE_NAME, LOG_FILE_NAME, LockWait, LogError, SessionHeader, SessionLog,
    read_log_file,
};

const CHILD_ENV: &str = "DSH_LOG_CHILD";
const DIR_ENV: &str = "DSH_LOG_DIR";
const TAG_ENV: &str = "DSH_LOG_TAG";
const TORN_ENV: &str = "DSH_LOG_TORN";
/// Appends per writer per round.
const K: u64 = 5;
/// Writers per round, and rounds.
const WRITERS: usize = 40;
const ROUNDS: usize = 3;
/// Generous: 40 debug-build processes on 2 busy cores queue for the lock.
const CHILD_LOCK_WAIT: Duration = Duration::from_secs(120);
const ROUND_BOUND: Duration = Duration::from_secs(300);

/// The event writer `tag` appends as its `k`-th, so the parent can find it.
fn event_for(tag: &str, k: u64) -> EventKind {
    if k.is_multiple_of(2) {
        EventKind::Message {
            role: "user".into(),
            parts: vec![format!("{tag}/{k}")],
            source: Some(serde_json::json!({"writer": tag, "k": k})),
        }
    } else {
        EventKind::Tool {
            name: "read".into(),
            args: serde_json::json!({"file_path": format!("{tag}/{k}")}),
            ok: true,
            cancelled: false,
            token: Some(format!("{tag}/{k}")),
            parent: None,
        }
    }
}

/// The tag and `k` an event was written with.
fn tag_of(kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::Message { parts, .. } => parts.first().cloned(),
        EventKind::Tool { token, .. } => token.clone(),
        _ => None,
    }
}

fn child_append(dir: &Utf8Path, tag: &str) {
    let wait = LockWait::up_to(CHILD_LOCK_WAIT);
    // Start together: wait for the parent's signal file.
    let go = dir.with_file_name("go");
    while !go.exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut log = match SessionLog::create_locked(dir, SessionHeader::new("c", "/w"), wait) {
        Ok(log) => log,
        Err(LogError::AlreadyExists { .. }) => {
            let (log, report) =
                SessionLog::open_locked(&dir.join(LOG_FILE_NAME), wait).expect("open");
            assert!(report.is_clean(), "{report:?}");
            log
        }
        Err(e) => panic!("create: {e}"),
    };
    let saw = log.summary().event_count();
    let last = log.summary().last_seq().unwrap_or(0);
    let mut acks = Vec::new();
    for k in 0..K {
        acks.push(log.append(event_for(tag, k)).expect("append").to_string());
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "\nSAW {saw} {last} ACK {}", acks.join(" ")).expect("stdout");
    out.flush().expect("flush");
}

fn child_hold(dir: &Utf8Path, torn: bool) {
    let path = dir.join(LOG_FILE_NAME);
    // A bounded wait, not `no_wait`: while another test thread of the parent
    // forks its children, a child can briefly share the parent's lock file
    // description (until its exec closes it), so the parent's released
    // lock may still look held for a moment.
    let (mut log, _) =
        SessionLog::open_locked(&path, LockWait::up_to(Duration::from_secs(30))).expect("open");
    let seq = log.append(EventKind::TurnStart).expect("append");
    if torn {
        // What a killed append leaves: the first half of its line, no newline.
        let mut raw = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("raw open");
        raw.write_all(br#"{"seq":99,"type":"mess"#)
            .expect("raw write");
        raw.sync_all().expect("raw sync");
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "\nHOLDING {seq}").expect("stdout");
    out.flush().expect("flush");
    drop(out);
    // Hold the lock until killed (or, if the parent died, until stdin ends).
    let _ = std::io::stdin().read(&mut [0]);
    drop(log);
}

/// The child side, not a test of its own: ignored in a normal run (so it is
/// not counted as a pass), and run by [`spawn`] with `--ignored --exact
/// child` and the role in `DSH_LOG_CHILD`. Without the role it fails.
#[test]
#[ignore = "child role of the other tests in this file; started by them"]
fn child() {
    let role = std::env::var(CHILD_ENV)
        .expect("a child role: started by the tests of concurrent.rs with DSH_LOG_CHILD set");
    let dir = Utf8PathBuf::from(std::env::var(DIR_ENV).expect("dir"));
    match role.as_str() {
        "append" => child_append(&dir, &std::env::var(TAG_ENV).expect("tag")),
        "hold" => child_hold(&dir, std::env::var_os(TORN_ENV).is_some()),
        other => panic!("unknown role {other}"),
    }
}

fn spawn(role: &str, dir: &Utf8Path, envs: &[(&str, &str)]) -> Child {
    let exe = std::env::current_exe().expect("test binary");
    let mut command = Command::new(exe);
    command
        .args([
            "--ignored",
            "--exact",
            "child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, role)
        .env(DIR_ENV, dir.as_str())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        command.env(k, v);
    }
    command.spawn().expect("spawn child")
}

/// Waits for every child until `deadline`; kills the rest and fails.
fn wait_all(children: Vec<(String, Child)>, deadline: Instant) -> Vec<(String, String)> {
    let mut pending = children;
    let mut done = Vec::new();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for (tag, mut child) in pending {
            match child.try_wait().expect("try_wait") {
                Some(status) => {
                    let mut out = String::new();
                    let mut err = String::new();
                    child
                        .stdout
                        .take()
                        .expect("stdout")
                        .read_to_string(&mut out)
                        .expect("read stdout");
                    child
                        .stderr
                        .take()
                        .expect("stderr")
                        .read_to_string(&mut err)
                        .expect("read stderr");
                    assert!(status.success(), "writer {tag} failed: {out}\n{err}");
                    done.push((tag, out));
                }
                None => still.push((tag, child)),
            }
        }
        pending = still;
        if Instant::now() > deadline {
            let left: Vec<String> = pending.iter().map(|(t, _)| t.clone()).collect();
            for (_, mut child) in pending {
                let _ = child.kill();
                let _ = child.wait();
            }
            panic!("writers {left:?} still running after {ROUND_BOUND:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    done
}

/// One writer's answer.
struct Answer {
    tag: String,
    saw_events: u64,
    saw_last: u64,
    acks: Vec<u64>,
}

fn parse_answer(tag: String, out: &str) -> Answer {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("SAW "))
        .unwrap_or_else(|| panic!("writer {tag} gave no answer: {out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.get(2), Some(&"ACK"), "writer {tag}: {line}");
    let num = |w: &str| w.parse::<u64>().expect("number");
    Answer {
        tag,
        saw_events: num(words[0]),
        saw_last: num(words[1]),
        acks: words[3..].iter().map(|w| num(w)).collect(),
    }
}

fn tmp_session() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Utf8PathBuf::try_from(tmp.path().join("session")).expect("utf-8");
    (tmp, dir)
}

#[test]
fn forty_processes_append_at_once_and_nothing_is_lost_r_log_4() {
    let (_tmp, dir) = tmp_session();
    let go = dir.with_file_name("go");
    let mut answers = Vec::new();
    for round in 0..ROUNDS {
        let _ = std::fs::remove_file(&go);
        let children: Vec<(String, Child)> = (0..WRITERS)
            .map(|i| {
                let tag = format!("r{round}w{i}");
                let child = spawn("append", &dir, &[(TAG_ENV, &tag)]);
                (tag, child)
            })
            .collect();
        // Round 0 has no log yet: every writer races to create it.
        std::fs::write(&go, b"").expect("go");
        let outs = wait_all(children, Instant::now() + ROUND_BOUND);
        answers.extend(outs.into_iter().map(|(tag, out)| parse_answer(tag, &out)));
    }

    let path = dir.join(LOG_FILE_NAME);
    let parsed = read_log_file(&path).expect("read");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!(parsed.torn_tail, None);
    let total = (WRITERS * ROUNDS) as u64 * K;
    let seqs: Vec<u64> = parsed.events.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=total).collect::<Vec<_>>(),
        "every acknowledged event once, seqs 1..=N in order"
    );
    for a in &answers {
        assert_eq!(a.acks.len() as u64, K, "writer {}", a.tag);
        // The lock covers the whole cycle: a writer's events are contiguous
        // and follow exactly what it saw.
        assert_eq!(a.acks[0], a.saw_last + 1, "writer {}", a.tag);
        for (k, &seq) in a.acks.iter().enumerate() {
            let event = &parsed.events[(seq - 1) as usize];
            assert_eq!(event.seq, seq);
            assert_eq!(
                tag_of(&event.kind),
                Some(format!("{}/{k}", a.tag)),
                "event {seq} is writer {}'s {k}th",
                a.tag
            );
        }
        // What it saw is every event appended before its own.
        let before = parsed.events.iter().filter(|e| e.seq < a.acks[0]).count() as u64;
        assert_eq!(a.saw_events, before, "writer {}", a.tag);
    }
    // A clean reopen: nothing to repair, nothing skipped.
    let (log, report) = SessionLog::open(&path).expect("reopen");
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(log.summary().event_count(), total);
}

/// Waits (bounded) for the child's `HOLDING <seq>` line.
fn await_holding(child: &mut Child) -> u64 {
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(seq) = line.strip_prefix("HOLDING ") {
                let _ = tx.send(seq.trim().parse::<u64>().ok());
                break;
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(Some(seq)) => seq,
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("holder never reported holding the lock: {other:?}");
        }
    }
}

fn new_session(dir: &Utf8Path) -> Utf8PathBuf {
    let mut log = SessionLog::create(dir, SessionHeader::new("h", "/w")).expect("create");
    log.append(EventKind::TurnStart).expect("append");
    log.append(EventKind::TurnEnd).expect("append");
    log.path().to_owned()
}

#[test]
fn a_held_lock_times_out_other_writers_clearly_r_log_4() {
    let (_tmp, dir) = tmp_session();
    let path = new_session(&dir);
    let mut holder = spawn("hold", &dir, &[]);
    await_holding(&mut holder);
    let before = std::fs::read(&path).expect("read");

    let bound = Duration::from_millis(300);
    match SessionLog::open_locked(&path, LockWait::up_to(bound)) {
        Err(e @ LogError::LockTimeout { .. }) => {
            let LogError::LockTimeout { path: p, waited } = &e else {
                unreachable!()
            };
            assert_eq!(p, &dir.join(LOCK_FILE_NAME));
            assert!(*waited >= bound, "{waited:?}");
            let message = e.to_string();
            assert!(
                message.contains("busy") && message.contains(LOCK_FILE_NAME),
                "{message}"
            );
        }
        other => panic!("expected LockTimeout, got {other:?}"),
    }
    // The failed open changed nothing, and a lock-free reader still reads.
    assert_eq!(std::fs::read(&path).expect("read"), before);
    assert_eq!(read_log_file(&path).expect("read").events.len(), 3);

    holder.kill().expect("kill");
    holder.wait().expect("reap");
    let (log, report) = SessionLog::open_locked(&path, LockWait::up_to(Duration::from_secs(60)))
        .expect("free once the holder is gone");
    // The holder's open turn is closed for it.
    assert_eq!(report.interrupted, Some(4));
    assert_eq!(log.summary().last_seq(), Some(4));
}

#[test]
fn a_writer_killed_mid_append_releases_the_lock_and_loses_nothing_r_log_4() {
    let (_tmp, dir) = tmp_session();
    let path = new_session(&dir);
    let mut holder = spawn("hold", &dir, &[(TORN_ENV, "1")]);
    let acked = await_holding(&mut holder);
    let torn_len = std::fs::metadata(&path).expect("stat").len();

    // Another writer queues for the lock while the holder is mid-append…
    static WAITER_BUSY: AtomicU64 = AtomicU64::new(0);
    let waiter_path = path.clone();
    let waiter = std::thread::spawn(move || {
        let wait = LockWait::up_to(Duration::from_secs(120)).counting_busy(&WAITER_BUSY);
        SessionLog::open_locked(&waiter_path, wait)
    });
    // An observable state, not a guess at scheduling: the waiter has tried
    // the lock and found it held. Finishing first means it got a held lock.
    let deadline = Instant::now() + Duration::from_secs(120);
    while WAITER_BUSY.load(Ordering::SeqCst) == 0 {
        assert!(!waiter.is_finished(), "the waiter got a held lock");
        assert!(Instant::now() < deadline, "the waiter never tried the lock");
        std::thread::sleep(Duration::from_millis(1));
    }
    // …and has not cut the line the holder is still writing.
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), torn_len);
    assert!(!waiter.is_finished(), "the waiter got a held lock");

    holder.kill().expect("SIGKILL");
    holder.wait().expect("reap");
    let (mut log, report) = waiter.join().expect("waiter").expect("open after kill");
    let torn = report.truncated.expect("the torn tail was repaired");
    assert_eq!(torn.offset + torn.len, torn_len);
    assert_eq!(report.interrupted, Some(acked + 1));
    let events = log.events().expect("events");
    assert!(events.iter().any(|e| e.seq == acked), "acked {acked} lost");
    assert_eq!(log.append(EventKind::TurnStart).expect("append"), acked + 2);
    drop(log);
    let parsed = read_log_file(&path).expect("read");
    assert!(parsed.torn_tail.is_none() && parsed.skipped.is_empty());
}
