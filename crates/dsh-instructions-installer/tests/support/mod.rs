//! The temporary machine the installer's integration tests share: a home
//! and a project below one temporary root, and a snapshot of everything
//! under it that a byte-for-byte round trip is checked against.

// Each test binary that includes this module uses its own part of it.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use dsh_instructions_installer::{Agent, Locations, Scope, Target};

pub(crate) struct Machine {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) loc: Locations,
}

impl Machine {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let loc = Locations::in_home(tmp.path().join("home"), tmp.path().join("repo"));
        fs::create_dir_all(&loc.home).expect("mkdir");
        fs::create_dir_all(&loc.project).expect("mkdir");
        Self { tmp, loc }
    }

    pub(crate) fn target(&self, agent: Agent, scope: Scope) -> Target<'_> {
        Target {
            agent,
            scope,
            locations: &self.loc,
        }
    }

    /// Every file under the temporary root with its permission bits and
    /// content; a link with its target and what is behind it (the target
    /// file's bits and content, or that it dangles), so a round trip that
    /// loses a mode, retargets a link or writes through it shows here. With
    /// `dirs`, every directory with its bits too (an installer that must
    /// leave no directory behind).
    pub(crate) fn snapshot(&self, dirs: bool) -> Vec<(PathBuf, String)> {
        fn walk(dir: &Path, dirs: bool, out: &mut Vec<(PathBuf, String)>) {
            let Ok(rd) = fs::read_dir(dir) else { return };
            let mut entries: Vec<_> = rd.map(|e| e.expect("entry").path()).collect();
            entries.sort();
            for p in entries {
                if let Ok(to) = fs::read_link(&p) {
                    let behind = if p.is_file() {
                        file_entry(&p)
                    } else {
                        "dangling".to_owned()
                    };
                    out.push((p.clone(), format!("-> {} ({behind})", to.display())));
                } else if p.is_dir() {
                    if dirs {
                        out.push((p.clone(), format!("dir {:04o}", mode(&p))));
                    }
                    walk(&p, dirs, out);
                } else {
                    out.push((p.clone(), file_entry(&p)));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.tmp.path(), dirs, &mut out);
        out
    }
}

/// The permission bits of `path` (through a link: of its target).
pub(crate) fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("meta").permissions().mode() & 0o7777
}

pub(crate) fn read(path: &Path) -> String {
    fs::read_to_string(path).expect("read")
}

fn file_entry(path: &Path) -> String {
    format!("{:04o} {}", mode(path), read(path))
}
