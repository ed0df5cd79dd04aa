//! The scenarios (issue #13 item 3, R-HOOK-7), as data: files to create,
//! the agent's cwd, and steps — changes made by the test, one prompt, and
//! expectations on the LAST request of that step (what the model sees then).
//!
//! Every file carries a unique marker per version (`E2E-ROOT-V1`, …), so
//! "exactly once" (R-HOOK-5) is a count. Where an agent cannot do what a
//! case exercises (Codex reads with a shell `cat`, which is not a touch:
//! R-DISC-9), the case asserts what that agent does instead.

use super::agents::Agent;
use super::assertions::Expect;
use super::script::{EDIT_AFTER, EDIT_BEFORE, WRITE_CONTENT};

/// R-REN-2 normal intro (its first sentence): one per complete baseline.
pub(crate) const INTRO: &str =
    "The following workspace instructions come from instruction files in this environment.";
/// R-REN-2 replacement intro (SUPERSEDE, without its trailing space).
pub(crate) const SUPERSEDE: &str =
    "This complete workspace instruction baseline supersedes every earlier one.";

/// A change the test makes to the files before a step's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// Create or overwrite `path` (relative to the run dir: `ws/…`, `home/…`).
    Write(String, String),
    /// Delete `path`.
    Remove(String),
}

/// One prompt of a session.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// Short label for reports.
    pub label: &'static str,
    /// Made before the prompt, while no agent runs.
    pub before: Vec<Change>,
    /// The prompt (tagged, with `[mock:…]` directives).
    pub prompt: String,
    /// On the last turn request of the step.
    pub expect: Vec<Expect>,
    /// On the current turn only of that request: from the conversation
    /// element holding this step's prompt to the end (for Gemini CLI, whose
    /// adapter gives a complete baseline with every prompt).
    pub expect_turn: Vec<Expect>,
    /// `(path, text)`: after the step, the file (run-dir relative) contains text.
    pub file_contains: Vec<(String, String)>,
    /// The step must make the agent compact: a summary request is recorded.
    pub compacts: bool,
    /// On EVERY main-chat request of the step (tool-loop continuations and
    /// the turns after a compression included), not only the last.
    pub expect_each: Vec<Expect>,
}

/// What a case needs from the product beyond the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// Nothing more.
    Nothing,
    /// `show --preset claude` expands `@path` imports (§13).
    Imports,
}

/// One case for one agent.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Files to create (run-dir relative), before git init's commit.
    pub files: Vec<(String, String)>,
    /// The agent's cwd, relative to `ws` (`.` = the root).
    pub cwd: String,
    /// Prompts in order: the first starts the session, the others resume it.
    pub steps: Vec<Step>,
    /// Extra capability required.
    pub needs: Needs,
    /// Rule formats the hook is given (R-RULE-7, `rules.rs`); empty: the
    /// hook's own default.
    pub rule_formats: Vec<&'static str>,
    /// Run the steps natively (no hook) first and compare (`rules.rs`).
    pub against_native: bool,
}

/// A case: a name, what it proves, and its plan per agent (`Err` = FAIL and
/// why: a case never skips).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Case {
    /// Name for `--case`.
    pub name: &'static str,
    /// One line: what it proves.
    pub about: &'static str,
    /// The plan for an agent.
    pub plan: fn(Agent) -> Result<Plan, String>,
    /// The one agent the case is about (`None`: all three). Other agents do
    /// not run it at all (it is not counted), rather than skipping it.
    pub only: Option<Agent>,
    /// A native-vs-hooked comparison on this layout (`compare.rs`) instead
    /// of the plan's steps.
    pub layout: Option<&'static super::layouts::Layout>,
}

impl Case {
    /// Whether `agent` runs this case (and counts it): its one agent, or
    /// every agent but Cline outside the comparisons it shares
    /// ([`CLINE_SHARED`]), and but pi and opencode for the comparisons
    /// about the hook's parts ([`PARTS_ONLY`]).
    pub(crate) fn runs_for(&self, agent: Agent) -> bool {
        (agent.runs(self.only) || (agent == Agent::Cline && CLINE_SHARED.contains(&self.name)))
            && !(agent.in_process() && PARTS_ONLY.contains(&self.name))
    }
}

/// The shared cases Cline runs besides its own (`cline.rs`): the layouts
/// compared line by line with Cline alone (`compare.rs`).
pub(crate) const CLINE_SHARED: [&str; 3] = ["native-sentry", "native-airflow", "native-big-root"];

/// Comparisons whose point is the hook's message in parts (a 34 KB root
/// past Codex's cap, five parts of unequal work read in order): the pi
/// extension and the opencode plugin give a message whole, and their own
/// loading keeps every file these layouts put in its reach, so for them
/// these add only a minute of run time each (decision 0088).
pub(crate) const PARTS_ONLY: [&str; 2] = ["native-big-root", "parts-order"];

/// An instruction file's content for a marker.
pub(crate) fn instr(marker: &str) -> String {
    format!("# e2e instructions\n{marker}: follow the e2e rules here.\n")
}

pub(crate) fn f(path: &str, content: impl Into<String>) -> (String, String) {
    (path.to_owned(), content.into())
}

pub(crate) fn once(s: &str) -> Expect {
    Expect::Once(s.to_owned())
}
pub(crate) fn absent(s: &str) -> Expect {
    Expect::Absent(s.to_owned())
}

pub(crate) fn step(label: &'static str, prompt: &str, expect: Vec<Expect>) -> Step {
    Step {
        label,
        before: Vec::new(),
        prompt: prompt.to_owned(),
        expect,
        expect_turn: Vec::new(),
        file_contains: Vec::new(),
        compacts: false,
        expect_each: Vec::new(),
    }
}

