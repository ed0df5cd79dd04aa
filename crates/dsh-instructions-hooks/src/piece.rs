//! Stage 6, parts: the event's one composition cut into the pieces its
//! registered `--part K` entries answer (R-HOOK-4, decision 0018), recorded
//! in `parts.json` so every peer part answers from the same composition,
//! and, where the agent shows answers in the order they finish, each
//! piece's turn (decision 0043).
//!
//! A part whose event a peer already composed answers its piece from the
//! record before anything is mounted ([`recorded`]); the first part to
//! hold the lock composes and records the split ([`record`]).

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_runtime::WorkspaceMessage;

use crate::agent::{Agent, PARTS};
use crate::error::HookError;
use crate::order::Turn;
use crate::outcome::{Given, Handled};
use crate::record::{Record, Records, event_key};
use crate::split::{PART_BYTES, render_part, split};

/// One part's place in its event's split.
#[derive(Debug)]
pub(crate) struct Piece {
    agent: Agent,
    /// 1-based.
    k: usize,
    key: String,
    records_path: Utf8PathBuf,
    session_dir: Utf8PathBuf,
    /// This answer gives every piece (carried ones first), not only the
    /// k-th: Copilot CLI's one entry on an event that keeps a whole answer.
    all: bool,
    /// The event's only entry (Copilot CLI): no peer answers from a record
    /// of it, so none is looked up (two events with the same bytes are two
    /// events).
    single: bool,
}

/// What the record says of this part's event.
#[derive(Debug)]
pub(crate) enum Recorded {
    /// A peer composed it already: this piece of that composition.
    Answered(Handled),
    /// The event is not recorded yet: compose, then [`record`] with these.
    Compose(Records, Option<HookError>),
}

impl Piece {
    /// Part `k` (1-based) of the event whose bytes are `input`.
    pub(crate) fn new(agent: Agent, k: u32, input: &[u8], session_dir: &Utf8Path) -> Self {
        Self {
            agent,
            k: k as usize,
            key: event_key(input),
            records_path: session_dir.join(crate::record::RECORDS_FILE_NAME),
            session_dir: session_dir.to_owned(),
            all: false,
            single: false,
        }
    }

    /// The one entry of an agent that registers one per event (Copilot
    /// CLI): on an event whose answer arrives whole (`all`), every piece,
    /// those earlier events left first; on a tool event, whose context the
    /// agent cuts, the first piece, the rest with the next events
    /// (decision 0066).
    pub(crate) fn single(agent: Agent, all: bool, input: &[u8], session_dir: &Utf8Path) -> Self {
        Self {
            all,
            single: true,
            ..Self::new(agent, 1, input, session_dir)
        }
    }

    /// The finishing turn of this piece of `n`, where the agent orders hook
    /// answers by when they finish (decision 0043).
    fn turn(&self, n: usize) -> Option<Turn> {
        if self.agent.orders_parts_by_finish() {
            Turn::of(&self.session_dir, &self.key, self.k, n)
        } else {
            None
        }
    }
}

/// This piece from the record of a peer's composition, if there is one
/// (never compose twice).
///
/// # Errors
/// The record could not be saved.
pub(crate) fn recorded(piece: &Piece) -> Result<Recorded, HookError> {
    let (mut recs, warn) = Records::load(&piece.records_path);
    if piece.single {
        return Ok(Recorded::Compose(recs, warn));
    }
    let Some(r) = recs.find_mut(&piece.key) else {
        return Ok(Recorded::Compose(recs, warn));
    };
    let (k, n) = (piece.k, r.parts.len());
    let (given, turn) = match r.claim(k) {
        Some(i) => (
            Given::Context(render_part(&r.parts[i], k, n, piece.agent.framing())),
            piece.turn(n),
        ),
        None => (Given::Nothing, None),
    };
    let why = match &given {
        Given::Context(_) => format!("gave part {k} of {n} of the event's composition"),
        _ => format!("no part {k} (the event has {n})"),
    };
    recs.save(&piece.records_path)?;
    Ok(Recorded::Answered(Handled { given, why, turn }))
}

