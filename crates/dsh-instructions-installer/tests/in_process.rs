//! `hook install --agent pi|opencode` on temporary directories (decision
//! 0086): one file of our own where the agent loads extensions or plugins,
//! loading the Node binding's package by its absolute path; dry run,
//! idempotence, uninstall giving back every byte (also of a file that was
//! there before), `--rules`, and what doctor reports.

use std::fs;
use std::path::{Path, PathBuf};

use dsh_instructions_hooks::state::config::RuleFormat;
use dsh_instructions_installer::{
    Agent, EventStatus, InstallError, InstallOptions, Locations, NativeStatus, Scope, Target,
    doctor_in_process, install_with, uninstall,
};
use rstest::rstest;

struct Machine {
    tmp: tempfile::TempDir,
    loc: Locations,
    package: PathBuf,
}

fn machine() -> Machine {
    let tmp = tempfile::tempdir().expect("tempdir");
    let loc = Locations::in_home(tmp.path().join("home"), tmp.path().join("repo"));
    fs::create_dir_all(&loc.home).expect("mkdir");
    fs::create_dir_all(&loc.project).expect("mkdir");
    // A package as npm installs it: the two integration modules.
    let package = tmp.path().join("npm root/dsh-agent-instructions");
    fs::create_dir_all(package.join("agents")).expect("mkdir");
    for m in ["pi.mjs", "opencode.mjs"] {
        fs::write(package.join("agents").join(m), "export {};\n").expect("write");
    }
    Machine { tmp, loc, package }
}

impl Machine {
    fn target(&self, agent: Agent, scope: Scope) -> Target<'_> {
        Target {
            agent,
            scope,
            locations: &self.loc,
        }
    }

    fn options(&self) -> InstallOptions {
        InstallOptions {
            package: Some(self.package.clone()),
            ..InstallOptions::default()
        }
    }

    /// Every file under the root with its content (the package's left out).
    fn snapshot(&self) -> Vec<(PathBuf, String)> {
        fn walk(dir: &Path, skip: &Path, out: &mut Vec<(PathBuf, String)>) {
            let Ok(rd) = fs::read_dir(dir) else { return };
            let mut entries: Vec<_> = rd.map(|e| e.expect("entry").path()).collect();
            entries.sort();
            for p in entries {
                if p.starts_with(skip) {
                    continue;
                }
                if p.is_dir() {
                    walk(&p, skip, out);
                } else {
                    out.push((p.clone(), fs::read_to_string(&p).expect("read")));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.tmp.path(), &self.package, &mut out);
        out
    }
}

const CMD: &str = "unused for pi and opencode";

#[rstest]
#[case(
    Agent::Pi,
    Scope::User,
    "home/.pi/agent/extensions/dsh-instructions.ts",
    "piExtension"
)]
#[case(
    Agent::Pi,
    Scope::Project,
    "repo/.pi/extensions/dsh-instructions.ts",
    "piExtension"
)]
#[case(
    Agent::Opencode,
    Scope::User,
    "home/.config/opencode/plugin/dsh-instructions.js",
    "opencodePlugin"
)]
#[case(
    Agent::Opencode,
    Scope::Project,
    "repo/.opencode/plugin/dsh-instructions.js",
    "opencodePlugin"
)]
fn install_writes_one_file_that_loads_the_package_and_uninstall_takes_it_away(
    #[case] agent: Agent,
    #[case] scope: Scope,
    #[case] file: &str,
    #[case] factory: &str,
) {
    let m = machine();
    let t = m.target(agent, scope);
    let before = m.snapshot();
    let file = m.tmp.path().join(file);

    let dry = install_with(&t, CMD, &m.options(), true).expect("dry run");
    assert_eq!(m.snapshot(), before, "a dry run writes nothing");
    assert!(dry.diff().contains(factory), "{}", dry.diff());

    let report = install_with(&t, CMD, &m.options(), false).expect("install");
    assert_eq!(report.changes[0].path, file);
    let text = fs::read_to_string(&file).expect("the file");
    let module = m.package.join(format!("agents/{agent}.mjs"));
    assert!(
        text.contains(&format!("import {{ {factory} }} from \"file://")),
        "{text}"
    );
    assert!(text.contains("npm%20root"), "the path is a URL: {text}");
    assert!(module.is_file());
    assert!(
        report
            .summary()
            .contains("own instruction loading stays on")
    );

    let d = doctor_in_process(&t, Some(&m.package)).expect("doctor");
    assert_eq!(d.events.len(), 1);
    assert_eq!(d.events[0].status, EventStatus::Present);
    assert!(matches!(d.native, NativeStatus::Kept(_)));
    assert!(d.healthy(), "{}", d.render());

    let again = install_with(&t, CMD, &m.options(), false).expect("again");
    assert!(again.is_noop(), "{}", again.summary());

    uninstall(&t, false).expect("uninstall");
    assert_eq!(m.snapshot(), before, "uninstall gives back every byte");
    let d = doctor_in_process(&t, Some(&m.package)).expect("doctor");
    assert_eq!(d.events[0].status, EventStatus::Missing);
    assert!(!d.healthy());
}

