//! Reading, editing and writing the settings files (R-HOOK-10).
//!
//! - JSON (with comments: Gemini allows them) is edited through the
//!   concrete syntax tree of `jsonc-parser`: the installer computes the new
//!   document as a `serde_json::Value`, and [`JsonDoc::render`] applies only
//!   the difference to the tree, so every byte it does not need to change —
//!   comments, escapes, line endings, the final newline — stays as it was.
//! - TOML goes through `toml_edit`, which keeps comments and layout.
//! - A symlinked file is edited through the link ([`resolve`]).
//! - Writes are a transaction ([`commit`]): every new content is staged in a
//!   temporary file next to its target first, then all are renamed into
//!   place; a failure at any step puts back every file already replaced.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::{Map, Value};
use tempfile::NamedTempFile;

use crate::error::InstallError;

/// Suffix of the backup written next to a file before it is first changed.
pub const BACKUP_SUFFIX: &str = ".dsh-backup";

/// Where a settings path really is: the path itself, or for a symlink (a
/// chain of them) the file it finally names. A dangling link is an error
/// naming the link and its target: writing a plain file there would
/// silently replace the user's link (dotfile managers make these).
pub(crate) fn resolve(path: &Path) -> Result<PathBuf, InstallError> {
    let mut cur = path.to_owned();
    for _ in 0..40 {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&cur).map_err(|source| InstallError::Read {
                    path: cur.clone(),
                    source,
                })?;
                let next = match cur.parent() {
                    Some(dir) if to.is_relative() => dir.join(&to),
                    _ => to,
                };
                cur = next;
            }
            Ok(_) => return Ok(cur),
            Err(e) if e.kind() == io::ErrorKind::NotFound && cur != path => {
                return Err(InstallError::Link {
                    link: path.to_owned(),
                    target: cur,
                    reason: "the link's target does not exist (dangling link)".to_owned(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(cur),
            Err(e) => {
                return Err(InstallError::Link {
                    link: path.to_owned(),
                    target: cur,
                    reason: e.to_string(),
                });
            }
        }
    }
    Err(InstallError::Link {
        link: path.to_owned(),
        target: cur,
        reason: "too many levels of symbolic links".to_owned(),
    })
}

/// The file's text, or `None` when it does not exist. `path` is the real
/// file ([`resolve`]); `shown` the path the user gave, for messages.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, InstallError> {
    let real = resolve(path)?;
    match fs::read(&real) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| InstallError::NotUtf8 {
                path: path.to_owned(),
            }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) if real != path => Err(InstallError::Link {
            link: path.to_owned(),
            target: real,
            reason: format!("cannot read the link's target: {source}"),
        }),
        Err(source) => Err(InstallError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The JSON dialect accepted: JSON plus comments and trailing commas (what
/// Gemini CLI reads); nothing the agents' own parsers would refuse.
fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        ..ParseOptions::default()
    }
}

/// A parsed JSON settings file: the value the installer edits and the
/// syntax tree the edit is applied to.
pub(crate) struct JsonDoc {
    /// The document; always an object.
    pub value: Value,
    original: Value,
    cst: CstRootNode,
    was_blank: bool,
}

impl JsonDoc {
    /// Parses `text` (`None` or blank: an empty object). The top level must
    /// be an object. Errors name the file, line and column.
    pub(crate) fn parse(path: &Path, text: Option<&str>) -> Result<Self, InstallError> {
        let text = text.unwrap_or("");
        let cst =
            CstRootNode::parse(text, &parse_options()).map_err(|e| InstallError::Malformed {
                path: path.to_owned(),
                problem: format!(
                    "{} (line {}, column {}; comments and trailing commas are accepted)",
                    e.kind(),
                    e.line_display(),
                    e.column_display()
                ),
            })?;
        let value = match cst.value() {
            None => Value::Object(Map::new()),
            Some(node) => node.to_serde_value().unwrap_or(Value::Null),
        };
        if !value.is_object() {
            return Err(InstallError::wrong_type(
                path,
                "(top level)",
                "a JSON object",
            ));
        }
        Ok(Self {
            original: value.clone(),
            value,
            cst,
            was_blank: text.trim().is_empty(),
        })
    }

