//! `replay SCENARIO.yaml` (R-CLI-4): runs a conformance scenario with the
//! real runtime driver and prints its transcript. The transcript is the
//! conformance runner's own (`dsh_instructions_conformance::transcript`),
//! printed from what the runner observed step by step.

use std::process::ExitCode;

use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::runner::Trial;
use dsh_instructions_conformance::transcript::{replay, replay_provider};
use dsh_instructions_conformance::{Scenario, Verdict};

use crate::args::ReplayArgs;
use crate::error::{CliError, EXIT_PROBLEMS};

/// Prints the transcript; exit 0 when the scenario's expectations hold, 1
/// when one fails (the reason is printed), 2 when the file cannot be parsed.
pub(crate) fn run(args: &ReplayArgs) -> Result<ExitCode, CliError> {
    let scenario = Scenario::load(&args.scenario).map_err(|e| CliError::new(e.to_string()))?;
    let trial = Trial {
        provider: replay_provider(&scenario),
        scenario,
    };
    match replay(&trial, &RuntimeDriverFactory, |line| out!("{line}")) {
        Verdict::Pass => Ok(ExitCode::SUCCESS),
        Verdict::Fail(_) => Ok(ExitCode::from(EXIT_PROBLEMS)),
    }
}
