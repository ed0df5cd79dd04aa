//! Rules as slots of their directory (R-RULE-4, R-RULE-5, R-RULE-8): after
//! a directory's candidates are gathered, its rules directories (of the
//! configured formats, R-RULE-1) are listed and read through the provider,
//! each rule parsed (R-RULE-2), and the rules that load are appended to the
//! directory's scan as slots keyed `rule\0<display path>`, in section order,
//! so that baselines, transitions, budget and commits treat them exactly as
//! the directory's files. Nothing here runs when `rule_formats` is empty.
//!
//! Which rules load: an always-on rule always; a path-scoped rule while it
//! is attached — its `set` visible or pending — or when a path this
//! composition touches matches it (R-RULE-3); a manual rule never. A rule
//! that loaded and is gone (deleted, now manual) is an absent slot, hence a
//! `remove`; one that cannot be read or parsed is unavailable, which never
//! removes it (R-DISC-5).

use std::collections::HashMap;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::{
    Cancelled,
    listing::{list_rule_dirs, list_rule_files},
    provider::{FileIdentity, FileVersion, Probe, ReadOutcome, Unavailable},
};
use dsh_instructions_state::{
    Digest, ScopeKey,
    config::{ContentTransform, RuleFormat},
    rules::{RuleGlobs, RuleKind, parse_rule, split_front_matter},
    scope::{ScopeKind, section_order},
    visible::VisibleState,
};

use crate::dir_path::DirPath;
use crate::imports::{self, Candidate, ImportContext};
use crate::scan::{Attach, DirScan, Gather, LoadedFile, SeenFiles, SlotScan, SlotState};
use crate::user_file::UserFile;

