//! `$DSH_HOME/settings.yaml` and the flag overlay: flags win over the file,
//! the file over presets and defaults (SPEC §3).

use camino::Utf8Path;
use dsh_instructions_state::{
    ConfigInput, Preset, StateError,
    config::{CandidatePolicy, NumberInput, ResolvedConfig},
};
use serde::Deserialize;

use crate::args::ConfigArgs;
use crate::error::CliError;

/// Name of the settings file inside the DSH home.
pub(crate) const SETTINGS_FILE: &str = "settings.yaml";

/// The section of the settings file this tool reads.
pub(crate) const SECTION: &str = "agent_instructions";

/// The CLI's budget when neither a flag, the file nor a preset gives one
/// (R-CLI-1).
pub(crate) const DEFAULT_MAX_BYTES: i64 = 65_536;

/// The settings file: other products may keep their own sections in it, so
/// only ours is read (and checked strictly).
#[derive(Debug, Default, Deserialize)]
struct SettingsFile {
    #[serde(default)]
    agent_instructions: Option<ConfigInput>,
}

/// The `agent_instructions` section of a settings file plus its text (kept to
/// point validation errors at a line).
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// Where the section came from (`None`: no file).
    pub path: Option<String>,
    /// The section, if present.
    pub input: Option<ConfigInput>,
    text: String,
}

impl Settings {
    /// The hook adapter's configuration for `agent` in place of the file
    /// (`--agent`, R-HOOK-8): the same preset and `config.json` the hook
    /// mounts its sessions with, so `show`/`explain`/`check` see what the
    /// hook delivers.
    pub(crate) fn of_hook(
        agent: dsh_instructions_hooks::Agent,
        home: &camino::Utf8Path,
    ) -> Result<Self, CliError> {
        let dir = home.join("hooks").join(agent.as_str());
        let config = dsh_instructions_hooks::config::load_config(agent, &dir)
            .map_err(|e| CliError::new(format!("--agent {agent}: {e}")))?;
        Ok(Self {
            path: Some(
                dir.join(dsh_instructions_hooks::config::CONFIG_FILE_NAME)
                    .into_string(),
            ),
            input: Some(config.input),
            text: String::new(),
        })
    }
}

/// Reads `path` when it exists. A missing file is no settings; anything
/// unreadable or invalid is an error naming the file, line and key.
pub(crate) fn load(path: &Utf8Path) -> Result<Settings, CliError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
        Err(e) => return Err(CliError::new(format!("{path}: cannot read: {e}"))),
    };
    let text =
        String::from_utf8(bytes).map_err(|_| CliError::new(format!("{path}: not valid UTF-8")))?;
    let input = parse(&text).map_err(|e| CliError::new(format!("{path}:{e}")))?;
    Ok(Settings {
        path: Some(path.to_string()),
        input,
        text,
    })
}

/// Parses settings text; `Err` is `line:column: message` (or `1: message`
/// when the parser knows no position).
fn parse(text: &str) -> Result<Option<ConfigInput>, String> {
    // A file of only comments or blanks is an empty document, not an error.
    let meaningful = text
        .lines()
        .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    if !meaningful {
        return Ok(None);
    }
    match serde_saphyr::from_str::<Option<SettingsFile>>(text) {
        Ok(file) => Ok(file.and_then(|f| f.agent_instructions)),
        Err(e) => {
            let inner = e.without_snippet();
            let message = inner
                .to_string()
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid YAML")
                .trim()
                .to_owned();
            Err(match inner.location() {
                Some(loc) => format!("{}:{}: {message}", loc.line(), loc.column()),
                None => format!("1: {message}"),
            })
        }
    }
}

impl Settings {
    /// The 1-based line of `key:` inside our section, for validation errors
    /// that serde cannot place (R-CLI-5: bad config names the field).
    fn line_of(&self, key: &str) -> Option<usize> {
        let mut in_section = false;
        for (i, line) in self.text.lines().enumerate() {
            let indented = line.starts_with([' ', '\t']);
            let trimmed = line.trim_start();
            if !indented && !trimmed.is_empty() && !trimmed.starts_with('#') {
                in_section = trimmed.starts_with(&format!("{SECTION}:"));
                continue;
            }
            if in_section && trimmed.starts_with(&format!("{key}:")) {
                return Some(i + 1);
            }
        }
        None
    }

