//! Scenario types and strict YAML parsing (conformance format, version 1).
//!
//! Parsing is two-layered: serde (via `serde-saphyr`) rejects unknown keys and
//! bad enum values with a line and column, then [`Scenario::parse`] checks the
//! rules serde cannot express (exactly one action per step, a non-empty
//! `trusted_roots`, valid hex, …). Every error names the file and, inside a
//! step, the step number and action, so a scenario author can find it at once.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

/// The `config` block is the state crate's own input type (SPEC §3 keys in
/// snake_case, unknown keys rejected): the scenario reads exactly what a
/// settings file would, and validation stays with the state crate.
pub use dsh_instructions_state::ConfigInput;

/// A filesystem provider a scenario runs on (R-CONF-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// The in-memory provider of `dsh-instructions-discovery`.
    Memory,
    /// The cap-std provider over a real temporary directory.
    Disk,
}

impl ProviderKind {
    /// The label used in runner output (`[memory]`, `[disk]`).
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::ProviderKind;
    /// assert_eq!(ProviderKind::Disk.label(), "disk");
    /// ```
    pub fn label(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Disk => "disk",
        }
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "memory" => Ok(Self::Memory),
            "disk" => Ok(Self::Disk),
            other => Err(format!("unknown provider `{other}` (memory | disk)")),
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Environment used for home resolution.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// `HOME`, default `/home/user`.
    #[serde(rename = "HOME", default = "default_home")]
    pub home: String,
    /// `DSH_HOME`, default unset.
    #[serde(rename = "DSH_HOME", default)]
    pub dsh_home: Option<String>,
}

fn default_home() -> String {
    "/home/user".to_owned()
}

impl Default for Env {
    fn default() -> Self {
        Self {
            home: default_home(),
            dsh_home: None,
        }
    }
}

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
fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
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
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FsEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "file text, `dir`, or a map (text | bytes_hex | repeat+bytes | link | fifo)",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FsEntry, E> {
                // The bare scalar `dir` is a directory; a file whose text is
                // "dir" is written `{text: dir}`.
                Ok(FsEntry::plain(if v == "dir" {
                    FsContent::Dir
                } else {
                    FsContent::File(v.as_bytes().to_vec())
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FsEntry, A::Error> {
                let raw = RawFsMap::deserialize(de::value::MapAccessDeserializer::new(map))?;
                raw.into_entry().map_err(de::Error::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// An ordered `PATH: VALUE` map (`fs`, `write`), kept in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsMap(pub Vec<(String, FsEntry)>);

impl<'de> Deserialize<'de> for FsMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FsMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from absolute path to fs value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FsMap, A::Error> {
                let mut out: Vec<(String, FsEntry)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !key.starts_with('/') {
                        return Err(de::Error::custom(format!(
                            "fs path `{key}` must be absolute"
                        )));
                    }
                    if out.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format!("fs path `{key}` given twice")));
                    }
                    let value = map.next_value::<FsEntry>()?;
                    out.push((key, value));
                }
                Ok(FsMap(out))
            }
            fn visit_unit<E: de::Error>(self) -> Result<FsMap, E> {
                Ok(FsMap::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// Downstream decision of a pre-step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Enter the batch.
    #[default]
    Enter,
    /// Reject the step.
    Reject,
    /// Enter with no messages.
    Empty,
}

/// `pre_step: {…}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreStep {
    /// Direct prompt messages this step claimed.
    #[serde(default = "default_claimed")]
    pub claimed: Vec<String>,
    /// Messages the host driver appends after them.
    #[serde(default)]
    pub extra: Vec<String>,
    /// Decision of the downstream chain.
    #[serde(default)]
    pub decision: Decision,
    /// Explicit step number in the turn; see [`crate::runner`] for the default.
    pub step: Option<u32>,
    /// Memory only: cancel once an operation on this path blocks on a gate.
    pub cancel_when_blocked: Option<String>,
}

fn default_claimed() -> Vec<String> {
    vec!["prompt".to_owned()]
}

impl Default for PreStep {
    fn default() -> Self {
        Self {
            claimed: default_claimed(),
            extra: Vec::new(),
            decision: Decision::Enter,
            step: None,
            cancel_when_blocked: None,
        }
    }
}

/// `tool: {…}`: a tool execution's result arrives.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolStep {
    /// Tool name.
    pub name: String,
    /// Value of the path argument (absolute paths are rewritten on disk);
    /// beside `args` it fills the first configured path argument.
    pub path: Option<String>,
    /// The tool's arguments, explicitly (string values; absolute paths
    /// inside them are rewritten on disk). Shell tools (R-CFG-11) take their
    /// command from here.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// `false` = error result.
    #[serde(default = "yes")]
    pub ok: bool,
    /// Cancelled execution.
    #[serde(default)]
    pub cancelled: bool,
    /// Execution token (default: a fresh unique token).
    pub token: Option<String>,
    /// Parent execution token (code-mode child).
    pub parent: Option<String>,
}

fn yes() -> bool {
    true
}

/// A session event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `step/start`.
    StepStart,
    /// `step/end`.
    StepEnd,
    /// `turn/end`.
    TurnEnd,
}

/// `compact: …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compact {
    /// Hide the latest visible baseline message.
    Baseline,
    /// Hide every workspace message.
    Workspace,
    /// Hide every event so far.
    All,
    /// Hide these 0-based indexes over persisted user messages.
    Hide(Vec<usize>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHide {
    hide: Vec<usize>,
}

impl<'de> Deserialize<'de> for Compact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Compact;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("baseline | workspace | all | {hide: [N, …]}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Compact, E> {
                match v {
                    "baseline" => Ok(Compact::Baseline),
                    "workspace" => Ok(Compact::Workspace),
                    "all" => Ok(Compact::All),
                    other => Err(E::unknown_variant(
                        other,
                        &["baseline", "workspace", "all", "hide"],
                    )),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Compact, A::Error> {
                let raw = RawHide::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Compact::Hide(raw.hide))
            }
        }
        d.deserialize_any(V)
    }
}

