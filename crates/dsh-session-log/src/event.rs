//! Header and event types and their one-line JSON encoding.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::LogError;
use crate::time::rfc3339_utc;

/// The schema version this build writes and the only one it reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Line 1 of a session log (R-LOG-1).
///
/// Unknown header fields are ignored on read, so a newer build may add some
/// without breaking this one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// Format version, [`SCHEMA_VERSION`].
    pub schema: u32,
    /// Session id, also the name of the session directory.
    pub id: String,
    /// Creation time, RFC 3339 in UTC (`2026-11-30T04:27:42.123Z`).
    pub created_at: String,
    /// Working directory of the session.
    pub cwd: String,
    /// Touches are [`EventKind::Touch`] events in this log (every log this
    /// build creates). `false` for a log an earlier build created: there a
    /// [`EventKind::Tool`] named `touch` is a touch (decision 0054), and
    /// the field is absent from its header line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub touch_events: bool,
}

impl SessionHeader {
    /// A header for a new session created now, with the current schema.
    ///
    /// ```
    /// let header = dsh_session_log::SessionHeader::new("s1", "/work/repo");
    /// assert_eq!(header.schema, dsh_session_log::SCHEMA_VERSION);
    /// assert!(header.created_at.ends_with('Z'));
    /// ```
    pub fn new(id: impl Into<String>, cwd: impl Into<String>) -> Self {
        Self {
            schema: SCHEMA_VERSION,
            id: id.into(),
            created_at: rfc3339_utc(std::time::SystemTime::now()),
            cwd: cwd.into(),
            touch_events: true,
        }
    }
}

/// What happened, one variant per event `type` (snake_case on disk).
///
/// Event lines are JSON objects `{"seq": N, "type": "…", …fields}`. A line
/// whose `type` this build does not know — or whose fields do not fit the
/// known type, as an older or newer build may write — is kept as
/// [`EventKind::Unknown`] holding the whole object (without `seq`), so reading
/// never fails on it and it is written back unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A message in the history.
    Message {
        /// `user`, `assistant`, …
        role: String,
        /// Text parts, in order.
        #[serde(default)]
        parts: Vec<String>,
        /// Typed source of a workspace message, persisted verbatim so resume
        /// works from the file alone (R-LOG-3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<Value>,
    },
    /// A turn began.
    TurnStart,
    /// A step of the current turn began.
    StepStart,
    /// A step ended.
    StepEnd,
    /// The turn ended normally.
    TurnEnd,
    /// The turn ended abnormally; written by [`crate::SessionLog::open`] for a
    /// turn that was open when the process stopped (R-LOG-2).
    Interrupted,
    /// A tool execution's result.
    Tool {
        /// Tool name.
        name: String,
        /// Arguments as given to the tool.
        #[serde(default)]
        args: Value,
        /// `false` for an error result.
        ok: bool,
        /// The execution was cancelled.
        #[serde(default)]
        cancelled: bool,
        /// This execution's token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// Parent execution token (code-mode child).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
    },
    /// What a tool did at a path, as the host recognised it (a typed touch,
    /// R-RT-3): a file read or written, a directory listed or searched, or a
    /// shell command run in a directory. Kept apart from [`EventKind::Tool`],
    /// so a product tool that happens to be called `touch` stays a tool call
    /// (decision 0054).
    Touch {
        /// The path, absolute or relative to the session's cwd.
        path: String,
        /// `read`, `write`, `list`, `search` or `shell`; a reader treats a
        /// kind it does not know as `read`.
        kind: String,
        /// The command of a `shell` touch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// This touch's token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// Every `tool` and `touch` event before this one was projected and left nothing
    /// pending: a later process need not report them again (R-LOG-5, a
    /// resume costs the same at the 2,000th touch as at the 10th). Older
    /// builds read it as an unknown event, which changes nothing for them.
    Settled,
    /// Hides the listed earlier sequence numbers from the surface (R-LOG-1).
    Compaction {
        /// Sequence numbers to hide.
        hide: Vec<u64>,
    },
    /// An event this build cannot interpret: the whole JSON object except
    /// `seq`, including its `type`.
    #[serde(skip)]
    Unknown(Value),
}

/// `type` values of the known variants; an `Unknown` may not reuse them.
pub(crate) const KNOWN_TYPES: &[&str] = &[
    "message",
    "turn_start",
    "step_start",
    "step_end",
    "turn_end",
    "interrupted",
    "tool",
    "touch",
    "settled",
    "compaction",
];

/// One event line: its sequence number and what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Sequence number, strictly increasing through the file.
    pub seq: u64,
    /// The event.
    pub kind: EventKind,
}

impl EventKind {
    /// The on-disk `type` of this event (`None` for an `Unknown` without one).
    ///
    /// ```
    /// use dsh_session_log::EventKind;
    /// assert_eq!(EventKind::TurnStart.type_name(), Some("turn_start"));
    /// ```
    pub fn type_name(&self) -> Option<&str> {
        match self {
            Self::Message { .. } => Some("message"),
            Self::TurnStart => Some("turn_start"),
            Self::StepStart => Some("step_start"),
            Self::StepEnd => Some("step_end"),
            Self::TurnEnd => Some("turn_end"),
            Self::Interrupted => Some("interrupted"),
            Self::Tool { .. } => Some("tool"),
            Self::Touch { .. } => Some("touch"),
            Self::Settled => Some("settled"),
            Self::Compaction { .. } => Some("compaction"),
            Self::Unknown(value) => value.get("type").and_then(Value::as_str),
        }
    }

