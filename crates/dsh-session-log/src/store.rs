//! The writable log: atomic create, open with repair under the session
//! lock, durable append, checkpoints.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};

use camino::{Utf8Path, Utf8PathBuf};

use crate::checkpoint::{self, Checkpoint};
use crate::event::{Event, EventKind, SCHEMA_VERSION, SessionHeader, encode_event, encode_header};
use crate::lock::{LockWait, SessionLock};
use crate::parse::{ScanStart, SkippedLine, TornTail, read_log, scan_events, split_header};
use crate::summary::SurfaceSummary;
use crate::{LOG_FILE_NAME, LogError, surface};

/// What [`SessionLog::open`] found and repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// The torn final line that was truncated away.
    pub truncated: Option<TornTail>,
    /// Unreadable complete lines that were skipped (left in the file), in the
    /// whole log: those before the checkpoint are remembered by it.
    pub skipped: Vec<SkippedLine>,
    /// Sequence number of the `interrupted` event appended to close an open
    /// turn.
    pub interrupted: Option<u64>,
    /// The open started from a valid checkpoint (R-LOG-5); `false` when there
    /// was none or it was stale or unreadable, and the log was read whole.
    pub from_checkpoint: bool,
    /// Bytes of the log the open read and parsed: those after the checkpoint,
    /// or the whole file.
    pub bytes_read: u64,
}

impl OpenReport {
    /// Nothing was repaired or skipped.
    pub fn is_clean(&self) -> bool {
        self.truncated.is_none() && self.skipped.is_empty() && self.interrupted.is_none()
    }
}

/// A checkpoint is written once this many bytes were appended since the last
/// one: an open then parses at most about this much, whatever the history.
pub const CHECKPOINT_AFTER_BYTES: u64 = 8 * 1024;

/// An open, writable session log holding the session lock (R-LOG-4).
///
/// Between [`SessionLog::open`] (or [`SessionLog::create`]) and drop, this
/// value holds an exclusive lock on the session, so no other writer — in this
/// or another process — appends, repairs or checkpoints meanwhile: the
/// summary it keeps stays exactly what the file holds, and sequence numbers
/// are assigned under the lock. Dropping it releases the lock. Opening the
/// same session twice from one thread therefore waits for itself and ends
/// in [`LogError::LockTimeout`].
///
/// It keeps a [`SurfaceSummary`], not the events (R-LOG-5); every
/// [`SessionLog::append`] that returned `Ok` is on stable storage.
#[derive(Debug)]
pub struct SessionLog {
    path: Utf8PathBuf,
    file: File,
    /// The session lock; it lasts while this is open.
    _lock: SessionLock,
    header: SessionHeader,
    summary: SurfaceSummary,
    /// Every skipped line of the file (for the next checkpoint).
    skipped: Vec<SkippedLine>,
    /// File length covering exactly the whole lines written so far.
    len: u64,
    /// Whole lines so far, header included.
    lines: usize,
    /// Log length at the last checkpoint written or read (or attempted), so
    /// the next is due [`CHECKPOINT_AFTER_BYTES`] later.
    checkpoint_len: u64,
    /// Set when a failed append could not be rolled back: the file tail is
    /// unknown, so further appends are refused until the log is reopened.
    poisoned: bool,
}

