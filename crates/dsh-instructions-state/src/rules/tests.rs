//! Every reading of R-RULE-2, R-RULE-3 and R-RULE-8 on rule texts, as
//! cases written from the SPEC by hand, and the no-panic property.

use proptest::prelude::*;
use rstest::rstest;

use super::*;
use crate::StateError;
use crate::config::RuleFormat::{self, Claude, Copilot, Cursor, Windsurf};

fn fm(block: &str) -> String {
    format!("---\n{block}\n---\nBody\n")
}

// R-RULE-2 / R-RULE-8: kinds, with the globs kept.
#[rstest]
#[case::claude_no_front_matter(Claude, "Body".to_owned(), RuleKind::AlwaysOn, &[])]
#[case::claude_empty_front_matter(Claude, "---\n---\nBody".to_owned(), RuleKind::AlwaysOn, &[])]
#[case::claude_other_fields_only(Claude, fm("description: x"), RuleKind::AlwaysOn, &[])]
#[case::claude_paths_string(Claude, fm("paths: \"src/**/*.ts\""), RuleKind::PathScoped, &["src/**/*.ts"])]
#[case::claude_paths_comma(Claude, fm("paths: \"a.ts, b.ts,,\""), RuleKind::PathScoped, &["a.ts", "b.ts"])]
#[case::claude_paths_braces_not_split(Claude, fm("paths: \"src/*.{ts,tsx}, lib/*\""), RuleKind::PathScoped, &["src/*.{ts,tsx}", "lib/*"])]
#[case::claude_paths_list(Claude, fm("paths:\n  - \"a/**\"\n  - \" b/*.md \"\n  - \"\""), RuleKind::PathScoped, &["a/**", "b/*.md"])]
#[case::claude_paths_empty_list(Claude, fm("paths: []"), RuleKind::AlwaysOn, &[])]
#[case::claude_paths_null(Claude, fm("paths:"), RuleKind::AlwaysOn, &[])]
#[case::cursor_neither(Cursor, fm("description: x"), RuleKind::Manual, &[])]
#[case::cursor_no_front_matter(Cursor, "Body".to_owned(), RuleKind::Manual, &[])]
#[case::cursor_always(Cursor, fm("alwaysApply: true"), RuleKind::AlwaysOn, &[])]
#[case::cursor_always_even_with_globs(Cursor, fm("globs: \"*.ts\"\nalwaysApply: true"), RuleKind::AlwaysOn, &[])]
#[case::cursor_globs(Cursor, fm("globs: \"*.ts\"\nalwaysApply: false"), RuleKind::PathScoped, &["*.ts"])]
#[case::cursor_unquoted_globs_not_yaml(Cursor, fm("description: TS\nglobs: *.ts,*.tsx\nalwaysApply: false"), RuleKind::PathScoped, &["*.ts", "*.tsx"])]
#[case::cursor_unquoted_always(Cursor, fm("globs: **/*.ts\nalwaysApply: true"), RuleKind::AlwaysOn, &[])]
#[case::cursor_empty_globs(Cursor, fm("globs:\nalwaysApply: false"), RuleKind::Manual, &[])]
#[case::copilot_no_apply_to(Copilot, fm("description: x"), RuleKind::Manual, &[])]
#[case::copilot_star_star(Copilot, fm("applyTo: \"**\""), RuleKind::AlwaysOn, &[])]
#[case::copilot_globs(Copilot, fm("applyTo: \"**/*.py,docs/**\""), RuleKind::PathScoped, &["**/*.py", "docs/**"])]
#[case::copilot_star_star_among_others(Copilot, fm("applyTo: \"**,x\""), RuleKind::PathScoped, &["**", "x"])]
#[case::windsurf_always(Windsurf, fm("trigger: always_on\nglobs: x"), RuleKind::AlwaysOn, &[])]
#[case::windsurf_glob(Windsurf, fm("trigger: glob\nglobs: \"*.rs\""), RuleKind::PathScoped, &["*.rs"])]
#[case::windsurf_no_trigger_globs(Windsurf, fm("globs: \"*.rs\""), RuleKind::PathScoped, &["*.rs"])]
#[case::windsurf_no_trigger_no_globs(Windsurf, fm("description: x"), RuleKind::Manual, &[])]
#[case::windsurf_manual_with_globs(Windsurf, fm("trigger: manual\nglobs: \"*.rs\""), RuleKind::Manual, &[])]
#[case::windsurf_model_decision(Windsurf, fm("trigger: model_decision\nglobs: \"*.rs\""), RuleKind::Manual, &[])]
#[case::unknown_fields_ignored(Claude, fm("paths: a\nweird: [1, 2]\n42: x"), RuleKind::PathScoped, &["a"])]
fn kinds(
    #[case] format: RuleFormat,
    #[case] text: String,
    #[case] kind: RuleKind,
    #[case] globs: &[&str],
) {
    let r = parse_rule(format, &text).unwrap();
    assert_eq!(r.kind, kind);
    assert_eq!(r.globs.written(), globs);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}

