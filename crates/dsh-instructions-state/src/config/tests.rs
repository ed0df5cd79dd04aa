//! Tests of the configuration: defaults, presets, overlay, resolve and
//! the validation of every field (R-CFG-1..10).

use std::collections::BTreeSet;

use dsh_instructions_render::Budget;

use crate::StateError;

use super::names::name_problem;
use super::validated::strings;
use super::*;
use proptest::prelude::*;
use rstest::rstest;
use serde_json::json;

fn parse(v: serde_json::Value) -> ConfigInput {
    serde_json::from_value(v).unwrap()
}

fn v(items: &[&str]) -> Vec<String> {
    strings(items)
}

#[test]
fn defaults_match_spec() {
    // R-CFG-3..8
    let c = parse(json!({"max_bytes": 65536})).resolve().unwrap().config;
    assert_eq!(c, Config::with_max_bytes(65_536));
    assert_eq!(c.max_source_bytes(), 1_048_576);
    assert_eq!(
        c.instruction_file_candidates(),
        v(&["AGENTS.md", "CLAUDE.md"])
    );
    assert_eq!(
        c.local_instruction_file_candidates(),
        v(&["AGENTS.local.md", "CLAUDE.local.md"])
    );
    assert_eq!(c.project_root_markers(), v(&[".git"]));
    assert_eq!(c.candidate_policy(), CandidatePolicy::FirstWins);
    assert_eq!(c.dsh_home(), None);
    let tools: Vec<(&str, Vec<&str>)> = c
        .touch_tools
        .iter()
        .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        tools,
        [
            ("edit", vec!["file_path"]),
            ("read", vec!["file_path"]),
            ("write", vec!["file_path"])
        ]
    );
}

// R-CFG-9, values copied from SPEC by hand.
#[rstest]
#[case::dsh(Preset::Dsh, &["AGENTS.md", "CLAUDE.md"], &["AGENTS.local.md", "CLAUDE.local.md"], 65_536)]
#[case::codex(Preset::Codex, &["AGENTS.override.md", "AGENTS.md"], &[], 32_768)]
#[case::claude(Preset::Claude, &["CLAUDE.md"], &["CLAUDE.local.md"], 65_536)]
#[case::opencode(Preset::Opencode, &["AGENTS.md", "CLAUDE.md"], &[], 65_536)]
#[case::gemini(Preset::Gemini, &["GEMINI.md"], &[], 65_536)]
#[case::copilot(Preset::Copilot, &["AGENTS.md", "CLAUDE.md", "GEMINI.md"], &[], 65_536)]
#[case::qwen(Preset::Qwen, &["QWEN.md", "AGENTS.md"], &[], 65_536)]
fn presets(#[case] p: Preset, #[case] base: &[&str], #[case] local: &[&str], #[case] max: i64) {
    let c = Config::preset(p);
    // R-CFG-10: imports on exactly for the agents that expand them.
    assert_eq!(
        c.imports(),
        matches!(p, Preset::Claude | Preset::Gemini | Preset::Qwen)
    );
    assert_eq!(c.instruction_file_candidates(), v(base));
    assert_eq!(c.local_instruction_file_candidates(), v(local));
    // Copilot CLI and Qwen Code load every name that exists in a directory.
    let all = matches!(p, Preset::Copilot | Preset::Qwen);
    assert_eq!(
        c.candidate_policy(),
        if all {
            CandidatePolicy::AllDistinct
        } else {
            CandidatePolicy::FirstWins
        }
    );
    assert_eq!(c.max_bytes(), Budget::from_signed(max));
    assert_eq!(c.project_root_markers(), v(&[".git"]));
    assert_eq!(c.max_source_bytes(), DEFAULT_MAX_SOURCE_BYTES);
    // R-HOOK-8: `claude` is Claude Code's native selection; every other
    // preset keeps the new fields at their defaults.
    let claude = p == Preset::Claude;
    assert_eq!(c.claude_dir(), claude);
    assert_eq!(
        c.fallback_instruction_file_candidates(),
        if claude { v(&["AGENTS.md"]) } else { v(&[]) }
    );
    assert_eq!(
        c.fallback_scope(),
        if claude {
            FallbackScope::Path
        } else {
            FallbackScope::Directory
        }
    );
    assert_eq!(
        c.content_transform(),
        if claude {
            ContentTransform::Claude
        } else {
            ContentTransform::None
        }
    );
    let user: &[&str] = match p {
        Preset::Claude => &["~/.claude/CLAUDE.md"],
        Preset::Copilot => &["~/.copilot/copilot-instructions.md"],
        Preset::Qwen => &["~/.qwen/QWEN.md"],
        _ => &[],
    };
    assert_eq!(c.user_instruction_files(), v(user));
    let above: &[&str] = match p {
        Preset::Claude => &["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"],
        // Qwen Code reads its names past the git root (harness README).
        Preset::Qwen => &["QWEN.md", "AGENTS.md"],
        _ => &[],
    };
    assert_eq!(c.ancestor_instruction_files(), v(above));
    let rules: &[RuleFormat] = match p {
        Preset::Claude => &[RuleFormat::Claude],
        Preset::Copilot => &[RuleFormat::Claude, RuleFormat::Copilot],
        _ => &[],
    };
    assert_eq!(c.rule_formats(), rules);
    assert_eq!(c.max_import_depth(), if claude { 4 } else { 5 });
    // The preset alone satisfies the max_bytes requirement (R-CFG-1).
    let name = p.to_string();
    let resolved = parse(json!({"preset": name})).resolve().unwrap();
    assert_eq!(resolved.config, c);
    assert_eq!(name.parse::<Preset>(), Ok(p));
    assert_eq!(name.to_uppercase().parse::<Preset>(), Ok(p));
}

