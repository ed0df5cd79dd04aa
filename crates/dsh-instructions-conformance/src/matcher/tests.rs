//! Tests of the matcher: every expectation key against matching and
//! mismatching observations, and the text classification.

use super::*;
use crate::digest::sha1_hex;
use crate::schema::{ChangeExpect, DigestExpect, Expect, Intro, VisibleMap};
use rstest::rstest;

fn frame(body: &str) -> String {
    format!("<system-reminder>\n{body}\n</system-reminder>")
}

fn change(
    action: ChangeActionObs,
    scope: &str,
    path: &str,
    digest: Option<&str>,
) -> ObservedChange {
    ObservedChange {
        action,
        scope: scope.to_owned(),
        path: path.to_owned(),
        previous_path: None,
        digest: digest.map(str::to_owned),
    }
}

fn msg(parts: &[&str]) -> ObservedMessage {
    ObservedMessage {
        parts: parts.iter().map(|p| (*p).to_owned()).collect(),
        source: ObservedSource::default(),
    }
}

fn reasons(m: &MessageMatcher, got: &ObservedMessage) -> Vec<String> {
    let mut out = Vec::new();
    check_message("inbox[0]", m, got, &mut out);
    out
}

#[test]
fn sha1_hex_matches_known_vectors() {
    assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_eq!(
        sha1_hex("root rule".as_bytes()).len(),
        40,
        "always 40 lowercase hex digits"
    );
}

#[rstest]
#[case::normal(frame(&format!("{INTRO_NORMAL}\n\nInstructions from: AGENTS.md\n\nx")), Intro::Normal)]
#[case::replacement(frame(&format!("{SUPERSEDE}{INTRO_NORMAL}\n\nInstructions from: A\n\nx")), Intro::Replacement)]
#[case::empty_replacement(frame(INTRO_EMPTY_REPLACEMENT), Intro::EmptyReplacement)]
#[case::compact(frame(&format!("Workspace instruction budget 9 bytes: truncated A from 9 to 1 bytes\n\n{INTRO_COMPACT}\n\nInstructions from: A\n\nx")), Intro::Compact)]
#[case::replacement_compact(frame(&format!("{SUPERSEDE}{INTRO_COMPACT}\n\nInstructions from: A\n\nx")), Intro::ReplacementCompact)]
#[case::dynamic(
    frame("Additional instructions from: a/AGENTS.md\n\nThese…"),
    Intro::None
)]
#[case::notice_only(
    frame("Workspace instruction budget 5 bytes: omitted AGENTS.md"),
    Intro::None
)]
#[case::replacement_notice_only(frame(&format!("{SUPERSEDE}Workspace instruction budget 5 bytes: omitted AGENTS.md")), Intro::None)]
#[case::empty(String::new(), Intro::None)]
#[case::unknown_first_block(
    frame("Some other text\n\nInstructions from: A\n\nx"),
    Intro::Unrecognised
)]
#[case::supersede_then_unknown(frame(&format!("{SUPERSEDE}something else\n\nInstructions from: A\n\nx")), Intro::Unrecognised)]
fn intro_classification(#[case] text: String, #[case] want: Intro) {
    assert_eq!(classify_intro(&text), want);
}

#[rstest]
#[case::plain(
    frame("Workspace instruction budget 5 bytes: omitted A\n\nintro"),
    Some("Workspace instruction budget 5 bytes: omitted A")
)]
#[case::after_supersede(frame(&format!("{SUPERSEDE}Workspace instruction budget 5 bytes: omitted A")), Some("Workspace instruction budget 5 bytes: omitted A"))]
#[case::none(frame(&format!("{INTRO_NORMAL}\n\nInstructions from: A\n\nWorkspace instruction budget in content")), None)]
fn notice_extraction(#[case] text: String, #[case] want: Option<&str>) {
    assert_eq!(notice_of(&text), want);
}