// R-RULE-2: unavailable, naming the field.
#[rstest]
#[case::not_a_mapping_list(Claude, fm("- a\n- b"), "front matter")]
#[case::not_a_mapping_scalar(Claude, fm("just words"), "front matter")]
#[case::invalid_yaml(Claude, fm("paths: [unclosed"), "front matter")]
#[case::unquoted_star_is_not_yaml_for_claude(Claude, fm("paths: *.ts"), "front matter")]
#[case::cursor_neither_yaml_nor_lines(Cursor, fm("globs: [x\nnot a pair"), "front matter")]
#[case::paths_number(Claude, fm("paths: 3"), "paths")]
#[case::paths_map(Claude, fm("paths: {a: b}"), "paths")]
#[case::paths_list_of_numbers(Claude, fm("paths: [1]"), "paths")]
#[case::always_apply_string(Cursor, fm("alwaysApply: \"yes\""), "alwaysApply")]
#[case::always_apply_unquoted_word_fallback(
    Cursor,
    fm("globs: *.ts\nalwaysApply: yes"),
    "alwaysApply"
)]
#[case::apply_to_bool(Copilot, fm("applyTo: true"), "applyTo")]
#[case::trigger_unknown(Windsurf, fm("trigger: sometimes"), "trigger")]
#[case::trigger_list(Windsurf, fm("trigger: [glob]"), "trigger")]
#[case::globs_wrong_type_even_when_always(Cursor, fm("alwaysApply: true\nglobs: 7"), "globs")]
fn unavailable(#[case] format: RuleFormat, #[case] text: String, #[case] field: &str) {
    let e = parse_rule(format, &text).unwrap_err();
    assert_eq!(e.field(), field, "{e}");
    assert!(e.to_string().starts_with(field), "{e}");
}

#[test]
fn limits_on_globs() {
    // R-RULE-2: more than 64 globs, or one over 1,024 bytes.
    let many: Vec<String> = (0..65).map(|i| format!("g{i}")).collect();
    let e = parse_rule(Claude, &fm(&format!("paths: \"{}\"", many.join(",")))).unwrap_err();
    assert_eq!(
        e,
        StateError::TooManyGlobs {
            field: "paths",
            count: 65
        }
    );
    let text = fm(&format!("paths: \"{}\"", many[..64].join(",")));
    let ok = parse_rule(Claude, &text).unwrap();
    assert_eq!(ok.globs.written().len(), 64);
    let long = "a".repeat(1_025);
    let e = parse_rule(Cursor, &fm(&format!("globs: \"{long}\""))).unwrap_err();
    assert_eq!(
        e,
        StateError::GlobTooLong {
            field: "globs",
            bytes: 1_025
        }
    );
    assert!(parse_rule(Cursor, &fm(&format!("globs: \"{}\"", &long[1..]))).is_ok());
}

#[test]
fn a_glob_that_does_not_compile_is_dropped_with_a_diagnostic() {
    // R-RULE-2
    let text = fm("paths: [\"src/[a\", \"*.rs\"]");
    let r = parse_rule(Claude, &text).unwrap();
    assert_eq!(r.kind, RuleKind::PathScoped);
    assert_eq!(r.globs.written(), ["*.rs"]);
    assert_eq!(r.diagnostics.len(), 1);
    assert_eq!(r.diagnostics[0].field, "paths");
    assert_eq!(r.diagnostics[0].glob, "src/[a");
    // R-RULE-8: every glob dropped: unavailable, never always on.
    let e = parse_rule(Claude, &fm("paths: \"src/[a\"")).unwrap_err();
    assert_eq!(e, StateError::NoGlobCompiles { field: "paths" });
}

