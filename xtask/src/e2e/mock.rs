//! The mock model server: 127.0.0.1 only, one thread per connection,
//! HTTP/1.1 keep-alive. It answers the Anthropic Messages, OpenAI Responses,
//! OpenAI Chat Completions and Gemini endpoints from the script (`script.rs`, `wire.rs`), appends
//! every request and its answer to a JSON-lines log, and refuses anything
//! else — including `CONNECT` from agents that honour `HTTPS_PROXY`, which the
//! runner points here — recording it as stray so nothing leaves the machine
//! unseen. It stops by itself after a bound.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::chat;
use super::http::{self, Request};
use super::script::{self, Decision, Item};
use super::wire::{self, Place, Reply};

/// One recorded request.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// 1-based arrival order.
    pub seq: u64,
    /// HTTP method.
    pub method: String,
    /// Request target.
    pub target: String,
    /// Parsed JSON body, if any.
    pub body: Option<Value>,
    /// What the mock answered (`tool`, `final`, `summary`, `plain`,
    /// `no-tool`, `count`, `models`, `refused`, `error`).
    pub action: String,
    /// Not an endpoint the agents need: fails the run.
    pub stray: bool,
}

impl Record {
    /// A request that is a step of a scripted turn (not a summary, title or
    /// token count): the last of these in a step is what the model saw then.
    pub(crate) fn is_turn(&self) -> bool {
        matches!(self.action.as_str(), "tool" | "final" | "no-tool")
    }
}

struct Shared {
    workspace: PathBuf,
    cwd: PathBuf,
    stop: AtomicBool,
    ids: AtomicU64,
    seq: AtomicU64,
    usage_done: Mutex<HashSet<String>>,
    records: Mutex<Vec<Record>>,
    log: Mutex<File>,
}

/// A running mock server. Dropping it stops it.
#[derive(Debug)]
pub(crate) struct Mock {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// Idle connections are dropped after this long, so no thread outlives the
/// agent that opened the connection by much.
const IDLE: Duration = Duration::from_secs(60);

impl Mock {
    /// Binds 127.0.0.1:0 and serves until [`Mock::stop`], drop, or `bound`.
    /// `workspace` and `cwd` shape tool arguments; `log` receives one JSON
    /// line per request.
    pub(crate) fn start(workspace: &Path, cwd: &Path, log: &Path, bound: Duration) -> Result<Mock> {
        let listener = TcpListener::bind("127.0.0.1:0").context("mock: bind 127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            workspace: workspace.to_owned(),
            cwd: cwd.to_owned(),
            stop: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            usage_done: Mutex::new(HashSet::new()),
            records: Mutex::new(Vec::new()),
            log: Mutex::new(File::create(log).with_context(|| format!("mock: {}", log.display()))?),
        });
        let s = Arc::clone(&shared);
        let deadline = Instant::now() + bound;
        let accept = std::thread::spawn(move || {
            while !s.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let s = Arc::clone(&s);
                        std::thread::spawn(move || serve(&s, stream));
                    }
                    // Non-blocking accept: poll so the stop flag and the
                    // bound are honoured without a wake-up connection.
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            s.stop.store(true, Ordering::Relaxed);
        });
        Ok(Mock {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far, in arrival order.
    pub(crate) fn records(&self) -> Vec<Record> {
        lock(&self.shared.records).clone()
    }

    /// Whether the accept loop has stopped (bound reached or stopped).
    #[cfg(test)]
    pub(crate) fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Stops accepting and waits for the accept loop.
    pub(crate) fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn serve(s: &Shared, stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(IDLE));
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        if s.stop.load(Ordering::Relaxed) {
            break;
        }
        let req = match http::read_request(&mut reader) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut
                {
                    record(s, "?", "?", None, "malformed", true, &json!(e.to_string()));
                    let _ = out.write_all(&http::response(400, "text/plain", b"bad request", true));
                }
                break;
            }
        };
        let (bytes, close) = answer(s, &req);
        if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
            break;
        }
        if close || req.wants_close() {
            break;
        }
    }
    let _ = out.shutdown(Shutdown::Both);
}

fn record(
    s: &Shared,
    method: &str,
    target: &str,
    body: Option<Value>,
    action: &str,
    stray: bool,
    answer: &Value,
) {
    let seq = s.seq.fetch_add(1, Ordering::Relaxed) + 1;
    let line = json!({"seq": seq, "method": method, "path": target, "stray": stray,
                      "action": action, "answer": answer, "body": body});
    let _ = writeln!(lock(&s.log), "{line}");
    lock(&s.records).push(Record {
        seq,
        method: method.to_owned(),
        target: target.to_owned(),
        body,
        action: action.to_owned(),
        stray,
    });
}

