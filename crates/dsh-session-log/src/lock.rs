//! The session lock (R-LOG-4): an exclusive advisory lock on the sibling file
//! `session.lock`, waited for with a bound by polling with backoff.
//!
//! Why a sibling file and not the log itself: on Windows a lock on a file is
//! mandatory for the locked bytes, so locking `session.jsonl` would make
//! lock-free readers (`read_log_file`, viewers) fail while a writer works;
//! and the lock must exist before the log does, so that `create` holds it
//! from the first byte. The lock file is never written, replaced or removed
//! (removing it would let two writers lock two different files) — with one
//! exception: a `session.lock` that cannot be opened at all (a directory, a
//! dangling link or a file without permission in its place) is a lock no
//! writer can hold, and left there it would stop the session for good. It
//! is set aside and created anew under a second lock,
//! `.session.lock.heal`, and only after the healer opened the lock again
//! under that second lock and failed: of several processes finding it
//! damaged, one replaces it and the others find the new one and lock it
//! (decision 0046). The one window this leaves: a process that opened
//! the old file before it was made unreadable still holds it; mode changes
//! of a lock file while a hook runs are not a damage this guards against.

use std::fs::{File, OpenOptions, TryLockError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};

use crate::{LOCK_FILE_NAME, LogError};

/// How long to wait for the session lock (R-LOG-4).
///
/// ```
/// use std::time::Duration;
/// use dsh_session_log::LockWait;
/// assert_eq!(LockWait::default().bound(), Duration::from_secs(10));
/// assert_eq!(LockWait::no_wait().bound(), Duration::ZERO);
/// assert_eq!(LockWait::up_to(Duration::from_millis(250)).bound().as_millis(), 250);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LockWait {
    bound: Duration,
    /// Counts attempts that found the lock held (see [`LockWait::counting_busy`]).
    busy: Option<&'static AtomicU64>,
}

/// Two waits are equal when their bounds are and they count into the same
/// counter (or neither counts).
impl PartialEq for LockWait {
    fn eq(&self, other: &Self) -> bool {
        self.bound == other.bound
            && match (self.busy, other.busy) {
                (None, None) => true,
                (Some(a), Some(b)) => std::ptr::eq(a, b),
                _ => false,
            }
    }
}

impl Eq for LockWait {}

impl LockWait {
    /// The default bound: long enough for dozens of queued writers, short
    /// enough that a wedged one is reported while someone is still waiting.
    pub const DEFAULT_BOUND: Duration = Duration::from_secs(10);

    /// Wait at most `bound`.
    pub const fn up_to(bound: Duration) -> Self {
        Self { bound, busy: None }
    }

    /// Try once; fail at once when another process holds the lock.
    pub const fn no_wait() -> Self {
        Self::up_to(Duration::ZERO)
    }

    /// The same wait, adding one to `counter` for every attempt that finds
    /// the lock held by another handle. Changes nothing about the wait; it
    /// makes "this waiter tried and is now waiting" an observable state, so a
    /// test can act on it instead of guessing with a sleep.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use dsh_session_log::LockWait;
    /// static BUSY: AtomicU64 = AtomicU64::new(0);
    /// let wait = LockWait::no_wait().counting_busy(&BUSY);
    /// assert_eq!(wait.bound(), LockWait::no_wait().bound());
    /// assert_ne!(wait, LockWait::no_wait());
    /// assert_eq!(BUSY.load(Ordering::SeqCst), 0);
    /// ```
    pub const fn counting_busy(self, counter: &'static AtomicU64) -> Self {
        Self {
            busy: Some(counter),
            ..self
        }
    }

    /// The bound.
    pub const fn bound(&self) -> Duration {
        self.bound
    }
}

impl Default for LockWait {
    fn default() -> Self {
        Self::up_to(Self::DEFAULT_BOUND)
    }
}

/// First and largest pause between attempts. Polling (not a blocking
/// `lock()`) is what makes the wait bounded without a thread that could take
/// the lock after we gave up.
const FIRST_PAUSE: Duration = Duration::from_millis(1);
const MAX_PAUSE: Duration = Duration::from_millis(25);

