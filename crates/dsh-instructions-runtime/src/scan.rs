//! One directory's share of a gather pass: from its probes to slot winners,
//! identity and content dedup, and the reads that are needed (R-DISC-3 ..
//! R-DISC-6), plus the read-only [`Gather`] context a pass carries. Which
//! directories a pass covers, and in how many provider calls, is
//! [`crate::gather`]'s job. Nothing is mutated here, so a cancellation
//! anywhere leaves no trace (R-DISC-8).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider,
    provider::{FileIdentity, FileVersion, PresentFile, Probe, ReadOutcome, Unavailable},
};
use dsh_instructions_state::{
    Config, Digest, ScopeKey,
    cache::{CacheEntry, ImportKey, VersionCache},
    config::ContentTransform,
    scope::SLOT_CLAUDE_DIR,
    transition::{ProbeClass, SlotOutcome},
    visible::VisibleState,
};

use crate::ancestors::ancestor_files;
use crate::dir_path::DirPath;
use crate::imports::{self, Candidate, ImportContext, ImportReads, InspectedImport};
use crate::maps::IdentityMap;
use crate::slots::{Gate, Layout};
use crate::user_file::UserFile;

/// One candidate file name probed in a directory.
#[derive(Debug, Clone)]
pub(crate) struct CandidateProbe {
    pub name: String,
    /// Whether the name comes from the local (overlay) list.
    pub local: bool,
    pub probe: Probe,
}

/// A slot's winner whose content is known (read now, or vouched for by the
/// version cache).
#[derive(Debug, Clone)]
pub(crate) struct LoadedFile {
    /// Display path (project-relative, or the home label for the user file),
    /// shared by the slot, the pass's identity map and its duplicates.
    pub display: Arc<str>,
    /// Content, `None` when the version cache made the read unnecessary.
    pub text: Option<Arc<str>>,
    pub digest: Digest,
    pub trimmed: Digest,
    pub version: FileVersion,
    /// Raw bytes of the file, as read or as reported by the cache's probe;
    /// with imports expanded, the bytes of the expanded content.
    pub bytes: u64,
    /// The import tree when the file was read with imports on (R-IMP-5).
    pub imports: Vec<InspectedImport>,
    /// The import targets its digest depends on (R-IMP-4).
    pub import_key: Vec<ImportKey<FileVersion>>,
    /// [`Digest::of_trimmed`] of the file's own text when imports made its
    /// content differ from it (a sibling that mirrors the file compares
    /// against this, R-CLI-6); `None` when `trimmed` is already that.
    pub own_trimmed: Option<Digest>,
    /// For a path-scoped rule (R-RULE-5): its globs as the section names
    /// them (each in backticks, joined by `, `); `text` then starts with
    /// the rule's line and a blank line. `None` for every other file.
    pub rule_globs: Option<Arc<str>>,
}

impl LoadedFile {
    /// A file whose content the version cache vouches for (R-STATE-8): its
    /// digests from `entry`, its version and size from the probe, no text.
    pub(crate) fn vouched(
        display: Arc<str>,
        entry: &CacheEntry<FileVersion>,
        present: &PresentFile,
    ) -> Self {
        Self {
            display,
            text: None,
            digest: entry.digest,
            trimmed: entry.trimmed_digest,
            version: present.version,
            bytes: present.size,
            imports: Vec::new(),
            import_key: Vec::new(),
            own_trimmed: None,
            rule_globs: None,
        }
    }
}

/// A slot's present winner, probed but not (yet) read.
#[derive(Debug, Clone)]
pub(crate) struct ProbedFile {
    pub name: String,
    pub display: Arc<str>,
    pub present: PresentFile,
}

/// What a slot holds after gathering.
#[derive(Debug, Clone)]
pub(crate) enum SlotState {
    Loaded(LoadedFile),
    /// Present, not read: a broad file a budgeted baseline leaves out without
    /// reading it (or, transiently, a winner waiting for its read).
    Unread(ProbedFile),
    /// The same file (by identity) or the same trimmed content as an earlier
    /// kept file: not rendered (R-DISC-3, R-CFG-7).
    Duplicate {
        /// Trimmed digest when the file was read.
        trimmed: Option<Digest>,
        of: Arc<str>,
        /// Set for an identity duplicate (the same file as `of`).
        identity: Option<FileIdentity>,
    },
    Absent,
    Unavailable(Unavailable),
}

