//! Tests of the scenario schema: strict errors naming file, step and key,
//! defaults, and every construct of the format.

use std::path::Path;

use super::fs::decode_hex;
use super::*;
use crate::ConformanceError;
use dsh_instructions_state::{
    Preset,
    config::{CandidatePolicy, NumberInput},
};
use rstest::rstest;

fn parse(src: &str) -> Result<Scenario, ConformanceError> {
    Scenario::parse(Path::new("dir/case.yaml"), src)
}

#[rstest]
#[case::top_level("cwd: /r\nbogus: 1\n", None, Some("bogus"), "unknown field")]
#[case::in_step(
        "cwd: /r\nsteps:\n  - pre_step: {}\n  - tool: {name: read, pth: a}\n",
        Some((2, "tool")),
        Some("pth"),
        "unknown field"
    )]
#[case::in_expect(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect:\n      inbx: []\n",
        Some((1, "pre_step")),
        Some("inbx"),
        "unknown field"
    )]
#[case::in_matcher(
        "cwd: /r\nsteps:\n  - event: step_end\n  - pre_step: {}\n    expect:\n      inbox: [{txt: a}]\n",
        Some((2, "pre_step")),
        Some("txt"),
        "unknown field"
    )]
#[case::bad_enum_block(
        "cwd: /r\nsteps:\n  - pre_step:\n      decision: maybe\n",
        Some((1, "pre_step")),
        Some("decision"),
        "unknown variant `maybe`"
    )]
#[case::bad_enum_flow(
        "cwd: /r\nsteps:\n  - pre_step: {decision: maybe}\n",
        Some((1, "pre_step")),
        Some("decision"),
        "unknown variant `maybe`"
    )]
#[case::bad_compact(
        "cwd: /r\nsteps:\n  - compact: everything\n",
        Some((1, "compact")),
        Some("compact"),
        "unknown variant `everything`"
    )]
#[case::bad_fault_errno(
    "cwd: /r\nfs:\n  /r/A.md: {text: a, fault: {op: read, error: ENOENT}}\n",
    None,
    Some("error"),
    "unknown variant `ENOENT`"
)]
#[case::bad_intro(
        "cwd: /r\nsteps:\n  - pre_step: {}\n    expect:\n      entered: {intro: fancy}\n",
        Some((1, "pre_step")),
        Some("intro"),
        "unknown variant `fancy`"
    )]
#[case::config_unknown_key(
    "cwd: /r\nconfig: {max_bytes: 1, max_byts: 2}\n",
    None,
    Some("max_byts"),
    "unknown field"
)]
#[case::config_bad_policy(
    "cwd: /r\nconfig:\n  max_bytes: 1\n  candidate_policy: last-wins\n",
    None,
    Some("candidate_policy"),
    "unknown variant `last-wins`"
)]
#[case::config_budget_not_a_number(
    "cwd: /r\nconfig:\n  max_bytes: lots\n",
    None,
    Some("max_bytes"),
    "invalid"
)]
#[case::remount_config_bad_preset(
        "cwd: /r\nsteps:\n  - pre_step: {}\n  - remount:\n      config: {preset: vim}\n",
        Some((2, "remount")),
        Some("preset"),
        "unknown variant `vim`"
    )]
fn strict_errors_name_file_step_and_key(
    #[case] src: &str,
    #[case] step: Option<(usize, &str)>,
    #[case] key: Option<&str>,
    #[case] message: &str,
) {
    let err = parse(src).unwrap_err();
    let ConformanceError::Scenario {
        file,
        at,
        message: said,
    } = &err
    else {
        panic!("not a scenario error: {err:?}");
    };
    assert_eq!(file, Path::new("dir/case.yaml"));
    assert_eq!(at.step.as_ref().map(|s| (s.index, s.action.as_str())), step);
    assert_eq!(at.key.as_deref(), key);
    assert!(said.contains(message), "{err}");
    assert!(at.position.is_some(), "{err}");
    let rendered = err.to_string();
    assert!(rendered.starts_with("dir/case.yaml:"), "{rendered}");
    if let Some((n, a)) = step {
        assert!(rendered.contains(&format!("step {n} ({a})")), "{rendered}");
    }
}

