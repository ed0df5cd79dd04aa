//! Differential property test of the two filesystem providers (issue 34
//! item 2, decision 0042): random small trees of files, directories and
//! links — relative and absolute, chains, dangling, loops, a linked cwd,
//! a linked DSH home or extra root — are materialized both in the
//! in-memory provider and on disk in a temporary directory `T`, mounted
//! through the one entry point (R-RT-11), and every probe, read, path kind
//! and root-marker check (R-DISC-1, R-DISC-4, R-DISC-7), the identities
//! that deduplicate (R-DISC-3) and the composed baseline must be the same
//! on both. The only thing normalized away is `T` itself.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use camino::Utf8PathBuf;
use dsh_home_paths::HomeEnv;
use dsh_instructions_conformance::fsmodel::{DiskFixture, FsFixture, MemoryFixture};
use dsh_instructions_conformance::schema::{FsContent, FsEntry};
use dsh_instructions_discovery::{
    CancellationToken, FsProvider,
    cap_std::ambient_authority,
    memory::MemoryProvider,
    provider::{FileIdentity, Probe, ReadOutcome},
};
use dsh_instructions_runtime::{CapStdFactory, MountBuilder, ProviderFactory};
use dsh_instructions_state::{ConfigInput, config::CandidatePolicy};
use proptest::prelude::*;

/// Cases per run: each materializes a tree on disk, so a few hundred keep
/// the test at a few seconds in a debug build.
const CASES: u32 = 256;

/// Every generated path lies below this directory, two levels under `/`:
/// a relative link climbs at most one `..` before a name, so no lookup
/// ever climbs above `/` in memory (where it would stop) or above `T` on
/// disk (where it would not).
const TOP: &str = "/top/w";

/// Names of entries: candidates, a marker and plain names.
const NAMES: &[&str] = &["a", "b", "c", "AGENTS.md", "CLAUDE.md", ".git"];
/// Names a directory path (cwd, home, root) is built from.
const DIR_NAMES: &[&str] = &["a", "b", "c"];
/// File contents: repeats make identical content across files (R-STATE-3
/// dedup by content), the BOM is dropped on read (R-DISC-6).
const TEXTS: &[&str] = &["alpha", "beta", "alpha", "\u{FEFF}bom", ""];

#[derive(Clone, Debug)]
enum Kind {
    File(&'static str),
    Dir,
    Link(String),
}

#[derive(Clone, Debug)]
struct Case {
    /// Entries by path relative to [`TOP`]; parents before children.
    entries: Vec<(String, Kind)>,
    /// Relative to [`TOP`] (empty: `TOP` itself).
    cwd: String,
    dsh_home: String,
    extra_root: Option<String>,
    all_distinct: bool,
    /// More paths to probe, relative to [`TOP`].
    probes: Vec<String>,
}

fn name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(NAMES)
}

fn rel_path(
    names: &'static [&'static str],
    len: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(names), len).prop_map(|parts| parts.join("/"))
}

/// Link text: relative (an optional leading `..`, names, an optional
/// `../name` after them: the case where `..` after a linked directory
/// differs from lexical resolution), `.`, or absolute inside [`TOP`].
fn link_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (any::<bool>(), rel_path(NAMES, 1..=2), prop::option::of(name())).prop_map(
            |(up, names, back)| {
                let mut text = if up { format!("../{names}") } else { names };
                if let Some(back) = back {
                    text = format!("{text}/../{back}");
                }
                text
            }
        ),
        1 => Just(".".to_owned()),
        3 => rel_path(NAMES, 0..=2).prop_map(|rel| if rel.is_empty() {
            TOP.to_owned()
        } else {
            format!("{TOP}/{rel}")
        }),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => prop::sample::select(TEXTS).prop_map(Kind::File),
        2 => Just(Kind::Dir),
        4 => link_text().prop_map(Kind::Link),
    ]
}

/// Keeps the first entry per path and drops entries below a file or a
/// link (materializing those would replace the link in memory but write
/// through it on disk), parents first.
fn tree(raw: Vec<(String, Kind)>) -> Vec<(String, Kind)> {
    let mut kept: BTreeMap<String, Kind> = BTreeMap::new();
    let mut sorted = raw;
    sorted.sort_by_key(|(path, _)| path.matches('/').count());
    for (path, kind) in sorted {
        if kept.contains_key(&path) {
            continue;
        }
        let mut ancestor = path.as_str();
        let mut below_leaf = false;
        while let Some((parent, _)) = ancestor.rsplit_once('/') {
            if kept.get(parent).is_some_and(|k| !matches!(k, Kind::Dir)) {
                below_leaf = true;
            }
            ancestor = parent;
        }
        if !below_leaf {
            kept.insert(path, kind);
        }
    }
    let mut entries: Vec<(String, Kind)> = kept.into_iter().collect();
    entries.sort_by_key(|(path, _)| path.matches('/').count());
    entries
}

