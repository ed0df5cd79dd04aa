//! Plugin configuration (SPEC §3, R-CFG-1..10): the validated [`Config`] every
//! crate shares, the loosely typed [`ConfigInput`] read from JSON/YAML/CLI, and
//! the named [`Preset`]s.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use dsh_instructions_render::Budget;
use serde::{Deserialize, Serialize};

/// Default per-file cap of R-CFG-3 (1 MiB).
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 1_048_576;

/// Budget a preset gives when it does not say otherwise (R-CFG-9).
pub const DEFAULT_PRESET_MAX_BYTES: i64 = 65_536;

/// How the candidate lists of one directory turn into loaded files (R-CFG-7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CandidatePolicy {
    /// The first existing file of the base list and the first of the local
    /// list; scope slots are [`crate::SLOT_BASE`] and [`crate::SLOT_LOCAL`].
    #[default]
    FirstWins,
    /// Every existing candidate of both lists, base list first; the slot is
    /// the candidate file name.
    AllDistinct,
}

impl CandidatePolicy {
    /// The configuration spelling: `first-wins` or `all-distinct`.
    ///
    /// ```
    /// use dsh_instructions_state::CandidatePolicy;
    /// assert_eq!(CandidatePolicy::AllDistinct.as_str(), "all-distinct");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FirstWins => "first-wins",
            Self::AllDistinct => "all-distinct",
        }
    }
}

impl fmt::Display for CandidatePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CandidatePolicy {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "first-wins" => Ok(Self::FirstWins),
            "all-distinct" => Ok(Self::AllDistinct),
            other => Err(ConfigError::UnknownPolicy {
                name: other.to_owned(),
            }),
        }
    }
}

/// Where a fallback candidate (`fallback_instruction_file_candidates`) may
/// load (R-HOOK-4, R-HOOK-8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FallbackScope {
    /// Per directory: a directory with no base candidate (and no
    /// `.claude/CLAUDE.md` when [`Config::claude_dir`] is on) loads the
    /// fallback. A superset of Claude Code's own rule; the Claude Code hook
    /// uses it.
    #[default]
    Directory,
    /// Path-wide, as Claude Code natively: the fallback loads (in every
    /// directory without a base candidate) only while no base candidate,
    /// `.claude/CLAUDE.md` or local candidate exists in any directory from
    /// the project root to the cwd. Directories below the cwd follow the
    /// chain's decision.
    Path,
}

impl FallbackScope {
    /// The configuration spelling: `directory` or `path`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Directory => "directory",
            Self::Path => "path",
        }
    }
}

/// How a loaded file's text is changed before it is shown (R-HOOK-4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContentTransform {
    /// The text as read (R-DISC-6), unchanged.
    #[default]
    None,
    /// Claude Code's own transformations ([`crate::claude_transform`]):
    /// leading YAML front matter stripped, HTML comments on their own lines
    /// removed, trimmed.
    Claude,
}

impl ContentTransform {
    /// The configuration spelling: `none` or `claude`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Claude => "claude",
        }
    }

    /// `text` transformed.
    pub fn apply(self, text: &str) -> std::borrow::Cow<'_, str> {
        match self {
            Self::None => std::borrow::Cow::Borrowed(text),
            Self::Claude => std::borrow::Cow::Owned(crate::claude_transform(text)),
        }
    }
}

/// Depth of `@path` imports below a candidate (R-IMP-2).
pub const DEFAULT_MAX_IMPORT_DEPTH: u32 = 5;

/// Claude Code's own import depth (measured: r1..r4 load, r5 does not).
pub const CLAUDE_MAX_IMPORT_DEPTH: u32 = 4;

/// The file Claude Code reads right after a directory's `CLAUDE.md`
/// ([`Config::claude_dir`]); a rule, not a candidate entry (R-CFG-4 keeps
/// ignoring configured names with `/`).
pub const CLAUDE_DIR_FILE: &str = ".claude/CLAUDE.md";

/// Named configurations for neighbouring conventions (R-CFG-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// The defaults of SPEC §3 with a 65,536-byte budget.
    Dsh,
    /// `[AGENTS.override.md, AGENTS.md]`, no overlays, 32,768 bytes.
    Codex,
    /// Claude Code's native selection: `[CLAUDE.md]` then
    /// `.claude/CLAUDE.md`, overlay `[CLAUDE.local.md]`, fallback
    /// `[AGENTS.md]` path-wide, Claude's transformations, the user file
    /// `~/.claude/CLAUDE.md`, imports to depth 4; 65,536 bytes.
    Claude,
    /// `[AGENTS.md, CLAUDE.md]`, no overlays, 65,536 bytes.
    Opencode,
    /// `[GEMINI.md]`, no overlays, 65,536 bytes.
    Gemini,
}

impl Preset {
    /// Every preset, in the order SPEC lists them.
    pub const ALL: [Preset; 5] = [
        Preset::Dsh,
        Preset::Codex,
        Preset::Claude,
        Preset::Opencode,
        Preset::Gemini,
    ];

    /// The name used by `--preset` and the `preset` config key.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dsh => "dsh",
            Self::Codex => "codex",
            Self::Claude => "claude",
            Self::Opencode => "opencode",
            Self::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Preset {
    type Err = ConfigError;

    /// Parses a preset name; ASCII case is ignored so `--preset Codex` works.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| ConfigError::UnknownPreset { name: s.to_owned() })
    }
}

/// The validated configuration shared by every crate (SPEC §3).
///
/// Its fields are private to this crate and read through accessors, so
/// every value another crate holds keeps
/// the invariants [`ConfigInput::resolve`] establishes (validated name
/// lists, a positive per-file cap, no blank home): the runtime mounts it as
/// it is, without checking it again (R-RT-11). There is deliberately no
/// `Default`: R-CFG-2 allows no implicit budget, so a value comes from
/// [`ConfigInput::resolve`], or from [`Config::with_max_bytes`] and
/// [`Config::preset`], which build the SPEC §3 defaults and a preset (valid
/// by construction; `resolve` starts from them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub(crate) max_bytes: Budget,
    pub(crate) max_source_bytes: u64,
    pub(crate) instruction_file_candidates: Vec<String>,
    pub(crate) local_instruction_file_candidates: Vec<String>,
    pub(crate) project_root_markers: Vec<String>,
    pub(crate) candidate_policy: CandidatePolicy,
    pub(crate) dsh_home: Option<String>,
    pub(crate) touch_tools: BTreeMap<String, Vec<String>>,
    pub(crate) shell_tools: BTreeMap<String, Vec<String>>,
    pub(crate) imports: bool,
    pub(crate) fallback_instruction_file_candidates: Vec<String>,
    pub(crate) fallback_scope: FallbackScope,
    pub(crate) claude_dir: bool,
    pub(crate) content_transform: ContentTransform,
    pub(crate) user_instruction_files: Vec<String>,
    pub(crate) max_import_depth: u32,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The default touch-tool map of R-CFG-8.
pub fn default_touch_tools() -> BTreeMap<String, Vec<String>> {
    ["read", "write", "edit"]
        .into_iter()
        .map(|tool| (tool.to_owned(), vec!["file_path".to_owned()]))
        .collect()
}

