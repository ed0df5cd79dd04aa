//! Transition rules (R-STATE-6), group safety (R-STATE-9) and per-directory
//! candidate selection and dedup (R-CFG-7, R-DISC-5).

use std::collections::{BTreeSet, HashMap};

use crate::digest::Digest;
use crate::scope::ScopeKey;
use crate::source::{Action, Change};
use crate::visible::VisibleEntry;

/// What one reconciliation found for a scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// Loaded and retained: its display path and the digest of its full text.
    Present {
        /// Display path of the winning file.
        path: String,
        /// [`Digest::of`] the full loaded text.
        digest: Digest,
    },
    /// Confirmed absent: every candidate of the scope probed without error
    /// (R-DISC-5).
    Absent,
    /// A probe or read failed (R-DISC-4); never removes anything.
    Unavailable,
    /// Loads, but duplicates an earlier kept file of its directory (R-CFG-7).
    Duplicate,
    /// Loads, but was left out by the budget of the current render
    /// (R-RT-10's "not retained").
    NotRetained,
}

fn remove(scope: &ScopeKey, visible: &VisibleEntry) -> Change {
    Change {
        action: Action::Remove,
        scope: scope.clone(),
        path: visible.path.clone(),
        previous_path: None,
        digest: None,
    }
}

/// The change one observation calls for, given the scope's latest visible
/// change (R-STATE-6):
///
/// | observed | not visible / tombstone | visibly loaded |
/// |---|---|---|
/// | present | `set` | same path & digest: nothing; else `replace` (+`previousPath` if the path changed) |
/// | absent, duplicate, not retained | nothing | `remove` of the visible path |
/// | unavailable | nothing | nothing |
///
/// ```
/// use dsh_instructions_state::{Digest, ScopeKey, source::{Action, Change}, transition::{Observation, transition}, visible::VisibleEntry};
/// let scope = ScopeKey::project(".", "base");
/// let seen = VisibleEntry {
///     action: Action::Set, path: "AGENTS.md".into(), digest: Some(Digest::of("v1")), message: 0,
/// };
/// let now = Observation::Present { path: "CLAUDE.md".into(), digest: Digest::of("v1") };
/// let change = transition(&scope, Some(&seen), &now).unwrap();
/// assert_eq!(change.action, Action::Replace);
/// assert_eq!(change.previous_path.as_deref(), Some("AGENTS.md"));
///
/// // Same path and digest: suppressed. Unavailable: never a change.
/// let same = Observation::Present { path: "AGENTS.md".into(), digest: Digest::of("v1") };
/// assert_eq!(transition(&scope, Some(&seen), &same), None);
/// assert_eq!(transition(&scope, Some(&seen), &Observation::Unavailable), None);
/// ```
pub fn transition(
    scope: &ScopeKey,
    visible: Option<&VisibleEntry>,
    observed: &Observation,
) -> Option<Change> {
    let loaded = visible.filter(|v| v.is_loaded());
    match (observed, loaded) {
        (Observation::Present { path, digest }, None) => Some(Change {
            action: Action::Set,
            scope: scope.clone(),
            path: path.clone(),
            previous_path: None,
            digest: Some(*digest),
        }),
        (Observation::Present { path, digest }, Some(v)) => {
            if v.path == *path && v.digest == Some(*digest) {
                return None;
            }
            Some(Change {
                action: Action::Replace,
                scope: scope.clone(),
                path: path.clone(),
                previous_path: (v.path != *path).then(|| v.path.clone()),
                digest: Some(*digest),
            })
        }
        (Observation::Absent | Observation::Duplicate | Observation::NotRetained, Some(v)) => {
            Some(remove(scope, v))
        }
        (Observation::Absent | Observation::Duplicate | Observation::NotRetained, None)
        | (Observation::Unavailable, _) => None,
    }
}

/// Transitions for the scopes of a reconciliation, with group safety
/// (R-STATE-9): when any visibly loaded scope of a directory is
/// [`Observation::Unavailable`], that directory gets no change at all in this
/// pass (last good state kept). Items are grouped by [`ScopeKey::dir`] (the
/// user-global scope is a group of its own); the result keeps input order.
///
/// ```
/// use dsh_instructions_state::{Digest, ScopeKey, source::Action, transition::{Observation, reconcile_directory}, visible::VisibleEntry};
/// let loaded = VisibleEntry {
///     action: Action::Set, path: "AGENTS.md".into(), digest: Some(Digest::of("x")), message: 0,
/// };
/// let base = ScopeKey::project(".", "base");
/// let local = ScopeKey::project(".", "local");
/// let fresh = Observation::Present { path: "AGENTS.local.md".into(), digest: Digest::of("y") };
/// // The loaded base is unavailable: the new overlay waits too.
/// let items = [(base, Some(&loaded), Observation::Unavailable), (local, None, fresh)];
/// assert!(reconcile_directory(&items).is_empty());
/// ```
pub fn reconcile_directory(
    items: &[(ScopeKey, Option<&VisibleEntry>, Observation)],
) -> Vec<Change> {
    let blocked: BTreeSet<Option<&str>> = items
        .iter()
        .filter(|(_, v, o)| *o == Observation::Unavailable && v.is_some_and(|v| v.is_loaded()))
        .map(|(k, _, _)| k.dir())
        .collect();
    items
        .iter()
        .filter(|(k, _, _)| !blocked.contains(&k.dir()))
        .filter_map(|(k, v, o)| transition(k, *v, o))
        .collect()
}

