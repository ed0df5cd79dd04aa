//! The passes of a composition over sets of directories: which directories
//! are probed and read, and in how many provider calls. Each pass is async and cancellable and
//! mutates nothing but the pass-local [`SeenFiles`], so a cancelled
//! composition leaves no trace (R-DISC-8). The per-directory work (slot
//! winners, dedup, reads) is in [`crate::scan`]; what to do with the result
//! is decided in [`crate::compose`].

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::DshHome;
use dsh_instructions_discovery::{Cancelled, provider::Probe};
use dsh_instructions_render::Budget;
use dsh_instructions_state::{
    ScopeKey,
    config::{CLAUDE_DIR_FILE, RuleFormat},
    transition::ProbeClass,
};

use crate::dir_id::DirId;
use crate::dir_path::{DirPath, dir_abs};
use crate::rule_slots::{add_rule_slots, shown_rules, user_rules_scan};
use crate::scan::{
    DirScan, Gather, SeenFiles, SlotKeys, SlotState, class as probe_class, identity_dedup,
};
use crate::settle::SettleMemo;
use crate::slots::Gate;

/// What [`probe_dirs`] found in a set of directories.
#[derive(Debug, Default)]
pub(crate) struct DirProbes {
    /// One list per directory, one probe per logical name.
    pub probes: Vec<Vec<Probe>>,
    /// One flag per directory: every rules directory of the configured
    /// formats (R-RULE-1) was seen missing in the same provider call, so
    /// there is nothing to list there. `false` when rules are off, or when
    /// one may be there (or the provider cannot tell).
    pub rules_missing: Vec<bool>,
}