/// A directory path for the cwd, the DSH home or an extra root: most
/// often one of the tree's directories or links (a linked cwd or root),
/// else any path, which may not exist.
#[derive(Clone, Debug)]
struct DirPick {
    from_tree: bool,
    index: prop::sample::Index,
    fallback: String,
}

fn dir_pick(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = DirPick> {
    (
        prop::bool::weighted(0.75),
        any::<prop::sample::Index>(),
        rel_path(DIR_NAMES, len),
    )
        .prop_map(|(from_tree, index, fallback)| DirPick {
            from_tree,
            index,
            fallback,
        })
}

impl DirPick {
    fn pick(self, entries: &[(String, Kind)]) -> String {
        let dirs: Vec<&String> = entries
            .iter()
            .filter(|(_, kind)| !matches!(kind, Kind::File(_)))
            .map(|(path, _)| path)
            .collect();
        if self.from_tree && !dirs.is_empty() {
            dirs[self.index.index(dirs.len())].clone()
        } else {
            self.fallback
        }
    }
}

/// An entry's path: up to two directory names, then a name that is most
/// often a candidate, so compositions have something to read.
fn entry_path() -> impl Strategy<Value = String> {
    let last = prop_oneof![
        3 => Just("AGENTS.md"),
        2 => Just("CLAUDE.md"),
        1 => Just(".git"),
        4 => prop::sample::select(DIR_NAMES),
    ];
    (rel_path(DIR_NAMES, 0..=2), last).prop_map(|(dirs, last)| {
        if dirs.is_empty() {
            last.to_owned()
        } else {
            format!("{dirs}/{last}")
        }
    })
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((entry_path(), kind()), 1..14),
        dir_pick(0..=2),
        dir_pick(1..=2),
        prop::option::of(dir_pick(1..=1)),
        any::<bool>(),
        prop::collection::vec(rel_path(NAMES, 1..=4), 0..8),
        any::<bool>(),
    )
        .prop_map(
            |(mut raw, cwd, dsh_home, extra_root, all_distinct, probes, marker)| {
                if marker {
                    // A project root above the cwd: every directory from it
                    // down to the cwd composes (R-DISC-3).
                    raw.insert(0, (".git".to_owned(), Kind::Dir));
                }
                let entries = tree(raw);
                Case {
                    cwd: cwd.pick(&entries),
                    dsh_home: dsh_home.pick(&entries),
                    extra_root: extra_root.map(|r| r.pick(&entries)),
                    entries,
                    all_distinct,
                    probes,
                }
            },
        )
}

fn under_top(rel: &str) -> String {
    if rel.is_empty() {
        TOP.to_owned()
    } else {
        format!("{TOP}/{rel}")
    }
}

fn entry(kind: &Kind) -> FsEntry {
    FsEntry::plain(match kind {
        Kind::File(text) => FsContent::File(text.as_bytes().to_vec()),
        Kind::Dir => FsContent::Dir,
        Kind::Link(text) => FsContent::Link(text.clone()),
    })
}

/// One side of the comparison: a fixture, how its paths are spelled, and
/// what its `T` is (empty for memory).
struct Side {
    fixture: Box<dyn FsFixture>,
    factory: Arc<dyn ProviderFactory>,
    prefix: String,
}

impl Side {
    fn memory() -> Self {
        let provider = MemoryProvider::new(Vec::new());
        Self {
            fixture: Box::new(MemoryFixture::new(provider.clone())),
            factory: Arc::new(provider),
            prefix: String::new(),
        }
    }

    fn disk() -> Self {
        let fixture = DiskFixture::new().expect("temporary directory");
        let prefix = fixture.paths().root().expect("a disk root").to_string();
        Self {
            fixture: Box::new(fixture),
            factory: Arc::new(CapStdFactory::new(ambient_authority()).inline()),
            prefix,
        }
    }

    fn path(&self, scenario_path: &str) -> Utf8PathBuf {
        self.fixture.paths().map_path(scenario_path)
    }

    /// `value`'s debug text with `T` taken out.
    fn plain(&self, value: &impl Debug) -> String {
        let text = format!("{value:?}");
        if self.prefix.is_empty() {
            text
        } else {
            text.replace(&self.prefix, "")
        }
    }
}