/// The first part of this event to hold the lock: records the split of
/// `message` (the composition, `None` for nothing new) so the peers answer
/// from it; pieces earlier events left unclaimed come first (given again,
/// never dropped). `why` is the delivery's log reason, extended here.
pub(crate) fn record(
    piece: &Piece,
    (mut recs, warn): (Records, Option<HookError>),
    message: Option<&WorkspaceMessage>,
    mut why: String,
) -> Handled {
    let k = piece.k;
    let mut parts = recs.take_unclaimed();
    let carried = parts.len();
    if let Some(message) = message {
        // What the agent loads itself and keeps is composed (so updates,
        // removals and the budget see it) but not given twice (decision
        // 0073).
        let own = crate::native_chain::without_native_baseline(
            message,
            crate::native_chain::Own {
                names: piece.agent.own_chain_files(),
                places: piece.agent.own_rule_places(),
            },
        );
        parts.extend(split(own.as_ref().unwrap_or(message), PART_BYTES));
    }
    let n = parts.len();
    let turn = piece.turn(n);
    let mut record = Record {
        key: piece.key.clone(),
        claimed: vec![false; n],
        parts,
    };
    let framing = piece.agent.framing();
    let (given, turn) = if piece.all {
        let texts: Vec<String> = (1..=n)
            .filter_map(|k| {
                record
                    .claim(k)
                    .map(|i| render_part(&record.parts[i], k, n, framing))
            })
            .collect();
        if texts.is_empty() {
            (Given::Nothing, None)
        } else {
            (Given::Context(texts.join(framing.between_parts())), None)
        }
    } else {
        match record.claim(k) {
            Some(i) => (
                Given::Context(render_part(&record.parts[i], k, n, framing)),
                turn,
            ),
            None => (Given::Nothing, None),
        }
    };
    if n > 0 {
        why.push_str(&format!("; {n} parts"));
    }
    if carried > 0 {
        why.push_str(&format!(", {carried} carried from earlier events"));
    }
    let registered = if piece.all {
        n
    } else {
        piece.agent.parts() as usize
    };
    if n > registered {
        let beyond = if piece.agent.parts() == 1 {
            format!("{} parts beyond this answer's one", n - registered)
        } else {
            format!("{} parts beyond the {PARTS} registered", n - registered)
        };
        why.push_str(&format!("; {beyond} are given with the next event"));
    }
    if let Some(w) = warn {
        why.push_str(&format!("; unreadable records replaced: {w}"));
    }
    recs.push(record);
    if let Err(e) = recs.save(&piece.records_path) {
        why.push_str(&format!(
            "; the parts record was not saved ({e}): the other parts of this event are lost"
        ));
    }
    if n > 1 && piece.agent.orders_parts_by_finish() {
        let keys: Vec<&str> = recs.records.iter().map(|r| r.key.as_str()).collect();
        crate::order::forget_others(&piece.session_dir, &keys);
    }
    Handled { given, why, turn }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testdir::tmp_dir;

    /// A composition of one file of `bytes` bytes.
    fn message(bytes: usize) -> WorkspaceMessage {
        use dsh_instructions_render::{BaselineFile, BaselineKind, Budget, render_baseline};
        let content = "x".repeat(bytes);
        let files = [BaselineFile {
            path: "AGENTS.md",
            content: &content,
        }];
        let r = render_baseline(BaselineKind::Normal, &files, Budget::bytes(1 << 20));
        WorkspaceMessage {
            parts: vec![r.text.clone()],
            blocks: vec![r.blocks],
            source: Default::default(),
        }
    }

    fn text(g: &Given) -> &str {
        match g {
            Given::Context(t) => t,
            other => panic!("{other:?}"),
        }
    }

    /// The first part records the split; each peer answers its own piece
    /// of that record, and a piece is given once.
    #[test]
    fn peers_answer_their_piece_of_the_first_split() {
        let (_tmp, dir) = tmp_dir();
        let input = b"{\"hook_event_name\": \"UserPromptSubmit\"}";
        let body = message(PART_BYTES * 2);
        let p2 = Piece::new(Agent::Codex, 2, input, &dir);
        let Recorded::Compose(recs, warn) = recorded(&p2).expect("recorded") else {
            panic!("nothing recorded yet")
        };
        assert!(warn.is_none());
        let h = record(&p2, (recs, warn), Some(&body), "why".into());
        assert!(h.why.starts_with("why; "), "{}", h.why);
        let n = split(&body, PART_BYTES).len();
        assert!(n >= 2, "{n}");
        assert!(h.why.contains(&format!("{n} parts")), "{}", h.why);
        assert!(
            text(&h.given).contains(&crate::split::part_label(2, n)),
            "{:?}",
            h.given
        );
        assert!(h.turn.is_none(), "Codex keeps registration order");
        let p1 = Piece::new(Agent::Codex, 1, input, &dir);
        let Recorded::Answered(h1) = recorded(&p1).expect("recorded") else {
            panic!("the peer's split is recorded")
        };
        assert!(text(&h1.given).contains(&crate::split::part_label(1, n)));
        assert_eq!(
            h1.why,
            format!("gave part 1 of {n} of the event's composition")
        );
        let Recorded::Answered(again) = recorded(&p1).expect("recorded") else {
            panic!("recorded")
        };
        assert!(matches!(again.given, Given::Nothing), "given once");
    }

    /// Nothing new: no parts, and a part beyond the split answers nothing.
    #[test]
    fn nothing_new_gives_no_part() {
        let (_tmp, dir) = tmp_dir();
        let p = Piece::new(Agent::Claude, 1, b"{}", &dir);
        let Recorded::Compose(recs, warn) = recorded(&p).expect("recorded") else {
            panic!("nothing recorded yet")
        };
        let h = record(&p, (recs, warn), None, "nothing new".into());
        assert!(matches!(h.given, Given::Nothing));
        assert_eq!(h.why, "nothing new");
        assert!(h.turn.is_none());
    }
}
