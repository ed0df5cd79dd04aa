//! The generated layouts of the native-vs-hooked comparisons and their files' content
//! (`compare.rs`): which files, how large, and where the agent starts. The
//! case list (`scenarios.rs`) names them and the comparison runs them, so
//! they live apart from both.

use super::agents::Agent;

/// One generated layout: files (run-dir relative: `ws/…` in the repository,
/// `home/…` in HOME, anything else above the repository) with their sizes,
/// in composed order, and the agent's cwd.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// Name for reports.
    pub name: &'static str,
    /// The agent's cwd relative to `ws`.
    pub cwd: &'static str,
    /// `(path, bytes)` in composed order.
    pub files: &'static [(&'static str, usize)],
    /// How many of the files each agent loads by itself (Claude Code,
    /// Codex, Gemini CLI with `AGENTS.md` named, Copilot CLI, Qwen Code, pi,
    /// opencode;
    /// harness README, "Native instruction loading", and the native runs
    /// here): a native run that delivers fewer compares nothing and fails
    /// (R-HOOK-7).
    pub native: [usize; 7],
    /// Parts the hooked message must come in, at least, in the agents that
    /// take parts (Claude Code, Codex); 0 = any number.
    pub min_parts: u32,
}

impl Layout {
    /// The files `agent` loads natively on this layout.
    pub(crate) fn native(&self, agent: Agent) -> usize {
        let i = match agent {
            Agent::Claude => 0,
            Agent::Codex => 1,
            Agent::Gemini => 2,
            Agent::Copilot => 3,
            Agent::Qwen => 4,
            Agent::Pi => 5,
            Agent::Opencode => 6,
            Agent::Cline => return super::cline_run::native_files(self.name),
        };
        self.native[i]
    }

    /// The parts the hooked message must come in for `agent` (Gemini CLI
    /// takes the composition whole through `BeforeModel`; Copilot CLI and
    /// Qwen Code took 20,000-character contexts whole at session start,
    /// measured, so a part count is the adapter's choice there).
    pub(crate) fn min_parts(&self, agent: Agent) -> u32 {
        match agent {
            Agent::Claude | Agent::Codex => self.min_parts,
            // pi and opencode take a message of any size whole.
            Agent::Gemini
            | Agent::Copilot
            | Agent::Qwen
            | Agent::Pi
            | Agent::Opencode
            | Agent::Cline => 0,
        }
    }
}

/// Like sentry: a 17 KB root `CLAUDE.md`, a divergent root `AGENTS.md`,
/// `static/AGENTS.md` 19 KB and `static/CLAUDE.md` 6 KB, cwd deep below.
pub(crate) const SENTRY: Layout = Layout {
    name: "sentry",
    cwd: "static/app/components",
    files: &[
        ("ws/CLAUDE.md", 17_356),
        ("ws/AGENTS.md", 9_200),
        ("ws/static/CLAUDE.md", 5_970),
        ("ws/static/AGENTS.md", 19_081),
    ],
    // Claude: the two CLAUDE.md (path-wide fallback off); Codex and
    // Gemini: the two AGENTS.md. Copilot: all four (every directory from
    // the git root to the cwd, AGENTS.md and CLAUDE.md alike; measured
    // 2026-12-04, 51,607 B); Qwen: the two AGENTS.md from the cwd up
    // (28,281 B). pi: the first name per directory, AGENTS.md before
    // CLAUDE.md; opencode: every AGENTS.md from the cwd up (its first name
    // found), so both the two AGENTS.md (agents/pi.md, agents/opencode.md).
    native: [2, 2, 2, 4, 2, 2, 2],
    min_parts: 0,
};

/// Like airflow: a 23 KB root `AGENTS.md`, a 9.5 KB nested one, no
/// `CLAUDE.md` anywhere.
pub(crate) const AIRFLOW: Layout = Layout {
    name: "airflow",
    cwd: "providers",
    files: &[("ws/AGENTS.md", 23_802), ("ws/providers/AGENTS.md", 9_500)],
    // Copilot and Qwen: both (33,302 B, measured).
    native: [2, 2, 2, 2, 2, 2, 2],
    min_parts: 4,
};