pub(crate) fn plan(files: Vec<(String, String)>, cwd: &str, steps: Vec<Step>) -> Plan {
    Plan {
        files,
        cwd: cwd.to_owned(),
        steps,
        needs: Needs::Nothing,
        rule_formats: Vec::new(),
        against_native: false,
    }
}

/// Whether a Read-like tool call is a touch for this agent (R-HOOK-3): Codex
/// reads with `cat` in its shell, a touch since shell touches (R-DISC-10,
/// issue 17 item 4), so for every agent.
fn reads_touch(_: Agent) -> bool {
    true
}

/// Gemini CLI 0.61 drops earlier prompts (and the contexts merged into them)
/// on resume and repeats earlier tool results (harness README, "Resume
/// quirk"; seen here too: a touched file's context inside a tool result
/// arrives twice after a resume), so history-based counts hold only for
/// Claude Code and Codex.
fn keeps_history_on_resume(agent: Agent) -> bool {
    !matches!(agent, Agent::Gemini) && !replaces_start_on_resume(agent) && !agent.in_process()
}

/// Copilot CLI and Qwen Code replace the session-start context with the
/// resuming process's and keep the rest of the history (prompt contexts,
/// tool results; harness README, "replaced, not accumulated"), so the
/// adapter gives a complete baseline on every resume: the request after a
/// resume holds each current file once, one intro, no old version that
/// only a session-start context held, and says that the new baseline
/// supersedes whatever of an earlier one the history still holds.
fn replaces_start_on_resume(agent: Agent) -> bool {
    matches!(agent, Agent::Copilot | Agent::Qwen)
}

/// Gemini CLI through `BeforeModel` (R-HOOK-9, decision 0020): every
/// request carries the current composition prefixed to its first user
/// message and nothing of it persists, so the whole request holds each
/// current file once, one intro and no old version.
fn gemini_request_baseline(step: &mut Step, current: &[&str], old: &[&str]) {
    step.expect.extend(current.iter().map(|m| once(m)));
    step.expect.push(once(INTRO));
    step.expect.extend(old.iter().map(|m| absent(m)));
}

/// Copilot CLI, pi and opencode keep their own loading with the
/// integration (decisions 0067, 0088): the files each loads itself arrive
/// once in its own wrappers and the adapter must not give them again, so
/// their adapter headings must be absent. `native` names what each loads
/// itself in the step: `(copilot, pi, opencode)`.
///
/// Copilot, measured natively here (2026-12-04): every `AGENTS.md` from the
/// git root to the cwd at start, and after a `view` the viewed file's
/// directory and those between it and the root (a transient message: only
/// in the next request). Not after `create`, `edit` or `bash`: those nested
/// files are what Copilot lacks, so the adapter's headings stay expected
/// there. pi: the chain from the cwd up, never a nested file. opencode: the
/// chain from the cwd up, and after a `read` the read file's directories
/// below the cwd (agents/pi.md, agents/opencode.md).
fn own_loads(agent: Agent, step: &mut Step, native: Loads<'_>) {
    let native = match agent {
        Agent::Copilot => native.0,
        Agent::Pi => native.1,
        Agent::Opencode => native.2,
        _ => return,
    };
    for e in &mut step.expect {
        if let Expect::Once(text) = e
            && let Some(path) = text
                .strip_prefix("Instructions from: ")
                .or_else(|| text.strip_prefix("Additional instructions from: "))
            && native.contains(&path)
        {
            *e = Expect::Absent(format!("structions from: {path}"));
        }
    }
}

/// What Copilot CLI, pi and opencode load themselves in a step.
type Loads<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str]);

/// The chain only: the same files for the three.
fn chain<'a>(files: &'a [&'a str]) -> Loads<'a> {
    (files, files, files)
}

fn start_files() -> Vec<(String, String)> {
    vec![
        f("home/.dsh/AGENTS.md", instr("E2E-HOME-V1")),
        f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
        f("ws/a/AGENTS.md", instr("E2E-A-V1")),
        f("ws/a/f.txt", "plain file in a\n"),
    ]
}

fn start_root(agent: Agent) -> Result<Plan, String> {
    let mut s = step(
        "start",
        "Hello [p:t1] [mock:text]",
        vec![
            once("E2E-HOME-V1"),
            once("E2E-ROOT-V1"),
            absent("E2E-A-V1"),
            once("Instructions from: ~/.dsh/AGENTS.md"),
            once("Instructions from: AGENTS.md"),
            once(INTRO),
        ],
    );
    own_loads(agent, &mut s, chain(&["AGENTS.md"]));
    Ok(plan(start_files(), ".", vec![s]))
}

fn start_sub(agent: Agent) -> Result<Plan, String> {
    let mut s = step(
        "start",
        "Hello [p:t1] [mock:text]",
        vec![
            once("E2E-HOME-V1"),
            once("E2E-ROOT-V1"),
            once("E2E-A-V1"),
            once("Instructions from: a/AGENTS.md"),
            once(INTRO),
        ],
    );
    own_loads(agent, &mut s, chain(&["AGENTS.md", "a/AGENTS.md"]));
    Ok(plan(start_files(), "a", vec![s]))
}

fn read_deep(agent: Agent) -> Result<Plan, String> {
    let files = vec![
        f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
        f("ws/x/AGENTS.md", instr("E2E-X-V1")),
        f("ws/x/y/z/AGENTS.md", instr("E2E-XYZ-V1")),
        f("ws/x/y/z/file.txt", "plain file deep below\n"),
    ];
    let expect = if reads_touch(agent) {
        vec![
            once("E2E-ROOT-V1"),
            once("E2E-X-V1"),
            once("E2E-XYZ-V1"),
            once("Additional instructions from: x/AGENTS.md"),
            once("Additional instructions from: x/y/z/AGENTS.md"),
        ]
    } else {
        vec![
            once("E2E-ROOT-V1"),
            absent("E2E-X-V1"),
            absent("E2E-XYZ-V1"),
        ]
    };
    let mut s = step("read", "Read it [p:t1] [mock:read=x/y/z/file.txt]", expect);
    let read = ["x/AGENTS.md", "x/y/z/AGENTS.md"];
    own_loads(agent, &mut s, (&read, &[], &read));
    Ok(plan(files, ".", vec![s]))
}

fn write(_: Agent) -> Result<Plan, String> {
    let mut s = step(
        "write",
        "Create a file [p:t1] [mock:write=w/new.txt]",
        vec![
            once("E2E-ROOT-V1"),
            once("E2E-W-V1"),
            once("Additional instructions from: w/AGENTS.md"),
        ],
    );
    s.file_contains = vec![("ws/w/new.txt".into(), WRITE_CONTENT.trim().into())];
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/w/AGENTS.md", instr("E2E-W-V1")),
        ],
        ".",
        vec![s],
    ))
}

