//! Table tests pinning the exact SPEC §6 texts and every budget step.
//!
//! Expected strings are written by hand from SPEC R-REN-1..R-REN-6 (the
//! literals below are typed from the SPEC, not taken from the crate's
//! constants), so a drift in either the templates or the algorithm fails here.

use super::*;
use rstest::rstest;

const OPEN: &str = "<system-reminder>\n";
const CLOSE: &str = "\n</system-reminder>";
const NORMAL: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";
const SUPER: &str = "This complete workspace instruction baseline supersedes every earlier one. ";
const EMPTY: &str = "This complete workspace instruction baseline supersedes every earlier one. No workspace instructions are active now.";
const COMPACT: &str = "Workspace instructions were shortened to fit the configured byte budget.";

fn frame(body: &str) -> String {
    format!("{OPEN}{body}{CLOSE}")
}

/// Finds the budget `m` for which `text(m)` is exactly `m` bytes long (the
/// notice names the budget, so its digits feed back into the length).
fn fixed_point(text: impl Fn(u64) -> String) -> (u64, String) {
    let mut max = 0;
    loop {
        let t = text(max);
        if t.len() as u64 == max {
            return (max, t);
        }
        max = t.len() as u64;
    }
}

fn file<'a>(path: &'a str, content: &'a str) -> BaselineFile<'a> {
    BaselineFile { path, content }
}

#[test]
fn constants_match_spec_texts() {
    assert_eq!(INTRO_NORMAL, NORMAL);
    assert_eq!(SUPERSEDE, SUPER);
    assert!(SUPERSEDE.ends_with(". "));
    assert_eq!(EMPTY_REPLACEMENT, EMPTY);
    assert_eq!(INTRO_COMPACT, COMPACT);
    assert_eq!(INTRO_REPLACEMENT, format!("{SUPER}{NORMAL}"));
    assert_eq!(INTRO_REPLACEMENT_COMPACT, format!("{SUPER}{COMPACT}"));
    assert_eq!(FRAME_OPEN, OPEN);
    assert_eq!(FRAME_CLOSE, CLOSE);
    assert_eq!(
        SECTION_HEADER_PREFIXES,
        [
            "Instructions from: ",
            "Additional instructions from: ",
            "Updated instructions from: ",
            "Instructions removed: ",
        ]
    );
    assert_eq!(NOTICE_PREFIX, "Workspace instruction budget ");
}

#[rstest]
#[case::normal_one(
    BaselineKind::Normal,
    vec![file("AGENTS.md", "Use tabs.")],
    format!("{NORMAL}\n\nInstructions from: AGENTS.md\n\nUse tabs."),
    IntroUsed::Normal
)]
#[case::normal_three(
    BaselineKind::Normal,
    vec![file("~/.dsh/AGENTS.md", "Global."), file("AGENTS.md", "Root.\n"), file("pkg/CLAUDE.md", "Pkg.")],
    format!("{NORMAL}\n\nInstructions from: ~/.dsh/AGENTS.md\n\nGlobal.\n\nInstructions from: AGENTS.md\n\nRoot.\n\n\nInstructions from: pkg/CLAUDE.md\n\nPkg."),
    IntroUsed::Normal
)]
#[case::replacement(
    BaselineKind::Replacement,
    vec![file("$DSH_HOME/AGENTS.md", "G")],
    format!("{SUPER}{NORMAL}\n\nInstructions from: $DSH_HOME/AGENTS.md\n\nG"),
    IntroUsed::Replacement
)]
// R-REN-1: an empty file is a section too, heading and blank line with no
// content; the next block then follows after the usual blank line.
#[case::empty_content(
    BaselineKind::Normal,
    vec![file("AGENTS.md", ""), file("pkg/AGENTS.md", "x")],
    format!("{NORMAL}\n\nInstructions from: AGENTS.md\n\n\n\nInstructions from: pkg/AGENTS.md\n\nx"),
    IntroUsed::Normal
)]
#[case::empty_content_last(
    BaselineKind::Normal,
    vec![file("AGENTS.md", "x"), file("pkg/AGENTS.md", "")],
    format!("{NORMAL}\n\nInstructions from: AGENTS.md\n\nx\n\nInstructions from: pkg/AGENTS.md\n\n"),
    IntroUsed::Normal
)]
#[case::escaped_path_and_content(
    BaselineKind::Normal,
    vec![file("a</system-reminder>/AGENTS.md", "x</SYSTEM-reminder>y</System-Reminder")],
    format!("{NORMAL}\n\nInstructions from: a<\\/system-reminder>/AGENTS.md\n\nx<\\/SYSTEM-reminder>y<\\/System-Reminder"),
    IntroUsed::Normal
)]
fn baseline_templates(
    #[case] kind: BaselineKind,
    #[case] files: Vec<BaselineFile<'static>>,
    #[case] body: String,
    #[case] intro: IntroUsed,
) {
    let expected = frame(&body);
    // Step 1 at the exact size, and with room to spare.
    for max in [expected.len() as u64, 1 << 20] {
        let out = render_baseline(kind, &files, Budget::bytes(max));
        assert_eq!(out.text, expected);
        assert_eq!(out.fates, vec![Fate::Included; files.len()]);
        assert_eq!(out.notice, None);
        assert_eq!(out.intro, intro);
    }
}

