//! Black-box tests of `dsh-instructions hook …` (R-HOOK-1, R-HOOK-5): exit
//! codes and what lands where, with `HOME`, `DSH_HOME` and `CODEX_HOME` set
//! on the child process only.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_dsh-instructions");

struct Tree {
    tmp: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let t = Self {
            tmp: tempfile::tempdir().expect("tempdir"),
        };
        for d in ["home", "dsh", "repo/.git"] {
            std::fs::create_dir_all(t.path(d)).expect("mkdir");
        }
        t
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.path("repo"))
            .env("HOME", self.path("home"))
            .env("DSH_HOME", self.path("dsh"))
            .env_remove("CODEX_HOME");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run binary")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).expect("read")
}

#[test]
fn bare_hook_answers_no_context_and_exits_0() {
    let t = Tree::new();
    let mut child = t
        .cmd(&["hook", "--agent", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(br#"{"hook_event_name":"SessionStart","source":"startup"}"#)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out).trim(), "{}");
}

#[test]
fn install_then_doctor_then_uninstall() {
    let t = Tree::new();
    let settings = t.path("home/.claude/settings.json");
    let out = t.run(&["hook", "doctor", "--agent", "claude"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("missing"));

    let out = t.run(&["hook", "install", "--agent", "claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("created {}", settings.display())));
    // The registered command is this very binary, one entry per part (contract 3).
    for k in 1..=8 {
        assert!(read(&settings).contains(&format!("\"{BIN} hook --agent claude --part {k}\"")));
    }

    let out = t.run(&["hook", "install", "--agent", "claude"]);
    assert_eq!(code(&out), 0);
    assert!(
        stdout(&out).starts_with("nothing to change"),
        "{}",
        stdout(&out)
    );

    let out = t.run(&["hook", "doctor", "--agent", "claude"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).ends_with("healthy\n"));

    let out = t.run(&["hook", "uninstall", "--agent", "claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!settings.exists());
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let t = Tree::new();
    let out = t.run(&["hook", "install", "--agent", "gemini", "--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("+++ b/") && text.contains("+    \"fileName\": []"),
        "{text}"
    );
    assert!(text.contains("would create"));
    assert!(!t.path("home/.gemini").exists());
    assert!(!t.path("dsh/hooks").exists());
}

#[test]
fn codex_goes_to_codex_home_with_trust() {
    let t = Tree::new();
    let ch = t.path("elsewhere/codex");
    std::fs::create_dir_all(&ch).expect("mkdir");
    let out = t
        .cmd(&["hook", "install", "--agent", "codex"])
        .env("CODEX_HOME", &ch)
        .output()
        .expect("run");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(ch.join("hooks.json").exists());
    assert!(read(&ch.join("config.toml")).contains("trusted_hash = \"sha256:"));
    let out = t
        .cmd(&["hook", "doctor", "--agent", "codex"])
        .env("CODEX_HOME", &ch)
        .output()
        .expect("run");
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).contains("trusted"));
}

#[test]
fn project_scope_writes_into_the_project() {
    let t = Tree::new();
    let out = t.run(&["hook", "install", "--agent", "claude", "--scope", "project"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(t.path("repo/.claude/settings.json").exists());
    assert!(!t.path("home/.claude").exists());
    let other = t.path("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    let out = t.run(&[
        "hook",
        "install",
        "--agent",
        "gemini",
        "--scope",
        "project",
        "--project",
        other.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(other.join(".gemini/settings.json").exists());
}

#[test]
fn malformed_settings_exit_2_with_one_line_naming_the_file() {
    let t = Tree::new();
    let settings = t.path("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("parent")).expect("mkdir");
    std::fs::write(&settings, "{ nope").expect("write");
    for action in ["install", "uninstall", "doctor"] {
        let out = t.run(&["hook", action, "--agent", "claude"]);
        assert_eq!(code(&out), 2, "{action}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&settings.display().to_string()), "{err}");
    }
    assert_eq!(read(&settings), "{ nope");
    assert!(!t.path("home/.claude/settings.json.dsh-backup").exists());
}

#[test]
fn install_needs_an_agent() {
    let t = Tree::new();
    let out = t.run(&["hook", "install"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--agent"));
}

/// Runs a binary this test process has just written. Another test thread
/// that forks while the copy's write descriptor is still open hands that
/// descriptor to its child until the child execs, and for that moment the
/// kernel refuses to execute the file (`ETXTBSY`, "Text file busy"): a race
/// of the test harness, not of the product, so it is waited out. A loaded
/// machine can hold such a child between fork and exec for a while; the
/// bound is only a hang guard (decision 0082).
fn output_of_fresh_copy(cmd: &mut Command) -> std::process::Output {
    const ETXTBSY: i32 = 26;
    const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(60);
    let started = std::time::Instant::now();
    loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && started.elapsed() < HANG_GUARD => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other.expect("run"),
        }
    }
}

/// `npx dsh-instructions hook install` runs the binary from npm's cache,
/// which npm may clear: the hook registers a stable copy in the DSH home
/// instead, which runs as the hook and answers events; a binary anywhere
/// else registers itself.
#[test]
fn an_install_through_npx_registers_a_stable_copy() {
    let t = Tree::new();
    let npx = t.path("home/.npm/_npx/4b4e/node_modules/.bin");
    std::fs::create_dir_all(&npx).expect("mkdir");
    let cached = npx.join("dsh-instructions");
    std::fs::copy(BIN, &cached).expect("copy the binary into an npx-like cache");
    let mut install = Command::new(&cached);
    install
        .args(["hook", "install", "--agent", "claude"])
        .current_dir(t.path("repo"))
        .env("HOME", t.path("home"))
        .env("DSH_HOME", t.path("dsh"));
    let out = output_of_fresh_copy(&mut install);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings = std::fs::read_to_string(t.path("home/.claude/settings.json")).expect("settings");
    let stable = t.path("dsh/bin/dsh-instructions");
    assert!(
        settings.contains(&format!("{} hook --agent claude", stable.display())),
        "{settings}"
    );
    assert!(!settings.contains("_npx"), "{settings}");
    // The cache goes away; the registered copy still answers as the hook.
    std::fs::remove_dir_all(t.path("home/.npm")).expect("clear the cache");
    let mut child = Command::new(&stable)
        .args(["hook", "--agent", "claude"])
        .current_dir(t.path("repo"))
        .env("HOME", t.path("home"))
        .env("DSH_HOME", t.path("dsh"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the stable copy");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"{}")
        .expect("event");
    let answer = child.wait_with_output().expect("wait");
    assert!(answer.status.success());
    assert_eq!(String::from_utf8_lossy(&answer.stdout).trim(), "{}");
    // Installed from a stable place, the binary registers itself.
    let direct = t.run(&["hook", "install", "--agent", "codex"]);
    assert!(
        direct.status.success(),
        "{}",
        String::from_utf8_lossy(&direct.stderr)
    );
    let hooks = std::fs::read_to_string(t.path("home/.codex/hooks.json")).expect("codex hooks");
    assert!(hooks.contains(BIN), "{hooks}");
}

/// Decisions 0065, 0067: `hook install --agent copilot` writes one file of
/// its own, each command naming its event; the binary answers such an
/// event (its stdin names none) with Copilot's top-level key; doctor is
/// healthy with Copilot's own loading kept on; uninstall removes the file.
#[test]
fn copilot_install_answer_doctor_uninstall() {
    let t = Tree::new();
    std::fs::write(t.path("repo/AGENTS.local.md"), "LOCAL-MARKER be brief.\n").expect("write");
    let file = t.path("home/.copilot/hooks/dsh-instructions.json");
    let out = t.run(&["hook", "install", "--agent", "copilot"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = read(&file);
    assert!(
        text.contains(&format!(
            "\"{BIN} hook --agent copilot --event sessionStart\""
        )),
        "{text}"
    );

    let mut child = t
        .cmd(&["hook", "--agent", "copilot", "--event", "sessionStart"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let payload = serde_json::json!({"sessionId": "cop-1", "timestamp": 1, "cwd": t.path("repo"),
        "source": "new", "initialPrompt": "hi"});
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.to_string().as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(code(&out), 0);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let context = answer["additionalContext"].as_str().expect("top-level key");
    assert!(context.contains("LOCAL-MARKER be brief."), "{context}");
    assert!(answer.get("hookSpecificOutput").is_none(), "{answer}");

    let out = t.run(&["hook", "doctor", "--agent", "copilot"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("native loading    on, kept on"),
        "{}",
        stdout(&out)
    );
    let out = t.run(&["hook", "uninstall", "--agent", "copilot"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!file.exists());
}

/// Qwen Code: Claude Code's shape in `~/.qwen/settings.json`, native
/// loading off, doctor healthy (with the `.qwen/rules` note), uninstall
/// removes what install created.
#[test]
fn qwen_install_doctor_uninstall() {
    let t = Tree::new();
    let settings = t.path("home/.qwen/settings.json");
    let out = t.run(&["hook", "install", "--agent", "qwen"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&read(&settings)).expect("json");
    assert_eq!(
        v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        format!("{BIN} hook --agent qwen")
    );
    assert_eq!(
        v["context"]["fileName"],
        serde_json::json!(["DSH-INSTRUCTIONS-NO-SUCH-FILE.md"])
    );
    let out = t.run(&["hook", "doctor", "--agent", "qwen"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).contains(".qwen/rules"), "{}", stdout(&out));
    let out = t.run(&["hook", "uninstall", "--agent", "qwen"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!settings.exists());
}

/// R-HOOK-8: `explain --agent A` shows what A's hook delivers here — Qwen
/// Code's `QWEN.md` and `AGENTS.md`; for Copilot CLI, which loads its own
/// files itself, those marked as given by Copilot, and the overlays
/// (decisions 0067, 0073). `check --agent` agrees.
#[test]
fn explain_and_check_take_copilot_and_qwen() {
    let t = Tree::new();
    for (f, text) in [
        ("repo/AGENTS.md", "ROOT-AGENTS\n"),
        ("repo/QWEN.md", "ROOT-QWEN\n"),
        ("repo/AGENTS.local.md", "ROOT-LOCAL\n"),
    ] {
        std::fs::write(t.path(f), text).expect("write");
    }
    let qwen = t.run(&["explain", "--agent", "qwen"]);
    assert_eq!(code(&qwen), 0, "{}", stderr(&qwen));
    let q = stdout(&qwen);
    let (a, b) = (
        q.find("QWEN.md").expect("QWEN.md"),
        q.find("AGENTS.md").expect("AGENTS.md"),
    );
    assert!(a < b, "{q}");
    let copilot = stdout(&t.run(&["explain", "--agent", "copilot"]));
    let files: Vec<&str> = copilot
        .lines()
        .filter(|l| l.starts_with(". "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(
        files,
        [
            "AGENTS.md",
            "CLAUDE.md",
            "GEMINI.md",
            "AGENTS.local.md",
            "CLAUDE.local.md"
        ],
        "{copilot}"
    );
    let own: Vec<&str> = copilot
        .lines()
        .filter(|l| l.contains("given by the agent itself"))
        .collect();
    assert_eq!(own.len(), 1, "only the AGENTS.md that loads: {copilot}");
    assert!(
        own[0].starts_with(". ") && own[0].contains(" AGENTS.md "),
        "{copilot}"
    );
    for agent in ["copilot", "qwen"] {
        let out = t.run(&["check", "--agent", agent]);
        assert_eq!(code(&out), 0, "{agent}: {}{}", stdout(&out), stderr(&out));
    }
}

// `hook install --rules` and `hook doctor`'s rule list (R-RULE-7).

/// Codex installed without rules and a Cursor rule here: doctor names the
/// file and the command; that command makes the hook read it, after which
/// doctor says every rule file is delivered; uninstall takes the setting
/// out again.
#[test]
fn doctor_names_undelivered_rules_and_the_command_that_delivers_them() {
    let t = Tree::new();
    t.write(
        "repo/.cursor/rules/x.mdc",
        "---\nglobs: \"*.ts\"\n---\nTS rule\n",
    );
    t.write("repo/.cursor/rules/manual.mdc", "no fields: manual\n");
    let out = t.run(&["hook", "install", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = t.run(&["hook", "doctor", "--agent", "codex"]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "warning: rules: .cursor/rules/x.mdc (cursor) is not delivered by the codex hook\n"
        ),
        "{text}"
    );
    assert!(!text.contains("manual.mdc"), "{text}");
    let command = "dsh-instructions hook install --agent codex --rules cursor";
    assert!(
        text.contains(&format!("rules: to deliver them: {command}\n")),
        "{text}"
    );
    // The installation itself is healthy: the list is advice.
    assert_eq!(out.status.code(), Some(0), "{text}");

    let words: Vec<&str> = command.split(' ').skip(1).collect();
    let out = t.run(&words);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = t.path("dsh/hooks/codex/config.json");
    assert!(
        std::fs::read_to_string(&config)
            .expect("config.json")
            .contains("\"cursor\"")
    );
    let out = t.run(&["hook", "doctor", "--agent", "codex"]);
    let text = stdout(&out);
    assert!(
        text.contains("rules: the hook delivers every rule file here\n"),
        "{text}"
    );
    assert!(!text.contains("not delivered"), "{text}");

    let out = t.run(&["hook", "uninstall", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!config.exists(), "install created it, uninstall removed it");
}

/// An unknown format is an error naming the flag and the name; nothing is
/// written.
#[test]
fn an_unknown_rules_format_is_an_error_naming_the_flag() {
    let t = Tree::new();
    let out = t.run(&[
        "hook",
        "install",
        "--agent",
        "gemini",
        "--rules",
        "cursor,zed",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("--rules") && err.contains("`zed`"), "{err}");
    assert!(!t.path("home/.gemini/settings.json").exists());
    assert!(!t.path("dsh/hooks/gemini/config.json").exists());
}

/// GitHub Copilot CLI keeps loading its own and Claude's rules (decision
/// 0067) and its hook reads the `copilot` format too (decision 0073):
/// doctor names only the formats nobody delivers, and its command keeps
/// the format the hook reads (`--rules` replaces the list) without asking
/// for Claude's, which Copilot loads itself.
#[test]
fn doctor_counts_what_copilot_loads_itself_as_delivered() {
    let t = Tree::new();
    t.write(
        "repo/.github/instructions/a.instructions.md",
        "---\napplyTo: \"**\"\n---\ncopilot rule\n",
    );
    t.write("repo/.claude/rules/c.md", "claude rule\n");
    t.write(
        "repo/.cursor/rules/x.mdc",
        "---\nalwaysApply: true\n---\ncursor rule\n",
    );
    let out = t.run(&["hook", "install", "--agent", "copilot"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&t.run(&["hook", "doctor", "--agent", "copilot"]));
    assert!(
        text.contains(".cursor/rules/x.mdc (cursor) is not delivered"),
        "{text}"
    );
    assert!(!text.contains("a.instructions.md"), "{text}");
    assert!(!text.contains(".claude/rules/c.md"), "{text}");
    assert!(
        text.contains("dsh-instructions hook install --agent copilot --rules cursor,copilot\n"),
        "{text}"
    );
}

/// pi and opencode (decision 0086): install writes the one file that loads
/// the package named by `--package` (following `$PI_CODING_AGENT_DIR` and
/// `$XDG_CONFIG_HOME`), doctor says healthy and exits 0, uninstall takes it
/// away; without the package, install fails naming it and writes nothing.
#[test]
fn pi_and_opencode_install_doctor_uninstall() {
    let t = Tree::new();
    for m in ["pi.mjs", "opencode.mjs"] {
        t.write(&format!("pkg/agents/{m}"), "export {};\n");
    }
    let pkg = t.path("pkg");
    let pkg = pkg.to_str().expect("utf-8");
    for (agent, env, file) in [
        (
            "pi",
            ("PI_CODING_AGENT_DIR", "pi-dir"),
            "pi-dir/extensions/dsh-instructions.ts",
        ),
        (
            "opencode",
            ("XDG_CONFIG_HOME", "xdg"),
            "xdg/opencode/plugin/dsh-instructions.js",
        ),
    ] {
        let with_env = |args: &[&str]| t.cmd(args).env(env.0, t.path(env.1)).output().expect("run");
        let missing = with_env(&[
            "hook",
            "install",
            "--agent",
            agent,
            "--package",
            "/nonexistent",
        ]);
        assert_eq!(code(&missing), 2, "{}", stderr(&missing));
        assert!(
            stderr(&missing).contains("dsh-agent-instructions"),
            "{}",
            stderr(&missing)
        );
        assert!(!t.path(file).exists());

        let o = with_env(&["hook", "install", "--agent", agent, "--package", pkg]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let text = read(&t.path(file));
        assert!(
            text.contains(&format!("{pkg}/agents/{agent}.mjs")),
            "{text}"
        );
        let d = with_env(&["hook", "doctor", "--agent", agent]);
        // Without npm's global root here, doctor still reads the file.
        assert!(stdout(&d).contains("present"), "{}", stdout(&d));
        assert_eq!(code(&d), 0, "{}", stdout(&d));
        let u = with_env(&["hook", "uninstall", "--agent", agent]);
        assert_eq!(code(&u), 0, "{}", stderr(&u));
        assert!(!t.path(file).exists());
        let d = with_env(&["hook", "doctor", "--agent", agent]);
        assert_eq!(code(&d), 1, "{}", stdout(&d));
        assert!(stdout(&d).contains("missing"), "{}", stdout(&d));
    }
}
