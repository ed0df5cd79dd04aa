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
use toml_edit::DocumentMut;

use crate::agent::{Agent, Files, Locations, Scope};
use crate::codex::{self, Trust};
use crate::diff;
use crate::error::HookError;
use crate::files::{self, JsonDoc};
use crate::hooks::{self, EventStatus};
use crate::native::{self, NativeStatus};
use crate::state::{self, InstallState};

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
        self.agent.files(self.scope, self.locations)
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

enum Doc {
    Json { doc: JsonDoc, original: Value },
    Toml(DocumentMut),
}

struct Loaded {
    path: PathBuf,
    before: Option<String>,
    doc: Doc,
}

/// The files of one run, each parsed once even when two roles share it.
#[derive(Default)]
struct Docs {
    items: Vec<Loaded>,
}

impl Docs {
    fn find(&self, path: &Path) -> Option<usize> {
        self.items.iter().position(|l| l.path == path)
    }

    fn load_json(&mut self, path: &Path) -> Result<usize, HookError> {
        if let Some(i) = self.find(path) {
            return Ok(i);
        }
        let before = files::read_optional(path)?;
        let doc = JsonDoc::parse(path, before.as_deref())?;
        let original = doc.value.clone();
        self.items.push(Loaded {
            path: path.to_owned(),
            before,
            doc: Doc::Json { doc, original },
        });
        Ok(self.items.len() - 1)
    }

    fn load_toml(&mut self, path: &Path) -> Result<usize, HookError> {
        if let Some(i) = self.find(path) {
            return Ok(i);
        }
        let before = files::read_optional(path)?;
        let doc = files::parse_toml(path, before.as_deref())?;
        self.items.push(Loaded {
            path: path.to_owned(),
            before,
            doc: Doc::Toml(doc),
        });
        Ok(self.items.len() - 1)
    }

    fn json(&mut self, i: usize) -> Result<&mut Value, HookError> {
        let l = &mut self.items[i];
        match &mut l.doc {
            Doc::Json { doc, .. } => Ok(&mut doc.value),
            // `agent::files` never gives one path two formats; should that
            // break, the run fails instead of editing the wrong document.
            Doc::Toml(_) => Err(HookError::wrong_type(&l.path, "(top level)", "JSON")),
        }
    }

    fn toml(&mut self, i: usize) -> Result<&mut DocumentMut, HookError> {
        let l = &mut self.items[i];
        match &mut l.doc {
            Doc::Toml(d) => Ok(d),
            Doc::Json { .. } => Err(HookError::wrong_type(&l.path, "(top level)", "TOML")),
        }
    }
}

impl Loaded {
    /// The text after the run; an unchanged JSON document keeps its
    /// original text byte for byte.
    fn after(&self) -> Option<String> {
        match &self.doc {
            Doc::Json { doc, original } => {
                if doc.value == *original {
                    self.before.clone()
                } else {
                    Some(doc.render())
                }
            }
            Doc::Toml(d) => {
                let text = d.to_string();
                if self.before.is_none() && text.trim().is_empty() {
                    None
                } else {
                    Some(text)
                }
            }
        }
    }

    fn is_empty_after(&self) -> bool {
        match &self.doc {
            Doc::Json { doc, .. } => doc.value.as_object().is_some_and(|o| o.is_empty()),
            Doc::Toml(d) => d.to_string().trim().is_empty(),
        }
    }
}

/// One run's state: the parsed files and the installer's record.
struct Run {
    docs: Docs,
    state_path: PathBuf,
    state_before: Option<String>,
    state_orig: InstallState,
    state: InstallState,
    notes: Vec<String>,
}

impl Run {
    fn start(state_path: &Path) -> Result<Self, HookError> {
        let (state_before, state) = state::load(state_path)?;
        Ok(Self {
            docs: Docs::default(),
            state_path: state_path.to_owned(),
            state_before,
            state_orig: state.clone(),
            state,
            notes: Vec::new(),
        })
    }

