//! Side files: every file a session keeps beside its log, written one way
//! and read defensively (issue 34 item 1, decision 0046).
//!
//! Writing: [`write()`] puts the bytes in a fresh temporary file of a unique
//! name in the same directory and renames it over the target (tempfile's
//! `NamedTempFile::persist`), so a reader sees the old file or the new one,
//! never half of one, and two writers never share a temporary name. A
//! temporary file that was not persisted is removed. What each kind of file
//! must survive is its [`Durability`]:
//!
//! | file | durability |
//! |---|---|
//! | `session.jsonl` (created by `create_new`, never replacing a log) | [`Durability::Crash`] |
//! | `settings.json` | [`Durability::Crash`] |
//! | `session.checkpoint.json`, `view.json`, `versions.json`, `parts.json`, `dirs.stamps` | [`Durability::Cache`] |
//!
//! Reading: [`read`] tells a missing file from a damaged one (a directory
//! or a dangling link in its place, no permission to read it, and, through
//! [`report`] by the reader that parses it, an empty, torn, foreign or
//! other-shaped file). A damaged file is [`discard`]ed and rebuilt from what
//! is authoritative (the log, the hook's configuration) by its reader, and
//! the damage is recorded with [`report`], so the front end can say once
//! which file was rebuilt from what ([`take_reports`]).

use std::io::{self, Write as _};
use std::sync::Mutex;

use camino::{Utf8Path, Utf8PathBuf};

/// What a side file must survive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// It must survive a crash or power loss once written: the temporary
    /// file is fsync'd before the rename and the directory after it. The
    /// log and the settings a session was created with.
    Crash,
    /// It may be lost (or be the previous version) after a crash, but is
    /// never torn: derived files that are rebuilt when missing. No fsync.
    Cache,
}

/// Replaces `path` with `bytes` atomically, with `durability`. A directory
/// in the target's place (which a rename cannot replace) is set aside first
/// ([`discard`]) and reported.
///
/// # Errors
/// Creating, writing, syncing or renaming the temporary file failed; the
/// target is then as it was.
///
/// ```
/// use dsh_session_log::side::{Durability, write};
/// let tmp = tempfile::tempdir()?;
/// let path = camino::Utf8Path::from_path(tmp.path()).unwrap().join("a.json");
/// write(&path, b"{}", Durability::Crash)?;
/// write(&path, b"[1]", Durability::Cache)?;
/// assert_eq!(std::fs::read(&path)?, b"[1]");
/// assert_eq!(std::fs::read_dir(tmp.path())?.count(), 1, "no temporary file left");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(path: &Utf8Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    let tmp = staged(path, bytes, durability)?;
    let tmp = match tmp.persist(path) {
        Ok(_) => return synced(path, durability),
        Err(e) if is_dir(path) => {
            report(
                path,
                "a directory in its place",
                "set aside and written anew",
            );
            discard(path)?;
            e.file
        }
        Err(e) => return Err(e.error),
    };
    tmp.persist(path).map_err(|e| e.error)?;
    synced(path, durability)
}

/// Creates `path` holding `bytes`, durably ([`Durability::Crash`]), and
/// never replaces an existing `path`: the file appears whole or not at all.
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when `path` exists; other I/O errors.
pub(crate) fn create_new(path: &Utf8Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = staged(path, bytes, Durability::Crash)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {}
        Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => return Err(e.error),
        Err(e) => {
            // No hard links or no-replace renames here (some network or FUSE
            // filesystems): check, then rename; the callers hold the session
            // lock, so only a foreign creator could race it.
            match std::fs::symlink_metadata(path) {
                Ok(_) => return Err(io::ErrorKind::AlreadyExists.into()),
                Err(n) if n.kind() == io::ErrorKind::NotFound => {
                    e.file.persist(path).map_err(|e| e.error)?;
                }
                Err(other) => return Err(other),
            }
        }
    }
    synced(path, Durability::Crash)
}

/// The file `path` is beside: its directory (`.` for a bare name).
fn parent(path: &Utf8Path) -> &Utf8Path {
    match path.parent() {
        Some(p) if !p.as_str().is_empty() => p,
        _ => Utf8Path::new("."),
    }
}

