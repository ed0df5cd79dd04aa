//! Which candidate names a directory probes and which slot each one may
//! fill (R-CFG-7, R-HOOK-4): the base list, the `.claude/CLAUDE.md` rule,
//! the fallback list and the local list, under either policy, with the
//! fallback's per-directory or path-wide gate.
//!
//! The probe order of a directory ("logical names") is
//! `base…, [.claude/CLAUDE.md], fallback…, local…`. The rule is a path, not
//! a name: [`crate::gather`] probes it as `CLAUDE.md` in the directory's
//! `.claude` subdirectory, so the directory stamps of the provider stay
//! about one directory each (docs/decisions/0007).

use std::ops::Range;

use dsh_instructions_state::{
    Config,
    config::{CLAUDE_DIR_FILE, CandidatePolicy},
    scope::{SLOT_BASE, SLOT_CLAUDE_DIR, SLOT_LOCAL},
    transition::{ProbeClass, SlotOutcome, select_first_wins_iter},
};

/// Whether the fallback list may load at all in this pass (the path-wide
/// gate of `fallback_scope: path`; always [`Gate::Open`] per directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Gate {
    /// The fallback may load where a directory has no base candidate.
    #[default]
    Open,
    /// A base, `.claude/CLAUDE.md` or local candidate exists on the chain.
    Closed,
    /// A chain probe failed and none was present: the fallback's slots are
    /// unavailable (skipped, never removed, R-DISC-5).
    Unknown,
}

impl Gate {
    /// The path-wide gate from the chain directories' probes (in logical
    /// order): closed by any present base, rule or local candidate.
    pub(crate) fn from_chain<'a>(
        layout: &Layout,
        chain: impl IntoIterator<Item = &'a [ProbeClass]>,
    ) -> Self {
        let mut unknown = false;
        for classes in chain {
            for (i, c) in classes.iter().enumerate() {
                if layout.fallback.contains(&i) {
                    continue;
                }
                match c {
                    ProbeClass::Present => return Self::Closed,
                    ProbeClass::Unavailable => unknown = true,
                    ProbeClass::Absent => {}
                }
            }
        }
        if unknown { Self::Unknown } else { Self::Open }
    }
}

/// How one slot is decided from its directory's probes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// First-wins over the names in the range.
    First(Range<usize>),
    /// First-wins over `base`; when that is absent (and the rule file
    /// `blockers` holds nothing, and the gate is open), first-wins over
    /// `fallback`.
    WithFallback {
        base: Range<usize>,
        blockers: Range<usize>,
        fallback: Range<usize>,
    },
    /// One fallback name under `all-distinct`: loads only when every name
    /// in `blockers` (base list and rule) is absent and the gate is open.
    Fallback {
        index: usize,
        blockers: Range<usize>,
    },
}

impl Rule {
    /// Every name that competes for the slot, in order.
    pub(crate) fn names(&self) -> Vec<usize> {
        match self {
            Self::First(r) => r.clone().collect(),
            Self::WithFallback { base, fallback, .. } => {
                base.clone().chain(fallback.clone()).collect()
            }
            Self::Fallback { index, .. } => vec![*index],
        }
    }

    /// One past the highest logical index the rule reads.
    pub(crate) fn end(&self) -> usize {
        match self {
            Self::First(r) => r.end,
            Self::WithFallback {
                base,
                blockers,
                fallback,
            } => base.end.max(blockers.end).max(fallback.end),
            Self::Fallback { index, blockers } => (index + 1).max(blockers.end),
        }
    }

    /// The slot's outcome; a winner's `candidate` is its logical index.
    pub(crate) fn select(&self, classes: &[ProbeClass], gate: Gate) -> SlotOutcome {
        let first =
            |r: &Range<usize>| match select_first_wins_iter(classes[r.clone()].iter().copied()) {
                SlotOutcome::Winner { candidate } => SlotOutcome::Winner {
                    candidate: r.start + candidate,
                },
                other => other,
            };
        // Whether the fallback may stand in: `Some(true)` yes, `Some(false)`
        // no (absent), `None` unknown (unavailable).
        let open = |blockers: &Range<usize>| -> Option<bool> {
            let b = &classes[blockers.clone()];
            if b.contains(&ProbeClass::Present) {
                return Some(false);
            }
            if b.contains(&ProbeClass::Unavailable) {
                return None;
            }
            match gate {
                Gate::Open => Some(true),
                Gate::Closed => Some(false),
                Gate::Unknown => None,
            }
        };
        match self {
            Self::First(r) => first(r),
            Self::WithFallback {
                base,
                blockers,
                fallback,
            } => match first(base) {
                SlotOutcome::Absent => match open(blockers) {
                    Some(true) => first(fallback),
                    Some(false) => SlotOutcome::Absent,
                    None => SlotOutcome::Unavailable,
                },
                other => other,
            },
            Self::Fallback { index, blockers } => match open(blockers) {
                Some(true) => first(&(*index..*index + 1)),
                Some(false) => SlotOutcome::Absent,
                None => SlotOutcome::Unavailable,
            },
        }
    }
}

