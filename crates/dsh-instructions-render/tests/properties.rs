//! Property tests for the R-REN-6 invariants, plus a naive reference
//! implementation of the budget algorithm (build every candidate text, measure
//! it) that the linear implementation must agree with exactly.

use dsh_instructions_render::{
    BaselineFile, BaselineKind, BlockKind, Budget, Fate, Framing, IntroUsed, Rendered, Section,
    escape, render_baseline, render_dynamic, text::SECTION_HEADER_PREFIXES,
};
use proptest::prelude::*;

const OPEN: &str = "<system-reminder>\n";
const CLOSE: &str = "\n</system-reminder>";
const NORMAL: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";
const SUPER: &str = "This complete workspace instruction baseline supersedes every earlier one. ";
const COMPACT: &str = "Workspace instructions were shortened to fit the configured byte budget.";

fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a",
            "rule ",
            "é",
            "日本",
            "😀",
            "\n",
            "<",
            "/",
            "</system-reminder",
            "</SYSTEM-reminder>",
            "</System-Reminder",
            "<\\/system-reminder",
            "0123456789abcdef",
        ]),
        0..24,
    )
    .prop_map(|v| v.concat())
}

fn path() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "AGENTS.md",
        "~/.dsh/AGENTS.md",
        "pkg/CLAUDE.md",
        "a/b/AGENTS.local.md",
        "x</system-reminder/AGENTS.md",
        "日本/AGENTS.md",
    ])
    .prop_map(str::to_owned)
}

fn files() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec((path(), pieces()), 0..6)
}

fn budget() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..200, 200u64..1200, 1200u64..4000]
}

fn ci_find_all(text: &str, needle: &str) -> Vec<usize> {
    let hay = text.as_bytes();
    let needle = needle.as_bytes();
    (0..=hay.len().saturating_sub(needle.len()))
        .filter(|&i| {
            hay.get(i..i + needle.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(needle))
        })
        .collect()
}

fn represented(out: &Rendered) -> usize {
    out.fates.iter().filter(|f| f.is_represented()).count()
}

/// Invariants every part must satisfy, whatever the inputs.
fn check_shape(out: &Rendered, inputs: usize, max: u64) -> Result<(), TestCaseError> {
    check_blocks(out)?;
    prop_assert!(out.len() as u64 <= max);
    prop_assert_eq!(out.fates.len(), inputs);
    if out.text.is_empty() {
        prop_assert_eq!(out.intro, IntroUsed::None);
        prop_assert_eq!(represented(out), 0);
        return Ok(());
    }
    prop_assert!(out.text.starts_with(OPEN));
    prop_assert!(out.text.ends_with(CLOSE));
    // The closing tag occurs once, as the frame's end.
    let tags = ci_find_all(&out.text, "</system-reminder");
    prop_assert_eq!(tags, vec![out.text.len() - "</system-reminder>".len()]);
    prop_assert_eq!(ci_find_all(&out.text, "<system-reminder>"), vec![0]);
    // Omitted inputs form a prefix at the broad end; only the most specific
    // represented input may be truncated.
    let first_kept = out
        .fates
        .iter()
        .position(|f| *f != Fate::Omitted)
        .unwrap_or(inputs);
    for (i, fate) in out.fates.iter().enumerate() {
        if i < first_kept {
            prop_assert_eq!(*fate, Fate::Omitted);
        } else {
            prop_assert!(fate.is_represented());
            if let Fate::Truncated { original, kept } = *fate {
                prop_assert_eq!(i, inputs - 1);
                prop_assert!(kept > 0 && kept < original);
            }
        }
    }
    // A notice exactly when something was dropped or cut (plus the compact
    // single-file case, which has none); when present it is the first block.
    let dropped = out.fates.iter().any(|f| *f != Fate::Included);
    if dropped {
        let notice = out.notice.as_deref().unwrap_or("<missing notice>");
        let body = &out.text[OPEN.len()..];
        prop_assert!(
            body.starts_with(notice) || body.starts_with(&format!("{SUPER}{notice}")),
            "notice is not the first block"
        );
        let head = format!("Workspace instruction budget {max} bytes: ");
        prop_assert!(notice.starts_with(&head));
    } else {
        prop_assert_eq!(&out.notice, &None);
    }
    Ok(())
}

