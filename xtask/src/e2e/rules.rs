//! Rules in the agents (issue 32 item 3, R-RULE-7): a monorepo that keeps
//! rules for several agents — Claude's `.claude/rules/` (an always-on rule,
//! path-scoped ones, a nested `pkg/.claude/rules/`), the user's
//! `~/.claude/rules/`, Cursor's `.cursor/rules/*.mdc` (`alwaysApply`,
//! `globs`, and a manual one), Copilot's `.github/copilot-instructions.md`
//! and `.github/instructions/*.instructions.md` (`applyTo`).
//!
//! Every rule's body is three lines unique in the layout
//! (`E2E-RULE-<ID>-V1 L<n>:`), so "arrived" means every line exactly once in
//! order ([`Expect::Lines`]), and "not yet" means its first line is absent.
//!
//! - `rules-codex`, `rules-gemini` (the hook installed with `--rules
//!   claude,cursor,copilot`): always-on rules at start; each path-scoped rule
//!   attached exactly once by the first shell read (`cat`) of a matching
//!   file, never before, never again on a second match; a non-matching read
//!   and the manual rule attach nothing. `rules-user-codex`,
//!   `rules-user-gemini`: the user's `~/.claude/rules/` rule at start.
//! - `claude-rules` (Claude Code): the same steps run natively (no hook)
//!   and with the hook installed, in the same e2e run; with the hook the
//!   model sees every rule Claude alone showed at every step. Where the
//!   installer takes `.claude/rules` over (its `claudeMdExcludes` names
//!   them, R-RULE-7) the hook must also attach the path-scoped rules on a
//!   `Bash cat`, on an `Edit`, and again after compaction, and no native
//!   copy may remain.

use std::fs;
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::agents::{self, Agent, Dirs, Installed, Session};
use super::assertions::{Expect, check_all, count, visible_text};
use super::scenarios::{Case, Plan, Step, absent, f, instr, once, plan, step};
use super::script::{EDIT_AFTER, EDIT_BEFORE, WRITE_CONTENT};

/// The formats the Codex and Gemini CLI hooks are given.
pub(crate) const FORMATS: [&str; 3] = ["claude", "cursor", "copilot"];

/// One rule file of the layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    /// Marker id: the lines are `E2E-RULE-<id>-V1 L<n>: …`.
    pub id: &'static str,
    /// Run-dir relative (`ws/…`, `home/…`).
    pub path: &'static str,
    /// Front matter (with its fences), or empty.
    pub front: &'static str,
    /// What it is, for reports.
    pub kind: &'static str,
}

impl Rule {
    /// The three body lines, each unique in the layout (the needles).
    pub(crate) fn lines(&self) -> Vec<String> {
        (1..=3)
            .map(|n| format!("E2E-RULE-{}-V1 L{n}:", self.id))
            .collect()
    }

    /// The file as written.
    pub(crate) fn content(&self) -> String {
        let [a, b, c] = [1, 2, 3].map(|n| format!("E2E-RULE-{}-V1 L{n}:", self.id));
        format!(
            "{}# {} rule\n{a} {} rule, first line.\n{b} keep to it where it applies.\n{c} last line of the rule.\n",
            self.front, self.kind, self.kind
        )
    }

    /// Whole, once, in order.
    fn whole(&self) -> Expect {
        Expect::Lines(self.lines())
    }

    /// Not there at all (its first line).
    fn not_yet(&self) -> Expect {
        absent(&self.lines()[0])
    }

    /// The display path (R-RULE-8).
    fn shown(&self) -> String {
        self.path
            .strip_prefix("ws/")
            .map(str::to_owned)
            .or_else(|| self.path.strip_prefix("home/").map(|p| format!("~/{p}")))
            .unwrap_or_else(|| self.path.to_owned())
    }
}

