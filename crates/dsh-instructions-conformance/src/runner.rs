//! The scenario loop: one run per scenario and provider, through a [`Driver`].
//!
//! The runner owns everything the format defines (filesystem changes, path
//! rewriting, step numbering, settling before checks, counters, output lines);
//! a [`Driver`] only turns steps into calls on a host + runtime and reports
//! what the model would see. That seam lets the runner be tested with a
//! scripted driver and lets another host implementation reuse it. An
//! [`Observer`] sees each step and what came of it, in order, as structured
//! data: `replay` prints its transcript from one ([`crate::transcript`]).
//!
//! The parts: the driver and observer seam (`contract`), one scenario's run
//! (`scenario`) and the suite's plan (`plan`).

mod contract;
mod plan;
mod scenario;
#[cfg(test)]
mod tests;

pub use contract::{
    CancelSignal, Driver, DriverFactory, HostState, MountSpec, Observer, PreStepInput,
    PreStepResult, ProviderHandle, STEP_TIMEOUT, StepRecord, ToolInput, Verdict, line,
};
pub use plan::{
    RunOptions, Summary, Trial, collect_files, plan, run_all, run_trial, run_trial_observed,
};
pub use scenario::{run_observed, run_scenario};

pub(crate) use plan::trial_runtime;
