//! Black-box tests: the built `dsh-instructions` binary on temporary trees,
//! with `HOME` and `DSH_HOME` set on the child process only.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dsh-instructions");

/// The normal intro of R-REN-2, exactly.
const INTRO: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";

/// A temporary machine: `<tmp>/home` is `$HOME`, `<tmp>/dsh` is `$DSH_HOME`,
/// `<tmp>/repo` is a project with a `.git` marker.
struct Tree {
    tmp: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let tree = Self {
            tmp: tempfile::tempdir().expect("tempdir"),
        };
        for d in ["home", "dsh", "repo/.git"] {
            std::fs::create_dir_all(tree.path(d)).expect("mkdir");
        }
        tree
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, text).expect("write");
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.path("repo"))
            .env("HOME", self.path("home"))
            .env("DSH_HOME", self.path("dsh"));
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run binary")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

#[test]
fn show_prints_exactly_the_baseline_plus_one_newline() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    let out = t.run(&["show"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let want = format!(
        "<system-reminder>\n{INTRO}\n\nInstructions from: AGENTS.md\n\nUse tabs.\n</system-reminder>\n"
    );
    assert_eq!(stdout(&out), want);
}

#[test]
fn show_orders_user_global_then_root_to_cwd() {
    let t = Tree::new();
    t.write("dsh/AGENTS.md", "Global.");
    t.write("repo/AGENTS.md", "Root.");
    t.write("repo/pkg/CLAUDE.md", "Pkg.");
    let out = t.run(&["show", "--cwd", "pkg"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let want = format!(
        "<system-reminder>\n{INTRO}\n\n\
         Instructions from: $DSH_HOME/AGENTS.md\n\nGlobal.\n\n\
         Instructions from: AGENTS.md\n\nRoot.\n\n\
         Instructions from: pkg/CLAUDE.md\n\nPkg.\n</system-reminder>\n"
    );
    assert_eq!(stdout(&out), want);
}

#[test]
fn show_prints_nothing_when_no_file_loads() {
    let t = Tree::new();
    let out = t.run(&["show"]);
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "");
}

#[test]
fn show_json_carries_text_source_root_and_identity() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    let out = t.run(&["show", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert!(
        v["text"]
            .as_str()
            .expect("text")
            .ends_with("Use tabs.\n</system-reminder>")
    );
    assert_eq!(v["source"]["kind"], "agent-instructions");
    assert_eq!(v["source"]["baseline"], true);
    // SHA-1 of "Use tabs." (R-STATE-3), from `printf "Use tabs." | sha1sum`.
    assert_eq!(
        v["source"]["changes"][0]["digest"],
        "c649a5eaf1b00ae276c41f725c5c7de336c1c354"
    );
    assert_eq!(v["source"]["changes"][0]["path"], "AGENTS.md");
    let root = v["root"].as_str().expect("root");
    assert!(root.ends_with("/repo"), "{root}");
    let identity: Value =
        serde_json::from_str(v["identity"].as_str().expect("identity")).expect("canonical json");
    assert_eq!(identity["root"], ".");
    assert_eq!(identity["max_bytes"], 65_536);
}

#[test]
fn explain_json_reports_root_home_fates_and_ledger() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root rule.");
    t.write("repo/CLAUDE.md", "  Root rule.\n");
    t.write("repo/pkg/AGENTS.md", "Pkg.");
    let out = t.run(&["explain", "--json", "--cwd", "pkg"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["schema"], 1);
    assert_eq!(
        v["root"]["reason"],
        serde_json::json!({"kind": "marker", "marker": ".git"})
    );
    assert_eq!(v["home"]["label"], "$DSH_HOME");
    let fates: Vec<(String, String)> = v["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap_or_default().to_owned(),
                c["fate"]["kind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let fate_of = |p: &str| {
        fates
            .iter()
            .find(|(path, _)| path == p)
            .map(|(_, f)| f.as_str())
    };
    assert_eq!(fate_of("$DSH_HOME/AGENTS.md"), Some("absent"));
    assert_eq!(fate_of("AGENTS.md"), Some("loaded"));
    assert_eq!(fate_of("CLAUDE.md"), Some("shadowed"));
    assert_eq!(fate_of("pkg/AGENTS.md"), Some("loaded"));
    assert_eq!(fate_of("pkg/AGENTS.local.md"), Some("absent"));
    let claude = v["candidates"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["path"] == "CLAUDE.md"))
        .expect("CLAUDE.md row");
    // Same content after trimming: shadowed but not a problem.
    assert_eq!(claude["fate"]["differs"], false);
    assert_eq!(claude["problem"], false);
    let show = t.run(&["show", "--cwd", "pkg"]);
    let shown = stdout(&show);
    assert_eq!(
        v["budget"]["rendered_bytes"].as_u64(),
        Some(shown.len() as u64 - 1),
        "ledger counts the text show prints (minus its newline)"
    );
    assert_eq!(v["budget"]["max_bytes"], 65_536);
    assert!(
        v["identity"]
            .as_str()
            .is_some_and(|s| s.contains("\"root\":\"..\""))
    );
}

#[test]
fn explain_text_names_root_reason_and_fates() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "A.");
    let out = t.run(&["explain"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("(marker .git)"), "{text}");
    assert!(text.contains("$DSH_HOME"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("AGENTS.md") && l.ends_with("loaded (2 bytes)")),
        "{text}"
    );
    assert!(text.contains("identity"), "{text}");
}

#[test]
fn no_marker_makes_the_cwd_the_root() {
    let t = Tree::new();
    t.write("plain/AGENTS.md", "x");
    let out = t.run(&["explain", "--json", "--cwd", "../plain"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["root"]["reason"]["kind"], "no-marker");
    assert!(
        v["root"]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("/plain"))
    );
}

#[test]
fn check_passes_when_everything_loads_whole() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root.");
    t.write("repo/CLAUDE.md", "Root.\n");
    let out = t.run(&["check"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn check_fails_on_an_over_budget_tree() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", &"r".repeat(300));
    t.write("repo/pkg/AGENTS.md", "Pkg.");
    let out = t.run(&["check", "--cwd", "pkg", "--max-bytes", "400"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    // The broad file is dropped first (R-REN-6 step 2); the specific one stays.
    assert_eq!(
        lines,
        ["AGENTS.md: omitted by budget (300 bytes) (max_bytes 400)"]
    );
}

#[test]
fn check_says_when_loading_is_disabled() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root.");
    let out = t.run(&["check", "--max-bytes", "0"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "AGENTS.md: omitted by budget (5 bytes) (loading disabled: max_bytes <= 0)\n"
    );
    let show = t.run(&["show", "--max-bytes", "-1"]);
    assert_eq!((code(&show), stdout(&show).as_str()), (0, ""));
}

#[test]
fn explain_json_lists_ignored_entries_as_warnings() {
    let t = Tree::new();
    let out = t.run(&["explain", "--json", "--candidates", "AGENTS.md,a/b"]);
    assert_eq!(code(&out), 0);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1));
    assert!(v["warnings"][0].as_str().is_some_and(|w| w.contains("a/b")));
    assert!(stderr(&out).contains("warning: instruction_file_candidates"));
}

#[cfg(unix)]
#[test]
fn non_utf8_dsh_home_is_a_clear_error() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new();
    let out = t
        .cmd(&["show"])
        .env("DSH_HOME", std::ffi::OsStr::from_bytes(b"/tmp/\xff"))
        .output()
        .expect("run");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("DSH_HOME is not valid UTF-8"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_fails_on_a_truncated_file() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", &"r".repeat(600));
    let out = t.run(&["check", "--max-bytes", "400"]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(
        text.starts_with("AGENTS.md: truncated from 600 to "),
        "{text}"
    );
}

#[test]
fn check_fails_on_a_differing_shadowed_claude_md() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    t.write("repo/CLAUDE.md", "Use spaces.");
    let out = t.run(&["check"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "CLAUDE.md: shadowed by AGENTS.md (content differs)\n"
    );
}

/// R-CLI-6: a small shadowed `CLAUDE.md` that only names the winner is the
/// pointer pattern, not a silently ignored file.
#[test]
fn check_passes_on_a_claude_md_pointing_to_agents_md() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    t.write("repo/CLAUDE.md", "@AGENTS.md\n");
    t.write("repo/pkg/AGENTS.md", "Pkg.");
    t.write("repo/pkg/CLAUDE.md", "See ./AGENTS.md for the rules.\n");
    let out = t.run(&["check", "--cwd", "pkg"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // The two pointers are not counted as loaded files; nothing fails.
    assert!(
        stdout(&out).starts_with("ok: 2 instruction file(s) load whole ("),
        "{}",
        stdout(&out)
    );
    let explain = t.run(&["explain", "--cwd", "pkg"]);
    let text = stdout(&explain);
    assert!(
        text.lines()
            .any(|l| l.contains("pkg/CLAUDE.md") && l.ends_with("points to pkg/AGENTS.md")),
        "{text}"
    );
}

/// R-CLI-6: the pointer rule is narrow — a differing sibling that names
/// another file, or is over 512 bytes, still fails `check`.
#[test]
fn check_fails_when_the_shadowed_file_is_not_a_pointer() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    t.write("repo/CLAUDE.md", "See AGENTS.mdx and use spaces.");
    t.write("repo/pkg/AGENTS.md", "Pkg.");
    t.write(
        "repo/pkg/CLAUDE.md",
        &format!("@AGENTS.md\n{}", "x".repeat(502)),
    );
    let out = t.run(&["check", "--cwd", "pkg"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "CLAUDE.md: shadowed by AGENTS.md (content differs)\n\
         pkg/CLAUDE.md: shadowed by pkg/AGENTS.md (content differs)\n"
    );
}

#[test]
fn explain_shows_points_to_in_text_and_json() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    t.write("repo/CLAUDE.md", "@AGENTS.md");
    let text = t.run(&["explain"]);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(
        text.lines().any(|l| l.starts_with(".")
            && l.contains("CLAUDE.md")
            && l.ends_with("  points to AGENTS.md")),
        "{text}"
    );
    let out = t.run(&["explain", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let claude = v["candidates"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["path"] == "CLAUDE.md"))
        .expect("CLAUDE.md row");
    assert_eq!(
        claude["fate"],
        serde_json::json!({"kind": "points-to", "to": "AGENTS.md"})
    );
    assert_eq!(claude["problem"], false);
}

/// R-REN-4 bounds only the model-visible notice: `check` and `explain` still
/// name every omitted file (the tree of
/// conformance/scenarios/budget/deep-chain-and-more.yaml).
#[test]
fn check_and_explain_list_every_file_the_bounded_notice_leaves_out() {
    let t = Tree::new();
    let mut dir = String::from("repo/");
    let mut paths = Vec::new();
    for level in 0..15 {
        if level > 0 {
            dir.push_str(&format!("level-{level:02}/"));
        }
        let content = if level <= 11 {
            format!("rule {level:02} ").repeat(40)[..300].to_owned()
        } else {
            format!("rule {level:02}")
        };
        t.write(&format!("{dir}AGENTS.md"), &content);
        paths.push(format!("{}AGENTS.md", &dir["repo/".len()..]));
    }
    let cwd = dir["repo/".len()..].trim_end_matches('/').to_owned();
    let out = t.run(&["check", "--cwd", &cwd, "--max-bytes", "1500"]);
    assert_eq!(code(&out), 1);
    let expected: Vec<String> = paths[..12]
        .iter()
        .map(|p| format!("{p}: omitted by budget (300 bytes) (max_bytes 1500)"))
        .collect();
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines, expected);

    let out = t.run(&["explain", "--json", "--cwd", &cwd, "--max-bytes", "1500"]);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let omitted: Vec<&str> = v["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter(|c| c["fate"]["kind"] == "omitted-by-budget")
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert_eq!(omitted, paths[..12]);
    let notice = v["budget"]["notice"].as_str().unwrap_or_default();
    assert!(
        notice.ends_with(&format!("{} and 3 more", paths[8])),
        "{notice}"
    );
}

#[test]
fn check_fails_on_a_link_outside_trusted_roots_unless_trusted() {
    let t = Tree::new();
    t.write("outside/rules.md", "Shared.");
    std::os::unix::fs::symlink(t.path("outside/rules.md"), t.path("repo/AGENTS.md"))
        .expect("symlink");
    let out = t.run(&["check"]);
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), "AGENTS.md: outside trusted roots\n");
    let outside = t.path("outside");
    let trusted = t.run(&["check", "--trust", outside.to_str().expect("utf-8")]);
    assert_eq!(code(&trusted), 0, "{}", stdout(&trusted));
}

#[test]
fn usage_and_config_errors_exit_2_with_one_line() {
    let t = Tree::new();
    for args in [
        &["show", "--policy", "last-wins"][..],
        &["show", "--max-source-bytes", "0"][..],
        &["show", "--preset", "vim"][..],
        &["show", "--cwd", "does-not-exist"][..],
        &["session", "prompt", "no-such-session", "hi"][..],
        &["session", "log", "../escape"][..],
    ] {
        let out = t.run(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("dsh-instructions: error: "),
            "{args:?}: {err}"
        );
    }
    let bad_flag = t.run(&["show", "--no-such-flag"]);
    assert_eq!(code(&bad_flag), 2);
}

#[test]
fn bad_settings_yaml_names_file_line_and_key() {
    let t = Tree::new();
    t.write(
        "dsh/settings.yaml",
        "agent_instructions:\n  max_bytes: 100\n  max_byts: 5\n",
    );
    let out = t.run(&["show"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("settings.yaml:3:"), "{err}");
    assert!(err.contains("max_byts"), "{err}");

    t.write(
        "dsh/settings.yaml",
        "agent_instructions:\n  max_bytes: 100\n  max_source_bytes: -1\n",
    );
    let out = t.run(&["show"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("settings.yaml:3: agent_instructions.max_source_bytes"),
        "{err}"
    );
}

#[test]
fn settings_apply_and_flags_win() {
    let t = Tree::new();
    t.write(
        "dsh/settings.yaml",
        "agent_instructions:\n  instruction_file_candidates: [RULES.md]\n  max_bytes: 1234\n",
    );
    t.write("repo/RULES.md", "Rules.");
    t.write("repo/AGENTS.md", "Agents.");
    let out = t.run(&["explain", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["config"]["max_bytes"], 1234);
    assert_eq!(
        v["config"]["instruction_file_candidates"],
        serde_json::json!(["RULES.md"])
    );
    let out = t.run(&["show", "--candidates", "AGENTS.md", "--max-bytes", "4096"]);
    assert!(stdout(&out).contains("Instructions from: AGENTS.md\n\nAgents."));
    assert!(!stdout(&out).contains("Rules."));
}

#[cfg(unix)]
#[test]
fn non_utf8_cwd_is_a_clear_error() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new();
    let out = t
        .cmd(&["show", "--cwd"])
        .arg(std::ffi::OsStr::from_bytes(b"bad\xff"))
        .output()
        .expect("run");
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not valid UTF-8"), "{}", stderr(&out));
}

fn session_log_path(t: &Tree, id: &str) -> PathBuf {
    t.path("dsh")
        .join("sessions")
        .join(id)
        .join("session.jsonl")
}

fn new_session(t: &Tree, cwd: &str) -> String {
    let out = t.run(&["session", "new", "--cwd", cwd]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let id = stdout(&out).trim().to_owned();
    assert!(session_log_path(t, &id).is_file());
    id
}

#[test]
fn a_session_across_processes_sees_an_offline_edit_as_a_replace() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    let id = new_session(&t, ".");

    let first = t.run(&["session", "prompt", &id, "hello"]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert!(stdout(&first).contains("Instructions from: AGENTS.md\n\nUse tabs."));

    // Edited while no process runs.
    t.write("repo/AGENTS.md", "Use spaces.");
    let resume = t.run(&["session", "resume", &id]);
    assert_eq!(code(&resume), 0, "{}", stderr(&resume));
    let want = "<system-reminder>\nUpdated instructions from: AGENTS.md\n\n\
                This file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.\n\n\
                Use spaces.\n</system-reminder>\n";
    assert_eq!(stdout(&resume), want);

    // resume wrote nothing: the next prompt enters the same replace.
    let second = t.run(&["session", "prompt", &id, "again"]);
    assert_eq!(stdout(&second), want);

    let log = std::fs::read_to_string(session_log_path(&t, &id)).expect("log");
    let messages: Vec<Value> = log
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("event json"))
        .filter(|e| e["type"] == "message" && e.get("source").is_some())
        .collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["source"]["baseline"], true);
    assert_eq!(messages[1]["source"]["changes"][0]["action"], "replace");
}

/// R-CLI-5 with the configuration resolved once (in the session's mount,
/// issue 31 item 4): a bad flag on a session command is still an error
/// that names the flag, and the session's log gains nothing.
#[test]
fn a_bad_flag_on_a_session_command_is_named_and_appends_nothing() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Use tabs.");
    let id = new_session(&t, ".");
    let before = std::fs::read_to_string(session_log_path(&t, &id)).expect("log");
    let out = t.run(&["session", "prompt", &id, "hi", "--rules", "nope"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--rules: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
    let after = std::fs::read_to_string(session_log_path(&t, &id)).expect("log");
    assert_eq!(before, after, "nothing appended");
    // The same session still works with good flags.
    let ok = t.run(&["session", "prompt", &id, "hi"]);
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));
}

#[test]
fn a_settings_dsh_home_moves_sessions_for_every_command() {
    let t = Tree::new();
    let moved = t.path("moved");
    t.write(
        "dsh/settings.yaml",
        &format!("agent_instructions:\n  dsh_home: {}\n", moved.display()),
    );
    let id = stdout(&t.run(&["session", "new"])).trim().to_owned();
    assert!(
        moved
            .join("sessions")
            .join(&id)
            .join("session.jsonl")
            .is_file()
    );
    for args in [
        &["session", "log", &id][..],
        &["session", "compact", &id][..],
    ] {
        let out = t.run(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_touch_finds_a_new_directory_and_step_end_enters_it() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root.");
    t.write("repo/sub/AGENTS.md", "Sub.");
    let id = new_session(&t, ".");
    assert_eq!(code(&t.run(&["session", "prompt", &id, "hi"])), 0);

    let touch = t.run(&["session", "touch", &id, "sub/main.rs"]);
    assert_eq!(code(&touch), 0, "{}", stderr(&touch));
    assert!(stdout(&touch).contains("Additional instructions from: sub/AGENTS.md"));

    // A new process re-derives the pending message from the recorded touch.
    let end = t.run(&["session", "step-end", &id]);
    assert_eq!(code(&end), 0, "{}", stderr(&end));
    assert!(stdout(&end).contains("Additional instructions from: sub/AGENTS.md"));

    // Entered now: nothing is pending any more.
    let resume = t.run(&["session", "resume", &id]);
    assert_eq!(stdout(&resume), "");

    let log = t.run(&["session", "log", &id]);
    let text = stdout(&log);
    assert!(
        // A typed touch kept in the log as its own event (decision 0054).
        text.contains("touch read sub/main.rs") && !text.contains("tool touch"),
        "{text}"
    );
    assert!(
        text.contains("message workspace dynamic: set sub/AGENTS.md"),
        "{text}"
    );
}

#[test]
fn compaction_of_the_baseline_brings_a_new_baseline() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root.");
    let id = new_session(&t, ".");
    assert_eq!(code(&t.run(&["session", "prompt", &id, "hi"])), 0);
    let compact = t.run(&["session", "compact", &id]);
    assert_eq!(code(&compact), 0, "{}", stderr(&compact));
    let again = t.run(&["session", "prompt", &id, "again"]);
    assert!(stdout(&again).contains(INTRO));
    let log = stdout(&t.run(&["session", "log", &id]));
    assert!(
        log.lines()
            .any(|l| l.contains("baseline") && l.ends_with("[hidden]")),
        "{log}"
    );
}

#[test]
fn a_torn_tail_is_repaired_on_open() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root.");
    let id = new_session(&t, ".");
    assert_eq!(code(&t.run(&["session", "prompt", &id, "hi"])), 0);
    let path = session_log_path(&t, &id);
    let before = std::fs::read(&path).expect("log");
    let mut torn = before.clone();
    torn.extend_from_slice(b"{\"seq\":99,\"type\":\"tur");
    std::fs::write(&path, &torn).expect("tear");

    let viewer = t.run(&["session", "log", &id]);
    assert_eq!(code(&viewer), 0, "{}", stderr(&viewer));
    assert!(stderr(&viewer).contains("torn final line"));

    let out = t.run(&["session", "touch", &id, "AGENTS.md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("removed a torn final line"),
        "{}",
        stderr(&out)
    );
    let after = std::fs::read_to_string(&path).expect("log");
    assert!(
        after.as_bytes().starts_with(&before),
        "acknowledged events kept"
    );
    assert!(!after.contains("\"tur\n") && !after.contains("\"seq\":99"));
    assert!(after.ends_with('\n'));
    for line in after.lines() {
        serde_json::from_str::<Value>(line).expect("every line is whole JSON");
    }
}

#[test]
fn every_subcommand_help_shows_an_example() {
    let t = Tree::new();
    for sub in [
        &["show"][..],
        &["explain"][..],
        &["check"][..],
        &["session", "new"][..],
        &["session", "prompt"][..],
        &["session", "touch"][..],
        &["session", "step-end"][..],
        &["session", "compact"][..],
        &["session", "resume"][..],
        &["session", "log"][..],
    ] {
        let mut args = sub.to_vec();
        args.push("--help");
        let out = t.run(&args);
        assert_eq!(code(&out), 0, "{sub:?}");
        assert!(stdout(&out).contains("Example:"), "{sub:?}");
    }
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let t = Tree::new();
    // Bigger than any pipe buffer, so the write meets the closed reader.
    t.write("repo/AGENTS.md", &"x".repeat(900_000));
    let mut child = t
        .cmd(&["show", "--max-bytes", "2000000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert_eq!(code(&out), 0);
}

#[test]
fn odd_inputs_never_panic() {
    let t = Tree::new();
    std::fs::write(t.path("dsh/settings.yaml"), b"\xff\xfe garbage").expect("write");
    let out = t.run(&["show"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("settings.yaml"));
    std::fs::remove_file(t.path("dsh/settings.yaml")).expect("rm");
    for args in [
        &["show", "--max-bytes", "-5"][..],
        &["show", "--max-bytes", "1"][..],
        &["explain", "--candidates", ",,..,a/b"][..],
        &["check", "--markers", ""][..],
    ] {
        let out = t.run(args);
        assert!(matches!(code(&out), 0..=2), "{args:?}");
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// Issue 12: `session new --preset claude` then `session prompt` without the
/// flag must compose under the claude preset (same identity, no replacement
/// baseline); a flag given later overrides it and says so.
#[test]
fn a_session_keeps_the_configuration_it_was_created_with() {
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Agents rules.");
    t.write("repo/CLAUDE.md", "Claude rules.");
    let out = t.run(&["session", "new", "--cwd", ".", "--preset", "claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let id = stdout(&out).trim().to_owned();

    let first = t.run(&["session", "prompt", &id, "hello"]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert!(stdout(&first).contains("Instructions from: CLAUDE.md\n\nClaude rules."));
    assert!(
        !stdout(&first).contains("Agents rules."),
        "claude preset only"
    );
    assert!(
        stderr(&first).contains("baseline: set CLAUDE.md"),
        "{}",
        stderr(&first)
    );

    let second = t.run(&["session", "prompt", &id, "again"]);
    assert_eq!(code(&second), 0, "{}", stderr(&second));
    assert_eq!(stdout(&second), "", "same identity: nothing new enters");
    assert!(!stderr(&second).contains("note:"), "{}", stderr(&second));

    let overridden = t.run(&["session", "resume", &id, "--preset", "dsh"]);
    assert_eq!(code(&overridden), 0, "{}", stderr(&overridden));
    assert!(
        stderr(&overridden).contains("note: overriding the configuration session"),
        "{}",
        stderr(&overridden)
    );
    assert!(
        stderr(&overridden)
            .trim_end()
            .contains("was created with: --preset")
    );
    assert!(
        stdout(&overridden).contains("supersedes every earlier one"),
        "another preset is another identity: {}",
        stdout(&overridden)
    );
}

/// The issue #14 layout: a PostHog-like repository whose `CLAUDE.md` is one
/// pointer line to `AGENTS.md`.
fn posthog_like() -> Tree {
    let t = Tree::new();
    t.write(
        "repo/AGENTS.md",
        "# Agents\n\nRun `make test` before committing.\nStyle: @docs/style.md\n",
    );
    t.write("repo/docs/style.md", "Use tabs.");
    t.write(
        "repo/CLAUDE.md",
        "See consolidated agents instructions in @AGENTS.md",
    );
    t
}

#[test]
fn show_with_the_claude_preset_carries_the_imported_agents_md_once() {
    // R-IMP-1, R-IMP-3, R-CFG-10; the claude preset trims each file as
    // Claude Code does (R-HOOK-4), so no blank line runs before an import.
    let t = posthog_like();
    let out = t.run(&["show", "--preset", "claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let section = "Instructions from: CLAUDE.md\n\n\
        See consolidated agents instructions in @AGENTS.md\n\n\
        Imported from: AGENTS.md\n\n\
        # Agents\n\nRun `make test` before committing.\nStyle: @docs/style.md\n\n\
        Imported from: docs/style.md\n\nUse tabs.\n</system-reminder>\n";
    assert!(text.ends_with(section), "{text}");
    assert_eq!(text.matches("Run `make test`").count(), 1, "{text}");
    assert_eq!(text.matches("Use tabs.").count(), 1, "{text}");

    // The same layout without imports: only the pointer line.
    let off = stdout(&t.run(&["show", "--preset", "claude", "--no-imports"]));
    assert!(!off.contains("make test"), "{off}");
    assert!(off.contains("@AGENTS.md"), "{off}");
}

#[test]
fn explain_with_the_claude_preset_shows_the_import_tree() {
    // R-IMP-5
    let t = posthog_like();
    let out = t.run(&["explain", "--preset", "claude"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(".") && l.contains("CLAUDE.md") && l.contains("loaded"))
        .unwrap_or_else(|| panic!("no CLAUDE.md row in {text}"));
    assert!(lines[at + 1].contains("  @AGENTS.md"), "{text}");
    // 66: the imported AGENTS.md trimmed as Claude Code trims it (R-HOOK-4).
    assert!(lines[at + 1].ends_with("expanded (66 bytes)"), "{text}");
    assert!(
        lines[at + 2].contains("    @docs/style.md"),
        "nested import indented deeper: {text}"
    );
    assert!(lines[at + 2].ends_with("expanded (9 bytes)"), "{text}");
    assert!(text.contains("imports on"), "{text}");

    let json: Value = serde_json::from_str(&stdout(
        &t.run(&["explain", "--preset", "claude", "--json"]),
    ))
    .expect("json");
    assert_eq!(json["config"]["imports"], true);
    let claude = json["candidates"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["path"] == "CLAUDE.md"))
        .expect("CLAUDE.md candidate");
    assert_eq!(claude["imports"][0]["path"], "AGENTS.md");
    assert_eq!(claude["imports"][0]["fate"]["kind"], "expanded");
    assert_eq!(claude["imports"][1]["depth"], 2);
    assert_eq!(claude["imports"][1]["path"], "docs/style.md");
}

#[test]
fn check_fails_on_an_import_that_does_not_expand() {
    // R-IMP-5: an import outside the trusted roots fails; a missing one is
    // plain text and does not.
    let t = Tree::new();
    t.write("outside/shared.md", "Shared.");
    t.write(
        "repo/CLAUDE.md",
        "See @../outside/shared.md and @not-a-file",
    );
    let out = t.run(&["check", "--preset", "claude"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "CLAUDE.md: import @../outside/shared.md (../outside/shared.md): outside trusted roots\n"
    );
    let outside = t.path("outside");
    let trusted = t.run(&[
        "check",
        "--preset",
        "claude",
        "--trust",
        outside.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&trusted), 0, "{}", stdout(&trusted));
}

#[test]
fn the_imports_example_of_prompt_shape_md_is_what_show_prints() {
    // docs/prompt-shape.md, "Imported from: blocks" (R-IMP-3).
    const DOC: &str = include_str!("../../../docs/prompt-shape.md");
    let block = DOC
        .split_once("```prompt\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(block, _)| block)
        .expect("a ```prompt block");
    let t = Tree::new();
    t.write(
        "repo/AGENTS.md",
        "Run `make test` before committing.\nStyle: @docs/style.md\n",
    );
    t.write(
        "repo/CLAUDE.md",
        "See consolidated agents instructions in @AGENTS.md",
    );
    t.write("repo/docs/style.md", "Use tabs, not spaces.\n");
    let out = t.run(&["show", "--preset", "claude"]);
    assert_eq!(stdout(&out), format!("{block}\n"));
    assert_eq!(block.len(), 530, "the size the doc states");
}

#[test]
fn a_shadowed_copy_of_an_importing_winner_is_the_same_content() {
    // R-CLI-6 with imports on: the copy matches the winner's own text, not
    // its expanded content.
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Rules: @docs/r.md");
    t.write("repo/CLAUDE.md", "Rules: @docs/r.md");
    t.write("repo/docs/r.md", "Use tabs.");
    let out = t.run(&["check", "--imports"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let explain = stdout(&t.run(&["explain", "--imports"]));
    assert!(
        explain.contains("shadowed by AGENTS.md (same content)"),
        "{explain}"
    );
}

/// R-HOOK-8: `--agent claude` shows what the Claude Code hook delivers —
/// `AGENTS.md` as a per-directory fallback (a superset of Claude's own
/// path-wide rule, which `--preset claude` follows) and the budget of the
/// hook's `config.json`.
#[test]
fn show_with_agent_uses_the_hook_configuration() {
    let t = Tree::new();
    t.write("repo/CLAUDE.md", "root claude rule");
    t.write(
        "repo/AGENTS.md",
        "root agents rule, written for other agents",
    );
    t.write("repo/pkg/AGENTS.md", "pkg agents rule");
    let cwd = t.path("repo/pkg");
    let cwd = cwd.to_str().expect("utf-8");

    let hook = t.run(&["show", "--agent", "claude", "--cwd", cwd]);
    assert_eq!(code(&hook), 0, "{}", stderr(&hook));
    let hook = stdout(&hook);
    assert!(hook.contains("root claude rule"), "{hook}");
    assert!(hook.contains("pkg agents rule"), "{hook}");
    assert!(!hook.contains("written for other agents"), "{hook}");

    let native = stdout(&t.run(&["show", "--preset", "claude", "--cwd", cwd]));
    assert!(native.contains("root claude rule"), "{native}");
    assert!(
        !native.contains("pkg agents rule"),
        "path-wide fallback: {native}"
    );

    // The hook's own configuration file is what `--agent` reads.
    t.write("dsh/hooks/claude/config.json", r#"{"max_bytes": 40}"#);
    let small = stdout(&t.run(&["show", "--agent", "claude", "--cwd", cwd]));
    assert!(
        !small.contains("root claude rule"),
        "budget of config.json: {small}"
    );

    let both = t.run(&["show", "--agent", "claude", "--preset", "claude"]);
    assert_eq!(code(&both), 2, "--agent and --preset conflict");
}

/// R-HOOK-8: `hook doctor` says where the hook's budget gives the model
/// less than a whole file at the current directory, and says nothing of the
/// kind where everything fits.
#[test]
fn hook_doctor_warns_where_the_budget_cuts_a_file() {
    let t = Tree::new();
    t.write("repo/CLAUDE.md", "small rule");
    let fits = stdout(&t.run(&["hook", "doctor", "--agent", "claude"]));
    assert!(fits.contains("fits whole"), "{fits}");
    assert!(!fits.contains("warning: budget"), "{fits}");

    t.write("repo/CLAUDE.md", &"a".repeat(70_000));
    let cut = stdout(&t.run(&["hook", "doctor", "--agent", "claude"]));
    assert!(
        cut.contains("warning: budget: CLAUDE.md: truncated from 70000"),
        "{cut}"
    );
}

/// A project `ws/proj` with instruction files in the directories above it
/// (R-HOOK-8): `ws/CLAUDE.md`, `ws/.claude/CLAUDE.md`, a `ws/CLAUDE.local.md`
/// linking out of its directory, and `CLAUDE.md` in the tree's top.
fn ancestors_tree() -> (Tree, String) {
    let t = Tree::new();
    t.write("CLAUDE.md", "top ancestor rule");
    t.write("ws/CLAUDE.md", "ws ancestor rule");
    t.write("ws/.claude/CLAUDE.md", "ws claude dir rule");
    t.write("ws/secret.md", "never shown");
    t.write("home/elsewhere.md", "not shown either");
    std::os::unix::fs::symlink("../home/elsewhere.md", t.path("ws/CLAUDE.local.md"))
        .expect("symlink");
    std::fs::create_dir_all(t.path("ws/proj/.git")).expect("mkdir");
    t.write("ws/proj/CLAUDE.md", "project rule");
    let cwd = t.path("ws/proj").to_str().expect("utf-8").to_owned();
    (t, cwd)
}

/// Positions of `needles` in `haystack`, each required.
#[track_caller]
fn positions(haystack: &str, needles: &[String]) -> Vec<usize> {
    needles
        .iter()
        .map(|n| {
            haystack
                .find(n.as_str())
                .unwrap_or_else(|| panic!("no {n:?} in {haystack}"))
        })
        .collect()
}

/// R-HOOK-8: `explain --agent claude` and `explain --preset claude` list
/// the files above the project root, by absolute path, broadest first and
/// before the project's own; `show` delivers them in that order; a link out
/// of its directory is not followed. Other files the machine may hold in
/// the tempdir's own ancestors (`/tmp`, `/`) are allowed around them.
#[rstest::rstest]
#[case::agent("--agent")]
#[case::preset("--preset")]
fn explain_and_show_list_the_files_above_the_root(#[case] flag: &str) {
    let (t, cwd) = ancestors_tree();
    let top = t
        .path("")
        .to_str()
        .expect("utf-8")
        .trim_end_matches('/')
        .to_owned();
    let explain = t.run(&["explain", flag, "claude", "--cwd", &cwd]);
    assert_eq!(code(&explain), 0, "{}", stderr(&explain));
    let text = stdout(&explain);
    let row = |path: &str, fate: &str| {
        text.lines()
            .find(|l| l.contains(&format!(" {path} ")))
            .unwrap_or_else(|| panic!("no row for {path} in {text}"))
            .trim_end()
            .ends_with(fate)
    };
    assert!(
        row(&format!("{top}/CLAUDE.md"), "loaded (17 bytes)"),
        "{text}"
    );
    assert!(
        row(&format!("{top}/ws/CLAUDE.md"), "loaded (16 bytes)"),
        "{text}"
    );
    assert!(
        row(&format!("{top}/ws/.claude/CLAUDE.md"), "loaded (18 bytes)"),
        "{text}"
    );
    assert!(
        row(
            &format!("{top}/ws/CLAUDE.local.md"),
            "outside trusted roots"
        ),
        "{text}"
    );
    let rows = positions(
        &text,
        &[
            format!(" {top}/CLAUDE.md "),
            format!(" {top}/ws/CLAUDE.md "),
            format!(" {top}/ws/.claude/CLAUDE.md "),
            format!(" {top}/ws/CLAUDE.local.md "),
            ".              CLAUDE.md ".to_owned(),
        ],
    );
    assert!(rows.is_sorted(), "broadest first: {text}");
    assert!(text.contains("(above root)"), "{text}");

    let show = stdout(&t.run(&["show", flag, "claude", "--cwd", &cwd]));
    let sections = positions(
        &show,
        &[
            format!("Instructions from: {top}/CLAUDE.md\n\ntop ancestor rule"),
            format!("Instructions from: {top}/ws/CLAUDE.md\n\nws ancestor rule"),
            format!("Instructions from: {top}/ws/.claude/CLAUDE.md\n\nws claude dir rule"),
            "Instructions from: CLAUDE.md\n\nproject rule".to_owned(),
        ],
    );
    assert!(sections.is_sorted(), "{show}");
    assert!(
        !show.contains("never shown") && !show.contains("not shown either"),
        "{show}"
    );

    // Without the claude preset nothing above the root is read.
    let dsh = stdout(&t.run(&["show", "--preset", "dsh", "--cwd", &cwd]));
    assert!(!dsh.contains("ancestor rule"), "{dsh}");
}

/// R-HOOK-8: `hook doctor --agent claude` names the files above the project
/// root it finds at the current directory, delivered by the hook.
#[test]
fn hook_doctor_lists_the_files_above_the_root() {
    let (t, cwd) = ancestors_tree();
    let top = t
        .path("")
        .to_str()
        .expect("utf-8")
        .trim_end_matches('/')
        .to_owned();
    let out = stdout(
        &t.cmd(&["hook", "doctor", "--agent", "claude"])
            .current_dir(&cwd)
            .output()
            .expect("run"),
    );
    for (file, fate) in [
        ("CLAUDE.md", "loaded (17 bytes)"),
        ("ws/CLAUDE.md", "loaded (16 bytes)"),
        ("ws/.claude/CLAUDE.md", "loaded (18 bytes)"),
        ("ws/CLAUDE.local.md", "outside trusted roots"),
    ] {
        let want =
            format!("note: above the project root: {top}/{file}: {fate}; delivered by the hook");
        assert!(out.contains(&want), "{want:?} in {out}");
    }
    let codex = stdout(
        &t.cmd(&["hook", "doctor", "--agent", "codex"])
            .current_dir(&cwd)
            .output()
            .expect("run"),
    );
    assert!(!codex.contains("above the project root"), "{codex}");
}