#[derive(Debug, Clone)]
pub(crate) struct SlotScan {
    pub scope: ScopeKey,
    pub state: SlotState,
}

/// Everything gathered for one directory (or for the user-global file).
#[derive(Debug, Clone)]
pub(crate) struct DirScan {
    /// The directory (for the user-global file: the home directory) and,
    /// for a project directory, its key ([`DirScan::rel`]).
    pub path: DirPath,
    /// Every probed candidate, for a pass that reports them
    /// ([`Gather::report`]); empty otherwise.
    pub candidates: Vec<CandidateProbe>,
    pub slots: Vec<SlotScan>,
    /// For the user's rules pseudo-directory (`abs` is `~/.claude/rules`):
    /// the project root its path-scoped globs are relative to (R-RULE-8).
    /// `None` for every other scan.
    pub rules_base: Option<Utf8PathBuf>,
    /// Every configured format's rules directory here was seen missing by
    /// the probe call ([`crate::gather::DirProbes`]): nothing to list.
    pub rules_missing: bool,
}

impl DirScan {
    /// The root-relative key; `None` for the user scopes' pseudo-directories.
    pub(crate) fn rel(&self) -> Option<&str> {
        self.path.rel()
    }

    /// The absolute directory.
    pub(crate) fn abs(&self) -> &Utf8Path {
        self.path.abs()
    }

    /// Raw content bytes of the files this directory renders.
    pub(crate) fn kept_bytes(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| match &s.state {
                SlotState::Loaded(f) => f.bytes,
                _ => 0,
            })
            .sum()
    }
}

/// What decides whether a path-scoped rule loads in this composition.
pub(crate) struct Attach<'a> {
    /// The model's visible state: a rule whose `set` is visible is attached.
    pub visible: &'a VisibleState,
    /// Rules attached by a message not yet entered (a touch projection's
    /// pending `set`s), which a new composition must keep (R-RT-6).
    pub pending: &'a BTreeSet<ScopeKey>,
    /// Absolute paths this composition touches (R-RT-3).
    pub touched: &'a [Utf8PathBuf],
    /// The instance's memo of rule front matter by file version
    /// (`None`: every rule is read, as in `inspect`).
    pub facts: Option<&'a crate::rule_facts::RuleFacts>,
}

/// Read-only context of one gather pass.
pub(crate) struct Gather<'a> {
    pub provider: &'a dyn FsProvider,
    pub config: &'a Config,
    pub cancel: &'a CancellationToken,
    /// Used, with [`Gather::visible`], to skip reads whose result is
    /// already visible (R-STATE-8); `None`: every winner is read.
    pub cache: Option<&'a VersionCache<FileVersion>>,
    /// What the model sees (`None`: nothing, as in a preview). A slot found
    /// absent is kept in its scan only where something is visible at its
    /// scope: there it is a removal, anywhere else it changes nothing, and
    /// its key was a deep chain's largest cost (issue 35 item 3).
    pub visible: Option<&'a VisibleState>,
    /// The pass reports every candidate of its directories (`inspect`):
    /// scans keep their [`DirScan::candidates`]; every other pass leaves
    /// them empty.
    pub report: bool,
    /// `Some` when `@path` imports are expanded (R-CFG-10); `None` keeps
    /// every read exactly as without imports.
    pub imports: Option<&'a ImportContext>,
    /// The probed names and their slots ([`Layout::new`] of `config`).
    pub layout: &'a Layout,
    /// The fallback list's path-wide gate for this pass ([`Gate::Open`]
    /// unless `fallback_scope: path`).
    pub gate: Gate,
    /// The agent user-level files, rendered after the user-global file.
    pub user_files: &'a [UserFile],
    /// `Some` when this pass loads rules as slots of their directories
    /// (R-RULE-4; compositions with `rule_formats` non-empty), with what
    /// attaches a path-scoped rule.
    pub rules: Option<&'a Attach<'a>>,
}

/// Scope keys of one directory's slots, rewritten in place for every
/// directory [`Gather::settled`] looks at (one buffer per slot per pass,
/// not two allocations per directory).
#[derive(Debug, Default)]
pub(crate) struct SlotKeys(pub(crate) Vec<ScopeKey>);

impl SlotKeys {
    /// At least `n` keys to rewrite.
    pub(crate) fn fit(&mut self, n: usize) {
        while self.0.len() < n {
            self.0.push(ScopeKey::user_global());
        }
    }
}

