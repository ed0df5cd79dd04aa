//! `show`, `explain` and `check`: one look at the baseline for a cwd,
//! printed three ways (R-CLI-1, R-CLI-2, R-CLI-6). `show` takes the
//! `preview()` (no per-candidate report); the others the full `inspect()`.

use std::fmt::Write as _;
use std::process::ExitCode;

use camino::Utf8Path;
use dsh_instructions_discovery::{CancellationToken, provider::Unavailable, root::RootReason};
use dsh_instructions_runtime::{
    Opened, RuntimeError,
    report::{
        CandidateFate, ImportFate, InspectedCandidate, InspectedImport, InspectedRule,
        InspectedRules, Inspection, Preview, RuleFate,
    },
};
use dsh_instructions_state::{Config, config::RuleFormat};
use serde_json::{Value, json};

use crate::args::{ConfigArgs, ExplainArgs, LookArgs, ViewArgs};
use crate::error::{CliError, EXIT_PROBLEMS};
use crate::setup::{self, Setup};

/// Version of the `explain --json` document shape (docs/cli.md).
pub(crate) const EXPLAIN_SCHEMA: u32 = 1;

/// What one inspection gives the three commands.
struct Seen {
    inspection: Inspection,
    /// The rule files around the cwd (SPEC §14), empty without formats.
    rules: InspectedRules,
    config: Config,
    warnings: Vec<String>,
}

/// Runs one look (`inspect` or `preview`) at the baseline for the cwd,
/// over the mount the CLI opens for it.
fn look<T>(
    cwd_flag: Option<&std::path::Path>,
    flags: &ConfigArgs,
    run: impl AsyncFn(&Opened, &Utf8Path) -> Result<T, RuntimeError>,
) -> Result<(T, Setup), CliError> {
    let setup = setup::load(flags)?;
    let cwd = setup::cwd(&setup.env, cwd_flag)?;
    let extra = setup::extra_roots(&setup.env, flags)?;
    let rt = setup::runtime()?;
    let seen = rt.block_on(async {
        let opened = setup::mount(&setup, &cwd, extra).await?;
        run(&opened, &cwd)
            .await
            .map_err(|e| CliError::new(format!("inspect: {e}")))
    })?;
    Ok((seen, setup))
}

fn run_inspect(
    cwd_flag: Option<&std::path::Path>,
    flags: &ConfigArgs,
    touches: &[std::path::PathBuf],
) -> Result<Seen, CliError> {
    let ((inspection, rules), setup) = look(cwd_flag, flags, async |opened, cwd| {
        let cancel = CancellationToken::new();
        let seen = opened.inspect(&cancel).await?;
        // Touches as a tool would name them: relative to the cwd.
        let touches: Vec<camino::Utf8PathBuf> = touches
            .iter()
            .filter_map(|t| camino::Utf8Path::from_path(t))
            .map(|t| dsh_home_paths::normalize_lexically(&cwd.join(t)))
            .collect();
        let rules = opened.inspect_rules(&touches, &cancel).await?;
        Ok((seen, rules))
    })?;
    Ok(Seen {
        inspection,
        rules,
        config: setup.config,
        warnings: setup.warnings,
    })
}

/// `show`: the baseline text byte for byte plus one `\n` (nothing at all when
/// no instructions load), or the `--json` document.
pub(crate) fn show(args: &ViewArgs) -> Result<ExitCode, CliError> {
    let (seen, _) = look(
        args.look.cwd.as_deref(),
        &args.look.config,
        async |opened, _cwd| opened.preview(&CancellationToken::new()).await,
    )?;
    if args.json {
        out!("{}", show_json(&seen));
    } else if !seen.text.is_empty() {
        out!("{}", seen.text);
    }
    Ok(ExitCode::SUCCESS)
}

/// The `show --json` document.
fn show_json(seen: &Preview) -> Value {
    json!({
        "text": seen.text,
        "source": source_json(&seen.text, &seen.source),
        "root": seen.root.as_str(),
        "identity": seen.identity,
    })
}

/// The typed source, or `null` when no message would be sent.
fn source_json(text: &str, source: &dsh_instructions_state::TypedSource) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        source.to_json()
    }
}

