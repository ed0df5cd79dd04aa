//! A complete in-memory host: history with a visible surface, compaction and
//! a next-step inbox. It serves this crate's tests, the conformance runner
//! and the CLI, and shows a product what the [`Host`] trait asks for.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

use camino::Utf8PathBuf;
use dsh_instructions_state::TypedSource;

use crate::host::{BatchEntry, Host, InboxId, SessionEvent, WorkspaceMessage};

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

#[derive(Debug, Default)]
struct State {
    history: Vec<HistoryItem>,
    hidden: BTreeSet<usize>,
    inbox: Vec<(InboxId, WorkspaceMessage)>,
    next_id: InboxId,
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
}

impl MemoryHost {
    /// An empty session in `cwd`.
    pub fn new(cwd: Utf8PathBuf) -> Self {
        Self {
            cwd,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends a user message.
    pub fn append_user(&self, parts: Vec<String>, source: Option<TypedSource>) {
        self.lock()
            .history
            .push(HistoryItem::User { parts, source });
    }

    /// Appends an entered batch in order, persisting workspace messages with
    /// their typed source (R-RT-1).
    pub fn append_batch(&self, batch: &[BatchEntry<String>]) {
        let mut s = self.lock();
        for entry in batch {
            s.history.push(match entry {
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
        self.lock().history.push(HistoryItem::Event(event));
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
        s.hidden.extend(hide);
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
        self.lock().hidden.insert(index);
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
        self.lock().hidden.extend(hide);
    }

    /// Pending workspace messages in the inbox.
    pub fn inbox(&self) -> Vec<WorkspaceMessage> {
        self.lock().inbox.iter().map(|(_, m)| m.clone()).collect()
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
        s.history
            .iter()
            .enumerate()
            .filter(|(i, _)| !s.hidden.contains(i))
            .filter_map(|(_, h)| match h {
                HistoryItem::User {
                    source: Some(src), ..
                } => Some(src.clone()),
                _ => None,
            })
            .collect()
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
        self.lock().inbox.clone()
    }

    fn inbox_prepend(&self, message: WorkspaceMessage) -> InboxId {
        let mut s = self.lock();
        s.next_id += 1;
        let id = s.next_id;
        s.inbox.insert(0, (id, message));
        id
    }

    fn inbox_replace(&self, id: InboxId, message: WorkspaceMessage) {
        let mut s = self.lock();
        if let Some(slot) = s.inbox.iter_mut().find(|(i, _)| *i == id) {
            slot.1 = message;
        }
    }

    fn inbox_remove(&self, id: InboxId) {
        self.lock().inbox.retain(|(i, _)| *i != id);
    }
}