/// Probes a set of directories in one provider call (none for an empty
/// set), one probe per logical name ([`crate::slots::Layout`]).
///
/// The `.claude/CLAUDE.md` rule is probed as `CLAUDE.md` of the
/// directory's `.claude` subdirectory, listed right after the directory in
/// the same call: a provider's directory stamps (docs/decisions/0007) only
/// vouch for one directory's own entries, so a name with `/` must never
/// reach them. With `rules` (a pass that loads rules), each configured
/// format's rules directory is listed after those, so that a provider that
/// can tell a missing directory from what it already proves (the disk
/// provider's remembered stamps) says "no rules here" with no lookup
/// (R-HOOK-6, decision 0075).
pub(crate) async fn probe_dirs(
    g: &Gather<'_>,
    dirs: &[Utf8PathBuf],
    names: &[String],
    rules: bool,
) -> Result<DirProbes, Cancelled> {
    if dirs.is_empty() {
        return Ok(DirProbes::default());
    }
    let formats: &[RuleFormat] = if rules { g.config.rule_formats() } else { &[] };
    let rule = names.iter().position(|n| n == CLAUDE_DIR_FILE);
    // A rules directory inside `.claude/` while `.claude` is in the batch
    // anyway (Claude's `.claude/rules`): missing when `.claude` is, with
    // no entry of its own (one path per known directory fewer to build
    // and prove); when `.claude` is there, it is listed as before.
    let under_claude = |r: &str| {
        rule.is_some()
            && r.strip_prefix(CLAUDE_SUBDIR)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let rule_dirs: Vec<&str> = formats
        .iter()
        .map(|f| f.rules_dir())
        .filter(|r| !under_claude(r))
        .collect();
    let with_claude = formats.iter().any(|f| under_claude(f.rules_dir()));
    if rule.is_none() && rule_dirs.is_empty() {
        let probes = g.provider.probe_dirs(dirs, names, g.cancel).await?;
        let rules_missing = vec![false; probes.len()];
        return Ok(DirProbes {
            probes,
            rules_missing,
        });
    }
    let mut physical: Vec<String> = names
        .iter()
        .filter(|n| *n != CLAUDE_DIR_FILE)
        .cloned()
        .collect();
    let claude_md = match rule {
        None => 0,
        Some(_) => match physical.iter().position(|n| n == CLAUDE_MD) {
            Some(i) => i,
            None => {
                physical.push(CLAUDE_MD.to_owned());
                physical.len() - 1
            }
        },
    };
    let stride = 1 + usize::from(rule.is_some()) + rule_dirs.len();
    let mut all: Vec<Utf8PathBuf> = Vec::with_capacity(dirs.len() * stride);
    for d in dirs {
        all.push(d.clone());
        if rule.is_some() {
            all.push(d.join(CLAUDE_SUBDIR));
        }
        all.extend(rule_dirs.iter().map(|r| d.join(r)));
    }
    let probed = g
        .provider
        .probe_dirs_missing(&all, &physical, g.cancel)
        .await?;
    let mut out = DirProbes {
        probes: Vec::with_capacity(dirs.len()),
        rules_missing: Vec::with_capacity(dirs.len()),
    };
    let mut it = probed.probes.into_iter();
    for i in 0..dirs.len() {
        let Some(own) = it.next() else { break };
        let sub = if rule.is_some() { it.next() } else { None };
        for _ in &rule_dirs {
            it.next();
        }
        // The flags of this directory's rules directories, and of its
        // `.claude` for those inside it (a provider that answered too few
        // says nothing for the rest: not missing).
        let flags = probed
            .missing
            .get(i * stride + stride - rule_dirs.len()..(i + 1) * stride);
        let claude_gone = !with_claude || probed.missing.get(i * stride + 1) == Some(&true);
        out.rules_missing.push(
            !formats.is_empty() && claude_gone && flags.is_some_and(|f| f.iter().all(|&m| m)),
        );
        let merged = match rule {
            None => own,
            Some(rule) => {
                let mut own = own.into_iter();
                let mut merged = Vec::with_capacity(names.len());
                for i in 0..names.len() {
                    let probe = if i == rule {
                        sub.as_ref().and_then(|s| s.get(claude_md)).cloned()
                    } else {
                        own.next()
                    };
                    // A provider that answered too few probes answered
                    // nothing for the rest: the caller treats a short list
                    // as incomplete.
                    let Some(probe) = probe else { break };
                    merged.push(probe);
                }
                merged
            }
        };
        out.probes.push(merged);
    }
    Ok(out)
}

/// The path-wide fallback gate of a pass (`fallback_scope: path`, R-HOOK-8):
/// the chain's probes decide whether the fallback list may load anywhere,
/// in the chain and in the directories below the cwd alike (Claude Code
/// attaches a nested `AGENTS.md` only in fallback mode). One extra probe
/// call, made only when the gate applies; [`Gate::Open`] otherwise.
pub(crate) async fn path_gate(
    g: &Gather<'_>,
    root: &Utf8Path,
    chain: &[String],
) -> Result<Gate, Cancelled> {
    if !g.layout.path_gated(g.config) {
        return Ok(Gate::Open);
    }
    let dirs: Vec<Utf8PathBuf> = chain.iter().map(|rel| dir_abs(root, rel)).collect();
    let probes = probe_dirs(g, &dirs, &g.layout.names, false).await?.probes;
    if probes.len() != dirs.len() || probes.iter().any(|p| p.len() != g.layout.names.len()) {
        return Ok(Gate::Unknown);
    }
    let classes: Vec<Vec<ProbeClass>> = probes
        .iter()
        .map(|p| p.iter().map(probe_class).collect())
        .collect();
    Ok(Gate::from_chain(
        g.layout,
        classes.iter().map(Vec::as_slice),
    ))
}

/// The file `claude_dir` reads in a directory's [`CLAUDE_SUBDIR`].
const CLAUDE_MD: &str = "CLAUDE.md";
/// The subdirectory of the `.claude/CLAUDE.md` rule.
const CLAUDE_SUBDIR: &str = ".claude";

/// The scans of the user-global file, of the agent user-level files, of
/// the user's rules (an empty scan [`add_rule_slots`] fills) and of the
/// ancestor files above `root` (in that order: the scopes outside the
/// project, broadest first, R-RULE-8), and the probes of `dirs`, all at
/// once (on disk, blocking tasks that overlap).
pub(crate) async fn probe_with_user_global(
    g: &Gather<'_>,
    home: &DshHome,
    root: &Utf8Path,
    dirs: &[Utf8PathBuf],
    names: &[String],
) -> Result<(Vec<DirScan>, DirProbes), Cancelled> {
    let (file, label) = (home.user_global_file(), home.user_global_label());
    let (ug, users, ancestors, probes) = tokio::join!(
        g.user_global(&file, &label, ScopeKey::user_global()),
        g.user_files(),
        g.ancestors(root),
        probe_dirs(g, dirs, names, g.rules.is_some())
    );
    let mut scans = vec![ug?];
    scans.extend(users?);
    scans.extend(user_rules_scan(g, home, root));
    scans.extend(ancestors?);
    Ok((scans, probes?))
}

/// Probes (in one provider call) and reads a set of directories, in section
/// order; identity dedup against `seen` runs before the reads, so duplicates
/// are never read. Directories whose probes show exactly the visible state
/// ([`Gather::settled`]) are left out of the result: they have nothing to
/// report.
pub(crate) async fn gather_dirs(
    g: &Gather<'_>,
    root: &Utf8Path,
    rels: &[&str],
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &mut SeenFiles,
    memo: Option<&SettleMemo>,
) -> Result<Vec<DirScan>, Cancelled> {
    let dirs: Vec<Utf8PathBuf> = rels.iter().map(|rel| dir_abs(root, rel)).collect();
    let names = g.names();
    let probes = probe_dirs(g, &dirs, &names, g.rules.is_some()).await?;
    process_dirs(g, rels, &dirs, names, probes, skip, seen, memo).await
}

/// The part of [`gather_dirs`] after the probes. With `memo` (the lane's,
/// whose visible state and cache `g` holds), a directory settled before
/// is settled from its record (decision 0093).
#[allow(clippy::too_many_arguments)] // one pass's context, each used once
pub(crate) async fn process_dirs(
    g: &Gather<'_>,
    rels: &[&str],
    dirs: &[Utf8PathBuf],
    names: Vec<String>,
    probes: DirProbes,
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &mut SeenFiles,
    memo: Option<&SettleMemo>,
) -> Result<Vec<DirScan>, Cancelled> {
    let mut scans = Vec::with_capacity(dirs.len());
    let mut keys = SlotKeys::default();
    // A directory a shown rule comes from never settles on its probes
    // alone: a rule of it that is gone must be removed (R-RULE-4).
    let ruled = g
        .rules
        .map(|attach| shown_rules(attach.visible))
        .unwrap_or_default();
    // Copilot's root file is no rules directory's: the root never settles
    // on its rules.
    let root_file = g.config.rule_formats().contains(&RuleFormat::Copilot);
    let missing = probes
        .rules_missing
        .iter()
        .copied()
        .chain(std::iter::repeat(false));
    {
        // Held for the loop alone: nothing in it awaits.
        let mut records = memo.map(SettleMemo::lock);
        for (((rel, abs), probes), rules_missing) in
            rels.iter().zip(dirs).zip(probes.probes).zip(missing)
        {
            let rules_settled =
                rules_missing && !ruled.contains_key(&Some(*rel)) && !(root_file && *rel == ".");
            let memo = records
                .as_deref_mut()
                .and_then(|r| Some((r, DirId::of(rel)?)));
            if g.settled(
                rel,
                &names,
                &probes,
                rules_settled,
                skip,
                seen,
                &mut keys,
                memo,
            ) {
                continue;
            }
            let mut scan = g.slots(DirPath::known(abs, rel), &names, probes, skip);
            scan.rules_missing = rules_missing;
            // Identity dedup needs no content, so every read can wait for
            // one batch after it.
            identity_dedup(&mut scan, seen);
            scans.push(scan);
        }
    }
    let all: Vec<usize> = (0..scans.len()).collect();
    g.read_scans(&mut scans, &all, seen).await?;
    seen.demote_failed_duplicates(&mut scans);
    if let Some(attach) = g.rules {
        add_rule_slots(g, &mut scans, attach, skip, seen).await?;
    }
    Ok(scans)
}

/// Gathers the user-global file and the root-to-cwd chain. With a budget,
/// reads from the most specific directory outward and stops once the kept
/// content alone exceeds it: broader files would be omitted anyway (R-REN-6
/// step 2), so they stay unread.
pub(crate) async fn gather_chain(
    g: &Gather<'_>,
    home: &DshHome,
    root: &Utf8Path,
    chain: Vec<DirPath>,
    budget: Option<u64>,
    seen: &mut SeenFiles,
) -> Result<Vec<DirScan>, Cancelled> {
    let mut scans = Vec::with_capacity(chain.len() + 1);
    let dirs: Vec<Utf8PathBuf> = chain.iter().map(|d| d.abs().to_owned()).collect();
    let names = g.names();
    let (users, probes) = probe_with_user_global(g, home, root, &dirs, &names).await?;
    scans.extend(users);
    let missing = probes
        .rules_missing
        .iter()
        .copied()
        .chain(std::iter::repeat(false));
    // The probe batch needed a path of its own per directory; the scans
    // hold them as prefixes of the deepest (issue 35 item 3).
    drop(dirs);
    for ((path, probes), rules_missing) in chain.into_iter().zip(probes.probes).zip(missing) {
        let mut scan = g.slots(path, &names, probes, &|_| false);
        scan.rules_missing = rules_missing;
        scans.push(scan);
    }
    if g.imports.is_some() {
        for scan in &scans {
            seen.note_own(scan);
        }
    }
    for scan in &mut scans {
        identity_dedup(scan, seen);
    }
    read_within_budget(g, &mut scans, budget, seen).await?;
    seen.demote_failed_duplicates(&mut scans);
    if let Some(attach) = g.rules {
        add_rule_slots(g, &mut scans, attach, &|_| false, seen).await?;
    }
    Ok(scans)
}

impl Gather<'_> {
    /// The root-to-cwd `chain` (root-relative keys) as a baseline renders
    /// it: [`gather_chain`] within the budget's bytes (R-RT-8).
    pub(crate) async fn baseline_chain(
        &self,
        home: &DshHome,
        root: &Utf8Path,
        chain: &[String],
        budget: Budget,
        seen: &mut SeenFiles,
    ) -> Result<Vec<DirScan>, Cancelled> {
        let dirs = DirPath::chain(root, chain);
        gather_chain(self, home, root, dirs, Some(budget.max_bytes()), seen).await
    }
}

