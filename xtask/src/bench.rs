//! `cargo xtask bench [--full] [FILTER…]` (R-BENCH-1, issue 7 item 3).
//! `cargo xtask bench node` runs the Node binding's rows instead
//! (`bench_node.rs`).
//!
//! The quick pass builds the CLI (for the memory line) and runs the runtime
//! crate's `quick` bench target, then the session log's `log` target
//! (`log/…` cases), which print one case per line:
//! `case  ours_ms  floor_ms  ratio  bytes_read  ops_per_dir`, then the hooks
//! crate's `hook` target (`hook/…` cases, R-HOOK-6: whole processes of the
//! release CLI, with median and p99 columns). FILTERs keep the
//! cases whose name contains one of them. `--full` runs the criterion
//! benches instead (runtime `compose`, render `render`). `cargo xtask bench
//! mem` prints only the memory rows (`mem/<tree>/<budget>`: max RSS of a
//! `show` process over the empty tree's, beside output bytes and the
//! largest file; issue 35 item 3; with 64 MiB rows on deep-256 and
//! wide-10000, issue 46 item 4), from the quick pass alone.
//!
//! The measuring code lives in `crates/dsh-instructions-runtime/benches/`,
//! `crates/dsh-session-log/benches/` and `crates/dsh-instructions-hooks/benches/` so
//! this binary needs no dependency beyond std and anyhow.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

/// Runs the bench subcommand with its arguments.
pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let mut full = false;
    let mut filters = Vec::new();
    for a in args {
        match a.as_str() {
            "--full" => full = true,
            flag if flag.starts_with('-') => {
                bail!("unknown option `{flag}` (usage: cargo xtask bench [--full] [FILTER…])")
            }
            filter => filters.push(filter.to_owned()),
        }
    }
    if filters.first().is_some_and(|f| f == "node") {
        crate::bench_node::check_args(&filters)?;
        return crate::bench_node::run(&workspace_root());
    }
    if full {
        if !filters.is_empty() {
            bail!("`--full` takes no filters");
        }
        for (package, bench) in [
            ("dsh-instructions-runtime", "compose"),
            ("dsh-instructions-render", "render"),
        ] {
            if !cargo(&["bench", "-p", package, "--bench", bench], None)? {
                return Ok(ExitCode::FAILURE);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !cargo(
        &[
            "build",
            "--quiet",
            "--release",
            "-p",
            "dsh-instructions-cli",
        ],
        None,
    )? {
        return Ok(ExitCode::FAILURE);
    }
    let cli = target_dir().join("release/dsh-instructions");
    let quick = |package: &str, bench: &str, cli: Option<&Path>| {
        let mut args = vec!["bench", "--quiet", "-p", package, "--bench", bench, "--"];
        args.extend(filters.iter().map(String::as_str));
        cargo(&args, cli)
    };
    if !quick("dsh-instructions-runtime", "quick", Some(&cli))? {
        return Ok(ExitCode::FAILURE);
    }
    // Only the memory rows: the other targets have no `mem/` case.
    if !filters.is_empty() && filters.iter().all(|f| f.starts_with("mem")) {
        return Ok(ExitCode::SUCCESS);
    }
    // The same row format and filters:
    let rest = [
        // the session-log cases (R-LOG-5);
        ("dsh-session-log", "log", None),
        // the CLI session case of the same table (issue 18 item 7): whole
        // `session touch` processes of the release CLI, late against early;
        ("dsh-instructions-cli", "session_touch", Some(cli.as_path())),
        // the hook cases (R-HOOK-6): whole processes of the release CLI
        // built above; `cargo xtask bench hook` selects only them.
        ("dsh-instructions-hooks", "hook", Some(cli.as_path())),
    ];
    for (package, bench, cli) in rest {
        if !quick(package, bench, cli)? {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Where cargo puts artifacts: `$CARGO_TARGET_DIR`, else `<workspace>/target`.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || workspace_root().join("target"),
        |dir| workspace_root().join(dir),
    )
}

/// Runs `cargo <args>` in the workspace root; `cli` is passed to the quick
/// pass as `DSH_BENCH_CLI`. Returns whether it succeeded.
fn cargo(args: &[&str], cli: Option<&Path>) -> Result<bool> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("== cargo {}", args.join(" "));
    let mut command = Command::new(cargo);
    command.args(args).current_dir(workspace_root());
    if let Some(cli) = cli {
        command.env("DSH_BENCH_CLI", cli);
        // The peer rows (issue 35 item 4): the pinned Codex CLI where the
        // e2e cached it; the bench prints a skip line without it.
        if let Some(codex) = crate::e2e::agents::cached_codex() {
            command.env("DSH_BENCH_CODEX", codex);
        }
    }
    let status = command
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    Ok(status.success())
}