/// Claude Code and Qwen Code refuse an edit of a file not read in the
/// session (Qwen: "has not been read in this session. Use the read_file tool
/// first", measured).
fn edits_need_a_read(agent: Agent) -> bool {
    // opencode too: "You must read file … before overwriting it"
    // (its edit tool's own check).
    matches!(agent, Agent::Claude | Agent::Qwen | Agent::Opencode)
}

fn edit(agent: Agent) -> Result<Plan, String> {
    // Where an edit needs a read first, the directory is touched by the
    // read and the case proves the edit adds no second copy.
    let prompt = if edits_need_a_read(agent) {
        "Edit it [p:t1] [mock:read=e/f.txt] [mock:edit=e/f.txt]"
    } else {
        "Edit it [p:t1] [mock:edit=e/f.txt]"
    };
    let mut s = step(
        "edit",
        prompt,
        vec![
            once("E2E-ROOT-V1"),
            once("E2E-E-V1"),
            once("Additional instructions from: e/AGENTS.md"),
        ],
    );
    s.file_contains = vec![("ws/e/f.txt".into(), EDIT_AFTER.into())];
    // opencode's read attaches the directory's file itself.
    own_loads(agent, &mut s, (&[], &[], &["e/AGENTS.md"]));
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/e/AGENTS.md", instr("E2E-E-V1")),
            f("ws/e/f.txt", format!("{EDIT_BEFORE}\n")),
        ],
        ".",
        vec![s],
    ))
}

fn external_edit(agent: Agent) -> Result<Plan, String> {
    let mut second = step(
        "after-edit",
        "Again [p:t2] [mock:text]",
        vec![once("E2E-ROOT-V2")],
    );
    if keeps_history_on_resume(agent) {
        // History keeps the old version; no second full baseline.
        second.expect.extend([
            once("Updated instructions from: AGENTS.md"),
            once("E2E-ROOT-V1"),
            once(INTRO),
            absent(SUPERSEDE),
        ]);
    } else if agent.native_kept() {
        // Copilot: its own system prompt, rebuilt by the resuming process,
        // holds V2; the adapter has nothing to give (no file Copilot lacks).
        second.expect.extend([
            absent("E2E-ROOT-V1"),
            absent("structions from: AGENTS.md"),
            Expect::AtMostOnce(INTRO.into()),
            Expect::AtMostOnce(SUPERSEDE.into()),
        ]);
    } else if replaces_start_on_resume(agent) {
        // V1 was only in the first process's session-start context.
        second.expect.extend([
            once("Instructions from: AGENTS.md"),
            absent("E2E-ROOT-V1"),
            once(INTRO),
            Expect::AtMostOnce(SUPERSEDE.into()),
        ]);
    } else {
        gemini_request_baseline(&mut second, &["E2E-ROOT-V2"], &["E2E-ROOT-V1"]);
    }
    second.before = vec![Change::Write("ws/AGENTS.md".into(), instr("E2E-ROOT-V2"))];
    Ok(plan(
        vec![f("ws/AGENTS.md", instr("E2E-ROOT-V1"))],
        ".",
        vec![
            step(
                "first",
                "Hello [p:t1] [mock:text]",
                vec![once("E2E-ROOT-V1")],
            ),
            second,
        ],
    ))
}

