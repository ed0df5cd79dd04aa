//! A one-shot look at what the model would receive for a directory and why:
//! the baseline text plus the fate of every candidate (R-CLI-1, R-CLI-2,
//! R-CLI-6). It runs the same gather and render as the adapter.

use std::collections::HashMap;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider, ProjectRoot,
    provider::{Probe, ReadOutcome, Unavailable},
    root::RootReason,
};
use dsh_instructions_render::{BaselineKind, Budget, Fate, Rendered, render_baseline_text};
use dsh_instructions_state::{
    Config, Digest, ScopeKey, TypedSource,
    identity::{baseline_identity, root_relative_to_cwd},
    scope::ScopeKind,
    source::{Action, Change},
    transition::{ProbeClass, SlotOutcome, select_first_wins},
};

use crate::compose::{BaselinePlan, chain_rel, into_loaded_slots};
use crate::dir_path::DirPath;
use crate::gather::{gather_chain, path_gate};
use crate::imports::{ImportContext, InspectedImport};
use crate::pointer::{POINTER_MAX_BYTES, is_pointer_to};
use crate::scan::{CandidateProbe, DirScan, Gather, SeenFiles, SlotState, display};
use crate::slots::{Gate, Layout};
use crate::user_file::UserFile;

/// What happened to one candidate file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateFate {
    /// Rendered whole.
    Loaded {
        /// Raw content bytes.
        bytes: u64,
    },
    /// Rendered, cut to fit the budget.
    Truncated {
        /// Raw content bytes of the file.
        from: usize,
        /// Raw content bytes kept.
        to: usize,
    },
    /// Loaded but left out by the budget.
    OmittedByBudget {
        /// Raw content bytes.
        bytes: u64,
    },
    /// Present, but an earlier candidate of the same slot won (first-wins).
    ShadowedBy {
        /// Display path of the winner.
        winner: String,
        /// Whether the shadowed file's trimmed content differs from the
        /// winner's (a silently ignored file, R-CLI-6); `None` if unknown.
        differs: Option<bool>,
    },
    /// Present and shadowed, but a pointer file: at most 512 bytes and
    /// naming the winner (`@AGENTS.md`, "see AGENTS.md"; the exact rule is in
    /// [`crate::report::is_pointer_to`]). Not a silently ignored file (R-CLI-6).
    PointsTo {
        /// Display path of the winner it names.
        winner: String,
    },
    /// Present, but the slot was skipped because an earlier candidate is
    /// unavailable (R-DISC-5: no fall-through).
    SkippedAfterUnavailable {
        /// The unavailable candidate's display path.
        blocker: String,
    },
    /// The same file or the same trimmed content as a broader kept file.
    DuplicateOf {
        /// Display path of the kept file.
        of: String,
    },
    /// Not there (or not a regular file).
    Absent,
    /// Could not be read; see the reason.
    Unavailable {
        /// Why.
        reason: Unavailable,
    },
}

impl CandidateFate {
    /// Whether `dsh-instructions check` should fail because of this fate
    /// (R-CLI-6).
    pub fn is_problem(&self) -> bool {
        match self {
            Self::Truncated { .. }
            | Self::OmittedByBudget { .. }
            | Self::Unavailable { .. }
            | Self::SkippedAfterUnavailable { .. } => true,
            Self::ShadowedBy { differs, .. } => *differs == Some(true),
            Self::Loaded { .. }
            | Self::PointsTo { .. }
            | Self::DuplicateOf { .. }
            | Self::Absent => false,
        }
    }
}

/// One candidate of one directory (or the user-global file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectedCandidate {
    /// Root-relative directory (`.` for the root); `None` for the user-global
    /// file.
    pub dir: Option<String>,
    /// Candidate file name.
    pub name: String,
    /// Display path as the model would see it.
    pub path: String,
    /// Whether the name comes from the local (overlay) list.
    pub local: bool,
    /// Its fate.
    pub fate: CandidateFate,
    /// Its import tree, depth first, when it was read with imports on
    /// (R-IMP-5); empty otherwise.
    pub imports: Vec<InspectedImport>,
}

impl InspectedCandidate {
    /// Whether `check` fails because of this candidate: its own fate, or an
    /// import that should expand and does not (R-CLI-6, R-IMP-5).
    pub fn is_problem(&self) -> bool {
        self.fate.is_problem() || self.imports.iter().any(|i| i.fate.is_problem())
    }
}

/// Everything `explain` and `check` print: the baseline and the fate of
/// every candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// The baseline, as [`crate::Opened::preview`] gives it.
    pub baseline: Preview,
    /// Every candidate, broadest first.
    pub candidates: Vec<InspectedCandidate>,
}

