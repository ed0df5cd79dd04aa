//! Shared by the criterion benches (`compose.rs`) and the quick pass behind
//! `cargo xtask bench` (`quick.rs`). Each bench target uses a different part,
//! hence the crate-level `dead_code` allowance in this module only.
#![allow(dead_code)]

pub(crate) mod counting;
pub(crate) mod cpu;
pub(crate) mod drive;
pub(crate) mod floor;
pub(crate) mod rules;
pub(crate) mod tree;
