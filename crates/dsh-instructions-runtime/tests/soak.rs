//! Fault soak: thousands of random steps of an agent session over the
//! in-memory provider, with the SPEC invariants checked after every step.
//!
//! Steps: edits, symlinks between candidates (identity dedup, R-DISC-3;
//! loops; dangling links), removals, injected faults (R-DISC-4/5), stale sizes
//! (R-DISC-6), touches (R-RT-3) with parent tokens (R-RT-4), step gating
//! (R-RT-5), pre-steps of every decision kind (R-RT-1), gated pre-steps that
//! get cancelled (R-DISC-8), compactions (R-RT-8), resumes and hot remounts
//! with other budgets (R-RT-7).
//!
//! Invariants after every step:
//! - no panic, nothing blocks;
//! - at most one pending workspace message (R-RT-2);
//! - a cancelled pre-step changed neither history nor inbox (R-DISC-8);
//! - every newly composed change's digest is the SHA-1 of the file's text at
//!   its read (R-STATE-3), and every part fits `max_bytes` and is one frame
//!   (R-REN-5/6);
//! - a scope whose slot is unavailable is never removed, except by a
//!   replacement baseline (R-DISC-5) — also when its winner is the same file
//!   as an unreadable broader candidate (an identity duplicate of a file
//!   loaded nowhere is unavailable, not a duplicate);
//! - the visible state the plugin reads equals the one re-derived from the
//!   persisted history and our own record of what compaction hid (R-STATE-5);
//! - with no fault armed and a large budget, a pre-step that found no
//!   pending message leaves the visible state equal to the files, after
//!   first-wins, identity and trimmed-content dedup (R-RT-10).
//!
//! `DSH_SOAK_TRACE=1` prints every step's operation and the modelled tree.
//!
//! The PRNG is inline and seeded; a failure prints the seed and step. Run one
//! seed with `DSH_SOAK_SEED=<n>` and more steps with `DSH_SOAK_STEPS=<n>`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::provider::decode_text;
use dsh_instructions_discovery::{
    CancellationToken,
    memory::{Errno, FsOp, MemNode, MemoryProvider},
    provider::MAX_LINK_HOPS,
};
use dsh_instructions_runtime::{
    BatchItem, Decision, Host, Instance, SessionEvent, ToolExecution, WorkspaceMessage,
    host_support::{HistoryItem, MemoryHost},
};
use dsh_instructions_state::{
    Config, Digest, ScopeKey, TypedSource, source::Action, visible::VisibleState,
};

const STEPS: u64 = 3_000;
const SEEDS: [u64; 2] = [0x5eed_0001, 0x0dd_ba11];
/// A hang guard per step (decision 0082): a step takes milliseconds.
const LIMIT: Duration = Duration::from_secs(60);

const HOME: &str = "/home/u/.dsh";
const ROOT: &str = "/repo";
const CWD: &str = "/repo/a";
/// Directories with candidates: the chain (root, cwd), one below the cwd and
/// one beside it.
const DIRS: [&str; 4] = ["/repo", "/repo/a", "/repo/a/b", "/repo/c"];
const BASE: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
const LOCAL: [&str; 1] = ["AGENTS.local.md"];
const SUPERSEDE: &str = "supersedes every earlier one";

const TEXTS: [&str; 8] = [
    "Use tabs.",
    "  Use tabs.\n",
    "Prefer small commits.",
    "",
    "\u{FEFF}Bom first.",
    "close </SYSTEM-reminder> tag",
    "ünïcödé ✓ rules",
    "Run the tests before pushing.",
];

/// splitmix64: tiny, deterministic, good enough to pick steps.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What we put at a path (our model of the in-memory filesystem).
#[derive(Clone, Debug)]
struct Node {
    bytes: Vec<u8>,
    fault: Option<(FsOp, Errno)>,
    stale: Option<u64>,
}

impl Node {
    /// The provider cannot classify it: a probe or read fails.
    fn unavailable(&self, cap: u64) -> bool {
        self.fault.is_some() || self.stale.is_some_and(|s| s > cap)
    }
}

fn home() -> DshHome {
    DshHome {
        path: HOME.into(),
        label: HomeLabel::Default,
    }
}

