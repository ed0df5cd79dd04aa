#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod adapter;
mod agent;
mod deferred;
mod dirstamps;
mod event;
mod gemini;
mod heal;
mod lean;
mod names;
mod native_chain;
mod order;
mod outcome;
mod parts;
mod preset;
mod profile;
mod quiet;
mod record;
mod shown;
#[cfg(test)]
mod testdir;
mod tools;
mod touch;

pub use adapter::{
    LOCK_WAIT, LOCK_WAIT_ENV, MAX_EVENT_BYTES, respond, respond_event_to, respond_part,
    respond_part_to, respond_part_to_and_exit, store_id,
};
pub use agent::{
    Agent, CLAUDE_EXCLUDES, EventSpec, PARTS, ParseNameError, Scope, TIMEOUT_SECONDS, hook_command,
    is_our_command, sessions_dir,
};
pub use event::{
    Action, EventError, HookEvent, PathArg, StartSource, ToolMap, Touched, default_tools,
    event_from_value, parse_event, shell_tool, touched_paths,
};
pub use heal::doctor_notes;
pub use order::{ORDER_DEADLINE, PART_GAP, PART_GAP_ENV};
pub use parts::{CONTINUED, PART_BYTES, Part, part_label, render_part, split};
pub use preset::{
    AGENT_CONTEXT_LIMIT, CONFIG_FILE_NAME, HOOK_MAX_BYTES, HookConfig, HookConfigError,
    hook_preset, load_config,
};
pub use profile::{AgentProfile, Framing, NativeSwitch, PresetDifference, QWEN_NO_SUCH_FILE};
pub use shown::escape_control;
pub use tools::{AgentTool, ToolTouch, agent_tools, is_installed_tool};

// The foreign types this crate's public signatures take (`respond`'s home
// variables, the hook preset's input, a profile's library preset, the
// message `split` cuts, the rule formats `hook install --rules` writes),
// so a product can depend on this crate alone — its
// README example does, and `cargo xtask package` builds it so.
pub use dsh_home_paths::HomeEnv;
pub use dsh_instructions_runtime::WorkspaceMessage;
pub use dsh_instructions_state::{ConfigInput, Preset, config::RuleFormat};
