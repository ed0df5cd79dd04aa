//! Gather phase: probe and read the candidates of a set of directories
//! through the provider (R-DISC-3 .. R-DISC-6). Nothing is mutated here, so a
//! cancellation anywhere leaves no trace (R-DISC-8).

use std::collections::HashMap;
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::{
    CancellationToken, Cancelled, FileIdentity, FileVersion, FsProvider, Probe, ReadOutcome,
    Unavailable,
};
use dsh_instructions_state::{
    CacheEntry, CandidatePolicy, Config, Digest, ProbeClass, SLOT_BASE, SLOT_LOCAL, ScopeKey,
    SlotOutcome, VersionCache, VisibleState, select_first_wins,
};

/// One candidate file name probed in a directory.
#[derive(Debug, Clone)]
pub(crate) struct CandidateProbe {
    pub name: String,
    /// Whether the name comes from the local (overlay) list.
    pub local: bool,
    pub probe: Probe,
}

/// A slot's winner whose content is known (read now, or vouched for by the
/// version cache).
#[derive(Debug, Clone)]
pub(crate) struct LoadedFile {
    /// Candidate file name that won the slot.
    pub name: String,
    /// Display path (project-relative, or the home label for the user file).
    pub display: String,
    /// Content, `None` when the version cache made the read unnecessary.
    pub text: Option<Arc<str>>,
    pub digest: Digest,
    pub trimmed: Digest,
    pub version: FileVersion,
    pub identity: FileIdentity,
    /// Raw bytes of the file, as read or as reported by the cache's probe.
    pub bytes: u64,
}

/// What a slot holds after gathering.
#[derive(Debug, Clone)]
pub(crate) enum SlotState {
    Loaded(LoadedFile),
    /// Loaded, but the same file (by identity) or the same trimmed content as
    /// an earlier kept file: not rendered (R-DISC-3, R-CFG-7).
    Duplicate {
        file: LoadedFile,
        of: String,
    },
    Absent,
    Unavailable(Unavailable),
}

#[derive(Debug, Clone)]
pub(crate) struct SlotScan {
    pub scope: ScopeKey,
    pub state: SlotState,
}

/// Everything gathered for one directory (or for the user-global file).
#[derive(Debug, Clone)]
pub(crate) struct DirScan {
    /// `None` for the user-global pseudo-directory.
    pub rel: Option<String>,
    pub candidates: Vec<CandidateProbe>,
    pub slots: Vec<SlotScan>,
}

/// Read-only context of one gather pass.
pub(crate) struct Gather<'a> {
    pub provider: &'a dyn FsProvider,
    pub config: &'a Config,
    pub cancel: &'a CancellationToken,
    /// Used to skip reads whose result is already visible (R-STATE-8).
    pub cache: Option<(&'a VersionCache<FileVersion>, &'a VisibleState)>,
}

/// Identity dedup across one pass: first (broadest) display path per file.
#[derive(Debug, Default)]
pub(crate) struct SeenFiles(HashMap<FileIdentity, String>);

fn class(probe: &Probe) -> ProbeClass {
    match probe {
        Probe::Present(_) => ProbeClass::Present,
        Probe::Absent => ProbeClass::Absent,
        Probe::Unavailable(_) => ProbeClass::Unavailable,
    }
}

