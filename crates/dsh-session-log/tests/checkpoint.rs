//! The checkpoint is a shortcut, never an authority (R-LOG-5): the state an
//! open derives from checkpoint + tail equals the state of a whole read, and
//! a missing, stale or corrupt checkpoint is ignored and rebuilt.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_session_log::{
    CHECKPOINT_AFTER_BYTES, CHECKPOINT_FILE_NAME, EventKind, LOG_FILE_NAME, SessionHeader,
    SessionLog, SurfaceSummary, read_log_file,
};
use proptest::prelude::*;
use rstest::rstest;
use serde_json::{Value, json};

fn tmp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Utf8PathBuf::try_from(tmp.path().join("s")).expect("utf-8");
    (tmp, dir)
}

/// The summary of a whole, lock-free read of the file: the reference.
fn full_summary(path: &Utf8Path) -> SurfaceSummary {
    SurfaceSummary::of(&read_log_file(path).expect("read").events)
}

fn message(text: &str, source: bool) -> EventKind {
    EventKind::Message {
        role: "user".into(),
        parts: vec![text.into()],
        source: source.then(|| json!({"text": text})),
    }
}

fn kind() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        Just(EventKind::TurnStart),
        Just(EventKind::StepStart),
        Just(EventKind::StepEnd),
        Just(EventKind::TurnEnd),
        Just(EventKind::Interrupted),
        Just(EventKind::Settled),
        ("[a-z]{0,12}", any::<bool>()).prop_map(|(t, s)| message(&t, s)),
        ("[a-z]{1,6}", any::<bool>()).prop_map(|(p, ok)| EventKind::Tool {
            name: "read".into(),
            args: json!({ "file_path": p }),
            ok,
            cancelled: false,
            token: Some(p),
            parent: None,
        }),
        prop::collection::vec(0u64..40, 0..4).prop_map(|hide| EventKind::Compaction { hide }),
        "[a-z]{1,5}".prop_map(|x| EventKind::Unknown(json!({"type": format!("x_{x}"), "v": 1}))),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    Append(EventKind),
    Checkpoint,
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => kind().prop_map(Step::Append),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn checkpoint_plus_tail_equals_a_whole_read_r_log_5(steps in prop::collection::vec(step(), 0..60)) {
        let (_tmp, dir) = tmp_dir();
        let mut log = SessionLog::create(&dir, SessionHeader::new("p", "/w")).expect("create");
        let path = log.path().to_owned();
        let mut checkpointed = false;
        for step in steps {
            match step {
                Step::Append(kind) => {
                    log.append(kind).expect("append");
                }
                Step::Checkpoint => {
                    log.checkpoint().expect("checkpoint");
                    checkpointed = true;
                }
                Step::Reopen => {
                    drop(log);
                    let (reopened, report) = SessionLog::open(&path).expect("reopen");
                    prop_assert_eq!(report.from_checkpoint, checkpointed);
                    prop_assert!(report.skipped.is_empty() && report.truncated.is_none());
                    log = reopened;
                }
            }
            prop_assert_eq!(log.summary(), &full_summary(&path));
        }
        drop(log);
        // Without the checkpoint the same state is rebuilt from the log.
        let _ = std::fs::remove_file(dir.join(CHECKPOINT_FILE_NAME));
        let (log, report) = SessionLog::open(&path).expect("reopen");
        prop_assert!(!report.from_checkpoint);
        prop_assert_eq!(log.summary(), &full_summary(&path));
    }
}

/// A closed session longer than one checkpoint interval, with a checkpoint
/// at its end and a short tail after it.
fn long_session(dir: &Utf8Path) -> Utf8PathBuf {
    let mut log = SessionLog::create(dir, SessionHeader::new("long", "/w")).expect("create");
    let mut i = 0;
    while log.byte_len() < 2 * CHECKPOINT_AFTER_BYTES {
        log.append(EventKind::TurnStart).expect("append");
        let ws = log
            .append(message(&format!("ws {i}"), true))
            .expect("append");
        log.append(message(&"x".repeat(100), false))
            .expect("append");
        if i % 7 == 3 {
            log.append(EventKind::Compaction { hide: vec![ws] })
                .expect("append");
        }
        log.append(EventKind::TurnEnd).expect("append");
        i += 1;
    }
    log.checkpoint().expect("checkpoint");
    log.append(EventKind::TurnStart).expect("append");
    log.append(message("tail", true)).expect("append");
    log.append(EventKind::TurnEnd).expect("append");
    log.path().to_owned()
}

