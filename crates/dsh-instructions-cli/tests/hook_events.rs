//! The hook adapter on recorded event payloads, without the agents (SPEC
//! R-HOOK-7, last sentence): real processes of the CLI binary fed the
//! payloads of `tests/fixtures/hooks/<agent>/` (R-HOOK-1 answers and
//! robustness, R-HOOK-2 persisted state and concurrency, R-HOOK-3 event
//! mapping). Every child runs under a deadline and is killed past it, so
//! no test can hang.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use camino::Utf8PathBuf;
use rstest::rstest;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dsh-instructions");

/// A bound on one child process, far above what it needs even on a loaded
/// machine: it only turns a hang into a failure (not a speed test). The
/// slowest process here, one of 200 at the real lock bound, ends within
/// the bound plus its own work, 5-10 s with two busy loops beside the
/// suite (decision 0082: hang guards are at least 60 s).
const DEADLINE: Duration = Duration::from_secs(120);

/// The lock wait of processes that race for one session where the test's
/// claim is not about the bound (every file or piece in its own answer):
/// at the real 5 s bound a loaded machine may rightly defer some (that is
/// `two_hundred_concurrent_tool_calls_at_the_real_lock_bound_lose_nothing`'s
/// claim), so they may wait as long as the adapter allows.
const PATIENT: (&str, &str) = (dsh_instructions_hooks::LOCK_WAIT_ENV, "60000");

/// R-REN-2, the normal intro, exact.
const INTRO: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";

/// The opening line of a replacement baseline (R-REN-2): it must never
/// appear, since the adapter's baselines follow a compaction (R-RT-8).
const SUPERSEDE: &str = "This complete workspace instruction baseline supersedes";

const GLOBAL: &str = "GLOBAL-RULES";
const ROOT_V1: &str = "ROOT-RULES v1";
const LIB: &str = "LIB-RULES";

/// Every fixture, by agent (the event kinds of issue #13 item 4).
const FIXTURES: &[(&str, &[&str])] = &[
    (
        "claude",
        &[
            "SessionStart-startup",
            "SessionStart-resume",
            "SessionStart-compact",
            "UserPromptSubmit",
            "PostToolUse-Read",
            "PostToolUse-Write",
            "PostToolUse-Edit",
            "PostToolUse-Grep",
            "PostToolUse-Glob",
            "PreCompact",
            "PostCompact",
            "Stop",
            "SessionEnd",
        ],
    ),
    (
        "codex",
        &[
            "SessionStart-startup",
            "SessionStart-resume",
            "SessionStart-compact",
            "UserPromptSubmit",
            "PostToolUse-Bash",
            "PostToolUse-apply_patch",
            "PreCompact",
            "PostCompact",
            "Stop",
        ],
    ),
    (
        "gemini",
        &[
            "SessionStart-startup",
            "SessionStart-resume",
            "BeforeAgent",
            "AfterTool-read_file",
            "AfterTool-list_directory",
            "AfterTool-read_many_files",
            "BeforeModel",
            "BeforeTool",
            "AfterAgent",
            "PreCompress",
            "SessionEnd",
        ],
    ),
];

