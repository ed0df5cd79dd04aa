//! Scope keys (R-STATE-2) and the broadest-first section order (R-REN-3).

use std::cmp::Ordering;
use std::fmt;

use crate::config::{CandidatePolicy, Config, RuleFormat, plain_relative_path};

/// Slot of the base instruction under `first-wins` (R-STATE-2).
pub const SLOT_BASE: &str = "base";
/// Slot of the overlay under `first-wins` (R-STATE-2).
pub const SLOT_LOCAL: &str = "local";
/// Slot of `.claude/CLAUDE.md` (`claude_dir`), under either policy: it is a
/// rule, not a candidate entry, so it has no name of its own to use.
pub const SLOT_CLAUDE_DIR: &str = "claude-dir";

const USER_GLOBAL: &str = "user\0AGENTS.md";
const USER_PREFIX: &str = "user\0";
const PROJECT_PREFIX: &str = "project\0";
const ANCESTOR_PREFIX: &str = "ancestor\0";
const RULE_PREFIX: &str = "rule\0";
/// The user's Claude rules directory as a display path prefix (R-RULE-8).
pub(crate) const USER_CLAUDE_RULES: &str = "~/.claude/rules/";
/// Copilot's one always-on file at the project root (R-RULE-1).
pub(crate) const COPILOT_ROOT_FILE: &str = ".github/copilot-instructions.md";

/// Which file a change is about, as the NUL-separated string of R-STATE-2:
/// `user\0AGENTS.md` for the user-global file, `user\0~/<path>` for an
/// agent's user-level file (`user_instruction_files`, e.g.
/// `user\0~/.claude/CLAUDE.md`), `ancestor\0<dir>\0<name>` for a file read
/// by name in a directory above the project root (`ancestor_instruction_files`,
/// `<dir>` absolute, e.g. `ancestor\0/home/u/code\0CLAUDE.md`),
/// `project\0<dir>\0<slot>` for a project
/// slot. The NUL separator means no directory name (`user`,
/// `user-global`, …) can collide with the user-global key.
///
/// ```
/// use dsh_instructions_state::{ScopeKey, scope::{SLOT_BASE, ScopeKind}};
/// let k = ScopeKey::project("pkg/a", SLOT_BASE);
/// assert_eq!(k.as_str(), "project\0pkg/a\0base");
/// assert_eq!(k.kind(), ScopeKind::Project { dir: "pkg/a", slot: "base" });
/// assert_eq!(ScopeKey::parse(k.as_str()), Some(k));
///
/// let user = ScopeKey::user_global();
/// assert_eq!(user.kind(), ScopeKind::UserGlobal);
/// assert_eq!(user.dir(), None);
/// assert_ne!(ScopeKey::project("user", "AGENTS.md").as_str(), user.as_str());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ScopeKey(String);

/// The parts of a [`ScopeKey`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind<'a> {
    /// The user-global file `<home>/AGENTS.md` (R-HOME-4).
    UserGlobal,
    /// An agent's user-level file, by its configured `~/…` path.
    UserFile {
        /// The path as configured, `~/…`.
        path: &'a str,
    },
    /// A file read by name in a directory above the project root
    /// (`ancestor_instruction_files`, R-HOOK-8).
    Ancestor {
        /// The directory, absolute and lexically normal (`/` included).
        dir: &'a str,
        /// The configured relative path, e.g. `CLAUDE.md` or
        /// `.claude/CLAUDE.md`.
        name: &'a str,
    },
    /// A rule file (SPEC §14, R-RULE-8): `rule\0<display path>`.
    Rule {
        /// The display path: project-relative
        /// (`pkg/.cursor/rules/x.mdc`) or `~/.claude/rules/<rel>`.
        path: &'a str,
    },
    /// A slot of a project directory.
    Project {
        /// `.` for the project root, else a `/`-separated relative path.
        dir: &'a str,
        /// `base`/`local` (first-wins) or a candidate name (all-distinct).
        slot: &'a str,
    },
}

