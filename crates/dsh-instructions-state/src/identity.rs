//! Baseline identity (R-STATE-4).

use std::fmt::Write as _;

use crate::config::{Config, ContentTransform, DEFAULT_MAX_IMPORT_DEPTH};
use crate::source::SCHEMA;

/// A JSON string literal (serde_json does the escaping).
fn json_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn json_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| json_str(s)).collect();
    format!("[{}]", inner.join(","))
}

/// The baseline identity of R-STATE-4: canonical JSON with a fixed key order
/// (`root`, `markers`, `max_bytes`, `max_source_bytes`,
/// `instruction_file_candidates`, `local_instruction_file_candidates`,
/// `policy`, `schema`), no white space. Two compositions whose identities
/// differ must not share a baseline (R-RT-7); `dsh_home`, `touch_tools` and
/// `shell_tools` are deliberately not part of it (they decide which tool
/// calls touch, never what a baseline holds; decision 0015). With imports on (R-IMP-4) an
/// `"imports":true` member follows `policy`; with them off the text is
/// byte-identical to schema 1's, so sessions recorded before imports existed
/// keep their baseline.
///
/// ```
/// use dsh_instructions_state::{Config, identity::baseline_identity};
/// let id = baseline_identity(&Config::with_max_bytes(65_536), "..");
/// assert_eq!(
///     id,
///     r#"{"root":"..","markers":[".git"],"max_bytes":65536,"max_source_bytes":1048576,"#.to_owned()
///         + r#""instruction_file_candidates":["AGENTS.md","CLAUDE.md"],"#
///         + r#""local_instruction_file_candidates":["AGENTS.local.md","CLAUDE.local.md"],"#
///         + r#""policy":"first-wins","schema":1}"#
/// );
/// ```
pub fn baseline_identity(config: &Config, root_relative_to_cwd: &str) -> String {
    let mut s = String::with_capacity(256);
    // Writing to a String cannot fail.
    let _ = write!(
        s,
        r#"{{"root":{},"markers":{},"max_bytes":{},"max_source_bytes":{},"instruction_file_candidates":{},"local_instruction_file_candidates":{},"policy":{},{}"schema":{}}}"#,
        json_str(root_relative_to_cwd),
        json_list(config.project_root_markers()),
        config.max_bytes(),
        config.max_source_bytes(),
        json_list(config.instruction_file_candidates()),
        json_list(config.local_instruction_file_candidates()),
        json_str(config.candidate_policy().as_str()),
        extra_members(config),
        SCHEMA,
    );
    s
}