/// `remount: {…}`: each given part replaces the earlier one whole.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remount {
    /// New configuration.
    pub config: Option<ConfigInput>,
    /// New environment.
    pub env: Option<Env>,
    /// New trusted roots (non-empty).
    pub trusted_roots: Option<Vec<String>>,
}

/// `resume: {}` takes no keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {}

/// One step action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A pre-step.
    PreStep(PreStep),
    /// A tool result.
    Tool(ToolStep),
    /// A session event.
    Event(EventKind),
    /// Filesystem writes.
    Write(FsMap),
    /// Filesystem removals.
    Remove(Vec<String>),
    /// Open a gate.
    Release(String),
    /// Extension (README, decision 0030): assert that an operation on this
    /// path is blocked on its gate, i.e. the work under test reached it.
    Blocked(String),
    /// Hide events from the visible surface.
    Compact(Compact),
    /// New loop instance over the same history.
    Resume,
    /// New plugin instance over the same history.
    Remount(Remount),
}

impl Action {
    /// The action key as written in YAML.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::Action;
    /// assert_eq!(Action::Resume.name(), "resume");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Self::PreStep(_) => "pre_step",
            Self::Tool(_) => "tool",
            Self::Event(_) => "event",
            Self::Write(_) => "write",
            Self::Remove(_) => "remove",
            Self::Release(_) => "release",
            Self::Blocked(_) => "blocked",
            Self::Compact(_) => "compact",
            Self::Resume => "resume",
            Self::Remount(_) => "remount",
        }
    }
}

/// `outcome:` of a pre-step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The step completed.
    Ok,
    /// The step was cancelled.
    Cancelled,
}

/// `intro:` classification of the first block after any notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intro {
    /// R-REN-2 normal intro.
    Normal,
    /// SUPERSEDE + normal.
    Replacement,
    /// The empty replacement baseline sentence pair.
    EmptyReplacement,
    /// The compact intro.
    Compact,
    /// SUPERSEDE + compact.
    ReplacementCompact,
    /// No intro block: the part has no block after any notice, or that block
    /// is a section header.
    None,
    /// An observed first block that is neither an intro nor a section (never
    /// written in a scenario: `#[serde(skip)]`), so it matches no `intro:`.
    #[serde(skip)]
    Unrecognised,
}

impl Intro {
    /// The YAML spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Replacement => "replacement",
            Self::EmptyReplacement => "empty_replacement",
            Self::Compact => "compact",
            Self::ReplacementCompact => "replacement_compact",
            Self::None => "none",
            Self::Unrecognised => "an unrecognised block",
        }
    }
}

/// A change action in a message source (R-STATE-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeAction {
    /// First load of a scope.
    Set,
    /// New content or path for a loaded scope.
    Replace,
    /// Tombstone.
    Remove,
}

impl ChangeAction {
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
        }
    }
}

/// An expected digest: `digest_of: "text"` (hashed by the runner) or
/// `digest: "<40 hex>"` (literal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestExpect {
    /// SHA-1 of these UTF-8 bytes.
    Of(String),
    /// This exact value.
    Literal(String),
}

impl DigestExpect {
    /// The lowercase hex digest this expectation stands for.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::DigestExpect;
    /// assert_eq!(
    ///     DigestExpect::Of("abc".into()).hex(),
    ///     "a9993e364706816aba3e25717850c26c9cd0d89d"
    /// );
    /// ```
    pub fn hex(&self) -> String {
        match self {
            Self::Of(text) => crate::digest::sha1_hex(text.as_bytes()),
            Self::Literal(d) => d.clone(),
        }
    }
}

fn digest_pair(
    digest_of: Option<String>,
    digest: Option<String>,
) -> Result<Option<DigestExpect>, String> {
    match (digest_of, digest) {
        (Some(_), Some(_)) => Err("give either `digest_of` or `digest`, not both".to_owned()),
        (Some(t), None) => Ok(Some(DigestExpect::Of(t))),
        (None, Some(d)) => {
            if d.len() != 40 || !d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(format!(
                    "`digest` must be 40 lowercase hex digits, got `{d}`"
                ));
            }
            Ok(Some(DigestExpect::Literal(d)))
        }
        (None, None) => Ok(None),
    }
}

/// One expected change entry of a message source. For the optional wire
/// fields, `None` = not checked, `Some(None)` = must be absent (written
/// `previous_path: null`, `digest: null`), `Some(Some(x))` = must equal `x`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeExpect {
    /// Expected action.
    pub action: Option<ChangeAction>,
    /// Expected display path.
    pub path: Option<String>,
    /// Expected previous path, or its absence.
    pub previous_path: Option<Option<String>>,
    /// Expected digest, or its absence.
    pub digest: Option<Option<DigestExpect>>,
    /// Expected exact scope key.
    pub scope: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChange {
    action: Option<ChangeAction>,
    path: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    previous_path: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    digest_of: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    digest: Option<Option<String>>,
    scope: Option<String>,
}

