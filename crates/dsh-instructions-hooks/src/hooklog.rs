//! The adapter's own diagnostic log, `$DSH_HOME/hooks/<agent>/hook.log`,
//! one line per invocation, rotated past its size bound (R-HOOK-1: a
//! problem goes here, never to the model).

use std::io::Write as _;

use camino::Utf8Path;

/// The diagnostic log is rotated (one old copy kept) past this size.
const LOG_ROTATE_BYTES: u64 = 1 << 20;

/// The diagnostic log and its one rotated copy, next to the sessions.
pub(crate) const LOG_FILE_NAME: &str = "hook.log";
pub(crate) const OLD_LOG_FILE_NAME: &str = "hook.log.1";

/// Appends one line to the diagnostic log, rotating it past its size bound;
/// a log that cannot be written is silently skipped (R-HOOK-1).
pub(crate) fn log_line(dir: &Utf8Path, line: &str) {
    let path = dir.join(LOG_FILE_NAME);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let _ = std::fs::rename(&path, dir.join(OLD_LOG_FILE_NAME));
    }
    let _ = std::fs::create_dir_all(dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        // One write per line: `writeln!` issues the text and the newline
        // as two writes, which concurrent invocations interleave; a single
        // append-mode write of a short line lands whole.
        // Control characters (a NUL or newline in a cwd, an id) are
        // escaped, so every entry stays one readable line (R-HOOK-10).
        let mut whole = crate::shown::escape_control(line).into_owned();
        whole.push('\n');
        let _ = f.write_all(whole.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testdir::tmp_dir;

    /// Concurrent invocations append to one diagnostic log: each line must
    /// reach it whole (one write per line), never interleaved with another.
    #[test]
    fn concurrent_log_lines_never_interleave() {
        let (_tmp, dir) = tmp_dir();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    for i in 0..300 {
                        log_line(&dir, &format!("line {t} {i} {}", "x".repeat(200)));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let text = std::fs::read_to_string(dir.join("hook.log")).expect("log");
        let mut seen = std::collections::BTreeSet::new();
        for l in text.lines() {
            let parts: Vec<&str> = l.split(' ').collect();
            assert!(
                parts.len() == 4 && parts[0] == "line" && parts[3] == "x".repeat(200),
                "torn line: {l}"
            );
            assert!(
                seen.insert((parts[1].to_owned(), parts[2].to_owned())),
                "twice: {l}"
            );
        }
        assert_eq!(seen.len(), 8 * 300, "lines lost");
    }

    #[test]
    fn a_full_log_is_rotated_keeping_one_old_copy() {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(
            dir.join(LOG_FILE_NAME),
            vec![b'x'; LOG_ROTATE_BYTES as usize + 1],
        )
        .expect("full log");
        log_line(&dir, "after\nrotation");
        assert_eq!(
            std::fs::read_to_string(dir.join(LOG_FILE_NAME)).expect("log"),
            "after\\nrotation\n"
        );
        let old = std::fs::metadata(dir.join(OLD_LOG_FILE_NAME)).expect("old copy");
        assert_eq!(old.len(), LOG_ROTATE_BYTES + 1);
    }
}
