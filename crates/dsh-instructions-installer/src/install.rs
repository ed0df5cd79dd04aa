//! `install`, `uninstall` and `doctor` (R-HOOK-5). Each takes explicit
//! locations ([`Locations`]) and never reads the environment.
//!
//! A run reads and parses every file it needs first, computes every new text
//! in memory, and only then writes: a malformed file therefore fails the run
//! before anything is written. Writing is backup first (`<file>.dsh-backup`,
//! the content just before this change), then each file atomically, then the
//! installer's record. A run that would change nothing writes nothing, so a
//! second `install` leaves every file, and every backup, as it was.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use dsh_instructions_hooks::{Agent, Scope, agents::NativeSwitch};

use crate::codex;
use crate::diagnosis::{Diagnosis, EventReport};
use crate::diff;
use crate::docs::{Doc, Docs};
use crate::error::InstallError;
use crate::files::{self, JsonDoc};
use crate::hooks::{self, EventStatus};
use crate::install_record::{self, FileRecord, InstallState};
use crate::layout::{self, Files, Locations};
use crate::native::{self, NativeStatus};
use crate::rules;
use crate::shown::shown;

/// What to install into: the agent, the scope and where things are.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The agent.
    pub agent: Agent,
    /// User or project settings.
    pub scope: Scope,
    /// Home, Codex home, project and DSH home directories.
    pub locations: &'a Locations,
}

impl Target<'_> {
    /// The files this target touches.
    pub fn files(&self) -> Files {
        layout::files(self.agent, self.scope, self.locations)
    }
}

/// One file a run changes (or, for a dry run, would change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Its text before (`None`: it did not exist).
    pub before: Option<String>,
    /// Its text after (`None`: it is removed).
    pub after: Option<String>,
    /// Where the previous text is saved (`None`: nothing to save, or the
    /// installer's own record).
    pub backup: Option<PathBuf>,
}

/// The outcome of `install` or `uninstall`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The agent.
    pub agent: Agent,
    /// The scope.
    pub scope: Scope,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The files changed, in write order.
    pub changes: Vec<FileChange>,
    /// Things the user should know (settings left alone, trust to grant).
    pub notes: Vec<String>,
}

impl Report {
    /// Whether the run changed (or would change) nothing.
    pub fn is_noop(&self) -> bool {
        self.changes.is_empty()
    }

    /// A unified diff of every change.
    pub fn diff(&self) -> String {
        self.changes
            .iter()
            .map(|c| {
                let label = c.path.to_string_lossy();
                diff::unified(
                    label.trim_start_matches('/'),
                    c.before.as_deref(),
                    c.after.as_deref(),
                )
            })
            .collect()
    }

    /// One line per changed file, then the notes.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if self.changes.is_empty() {
            let _ = writeln!(
                out,
                "nothing to change for {} ({} scope)",
                self.agent, self.scope
            );
        }
        let verb = |c: &FileChange| match (&c.before, &c.after, self.dry_run) {
            (None, _, false) => "created",
            (None, _, true) => "would create",
            (_, None, false) => "removed",
            (_, None, true) => "would remove",
            (_, _, false) => "updated",
            (_, _, true) => "would update",
        };
        for c in &self.changes {
            let _ = write!(out, "{} {}", verb(c), c.path.display());
            if let Some(b) = &c.backup {
                let _ = write!(
                    out,
                    " ({} {})",
                    if self.dry_run {
                        "backup would go to"
                    } else {
                        "backup:"
                    },
                    b.display()
                );
            }
            out.push('\n');
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }
}

/// One run's state: the parsed files and the installer's record.
pub(crate) struct Run {
    pub(crate) docs: Docs,
    files: Files,
    state_before: Option<String>,
    legacy_before: Option<String>,
    state_orig: InstallState,
    state: InstallState,
    owner: String,
    pub(crate) notes: Vec<String>,
}

impl Run {
    fn start(target: &Target<'_>) -> Result<Self, InstallError> {
        let files = target.files();
        let (state_before, legacy_before, state) =
            install_record::load(&files.state, &files.legacy_state)?;
        let owner = match target.scope {
            Scope::User => "user".to_owned(),
            Scope::Project => format!("project:{}", target.locations.project.display()),
        };
        Ok(Self {
            docs: Docs::default(),
            files,
            state_before,
            legacy_before,
            state_orig: state.clone(),
            state,
            owner,
            notes: Vec::new(),
        })
    }