/// Claude: always on (no front matter).
pub(crate) const ALWAYS: Rule = Rule {
    id: "ALWAYS",
    path: "ws/.claude/rules/always.md",
    front: "",
    kind: "claude always-on",
};
/// Claude: path-scoped, two globs (the second must count too, Claude Code
/// issue 45587).
pub(crate) const API: Rule = Rule {
    id: "API",
    path: "ws/.claude/rules/api.md",
    front: "---\npaths:\n  - \"src/**/*.rs\"\n  - \"api/**/*.ts\"\n---\n",
    kind: "claude path-scoped",
};
/// Claude: path-scoped by a comma-separated string.
pub(crate) const SQL: Rule = Rule {
    id: "SQL",
    path: "ws/.claude/rules/sql.md",
    front: "---\npaths: \"**/*.sql\"\n---\n",
    kind: "claude path-scoped",
};
/// Claude: path-scoped, reached by an edit.
pub(crate) const TSX: Rule = Rule {
    id: "TSX",
    path: "ws/.claude/rules/web/tsx.md",
    front: "---\npaths:\n  - \"web/**/*.tsx\"\n---\n",
    kind: "claude path-scoped",
};
/// Claude: path-scoped, reached by `cd docs && cat …` (a shell read Claude
/// Code itself does not treat as a touch of the file, measured for nested
/// files in the harness).
pub(crate) const DOCS: Rule = Rule {
    id: "DOCS",
    path: "ws/.claude/rules/docs.md",
    front: "---\npaths: \"docs/**/*.md\"\n---\n",
    kind: "claude path-scoped",
};
/// Claude: nested, always on in `pkg/`.
pub(crate) const PKG: Rule = Rule {
    id: "PKG",
    path: "ws/pkg/.claude/rules/pkg.md",
    front: "",
    kind: "claude nested",
};
/// Claude: the user's own, always on.
pub(crate) const USER: Rule = Rule {
    id: "USER",
    path: "home/.claude/rules/user.md",
    front: "",
    kind: "claude user",
};
/// Cursor: `alwaysApply: true`.
pub(crate) const CSTYLE: Rule = Rule {
    id: "CSTYLE",
    path: "ws/.cursor/rules/style.mdc",
    front: "---\ndescription: house style\nalwaysApply: true\n---\n",
    kind: "cursor always-on",
};
/// Cursor: `globs`, written unquoted as Cursor writes them.
pub(crate) const CWEB: Rule = Rule {
    id: "CWEB",
    path: "ws/.cursor/rules/web.mdc",
    front: "---\ndescription: web pages\nglobs: web/**/*.tsx,web/**/*.css\nalwaysApply: false\n---\n",
    kind: "cursor path-scoped",
};
/// Cursor: neither field, manual (never loaded).
pub(crate) const CMANUAL: Rule = Rule {
    id: "CMANUAL",
    path: "ws/.cursor/rules/manual.mdc",
    front: "---\ndescription: only when asked for\n---\n",
    kind: "cursor manual",
};
/// Copilot's root file: always on.
pub(crate) const COPROOT: Rule = Rule {
    id: "COPROOT",
    path: "ws/.github/copilot-instructions.md",
    front: "",
    kind: "copilot always-on",
};
/// Copilot: `applyTo`.
pub(crate) const CODB: Rule = Rule {
    id: "CODB",
    path: "ws/.github/instructions/db.instructions.md",
    front: "---\napplyTo: \"db/**\"\n---\n",
    kind: "copilot path-scoped",
};

/// Every rule of the layout.
pub(crate) const ALL: [Rule; 12] = [
    ALWAYS, API, SQL, TSX, DOCS, PKG, USER, CSTYLE, CWEB, CMANUAL, COPROOT, CODB,
];

/// The rules of Claude's own format (what Claude Code reads itself).
pub(crate) const CLAUDE_FORMAT: [Rule; 7] = [ALWAYS, API, SQL, TSX, DOCS, PKG, USER];

/// The root instruction file (not a rule: the baseline the rules join).
const ROOT: &str = "E2E-RROOT-V1";

/// The layout: the rules, a root `AGENTS.md` and the files the steps touch.
pub(crate) fn files() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = ALL.iter().map(|r| f(r.path, r.content())).collect();
    v.extend([
        f("ws/AGENTS.md", instr(ROOT)),
        f("ws/api/README.md", "plain api readme\n"),
        f("ws/api/v1/x.ts", "export const x = 1;\n"),
        f("ws/api/v2/y.ts", "export const y = 2;\n"),
        f("ws/web/app.tsx", format!("// {EDIT_BEFORE}\n")),
        f("ws/db/schema.sql", "create table t (id int);\n"),
        f("ws/pkg/lib.txt", "plain pkg file\n"),
        f("ws/docs/guide.md", "plain guide\n"),
    ]);
    v
}

/// The line a path-scoped rule's section carries (R-RULE-5), up to `.`.
fn globs_line(globs: &[&str]) -> String {
    let g: Vec<String> = globs.iter().map(|g| format!("`{g}`")).collect();
    format!(
        "These instructions apply to files matching {} under `.`.",
        g.join(", ")
    )
}

