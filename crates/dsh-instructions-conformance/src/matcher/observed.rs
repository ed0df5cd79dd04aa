//! What a driver reports after a step ([`Observation`]): the messages
//! given with their sources and changes, the visible state and the memory
//! provider's counters. Separate because a driver builds these and never
//! needs the checks.

use serde::Serialize;

use crate::schema::{ChangeAction, Outcome};

/// One change of an observed message source (R-STATE-1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedChange {
    /// `set`, `replace` or `remove`.
    pub action: ChangeActionObs,
    /// Scope key (NUL-separated, R-STATE-2).
    pub scope: String,
    /// Display path.
    pub path: String,
    /// Previous display path of a path-changing replace.
    pub previous_path: Option<String>,
    /// Digest (absent on a remove).
    pub digest: Option<String>,
}

/// Observed change action (serializes as the wire spelling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeActionObs {
    /// `set`.
    Set,
    /// `replace`.
    Replace,
    /// `remove`.
    Remove,
}

impl ChangeActionObs {
    pub(super) fn matches(self, expected: ChangeAction) -> bool {
        matches!(
            (self, expected),
            (Self::Set, ChangeAction::Set)
                | (Self::Replace, ChangeAction::Replace)
                | (Self::Remove, ChangeAction::Remove)
        )
    }
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
        }
    }
}

/// The typed source of an observed workspace message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ObservedSource {
    /// `baseline: true` present.
    pub baseline: bool,
    /// `baselineIdentity`, when present.
    pub identity: Option<String>,
    /// Changes in order.
    pub changes: Vec<ObservedChange>,
}

/// An observed workspace message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ObservedMessage {
    /// Text parts in order.
    pub parts: Vec<String>,
    /// Its typed source.
    pub source: ObservedSource,
}

/// Operation counts of the memory provider during one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCounters {
    /// Files opened for content.
    pub reads: u64,
    /// Resolve+stat calls, root-marker probes included.
    pub probes: u64,
}

/// What a driver observed after a (settled) step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observation {
    /// Pre-step outcome; `None` for other actions.
    pub outcome: Option<Outcome>,
    /// Labels of the decision's messages; `None` for other actions.
    pub batch: Option<Vec<String>>,
    /// The workspace message folded into this step's batch.
    pub entered: Option<ObservedMessage>,
    /// Pending workspace messages in the next-step inbox, in order.
    pub inbox: Vec<ObservedMessage>,
    /// Labels of every persisted user message.
    pub history: Vec<String>,
    /// Sources of the visible workspace messages, oldest first.
    pub visible: Vec<ObservedSource>,
    /// Memory provider counters for this step (`None` on disk).
    pub counters: Option<StepCounters>,
}
