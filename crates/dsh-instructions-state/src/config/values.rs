//! The closed value sets of configuration fields (candidate policy,
//! fallback scope, content transform, preset) and the default numbers SPEC §3
//! fixes. Separate because every other part of the configuration names them
//! and they depend on nothing but their parse error.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::Config;
use crate::StateError;

crate::display_as_str!(CandidatePolicy, Preset, RuleFormat);

/// Default per-file cap of R-CFG-3 (1 MiB).
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 1_048_576;

/// Budget a preset gives when it does not say otherwise (R-CFG-9).
pub const DEFAULT_PRESET_MAX_BYTES: i64 = 65_536;

/// How the candidate lists of one directory turn into loaded files (R-CFG-7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CandidatePolicy {
    /// The first existing file of the base list and the first of the local
    /// list; scope slots are [`crate::scope::SLOT_BASE`] and [`crate::scope::SLOT_LOCAL`].
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
    /// use dsh_instructions_state::config::CandidatePolicy;
    /// assert_eq!(CandidatePolicy::AllDistinct.as_str(), "all-distinct");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FirstWins => "first-wins",
            Self::AllDistinct => "all-distinct",
        }
    }
}

impl FromStr for CandidatePolicy {
    type Err = StateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "first-wins" => Ok(Self::FirstWins),
            "all-distinct" => Ok(Self::AllDistinct),
            other => Err(StateError::UnknownPolicy {
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
    /// Claude Code's own transformations ([`crate::config::claude_transform`]):
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
            Self::Claude => std::borrow::Cow::Owned(crate::claude::claude_transform(text)),
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
    /// GitHub Copilot CLI's native selection: every one of
    /// `[AGENTS.md, CLAUDE.md, GEMINI.md]` (all distinct), no overlays, the
    /// user file `~/.copilot/copilot-instructions.md`, the `copilot` rules
    /// (`.github/copilot-instructions.md`, `.github/instructions`) and the
    /// `claude` rules; 65,536 bytes.
    Copilot,
    /// Qwen Code's native selection: every one of `[QWEN.md, AGENTS.md]`
    /// (all distinct), also in each directory above the project root, no
    /// overlays, the user file `~/.qwen/QWEN.md`, imports; 65,536 bytes.
    /// Qwen's own `.qwen/rules` are no rule format here (SPEC §14 has none
    /// like it).
    Qwen,
}

impl Preset {
    /// Every preset, in the order SPEC lists them.
    pub const ALL: [Preset; 7] = [
        Preset::Dsh,
        Preset::Codex,
        Preset::Claude,
        Preset::Opencode,
        Preset::Gemini,
        Preset::Copilot,
        Preset::Qwen,
    ];

    /// The name used by `--preset` and the `preset` config key.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dsh => "dsh",
            Self::Codex => "codex",
            Self::Claude => "claude",
            Self::Opencode => "opencode",
            Self::Gemini => "gemini",
            Self::Copilot => "copilot",
            Self::Qwen => "qwen",
        }
    }
}

impl FromStr for Preset {
    type Err = StateError;

    /// Parses a preset name; ASCII case is ignored so `--preset Codex` works.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| StateError::UnknownPreset { name: s.to_owned() })
    }
}

/// A format of path-scoped rule files (R-CFG-12, R-RULE-1): where its rules
/// directory sits under a directory, which files in it are rules, and
/// whether its subdirectories are searched.
///
/// ```
/// use dsh_instructions_state::config::RuleFormat;
/// assert_eq!("cursor".parse::<RuleFormat>()?, RuleFormat::Cursor);
/// assert_eq!(RuleFormat::Cursor.rules_dir(), ".cursor/rules");
/// assert!(RuleFormat::Cursor.is_rule_file("a/b.mdc"));
/// assert!(!RuleFormat::Windsurf.recursive());
/// assert!("zed".parse::<RuleFormat>().is_err());
/// # Ok::<(), dsh_instructions_state::StateError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleFormat {
    /// Claude Code: `.claude/rules/**/*.md`, front matter `paths`; also the
    /// user's `~/.claude/rules/`.
    Claude,
    /// Cursor: `.cursor/rules/**/*.mdc`, front matter `globs` and
    /// `alwaysApply`.
    Cursor,
    /// GitHub Copilot: `.github/instructions/**/*.instructions.md`, front
    /// matter `applyTo`; also `.github/copilot-instructions.md` at the
    /// project root (always on).
    Copilot,
    /// Windsurf: `.windsurf/rules/*.md` (not recursive), front matter
    /// `trigger` and `globs`.
    Windsurf,
}

impl RuleFormat {
    /// Every format, in the order R-RULE-8 sorts a directory's rules by.
    pub const ALL: [RuleFormat; 4] = [
        RuleFormat::Claude,
        RuleFormat::Cursor,
        RuleFormat::Copilot,
        RuleFormat::Windsurf,
    ];

    /// The configuration spelling: `claude`, `cursor`, `copilot` or
    /// `windsurf`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Cursor => "cursor",
            Self::Copilot => "copilot",
            Self::Windsurf => "windsurf",
        }
    }

    /// The rules directory relative to the directory that holds it.
    pub fn rules_dir(self) -> &'static str {
        match self {
            Self::Claude => ".claude/rules",
            Self::Cursor => ".cursor/rules",
            Self::Copilot => ".github/instructions",
            Self::Windsurf => ".windsurf/rules",
        }
    }

    /// The ending a file name needs to be a rule of this format.
    pub fn file_suffix(self) -> &'static str {
        match self {
            Self::Claude | Self::Windsurf => ".md",
            Self::Cursor => ".mdc",
            Self::Copilot => ".instructions.md",
        }
    }

    /// Whether subdirectories of the rules directory are searched.
    pub fn recursive(self) -> bool {
        !matches!(self, Self::Windsurf)
    }

    /// Whether `rel`, a `/`-separated path relative to the rules directory,
    /// names a rule file of this format: the right ending after a
    /// non-empty stem, and no subdirectory for a non-recursive format.
    pub fn is_rule_file(self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let nested = rel.contains('/');
        name.len() > self.file_suffix().len()
            && name.ends_with(self.file_suffix())
            && (self.recursive() || !nested)
    }
}

impl FromStr for RuleFormat {
    type Err = StateError;

    /// Parses a format name exactly (R-CFG-12: an unknown name is an error
    /// naming it).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| StateError::UnknownRuleFormat { name: s.to_owned() })
    }
}