/// Everything one side answered for a case, `T` normalized away.
#[derive(Debug, PartialEq, Eq)]
struct Answers {
    mount: Result<Vec<String>, String>,
    per_path: Vec<String>,
    /// For each pair of present probes, whether their identities are equal.
    same_file: Vec<bool>,
    composition: Option<String>,
}

fn spec(case: &Case, side: &Side) -> MountBuilder {
    let env = HomeEnv {
        home: Some(side.path("/top/home").into_string().into()),
        dsh_home: Some(side.path(&under_top(&case.dsh_home)).into_string().into()),
        cwd: side.path("/").into_std_path_buf(),
        account_home: None,
    };
    let config = ConfigInput {
        max_bytes: Some(65_536i64.into()),
        instruction_file_candidates: Some(vec!["AGENTS.md".into(), "CLAUDE.md".into()]),
        local_instruction_file_candidates: Some(Vec::new()),
        candidate_policy: Some(if case.all_distinct {
            CandidatePolicy::AllDistinct
        } else {
            CandidatePolicy::FirstWins
        }),
        ..ConfigInput::default()
    };
    MountBuilder::new(side.path(&under_top(&case.cwd)))
        .config(config)
        .env(env)
        .trust(case.extra_root.iter().map(|rel| side.path(&under_top(rel))))
        .fs(side.factory.clone())
}

fn probe_paths(case: &Case) -> Vec<String> {
    let mut paths: Vec<String> = vec![TOP.to_owned(), under_top(&case.cwd)];
    for rel in case
        .entries
        .iter()
        .map(|(path, _)| path)
        .chain(&case.probes)
        .chain([&case.cwd, &case.dsh_home])
        .chain(&case.extra_root)
    {
        let path = under_top(rel);
        paths.push(format!("{path}/AGENTS.md"));
        paths.push(format!("{path}/.git"));
        paths.push(path);
    }
    paths.sort();
    paths.dedup();
    paths
}

/// Probes as present-with-size, absent or the reason (versions and
/// identities differ between providers by design).
fn classes<'p>(side: &Side, probes: impl IntoIterator<Item = &'p Probe>) -> String {
    let shown: Vec<String> = probes
        .into_iter()
        .map(|probe| match probe {
            Probe::Present(file) => format!("present {}", file.size),
            other => side.plain(other),
        })
        .collect();
    shown.join(", ")
}

async fn answers(case: &Case, side: &Side) -> Answers {
    for (path, kind) in &case.entries {
        side.fixture
            .insert(&under_top(path), &entry(kind))
            .expect("materialize");
    }
    let cancel = CancellationToken::new();
    let spec = spec(case, side);
    let opened = match spec.open(&cancel).await {
        Ok(opened) => opened,
        Err(error) => {
            return Answers {
                mount: Err(side.plain(&error.to_string())),
                per_path: Vec::new(),
                same_file: Vec::new(),
                composition: None,
            };
        }
    };
    let roots = opened
        .trusted_roots()
        .iter()
        .map(|r| side.plain(r))
        .collect();
    let provider: Arc<dyn FsProvider> = opened.provider().expect("a provider").clone();
    let batch_names: Vec<String> = ["AGENTS.md", "CLAUDE.md", ".git"]
        .map(str::to_owned)
        .to_vec();
    let mut per_path = Vec::new();
    let mut identities: Vec<FileIdentity> = Vec::new();
    for path in probe_paths(case) {
        let path = side.path(&path);
        let probe = provider.probe(&path, &cancel).await.expect("not cancelled");
        let probe_text = match &probe {
            Probe::Present(file) => {
                identities.push(file.identity.clone());
                format!("present {} bytes", file.size)
            }
            other => side.plain(other),
        };
        let read = match provider
            .read_text(&path, 1 << 20, &cancel)
            .await
            .expect("not cancelled")
        {
            ReadOutcome::Loaded(loaded) => format!("loaded {:?}", loaded.text),
            other => side.plain(&other),
        };
        let kinds = provider
            .path_kinds(std::slice::from_ref(&path), &cancel)
            .await
            .expect("not cancelled");
        let marker = provider
            .marker(&path, &cancel)
            .await
            .expect("not cancelled");
        // The batched forms, with the path as a directory of candidates:
        // they take the providers' short paths (handles, stamps).
        let many = provider
            .probe_many(&path, &batch_names, &cancel)
            .await
            .expect("not cancelled");
        let dirs = provider
            .probe_dirs(std::slice::from_ref(&path), &batch_names, &cancel)
            .await
            .expect("not cancelled");
        per_path.push(format!(
            "{}: probe {probe_text}; read {read}; kind {}; marker {}; in it {}; as a chain {}",
            side.plain(&path),
            side.plain(&kinds),
            side.plain(&marker),
            classes(side, &many),
            classes(side, dirs.iter().flatten()),
        ));
    }
    let same_file = identities
        .iter()
        .enumerate()
        .flat_map(|(i, a)| identities[i + 1..].iter().map(move |b| a == b))
        .collect();
    let shown = opened.preview(&cancel).await.expect("not cancelled");
    let composition = format!(
        "root {} ({}); identity {}; text {}; notice {:?}; source {}",
        side.plain(&shown.root),
        side.plain(&shown.root_reason),
        shown.identity,
        side.plain(&shown.text),
        shown.notice,
        side.plain(&shown.source),
    );
    Answers {
        mount: Ok(roots),
        per_path,
        same_file,
        composition: Some(composition),
    }
}