fn fixture(agent: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(agent)
        .join(format!("{name}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `value` as the inside of a JSON string.
fn json_escaped(value: &str) -> String {
    let quoted = Value::String(value.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// A fixture with its placeholders filled (see the fixtures' README).
fn fill(template: &str, session: &str, cwd: &str, path: &str) -> String {
    template
        .replace("{{SESSION}}", &json_escaped(session))
        .replace("{{CWD}}", &json_escaped(cwd))
        .replace("{{PATH}}", &json_escaped(path))
}

/// What one invocation printed.
#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    /// Exit 0, nothing on stderr (R-HOOK-1: the agent never sees a failure).
    fn assert_clean(&self) {
        assert_eq!(self.code, Some(0), "{self:?}");
        assert_eq!(self.stderr, "", "{self:?}");
    }

    /// Asserts the answer is exactly `{}` (R-HOOK-1).
    fn assert_nothing(&self) {
        self.assert_clean();
        assert_eq!(self.stdout.trim_end(), "{}", "{self:?}");
    }

    /// The `additionalContext` of an answer for `event`, which must carry
    /// one in the shape all three agents read (harness README).
    fn context(&self, event: &str) -> String {
        self.assert_clean();
        let v: Value = serde_json::from_str(self.stdout.trim_end())
            .unwrap_or_else(|e| panic!("answer is not JSON ({e}): {self:?}"));
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["hookEventName"], event, "{self:?}");
        assert_eq!(v.as_object().map(serde_json::Map::len), Some(1), "{self:?}");
        out["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("no additionalContext: {self:?}"))
            .to_owned()
    }
}

impl Out {
    /// The texts of the `llm_request.messages` of a Gemini CLI `BeforeModel`
    /// answer (R-HOOK-9).
    fn request(&self, event: &str) -> Vec<String> {
        self.assert_clean();
        let v: Value = serde_json::from_str(self.stdout.trim_end())
            .unwrap_or_else(|e| panic!("answer is not JSON ({e}): {self:?}"));
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["hookEventName"], event, "{self:?}");
        out["llm_request"]["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("no messages: {self:?}"))
            .iter()
            .map(|m| {
                assert_eq!(m["role"], "user", "{m}");
                m["content"].as_str().expect("text content").to_owned()
            })
            .collect()
    }
}

/// A hook process still running.
struct Running {
    child: Child,
    stdin: Option<JoinHandle<()>>,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
    started: Instant,
}

impl Running {
    /// Waits for the process, killing it past [`DEADLINE`] (then fails).
    fn finish(mut self) -> Out {
        loop {
            match self.child.try_wait().expect("try_wait") {
                Some(_) => break,
                None if self.started.elapsed() > DEADLINE => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("hook did not finish within {DEADLINE:?}");
                }
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        let status = self.child.wait().expect("wait");
        if let Some(w) = self.stdin.take() {
            w.join().expect("stdin writer");
        }
        Out {
            code: status.code(),
            stdout: String::from_utf8_lossy(&self.stdout.join().expect("stdout")).into_owned(),
            stderr: String::from_utf8_lossy(&self.stderr.join().expect("stderr")).into_owned(),
        }
    }

    /// Kills the process (SIGKILL on Unix) and reaps it; it must still be
    /// running.
    /// Waits until the process has `file` open (Linux: a `/proc/<pid>/fd`
    /// entry links to it). An observable state, polled with a short backoff
    /// and bounded by [`DEADLINE`] only as a hang guard; fails if the process
    /// ends first.
    fn wait_until_open(&mut self, file: &Path) {
        let fds = PathBuf::from(format!("/proc/{}/fd", self.child.id()));
        loop {
            let open = std::fs::read_dir(&fds).is_ok_and(|dir| {
                dir.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == file))
            });
            if open {
                return;
            }
            assert!(
                self.child.try_wait().expect("try_wait").is_none(),
                "the process ended before opening {}",
                file.display()
            );
            assert!(
                self.started.elapsed() < DEADLINE,
                "the process did not open {} within {DEADLINE:?}",
                file.display()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn kill(mut self) {
        assert!(
            self.child.try_wait().expect("try_wait").is_none(),
            "the process ended before the kill"
        );
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
        if let Some(w) = self.stdin.take() {
            let _ = w.join();
        }
    }
}

/// A temporary machine: `home/` (the OS home, with the user-global
/// `~/.dsh/AGENTS.md`, and the DSH home `~/.dsh` holding `hooks/`) and a
/// git workspace `ws/` with a root `AGENTS.md` and `pkg/lib/AGENTS.md`
/// two levels below it.
struct Tree {
    tmp: tempfile::TempDir,
}

/// The directory this binary's other trees are made in, made once: a tree
/// made straight in the system's temporary directory changes that
/// directory's stamp, and every directory above a project is a dependency
/// of the quiet memo (an instruction file may appear there, R-HOOK-8), so
/// the memo test, running beside the others, would rarely see it still.
fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join("dsh-hook-events-tests");
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

/// What the stamps of the directories above `dir` (up to `/`) are now:
/// device, inode, mode, size, modification and change times. The quiet
/// memo depends on them (R-HOOK-8) and no test here changes them, so a
/// difference says that something else on the machine did.
fn stamps_above(dir: &Path) -> Vec<Option<[i64; 8]>> {
    use std::os::unix::fs::MetadataExt as _;
    dir.ancestors()
        .skip(1)
        .map(|d| {
            std::fs::metadata(d).ok().map(|m| {
                [
                    m.dev().cast_signed(),
                    m.ino().cast_signed(),
                    i64::from(m.mode()),
                    m.size().cast_signed(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                ]
            })
        })
        .collect()
}

impl Tree {
    fn new() -> Self {
        Self::made(tempfile::tempdir_in(scratch()).expect("tempdir"))
    }

    /// A tree in a temporary directory below `base`.
    fn new_in(base: &Path) -> Self {
        Self::made(tempfile::tempdir_in(base).expect("tempdir"))
    }

    fn made(tmp: tempfile::TempDir) -> Self {
        let t = Self { tmp };
        std::fs::create_dir_all(t.path("ws/.git")).expect("mkdir");
        t.write("home/.dsh/AGENTS.md", GLOBAL);
        t.write("ws/AGENTS.md", ROOT_V1);
        t.write("ws/pkg/lib/AGENTS.md", LIB);
        t.write("ws/pkg/lib/src/main.rs", "fn main() {}\n");
        t
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn ws(&self) -> String {
        self.path("ws")
            .to_str()
            .expect("utf-8 temp path")
            .to_owned()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
    }

    fn agent_dir(&self, agent: &str) -> PathBuf {
        self.path("home/.dsh/hooks").join(agent)
    }

    /// The agent's session stores, apart from its `config.json` and
    /// `hook.log` (R-HOOK-10).
    fn sessions_dir(&self, agent: &str) -> PathBuf {
        self.agent_dir(agent).join("sessions")
    }

    fn session_log(&self, agent: &str, session: &str) -> PathBuf {
        self.sessions_dir(agent).join(session).join("session.jsonl")
    }

    fn log_bytes(&self, agent: &str, session: &str) -> Vec<u8> {
        std::fs::read(self.session_log(agent, session)).unwrap_or_default()
    }

    /// The lines of the adapter's diagnostic log.
    fn hook_log(&self, agent: &str) -> Vec<String> {
        std::fs::read_to_string(self.agent_dir(agent).join("hook.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Starts `dsh-instructions <args>` with `input` on stdin, `HOME` set
    /// to the tree's home and the DSH home left to its default `~/.dsh`.
    fn spawn(&self, args: &[&str], input: Vec<u8>) -> Running {
        self.spawn_env(args, input, &[])
    }

    /// [`Tree::spawn`] with extra environment variables.
    fn spawn_env(&self, args: &[&str], input: Vec<u8>, envs: &[(&str, &str)]) -> Running {
        let mut child = Command::new(BIN)
            .args(args)
            // The adapter's own bound unless a test sets one.
            .env_remove(dsh_instructions_hooks::LOCK_WAIT_ENV)
            .envs(envs.iter().copied())
            .current_dir(self.path("ws"))
            .env("HOME", self.path("home"))
            .env_remove("DSH_HOME")
            .env_remove("CODEX_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the CLI");
        let mut stdin = child.stdin.take().expect("stdin");
        // A child that stops reading early (oversized input) closes the
        // pipe: the write error is expected then, not a failure.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        Running {
            child,
            stdin: Some(writer),
            stdout: std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = out.read_to_end(&mut b);
                b
            }),
            stderr: std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = err.read_to_end(&mut b);
                b
            }),
            started: Instant::now(),
        }
    }

    fn hook_raw(&self, agent: &str, input: &[u8]) -> Out {
        self.spawn(&["hook", "--agent", agent], input.to_vec())
            .finish()
    }

    fn start_event(&self, agent: &str, fixture_name: &str, session: &str, path: &str) -> Running {
        self.start_event_env(agent, fixture_name, session, path, &[])
    }

    /// [`Tree::start_event`] with extra environment variables.
    fn start_event_env(
        &self,
        agent: &str,
        fixture_name: &str,
        session: &str,
        path: &str,
        envs: &[(&str, &str)],
    ) -> Running {
        let input = fill(&fixture(agent, fixture_name), session, &self.ws(), path);
        self.spawn_env(&["hook", "--agent", agent], input.into_bytes(), envs)
    }

    /// Runs one fixture event of `agent` for `session`.
    fn event(&self, agent: &str, fixture_name: &str, session: &str, path: &str) -> Out {
        self.start_event(agent, fixture_name, session, path)
            .finish()
    }

    /// Asserts an event takes no context: `{}`, and the session log is
    /// byte for byte what it was (R-HOOK-1, R-HOOK-2: the log records
    /// exactly what the model was given).
    fn assert_no_context(&self, agent: &str, fixture_name: &str, session: &str) {
        let before = self.log_bytes(agent, session);
        self.event(agent, fixture_name, session, "pkg/lib/src/main.rs")
            .assert_nothing();
        assert_eq!(
            self.log_bytes(agent, session),
            before,
            "{agent} {fixture_name} appended to the session log"
        );
    }

    /// The events of the session log, checked to need no repair (R-LOG-2):
    /// the file ends with a newline (no torn tail), the header comes first,
    /// and every later line is an event with a strictly increasing `seq`
    /// (nothing skipped).
    fn checked_log(&self, agent: &str, session: &str) -> Vec<Value> {
        let path = self.session_log(agent, session);
        let text = String::from_utf8(self.log_bytes(agent, session)).expect("utf-8 log");
        assert!(text.ends_with('\n'), "torn tail in {}", path.display());
        let mut lines = text.lines();
        let header: Value = serde_json::from_str(lines.next().expect("header")).expect("header");
        assert_eq!(header["id"], session, "{header}");
        let mut last = 0;
        lines
            .map(|l| {
                let v: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("unreadable line in {}: {e}: {l}", path.display()));
                let seq = v["seq"].as_u64().expect("seq");
                assert!(seq > last, "seq {seq} after {last}");
                last = seq;
                assert!(v["type"].is_string(), "{l}");
                v
            })
            .collect()
    }

    /// Takes the session lock in this process, as a peer invocation would
    /// (R-LOG-4); it lasts until the returned value is dropped.
    fn hold_lock(&self, agent: &str, session: &str) -> impl std::fmt::Debug {
        let dir = Utf8PathBuf::from_path_buf(self.sessions_dir(agent)).expect("utf-8");
        let (held, _report) = dsh_instructions_session::SessionStore::new(dir)
            .open(session)
            .expect("take the session lock");
        held
    }
}

/// The message events of a session log (`type: message`), after
/// [`Tree::checked_log`].
fn messages(t: &Tree, agent: &str, session: &str) -> Vec<Value> {
    t.checked_log(agent, session)
        .into_iter()
        .filter(|v| v["type"] == "message")
        .collect()
}

/// The complete baseline the agents get (R-REN-1/2): wrapper, normal
/// intro, the user-global file, then the root-to-cwd chain.
fn baseline(root: &str) -> String {
    format!(
        "<system-reminder>\n{INTRO}\n\nInstructions from: ~/.dsh/AGENTS.md\n\n{GLOBAL}\n\n\
         Instructions from: AGENTS.md\n\n{root}\n</system-reminder>"
    )
}

/// What the agent's answer shows of a composed `text` (decision 0019):
/// Claude Code wraps hook context in its own `<system-reminder>` and
/// HTML-escapes ours, so its answer carries the text without our frame;
/// Codex and Gemini CLI get it framed.
fn shown(agent: &str, text: &str) -> String {
    if agent == "claude" {
        text.strip_prefix("<system-reminder>\n")
            .and_then(|t| t.strip_suffix("\n</system-reminder>"))
            .unwrap_or_else(|| panic!("not one frame: {text}"))
            .to_owned()
    } else {
        text.to_owned()
    }
}

/// A nested file entering after a touch (R-REN-3 `set`).
fn nested(dir: &str, content: &str) -> String {
    format!(
        "<system-reminder>\nAdditional instructions from: {dir}/AGENTS.md\n\nThese instructions \
         apply to work under `{dir}`. Follow them where they apply; more specific instructions \
         take precedence. They do not override system, developer, or direct user \
         instructions.\n\n{content}\n</system-reminder>"
    )
}

/// An edited file (R-REN-3 `replace`).
fn replaced(path: &str, content: &str) -> String {
    format!(
        "<system-reminder>\nUpdated instructions from: {path}\n\nThis file changed after it was \
         loaded. Use the content below instead of the instructions previously loaded from \
         it.\n\n{content}\n</system-reminder>"
    )
}

#[test]
fn every_fixture_is_an_object_naming_its_event_with_the_common_fields() {
    for (agent, names) in FIXTURES {
        for name in *names {
            let text = fill(&fixture(agent, name), "s-1", "/w", "a\"b\\c\nd");
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{agent}/{name} after filling: {e}"));
            let event = name.split('-').next().expect("event part");
            assert_eq!(v["hook_event_name"], event, "{agent}/{name}");
            assert_eq!(v["session_id"], "s-1", "{agent}/{name}");
            assert_eq!(v["cwd"], "/w", "{agent}/{name}");
            assert!(v["transcript_path"].is_string(), "{agent}/{name}");
            if let Some(source) = name.strip_prefix("SessionStart-") {
                assert_eq!(v["source"], source, "{agent}/{name}");
            }
        }
    }
}

/// R-HOOK-3 for Claude Code and Codex: baseline at start, a touch deep below
/// cwd, an edit surfacing at the next prompt, offline edits on resume as a
/// replace only, and a complete baseline after compaction; events that take
/// no context answer `{}` and leave the log alone.
#[rstest]
#[case::claude("claude", "PostToolUse-Read", true)]
#[case::codex("codex", "PostToolUse-apply_patch", false)]
fn start_touch_edit_resume_compact(
    #[case] agent: &str,
    #[case] touch: &str,
    #[case] absolute_touch: bool,
) {
    let t = Tree::new();
    let s = "9f0c2e7a-1b2c-4d5e-8f90-0123456789ab";

    let start = t.event(agent, "SessionStart-startup", s, "");
    assert_eq!(
        start.context("SessionStart"),
        shown(agent, &baseline(ROOT_V1))
    );

    let deep = if absolute_touch {
        format!("{}/pkg/lib/src/main.rs", t.ws())
    } else {
        "pkg/lib/src/main.rs".to_owned()
    };
    let touched = t.event(agent, touch, s, &deep);
    assert_eq!(
        touched.context("PostToolUse"),
        shown(agent, &nested("pkg/lib", LIB))
    );

    // Touching the same file again gives nothing new (R-HOOK-2: nothing
    // twice), and it is not an error.
    t.event(agent, touch, s, &deep).assert_nothing();

    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    let prompt = t.event(agent, "UserPromptSubmit", s, "");
    assert_eq!(
        prompt.context("UserPromptSubmit"),
        shown(agent, &replaced("AGENTS.md", "ROOT-RULES v2"))
    );

    let quiet: &[&str] = if agent == "claude" {
        &["Stop", "PreCompact", "PostCompact", "SessionEnd"]
    } else {
        &["Stop", "PreCompact", "PostCompact", "PostToolUse-Bash"]
    };
    for name in quiet {
        t.assert_no_context(agent, name, s);
    }

    // Edited while the agent was not running: the resume gives the change
    // only, never a second baseline (R-RT-7).
    t.write("ws/AGENTS.md", "ROOT-RULES v3");
    let resume = t
        .event(agent, "SessionStart-resume", s, "")
        .context("SessionStart");
    assert_eq!(
        resume,
        shown(agent, &replaced("AGENTS.md", "ROOT-RULES v3"))
    );
    assert!(!resume.contains(INTRO));

    // Compaction hides everything given so far: a complete baseline again,
    // with the normal intro (R-RT-8).
    let compact = t
        .event(agent, "SessionStart-compact", s, "")
        .context("SessionStart");
    assert_eq!(compact, shown(agent, &baseline("ROOT-RULES v3")));
    assert!(!compact.contains(SUPERSEDE));
    // The nested file went with the compacted history: the next touch
    // gives it again.
    let retouched = t.event(agent, touch, s, &deep);
    assert_eq!(
        retouched.context("PostToolUse"),
        shown(agent, &nested("pkg/lib", LIB))
    );

    // The log holds exactly what the model was given, in order.
    let given: Vec<String> = messages(&t, agent, s)
        .iter()
        .map(|m| m["parts"][0].as_str().expect("text part").to_owned())
        .collect();
    assert_eq!(
        given,
        [
            baseline(ROOT_V1),
            nested("pkg/lib", LIB),
            replaced("AGENTS.md", "ROOT-RULES v2"),
            replaced("AGENTS.md", "ROOT-RULES v3"),
            baseline("ROOT-RULES v3"),
            nested("pkg/lib", LIB),
        ]
    );
}

/// Decision 0037: each event leaves what it proved about the known
/// directories in `dirs.stamps`, and the next event's process trusts those
/// facts only where the filesystem still shows them — so an in-place edit
/// and a file created in a known directory both still surface, and a stale
/// or garbled memory changes nothing the model gets.
#[rstest]
#[case::claude("claude", "PostToolUse-Read")]
#[case::codex("codex", "PostToolUse-apply_patch")]
fn remembered_directories_still_show_every_change(#[case] agent: &str, #[case] touch: &str) {
    let t = Tree::new();
    let s = "stamps";
    // Stamps are trusted only once the tree's timestamps are older than the
    // racy-timestamp margin (2 s): without this wait the memory would stay
    // empty and the remembered path would go untested. The wait decides no
    // outcome; every assertion below holds with or without the memory.
    std::thread::sleep(Duration::from_millis(2_200));
    t.event(agent, "SessionStart-startup", s, "")
        .context("SessionStart");
    let deep = format!("{}/pkg/lib/src/main.rs", t.ws());
    t.event(agent, touch, s, &deep).context("PostToolUse");
    t.event(agent, "UserPromptSubmit", s, "").assert_nothing();
    let stamps = t.sessions_dir(agent).join(s).join("dirs.stamps");
    let text = std::fs::read_to_string(&stamps).expect("the event left its stamps");
    let lib = format!(" {}/pkg/lib", t.ws());
    let line = text
        .lines()
        .find(|l| l.starts_with("D ") && l.ends_with(&lib))
        .unwrap_or_else(|| panic!("no stamp of pkg/lib in:\n{text}"));
    let absent = line.split(' ').nth(8).expect("absent bits");
    assert_ne!(absent, "0", "pkg/lib's absent names are remembered: {line}");

    // Edited in place: the directory's stamp does not move, the file's
    // version does.
    t.write("ws/pkg/lib/AGENTS.md", "LIB-RULES v2");
    assert_eq!(
        t.event(agent, "UserPromptSubmit", s, "")
            .context("UserPromptSubmit"),
        shown(agent, &replaced("pkg/lib/AGENTS.md", "LIB-RULES v2"))
    );
    // A name remembered as absent appears: the directory's stamp moves.
    t.write("ws/pkg/lib/AGENTS.local.md", "LIB-LOCAL");
    let overlay = t
        .event(agent, "UserPromptSubmit", s, "")
        .context("UserPromptSubmit");
    assert!(overlay.contains("LIB-LOCAL"), "{overlay}");
    // A garbled memory is an empty one: the next event is still right.
    std::fs::write(&stamps, "dsh-dir-stamps 1\nD zz\n").expect("garble");
    t.write("ws/pkg/lib/AGENTS.md", "LIB-RULES v3");
    assert_eq!(
        t.event(agent, "UserPromptSubmit", s, "")
            .context("UserPromptSubmit"),
        shown(agent, &replaced("pkg/lib/AGENTS.md", "LIB-RULES v3"))
    );
}

/// Each event starts from the fold of the visible surface the last one kept
/// (`view.json`, issue 18 item 6): an in-place edit of a file the model holds
/// from an earlier event is still a `replace`, and a garbled fold is a
/// missing one (the surface is folded whole and the fold kept anew).
#[rstest]
#[case::claude("claude", "PostToolUse-Read")]
#[case::codex("codex", "PostToolUse-apply_patch")]
fn a_kept_view_changes_nothing_the_model_gets(#[case] agent: &str, #[case] touch: &str) {
    let t = Tree::new();
    let s = "kept";
    t.event(agent, "SessionStart-startup", s, "")
        .context("SessionStart");
    let deep = format!("{}/pkg/lib/src/main.rs", t.ws());
    assert!(
        t.event(agent, touch, s, &deep)
            .context("PostToolUse")
            .contains("LIB-RULES"),
        "the nested file enters with the touch"
    );
    let view = t.sessions_dir(agent).join(s).join("view.json");
    let kept = |why: &str| {
        let text = std::fs::read_to_string(&view).unwrap_or_else(|e| panic!("{why}: {e}"));
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["format"], "dsh-session-view", "{why}: {text}");
        v["len"].as_u64().expect("len")
    };
    // A fold covers what its composition read: the message that event
    // delivered is folded by the next one.
    assert_eq!(kept("after the touch"), 1, "the baseline");
    t.event(agent, "UserPromptSubmit", s, "").assert_nothing();
    assert_eq!(kept("after a prompt"), 2, "baseline and nested message");
    // This event starts from a fold that holds pkg/lib's file.
    t.write("ws/pkg/lib/AGENTS.md", "LIB-RULES v2");
    assert_eq!(
        t.event(agent, "UserPromptSubmit", s, "")
            .context("UserPromptSubmit"),
        shown(agent, &replaced("pkg/lib/AGENTS.md", "LIB-RULES v2"))
    );
    std::fs::write(&view, "{\"format\":\"dsh-session-view\",").expect("garble");
    t.write("ws/pkg/lib/AGENTS.md", "LIB-RULES v3");
    assert_eq!(
        t.event(agent, "UserPromptSubmit", s, "")
            .context("UserPromptSubmit"),
        shown(agent, &replaced("pkg/lib/AGENTS.md", "LIB-RULES v3"))
    );
    assert_eq!(kept("kept anew after a garbled one"), 3);
}

/// The agent edits instruction files itself (Claude Code `Edit`, Codex
/// `apply_patch`): each change enters with that tool's result (R-HOOK-3,
/// R-RT-3) — replace, set of a new file, remove of a deleted one.
#[rstest]
#[case::claude("claude", "PostToolUse-Edit", true)]
#[case::codex("codex", "PostToolUse-apply_patch", false)]
fn edits_of_instruction_files_enter_with_the_tool_result(
    #[case] agent: &str,
    #[case] tool: &str,
    #[case] absolute: bool,
) {
    let t = Tree::new();
    let arg = |rel: &str| {
        if absolute {
            format!("{}/{rel}", t.ws())
        } else {
            rel.to_owned()
        }
    };
    t.event(agent, "SessionStart-startup", "s", "")
        .context("SessionStart");
    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    let edit = t.event(agent, tool, "s", &arg("AGENTS.md"));
    assert_eq!(
        edit.context("PostToolUse"),
        shown(agent, &replaced("AGENTS.md", "ROOT-RULES v2"))
    );
    t.write("ws/made/AGENTS.md", "MADE-RULES");
    let made = t.event(agent, tool, "s", &arg("made/AGENTS.md"));
    assert_eq!(
        made.context("PostToolUse"),
        shown(agent, &nested("made", "MADE-RULES"))
    );
    std::fs::remove_file(t.path("ws/made/AGENTS.md")).expect("rm");
    let gone = t.event(agent, tool, "s", &arg("made/AGENTS.md"));
    assert_eq!(
        gone.context("PostToolUse"),
        shown(
            agent,
            "<system-reminder>\nInstructions removed: made/AGENTS.md\n\nThe instructions \
             previously loaded from this file no longer apply.\n</system-reminder>"
        )
    );
    // Nothing left to say: the next prompt gives nothing.
    t.event(agent, "UserPromptSubmit", "s", "").assert_nothing();
}

/// Claude Code's other path tools touch too (R-HOOK-3): Write and Edit a
/// file, Grep and Glob a directory (touching down to that directory).
#[rstest]
#[case::write("PostToolUse-Write", "t/write/new.rs")]
#[case::edit("PostToolUse-Edit", "t/edit/old.rs")]
#[case::grep("PostToolUse-Grep", "t/grep")]
#[case::glob("PostToolUse-Glob", "t/glob")]
fn claude_path_tools_touch(#[case] fixture_name: &str, #[case] rel: &str) {
    let t = Tree::new();
    let dir = if fixture_name.ends_with("Grep") || fixture_name.ends_with("Glob") {
        rel.to_owned()
    } else {
        rel.rsplit_once('/').expect("a file path").0.to_owned()
    };
    t.write(&format!("ws/{dir}/AGENTS.md"), "TOOL-RULES");
    t.event("claude", "SessionStart-startup", "s", "")
        .context("SessionStart");
    let out = t.event("claude", fixture_name, "s", &format!("{}/{rel}", t.ws()));
    assert_eq!(
        out.context("PostToolUse"),
        shown("claude", &nested(&dir, "TOOL-RULES"))
    );
}

/// Codex reads through its shell: a `Bash` call is forwarded as a shell
/// touch (R-DISC-10, contract 1) with the event's cwd as its workdir, and
/// the nested file arrives once with the tool result.
#[rstest]
#[case::cat("pkg/lib/src/main.rs")]
#[case::cd_then_cat("/dev/null && cd pkg && cat lib/src/main.rs")]
fn codex_shell_reads_touch(#[case] arg: &str) {
    let t = Tree::new();
    t.event("codex", "SessionStart-startup", "s", "")
        .context("SessionStart");
    let out = t.event("codex", "PostToolUse-Bash", "s", arg);
    assert_eq!(out.context("PostToolUse"), nested("pkg/lib", LIB));
    t.event("codex", "PostToolUse-Bash", "s", arg)
        .assert_nothing();
}

/// Gemini CLI through `BeforeModel` (R-HOOK-9, decision 0020): session
/// start, prompts and tools answer `{}` (tools only record their touches);
/// every model request gets the current composition — the baseline and
/// every nested file touched so far, current versions — once, prefixed to
/// the first user message and ended with a blank line; nothing is kept in
/// Gemini's history, so nothing is given twice, and the session log does
/// not grow per request.
#[test]
fn gemini_every_request_carries_the_current_composition_once() {
    let t = Tree::new();
    let s = "83c8193c-ac79-4044-83f5-b9b2d829734f";
    t.event("gemini", "SessionStart-startup", s, "")
        .assert_nothing();
    t.event("gemini", "BeforeAgent", s, "").assert_nothing();

    let first = t.event("gemini", "BeforeModel", s, "PROMPT-1");
    assert_eq!(
        first.request("BeforeModel"),
        [format!("{}\n\nPROMPT-1", baseline(ROOT_V1))],
        "only the first user message, prefixed"
    );
    let log_before = t.log_bytes("gemini", s);
    let again = t.event("gemini", "BeforeModel", s, "PROMPT-1");
    assert_eq!(
        again.request("BeforeModel"),
        first.request("BeforeModel"),
        "the same composition on the next request: nothing persisted, nothing twice"
    );
    assert_eq!(
        t.log_bytes("gemini", s),
        log_before,
        "the log grows not per request"
    );

    // Relative paths, as Gemini CLI passes them (harness fixture).
    t.event("gemini", "AfterTool-read_file", s, "pkg/lib/src/main.rs")
        .assert_nothing();
    t.write("ws/pkg/listed/AGENTS.md", "LISTED-RULES");
    t.event("gemini", "AfterTool-list_directory", s, "pkg/listed")
        .assert_nothing();
    for name in ["BeforeTool", "AfterAgent", "PreCompress", "SessionEnd"] {
        t.assert_no_context("gemini", name, s);
    }
    let with_nested = t.event("gemini", "BeforeModel", s, "PROMPT-2");
    let text = &with_nested.request("BeforeModel")[0];
    for piece in [
        baseline(ROOT_V1),
        "Additional instructions from: pkg/lib/AGENTS.md\n".to_owned(),
        format!("\n\n{LIB}\n"),
        "Additional instructions from: pkg/listed/AGENTS.md\n".to_owned(),
        "\n\nLISTED-RULES\n".to_owned(),
    ] {
        assert_eq!(text.matches(&piece).count(), 1, "{piece:?} once in {text}");
    }
    assert!(text.ends_with("\n\nPROMPT-2"), "{text}");

    // Edited, resumed: the next request holds the current version only —
    // no update notice, no old text, no second copy.
    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    t.assert_no_context("gemini", "SessionStart-resume", s);
    let edited = t.event("gemini", "BeforeModel", s, "PROMPT-3");
    let text = &edited.request("BeforeModel")[0];
    assert_eq!(text.matches("ROOT-RULES v2").count(), 1, "{text}");
    assert!(!text.contains(ROOT_V1), "{text}");
    assert!(!text.contains("Updated instructions"), "{text}");
    assert_eq!(text.matches(LIB).count(), 1, "{text}");
    t.checked_log("gemini", s);
}

/// R-HOOK-9: `BeforeModel`'s stdin carries the whole text history and grows
/// with the session; a request far beyond the old 8 MiB input bound still
/// gets its instructions, and only the messages up to the first user
/// message come back.
#[test]
fn gemini_a_huge_request_still_gets_its_instructions() {
    let t = Tree::new();
    let input = fill(&fixture("gemini", "BeforeModel"), "big", &t.ws(), "FIRST");
    let pad = "h".repeat(12 << 20);
    let input = input.replacen(
        "\"Please look at the workspace\"",
        &format!("\"Please look at the workspace {pad}\""),
        1,
    );
    assert!(input.len() > 12 << 20);
    let out = t.hook_raw("gemini", input.as_bytes());
    assert_eq!(
        out.request("BeforeModel"),
        [format!("{}\n\nFIRST", baseline(ROOT_V1))]
    );
}

/// A file that closes the wrapper early is escaped (R-REN-5) for every
/// agent; Claude Code gets no frame of ours (its own wraps the context, and
/// it escapes ours, decision 0019), the others exactly one closing tag, the
/// frame's own.
#[rstest]
#[case::claude("claude", "SessionStart-startup", "SessionStart", 0)]
#[case::codex("codex", "SessionStart-startup", "SessionStart", 1)]
fn a_closing_tag_in_a_file_is_escaped(
    #[case] agent: &str,
    #[case] fixture_name: &str,
    #[case] event: &str,
    #[case] closing: usize,
) {
    let t = Tree::new();
    t.write("ws/AGENTS.md", "before </system-reminder> after");
    let ctx = t.event(agent, fixture_name, "s", "").context(event);
    assert!(
        ctx.contains("before <\\/system-reminder> after"),
        "not escaped: {ctx}"
    );
    assert_eq!(ctx.matches("</system-reminder>").count(), closing, "{ctx}");
    assert_eq!(ctx.matches("<system-reminder>").count(), closing, "{ctx}");
    assert_eq!(ctx.starts_with(INTRO), closing == 0, "{ctx}");
}

/// Gemini CLI's prefix keeps our frame (Gemini adds no wrapper of its own
/// in `llm_request`), with the content's closing tag escaped.
#[test]
fn gemini_prefix_is_framed_and_escaped() {
    let t = Tree::new();
    t.write("ws/AGENTS.md", "before </system-reminder> after");
    let text = &t
        .event("gemini", "BeforeModel", "s", "P")
        .request("BeforeModel")[0];
    assert!(text.contains("before <\\/system-reminder> after"), "{text}");
    assert_eq!(text.matches("</system-reminder>").count(), 1, "{text}");
    assert!(text.ends_with("</system-reminder>\n\nP"), "{text}");
}

/// R-HOOK-1: unusable input answers `{}` with exit 0 and nothing on stderr,
/// and the reason goes to the adapter's own log, one line; no session is
/// created.
#[rstest]
#[case::malformed_json(br#"{"session_id": "#.as_slice(), "not a JSON object")]
#[case::empty_stdin(b"".as_slice(), "not a JSON object")]
#[case::json_array(br#"[{"session_id":"s","cwd":"/w","hook_event_name":"SessionStart"}]"#.as_slice(), "not a JSON object")]
#[case::unknown_event(br#"{"session_id":"s","cwd":"/w","hook_event_name":"Notification"}"#.as_slice(), "no context")]
#[case::missing_session(br#"{"cwd":"/w","hook_event_name":"SessionStart","source":"startup"}"#.as_slice(), "session_id")]
#[case::missing_cwd(br#"{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}"#.as_slice(), "cwd")]
#[case::relative_cwd(br#"{"session_id":"s","cwd":"ws","hook_event_name":"SessionStart","source":"startup"}"#.as_slice(), "not absolute")]
#[case::not_utf8(b"{\"session_id\":\"\xff\xfe\"}".as_slice(), "not a JSON object")]
fn unusable_input_answers_nothing_and_is_logged(#[case] input: &[u8], #[case] why: &str) {
    let t = Tree::new();
    t.hook_raw("claude", input).assert_nothing();
    let log = t.hook_log("claude");
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains(why), "{log:?} should say {why:?}");
    let sessions: Vec<_> = std::fs::read_dir(t.agent_dir("claude"))
        .expect("agent dir")
        .map(|e| e.expect("entry").file_name())
        .filter(|n| n != "hook.log")
        .collect();
    assert!(sessions.is_empty(), "{sessions:?}");
}

/// An event over the bound (64 MiB) is not read to its end, parsed or
/// buffered whole: `{}`, a log line, and the process ends although the
/// writer still has data.
#[test]
fn an_oversized_event_is_refused_without_hanging() {
    let t = Tree::new();
    let head = fill(&fixture("claude", "UserPromptSubmit"), "s", &t.ws(), "");
    let pad = "x".repeat(65 << 20);
    let input = head.replacen("Please look", &format!("Please look {pad}"), 1);
    assert!(input.len() > dsh_instructions_hooks::event::MAX_EVENT_BYTES);
    serde_json::from_str::<Value>(&input).expect("still a valid event, only too big");
    t.hook_raw("claude", input.as_bytes()).assert_nothing();
    let log = t.hook_log("claude");
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains("larger than"), "{log:?}");
    assert!(!t.session_log("claude", "s").exists());
}

/// R-HOOK-2: a session id that is not a plain path component is stored
/// under `id-<hex digest>/`, never where the id points.
#[rstest]
#[case::dot_dot("../../x")]
#[case::slash("a/b")]
#[case::long(&"s".repeat(300))]
#[case::absolute("/etc/passwd")]
#[case::dot("..")]
fn a_session_id_with_path_characters_stays_in_the_store(#[case] id: &str) {
    let t = Tree::new();
    let out = t.event("claude", "SessionStart-startup", id, "");
    assert_eq!(
        out.context("SessionStart"),
        shown("claude", &baseline(ROOT_V1))
    );
    let entries: Vec<String> = std::fs::read_dir(t.sessions_dir("claude"))
        .expect("sessions dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let hex = entries[0].strip_prefix("id-").expect("an id- directory");
    assert!(
        hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{hex}"
    );
    assert!(t.session_log("claude", &entries[0]).exists());
    // Nothing anywhere else: the temp root and the DSH home hold only what
    // the tree made.
    let names = |p: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(t.tmp.path()), ["home", "ws"]);
    assert_eq!(names(&t.path("home")), [".dsh"]);
    assert_eq!(names(&t.path("home/.dsh")), ["AGENTS.md", "hooks"]);
    assert_eq!(names(&t.path("home/.dsh/hooks")), ["claude"]);
    assert_eq!(names(&t.agent_dir("claude")), ["hook.log", "sessions"]);
    // The same id finds the same session again.
    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    let prompt = t.event("claude", "UserPromptSubmit", id, "");
    assert_eq!(
        prompt.context("UserPromptSubmit"),
        shown("claude", &replaced("AGENTS.md", "ROOT-RULES v2"))
    );
}

/// A session id equal to a file the adapter keeps next to the sessions
/// (its configuration, its diagnostic log) must not take that name: the
/// session works, and so do the others and the log afterwards (R-HOOK-1,
/// R-HOOK-2).
#[rstest]
#[case::config("config.json")]
#[case::log("hook.log")]
#[case::old_log("hook.log.1")]
#[case::sessions_dir("sessions")]
#[case::installer_record("install.json")]
fn a_session_id_naming_the_adapters_own_files_breaks_nothing(#[case] id: &str) {
    let t = Tree::new();
    let out = t.event("claude", "SessionStart-startup", id, "");
    assert_eq!(
        out.context("SessionStart"),
        shown("claude", &baseline(ROOT_V1))
    );
    let other = t.event("claude", "SessionStart-startup", "other", "");
    assert_eq!(
        other.context("SessionStart"),
        shown("claude", &baseline(ROOT_V1))
    );
    let dir = t.agent_dir("claude");
    if id != "sessions" {
        assert!(!dir.join(id).is_dir(), "{id} became a session directory");
    }
    // Both sessions have their own store in sessions/, nothing else there.
    let stores: Vec<PathBuf> = std::fs::read_dir(t.sessions_dir("claude"))
        .expect("sessions dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(stores.len(), 2, "{stores:?}");
    assert!(
        stores.iter().all(|p| p.join("session.jsonl").is_file()),
        "{stores:?}"
    );
    assert_eq!(t.hook_log("claude").len(), 2, "{:?}", t.hook_log("claude"));
}

/// A malformed per-agent configuration gives nothing and says why in the
/// log (R-HOOK-1), naming the file.
#[rstest]
#[case::truncated("{\"max_bytes\": ")]
#[case::not_an_object("[]")]
#[case::wrong_type(r#"{"max_bytes": "lots"}"#)]
#[case::tools_not_lists(r#"{"touch_tools": {"Read": "file_path"}}"#)]
fn a_malformed_agent_config_answers_nothing_and_is_logged(#[case] config: &str) {
    let t = Tree::new();
    t.write("home/.dsh/hooks/codex/config.json", config);
    t.event("codex", "SessionStart-startup", "s", "")
        .assert_nothing();
    let log = t.hook_log("codex");
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains("config.json"), "{log:?}");
    assert!(!t.session_log("codex", "s").exists());
}

/// Without `--agent` the event is not understood: `{}`, exit 0.
#[test]
fn no_agent_answers_nothing() {
    let t = Tree::new();
    let input = fill(&fixture("claude", "SessionStart-startup"), "s", &t.ws(), "");
    t.spawn(&["hook"], input.into_bytes())
        .finish()
        .assert_nothing();
    assert!(!t.path("home/.dsh/hooks").exists());
}

/// R-HOOK-2 with R-LOG-4: parallel tool calls of one session, as real
/// processes started together. Each nested file is in exactly one answer —
/// the one whose tool touched it — none twice, none lost, and the log
/// parses with no repair.
#[test]
fn parallel_tool_calls_give_each_file_exactly_once() {
    const ROUNDS: usize = 3;
    const PARALLEL: usize = 20;
    let t = Tree::new();
    let s = "parallel";
    t.event("claude", "SessionStart-startup", s, "")
        .context("SessionStart");
    for round in 0..ROUNDS {
        for i in 0..PARALLEL {
            t.write(
                &format!("ws/par/r{round}/d{i}/AGENTS.md"),
                &format!("PAR-{round}-{i}"),
            );
        }
        let running: Vec<Running> = (0..PARALLEL)
            .map(|i| {
                let file = format!("{}/par/r{round}/d{i}/f.rs", t.ws());
                t.start_event_env("claude", "PostToolUse-Read", s, &file, &[PATIENT])
            })
            .collect();
        let answers: Vec<String> = running
            .into_iter()
            .map(|r| r.finish().context("PostToolUse"))
            .collect();
        for (i, answer) in answers.iter().enumerate() {
            let dir = format!("par/r{round}/d{i}");
            assert_eq!(
                answer,
                &shown("claude", &nested(&dir, &format!("PAR-{round}-{i}")))
            );
            let heading = format!("from: {dir}/AGENTS.md\n");
            let n = answers.iter().filter(|a| a.contains(&heading)).count();
            assert_eq!(n, 1, "{dir} given {n} times");
        }
        assert_eq!(messages(&t, "claude", s).len(), 1 + (round + 1) * PARALLEL);
    }
    // One whole diagnostic line per invocation, none torn by a peer's.
    let log = t.hook_log("claude");
    assert_eq!(log.len(), 1 + ROUNDS * PARALLEL, "{log:#?}");
    for line in &log {
        assert_eq!(line.matches(" session parallel ").count(), 1, "{line}");
        assert!(line.ends_with("ms"), "{line}");
    }
}

/// Two first events of a NEW session at once (the create race): both
/// succeed, and only one of them carries the baseline.
#[test]
fn two_first_events_of_a_new_session_give_one_baseline() {
    let t = Tree::new();
    for d in ["a", "b"] {
        t.write(&format!("ws/race/{d}/AGENTS.md"), &format!("RACE-{d}"));
    }
    for attempt in 0..4 {
        let s = format!("race-{attempt}");
        let running: Vec<Running> = ["a", "b"]
            .iter()
            .map(|d| {
                let file = format!("{}/race/{d}/f.rs", t.ws());
                t.start_event_env("claude", "PostToolUse-Read", &s, &file, &[PATIENT])
            })
            .collect();
        let answers: Vec<String> = running
            .into_iter()
            .map(|r| r.finish().context("PostToolUse"))
            .collect();
        let baselines = answers.iter().filter(|a| a.contains(INTRO)).count();
        assert_eq!(baselines, 1, "{answers:#?}");
        for (d, answer) in ["a", "b"].iter().zip(&answers) {
            assert!(
                answer.contains(&format!("from: race/{d}/AGENTS.md\n")),
                "{answer}"
            );
        }
        let with_baseline = messages(&t, "claude", &s)
            .iter()
            .filter(|m| m["source"]["baseline"] == true)
            .count();
        assert_eq!(with_baseline, 1);
    }
}

/// A writer killed mid-append leaves a line with no newline, a crash may
/// leave a zero-filled block (R-LOG-2): the next invocation repairs the
/// log, answers correctly, and every acknowledged message is still there.
#[rstest]
#[case::unterminated(br#"{"seq":3,"type":"message","role":"user","parts":["<system-rem"#.as_slice())]
#[case::zero_filled(b"\0\0\0\0\0\0\0\0\n".as_slice())]
fn a_torn_append_is_repaired_by_the_next_event(#[case] torn: &[u8]) {
    let t = Tree::new();
    let s = "torn";
    t.event("claude", "SessionStart-startup", s, "")
        .context("SessionStart");
    let deep = format!("{}/pkg/lib/src/main.rs", t.ws());
    t.event("claude", "PostToolUse-Read", s, &deep)
        .context("PostToolUse");
    let acknowledged = t.log_bytes("claude", s);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(t.session_log("claude", s))
        .expect("open log");
    f.write_all(torn).expect("torn write");
    drop(f);

    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    let prompt = t.event("claude", "UserPromptSubmit", s, "");
    assert_eq!(
        prompt.context("UserPromptSubmit"),
        shown("claude", &replaced("AGENTS.md", "ROOT-RULES v2"))
    );
    let after = t.log_bytes("claude", s);
    assert!(
        after.starts_with(&acknowledged),
        "acknowledged bytes changed"
    );
    let given: Vec<Value> = messages(&t, "claude", s)
        .iter()
        .map(|m| m["parts"][0].clone())
        .collect();
    assert_eq!(
        given,
        [
            Value::String(baseline(ROOT_V1)),
            Value::String(nested("pkg/lib", LIB)),
            Value::String(replaced("AGENTS.md", "ROOT-RULES v2")),
        ]
    );
}

/// A real SIGKILL of an invocation waiting for the session lock (held here,
/// in-process): the log is untouched, and the next event gives what the
/// killed one never acknowledged. The kill comes once the child has the
/// session's lock file open — it opens it only to take the lock, which this
/// test holds — so it provably lands during the wait, not before the child
/// got there. Needs `/proc` to see the child's open files.
#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "sees the child waiting through /proc/<pid>/fd"
)]
fn an_invocation_killed_while_waiting_leaves_the_log_untouched() {
    let t = Tree::new();
    let s = "killed";
    t.event("claude", "SessionStart-startup", s, "")
        .context("SessionStart");
    let before = t.log_bytes("claude", s);
    let held = t.hold_lock("claude", s);
    let lock = t
        .session_log("claude", s)
        .with_file_name(dsh_session_log::LOCK_FILE_NAME);
    let deep = format!("{}/pkg/lib/src/main.rs", t.ws());
    let mut child = t.start_event("claude", "PostToolUse-Read", s, &deep);
    child.wait_until_open(&lock.canonicalize().expect("lock file"));
    child.kill();
    drop(held);
    assert_eq!(t.log_bytes("claude", s), before);
    assert_eq!(
        t.hook_log("claude").len(),
        1,
        "the killed one never got to log"
    );

    let again = t.event("claude", "PostToolUse-Read", s, &deep);
    assert_eq!(
        again.context("PostToolUse"),
        shown("claude", &nested("pkg/lib", LIB))
    );
    t.checked_log("claude", s);
}