    /// Whether the value differs from the text's.
    pub(crate) fn changed(&self) -> bool {
        self.value != self.original
    }

    /// The text with the edit applied: only what differs is rewritten, new
    /// keys go at the end of their object, in the file's indentation and
    /// line endings. A file that was blank gets a final newline.
    pub(crate) fn render(&self) -> String {
        if !self.changed() {
            return self.cst.to_string();
        }
        let obj = self.cst.object_value_or_set();
        if let (Value::Object(old), Value::Object(new)) = (&self.original, &self.value) {
            sync_object(&obj, old, new);
        }
        let mut text = self.cst.to_string();
        if self.was_blank && !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

/// A `serde_json::Value` as the syntax tree's input.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

fn sync_object(obj: &CstObject, old: &Map<String, Value>, new: &Map<String, Value>) {
    for (k, ov) in old {
        let Some(prop) = obj.get(k) else { continue };
        match new.get(k) {
            None => prop.remove(),
            Some(nv) if nv != ov => match prop.value() {
                Some(node) => sync_node(node, ov, nv),
                None => prop.set_value(input(nv)),
            },
            Some(_) => {}
        }
    }
    for (k, nv) in new {
        if !old.contains_key(k) {
            obj.append(k, input(nv));
        }
    }
}

fn sync_node(node: CstNode, old: &Value, new: &Value) {
    match (old, new, node.as_object(), node.as_array()) {
        (Value::Object(o), Value::Object(n), Some(obj), _) => sync_object(&obj, o, n),
        (Value::Array(o), Value::Array(n), _, Some(arr)) => sync_array(&arr, o, n),
        _ => replace(node, new),
    }
}

fn replace(node: CstNode, new: &Value) {
    match node {
        CstNode::Container(c) => {
            if let Some(o) = c.as_object() {
                o.replace_with(input(new));
            } else if let Some(a) = c.as_array() {
                a.replace_with(input(new));
            }
        }
        CstNode::Leaf(l) => {
            use jsonc_parser::cst::CstLeafNode as L;
            let _ = match l {
                L::BooleanLit(x) => x.replace_with(input(new)),
                L::NullKeyword(x) => x.replace_with(input(new)),
                L::NumberLit(x) => x.replace_with(input(new)),
                L::StringLit(x) => x.replace_with(input(new)),
                L::WordLit(x) => x.replace_with(input(new)),
                _ => None,
            };
        }
    }
}

enum Op {
    Keep,
    Del,
    Add(usize),
}

/// Aligns `old` with `new` (longest common subsequence of equal elements)
/// and edits only the elements that differ: a run of removed elements
/// followed by as many added ones is edited element by element (a changed
/// command stays in its place), other runs are removed or inserted.
fn sync_array(arr: &CstArray, old: &[Value], new: &[Value]) {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push(Op::Keep);
            i += 1;
            j += 1;
        } else if j == m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(Op::Del);
            i += 1;
        } else {
            ops.push(Op::Add(j));
            j += 1;
        }
    }
    // Walk the ops with `at` = index in the tree, `oi` = index in `old`.
    let (mut at, mut oi, mut k) = (0usize, 0usize, 0usize);
    while k < ops.len() {
        match ops[k] {
            Op::Keep => {
                at += 1;
                oi += 1;
                k += 1;
            }
            _ => {
                let start = k;
                while k < ops.len() && matches!(ops[k], Op::Del) {
                    k += 1;
                }
                let dels = k - start;
                let adds: Vec<usize> = ops[k..]
                    .iter()
                    .map_while(|o| match o {
                        Op::Add(j) => Some(*j),
                        _ => None,
                    })
                    .collect();
                k += adds.len();
                if dels == adds.len() {
                    for (d, &j) in adds.iter().enumerate() {
                        if let Some(node) = arr.elements().get(at + d).cloned() {
                            sync_node(node, &old[oi + d], &new[j]);
                        }
                    }
                    at += dels;
                } else {
                    for _ in 0..dels {
                        if let Some(node) = arr.elements().get(at).cloned() {
                            node.remove();
                        }
                    }
                    for (d, &j) in adds.iter().enumerate() {
                        arr.insert(at + d, input(&new[j]));
                    }
                    at += adds.len();
                }
                oi += dels;
            }
        }
    }
}