/// The heading of a rule the hook attached by a touch, once: a `set` for
/// Codex (history keeps it). Gemini CLI gets the complete composition with
/// every request (R-HOOK-9): there a root rule is a baseline file
/// (`Instructions from:`), and a nested directory's rule is still a `set`
/// in the request of its touch, so either heading counts, once.
fn attached_heading(agent: Agent, rule: &Rule) -> Expect {
    once(&match agent {
        Agent::Gemini => format!("nstructions from: {}", rule.shown()),
        _ => format!("Additional instructions from: {}", rule.shown()),
    })
}

/// `rules-shell`: Codex and Gemini CLI with `rule_formats` on, shell reads.
fn rules_shell(agent: Agent) -> Result<Plan, String> {
    if agent == Agent::Claude {
        return Err("rules-shell is the Codex and Gemini CLI case (Claude: claude-rules)".into());
    }
    // At start: the root file and every always-on rule of the chain;
    // nothing path-scoped, nested or manual (the user's rule: `rules-user`).
    let mut start = vec![
        once(ROOT),
        ALWAYS.whole(),
        CSTYLE.whole(),
        COPROOT.whole(),
        once(&format!("Instructions from: {}", ALWAYS.shown())),
        once(&format!("Instructions from: {}", CSTYLE.shown())),
        once(&format!("Instructions from: {}", COPROOT.shown())),
        CMANUAL.not_yet(),
    ];
    let pending = |rules: &[Rule]| -> Vec<Expect> { rules.iter().map(Rule::not_yet).collect() };
    let mut s1 = step("start", "Hello [p:t1] [mock:text]", start.clone());
    s1.expect
        .extend(pending(&[API, SQL, TSX, DOCS, PKG, CWEB, CODB]));

    // A read that matches no glob attaches nothing.
    let mut s2 = step(
        "cat-nomatch",
        "Look [p:t2] [mock:shell=cat api/README.md]",
        Vec::new(),
    );
    s2.expect_each = start.clone();
    s2.expect_each
        .extend(pending(&[API, SQL, TSX, DOCS, PKG, CWEB, CODB]));

    // The second glob of API's matches: attached, whole, once, with its line.
    let mut s3 = step(
        "cat-api",
        "Look [p:t3] [mock:shell=cat api/v1/x.ts]",
        vec![
            API.whole(),
            attached_heading(agent, &API),
            once(&globs_line(&["src/**/*.rs", "api/**/*.ts"])),
        ],
    );
    s3.expect_each = start.clone();
    s3.expect_each
        .extend(pending(&[SQL, TSX, DOCS, PKG, CWEB, CODB]));
    start.push(API.whole());

    // Cursor's and Claude's rule for `web/**/*.tsx` attach together; a
    // second match of API's globs sends nothing again.
    let mut s4 = step(
        "cat-web",
        "Look [p:t4] [mock:shell=cat web/app.tsx] [mock:shell=cat api/v2/y.ts]",
        vec![
            CWEB.whole(),
            TSX.whole(),
            attached_heading(agent, &CWEB),
            attached_heading(agent, &TSX),
            once(&globs_line(&["web/**/*.tsx", "web/**/*.css"])),
        ],
    );
    s4.expect_each = start.clone();
    s4.expect_each.extend(pending(&[SQL, DOCS, PKG, CODB]));
    start.extend([CWEB.whole(), TSX.whole()]);

    // Copilot's `applyTo` and Claude's `**/*.sql`; then the nested rules
    // directory of `pkg/` (an always-on rule of a directory a touch
    // reconciles).
    let mut s5 = step(
        "cat-db-pkg",
        "Look [p:t5] [mock:shell=cat db/schema.sql] [mock:shell=cat pkg/lib.txt]",
        vec![
            CODB.whole(),
            SQL.whole(),
            PKG.whole(),
            attached_heading(agent, &CODB),
            attached_heading(agent, &SQL),
            attached_heading(agent, &PKG),
            once(&globs_line(&["db/**"])),
            CMANUAL.not_yet(),
            DOCS.not_yet(),
        ],
    );
    s5.expect_each = start.clone();
    start.extend([CODB.whole(), SQL.whole(), PKG.whole()]);
    // A read through `cd`: the path is resolved from the new directory.
    let mut s6 = step(
        "cd-cat-docs",
        "Look [p:t6] [mock:shell=cd docs && cat guide.md]",
        vec![
            DOCS.whole(),
            attached_heading(agent, &DOCS),
            CMANUAL.not_yet(),
        ],
    );
    s6.expect_each = start;
    let mut p = plan(files(), ".", vec![s1, s2, s3, s4, s5, s6]);
    p.rule_formats = FORMATS.to_vec();
    Ok(p)
}