/// The blocks are the part as values (issue 31 item 3): the text is their
/// framing, they come as notice, intro, sections, one section per
/// represented input, each opening with its header line; the bare framing
/// is the text without the frame.
fn check_blocks(out: &Rendered) -> Result<(), TestCaseError> {
    let texts = || out.blocks.iter().map(|b| b.text.as_str());
    prop_assert_eq!(&Framing::Reminder.part(texts()), &out.text);
    prop_assert_eq!(out.framed(Framing::Reminder), out.text.clone());
    let bare = out.framed(Framing::Bare);
    if out.text.is_empty() {
        prop_assert!(out.blocks.is_empty() && bare.is_empty());
        return Ok(());
    }
    prop_assert_eq!(
        Some(bare.as_str()),
        out.text
            .strip_prefix(OPEN)
            .and_then(|t| t.strip_suffix(CLOSE))
    );
    let rank = |k: &BlockKind| match k {
        BlockKind::Notice => 0,
        BlockKind::Intro => 1,
        BlockKind::Section { .. } => 2,
    };
    let ranks: Vec<u8> = out.blocks.iter().map(|b| rank(&b.kind)).collect();
    prop_assert!(
        ranks
            .windows(2)
            .all(|w| w[0] < w[1] || (w[0] == 2 && w[1] == 2))
    );
    prop_assert_eq!(
        out.notice.is_some(),
        out.blocks.first().map(|b| &b.kind) == Some(&BlockKind::Notice)
    );
    prop_assert_eq!(
        out.intro != IntroUsed::None,
        out.blocks.iter().any(|b| b.kind == BlockKind::Intro)
    );
    let sections: Vec<_> = out
        .blocks
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Section { header } => Some((header, &b.text)),
            _ => None,
        })
        .collect();
    prop_assert_eq!(sections.len(), represented(out));
    for (header, text) in sections {
        prop_assert!(
            SECTION_HEADER_PREFIXES
                .iter()
                .any(|p| header.starts_with(p))
        );
        prop_assert!(text.starts_with(header.as_str()));
        prop_assert!(text[header.len()..].starts_with("\n\n"));
    }
    Ok(())
}