/// Parses a TOML file for editing (`None`: empty). Errors name the file and
/// the line.
pub(crate) fn parse_toml(
    path: &Path,
    text: Option<&str>,
) -> Result<toml_edit::DocumentMut, InstallError> {
    let text = text.unwrap_or("");
    text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let msg = e.message().trim().lines().collect::<Vec<_>>().join(" ");
        InstallError::Malformed {
            path: path.to_owned(),
            problem: match line {
                Some(l) => format!("{msg} (line {l})"),
                None => msg,
            },
        }
    })
}

/// The backup path of `path`: `<path>.dsh-backup`.
pub(crate) fn backup_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(BACKUP_SUFFIX);
    PathBuf::from(s)
}

/// One file's new state in a [`commit`].
#[derive(Debug, Clone)]
pub(crate) struct Write {
    /// The real path (links resolved).
    pub path: PathBuf,
    /// What is there now (`None`: nothing), put back on a rollback.
    pub before: Option<String>,
    /// What goes there (`None`: the file is removed).
    pub after: Option<String>,
    /// For a file that does not exist yet: the file whose permissions it
    /// gets (a backup is never readable by more than what it copies).
    pub mode_of: Option<PathBuf>,
}

/// A hidden sibling of `path` a file to remove is moved to until the
/// commit succeeds.
fn aside_name(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.dsh-old.{}", std::process::id()))
}

fn werr(path: &Path) -> impl Fn(io::Error) -> InstallError + '_ {
    move |source| InstallError::Write {
        path: path.to_owned(),
        source,
    }
}

/// Writes every change all-or-nothing. Stage: each new content goes to a
/// synced temporary file in its target's directory (created if needed,
/// keeping an existing file's permissions; `tempfile` picks a fresh name
/// and removes it again if it is never persisted). Commit: the temporary
/// files are persisted over their targets (a rename), files to remove are
/// moved aside. On any failure, every target already replaced gets its
/// previous content back, staged files and created directories are
/// removed, and the error names the file that failed.
pub(crate) fn commit(writes: &[Write]) -> Result<(), InstallError> {
    let mut made_dirs: Vec<PathBuf> = Vec::new();
    let remove_dirs = |made_dirs: &[PathBuf]| {
        for d in made_dirs.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    };
    let mut staged: Vec<Option<NamedTempFile>> = Vec::new();
    for w in writes {
        let Some(text) = &w.after else {
            staged.push(None);
            continue;
        };
        match stage(&w.path, text, w.mode_of.as_deref(), &mut made_dirs) {
            Ok(t) => staged.push(Some(t)),
            Err(e) => {
                // Dropping the staged files deletes them.
                drop(staged);
                remove_dirs(&made_dirs);
                return Err(e);
            }
        }
    }
    let mut done: Vec<(usize, Option<PathBuf>)> = Vec::new();
    let mut staged = staged.into_iter();
    for (i, w) in writes.iter().enumerate() {
        let step = match (staged.next().flatten(), &w.before) {
            (Some(tmp), _) => tmp.persist(&w.path).map(|_| None).map_err(|e| e.error),
            (None, Some(_)) => {
                let aside = aside_name(&w.path);
                fs::rename(&w.path, &aside).map(|()| Some(aside))
            }
            (None, None) => Ok(None),
        };
        match step {
            Ok(aside) => done.push((i, aside)),
            Err(source) => {
                for (j, aside) in done.into_iter().rev() {
                    let w = &writes[j];
                    match (aside, &w.before) {
                        (Some(aside), _) => {
                            let _ = fs::rename(aside, &w.path);
                        }
                        (None, Some(before)) => {
                            let _ = write_now(&w.path, before);
                        }
                        (None, None) => {
                            let _ = fs::remove_file(&w.path);
                        }
                    }
                }
                drop(staged);
                remove_dirs(&made_dirs);
                return Err(InstallError::Write {
                    path: w.path.clone(),
                    source,
                });
            }
        }
    }
    for (j, aside) in done {
        if let Some(aside) = aside {
            let _ = fs::remove_file(aside);
            // A directory the removal left empty goes too; one with
            // anything in it stays (remove_dir refuses it).
            if let Some(dir) = writes[j].path.parent() {
                let _ = fs::remove_dir(dir);
            }
        }
    }
    Ok(())
}