    /// Turns the edited documents into the changes of the run, writes them
    /// all-or-nothing unless `dry_run`, and returns the report.
    fn finish(
        mut self,
        target: &Target<'_>,
        removing: bool,
        dry_run: bool,
    ) -> Result<Report, InstallError> {
        let mut changes = Vec::new();
        let mut writes = Vec::new();
        let mut backups = Vec::new();
        for l in &self.docs.items {
            let mut after = l.after();
            let k = key(&l.path);
            let mut restored_absent = false;
            if removing {
                if let Some(rec) = self.state.files.get_mut(&k) {
                    rec.owners.retain(|o| *o != self.owner);
                    if rec.owners.is_empty() {
                        // Nobody changed the file since our last install:
                        // its original bytes come back exactly.
                        if install_record::digest(l.before.as_deref()) == rec.installed {
                            after = rec.original.clone();
                            restored_absent = after.is_none();
                        }
                        self.state.files.remove(&k);
                    }
                }
                if self.state.was_created(&l.path) && (restored_absent || l.is_empty_after()) {
                    // Install made this file and nothing but ours is left.
                    after = None;
                    self.state.forget_created(&l.path);
                }
            } else {
                if l.before.is_none() && after.is_some() {
                    self.state.mark_created(&l.path);
                }
                if after != l.before || self.state.files.contains_key(&k) {
                    let rec = self.state.files.entry(k).or_insert_with(|| FileRecord {
                        original: l.before.clone(),
                        installed: String::new(),
                        owners: Vec::new(),
                    });
                    rec.installed = install_record::digest(after.as_deref());
                    if !rec.owners.contains(&self.owner) {
                        rec.owners.push(self.owner.clone());
                    }
                }
            }
            if after == l.before {
                continue;
            }
            let bpath = files::backup_path(&l.real);
            // The first backup is never overwritten: it holds the text
            // before the first change.
            // Cline's hook files are only ever ours, and Cline would run a
            // backup beside them (`PreToolUse.dsh-backup` is named after
            // the event too): none is made. pi and opencode load only
            // `.ts`/`.js` files, so the file their extension or plugin
            // replaces is kept as for every other agent.
            let no_backup = target.agent == Agent::Cline && matches!(l.doc, Doc::Text(_));
            let backup = (!removing && !no_backup && l.before.is_some() && !bpath.exists())
                .then_some(bpath.clone());
            if let (Some(b), Some(text)) = (&backup, &l.before) {
                backups.push(files::Write {
                    path: b.clone(),
                    before: None,
                    after: Some(text.clone()),
                    // A 0600 settings file must not get a 0644 copy.
                    mode_of: Some(l.real.clone()),
                });
            }
            if after.is_none()
                && removing
                && let Ok(text) = std::fs::read_to_string(&bpath)
            {
                // A file that goes again takes its backup (of our own text) along.
                backups.push(files::Write {
                    path: bpath,
                    before: Some(text),
                    after: None,
                    mode_of: None,
                });
            }
            writes.push(files::Write {
                path: l.real.clone(),
                before: l.before.clone(),
                after: after.clone(),
                mode_of: None,
            });
            changes.push(FileChange {
                path: l.path.clone(),
                before: l.before.clone(),
                after,
                backup,
            });
        }
        let moved = self.state_before.is_none() && self.legacy_before.is_some();
        if self.state != self.state_orig || moved {
            let after = (!self.state.is_empty()).then(|| self.state.render());
            if after != self.state_before {
                writes.push(files::Write {
                    path: self.files.state.clone(),
                    before: self.state_before.clone(),
                    after: after.clone(),
                    mode_of: None,
                });
                changes.push(FileChange {
                    path: self.files.state.clone(),
                    before: self.state_before,
                    after,
                    backup: None,
                });
            }
            if let Some(old) = self.legacy_before {
                writes.push(files::Write {
                    path: self.files.legacy_state.clone(),
                    before: Some(old.clone()),
                    after: None,
                    mode_of: None,
                });
                changes.push(FileChange {
                    path: self.files.legacy_state.clone(),
                    before: Some(old),
                    after: None,
                    backup: None,
                });
            }
        }
        if !dry_run {
            backups.extend(writes);
            files::commit(&backups)?;
        }
        Ok(Report {
            agent: target.agent,
            scope: target.scope,
            dry_run,
            changes,
            notes: self.notes,
        })
    }
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// What [`install_with`] does beyond what [`install`] does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallOptions {
    /// `Some`: the rule formats the hook reads (`--rules`, R-RULE-7),
    /// written as `rule_formats` into the hook's `config.json`
    /// (`$DSH_HOME/hooks/<agent>/config.json`; uninstall takes out what
    /// install wrote). `None`: that file is left alone.
    pub rules: Option<Vec<dsh_instructions_hooks::state::config::RuleFormat>>,
    /// pi and opencode: the directory of the installed npm package
    /// `dsh-agent-instructions`, whose extension or plugin the file
    /// written into the agent's directory loads (decision 0086). Required
    /// for them; the other agents ignore it.
    pub package: Option<PathBuf>,
}