#[rstest]
#[case::set_project(
    Section::SetProject { path: "pkg/AGENTS.md", dir: "pkg", content: "Run make." },
    "Additional instructions from: pkg/AGENTS.md\n\nThese instructions apply to work under `pkg`. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\nRun make."
)]
#[case::set_project_root(
    Section::SetProject { path: "CLAUDE.md", dir: ".", content: "c" },
    "Additional instructions from: CLAUDE.md\n\nThese instructions apply to work under `.`. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\nc"
)]
#[case::set_user_global(
    Section::SetUserGlobal { path: "~/.dsh/AGENTS.md", content: "Be brief." },
    "Additional instructions from: ~/.dsh/AGENTS.md\n\nThese instructions apply to all work. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\nBe brief."
)]
#[case::replace(
    Section::Replace { path: "AGENTS.md", content: "v2" },
    "Updated instructions from: AGENTS.md\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.\n\nv2"
)]
#[case::replace_path(
    Section::ReplacePath { path: "CLAUDE.md", previous_path: "AGENTS.md", content: "v3" },
    "Updated instructions from: CLAUDE.md\n\nThese instructions take the place of the instructions previously loaded from AGENTS.md, which no longer apply.\n\nv3"
)]
#[case::remove(
    Section::Remove { path: "old/AGENTS.md" },
    "Instructions removed: old/AGENTS.md\n\nThe instructions previously loaded from this file no longer apply."
)]
#[case::set_empty_content(
    Section::Replace { path: "AGENTS.md", content: "" },
    "Updated instructions from: AGENTS.md\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it."
)]
#[case::escapes_everywhere(
    Section::SetProject { path: "</SYSTEM-REMINDER>/AGENTS.md", dir: "</system-Reminder>", content: "</system-reminder>" },
    "Additional instructions from: <\\/SYSTEM-REMINDER>/AGENTS.md\n\nThese instructions apply to work under `<\\/system-Reminder>`. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\n<\\/system-reminder>"
)]
#[case::escapes_previous_path(
    Section::ReplacePath { path: "b", previous_path: "x</system-reminder", content: "c" },
    "Updated instructions from: b\n\nThese instructions take the place of the instructions previously loaded from x<\\/system-reminder, which no longer apply.\n\nc"
)]
fn dynamic_templates(#[case] section: Section<'static>, #[case] body: &str) {
    let expected = frame(body);
    let out = render_dynamic(&[section], Budget::bytes(expected.len() as u64));
    assert_eq!(out.text, expected);
    assert_eq!(out.fates, [Fate::Included]);
    assert_eq!(out.intro, IntroUsed::None);
    assert_eq!(out.notice, None);
}

#[test]
fn dynamic_batch_joins_sections_in_given_order() {
    let sections = [
        Section::Remove {
            path: "a/AGENTS.md",
        },
        Section::Replace {
            path: "b/AGENTS.md",
            content: "B",
        },
    ];
    let out = render_dynamic(&sections, Budget::bytes(10_000));
    assert_eq!(
        out.text,
        frame(
            "Instructions removed: a/AGENTS.md\n\nThe instructions previously loaded from this file no longer apply.\n\nUpdated instructions from: b/AGENTS.md\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.\n\nB"
        )
    );
}