/// The logical names of a configuration and their slots.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// `base…, [.claude/CLAUDE.md], fallback…, local…`.
    pub names: Vec<String>,
    pub(crate) fallback: Range<usize>,
    local: Range<usize>,
    /// `(slot, rule)` in probe order.
    pub slots: Vec<(String, Rule)>,
}

impl Layout {
    /// The layout of `config`'s lists.
    pub(crate) fn new(config: &Config) -> Self {
        let mut names: Vec<String> = config.instruction_file_candidates().to_vec();
        let base = 0..names.len();
        if config.claude_dir() {
            names.push(CLAUDE_DIR_FILE.to_owned());
        }
        let rule = base.end..names.len();
        names.extend(
            config
                .fallback_instruction_file_candidates()
                .iter()
                .cloned(),
        );
        let fallback = rule.end..names.len();
        names.extend(config.local_instruction_file_candidates().iter().cloned());
        let local = fallback.end..names.len();
        let blockers = 0..rule.end;
        let mut slots: Vec<(String, Rule)> = Vec::new();
        match config.candidate_policy() {
            CandidatePolicy::FirstWins => {
                if !base.is_empty() || !fallback.is_empty() {
                    slots.push((
                        SLOT_BASE.to_owned(),
                        if fallback.is_empty() {
                            Rule::First(base.clone())
                        } else {
                            Rule::WithFallback {
                                base: base.clone(),
                                blockers: rule.clone(),
                                fallback: fallback.clone(),
                            }
                        },
                    ));
                }
                if !rule.is_empty() {
                    slots.push((SLOT_CLAUDE_DIR.to_owned(), Rule::First(rule.clone())));
                }
                if !local.is_empty() {
                    slots.push((SLOT_LOCAL.to_owned(), Rule::First(local.clone())));
                }
            }
            CandidatePolicy::AllDistinct => {
                // The rule's slot sits right after `CLAUDE.md` (after the
                // base list without one), as in `state::section_order`.
                let at = names[base.clone()]
                    .iter()
                    .position(|n| n == "CLAUDE.md")
                    .map_or(base.end, |i| i + 1);
                for i in base.clone() {
                    if i == at && !rule.is_empty() {
                        slots.push((SLOT_CLAUDE_DIR.to_owned(), Rule::First(rule.clone())));
                    }
                    slots.push((names[i].clone(), Rule::First(i..i + 1)));
                }
                if at == base.end && !rule.is_empty() {
                    slots.push((SLOT_CLAUDE_DIR.to_owned(), Rule::First(rule.clone())));
                }
                for index in fallback.clone() {
                    // A fallback name that is also a base name is that base
                    // candidate already.
                    if names[base.clone()].contains(&names[index]) {
                        continue;
                    }
                    slots.push((
                        names[index].clone(),
                        Rule::Fallback {
                            index,
                            blockers: blockers.clone(),
                        },
                    ));
                }
                for i in local.clone() {
                    slots.push((names[i].clone(), Rule::First(i..i + 1)));
                }
            }
        }
        Self {
            names,
            fallback,
            local,
            slots,
        }
    }

    /// Whether logical name `i` comes from the local list.
    pub(crate) fn is_local(&self, i: usize) -> bool {
        self.local.contains(&i)
    }

