//! Large-case property tests for the log reader (R-LOG-2, R-QUAL-1): any
//! bytes parse without panicking, and garbage — a torn tail or an unreadable
//! middle line — never costs a complete event line.

use dsh_session_log::{Event, EventKind, parse::read_log};
use proptest::prelude::*;

const HEADER: &str =
    r#"{"schema":1,"id":"s","created_at":"2026-01-01T00:00:00.000Z","cwd":"/work/repo"}"#;

fn kind() -> impl Strategy<Value = EventKind> {
    prop_oneof![
        Just(EventKind::TurnStart),
        Just(EventKind::StepStart),
        Just(EventKind::StepEnd),
        Just(EventKind::TurnEnd),
        Just(EventKind::Interrupted),
        Just(EventKind::Settled),
        (
            any::<String>(),
            prop::collection::vec(any::<String>(), 0..3)
        )
            .prop_map(|(role, parts)| EventKind::Message {
                role,
                parts,
                source: None,
            }),
        prop::collection::vec(0u64..50, 0..4).prop_map(|hide| EventKind::Compaction { hide }),
    ]
}

/// One event line as the store writes it: `{"seq":N,"type":…,…}\n`.
fn line(seq: u64, kind: &EventKind) -> String {
    let mut value = serde_json::to_value(kind).expect("known kinds serialize");
    if let Some(map) = value.as_object_mut() {
        map.insert("seq".to_owned(), seq.into());
    }
    format!("{value}\n")
}

fn log_of(kinds: &[EventKind]) -> (Vec<u8>, Vec<Event>) {
    let mut bytes = format!("{HEADER}\n").into_bytes();
    let mut events = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let seq = i as u64 + 1;
        bytes.extend_from_slice(line(seq, kind).as_bytes());
        events.push(Event {
            seq,
            kind: kind.clone(),
        });
    }
    (bytes, events)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn any_bytes_parse_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = read_log(&bytes);
        let mut with_header = format!("{HEADER}\n").into_bytes();
        with_header.extend_from_slice(&bytes);
        let parsed = read_log(&with_header);
        prop_assert!(parsed.is_ok(), "a valid header always reads");
        if let Ok(parsed) = parsed {
            prop_assert!(parsed.valid_len <= with_header.len() as u64);
            let whole = &with_header[..parsed.valid_len as usize];
            prop_assert_eq!(whole.last(), Some(&b'\n'));
            let _ = parsed.surface();
            for pair in parsed.events.windows(2) {
                prop_assert!(pair[0].seq < pair[1].seq);
            }
        }
    }

    #[test]
    fn a_torn_tail_never_costs_a_complete_line(
        kinds in prop::collection::vec(kind(), 0..12),
        tail in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let (mut bytes, events) = log_of(&kinds);
        let whole = bytes.len() as u64;
        bytes.extend_from_slice(&tail);
        let parsed = read_log(&bytes).expect("header is valid");
        prop_assert_eq!(&parsed.events[..events.len()], &events[..]);
        if !tail.contains(&b'\n') {
            // An unterminated tail is never an event and is what repair cuts.
            prop_assert_eq!(parsed.events.len(), events.len());
            prop_assert_eq!(parsed.valid_len, whole);
            prop_assert_eq!(parsed.torn_tail.is_some(), !tail.is_empty());
        }
    }

    #[test]
    fn an_unreadable_middle_line_is_skipped_not_fatal(
        kinds in prop::collection::vec(kind(), 1..12),
        at in any::<prop::sample::Index>(),
        garbage in prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..100),
    ) {
        let (bytes, events) = log_of(&kinds);
        // Cut after the header or after one of the event lines.
        let ends: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        let cut = ends[at.index(ends.len())];
        let mut damaged = bytes[..cut].to_vec();
        // `#` first: never JSON, so never an event with a larger seq.
        damaged.push(b'#');
        damaged.extend_from_slice(&garbage);
        damaged.push(b'\n');
        damaged.extend_from_slice(&bytes[cut..]);
        let parsed = read_log(&damaged).expect("header is valid");
        if cut == bytes.len() {
            // The garbage is the last line: a torn tail, not a skip.
            prop_assert!(parsed.torn_tail.is_some());
        } else {
            prop_assert_eq!(parsed.skipped.len(), 1);
        }
        prop_assert_eq!(parsed.events, events);
    }
}
