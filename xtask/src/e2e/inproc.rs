//! Driving the two agents whose integration runs in their own process, pi
//! (an extension) and opencode (a plugin), where their print modes cannot:
//! pi compacts over its RPC mode, opencode over the HTTP API of an
//! `opencode serve` process of the case's own, which also runs the sessions
//! of two workspaces side by side (agents/pi.md, agents/opencode.md in
//! `../shared/agent-harness`; decision 0088).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::agents::{self, Agent, Dirs, Installed, Session, StepRun};
use super::assertions::{Expect, check_all, visible_text};
use super::scenarios::{Case, Change, Plan, absent, f, instr, once, plan, step};

/// One prompt of `session`, as [`Session::prompt`], except `/compact` for
/// pi and opencode: neither has it in print mode (agents/pi.md,
/// agents/opencode.md), so pi compacts over RPC and opencode over its
/// server's API.
pub(crate) fn prompt(session: &mut Session, text: &str) -> Result<StepRun> {
    if text == "/compact" && session.agent().in_process() {
        let run = compact(session)?;
        session.set_started();
        return Ok(run);
    }
    session.prompt(text)
}

/// Installs the product for `agent` into `dirs.home`: the hook through
/// `hook install`, or the extension or plugin ([`install`]).
pub(crate) fn install_product(agent: Agent, dirs: &Dirs, bin: &Path) -> Result<()> {
    if !agent.in_process() {
        return agents::run_installer(agent, dirs, bin);
    }
    let pkg = STAGED.get().context("the Node binding was not staged")?;
    install(agent, &dirs.home, &dirs.ws, bin, pkg)
}

/// Compacts the session now, the way a person does (`/compact`): pi's RPC
/// `compact` command, opencode's `POST /session/<id>/summarize` (what its
/// TUI's `/compact` calls).
fn compact(session: &mut Session) -> Result<StepRun> {
    let id = session
        .id()
        .context("no session to compact: the first step printed no session id")?
        .to_owned();
    let label = session.next_label();
    match session_agent(session) {
        Agent::Pi => pi_rpc_compact(session, &id, &label),
        Agent::Opencode => {
            let dir = session.dirs().cwd.clone();
            let t0 = Instant::now();
            let server = Server::start(session, &label)?;
            let answer = server.post(
                &format!("/session/{id}/summarize"),
                &dir,
                &json!({"providerID": "mock", "modelID": "mock-model"}),
            );
            // A person's server keeps running after `/compact`; this one is
            // stopped, so first let its bus hand `session.compacted` to the
            // plugins (their handlers are asynchronous).
            std::thread::sleep(SETTLE);
            let log = server.stop();
            Ok(match answer {
                Ok(v) if v == json!(true) => StepRun {
                    code: Some(0),
                    timed_out: false,
                    elapsed: t0.elapsed(),
                    stdout: v.to_string(),
                    stderr_tail: String::new(),
                },
                Ok(v) => StepRun {
                    code: Some(1),
                    timed_out: false,
                    elapsed: t0.elapsed(),
                    stdout: v.to_string(),
                    stderr_tail: format!("summarize answered {v}; server: {}", tail(&log)),
                },
                Err(e) => StepRun {
                    code: Some(1),
                    timed_out: false,
                    elapsed: t0.elapsed(),
                    stdout: String::new(),
                    stderr_tail: format!("summarize: {e:#}; server: {}", tail(&log)),
                },
            })
        }
        other => bail!("{other} compacts through its own prompt"),
    }
}

/// How long a server stopped by the e2e first runs on after its last answer.
const SETTLE: Duration = Duration::from_secs(3);