#[rstest]
#[case::normal_empty_list(BaselineKind::Normal, 10_000, "")]
#[case::replacement_empty_list(BaselineKind::Replacement, 10_000, "frame")]
#[case::replacement_empty_list_too_small(BaselineKind::Replacement, 18 + 116 + 18, "")]
#[case::replacement_empty_list_exact(BaselineKind::Replacement, 18 + 116 + 19, "frame")]
fn empty_inputs(#[case] kind: BaselineKind, #[case] max: u64, #[case] want: &str) {
    let out = render_baseline(kind, &[], Budget::bytes(max));
    assert!(out.fates.is_empty());
    assert_eq!(out.notice, None);
    if want.is_empty() {
        assert_eq!(out.text, "");
        assert_eq!(out.intro, IntroUsed::None);
    } else {
        assert_eq!(out.text, frame(EMPTY));
        assert_eq!(out.intro, IntroUsed::EmptyReplacement);
    }
}

#[test]
fn dynamic_empty_list_renders_nothing() {
    assert_eq!(
        render_dynamic(&[], Budget::bytes(10_000)),
        budget::nothing(0)
    );
}

#[rstest]
#[case::baseline(true)]
#[case::dynamic(false)]
fn zero_budget_renders_nothing(#[case] baseline: bool) {
    let out = if baseline {
        render_baseline(BaselineKind::Normal, &[file("a", "x")], Budget::bytes(0))
    } else {
        render_dynamic(&[Section::Remove { path: "a" }], Budget::bytes(0))
    };
    assert_eq!(out.text, "");
    assert_eq!(out.fates, [Fate::Omitted]);
    assert_eq!(out.notice, None);
    assert_eq!(render_empty_replacement(Budget::bytes(0)).text, "");
}

const LONG: &str = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";

#[rstest]
#[case::one_dropped(1)]
#[case::two_dropped(2)]
fn step2_drops_from_the_broad_end(#[case] dropped: usize) {
    let files = [
        file("~/.dsh/AGENTS.md", LONG),
        file("AGENTS.md", LONG),
        file("pkg/AGENTS.md", "P"),
    ];
    let (max, expected) = fixed_point(|max| {
        let (notice, sections) = if dropped == 1 {
            (
                format!("Workspace instruction budget {max} bytes: omitted ~/.dsh/AGENTS.md"),
                format!(
                    "Instructions from: AGENTS.md\n\n{LONG}\n\nInstructions from: pkg/AGENTS.md\n\nP"
                ),
            )
        } else {
            (
                format!(
                    "Workspace instruction budget {max} bytes: omitted ~/.dsh/AGENTS.md, AGENTS.md"
                ),
                "Instructions from: pkg/AGENTS.md\n\nP".to_owned(),
            )
        };
        frame(&format!("{notice}\n\n{NORMAL}\n\n{sections}"))
    });
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(max));
    assert_eq!(out.text, expected);
    let mut fates = vec![Fate::Omitted; dropped];
    fates.resize(3, Fate::Included);
    assert_eq!(out.fates, fates);
    assert_eq!(out.intro, IntroUsed::Normal);
    assert!(out.notice.as_deref().is_some_and(|n| expected.contains(n)));
}

#[test]
fn step3_cuts_with_own_intro_first() {
    let files = [file("AGENTS.md", LONG), file("pkg/AGENTS.md", LONG)];
    // Keep exactly 40 of 100 bytes: the budget is that render's length.
    let (max, expected) = fixed_point(|max| {
        frame(&format!(
            "Workspace instruction budget {max} bytes: omitted AGENTS.md; truncated pkg/AGENTS.md from 100 to 40 bytes\n\n{NORMAL}\n\nInstructions from: pkg/AGENTS.md\n\n{}",
            &LONG[..40]
        ))
    });
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(max));
    assert_eq!(out.text, expected);
    assert_eq!(
        out.fates,
        [
            Fate::Omitted,
            Fate::Truncated {
                original: 100,
                kept: 40
            }
        ]
    );
    assert_eq!(out.intro, IntroUsed::Normal);
    assert_eq!(
        out.notice.as_deref(),
        Some(
            format!("Workspace instruction budget {max} bytes: omitted AGENTS.md; truncated pkg/AGENTS.md from 100 to 40 bytes")
                .as_str()
        )
    );
    // One byte more keeps one byte more.
    let more = render_baseline(BaselineKind::Normal, &files, Budget::bytes(max + 1));
    assert_eq!(
        more.fates[1],
        Fate::Truncated {
            original: 100,
            kept: 41
        }
    );
    assert_eq!(more.len() as u64, max + 1);
}