/// True for `.` or a relative `/`-separated path without empty, `.` or `..`
/// components (and no NUL, which would break the key format).
fn valid_dir(dir: &str) -> bool {
    dir == "."
        || (!dir.is_empty()
            && !dir.contains('\0')
            && dir
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."))
}

/// True for `/` or an absolute `/`-separated path without empty, `.` or
/// `..` components (and no NUL).
fn valid_abs_dir(dir: &str) -> bool {
    dir == "/" || dir.strip_prefix('/').is_some_and(plain_relative_path)
}

/// Slots are single file names or `base`/`local`.
fn valid_slot(slot: &str) -> bool {
    !slot.is_empty() && !slot.contains(['\0', '/'])
}

impl ScopeKey {
    /// The user-global scope, `user\0AGENTS.md`.
    pub fn user_global() -> Self {
        Self(USER_GLOBAL.to_owned())
    }

    /// A project scope `project\0<dir>\0<slot>`. An empty `dir` means the
    /// root and becomes `.`.
    ///
    /// `dir` should be `.` or a relative `/`-separated path and `slot` a file
    /// name or `base`/`local`; other input is not rejected here (discovery
    /// only produces such values) but the key would not survive
    /// [`ScopeKey::parse`]; use [`ScopeKey::try_project`] to check.
    pub fn project(dir: &str, slot: &str) -> Self {
        let dir = if dir.is_empty() { "." } else { dir };
        // Sized once: built per slot per directory on every pass.
        let mut key = Self(String::with_capacity(
            PROJECT_PREFIX.len() + dir.len() + 1 + slot.len(),
        ));
        key.set_project(dir, slot);
        key
    }

    /// Makes this key [`ScopeKey::project`]`(dir, slot)` in place, reusing
    /// its buffer: a pass that looks up every known directory's slots can
    /// do so without an allocation per lookup.
    ///
    /// ```
    /// use dsh_instructions_state::ScopeKey;
    /// let mut key = ScopeKey::user_global();
    /// key.set_project("a/b", "local");
    /// assert_eq!(key, ScopeKey::project("a/b", "local"));
    /// key.set_project("", "base");
    /// assert_eq!(key, ScopeKey::project(".", "base"));
    /// ```
    pub fn set_project(&mut self, dir: &str, slot: &str) {
        let dir = if dir.is_empty() { "." } else { dir };
        self.0.clear();
        self.0.push_str(PROJECT_PREFIX);
        self.0.push_str(dir);
        self.0.push('\0');
        self.0.push_str(slot);
    }

    /// Like [`ScopeKey::project`] (an empty `dir` is the root too), but `None`
    /// unless the result is a key that [`ScopeKey::parse`] accepts.
    pub fn try_project(dir: &str, slot: &str) -> Option<Self> {
        let dir = if dir.is_empty() { "." } else { dir };
        (valid_dir(dir) && valid_slot(slot)).then(|| Self::project(dir, slot))
    }

    /// An agent's user-level file, `user\0<path>`; `None` unless `path` is
    /// `~/` and a relative path without empty, `.` or `..` components (and
    /// no NUL), as `user_instruction_files` entries are.
    ///
    /// ```
    /// use dsh_instructions_state::{ScopeKey, scope::ScopeKind};
    /// let k = ScopeKey::user_file("~/.claude/CLAUDE.md").unwrap();
    /// assert_eq!(k.kind(), ScopeKind::UserFile { path: "~/.claude/CLAUDE.md" });
    /// assert_eq!(ScopeKey::parse(k.as_str()), Some(k));
    /// assert_eq!(ScopeKey::user_file("/etc/x"), None);
    /// ```
    pub fn user_file(path: &str) -> Option<Self> {
        let rest = path.strip_prefix("~/")?;
        (valid_dir(rest) && rest != ".").then(|| Self(format!("{USER_PREFIX}{path}")))
    }

    /// A file read by name above the project root,
    /// `ancestor\0<dir>\0<name>`; `None` unless `dir` is absolute and
    /// lexically normal and `name` a plain relative path (no empty, `.` or
    /// `..` component, no `\` or NUL), as `ancestor_instruction_files`
    /// entries are.
    ///
    /// ```
    /// use dsh_instructions_state::{ScopeKey, scope::ScopeKind};
    /// let k = ScopeKey::ancestor("/home/u/code", ".claude/CLAUDE.md").unwrap();
    /// assert_eq!(k.as_str(), "ancestor\0/home/u/code\0.claude/CLAUDE.md");
    /// assert_eq!(k.kind(), ScopeKind::Ancestor { dir: "/home/u/code", name: ".claude/CLAUDE.md" });
    /// assert_eq!(ScopeKey::parse(k.as_str()), Some(k));
    /// assert!(ScopeKey::ancestor("/", "CLAUDE.md").is_some());
    /// assert_eq!(ScopeKey::ancestor("code", "CLAUDE.md"), None);
    /// assert_eq!(ScopeKey::ancestor("/a", "../CLAUDE.md"), None);
    /// ```
    pub fn ancestor(dir: &str, name: &str) -> Option<Self> {
        (valid_abs_dir(dir) && plain_relative_path(name))
            .then(|| Self(format!("{ANCESTOR_PREFIX}{dir}\0{name}")))
    }

    /// A rule file's scope, `rule\0<display path>` (R-RULE-8); `None`
    /// unless `path` is a rule file's display path ([`RulePlace::of`](crate::scope::RulePlace::of)).
    ///
    /// ```
    /// use dsh_instructions_state::{ScopeKey, config::RuleFormat, scope::ScopeKind};
    /// let k = ScopeKey::rule("pkg/.cursor/rules/x.mdc").unwrap();
    /// assert_eq!(k.as_str(), "rule\0pkg/.cursor/rules/x.mdc");
    /// assert_eq!(k.kind(), ScopeKind::Rule { path: "pkg/.cursor/rules/x.mdc" });
    /// assert_eq!(k.dir(), Some("pkg"));
    /// assert_eq!(ScopeKey::parse(k.as_str()), Some(k));
    /// assert!(ScopeKey::rule("~/.claude/rules/go.md").unwrap().is_user());
    /// assert_eq!(ScopeKey::rule("pkg/notes.md"), None);
    /// ```
    pub fn rule(path: &str) -> Option<Self> {
        RulePlace::of(path).map(|_| Self(format!("{RULE_PREFIX}{path}")))
    }

    /// The place of a rule key's file, `None` for other keys.
    pub fn rule_place(&self) -> Option<RulePlace<'_>> {
        self.0.strip_prefix(RULE_PREFIX).and_then(RulePlace::of)
    }

    /// Parses a persisted key; `None` for anything that is not one of the
    /// shapes of R-STATE-2 with a well-formed directory and slot.
    pub fn parse(s: &str) -> Option<Self> {
        if let Some(path) = s.strip_prefix(RULE_PREFIX) {
            return Self::rule(path);
        }
        if s == USER_GLOBAL {
            return Some(Self::user_global());
        }
        if let Some(path) = s.strip_prefix(USER_PREFIX) {
            return Self::user_file(path);
        }
        if let Some(rest) = s.strip_prefix(ANCESTOR_PREFIX) {
            let (dir, name) = rest.split_once('\0')?;
            return Self::ancestor(dir, name);
        }
        let (dir, slot) = s.strip_prefix(PROJECT_PREFIX)?.split_once('\0')?;
        Self::try_project(dir, slot).filter(|k| k.0 == s)
    }

    /// The key string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key's parts.
    pub fn kind(&self) -> ScopeKind<'_> {
        if let Some(path) = self.0.strip_prefix(RULE_PREFIX) {
            return ScopeKind::Rule { path };
        }
        if let Some(rest) = self.0.strip_prefix(ANCESTOR_PREFIX) {
            // Every ancestor key holds a NUL after the directory; the
            // fallback only keeps this total.
            let (dir, name) = rest.split_once('\0').unwrap_or((rest, ""));
            return ScopeKind::Ancestor { dir, name };
        }
        match self.0.strip_prefix(PROJECT_PREFIX) {
            None if self.0 == USER_GLOBAL => ScopeKind::UserGlobal,
            None => ScopeKind::UserFile {
                path: self.0.strip_prefix(USER_PREFIX).unwrap_or(&self.0),
            },
            Some(rest) => {
                // Every project key holds a NUL after the directory; the
                // fallback only keeps this total.
                let (dir, slot) = rest.split_once('\0').unwrap_or((rest, ""));
                ScopeKind::Project { dir, slot }
            }
        }
    }

    /// The project directory (`.` or relative), `None` for the scopes
    /// outside the project (user and ancestor files, the user's rules). A
    /// project rule's directory is D, the one holding its rules directory
    /// (R-RULE-8).
    pub fn dir(&self) -> Option<&str> {
        match self.kind() {
            ScopeKind::UserGlobal | ScopeKind::UserFile { .. } | ScopeKind::Ancestor { .. } => None,
            ScopeKind::Rule { .. } => self.rule_place().and_then(|p| p.dir),
            ScopeKind::Project { dir, .. } => Some(dir),
        }
    }

    /// The slot, `None` for the scopes outside the project and for rules.
    pub fn slot(&self) -> Option<&str> {
        match self.kind() {
            ScopeKind::UserGlobal
            | ScopeKind::UserFile { .. }
            | ScopeKind::Ancestor { .. }
            | ScopeKind::Rule { .. } => None,
            ScopeKind::Project { slot, .. } => Some(slot),
        }
    }

    /// True for the user-global scope.
    pub fn is_user_global(&self) -> bool {
        self.kind() == ScopeKind::UserGlobal
    }

    /// True for the user-global scope, the agent user-level files and the
    /// ancestor files: the scopes outside the project.
    pub fn is_user(&self) -> bool {
        match self.kind() {
            ScopeKind::Project { .. } => false,
            ScopeKind::Rule { .. } => self.dir().is_none(),
            _ => true,
        }
    }
}