/// The new content of `path` in a synced temporary file beside it, with
/// the permissions `path` has now; a new file gets those of `mode_of`, or
/// else what `File::create` would give it: `0o666` less the umask.
fn stage(
    path: &Path,
    text: &str,
    mode_of: Option<&Path>,
    made_dirs: &mut Vec<PathBuf>,
) -> Result<NamedTempFile, InstallError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut missing = Vec::new();
    let mut d = dir;
    while !d.as_os_str().is_empty() && !d.exists() {
        missing.push(d.to_owned());
        match d.parent() {
            Some(p) => d = p,
            None => break,
        }
    }
    for m in missing.into_iter().rev() {
        fs::create_dir(&m).map_err(werr(&m))?;
        made_dirs.push(m);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.dsh-tmp.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    let new_file_mode = {
        use std::os::unix::fs::PermissionsExt as _;
        fs::Permissions::from_mode(0o666)
    };
    #[cfg(unix)]
    builder.permissions(new_file_mode);
    let result = (|| {
        let mut f = builder.tempfile_in(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })?;
        f.write_all(text.as_bytes())?;
        let like = fs::metadata(path).or_else(|e| mode_of.map_or(Err(e), fs::metadata));
        if let Ok(meta) = like {
            f.as_file().set_permissions(meta.permissions())?;
        }
        f.as_file().sync_all()?;
        Ok(f)
    })();
    result.map_err(werr(path))
}

