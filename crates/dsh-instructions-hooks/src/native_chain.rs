//! What an agent that cannot stop loading its own files already holds
//! (GitHub Copilot CLI, decision 0073): the baseline's sections of its own
//! candidate files in the project's chain, which it puts into its system
//! prompt at every start and keeps through compaction. The hook composes
//! them like any file — so updates, removals and the budget are judged on
//! the whole picture — and leaves those sections out of what it gives.
//! Nested files, overlays, the user-global file, updates and removals are
//! what Copilot lacks, and stay.

use dsh_instructions_render::{Block, BlockKind, Framing};
use dsh_instructions_runtime::WorkspaceMessage;

/// The header prefix of a baseline section (R-REN-1).
const BASELINE_HEADER: &str = "Instructions from: ";

/// What opens a path-scoped rule's section after its header and blank line
/// (R-RULE-5's exact text): such a rule is never left out.
const PATH_SCOPED_LINE: &str = "These instructions apply to files matching ";

/// What an agent holds of the chain by itself.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Own<'a> {
    /// File names it loads from every directory of the chain.
    pub names: &'a [&'a str],
    /// Rule places (a file, or a directory ending in `/`) whose always-on
    /// rules it loads.
    pub places: &'a [&'a str],
}

impl Own<'_> {
    fn is_empty(&self) -> bool {
        self.names.is_empty() && self.places.is_empty()
    }

    /// Whether a baseline section with this display path and text is one
    /// the agent holds: a project path (never `~/…`) named like one of its
    /// files, or an always-on rule under one of its places.
    fn holds(&self, path: &str, text: &str) -> bool {
        if path.starts_with('~') {
            return false;
        }
        if self
            .names
            .iter()
            .any(|n| path.rsplit('/').next() == Some(*n))
        {
            return true;
        }
        let under = |place: &str| path.starts_with(place) || path.contains(&format!("/{place}"));
        self.places.iter().any(|p| under(p))
            && !text
                .split_once("\n\n")
                .is_some_and(|(_, rest)| rest.starts_with(PATH_SCOPED_LINE))
    }
}

/// `message` without the baseline sections the agent holds itself
/// ([`Own`]); `None` when nothing is left out. A baseline part left with no
/// section and no notice is dropped whole.
pub(crate) fn without_native_baseline(
    message: &WorkspaceMessage,
    own: Own<'_>,
) -> Option<WorkspaceMessage> {
    if !message.source.baseline || own.is_empty() {
        return None;
    }
    let baseline = message.blocks.first()?;
    let native = |b: &Block| match &b.kind {
        BlockKind::Section { header } => header
            .strip_prefix(BASELINE_HEADER)
            .is_some_and(|p| own.holds(p, &b.text)),
        _ => false,
    };
    if !baseline.iter().any(native) {
        return None;
    }
    let kept: Vec<_> = baseline.iter().filter(|b| !native(b)).cloned().collect();
    let mut out = message.clone();
    let says_something = kept
        .iter()
        .any(|b| matches!(b.kind, BlockKind::Section { .. } | BlockKind::Notice));
    if says_something {
        if let Some(text) = out.parts.first_mut() {
            *text = Framing::Reminder.part(kept.iter().map(|b| b.text.as_str()));
        }
        out.blocks[0] = kept;
    } else {
        out.blocks.remove(0);
        if !out.parts.is_empty() {
            out.parts.remove(0);
        }
    }
    Some(out)
}