fn offline_resume(agent: Agent) -> Result<Plan, String> {
    // a/ becomes known by a touch (Claude, Gemini) or by being the cwd (Codex).
    let (cwd, first) = if reads_touch(agent) {
        (
            ".",
            step(
                "first",
                "Look [p:t1] [mock:read=a/f.txt]",
                vec![once("E2E-A-V1")],
            ),
        )
    } else {
        (
            "a",
            step("first", "Look [p:t1] [mock:text]", vec![once("E2E-A-V1")]),
        )
    };
    let mut resume = step(
        "resume",
        "Back again [p:t2] [mock:text]",
        vec![once("E2E-ROOT-V2")],
    );
    if keeps_history_on_resume(agent) {
        resume.expect.extend([
            once("Instructions removed: a/AGENTS.md"),
            once("Updated instructions from: AGENTS.md"),
            // Nothing lost: the unchanged user-global file is still seen once.
            once("E2E-HOME-V1"),
            once("E2E-ROOT-V1"),
            once("E2E-A-V1"),
            once(INTRO),
            absent(SUPERSEDE),
        ]);
    } else if agent.in_process() {
        // pi and opencode: the root file is the agent's own, read again by
        // the resuming process (pi) or for every request (opencode), so V2
        // only; a/AGENTS.md came with the read (the extension's, or
        // opencode's own reminder) and the tool result keeps it, so the
        // model must be told it is gone; the first baseline (the
        // user-global file) stays in the history, once.
        resume.expect.extend([
            once("E2E-HOME-V1"),
            absent("E2E-ROOT-V1"),
            once("E2E-A-V1"),
            once("Instructions removed: a/AGENTS.md"),
            absent("structions from: AGENTS.md"),
            once(INTRO),
        ]);
    } else if agent.native_kept() {
        // Copilot: a/AGENTS.md came in its own transient message after the
        // read and is gone (and removed); the root in its rebuilt system
        // prompt; the user-global file from the adapter's new baseline.
        resume.expect.extend([
            once("E2E-HOME-V1"),
            absent("E2E-ROOT-V1"),
            absent("E2E-A-V1"),
            once("Instructions from: ~/.dsh/AGENTS.md"),
            absent("structions from: AGENTS.md"),
            once(INTRO),
        ]);
    } else if replaces_start_on_resume(agent) {
        resume.expect.extend([
            once("E2E-HOME-V1"),
            // The old root was in the replaced session-start context only.
            absent("E2E-ROOT-V1"),
            // a/AGENTS.md came with the read: the tool result keeps it, so
            // the new baseline must tell the model it no longer applies.
            once("E2E-A-V1"),
            Expect::AnyOf(vec![
                SUPERSEDE.into(),
                "Instructions removed: a/AGENTS.md".into(),
            ]),
            once(INTRO),
        ]);
    } else {
        gemini_request_baseline(
            &mut resume,
            &["E2E-HOME-V1", "E2E-ROOT-V2"],
            &["E2E-ROOT-V1"],
        );
        // The removed file is in no request any more: nothing of an earlier
        // composition stays in Gemini's history.
        resume.expect.push(absent("E2E-A-V1"));
    }
    resume.before = vec![
        Change::Write("ws/AGENTS.md".into(), instr("E2E-ROOT-V2")),
        Change::Remove("ws/a/AGENTS.md".into()),
    ];
    Ok(plan(start_files(), cwd, vec![first, resume]))
}

fn parallel(agent: Agent) -> Result<Plan, String> {
    let expect = if reads_touch(agent) {
        vec![
            once("E2E-P-V1"),
            once("E2E-Q-V1"),
            once("Additional instructions from: p/AGENTS.md"),
            once("Additional instructions from: q/AGENTS.md"),
        ]
    } else {
        vec![absent("E2E-P-V1"), absent("E2E-Q-V1")]
    };
    let mut e = expect;
    e.push(once("E2E-ROOT-V1"));
    let mut s = step("parallel", "Both [p:t1] [mock:read=p/f.txt,q/f.txt]", e);
    let read = ["p/AGENTS.md", "q/AGENTS.md"];
    own_loads(agent, &mut s, (&read, &[], &read));
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/p/AGENTS.md", instr("E2E-P-V1")),
            f("ws/q/AGENTS.md", instr("E2E-Q-V1")),
            f("ws/p/f.txt", "plain p\n"),
            f("ws/q/f.txt", "plain q\n"),
        ],
        ".",
        vec![s],
    ))
}

fn compaction(agent: Agent) -> Result<Plan, String> {
    let mut compact = match agent {
        Agent::Claude => step("compact", "/compact", Vec::new()),
        // Codex compacts mid-turn once the reported usage passes
        // model_auto_compact_token_limit, so the turn needs a second call.
        Agent::Codex => step(
            "compact",
            "Big [p:t2] [mock:usage=150000] [mock:read=x/f.txt]",
            Vec::new(),
        ),
        // Over compressionThreshold (0.5) of the 1M window; the check runs
        // before every model call.
        Agent::Gemini => step(
            "compact",
            "Big [p:t2] [mock:usage=900000] [mock:read=x/f.txt]",
            Vec::new(),
        ),
        // Manual compaction: Copilot CLI has no post-compaction event and
        // Qwen Code's SessionStart(compact) context never arrived
        // (measured), so the next process's turn is what is checked.
        Agent::Copilot => step("compact", "/compact", Vec::new()),
        Agent::Qwen => step("compact", "/compress", Vec::new()),
        // A person's `/compact`: pi's RPC command, opencode's summarize
        // endpoint (`inproc.rs`); the next process's turn is checked.
        Agent::Pi | Agent::Opencode => step("compact", "/compact", Vec::new()),
        // Cline runs its own cases only (`cline.rs`), `/compact` among them.
        Agent::Cline => step("compact", "/compact", Vec::new()),
    };
    // The event itself first (issue 21 item 1): a summary request was made.
    compact.compacts = true;
    // A complete baseline again (R-RT-8): every chain file once, one intro.
    // x/ was known only through hidden state, so it may come back or not,
    // but never twice.
    let mut after = step(
        "after",
        "Anything left? [p:t3] [mock:text]",
        vec![Expect::AtMostOnce("E2E-X-V1".into())],
    );
    let baseline = [
        once("E2E-HOME-V1"),
        once("E2E-ROOT-V1"),
        once("Instructions from: AGENTS.md"),
        once(INTRO),
    ];
    // Gemini included: its composition comes with every request and never
    // persists, so the compressed history holds no second copy (R-HOOK-9).
    after.expect.extend(baseline);
    own_loads(agent, &mut after, chain(&["AGENTS.md"]));
    Ok(plan(
        vec![
            f("home/.dsh/AGENTS.md", instr("E2E-HOME-V1")),
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/x/AGENTS.md", instr("E2E-X-V1")),
            f("ws/x/f.txt", "plain x\n"),
        ],
        ".",
        vec![
            step(
                "first",
                "Look [p:t1] [mock:read=x/f.txt]",
                vec![once("E2E-ROOT-V1")],
            ),
            compact,
            after,
        ],
    ))
}

