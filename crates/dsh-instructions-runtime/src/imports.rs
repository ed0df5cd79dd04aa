//! `@path` imports (SPEC §13): resolving the tokens the state crate finds,
//! reading their targets through the provider (bounded, cancellable, in
//! batches shared by every candidate of a gather pass), and assembling the
//! expanded section content (R-IMP-1 .. R-IMP-3). Nothing here runs when
//! `imports` is off.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeLabel, normalize_lexically};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider,
    provider::{FileIdentity, FileVersion, Probe, ReadOutcome, Unavailable},
};
use dsh_instructions_state::{
    Config,
    cache::ImportKey,
    config::ContentTransform,
    imports::{IMPORT_MAX_COUNT, ImportBlock, assemble_imports, import_tokens},
};

use crate::ancestors::ancestor_files;
use crate::maps::IdentityMap;

/// What happened to one `@path` token of an instruction file (R-IMP-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportFate {
    /// Its text follows the importing candidate's content.
    Expanded {
        /// Raw bytes of the imported file's own text.
        bytes: u64,
    },
    /// The same file is loaded as a candidate of the same baseline, so its
    /// block names it without content (R-IMP-3).
    OwnSection,
    /// Already expanded earlier in the same candidate: never the same text
    /// twice.
    AlreadyImported,
    /// The file is already on the import path (R-IMP-2).
    Cycle,
    /// Deeper than five levels below the candidate file (R-IMP-2).
    TooDeep,
    /// The candidate already holds 64 imports (R-IMP-2).
    OverCount,
    /// Expanding it would take the candidate's content over
    /// `max_source_bytes` (R-IMP-2).
    OverBytes,
    /// No regular file there: the token stays plain text (R-IMP-1).
    Missing,
    /// The target lies outside every trusted root (R-IMP-2, R-DISC-7).
    OutsideTrustedRoots,
    /// The target could not be read (permission, too large, I/O, …).
    Unavailable {
        /// Why.
        reason: Unavailable,
    },
}

impl ImportFate {
    /// Whether `check` fails because of it: an import that should expand
    /// and does not (R-IMP-5). A missing target is plain text, a cycle or a
    /// repeat is already present, an own section is loaded anyway.
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            Self::TooDeep
                | Self::OverCount
                | Self::OverBytes
                | Self::OutsideTrustedRoots
                | Self::Unavailable { .. }
        )
    }
}

/// One node of a candidate's import tree, in order of first appearance
/// (depth first), as `explain` shows it (R-IMP-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectedImport {
    /// 1 for a token of the candidate itself, 2 for a token of a file it
    /// imports, and so on.
    pub depth: usize,
    /// The path as written after the `@`.
    pub token: String,
    /// Display path of the target (R-IMP-3).
    pub path: String,
    /// Its fate.
    pub fate: ImportFate,
}

/// Where import tokens resolve and how their targets are shown.
#[derive(Debug, Clone)]
pub(crate) struct ImportContext {
    root: Utf8PathBuf,
    home: DshHome,
    /// The OS home for `~/` tokens (R-HOME-2), when known.
    os_home: Option<Utf8PathBuf>,
    /// The ancestor files above the root: read by name for their own
    /// sections only, never as an import target (docs/decisions/0044).
    refused: Vec<Utf8PathBuf>,
}

impl ImportContext {
    /// The context of a composition for `root`. The OS home is the parent
    /// of the default DSH home (`~/.dsh`, R-HOME-3 says the label is
    /// `Default` exactly then); under any other home it is unknown and `~/`
    /// tokens stay plain text (docs/decisions/0010).
    pub(crate) fn new(root: &Utf8Path, home: &DshHome) -> Self {
        let os_home = (home.label == HomeLabel::Default)
            .then(|| home.path.parent().map(Utf8Path::to_owned))
            .flatten();
        Self {
            root: root.to_owned(),
            home: home.clone(),
            os_home,
            refused: Vec::new(),
        }
    }

    /// This context refusing the ancestor files of `config` above its root
    /// as import targets: the provider admits them by name (names-only
    /// roots), but an import target must lie inside a trusted root
    /// (R-IMP-2), and those directories are none.
    pub(crate) fn refusing(mut self, config: &Config) -> Self {
        self.refused = ancestor_files(&self.root, config)
            .into_iter()
            .map(|f| f.path)
            .collect();
        self
    }

