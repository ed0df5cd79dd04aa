//! A complete in-memory host: history with a visible surface, compaction and
//! a next-step inbox. It serves this crate's tests, the conformance runner
//! and the CLI, and shows a product what the [`Host`] trait asks for.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

use camino::Utf8PathBuf;
use dsh_instructions_state::TypedSource;

use crate::host::{
    BatchEntry, Host, InboxId, SessionEvent, ViewSnapshot, VisibleMark, VisibleUpdate,
    WorkspaceMessage,
};

/// One persisted history entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryItem {
    /// A user-role message; `source` is set for workspace messages.
    User {
        /// Text parts.
        parts: Vec<String>,
        /// Typed source of a workspace message.
        source: Option<TypedSource>,
    },
    /// A session event.
    Event(SessionEvent),
}

impl HistoryItem {
    /// Whether this is a workspace message.
    pub fn is_workspace(&self) -> bool {
        matches!(
            self,
            Self::User {
                source: Some(_),
                ..
            }
        )
    }
}

/// A next-step inbox held in memory: the part of [`Host`] every in-memory
/// host implements the same way, so a host that persists history elsewhere
/// (a log, a database) keeps one of these behind its lock and forwards
/// [`Host::pending`], [`Host::inbox_prepend`], [`Host::inbox_replace`] and
/// [`Host::inbox_remove`] to it.
///
/// Ids are never reused, not even after [`Inbox::clear`], so an id a
/// disposed instance still holds cannot reach a newer message.
///
/// ```
/// use dsh_instructions_runtime::{Inbox, WorkspaceMessage};
/// let msg = |t: &str| WorkspaceMessage { parts: vec![t.into()], blocks: Vec::new(), source: Default::default() };
/// let mut inbox = Inbox::default();
/// let a = inbox.prepend(msg("a"));
/// let b = inbox.prepend(msg("b"));
/// inbox.replace(a, msg("a2"));
/// let texts: Vec<String> = inbox.messages().map(|m| m.joined_text()).collect();
/// assert_eq!(texts, ["b", "a2"]); // newest first
/// inbox.remove(b);
/// inbox.clear();
/// assert!(inbox.pending().is_empty());
/// assert_ne!(inbox.prepend(msg("c")), a, "ids are not reused");
/// ```
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Inbox {
    items: Vec<(InboxId, WorkspaceMessage)>,
    last_id: InboxId,
}

impl Inbox {
    /// Pending messages with their ids, in inbox order (front first).
    pub fn pending(&self) -> &[(InboxId, WorkspaceMessage)] {
        &self.items
    }

    /// Pending messages without their ids, in inbox order.
    pub fn messages(&self) -> impl Iterator<Item = &WorkspaceMessage> {
        self.items.iter().map(|(_, m)| m)
    }

    /// Puts `message` at the front and returns its fresh id.
    pub fn prepend(&mut self, message: WorkspaceMessage) -> InboxId {
        // Wrapping only after 2^64 prepends; never a panic.
        self.last_id = self.last_id.wrapping_add(1);
        self.items.insert(0, (self.last_id, message));
        self.last_id
    }

    /// Replaces the message with this id in place; an id no longer pending
    /// changes nothing.
    pub fn replace(&mut self, id: InboxId, message: WorkspaceMessage) {
        if let Some(slot) = self.items.iter_mut().find(|(i, _)| *i == id) {
            slot.1 = message;
        }
    }

    /// Removes the message with this id, if pending.
    pub fn remove(&mut self, id: InboxId) {
        self.items.retain(|(i, _)| *i != id);
    }

    /// Drops every pending message (ids keep counting).
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

#[derive(Debug, Default)]
struct State {
    history: Vec<HistoryItem>,
    hidden: BTreeSet<usize>,
    inbox: Inbox,
    /// Bumped whenever the visible surface changes other than by appending.
    generation: u64,
    /// History indexes of the visible workspace messages, oldest first.
    visible_ws: Vec<usize>,
    /// The fold an instance offered last ([`Host::save_view`]), for the
    /// next instance on this host (a remount).
    kept_view: Option<(ViewSnapshot, VisibleMark)>,
}

impl State {
    fn push(&mut self, item: HistoryItem) {
        if matches!(
            item,
            HistoryItem::User {
                source: Some(_),
                ..
            }
        ) {
            self.visible_ws.push(self.history.len());
        }
        self.history.push(item);
    }

    fn hide(&mut self, indexes: impl IntoIterator<Item = usize>) {
        self.hidden.extend(indexes);
        let hidden = &self.hidden;
        self.visible_ws.retain(|i| !hidden.contains(i));
        self.generation += 1;
    }