/// The one overlay (decision 0026): a field the upper layer gives
/// replaces the lower one whole; a field it leaves out stays; a preset
/// is one field among the others and resets nothing.
#[rstest]
#[case::upper_field_wins(json!({"max_bytes": 100}), json!({"max_bytes": 500}), json!({"max_bytes": 500}))]
#[case::absent_field_stays(
    json!({"max_bytes": 100, "instruction_file_candidates": ["A.md"]}),
    json!({"imports": true}),
    json!({"max_bytes": 100, "instruction_file_candidates": ["A.md"], "imports": true})
)]
#[case::preset_resets_nothing(
    json!({"max_bytes": 500, "instruction_file_candidates": ["A.md"]}),
    json!({"preset": "codex"}),
    json!({"max_bytes": 500, "instruction_file_candidates": ["A.md"], "preset": "codex"})
)]
#[case::preset_replaces_preset(json!({"preset": "claude"}), json!({"preset": "codex"}), json!({"preset": "codex"}))]
#[case::maps_replace_whole(
    json!({"touch_tools": {"read": ["file_path"]}, "shell_tools": {"Bash": ["command"]}}),
    json!({"touch_tools": {"open": ["target"]}}),
    json!({"touch_tools": {"open": ["target"]}, "shell_tools": {"Bash": ["command"]}})
)]
#[case::empty_list_replaces(
    json!({"local_instruction_file_candidates": ["X.local.md"]}),
    json!({"local_instruction_file_candidates": []}),
    json!({"local_instruction_file_candidates": []})
)]
#[case::empty_upper_is_identity(
    json!({"preset": "gemini", "max_import_depth": 2, "claude_dir": true}),
    json!({}),
    json!({"preset": "gemini", "max_import_depth": 2, "claude_dir": true})
)]
fn overlay_cases(
    #[case] lower: serde_json::Value,
    #[case] upper: serde_json::Value,
    #[case] want: serde_json::Value,
) {
    assert_eq!(parse(lower).overlay(parse(upper)), parse(want));
}

/// Every field of the upper layer reaches the result: overlaying a
/// fully set input on the empty one gives it back, and on any other
/// input too.
#[test]
fn overlay_carries_every_field() {
    let full = parse(json!({
        "max_bytes": 7, "max_source_bytes": 9, "instruction_file_candidates": ["A.md"],
        "local_instruction_file_candidates": ["A.local.md"], "project_root_markers": [".hg"],
        "candidate_policy": "all-distinct", "dsh_home": "~/d", "touch_tools": {"t": ["p"]},
        "shell_tools": {"s": ["c"]}, "preset": "opencode", "imports": true,
        "fallback_instruction_file_candidates": ["F.md"], "fallback_scope": "path",
        "claude_dir": true, "content_transform": "claude",
        "user_instruction_files": ["~/u.md"], "max_import_depth": 3,
        "ancestor_instruction_files": ["A.md"],
    }));
    assert_eq!(ConfigInput::default().overlay(full.clone()), full);
    let other = parse(json!({"preset": "claude", "max_bytes": 1, "imports": false}));
    assert_eq!(other.overlay(full.clone()), full);
}