/// What `show` prints: the baseline the model would receive for a
/// directory, without the per-candidate report of [`Inspection`] (which on
/// a deep chain holds every candidate's path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The session cwd.
    pub cwd: Utf8PathBuf,
    /// The project root.
    pub root: Utf8PathBuf,
    /// Why it is the root.
    pub root_reason: RootReason,
    /// The resolved DSH home and its label.
    pub home: DshHome,
    /// The baseline identity (R-STATE-4).
    pub identity: String,
    /// The byte budget.
    pub max_bytes: Budget,
    /// The exact baseline text the model would receive ("" when none).
    pub text: String,
    /// The budget notice line, if any.
    pub notice: Option<String>,
    /// The typed source the baseline message would carry.
    pub source: TypedSource,
}

/// The agent user-level files of `config` for [`preview`] and [`inspect`],
/// which know the DSH home but not the environment: under the default home
/// (`~/.dsh`, R-HOME-3) the OS home is its parent, as for `~/` imports
/// (docs/decisions/0010); under any other home they are unknown and left
/// out. [`crate::MountBuilder::open`] resolves them from the environment for an
/// instance.
fn user_files_of(config: &Config, home: &DshHome) -> Vec<UserFile> {
    let Some(os_home) = (home.label == HomeLabel::Default)
        .then(|| home.path.parent())
        .flatten()
    else {
        return Vec::new();
    };
    config
        .user_instruction_files()
        .iter()
        .filter_map(|label| {
            let rest = label.strip_prefix("~/")?;
            Some(UserFile {
                path: os_home.join(rest),
                label: label.clone(),
            })
        })
        .collect()
}

/// The gathered chain, shared by [`preview`] and [`inspect`]; its render
/// is [`Gathered::plan`], which borrows the scans.
struct Gathered {
    found: ProjectRoot,
    budget: Budget,
    identity: String,
    scans: Vec<DirScan>,
    /// The path-wide fallback gate the chain gave.
    gate: Gate,
}

async fn gather_baseline(
    gather: &Gather<'_>,
    home: &DshHome,
    cwd: &Utf8Path,
    found: &ProjectRoot,
) -> Result<Gathered, Cancelled> {
    let config = gather.config;
    let found = found.clone();
    let budget = config.max_bytes();
    let chain = chain_rel(&found.root, cwd);
    let import_ctx = config
        .imports()
        .then(|| ImportContext::new(&found.root, home).refusing(config));
    let mut gather = Gather {
        imports: import_ctx.as_ref(),
        ..*gather
    };
    gather.gate = path_gate(&gather, &found.root, &chain).await?;
    let gather = &gather;
    // The scans hold the chain's paths once ([`DirPath::chain`]); its list
    // of keys is not kept through the pass (issue 35 item 3).
    let paths = DirPath::chain(&found.root, &chain);
    drop(chain);
    let scans = gather_chain(
        gather,
        home,
        &found.root,
        paths,
        Some(budget.max_bytes()),
        &mut SeenFiles::default(),
    )
    .await?;
    let identity = baseline_identity(
        config,
        &root_relative_to_cwd(found.root.as_str(), cwd.as_str()),
    );
    Ok(Gathered {
        found,
        budget,
        identity,
        scans,
        gate: gather.gate,
    })
}

impl Gathered {
    /// The baseline over the scans.
    fn plan(&self) -> BaselinePlan<'_> {
        // `show` and `explain` print the text: no blocks (issue 46 item 4).
        BaselinePlan::rendered_by(
            &self.scans,
            BaselineKind::Normal,
            self.budget,
            render_baseline_text,
        )
    }

    /// The preview from the plan's render (`unread` and `rendered` of
    /// [`Gathered::plan`]), taking the pass apart as it goes: the rendered
    /// blocks (a second copy of the text) are dropped before the changes
    /// are built, and each change takes its file's scope out of the scans,
    /// whose text goes with them. On a chain shown whole the text is
    /// megabytes, and these copies were alive together at the process's
    /// peak (issue 46 item 4).
    fn preview(self, unread: usize, rendered: Rendered, cwd: &Utf8Path, home: &DshHome) -> Preview {
        let Self {
            found,
            budget,
            identity,
            scans,
            gate: _,
        } = self;
        let Rendered {
            text,
            blocks,
            fates,
            notice,
            intro: _,
        } = rendered;
        drop(blocks);
        let file_fates = fates.get(unread..).unwrap_or(&[]);
        let source = if text.is_empty() {
            TypedSource::default()
        } else {
            let changes = into_loaded_slots(scans)
                .zip(file_fates)
                .filter(|(_, f)| f.is_represented())
                .map(|((scope, f), _)| Change {
                    action: Action::Set,
                    scope,
                    path: f.display.to_string(),
                    previous_path: None,
                    digest: Some(f.digest),
                })
                .collect();
            TypedSource {
                baseline: true,
                baseline_identity: Some(identity.clone()),
                changes,
            }
        };
        Preview {
            cwd: cwd.to_owned(),
            root: found.root,
            root_reason: found.reason,
            home: home.clone(),
            identity,
            max_bytes: budget,
            notice,
            source,
            text,
        }
    }
}