impl Config {
    /// The SPEC §3 defaults with the given budget (R-CFG-2's signed
    /// reading: `<= 0` disables loading).
    ///
    /// ```
    /// use dsh_instructions_state::{Budget, CandidatePolicy, Config};
    /// let c = Config::with_max_bytes(4096);
    /// assert_eq!(c.max_bytes(), Budget::bytes(4096));
    /// assert_eq!(c.instruction_file_candidates(), ["AGENTS.md", "CLAUDE.md"]);
    /// assert_eq!(c.local_instruction_file_candidates(), ["AGENTS.local.md", "CLAUDE.local.md"]);
    /// assert_eq!(c.project_root_markers(), [".git"]);
    /// assert_eq!(c.candidate_policy(), CandidatePolicy::FirstWins);
    /// assert_eq!(c.max_source_bytes(), 1_048_576);
    /// assert_eq!(Config::with_max_bytes(-5).max_bytes(), Budget::DISABLED);
    /// ```
    pub fn with_max_bytes(max_bytes: i64) -> Self {
        Self {
            max_bytes: Budget::from_signed(max_bytes),
            max_source_bytes: DEFAULT_MAX_SOURCE_BYTES,
            instruction_file_candidates: strings(&["AGENTS.md", "CLAUDE.md"]),
            local_instruction_file_candidates: strings(&["AGENTS.local.md", "CLAUDE.local.md"]),
            project_root_markers: strings(&[".git"]),
            candidate_policy: CandidatePolicy::FirstWins,
            dsh_home: None,
            touch_tools: default_touch_tools(),
            shell_tools: BTreeMap::new(),
            imports: false,
            fallback_instruction_file_candidates: Vec::new(),
            fallback_scope: FallbackScope::Directory,
            claude_dir: false,
            content_transform: ContentTransform::None,
            user_instruction_files: Vec::new(),
            max_import_depth: DEFAULT_MAX_IMPORT_DEPTH,
        }
    }

    /// The configuration of a named preset (R-CFG-9); fields a preset does not
    /// name keep their defaults. `claude` and `gemini` also turn on imports
    /// (R-CFG-10): the agents they imitate expand `@path` natively.
    ///
    /// ```
    /// use dsh_instructions_state::{Budget, Config, Preset};
    /// let codex = Config::preset(Preset::Codex);
    /// assert_eq!(codex.instruction_file_candidates(), ["AGENTS.override.md", "AGENTS.md"]);
    /// assert!(codex.local_instruction_file_candidates().is_empty());
    /// assert_eq!(codex.max_bytes(), Budget::bytes(32_768));
    /// assert!(!codex.imports());
    /// assert!(Config::preset(Preset::Claude).imports());
    /// ```
    pub fn preset(p: Preset) -> Self {
        let mut c = Self::with_max_bytes(DEFAULT_PRESET_MAX_BYTES);
        let (base, local, max_bytes): (&[&str], &[&str], i64) = match p {
            Preset::Dsh => return c,
            Preset::Codex => (&["AGENTS.override.md", "AGENTS.md"], &[], 32_768),
            Preset::Claude => (&["CLAUDE.md"], &["CLAUDE.local.md"], 65_536),
            Preset::Opencode => (&["AGENTS.md", "CLAUDE.md"], &[], 65_536),
            Preset::Gemini => (&["GEMINI.md"], &[], 65_536),
        };
        c.instruction_file_candidates = strings(base);
        c.local_instruction_file_candidates = strings(local);
        c.candidate_policy = CandidatePolicy::FirstWins;
        c.max_bytes = Budget::from_signed(max_bytes);
        c.imports = matches!(p, Preset::Claude | Preset::Gemini);
        if p == Preset::Claude {
            c.claude_dir = true;
            c.fallback_instruction_file_candidates = strings(&["AGENTS.md"]);
            c.fallback_scope = FallbackScope::Path;
            c.content_transform = ContentTransform::Claude;
            c.user_instruction_files = strings(&["~/.claude/CLAUDE.md"]);
            c.max_import_depth = CLAUDE_MAX_IMPORT_DEPTH;
        }
        c
    }

    /// Whether executions of `tool` carry shell commands (R-CFG-11): it is
    /// a key of [`Config::shell_tools`], whatever [`Config::touch_tools`]
    /// says about it.
    ///
    /// ```
    /// use dsh_instructions_state::{Config, ConfigInput};
    /// assert!(!Config::with_max_bytes(1).is_shell_tool("Bash")); // off by default (R-DISC-9)
    /// let c: ConfigInput = serde_json::from_str(r#"{"max_bytes": 1, "shell_tools": {"Bash": ["command"]}}"#)?;
    /// assert!(c.resolve()?.config.is_shell_tool("Bash"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_shell_tool(&self, tool: &str) -> bool {
        self.shell_tools.contains_key(tool)
    }

    /// Byte budget of one baseline or one dynamic batch; disabled when the
    /// configured `max_bytes` is `<= 0` or non-finite (R-CFG-2).
    pub fn max_bytes(&self) -> Budget {
        self.max_bytes
    }

    /// Per-file cap, always positive (R-CFG-3).
    pub fn max_source_bytes(&self) -> u64 {
        self.max_source_bytes
    }

    /// Base candidate names, validated (R-CFG-4).
    pub fn instruction_file_candidates(&self) -> &[String] {
        &self.instruction_file_candidates
    }

    /// Overlay candidate names, validated; empty disables overlays (R-CFG-4).
    pub fn local_instruction_file_candidates(&self) -> &[String] {
        &self.local_instruction_file_candidates
    }

    /// Project root markers, validated (R-CFG-5).
    pub fn project_root_markers(&self) -> &[String] {
        &self.project_root_markers
    }

    /// Candidate policy (R-CFG-7).
    pub fn candidate_policy(&self) -> CandidatePolicy {
        self.candidate_policy
    }

    /// Explicit DSH home as configured, unexpanded (`~` allowed; R-CFG-6);
    /// never blank.
    pub fn dsh_home(&self) -> Option<&str> {
        self.dsh_home.as_deref()
    }

    /// Tool name → argument names that hold a touched path (R-CFG-8); an
    /// argument name ending in `/` holds a directory, which is touched
    /// itself (as a listing is).
    pub fn touch_tools(&self) -> &BTreeMap<String, Vec<String>> {
        &self.touch_tools
    }

    /// Tool name → argument names that hold a shell command whose paths are
    /// touches (R-CFG-11, R-DISC-10); empty (the default) = shell touches
    /// off. A tool listed here and in [`Config::touch_tools`] is a shell
    /// tool ([`Config::is_shell_tool`]).
    pub fn shell_tools(&self) -> &BTreeMap<String, Vec<String>> {
        &self.shell_tools
    }

    /// Expand `@path` imports inside instruction files (R-CFG-10, SPEC §13);
    /// off by default, on in the `claude` and `gemini` presets.
    pub fn imports(&self) -> bool {
        self.imports
    }

    /// Names that load only where no base candidate exists (validated like
    /// the candidate lists); empty by default (R-HOOK-4).
    pub fn fallback_instruction_file_candidates(&self) -> &[String] {
        &self.fallback_instruction_file_candidates
    }

    /// Where the fallback applies: per directory (default) or path-wide.
    pub fn fallback_scope(&self) -> FallbackScope {
        self.fallback_scope
    }

    /// Read [`CLAUDE_DIR_FILE`] right after a directory's `CLAUDE.md` (its
    /// own slot, [`crate::SLOT_CLAUDE_DIR`]); off by default.
    pub fn claude_dir(&self) -> bool {
        self.claude_dir
    }

    /// Transformation applied to every loaded file's text (and import).
    pub fn content_transform(&self) -> ContentTransform {
        self.content_transform
    }

    /// Agent user-level files (`~/…` paths to a file, validated; expanded
    /// against the OS home at mount), rendered right after the user-global
    /// file and before the project files, in this order; empty by default.
    pub fn user_instruction_files(&self) -> &[String] {
        &self.user_instruction_files
    }

    /// Import depth below a candidate (R-IMP-2); 5 by default, 4 for Claude.
    pub fn max_import_depth(&self) -> u32 {
        self.max_import_depth
    }
}

