//! What an agent that cannot stop loading its own files already holds
//! (GitHub Copilot CLI, decision 0073): the baseline's sections of its own
//! candidate files in the project's chain, which it puts into its system
//! prompt at every start and keeps through compaction. The hook composes
//! them like any file — so updates, removals and the budget are judged on
//! the whole picture — and leaves those sections out of what it gives.
//! Nested files, overlays, the user-global file, updates and removals are
//! what Copilot lacks, and stay.

use dsh_instructions_render::{BlockKind, Framing};
use dsh_instructions_runtime::WorkspaceMessage;

/// The header prefix of a baseline section (R-REN-1).
const BASELINE_HEADER: &str = "Instructions from: ";

/// `message` without the baseline sections whose file name is one of
/// `names` (the agent's own candidates, loaded by the agent from every
/// directory of the chain); `None` when nothing is left out. A baseline
/// part left with no section and no notice is dropped whole. The user's
/// files (`~/…`) are never left out: the names are project files.
pub(crate) fn without_native_baseline(
    message: &WorkspaceMessage,
    names: &[&str],
) -> Option<WorkspaceMessage> {
    if !message.source.baseline || names.is_empty() {
        return None;
    }
    let baseline = message.blocks.first()?;
    let native = |kind: &BlockKind| match kind {
        BlockKind::Section { header } => header.strip_prefix(BASELINE_HEADER).is_some_and(|p| {
            !p.starts_with('~') && names.iter().any(|n| p.rsplit('/').next() == Some(*n))
        }),
        _ => false,
    };
    if !baseline.iter().any(|b| native(&b.kind)) {
        return None;
    }
    let kept: Vec<_> = baseline
        .iter()
        .filter(|b| !native(&b.kind))
        .cloned()
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_render::{Block, SECTION_HEADER_PREFIXES};

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

    fn names() -> Vec<&'static str> {
        crate::Agent::Copilot.own_chain_files().to_vec()
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
        let out = without_native_baseline(&m, &names()).expect("changed");
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

    #[test]
    fn a_baseline_of_native_files_only_is_dropped_and_the_dynamic_part_stays() {
        let dynamic = vec![Block {
            text: "Instructions removed: a/AGENTS.md".into(),
            kind: BlockKind::Section {
                header: "Instructions removed: a/AGENTS.md".into(),
            },
        }];
        let m = message(vec![intro(), section("AGENTS.md")], Some(dynamic.clone()));
        let out = without_native_baseline(&m, &names()).expect("changed");
        assert_eq!(out.blocks, vec![dynamic]);
        assert_eq!(out.parts.len(), 1);
        assert!(out.parts[0].contains("Instructions removed: a/AGENTS.md"));
    }

    #[test]
    fn updates_and_messages_without_a_baseline_are_untouched() {
        let mut m = message(vec![section("AGENTS.md")], None);
        m.source.baseline = false;
        assert!(without_native_baseline(&m, &names()).is_none());
        let m = message(vec![intro(), section("AGENTS.local.md")], None);
        assert!(without_native_baseline(&m, &names()).is_none());
        let m = message(vec![intro(), section("AGENTS.md")], None);
        assert!(without_native_baseline(&m, &[]).is_none());
    }
}