/// A temporary file beside `path` holding `bytes`, fsync'd for
/// [`Durability::Crash`]. Its name is unique (`.<name>.<random>.tmp`); it is
/// removed when dropped unpersisted.
fn staged(
    path: &Utf8Path,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<tempfile::NamedTempFile> {
    let name = path.file_name().unwrap_or("side");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(parent(path))?;
    tmp.write_all(bytes)?;
    if durability == Durability::Crash {
        tmp.as_file().sync_all()?;
    }
    Ok(tmp)
}

/// After a rename: for [`Durability::Crash`], the directory entry is made
/// durable too.
fn synced(path: &Utf8Path, durability: Durability) -> io::Result<()> {
    match durability {
        Durability::Crash => sync_dir(parent(path)),
        Durability::Cache => Ok(()),
    }
}

/// Fsyncs directory `dir` (its entries). Elsewhere than Unix, opening a
/// directory as a file is not possible and the rename is all there is.
///
/// # Errors
/// Opening or syncing the directory failed.
pub(crate) fn sync_dir(dir: &Utf8Path) -> io::Result<()> {
    if cfg!(unix) {
        std::fs::File::open(dir)?.sync_all()
    } else {
        Ok(())
    }
}

fn is_dir(path: &Utf8Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// What [`read`] found at a path.
#[derive(Debug)]
pub enum Found {
    /// Nothing is there.
    Missing,
    /// The file's bytes (still to be checked by their reader).
    Bytes(Vec<u8>),
    /// Something unusable is there: what (`"a directory in its place"`,
    /// `"a dangling symbolic link"`, the OS error).
    Damaged(String),
}

/// Reads the side file at `path`, telling a missing file from a damaged one.
///
/// ```
/// use dsh_session_log::side::{Found, read};
/// let tmp = tempfile::tempdir()?;
/// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap();
/// assert!(matches!(read(&dir.join("none")), Found::Missing));
/// std::fs::create_dir(dir.join("d"))?;
/// assert!(matches!(read(&dir.join("d")), Found::Damaged(_)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: &Utf8Path) -> Found {
    classify(path, std::fs::read(path))
}

/// [`read`]'s judgement of a read's result (separate, so each error kind can
/// be tested without making the filesystem produce it).
pub(crate) fn classify(path: &Utf8Path, result: io::Result<Vec<u8>>) -> Found {
    match result {
        Ok(bytes) => Found::Bytes(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                Found::Damaged("a dangling symbolic link".into())
            }
            // Created between the read and this look: a writer racing the
            // reader, not damage — discarding it would lose what it wrote.
            Ok(_) => Found::Missing,
            Err(_) => Found::Missing,
        },
        Err(_) if is_dir(path) => Found::Damaged("a directory in its place".into()),
        Err(e) => Found::Damaged(format!("unreadable ({e})")),
    }
}

/// The JSON side file at `path` read as a `T`, for the side files that are
/// only a record of what the log already holds: `None` when it is missing;
/// when it is damaged (unreadable, in the way, or not `what`), it is
/// discarded and reported with `rebuilt` (what takes its place), and the
/// caller rebuilds from the authoritative file (decision 0046).
///
/// ```
/// use dsh_session_log::side::load_json;
/// let tmp = tempfile::tempdir()?;
/// let dir = camino::Utf8Path::from_path(tmp.path()).unwrap();
/// let path = dir.join("kept.json");
/// std::fs::write(&path, "[1, 2]")?;
/// assert_eq!(load_json::<Vec<u8>>(&path, "a list", "rebuilt"), Some(vec![1, 2]));
/// std::fs::write(&path, "{torn")?;
/// assert_eq!(load_json::<Vec<u8>>(&path, "a list", "rebuilt"), None);
/// assert!(!path.exists(), "the damaged file is gone");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_json<T: serde::de::DeserializeOwned>(
    path: &Utf8Path,
    what: &str,
    rebuilt: &str,
) -> Option<T> {
    let damaged = |damage: &str| {
        let _ = discard(path);
        report(path, damage, rebuilt);
    };
    match read(path) {
        Found::Missing => None,
        Found::Damaged(damage) => {
            damaged(&damage);
            None
        }
        Found::Bytes(bytes) => match serde_json::from_slice(&bytes) {
            Ok(value) => Some(value),
            Err(e) => {
                damaged(&format!("not {what} ({e})"));
                None
            }
        },
    }
}

/// Takes the damaged side file at `path` out of the way so it can be
/// written anew: a directory is renamed aside (`.<name>.damaged-<id>`,
/// keeping whatever it holds, returned), anything else is removed (its
/// content was damaged and is rebuilt). Nothing there is fine.
///
/// # Errors
/// The rename or removal failed.
pub fn discard(path: &Utf8Path) -> io::Result<Option<Utf8PathBuf>> {
    if is_dir(path) {
        return set_aside(path).map(Some);
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(None),
    }
}

/// Renames `path` to `.<name>.damaged-<unique id>` beside it and returns
/// the new name.
///
/// # Errors
/// The rename failed.
pub fn set_aside(path: &Utf8Path) -> io::Result<Utf8PathBuf> {
    let name = path.file_name().unwrap_or("side");
    let aside = parent(path).join(format!(".{name}.damaged-{}", crate::time::new_session_id()));
    std::fs::rename(path, &aside)?;
    Ok(aside)
}

/// Whether `name` (a file name in a session directory) is a copy
/// [`set_aside`] made.
pub fn is_set_aside(name: &str) -> bool {
    name.starts_with('.') && name.contains(".damaged-")
}

/// One damaged side file found (and rebuilt) by this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The file.
    pub path: Utf8PathBuf,
    /// What was wrong with it.
    pub damage: String,
    /// What was done: what it was rebuilt from.
    pub rebuilt: String,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}; {}", self.path, self.damage, self.rebuilt)
    }
}

/// The reports of this process not yet taken. A process-wide list: the
/// readers live in several crates and the one front end that says it (the
/// hook's log) runs one event per process.
static REPORTS: Mutex<Vec<Report>> = Mutex::new(Vec::new());