/// Registers the agent's commands for `base` (`<base> --part K` for
/// K = 1..=PARTS on Claude Code and Codex, `<base>` on Gemini CLI) for the
/// agent's events, switches the agent's own instruction loading off and,
/// for Codex, persists the hooks' trust, so the agent runs the adapter with
/// no extra flag (R-HOOK-5). Every file is written or none (R-HOOK-10).
/// [`install_with`] with [`InstallOptions::default`].
pub fn install(target: &Target<'_>, base: &str, dry_run: bool) -> Result<Report, InstallError> {
    install_with(target, base, &InstallOptions::default(), dry_run)
}

/// [`install`], and what `options` asks for on top, in the same
/// all-or-nothing run.
///
/// ```
/// use dsh_instructions_hooks::state::config::RuleFormat;
/// use dsh_instructions_installer::{Agent, InstallOptions, Locations, Scope, Target, install_with};
/// let tmp = tempfile::tempdir()?;
/// let loc = Locations::in_home(tmp.path().join("home"), tmp.path().join("repo"));
/// let target = Target { agent: Agent::Codex, scope: Scope::User, locations: &loc };
/// let options = InstallOptions { rules: Some(vec![RuleFormat::Cursor]), ..InstallOptions::default() };
/// install_with(&target, "/bin/dsh-instructions hook --agent codex", &options, false)?;
/// let config = std::fs::read_to_string(loc.dsh_home.join("hooks/codex/config.json"))?;
/// assert!(config.contains(r#""rule_formats""#) && config.contains(r#""cursor""#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`install`]; also a hook `config.json` that is malformed or no
/// object, naming the file.
pub fn install_with(
    target: &Target<'_>,
    base: &str,
    options: &InstallOptions,
    dry_run: bool,
) -> Result<Report, InstallError> {
    let agent = target.agent;
    let mut run = Run::start(target)?;
    let files = run.files.clone();
    if let Some(formats) = &options.rules {
        let config = rules::hook_config(&target.locations.dsh_home, agent);
        let prior = run.state.native.get(&key(&config)).cloned();
        let ci = run.docs.load_json(&config)?;
        let rec = rules::set_rule_formats(run.docs.json(ci)?, &config, formats, prior.as_ref())?;
        run.state.native.insert(key(&config), rec);
        if agent == Agent::Claude
            && !formats.contains(&dsh_instructions_hooks::state::config::RuleFormat::Claude)
        {
            // Claude's excludes still name its rules (R-RULE-7).
            run.notes.push(rules::CLAUDE_RULES_NOTE.to_owned());
        }
    }
    if agent == Agent::Cline {
        // Files of our own, one per event; Cline's own loading stays on
        // and keeps what it loads (decision 0089).
        crate::cline::install(&mut run.docs, &files.hooks, base)?;
        run.notes.push(format!(
            "Cline's own instruction loading stays on: {}",
            native::CLINE_NATIVE_NOTE
        ));
        return run.finish(target, false, dry_run);
    }
    if agent.in_process() {
        // One file of our own that loads the package's extension or
        // plugin; the agent's own loading stays on (decision 0086).
        let package = options.package.as_deref().unwrap_or(Path::new(""));
        let text = crate::in_process::text(agent, package)?;
        let i = run.docs.load_text(&files.hooks)?;
        *run.docs.text(i)?.0 = Some(text);
        run.notes.push(format!(
            "{agent}'s own instruction loading stays on: {}",
            native::IN_PROCESS_NATIVE_NOTE
        ));
        return run.finish(target, false, dry_run);
    }
    let hi = run.docs.load_json(&files.hooks)?;
    if agent == Agent::Copilot {
        // A file of our own; native loading stays on (decision 0067), so
        // there is no setting to record.
        crate::copilot::install(run.docs.json(hi)?, &files.hooks, base)?;
        run.notes.push(format!(
            "Copilot CLI's own instruction loading stays on: {}",
            native::COPILOT_NATIVE_NOTE
        ));
        return run.finish(target, false, dry_run);
    }
    let moves = hooks::install(run.docs.json(hi)?, &files.hooks, agent, base)?;
    let prior = run.state.native.get(&key(&files.native)).cloned();
    let rec = match agent.profile().native {
        NativeSwitch::ClaudeMdExcludes(patterns) => {
            let patterns = claude_excludes(patterns, target.locations);
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            native::claude_off(run.docs.json(hi)?, &files.hooks, &patterns, prior.as_ref())?
        }
        NativeSwitch::GeminiContextFileName => {
            native::gemini_off(run.docs.json(hi)?, &files.hooks, prior.as_ref())?
        }
        NativeSwitch::CodexProjectDocMaxBytes => {
            let ni = run.docs.load_toml(&files.native)?;
            native::codex_off(run.docs.toml(ni)?, &files.native, prior.as_ref())?
        }
        NativeSwitch::QwenContextFileName(name) => {
            native::qwen_off(run.docs.json(hi)?, &files.hooks, name, prior.as_ref())?
        }
        // Handled above: Copilot CLI, Cline, pi and opencode have no native
        // setting to record.
        NativeSwitch::CopilotKeptOn | NativeSwitch::ClineKeptOn | NativeSwitch::InProcessKeptOn => {
            return run.finish(target, false, dry_run);
        }
    };
    run.state.native.insert(key(&files.native), rec);
    if let Some(trust) = &files.trust {
        let ti = run.docs.load_toml(trust)?;
        let ours: Vec<_> = agent
            .events()
            .iter()
            .map(|s| (s, agent.commands(base), agent.timeout_value()))
            .collect();
        let doc = run.docs.toml(ti)?;
        codex::apply_trust(doc, trust, &files.hooks, &moves, &ours)?;
        if target.scope == Scope::Project && !codex::project_trusted(doc, &target.locations.project)
        {
            run.notes.push(project_untrusted_note(target.locations));
        }
    }
    if agent == Agent::Gemini && target.scope == Scope::Project {
        run.notes.push(GEMINI_PROJECT_NOTE.to_owned());
    }
    run.finish(target, false, dry_run)
}