#[test]
fn explicit_fields_win_over_preset() {
    // R-CFG-9
    let c = parse(json!({
        "preset": "codex",
        "max_bytes": 100,
        "local_instruction_file_candidates": ["X.local.md"],
        "candidate_policy": "all-distinct",
    }))
    .resolve()
    .unwrap()
    .config;
    assert_eq!(c.max_bytes(), Budget::bytes(100));
    assert_eq!(c.local_instruction_file_candidates(), v(&["X.local.md"]));
    assert_eq!(c.candidate_policy(), CandidatePolicy::AllDistinct);
    // Not given: the preset's value stays.
    assert_eq!(
        c.instruction_file_candidates(),
        v(&["AGENTS.override.md", "AGENTS.md"])
    );
}

// R-CFG-10: default off; an explicit key wins over the preset either way.
#[rstest]
#[case::default_off(json!({"max_bytes": 1}), false)]
#[case::explicit_on(json!({"max_bytes": 1, "imports": true}), true)]
#[case::claude_on(json!({"preset": "claude"}), true)]
#[case::gemini_on(json!({"preset": "gemini"}), true)]
#[case::opencode_off(json!({"preset": "opencode"}), false)]
#[case::claude_switched_off(json!({"preset": "claude", "imports": false}), false)]
#[case::codex_switched_on(json!({"preset": "codex", "imports": true}), true)]
fn imports_key(#[case] input: serde_json::Value, #[case] on: bool) {
    assert_eq!(parse(input).resolve().unwrap().config.imports(), on);
}

#[test]
fn claude_fields_resolve_and_win_over_the_preset() {
    let c = parse(json!({
        "preset": "claude",
        "fallback_scope": "directory",
        "fallback_instruction_file_candidates": ["AGENTS.md", "a/b", "GEMINI.md"],
        "claude_dir": false,
        "content_transform": "none",
        "user_instruction_files": ["~/.claude/CLAUDE.md", "/abs", "~/x.md"],
        "max_import_depth": 2,
    }))
    .resolve()
    .unwrap();
    let w: Vec<(&str, &str)> = c
        .warnings
        .iter()
        .map(|w| (w.field, w.entry.as_str()))
        .collect();
    assert_eq!(
        w,
        [
            ("fallback_instruction_file_candidates", "a/b"),
            ("user_instruction_files", "/abs"),
        ]
    );
    let c = c.config;
    assert_eq!(c.fallback_scope(), FallbackScope::Directory);
    assert_eq!(
        c.fallback_instruction_file_candidates(),
        v(&["AGENTS.md", "GEMINI.md"])
    );
    assert!(!c.claude_dir());
    assert_eq!(c.content_transform(), ContentTransform::None);
    assert_eq!(
        c.user_instruction_files(),
        v(&["~/.claude/CLAUDE.md", "~/x.md"])
    );
    assert_eq!(c.max_import_depth(), 2);
    // Defaults without a preset: today's behaviour.
    let d = parse(json!({"max_bytes": 1})).resolve().unwrap().config;
    assert_eq!(d, Config::with_max_bytes(1));
    assert!(d.fallback_instruction_file_candidates().is_empty() && !d.claude_dir());
    assert_eq!(d.max_import_depth(), 5);
}

#[rstest]
#[case::bad_scope(json!({"max_bytes": 1, "fallback_scope": "tree"}))]
#[case::bad_transform(json!({"max_bytes": 1, "content_transform": "gemini"}))]
#[case::negative_depth(json!({"max_bytes": 1, "max_import_depth": -1}))]
#[case::claude_dir_string(json!({"max_bytes": 1, "claude_dir": "yes"}))]
fn claude_fields_reject_bad_values(#[case] value: serde_json::Value) {
    assert!(serde_json::from_value::<ConfigInput>(value).is_err());
}

