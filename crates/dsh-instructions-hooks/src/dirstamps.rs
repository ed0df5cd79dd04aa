//! The session's remembered directory stamps (decision 0037): what the
//! cap-std provider of one hook process observed about the known
//! directories, in `dirs.stamps` next to the session's log, so the next
//! event proves an unchanged directory with one `statx` instead of opening
//! it and looking up every candidate name again (R-HOOK-6).
//!
//! Derived and disposable: a missing or unreadable file is an empty memory
//! (the event takes the full path once); every fact in it is checked
//! against the filesystem before it is used, so a stale file costs time,
//! never context. Written atomically (a fresh temporary name, then a
//! rename), only when the process learned something.

use camino::Utf8Path;
use dsh_instructions_discovery::DirMemory;

/// File name of the remembered stamps, beside `session.jsonl`.
pub(crate) const DIR_STAMPS_FILE_NAME: &str = "dirs.stamps";

/// The memory `session_dir` holds, or an empty one.
pub(crate) fn load(session_dir: &Utf8Path) -> DirMemory {
    std::fs::read(session_dir.join(DIR_STAMPS_FILE_NAME))
        .map_or_else(|_| DirMemory::new(), |bytes| DirMemory::decode(&bytes))
}

/// Writes `memory` back when it has news; a failure only costs the next
/// event the full path, so it is not reported.
pub(crate) fn save(session_dir: &Utf8Path, memory: &DirMemory) {
    if !memory.changed() || !session_dir.as_std_path().is_dir() {
        return;
    }
    let written = tempfile::Builder::new()
        .prefix(".dirs.stamps.")
        .tempfile_in(session_dir)
        .and_then(|mut tmp| {
            std::io::Write::write_all(&mut tmp, &memory.encode())?;
            tmp.persist(session_dir.join(DIR_STAMPS_FILE_NAME))
                .map_err(|e| e.error)?;
            Ok(())
        });
    // Nothing to report to: the hook's log line is already written, and a
    // lost write is only slower.
    let _ = written;
}

/// Saves the memory when the event's work is done, whichever way it ends.
pub(crate) struct SaveOnDrop<'a> {
    pub(crate) session_dir: &'a Utf8Path,
    pub(crate) memory: DirMemory,
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
