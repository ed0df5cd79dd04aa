//! The loosely typed [`ConfigInput`] as read from JSON, YAML or CLI flags,
//! and [`NumberInput`](crate::config::NumberInput), a number as the format wrote it. Separate because
//! it is the serde surface: what a settings file may say, before anything
//! decides what it means.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::Config;
use super::{CandidatePolicy, ContentTransform, FallbackScope, Preset};

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
    pub(super) fn as_integer(self) -> Option<i128> {
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
    /// See [`Config::ancestor_instruction_files`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ancestor_instruction_files: Option<Vec<String>>,
    /// See [`Config::max_import_depth`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_import_depth: Option<u32>,
    /// See [`Config::rule_formats`] (R-CFG-12): names, checked by
    /// [`ConfigInput::resolve`] so an unknown one is an error naming it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_formats: Option<Vec<String>>,
}
