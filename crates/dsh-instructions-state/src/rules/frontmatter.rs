//! A rule file's text into its front matter fields, kind and content
//! (R-RULE-2, R-RULE-8). YAML is read with serde-saphyr into a small
//! untyped tree ([`Yaml`]), so a field of the wrong type is this module's
//! diagnostic (naming the field), not a serde message.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::globs::{RuleDiagnostic, RuleGlobs, split_globs};
use crate::StateError;
use crate::config::RuleFormat;

/// At most this many globs in one rule's glob field (R-RULE-2).
pub const MAX_GLOBS: usize = 64;
/// At most this many bytes in one glob (R-RULE-2).
pub const MAX_GLOB_BYTES: usize = 1_024;

/// What a rule does (R-RULE-2, R-RULE-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Loads wherever its directory's files load, as one of them.
    AlwaysOn,
    /// Attached by the first touch of a file its globs match.
    PathScoped,
    /// Never loaded; `explain` lists it as "manual".
    Manual,
}

impl RuleKind {
    /// `always-on`, `path-scoped` or `manual`: the spelling `explain`
    /// shows and the rule digest covers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AlwaysOn => "always-on",
            Self::PathScoped => "path-scoped",
            Self::Manual => "manual",
        }
    }
}

crate::display_as_str!(RuleKind);

/// A rule as its text says: kind, globs (path-scoped rules only), content
/// and the dropped globs.
#[derive(Clone, Debug)]
pub struct ParsedRule<'a> {
    /// Its kind.
    pub kind: RuleKind,
    /// The compiled globs; empty unless [`RuleKind::PathScoped`](crate::rules::RuleKind::PathScoped).
    pub globs: RuleGlobs,
    /// The text after the front matter (the whole text without one).
    pub content: &'a str,
    /// Globs dropped because they did not compile.
    pub diagnostics: Vec<RuleDiagnostic>,
}

/// Splits a rule file's text (R-RULE-2, R-RULE-8): `Some(block)` with the
/// content after the closing line and its line break when the first line is
/// `---` and a later line is `---`; `None` and the whole text otherwise.
///
/// ```
/// use dsh_instructions_state::rules::split_front_matter;
/// assert_eq!(split_front_matter("---\npaths: a\n---\nBody\n"), (Some("paths: a\n"), "Body\n"));
/// assert_eq!(split_front_matter("---\n---\nBody"), (Some(""), "Body"));
/// assert_eq!(split_front_matter("---\nno end\n"), (None, "---\nno end\n"));
/// assert_eq!(split_front_matter("Body"), (None, "Body"));
/// ```
pub fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = strip_fence_line(text) else {
        return (None, text);
    };
    let mut at = 0;
    while at <= rest.len() {
        let line_end = rest[at..].find('\n').map_or(rest.len(), |i| at + i);
        let line = rest[at..line_end]
            .strip_suffix('\r')
            .unwrap_or(&rest[at..line_end]);
        if line == "---" {
            let after = (line_end + 1).min(rest.len());
            return (Some(&rest[..at]), &rest[after..]);
        }
        if line_end == rest.len() {
            break;
        }
        at = line_end + 1;
    }
    (None, text)
}

/// The text after a first line `---` (`\n` or `\r\n`), if it is one.
fn strip_fence_line(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---")?;
    rest.strip_prefix('\n')
        .or_else(|| rest.strip_prefix("\r\n"))
}