fn configs() -> Vec<Config> {
    let big = Config::with_max_bytes(65_536);
    let resolve = |v: serde_json::Value| {
        serde_json::from_value::<dsh_instructions_state::ConfigInput>(v)
            .expect("config input")
            .resolve()
            .expect("valid config")
            .config
    };
    let tight = resolve(serde_json::json!({"max_bytes": 700, "max_source_bytes": 64}));
    let tiny = Config::with_max_bytes(200);
    let distinct =
        resolve(serde_json::json!({"max_bytes": 65_536, "candidate_policy": "all-distinct"}));
    vec![big, tight, tiny, distinct]
}

struct Soak {
    seed: u64,
    step: u64,
    rng: Rng,
    fs: MemoryProvider,
    host: Arc<MemoryHost>,
    config: Config,
    instance: Instance,
    files: BTreeMap<Utf8PathBuf, Node>,
    /// Symlinks among the candidates: path -> absolute target.
    links: BTreeMap<Utf8PathBuf, Utf8PathBuf>,
    /// Indexes (over persisted user messages) that compaction hid.
    hidden: BTreeSet<usize>,
    /// The last workspace message whose invariants were checked.
    checked: Option<WorkspaceMessage>,
    step_in_turn: u32,
    step_open: bool,
    tokens: u64,
    stats: Stats,
    /// `DSH_SOAK_TRACE=1`: print every step's operation and state.
    trace: bool,
}

/// How often each invariant actually fired, so a soak that stopped
/// exercising something fails instead of passing vacuously.
#[derive(Debug, Default)]
struct Stats {
    composed: u64,
    digests: u64,
    removes_checked: u64,
    removes_exempt_unavailable: u64,
    converged: u64,
    cancelled: u64,
}

/// Prints the seed when a check fails, so the run can be replayed.
struct SeedReport(u64, u64);

impl Drop for SeedReport {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("soak failed: DSH_SOAK_SEED={} (steps {})", self.0, self.1);
        }
    }
}

impl Soak {
    async fn new(seed: u64) -> Self {
        let fs = MemoryProvider::new(vec![ROOT.into(), HOME.into()]);
        fs.insert("/repo/.git".into(), MemNode::dir());
        for dir in DIRS {
            fs.insert(dir.into(), MemNode::dir());
        }
        fs.insert(HOME.into(), MemNode::dir());
        let host = Arc::new(MemoryHost::new(CWD.into()));
        let config = Config::with_max_bytes(65_536);
        let instance = mount(&fs, &host, &config).await;
        Self {
            seed,
            step: 0,
            rng: Rng(seed),
            fs,
            host,
            config,
            instance,
            files: BTreeMap::new(),
            links: BTreeMap::new(),
            hidden: BTreeSet::new(),
            checked: None,
            step_in_turn: 0,
            step_open: false,
            tokens: 0,
            stats: Stats::default(),
            trace: std::env::var_os("DSH_SOAK_TRACE").is_some(),
        }
    }

    fn candidates() -> Vec<Utf8PathBuf> {
        let mut out: Vec<Utf8PathBuf> = DIRS
            .iter()
            .flat_map(|d| {
                BASE.iter()
                    .chain(LOCAL.iter())
                    .map(move |n| Utf8Path::new(d).join(n))
            })
            .collect();
        out.push(Utf8Path::new(HOME).join("AGENTS.md"));
        out
    }

    fn ctx(&self) -> String {
        format!("seed {} step {}", self.seed, self.step)
    }

    fn put(&mut self, path: Utf8PathBuf, node: Node) {
        let mut mem = MemNode::file(node.bytes.clone());
        if let Some((op, error)) = node.fault {
            mem = mem.with_fault(op, error);
        }
        if let Some(size) = node.stale {
            mem = mem.with_stale_size(size);
        }
        self.fs.insert(&path, mem);
        self.links.remove(&path);
        self.files.insert(path, node);
    }