/// The `<G>` of R-RULE-5: each glob in backticks, joined by `, `.
pub(crate) fn globs_text(globs: &RuleGlobs) -> String {
    globs
        .written()
        .iter()
        .map(|g| format!("`{g}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line a path-scoped rule's baseline and `replace` sections carry
/// before its content (R-RULE-5, R-RULE-8).
pub(crate) fn rule_line(globs: &str, dir: &str) -> String {
    format!("These instructions apply to files matching {globs} under `{dir}`.")
}

/// A path-scoped rule's content without its line ([`rule_line`]).
pub(crate) fn rule_body<'t>(text: &'t str, globs: &str, dir: &str) -> &'t str {
    let line = rule_line(globs, dir);
    text.strip_prefix(line.as_str())
        .and_then(|t| t.strip_prefix("\n\n"))
        .unwrap_or(text)
}

/// What a rule needs no read for.
#[derive(Clone)]
enum Known {
    /// Its visible state is current: this slot, vouched.
    Loaded(Box<SlotState>),
    /// It does not load here and now (its kind and globs known at its
    /// version): no slot.
    LeftOut,
}

/// One listed rule file waiting for its read.
struct Listed {
    scan: usize,
    format: RuleFormat,
    display: String,
    scope: ScopeKey,
    path: Utf8PathBuf,
    /// Copilot's root file: always on, no front matter read.
    root_file: bool,
}

impl Listed {
    /// A rule file of scan `scan` shown as `display` (R-RULE-8); `None`
    /// when that names no rule file.
    fn new(scan: usize, format: RuleFormat, display: String, path: Utf8PathBuf) -> Option<Self> {
        let scope = ScopeKey::rule(&display)?;
        Some(Self {
            scan,
            format,
            display,
            scope,
            path,
            root_file: false,
        })
    }
}

/// Appends the rule slots of every project directory in `scans` (see the
/// module docs). Slots for which `skip` holds (left out by the budget of
/// the instance's render, R-RT-10) are not reported. One listing per rules
/// directory, one read for all rule files.
pub(crate) async fn add_rule_slots(
    g: &Gather<'_>,
    scans: &mut [DirScan],
    attach: &Attach<'_>,
    skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
    seen: &SeenFiles,
) -> Result<(), Cancelled> {
    let formats = g.config.rule_formats();
    if formats.is_empty() {
        return Ok(());
    }
    // Every project rules directory of every format, listed first: one
    // provider call per format for the whole set (a chain's rules
    // directories in one pass over the disk provider's handles).
    let mut jobs: Vec<(usize, RuleFormat, Utf8PathBuf)> = Vec::new();
    for (si, scan) in scans.iter().enumerate() {
        if scan.rules_base.is_some() || scan.rel().is_none() || scan.rules_missing {
            continue;
        }
        for &format in formats {
            jobs.push((si, format, scan.abs().join(format.rules_dir())));
        }
    }
    let mut found: Vec<Option<dsh_instructions_discovery::listing::RuleFiles>> =
        vec![None; jobs.len()];
    for &format in formats {
        let (at, dirs): (Vec<usize>, Vec<Utf8PathBuf>) = jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| j.1 == format)
            .map(|(i, j)| (i, j.2.clone()))
            .unzip();
        if dirs.is_empty() {
            continue;
        }
        let files = list_rule_dirs(
            g.provider,
            &dirs,
            format.file_suffix(),
            format.recursive(),
            g.cancel,
        )
        .await?;
        for (i, files) in at.into_iter().zip(files) {
            found[i] = Some(files);
        }
    }
    let mut jobs = jobs.into_iter().zip(found).peekable();
    let mut listed: Vec<Listed> = Vec::new();
    for (si, scan) in scans.iter().enumerate() {
        if scan.rules_base.is_some() {
            // The user's `~/.claude/rules/` (R-RULE-1): `claude` only.
            if formats.contains(&RuleFormat::Claude) {
                list_user_rules(g, si, scan.abs(), &mut listed).await?;
            }
            continue;
        }
        let Some(rel) = scan.rel() else {
            continue;
        };
        // Every rules directory here was seen missing: nothing was listed
        // (a rule it showed before is still removed below).
        let prefix = if rel == "." {
            String::new()
        } else {
            format!("{rel}/")
        };
        while let Some(((_, format, dir), files)) = jobs.next_if(|((s, _, _), _)| *s == si) {
            let Some(files) = files else { continue };
            for problem in &files.problems {
                tracing::debug!(dir = %dir, ?problem, "rule file skipped");
            }
            listed.extend(files.files.into_iter().filter_map(|file| {
                let display = format!("{prefix}{}/{file}", format.rules_dir());
                Listed::new(si, format, display, dir.join(&file))
            }));
        }
        if rel == "." && formats.contains(&RuleFormat::Copilot) {
            let display = ".github/copilot-instructions.md".to_owned();
            let path = scan.abs().join(".github/copilot-instructions.md");
            listed.extend(
                Listed::new(si, RuleFormat::Copilot, display, path).map(|l| Listed {
                    root_file: true,
                    ..l
                }),
            );
        }
    }
    listed.retain(|l| !skip(&l.scope));
    // A visible rule whose file the version cache vouches for needs no
    // read (R-STATE-8), and a rule whose front matter the instance knows
    // at the file's version needs none to be left out (not attached, not
    // touched, or manual): one probe call for all of them is enough. Any
    // other rule is read, since only its text says what it is.
    let mut known: Vec<Option<Known>> = vec![None; listed.len()];
    let vouching = g.vouching();
    let probe: Vec<usize> = (0..listed.len())
        .filter(|&i| {
            let l = &listed[i];
            vouching.is_some_and(|(_, visible)| visible.is_loaded(&l.scope))
                || (!l.root_file && attach.facts.is_some_and(|f| f.knows(&l.scope)))
        })
        .collect();
    if !probe.is_empty() {
        let paths: Vec<Utf8PathBuf> = probe.iter().map(|&i| listed[i].path.clone()).collect();
        let probes = g.provider.probe_paths(&paths, g.cancel).await?;
        for (&i, probe) in probe.iter().zip(&probes) {
            let l = &listed[i];
            let Probe::Present(present) = probe else {
                continue;
            };
            if let Some((cache, visible)) = vouching
                && let Some(entry) =
                    cache.fresh(&l.scope, &l.display, &present.version, visible.get(&l.scope))
                // A rule with imports depends on its targets too: read.
                && entry.imports.is_empty()
            {
                known[i] = Some(Known::Loaded(Box::new(SlotState::Loaded(
                    LoadedFile::vouched(Arc::from(l.display.as_str()), entry, present),
                ))));
                continue;
            }
            // The front matter the instance knows at this version says
            // whether it loads; a path-scoped rule that does is built from
            // the content kept with it, unread (decision 0091), unless its
            // content may import (a read then expands it) or the cap has
            // become too small for the file.
            let base = scans[l.scan].glob_base();
            let dir = scans[l.scan].rel().unwrap_or(".");
            known[i] = attach
                .facts
                .and_then(|f| {
                    f.with(&l.scope, &present.version, |fact| {
                        if !loads(fact.kind, &fact.globs, &l.scope, base, attach) {
                            return Some(Known::LeftOut);
                        }
                        let content = fact.content.as_deref()?;
                        if present.size > g.config.max_source_bytes()
                            || (g.imports.is_some() && content.contains('@'))
                        {
                            return None;
                        }
                        let file = rule_file(
                            &l.display,
                            dir,
                            fact.kind,
                            &fact.globs,
                            content,
                            g.config.content_transform(),
                            present.version,
                        );
                        Some(Known::Loaded(Box::new(SlotState::Loaded(file))))
                    })
                })
                .flatten();
        }
    }
    let paths: Vec<Utf8PathBuf> = listed
        .iter()
        .zip(&known)
        .filter(|(_, k)| k.is_none())
        .map(|(l, _)| l.path.clone())
        .collect();
    let reads = if paths.is_empty() {
        Vec::new()
    } else {
        g.provider
            .read_many(&paths, g.config.max_source_bytes(), g.cancel)
            .await?
    };
    let mut reads = reads.into_iter();
    let mut added: Vec<Vec<SlotScan>> = vec![Vec::new(); scans.len()];
    // Loaded rules whose content may import (R-RULE-8, R-IMP-1).
    let mut importing: Vec<Importing> = Vec::new();
    for (l, known) in listed.into_iter().zip(known) {
        match known {
            Some(Known::Loaded(state)) => {
                added[l.scan].push(SlotScan {
                    scope: l.scope,
                    state: *state,
                });
                continue;
            }
            // Not loaded, as its front matter says: no slot (as after a
            // read that found the same).
            Some(Known::LeftOut) => continue,
            None => {}
        }
        // A provider that returned too few outcomes read nothing for the
        // rest: unavailable, never "absent".
        let outcome = reads
            .next()
            .unwrap_or_else(|| ReadOutcome::Unavailable(Unavailable::Io("no read result".into())));
        let dir = scans[l.scan].rel().unwrap_or(".").to_owned();
        let state = match outcome {
            ReadOutcome::Absent => continue,
            ReadOutcome::Unavailable(u) => {
                tracing::debug!(path = %l.path, reason = %u, "rule file unreadable");
                SlotState::Unavailable(u)
            }
            ReadOutcome::Loaded(read) => {
                let transform = g.config.content_transform();
                let content = split_front_matter(&read.text).1;
                // What a loaded rule becomes, given its kind and globs:
                // `None` when it does not load (manual, or path-scoped and
                // neither attached nor touched).
                let load = |kind: RuleKind, globs: &RuleGlobs| {
                    loads(kind, globs, &l.scope, scans[l.scan].glob_base(), attach).then(|| {
                        rule_file(
                            &l.display,
                            &dir,
                            kind,
                            globs,
                            content,
                            transform,
                            read.version,
                        )
                    })
                };
                // A rule whose front matter the instance knows at the
                // version just read is not parsed again (the content is
                // what follows the block either way, R-RULE-2; decision 0090).
                let remembered = if l.root_file {
                    None
                } else {
                    attach.facts.and_then(|f| {
                        f.with(&l.scope, &read.version, |fact| load(fact.kind, &fact.globs))
                    })
                };
                let loaded = match remembered {
                    Some(loaded) => Ok(loaded),
                    None if l.root_file => {
                        // Always on whatever its front matter says
                        // (R-RULE-1); a front matter block is still no
                        // content (R-RULE-2).
                        Ok(load(RuleKind::AlwaysOn, &RuleGlobs::default()))
                    }
                    None => parse_rule(l.format, &read.text).map(|p| {
                        if let Some(facts) = attach.facts {
                            facts.learn(&l.scope, read.version, p.kind, &p.globs, content);
                        }
                        load(p.kind, &p.globs)
                    }),
                };
                match loaded {
                    Err(e) => {
                        tracing::debug!(path = %l.path, error = %e, "rule unavailable");
                        SlotState::Unavailable(Unavailable::Io(e.to_string()))
                    }
                    Ok(None) => continue,
                    Ok(Some(file)) => {
                        if g.imports.is_some() && content.contains('@') {
                            importing.push(Importing {
                                scan: l.scan,
                                at: added[l.scan].len(),
                                from: l.path.parent().map(Utf8Path::to_owned).unwrap_or_default(),
                                dir: dir.clone(),
                                content: transform.apply(content).into_owned(),
                                identity: read.identity.clone(),
                            });
                        }
                        SlotState::Loaded(file)
                    }
                }
            }
        };
        added[l.scan].push(SlotScan {
            scope: l.scope,
            state,
        });
    }
    if let Some(ctx) = g.imports
        && !importing.is_empty()
    {
        expand_rule_imports(g, ctx, seen, &importing, &mut added).await?;
    }
    // The visible rules by directory, gathered once for every scan.
    let shown = shown_rules(attach.visible);
    for (scan, mut rules) in scans.iter_mut().zip(added) {
        let dir = match (&scan.rules_base, scan.rel()) {
            (Some(_), _) => None,
            (None, Some(rel)) => Some(rel),
            (None, None) => continue,
        };
        // A rule the model sees that is no longer found (deleted, now
        // manual, no longer listed) is an absent slot: a `remove`.
        for &scope in shown.get(&dir).into_iter().flatten() {
            if !skip(scope) && !rules.iter().any(|r| &r.scope == scope) {
                rules.push(SlotScan {
                    scope: scope.clone(),
                    state: SlotState::Absent,
                });
            }
        }
        rules.sort_by(|a, b| section_order(&a.scope, &b.scope, g.config));
        scan.slots.extend(rules);
        rule_dedup(scan);
    }
    Ok(())
}