    /// Whether `abs` is one of the refused ancestor files.
    fn is_refused(&self, abs: &Utf8Path) -> bool {
        self.refused.iter().any(|p| p == abs)
    }

    /// The absolute target of `token` written in a file of `dir`
    /// (R-IMP-2): relative to that directory, `~/` against the OS home.
    fn resolve(&self, dir: &Utf8Path, token: &str) -> Option<Utf8PathBuf> {
        let joined = match token.strip_prefix("~/") {
            Some(rest) => self.os_home.as_ref()?.join(rest),
            None => dir.join(token),
        };
        Some(normalize_lexically(&joined))
    }

    /// Display path (R-IMP-3): project-relative under the root, the home
    /// label under the DSH home, else the token as written.
    fn display(&self, abs: &Utf8Path, token: &str) -> String {
        if let Ok(rel) = abs.strip_prefix(&self.root)
            && !rel.as_str().is_empty()
        {
            return rel.as_str().to_owned();
        }
        if let Ok(rel) = abs.strip_prefix(&self.home.path)
            && !rel.as_str().is_empty()
        {
            return format!("{}/{rel}", self.home.label);
        }
        token.to_owned()
    }
}

/// A candidate's content after expansion.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expansion {
    /// Own text plus the import blocks (R-IMP-3).
    pub content: String,
    /// The import tree (R-IMP-5).
    pub records: Vec<InspectedImport>,
    /// The targets the content depends on (R-IMP-4).
    pub key: Vec<ImportKey<FileVersion>>,
}

/// One candidate to expand: its directory, own text and identity.
pub(crate) struct Candidate<'a> {
    pub dir: &'a Utf8Path,
    pub text: &'a str,
    pub identity: &'a FileIdentity,
}

/// Import targets read so far, by normalized path. Keyed by the path's
/// text: `Path` hashes and compares component by component, several times
/// slower.
pub(crate) type ImportReads = HashMap<String, ReadOutcome>;

/// Expands every candidate of a pass. Targets are read level by level, in
/// one provider call per level for all candidates together, each read
/// bounded by `max_source_bytes` (R-IMP-2, R-DISC-6); only those `targets`
/// lacks are read, and what is read is kept there, for a pass that expands
/// its candidates in several calls. `own` holds the identities of the
/// files loaded as candidates of the same baseline.
///
/// It takes the pass's provider, configuration and token, not the pass
/// itself, so this module needs nothing from the per-directory scan that
/// calls it.
pub(crate) async fn expand_all(
    provider: &dyn FsProvider,
    config: &Config,
    cancel: &CancellationToken,
    ctx: &ImportContext,
    own: &IdentityMap<Arc<str>>,
    items: &[Candidate<'_>],
    targets: &mut ImportReads,
) -> Result<Vec<Expansion>, Cancelled> {
    let max = config.max_source_bytes();
    let max_depth = usize::try_from(config.max_import_depth()).unwrap_or(usize::MAX);
    let transform = config.content_transform();
    loop {
        let mut needed = Vec::new();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let mut walk = Walk::new(ctx, own, targets, max, max_depth, item);
            walk.visit(item.dir, item.text, 0);
            needed.append(&mut walk.needed);
            out.push(walk.finish(item.text));
        }
        if needed.is_empty() {
            return Ok(out);
        }
        needed.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        needed.dedup();
        let mut outcomes = provider.read_many(&needed, max, cancel).await?.into_iter();
        for path in needed {
            // A provider that returned too few outcomes read nothing for
            // the rest: unavailable, never "missing".
            let mut outcome = outcomes.next().unwrap_or_else(|| {
                ReadOutcome::Unavailable(Unavailable::Io("no read result".into()))
            });
            // An imported file is shown as the agent shows it (R-HOOK-4).
            if let ReadOutcome::Loaded(t) = &mut outcome
                && transform != ContentTransform::None
            {
                t.text = transform.apply(&t.text).into_owned();
            }
            targets.insert(path.into_string(), outcome);
        }
    }
}