/// A number as written in a configuration file: JSON and YAML give integers
/// or floats (YAML also `.inf`/`.nan`). [`ConfigInput::resolve`] decides what
/// each field accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumberInput {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// A floating-point number, possibly non-finite.
    Float(f64),
}

impl From<i64> for NumberInput {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl fmt::Display for NumberInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::UInt(v) => write!(f, "{v}"),
            Self::Float(v) => write!(f, "{v}"),
        }
    }
}

impl Serialize for NumberInput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Int(v) => s.serialize_i64(v),
            Self::UInt(v) => s.serialize_u64(v),
            Self::Float(v) => s.serialize_f64(v),
        }
    }
}

/// Accepts whichever number kind the format parsed.
struct NumberVisitor;

impl serde::de::Visitor<'_> for NumberVisitor {
    type Value = NumberInput;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<NumberInput, E> {
        Ok(NumberInput::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<NumberInput, E> {
        Ok(i64::try_from(v).map_or(NumberInput::UInt(v), NumberInput::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<NumberInput, E> {
        Ok(NumberInput::Float(v))
    }
}

impl<'de> Deserialize<'de> for NumberInput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // `deserialize_any` lets self-describing formats (JSON, YAML) hand us
        // whichever number kind they parsed.
        d.deserialize_any(NumberVisitor)
    }
}

/// `max_bytes` asks for an `f64` instead: serde-saphyr rejects `.inf`/`.nan`
/// for an untyped (`deserialize_any`) target by default but passes them to a
/// float target, and R-CFG-2 gives them a meaning (disabled). JSON still
/// reports integers as integers; YAML integers arrive as floats, exact up to
/// 2^53 bytes, far beyond any budget.
struct BudgetHint(NumberInput);

impl<'de> Deserialize<'de> for BudgetHint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_f64(NumberVisitor).map(BudgetHint)
    }
}

fn deserialize_budget<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<NumberInput>, D::Error> {
    Ok(Option::<BudgetHint>::deserialize(d)?.map(|h| h.0))
}

/// A finite float with no fractional part, as an integer, if it fits.
fn whole(v: f64) -> Option<i128> {
    // `as` saturates; the range check keeps only values that survive exactly.
    (v.is_finite() && v.fract() == 0.0 && v.abs() < 1.8e19).then_some(v as i128)
}

impl NumberInput {
    fn as_integer(self) -> Option<i128> {
        match self {
            Self::Int(v) => Some(i128::from(v)),
            Self::UInt(v) => Some(i128::from(v)),
            Self::Float(v) => whole(v),
        }
    }
}

/// Configuration as read from a file or assembled by a CLI: every field
/// optional, keys in snake_case, unknown keys rejected.
///
/// ```
/// use dsh_instructions_state::ConfigInput;
/// let input: ConfigInput =
///     serde_json::from_str(r#"{"preset": "claude", "max_bytes": 1000}"#).unwrap();
/// let resolved = input.resolve().unwrap();
/// assert_eq!(resolved.config.instruction_file_candidates(), ["CLAUDE.md"]);
/// assert_eq!(resolved.config.max_bytes(), dsh_instructions_state::Budget::bytes(1000)); // explicit wins over the preset
/// assert!(resolved.warnings.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigInput {
    /// See [`Config::max_bytes`]; required unless `preset` is given.
    #[serde(
        default,
        deserialize_with = "deserialize_budget",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_bytes: Option<NumberInput>,
    /// See [`Config::max_source_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_source_bytes: Option<NumberInput>,
    /// See [`Config::instruction_file_candidates`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_file_candidates: Option<Vec<String>>,
    /// See [`Config::local_instruction_file_candidates`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_instruction_file_candidates: Option<Vec<String>>,
    /// See [`Config::project_root_markers`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_root_markers: Option<Vec<String>>,
    /// See [`Config::candidate_policy`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_policy: Option<CandidatePolicy>,
    /// See [`Config::dsh_home`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsh_home: Option<String>,
    /// See [`Config::touch_tools`]; a given map replaces the default whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touch_tools: Option<BTreeMap<String, Vec<String>>>,
    /// See [`Config::shell_tools`]; a given map replaces the default (empty)
    /// one whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_tools: Option<BTreeMap<String, Vec<String>>>,
    /// Start from this preset; explicit fields win over it (R-CFG-9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<Preset>,
    /// See [`Config::imports`] (R-CFG-10); wins over the preset's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<bool>,
    /// See [`Config::fallback_instruction_file_candidates`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_instruction_file_candidates: Option<Vec<String>>,
    /// See [`Config::fallback_scope`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_scope: Option<FallbackScope>,
    /// See [`Config::claude_dir`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_dir: Option<bool>,
    /// See [`Config::content_transform`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_transform: Option<ContentTransform>,
    /// See [`Config::user_instruction_files`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_instruction_files: Option<Vec<String>>,
    /// See [`Config::max_import_depth`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_import_depth: Option<u32>,
}

/// A validated configuration plus the entries validation ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedConfig {
    /// The configuration to mount.
    pub config: Config,
    /// Ignored list entries (R-CFG-4/5), for the CLI or a log to print.
    pub warnings: Vec<ConfigWarning>,
}

/// A configuration the plugin refuses; every message names its field (R-CLI-5).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// Neither `max_bytes` nor a preset was given (R-CFG-1).
    #[error("max_bytes is required: give a byte budget (<= 0 disables loading) or choose a preset")]
    MissingMaxBytes,
    /// A numeric field holds a value of the wrong kind.
    #[error("{field} must be {expected}, got {got}")]
    InvalidNumber {
        /// The configuration key.
        field: &'static str,
        /// What the field accepts.
        expected: &'static str,
        /// The value as written.
        got: String,
    },
    /// `preset` names no known preset.
    #[error("preset must be one of dsh, codex, claude, opencode, gemini, got {name:?}")]
    UnknownPreset {
        /// The name as written.
        name: String,
    },
    /// `candidate_policy` names no known policy.
    #[error("candidate_policy must be first-wins or all-distinct, got {name:?}")]
    UnknownPolicy {
        /// The name as written.
        name: String,
    },
}