    /// Describes a validation error of a field that came from this file.
    fn located(&self, e: &StateError) -> String {
        let path = self.path.as_deref().unwrap_or(SETTINGS_FILE);
        match self.line_of(e.field()) {
            Some(line) => format!("{path}:{line}: {SECTION}.{}: {e}", e.field()),
            None => format!("{path}: {SECTION}: {e}"),
        }
    }
}

fn split_list(value: &str) -> Vec<String> {
    // `--local-candidates ""` disables overlays (R-CFG-4: an empty list).
    if value.is_empty() {
        Vec::new()
    } else {
        value.split(',').map(str::to_owned).collect()
    }
}

/// Overlays the flags on the file's section (flags win), then validates.
/// Errors name the flag or the file line and key.
pub(crate) fn resolve(settings: &Settings, flags: &ConfigArgs) -> Result<ResolvedConfig, CliError> {
    let file = settings.input.clone().unwrap_or_default();
    // Validate what the file says on its own first, so an error there is
    // reported against the file even when a flag would override it.
    if settings.input.is_some()
        && let Err(e) = with_default_budget(file.clone()).resolve()
    {
        return Err(CliError::new(settings.located(&e)));
    }
    let merged = overlay(file, flags)?;
    resolve_input(merged)
}

/// The configuration input a command mounts with: the file's section (if
/// any) with the flags laid over it and the CLI's default budget.
pub(crate) fn merged_input(
    settings: &Settings,
    flags: &ConfigArgs,
) -> Result<ConfigInput, CliError> {
    Ok(with_default_budget(overlay(
        settings.input.clone().unwrap_or_default(),
        flags,
    )?))
}

/// A session's stored input with the flags given now laid over it
/// (R-CLI-3: a session keeps its configuration; later flags override it).
pub(crate) fn session_input(
    stored: ConfigInput,
    flags: &ConfigArgs,
) -> Result<ConfigInput, CliError> {
    overlay(stored, flags).map(with_default_budget)
}

/// Validates an input, naming the flag of a bad field.
pub(crate) fn resolve_input(input: ConfigInput) -> Result<ResolvedConfig, CliError> {
    with_default_budget(input)
        .resolve()
        .map_err(|e| flag_error(&e))
}

/// A validation error of a field a flag sets, named by that flag.
pub(crate) fn flag_error(e: &StateError) -> CliError {
    CliError::new(format!("--{}: {e}", flag_of(e.field())))
}

