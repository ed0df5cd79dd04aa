//! The installer on temporary directories, per agent (R-HOOK-5): fresh
//! install, merging into files with other hooks and keys, idempotence, one
//! backup, uninstall restoring the original, malformed input, dry run, and
//! what doctor reports.

use std::fs;
use std::path::{Path, PathBuf};

use dsh_instructions_hooks::agents::PARTS;
use dsh_instructions_installer::{
    Agent, EventStatus, InstallError, NativeStatus, Scope, Target, Trust, doctor, install,
    trust_hash, uninstall,
};
use rstest::rstest;
use serde_json::{Value, json};

const CMD: &str = "/opt/bin/dsh-instructions hook --agent";

fn cmd(agent: Agent) -> String {
    format!("{CMD} {agent}")
}

mod support;
use support::{Machine, mode, read};

impl Machine {
    fn user(&self, agent: Agent) -> Target<'_> {
        self.target(agent, Scope::User)
    }

    fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&read(path)).expect("json")
}

fn backup(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.dsh-backup", path.display()))
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
#[case(Agent::Qwen)]
fn fresh_install_makes_doctor_healthy(#[case] agent: Agent) {
    let m = Machine::new();
    let before = doctor(&m.user(agent), &cmd(agent)).expect("doctor");
    assert!(!before.healthy());
    assert!(
        before
            .events
            .iter()
            .all(|e| e.status == EventStatus::Missing)
    );
    let report = install(&m.user(agent), &cmd(agent), false).expect("install");
    assert!(!report.is_noop());
    let files = m.user(agent).files();
    let hooks = json_of(&files.hooks);
    for spec in agent.events() {
        let list = hooks["hooks"][spec.name].as_array().expect("list");
        assert_eq!(list.len(), agent.parts() as usize, "{}", spec.name);
        for (group, command) in list.iter().zip(agent.commands(&cmd(agent))) {
            assert_eq!(group["hooks"][0]["command"], command, "{}", spec.name);
            assert_eq!(group["hooks"][0]["timeout"], agent.timeout_value());
            assert_eq!(group.get("matcher").and_then(Value::as_str), spec.matcher);
        }
    }
    let d = doctor(&m.user(agent), &cmd(agent)).expect("doctor");
    assert!(d.healthy(), "{}", d.render());
    assert_eq!(d.native, NativeStatus::Off);
    // Nothing existed before, so nothing was backed up.
    assert!(!backup(&files.hooks).exists());
}

/// Copilot CLI: one file of our own in `~/.copilot/hooks/`, each event's
/// command naming it (decision 0065), in Copilot's shape; nothing else is
/// touched and doctor says its own loading stays on (decision 0067).
#[test]
fn copilot_install_writes_one_file_of_its_own() {
    let m = Machine::new();
    let t = m.user(Agent::Copilot);
    let report = install(&t, &cmd(Agent::Copilot), false).expect("install");
    let files = t.files();
    assert_eq!(
        files.hooks,
        m.loc.home.join(".copilot/hooks/dsh-instructions.json")
    );
    let written: Vec<&PathBuf> = report.changes.iter().map(|c| &c.path).collect();
    assert_eq!(written, [&files.hooks, &files.state]);
    assert!(
        report.summary().contains("stays on"),
        "{}",
        report.summary()
    );
    let v = json_of(&files.hooks);
    assert_eq!(v["version"], 1);
    let events: Vec<&str> = v["hooks"]
        .as_object()
        .expect("hooks")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        events,
        [
            "sessionStart",
            "userPromptSubmitted",
            "postToolUse",
            "preCompact"
        ]
    );
    for spec in Agent::Copilot.events() {
        assert_eq!(
            v["hooks"][spec.name],
            json!([{"type": "command", "bash": format!("{} --event {}", cmd(Agent::Copilot), spec.name), "timeoutSec": 10}]),
            "{}",
            spec.name
        );
    }
    let d = doctor(&t, &cmd(Agent::Copilot)).expect("doctor");
    assert!(d.healthy(), "{}", d.render());
    assert!(matches!(d.native, NativeStatus::Kept(_)));
    assert!(
        d.render().contains("native loading    on, kept on"),
        "{}",
        d.render()
    );
    uninstall(&t, false).expect("uninstall");
    assert_eq!(m.snapshot(false), Vec::new());
}