/// The most reports kept before [`take_reports`] (a loop of damage must not
/// grow memory).
const MAX_REPORTS: usize = 64;

/// Records that the side file at `path` was found damaged (`damage`) and
/// what was done (`rebuilt`, e.g. "rebuilt from the log").
pub fn report(path: &Utf8Path, damage: &str, rebuilt: &str) {
    let mut reports = REPORTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if reports.len() < MAX_REPORTS {
        reports.push(Report {
            path: path.to_owned(),
            damage: damage.to_owned(),
            rebuilt: rebuilt.to_owned(),
        });
    }
}

/// Takes every report recorded so far in this process.
pub fn take_reports() -> Vec<Report> {
    std::mem::take(
        &mut *REPORTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

/// The reports about files under `dir`, taken; the others stay (tests run
/// in parallel threads of one process).
#[cfg(test)]
pub(crate) fn take_reports_under(dir: &Utf8Path) -> Vec<Report> {
    let mut reports = REPORTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mine, others) = std::mem::take(&mut *reports)
        .into_iter()
        .partition(|r| r.path.starts_with(dir));
    *reports = others;
    mine
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn tmp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
        (tmp, dir)
    }

    fn names(dir: &Utf8Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        v.sort();
        v
    }

    #[rstest]
    fn a_write_leaves_only_the_file(
        #[values(Durability::Crash, Durability::Cache)] durability: Durability,
    ) {
        let (_tmp, dir) = tmp_dir();
        let path = dir.join("f.json");
        write(&path, b"one", durability).expect("write");
        write(&path, b"two", durability).expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        assert_eq!(names(&dir), ["f.json"]);
    }

    #[test]
    fn a_directory_in_the_place_is_set_aside_and_reported() {
        let (_tmp, dir) = tmp_dir();
        let path = dir.join("g.json");
        std::fs::create_dir_all(path.join("inner")).expect("mkdir");
        write(&path, b"{}", Durability::Cache).expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"{}");
        let aside: Vec<String> = names(&dir)
            .into_iter()
            .filter(|n| is_set_aside(n))
            .collect();
        assert_eq!(aside.len(), 1, "{:?}", names(&dir));
        assert!(
            dir.join(&aside[0]).join("inner").is_dir(),
            "its content kept"
        );
        let reports = take_reports_under(&dir);
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(
            reports[0].to_string().contains("g.json: a directory"),
            "{}",
            reports[0]
        );
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let (_tmp, dir) = tmp_dir();
        let missing = dir.join("gone").join("f.json");
        assert!(write(&missing, b"x", Durability::Crash).is_err());
        assert!(names(&dir).is_empty());
    }

    #[test]
    fn create_new_never_replaces() {
        let (_tmp, dir) = tmp_dir();
        let path = dir.join("log");
        create_new(&path, b"first").expect("create");
        let e = create_new(&path, b"second").expect_err("exists");
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).expect("read"), b"first");
        assert_eq!(names(&dir), ["log"]);
    }

    #[cfg(unix)]
    #[test]
    fn reads_tell_missing_from_damaged() {
        let (_tmp, dir) = tmp_dir();
        assert!(matches!(read(&dir.join("none")), Found::Missing));
        // A file that appears between a failed read and the look at its
        // place was written by a racing writer: missing, never damaged.
        std::fs::write(dir.join("late"), b"x").expect("late");
        let late = io::Error::from(io::ErrorKind::NotFound);
        assert!(matches!(
            classify(&dir.join("late"), Err(late)),
            Found::Missing
        ));
        std::os::unix::fs::symlink(dir.join("nowhere/x"), dir.join("dangling")).expect("link");
        assert!(matches!(read(&dir.join("dangling")), Found::Damaged(d) if d.contains("dangling")));
        std::fs::create_dir(dir.join("d")).expect("mkdir");
        assert!(matches!(read(&dir.join("d")), Found::Damaged(d) if d.contains("directory")));
        std::fs::write(dir.join("f"), b"x").expect("write");
        assert!(matches!(read(&dir.join("f")), Found::Bytes(b) if b == b"x"));
        // No read permission: root reads any file, so the judgement of the
        // error is checked on the error itself.
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert!(matches!(
            classify(&dir.join("f"), Err(denied)),
            Found::Damaged(d) if d.starts_with("unreadable")
        ));
    }

    #[cfg(unix)]
    #[test]
    fn discard_removes_files_and_links_and_sets_directories_aside() {
        let (_tmp, dir) = tmp_dir();
        std::fs::write(dir.join("f"), b"x").expect("write");
        std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("l")).expect("link");
        std::fs::create_dir(dir.join("d")).expect("mkdir");
        assert_eq!(discard(&dir.join("f")).expect("f"), None);
        assert_eq!(discard(&dir.join("l")).expect("l"), None);
        assert_eq!(discard(&dir.join("none")).expect("none"), None);
        let aside = discard(&dir.join("d")).expect("d").expect("set aside");
        assert!(aside.is_dir());
        assert_eq!(names(&dir).len(), 1, "{:?}", names(&dir));
    }
}
