//! Keeps `docs/prompt-shape.md` honest: every ```` ```text ```` block in it,
//! in order, must be exactly what this crate renders for the inputs the doc
//! describes.

use dsh_instructions_render::{
    BaselineFile, BaselineKind, Budget, Section, render_baseline, render_dynamic,
    render_empty_replacement,
};

const DOC: &str = include_str!("../../../docs/prompt-shape.md");

const G: BaselineFile<'static> = BaselineFile {
    path: "~/.dsh/AGENTS.md",
    content: "Answer in English. Prefer short replies.",
};
const R: BaselineFile<'static> = BaselineFile {
    path: "AGENTS.md",
    content: "Run `cargo test` before every commit. Keep commits small and explain why.",
};
const P: BaselineFile<'static> = BaselineFile {
    path: "pkg/AGENTS.md",
    content: "This package is no_std: do not add std-only dependencies.",
};
const R2: &str = "Run `cargo test --workspace` before every commit.";

fn text_blocks(doc: &str) -> Vec<&str> {
    doc.split("```text\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("\n```").map(|(block, _)| block))
        .collect()
}

/// The doc's examples, in the doc's order.
fn examples() -> Vec<String> {
    let normal = |files: &[BaselineFile<'_>], max| {
        render_baseline(BaselineKind::Normal, files, Budget::bytes(max)).text
    };
    let dynamic = |sections: &[Section<'_>]| render_dynamic(sections, Budget::bytes(65_536)).text;
    let set_pkg = Section::SetProject {
        path: P.path,
        dir: "pkg",
        content: P.content,
    };
    let replace_root = Section::Replace {
        path: R.path,
        content: R2,
    };
    let remove_pkg = Section::Remove { path: P.path };
    vec![
        normal(&[G, R, P], 65_536),
        render_baseline(BaselineKind::Replacement, &[R, P], Budget::bytes(65_536)).text,
        render_empty_replacement(Budget::bytes(65_536)).text,
        normal(&[G, R, P], 580),
        normal(&[G, R], 270),
        normal(&[G, R, P], 150),
        render_baseline(BaselineKind::Replacement, &[R, P], Budget::bytes(220)).text,
        dynamic(&[set_pkg]),
        dynamic(&[Section::SetUserGlobal {
            path: G.path,
            content: G.content,
        }]),
        dynamic(&[replace_root]),
        dynamic(&[Section::ReplacePath {
            path: "pkg/CLAUDE.md",
            previous_path: P.path,
            content: "This package is no_std. Use core and alloc only.",
        }]),
        dynamic(&[remove_pkg]),
        dynamic(&[replace_root, set_pkg]),
        normal(&[R], 65_536),
        dynamic(&[remove_pkg]),
    ]
}

#[test]
fn every_text_block_is_what_the_crate_renders() {
    let blocks = text_blocks(DOC);
    let rendered = examples();
    assert_eq!(blocks.len(), rendered.len(), "one text block per example");
    for (i, (block, text)) in blocks.iter().zip(&rendered).enumerate() {
        assert_eq!(
            *block, text,
            "text block #{i} of docs/prompt-shape.md drifted"
        );
    }
}

#[test]
fn stated_part_sizes_match() {
    // "the part is N bytes" lines, in order, must match the renders.
    let sizes: Vec<usize> = DOC
        .split("; the part is ")
        .skip(1)
        .filter_map(|rest| rest.split_once(" bytes").and_then(|(n, _)| n.parse().ok()))
        .collect();
    let rendered: Vec<usize> = examples().iter().map(String::len).collect();
    assert_eq!(sizes, rendered);
}
