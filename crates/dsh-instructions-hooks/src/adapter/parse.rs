//! Stage 1, parse: the event's bytes to the lean event the adapter reads
//! ([`crate::lean`]), without a tree of the rest; an oversized event is not
//! parsed at all.

use crate::event::EventError;
use crate::lean::LeanEvent;

/// The largest event the adapter reads; a larger one is answered `{}` and
/// logged (docs/hooks.md). Gemini CLI's `BeforeModel` stdin carries the
/// whole text history, so the bound sits far above what its 1M-token window
/// can hold (about 4 MB of text): no session loses its instructions to it.
/// Only what the adapter needs is parsed (`crate::lean`).
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// What the bytes of one event are.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// Larger than [`MAX_EVENT_BYTES`]: not read.
    Oversized,
    /// Not a JSON object of an event.
    NotEvent(EventError),
    /// An event, as far as the adapter reads it.
    Event(Box<LeanEvent>),
}

impl Parsed {
    /// `hook_event_name`, for the answer and the log, before full parsing
    /// (`-` unless it is a plain short name, so the log stays one clean
    /// line).
    pub(crate) fn event_name(&self) -> String {
        let Parsed::Event(lean) = self else {
            return "-".to_owned();
        };
        lean.to_value()
            .get("hook_event_name")
            .and_then(serde_json::Value::as_str)
            .filter(|n| n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric()))
            .unwrap_or("-")
            .to_owned()
    }
}

/// Parses one event's bytes, keeping only what the adapter reads.
pub(crate) fn parse(input: &[u8]) -> Parsed {
    if input.len() > MAX_EVENT_BYTES {
        return Parsed::Oversized;
    }
    let object = input
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    if !object {
        return Parsed::NotEvent(EventError::NotJson("not an object".into()));
    }
    match crate::lean::parse(input) {
        Ok(lean) => Parsed::Event(Box::new(lean)),
        Err(e) => Parsed::NotEvent(EventError::NotJson(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::array(b"[1]".as_slice())]
    #[case::text(b"not json".as_slice())]
    #[case::empty(b"".as_slice())]
    #[case::torn(b"{\"hook_event_name\": ".as_slice())]
    fn what_is_no_object_is_no_event(#[case] input: &[u8]) {
        let parsed = parse(input);
        assert!(matches!(parsed, Parsed::NotEvent(_)), "{parsed:?}");
        assert_eq!(parsed.event_name(), "-");
    }

    #[test]
    fn an_oversized_event_is_not_read() {
        let mut input = b"{\"hook_event_name\": \"SessionStart\", \"x\": \"".to_vec();
        input.resize(MAX_EVENT_BYTES + 1, b'a');
        assert!(matches!(parse(&input), Parsed::Oversized));
    }

    #[rstest]
    #[case::plain(r#"{"hook_event_name": "PostToolUse"}"#, "PostToolUse")]
    #[case::not_plain(r#"{"hook_event_name": "Post Tool\nUse"}"#, "-")]
    #[case::too_long(&format!(r#"{{"hook_event_name": "{}"}}"#, "A".repeat(65)), "-")]
    #[case::missing(r#"{"session_id": "s"}"#, "-")]
    #[case::leading_space("  \n{\"hook_event_name\": \"Stop\"}", "Stop")]
    fn the_event_name_is_plain_or_a_dash(#[case] input: &str, #[case] want: &str) {
        let parsed = parse(input.as_bytes());
        assert!(matches!(parsed, Parsed::Event(_)), "{parsed:?}");
        assert_eq!(parsed.event_name(), want);
    }
}