#[test]
fn an_open_reads_only_what_follows_the_checkpoint_r_log_5() {
    let (_tmp, dir) = tmp_dir();
    let path = long_session(&dir);
    let len = std::fs::metadata(&path).expect("stat").len();
    let (log, report) = SessionLog::open(&path).expect("open");
    assert!(report.from_checkpoint);
    assert!(report.is_clean(), "{report:?}");
    assert!(
        report.bytes_read < 1024,
        "read {} of {len} bytes",
        report.bytes_read
    );
    assert_eq!(log.summary(), &full_summary(&path));
    assert!(log.summary().workspace().len() > 10);
}

#[test]
fn appends_keep_the_checkpoint_within_one_interval_r_log_5() {
    let (_tmp, dir) = tmp_dir();
    let path = long_session(&dir);
    let (mut log, _) = SessionLog::open(&path).expect("open");
    for i in 0..2_000 {
        log.append(message(&format!("m{i}"), i % 3 == 0))
            .expect("append");
    }
    drop(log);
    let (log, report) = SessionLog::open(&path).expect("open");
    assert!(report.from_checkpoint);
    assert!(
        report.bytes_read < CHECKPOINT_AFTER_BYTES,
        "{}",
        report.bytes_read
    );
    assert_eq!(log.summary(), &full_summary(&path));
}

type Damage = fn(&Utf8Path, &Utf8Path);

fn edit_checkpoint(checkpoint: &Utf8Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value =
        serde_json::from_slice(&std::fs::read(checkpoint).expect("read")).expect("json");
    edit(&mut value);
    std::fs::write(checkpoint, serde_json::to_vec(&value).expect("encode")).expect("write");
}

fn missing(_log: &Utf8Path, checkpoint: &Utf8Path) {
    std::fs::remove_file(checkpoint).expect("remove");
}

fn truncated_json(_log: &Utf8Path, checkpoint: &Utf8Path) {
    let bytes = std::fs::read(checkpoint).expect("read");
    std::fs::write(checkpoint, &bytes[..bytes.len() / 2]).expect("write");
}

fn garbage(_log: &Utf8Path, checkpoint: &Utf8Path) {
    std::fs::write(checkpoint, [0u8; 512]).expect("write");
}

fn other_version(_log: &Utf8Path, checkpoint: &Utf8Path) {
    edit_checkpoint(checkpoint, |v| v["version"] = json!(2));
}

fn wrong_length(_log: &Utf8Path, checkpoint: &Utf8Path) {
    // One byte short: the covered range no longer ends where it did.
    edit_checkpoint(checkpoint, |v| {
        let len = v["log_len"].as_u64().expect("log_len");
        v["log_len"] = json!(len - 1);
    });
}

fn beyond_the_log(_log: &Utf8Path, checkpoint: &Utf8Path) {
    edit_checkpoint(checkpoint, |v| v["log_len"] = json!(u64::MAX / 2));
}

fn lying_summary(_log: &Utf8Path, checkpoint: &Utf8Path) {
    // A checkpoint whose own fields are readable but whose digest does not
    // match the log (another log's): never trusted.
    edit_checkpoint(checkpoint, |v| {
        v["digest"] = json!("0000000000000000000000000000000000000000");
        v["summary"]["last_seq"] = json!(3);
    });
}