    fn source(&self, index: usize) -> Option<TypedSource> {
        match self.history.get(index) {
            Some(HistoryItem::User {
                source: Some(src), ..
            }) => Some(src.clone()),
            _ => None,
        }
    }
}

/// Reference in-memory host (see the module docs).
///
/// ```
/// use dsh_instructions_runtime::{MemoryHost, Host};
/// let host = MemoryHost::new("/work/repo".into());
/// host.append_user(vec!["hi".into()], None);
/// assert_eq!(host.user_messages().len(), 1);
/// assert!(host.visible_workspace().is_empty());
/// ```
#[derive(Debug)]
pub struct MemoryHost {
    cwd: Utf8PathBuf,
    state: Mutex<State>,
    keeps_views: bool,
}

impl MemoryHost {
    /// An empty session in `cwd`.
    pub fn new(cwd: Utf8PathBuf) -> Self {
        Self {
            cwd,
            state: Mutex::new(State::default()),
            keeps_views: false,
        }
    }

    /// This host keeping the fold its instances offer ([`Host::save_view`]),
    /// so a remount on it starts from the last one; off by default, since
    /// an in-memory session rarely remounts and each offer costs an
    /// encoding.
    ///
    /// ```
    /// use dsh_instructions_runtime::{Host, MemoryHost};
    /// assert!(MemoryHost::new("/w".into()).with_kept_views().keeps_views());
    /// assert!(!MemoryHost::new("/w".into()).keeps_views());
    /// ```
    pub fn with_kept_views(mut self) -> Self {
        self.keeps_views = true;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends a user message.
    pub fn append_user(&self, parts: Vec<String>, source: Option<TypedSource>) {
        self.lock().push(HistoryItem::User { parts, source });
    }

    /// Appends an entered batch in order, persisting workspace messages with
    /// their typed source (R-RT-1).
    pub fn append_batch(&self, batch: &[BatchEntry<String>]) {
        let mut s = self.lock();
        for entry in batch {
            s.push(match entry {
                BatchEntry::Host(text) => HistoryItem::User {
                    parts: vec![text.clone()],
                    source: None,
                },
                BatchEntry::Workspace(m) => HistoryItem::User {
                    parts: m.parts.clone(),
                    source: Some(m.source.clone()),
                },
            });
        }
    }

    /// Appends a session event (call the instance's `session_event` after).
    pub fn append_event(&self, event: SessionEvent) {
        self.lock().push(HistoryItem::Event(event));
    }

    /// Every history entry, hidden ones included.
    pub fn history(&self) -> Vec<HistoryItem> {
        self.lock().history.clone()
    }

    /// Persisted user messages (hidden ones included), oldest first.
    pub fn user_messages(&self) -> Vec<HistoryItem> {
        self.lock()
            .history
            .iter()
            .filter(|h| matches!(h, HistoryItem::User { .. }))
            .cloned()
            .collect()
    }

    fn hide_where(&self, pred: impl Fn(usize, &HistoryItem) -> bool) {
        let mut s = self.lock();
        let hide: Vec<usize> = s
            .history
            .iter()
            .enumerate()
            .filter(|(i, h)| pred(*i, h))
            .map(|(i, _)| i)
            .collect();
        s.hide(hide);
    }

    /// Hides the latest visible baseline message.
    pub fn compact_baseline(&self) {
        let s = self.lock();
        let latest = s.history.iter().enumerate().rev().find(|(i, h)| {
            !s.hidden.contains(i)
                && matches!(h, HistoryItem::User { source: Some(src), .. } if src.baseline)
        });
        let Some((index, _)) = latest else { return };
        drop(s);
        self.lock().hide([index]);
    }

    /// Hides every workspace message.
    pub fn compact_workspace(&self) {
        self.hide_where(|_, h| h.is_workspace());
    }

    /// Hides everything so far.
    pub fn compact_all(&self) {
        self.hide_where(|_, _| true);
    }

    /// Hides the user messages with these 0-based indexes (over persisted
    /// user messages).
    pub fn hide_user_messages(&self, indexes: &[usize]) {
        let wanted: BTreeSet<usize> = indexes.iter().copied().collect();
        let s = self.lock();
        let hide: Vec<usize> = s
            .history
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h, HistoryItem::User { .. }))
            .enumerate()
            .filter(|(n, _)| wanted.contains(n))
            .map(|(_, (i, _))| i)
            .collect();
        drop(s);
        self.lock().hide(hide);
    }

    /// Pending workspace messages in the inbox.
    pub fn inbox(&self) -> Vec<WorkspaceMessage> {
        self.lock().inbox.messages().cloned().collect()
    }

    /// Empties the inbox (a resume: the inbox is not persisted, R-RT-7).
    pub fn clear_inbox(&self) {
        self.lock().inbox.clear();
    }
}

impl Host for MemoryHost {
    fn cwd(&self) -> Utf8PathBuf {
        self.cwd.clone()
    }

    fn visible_workspace(&self) -> Vec<TypedSource> {
        let s = self.lock();
        s.visible_ws.iter().filter_map(|&i| s.source(i)).collect()
    }