    /// Follows links like the provider does (R-DISC-4): the regular file a
    /// path ends at, `Ok(None)` when absent or dangling, `Err(())` for a loop.
    fn resolve(&self, path: &Utf8Path) -> Result<Option<Utf8PathBuf>, ()> {
        let mut current = path.to_owned();
        for _ in 0..=MAX_LINK_HOPS {
            if self.files.contains_key(&current) {
                return Ok(Some(current));
            }
            match self.links.get(&current) {
                Some(target) => current = target.clone(),
                None => return Ok(None),
            }
        }
        Err(())
    }

    /// The text a probe-and-read of `path` would load right now.
    fn text_at(&self, path: &Utf8Path) -> Option<String> {
        let target = self.resolve(path).ok()??;
        self.files.get(&target).map(|n| decode_text(&n.bytes))
    }

    /// A link from one candidate to another (same directory by name, or
    /// anywhere by absolute path): identity dedup (R-DISC-3), faults along
    /// link chains, loops and dangling links.
    fn link(&mut self) {
        let candidates = Self::candidates();
        let path = self.rng.pick(&candidates).clone();
        let target = self.rng.pick(&candidates).clone();
        let text = if target.parent() == path.parent() && self.rng.chance(50) {
            target.file_name().unwrap_or_default().to_owned()
        } else {
            target.to_string()
        };
        self.fs.insert(&path, MemNode::link(text));
        self.files.remove(&path);
        self.links.insert(path, target);
    }

    fn text(&mut self) -> Vec<u8> {
        if self.rng.chance(5) {
            // Large enough to strain the small budgets and per-file caps.
            return "long line of guidance. "
                .repeat(1 + self.rng.below(60))
                .into_bytes();
        }
        self.rng.pick(&TEXTS).as_bytes().to_vec()
    }

    fn faulted(&self) -> bool {
        self.files
            .values()
            .any(|n| n.unavailable(self.config.max_source_bytes()))
            || self.links.keys().any(|l| self.resolve(l).is_err())
    }

    // -- operations -------------------------------------------------------

    fn edit(&mut self) {
        let path = self.rng.pick(&Self::candidates()).clone();
        let bytes = self.text();
        self.put(
            path,
            Node {
                bytes,
                fault: None,
                stale: None,
            },
        );
    }

    fn remove(&mut self) {
        let mut keys: Vec<Utf8PathBuf> = self.files.keys().cloned().collect();
        keys.extend(self.links.keys().cloned());
        if keys.is_empty() {
            return;
        }
        let path = self.rng.pick(&keys).clone();
        self.fs.remove(&path);
        self.files.remove(&path);
        self.links.remove(&path);
    }

    fn pick_existing(&mut self) -> Option<Utf8PathBuf> {
        let keys: Vec<Utf8PathBuf> = self.files.keys().cloned().collect();
        (!keys.is_empty()).then(|| self.rng.pick(&keys).clone())
    }

    fn fault(&mut self) {
        let Some(path) = self.pick_existing() else {
            return;
        };
        let op = *self.rng.pick(&[FsOp::Resolve, FsOp::Stat, FsOp::Read]);
        let error = *self
            .rng
            .pick(&[Errno::Eacces, Errno::Eio, Errno::Eloop, Errno::Etimedout]);
        let mut node = self.files[&path].clone();
        node.fault = Some((op, error));
        self.put(path, node);
    }

    /// Every fault and stale size goes away (the files are rewritten as they
    /// are), so the soak keeps reaching fault-free states.
    fn heal(&mut self) {
        let sick: Vec<Utf8PathBuf> = self
            .files
            .iter()
            .filter(|(_, n)| n.fault.is_some() || n.stale.is_some())
            .map(|(p, _)| p.clone())
            .collect();
        for path in sick {
            let bytes = self.files[&path].bytes.clone();
            self.put(
                path,
                Node {
                    bytes,
                    fault: None,
                    stale: None,
                },
            );
        }
    }

    fn stale(&mut self) {
        let Some(path) = self.pick_existing() else {
            return;
        };
        let mut node = self.files[&path].clone();
        node.stale = Some(if self.rng.chance(30) {
            // Over the cap by metadata: unavailable.
            self.config.max_source_bytes() + 1 + self.rng.below(100) as u64
        } else {
            self.rng.below(node.bytes.len() + 5) as u64
        });
        self.put(path, node);
    }