    /// The JSON object for this event, without `seq`.
    fn to_object(&self) -> Result<Map<String, Value>, LogError> {
        let value = match self {
            Self::Unknown(value) => {
                let ty = value.get("type").and_then(Value::as_str).ok_or_else(|| {
                    LogError::InvalidEvent {
                        reason: "an unknown event must be an object with a string `type`".into(),
                    }
                })?;
                if KNOWN_TYPES.contains(&ty) {
                    return Err(LogError::InvalidEvent {
                        reason: format!("unknown event reuses the known type `{ty}`"),
                    });
                }
                value.clone()
            }
            known => serde_json::to_value(known).map_err(|e| LogError::InvalidEvent {
                reason: e.to_string(),
            })?,
        };
        match value {
            Value::Object(mut map) => {
                map.remove("seq");
                Ok(map)
            }
            _ => Err(LogError::InvalidEvent {
                reason: "event did not encode as a JSON object".into(),
            }),
        }
    }
}

/// Encodes one event line, without the trailing newline.
pub(crate) fn encode_event(seq: u64, kind: &EventKind) -> Result<String, LogError> {
    #[derive(Serialize)]
    struct Line<'a> {
        seq: u64,
        #[serde(flatten)]
        rest: &'a Map<String, Value>,
    }
    let rest = kind.to_object()?;
    serde_json::to_string(&Line { seq, rest: &rest }).map_err(|e| LogError::InvalidEvent {
        reason: e.to_string(),
    })
}

/// Encodes the header line, without the trailing newline.
pub(crate) fn encode_header(header: &SessionHeader) -> Result<String, LogError> {
    serde_json::to_string(header).map_err(|e| LogError::InvalidHeader {
        reason: e.to_string(),
    })
}

/// Why a line is no event (the reason a skipped line reports).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    /// The line is not JSON (the parser's message).
    #[error("{0}")]
    NotJson(#[from] serde_json::Error),
    /// The line is JSON but no object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A field every event has (`seq`, `type`) is missing or of the wrong
    /// type.
    #[error("missing or invalid `{0}`")]
    BadField(&'static str),
    /// The line's `seq` is not above the one before it.
    #[error("seq {seq} does not follow seq {prev}")]
    OutOfOrder {
        /// This line's sequence number.
        seq: u64,
        /// The previous event's.
        prev: u64,
    },
}

/// Decodes one complete event line. `Err` carries why it is not an event.
pub(crate) fn decode_event(line: &[u8]) -> Result<Event, DecodeError> {
    let value: Value = serde_json::from_slice(line)?;
    decode_event_value(value)
}

/// The JSON object of an event line, `seq` included (the checkpoint keeps
/// events in this form, so they read back exactly as their line would).
pub(crate) fn event_to_value(event: &Event) -> Result<Value, LogError> {
    let mut map = event.kind.to_object()?;
    map.insert("seq".into(), Value::from(event.seq));
    Ok(Value::Object(map))
}

/// Decodes one event from the JSON value of its line.
pub(crate) fn decode_event_value(value: Value) -> Result<Event, DecodeError> {
    let Value::Object(mut map) = value else {
        return Err(DecodeError::NotAnObject);
    };
    let seq = map
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or(DecodeError::BadField("seq"))?;
    let Some(ty) = map.get("type").and_then(Value::as_str) else {
        return Err(DecodeError::BadField("type"));
    };
    let known = KNOWN_TYPES.contains(&ty);
    map.remove("seq");
    let object = Value::Object(map);
    let kind = if known {
        // A known type with fields this build cannot read (an older or newer
        // writer) is preserved rather than dropped.
        // Deserialising from a borrow spares a copy of every line's object.
        EventKind::deserialize(&object).unwrap_or(EventKind::Unknown(object))
    } else {
        EventKind::Unknown(object)
    };
    Ok(Event { seq, kind })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Each way a line fails to be an event is its own variant, with the
    /// reason a skipped line has always reported.
    #[rstest]
    #[case::torn(br#"{"seq": 1, "ty"#.as_slice(), "not json", "EOF while parsing")]
    #[case::array(b"[1]".as_slice(), "not an object", "not a JSON object")]
    #[case::no_seq(br#"{"type": "turn_start"}"#.as_slice(), "bad field", "missing or invalid `seq`")]
    #[case::text_seq(br#"{"seq": "1", "type": "turn_start"}"#.as_slice(), "bad field", "missing or invalid `seq`")]
    #[case::no_type(br#"{"seq": 1}"#.as_slice(), "bad field", "missing or invalid `type`")]
    fn a_line_that_is_no_event_says_why(
        #[case] line: &[u8],
        #[case] kind: &str,
        #[case] message: &str,
    ) {
        let e = decode_event(line).expect_err("no event");
        let got = match &e {
            DecodeError::NotJson(_) => "not json",
            DecodeError::NotAnObject => "not an object",
            DecodeError::BadField(_) => "bad field",
            DecodeError::OutOfOrder { .. } => "out of order",
        };
        assert_eq!(got, kind, "{e:?}");
        assert!(e.to_string().starts_with(message), "{e}");
    }

    #[test]
    fn an_event_out_of_order_names_both_numbers() {
        let e = DecodeError::OutOfOrder { seq: 3, prev: 7 };
        assert_eq!(e.to_string(), "seq 3 does not follow seq 7");
    }

    #[test]
    fn a_known_type_with_foreign_fields_decodes_as_unknown() {
        let event = decode_event(br#"{"seq": 2, "type": "tool", "name": 5}"#).expect("an event");
        assert_eq!(event.seq, 2);
        assert!(matches!(event.kind, EventKind::Unknown(_)), "{event:?}");
    }
}