/// Qwen Code: Claude Code's shape in `~/.qwen/settings.json`, and
/// `context.fileName` set to the one name no layout holds (decision 0068).
#[test]
fn qwen_install_registers_the_hooks_and_switches_its_loading_off() {
    let m = Machine::new();
    let t = m.user(Agent::Qwen);
    let files = t.files();
    m.write(
        &files.hooks,
        r#"{
  "model": {"name": "mock-model"},
  "context": {"fileName": ["QWEN.md"]}
}
"#,
    );
    let d = doctor(&t, &cmd(Agent::Qwen)).expect("doctor");
    assert!(matches!(d.native, NativeStatus::On(_)), "{}", d.render());
    install(&t, &cmd(Agent::Qwen), false).expect("install");
    let v = json_of(&files.hooks);
    assert_eq!(
        v["context"]["fileName"],
        json!([dsh_instructions_hooks::agents::QWEN_NO_SUCH_FILE])
    );
    assert_eq!(v["model"]["name"], "mock-model");
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["matcher"],
        "read_file|write_file|edit|notebook_edit|grep_search|glob|run_shell_command"
    );
    assert_eq!(
        v["hooks"]["SessionStart"][0]["hooks"][0],
        json!({"type": "command", "command": cmd(Agent::Qwen), "timeout": 10})
    );
    assert_eq!(v["hooks"]["PreCompact"].as_array().map(Vec::len), Some(1));
    let d = doctor(&t, &cmd(Agent::Qwen)).expect("doctor");
    assert!(d.healthy(), "{}", d.render());
    assert!(d.render().contains(".qwen/rules"), "{}", d.render());
}

#[test]
fn claude_merge_keeps_other_hooks_keys_order_and_indent() {
    let m = Machine::new();
    let path = m.user(Agent::Claude).files().hooks;
    let original = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"lint.sh\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"permissions\": {\n        \"allow\": []\n    }\n}\n";
    m.write(&path, original);
    install(&m.user(Agent::Claude), &cmd(Agent::Claude), false).expect("install");
    let text = read(&path);
    // The user's lines come first, unchanged, in their order and indent.
    assert!(
        text.starts_with("{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n"),
        "{text}"
    );
    let v = json_of(&path);
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["model", "hooks", "permissions", "claudeMdExcludes"]);
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "lint.sh"
    );
    assert_eq!(
        v["hooks"]["PostToolUse"][1]["hooks"][0]["command"],
        format!("{} --part 1", cmd(Agent::Claude))
    );
    assert_eq!(
        v["claudeMdExcludes"],
        json!([
            "**/CLAUDE.md",
            "**/AGENTS.md",
            "**/CLAUDE.local.md",
            "**/AGENTS.local.md",
            "**/.claude/rules/**",
            "~/.claude/rules/**",
            format!("{}/.claude/rules/**", m.loc.home.display())
        ])
    );
    assert_eq!(read(&backup(&path)), original);
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
#[case(Agent::Copilot)]
#[case(Agent::Qwen)]
fn second_install_changes_nothing_and_makes_no_second_backup(#[case] agent: Agent) {
    let m = Machine::new();
    let files = m.user(agent).files();
    m.write(&files.hooks, "{\"keep\": true}\n");
    install(&m.user(agent), &cmd(agent), false).expect("install");
    let after_first = m.snapshot(false);
    assert_eq!(read(&backup(&files.hooks)), "{\"keep\": true}\n");
    let again = install(&m.user(agent), &cmd(agent), false).expect("install");
    assert!(again.is_noop(), "{}", again.summary());
    assert_eq!(m.snapshot(false), after_first);
}

