//! The plain objects the Node API takes and gives, and their conversions
//! from the facade's types. Field names are the Rust ones in camelCase.

use dsh_agent_instructions::TypedSource as RsSource;
use dsh_agent_instructions::WorkspaceMessage as RsMessage;
use dsh_agent_instructions::fs::RootReason;
use dsh_agent_instructions::host::Action;
use dsh_agent_instructions::report::{
    CandidateFate as RsFate, InspectedCandidate, Inspection as RsInspection, Preview as RsPreview,
};
use napi_derive::napi;

use crate::error::{Code, Failure};
use crate::ops::{ConfigArgs, EnvInput};

/// The environment a mount reads its homes from. Given, it replaces the
/// process's `HOME` and `DSH_HOME` whole: a key left out is unset. Pass
/// `process.env` to use the process's own.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct HomeVariables {
    /// `$HOME`: the OS home (`~`), whose `.dsh` is the default DSH home.
    #[napi(js_name = "HOME")]
    pub home: Option<String>,
    /// `$DSH_HOME`: the DSH home, holding `AGENTS.md` (the user-global
    /// file) and `sessions/`.
    #[napi(js_name = "DSH_HOME")]
    pub dsh_home: Option<String>,
}

impl From<HomeVariables> for EnvInput {
    fn from(v: HomeVariables) -> Self {
        Self {
            home: v.home,
            dsh_home: v.dsh_home,
        }
    }
}

/// Where a {@link SessionStore} keeps its sessions.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    /// The store's directory, absolute; default `$DSH_HOME/sessions`
    /// (`~/.dsh/sessions`) of `env`.
    pub dir: Option<String>,
    /// The environment its sessions mount with; default the process's.
    pub env: Option<HomeVariables>,
    /// How long opening a session waits for another process to release
    /// the session lock before it fails with `ERR_DSH_SESSION_LOCKED`, in
    /// milliseconds; default 10,000 (the store's, R-LOG-4).
    pub lock_wait_ms: Option<u32>,
}

/// How a session or an `explain` / `preview` is configured (SPEC §3): what
/// [`CreateOptions`] and [`MountOptions`] share.
#[derive(Debug, Clone, Default)]
pub(super) struct ConfigOptions {
    /// The configuration, with the keys of `settings.yaml` in snake_case
    /// (`max_bytes`, `instruction_file_candidates`, `preset`, …); an
    /// unknown key fails with `ERR_DSH_CONFIG` naming it. With neither
    /// `config` nor `preset`, the `dsh` preset.
    pub(super) config: Option<serde_json::Value>,
    pub(super) preset: Option<String>,
    pub(super) trust: Option<Vec<String>>,
}

impl ConfigOptions {
    pub(super) fn args(self) -> Result<ConfigArgs, Failure> {
        let config = match self.config {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Object(map)) => Some(map),
            Some(_) => {
                return Err(
                    Failure::new(Code::Config, "config must be an object").with_field("config")
                );
            }
        };
        Ok(ConfigArgs {
            config,
            preset: self.preset,
            trust: self.trust.unwrap_or_default(),
        })
    }
}

/// A new session.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    /// The session id: one path component, unique in the store; default a
    /// new id.
    pub id: Option<String>,
    /// The configuration, with the keys of `settings.yaml` in snake_case
    /// (`max_bytes`, `instruction_file_candidates`, `preset`, …), kept with
    /// the session: every later `open` mounts with it (R-CLI-3). An unknown
    /// key fails with `ERR_DSH_CONFIG` naming it. With neither `config` nor
    /// `preset`, the `dsh` preset.
    #[napi(ts_type = "Record<string, unknown>")]
    pub config: Option<serde_json::Value>,
    /// A named configuration (R-CFG-9): `dsh`, `codex`, `claude`,
    /// `opencode`, `gemini`, `copilot` or `qwen`; keys of `config` win over
    /// it.
    pub preset: Option<String>,
    /// Extra trusted roots (R-DISC-7), absolute.
    pub trust: Option<Vec<String>>,
}

impl CreateOptions {
    pub(super) fn split(self) -> (Option<String>, ConfigOptions) {
        (
            self.id,
            ConfigOptions {
                config: self.config,
                preset: self.preset,
                trust: self.trust,
            },
        )
    }
}

