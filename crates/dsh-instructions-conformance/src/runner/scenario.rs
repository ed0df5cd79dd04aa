//! One scenario on one provider: mounting with rewritten paths, each step's
//! action, settling before checks, and the comparison of what was observed
//! with what the step expects. Separate from planning, which decides which
//! scenarios run where.

use std::future::Future;

use dsh_instructions_discovery::memory::MemoryProvider;

use super::contract::{
    CancelSignal, Driver, HostState, MountSpec, Observer, PreStepInput, PreStepResult,
    ProviderHandle, STEP_TIMEOUT, StepRecord, ToolInput, Verdict,
};
use crate::error::ConformanceError;
use crate::fsmodel::{DiskFixture, FsFixture, MemoryFixture, PathMap};
use crate::matcher::{self, Observation};
use crate::schema::{Action, ConfigInput, Env, EventKind, FsMap, ProviderKind, Scenario, Step};

struct Mounting {
    config: Option<ConfigInput>,
    env: Env,
    trusted_roots: Option<Vec<String>>,
}

fn rewrite_config(config: &Option<ConfigInput>, paths: &PathMap) -> Option<ConfigInput> {
    config.as_ref().map(|c| {
        let mut c = c.clone();
        c.dsh_home = c.dsh_home.map(|h| paths.map_home_value(&h));
        c
    })
}

fn rewrite_env(env: &Env, paths: &PathMap) -> Env {
    Env {
        home: paths.map_home_value(&env.home),
        dsh_home: env.dsh_home.as_ref().map(|h| paths.map_home_value(h)),
    }
}

fn mount_spec(
    sc: &Scenario,
    kind: ProviderKind,
    m: &Mounting,
    fixture: &dyn FsFixture,
    memory: Option<&MemoryProvider>,
) -> MountSpec {
    let paths = fixture.paths();
    let trusted_roots = m
        .trusted_roots
        .as_ref()
        .map(|r| r.iter().map(|p| paths.map_path(p)).collect());
    let provider = if sc.no_provider {
        ProviderHandle::None
    } else {
        match memory {
            Some(p) => ProviderHandle::Memory(p.clone()),
            None => ProviderHandle::Disk,
        }
    };
    MountSpec {
        kind,
        provider,
        config: rewrite_config(&m.config, paths),
        env: rewrite_env(&m.env, paths),
        trusted_roots,
        cwd: paths.map_path(&sc.cwd),
        fs_top: matches!(kind, ProviderKind::Disk).then(|| paths.map_path("/")),
    }
}

/// Shows the disk provider's absolute paths as scenario paths (`T` taken
/// off) in everything a step observed: the ancestor files' sections and
/// scopes name absolute paths, as Claude Code shows them.
fn unmap_observation(obs: &mut Observation, paths: &PathMap) {
    let unmap_source = |s: &mut matcher::ObservedSource| {
        for c in &mut s.changes {
            c.scope = paths.unmap_in_text(&c.scope);
            c.path = paths.unmap_in_text(&c.path);
            if let Some(p) = &mut c.previous_path {
                *p = paths.unmap_in_text(p);
            }
        }
    };
    let unmap_message = |m: &mut matcher::ObservedMessage| {
        for part in &mut m.parts {
            *part = paths.unmap_in_text(part);
        }
        unmap_source(&mut m.source);
    };
    if let Some(m) = &mut obs.entered {
        unmap_message(m);
    }
    obs.inbox.iter_mut().for_each(unmap_message);
    obs.visible.iter_mut().for_each(unmap_source);
}

/// Applies `fs` or a `write` step to the provider's tree.
fn write_entries(fixture: &dyn FsFixture, entries: &FsMap) -> Result<(), ConformanceError> {
    for (path, entry) in &entries.0 {
        fixture.insert(path, entry)?;
    }
    Ok(())
}

async fn timed<T>(
    what: &'static str,
    f: impl Future<Output = Result<T, ConformanceError>>,
) -> Result<T, ConformanceError> {
    match tokio::time::timeout(STEP_TIMEOUT, f).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(ConformanceError::Timeout {
            what,
            secs: STEP_TIMEOUT.as_secs(),
        }),
    }
}

/// How many times the runner yields after a step without `expect`.
const BACKGROUND_YIELDS: usize = 64;

/// Lets spawned runtime work (projections) advance as far as it can without
/// waiting on time or a gate, so "not settled" still means "already
/// running": a projection started by a touch is blocked on its gate by the
/// time the next step (say, a `remount`) runs, as it would be on a real host.
/// Deterministic on the single-threaded runtime the runner uses.
async fn let_background_run() {
    for _ in 0..BACKGROUND_YIELDS {
        tokio::task::yield_now().await;
    }
}

