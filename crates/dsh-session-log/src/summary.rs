//! The derived state a writer needs to continue a session, kept by folding
//! events one at a time (R-LOG-5), so it never needs the whole history.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{Event, EventKind};

/// A workspace message on the visible surface: a `message` event that carries
/// a typed `source` (R-LOG-3) and that no compaction has hidden.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VisibleSource {
    /// Sequence number of the `message` event.
    pub seq: u64,
    /// Its `source` as JSON text: the checkpoint keeps it unparsed, so an
    /// open of a long session scans the sources instead of building a
    /// tree for each (R-LOG-5); a reader parses only those it needs.
    pub source: RawSource,
}

/// A persisted `source`, kept as its JSON text.
///
/// ```
/// use dsh_session_log::RawSource;
/// let raw = RawSource::from_value(&serde_json::json!({"baseline": true}));
/// assert_eq!(raw.json(), r#"{"baseline":true}"#);
/// assert_eq!(raw.to_value()["baseline"], true);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawSource(Box<serde_json::value::RawValue>);

impl RawSource {
    /// The text of `value`.
    pub fn from_value(value: &Value) -> Self {
        // A `Value` always serializes (its map keys are strings); the
        // fallback only keeps this total.
        Self(
            serde_json::value::to_raw_value(value)
                .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned()),
        )
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The source parsed into a tree (`Null` never happens for text this
    /// type holds, which is JSON by construction).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.json()).unwrap_or(Value::Null)
    }
}

impl PartialEq for RawSource {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

/// What the runtime needs from a session's history to continue it, derived
/// from the events in order and updated by every append (R-LOG-5).
///
/// The same fold runs over a whole read and over checkpoint + tail, so both
/// give the same summary; the log stays the only authority.
///
/// Memory: the visible workspace sources and the tool events since the last
/// message, not the history.
///
/// ```
/// use dsh_session_log::{Event, EventKind, SurfaceSummary};
/// let mut summary = SurfaceSummary::default();
/// let ws = EventKind::Message {
///     role: "user".into(),
///     parts: vec!["…".into()],
///     source: Some(serde_json::json!({"baseline": true})),
/// };
/// summary.apply(&Event { seq: 1, kind: EventKind::TurnStart });
/// summary.apply(&Event { seq: 2, kind: ws });
/// summary.apply(&Event { seq: 3, kind: EventKind::StepStart });
/// assert_eq!(summary.workspace().len(), 1);
/// assert!(summary.step_open());
/// summary.apply(&Event { seq: 4, kind: EventKind::Compaction { hide: vec![2] } });
/// assert!(summary.workspace().is_empty());
/// assert_eq!((summary.last_seq(), summary.compactions()), (Some(4), 1));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SurfaceSummary {
    /// Sequence number of the last readable event.
    last_seq: Option<u64>,
    /// Readable events so far.
    events: u64,
    /// Visible workspace messages, oldest first.
    workspace: Vec<VisibleSource>,
    /// `tool` and `touch` events after the last `message` or `settled` event
    /// (hidden or not).
    #[serde(with = "event_values")]
    tools_since_message: Vec<Event>,
    /// Last of `step_start` (open) vs `step_end`/`turn_end`/`interrupted`.
    step_open: bool,
    /// Last of `turn_start`/`step_start` (open) vs `turn_end`/`interrupted`.
    turn_open: bool,
    /// Compaction events so far.
    compactions: u64,
}

