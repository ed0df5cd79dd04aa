//! Pure parsing of a log's bytes: no I/O, no repair writes, no panics.

use crate::event::{DecodeError, Event, EventKind, SCHEMA_VERSION, SessionHeader, decode_event};
use crate::{LogError, surface};

/// Why the final line of a log is not part of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TornReason {
    /// The line has no trailing newline: its write never completed, so it was
    /// never acknowledged.
    Unterminated,
    /// The line is terminated but is not a readable event (e.g. blocks the
    /// filesystem zero-filled after a crash).
    Unparsable,
}

/// The torn final line found by [`read_log`]; [`crate::SessionLog::open`]
/// truncates the file to [`TornTail::offset`](crate::parse::TornTail::offset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// Byte offset where the torn line starts (= length of the whole lines).
    pub offset: u64,
    /// Length of the torn line in bytes, newline included when present.
    pub len: u64,
    /// Why it is torn.
    pub reason: TornReason,
}

/// A complete line before the last one that is not a readable event. It is
/// skipped (and left in the file); later lines are still read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SkippedLine {
    /// 1-based line number (the header is line 1).
    pub line: usize,
    /// Byte offset where the line starts.
    pub offset: u64,
    /// Why it was skipped.
    pub reason: String,
}

/// The result of [`read_log`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedLog {
    /// Line 1.
    pub header: SessionHeader,
    /// Every readable event, in file order; sequence numbers strictly increase.
    pub events: Vec<Event>,
    /// Complete lines that were skipped.
    pub skipped: Vec<SkippedLine>,
    /// The torn final line, if any.
    pub torn_tail: Option<TornTail>,
    /// Length in bytes of the whole lines: the input without its torn tail.
    pub valid_len: u64,
}

impl ParsedLog {
    /// Events not hidden by any compaction, without the compaction events
    /// themselves (R-LOG-1); see [`crate::surface`].
    pub fn surface(&self) -> Vec<&Event> {
        surface(&self.events)
    }

    /// Whether the last event leaves a turn open: a `turn_start` or
    /// `step_start` with no later `turn_end` or `interrupted`.
    pub fn has_open_turn(&self) -> bool {
        open_turn(&self.events)
    }

    /// The sequence number the next appended event gets.
    pub fn next_seq(&self) -> u64 {
        self.events.last().map_or(1, |e| e.seq.saturating_add(1))
    }
}

pub(crate) fn open_turn(events: &[Event]) -> bool {
    let mut open = false;
    for event in events {
        match event.kind {
            EventKind::TurnStart | EventKind::StepStart => open = true,
            EventKind::TurnEnd | EventKind::Interrupted => open = false,
            _ => {}
        }
    }
    open
}

/// Parses a whole `session.jsonl` without repairing anything.
///
/// - Line 1 must be a complete, readable header of schema [`SCHEMA_VERSION`].
/// - Every complete later line that is a readable event is kept; unknown event
///   types are kept as [`EventKind::Unknown`].
/// - A complete line before the last one that is not an event (bad JSON, no
///   `seq`/`type`, a `seq` not greater than the previous one) is reported in
///   [`ParsedLog::skipped`](crate::parse::ParsedLog::skipped) and reading goes on.
/// - The last line is torn when it lacks its newline or is not readable
///   ([`ParsedLog::torn_tail`](crate::parse::ParsedLog::torn_tail)).
///
/// Never panics, whatever the bytes.
///
/// # Errors
/// [`LogError::InvalidHeader`] or [`LogError::UnsupportedSchema`] when line 1
/// cannot be used; nothing after the header makes this fail.
///
/// ```
/// let bytes = b"{\"schema\":1,\"id\":\"s\",\"created_at\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n\
/// {\"seq\":1,\"type\":\"turn_start\"}\n\
/// {\"seq\":2,\"type\":\"future_thing\",\"x\":1}\n\
/// {\"seq\":3,\"type\":\"turn_e";
/// let log = dsh_session_log::parse::read_log(bytes)?;
/// assert_eq!(log.events.len(), 2);
/// assert_eq!(log.events[1].kind.type_name(), Some("future_thing"));
/// assert!(log.torn_tail.is_some());
/// assert!(log.has_open_turn());
/// # Ok::<(), dsh_session_log::LogError>(())
/// ```
pub fn read_log(bytes: &[u8]) -> Result<ParsedLog, LogError> {
    let (header, header_len) = split_header(bytes)?;
    let mut events: Vec<Event> = Vec::new();
    let rest = bytes.get(header_len..).unwrap_or_default();
    let scan = scan_events(
        rest,
        ScanStart {
            offset: header_len as u64,
            line: 1,
            last_seq: None,
        },
        |event| events.push(event),
    );
    Ok(ParsedLog {
        header,
        events,
        skipped: scan.skipped,
        torn_tail: scan.torn_tail,
        valid_len: scan.valid_len,
    })
}

