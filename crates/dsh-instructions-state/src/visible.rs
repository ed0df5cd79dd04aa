//! Visible state derived from the workspace messages on the surface
//! (R-STATE-5).

use std::collections::HashMap;

use crate::digest::Digest;
use crate::scope::ScopeKey;
use crate::source::{Action, Change, TypedSource};

/// The latest visible change of one scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VisibleEntry {
    /// `set`/`replace` = loaded; `remove` = tombstone.
    pub action: Action,
    /// Display path the change named.
    pub path: String,
    /// Digest of the loaded text; `None` for a tombstone.
    pub digest: Option<Digest>,
    /// Index of the message that carried it, as given by the caller.
    pub message: usize,
}

impl VisibleEntry {
    /// True when the scope is loaded (latest change is `set`/`replace`).
    pub fn is_loaded(&self) -> bool {
        self.action.loads()
    }
}

/// The latest visible message that has a baseline part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VisibleBaseline {
    /// Index of that message, as given by the caller.
    pub message: usize,
    /// Its baseline identity (R-STATE-4), if it carried one.
    pub identity: Option<String>,
    /// Every change of that message (baseline part and any dynamic part).
    pub changes: Vec<Change>,
}

/// Per scope, the last change among the visible workspace messages
/// (R-STATE-5), plus the latest visible baseline.
///
/// Callers feed only messages on the visible surface (compaction-hidden ones
/// do not count) in history order, plus any messages claimed by the running
/// pre-step. A `remove` stays as a tombstone, so a later reappearance is a new
/// `set` (see [`crate::transition::transition`]).
///
/// ```
/// use dsh_instructions_state::{Digest, ScopeKey, TypedSource, source::{Action, Change}, visible::VisibleState};
/// let scope = ScopeKey::project(".", "base");
/// let set = TypedSource {
///     baseline: true,
///     baseline_identity: Some("id".into()),
///     changes: vec![Change {
///         action: Action::Set, scope: scope.clone(), path: "AGENTS.md".into(),
///         previous_path: None, digest: Some(Digest::of("root rule")),
///     }],
/// };
/// let remove = TypedSource {
///     changes: vec![Change {
///         action: Action::Remove, scope: scope.clone(), path: "AGENTS.md".into(),
///         previous_path: None, digest: None,
///     }],
///     ..TypedSource::default()
/// };
/// let state = VisibleState::derive([(3, &set), (7, &remove)]);
/// assert!(!state.is_loaded(&scope)); // the later remove wins
/// assert_eq!(state.get(&scope).map(|e| e.message), Some(7));
/// assert_eq!(state.latest_baseline().map(|b| b.message), Some(3));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VisibleState {
    /// Hashed: a revalidation looks up every known scope; the rare callers
    /// that list entries get them sorted.
    entries: HashMap<ScopeKey, VisibleEntry, foldhash::fast::RandomState>,
    baseline: Option<VisibleBaseline>,
}

