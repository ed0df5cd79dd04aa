//! `dsh-instructions`: shows a person exactly which workspace instructions
//! the model would receive and why (SPEC §10, R-CLI-1..6).
//!
//! Exit codes: `0` success, `1` `check` (or `hook doctor`) found a problem, `2` any error
//! (usage, configuration, I/O). Every error is one line on stderr; no input
//! can make the binary panic (R-CLI-5). See `docs/cli.md` for the JSON shapes.
#![forbid(unsafe_code)]

/// `println!` that never panics: a closed stdout (`… | head`) must not turn
/// into a panic (R-CLI-5); the output is simply dropped.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that never panics (see `out!`).
macro_rules! out_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` that never panics (see `out!`).
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod describe;
mod error;
mod hook_cmd;
mod inspect_cmd;
mod session;
mod settings;
mod setup;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::error::CliError;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0 and usage errors
            // to stderr with exit 2, which is our convention too.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            err!("dsh-instructions: error: {}", e.one_line());
            ExitCode::from(e.code())
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Show(a) => inspect_cmd::show(&a),
        Command::Explain(a) => inspect_cmd::explain(&a),
        Command::Check(a) => inspect_cmd::check(&a),
        Command::Session(s) => session::run(s),
        Command::Hook(h) => hook_cmd::run(&h),
    }
}
