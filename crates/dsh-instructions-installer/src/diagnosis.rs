//! What `doctor` found ([`Diagnosis`]) and how it reads (R-HOOK-5).

use std::fmt::Write as _;

use dsh_instructions_hooks::{Agent, Scope};

use crate::codex::Trust;
use crate::hooks::EventStatus;
use crate::layout::Files;
use crate::native::NativeStatus;

/// One event as doctor sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventReport {
    /// The event name.
    pub event: &'static str,
    /// The part (`--part K`) this entry answers; `None` for Gemini CLI's one
    /// entry per event, or an old entry without `--part`.
    pub part: Option<u32>,
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
    /// Notes the instruction files above the project root found at the
    /// current directory (`ancestor_instruction_files`, R-HOOK-8), each
    /// `"<absolute path>: <fate>"` as `explain` words it: Claude Code reads
    /// them natively, `claudeMdExcludes` silences that, and the hook
    /// delivers them instead (decision 0044). Only Claude Code's hook has
    /// them; other agents' diagnoses are left alone.
    ///
    /// ```
    /// # use dsh_instructions_installer::Diagnosis;
    /// # fn note(d: &mut Diagnosis) {
    /// d.note_ancestor_files(["/home/u/code/CLAUDE.md: loaded (12 bytes)".to_owned()]);
    /// # }
    /// ```
    pub fn note_ancestor_files(&mut self, files: impl IntoIterator<Item = String>) {
        if self.agent != Agent::Claude {
            return;
        }
        for file in files {
            self.notes.push(format!(
                "above the project root: {file}; delivered by the hook (Claude Code's own loading is off)"
            ));
        }
    }

    /// Healthy: every event present (and, for Codex, trusted), native
    /// loading off, no other problem.
    pub fn healthy(&self) -> bool {
        self.events.iter().all(|e| {
            e.status == EventStatus::Present
                && e.trust.as_ref().is_none_or(|t| *t == Trust::Trusted)
        }) && matches!(self.native, NativeStatus::Off | NativeStatus::Kept(_))
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
            let name = match e.part {
                Some(k) => format!("{} part {k}", e.event),
                None => e.event.to_owned(),
            };
            let _ = write!(out, "  {name:<24} {status}");
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
            NativeStatus::Kept(why) => {
                let _ = writeln!(out, "  native loading    on, {why}");
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
