//! Decide phase: from what was gathered and what the model can see, the
//! workspace message to send (if any) and the cache updates it implies.
//!
//! Every composition — first pre-step, touch projection, revalidation,
//! resume — goes through [`compose`]; the mode (fresh baseline, compatible
//! baseline, replacement) is chosen from the visible state alone (R-RT-7,
//! R-RT-8), so a pending inbox message is never authority (R-RT-6).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::DshHome;
use dsh_instructions_discovery::{CancellationToken, Cancelled, FsProvider, provider::FileVersion};
use dsh_instructions_render::{
    BaselineFile, BaselineKind, Budget, Fate, Rendered, Section, render_baseline_skipping,
    render_dynamic, render_empty_replacement,
};
use dsh_instructions_state::{
    Config, Digest, ScopeKey, TypedSource,
    cache::{CacheEntry, VersionCache},
    identity::{baseline_identity, root_relative_to_cwd},
    scope::{ScopeKind, section_order},
    source::{Action, Change},
    transition::{Observation, reconcile_directory},
    visible::VisibleState,
};

use crate::WorkspaceMessage;
use crate::dir_path::{DirPath, dir_abs};
use crate::gather::{gather_dirs, path_gate, probe_with_user_global, process_dirs};
use crate::imports::ImportContext;
use crate::rule_facts::RuleFacts;
use crate::rule_slots::{add_rule_slots, rule_body};
use crate::scan::{
    Attach, DirScan, Gather, LoadedFile, ProbedFile, SeenFiles, SlotScan, SlotState, cache_entry,
    identity_dedup,
};
use crate::settle::SettleMemo;
use crate::slots::{Gate, Layout};
use crate::user_file::UserFile;
use crate::view::{self, DirKey, VisibleView, dir_key};

/// Everything a composition reads.
pub(crate) struct ComposeInput<'a> {
    pub provider: &'a dyn FsProvider,
    pub config: &'a Config,
    pub budget: Budget,
    pub home: &'a DshHome,
    /// The agent user-level files, after the user-global file.
    pub user_files: &'a [UserFile],
    pub cwd: &'a Utf8Path,
    pub root: &'a Utf8Path,
    pub cancel: &'a CancellationToken,
    /// The visible state and known directories (R-STATE-5, R-RT-3 b).
    pub view: &'a VisibleView,
    pub cache: &'a VersionCache<FileVersion>,
    /// Scopes left out by the budget of the instance's current render; `None`
    /// before the instance has one (R-RT-10).
    pub excluded: Option<&'a BTreeSet<ScopeKey>>,
    /// Extra project directories (root-relative) to reconcile: touched
    /// directories below the cwd and those named by the pending message.
    pub extra_dirs: &'a BTreeSet<String>,
    /// Absolute paths this composition touches (a touch projection's
    /// files and directories), which attach matching path-scoped rules
    /// (R-RULE-3, R-RULE-4).
    pub touched: &'a [Utf8PathBuf],
    /// Rule scopes a pending message attaches, kept attached by a
    /// composition that replaces it (R-RT-6).
    pub pending_rules: &'a BTreeSet<ScopeKey>,
    /// The instance's memo of rule front matter ([`RuleFacts`]).
    pub rule_facts: &'a RuleFacts,
    /// The instance's settled directories ([`SettleMemo`]), checked
    /// against `view` and `cache`.
    pub settle: &'a SettleMemo,
}

/// The result of a composition, applied only if it was not cancelled.
#[derive(Debug, Default)]
pub(crate) struct Composition {
    pub message: Option<WorkspaceMessage>,
    pub cache_updates: Vec<(ScopeKey, CacheEntry<FileVersion>)>,
    /// The new budget-exclusion set when this composition rendered (or
    /// compared against) a complete baseline.
    pub excluded: Option<BTreeSet<ScopeKey>>,
}

/// The root-to-cwd chain as root-relative directory keys, root first.
pub(crate) fn chain_rel(root: &Utf8Path, cwd: &Utf8Path) -> Vec<String> {
    let mut out = vec![".".to_owned()];
    if let Ok(rest) = cwd.strip_prefix(root) {
        let mut acc = String::new();
        for comp in rest.components() {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(comp.as_str());
            out.push(acc.clone());
        }
    }
    out
}