#[rstest]
#[case::ok("~/.claude/CLAUDE.md", None)]
#[case::absolute("/etc/CLAUDE.md", Some(reasons::NOT_HOME_PATH))]
#[case::relative("CLAUDE.md", Some(reasons::NOT_HOME_PATH))]
#[case::bare_tilde("~/", Some(reasons::NOT_HOME_PATH))]
#[case::other_user("~bob/x", Some(reasons::NOT_HOME_PATH))]
#[case::dotdot("~/a/../x", Some(reasons::NOT_HOME_PATH))]
#[case::trailing_slash("~/a/", Some(reasons::NOT_HOME_PATH))]
#[case::backslash("~/a\\b", Some(reasons::NOT_HOME_PATH))]
fn user_file_entries(#[case] entry: &str, #[case] problem: Option<&str>) {
    let (kept, w) = validate_user_files(&[entry.to_owned()]);
    assert_eq!(w.first().map(|w| w.reason), problem);
    assert_eq!(kept.is_empty(), problem.is_some());
    let r = parse(json!({"max_bytes": 1, "user_instruction_files": [entry, entry]}))
        .resolve()
        .unwrap();
    assert_eq!(
        r.config.user_instruction_files().len(),
        usize::from(problem.is_none())
    );
    assert_eq!(r.warnings.len(), if problem.is_some() { 2 } else { 1 });
}

// R-HOOK-8: ancestor files are plain relative paths, read by name only.
#[rstest]
#[case::ok("CLAUDE.md", None)]
#[case::dot_prefix("./x", Some(reasons::NOT_RELATIVE_PATH))]
#[case::subdir(".claude/CLAUDE.md", None)]
#[case::absolute("/etc/CLAUDE.md", Some(reasons::NOT_RELATIVE_PATH))]
#[case::dotdot("../CLAUDE.md", Some(reasons::NOT_RELATIVE_PATH))]
#[case::inner_dotdot("a/../CLAUDE.md", Some(reasons::NOT_RELATIVE_PATH))]
#[case::dot(".", Some(reasons::NOT_RELATIVE_PATH))]
#[case::empty("", Some(reasons::NOT_RELATIVE_PATH))]
#[case::trailing_slash("a/", Some(reasons::NOT_RELATIVE_PATH))]
#[case::double_slash("a//b", Some(reasons::NOT_RELATIVE_PATH))]
#[case::backslash("a\\b", Some(reasons::NOT_RELATIVE_PATH))]
#[case::nul("a\0b", Some(reasons::NOT_RELATIVE_PATH))]
fn ancestor_file_entries(#[case] entry: &str, #[case] problem: Option<&str>) {
    let r = parse(json!({"max_bytes": 1, "ancestor_instruction_files": [entry, entry]}))
        .resolve()
        .unwrap();
    let reasons: Vec<&str> = r.warnings.iter().map(|w| w.reason).collect();
    match problem {
        None => {
            assert_eq!(r.config.ancestor_instruction_files(), [entry]);
            assert_eq!(reasons, [reasons::DUPLICATE]);
        }
        Some(problem) => {
            assert!(r.config.ancestor_instruction_files().is_empty());
            assert_eq!(reasons, [problem, problem]);
        }
    }
    assert!(
        r.warnings
            .iter()
            .all(|w| w.field == "ancestor_instruction_files" && w.entry == entry)
    );
}

#[test]
fn an_explicit_ancestor_list_wins_over_the_claude_preset() {
    let off = parse(json!({"preset": "claude", "ancestor_instruction_files": []}))
        .resolve()
        .unwrap()
        .config;
    assert!(off.ancestor_instruction_files().is_empty());
    let own = parse(json!({"max_bytes": 1, "ancestor_instruction_files": ["AGENTS.md"]}))
        .resolve()
        .unwrap()
        .config;
    assert_eq!(own.ancestor_instruction_files(), v(&["AGENTS.md"]));
}

#[test]
fn imports_must_be_a_boolean() {
    assert!(
        serde_json::from_value::<ConfigInput>(json!({"max_bytes": 1, "imports": "yes"})).is_err()
    );
}

#[test]
fn configured_touch_tools_replace_the_default_map() {
    // R-CFG-8
    let c = parse(json!({"max_bytes": 1, "touch_tools": {"grep": ["path"]}, "dsh_home": "~/x"}))
        .resolve()
        .unwrap()
        .config;
    assert_eq!(c.touch_tools().keys().collect::<Vec<_>>(), ["grep"]);
    assert_eq!(c.dsh_home(), Some("~/x"));
}