/// Whether every import target of a cached entry still probes as recorded
/// (the version-cache fast path per target, R-IMP-4).
pub(crate) fn key_holds(
    key: &[ImportKey<FileVersion>],
    probes: &HashMap<&str, &Probe>,
    own: &IdentityMap<Arc<str>>,
) -> bool {
    key.iter().all(|k| match probes.get(k.path.as_str()) {
        Some(Probe::Present(p)) => {
            k.version == Some(p.version) && own.contains_key(&p.identity) == k.own_section
        }
        Some(Probe::Absent | Probe::Unavailable(_)) => k.version.is_none(),
        None => false,
    })
}

/// One depth-first expansion of one candidate over the targets read so far;
/// targets not read yet are collected in `needed`.
struct Walk<'a> {
    ctx: &'a ImportContext,
    own: &'a IdentityMap<Arc<str>>,
    targets: &'a HashMap<String, ReadOutcome>,
    max_bytes: u64,
    /// Identities of the files on the current import path, candidate first.
    stack: Vec<&'a FileIdentity>,
    expanded: HashSet<&'a FileIdentity>,
    bytes: u64,
    /// Depth limit below the candidate (`max_import_depth`, R-IMP-2).
    max_depth: usize,
    blocks: Vec<(String, Option<&'a str>)>,
    records: Vec<InspectedImport>,
    key: Vec<ImportKey<FileVersion>>,
    keyed: HashSet<String>,
    needed: Vec<Utf8PathBuf>,
}

impl<'a> Walk<'a> {
    fn new(
        ctx: &'a ImportContext,
        own: &'a IdentityMap<Arc<str>>,
        targets: &'a HashMap<String, ReadOutcome>,
        max_bytes: u64,
        max_depth: usize,
        item: &Candidate<'a>,
    ) -> Self {
        Self {
            ctx,
            own,
            targets,
            max_bytes,
            max_depth,
            stack: vec![item.identity],
            expanded: HashSet::new(),
            bytes: item.text.len() as u64,
            blocks: Vec::new(),
            records: Vec::new(),
            key: Vec::new(),
            keyed: HashSet::new(),
            needed: Vec::new(),
        }
    }

    fn visit(&mut self, dir: &Utf8Path, text: &str, depth: usize) {
        let depth = depth + 1;
        for token in import_tokens(text) {
            let Some(abs) = self.ctx.resolve(dir, &token.path) else {
                continue;
            };
            let display = self.ctx.display(&abs, &token.path);
            if self.ctx.is_refused(&abs) {
                // Never asked of the provider: it would admit the name.
                self.record(depth, token.path, display, ImportFate::OutsideTrustedRoots);
                continue;
            }
            if self.blocks.len() >= IMPORT_MAX_COUNT {
                // Nothing more can expand; do not read what cannot be used.
                self.record(depth, token.path, display, ImportFate::OverCount);
                continue;
            }
            let targets = self.targets;
            let Some(outcome) = targets.get(abs.as_str()) else {
                self.needed.push(abs);
                continue;
            };
            let fate = self.fate(outcome, depth, &display);
            if depth <= self.max_depth && !self.keyed.contains(abs.as_str()) {
                self.keyed.insert(abs.as_str().to_owned());
                self.key.push(ImportKey {
                    path: abs.to_string(),
                    version: match outcome {
                        ReadOutcome::Loaded(t) => Some(t.version),
                        _ => None,
                    },
                    own_section: fate == ImportFate::OwnSection,
                });
            }
            let expand = matches!(fate, ImportFate::Expanded { .. });
            let own = fate == ImportFate::OwnSection;
            self.record(depth, token.path, display.clone(), fate);
            match outcome {
                ReadOutcome::Loaded(t) if expand => {
                    self.blocks.push((display, Some(t.text.as_str())));
                    self.stack.push(&t.identity);
                    let parent = abs.parent().unwrap_or(Utf8Path::new("/")).to_owned();
                    self.visit(&parent, &t.text, depth);
                    self.stack.pop();
                }
                _ if own => self.blocks.push((display, None)),
                _ => {}
            }
        }
    }

