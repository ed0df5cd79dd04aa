//! The seam between the runner and a host: what the runner asks of a
//! [`Driver`] (mounts, pre-steps, tool results, events, settled state),
//! what it reports to an [`Observer`] step by step, and the [`Verdict`] of a
//! run. Separate because it is the part another host implementation writes
//! against; the loop that uses it lives in `scenario.rs`.

use std::future::Future;
use std::time::Duration;

use camino::Utf8PathBuf;
use dsh_instructions_discovery::memory::MemoryProvider;

use crate::error::ConformanceError;
use crate::fsmodel::LocalFuture;
use crate::matcher::{ObservedMessage, ObservedSource};
use crate::schema::{Compact, ConfigInput, Decision, Env, EventKind, Outcome, ProviderKind, Step};

/// How long one step may take before the runner gives up on it: a safety
/// net against a scenario that leaves a pre-step blocked on a gate, not a
/// performance check (a hang guard, decision 0082: a step takes
/// milliseconds).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// The filesystem provider a mount uses.
#[derive(Clone, Debug)]
pub enum ProviderHandle {
    /// The in-memory provider (already restricted to the mount's trusted roots).
    Memory(MemoryProvider),
    /// A cap-std provider the driver opens on the mount's trusted roots.
    Disk,
    /// `no_provider: true`.
    None,
}

/// Everything a driver needs to mount a plugin instance. Paths are already
/// rewritten into the provider's namespace.
#[derive(Clone, Debug)]
pub struct MountSpec {
    /// Which provider the scenario runs on.
    pub kind: ProviderKind,
    /// The filesystem provider.
    pub provider: ProviderHandle,
    /// Raw configuration (`dsh_home` rewritten); `None` = disabled.
    pub config: Option<ConfigInput>,
    /// Environment for home resolution (values rewritten).
    pub env: Env,
    /// Explicit trusted roots; `None`: the default of the mount entry point
    /// (project root + DSH home, R-RT-11), which the driver derives — the
    /// runner never computes roots itself.
    pub trusted_roots: Option<Vec<Utf8PathBuf>>,
    /// Session cwd.
    pub cwd: Utf8PathBuf,
    /// Where the scenario's `/` is on disk (`T`), `None` in memory. The
    /// directories above it are not part of the scenario: a driver reads
    /// no ancestor file (`ancestor_instruction_files`) there, so a stray
    /// `/tmp/CLAUDE.md` of the test machine never shows.
    pub fs_top: Option<Utf8PathBuf>,
}

/// A pre-step as the driver runs it.
#[derive(Debug)]
pub struct PreStepInput<'a> {
    /// Step number in the turn.
    pub step: u32,
    /// Direct prompt messages claimed by this step.
    pub claimed: &'a [String],
    /// Messages appended after them by the host.
    pub extra: &'a [String],
    /// Downstream decision.
    pub decision: Decision,
    /// When given, cancel the step as soon as this resolves.
    pub cancel: Option<CancelSignal<'a>>,
}

/// A future that fires when the step must be cancelled.
pub struct CancelSignal<'a>(pub LocalFuture<'a, ()>);

impl std::fmt::Debug for CancelSignal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelSignal")
    }
}

/// What a pre-step returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreStepResult {
    /// Completed or cancelled.
    pub outcome: Outcome,
    /// Labels of the decision's messages (`workspace`, `rejected`, texts).
    pub batch: Vec<String>,
    /// The workspace message folded into the batch.
    pub entered: Option<ObservedMessage>,
}

/// A tool result as the driver delivers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInput {
    /// Tool name.
    pub name: String,
    /// Path argument (absolute values rewritten).
    pub path: Option<String>,
    /// Explicit string arguments (absolute paths inside rewritten).
    pub args: std::collections::BTreeMap<String, String>,
    /// `false` = error result.
    pub ok: bool,
    /// Cancelled execution.
    pub cancelled: bool,
    /// Execution token.
    pub token: String,
    /// Parent token.
    pub parent: Option<String>,
}

/// Host state a driver reports after settling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostState {
    /// Pending workspace messages in the next-step inbox.
    pub inbox: Vec<ObservedMessage>,
    /// Labels of persisted user messages.
    pub history: Vec<String>,
    /// Sources of the visible workspace messages, oldest first.
    pub visible: Vec<ObservedSource>,
}