#[test]
fn multi_part_messages_are_joined_and_intro_uses_the_first_part() {
    let base = frame(&format!(
        "{INTRO_NORMAL}\n\nInstructions from: AGENTS.md\n\nroot"
    ));
    let dynamic = frame(
        "Instructions removed: old/AGENTS.md\n\nThe instructions previously loaded from this file no longer apply.",
    );
    let got = msg(&[&base, &dynamic]);
    let m = MessageMatcher {
        text: Some(format!("{base}\n{dynamic}")),
        sections: Some(vec![
            "Instructions from: AGENTS.md".into(),
            "Instructions removed: old/AGENTS.md".into(),
        ]),
        contains: Some(vec!["</system-reminder>\n<system-reminder>".into()]),
        intro: Some(Intro::Normal),
        notice: Some(None),
        parts: Some(2),
        max_len: Some(base.len().max(dynamic.len())),
        ..MessageMatcher::default()
    };
    assert_eq!(reasons(&m, &got), Vec::<String>::new());
    // `len` needs a single part.
    let m = MessageMatcher {
        len: Some(base.len()),
        ..MessageMatcher::default()
    };
    assert_eq!(
        reasons(&m, &got),
        vec![format!(
            "inbox[0].len: expected a single part of {} bytes, got 2 parts",
            base.len()
        )]
    );
}

#[test]
fn each_message_key_reports_its_mismatch() {
    let text = frame(&format!(
        "{INTRO_NORMAL}\n\nInstructions from: AGENTS.md\n\nroot rule"
    ));
    let got = msg(&[&text]);
    let cases: Vec<(MessageMatcher, &str)> = vec![
        (
            MessageMatcher {
                text: Some("x".into()),
                ..Default::default()
            },
            "inbox[0].text: expected \"x\", got \"<system-reminder>\\n",
        ),
        (
            MessageMatcher {
                sections: Some(vec!["Instructions from: CLAUDE.md".into()]),
                ..Default::default()
            },
            "inbox[0].sections: expected [\"Instructions from: CLAUDE.md\"], got [\"Instructions from: AGENTS.md\"]",
        ),
        (
            MessageMatcher {
                contains: Some(vec!["nope".into()]),
                ..Default::default()
            },
            "inbox[0].contains: \"nope\" not found",
        ),
        (
            MessageMatcher {
                not_contains: Some(vec!["root rule".into()]),
                ..Default::default()
            },
            "inbox[0].not_contains: \"root rule\" found",
        ),
        (
            MessageMatcher {
                intro: Some(Intro::Compact),
                ..Default::default()
            },
            "inbox[0].intro: expected compact, got normal",
        ),
        (
            MessageMatcher {
                notice: Some(Some("Workspace instruction budget 1 bytes".into())),
                ..Default::default()
            },
            "inbox[0].notice: expected \"Workspace instruction budget 1 bytes\", got null",
        ),
        (
            MessageMatcher {
                parts: Some(2),
                ..Default::default()
            },
            "inbox[0].parts: expected 2, got 1",
        ),
        (
            MessageMatcher {
                max_len: Some(10),
                ..Default::default()
            },
            "inbox[0].max_len: expected at most 10, got",
        ),
        (
            MessageMatcher {
                len: Some(1),
                ..Default::default()
            },
            "inbox[0].len: expected 1, got",
        ),
    ];
    for (m, want) in cases {
        let r = reasons(&m, &got);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(
            r[0].starts_with(want),
            "{:?} does not start with {want:?}",
            r[0]
        );
    }
    // And the exact values pass.
    let m = MessageMatcher {
        len: Some(text.len()),
        max_len: Some(text.len()),
        text: Some(text.clone()),
        ..Default::default()
    };
    assert!(reasons(&m, &got).is_empty());
}