/// Writes one file atomically (a rollback step).
fn write_now(path: &Path, text: &str) -> Result<(), InstallError> {
    let mut dirs = Vec::new();
    let tmp = stage(path, text, None, &mut dirs)?;
    tmp.persist(path).map(drop).map_err(|e| werr(path)(e.error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn edit(text: &str, f: impl FnOnce(&mut Value)) -> String {
        let mut d = JsonDoc::parse(Path::new("s.json"), Some(text)).expect("parses");
        f(&mut d.value);
        d.render()
    }

    #[rstest]
    #[case("{\"env\": {\"A\": \"1\"}}")]
    #[case("{\r\n  \"a\": \"\\u00e9\" // c\r\n}")]
    #[case("{\n  /* x */ \"a\": [1, 2,],\n}")]
    fn an_unchanged_document_keeps_its_bytes(#[case] text: &str) {
        assert_eq!(edit(text, |_| {}), text);
    }

    #[test]
    fn a_new_key_is_added_without_touching_the_rest() {
        let text = "{\r\n  // keep me\r\n  \"a\": \"\\u00e9\"\r\n}";
        let out = edit(text, |v| {
            v["b"] = json!(1);
        });
        assert!(
            out.starts_with("{\r\n  // keep me\r\n  \"a\": \"\\u00e9\","),
            "{out:?}"
        );
        assert!(out.contains("\"b\": 1"), "{out:?}");
        assert!(
            !out.replace("\r\n", "").contains('\n'),
            "CRLF kept: {out:?}"
        );
    }

    #[test]
    fn array_elements_are_removed_and_changed_in_place() {
        let text = "[\n  1, // one\n  2,\n  3\n]";
        let text = format!("{{\"l\": {text}}}");
        let out = edit(&text, |v| {
            v["l"] = json!([1, 3]);
        });
        assert_eq!(
            JsonDoc::parse(Path::new("s"), Some(&out))
                .expect("ok")
                .value,
            json!({"l": [1, 3]})
        );
        assert!(out.contains("1, // one"), "{out}");
        let out = edit(&text, |v| {
            v["l"] = json!([1, 5, 3]);
        });
        assert!(
            out.contains("// one") && out.contains('5') && !out.contains('2'),
            "{out}"
        );
    }

    #[rstest]
    #[case("{ not json", "line 1")]
    #[case("{\n  \"a\": 1\n  \"b\": 2\n}", "line 2")]
    fn bad_json_names_file_and_line(#[case] text: &str, #[case] line: &str) {
        let e = JsonDoc::parse(Path::new("/x/s.json"), Some(text))
            .err()
            .expect("error");
        let s = e.to_string();
        assert!(s.starts_with("/x/s.json") && s.contains(line), "{s}");
    }

    #[test]
    fn top_level_must_be_an_object() {
        let e = JsonDoc::parse(Path::new("/x/s.json"), Some("[1]"))
            .err()
            .expect("error");
        assert!(e.to_string().contains("(top level)"), "{e}");
    }

    #[test]
    fn toml_errors_name_the_line() {
        let e = parse_toml(Path::new("/c.toml"), Some("a = 1\nb = = 2\n")).unwrap_err();
        assert!(e.to_string().contains("(line 2)"), "{e}");
    }

    #[test]
    fn commit_writes_everything_and_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("x/a.json");
        let b = tmp.path().join("b.json");
        fs::write(&b, "old").expect("write");
        commit(&[
            Write {
                path: a.clone(),
                before: None,
                after: Some("A".into()),
                mode_of: None,
            },
            Write {
                path: b.clone(),
                before: Some("old".into()),
                after: None,
                mode_of: None,
            },
        ])
        .expect("commits");
        assert_eq!(fs::read_to_string(&a).expect("a"), "A");
        assert!(!b.exists());
        let names: Vec<_> = fs::read_dir(tmp.path())
            .expect("ls")
            .map(|e| e.expect("e").file_name())
            .collect();
        assert_eq!(names, ["x"]);
    }

    /// Modes survive a commit: an existing file keeps its own, a new one
    /// takes those of `mode_of` (the backup of a 0600 file is 0600).
    #[cfg(unix)]
    #[rstest]
    #[case::private(0o600)]
    #[case::group(0o640)]
    #[case::read_only(0o444)]
    fn commit_keeps_and_copies_permission_bits(#[case] bits: u32) {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let settings = tmp.path().join("settings.json");
        let backup = tmp.path().join("settings.json.dsh-backup");
        fs::write(&settings, "{}").expect("write");
        fs::set_permissions(&settings, fs::Permissions::from_mode(bits)).expect("chmod");
        commit(&[
            Write {
                path: backup.clone(),
                before: None,
                after: Some("{}".into()),
                mode_of: Some(settings.clone()),
            },
            Write {
                path: settings.clone(),
                before: Some("{}".into()),
                after: Some("{\"a\": 1}".into()),
                mode_of: None,
            },
        ])
        .expect("commits");
        let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o7777;
        assert_eq!(mode(&settings), bits, "the edited file");
        assert_eq!(mode(&backup), bits, "the new backup");
    }

    #[test]
    fn a_failed_commit_puts_every_file_back() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("a.json");
        let gone = tmp.path().join("gone.json");
        let blocked = tmp.path().join("blocked");
        fs::write(&a, "A0").expect("write");
        fs::write(&gone, "G0").expect("write");
        fs::create_dir_all(blocked.join("inside")).expect("mkdir");
        let e = commit(&[
            Write {
                path: a.clone(),
                before: Some("A0".into()),
                after: Some("A1".into()),
                mode_of: None,
            },
            Write {
                path: gone.clone(),
                before: Some("G0".into()),
                after: None,
                mode_of: None,
            },
            // A directory (not empty) where a file must go: the rename fails.
            Write {
                path: blocked.clone(),
                before: None,
                after: Some("B".into()),
                mode_of: None,
            },
        ])
        .unwrap_err();
        assert!(e.to_string().contains("blocked"), "{e}");
        assert_eq!(fs::read_to_string(&a).expect("a"), "A0");
        assert_eq!(fs::read_to_string(&gone).expect("g"), "G0");
        let mut names: Vec<_> = fs::read_dir(tmp.path())
            .expect("ls")
            .map(|e| e.expect("e").file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["a.json", "blocked", "gone.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn links_resolve_to_their_target_and_dangling_ones_are_errors() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let real = tmp.path().join("real.json");
        let link = tmp.path().join("link.json");
        fs::write(&real, "{}").expect("write");
        std::os::unix::fs::symlink("real.json", &link).expect("link");
        assert_eq!(resolve(&link).expect("resolves"), real);
        fs::remove_file(&real).expect("rm");
        let e = resolve(&link).unwrap_err().to_string();
        assert!(
            e.contains("link.json") && e.contains("real.json") && e.contains("dangling"),
            "{e}"
        );
    }
}
