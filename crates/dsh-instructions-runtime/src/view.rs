//! The lane's view of the visible surface (R-STATE-5): the visible state and
//! the known directories (R-RT-3 b), kept between compositions and advanced
//! by what the host appended ([`Host::visible_since`]), so a composition
//! costs what changed rather than the length of the history. When the host
//! reports anything but an append (compaction, or a host without marks) the
//! view is rebuilt from the whole surface, exactly as a first composition.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_state::{
    Action, ScopeKey, ScopeKind, TypedSource, VisibleEntry, VisibleState,
};

use crate::host::{Host, VisibleMark, VisibleUpdate};

/// Sort key of a root-relative directory: broadest first, then component by
/// component (the order identity dedup relies on, R-DISC-3). With `/` mapped
/// below every other byte, comparing the strings compares the components.
pub(crate) type DirKey = (usize, String);

pub(crate) fn dir_key(rel: &str) -> DirKey {
    let depth = if rel == "." {
        0
    } else {
        rel.bytes().filter(|&b| b == b'/').count() + 1
    };
    (depth, rel.replace('/', "\0"))
}

/// Root recorded in a baseline identity (relative to the cwd), made absolute.
pub(crate) fn identity_root(identity: Option<&str>, cwd: &Utf8Path) -> Option<Utf8PathBuf> {
    let value: serde_json::Value = serde_json::from_str(identity?).ok()?;
    let rel = value.get("root")?.as_str()?;
    Some(dsh_home_paths::normalize_lexically(&cwd.join(rel)))
}

/// The visible state and known directories of the surface read so far.
#[derive(Debug, Default)]
pub(crate) struct VisibleView {
    mark: Option<VisibleMark>,
    pub visible: VisibleState,
    /// Per visible workspace message: whether it has a baseline part.
    baseline_at: Vec<bool>,
    /// Visible state written before this message index does not make a
    /// directory known: the latest baseline that changed the root (R-RT-7).
    epoch: usize,
    /// Root of the latest baseline so far (`Some(None)`: one without a
    /// readable root).
    last_root: Option<Option<Utf8PathBuf>>,
    /// Known directories in [`DirKey`] order, with how many scopes make each
    /// one known.
    known: BTreeMap<DirKey, (String, usize)>,
}

impl VisibleView {
    /// Brings the view up to the host's visible surface.
    pub(crate) fn refresh(&mut self, host: &dyn Host, cwd: &Utf8Path) {
        let (update, mark) = host.visible_since(self.mark);
        match update {
            VisibleUpdate::Appended(sources) => {
                for source in &sources {
                    self.apply(source, cwd);
                }
            }
            VisibleUpdate::Whole(sources) => {
                *self = Self::default();
                for source in &sources {
                    self.apply(source, cwd);
                }
            }
        }
        self.mark = mark;
    }

    /// Directories with visible state that count as known (R-RT-3 b,
    /// R-RT-7), in [`DirKey`] order.
    pub(crate) fn known(&self) -> impl Iterator<Item = &str> {
        self.known.values().map(|(rel, _)| rel.as_str())
    }

    /// [`VisibleView::known`] with each directory's sort key.
    pub(crate) fn known_keyed(&self) -> impl Iterator<Item = (&DirKey, &str)> {
        self.known.iter().map(|(key, (rel, _))| (key, rel.as_str()))
    }

    /// How many directories are known.
    pub(crate) fn len(&self) -> usize {
        self.known.len()
    }

    pub(crate) fn is_known(&self, rel: &str) -> bool {
        self.known.contains_key(&dir_key(rel))
    }

    /// Whether this visible entry makes its directory known: the removes
    /// written by a baseline (a replacement) never do, and neither does state
    /// written before a baseline that changed the root.
    fn counts(&self, entry: &VisibleEntry) -> bool {
        let by_baseline = self.baseline_at.get(entry.message) == Some(&true);
        entry.message >= self.epoch && !(entry.action == Action::Remove && by_baseline)
    }

    fn add(&mut self, dir: &str, delta: isize) {
        use std::collections::btree_map::Entry;
        match self.known.entry(dir_key(dir)) {
            Entry::Occupied(mut e) => {
                let count = &mut e.get_mut().1;
                *count = count.saturating_add_signed(delta);
                if *count == 0 {
                    e.remove();
                }
            }
            Entry::Vacant(e) if delta > 0 => {
                e.insert((dir.to_owned(), delta.unsigned_abs()));
            }
            Entry::Vacant(_) => {}
        }
    }

    fn recount(&mut self) {
        self.known.clear();
        let dirs: Vec<String> = self
            .visible
            .entries()
            .filter(|(_, e)| self.counts(e))
            .filter_map(|(s, _)| s.dir().map(str::to_owned))
            .collect();
        for dir in dirs {
            self.add(&dir, 1);
        }
    }