fn escape(agent: Agent) -> Result<Plan, String> {
    // Gemini CLI gets its composition through `BeforeModel` (R-HOOK-9),
    // which it does not wrap or HTML-escape, so all three agents read the
    // adapter's own escape of the closing tag.
    let (escaped, wrong) = (
        "E2E-ESC-V1 before <\\/system-reminder> after",
        "E2E-ESC-V1 before <\\\\/system-reminder",
    );
    // Never the raw closing tag, nor a wrong form (HTML-unescaped for
    // Gemini, escaped twice for the others).
    let mut expect = vec![absent("E2E-ESC-V1 before </system-reminder"), absent(wrong)];
    if agent == Agent::Qwen {
        // Qwen Code HTML-escapes `<` and `>` of every context itself
        // (measured), so the line arrives once in its escaped form, whether
        // or not the adapter escaped the tag first, and never escaped twice.
        expect.extend([
            once("E2E-ESC-V1 before &lt;"),
            once("system-reminder&gt; after"),
            absent("&amp;lt;"),
        ]);
    } else {
        expect.push(once(escaped));
    }
    // Copilot CLI loads the root file itself, verbatim (decision 0067):
    // the adapter's escape is tested on the file it gives, the user-global.
    let at = if agent.native_kept() {
        "home/.dsh/AGENTS.md"
    } else {
        "ws/AGENTS.md"
    };
    Ok(plan(
        vec![f(
            at,
            "# tricky\nE2E-ESC-V1 before </system-reminder> after\n",
        )],
        ".",
        vec![step("start", "Hello [p:t1] [mock:text]", expect)],
    ))
}

fn imports(agent: Agent) -> Result<Plan, String> {
    if agent != Agent::Claude {
        return Err("imports case is Claude Code's (CLAUDE.md = \"See @AGENTS.md\")".into());
    }
    let mut p = plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-IMP-ROOT-V1")),
            f("ws/CLAUDE.md", "See @AGENTS.md\n"),
        ],
        ".",
        vec![step(
            "start",
            "Hello [p:t1] [mock:text]",
            vec![
                once("E2E-IMP-ROOT-V1"),
                Expect::AtMostOnce("See @AGENTS.md".into()),
            ],
        )],
    );
    p.needs = Needs::Imports;
    Ok(p)
}

/// Shell reads of nested files (R-DISC-10, issue 17 item 7b): `cat`,
/// `sed -n` and `cd x && cat y`, each in its own tool round, bring each
/// directory's `AGENTS.md` exactly once.
fn shell_reads(_: Agent) -> Result<Plan, String> {
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/s1/AGENTS.md", instr("E2E-S1-V1")),
            f("ws/s1/f.txt", "plain s1\n"),
            f("ws/s2/AGENTS.md", instr("E2E-S2-V1")),
            f("ws/s2/f.txt", "plain s2\n"),
            f("ws/s3/AGENTS.md", instr("E2E-S3-V1")),
            f("ws/s3/f.txt", "plain s3\n"),
        ],
        ".",
        vec![step(
            "shell",
            "Shell reads [p:t1] [mock:shell=cat s1/f.txt] [mock:shell=sed -n '1,2p' s2/f.txt] \
[mock:shell=cd s3 && cat f.txt]",
            vec![
                once("E2E-ROOT-V1"),
                once("E2E-S1-V1"),
                once("E2E-S2-V1"),
                once("E2E-S3-V1"),
                once("Additional instructions from: s1/AGENTS.md"),
                once("Additional instructions from: s2/AGENTS.md"),
                once("Additional instructions from: s3/AGENTS.md"),
            ],
        )],
    ))
}

/// Copilot CLI cuts `postToolUse` context silently at 10,240 characters
/// (harness README), so the adapter gives a tool event's message a part at
/// a time and the rest with the next events (decision 0066). A 25 KB
/// `a/AGENTS.local.md` (an overlay: the adapter's, Copilot does not load
/// it) makes three parts; touched by a `view`, then two more `view`s in the
/// same turn (measured: one part per tool event, so after two views the
/// file stood at line 185 of 290 and the last part waited for the next
/// event): the turn's last request holds the overlay whole, its lines once
/// and in order, its heading once.
fn copilot_cut(_: Agent) -> Result<Plan, String> {
    let overlay = super::layouts::content("ws/a/AGENTS.local.md", 25_000);
    // Three `create`s: `view` is no touch for Copilot, which attaches the
    // viewed directory's own files itself (decision 0073); after a create
    // it attaches nothing, so `a/AGENTS.md` is the adapter's too.
    let mut s = step(
        "cut",
        "Write thrice [p:t1] [mock:write=a/f.txt] [mock:write=a/g.txt] [mock:write=a/h.txt]",
        vec![
            Expect::Whole(overlay.clone()),
            once("E2E-A-V1"),
            once("Additional instructions from: a/AGENTS.md\n"),
            once("Additional instructions from: a/AGENTS.local.md\n"),
            once("Workspace instructions, part 1 of 3."),
        ],
    );
    s.expect_turn = vec![Expect::Whole(overlay.clone())];
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/a/AGENTS.md", instr("E2E-A-V1")),
            f("ws/a/AGENTS.local.md", overlay),
        ],
        ".",
        vec![s],
    ))
}