/// The user's rules directory below the OS home (R-RULE-1).
const USER_RULES_DIR: &str = "rules";
/// The display prefix of the user's rules (R-RULE-8).
const USER_RULES_SHOWN: &str = "~/.claude/rules/";
/// The user-level file whose directory holds the user's rules and whose
/// trusted root they share (R-RULE-8).
const USER_CLAUDE_MD: &str = "~/.claude/CLAUDE.md";
/// The directory of the user's Claude files below the OS home.
const USER_CLAUDE_DIR: &str = ".claude";

/// The user's `~/.claude/rules/` (R-RULE-1), read whenever `claude` is a
/// rule format: beside the configured user-level file `~/.claude/CLAUDE.md`
/// when there is one, else below the OS home that the default DSH home
/// (`~/.dsh`, R-HOME-3) names, as for `~/` imports (docs/decisions/0010,
/// 0059). `None` only under another DSH home without that file: the OS home
/// is then unknown here. [`crate::MountBuilder::open`] trusts this directory.
pub(crate) fn user_rules_dir(files: &[UserFile], home: &DshHome) -> Option<Utf8PathBuf> {
    let beside_claude_md = files
        .iter()
        .find(|f| f.label == USER_CLAUDE_MD)
        .and_then(|f| f.path.parent())
        .map(|d| d.join(USER_RULES_DIR));
    beside_claude_md.or_else(|| {
        (home.label == HomeLabel::Default)
            .then(|| home.path.parent())
            .flatten()
            .map(|os_home| os_home.join(USER_CLAUDE_DIR).join(USER_RULES_DIR))
    })
}