/// A lock held past the adapter's bound (LOCK_WAIT, 5 s): the invocation
/// gives up with `{}` (inside the agents' 10 s hook timeout; the deadline
/// here is only a hang guard) and logs the session as busy (R-HOOK-1).
#[test]
fn a_lock_held_too_long_answers_nothing_and_logs_busy() {
    let t = Tree::new();
    let s = "busy";
    t.event("codex", "SessionStart-startup", s, "")
        .context("SessionStart");
    let before = t.log_bytes("codex", s);
    let held = t.hold_lock("codex", s);
    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    let out = t.event("codex", "UserPromptSubmit", s, "");
    drop(held);
    out.assert_nothing();
    // Observable state, not the test's clock: the adapter's own log line
    // says it gave up on the held lock (the lock loop only reports a
    // timeout once its bound has passed).
    let log = t.hook_log("codex");
    assert!(
        log.last()
            .is_some_and(|l| l.contains("session is busy") && l.contains("held its lock")),
        "{log:?}"
    );
    // The wait the adapter reports (its `{:.1?}` of the lock loop's time)
    // reached the bound: it did not give up early.
    let line = log.last().map_or("", String::as_str);
    let reported = line
        .split_once("held its lock ")
        .and_then(|(_, rest)| rest.split_once(", longer"))
        .and_then(|(held_for, _)| held_for.rsplit_once(" for "))
        .map(|(_, waited)| waited)
        .unwrap_or_default();
    let secs = reported
        .strip_suffix('s')
        .filter(|v| v.ends_with(|c: char| c.is_ascii_digit()))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(
        secs.is_some_and(|w| w >= dsh_instructions_hooks::LOCK_WAIT.as_secs_f64()),
        "reported wait {reported:?} in {line:?}"
    );
    // The point of the bound: it is below the agents' own hook timeout
    // (10 s as installed), so the answer comes before the hook is killed.
    assert!(dsh_instructions_hooks::LOCK_WAIT < Duration::from_secs(10));
    assert_eq!(t.log_bytes("codex", s), before);
    // Nothing was given, so the next prompt gives the change.
    let next = t.event("codex", "UserPromptSubmit", s, "");
    assert_eq!(
        next.context("UserPromptSubmit"),
        replaced("AGENTS.md", "ROOT-RULES v2")
    );
}