/// The protocol of a request, from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Anthropic `POST /v1/messages`.
    Anthropic,
    /// Anthropic `POST /v1/messages/count_tokens`.
    AnthropicCount,
    /// OpenAI `POST …/responses`.
    Responses,
    /// OpenAI `POST …/chat/completions` (Copilot CLI, Qwen Code).
    Chat,
    /// `GET …/models` (Codex asks for the model list).
    Models,
    /// Gemini `POST …/models/<m>:<verb>`.
    Gemini { model: String, verb: String },
    /// Anything else: refused and recorded as stray.
    Stray,
}

/// Routes a request by method and path.
pub(crate) fn route(method: &str, path: &str) -> Route {
    match method {
        "POST" if path.ends_with("/v1/messages/count_tokens") => Route::AnthropicCount,
        "POST" if path.ends_with("/v1/messages") => Route::Anthropic,
        "POST" if path.ends_with("/responses") => Route::Responses,
        "POST" if path.ends_with("/chat/completions") => Route::Chat,
        "GET" if path.ends_with("/models") => Route::Models,
        "POST" => {
            let Some((head, verb)) = path.rsplit_once(':') else {
                return Route::Stray;
            };
            let Some((_, model)) = head.rsplit_once("/models/") else {
                return Route::Stray;
            };
            match verb {
                "streamGenerateContent" | "generateContent" | "countTokens"
                    if !model.contains('/') =>
                {
                    Route::Gemini {
                        model: model.to_owned(),
                        verb: verb.to_owned(),
                    }
                }
                _ => Route::Stray,
            }
        }
        _ => Route::Stray,
    }
}

fn decide(s: &Shared, items: &[Item], has_tools: bool) -> Decision {
    script::decide(items, has_tools, &s.usage_done)
}