/// Drives a host + runtime through scenario steps. Errors are driver or
/// runtime failures ([`ConformanceError`]) and fail the scenario.
pub trait Driver {
    /// Mounts the first plugin instance over an empty session.
    fn mount(&mut self, spec: &MountSpec) -> impl Future<Output = Result<(), ConformanceError>>;
    /// Runs a pre-step.
    fn pre_step(
        &mut self,
        input: PreStepInput<'_>,
    ) -> impl Future<Output = Result<PreStepResult, ConformanceError>>;
    /// Delivers a tool result.
    fn tool(&mut self, input: &ToolInput) -> impl Future<Output = Result<(), ConformanceError>>;
    /// Appends a session event.
    fn event(&mut self, event: EventKind) -> impl Future<Output = Result<(), ConformanceError>>;
    /// Hides events from the visible surface.
    fn compact(&mut self, compact: &Compact) -> impl Future<Output = Result<(), ConformanceError>>;
    /// New loop instance over the same history (inbox and plugin state gone).
    fn resume(&mut self) -> impl Future<Output = Result<(), ConformanceError>>;
    /// Disposes the plugin instance and mounts a new one (inbox kept).
    fn remount(&mut self, spec: &MountSpec) -> impl Future<Output = Result<(), ConformanceError>>;
    /// Awaits the runtime's `settle()`.
    fn settle(&mut self) -> impl Future<Output = Result<(), ConformanceError>>;
    /// Reports inbox, history and visible sources.
    fn observe(&mut self) -> impl Future<Output = Result<HostState, ConformanceError>>;
}

/// What one scenario step did, as the runner saw it.
#[derive(Clone, Copy, Debug)]
pub struct StepRecord<'a> {
    /// Position of the step in the scenario (0-based).
    pub index: usize,
    /// The step as parsed.
    pub step: &'a Step,
    /// For a pre-step: the step number within the turn it ran as.
    pub step_number: Option<u32>,
    /// For a pre-step that returned: what it returned.
    pub pre_step: Option<&'a PreStepResult>,
    /// Host state after settling; only steps with an `expect` settle and
    /// observe (settling elsewhere could wait on a gate left closed on
    /// purpose).
    pub host: Option<&'a HostState>,
    /// Why the step's driver call, settle or observe failed (a timeout
    /// included); the run stops after this step. An unmet expectation is
    /// not an error here: it is the run's [`Verdict`].
    pub error: Option<&'a str>,
}

/// Watches a run: told about the first mount and then about every step
/// that ran, in scenario order, after it finished (or failed). Filesystem
/// steps (`write`, `remove`, `release`) are reported too, though no driver
/// sees them. The default methods ignore everything.
pub trait Observer {
    /// Before the first mount, with the spec the driver gets.
    fn mounting(&mut self, spec: &MountSpec) {
        let _ = spec;
    }
    /// After a step.
    fn step(&mut self, record: &StepRecord<'_>) {
        let _ = record;
    }
}

/// Observes nothing.
impl Observer for () {}

/// Makes a fresh driver per scenario run.
pub trait DriverFactory {
    /// The driver type.
    type Driver: Driver;
    /// A new driver with an empty session.
    fn create(&self) -> Self::Driver;
}

/// Result of one scenario on one provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every expectation held.
    Pass,
    /// Something failed; the reason is ready for the output line.
    Fail(String),
}

/// One line of runner output for a scenario × provider.
///
/// ```
/// use dsh_instructions_conformance::runner::{line, Verdict};
/// use dsh_instructions_conformance::schema::ProviderKind;
/// assert_eq!(line("a", ProviderKind::Memory, &Verdict::Pass), "ok   a [memory]");
/// assert_eq!(
///     line("a", ProviderKind::Disk, &Verdict::Fail("step 1 (pre_step): x".into())),
///     "FAIL a [disk]: step 1 (pre_step): x"
/// );
/// ```
pub fn line(name: &str, kind: ProviderKind, verdict: &Verdict) -> String {
    match verdict {
        Verdict::Pass => format!("ok   {name} [{kind}]"),
        Verdict::Fail(reason) => format!("FAIL {name} [{kind}]: {reason}"),
    }
}
