//! `cargo xtask fuzz [--seconds N] [TARGET…]`: run each cargo-fuzz target of
//! `fuzz/` for a bounded time (default: every target, 60 s each).
//!
//! libFuzzer needs a nightly toolchain; without one this says so and points at
//! the stable property tests that cover the same invariants (docs/security.md).

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};

const TARGETS: [&str; 5] = [
    "render",
    "typed_source",
    "session_log",
    "scenario",
    "settings_editors",
];

fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    let mut seconds: u64 = 60;
    let mut targets: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it.next().context("--seconds needs a value")?;
                seconds = v.parse().ok().filter(|s| *s > 0).with_context(|| {
                    format!("--seconds takes a positive whole number, got `{v}`")
                })?;
            }
            t if TARGETS.contains(&t) => targets.push(t.to_owned()),
            other => bail!(
                "unknown fuzz target or flag `{other}` (targets: {})",
                TARGETS.join(", ")
            ),
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    }
    if !succeeds(Command::new("cargo").args(["+nightly", "--version"])) {
        eprintln!(
            "xtask fuzz: no nightly toolchain here (libFuzzer needs one).\n\
             The same invariants run as property tests on stable: cargo test --workspace prop_"
        );
        return Ok(ExitCode::FAILURE);
    }
    if !succeeds(Command::new("cargo").args(["+nightly", "fuzz", "--version"])) {
        eprintln!("xtask fuzz: cargo-fuzz is missing: cargo install cargo-fuzz");
        return Ok(ExitCode::FAILURE);
    }
    for target in &targets {
        let corpus = root.join("fuzz/corpus").join(target);
        println!("== fuzz {target} for {seconds} s");
        let status = Command::new("cargo")
            .current_dir(root)
            .args(["+nightly", "fuzz", "run", "--fuzz-dir", "fuzz", target])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .status()
            .with_context(|| format!("running the {target} fuzz target"))?;
        if !status.success() {
            eprintln!("xtask fuzz: {target} failed; see fuzz/artifacts/{target}/");
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}
