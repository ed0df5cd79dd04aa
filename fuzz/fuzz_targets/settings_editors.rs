//! The installer's settings editors over arbitrary bytes (R-HOOK-10): the
//! first byte picks the agent (Claude's JSON, Codex's TOML, Gemini's JSON
//! with comments), the rest is the settings file. `hook install` then
//! `hook uninstall` must give back every byte, or install must refuse and
//! leave every file as it was; nothing may panic or corrupt a file.
#![no_main]

use std::fs;
use std::path::{Path, PathBuf};

use dsh_instructions_installer::{Agent, Locations, Scope, Target, install, uninstall};
use libfuzzer_sys::fuzz_target;

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.to_string_lossy().ends_with(".dsh-backup") {
                out.push((p.clone(), fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let agent = Agent::ALL[usize::from(pick) % 3];
    let Ok(tmp) = tempfile::tempdir() else { return };
    let loc = Locations {
        home: tmp.path().join("home"),
        codex_home: tmp.path().join("home/.codex"),
        project: tmp.path().join("repo"),
        dsh_home: tmp.path().join("home/.dsh"),
    };
    let target = Target {
        agent,
        scope: Scope::User,
        locations: &loc,
    };
    let files = target.files();
    let path = if agent == Agent::Codex {
        files.native.clone()
    } else {
        files.hooks.clone()
    };
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(&path, text).expect("write");
    let before = snapshot(tmp.path());
    let command = "/opt/dsh-instructions hook --agent x";
    match install(&target, command, false) {
        Err(_) => assert_eq!(snapshot(tmp.path()), before, "a refusal wrote something"),
        Ok(_) => {
            uninstall(&target, false).expect("uninstall after a successful install");
            assert_eq!(snapshot(tmp.path()), before, "install + uninstall lost bytes");
        }
    }
});