/// Root-relative directories to gather, in [`DirKey`] order: the view's
/// known directories (when `view` is given) and `extra`, each once.
fn known_and<'a>(
    view: Option<&'a VisibleView>,
    extra: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let mut more: Vec<(DirKey, &str)> = extra
        .into_iter()
        .filter(|rel| !view.is_some_and(|v| v.is_known(rel)))
        .map(|rel| (dir_key(rel), rel))
        .collect();
    more.sort();
    more.dedup();
    let Some(view) = view else {
        return more.into_iter().map(|(_, m)| m).collect();
    };
    if more.is_empty() {
        return view.known().collect();
    }
    let mut out = Vec::with_capacity(view.len() + more.len());
    let mut more = more.into_iter().peekable();
    for (key, rel) in view.known_keyed() {
        while let Some((_, m)) = more.next_if(|(k, _)| k < key) {
            out.push(m);
        }
        out.push(rel);
    }
    out.extend(more.map(|(_, m)| m));
    out
}

/// What the last pass of a composition gathers besides the chain.
enum Known {
    /// The known directories and the touched ones.
    All,
    /// Only the touched ones (a replacement that changed the root).
    ExtraOnly,
    /// Nothing (already gathered, or an empty replacement).
    Nothing,
}

/// A transition with the content its section needs.
struct Pending {
    change: Change,
    text: Option<Arc<str>>,
    /// A path-scoped rule's `<G>` (R-RULE-5).
    rule_globs: Option<Arc<str>>,
}

fn observation(state: &SlotState) -> Observation {
    match state {
        SlotState::Loaded(f) => Observation::Present {
            path: f.display.to_string(),
            digest: f.digest,
        },
        SlotState::Duplicate { .. } => Observation::Duplicate,
        // Left unread because a budgeted baseline omits it anyway.
        SlotState::Unread(_) => Observation::NotRetained,
        SlotState::Absent => Observation::Absent,
        SlotState::Unavailable(_) => Observation::Unavailable,
    }
}

/// Per-slot transitions of one gathered directory (R-STATE-6, R-STATE-9).
/// `held` scopes are carried by a baseline part and produce nothing here;
/// `not_retained` scopes were left out by the budget of a complete render.
/// `scans` without the path-scoped rules whose `set` is visible (R-RULE-8:
/// attached rules are nested-like state); `None` when there is none, as
/// after a full compaction or at a start, where nothing is visible.
fn without_attached_rules(scans: &[DirScan], visible: &VisibleState) -> Option<Vec<DirScan>> {
    let attached = |s: &SlotScan| {
        matches!(s.scope.kind(), ScopeKind::Rule { .. })
            && visible.is_loaded(&s.scope)
            && matches!(&s.state, SlotState::Loaded(f) if f.rule_globs.is_some())
    };
    if !scans.iter().any(|d| d.slots.iter().any(attached)) {
        return None;
    }
    Some(
        scans
            .iter()
            .map(|d| {
                let mut d = d.clone();
                d.slots.retain(|s| !attached(s));
                d
            })
            .collect(),
    )
}

fn directory_transitions(
    scan: &DirScan,
    visible: &VisibleState,
    held: &BTreeSet<ScopeKey>,
    not_retained: &BTreeSet<ScopeKey>,
    out: &mut Vec<Pending>,
) {
    let items: Vec<(ScopeKey, Option<&_>, Observation)> = scan
        .slots
        .iter()
        .filter(|s| !held.contains(&s.scope))
        .map(|s| {
            let obs = if not_retained.contains(&s.scope) && matches!(s.state, SlotState::Loaded(_))
            {
                Observation::NotRetained
            } else {
                observation(&s.state)
            };
            (s.scope.clone(), visible.get(&s.scope), obs)
        })
        .collect();
    let texts: HashMap<&ScopeKey, &LoadedFile> = scan
        .slots
        .iter()
        .filter_map(|s| match &s.state {
            SlotState::Loaded(f) => Some((&s.scope, f)),
            _ => None,
        })
        .collect();
    for change in reconcile_directory(&items) {
        let file = texts.get(&change.scope);
        out.push(Pending {
            text: file.and_then(|f| f.text.clone()),
            rule_globs: file.and_then(|f| f.rule_globs.clone()),
            change,
        });
    }
}