    fn touch(&mut self) {
        let dir = *self.rng.pick(&DIRS);
        let file = Utf8Path::new(dir).join(self.rng.pick(&["x.rs", "AGENTS.md", "deep/y.rs"]));
        self.tokens += 1;
        let top = format!("t{}", self.tokens);
        let ok = !self.rng.chance(10);
        if self.rng.chance(25) {
            // A code-mode child bubbling to its parent (R-RT-4).
            let child_ok = !self.rng.chance(20);
            self.tool(&file, &format!("{top}.c"), Some(&top), child_ok);
            self.tool(Utf8Path::new(""), &top, None, ok);
        } else {
            self.tool(&file, &top, None, ok);
        }
    }

    fn tool(&self, path: &Utf8Path, token: &str, parent: Option<&str>, ok: bool) {
        self.instance.tool_result(&ToolExecution {
            name: "read".into(),
            arguments: serde_json::json!({ "file_path": path.as_str() }),
            token: token.into(),
            parent: parent.map(str::to_owned),
            is_error: !ok,
            cancelled: false,
        });
    }

    fn event(&mut self) {
        let event = if self.step_open {
            *self
                .rng
                .pick(&[SessionEvent::StepEnd, SessionEvent::TurnEnd])
        } else {
            SessionEvent::StepStart
        };
        self.step_open = event == SessionEvent::StepStart;
        if event == SessionEvent::TurnEnd {
            self.step_in_turn = 0;
        }
        self.host.append_event(event);
        self.instance.session_event(event);
    }

    fn compact(&mut self) {
        let users = self.host.user_messages();
        match self.rng.below(3) {
            0 => {
                // The latest visible baseline.
                let latest = users.iter().enumerate().rev().find(|(i, h)| {
                    !self.hidden.contains(i)
                        && matches!(h, HistoryItem::User { source: Some(s), .. } if s.baseline)
                });
                if let Some((i, _)) = latest {
                    self.hide(&[i]);
                }
            }
            1 => {
                let all: Vec<usize> = (0..users.len()).collect();
                self.hide(&all);
            }
            _ => {
                let some: Vec<usize> = (0..users.len()).filter(|_| self.rng.chance(30)).collect();
                self.hide(&some);
            }
        }
    }

    fn hide(&mut self, indexes: &[usize]) {
        self.host.hide_user_messages(indexes);
        self.hidden.extend(indexes.iter().copied());
    }

    async fn resume(&mut self) {
        self.instance.dispose();
        self.checked = None;
        self.instance = mount(&self.fs, &self.host, &self.config).await;
        self.step_in_turn = 0;
    }

    async fn remount(&mut self) {
        self.config = self.rng.pick(&configs()).clone();
        self.instance = mount_of(&self.fs, &self.host, &self.config)
            .await
            .remount(&self.instance, self.host.clone() as Arc<dyn Host>)
            .expect("remounted inside a runtime");
        self.step_in_turn = 0;
    }

    async fn pre_step(&mut self) {
        let pending_before = !self.instance.pending().is_empty();
        let kind = self.rng.below(10);
        let decision = match kind {
            0 => Decision::Reject,
            1 => Decision::Enter(vec![]),
            _ => Decision::Enter(vec![
                BatchItem {
                    message: "prompt".to_owned(),
                    claimed: true,
                },
                BatchItem {
                    message: "driver note".to_owned(),
                    claimed: false,
                },
            ]),
        };
        self.step_in_turn += 1;
        let out = tokio::time::timeout(
            LIMIT,
            self.instance
                .pre_step(self.step_in_turn, decision, &CancellationToken::new()),
        )
        .await
        .unwrap_or_else(|_| panic!("{}: pre-step blocked", self.ctx()))
        .unwrap_or_else(|_| panic!("{}: uncancelled pre-step cancelled", self.ctx()));
        if let Some(batch) = &out.batch {
            self.host.append_batch(batch);
        }
        if let Some(entered) = &out.entered {
            self.check_composed(entered);
        }
        let converges = kind >= 2
            && !pending_before
            && !self.faulted()
            && self.config == Config::with_max_bytes(65_536);
        if converges {
            self.stats.converged += 1;
            self.check_converged();
        }
    }