/// The rules the model sees, by the directory they come from (`None`: the
/// user's), each directory's in key order. Only the few directories with
/// rules are sorted, not every visible entry.
pub(crate) fn shown_rules(visible: &VisibleState) -> HashMap<Option<&str>, Vec<&ScopeKey>> {
    let mut shown: HashMap<Option<&str>, Vec<&ScopeKey>> = HashMap::new();
    for (scope, e) in visible.entries_unordered() {
        if e.is_loaded() && matches!(scope.kind(), ScopeKind::Rule { .. }) {
            shown.entry(scope.dir()).or_default().push(scope);
        }
    }
    for scopes in shown.values_mut() {
        scopes.sort_unstable();
    }
    shown
}

/// The empty scan of the user's rules, which [`add_rule_slots`] fills:
/// only in a pass that loads rules, with `claude` among the formats
/// ([`user_rules_dir`]).
pub(crate) fn user_rules_scan(g: &Gather<'_>, home: &DshHome, root: &Utf8Path) -> Option<DirScan> {
    if g.rules.is_none() || !g.config.rule_formats().contains(&RuleFormat::Claude) {
        return None;
    }
    Some(DirScan {
        path: DirPath::outside(user_rules_dir(g.user_files, home)?),
        candidates: Vec::new(),
        slots: Vec::new(),
        rules_base: Some(root.to_owned()),
        rules_missing: false,
    })
}