/// The registered entries per context event (contract 3, R-HOOK-4).
const PARTS: u32 = dsh_instructions_hooks::agents::PARTS;

impl Tree {
    /// Starts `hook --agent A --part K` on one fixture event.
    fn start_part(&self, agent: &str, fixture_name: &str, session: &str, k: u32) -> Running {
        let input = fill(&fixture(agent, fixture_name), session, &self.ws(), "");
        let k = k.to_string();
        self.spawn_env(
            &["hook", "--agent", agent, "--part", &k],
            input.into_bytes(),
            &[PATIENT],
        )
    }
}

/// The text of every answered part, by K; `None` for `{}`.
fn part_answers(outs: Vec<Out>, event: &str) -> Vec<Option<String>> {
    outs.into_iter()
        .map(|o| {
            if o.stdout.trim_end() == "{}" {
                o.assert_clean();
                None
            } else {
                Some(o.context(event))
            }
        })
        .collect()
}

/// A root file of `len` bytes in numbered lines, so a lost or doubled
/// piece shows.
fn lines_of(len: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < len {
        s.push_str(&format!("rule {i:06}\n"));
        i += 1;
    }
    s.trim_end().to_owned()
}

/// The content of the parts put back together: each part's sections after
/// its label, a continued header dropped (R-HOOK-4).
fn rejoin(parts: &[String]) -> String {
    parts
        .iter()
        .map(|p| {
            let body = p
                .strip_prefix("<system-reminder>\n")
                .and_then(|b| b.strip_suffix("\n</system-reminder>"))
                .unwrap_or(p);
            let (_label, rest) = body.split_once("\n\n").expect("a label first");
            rest.replace("Instructions from: AGENTS.md (continued)\n\n", "")
        })
        .collect()
}