#[rstest]
#[case(
    Agent::Claude,
    "{\n  \"claudeMdExcludes\": [\"vendor/**\"],\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  }\n}\n"
)]
#[case(
    Agent::Gemini,
    "{\n  \"context\": {\"fileName\": \"AGENTS.md\"},\n  \"hooks\": {\n    \"AfterTool\": [{\"matcher\": \"x\", \"hooks\": [{\"type\": \"command\", \"command\": \"fmt\"}]}]\n  }\n}\n"
)]
#[case(
    Agent::Qwen,
    "{\n  \"context\": {\"fileName\": [\"QWEN.md\", \"NOTES.md\"]},\n  \"security\": {\"auth\": {\"selectedType\": \"openai\"}},\n  \"hooks\": {\n    \"Stop\": [{\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"say done\", \"timeout\": 30}]}]\n  }\n}\n"
)]
fn uninstall_restores_the_original_and_the_native_setting(
    #[case] agent: Agent,
    #[case] original: &str,
) {
    let m = Machine::new();
    let path = m.user(agent).files().hooks;
    m.write(&path, original);
    install(&m.user(agent), &cmd(agent), false).expect("install");
    assert_ne!(
        json_of(&path),
        serde_json::from_str::<Value>(original).expect("json")
    );
    let report = uninstall(&m.user(agent), false).expect("uninstall");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    assert_eq!(
        json_of(&path),
        serde_json::from_str::<Value>(original).expect("json")
    );
    // The record is gone with the last installation.
    assert!(!m.user(agent).files().state.exists());
    let d = doctor(&m.user(agent), &cmd(agent)).expect("doctor");
    assert!(d.events.iter().all(|e| e.status == EventStatus::Missing));
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
#[case(Agent::Copilot)]
#[case(Agent::Qwen)]
fn uninstall_after_a_fresh_install_removes_what_install_created(#[case] agent: Agent) {
    let m = Machine::new();
    install(&m.user(agent), &cmd(agent), false).expect("install");
    // A second install with a moved binary makes a backup of our own file.
    install(
        &m.user(agent),
        "/moved/dsh-instructions hook --agent x",
        false,
    )
    .expect("install");
    uninstall(&m.user(agent), false).expect("uninstall");
    assert_eq!(m.snapshot(false), Vec::new());
    // The empty agent directory went too; the home stays.
    let agent_dir = m
        .user(agent)
        .files()
        .hooks
        .parent()
        .expect("dir")
        .to_owned();
    assert!(!agent_dir.exists(), "{}", agent_dir.display());
    assert!(m.loc.home.exists());
}

#[test]
fn codex_keeps_the_users_config_and_restores_its_doc_limit() {
    let m = Machine::new();
    let t = m.user(Agent::Codex);
    let files = t.files();
    let original = "# my settings\nmodel = \"gpt\"  # fast\nproject_doc_max_bytes = 4096\n\n[features]\nplugins = false\n";
    m.write(&files.native, original);
    install(&t, &cmd(Agent::Codex), false).expect("install");
    let text = read(&files.native);
    assert!(
        text.starts_with("# my settings\nmodel = \"gpt\"  # fast\nproject_doc_max_bytes = 0\n\n[features]\nplugins = false\n"),
        "{text}"
    );
    assert!(text.contains("trusted_hash = \"sha256:"), "{text}");
    uninstall(&t, false).expect("uninstall");
    assert_eq!(read(&files.native), original);
    assert!(!files.hooks.exists());
}

#[test]
fn codex_trust_is_written_for_each_handler_at_its_position() {
    let m = Machine::new();
    let t = m.user(Agent::Codex);
    let files = t.files();
    // A foreign group first: ours goes second under PostToolUse.
    m.write(
        &files.hooks,
        r#"{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}}"#,
    );
    install(&t, &cmd(Agent::Codex), false).expect("install");
    let config: toml_edit::DocumentMut = read(&files.native).parse().expect("toml");
    for k in 1..=PARTS {
        let key = format!("{}:post_tool_use:{k}:0", files.hooks.display());
        let command = format!("{} --part {k}", cmd(Agent::Codex));
        assert_eq!(
            config["hooks"]["state"][key.as_str()]["trusted_hash"].as_str(),
            Some(trust_hash("PostToolUse", Some("apply_patch|Bash"), &command, 10).as_str())
        );
    }
    let d = doctor(&t, &cmd(Agent::Codex)).expect("doctor");
    assert!(
        d.events.iter().all(|e| e.trust == Some(Trust::Trusted)),
        "{}",
        d.render()
    );
}

#[test]
fn codex_uninstall_moves_the_trust_of_handlers_that_shift() {
    let m = Machine::new();
    let t = m.user(Agent::Codex);
    let files = t.files();
    install(&t, &cmd(Agent::Codex), false).expect("install");
    // The user adds and trusts a group after ours, at index 1.
    let mut hooks = json_of(&files.hooks);
    hooks["hooks"]["UserPromptSubmit"]
        .as_array_mut()
        .expect("array")
        .push(json!({"hooks": [{"type": "command", "command": "log-prompt"}]}));
    m.write(
        &files.hooks,
        &serde_json::to_string_pretty(&hooks).expect("json"),
    );
    let mut config = read(&files.native);
    let theirs = format!("{}:user_prompt_submit:{PARTS}:0", files.hooks.display());
    config.push_str(&format!(
        "\n[hooks.state.\"{theirs}\"]\ntrusted_hash = \"sha256:theirs\"\n"
    ));
    m.write(&files.native, &config);
    uninstall(&t, false).expect("uninstall");
    let config: toml_edit::DocumentMut = read(&files.native).parse().expect("toml");
    let state = config["hooks"]["state"].as_table().expect("state table");
    let keys: Vec<&str> = state.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [format!("{}:user_prompt_submit:0:0", files.hooks.display())]
    );
    assert_eq!(
        state[keys[0]]["trusted_hash"].as_str(),
        Some("sha256:theirs")
    );
    assert_eq!(
        json_of(&files.hooks),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "log-prompt"}]}]}})
    );
}

