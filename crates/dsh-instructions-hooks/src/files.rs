//! Reading, parsing and writing the settings files: JSON keeps its key order
//! (serde_json `preserve_order`) and its indentation, TOML goes through
//! `toml_edit` so comments and layout survive; writes are atomic (a
//! temporary file in the same directory, then a rename) and preceded by a
//! backup of the previous content (R-HOOK-5).

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::Serialize as _;
use serde_json::Value;

use crate::error::HookError;

/// Suffix of the backup written next to a file before it is changed.
pub const BACKUP_SUFFIX: &str = ".dsh-backup";

/// The file's text, or `None` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, HookError> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| HookError::NotUtf8 {
                path: path.to_owned(),
            }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(HookError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// A parsed JSON settings file and how to write it back the way it was laid out.
#[derive(Debug, Clone)]
pub(crate) struct JsonDoc {
    /// The document; always an object.
    pub value: Value,
    indent: String,
}

impl JsonDoc {
    /// Parses `text` (`None` or blank: an empty object). The top level must
    /// be an object.
    pub(crate) fn parse(path: &Path, text: Option<&str>) -> Result<Self, HookError> {
        let text = text.unwrap_or("");
        if text.trim().is_empty() {
            return Ok(Self {
                value: Value::Object(serde_json::Map::new()),
                indent: "  ".to_owned(),
            });
        }
        let value: Value = serde_json::from_str(text).map_err(|e| HookError::Malformed {
            path: path.to_owned(),
            problem: e.to_string(),
        })?;
        if !value.is_object() {
            return Err(HookError::wrong_type(path, "(top level)", "a JSON object"));
        }
        Ok(Self {
            value,
            indent: detect_indent(text),
        })
    }

    /// The document as text, indented like the original, ending in a newline.
    pub(crate) fn render(&self) -> String {
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        // Serializing a Value into memory cannot fail (keys are strings).
        let _ = self.value.serialize(&mut ser);
        let mut text = String::from_utf8(buf).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The indentation unit of a pretty-printed JSON text: the leading white
/// space of its first indented line, two spaces when there is none.
fn detect_indent(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .to_owned()
}

/// Parses a TOML file for editing (`None`: empty).
pub(crate) fn parse_toml(
    path: &Path,
    text: Option<&str>,
) -> Result<toml_edit::DocumentMut, HookError> {
    text.unwrap_or("")
        .parse::<toml_edit::DocumentMut>()
        .map_err(|e| HookError::Malformed {
            path: path.to_owned(),
            problem: e.to_string().trim().replace('\n', " "),
        })
}

/// The backup path of `path`: `<path>.dsh-backup`.
pub(crate) fn backup_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(BACKUP_SUFFIX);
    PathBuf::from(s)
}

/// Writes `text` to `path` atomically: a temporary file in the same
/// directory (created if needed) is written, synced and renamed over the
/// target, so a reader sees the old or the new file, never a part. An
/// existing file's permissions are kept.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), HookError> {
    let err = |source| HookError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(err)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.dsh-tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        if let Ok(meta) = fs::metadata(path) {
            f.set_permissions(meta.permissions())?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// Removes `path`; a file that is already gone is fine.
pub(crate) fn remove(path: &Path) -> Result<(), HookError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(HookError::Write {
            path: path.to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("{\n    \"a\": 1\n}\n", "    ")]
    #[case("{\n\t\"a\": 1\n}", "\t")]
    #[case("{\"a\": 1}", "  ")]
    fn indentation_is_detected(#[case] text: &str, #[case] want: &str) {
        assert_eq!(detect_indent(text), want);
    }

    #[test]
    fn render_keeps_key_order_and_indent() {
        let text = "{\n    \"zeta\": 1,\n    \"alpha\": {\n        \"m\": true,\n        \"b\": null\n    }\n}\n";
        let doc = JsonDoc::parse(Path::new("s.json"), Some(text)).expect("parses");
        assert_eq!(doc.render(), text);
    }

    #[rstest]
    #[case("{ not json")]
    #[case("[1, 2]")]
    fn bad_json_is_a_typed_error(#[case] text: &str) {
        let e = JsonDoc::parse(Path::new("/x/s.json"), Some(text)).unwrap_err();
        assert!(e.to_string().starts_with("/x/s.json"), "{e}");
    }

    #[test]
    fn atomic_write_creates_parents_and_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = tmp.path().join("a/b/settings.json");
        write_atomic(&p, "{}\n").expect("writes");
        assert_eq!(fs::read_to_string(&p).expect("reads"), "{}\n");
        let names: Vec<_> = fs::read_dir(p.parent().expect("parent"))
            .expect("lists")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["settings.json"]);
    }
}
