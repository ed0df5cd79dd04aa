//! Workspace instruction files for coding agents, behind one dependency.
//!
//! A product that wants `AGENTS.md` / `CLAUDE.md` / `*.local.md` overlays and
//! one user-global file delivered to its model as bounded, always-current
//! context depends on this crate alone. Each module re-exports one layer of
//! the workspace (SPEC §2), broadest concern last:
//!
//! | module | crate | what it gives you |
//! |---|---|---|
//! | [`home`] | `dsh-home-paths` | `$DSH_HOME` resolution, `~` expansion, display labels |
//! | [`discovery`] | `dsh-instructions-discovery` | the filesystem provider trait, the cap-std and in-memory providers, project-root discovery |
//! | [`render`] | `dsh-instructions-render` | prompt templates, frame escaping, byte budgets (pure) |
//! | [`state`] | `dsh-instructions-state` | configuration, typed sources, scope keys, digests, transitions (pure) |
//! | [`runtime`] | `dsh-instructions-runtime` | the adapter a product mounts per session, a reference in-memory host, `inspect` |
//! | [`session_log`] | `dsh-session-log` | a reference append-only JSONL session store |
//!
//! # End to end
//!
//! Mount the adapter over a session, run the first pre-step of a turn, and
//! the baseline is folded right after the prompt (R-RT-1):
//!
//! ```
//! use std::sync::Arc;
//! use dsh_agent_instructions::{discovery, home, runtime, state};
//! use runtime::{BatchEntry, BatchItem, Decision, Instance, MemoryHost, Mount};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! // A project with a root marker and one instruction file.
//! let fs = discovery::MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
//! fs.insert("/repo/.git".into(), discovery::MemNode::dir());
//! fs.insert("/repo/AGENTS.md".into(), discovery::MemNode::file("Run the tests."));
//!
//! let host = Arc::new(MemoryHost::new("/repo".into()));
//! let instance = Instance::mount(
//!     Mount {
//!         config: Some(state::Config::with_max_bytes(65_536)),
//!         provider: Some(Arc::new(fs)),
//!         home: home::DshHome { path: "/home/u/.dsh".into(), label: home::HomeLabel::Default },
//!         root: None,
//!     },
//!     host.clone(),
//! )?;
//!
//! let prompt = BatchItem { message: "hi".to_string(), claimed: true };
//! let cancel = discovery::CancellationToken::new();
//! let outcome = instance.pre_step(1, Decision::Enter(vec![prompt]), &cancel).await?;
//! let batch = outcome.batch.unwrap_or_default();
//! assert!(matches!(&batch[0], BatchEntry::Host(text) if text == "hi"));
//! let BatchEntry::Workspace(message) = &batch[1] else { panic!("baseline not folded") };
//! assert!(message.joined_text().contains("Instructions from: AGENTS.md\n\nRun the tests."));
//! assert!(message.source.baseline);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

/// DSH home resolution, `~` expansion and display labels (SPEC §4).
#[doc(inline)]
pub use dsh_home_paths as home;

/// Filesystem providers, bounded reads and project-root discovery (SPEC §5).
#[doc(inline)]
pub use dsh_instructions_discovery as discovery;

/// Prompt templates, escaping and byte budgets (SPEC §6).
#[doc(inline)]
pub use dsh_instructions_render as render;

/// Configuration, typed sources, scope keys and transitions (SPEC §3, §7).
#[doc(inline)]
pub use dsh_instructions_state as state;

/// The runtime adapter, its host traits and `inspect` (SPEC §8).
#[doc(inline)]
pub use dsh_instructions_runtime as runtime;

/// The reference JSONL session store (SPEC §9).
#[doc(inline)]
pub use dsh_session_log as session_log;

/// A persisted session: the runtime's host over the session log, mounted
/// through the one entry point (R-RT-11, R-RT-12).
#[doc(inline)]
pub use dsh_instructions_session as session;
