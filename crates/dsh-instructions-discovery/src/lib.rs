//! Filesystem layer for workspace instruction files (SPEC §5).
#![forbid(unsafe_code)]

pub mod provider;

pub use provider::{
    BoxFuture, Cancelled, FileIdentity, FileVersion, FsProvider, LoadedText, MarkerProbe,
    PresentFile, Probe, ReadOutcome, Unavailable,
};
pub use tokio_util::sync::CancellationToken;
