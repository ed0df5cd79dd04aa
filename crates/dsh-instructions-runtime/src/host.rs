//! What the adapter needs from a product: plain data in, a small trait out.
//!
//! A product maps its own session, inbox and tool types onto these in a few
//! lines; [`crate::memory_host::MemoryHost`] is a complete reference implementation.

use camino::Utf8PathBuf;
use dsh_instructions_render::{Block, Framing};
use dsh_instructions_state::TypedSource;

/// A workspace message: one user-role message with one text part per
/// rendered unit (baseline, dynamic batch), plus its typed source
/// (R-STATE-1), which the host persists verbatim and never renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceMessage {
    /// Text parts, baseline first.
    pub parts: Vec<String>,
    /// The blocks of each part as render gave them (`parts[i]` is
    /// `blocks[i]` in [`Framing::Reminder`]), so a host that cuts or
    /// reframes the message works on values, never on the text; empty for
    /// a message a host built from text alone.
    pub blocks: Vec<Vec<Block>>,
    /// The typed source (metadata).
    pub source: TypedSource,
}

impl WorkspaceMessage {
    /// The parts joined by a newline, as a host that cannot send several
    /// text parts would show them.
    ///
    /// ```
    /// use dsh_instructions_runtime::WorkspaceMessage;
    /// let m = WorkspaceMessage {
    ///     parts: vec!["a".into(), "b".into()],
    ///     blocks: Vec::new(),
    ///     source: Default::default(),
    /// };
    /// assert_eq!(m.joined_text(), "a\nb");
    /// ```
    pub fn joined_text(&self) -> String {
        self.parts.join("\n")
    }

    /// The message as one text under `framing`, made from its blocks:
    /// [`WorkspaceMessage::joined_text`] for [`Framing::Reminder`]. A
    /// message without blocks is its joined text under either framing.
    ///
    /// ```
    /// use dsh_instructions_render::{Block, BlockKind, Framing};
    /// use dsh_instructions_runtime::WorkspaceMessage;
    /// let intro = Block { kind: BlockKind::Intro, text: "Rules.".into() };
    /// let m = WorkspaceMessage {
    ///     parts: vec![Framing::Reminder.part(["Rules."])],
    ///     blocks: vec![vec![intro]],
    ///     source: Default::default(),
    /// };
    /// assert_eq!(m.framed_text(Framing::Reminder), m.joined_text());
    /// assert_eq!(m.framed_text(Framing::Bare), "Rules.");
    /// ```
    pub fn framed_text(&self, framing: Framing) -> String {
        if self.blocks.len() != self.parts.len() {
            return self.joined_text();
        }
        self.blocks
            .iter()
            .map(|part| framing.part(part.iter().map(|b| b.text.as_str())))
            .collect::<Vec<_>>()
            .join(framing.between_parts())
    }
}

/// Session events that open and close steps (R-RT-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionEvent {
    /// `step/start`: a step opened.
    StepStart,
    /// `step/end`: the step closed.
    StepEnd,
    /// `turn/end`: the turn (and any open step) ended.
    TurnEnd,
}

/// A finished tool execution as the host reports it (R-RT-3, R-RT-4).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolExecution {
    /// Tool name, matched against `touch_tools` (R-CFG-8).
    pub name: String,
    /// The tool's arguments (a JSON object).
    pub arguments: serde_json::Value,
    /// Unique token of this execution.
    pub token: String,
    /// Token of the parent execution for programmatic (code-mode) calls.
    pub parent: Option<String>,
    /// Whether the result is an error (`is_error`).
    pub is_error: bool,
    /// Whether the execution was cancelled.
    pub cancelled: bool,
}

/// The downstream pre-step decision the adapter folds into (R-RT-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision<M> {
    /// Enter these messages (possibly none).
    Enter(Vec<BatchItem<M>>),
    /// The step is rejected: nothing enters.
    Reject,
}

/// One host message of an entering batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItem<M> {
    /// The host's message.
    pub message: M,
    /// Whether it is one of the direct prompt messages this step claimed
    /// (the workspace message is folded right after the last of them).
    pub claimed: bool,
}

/// An entry of the batch after the adapter ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchEntry<M> {
    /// A host message, unchanged.
    Host(M),
    /// The workspace message folded in by the adapter.
    Workspace(WorkspaceMessage),
}

/// Where an adapter left off reading the visible surface (see
/// [`Host::visible_since`]); its meaning belongs to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VisibleMark {
    /// Host-defined generation of the visible surface: it must change
    /// whenever the surface changes other than by appending (compaction,
    /// hiding, rewriting).
    pub generation: u64,
    /// Workspace messages on the visible surface at the mark.
    pub len: usize,
}

/// The lane's fold of the visible surface — the per-scope visible state and
/// what makes each directory known — as opaque JSON text, so a host that
/// persists sessions can keep it beside the log and a later instance starts
/// from it instead of folding every visible message again (R-LOG-5, R-HOOK-6;
/// see [`Host::saved_view`]). Only the runtime reads its content; a text it
/// cannot read is ignored and the surface is folded whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewSnapshot(String);

