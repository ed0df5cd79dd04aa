//! The installer for Cline CLI (decision 0089): one executable script per
//! event in its hooks directory, nothing else of Cline's touched; a file of
//! that name that is not ours is never overwritten; uninstall gives back
//! every byte; dry runs write nothing; doctor tells what it finds.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use dsh_instructions_hooks::state::config::RuleFormat;
use dsh_instructions_installer::{
    Agent, EventStatus, InstallError, InstallOptions, NativeStatus, Scope, Target, doctor, install,
    install_with, uninstall,
};
use rstest::rstest;

const CMD: &str = "/opt/bin/dsh-instructions hook --agent cline";

mod support;
use support::{Machine, mode};

impl Machine {
    fn user(&self) -> Target<'_> {
        self.target(Agent::Cline, Scope::User)
    }

    fn hooks(&self) -> PathBuf {
        self.loc.home.join(".cline/hooks")
    }

    fn write(&self, path: &Path, text: &str, mode: u32) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

/// Install writes one executable script per event (Cline runs files by
/// their path), each running the hook command; doctor is healthy and says
/// Cline's own loading stays on.
#[test]
fn install_writes_an_executable_script_per_event() {
    let m = Machine::new();
    let before = doctor(&m.user(), CMD).expect("doctor");
    assert!(!before.healthy());
    assert!(
        before
            .events
            .iter()
            .all(|e| e.status == EventStatus::Missing)
    );
    let report = install(&m.user(), CMD, false).expect("install");
    assert!(!report.is_noop());
    let mut names: Vec<String> = fs::read_dir(m.hooks())
        .expect("hooks dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["PostToolUse", "PreToolUse"]);
    for name in names {
        let path = m.hooks().join(&name);
        let text = fs::read_to_string(&path).expect("script");
        assert!(text.starts_with("#!/bin/sh\n"), "{text}");
        assert!(text.contains(&format!("\nexec {CMD}\n")), "{text}");
        assert_eq!(mode(&path) & 0o100, 0o100, "{name} is executable");
    }
    let d = doctor(&m.user(), CMD).expect("doctor");
    assert!(d.healthy(), "{}", d.render());
    assert!(matches!(d.native, NativeStatus::Kept(_)));
    assert!(
        d.render().contains("native loading    on, kept on"),
        "{}",
        d.render()
    );
    assert!(
        d.notes.iter().any(|n| n.contains(".clinerules/")),
        "{:?}",
        d.notes
    );
    let again = install(&m.user(), CMD, false).expect("install");
    assert!(again.is_noop(), "{}", again.summary());
}

/// Uninstall gives back every byte: a hooks directory with a hook of the
/// user's (another extension of the same event, which Cline runs beside
/// ours) comes back as it was, and no backup named after an event — which
/// Cline would run too — is ever left there.
#[rstest]
#[case::fresh(false)]
#[case::beside_a_users_hook(true)]
fn uninstall_restores_every_byte(#[case] users_hook: bool) {
    let m = Machine::new();
    if users_hook {
        m.write(
            &m.hooks().join("PreToolUse.sh"),
            "#!/bin/sh\necho '{}'\n",
            0o750,
        );
        m.write(
            &m.loc.home.join(".cline/data/settings/x.json"),
            "{}\n",
            0o600,
        );
    }
    let before = m.snapshot(true);
    install(&m.user(), CMD, false).expect("install");
    // A moved binary: the scripts are rewritten, no backup made.
    install(
        &m.user(),
        "/moved/dsh-instructions hook --agent cline",
        false,
    )
    .expect("again");
    let in_dir: Vec<String> = fs::read_dir(m.hooks())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        in_dir.iter().all(|n| !n.contains("dsh-backup")),
        "{in_dir:?}"
    );
    uninstall(&m.user(), false).expect("uninstall");
    let after: Vec<_> = m
        .snapshot(true)
        .into_iter()
        // Install made `~/.cline` for its hooks directory and the DSH home
        // for its record; uninstall takes the directories it emptied, and
        // these two, empty, are all that stays.
        .filter(|(p, _)| (users_hook || p != &m.loc.home.join(".cline")) && p != &m.loc.dsh_home)
        .collect();
    assert_eq!(after, before);
    assert!(!m.user().files().state.exists(), "the record is gone");
}