/// A `blocked` step: some operation on `path` is blocked on its gate now,
/// or becomes so while background work advances as far as it can without
/// time (the same bounded yields as after a step without `expect`). Fails
/// at once otherwise, so a scenario that relies on work parked at a gate
/// cannot pass when that work never started or never got there.
async fn await_blocked(fixture: &dyn FsFixture, path: &str) -> Result<(), ConformanceError> {
    let reached = tokio::select! {
        biased;
        () = fixture.wait_blocked(path) => true,
        () = let_background_run() => false,
    };
    if reached {
        Ok(())
    } else {
        Err(ConformanceError::NotBlocked {
            path: path.to_owned(),
        })
    }
}

/// Runs one scenario on one provider. Must be called inside a tokio runtime
/// with time enabled.
pub async fn run_scenario<D: Driver>(sc: &Scenario, kind: ProviderKind, driver: D) -> Verdict {
    run_observed(sc, kind, driver, &mut ()).await
}

/// [`run_scenario`], telling `observer` about each step as it finishes.
pub async fn run_observed<D: Driver>(
    sc: &Scenario,
    kind: ProviderKind,
    mut driver: D,
    observer: &mut dyn Observer,
) -> Verdict {
    match run_inner(sc, kind, &mut driver, observer).await {
        Ok(()) => Verdict::Pass,
        Err(reason) => Verdict::Fail(reason),
    }
}

/// The step number a pre-step runs as, and the next default (R-CONF format:
/// numbering restarts after `turn_end`, `resume` and `remount`).
fn step_numbers(action: &Action, next: u32) -> (Option<u32>, u32) {
    match action {
        Action::PreStep(p) => {
            let number = p.step.unwrap_or(next);
            (Some(number), number.saturating_add(1))
        }
        Action::Event(EventKind::TurnEnd) | Action::Resume | Action::Remount(_) => (None, 1),
        _ => (None, next),
    }
}

/// What a step's action needs besides the driver.
struct StepContext<'a> {
    fixture: &'a dyn FsFixture,
    mounting: &'a mut Mounting,
    spec_for: &'a dyn Fn(&Mounting) -> MountSpec,
    /// First components of the scenario's absolute paths (`/work`, …): the
    /// prefixes rewritten inside tool arguments on disk.
    tops: &'a [String],
}

/// The first components of every absolute path the scenario names for its
/// filesystem: `cwd`, `fs` and `write` keys, trusted roots.
fn scenario_tops(sc: &Scenario) -> Vec<String> {
    let written = sc.steps.iter().flat_map(|s| match &s.action {
        Action::Write(w) => w.0.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        _ => Vec::new(),
    });
    let mut tops: Vec<String> = std::iter::once(sc.cwd.clone())
        .chain(sc.fs.0.iter().map(|(k, _)| k.clone()))
        .chain(written)
        .chain(sc.trusted_roots.iter().flatten().cloned())
        .filter_map(|p| {
            let first = p.strip_prefix('/')?.split('/').next()?;
            (!first.is_empty() && first != "." && first != "..").then(|| format!("/{first}"))
        })
        .collect();
    tops.sort();
    tops.dedup();
    tops
}

/// Performs one step's action; returns the pre-step's result, if any.
async fn run_action<D: Driver>(
    driver: &mut D,
    cx: &mut StepContext<'_>,
    step: &Step,
    n: usize,
    number: Option<u32>,
) -> Result<Option<PreStepResult>, ConformanceError> {
    let fixture = cx.fixture;
    match &step.action {
        Action::PreStep(p) => {
            let cancel = p
                .cancel_when_blocked
                .as_deref()
                .map(|path| CancelSignal(fixture.wait_blocked(path)));
            let input = PreStepInput {
                step: number.unwrap_or(1),
                claimed: &p.claimed,
                extra: &p.extra,
                decision: p.decision,
                cancel,
            };
            return timed("pre_step", driver.pre_step(input)).await.map(Some);
        }
        Action::Tool(t) => {
            let input = ToolInput {
                name: t.name.clone(),
                path: t.path.as_deref().map(|p| fixture.paths().map(p)),
                args: t
                    .args
                    .iter()
                    .map(|(k, v)| (k.clone(), fixture.paths().map_in_text(v, cx.tops)))
                    .collect(),
                ok: t.ok,
                cancelled: t.cancelled,
                token: t.token.clone().unwrap_or_else(|| format!("step-{n}")),
                parent: t.parent.clone(),
            };
            timed("tool", driver.tool(&input)).await?;
        }
        Action::Event(e) => timed("event", driver.event(*e)).await?,
        Action::Write(w) => write_entries(fixture, w)?,
        Action::Remove(paths) => {
            for path in paths {
                fixture.remove(path)?;
            }
        }
        Action::Release(path) => fixture.release(path)?,
        Action::Blocked(path) => await_blocked(fixture, path).await?,
        Action::Compact(c) => timed("compact", driver.compact(c)).await?,
        Action::Resume => timed("resume", driver.resume()).await?,
        Action::Remount(r) => {
            if let Some(c) = &r.config {
                cx.mounting.config = Some(c.clone());
            }
            if let Some(e) = &r.env {
                cx.mounting.env = e.clone();
            }
            if let Some(t) = &r.trusted_roots {
                cx.mounting.trusted_roots = Some(t.clone());
            }
            let spec = (cx.spec_for)(cx.mounting);
            timed("remount", driver.remount(&spec)).await?;
        }
    }
    Ok(None)
}