/// `explain`: the readable table, or the stable `--json` document.
pub(crate) fn explain(args: &ExplainArgs) -> Result<ExitCode, CliError> {
    let view = &args.view;
    let seen = run_inspect(view.look.cwd.as_deref(), &view.look.config, &args.touch)?;
    let touched = !args.touch.is_empty();
    if view.json {
        let mut doc = explain_json(&seen.inspection, &seen.config, &seen.warnings);
        doc["rules"] = rules_json(&seen.rules, &seen.config);
        out!("{doc}");
    } else {
        out_raw!(
            "{}{}",
            explain_text(
                &seen.inspection,
                &seen.config,
                Own {
                    chain: view
                        .look
                        .config
                        .agent
                        .map_or(&[][..], |a| a.own_chain_files()),
                    cwd: view
                        .look
                        .config
                        .agent
                        .map_or(&[][..], |a| a.own_cwd_files()),
                }
            ),
            rules_text(&seen.rules, &seen.config, touched)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `check`: exit 0 when every file loads whole, else one line per cause and
/// exit 1.
pub(crate) fn check(args: &LookArgs) -> Result<ExitCode, CliError> {
    let Seen {
        inspection: seen,
        rules,
        ..
    } = run_inspect(args.cwd.as_deref(), &args.config, &[])?;
    let mut problems = check_lines(&seen);
    problems.extend(rule_check_lines(&rules));
    if problems.is_empty() {
        let loaded = seen
            .candidates
            .iter()
            .filter(|c| matches!(c.fate, CandidateFate::Loaded { .. }))
            .count();
        out!(
            "ok: {loaded} instruction file(s) load whole ({} / {} bytes)",
            seen.baseline.text.len(),
            seen.baseline.max_bytes
        );
        Ok(ExitCode::SUCCESS)
    } else {
        for line in problems {
            out!("{line}");
        }
        Ok(ExitCode::from(EXIT_PROBLEMS))
    }
}

/// For `hook doctor` (R-HOOK-8), from the same inspection `check --agent`
/// runs at the process cwd: a line per file the hook of `agent` would
/// omit or truncate because of its budget, and a line per file above the
/// project root it finds there.
pub(crate) fn hook_files_here(agent: dsh_instructions_hooks::Agent) -> Result<HookFiles, CliError> {
    let flags = ConfigArgs {
        agent: Some(agent),
        ..ConfigArgs::default()
    };
    let looked = run_inspect(None, &flags, &[])?;
    let rule_formats = looked.config.rule_formats().to_vec();
    let seen = looked.inspection;
    let budget = seen
        .candidates
        .iter()
        .filter(|c| {
            matches!(
                c.fate,
                CandidateFate::OmittedByBudget { .. } | CandidateFate::Truncated { .. }
            )
        })
        .map(|c| candidate_line(&seen, c))
        .collect();
    // The ancestor files are the only candidates shown by absolute path;
    // those that exist there (loaded or not) are worth naming.
    let ancestors = seen
        .candidates
        .iter()
        .filter(|c| c.dir.is_none() && c.path.starts_with('/'))
        .filter(|c| !matches!(c.fate, CandidateFate::Absent))
        .map(|c| format!("{}: {}", c.path, fate_text(&c.fate)))
        .collect();
    // R-RULE-7: every rule file here in any format, against the formats
    // the installed hook reads.
    let every = ConfigArgs {
        agent: Some(agent),
        rules: Some(ALL_RULE_FORMATS.to_owned()),
        ..ConfigArgs::default()
    };
    let all = run_inspect(None, &every, &[])?.rules;
    // What the agent itself still loads reaches the model too.
    let mut delivered = rule_formats.clone();
    delivered.extend(natively_loaded_rules(agent));
    let undelivered = undelivered_rules(&all, &delivered);
    Ok(HookFiles {
        budget,
        ancestors,
        rule_formats,
        undelivered,
    })
}

/// The rule formats an agent keeps loading itself with the hook installed:
/// GitHub Copilot CLI's loading cannot be switched off and reads its own
/// and Claude's rules (decision 0067); the others load none once the hook
/// is installed (Claude Code's are excluded, R-RULE-7).
fn natively_loaded_rules(agent: dsh_instructions_hooks::Agent) -> &'static [RuleFormat] {
    match agent {
        dsh_instructions_hooks::Agent::Copilot => &[RuleFormat::Claude, RuleFormat::Copilot],
        _ => &[],
    }
}

/// Every rule format, as `--rules` spells them.
const ALL_RULE_FORMATS: &str = "claude,cursor,copilot,windsurf";

/// What `hook doctor` says about the files at the current directory.
pub(crate) struct HookFiles {
    /// A line per file the hook's budget omits or truncates (R-HOOK-8).
    pub budget: Vec<String>,
    /// A line per file above the project root the hook delivers or names
    /// (decision 0044).
    pub ancestors: Vec<String>,
    /// The rule formats the installed hook reads (R-RULE-7).
    pub rule_formats: Vec<RuleFormat>,
    /// The rule files here, in a format the hook does not read, that
    /// would load if it did (always on or path-scoped; a manual rule loads
    /// nowhere), each with its format.
    pub undelivered: Vec<(String, RuleFormat)>,
}

/// The rules of `all` (inspected with every format on) whose format is not
/// in `read` and that would load with it (R-RULE-7).
fn undelivered_rules(all: &InspectedRules, read: &[RuleFormat]) -> Vec<(String, RuleFormat)> {
    all.rules
        .iter()
        .filter(|r| !read.contains(&r.format))
        .filter(|r| matches!(r.fate, RuleFate::AlwaysOn | RuleFate::PathScoped { .. }))
        .map(|r| (r.path.clone(), r.format))
        .collect()
}

/// One line per candidate whose fate fails `check` (R-CLI-6), then one per
/// import that should expand and does not (R-IMP-5).
fn check_lines(seen: &Inspection) -> Vec<String> {
    let imports = seen.candidates.iter().flat_map(|c| {
        c.imports
            .iter()
            .filter(|i| i.fate.is_problem())
            .map(move |i| {
                format!(
                    "{}: import @{} ({}): {}",
                    shown_path(seen, c),
                    i.token,
                    i.path,
                    import_fate_text(&i.fate)
                )
            })
    });
    seen.candidates
        .iter()
        .filter(|c| c.fate.is_problem())
        .map(|c| candidate_line(seen, c))
        .chain(imports)
        .collect()
}

/// `check`'s line for a candidate whose fate is a problem.
fn candidate_line(seen: &Inspection, c: &InspectedCandidate) -> String {
    let why = fate_text(&c.fate);
    match &c.fate {
        CandidateFate::OmittedByBudget { .. } | CandidateFate::Truncated { .. } => {
            format!(
                "{}: {why} ({})",
                shown_path(seen, c),
                budget_text(seen.baseline.max_bytes.max_bytes())
            )
        }
        _ => format!("{}: {why}", shown_path(seen, c)),
    }
}

/// An import's fate, for people (the vocabulary of R-IMP-5).
fn import_fate_text(fate: &ImportFate) -> String {
    match fate {
        ImportFate::Expanded { bytes } => format!("expanded ({bytes} bytes)"),
        ImportFate::OwnSection => "loaded as its own section".to_owned(),
        ImportFate::AlreadyImported => "already imported above".to_owned(),
        ImportFate::Cycle => "cycle: already on the import path".to_owned(),
        ImportFate::TooDeep => "too deep (more than 5 levels)".to_owned(),
        ImportFate::OverCount => "over the limit (64 imports)".to_owned(),
        ImportFate::OverBytes => "over the limit (max_source_bytes)".to_owned(),
        ImportFate::Missing => "missing (stays plain text)".to_owned(),
        ImportFate::OutsideTrustedRoots => "outside trusted roots".to_owned(),
        ImportFate::Unavailable { reason } => format!("unavailable ({reason})"),
    }
}

fn import_fate_json(fate: &ImportFate) -> Value {
    let kind = match fate {
        ImportFate::Expanded { bytes } => return json!({"kind": "expanded", "bytes": bytes}),
        ImportFate::Unavailable { reason } => {
            return json!({"kind": "unavailable", "reason": reason.to_string()});
        }
        ImportFate::OwnSection => "own-section",
        ImportFate::AlreadyImported => "already-imported",
        ImportFate::Cycle => "cycle",
        ImportFate::TooDeep => "too-deep",
        ImportFate::OverCount => "over-count",
        ImportFate::OverBytes => "over-bytes",
        ImportFate::Missing => "missing",
        ImportFate::OutsideTrustedRoots => "outside-trusted-roots",
    };
    json!({"kind": kind})
}

/// The import tree row of one import: indented by depth, the token as
/// written, and where it resolved when that reads differently.
fn import_row(i: &InspectedImport) -> String {
    let indent = "  ".repeat(i.depth);
    if i.path == i.token {
        format!("{indent}@{}", i.token)
    } else {
        format!("{indent}@{} -> {}", i.token, i.path)
    }
}

/// The budget as people read it; `inspect` reports a disabled budget as 0.
fn budget_text(max_bytes: u64) -> String {
    if max_bytes == 0 {
        "loading disabled: max_bytes <= 0".to_owned()
    } else {
        format!("max_bytes {max_bytes}")
    }
}

/// The display path; the user-global file keeps its label even when absent.
fn shown_path(seen: &Inspection, c: &InspectedCandidate) -> String {
    if c.path.is_empty() && c.dir.is_none() {
        seen.baseline.home.user_global_label()
    } else {
        c.path.clone()
    }
}

/// Why a directory is the project root, for people.
fn root_reason_text(reason: &RootReason) -> String {
    match reason {
        RootReason::Marker { marker } => format!("marker {marker}"),
        RootReason::NoMarker => "no marker: cwd".to_owned(),
        RootReason::ProbeFailed { marker, error } => {
            format!("marker probe failed: {marker}: {error}")
        }
    }
}

/// A candidate's fate, for people (the vocabulary of R-CLI-2).
fn fate_text(fate: &CandidateFate) -> String {
    match fate {
        CandidateFate::Loaded { bytes } => format!("loaded ({bytes} bytes)"),
        CandidateFate::Truncated { from, to } => format!("truncated from {from} to {to} bytes"),
        CandidateFate::OmittedByBudget { bytes } => format!("omitted by budget ({bytes} bytes)"),
        CandidateFate::ShadowedBy { winner, differs } => match differs {
            Some(true) => format!("shadowed by {winner} (content differs)"),
            Some(false) => format!("shadowed by {winner} (same content)"),
            None => format!("shadowed by {winner}"),
        },
        CandidateFate::PointsTo { winner } => format!("points to {winner}"),
        CandidateFate::SkippedAfterUnavailable { blocker } => {
            format!("skipped: {blocker} is unavailable")
        }
        CandidateFate::DuplicateOf { of } => format!("duplicate of {of}"),
        CandidateFate::Absent => "absent".to_owned(),
        CandidateFate::Unavailable {
            reason: Unavailable::OutsideTrustedRoots,
        } => "outside trusted roots".to_owned(),
        CandidateFate::Unavailable { reason } => format!("unavailable ({reason})"),
    }
}

/// The agent's files it loads itself, as `explain --agent` shows them.
struct Own<'a> {
    /// From every directory of the chain (Copilot CLI, decision 0073): its
    /// hook composes them but gives only their updates and removals.
    chain: &'a [&'a str],
    /// From its working directory alone, re-read for every request (Cline,
    /// decision 0089): its hook gives nothing of them.
    cwd: &'a [&'a str],
}