impl VisibleState {
    /// Folds visible workspace messages, in history order, into state; each
    /// item is the caller's message index and the message's typed source.
    ///
    /// ```
    /// use dsh_instructions_state::{Digest, ScopeKey, TypedSource, source::{Action, Change}, visible::VisibleState};
    /// let k = ScopeKey::user_global();
    /// let change = |action, text: &str| Change {
    ///     action, scope: k.clone(), path: "~/.dsh/AGENTS.md".into(), previous_path: None,
    ///     digest: (action != Action::Remove).then(|| Digest::of(text)),
    /// };
    /// let history = [
    ///     TypedSource { changes: vec![change(Action::Set, "v1")], ..Default::default() },
    ///     TypedSource { changes: vec![change(Action::Replace, "v2")], ..Default::default() },
    /// ];
    /// let state = VisibleState::derive(history.iter().enumerate());
    /// assert_eq!(state.get(&k).unwrap().digest, Some(Digest::of("v2")));
    /// assert_eq!(state.latest_baseline(), None);
    /// ```
    pub fn derive<'a>(messages: impl IntoIterator<Item = (usize, &'a TypedSource)>) -> Self {
        let mut state = Self::default();
        for (index, source) in messages {
            state.apply(index, source);
        }
        state
    }

    /// Rebuilds a state from the parts an earlier one listed
    /// ([`VisibleState::entries`](crate::visible::VisibleState::entries), [`VisibleState::latest_baseline`](crate::visible::VisibleState::latest_baseline)): how a
    /// saved fold comes back without the history it was folded from.
    ///
    /// ```
    /// use dsh_instructions_state::{Digest, ScopeKey, TypedSource, source::{Action, Change}, visible::VisibleState};
    /// let set = TypedSource {
    ///     baseline: true,
    ///     changes: vec![Change {
    ///         action: Action::Set, scope: ScopeKey::project(".", "base"),
    ///         path: "AGENTS.md".into(), previous_path: None, digest: Some(Digest::of("r")),
    ///     }],
    ///     ..TypedSource::default()
    /// };
    /// let state = VisibleState::derive([(0, &set)]);
    /// let again = VisibleState::from_parts(
    ///     state.entries().map(|(k, e)| (k.clone(), e.clone())),
    ///     state.latest_baseline().cloned(),
    /// );
    /// assert_eq!(again, state);
    /// ```
    pub fn from_parts(
        entries: impl IntoIterator<Item = (ScopeKey, VisibleEntry)>,
        baseline: Option<VisibleBaseline>,
    ) -> Self {
        Self {
            entries: entries.into_iter().collect(),
            baseline,
        }
    }

    /// Folds one more message (e.g. one claimed by the running pre-step and
    /// not yet persisted). Later changes win per scope, also within a message.
    pub fn apply(&mut self, index: usize, source: &TypedSource) {
        if source.baseline {
            self.baseline = Some(VisibleBaseline {
                message: index,
                identity: source.baseline_identity.clone(),
                changes: source.changes.clone(),
            });
        }
        for change in &source.changes {
            self.entries.insert(
                change.scope.clone(),
                VisibleEntry {
                    action: change.action,
                    path: change.path.clone(),
                    digest: if change.action.loads() {
                        change.digest
                    } else {
                        None
                    },
                    message: index,
                },
            );
        }
    }

    /// The latest visible change of `scope`, tombstones included.
    pub fn get(&self, scope: &ScopeKey) -> Option<&VisibleEntry> {
        self.entries.get(scope)
    }

    /// True when the latest visible change of `scope` is `set`/`replace`.
    pub fn is_loaded(&self, scope: &ScopeKey) -> bool {
        self.get(scope).is_some_and(VisibleEntry::is_loaded)
    }

    /// Every scope with visible state, tombstones included, in key order.
    pub fn entries(&self) -> impl Iterator<Item = (&ScopeKey, &VisibleEntry)> {
        let mut all: Vec<(&ScopeKey, &VisibleEntry)> = self.entries.iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all.into_iter()
    }

    /// [`Self::entries`] in no particular order, without sorting them: for
    /// callers that order the result themselves or need no order (a hook
    /// event looks at every known directory's entry, R-HOOK-6).
    ///
    /// ```
    /// use dsh_instructions_state::{Digest, ScopeKey, TypedSource, source::{Action, Change}, visible::VisibleState};
    /// let set = |dir: &str| Change {
    ///     action: Action::Set, scope: ScopeKey::project(dir, "base"),
    ///     path: format!("{dir}/AGENTS.md"), previous_path: None, digest: Some(Digest::of("x")),
    /// };
    /// let source = TypedSource { changes: vec![set("b"), set("a")], ..Default::default() };
    /// let state = VisibleState::derive([(0, &source)]);
    /// let mut dirs: Vec<&str> = state.entries_unordered().filter_map(|(s, _)| s.dir()).collect();
    /// dirs.sort_unstable();
    /// assert_eq!(dirs, ["a", "b"]);
    /// ```
    pub fn entries_unordered(&self) -> impl Iterator<Item = (&ScopeKey, &VisibleEntry)> {
        self.entries.iter()
    }

    /// Scopes whose latest visible change loads them, in key order.
    pub fn loaded(&self) -> impl Iterator<Item = (&ScopeKey, &VisibleEntry)> {
        self.entries().filter(|(_, e)| e.is_loaded())
    }

    /// The last visible message with `baseline: true`, if any.
    pub fn latest_baseline(&self) -> Option<&VisibleBaseline> {
        self.baseline.as_ref()
    }

    /// True when nothing is visible at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.baseline.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn change(action: Action, scope: &ScopeKey, path: &str, text: &str) -> Change {
        Change {
            action,
            scope: scope.clone(),
            path: path.into(),
            previous_path: None,
            digest: action.loads().then(|| Digest::of(text)),
        }
    }

    fn msg(baseline: bool, changes: Vec<Change>) -> TypedSource {
        TypedSource {
            baseline,
            baseline_identity: baseline.then(|| "id".to_owned()),
            changes,
        }
    }

    #[test]
    fn empty_history_is_empty_state() {
        let s = VisibleState::derive(std::iter::empty());
        assert!(s.is_empty());
        assert_eq!(s.latest_baseline(), None);
        assert!(!s.is_loaded(&ScopeKey::user_global()));
    }

    // R-STATE-5: the last change per scope wins; a remove is a tombstone.
    #[rstest]
    #[case::set(vec![Action::Set], true)]
    #[case::set_replace(vec![Action::Set, Action::Replace], true)]
    #[case::set_remove(vec![Action::Set, Action::Remove], false)]
    #[case::remove_set(vec![Action::Set, Action::Remove, Action::Set], true)]
    #[case::remove_only(vec![Action::Remove], false)]
    fn last_change_wins(#[case] actions: Vec<Action>, #[case] loaded: bool) {
        let k = ScopeKey::project("a", "base");
        let msgs: Vec<TypedSource> = actions
            .iter()
            .enumerate()
            .map(|(i, a)| msg(false, vec![change(*a, &k, "a/AGENTS.md", &i.to_string())]))
            .collect();
        let s = VisibleState::derive(msgs.iter().enumerate().map(|(i, m)| (i * 10, m)));
        assert_eq!(s.is_loaded(&k), loaded);
        let e = s.get(&k).unwrap();
        assert_eq!(e.message, (actions.len() - 1) * 10);
        assert_eq!(e.action, *actions.last().unwrap());
        assert_eq!(e.digest.is_some(), loaded);
    }

    #[test]
    fn later_change_in_same_message_wins() {
        let k = ScopeKey::user_global();
        let m = msg(
            false,
            vec![
                change(Action::Set, &k, "~/.dsh/AGENTS.md", "old"),
                change(Action::Replace, &k, "~/.dsh/AGENTS.md", "new"),
            ],
        );
        let s = VisibleState::derive([(0, &m)]);
        assert_eq!(s.get(&k).unwrap().digest, Some(Digest::of("new")));
    }

    #[test]
    fn hidden_messages_do_not_count() {
        // R-STATE-5: the caller leaves compaction-hidden messages out, so a
        // set hidden by compaction leaves the scope unknown.
        let k = ScopeKey::project(".", "base");
        let set = msg(true, vec![change(Action::Set, &k, "AGENTS.md", "x")]);
        let s = VisibleState::derive([(0, &set)]);
        assert!(s.is_loaded(&k));
        let after_compaction = VisibleState::derive(std::iter::empty());
        assert_eq!(after_compaction.get(&k), None);
    }

    #[test]
    fn latest_baseline_is_last_baseline_message() {
        let k = ScopeKey::project(".", "base");
        let b1 = msg(true, vec![change(Action::Set, &k, "AGENTS.md", "1")]);
        let dynamic = msg(false, vec![change(Action::Replace, &k, "AGENTS.md", "2")]);
        let mut b2 = msg(true, vec![]);
        b2.baseline_identity = Some("other".into());
        let s = VisibleState::derive([(1, &b1), (2, &dynamic)]);
        assert_eq!(s.latest_baseline().unwrap().message, 1);
        assert_eq!(s.latest_baseline().unwrap().changes, b1.changes);
        let mut s2 = s.clone();
        s2.apply(5, &b2);
        let lb = s2.latest_baseline().unwrap();
        assert_eq!((lb.message, lb.identity.as_deref()), (5, Some("other")));
        // An empty baseline does not erase per-scope state by itself.
        assert!(s2.is_loaded(&k));
    }

    #[test]
    fn apply_equals_derive() {
        let k = ScopeKey::project("a", "local");
        let m1 = msg(
            true,
            vec![change(Action::Set, &k, "a/AGENTS.local.md", "1")],
        );
        let m2 = msg(
            false,
            vec![change(Action::Remove, &k, "a/AGENTS.local.md", "")],
        );
        let mut s = VisibleState::derive([(0, &m1)]);
        s.apply(1, &m2);
        assert_eq!(s, VisibleState::derive([(0, &m1), (1, &m2)]));
        assert_eq!(s.loaded().count(), 0);
        assert_eq!(s.entries().count(), 1);
    }

    #[test]
    fn entries_come_in_key_order() {
        let keys = ["z", "a/b", "a", "m"].map(|d| ScopeKey::project(d, "base"));
        let changes = keys
            .iter()
            .map(|k| change(Action::Set, k, "AGENTS.md", "x"))
            .collect();
        let s = VisibleState::derive([(0, &msg(false, changes))]);
        let got: Vec<&ScopeKey> = s.entries().map(|(k, _)| k).collect();
        let mut want: Vec<&ScopeKey> = keys.iter().collect();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(s.loaded().count(), 4);
    }

    proptest! {
        #[test]
        fn derive_is_last_change_per_scope(
            history in prop::collection::vec(
                (any::<bool>(), prop::collection::vec((0usize..4, 0u8..3, 0u8..3), 0..4)),
                0..8,
            )
        ) {
            let scopes = [
                ScopeKey::user_global(),
                ScopeKey::project(".", "base"),
                ScopeKey::project(".", "local"),
                ScopeKey::project("a", "base"),
            ];
            let actions = [Action::Set, Action::Replace, Action::Remove];
            let msgs: Vec<TypedSource> = history
                .iter()
                .map(|(b, cs)| {
                    let changes = cs
                        .iter()
                        .map(|&(s, a, t)| change(actions[usize::from(a)], &scopes[s], "p", &t.to_string()))
                        .collect();
                    msg(*b, changes)
                })
                .collect();
            let state = VisibleState::derive(msgs.iter().enumerate());
            for scope in &scopes {
                // Model: scan the flattened history backwards.
                let last = msgs
                    .iter()
                    .enumerate()
                    .flat_map(|(i, m)| m.changes.iter().map(move |c| (i, c)))
                    .rfind(|(_, c)| c.scope == *scope);
                let got = state.get(scope).map(|e| (e.message, e.action, e.digest));
                prop_assert_eq!(got, last.map(|(i, c)| (i, c.action, c.digest)));
            }
            let last_baseline = msgs.iter().rposition(|m| m.baseline);
            prop_assert_eq!(state.latest_baseline().map(|b| b.message), last_baseline);
        }
    }
}