#[test]
fn codex_project_scope_keeps_trust_in_the_user_config_and_says_the_project_needs_trust() {
    let m = Machine::new();
    let t = m.target(Agent::Codex, Scope::Project);
    let report = install(&t, &cmd(Agent::Codex), false).expect("install");
    assert!(m.loc.project.join(".codex/hooks.json").exists());
    assert!(read(&m.loc.project.join(".codex/config.toml")).contains("project_doc_max_bytes = 0"));
    let user = read(&m.loc.codex_home.join("config.toml"));
    assert!(user.contains(&format!(
        "{}",
        m.loc.project.join(".codex/hooks.json").display()
    )));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("trust_level = \"trusted\""))
    );
    let d = doctor(&t, &cmd(Agent::Codex)).expect("doctor");
    assert!(!d.healthy());
    // Once the user trusts the project, it is healthy.
    let mut user = user;
    user.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        m.loc.project.display()
    ));
    m.write(&m.loc.codex_home.join("config.toml"), &user);
    let d = doctor(&t, &cmd(Agent::Codex)).expect("doctor");
    assert!(d.healthy(), "{}", d.render());
}

#[rstest]
#[case(Agent::Claude, "{\"hooks\": ", "is malformed")]
#[case(Agent::Claude, "{\"hooks\": []}", "`hooks` must be an object")]
#[case(
    Agent::Claude,
    "{\"hooks\": {\"PostToolUse\": 3}}",
    "`hooks.PostToolUse` must be an array"
)]
#[case(
    Agent::Claude,
    "{\"claudeMdExcludes\": \"x\"}",
    "`claudeMdExcludes` must be"
)]
#[case(Agent::Gemini, "{\"context\": 1}", "`context` must be an object")]
#[case(Agent::Codex, "{\"hooks\": {} ", "is malformed")]
fn malformed_settings_fail_and_touch_nothing(
    #[case] agent: Agent,
    #[case] text: &str,
    #[case] want: &str,
) {
    let m = Machine::new();
    let path = m.user(agent).files().hooks;
    m.write(&path, text);
    let before = m.snapshot(false);
    let e = install(&m.user(agent), &cmd(agent), false).unwrap_err();
    assert!(e.to_string().contains(want), "{e}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    assert_eq!(m.snapshot(false), before);
    // Uninstall refuses what it cannot parse and otherwise leaves foreign
    // shapes alone; either way nothing is written.
    let e = uninstall(&m.user(agent), false);
    if want == "is malformed" || want == "`hooks` must be an object" {
        assert!(e.is_err());
    }
    assert_eq!(m.snapshot(false), before);
}

#[test]
fn malformed_codex_config_fails_before_hooks_json_is_written() {
    let m = Machine::new();
    let t = m.user(Agent::Codex);
    m.write(&t.files().native, "model = \n");
    let before = m.snapshot(false);
    let e = install(&t, &cmd(Agent::Codex), false).unwrap_err();
    assert!(matches!(e, InstallError::Malformed { .. }), "{e}");
    assert_eq!(m.snapshot(false), before);
    assert!(doctor(&t, &cmd(Agent::Codex)).is_err());
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
fn dry_run_writes_nothing_and_shows_the_diff(#[case] agent: Agent) {
    let m = Machine::new();
    m.write(&m.user(agent).files().hooks, "{}\n");
    let before = m.snapshot(false);
    let report = install(&m.user(agent), &cmd(agent), true).expect("dry run");
    assert_eq!(m.snapshot(false), before);
    let diff = report.diff();
    assert!(
        diff.contains(&format!("\"command\": \"{}", cmd(agent))),
        "{diff}"
    );
    install(&m.user(agent), &cmd(agent), false).expect("install");
    let installed = m.snapshot(false);
    let report = uninstall(&m.user(agent), true).expect("dry run");
    assert!(
        report
            .diff()
            .contains(&format!("-            \"command\": \"{}", cmd(agent)))
    );
    assert_eq!(m.snapshot(false), installed);
}

#[test]
fn doctor_reports_a_moved_binary_and_native_loading_switched_back_on() {
    let m = Machine::new();
    let t = m.user(Agent::Gemini);
    install(&t, &cmd(Agent::Gemini), false).expect("install");
    let d = doctor(&t, "/new/place/dsh-instructions hook --agent gemini").expect("doctor");
    assert!(matches!(d.events[0].status, EventStatus::Stale { .. }));
    assert!(!d.healthy());
    let path = t.files().hooks;
    let mut v = json_of(&path);
    v["context"]["fileName"] = json!(["AGENTS.md"]);
    m.write(&path, &v.to_string());
    let d = doctor(&t, &cmd(Agent::Gemini)).expect("doctor");
    assert!(
        matches!(&d.native, NativeStatus::On(why) if why.contains("AGENTS.md")),
        "{d:?}"
    );
    assert!(d.render().contains("double delivery possible"));
    // Re-running install is the fix.
    install(&t, &cmd(Agent::Gemini), false).expect("install");
    assert!(doctor(&t, &cmd(Agent::Gemini)).expect("doctor").healthy());
}

#[test]
fn doctor_flags_an_installation_in_both_scopes() {
    let m = Machine::new();
    install(&m.user(Agent::Claude), &cmd(Agent::Claude), false).expect("install");
    install(
        &m.target(Agent::Claude, Scope::Project),
        &cmd(Agent::Claude),
        false,
    )
    .expect("install");
    let d = doctor(&m.user(Agent::Claude), &cmd(Agent::Claude)).expect("doctor");
    assert!(
        d.problems.iter().any(|p| p.contains("twice")),
        "{}",
        d.render()
    );
    assert!(!d.healthy());
    uninstall(&m.target(Agent::Claude, Scope::Project), false).expect("uninstall");
    assert!(
        doctor(&m.user(Agent::Claude), &cmd(Agent::Claude))
            .expect("doctor")
            .healthy()
    );
}

#[test]
fn uninstall_keeps_native_settings_the_user_changed_since() {
    let m = Machine::new();
    let t = m.user(Agent::Codex);
    install(&t, &cmd(Agent::Codex), false).expect("install");
    let native = t.files().native;
    let text = read(&native).replace("project_doc_max_bytes = 0", "project_doc_max_bytes = 123");
    m.write(&native, &text);
    let report = uninstall(&t, false).expect("uninstall");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("changed since install")),
        "{:?}",
        report.notes
    );
    assert!(read(&native).contains("project_doc_max_bytes = 123"));
}