    /// The fate of a target that was read; charges the expanded ones.
    fn fate(&mut self, outcome: &'a ReadOutcome, depth: usize, display: &str) -> ImportFate {
        let t = match outcome {
            ReadOutcome::Loaded(t) => t,
            ReadOutcome::Absent => return ImportFate::Missing,
            ReadOutcome::Unavailable(Unavailable::OutsideTrustedRoots) => {
                return ImportFate::OutsideTrustedRoots;
            }
            ReadOutcome::Unavailable(reason) => {
                return ImportFate::Unavailable {
                    reason: reason.clone(),
                };
            }
        };
        if depth > self.max_depth {
            return ImportFate::TooDeep;
        }
        if self.stack.contains(&&t.identity) {
            return ImportFate::Cycle;
        }
        if !self.expanded.insert(&t.identity) {
            return ImportFate::AlreadyImported;
        }
        let own = self.own.contains_key(&t.identity);
        let block = ImportBlock {
            display,
            content: (!own).then_some(t.text.as_str()),
        };
        let grown = self.bytes + block.len() as u64;
        if grown > self.max_bytes {
            self.expanded.remove(&t.identity);
            return ImportFate::OverBytes;
        }
        self.bytes = grown;
        if own {
            ImportFate::OwnSection
        } else {
            ImportFate::Expanded {
                bytes: t.text.len() as u64,
            }
        }
    }

    fn record(&mut self, depth: usize, token: String, path: String, fate: ImportFate) {
        self.records.push(InspectedImport {
            depth,
            token,
            path,
            fate,
        });
    }

    fn finish(self, own_text: &str) -> Expansion {
        if !self.needed.is_empty() {
            return Expansion::default();
        }
        let blocks: Vec<ImportBlock<'_>> = self
            .blocks
            .iter()
            .map(|(display, content)| ImportBlock {
                display,
                content: *content,
            })
            .collect();
        Expansion {
            content: assemble_imports(own_text, &blocks),
            records: self.records,
            key: self.key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn ctx(label: HomeLabel) -> ImportContext {
        let home = DshHome {
            path: match label {
                HomeLabel::Default => "/home/u/.dsh".into(),
                HomeLabel::EnvVar => "/opt/dsh".into(),
            },
            label,
        };
        ImportContext::new(Utf8Path::new("/repo"), &home)
    }

    // R-IMP-2: relative to the importing file's directory, `~/` against the
    // OS home.
    #[rstest]
    #[case::name("/repo/a", "x.md", Some("/repo/a/x.md"))]
    #[case::dot("/repo/a", "./x.md", Some("/repo/a/x.md"))]
    #[case::up("/repo/a", "../x.md", Some("/repo/x.md"))]
    #[case::above_root("/repo", "../../etc/x", Some("/etc/x"))]
    #[case::home("/repo/a", "~/notes.md", Some("/home/u/notes.md"))]
    fn resolves(#[case] dir: &str, #[case] token: &str, #[case] want: Option<&str>) {
        let got = ctx(HomeLabel::Default).resolve(Utf8Path::new(dir), token);
        assert_eq!(got.as_deref().map(Utf8Path::as_str), want);
    }

    #[rstest]
    fn tilde_is_unresolved_when_the_os_home_is_unknown() {
        let c = ctx(HomeLabel::EnvVar);
        assert_eq!(c.resolve(Utf8Path::new("/repo"), "~/x.md"), None);
        assert!(c.resolve(Utf8Path::new("/repo"), "x.md").is_some());
    }

    // R-IMP-3: project-relative, then the home label, else as written.
    #[rstest]
    #[case::project(HomeLabel::Default, "/repo/docs/a.md", "docs/a.md", "docs/a.md")]
    #[case::home_default(HomeLabel::Default, "/home/u/.dsh/r.md", "~/.dsh/r.md", "~/.dsh/r.md")]
    #[case::home_env(
        HomeLabel::EnvVar,
        "/opt/dsh/r.md",
        "../../opt/dsh/r.md",
        "$DSH_HOME/r.md"
    )]
    #[case::elsewhere(HomeLabel::Default, "/srv/x.md", "../srv/x.md", "../srv/x.md")]
    fn displays(
        #[case] label: HomeLabel,
        #[case] abs: &str,
        #[case] token: &str,
        #[case] want: &str,
    ) {
        assert_eq!(ctx(label).display(Utf8Path::new(abs), token), want);
    }