#[rstest]
#[case::normal(BaselineKind::Normal, "", IntroUsed::Compact)]
#[case::replacement(BaselineKind::Replacement, SUPER, IntroUsed::ReplacementCompact)]
fn step3_falls_back_to_compact_intro(
    #[case] kind: BaselineKind,
    #[case] lead: &str,
    #[case] used: IntroUsed,
) {
    let files = [file("AGENTS.md", LONG), file("pkg/AGENTS.md", LONG)];
    let (max, expected) = fixed_point(|max| {
        frame(&format!(
            "Workspace instruction budget {max} bytes: omitted AGENTS.md; truncated pkg/AGENTS.md from 100 to 5 bytes\n\n{lead}{COMPACT}\n\nInstructions from: pkg/AGENTS.md\n\n01234"
        ))
    });
    // Far too small for the normal intro, so only the compact try can keep a byte.
    assert!(max < (lead.len() + NORMAL.len()) as u64);
    let out = render_baseline(kind, &files, Budget::bytes(max));
    assert_eq!(out.text, expected);
    assert_eq!(
        out.fates,
        [
            Fate::Omitted,
            Fate::Truncated {
                original: 100,
                kept: 5
            }
        ]
    );
    assert_eq!(out.intro, used);
}

#[test]
fn step3_compact_whole_file_has_no_notice() {
    // One small file: no other file omitted and nothing cut, so no notice.
    let files = [file("AGENTS.md", "tiny")];
    let expected = frame(&format!(
        "{COMPACT}\n\nInstructions from: AGENTS.md\n\ntiny"
    ));
    let out = render_baseline(
        BaselineKind::Normal,
        &files,
        Budget::bytes(expected.len() as u64),
    );
    assert_eq!(out.text, expected);
    assert_eq!(out.fates, [Fate::Included]);
    assert_eq!(out.notice, None);
    assert_eq!(out.intro, IntroUsed::Compact);
}

/// R-REN-1 for an empty file at the budget boundary: the smallest budget
/// that renders it whole is the frame with heading *and* blank line; one
/// byte less moves to the compact intro (the empty file is still represented,
/// step 3), and one byte below the compact frame leaves only the notice frame
/// or nothing.
#[rstest]
#[case::normal_exact(0, IntroUsed::Normal)]
#[case::compact_exact(1, IntroUsed::Compact)]
fn empty_file_budget_boundary(#[case] short: u64, #[case] intro: IntroUsed) {
    let files = [file("AGENTS.md", "")];
    let whole = frame(&format!("{NORMAL}\n\nInstructions from: AGENTS.md\n\n"));
    let compact = frame(&format!("{COMPACT}\n\nInstructions from: AGENTS.md\n\n"));
    let max = whole.len() as u64 - short;
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(max));
    let want = if intro == IntroUsed::Normal {
        &whole
    } else {
        &compact
    };
    assert_eq!(out.text, *want);
    assert_eq!(out.fates, [Fate::Included]);
    assert_eq!(out.notice, None);
    assert_eq!(out.intro, intro);
    // The compact render is also the smallest budget that still holds it.
    let smallest = render_baseline(
        BaselineKind::Normal,
        &files,
        Budget::bytes(compact.len() as u64),
    );
    assert_eq!(smallest.text, compact);
    let below = render_baseline(
        BaselineKind::Normal,
        &files,
        Budget::bytes(compact.len() as u64 - 1),
    );
    assert_eq!(below.fates, [Fate::Omitted]);
}