/// Gemini CLI through `BeforeModel` (R-HOOK-9, issue 17 item 7c): a
/// five-prompt session with a read, a model edit, an external edit of the
/// root file, a compression and a turn after it. Every main-chat request
/// holds each current file exactly once and never the old root version.
/// Copilot's own `copilot` rules (decision 0073): the always-on
/// `.github/copilot-instructions.md` and `applyTo: "**"` file are Copilot's
/// (once, in its system prompt, without the adapter's heading); the
/// `applyTo: "db/**"` file, which Copilot attaches only after a `view`,
/// arrives once with the adapter's heading on a shell read and on a
/// `create` of a matching file, and stays.
fn copilot_rules(_: Agent) -> Result<Plan, String> {
    let scoped =
        |glob: &str, marker: &str| format!("---\napplyTo: \"{glob}\"\n---\n{}", instr(marker));
    let start = step(
        "start",
        "Hello [p:t1] [mock:text]",
        vec![
            once("E2E-CI-ALL"),
            once("E2E-CI-EVERY"),
            absent("structions from: .github/copilot-instructions.md"),
            absent("structions from: .github/instructions/every.instructions.md"),
            absent("E2E-CI-DB-V1"),
            absent("E2E-CI-WEB-V1"),
        ],
    );
    let shell = step(
        "shell",
        "Read the schema [p:t2] [mock:shell=cat db/schema.sql]",
        vec![
            once("E2E-CI-ALL"),
            once("E2E-CI-DB-V1"),
            once("Additional instructions from: .github/instructions/db.instructions.md"),
            once("files matching `db/**`"),
            absent("E2E-CI-WEB-V1"),
        ],
    );
    let create = step(
        "create",
        "Write a page [p:t3] [mock:write=web/new.txt]",
        vec![
            once("E2E-CI-DB-V1"),
            once("E2E-CI-WEB-V1"),
            once("Additional instructions from: .github/instructions/web.instructions.md"),
        ],
    );
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/.github/copilot-instructions.md", instr("E2E-CI-ALL")),
            f(
                "ws/.github/instructions/every.instructions.md",
                scoped("**", "E2E-CI-EVERY"),
            ),
            f(
                "ws/.github/instructions/db.instructions.md",
                scoped("db/**", "E2E-CI-DB-V1"),
            ),
            f(
                "ws/.github/instructions/web.instructions.md",
                scoped("web/**", "E2E-CI-WEB-V1"),
            ),
            f("ws/db/schema.sql", "create table t (id int);\n"),
            f("ws/web/index.txt", "plain web\n"),
        ],
        ".",
        vec![start, shell, create],
    ))
}

fn gemini_session(_: Agent) -> Result<Plan, String> {
    let base = |root: &str| vec![once("E2E-HOME-V1"), once(root)];
    let mut p1 = step(
        "read",
        "Look [p:t1] [mock:read=n/f.txt]",
        vec![once("E2E-N-V1")],
    );
    p1.expect_each = base("E2E-ROOT-V1");
    let mut p2 = step(
        "edit",
        "Change it [p:t2] [mock:edit=e/f.txt]",
        vec![once("E2E-E-V1")],
    );
    p2.expect_each = base("E2E-ROOT-V1");
    p2.expect_each.push(once("E2E-N-V1"));
    p2.file_contains = vec![("ws/e/f.txt".into(), EDIT_AFTER.into())];
    let current = || {
        let mut v = base("E2E-ROOT-V2");
        v.extend([once("E2E-N-V1"), once("E2E-E-V1"), absent("E2E-ROOT-V1")]);
        v
    };
    let mut p3 = step("after-edit", "Again [p:t3] [mock:text]", Vec::new());
    p3.before = vec![Change::Write("ws/AGENTS.md".into(), instr("E2E-ROOT-V2"))];
    p3.expect_each = current();
    let mut p4 = step(
        "compress",
        "Big [p:t4] [mock:usage=900000] [mock:read=n/f.txt]",
        Vec::new(),
    );
    p4.compacts = true;
    p4.expect_each = current();
    let mut p5 = step("after", "Anything left? [p:t5] [mock:text]", Vec::new());
    p5.expect_each = current();
    Ok(plan(
        vec![
            f("home/.dsh/AGENTS.md", instr("E2E-HOME-V1")),
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/n/AGENTS.md", instr("E2E-N-V1")),
            f("ws/n/f.txt", "plain n\n"),
            f("ws/e/AGENTS.md", instr("E2E-E-V1")),
            f("ws/e/f.txt", format!("{EDIT_BEFORE}\n")),
        ],
        ".",
        vec![p1, p2, p3, p4, p5],
    ))
}

/// Plumbing check with the marker hook (`--hook marker`): the mock, the
/// agent's offline config, hook registration and native loading switched off.
fn plumbing(agent: Agent) -> Result<Plan, String> {
    let (start, submit, post) = match agent {
        Agent::Gemini => (
            "HOOK-MARKER-SessionStart",
            "HOOK-MARKER-BeforeAgent",
            "HOOK-MARKER-AfterTool",
        ),
        Agent::Copilot => (
            "HOOK-MARKER-sessionStart",
            "HOOK-MARKER-userPromptSubmitted",
            "HOOK-MARKER-postToolUse",
        ),
        _ => (
            "HOOK-MARKER-SessionStart",
            "HOOK-MARKER-UserPromptSubmit",
            "HOOK-MARKER-PostToolUse",
        ),
    };
    // The resumed step checks the write and edit tool calls of every agent
    // (Claude Code edits only what it has read).
    let tools = if edits_need_a_read(agent) {
        "Change [p:t2] [mock:read=s/e.txt] [mock:edit=s/e.txt] [mock:write=s/new.txt]"
    } else {
        "Change [p:t2] [mock:edit=s/e.txt] [mock:write=s/new.txt]"
    };
    let mut second = step(
        "write-edit",
        tools,
        vec![
            Expect::Present(submit.into()),
            Expect::Present(post.into()),
            absent("E2E-ROOT-V1"),
        ],
    );
    second.file_contains = vec![
        ("ws/s/e.txt".into(), EDIT_AFTER.into()),
        ("ws/s/new.txt".into(), WRITE_CONTENT.trim().into()),
    ];
    Ok(plan(
        vec![
            f("ws/AGENTS.md", instr("E2E-ROOT-V1")),
            f("ws/s/f.txt", "plain s\n"),
            f("ws/s/e.txt", format!("{EDIT_BEFORE}\n")),
        ],
        ".",
        vec![
            step(
                "start",
                "Read [p:t1] [mock:read=s/f.txt]",
                vec![
                    Expect::Present(start.into()),
                    Expect::Present(submit.into()),
                    Expect::Present(post.into()),
                    // Native loading is off and the marker hook delivers nothing.
                    absent("E2E-ROOT-V1"),
                ],
            ),
            second,
        ],
    ))
}