/// `explain` and `preview` for a cwd, without a session.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct MountOptions {
    /// The configuration; see {@link CreateOptions.config}.
    #[napi(ts_type = "Record<string, unknown>")]
    pub config: Option<serde_json::Value>,
    /// A named configuration; see {@link CreateOptions.preset}.
    pub preset: Option<String>,
    /// Extra trusted roots, absolute.
    pub trust: Option<Vec<String>>,
    /// The environment; default the process's.
    pub env: Option<HomeVariables>,
}

impl MountOptions {
    pub(super) fn split(self) -> (ConfigOptions, Option<EnvInput>) {
        (
            ConfigOptions {
                config: self.config,
                preset: self.preset,
                trust: self.trust,
            },
            self.env.map(Into::into),
        )
    }
}

/// How a touch is reported.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct TouchOptions {
    /// A shell touch's command line, exactly as it ran (required for
    /// `shell`, refused for the other kinds).
    pub command: Option<String>,
    /// `keep` (default): appended to the session log first, so a later
    /// process composes its pending message again; `transient`: reported to
    /// this session only.
    #[napi(ts_type = "'keep' | 'transient'")]
    pub record: Option<String>,
}

/// One change of a workspace message's typed source (R-STATE-1).
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Change {
    /// What happens to the scope.
    #[napi(ts_type = "'set' | 'replace' | 'remove'")]
    pub action: String,
    /// The scope key (R-STATE-2).
    pub scope: String,
    /// Display path of the file (for a `remove`, the path that was loaded).
    pub path: String,
    /// For a `replace` whose path changed: the earlier display path.
    pub previous_path: Option<String>,
    /// Lowercase hex SHA-1 of the full loaded text; none for a `remove`.
    pub digest: Option<String>,
}

/// What a workspace message says it carries: metadata, never rendered.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct TypedSource {
    /// The message has a baseline part.
    pub baseline: bool,
    /// The baseline identity (R-STATE-4) of that baseline part.
    pub baseline_identity: Option<String>,
    /// The changes, in section order (R-REN-3).
    pub changes: Vec<Change>,
}

impl From<&RsSource> for TypedSource {
    fn from(s: &RsSource) -> Self {
        Self {
            baseline: s.baseline,
            baseline_identity: s.baseline_identity.clone(),
            changes: s
                .changes
                .iter()
                .map(|c| Change {
                    action: match c.action {
                        Action::Set => "set",
                        Action::Replace => "replace",
                        Action::Remove => "remove",
                    }
                    .to_owned(),
                    scope: c.scope.as_str().to_owned(),
                    path: c.path.clone(),
                    previous_path: c.previous_path.clone(),
                    digest: c.digest.map(|d| d.to_hex()),
                })
                .collect(),
        }
    }
}

/// A workspace message: one user-role message for the model, one text part
/// per rendered unit (baseline first), with its typed source.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct WorkspaceMessage {
    /// The text parts, in order: give the model each as a text part of one
    /// user message (or `text` where a host sends one text).
    pub parts: Vec<String>,
    /// The parts joined by a newline.
    pub text: String,
    /// The typed source: persist it with the message, never show it.
    pub source: TypedSource,
}

impl From<&RsMessage> for WorkspaceMessage {
    fn from(m: &RsMessage) -> Self {
        Self {
            parts: m.parts.clone(),
            text: m.joined_text(),
            source: (&m.source).into(),
        }
    }
}

/// The DSH home a mount resolved (R-HOME).
#[napi(object)]
#[derive(Debug, Clone)]
pub struct DshHome {
    /// Absolute, normalized directory.
    pub path: String,
    /// How the model is shown it: `~/.dsh` or `$DSH_HOME`.
    pub label: String,
}

/// The baseline the model would receive at a cwd, as `dsh-instructions show`
/// prints it.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Preview {
    /// The cwd.
    pub cwd: String,
    /// The project root (R-DISC-1).
    pub root: String,
    /// Why it is the root: `marker .git`, `no marker`, or `probing marker
    /// .git failed: …`.
    pub root_reason: String,
    /// The resolved DSH home.
    pub home: DshHome,
    /// The baseline identity (R-STATE-4).
    pub identity: String,
    /// The byte budget; 0 when loading is disabled.
    pub max_bytes: f64,
    /// The exact baseline text ("" when none).
    pub text: String,
    /// The budget notice line, if any.
    pub notice: Option<String>,
    /// The typed source the baseline message would carry.
    pub source: TypedSource,
}

