//! Installs the `dsh-instructions hook` adapter into Claude Code, the Codex
//! CLI and the Gemini CLI, takes it out again, and checks it (SPEC §12,
//! R-HOOK-5: exactly once — the adapter and the agent's own instruction
//! loading never both deliver a file).
//!
//! - [`install`] merges our command hook into the agent's settings for the
//!   events of [`Agent::events`] (idempotent: an existing entry is updated in
//!   place, never duplicated; `<file>.dsh-backup` holds the previous text),
//!   switches the agent's native instruction loading off and, for Codex,
//!   persists the hooks' trust so Codex runs them without a flag.
//! - [`uninstall`] removes our entries and puts the native setting back to
//!   what it was before install (recorded in `$DSH_HOME/installer/<agent>.json`);
//!   a file untouched since install gets its original bytes back (R-HOOK-10).
//! - [`doctor`] reports per event present / missing / stale, whether native
//!   loading is off (else double delivery is possible) and, for Codex,
//!   whether trust is persisted.
//!
//! - [`respond`] is the event handler behind `dsh-instructions hook --agent
//!   A`: one event from stdin to the agent's answer, over the agent
//!   session's persisted log (R-HOOK-1..4); it never fails the agent.
//!
//! Every function takes explicit [`Locations`]; nothing here reads the
//! process environment. A malformed or unreadable settings file is a typed
//! [`HookError`] naming the file, and then nothing is written.
//!
//! ```
//! use dsh_instructions_hooks::{Agent, Locations, Scope, Target, install};
//! let tmp = tempfile::tempdir().unwrap();
//! let loc = Locations {
//!     home: tmp.path().join("home"),
//!     codex_home: tmp.path().join("home/.codex"),
//!     project: tmp.path().join("repo"),
//!     dsh_home: tmp.path().join("home/.dsh"),
//! };
//! let target = Target { agent: Agent::Claude, scope: Scope::User, locations: &loc };
//! let report = install(&target, "/usr/bin/dsh-instructions hook --agent claude", true).unwrap();
//! assert!(report.diff().contains("+++ b/"));
//! assert!(!loc.home.join(".claude/settings.json").exists()); // dry run
//! ```

#![forbid(unsafe_code)]

mod adapter;
mod agent;
mod codex;
mod deferred;
mod diff;
mod error;
mod event;
mod files;
mod gemini;
mod hooks;
mod install;
mod install_record;
mod lean;
mod names;
mod native;
mod parts;
mod preset;
mod record;
mod shown;
mod tools;
mod touch;

pub use adapter::{LOCK_WAIT, LOCK_WAIT_ENV, MAX_EVENT_BYTES, respond, respond_part, store_id};
pub use agent::{
    Agent, CLAUDE_EXCLUDES, EventSpec, Files, Locations, PARTS, ParseNameError, Scope,
    TIMEOUT_SECONDS, hook_command, installer_dir, is_our_command, sessions_dir,
};
pub use codex::{Trust, trust_hash, trust_key};
pub use error::HookError;
pub use event::{
    Action, EventError, HookEvent, PathArg, StartSource, ToolMap, Touched, default_tools,
    event_from_value, parse_event, shell_tool, touched_paths,
};
pub use files::BACKUP_SUFFIX;
pub use hooks::EventStatus;
pub use install::{Diagnosis, EventReport, FileChange, Report, Target, doctor, install, uninstall};
pub use native::NativeStatus;
pub use parts::{CONTINUED, PART_BYTES, Part, part_label, render_part, split, unframe};
pub use preset::{
    AGENT_CONTEXT_LIMIT, CONFIG_FILE_NAME, HOOK_MAX_BYTES, HookConfig, hook_preset, load_config,
};
pub use shown::escape_control;
pub use tools::{AgentTool, ToolTouch, agent_tools, is_installed_tool};
