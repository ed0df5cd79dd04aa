//! Typed touches: what a host knows a tool did to a path (R-RT-3,
//! R-DISC-10), reported with [`crate::Instance::touch`] instead of a tool
//! execution the runtime would read the path back out of; and the rules
//! of how a tool's arguments name paths ([`PathArg`]) and which
//! directories a touch reaches ([`TouchedPath::reaches`]), for the front
//! door and the hook alike.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

/// What a tool did at a path. The path given with it is absolute, or
/// relative to the instance's cwd; it is normalized lexically (`.`/`..`),
/// never resolved through the filesystem.
///
/// | kind | the path names | touches |
/// |---|---|---|
/// | [`Read`](TouchKind::Read), [`Write`](TouchKind::Write) | a file | the file's directory, whether or not the file exists |
/// | [`List`](TouchKind::List), [`Search`](TouchKind::Search) | a directory | the directory itself, whether or not it exists |
/// | [`Shell`](TouchKind::Shell) | the command's working directory | every word of the command that names an existing file (its directory) or directory (itself), as R-DISC-10 says |
///
/// A touched directory reconciles, as R-RT-3 says, every directory from
/// below the cwd down to it; one outside the cwd reconciles nothing new. A
/// blank path touches nothing, except for [`Shell`](TouchKind::Shell),
/// where it means the instance's cwd. Read and write (and list and search)
/// touch alike today; the kinds are kept apart so a host says what happened
/// and the log it keeps stays readable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TouchKind {
    /// A file was read.
    Read,
    /// A file was written, edited, created, deleted or moved to.
    Write,
    /// A directory was listed.
    List,
    /// A directory was searched (a grep or glob root).
    Search,
    /// A shell command ran with the path as its working directory; its
    /// words are read as `crate::command_paths` reads them (nothing is
    /// executed), and only those the provider finds inside the trusted
    /// roots touch (decision 0015).
    Shell {
        /// The command exactly as it was run.
        command: String,
    },
}

impl TouchKind {
    /// The name a log records the kind under: `read`, `write`, `list`,
    /// `search` or `shell`.
    ///
    /// ```
    /// use dsh_instructions_runtime::TouchKind;
    /// assert_eq!(TouchKind::List.as_str(), "list");
    /// assert_eq!(TouchKind::Shell { command: "ls".into() }.as_str(), "shell");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::List => "list",
            Self::Search => "search",
            Self::Shell { .. } => "shell",
        }
    }

    /// Whether the path names a directory that is touched itself (list,
    /// search), rather than a file whose directory is.
    pub fn names_a_directory(&self) -> bool {
        matches!(self, Self::List | Self::Search)
    }
}

/// One argument of a tool that holds a touched path, and what the tool does
/// there (R-CFG-8, decision 0027): the one owner of how a tool's arguments
/// name paths, for the front door's `touch_tools` and the hook's tool
/// tables alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathArg {
    /// The key in the call's arguments.
    pub key: String,
    /// What the tool does at the path; a glob's literal prefix is a
    /// searched directory whatever the kind ([`PathArg::paths`]).
    pub kind: TouchKind,
}

impl PathArg {
    /// An argument name as configured (`touch_tools`, R-CFG-8, the one
    /// meaning of decision 0027): a trailing `/` marks a directory (a
    /// listing), any other name a file that is read.
    ///
    /// ```
    /// use dsh_instructions_runtime::{TouchKind, tool_args::PathArg};
    /// assert_eq!(PathArg::configured("path/"), PathArg { key: "path".into(), kind: TouchKind::List });
    /// assert_eq!(PathArg::configured("file_path").kind, TouchKind::Read);
    /// ```
    pub fn configured(name: &str) -> Self {
        match name.strip_suffix('/') {
            Some(key) => Self {
                key: key.to_owned(),
                kind: TouchKind::List,
            },
            None => Self {
                key: name.to_owned(),
                kind: TouchKind::Read,
            },
        }
    }

    /// The argument's value in `arguments` when it is a non-blank string:
    /// what a tool execution's touch reads (R-RT-3: the first listed
    /// argument that holds one).
    pub fn value<'a>(&self, arguments: &'a Value) -> Option<&'a str> {
        let raw = arguments.get(&self.key)?.as_str()?;
        (!raw.trim().is_empty()).then_some(raw)
    }

    /// Every path the argument names in an agent's tool call (R-HOOK-3): a
    /// string, or each string of an array; a glob is its literal prefix, a
    /// searched directory (`src/**/*.ts` → `src`, `*.md` → `.`); a blank
    /// one none. Appended to `out`, as the call gave them.
    ///
    /// ```
    /// use dsh_instructions_runtime::{TouchKind, tool_args::{PathArg, TouchedPath}};
    /// let arg = PathArg { key: "paths".into(), kind: TouchKind::Read };
    /// let mut out = Vec::new();
    /// arg.paths(&serde_json::json!({"paths": ["a/x.md", "src/**/*.ts", " "]}), &mut out);
    /// assert_eq!(out, [
    ///     TouchedPath { path: "a/x.md".into(), kind: TouchKind::Read },
    ///     TouchedPath { path: "src".into(), kind: TouchKind::Search },
    /// ]);
    /// ```
    pub fn paths(&self, arguments: &Value, out: &mut Vec<TouchedPath>) {
        let mut push = |raw: &str| {
            let (path, glob) = literal_prefix(raw.trim());
            if path.is_empty() && !glob {
                return;
            }
            let path = match path.trim_end_matches('/') {
                "" if path.starts_with('/') => "/",
                "" => ".",
                p => p,
            };
            out.push(TouchedPath {
                path: path.to_owned(),
                kind: if glob {
                    TouchKind::Search
                } else {
                    self.kind.clone()
                },
            });
        };
        match arguments.get(&self.key) {
            Some(Value::String(s)) => push(s),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).for_each(push),
            _ => {}
        }
    }
}