fn run(case: &Case) -> (Answers, Answers) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let memory = Side::memory();
        let disk = Side::disk();
        (answers(case, &memory).await, answers(case, &disk).await)
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        // `PROPTEST_CASES` asks for a longer search.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CASES),
        // Shrinking materializes trees too; bound it.
        max_shrink_iters: 2048,
        ..ProptestConfig::default()
    })]

    #[test]
    fn memory_and_disk_providers_agree_on_links(case in case()) {
        let (memory, disk) = run(&case);
        prop_assert_eq!(&memory.mount, &disk.mount, "mount differs");
        // The one refusal a generated case may meet: a root that loops.
        if let Err(error) = &memory.mount {
            prop_assert!(error.contains("cannot open trusted root"), "{}", error);
        }
        prop_assert_eq!(memory.per_path.len(), disk.per_path.len());
        for (m, d) in memory.per_path.iter().zip(&disk.per_path) {
            prop_assert_eq!(m, d);
        }
        prop_assert_eq!(&memory.same_file, &disk.same_file, "identities differ");
        prop_assert_eq!(&memory.composition, &disk.composition, "composition differs");
    }
}

/// The generator reaches what the property is about: over a fixed sample
/// (memory side only), mounts that compose text, files read through links,
/// loops, links leaving the roots, dangling links, refused roots.
#[test]
fn the_generator_reaches_every_shape() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = case();
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for _ in 0..CASES {
        let case = strategy.new_tree(&mut runner).expect("a case").current();
        let answers = runtime.block_on(answers(&case, &Side::memory()));
        let linked_cwd = case.entries.iter().any(|(path, kind)| {
            matches!(kind, Kind::Link(_)) && case.cwd.starts_with(path.as_str())
        });
        let all = answers.per_path.join("\n");
        for (shape, hit) in [
            ("refused root", answers.mount.is_err()),
            (
                "composed text",
                answers
                    .composition
                    .as_ref()
                    .is_some_and(|c| !c.contains("text \"\"")),
            ),
            (
                "linked cwd composing",
                linked_cwd
                    && answers
                        .composition
                        .as_ref()
                        .is_some_and(|c| !c.contains("text \"\"")),
            ),
            ("loop", all.contains("Loop")),
            ("outside", all.contains("OutsideTrustedRoots")),
            ("present", all.contains("probe present")),
            ("dangling or absent", all.contains("probe Absent")),
            ("shared identity", answers.same_file.contains(&true)),
        ] {
            *seen.entry(shape).or_default() += u32::from(hit);
        }
    }
    eprintln!("shapes over {CASES} cases: {seen:?}");
    assert!(seen.values().all(|n| *n > 0), "{seen:?}");
}

/// The shape of Codex CLI's `agents_md_paths_preserve_symlinked_cwd`
/// (a cwd linked to another directory, no marker), pinned as one case.
#[test]
fn a_symlinked_cwd_composes_its_target_on_both() {
    let case = Case {
        entries: vec![
            ("target".into(), Kind::Dir),
            ("target/AGENTS.md".into(), Kind::File("alpha")),
            ("link".into(), Kind::Link(format!("{TOP}/target"))),
        ],
        cwd: "link".into(),
        dsh_home: "b".into(),
        extra_root: None,
        all_distinct: false,
        probes: Vec::new(),
    };
    let (memory, disk) = run(&case);
    assert_eq!(memory, disk);
    let text = memory
        .composition
        .unwrap_or_else(|| panic!("{:?}", memory.mount));
    assert!(text.contains("alpha"), "{text}");
}