/// `rules-user`: Codex and Gemini CLI with the `claude` format read the
/// user's `~/.claude/rules/` too (R-RULE-1), placed with the user files:
/// its always-on rule at start, once.
fn rules_user(agent: Agent) -> Result<Plan, String> {
    if agent == Agent::Claude {
        return Err("rules-user is the Codex and Gemini CLI case (Claude: claude-rules)".into());
    }
    let s = step(
        "start",
        "Hello [p:t1] [mock:text]",
        vec![
            once(ROOT),
            USER.whole(),
            once(&format!("Instructions from: {}", USER.shown())),
            ALWAYS.whole(),
        ],
    );
    let mut p = plan(files(), ".", vec![s]);
    p.rule_formats = FORMATS.to_vec();
    Ok(p)
}

/// One step of `claude-rules`: the prompt, what Claude alone must show (a
/// floor: a native run that shows less compares nothing), and what the
/// hook must show once it has taken `.claude/rules` over.
pub(crate) struct ClaudeStep {
    /// Prompt and file checks (its `expect` is left empty).
    pub step: Step,
    /// Rules Claude Code alone must show at this step (measured).
    pub native_floor: Vec<Rule>,
    /// Rules the hook must show whole at this step when it owns the rules.
    pub takeover: Vec<Rule>,
}

/// The Claude steps: start, a `Read`, a nested `Read`, a `Bash cat`, a
/// `Read`, `/compact`, then a `Write`, a `Bash cat` and a `Read` + `Edit`.
pub(crate) fn claude_steps() -> Vec<ClaudeStep> {
    let cs = |step: Step, native_floor: Vec<Rule>, takeover: Vec<Rule>| ClaudeStep {
        step,
        native_floor,
        takeover,
    };
    // Claude Code refuses an Edit of a file not read since the compaction
    // (measured: "not read yet"), so the Edit comes after a Read.
    let mut edit = step(
        "read-edit-after",
        "Change it [p:t8] [mock:read=web/app.tsx] [mock:edit=web/app.tsx]",
        Vec::new(),
    );
    edit.file_contains = vec![("ws/web/app.tsx".into(), EDIT_AFTER.into())];
    let mut write = step(
        "write-after",
        "Create it [p:t6] [mock:write=web/new.tsx]",
        Vec::new(),
    );
    write.file_contains = vec![("ws/web/new.tsx".into(), WRITE_CONTENT.trim().into())];
    let mut compact = step("compact", "/compact", Vec::new());
    compact.compacts = true;
    vec![
        cs(
            step("start", "Hello [p:t1] [mock:text]", Vec::new()),
            vec![ALWAYS, USER],
            vec![ALWAYS, USER],
        ),
        cs(
            step(
                "read-api",
                "Look [p:t2] [mock:read=api/v1/x.ts]",
                Vec::new(),
            ),
            vec![ALWAYS, USER, API],
            vec![ALWAYS, USER, API],
        ),
        cs(
            step(
                "read-pkg",
                "Look [p:t3] [mock:read=pkg/lib.txt]",
                Vec::new(),
            ),
            vec![ALWAYS, USER, API, PKG],
            vec![ALWAYS, USER, API, PKG],
        ),
        cs(
            step(
                "bash-cat-sql",
                "Look [p:t4] [mock:shell=cat db/schema.sql]",
                Vec::new(),
            ),
            vec![ALWAYS, USER, API, PKG, SQL],
            vec![ALWAYS, USER, API, PKG, SQL],
        ),
        cs(
            step(
                "read-tsx",
                "Look [p:t5] [mock:read=web/app.tsx]",
                Vec::new(),
            ),
            vec![ALWAYS, USER, API, PKG, SQL, TSX],
            vec![ALWAYS, USER, API, PKG, SQL, TSX],
        ),
        cs(compact, Vec::new(), Vec::new()),
        // After compaction: always-on rules are back; the path-scoped ones
        // come back with the next matching touch (R-RULE-4): a Write, a
        // `Bash cat`, a Read and Edit (Claude alone does all three,
        // measured with Claude Code 2.1.328).
        cs(write, vec![ALWAYS, USER, TSX], vec![ALWAYS, USER, TSX]),
        cs(
            step(
                "bash-cat-after",
                "Look [p:t7] [mock:shell=cat api/v2/y.ts]",
                Vec::new(),
            ),
            vec![ALWAYS, USER, API],
            vec![ALWAYS, USER, TSX, API],
        ),
        cs(
            edit,
            vec![ALWAYS, USER, API, TSX],
            vec![ALWAYS, USER, API, TSX],
        ),
        // More than Claude: a shell read through `cd` is a touch for the
        // hook (R-DISC-10).
        cs(
            step(
                "bash-cd-cat",
                "Look [p:t9] [mock:shell=cd docs && cat guide.md]",
                Vec::new(),
            ),
            vec![ALWAYS, USER, API, TSX],
            vec![ALWAYS, USER, API, TSX, DOCS],
        ),
    ]
}

