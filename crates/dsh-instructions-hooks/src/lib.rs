#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod adapter;
mod agent;
mod codex;
mod diff;
mod error;
mod event;
mod files;
mod gemini;
mod hooks;
mod install;
mod lean;
mod native;
mod parts;
mod record;
mod state;

pub use adapter::{
    AGENT_CONTEXT_LIMIT, CONFIG_FILE_NAME, HOOK_MAX_BYTES, HookConfig, LOCK_WAIT, MAX_EVENT_BYTES,
    hook_preset, load_config, respond, respond_part, store_id,
};
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
pub use files::{BACKUP_SUFFIX, escape_control};
pub use hooks::EventStatus;
pub use install::{Diagnosis, EventReport, FileChange, Report, Target, doctor, install, uninstall};
pub use native::NativeStatus;
pub use parts::{CONTINUED, PART_BYTES, Part, part_label, render_part, split, unframe};