const GEMINI_PROJECT_NOTE: &str =
    "Gemini CLI reads a project's .gemini/settings.json only in a trusted folder";

fn project_untrusted_note(loc: &Locations) -> String {
    format!(
        "Codex ignores {}/.codex until the project is trusted: add [projects.\"{}\"] trust_level = \"trusted\" to {}",
        loc.project.display(),
        loc.project.display(),
        loc.codex_home.join("config.toml").display()
    )
}

/// Removes our handlers (and the containers only they filled), restores the
/// native-loading setting recorded at install and, for Codex, the trust
/// entries; a file install created and that is now empty is removed.
pub fn uninstall(target: &Target<'_>, dry_run: bool) -> Result<Report, InstallError> {
    let mut run = Run::start(target)?;
    let files = run.files.clone();
    if target.agent == Agent::Cline {
        crate::cline::uninstall(&mut run.docs, &files.hooks)?;
        restore_rules(&mut run, target)?;
        return run.finish(target, true, dry_run);
    }
    if target.agent.in_process() {
        // The record gives back what was there before install (or nothing).
        let i = run.docs.load_text(&files.hooks)?;
        let (after, before) = run.docs.text(i)?;
        if before.is_some_and(crate::in_process::is_ours) {
            *after = None;
        }
        restore_rules(&mut run, target)?;
        return run.finish(target, true, dry_run);
    }
    let hi = run.docs.load_json(&files.hooks)?;
    if target.agent == Agent::Copilot {
        crate::copilot::uninstall(run.docs.json(hi)?, &files.hooks)?;
        return run.finish(target, true, dry_run);
    }
    let moves = hooks::uninstall(run.docs.json(hi)?, &files.hooks)?;
    let rec = run.state.native.remove(&key(&files.native));
    let note = match (&rec, target.agent) {
        (None, _) => Some(format!(
            "no record of the native-loading setting in {}; left as it is",
            shown(&files.native)
        )),
        (Some(r), Agent::Codex) => {
            let ni = run.docs.load_toml(&files.native)?;
            native::codex_restore(run.docs.toml(ni)?, &files.native, r)?
        }
        (Some(r), _) => native::json_restore(run.docs.json(hi)?, &files.hooks, r)?,
    };
    run.notes.extend(note);
    restore_rules(&mut run, target)?;
    if let Some(trust) = &files.trust
        && (!moves.removed.is_empty()
            || !moves.moved.is_empty()
            || run.state.files.contains_key(&key(trust)))
    {
        let ti = run.docs.load_toml(trust)?;
        codex::apply_trust(run.docs.toml(ti)?, trust, &files.hooks, &moves, &[])?;
    }
    run.finish(target, true, dry_run)
}