    /// Folds one more visible message in.
    fn apply(&mut self, source: &TypedSource, cwd: &Utf8Path) {
        let index = self.baseline_at.len();
        self.baseline_at.push(source.baseline);
        if source.baseline {
            let root = identity_root(source.baseline_identity.as_deref(), cwd);
            let changed = self.last_root.as_ref().is_some_and(|prev| *prev != root);
            self.last_root = Some(root);
            if changed {
                self.epoch = index;
                self.visible.apply(index, source);
                self.recount();
                return;
            }
        }
        let mut scopes: Vec<&ScopeKey> = source
            .changes
            .iter()
            .map(|c| &c.scope)
            .filter(|s| matches!(s.kind(), ScopeKind::Project { .. }))
            .collect();
        scopes.sort();
        scopes.dedup();
        let before: Vec<bool> = scopes
            .iter()
            .map(|s| self.visible.get(s).is_some_and(|e| self.counts(e)))
            .collect();
        self.visible.apply(index, source);
        for (scope, was) in scopes.into_iter().zip(before) {
            let now = self.visible.get(scope).is_some_and(|e| self.counts(e));
            if let (Some(dir), true) = (scope.dir(), was != now) {
                self.add(dir, if now { 1 } else { -1 });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The incremental view must equal a rebuild from the whole surface
    //! after every appended message, whatever the messages hold.

    use super::*;
    use crate::MemoryHost;
    use dsh_instructions_state::{Change, Digest};
    use proptest::prelude::*;
    use rstest::rstest;

    /// The rule the view maintains, computed from scratch.
    fn known_from_scratch(sources: &[TypedSource], cwd: &Utf8Path) -> Vec<String> {
        let visible = VisibleState::derive(sources.iter().enumerate());
        let mut epoch = 0;
        let mut last: Option<Option<Utf8PathBuf>> = None;
        for (i, s) in sources.iter().enumerate() {
            if s.baseline {
                let root = identity_root(s.baseline_identity.as_deref(), cwd);
                if last.as_ref().is_some_and(|p| *p != root) {
                    epoch = i;
                }
                last = Some(root);
            }
        }
        let mut dirs: Vec<String> = visible
            .entries()
            .filter(|(_, e)| e.message >= epoch)
            .filter(|(_, e)| !(e.action == Action::Remove && sources[e.message].baseline))
            .filter_map(|(s, _)| s.dir().map(str::to_owned))
            .collect();
        dirs.sort_by_key(|d| dir_key(d));
        dirs.dedup();
        dirs
    }

    fn arb_source() -> impl Strategy<Value = TypedSource> {
        let change = (0..3usize, 0..2usize, 0..3usize).prop_map(|(dir, slot, action)| {
            let dir = ["." /* root */, "a", "a/b"][dir];
            let action = [Action::Set, Action::Replace, Action::Remove][action];
            Change {
                action,
                scope: ScopeKey::project(dir, ["base", "local"][slot]),
                path: format!("{dir}/AGENTS.md"),
                previous_path: None,
                digest: (action != Action::Remove).then(|| Digest::of(dir)),
            }
        });
        (
            proptest::collection::vec(change, 0..4),
            proptest::option::of(0..3usize),
        )
            .prop_map(|(changes, root)| TypedSource {
                baseline: root.is_some(),
                baseline_identity: root
                    .map(|r| format!(r#"{{"root":"{}"}}"#, ["." /* cwd */, "..", "../.."][r])),
                changes,
            })
    }

    proptest! {
        #[test]
        fn appending_equals_rebuilding(sources in proptest::collection::vec(arb_source(), 0..12)) {
            let cwd = Utf8Path::new("/w/repo/sub");
            let host = MemoryHost::new(cwd.to_owned());
            let mut view = VisibleView::default();
            for (n, source) in sources.iter().enumerate() {
                host.append_user(vec![String::new()], Some(source.clone()));
                view.refresh(&host, cwd);
                let want = known_from_scratch(&sources[..=n], cwd);
                prop_assert_eq!(view.known().collect::<Vec<_>>(), want);
                prop_assert_eq!(
                    &view.visible,
                    &VisibleState::derive(sources[..=n].iter().enumerate())
                );
            }
        }
    }

    #[rstest]
    fn a_compaction_rebuilds_the_view() {
        let cwd = Utf8Path::new("/w/repo");
        let host = MemoryHost::new(cwd.to_owned());
        let set = |dir: &str| TypedSource {
            changes: vec![Change {
                action: Action::Set,
                scope: ScopeKey::project(dir, "base"),
                path: format!("{dir}/AGENTS.md"),
                previous_path: None,
                digest: Some(Digest::of(dir)),
            }],
            ..TypedSource::default()
        };
        let mut view = VisibleView::default();
        host.append_user(vec![], Some(set("a")));
        view.refresh(&host, cwd);
        host.append_user(vec![], Some(set("b")));
        view.refresh(&host, cwd);
        assert_eq!(view.known().collect::<Vec<_>>(), ["a", "b"]);
        host.hide_user_messages(&[0]);
        view.refresh(&host, cwd);
        assert_eq!(view.known().collect::<Vec<_>>(), ["b"]);
        assert!(view.visible.get(&ScopeKey::project("a", "base")).is_none());
    }
}