/// Checks, by searching the text, that each baseline file is rendered exactly
/// as its fate says.
fn check_baseline_sections(
    out: &Rendered,
    files: &[(String, String)],
) -> Result<(), TestCaseError> {
    let headers = out
        .text
        .lines()
        .filter(|l| l.starts_with("Instructions from: "))
        .count();
    prop_assert_eq!(headers, represented(out));
    let block_headers: Vec<&str> = out
        .blocks
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Section { header } => Some(header.as_str()),
            _ => None,
        })
        .collect();
    let want: Vec<String> = files
        .iter()
        .zip(&out.fates)
        .filter(|(_, f)| f.is_represented())
        .map(|((path, _), _)| format!("Instructions from: {}", escape(path)))
        .collect();
    prop_assert_eq!(block_headers, want);
    for ((path, content), fate) in files.iter().zip(&out.fates) {
        let header = format!("Instructions from: {}", escape(path));
        let shown = match *fate {
            Fate::Omitted => continue,
            Fate::Included => content.as_str(),
            Fate::Truncated { original, kept } => {
                prop_assert_eq!(original, content.len());
                prop_assert!(content.is_char_boundary(kept));
                &content[..kept]
            }
        };
        // R-REN-1 literally: heading, blank line, content — also when the
        // content is empty.
        let section = format!("{header}\n\n{}", escape(shown));
        prop_assert!(out.text.contains(&section), "missing section {section:?}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Naive reference: builds every candidate text and keeps the first that fits.

fn frame(blocks: &[&str]) -> String {
    let body: Vec<&str> = blocks.iter().copied().filter(|b| !b.is_empty()).collect();
    format!("{OPEN}{}{CLOSE}", body.join("\n\n"))
}

/// The omitted part of R-REN-4, straight from its wording: every path, or
/// else the largest `j >= 1` whose `… and <k> more` text is at most
/// `L = max(512, floor(max / 16))` bytes, or else the count alone.
fn naive_omitted(max: u64, omitted: &[String]) -> String {
    let bound = 512usize.max(usize::try_from(max / 16).unwrap_or(usize::MAX));
    let list: Vec<String> = omitted.iter().map(|p| escape(p).into_owned()).collect();
    let n = list.len();
    let all = format!("omitted {}", list.join(", "));
    if all.len() <= bound {
        return all;
    }
    (1..=n)
        .map(|j| format!("omitted {} and {} more", list[..j].join(", "), n - j))
        .rfind(|text| text.len() <= bound)
        .unwrap_or_else(|| format!("omitted {n} files"))
}

fn naive_notice(max: u64, omitted: &[String], cut: Option<(&str, usize, usize)>) -> String {
    let mut parts = Vec::new();
    if !omitted.is_empty() {
        parts.push(naive_omitted(max, omitted));
    }
    if let Some((p, x, y)) = cut {
        parts.push(format!("truncated {} from {x} to {y} bytes", escape(p)));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(
            "Workspace instruction budget {max} bytes: {}",
            parts.join("; ")
        )
    }
}

/// (header blocks joined, path, content) of one input.
type Item = (String, String, String);

fn naive(
    items: &[Item],
    intro: &str,
    compact: Option<&str>,
    lead: &str,
    max: u64,
) -> (String, Vec<Fate>) {
    let n = items.len();
    if n == 0 {
        return (String::new(), vec![]);
    }
    let section = |item: &Item, kept: usize| {
        let c = escape(&item.2[..kept]).into_owned();
        // A baseline section is heading + blank line + content, an empty
        // file included (R-REN-1); a dynamic section's empty content is an
        // empty block and is skipped (R-REN-3 says nothing else).
        if c.is_empty() && !item.0.starts_with("Instructions from: ") {
            item.0.clone()
        } else {
            format!("{}\n\n{c}", item.0)
        }
    };
    let paths: Vec<String> = items.iter().map(|i| i.1.clone()).collect();
    for k in 0..n {
        let notice = naive_notice(max, &paths[..k], None);
        let secs: Vec<String> = items[k..].iter().map(|i| section(i, i.2.len())).collect();
        let mut blocks = vec![notice.as_str(), intro];
        blocks.extend(secs.iter().map(String::as_str));
        let text = frame(&blocks);
        if text.len() as u64 <= max {
            let mut fates = vec![Fate::Omitted; k];
            fates.resize(n, Fate::Included);
            return (text, fates);
        }
    }
    let last = &items[n - 1];
    let x = last.2.len();
    let tries: Vec<&str> = match compact {
        Some(c) => vec![intro, c],
        None => vec![intro],
    };
    for try_intro in tries {
        for kept in (0..=x).rev().filter(|&k| last.2.is_char_boundary(k)) {
            if kept == 0 && x > 0 {
                break;
            }
            let cut = (kept < x).then_some((last.1.as_str(), x, kept));
            let notice = naive_notice(max, &paths[..n - 1], cut);
            let text = frame(&[notice.as_str(), try_intro, &section(last, kept)]);
            if text.len() as u64 <= max {
                let mut fates = vec![Fate::Omitted; n - 1];
                fates.push(if kept < x {
                    Fate::Truncated { original: x, kept }
                } else {
                    Fate::Included
                });
                return (text, fates);
            }
        }
    }
    let notice = naive_notice(max, &paths, None);
    let text = frame(&[&format!("{lead}{notice}")]);
    if text.len() as u64 <= max {
        return (text, vec![Fate::Omitted; n]);
    }
    (String::new(), vec![Fate::Omitted; n])
}

fn section_strategy() -> impl Strategy<Value = (u8, String, String, String)> {
    (0u8..5, path(), path(), pieces())
}

fn to_section(s: &(u8, String, String, String)) -> Section<'_> {
    let (kind, path, other, content) = s;
    match kind {
        0 => Section::SetProject {
            path,
            dir: other,
            content,
        },
        1 => Section::SetUserGlobal { path, content },
        2 => Section::Replace { path, content },
        3 => Section::ReplacePath {
            path,
            previous_path: other,
            content,
        },
        _ => Section::Remove { path },
    }
}

/// The same section as the reference sees it: header blocks + content.
fn naive_item(s: &(u8, String, String, String)) -> Item {
    let (kind, path, other, content) = s;
    let p = escape(path);
    let o = escape(other);
    let tail = "Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.";
    let header = match kind {
        0 => format!(
            "Additional instructions from: {p}\n\nThese instructions apply to work under `{o}`. {tail}"
        ),
        1 => format!(
            "Additional instructions from: {p}\n\nThese instructions apply to all work. {tail}"
        ),
        2 => format!(
            "Updated instructions from: {p}\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it."
        ),
        3 => format!(
            "Updated instructions from: {p}\n\nThese instructions take the place of the instructions previously loaded from {o}, which no longer apply."
        ),
        _ => format!(
            "Instructions removed: {p}\n\nThe instructions previously loaded from this file no longer apply."
        ),
    };
    let content = if *kind >= 4 {
        String::new()
    } else {
        content.clone()
    };
    (header, path.clone(), content)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn baseline_invariants(files in files(), max in budget(), replacement in any::<bool>()) {
        let kind = if replacement { BaselineKind::Replacement } else { BaselineKind::Normal };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        let out = render_baseline(kind, &input, Budget::bytes(max));
        check_shape(&out, files.len(), max)?;
        if !files.is_empty() {
            check_baseline_sections(&out, &files)?;
        }
    }

    #[test]
    fn baseline_matches_naive_reference(files in files(), max in budget(), replacement in any::<bool>()) {
        prop_assume!(!files.is_empty());
        let (kind, intro, compact, lead) = if replacement {
            (BaselineKind::Replacement, format!("{SUPER}{NORMAL}"), format!("{SUPER}{COMPACT}"), SUPER)
        } else {
            (BaselineKind::Normal, NORMAL.to_owned(), COMPACT.to_owned(), "")
        };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        let items: Vec<Item> = files
            .iter()
            .map(|(p, c)| (format!("Instructions from: {}", escape(p)), p.clone(), c.clone()))
            .collect();
        let out = render_baseline(kind, &input, Budget::bytes(max));
        let (text, fates) = naive(&items, &intro, Some(&compact), lead, max);
        prop_assert_eq!(out.text, text);
        prop_assert_eq!(out.fates, fates);
    }

    #[test]
    fn baseline_matches_naive_near_its_full_size(
        files in files(),
        shortfall in 0.0f64..1.0,
        replacement in any::<bool>(),
    ) {
        // Budgets spread over (0, full size]: every step gets exercised, not
        // only the ones the absolute budget ranges happen to hit.
        prop_assume!(!files.is_empty());
        let kind = if replacement { BaselineKind::Replacement } else { BaselineKind::Normal };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        let full = render_baseline(kind, &input, Budget::bytes(u64::MAX)).len() as f64;
        let max = (full * (1.0 - shortfall)) as u64;
        let (intro, compact, lead) = if replacement {
            (format!("{SUPER}{NORMAL}"), format!("{SUPER}{COMPACT}"), SUPER)
        } else {
            (NORMAL.to_owned(), COMPACT.to_owned(), "")
        };
        let items: Vec<Item> = files
            .iter()
            .map(|(p, c)| (format!("Instructions from: {}", escape(p)), p.clone(), c.clone()))
            .collect();
        let out = render_baseline(kind, &input, Budget::bytes(max));
        check_shape(&out, files.len(), max)?;
        let (text, fates) = naive(&items, &intro, Some(&compact), lead, max);
        prop_assert_eq!(out.text, text);
        prop_assert_eq!(out.fates, fates);
    }

    #[test]
    fn dynamic_matches_naive_reference(
        sections in prop::collection::vec(section_strategy(), 0..6),
        max in budget(),
    ) {
        let input: Vec<Section<'_>> = sections.iter().map(to_section).collect();
        let items: Vec<Item> = sections.iter().map(naive_item).collect();
        let out = render_dynamic(&input, Budget::bytes(max));
        check_shape(&out, sections.len(), max)?;
        prop_assert_eq!(out.intro, IntroUsed::None);
        let (text, fates) = naive(&items, "", None, "", max);
        prop_assert_eq!(out.text, text);
        prop_assert_eq!(out.fates, fates);
    }

    /// Holds while `L` of R-REN-4 stays at 512 (budgets below 8192, as
    /// here): above that a larger budget also lengthens the bounded notice,
    /// which may list one more long path and leave less room for content.
    #[test]
    fn larger_budget_never_represents_fewer(
        files in files(),
        max in budget(),
        more in 0u64..600,
        replacement in any::<bool>(),
    ) {
        let kind = if replacement { BaselineKind::Replacement } else { BaselineKind::Normal };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        let small = render_baseline(kind, &input, Budget::bytes(max));
        let large = render_baseline(kind, &input, Budget::bytes(max + more));
        prop_assert!(represented(&small) <= represented(&large));
    }

    #[test]
    fn escape_removes_every_tag(text in pieces()) {
        let escaped = escape(&text);
        prop_assert!(ci_find_all(&escaped, "</system-reminder").is_empty());
        let tags = ci_find_all(&text, "</system-reminder").len();
        prop_assert_eq!(escaped.len(), text.len() + tags);
        // Nothing but one backslash per tag, after its `<`, is changed.
        prop_assert_eq!(escaped.as_ref(), insert_escapes(&text));
    }
}

/// `original` with a backslash inserted after the `<` of every tag.
fn insert_escapes(original: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for at in ci_find_all(original, "</system-reminder") {
        out.push_str(&original[last..=at]);
        out.push('\\');
        last = at + 1;
    }
    out.push_str(&original[last..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A caller may skip reading broad files once the raw content of the more
    /// specific ones alone exceeds the budget: the result must be exactly the
    /// render over the full list.
    #[test]
    fn skipping_unreadable_broad_files_changes_nothing(
        files in prop::collection::vec((path(), pieces()), 2..7),
        max in 0u64..160,
        replacement in any::<bool>(),
    ) {
        let kind = if replacement { BaselineKind::Replacement } else { BaselineKind::Normal };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        // The largest skippable prefix: the suffix after it holds more raw
        // content than the budget.
        let mut suffix = 0u64;
        let mut split = input.len();
        while split > 1 && suffix <= max {
            split -= 1;
            suffix += input[split].content.len() as u64;
        }
        prop_assume!(suffix > max && split > 0);
        let unread: Vec<&str> = input[..split].iter().map(|f| f.path).collect();
        let full = render_baseline(kind, &input, Budget::bytes(max));
        let skipped = dsh_instructions_render::render_baseline_skipping(kind, &unread, &input[split..], Budget::bytes(max));
        prop_assert_eq!(skipped, full);
    }

    /// The text-only render (issue 46 item 4) writes its text directly:
    /// it must be the text, fates, notice and intro of the render with
    /// blocks, over every step of the budget algorithm, with or without
    /// unread files.
    #[test]
    fn text_only_render_is_the_render_without_blocks(
        files in files(),
        unread in prop::collection::vec(path(), 0..3),
        max in budget(),
        replacement in any::<bool>(),
    ) {
        let kind = if replacement { BaselineKind::Replacement } else { BaselineKind::Normal };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        let unread: Vec<&str> = unread.iter().map(String::as_str).collect();
        let full = dsh_instructions_render::render_baseline_skipping(kind, &unread, &input, Budget::bytes(max));
        let text = dsh_instructions_render::render_baseline_text(kind, &unread, &input, Budget::bytes(max));
        prop_assert!(text.blocks.is_empty());
        prop_assert_eq!(Rendered { blocks: Vec::new(), ..full }, text);
    }
}

// ---------------------------------------------------------------------------
// Deep chains: many inputs with long paths, so the omitted list passes its
// bound (R-REN-4) and every listing form — all paths, `… and <k> more`,
// `omitted <n> files` — meets the byte-for-byte comparison.

fn deep_path() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            prop::sample::select(vec![
                "d",
                "a-directory-with-a-rather-long-name",
                "日本",
                "x</system-reminder",
            ]),
            0..24,
        ),
        prop::sample::select(vec!["AGENTS.md", "CLAUDE.md", "AGENTS.local.md"]),
    )
        .prop_map(|(dirs, name)| {
            dirs.iter()
                .copied()
                .chain(std::iter::once(name))
                .collect::<Vec<_>>()
                .join("/")
        })
}