#[test]
fn step3_single_file_truncated_notice_alone() {
    // Long enough that dropping the notice never lets the whole file fit.
    let content = LONG.repeat(3);
    let files = [file("AGENTS.md", &content)];
    let (max, expected) = fixed_point(|max| {
        frame(&format!(
            "Workspace instruction budget {max} bytes: truncated AGENTS.md from 300 to 60 bytes\n\n{NORMAL}\n\nInstructions from: AGENTS.md\n\n{}",
            &LONG[..60]
        ))
    });
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(max));
    assert_eq!(out.text, expected);
    assert_eq!(
        out.fates,
        [Fate::Truncated {
            original: 300,
            kept: 60
        }]
    );
}

#[rstest]
#[case::normal(BaselineKind::Normal, "")]
#[case::replacement(BaselineKind::Replacement, SUPER)]
fn step4_notice_only_and_step5_empty(#[case] kind: BaselineKind, #[case] lead: &str) {
    let files = [file("AGENTS.md", LONG), file("pkg/AGENTS.md", LONG)];
    let (max, expected) = fixed_point(|max| {
        frame(&format!(
            "{lead}Workspace instruction budget {max} bytes: omitted AGENTS.md, pkg/AGENTS.md"
        ))
    });
    let out = render_baseline(kind, &files, Budget::bytes(max));
    assert_eq!(out.text, expected);
    assert_eq!(out.fates, [Fate::Omitted, Fate::Omitted]);
    assert_eq!(out.intro, IntroUsed::None);
    assert_eq!(
        out.notice,
        Some(format!(
            "Workspace instruction budget {max} bytes: omitted AGENTS.md, pkg/AGENTS.md"
        ))
    );

    let none = render_baseline(kind, &files, Budget::bytes(max - 1));
    assert_eq!(none.text, "");
    assert_eq!(none.fates, [Fate::Omitted, Fate::Omitted]);
    assert_eq!(none.notice, None);
    assert_eq!(none.intro, IntroUsed::None);
}

#[test]
fn dynamic_step3_cuts_without_intro() {
    let sections = [
        Section::Remove {
            path: "a/AGENTS.md",
        },
        Section::Replace {
            path: "AGENTS.md",
            content: LONG,
        },
    ];
    let (max, expected) = fixed_point(|max| {
        frame(&format!(
            "Workspace instruction budget {max} bytes: omitted a/AGENTS.md; truncated AGENTS.md from 100 to 7 bytes\n\nUpdated instructions from: AGENTS.md\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.\n\n0123456"
        ))
    });
    let out = render_dynamic(&sections, Budget::bytes(max));
    assert_eq!(out.text, expected);
    assert_eq!(
        out.fates,
        [
            Fate::Omitted,
            Fate::Truncated {
                original: 100,
                kept: 7
            }
        ]
    );
    assert_eq!(out.intro, IntroUsed::None);
}

#[test]
fn dynamic_remove_is_never_cut() {
    let sections = [
        Section::Replace {
            path: "AGENTS.md",
            content: LONG,
        },
        Section::Remove {
            path: "a/AGENTS.md",
        },
    ];
    // Just too small for "notice + whole remove section": straight to step 4.
    let (max, whole) = fixed_point(|max| {
        frame(&format!(
            "Workspace instruction budget {max} bytes: omitted AGENTS.md\n\nInstructions removed: a/AGENTS.md\n\nThe instructions previously loaded from this file no longer apply."
        ))
    });
    let out = render_dynamic(&sections, Budget::bytes(max));
    assert_eq!(out.text, whole);
    assert_eq!(out.fates, [Fate::Omitted, Fate::Included]);

    let out = render_dynamic(&sections, Budget::bytes(max - 1));
    assert_eq!(
        out.text,
        frame(&format!(
            "Workspace instruction budget {} bytes: omitted AGENTS.md, a/AGENTS.md",
            max - 1
        ))
    );
    assert_eq!(out.fates, [Fate::Omitted, Fate::Omitted]);
}

