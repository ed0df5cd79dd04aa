//! [`Gather::settled`] must say "nothing to report" exactly when the full
//! path would produce no transition and no cache update; every case here
//! names the condition that sends a directory back to the full path.

use super::*;
use crate::dir_id::DirId;
use crate::settle::Records;
use dsh_instructions_state::{
    TypedSource,
    scope::{SLOT_BASE, SLOT_LOCAL},
    source::{Action, Change},
};
use rstest::rstest;

const REL: &str = "a";

fn present(ino: u64, version: u64) -> Probe {
    Probe::Present(PresentFile {
        size: 10,
        version: FileVersion::new([version, 0, 0, 0]),
        identity: FileIdentity::Inode { dev: 1, ino },
    })
}

fn names() -> Vec<String> {
    [
        "AGENTS.md",
        "CLAUDE.md",
        "AGENTS.local.md",
        "CLAUDE.local.md",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// What the model saw and the cache learned for one slot.
#[derive(Clone, Copy, Debug)]
enum Shown {
    Nothing,
    /// Loaded from `name` at version 1 with this text.
    Loaded(&'static str, &'static str),
    Tombstone,
}

fn setup(base: Shown, local: Shown) -> (VisibleState, VersionCache<FileVersion>) {
    let mut changes = Vec::new();
    let mut cache = VersionCache::new();
    for (slot, shown) in [(SLOT_BASE, base), (SLOT_LOCAL, local)] {
        let scope = ScopeKey::project(REL, slot);
        match shown {
            Shown::Nothing => {}
            Shown::Loaded(name, text) => {
                let path = display(REL, name).to_string();
                changes.push(Change {
                    action: Action::Set,
                    scope: scope.clone(),
                    path: path.clone(),
                    previous_path: None,
                    digest: Some(Digest::of(text)),
                });
                cache.insert(
                    scope,
                    CacheEntry {
                        path,
                        version: FileVersion::new([1, 0, 0, 0]),
                        digest: Digest::of(text),
                        trimmed_digest: Digest::of_trimmed(text),
                        imports: Vec::new(),
                    },
                );
            }
            Shown::Tombstone => changes.push(Change {
                action: Action::Remove,
                scope,
                path: display(REL, "AGENTS.md").to_string(),
                previous_path: None,
                digest: None,
            }),
        }
    }
    let source = TypedSource {
        changes,
        ..TypedSource::default()
    };
    (VisibleState::derive([(0, &source)]), cache)
}

fn settled_with(
    shown: (Shown, Shown),
    probes: &[Probe],
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &mut SeenFiles,
) -> bool {
    let (visible, cache) = setup(shown.0, shown.1);
    settled_over(Some((&cache, &visible)), probes, skip, seen)
}

/// [`Gather::settled`] of [`REL`] in a default pass over `cache`.
fn settled_over(
    cache: Option<(&VersionCache<FileVersion>, &VisibleState)>,
    probes: &[Probe],
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &mut SeenFiles,
) -> bool {
    settled_in(
        Config::with_max_bytes(65_536),
        false,
        cache,
        probes,
        skip,
        seen,
    )
}

/// [`Gather::settled`] of [`REL`] under `config`, its rules settled or not.
fn settled_in(
    config: Config,
    rules_settled: bool,
    cache: Option<(&VersionCache<FileVersion>, &VisibleState)>,
    probes: &[Probe],
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &mut SeenFiles,
) -> bool {
    let (cache, visible) = cache.unzip();
    in_pass(&config, cache, visible, false, |g| {
        g.settled(
            REL,
            &names(),
            probes,
            rules_settled,
            skip,
            seen,
            &mut SlotKeys::default(),
            None,
        )
    })
}

/// [`Gather::settled`] of [`REL`] in a default pass over `cache`, with
/// the memo `records`.
fn settled_memo(
    cache: (&VersionCache<FileVersion>, &VisibleState),
    probes: &[Probe],
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &mut SeenFiles,
    records: &mut Records,
) -> bool {
    let config = Config::with_max_bytes(65_536);
    let dir = DirId::of(REL).expect("an id");
    in_pass(&config, Some(cache.0), Some(cache.1), false, |g| {
        g.settled(
            REL,
            &names(),
            probes,
            false,
            skip,
            seen,
            &mut SlotKeys::default(),
            Some((records, dir)),
        )
    })
}

/// Runs `f` on a pass under `config` over an empty in-memory provider.
fn in_pass<R>(
    config: &Config,
    cache: Option<&VersionCache<FileVersion>>,
    visible: Option<&VisibleState>,
    report: bool,
    f: impl FnOnce(&Gather<'_>) -> R,
) -> R {
    let cancel = CancellationToken::new();
    let provider = dsh_instructions_discovery::memory::MemoryProvider::new(Vec::new());
    f(&Gather {
        provider: &provider,
        config,
        cancel: &cancel,
        cache,
        visible,
        report,
        imports: None,
        layout: &Layout::new(config),
        gate: Gate::Open,
        user_files: &[],
        rules: None,
    })
}

const A: Probe = Probe::Absent;

#[rstest]
#[case::unchanged_winner(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing, [present(1, 1), A, A, A], true)]
#[case::unchanged_shadowing_winner(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing, [present(1, 1), present(2, 9), A, A], true)]
#[case::both_slots_unchanged(Shown::Loaded("AGENTS.md", "x"), Shown::Loaded("CLAUDE.local.md", "y"), [present(1, 1), A, A, present(2, 1)], true)]
#[case::absent_behind_a_tombstone(Shown::Tombstone, Shown::Nothing, [A, A, A, A], true)]
#[case::absent_and_never_seen(Shown::Nothing, Shown::Nothing, [A, A, A, A], true)]
#[case::edited(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing, [present(1, 2), A, A, A], false)]
#[case::deleted(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing, [A, A, A, A], false)]
#[case::winner_moved_to_another_name(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing, [A, present(1, 1), A, A], false)]
#[case::created(Shown::Nothing, Shown::Nothing, [A, A, present(3, 1), A], false)]
#[case::created_behind_a_tombstone(Shown::Tombstone, Shown::Nothing, [present(1, 1), A, A, A], false)]
#[case::unavailable(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing, [Probe::Unavailable(Unavailable::PermissionDenied), A, A, A], false)]
#[case::unavailable_where_nothing_loaded(Shown::Nothing, Shown::Nothing, [A, A, A, Probe::Unavailable(Unavailable::Loop)], false)]
#[case::same_file_in_both_slots(Shown::Loaded("AGENTS.md", "x"), Shown::Loaded("CLAUDE.local.md", "y"), [present(1, 1), A, A, present(1, 1)], false)]
#[case::same_trimmed_text_in_both_slots(Shown::Loaded("AGENTS.md", "x"), Shown::Loaded("CLAUDE.local.md", "x\n"), [present(1, 1), A, A, present(2, 1)], false)]
fn settled_only_when_nothing_can_change(
    #[case] base: Shown,
    #[case] local: Shown,
    #[case] probes: [Probe; 4],
    #[case] expected: bool,
) {
    let mut seen = SeenFiles::default();
    let got = settled_with((base, local), &probes, &|_| false, &mut seen);
    assert_eq!(got, expected);
    if !expected {
        assert!(
            seen.first.is_empty(),
            "a refused directory leaves seen alone"
        );
    }
}

#[rstest]
fn a_settled_winner_joins_seen_for_later_directories() {
    let mut seen = SeenFiles::default();
    let shown = (Shown::Loaded("AGENTS.md", "x"), Shown::Nothing);
    assert!(settled_with(
        shown,
        &[present(1, 1), A, A, A],
        &|_| false,
        &mut seen
    ));
    let id = FileIdentity::Inode { dev: 1, ino: 1 };
    assert_eq!(seen.first.get(&id).map(|d| &**d), Some("a/AGENTS.md"));
}

#[rstest]
fn a_file_seen_earlier_in_the_pass_is_a_duplicate_not_settled() {
    let mut seen = SeenFiles::default();
    let id = FileIdentity::Inode { dev: 1, ino: 1 };
    seen.first.insert(id.clone(), Arc::from("AGENTS.md"));
    let shown = (Shown::Loaded("AGENTS.md", "x"), Shown::Nothing);
    assert!(!settled_with(
        shown,
        &[present(1, 1), A, A, A],
        &|_| false,
        &mut seen
    ));
    assert_eq!(seen.first.len(), 1);
}

#[rstest]
fn slots_left_out_by_the_budget_are_not_looked_at() {
    let mut seen = SeenFiles::default();
    let shown = (Shown::Loaded("AGENTS.md", "x"), Shown::Nothing);
    let base = ScopeKey::project(REL, SLOT_BASE);
    // The base file changed, but its slot is excluded (R-RT-10).
    let skip = move |s: &ScopeKey| *s == base;
    assert!(settled_with(
        shown,
        &[present(1, 2), A, A, A],
        &skip,
        &mut seen
    ));
    assert!(seen.first.is_empty());
}

#[rstest]
fn a_gather_without_cache_never_settles() {
    let mut seen = SeenFiles::default();
    assert!(!settled_over(None, &[A, A, A, A], &|_| false, &mut seen));
}

/// With rules on, unchanged candidates settle a directory only when the
/// caller found its rules settled too (decision 0075); with rules off the
/// flag is never looked at.
#[rstest]
#[case::rules_off_flag_ignored(&[], false, true)]
#[case::rules_on_and_settled(&["claude"], true, true)]
#[case::rules_on_not_settled(&["claude"], false, false)]
fn rules_settle_a_directory_only_when_the_caller_says_so(
    #[case] formats: &[&str],
    #[case] rules_settled: bool,
    #[case] expected: bool,
) {
    let input: dsh_instructions_state::ConfigInput =
        serde_json::from_value(serde_json::json!({"max_bytes": 65_536, "rule_formats": formats}))
            .unwrap();
    let config = input.resolve().expect("valid config").config;
    let (visible, cache) = setup(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing);
    let mut seen = SeenFiles::default();
    let got = settled_in(
        config,
        rules_settled,
        Some((&cache, &visible)),
        &[present(1, 1), A, A, A],
        &|_| false,
        &mut seen,
    );
    assert_eq!(got, expected);
}

/// [`Gather::slots`] of [`REL`] with the base file present and no overlay.
fn slots_of(visible: Option<&VisibleState>, report: bool) -> DirScan {
    let config = Config::with_max_bytes(65_536);
    in_pass(&config, None, visible, report, |g| {
        g.slots(
            DirPath::known(Utf8Path::new("/r/a"), REL),
            &names(),
            vec![present(1, 1), A, A, A],
            &|_| false,
        )
    })
}

fn slot_names(scan: &DirScan) -> Vec<(String, bool)> {
    scan.slots
        .iter()
        .map(|s| {
            let absent = matches!(s.state, SlotState::Absent);
            (s.scope.slot().unwrap_or("").to_owned(), absent)
        })
        .collect()
}

/// An absent slot is kept only where the model sees something at its
/// scope (a removal there); candidates only for a reporting pass.
#[rstest]
fn absent_slots_are_kept_where_something_is_visible() {
    let nothing = slots_of(None, false);
    assert_eq!(slot_names(&nothing), [(SLOT_BASE.to_owned(), false)]);
    assert!(nothing.candidates.is_empty());

    let (visible, _) = setup(Shown::Nothing, Shown::Loaded("AGENTS.local.md", "y"));
    let shown = slots_of(Some(&visible), false);
    assert_eq!(
        slot_names(&shown),
        [(SLOT_BASE.to_owned(), false), (SLOT_LOCAL.to_owned(), true)]
    );

    let reported = slots_of(None, true);
    let names: Vec<&str> = reported
        .candidates
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "AGENTS.md",
            "CLAUDE.md",
            "AGENTS.local.md",
            "CLAUDE.local.md"
        ]
    );
}

/// A read path is the directory joined with the file's name, allocated at
/// its size (issue 46 item 4): `join` would give the first case twice the
/// directory's length.
#[rstest]
#[case("/repo/a/very/long/directory/path/with/many/levels", "AGENTS.md")]
#[case("/", "CLAUDE.md")]
#[case("/repo/", "AGENTS.local.md")]
#[case("/repo", ".claude/CLAUDE.md")]
fn a_read_path_is_the_join_sized_once(#[case] dir: &str, #[case] name: &str) {
    let path = file_path(Utf8Path::new(dir), name);
    assert_eq!(path, Utf8Path::new(dir).join(name));
    assert!(path.capacity() <= dir.len() + 1 + name.len());
}

/// A probe of one candidate: absent, one of two files at one of two
/// versions, or unavailable.
fn any_probe() -> impl proptest::strategy::Strategy<Value = Probe> {
    use proptest::prelude::*;
    prop_oneof![
        1 => Just(A),
        4 => (1u64..3, 1u64..3).prop_map(|(ino, v)| present(ino, v)),
        1 => Just(Probe::Unavailable(Unavailable::PermissionDenied)),
    ]
}

/// What the model saw in one slot: nothing, `name` (of `ino`, version
/// 1), or a tombstone; with the probe under which that slot is unchanged
/// at candidate `at`.
fn any_shown(
    name: &'static str,
    text: &'static str,
    ino: u64,
) -> impl proptest::strategy::Strategy<Value = (Shown, Option<Probe>)> {
    use proptest::prelude::*;
    prop_oneof![
        Just((Shown::Nothing, None)),
        Just((Shown::Loaded(name, text), Some(present(ino, 1)))),
        Just((Shown::Tombstone, None)),
    ]
}

proptest::proptest! {
    // Cheap cases, and the edits that matter (one file at another version
    // under the same name) are a few in a hundred.
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    /// The settled memo answers what the check would (decision 0093):
    /// whatever record a first pass left (probes `before`, those under
    /// which what the model saw is unchanged), a second pass over the same
    /// visible state and cache (the same probes with up to two changed, a
    /// file seen earlier in the pass or not, a slot skipped or not) gets
    /// the check's verdict and leaves `seen` as the check leaves it.
    #[test]
    fn a_record_answers_what_the_check_would(
        (base, base_probe) in any_shown("AGENTS.md", "x", 1),
        (local, local_probe) in any_shown("CLAUDE.local.md", "y", 2),
        edits in proptest::collection::vec((0usize..4, any_probe()), 0..3),
        earlier in proptest::option::of(1u64..3),
        skip_base in proptest::bool::ANY,
    ) {
        let (visible, cache) = setup(base, local);
        let before = [base_probe.unwrap_or(A), A, A, local_probe.unwrap_or(A)];
        let mut after = before.clone();
        for (at, probe) in edits {
            after[at] = probe;
        }
        let base_key = ScopeKey::project(REL, SLOT_BASE);
        let skip = move |s: &ScopeKey| skip_base && *s == base_key;
        let fresh_seen = || {
            let mut seen = SeenFiles::default();
            if let Some(ino) = earlier {
                seen.first.insert(FileIdentity::Inode { dev: 1, ino }, Arc::from("x"));
            }
            seen
        };
        let mut records = Records::default();
        let primed = settled_memo(
            (&cache, &visible), &before, &|_| false, &mut SeenFiles::default(), &mut records,
        );
        proptest::prop_assert!(primed, "unchanged probes settle");
        let mut want_seen = fresh_seen();
        let want = settled_over(Some((&cache, &visible)), &after, &skip, &mut want_seen);
        let mut got_seen = fresh_seen();
        let got = settled_memo((&cache, &visible), &after, &skip, &mut got_seen, &mut records);
        proptest::prop_assert_eq!(got, want);
        proptest::prop_assert_eq!(got_seen.first, want_seen.first);
    }
}

/// A directory settled once is settled from its record while its probes
/// stay the same: no scope key or display path is built, nothing is looked
/// up in the visible state or the cache (issue 46 item 2: a touch of an
/// already-settled directory does no string work for it). A change of its
/// probes sends it back to the check, which drops the record.
#[rstest]
fn an_unchanged_directory_is_answered_from_its_record() {
    let (visible, cache) = setup(Shown::Loaded("AGENTS.md", "x"), Shown::Nothing);
    let probes = [present(1, 1), A, A, A];
    let mut records = Records::default();
    let settle = |probes: &[Probe], records: &mut Records| {
        settled_memo(
            (&cache, &visible),
            probes,
            &|_| false,
            &mut SeenFiles::default(),
            records,
        )
    };
    assert!(settle(&probes, &mut records));
    assert_eq!(records.hits, 0, "the first pass checks");
    for _ in 0..3 {
        assert!(settle(&probes, &mut records));
    }
    assert_eq!(records.hits, 3);
    let dir = DirId::of(REL).expect("an id");
    let winner = &records.get(dir).expect("a record").winners[0];
    assert_eq!(&*winner.display, "a/AGENTS.md");
    // Edited: the check runs, refuses, and the record is gone.
    assert!(!settle(&[present(1, 2), A, A, A], &mut records));
    assert_eq!(records.hits, 3);
    assert!(records.get(dir).is_none());
}