/// Builds the response for one request and records it. Returns the bytes and
/// whether to close the connection afterwards.
fn answer(s: &Shared, req: &Request) -> (Vec<u8>, bool) {
    let body: Option<Value> = serde_json::from_slice(&req.body).ok();
    let route = route(&req.method, req.path());
    let place = Place {
        workspace: &s.workspace,
        cwd: &s.cwd,
    };
    let mut ids = || s.ids.fetch_add(1, Ordering::Relaxed) + 1;
    let json_reply = |status: u16, v: &Value| {
        http::response(status, "application/json", v.to_string().as_bytes(), false)
    };
    let log = |body: Option<Value>, action: &str, stray: bool, answer: &Value| {
        record(s, &req.method, &req.target, body, action, stray, answer);
    };
    if !req.body.is_empty() && body.is_none() {
        // Compressed or non-JSON bodies would hide what the model sees.
        let enc = req.header("content-encoding").unwrap_or("none").to_owned();
        log(
            None,
            "unreadable-body",
            true,
            &json!({"content-encoding": enc}),
        );
        return (
            json_reply(
                400,
                &json!({"error": {"message": "mock: body is not JSON"}}),
            ),
            false,
        );
    }
    let b = body.clone().unwrap_or(Value::Null);
    let reply: Reply = match &route {
        Route::Stray => {
            log(body, "refused", true, &Value::Null);
            let status = if req.method == "CONNECT" { 403 } else { 404 };
            return (
                http::response(
                    status,
                    "application/json",
                    br#"{"error":{"message":"mock: refused"}}"#,
                    true,
                ),
                true,
            );
        }
        Route::AnthropicCount => {
            log(body, "count", false, &Value::Null);
            let count = json!({"input_tokens": script::DEFAULT_USAGE});
            return (json_reply(200, &count), false);
        }
        Route::Gemini { verb, .. } if verb == "countTokens" => {
            log(body, "count", false, &Value::Null);
            let count = json!({"totalTokens": script::DEFAULT_USAGE});
            return (json_reply(200, &count), false);
        }
        Route::Models => {
            log(None, "models", false, &Value::Null);
            let list = json!({"object": "list", "models": [],
                              "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]});
            return (json_reply(200, &list), false);
        }
        Route::Anthropic => {
            let d = decide(
                s,
                &wire::anthropic_items(&b),
                b["tools"].as_array().is_some_and(|t| !t.is_empty()),
            );
            wire::anthropic_reply(&b, &d, place, &mut ids)
        }
        Route::Responses => {
            let d = decide(
                s,
                &wire::responses_items(&b),
                b["tools"].as_array().is_some_and(|t| !t.is_empty()),
            );
            wire::responses_reply(&b, &d, place, &mut ids)
        }
        Route::Chat => {
            let d = decide(
                s,
                &chat::chat_items(&b),
                b["tools"].as_array().is_some_and(|t| !t.is_empty()),
            );
            chat::chat_reply(&b, &chat::chat_decision(&b, d), place, &mut ids)
        }
        Route::Gemini { model, verb } => {
            let d = decide(
                s,
                &wire::gemini_items(&b),
                !wire::gemini_decls(&b).is_empty(),
            );
            wire::gemini_reply(&b, &d, model, verb == "streamGenerateContent", place)
        }
    };
    log(body, &reply.action, false, &reply.answer);
    // Event streams end the connection, as the real services do after a
    // streamed response; JSON answers keep it alive.
    let close = reply.content_type == "text/event-stream";
    (
        http::response(200, reply.content_type, &reply.body, close),
        close,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::io::{BufRead, Read};

    #[rstest]
    #[case("POST", "/v1/messages", Route::Anthropic)]
    #[case("POST", "/v1/messages/count_tokens", Route::AnthropicCount)]
    #[case("POST", "/v1/responses", Route::Responses)]
    #[case("GET", "/v1/models", Route::Models)]
    #[case("POST", "/v1/chat/completions", Route::Chat)]
    #[case("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
           Route::Gemini { model: "gemini-2.5-flash".into(), verb: "streamGenerateContent".into() })]
    #[case("POST", "/v1beta/models/gemini-2.5-flash:countTokens",
           Route::Gemini { model: "gemini-2.5-flash".into(), verb: "countTokens".into() })]
    #[case("CONNECT", "github.com:443", Route::Stray)]
    #[case("GET", "/", Route::Stray)]
    #[case("POST", "/v1beta/models/x:deleteEverything", Route::Stray)]
    #[case("POST", "/telemetry", Route::Stray)]
    fn routes(#[case] method: &str, #[case] path: &str, #[case] want: Route) {
        assert_eq!(route(method, path), want);
    }

    fn roundtrip(stream: &mut TcpStream, raw: &[u8]) -> (String, String) {
        stream.write_all(raw).unwrap();
        let mut r = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        loop {
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            if l == "\r\n" {
                break;
            }
            head.push_str(&l);
        }
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let mut body = vec![0; len];
        r.read_exact(&mut body).unwrap();
        (head, String::from_utf8(body).unwrap())
    }

    #[test]
    fn serves_keep_alive_records_everything_and_refuses_connect() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.jsonl");
        // The mock's own bound as a hang guard (decision 0082): the
        // exchanges take milliseconds.
        let mut mock = Mock::start(dir.path(), dir.path(), &log, Duration::from_secs(120)).unwrap();
        let mut c = TcpStream::connect(("127.0.0.1", mock.port())).unwrap();
        let (head, body) = roundtrip(&mut c, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200"));
        assert!(body.contains("mock-model"));
        // Same connection, chunked body.
        let msg = br#"{"messages":[{"role":"user","content":"hi [p:t1]"}]}"#;
        let mut raw = format!(
            "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
            msg.len()
        )
        .into_bytes();
        raw.extend_from_slice(msg);
        raw.extend_from_slice(b"\r\n0\r\n\r\n");
        let (_, body) = roundtrip(&mut c, &raw);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("MOCK-FINAL t1")
        );

        let mut p = TcpStream::connect(("127.0.0.1", mock.port())).unwrap();
        let (head, _) = roundtrip(&mut p, b"CONNECT api.github.com:443 HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 403"));
        mock.stop();

        let recs = mock.records();
        let summary: Vec<_> = recs.iter().map(|r| (r.action.as_str(), r.stray)).collect();
        assert_eq!(
            summary,
            [("models", false), ("final", false), ("refused", true)]
        );
        assert!(recs[1].is_turn());
        let lines = std::fs::read_to_string(&log).unwrap();
        assert_eq!(lines.lines().count(), 3);
        let last: Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
        assert_eq!(last["path"], "api.github.com:443");
        assert_eq!(last["stray"], true);
    }

    #[test]
    fn stops_by_itself_after_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mock = Mock::start(
            dir.path(),
            dir.path(),
            &dir.path().join("l"),
            Duration::ZERO,
        )
        .unwrap();
        // The accept loop exits at its first check; wait for it through stop().
        let mut mock = mock;
        mock.stop();
        assert!(mock.stopped());
    }
}
