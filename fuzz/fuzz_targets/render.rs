//! The renderer over arbitrary text and budgets (R-REN-5, R-REN-6): the
//! output is empty or one frame, within budget, with the closing tag once,
//! at its end.
#![no_main]

use dsh_instructions_render::{BaselineFile, BaselineKind, Budget, Rendered, Section, render_baseline, render_dynamic};
use libfuzzer_sys::fuzz_target;

const TAG: &str = "</system-reminder";

fn check(out: &Rendered, max: u64, inputs: usize) {
    assert!(out.len() as u64 <= max, "over budget");
    assert_eq!(out.fates.len(), inputs);
    if out.is_empty() {
        return;
    }
    assert!(out.text.starts_with("<system-reminder>\n"));
    assert!(out.text.ends_with("\n</system-reminder>"));
    let lower = out.text.to_ascii_lowercase();
    assert_eq!(lower.matches(TAG).count(), 1, "closing tag inside the body");
}

fuzz_target!(|data: &[u8]| {
    // Layout: 8 bytes of budget, 1 byte of flags, then NUL-separated
    // (path, content) strings.
    let Some((head, rest)) = data.split_at_checked(9) else {
        return;
    };
    let mut budget = [0u8; 8];
    budget.copy_from_slice(&head[..8]);
    // Mostly small budgets, where the interesting cuts happen.
    let max = u64::from_le_bytes(budget) % 20_000;
    let flags = head[8];
    let text = String::from_utf8_lossy(rest);
    let fields: Vec<&str> = text.split('\0').collect();
    let pairs: Vec<(&str, &str)> = fields
        .chunks(2)
        .map(|c| (c[0], c.get(1).copied().unwrap_or("")))
        .collect();

    let files: Vec<BaselineFile<'_>> = pairs
        .iter()
        .map(|&(path, content)| BaselineFile { path, content })
        .collect();
    let kind = if flags & 1 == 0 {
        BaselineKind::Normal
    } else {
        BaselineKind::Replacement
    };
    check(&render_baseline(kind, &files, Budget::bytes(max)), max, files.len());

    let sections: Vec<Section<'_>> = pairs
        .iter()
        .enumerate()
        .map(
            |(i, &(path, content))| match (usize::from(flags >> 1) + i) % 5 {
                0 => Section::SetProject {
                    path,
                    dir: path,
                    content,
                },
                1 => Section::SetUserGlobal { path, content },
                2 => Section::Replace { path, content },
                3 => Section::ReplacePath {
                    path,
                    previous_path: content,
                    content,
                },
                _ => Section::Remove { path },
            },
        )
        .collect();
    check(&render_dynamic(&sections, Budget::bytes(max)), max, sections.len());
});