#[test]
fn source_matching() {
    let mut got = msg(&["x"]);
    got.source = ObservedSource {
        baseline: true,
        identity: Some("{\"schema\":1}".into()),
        changes: vec![
            change(
                ChangeActionObs::Set,
                "project\0.\0base",
                "AGENTS.md",
                Some(&sha1_hex(b"root rule")),
            ),
            ObservedChange {
                previous_path: Some("AGENTS.md".into()),
                ..change(
                    ChangeActionObs::Replace,
                    "project\0.\0base",
                    "CLAUDE.md",
                    Some(&sha1_hex(b"c")),
                )
            },
        ],
    };
    let good = MessageMatcher {
        source: Some(SourceExpect {
            baseline: Some(true),
            identity: Some(IdentityExpect::Any),
            changes: Some(vec![
                ChangeExpect {
                    action: Some(ChangeAction::Set),
                    path: Some("AGENTS.md".into()),
                    previous_path: None,
                    digest: Some(Some(DigestExpect::Of("root rule".into()))),
                    scope: Some("project\0.\0base".into()),
                },
                ChangeExpect {
                    action: Some(ChangeAction::Replace),
                    path: None,
                    previous_path: Some(Some("AGENTS.md".into())),
                    digest: Some(Some(DigestExpect::Literal(sha1_hex(b"c")))),
                    scope: None,
                },
            ]),
        }),
        ..Default::default()
    };
    assert!(
        reasons(&good, &got).is_empty(),
        "{:?}",
        reasons(&good, &got)
    );

    let bad = MessageMatcher {
        source: Some(SourceExpect {
            baseline: Some(false),
            identity: Some(IdentityExpect::Exact("other".into())),
            changes: Some(vec![
                ChangeExpect {
                    action: Some(ChangeAction::Remove),
                    path: Some("B.md".into()),
                    previous_path: None,
                    digest: Some(Some(DigestExpect::Of("other".into()))),
                    scope: Some("user\0AGENTS.md".into()),
                },
                ChangeExpect {
                    action: None,
                    path: None,
                    previous_path: Some(Some("X.md".into())),
                    digest: None,
                    scope: None,
                },
            ]),
        }),
        ..Default::default()
    };
    let r = reasons(&bad, &got);
    let fields: Vec<&str> = r
        .iter()
        .map(|s| s.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        fields,
        [
            "inbox[0].source.baseline",
            "inbox[0].source.identity",
            "inbox[0].source.changes[0].action",
            "inbox[0].source.changes[0].path",
            "inbox[0].source.changes[0].digest",
            "inbox[0].source.changes[0].scope",
            "inbox[0].source.changes[1].previous_path",
        ]
    );
    let count = MessageMatcher {
        source: Some(SourceExpect {
            baseline: None,
            identity: None,
            changes: Some(vec![]),
        }),
        ..Default::default()
    };
    assert!(
        reasons(&count, &got)[0].starts_with("inbox[0].source.changes: expected 0 entries, got 2")
    );
}

