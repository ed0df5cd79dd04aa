//! The filesystem a scenario describes: `fs` and `write` values (files,
//! directories, links, fifos, hex or repeated bytes) with their memory-only
//! faults, gates and stale sizes. Separate because these values have their
//! own "exactly one content key" rules, apart from steps and expectations.

use super::expect::{ordered_map, word_or_map};
use serde::{Deserialize, Deserializer};

/// Filesystem operation a fault or gate applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsOpName {
    /// Resolving the path (following links).
    Resolve,
    /// Metadata of the target (also root-marker checks).
    Stat,
    /// Reading content.
    Read,
}

/// Errno a fault injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum FaultErrno {
    /// Permission denied.
    #[serde(rename = "EACCES")]
    Eacces,
    /// I/O error.
    #[serde(rename = "EIO")]
    Eio,
    /// Symlink loop.
    #[serde(rename = "ELOOP")]
    Eloop,
    /// Timed out.
    #[serde(rename = "ETIMEDOUT")]
    Etimedout,
}

/// `fault: {op, error}` on an fs value (memory only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// Which operation fails.
    pub op: FsOpName,
    /// With which error.
    pub error: FaultErrno,
}

/// What an fs entry is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsContent {
    /// A regular file with these bytes.
    File(Vec<u8>),
    /// An empty directory.
    Dir,
    /// A symbolic link with this target (relative or absolute).
    Link(String),
    /// A named pipe.
    Fifo,
}

/// One value of `fs` or a `write` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsEntry {
    /// The node itself.
    pub content: FsContent,
    /// Memory only: injected failure.
    pub fault: Option<FaultSpec>,
    /// Memory only: size reported by stat.
    pub stale_size: Option<u64>,
    /// Memory only: the first such operation blocks until released or cancelled.
    pub gate: Option<FsOpName>,
    /// Memory only: the provider version does not change with this write.
    pub keep_version: bool,
}

impl FsEntry {
    /// A plain entry without memory-only knobs.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::{FsContent, FsEntry};
    /// let e = FsEntry::plain(FsContent::Dir);
    /// assert!(e.memory_knobs().is_empty());
    /// ```
    pub fn plain(content: FsContent) -> Self {
        Self {
            content,
            fault: None,
            stale_size: None,
            gate: None,
            keep_version: false,
        }
    }

    /// Names of the memory-only knobs this entry uses.
    pub fn memory_knobs(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.fault.is_some() {
            out.push("fault");
        }
        if self.stale_size.is_some() {
            out.push("stale_size");
        }
        if self.gate.is_some() {
            out.push("gate");
        }
        if self.keep_version {
            out.push("keep_version");
        }
        out
    }
}

/// The map form of an fs value, before its "exactly one content key" check.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFsMap {
    text: Option<String>,
    bytes_hex: Option<String>,
    repeat: Option<String>,
    bytes: Option<u64>,
    link: Option<String>,
    fifo: Option<bool>,
    fault: Option<FaultSpec>,
    stale_size: Option<u64>,
    gate: Option<FsOpName>,
    #[serde(default)]
    keep_version: bool,
}

/// Largest `repeat` file a scenario may ask for; guards the runner against a
/// typo allocating gigabytes.
const MAX_REPEAT_BYTES: u64 = 64 * 1024 * 1024;

impl RawFsMap {
    fn into_entry(self) -> Result<FsEntry, String> {
        let mut kinds = Vec::new();
        if self.text.is_some() {
            kinds.push("text");
        }
        if self.bytes_hex.is_some() {
            kinds.push("bytes_hex");
        }
        if self.repeat.is_some() || self.bytes.is_some() {
            kinds.push("repeat");
        }
        if self.link.is_some() {
            kinds.push("link");
        }
        if self.fifo.is_some() {
            kinds.push("fifo");
        }
        if kinds.len() != 1 {
            return Err(format!(
                "an fs value needs exactly one of text, bytes_hex, repeat+bytes, link, fifo; got {}",
                if kinds.is_empty() {
                    "none".to_owned()
                } else {
                    kinds.join(", ")
                }
            ));
        }
        let content = if let Some(t) = self.text {
            FsContent::File(t.into_bytes())
        } else if let Some(h) = self.bytes_hex {
            FsContent::File(decode_hex(&h)?)
        } else if let Some(l) = self.link {
            if l.is_empty() {
                return Err("link target must not be empty".to_owned());
            }
            FsContent::Link(l)
        } else if let Some(f) = self.fifo {
            if !f {
                return Err("`fifo` must be true".to_owned());
            }
            FsContent::Fifo
        } else {
            match (self.repeat, self.bytes) {
                (Some(r), Some(n)) => {
                    if n > MAX_REPEAT_BYTES {
                        return Err(format!(
                            "`bytes: {n}` exceeds the runner limit of {MAX_REPEAT_BYTES}"
                        ));
                    }
                    if r.is_empty() && n > 0 {
                        return Err("`repeat` must not be empty".to_owned());
                    }
                    let n = usize::try_from(n).map_err(|_| "`bytes` too large".to_owned())?;
                    FsContent::File(r.bytes().cycle().take(n).collect())
                }
                (Some(_), None) => return Err("`repeat` needs `bytes`".to_owned()),
                _ => return Err("`bytes` needs `repeat`".to_owned()),
            }
        };
        Ok(FsEntry {
            content,
            fault: self.fault,
            stale_size: self.stale_size,
            gate: self.gate,
            keep_version: self.keep_version,
        })
    }
}

/// Decodes an even-length hex string (either case).
pub(super) fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return Err(format!("bytes_hex has odd length {}", s.len()));
    }
    s.as_bytes()
        .chunks(2)
        .map(|pair| {
            let hi = hex_val(pair[0]);
            let lo = hex_val(pair[1]);
            match (hi, lo) {
                (Some(h), Some(l)) => Ok(h << 4 | l),
                _ => Err(format!(
                    "bytes_hex: `{}` is not hex",
                    String::from_utf8_lossy(pair)
                )),
            }
        })
        .collect()
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl<'de> Deserialize<'de> for FsEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The bare scalar `dir` is a directory; a file whose text is "dir"
        // is written `{text: dir}`.
        let word = |v: &str| {
            Ok(FsEntry::plain(if v == "dir" {
                FsContent::Dir
            } else {
                FsContent::File(v.as_bytes().to_vec())
            }))
        };
        let expecting =
            "file text, `dir`, or a map (text | bytes_hex | repeat+bytes | link | fifo)";
        word_or_map(d, expecting, word, RawFsMap::into_entry)
    }
}

/// An ordered `PATH: VALUE` map (`fs`, `write`), kept in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsMap(pub Vec<(String, FsEntry)>);

impl<'de> Deserialize<'de> for FsMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = |key: &str, before: &[(String, FsEntry)]| {
            if !key.starts_with('/') {
                return Err(format!("fs path `{key}` must be absolute"));
            }
            if before.iter().any(|(k, _)| k == key) {
                return Err(format!("fs path `{key}` given twice"));
            }
            Ok(())
        };
        ordered_map(d, "a map from absolute path to fs value", key).map(FsMap)
    }
}
