//! Filesystem layer for workspace instruction files (SPEC §5).
//!
//! * [`FsProvider`] is the contract: async, cancellable probes and bounded
//!   reads that classify every outcome as present, absent or unavailable
//!   (R-DISC-4 .. R-DISC-8).
//! * [`CapStdProvider`] implements it over capability handles on trusted
//!   roots: symlinks are followed inside and across roots, never out of them;
//!   FIFOs and devices are never opened; blocking work runs off the executor.
//! * [`MemoryProvider`] implements it in memory, with fault, gate, stale-size
//!   and latency injection, for tests and the conformance suite.
//! * [`root::find_project_root`] and the path helpers in [`root`] decide the
//!   project root and the directory chain (R-DISC-1, R-DISC-3).
//! * [`text::decode_text`] turns raw bytes into the text that gets digested.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dircache;
mod paths;

pub mod capstd;
pub mod memory;
pub mod provider;
pub mod root;
pub mod text;

pub use cap_std::{AmbientAuthority, ambient_authority};
pub use capstd::{CapStdProvider, ProviderError};
pub use memory::{
    Fault, FaultError, FsOp, MemKind, MemNode, MemoryProvider, OpCounters, UnknownName,
};
pub use provider::{
    BoxFuture, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText, MAX_LINK_HOPS,
    MarkerProbe, PresentFile, Probe, ReadOutcome, Unavailable,
};
pub use root::{ProjectRoot, RootReason, find_project_root};
pub use tokio_util::sync::CancellationToken;
