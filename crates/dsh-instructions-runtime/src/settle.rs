//! The settled check's memo (issue 46 item 2, decision 0093): per known
//! directory ([`DirId`]), the probes under which [`Gather::settled`] last
//! found it settled, with what that check built (its slots' scope keys,
//! its winners' display paths). A later pass whose probes are the same
//! answers from the record with no scope key, display path or lookup in
//! the visible state or the version cache: those are what the check
//! compared, and neither changes for the directory while its record lives.
//!
//! A record holds while nothing it was checked against has changed: the
//! lane drops a directory's record whenever a visible change or a cache
//! update names one of its scopes, and every record whenever the visible
//! state is rebuilt, a baseline is folded in or the budget's exclusions
//! are replaced ([`SettleMemo::forget`], [`SettleMemo::clear`]). The
//! rest of what the check depends on is compared on every use: the probe
//! classes, each winner's identity and version, the pass's gate, the
//! slots its `skip` leaves out, and the pass's identity dedup.
//!
//! [`Gather::settled`]: crate::scan::Gather::settled

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use dsh_instructions_discovery::provider::{FileIdentity, FileVersion, Probe};
use dsh_instructions_state::{
    Digest, ScopeKey,
    transition::{ProbeClass, SlotOutcome},
    visible::VisibleEntry,
};

use crate::dir_id::DirId;
use crate::scan::{Gather, SeenFiles, SlotKeys, class, display};
use crate::slots::Gate;

/// The memo of one lane (one loop instance): its visible state and cache
/// are what the records were checked against.
#[derive(Debug, Default)]
pub(crate) struct SettleMemo(Mutex<Records>);

/// The records, and what a test reads to show the memo answers.
#[derive(Debug, Default)]
pub(crate) struct Records {
    by_dir: HashMap<DirId, Record, foldhash::fast::RandomState>,
    /// Directories found settled from their record.
    pub(crate) hits: u64,
}

/// One directory found settled.
#[derive(Debug)]
pub(crate) struct Record {
    /// The probe class of each candidate name.
    pub classes: Box<[ProbeClass]>,
    pub gate: Gate,
    /// The scope key of each layout slot, in layout order.
    pub scopes: Box<[ScopeKey]>,
    /// Bit `i`: the pass's `skip` left slot `i` out.
    pub skipped: u64,
    pub winners: Box<[Winner]>,
}

/// A slot's winner the version cache vouched for.
#[derive(Debug)]
pub(crate) struct Winner {
    /// Its index among the candidate names.
    pub candidate: usize,
    pub identity: FileIdentity,
    pub version: FileVersion,
    /// Its display path, made when the record was.
    pub display: Arc<str>,
}

impl SettleMemo {
    /// The records (a poisoned lock still holds whole records: each is
    /// inserted or removed in one step).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Records> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops the record of the directory `rel`: one of its scopes changed.
    pub(crate) fn forget(&self, rel: &str) {
        if let Some(id) = DirId::of(rel) {
            self.lock().by_dir.remove(&id);
        }
    }

    /// Drops every record.
    pub(crate) fn clear(&self) {
        self.lock().by_dir.clear();
    }
}

impl Records {
    pub(crate) fn get(&self, dir: DirId) -> Option<&Record> {
        self.by_dir.get(&dir)
    }

    pub(crate) fn insert(&mut self, dir: DirId, record: Record) {
        self.by_dir.insert(dir, record);
    }

    pub(crate) fn remove(&mut self, dir: DirId) {
        self.by_dir.remove(&dir);
    }
}