impl From<&RsPreview> for Preview {
    fn from(p: &RsPreview) -> Self {
        Self {
            cwd: p.cwd.to_string(),
            root: p.root.to_string(),
            root_reason: match &p.root_reason {
                RootReason::Marker { marker } => format!("marker {marker}"),
                RootReason::NoMarker => "no marker".to_owned(),
                RootReason::ProbeFailed { marker, error } => {
                    format!("probing marker {marker} failed: {error}")
                }
            },
            home: DshHome {
                path: p.home.path.to_string(),
                label: p.home.label.to_string(),
            },
            identity: p.identity.clone(),
            // Budgets are far below 2^53: a number is exact.
            max_bytes: p.max_bytes.enabled().unwrap_or(0) as f64,
            text: p.text.clone(),
            notice: p.notice.clone(),
            source: (&p.source).into(),
        }
    }
}

/// What became of one candidate file.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct CandidateFate {
    /// `loaded`, `truncated`, `omitted-by-budget`, `shadowed-by`,
    /// `points-to`, `skipped-after-unavailable`, `duplicate-of`, `absent`
    /// or `unavailable`.
    pub kind: String,
    /// Raw content bytes (`loaded`, `omitted-by-budget`; for `truncated` the
    /// file's, with `kept` the bytes kept).
    pub bytes: Option<f64>,
    /// Bytes kept of a `truncated` file.
    pub kept: Option<f64>,
    /// The other file's display path: the winner, the blocker, or the kept
    /// duplicate.
    pub other: Option<String>,
    /// For `shadowed-by`: whether its content differs from the winner's.
    pub differs: Option<bool>,
    /// For `unavailable`: why.
    pub reason: Option<String>,
}

impl From<&RsFate> for CandidateFate {
    fn from(f: &RsFate) -> Self {
        let mut out = Self {
            kind: String::new(),
            bytes: None,
            kept: None,
            other: None,
            differs: None,
            reason: None,
        };
        out.kind = match f {
            RsFate::Loaded { bytes } => {
                out.bytes = Some(*bytes as f64);
                "loaded"
            }
            RsFate::Truncated { from, to } => {
                out.bytes = Some(*from as f64);
                out.kept = Some(*to as f64);
                "truncated"
            }
            RsFate::OmittedByBudget { bytes } => {
                out.bytes = Some(*bytes as f64);
                "omitted-by-budget"
            }
            RsFate::ShadowedBy { winner, differs } => {
                out.other = Some(winner.clone());
                out.differs = *differs;
                "shadowed-by"
            }
            RsFate::PointsTo { winner } => {
                out.other = Some(winner.clone());
                "points-to"
            }
            RsFate::SkippedAfterUnavailable { blocker } => {
                out.other = Some(blocker.clone());
                "skipped-after-unavailable"
            }
            RsFate::DuplicateOf { of } => {
                out.other = Some(of.clone());
                "duplicate-of"
            }
            RsFate::Absent => "absent",
            RsFate::Unavailable { reason } => {
                out.reason = Some(reason.to_string());
                "unavailable"
            }
        }
        .to_owned();
        out
    }
}

/// One candidate file of one directory (or the user-global file).
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Root-relative directory (`.` for the root); none for the
    /// user-global file.
    pub dir: Option<String>,
    /// The candidate's file name.
    pub name: String,
    /// Its display path.
    pub path: String,
    /// Whether it is a local overlay (`*.local.md`).
    pub local: bool,
    /// What became of it.
    pub fate: CandidateFate,
}

impl From<&InspectedCandidate> for Candidate {
    fn from(c: &InspectedCandidate) -> Self {
        Self {
            dir: c.dir.clone(),
            name: c.name.clone(),
            path: c.path.clone(),
            local: c.local,
            fate: (&c.fate).into(),
        }
    }
}

/// What `dsh-instructions explain` prints: the baseline and the fate of
/// every candidate file, broadest first.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The baseline, as {@link preview} gives it.
    pub baseline: Preview,
    /// Every candidate, broadest first.
    pub candidates: Vec<Candidate>,
}

impl From<&RsInspection> for Inspection {
    fn from(i: &RsInspection) -> Self {
        Self {
            baseline: (&i.baseline).into(),
            candidates: i.candidates.iter().map(Into::into).collect(),
        }
    }
}