    /// Whether a path-wide gate applies (`fallback_scope: path` with a
    /// fallback list).
    pub(crate) fn path_gated(&self, config: &Config) -> bool {
        !self.fallback.is_empty()
            && config.fallback_scope() == dsh_instructions_state::config::FallbackScope::Path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::Preset;
    use rstest::rstest;

    const P: ProbeClass = ProbeClass::Present;
    const A: ProbeClass = ProbeClass::Absent;
    const U: ProbeClass = ProbeClass::Unavailable;

    fn config_of(v: serde_json::Value) -> Config {
        serde_json::from_value::<dsh_instructions_state::ConfigInput>(v)
            .expect("config input")
            .resolve()
            .expect("valid config")
            .config
    }

    fn claude() -> Config {
        Config::preset(Preset::Claude)
    }

    /// Winner names per slot of one directory.
    fn winners(config: &Config, classes: &[ProbeClass], gate: Gate) -> Vec<(String, String)> {
        let layout = Layout::new(config);
        layout
            .slots
            .iter()
            .map(|(slot, rule)| {
                let got = match rule.select(classes, gate) {
                    SlotOutcome::Winner { candidate } => layout.names[candidate].clone(),
                    SlotOutcome::Absent => "-".to_owned(),
                    SlotOutcome::Unavailable => "?".to_owned(),
                };
                (slot.clone(), got)
            })
            .collect()
    }

    fn w(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn claude_layout_probes_claude_md_then_the_rule_then_agents_md_then_local() {
        let l = Layout::new(&claude());
        assert_eq!(
            l.names,
            [
                "CLAUDE.md",
                ".claude/CLAUDE.md",
                "AGENTS.md",
                "CLAUDE.local.md"
            ]
        );
        assert_eq!(
            l.slots,
            [
                (
                    SLOT_BASE.to_owned(),
                    Rule::WithFallback {
                        base: 0..1,
                        blockers: 1..2,
                        fallback: 2..3
                    }
                ),
                (SLOT_CLAUDE_DIR.to_owned(), Rule::First(1..2)),
                (SLOT_LOCAL.to_owned(), Rule::First(3..4)),
            ]
        );
        assert!(l.is_local(3) && !l.is_local(2));
        assert!(l.path_gated(&claude()));
    }

    #[test]
    fn default_layout_is_unchanged() {
        // Defaults keep today's names and slots (R-CFG-4, R-CFG-7).
        let c = Config::with_max_bytes(1);
        let l = Layout::new(&c);
        assert_eq!(
            l.names,
            [
                "AGENTS.md",
                "CLAUDE.md",
                "AGENTS.local.md",
                "CLAUDE.local.md"
            ]
        );
        assert_eq!(
            l.slots,
            [
                (SLOT_BASE.to_owned(), Rule::First(0..2)),
                (SLOT_LOCAL.to_owned(), Rule::First(2..4))
            ]
        );
        assert!(!l.path_gated(&c));
    }

    // R-HOOK-4 / R-HOOK-8, first-wins with the Claude lists:
    // probes are [CLAUDE.md, .claude/CLAUDE.md, AGENTS.md, CLAUDE.local.md].
    #[rstest]
    #[case::claude_md_wins_over_agents_md([P, A, P, A], Gate::Open, &[("base", "CLAUDE.md"), ("claude-dir", "-"), ("local", "-")])]
    #[case::agents_md_alone_falls_back([A, A, P, A], Gate::Open, &[("base", "AGENTS.md"), ("claude-dir", "-"), ("local", "-")])]
    #[case::rule_file_blocks_the_fallback([A, P, P, A], Gate::Open, &[("base", "-"), ("claude-dir", ".claude/CLAUDE.md"), ("local", "-")])]
    #[case::both_claude_files([P, P, A, P], Gate::Open, &[("base", "CLAUDE.md"), ("claude-dir", ".claude/CLAUDE.md"), ("local", "CLAUDE.local.md")])]
    #[case::closed_gate([A, A, P, A], Gate::Closed, &[("base", "-"), ("claude-dir", "-"), ("local", "-")])]
    #[case::unknown_gate_is_unavailable([A, A, P, A], Gate::Unknown, &[("base", "?"), ("claude-dir", "-"), ("local", "-")])]
    #[case::unavailable_rule_is_unavailable([A, U, P, A], Gate::Open, &[("base", "?"), ("claude-dir", "?"), ("local", "-")])]
    #[case::unavailable_base_skips([U, A, P, A], Gate::Open, &[("base", "?"), ("claude-dir", "-"), ("local", "-")])]
    #[case::local_does_not_block_per_directory([A, A, P, P], Gate::Open, &[("base", "AGENTS.md"), ("claude-dir", "-"), ("local", "CLAUDE.local.md")])]
    fn claude_first_wins(
        #[case] classes: [ProbeClass; 4],
        #[case] gate: Gate,
        #[case] want: &[(&str, &str)],
    ) {
        assert_eq!(winners(&claude(), &classes, gate), w(want));
    }

    // all-distinct with base [AGENTS.md, CLAUDE.md], the rule, fallback
    // [GEMINI.md], local [CLAUDE.local.md].
    #[rstest]
    #[case::fallback_only_without_base([A, A, A, P, A], &[("AGENTS.md", "-"), ("CLAUDE.md", "-"), ("claude-dir", "-"), ("GEMINI.md", "GEMINI.md"), ("CLAUDE.local.md", "-")])]
    #[case::base_blocks([P, A, A, P, A], &[("AGENTS.md", "AGENTS.md"), ("CLAUDE.md", "-"), ("claude-dir", "-"), ("GEMINI.md", "-"), ("CLAUDE.local.md", "-")])]
    #[case::rule_blocks([A, A, P, P, P], &[("AGENTS.md", "-"), ("CLAUDE.md", "-"), ("claude-dir", ".claude/CLAUDE.md"), ("GEMINI.md", "-"), ("CLAUDE.local.md", "CLAUDE.local.md")])]
    #[case::every_base_loads([P, P, P, P, A], &[("AGENTS.md", "AGENTS.md"), ("CLAUDE.md", "CLAUDE.md"), ("claude-dir", ".claude/CLAUDE.md"), ("GEMINI.md", "-"), ("CLAUDE.local.md", "-")])]
    fn all_distinct_with_fallback(#[case] classes: [ProbeClass; 5], #[case] want: &[(&str, &str)]) {
        let c = config_of(serde_json::json!({
            "max_bytes": 1,
            "candidate_policy": CandidatePolicy::AllDistinct,
            "claude_dir": true,
            "fallback_instruction_file_candidates": ["GEMINI.md"],
            "local_instruction_file_candidates": ["CLAUDE.local.md"],
        }));
        assert_eq!(winners(&c, &classes, Gate::Open), w(want));
    }

    #[rstest]
    #[case::nothing_on_the_chain(&[&[A, A, P, A], &[A, A, A, A]], Gate::Open)]
    #[case::claude_md_at_the_root(&[&[P, A, A, A], &[A, A, P, A]], Gate::Closed)]
    #[case::rule_file_in_a_parent(&[&[A, P, A, A], &[A, A, A, A]], Gate::Closed)]
    #[case::local_file_closes(&[&[A, A, A, A], &[A, A, A, P]], Gate::Closed)]
    #[case::agents_md_everywhere_stays_open(&[&[A, A, P, A], &[A, A, P, A]], Gate::Open)]
    #[case::unavailable(&[&[U, A, P, A], &[A, A, A, A]], Gate::Unknown)]
    #[case::present_beats_unavailable(&[&[U, A, A, A], &[P, A, A, A]], Gate::Closed)]
    fn path_wide_gate(#[case] chain: &[&[ProbeClass; 4]], #[case] want: Gate) {
        // R-HOOK-8: Claude Code's fallback is path-wide.
        let l = Layout::new(&claude());
        assert_eq!(Gate::from_chain(&l, chain.iter().map(|c| &c[..])), want);
    }

    // The scan's slot order is the rendering order of a baseline: it must
    // be the section order of R-REN-3 for every list shape.
    #[rstest]
    #[case::claude_md_first(&["CLAUDE.md", "GEMINI.md"])]
    #[case::claude_md_last(&["AGENTS.md", "CLAUDE.md"])]
    #[case::no_claude_md(&["GEMINI.md"])]
    #[case::empty(&[])]
    fn slot_order_is_the_section_order(#[case] base: &[&str], #[values(false, true)] fw: bool) {
        let policy = if fw {
            CandidatePolicy::FirstWins
        } else {
            CandidatePolicy::AllDistinct
        };
        let c = config_of(serde_json::json!({
            "max_bytes": 1,
            "instruction_file_candidates": base,
            "claude_dir": true,
            "fallback_instruction_file_candidates": ["AGENTS.override.md"],
            "candidate_policy": policy,
        }));
        let keys: Vec<dsh_instructions_state::ScopeKey> = Layout::new(&c)
            .slots
            .iter()
            .map(|(slot, _)| dsh_instructions_state::ScopeKey::project(".", slot))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| dsh_instructions_state::scope::section_order(a, b, &c));
        assert_eq!(keys, sorted);
    }

    #[test]
    fn directory_scope_is_not_path_gated() {
        let c = config_of(serde_json::json!({"preset": "claude", "fallback_scope": "directory"}));
        assert!(!Layout::new(&c).path_gated(&c));
    }
}
