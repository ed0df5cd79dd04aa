//! `hook install --rules` (R-RULE-7): the rule formats the hook reads, as
//! `rule_formats` in the hook's `config.json` (`$DSH_HOME/hooks/<agent>/`,
//! the overlay the hook reads at every session start), with a record of
//! what was there so uninstall takes out only what install wrote.

use std::path::{Path, PathBuf};

use dsh_instructions_hooks::{Agent, config::CONFIG_FILE_NAME, state::config::RuleFormat};
use serde_json::Value;

use crate::error::InstallError;
use crate::hooks::root_mut;
use crate::install_record::NativeRecord;

/// The `config.json` key install writes.
pub(crate) const RULES_KEY: &str = "rule_formats";

/// Told when the Claude Code hook is installed with formats that leave out
/// `claude`: Claude's own loading of them stays off.
pub(crate) const CLAUDE_RULES_NOTE: &str = "--rules leaves out claude: Claude Code's `.claude/rules` \
and `~/.claude/rules` reach the model from neither Claude (its excludes name them) nor the hook";

/// The hook's `config.json` of `agent` under the DSH home.
pub(crate) fn hook_config(dsh_home: &Path, agent: Agent) -> PathBuf {
    dsh_home
        .join("hooks")
        .join(agent.as_str())
        .join(CONFIG_FILE_NAME)
}

/// Sets `rule_formats` to `formats` (in the order given, each once) in
/// the hook's configuration document. `prior` is the record of an earlier
/// install, kept when present, so uninstall gives back what was there
/// before the first.
pub(crate) fn set_rule_formats(
    doc: &mut Value,
    path: &Path,
    formats: &[RuleFormat],
    prior: Option<&NativeRecord>,
) -> Result<NativeRecord, InstallError> {
    let root = root_mut(doc, path)?;
    let cur = root.get(RULES_KEY).cloned();
    let mut names: Vec<Value> = Vec::with_capacity(formats.len());
    for f in formats {
        let v = Value::String(f.as_str().to_owned());
        if !names.contains(&v) {
            names.push(v);
        }
    }
    let set = Value::Array(names);
    if cur.as_ref() != Some(&set) {
        root.insert(RULES_KEY.to_owned(), set.clone());
    }
    Ok(NativeRecord::of_set(RULES_KEY, cur, set, false, prior))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::json_restore;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case(json!({}), json!({}))]
    #[case(json!({"max_bytes": 8000}), json!({"max_bytes": 8000}))]
    #[case(json!({"rule_formats": ["windsurf"]}), json!({"rule_formats": ["windsurf"]}))]
    fn set_then_restore_gives_back_the_document(#[case] original: Value, #[case] back: Value) {
        let mut doc = original.clone();
        let formats = [RuleFormat::Cursor, RuleFormat::Claude, RuleFormat::Cursor];
        let rec = set_rule_formats(&mut doc, Path::new("c"), &formats, None).expect("object");
        assert_eq!(doc[RULES_KEY], json!(["cursor", "claude"]));
        let note = json_restore(&mut doc, Path::new("c"), &rec).expect("object");
        assert_eq!(note, None);
        assert_eq!(doc, back);
    }

    #[test]
    fn a_second_install_keeps_the_first_prior() {
        let mut doc = json!({"rule_formats": ["copilot"]});
        let first = set_rule_formats(&mut doc, Path::new("c"), &[RuleFormat::Cursor], None)
            .expect("object");
        let second = set_rule_formats(
            &mut doc,
            Path::new("c"),
            &[RuleFormat::Windsurf],
            Some(&first),
        )
        .expect("object");
        assert_eq!(second.prior, json!(["copilot"]));
        assert_eq!(second.set, json!(["windsurf"]));
    }

    #[test]
    fn a_config_that_is_no_object_is_an_error_naming_it() {
        let mut doc = json!([1]);
        let e = set_rule_formats(&mut doc, Path::new("/h/config.json"), &[], None).unwrap_err();
        assert!(e.to_string().contains("/h/config.json"), "{e}");
    }
}