    /// Expands `/repo/CLAUDE.md` of an in-memory tree with imports on.
    async fn expand_one(files: &[(&str, &str)], max_source_bytes: u64) -> Expansion {
        use dsh_instructions_discovery::memory::{MemNode, MemoryProvider};
        let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
        for (path, text) in files {
            fs.insert((*path).into(), MemNode::file(*text));
        }
        let config: dsh_instructions_state::ConfigInput = serde_json::from_value(
            serde_json::json!({"max_bytes": 65_536, "imports": true, "max_source_bytes": max_source_bytes}),
        )
        .expect("config input");
        let config = config.resolve().expect("valid").config;
        let cancel = CancellationToken::new();
        let c = ctx(HomeLabel::Default);
        let text = files[0].1;
        let identity = FileIdentity::Path("/repo/CLAUDE.md".into());
        let item = Candidate {
            dir: Utf8Path::new("/repo"),
            text,
            identity: &identity,
        };
        expand(&fs, &config, &cancel, &c, item).await
    }

    /// One candidate's expansion, with no own sections and nothing read
    /// before.
    async fn expand(
        fs: &dyn FsProvider,
        config: &Config,
        cancel: &CancellationToken,
        c: &ImportContext,
        item: Candidate<'_>,
    ) -> Expansion {
        let own = IdentityMap::default();
        let mut reads = ImportReads::new();
        let mut out = expand_all(fs, config, cancel, c, &own, &[item], &mut reads)
            .await
            .expect("not cancelled");
        out.remove(0)
    }

    fn fates(e: &Expansion) -> Vec<(usize, &str, &ImportFate)> {
        e.records
            .iter()
            .map(|r| (r.depth, r.path.as_str(), &r.fate))
            .collect()
    }

    /// Decision 0044: the provider admits an ancestor file by name, but an
    /// import never reaches it — admitted by name is not trusted (R-IMP-2).
    #[tokio::test]
    async fn an_import_of_an_ancestor_file_is_outside_the_trusted_roots() {
        use dsh_instructions_discovery::memory::{MemNode, MemoryProvider};
        let names = ["CLAUDE.md".to_owned()];
        let fs =
            MemoryProvider::new(vec!["/repo".into()]).with_names_only(vec!["/".into()], &names);
        fs.insert("/CLAUDE.md".into(), MemNode::file("above"));
        let text = "@../CLAUDE.md";
        let mut config = Config::preset(dsh_instructions_state::Preset::Claude);
        let identity = FileIdentity::Path("/repo/CLAUDE.md".into());
        let item = || Candidate {
            dir: Utf8Path::new("/repo"),
            text,
            identity: &identity,
        };
        let cancel = CancellationToken::new();
        let run = |c: ImportContext, config: Config| {
            let fs = fs.clone();
            let item = item();
            let cancel = cancel.clone();
            async move { expand(&fs, &config, &cancel, &c, item).await }
        };
        let refused = run(ctx(HomeLabel::Default).refusing(&config), config.clone()).await;
        assert_eq!(
            fates(&refused),
            [(1, "../CLAUDE.md", &ImportFate::OutsideTrustedRoots)]
        );
        assert_eq!(refused.content, text);
        assert!(refused.key.is_empty(), "never asked of the provider");
        // The refusal is what stops it: without the field the same provider
        // would hand the file over.
        config = Config::preset(dsh_instructions_state::Preset::Gemini);
        let open = run(ctx(HomeLabel::Default).refusing(&config), config).await;
        assert_eq!(
            fates(&open),
            [(1, "../CLAUDE.md", &ImportFate::Expanded { bytes: 5 })]
        );
    }

    #[tokio::test]
    async fn a_diamond_expands_the_shared_file_once() {
        // R-IMP-3: never the same text twice.
        let e = expand_one(
            &[
                ("/repo/CLAUDE.md", "@a.md @b.md"),
                ("/repo/a.md", "A @d.md"),
                ("/repo/b.md", "B @d.md"),
                ("/repo/d.md", "D"),
            ],
            1 << 20,
        )
        .await;
        assert_eq!(
            e.content,
            "@a.md @b.md\n\nImported from: a.md\n\nA @d.md\n\nImported from: d.md\n\nD\n\nImported from: b.md\n\nB @d.md"
        );
        assert_eq!(
            fates(&e),
            [
                (1, "a.md", &ImportFate::Expanded { bytes: 7 }),
                (2, "d.md", &ImportFate::Expanded { bytes: 1 }),
                (1, "b.md", &ImportFate::Expanded { bytes: 7 }),
                (2, "d.md", &ImportFate::AlreadyImported),
            ]
        );
        // Every resolved target once in the key, in first-seen order.
        let key: Vec<&str> = e.key.iter().map(|k| k.path.as_str()).collect();
        assert_eq!(key, ["/repo/a.md", "/repo/d.md", "/repo/b.md"]);
    }