    fn visible_since(&self, mark: Option<VisibleMark>) -> (VisibleUpdate, Option<VisibleMark>) {
        let s = self.lock();
        let now = VisibleMark {
            generation: s.generation,
            len: s.visible_ws.len(),
        };
        let update = match mark {
            Some(m) if m.generation == s.generation && m.len <= now.len => VisibleUpdate::Appended(
                s.visible_ws[m.len..]
                    .iter()
                    .filter_map(|&i| s.source(i))
                    .collect(),
            ),
            _ => VisibleUpdate::Whole(s.visible_ws.iter().filter_map(|&i| s.source(i)).collect()),
        };
        (update, Some(now))
    }

    fn saved_view(&self) -> Option<(ViewSnapshot, VisibleMark)> {
        let s = self.lock();
        // Marks of an older generation describe a surface since rewritten.
        s.kept_view
            .clone()
            .filter(|(_, m)| m.generation == s.generation && m.len <= s.visible_ws.len())
    }

    fn keeps_views(&self) -> bool {
        self.keeps_views
    }

    fn save_view(&self, view: ViewSnapshot, mark: VisibleMark) {
        if self.keeps_views {
            self.lock().kept_view = Some((view, mark));
        }
    }

    fn step_open(&self) -> bool {
        let s = self.lock();
        s.history
            .iter()
            .rev()
            .find_map(|h| match h {
                HistoryItem::Event(SessionEvent::StepStart) => Some(true),
                HistoryItem::Event(SessionEvent::StepEnd | SessionEvent::TurnEnd) => Some(false),
                _ => None,
            })
            .unwrap_or(false)
    }

    fn pending(&self) -> Vec<(InboxId, WorkspaceMessage)> {
        self.lock().inbox.pending().to_vec()
    }

    fn inbox_prepend(&self, message: WorkspaceMessage) -> InboxId {
        self.lock().inbox.prepend(message)
    }

    fn inbox_replace(&self, id: InboxId, message: WorkspaceMessage) {
        self.lock().inbox.replace(id, message);
    }

    fn inbox_remove(&self, id: InboxId) {
        self.lock().inbox.remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn msg(text: &str) -> WorkspaceMessage {
        WorkspaceMessage {
            parts: vec![text.to_owned()],
            blocks: Vec::new(),
            source: TypedSource::default(),
        }
    }

    fn texts(inbox: &Inbox) -> Vec<String> {
        inbox
            .messages()
            .map(WorkspaceMessage::joined_text)
            .collect()
    }

    /// One inbox operation; ids are referred to by the order they were
    /// handed out (0 = first prepend).
    #[derive(Debug, Clone, Copy)]
    enum Op {
        Prepend(&'static str),
        Replace(usize, &'static str),
        Remove(usize),
        Clear,
    }

    #[rstest]
    #[case::newest_first(&[Op::Prepend("a"), Op::Prepend("b")], &["b", "a"])]
    #[case::replace_in_place(&[Op::Prepend("a"), Op::Prepend("b"), Op::Replace(0, "a2")], &["b", "a2"])]
    #[case::remove_one(&[Op::Prepend("a"), Op::Prepend("b"), Op::Remove(1)], &["a"])]
    #[case::replace_after_remove_is_a_no_op(&[Op::Prepend("a"), Op::Remove(0), Op::Replace(0, "x")], &[])]
    #[case::remove_twice_is_a_no_op(&[Op::Prepend("a"), Op::Prepend("b"), Op::Remove(0), Op::Remove(0)], &["b"])]
    #[case::stale_id_after_clear_misses_the_new_message(&[Op::Prepend("a"), Op::Clear, Op::Prepend("b"), Op::Replace(0, "x"), Op::Remove(0)], &["b"])]
    fn inbox_operations(#[case] ops: &[Op], #[case] want: &[&str]) {
        let mut inbox = Inbox::default();
        let mut ids = Vec::new();
        for op in ops {
            match *op {
                Op::Prepend(t) => ids.push(inbox.prepend(msg(t))),
                Op::Replace(n, t) => inbox.replace(ids[n], msg(t)),
                Op::Remove(n) => inbox.remove(ids[n]),
                Op::Clear => inbox.clear(),
            }
        }
        assert_eq!(texts(&inbox), want);
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "ids are never reused: {ids:?}");
    }

    #[test]
    fn memory_host_forwards_its_inbox_and_a_resume_clears_it() {
        let host = MemoryHost::new("/r".into());
        let a = host.inbox_prepend(msg("a"));
        let b = host.inbox_prepend(msg("b"));
        host.inbox_replace(a, msg("a2"));
        let pending: Vec<(InboxId, String)> = host
            .pending()
            .into_iter()
            .map(|(id, m)| (id, m.joined_text()))
            .collect();
        assert_eq!(pending, [(b, "b".to_owned()), (a, "a2".to_owned())]);
        host.inbox_remove(b);
        assert_eq!(host.inbox(), [msg("a2")]);
        // R-RT-7: a resume drops the inbox; nothing of it reached history.
        host.clear_inbox();
        assert!(host.pending().is_empty());
        assert!(host.history().is_empty());
        assert_ne!(host.inbox_prepend(msg("c")), a);
    }
}
