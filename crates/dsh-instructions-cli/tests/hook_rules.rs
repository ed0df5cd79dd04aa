//! `hook install --rules` and `hook doctor`'s rule list (R-RULE-7), black
//! box: `HOME`, `DSH_HOME` and `CODEX_HOME` set on the child only.

use std::path::PathBuf;
use std::process::{Command, Output};

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

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.path("repo"))
            .env("HOME", self.path("home"))
            .env("DSH_HOME", self.path("dsh"))
            .env("CODEX_HOME", self.path("home/.codex"))
            .output()
            .expect("run binary")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
