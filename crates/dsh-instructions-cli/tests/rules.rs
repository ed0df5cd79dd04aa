//! Rules in `explain` and `check` (SPEC §14, R-CFG-12): the built binary
//! on temporary trees, `HOME` and `DSH_HOME` set on the child only.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dsh-instructions");

/// `<tmp>/home` is `$HOME`, `<tmp>/home/.dsh` the default DSH home (so
/// `~/.claude/rules` is the user's), `<tmp>/repo` a project with `.git`.
struct Tree {
    tmp: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let tree = Self {
            tmp: tempfile::tempdir().expect("tempdir"),
        };
        for d in ["home/.dsh", "repo/.git"] {
            std::fs::create_dir_all(tree.path(d)).expect("mkdir");
        }
        tree
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.path("repo"))
            .env("HOME", self.path("home"))
            .env_remove("DSH_HOME")
            .output()
            .expect("run binary")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn claude_tree() -> Tree {
    let t = Tree::new();
    t.write("repo/CLAUDE.md", "Root.");
    t.write("repo/.claude/rules/a.md", "Always.");
    t.write(
        "repo/.claude/rules/ts.md",
        "---\npaths: \"src/**/*.{ts,tsx}\"\n---\nTS.",
    );
    t.write("home/.claude/CLAUDE.md", "Mine.");
    t.write("home/.claude/rules/mine.md", "My rule.");
    t
}

/// The rule lines of `explain`'s text, trimmed, without the padding.
fn rule_lines(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("rules "))
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn explain_lists_each_rule_with_its_kind_and_attachment() {
    // R-CFG-12: the claude preset reads `.claude/rules` and
    // `~/.claude/rules`; R-RULE-2 kinds; R-RULE-8 order (user first).
    let t = claude_tree();
    let out = t.run(&["explain", "--preset", "claude"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains("\nrules         claude\n"), "{text}");
    assert_eq!(
        rule_lines(&text),
        [
            "~/.claude/rules/mine.md always on; attached",
            ".claude/rules/a.md always on; attached",
            ".claude/rules/ts.md path-scoped: `src/**/*.{ts,tsx}`; not attached (until a matching touch)",
        ]
    );
    // Without formats there is no rules section at all.
    let plain = stdout(&t.run(&["explain"]));
    assert!(!plain.contains("\nrules "), "{plain}");
}

#[test]
fn explain_touch_shows_what_a_touch_would_attach() {
    // R-RULE-3: the glob is relative to the rule's directory.
    let t = claude_tree();
    let out = t.run(&[
        "explain",
        "--preset",
        "claude",
        "--touch",
        "src/app/x.tsx",
        "README.md",
    ]);
    assert_eq!(code(&out), 0);
    let lines = rule_lines(&stdout(&out));
    let ts = lines
        .iter()
        .find(|l| l.starts_with(".claude/rules/ts.md"))
        .unwrap();
    assert!(ts.ends_with("src/app/x.tsx"), "{ts}");
    assert!(ts.contains("; attached by touch of "), "{ts}");
    assert!(!ts.contains("README.md"), "{ts}");
    let miss = t.run(&["explain", "--preset", "claude", "--touch", "src/x.rs"]);
    let lines = rule_lines(&stdout(&miss));
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with("not attached by these touches")),
        "{lines:?}"
    );
}

#[test]
fn explain_json_carries_rules() {
    let t = claude_tree();
    t.write(
        "repo/.cursor/rules/m.mdc",
        "---\ndescription: ask\n---\nManual.",
    );
    let out = t.run(&[
        "explain",
        "--preset",
        "claude",
        "--rules",
        "claude, cursor",
        "--json",
    ]);
    assert_eq!(code(&out), 0);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        doc["rules"]["formats"],
        serde_json::json!(["claude", "cursor"])
    );
    let files = doc["rules"]["files"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = files
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("~/.claude/rules/mine.md", "always-on"),
            (".claude/rules/a.md", "always-on"),
            (".claude/rules/ts.md", "path-scoped"),
            (".cursor/rules/m.mdc", "manual"),
        ]
    );
    assert_eq!(files[2]["globs"], serde_json::json!(["src/**/*.{ts,tsx}"]));
    assert_eq!(files[3]["attached"], false);
    let none: Value = serde_json::from_str(&stdout(&t.run(&["explain", "--json"]))).unwrap();
    assert_eq!(none["rules"], Value::Null);
}

#[test]
fn check_fails_on_a_rule_that_cannot_load() {
    // R-RULE-2: unavailable with the file and field named.
    let t = Tree::new();
    t.write("repo/AGENTS.md", "Root.");
    t.write("repo/.cursor/rules/ok.mdc", "---\nglobs: *.ts\n---\nOk.");
    let ok = t.run(&["check", "--rules", "cursor"]);
    assert_eq!(code(&ok), 0, "{}", stdout(&ok));
    t.write(
        "repo/.cursor/rules/bad.mdc",
        "---\nalwaysApply: maybe\n---\nx",
    );
    let bad = t.run(&["check", "--rules", "cursor"]);
    assert_eq!(code(&bad), 1);
    assert_eq!(
        stdout(&bad),
        ".cursor/rules/bad.mdc: rule unavailable: alwaysApply: must be a boolean\n"
    );
    // The same tree without rule formats checks clean.
    assert_eq!(code(&t.run(&["check"])), 0);
}

#[test]
fn an_unknown_rule_format_is_a_configuration_error_naming_it() {
    // R-CFG-12
    let t = Tree::new();
    let out = t.run(&["check", "--rules", "claude,zed"]);
    assert_eq!(code(&out), 2);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("\"zed\""), "{err}");
    assert!(err.contains("rule_formats"), "{err}");
}