/// `claude-rules`: the plan whose steps both runs take.
fn claude_rules(agent: Agent) -> Result<Plan, String> {
    if agent != Agent::Claude {
        return Err("claude-rules is Claude Code's (native .claude/rules)".into());
    }
    let mut p = plan(
        files(),
        ".",
        claude_steps().into_iter().map(|c| c.step).collect(),
    );
    p.against_native = true;
    Ok(p)
}

/// The rule cases, in run order (one entry per agent where a case is for
/// two of them: a case names one agent or all).
pub(crate) const CASES: &[Case] = &[
    Case {
        name: "rules-codex",
        about: "rules of 3 formats on: always-on at start, each path-scoped once on its first cat, not before",
        plan: rules_shell,
        only: Some(Agent::Codex),
        layout: None,
    },
    Case {
        name: "rules-gemini",
        about: "rules of 3 formats on: always-on at start, each path-scoped once on its first cat, not before",
        plan: rules_shell,
        only: Some(Agent::Gemini),
        layout: None,
    },
    Case {
        name: "rules-user-codex",
        about: "the user's ~/.claude/rules with the claude format on: once at start",
        plan: rules_user,
        only: Some(Agent::Codex),
        layout: None,
    },
    Case {
        name: "rules-user-gemini",
        about: "the user's ~/.claude/rules with the claude format on: once at start",
        plan: rules_user,
        only: Some(Agent::Gemini),
        layout: None,
    },
    // pi and opencode read no rule of these formats themselves: the
    // extension and the plugin give them, with `rule_formats` in the
    // store's `config.json` (the same file the hook reads).
    Case {
        name: "rules-pi",
        about: "rules of 3 formats on: always-on at start, each path-scoped once on its first cat, not before",
        plan: rules_shell,
        only: Some(Agent::Pi),
        layout: None,
    },
    Case {
        name: "rules-opencode",
        about: "rules of 3 formats on: always-on at start, each path-scoped once on its first cat, not before",
        plan: rules_shell,
        only: Some(Agent::Opencode),
        layout: None,
    },
    Case {
        name: "claude-rules",
        about: "Claude .claude/rules natively vs with the hook: every rule Claude shows, at every step",
        plan: claude_rules,
        only: Some(Agent::Claude),
        layout: None,
    },
];

/// Installs the hooks with rule formats on (R-RULE-7): with `hook install
/// --rules A,B` when the installer has that flag, else the plain install
/// and `rule_formats` in the hook's `config.json` ([`turn_on`]). No formats:
/// the plain install.
pub(crate) fn install(agent: Agent, dirs: &Dirs, bin: &Path, formats: &[&str]) -> Result<()> {
    if formats.is_empty() || agent.in_process() || !installer_has_rules_flag(bin) {
        super::inproc::install_product(agent, dirs, bin)?;
        return turn_on(agent, dirs, formats);
    }
    let codex_home = dirs.codex_home();
    super::agents::hook_install(
        bin,
        agent,
        &["--rules".to_owned(), formats.join(",")],
        &dirs.home,
        &dirs.ws,
        &[("CODEX_HOME", &codex_home)],
    )
}