/// A file of the same name that was there before is kept in a backup and
/// comes back byte for byte; uninstall never removes a file it did not
/// write.
#[rstest]
#[case(Agent::Pi)]
#[case(Agent::Opencode)]
fn a_file_that_was_there_comes_back(#[case] agent: Agent) {
    let m = machine();
    let t = m.target(agent, Scope::User);
    let path = t.files().hooks;
    fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    fs::write(&path, "// my own extension\nexport default () => {};\n").expect("write");
    let before = m.snapshot();
    install_with(&t, CMD, &m.options(), false).expect("install");
    assert!(
        fs::read_to_string(&path)
            .expect("read")
            .starts_with("// dsh-instructions")
    );
    uninstall(&t, false).expect("uninstall");
    // The backup stays (the user's safety net, as for every agent); every
    // other byte is back.
    let backup = PathBuf::from(format!("{}.dsh-backup", path.display()));
    assert_eq!(fs::read_to_string(&backup).expect("backup"), before[0].1);
    fs::remove_file(&backup).expect("rm");
    assert_eq!(m.snapshot(), before);

    // Never installed: uninstall leaves someone else's file alone.
    let report = uninstall(&t, false).expect("uninstall");
    assert!(report.is_noop(), "{}", report.summary());
    assert_eq!(m.snapshot(), before);
}

#[rstest]
#[case(Agent::Pi)]
#[case(Agent::Opencode)]
fn no_package_is_an_error_that_writes_nothing(#[case] agent: Agent) {
    let m = machine();
    let t = m.target(agent, Scope::User);
    let before = m.snapshot();
    let none = InstallOptions {
        package: Some(m.tmp.path().join("nowhere")),
        ..InstallOptions::default()
    };
    let e = install_with(&t, CMD, &none, false).expect_err("no package");
    assert!(matches!(e, InstallError::NoPackage { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("npm install -g dsh-agent-instructions"),
        "{e}"
    );
    assert_eq!(m.snapshot(), before);
}

/// Doctor: a file whose package is gone, or written for another package,
/// is stale; one in both scopes is a problem.
#[test]
fn doctor_tells_stale_and_twice() {
    let m = machine();
    let user = m.target(Agent::Opencode, Scope::User);
    install_with(&user, CMD, &m.options(), false).expect("install");
    let elsewhere = m.tmp.path().join("other/dsh-agent-instructions");
    fs::create_dir_all(elsewhere.join("agents")).expect("mkdir");
    fs::write(elsewhere.join("agents/opencode.mjs"), "").expect("write");
    let d = doctor_in_process(&user, Some(&elsewhere)).expect("doctor");
    assert!(
        matches!(d.events[0].status, EventStatus::Stale { .. }),
        "{}",
        d.render()
    );
    let project = m.target(Agent::Opencode, Scope::Project);
    install_with(&project, CMD, &m.options(), false).expect("install");
    let d = doctor_in_process(&user, Some(&m.package)).expect("doctor");
    assert!(
        d.problems.iter().any(|p| p.contains("twice")),
        "{}",
        d.render()
    );
    fs::remove_dir_all(&m.package).expect("rm");
    let d = doctor_in_process(&user, None).expect("doctor");
    assert!(
        matches!(&d.events[0].status, EventStatus::Stale { detail } if detail.contains("gone")),
        "{}",
        d.render()
    );
}

/// `--rules` writes the formats into the integration's config.json (which
/// the extension and the plugin lay over the profile), and uninstall takes
/// them out again.
#[test]
fn rules_go_into_the_config_json_the_extension_reads() {
    let m = machine();
    let t = m.target(Agent::Pi, Scope::User);
    let before = m.snapshot();
    let options = InstallOptions {
        rules: Some(vec![RuleFormat::Claude]),
        ..m.options()
    };
    install_with(&t, CMD, &options, false).expect("install");
    let config = m.loc.dsh_home.join("hooks/pi/config.json");
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&config).expect("config")).expect("json");
    assert_eq!(v["rule_formats"], serde_json::json!(["claude"]));
    uninstall(&t, false).expect("uninstall");
    assert_eq!(m.snapshot(), before);
}

/// The extension and the plugin, loaded without settings (`pi -e
/// …/agents/pi.mjs`), start from the same configuration as the file
/// install writes: their default is the profile's, field by field.
#[rstest]
#[case(Agent::Pi, "agents/pi.mts", "PI_CONFIG")]
#[case(Agent::Opencode, "agents/opencode.mts", "OPENCODE_CONFIG")]
fn the_binding_defaults_are_the_profiles(
    #[case] agent: Agent,
    #[case] file: &str,
    #[case] name: &str,
) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../dsh-agent-instructions-node")
        .join(file);
    let text = fs::read_to_string(&path).expect("the binding's source");
    let start = format!("export const {name}: Record<string, unknown> = ");
    let json = text
        .split_once(&start)
        .and_then(|(_, rest)| rest.split_once("};"))
        .map(|(object, _)| format!("{object}}}"))
        .expect("the constant");
    let default: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let profile =
        serde_json::to_value(dsh_instructions_hooks::config::hook_preset(agent)).expect("json");
    assert_eq!(default, profile);
}
