//! Unit and property tests of the log (R-LOG-1..3).

use super::*;
use crate::event::{KNOWN_TYPES, encode_event};
use crate::parse::{TornReason, TornTail};
use proptest::prelude::*;
use rstest::rstest;
use serde_json::json;

fn tmp_root() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = Utf8PathBuf::from_path_buf(tmp.path().to_path_buf()).expect("utf-8 tempdir");
    (tmp, root)
}

fn header() -> SessionHeader {
    SessionHeader {
        schema: SCHEMA_VERSION,
        id: "s1".into(),
        created_at: "2026-11-30T00:00:00.000Z".into(),
        cwd: "/work/repo".into(),
        touch_events: false,
    }
}

fn message(text: &str) -> EventKind {
    EventKind::Message {
        role: "user".into(),
        parts: vec![text.into()],
        source: None,
    }
}

const HEADER_LINE: &str =
    r#"{"schema":1,"id":"s1","created_at":"2026-11-30T00:00:00.000Z","cwd":"/work/repo"}"#;

fn file_bytes(log: &SessionLog) -> Vec<u8> {
    std::fs::read(log.path()).expect("read log")
}

fn dir_entries(dir: &Utf8Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---- encoding (hand-written expectations from SPEC R-LOG-1) ----

#[rstest]
#[case::turn_start(EventKind::TurnStart, r#"{"seq":7,"type":"turn_start"}"#)]
#[case::interrupted(EventKind::Interrupted, r#"{"seq":7,"type":"interrupted"}"#)]
#[case::compaction(EventKind::Compaction { hide: vec![1, 3] }, r#"{"seq":7,"type":"compaction","hide":[1,3]}"#)]
#[case::unknown_keeps_fields(
    EventKind::Unknown(json!({"type": "future", "x": [1]})),
    r#"{"seq":7,"type":"future","x":[1]}"#
)]
fn event_lines_are_flat_objects_with_seq_and_type(#[case] kind: EventKind, #[case] line: &str) {
    let encoded = encode_event(7, &kind).unwrap();
    let got: serde_json::Value = serde_json::from_str(&encoded).unwrap();
    let want: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(got, want);
    assert!(!encoded.contains('\n'));
}

#[rstest]
#[case::not_object(EventKind::Unknown(json!([1, 2])))]
#[case::no_type(EventKind::Unknown(json!({"x": 1})))]
#[case::type_not_string(EventKind::Unknown(json!({"type": 3})))]
#[case::reuses_known_type(EventKind::Unknown(json!({"type": "message"})))]
fn append_rejects_unwritable_unknown(#[case] kind: EventKind) {
    let (_tmp, root) = tmp_root();
    let mut log = SessionLog::create(&root, header()).unwrap();
    let before = file_bytes(&log);
    assert!(matches!(
        log.append(kind),
        Err(LogError::InvalidEvent { .. })
    ));
    assert_eq!(file_bytes(&log), before);
    assert!(log.events().expect("events").is_empty());
}

// ---- create ----

#[test]
fn create_writes_header_line_and_leaves_no_temp_file() {
    let (_tmp, root) = tmp_root();
    let dir = root.join("sessions").join("s1");
    let log = SessionLog::create(&dir, header()).unwrap();
    assert_eq!(log.path(), dir.join("session.jsonl"));
    assert_eq!(dir_entries(&dir), ["session.jsonl", "session.lock"]);
    assert_eq!(file_bytes(&log), format!("{HEADER_LINE}\n").into_bytes());
    assert_eq!(log.header(), &header());
}

#[test]
fn create_refuses_existing_log_and_keeps_it() {
    let (_tmp, root) = tmp_root();
    let mut log = SessionLog::create(&root, header()).unwrap();
    log.append(EventKind::TurnStart).unwrap();
    let before = file_bytes(&log);
    let mut other = header();
    other.id = "s2".into();
    // While the creator holds the session, a second create waits (R-LOG-4)…
    let short = LockWait::up_to(std::time::Duration::from_millis(20));
    assert!(matches!(
        SessionLog::create_locked(&root, other.clone(), short),
        Err(LogError::LockTimeout { .. })
    ));
    drop(log);
    // …and after it, finds the log and leaves it alone.
    assert!(matches!(
        SessionLog::create(&root, other),
        Err(LogError::AlreadyExists { .. })
    ));
    assert_eq!(std::fs::read(root.join(LOG_FILE_NAME)).unwrap(), before);
    assert_eq!(dir_entries(&root), ["session.jsonl", "session.lock"]);
}

