//! What a step does: its one action (pre-step, tool result, event, compact,
//! remount, resume, …) and the [`Step`] that pairs it with its expectation.
//! Separate from the expectations, which say what is checked afterwards.

use std::collections::BTreeMap;

use super::expect::{Expect, word_or_map};
use super::fs::FsMap;
use super::{ConfigInput, Env};
use serde::{Deserialize, Deserializer};

/// Downstream decision of a pre-step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Enter the batch.
    #[default]
    Enter,
    /// Reject the step.
    Reject,
    /// Enter with no messages.
    Empty,
}

/// `pre_step: {…}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreStep {
    /// Direct prompt messages this step claimed.
    #[serde(default = "default_claimed")]
    pub claimed: Vec<String>,
    /// Messages the host driver appends after them.
    #[serde(default)]
    pub extra: Vec<String>,
    /// Decision of the downstream chain.
    #[serde(default)]
    pub decision: Decision,
    /// Explicit step number in the turn; see [`crate::runner`] for the default.
    pub step: Option<u32>,
    /// Memory only: cancel once an operation on this path blocks on a gate.
    pub cancel_when_blocked: Option<String>,
}

fn default_claimed() -> Vec<String> {
    vec!["prompt".to_owned()]
}

impl Default for PreStep {
    fn default() -> Self {
        Self {
            claimed: default_claimed(),
            extra: Vec::new(),
            decision: Decision::Enter,
            step: None,
            cancel_when_blocked: None,
        }
    }
}

/// `tool: {…}`: a tool execution's result arrives.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolStep {
    /// Tool name.
    pub name: String,
    /// Value of the path argument (absolute paths are rewritten on disk);
    /// beside `args` it fills the first configured path argument.
    pub path: Option<String>,
    /// The tool's arguments, explicitly (string values; absolute paths
    /// inside them are rewritten on disk). Shell tools (R-CFG-11) take their
    /// command from here.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// `false` = error result.
    #[serde(default = "yes")]
    pub ok: bool,
    /// Cancelled execution.
    #[serde(default)]
    pub cancelled: bool,
    /// Execution token (default: a fresh unique token).
    pub token: Option<String>,
    /// Parent execution token (code-mode child).
    pub parent: Option<String>,
}

fn yes() -> bool {
    true
}

/// A session event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `step/start`.
    StepStart,
    /// `step/end`.
    StepEnd,
    /// `turn/end`.
    TurnEnd,
}

/// `compact: …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compact {
    /// Hide the latest visible baseline message.
    Baseline,
    /// Hide every workspace message.
    Workspace,
    /// Hide every event so far.
    All,
    /// Hide these 0-based indexes over persisted user messages.
    Hide(Vec<usize>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHide {
    hide: Vec<usize>,
}

impl<'de> Deserialize<'de> for Compact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = |v: &str| match v {
            "baseline" => Ok(Compact::Baseline),
            "workspace" => Ok(Compact::Workspace),
            "all" => Ok(Compact::All),
            _ => Err(&["baseline", "workspace", "all", "hide"][..]),
        };
        let map = |raw: RawHide| Ok(Compact::Hide(raw.hide));
        let expecting = "baseline | workspace | all | {hide: [N, …]}";
        word_or_map(d, expecting, word, map)
    }
}

/// `remount: {…}`: each given part replaces the earlier one whole.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remount {
    /// New configuration.
    pub config: Option<ConfigInput>,
    /// New environment.
    pub env: Option<Env>,
    /// New trusted roots (non-empty).
    pub trusted_roots: Option<Vec<String>>,
}

/// `resume: {}` takes no keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {}

/// One step action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A pre-step.
    PreStep(PreStep),
    /// A tool result.
    Tool(ToolStep),
    /// A session event.
    Event(EventKind),
    /// Filesystem writes.
    Write(FsMap),
    /// Filesystem removals.
    Remove(Vec<String>),
    /// Open a gate.
    Release(String),
    /// Extension (README, decision 0030): assert that an operation on this
    /// path is blocked on its gate, i.e. the work under test reached it.
    Blocked(String),
    /// Hide events from the visible surface.
    Compact(Compact),
    /// New loop instance over the same history.
    Resume,
    /// New plugin instance over the same history.
    Remount(Box<Remount>),
}

impl Action {
    /// The action key as written in YAML.
    ///
    /// ```
    /// use dsh_instructions_conformance::schema::Action;
    /// assert_eq!(Action::Resume.name(), "resume");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Self::PreStep(_) => "pre_step",
            Self::Tool(_) => "tool",
            Self::Event(_) => "event",
            Self::Write(_) => "write",
            Self::Remove(_) => "remove",
            Self::Release(_) => "release",
            Self::Blocked(_) => "blocked",
            Self::Compact(_) => "compact",
            Self::Resume => "resume",
            Self::Remount(_) => "remount",
        }
    }
}

/// One step of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What happens.
    pub action: Action,
    /// What is checked afterwards (after `settle()`).
    pub expect: Option<Expect>,
    /// 1-based line of the step in its file, when known.
    pub line: Option<u64>,
}