/// Where a rule file sits, read off its display path (R-RULE-1, R-RULE-8).
///
/// ```
/// use dsh_instructions_state::{config::RuleFormat, scope::RulePlace};
/// let p = RulePlace::of("a/b/.claude/rules/x/y.md").unwrap();
/// assert_eq!((p.dir, p.format, p.rel), (Some("a/b"), RuleFormat::Claude, "x/y.md"));
/// let root = RulePlace::of(".windsurf/rules/w.md").unwrap();
/// assert_eq!(root.dir, Some("."));
/// assert_eq!(RulePlace::of("~/.claude/rules/r.md").unwrap().dir, None);
/// assert_eq!(RulePlace::of(".windsurf/rules/sub/w.md"), None); // not recursive
/// assert_eq!(RulePlace::of("a/.claude/rules/x.txt"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RulePlace<'a> {
    /// D, the directory holding the rules directory (`.` for the root), or
    /// `None` for the user's `~/.claude/rules/`.
    pub dir: Option<&'a str>,
    /// The format whose rules directory holds it.
    pub format: RuleFormat,
    /// The path relative to the rules directory (for Copilot's root file,
    /// `copilot-instructions.md`, relative to `.github`).
    pub rel: &'a str,
}

impl<'a> RulePlace<'a> {
    /// The place of a display path, `None` unless it names a rule file: a
    /// plain relative path (or `~/.claude/rules/…`) whose first rules
    /// directory of some format is followed by a rule file name of that
    /// format, or Copilot's `.github/copilot-instructions.md`; a project
    /// path never starts with `~/`. A path with
    /// several rules directories belongs to the first (the broadest D).
    pub fn of(path: &'a str) -> Option<Self> {
        if let Some(rel) = path.strip_prefix(USER_CLAUDE_RULES) {
            return (plain_relative_path(rel) && RuleFormat::Claude.is_rule_file(rel)).then_some(
                Self {
                    dir: None,
                    format: RuleFormat::Claude,
                    rel,
                },
            );
        }
        // `~/…` is the user's alone: a project directory named `~` would
        // read as the home in every text.
        if !plain_relative_path(path) || path.starts_with("~/") {
            return None;
        }
        if path == COPILOT_ROOT_FILE {
            return Some(Self {
                dir: Some("."),
                format: RuleFormat::Copilot,
                rel: "copilot-instructions.md",
            });
        }
        // The earliest component boundary where some rules directory
        // starts (the first format of `ALL` at the same one). A byte scan
        // of the boundaries: this runs for every rule key a composition
        // sorts or groups, and a substring search per format was most of
        // a rules touch's key work (issue 46 item 2).
        let bytes = path.as_bytes();
        let starts = std::iter::once(0).chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'/')
                .map(|(i, _)| i + 1),
        );
        let best = starts.into_iter().find_map(|i| {
            RuleFormat::ALL.into_iter().find_map(|format| {
                let rd = format.rules_dir();
                (path[i..].starts_with(rd) && bytes.get(i + rd.len()) == Some(&b'/'))
                    .then_some((i, format))
            })
        });
        let (i, format) = best?;
        let rel = &path[i + format.rules_dir().len() + 1..];
        let dir = if i == 0 { "." } else { &path[..i - 1] };
        format.is_rule_file(rel).then_some(Self {
            dir: Some(dir),
            format,
            rel,
        })
    }
}

