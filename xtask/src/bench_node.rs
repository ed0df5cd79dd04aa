//! `cargo xtask bench node`: the Node binding's rows (issue 47 item 7,
//! R-NODE-2). On each bench tree (a root `AGENTS.md` and `DIRS`
//! directories, each with an `AGENTS.md` and a `lib.rs`, every directory
//! already known), one event — a kept read, then the step's end — through
//! the binding (`bench/event.mjs` in the binding's crate) against the same
//! calls on the facade's `Session` in one Rust process
//! (`benches/event.rs`), target at most 1.2×; the same read as one hook
//! process of the release CLI, against the binding; and the resident
//! memory of 100 open sessions in one Node process. Then what the pi
//! extension and the opencode plugin add to one tool call on the e2e's
//! sentry and airflow layouts (`bench/agents.mjs`, issue 48 item 6,
//! target at most 1 ms median), beside the same read through the hook
//! binary, one process per event.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail, ensure};

use crate::npm_node::{self, CRATE_DIR, Install, Profile};

/// (label, directories, timed events).
const TREES: [(&str, usize, usize); 2] = [("flat-10", 10, 400), ("flat-200", 200, 400)];
const MEM_SESSIONS: usize = 100;
/// Alternated runs of each side per tree.
const ROUNDS: usize = 3;

fn tree(dir: &Path, dirs: usize) -> Result<()> {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join(".git"))?;
    std::fs::create_dir_all(dir.join("home/.dsh"))?;
    std::fs::write(repo.join("AGENTS.md"), "# Root\n\nBe brief.\n")?;
    for d in 0..dirs {
        let sub = repo.join(format!("d{d}"));
        std::fs::create_dir_all(&sub)?;
        std::fs::write(
            sub.join("AGENTS.md"),
            format!("# Dir {d}\n\nRules of {d}.\n"),
        )?;
        std::fs::write(sub.join("lib.rs"), "fn main() {}\n")?;
    }
    Ok(())
}

/// The output line starting with `tag `: its numbers.
fn numbers(out: &str, tag: &str) -> Result<Vec<f64>> {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{tag} ")))
        .with_context(|| format!("no `{tag}` line in:\n{out}"))?;
    line.split_whitespace()
        .skip(2)
        .map(|n| n.parse::<f64>().context("a number"))
        .collect()
}