/// A file of the event's name that is not ours is never overwritten: the
/// run fails naming it, and nothing is written.
#[test]
fn a_foreign_file_of_the_name_stops_the_install() {
    let m = Machine::new();
    m.write(
        &m.hooks().join("PostToolUse"),
        "#!/bin/sh\nexec python3 mine.py\n",
        0o755,
    );
    let before = m.snapshot(true);
    let e = install(&m.user(), CMD, false).expect_err("occupied");
    assert!(
        matches!(&e, InstallError::Occupied { path } if path.ends_with("PostToolUse")),
        "{e}"
    );
    assert!(e.to_string().contains(".sh"), "{e}");
    assert_eq!(m.snapshot(true), before);
    let d = doctor(&m.user(), CMD).expect("doctor");
    assert!(!d.healthy());
    assert!(
        d.problems.iter().any(|p| p.contains("is not ours")),
        "{:?}",
        d.problems
    );
    // Uninstall leaves it alone too.
    uninstall(&m.user(), false).expect("uninstall");
    assert_eq!(m.snapshot(true), before);
}

#[test]
fn dry_runs_write_nothing_and_show_the_scripts() {
    let m = Machine::new();
    let before = m.snapshot(true);
    let report = install(&m.user(), CMD, true).expect("dry run");
    assert_eq!(m.snapshot(true), before);
    assert!(
        report.diff().contains(&format!("+exec {CMD}")),
        "{}",
        report.diff()
    );
    install(&m.user(), CMD, false).expect("install");
    let installed = m.snapshot(true);
    let report = uninstall(&m.user(), true).expect("dry run");
    assert!(
        report.diff().contains(&format!("-exec {CMD}")),
        "{}",
        report.diff()
    );
    assert_eq!(m.snapshot(true), installed);
}

/// Doctor: a moved binary is stale, a script that lost its execute bit is
/// one Cline cannot run, both scopes at once run the adapter twice.
#[test]
fn doctor_tells_the_truth() {
    let m = Machine::new();
    install(&m.user(), CMD, false).expect("install");
    let d = doctor(&m.user(), "/new/dsh-instructions hook --agent cline").expect("doctor");
    assert!(!d.healthy());
    assert!(
        d.events.iter().all(
            |e| matches!(&e.status, EventStatus::Stale { detail } if detail.contains("/opt/bin"))
        ),
        "{:?}",
        d.events
    );
    let pre = m.hooks().join("PreToolUse");
    fs::set_permissions(&pre, fs::Permissions::from_mode(0o644)).expect("chmod");
    let d = doctor(&m.user(), CMD).expect("doctor");
    let e = d
        .events
        .iter()
        .find(|e| e.event == "PreToolUse")
        .expect("pre");
    assert!(
        matches!(&e.status, EventStatus::Stale { detail } if detail.contains("not executable")),
        "{:?}",
        e.status
    );
    fs::set_permissions(&pre, fs::Permissions::from_mode(0o755)).expect("chmod");
    install(&m.target(Agent::Cline, Scope::Project), CMD, false).expect("project");
    assert!(m.loc.project.join(".clinerules/hooks/PreToolUse").is_file());
    let d = doctor(&m.user(), CMD).expect("doctor");
    assert!(
        d.problems
            .iter()
            .any(|p| p.contains("also installed at project scope")),
        "{:?}",
        d.problems
    );
}

/// `--rules` writes the hook's configuration beside the scripts, and
/// uninstall takes it out again.
#[test]
fn rules_come_and_go_with_the_scripts() {
    let m = Machine::new();
    let before = m.snapshot(true);
    let options = InstallOptions {
        rules: Some(vec![RuleFormat::Claude]),
        ..Default::default()
    };
    install_with(&m.user(), CMD, &options, false).expect("install");
    let config = m.loc.dsh_home.join("hooks/cline/config.json");
    assert!(
        fs::read_to_string(&config)
            .expect("config")
            .contains("\"claude\"")
    );
    uninstall(&m.user(), false).expect("uninstall");
    assert!(!config.exists());
    let after: Vec<_> = m
        .snapshot(true)
        .into_iter()
        .filter(|(p, _)| {
            !p.starts_with(m.loc.home.join(".cline")) && !p.starts_with(&m.loc.dsh_home)
        })
        .collect();
    assert_eq!(after, before);
}
