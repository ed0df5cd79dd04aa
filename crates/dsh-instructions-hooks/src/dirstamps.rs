//! The session's remembered directory stamps (decision 0037): what the
//! cap-std provider of one hook process observed about the known
//! directories, in `dirs.stamps` next to the session's log, so the next
//! event proves an unchanged directory with one `statx` instead of opening
//! it and looking up every candidate name again (R-HOOK-6).
//!
//! Derived and disposable: a missing or unreadable file is an empty memory
//! (the event takes the full path once); every fact in it is checked
//! against the filesystem before it is used, so a stale file costs time,
//! never context. A damaged one (unusable, not of this format, or torn) is
//! removed and reported ([`dsh_session_log::side`]). Written with
//! [`dsh_session_log::side::write`] as a cache (not fsync'd), only when the
//! process learned something.

use camino::Utf8Path;
use dsh_instructions_discovery::DirMemory;
use dsh_session_log::side::{self, Durability, Found};

/// File name of the remembered stamps, beside `session.jsonl`.
pub(crate) const DIR_STAMPS_FILE_NAME: &str = "dirs.stamps";

/// The memory `session_dir` holds, or an empty one. Read under the
/// session lock.
pub(crate) fn load(session_dir: &Utf8Path) -> DirMemory {
    let path = session_dir.join(DIR_STAMPS_FILE_NAME);
    let damage = match side::read(&path) {
        Found::Missing => return DirMemory::new(),
        Found::Bytes(bytes) => {
            let memory = DirMemory::decode(&bytes);
            // Every encoding ends its last line; one that decodes to
            // nothing is only the empty memory's own.
            if !bytes.ends_with(b"\n") {
                "torn (no final line break)".to_owned()
            } else if memory.is_empty() && bytes != DirMemory::new().encode() {
                "not directory stamps".to_owned()
            } else {
                return memory;
            }
        }
        Found::Damaged(damage) => damage,
    };
    let _ = side::discard(&path);
    side::report(
        &path,
        &damage,
        "removed; the known directories are looked at afresh",
    );
    DirMemory::new()
}

/// Writes `memory` back when it has news; a failure only costs the next
/// event the full path, so it is not reported.
pub(crate) fn save(session_dir: &Utf8Path, memory: &DirMemory) {
    if !memory.changed() || !session_dir.as_std_path().is_dir() {
        return;
    }
    // Nothing to report to: the hook's log line is already written, and a
    // lost write is only slower.
    let _ = side::write(
        &session_dir.join(DIR_STAMPS_FILE_NAME),
        &memory.encode(),
        Durability::Cache,
    );
}

/// Saves the memory when the event's work is done, whichever way it ends.
pub(crate) struct SaveOnDrop<'a> {
    pub(crate) session_dir: &'a Utf8Path,
    pub(crate) memory: DirMemory,
}

impl SaveOnDrop<'_> {
    /// Saves now and leaves the memory to the operating system: the process
    /// exits right after (`Invocation::exit`).
    pub(crate) fn save_and_leave(self) {
        save(self.session_dir, &self.memory);
        std::mem::forget(self);
    }
}

impl Drop for SaveOnDrop<'_> {
    fn drop(&mut self) {
        save(self.session_dir, &self.memory);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_foreign_file_is_an_empty_memory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8Path::from_path(tmp.path()).expect("utf-8");
        assert!(load(dir).is_empty());
        std::fs::write(dir.join(DIR_STAMPS_FILE_NAME), "garbage\n").expect("write");
        assert!(load(dir).is_empty());
    }

    #[test]
    fn nothing_new_writes_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8Path::from_path(tmp.path()).expect("utf-8");
        save(dir, &DirMemory::new());
        assert!(!dir.join(DIR_STAMPS_FILE_NAME).exists());
    }
}