// R-CFG-11 / R-DISC-9: off by default; a configured map replaces the
// default whole and wins over the touch-tool reading of the same tool.
#[rstest]
#[case::default_off(json!({"max_bytes": 1}), &[], false)]
#[case::hook_style(json!({"max_bytes": 1, "shell_tools": {"Bash": ["command"]}}), &["Bash"], true)]
#[case::also_a_touch_tool(
    json!({"max_bytes": 1, "touch_tools": {"Bash": ["command"]}, "shell_tools": {"Bash": ["command"]}}),
    &["Bash"],
    true
)]
#[case::explicit_empty(json!({"preset": "codex", "shell_tools": {}}), &[], false)]
fn shell_tools_key(
    #[case] input: serde_json::Value,
    #[case] keys: &[&str],
    #[case] bash_is_shell: bool,
) {
    let c = parse(input).resolve().unwrap().config;
    assert_eq!(
        c.shell_tools()
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        keys
    );
    assert_eq!(c.is_shell_tool("Bash"), bash_is_shell);
}

#[test]
fn shell_tools_must_map_to_lists() {
    assert!(
        serde_json::from_value::<ConfigInput>(
            json!({"max_bytes": 1, "shell_tools": {"Bash": "command"}})
        )
        .is_err()
    );
}

#[rstest]
#[case::empty("")]
#[case::spaces("  \t")]
fn blank_dsh_home_is_unset_with_warning(#[case] home: &str) {
    let r = parse(json!({"max_bytes": 1, "dsh_home": home}))
        .resolve()
        .unwrap();
    assert_eq!(r.config.dsh_home(), None);
    assert_eq!(r.warnings.len(), 1);
    assert_eq!(r.warnings[0].field, "dsh_home");
}

#[test]
fn max_bytes_is_required_without_preset() {
    // R-CFG-1
    let err = parse(json!({"max_source_bytes": 10}))
        .resolve()
        .unwrap_err();
    assert_eq!(err, StateError::MissingMaxBytes);
    assert_eq!(err.field(), "max_bytes");
    assert!(err.to_string().contains("max_bytes"));
}

// R-CFG-2: budget values.
#[rstest]
#[case::positive(NumberInput::Int(65_536), Some(65_536))]
#[case::zero(NumberInput::Int(0), None)]
#[case::negative(NumberInput::Int(-1), None)]
#[case::whole_float(NumberInput::Float(4096.0), Some(4096))]
#[case::inf(NumberInput::Float(f64::INFINITY), None)]
#[case::neg_inf(NumberInput::Float(f64::NEG_INFINITY), None)]
#[case::nan(NumberInput::Float(f64::NAN), None)]
#[case::huge(NumberInput::UInt(u64::MAX), Some(i64::MAX as u64))]
fn max_bytes_values(#[case] n: NumberInput, #[case] budget: Option<u64>) {
    let input = ConfigInput {
        max_bytes: Some(n),
        ..ConfigInput::default()
    };
    assert_eq!(
        input.resolve().unwrap().config.max_bytes().enabled(),
        budget
    );
}

#[rstest]
#[case::fraction(1.5)]
#[case::negative_fraction(-0.5)]
fn fractional_max_bytes_is_an_error(#[case] f: f64) {
    // R-CFG-2
    let input = ConfigInput {
        max_bytes: Some(NumberInput::Float(f)),
        ..ConfigInput::default()
    };
    let err = input.resolve().unwrap_err();
    assert_eq!(err.field(), "max_bytes");
    assert_eq!(
        err.to_string(),
        format!("max_bytes must be an integer number of bytes, got {f}")
    );
}

// R-CFG-3
#[rstest]
#[case::zero(json!(0), "0")]
#[case::negative(json!(-4), "-4")]
#[case::fraction(json!(1.5), "1.5")]
fn bad_max_source_bytes(#[case] value: serde_json::Value, #[case] shown: &str) {
    let err = parse(json!({"max_bytes": 10, "max_source_bytes": value}))
        .resolve()
        .unwrap_err();
    assert_eq!(err.field(), "max_source_bytes");
    assert_eq!(
        err.to_string(),
        format!("max_source_bytes must be a positive integer, got {shown}")
    );
}