/// Lists the user's rules directory `dir` into `listed` as scan `si`.
async fn list_user_rules(
    g: &Gather<'_>,
    si: usize,
    dir: &Utf8Path,
    listed: &mut Vec<Listed>,
) -> Result<(), Cancelled> {
    let format = RuleFormat::Claude;
    let files = list_rule_files(
        g.provider,
        dir,
        format.file_suffix(),
        format.recursive(),
        g.cancel,
    )
    .await?;
    for problem in &files.problems {
        tracing::debug!(dir = %dir, ?problem, "user rule file skipped");
    }
    listed.extend(files.files.into_iter().filter_map(|file| {
        Listed::new(
            si,
            format,
            format!("{USER_RULES_SHOWN}{file}"),
            dir.join(&file),
        )
    }));
    Ok(())
}

impl DirScan {
    /// The directory a rule of this scan takes its globs relative to: D,
    /// or the project root for the user's rules (R-RULE-8).
    fn glob_base(&self) -> &Utf8Path {
        self.rules_base.as_deref().unwrap_or(self.abs())
    }
}

/// Whether a rule of `kind` and `globs` whose directory is `base` loads
/// in this composition (see the module docs).
fn loads(
    kind: RuleKind,
    globs: &RuleGlobs,
    scope: &ScopeKey,
    base: &Utf8Path,
    attach: &Attach<'_>,
) -> bool {
    match kind {
        RuleKind::Manual => false,
        RuleKind::AlwaysOn => true,
        RuleKind::PathScoped => {
            attach.visible.is_loaded(scope)
                || attach.pending.contains(scope)
                || touched_match(globs, base, attach.touched)
        }
    }
}

/// Whether a touched path under `base` matches (R-RULE-3); the path itself
/// relative to D, so a directory touch matches only a glob that matches
/// the directory.
fn touched_match(globs: &RuleGlobs, base: &Utf8Path, touched: &[Utf8PathBuf]) -> bool {
    touched
        .iter()
        .any(|t| below(t, base).is_some_and(|rel| !rel.is_empty() && globs.matches(rel)))
}

/// `path` relative to `base`, as [`Utf8Path::strip_prefix`] gives it: by
/// bytes when both are lexically normal (a component walk per rule and
/// touched path was a tenth of a rules touch, issue 46 item 2).
fn below<'p>(path: &'p Utf8Path, base: &Utf8Path) -> Option<&'p str> {
    if !(dsh_home_paths::is_lexically_normal(path) && dsh_home_paths::is_lexically_normal(base)) {
        return path.strip_prefix(base).ok().map(Utf8Path::as_str);
    }
    let rest = path.as_str().strip_prefix(base.as_str())?;
    if base.as_str().ends_with('/') || rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