// R-RULE-2 / R-RULE-8: what the content is.
#[rstest]
#[case::block_and_break_removed("---\npaths: a\n---\nBody\n", "Body\n")]
#[case::crlf("---\r\npaths: a\r\n---\r\nBody\r\n", "Body\r\n")]
#[case::closing_at_end("---\npaths: a\n---", "")]
#[case::only_first_closing_counts("---\npaths: a\n---\nx\n---\ny", "x\n---\ny")]
#[case::empty_front_matter("---\n---\nBody", "Body")]
#[case::unclosed_is_content("---\npaths: a\nBody", "---\npaths: a\nBody")]
#[case::not_first_line("\n---\npaths: a\n---\nB", "\n---\npaths: a\n---\nB")]
#[case::dashes_with_text("---x\n---\nB", "---x\n---\nB")]
fn content(#[case] text: &str, #[case] expected: &str) {
    let r = parse_rule(Claude, text).unwrap();
    assert_eq!(r.content, expected);
}

#[test]
fn unclosed_front_matter_makes_a_claude_rule_always_on() {
    // R-RULE-8: no closing line = no front matter, so no `paths` either.
    let r = parse_rule(Claude, "---\npaths: \"*.ts\"\nBody").unwrap();
    assert_eq!(r.kind, RuleKind::AlwaysOn);
}

// R-RULE-3: matching, paths relative to D.
#[rstest]
#[case::name_at_any_depth("*.ts", "a/b/c.ts", true)]
#[case::name_at_top("*.ts", "c.ts", true)]
#[case::star_stays_in_segment("src/*.ts", "src/a/b.ts", false)]
#[case::star_in_segment("src/*.ts", "src/b.ts", true)]
#[case::slash_glob_anchored("src/*.ts", "x/src/b.ts", false)]
#[case::double_star("src/**/*.ts", "src/a/b/c.ts", true)]
#[case::double_star_zero_dirs("src/**/*.ts", "src/c.ts", true)]
#[case::double_star_alone("**", "a/b", true)]
#[case::question("?.md", "d/a.md", true)]
#[case::question_not_slash("a?b", "a/b", false)]
#[case::class("[ab].rs", "x/b.rs", true)]
#[case::class_miss("[ab].rs", "x/c.rs", false)]
#[case::alternatives("*.{ts,tsx}", "a/b.tsx", true)]
#[case::alternatives_miss("*.{ts,tsx}", "a/b.js", false)]
#[case::leading_slash_anchors("/a.ts", "a.ts", true)]
#[case::leading_slash_not_deeper("/a.ts", "x/a.ts", false)]
#[case::leading_dot_slash_anchors("./a.ts", "a.ts", true)]
#[case::leading_dot_slash_not_deeper("./a.ts", "x/a.ts", false)]
#[case::directory_itself("src", "src", true)]
#[case::directory_glob_not_children_dir("src/*", "src", false)]
fn matching(#[case] glob: &str, #[case] rel: &str, #[case] hit: bool) {
    let (g, d) = RuleGlobs::compile("paths", &[glob.to_owned()]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(g.matches(rel), hit, "{glob} vs {rel}");
}

#[test]
fn no_globs_match_nothing() {
    assert!(!RuleGlobs::default().matches("a"));
}

proptest! {
    // R-RULE-2: whatever the text, parsing answers (a rule or an error)
    // without panicking, and a rule's content is a suffix of its text.
    #[test]
    fn parsing_never_panics(
        head in prop_oneof![Just("---\n"), Just("---\r\n"), Just("")],
        block in "[-a-zA-Z:*,{}\\[\\]\"' \n#?/.!&|>]{0,80}",
        close in prop_oneof![Just("\n---\n"), Just(""), Just("\n---")],
        body in "[a-z\n-]{0,20}",
    ) {
        let text = format!("{head}{block}{close}{body}");
        for format in RuleFormat::ALL {
            if let Ok(r) = parse_rule(format, &text) {
                prop_assert!(text.ends_with(r.content));
                prop_assert_eq!(r.kind == RuleKind::PathScoped, !r.globs.is_empty());
            }
        }
    }

    #[test]
    fn splitting_keeps_braces_whole(items in prop::collection::vec("[a-z*]{1,4}(\\{[a-z]{1,3},[a-z]{1,3}\\})?", 1..6)) {
        // R-RULE-8: commas inside `{…}` do not split.
        prop_assert_eq!(globs::split_globs(&items.join(", ")), items);
    }
}