#[rstest]
#[case::two_actions(
    "cwd: /r\nsteps:\n  - {resume: {}, release: /a}\n",
    "exactly one action"
)]
#[case::no_action("cwd: /r\nsteps:\n  - expect: {}\n", "exactly one action")]
#[case::empty_roots("cwd: /r\ntrusted_roots: []\n", "empty trusted_roots")]
#[case::remount_empty_roots(
    "cwd: /r\nsteps:\n  - remount: {trusted_roots: []}\n",
    "empty trusted_roots"
)]
#[case::relative_cwd("cwd: r\n", "must be absolute")]
#[case::missing_cwd("steps: []\n", "missing field `cwd`")]
#[case::relative_fs_key("cwd: /r\nfs:\n  r/A.md: x\n", "must be absolute")]
#[case::two_contents("cwd: /r\nfs:\n  /r/A.md: {text: a, link: b}\n", "exactly one of")]
#[case::odd_hex("cwd: /r\nfs:\n  /r/A.md: {bytes_hex: abc}\n", "odd length")]
#[case::fifo_false("cwd: /r\nfs:\n  /r/p: {fifo: false}\n", "must be true")]
#[case::bad_digest(
    "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {visible: {A.md: {digest: xyz}}}\n",
    "40 lowercase hex"
)]
#[case::visible_remove_map(
    "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {visible: {A.md: {action: remove}}}\n",
    "removed"
)]
#[case::disabled_with_config("cwd: /r\ndisabled: true\nconfig: {max_bytes: 1}\n", "disabled")]
#[case::bad_provider("cwd: /r\nproviders: [ram]\n", "unknown variant `ram`")]
#[case::not_yaml("cwd: [\n", "")]
#[case::blocked_with_expect(
    "cwd: /r\nsteps:\n  - blocked: /r/A.md\n    expect: {}\n",
    "takes no `expect`"
)]
#[case::digest_of_null(
    "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {entered: {source: {changes: [{digest_of: null}]}}}\n",
    "write `digest: null`"
)]
#[case::digest_of_and_null_digest(
    "cwd: /r\nsteps:\n  - pre_step: {}\n    expect: {entered: {source: {changes: [{digest_of: a, digest: null}]}}}\n",
    "not both"
)]
fn invalid_scenarios_are_errors(#[case] src: &str, #[case] message: &str) {
    let err = parse(src).unwrap_err();
    assert!(err.to_string().contains(message), "{err}");
}

/// A change key left out is not checked, `null` asserts the field is
/// absent, a value asserts it equals that value.
#[rstest]
#[case::unchecked("{action: set}", None, None)]
#[case::absent("{previous_path: null, digest: null}", Some(None), Some(None))]
#[case::exact(
        "{previous_path: A.md, digest_of: x}",
        Some(Some("A.md")),
        Some(Some(DigestExpect::Of("x".into())))
    )]
#[case::literal(
        "{digest: \"0123456789abcdef0123456789abcdef01234567\"}",
        None,
        Some(Some(DigestExpect::Literal("0123456789abcdef0123456789abcdef01234567".into())))
    )]
fn change_keys_are_unchecked_absent_or_exact(
    #[case] change: &str,
    #[case] previous_path: Option<Option<&str>>,
    #[case] digest: Option<Option<DigestExpect>>,
) {
    let src = format!(
        "cwd: /r\nsteps:\n  - pre_step: {{}}\n    expect: {{entered: {{source: {{changes: [{change}]}}}}}}\n"
    );
    let sc = parse(&src).unwrap();
    let entered = sc.steps[0].expect.as_ref().unwrap().entered.clone();
    let changes = entered.flatten().unwrap().source.unwrap().changes.unwrap();
    assert_eq!(
        changes[0].previous_path,
        previous_path.map(|p| p.map(str::to_owned))
    );
    assert_eq!(changes[0].digest, digest);
}