/// A loaded rule: its section text (with the path-scoped line), its digest
/// over kind, globs and content (R-RULE-8: the line names the globs, and
/// only a path-scoped rule has one) and its dedup key over the content
/// alone.
fn rule_file(
    display: &str,
    dir: &str,
    kind: RuleKind,
    globs: &RuleGlobs,
    content: &str,
    transform: ContentTransform,
    version: FileVersion,
) -> LoadedFile {
    let content = transform.apply(content);
    let trimmed = Digest::of_trimmed(&content);
    let (text, rule_globs): (Arc<str>, Option<Arc<str>>) = match kind {
        RuleKind::PathScoped => {
            let g = globs_text(globs);
            let text = format!("{}\n\n{content}", rule_line(&g, dir));
            (Arc::from(text), Some(Arc::from(g)))
        }
        _ => (Arc::from(content.as_ref()), None),
    };
    LoadedFile {
        display: Arc::from(display),
        digest: Digest::of(&text),
        trimmed,
        version,
        bytes: text.len() as u64,
        text: Some(text),
        imports: Vec::new(),
        import_key: Vec::new(),
        own_trimmed: None,
        rule_globs,
    }
}

/// A loaded rule whose content may import.
struct Importing {
    /// Its scan and its place among the scan's new rule slots.
    scan: usize,
    at: usize,
    /// The rule file's directory: imports resolve relative to it.
    from: Utf8PathBuf,
    /// D, as its path-scoped line names it.
    dir: String,
    /// Its content after the agent's transform.
    content: String,
    identity: FileIdentity,
}

/// Expands the imports of the rules in `importing` (R-RULE-8: imports
/// apply to rules as to the agent's files; R-IMP-1..4): each rule's content
/// becomes its own text plus the import blocks, relative to the rule
/// file's directory, in one provider call per import level for all of
/// them; its digests, bytes, import tree and import key follow, so an
/// edit of a target is a `replace` of the rule.
async fn expand_rule_imports(
    g: &Gather<'_>,
    ctx: &ImportContext,
    seen: &SeenFiles,
    importing: &[Importing],
    added: &mut [Vec<SlotScan>],
) -> Result<(), Cancelled> {
    let items: Vec<Candidate<'_>> = importing
        .iter()
        .map(|r| Candidate {
            dir: &r.from,
            text: &r.content,
            identity: &r.identity,
        })
        .collect();
    let expansions = imports::expand_all(
        g.provider,
        g.config,
        g.cancel,
        ctx,
        seen.own(),
        &items,
        &mut imports::ImportReads::new(),
    )
    .await?;
    for (r, exp) in importing.iter().zip(expansions) {
        let Some(SlotState::Loaded(file)) = added[r.scan].get_mut(r.at).map(|s| &mut s.state)
        else {
            continue;
        };
        if exp.records.is_empty() {
            continue;
        }
        let line = file.rule_globs.as_deref().map(|g| rule_line(g, &r.dir));
        let text = match line {
            Some(line) => format!("{line}\n\n{}", exp.content),
            None => exp.content.clone(),
        };
        file.own_trimmed = Some(file.trimmed);
        file.trimmed = Digest::of_trimmed(&exp.content);
        file.digest = Digest::of(&text);
        file.bytes = text.len() as u64;
        file.text = Some(Arc::from(text));
        file.imports = exp.records;
        file.import_key = exp.key;
    }
    Ok(())
}

