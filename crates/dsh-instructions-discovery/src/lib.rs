#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod blocking;
mod capstd;
mod dircache;
mod dirmemory;
mod error;
pub mod listing;
#[cfg(feature = "test-support")]
pub mod memory;
mod named;
mod paths;
pub mod provider;
pub mod root;
mod stamp;
mod text;

// The foreign crates every signature here names (paths; the ambient
// authority a product grants), re-exported whole so a product needs no
// copy of its own and this root stays short.
pub use camino;
pub use cap_std;

pub use blocking::offload;
pub use capstd::CapStdProvider;
pub use dirmemory::DirMemory;
pub use error::DiscoveryError;
pub use provider::{Cancelled, FsProvider};
pub use root::{ProjectRoot, find_project_root};
pub use tokio_util::sync::CancellationToken;