/// R-HOOK-4: a 30 KB root file at session start arrives as parts of at most
/// 9,000 bytes, each naming its place, the long section continued under its
/// repeated header, together the whole file once; the parts beyond the
/// message answer `{}`; the session log holds the one message.
#[rstest]
#[case::claude("claude")]
#[case::codex("codex")]
fn a_large_message_comes_in_parts_in_composed_order(#[case] agent: &str) {
    let t = Tree::new();
    let root = lines_of(30_000);
    t.write("ws/AGENTS.md", &root);
    let outs: Vec<Out> = (1..=PARTS)
        .map(|k| t.start_part(agent, "SessionStart-startup", "p", k).finish())
        .collect();
    let answers = part_answers(outs, "SessionStart");
    let given: Vec<String> = answers.iter().flatten().cloned().collect();
    let n = given.len();
    assert!((4..=5).contains(&n), "{n} parts");
    assert!(
        answers[..n].iter().all(Option::is_some),
        "parts 1..={n} answer"
    );
    assert!(
        answers[n..].iter().all(Option::is_none),
        "the rest answer {{}}"
    );
    for (i, p) in given.iter().enumerate() {
        assert!(
            p.len() <= dsh_instructions_hooks::parts::PART_BYTES,
            "{}",
            p.len()
        );
        let body = shown_part(agent, p);
        assert!(
            body.starts_with(&format!("Workspace instructions, part {} of {n}.", i + 1)),
            "{body:.120}"
        );
        if i > 0 {
            assert!(body.contains("\n\nInstructions from: AGENTS.md (continued)\n\n"));
        }
    }
    let framed: Vec<String> = given
        .iter()
        .map(|p| {
            format!(
                "<system-reminder>\n{}\n</system-reminder>",
                shown_part(agent, p)
            )
        })
        .collect();
    let all = rejoin(&framed);
    assert_eq!(
        all.matches(&root).count(),
        1,
        "the whole file, once, in order"
    );
    assert_eq!(all.matches(GLOBAL).count(), 1);
    assert_eq!(messages(&t, agent, "p").len(), 1, "composed once");
}

