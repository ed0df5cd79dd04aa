//! The installer and rules (R-RULE-7): Claude Code's `claudeMdExcludes`
//! also covers the rules the hook takes over, and uninstall gives every
//! byte back.

use std::fs;
use std::path::Path;

use dsh_instructions_installer::{
    Agent, Locations, NativeStatus, Scope, Target, doctor, install, uninstall,
};
use rstest::rstest;
use serde_json::Value;

const CMD: &str = "/opt/bin/dsh-instructions hook --agent claude";

struct Machine {
    _tmp: tempfile::TempDir,
    loc: Locations,
}

fn machine() -> Machine {
    let tmp = tempfile::tempdir().expect("tempdir");
    let loc = Locations::in_home(tmp.path().join("home"), tmp.path().join("repo"));
    fs::create_dir_all(&loc.home).expect("mkdir");
    fs::create_dir_all(&loc.project).expect("mkdir");
    Machine { _tmp: tmp, loc }
}

impl Machine {
    fn target(&self, agent: Agent) -> Target<'_> {
        Target {
            agent,
            scope: Scope::User,
            locations: &self.loc,
        }
    }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn excludes(path: &Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&fs::read_to_string(path).expect("read")).expect("json");
    v["claudeMdExcludes"]
        .as_array()
        .expect("an array")
        .iter()
        .map(|p| p.as_str().expect("a string").to_owned())
        .collect()
}

/// The user's settings, with or without rule patterns of their own: after
/// install every pattern the hook needs is there exactly once (the user's
/// first, in their order), and uninstall gives back the file byte for byte.
#[rstest]
#[case::none("{\n  \"model\": \"opus\"\n}\n")]
#[case::own_patterns("{\"claudeMdExcludes\": [\"vendor/**\", \"**/.claude/rules/**\"]}")]
#[case::empty_list("{\"claudeMdExcludes\": []}\n")]
fn claude_excludes_cover_the_rules_and_uninstall_restores_every_byte(#[case] original: &str) {
    let m = machine();
    let t = m.target(Agent::Claude);
    let path = t.files().hooks;
    write(&path, original);
    install(&t, CMD, false).expect("install");
    let got = excludes(&path);
    let user_rules = format!("{}/.claude/rules/**", m.loc.home.display());
    for want in [
        "**/.claude/rules/**",
        "~/.claude/rules/**",
        user_rules.as_str(),
    ] {
        assert_eq!(
            got.iter().filter(|p| *p == want).count(),
            1,
            "{want} in {got:?}"
        );
    }
    if original.contains("vendor/**") {
        assert_eq!(&got[..2], ["vendor/**", "**/.claude/rules/**"]);
    }
    assert_eq!(doctor(&t, CMD).expect("doctor").native, NativeStatus::Off);
    uninstall(&t, false).expect("uninstall");
    assert_eq!(fs::read_to_string(&path).expect("read"), original);
}

/// Doctor says Claude Code loads the rules itself when a rules pattern is
/// taken out of the settings after install.
#[test]
fn doctor_names_a_missing_rules_exclude() {
    let m = machine();
    let t = m.target(Agent::Claude);
    install(&t, CMD, false).expect("install");
    let path = t.files().hooks;
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&path).expect("read")).unwrap();
    let list = v["claudeMdExcludes"].as_array_mut().expect("array");
    list.retain(|p| p != "**/.claude/rules/**");
    write(&path, &v.to_string());
    match doctor(&t, CMD).expect("doctor").native {
        NativeStatus::On(why) => assert!(why.contains("**/.claude/rules/**"), "{why}"),
        other => panic!("a missing rules exclude is reported: {other:?}"),
    }
}