/// The product cases, in run order.
pub(crate) const CASES: &[Case] = &[
    Case {
        name: "start-root",
        about: "baseline at start: user-global + root file, cwd = root",
        plan: start_root,
        only: None,
        layout: None,
    },
    Case {
        name: "start-sub",
        about: "baseline at start: the chain root → a/, cwd = ws/a",
        plan: start_sub,
        only: None,
        layout: None,
    },
    Case {
        name: "read-deep",
        about: "a read deep below cwd sets x/ and x/y/z/ (Codex: its cat is a shell touch)",
        plan: read_deep,
        only: None,
        layout: None,
    },
    Case {
        name: "write",
        about: "a write into a new directory sets its AGENTS.md",
        plan: write,
        only: None,
        layout: None,
    },
    Case {
        name: "edit",
        about: "an edit in a new directory sets its AGENTS.md",
        plan: edit,
        only: None,
        layout: None,
    },
    Case {
        name: "external-edit",
        about: "AGENTS.md edited between prompts → replace text",
        plan: external_edit,
        only: None,
        layout: None,
    },
    Case {
        name: "offline-resume",
        about: "edit + removal while no agent runs, then resume → replace/remove, no second baseline",
        plan: offline_resume,
        only: None,
        layout: None,
    },
    Case {
        name: "parallel",
        about: "parallel reads of two new directories: both set once",
        plan: parallel,
        only: None,
        layout: None,
    },
    Case {
        name: "shell-reads",
        about: "cat, sed -n and cd x && cat y of nested files: each AGENTS.md once",
        plan: shell_reads,
        only: None,
        layout: None,
    },
    Case {
        name: "compaction",
        about: "after compaction the next turn has a complete baseline again",
        plan: compaction,
        only: None,
        layout: None,
    },
    Case {
        name: "gemini-session",
        about: "Gemini: 5 prompts, edit, resume, compression: every request each current file once",
        plan: gemini_session,
        only: Some(Agent::Gemini),
        layout: None,
    },
    Case {
        name: "escape",
        about: "</system-reminder> in a file reaches the model escaped",
        plan: escape,
        only: None,
        layout: None,
    },
    Case {
        name: "copilot-rules",
        about: "Copilot: its always-on instructions stay its own; applyTo ones arrive on a shell read and a create, once",
        plan: copilot_rules,
        only: Some(Agent::Copilot),
        layout: None,
    },
    Case {
        name: "copilot-cut",
        about: "Copilot: a 25 KB overlay touched by a view, cut at 10,240: whole and in order by the turn's end",
        plan: copilot_cut,
        only: Some(Agent::Copilot),
        layout: None,
    },
    Case {
        name: "imports",
        about: "Claude: CLAUDE.md \"See @AGENTS.md\" → AGENTS.md once",
        plan: imports,
        only: Some(Agent::Claude),
        layout: None,
    },
];

fn compared(_: Agent) -> Result<Plan, String> {
    Ok(plan(Vec::new(), ".", Vec::new()))
}

/// The native-vs-hooked comparisons (issue 17 item 7a; `compare.rs`).
pub(crate) const COMPARED: &[Case] = &[
    Case {
        name: "native-sentry",
        about: "sentry-like layout: every file the agent loads natively arrives whole, once, in order",
        plan: compared,
        only: None,
        layout: Some(&super::layouts::SENTRY),
    },
    Case {
        name: "native-airflow",
        about: "airflow-like layout: every file the agent loads natively arrives whole, once, in order",
        plan: compared,
        only: None,
        layout: Some(&super::layouts::AIRFLOW),
    },
    Case {
        name: "native-big-root",
        about: "34 KB root AGENTS.md (openai-agents-python-like): whole, in order, in at least 4 parts",
        plan: compared,
        only: None,
        layout: Some(&super::layouts::BIG_ROOT),
    },
    Case {
        name: "claude-ancestor",
        about: "a CLAUDE.md one level above the repository: with the hook as natively, broadest first",
        plan: compared,
        only: Some(Agent::Claude),
        layout: Some(&super::layouts::ANCESTOR),
    },
    Case {
        name: "claude-user",
        about: "~/.claude/CLAUDE.md reaches the model once with the hook, as natively; preset = native",
        plan: compared,
        only: Some(Agent::Claude),
        layout: Some(&super::layouts::CLAUDE_USER),
    },
    Case {
        name: "claude-mixed",
        about: "CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md over an AGENTS.md: as natively; preset = native",
        plan: compared,
        only: Some(Agent::Claude),
        layout: Some(&super::layouts::CLAUDE_MIXED),
    },
    Case {
        name: "parts-order",
        about: "a message of 5 parts of unequal work is read in the composed order",
        plan: compared,
        only: None,
        layout: Some(&super::layouts::PARTS),
    },
];