fn deep_files() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec((deep_path(), pieces()), 1..40)
}

/// Budgets on both sides of 8192, where `L` starts to grow past 512.
fn deep_budget() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..1500, 1500u64..9000, 9000u64..40_000]
}

fn baseline_items(files: &[(String, String)]) -> Vec<Item> {
    files
        .iter()
        .map(|(p, c)| {
            (
                format!("Instructions from: {}", escape(p)),
                p.clone(),
                c.clone(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn deep_baseline_matches_naive_reference(
        files in deep_files(),
        max in deep_budget(),
        shortfall in prop::option::of(0.0f64..1.0),
        replacement in any::<bool>(),
    ) {
        let (kind, intro, compact, lead) = if replacement {
            (BaselineKind::Replacement, format!("{SUPER}{NORMAL}"), format!("{SUPER}{COMPACT}"), SUPER)
        } else {
            (BaselineKind::Normal, NORMAL.to_owned(), COMPACT.to_owned(), "")
        };
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        // Either an absolute budget or one just under the full size.
        let max = match shortfall {
            Some(s) => (render_baseline(kind, &input, Budget::bytes(u64::MAX)).len() as f64 * (1.0 - s)) as u64,
            None => max,
        };
        let out = render_baseline(kind, &input, Budget::bytes(max));
        check_shape(&out, files.len(), max)?;
        check_baseline_sections(&out, &files)?;
        let (text, fates) = naive(&baseline_items(&files), &intro, Some(&compact), lead, max);
        prop_assert_eq!(out.text, text);
        prop_assert_eq!(out.fates, fates);
    }

    #[test]
    fn deep_dynamic_matches_naive_reference(
        sections in prop::collection::vec((0u8..5, deep_path(), deep_path(), pieces()), 1..40),
        max in deep_budget(),
    ) {
        let input: Vec<Section<'_>> = sections.iter().map(to_section).collect();
        let items: Vec<Item> = sections.iter().map(naive_item).collect();
        let out = render_dynamic(&input, Budget::bytes(max));
        check_shape(&out, sections.len(), max)?;
        let (text, fates) = naive(&items, "", None, "", max);
        prop_assert_eq!(out.text, text);
        prop_assert_eq!(out.fates, fates);
    }

    /// The notice stays within its bound: the omitted part is at most `L`
    /// bytes, or is the bare count (R-REN-4).
    #[test]
    fn deep_notice_omitted_part_is_bounded(files in deep_files(), max in deep_budget()) {
        let input: Vec<BaselineFile<'_>> =
            files.iter().map(|(p, c)| BaselineFile { path: p, content: c }).collect();
        let out = render_baseline(BaselineKind::Normal, &input, Budget::bytes(max));
        let bound = 512u64.max(max / 16) as usize;
        if let Some(notice) = &out.notice {
            let head = format!("Workspace instruction budget {max} bytes: ");
            let rest = &notice[head.len()..];
            let omitted_part = rest.split("; truncated ").next().unwrap_or(rest);
            if omitted_part.starts_with("omitted ") {
                let count = out.fates.iter().filter(|f| **f == Fate::Omitted).count();
                prop_assert!(
                    omitted_part.len() <= bound || omitted_part == format!("omitted {count} files"),
                    "omitted part over its bound: {omitted_part:?}"
                );
            }
        }
    }
}