    /// A pre-step whose first read blocks on a gate, then gets cancelled:
    /// nothing may change (R-DISC-8).
    async fn cancelled_pre_step(&mut self) {
        let Some(path) = self.pick_existing() else {
            return;
        };
        let node = self.files[&path].clone();
        self.fs.insert(
            &path,
            MemNode::file(node.bytes.clone())
                .with_gate(*self.rng.pick(&[FsOp::Resolve, FsOp::Stat])),
        );
        self.files.insert(
            path.clone(),
            Node {
                fault: None,
                stale: None,
                ..node
            },
        );
        // Projections queued earlier would hit the gate first; drain them.
        let history = self.host.history();
        let inbox = self.instance.pending();
        let cancel = CancellationToken::new();
        let run = self.instance.pre_step(
            self.step_in_turn + 1,
            Decision::Enter(vec![BatchItem {
                message: "prompt".to_owned(),
                claimed: true,
            }]),
            &cancel,
        );
        // The pre-step may never touch this path (pending message reused,
        // version cache): then it finishes on its own. Otherwise it parks on
        // the gate, and the cancel comes exactly then. Which of the two
        // happens is decided by the pre-step's own progress, not by a timer.
        let fs = &self.fs;
        let out = tokio::time::timeout(LIMIT, async {
            let mut run = std::pin::pin!(run);
            tokio::select! {
                biased;
                out = &mut run => out,
                () = fs.wait_blocked(&path) => {
                    cancel.cancel();
                    run.await
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{}: cancellation did not return", self.ctx()));
        self.fs.release(&path);
        match out {
            Err(_) => {
                self.stats.cancelled += 1;
                assert_eq!(
                    self.host.history(),
                    history,
                    "{}: cancel wrote history",
                    self.ctx()
                );
                assert_eq!(
                    self.instance.pending(),
                    inbox,
                    "{}: cancel touched the inbox",
                    self.ctx()
                );
            }
            Ok(out) => {
                self.step_in_turn += 1;
                if let Some(batch) = &out.batch {
                    self.host.append_batch(batch);
                }
                if let Some(entered) = &out.entered {
                    self.check_composed(entered);
                }
            }
        }
    }

    // -- invariants -------------------------------------------------------

    fn abs_of(display: &str) -> Utf8PathBuf {
        match display.strip_prefix("~/.dsh/") {
            Some(rest) => Utf8Path::new(HOME).join(rest),
            None => Utf8Path::new(ROOT).join(display),
        }
    }

    /// Candidate paths of the slot a scope names, in probe order.
    fn slot_members(&self, scope: &ScopeKey) -> Vec<Utf8PathBuf> {
        let Some(dir) = scope.dir() else {
            return vec![Utf8Path::new(HOME).join("AGENTS.md")];
        };
        let abs = if dir == "." {
            Utf8PathBuf::from(ROOT)
        } else {
            Utf8Path::new(ROOT).join(dir)
        };
        let names: Vec<&str> = match scope.slot() {
            Some("base") => BASE.to_vec(),
            Some("local") => LOCAL.to_vec(),
            Some(name) => vec![name],
            None => vec![],
        };
        names.into_iter().map(|n| abs.join(n)).collect()
    }

    /// First-wins (R-DISC-5): the slot is unavailable when a candidate
    /// before the first cleanly present one cannot be classified.
    fn slot_unavailable(&self, scope: &ScopeKey) -> bool {
        let cap = self.config.max_source_bytes();
        for member in self.slot_members(scope) {
            match self.resolve(&member) {
                Err(()) => return true,
                Ok(None) => {}
                Ok(Some(target)) => {
                    return self.files.get(&target).is_some_and(|n| n.unavailable(cap));
                }
            }
        }
        false
    }

    /// Invariants of a message composed during this step.
    fn check_composed(&mut self, m: &WorkspaceMessage) {
        if self.checked.as_ref() == Some(m) {
            return;
        }
        let ctx = self.ctx();
        let budget = self.config.max_bytes().max_bytes() as usize;
        assert!(!m.parts.is_empty(), "{ctx}: empty workspace message");
        for part in &m.parts {
            assert!(
                part.len() <= budget,
                "{ctx}: part of {} bytes > {budget}",
                part.len()
            );
            assert!(
                part.starts_with("<system-reminder>\n") && part.ends_with("\n</system-reminder>")
            );
            assert_eq!(
                part.to_ascii_lowercase()
                    .matches("</system-reminder")
                    .count(),
                1,
                "{ctx}: closing tag inside a part"
            );
        }
        self.stats.composed += 1;
        let replacement = m.source.baseline && m.parts[0].contains(SUPERSEDE);
        for change in &m.source.changes {
            let abs = Self::abs_of(&change.path);
            match change.action {
                Action::Set | Action::Replace => {
                    let text = self.text_at(&abs).unwrap_or_else(|| {
                        panic!("{ctx}: {:?} of a missing file {abs}", change.action)
                    });
                    self.stats.digests += 1;
                    assert_eq!(
                        change.digest,
                        Some(Digest::of(&text)),
                        "{ctx}: digest of {abs} is not SHA-1 of its text"
                    );
                }
                Action::Remove => {
                    assert!(change.digest.is_none(), "{ctx}: remove with a digest");
                    if replacement {
                        if self.slot_unavailable(&change.scope) {
                            self.stats.removes_exempt_unavailable += 1;
                        }
                    } else {
                        self.stats.removes_checked += 1;
                        assert!(
                            !self.slot_unavailable(&change.scope),
                            "{ctx}: unavailable scope {:?} removed: {m:#?}\nfiles: {:#?}\nlinks: {:#?}",
                            change.scope,
                            self.files,
                            self.links
                        );
                    }
                }
            }
        }
        self.checked = Some(m.clone());
    }

    fn visible_from_history(&self) -> VisibleState {
        let users = self.host.user_messages();
        let sources: Vec<(usize, TypedSource)> = users
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !self.hidden.contains(i))
            .filter_map(|(i, h)| match h {
                HistoryItem::User {
                    source: Some(s), ..
                } => Some((i, s)),
                _ => None,
            })
            .collect();
        // Message indexes differ between the two views; compare by order.
        VisibleState::derive(sources.iter().enumerate().map(|(n, (_, s))| (n, s)))
    }

    /// With no fault and a large budget, a reconciling pre-step leaves the
    /// visible state equal to the files (R-RT-10, R-STATE-6, R-CFG-7).
    fn check_converged(&self) {
        let visible = self.visible_from_history();
        let ctx = self.ctx();
        // Same underlying file: loaded once, at its broadest position
        // (R-DISC-3); same trimmed text within a directory: once (R-CFG-7).
        let mut seen: BTreeSet<Utf8PathBuf> = BTreeSet::new();
        let mut keep = |display: String, path: &Utf8Path, dir_kept: &mut Vec<String>| {
            let target = self.resolve(path).ok()??;
            let text = decode_text(&self.files.get(&target)?.bytes);
            if seen.contains(&target) || dir_kept.iter().any(|k| k.trim() == text.trim()) {
                return None;
            }
            seen.insert(target);
            dir_kept.push(text.clone());
            Some((display, text))
        };
        let user = Utf8Path::new(HOME).join("AGENTS.md");
        let mut expect: Vec<(ScopeKey, Option<(String, String)>)> = Vec::new();
        // A slot winner is chosen before dedup: first present candidate.
        let winner = |names: &[&str], rel: &str, abs: &str| {
            names.iter().find_map(|n| {
                let p = Utf8Path::new(abs).join(n);
                let shown = if rel == "." {
                    (*n).to_owned()
                } else {
                    format!("{rel}/{n}")
                };
                self.text_at(&p).map(|_| (shown, p))
            })
        };
        let global = self
            .text_at(&user)
            .and_then(|_| keep("~/.dsh/AGENTS.md".to_owned(), &user, &mut Vec::new()));
        expect.push((ScopeKey::user_global(), global));
        for (rel, abs) in [(".", ROOT), ("a", CWD)] {
            let mut dir_kept = Vec::new();
            for (slot, names) in [("base", &BASE[..]), ("local", &LOCAL[..])] {
                let want =
                    winner(names, rel, abs).and_then(|(shown, p)| keep(shown, &p, &mut dir_kept));
                expect.push((ScopeKey::project(rel, slot), want));
            }
        }
        for (scope, want) in expect {
            let got = visible
                .get(&scope)
                .filter(|e| e.is_loaded())
                .map(|e| (e.path.clone(), e.digest));
            let want = want.map(|(p, t)| (p, Some(Digest::of(&t))));
            assert_eq!(
                got, want,
                "{ctx}: visible {scope:?} disagrees with the files"
            );
        }
    }

    fn check_step(&mut self) {
        let ctx = self.ctx();
        let inbox = self.instance.pending();
        assert!(
            inbox.len() <= 1,
            "{ctx}: {} pending workspace messages",
            inbox.len()
        );
        if let Some(m) = inbox.first() {
            self.check_composed(m);
        }
        let plugin = VisibleState::derive(self.host.visible_workspace().iter().enumerate());
        assert_eq!(
            plugin,
            self.visible_from_history(),
            "{ctx}: visible state diverged"
        );
    }

    async fn run(&mut self, steps: u64) {
        for step in 1..=steps {
            self.step = step;
            let op = self.rng.below(100);
            if self.trace {
                let files: Vec<String> = self
                    .files
                    .iter()
                    .map(|(p, n)| {
                        format!(
                            "{p}={:?}{}{}",
                            decode_text(&n.bytes),
                            n.fault.map(|f| format!(" fault{f:?}")).unwrap_or_default(),
                            n.stale.map(|s| format!(" stale{s}")).unwrap_or_default()
                        )
                    })
                    .collect();
                eprintln!(
                    "step {step} op {op} cfg {} files {files:?} links {:?} inbox {:?}",
                    self.config.max_bytes(),
                    self.links,
                    self.instance.pending().first().map(|m| &m.source.changes)
                );
            }
            match op {
                0..=14 => self.edit(),
                15..=17 => self.link(),
                18..=23 => self.remove(),
                24..=29 => self.fault(),
                30..=32 => self.stale(),
                33..=38 => self.heal(),
                39..=55 => self.touch(),
                56..=63 => self.event(),
                64..=85 => self.pre_step().await,
                86..=88 => self.cancelled_pre_step().await,
                89..=93 => self.compact(),
                94..=96 => self.resume().await,
                _ => self.remount().await,
            }
            tokio::time::timeout(LIMIT, self.instance.settle())
                .await
                .unwrap_or_else(|_| panic!("{}: settle blocked", self.ctx()));
            self.check_step();
        }
    }
}

async fn mount_of(
    fs: &MemoryProvider,
    host: &MemoryHost,
    config: &Config,
) -> dsh_instructions_runtime::Opened {
    common::open(
        fs.clone(),
        host.cwd().as_str(),
        Some(config.clone()),
        &home(),
    )
    .await
}

async fn mount(fs: &MemoryProvider, host: &Arc<MemoryHost>, config: &Config) -> Instance {
    mount_of(fs, host, config)
        .await
        .instance(host.clone() as Arc<dyn Host>)
        .expect("mounted inside a runtime")
}

#[test]
fn digest_is_sha1() {
    // Known vector (FIPS 180-1), so the digest invariant below checks SHA-1
    // and not merely self-consistency.
    assert_eq!(
        Digest::of("abc").to_hex(),
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_soak() {
    let steps = std::env::var("DSH_SOAK_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(STEPS / SEEDS.len() as u64);
    let seeds: Vec<u64> = match std::env::var("DSH_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => vec![seed],
        None => SEEDS.to_vec(),
    };
    for seed in seeds {
        let _report = SeedReport(seed, steps);
        let mut soak = Soak::new(seed).await;
        soak.run(steps).await;
        eprintln!("seed {seed}: {:?}", soak.stats);
        if steps >= 1_000 {
            let s = &soak.stats;
            assert!(s.composed > 100 && s.digests > 100, "{s:?}");
            assert!(s.removes_checked > 10, "{s:?}");
            assert!(s.converged > 10, "{s:?}");
            assert!(s.cancelled > 5, "{s:?}");
        }
    }
}
