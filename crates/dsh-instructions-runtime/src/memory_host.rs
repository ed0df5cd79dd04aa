//! A complete in-memory host: history with a visible surface and
//! compaction. It serves this crate's tests, the conformance runner
//! and the CLI, and shows a product what the [`Host`] trait asks for.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

use camino::Utf8PathBuf;
use dsh_instructions_state::TypedSource;

use crate::host::{BatchEntry, Host, SessionEvent, ViewSnapshot, VisibleMark, VisibleUpdate};

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
/// use dsh_instructions_runtime::{Host, host_support::MemoryHost};
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
    /// use dsh_instructions_runtime::{Host, host_support::MemoryHost};
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
}