/// Takes out what `--rules` wrote into the hook's config.json (R-RULE-7).
fn restore_rules(run: &mut Run, target: &Target<'_>) -> Result<(), InstallError> {
    let config = rules::hook_config(&target.locations.dsh_home, target.agent);
    if let Some(r) = run.state.native.remove(&key(&config)) {
        let ci = run.docs.load_json(&config)?;
        run.notes
            .extend(native::json_restore(run.docs.json(ci)?, &config, &r)?);
    }
    Ok(())
}

/// Reports what is installed for `target`, compared with what `install`
/// would write for the base command `command` (per event and per part).
/// Writes nothing.
pub fn doctor(target: &Target<'_>, command: &str) -> Result<Diagnosis, InstallError> {
    let files = target.files();
    let agent = target.agent;
    if agent == Agent::Cline {
        let crate::cline::Checked {
            events: found,
            mut problems,
        } = crate::cline::check(&files.hooks, command)?;
        let events = found
            .into_iter()
            .map(|(event, status)| EventReport {
                event,
                part: None,
                status,
                trust: None,
            })
            .collect();
        problems.extend(other_scope_problem(target));
        let mut notes = session_notes(target);
        notes.push(native::CLINE_RULES_NOTE.to_owned());
        return Ok(Diagnosis {
            agent,
            scope: target.scope,
            files,
            events,
            native: NativeStatus::Kept(native::CLINE_NATIVE_NOTE.to_owned()),
            problems,
            notes,
        });
    }
    if agent.in_process() {
        return in_process_doctor(target, files, None);
    }
    let hooks_text = files::read_optional(&files.hooks)?;
    let doc = JsonDoc::parse(&files.hooks, hooks_text.as_deref())?.value;
    let mut problems = Vec::new();
    let trust_doc = match &files.trust {
        Some(t) => Some(files::parse_toml(t, files::read_optional(t)?.as_deref())?),
        None => None,
    };
    let mut events = Vec::new();
    for spec in agent.events() {
        let found = if agent == Agent::Copilot {
            vec![crate::copilot::check(&doc, &files.hooks, spec, command)?]
        } else {
            hooks::check(&doc, &files.hooks, agent, spec, command)?
        };
        for found in found {
            let trust = match (&trust_doc, &files.trust, found.pos) {
                (Some(td), Some(tp), Some(pos)) => {
                    let grp = &doc["hooks"][spec.name][pos.0];
                    let h = &grp["hooks"][pos.1];
                    let hash = codex::trust_hash(
                        spec.name,
                        grp.get("matcher").and_then(Value::as_str),
                        h.get("command").and_then(Value::as_str).unwrap_or(""),
                        h.get("timeout").and_then(Value::as_u64).unwrap_or(600),
                    );
                    Some(codex::trust_of(
                        td,
                        tp,
                        &codex::trust_key(&files.hooks, spec.name, pos),
                        &hash,
                    )?)
                }
                _ => None,
            };
            events.push(EventReport {
                event: spec.name,
                part: found.part,
                status: found.status,
                trust,
            });
        }
    }
    // Entries of ours without the installer's record: a half-done install
    // of an earlier version, which uninstall could not undo.
    let (_, _, record) = install_record::load(&files.state, &files.legacy_state)?;
    let any_ours = events.iter().any(|e| e.status != EventStatus::Missing);
    let has_native_setting = !matches!(agent, Agent::Copilot | Agent::Cline);
    if any_ours && has_native_setting && !record.native.contains_key(&key(&files.native)) {
        problems.push(format!(
            "the installer's record ({}) has nothing for {}: the install is incomplete and uninstall could not restore the native setting; run install again",
            shown(&files.state),
            shown(&files.native)
        ));
    }
    // The agent's own switch that turns every hook off, when it has one.
    let hooks_off = match agent {
        Agent::Claude => Some(("/disableAllHooks", true, "Claude Code")),
        Agent::Qwen => Some(("/disableAllHooks", true, "Qwen Code")),
        Agent::Gemini => Some(("/hooksConfig/enabled", false, "Gemini CLI")),
        Agent::Codex | Agent::Copilot | Agent::Cline | Agent::Pi | Agent::Opencode => None,
    };
    if let Some((pointer, off, name)) = hooks_off
        && doc.pointer(pointer) == Some(&Value::Bool(off))
    {
        let key = pointer[1..].replace('/', ".");
        problems.push(format!(
            "`{key}` is {off} in {}: {name} runs no hook",
            files.hooks.display()
        ));
    }
    let native = match agent {
        Agent::Claude => {
            let patterns = claude_excludes(excludes(agent), target.locations);
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            native::claude_status(&doc, &patterns)
        }
        Agent::Gemini => native::gemini_status(&doc),
        Agent::Codex => {
            let nd = files::parse_toml(
                &files.native,
                files::read_optional(&files.native)?.as_deref(),
            )?;
            let mut v = codex::doc_max_bytes(&nd, &files.native)?;
            if v.is_none()
                && target.scope == Scope::Project
                && let Some(td) = &trust_doc
            {
                // A project layer without the key inherits the user's value.
                v = codex::doc_max_bytes(td, files.trust.as_deref().unwrap_or(Path::new("")))?;
            }
            if target.scope == Scope::Project
                && let Some(td) = &trust_doc
                && !codex::project_trusted(td, &target.locations.project)
            {
                problems.push(project_untrusted_note(target.locations));
            }
            native::codex_status(v)
        }
        Agent::Qwen => native::qwen_status(&doc),
        Agent::Copilot => NativeStatus::Kept(native::COPILOT_NATIVE_NOTE.to_owned()),
        Agent::Cline => NativeStatus::Kept(native::CLINE_NATIVE_NOTE.to_owned()),
        Agent::Pi | Agent::Opencode => {
            NativeStatus::Kept(native::IN_PROCESS_NATIVE_NOTE.to_owned())
        }
    };
    problems.extend(other_scope_problem(target));
    let mut notes = session_notes(target);
    if agent == Agent::Qwen {
        notes.push(native::QWEN_RULES_NOTE.to_owned());
    }
    if agent == Agent::Gemini {
        notes.push(native::GEMINI_MD_NOTE.to_owned());
        if target.scope == Scope::Project {
            notes.push(GEMINI_PROJECT_NOTE.to_owned());
        }
    }
    Ok(Diagnosis {
        agent,
        scope: target.scope,
        files,
        events,
        native,
        problems,
        notes,
    })
}