/// `--rules` (R-RULE-7): install writes `rule_formats` into the hook's
/// `config.json`, which the hook then reads; uninstall gives back the
/// file as it was (absent again, or its bytes), for every agent.
#[rstest]
#[case::absent(Agent::Codex, None)]
#[case::absent_gemini(Agent::Gemini, None)]
#[case::other_keys(Agent::Codex, Some("{\n    \"max_bytes\": 8000\n}\n"))]
#[case::own_formats(Agent::Claude, Some("{\"rule_formats\": [\"windsurf\"]}"))]
fn install_with_rules_writes_the_hook_config_and_uninstall_restores_it(
    #[case] agent: Agent,
    #[case] original: Option<&str>,
) {
    use dsh_instructions_hooks::{config::load_config, state::config::RuleFormat};
    use dsh_instructions_installer::{InstallOptions, install_with};
    let m = machine();
    let t = m.target(agent);
    let dir = m.loc.dsh_home.join("hooks").join(agent.as_str());
    let config = dir.join("config.json");
    if let Some(text) = original {
        write(&config, text);
    }
    let options = InstallOptions {
        rules: Some(vec![RuleFormat::Cursor, RuleFormat::Copilot]),
        ..InstallOptions::default()
    };
    let report = install_with(&t, CMD, &options, false).expect("install");
    assert!(
        report.changes.iter().any(|c| c.path == config),
        "{}",
        report.summary()
    );
    let dir8 = camino::Utf8PathBuf::from_path_buf(dir.clone()).expect("utf-8");
    let resolved = load_config(agent, &dir8)
        .expect("the hook reads it")
        .input
        .resolve()
        .expect("valid")
        .config;
    assert_eq!(
        resolved.rule_formats(),
        [RuleFormat::Cursor, RuleFormat::Copilot]
    );
    if original.is_some_and(|t| t.contains("max_bytes")) {
        // Only the new key was added, in the file's indentation; the
        // user's lines stay as they were.
        let now = fs::read_to_string(&config).expect("read");
        assert!(
            now.starts_with("{\n    \"max_bytes\": 8000,\n    \"rule_formats\""),
            "{now}"
        );
    }
    uninstall(&t, false).expect("uninstall");
    match original {
        None => assert!(!config.exists(), "install made it, uninstall removed it"),
        Some(text) => assert_eq!(fs::read_to_string(&config).expect("read"), text),
    }
}

/// A `config.json` the user edited after install keeps the edit; only
/// `rule_formats`, which install wrote, goes.
#[test]
fn uninstall_after_a_config_edit_takes_out_only_the_rule_formats() {
    use dsh_instructions_hooks::state::config::RuleFormat;
    use dsh_instructions_installer::{InstallOptions, install_with};
    let m = machine();
    let t = m.target(Agent::Codex);
    let options = InstallOptions {
        rules: Some(vec![RuleFormat::Claude]),
        ..InstallOptions::default()
    };
    install_with(&t, CMD, &options, false).expect("install");
    let config = m.loc.dsh_home.join("hooks/codex/config.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
    v["max_bytes"] = 9000.into();
    write(&config, &v.to_string());
    uninstall(&t, false).expect("uninstall");
    let back: Value = serde_json::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(back, serde_json::json!({"max_bytes": 9000}));
}

/// Without `--rules` install leaves the hook's `config.json` alone.
#[test]
fn install_without_rules_leaves_the_hook_config_alone() {
    let m = machine();
    let t = m.target(Agent::Codex);
    let config = m.loc.dsh_home.join("hooks/codex/config.json");
    write(&config, "{\"max_bytes\": 8000}");
    install(&t, CMD, false).expect("install");
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "{\"max_bytes\": 8000}"
    );
    uninstall(&t, false).expect("uninstall");
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "{\"max_bytes\": 8000}"
    );
}

/// The Claude Code hook installed with formats without `claude` says that
/// Claude's own rules then reach the model from nobody; with it, nothing.
#[rstest]
#[case(vec![dsh_instructions_hooks::state::config::RuleFormat::Cursor], true)]
#[case(vec![dsh_instructions_hooks::state::config::RuleFormat::Claude, dsh_instructions_hooks::state::config::RuleFormat::Cursor], false)]
fn claude_without_claude_rules_is_told(
    #[case] formats: Vec<dsh_instructions_hooks::state::config::RuleFormat>,
    #[case] told: bool,
) {
    use dsh_instructions_installer::{InstallOptions, install_with};
    let m = machine();
    let options = InstallOptions {
        rules: Some(formats),
        ..InstallOptions::default()
    };
    let report = install_with(&m.target(Agent::Claude), CMD, &options, false).expect("install");
    let said = report.notes.iter().any(|n| n.contains("leaves out claude"));
    assert_eq!(said, told, "{:?}", report.notes);
}