/// `own`: the agent's files it loads itself, shown as such.
fn explain_text(seen: &Inspection, config: &Config, own: Own<'_>) -> String {
    let mut out = String::new();
    let rel = seen
        .baseline
        .cwd
        .strip_prefix(&seen.baseline.root)
        .map(|r| {
            if r.as_str().is_empty() {
                ".".to_owned()
            } else {
                r.to_string()
            }
        })
        .unwrap_or_else(|_| seen.baseline.cwd.to_string());
    let _ = writeln!(
        out,
        "project root  {}  ({})",
        seen.baseline.root,
        root_reason_text(&seen.baseline.root_reason)
    );
    let _ = writeln!(out, "cwd           {}  ({rel})", seen.baseline.cwd);
    let _ = writeln!(
        out,
        "home          {}  ({})",
        seen.baseline.home.label, seen.baseline.home.path
    );
    let _ = writeln!(
        out,
        "policy        {}; candidates [{}]; local [{}]{}",
        config.candidate_policy(),
        config.instruction_file_candidates().join(", "),
        config.local_instruction_file_candidates().join(", "),
        if config.imports() { "; imports on" } else { "" }
    );
    out.push('\n');

    let rows: Vec<(String, String, String)> = seen
        .candidates
        .iter()
        .flat_map(|c| {
            // Outside the project: the user files, and the ancestor files
            // above the root, which alone show an absolute path (R-HOOK-8).
            let dir = c.dir.clone().unwrap_or_else(|| {
                if c.path.starts_with('/') {
                    "(above root)".to_owned()
                } else {
                    "(user-global)".to_owned()
                }
            });
            // Each loaded file's import tree follows it (R-IMP-5).
            let mut fate = fate_text(&c.fate);
            let name = c.path.rsplit('/').next().unwrap_or_default();
            let loaded = matches!(c.fate, CandidateFate::Loaded { .. });
            if c.dir.as_deref() == Some(rel.as_str()) && own.cwd.contains(&name) && loaded {
                fate.push_str(", given by the agent itself, updates too (the hook leaves it out)");
            } else if c.dir.is_some() && own.chain.contains(&name) && loaded {
                fate.push_str(", given by the agent itself (the hook gives its updates)");
            }
            std::iter::once((dir, shown_path(seen, c), fate)).chain(
                c.imports
                    .iter()
                    .map(|i| (String::new(), import_row(i), import_fate_text(&i.fate))),
            )
        })
        .collect();
    let w_dir = rows.iter().map(|r| r.0.len()).chain([9]).max().unwrap_or(9);
    let w_file = rows.iter().map(|r| r.1.len()).chain([4]).max().unwrap_or(4);
    let _ = writeln!(out, "{:w_dir$}  {:w_file$}  FATE", "DIRECTORY", "FILE");
    for (dir, file, fate) in &rows {
        let _ = writeln!(out, "{dir:w_dir$}  {file:w_file$}  {fate}");
    }
    out.push('\n');
    if seen.baseline.max_bytes.is_disabled() {
        let _ = writeln!(out, "bytes         0 ({})", budget_text(0));
    } else {
        let _ = writeln!(
            out,
            "bytes         {} / {}",
            seen.baseline.text.len(),
            seen.baseline.max_bytes
        );
    }
    if let Some(notice) = &seen.baseline.notice {
        let _ = writeln!(out, "notice        {notice}");
    }
    let _ = writeln!(out, "identity      {}", seen.baseline.identity);
    out
}

