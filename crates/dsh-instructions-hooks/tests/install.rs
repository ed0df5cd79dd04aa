//! The installer on temporary directories, per agent (R-HOOK-5): fresh
//! install, merging into files with other hooks and keys, idempotence, one
//! backup, uninstall restoring the original, malformed input, dry run, and
//! what doctor reports.

use std::fs;
use std::path::{Path, PathBuf};

use dsh_instructions_hooks::{
    Agent, EventStatus, HookError, Locations, NativeStatus, PARTS, Scope, Target, Trust, doctor,
    install, trust_hash, uninstall,
};
use rstest::rstest;
use serde_json::{Value, json};

const CMD: &str = "/opt/bin/dsh-instructions hook --agent";

fn cmd(agent: Agent) -> String {
    format!("{CMD} {agent}")
}

struct Machine {
    tmp: tempfile::TempDir,
    loc: Locations,
}

impl Machine {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let loc = Locations {
            home: tmp.path().join("home"),
            codex_home: tmp.path().join("home/.codex"),
            project: tmp.path().join("repo"),
            dsh_home: tmp.path().join("home/.dsh"),
        };
        fs::create_dir_all(&loc.home).expect("mkdir");
        fs::create_dir_all(&loc.project).expect("mkdir");
        Self { tmp, loc }
    }

    fn target(&self, agent: Agent, scope: Scope) -> Target<'_> {
        Target {
            agent,
            scope,
            locations: &self.loc,
        }
    }

    fn user(&self, agent: Agent) -> Target<'_> {
        self.target(agent, Scope::User)
    }

    fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    /// Every file under the temporary root with its content.
    fn snapshot(&self) -> Vec<(PathBuf, String)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
            let Ok(rd) = fs::read_dir(dir) else { return };
            let mut entries: Vec<_> = rd.map(|e| e.expect("entry").path()).collect();
            entries.sort();
            for p in entries {
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.push((p.clone(), fs::read_to_string(&p).expect("read")));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.tmp.path(), &mut out);
        out
    }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).expect("read")
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
            "**/AGENTS.local.md"
        ])
    );
    assert_eq!(read(&backup(&path)), original);
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
fn second_install_changes_nothing_and_makes_no_second_backup(#[case] agent: Agent) {
    let m = Machine::new();
    let files = m.user(agent).files();
    m.write(&files.hooks, "{\"keep\": true}\n");
    install(&m.user(agent), &cmd(agent), false).expect("install");
    let after_first = m.snapshot();
    assert_eq!(read(&backup(&files.hooks)), "{\"keep\": true}\n");
    let again = install(&m.user(agent), &cmd(agent), false).expect("install");
    assert!(again.is_noop(), "{}", again.summary());
    assert_eq!(m.snapshot(), after_first);
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
    assert_eq!(m.snapshot(), Vec::new());
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
    let before = m.snapshot();
    let e = install(&m.user(agent), &cmd(agent), false).unwrap_err();
    assert!(e.to_string().contains(want), "{e}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    assert_eq!(m.snapshot(), before);
    // Uninstall refuses what it cannot parse and otherwise leaves foreign
    // shapes alone; either way nothing is written.
    let e = uninstall(&m.user(agent), false);
    if want == "is malformed" || want == "`hooks` must be an object" {
        assert!(e.is_err());
    }
    assert_eq!(m.snapshot(), before);
}

#[test]
fn malformed_codex_config_fails_before_hooks_json_is_written() {
    let m = Machine::new();
    let t = m.user(Agent::Codex);
    m.write(&t.files().native, "model = \n");
    let before = m.snapshot();
    let e = install(&t, &cmd(Agent::Codex), false).unwrap_err();
    assert!(matches!(e, HookError::Malformed { .. }), "{e}");
    assert_eq!(m.snapshot(), before);
    assert!(doctor(&t, &cmd(Agent::Codex)).is_err());
}

#[rstest]
#[case(Agent::Claude)]
#[case(Agent::Codex)]
#[case(Agent::Gemini)]
fn dry_run_writes_nothing_and_shows_the_diff(#[case] agent: Agent) {
    let m = Machine::new();
    m.write(&m.user(agent).files().hooks, "{}\n");
    let before = m.snapshot();
    let report = install(&m.user(agent), &cmd(agent), true).expect("dry run");
    assert_eq!(m.snapshot(), before);
    let diff = report.diff();
    assert!(
        diff.contains(&format!("\"command\": \"{}", cmd(agent))),
        "{diff}"
    );
    install(&m.user(agent), &cmd(agent), false).expect("install");
    let installed = m.snapshot();
    let report = uninstall(&m.user(agent), true).expect("dry run");
    assert!(
        report
            .diff()
            .contains(&format!("-            \"command\": \"{}", cmd(agent)))
    );
    assert_eq!(m.snapshot(), installed);
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