/// The plumbing case (marker hook).
pub(crate) const PLUMBING: Case = Case {
    name: "plumbing",
    about: "marker hook: offline agent, hooks fire, native loading off",
    plan: plumbing,
    only: None,
    layout: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2e::script::{ops, prompt_tag};

    #[test]
    fn every_plan_is_well_formed() {
        let mut names = std::collections::HashSet::new();
        for case in CASES
            .iter()
            .chain(crate::e2e::rules::CASES)
            .chain([&PLUMBING])
        {
            assert!(names.insert(case.name), "duplicate case {}", case.name);
            for agent in Agent::ALL {
                let Ok(p) = (case.plan)(agent) else { continue };
                assert!(!p.steps.is_empty());
                for (path, _) in &p.files {
                    assert!(
                        path.starts_with("ws/") || path.starts_with("home/"),
                        "{path}"
                    );
                }
                for s in &p.steps {
                    if s.prompt != "/compact" && s.prompt != "/compress" {
                        assert!(
                            prompt_tag(&s.prompt).is_some(),
                            "{}: untagged prompt",
                            case.name
                        );
                    }
                    for op in ops(&s.prompt) {
                        let paths = match op {
                            crate::e2e::script::Op::Read(p) => p,
                            crate::e2e::script::Op::Write(p) | crate::e2e::script::Op::Edit(p) => {
                                vec![p]
                            }
                            crate::e2e::script::Op::Shell(_) => Vec::new(),
                        };
                        for path in paths {
                            assert!(
                                !path.starts_with('/'),
                                "{}: {path} must be ws-relative",
                                case.name
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn markers_are_unique_per_file_version() {
        // Each marker names one file version: the same marker in two files
        // would make "exactly once" meaningless.
        for case in CASES {
            for agent in Agent::ALL {
                let Ok(p) = (case.plan)(agent) else { continue };
                let mut seen = std::collections::HashMap::new();
                let mut all: Vec<(String, String)> = p.files.clone();
                for s in &p.steps {
                    for c in &s.before {
                        if let Change::Write(path, content) = c {
                            all.push((path.clone(), content.clone()));
                        }
                    }
                }
                for (path, content) in all {
                    for word in content.split(|c: char| c.is_whitespace() || c == ':') {
                        if word.starts_with("E2E-")
                            && word.contains("-V")
                            && let Some(prev) = seen.insert(word.to_owned(), path.clone())
                        {
                            assert_eq!(prev, path, "{}: marker {word} in two files", case.name);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn codex_shell_reads_expect_touch_sets_like_the_other_agents() {
        for agent in Agent::ALL {
            let p = read_deep(agent).unwrap();
            assert!(p.steps[0].expect.contains(&Expect::Once("E2E-X-V1".into())));
        }
    }

    /// Decision 0067: where Copilot loads a file itself, the adapter's
    /// heading for it must be absent; the file's marker still counts once,
    /// and what Copilot lacks keeps its heading.
    #[test]
    fn copilots_own_files_lose_only_their_adapter_headings() {
        let copilot = start_sub(Agent::Copilot).unwrap();
        let qwen = start_sub(Agent::Qwen).unwrap();
        let e = &copilot.steps[0].expect;
        assert!(e.contains(&Expect::Absent("structions from: a/AGENTS.md".into())));
        assert!(e.contains(&Expect::Once("E2E-A-V1".into())));
        assert!(
            qwen.steps[0]
                .expect
                .contains(&once("Instructions from: a/AGENTS.md"))
        );
        let root = start_root(Agent::Copilot).unwrap();
        assert!(
            root.steps[0]
                .expect
                .contains(&once("Instructions from: ~/.dsh/AGENTS.md"))
        );
        // Copilot does not load a written file's directory: the adapter must.
        let w = write(Agent::Copilot).unwrap();
        assert!(
            w.steps[0]
                .expect
                .contains(&once("Additional instructions from: w/AGENTS.md"))
        );
    }

    #[test]
    fn the_parts_comparisons_run_for_the_hook_agents_only() {
        for name in PARTS_ONLY {
            let case = COMPARED.iter().find(|c| c.name == name).unwrap();
            assert!(case.runs_for(Agent::Codex) && case.runs_for(Agent::Qwen));
            assert!(!case.runs_for(Agent::Pi) && !case.runs_for(Agent::Opencode));
        }
        let sentry = COMPARED.iter().find(|c| c.name == "native-sentry").unwrap();
        assert!(Agent::ALL.iter().all(|a| sentry.runs_for(*a)));
        let imports = CASES.iter().find(|c| c.name == "imports").unwrap();
        assert!(imports.runs_for(Agent::Claude) && !imports.runs_for(Agent::Pi));
    }

    /// Decision 0088: pi loads no nested file, opencode those of a `read`:
    /// the headings for what each loads itself must be absent, the rest
    /// stay expected.
    #[test]
    fn pi_and_opencode_lose_the_headings_of_what_each_loads_itself() {
        let heading = |p: &Plan, what: &str| p.steps[0].expect.contains(&once(what));
        let gone = |p: &Plan, path: &str| {
            p.steps[0]
                .expect
                .contains(&Expect::Absent(format!("structions from: {path}")))
        };
        let pi = read_deep(Agent::Pi).unwrap();
        let oc = read_deep(Agent::Opencode).unwrap();
        assert!(heading(&pi, "Additional instructions from: x/AGENTS.md"));
        assert!(gone(&oc, "x/AGENTS.md") && gone(&oc, "x/y/z/AGENTS.md"));
        for agent in [Agent::Pi, Agent::Opencode] {
            let p = start_root(agent).unwrap();
            assert!(gone(&p, "AGENTS.md"));
            assert!(heading(&p, "Instructions from: ~/.dsh/AGENTS.md"));
            let w = write(agent).unwrap();
            assert!(heading(&w, "Additional instructions from: w/AGENTS.md"));
        }
        assert!(heading(
            &edit(Agent::Pi).unwrap(),
            "Additional instructions from: e/AGENTS.md"
        ));
        assert!(gone(&edit(Agent::Opencode).unwrap(), "e/AGENTS.md"));
    }

    #[test]
    fn compaction_steps_must_show_a_summary_request() {
        for agent in Agent::ALL {
            let p = compaction(agent).unwrap();
            assert_eq!(p.steps.iter().filter(|s| s.compacts).count(), 1);
        }
    }
}
