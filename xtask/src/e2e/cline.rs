//! Cline CLI 3.0.65 in the e2e (decision 0089; harness `agents/cline.md`):
//! its offline configuration, the terminal-UI steps its resume and
//! `/compact` need, the two outside hosts its UI tries at every start
//! (refused by the mock, reported, never failing the case), and its case.
//!
//! A new task is `cline --json "<prompt>"`; a later prompt resumes the
//! session in the terminal UI (`cline --id <session>`, the only way), run on
//! a pseudo-terminal by util-linux `script`: the step waits for the UI to
//! settle, types the prompt and Enter, waits until the mock's log shows the
//! turn answered, then types `/quit`.

use std::fs;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::agents::{Agent, Dirs, StepRun, write_json};
use super::assertions::Expect;
use super::scenarios::{Case, Change, Plan, f, instr, once, plan, step};

/// The hosts Cline's terminal UI connects to at every start, with no switch
/// to stop it (harness: `models.dev/api.json`, the model catalog, and
/// `api.cline.bot`'s recommended models). The mock refuses both (`403` to
/// the `CONNECT`); the case reports them. Any other outside connection, or
/// one of these answered, still fails the case.
pub(crate) const REFUSED_HOSTS: [&str; 2] = ["models.dev:443", "api.cline.bot:443"];

/// Whether a stray request is one of Cline's known start-up connections,
/// refused.
pub(crate) fn known_refusal(agent: Agent, method: &str, target: &str, action: &str) -> bool {
    agent == Agent::Cline
        && method == "CONNECT"
        && action == "refused"
        && REFUSED_HOSTS.contains(&target)
}

/// `~/.cline/data/settings/`: telemetry and updates off, the mock as an
/// OpenAI-compatible provider (what `cline auth -p openai-compatible … -b`
/// writes).
pub(crate) fn write_endpoint_config(dirs: &Dirs, port: u16) -> Result<()> {
    let settings = dirs.home.join(".cline/data/settings");
    write_json(
        &settings.join("global-settings.json"),
        &json!({"telemetryOptOut": true, "autoUpdateEnabled": false}),
    )?;
    write_json(
        &settings.join("providers.json"),
        &json!({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
            "providers": {"openai-compatible": {"settings": {
                "provider": "openai-compatible", "apiKey": "sk-mock-000",
                "model": "mock-model", "baseUrl": format!("http://127.0.0.1:{port}/v1")},
                "updatedAt": "2026-12-07T00:00:00.000Z", "tokenSource": "manual"}}}),
    )
}

/// The marker hook for the plumbing check: Cline's hook files.
pub(crate) fn write_marker_hooks(dirs: &Dirs, command: &str) -> Result<()> {
    for event in ["PreToolUse", "PostToolUse"] {
        let path = dirs.home.join(".cline/hooks").join(event);
        fs::create_dir_all(path.parent().context("hooks dir")?)?;
        fs::write(&path, format!("#!/bin/sh\nexec {command}\n"))?;
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// The environment Cline needs offline (harness `cline.md`): no update
/// check, no feature flags (`E2E_TEST`), no hub daemon left behind (local
/// backend; the UI needs the sandbox switch too), its data where it always is.
pub(crate) fn env(c: &mut Command, dirs: &Dirs) {
    c.env("CLINE_NO_AUTO_UPDATE", "1")
        .env("E2E_TEST", "true")
        .env("CLINE_SESSION_BACKEND_MODE", "local")
        .env("CLINE_SANDBOX", "1")
        .env("CLINE_SANDBOX_DATA_DIR", dirs.home.join(".cline/data"));
}

/// The session the first step started: Cline names it only in its history
/// and its sessions directory, one directory per session.
pub(crate) fn session_id(dirs: &Dirs) -> Result<String> {
    let dir = dirs.home.join(".cline/data/sessions");
    let mut found: Vec<(std::time::SystemTime, String)> = fs::read_dir(&dir)
        .with_context(|| format!("no Cline sessions in {}", dir.display()))?
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_type().ok()?.is_dir().then_some(())?;
            let t = e.metadata().ok()?.modified().ok()?;
            Some((t, e.file_name().to_string_lossy().into_owned()))
        })
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, id)| id)
        .with_context(|| format!("no Cline session directory in {}", dir.display()))
}