    /// Turns the edited documents into the changes of the run, writes them
    /// unless `dry_run`, and returns the report.
    fn finish(
        mut self,
        target: &Target<'_>,
        removing: bool,
        dry_run: bool,
    ) -> Result<Report, HookError> {
        let mut changes = Vec::new();
        for l in &self.docs.items {
            let mut after = l.after();
            if after == l.before {
                continue;
            }
            let mut backup = l.before.as_ref().map(|_| files::backup_path(&l.path));
            if removing && self.state.was_created(&l.path) && l.is_empty_after() {
                // Install made this file and nothing but ours is left: it
                // goes, and so does its backup, which held only our text.
                after = None;
                backup = None;
                self.state.forget_created(&l.path);
            } else if !removing && l.before.is_none() {
                self.state.mark_created(&l.path);
            }
            changes.push(FileChange {
                path: l.path.clone(),
                before: l.before.clone(),
                after,
                backup,
            });
        }
        if self.state != self.state_orig {
            changes.push(FileChange {
                path: self.state_path.clone(),
                before: self.state_before,
                after: (!self.state.is_empty()).then(|| self.state.render()),
                backup: None,
            });
        }
        if !dry_run {
            write_all(&changes)?;
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

fn write_all(changes: &[FileChange]) -> Result<(), HookError> {
    for c in changes {
        if let (Some(b), Some(before)) = (&c.backup, &c.before) {
            files::write_atomic(b, before)?;
        }
    }
    for c in changes {
        match &c.after {
            Some(text) => files::write_atomic(&c.path, text)?,
            None => {
                files::remove(&c.path)?;
                files::remove(&files::backup_path(&c.path))?;
                // An agent directory (or `hooks/<agent>/`) left empty goes
                // too; a directory with anything in it stays (remove_dir
                // refuses it).
                if let Some(dir) = c.path.parent() {
                    let _ = std::fs::remove_dir(dir);
                }
            }
        }
    }
    Ok(())
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Registers `command` for the agent's events, switches the agent's own
/// instruction loading off and, for Codex, persists the hooks' trust, so
/// the agent runs the adapter with no extra flag (R-HOOK-5).
pub fn install(target: &Target<'_>, command: &str, dry_run: bool) -> Result<Report, HookError> {
    let files = target.files();
    let agent = target.agent;
    let mut run = Run::start(&files.state)?;
    let hi = run.docs.load_json(&files.hooks)?;
    let moves = hooks::install(run.docs.json(hi)?, &files.hooks, agent, command)?;
    let prior = run.state.native.get(&key(&files.native)).cloned();
    let rec = match agent {
        Agent::Claude => native::claude_off(run.docs.json(hi)?, &files.hooks, prior.as_ref())?,
        Agent::Gemini => native::gemini_off(run.docs.json(hi)?, &files.hooks, prior.as_ref())?,
        Agent::Codex => {
            let ni = run.docs.load_toml(&files.native)?;
            native::codex_off(run.docs.toml(ni)?, &files.native, prior.as_ref())?
        }
    };
    run.state.native.insert(key(&files.native), rec);
    if let Some(trust) = &files.trust {
        let ti = run.docs.load_toml(trust)?;
        let ours: Vec<_> = agent
            .events()
            .iter()
            .map(|s| (s, command.to_owned(), agent.timeout_value()))
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
pub fn uninstall(target: &Target<'_>, dry_run: bool) -> Result<Report, HookError> {
    let files = target.files();
    let mut run = Run::start(&files.state)?;
    let hi = run.docs.load_json(&files.hooks)?;
    let moves = hooks::uninstall(run.docs.json(hi)?, &files.hooks)?;
    let rec = run.state.native.remove(&key(&files.native));
    let note = match (&rec, target.agent) {
        (None, _) => Some(format!(
            "no record of the native-loading setting in {}; left as it is",
            files.native.display()
        )),
        (Some(r), Agent::Codex) => {
            let ni = run.docs.load_toml(&files.native)?;
            native::codex_restore(run.docs.toml(ni)?, &files.native, r)?
        }
        (Some(r), _) => native::json_restore(run.docs.json(hi)?, &files.hooks, r)?,
    };
    run.notes.extend(note);
    if let Some(trust) = &files.trust
        && (!moves.removed.is_empty() || !moves.moved.is_empty())
    {
        let ti = run.docs.load_toml(trust)?;
        codex::apply_trust(run.docs.toml(ti)?, trust, &files.hooks, &moves, &[])?;
    }
    run.finish(target, true, dry_run)
}

/// One event as doctor sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventReport {
    /// The event name.
    pub event: &'static str,
    /// Present, missing, stale or duplicated.
    pub status: EventStatus,
    /// Codex only: whether Codex will run the handler found.
    pub trust: Option<Trust>,
}

/// What `doctor` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// The agent.
    pub agent: Agent,
    /// The scope.
    pub scope: Scope,
    /// The files looked at.
    pub files: Files,
    /// Per registered event.
    pub events: Vec<EventReport>,
    /// Whether the agent's own loading is off.
    pub native: NativeStatus,
    /// Other reasons the setup is not healthy.
    pub problems: Vec<String>,
    /// Facts worth knowing that do not make it unhealthy.
    pub notes: Vec<String>,
}

impl Diagnosis {
    /// Healthy: every event present (and, for Codex, trusted), native
    /// loading off, no other problem.
    pub fn healthy(&self) -> bool {
        self.events.iter().all(|e| {
            e.status == EventStatus::Present
                && e.trust.as_ref().is_none_or(|t| *t == Trust::Trusted)
        }) && self.native == NativeStatus::Off
            && self.problems.is_empty()
    }

    /// The report as text, one line per finding.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} ({} scope): hooks in {}",
            self.agent,
            self.scope,
            self.files.hooks.display()
        );
        for e in &self.events {
            let status = match &e.status {
                EventStatus::Present => "present".to_owned(),
                EventStatus::Missing => "missing".to_owned(),
                EventStatus::Stale { detail } => format!("stale: {detail}"),
                EventStatus::Duplicated { count } => {
                    format!("registered {count} times: the adapter runs {count} times per event")
                }
            };
            let _ = write!(out, "  {:<17} {status}", e.event);
            match &e.trust {
                Some(Trust::Trusted) => out.push_str(", trusted"),
                Some(Trust::Untrusted) => out.push_str(", NOT trusted: Codex skips it silently"),
                Some(Trust::Modified) => {
                    out.push_str(", trust is for an older version: Codex skips it")
                }
                Some(Trust::Disabled) => out.push_str(", disabled in Codex (enabled = false)"),
                None => {}
            }
            out.push('\n');
        }
        match &self.native {
            NativeStatus::Off => {
                let _ = writeln!(
                    out,
                    "  native loading    off ({})",
                    self.files.native.display()
                );
            }
            NativeStatus::On(why) => {
                let _ = writeln!(
                    out,
                    "  native loading    ON: {why}; double delivery possible"
                );
            }
        }
        for p in &self.problems {
            let _ = writeln!(out, "  problem: {p}");
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        if !self.healthy() {
            let _ = writeln!(
                out,
                "fix: dsh-instructions hook install --agent {} --scope {}",
                self.agent, self.scope
            );
        } else {
            out.push_str("healthy\n");
        }
        out
    }
}

/// Reports what is installed for `target`, compared with what `install`
/// would write for `command`. Writes nothing.
pub fn doctor(target: &Target<'_>, command: &str) -> Result<Diagnosis, HookError> {
    let files = target.files();
    let agent = target.agent;
    let hooks_text = files::read_optional(&files.hooks)?;
    let doc = JsonDoc::parse(&files.hooks, hooks_text.as_deref())?.value;
    let mut problems = Vec::new();
    let trust_doc = match &files.trust {
        Some(t) => Some(files::parse_toml(t, files::read_optional(t)?.as_deref())?),
        None => None,
    };
    let mut events = Vec::new();
    for spec in agent.events() {
        let (status, pos) = hooks::check(&doc, &files.hooks, agent, spec, command)?;
        let trust = match (&trust_doc, &files.trust, pos) {
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
            status,
            trust,
        });
    }
    let native = match agent {
        Agent::Claude => {
            if doc.get("disableAllHooks") == Some(&Value::Bool(true)) {
                problems.push(format!(
                    "`disableAllHooks` is true in {}: Claude Code runs no hook",
                    files.hooks.display()
                ));
            }
            native::claude_status(&doc)
        }
        Agent::Gemini => {
            if doc.pointer("/hooksConfig/enabled") == Some(&Value::Bool(false)) {
                problems.push(format!(
                    "`hooksConfig.enabled` is false in {}: Gemini CLI runs no hook",
                    files.hooks.display()
                ));
            }
            native::gemini_status(&doc)
        }
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
    };
    problems.extend(other_scope_problem(target));
    let mut notes = Vec::new();
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

/// Our handlers in the other scope's file as well mean two adapters per
/// event: every file would be delivered twice.
fn other_scope_problem(target: &Target<'_>) -> Option<String> {
    let other = match target.scope {
        Scope::User => Scope::Project,
        Scope::Project => Scope::User,
    };
    let path = target.agent.files(other, target.locations).hooks;
    if path == target.files().hooks {
        return None;
    }
    let text = files::read_optional(&path).ok()??;
    let doc = JsonDoc::parse(&path, Some(&text)).ok()?.value;
    let any = doc
        .get("hooks")?
        .as_object()?
        .values()
        .filter_map(Value::as_array)
        .any(|l| !hooks::positions(l).is_empty());
    any.then(|| {
        format!(
            "also installed at {other} scope ({}): the adapter would run twice per event",
            path.display()
        )
    })
}