impl SessionLog {
    /// [`SessionLog::create_locked`] with the default [`LockWait`].
    ///
    /// # Errors
    /// As [`SessionLog::create_locked`].
    ///
    /// ```
    /// use dsh_session_log::{EventKind, SessionHeader, SessionLog};
    /// let tmp = tempfile::tempdir()?;
    /// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap().join("s1");
    /// let mut log = SessionLog::create(&dir, SessionHeader::new("s1", "/work"))?;
    /// assert_eq!(log.append(EventKind::TurnStart)?, 1);
    /// drop(log); // releases the session lock
    /// assert!(SessionLog::create(&dir, SessionHeader::new("s1", "/work")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(dir: &Utf8Path, header: SessionHeader) -> Result<Self, LogError> {
        Self::create_locked(dir, header, LockWait::default())
    }

    /// Creates `<dir>/session.jsonl` holding only `header`, atomically
    /// (R-LOG-2), creating `dir` when missing, and returns it locked
    /// (R-LOG-4).
    ///
    /// The session lock is taken first, so a concurrent open or create of
    /// the same session waits for this one. The header is written by the
    /// side-file writer ([`crate::side`]): a temporary file of a unique name
    /// in `dir`, fsync'd, then moved to the final name without ever
    /// replacing an existing log (on filesystems without no-replace renames
    /// or hard links, an existence check followed by a rename, safe because
    /// both run under the lock), and `dir` is fsync'd (and its parent, when
    /// `dir` was created here). A crash leaves either no log or a complete
    /// one, never a partial header.
    /// A checkpoint left in `dir` by an earlier log is removed.
    ///
    /// # Errors
    /// [`LogError::AlreadyExists`] when the log exists;
    /// [`LogError::InvalidHeader`] for a header of another schema;
    /// [`LogError::LockTimeout`]; [`LogError::Io`] for filesystem failures.
    pub fn create_locked(
        dir: &Utf8Path,
        header: SessionHeader,
        wait: LockWait,
    ) -> Result<Self, LogError> {
        if header.schema != SCHEMA_VERSION {
            return Err(LogError::InvalidHeader {
                reason: format!(
                    "schema {} cannot be written by this build (writes {SCHEMA_VERSION})",
                    header.schema
                ),
            });
        }
        let mut line = encode_header(&header)?;
        line.push('\n');
        let path = dir.join(LOG_FILE_NAME);
        let dir_is_new = std::fs::symlink_metadata(dir).is_err();
        std::fs::create_dir_all(dir).map_err(io_err("create directory", dir))?;
        if dir_is_new {
            // Make the new directory entry itself durable.
            if let Some(parent) = dir.parent().filter(|p| !p.as_str().is_empty()) {
                sync_dir(parent)?;
            }
        }
        let lock = SessionLock::acquire(&path, wait)?;

        crate::side::create_new(&path, line.as_bytes()).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                LogError::AlreadyExists { path: path.clone() }
            } else {
                io_err("create", &path)(e)
            }
        })?;
        match std::fs::remove_file(checkpoint::path_for(&path)) {
            Ok(()) => sync_dir(dir)?,
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(io_err("remove stale checkpoint", &path)(e));
            }
            Err(_) => {}
        }

        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        Ok(Self {
            path,
            file,
            _lock: lock,
            header,
            summary: SurfaceSummary::default(),
            skipped: Vec::new(),
            len: line.len() as u64,
            lines: 1,
            checkpoint_len: 0,
            poisoned: false,
        })
    }

    /// [`SessionLog::open_locked`] with the default [`LockWait`].
    ///
    /// # Errors
    /// As [`SessionLog::open_locked`].
    ///
    /// ```
    /// use dsh_session_log::{EventKind, SessionHeader, SessionLog};
    /// let tmp = tempfile::tempdir()?;
    /// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap();
    /// let mut log = SessionLog::create(dir, SessionHeader::new("s", "/w"))?;
    /// log.append(EventKind::TurnStart)?;
    /// let path = log.path().to_owned();
    /// drop(log); // the process "stops" mid-turn
    /// let (log, report) = SessionLog::open(&path)?;
    /// assert_eq!(report.interrupted, Some(2));
    /// assert_eq!(log.events()?[1].kind, EventKind::Interrupted);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: &Utf8Path) -> Result<(Self, OpenReport), LogError> {
        Self::open_locked(path, LockWait::default())
    }

    /// Takes the session lock (R-LOG-4), waiting at most `wait`, then opens
    /// the existing log at `path` for appending, repairing it first
    /// (R-LOG-2):
    ///
    /// 1. a torn final line (see [`read_log`](crate::parse::read_log)) is truncated
    ///    away and the truncation fsync'd — only here, under the lock, so a
    ///    line another writer is still writing is never cut;
    /// 2. when the events leave a turn open (`turn_start`/`step_start` with no
    ///    later `turn_end`/`interrupted`), an `interrupted` event is appended.
    ///
    /// Skipped middle lines are reported, not rewritten.
    ///
    /// Cost (R-LOG-5): with a valid checkpoint next to the log, only the
    /// bytes appended since it are read and parsed
    /// ([`OpenReport::bytes_read`]); otherwise the whole log is, and a
    /// checkpoint is written when the log is long enough to need one.
    ///
    /// # Errors
    /// [`LogError::LockTimeout`] when another writer keeps the lock past
    /// `wait`; header errors from [`read_log`](crate::parse::read_log);
    /// [`LogError::Io`] (also when the log does not exist; `session.lock` is
    /// created next to it all the same when the directory exists).
    ///
    /// ```
    /// use std::time::Duration;
    /// use dsh_session_log::{LockWait, LogError, SessionHeader, SessionLog};
    /// let tmp = tempfile::tempdir()?;
    /// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap();
    /// let log = SessionLog::create(dir, SessionHeader::new("s", "/w"))?;
    /// let path = log.path().to_owned();
    /// // While `log` holds the lock, another writer gives up after its bound.
    /// let busy = SessionLog::open_locked(&path, LockWait::up_to(Duration::from_millis(20)));
    /// assert!(matches!(busy, Err(LogError::LockTimeout { .. })));
    /// drop(log);
    /// let (log, report) = SessionLog::open_locked(&path, LockWait::no_wait())?;
    /// assert!(report.is_clean());
    /// assert_eq!(log.summary().last_seq(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_locked(path: &Utf8Path, wait: LockWait) -> Result<(Self, OpenReport), LogError> {
        Self::open_held(SessionLock::acquire(path, wait)?)
    }

    /// [`SessionLog::open_locked`] under a lock already held: opens and
    /// repairs the log at [`SessionLock::log_path`].
    ///
    /// # Errors
    /// As [`SessionLog::open_locked`], but for the lock.
    pub fn open_held(lock: SessionLock) -> Result<(Self, OpenReport), LogError> {
        let owned = lock.log_path().to_owned();
        let path = owned.as_path();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(io_err("open", path))?;
        let file_len = file.metadata().map_err(io_err("stat", path))?.len();
        let checkpoint = checkpoint::load(&checkpoint::path_for(path), &file, file_len);
        let from_checkpoint = checkpoint.is_some();
        let (header, mut summary, mut skipped, start) = match checkpoint {
            Some(c) => {
                let start = ScanStart {
                    offset: c.log_len,
                    line: c.lines,
                    last_seq: c.summary.last_seq(),
                };
                (c.header, c.summary, c.skipped, start)
            }
            None => {
                let head = read_range(&file, path, 0, file_len.min(HEADER_PROBE))?;
                let (header, header_len) = match split_header(&head) {
                    // A header longer than the probe: read the whole file.
                    Err(_) if head.len() as u64 == HEADER_PROBE => {
                        split_header(&read_range(&file, path, 0, file_len)?)?
                    }
                    other => other?,
                };
                let start = ScanStart {
                    offset: header_len as u64,
                    line: 1,
                    last_seq: None,
                };
                (header, SurfaceSummary::default(), Vec::new(), start)
            }
        };
        let chunk = read_range(&file, path, start.offset, file_len)?;
        let scan = scan_events(&chunk, start, |event| summary.apply(&event));
        if scan.torn_tail.is_some() {
            file.set_len(scan.valid_len)
                .map_err(io_err("truncate", path))?;
            file.sync_all().map_err(io_err("fsync", path))?;
        }
        skipped.extend(scan.skipped);
        let mut report = OpenReport {
            truncated: scan.torn_tail,
            skipped: skipped.clone(),
            interrupted: None,
            from_checkpoint,
            bytes_read: chunk.len() as u64,
        };
        let mut log = Self {
            path: path.to_owned(),
            file,
            _lock: lock,
            header,
            summary,
            skipped,
            len: scan.valid_len,
            lines: scan.lines,
            checkpoint_len: if from_checkpoint { start.offset } else { 0 },
            poisoned: false,
        };
        if log.summary.turn_open() {
            report.interrupted = Some(log.append(EventKind::Interrupted)?);
        }
        log.checkpoint_if_due();
        Ok((log, report))
    }

    /// Appends one event and returns its sequence number.
    ///
    /// Fsync policy: the line and its newline are written together and the
    /// file is `fdatasync`'d before `Ok` is returned, so an acknowledged event
    /// survives a crash or power loss. A failed append is rolled back by
    /// truncating to the previous length; if even that fails the log refuses
    /// further appends ([`LogError::Poisoned`]) and the next
    /// [`SessionLog::open`] repairs the tail.
    ///
    /// After the append, a checkpoint is written when
    /// [`CHECKPOINT_AFTER_BYTES`] were appended since the last one; a
    /// checkpoint that cannot be written is skipped (it is only a shortcut).
    ///
    /// # Errors
    /// [`LogError::InvalidEvent`] for an [`EventKind::Unknown`] that is not an
    /// object with a string `type` of its own; [`LogError::Io`];
    /// [`LogError::Poisoned`].
    pub fn append(&mut self, kind: EventKind) -> Result<u64, LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        // Only a crafted file gets to the end of the numbers; a repeated seq
        // would be skipped on the next read, so refuse instead of losing it.
        let seq = self.summary.next_seq().ok_or(LogError::InvalidEvent {
            reason: "sequence numbers exhausted".into(),
        })?;
        let mut line = encode_event(seq, &kind)?;
        line.push('\n');
        // Keep memory equal to the file: the line's `seq` is ours, not the
        // one an unknown object may have carried.
        let kind = match kind {
            EventKind::Unknown(serde_json::Value::Object(mut map)) => {
                map.remove("seq");
                EventKind::Unknown(serde_json::Value::Object(map))
            }
            other => other,
        };
        let written = (&self.file)
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(error) = written {
            if self
                .file
                .set_len(self.len)
                .and_then(|()| self.file.sync_data())
                .is_err()
            {
                self.poisoned = true;
            }
            return Err(LogError::Io {
                op: "append",
                path: self.path.clone(),
                source: error,
            });
        }
        self.len += line.len() as u64;
        self.lines += 1;
        self.summary.apply(&Event { seq, kind });
        self.checkpoint_if_due();
        Ok(seq)
    }

    /// Writes the checkpoint for the log as it is now (R-LOG-5), atomically.
    /// Appends and opens do this on their own when one is due; call it to
    /// have one at a chosen point.
    ///
    /// # Errors
    /// [`LogError::Poisoned`] after a failed append; [`LogError::Io`].
    pub fn checkpoint(&mut self) -> Result<(), LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        // Whatever happens, the next try is due a full interval later: a
        // directory that refuses the file must not cost every append a write.
        self.checkpoint_len = self.len;
        let digest = checkpoint::digest(&self.file, self.len)
            .map_err(io_err("read for checkpoint", &self.path))?;
        let checkpoint = Checkpoint::new(
            self.len,
            self.lines,
            digest,
            self.header.clone(),
            self.summary.clone(),
            self.skipped.clone(),
        );
        checkpoint::store(&checkpoint::path_for(&self.path), &checkpoint)
    }

    fn checkpoint_if_due(&mut self) {
        if self.len.saturating_sub(self.checkpoint_len) >= CHECKPOINT_AFTER_BYTES {
            // A missing checkpoint only costs the next open a longer read.
            let _ = self.checkpoint();
        }
    }

    /// Line 1 of the log.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The derived state of the whole log, kept up to date by every append
    /// (R-LOG-5): costs nothing to call.
    pub fn summary(&self) -> &SurfaceSummary {
        &self.summary
    }

    /// Closes the log, releasing the session lock, and keeps its summary:
    /// what a reader of the visible state still needs after the writer is
    /// done, without copying it.
    ///
    /// ```
    /// use dsh_session_log::{EventKind, SessionHeader, SessionLog};
    /// let tmp = tempfile::tempdir()?;
    /// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap().join("s1");
    /// let mut log = SessionLog::create(&dir, SessionHeader::new("s1", "/work"))?;
    /// log.append(EventKind::TurnStart)?;
    /// let summary = log.into_summary(); // the lock is released here
    /// assert_eq!(summary.event_count(), 1);
    /// assert!(SessionLog::open(&dir.join("session.jsonl")).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_summary(self) -> SurfaceSummary {
        self.summary
    }

    /// Every event in the file, in order, read and parsed from the file now:
    /// costs a whole read of the log (for viewers and rare commands; the
    /// runtime uses [`SessionLog::summary`]).
    ///
    /// # Errors
    /// [`LogError::Io`] when the file cannot be read.
    pub fn events(&self) -> Result<Vec<Event>, LogError> {
        let bytes = read_range(&self.file, &self.path, 0, self.len)?;
        Ok(read_log(&bytes)?.events)
    }

    /// The events the model sees (R-LOG-1; see [`crate::surface`]); a whole
    /// read of the log like [`SessionLog::events`].
    ///
    /// # Errors
    /// [`LogError::Io`] when the file cannot be read.
    pub fn surface(&self) -> Result<Vec<Event>, LogError> {
        let events = self.events()?;
        Ok(surface(&events).into_iter().cloned().collect())
    }

    /// Path of the `session.jsonl` file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Length in bytes of the log's whole lines.
    pub fn byte_len(&self) -> u64 {
        self.len
    }
}

/// Bytes read to find the header when there is no checkpoint: headers are a
/// few hundred bytes, so one small read nearly always does.
const HEADER_PROBE: u64 = 8192;

/// Reads bytes `start..end` of `file` (a short file gives fewer).
fn read_range(mut file: &File, path: &Utf8Path, start: u64, end: u64) -> Result<Vec<u8>, LogError> {
    let mut bytes = Vec::with_capacity(usize::try_from(end.saturating_sub(start)).unwrap_or(0));
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.take(end.saturating_sub(start)).read_to_end(&mut bytes))
        .map_err(io_err("read", path))?;
    Ok(bytes)
}

fn io_err(op: &'static str, path: &Utf8Path) -> impl FnOnce(io::Error) -> LogError {
    let path = path.to_owned();
    move |source| LogError::Io { op, path, source }
}

fn sync_dir(dir: &Utf8Path) -> Result<(), LogError> {
    crate::side::sync_dir(dir).map_err(io_err("fsync directory", dir))
}
