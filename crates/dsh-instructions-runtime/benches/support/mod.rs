//! Shared by the criterion benches (`compose.rs`) and the quick pass behind
//! `cargo xtask bench` (`quick.rs`). Each bench target uses a different part,
//! hence the crate-level `dead_code` allowance in this module only.
#![allow(dead_code)]

pub mod counting;
pub mod drive;
pub mod floor;
pub mod tree;
