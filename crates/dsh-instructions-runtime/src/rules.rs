//! What the rule files around a cwd are (SPEC §14), for `explain` and
//! `check`: every rules directory of the configured formats in the chain
//! root→cwd (and in the directories a touch would reconcile), listed and
//! read through the provider (R-RULE-1), each file parsed (R-RULE-2) and
//! matched against touches (R-RULE-3). It composes nothing: it reports
//! what each rule is and what would attach it.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FsProvider,
    listing::{RuleFileProblem, list_rule_files},
    provider::{FileIdentity, PathKind, ReadOutcome, Unavailable},
};
use dsh_instructions_state::{
    Config, ScopeKey,
    config::RuleFormat,
    rules::{RuleGlobs, RuleKind, parse_rule},
    scope::section_order,
};

use crate::compose::chain_rel;

/// The user's Claude rules directory, below the OS home (R-RULE-1).
const USER_RULES: &str = ".claude/rules";

/// One rule file as [`crate::Opened::inspect_rules`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectedRule {
    /// Display path (R-RULE-8): project-relative, or `~/.claude/rules/…`.
    pub path: String,
    /// D, the directory holding its rules directory (`.` for the root);
    /// `None` for the user's rules.
    pub dir: Option<String>,
    /// Its format.
    pub format: RuleFormat,
    /// What it is.
    pub fate: RuleFate,
    /// Whether it is attached at the cwd: an always-on rule of the chain
    /// root→cwd (or of the user) is; a path-scoped rule never is before a
    /// touch.
    pub attached_at_cwd: bool,
    /// The touches given to [`crate::Opened::inspect_rules`] that would attach it: a
    /// matching file for a path-scoped rule, any path under a nested D for
    /// an always-on rule not attached at the cwd (as given, in order).
    pub attached_by: Vec<Utf8PathBuf>,
}

/// What a rule file is (R-RULE-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleFate {
    /// Loads with its directory's files.
    AlwaysOn,
    /// Attached by a touch of a matching file.
    PathScoped {
        /// The kept globs, as written.
        globs: Vec<String>,
    },
    /// Never loaded ("manual").
    Manual,
    /// Cannot load: a read failure, or front matter that names `field`.
    Unavailable {
        /// The front matter key at fault (`None` for a read failure).
        field: Option<String>,
        /// Why, in words.
        reason: String,
    },
}

/// The rules around one cwd, from [`crate::Opened::inspect_rules`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InspectedRules {
    /// Every rule file found, in section order (R-RULE-8).
    pub rules: Vec<InspectedRule>,
    /// Globs dropped because they do not compile, each line naming the
    /// file and field; the rule stays usable.
    pub notes: Vec<String>,
    /// Files the listing skipped or could not classify (its bounds, FIFOs,
    /// links out of the trusted roots, loops), each line naming the file.
    pub skipped: Vec<String>,
}

impl InspectedRules {
    /// Whether some rule file cannot load: an unavailable rule or a file
    /// the listing skipped (what `check` fails on).
    pub fn has_unloadable(&self) -> bool {
        self.rules
            .iter()
            .any(|r| matches!(r.fate, RuleFate::Unavailable { .. }))
            || !self.skipped.is_empty()
    }
}

/// A rules directory to list: where, for which D, in which format.
struct Place {
    abs: Utf8PathBuf,
    /// Display prefix of its files, ending in `/`.
    shown: String,
    dir: Option<String>,
    /// D's absolute path (the project root for the user's rules: their
    /// globs are relative to it, R-RULE-8).
    base: Utf8PathBuf,
    format: RuleFormat,
    in_chain: bool,
    /// The user's directory is skipped, not reported, when it lies outside
    /// the trusted roots (no `~/.claude/CLAUDE.md` configured).
    user: bool,
}

/// One listed file waiting for its read.
struct Found<'a> {
    place: &'a Place,
    rel: String,
}

