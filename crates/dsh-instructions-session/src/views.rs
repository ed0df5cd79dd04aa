//! The kept fold of the visible surface: `view.json` next to the log, the
//! [`ViewSnapshot`] the last loop instance offered ([`Host::save_view`]) and
//! the mark it covers, so the next process over the session folds only the
//! visible messages appended since (R-LOG-5, R-HOOK-6).
//!
//! Derived and disposable, like the checkpoint and `versions.json`: a
//! missing, unreadable or other-format file, or one whose mark no longer
//! describes the log (a compaction since, or a covered entry that is not the
//! one it was), is not used and the surface is folded whole; a damaged one
//! (unusable, or bytes that are not a view) is also removed and reported
//! ([`dsh_session_log::side`]). The mark is
//! checked against the log itself: the compactions so far, and the sequence
//! number and source digest of the last covered visible entry. Written
//! with [`dsh_session_log::side::write`] by the lock holder, as a cache
//! (not fsync'd); never instruction text.
//!
//! [`Host::save_view`]: dsh_instructions_runtime::Host::save_view

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_runtime::host_support::{ViewSnapshot, VisibleMark};
use dsh_instructions_state::Digest;
use dsh_session_log::side::{self, Durability};
use dsh_session_log::{SurfaceSummary, VisibleSource};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// File name of the kept fold, beside `session.jsonl`.
pub const VIEW_FILE_NAME: &str = "view.json";

const FORMAT: &str = "dsh-session-view";
const VERSION: u32 = 1;

/// The file's content.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Kept {
    format: String,
    version: u32,
    /// Compactions in the log when the fold was taken (the mark's
    /// generation, see [`crate::LogHost`]).
    compactions: u64,
    /// Visible entries of the log's summary the fold covers (the mark's
    /// length).
    len: usize,
    /// The last covered entry: its sequence number and the digest of its
    /// source text (none when the fold covers no entry).
    last: Option<(u64, String)>,
    /// The snapshot's own text, inline.
    view: Box<RawValue>,
}

/// The last entry of `covered`, as [`Kept::last`] records it.
fn last_of(covered: &[VisibleSource]) -> Option<(u64, String)> {
    covered
        .last()
        .map(|w| (w.seq, Digest::of(w.source.json()).to_hex()))
}

impl Kept {
    /// What to keep for `view` at `mark` over `summary`; `None` when the mark
    /// is not one of this log's now.
    pub(crate) fn of(
        summary: &SurfaceSummary,
        view: ViewSnapshot,
        mark: VisibleMark,
    ) -> Option<Self> {
        let entries = summary.workspace();
        if mark.generation != summary.compactions() || mark.len > entries.len() {
            return None;
        }
        Some(Self {
            format: FORMAT.into(),
            version: VERSION,
            compactions: mark.generation,
            len: mark.len,
            last: last_of(&entries[..mark.len]),
            view: RawValue::from_string(view.into_json()).ok()?,
        })
    }

    /// The fold and its mark, when the log's visible `entries` and mark `now`
    /// still begin with what it covers.
    pub(crate) fn still_describes(
        self,
        entries: &[VisibleSource],
        now: VisibleMark,
    ) -> Option<(ViewSnapshot, VisibleMark)> {
        let covered = entries.get(..self.len)?;
        if self.compactions != now.generation || last_of(covered) != self.last {
            return None;
        }
        let mark = VisibleMark {
            generation: self.compactions,
            len: self.len,
        };
        // The text moves out of the parsed file: no copy of the fold.
        let text = String::from(Box::<str>::from(self.view));
        Some((ViewSnapshot::from_json(text), mark))
    }
}

/// Where `log_path`'s session keeps its fold.
pub(crate) fn path_for(log_path: &Utf8Path) -> Utf8PathBuf {
    log_path.with_file_name(VIEW_FILE_NAME)
}

/// The kept fold at `path`, when there is one of this format. A damaged
/// file is removed and reported (called under the session lock).
pub(crate) fn load(path: &Utf8Path) -> Option<Kept> {
    side::load_json::<Kept>(
        path,
        "a kept view",
        "removed; rebuilt from the log's visible surface",
    )
    .filter(|kept| kept.format == FORMAT && kept.version == VERSION)
}

/// Replaces the fold at `path` atomically; a failure leaves the old file
/// (or none), which is only slower: its mark no longer matches, or it is
/// missing, and the next process folds the surface whole.
pub(crate) fn store(path: &Utf8Path, kept: &Kept) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(kept).map_err(std::io::Error::other)?;
    side::write(path, &bytes, Durability::Cache)
}
