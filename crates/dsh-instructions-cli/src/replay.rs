//! `replay SCENARIO.yaml` (R-CLI-4).

use std::process::ExitCode;

use crate::args::ReplayArgs;
use crate::error::CliError;

/// Prints the transcript of a conformance scenario.
pub fn run(args: &ReplayArgs) -> Result<ExitCode, CliError> {
    Err(CliError::new(format!(
        "replay {}: not available in this build",
        args.scenario.display()
    )))
}
