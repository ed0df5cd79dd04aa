//! The test machine the agent answer tests share: a project with a few
//! instruction files and a home, and the recorded stdin payloads of
//! `tests/fixtures/<agent>/` placed in it (the harness's `/WORKSPACE` and
//! `/HOME` replaced by the machine's directories).

use camino::Utf8PathBuf;
use serde_json::Value;

use super::answer;
use crate::agent::Agent;
use crate::handle::Invocation;
use dsh_home_paths::HomeEnv;

pub(super) struct Machine {
    _tmp: tempfile::TempDir,
    pub(super) env: HomeEnv,
    pub(super) home: Utf8PathBuf,
    pub(super) project: Utf8PathBuf,
}

impl Machine {
    /// A project `repo/` (a git root with `sub/file.txt`, the root's
    /// `AGENTS.md` and `AGENTS.local.md`, and `files`, each a path below
    /// the project and its text), a home beside it, and the project as the
    /// process's cwd.
    pub(super) fn new(files: &[(&str, &str)]) -> Machine {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
        let project = root.join("repo");
        let home = root.join("home");
        std::fs::create_dir_all(project.join(".git")).expect("mkdir");
        std::fs::create_dir_all(project.join("sub")).expect("mkdir");
        std::fs::create_dir_all(&home).expect("mkdir");
        let common = [
            ("AGENTS.md", "ROOT-AGENTS be kind.\n"),
            ("AGENTS.local.md", "ROOT-LOCAL be brief.\n"),
            ("sub/file.txt", "hello\n"),
        ];
        for (path, text) in common.iter().chain(files) {
            std::fs::write(project.join(path), text).expect("write");
        }
        let env = HomeEnv {
            home: Some(home.clone().into_std_path_buf().into_os_string()),
            dsh_home: Some(home.join(".dsh").into_std_path_buf().into_os_string()),
            cwd: project.clone().into_std_path_buf(),
            account_home: None,
        };
        Machine {
            _tmp: tmp,
            env,
            home,
            project,
        }
    }

    /// The agent's recorded payload `name`, placed in this machine.
    pub(super) fn payload(&self, agent: Agent, name: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/{agent}/hook-stdin.{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("fixture");
        let text = text
            .replace("/WORKSPACE", self.project.as_str())
            .replace("/HOME", self.home.as_str());
        serde_json::from_str(&text).expect("json")
    }

    /// The adapter's answer to `payload` (`event`: named on the command
    /// line, as installed for Copilot), parsed.
    pub(super) fn answer(&self, agent: Agent, event: Option<&str>, payload: &Value) -> Value {
        let mut out = Vec::new();
        let stdin = payload.to_string();
        let call = Invocation {
            event,
            ..Invocation::new(agent, stdin.as_bytes(), &self.env)
        };
        answer(&call, &mut out).expect("printed");
        serde_json::from_slice(&out).expect("json answer")
    }
}