/// The identity members after `policy` that exist only when a field differs
/// from its default, so that a configuration without them keeps the text
/// (and the baseline) of the sessions recorded before they existed:
/// `imports`, then `max_import_depth` (only with imports on), `claude_dir`,
/// `fallback_instruction_file_candidates` with `fallback_scope` (only when
/// the list is not empty), `content_transform`, `user_instruction_files`,
/// `ancestor_instruction_files`, `rule_formats` (R-RULE-6: only when not
/// empty).
fn extra_members(config: &Config) -> String {
    let mut s = String::new();
    if config.imports() {
        s.push_str(r#""imports":true,"#);
        if config.max_import_depth() != DEFAULT_MAX_IMPORT_DEPTH {
            let _ = write!(s, r#""max_import_depth":{},"#, config.max_import_depth());
        }
    }
    if config.claude_dir() {
        s.push_str(r#""claude_dir":true,"#);
    }
    if !config.fallback_instruction_file_candidates().is_empty() {
        let _ = write!(
            s,
            r#""fallback_instruction_file_candidates":{},"fallback_scope":{},"#,
            json_list(config.fallback_instruction_file_candidates()),
            json_str(config.fallback_scope().as_str()),
        );
    }
    if config.content_transform() != ContentTransform::None {
        let _ = write!(
            s,
            r#""content_transform":{},"#,
            json_str(config.content_transform().as_str())
        );
    }
    if !config.user_instruction_files().is_empty() {
        let _ = write!(
            s,
            r#""user_instruction_files":{},"#,
            json_list(config.user_instruction_files())
        );
    }
    if !config.ancestor_instruction_files().is_empty() {
        let _ = write!(
            s,
            r#""ancestor_instruction_files":{},"#,
            json_list(config.ancestor_instruction_files())
        );
    }
    if !config.rule_formats().is_empty() {
        let names: Vec<String> = config
            .rule_formats()
            .iter()
            .map(|f| f.as_str().to_owned())
            .collect();
        let _ = write!(s, r#""rule_formats":{},"#, json_list(&names));
    }
    s
}

/// Lexical components of an absolute `/` path (`.` dropped, `..` pops).
fn normalized(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The project root relative to the cwd, `/`-separated, as R-STATE-4 wants
/// it: `.` when equal, `..`, `../..`, … when the root is an ancestor. Both are
/// absolute `/` paths, compared lexically. Should the root not be an ancestor
/// (a caller error), the general relative path (`../x`) is returned rather
/// than a panic.
///
/// ```
/// use dsh_instructions_state::identity::root_relative_to_cwd;
/// assert_eq!(root_relative_to_cwd("/work/repo", "/work/repo"), ".");
/// assert_eq!(root_relative_to_cwd("/work/repo", "/work/repo/pkg/a"), "../..");
/// assert_eq!(root_relative_to_cwd("/", "/a"), "..");
/// ```
pub fn root_relative_to_cwd(root: &str, cwd: &str) -> String {
    let (root, cwd) = (normalized(root), normalized(cwd));
    let common = root.iter().zip(&cwd).take_while(|(a, b)| a == b).count();
    let parts: Vec<&str> = std::iter::repeat_n("..", cwd.len() - common)
        .chain(root[common..].iter().copied())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CandidatePolicy, Preset};
    use dsh_instructions_render::Budget;
    use rstest::rstest;

    #[rstest]
    #[case::equal("/w/r", "/w/r", ".")]
    #[case::one_up("/w/r", "/w/r/a", "..")]
    #[case::three_up("/w/r", "/w/r/a/b/c", "../../..")]
    #[case::fs_root("/", "/a/b", "../..")]
    #[case::both_fs_root("/", "/", ".")]
    #[case::trailing_slashes("/w/r/", "/w/r/a/", "..")]
    #[case::dots("/w/./r", "/w/r/a/../b", "..")]
    #[case::not_ancestor("/w/x", "/w/r/a", "../../x")]
    fn relative_root(#[case] root: &str, #[case] cwd: &str, #[case] expected: &str) {
        // R-STATE-4
        assert_eq!(root_relative_to_cwd(root, cwd), expected);
    }

    #[test]
    fn identity_is_valid_json_with_fixed_key_order() {
        let mut c = Config::preset(Preset::Codex);
        c.project_root_markers = vec![".git".into(), "we\"ird\\".into()];
        let id = baseline_identity(&c, "../..");
        let v: serde_json::Value = serde_json::from_str(&id).unwrap();
        assert_eq!(v["markers"][1], "we\"ird\\");
        assert_eq!(v["max_bytes"], 32_768);
        assert_eq!(
            v["local_instruction_file_candidates"],
            serde_json::json!([])
        );
        let keys = [
            "\"root\"",
            "\"markers\"",
            "\"max_bytes\"",
            "\"max_source_bytes\"",
            "\"instruction_file_candidates\"",
            "\"local_instruction_file_candidates\"",
            "\"policy\"",
            "\"schema\"",
        ];
        let positions: Vec<usize> = keys.iter().map(|k| id.find(k).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{id}");
    }

    #[test]
    fn imports_off_keeps_the_schema_1_text_and_on_adds_one_member() {
        // R-IMP-4: sessions recorded before imports keep a compatible baseline.
        let off = Config::with_max_bytes(65_536);
        let schema1 = r#"{"root":".","markers":[".git"],"max_bytes":65536,"max_source_bytes":1048576,"instruction_file_candidates":["AGENTS.md","CLAUDE.md"],"local_instruction_file_candidates":["AGENTS.local.md","CLAUDE.local.md"],"policy":"first-wins","schema":1}"#;
        assert_eq!(baseline_identity(&off, "."), schema1);
        let mut on = off.clone();
        on.imports = true;
        let id = baseline_identity(&on, ".");
        assert_eq!(
            id,
            schema1.replace(r#""schema":1"#, r#""imports":true,"schema":1"#)
        );
        let v: serde_json::Value = serde_json::from_str(&id).unwrap();
        assert_eq!(v["imports"], true);
    }

    #[test]
    fn every_identity_field_matters_and_others_do_not() {
        // R-STATE-4: each listed input changes the identity.
        let base = Config::with_max_bytes(65_536);
        let id = |c: &Config, root: &str| baseline_identity(c, root);
        let reference = id(&base, ".");
        let mut variants = Vec::new();
        variants.push(id(&base, ".."));
        let mut c = base.clone();
        c.project_root_markers.push(".hg".into());
        variants.push(id(&c, "."));
        let mut c = base.clone();
        c.max_bytes = Budget::bytes(1);
        variants.push(id(&c, "."));
        let mut c = base.clone();
        c.max_source_bytes = 1;
        variants.push(id(&c, "."));
        let mut c = base.clone();
        c.instruction_file_candidates.reverse();
        variants.push(id(&c, "."));
        let mut c = base.clone();
        c.local_instruction_file_candidates.clear();
        variants.push(id(&c, "."));
        let mut c = base.clone();
        c.candidate_policy = CandidatePolicy::AllDistinct;
        variants.push(id(&c, "."));
        assert!(variants.iter().all(|v| *v != reference));

        let mut c = base.clone();
        c.imports = true;
        variants.push(id(&c, "."));

        // The Claude fields: each at a non-default value changes it.
        let mut claude_variants = Vec::new();
        let mut c = base.clone();
        c.claude_dir = true;
        claude_variants.push(id(&c, "."));
        let mut c = base.clone();
        c.fallback_instruction_file_candidates = vec!["AGENTS.md".into()];
        claude_variants.push(id(&c, "."));
        c.fallback_scope = crate::config::FallbackScope::Path;
        claude_variants.push(id(&c, "."));
        let mut c = base.clone();
        c.content_transform = ContentTransform::Claude;
        claude_variants.push(id(&c, "."));
        let mut c = base.clone();
        c.user_instruction_files = vec!["~/.claude/CLAUDE.md".into()];
        claude_variants.push(id(&c, "."));
        let mut c = base.clone();
        c.ancestor_instruction_files = vec!["CLAUDE.md".into()];
        claude_variants.push(id(&c, "."));
        c.ancestor_instruction_files
            .push(".claude/CLAUDE.md".into());
        claude_variants.push(id(&c, "."));
        let mut c = base.clone();
        c.imports = true;
        c.max_import_depth = 4;
        claude_variants.push(id(&c, "."));
        // R-RULE-6: a non-empty rule_formats changes it, each list its own.
        let mut c = base.clone();
        c.rule_formats = vec![crate::config::RuleFormat::Claude];
        claude_variants.push(id(&c, "."));
        c.rule_formats.push(crate::config::RuleFormat::Cursor);
        claude_variants.push(id(&c, "."));
        let unique: std::collections::BTreeSet<&String> =
            variants.iter().chain(&claude_variants).collect();
        assert_eq!(unique.len(), variants.len() + claude_variants.len());
        assert!(!unique.contains(&reference));
        for v in &claude_variants {
            let _: serde_json::Value = serde_json::from_str(v).unwrap();
        }

        // At their defaults they leave it alone; the depth counts only
        // with imports on, the scope only with a fallback list.
        let mut c = base.clone();
        c.max_import_depth = 4;
        c.fallback_scope = crate::config::FallbackScope::Path;
        assert_eq!(id(&c, "."), reference);

        // Not part of the identity: home, touch tools and shell tools (so
        // turning shell touches on keeps every recorded baseline, 0015).
        let mut c = base.clone();
        c.dsh_home = Some("/elsewhere".into());
        c.touch_tools.clear();
        c.shell_tools.insert("Bash".into(), vec!["command".into()]);
        assert_eq!(id(&c, "."), reference);
    }

    #[test]
    fn empty_rule_formats_keep_the_recorded_identity_text() {
        // R-RULE-6: the identity text of a session recorded before rules
        // existed (the defaults, and the claude preset without rules) is
        // byte-for-byte what it was, so its baseline stays compatible.
        let schema1 = r#"{"root":".","markers":[".git"],"max_bytes":65536,"max_source_bytes":1048576,"instruction_file_candidates":["AGENTS.md","CLAUDE.md"],"local_instruction_file_candidates":["AGENTS.local.md","CLAUDE.local.md"],"policy":"first-wins","schema":1}"#;
        let c = Config::with_max_bytes(65_536);
        assert!(c.rule_formats().is_empty());
        assert_eq!(baseline_identity(&c, "."), schema1);
        let mut claude = Config::preset(Preset::Claude);
        let with_rules = baseline_identity(&claude, ".");
        assert!(
            with_rules.ends_with(r#""rule_formats":["claude"],"schema":1}"#),
            "{with_rules}"
        );
        claude.rule_formats.clear();
        assert_eq!(
            baseline_identity(&claude, "."),
            with_rules.replace(r#""rule_formats":["claude"],"#, "")
        );
    }
}