#[test]
fn create_refuses_foreign_schema() {
    let (_tmp, root) = tmp_root();
    let mut h = header();
    h.schema = 2;
    assert!(matches!(
        SessionLog::create(&root, h),
        Err(LogError::InvalidHeader { .. })
    ));
    assert!(dir_entries(&root).is_empty());
}

/// Decision 0054: a log this build creates says its touches are `touch`
/// events; a header line written before says nothing and reads as `false`.
#[test]
fn header_says_whether_touches_are_their_own_events() {
    assert!(SessionHeader::new("s", "/w").touch_events);
    let (_tmp, root) = tmp_root();
    let log = SessionLog::create(&root, SessionHeader::new("s1", "/work/repo")).unwrap();
    let line = std::fs::read_to_string(log.path()).unwrap();
    assert!(line.contains(r#""touch_events":true"#), "{line}");
    let old: SessionHeader = serde_json::from_str(HEADER_LINE).unwrap();
    assert_eq!(old, header());
    assert!(!old.touch_events);
}

// ---- append / reopen ----

#[test]
fn append_numbers_from_one_and_survives_reopen() {
    let (_tmp, root) = tmp_root();
    let mut log = SessionLog::create(&root, header()).unwrap();
    let kinds = vec![
        EventKind::TurnStart,
        EventKind::StepStart,
        message("hi"),
        EventKind::Tool {
            name: "read".into(),
            args: json!({"file_path": "a.rs"}),
            ok: true,
            cancelled: false,
            token: Some("t1".into()),
            parent: Some("p0".into()),
        },
        EventKind::Touch {
            path: "/work/repo/pkg".into(),
            kind: "shell".into(),
            command: Some("ls".into()),
            token: Some("t2".into()),
        },
        EventKind::StepEnd,
        EventKind::TurnEnd,
    ];
    for (i, kind) in kinds.iter().enumerate() {
        assert_eq!(log.append(kind.clone()).unwrap(), i as u64 + 1);
    }
    let path = log.path().to_owned();
    drop(log);
    let (log, report) = SessionLog::open(&path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    let got: Vec<EventKind> = log
        .events()
        .expect("events")
        .iter()
        .map(|e| e.kind.clone())
        .collect();
    assert_eq!(got, kinds);
    assert_eq!(log.header(), &header());
}

#[test]
fn workspace_message_source_persists_verbatim() {
    // R-LOG-3: resume must work from the file alone.
    let (_tmp, root) = tmp_root();
    let mut log = SessionLog::create(&root, header()).unwrap();
    let source = json!({
        "kind": "workspace",
        "baseline": true,
        "identity": {"root": "/work/repo", "files": ["AGENTS.md", "pkg/AGENTS.md"]},
        "digests": {"AGENTS.md": "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        "budget": 65536,
        "changes": [{"op": "remove", "dir": "pkg"}, null, 1.5]
    });
    log.append(EventKind::Message {
        role: "user".into(),
        parts: vec!["<frame>".into(), "second part".into()],
        source: Some(source.clone()),
    })
    .unwrap();
    let parsed = read_log_file(log.path()).unwrap();
    match &parsed.events[0].kind {
        EventKind::Message {
            source: Some(s),
            parts,
            ..
        } => {
            assert_eq!(s, &source);
            assert_eq!(parts.len(), 2);
        }
        other => panic!("unexpected {other:?}"),
    }
}

// ---- unknown / compatibility ----

#[test]
fn unknown_event_types_are_preserved_and_rewritten_unchanged() {
    let text = format!(
        "{HEADER_LINE}\n\
         {{\"seq\":1,\"type\":\"turn_start\",\"added_later\":true}}\n\
         {{\"seq\":2,\"type\":\"voice_note\",\"audio\":{{\"ms\":120}}}}\n\
         {{\"seq\":3,\"type\":\"message\",\"parts\":[\"no role\"]}}\n\
         {{\"seq\":4,\"type\":\"turn_end\"}}\n"
    );
    let (_tmp, root) = tmp_root();
    let path = root.join(LOG_FILE_NAME);
    std::fs::write(&path, &text).unwrap();
    let (mut log, report) = SessionLog::open(&path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    let events = log.events().expect("events");
    assert_eq!(events.len(), 4);
    // Extra fields on a known type are ignored.
    assert_eq!(events[0].kind, EventKind::TurnStart);
    assert_eq!(
        events[1].kind,
        EventKind::Unknown(json!({"type": "voice_note", "audio": {"ms": 120}}))
    );
    // A known type whose fields do not fit (no role) is kept, not dropped.
    assert_eq!(
        events[2].kind,
        EventKind::Unknown(json!({"type": "message", "parts": ["no role"]}))
    );
    assert_eq!(log.surface().expect("surface").len(), 4);
    // Appending an unknown event from another build round-trips too.
    let seq = log
        .append(EventKind::Unknown(json!({"type": "voice_note", "seq": 99})))
        .unwrap();
    assert_eq!(seq, 5);
    assert_eq!(
        log.events().expect("events")[4].kind,
        EventKind::Unknown(json!({"type": "voice_note"}))
    );
    let reread = read_log_file(&path).unwrap();
    assert_eq!(reread.events, log.events().expect("events"));
}

#[rstest]
#[case::empty("")]
#[case::unterminated(HEADER_LINE)]
#[case::not_json("not json\n")]
#[case::missing_field("{\"schema\":1,\"id\":\"s\"}\n")]
#[case::no_schema("{\"id\":\"s\",\"created_at\":\"t\",\"cwd\":\"/\"}\n")]
#[case::event_instead("{\"seq\":1,\"type\":\"turn_start\"}\n")]
fn malformed_header_is_typed_error(#[case] text: &str) {
    assert!(matches!(
        read_log(text.as_bytes()),
        Err(LogError::InvalidHeader { .. })
    ));
}

#[test]
fn newer_schema_is_unsupported() {
    let text = "{\"schema\":2,\"totally\":\"different\"}\n";
    assert!(matches!(
        read_log(text.as_bytes()),
        Err(LogError::UnsupportedSchema { found: 2 })
    ));
}

#[test]
fn header_ignores_unknown_fields() {
    let text = "{\"schema\":1,\"id\":\"s\",\"created_at\":\"t\",\"cwd\":\"/\",\"host\":\"x\"}\n";
    assert_eq!(read_log(text.as_bytes()).unwrap().header.id, "s");
}

#[test]
fn malformed_middle_lines_are_skipped_and_reported() {
    let text = format!(
        "{HEADER_LINE}\n\
         {{\"seq\":1,\"type\":\"turn_start\"}}\n\
         garbage\n\
         \n\
         {{\"type\":\"turn_end\"}}\n\
         {{\"seq\":1,\"type\":\"step_start\"}}\n\
         [1,2]\n\
         {{\"seq\":2,\"type\":\"turn_end\"}}\n"
    );
    let parsed = read_log(text.as_bytes()).unwrap();
    let seqs: Vec<u64> = parsed.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(parsed.events[1].kind, EventKind::TurnEnd);
    let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
    assert_eq!(lines, [3, 4, 5, 6, 7]);
    assert!(parsed.skipped[3].reason.contains("does not follow"));
    // Offsets point at the start of each skipped line.
    for s in &parsed.skipped {
        let start = s.offset as usize;
        assert!(start == 0 || text.as_bytes()[start - 1] == b'\n');
    }
    assert_eq!(parsed.torn_tail, None);
}

// ---- torn tail (R-LOG-2) ----

/// Writes a log through the API and returns (path, bytes, start of last line).
fn write_log(root: &Utf8Path, kinds: &[EventKind]) -> (Utf8PathBuf, Vec<u8>, usize) {
    let mut log = SessionLog::create(root, header()).unwrap();
    for kind in kinds {
        log.append(kind.clone()).unwrap();
    }
    let bytes = file_bytes(&log);
    let body = &bytes[..bytes.len() - 1];
    let last_start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (log.path().to_owned(), bytes, last_start)
}

#[test]
fn torn_tail_at_every_offset_of_last_line_is_truncated() {
    let kinds = vec![
        EventKind::TurnStart,
        message("first"),
        EventKind::TurnEnd,
        message("a long final message with \"quotes\", \\ and ünïcödé"),
    ];
    let (_tmp, root) = tmp_root();
    let (path, full, last_start) = write_log(&root, &kinds);
    let expected: Vec<EventKind> = kinds[..3].to_vec();
    for cut in last_start..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let (log, report) = SessionLog::open(&path).unwrap();
        let got: Vec<EventKind> = log
            .events()
            .expect("events")
            .iter()
            .map(|e| e.kind.clone())
            .collect();
        assert_eq!(got, expected, "cut at {cut}");
        assert_eq!(report.interrupted, None, "turn was closed; cut at {cut}");
        if cut == last_start {
            assert!(report.is_clean(), "cut at {cut}: {report:?}");
        } else {
            let torn = report.truncated.as_ref().expect("torn tail reported");
            assert_eq!(torn.offset, last_start as u64);
            assert_eq!(torn.len, (cut - last_start) as u64);
            assert_eq!(torn.reason, TornReason::Unterminated);
        }
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk, &full[..last_start], "cut at {cut}");
        drop(log);
        // Repaired file reopens cleanly.
        let (_, again) = SessionLog::open(&path).unwrap();
        assert!(again.is_clean(), "cut at {cut}");
    }
}

#[test]
fn torn_turn_end_leaves_turn_open_and_gets_interrupted() {
    let kinds = vec![EventKind::TurnStart, message("x"), EventKind::TurnEnd];
    let (_tmp, root) = tmp_root();
    let (path, full, last_start) = write_log(&root, &kinds);
    for cut in last_start + 1..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let (mut log, report) = SessionLog::open(&path).unwrap();
        assert!(report.truncated.is_some());
        // The torn turn_end (seq 3) was never acknowledged: its seq is reused.
        assert_eq!(report.interrupted, Some(3));
        assert_eq!(
            log.events().expect("events").last(),
            Some(&Event {
                seq: 3,
                kind: EventKind::Interrupted
            })
        );
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(
            on_disk,
            [
                &full[..last_start],
                b"{\"seq\":3,\"type\":\"interrupted\"}\n"
            ]
            .concat()
        );
        assert_eq!(log.append(EventKind::TurnStart).unwrap(), 4);
    }
}

#[test]
fn terminated_garbage_final_line_is_torn() {
    let (_tmp, root) = tmp_root();
    let (path, full, _) = write_log(&root, &[EventKind::TurnStart, EventKind::TurnEnd]);
    let mut bytes = full.clone();
    bytes.extend_from_slice(b"\0\0\0\0\n");
    std::fs::write(&path, &bytes).unwrap();
    let (log, report) = SessionLog::open(&path).unwrap();
    let torn = report.truncated.unwrap();
    assert_eq!(torn.reason, TornReason::Unparsable);
    assert_eq!(torn.offset, full.len() as u64);
    assert_eq!(log.events().expect("events").len(), 2);
    assert_eq!(std::fs::read(&path).unwrap(), full);
}

#[test]
fn unterminated_but_valid_json_final_line_is_torn() {
    // A line without its newline was never acknowledged, even if it parses.
    let text = format!("{HEADER_LINE}\n{{\"seq\":1,\"type\":\"turn_start\"}}");
    let parsed = read_log(text.as_bytes()).unwrap();
    assert!(parsed.events.is_empty());
    assert_eq!(
        parsed.torn_tail,
        Some(TornTail {
            offset: HEADER_LINE.len() as u64 + 1,
            len: 29,
            reason: TornReason::Unterminated
        })
    );
}

#[test]
fn header_only_cut_is_typed_error_not_repair() {
    let (_tmp, root) = tmp_root();
    let (path, _, _) = write_log(&root, &[]);
    for cut in [0, 1, HEADER_LINE.len()] {
        std::fs::write(&path, &HEADER_LINE.as_bytes()[..cut]).unwrap();
        assert!(matches!(
            SessionLog::open(&path),
            Err(LogError::InvalidHeader { .. })
        ));
        // No repair write happened.
        assert_eq!(std::fs::read(&path).unwrap().len(), cut);
    }
}

// ---- interrupted turns ----

#[rstest]
#[case::turn_start(&[EventKind::TurnStart], Some(2))]
#[case::step_start_only(&[EventKind::StepStart], Some(2))]
#[case::mid_step(&[EventKind::TurnStart, EventKind::StepStart, EventKind::StepEnd], Some(4))]
#[case::turn_end(&[EventKind::TurnStart, EventKind::TurnEnd], None)]
#[case::already_interrupted(&[EventKind::TurnStart, EventKind::Interrupted], None)]
#[case::no_turn(&[], None)]
#[case::messages_only(&[EventKind::TurnStart, EventKind::TurnEnd, EventKind::StepEnd], None)]
#[case::reopened_after_end(&[EventKind::TurnStart, EventKind::TurnEnd, EventKind::TurnStart], Some(4))]
fn open_turn_gets_interrupted_marker(#[case] kinds: &[EventKind], #[case] expected: Option<u64>) {
    let (_tmp, root) = tmp_root();
    let (path, _, _) = write_log(&root, kinds);
    let (log, report) = SessionLog::open(&path).unwrap();
    assert_eq!(report.interrupted, expected);
    assert_eq!(
        log.events().expect("events").len(),
        kinds.len() + usize::from(expected.is_some())
    );
    // The marker is durable: a second open has nothing to repair.
    drop(log);
    let (_, again) = SessionLog::open(&path).unwrap();
    assert!(again.is_clean(), "{again:?}");
}

// ---- surface (R-LOG-1) ----

#[test]
fn compaction_hides_listed_earlier_events_only() {
    let (_tmp, root) = tmp_root();
    let mut log = SessionLog::create(&root, header()).unwrap();
    let a = log.append(message("a")).unwrap(); // 1
    let b = log.append(message("b")).unwrap(); // 2
    let c1 = log
        .append(EventKind::Compaction {
            hide: vec![a, 5, 99],
        })
        .unwrap(); // 3
    let _d = log.append(message("d")).unwrap(); // 4
    let e = log.append(message("e")).unwrap(); // 5: listed by c1, but later than it
    let _c2 = log
        .append(EventKind::Compaction { hide: vec![b, c1] })
        .unwrap(); // 6
    let seqs: Vec<u64> = log
        .surface()
        .expect("surface")
        .iter()
        .map(|ev| ev.seq)
        .collect();
    assert_eq!(seqs, [4, e]);
    // The log itself is never changed by compaction.
    assert_eq!(log.events().expect("events").len(), 6);
    // The parsed file derives the same surface.
    let parsed = read_log_file(log.path()).unwrap();
    let parsed_seqs: Vec<u64> = parsed.surface().iter().map(|ev| ev.seq).collect();
    assert_eq!(parsed_seqs, seqs);
}

// ---- session dirs ----

#[rstest]
#[case("")]
#[case(".")]
#[case("..")]
#[case("a/b")]
#[case("a\\b")]
#[case("a\0b")]
fn session_dir_rejects_non_plain_ids(#[case] id: &str) {
    assert!(matches!(
        session_dir(Utf8Path::new("/r"), id),
        Err(LogError::InvalidSessionId { .. })
    ));
}

#[rstest]
#[case("abc", "/r/abc")]
#[case("..x", "/r/..x")]
#[case("0123-ab", "/r/0123-ab")]
fn session_dir_joins_plain_ids(#[case] id: &str, #[case] expected: &str) {
    assert_eq!(session_dir(Utf8Path::new("/r"), id).unwrap(), expected);
}

// ---- properties ----

fn arb_kind() -> impl Strategy<Value = EventKind> {
    let text = "[ -~ü\"\\\\\n]{0,12}";
    prop_oneof![
        (text, proptest::collection::vec(text, 0..3)).prop_map(|(role, parts)| {
            EventKind::Message {
                role,
                parts,
                source: None,
            }
        }),
        Just(EventKind::TurnStart),
        Just(EventKind::StepStart),
        Just(EventKind::StepEnd),
        Just(EventKind::TurnEnd),
        Just(EventKind::Interrupted),
        (
            text,
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(text)
        )
            .prop_map(|(name, ok, cancelled, token)| EventKind::Tool {
                name,
                args: json!({"file_path": "x"}),
                ok,
                cancelled,
                token,
                parent: None,
            }),
        (
            text,
            "read|write|list|search|shell",
            proptest::option::of(text),
            proptest::option::of(text)
        )
            .prop_map(|(path, kind, command, token)| EventKind::Touch {
                path,
                kind,
                command,
                token,
            }),
        proptest::collection::vec(0u64..20, 0..4).prop_map(|hide| EventKind::Compaction { hide }),
        ("[a-z_]{1,8}", any::<i32>()).prop_filter_map("known type", |(ty, n)| {
            (!KNOWN_TYPES.contains(&ty.as_str()))
                .then(|| EventKind::Unknown(json!({"type": ty, "n": n})))
        }),
    ]
}

proptest! {
    #[test]
    fn read_log_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = read_log(&bytes);
    }

    #[test]
    fn read_log_never_panics_after_valid_header(
        tail in proptest::collection::vec(
            prop_oneof![any::<u8>(), Just(b'\n'), Just(b'{'), Just(b'"')], 0..512)
    ) {
        let mut bytes = format!("{HEADER_LINE}\n").into_bytes();
        bytes.extend(tail);
        let parsed = read_log(&bytes).expect("header is valid");
        let mut last = None;
        for e in &parsed.events {
            prop_assert!(last.is_none_or(|l| e.seq > l));
            last = Some(e.seq);
        }
    }

    #[test]
    fn truncation_recovers_every_complete_line(
        kinds in proptest::collection::vec(arb_kind(), 0..12),
        cut_frac in 0.0f64..=1.0,
    ) {
        let mut bytes = format!("{HEADER_LINE}\n").into_bytes();
        let header_len = bytes.len();
        let mut ends = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            bytes.extend(encode_event(i as u64 + 1, kind).unwrap().into_bytes());
            bytes.push(b'\n');
            ends.push(bytes.len());
        }
        let cut = header_len + ((bytes.len() - header_len) as f64 * cut_frac) as usize;
        let parsed = read_log(&bytes[..cut]).unwrap();
        let complete = ends.iter().filter(|&&end| end <= cut).count();
        let got: Vec<&EventKind> = parsed.events.iter().map(|e| &e.kind).collect();
        let want: Vec<&EventKind> = kinds[..complete].iter().collect();
        prop_assert_eq!(got, want);
        prop_assert!(parsed.skipped.is_empty());
        let whole = if complete == 0 { header_len } else { ends[complete - 1] };
        prop_assert_eq!(parsed.valid_len, whole as u64);
        prop_assert_eq!(parsed.torn_tail.is_some(), cut != whole);
    }
}

#[test]
fn append_refuses_when_seq_would_overflow() {
    let (_tmp, root) = tmp_root();
    let path = root.join(LOG_FILE_NAME);
    let text = format!(
        "{HEADER_LINE}\n{{\"seq\":{},\"type\":\"turn_end\"}}\n",
        u64::MAX
    );
    std::fs::write(&path, &text).unwrap();
    let (mut log, report) = SessionLog::open(&path).unwrap();
    assert!(report.is_clean());
    assert!(matches!(
        log.append(EventKind::TurnStart),
        Err(LogError::InvalidEvent { .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
