//! What a step checks afterwards (`expect:`): the message matcher, its
//! source and change entries, digests, identities and the visible state.
//! Only the keys written are checked. Separate because it is the largest
//! vocabulary of the format and the matcher's input.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// `outcome:` of a pre-step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The step completed.
    Ok,
    /// The step was cancelled.
    Cancelled,
}

/// `intro:` classification of the first block after any notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intro {
    /// R-REN-2 normal intro.
    Normal,
    /// SUPERSEDE + normal.
    Replacement,
    /// The empty replacement baseline sentence pair.
    EmptyReplacement,
    /// The compact intro.
    Compact,
    /// SUPERSEDE + compact.
    ReplacementCompact,
    /// No intro block: the part has no block after any notice, or that block
    /// is a section header.
    None,
    /// An observed first block that is neither an intro nor a section (never
    /// written in a scenario: `#[serde(skip)]`), so it matches no `intro:`.
    #[serde(skip)]
    Unrecognised,
}

impl Intro {
    /// The YAML spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Replacement => "replacement",
            Self::EmptyReplacement => "empty_replacement",
            Self::Compact => "compact",
            Self::ReplacementCompact => "replacement_compact",
            Self::None => "none",
            Self::Unrecognised => "an unrecognised block",
        }
    }
}

/// A change action in a message source (R-STATE-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeAction {
    /// First load of a scope.
    Set,
    /// New content or path for a loaded scope.
    Replace,
    /// Tombstone.
    Remove,
}

impl ChangeAction {
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
        }
    }
}

/// An expected digest: `digest_of: "text"` (hashed by the runner) or
/// `digest: "<40 hex>"` (literal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestExpect {
    /// SHA-1 of these UTF-8 bytes.
    Of(String),
    /// This exact value.
    Literal(String),
}

impl DigestExpect {
    /// The lowercase hex digest this expectation stands for.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::DigestExpect;
    /// assert_eq!(
    ///     DigestExpect::Of("abc".into()).hex(),
    ///     "a9993e364706816aba3e25717850c26c9cd0d89d"
    /// );
    /// ```
    pub fn hex(&self) -> String {
        match self {
            Self::Of(text) => crate::digest::sha1_hex(text.as_bytes()),
            Self::Literal(d) => d.clone(),
        }
    }
}

fn digest_pair(
    digest_of: Option<String>,
    digest: Option<String>,
) -> Result<Option<DigestExpect>, String> {
    match (digest_of, digest) {
        (Some(_), Some(_)) => Err("give either `digest_of` or `digest`, not both".to_owned()),
        (Some(t), None) => Ok(Some(DigestExpect::Of(t))),
        (None, Some(d)) => {
            if d.len() != 40 || !d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(format!(
                    "`digest` must be 40 lowercase hex digits, got `{d}`"
                ));
            }
            Ok(Some(DigestExpect::Literal(d)))
        }
        (None, None) => Ok(None),
    }
}

/// One expected change entry of a message source. For the optional wire
/// fields, `None` = not checked, `Some(None)` = must be absent (written
/// `previous_path: null`, `digest: null`), `Some(Some(x))` = must equal `x`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeExpect {
    /// Expected action.
    pub action: Option<ChangeAction>,
    /// Expected display path.
    pub path: Option<String>,
    /// Expected previous path, or its absence.
    pub previous_path: Option<Option<String>>,
    /// Expected digest, or its absence.
    pub digest: Option<Option<DigestExpect>>,
    /// Expected exact scope key.
    pub scope: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChange {
    action: Option<ChangeAction>,
    path: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    previous_path: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    digest_of: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    digest: Option<Option<String>>,
    scope: Option<String>,
}

/// `digest: null` asserts absence; `digest_of: null` is refused rather than
/// read as "not checked", since a reader would take it for an absence check.
fn change_digest(
    digest_of: Option<Option<String>>,
    digest: Option<Option<String>>,
) -> Result<Option<Option<DigestExpect>>, String> {
    match (digest_of, digest) {
        (Some(None), _) => Err(
            "`digest_of: null` hashes nothing; write `digest: null` for an absent digest"
                .to_owned(),
        ),
        (Some(Some(_)), Some(None)) => {
            Err("give either `digest_of` or `digest`, not both".to_owned())
        }
        (None, Some(None)) => Ok(Some(None)),
        (of, lit) => Ok(digest_pair(of.flatten(), lit.flatten())?.map(Some)),
    }
}

impl<'de> Deserialize<'de> for ChangeExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawChange::deserialize(d)?;
        Ok(Self {
            action: raw.action,
            path: raw.path,
            previous_path: raw.previous_path,
            digest: change_digest(raw.digest_of, raw.digest).map_err(de::Error::custom)?,
            scope: raw.scope,
        })
    }
}

/// `identity:` expectation of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdentityExpect {
    /// Present, any value.
    Any,
    /// Exactly this value.
    Exact(String),
}

impl<'de> Deserialize<'de> for IdentityExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(if s == "any" {
            Self::Any
        } else {
            Self::Exact(s)
        })
    }
}

/// `source:` expectation of a message.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceExpect {
    /// `true`: `baseline: true` present; `false`: field absent.
    pub baseline: Option<bool>,
    /// Baseline identity.
    pub identity: Option<IdentityExpect>,
    /// The exact change list, in order.
    pub changes: Option<Vec<ChangeExpect>>,
}

