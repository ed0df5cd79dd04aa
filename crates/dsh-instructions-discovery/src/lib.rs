//! Filesystem layer for workspace instruction files (SPEC §5).
//!
//! * [`FsProvider`] is the contract: async, cancellable probes and bounded
//!   reads that classify every outcome as present, absent or unavailable
//!   (R-DISC-4 .. R-DISC-8).
//! * [`CapStdProvider`] implements it over capability handles on trusted
//!   roots: symlinks are followed inside and across roots, never out of them;
//!   FIFOs and devices are never opened; blocking work runs off the executor.
//! * [`MemoryProvider`] (with [`MemNode`], [`Fault`], [`OpCounters`], …) is
//!   **test support**: the same contract in memory, with fault, gate,
//!   stale-size and latency injection, for tests and the conformance suite.
//!   Production code opens [`CapStdProvider`] (through the runtime's
//!   `open_mount`); nothing of the production provider depends on it.
//! * [`find_project_root`] and the path helpers [`chain`], [`relative_dir`]
//!   and [`display_path`] decide the project root and the directory chain
//!   (R-DISC-1, R-DISC-3).
//! * [`decode_text`] turns raw bytes into the text that gets digested.
//!
//! Every item is reachable by one path, at the crate root.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dircache;
mod paths;

mod capstd;
#[cfg(feature = "test-support")]
mod memory;
mod provider;
mod root;
mod text;

pub use cap_std::{AmbientAuthority, ambient_authority};
pub use capstd::{CapStdProvider, ProviderError};
#[cfg(feature = "test-support")]
pub use memory::{
    Fault, FaultError, FsOp, MemKind, MemNode, MemoryProvider, OpCounters, UnknownName,
};
pub use provider::{
    BoxFuture, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText, MAX_LINK_HOPS,
    MarkerProbe, PathKind, PresentFile, Probe, ReadOutcome, Unavailable,
};
pub use root::{ProjectRoot, RootReason, chain, display_path, find_project_root, relative_dir};
pub use text::decode_text;
pub use tokio_util::sync::CancellationToken;