/// Settles and observes after a step with an `expect`.
async fn settle_and_observe<D: Driver>(driver: &mut D) -> Result<HostState, ConformanceError> {
    timed("settle", driver.settle()).await?;
    timed("observe", driver.observe()).await
}

async fn run_inner<D: Driver>(
    sc: &Scenario,
    kind: ProviderKind,
    driver: &mut D,
    observer: &mut dyn Observer,
) -> Result<(), String> {
    if kind == ProviderKind::Disk {
        let uses = sc.memory_only_uses();
        if !uses.is_empty() {
            return Err(format!(
                "refused: memory-only knobs need `providers: [memory]` ({})",
                uses.join("; ")
            ));
        }
    }
    let memory = (kind == ProviderKind::Memory).then(|| MemoryProvider::new(Vec::new()));
    let fixture: Box<dyn FsFixture> = match &memory {
        Some(p) => Box::new(MemoryFixture::new(p.clone())),
        None => Box::new(DiskFixture::new().map_err(|e| e.to_string())?),
    };
    write_entries(fixture.as_ref(), &sc.fs).map_err(|e| format!("fs: {e}"))?;
    let mut mounting = Mounting {
        config: sc.config.clone(),
        env: sc.env.clone(),
        trusted_roots: sc.trusted_roots.clone(),
    };
    // Mount and every remount derive their spec from the same scenario,
    // provider and fixture; only the mounting parts and the tree change.
    let spec_for =
        |mounting: &Mounting| mount_spec(sc, kind, mounting, fixture.as_ref(), memory.as_ref());
    let spec = spec_for(&mounting);
    observer.mounting(&spec);
    timed("mount", driver.mount(&spec))
        .await
        .map_err(|e| format!("mount: {e}"))?;

    let mut next_step: u32 = 1;
    let tops = scenario_tops(sc);
    let mut cx = StepContext {
        fixture: fixture.as_ref(),
        mounting: &mut mounting,
        spec_for: &spec_for,
        tops: &tops,
    };
    for (i, step) in sc.steps.iter().enumerate() {
        let n = i + 1;
        let at = |e: &str| format!("step {n} ({}): {e}", step.action.name());
        cx.fixture.reset_counters();
        let (number, next) = step_numbers(&step.action, next_step);
        next_step = next;
        let (pre, host, error) = match run_action(driver, &mut cx, step, n, number).await {
            Err(e) => (None, None, Some(e.to_string())),
            Ok(pre) if step.expect.is_none() => {
                let_background_run().await;
                (pre, None, None)
            }
            Ok(pre) => match settle_and_observe(driver).await {
                Ok(host) => (pre, Some(host), None),
                Err(e) => (pre, None, Some(e.to_string())),
            },
        };
        observer.step(&StepRecord {
            index: i,
            step,
            step_number: number,
            pre_step: pre.as_ref(),
            host: host.as_ref(),
            error: error.as_deref(),
        });
        if let Some(e) = error {
            return Err(at(&e));
        }
        let (Some(expect), Some(host)) = (&step.expect, host) else {
            continue;
        };
        let mut obs = Observation {
            outcome: pre.as_ref().map(|p| p.outcome),
            batch: pre.as_ref().map(|p| p.batch.clone()),
            entered: pre.and_then(|p| p.entered),
            inbox: host.inbox,
            history: host.history,
            visible: host.visible,
            counters: cx.fixture.counters(),
        };
        unmap_observation(&mut obs, cx.fixture.paths());
        let reasons = matcher::check(expect, &obs);
        if !reasons.is_empty() {
            return Err(at(&reasons.join("; ")));
        }
    }
    Ok(())
}