impl ViewSnapshot {
    /// A snapshot from its text, as [`ViewSnapshot::json`] gave it.
    ///
    /// ```
    /// use dsh_instructions_runtime::host_support::ViewSnapshot;
    /// let kept = ViewSnapshot::from_json("{}".into());
    /// assert_eq!(kept.json(), "{}");
    /// ```
    pub fn from_json(text: String) -> Self {
        Self(text)
    }

    /// The text to keep.
    pub fn json(&self) -> &str {
        &self.0
    }

    /// The text to keep, without a copy.
    ///
    /// ```
    /// use dsh_instructions_runtime::host_support::ViewSnapshot;
    /// assert_eq!(ViewSnapshot::from_json("{}".into()).into_json(), "{}");
    /// ```
    pub fn into_json(self) -> String {
        self.0
    }
}

/// What [`Host::visible_since`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisibleUpdate {
    /// The surface at the mark, followed by exactly these typed sources
    /// (oldest first), is the surface now.
    Appended(Vec<TypedSource>),
    /// The whole surface now, as [`Host::visible_workspace`] returns it.
    Whole(Vec<TypedSource>),
}

/// What the adapter reads from a session: what a host must provide. The
/// next-step inbox is the instance's own ([`crate::Instance::pending`]):
/// it lives in memory only (R-RT-7), so no host has to keep it.
///
/// Calls are short and synchronous; the adapter calls them from its own
/// serialized lane, never concurrently for one session.
///
/// Contract: the host persists an entered batch (see
/// [`crate::Instance::pre_step`]) before it reports any later tool result or
/// session event to the instance, so the visible surface is the only
/// authority a composition needs (R-STATE-5, R-RT-6).
pub trait Host: Send + Sync + std::fmt::Debug + 'static {
    /// The session's working directory (absolute).
    fn cwd(&self) -> Utf8PathBuf;
    /// Typed sources of the workspace messages on the visible surface, oldest
    /// first (R-STATE-5). Messages hidden by compaction are left out.
    fn visible_workspace(&self) -> Vec<TypedSource>;

    /// The visible surface relative to `mark`, a value this method returned
    /// earlier, and the mark for the surface now. A host that keeps an
    /// append-only view between compactions answers
    /// [`VisibleUpdate::Appended`] with only the new sources, so an instance
    /// does not re-read the whole history per composition; the default
    /// always answers [`VisibleUpdate::Whole`] with no mark, which is always
    /// correct.
    ///
    /// ```
    /// use dsh_instructions_runtime::{Host, host_support::{MemoryHost, VisibleUpdate}};
    /// let host = MemoryHost::new("/repo".into());
    /// let (whole, mark) = host.visible_since(None);
    /// assert_eq!(whole, VisibleUpdate::Whole(Vec::new()));
    /// host.append_user(vec!["rules".into()], Some(Default::default()));
    /// let (update, _) = host.visible_since(mark);
    /// assert_eq!(update, VisibleUpdate::Appended(vec![Default::default()]));
    /// host.compact_all();
    /// assert_eq!(host.visible_since(mark).0, VisibleUpdate::Whole(Vec::new()));
    /// ```
    fn visible_since(&self, mark: Option<VisibleMark>) -> (VisibleUpdate, Option<VisibleMark>) {
        let _ = mark;
        (VisibleUpdate::Whole(self.visible_workspace()), None)
    }

    /// A fold an earlier instance gave [`Host::save_view`], with the mark it
    /// covers, when the host kept one whose mark still describes the start
    /// of the surface ([`Host::visible_since`] from that mark answers
    /// [`VisibleUpdate::Appended`] with the rest). A new instance starts from
    /// it and folds only what came after, so a mount of a long session costs
    /// what changed since, not the number of visible messages. The default
    /// keeps none (the surface is folded whole).
    fn saved_view(&self) -> Option<(ViewSnapshot, VisibleMark)> {
        None
    }

    /// Whether this host keeps folds ([`Host::save_view`]): the lane encodes
    /// one after a composition that advanced its view only for a host that
    /// does (an encoding costs about what the fold holds). The default keeps
    /// none.
    fn keeps_views(&self) -> bool {
        false
    }

    /// Offers the fold of the surface up to `mark` (a mark this host's
    /// [`Host::visible_since`] returned) for a later instance. Called after a
    /// composition whose view advanced, when [`Host::keeps_views`]; the
    /// default drops it.
    fn save_view(&self, view: ViewSnapshot, mark: VisibleMark) {
        let _ = (view, mark);
    }
    /// Whether persisted history ends inside an open step (after `step/start`,
    /// before `step/end`/`turn/end`); seeds step gating (R-RT-5).
    fn step_open(&self) -> bool;
}