impl SurfaceSummary {
    /// Folds one more event, the next in file order, into the summary.
    pub fn apply(&mut self, event: &Event) {
        self.last_seq = Some(event.seq);
        self.events += 1;
        match &event.kind {
            EventKind::Message { source, .. } => {
                self.tools_since_message.clear();
                if let Some(source) = source {
                    self.workspace.push(VisibleSource {
                        seq: event.seq,
                        source: RawSource::from_value(source),
                    });
                }
            }
            EventKind::Tool { .. } | EventKind::Touch { .. } => {
                self.tools_since_message.push(event.clone());
            }
            EventKind::Settled => self.tools_since_message.clear(),
            EventKind::TurnStart => self.turn_open = true,
            EventKind::StepStart => {
                self.turn_open = true;
                self.step_open = true;
            }
            EventKind::StepEnd => self.step_open = false,
            EventKind::TurnEnd | EventKind::Interrupted => {
                self.turn_open = false;
                self.step_open = false;
            }
            EventKind::Compaction { hide } => {
                self.compactions += 1;
                // Only earlier numbers are hidden (R-LOG-1); every visible
                // source is earlier, so membership is the whole test.
                let hide: std::collections::HashSet<u64> = hide.iter().copied().collect();
                self.workspace.retain(|w| !hide.contains(&w.seq));
            }
            EventKind::Unknown(_) => {}
        }
    }

    /// Sequence number of the last event, `None` for a log with none.
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// The sequence number the next appended event gets.
    pub fn next_seq(&self) -> Option<u64> {
        match self.last_seq {
            None => Some(1),
            Some(last) => last.checked_add(1),
        }
    }

    /// How many readable events the log holds.
    pub fn event_count(&self) -> u64 {
        self.events
    }

    /// The workspace messages on the visible surface, oldest first: their
    /// sequence numbers and typed sources (R-LOG-3).
    pub fn workspace(&self) -> &[VisibleSource] {
        &self.workspace
    }

    /// Whether history ends inside an open step: the last of `step_start`
    /// versus `step_end`/`turn_end`/`interrupted` is a `step_start`.
    pub fn step_open(&self) -> bool {
        self.step_open
    }

    /// Whether history ends inside an open turn: the last of
    /// `turn_start`/`step_start` versus `turn_end`/`interrupted` is a start
    /// (what [`crate::SessionLog::open`] closes with `interrupted`).
    pub fn turn_open(&self) -> bool {
        self.turn_open
    }

    /// The `tool` and `touch` events after the last `message` or `settled`
    /// event (hidden by a compaction or not), in order: the touches whose
    /// message a previous process composed but never entered.
    pub fn tools_since_message(&self) -> &[Event] {
        &self.tools_since_message
    }

    /// How many compaction events the log holds: changes exactly when a
    /// compaction may have hidden something, so a host can tell "only
    /// appended" from "rebuild the view".
    pub fn compactions(&self) -> u64 {
        self.compactions
    }

    /// The summary of `events`, folded from the first.
    pub fn of(events: &[Event]) -> Self {
        let mut summary = Self::default();
        for event in events {
            summary.apply(event);
        }
        summary
    }
}

/// Events in a checkpoint: the JSON objects of their lines.
mod event_values {
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    use crate::event::{Event, decode_event_value, event_to_value};

