//! Parts that finish in their order (R-HOOK-4, decision 0043).
//!
//! Claude Code joins the answers of an event's `--part K` entries in the
//! order the processes finished, not the order they were registered, and
//! keeps that order only when the finishes lie far enough apart (harness
//! README, "Several hook outputs for one event"; docs/decisions/0043). So in
//! Claude Code part K prints its piece only after part K−1 has printed its
//! own, plus a gap: each part, once it has printed and flushed, leaves a
//! marker `<session>/parts.done/<event>.<K>`; its successor polls for that
//! marker (no lock: creating a file is atomic), then waits the gap.
//!
//! Only what must wait waits: part 1, every part of a one-part message and
//! a part with nothing to give answer at once; every wait ends at a
//! deadline counted from the process's start ([`ORDER_DEADLINE`]), so a
//! predecessor that died or hangs delays its successors once and never
//! makes the agent's hook timeout (10 s as installed) reach them — the
//! piece is then given out of order rather than lost.

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};

/// The folder of the finish markers inside a session's directory.
pub(crate) const DONE_DIR_NAME: &str = "parts.done";

/// The gap between two parts' finishes, unless [`PART_GAP_ENV`] says otherwise:
/// measured to keep Claude Code's order on a 2-core machine under a busy
/// loop per core (decision 0043 gives the measurements and the margin).
pub const PART_GAP: Duration = Duration::from_millis(60);

/// Overrides [`PART_GAP`] in milliseconds (at most 1,000), for measuring
/// the threshold (`cargo xtask e2e --case parts-order`, decision 0043);
/// `off` finishes every part at once, as before the order was kept (to see
/// the e2e fail on shuffled parts).
pub const PART_GAP_ENV: &str = "DSH_HOOK_PART_GAP_MS";

/// No part waits past this point after its process started: with the lock
/// wait (5 s) it stays well inside the agents' 10 s hook timeout.
pub const ORDER_DEADLINE: Duration = Duration::from_secs(7);

/// How often a waiting part looks for its predecessor's marker.
const POLL: Duration = Duration::from_millis(2);

/// Leading hex digits of the event key in a marker's name.
const KEY_CHARS: usize = 32;

/// The configured gap; `None` = `off`.
fn gap() -> Option<Duration> {
    match std::env::var(PART_GAP_ENV) {
        Ok(v) if v.trim() == "off" => None,
        Ok(v) => Some(
            v.trim()
                .parse::<u64>()
                .map_or(PART_GAP, |ms| Duration::from_millis(ms.min(1_000))),
        ),
        Err(_) => Some(PART_GAP),
    }
}

/// One part's place in its event's finishing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    dir: Utf8PathBuf,
    key: String,
    part: usize,
}

/// How a part's wait for its predecessor ended (for the diagnostic log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// Part 1: nothing before it.
    First,
    /// The predecessor finished; this part then waited the gap.
    After(Duration),
    /// The deadline came first: given out of order rather than lost.
    Deadline(Duration),
}

impl std::fmt::Display for Waited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::First => f.write_str("first"),
            Self::After(d) => write!(f, "after its predecessor, {}ms", d.as_millis()),
            Self::Deadline(d) => write!(
                f,
                "its predecessor did not finish within {}ms: given anyway",
                d.as_millis()
            ),
        }
    }
}

impl Turn {
    /// The turn of piece `part` (1-based) of an event whose message has
    /// `parts` pieces; `None` where no order needs keeping (one piece, or no
    /// piece for this part).
    pub(crate) fn of(session_dir: &Utf8Path, key: &str, part: usize, parts: usize) -> Option<Self> {
        (parts > 1 && (1..=parts).contains(&part) && gap().is_some()).then(|| Self {
            dir: session_dir.join(DONE_DIR_NAME),
            key: key.chars().take(KEY_CHARS).collect(),
            part,
        })
    }

    fn marker(&self, part: usize) -> Utf8PathBuf {
        self.dir.join(format!("{}.{part}", self.key))
    }

    /// Waits until the predecessor's marker exists, then the gap; or until
    /// `started + ORDER_DEADLINE`.
    pub(crate) fn wait(&self, started: Instant) -> Waited {
        self.wait_with(started, gap().unwrap_or(PART_GAP), ORDER_DEADLINE)
    }

    fn wait_with(&self, started: Instant, gap: Duration, deadline: Duration) -> Waited {
        if self.part == 1 {
            return Waited::First;
        }
        let before = self.marker(self.part - 1);
        let until = started + deadline;
        let begun = Instant::now();
        loop {
            if before.as_std_path().symlink_metadata().is_ok() {
                std::thread::sleep(gap.min(until.saturating_duration_since(Instant::now())));
                return Waited::After(begun.elapsed());
            }
            let now = Instant::now();
            if now >= until {
                return Waited::Deadline(begun.elapsed());
            }
            std::thread::sleep(POLL.min(until - now));
        }
    }