impl fmt::Display for ScopeKey {
    /// Human-readable form with NUL shown as `\0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.escape_debug())
    }
}

/// Components of a directory, `.` having none (depth 0).
fn components(dir: &str) -> impl Iterator<Item = &str> + Clone {
    dir.split('/').filter(|c| !c.is_empty() && *c != ".")
}

/// Rank of a slot within its directory (R-REN-3): `first-wins` puts base
/// before local; `all-distinct` follows candidate position, base list then
/// local list. `None` = unknown slot, sorted after the known ones by name.
fn slot_rank(slot: &str, config: &Config) -> Option<usize> {
    match config.candidate_policy() {
        CandidatePolicy::FirstWins => match slot {
            SLOT_BASE => Some(0),
            SLOT_CLAUDE_DIR if config.claude_dir() => Some(1),
            SLOT_LOCAL => Some(2),
            _ => None,
        },
        CandidatePolicy::AllDistinct => all_distinct_slots(config).position(|c| c == slot),
    }
}

/// The slots of one directory under `all-distinct`, in section order: the
/// base list with [`SLOT_CLAUDE_DIR`](crate::scope::SLOT_CLAUDE_DIR) right after `CLAUDE.md` (after the
/// base list when it has no `CLAUDE.md`), the fallback list, the local
/// list.
pub(crate) fn all_distinct_slots(config: &Config) -> impl Iterator<Item = &str> {
    let base = &config.instruction_file_candidates();
    let at = base
        .iter()
        .position(|c| c == "CLAUDE.md")
        .map_or(base.len(), |i| i + 1);
    let claude = config.claude_dir().then_some(SLOT_CLAUDE_DIR);
    base[..at]
        .iter()
        .map(String::as_str)
        .chain(claude)
        .chain(base[at..].iter().map(String::as_str))
        .chain(
            config
                .fallback_instruction_file_candidates()
                .iter()
                .map(String::as_str),
        )
        .chain(
            config
                .local_instruction_file_candidates()
                .iter()
                .map(String::as_str),
        )
}

/// What a project scope is within its directory.
enum DirEntry<'a> {
    Slot(&'a str),
    Rule(RulePlace<'a>),
}

/// A project scope's directory and entry; `None` for the scopes outside
/// the project (the user's rules included).
fn project_entry(key: &ScopeKey) -> Option<(&str, DirEntry<'_>)> {
    match key.kind() {
        ScopeKind::Project { dir, slot } => Some((dir, DirEntry::Slot(slot))),
        ScopeKind::Rule { .. } => {
            let place = key.rule_place()?;
            Some((place.dir?, DirEntry::Rule(place)))
        }
        _ => None,
    }
}

/// R-RULE-8: formats in the order claude, cursor, copilot, windsurf (the
/// Copilot root file first among Copilot's), then the byte order of the
/// path relative to the rules directory.
fn rule_rank<'a>(p: RulePlace<'a>) -> (RuleFormat, bool, &'a [u8]) {
    // No file in `.github/instructions/` has this rel (it lacks the
    // `.instructions.md` ending), so it is the root file.
    let in_dir = p.rel != "copilot-instructions.md";
    (p.format, in_dir, p.rel.as_bytes())
}

