//! `dsh-instructions-replay SCENARIO.yaml` (R-CLI-4): runs a conformance
//! scenario with the real runtime driver and prints its transcript, step by
//! step, from what the conformance runner observed
//! (`dsh_instructions_conformance::transcript`).
//!
//! It lives here, not in the shipped `dsh-instructions` binary, so the
//! binary every agent runs as its hook never links the test harness
//! (issue 19 item 3, decision 0024). Run it from a clone with
//! `cargo run -p dsh-instructions-conformance --bin dsh-instructions-replay -- FILE`.
//!
//! Exit status: 0 when every expectation held, 1 when one failed (the reason
//! is the last stdout line), 2 when the file cannot be read or parsed or the
//! usage is wrong (one line on stderr).
#![forbid(unsafe_code)]

use std::io::Write as _;
use std::process::ExitCode;

use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::runner::Trial;
use dsh_instructions_conformance::transcript::{replay, replay_provider};
use dsh_instructions_conformance::{Scenario, Verdict};

const USAGE: &str = "usage: dsh-instructions-replay SCENARIO.yaml

Runs the scenario on the in-memory provider (when it allows it) and prints,
step by step, what the model would see: batches, entered workspace messages
and the inbox.

Example:
  dsh-instructions-replay conformance/scenarios/precedence/first-wins-basic.yaml";

/// Writes one line to stderr; a closed stderr is not a panic.
fn err_line(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let path = match args.as_slice() {
        [a] if a == "--help" || a == "-h" => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        [a] => std::path::PathBuf::from(a),
        _ => {
            err_line("error: expected exactly one scenario file (see --help)");
            return ExitCode::from(2);
        }
    };
    let scenario = match Scenario::load(&path) {
        Ok(s) => s,
        Err(e) => {
            // Parse errors render a snippet over several lines; one line here.
            let text = e.to_string();
            let one: Vec<&str> = text
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
                .collect();
            err_line(&format!("error: {}", one.join("; ")));
            return ExitCode::from(2);
        }
    };
    let trial = Trial {
        provider: replay_provider(&scenario),
        scenario,
    };
    let mut stdout = std::io::stdout().lock();
    match replay(&trial, &RuntimeDriverFactory, |line| {
        let _ = writeln!(stdout, "{line}");
    }) {
        Verdict::Pass => ExitCode::SUCCESS,
        Verdict::Fail(_) => ExitCode::from(1),
    }
}