/// `digest: null` asserts absence; `digest_of: null` is refused rather than
/// read as "not checked", since a reader would take it for an absence check.
fn change_digest(
    digest_of: Option<Option<String>>,
    digest: Option<Option<String>>,
) -> Result<Option<Option<DigestExpect>>, String> {
    match (digest_of, digest) {
        (Some(None), _) => Err(
            "`digest_of: null` hashes nothing; write `digest: null` for an absent digest"
                .to_owned(),
        ),
        (Some(Some(_)), Some(None)) => {
            Err("give either `digest_of` or `digest`, not both".to_owned())
        }
        (None, Some(None)) => Ok(Some(None)),
        (of, lit) => Ok(digest_pair(of.flatten(), lit.flatten())?.map(Some)),
    }
}

impl<'de> Deserialize<'de> for ChangeExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawChange::deserialize(d)?;
        Ok(Self {
            action: raw.action,
            path: raw.path,
            previous_path: raw.previous_path,
            digest: change_digest(raw.digest_of, raw.digest).map_err(de::Error::custom)?,
            scope: raw.scope,
        })
    }
}

/// `identity:` expectation of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdentityExpect {
    /// Present, any value.
    Any,
    /// Exactly this value.
    Exact(String),
}

impl<'de> Deserialize<'de> for IdentityExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(if s == "any" {
            Self::Any
        } else {
            Self::Exact(s)
        })
    }
}

/// `source:` expectation of a message.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceExpect {
    /// `true`: `baseline: true` present; `false`: field absent.
    pub baseline: Option<bool>,
    /// Baseline identity.
    pub identity: Option<IdentityExpect>,
    /// The exact change list, in order.
    pub changes: Option<Vec<ChangeExpect>>,
}

/// Message matcher: only the keys written are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageMatcher {
    /// Exact full text (parts joined by `\n`).
    pub text: Option<String>,
    /// Section header lines, in order.
    pub sections: Option<Vec<String>>,
    /// Substrings that must occur.
    pub contains: Option<Vec<String>>,
    /// Substrings that must not occur.
    pub not_contains: Option<Vec<String>>,
    /// Intro classification of the first part.
    pub intro: Option<Intro>,
    /// Budget notice line of the first part: `Some(None)` = no notice.
    #[serde(default, deserialize_with = "nullable")]
    pub notice: Option<Option<String>>,
    /// Number of text parts.
    pub parts: Option<usize>,
    /// Byte length of every part at most.
    pub max_len: Option<usize>,
    /// Byte length of the single part exactly.
    pub len: Option<usize>,
    /// Typed source.
    pub source: Option<SourceExpect>,
}

