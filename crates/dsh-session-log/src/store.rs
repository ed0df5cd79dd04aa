//! The writable log: atomic create, open with repair, durable append.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};

use camino::{Utf8Path, Utf8PathBuf};

use crate::event::{Event, EventKind, SCHEMA_VERSION, SessionHeader, encode_event, encode_header};
use crate::parse::{SkippedLine, TornTail, open_turn, read_log};
use crate::{LOG_FILE_NAME, LogError, surface};

/// What [`SessionLog::open`] found and repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// The torn final line that was truncated away.
    pub truncated: Option<TornTail>,
    /// Unreadable complete lines that were skipped (left in the file).
    pub skipped: Vec<SkippedLine>,
    /// Sequence number of the `interrupted` event appended to close an open
    /// turn.
    pub interrupted: Option<u64>,
}

impl OpenReport {
    /// Nothing was repaired or skipped.
    pub fn is_clean(&self) -> bool {
        self.truncated.is_none() && self.skipped.is_empty() && self.interrupted.is_none()
    }
}

/// An open, writable session log (single writer).
///
/// The in-memory copy of the events always equals what the file holds; every
/// [`SessionLog::append`] that returned `Ok` is on stable storage.
#[derive(Debug)]
pub struct SessionLog {
    path: Utf8PathBuf,
    file: File,
    header: SessionHeader,
    events: Vec<Event>,
    /// File length covering exactly the whole lines written so far.
    len: u64,
    /// Set when a failed append could not be rolled back: the file tail is
    /// unknown, so further appends are refused until the log is reopened.
    poisoned: bool,
}

impl SessionLog {
    /// Creates `<dir>/session.jsonl` holding only `header`, atomically
    /// (R-LOG-2), creating `dir` when missing.
    ///
    /// The header goes to a temporary file in `dir`, which is fsync'd and then
    /// hard-linked to the final name (which refuses to replace an existing
    /// log; on filesystems without hard links, an existence check followed by
    /// a rename), the temporary name is removed and `dir` is fsync'd (and its
    /// parent, when `dir` was created here). A crash
    /// leaves either no log or a complete one, never a partial header.
    ///
    /// # Errors
    /// [`LogError::AlreadyExists`] when the log exists;
    /// [`LogError::InvalidHeader`] for a header of another schema;
    /// [`LogError::Io`] for filesystem failures.
    ///
    /// ```
    /// use dsh_session_log::{EventKind, SessionHeader, SessionLog};
    /// let tmp = tempfile::tempdir()?;
    /// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap().join("s1");
    /// let mut log = SessionLog::create(&dir, SessionHeader::new("s1", "/work"))?;
    /// assert_eq!(log.append(EventKind::TurnStart)?, 1);
    /// assert!(SessionLog::create(&dir, SessionHeader::new("s1", "/work")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(dir: &Utf8Path, header: SessionHeader) -> Result<Self, LogError> {
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

        let tmp = dir.join(format!(
            ".{LOG_FILE_NAME}.tmp-{}",
            crate::time::new_session_id()
        ));
        let result = write_new_file(&tmp, line.as_bytes()).and_then(|()| publish(&tmp, &path));
        // The temporary name must not outlive create, whatever happened.
        let _ = std::fs::remove_file(&tmp);
        result?;
        sync_dir(dir)?;

        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        Ok(Self {
            path,
            file,
            header,
            events: Vec::new(),
            len: line.len() as u64,
            poisoned: false,
        })
    }

    /// Opens an existing log for appending, repairing it first (R-LOG-2):
    ///
    /// 1. a torn final line (see [`read_log`](crate::read_log)) is truncated
    ///    away and the truncation fsync'd;
    /// 2. when the events leave a turn open (`turn_start`/`step_start` with no
    ///    later `turn_end`/`interrupted`), an `interrupted` event is appended.
    ///
    /// Skipped middle lines are reported, not rewritten.
    ///
    /// # Errors
    /// Header errors from [`read_log`](crate::read_log); [`LogError::Io`].
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
    /// assert_eq!(log.events()[1].kind, EventKind::Interrupted);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: &Utf8Path) -> Result<(Self, OpenReport), LogError> {
        let bytes = std::fs::read(path).map_err(io_err("read", path))?;
        let parsed = read_log(&bytes)?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_err("open", path))?;
        let len = parsed.valid_len;
        if parsed.torn_tail.is_some() {
            file.set_len(len).map_err(io_err("truncate", path))?;
            file.sync_all().map_err(io_err("fsync", path))?;
        }
        let mut log = Self {
            path: path.to_owned(),
            file,
            header: parsed.header,
            events: parsed.events,
            len,
            poisoned: false,
        };
        let mut report = OpenReport {
            truncated: parsed.torn_tail,
            skipped: parsed.skipped,
            interrupted: None,
        };
        if open_turn(&log.events) {
            report.interrupted = Some(log.append(EventKind::Interrupted)?);
        }
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
    /// # Errors
    /// [`LogError::InvalidEvent`] for an [`EventKind::Unknown`] that is not an
    /// object with a string `type` of its own; [`LogError::Io`];
    /// [`LogError::Poisoned`].
    pub fn append(&mut self, kind: EventKind) -> Result<u64, LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        let seq = match self.events.last() {
            None => 1,
            // Only a crafted file gets here; a repeated seq would be skipped
            // on the next read, so refuse instead of losing the event.
            Some(last) => last.seq.checked_add(1).ok_or(LogError::InvalidEvent {
                reason: "sequence numbers exhausted".into(),
            })?,
        };
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
        let written = self
            .file
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
        self.events.push(Event { seq, kind });
        Ok(seq)
    }

    /// Line 1 of the log.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// Every event in the file, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Path of the `session.jsonl` file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The events the model sees (R-LOG-1); see [`crate::surface`].
    pub fn surface(&self) -> Vec<&Event> {
        surface(&self.events)
    }
}

fn io_err(op: &'static str, path: &Utf8Path) -> impl FnOnce(io::Error) -> LogError {
    let path = path.to_owned();
    move |source| LogError::Io { op, path, source }
}

fn write_new_file(path: &Utf8Path, bytes: &[u8]) -> Result<(), LogError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io_err("create temporary file", path))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io_err("write temporary file", path))
}

/// Moves `tmp` to `path` without ever replacing an existing `path`.
fn publish(tmp: &Utf8Path, path: &Utf8Path) -> Result<(), LogError> {
    match std::fs::hard_link(tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(LogError::AlreadyExists {
            path: path.to_owned(),
        }),
        Err(_) => {
            // No hard links here (some network or FUSE filesystems): fall back
            // to check-then-rename, racy only against a concurrent creator.
            match std::fs::symlink_metadata(path) {
                Ok(_) => Err(LogError::AlreadyExists {
                    path: path.to_owned(),
                }),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    std::fs::rename(tmp, path).map_err(io_err("rename", path))
                }
                Err(e) => Err(io_err("stat", path)(e)),
            }
        }
    }
}

fn sync_dir(dir: &Utf8Path) -> Result<(), LogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("fsync directory", dir))
}