/// A rule's kind for people: `always on`, `path-scoped: `a`, `b``, `manual`,
/// `unavailable: <why>` (R-RULE-2).
fn rule_kind_text(rule: &InspectedRule) -> String {
    match &rule.fate {
        RuleFate::AlwaysOn => "always on".to_owned(),
        RuleFate::PathScoped { globs } => {
            let globs: Vec<String> = globs.iter().map(|g| format!("`{g}`")).collect();
            format!("path-scoped: {}", globs.join(", "))
        }
        RuleFate::Manual => "manual".to_owned(),
        RuleFate::Unavailable { reason, .. } => format!("unavailable: {reason}"),
    }
}

/// Whether the rule is attached at the cwd, or what attaches it.
fn rule_attach_text(rule: &InspectedRule, touched: bool) -> String {
    if rule.attached_at_cwd {
        return "attached".to_owned();
    }
    if !rule.attached_by.is_empty() {
        let by: Vec<&str> = rule.attached_by.iter().map(|p| p.as_str()).collect();
        return format!("attached by touch of {}", by.join(", "));
    }
    match (&rule.fate, touched) {
        (RuleFate::PathScoped { .. }, false) => "not attached (until a matching touch)".to_owned(),
        (RuleFate::PathScoped { .. }, true) => "not attached by these touches".to_owned(),
        (RuleFate::AlwaysOn, _) => "not attached (its directory is not loaded)".to_owned(),
        _ => "never attached".to_owned(),
    }
}

