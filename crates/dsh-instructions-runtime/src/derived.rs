//! What a mount derives ([`crate::MountBuilder::open`]) and an instance is
//! started from: below both, so the entry and the instance do not import
//! each other.

use std::sync::Arc;

use dsh_home_paths::DshHome;
use dsh_instructions_discovery::{FsProvider, ProjectRoot};
use dsh_instructions_state::Config;

use crate::user_file::UserFile;

/// What the instance is mounted from, once derived: every part consistent
/// with the others (R-CFG-1, R-RT-9, R-RT-11).
#[derive(Debug, Clone)]
pub(crate) struct Mount {
    /// `None` = the plugin is disabled.
    pub(crate) config: Option<Config>,
    /// `None` = no filesystem: the adapter is a no-op.
    pub(crate) provider: Option<Arc<dyn FsProvider>>,
    /// The resolved DSH home.
    pub(crate) home: DshHome,
    /// The project root found for the cwd, with the provider opened for
    /// it: the instance never walks for markers itself (R-DISC-2).
    pub(crate) root: Option<ProjectRoot>,
    /// The agent user-level files of `config.user_instruction_files`,
    /// resolved against the OS home; a file not listed here is not loaded.
    pub(crate) user_files: Vec<UserFile>,
}