    /// Leaves this part's marker: call after the answer is printed and
    /// flushed. A marker that cannot be written costs the successor its
    /// wait until the deadline, never its piece.
    pub(crate) fn finished(&self) {
        let _ = std::fs::create_dir_all(&self.dir);
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.marker(self.part));
    }
}

/// Removes the markers of events no longer among `keep` (the keys the
/// parts records still hold): the folder stays as small as the records.
pub(crate) fn forget_others(session_dir: &Utf8Path, keep: &[&str]) {
    let dir = session_dir.join(DONE_DIR_NAME);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let kept: Vec<String> = keep
        .iter()
        .map(|k| k.chars().take(KEY_CHARS).collect())
        .collect();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let key = name.split('.').next().unwrap_or_default();
        if !kept.iter().any(|k| k == key) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    use crate::testdir::tmp_dir as tmp;

    const KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef";

    #[rstest]
    #[case::one_piece(1, 1, false)]
    #[case::no_piece_for_this_part(3, 2, false)]
    #[case::part_zero(0, 2, false)]
    #[case::first_of_two(1, 2, true)]
    #[case::last_of_eight(8, 8, true)]
    fn only_pieces_of_a_split_message_keep_an_order(
        #[case] part: usize,
        #[case] parts: usize,
        #[case] ordered: bool,
    ) {
        assert_eq!(
            Turn::of(Utf8Path::new("/s"), KEY, part, parts).is_some(),
            ordered
        );
    }

    #[test]
    fn part_one_never_waits() {
        let (_t, dir) = tmp();
        let t = Turn::of(&dir, KEY, 1, 3).unwrap();
        assert_eq!(
            t.wait_with(
                Instant::now(),
                Duration::from_secs(5),
                Duration::from_secs(5)
            ),
            Waited::First
        );
    }

    /// A successor waits for its predecessor's marker, then the gap, and
    /// never finishes before it. Whether the marker appears while the
    /// successor polls or before its first look (a busy machine may start
    /// the thread late), both hold; the deadline is only a hang guard
    /// (decision 0082).
    #[test]
    fn a_successor_finishes_a_gap_after_its_predecessor() {
        let (_t, dir) = tmp();
        let first = Turn::of(&dir, KEY, 1, 2).unwrap();
        let second = Turn::of(&dir, KEY, 2, 2).unwrap();
        let gap = Duration::from_millis(30);
        let waiter = std::thread::spawn(move || {
            let w = second.wait_with(Instant::now(), gap, Duration::from_secs(600));
            (w, Instant::now())
        });
        // Most runs: the successor is polling by now.
        std::thread::sleep(Duration::from_millis(50));
        let marked = Instant::now();
        first.finished();
        let (w, done) = waiter.join().unwrap();
        assert!(matches!(w, Waited::After(_)), "{w:?}");
        assert!(
            done >= marked + gap,
            "finished before its predecessor plus the gap"
        );
    }

    /// A predecessor that never finishes delays its successor until the
    /// deadline, and the piece is given then: never earlier, and not never.
    /// How much later than the deadline a loaded machine returns is not
    /// this test's to say (decision 0082).
    #[test]
    fn a_dead_predecessor_costs_the_deadline_only() {
        let (_t, dir) = tmp();
        let t = Turn::of(&dir, KEY, 2, 2).unwrap();
        let started = Instant::now();
        let w = t.wait_with(started, Duration::from_millis(5), Duration::from_millis(40));
        assert!(matches!(w, Waited::Deadline(_)), "{w:?}");
        assert!(started.elapsed() >= Duration::from_millis(40));
    }

    /// Another event's markers never release a part.
    #[test]
    fn markers_are_per_event() {
        let (_t, dir) = tmp();
        let other = "ffffffffffffffffffffffffffffffffffff";
        Turn::of(&dir, other, 1, 2).unwrap().finished();
        let t = Turn::of(&dir, KEY, 2, 2).unwrap();
        let w = t.wait_with(Instant::now(), Duration::ZERO, Duration::from_millis(20));
        assert!(matches!(w, Waited::Deadline(_)), "{w:?}");
    }

    #[test]
    fn forgetting_keeps_only_the_recorded_events() {
        let (_t, dir) = tmp();
        let other = "ffffffffffffffffffffffffffffffffffff";
        Turn::of(&dir, KEY, 1, 2).unwrap().finished();
        Turn::of(&dir, other, 1, 2).unwrap().finished();
        forget_others(&dir, &[KEY]);
        let names: Vec<String> = std::fs::read_dir(dir.join(DONE_DIR_NAME))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{}.1", &KEY[..KEY_CHARS])]);
    }
}