/// Budget at which a single `Replace { path: "p", content }` keeps exactly
/// `kept` bytes, and that render.
fn replace_cut(content: &str, kept: usize) -> (u64, String) {
    fixed_point(|max| {
        frame(&format!(
            "Workspace instruction budget {max} bytes: truncated p from {} to {kept} bytes\n\nUpdated instructions from: p\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.\n\n{}",
            content.len(),
            escape(&content[..kept])
        ))
    })
}

#[rstest]
// (repeated unit, boundary kept at the fixed point, budget slack, kept expected)
#[case::two_byte("é", 4, 1, 4)]
#[case::two_byte_next("é", 4, 2, 6)]
#[case::three_byte("日本", 6, 2, 6)]
#[case::three_byte_next("日本", 6, 3, 9)]
#[case::emoji("😀", 8, 3, 8)]
// 12 kept needs one more notice digit than 8: 4 bytes of slack are not enough.
#[case::emoji_digit("😀", 8, 4, 8)]
#[case::emoji_next("😀", 8, 5, 12)]
fn cuts_on_char_boundaries(
    #[case] unit: &str,
    #[case] kept: usize,
    #[case] slack: u64,
    #[case] want: usize,
) {
    // Long enough that the whole never fits where a short cut does.
    let content = unit.repeat(100);
    let content = content.as_str();
    let (max, _) = replace_cut(content, kept);
    let out = render_dynamic(
        &[Section::Replace { path: "p", content }],
        Budget::bytes(max + slack),
    );
    assert_eq!(
        out.fates,
        [Fate::Truncated {
            original: content.len(),
            kept: want
        }]
    );
    assert!(
        out.text
            .ends_with(&format!("\n\n{}{CLOSE}", &content[..want]))
    );
    assert!(out.len() as u64 <= max + slack);
}

#[test]
fn single_multibyte_char_that_does_not_fit_is_omitted() {
    // Room for 1..=3 bytes of a 4-byte char: no boundary keeps a byte.
    let content = "😀".repeat(50);
    let content = content.as_str();
    let (max, _) = replace_cut(content, 4);
    for budget in [max - 3, max - 2, max - 1] {
        let out = render_dynamic(
            &[Section::Replace { path: "p", content }],
            Budget::bytes(budget),
        );
        assert_eq!(out.fates, [Fate::Omitted]);
        assert!(out.text.contains("omitted p"), "{}", out.text);
        assert!(!out.text.contains("Updated instructions"));
    }
}

#[test]
fn escape_inside_cut_costs_one_byte_only_when_whole() {
    // Tag spans bytes 2..19; keeping 19 bytes escapes it (+1 byte).
    let content = format!("ab</system-reminder>cd{LONG}");
    let content = content.as_str();
    let (max, text) = replace_cut(content, 18);
    assert!(text.contains("\n\nab</system-reminde\n</system-reminder>"));
    let cut = |budget| {
        render_dynamic(
            &[Section::Replace { path: "p", content }],
            Budget::bytes(budget),
        )
        .fates[0]
    };
    assert_eq!(
        cut(max + 1),
        Fate::Truncated {
            original: 122,
            kept: 18
        }
    );
    assert_eq!(
        cut(max + 2),
        Fate::Truncated {
            original: 122,
            kept: 19
        }
    );
    let out = render_dynamic(
        &[Section::Replace { path: "p", content }],
        Budget::bytes(max + 2),
    );
    assert!(
        out.text
            .ends_with("\n\nab<\\/system-reminder\n</system-reminder>")
    );
}

#[test]
fn kept_digit_count_is_accounted_exactly() {
    // At budget B, keeping 10 bytes would need one more notice digit than
    // keeping 9, so the longest fitting prefix is 9, one byte under B.
    let content = LONG;
    let (max9, _) = replace_cut(content, 9);
    let out = render_dynamic(
        &[Section::Replace { path: "p", content }],
        Budget::bytes(max9 + 1),
    );
    assert_eq!(
        out.fates,
        [Fate::Truncated {
            original: 100,
            kept: 9
        }]
    );
    assert_eq!(out.len() as u64, max9);
    let out = render_dynamic(
        &[Section::Replace { path: "p", content }],
        Budget::bytes(max9 + 2),
    );
    assert_eq!(
        out.fates,
        [Fate::Truncated {
            original: 100,
            kept: 10
        }]
    );
    assert_eq!(out.len() as u64, max9 + 2);
}