/// `null` asserts absence: it passes on an absent field, fails on a
/// present one; a value fails on an absent field or another value; a
/// key left out passes whatever the field holds.
#[rstest]
#[case::prev_absent_expected_absent(Some(None), None, None, None, None)]
#[case::prev_present_expected_absent(
    Some(None),
    None,
    Some("AGENTS.md"),
    None,
    Some(r#"c.previous_path: expected null, got "AGENTS.md""#)
)]
#[case::prev_absent_expected_value(
    Some(Some("AGENTS.md")),
    None,
    None,
    None,
    Some(r#"c.previous_path: expected "AGENTS.md", got null"#)
)]
#[case::prev_other_value(
    Some(Some("AGENTS.md")),
    None,
    Some("CLAUDE.md"),
    None,
    Some(r#"c.previous_path: expected "AGENTS.md", got "CLAUDE.md""#)
)]
#[case::prev_same_value(Some(Some("AGENTS.md")), None, Some("AGENTS.md"), None, None)]
#[case::prev_unchecked(None, None, Some("AGENTS.md"), None, None)]
#[case::digest_absent_expected_absent(None, Some(None), None, None, None)]
#[case::digest_present_expected_absent(
    None,
    Some(None),
    None,
    Some("x"),
    Some(r#"c.digest: expected null, got "11f6ad8ec52a2984abaafd7c3b516503785c2072""#)
)]
#[case::digest_absent_expected_value(
    None,
    Some(Some("x")),
    None,
    None,
    Some(r#"c.digest: expected "11f6ad8ec52a2984abaafd7c3b516503785c2072", got null"#)
)]
#[case::digest_same_value(None, Some(Some("x")), None, Some("x"), None)]
#[case::digest_unchecked(None, None, None, Some("x"), None)]
fn null_asserts_absence_of_previous_path_and_digest(
    #[case] want_prev: Option<Option<&str>>,
    #[case] want_digest_of: Option<Option<&str>>,
    #[case] got_prev: Option<&str>,
    #[case] got_digest_of: Option<&str>,
    #[case] reason: Option<&str>,
) {
    // SHA-1 of "x", from the published test vectors of that input, so
    // the reasons above do not come from `sha1_hex` itself.
    assert_eq!(sha1_hex(b"x"), "11f6ad8ec52a2984abaafd7c3b516503785c2072");
    let e = ChangeExpect {
        action: None,
        path: None,
        previous_path: want_prev.map(|p| p.map(str::to_owned)),
        digest: want_digest_of.map(|d| d.map(|t| DigestExpect::Of(t.to_owned()))),
        scope: None,
    };
    let g = ObservedChange {
        previous_path: got_prev.map(str::to_owned),
        ..change(
            ChangeActionObs::Replace,
            "project\0.\0base",
            "CLAUDE.md",
            got_digest_of.map(|t| sha1_hex(t.as_bytes())).as_deref(),
        )
    };
    let mut out = Vec::new();
    check_change("c", &e, &g, &mut out);
    assert_eq!(
        out,
        reason.into_iter().map(str::to_owned).collect::<Vec<_>>()
    );
}

#[test]
fn visible_lookup_takes_the_latest_change_per_scope() {
    let d1 = sha1_hex(b"one");
    let d2 = sha1_hex(b"two");
    let visible = vec![
        ObservedSource {
            baseline: true,
            identity: Some("i".into()),
            changes: vec![
                change(
                    ChangeActionObs::Set,
                    "project\0.\0base",
                    "AGENTS.md",
                    Some(&d1),
                ),
                change(
                    ChangeActionObs::Set,
                    "project\0old\0base",
                    "old/AGENTS.md",
                    Some(&d1),
                ),
            ],
        },
        ObservedSource {
            baseline: false,
            identity: None,
            changes: vec![
                // The root slot moved to CLAUDE.md: AGENTS.md is no longer named by any scope's latest change.
                ObservedChange {
                    previous_path: Some("AGENTS.md".into()),
                    ..change(
                        ChangeActionObs::Replace,
                        "project\0.\0base",
                        "CLAUDE.md",
                        Some(&d2),
                    )
                },
                change(
                    ChangeActionObs::Remove,
                    "project\0old\0base",
                    "old/AGENTS.md",
                    None,
                ),
            ],
        },
    ];
    let exp = Expect {
        visible: Some(VisibleMap(vec![
            ("AGENTS.md".into(), VisibleExpect::None),
            (
                "CLAUDE.md".into(),
                VisibleExpect::Loaded {
                    action: Some(ChangeAction::Replace),
                    digest: Some(DigestExpect::Of("two".into())),
                },
            ),
            ("old/AGENTS.md".into(), VisibleExpect::Removed),
        ])),
        ..Default::default()
    };
    let obs = Observation {
        visible: visible.clone(),
        ..Default::default()
    };
    assert_eq!(check(&exp, &obs), Vec::<String>::new());

    let wrong = Expect {
        visible: Some(VisibleMap(vec![
            (
                "AGENTS.md".into(),
                VisibleExpect::Loaded {
                    action: None,
                    digest: None,
                },
            ),
            (
                "CLAUDE.md".into(),
                VisibleExpect::Loaded {
                    action: Some(ChangeAction::Set),
                    digest: None,
                },
            ),
            ("old/AGENTS.md".into(), VisibleExpect::None),
        ])),
        ..Default::default()
    };
    assert_eq!(
        check(&wrong, &obs),
        vec![
            "visible[\"AGENTS.md\"]: expected {action: set|replace, digest: any}, got none"
                .to_owned(),
            format!(
                "visible[\"CLAUDE.md\"]: expected {{action: set, digest: any}}, got {{action: replace, digest: {d2}}}"
            ),
            "visible[\"old/AGENTS.md\"]: expected none, got removed".to_owned(),
        ]
    );
}

