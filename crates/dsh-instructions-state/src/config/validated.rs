//! The validated [`Config`] every crate shares: its fields, the SPEC §3
//! defaults and the presets it is built from, and its accessors. Separate
//! from the input and its validation so what a mounted configuration *is*
//! reads apart from how one is obtained.

use std::collections::BTreeMap;

use dsh_instructions_render::Budget;

#[cfg(doc)]
use super::{CLAUDE_DIR_FILE, ConfigInput};
use super::{
    CLAUDE_MAX_IMPORT_DEPTH, CandidatePolicy, ContentTransform, DEFAULT_MAX_IMPORT_DEPTH,
    DEFAULT_MAX_SOURCE_BYTES, DEFAULT_PRESET_MAX_BYTES, FallbackScope, Preset, RuleFormat,
};

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
    pub(crate) ancestor_instruction_files: Vec<String>,
    pub(crate) max_import_depth: u32,
    pub(crate) rule_formats: Vec<RuleFormat>,
}

/// The files Claude Code reads in every directory above the project root
/// (the `claude` preset's [`Config::ancestor_instruction_files`], R-HOOK-8).
pub(crate) const ANCESTOR_CLAUDE_FILES: [&str; 3] =
    ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"];

/// The files GitHub Copilot CLI loads in a directory, in its order (the
/// `copilot` preset's candidates, every one that exists).
pub(crate) const COPILOT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/// Copilot CLI's user-level file (the `copilot` preset).
pub(crate) const COPILOT_USER_FILE: &str = "~/.copilot/copilot-instructions.md";

/// The files Qwen Code loads in a directory, in its order (the `qwen`
/// preset's candidates, also read above the project root).
pub(crate) const QWEN_FILES: &[&str] = &["QWEN.md", "AGENTS.md"];

/// Qwen Code's user-level file (the `qwen` preset).
pub(crate) const QWEN_USER_FILE: &str = "~/.qwen/QWEN.md";

pub(super) fn strings(items: &[&str]) -> Vec<String> {
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
    /// use dsh_instructions_state::{Budget, Config, config::CandidatePolicy};
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
            ancestor_instruction_files: Vec::new(),
            max_import_depth: DEFAULT_MAX_IMPORT_DEPTH,
            rule_formats: Vec::new(),
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
            Preset::Copilot => (COPILOT_FILES, &[], 65_536),
            Preset::Qwen => (QWEN_FILES, &[], 65_536),
        };
        c.instruction_file_candidates = strings(base);
        c.local_instruction_file_candidates = strings(local);
        c.candidate_policy = CandidatePolicy::FirstWins;
        c.max_bytes = Budget::from_signed(max_bytes);
        c.imports = matches!(p, Preset::Claude | Preset::Gemini | Preset::Qwen);
        if p == Preset::Copilot {
            // Copilot CLI loads each of them, in this order, after its user
            // file (harness README, "Native instructions").
            c.candidate_policy = CandidatePolicy::AllDistinct;
            c.user_instruction_files = strings(&[COPILOT_USER_FILE]);
            c.rule_formats = vec![RuleFormat::Claude, RuleFormat::Copilot];
        }
        if p == Preset::Qwen {
            // Qwen Code loads both names from the cwd up past the project
            // root, after its user file (harness README).
            c.candidate_policy = CandidatePolicy::AllDistinct;
            c.user_instruction_files = strings(&[QWEN_USER_FILE]);
            c.ancestor_instruction_files = strings(QWEN_FILES);
        }
        if p == Preset::Claude {
            c.claude_dir = true;
            c.fallback_instruction_file_candidates = strings(&["AGENTS.md"]);
            c.fallback_scope = FallbackScope::Path;
            c.content_transform = ContentTransform::Claude;
            c.user_instruction_files = strings(&["~/.claude/CLAUDE.md"]);
            c.ancestor_instruction_files = strings(&ANCESTOR_CLAUDE_FILES);
            c.max_import_depth = CLAUDE_MAX_IMPORT_DEPTH;
            c.rule_formats = vec![RuleFormat::Claude];
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

    /// Read [`CLAUDE_DIR_FILE`](crate::config::CLAUDE_DIR_FILE) right after a directory's `CLAUDE.md` (its
    /// own slot, [`crate::scope::SLOT_CLAUDE_DIR`]); off by default.
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

    /// Files read by name in every directory *above* the project root,
    /// from `/` down to the root's parent (R-HOOK-8): plain relative paths
    /// (validated, no `..`), rendered after the agent user-level files and
    /// before the project files, broadest directory first and, within a
    /// directory, in this order. Only these paths of those directories are
    /// readable (names-only trust, docs/decisions/0044); empty by default,
    /// Claude Code's three files in the `claude` preset.
    pub fn ancestor_instruction_files(&self) -> &[String] {
        &self.ancestor_instruction_files
    }

    /// Import depth below a candidate (R-IMP-2); 5 by default, 4 for Claude.
    pub fn max_import_depth(&self) -> u32 {
        self.max_import_depth
    }

    /// The formats of path-scoped rule files that load (R-CFG-12, SPEC
    /// §14), each once, in [`RuleFormat::ALL`](crate::config::RuleFormat::ALL) order; empty by default,
    /// `[claude]` in the `claude` preset.
    ///
    /// ```
    /// use dsh_instructions_state::{Config, Preset, config::RuleFormat};
    /// assert!(Config::with_max_bytes(1).rule_formats().is_empty());
    /// assert_eq!(Config::preset(Preset::Claude).rule_formats(), [RuleFormat::Claude]);
    /// ```
    pub fn rule_formats(&self) -> &[RuleFormat] {
        &self.rule_formats
    }
}