/// The flags of `flags` that set a configuration field, as written on the
/// command line (for the note that they override a session's settings).
pub(crate) fn given_flags(flags: &ConfigArgs) -> Vec<&'static str> {
    [
        (flags.max_bytes.is_some(), "--max-bytes"),
        (flags.max_source_bytes.is_some(), "--max-source-bytes"),
        (flags.preset.is_some(), "--preset"),
        (flags.policy.is_some(), "--policy"),
        (flags.candidates.is_some(), "--candidates"),
        (flags.local_candidates.is_some(), "--local-candidates"),
        (flags.markers.is_some(), "--markers"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect()
}

/// The budget default of the CLI when nothing else gives one.
fn with_default_budget(mut input: ConfigInput) -> ConfigInput {
    if input.max_bytes.is_none() && input.preset.is_none() {
        input.max_bytes = Some(NumberInput::Int(DEFAULT_MAX_BYTES));
    }
    input
}

fn flag_of(field: &str) -> String {
    match field {
        "candidate_policy" => "policy".to_owned(),
        "instruction_file_candidates" => "candidates".to_owned(),
        "local_instruction_file_candidates" => "local-candidates".to_owned(),
        "project_root_markers" => "markers".to_owned(),
        "dsh_home" => "home".to_owned(),
        "rule_formats" => "rules".to_owned(),
        other => other.replace('_', "-"),
    }
}

/// The flags as a configuration layer, laid over `input` with the state
/// crate's one overlay ([`ConfigInput::overlay`]: a given flag replaces the
/// field; `--preset` resets no field of the file, decision 0026).
fn overlay(input: ConfigInput, flags: &ConfigArgs) -> Result<ConfigInput, CliError> {
    Ok(input.overlay(flags_input(flags)?))
}

/// The configuration fields the flags set.
fn flags_input(flags: &ConfigArgs) -> Result<ConfigInput, CliError> {
    let mut input = ConfigInput::default();
    if let Some(n) = flags.max_bytes {
        input.max_bytes = Some(NumberInput::Int(n));
    }
    if let Some(n) = flags.max_source_bytes {
        input.max_source_bytes = Some(NumberInput::Int(n));
    }
    if let Some(p) = &flags.preset {
        input.preset = Some(
            p.parse::<Preset>()
                .map_err(|e| CliError::new(format!("--preset: {e}")))?,
        );
    }
    if let Some(p) = &flags.policy {
        input.candidate_policy = Some(
            p.parse::<CandidatePolicy>()
                .map_err(|e| CliError::new(format!("--policy: {e}")))?,
        );
    }
    if let Some(v) = &flags.candidates {
        input.instruction_file_candidates = Some(split_list(v));
    }
    if let Some(v) = &flags.local_candidates {
        input.local_instruction_file_candidates = Some(split_list(v));
    }
    if let Some(v) = &flags.markers {
        input.project_root_markers = Some(split_list(v));
    }
    // R-CFG-10: either flag wins over the file and the preset.
    if flags.imports {
        input.imports = Some(true);
    } else if flags.no_imports {
        input.imports = Some(false);
    }
    // R-CFG-12: names are checked where the configuration resolves, so an
    // unknown one is the same error as in settings.yaml.
    if let Some(v) = &flags.rules {
        input.rule_formats = Some(if v.trim() == "none" {
            Vec::new()
        } else {
            v.split(',').map(|f| f.trim().to_owned()).collect()
        });
    }
    if let Some(home) = &flags.home {
        let home = home.to_str().ok_or_else(|| {
            CliError::new(format!("--home is not valid UTF-8: {}", home.display()))
        })?;
        input.dsh_home = Some(home.to_owned());
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::Budget;
    use rstest::rstest;

    fn settings(text: &str) -> Settings {
        Settings {
            path: Some("/h/settings.yaml".into()),
            input: parse(text).expect("valid settings"),
            text: text.into(),
        }
    }

    #[test]
    fn missing_section_and_comment_only_file_mean_no_settings() {
        assert_eq!(parse("# nothing yet\n\n").expect("ok"), None);
        assert_eq!(parse("other_product:\n  x: 1\n").expect("ok"), None);
    }

    #[test]
    fn section_keys_are_read() {
        let s =
            settings("agent_instructions:\n  max_bytes: 100\n  candidate_policy: all-distinct\n");
        let r = resolve(&s, &ConfigArgs::default()).expect("valid");
        assert_eq!(r.config.max_bytes(), Budget::bytes(100));
        assert_eq!(r.config.candidate_policy(), CandidatePolicy::AllDistinct);
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        let err =
            parse("agent_instructions:\n  max_bytes: 1\n  max_byts: 2\n").expect_err("unknown key");
        assert!(err.starts_with("3:"), "{err}");
        assert!(err.contains("max_byts"), "{err}");
    }

    #[test]
    fn invalid_value_points_at_its_line() {
        let s = settings("# c\nagent_instructions:\n  max_bytes: 10\n  max_source_bytes: 0\n");
        let err = resolve(&s, &ConfigArgs::default()).expect_err("zero cap");
        assert!(
            err.to_string()
                .starts_with("/h/settings.yaml:4: agent_instructions.max_source_bytes:"),
            "{err}"
        );
    }

    #[rstest]
    // Nothing given: the CLI default budget.
    #[case("", ConfigArgs::default(), 65_536)]
    // The file wins over the default.
    #[case("agent_instructions:\n  max_bytes: 500\n", ConfigArgs::default(), 500)]
    // A flag wins over the file.
    #[case("agent_instructions:\n  max_bytes: 500\n", ConfigArgs { max_bytes: Some(7), ..ConfigArgs::default() }, 7)]
    // The file's explicit budget wins over a preset given by flag (R-CFG-9).
    #[case("agent_instructions:\n  max_bytes: 500\n", ConfigArgs { preset: Some("codex".into()), ..ConfigArgs::default() }, 500)]
    // A preset alone gives its own budget.
    #[case("", ConfigArgs { preset: Some("codex".into()), ..ConfigArgs::default() }, 32_768)]
    fn precedence(#[case] text: &str, #[case] flags: ConfigArgs, #[case] want: i64) {
        let s = settings(text);
        assert_eq!(
            resolve(&s, &flags).expect("valid").config.max_bytes(),
            Budget::from_signed(want)
        );
    }

    // R-CFG-10: the settings key, the preset and the flags, flags winning.
    #[rstest]
    #[case("", ConfigArgs::default(), false)]
    #[case("agent_instructions:\n  imports: true\n", ConfigArgs::default(), true)]
    #[case("", ConfigArgs { preset: Some("claude".into()), ..ConfigArgs::default() }, true)]
    #[case("agent_instructions:\n  imports: false\n", ConfigArgs { preset: Some("claude".into()), ..ConfigArgs::default() }, false)]
    #[case("agent_instructions:\n  imports: false\n", ConfigArgs { imports: true, ..ConfigArgs::default() }, true)]
    #[case("", ConfigArgs { preset: Some("gemini".into()), no_imports: true, ..ConfigArgs::default() }, false)]
    fn imports_precedence(#[case] text: &str, #[case] flags: ConfigArgs, #[case] on: bool) {
        let r = resolve(&settings(text), &flags).unwrap();
        assert_eq!(r.config.imports(), on);
    }

    #[test]
    fn empty_local_list_disables_overlays() {
        let flags = ConfigArgs {
            local_candidates: Some(String::new()),
            candidates: Some("A.md,,B.md".into()),
            ..ConfigArgs::default()
        };
        let r = resolve(&Settings::default(), &flags).expect("valid");
        assert!(r.config.local_instruction_file_candidates().is_empty());
        assert_eq!(r.config.instruction_file_candidates(), ["A.md", "B.md"]);
        assert_eq!(r.warnings.len(), 1, "the empty entry is reported");
    }

    #[rstest]
    #[case(ConfigArgs { policy: Some("last-wins".into()), ..ConfigArgs::default() }, "--policy")]
    #[case(ConfigArgs { preset: Some("vim".into()), ..ConfigArgs::default() }, "--preset")]
    #[case(ConfigArgs { max_source_bytes: Some(0), ..ConfigArgs::default() }, "--max-source-bytes")]
    fn bad_flags_name_the_flag(#[case] flags: ConfigArgs, #[case] flag: &str) {
        let err = resolve(&Settings::default(), &flags).expect_err("invalid");
        assert!(err.to_string().starts_with(flag), "{err}");
    }

    proptest::proptest! {
        /// R-CLI-5: no settings text makes parsing panic, and every error
        /// renders as one `line:…` message.
        #[test]
        fn arbitrary_settings_never_panic(text in "(agent_instructions:\n)?([ a-z_:\\[\\],.0-9#-]{0,20}\n){0,6}") {
            let flags = ConfigArgs::default();
            match parse(&text) {
                Ok(input) => {
                    let s = Settings { path: Some("/s.yaml".into()), input, text: text.clone() };
                    let _ = resolve(&s, &flags);
                }
                Err(e) => {
                    let first = e.split(':').next().unwrap_or_default();
                    proptest::prop_assert!(first.parse::<u64>().is_ok(), "{}", e);
                    proptest::prop_assert!(!crate::error::CliError::new(e).one_line().contains('\n'));
                }
            }
        }

        /// A comma list splits back into exactly what was joined.
        #[test]
        fn lists_split_on_commas(items in proptest::collection::vec("[A-Za-z.]{1,8}", 1..5)) {
            proptest::prop_assert_eq!(split_list(&items.join(",")), items);
        }
    }
}
