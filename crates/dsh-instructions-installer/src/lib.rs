#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod codex;
mod copilot;
mod diagnosis;
mod diff;
mod error;
mod files;
mod hooks;
mod in_process;
mod install;
mod install_record;
mod layout;
mod native;
mod rules;
mod shown;

pub use codex::{Trust, trust_hash, trust_key};
pub use diagnosis::{Diagnosis, EventReport};
pub use dsh_instructions_hooks::{Agent, Scope};
pub use error::InstallError;
pub use files::BACKUP_SUFFIX;
pub use hooks::EventStatus;
pub use install::{
    FileChange, InstallOptions, Report, Target, doctor, doctor_in_process, install, install_with,
    uninstall,
};
pub use layout::{Files, Locations, installer_dir};
pub use native::NativeStatus;
