//! The lane's view of the visible surface (R-STATE-5): the visible state and
//! the known directories (R-RT-3 b), kept between compositions and advanced
//! by what the host appended ([`Host::visible_since`]), so a composition
//! costs what changed rather than the length of the history. When the host
//! reports anything but an append (compaction, or a host without marks) the
//! view is rebuilt from the whole surface, exactly as a first composition.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_state::{
    Digest, ScopeKey, TypedSource,
    scope::ScopeKind,
    source::Action,
    visible::{VisibleBaseline, VisibleEntry, VisibleState},
};

use crate::host::{Host, ViewSnapshot, VisibleMark, VisibleUpdate};

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

/// Counts `dir` in `known` `delta` more (or fewer) times; a count that
/// reaches zero forgets the directory.
fn add_to(known: &mut BTreeMap<DirKey, (String, usize)>, dir: &str, delta: isize) {
    use std::collections::btree_map::Entry;
    match known.entry(dir_key(dir)) {
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

/// Root recorded in a baseline identity (relative to the cwd), made absolute.
pub(crate) fn identity_root(identity: Option<&str>, cwd: &Utf8Path) -> Option<Utf8PathBuf> {
    let value: serde_json::Value = serde_json::from_str(identity?).ok()?;
    let rel = value.get("root")?.as_str()?;
    Some(dsh_home_paths::normalize_lexically(&cwd.join(rel)))
}

/// What a [`VisibleView::refresh`] changed in the visible state.
#[derive(Debug, PartialEq)]
pub(crate) enum Refreshed {
    /// Anything: the state was rebuilt or restored, or a baseline was
    /// folded in (it may change the root and what counts as known).
    All,
    /// Only scopes of these directories (root-relative, possibly
    /// repeated); none when nothing was appended.
    Dirs(Vec<String>),
}

impl Refreshed {
    /// Notes one appended message.
    fn note(&mut self, source: &TypedSource) {
        let Self::Dirs(dirs) = self else { return };
        if source.baseline {
            *self = Self::All;
            return;
        }
        dirs.extend(
            source
                .changes
                .iter()
                .filter_map(|c| c.scope.dir())
                .map(str::to_owned),
        );
    }
}

/// `format` and `version` of a [`ViewSnapshot`] this build writes; any
/// other is ignored (the surface is folded whole).
const SNAPSHOT_FORMAT: &str = "dsh-visible-view";
const SNAPSHOT_VERSION: u64 = 1;

/// The visible state and known directories of the surface read so far.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct VisibleView {
    mark: Option<VisibleMark>,
    /// Whether the host's saved fold was asked for (once, at the first
    /// refresh).
    consulted: bool,
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
    /// Brings the view up to the host's visible surface. The first refresh
    /// of a view starts from the fold the host kept ([`Host::saved_view`]),
    /// when there is one this build can read; a view that advanced is
    /// offered back ([`Host::save_view`]).
    ///
    /// Returns what changed: the lane's records kept against the visible
    /// state ([`crate::settle::SettleMemo`]) drop what it names.
    pub(crate) fn refresh(&mut self, host: &dyn Host, cwd: &Utf8Path) -> Refreshed {
        let mut changed = Refreshed::Dirs(Vec::new());
        if !self.consulted {
            self.consulted = true;
            if let Some((saved, mark)) = host.saved_view()
                && let Some(mut restored) = Self::decode(&saved, mark.len)
            {
                restored.mark = Some(mark);
                restored.consulted = true;
                *self = restored;
                changed = Refreshed::All;
            }
        }
        let (update, mark) = host.visible_since(self.mark);
        let advanced = match update {
            VisibleUpdate::Appended(sources) => {
                for source in &sources {
                    changed.note(source);
                    self.apply(source, cwd);
                }
                !sources.is_empty()
            }
            VisibleUpdate::Whole(sources) => {
                changed = Refreshed::All;
                *self = Self {
                    consulted: true,
                    ..Self::default()
                };
                for source in &sources {
                    self.apply(source, cwd);
                }
                true
            }
        };
        self.mark = mark;
        if let (true, Some(mark)) = (advanced, mark)
            && host.keeps_views()
        {
            host.save_view(self.encode(), mark);
        }
        changed
    }

    /// The view as [`ViewSnapshot`] text: the per-scope state, which
    /// messages had a baseline part, the epoch and the last root. The known
    /// directories are not kept: they follow from the rest ([`Self::recount`]).
    pub(crate) fn encode(&self) -> ViewSnapshot {
        let entries: Vec<serde_json::Value> = self
            .visible
            .entries()
            .map(|(scope, e)| {
                serde_json::json!([
                    scope.as_str(),
                    e.action.as_str(),
                    e.path,
                    e.digest.map(|d| d.to_hex()),
                    e.message
                ])
            })
            .collect();
        let baseline = self.visible.latest_baseline().map(|b| {
            let source = TypedSource {
                baseline: true,
                baseline_identity: b.identity.clone(),
                changes: b.changes.clone(),
            };
            serde_json::json!({"message": b.message, "source": source.to_json()})
        });
        let mut text = serde_json::json!({
            "format": SNAPSHOT_FORMAT,
            "version": SNAPSHOT_VERSION,
            "messages": self.baseline_at.len(),
            "baselineAt": self
                .baseline_at
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.then_some(i))
                .collect::<Vec<_>>(),
            "epoch": self.epoch,
            "entries": entries,
            "baseline": baseline,
        });
        if let (Some(root), Some(obj)) = (&self.last_root, text.as_object_mut()) {
            obj.insert("lastRoot".into(), root.as_ref().map(|r| r.as_str()).into());
        }
        ViewSnapshot::from_json(text.to_string())
    }

    /// The view [`Self::encode`] wrote (no mark), or `None` for text of
    /// another format or version, or with any malformed part: a snapshot is
    /// used whole or not at all. `at_most` bounds the messages it may say it
    /// folded (the mark's length: a view folds at most the messages the
    /// surface held), so a garbled count allocates nothing.
    pub(crate) fn decode(snapshot: &ViewSnapshot, at_most: usize) -> Option<Self> {
        use serde_json::Value;
        // Typed, borrowing what it can: a hook process decodes a view of
        // every visible scope at every event (R-HOOK-6), and a tree of
        // `Value`s (ordered maps, one allocation per string) cost it a
        // twentieth of its time at 1,000 known directories.
        let v: wire::Snapshot<'_> = serde_json::from_str(snapshot.json()).ok()?;
        if v.format != SNAPSHOT_FORMAT || v.version != SNAPSHOT_VERSION {
            return None;
        }
        let messages = usize::try_from(v.messages).ok().filter(|&n| n <= at_most)?;
        let mut baseline_at = vec![false; messages];
        for i in v.baseline_at {
            *baseline_at.get_mut(usize::try_from(i).ok()?)? = true;
        }
        let index = |i: u64| usize::try_from(i).ok().filter(|&i| i < messages);
        let mut entries = Vec::with_capacity(v.entries.len());
        for (scope, action, path, digest, message) in v.entries {
            let action = Action::parse(&action)?;
            let digest = match digest {
                None => None,
                Some(d) => Some(Digest::from_hex(&d)?),
            };
            if action.loads() != digest.is_some() {
                return None;
            }
            entries.push((
                ScopeKey::parse(&scope)?,
                VisibleEntry {
                    action,
                    path: path.into_owned(),
                    digest,
                    message: index(message)?,
                },
            ));
        }
        let baseline = match v.baseline {
            None => None,
            Some(b) => {
                let b: Value = serde_json::from_str(b.get()).ok()?;
                let source = b.get("source")?;
                let typed = TypedSource::from_json(source)?;
                // A change the lenient reader skipped would be lost silently.
                if typed.changes.len() != source.get("changes")?.as_array()?.len() {
                    return None;
                }
                Some(VisibleBaseline {
                    message: index(b.get("message")?.as_u64()?)?,
                    identity: typed.baseline_identity,
                    changes: typed.changes,
                })
            }
        };
        let last_root = v
            .last_root
            .map(|r| r.map(|r| Utf8PathBuf::from(r.into_owned())));
        let mut view = Self {
            mark: None,
            consulted: false,
            visible: VisibleState::from_parts(entries, baseline),
            baseline_at,
            epoch: index(v.epoch).or((messages == 0).then_some(0))?,
            last_root,
            known: BTreeMap::new(),
        };
        view.recount();
        Some(view)
    }

    /// The host's mark of the surface this view was last brought up to.
    pub(crate) fn mark(&self) -> Option<VisibleMark> {
        self.mark
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
        add_to(&mut self.known, dir, delta);
    }

    fn recount(&mut self) {
        // Straight from the entries into a fresh map: no intermediate copy
        // of every directory's path (a hook restores a view of every known
        // directory at every event, R-HOOK-6).
        let mut known = BTreeMap::new();
        // The map orders the directories: the entries need no sort.
        for (scope, entry) in self.visible.entries_unordered() {
            if self.counts(entry)
                && let Some(dir) = scope.dir()
            {
                add_to(&mut known, dir, 1);
            }
        }
        self.known = known;
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

/// The shape [`VisibleView::encode`] writes, as [`VisibleView::decode`]
/// reads it: every key is required except `lastRoot` (absent: no baseline
/// yet; `null`: one without a readable root), unknown keys are ignored.
mod wire {
    use std::borrow::Cow;

    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;

    /// One visible scope: key, action, path, digest (`null` for none) and
    /// the index of the message that set it.
    pub(super) type Entry<'a> = (
        Cow<'a, str>,
        Cow<'a, str>,
        Cow<'a, str>,
        Option<Cow<'a, str>>,
        u64,
    );

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(super) struct Snapshot<'a> {
        #[serde(borrow)]
        pub format: Cow<'a, str>,
        pub version: u64,
        pub messages: u64,
        pub baseline_at: Vec<u64>,
        pub epoch: u64,
        #[serde(borrow)]
        pub entries: Vec<Entry<'a>>,
        /// Required, `null` for none (an absent key is malformed).
        #[serde(borrow, deserialize_with = "present")]
        pub baseline: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "present_some")]
        pub last_root: Option<Option<Cow<'a, str>>>,
    }

    /// A required key whose value may be `null`.
    fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
        let raw = <&RawValue>::deserialize(d)?;
        Ok((raw.get() != "null").then_some(raw))
    }

    /// An optional key whose value may be `null`: `Some(None)` for `null`.
    fn present_some<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<Cow<'de, str>>>, D::Error> {
        Option::<Cow<'de, str>>::deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    //! The incremental view must equal a rebuild from the whole surface
    //! after every appended message, whatever the messages hold.

    use super::*;
    use crate::memory_host::MemoryHost;
    use dsh_instructions_state::{Digest, source::Change};
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

    proptest! {
        #[test]
        fn a_snapshot_decodes_to_the_view_it_was_taken_of(
            sources in proptest::collection::vec(arb_source(), 0..12),
        ) {
            let cwd = Utf8Path::new("/w/repo/sub");
            let host = MemoryHost::new(cwd.to_owned());
            let mut view = VisibleView::default();
            for source in &sources {
                host.append_user(vec![String::new()], Some(source.clone()));
                view.refresh(&host, cwd);
                let mut back = VisibleView::decode(&view.encode(), sources.len())
                    .expect("own snapshot");
                back.mark = view.mark;
                back.consulted = true;
                prop_assert_eq!(&back, &view);
            }
        }

        #[test]
        fn a_new_view_resumes_from_the_kept_fold(
            sources in proptest::collection::vec(arb_source(), 1..12),
            split in 0..12usize,
        ) {
            let cwd = Utf8Path::new("/w/repo/sub");
            let split = split.min(sources.len());
            let host = MemoryHost::new(cwd.to_owned()).with_kept_views();
            let mut first = VisibleView::default();
            for source in &sources[..split] {
                host.append_user(vec![String::new()], Some(source.clone()));
            }
            first.refresh(&host, cwd);
            for source in &sources[split..] {
                host.append_user(vec![String::new()], Some(source.clone()));
            }
            // The second view starts from what the first kept at `split`.
            let mut second = VisibleView::default();
            second.refresh(&host, cwd);
            prop_assert_eq!(
                second.known().collect::<Vec<_>>(),
                known_from_scratch(&sources, cwd)
            );
            prop_assert_eq!(&second.visible, &VisibleState::derive(sources.iter().enumerate()));
            prop_assert_eq!(second.baseline_at.len(), sources.len());
        }
    }

    /// A host whose kept fold is whatever the test puts there.
    #[derive(Debug)]
    struct Kept(MemoryHost, ViewSnapshot, VisibleMark);

    impl Host for Kept {
        fn cwd(&self) -> Utf8PathBuf {
            self.0.cwd()
        }
        fn visible_workspace(&self) -> Vec<TypedSource> {
            self.0.visible_workspace()
        }
        fn visible_since(&self, mark: Option<VisibleMark>) -> (VisibleUpdate, Option<VisibleMark>) {
            self.0.visible_since(mark)
        }
        fn saved_view(&self) -> Option<(ViewSnapshot, VisibleMark)> {
            Some((self.1.clone(), self.2))
        }
        fn step_open(&self) -> bool {
            false
        }
    }

    fn set_in(dir: &str) -> TypedSource {
        TypedSource {
            changes: vec![Change {
                action: Action::Set,
                scope: ScopeKey::project(dir, "base"),
                path: format!("{dir}/AGENTS.md"),
                previous_path: None,
                digest: Some(Digest::of(dir)),
            }],
            ..TypedSource::default()
        }
    }

    #[rstest]
    fn a_kept_fold_is_used_and_only_the_rest_is_folded() {
        // The kept fold says "b" is known although the host's first message
        // sets "a": a view that used it knows "b" (and the appended "c"),
        // one that folded the surface whole would know "a".
        let cwd = Utf8Path::new("/w/repo");
        let other = MemoryHost::new(cwd.to_owned());
        other.append_user(vec![], Some(set_in("b")));
        let mut from = VisibleView::default();
        from.refresh(&other, cwd);
        let host = MemoryHost::new(cwd.to_owned());
        host.append_user(vec![], Some(set_in("a")));
        let (_, mark) = host.visible_since(None);
        host.append_user(vec![], Some(set_in("c")));
        let kept = Kept(host, from.encode(), mark.expect("memory hosts mark"));
        let mut view = VisibleView::default();
        view.refresh(&kept, cwd);
        assert_eq!(view.known().collect::<Vec<_>>(), ["b", "c"]);
    }

    #[rstest]
    fn the_malformed_cases_differ_from_a_readable_text_only_where_they_say() {
        let text = r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[0],"epoch":0,"entries":[["project\u0000b\u0000base","set","b/AGENTS.md","0000000000000000000000000000000000000000",0]],"baseline":null}"#;
        let view = VisibleView::decode(&ViewSnapshot::from_json(text.into()), 1).expect("readable");
        assert_eq!(view.known().collect::<Vec<_>>(), ["b"]);
        assert_eq!(view.baseline_at, [true]);
    }

    #[rstest]
    #[case::absent(r#""#, None)]
    #[case::null(r#","lastRoot":null"#, Some(None))]
    #[case::text(r#","lastRoot":"/w/repo""#, Some(Some("/w/repo")))]
    fn a_kept_last_root_is_read_as_written(#[case] tail: &str, #[case] want: Option<Option<&str>>) {
        let text = format!(
            r#"{{"format":"dsh-visible-view","version":1,"messages":0,"baselineAt":[],"epoch":0,"entries":[],"baseline":null{tail},"unknown":[1]}}"#
        );
        let view = VisibleView::decode(&ViewSnapshot::from_json(text), 0).expect("readable");
        assert_eq!(view.last_root, want.map(|r| r.map(Utf8PathBuf::from)));
    }

    #[rstest]
    #[case::other_version(r#"{"format":"dsh-visible-view","version":2,"messages":0,"baselineAt":[],"epoch":0,"entries":[],"baseline":null}"#)]
    #[case::not_json(r#"{"format":"dsh-visible-view""#)]
    #[case::message_out_of_range(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[],"epoch":0,"entries":[["project\u0000b\u0000base","set","b/AGENTS.md","0000000000000000000000000000000000000000",1]],"baseline":null}"#)]
    #[case::digest_on_a_remove(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[],"epoch":0,"entries":[["project\u0000b\u0000base","remove","b/AGENTS.md","0000000000000000000000000000000000000000",0]],"baseline":null}"#)]
    #[case::set_without_digest(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[],"epoch":0,"entries":[["project\u0000b\u0000base","set","b/AGENTS.md",null,0]],"baseline":null}"#)]
    #[case::more_messages_than_the_surface(r#"{"format":"dsh-visible-view","version":1,"messages":99999999999999,"baselineAt":[],"epoch":0,"entries":[],"baseline":null}"#)]
    #[case::baseline_flag_out_of_range(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[3],"epoch":0,"entries":[],"baseline":null}"#)]
    #[case::no_baseline_key(r#"{"format":"dsh-visible-view","version":1,"messages":0,"baselineAt":[],"epoch":0,"entries":[]}"#)]
    #[case::entry_of_six(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[],"epoch":0,"entries":[["project\u0000b\u0000base","set","b/AGENTS.md","0000000000000000000000000000000000000000",0,0]],"baseline":null}"#)]
    #[case::digest_not_text(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[],"epoch":0,"entries":[["project\u0000b\u0000base","set","b/AGENTS.md",7,0]],"baseline":null}"#)]
    #[case::negative_index(r#"{"format":"dsh-visible-view","version":1,"messages":1,"baselineAt":[],"epoch":0,"entries":[["project\u0000b\u0000base","set","b/AGENTS.md","0000000000000000000000000000000000000000",-1]],"baseline":null}"#)]
    #[case::last_root_not_text(r#"{"format":"dsh-visible-view","version":1,"messages":0,"baselineAt":[],"epoch":0,"entries":[],"baseline":null,"lastRoot":3}"#)]
    fn a_malformed_kept_fold_is_ignored(#[case] text: &str) {
        let cwd = Utf8Path::new("/w/repo");
        assert!(VisibleView::decode(&ViewSnapshot::from_json(text.into()), 1).is_none());
        // And the view then folds the surface whole.
        let host = MemoryHost::new(cwd.to_owned());
        host.append_user(vec![], Some(set_in("a")));
        let (_, mark) = host.visible_since(None);
        let kept = Kept(
            host,
            ViewSnapshot::from_json(text.into()),
            mark.expect("mark"),
        );
        let mut view = VisibleView::default();
        view.refresh(&kept, cwd);
        assert_eq!(view.known().collect::<Vec<_>>(), ["a"]);
    }

    #[rstest]
    fn a_compaction_rebuilds_the_view() {
        let cwd = Utf8Path::new("/w/repo");
        let host = MemoryHost::new(cwd.to_owned());
        let set = set_in;
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