/// How one candidate of a slot probed (R-DISC-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeClass {
    /// A regular file.
    Present,
    /// Confirmed absent (not found, `ENOTDIR`, dangling, non-regular).
    Absent,
    /// Any other failure.
    Unavailable,
}

/// The result of choosing a `first-wins` slot's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotOutcome {
    /// This candidate (index into the slot's list) wins.
    Winner {
        /// Index into the candidate list.
        candidate: usize,
    },
    /// Every candidate probed absent.
    Absent,
    /// A candidate before any present one could not be probed.
    Unavailable,
}

/// Picks the winner of a `first-wins` slot from its probes, in candidate
/// order (R-CFG-7, R-DISC-5): the first present file wins, but an unavailable
/// candidate before it makes the whole slot unavailable (no fall-through to a
/// later name); the slot is absent only when every candidate probed absent
/// (an empty list is absent: no overlays).
///
/// ```
/// use dsh_instructions_state::transition::{ProbeClass::*, SlotOutcome, select_first_wins};
/// assert_eq!(select_first_wins(&[Absent, Present]), SlotOutcome::Winner { candidate: 1 });
/// assert_eq!(select_first_wins(&[Unavailable, Present]), SlotOutcome::Unavailable);
/// assert_eq!(select_first_wins(&[Present, Unavailable]), SlotOutcome::Winner { candidate: 0 });
/// ```
pub fn select_first_wins(probes: &[ProbeClass]) -> SlotOutcome {
    select_first_wins_iter(probes.iter().copied())
}

/// [`select_first_wins`] over an iterator (no slice to build first).
///
/// ```
/// use dsh_instructions_state::transition::{ProbeClass::*, SlotOutcome, select_first_wins_iter};
/// assert_eq!(select_first_wins_iter([Absent, Present]), SlotOutcome::Winner { candidate: 1 });
/// ```
pub fn select_first_wins_iter(probes: impl IntoIterator<Item = ProbeClass>) -> SlotOutcome {
    for (candidate, probe) in probes.into_iter().enumerate() {
        match probe {
            ProbeClass::Present => return SlotOutcome::Winner { candidate },
            ProbeClass::Unavailable => return SlotOutcome::Unavailable,
            ProbeClass::Absent => {}
        }
    }
    SlotOutcome::Absent
}