/// `message` without every section — of the baseline, an update, a
/// removal — that names one of `paths` (project display paths): the files
/// an agent re-reads itself for every request (Cline CLI's `AGENTS.md` of
/// its working directory, [`crate::Agent::own_cwd_files`], decision 0089),
/// so it always holds their current text, or knows them gone. `None` when
/// nothing is left out; a part left with no section and no notice is
/// dropped whole.
pub(crate) fn without_own_files(
    message: &WorkspaceMessage,
    paths: &[String],
) -> Option<WorkspaceMessage> {
    use dsh_instructions_render::text::SECTION_HEADER_PREFIXES;
    if paths.is_empty() {
        return None;
    }
    let own = |b: &Block| match &b.kind {
        BlockKind::Section { header } => SECTION_HEADER_PREFIXES
            .iter()
            .find_map(|p| header.strip_prefix(p))
            .is_some_and(|path| paths.iter().any(|o| o == path)),
        _ => false,
    };
    if !message.blocks.iter().flatten().any(own) {
        return None;
    }
    let mut out = message.clone();
    out.parts.clear();
    out.blocks.clear();
    for (i, blocks) in message.blocks.iter().enumerate() {
        let kept: Vec<Block> = blocks.iter().filter(|b| !own(b)).cloned().collect();
        let says_something = kept
            .iter()
            .any(|b| matches!(b.kind, BlockKind::Section { .. } | BlockKind::Notice));
        if !says_something {
            continue;
        }
        let text = if kept.len() == blocks.len() {
            message.parts.get(i).cloned()
        } else {
            None
        };
        out.parts.push(
            text.unwrap_or_else(|| Framing::Reminder.part(kept.iter().map(|b| b.text.as_str()))),
        );
        out.blocks.push(kept);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_render::text::SECTION_HEADER_PREFIXES;

    fn section(path: &str) -> Block {
        let header = format!("{BASELINE_HEADER}{path}");
        Block {
            text: format!("{header}\n\nbody of {path}"),
            kind: BlockKind::Section { header },
        }
    }

    fn intro() -> Block {
        Block {
            kind: BlockKind::Intro,
            text: "The following workspace instructions ...".into(),
        }
    }

    fn message(baseline: Vec<Block>, dynamic: Option<Vec<Block>>) -> WorkspaceMessage {
        let mut blocks = vec![baseline];
        blocks.extend(dynamic);
        WorkspaceMessage {
            parts: blocks
                .iter()
                .map(|p| Framing::Reminder.part(p.iter().map(|b| b.text.as_str())))
                .collect(),
            blocks,
            source: dsh_instructions_state::TypedSource {
                baseline: true,
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_baseline_header_is_one_of_renders() {
        assert!(SECTION_HEADER_PREFIXES.contains(&BASELINE_HEADER));
    }

    fn names() -> Own<'static> {
        Own {
            names: crate::Agent::Copilot.own_chain_files(),
            places: crate::Agent::Copilot.own_rule_places(),
        }
    }

    #[test]
    fn the_chain_files_go_and_the_rest_stays_in_order() {
        let m = message(
            vec![
                intro(),
                section("~/.dsh/AGENTS.md"),
                section("AGENTS.md"),
                section("AGENTS.local.md"),
                section("pkg/CLAUDE.md"),
                section("pkg/CLAUDE.local.md"),
            ],
            None,
        );
        let out = without_native_baseline(&m, names()).expect("changed");
        let kept: Vec<&str> = out.blocks[0].iter().map(|b| b.text.as_str()).collect();
        assert_eq!(kept.len(), 4);
        assert!(kept[1].contains("~/.dsh/AGENTS.md"));
        assert!(kept[2].contains("body of AGENTS.local.md"));
        assert!(kept[3].contains("body of pkg/CLAUDE.local.md"));
        assert!(
            !out.parts[0].contains("body of AGENTS.md"),
            "{}",
            out.parts[0]
        );
        assert!(out.parts[0].contains("body of pkg/CLAUDE.local.md"));
    }

    /// Copilot's always-on `copilot` rules of the chain are its own; a
    /// path-scoped one (its applies line after the header) and another
    /// format's rule are not.
    #[test]
    fn always_on_copilot_rules_go_path_scoped_ones_stay() {
        let scoped = Block {
            text: format!(
                "{BASELINE_HEADER}.github/instructions/db.instructions.md\n\n{PATH_SCOPED_LINE}`db/**` under `.`.\n\nbody"
            ),
            kind: BlockKind::Section {
                header: format!("{BASELINE_HEADER}.github/instructions/db.instructions.md"),
            },
        };
        let m = message(
            vec![
                intro(),
                section(".github/copilot-instructions.md"),
                section(".github/instructions/all.instructions.md"),
                section("pkg/.github/instructions/x.instructions.md"),
                scoped,
                section(".cursor/rules/a.mdc"),
            ],
            None,
        );
        let out = without_native_baseline(&m, names()).expect("changed");
        let kept: Vec<&str> = out.blocks[0].iter().map(|b| b.text.as_str()).collect();
        assert_eq!(kept.len(), 3, "{kept:#?}");
        assert!(kept[1].contains("db.instructions.md"));
        assert!(kept[2].contains(".cursor/rules/a.mdc"));
    }

    #[test]
    fn a_baseline_of_native_files_only_is_dropped_and_the_dynamic_part_stays() {
        let dynamic = vec![Block {
            text: "Instructions removed: a/AGENTS.md".into(),
            kind: BlockKind::Section {
                header: "Instructions removed: a/AGENTS.md".into(),
            },
        }];
        let m = message(vec![intro(), section("AGENTS.md")], Some(dynamic.clone()));
        let out = without_native_baseline(&m, names()).expect("changed");
        assert_eq!(out.blocks, vec![dynamic]);
        assert_eq!(out.parts.len(), 1);
        assert!(out.parts[0].contains("Instructions removed: a/AGENTS.md"));
    }

    #[test]
    fn updates_and_messages_without_a_baseline_are_untouched() {
        let mut m = message(vec![section("AGENTS.md")], None);
        m.source.baseline = false;
        assert!(without_native_baseline(&m, names()).is_none());
        let m = message(vec![intro(), section("AGENTS.local.md")], None);
        assert!(without_native_baseline(&m, names()).is_none());
        let m = message(vec![intro(), section("AGENTS.md")], None);
        let none = Own {
            names: &[],
            places: &[],
        };
        assert!(without_native_baseline(&m, none).is_none());
    }

    /// Decision 0089: Cline's own `AGENTS.md` (of its working directory)
    /// leaves every part — baseline, update, removal — while a nested one
    /// and an overlay stay; a part left with nothing to say goes.
    #[test]
    fn own_files_leave_every_part() {
        let update = |path: &str| {
            let header = format!("Updated instructions from: {path}");
            Block {
                text: format!("{header}\n\nnew body"),
                kind: BlockKind::Section { header },
            }
        };
        let m = message(
            vec![intro(), section("AGENTS.md"), section("sub/AGENTS.md")],
            Some(vec![update("AGENTS.md")]),
        );
        let own = ["AGENTS.md".to_owned()];
        let out = without_own_files(&m, &own).expect("something left out");
        assert_eq!(
            out.blocks.len(),
            1,
            "the update part said only the own file"
        );
        assert_eq!(out.parts.len(), 1);
        assert!(out.parts[0].contains("Instructions from: sub/AGENTS.md"));
        assert!(!out.parts[0].contains("Instructions from: AGENTS.md\n"));
        let sub = ["sub/AGENTS.md".to_owned()];
        let out = without_own_files(&m, &sub).expect("the nested file left out");
        assert!(out.parts[0].contains("Instructions from: AGENTS.md"));
        assert_eq!(out.parts[1], m.parts[1], "an untouched part keeps its text");
        assert!(without_own_files(&m, &["other/AGENTS.md".to_owned()]).is_none());
        assert!(without_own_files(&m, &[]).is_none());
    }
}