#[test]
fn notice_escapes_paths() {
    let files = [file("</SYSTEM-reminder>", LONG), file("AGENTS.md", "x")];
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(420));
    assert_eq!(
        out.notice.as_deref(),
        Some("Workspace instruction budget 420 bytes: omitted <\\/SYSTEM-reminder>")
    );
    assert_eq!(out.fates, [Fate::Omitted, Fate::Included]);
    assert!(
        out.text
            .contains(out.notice.as_deref().unwrap_or("missing"))
    );
    assert_eq!(out.text.matches("</").count(), 1);
}

#[test]
fn truncated_file_path_in_notice_is_escaped() {
    // Too small for the normal intro: the compact try keeps 12 bytes.
    let content = LONG.repeat(2);
    let files = [file("x</system-reminder", &content)];
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(255));
    assert_eq!(
        out.text,
        frame(&format!(
            "Workspace instruction budget 255 bytes: truncated x<\\/system-reminder from 200 to 12 bytes\n\n{COMPACT}\n\nInstructions from: x<\\/system-reminder\n\n012345678901"
        ))
    );
    assert_eq!(out.len(), 255);
    assert_eq!(out.intro, IntroUsed::Compact);
    assert_eq!(
        out.notice.as_deref(),
        Some(
            "Workspace instruction budget 255 bytes: truncated x<\\/system-reminder from 200 to 12 bytes"
        )
    );
}

// ---------------------------------------------------------------------------
// The bounded omitted list (R-REN-4): `L = max(512, floor(max_bytes / 16))`.

/// A 48-byte path `NN/ddd…d/AGENTS.md`, plus `extra` more `d`s.
fn wide_path(i: usize, extra: usize) -> String {
    format!("{i:02}/{}/AGENTS.md", "d".repeat(35 + extra))
}

/// `broad` files too large for any budget used below, then one small file:
/// step 2 drops exactly the broad ones, so the notice names all of them.
fn over_the_bound(broad: &[String], max: u64, content_len: usize) -> (Rendered, String) {
    let big = "x".repeat(content_len);
    let mut files: Vec<BaselineFile<'_>> = broad.iter().map(|p| file(p, &big)).collect();
    files.push(file("z/AGENTS.md", "keep"));
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(max));
    let rest = frame(&format!(
        "\n\n{NORMAL}\n\nInstructions from: z/AGENTS.md\n\nkeep"
    ));
    (out, rest)
}

#[rstest]
// 10 paths of 48 bytes: 8 + 480 + 9 * 2 = 506 bytes, within 512.
#[case::under_the_bound(10, 0, None)]
// The last path 6 bytes longer: exactly 512 bytes, still every path.
#[case::exactly_at_the_bound(10, 6, None)]
// One byte more (513): the first nine paths fit, "and 1 more" (467 bytes).
#[case::one_byte_over(10, 7, Some((9, 1)))]
// 11 paths: 556 bytes. Nine listed is 8 + 432 + 16 + 5 + 1 + 5 = 467 bytes;
// ten would be 517.
#[case::eleven_paths(11, 0, Some((9, 2)))]
fn omitted_list_is_bounded_at_512_bytes(
    #[case] count: usize,
    #[case] last_extra: usize,
    #[case] listed: Option<(usize, usize)>,
) {
    let broad: Vec<String> = (0..count)
        .map(|i| wide_path(i, if i + 1 == count { last_extra } else { 0 }))
        .collect();
    let (out, rest) = over_the_bound(&broad, 1_500, 2_000);
    let omitted_part = match listed {
        None => format!("omitted {}", broad.join(", ")),
        Some((j, more)) => format!("omitted {} and {more} more", broad[..j].join(", ")),
    };
    let full_len = 8 + broad.iter().map(String::len).sum::<usize>() + 2 * (count - 1);
    assert_eq!(listed.is_some(), full_len > 512, "case set-up");
    let notice = format!("Workspace instruction budget 1500 bytes: {omitted_part}");
    assert_eq!(out.notice.as_deref(), Some(notice.as_str()));
    assert_eq!(out.text, format!("{}{notice}{}", OPEN, &rest[OPEN.len()..]));
    // The report still names every dropped file (R-REN-7).
    let mut fates = vec![Fate::Omitted; count];
    fates.push(Fate::Included);
    assert_eq!(out.fates, fates);
}