/// How many of the mock's answers so far end a turn: text (`final`,
/// `plain`) or a compaction summary.
fn answered(log: &Path, summary: bool) -> usize {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            let a = v["action"].as_str().unwrap_or("");
            if summary {
                a == "summary"
            } else {
                a == "final" || a == "plain"
            }
        })
        .count()
}

/// What the terminal printed, and when it last printed.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    last: Option<Instant>,
}

/// One prompt in Cline's terminal UI, resuming session `id`: `c` carries
/// the agent's environment and working directory.
pub(crate) fn tui_step(
    c: Command,
    program: &Path,
    id: &str,
    text: &str,
    dirs: &Dirs,
    label: &str,
) -> Result<StepRun> {
    use std::os::unix::process::CommandExt as _;
    let limit = Agent::Cline.step_timeout();
    let mut s = Command::new("script");
    s.env_clear();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            s.env(k, v);
        }
    }
    s.env("TERM", "xterm-256color");
    if let Some(d) = c.get_current_dir() {
        s.current_dir(d);
    }
    let inner = format!(
        "stty rows 50 cols 160 2>/dev/null; exec '{}' --id '{id}'",
        program.display()
    );
    s.args(["-qfec", &inner, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(fs::File::create(dirs.run.join(format!("{label}.stderr")))?)
        .process_group(0);
    let t0 = Instant::now();
    let mut child = s.spawn().context("cannot start `script` (util-linux)")?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = child.stdout.take().context("stdout")?;
    let screen = Arc::new(Mutex::new(Screen::default()));
    let reader = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = screen.lock().unwrap_or_else(|p| p.into_inner());
                s.bytes.extend_from_slice(&buf[..n]);
                s.last = Some(Instant::now());
            }
        })
    };
    let quiet_for = |d: Duration| {
        let s = screen.lock().unwrap_or_else(|p| p.into_inner());
        s.last.is_some_and(|t| t.elapsed() >= d)
    };
    let log = dirs.run.join("requests.jsonl");
    let summary = text.trim() == "/compact";
    let before = answered(&log, summary);
    let mut outcome: Result<()> = Ok(());
    // The UI is up once it has drawn and gone quiet.
    while !quiet_for(Duration::from_millis(2500)) {
        if t0.elapsed() > limit / 2 {
            outcome = Err(anyhow::anyhow!("the UI never settled"));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if outcome.is_ok() {
        stdin.write_all(text.as_bytes())?;
        stdin.flush()?;
        std::thread::sleep(Duration::from_millis(400));
        stdin.write_all(b"\r")?;
        stdin.flush()?;
        // Answered, and the UI quiet again.
        loop {
            if answered(&log, summary) > before && quiet_for(Duration::from_secs(2)) {
                break;
            }
            if t0.elapsed() > limit {
                outcome = Err(anyhow::anyhow!("no answer to the prompt within {limit:?}"));
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let _ = stdin.write_all(b"/quit");
    let _ = stdin.flush();
    std::thread::sleep(Duration::from_millis(400));
    let _ = stdin.write_all(b"\r");
    let _ = stdin.flush();
    let quit_by = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if Instant::now() > quit_by {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let timed_out = status.is_none();
    if timed_out {
        // Only the group this step started.
        let pgid = child.id().to_string();
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status();
        let _ = child.wait();
    }
    drop(stdin);
    let _ = reader.join();
    let bytes = std::mem::take(&mut screen.lock().unwrap_or_else(|p| p.into_inner()).bytes);
    fs::write(dirs.run.join(format!("{label}.screen")), &bytes)?;
    let stdout = String::from_utf8_lossy(&bytes).into_owned();
    let tail: String = stdout
        .chars()
        .rev()
        .take(600)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if let Err(e) = outcome {
        bail!("{label}: {e:#}; the screen ended: {tail}");
    }
    Ok(StepRun {
        code: status.and_then(|s| s.code()),
        timed_out,
        elapsed: t0.elapsed(),
        stdout,
        stderr_tail: tail,
    })
}

/// The files of the Cline case: a root `AGENTS.md` Cline loads itself, what
/// it lacks (an overlay, the user-global file, a `CLAUDE.md` where a
/// directory has no `AGENTS.md`, nested files), a file to read and one to
/// remove while Cline is not running.
fn files() -> Vec<(String, String)> {
    vec![
        f("home/.dsh/AGENTS.md", instr("E2E-HOME-V1")),
        f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
        f("ws/AGENTS.local.md", instr("E2E-LOCAL-V1")),
        f("ws/sub/CLAUDE.md", instr("E2E-SUB-V1")),
        f("ws/sub/f.txt", "plain file in sub\n"),
        f("ws/gone/AGENTS.md", instr("E2E-GONE-V1")),
        f("ws/gone/g.txt", "plain file in gone\n"),
    ]
}

/// One Cline session through every event the adapter has with it: the
/// first tool call gives what Cline lacks (Cline's own `AGENTS.md` stays in
/// its system prompt, never ours); a resumed prompt after an edit and a
/// removal while Cline was not running gives the update and the removal,
/// and no second baseline; an edit of Cline's own file is Cline's; after
/// `/compact` the next tool call gives the complete baseline again.
fn session(_: Agent) -> Result<Plan, String> {
    let mut first = step(
        "first",
        "Read them [p:t1] [mock:read=sub/f.txt,gone/g.txt]",
        vec![
            // Cline's own, in its system prompt: once, and none of ours.
            once("E2E-ROOT-V1"),
            once("## Workspace AGENTS.md"),
            Expect::Absent("Instructions from: AGENTS.md\n".into()),
            once("E2E-HOME-V1"),
            once("E2E-LOCAL-V1"),
            once("Instructions from: AGENTS.local.md"),
            once("E2E-SUB-V1"),
            once("Additional instructions from: sub/CLAUDE.md"),
            once("E2E-GONE-V1"),
        ],
    );
    first.file_contains = Vec::new();
    let mut resumed = step(
        "resumed",
        "Again [p:t2] [mock:read=sub/f.txt]",
        vec![
            once("E2E-HOME-V1"),
            once("E2E-LOCAL-V2"),
            once("Updated instructions from: AGENTS.local.md"),
            once("Instructions removed: gone/AGENTS.md"),
            // Cline shows its own file's edit itself, and only it.
            once("E2E-ROOT-V2"),
            Expect::Absent("E2E-ROOT-V1".into()),
            Expect::Absent("Updated instructions from: AGENTS.md\n".into()),
        ],
    );
    resumed.before = vec![
        Change::Write("ws/AGENTS.local.md".into(), instr("E2E-LOCAL-V2")),
        Change::Write("ws/AGENTS.md".into(), instr("E2E-ROOT-V2")),
        Change::Remove("ws/gone/AGENTS.md".into()),
    ];
    let mut compact = step("compact", "/compact", Vec::new());
    compact.compacts = true;
    // After the compaction every file is in the history once: the answers
    // Cline's compacted view kept, or, where it folded one into its
    // summary, the complete baseline the next tool call gives.
    let after = step(
        "after",
        "After [p:t4] [mock:read=sub/f.txt]",
        vec![
            once("E2E-HOME-V1"),
            Expect::Present("E2E-LOCAL-V2".into()),
            Expect::AtMostOnce("E2E-SUB-V1".into()),
            once("E2E-ROOT-V2"),
        ],
    );
    Ok(plan(files(), ".", vec![first, resumed, compact, after]))
}

/// Cline's own cases.
pub(crate) const CASES: &[Case] = &[Case {
    name: "cline-session",
    about: "Cline: its own AGENTS.md stays its own; the first tool call brings the rest; resume after an edit and a removal; /compact then the baseline again",
    plan: session,
    only: Some(Agent::Cline),
    layout: None,
}];
