//! Project automation: `cargo xtask conformance | ci | tidy | bench | fuzz |
//! e2e | package | api | npm`.
//!
//! Arguments are parsed by hand to keep this binary's dependencies small.
#![forbid(unsafe_code)]

mod api;
mod bench;
mod bench_node;
mod conformance_node;
mod e2e;
mod fuzz;
mod members;
mod npm;
mod npm_node;
mod npm_util;
mod package;
mod readme_examples;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::{ProviderKind, RunOptions, run_all};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  conformance [PATH…] [--tag T] [--provider memory|disk]
      run every *.yaml scenario under PATHs (default conformance/scenarios)
  conformance-node
      every scenario on the disk provider through the Node binding
      (node:test), compared step by step with the Rust runner's
  ci     cargo fmt --check, clippy -D warnings, cargo test --workspace
  tidy [--bless] [--verbose]
      every check that keeps the docs true of the code (docs/architecture.md,
      docs/spec/, docs/decisions/) and the crates inside their layers; exit 1
      on any failure (--bless: write docs/decisions/README.md's index first;
      --verbose: also what each check saw)
  bench [--full] [FILTER…]
      quick pass: ours vs the in-process floor, one case per line
      (--full: the criterion benches; `bench node`: the Node binding's
      rows, one event through it against Rust and against a hook process,
      and the memory of 100 open sessions)
  fuzz [--seconds N] [TARGET…]
      run cargo-fuzz targets (render, typed_source, session_log, scenario)
      for a bounded time each; needs a nightly toolchain
  package
      cargo package (with its verify build) of every publishable crate,
      nothing uploaded; checks each .crate and its README
  api [--bless [--unreleased]] [CRATE…]
      check each publishable library crate's public API against api/<crate>.txt
      (--bless: write the snapshots; refused when the version does not allow
      the change, unless --unreleased: that version was never published)
  npm [--target TRIPLE] [--no-build] [--test]
      the npm packages in target/npm: the CLI's (launcher + one platform
      package) and, built for the host, the Node binding's
      (dsh-agent-instructions + its addon package); --test installs them
      offline and runs the hook through the bin and the binding's suites";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    let Some(cmd) = args.next() else {
        eprintln!("{USAGE}");
        return Ok(ExitCode::FAILURE);
    };
    let rest: Vec<String> = args.collect();
    match cmd.as_str() {
        "conformance" => conformance(&rest),
        "conformance-node" => conformance_node::run(&workspace_root(), &rest),
        "ci" => {
            no_args("ci", &rest)?;
            ci()
        }
        "tidy" => tidy::run(&workspace_root(), &rest),
        "bench" => bench::run(&rest),
        "fuzz" => fuzz::run(&workspace_root(), &rest),
        "e2e" => e2e::run(&workspace_root(), &rest),
        "package" => package::run(&workspace_root(), &rest),
        "api" => api::run(&workspace_root(), &rest),
        "npm" => npm::run(&workspace_root(), &rest),
        // The e2e plumbing check's hook command (not for people).
        "e2e-marker-hook" => Ok(e2e::marker_hook()),
        "-h" | "--help" | "help" => {
            println!("{USAGE}\n{}", e2e::USAGE);
            Ok(ExitCode::SUCCESS)
        }
        other => bail!("unknown command `{other}`\n{USAGE}"),
    }
}

fn no_args(cmd: &str, rest: &[String]) -> Result<()> {
    if let Some(a) = rest.first() {
        bail!("`{cmd}` takes no arguments, got `{a}`");
    }
    Ok(())
}

/// The workspace root: xtask lives one level below it.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn conformance(args: &[String]) -> Result<ExitCode> {
    let mut paths = Vec::new();
    let mut opts = RunOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tag" => {
                let t = it.next().context("--tag needs a value")?;
                opts.tag = Some(t.clone());
            }
            "--provider" => {
                let p = it.next().context("--provider needs memory or disk")?;
                opts.provider = Some(p.parse::<ProviderKind>().map_err(anyhow::Error::msg)?);
            }
            flag if flag.starts_with("--") => bail!("unknown option `{flag}`\n{USAGE}"),
            path => paths.push(PathBuf::from(path)),
        }
    }
    if paths.is_empty() {
        paths.push(workspace_root().join("conformance/scenarios"));
    }
    let summary = run_all(&paths, &opts, &RuntimeDriverFactory, |line| {
        println!("{line}")
    });
    Ok(if summary.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn ci() -> Result<ExitCode> {
    let steps: [&[&str]; 3] = [
        &["fmt", "--all", "--", "--check"],
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
        &["test", "--workspace"],
    ];
    for step in steps {
        let code = cargo(step)?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `cargo <args>` in the workspace root, echoing the command.
fn cargo(args: &[&str]) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    println!("== cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