#[test]
fn omitted_list_bound_grows_with_the_budget() {
    // max_bytes 16384: L = 1024. 20 paths: 8 + 960 + 38 = 1006 bytes, whole;
    // 21 paths: 1056 bytes, so 20 listed (8 + 960 + 38 + 5 + 1 + 5 = 1017).
    for (count, listed) in [(20, None), (21, Some(20))] {
        let broad: Vec<String> = (0..count).map(|i| wide_path(i, 0)).collect();
        let (out, _) = over_the_bound(&broad, 16_384, 20_000);
        let expected = match listed {
            None => format!("omitted {}", broad.join(", ")),
            Some(j) => format!("omitted {} and {} more", broad[..j].join(", "), count - j),
        };
        assert_eq!(
            out.notice,
            Some(format!(
                "Workspace instruction budget 16384 bytes: {expected}"
            ))
        );
    }
    // max_bytes 16383: L = floor(16383 / 16) = 1023, 20 paths still whole.
    let broad: Vec<String> = (0..20).map(|i| wide_path(i, 0)).collect();
    let (out, _) = over_the_bound(&broad, 16_383, 20_000);
    assert_eq!(
        out.notice,
        Some(format!(
            "Workspace instruction budget 16383 bytes: omitted {}",
            broad.join(", ")
        ))
    );
}

#[rstest]
#[case::one_file(1, "omitted 1 files")]
#[case::three_files(3, "omitted 3 files")]
fn omitted_list_of_a_path_longer_than_the_bound_is_a_count(
    #[case] count: usize,
    #[case] expected: &str,
) {
    // The first path alone is 8 + 600 bytes: not even one path fits.
    let broad: Vec<String> = (0..count).map(|i| wide_path(i, 552)).collect();
    let (out, _) = over_the_bound(&broad, 1_500, 2_000);
    assert_eq!(
        out.notice,
        Some(format!(
            "Workspace instruction budget 1500 bytes: {expected}"
        ))
    );
    assert_eq!(
        out.fates.iter().filter(|f| **f == Fate::Omitted).count(),
        count
    );
}

#[test]
fn bounded_notice_lets_a_deep_chain_keep_its_most_specific_files() {
    // R-REN-4 amended (docs/decisions/0006): 300 nested directories, each
    // path ~600 bytes on average, a 4 KiB budget. Without the bound the
    // notice alone would be ~180 KB and nothing would render.
    let mut paths = Vec::new();
    let mut dir = String::new();
    for _ in 0..300 {
        paths.push(format!("{dir}AGENTS.md"));
        dir.push_str("dir/");
    }
    let files: Vec<BaselineFile<'_>> = paths.iter().map(|p| file(p, "rule")).collect();
    let out = render_baseline(BaselineKind::Normal, &files, Budget::bytes(4_096));
    assert!(out.len() <= 4_096);
    assert_eq!(out.intro, IntroUsed::Normal);
    let kept = out.fates.iter().filter(|f| **f == Fate::Included).count();
    assert!(kept > 0, "the most specific files are rendered");
    assert_eq!(out.fates[300 - kept..], vec![Fate::Included; kept][..]);
    let notice = out.notice.unwrap_or_default();
    assert!(
        notice.starts_with(
            "Workspace instruction budget 4096 bytes: omitted AGENTS.md, dir/AGENTS.md, "
        ),
        "{notice}"
    );
    // Listed paths plus "and <k> more" account for every omitted file.
    let list = notice
        .strip_prefix("Workspace instruction budget 4096 bytes: omitted ")
        .and_then(|rest| rest.strip_suffix(" more"))
        .and_then(|rest| rest.rsplit_once(" and "));
    let Some((listed, more)) = list else {
        panic!("not a bounded list: {notice}");
    };
    let listed = listed.split(", ").count();
    assert_eq!(listed + more.parse::<usize>().unwrap_or(0), 300 - kept);
    assert!(listed > 1);
    assert!(notice.len() <= 41 + 512, "{notice}");
}