/// Rank of a scope outside the project: the user-global file, then the
/// user-level files in configured order (unknown ones last), then the
/// ancestor files — by depth of their directory (`/` = 0, broadest first),
/// then by directory component by component, then in configured order of
/// their names (unknown ones last).
fn user_rank<'a>(key: &'a ScopeKey, config: &Config) -> (usize, usize, Vec<&'a str>, usize) {
    let position =
        |list: &[String], item: &str| list.iter().position(|p| p == item).unwrap_or(usize::MAX);
    match key.kind() {
        ScopeKind::UserGlobal => (0, 0, Vec::new(), 0),
        ScopeKind::UserFile { path } => (
            1,
            position(config.user_instruction_files(), path),
            Vec::new(),
            0,
        ),
        // The user's rules sit at the user-level position, after its files
        // (R-RULE-1), by path; a project rule never gets here with a D.
        ScopeKind::Rule { .. } if key.dir().is_none() => (1, usize::MAX, Vec::new(), 1),
        ScopeKind::Ancestor { dir, name } => {
            let parts: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
            (
                2,
                parts.len(),
                parts,
                position(config.ancestor_instruction_files(), name),
            )
        }
        ScopeKind::Project { .. } | ScopeKind::Rule { .. } => (3, 0, Vec::new(), 0),
    }
}

