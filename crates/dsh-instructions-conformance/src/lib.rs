#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod digest;
pub mod driver;
mod error;
pub mod fsmodel;
pub mod matcher;
pub mod runner;
pub mod schema;
pub mod steps_json;
pub mod transcript;

pub use error::ConformanceError;
pub use runner::{Driver, DriverFactory, RunOptions, Summary, Verdict, run_all};
pub use schema::{ProviderKind, Scenario};