/// Like openai-agents-python: one 34 KB root `AGENTS.md`, cwd at the root
/// (Codex alone stops at its 32 KiB `project_doc_max_bytes`).
pub(crate) const BIG_ROOT: Layout = Layout {
    name: "big-root",
    cwd: ".",
    files: &[("ws/AGENTS.md", 34_300), ("ws/src/AGENTS.md", 1_100)],
    native: [1, 1, 1, 1, 1, 1, 1],
    min_parts: 4,
};

/// A person's `CLAUDE.md` one level above the repository next to the
/// project's own (issue 30 item 2): Claude Code reads every directory from
/// `/` down, so with the hook it must still arrive, broadest first.
pub(crate) const ANCESTOR: Layout = Layout {
    name: "ancestor",
    cwd: ".",
    files: &[("CLAUDE.md", 1_800), ("ws/CLAUDE.md", 2_500)],
    native: [2, 0, 0, 0, 0, 0, 0],
    min_parts: 0,
};

/// Claude Code's user file next to a project file (issue 17: with the hook,
/// `~/.claude/CLAUDE.md` must still reach the model exactly once).
pub(crate) const CLAUDE_USER: Layout = Layout {
    name: "claude-user",
    cwd: ".",
    files: &[("home/.claude/CLAUDE.md", 2_100), ("ws/CLAUDE.md", 3_300)],
    native: [2, 0, 0, 0, 0, 0, 0],
    min_parts: 0,
};

/// Claude Code's per-directory files: `AGENTS.md` at the root is not loaded
/// natively because a `CLAUDE.md` exists on the path.
pub(crate) const CLAUDE_MIXED: Layout = Layout {
    name: "claude-mixed",
    cwd: "a",
    files: &[
        ("ws/AGENTS.md", 1_200),
        ("ws/a/CLAUDE.md", 1_500),
        ("ws/a/.claude/CLAUDE.md", 900),
        ("ws/a/CLAUDE.local.md", 700),
    ],
    // AGENTS.md is not loaded: a CLAUDE.md is on the path.
    native: [3, 0, 0, 0, 0, 0, 0],
    min_parts: 0,
};

/// Parts whose work differs in cost (issue 17 item 1): a message of well
/// over three 9,000-byte parts, one file filling most of a part, a small
/// one, one spanning three parts and a tiny one; the model must read them
/// in the composed order whichever part's hook finishes first.
pub(crate) const PARTS: Layout = Layout {
    name: "parts",
    cwd: "a/b/c",
    files: &[
        ("ws/AGENTS.md", 8_800),
        ("ws/a/AGENTS.md", 1_500),
        ("ws/a/b/AGENTS.md", 26_000),
        ("ws/a/b/c/AGENTS.md", 600),
    ],
    // Codex stops at its 32 KiB cap before the last file; Copilot and Qwen
    // read all four (36,900 B, measured).
    native: [4, 3, 4, 4, 4, 4, 4],
    min_parts: 4,
};

/// The marker id of a file: its path, upper-cased, non-alphanumerics as `-`.
fn id(path: &str) -> String {
    path.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// A file of exactly `size` bytes (at least its two marker lines) whose
/// every line is unique in the layout.
pub(crate) fn content(path: &str, size: usize) -> String {
    let id = id(path);
    let start = format!("E2E-L-{id}-START\n");
    let end = format!("E2E-L-{id}-END\n");
    let mut body = String::new();
    let mut n = 0;
    let filler = "keep the e2e layout rules of this directory in mind.";
    loop {
        let room = size.saturating_sub(start.len() + body.len() + end.len());
        if room == 0 {
            break;
        }
        n += 1;
        let line = format!("E2E-L-{id} line {n:05}: {filler}\n");
        if room >= 2 * line.len() {
            body.push_str(&line);
        } else {
            // The last line takes exactly the room left (still unique: it
            // keeps its number; never shorter than its head).
            let mut l = format!("E2E-L-{id} line {n:05}:");
            while l.len() + 1 < room {
                l.push('.');
            }
            body.push_str(&l);
            body.push('\n');
            break;
        }
    }
    format!("{start}{body}{end}")
}

/// Every layout (the unit tests walk them).
#[cfg(test)]
pub(crate) const LAYOUTS: [Layout; 7] = [
    SENTRY,
    AIRFLOW,
    BIG_ROOT,
    ANCESTOR,
    CLAUDE_USER,
    CLAUDE_MIXED,
    PARTS,
];
