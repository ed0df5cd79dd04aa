//! [`ConfigInput::resolve`]: from an input to a [`Config`] — the preset or
//! the defaults first, explicit fields over them (R-CFG-9), the name lists
//! and the numbers validated (R-CFG-2..5). Separate because it is the one
//! place that establishes the invariants `Config` keeps.

use dsh_instructions_render::Budget;

use super::names::validate_ancestor_files;
use super::{
    Config, ConfigInput, ConfigWarning, NumberInput, RuleFormat, reasons, validate_names,
    validate_user_files,
};
use crate::StateError;

/// A validated configuration plus the entries validation ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedConfig {
    /// The configuration to mount.
    pub config: Config,
    /// Ignored list entries (R-CFG-4/5), for the CLI or a log to print.
    pub warnings: Vec<ConfigWarning>,
}

fn invalid(field: &'static str, expected: &'static str, got: NumberInput) -> StateError {
    StateError::InvalidNumber {
        field,
        expected,
        got: got.to_string(),
    }
}

/// R-CFG-2: an integer; `<= 0` and non-finite disable; a fractional
/// number is an error.
fn resolve_max_bytes(n: NumberInput) -> Result<Budget, StateError> {
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
fn resolve_max_source_bytes(n: NumberInput) -> Result<u64, StateError> {
    n.as_integer()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .ok_or_else(|| invalid("max_source_bytes", "a positive integer", n))
}

/// R-CFG-12: known names only; kept in [`RuleFormat::ALL`](crate::config::RuleFormat::ALL) order, each
/// once, since the order of a directory's rules is the formats' fixed
/// order (R-RULE-8), not the configured one.
fn resolve_rule_formats(names: &[String]) -> Result<Vec<RuleFormat>, StateError> {
    let mut formats = names
        .iter()
        .map(|n| n.parse::<RuleFormat>())
        .collect::<Result<Vec<_>, _>>()?;
    formats.sort_unstable();
    formats.dedup();
    Ok(formats)
}

impl ConfigInput {
    /// Validates the input into a [`Config`]: starts from the preset (or the
    /// defaults), lets explicit fields win (R-CFG-9), validates the name lists
    /// (R-CFG-4/5) and the numbers (R-CFG-2/3).
    ///
    /// ```
    /// use dsh_instructions_state::{ConfigInput, StateError, config::NumberInput};
    /// let missing = ConfigInput::default().resolve();
    /// assert_eq!(missing, Err(StateError::MissingMaxBytes));
    ///
    /// let bad = ConfigInput {
    ///     max_bytes: Some(NumberInput::Int(100)),
    ///     max_source_bytes: Some(NumberInput::Float(1.5)),
    ///     ..ConfigInput::default()
    /// };
    /// let err = bad.resolve().unwrap_err();
    /// assert_eq!(err.to_string(), "max_source_bytes must be a positive integer, got 1.5");
    /// ```
    pub fn resolve(&self) -> Result<ResolvedConfig, StateError> {
        let max_bytes = self.max_bytes.map(resolve_max_bytes).transpose()?;
        let mut config = match (self.preset, max_bytes) {
            (Some(p), _) => Config::preset(p),
            (None, Some(_)) => Config::with_max_bytes(0),
            (None, None) => return Err(StateError::MissingMaxBytes),
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
        if let Some(files) = &self.ancestor_instruction_files {
            let (kept, w) = validate_ancestor_files(files);
            config.ancestor_instruction_files = kept;
            warnings.extend(w);
        }
        if let Some(depth) = self.max_import_depth {
            config.max_import_depth = depth;
        }
        if let Some(names) = &self.rule_formats {
            config.rule_formats = resolve_rule_formats(names)?;
        }
        Ok(ResolvedConfig { config, warnings })
    }
}