/// Sessions whose side files are damaged (they heal at their next event,
/// so they do not make the installation unhealthy).
fn session_notes(target: &Target<'_>) -> Vec<String> {
    camino::Utf8PathBuf::from_path_buf(dsh_instructions_hooks::agents::sessions_dir(
        &target.locations.dsh_home,
        target.agent,
    ))
    .map(|sessions| dsh_instructions_hooks::doctor_notes(&sessions))
    .unwrap_or_default()
}

/// [`doctor`] for pi and opencode: their one file (present, missing or
/// stale — compared with what install writes for `package` when known),
/// their loading kept on, the file in the other scope too.
pub fn doctor_in_process(
    target: &Target<'_>,
    package: Option<&Path>,
) -> Result<Diagnosis, InstallError> {
    in_process_doctor(target, target.files(), package)
}

fn in_process_doctor(
    target: &Target<'_>,
    files: Files,
    package: Option<&Path>,
) -> Result<Diagnosis, InstallError> {
    let agent = target.agent;
    let found = files::read_optional(&files.hooks)?;
    let wanted = package.and_then(|p| crate::in_process::text(agent, p).ok());
    let status = crate::in_process::status(agent, found.as_deref(), wanted.as_deref());
    let problems: Vec<String> = other_scope_problem(target).into_iter().collect();
    let mut notes = Vec::new();
    if let Ok(sessions) = camino::Utf8PathBuf::from_path_buf(
        target.locations.dsh_home.join("hooks").join(agent.as_str()),
    ) {
        notes.push(format!("sessions and hook.log: {sessions}"));
    }
    Ok(Diagnosis {
        agent,
        scope: target.scope,
        files,
        events: vec![EventReport {
            event: crate::in_process::entry_name(agent),
            part: None,
            status,
            trust: None,
        }],
        native: NativeStatus::Kept(native::IN_PROCESS_NATIVE_NOTE.to_owned()),
        problems,
        notes,
    })
}