/// The session lock of one log, held (R-LOG-4): taken before the log is
/// opened, so a writer that finds it has nothing to do under the lock (a
/// hook part answering from a peer's record, for one) never pays for
/// reading the log. [`crate::SessionLog::open_held`] opens the log under
/// it; dropping it releases the lock.
///
/// ```
/// use dsh_session_log::{LockWait, SessionHeader, SessionLock, SessionLog};
/// let tmp = tempfile::tempdir()?;
/// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap();
/// let path = SessionLog::create(dir, SessionHeader::new("s", "/w"))?.path().to_owned();
/// let held = SessionLock::acquire(&path, LockWait::no_wait())?;
/// // Another writer cannot open the log meanwhile.
/// assert!(SessionLog::open_locked(&path, LockWait::no_wait()).is_err());
/// let (log, _report) = SessionLog::open_held(held)?;
/// assert_eq!(log.header().id, "s");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SessionLock {
    log_path: Utf8PathBuf,
    /// The locked `session.lock`; the lock lasts while this is open.
    _file: File,
}

impl SessionLock {
    /// Takes the lock of the log at `log_path` (its sibling
    /// `session.lock`, created when missing, replaced when unusable),
    /// waiting at most `wait`. The log itself is neither opened nor
    /// required to exist.
    ///
    /// # Errors
    /// [`LogError::LockTimeout`] when another writer keeps it past `wait`;
    /// [`LogError::Io`] when the lock file cannot be opened or locked.
    pub fn acquire(log_path: &Utf8Path, wait: LockWait) -> Result<Self, LogError> {
        let file = acquire(&log_path.with_file_name(LOCK_FILE_NAME), wait)?;
        Ok(Self {
            log_path: log_path.to_owned(),
            _file: file,
        })
    }

    /// The log this lock guards.
    pub fn log_path(&self) -> &Utf8Path {
        &self.log_path
    }
}

/// Opens (creating when missing) and exclusively locks `lock_path`; the lock
/// lasts as long as the returned file is open. An unusable `lock_path` is
/// replaced first (see the module's doc).
pub(crate) fn acquire(lock_path: &Utf8Path, wait: LockWait) -> Result<File, LogError> {
    let file = match open(lock_path) {
        Ok(file) => file,
        // Something is there and it cannot be opened: no writer holds it.
        Err(e) if std::fs::symlink_metadata(lock_path).is_ok() => heal(lock_path, wait, &e)?,
        Err(source) => return Err(io_error("open lock file", lock_path, source)),
    };
    hold(file, lock_path, wait)
}

fn open(lock_path: &Utf8Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path)
}

fn io_error(op: &'static str, path: &Utf8Path, source: std::io::Error) -> LogError {
    LogError::Io {
        op,
        path: path.to_owned(),
        source,
    }
}

/// The second lock, held only while an unusable `session.lock` is replaced.
const HEAL_LOCK_FILE_NAME: &str = ".session.lock.heal";

/// Replaces the unusable lock file at `lock_path` (opening it failed with
/// `first`) under the second lock, and opens the new one.
fn heal(lock_path: &Utf8Path, wait: LockWait, first: &std::io::Error) -> Result<File, LogError> {
    let heal_path = lock_path.with_file_name(HEAL_LOCK_FILE_NAME);
    let healer = open(&heal_path).map_err(|e| io_error("open lock file", &heal_path, e))?;
    let healer = hold(healer, &heal_path, wait)?;
    // A peer may have replaced it while we waited: then it opens now.
    let file = match open(lock_path) {
        Ok(file) => file,
        Err(_) => {
            let damage = match crate::side::read(lock_path) {
                crate::side::Found::Damaged(d) => d,
                _ => format!("cannot be opened ({first})"),
            };
            let aside = crate::side::set_aside(lock_path)
                .map_err(|e| io_error("set aside the damaged lock file", lock_path, e))?;
            let file = open(lock_path).map_err(|e| io_error("open lock file", lock_path, e))?;
            crate::side::report(
                lock_path,
                &damage,
                &format!(
                    "set aside as {} and created anew",
                    aside.file_name().unwrap_or("?")
                ),
            );
            file
        }
    };
    drop(healer);
    Ok(file)
}