/// Per-directory dedup (R-CFG-7): given the trimmed digests
/// ([`Digest::of_trimmed`]) of a directory's loaded files in load order, says
/// for each whether it is kept (`None`) or duplicates the earlier kept file at
/// that index (`Some(i)`).
///
/// ```
/// use dsh_instructions_state::{Digest, transition::dedup_keep};
/// let d = |s: &str| Digest::of_trimmed(s);
/// let keep = dedup_keep(&[d("rules"), d("other"), d("rules\n")]);
/// assert_eq!(keep, [None, None, Some(0)]);
/// ```
pub fn dedup_keep(trimmed: &[Digest]) -> Vec<Option<usize>> {
    let mut first: HashMap<Digest, usize> = HashMap::with_capacity(trimmed.len());
    trimmed
        .iter()
        .enumerate()
        .map(|(i, d)| match first.get(d) {
            Some(&kept) => Some(kept),
            None => {
                first.insert(*d, i);
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn entry(action: Action, path: &str, text: &str) -> VisibleEntry {
        VisibleEntry {
            action,
            path: path.into(),
            digest: action.loads().then(|| Digest::of(text)),
            message: 0,
        }
    }

    fn present(path: &str, text: &str) -> Observation {
        Observation::Present {
            path: path.into(),
            digest: Digest::of(text),
        }
    }

    type Expect = Option<(Action, &'static str, Option<&'static str>)>;

    // R-STATE-6, one row per rule. Visible file: AGENTS.md with text "v1".
    #[rstest]
    #[case::new_file(None, present("AGENTS.md", "v1"), Some((Action::Set, "AGENTS.md", None)))]
    #[case::after_tombstone(Some(Action::Remove), present("AGENTS.md", "v1"), Some((Action::Set, "AGENTS.md", None)))]
    #[case::unchanged(Some(Action::Set), present("AGENTS.md", "v1"), None)]
    #[case::unchanged_after_replace(Some(Action::Replace), present("AGENTS.md", "v1"), None)]
    #[case::content_changed(Some(Action::Set), present("AGENTS.md", "v2"), Some((Action::Replace, "AGENTS.md", None)))]
    #[case::path_changed(Some(Action::Set), present("CLAUDE.md", "v1"), Some((Action::Replace, "CLAUDE.md", Some("AGENTS.md"))))]
    #[case::both_changed(Some(Action::Replace), present("CLAUDE.md", "v2"), Some((Action::Replace, "CLAUDE.md", Some("AGENTS.md"))))]
    #[case::absent_loaded(Some(Action::Set), Observation::Absent, Some((Action::Remove, "AGENTS.md", None)))]
    #[case::absent_unseen(None, Observation::Absent, None)]
    #[case::absent_tombstone(Some(Action::Remove), Observation::Absent, None)]
    #[case::duplicate_loaded(Some(Action::Set), Observation::Duplicate, Some((Action::Remove, "AGENTS.md", None)))]
    #[case::duplicate_unseen(None, Observation::Duplicate, None)]
    #[case::not_retained_loaded(Some(Action::Replace), Observation::NotRetained, Some((Action::Remove, "AGENTS.md", None)))]
    #[case::not_retained_unseen(None, Observation::NotRetained, None)]
    #[case::unavailable_loaded(Some(Action::Set), Observation::Unavailable, None)]
    #[case::unavailable_unseen(None, Observation::Unavailable, None)]
    fn transition_rules(
        #[case] visible: Option<Action>,
        #[case] observed: Observation,
        #[case] expected: Expect,
    ) {
        let scope = ScopeKey::project("a", "base");
        let v = visible.map(|a| entry(a, "AGENTS.md", "v1"));
        let got = transition(&scope, v.as_ref(), &observed);
        let got_shape = got
            .as_ref()
            .map(|c| (c.action, c.path.as_str(), c.previous_path.as_deref()));
        assert_eq!(got_shape, expected);
        if let Some(c) = got {
            assert_eq!(c.scope, scope);
            // A remove carries no digest (R-STATE-1); set/replace carry the observed one.
            match (&observed, c.action) {
                (Observation::Present { digest, .. }, Action::Set | Action::Replace) => {
                    assert_eq!(c.digest, Some(*digest));
                }
                (_, Action::Remove) => assert_eq!(c.digest, None),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    fn item(
        dir: &str,
        slot: &str,
        vis: Option<&VisibleEntry>,
        o: Observation,
    ) -> (ScopeKey, Option<VisibleEntry>, Observation) {
        (ScopeKey::project(dir, slot), vis.cloned(), o)
    }

    fn run(items: &[(ScopeKey, Option<VisibleEntry>, Observation)]) -> Vec<(String, Action)> {
        let borrowed: Vec<_> = items
            .iter()
            .map(|(k, v, o)| (k.clone(), v.as_ref(), o.clone()))
            .collect();
        reconcile_directory(&borrowed)
            .into_iter()
            .map(|c| (c.scope.as_str().to_owned(), c.action))
            .collect()
    }

    #[test]
    fn group_safety_blocks_the_whole_directory_only() {
        // R-STATE-9
        let loaded = entry(Action::Set, "a/AGENTS.md", "x");
        let items = [
            item("a", "base", Some(&loaded), Observation::Unavailable),
            item("a", "local", Some(&loaded), Observation::Absent),
            item("b", "base", None, present("b/AGENTS.md", "y")),
        ];
        assert_eq!(run(&items), [("project\0b\0base".to_owned(), Action::Set)]);
    }

    #[test]
    fn unavailable_unloaded_member_does_not_block_siblings() {
        // R-STATE-9 only guards currently loaded members.
        let loaded = entry(Action::Set, "a/AGENTS.md", "x");
        let tomb = entry(Action::Remove, "a/CLAUDE.md", "");
        let items = [
            item("a", "local", Some(&tomb), Observation::Unavailable),
            item("a", "base", Some(&loaded), Observation::Absent),
        ];
        assert_eq!(
            run(&items),
            [("project\0a\0base".to_owned(), Action::Remove)]
        );
    }

    #[test]
    fn user_global_is_its_own_group() {
        let loaded = entry(Action::Set, "~/.dsh/AGENTS.md", "x");
        let items = vec![
            (
                ScopeKey::user_global(),
                Some(loaded.clone()),
                Observation::Unavailable,
            ),
            item(".", "base", None, present("AGENTS.md", "r")),
        ];
        assert_eq!(run(&items), [("project\0.\0base".to_owned(), Action::Set)]);
    }

    #[test]
    fn reconcile_keeps_input_order() {
        let items = [
            item("a", "local", None, present("a/AGENTS.local.md", "1")),
            item(".", "base", None, present("AGENTS.md", "2")),
        ];
        let got: Vec<String> = run(&items).into_iter().map(|(k, _)| k).collect();
        assert_eq!(got, ["project\0a\0local", "project\0.\0base"]);
    }

    use ProbeClass::{Absent as A, Present as P, Unavailable as U};

    #[rstest]
    #[case::first(vec![P, P], SlotOutcome::Winner { candidate: 0 })]
    #[case::fall_through_absent(vec![A, A, P], SlotOutcome::Winner { candidate: 2 })]
    #[case::no_fall_through_unavailable(vec![U, P], SlotOutcome::Unavailable)]
    #[case::unavailable_after_winner_ignored(vec![A, P, U], SlotOutcome::Winner { candidate: 1 })]
    #[case::all_absent(vec![A, A], SlotOutcome::Absent)]
    #[case::absent_then_unavailable(vec![A, U], SlotOutcome::Unavailable)]
    #[case::empty_list(vec![], SlotOutcome::Absent)]
    fn first_wins_selection(#[case] probes: Vec<ProbeClass>, #[case] expected: SlotOutcome) {
        // R-CFG-7, R-DISC-5
        assert_eq!(select_first_wins(&probes), expected);
    }

    #[rstest]
    #[case::none(vec![], vec![])]
    #[case::distinct(vec!["a", "b"], vec![None, None])]
    #[case::mirror(vec!["a", " a\n"], vec![None, Some(0)])]
    #[case::chain(vec!["a", "b", "a", "b", "a"], vec![None, None, Some(0), Some(1), Some(0)])]
    #[case::empty_files(vec!["", "\n"], vec![None, Some(0)])]
    fn dedup_cases(#[case] texts: Vec<&str>, #[case] expected: Vec<Option<usize>>) {
        // R-CFG-7: same trimmed SHA-1 as an earlier kept file is dropped.
        let digests: Vec<Digest> = texts.iter().map(|t| Digest::of_trimmed(t)).collect();
        assert_eq!(dedup_keep(&digests), expected);
    }

    proptest! {
        #[test]
        fn dedup_invariants(ids in prop::collection::vec(0u8..5, 0..20)) {
            let digests: Vec<Digest> = ids.iter().map(|i| Digest::of(&i.to_string())).collect();
            let keep = dedup_keep(&digests);
            prop_assert_eq!(keep.len(), digests.len());
            let kept: Vec<&Digest> = digests.iter().zip(&keep).filter(|(_, k)| k.is_none()).map(|(d, _)| d).collect();
            // Kept digests are pairwise distinct and cover every input digest.
            let unique: BTreeSet<&Digest> = kept.iter().copied().collect();
            prop_assert_eq!(unique.len(), kept.len());
            prop_assert_eq!(unique, digests.iter().collect::<BTreeSet<_>>());
            for (i, k) in keep.iter().enumerate() {
                if let Some(j) = *k {
                    // Points at an earlier, kept file with the same key.
                    prop_assert!(j < i);
                    prop_assert_eq!(keep[j], None);
                    prop_assert_eq!(digests[j], digests[i]);
                }
            }
        }

        #[test]
        fn transition_result_is_consistent(
            vis in proptest::option::of((0u8..3, 0u8..2, 0u8..2)),
            obs in (0u8..5, 0u8..2, 0u8..2),
        ) {
            let paths = ["AGENTS.md", "CLAUDE.md"];
            let v = vis.map(|(a, p, t)| entry([Action::Set, Action::Replace, Action::Remove][usize::from(a)], paths[usize::from(p)], &t.to_string()));
            let o = match obs.0 {
                0 => present(paths[usize::from(obs.1)], &obs.2.to_string()),
                1 => Observation::Absent,
                2 => Observation::Unavailable,
                3 => Observation::Duplicate,
                _ => Observation::NotRetained,
            };
            let scope = ScopeKey::user_global();
            let c = transition(&scope, v.as_ref(), &o);
            let loaded = v.as_ref().is_some_and(VisibleEntry::is_loaded);
            if let Some(c) = &c {
                // set only when not loaded; replace/remove only when loaded.
                prop_assert_eq!(c.action == Action::Set, !loaded);
            }
            // Applying the change makes the state agree with the observation:
            // re-running the transition afterwards yields nothing.
            if let Some(c) = c {
                let after = VisibleEntry { action: c.action, path: c.path, digest: c.digest, message: 1 };
                prop_assert_eq!(transition(&scope, Some(&after), &o), None);
            }
        }
    }
}