/// Broadest-first section order (R-REN-3): the user-global scope first, the
/// agent user-level files next (configured order), the ancestor files
/// above the project root after them (broadest directory first); then
/// project directories by depth (`.` = 0), then by path compared component by
/// component in byte order; within a directory, slot order (see
/// [`CandidatePolicy`]), unknown slots last by name. A total order consistent
/// with equality, usable with `sort_by`.
///
/// ```
/// use dsh_instructions_state::{Config, ScopeKey, scope::section_order};
/// let config = Config::with_max_bytes(65_536);
/// let mut keys = vec![
///     ScopeKey::project("a/b", "base"),
///     ScopeKey::project(".", "local"),
///     ScopeKey::project("z", "base"),
///     ScopeKey::user_global(),
///     ScopeKey::project(".", "base"),
/// ];
/// keys.sort_by(|a, b| section_order(a, b, &config));
/// let dirs: Vec<_> = keys.iter().map(|k| k.dir()).collect();
/// assert_eq!(dirs, [None, Some("."), Some("."), Some("z"), Some("a/b")]);
/// assert_eq!(keys[1].slot(), Some("base"));
/// ```
pub fn section_order(a: &ScopeKey, b: &ScopeKey, config: &Config) -> Ordering {
    let (Some((da, ea)), Some((db, eb))) = (project_entry(a), project_entry(b)) else {
        // At least one is a user scope: user scopes sort first.
        return user_rank(a, config)
            .cmp(&user_rank(b, config))
            .then_with(|| a.as_str().cmp(b.as_str()));
    };
    let (ca, cb) = (components(da), components(db));
    ca.clone()
        .count()
        .cmp(&cb.clone().count())
        .then_with(|| ca.map(str::as_bytes).cmp(cb.map(str::as_bytes)))
        .then_with(|| match (ea, eb) {
            (DirEntry::Slot(sa), DirEntry::Slot(sb)) => {
                // `None` (unknown) must sort after every `Some`.
                let (ra, rb) = (slot_rank(sa, config), slot_rank(sb, config));
                ra.is_none()
                    .cmp(&rb.is_none())
                    .then(ra.cmp(&rb))
                    .then_with(|| sa.as_bytes().cmp(sb.as_bytes()))
            }
            // R-RULE-8: a directory's rules come after its candidates.
            (DirEntry::Slot(_), DirEntry::Rule(_)) => Ordering::Less,
            (DirEntry::Rule(_), DirEntry::Slot(_)) => Ordering::Greater,
            (DirEntry::Rule(pa), DirEntry::Rule(pb)) => rule_rank(pa).cmp(&rule_rank(pb)),
        })
        // Keeps the order total even for keys whose directories only differ
        // in spelling (`project()` does not normalize).
        .then_with(|| a.as_str().cmp(b.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    #[rstest]
    #[case::user_global("user\0AGENTS.md", true)]
    #[case::root_base("project\0.\0base", true)]
    #[case::nested_local("project\0a/b\0local", true)]
    #[case::all_distinct_slot("project\0a\0CLAUDE.local.md", true)]
    #[case::dir_named_user("project\0user\0AGENTS.md", true)]
    #[case::dir_named_user_global("project\0user-global\0base", true)]
    #[case::user_other_file("user\0CLAUDE.md", false)]
    #[case::user_file("user\0~/.claude/CLAUDE.md", true)]
    #[case::user_file_dotdot("user\0~/../x", false)]
    #[case::user_file_bare_tilde("user\0~/", false)]
    #[case::user_file_absolute("user\0/etc/x", false)]
    #[case::ancestor("ancestor\0/home/u/code\0CLAUDE.md", true)]
    #[case::ancestor_at_slash("ancestor\0/\0CLAUDE.md", true)]
    #[case::ancestor_subdir_name("ancestor\0/a\0.claude/CLAUDE.md", true)]
    #[case::ancestor_relative_dir("ancestor\0a\0CLAUDE.md", false)]
    #[case::ancestor_dotdot_dir("ancestor\0/a/../b\0CLAUDE.md", false)]
    #[case::ancestor_trailing_slash("ancestor\0/a/\0CLAUDE.md", false)]
    #[case::ancestor_dotdot_name("ancestor\0/a\0../CLAUDE.md", false)]
    #[case::ancestor_absolute_name("ancestor\0/a\0/CLAUDE.md", false)]
    #[case::ancestor_empty_name("ancestor\0/a\0", false)]
    #[case::ancestor_no_name("ancestor\0/a", false)]
    #[case::ancestor_extra_part("ancestor\0/a\0CLAUDE.md\0x", false)]
    #[case::rule_claude_root("rule\0.claude/rules/api.md", true)]
    #[case::rule_cursor_nested("rule\0pkg/.cursor/rules/x/y.mdc", true)]
    #[case::rule_copilot_root_file("rule\0.github/copilot-instructions.md", true)]
    #[case::rule_copilot_file("rule\0.github/instructions/a.instructions.md", true)]
    #[case::rule_copilot_wrong_ending("rule\0.github/instructions/a.md", false)]
    #[case::rule_windsurf_flat("rule\0.windsurf/rules/w.md", true)]
    #[case::rule_windsurf_nested("rule\0.windsurf/rules/s/w.md", false)]
    #[case::rule_user("rule\0~/.claude/rules/go.md", true)]
    #[case::rule_user_cursor("rule\0~/.cursor/rules/go.mdc", false)]
    #[case::rule_not_in_rules_dir("rule\0pkg/x.md", false)]
    #[case::rule_bare_suffix("rule\0.claude/rules/.md", false)]
    #[case::rule_dotdot("rule\0a/../.claude/rules/x.md", false)]
    #[case::rule_half_name("rule\0x.claude/rules/y.md", false)]
    #[case::no_slot("project\0a", false)]
    #[case::empty_slot("project\0a\0", false)]
    #[case::empty_dir("project\0\0base", false)]
    #[case::absolute_dir("project\0/a\0base", false)]
    #[case::dotdot_dir("project\0a/../b\0base", false)]
    #[case::dot_component("project\0./a\0base", false)]
    #[case::trailing_slash("project\0a/\0base", false)]
    #[case::extra_part("project\0a\0base\0x", false)]
    #[case::slot_with_slash("project\0a\0x/y", false)]
    #[case::wrong_kind("workspace\0a\0base", false)]
    #[case::empty("", false)]
    fn parse_accepts_only_spec_shapes(#[case] s: &str, #[case] ok: bool) {
        // R-STATE-2
        let parsed = ScopeKey::parse(s);
        assert_eq!(parsed.is_some(), ok, "{s:?}");
        if let Some(k) = parsed {
            assert_eq!(k.as_str(), s);
        }
    }

    #[rstest]
    #[case::user("user")]
    #[case::user_global("user-global")]
    #[case::agents("AGENTS.md")]
    fn project_dir_never_collides_with_user_global(#[case] dir: &str) {
        // R-STATE-2
        for slot in ["AGENTS.md", SLOT_BASE, SLOT_LOCAL] {
            let k = ScopeKey::project(dir, slot);
            assert_ne!(k, ScopeKey::user_global());
            assert!(!k.is_user_global());
            assert_eq!(k.dir(), Some(dir));
        }
    }

    #[test]
    fn empty_dir_means_root() {
        assert_eq!(
            ScopeKey::project("", SLOT_BASE),
            ScopeKey::project(".", SLOT_BASE)
        );
        assert_eq!(
            ScopeKey::try_project("", SLOT_BASE),
            Some(ScopeKey::project(".", SLOT_BASE))
        );
        assert_eq!(ScopeKey::try_project("a//b", SLOT_BASE), None);
        assert_eq!(ScopeKey::try_project("a", ""), None);
    }

    #[test]
    fn kind_of_user_global_has_no_dir_or_slot() {
        let k = ScopeKey::user_global();
        assert_eq!(k.as_str(), "user\0AGENTS.md");
        assert_eq!((k.dir(), k.slot()), (None, None));
    }

    fn fw() -> Config {
        Config::with_max_bytes(1)
    }

    fn ad() -> Config {
        let mut c = Config::with_max_bytes(1);
        c.candidate_policy = CandidatePolicy::AllDistinct;
        c
    }

    fn p(dir: &str, slot: &str) -> ScopeKey {
        ScopeKey::project(dir, slot)
    }

    fn uf(path: &str) -> ScopeKey {
        ScopeKey::user_file(path).unwrap()
    }

    fn an(dir: &str, name: &str) -> ScopeKey {
        ScopeKey::ancestor(dir, name).unwrap()
    }

    fn r(path: &str) -> ScopeKey {
        ScopeKey::rule(path).unwrap()
    }

    fn claude() -> Config {
        let mut c = Config::preset(crate::Preset::Claude);
        c.user_instruction_files.push("~/b.md".into());
        c
    }

    fn claude_ad() -> Config {
        let mut c = claude();
        c.candidate_policy = CandidatePolicy::AllDistinct;
        c
    }

    // R-REN-3: each case asserts a < b.
    #[rstest]
    #[case::user_before_root(ScopeKey::user_global(), p(".", "base"), fw())]
    #[case::user_before_deep(ScopeKey::user_global(), p("a/b/c", "base"), fw())]
    #[case::depth_before_name(p("z", "base"), p("a/b", "base"), fw())]
    #[case::root_before_child(p(".", "local"), p("a", "base"), fw())]
    #[case::component_order(p("a/b", "base"), p("a-c/a", "base"), fw())]
    #[case::byte_order_upper_first(p("B", "base"), p("a", "base"), fw())]
    #[case::base_before_local(p("a", "base"), p("a", "local"), fw())]
    #[case::known_before_unknown_fw(p("a", "local"), p("a", "AGENTS.md"), fw())]
    #[case::unknown_by_name(p("a", "X"), p("a", "Y"), fw())]
    #[case::candidate_position(p(".", "CLAUDE.md"), p(".", "AGENTS.local.md"), ad())]
    // R-RULE-8: rules after the directory's candidates (base, claude-dir,
    // local), before deeper directories; formats in fixed order; byte order
    // of the path within the rules directory (`a.md` before `a/z.md`).
    #[case::rule_after_local(p("a", "local"), r("a/.claude/rules/x.md"), fw())]
    #[case::rule_after_claude_dir(p(".", "claude-dir"), r(".claude/rules/x.md"), claude())]
    #[case::rule_after_unknown_slot(p(".", "ZZZ"), r(".cursor/rules/a.mdc"), fw())]
    #[case::rule_before_deeper_dir(r("a/.windsurf/rules/z.md"), p("a/b", "base"), fw())]
    #[case::rule_before_sibling_dir(r("a/.claude/rules/z.md"), p("b", "base"), fw())]
    #[case::rule_formats_order(r(".claude/rules/z.md"), r(".windsurf/rules/a.md"), fw())]
    #[case::rule_claude_before_cursor(r(".claude/rules/z.md"), r(".cursor/rules/a.mdc"), fw())]
    #[case::rule_cursor_before_copilot(
        r(".cursor/rules/z.mdc"),
        r(".github/copilot-instructions.md"),
        fw()
    )]
    #[case::rule_copilot_root_first(
        r(".github/copilot-instructions.md"),
        r(".github/instructions/a.instructions.md"),
        fw()
    )]
    #[case::rule_file_before_subdir(r(".claude/rules/a.md"), r(".claude/rules/a/z.md"), fw())]
    #[case::rule_byte_order(r(".claude/rules/B.md"), r(".claude/rules/a.md"), fw())]
    #[case::user_rule_after_user_files(uf("~/b.md"), r("~/.claude/rules/a.md"), claude())]
    #[case::user_rule_before_ancestor(r("~/.claude/rules/z.md"), an("/", "CLAUDE.md"), claude())]
    #[case::user_rule_before_project(r("~/.claude/rules/z.md"), p(".", "base"), claude())]
    #[case::base_list_first(p(".", "AGENTS.md"), p(".", "CLAUDE.md"), ad())]
    #[case::known_before_unknown_ad(p(".", "CLAUDE.local.md"), p(".", "base"), ad())]
    #[case::user_file_after_user_global(
        ScopeKey::user_global(),
        uf("~/.claude/CLAUDE.md"),
        claude()
    )]
    #[case::user_file_before_root(uf("~/.claude/CLAUDE.md"), p(".", "base"), claude())]
    #[case::user_files_configured_order(uf("~/.claude/CLAUDE.md"), uf("~/b.md"), claude())]
    #[case::ancestor_after_user_file(uf("~/b.md"), an("/", "CLAUDE.md"), claude())]
    #[case::ancestor_before_root(an("/x/y/z", "CLAUDE.local.md"), p(".", "base"), claude())]
    #[case::broadest_ancestor_first(an("/x", "CLAUDE.local.md"), an("/x/y", "CLAUDE.md"), claude())]
    #[case::slash_first(an("/", "CLAUDE.local.md"), an("/a", "CLAUDE.md"), claude())]
    #[case::ancestor_names_in_configured_order(
        an("/x", "CLAUDE.md"),
        an("/x", ".claude/CLAUDE.md"),
        claude()
    )]
    #[case::ancestor_claude_dir_before_local(
        an("/x", ".claude/CLAUDE.md"),
        an("/x", "CLAUDE.local.md"),
        claude()
    )]
    #[case::ancestor_unknown_name_last(an("/x", "CLAUDE.local.md"), an("/x", "A.md"), claude())]
    #[case::ancestor_same_depth_by_component(
        an("/a/z", "CLAUDE.md"),
        an("/a-b/a", "CLAUDE.md"),
        claude()
    )]
    #[case::claude_dir_after_base(p(".", "base"), p(".", SLOT_CLAUDE_DIR), claude())]
    #[case::claude_dir_before_local(p(".", SLOT_CLAUDE_DIR), p(".", "local"), claude())]
    #[case::claude_dir_after_claude_md_ad(
        p(".", "CLAUDE.md"),
        p(".", SLOT_CLAUDE_DIR),
        claude_ad()
    )]
    #[case::claude_dir_before_fallback_ad(
        p(".", SLOT_CLAUDE_DIR),
        p(".", "AGENTS.md"),
        claude_ad()
    )]
    #[case::fallback_before_local_ad(p(".", "AGENTS.md"), p(".", "CLAUDE.local.md"), claude_ad())]
    fn section_order_cases(#[case] a: ScopeKey, #[case] b: ScopeKey, #[case] config: Config) {
        assert_eq!(section_order(&a, &b, &config), Ordering::Less);
        assert_eq!(section_order(&b, &a, &config), Ordering::Greater);
        assert_eq!(section_order(&a, &a, &config), Ordering::Equal);
    }

    #[test]
    fn configured_order_has_no_hidden_priority() {
        // R-CFG-4: AGENTS.md has no hidden priority.
        let mut c = ad();
        c.instruction_file_candidates = vec!["CLAUDE.md".into(), "AGENTS.md".into()];
        assert_eq!(
            section_order(&p(".", "CLAUDE.md"), &p(".", "AGENTS.md"), &c),
            Ordering::Less
        );
    }

    fn arb_key() -> impl Strategy<Value = ScopeKey> {
        let comp = prop_oneof![Just("a"), Just("b"), Just("a-c"), Just("B"), Just("user")];
        let dir = prop::collection::vec(comp, 0..4).prop_map(|v| {
            if v.is_empty() {
                ".".to_owned()
            } else {
                v.join("/")
            }
        });
        let slot = prop_oneof![
            Just("base"),
            Just("local"),
            Just("AGENTS.md"),
            Just("CLAUDE.md"),
            Just("AGENTS.local.md"),
            Just("zz"),
            Just(SLOT_CLAUDE_DIR),
        ];
        prop_oneof![
            1 => Just(ScopeKey::user_global()),
            1 => prop_oneof![Just("~/.claude/CLAUDE.md"), Just("~/b.md"), Just("~/z")]
                .prop_map(|p| ScopeKey::user_file(p).unwrap()),
            2 => (
                prop_oneof![Just("/"), Just("/a"), Just("/a/b"), Just("/a-c"), Just("/B/a")],
                prop_oneof![Just("CLAUDE.md"), Just(".claude/CLAUDE.md"), Just("CLAUDE.local.md"), Just("zz")],
            )
                .prop_map(|(d, n)| ScopeKey::ancestor(d, n).unwrap()),
            6 => (dir.clone(), slot).prop_map(|(d, s)| ScopeKey::project(&d, s)),
            3 => (
                dir,
                prop_oneof![
                    Just(".claude/rules/a.md"),
                    Just(".claude/rules/a/z.md"),
                    Just(".cursor/rules/b.mdc"),
                    Just(".github/instructions/c.instructions.md"),
                    Just(".windsurf/rules/d.md"),
                ],
            )
                .prop_map(|(d, rel)| {
                    let path = if d == "." { rel.to_owned() } else { format!("{d}/{rel}") };
                    ScopeKey::rule(&path).unwrap()
                }),
            1 => prop_oneof![Just("~/.claude/rules/a.md"), Just("~/.claude/rules/b/c.md")]
                .prop_map(|p| ScopeKey::rule(p).unwrap()),
        ]
    }

    proptest! {
        #[test]
        fn section_order_is_a_total_order(
            a in arb_key(), b in arb_key(), c in arb_key(), all_distinct in any::<bool>()
        ) {
            let config = if all_distinct { claude_ad() } else { claude() };
            let ord = |x: &ScopeKey, y: &ScopeKey| section_order(x, y, &config);
            // Antisymmetry and consistency with Eq.
            prop_assert_eq!(ord(&a, &b), ord(&b, &a).reverse());
            prop_assert_eq!(ord(&a, &b) == Ordering::Equal, a == b);
            // Transitivity.
            if ord(&a, &b) != Ordering::Greater && ord(&b, &c) != Ordering::Greater {
                prop_assert_ne!(ord(&a, &c), Ordering::Greater);
            }
        }

        #[test]
        fn sorting_is_consistent_with_order(
            mut keys in prop::collection::vec(arb_key(), 0..12), all_distinct in any::<bool>()
        ) {
            let config = if all_distinct { ad() } else { fw() };
            keys.sort_by(|x, y| section_order(x, y, &config));
            for w in keys.windows(2) {
                prop_assert_ne!(section_order(&w[0], &w[1], &config), Ordering::Greater);
                // Depth never decreases; user-global only at the front.
                let depth = |k: &ScopeKey| k.dir().map(|d| components(d).count());
                prop_assert!(depth(&w[0]) <= depth(&w[1]));
            }
        }

        #[test]
        fn parse_round_trips_and_never_panics(s in "(user|project|ancestor)?\0?[a-z./]{0,6}\0?[a-z./]{0,4}") {
            if let Some(k) = ScopeKey::parse(&s) {
                prop_assert_eq!(k.as_str(), s.as_str());
                prop_assert_eq!(ScopeKey::parse(k.as_str()), Some(k.clone()));
            }
        }
    }
}