#[rstest]
#[case::non_finite(NumberInput::Float(f64::INFINITY))]
#[case::nan(NumberInput::Float(f64::NAN))]
fn non_finite_max_source_bytes_is_an_error(#[case] n: NumberInput) {
    let input = ConfigInput {
        max_bytes: Some(NumberInput::Int(1)),
        max_source_bytes: Some(n),
        ..ConfigInput::default()
    };
    assert_eq!(input.resolve().unwrap_err().field(), "max_source_bytes");
}

#[rstest]
#[case::int(json!(7), 7)]
#[case::whole_float(json!(2e3), 2000)]
#[case::big(json!(18_000_000_000_000_000_000u64), 18_000_000_000_000_000_000)]
fn good_max_source_bytes(#[case] value: serde_json::Value, #[case] expected: u64) {
    let c = parse(json!({"max_bytes": 10, "max_source_bytes": value}))
        .resolve()
        .unwrap()
        .config;
    assert_eq!(c.max_source_bytes(), expected);
}

#[rstest]
#[case::unknown_key(json!({"max_bytes": 1, "max_byte": 2}))]
#[case::string_budget(json!({"max_bytes": "65536"}))]
#[case::bad_policy(json!({"max_bytes": 1, "candidate_policy": "last-wins"}))]
#[case::bad_preset(json!({"preset": "cursor"}))]
#[case::camel_case_policy(json!({"max_bytes": 1, "candidate_policy": "FirstWins"}))]
fn rejected_at_deserialization(#[case] value: serde_json::Value) {
    assert!(serde_json::from_value::<ConfigInput>(value).is_err());
}

// R-CFG-4/5: entry validation, each case one ignored entry.
#[rstest]
#[case::empty("", reasons::EMPTY)]
#[case::dot(".", reasons::DOT)]
#[case::dotdot("..", reasons::DOT)]
#[case::slash("a/AGENTS.md", reasons::SEPARATOR)]
#[case::backslash("a\\AGENTS.md", reasons::SEPARATOR)]
#[case::nul("AGENTS\0.md", reasons::NUL)]
#[case::duplicate("AGENTS.md", reasons::DUPLICATE)]
fn ignored_entries(#[case] entry: &str, #[case] reason: &'static str) {
    let input = v(&["AGENTS.md", entry, "CLAUDE.md"]);
    for field in [
        "instruction_file_candidates",
        "local_instruction_file_candidates",
        "project_root_markers",
    ] {
        let resolved = parse(json!({"max_bytes": 1, field: input}))
            .resolve()
            .unwrap();
        let got = match field {
            "instruction_file_candidates" => &resolved.config.instruction_file_candidates(),
            "local_instruction_file_candidates" => {
                &resolved.config.local_instruction_file_candidates()
            }
            _ => &resolved.config.project_root_markers(),
        };
        assert_eq!(*got, v(&["AGENTS.md", "CLAUDE.md"]));
        assert_eq!(
            resolved.warnings,
            [ConfigWarning {
                field,
                entry: entry.to_owned(),
                reason
            }]
        );
    }
}

#[test]
fn duplicate_keeps_first_position() {
    // R-CFG-4: no hidden priority, first position wins.
    let (kept, w) = validate_names("x", &v(&["CLAUDE.md", "AGENTS.md", "CLAUDE.md"]));
    assert_eq!(kept, v(&["CLAUDE.md", "AGENTS.md"]));
    assert_eq!(w.len(), 1);
}

#[test]
fn empty_local_list_disables_overlays() {
    let c = parse(json!({"max_bytes": 1, "local_instruction_file_candidates": []}))
        .resolve()
        .unwrap();
    assert!(c.config.local_instruction_file_candidates().is_empty());
    assert!(c.warnings.is_empty());
}

#[test]
fn warning_display_names_field_and_escapes() {
    let w = ConfigWarning {
        field: "project_root_markers",
        entry: "a\0b".into(),
        reason: reasons::NUL,
    };
    assert_eq!(
        w.to_string(),
        "project_root_markers: ignored entry \"a\\0b\": contains NUL"
    );
}

#[test]
fn policy_strings() {
    for p in [CandidatePolicy::FirstWins, CandidatePolicy::AllDistinct] {
        assert_eq!(p.as_str().parse::<CandidatePolicy>(), Ok(p));
        assert_eq!(serde_json::to_value(p).unwrap(), json!(p.as_str()));
    }
    assert_eq!(
        "first_wins".parse::<CandidatePolicy>().unwrap_err().field(),
        "candidate_policy"
    );
}

