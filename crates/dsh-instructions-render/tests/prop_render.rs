//! Large-case property tests over arbitrary Unicode input (the stand-in for
//! a fuzzer in the normal suite; `fuzz/` holds the libFuzzer targets).
//!
//! Whatever the content, paths and budget: the output is empty or exactly
//! one frame, never over budget, with the closing tag exactly once at its
//! end (R-REN-5, R-REN-6); every represented file's escaped content (or the
//! kept prefix of it) is in the text, and the fates are consistent
//! (R-REN-7).

use dsh_instructions_render::{
    BaselineFile, BaselineKind, Budget, Fate, Rendered, Section, escape, render_baseline,
    render_dynamic,
};
use proptest::prelude::*;

const TAG: &str = "</system-reminder";

/// Arbitrary text with the dangerous spellings mixed in at random places.
fn text() -> impl Strategy<Value = String> {
    let tag = "[sS][yY][sS][tT][eE][mM]-[rR][eE][mM][iI][nN][dD][eE][rR]";
    prop::collection::vec(
        prop_oneof![
            3 => any::<String>(),
            2 => prop::string::string_regex(&format!("</{tag}>?")).expect("valid regex"),
            1 => Just("<\\/system-reminder".to_owned()),
            1 => Just("<".to_owned()),
            1 => "[\u{80}-\u{10FFFF}]{1,4}",
            1 => Just("\u{FEFF}".to_owned()),
        ],
        0..12,
    )
    .prop_map(|v| v.concat())
}

fn budget() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..64, 64u64..600, 600u64..5_000, Just(u64::MAX)]
}

fn frame_ok(out: &Rendered, max: u64) -> Result<(), TestCaseError> {
    prop_assert!(out.len() as u64 <= max, "{} > {max}", out.len());
    if out.is_empty() {
        return Ok(());
    }
    prop_assert!(out.text.starts_with("<system-reminder>\n"));
    prop_assert!(out.text.ends_with("\n</system-reminder>"));
    let lower = out.text.to_ascii_lowercase();
    prop_assert_eq!(lower.matches(TAG).count(), 1);
    prop_assert_eq!(lower.find(TAG), Some(out.text.len() - TAG.len() - 1));
    Ok(())
}

/// The longest char-boundary prefix of `s` with at most `n` bytes.
fn prefix(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn content_ok(out: &Rendered, contents: &[&str]) -> Result<(), TestCaseError> {
    prop_assert_eq!(out.fates.len(), contents.len());
    for (fate, content) in out.fates.iter().zip(contents) {
        match *fate {
            Fate::Included => {
                prop_assert!(!out.is_empty());
                prop_assert!(out.text.contains(escape(content).as_ref()));
            }
            Fate::Truncated { original, kept } => {
                prop_assert_eq!(original, content.len());
                prop_assert!(kept < original);
                prop_assert!(content.is_char_boundary(kept));
                if kept > 0 {
                    let kept_text = prefix(content, kept);
                    prop_assert!(out.text.contains(escape(kept_text).as_ref()));
                }
            }
            Fate::Omitted => {}
        }
    }
    if out.is_empty() {
        prop_assert!(out.fates.iter().all(|f| !f.is_represented()));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn escaping_leaves_no_closing_tag_and_only_adds_backslashes(s in text()) {
        let out = escape(&s);
        prop_assert!(!out.to_ascii_lowercase().contains(TAG));
        // Dropping the inserted backslash after each escaped `<` restores
        // the input.
        let matches = s.to_ascii_lowercase().matches(TAG).count();
        prop_assert_eq!(out.len(), s.len() + matches);
        let lower_out = out.to_ascii_lowercase();
        let mut restored = String::with_capacity(s.len());
        let mut rest = out.as_ref();
        let mut lower_rest = lower_out.as_str();
        while let Some(at) = lower_rest.find("<\\/system-reminder") {
            restored.push_str(&rest[..=at]);
            rest = &rest[at + 2..];
            lower_rest = &lower_rest[at + 2..];
        }
        restored.push_str(rest);
        // Inputs that already held `<\/system-reminder` are ambiguous after
        // the round trip; compare only the unambiguous ones.
        if !s.to_ascii_lowercase().contains("<\\/system-reminder") {
            prop_assert_eq!(restored, s);
        }
    }

    #[test]
    fn baselines_are_one_bounded_frame(
        files in prop::collection::vec((text(), text()), 0..6),
        max in budget(),
        replacement in any::<bool>(),
    ) {
        let kind = if replacement { BaselineKind::Replacement } else { BaselineKind::Normal };
        let inputs: Vec<BaselineFile<'_>> = files
            .iter()
            .map(|(path, content)| BaselineFile { path, content })
            .collect();
        let out = render_baseline(kind, &inputs, Budget::bytes(max));
        frame_ok(&out, max)?;
        let contents: Vec<&str> = files.iter().map(|(_, c)| c.as_str()).collect();
        content_ok(&out, &contents)?;
        if max == u64::MAX {
            prop_assert!(out.fates.iter().all(|f| *f == Fate::Included));
            prop_assert!(out.notice.is_none());
        }
    }

    #[test]
    fn dynamic_batches_are_one_bounded_frame(
        sections in prop::collection::vec((0u8..5, text(), text(), text()), 0..6),
        max in budget(),
    ) {
        let inputs: Vec<Section<'_>> = sections
            .iter()
            .map(|(kind, path, other, content)| match kind {
                0 => Section::SetProject { path, dir: other, content },
                1 => Section::SetUserGlobal { path, content },
                2 => Section::Replace { path, content },
                3 => Section::ReplacePath { path, previous_path: other, content },
                _ => Section::Remove { path },
            })
            .collect();
        let out = render_dynamic(&inputs, Budget::bytes(max));
        frame_ok(&out, max)?;
        let contents: Vec<&str> = inputs.iter().map(|s| s.content().unwrap_or("")).collect();
        content_ok(&out, &contents)?;
        for (section, fate) in inputs.iter().zip(&out.fates) {
            if section.content().is_none() {
                // A remove cannot be cut (R-REN-6 step 3).
                let cut = matches!(fate, Fate::Truncated { .. });
                prop_assert!(!cut);
            }
        }
    }
}