/// Parses line 1 of `bytes`; returns the header and the length of its line,
/// newline included.
pub(crate) fn split_header(bytes: &[u8]) -> Result<(SessionHeader, usize), LogError> {
    let Some(header_end) = bytes.iter().position(|&b| b == b'\n') else {
        return Err(LogError::InvalidHeader {
            reason: "header line is missing or unterminated".into(),
        });
    };
    Ok((parse_header(&bytes[..header_end])?, header_end + 1))
}

/// Where a chunk of event lines sits in its file, so that offsets, line
/// numbers and the seq order check continue across chunks (a tail read after
/// a checkpoint is scanned exactly as the same bytes in a whole read).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScanStart {
    /// Byte offset of the chunk's first byte in the file.
    pub offset: u64,
    /// Number of lines before the chunk (1 = just the header).
    pub line: usize,
    /// Sequence number of the last readable event before the chunk.
    pub last_seq: Option<u64>,
}

/// What [`scan_events`] found besides the events it handed out.
#[derive(Debug)]
pub(crate) struct Scan {
    pub skipped: Vec<SkippedLine>,
    pub torn_tail: Option<TornTail>,
    /// Absolute file length covering the whole lines (without the torn tail).
    pub valid_len: u64,
    /// Lines before the end of the whole lines (header included).
    pub lines: usize,
}

/// Scans event lines, handing every readable event to `visit` in order, so a
/// caller can fold them without keeping them. `chunk` must start at a line
/// boundary and run to the end of the file (its last line is the file's).
pub(crate) fn scan_events(chunk: &[u8], start: ScanStart, mut visit: impl FnMut(Event)) -> Scan {
    let mut last_seq = start.last_seq;
    let mut skipped = Vec::new();
    let mut torn_tail = None;
    let mut offset = 0;
    let mut line_no = start.line;
    while offset < chunk.len() {
        let rest = &chunk[offset..];
        let (line, len, terminated) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => (&rest[..end], end + 1, true),
            None => (rest, rest.len(), false),
        };
        let at = start.offset + offset as u64;
        if !terminated {
            // Appends write a line and its newline together; without the
            // newline the append was never acknowledged.
            torn_tail = Some(TornTail {
                offset: at,
                len: len as u64,
                reason: TornReason::Unterminated,
            });
            break;
        }
        let decoded = decode_event(line).and_then(|event| match last_seq {
            Some(prev) if event.seq <= prev => Err(DecodeError::OutOfOrder {
                seq: event.seq,
                prev,
            }),
            _ => Ok(event),
        });
        match decoded {
            Ok(event) => {
                last_seq = Some(event.seq);
                line_no += 1;
                visit(event);
            }
            Err(_) if offset + len == chunk.len() => {
                torn_tail = Some(TornTail {
                    offset: at,
                    len: len as u64,
                    reason: TornReason::Unparsable,
                });
            }
            Err(reason) => {
                line_no += 1;
                skipped.push(SkippedLine {
                    line: line_no,
                    offset: at,
                    reason: reason.to_string(),
                });
            }
        }
        offset += len;
    }
    let valid_len = torn_tail
        .as_ref()
        .map_or(start.offset + chunk.len() as u64, |t| t.offset);
    Scan {
        skipped,
        torn_tail,
        valid_len,
        lines: line_no,
    }
}

fn parse_header(line: &[u8]) -> Result<SessionHeader, LogError> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| LogError::InvalidHeader {
            reason: e.to_string(),
        })?;
    // Check the schema before the other fields: a future schema may have
    // changed them, and "unsupported schema" is the useful message then.
    match value.get("schema").and_then(serde_json::Value::as_u64) {
        Some(s) if s == u64::from(SCHEMA_VERSION) => {}
        Some(found) => return Err(LogError::UnsupportedSchema { found }),
        None => {
            return Err(LogError::InvalidHeader {
                reason: "missing or invalid `schema`".into(),
            });
        }
    }
    serde_json::from_value(value).map_err(|e| LogError::InvalidHeader {
        reason: e.to_string(),
    })
}