/// Inspects the baseline for `cwd` (see the module docs). Without
/// `report`, the baseline alone (`show`): no candidate is described.
pub(crate) async fn inspect(
    provider: &dyn FsProvider,
    config: &Config,
    home: &DshHome,
    cwd: &Utf8Path,
    root: &ProjectRoot,
    cancel: &CancellationToken,
    report: bool,
) -> Result<Inspection, Cancelled> {
    let layout = Layout::new(config);
    let user_files = user_files_of(config, home);
    let gather = Gather {
        provider,
        config,
        cancel,
        cache: None,
        visible: None,
        report,
        imports: None,
        layout: &layout,
        gate: Gate::Open,
        user_files: &user_files,
        rules: None,
    };
    let gathered = gather_baseline(&gather, home, cwd, root).await?;
    let plan = gathered.plan();
    let mut candidates = Vec::new();
    if report {
        let fates: HashMap<ScopeKey, Fate> = plan
            .files
            .iter()
            .zip(plan.file_fates())
            .map(|(&(s, _), f)| (s.clone(), *f))
            .collect();
        let user_label = home.user_global_label();
        let gather = Gather {
            gate: gathered.gate,
            ..gather
        };
        for scan in &gathered.scans {
            describe(&gather, scan, &user_label, &fates, &mut candidates).await?;
        }
    }
    let BaselinePlan {
        unread, rendered, ..
    } = plan;
    Ok(Inspection {
        baseline: gathered.preview(unread, rendered, cwd, home),
        candidates,
    })
}

fn probe_fate(probe: &Probe) -> CandidateFate {
    match probe {
        Probe::Present(_) | Probe::Absent => CandidateFate::Absent,
        Probe::Unavailable(reason) => CandidateFate::Unavailable {
            reason: reason.clone(),
        },
    }
}

async fn describe(
    gather: &Gather<'_>,
    scan: &DirScan,
    user_label: &str,
    fates: &HashMap<ScopeKey, Fate>,
    out: &mut Vec<InspectedCandidate>,
) -> Result<(), Cancelled> {
    let user_file = scan.slots.first().and_then(|s| match s.scope.kind() {
        ScopeKind::UserFile { path } => Some(path.to_owned()),
        // Shown by its absolute path, as Claude Code shows it (R-HOOK-8).
        ScopeKind::Ancestor { dir, name } => Some(Utf8Path::new(dir).join(name).into_string()),
        _ => None,
    });
    let path_of = |c: &CandidateProbe| match (scan.rel(), &user_file) {
        (Some(rel), _) => display(rel, &c.name).to_string(),
        (None, Some(label)) => label.clone(),
        (None, None) => user_label.to_owned(),
    };
    // Candidate groups, each competing for one slot, with the slot's
    // winner (an index into the group).
    let classes: Vec<ProbeClass> = scan
        .candidates
        .iter()
        .map(|c| match c.probe {
            Probe::Present(_) => ProbeClass::Present,
            Probe::Absent => ProbeClass::Absent,
            Probe::Unavailable(_) => ProbeClass::Unavailable,
        })
        .collect();
    type Group<'c> = (ScopeKey, Vec<&'c CandidateProbe>, Option<usize>);
    let groups: Vec<Group<'_>> = match scan.rel() {
        None => {
            let all: Vec<&CandidateProbe> = scan.candidates.iter().collect();
            let winner = match select_first_wins(&classes) {
                SlotOutcome::Winner { candidate } => Some(candidate),
                _ => None,
            };
            let scope = scan
                .slots
                .first()
                .map_or_else(ScopeKey::user_global, |s| s.scope.clone());
            vec![(scope, all, winner)]
        }
        Some(rel) => gather
            .layout
            .slots
            .iter()
            .filter(|(_, rule)| rule.end() <= classes.len())
            .map(|(slot, rule)| {
                let members = rule.names();
                let winner = match rule.select(&classes, gather.gate) {
                    SlotOutcome::Winner { candidate } => {
                        members.iter().position(|&i| i == candidate)
                    }
                    _ => None,
                };
                let group = members.iter().map(|&i| &scan.candidates[i]).collect();
                (ScopeKey::project(rel, slot), group, winner)
            })
            .collect(),
    };
    for (scope, group, winner) in groups {
        let blocker = group
            .iter()
            .find(|c| matches!(c.probe, Probe::Unavailable(_)))
            .map(|c| path_of(c));
        let state = scan
            .slots
            .iter()
            .find(|s| s.scope == scope)
            .map(|s| &s.state);
        let mut winner_digest: Option<Digest> = None;
        for (i, c) in group.iter().enumerate() {
            let imports = match state {
                Some(SlotState::Loaded(f)) if Some(i) == winner => f.imports.clone(),
                _ => Vec::new(),
            };
            let fate = if Some(i) == winner {
                match state {
                    Some(SlotState::Duplicate { of, trimmed, .. }) => {
                        winner_digest = *trimmed;
                        CandidateFate::DuplicateOf { of: of.to_string() }
                    }
                    Some(SlotState::Loaded(f)) => {
                        // A shadowed sibling holds raw text: compare it with
                        // the winner's own text, not its expanded content.
                        winner_digest = Some(f.own_trimmed.unwrap_or(f.trimmed));
                        match fates.get(&scope) {
                            Some(Fate::Omitted) => {
                                CandidateFate::OmittedByBudget { bytes: f.bytes }
                            }
                            Some(Fate::Truncated { original, kept }) => CandidateFate::Truncated {
                                from: *original,
                                to: *kept,
                            },
                            _ => CandidateFate::Loaded { bytes: f.bytes },
                        }
                    }
                    Some(SlotState::Unread(f)) => CandidateFate::OmittedByBudget {
                        bytes: f.present.size,
                    },
                    Some(SlotState::Unavailable(reason)) => CandidateFate::Unavailable {
                        reason: reason.clone(),
                    },
                    Some(SlotState::Absent) | None => CandidateFate::Absent,
                }
            } else {
                match (&c.probe, winner, &blocker) {
                    (Probe::Present(shadowed), Some(w), _) if i > w => {
                        let same_file = matches!(
                            &group[w].probe,
                            Probe::Present(winner) if winner.identity == shadowed.identity
                        );
                        if same_file {
                            // A mirror (link to the winner) cannot differ: no read.
                            CandidateFate::ShadowedBy {
                                winner: path_of(group[w]),
                                differs: Some(false),
                            }
                        } else {
                            let abs = scan.abs().join(&c.name);
                            let winner = (path_of(group[w]), group[w].name.as_str());
                            shadowed_fate(gather, &abs, shadowed.size, winner, winner_digest)
                                .await?
                        }
                    }
                    (Probe::Present(_), None, Some(b)) => {
                        CandidateFate::SkippedAfterUnavailable { blocker: b.clone() }
                    }
                    (p, _, _) => probe_fate(p),
                }
            };
            out.push(InspectedCandidate {
                dir: scan.rel().map(str::to_owned),
                name: c.name.clone(),
                path: path_of(c),
                local: c.local,
                fate,
                imports,
            });
        }
    }
    Ok(())
}