/// Identity dedup across one pass: first (broadest) display path per file,
/// and the files whose read failed at that broadest position.
#[derive(Debug, Default)]
pub(crate) struct SeenFiles {
    pub(crate) first: IdentityMap<Arc<str>>,
    failed: IdentityMap<Unavailable>,
    /// Winners of the user-global file and the root-to-cwd chain: an
    /// import of one of them is `(loaded as its own section)` (R-IMP-3).
    own: IdentityMap<Arc<str>>,
    /// Import targets read in this pass, by path: a pass that reads its
    /// candidates in several batches (under a budget) reads a target the
    /// batches share once.
    imported: ImportReads,
}

impl SeenFiles {
    /// Room for `n` files first seen in a pass.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            first: IdentityMap::with_capacity_and_hasher(n, Default::default()),
            ..Self::default()
        }
    }

    /// The own sections of this pass (R-IMP-3), for the rules' imports.
    pub(crate) fn own(&self) -> &IdentityMap<Arc<str>> {
        &self.own
    }

    /// Records the present slot winners of a baseline scan (the
    /// user-global file or a chain directory) as own sections (R-IMP-3).
    /// Only called with imports on.
    pub(crate) fn note_own(&mut self, scan: &DirScan) {
        for slot in &scan.slots {
            if let SlotState::Unread(f) = &slot.state {
                self.own
                    .insert(f.present.identity.clone(), f.display.clone());
            }
        }
    }

    /// Undoes the failure recorded by a read that is being put back.
    pub(crate) fn forget_failure(&mut self, identity: &FileIdentity) {
        self.failed.remove(identity);
    }

    /// An identity duplicate of a file that could not be read is loaded
    /// nowhere, so it is not a duplicate: it is as unavailable as the file
    /// (R-DISC-5; never a removal). Call after every read of the pass.
    pub(crate) fn demote_failed_duplicates(&self, scans: &mut [DirScan]) {
        if self.failed.is_empty() {
            return;
        }
        for slot in scans.iter_mut().flat_map(|s| s.slots.iter_mut()) {
            if let SlotState::Duplicate {
                identity: Some(id), ..
            } = &slot.state
                && let Some(reason) = self.failed.get(id)
            {
                slot.state = SlotState::Unavailable(reason.clone());
            }
        }
    }
}

pub(crate) fn class(probe: &Probe) -> ProbeClass {
    match probe {
        Probe::Present(_) => ProbeClass::Present,
        Probe::Absent => ProbeClass::Absent,
        Probe::Unavailable(_) => ProbeClass::Unavailable,
    }
}