/// A part's text without the frame the agent gets or not (decision 0019).
fn shown_part(agent: &str, p: &str) -> String {
    if agent == "claude" {
        assert!(!p.contains("<system-reminder>"), "{p:.80}");
        p.to_owned()
    } else {
        shown("claude", p)
    }
}

/// R-HOOK-4 with R-LOG-4: the 8 part processes of one event started
/// together, as the agents run them: one composition, each piece in exactly
/// one answer, none lost, whatever order they take the lock in.
#[test]
fn concurrent_parts_give_each_piece_exactly_once() {
    let t = Tree::new();
    let root = lines_of(40_000);
    t.write("ws/AGENTS.md", &root);
    for round in 0..3 {
        let s = format!("c{round}");
        let running: Vec<Running> = (1..=PARTS)
            .map(|k| t.start_part("codex", "SessionStart-startup", &s, k))
            .collect();
        let answers = part_answers(
            running.into_iter().map(Running::finish).collect(),
            "SessionStart",
        );
        let given: Vec<String> = answers.iter().flatten().cloned().collect();
        let n = given.len();
        assert!(answers[..n].iter().all(Option::is_some), "{answers:?}");
        for (i, p) in given.iter().enumerate() {
            assert!(p.contains(&format!("part {} of {n}.", i + 1)));
        }
        assert_eq!(rejoin(&given).matches(&root).count(), 1);
        assert_eq!(messages(&t, "codex", &s).len(), 1, "composed once");
    }
}

impl Tree {
    /// Starts the 8 part processes of one event together, as Claude Code
    /// runs them, and returns each one's output and its line in the hook's
    /// log, by K.
    fn race_parts(&self, agent: &str, session: &str, gap_ms: &str) -> Vec<(Out, String)> {
        let input = fill(
            &fixture(agent, "SessionStart-startup"),
            session,
            &self.ws(),
            "",
        );
        let lines = self.hook_log(agent).len();
        let running: Vec<Running> = (1..=PARTS)
            .map(|k| {
                let k = k.to_string();
                self.spawn_env(
                    &["hook", "--agent", agent, "--part", &k],
                    input.clone().into_bytes(),
                    &[
                        (dsh_instructions_hooks::parts::PART_GAP_ENV, gap_ms),
                        PATIENT,
                    ],
                )
            })
            .collect();
        let outs: Vec<Out> = running.into_iter().map(Running::finish).collect();
        let log = self.hook_log(agent);
        assert_eq!(log.len(), lines + PARTS as usize, "one line per part");
        outs.into_iter()
            .zip(1..=PARTS)
            .map(|(out, k)| {
                let mine: Vec<&String> = log[lines..]
                    .iter()
                    .filter(|l| l.contains(&format!(" part {k} ")))
                    .collect();
                assert_eq!(mine.len(), 1, "part {k}'s line: {:#?}", &log[lines..]);
                (out, mine[0].clone())
            })
            .collect()
    }
}

/// R-HOOK-4 in Claude Code, which shows hook answers in the order the
/// processes finished (decision 0043): of the 8 parts of one event started
/// together, part 1 answers without waiting and each later piece only once
/// its predecessor has printed its own (its marker seen, then the gap; or,
/// if that never comes, at the order's deadline, late rather than lost);
/// the parts with nothing to give never wait; together the pieces are the
/// whole file once. Each part's log line says how its wait ended. How far
/// apart the processes then exit is timing, which a loaded machine moves:
/// the bench's `hook/parts-order` row (decision 0082).
#[test]
fn claude_parts_finish_in_their_order() {
    let t = Tree::new();
    let root = lines_of(40_000);
    t.write("ws/AGENTS.md", &root);
    let mut pieces = 0;
    for round in 0..2 {
        let s = format!("o{round}");
        let raced = t.race_parts("claude", &s, "60");
        let n = raced
            .iter()
            .filter(|(o, _)| o.stdout.trim_end() != "{}")
            .count();
        assert!(n >= 5, "{n} parts");
        pieces = n;
        let given: Vec<String> = raced[..n]
            .iter()
            .map(|(o, _)| o.context("SessionStart"))
            .collect();
        for (i, p) in given.iter().enumerate() {
            assert!(p.starts_with(&format!("Workspace instructions, part {} of {n}.", i + 1)));
        }
        assert!(
            raced[0].1.contains("; finished first "),
            "round {round}: {}",
            raced[0].1
        );
        for (k, (_, line)) in raced.iter().enumerate().take(n).skip(1) {
            assert!(
                line.contains("; finished after its predecessor, ") || at_the_deadline(line),
                "round {round}: part {} did not wait for part {k}: {line}",
                k + 1
            );
        }
        for (o, line) in &raced[n..] {
            assert_eq!(o.stdout.trim_end(), "{}");
            assert!(!line.contains("; finished"), "an empty part waited: {line}");
        }
        let framed: Vec<String> = given
            .iter()
            .map(|p| format!("<system-reminder>\n{p}\n</system-reminder>"))
            .collect();
        assert_eq!(rejoin(&framed).matches(&root).count(), 1, "whole, once");
        assert_eq!(messages(&t, "claude", &s).len(), 1, "composed once");
    }
    // One marker per piece given; none for the parts without one.
    let done = t.sessions_dir("claude").join("o1").join("parts.done");
    assert_eq!(std::fs::read_dir(done).expect("markers").count(), pieces);
}

/// Whether a part's log line says it gave its piece at the order's
/// deadline, and its process had run at least that long by then (the
/// line's last figure): a predecessor slower than the deadline, which only
/// an overloaded machine makes, gives the piece late, never lost.
fn at_the_deadline(line: &str) -> bool {
    let ran_ms = line
        .rsplit(' ')
        .next()
        .and_then(|w| w.strip_suffix("ms"))
        .and_then(|ms| ms.parse::<u128>().ok());
    line.contains("; finished its predecessor did not finish within")
        && ran_ms.is_some_and(|ms| ms >= dsh_instructions_hooks::parts::ORDER_DEADLINE.as_millis())
}

/// Codex keeps registration order: its parts never wait for each other
/// and leave no finish markers.
#[test]
fn codex_parts_keep_no_finishing_order() {
    let t = Tree::new();
    t.write("ws/AGENTS.md", &lines_of(40_000));
    let raced = t.race_parts("codex", "x", "60");
    assert!(
        raced
            .iter()
            .filter(|(o, _)| o.stdout.trim_end() != "{}")
            .count()
            >= 5
    );
    assert!(
        !t.sessions_dir("codex")
            .join("x")
            .join("parts.done")
            .exists()
    );
}