/// Distinguishes an absent key (`None`) from one written as `null` or with no
/// value (`Some(None)`): an expectation of "none" (`entered`, `notice`), and a
/// step action given with defaults (`resume:`, `pre_step:`).
fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Expected visible state for one display path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VisibleExpect {
    /// No scope's latest visible change names this path.
    None,
    /// The latest visible change naming this path is a remove.
    Removed,
    /// The latest visible change naming this path is a set or replace.
    Loaded {
        /// Expected action (`set` or `replace`).
        action: Option<ChangeAction>,
        /// Expected digest.
        digest: Option<DigestExpect>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVisible {
    action: Option<ChangeAction>,
    digest_of: Option<String>,
    digest: Option<String>,
}

impl<'de> Deserialize<'de> for VisibleExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VisibleExpect;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("none | removed | {action, digest_of | digest}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VisibleExpect, E> {
                match v {
                    "none" => Ok(VisibleExpect::None),
                    "removed" => Ok(VisibleExpect::Removed),
                    other => Err(E::unknown_variant(other, &["none", "removed"])),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<VisibleExpect, A::Error> {
                let raw = RawVisible::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if raw.action == Some(ChangeAction::Remove) {
                    return Err(de::Error::custom(
                        "write `removed` for a visible remove, not `{action: remove}`",
                    ));
                }
                Ok(VisibleExpect::Loaded {
                    action: raw.action,
                    digest: digest_pair(raw.digest_of, raw.digest).map_err(de::Error::custom)?,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// An ordered `display path: expectation` map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VisibleMap(pub Vec<(String, VisibleExpect)>);

impl<'de> Deserialize<'de> for VisibleMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VisibleMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from display path to visible expectation")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<VisibleMap, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    out.push((k, map.next_value::<VisibleExpect>()?));
                }
                Ok(VisibleMap(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// `expect:` of a step; only the keys written are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Pre-step outcome.
    pub outcome: Option<Outcome>,
    /// Labels of the decision's messages.
    pub batch: Option<Vec<String>>,
    /// The workspace message folded into this batch: `Some(None)` = none.
    #[serde(default, deserialize_with = "nullable")]
    pub entered: Option<Option<MessageMatcher>>,
    /// Pending workspace messages in the next-step inbox.
    pub inbox: Option<Vec<MessageMatcher>>,
    /// Labels of every persisted user message.
    pub history: Option<Vec<String>>,
    /// Visible state by display path.
    pub visible: Option<VisibleMap>,
    /// Memory only: files opened for content during this step.
    pub reads: Option<u64>,
    /// Memory only: at most this many resolve+stat calls during this step.
    pub probes_max: Option<u64>,
}

/// One step of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What happens.
    pub action: Action,
    /// What is checked afterwards (after `settle()`).
    pub expect: Option<Expect>,
    /// 1-based line of the step in its file, when known.
    pub line: Option<u64>,
}

/// A parsed scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Unique name (default: the file stem).
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// One line saying what is pinned.
    pub about: Option<String>,
    /// Free words for `--tag` filters.
    pub tags: Vec<String>,
    /// Providers to run on (default both).
    pub providers: Vec<ProviderKind>,
    /// Raw configuration, `None` when `disabled: true`.
    pub config: Option<ConfigInput>,
    /// Mount with no config (plugin off).
    pub disabled: bool,
    /// Mount without a filesystem provider.
    pub no_provider: bool,
    /// Environment for home resolution.
    pub env: Env,
    /// Explicit trusted roots (non-empty), or `None` for the default.
    pub trusted_roots: Option<Vec<String>>,
    /// Session cwd (absolute, scenario filesystem).
    pub cwd: String,
    /// Initial tree.
    pub fs: FsMap,
    /// Steps in order.
    pub steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    about: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    providers: Option<Vec<ProviderKind>>,
    config: Option<ConfigInput>,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    no_provider: bool,
    #[serde(default)]
    env: Env,
    trusted_roots: Option<Vec<String>>,
    cwd: String,
    #[serde(default)]
    fs: FsMap,
    #[serde(default)]
    steps: Vec<Spanned<RawStep>>,
}

/// A step before the "exactly one action" check. A present-but-null action
/// value (`resume:` or `pre_step:`) counts as given with defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default, deserialize_with = "nullable")]
    pre_step: Option<Option<PreStep>>,
    tool: Option<ToolStep>,
    event: Option<EventKind>,
    write: Option<FsMap>,
    remove: Option<Vec<String>>,
    release: Option<String>,
    blocked: Option<String>,
    compact: Option<Compact>,
    #[serde(default, deserialize_with = "nullable")]
    resume: Option<Option<Resume>>,
    #[serde(default, deserialize_with = "nullable")]
    remount: Option<Option<Remount>>,
    expect: Option<Expect>,
}

impl RawStep {
    fn into_step(self, line: Option<u64>) -> Result<Step, (String, String)> {
        let mut actions = Vec::new();
        if let Some(p) = self.pre_step {
            actions.push(Action::PreStep(p.unwrap_or_default()));
        }
        if let Some(t) = self.tool {
            actions.push(Action::Tool(t));
        }
        if let Some(e) = self.event {
            actions.push(Action::Event(e));
        }
        if let Some(w) = self.write {
            actions.push(Action::Write(w));
        }
        if let Some(r) = self.remove {
            actions.push(Action::Remove(r));
        }
        if let Some(r) = self.release {
            actions.push(Action::Release(r));
        }
        if let Some(b) = self.blocked {
            actions.push(Action::Blocked(b));
        }
        if let Some(c) = self.compact {
            actions.push(Action::Compact(c));
        }
        if self.resume.is_some() {
            actions.push(Action::Resume);
        }
        if let Some(r) = self.remount {
            actions.push(Action::Remount(r.unwrap_or_default()));
        }
        if actions.len() != 1 {
            let names: Vec<_> = actions.iter().map(Action::name).collect();
            let label = if names.is_empty() {
                "no action".to_owned()
            } else {
                names.join(", ")
            };
            return Err((
                label.clone(),
                format!("a step needs exactly one action key, got {label}"),
            ));
        }
        let action = actions.remove(0);
        if matches!(action, Action::Blocked(_)) && self.expect.is_some() {
            // Settling would wait for the very projection held at the gate.
            return Err((
                "blocked".to_owned(),
                "a `blocked` step takes no `expect` (settling would wait on the gate)".to_owned(),
            ));
        }
        Ok(Step {
            action,
            expect: self.expect,
            line,
        })
    }
}

/// Where a parse error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRef {
    /// 1-based step number.
    pub index: usize,
    /// Action key(s) of that step.
    pub action: String,
}

/// A scenario file that could not be read or parsed. Never a skip: the runner
/// counts it as a failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ParseError {
    /// The file.
    pub file: PathBuf,
    /// The step the error is in, when it is inside `steps`.
    pub step: Option<StepRef>,
    /// The offending key, when known.
    pub key: Option<String>,
    /// 1-based line and column, when known.
    pub position: Option<(u64, u64)>,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    fn render(&self) -> String {
        let mut out = self.file.display().to_string();
        if let Some((l, c)) = self.position {
            out.push_str(&format!(":{l}:{c}"));
        }
        if let Some(s) = &self.step {
            out.push_str(&format!(": step {} ({})", s.index, s.action));
        }
        if let Some(k) = &self.key {
            out.push_str(&format!(": key `{k}`"));
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }
}

/// Loose view used only to locate an error inside `steps`.
#[derive(Deserialize)]
struct LooseDoc {
    #[serde(default)]
    steps: Vec<Spanned<BTreeMap<String, IgnoredAny>>>,
}

fn action_of(keys: &BTreeMap<String, IgnoredAny>) -> String {
    let names: Vec<&str> = keys
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "expect")
        .collect();
    if names.is_empty() {
        "no action".to_owned()
    } else {
        names.join(", ")
    }
}

/// Finds the key a serde error is about: the name in "unknown field `x`",
/// else the mapping key written before the error column on its line.
fn key_of(message: &str, source: &str, position: Option<(u64, u64)>) -> Option<String> {
    if let Some(rest) = message.split("unknown field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    if let Some(rest) = message.split("missing field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    let (line, col) = position?;
    let text = source
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let upto: String = text
        .chars()
        .take(usize::try_from(col).ok()?.saturating_sub(1))
        .collect();
    // The last `key:` before the error column (block or flow mapping), else
    // the first one after it (errors reported at the start of a mapping).
    let before = match upto.rfind(':') {
        Some(i) => &upto[..i],
        None => {
            let after = &text[upto.len()..];
            let end = after.find(':')?;
            &after[..end]
        }
    };
    let key = before
        .rsplit(|c: char| c == '{' || c == ',' || c == '-' || c.is_whitespace())
        .find(|s| !s.is_empty())?
        .trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty()).then(|| key.to_owned())
}

impl Scenario {
    /// Reads and parses a scenario file.
    #[expect(
        clippy::result_large_err,
        reason = "cold path: one error per unparsable file"
    )]
    pub fn load(path: &Path) -> Result<Self, ParseError> {
        let source = std::fs::read_to_string(path).map_err(|e| ParseError {
            file: path.to_owned(),
            step: None,
            key: None,
            position: None,
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(path, &source)
    }

    /// Parses scenario text; `file` names it in errors and gives the default name.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::Scenario;
    /// let s = Scenario::parse(
    ///     "smoke.yaml".as_ref(),
    ///     "cwd: /r\nconfig: {max_bytes: 100}\nsteps:\n  - pre_step: {}\n",
    /// )
    /// .unwrap();
    /// assert_eq!(s.name, "smoke");
    /// assert_eq!(s.steps.len(), 1);
    ///
    /// let err = Scenario::parse("bad.yaml".as_ref(), "cwd: /r\nsteps:\n  - pre_step: {claimd: []}\n")
    ///     .unwrap_err();
    /// assert_eq!(err.step.unwrap().index, 1);
    /// assert_eq!(err.key.as_deref(), Some("claimd"));
    /// ```
    #[expect(
        clippy::result_large_err,
        reason = "cold path: one error per unparsable file"
    )]
    pub fn parse(file: &Path, source: &str) -> Result<Self, ParseError> {
        let raw: RawScenario = match serde_saphyr::from_str_with_options(source, yaml_options()) {
            Ok(r) => r,
            Err(e) => return Err(Self::serde_error(file, source, &e)),
        };
        let err = |step: Option<StepRef>, key: Option<&str>, message: String, line: Option<u64>| {
            ParseError {
                file: file.to_owned(),
                step,
                key: key.map(str::to_owned),
                position: line.map(|l| (l, 1)),
                message,
            }
        };
        let mut steps = Vec::with_capacity(raw.steps.len());
        for (i, spanned) in raw.steps.into_iter().enumerate() {
            let line = Some(spanned.referenced.line());
            let step = spanned.value.into_step(line).map_err(|(action, m)| {
                err(
                    Some(StepRef {
                        index: i + 1,
                        action,
                    }),
                    None,
                    m,
                    line,
                )
            })?;
            if let Action::Remount(r) = &step.action
                && r.trusted_roots.as_ref().is_some_and(Vec::is_empty)
            {
                return Err(err(
                    Some(StepRef {
                        index: i + 1,
                        action: "remount".to_owned(),
                    }),
                    Some("trusted_roots"),
                    "an empty trusted_roots list is a scenario error".to_owned(),
                    line,
                ));
            }
            steps.push(step);
        }
        if raw.trusted_roots.as_ref().is_some_and(Vec::is_empty) {
            return Err(err(
                None,
                Some("trusted_roots"),
                "an empty trusted_roots list is a scenario error".to_owned(),
                None,
            ));
        }
        if !raw.cwd.starts_with('/') {
            return Err(err(
                None,
                Some("cwd"),
                format!("`{}` must be absolute", raw.cwd),
                None,
            ));
        }
        if raw.disabled && raw.config.is_some() {
            return Err(err(
                None,
                Some("config"),
                "`disabled: true` mounts with no config; drop `config`".to_owned(),
                None,
            ));
        }
        let providers = match raw.providers {
            Some(p) if p.is_empty() => {
                return Err(err(
                    None,
                    Some("providers"),
                    "must not be empty".to_owned(),
                    None,
                ));
            }
            Some(mut p) => {
                p.sort();
                p.dedup();
                p
            }
            None => vec![ProviderKind::Memory, ProviderKind::Disk],
        };
        let name = raw.name.unwrap_or_else(|| {
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(Self {
            name,
            file: file.to_owned(),
            about: raw.about,
            tags: raw.tags,
            providers,
            config: if raw.disabled {
                None
            } else {
                Some(raw.config.unwrap_or_default())
            },
            disabled: raw.disabled,
            no_provider: raw.no_provider,
            env: raw.env,
            trusted_roots: raw.trusted_roots,
            cwd: raw.cwd,
            fs: raw.fs,
            steps,
        })
    }

    fn serde_error(file: &Path, source: &str, e: &serde_saphyr::Error) -> ParseError {
        let position = e.location().map(|l| (l.line(), l.column()));
        let mut message = first_line(&e.without_snippet().to_string());
        // The position is printed in front already.
        if position.is_some()
            && let Some(i) = message.rfind(" at line ")
        {
            message.truncate(i);
        }
        let key = key_of(&message, source, position);
        let step = position.and_then(|(line, _)| {
            let loose: LooseDoc =
                serde_saphyr::from_str_with_options(source, yaml_options()).ok()?;
            let idx = loose
                .steps
                .iter()
                .rposition(|s| s.referenced.line() <= line && s.referenced.line() > 0)?;
            Some(StepRef {
                index: idx + 1,
                action: action_of(&loose.steps[idx].value),
            })
        });
        ParseError {
            file: file.to_owned(),
            step,
            key,
            position,
            message,
        }
    }

    /// Memory-only knobs this scenario uses, each with where it is written
    /// (`fs./work/a.md: fault`, `step 3: reads`); empty when it runs anywhere.
    pub fn memory_only_uses(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (path, entry) in &self.fs.0 {
            for k in entry.memory_knobs() {
                out.push(format!("fs.{path}: {k}"));
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            let n = i + 1;
            match &step.action {
                Action::Write(w) => {
                    for (path, entry) in &w.0 {
                        for k in entry.memory_knobs() {
                            out.push(format!("step {n} (write) {path}: {k}"));
                        }
                    }
                }
                Action::PreStep(p) if p.cancel_when_blocked.is_some() => {
                    out.push(format!("step {n} (pre_step): cancel_when_blocked"));
                }
                Action::Release(_) => out.push(format!("step {n} (release)")),
                Action::Blocked(_) => out.push(format!("step {n} (blocked)")),
                _ => {}
            }
            if let Some(e) = &step.expect {
                if e.reads.is_some() {
                    out.push(format!("step {n} ({}): expect.reads", step.action.name()));
                }
                if e.probes_max.is_some() {
                    out.push(format!(
                        "step {n} ({}): expect.probes_max",
                        step.action.name()
                    ));
                }
            }
        }
        out
    }
}

/// Strict options (duplicate keys are errors, the default) that still let
/// `.inf`/`.nan` through: R-CFG-2 gives non-finite budgets a meaning.
fn yaml_options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    o
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::{CandidatePolicy, NumberInput, Preset};
    use rstest::rstest;

    #[expect(
        clippy::result_large_err,
        reason = "test helper mirroring Scenario::parse"
    )]
    fn parse(src: &str) -> Result<Scenario, ParseError> {
        Scenario::parse(Path::new("dir/case.yaml"), src)
    }

    #[rstest]
    #[case::top_level("cwd: /r\nbogus: 1\n", None, Some("bogus"), "unknown field")]
    #[case::in_step(
        "cwd: /r\nsteps:\n  - pre_step: {}\n  - tool: {name: read, pth: a}\n",
        Some((2, "tool")),
        Some("pth"),
        "unknown field"
    )]
    #[case::in_expect(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect:\n      inbx: []\n",
        Some((1, "pre_step")),
        Some("inbx"),
        "unknown field"
    )]
    #[case::in_matcher(
        "cwd: /r\nsteps:\n  - event: step_end\n  - pre_step: {}\n    expect:\n      inbox: [{txt: a}]\n",
        Some((2, "pre_step")),
        Some("txt"),
        "unknown field"
    )]
    #[case::bad_enum_block(
        "cwd: /r\nsteps:\n  - pre_step:\n      decision: maybe\n",
        Some((1, "pre_step")),
        Some("decision"),
        "unknown variant `maybe`"
    )]
    #[case::bad_enum_flow(
        "cwd: /r\nsteps:\n  - pre_step: {decision: maybe}\n",
        Some((1, "pre_step")),
        Some("decision"),
        "unknown variant `maybe`"
    )]
    #[case::bad_compact(
        "cwd: /r\nsteps:\n  - compact: everything\n",
        Some((1, "compact")),
        Some("compact"),
        "unknown variant `everything`"
    )]
    #[case::bad_fault_errno(
        "cwd: /r\nfs:\n  /r/A.md: {text: a, fault: {op: read, error: ENOENT}}\n",
        None,
        Some("error"),
        "unknown variant `ENOENT`"
    )]
    #[case::bad_intro(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect:\n      entered: {intro: fancy}\n",
        Some((1, "pre_step")),
        Some("intro"),
        "unknown variant `fancy`"
    )]
    #[case::config_unknown_key(
        "cwd: /r\nconfig: {max_bytes: 1, max_byts: 2}\n",
        None,
        Some("max_byts"),
        "unknown field"
    )]
    #[case::config_bad_policy(
        "cwd: /r\nconfig:\n  max_bytes: 1\n  candidate_policy: last-wins\n",
        None,
        Some("candidate_policy"),
        "unknown variant `last-wins`"
    )]
    #[case::config_budget_not_a_number(
        "cwd: /r\nconfig:\n  max_bytes: lots\n",
        None,
        Some("max_bytes"),
        "invalid"
    )]
    #[case::remount_config_bad_preset(
        "cwd: /r\nsteps:\n  - pre_step: {}\n  - remount:\n      config: {preset: vim}\n",
        Some((2, "remount")),
        Some("preset"),
        "unknown variant `vim`"
    )]
    fn strict_errors_name_file_step_and_key(
        #[case] src: &str,
        #[case] step: Option<(usize, &str)>,
        #[case] key: Option<&str>,
        #[case] message: &str,
    ) {
        let err = parse(src).unwrap_err();
        assert_eq!(err.file, Path::new("dir/case.yaml"));
        assert_eq!(
            err.step.as_ref().map(|s| (s.index, s.action.as_str())),
            step
        );
        assert_eq!(err.key.as_deref(), key);
        assert!(err.message.contains(message), "{err}");
        assert!(err.position.is_some(), "{err}");
        let rendered = err.to_string();
        assert!(rendered.starts_with("dir/case.yaml:"), "{rendered}");
        if let Some((n, a)) = step {
            assert!(rendered.contains(&format!("step {n} ({a})")), "{rendered}");
        }
    }

    #[rstest]
    #[case::two_actions(
        "cwd: /r\nsteps:\n  - {resume: {}, release: /a}\n",
        "exactly one action"
    )]
    #[case::no_action("cwd: /r\nsteps:\n  - expect: {}\n", "exactly one action")]
    #[case::empty_roots("cwd: /r\ntrusted_roots: []\n", "empty trusted_roots")]
    #[case::remount_empty_roots(
        "cwd: /r\nsteps:\n  - remount: {trusted_roots: []}\n",
        "empty trusted_roots"
    )]
    #[case::relative_cwd("cwd: r\n", "must be absolute")]
    #[case::missing_cwd("steps: []\n", "missing field `cwd`")]
    #[case::relative_fs_key("cwd: /r\nfs:\n  r/A.md: x\n", "must be absolute")]
    #[case::two_contents("cwd: /r\nfs:\n  /r/A.md: {text: a, link: b}\n", "exactly one of")]
    #[case::odd_hex("cwd: /r\nfs:\n  /r/A.md: {bytes_hex: abc}\n", "odd length")]
    #[case::fifo_false("cwd: /r\nfs:\n  /r/p: {fifo: false}\n", "must be true")]
    #[case::bad_digest(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {visible: {A.md: {digest: xyz}}}\n",
        "40 lowercase hex"
    )]
    #[case::visible_remove_map(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {visible: {A.md: {action: remove}}}\n",
        "removed"
    )]
    #[case::disabled_with_config("cwd: /r\ndisabled: true\nconfig: {max_bytes: 1}\n", "disabled")]
    #[case::bad_provider("cwd: /r\nproviders: [ram]\n", "unknown variant `ram`")]
    #[case::not_yaml("cwd: [\n", "")]
    #[case::blocked_with_expect(
        "cwd: /r\nsteps:\n  - blocked: /r/A.md\n    expect: {}\n",
        "takes no `expect`"
    )]
    #[case::digest_of_null(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {entered: {source: {changes: [{digest_of: null}]}}}\n",
        "write `digest: null`"
    )]
    #[case::digest_of_and_null_digest(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {entered: {source: {changes: [{digest_of: a, digest: null}]}}}\n",
        "not both"
    )]
    fn invalid_scenarios_are_errors(#[case] src: &str, #[case] message: &str) {
        let err = parse(src).unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }

    /// A change key left out is not checked, `null` asserts the field is
    /// absent, a value asserts it equals that value.
    #[rstest]
    #[case::unchecked("{action: set}", None, None)]
    #[case::absent("{previous_path: null, digest: null}", Some(None), Some(None))]
    #[case::exact(
        "{previous_path: A.md, digest_of: x}",
        Some(Some("A.md")),
        Some(Some(DigestExpect::Of("x".into())))
    )]
    #[case::literal(
        "{digest: \"0123456789abcdef0123456789abcdef01234567\"}",
        None,
        Some(Some(DigestExpect::Literal("0123456789abcdef0123456789abcdef01234567".into())))
    )]
    fn change_keys_are_unchecked_absent_or_exact(
        #[case] change: &str,
        #[case] previous_path: Option<Option<&str>>,
        #[case] digest: Option<Option<DigestExpect>>,
    ) {
        let src = format!(
            "cwd: /r\nsteps:\n  - pre_step: {{}}\n    expect: {{entered: {{source: {{changes: [{change}]}}}}}}\n"
        );
        let sc = parse(&src).unwrap();
        let entered = sc.steps[0].expect.as_ref().unwrap().entered.clone();
        let changes = entered.flatten().unwrap().source.unwrap().changes.unwrap();
        assert_eq!(
            changes[0].previous_path,
            previous_path.map(|p| p.map(str::to_owned))
        );
        assert_eq!(changes[0].digest, digest);
    }

    #[test]
    fn defaults_follow_the_format() {
        let sc =
            parse("cwd: /w/r\nconfig: {max_bytes: 65536}\nsteps:\n  - pre_step:\n  - resume:\n")
                .unwrap();
        assert_eq!(sc.name, "case");
        assert_eq!(sc.providers, vec![ProviderKind::Memory, ProviderKind::Disk]);
        assert_eq!(
            sc.env,
            Env {
                home: "/home/user".into(),
                dsh_home: None
            }
        );
        assert_eq!(sc.trusted_roots, None);
        assert_eq!(sc.steps[0].action, Action::PreStep(PreStep::default()));
        let Action::PreStep(p) = &sc.steps[0].action else {
            unreachable!()
        };
        assert_eq!(p.claimed, vec!["prompt".to_owned()]);
        assert_eq!(p.decision, Decision::Enter);
        assert_eq!(sc.steps[1].action, Action::Resume);
        assert_eq!(sc.steps[0].line, Some(4));
        assert!(sc.memory_only_uses().is_empty());
    }

    #[test]
    fn every_construct_parses() {
        let src = r#"
name: all-constructs
about: everything at once
tags: [a, b]
providers: [memory]
config:
  max_bytes: .inf
  max_source_bytes: 10
  instruction_file_candidates: [AGENTS.md]
  local_instruction_file_candidates: []
  project_root_markers: [.git, .hg]
  candidate_policy: all-distinct
  dsh_home: ~/.dsh
  touch_tools: {read: [file_path], grep: [path, glob]}
  preset: codex
  imports: true
no_provider: false
env: {HOME: /home/ada, DSH_HOME: /opt/dsh}
trusted_roots: [/w]
cwd: /w/r/pkg
fs:
  /w/r/.git: dir
  /w/r/AGENTS.md: |
    root rule
  /w/r/CLAUDE.md: {link: AGENTS.md}
  /w/r/bom.md: {bytes_hex: "EFBBbf41"}
  /w/r/big.md: {repeat: "ab", bytes: 5}
  /w/r/pipe: {fifo: true}
  /w/r/x.md: {text: dir, fault: {op: stat, error: EACCES}, stale_size: 3, gate: read}
steps:
  - pre_step: {claimed: [hi], extra: [ctx], decision: empty, step: 2, cancel_when_blocked: /w/r/x.md}
    expect:
      outcome: cancelled
      batch: [hi, workspace, ctx]
      entered: null
      inbox:
        - text: "t"
          sections: ["Instructions from: AGENTS.md"]
          contains: [a]
          not_contains: [b]
          intro: replacement_compact
          notice: null
          parts: 2
          max_len: 200
          len: 187
          source:
            baseline: false
            identity: any
            changes:
              - {action: set, path: AGENTS.md, digest_of: "root rule", scope: "project\0.\0base"}
              - {action: remove, path: old/AGENTS.md}
              - {action: replace, path: CLAUDE.md, previous_path: AGENTS.md, digest: "0123456789abcdef0123456789abcdef01234567"}
      history: [hi, workspace]
      visible:
        AGENTS.md: {action: set, digest_of: "root rule"}
        pkg/CLAUDE.md: none
        old/AGENTS.md: removed
      reads: 0
      probes_max: 12
  - tool: {name: read, path: "pkg/a.rs", ok: false, cancelled: true, token: t1, parent: p0}
  - event: turn_end
  - write: {/w/r/AGENTS.md: {text: new, keep_version: true}}
  - remove: [/w/r/CLAUDE.md]
  - release: /w/r/x.md
  - blocked: /w/r/x.md
  - compact: {hide: [0, 2]}
  - compact: all
  - resume: {}
  - remount: {config: {max_bytes: 0}, env: {HOME: /h}, trusted_roots: [/w]}
"#;
        let sc = parse(src).unwrap();
        assert_eq!(sc.name, "all-constructs");
        assert_eq!(sc.providers, vec![ProviderKind::Memory]);
        let cfg = sc.config.as_ref().unwrap();
        // `.inf` reaches the state crate as written (R-CFG-2 disables loading).
        assert!(matches!(cfg.max_bytes, Some(NumberInput::Float(f)) if f.is_infinite()));
        assert_eq!(cfg.max_source_bytes, Some(NumberInput::Int(10)));
        assert_eq!(cfg.candidate_policy, Some(CandidatePolicy::AllDistinct));
        assert_eq!(cfg.preset, Some(Preset::Codex));
        assert_eq!(cfg.dsh_home.as_deref(), Some("~/.dsh"));
        // R-CFG-10: the imports switch is a config key like any other.
        assert_eq!(cfg.imports, Some(true));
        assert_eq!(
            cfg.touch_tools.as_ref().and_then(|t| t.get("grep")),
            Some(&vec!["path".to_owned(), "glob".to_owned()])
        );
        let fs: Vec<_> = sc
            .fs
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), &v.content))
            .collect();
        assert_eq!(fs[0], ("/w/r/.git", &FsContent::Dir));
        assert_eq!(
            fs[1],
            ("/w/r/AGENTS.md", &FsContent::File(b"root rule\n".to_vec()))
        );
        assert_eq!(fs[2].1, &FsContent::Link("AGENTS.md".into()));
        assert_eq!(fs[3].1, &FsContent::File(vec![0xef, 0xbb, 0xbf, 0x41]));
        assert_eq!(fs[4].1, &FsContent::File(b"ababa".to_vec()));
        assert_eq!(fs[5].1, &FsContent::Fifo);
        assert_eq!(fs[6].1, &FsContent::File(b"dir".to_vec()));
        assert_eq!(
            sc.fs.0[6].1.memory_knobs(),
            vec!["fault", "stale_size", "gate"]
        );
        let e = sc.steps[0].expect.as_ref().unwrap();
        assert_eq!(e.entered, Some(None));
        let m = &e.inbox.as_ref().unwrap()[0];
        assert_eq!(m.notice, Some(None));
        let changes = m.source.as_ref().unwrap().changes.as_ref().unwrap();
        assert_eq!(changes[0].scope.as_deref(), Some("project\0.\0base"));
        assert_eq!(
            changes[0].digest.clone().flatten().unwrap().hex(),
            crate::digest::sha1_hex(b"root rule")
        );
        assert_eq!(
            m.source.as_ref().unwrap().identity,
            Some(IdentityExpect::Any)
        );
        let names: Vec<_> = sc.steps.iter().map(|s| s.action.name()).collect();
        assert_eq!(
            names,
            [
                "pre_step", "tool", "event", "write", "remove", "release", "blocked", "compact",
                "compact", "resume", "remount"
            ]
        );
        assert_eq!(sc.steps[6].action, Action::Blocked("/w/r/x.md".into()));
        assert_eq!(
            sc.steps[7].action,
            Action::Compact(Compact::Hide(vec![0, 2]))
        );
        let uses = sc.memory_only_uses();
        for want in [
            "fault",
            "cancel_when_blocked",
            "keep_version",
            "release",
            "(blocked)",
            "expect.reads",
            "expect.probes_max",
        ] {
            assert!(
                uses.iter().any(|u| u.contains(want)),
                "{want} missing from {uses:?}"
            );
        }
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn bytes_hex_round_trips(bytes in prop::collection::vec(any::<u8>(), 0..64), upper in any::<bool>()) {
                let mut hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                if upper {
                    hex = hex.to_uppercase();
                }
                prop_assert_eq!(decode_hex(&hex), Ok(bytes));
            }

            #[test]
            fn repeat_files_have_exactly_the_requested_length(unit in "[a-zé]{1,5}", n in 0u64..5000) {
                let src = format!("cwd: /r\nfs:\n  /r/f: {{repeat: \"{unit}\", bytes: {n}}}\n");
                let sc = Scenario::parse(Path::new("p.yaml"), &src).unwrap();
                let FsContent::File(bytes) = &sc.fs.0[0].1.content else { panic!("not a file") };
                prop_assert_eq!(bytes.len() as u64, n);
                let unit_bytes = unit.as_bytes();
                prop_assert!(bytes.iter().enumerate().all(|(i, b)| *b == unit_bytes[i % unit_bytes.len()]));
            }
        }
    }
}