/// Locks `file` exclusively, waiting at most `wait`.
fn hold(file: File, lock_path: &Utf8Path, wait: LockWait) -> Result<File, LogError> {
    let start = Instant::now();
    let mut pause = FIRST_PAUSE;
    // Waiters started together must not retry in lockstep: spread their
    // pauses by a per-process factor in [0.5, 1.5).
    let spread = 0.5 + f64::from(std::process::id() % 1000) / 1000.0;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) => {
                if let Some(busy) = wait.busy {
                    busy.fetch_add(1, Ordering::SeqCst);
                }
            }
            Err(TryLockError::Error(source)) => return Err(io_error("lock", lock_path, source)),
        }
        let waited = start.elapsed();
        if waited >= wait.bound {
            return Err(LogError::LockTimeout {
                path: lock_path.to_owned(),
                waited,
            });
        }
        let sleep = pause.mul_f64(spread).min(wait.bound - waited);
        std::thread::sleep(sleep.max(Duration::from_micros(100)));
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_handle_times_out_while_first_holds_r_log_4() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join("session.lock");
        let held = acquire(&path, LockWait::no_wait()).expect("first lock");
        // flock locks belong to open file descriptions: a second open in the
        // same process conflicts like another process would.
        match acquire(&path, LockWait::up_to(Duration::from_millis(30))) {
            Err(LogError::LockTimeout { path: p, waited }) => {
                assert_eq!(p, path);
                assert!(waited >= Duration::from_millis(30), "{waited:?}");
            }
            other => panic!("expected LockTimeout, got {other:?}"),
        }
        drop(held);
        acquire(&path, LockWait::no_wait()).expect("free after drop");
    }

    #[test]
    fn counting_busy_counts_attempts_on_a_held_lock_only() {
        static BUSY: AtomicU64 = AtomicU64::new(0);
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join("session.lock");
        let wait = LockWait::no_wait().counting_busy(&BUSY);
        let held = acquire(&path, wait).expect("free lock");
        assert_eq!(BUSY.load(Ordering::SeqCst), 0, "a free lock is not busy");
        assert!(matches!(
            acquire(&path, wait),
            Err(LogError::LockTimeout { .. })
        ));
        assert_eq!(BUSY.load(Ordering::SeqCst), 1, "one attempt, found held");
        drop(held);
        acquire(&path, wait).expect("free after drop");
        assert_eq!(BUSY.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn missing_directory_is_an_io_error_not_a_timeout() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join("nope/session.lock");
        assert!(matches!(
            acquire(&path, LockWait::default()),
            Err(LogError::Io {
                op: "open lock file",
                ..
            })
        ));
    }

    /// R-LOG-4: a directory in the lock's place is set aside and replaced
    /// once, and the replacement excludes like the original: a second
    /// handle still waits for the first.
    #[test]
    fn a_directory_in_the_lock_place_is_replaced_and_still_excludes() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8Path::from_path(tmp.path()).expect("utf-8");
        let path = dir.join("session.lock");
        std::fs::create_dir_all(path.join("x")).expect("mkdir");
        let held = acquire(&path, LockWait::no_wait()).expect("healed lock");
        assert!(path.is_file());
        assert!(matches!(
            acquire(&path, LockWait::up_to(Duration::from_millis(20))),
            Err(LogError::LockTimeout { .. })
        ));
        drop(held);
        acquire(&path, LockWait::no_wait()).expect("free after drop");
        let aside = std::fs::read_dir(dir)
            .expect("read_dir")
            .filter(|e| {
                let n = e.as_ref().expect("entry").file_name();
                crate::side::is_set_aside(n.to_str().expect("utf-8"))
            })
            .count();
        assert_eq!(aside, 1, "set aside once");
        let reports = crate::side::take_reports_under(dir);
        assert_eq!(reports.len(), 1, "{reports:?}");
    }

    /// Racing healers: every thread gets the lock in turn, on one file.
    #[test]
    fn racing_healers_replace_the_lock_once() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8Path::from_path(tmp.path()).expect("utf-8").to_owned();
        let path = dir.join("session.lock");
        std::fs::create_dir(&path).expect("mkdir");
        let inside = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let path = path.clone();
                let inside = inside.clone();
                std::thread::spawn(move || {
                    // A hang guard (decision 0082): six holds of 5 ms.
                    let held =
                        acquire(&path, LockWait::up_to(Duration::from_secs(120))).expect("lock");
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                    std::thread::sleep(Duration::from_millis(5));
                    inside.fetch_sub(1, Ordering::SeqCst);
                    drop(held);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(crate::side::take_reports_under(&dir).len(), 1);
    }
}
