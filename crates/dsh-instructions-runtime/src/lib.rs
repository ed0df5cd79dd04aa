//! The runtime adapter that plugs workspace instruction files into an agent
//! loop (SPEC §8).
//!
//! A product mounts one [`Instance`] per session loop instance over its
//! [`Host`] (session view + inbox), then reports pre-steps, tool results and
//! session events. The adapter composes baselines, reconciles touched and
//! known directories, keeps exactly one pending workspace message in the
//! inbox and folds it into the next entering batch.
//!
//! Internally every composition is plan → gather (async, cancellable, no
//! mutation) → decide (pure) → apply, run on one serial lane per instance.
//!
//! # End to end: mount, first pre-step, a touch, a resume
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use dsh_home_paths::{DshHome, HomeLabel};
//! use dsh_instructions_discovery::{CancellationToken, MemNode, MemoryProvider};
//! use dsh_instructions_runtime::{
//!     BatchItem, Decision, Host, Instance, MemoryHost, Mount, ToolExecution,
//! };
//! use dsh_instructions_state::{Action, Config};
//!
//! // A repository with a root rule and a package rule (in memory here; a
//! // product passes a `CapStdProvider` over its trusted roots).
//! let fs = MemoryProvider::new(vec!["/repo".into(), "/home/me/.dsh".into()]);
//! fs.insert("/repo/.git".into(), MemNode::dir());
//! fs.insert("/repo/AGENTS.md".into(), MemNode::file("Run make test."));
//! fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("Use pnpm."));
//! let host = Arc::new(MemoryHost::new("/repo".into()));
//! let mount = || Mount {
//!     config: Some(Config::with_max_bytes(65_536)),
//!     provider: Some(Arc::new(fs.clone())),
//!     home: DshHome { path: "/home/me/.dsh".into(), label: HomeLabel::Default },
//!     root: None,
//!     user_files: Vec::new(),
//! };
//! let prompt = |text: &str| Decision::Enter(vec![BatchItem { message: text.to_owned(), claimed: true }]);
//!
//! // Mount and run the first pre-step: the baseline is folded in after the prompt.
//! let instance = Instance::mount(mount(), host.clone() as Arc<dyn Host>).unwrap();
//! let out = instance.pre_step(1, prompt("hi"), &CancellationToken::new()).await.unwrap();
//! host.append_batch(out.batch.as_deref().unwrap());
//! assert!(out.entered.unwrap().parts[0].contains("Instructions from: AGENTS.md"));
//!
//! // A read below the cwd discovers the package rule as a pending `set`.
//! instance.tool_result(&ToolExecution {
//!     name: "read".into(),
//!     arguments: serde_json::json!({ "file_path": "pkg/index.ts" }),
//!     token: "t1".into(),
//!     parent: None,
//!     is_error: false,
//!     cancelled: false,
//! });
//! instance.settle().await;
//! assert_eq!(host.inbox()[0].source.changes[0].path, "pkg/AGENTS.md");
//!
//! // Resume: a new loop instance over the same history (the inbox is gone);
//! // an edit made meanwhile enters as a `replace`.
//! instance.dispose();
//! host.clear_inbox();
//! fs.insert("/repo/AGENTS.md".into(), MemNode::file("Run make check."));
//! let resumed = Instance::mount(mount(), host.clone() as Arc<dyn Host>).unwrap();
//! let out = resumed.pre_step(1, prompt("again"), &CancellationToken::new()).await.unwrap();
//! let change = &out.entered.unwrap().source.changes[0];
//! assert_eq!((change.action, change.path.as_str()), (Action::Replace, "AGENTS.md"));
//! # });
//! ```
#![forbid(unsafe_code)]

mod compose;
mod error;
mod gather;
mod host;
mod imports;
mod inspect;
mod instance;
mod memory_host;
mod open;
mod pointer;
mod scan;
mod shell;
mod slots;
mod touch;
mod user_file;
mod view;

pub use error::MountError;
pub use host::{
    BatchEntry, BatchItem, Decision, Host, InboxId, SessionEvent, ToolExecution, VisibleMark,
    VisibleUpdate, WorkspaceMessage,
};
pub use imports::{ImportFate, InspectedImport};
pub use inspect::{CandidateFate, InspectedCandidate, Inspection, Preview, inspect, preview};
pub use instance::{Instance, Mount, PreStepOutcome};
pub use memory_host::{HistoryItem, Inbox, MemoryHost};
pub use open::{CapStdFactory, OpenError, Opened, ProviderFactory, SessionSpec, open_mount};
pub use pointer::{POINTER_MAX_BYTES, is_pointer_to};
pub use shell::{MAX_SHELL_TOUCHES, command_paths};
pub use touch::TouchKind;
pub use user_file::UserFile;