    #[tokio::test]
    async fn a_smaller_import_after_one_over_the_byte_cap_still_expands() {
        // R-IMP-2: the import that crosses max_source_bytes is skipped, not
        // everything after it.
        let big = "x".repeat(80);
        let e = expand_one(
            &[
                ("/repo/CLAUDE.md", "@big.md @s.md @gone.md"),
                ("/repo/big.md", &big),
                ("/repo/s.md", "S"),
            ],
            100,
        )
        .await;
        assert_eq!(
            fates(&e),
            [
                (1, "big.md", &ImportFate::OverBytes),
                (1, "s.md", &ImportFate::Expanded { bytes: 1 }),
                (1, "gone.md", &ImportFate::Missing),
            ]
        );
        assert!(e.content.len() <= 100);
        // The missing target is keyed without a version: its creation is a change.
        assert_eq!(e.key.last().map(|k| k.version), Some(None));
    }

    #[rstest]
    fn a_key_holds_only_while_every_target_probes_as_recorded() {
        // R-IMP-4
        use dsh_instructions_discovery::provider::PresentFile;
        let v = FileVersion::new([1, 0, 0, 0]);
        let id = FileIdentity::Inode { dev: 1, ino: 2 };
        let present = |version| {
            Probe::Present(PresentFile {
                size: 1,
                version,
                identity: id.clone(),
            })
        };
        let key = vec![
            ImportKey {
                path: "/r/a.md".to_owned(),
                version: Some(v),
                own_section: false,
            },
            ImportKey {
                path: "/r/none.md".to_owned(),
                version: None,
                own_section: false,
            },
        ];
        let (same, moved, absent) = (
            present(v),
            present(FileVersion::new([2, 0, 0, 0])),
            Probe::Absent,
        );
        let none = IdentityMap::default();
        let mut own_now = IdentityMap::default();
        own_now.insert(id.clone(), Arc::from("a.md"));
        // The probes of a.md and none.md, the own sections, whether the key
        // holds, and why.
        let cases = [
            (&same, &absent, &none, true, "as recorded"),
            (&moved, &absent, &none, false, "a.md changed"),
            (&same, &same, &none, false, "created"),
            (&absent, &absent, &none, false, "removed"),
            (
                &same,
                &absent,
                &own_now,
                false,
                "became a candidate of the baseline",
            ),
        ];
        for (a, b, own, holds, why) in cases {
            let probes = HashMap::from([("/r/a.md", a), ("/r/none.md", b)]);
            assert_eq!(key_holds(&key, &probes, own), holds, "{why}");
        }
        assert!(!key_holds(&key, &HashMap::new(), &none), "not probed");
    }

    #[rstest]
    #[case::expanded(ImportFate::Expanded { bytes: 1 }, false)]
    #[case::own(ImportFate::OwnSection, false)]
    #[case::repeat(ImportFate::AlreadyImported, false)]
    #[case::cycle(ImportFate::Cycle, false)]
    #[case::missing(ImportFate::Missing, false)]
    #[case::deep(ImportFate::TooDeep, true)]
    #[case::count(ImportFate::OverCount, true)]
    #[case::bytes(ImportFate::OverBytes, true)]
    #[case::outside(ImportFate::OutsideTrustedRoots, true)]
    #[case::unreadable(ImportFate::Unavailable { reason: Unavailable::PermissionDenied }, true)]
    fn check_fails_on_imports_that_should_expand_and_do_not(
        #[case] fate: ImportFate,
        #[case] problem: bool,
    ) {
        // R-IMP-5
        assert_eq!(fate.is_problem(), problem);
    }
}
