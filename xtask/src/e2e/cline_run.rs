//! Running Cline CLI 3.0.65 in the e2e (decision 0089; harness
//! `agents/cline.md`): its offline configuration and the terminal-UI steps
//! its resume and `/compact` need. Free of the other e2e modules, which
//! call it (`agents.rs`); its cases are `cline.rs`.
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

/// Writes `v` as pretty JSON, making its directory.
fn write_json(path: &Path, v: &Value) -> Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p)?;
    }
    fs::write(path, serde_json::to_string_pretty(v)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The files Cline alone loads on a layout (`layouts.rs`): the
/// `AGENTS.md` of its working directory only. Sentry's cwd
/// (`static/app/components`) has none, so there the comparison checks the
/// hook's delivery alone; airflow's (`providers`) and big-root's (the root)
/// have one.
pub(crate) fn native_files(layout: &str) -> usize {
    match layout {
        "airflow" | "big-root" => 1,
        _ => 0,
    }
}

/// The plain file a Cline run of a layout reads: Cline gives hook context
/// only after a tool call (decision 0089).
pub(crate) const LAYOUT_READ: &str = "e2e-read.txt";

/// `~/.cline/data/settings/`: telemetry and updates off, the mock as an
/// OpenAI-compatible provider (what `cline auth -p openai-compatible … -b`
/// writes).
pub(crate) fn write_endpoint_config(home: &Path, port: u16) -> Result<()> {
    let settings = home.join(".cline/data/settings");
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
pub(crate) fn write_marker_hooks(home: &Path, command: &str) -> Result<()> {
    for event in ["PreToolUse", "PostToolUse"] {
        let path = home.join(".cline/hooks").join(event);
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
pub(crate) fn env(c: &mut Command, home: &Path) {
    c.env("CLINE_NO_AUTO_UPDATE", "1")
        .env("E2E_TEST", "true")
        .env("CLINE_SESSION_BACKEND_MODE", "local")
        .env("CLINE_SANDBOX", "1")
        .env("CLINE_SANDBOX_DATA_DIR", home.join(".cline/data"));
}

/// The session the first step started: Cline names it only in its history
/// and its sessions directory, one directory per session.
pub(crate) fn session_id(home: &Path) -> Result<String> {
    let dir = home.join(".cline/data/sessions");
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

/// What one terminal-UI step came to.
#[derive(Debug)]
pub(crate) struct TuiRun {
    /// The exit code (`None`: killed after `/quit` went unheard).
    pub code: Option<i32>,
    /// Whether it had to be killed.
    pub timed_out: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// What the terminal printed.
    pub screen: String,
    /// Its last 600 characters.
    pub tail: String,
}

/// One prompt in Cline's terminal UI, resuming session `id`: `c` carries
/// the agent's environment and working directory; `run` is the case's
/// run directory (the mock's `requests.jsonl`, the step's output files).
pub(crate) fn tui_step(
    c: Command,
    program: &Path,
    (id, text): (&str, &str),
    run: &Path,
    label: &str,
    limit: Duration,
) -> Result<TuiRun> {
    use std::os::unix::process::CommandExt as _;
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
        .stderr(fs::File::create(run.join(format!("{label}.stderr")))?)
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
    let log = run.join("requests.jsonl");
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
    fs::write(run.join(format!("{label}.screen")), &bytes)?;
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
    Ok(TuiRun {
        code: status.and_then(|s| s.code()),
        timed_out,
        elapsed: t0.elapsed(),
        screen: stdout,
        tail,
    })
}