// ---- R-HOOK-10: the round-trip table (issue 18, closing note) ----

/// What a case puts where the agent's settings file goes.
#[derive(Debug, Clone, Copy)]
enum Setup {
    /// A file with these bytes.
    Text(&'static str),
    /// No file.
    Absent,
    /// A symlink to a file with these bytes.
    Link(&'static str),
    /// A symlink to nothing.
    Dangling,
    /// A read-only file with these bytes.
    ReadOnly(&'static str),
    /// A file with these permission bits and bytes (0600: a settings file
    /// holding secrets).
    Mode(u32, &'static str),
}

const COMPACT: &str = r#"{"env": {"A": "1"}}"#;
const CRLF: &str = "{\r\n  \"model\": \"x\",\r\n  \"env\": {\"A\": \"1\"}\r\n}\r\n";
const ESCAPES: &str = "{\n  \"name\": \"caf\\u00e9 \\/ \\\"q\\\"\",\n  \"n\": 1.50\n}";
const COMMENTS: &str = "{\n  // my theme\n  \"theme\": \"dark\", /* inline */\n  \"context\": {\"fileName\": [\"X.md\"],},\n}\n";

/// The file whose bytes a case is about: the settings (Claude, Gemini) or
/// the config.toml (Codex), and what to write there per case.
fn subject(agent: Agent, files: &dsh_instructions_installer::Files) -> PathBuf {
    match agent {
        Agent::Codex => files.native.clone(),
        _ => files.hooks.clone(),
    }
}

fn toml_of(json_case: &'static str) -> &'static str {
    match json_case {
        COMPACT => "model=\"m\"\nhooks={foo=1}",
        CRLF => "# mine\r\nmodel = \"x\"\r\n\r\n[tui]\r\ntheme = \"dark\"\r\n",
        ESCAPES => "name = \"caf\\u00e9\"\nn = 1.50\n",
        COMMENTS => "# top\nproject_doc_max_bytes = 32768 # big\n\n[hooks]\n# none yet\n",
        other => other,
    }
}

#[rstest]
fn install_then_uninstall_gives_back_every_byte(
    #[values(
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Qwen
    )]
    agent: Agent,
    #[values(
        Setup::Text(COMPACT),
        Setup::Text(CRLF),
        Setup::Text(ESCAPES),
        Setup::Text(COMMENTS),
        Setup::Text(""),
        Setup::Absent,
        Setup::Link(COMPACT),
        Setup::Dangling,
        Setup::ReadOnly(COMPACT),
        Setup::Mode(0o600, COMPACT),
        Setup::Mode(0o640, COMMENTS)
    )]
    setup: Setup,
) {
    let m = Machine::new();
    let t = m.user(agent);
    let files = t.files();
    let path = subject(agent, &files);
    let conv = |s: &'static str| if agent == Agent::Codex { toml_of(s) } else { s };
    let real = m.tmp.path().join("dotfiles/settings");
    match setup {
        Setup::Text(s) | Setup::ReadOnly(s) | Setup::Mode(_, s) => m.write(&path, conv(s)),
        Setup::Absent => {}
        Setup::Link(_) | Setup::Dangling => {
            fs::create_dir_all(path.parent().expect("p")).expect("mkdir");
            if let Setup::Link(s) = setup {
                m.write(&real, conv(s));
            }
            std::os::unix::fs::symlink(&real, &path).expect("link");
        }
    }
    if let Setup::ReadOnly(_) = setup {
        let mut p = fs::metadata(&path).expect("meta").permissions();
        p.set_readonly(true);
        fs::set_permissions(&path, p).expect("chmod");
    }
    if let Setup::Mode(bits, _) = setup {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(&path, fs::Permissions::from_mode(bits)).expect("chmod");
    }
    let before = m.snapshot(false);
    // Every file there before, by the path the agent reads (through a
    // link: the target's bits).
    let modes_before: Vec<(PathBuf, u32)> = before
        .iter()
        .filter(|(p, _)| p.exists())
        .map(|(p, _)| (p.clone(), mode(p)))
        .collect();
    let result = install(&t, &cmd(agent), false);
    if let Setup::Dangling = setup {
        let e = result.expect_err("a dangling link is refused").to_string();
        assert!(
            e.contains(&path.display().to_string()) && e.contains("dotfiles/settings"),
            "{e}"
        );
        assert_eq!(m.snapshot(false), before, "nothing written");
        assert!(
            fs::symlink_metadata(&path)
                .expect("link")
                .file_type()
                .is_symlink()
        );
        return;
    }
    result.expect("install");
    let d = doctor(&t, &cmd(agent)).expect("doctor");
    assert!(d.healthy(), "{}", d.render());
    // Install edits contents only: every file keeps its permission bits.
    for (p, bits) in &modes_before {
        assert_eq!(mode(p), *bits, "{} after install, {setup:?}", p.display());
    }
    // A backup is never readable by more than the file it copies.
    let backup = backup(&fs::canonicalize(&path).unwrap_or_else(|_| path.clone()));
    if backup.exists() {
        let original = modes_before
            .iter()
            .find(|(p, _)| *p == path)
            .map_or(0o7777, |(_, bits)| *bits);
        assert_eq!(
            mode(&backup) & !original,
            0,
            "backup {:04o} of a {original:04o} file, {setup:?}",
            mode(&backup)
        );
    }
    if let Setup::Link(_) = setup {
        // The link stays a link to the same file, and the edit is in it.
        assert_eq!(fs::read_link(&path).expect("still a link"), real);
        let wanted = match agent {
            Agent::Codex => "project_doc_max_bytes = 0",
            _ => "dsh-instructions",
        };
        assert!(read(&real).contains(wanted), "{}", read(&real));
    }
    if let Setup::ReadOnly(_) = setup {
        assert!(
            fs::metadata(&path).expect("meta").permissions().readonly(),
            "mode kept"
        );
    }
    uninstall(&t, false).expect("uninstall");
    // Backups stay (they are the user's safety net); every other byte,
    // mode bit and link is back.
    let after: Vec<_> = m
        .snapshot(false)
        .into_iter()
        .filter(|(p, _)| !p.to_string_lossy().ends_with(".dsh-backup"))
        .collect();
    assert_eq!(after, before, "{setup:?}");
    for (p, bits) in &modes_before {
        assert_eq!(mode(p), *bits, "{} after uninstall, {setup:?}", p.display());
    }
    match setup {
        Setup::Link(s) => {
            assert_eq!(fs::read_link(&path).expect("still a link"), real);
            assert_eq!(read(&real), conv(s), "the target's bytes are back");
        }
        Setup::ReadOnly(_) => assert!(
            fs::metadata(&path).expect("meta").permissions().readonly(),
            "read-only after uninstall"
        ),
        Setup::Mode(bits, _) => assert_eq!(mode(&path), bits, "after uninstall"),
        _ => {}
    }
}

#[test]
fn uninstall_after_a_user_edit_keeps_the_edit_and_comments() {
    let m = Machine::new();
    let t = m.user(Agent::Gemini);
    let path = t.files().hooks;
    m.write(&path, COMMENTS);
    install(&t, &cmd(Agent::Gemini), false).expect("install");
    let edited = read(&path).replacen("\"dark\"", "\"light\"", 1);
    m.write(&path, &edited);
    uninstall(&t, false).expect("uninstall");
    assert_eq!(read(&path), COMMENTS.replacen("\"dark\"", "\"light\"", 1));
}

#[test]
fn the_first_backup_is_never_overwritten() {
    let m = Machine::new();
    let t = m.user(Agent::Claude);
    let path = t.files().hooks;
    m.write(&path, COMPACT);
    install(&t, &cmd(Agent::Claude), false).expect("install");
    install(&t, "/moved/dsh-instructions hook --agent claude", false).expect("reinstall");
    uninstall(&t, false).expect("uninstall");
    assert_eq!(read(&backup(&path)), COMPACT);
    assert_eq!(read(&path), COMPACT);
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
#[case(Agent::Copilot)]
#[case(Agent::Qwen)]
fn a_failing_state_write_leaves_every_file_as_it_was(#[case] agent: Agent) {
    let m = Machine::new();
    let t = m.user(agent);
    let files = t.files();
    m.write(
        &subject(agent, &files),
        if agent == Agent::Codex {
            "model = \"m\"\n"
        } else {
            COMPACT
        },
    );
    // A non-empty directory where the installer's record goes: staging
    // works, the final rename fails after the settings were renamed.
    fs::create_dir_all(files.state.join("blocker")).expect("mkdir");
    let before = m.snapshot(false);
    let e = install(&t, &cmd(agent), false).expect_err("the record cannot be written");
    assert!(
        e.to_string().contains(&files.state.display().to_string()),
        "{e}"
    );
    assert_eq!(m.snapshot(false), before);
    // Doctor never calls this healthy: it refuses the blocked record.
    assert!(
        doctor(&t, &cmd(agent)).is_ok_and(|d| !d.healthy()) || doctor(&t, &cmd(agent)).is_err()
    );
}

#[test]
fn doctor_is_not_healthy_over_entries_without_a_record() {
    let m = Machine::new();
    let t = m.user(Agent::Claude);
    install(&t, &cmd(Agent::Claude), false).expect("install");
    fs::remove_file(t.files().state).expect("rm record");
    let d = doctor(&t, &cmd(Agent::Claude)).expect("doctor");
    assert!(!d.healthy());
    assert!(d.render().contains("incomplete"), "{}", d.render());
}

#[rstest]
#[case("install.json")]
#[case("config.json")]
#[case("claude.json")]
fn session_ids_cannot_break_the_installer(#[case] id: &str) {
    let m = Machine::new();
    let t = m.user(Agent::Claude);
    let files = t.files();
    // What an older hook did with such a session id: a store directory at
    // the old record path.
    fs::create_dir_all(files.legacy_state.join("log")).expect("mkdir");
    let cwd = m.loc.project.to_string_lossy().into_owned();
    let event = json!({"session_id": id, "hook_event_name": "SessionStart", "cwd": cwd, "source": "startup"});
    let env = dsh_home_paths::HomeEnv {
        home: Some(m.loc.home.clone().into_os_string()),
        dsh_home: Some(m.loc.dsh_home.clone().into_os_string()),
        cwd: m.loc.project.clone(),
        account_home: None,
    };
    let stdin = event.to_string();
    dsh_instructions_hooks::answer(
        &dsh_instructions_hooks::Invocation::new(Agent::Claude, stdin.as_bytes(), &env),
        &mut Vec::new(),
    )
    .expect("answered");
    install(&t, &cmd(Agent::Claude), false).expect("install");
    assert!(doctor(&t, &cmd(Agent::Claude)).expect("doctor").healthy());
    uninstall(&t, false).expect("uninstall");
    assert!(!files.hooks.exists());
    assert!(
        files.legacy_state.is_dir(),
        "the hook's directory is not ours to remove"
    );
}

#[test]
fn a_legacy_record_is_read_and_moved() {
    let m = Machine::new();
    let t = m.user(Agent::Claude);
    let files = t.files();
    install(&t, &cmd(Agent::Claude), false).expect("install");
    fs::create_dir_all(files.legacy_state.parent().expect("p")).expect("mkdir");
    fs::rename(&files.state, &files.legacy_state).expect("to the old place");
    uninstall(&t, false).expect("uninstall");
    assert!(!files.hooks.exists());
    assert!(!files.legacy_state.exists() && !files.state.exists());
}

#[test]
fn comments_and_inline_tables_are_accepted_and_errors_name_the_line() {
    let m = Machine::new();
    let t = m.user(Agent::Gemini);
    m.write(&t.files().hooks, "{\n  // c\n  \"a\": 1\n  \"b\": 2\n}\n");
    let e = install(&t, &cmd(Agent::Gemini), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3") || e.contains("line 2"), "{e}");
    assert!(e.contains("comments") && e.contains("settings.json"), "{e}");
    let c = m.user(Agent::Codex);
    m.write(&c.files().native, "hooks = { foo = 1 }\n");
    install(&c, &cmd(Agent::Codex), false).expect("an inline table is a table");
    assert!(doctor(&c, &cmd(Agent::Codex)).expect("doctor").healthy());
    uninstall(&c, false).expect("uninstall");
    assert_eq!(read(&c.files().native), "hooks = { foo = 1 }\n");
}

// ---- The settings editors never corrupt (the fuzz target's property, on stable) ----

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    #[test]
    fn prop_install_uninstall_round_trips_or_refuses(
        agent in proptest::prop_oneof![
            proptest::strategy::Just(Agent::Claude),
            proptest::strategy::Just(Agent::Codex),
            proptest::strategy::Just(Agent::Gemini),
            proptest::strategy::Just(Agent::Copilot),
            proptest::strategy::Just(Agent::Qwen)
        ],
        text in proptest::prop_oneof![
            "[ -~\r\n\t]{0,60}",
            proptest::string::string_regex(r#"\{(\s|//[a-z ]*\n)*("[a-z]{1,3}"\s*:\s*(1|"x\\u00e9"|\[\]|\{\}|null)\s*,?\s*)*\}\r?\n?"#).expect("regex"),
            proptest::string::string_regex(r#"([a-z]{1,4} = (1|"v"|\{ a = 1 \})\r?\n|# c\n|\[hooks\]\n|\n){0,5}"#).expect("regex"),
        ],
    ) {
        let m = Machine::new();
        let t = m.user(agent);
        let path = subject(agent, &t.files());
        m.write(&path, &text);
        let before = m.snapshot(false);
        match install(&t, &cmd(agent), false) {
            Err(_) => proptest::prop_assert_eq!(m.snapshot(false), before),
            Ok(_) => {
                proptest::prop_assert!(doctor(&t, &cmd(agent)).is_ok());
                uninstall(&t, false).expect("uninstall after install");
                let after: Vec<_> = m
                    .snapshot(false)
                    .into_iter()
                    .filter(|(p, _)| !p.to_string_lossy().ends_with(".dsh-backup"))
                    .collect();
                proptest::prop_assert_eq!(after, before);
            }
        }
    }
}
