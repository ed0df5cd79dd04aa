//! The CLI session case of `cargo xtask bench log` (R-LOG-5, issue 18 item
//! 7): one whole `dsh-instructions session touch` process on a session about
//! to get its ~2,000th event, beside the same command at its ~50th. Every
//! timed touch reads a file of a known directory, so it finds nothing new:
//! what the later one must not pay for is the history of touches before it
//! (no replay of tool events that produced nothing, decision 0025).
//!
//! Output: one row, `case  ours_ms  floor_ms  ratio`, ours the late touch,
//! the floor the early one, alternating run by run in the same process so
//! noise hits both. `DSH_BENCH_CLI` names the built release binary (`cargo
//! xtask bench` sets it); arguments not starting with `-` filter by
//! substring.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Timed runs per side.
const RUNS: usize = 31;
/// Events of the long session when it is timed (two per touch: the tool
/// event and `settled`).
const LONG_EVENTS: usize = 2_000;
/// Known packages of both sessions.
const PACKAGES: usize = 20;

struct Fixture {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    dsh_home: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().join("repo");
        let home = tmp.path().join("home");
        let dsh_home = home.join(".dsh");
        std::fs::create_dir_all(repo.join(".git")).expect("repo");
        std::fs::create_dir_all(&dsh_home).expect("dsh home");
        std::fs::write(repo.join("AGENTS.md"), "# Root\n\nBe brief.\n").expect("root");
        for d in 0..PACKAGES {
            let dir = repo.join(format!("pkg{d}"));
            std::fs::create_dir_all(&dir).expect("dir");
            std::fs::write(dir.join("AGENTS.md"), format!("# Package {d}\n")).expect("file");
            std::fs::write(dir.join("lib.rs"), "fn main() {}\n").expect("file");
        }
        Self {
            _tmp: tmp,
            repo,
            dsh_home,
            home,
        }
    }

    fn run(&self, cli: &Path, args: &[&str]) -> (String, Duration) {
        let start = Instant::now();
        let out = Command::new(cli)
            .args(args)
            .current_dir(&self.repo)
            .env("HOME", &self.home)
            .env("DSH_HOME", &self.dsh_home)
            .output()
            .expect("run the CLI");
        let took = start.elapsed();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (String::from_utf8_lossy(&out.stdout).trim().to_owned(), took)
    }

    /// A session with a baseline and every package known.
    fn session(&self, cli: &Path) -> String {
        let repo = self.repo.to_string_lossy().into_owned();
        let (id, _) = self.run(cli, &["session", "new", "--cwd", &repo]);
        self.run(cli, &["session", "prompt", &id, "hi"]);
        for d in 0..PACKAGES {
            self.run(cli, &["session", "touch", &id, &format!("pkg{d}/lib.rs")]);
        }
        self.run(cli, &["session", "step-end", &id]);
        id
    }

    fn events(&self, id: &str) -> usize {
        std::fs::read_to_string(
            self.dsh_home
                .join("sessions")
                .join(id)
                .join("session.jsonl"),
        )
        .map_or(0, |t| t.lines().count())
    }
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let case = "log/session-touch/2000th-vs-early";
    if !(filters.is_empty() || filters.iter().any(|f| case.contains(f.as_str()))) {
        return;
    }
    let Some(cli) = std::env::var_os("DSH_BENCH_CLI").map(PathBuf::from) else {
        println!("# {case}: skipped (set DSH_BENCH_CLI to a built release dsh-instructions)");
        return;
    };
    let fx = Fixture::new();
    let short = fx.session(&cli);
    let long = fx.session(&cli);
    while fx.events(&long) < LONG_EVENTS {
        fx.run(&cli, &["session", "touch", &long, "pkg3/lib.rs"]);
    }
    let (start_short, start_long) = (fx.events(&short), fx.events(&long));
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (out, t) = fx.run(&cli, &["session", "touch", &long, "pkg3/lib.rs"]);
        assert!(out.is_empty(), "nothing new: {out}");
        ours.push(t);
        let (out, t) = fx.run(&cli, &["session", "touch", &short, "pkg3/lib.rs"]);
        assert!(out.is_empty(), "nothing new: {out}");
        floor.push(t);
    }
    let (o, f) = (median(ours), median(floor));
    println!(
        "{case:<36} {o:>10.3} {f:>10.3} {:>7.2}   (events {start_long} vs {start_short})",
        o / f
    );
}
