//! R-RULE-7: the Claude Code hook takes `.claude/rules` (and the user's
//! `~/.claude/rules`) over from Claude, so it must give at least what
//! Claude gives: always-on rules at session start, path-scoped rules on
//! every touch kind (not only `Read`), each once, and both again after a
//! compaction: the always-on ones in its complete baseline, the path-scoped
//! ones on the next matching touch (R-RULE-8: a rule is attached only while
//! its `set` is visible). Whole events through [`answer`], on a real
//! directory.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::HomeEnv;
use dsh_instructions_hooks::{Agent, Invocation, answer};
use rstest::rstest;
use serde_json::{Value, json};

struct Machine {
    _tmp: tempfile::TempDir,
    env: HomeEnv,
    project: Utf8PathBuf,
}

fn write(path: &Utf8Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A project with an always-on and a path-scoped rule, the user's rules
/// directory with one of each too, and files to touch.
fn machine() -> Machine {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
    let project = root.join("repo");
    let home = root.join("home");
    std::fs::create_dir_all(project.join(".git")).expect("mkdir");
    write(&project.join("CLAUDE.md"), "ROOT-FILE\n");
    write(&project.join(".claude/rules/always.md"), "ALWAYS-RULE\n");
    write(
        &project.join(".claude/rules/ts.md"),
        "---\npaths: \"src/**/*.ts\"\n---\nTS-RULE\n",
    );
    write(&home.join(".claude/CLAUDE.md"), "USER-FILE\n");
    write(&home.join(".claude/rules/mine.md"), "USER-ALWAYS\n");
    write(
        &home.join(".claude/rules/lib.md"),
        "---\npaths: \"src/lib/**\"\n---\nUSER-LIB\n",
    );
    write(&project.join("src/a.ts"), "a\n");
    write(&project.join("src/b.rs"), "b\n");
    write(&project.join("src/lib/c.ts"), "c\n");
    let env = HomeEnv {
        home: Some(home.clone().into_std_path_buf().into_os_string()),
        dsh_home: Some(home.join(".dsh").into_std_path_buf().into_os_string()),
        cwd: project.clone().into_std_path_buf(),
        account_home: None,
    };
    Machine {
        _tmp: tmp,
        env,
        project,
    }
}

impl Machine {
    /// The context one event's answer gives the model (empty for `{}`).
    fn context(&self, mut event: Value) -> String {
        event["session_id"] = "rules-1".into();
        event["cwd"] = self.project.as_str().into();
        event["transcript_path"] = "/nowhere/rules-1.jsonl".into();
        let stdin = event.to_string();
        let mut out = Vec::new();
        answer(
            &Invocation::new(Agent::Claude, stdin.as_bytes(), &self.env),
            &mut out,
        )
        .expect("printed");
        let answer = String::from_utf8(out).expect("utf-8");
        let value: Value = serde_json::from_str(&answer).expect("the answer is JSON");
        value
            .pointer("/hookSpecificOutput/additionalContext")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    fn start(&self, source: &str) -> String {
        self.context(json!({"hook_event_name": "SessionStart", "source": source}))
    }

    /// A `PostToolUse` of `tool` naming `rel` as Claude Code sends it.
    fn tool(&self, tool: &str, rel: &str) -> String {
        let path = self.project.join(rel);
        let input = match tool {
            "Read" => json!({"file_path": path}),
            "Write" => json!({"file_path": path, "content": "x\n"}),
            "Edit" => json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            "Grep" => json!({"pattern": "x", "path": path}),
            "Bash" => json!({"command": format!("cat {rel}")}),
            other => panic!("no input for {other}"),
        };
        self.context(json!({
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_response": {},
            "tool_use_id": "toolu_1",
        }))
    }
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// Start, a non-matching touch, the matching touch of `tool`, the same
/// touch again, then a compaction and the touch once more: the always-on
/// rules (the project's and the user's) at start, the path-scoped one once
/// with its globs named, and both again after the compaction.
#[rstest]
#[case::read("Read")]
#[case::write("Write")]
#[case::edit("Edit")]
#[case::grep("Grep")]
#[case::bash("Bash")]
fn claude_rules_at_start_on_every_touch_kind_and_after_compaction(#[case] tool: &str) {
    let m = machine();
    let start = m.start("startup");
    for want in ["ROOT-FILE", "ALWAYS-RULE", "USER-FILE", "USER-ALWAYS"] {
        assert_eq!(count(&start, want), 1, "{want} at start:\n{start}");
    }
    assert!(!start.contains("TS-RULE"), "{start}");
    assert!(!start.contains("USER-LIB"), "{start}");
    // The user's rules sit after ~/.claude/CLAUDE.md, before the project.
    let at = |s: &str| start.find(s).expect("present");
    assert!(at("USER-FILE") < at("USER-ALWAYS") && at("USER-ALWAYS") < at("ROOT-FILE"));

    let other = m.tool(tool, "src/b.rs");
    assert!(
        !other.contains("TS-RULE"),
        "{tool} of a non-matching file:\n{other}"
    );

    let touch = m.tool(tool, "src/a.ts");
    assert_eq!(
        count(&touch, "TS-RULE"),
        1,
        "{tool} of a matching file:\n{touch}"
    );
    assert!(
        touch.contains("These instructions apply to files matching `src/**/*.ts` under `.`."),
        "{touch}"
    );
    assert!(!touch.contains("ALWAYS-RULE"), "{touch}");

    let again = m.tool(tool, "src/a.ts");
    assert!(!again.contains("TS-RULE"), "attached once:\n{again}");

    // A compaction hides every workspace message (R-HOOK-3): the complete
    // baseline holds the always-on rules again; the path-scoped one, no
    // longer visible, is no longer attached (R-RULE-8) and the next
    // matching touch attaches it again, once — where Claude Code, by its
    // documentation, would not re-send it at all.
    let compact = m.start("compact");
    for want in ["ROOT-FILE", "ALWAYS-RULE", "USER-FILE", "USER-ALWAYS"] {
        assert_eq!(
            count(&compact, want),
            1,
            "{want} after compaction:\n{compact}"
        );
    }
    assert!(!compact.contains("TS-RULE"), "{compact}");
    let after = m.tool(tool, "src/a.ts");
    assert_eq!(
        count(&after, "TS-RULE"),
        1,
        "{tool} after compaction:\n{after}"
    );
    assert!(!m.tool(tool, "src/a.ts").contains("TS-RULE"));
}

/// A path-scoped rule of the user's `~/.claude/rules` takes its globs
/// relative to the project root and attaches on an `Edit`.
#[test]
fn a_user_path_scoped_rule_attaches_on_an_edit_below_the_project_root() {
    let m = machine();
    m.start("startup");
    let touch = m.tool("Edit", "src/lib/c.ts");
    assert_eq!(count(&touch, "USER-LIB"), 1, "{touch}");
    assert_eq!(count(&touch, "TS-RULE"), 1, "{touch}");
    assert!(
        touch.contains("Additional instructions from: ~/.claude/rules/lib.md"),
        "{touch}"
    );
    let compact = m.start("compact");
    assert!(compact.contains("USER-ALWAYS") && !compact.contains("USER-LIB"));
    let after = m.tool("Read", "src/lib/c.ts");
    assert_eq!(count(&after, "USER-LIB"), 1, "{after}");
}
