//! Cline CLI 3.0.65's e2e cases (decision 0089; harness
//! `agents/cline.md`), and the two outside hosts its terminal UI tries at
//! every start, refused by the mock and reported, never failing a case.
//! How Cline is run is `cline_run.rs`.

use super::agents::Agent;
use super::assertions::Expect;
use super::scenarios::{Case, Change, Plan, f, instr, once, plan, step};

/// The hosts Cline's terminal UI connects to at every start, with no switch
/// to stop it (harness: `models.dev/api.json`, the model catalog, and
/// `api.cline.bot`'s recommended models). The mock refuses both (`403` to
/// the `CONNECT`); the case reports them. Any other outside connection, or
/// one of these answered, still fails the case.
pub(crate) const REFUSED_HOSTS: [&str; 2] = ["models.dev:443", "api.cline.bot:443"];

/// Whether a stray request is one of Cline's known start-up connections,
/// refused.
pub(crate) fn known_refusal(agent: Agent, method: &str, target: &str, action: &str) -> bool {
    agent == Agent::Cline
        && method == "CONNECT"
        && action == "refused"
        && REFUSED_HOSTS.contains(&target)
}

/// The files of the Cline case: a root `AGENTS.md` Cline loads itself, what
/// it lacks (an overlay, the user-global file, a `CLAUDE.md` where a
/// directory has no `AGENTS.md`, nested files), a file to read and one to
/// remove while Cline is not running.
fn files() -> Vec<(String, String)> {
    vec![
        f("home/.dsh/AGENTS.md", instr("E2E-HOME-V1")),
        f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
        f("ws/AGENTS.local.md", instr("E2E-LOCAL-V1")),
        f("ws/sub/CLAUDE.md", instr("E2E-SUB-V1")),
        f("ws/sub/f.txt", "plain file in sub\n"),
        f("ws/gone/AGENTS.md", instr("E2E-GONE-V1")),
        f("ws/gone/g.txt", "plain file in gone\n"),
    ]
}

/// One Cline session through every event the adapter has with it: the
/// first tool call gives what Cline lacks (Cline's own `AGENTS.md` stays in
/// its system prompt, never ours); a resumed prompt after an edit and a
/// removal while Cline was not running gives the update and the removal,
/// and no second baseline; an edit of Cline's own file is Cline's; after
/// `/compact` the next tool call gives the complete baseline again.
fn session(_: Agent) -> Result<Plan, String> {
    let mut first = step(
        "first",
        "Read them [p:t1] [mock:read=sub/f.txt,gone/g.txt]",
        vec![
            // Cline's own, in its system prompt: once, and none of ours.
            once("E2E-ROOT-V1"),
            once("## Workspace AGENTS.md"),
            Expect::Absent("Instructions from: AGENTS.md\n".into()),
            once("E2E-HOME-V1"),
            once("E2E-LOCAL-V1"),
            once("Instructions from: AGENTS.local.md"),
            once("E2E-SUB-V1"),
            once("Additional instructions from: sub/CLAUDE.md"),
            once("E2E-GONE-V1"),
        ],
    );
    first.file_contains = Vec::new();
    let mut resumed = step(
        "resumed",
        "Again [p:t2] [mock:read=sub/f.txt]",
        vec![
            once("E2E-HOME-V1"),
            once("E2E-LOCAL-V2"),
            once("Updated instructions from: AGENTS.local.md"),
            once("Instructions removed: gone/AGENTS.md"),
            // Cline shows its own file's edit itself, and only it.
            once("E2E-ROOT-V2"),
            Expect::Absent("E2E-ROOT-V1".into()),
            Expect::Absent("Updated instructions from: AGENTS.md\n".into()),
        ],
    );
    resumed.before = vec![
        Change::Write("ws/AGENTS.local.md".into(), instr("E2E-LOCAL-V2")),
        Change::Write("ws/AGENTS.md".into(), instr("E2E-ROOT-V2")),
        Change::Remove("ws/gone/AGENTS.md".into()),
    ];
    let mut compact = step("compact", "/compact", Vec::new());
    compact.compacts = true;
    // After the compaction every file is in the history once: the answers
    // Cline's compacted view kept, or, where it folded one into its
    // summary, the complete baseline the next tool call gives.
    let after = step(
        "after",
        "After [p:t4] [mock:read=sub/f.txt]",
        vec![
            once("E2E-HOME-V1"),
            Expect::Present("E2E-LOCAL-V2".into()),
            Expect::AtMostOnce("E2E-SUB-V1".into()),
            once("E2E-ROOT-V2"),
        ],
    );
    Ok(plan(files(), ".", vec![first, resumed, compact, after]))
}

/// Every tool of Cline's that touches, in one turn: a write into a new
/// directory (`editor`), an edit (`editor` with the old text) where only a
/// `CLAUDE.md` is, a shell read (`run_commands`); and a path-scoped rule
/// (`--rules claude`), which Cline itself would load always (it ignores
/// `paths:`) but the hook gives on the touch of its directory only.
fn tools(_: Agent) -> Result<Plan, String> {
    let mut s = step(
        "tools",
        "Work [p:t1] [mock:write=w/new.txt] [mock:edit=e/f.txt] [mock:shell=cat s/x.txt]",
        vec![
            once("E2E-ROOT-V1"),
            once("E2E-W-V1"),
            once("Additional instructions from: w/AGENTS.md"),
            once("E2E-E-V1"),
            once("Additional instructions from: e/CLAUDE.md"),
            once("E2E-S-V1"),
            once("Additional instructions from: s/AGENTS.md"),
            once("E2E-RULE-V1"),
        ],
    );
    s.file_contains = vec![
        (
            "ws/w/new.txt".into(),
            super::script::WRITE_CONTENT.trim().into(),
        ),
        ("ws/e/f.txt".into(), super::script::EDIT_AFTER.into()),
    ];
    let mut p = plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/w/AGENTS.md", instr("E2E-W-V1")),
            f("ws/e/CLAUDE.md", instr("E2E-E-V1")),
            f("ws/e/f.txt", format!("{}\n", super::script::EDIT_BEFORE)),
            f("ws/s/AGENTS.md", instr("E2E-S-V1")),
            f("ws/s/x.txt", "plain file in s\n"),
            f(
                "ws/.claude/rules/e-only.md",
                "---\npaths: [\"e/**\"]\n---\nE2E-RULE-V1: a rule for e/ only.\n",
            ),
        ],
        ".",
        vec![s],
    );
    p.rule_formats = vec!["claude"];
    Ok(p)
}

/// Cline's own cases.
pub(crate) const CASES: &[Case] = &[
    Case {
        name: "cline-session",
        about: "Cline: its own AGENTS.md stays its own; the first tool call brings the rest; resume after an edit and a removal; /compact then the baseline again",
        plan: session,
        only: Some(Agent::Cline),
        layout: None,
    },
    Case {
        name: "cline-tools",
        about: "Cline: editor (write, edit) and run_commands touch; a path-scoped rule (--rules claude) on its touch",
        plan: tools,
        only: Some(Agent::Cline),
        layout: None,
    },
];