fn session_agent(session: &Session) -> Agent {
    session.agent()
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().rev().take(4).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Kills a child's whole process group (the agent's own children share it).
fn kill_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// `pi --session <id> --mode rpc`, one `compact` command, its response, then
/// end of input (pi exits on it).
fn pi_rpc_compact(session: &Session, id: &str, label: &str) -> Result<StepRun> {
    use std::os::unix::process::CommandExt;
    let run = session.dirs().run.clone();
    let out_path = run.join(format!("{label}.stdout"));
    let err_path = run.join(format!("{label}.stderr"));
    let mut c = session.agent_command();
    c.args([
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "--session",
        id,
    ])
    .args(["--mode", "rpc"])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(fs::File::create(&err_path)?)
    .process_group(0);
    let t0 = Instant::now();
    let limit = Agent::Pi.step_timeout();
    let mut child = c.spawn().context("cannot start pi --mode rpc")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let (tx, rx) = mpsc::channel::<String>();
    let mut out_file = fs::File::create(&out_path)?;
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = writeln!(out_file, "{line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().context("no stdin")?;
    writeln!(stdin, "{}", json!({"type": "compact", "id": "e2e-compact"}))?;
    stdin.flush()?;
    let mut response: Option<Value> = None;
    while response.is_none() {
        let left = limit.saturating_sub(t0.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && v["type"] == "response"
                    && v["id"] == "e2e-compact"
                {
                    response = Some(v);
                }
            }
            Err(_) => break,
        }
    }
    // End of input: pi finishes what it does and exits.
    drop(stdin);
    let mut timed_out = response.is_none();
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if t0.elapsed() > limit {
            timed_out = true;
            kill_group(&mut child);
            break None;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    let _ = reader.join();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    let ok = response.as_ref().is_some_and(|r| r["success"] == true);
    let code = match (status.and_then(|s| s.code()), ok) {
        (Some(0), true) => Some(0),
        (Some(0), false) => Some(3),
        (c, _) => c,
    };
    Ok(StepRun {
        code,
        timed_out,
        elapsed: t0.elapsed(),
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr_tail: match &response {
            Some(r) if !ok => format!("compact answered {r}; {}", tail(&stderr)),
            None => format!("no response to compact; {}", tail(&stderr)),
            _ => tail(&stderr),
        },
    })
}

/// An `opencode serve` process of the case's own on 127.0.0.1, in the
/// session's cwd and environment, killed (its process group) when stopped.
pub(crate) struct Server {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
}

impl Server {
    /// Starts it and waits for its `listening` line (a request sent while
    /// it starts can hang, agents/opencode.md).
    pub(crate) fn start(session: &Session, label: &str) -> Result<Server> {
        use std::os::unix::process::CommandExt;
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            l.local_addr()?.port()
        };
        let log = session.dirs().run.join(format!("{label}.serve.log"));
        let mut c = session.agent_command();
        c.args([
            "serve",
            "--hostname",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(fs::File::create(&log)?)
        .stderr(fs::OpenOptions::new().append(true).open(&log)?)
        .process_group(0);
        let mut child = c.spawn().context("cannot start opencode serve")?;
        let t0 = Instant::now();
        loop {
            if fs::read_to_string(&log).is_ok_and(|t| t.contains("listening")) {
                break;
            }
            if let Some(st) = child.try_wait()? {
                bail!(
                    "opencode serve exited early ({st}): {}",
                    tail(&fs::read_to_string(&log).unwrap_or_default())
                );
            }
            if t0.elapsed() > Duration::from_secs(60) {
                kill_group(&mut child);
                bail!("opencode serve did not listen within 60 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(Server { child, port, log })
    }

    /// `POST <path>?directory=<dir>` with a JSON body; the JSON answer.
    pub(crate) fn post(&self, path: &str, dir: &Path, body: &Value) -> Result<Value> {
        let target = format!(
            "{path}?directory={}",
            query_escape(&dir.display().to_string())
        );
        let body = body.to_string();
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Agent::Opencode.step_timeout()))?;
        write!(
            s,
            "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )?;
        let (status, body) = read_answer(&mut BufReader::new(s))
            .with_context(|| format!("no complete answer to POST {path}"))?;
        if status != "200" {
            bail!("POST {path}: HTTP {status}: {}", body.trim());
        }
        serde_json::from_str(body.trim())
            .with_context(|| format!("POST {path}: not JSON: {}", body.trim()))
    }

    /// Stops it; its output.
    pub(crate) fn stop(mut self) -> String {
        kill_group(&mut self.child);
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            kill_group(&mut self.child);
        }
    }
}

/// One HTTP/1.1 answer: its status and body, framed by its headers
/// (`Content-Length` or chunked), not by a close: Bun keeps the connection
/// open after answering `summarize` (the read then waited out its timeout).
fn read_answer<R: BufRead>(r: &mut R) -> Result<(String, String)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            bail!("the connection closed before an answer");
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split_whitespace().nth(1).unwrap_or("?").to_owned();
    let lower = head.to_ascii_lowercase();
    let length = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let mut raw = Vec::new();
    if let Some(n) = length {
        raw.resize(n, 0);
        r.read_exact(&mut raw)
            .context("a body shorter than announced")?;
    } else if lower.contains("transfer-encoding: chunked") {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                .with_context(|| format!("bad chunk size {size:?}"))?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&chunk[..n]);
        }
    } else {
        r.read_to_end(&mut raw)?;
    }
    Ok((status, String::from_utf8_lossy(&raw).into_owned()))
}