fn unavailable_reason(probes: &[Probe]) -> Unavailable {
    probes
        .iter()
        .find_map(|p| match p {
            Probe::Unavailable(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap_or_else(|| Unavailable::Io("unavailable".into()))
}

/// The scan of one user scope's file (no directory of its own to list).
fn user_scan(file: &Utf8Path, label: &str, scope: ScopeKey, probe: Probe) -> DirScan {
    let candidate = CandidateProbe {
        name: file.file_name().unwrap_or("AGENTS.md").to_owned(),
        local: false,
        probe,
    };
    let state = probed(&candidate.name, &candidate.probe, Arc::from(label));
    DirScan {
        path: DirPath::outside(file.parent().map(Utf8Path::to_owned).unwrap_or_default()),
        candidates: vec![candidate],
        slots: vec![SlotScan { scope, state }],
        rules_base: None,
        rules_missing: false,
    }
}

fn probed(name: &str, probe: &Probe, display: Arc<str>) -> SlotState {
    match probe {
        Probe::Present(present) => SlotState::Unread(ProbedFile {
            name: name.to_owned(),
            display,
            present: present.clone(),
        }),
        Probe::Absent => SlotState::Absent,
        Probe::Unavailable(u) => {
            // R-RT-9: filesystem errors are diagnostics, never failures.
            let candidate: &str = &display;
            tracing::debug!(candidate, reason = %u, "instruction file unavailable");
            SlotState::Unavailable(u.clone())
        }
    }
}

impl Gather<'_> {
    /// Probes the agent user-level files, one scan each, in configured
    /// order (one provider call for all).
    pub(crate) async fn user_files(&self) -> Result<Vec<DirScan>, Cancelled> {
        let files: Vec<(&UserFile, ScopeKey)> = self
            .user_files
            .iter()
            .filter_map(|f| ScopeKey::user_file(&f.label).map(|k| (f, k)))
            .collect();
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let paths: Vec<Utf8PathBuf> = files.iter().map(|(f, _)| f.path.clone()).collect();
        let probes = self.provider.probe_paths(&paths, self.cancel).await?;
        Ok(files
            .into_iter()
            .zip(probes)
            .map(|((f, scope), probe)| user_scan(&f.path, &f.label, scope, probe))
            .collect())
    }

    /// Probes the ancestor files above `root` (`ancestor_instruction_files`,
    /// R-HOOK-8), one scan each, in section order (one provider call for
    /// all; none without the field). Their display path is absolute, as
    /// Claude Code shows them.
    pub(crate) async fn ancestors(&self, root: &Utf8Path) -> Result<Vec<DirScan>, Cancelled> {
        let files = ancestor_files(root, self.config);
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let paths: Vec<Utf8PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        let probes = self.provider.probe_paths(&paths, self.cancel).await?;
        Ok(files
            .into_iter()
            .zip(probes)
            .map(|(f, probe)| user_scan(&f.path, f.path.as_str(), f.scope, probe))
            .collect())
    }

    /// Probes a user scope's file: the user-global file `<home>/AGENTS.md`
    /// (R-HOME-4) or an agent user-level file.
    pub(crate) async fn user_global(
        &self,
        file: &Utf8Path,
        label: &str,
        scope: ScopeKey,
    ) -> Result<DirScan, Cancelled> {
        let probe = self.provider.probe(file, self.cancel).await?;
        Ok(user_scan(file, label, scope, probe))
    }

    /// Every probed name in [`Layout`] order: base list, the
    /// `.claude/CLAUDE.md` rule, fallback list, local list.
    pub(crate) fn names(&self) -> Vec<String> {
        self.layout.names.clone()
    }

    /// Slot winners of one project directory from its candidate probes (in
    /// [`Gather::names`] order), per the policy, the rule file and the
    /// fallback (R-CFG-7, R-DISC-5, R-HOOK-4). Winners stay unread; see
    /// [`Gather::read`]. Slots for which `skip` holds (left out by the
    /// budget of the instance's render, R-RT-10) are not reported.
    pub(crate) fn slots(
        &self,
        path: DirPath,
        names: &[String],
        probes: Vec<Probe>,
        skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    ) -> DirScan {
        // A provider that answered too few probes answered nothing for the
        // rest: only the names with a probe take part.
        let classes: Vec<ProbeClass> = probes.iter().take(names.len()).map(class).collect();
        let probes = &probes[..classes.len()];
        let rel = path.rel().unwrap_or(".");
        let mut slots = Vec::with_capacity(self.layout.slots.len());
        for (slot, rule) in &self.layout.slots {
            let scope = ScopeKey::project(rel, slot);
            if skip(&scope) || rule.end() > classes.len() {
                continue;
            }
            let state = match rule.select(&classes, self.gate) {
                SlotOutcome::Winner { candidate } => {
                    let name = &names[candidate];
                    probed(name, &probes[candidate], display(rel, name))
                }
                SlotOutcome::Absent if !self.shows(&scope) => continue,
                SlotOutcome::Absent => SlotState::Absent,
                SlotOutcome::Unavailable => SlotState::Unavailable(unavailable_reason(probes)),
            };
            slots.push(SlotScan { scope, state });
        }
        // Most directories keep fewer slots than the layout has (absent
        // ones are left out, see `Gather::visible`), and a scan lives as
        // long as the pass (issue 35 item 3).
        slots.shrink_to_fit();
        // Only a pass that reports every candidate (`inspect`) keeps them:
        // a deep chain's other passes would hold them for nothing.
        let candidates = if self.report {
            names
                .iter()
                .zip(probes)
                .enumerate()
                .map(|(i, (name, probe))| CandidateProbe {
                    name: name.clone(),
                    local: self.layout.is_local(i),
                    probe: probe.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        DirScan {
            path,
            candidates,
            slots,
            rules_base: None,
            rules_missing: false,
        }
    }

    /// The version cache and what the model sees, when this pass skips
    /// the reads they vouch for (R-STATE-8).
    pub(crate) fn vouching(&self) -> Option<(&VersionCache<FileVersion>, &VisibleState)> {
        Some((self.cache?, self.visible?))
    }

    /// Whether the model sees anything at `scope` (see [`Gather::visible`]).
    pub(crate) fn shows(&self, scope: &ScopeKey) -> bool {
        self.visible.is_some_and(|v| v.get(scope).is_some())
    }

    /// Reads every unread winner of `scans[i]`, `i` in `which` (or takes
    /// its digests from the version cache when version and visible state
    /// both match, R-STATE-8), then drops per-directory content duplicates
    /// (R-CFG-7).
    /// Every file that needs I/O is read in one provider call (one blocking
    /// task on disk).
    pub(crate) async fn read_scans(
        &self,
        scans: &mut [DirScan],
        which: &[usize],
        seen: &mut SeenFiles,
    ) -> Result<(), Cancelled> {
        let mut waiting: Vec<(usize, usize)> = Vec::new();
        let mut paths: Vec<Utf8PathBuf> = Vec::new();
        // Vouched for by the cache but with import targets to re-probe.
        let mut checks: Vec<((usize, usize), CacheEntry<FileVersion>)> = Vec::new();
        for &si in which {
            let scan = &mut scans[si];
            let dir = scan.path.abs();
            for (i, slot) in scan.slots.iter_mut().enumerate() {
                let SlotState::Unread(file) = &slot.state else {
                    continue;
                };
                match self.without_read(&slot.scope, file) {
                    Vouch::Known(state) => slot.state = state,
                    Vouch::Check(entry) => checks.push(((si, i), entry)),
                    Vouch::Read => {
                        waiting.push((si, i));
                        paths.push(file_path(dir, &file.name));
                    }
                }
            }
        }
        if !checks.is_empty() {
            self.check_import_keys(scans, checks, seen, &mut waiting, &mut paths)
                .await?;
        }
        let mut read_now: Vec<(usize, usize, FileIdentity)> = Vec::new();
        if !paths.is_empty() {
            let max = self.config.max_source_bytes();
            let mut outcomes = self
                .provider
                .read_many(&paths, max, self.cancel)
                .await?
                .into_iter();
            // A path per file of the batch: not held while the texts are
            // taken in (issue 46 item 4).
            drop(paths);
            for (si, i) in waiting {
                let scan = &mut scans[si];
                let dir = scan.path.abs();
                let slot = &mut scan.slots[i];
                let SlotState::Unread(file) = &slot.state else {
                    continue;
                };
                // A provider that returned too few outcomes read nothing for
                // the rest: unavailable, never "absent".
                let outcome = outcomes.next().unwrap_or_else(|| {
                    ReadOutcome::Unavailable(Unavailable::Io("no read result".into()))
                });
                let identity = file.present.identity.clone();
                slot.state = loaded(file, outcome, dir, self.config.content_transform());
                match &slot.state {
                    SlotState::Unavailable(reason) => {
                        seen.failed.insert(identity, reason.clone());
                    }
                    SlotState::Loaded(_) => read_now.push((si, i, identity)),
                    _ => {}
                }
            }
        }
        if let Some(ctx) = self.imports
            && !read_now.is_empty()
        {
            self.expand(ctx, scans, &read_now, seen).await?;
        }
        for &si in which {
            content_dedup(&mut scans[si]);
        }
        Ok(())
    }

    /// Re-probes the import targets of cache-vouched files in one provider
    /// call: a file whose targets all probe as recorded keeps its cached
    /// digest (no read, R-IMP-4); any other is queued for a read.
    async fn check_import_keys(
        &self,
        scans: &mut [DirScan],
        checks: Vec<((usize, usize), CacheEntry<FileVersion>)>,
        seen: &SeenFiles,
        waiting: &mut Vec<(usize, usize)>,
        paths: &mut Vec<Utf8PathBuf>,
    ) -> Result<(), Cancelled> {
        let mut targets: Vec<Utf8PathBuf> = checks
            .iter()
            .flat_map(|(_, e)| e.imports.iter().map(|k| Utf8PathBuf::from(&k.path)))
            .collect();
        targets.sort();
        targets.dedup();
        let probes = self.provider.probe_paths(&targets, self.cancel).await?;
        let by_path: HashMap<&str, &Probe> = targets
            .iter()
            .map(|p| p.as_str())
            .zip(probes.iter())
            .collect();
        for ((si, i), entry) in checks {
            let scan = &mut scans[si];
            let dir = scan.path.abs();
            let slot = &mut scan.slots[i];
            let SlotState::Unread(file) = &slot.state else {
                continue;
            };
            if imports::key_holds(&entry.imports, &by_path, &seen.own) {
                slot.state = SlotState::Loaded(LoadedFile {
                    display: file.display.clone(),
                    text: None,
                    digest: entry.digest,
                    trimmed: entry.trimmed_digest,
                    version: file.present.version,
                    bytes: file.present.size,
                    imports: Vec::new(),
                    import_key: entry.imports,
                    own_trimmed: None,
                    rule_globs: None,
                });
            } else {
                waiting.push((si, i));
                paths.push(file_path(dir, &file.name));
            }
        }
        Ok(())
    }

    /// Expands the imports of the files read in this call (R-IMP-1..3):
    /// content, digests and bytes become those of the expanded section.
    async fn expand(
        &self,
        ctx: &ImportContext,
        scans: &mut [DirScan],
        read_now: &[(usize, usize, FileIdentity)],
        seen: &mut SeenFiles,
    ) -> Result<(), Cancelled> {
        let texts: Vec<(usize, usize, &FileIdentity, Arc<str>)> = read_now
            .iter()
            .filter_map(|(si, i, id)| match &scans[*si].slots[*i].state {
                SlotState::Loaded(LoadedFile { text: Some(t), .. }) if t.contains('@') => {
                    Some((*si, *i, id, Arc::clone(t)))
                }
                _ => None,
            })
            .collect();
        if texts.is_empty() {
            return Ok(());
        }
        // The rule file imports relative to its own directory, `.claude`.
        let dirs: Vec<Utf8PathBuf> = texts
            .iter()
            .map(|(si, i, _, _)| {
                let scan = &scans[*si];
                if scan.rel().is_some() && scan.slots[*i].scope.slot() == Some(SLOT_CLAUDE_DIR) {
                    scan.abs().join(".claude")
                } else {
                    scan.abs().to_owned()
                }
            })
            .collect();
        let items: Vec<Candidate<'_>> = texts
            .iter()
            .zip(&dirs)
            .map(|((_, _, id, t), dir)| Candidate {
                dir,
                text: t,
                identity: id,
            })
            .collect();
        let expansions = imports::expand_all(
            self.provider,
            self.config,
            self.cancel,
            ctx,
            &seen.own,
            &items,
            &mut seen.imported,
        )
        .await?;
        let places: Vec<(usize, usize)> = texts.iter().map(|(si, i, _, _)| (*si, *i)).collect();
        drop(items);
        for ((si, i), exp) in places.into_iter().zip(expansions) {
            let SlotState::Loaded(file) = &mut scans[si].slots[i].state else {
                continue;
            };
            if exp.records.is_empty() {
                continue;
            }
            if exp.content.len() != file.text.as_deref().map_or(0, str::len) {
                let (digest, trimmed) = Digest::of_and_trimmed(&exp.content);
                file.own_trimmed = Some(file.trimmed);
                file.digest = digest;
                file.trimmed = trimmed;
                file.bytes = exp.content.len() as u64;
                file.text = Some(Arc::from(exp.content));
            }
            file.imports = exp.records;
            file.import_key = exp.key;
        }
        Ok(())
    }

    /// A winner's state when no read is needed: the version cache vouches
    /// for it (or asks for its import targets to be probed first), or its
    /// probed size is over the cap.
    fn without_read(&self, scope: &ScopeKey, file: &ProbedFile) -> Vouch {
        let present = &file.present;
        if let Some((cache, visible)) = self.vouching()
            && let Some(entry) =
                cache.fresh(scope, &file.display, &present.version, visible.get(scope))
        {
            if !entry.imports.is_empty() {
                return Vouch::Check(entry.clone());
            }
            return Vouch::Known(SlotState::Loaded(LoadedFile::vouched(
                file.display.clone(),
                entry,
                present,
            )));
        }
        let max = self.config.max_source_bytes();
        if present.size > max {
            return Vouch::Known(SlotState::Unavailable(Unavailable::TooLarge { limit: max }));
        }
        Vouch::Read
    }
}

/// `dir.join(name)` allocated at its size: `join` grows a copy of `dir` by
/// doubling it, and a read batch of a deep chain holds one path per file
/// (issue 46 item 4).
fn file_path(dir: &Utf8Path, name: &str) -> Utf8PathBuf {
    let mut path = Utf8PathBuf::with_capacity(dir.as_str().len() + 1 + name.len());
    path.push(dir);
    path.push(name);
    path
}

/// What [`Gather::without_read`] decided for an unread winner.
enum Vouch {
    /// Its state without I/O.
    Known(SlotState),
    /// Cached, pending a probe of its import targets (R-IMP-4).
    Check(CacheEntry<FileVersion>),
    /// It needs a read.
    Read,
}

/// A winner's state after its read (of `file` in `dir`).
fn loaded(
    file: &ProbedFile,
    outcome: ReadOutcome,
    dir: &Utf8Path,
    transform: ContentTransform,
) -> SlotState {
    match outcome {
        ReadOutcome::Loaded(loaded) => {
            // The agent's own transformations come first: imports and
            // digests are over the text the model is shown (R-HOOK-4).
            let (text, bytes): (Arc<str>, u64) = match transform {
                ContentTransform::None => (Arc::from(loaded.text), loaded.bytes_read),
                t => {
                    let shown = t.apply(&loaded.text).into_owned();
                    let len = shown.len() as u64;
                    (Arc::from(shown), len)
                }
            };
            let (digest, trimmed) = Digest::of_and_trimmed(&text);
            SlotState::Loaded(LoadedFile {
                display: file.display.clone(),
                digest,
                trimmed,
                version: loaded.version,
                bytes,
                text: Some(text),
                imports: Vec::new(),
                import_key: Vec::new(),
                own_trimmed: None,
                rule_globs: None,
            })
        }
        // Present at the probe, gone at the read: treat as unavailable for
        // this pass so a race never removes loaded instructions; the next
        // pass sees the settled state.
        ReadOutcome::Absent => {
            SlotState::Unavailable(Unavailable::Io("changed while being read".into()))
        }
        ReadOutcome::Unavailable(u) => {
            tracing::debug!(path = %dir.join(&file.name), reason = %u, "instruction file unreadable");
            SlotState::Unavailable(u)
        }
    }
}

/// Identity dedup against broader files of the same pass (R-DISC-3), from
/// probe identities, so duplicates are never read. Call in section order.
pub(crate) fn identity_dedup(scan: &mut DirScan, seen: &mut SeenFiles) {
    for slot in &mut scan.slots {
        let SlotState::Unread(file) = &slot.state else {
            continue;
        };
        match seen.first.get(&file.present.identity) {
            Some(of) => {
                slot.state = SlotState::Duplicate {
                    trimmed: None,
                    of: of.clone(),
                    identity: Some(file.present.identity.clone()),
                };
            }
            None => {
                seen.first
                    .insert(file.present.identity.clone(), file.display.clone());
            }
        }
    }
}

/// Trimmed-content dedup within one directory (R-CFG-7).
fn content_dedup(scan: &mut DirScan) {
    let mut kept: Vec<(Digest, Arc<str>)> = Vec::new();
    for slot in &mut scan.slots {
        let SlotState::Loaded(file) = &slot.state else {
            continue;
        };
        match kept.iter().find(|(d, _)| *d == file.trimmed) {
            Some((_, of)) => {
                slot.state = SlotState::Duplicate {
                    trimmed: Some(file.trimmed),
                    of: of.clone(),
                    identity: None,
                };
            }
            None => kept.push((file.trimmed, file.display.clone())),
        }
    }
}

/// Project-relative display path of a candidate in directory `rel`.
pub(crate) fn display(rel: &str, name: &str) -> Arc<str> {
    if rel == "." {
        return Arc::from(name);
    }
    // Joined in a buffer kept per thread, then copied once into its shared
    // form: this runs per winner per directory on every pass (a touch's
    // settled check of every known directory), and a `String` per call
    // was an allocation more for nothing.
    thread_local! {
        static JOINED: RefCell<String> = const { RefCell::new(String::new()) };
    }
    JOINED.with_borrow_mut(|joined| {
        joined.clear();
        joined.push_str(rel);
        joined.push('/');
        joined.push_str(name);
        Arc::from(joined.as_str())
    })
}

/// The cache entry a loaded file would leave behind.
pub(crate) fn cache_entry(file: &LoadedFile) -> CacheEntry<FileVersion> {
    CacheEntry {
        path: file.display.to_string(),
        version: file.version,
        digest: file.digest,
        trimmed_digest: file.trimmed,
        imports: file.import_key.clone(),
    }
}

#[cfg(test)]
mod tests;