/// A part whose predecessor never runs (it died, or its entry is gone)
/// still gives its piece, once the order's deadline has passed: late,
/// never lost; the missing piece comes with the next event.
#[test]
fn a_part_whose_predecessor_never_ran_still_gives_its_piece() {
    let t = Tree::new();
    t.write("ws/AGENTS.md", &lines_of(20_000));
    let first = t
        .start_part("claude", "SessionStart-startup", "d", 1)
        .finish();
    assert!(first.context("SessionStart").contains("part 1 of 3."));
    let started = Instant::now();
    let third = t
        .start_part("claude", "SessionStart-startup", "d", 3)
        .finish();
    assert!(third.context("SessionStart").contains("part 3 of 3."));
    assert!(
        started.elapsed() >= dsh_instructions_hooks::parts::ORDER_DEADLINE,
        "part 3 did not wait for part 2"
    );
    let log = std::fs::read_to_string(t.agent_dir("claude").join("hook.log")).expect("log");
    assert!(
        log.contains("its predecessor did not finish within"),
        "{log}"
    );
    // The piece nobody claimed comes first with the next event.
    let next = t.start_part("claude", "UserPromptSubmit", "d", 1).finish();
    assert!(
        next.context("UserPromptSubmit")
            .contains("Instructions from: AGENTS.md (continued)"),
        "{:.300}",
        next.stdout
    );
}

/// R-HOOK-4, R-REN-4: beyond the 65,536-byte budget the message says so —
/// the notice in part 1 — and still comes in parts.
#[test]
fn a_message_over_the_budget_carries_the_notice() {
    let t = Tree::new();
    t.write("ws/AGENTS.md", &lines_of(80_000));
    let first = t
        .start_part("codex", "SessionStart-startup", "big", 1)
        .finish()
        .context("SessionStart");
    assert!(
        first.contains("Workspace instruction budget 65536 bytes: "),
        "{first:.600}"
    );
    let total: usize = (2..=PARTS)
        .map(|k| {
            t.start_part("codex", "SessionStart-startup", "big", k)
                .finish()
        })
        .filter(|o| o.stdout.trim_end() != "{}")
        .map(|o| o.context("SessionStart").len())
        .sum::<usize>()
        + first.len();
    assert!(total > 60_000, "{total}");
}

/// R-HOOK-6 and R-HOOK-4: a tool call with nothing to give answers `{}` in
/// every part and commits nothing.
#[test]
fn a_tool_call_with_nothing_to_give_is_empty_in_every_part() {
    let t = Tree::new();
    t.event("claude", "SessionStart-startup", "q", "")
        .context("SessionStart");
    let before = messages(&t, "claude", "q").len();
    let file = format!("{}/AGENTS.md", t.ws());
    for k in 1..=PARTS {
        let input = fill(&fixture("claude", "PostToolUse-Read"), "q", &t.ws(), &file);
        let k = k.to_string();
        t.spawn(
            &["hook", "--agent", "claude", "--part", &k],
            input.into_bytes(),
        )
        .finish()
        .assert_nothing();
    }
    assert_eq!(messages(&t, "claude", "q").len(), before);
}