fn unavailable_reason(probes: &[&CandidateProbe]) -> Unavailable {
    probes
        .iter()
        .find_map(|c| match &c.probe {
            Probe::Unavailable(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap_or_else(|| Unavailable::Io("unavailable".into()))
}

impl Gather<'_> {
    /// Gathers the user-global file `<home>/AGENTS.md` (R-HOME-4).
    pub async fn user_global(
        &self,
        file: &Utf8Path,
        label: &str,
        seen: &mut SeenFiles,
    ) -> Result<DirScan, Cancelled> {
        let probe = self.provider.probe(file, self.cancel).await?;
        let scope = ScopeKey::user_global();
        let candidate = CandidateProbe {
            name: "AGENTS.md".into(),
            local: false,
            probe,
        };
        let state = self
            .load(&scope, file, &candidate, label.to_owned())
            .await?;
        let mut scan = DirScan {
            rel: None,
            candidates: vec![candidate],
            slots: vec![SlotScan { scope, state }],
        };
        dedup(&mut scan, seen);
        Ok(scan)
    }

    /// Gathers one project directory: probes every candidate, picks slot
    /// winners per the policy (R-CFG-7, R-DISC-5) and reads them.
    /// `skip` lists slots that must not be probed (left out by the budget of
    /// the instance's render, R-RT-10); they are reported as absent-free
    /// "not scanned" by being left out of `slots`.
    pub async fn directory(
        &self,
        abs: &Utf8Path,
        rel: &str,
        skip: &(dyn Fn(&ScopeKey) -> bool + Sync),
        seen: &mut SeenFiles,
    ) -> Result<DirScan, Cancelled> {
        let cfg = self.config;
        let names: Vec<String> = cfg
            .instruction_file_candidates
            .iter()
            .chain(cfg.local_instruction_file_candidates.iter())
            .cloned()
            .collect();
        let probes = self.provider.probe_many(abs, &names, self.cancel).await?;
        let base_len = cfg.instruction_file_candidates.len();
        let candidates: Vec<CandidateProbe> = names
            .into_iter()
            .zip(probes)
            .enumerate()
            .map(|(i, (name, probe))| CandidateProbe {
                name,
                local: i >= base_len,
                probe,
            })
            .collect();
        let mut slots = Vec::new();
        match cfg.candidate_policy {
            CandidatePolicy::FirstWins => {
                let lists: [(&str, &[CandidateProbe]); 2] = [
                    (SLOT_BASE, &candidates[..base_len]),
                    (SLOT_LOCAL, &candidates[base_len..]),
                ];
                for (slot, list) in lists {
                    if list.is_empty() {
                        continue;
                    }
                    let scope = ScopeKey::project(rel, slot);
                    if skip(&scope) {
                        continue;
                    }
                    let classes: Vec<ProbeClass> = list.iter().map(|c| class(&c.probe)).collect();
                    let state = match select_first_wins(&classes) {
                        SlotOutcome::Winner { candidate } => {
                            let c = &list[candidate];
                            let path = abs.join(&c.name);
                            self.load(&scope, &path, c, display(rel, &c.name)).await?
                        }
                        SlotOutcome::Absent => SlotState::Absent,
                        SlotOutcome::Unavailable => SlotState::Unavailable(unavailable_reason(
                            &list.iter().collect::<Vec<_>>(),
                        )),
                    };
                    slots.push(SlotScan { scope, state });
                }
            }
            CandidatePolicy::AllDistinct => {
                for c in &candidates {
                    let scope = ScopeKey::project(rel, &c.name);
                    if skip(&scope) {
                        continue;
                    }
                    let state = match &c.probe {
                        Probe::Present(_) => {
                            self.load(&scope, &abs.join(&c.name), c, display(rel, &c.name))
                                .await?
                        }
                        Probe::Absent => SlotState::Absent,
                        Probe::Unavailable(u) => SlotState::Unavailable(u.clone()),
                    };
                    slots.push(SlotScan { scope, state });
                }
            }
        }
        let mut scan = DirScan {
            rel: Some(rel.to_owned()),
            candidates,
            slots,
        };
        dedup(&mut scan, seen);
        Ok(scan)
    }

    /// Reads a present winner, or takes its digests from the version cache
    /// when version and visible state both match (R-STATE-8).
    async fn load(
        &self,
        scope: &ScopeKey,
        path: &Utf8Path,
        candidate: &CandidateProbe,
        display: String,
    ) -> Result<SlotState, Cancelled> {
        let present = match &candidate.probe {
            Probe::Present(p) => p,
            Probe::Absent => return Ok(SlotState::Absent),
            Probe::Unavailable(u) => return Ok(SlotState::Unavailable(u.clone())),
        };
        if let Some((cache, visible)) = self.cache
            && let Some(entry) = cache.fresh(scope, &display, &present.version, visible.get(scope))
        {
            return Ok(SlotState::Loaded(LoadedFile {
                name: candidate.name.clone(),
                display,
                text: None,
                digest: entry.digest,
                trimmed: entry.trimmed_digest,
                version: present.version,
                identity: present.identity.clone(),
                bytes: present.size,
            }));
        }
        let max = self.config.max_source_bytes;
        if present.size > max {
            return Ok(SlotState::Unavailable(Unavailable::TooLarge { limit: max }));
        }
        Ok(
            match self.provider.read_text(path, max, self.cancel).await? {
                ReadOutcome::Loaded(loaded) => SlotState::Loaded(LoadedFile {
                    name: candidate.name.clone(),
                    display,
                    digest: Digest::of(&loaded.text),
                    trimmed: Digest::of_trimmed(&loaded.text),
                    version: loaded.version,
                    identity: loaded.identity,
                    bytes: loaded.bytes_read,
                    text: Some(Arc::from(loaded.text)),
                }),
                // Present at the probe, gone at the read: treat as unavailable
                // for this pass so a race never removes loaded instructions;
                // the next pass sees the settled state.
                ReadOutcome::Absent => {
                    SlotState::Unavailable(Unavailable::Io("changed while being read".into()))
                }
                ReadOutcome::Unavailable(u) => SlotState::Unavailable(u),
            },
        )
    }
}

/// Identity dedup against broader files, then trimmed-content dedup within
/// the directory (R-DISC-3, R-CFG-7).
fn dedup(scan: &mut DirScan, seen: &mut SeenFiles) {
    let mut kept: Vec<(Digest, String)> = Vec::new();
    for slot in &mut scan.slots {
        let SlotState::Loaded(file) = &slot.state else {
            continue;
        };
        let of = if let Some(first) = seen.0.get(&file.identity) {
            Some(first.clone())
        } else {
            kept.iter()
                .find(|(d, _)| *d == file.trimmed)
                .map(|(_, p)| p.clone())
        };
        match of {
            Some(of) => {
                let file = file.clone();
                slot.state = SlotState::Duplicate { file, of };
            }
            None => {
                seen.0.insert(file.identity.clone(), file.display.clone());
                kept.push((file.trimmed, file.display.clone()));
            }
        }
    }
}

/// Project-relative display path of a candidate in directory `rel`.
pub(crate) fn display(rel: &str, name: &str) -> String {
    if rel == "." {
        name.to_owned()
    } else {
        format!("{rel}/{name}")
    }
}

/// Absolute path of a project directory given by its root-relative key.
pub(crate) fn dir_abs(root: &Utf8Path, rel: &str) -> Utf8PathBuf {
    if rel == "." {
        root.to_owned()
    } else {
        root.join(rel)
    }
}

/// The cache entry a loaded file would leave behind.
pub(crate) fn cache_entry(file: &LoadedFile) -> CacheEntry<FileVersion> {
    CacheEntry {
        path: file.display.clone(),
        version: file.version,
        digest: file.digest,
        trimmed_digest: file.trimmed,
    }
}