/// Our handlers in the other scope's file as well mean two adapters per
/// event: every file would be delivered twice.
fn other_scope_problem(target: &Target<'_>) -> Option<String> {
    let other = match target.scope {
        Scope::User => Scope::Project,
        Scope::Project => Scope::User,
    };
    let path = layout::files(target.agent, other, target.locations).hooks;
    if path == target.files().hooks {
        return None;
    }
    if target.agent.in_process() {
        let ours = files::read_optional(&path)
            .ok()
            .flatten()
            .is_some_and(|t| crate::in_process::is_ours(&t));
        return ours.then(|| {
            format!(
                "also installed at {other} scope ({}): {} would load it twice",
                path.display(),
                target.agent
            )
        });
    }
    if target.agent == Agent::Cline {
        return crate::cline::any_ours(&path).then(|| {
            format!(
                "also installed at {other} scope ({}): the adapter would run twice per event",
                path.display()
            )
        });
    }
    let text = files::read_optional(&path).ok()??;
    let doc = JsonDoc::parse(&path, Some(&text)).ok()?.value;
    let any = doc
        .get("hooks")?
        .as_object()?
        .values()
        .filter_map(Value::as_array)
        .any(|l| {
            if target.agent == Agent::Copilot {
                crate::copilot::any_ours(l)
            } else {
                !hooks::positions(l).is_empty()
            }
        });
    any.then(|| {
        format!(
            "also installed at {other} scope ({}): the adapter would run twice per event",
            path.display()
        )
    })
}

/// The `claudeMdExcludes` patterns install writes and doctor looks for:
/// the profile's, then the user's rules directory by its absolute path
/// (Claude Code matches the patterns against absolute paths; whether it
/// reads `~/` in one is not measured, so both forms, decision 0059). None
/// for an agent switched off by another setting.
fn claude_excludes(profile: &[&str], locations: &Locations) -> Vec<String> {
    let mut out: Vec<String> = profile.iter().map(|p| (*p).to_owned()).collect();
    if !out.is_empty() {
        let rules = locations.home.join(".claude").join("rules");
        out.push(format!("{}/**", rules.to_string_lossy()));
    }
    out
}

/// The `claudeMdExcludes` patterns of `agent`'s profile (none for an agent
/// switched off by another setting).
fn excludes(agent: Agent) -> &'static [&'static str] {
    match agent.profile().native {
        NativeSwitch::ClaudeMdExcludes(patterns) => patterns,
        NativeSwitch::GeminiContextFileName
        | NativeSwitch::CodexProjectDocMaxBytes
        | NativeSwitch::QwenContextFileName(_)
        | NativeSwitch::CopilotKeptOn
        | NativeSwitch::ClineKeptOn
        | NativeSwitch::InProcessKeptOn => &[],
    }
}