/// Bytes a scan would keep if its unread winners were read, by their probed
/// sizes.
fn predicted_bytes(scan: &DirScan) -> u64 {
    scan.slots
        .iter()
        .map(|s| match &s.state {
            SlotState::Unread(f) => f.present.size,
            SlotState::Loaded(f) => f.bytes,
            _ => 0,
        })
        .sum()
}

/// Reads scans from the last (most specific) backwards and stops before a
/// scan once the content kept by the ones after it exceeds `budget`. The
/// scans that probes predict are needed are read in one provider call;
/// should a file have grown since its probe, scans read beyond the stop are
/// put back as they were, so the result is that of reading one by one.
///
/// With imports on, what a file keeps includes what it imports, which no
/// probe tells: the nearest scan is read alone first, and each later scan
/// is predicted at its probed size plus the largest growth by imports seen
/// so far. Predicted at their own sizes only, a chain whose files import
/// read every file the budget then dropped, and all their imports.
async fn read_within_budget(
    g: &Gather<'_>,
    scans: &mut [DirScan],
    budget: Option<u64>,
    seen: &mut SeenFiles,
) -> Result<(), Cancelled> {
    let order: Vec<usize> = (0..scans.len()).rev().collect();
    let over = |kept: u64| budget.is_some_and(|b| kept > b);
    let learn = budget.is_some() && g.imports.is_some();
    // The largest growth by imports of a scan read so far; `None` before
    // the first read, while nothing can be predicted beyond one scan.
    let mut growth: Option<u64> = if learn { None } else { Some(0) };
    let mut kept = 0u64;
    let mut next = 0;
    while next < order.len() && !over(kept) {
        let mut predicted = kept;
        let mut end = next;
        let mut own: Vec<u64> = Vec::new();
        while end < order.len() && !over(predicted) {
            let bytes = predicted_bytes(&scans[order[end]]);
            predicted += bytes + growth.unwrap_or(0);
            own.push(bytes);
            end += 1;
            if growth.is_none() {
                break;
            }
        }
        let batch = &order[next..end];
        // A read changes only slot states: those are what a scan read past
        // the budget gets back. A copy of the whole scan also copied its
        // scope keys, a deep chain's paths once more (issue 46 item 4).
        let before: Vec<Vec<SlotState>> = match budget {
            Some(_) => batch
                .iter()
                .map(|&i| scans[i].slots.iter().map(|s| s.state.clone()).collect())
                .collect(),
            None => Vec::new(),
        };
        g.read_scans(scans, batch, seen).await?;
        for (k, &i) in batch.iter().enumerate() {
            if over(kept) {
                for (&j, old) in batch[k..].iter().zip(before.into_iter().skip(k)) {
                    for (slot, state) in scans[j].slots.iter_mut().zip(old) {
                        if let SlotState::Unread(f) = &state {
                            seen.forget_failure(&f.present.identity);
                        }
                        slot.state = state;
                    }
                }
                return Ok(());
            }
            let bytes = scans[i].kept_bytes();
            if learn {
                let grew = bytes.saturating_sub(own[k]);
                growth = Some(growth.map_or(grew, |m| m.max(grew)));
            }
            kept += bytes;
        }
        next = end;
    }
    Ok(())
}
