//! The filesystem state the clones of one `MemoryProvider` share, behind
//! one lock: the nodes, the gates and the operations blocked on them, and
//! the guard that unblocks an operation when it is released, cancelled or
//! dropped. Separate because it is the one piece of shared mutable state;
//! everything that touches it goes through `lock`.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::nodes::{Fault, FsOp, MemKind, OpCounters};
use crate::provider::{Cancelled, Unavailable};

#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Woken on every gate and blocked-set change.
    pub(super) changed: Notify,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) nodes: BTreeMap<Utf8PathBuf, Entry>,
    /// Gates live apart from nodes: writing or removing a path does not open
    /// its gate, only `release` or a cancellation does.
    pub(super) gates: HashMap<Utf8PathBuf, Gate>,
    /// Paths an operation is currently blocked on (with multiplicity).
    pub(super) blocked: HashMap<Utf8PathBuf, usize>,
    pub(super) counters: OpCounters,
    pub(super) latency: Option<Duration>,
    pub(super) next_version: u64,
    pub(super) next_gate: u64,
}

#[derive(Debug)]
pub(super) struct Entry {
    pub(super) kind: MemKind,
    pub(super) fault: Option<Fault>,
    pub(super) stale_size: Option<u64>,
    pub(super) version: u64,
}

#[derive(Debug)]
pub(super) struct Gate {
    pub(super) op: FsOp,
    pub(super) id: u64,
    /// Set once an operation blocks on it: later operations pass.
    pub(super) blocking: bool,
}

pub(super) fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A panicking test thread must not wedge every other user of the fs.
    shared.state.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) enum GateOrFault {
    Gate {
        gate: Utf8PathBuf,
        id: u64,
        chain: Vec<Utf8PathBuf>,
    },
    Fault(Unavailable),
}

impl State {
    pub(super) fn bump_version(&mut self) -> u64 {
        self.next_version += 1;
        self.next_version
    }

    /// The first armed gate, else the first fault, for `op` along `chain`.
    /// Arming is consumed here, under the lock, so only one operation blocks.
    pub(super) fn gate_or_fault(&mut self, chain: &[Utf8PathBuf], op: FsOp) -> Option<GateOrFault> {
        for path in chain {
            if let Some(gate) = self.gates.get_mut(path)
                && gate.op == op
                && !gate.blocking
            {
                gate.blocking = true;
                let id = gate.id;
                for p in chain {
                    *self.blocked.entry(p.clone()).or_default() += 1;
                }
                return Some(GateOrFault::Gate {
                    gate: path.clone(),
                    id,
                    chain: chain.to_vec(),
                });
            }
        }
        chain.iter().find_map(|path| {
            let fault = self.nodes.get(path)?.fault?;
            (fault.op == op).then(|| GateOrFault::Fault(fault.error.unavailable()))
        })
    }
}

impl Entry {
    pub(super) fn dir(version: u64) -> Self {
        Self {
            kind: MemKind::Dir,
            fault: None,
            stale_size: None,
            version,
        }
    }
}

/// An operation blocked on a gate. Dropping it (cancelled, released, or the
/// future dropped) unregisters the operation and spends the gate.
pub(super) struct BlockGuard<'a> {
    pub(super) shared: &'a Shared,
    pub(super) gate: Utf8PathBuf,
    pub(super) id: u64,
    pub(super) chain: Vec<Utf8PathBuf>,
}

impl BlockGuard<'_> {
    pub(super) async fn wait(self, cancel: &CancellationToken) -> Result<(), Cancelled> {
        loop {
            let mut notified = pin!(self.shared.changed.notified());
            notified.as_mut().enable();
            let open = lock(self.shared)
                .gates
                .get(&self.gate)
                .is_none_or(|g| g.id != self.id);
            if open {
                return Ok(());
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Cancelled),
                () = notified => {}
            }
        }
    }
}

impl Drop for BlockGuard<'_> {
    fn drop(&mut self) {
        let mut state = lock(self.shared);
        if state.gates.get(&self.gate).is_some_and(|g| g.id == self.id) {
            state.gates.remove(&self.gate);
        }
        for path in &self.chain {
            if let Some(count) = state.blocked.get_mut(path) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    state.blocked.remove(path);
                }
            }
        }
        drop(state);
        self.shared.changed.notify_waiters();
    }
}

/// Removes `path` and everything below it; `true` if anything was there.
pub(super) fn remove_subtree(nodes: &mut BTreeMap<Utf8PathBuf, Entry>, path: &Utf8Path) -> bool {
    // Paths order component-wise, so a subtree is one contiguous range.
    let doomed: Vec<Utf8PathBuf> = nodes
        .range::<Utf8Path, _>((Bound::Included(path), Bound::Unbounded))
        .take_while(|(key, _)| key.starts_with(path))
        .map(|(key, _)| key.clone())
        .collect();
    for key in &doomed {
        nodes.remove(key);
    }
    !doomed.is_empty()
}