/// Message matcher: only the keys written are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageMatcher {
    /// Exact full text (parts joined by `\n`).
    pub text: Option<String>,
    /// Section header lines, in order.
    pub sections: Option<Vec<String>>,
    /// Substrings that must occur.
    pub contains: Option<Vec<String>>,
    /// Substrings that must not occur.
    pub not_contains: Option<Vec<String>>,
    /// Intro classification of the first part.
    pub intro: Option<Intro>,
    /// Budget notice line of the first part: `Some(None)` = no notice.
    #[serde(default, deserialize_with = "nullable")]
    pub notice: Option<Option<String>>,
    /// Number of text parts.
    pub parts: Option<usize>,
    /// Byte length of every part at most.
    pub max_len: Option<usize>,
    /// Byte length of the single part exactly.
    pub len: Option<usize>,
    /// Typed source.
    pub source: Option<SourceExpect>,
}

/// Distinguishes an absent key (`None`) from one written as `null` or with no
/// value (`Some(None)`): an expectation of "none" (`entered`, `notice`), and a
/// step action given with defaults (`resume:`, `pre_step:`).
pub(super) fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// A value written as one word or as a map (`none`, `{action: …}`): the
/// word read by `word` (its `Err` the words it knows, for serde's
/// unknown-variant error), the map as an `R` turned into the value by
/// `map` (its `Err` the message).
pub(super) fn word_or_map<'de, D, T, R>(
    d: D,
    expecting: &'static str,
    word: fn(&str) -> Result<T, &'static [&'static str]>,
    map: fn(R) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    R: Deserialize<'de>,
{
    struct V<T, R> {
        expecting: &'static str,
        word: fn(&str) -> Result<T, &'static [&'static str]>,
        map: fn(R) -> Result<T, String>,
    }
    impl<'de, T, R: Deserialize<'de>> Visitor<'de> for V<T, R> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.word)(v).map_err(|known| E::unknown_variant(v, known))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let raw = R::deserialize(de::value::MapAccessDeserializer::new(map))?;
            (self.map)(raw).map_err(de::Error::custom)
        }
    }
    d.deserialize_any(V {
        expecting,
        word,
        map,
    })
}

/// Checks a key of an [`ordered_map`] against the entries before it.
pub(super) type KeyCheck<T> = fn(&str, &[(String, T)]) -> Result<(), String>;

/// A map kept in file order (`fs:`, `visible:`), each key checked by `key`
/// against those before it (its `Err` the message); `null` is the empty
/// map.
pub(super) fn ordered_map<'de, D, T>(
    d: D,
    expecting: &'static str,
    key: KeyCheck<T>,
) -> Result<Vec<(String, T)>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T> {
        expecting: &'static str,
        key: KeyCheck<T>,
    }
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = Vec<(String, T)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                (self.key)(&k, &out).map_err(de::Error::custom)?;
                out.push((k, map.next_value::<T>()?));
            }
            Ok(out)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
    }
    d.deserialize_any(V { expecting, key })
}

/// Expected visible state for one display path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VisibleExpect {
    /// No scope's latest visible change names this path.
    None,
    /// The latest visible change naming this path is a remove.
    Removed,
    /// The latest visible change naming this path is a set or replace.
    Loaded {
        /// Expected action (`set` or `replace`).
        action: Option<ChangeAction>,
        /// Expected digest.
        digest: Option<DigestExpect>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVisible {
    action: Option<ChangeAction>,
    digest_of: Option<String>,
    digest: Option<String>,
}

impl<'de> Deserialize<'de> for VisibleExpect {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = |v: &str| match v {
            "none" => Ok(VisibleExpect::None),
            "removed" => Ok(VisibleExpect::Removed),
            _ => Err(&["none", "removed"][..]),
        };
        let map = |raw: RawVisible| {
            if raw.action == Some(ChangeAction::Remove) {
                return Err("write `removed` for a visible remove, not `{action: remove}`".into());
            }
            Ok(VisibleExpect::Loaded {
                action: raw.action,
                digest: digest_pair(raw.digest_of, raw.digest)?,
            })
        };
        let expecting = "none | removed | {action, digest_of | digest}";
        word_or_map(d, expecting, word, map)
    }
}

/// An ordered `display path: expectation` map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VisibleMap(pub Vec<(String, VisibleExpect)>);

impl<'de> Deserialize<'de> for VisibleMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let expecting = "a map from display path to visible expectation";
        ordered_map(d, expecting, |_, _| Ok(())).map(VisibleMap)
    }
}

/// `expect:` of a step; only the keys written are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Pre-step outcome.
    pub outcome: Option<Outcome>,
    /// Labels of the decision's messages.
    pub batch: Option<Vec<String>>,
    /// The workspace message folded into this batch: `Some(None)` = none.
    #[serde(default, deserialize_with = "nullable")]
    pub entered: Option<Option<MessageMatcher>>,
    /// Pending workspace messages in the next-step inbox.
    pub inbox: Option<Vec<MessageMatcher>>,
    /// Labels of every persisted user message.
    pub history: Option<Vec<String>>,
    /// Visible state by display path.
    pub visible: Option<VisibleMap>,
    /// Memory only: files opened for content during this step.
    pub reads: Option<u64>,
    /// Memory only: at most this many resolve+stat calls during this step.
    pub probes_max: Option<u64>,
}
