//! The generated layouts of the native-vs-hooked comparisons
//! (`compare.rs`): which files, how large, and where the agent starts. The
//! case list (`scenarios.rs`) names them and the comparison runs them, so
//! they live apart from both.

/// One generated layout: files (run-dir relative, `ws/…` or `home/…`) with
/// their sizes, in composed order, and the agent's cwd.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// Name for reports.
    pub name: &'static str,
    /// The agent's cwd relative to `ws`.
    pub cwd: &'static str,
    /// `(path, bytes)` in composed order.
    pub files: &'static [(&'static str, usize)],
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
};

/// Like airflow: a 23 KB root `AGENTS.md`, a 9.5 KB nested one, no
/// `CLAUDE.md` anywhere.
pub(crate) const AIRFLOW: Layout = Layout {
    name: "airflow",
    cwd: "providers",
    files: &[("ws/AGENTS.md", 23_802), ("ws/providers/AGENTS.md", 9_500)],
};

/// Claude Code's user file next to a project file (issue 17: with the hook,
/// `~/.claude/CLAUDE.md` must still reach the model exactly once).
pub(crate) const CLAUDE_USER: Layout = Layout {
    name: "claude-user",
    cwd: ".",
    files: &[("home/.claude/CLAUDE.md", 2_100), ("ws/CLAUDE.md", 3_300)],
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
};

/// Every layout (the unit tests walk them).
#[cfg(test)]
pub(crate) const LAYOUTS: [Layout; 5] = [SENTRY, AIRFLOW, CLAUDE_USER, CLAUDE_MIXED, PARTS];