#[test]
fn step_level_keys() {
    let obs = Observation {
        outcome: Some(Outcome::Ok),
        batch: Some(vec!["hi".into(), "workspace".into()]),
        entered: None,
        inbox: vec![msg(&["a"])],
        history: vec!["hi".into(), "workspace".into()],
        visible: vec![],
        counters: Some(StepCounters {
            reads: 2,
            probes: 13,
        }),
    };
    let good = Expect {
        outcome: Some(Outcome::Ok),
        batch: Some(vec!["hi".into(), "workspace".into()]),
        entered: Some(None),
        inbox: Some(vec![MessageMatcher::default()]),
        history: Some(vec!["hi".into(), "workspace".into()]),
        visible: None,
        reads: Some(2),
        probes_max: Some(13),
    };
    assert!(check(&good, &obs).is_empty());
    let bad = Expect {
        outcome: Some(Outcome::Cancelled),
        batch: Some(vec!["hi".into()]),
        entered: Some(Some(MessageMatcher::default())),
        inbox: Some(vec![]),
        history: Some(vec![]),
        visible: None,
        reads: Some(0),
        probes_max: Some(12),
    };
    assert_eq!(
        check(&bad, &obs),
        vec![
            "outcome: expected cancelled, got ok",
            "batch: expected [\"hi\"], got [\"hi\",\"workspace\"]",
            "entered: expected a message, got null",
            "inbox: expected 0 message(s), got 1 [\"a\"]",
            "history: expected [], got [\"hi\",\"workspace\"]",
            "reads: expected 0, got 2",
            "probes_max: expected at most 12, got 13",
        ]
    );
    // Keys not written are not checked; counters are absent on disk.
    let disk = Observation {
        counters: None,
        outcome: None,
        batch: None,
        ..obs
    };
    assert_eq!(check(&Expect::default(), &disk), Vec::<String>::new());
    let r = check(
        &Expect {
            reads: Some(0),
            batch: Some(vec![]),
            ..Default::default()
        },
        &disk,
    );
    assert_eq!(
        r,
        vec![
            "batch: only a pre_step has a batch",
            "reads: no op counters on this provider"
        ]
    );
}

mod props {
    use super::super::*;
    use crate::digest::sha1_hex;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sha1_hex_is_40_lowercase_hex(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let h = sha1_hex(&bytes);
            prop_assert_eq!(h.len(), 40);
            prop_assert!(h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }

        #[test]
        fn section_lines_finds_exactly_the_header_lines(
            lines in prop::collection::vec(
                prop_oneof![
                    "[a-z ]{0,12}",
                    "[a-z]{1,8}".prop_map(|p| format!("Instructions from: {p}")),
                    "[a-z]{1,8}".prop_map(|p| format!("Additional instructions from: {p}")),
                    "[a-z]{1,8}".prop_map(|p| format!("Updated instructions from: {p}")),
                    "[a-z]{1,8}".prop_map(|p| format!("Instructions removed: {p}")),
                    "[a-z]{1,8}".prop_map(|p| format!(" Instructions from: {p}")),
                ],
                0..12,
            )
        ) {
            let text = lines.join("\n");
            let want: Vec<&str> = lines
                .iter()
                .map(String::as_str)
                .filter(|l| l.contains(": ") && !l.starts_with(' '))
                .collect();
            prop_assert_eq!(section_lines(&text), want);
        }
    }
}