/// The part of a glob before its first wildcard, cut back to a directory
/// (`src/**/*.ts` → `src`, glob); a path without wildcards is itself.
fn literal_prefix(raw: &str) -> (&str, bool) {
    match raw.find(['*', '?', '[', '{']) {
        None => (raw, false),
        Some(i) => {
            let head = &raw[..i];
            (head.rfind('/').map_or("", |j| &raw[..j]), true)
        }
    }
}

/// A path a tool touched and what it did there, as a host reports it
/// ([`crate::Instance::touch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchedPath {
    /// The path, absolute or relative to the instance's cwd.
    pub path: String,
    /// What the tool did there.
    pub kind: TouchKind,
}

impl TouchedPath {
    /// The directories this touch makes a composition of an instance at
    /// `cwd` reconcile besides the known ones and the root-to-cwd chain
    /// (R-RT-3 a): every directory strictly below `cwd` down to the one
    /// touched (a file's, or a listed or searched directory itself),
    /// absolute; none for a touch outside the cwd or of a blank path.
    /// `None` for a shell touch, whose directories are those of the
    /// command's words that exist.
    ///
    /// ```
    /// use dsh_instructions_runtime::{TouchKind, tool_args::TouchedPath};
    /// let read = TouchedPath { path: "a/b/c.rs".into(), kind: TouchKind::Read };
    /// assert_eq!(read.reaches("/w".into()).unwrap(), ["/w/a", "/w/a/b"]);
    /// let list = TouchedPath { path: "/w/a/../d".into(), kind: TouchKind::List };
    /// assert_eq!(list.reaches("/w".into()).unwrap(), ["/w/d"]);
    /// let outside = TouchedPath { path: "/etc/hosts".into(), kind: TouchKind::Read };
    /// assert!(outside.reaches("/w".into()).unwrap().is_empty());
    /// ```
    pub fn reaches(&self, cwd: &Utf8Path) -> Option<Vec<Utf8PathBuf>> {
        if let TouchKind::Shell { .. } = self.kind {
            return None;
        }
        let Some(touched) = resolve(cwd, Utf8Path::new(&self.path), &self.kind) else {
            return Some(Vec::new());
        };
        let mut at = cwd.to_owned();
        Some(
            below_cwd(cwd, touched.dir())
                .map(|name| {
                    at.push(name);
                    at.clone()
                })
                .collect(),
        )
    }
}

/// A file or directory touch resolved against an instance's cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A file's path: it touches its directory, existing or not.
    File(Utf8PathBuf),
    /// A directory's path: it touches the directory itself.
    Dir(Utf8PathBuf),
}

impl Resolved {
    /// The path, normalized.
    pub(crate) fn path(&self) -> &Utf8Path {
        match self {
            Self::File(p) | Self::Dir(p) => p,
        }
    }

    /// The directory it touches (a file at `/` touches none).
    pub(crate) fn dir(&self) -> Option<&Utf8Path> {
        match self {
            Self::File(p) => p.parent(),
            Self::Dir(p) => Some(p),
        }
    }
}

/// A file or directory touch of `path` (absolute, or relative to `cwd`)
/// with `kind`, normalized lexically; `None` for a blank path (it names
/// nothing) and for a shell kind (its paths are the command's words).
pub(crate) fn resolve(cwd: &Utf8Path, path: &Utf8Path, kind: &TouchKind) -> Option<Resolved> {
    let raw = path.as_str().trim();
    if raw.is_empty() || matches!(kind, TouchKind::Shell { .. }) {
        return None;
    }
    let abs = dsh_home_paths::normalize_lexically(&cwd.join(raw));
    Some(if kind.names_a_directory() {
        Resolved::Dir(abs)
    } else {
        Resolved::File(abs)
    })
}

/// The names of the directories from below `cwd` down to `dir`, when `dir`
/// lies under `cwd` (R-RT-3 a); none otherwise.
pub(crate) fn below_cwd<'a>(
    cwd: &Utf8Path,
    dir: Option<&'a Utf8Path>,
) -> impl Iterator<Item = &'a str> {
    dir.and_then(|d| d.strip_prefix(cwd).ok())
        .into_iter()
        .flat_map(|rest| rest.components().map(|c| c.as_str()))
}