/// A YAML value as far as front matter needs one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Yaml {
    Null,
    Bool(bool),
    Str(String),
    /// Numbers and other scalars that are no string or boolean.
    Other,
    Seq(Vec<Yaml>),
    Map(Vec<(Yaml, Yaml)>),
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = Yaml;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Yaml, E> {
        Ok(Yaml::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Yaml, E> {
        Ok(Yaml::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Yaml, E> {
        Ok(Yaml::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Yaml, E> {
        Ok(Yaml::Other)
    }
    fn visit_str<E>(self, v: &str) -> Result<Yaml, E> {
        Ok(Yaml::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Yaml, E> {
        Ok(Yaml::Str(v))
    }
    fn visit_bytes<E>(self, _: &[u8]) -> Result<Yaml, E> {
        Ok(Yaml::Other)
    }
    fn visit_none<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }
    fn visit_unit<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Yaml, D::Error> {
        Yaml::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Yaml::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry()? {
            entries.push((k, v));
        }
        Ok(Yaml::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Yaml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(YamlVisitor)
    }
}

/// The front matter's fields by name; `Null` values count as absent.
struct Fields(Vec<(String, Yaml)>);

impl Fields {
    fn get(&self, key: &str) -> Option<&Yaml> {
        // The last of repeated keys wins, as in most YAML readers.
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .filter(|v| **v != Yaml::Null)
    }
}

/// The block as YAML, or `Err` with the parser's message or what it was
/// instead of a mapping.
fn yaml_fields(block: &str) -> Result<Fields, String> {
    if block.trim().is_empty() {
        return Ok(Fields(Vec::new()));
    }
    match serde_saphyr::from_str::<Yaml>(block) {
        // A block of comments only is no fields.
        Ok(Yaml::Null) => Ok(Fields(Vec::new())),
        Ok(Yaml::Map(entries)) => Ok(Fields(
            entries
                .into_iter()
                .filter_map(|(k, v)| match k {
                    Yaml::Str(k) => Some((k, v)),
                    _ => None,
                })
                .collect(),
        )),
        Ok(Yaml::Seq(_)) => Err("a list".to_owned()),
        Ok(_) => Err("a scalar".to_owned()),
        Err(e) => Err(first_line(&e.to_string())),
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

/// Cursor's fallback (R-RULE-8): every line blank, a `#` comment or
/// `key: value` (value to the end of the line, one pair of matching quotes
/// removed, `true`/`false` booleans); `None` when a line is none of these.
fn line_fields(block: &str) -> Option<Fields> {
    let mut out = Vec::new();
    for line in block.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return None;
        }
        let value = value.trim();
        let value = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(value);
        let value = match value {
            "" => Yaml::Null,
            "true" => Yaml::Bool(true),
            "false" => Yaml::Bool(false),
            v => Yaml::Str(v.to_owned()),
        };
        out.push((key.to_owned(), value));
    }
    Some(Fields(out))
}

/// A glob field: a string (split on commas outside `{…}`) or a list of
/// strings; items trimmed, empty ones dropped; then the size limits.
fn glob_list(fields: &Fields, field: &'static str) -> Result<Option<Vec<String>>, StateError> {
    const EXPECTED: &str = "a string or a list of strings";
    let items = match fields.get(field) {
        None => return Ok(None),
        Some(Yaml::Str(s)) => split_globs(s),
        Some(Yaml::Seq(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Yaml::Str(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                    Yaml::Str(_) => {}
                    _ => {
                        return Err(StateError::WrongType {
                            field,
                            expected: EXPECTED,
                        });
                    }
                }
            }
            out
        }
        Some(_) => {
            return Err(StateError::WrongType {
                field,
                expected: EXPECTED,
            });
        }
    };
    if items.len() > MAX_GLOBS {
        return Err(StateError::TooManyGlobs {
            field,
            count: items.len(),
        });
    }
    if let Some(long) = items.iter().find(|g| g.len() > MAX_GLOB_BYTES) {
        return Err(StateError::GlobTooLong {
            field,
            bytes: long.len(),
        });
    }
    Ok(Some(items))
}

fn bool_field(fields: &Fields, field: &'static str) -> Result<Option<bool>, StateError> {
    match fields.get(field) {
        None => Ok(None),
        Some(Yaml::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(StateError::WrongType {
            field,
            expected: "a boolean",
        }),
    }
}

/// Windsurf's `trigger` values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trigger {
    AlwaysOn,
    Glob,
    ModelDecision,
    Manual,
}

fn trigger_field(fields: &Fields) -> Result<Option<Trigger>, StateError> {
    let wrong = StateError::WrongType {
        field: "trigger",
        expected: "one of always_on, glob, model_decision, manual",
    };
    match fields.get("trigger") {
        None => Ok(None),
        Some(Yaml::Str(s)) => match s.trim() {
            "always_on" => Ok(Some(Trigger::AlwaysOn)),
            "glob" => Ok(Some(Trigger::Glob)),
            "model_decision" => Ok(Some(Trigger::ModelDecision)),
            "manual" => Ok(Some(Trigger::Manual)),
            _ => Err(wrong),
        },
        Some(_) => Err(wrong),
    }
}

/// The glob field of each format.
fn glob_field(format: RuleFormat) -> &'static str {
    match format {
        RuleFormat::Claude => "paths",
        RuleFormat::Cursor | RuleFormat::Windsurf => "globs",
        RuleFormat::Copilot => "applyTo",
    }
}

/// The kind of a rule from its fields (R-RULE-2, R-RULE-8), with its
/// globs when path-scoped.
fn classify(format: RuleFormat, fields: &Fields) -> Result<(RuleKind, Vec<String>), StateError> {
    let field = glob_field(format);
    let globs = glob_list(fields, field)?;
    let scoped = |g: Vec<String>| {
        if g.is_empty() {
            (RuleKind::Manual, Vec::new())
        } else {
            (RuleKind::PathScoped, g)
        }
    };
    Ok(match format {
        RuleFormat::Claude => match globs {
            Some(g) if !g.is_empty() => (RuleKind::PathScoped, g),
            _ => (RuleKind::AlwaysOn, Vec::new()),
        },
        RuleFormat::Cursor => {
            if bool_field(fields, "alwaysApply")? == Some(true) {
                (RuleKind::AlwaysOn, Vec::new())
            } else {
                scoped(globs.unwrap_or_default())
            }
        }
        RuleFormat::Copilot => match globs {
            None => (RuleKind::Manual, Vec::new()),
            Some(g) if g.len() == 1 && g[0] == "**" => (RuleKind::AlwaysOn, Vec::new()),
            Some(g) => scoped(g),
        },
        RuleFormat::Windsurf => match trigger_field(fields)? {
            Some(Trigger::AlwaysOn) => (RuleKind::AlwaysOn, Vec::new()),
            Some(Trigger::Manual | Trigger::ModelDecision) => (RuleKind::Manual, Vec::new()),
            Some(Trigger::Glob) | None => scoped(globs.unwrap_or_default()),
        },
    })
}

/// Parses one rule file's text (R-RULE-2, R-RULE-3, R-RULE-8): its kind,
/// compiled globs and content, or why it is unavailable. Never panics,
/// whatever the text.
///
/// ```
/// use dsh_instructions_state::{config::RuleFormat, rules::{RuleKind, parse_rule}};
/// let r = parse_rule(RuleFormat::Cursor, "---\nglobs: *.ts,*.tsx\n---\nUse strict mode.\n")?;
/// assert_eq!(r.kind, RuleKind::PathScoped);
/// assert_eq!(r.globs.written(), ["*.ts", "*.tsx"]);
/// assert!(r.globs.matches("src/a.tsx"));
/// assert_eq!(r.content, "Use strict mode.\n");
/// let always = parse_rule(RuleFormat::Claude, "No front matter.")?;
/// assert_eq!(always.kind, RuleKind::AlwaysOn);
/// let bad = parse_rule(RuleFormat::Claude, "---\npaths: 3\n---\nx").unwrap_err();
/// assert_eq!(bad.field(), "paths");
/// # Ok::<(), dsh_instructions_state::StateError>(())
/// ```
pub fn parse_rule(format: RuleFormat, text: &str) -> Result<ParsedRule<'_>, StateError> {
    let (block, content) = split_front_matter(text);
    let fields = match block {
        None => Fields(Vec::new()),
        Some(block) => match yaml_fields(block) {
            Ok(f) => f,
            Err(detail) => match format {
                RuleFormat::Cursor => {
                    line_fields(block).ok_or(StateError::NotAMapping { detail })?
                }
                _ => return Err(StateError::NotAMapping { detail }),
            },
        },
    };
    let (kind, written) = classify(format, &fields)?;
    let field = glob_field(format);
    let (globs, diagnostics) = RuleGlobs::compile(field, &written);
    if kind == RuleKind::PathScoped && globs.is_empty() {
        return Err(StateError::NoGlobCompiles { field });
    }
    Ok(ParsedRule {
        kind,
        globs,
        content,
        diagnostics,
    })
}