/// The rules table of `explain` (SPEC §14); nothing without rule formats.
fn rules_text(rules: &InspectedRules, config: &Config, touched: bool) -> String {
    let mut out = String::new();
    if config.rule_formats().is_empty() {
        return out;
    }
    let formats: Vec<&str> = config.rule_formats().iter().map(|f| f.as_str()).collect();
    let _ = writeln!(out, "\nrules         {}", formats.join(", "));
    if rules.rules.is_empty() {
        let _ = writeln!(out, "  (no rule files)");
    }
    let w = rules
        .rules
        .iter()
        .map(|r| r.path.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    for rule in &rules.rules {
        let _ = writeln!(
            out,
            "  {:w$}  {}; {}",
            rule.path,
            rule_kind_text(rule),
            rule_attach_text(rule, touched)
        );
    }
    for line in rules.notes.iter().chain(&rules.skipped) {
        let _ = writeln!(out, "  note: {line}");
    }
    out
}

/// `explain --json`'s `rules` member: `null` without rule formats.
fn rules_json(rules: &InspectedRules, config: &Config) -> Value {
    if config.rule_formats().is_empty() {
        return Value::Null;
    }
    let items: Vec<Value> = rules
        .rules
        .iter()
        .map(|r| {
            let (kind, globs, field, reason) = match &r.fate {
                RuleFate::AlwaysOn => ("always-on", Vec::new(), None, None),
                RuleFate::PathScoped { globs } => ("path-scoped", globs.clone(), None, None),
                RuleFate::Manual => ("manual", Vec::new(), None, None),
                RuleFate::Unavailable { field, reason } => (
                    "unavailable",
                    Vec::new(),
                    field.clone(),
                    Some(reason.clone()),
                ),
            };
            json!({
                "path": r.path,
                "dir": r.dir,
                "format": r.format.as_str(),
                "kind": kind,
                "globs": globs,
                "field": field,
                "reason": reason,
                "attached": r.attached_at_cwd,
                "attached_by": r.attached_by.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "formats": config.rule_formats().iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        "files": items,
        "notes": rules.notes,
        "skipped": rules.skipped,
    })
}

/// `check`'s lines for rule files that cannot load (R-RULE-2: unavailable;
/// R-RULE-1: skipped by the listing).
fn rule_check_lines(rules: &InspectedRules) -> Vec<String> {
    rules
        .rules
        .iter()
        .filter_map(|r| match &r.fate {
            RuleFate::Unavailable { reason, .. } => {
                Some(format!("{}: rule unavailable: {reason}", r.path))
            }
            _ => None,
        })
        .chain(rules.skipped.iter().cloned())
        .collect()
}

fn root_reason_json(reason: &RootReason) -> Value {
    match reason {
        RootReason::Marker { marker } => json!({"kind": "marker", "marker": marker}),
        RootReason::NoMarker => json!({"kind": "no-marker"}),
        RootReason::ProbeFailed { marker, error } => {
            json!({"kind": "probe-failed", "marker": marker, "error": error.to_string()})
        }
    }
}

fn fate_json(fate: &CandidateFate) -> Value {
    match fate {
        CandidateFate::Loaded { bytes } => json!({"kind": "loaded", "bytes": bytes}),
        CandidateFate::Truncated { from, to } => {
            json!({"kind": "truncated", "from": from, "to": to})
        }
        CandidateFate::OmittedByBudget { bytes } => {
            json!({"kind": "omitted-by-budget", "bytes": bytes})
        }
        CandidateFate::ShadowedBy { winner, differs } => {
            json!({"kind": "shadowed", "by": winner, "differs": differs})
        }
        CandidateFate::PointsTo { winner } => json!({"kind": "points-to", "to": winner}),
        CandidateFate::SkippedAfterUnavailable { blocker } => {
            json!({"kind": "skipped-after-unavailable", "blocker": blocker})
        }
        CandidateFate::DuplicateOf { of } => json!({"kind": "duplicate", "of": of}),
        CandidateFate::Absent => json!({"kind": "absent"}),
        CandidateFate::Unavailable {
            reason: Unavailable::OutsideTrustedRoots,
        } => json!({"kind": "outside-trusted-roots"}),
        CandidateFate::Unavailable { reason } => {
            json!({"kind": "unavailable", "reason": reason.to_string()})
        }
    }
}

/// The `explain --json` document (shape documented in docs/cli.md).
fn explain_json(seen: &Inspection, config: &Config, warnings: &[String]) -> Value {
    let candidates: Vec<Value> = seen
        .candidates
        .iter()
        .map(|c| {
            json!({
                "dir": c.dir,
                "name": c.name,
                "path": shown_path(seen, c),
                "local": c.local,
                "fate": fate_json(&c.fate),
                "problem": c.is_problem(),
                "imports": c.imports.iter().map(|i| json!({
                    "depth": i.depth,
                    "token": i.token,
                    "path": i.path,
                    "fate": import_fate_json(&i.fate),
                    "problem": i.fate.is_problem(),
                })).collect::<Vec<Value>>(),
            })
        })
        .collect();
    json!({
        "schema": EXPLAIN_SCHEMA,
        "cwd": seen.baseline.cwd.as_str(),
        "root": {"path": seen.baseline.root.as_str(), "reason": root_reason_json(&seen.baseline.root_reason)},
        "home": {"path": seen.baseline.home.path.as_str(), "label": seen.baseline.home.label.as_str()},
        "config": {
            "max_bytes": config.max_bytes().max_bytes(),
            "max_source_bytes": config.max_source_bytes(),
            "candidate_policy": config.candidate_policy().as_str(),
            "instruction_file_candidates": config.instruction_file_candidates(),
            "local_instruction_file_candidates": config.local_instruction_file_candidates(),
            "project_root_markers": config.project_root_markers(),
            "imports": config.imports(),
        },
        "identity": seen.baseline.identity,
        "budget": {
            "max_bytes": seen.baseline.max_bytes.max_bytes(),
            "rendered_bytes": seen.baseline.text.len(),
            "notice": seen.baseline.notice,
        },
        "candidates": candidates,
        "source": source_json(&seen.baseline.text, &seen.baseline.source),
        "warnings": warnings,
    })
}

#[cfg(test)]
mod tests {
    /// R-RULE-7: doctor names the rules in formats the hook does not read
    /// that would load (always on, path-scoped), never manual ones nor
    /// those it reads.
    #[rstest::rstest]
    #[case::all_read(&[RuleFormat::Claude, RuleFormat::Cursor], &[])]
    #[case::cursor_not_read(&[RuleFormat::Claude], &[".cursor/rules/x.mdc"])]
    #[case::none_read(&[], &[".claude/rules/a.md", ".cursor/rules/x.mdc"])]
    fn undelivered_rules_are_the_loadable_ones_in_unread_formats(
        #[case] read: &[RuleFormat],
        #[case] want: &[&str],
    ) {
        let rule = |path: &str, format, fate| InspectedRule {
            path: path.to_owned(),
            dir: Some(".".to_owned()),
            format,
            fate,
            attached_at_cwd: false,
            attached_by: Vec::new(),
        };
        let all = InspectedRules {
            rules: vec![
                rule(".claude/rules/a.md", RuleFormat::Claude, RuleFate::AlwaysOn),
                rule(
                    ".cursor/rules/x.mdc",
                    RuleFormat::Cursor,
                    RuleFate::PathScoped {
                        globs: vec!["*.ts".into()],
                    },
                ),
                rule(".cursor/rules/m.mdc", RuleFormat::Cursor, RuleFate::Manual),
            ],
            ..InspectedRules::default()
        };
        let got: Vec<String> = undelivered_rules(&all, read)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(got, want);
    }

    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(CandidateFate::Loaded { bytes: 12 }, "loaded (12 bytes)", "loaded")]
    #[case(CandidateFate::Truncated { from: 900, to: 100 }, "truncated from 900 to 100 bytes", "truncated")]
    #[case(CandidateFate::OmittedByBudget { bytes: 5 }, "omitted by budget (5 bytes)", "omitted-by-budget")]
    #[case(
        CandidateFate::ShadowedBy { winner: "AGENTS.md".into(), differs: Some(true) },
        "shadowed by AGENTS.md (content differs)",
        "shadowed"
    )]
    #[case(CandidateFate::PointsTo { winner: "AGENTS.md".into() }, "points to AGENTS.md", "points-to")]
    #[case(CandidateFate::DuplicateOf { of: "AGENTS.md".into() }, "duplicate of AGENTS.md", "duplicate")]
    #[case(CandidateFate::Absent, "absent", "absent")]
    #[case(
        CandidateFate::Unavailable { reason: Unavailable::OutsideTrustedRoots },
        "outside trusted roots",
        "outside-trusted-roots"
    )]
    #[case(
        CandidateFate::Unavailable { reason: Unavailable::PermissionDenied },
        "unavailable (permission denied)",
        "unavailable"
    )]
    fn fates_use_the_spec_vocabulary(
        #[case] fate: CandidateFate,
        #[case] text: &str,
        #[case] kind: &str,
    ) {
        assert_eq!(fate_text(&fate), text);
        assert_eq!(fate_json(&fate)["kind"], kind);
    }

    #[rstest]
    #[case(ImportFate::Expanded { bytes: 3 }, "expanded (3 bytes)", "expanded")]
    #[case(ImportFate::OwnSection, "loaded as its own section", "own-section")]
    #[case(
        ImportFate::AlreadyImported,
        "already imported above",
        "already-imported"
    )]
    #[case(ImportFate::Cycle, "cycle: already on the import path", "cycle")]
    #[case(ImportFate::TooDeep, "too deep (more than 5 levels)", "too-deep")]
    #[case(ImportFate::OverCount, "over the limit (64 imports)", "over-count")]
    #[case(
        ImportFate::OverBytes,
        "over the limit (max_source_bytes)",
        "over-bytes"
    )]
    #[case(ImportFate::Missing, "missing (stays plain text)", "missing")]
    #[case(
        ImportFate::OutsideTrustedRoots,
        "outside trusted roots",
        "outside-trusted-roots"
    )]
    #[case(
        ImportFate::Unavailable { reason: Unavailable::TooLarge { limit: 9 } },
        "unavailable (larger than max_source_bytes (9 bytes))",
        "unavailable"
    )]
    fn import_fates_use_the_spec_vocabulary(
        #[case] fate: ImportFate,
        #[case] text: &str,
        #[case] kind: &str,
    ) {
        // R-IMP-5
        assert_eq!(import_fate_text(&fate), text);
        assert_eq!(import_fate_json(&fate)["kind"], kind);
    }

    #[rstest]
    #[case(1, "AGENTS.md", "AGENTS.md", "  @AGENTS.md")]
    #[case(2, "../x.md", "x.md", "    @../x.md -> x.md")]
    fn import_rows_indent_by_depth(
        #[case] depth: usize,
        #[case] token: &str,
        #[case] path: &str,
        #[case] want: &str,
    ) {
        let i = InspectedImport {
            depth,
            token: token.into(),
            path: path.into(),
            fate: ImportFate::Missing,
        };
        assert_eq!(import_row(&i), want);
    }

    #[rstest]
    #[case(RootReason::Marker { marker: ".git".into() }, "marker .git", "marker")]
    #[case(RootReason::NoMarker, "no marker: cwd", "no-marker")]
    #[case(
        RootReason::ProbeFailed { marker: ".git".into(), error: Unavailable::Loop },
        "marker probe failed: .git: too many levels of symbolic links",
        "probe-failed"
    )]
    fn root_reasons_are_explained(#[case] r: RootReason, #[case] text: &str, #[case] kind: &str) {
        assert_eq!(root_reason_text(&r), text);
        assert_eq!(root_reason_json(&r)["kind"], kind);
    }

    #[rstest]
    #[case(0, "loading disabled: max_bytes <= 0")]
    #[case(4096, "max_bytes 4096")]
    fn budgets_read_naturally(#[case] max: u64, #[case] want: &str) {
        assert_eq!(budget_text(max), want);
    }
}