impl ConfigError {
    /// The configuration key the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            Self::MissingMaxBytes => "max_bytes",
            Self::InvalidNumber { field, .. } => field,
            Self::UnknownPreset { .. } => "preset",
            Self::UnknownPolicy { .. } => "candidate_policy",
        }
    }
}

/// A configured value that validation ignored: a list entry (R-CFG-4/5) or a
/// blank `dsh_home`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The configuration key (a name list, or `dsh_home`).
    pub field: &'static str,
    /// The entry as written.
    pub entry: String,
    /// Why it was ignored.
    pub reason: &'static str,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: ignored entry \"{}\": {}",
            self.field,
            self.entry.escape_debug(),
            self.reason
        )
    }
}

/// Reason texts of [`ConfigWarning::reason`].
pub mod reasons {
    /// An empty string.
    pub const EMPTY: &str = "empty name";
    /// `.` or `..`.
    pub const DOT: &str = "not a file name";
    /// Contains `/` or `\`.
    pub const SEPARATOR: &str = "contains a path separator";
    /// Contains NUL.
    pub const NUL: &str = "contains NUL";
    /// Repeats an earlier entry.
    pub const DUPLICATE: &str = "duplicate of an earlier entry";
    /// A blank `dsh_home`.
    pub const BLANK_HOME: &str = "blank, treated as unset";
    /// A user instruction file that is not a `~/…` path to a file.
    pub const NOT_HOME_PATH: &str = "not a ~/ path to a file";
}

/// Why a single file name is unusable, if it is.
fn name_problem(entry: &str) -> Option<&'static str> {
    if entry.is_empty() {
        Some(reasons::EMPTY)
    } else if entry == "." || entry == ".." {
        Some(reasons::DOT)
    } else if entry.contains('\0') {
        Some(reasons::NUL)
    } else if entry.contains(['/', '\\']) {
        Some(reasons::SEPARATOR)
    } else {
        None
    }
}

/// Validates a candidate or marker list (R-CFG-4/5): drops entries that are
/// not a single file name and repeats (the first position is kept), and
/// reports each dropped entry.
///
/// ```
/// use dsh_instructions_state::validate_names;
/// let input = ["AGENTS.md", "", "a/b", "AGENTS.md", "CLAUDE.md"].map(String::from);
/// let (kept, warnings) = validate_names("instruction_file_candidates", &input);
/// assert_eq!(kept, ["AGENTS.md", "CLAUDE.md"]);
/// assert_eq!(warnings.len(), 3);
/// ```
pub fn validate_names(
    field: &'static str,
    entries: &[String],
) -> (Vec<String>, Vec<ConfigWarning>) {
    let mut kept = Vec::new();
    let mut seen = BTreeSet::new();
    let mut warnings = Vec::new();
    for entry in entries {
        let problem = name_problem(entry)
            .or_else(|| (!seen.insert(entry.as_str())).then_some(reasons::DUPLICATE));
        match problem {
            Some(reason) => warnings.push(ConfigWarning {
                field,
                entry: entry.clone(),
                reason,
            }),
            None => kept.push(entry.clone()),
        }
    }
    (kept, warnings)
}

/// Validates `user_instruction_files`: each entry must be `~/` followed by
/// a relative path to a file (no empty, `.` or `..` component, no `\` or
/// NUL); repeats keep the first position. Dropped entries are reported.
///
/// ```
/// use dsh_instructions_state::validate_user_files;
/// let input = ["~/.claude/CLAUDE.md", "/etc/x", "~/", "~/a/../b", "~/.claude/CLAUDE.md"].map(String::from);
/// let (kept, warnings) = validate_user_files(&input);
/// assert_eq!(kept, ["~/.claude/CLAUDE.md"]);
/// assert_eq!(warnings.len(), 4);
/// ```
pub fn validate_user_files(entries: &[String]) -> (Vec<String>, Vec<ConfigWarning>) {
    const FIELD: &str = "user_instruction_files";
    let mut kept: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    for entry in entries {
        let problem = match entry.strip_prefix("~/") {
            Some(rest)
                if !rest.is_empty()
                    && !rest.contains(['\\', '\0'])
                    && rest
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != "..") =>
            {
                kept.contains(entry).then_some(reasons::DUPLICATE)
            }
            _ => Some(reasons::NOT_HOME_PATH),
        };
        match problem {
            Some(reason) => warnings.push(ConfigWarning {
                field: FIELD,
                entry: entry.clone(),
                reason,
            }),
            None => kept.push(entry.clone()),
        }
    }
    (kept, warnings)
}

fn invalid(field: &'static str, expected: &'static str, got: NumberInput) -> ConfigError {
    ConfigError::InvalidNumber {
        field,
        expected,
        got: got.to_string(),
    }
}

/// R-CFG-2: an integer; `<= 0` and non-finite disable; a fractional
/// number is an error.
fn resolve_max_bytes(n: NumberInput) -> Result<Budget, ConfigError> {
    const EXPECTED: &str = "an integer number of bytes";
    if let NumberInput::Float(v) = n
        && !v.is_finite()
    {
        return Ok(Budget::DISABLED);
    }
    let v = n
        .as_integer()
        .ok_or_else(|| invalid("max_bytes", EXPECTED, n))?;
    // A budget above i64::MAX can never be exhausted; saturating keeps the
    // meaning ("effectively unlimited but explicit") without an error.
    Ok(Budget::from_signed(i64::try_from(v).unwrap_or(if v > 0 {
        i64::MAX
    } else {
        i64::MIN
    })))
}

/// R-CFG-3: a positive integer, anything else is an error.
fn resolve_max_source_bytes(n: NumberInput) -> Result<u64, ConfigError> {
    n.as_integer()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .ok_or_else(|| invalid("max_source_bytes", "a positive integer", n))
}

impl ConfigInput {
    /// `self` with every field `over` sets laid over it, the one overlay of
    /// configuration layers (CLI flags over `settings.yaml` over a session's
    /// stored input; a hook's `config.json` over its preset): a field `over`
    /// gives replaces this one whole (a list or tool map is not merged), a
    /// field it leaves out keeps this one.
    ///
    /// `preset` is a field like the others: a `preset` in `over` replaces
    /// this layer's preset and resets none of its fields. Explicit fields of
    /// every layer win over any preset (R-CFG-9, decision 0026), so a lower
    /// layer's `max_bytes` survives a higher layer's `preset`.
    ///
    /// ```
    /// use dsh_instructions_state::{Budget, ConfigInput, NumberInput, Preset};
    /// let file = ConfigInput { max_bytes: Some(NumberInput::Int(500)), ..Default::default() };
    /// let flags = ConfigInput { preset: Some(Preset::Codex), ..Default::default() };
    /// let merged = file.overlay(flags);
    /// assert_eq!(merged.preset, Some(Preset::Codex));
    /// let config = merged.resolve()?.config;
    /// assert_eq!(config.max_bytes(), Budget::bytes(500));
    /// assert_eq!(config.instruction_file_candidates(), ["AGENTS.override.md", "AGENTS.md"]);
    /// # Ok::<(), dsh_instructions_state::ConfigError>(())
    /// ```
    #[must_use]
    pub fn overlay(mut self, over: ConfigInput) -> ConfigInput {
        // Destructured whole, so a new field cannot be forgotten here.
        macro_rules! set_each {
            ($($f:ident),*) => {{
                let ConfigInput { $($f),* } = over;
                $( if $f.is_some() { self.$f = $f; } )*
            }};
        }
        set_each!(
            max_bytes,
            max_source_bytes,
            instruction_file_candidates,
            local_instruction_file_candidates,
            project_root_markers,
            candidate_policy,
            dsh_home,
            touch_tools,
            shell_tools,
            preset,
            imports,
            fallback_instruction_file_candidates,
            fallback_scope,
            claude_dir,
            content_transform,
            user_instruction_files,
            max_import_depth
        );
        self
    }