/// Renders dynamic transitions; returns the rendered part and the committed
/// changes (R-STATE-7).
fn render_transitions(
    mut pending: Vec<Pending>,
    config: &Config,
    budget: Budget,
) -> (Option<Rendered>, Vec<Change>) {
    pending.sort_by(|a, b| section_order(&a.change.scope, &b.change.scope, config));
    // A set/replace whose content was not read cannot be rendered; the cache
    // only skips reads whose result is already visible, so this never drops
    // a real transition.
    pending.retain(|p| p.change.action == Action::Remove || p.text.is_some());
    let dirs: Vec<String> = pending
        .iter()
        .map(|p| p.change.scope.dir().unwrap_or(".").to_owned())
        .collect();
    let sections: Vec<Section<'_>> = pending
        .iter()
        .zip(&dirs)
        .map(|(p, dir)| {
            let c = &p.change;
            let content = p.text.as_deref().unwrap_or("");
            match (c.action, &c.previous_path) {
                (Action::Remove, _) => Section::Remove { path: &c.path },
                (Action::Replace, Some(prev)) => Section::ReplacePath {
                    path: &c.path,
                    previous_path: prev,
                    content,
                },
                (Action::Replace, None) => Section::Replace {
                    path: &c.path,
                    content,
                },
                (Action::Set, _) => match c.scope.kind() {
                    // An agent's user-level file reads like the
                    // user-global one: outside the project.
                    ScopeKind::UserGlobal
                    | ScopeKind::UserFile { .. }
                    | ScopeKind::Ancestor { .. } => Section::SetUserGlobal {
                        path: &c.path,
                        content,
                    },
                    ScopeKind::Project { .. } => Section::SetProject {
                        path: &c.path,
                        dir,
                        content,
                    },
                    // A path-scoped rule names its globs (R-RULE-5).
                    // The user's have D = `.`: their globs are relative
                    // to the project root (R-RULE-8).
                    ScopeKind::Rule { .. } if p.rule_globs.is_some() => {
                        let globs = p.rule_globs.as_deref().unwrap_or("");
                        Section::SetRule {
                            path: &c.path,
                            globs,
                            dir,
                            content: rule_body(content, globs, dir),
                        }
                    }
                    // A rule reads like a file of its directory D, the
                    // user's rules like the user-level files.
                    ScopeKind::Rule { .. } if c.scope.dir().is_some() => Section::SetProject {
                        path: &c.path,
                        dir,
                        content,
                    },
                    ScopeKind::Rule { .. } => Section::SetUserGlobal {
                        path: &c.path,
                        content,
                    },
                },
            }
        })
        .collect();
    if sections.is_empty() {
        return (None, Vec::new());
    }
    let rendered = render_dynamic(&sections, budget);
    let committed = pending
        .iter()
        .zip(&rendered.fates)
        .filter(|(_, f)| f.is_represented())
        .map(|(p, _)| p.change.clone())
        .collect::<Vec<_>>();
    if committed.is_empty() {
        return (None, committed);
    }
    (Some(rendered), committed)
}

/// A complete baseline over the gathered chain.
pub(crate) struct BaselinePlan<'s> {
    /// How many broad files were left unread because the budget omits them
    /// anyway; their scopes stay in the scans ([`BaselinePlan::omitted`]):
    /// a deep chain leaves hundreds, and a copy of each scope was a large
    /// share of a composition's memory (issue 35 item 3).
    pub unread: usize,
    /// Loaded, non-duplicate files in section order with their scopes
    /// ([`loaded_slots`]), in the scans the plan was made from: a copy of
    /// each scope was held through the render (issue 46 item 4).
    pub files: Vec<(&'s ScopeKey, &'s LoadedFile)>,
    pub rendered: Rendered,
}

