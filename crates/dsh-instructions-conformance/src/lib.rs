//! Conformance scenarios (R-CONF-1): the YAML schema, a filesystem fixture
//! for both providers, expectation matching and the runner loop.
//!
//! * [`schema`] parses scenario files strictly (`conformance/FORMAT.md`).
//! * [`fsmodel`] materializes `fs` / `write` / `remove` in memory or under a
//!   temporary directory, rewriting absolute paths.
//! * [`matcher`] checks an expectation against what a driver observed.
//! * [`runner`] runs scenarios through the [`runner::Driver`] seam and prints
//!   `ok`/`FAIL` lines.
//! * [`driver`] implements that seam over the runtime and its reference host.
//! * [`transcript`] prints a run step by step from a [`runner::Observer`]
//!   (`dsh-instructions-replay`, R-CLI-4).
#![forbid(unsafe_code)]

pub mod digest;
pub mod driver;
pub mod error;
pub mod fsmodel;
pub mod matcher;
pub mod runner;
pub mod schema;
pub mod transcript;

pub use runner::{Driver, DriverFactory, RunOptions, Summary, Verdict, run_all};
pub use schema::{ParseError, ProviderKind, Scenario};