fn output(cmd: &mut Command, what: &str) -> Result<String> {
    let out = cmd.output().with_context(|| format!("cannot run {what}"))?;
    ensure!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn run(root: &Path) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "dsh-instructions-cli",
        ])
        .current_dir(root)
        .status()?;
    ensure!(
        built.success(),
        "cargo build --release -p dsh-instructions-cli failed"
    );
    let cli = root.join("target/release/dsh-instructions");
    let dir = root.join(CRATE_DIR);
    npm_node::generate(&dir, Profile::Release, Install::IfMissing)?;
    println!(
        "{:<28} {:>10} {:>10} {:>7}",
        "case", "ours_us", "floor_us", "ratio"
    );
    for (i, (label, dirs, iterations)) in TREES.into_iter().enumerate() {
        let tmp = tempfile::tempdir()?;
        tree(tmp.path(), dirs)?;
        let t = tmp.path().to_string_lossy().into_owned();
        // Alternated rounds, the best median of each: the machine is shared,
        // and an event's log appends wait on the disk (fdatasync).
        let (mut r, mut n, mut s) = (vec![f64::MAX], vec![f64::MAX], vec![f64::MAX]);
        let mut node = String::new();
        for round in 0..ROUNDS {
            let rust = output(
                Command::new(&cargo)
                    .args(["bench", "--quiet", "-p", "dsh-agent-instructions-node"])
                    .args(["--bench", "event", "--"])
                    .args([&t, &format!("{label}-{round}"), &dirs.to_string()])
                    .arg(iterations.to_string())
                    .current_dir(root),
                "the Rust event bench",
            )?;
            let mem = if i + 1 == TREES.len() && round == 0 {
                MEM_SESSIONS
            } else {
                0
            };
            node = output(
                Command::new("node")
                    .args(["--expose-gc", "bench/event.mjs"])
                    .arg(&dir)
                    .args([&t, &format!("{label}-{round}"), &dirs.to_string()])
                    .arg(iterations.to_string())
                    .arg(&cli)
                    .arg(mem.to_string())
                    .current_dir(&dir),
                "the Node event bench",
            )?
            .lines()
            .filter(|l| !l.starts_with("mem ") || mem > 0)
            .chain(node.lines().filter(|l| l.starts_with("mem ")))
            .collect::<Vec<_>>()
            .join("\n");
            let best = |old: Vec<f64>, new: Vec<f64>| if new[0] < old[0] { new } else { old };
            r = best(r, numbers(&rust, "rust")?);
            n = best(n, numbers(&node, "node")?);
            s = best(s, numbers(&node, "spawn")?);
        }
        let mem = i + 1 == TREES.len();
        let row = |case: String, ours: f64, floor: f64| {
            println!(
                "{case:<28} {ours:>10.1} {floor:>10.1} {:>6.2}x",
                ours / floor
            );
        };
        // Medians; the p90s are the lines' third numbers.
        row(format!("node/event/{label}"), n[0], r[0]);
        row(format!("node/spawn/{label}"), s[0], n[0]);
        if mem {
            let kib = numbers(&node, "mem")?;
            println!(
                "{:<28} {:>10.0} KiB per open session ({MEM_SESSIONS} sessions, {label}, one process)",
                "node/mem/100-sessions", kib[0]
            );
        }
    }
    agents(&dir, &cli)?;
    Ok(ExitCode::SUCCESS)
}

/// Timed tool calls per agent and layout.
const AGENT_CALLS: usize = 400;

/// The pi and opencode rows: the handler of one tool call, in process,
/// against the same event through the hook binary.
fn agents(dir: &Path, cli: &Path) -> Result<()> {
    println!(
        "{:<28} {:>10} {:>10} {:>7}",
        "case", "ours_us", "hook_us", "ratio"
    );
    for layout in [crate::e2e::layouts::SENTRY, crate::e2e::layouts::AIRFLOW] {
        let tmp = tempfile::tempdir()?;
        for (path, size) in layout.files {
            let file = tmp.path().join(path);
            std::fs::create_dir_all(file.parent().context("a parent")?)?;
            std::fs::write(&file, crate::e2e::layouts::content(path, *size))?;
        }
        std::fs::create_dir_all(tmp.path().join("ws/.git"))?;
        std::fs::create_dir_all(tmp.path().join("ws").join(layout.cwd))?;
        std::fs::create_dir_all(tmp.path().join("home/.dsh"))?;
        let out = output(
            Command::new("node")
                .arg("bench/agents.mjs")
                .arg(dir)
                .arg(tmp.path())
                .args([layout.cwd, layout.name])
                .arg(AGENT_CALLS.to_string())
                .arg(cli)
                .current_dir(dir),
            "the pi/opencode bench",
        )?;
        let hook = numbers(&out, "hook")?;
        for agent in ["pi", "opencode"] {
            let ours = numbers(&out, agent)?;
            println!(
                "{:<28} {:>10.1} {:>10.1} {:>6.2}x   (p90 {:.1} / {:.1})",
                format!("node/{agent}/tool/{}", layout.name),
                ours[0],
                hook[0],
                ours[0] / hook[0],
                ours[1],
                hook[1]
            );
        }
    }
    Ok(())
}

/// `bench node` takes no filters beyond its name.
pub(crate) fn check_args(filters: &[String]) -> Result<()> {
    if filters.len() > 1 {
        bail!("`cargo xtask bench node` takes no further filters");
    }
    Ok(())
}