/// Whether `hook install --help` names a `--rules` flag.
fn installer_has_rules_flag(bin: &Path) -> bool {
    std::process::Command::new(bin)
        .args(["hook", "install", "--help"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--rules"))
}

/// Turns rule formats on for the installed hook: `rule_formats` in
/// `$DSH_HOME/hooks/<agent>/config.json` (R-RULE-7).
pub(crate) fn turn_on(agent: Agent, dirs: &Dirs, formats: &[&str]) -> Result<()> {
    if formats.is_empty() {
        return Ok(());
    }
    let path = dirs
        .home
        .join(".dsh/hooks")
        .join(agent.name())
        .join("config.json");
    let mut v: Value = match fs::read_to_string(&path) {
        Ok(t) => {
            serde_json::from_str(&t).with_context(|| format!("{} is not JSON", path.display()))?
        }
        Err(_) => json!({}),
    };
    v["rule_formats"] = json!(formats);
    if let Some(d) = path.parent() {
        fs::create_dir_all(d)?;
    }
    fs::write(&path, serde_json::to_string_pretty(&v)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

/// What each rule looked like per step, native vs hook (the table of the
/// closing note), repeated at the end of the e2e.
pub(crate) static TABLE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The visible text of each step's last turn request, in one run.
fn run_steps(
    agent: Agent,
    plan: &Plan,
    installed: &Installed,
    bin: &Path,
    run: &Path,
    hooked: bool,
) -> Result<(Vec<String>, bool)> {
    let dirs = Dirs::of_run(run, ".");
    super::prepare(plan, &dirs)?;
    let mut mock = super::mock_for(agent, &dirs)?;
    let mut takeover = false;
    if hooked {
        agents::run_installer(agent, &dirs, bin)?;
        takeover = takes_rules_over(&dirs)?;
    }
    let mut session = Session::new(agent, installed, &dirs, mock.port());
    let mut texts = Vec::new();
    let which = if hooked { "hooked" } else { "native" };
    for (i, st) in plan.steps.iter().enumerate() {
        let n = i + 1;
        let before = mock.records().len();
        let r = session.prompt(&st.prompt)?;
        if r.timed_out || r.code != Some(0) {
            bail!(
                "{which} step {n} ({}): exit {:?} after {:.0}s: {}",
                st.label,
                r.code,
                r.elapsed.as_secs_f64(),
                r.stderr_tail
            );
        }
        let records = mock.records();
        if let Some(s) = records.iter().find(|r| r.stray) {
            bail!("{which} step {n}: stray request {} {}", s.method, s.target);
        }
        super::prove_event(st, &records[before..])
            .with_context(|| format!("{which} step {n} ({})", st.label))?;
        super::files_hold(st, run, &format!("{which} step {n} ({})", st.label))?;
        // `/compact` makes a summary request and no turn: nothing to see.
        let last = records[before..].iter().rev().find(|r| r.is_turn());
        if last.is_none() && super::script::prompt_tag(&st.prompt).is_some() {
            bail!("{which} step {n} ({}): no model turn request", st.label);
        }
        texts.push(
            last.and_then(|r| r.body.as_ref())
                .map(visible_text)
                .unwrap_or_default(),
        );
    }
    mock.stop();
    Ok((texts, takeover))
}

/// Whether the installed Claude settings hand `.claude/rules` to the hook
/// (R-RULE-7: the excludes name them).
fn takes_rules_over(dirs: &Dirs) -> Result<bool> {
    let path = dirs.home.join(".claude/settings.json");
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    Ok(v["claudeMdExcludes"].as_array().is_some_and(|a| {
        a.iter()
            .any(|x| x.as_str().is_some_and(|s| s.contains(".claude/rules")))
    }))
}

/// Which of `rules` show their first line in `text`.
fn shown_ids(rules: &[Rule], text: &str) -> Vec<&'static str> {
    rules
        .iter()
        .filter(|r| count(text, &r.lines()[0]) > 0)
        .map(|r| r.id)
        .collect()
}

/// Judges one step: Claude alone showed at least its floor; with the hook
/// every rule Claude alone showed arrives whole, in order, never in more
/// copies than Claude alone gave; under the takeover, also the takeover
/// rules whole and once, and no native copy.
pub(crate) fn judge_step(
    cs: &ClaudeStep,
    native: &str,
    hooked: &str,
    takeover: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    for r in &cs.native_floor {
        if count(native, &r.lines()[0]) == 0 {
            problems.push(format!(
                "Claude alone did not show {} ({}): nothing to compare",
                r.shown(),
                r.kind
            ));
        }
    }
    for r in &CLAUDE_FORMAT {
        let lines = r.lines();
        let n: Vec<usize> = lines.iter().map(|l| count(native, l)).collect();
        if n[0] == 0 {
            continue;
        }
        let h: Vec<usize> = lines.iter().map(|l| count(hooked, l)).collect();
        let at: Vec<Option<usize>> = lines.iter().map(|l| hooked.find(l.as_str())).collect();
        let ordered = at
            .windows(2)
            .all(|w| matches!(w, [Some(a), Some(b)] if a < b));
        let too_many = h.iter().zip(&n).any(|(h, n)| *h > (*n).max(1));
        if h.contains(&0) || !ordered || too_many {
            problems.push(format!(
                "{} ({}): Claude alone showed its lines {n:?} times, with the hook {h:?}{}",
                r.shown(),
                r.kind,
                if ordered { "" } else { ", out of order" }
            ));
        }
    }
    if takeover {
        let mut expects: Vec<Expect> = cs.takeover.iter().map(Rule::whole).collect();
        // The hook's own copy: its heading, in a baseline or as a `set`.
        expects.extend(
            cs.takeover
                .iter()
                .map(|r| Expect::Present(format!("nstructions from: {}", r.shown()))),
        );
        if let Some(path) = native_rule_copy(hooked) {
            problems.push(format!(
                "takeover: Claude itself still sent the rule {path}"
            ));
        }
        problems.extend(
            check_all(&expects, hooked)
                .into_iter()
                .map(|e| format!("takeover: {e}")),
        );
        for sig in Agent::Claude.native_signatures() {
            if hooked.contains(sig) {
                problems.push(format!(
                    "takeover: a native copy reached the model (`{sig}`)"
                ));
            }
        }
    }
    problems
}

/// Claude Code's own wrapper of a rule file (`Contents of <abs path>`,
/// with a label at start, bare on a touch; measured): the first such path.
fn native_rule_copy(text: &str) -> Option<String> {
    text.match_indices("Contents of ").find_map(|(i, m)| {
        let rest = &text[i + m.len()..];
        let end = rest.find([':', '\n', ' ']).unwrap_or(rest.len());
        let path = &rest[..end];
        path.contains("/.claude/rules/").then(|| path.to_owned())
    })
}

/// Runs `claude-rules`: the steps natively, then with the hook, then judges
/// each step.
pub(crate) fn against_native(
    agent: Agent,
    plan: &Plan,
    installed: &Installed,
    bin: &Path,
    run: &Path,
) -> Result<()> {
    let native_dir = run.join("native");
    let hook_dir = run.join("hook");
    fs::create_dir_all(&native_dir)?;
    fs::create_dir_all(&hook_dir)?;
    let (native, _) = run_steps(agent, plan, installed, bin, &native_dir, false)?;
    let (hooked, takeover) = run_steps(agent, plan, installed, bin, &hook_dir, true)?;
    let steps = claude_steps();
    let mut problems = Vec::new();
    let mut table = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    table.push(format!(
        "{agent}: rules {} (claude format only; each step's last request)",
        if takeover {
            "taken over by the hook"
        } else {
            "left to Claude (no takeover in this binary)"
        }
    ));
    for (i, cs) in steps.iter().enumerate() {
        let (n, h) = (&native[i], &hooked[i]);
        let line = format!(
            "  step {} {:<19} native [{}]  hook [{}]",
            i + 1,
            cs.step.label,
            shown_ids(&CLAUDE_FORMAT, n).join(" "),
            shown_ids(&CLAUDE_FORMAT, h).join(" ")
        );
        println!("     {line}");
        table.push(line);
        problems.extend(
            judge_step(cs, n, h, takeover)
                .into_iter()
                .map(|p| format!("step {} ({}): {p}", i + 1, cs.step.label)),
        );
    }
    drop(table);
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_line_is_unique_in_the_layout() {
        let all: Vec<(String, String)> = files();
        for r in ALL {
            for l in r.lines() {
                let n: usize = all.iter().map(|(_, c)| count(c, &l)).sum();
                assert_eq!(n, 1, "{l}");
            }
        }
    }

    #[test]
    fn a_rule_file_holds_its_lines_after_its_front_matter() {
        let c = API.content();
        assert!(c.starts_with("---\npaths:"));
        assert_eq!(check_all(&[API.whole()], &c), Vec::<String>::new());
        assert_eq!(API.shown(), ".claude/rules/api.md");
        assert_eq!(USER.shown(), "~/.claude/rules/user.md");
    }

    /// A step cannot pass on an empty native run, nor on a hooked run that
    /// lost a rule Claude showed, nor on one that shows it twice.
    #[test]
    fn a_claude_step_fails_on_empty_short_or_doubled_runs() {
        let steps = claude_steps();
        let read = &steps[1];
        let native = [ALWAYS, USER, API]
            .iter()
            .map(|r| r.content())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            judge_step(read, &native, &native, false),
            Vec::<String>::new()
        );
        let p = judge_step(read, "", "", false);
        assert!(p.iter().any(|p| p.contains("nothing to compare")), "{p:?}");
        let short = [ALWAYS, USER]
            .iter()
            .map(|r| r.content())
            .collect::<String>();
        let p = judge_step(read, &native, &short, false);
        assert!(
            p.iter().any(|p| p.starts_with(".claude/rules/api.md")),
            "{p:?}"
        );
        let doubled = format!("{native}\n{}", API.content());
        let p = judge_step(read, &native, &doubled, false);
        assert!(p.iter().any(|p| p.contains("[2, 2, 2]")), "{p:?}");
        // Under the takeover, PKG is not yet due at step 2, but SQL is at 4.
        let p = judge_step(&steps[3], &native, &native, true);
        assert!(p.iter().any(|p| p.contains("E2E-RULE-SQL-V1 L1:")), "{p:?}");
    }

    /// Under the takeover a rule must come from the hook (its heading), and
    /// Claude's own copy of it is a failure even without the startup label.
    #[test]
    fn under_the_takeover_a_native_copy_or_a_missing_heading_fails() {
        let steps = claude_steps();
        let read = &steps[1];
        let native = [ALWAYS, USER, API]
            .iter()
            .map(|r| format!("Contents of /ws/{}:\n\n{}", r.shown(), r.content()))
            .collect::<Vec<_>>()
            .join("\n");
        let p = judge_step(read, &native, &native, true);
        assert!(
            p.iter().any(|p| p.contains("Claude itself still sent")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|p| p.contains("nstructions from: .claude/rules/api.md")),
            "{p:?}"
        );
        let hooked = [ALWAYS, USER, API]
            .iter()
            .map(|r| format!("Instructions from: {}\n\n{}", r.shown(), r.content()))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            judge_step(read, &native, &hooked, true),
            Vec::<String>::new()
        );
        assert_eq!(
            native_rule_copy("Contents of /w/.claude/rules/a.md (project instructions"),
            Some("/w/.claude/rules/a.md".to_owned())
        );
        assert_eq!(native_rule_copy("Contents of /w/AGENTS.md:"), None);
    }

    #[test]
    fn rules_shell_asks_for_every_format_and_every_path_scoped_rule() {
        let p = rules_shell(Agent::Codex).unwrap();
        assert_eq!(p.rule_formats, FORMATS);
        for r in [CODB, SQL, PKG] {
            assert!(p.steps[4].expect.contains(&r.whole()), "{}", r.id);
            // ... and every request of the step after holds them once.
            assert!(p.steps[5].expect_each.contains(&r.whole()), "{}", r.id);
        }
        assert!(p.steps[5].expect.contains(&DOCS.whole()));
        assert!(p.steps[4].expect.contains(&DOCS.not_yet()));
        // Before its step, each path-scoped rule is expected absent.
        assert!(p.steps[1].expect_each.contains(&API.not_yet()));
        assert!(p.steps[2].expect_each.contains(&CWEB.not_yet()));
        assert!(rules_shell(Agent::Claude).is_err());
        assert!(claude_rules(Agent::Codex).is_err());
    }

    #[test]
    fn config_json_gets_the_formats_and_keeps_other_fields() {
        let tmp = tempfile::tempdir().unwrap();
        let d = Dirs::of_run(tmp.path(), ".");
        let cfg = d.home.join(".dsh/hooks/codex/config.json");
        fs::create_dir_all(cfg.parent().unwrap()).unwrap();
        fs::write(&cfg, "{\"max_bytes\": 1000}").unwrap();
        turn_on(Agent::Codex, &d, &FORMATS).unwrap();
        let v: Value = serde_json::from_str(&fs::read_to_string(&cfg).unwrap()).unwrap();
        assert_eq!(v["rule_formats"], json!(["claude", "cursor", "copilot"]));
        assert_eq!(v["max_bytes"], 1000);
        turn_on(Agent::Gemini, &d, &[]).unwrap();
        assert!(!d.home.join(".dsh/hooks/gemini").exists());
    }
}
