#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod agent;
mod answer;
pub mod config;
mod deferred;
mod deliver;
mod dirstamps;
mod error;
pub mod event;
mod gemini;
mod handle;
mod heal;
mod hooklog;
mod names;
mod native_chain;
mod order;
mod outcome;
mod piece;
mod profile;
mod quiet;
mod record;
mod session;
mod shown;
mod split;
#[cfg(test)]
mod testdir;
mod tools;
mod touch;

pub use answer::answer;
pub use error::HookError;
pub use handle::Invocation;
pub use heal::doctor_notes;
pub use names::{Agent, Scope};
pub use session::{LOCK_WAIT, LOCK_WAIT_ENV, store_id};
pub use shown::escape_control;

/// What the hook and its installer share about each agent (R-HOOK-3,
/// R-HOOK-5): the events registered and their matchers, generated from
/// the one tool table; the parts; the hook command; the agent's one
/// profile (decision 0051) with the framing of its answers and its native
/// instruction loading.
pub mod agents {
    pub use crate::agent::{
        CLAUDE_EXCLUDES, EventSpec, PARTS, TIMEOUT_SECONDS, hook_command, is_our_command,
        sessions_dir,
    };
    pub use crate::profile::{
        AgentProfile, Framing, NativeSwitch, PresetDifference, QWEN_NO_SUCH_FILE,
    };
    pub use crate::tools::{AgentTool, ToolTouch, agent_tools, is_installed_tool};
}

/// A message cut into the pieces the registered `--part K` entries answer
/// (R-HOOK-4, decision 0018), and the order in which Claude Code's pieces
/// finish (decision 0043).
pub mod parts {
    pub use crate::order::{ORDER_DEADLINE, PART_GAP, PART_GAP_ENV};
    pub use crate::split::{CONTINUED, PART_BYTES, Part, part_label, render_part, split};
}

// The crates this one's signatures name (the home variables, the hook
// preset's input and its rule formats, the message `parts::split` cuts),
// re-exported whole, so a product can depend on this crate alone (its
// README example does, and `cargo xtask package` builds it so) and this
// root stays a short list.
pub use dsh_home_paths as home;
pub use dsh_instructions_runtime as runtime;
pub use dsh_instructions_state as state;
