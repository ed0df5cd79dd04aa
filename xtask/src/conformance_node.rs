//! `cargo xtask conformance-node`: the conformance suite through the Node
//! binding (R-NODE-6). The Rust runner runs every scenario on the disk
//! provider and keeps each step's observations (`steps_json`); then the
//! binding's `node:test` runner (`conformance/run.test.mjs` in its crate)
//! runs the same scenarios through the Node API, checks their expectations
//! itself and compares its observations with the Rust runner's, step by
//! step. Scenarios without the disk provider are skipped by both, as
//! `cargo xtask conformance --provider disk` skips them.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail, ensure};
use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::runner::plan;
use dsh_instructions_conformance::steps_json::run_trial_json;
use dsh_instructions_conformance::{ProviderKind, RunOptions, Verdict};
use serde_json::json;

use crate::npm_node::{self, CRATE_DIR, Install, Profile};

pub(crate) fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    if let Some(a) = args.first() {
        bail!("`conformance-node` takes no arguments, got `{a}`");
    }
    let scenarios = root.join("conformance/scenarios");
    let opts = RunOptions {
        provider: Some(ProviderKind::Disk),
        ..RunOptions::default()
    };
    let (trials, failures) = plan(std::slice::from_ref(&scenarios), &opts);
    ensure!(
        failures.is_empty(),
        "scenarios that do not parse:\n{}",
        failures.join("\n")
    );
    println!(
        "== the Rust runner, {} disk scenarios, each step kept",
        trials.len()
    );
    let mut all = serde_json::Map::new();
    let mut failed = 0;
    for t in &trials {
        let (verdict, steps) = run_trial_json(t, &RuntimeDriverFactory);
        let (ok, reason) = match verdict {
            Verdict::Pass => (true, None),
            Verdict::Fail(r) => {
                failed += 1;
                println!("FAIL {} [disk] (rust): {r}", t.scenario.name);
                (false, Some(r))
            }
        };
        all.insert(
            t.scenario.name.clone(),
            json!({ "ok": ok, "reason": reason, "steps": steps }),
        );
    }
    ensure!(
        failed == 0,
        "{failed} scenario(s) fail in the Rust runner itself"
    );
    let out = root.join("target/conformance-node");
    std::fs::create_dir_all(&out)?;
    let rust_file = out.join("rust-steps.json");
    std::fs::write(&rust_file, serde_json::Value::Object(all).to_string())
        .with_context(|| format!("cannot write {}", rust_file.display()))?;

    let dir = root.join(CRATE_DIR);
    npm_node::generate(&dir, Profile::Release, Install::IfMissing)?;
    println!("== node --test conformance/run.test.mjs (the same scenarios through the Node API)");
    let status = Command::new("node")
        .args([
            "--test",
            "--test-reporter",
            "spec",
            "conformance/run.test.mjs",
        ])
        .env("DSH_CONFORMANCE_RUST", &rust_file)
        .env("DSH_CONFORMANCE_DIR", &scenarios)
        .current_dir(&dir)
        .status()
        .context("cannot run node")?;
    Ok(if status.success() {
        println!("conformance-node: {} scenarios agree", trials.len());
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