    pub(super) fn serialize<S: Serializer>(events: &[Event], s: S) -> Result<S::Ok, S::Error> {
        let values = events
            .iter()
            .map(event_to_value)
            .collect::<Result<Vec<_>, _>>()
            .map_err(S::Error::custom)?;
        values.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Event>, D::Error> {
        Vec::<Value>::deserialize(d)?
            .into_iter()
            .map(|v| decode_event_value(v).map_err(D::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn tool(token: &str) -> EventKind {
        EventKind::Tool {
            name: "read".into(),
            args: json!({"file_path": token}),
            ok: true,
            cancelled: false,
            token: Some(token.into()),
            parent: None,
        }
    }

    fn ws(n: u64) -> EventKind {
        EventKind::Message {
            role: "user".into(),
            parts: vec![],
            source: Some(json!({ "n": n })),
        }
    }

    fn of(kinds: Vec<EventKind>) -> SurfaceSummary {
        let events: Vec<Event> = kinds
            .into_iter()
            .zip(1..)
            .map(|(kind, seq)| Event { seq, kind })
            .collect();
        SurfaceSummary::of(&events)
    }

    #[rstest]
    #[case(vec![], false, false)]
    #[case(vec![EventKind::TurnStart], false, true)]
    #[case(vec![EventKind::StepStart], true, true)]
    #[case(vec![EventKind::StepStart, EventKind::StepEnd], false, true)]
    #[case(vec![EventKind::StepStart, tool("t")], true, true)]
    #[case(vec![EventKind::StepStart, EventKind::Interrupted], false, false)]
    #[case(vec![EventKind::StepStart, EventKind::TurnEnd], false, false)]
    #[case(vec![EventKind::TurnEnd, EventKind::StepStart], true, true)]
    fn step_and_turn_state_follow_the_last_marker(
        #[case] kinds: Vec<EventKind>,
        #[case] step: bool,
        #[case] turn: bool,
    ) {
        let s = of(kinds);
        assert_eq!((s.step_open(), s.turn_open()), (step, turn));
    }

    #[test]
    fn settled_drops_the_tools_before_it_r_log_5() {
        let s = of(vec![tool("a"), EventKind::Settled, tool("b")]);
        let tokens: Vec<_> = s
            .tools_since_message()
            .iter()
            .map(|e| match &e.kind {
                EventKind::Tool { token, .. } => token.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(tokens, [Some("b".to_owned())]);
        assert!(
            of(vec![tool("a"), EventKind::Settled])
                .tools_since_message()
                .is_empty()
        );
    }

    /// Touches wait for replay like tool events, and a `settled` or a
    /// message drops them alike.
    #[test]
    fn touches_are_replayed_like_tools_until_settled() {
        let touch = |path: &str| EventKind::Touch {
            path: path.into(),
            kind: "read".into(),
            command: None,
            token: None,
        };
        let s = of(vec![touch("old"), ws(2), tool("a"), touch("b")]);
        let kinds: Vec<_> = s
            .tools_since_message()
            .iter()
            .map(|e| e.kind.type_name())
            .collect();
        assert_eq!(kinds, [Some("tool"), Some("touch")]);
        assert!(
            of(vec![touch("a"), EventKind::Settled])
                .tools_since_message()
                .is_empty()
        );
    }

    #[test]
    fn tools_are_those_after_the_last_message_even_if_it_is_hidden() {
        let s = of(vec![
            tool("old"),
            ws(2),
            tool("a"),
            EventKind::TurnEnd,
            EventKind::Compaction { hide: vec![2, 3] },
            tool("b"),
        ]);
        let tokens: Vec<_> = s
            .tools_since_message()
            .iter()
            .map(|e| match &e.kind {
                EventKind::Tool { token, .. } => token.clone().unwrap_or_default(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(tokens, ["a", "b"]);
        assert!(s.workspace().is_empty());
    }

    #[test]
    fn compaction_hides_only_listed_earlier_workspace_messages_r_log_1() {
        // seq 4 lists 1 (visible: hidden now) and 5 (later: no effect once
        // it arrives).
        let s = of(vec![
            ws(1),
            ws(2),
            EventKind::TurnStart,
            EventKind::Compaction { hide: vec![1, 5] },
            ws(5),
        ]);
        let seqs: Vec<u64> = s.workspace().iter().map(|w| w.seq).collect();
        assert_eq!(seqs, [2, 5]);
        assert_eq!(s.compactions(), 1);
        assert_eq!(
            (s.last_seq(), s.next_seq(), s.event_count()),
            (Some(5), Some(6), 5)
        );
    }

    #[test]
    fn summary_round_trips_through_json() {
        let s = of(vec![ws(1), tool("x"), EventKind::StepStart]);
        let text = serde_json::to_string(&s).expect("encode");
        let back: SurfaceSummary = serde_json::from_str(&text).expect("decode");
        assert_eq!(back, s);
    }

    #[test]
    fn next_seq_is_none_when_numbers_are_exhausted() {
        let mut s = SurfaceSummary::default();
        assert_eq!(s.next_seq(), Some(1));
        s.apply(&Event {
            seq: u64::MAX,
            kind: EventKind::TurnEnd,
        });
        assert_eq!(s.next_seq(), None);
    }
}