/// R-HOOK-6: a part whose event a peer already composed answers from the
/// record under the session lock without reading the log or the
/// directory stamps (at 1,000 known directories those are most of its
/// cost); the part that composes the next event still repairs the log.
#[test]
fn a_peer_part_answers_from_the_record_without_reading_the_log() {
    let t = Tree::new();
    t.event("claude", "SessionStart-startup", "p", "")
        .context("SessionStart");
    let file = format!("{}/AGENTS.md", t.ws());
    let input = fill(&fixture("claude", "PostToolUse-Read"), "p", &t.ws(), &file);
    let part = |k: u32| {
        t.spawn(
            &["hook", "--agent", "claude", "--part", &k.to_string()],
            input.clone().into_bytes(),
        )
        .finish()
    };
    part(1).assert_nothing();
    // What a reader of either file would notice: a torn last line (the
    // log's open truncates it) and a foreign stamps file (its load heals
    // it, with a line in the hook's log).
    let session_dir = t.sessions_dir("claude").join("p");
    let mut torn = t.log_bytes("claude", "p");
    torn.extend_from_slice(br#"{"seq": 99, "torn"#);
    std::fs::write(t.session_log("claude", "p"), &torn).expect("tear the log");
    std::fs::write(session_dir.join("dirs.stamps"), "not stamps\n").expect("damage");
    let log_lines = t.hook_log("claude").len();
    for k in 2..=PARTS {
        part(k).assert_nothing();
    }
    assert!(
        t.log_bytes("claude", "p") == torn,
        "the peers never opened the log"
    );
    assert_eq!(
        std::fs::read(session_dir.join("dirs.stamps")).expect("stamps"),
        b"not stamps\n"
    );
    let lines = t.hook_log("claude");
    assert_eq!(lines.len(), log_lines + (PARTS as usize - 1), "{lines:#?}");
    assert!(
        lines[log_lines..]
            .iter()
            .all(|l| l.contains("no part") && !l.contains("heal")),
        "{lines:#?}"
    );
    // The next event's composing part repairs both.
    t.event("claude", "UserPromptSubmit", "p", "")
        .assert_nothing();
    let log = t.log_bytes("claude", "p");
    assert!(
        log.ends_with(b"\n") && !log.ends_with(br#""torn"#),
        "repaired"
    );
    assert!(
        t.hook_log("claude")
            .iter()
            .any(|l| l.contains("heal") && l.contains("dirs.stamps")),
        "the composing part heals the stamps"
    );
}

/// Decision 0076 as installed: once a quiet event wrote the memo, the next
/// event's composing part answers from it (and its peers from the
/// record); an edit takes the full path and is given whole.
#[test]
fn a_quiet_event_answers_from_the_memo_in_every_part() {
    // Every directory above the tree is a dependency (an instruction file
    // may appear there, R-HOOK-8); `/tmp` changes whenever a test makes a
    // temporary directory, so the tree lives where nothing else does.
    // The other trees of this binary live in `scratch()`: made now, before
    // the wait, the system's temporary directory has no later change of
    // ours.
    scratch();
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("quiet-memo");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("base");
    let t = Tree::new_in(&base);
    t.event("claude", "SessionStart-startup", "q", "")
        .context("SessionStart");
    let prompt = |id: &str, k: u32| {
        let mut v: Value = serde_json::from_str(&fill(
            &fixture("claude", "UserPromptSubmit"),
            "q",
            &t.ws(),
            "",
        ))
        .expect("json");
        v["prompt_id"] = id.into();
        t.spawn(
            &["hook", "--agent", "claude", "--part", &k.to_string()],
            v.to_string().into_bytes(),
        )
        .finish()
    };
    // Only what changed at least 2 s before an event vouches: each attempt
    // leaves the tree alone past that margin (a wait that a slow machine
    // only lengthens), then a quiet prompt writes the memo and the parts of
    // the next prompt answer from it. Something else on the machine may
    // still change a directory above the tree meanwhile: then, rightly, no
    // memo is written or none answers, and the next attempt tries again.
    // A miss with nothing above changed is a failure (decision 0082).
    let mut attempts = 0;
    let lines = loop {
        let above = stamps_above(t.tmp.path());
        std::thread::sleep(Duration::from_millis(2_200));
        t.event("claude", "UserPromptSubmit", "q", "")
            .assert_nothing();
        let lines = t.hook_log("claude").len();
        for k in 1..=PARTS {
            prompt(&format!("p1-{attempts}"), k).assert_nothing();
        }
        if t.hook_log("claude")[lines].contains("unchanged since a quiet event") {
            break lines;
        }
        assert_ne!(
            stamps_above(t.tmp.path()),
            above,
            "no answer from the memo, and nothing above the tree changed: {:#?}",
            t.hook_log("claude")
        );
        attempts += 1;
        // A hang guard: never reached unless the directories above change
        // every few seconds.
        assert!(
            attempts < 20,
            "the directories above the tree changed at every attempt"
        );
    };
    let log = t.hook_log("claude");
    assert!(
        log[lines].contains("part 1 ") && log[lines].contains("unchanged since a quiet event"),
        "{log:#?}"
    );
    assert!(
        log[lines + 1..].iter().all(|l| l.contains("no part")),
        "{log:#?}"
    );
    // An edit: the full path, the file given, and the memo written anew
    // only once the edit is 2 s old.
    t.write("ws/AGENTS.md", "ROOT-RULES v2\n");
    let outs: Vec<Out> = (1..=PARTS).map(|k| prompt("p2", k)).collect();
    let given = part_answers(outs, "UserPromptSubmit");
    let text: String = given.into_iter().flatten().collect();
    assert!(text.contains("ROOT-RULES v2"), "{text}");
    assert!(
        !t.hook_log("claude")
            .last()
            .is_some_and(|l| l.contains("unchanged since")),
        "{:#?}",
        t.hook_log("claude")
    );
}

/// A part that cannot be delivered (fewer entries registered than parts,
/// an entry that did not run) is given with the next event, never dropped.
#[test]
fn an_unclaimed_part_is_given_with_the_next_event() {
    let t = Tree::new();
    let root = lines_of(15_000);
    t.write("ws/AGENTS.md", &root);
    let p1 = t
        .start_part("codex", "SessionStart-startup", "u", 1)
        .finish()
        .context("SessionStart");
    assert!(p1.contains("part 1 of 2."), "{p1:.200}");
    // Part 2 never ran. The next event's part 1 carries it, first.
    t.write("ws/AGENTS.md", &root);
    let next = t
        .start_part("codex", "UserPromptSubmit", "u", 1)
        .finish()
        .context("UserPromptSubmit");
    assert!(next.contains("part 1 of 1."), "{next:.200}");
    assert_eq!(rejoin(&[p1, next]).matches(&root).count(), 1);
}

/// A session an earlier version stored directly in the agent's directory
/// (`hooks/<agent>/<id>/`) is adopted into `sessions/` by its next event:
/// an edit arrives as one `replace`, not as a second baseline (R-HOOK-10:
/// the namespaces split without losing a session's state).
#[test]
fn a_session_of_the_old_layout_is_adopted_not_restarted() {
    let t = Tree::new();
    let out = t.event("claude", "SessionStart-startup", "s", "");
    assert_eq!(
        out.context("SessionStart"),
        shown("claude", &baseline(ROOT_V1))
    );
    // Where the previous version kept it.
    std::fs::rename(
        t.sessions_dir("claude").join("s"),
        t.agent_dir("claude").join("s"),
    )
    .expect("move to the old layout");
    t.write("ws/AGENTS.md", "ROOT-RULES v2");
    let prompt = t.event("claude", "UserPromptSubmit", "s", "");
    assert_eq!(
        prompt.context("UserPromptSubmit"),
        shown("claude", &replaced("AGENTS.md", "ROOT-RULES v2"))
    );
    assert!(
        t.session_log("claude", "s").exists(),
        "moved into sessions/"
    );
    assert!(!t.agent_dir("claude").join("s").exists(), "no second copy");
}

/// Control characters in what the diagnostic log names (here a cwd with
/// a NUL and a newline) are escaped: every entry is one line, no raw
/// control byte reaches `hook.log` (R-HOOK-10).
#[test]
fn control_characters_never_reach_the_log_raw() {
    let t = Tree::new();
    let input = br#"{"session_id":"s","cwd":"ws\u0000x\ny","hook_event_name":"SessionStart","source":"startup"}"#;
    t.hook_raw("claude", input).assert_nothing();
    let raw = std::fs::read(t.agent_dir("claude").join("hook.log")).expect("hook.log");
    let body = &raw[..raw.len() - 1];
    assert_eq!(raw.last(), Some(&b'\n'));
    assert!(
        !body.iter().any(|b| b.is_ascii_control()),
        "a raw control byte: {:?}",
        String::from_utf8_lossy(&raw)
    );
    let line = String::from_utf8(raw).expect("utf-8");
    assert!(line.contains(r"ws\u{0}x\ny"), "{line}");
}

/// R-HOOK-6 / R-LOG-4 / R-HOOK-8 under load at the real lock bound
/// (issue 18 item 6, issue 34 item 3): 200 tool calls of one session at
/// once, as real processes with the adapter's default wait (`LOCK_WAIT`,
/// no override), on a session that already knows 200 directories. A call
/// that cannot get the lock within the bound defers its touch: every new
/// nested file is then in exactly one answer, its own or a later one's
/// (at the latest the next event's), none is lost and none is given twice,
/// and every invocation logs one line, each deferral its own. The number
/// deferred is printed, not bounded: it measures the machine (decision
/// 0082). Counts, not times.
#[test]
fn two_hundred_concurrent_tool_calls_at_the_real_lock_bound_lose_nothing() {
    const KNOWN: usize = 200;
    const PARALLEL: usize = 200;
    let t = Tree::new();
    let s = "load";
    for i in 0..KNOWN + PARALLEL {
        t.write(&format!("ws/load/d{i}/AGENTS.md"), &format!("LOAD-{i}-END"));
    }
    // The known directories, built in-process with the adapter itself.
    let env = dsh_home_paths::HomeEnv {
        home: Some(t.path("home").into_os_string()),
        cwd: t.path("ws"),
        ..Default::default()
    };
    let event = |name: &str, path: &str| fill(&fixture("claude", name), s, &t.ws(), path);
    let respond = |stdin: &str| {
        let mut out = Vec::new();
        let call = dsh_instructions_hooks::Invocation::new(
            dsh_instructions_hooks::Agent::Claude,
            stdin.as_bytes(),
            &env,
        );
        dsh_instructions_hooks::answer(&call, &mut out).expect("printed");
        String::from_utf8(out).expect("utf-8")
    };
    let start = respond(&event("SessionStart-startup", ""));
    assert!(start.contains(ROOT_V1), "{start}");
    for i in 0..KNOWN {
        let file = format!("{}/load/d{i}/f.rs", t.ws());
        let answer = respond(&event("PostToolUse-Read", &file));
        assert!(answer.contains(&format!("LOAD-{i}-END")), "{answer}");
    }
    let before = t.hook_log("claude").len();
    let running: Vec<Running> = (KNOWN..KNOWN + PARALLEL)
        .map(|i| {
            let file = format!("{}/load/d{i}/f.rs", t.ws());
            t.spawn(
                &["hook", "--agent", "claude"],
                event("PostToolUse-Read", &file).into_bytes(),
            )
        })
        .collect();
    let mut answers: Vec<String> = running
        .into_iter()
        .map(|r| {
            let out = r.finish();
            out.assert_clean();
            out.stdout
        })
        .collect();
    let deferred = (KNOWN..KNOWN + PARALLEL)
        .zip(&answers)
        .filter(|(i, a)| !a.contains(&format!("LOAD-{i}-END")))
        .count();
    // The next event gives whatever is still deferred (nothing, when no
    // call deferred or a later call already gave them).
    let next = t.event("claude", "UserPromptSubmit", s, "");
    next.assert_clean();
    answers.push(next.stdout);
    println!("at the real lock bound: {deferred} of {PARALLEL} concurrent calls deferred");
    for i in KNOWN..KNOWN + PARALLEL {
        let marker = format!("LOAD-{i}-END");
        let given = answers.iter().filter(|a| a.contains(&marker)).count();
        assert_eq!(given, 1, "d{i} given {given} times ({deferred} deferred)");
    }
    let log = t.hook_log("claude");
    let calls = &log[before..before + PARALLEL];
    assert_eq!(log.len(), before + PARALLEL + 1, "one line per invocation");
    let deferral_lines = calls
        .iter()
        .filter(|l| l.contains("1 touches deferred to the next event"))
        .count();
    assert_eq!(
        deferral_lines, deferred,
        "each deferral is logged: {calls:#?}"
    );
    // A call defers only after waiting the whole bound, never earlier.
    let bound = dsh_instructions_hooks::LOCK_WAIT.as_secs_f64();
    for l in calls.iter().filter(|l| l.contains("touches deferred")) {
        let waited = l
            .split(" for ")
            .nth(1)
            .and_then(|rest| rest.split("s,").next())
            .and_then(|secs| secs.parse::<f64>().ok());
        assert!(
            waited.is_some_and(|w| w >= bound),
            "deferred before the bound: {l}"
        );
    }
    let failed: Vec<_> = log[before..]
        .iter()
        .filter(|l| l.contains("error") && !l.contains("touches deferred to the next event"))
        .collect();
    assert!(failed.is_empty(), "an invocation failed: {failed:#?}");
    // How many defer is how fast the machine serves the lock, not a
    // property: one debug-build call holds it some 30 ms on an idle
    // two-core machine, several times that beside other work. The figure
    // and its target (at most half) are the bench's
    // `hook/concurrent-200/…` rows (decision 0082).
    // One message per call that held the lock, one for the next event
    // when it gave the deferred files.
    let last_gave = !answers[PARALLEL].trim_end().eq("{}");
    assert_eq!(
        messages(&t, "claude", s).len(),
        1 + KNOWN + PARALLEL - deferred + usize::from(last_gave)
    );
}

/// A tool call that cannot get the session lock within the bound answers
/// `{}` but does not lose its touch: the next invocation holding the lock
/// gives the nested file with its own event (issue 18 item 6, R-HOOK-8).
#[test]
fn a_touch_past_the_lock_bound_is_given_by_the_next_event() {
    let t = Tree::new();
    let s = "deferred";
    t.event("claude", "SessionStart-startup", s, "")
        .context("SessionStart");
    let held = t.hold_lock("claude", s);
    let deep = format!("{}/pkg/lib/src/main.rs", t.ws());
    let input = fill(&fixture("claude", "PostToolUse-Read"), s, &t.ws(), &deep);
    let busy = t
        .spawn_env(
            &["hook", "--agent", "claude"],
            input.into_bytes(),
            &[(dsh_instructions_hooks::LOCK_WAIT_ENV, "50")],
        )
        .finish();
    drop(held);
    busy.assert_nothing();
    let log = t.hook_log("claude");
    assert!(
        log.last()
            .is_some_and(|l| l.contains("1 touches deferred to the next event")),
        "{log:?}"
    );
    // The next event touches nothing new itself; it gives the deferred file.
    let prompt = t.event("claude", "UserPromptSubmit", s, "");
    assert_eq!(
        prompt.context("UserPromptSubmit"),
        shown("claude", &nested("pkg/lib", LIB))
    );
    // Once only.
    t.event("claude", "UserPromptSubmit", s, "")
        .assert_nothing();
}

/// R-HOOK-8 (decision 0044): Claude Code reads `CLAUDE.md` in every
/// directory above the project root; with its own loading switched off the
/// hook delivers the one placed a level above the repository — after the
/// user-global file, before the project's, by absolute path — and keeps it
/// current and in the baseline after compaction. Codex's hook does not.
/// Files the machine may hold further up (`/tmp`, `/`) are allowed around
/// it: only presence and order of this test's own files are asserted.
#[test]
fn claude_session_start_delivers_the_claude_md_above_the_repository() {
    let t = Tree::new();
    t.write("CLAUDE.md", "ABOVE-RULES v1");
    let above = t.path("CLAUDE.md");
    let above = above.to_str().expect("utf-8");
    let s = "4d1e2f3a-5b6c-4d7e-8f90-1234567890ab";
    let order = |text: &str, needles: &[String]| {
        let at: Vec<usize> = needles
            .iter()
            .map(|n| {
                text.find(n.as_str())
                    .unwrap_or_else(|| panic!("no {n:?} in {text}"))
            })
            .collect();
        assert!(at.is_sorted(), "order of {needles:?} in {text}");
    };
    let expected = [
        format!("Instructions from: ~/.dsh/AGENTS.md\n\n{GLOBAL}"),
        format!("Instructions from: {above}\n\nABOVE-RULES v1"),
        format!("Instructions from: AGENTS.md\n\n{ROOT_V1}"),
    ];

    let start = t
        .event("claude", "SessionStart-startup", s, "")
        .context("SessionStart");
    order(&start, &expected);
    assert_eq!(start.matches("ABOVE-RULES").count(), 1, "{start}");

    t.write("CLAUDE.md", "ABOVE-RULES v2");
    let prompt = t
        .event("claude", "UserPromptSubmit", s, "")
        .context("UserPromptSubmit");
    assert_eq!(prompt, shown("claude", &replaced(above, "ABOVE-RULES v2")));

    let compact = t
        .event("claude", "SessionStart-compact", s, "")
        .context("SessionStart");
    order(
        &compact,
        &[
            format!("Instructions from: {above}\n\nABOVE-RULES v2"),
            format!("Instructions from: AGENTS.md\n\n{ROOT_V1}"),
        ],
    );

    let codex = t
        .event("codex", "SessionStart-startup", "c-1", "")
        .context("SessionStart");
    assert!(!codex.contains("ABOVE-RULES"), "{codex}");
}