#[test]
fn defaults_follow_the_format() {
    let sc = parse("cwd: /w/r\nconfig: {max_bytes: 65536}\nsteps:\n  - pre_step:\n  - resume:\n")
        .unwrap();
    assert_eq!(sc.name, "case");
    assert_eq!(sc.providers, vec![ProviderKind::Memory, ProviderKind::Disk]);
    assert_eq!(
        sc.env,
        Env {
            home: "/home/user".into(),
            dsh_home: None
        }
    );
    assert_eq!(sc.trusted_roots, None);
    assert_eq!(sc.steps[0].action, Action::PreStep(PreStep::default()));
    let Action::PreStep(p) = &sc.steps[0].action else {
        unreachable!()
    };
    assert_eq!(p.claimed, vec!["prompt".to_owned()]);
    assert_eq!(p.decision, Decision::Enter);
    assert_eq!(sc.steps[1].action, Action::Resume);
    assert_eq!(sc.steps[0].line, Some(4));
    assert!(sc.memory_only_uses().is_empty());
}

#[test]
fn every_construct_parses() {
    let src = r#"
name: all-constructs
about: everything at once
tags: [a, b]
providers: [memory]
config:
  max_bytes: .inf
  max_source_bytes: 10
  instruction_file_candidates: [AGENTS.md]
  local_instruction_file_candidates: []
  project_root_markers: [.git, .hg]
  candidate_policy: all-distinct
  dsh_home: ~/.dsh
  touch_tools: {read: [file_path], grep: [path, glob]}
  preset: codex
  imports: true
no_provider: false
env: {HOME: /home/ada, DSH_HOME: /opt/dsh}
trusted_roots: [/w]
cwd: /w/r/pkg
fs:
  /w/r/.git: dir
  /w/r/AGENTS.md: |
    root rule
  /w/r/CLAUDE.md: {link: AGENTS.md}
  /w/r/bom.md: {bytes_hex: "EFBBbf41"}
  /w/r/big.md: {repeat: "ab", bytes: 5}
  /w/r/pipe: {fifo: true}
  /w/r/x.md: {text: dir, fault: {op: stat, error: EACCES}, stale_size: 3, gate: read}
steps:
  - pre_step: {claimed: [hi], extra: [ctx], decision: empty, step: 2, cancel_when_blocked: /w/r/x.md}
    expect:
      outcome: cancelled
      batch: [hi, workspace, ctx]
      entered: null
      inbox:
        - text: "t"
          sections: ["Instructions from: AGENTS.md"]
          contains: [a]
          not_contains: [b]
          intro: replacement_compact
          notice: null
          parts: 2
          max_len: 200
          len: 187
          source:
            baseline: false
            identity: any
            changes:
              - {action: set, path: AGENTS.md, digest_of: "root rule", scope: "project\0.\0base"}
              - {action: remove, path: old/AGENTS.md}
              - {action: replace, path: CLAUDE.md, previous_path: AGENTS.md, digest: "0123456789abcdef0123456789abcdef01234567"}
      history: [hi, workspace]
      visible:
        AGENTS.md: {action: set, digest_of: "root rule"}
        pkg/CLAUDE.md: none
        old/AGENTS.md: removed
      reads: 0
      probes_max: 12
  - tool: {name: read, path: "pkg/a.rs", ok: false, cancelled: true, token: t1, parent: p0}
  - event: turn_end
  - write: {/w/r/AGENTS.md: {text: new, keep_version: true}}
  - remove: [/w/r/CLAUDE.md]
  - release: /w/r/x.md
  - blocked: /w/r/x.md
  - compact: {hide: [0, 2]}
  - compact: all
  - resume: {}
  - remount: {config: {max_bytes: 0}, env: {HOME: /h}, trusted_roots: [/w]}
"#;
    let sc = parse(src).unwrap();
    assert_eq!(sc.name, "all-constructs");
    assert_eq!(sc.providers, vec![ProviderKind::Memory]);
    let cfg = sc.config.as_ref().unwrap();
    // `.inf` reaches the state crate as written (R-CFG-2 disables loading).
    assert!(matches!(cfg.max_bytes, Some(NumberInput::Float(f)) if f.is_infinite()));
    assert_eq!(cfg.max_source_bytes, Some(NumberInput::Int(10)));
    assert_eq!(cfg.candidate_policy, Some(CandidatePolicy::AllDistinct));
    assert_eq!(cfg.preset, Some(Preset::Codex));
    assert_eq!(cfg.dsh_home.as_deref(), Some("~/.dsh"));
    // R-CFG-10: the imports switch is a config key like any other.
    assert_eq!(cfg.imports, Some(true));
    assert_eq!(
        cfg.touch_tools.as_ref().and_then(|t| t.get("grep")),
        Some(&vec!["path".to_owned(), "glob".to_owned()])
    );
    let fs: Vec<_> = sc
        .fs
        .0
        .iter()
        .map(|(k, v)| (k.as_str(), &v.content))
        .collect();
    assert_eq!(fs[0], ("/w/r/.git", &FsContent::Dir));
    assert_eq!(
        fs[1],
        ("/w/r/AGENTS.md", &FsContent::File(b"root rule\n".to_vec()))
    );
    assert_eq!(fs[2].1, &FsContent::Link("AGENTS.md".into()));
    assert_eq!(fs[3].1, &FsContent::File(vec![0xef, 0xbb, 0xbf, 0x41]));
    assert_eq!(fs[4].1, &FsContent::File(b"ababa".to_vec()));
    assert_eq!(fs[5].1, &FsContent::Fifo);
    assert_eq!(fs[6].1, &FsContent::File(b"dir".to_vec()));
    assert_eq!(
        sc.fs.0[6].1.memory_knobs(),
        vec!["fault", "stale_size", "gate"]
    );
    let e = sc.steps[0].expect.as_ref().unwrap();
    assert_eq!(e.entered, Some(None));
    let m = &e.inbox.as_ref().unwrap()[0];
    assert_eq!(m.notice, Some(None));
    let changes = m.source.as_ref().unwrap().changes.as_ref().unwrap();
    assert_eq!(changes[0].scope.as_deref(), Some("project\0.\0base"));
    assert_eq!(
        changes[0].digest.clone().flatten().unwrap().hex(),
        crate::digest::sha1_hex(b"root rule")
    );
    assert_eq!(
        m.source.as_ref().unwrap().identity,
        Some(IdentityExpect::Any)
    );
    let names: Vec<_> = sc.steps.iter().map(|s| s.action.name()).collect();
    assert_eq!(
        names,
        [
            "pre_step", "tool", "event", "write", "remove", "release", "blocked", "compact",
            "compact", "resume", "remount"
        ]
    );
    assert_eq!(sc.steps[6].action, Action::Blocked("/w/r/x.md".into()));
    assert_eq!(
        sc.steps[7].action,
        Action::Compact(Compact::Hide(vec![0, 2]))
    );
    let uses = sc.memory_only_uses();
    for want in [
        "fault",
        "cancel_when_blocked",
        "keep_version",
        "release",
        "(blocked)",
        "expect.reads",
        "expect.probes_max",
    ] {
        assert!(
            uses.iter().any(|u| u.contains(want)),
            "{want} missing from {uses:?}"
        );
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bytes_hex_round_trips(bytes in prop::collection::vec(any::<u8>(), 0..64), upper in any::<bool>()) {
            let mut hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            if upper {
                hex = hex.to_uppercase();
            }
            prop_assert_eq!(decode_hex(&hex), Ok(bytes));
        }

        #[test]
        fn repeat_files_have_exactly_the_requested_length(unit in "[a-zé]{1,5}", n in 0u64..5000) {
            let src = format!("cwd: /r\nfs:\n  /r/f: {{repeat: \"{unit}\", bytes: {n}}}\n");
            let sc = Scenario::parse(Path::new("p.yaml"), &src).unwrap();
            let FsContent::File(bytes) = &sc.fs.0[0].1.content else { panic!("not a file") };
            prop_assert_eq!(bytes.len() as u64, n);
            let unit_bytes = unit.as_bytes();
            prop_assert!(bytes.iter().enumerate().all(|(i, b)| *b == unit_bytes[i % unit_bytes.len()]));
        }
    }
}