/// How a [`BaselinePlan`] renders: [`render_baseline_skipping`], or
/// [`render_baseline_text`] for a caller that shows only the text.
pub(crate) type RenderBaseline = fn(BaselineKind, &[&str], &[BaselineFile<'_>], Budget) -> Rendered;

impl<'s> BaselinePlan<'s> {
    pub(crate) fn new(scans: &'s [DirScan], kind: BaselineKind, budget: Budget) -> Self {
        Self::rendered_by(scans, kind, budget, render_baseline_skipping)
    }

    /// The plan, rendered by `render`.
    pub(crate) fn rendered_by(
        scans: &'s [DirScan],
        kind: BaselineKind,
        budget: Budget,
        render: RenderBaseline,
    ) -> Self {
        let unread_paths: Vec<&str> = unread_slots(scans).map(|(_, f)| &*f.display).collect();
        let files: Vec<(&ScopeKey, &LoadedFile)> = loaded_slots(scans).collect();
        let inputs: Vec<BaselineFile<'_>> = files
            .iter()
            .map(|(_, f)| BaselineFile {
                path: &f.display,
                content: f.text.as_deref().unwrap_or(""),
            })
            .collect();
        let rendered = render(kind, &unread_paths, &inputs, budget);
        Self {
            unread: unread_paths.len(),
            files,
            rendered,
        }
    }

    /// Fates of the loaded files (after the unread ones).
    pub(crate) fn file_fates(&self) -> &[Fate] {
        self.rendered.fates.get(self.unread..).unwrap_or(&[])
    }

    pub(crate) fn is_empty_input(&self) -> bool {
        self.unread == 0 && self.files.is_empty()
    }

    fn held(&self) -> impl Iterator<Item = (&'s ScopeKey, &'s LoadedFile)> {
        self.files
            .iter()
            .zip(self.file_fates())
            .filter(|(_, f)| f.is_represented())
            .map(|(x, _)| *x)
    }

    /// The `set` changes of the represented files, recording the cache
    /// entries they commit (R-STATE-7).
    fn held_sets(&self, out: &mut Composition) -> Vec<Change> {
        self.held()
            .map(|(scope, f)| {
                out.cache_updates.push((scope.clone(), cache_entry(f)));
                set_change(scope, f)
            })
            .collect()
    }

    /// The scopes the budget leaves out: the files it omitted and those of
    /// `scans` (the scans the plan was made from) left unread.
    pub(crate) fn omitted(&self, scans: &[DirScan]) -> BTreeSet<ScopeKey> {
        self.files
            .iter()
            .zip(self.file_fates())
            .filter(|(_, f)| matches!(f, Fate::Omitted))
            .map(|(&(s, _), _)| s.clone())
            .chain(unread_slots(scans).map(|(s, _)| s.clone()))
            .collect()
    }
}

/// The loaded slots of `scans`, in order: a baseline's files
/// ([`BaselinePlan::files`]).
fn loaded_slots(scans: &[DirScan]) -> impl Iterator<Item = (&ScopeKey, &LoadedFile)> {
    slots_with(scans, |state| match state {
        SlotState::Loaded(f) => Some(f),
        _ => None,
    })
}

/// [`loaded_slots`], taken out of the scans.
pub(crate) fn into_loaded_slots(
    scans: Vec<DirScan>,
) -> impl Iterator<Item = (ScopeKey, LoadedFile)> {
    scans
        .into_iter()
        .flat_map(|d| d.slots)
        .filter_map(|s| match s.state {
            SlotState::Loaded(f) => Some((s.scope, f)),
            _ => None,
        })
}

/// The slots of `scans` left unread, in order, with their files.
fn unread_slots(scans: &[DirScan]) -> impl Iterator<Item = (&ScopeKey, &ProbedFile)> {
    slots_with(scans, |state| match state {
        SlotState::Unread(f) => Some(f),
        _ => None,
    })
}

/// The slots of `scans` whose state `file` takes a file from, in order.
fn slots_with<'a, F: 'a>(
    scans: &'a [DirScan],
    file: fn(&'a SlotState) -> Option<&'a F>,
) -> impl Iterator<Item = (&'a ScopeKey, &'a F)> {
    scans
        .iter()
        .flat_map(|d| d.slots.iter())
        .filter_map(move |s| Some((&s.scope, file(&s.state)?)))
}

/// Composes the workspace message for this moment (see the module docs).
pub(crate) async fn compose(input: &ComposeInput<'_>) -> Result<Composition, Cancelled> {
    let config = input.config;
    let budget = input.budget;
    let visible = &input.view.visible;
    let identity = baseline_identity(
        config,
        &root_relative_to_cwd(input.root.as_str(), input.cwd.as_str()),
    );
    let chain = chain_rel(input.root, input.cwd);
    let chain_set: BTreeSet<&str> = chain.iter().map(String::as_str).collect();
    let latest = visible.latest_baseline().cloned();

    // Which known directories the last pass below still has to gather.
    let mut known = Known::All;

    let mut out = Composition::default();
    let mut pending: Vec<Pending> = Vec::new();
    let mut baseline_part: Option<(Rendered, Vec<Change>)> = None;
    // Every known directory's winner joins it: sized once, not rehashed
    // nine times on the way to a thousand.
    let mut seen = SeenFiles::with_capacity(input.view.len() + chain.len() + 1);
    let none = BTreeSet::new();

    // Built only with imports on: the off path stays as it was (R-CFG-10).
    let import_ctx = config
        .imports()
        .then(|| ImportContext::new(input.root, input.home).refusing(config));
    let layout = Layout::new(config);
    let attach = Attach {
        visible,
        pending: input.pending_rules,
        touched: input.touched,
        facts: Some(input.rule_facts),
    };
    let rules = (!config.rule_formats().is_empty()).then_some(&attach);
    let mut full = Gather {
        provider: input.provider,
        config,
        cancel: input.cancel,
        cache: None,
        visible: Some(visible),
        report: false,
        imports: import_ctx.as_ref(),
        layout: &layout,
        gate: Gate::Open,
        user_files: input.user_files,
        rules,
    };
    full.gate = path_gate(&full, input.root, &chain).await?;
    let cached = Gather {
        provider: input.provider,
        config,
        cancel: input.cancel,
        cache: Some(input.cache),
        visible: Some(visible),
        report: false,
        imports: import_ctx.as_ref(),
        layout: &layout,
        gate: full.gate,
        user_files: input.user_files,
        rules,
    };

    match &latest {
        // R-RT-8: no visible baseline: try a complete current one.
        None => {
            let scans = full
                .baseline_chain(input.home, input.root, &chain, budget, &mut seen)
                .await?;
            // An attached path-scoped rule whose `set` is still visible
            // (the hiding took the baseline only: Copilot CLI and Qwen Code
            // replace their session-start context on resume) is state like
            // a nested file (R-RULE-8): not rendered again here, reconciled
            // below like any visible scope.
            let fresh = without_attached_rules(&scans, visible);
            let planned = fresh.as_deref().unwrap_or(&scans);
            let plan = BaselinePlan::new(planned, BaselineKind::Normal, budget);
            let mut held = BTreeSet::new();
            let omitted = plan.omitted(planned);
            if !plan.rendered.is_empty() {
                let changes = plan.held_sets(&mut out);
                held.extend(changes.iter().map(|c| c.scope.clone()));
                out.excluded = Some(omitted.clone());
                baseline_part = Some((plan.rendered.clone(), changes));
            }
            // Visible state that survived (compaction hid only the baseline):
            // remove what the new baseline does not hold.
            for scan in &scans {
                directory_transitions(scan, visible, &held, &omitted, &mut pending);
            }
        }
        Some(b) if b.identity.as_deref() == Some(identity.as_str()) => {
            // Compatible: only transitions against the visible state (R-RT-7).
            let excluded = match input.excluded {
                Some(e) => e.clone(),
                None => {
                    // First composition of this instance: compare with the
                    // complete render; what its budget leaves out is not
                    // retained (R-RT-10) and is removed if visible.
                    let scans = cached
                        .baseline_chain(input.home, input.root, &chain, budget, &mut seen)
                        .await?;
                    let plan = BaselinePlan::new(&scans, BaselineKind::Normal, budget);
                    let e = plan.omitted(&scans);
                    for scan in &scans {
                        directory_transitions(scan, visible, &none, &e, &mut pending);
                        remember_cache(scan, &mut out);
                    }
                    out.excluded = Some(e.clone());
                    e
                }
            };
            if out.excluded.is_none() {
                // Later compositions: every chain scope is a known scope,
                // except those the budget left out, which are not re-probed.
                let home = input.home;
                let skip = |s: &ScopeKey| excluded.contains(s);
                let extra = input.extra_dirs.iter().chain(&chain).map(String::as_str);
                let rels = known_and(Some(input.view), extra);
                let dirs: Vec<Utf8PathBuf> =
                    rels.iter().map(|rel| dir_abs(input.root, rel)).collect();
                let names = cached.names();
                let (mut users, probes) =
                    probe_with_user_global(&cached, home, input.root, &dirs, &names).await?;
                if cached.imports.is_some() {
                    // Own sections are the chain's winners whatever the
                    // budget or the cache skips, as in the baseline (R-IMP-3).
                    for ug in &users {
                        seen.note_own(ug);
                    }
                    for ((rel, abs), p) in rels.iter().zip(&dirs).zip(&probes.probes) {
                        if chain_set.contains(rel) {
                            seen.note_own(&cached.slots(
                                DirPath::known(abs, rel),
                                &names,
                                p.clone(),
                                &|_| false,
                            ));
                        }
                    }
                }
                // The user files are the broadest: they dedup first.
                for ug in &mut users {
                    ug.slots.retain(|s| !skip(&s.scope));
                    identity_dedup(ug, &mut seen);
                }
                let all: Vec<usize> = (0..users.len()).collect();
                cached.read_scans(&mut users, &all, &mut seen).await?;
                seen.demote_failed_duplicates(&mut users);
                if let Some(attach) = cached.rules {
                    // The user's rules (R-RULE-1), in their scan.
                    add_rule_slots(&cached, &mut users, attach, &skip, &seen).await?;
                }
                for ug in &users {
                    directory_transitions(ug, visible, &none, &none, &mut pending);
                    remember_cache(ug, &mut out);
                }
                let scans = process_dirs(
                    &cached,
                    &rels,
                    &dirs,
                    names,
                    probes,
                    &skip,
                    &mut seen,
                    Some(input.settle),
                )
                .await?;
                for scan in scans {
                    directory_transitions(&scan, visible, &none, &none, &mut pending);
                    remember_cache(&scan, &mut out);
                }
                known = Known::Nothing;
            }
        }
        Some(old) => {
            // Incompatible: one complete replacement baseline (R-RT-7).
            let old_root = view::identity_root(old.identity.as_deref(), input.cwd);
            let root_changed = old_root.as_deref() != Some(input.root);
            let old_chain: BTreeSet<String> = match &old_root {
                Some(r) if !root_changed => chain_rel(r, input.cwd).into_iter().collect(),
                _ => BTreeSet::new(),
            };
            let scans = full
                .baseline_chain(input.home, input.root, &chain, budget, &mut seen)
                .await?;
            let plan = BaselinePlan::new(&scans, BaselineKind::Replacement, budget);
            let held: BTreeSet<ScopeKey> = plan.held().map(|(s, _)| s.clone()).collect();
            let nothing_remains = plan.is_empty_input();
            let mut removes: Vec<Change> = visible
                .entries()
                .filter(|(scope, _)| visible.is_loaded(scope) && !held.contains(*scope))
                .filter(|(scope, _)| {
                    nothing_remains
                        || match scope.kind() {
                            ScopeKind::UserGlobal
                            | ScopeKind::UserFile { .. }
                            | ScopeKind::Ancestor { .. } => true,
                            ScopeKind::Project { dir, .. } => {
                                root_changed || old_chain.contains(dir)
                            }
                            // A rule goes with its directory D.
                            ScopeKind::Rule { .. } => scope
                                .dir()
                                .is_none_or(|dir| root_changed || old_chain.contains(dir)),
                        }
                })
                .map(|(scope, entry)| Change {
                    action: Action::Remove,
                    scope: scope.clone(),
                    path: entry.path.clone(),
                    previous_path: None,
                    digest: None,
                })
                .collect();
            removes.sort_by(|a, b| section_order(&a.scope, &b.scope, config));
            let rendered = if nothing_remains {
                render_empty_replacement(budget)
            } else {
                plan.rendered.clone()
            };
            if rendered.is_empty() {
                // Does not fit: nothing is composed or committed; the old
                // baseline stays visible and later compositions retry.
                return Ok(Composition::default());
            }
            let mut changes = removes;
            changes.extend(plan.held_sets(&mut out));
            out.excluded = Some(plan.omitted(&scans));
            baseline_part = Some((rendered, changes));
            if nothing_remains {
                known = Known::Nothing;
            } else if root_changed {
                known = Known::ExtraOnly;
            }
        }
    }

    // Known directories outside the chain a baseline part (or the first
    // compatible comparison) covered.
    let extra = input.extra_dirs.iter().map(String::as_str);
    let mut dirs = match known {
        Known::All => known_and(Some(input.view), extra),
        Known::ExtraOnly => known_and(None, extra),
        Known::Nothing => Vec::new(),
    };
    dirs.retain(|d| !chain_set.contains(d));
    for scan in gather_dirs(
        &cached,
        input.root,
        &dirs,
        &|_| false,
        &mut seen,
        Some(input.settle),
    )
    .await?
    {
        directory_transitions(&scan, visible, &none, &none, &mut pending);
        remember_cache(&scan, &mut out);
    }

    let (dyn_part, dyn_changes) = render_transitions(pending, config, budget);
    let mut parts = Vec::new();
    let mut blocks = Vec::new();
    let mut source = TypedSource::default();
    if let Some((rendered, changes)) = baseline_part {
        parts.push(rendered.text);
        blocks.push(rendered.blocks);
        source.baseline = true;
        source.baseline_identity = Some(identity);
        source.changes = changes;
    }
    if let Some(rendered) = dyn_part.filter(|_| !dyn_changes.is_empty()) {
        parts.push(rendered.text);
        blocks.push(rendered.blocks);
        source.changes.extend(dyn_changes);
    }
    // R-STATE-7/8: the cache learns only what is committed or already visible.
    let committed: BTreeMap<&ScopeKey, Digest> = source
        .changes
        .iter()
        .filter_map(|c| c.digest.map(|d| (&c.scope, d)))
        .collect();
    out.cache_updates.retain(|(scope, e)| {
        committed.get(scope) == Some(&e.digest)
            || visible.get(scope).is_some_and(|v| {
                v.action != Action::Remove && v.path == e.path && v.digest == Some(e.digest)
            })
    });
    if !parts.is_empty() {
        out.message = Some(WorkspaceMessage {
            parts,
            blocks,
            source,
        });
    }
    Ok(out)
}

fn set_change(scope: &ScopeKey, f: &LoadedFile) -> Change {
    Change {
        action: Action::Set,
        scope: scope.clone(),
        path: f.display.to_string(),
        previous_path: None,
        digest: Some(f.digest),
    }
}

/// Cache entries for loaded slots (the caller filters by commit).
fn remember_cache(scan: &DirScan, out: &mut Composition) {
    for slot in &scan.slots {
        if let SlotState::Loaded(f) = &slot.state {
            out.cache_updates.push((slot.scope.clone(), cache_entry(f)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_host::MemoryHost;
    use dsh_instructions_state::{
        Digest, TypedSource,
        source::{Action, Change},
    };
    use rstest::rstest;

    /// Broadest first, then component by component: `a/b` before `a-c`
    /// although `-` sorts before `/` as a byte.
    #[rstest]
    #[case(&["a-c", "a/b", ".", "a", "a.b/c"], &[".", "a", "a-c", "a/b", "a.b/c"])]
    #[case(&["b/c/d", "b", "a/z", "c", "b"], &["b", "c", "a/z", "b/c/d"])]
    #[case(&["x y/a", "x/a", "x!/a"], &["x/a", "x y/a", "x!/a"])]
    fn directories_sort_by_depth_then_components(#[case] input: &[&str], #[case] want: &[&str]) {
        assert_eq!(known_and(None, input.iter().copied()), want);
    }

    #[rstest]
    fn touched_directories_merge_into_the_known_ones_in_order() {
        let cwd = Utf8Path::new("/repo");
        let host = MemoryHost::new(cwd.to_owned());
        let changes = ["a/b", "c", "d/e/f"]
            .map(|dir| Change {
                action: Action::Set,
                scope: ScopeKey::project(dir, "base"),
                path: format!("{dir}/AGENTS.md"),
                previous_path: None,
                digest: Some(Digest::of(dir)),
            })
            .to_vec();
        host.append_user(
            vec![],
            Some(TypedSource {
                changes,
                ..TypedSource::default()
            }),
        );
        let mut view = VisibleView::default();
        view.refresh(&host, cwd);
        let got = known_and(Some(&view), ["b/c", "a", "c", "z/y/x/w"]);
        assert_eq!(got, ["a", "c", "a/b", "b/c", "d/e/f", "z/y/x/w"]);
    }
}