/// A query value: everything but unreserved characters percent-encoded.
fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The staged binding package (set once per e2e run by `stage_binding`).
pub(crate) static STAGED: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// The Node binding as an installed package: the addon built in debug
/// (like the CLI the e2e runs), with `native.js` and the compiled pi
/// extension and opencode plugin that the same build makes (build output,
/// decision 0094), and the files its `package.json` ships, under
/// `<target>/e2e-node/dsh-agent-instructions`.
pub(crate) fn stage_binding(root: &Path) -> Result<std::path::PathBuf> {
    let src = root.join(crate::npm_node::CRATE_DIR);
    crate::npm_node::generate(
        &src,
        crate::npm_node::Profile::Debug,
        crate::npm_node::Install::IfMissing,
    )?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into);
    let pkg = target.join("e2e-node/dsh-agent-instructions");
    fs::create_dir_all(pkg.join("agents"))?;
    let manifest: Value = serde_json::from_str(&fs::read_to_string(src.join("package.json"))?)?;
    for f in manifest["files"].as_array().into_iter().flatten() {
        let Some(f) = f.as_str() else { continue };
        fs::copy(src.join(f), pkg.join(f)).with_context(|| format!("cannot stage {f}"))?;
    }
    fs::copy(src.join("package.json"), pkg.join("package.json"))?;
    // Named as `native.js` looks for it beside itself (napi-rs's loader).
    let addon = crate::npm_node::host_addon()?;
    fs::copy(src.join(&addon), pkg.join(&addon))
        .with_context(|| format!("no addon {addon} after napi build"))?;
    Ok(pkg)
}

/// Where a user's pi and opencode load the integration from (their own
/// extension and plugin directories, agents/pi.md and agents/opencode.md).
pub(crate) fn integration_file(agent: Agent, home: &Path) -> std::path::PathBuf {
    match agent {
        Agent::Pi => home.join(".pi/agent/extensions/dsh-instructions.ts"),
        _ => home.join(".config/opencode/plugin/dsh-instructions.js"),
    }
}

/// Installs the integration into `home` the way a user does: `hook install
/// --agent A --scope user --package <the staged binding>`, which writes the
/// one file that loads the binding's extension or plugin (decision 0086).
pub(crate) fn install(agent: Agent, home: &Path, ws: &Path, bin: &Path, pkg: &Path) -> Result<()> {
    let config = home.join(".config");
    super::agents::hook_install(
        bin,
        agent,
        &["--package".to_owned(), pkg.display().to_string()],
        home,
        ws,
        &[("XDG_CONFIG_HOME", &config)],
    )?;
    let file = integration_file(agent, home);
    if !fs::read_to_string(&file).is_ok_and(|t| t.contains(&pkg.display().to_string())) {
        bail!(
            "`hook install --agent {agent}` succeeded but {} does not load the staged binding",
            file.display()
        );
    }
    Ok(())
}

/// `opencode-serve`: one `opencode serve` process, sessions in two
/// workspaces (issue 48 item 2).
pub(crate) const SERVE: Case = Case {
    name: "opencode-serve",
    about: "opencode: one serve process, sessions in two workspaces: nothing of one reaches the other",
    plan: serve_plan,
    only: Some(Agent::Opencode),
    layout: None,
};

fn serve_plan(agent: Agent) -> Result<Plan, String> {
    if agent != Agent::Opencode {
        return Err("opencode-serve is opencode's (`opencode serve`)".into());
    }
    let steps = vec![
        step("ws-read", "Look [p:w1] [mock:read=n/f.txt]", Vec::new()),
        step("ws2-hello", "Hello [p:w2] [mock:text]", Vec::new()),
        step("ws-again", "Again [p:w3] [mock:text]", Vec::new()),
    ];
    Ok(plan(
        vec![
            f("home/.dsh/AGENTS.md", instr("E2E-HOME-V1")),
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/AGENTS.local.md", instr("E2E-LOCAL-V1")),
            f("ws/n/AGENTS.md", instr("E2E-N-V1")),
            f("ws/n/f.txt", "plain n\n"),
        ],
        ".",
        steps,
    ))
}

/// The second workspace of `opencode-serve`: its own root file and overlay
/// (the overlay is the plugin's: opencode does not load `.local.md`).
const WS2_FILES: [(&str, &str); 2] = [
    ("ws2/AGENTS.md", "E2E-WS2-ROOT-V1"),
    ("ws2/AGENTS.local.md", "E2E-WS2-LOCAL-V1"),
];