    /// Validates the input into a [`Config`]: starts from the preset (or the
    /// defaults), lets explicit fields win (R-CFG-9), validates the name lists
    /// (R-CFG-4/5) and the numbers (R-CFG-2/3).
    ///
    /// ```
    /// use dsh_instructions_state::{ConfigError, ConfigInput, NumberInput};
    /// let missing = ConfigInput::default().resolve();
    /// assert_eq!(missing, Err(ConfigError::MissingMaxBytes));
    ///
    /// let bad = ConfigInput {
    ///     max_bytes: Some(NumberInput::Int(100)),
    ///     max_source_bytes: Some(NumberInput::Float(1.5)),
    ///     ..ConfigInput::default()
    /// };
    /// let err = bad.resolve().unwrap_err();
    /// assert_eq!(err.to_string(), "max_source_bytes must be a positive integer, got 1.5");
    /// ```
    pub fn resolve(&self) -> Result<ResolvedConfig, ConfigError> {
        let max_bytes = self.max_bytes.map(resolve_max_bytes).transpose()?;
        let mut config = match (self.preset, max_bytes) {
            (Some(p), _) => Config::preset(p),
            (None, Some(_)) => Config::with_max_bytes(0),
            (None, None) => return Err(ConfigError::MissingMaxBytes),
        };
        if let Some(b) = max_bytes {
            config.max_bytes = b;
        }
        if let Some(n) = self.max_source_bytes {
            config.max_source_bytes = resolve_max_source_bytes(n)?;
        }
        let mut warnings = Vec::new();
        let mut list =
            |field: &'static str, given: &Option<Vec<String>>, target: &mut Vec<String>| {
                if let Some(entries) = given {
                    let (kept, w) = validate_names(field, entries);
                    *target = kept;
                    warnings.extend(w);
                }
            };
        list(
            "instruction_file_candidates",
            &self.instruction_file_candidates,
            &mut config.instruction_file_candidates,
        );
        list(
            "local_instruction_file_candidates",
            &self.local_instruction_file_candidates,
            &mut config.local_instruction_file_candidates,
        );
        list(
            "project_root_markers",
            &self.project_root_markers,
            &mut config.project_root_markers,
        );
        if let Some(policy) = self.candidate_policy {
            config.candidate_policy = policy;
        }
        if let Some(home) = &self.dsh_home {
            // A blank home would resolve to the cwd; treat it like a blank
            // `$DSH_HOME` (R-HOME-1: unset) and say so.
            if home.trim().is_empty() {
                warnings.push(ConfigWarning {
                    field: "dsh_home",
                    entry: home.clone(),
                    reason: reasons::BLANK_HOME,
                });
            } else {
                config.dsh_home = Some(home.clone());
            }
        }
        if let Some(tools) = &self.touch_tools {
            config.touch_tools = tools.clone();
        }
        if let Some(tools) = &self.shell_tools {
            config.shell_tools = tools.clone();
        }
        if let Some(imports) = self.imports {
            config.imports = imports;
        }
        if let Some(names) = &self.fallback_instruction_file_candidates {
            let (kept, w) = validate_names("fallback_instruction_file_candidates", names);
            config.fallback_instruction_file_candidates = kept;
            warnings.extend(w);
        }
        if let Some(scope) = self.fallback_scope {
            config.fallback_scope = scope;
        }
        if let Some(on) = self.claude_dir {
            config.claude_dir = on;
        }
        if let Some(t) = self.content_transform {
            config.content_transform = t;
        }
        if let Some(files) = &self.user_instruction_files {
            let (kept, w) = validate_user_files(files);
            config.user_instruction_files = kept;
            warnings.extend(w);
        }
        if let Some(depth) = self.max_import_depth {
            config.max_import_depth = depth;
        }
        Ok(ResolvedConfig { config, warnings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> ConfigInput {
        serde_json::from_value(v).unwrap()
    }

    fn v(items: &[&str]) -> Vec<String> {
        strings(items)
    }

    #[test]
    fn defaults_match_spec() {
        // R-CFG-3..8
        let c = parse(json!({"max_bytes": 65536})).resolve().unwrap().config;
        assert_eq!(c, Config::with_max_bytes(65_536));
        assert_eq!(c.max_source_bytes(), 1_048_576);
        assert_eq!(
            c.instruction_file_candidates(),
            v(&["AGENTS.md", "CLAUDE.md"])
        );
        assert_eq!(
            c.local_instruction_file_candidates(),
            v(&["AGENTS.local.md", "CLAUDE.local.md"])
        );
        assert_eq!(c.project_root_markers(), v(&[".git"]));
        assert_eq!(c.candidate_policy(), CandidatePolicy::FirstWins);
        assert_eq!(c.dsh_home(), None);
        let tools: Vec<(&str, Vec<&str>)> = c
            .touch_tools
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            tools,
            [
                ("edit", vec!["file_path"]),
                ("read", vec!["file_path"]),
                ("write", vec!["file_path"])
            ]
        );
    }

    // R-CFG-9, values copied from SPEC by hand.
    #[rstest]
    #[case::dsh(Preset::Dsh, &["AGENTS.md", "CLAUDE.md"], &["AGENTS.local.md", "CLAUDE.local.md"], 65_536)]
    #[case::codex(Preset::Codex, &["AGENTS.override.md", "AGENTS.md"], &[], 32_768)]
    #[case::claude(Preset::Claude, &["CLAUDE.md"], &["CLAUDE.local.md"], 65_536)]
    #[case::opencode(Preset::Opencode, &["AGENTS.md", "CLAUDE.md"], &[], 65_536)]
    #[case::gemini(Preset::Gemini, &["GEMINI.md"], &[], 65_536)]
    fn presets(#[case] p: Preset, #[case] base: &[&str], #[case] local: &[&str], #[case] max: i64) {
        let c = Config::preset(p);
        // R-CFG-10: imports on exactly for the agents that expand them.
        assert_eq!(c.imports(), matches!(p, Preset::Claude | Preset::Gemini));
        assert_eq!(c.instruction_file_candidates(), v(base));
        assert_eq!(c.local_instruction_file_candidates(), v(local));
        assert_eq!(c.candidate_policy(), CandidatePolicy::FirstWins);
        assert_eq!(c.max_bytes(), Budget::from_signed(max));
        assert_eq!(c.project_root_markers(), v(&[".git"]));
        assert_eq!(c.max_source_bytes(), DEFAULT_MAX_SOURCE_BYTES);
        // R-HOOK-8: `claude` is Claude Code's native selection; every other
        // preset keeps the new fields at their defaults.
        let claude = p == Preset::Claude;
        assert_eq!(c.claude_dir(), claude);
        assert_eq!(
            c.fallback_instruction_file_candidates(),
            if claude { v(&["AGENTS.md"]) } else { v(&[]) }
        );
        assert_eq!(
            c.fallback_scope(),
            if claude {
                FallbackScope::Path
            } else {
                FallbackScope::Directory
            }
        );
        assert_eq!(
            c.content_transform(),
            if claude {
                ContentTransform::Claude
            } else {
                ContentTransform::None
            }
        );
        assert_eq!(
            c.user_instruction_files(),
            if claude {
                v(&["~/.claude/CLAUDE.md"])
            } else {
                v(&[])
            }
        );
        assert_eq!(c.max_import_depth(), if claude { 4 } else { 5 });
        // The preset alone satisfies the max_bytes requirement (R-CFG-1).
        let name = p.to_string();
        let resolved = parse(json!({"preset": name})).resolve().unwrap();
        assert_eq!(resolved.config, c);
        assert_eq!(name.parse::<Preset>(), Ok(p));
        assert_eq!(name.to_uppercase().parse::<Preset>(), Ok(p));
    }

    /// The one overlay (decision 0026): a field the upper layer gives
    /// replaces the lower one whole; a field it leaves out stays; a preset
    /// is one field among the others and resets nothing.
    #[rstest]
    #[case::upper_field_wins(json!({"max_bytes": 100}), json!({"max_bytes": 500}), json!({"max_bytes": 500}))]
    #[case::absent_field_stays(
        json!({"max_bytes": 100, "instruction_file_candidates": ["A.md"]}),
        json!({"imports": true}),
        json!({"max_bytes": 100, "instruction_file_candidates": ["A.md"], "imports": true})
    )]
    #[case::preset_resets_nothing(
        json!({"max_bytes": 500, "instruction_file_candidates": ["A.md"]}),
        json!({"preset": "codex"}),
        json!({"max_bytes": 500, "instruction_file_candidates": ["A.md"], "preset": "codex"})
    )]
    #[case::preset_replaces_preset(json!({"preset": "claude"}), json!({"preset": "codex"}), json!({"preset": "codex"}))]
    #[case::maps_replace_whole(
        json!({"touch_tools": {"read": ["file_path"]}, "shell_tools": {"Bash": ["command"]}}),
        json!({"touch_tools": {"open": ["target"]}}),
        json!({"touch_tools": {"open": ["target"]}, "shell_tools": {"Bash": ["command"]}})
    )]
    #[case::empty_list_replaces(
        json!({"local_instruction_file_candidates": ["X.local.md"]}),
        json!({"local_instruction_file_candidates": []}),
        json!({"local_instruction_file_candidates": []})
    )]
    #[case::empty_upper_is_identity(
        json!({"preset": "gemini", "max_import_depth": 2, "claude_dir": true}),
        json!({}),
        json!({"preset": "gemini", "max_import_depth": 2, "claude_dir": true})
    )]
    fn overlay_cases(
        #[case] lower: serde_json::Value,
        #[case] upper: serde_json::Value,
        #[case] want: serde_json::Value,
    ) {
        assert_eq!(parse(lower).overlay(parse(upper)), parse(want));
    }

    /// Every field of the upper layer reaches the result: overlaying a
    /// fully set input on the empty one gives it back, and on any other
    /// input too.
    #[test]
    fn overlay_carries_every_field() {
        let full = parse(json!({
            "max_bytes": 7, "max_source_bytes": 9, "instruction_file_candidates": ["A.md"],
            "local_instruction_file_candidates": ["A.local.md"], "project_root_markers": [".hg"],
            "candidate_policy": "all-distinct", "dsh_home": "~/d", "touch_tools": {"t": ["p"]},
            "shell_tools": {"s": ["c"]}, "preset": "opencode", "imports": true,
            "fallback_instruction_file_candidates": ["F.md"], "fallback_scope": "path",
            "claude_dir": true, "content_transform": "claude",
            "user_instruction_files": ["~/u.md"], "max_import_depth": 3,
        }));
        assert_eq!(ConfigInput::default().overlay(full.clone()), full);
        let other = parse(json!({"preset": "claude", "max_bytes": 1, "imports": false}));
        assert_eq!(other.overlay(full.clone()), full);
    }

    #[test]
    fn explicit_fields_win_over_preset() {
        // R-CFG-9
        let c = parse(json!({
            "preset": "codex",
            "max_bytes": 100,
            "local_instruction_file_candidates": ["X.local.md"],
            "candidate_policy": "all-distinct",
        }))
        .resolve()
        .unwrap()
        .config;
        assert_eq!(c.max_bytes(), Budget::bytes(100));
        assert_eq!(c.local_instruction_file_candidates(), v(&["X.local.md"]));
        assert_eq!(c.candidate_policy(), CandidatePolicy::AllDistinct);
        // Not given: the preset's value stays.
        assert_eq!(
            c.instruction_file_candidates(),
            v(&["AGENTS.override.md", "AGENTS.md"])
        );
    }

    // R-CFG-10: default off; an explicit key wins over the preset either way.
    #[rstest]
    #[case::default_off(json!({"max_bytes": 1}), false)]
    #[case::explicit_on(json!({"max_bytes": 1, "imports": true}), true)]
    #[case::claude_on(json!({"preset": "claude"}), true)]
    #[case::gemini_on(json!({"preset": "gemini"}), true)]
    #[case::opencode_off(json!({"preset": "opencode"}), false)]
    #[case::claude_switched_off(json!({"preset": "claude", "imports": false}), false)]
    #[case::codex_switched_on(json!({"preset": "codex", "imports": true}), true)]
    fn imports_key(#[case] input: serde_json::Value, #[case] on: bool) {
        assert_eq!(parse(input).resolve().unwrap().config.imports(), on);
    }

    #[test]
    fn claude_fields_resolve_and_win_over_the_preset() {
        let c = parse(json!({
            "preset": "claude",
            "fallback_scope": "directory",
            "fallback_instruction_file_candidates": ["AGENTS.md", "a/b", "GEMINI.md"],
            "claude_dir": false,
            "content_transform": "none",
            "user_instruction_files": ["~/.claude/CLAUDE.md", "/abs", "~/x.md"],
            "max_import_depth": 2,
        }))
        .resolve()
        .unwrap();
        let w: Vec<(&str, &str)> = c
            .warnings
            .iter()
            .map(|w| (w.field, w.entry.as_str()))
            .collect();
        assert_eq!(
            w,
            [
                ("fallback_instruction_file_candidates", "a/b"),
                ("user_instruction_files", "/abs"),
            ]
        );
        let c = c.config;
        assert_eq!(c.fallback_scope(), FallbackScope::Directory);
        assert_eq!(
            c.fallback_instruction_file_candidates(),
            v(&["AGENTS.md", "GEMINI.md"])
        );
        assert!(!c.claude_dir());
        assert_eq!(c.content_transform(), ContentTransform::None);
        assert_eq!(
            c.user_instruction_files(),
            v(&["~/.claude/CLAUDE.md", "~/x.md"])
        );
        assert_eq!(c.max_import_depth(), 2);
        // Defaults without a preset: today's behaviour.
        let d = parse(json!({"max_bytes": 1})).resolve().unwrap().config;
        assert_eq!(d, Config::with_max_bytes(1));
        assert!(d.fallback_instruction_file_candidates().is_empty() && !d.claude_dir());
        assert_eq!(d.max_import_depth(), 5);
    }

    #[rstest]
    #[case::bad_scope(json!({"max_bytes": 1, "fallback_scope": "tree"}))]
    #[case::bad_transform(json!({"max_bytes": 1, "content_transform": "gemini"}))]
    #[case::negative_depth(json!({"max_bytes": 1, "max_import_depth": -1}))]
    #[case::claude_dir_string(json!({"max_bytes": 1, "claude_dir": "yes"}))]
    fn claude_fields_reject_bad_values(#[case] value: serde_json::Value) {
        assert!(serde_json::from_value::<ConfigInput>(value).is_err());
    }

    #[rstest]
    #[case::ok("~/.claude/CLAUDE.md", None)]
    #[case::absolute("/etc/CLAUDE.md", Some(reasons::NOT_HOME_PATH))]
    #[case::relative("CLAUDE.md", Some(reasons::NOT_HOME_PATH))]
    #[case::bare_tilde("~/", Some(reasons::NOT_HOME_PATH))]
    #[case::other_user("~bob/x", Some(reasons::NOT_HOME_PATH))]
    #[case::dotdot("~/a/../x", Some(reasons::NOT_HOME_PATH))]
    #[case::trailing_slash("~/a/", Some(reasons::NOT_HOME_PATH))]
    #[case::backslash("~/a\\b", Some(reasons::NOT_HOME_PATH))]
    fn user_file_entries(#[case] entry: &str, #[case] problem: Option<&str>) {
        let (kept, w) = validate_user_files(&[entry.to_owned()]);
        assert_eq!(w.first().map(|w| w.reason), problem);
        assert_eq!(kept.is_empty(), problem.is_some());
        let r = parse(json!({"max_bytes": 1, "user_instruction_files": [entry, entry]}))
            .resolve()
            .unwrap();
        assert_eq!(
            r.config.user_instruction_files().len(),
            usize::from(problem.is_none())
        );
        assert_eq!(r.warnings.len(), if problem.is_some() { 2 } else { 1 });
    }

    #[test]
    fn imports_must_be_a_boolean() {
        assert!(
            serde_json::from_value::<ConfigInput>(json!({"max_bytes": 1, "imports": "yes"}))
                .is_err()
        );
    }

    #[test]
    fn configured_touch_tools_replace_the_default_map() {
        // R-CFG-8
        let c =
            parse(json!({"max_bytes": 1, "touch_tools": {"grep": ["path"]}, "dsh_home": "~/x"}))
                .resolve()
                .unwrap()
                .config;
        assert_eq!(c.touch_tools().keys().collect::<Vec<_>>(), ["grep"]);
        assert_eq!(c.dsh_home(), Some("~/x"));
    }

    // R-CFG-11 / R-DISC-9: off by default; a configured map replaces the
    // default whole and wins over the touch-tool reading of the same tool.
    #[rstest]
    #[case::default_off(json!({"max_bytes": 1}), &[], false)]
    #[case::hook_style(json!({"max_bytes": 1, "shell_tools": {"Bash": ["command"]}}), &["Bash"], true)]
    #[case::also_a_touch_tool(
        json!({"max_bytes": 1, "touch_tools": {"Bash": ["command"]}, "shell_tools": {"Bash": ["command"]}}),
        &["Bash"],
        true
    )]
    #[case::explicit_empty(json!({"preset": "codex", "shell_tools": {}}), &[], false)]
    fn shell_tools_key(
        #[case] input: serde_json::Value,
        #[case] keys: &[&str],
        #[case] bash_is_shell: bool,
    ) {
        let c = parse(input).resolve().unwrap().config;
        assert_eq!(
            c.shell_tools()
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            keys
        );
        assert_eq!(c.is_shell_tool("Bash"), bash_is_shell);
    }

    #[test]
    fn shell_tools_must_map_to_lists() {
        assert!(
            serde_json::from_value::<ConfigInput>(
                json!({"max_bytes": 1, "shell_tools": {"Bash": "command"}})
            )
            .is_err()
        );
    }

    #[rstest]
    #[case::empty("")]
    #[case::spaces("  \t")]
    fn blank_dsh_home_is_unset_with_warning(#[case] home: &str) {
        let r = parse(json!({"max_bytes": 1, "dsh_home": home}))
            .resolve()
            .unwrap();
        assert_eq!(r.config.dsh_home(), None);
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].field, "dsh_home");
    }

    #[test]
    fn max_bytes_is_required_without_preset() {
        // R-CFG-1
        let err = parse(json!({"max_source_bytes": 10}))
            .resolve()
            .unwrap_err();
        assert_eq!(err, ConfigError::MissingMaxBytes);
        assert_eq!(err.field(), "max_bytes");
        assert!(err.to_string().contains("max_bytes"));
    }

    // R-CFG-2: budget values.
    #[rstest]
    #[case::positive(NumberInput::Int(65_536), Some(65_536))]
    #[case::zero(NumberInput::Int(0), None)]
    #[case::negative(NumberInput::Int(-1), None)]
    #[case::whole_float(NumberInput::Float(4096.0), Some(4096))]
    #[case::inf(NumberInput::Float(f64::INFINITY), None)]
    #[case::neg_inf(NumberInput::Float(f64::NEG_INFINITY), None)]
    #[case::nan(NumberInput::Float(f64::NAN), None)]
    #[case::huge(NumberInput::UInt(u64::MAX), Some(i64::MAX as u64))]
    fn max_bytes_values(#[case] n: NumberInput, #[case] budget: Option<u64>) {
        let input = ConfigInput {
            max_bytes: Some(n),
            ..ConfigInput::default()
        };
        assert_eq!(
            input.resolve().unwrap().config.max_bytes().enabled(),
            budget
        );
    }

    #[rstest]
    #[case::fraction(1.5)]
    #[case::negative_fraction(-0.5)]
    fn fractional_max_bytes_is_an_error(#[case] f: f64) {
        // R-CFG-2
        let input = ConfigInput {
            max_bytes: Some(NumberInput::Float(f)),
            ..ConfigInput::default()
        };
        let err = input.resolve().unwrap_err();
        assert_eq!(err.field(), "max_bytes");
        assert_eq!(
            err.to_string(),
            format!("max_bytes must be an integer number of bytes, got {f}")
        );
    }

    // R-CFG-3
    #[rstest]
    #[case::zero(json!(0), "0")]
    #[case::negative(json!(-4), "-4")]
    #[case::fraction(json!(1.5), "1.5")]
    fn bad_max_source_bytes(#[case] value: serde_json::Value, #[case] shown: &str) {
        let err = parse(json!({"max_bytes": 10, "max_source_bytes": value}))
            .resolve()
            .unwrap_err();
        assert_eq!(err.field(), "max_source_bytes");
        assert_eq!(
            err.to_string(),
            format!("max_source_bytes must be a positive integer, got {shown}")
        );
    }

    #[rstest]
    #[case::non_finite(NumberInput::Float(f64::INFINITY))]
    #[case::nan(NumberInput::Float(f64::NAN))]
    fn non_finite_max_source_bytes_is_an_error(#[case] n: NumberInput) {
        let input = ConfigInput {
            max_bytes: Some(NumberInput::Int(1)),
            max_source_bytes: Some(n),
            ..ConfigInput::default()
        };
        assert_eq!(input.resolve().unwrap_err().field(), "max_source_bytes");
    }

    #[rstest]
    #[case::int(json!(7), 7)]
    #[case::whole_float(json!(2e3), 2000)]
    #[case::big(json!(18_000_000_000_000_000_000u64), 18_000_000_000_000_000_000)]
    fn good_max_source_bytes(#[case] value: serde_json::Value, #[case] expected: u64) {
        let c = parse(json!({"max_bytes": 10, "max_source_bytes": value}))
            .resolve()
            .unwrap()
            .config;
        assert_eq!(c.max_source_bytes(), expected);
    }

    #[rstest]
    #[case::unknown_key(json!({"max_bytes": 1, "max_byte": 2}))]
    #[case::string_budget(json!({"max_bytes": "65536"}))]
    #[case::bad_policy(json!({"max_bytes": 1, "candidate_policy": "last-wins"}))]
    #[case::bad_preset(json!({"preset": "cursor"}))]
    #[case::camel_case_policy(json!({"max_bytes": 1, "candidate_policy": "FirstWins"}))]
    fn rejected_at_deserialization(#[case] value: serde_json::Value) {
        assert!(serde_json::from_value::<ConfigInput>(value).is_err());
    }

    // R-CFG-4/5: entry validation, each case one ignored entry.
    #[rstest]
    #[case::empty("", reasons::EMPTY)]
    #[case::dot(".", reasons::DOT)]
    #[case::dotdot("..", reasons::DOT)]
    #[case::slash("a/AGENTS.md", reasons::SEPARATOR)]
    #[case::backslash("a\\AGENTS.md", reasons::SEPARATOR)]
    #[case::nul("AGENTS\0.md", reasons::NUL)]
    #[case::duplicate("AGENTS.md", reasons::DUPLICATE)]
    fn ignored_entries(#[case] entry: &str, #[case] reason: &'static str) {
        let input = v(&["AGENTS.md", entry, "CLAUDE.md"]);
        for field in [
            "instruction_file_candidates",
            "local_instruction_file_candidates",
            "project_root_markers",
        ] {
            let resolved = parse(json!({"max_bytes": 1, field: input}))
                .resolve()
                .unwrap();
            let got = match field {
                "instruction_file_candidates" => &resolved.config.instruction_file_candidates(),
                "local_instruction_file_candidates" => {
                    &resolved.config.local_instruction_file_candidates()
                }
                _ => &resolved.config.project_root_markers(),
            };
            assert_eq!(*got, v(&["AGENTS.md", "CLAUDE.md"]));
            assert_eq!(
                resolved.warnings,
                [ConfigWarning {
                    field,
                    entry: entry.to_owned(),
                    reason
                }]
            );
        }
    }

    #[test]
    fn duplicate_keeps_first_position() {
        // R-CFG-4: no hidden priority, first position wins.
        let (kept, w) = validate_names("x", &v(&["CLAUDE.md", "AGENTS.md", "CLAUDE.md"]));
        assert_eq!(kept, v(&["CLAUDE.md", "AGENTS.md"]));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn empty_local_list_disables_overlays() {
        let c = parse(json!({"max_bytes": 1, "local_instruction_file_candidates": []}))
            .resolve()
            .unwrap();
        assert!(c.config.local_instruction_file_candidates().is_empty());
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn warning_display_names_field_and_escapes() {
        let w = ConfigWarning {
            field: "project_root_markers",
            entry: "a\0b".into(),
            reason: reasons::NUL,
        };
        assert_eq!(
            w.to_string(),
            "project_root_markers: ignored entry \"a\\0b\": contains NUL"
        );
    }

    #[test]
    fn policy_strings() {
        for p in [CandidatePolicy::FirstWins, CandidatePolicy::AllDistinct] {
            assert_eq!(p.as_str().parse::<CandidatePolicy>(), Ok(p));
            assert_eq!(serde_json::to_value(p).unwrap(), json!(p.as_str()));
        }
        assert_eq!(
            "first_wins".parse::<CandidatePolicy>().unwrap_err().field(),
            "candidate_policy"
        );
    }

    #[rstest]
    #[case::int(json!(7), Some(NumberInput::Int(7)))]
    #[case::negative(json!(-7), Some(NumberInput::Int(-7)))]
    #[case::float(json!(7.5), Some(NumberInput::Float(7.5)))]
    #[case::huge(json!(u64::MAX), Some(NumberInput::UInt(u64::MAX)))]
    #[case::null(json!(null), None)]
    fn budget_field_keeps_json_number_kinds(
        #[case] value: serde_json::Value,
        #[case] expected: Option<NumberInput>,
    ) {
        // The float hint used for YAML's `.inf` must not turn JSON integers into floats.
        assert_eq!(parse(json!({"max_bytes": value})).max_bytes, expected);
    }

    #[test]
    fn input_serializes_back() {
        let input = parse(json!({"max_bytes": 5, "max_source_bytes": 2.0, "preset": "gemini"}));
        let back: ConfigInput =
            serde_json::from_value(serde_json::to_value(&input).unwrap()).unwrap();
        assert_eq!(back, input);
    }

    proptest! {
        #[test]
        fn validated_lists_hold_only_plain_unique_names(entries in prop::collection::vec("[a./\\\\\0]{0,3}", 0..8)) {
            let (kept, warnings) = validate_names("f", &entries);
            prop_assert_eq!(kept.len() + warnings.len(), entries.len());
            let unique: BTreeSet<&String> = kept.iter().collect();
            prop_assert_eq!(unique.len(), kept.len());
            for k in &kept {
                prop_assert!(name_problem(k).is_none());
            }
            // Order of kept entries follows input order.
            let mut it = entries.iter();
            for k in &kept {
                prop_assert!(it.any(|e| e == k));
            }
        }

        #[test]
        fn resolve_never_panics(n in any::<f64>(), s in any::<i64>()) {
            let input = ConfigInput {
                max_bytes: Some(NumberInput::Float(n)),
                max_source_bytes: Some(NumberInput::Int(s)),
                ..ConfigInput::default()
            };
            if let Ok(r) = input.resolve() {
                prop_assert!(r.config.max_source_bytes() > 0);
            }
        }
    }
}