/// The fate of a present candidate shadowed by a different file: a pointer
/// to the winner (R-CLI-6), or shadowed with its content compared to the
/// winner's. The file is read only when that can tell something: it may be
/// a pointer (probed size at most 512 bytes) or the winner's digest is known.
async fn shadowed_fate(
    gather: &Gather<'_>,
    abs: &Utf8Path,
    probed_size: u64,
    (winner, winner_name): (String, &str),
    winner_digest: Option<Digest>,
) -> Result<CandidateFate, Cancelled> {
    if probed_size > POINTER_MAX_BYTES && winner_digest.is_none() {
        return Ok(CandidateFate::ShadowedBy {
            winner,
            differs: None,
        });
    }
    let read = gather
        .provider
        .read_text(abs, gather.config.max_source_bytes(), gather.cancel)
        .await?;
    Ok(match read {
        ReadOutcome::Loaded(t) if is_pointer_to(&t.text, t.bytes_read, winner_name) => {
            CandidateFate::PointsTo { winner }
        }
        ReadOutcome::Loaded(t) => CandidateFate::ShadowedBy {
            winner,
            differs: winner_digest.map(|wd| Digest::of_trimmed(&t.text) != wd),
        },
        _ => CandidateFate::ShadowedBy {
            winner,
            differs: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::Preset;
    use rstest::rstest;

    // `show`/`explain` know only the DSH home: the user files resolve under
    // the default home alone (docs/decisions/0016).
    #[rstest]
    #[case::default_home(HomeLabel::Default, Some("/home/u/.claude/CLAUDE.md"))]
    #[case::other_home(HomeLabel::EnvVar, None)]
    fn user_files_resolve_under_the_default_home_only(
        #[case] label: HomeLabel,
        #[case] want: Option<&str>,
    ) {
        let home = DshHome {
            path: "/home/u/.dsh".into(),
            label,
        };
        let got = user_files_of(&Config::preset(Preset::Claude), &home);
        let paths: Vec<&str> = got.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, want.into_iter().collect::<Vec<_>>());
        assert!(user_files_of(&Config::preset(Preset::Dsh), &home).is_empty());
    }
}