#[rstest]
#[case::int(json!(7), Some(NumberInput::Int(7)))]
#[case::negative(json!(-7), Some(NumberInput::Int(-7)))]
#[case::float(json!(7.5), Some(NumberInput::Float(7.5)))]
#[case::huge(json!(u64::MAX), Some(NumberInput::UInt(u64::MAX)))]
#[case::null(json!(null), None)]
fn budget_field_keeps_json_number_kinds(
    #[case] value: serde_json::Value,
    #[case] expected: Option<NumberInput>,
) {
    // The float hint used for YAML's `.inf` must not turn JSON integers into floats.
    assert_eq!(parse(json!({"max_bytes": value})).max_bytes, expected);
}

#[test]
fn input_serializes_back() {
    let input = parse(json!({"max_bytes": 5, "max_source_bytes": 2.0, "preset": "gemini"}));
    let back: ConfigInput = serde_json::from_value(serde_json::to_value(&input).unwrap()).unwrap();
    assert_eq!(back, input);
}

proptest! {
    #[test]
    fn validated_lists_hold_only_plain_unique_names(entries in prop::collection::vec("[a./\\\\\0]{0,3}", 0..8)) {
        let (kept, warnings) = validate_names("f", &entries);
        prop_assert_eq!(kept.len() + warnings.len(), entries.len());
        let unique: BTreeSet<&String> = kept.iter().collect();
        prop_assert_eq!(unique.len(), kept.len());
        for k in &kept {
            prop_assert!(name_problem(k).is_none());
        }
        // Order of kept entries follows input order.
        let mut it = entries.iter();
        for k in &kept {
            prop_assert!(it.any(|e| e == k));
        }
    }

    #[test]
    fn resolve_never_panics(n in any::<f64>(), s in any::<i64>()) {
        let input = ConfigInput {
            max_bytes: Some(NumberInput::Float(n)),
            max_source_bytes: Some(NumberInput::Int(s)),
            ..ConfigInput::default()
        };
        if let Ok(r) = input.resolve() {
            prop_assert!(r.config.max_source_bytes() > 0);
        }
    }
}

// R-CFG-12: rule_formats — default empty, the claude preset's [claude],
// explicit lists win, known names only.
#[rstest]
#[case::default(json!({"max_bytes": 1}), &[])]
#[case::claude_preset(json!({"preset": "claude"}), &[RuleFormat::Claude])]
#[case::other_preset(json!({"preset": "codex"}), &[])]
#[case::explicit_wins(json!({"preset": "claude", "rule_formats": []}), &[])]
#[case::fixed_order_once(
    json!({"max_bytes": 1, "rule_formats": ["windsurf", "claude", "windsurf", "cursor"]}),
    &[RuleFormat::Claude, RuleFormat::Cursor, RuleFormat::Windsurf]
)]
#[case::all(
    json!({"max_bytes": 1, "rule_formats": ["claude", "cursor", "copilot", "windsurf"]}),
    &RuleFormat::ALL
)]
fn rule_formats_resolve(#[case] input: serde_json::Value, #[case] expected: &[RuleFormat]) {
    let c = parse(input).resolve().unwrap().config;
    assert_eq!(c.rule_formats(), expected);
}

#[rstest]
#[case::unknown("zed")]
#[case::case_matters("Claude")]
#[case::empty("")]
fn unknown_rule_format_is_an_error_naming_it(#[case] name: &str) {
    // R-CFG-12
    let err = parse(json!({"max_bytes": 1, "rule_formats": ["claude", name]}))
        .resolve()
        .unwrap_err();
    assert_eq!(err.field(), "rule_formats");
    assert_eq!(
        err,
        StateError::UnknownRuleFormat {
            name: name.to_owned()
        }
    );
    assert!(err.to_string().contains(&format!("{name:?}")), "{err}");
}

#[test]
fn rule_formats_overlay_replaces_whole() {
    let file = parse(json!({"preset": "claude", "rule_formats": ["cursor"]}));
    let flags = parse(json!({"rule_formats": ["copilot"]}));
    let c = file.overlay(flags).resolve().unwrap().config;
    assert_eq!(c.rule_formats(), [RuleFormat::Copilot]);
}