/// Lists, reads and parses every rule file of the configured formats
/// (`rule_formats`, R-CFG-12) around `cwd`: in each directory of the chain
/// root→cwd, the user's `~/.claude/rules/` (for `claude`, where the OS home
/// is the default home's parent) and Copilot's root file; plus, for every
/// path in `touches` (absolute), the directories between the cwd's chain
/// and that path, which a touch would reconcile. Nothing when
/// `rule_formats` is empty.
pub(crate) async fn inspect_rules(
    provider: &dyn FsProvider,
    config: &Config,
    home: &DshHome,
    cwd: &Utf8Path,
    root: &Utf8Path,
    touches: &[Utf8PathBuf],
    cancel: &CancellationToken,
) -> Result<InspectedRules, Cancelled> {
    let mut out = InspectedRules::default();
    if config.rule_formats().is_empty() {
        return Ok(out);
    }
    let root = root.to_owned();
    let chain = chain_rel(&root, cwd);
    let mut dirs: Vec<(String, bool)> = chain.iter().map(|d| (d.clone(), true)).collect();
    if !touches.is_empty() {
        let kinds = provider.path_kinds(touches, cancel).await?;
        for (touch, kind) in touches.iter().zip(&kinds) {
            let Ok(rest) = touch.strip_prefix(&root) else {
                continue;
            };
            let mut comps: Vec<&str> = rest.components().map(|c| c.as_str()).collect();
            if *kind != PathKind::Directory {
                comps.pop();
            }
            let mut acc = String::new();
            for c in comps {
                if !acc.is_empty() {
                    acc.push('/');
                }
                acc.push_str(c);
                if !dirs.iter().any(|(d, _)| *d == acc) {
                    dirs.push((acc.clone(), false));
                }
            }
        }
    }
    let mut places = Vec::new();
    if config.rule_formats().contains(&RuleFormat::Claude)
        && home.label == HomeLabel::Default
        && let Some(os_home) = home.path.parent()
    {
        places.push(Place {
            abs: os_home.join(USER_RULES),
            shown: format!("~/{USER_RULES}/"),
            dir: None,
            base: root.clone(),
            format: RuleFormat::Claude,
            in_chain: true,
            user: true,
        });
    }
    for (dir, in_chain) in &dirs {
        let base = if dir == "." {
            root.clone()
        } else {
            root.join(dir)
        };
        for &format in config.rule_formats() {
            let prefix = if dir == "." {
                String::new()
            } else {
                format!("{dir}/")
            };
            places.push(Place {
                abs: base.join(format.rules_dir()),
                shown: format!("{prefix}{}/", format.rules_dir()),
                dir: Some(dir.clone()),
                base: base.clone(),
                format,
                in_chain: *in_chain,
                user: false,
            });
        }
    }
    let mut files: Vec<Found<'_>> = Vec::new();
    for place in &places {
        let listed = list_rule_files(
            provider,
            &place.abs,
            place.format.file_suffix(),
            place.format.recursive(),
            cancel,
        )
        .await?;
        for problem in listed.problems {
            if place.user
                && matches!(
                    &problem,
                    RuleFileProblem::Unavailable { rel, reason: Unavailable::OutsideTrustedRoots }
                        if rel == "."
                )
            {
                continue;
            }
            out.skipped.push(problem_text(&place.shown, &problem));
        }
        files.extend(listed.files.into_iter().map(|rel| Found { place, rel }));
    }
    // Copilot's root file: always on, at the project root only.
    let copilot_root = Place {
        abs: root.join(".github"),
        shown: ".github/".to_owned(),
        dir: Some(".".to_owned()),
        base: root.clone(),
        format: RuleFormat::Copilot,
        in_chain: true,
        user: false,
    };
    if config.rule_formats().contains(&RuleFormat::Copilot) {
        files.push(Found {
            place: &copilot_root,
            rel: "copilot-instructions.md".to_owned(),
        });
    }
    let paths: Vec<Utf8PathBuf> = files.iter().map(|f| f.place.abs.join(&f.rel)).collect();
    let reads = provider
        .read_many(&paths, config.max_source_bytes(), cancel)
        .await?;
    let mut kept: Vec<(InspectedRule, Option<FileIdentity>)> = Vec::new();
    for (f, read) in files.iter().zip(reads) {
        let path = format!("{}{}", f.place.shown, f.rel);
        let identity = match &read {
            ReadOutcome::Loaded(loaded) => Some(loaded.identity.clone()),
            _ => None,
        };
        let root_file = std::ptr::eq(f.place, &copilot_root);
        let (fate, globs) = match read {
            ReadOutcome::Absent => continue,
            ReadOutcome::Unavailable(reason) => (
                RuleFate::Unavailable {
                    field: None,
                    reason: reason.to_string(),
                },
                RuleGlobs::default(),
            ),
            ReadOutcome::Loaded(_) if root_file => (RuleFate::AlwaysOn, RuleGlobs::default()),
            ReadOutcome::Loaded(loaded) => match parse_rule(f.place.format, &loaded.text) {
                Err(e) => (
                    RuleFate::Unavailable {
                        field: Some(e.field().to_owned()),
                        reason: e.to_string(),
                    },
                    RuleGlobs::default(),
                ),
                Ok(parsed) => {
                    for d in &parsed.diagnostics {
                        out.notes.push(format!("{path}: {d}"));
                    }
                    let fate = match parsed.kind {
                        RuleKind::AlwaysOn => RuleFate::AlwaysOn,
                        RuleKind::Manual => RuleFate::Manual,
                        RuleKind::PathScoped => RuleFate::PathScoped {
                            globs: parsed.globs.written().to_vec(),
                        },
                    };
                    (fate, parsed.globs)
                }
            },
        };
        let attached_at_cwd = fate == RuleFate::AlwaysOn && f.place.in_chain;
        let attached_by = touches
            .iter()
            .filter(|t| match &fate {
                RuleFate::AlwaysOn => !attached_at_cwd && t.starts_with(&f.place.base),
                RuleFate::PathScoped { .. } => t
                    .strip_prefix(&f.place.base)
                    .is_ok_and(|rel| !rel.as_str().is_empty() && globs.matches(rel.as_str())),
                _ => false,
            })
            .cloned()
            .collect();
        kept.push((
            InspectedRule {
                path,
                dir: f.place.dir.clone(),
                format: f.place.format,
                fate,
                attached_at_cwd,
                attached_by,
            },
            identity,
        ));
    }
    kept.sort_by(
        |(a, _), (b, _)| match (ScopeKey::rule(&a.path), ScopeKey::rule(&b.path)) {
            (Some(ka), Some(kb)) => section_order(&ka, &kb, config),
            _ => a.path.cmp(&b.path),
        },
    );
    // The same file under several names (links, a linked directory) is
    // one rule (R-DISC-3), at its shortest name (the one through the
    // fewest directories; the first in section order among equals), so a
    // link loop never renames a rule.
    let depth = |r: &InspectedRule| r.path.matches('/').count();
    let mut best: std::collections::HashMap<&FileIdentity, usize> = Default::default();
    for (i, (rule, identity)) in kept.iter().enumerate() {
        if let Some(id) = identity {
            let slot = best.entry(id).or_insert(i);
            if depth(rule) < depth(&kept[*slot].0) {
                *slot = i;
            }
        }
    }
    let keep: Vec<bool> = kept
        .iter()
        .enumerate()
        .map(|(i, (_, id))| id.as_ref().is_none_or(|id| best[id] == i))
        .collect();
    out.rules = kept
        .into_iter()
        .zip(keep)
        .filter_map(|((rule, _), k)| k.then_some(rule))
        .collect();
    out.notes.retain(|n| {
        let path = n.split(": ").next().unwrap_or("");
        out.rules.iter().any(|r| r.path == path)
    });
    Ok(out)
}

/// A listing problem as a line naming the file.
fn problem_text(shown: &str, problem: &RuleFileProblem) -> String {
    let dir = shown.trim_end_matches('/');
    let at = |rel: &str| {
        if rel == "." {
            dir.to_owned()
        } else {
            format!("{shown}{rel}")
        }
    };
    match problem {
        RuleFileProblem::NotARegularFile { rel } => {
            format!("{}: not a regular file, never opened", at(rel))
        }
        RuleFileProblem::Unavailable { rel, reason } => format!("{}: {reason}", at(rel)),
        RuleFileProblem::TooManyFiles { skipped } => {
            format!("{dir}: more than 256 rule files, {skipped} skipped")
        }
        RuleFileProblem::TooDeep { rel } => {
            format!(
                "{}: not searched (rules directories are listed 4 levels deep at most)",
                at(rel)
            )
        }
    }
}
