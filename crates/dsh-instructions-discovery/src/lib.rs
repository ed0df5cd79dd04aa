#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dircache;
mod dirmemory;
mod listing;
mod named;
mod paths;
mod stamp;

mod capstd;
#[cfg(feature = "test-support")]
mod memory;
mod provider;
mod root;
mod text;

pub use cap_std::{AmbientAuthority, ambient_authority};
pub use capstd::{CapStdProvider, ProviderError};
pub use dirmemory::DirMemory;
pub use listing::{RuleFileProblem, RuleFiles, list_rule_files};
#[cfg(feature = "test-support")]
pub use memory::{
    Fault, FaultError, FsOp, MemKind, MemNode, MemoryProvider, OpCounters, UnknownName,
};
pub use provider::{
    BoxFuture, Cancelled, DirListing, EntryKind, FileIdentity, FileVersion, FsProvider, LoadedText,
    MAX_LINK_HOPS, MarkerProbe, PathKind, PresentFile, Probe, ProbedDirs, ReadOutcome, Unavailable,
};
pub use root::{ProjectRoot, RootReason, chain, display_path, find_project_root, relative_dir};
pub use text::decode_text;
pub use tokio_util::sync::CancellationToken;
// The path types every signature here names, so a product needs no `camino` of its own.
pub use camino::{Utf8Path, Utf8PathBuf};
