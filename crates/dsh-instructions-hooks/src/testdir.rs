//! A temporary directory as a UTF-8 path, for the unit tests of every
//! module here (the adapter's side files all live in plain directories),
//! and the answer to one event as a string.

use camino::Utf8PathBuf;
use dsh_home_paths::HomeEnv;

use crate::agent::Agent;
use crate::answer::answer;
use crate::handle::Invocation;

/// The whole answer of `agent` to the event `input` (no newline).
pub(crate) fn respond(agent: Agent, input: &[u8], env: &HomeEnv) -> String {
    let mut out = Vec::new();
    answer(&Invocation::new(agent, input, env), &mut out).expect("printed");
    let text = String::from_utf8(out).expect("utf-8");
    text.strip_suffix('\n').unwrap_or(&text).to_owned()
}

/// A fresh temporary directory, kept while the guard lives.
pub(crate) fn tmp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
    (tmp, dir)
}