/// Runs `opencode-serve` in `run`: each workspace's requests hold its own
/// files (the overlay and the nested file from the plugin) and nothing of
/// the other's, before and after the other session ran.
pub(crate) fn serve_two(installed: &Installed, bin: &Path, run: &Path) -> Result<()> {
    let p = serve_plan(Agent::Opencode).map_err(anyhow::Error::msg)?;
    let dirs = Dirs::of_run(run, ".");
    super::prepare(&p, &dirs)?;
    let ws2 = run.join("ws2");
    for (path, marker) in WS2_FILES {
        super::apply(run, &Change::Write(path.into(), instr(marker)))?;
    }
    super::git(&ws2, &["init", "-q"])?;
    super::git(&ws2, &["add", "-A"])?;
    super::git(&ws2, &["commit", "-q", "-m", "e2e fixture"])?;
    let mut mock = super::mock_for(Agent::Opencode, &dirs)?;
    install_product(Agent::Opencode, &dirs, bin)?;
    let mut session = Session::new(Agent::Opencode, installed, &dirs, mock.port());
    let label = session.next_label();
    let server = Server::start(&session, &label)?;
    let mine = [
        once("E2E-HOME-V1"),
        once("E2E-ROOT-V1"),
        once("E2E-LOCAL-V1"),
        absent("E2E-WS2-ROOT-V1"),
        absent("E2E-WS2-LOCAL-V1"),
    ];
    let theirs = [
        once("E2E-HOME-V1"),
        once("E2E-WS2-ROOT-V1"),
        once("E2E-WS2-LOCAL-V1"),
        absent("E2E-ROOT-V1"),
        absent("E2E-LOCAL-V1"),
        absent("E2E-N-V1"),
    ];
    let mut ids: Vec<(std::path::PathBuf, String)> = Vec::new();
    let result = (|| -> Result<()> {
        for (n, s) in p.steps.iter().enumerate() {
            let dir = if s.label.starts_with("ws2") {
                &ws2
            } else {
                &dirs.ws
            };
            let id = match ids.iter().find(|(d, _)| d == dir) {
                Some((_, id)) => id.clone(),
                None => {
                    let v = server.post(
                        "/session",
                        dir,
                        &json!({"title": format!("e2e {}", s.label)}),
                    )?;
                    let id = v["id"].as_str().context("POST /session: no id")?.to_owned();
                    ids.push((dir.clone(), id.clone()));
                    id
                }
            };
            let before = mock.records().len();
            server
                .post(
                    &format!("/session/{id}/message"),
                    dir,
                    &json!({"model": {"providerID": "mock", "modelID": "mock-model"},
                            "parts": [{"type": "text", "text": s.prompt}]}),
                )
                .with_context(|| format!("step {} ({})", n + 1, s.label))?;
            let records = mock.records();
            if let Some(r) = records.iter().find(|r| r.stray) {
                bail!(
                    "step {} ({}): stray request {} {}",
                    n + 1,
                    s.label,
                    r.method,
                    r.target
                );
            }
            super::prove_event(s, &records[before..])
                .with_context(|| format!("step {} ({})", n + 1, s.label))?;
            let want: &[Expect] = if dir == &ws2 { &theirs } else { &mine };
            let turns: Vec<&super::mock::Record> =
                records[before..].iter().filter(|r| r.is_turn()).collect();
            for (k, r) in turns.iter().enumerate() {
                let text = r.body.as_ref().map(visible_text).unwrap_or_default();
                let mut want = want.to_vec();
                if (s.label == "ws-read" && k + 1 == turns.len()) || s.label == "ws-again" {
                    // The read's directory, after the read: once (opencode's
                    // own reminder in the tool result).
                    want.push(once("E2E-N-V1"));
                }
                let failures = check_all(&want, &text);
                if !failures.is_empty() {
                    bail!(
                        "step {} ({}), request #{}: {}",
                        n + 1,
                        s.label,
                        r.seq,
                        failures.join("; ")
                    );
                }
            }
        }
        Ok(())
    })();
    let log = server.stop();
    fs::write(run.join(format!("{label}.serve.log")), &log)?;
    mock.stop();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_framed_by_their_headers_not_by_a_close() {
        use std::io::Cursor;
        // Bytes after the body stand for a connection left open.
        let mut fixed =
            Cursor::new(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ntrueNEXT".to_vec());
        assert_eq!(
            read_answer(&mut fixed).unwrap(),
            ("200".into(), "true".into())
        );
        let mut chunked = Cursor::new(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[1\r\n1\r\n]\r\n0\r\n\r\nNEXT"
                .to_vec(),
        );
        assert_eq!(read_answer(&mut chunked).unwrap().1, "[1]");
        let mut short = Cursor::new(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\ntrue".to_vec());
        assert!(read_answer(&mut short).is_err());
        let mut closed = Cursor::new(b"HTTP/1.1 500 Oops\r\n".to_vec());
        assert!(read_answer(&mut closed).is_err());
    }

    #[test]
    fn queries_escape() {
        assert_eq!(query_escape("/tmp/a b&c"), "/tmp/a%20b%26c");
    }
}