fn log_truncated_after_checkpoint(log: &Utf8Path, checkpoint: &Utf8Path) {
    // The log lost its last lines and then got a torn one (what a repair
    // after an outside truncation sees): shorter than the checkpoint.
    let value: Value = serde_json::from_slice(&std::fs::read(checkpoint).expect("read")).unwrap();
    let covered = value["log_len"].as_u64().expect("log_len");
    let bytes = std::fs::read(log).expect("read");
    let cut = bytes[..(covered as usize - 1)]
        .iter()
        .rposition(|&b| b == b'\n')
        .expect("a line end")
        + 1;
    let mut kept = bytes[..cut].to_vec();
    kept.extend_from_slice(br#"{"seq":1000000,"type":"tu"#);
    std::fs::write(log, kept).expect("write");
}

fn log_replaced(log: &Utf8Path, _checkpoint: &Utf8Path) {
    // Another session's log, longer than the one the checkpoint covers.
    let (_tmp, other) = tmp_dir();
    let mut l = SessionLog::create(&other, SessionHeader::new("other", "/elsewhere")).unwrap();
    while l.byte_len() < 4 * CHECKPOINT_AFTER_BYTES {
        l.append(message(&"y".repeat(200), false)).unwrap();
    }
    std::fs::copy(l.path(), log).expect("copy");
}

#[rstest]
#[case::missing(missing as Damage)]
#[case::truncated_json(truncated_json as Damage)]
#[case::garbage(garbage as Damage)]
#[case::other_version(other_version as Damage)]
#[case::wrong_length(wrong_length as Damage)]
#[case::beyond_the_log(beyond_the_log as Damage)]
#[case::lying_summary(lying_summary as Damage)]
#[case::log_truncated_after_checkpoint(log_truncated_after_checkpoint as Damage)]
#[case::log_replaced(log_replaced as Damage)]
fn a_bad_checkpoint_is_ignored_and_rebuilt_r_log_5(#[case] damage: Damage) {
    let (_tmp, dir) = tmp_dir();
    let path = long_session(&dir);
    let checkpoint = dir.join(CHECKPOINT_FILE_NAME);
    damage(&path, &checkpoint);
    let events_before = read_log_file(&path).expect("read").events;

    let (log, report) = SessionLog::open(&path).expect("open");
    assert!(!report.from_checkpoint, "{report:?}");
    let events_after = read_log_file(&path).expect("read").events;
    // Nothing lost or changed (an open turn would add only `interrupted`).
    assert_eq!(
        events_after[..events_before.len()],
        events_before[..],
        "the log is the authority"
    );
    assert_eq!(log.summary(), &full_summary(&path));
    assert_eq!(log.header(), &read_log_file(&path).unwrap().header);
    drop(log);

    // The open rebuilt the checkpoint: the next one starts from it.
    let (log, report) = SessionLog::open(&path).expect("reopen");
    assert!(report.from_checkpoint, "{report:?}");
    assert!(report.bytes_read < CHECKPOINT_AFTER_BYTES);
    assert_eq!(log.summary(), &full_summary(&path));
}

#[test]
fn skipped_lines_before_the_checkpoint_are_still_reported() {
    let (_tmp, dir) = tmp_dir();
    let mut log = SessionLog::create(&dir, SessionHeader::new("s", "/w")).expect("create");
    log.append(EventKind::TurnStart).expect("append");
    let path = log.path().to_owned();
    drop(log);
    // A damaged middle line (not the last one).
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.extend_from_slice(b"{not json}\n{\"seq\":2,\"type\":\"turn_end\"}\n");
    std::fs::write(&path, &bytes).expect("write");
    let (mut log, first) = SessionLog::open(&path).expect("open");
    assert_eq!(first.skipped.len(), 1);
    log.checkpoint().expect("checkpoint");
    log.append(EventKind::TurnStart).expect("append");
    log.append(EventKind::TurnEnd).expect("append");
    drop(log);

    let (_log, report) = SessionLog::open(&path).expect("open");
    assert!(report.from_checkpoint);
    let whole = read_log_file(&path).expect("read");
    assert_eq!(report.skipped, whole.skipped);
    assert_eq!(report.skipped[0].line, 3);
}

#[test]
fn create_removes_a_checkpoint_left_by_an_earlier_log() {
    let (_tmp, dir) = tmp_dir();
    let path = long_session(&dir);
    std::fs::remove_file(&path).expect("remove log");
    assert!(dir.join(CHECKPOINT_FILE_NAME).exists());
    let log = SessionLog::create(&dir, SessionHeader::new("new", "/w")).expect("create");
    assert!(!dir.join(CHECKPOINT_FILE_NAME).exists());
    assert_eq!(log.summary(), &SurfaceSummary::default());
    assert_eq!(dir.join(LOG_FILE_NAME), log.path());
}