/// Per-directory trimmed-content dedup across candidates and rules
/// (R-RULE-4, R-CFG-7): a rule whose content equals an earlier kept file's
/// or rule's is a duplicate. Candidates were deduplicated among themselves
/// already.
fn rule_dedup(scan: &mut DirScan) {
    let mut kept: Vec<(Digest, Arc<str>)> = Vec::new();
    for slot in &mut scan.slots {
        let SlotState::Loaded(file) = &slot.state else {
            continue;
        };
        let is_rule = matches!(slot.scope.kind(), ScopeKind::Rule { .. });
        match kept.iter().find(|(d, _)| *d == file.trimmed) {
            Some((_, of)) if is_rule => {
                slot.state = SlotState::Duplicate {
                    trimmed: Some(file.trimmed),
                    of: of.clone(),
                    identity: None,
                };
            }
            _ => kept.push((file.trimmed, file.display.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/p/a/b.rs", "/p", Some("a/b.rs"))]
    #[case("/p/a", "/p/a", Some(""))]
    #[case("/pa/b", "/p", None)]
    #[case("/x", "/", Some("x"))]
    #[case("/p/a", "/p/a/b", None)]
    // Not normal: what `strip_prefix` gives, `.` kept.
    #[case("/p//a/./b.rs", "/p", Some("a/./b.rs"))]
    fn below_is_strip_prefix(#[case] path: &str, #[case] base: &str, #[case] rel: Option<&str>) {
        let (path, base) = (Utf8Path::new(path), Utf8Path::new(base));
        assert_eq!(below(path, base), rel);
        assert_eq!(
            below(path, base),
            path.strip_prefix(base).ok().map(Utf8Path::as_str)
        );
    }

    #[rstest]
    #[case("---\npaths: \"*.ts\"\n---\nx", "`*.ts`")]
    #[case(
        "---\npaths: [\"a/**\", \"*.{ts,tsx}\"]\n---\nx",
        "`a/**`, `*.{ts,tsx}`"
    )]
    fn globs_are_named_in_backticks_joined_by_commas(#[case] text: &str, #[case] want: &str) {
        let parsed = parse_rule(RuleFormat::Claude, text).unwrap();
        assert_eq!(globs_text(&parsed.globs), want);
    }

    /// The user's rules sit beside `~/.claude/CLAUDE.md` (its trusted
    /// root); without it, below the OS home the default DSH home names,
    /// and nowhere under another DSH home.
    #[rstest]
    #[case(&["~/.claude/CLAUDE.md"], HomeLabel::EnvVar, Some("/home/u/.claude/rules"))]
    #[case(&["~/x.md", "~/.claude/CLAUDE.md"], HomeLabel::EnvVar, Some("/home/u/.claude/rules"))]
    #[case(&["~/.codex/AGENTS.md"], HomeLabel::EnvVar, None)]
    #[case(&[], HomeLabel::EnvVar, None)]
    #[case(&["~/.codex/AGENTS.md"], HomeLabel::Default, Some("/os/me/.claude/rules"))]
    #[case(&[], HomeLabel::Default, Some("/os/me/.claude/rules"))]
    #[case(&["~/.claude/CLAUDE.md"], HomeLabel::Default, Some("/home/u/.claude/rules"))]
    fn the_user_rules_sit_beside_the_user_claude_md(
        #[case] labels: &[&str],
        #[case] label: HomeLabel,
        #[case] want: Option<&str>,
    ) {
        let files: Vec<UserFile> = labels
            .iter()
            .map(|l| UserFile {
                path: Utf8Path::new("/home/u").join(l.trim_start_matches("~/")),
                label: (*l).to_owned(),
            })
            .collect();
        let home = DshHome {
            path: match label {
                HomeLabel::Default => "/os/me/.dsh".into(),
                HomeLabel::EnvVar => "/opt/dsh".into(),
            },
            label,
        };
        assert_eq!(
            user_rules_dir(&files, &home).as_deref(),
            want.map(Utf8Path::new)
        );
    }

    /// The set section shows the content alone; a text that does not start
    /// with this rule's line (another dir, other globs) is left whole.
    #[rstest]
    #[case(
        "These instructions apply to files matching `*.ts` under `pkg`.\n\nbody",
        "`*.ts`",
        "pkg",
        "body"
    )]
    #[case(
        "These instructions apply to files matching `*.ts` under `pkg`.\n\nbody",
        "`*.rs`",
        "pkg",
        "These instructions apply to files matching `*.ts` under `pkg`.\n\nbody"
    )]
    #[case("body", "`*.ts`", ".", "body")]
    fn the_body_is_the_text_after_the_rule_line(
        #[case] text: &str,
        #[case] globs: &str,
        #[case] dir: &str,
        #[case] want: &str,
    ) {
        assert_eq!(rule_body(text, globs, dir), want);
    }
}