/// Bit `i` of a record's slot mask ([`Record::skipped`]).
fn slot_bit(i: usize) -> u64 {
    1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

impl Gather<'_> {
    /// Whether a probed directory shows exactly what the model already sees,
    /// so that building its scan could produce no transition and no cache
    /// update (with rules on, only when `rules_settled` says its rules
    /// have nothing to show either): every reported slot is absent where
    /// nothing loaded is visible, or its winner is a file the version cache vouches for (R-STATE-8)
    /// whose identity and trimmed content no earlier file of the pass
    /// shares. Then the winners join `seen` (later directories dedup against
    /// them as on the full path) and the caller skips the directory. Anything
    /// else — unavailable, new, changed, a duplicate, no cache — returns
    /// false with `seen` untouched, and the full path decides.
    ///
    /// This is what keeps an unchanged revalidation at the cost of its
    /// probes (issue 7): the full path allocates a scan, slots and
    /// transitions per directory only to conclude "no change".
    ///
    /// It runs for every known directory on every pass, so it allocates
    /// nothing on the way to "no": the classes live on the stack, the scope
    /// keys in `keys` (one per slot, rewritten in place; see [`SlotKeys`]),
    /// and a display path is built only for a winner the cache vouches for.
    ///
    /// With `memo` (the lane's [`SettleMemo`](crate::settle::SettleMemo)
    /// records and this directory's id), a directory whose record still
    /// matches its probes is settled from the record, and a check that
    /// runs leaves its verdict there (decision 0093).
    #[allow(clippy::too_many_arguments)] // one pass's context, each used once
    pub(crate) fn settled(
        &self,
        rel: &str,
        names: &[String],
        probes: &[Probe],
        rules_settled: bool,
        skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
        seen: &mut SeenFiles,
        keys: &mut SlotKeys,
        memo: Option<(&mut Records, DirId)>,
    ) -> bool {
        if self.vouching().is_none() {
            return false;
        }
        // A directory's rules are not covered by its candidates' probes
        // (its rules directories have stamps of their own): with rules on,
        // a directory settles only when the caller found nothing of its
        // rules to look at (`rules_settled`: no rules directory, no rule
        // of it shown); every other takes the full path, so a rule's edit,
        // removal or new file is never missed (R-RULE-4).
        if !self.config.rule_formats().is_empty() && !rules_settled {
            return false;
        }
        if probes.len() != names.len() {
            return false;
        }
        let mut on_stack = [ProbeClass::Absent; 8];
        let on_heap: Vec<ProbeClass>;
        let classes: &[ProbeClass] = if probes.len() <= on_stack.len() {
            for (c, p) in on_stack.iter_mut().zip(probes) {
                *c = class(p);
            }
            &on_stack[..probes.len()]
        } else {
            on_heap = probes.iter().map(class).collect();
            &on_heap
        };
        let Some((records, dir)) = memo else {
            return self.check_settled(rel, names, probes, classes, skip, seen, keys, None);
        };
        if let Some(record) = records.get(dir)
            && self.settled_from(record, classes, probes, skip, seen)
        {
            records.hits += 1;
            return true;
        }
        let mut record = None;
        let settled = self.check_settled(
            rel,
            names,
            probes,
            classes,
            skip,
            seen,
            keys,
            Some(&mut record),
        );
        match record {
            Some(record) if settled => records.insert(dir, record),
            _ => records.remove(dir),
        }
        settled
    }

    /// Whether `record` still answers for a directory probed as `classes`
    /// and `probes` in this pass (the memo's contract, decision 0093):
    /// same gate, same classes, the same slots left out, and each winner
    /// the same file at the same version and new to the pass. Then its
    /// winners join `seen`, as [`Gather::check_settled`]'s do.
    fn settled_from(
        &self,
        record: &Record,
        classes: &[ProbeClass],
        probes: &[Probe],
        skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
        seen: &mut SeenFiles,
    ) -> bool {
        if record.gate != self.gate
            || *record.classes != *classes
            || record.scopes.len() != self.layout.slots.len()
        {
            return false;
        }
        for (i, scope) in record.scopes.iter().enumerate() {
            if skip(scope) != (record.skipped & slot_bit(i) != 0) {
                return false;
            }
        }
        for w in &record.winners {
            let Some(Probe::Present(present)) = probes.get(w.candidate) else {
                return false;
            };
            if present.identity != w.identity
                || present.version != w.version
                || seen.first.contains_key(&w.identity)
            {
                return false;
            }
        }
        for w in &record.winners {
            seen.first
                .insert(w.identity.clone(), Arc::clone(&w.display));
        }
        true
    }

    /// The check of [`Gather::settled`] itself, once the probes are
    /// classed. With `record`, a directory found settled leaves there what
    /// a later pass needs to answer from it ([`Gather::settled_from`]).
    #[allow(clippy::too_many_arguments)] // one pass's context, each used once
    fn check_settled(
        &self,
        rel: &str,
        names: &[String],
        probes: &[Probe],
        classes: &[ProbeClass],
        skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
        seen: &mut SeenFiles,
        keys: &mut SlotKeys,
        record: Option<&mut Option<Record>>,
    ) -> bool {
        /// Winners per directory kept on the stack; more (never with the
        /// shipped layouts) take the full path.
        const MAX_WINNERS: usize = 4;
        let Some((cache, visible)) = self.vouching() else {
            return false;
        };
        // Identity, trimmed digest, display path and candidate index.
        type Found<'p> = (&'p FileIdentity, Digest, Arc<str>, usize);
        let mut winners: [Option<Found<'_>>; MAX_WINNERS] = [const { None }; MAX_WINNERS];
        let mut count = 0;
        let mut skipped = 0u64;
        keys.fit(self.layout.slots.len());
        for (n, ((slot, rule), scope)) in
            self.layout.slots.iter().zip(keys.0.iter_mut()).enumerate()
        {
            scope.set_project(rel, slot);
            let scope = &*scope;
            if skip(scope) {
                skipped |= slot_bit(n);
                continue;
            }
            if rule.end() > classes.len() {
                return false;
            }
            let shown = visible.get(scope);
            match rule.select(classes, self.gate) {
                SlotOutcome::Absent if shown.is_some_and(VisibleEntry::is_loaded) => return false,
                SlotOutcome::Absent => {}
                SlotOutcome::Unavailable => return false,
                SlotOutcome::Winner { candidate: i } => {
                    let Probe::Present(present) = &probes[i] else {
                        return false;
                    };
                    if count == MAX_WINNERS {
                        return false;
                    }
                    let path = display(rel, &names[i]);
                    let Some(entry) = cache.fresh(scope, &path, &present.version, shown) else {
                        return false;
                    };
                    // Import targets need their own probes (R-IMP-4): the
                    // full path checks them.
                    if !entry.imports.is_empty() {
                        return false;
                    }
                    let identity = &present.identity;
                    let trimmed = entry.trimmed_digest;
                    if seen.first.contains_key(identity)
                        || winners
                            .iter()
                            .flatten()
                            .any(|(id, t, _, _)| *id == identity || *t == trimmed)
                    {
                        return false;
                    }
                    winners[count] = Some((identity, trimmed, path, i));
                    count += 1;
                }
            }
        }
        // A record needs a bit per slot; a layout of more (none ships)
        // is checked every time.
        if let Some(record) = record
            && self.layout.slots.len() <= 64
        {
            let kept: Option<Box<[Winner]>> = winners
                .iter()
                .flatten()
                .map(
                    |(identity, _, display, candidate)| match &probes[*candidate] {
                        Probe::Present(present) => Some(Winner {
                            candidate: *candidate,
                            identity: (*identity).clone(),
                            version: present.version,
                            display: Arc::clone(display),
                        }),
                        _ => None,
                    },
                )
                .collect();
            *record = kept.map(|winners| Record {
                classes: classes.into(),
                gate: self.gate,
                scopes: keys.0[..self.layout.slots.len()].into(),
                skipped,
                winners,
            });
        }
        for (identity, _, path, _) in winners.into_iter().flatten() {
            seen.first.insert(identity.clone(), path);
        }
        true
    }
}
