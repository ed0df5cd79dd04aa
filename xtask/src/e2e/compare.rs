//! Never less than the agent itself (issue 17 item 7a, issue 21 item 2):
//! per agent and realistic layout, the agent runs once NATIVELY (no hook,
//! its own instruction loading on) and once with the hook installed by the
//! real `hook install`, on the same generated layout. Every file is made of
//! numbered lines that are unique in the whole layout (first line
//! `E2E-L-<id>-START`, last `E2E-L-<id>-END`), so what reached the model is
//! measured line by line: a file is whole when every one of its lines is in
//! the request exactly once.
//!
//! Asserted on the hooked run: every file whose first line the agent loaded
//! natively arrives whole, no line twice, the delivered files in the
//! composed order (the layout lists files in that order: user files, then
//! directory by directory from the root, `CLAUDE.md` before `AGENTS.md`),
//! and no native copy. For Claude Code the native file list is also compared
//! with `dsh-instructions explain --preset claude --json` (a differential
//! test of the preset, issue 17 item 2). Each run prints one `bytes` line
//! (delivered vs native); the xtask repeats them as a table at the end.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::agents::{self, Agent, Dirs, Installed, Session};
use super::assertions::{count, visible_text};
#[cfg(test)]
use super::layouts::LAYOUTS;
use super::layouts::{Layout, content};
use super::scenarios::{Plan, Step};

/// What of one file reached the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Its first line was there.
    pub started: bool,
    /// Every line exactly once, and in the file's order (R-HOOK-7: first
    /// and last lines are not enough, nor lines out of order).
    pub whole: bool,
    /// The lines that arrived came in the file's order.
    pub ordered: bool,
    /// Lines seen more than once.
    pub doubled: usize,
    /// Bytes of the lines seen (once or more), newlines included.
    pub bytes: usize,
    /// Where its first line is (for the order).
    pub at: Option<usize>,
}

/// Measures one file in a request's visible text.
pub(crate) fn seen(text: &str, file: &str) -> Seen {
    let mut s = Seen {
        started: false,
        whole: true,
        ordered: true,
        doubled: 0,
        bytes: 0,
        at: None,
    };
    let mut last: Option<usize> = None;
    for (i, line) in file.lines().enumerate() {
        let n = count(text, line);
        let at = text.find(line);
        if i == 0 {
            s.started = n > 0;
            s.at = at;
        }
        if n != 1 {
            s.whole = false;
        }
        if n > 1 {
            s.doubled += 1;
        }
        if n > 0 {
            s.bytes += line.len() + 1;
        }
        if let Some(at) = at {
            if last.is_some_and(|l| at < l) {
                s.ordered = false;
            }
            last = Some(at);
        }
    }
    s.whole &= s.ordered;
    s
}

/// The part labels of a message delivered in parts, as they stand in a
/// request's text: `(k, n, bytes of part k)` in text order. The bytes run
/// from the label to the next label or the end of the part's frame, plus
/// the frame itself (`<system-reminder>` open and close), so they are at
/// least what the agent received for the part.
pub(crate) fn part_labels(text: &str) -> Vec<(u32, u32, usize)> {
    const FRAME: usize = "<system-reminder>\n".len() + "\n</system-reminder>".len();
    let starts: Vec<usize> = text.match_indices(PART_LABEL).map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(j, &i)| {
            let rest = &text[i + PART_LABEL.len()..];
            let mut nums = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter(|w| !w.is_empty())
                .map(|w| w.parse::<u32>().unwrap_or(0));
            let k = nums.next().unwrap_or(0);
            let n = nums.next().unwrap_or(0);
            let next = starts.get(j + 1).copied().unwrap_or(text.len());
            let close = text[i..next]
                .find("</system-reminder>")
                .map_or(next, |c| i + c);
            (k, n, close - i + FRAME)
        })
        .collect()
}

/// R-HOOK-7: the parts arrived in number order, `1..N` complete, each
/// within a part's size; `min_parts`: at least that many (0: one part, no
/// label, is fine too).
pub(crate) fn check_parts(text: &str, min_parts: u32) -> Result<u32, String> {
    let labels = part_labels(text);
    let n = labels.first().map_or(0, |l| l.1);
    let ks: Vec<u32> = labels.iter().map(|l| l.0).collect();
    let want: Vec<u32> = (1..=n).collect();
    if labels.iter().any(|l| l.1 != n) || ks != want {
        return Err(format!(
            "parts arrived as {ks:?} (labels of {:?} parts), not 1..={n} in order",
            labels.iter().map(|l| l.1).collect::<Vec<_>>()
        ));
    }
    if let Some((k, _, b)) = labels.iter().find(|l| l.2 > PART_BYTES) {
        return Err(format!("part {k} holds {b} bytes, over {PART_BYTES}"));
    }
    if n < min_parts {
        return Err(format!("{n} parts, the layout makes at least {min_parts}"));
    }
    Ok(n)
}

/// The largest part the adapter sends (`PART_BYTES` of the hooks crate).
const PART_BYTES: usize = 9_000;

/// The `bytes` lines of this run, repeated as a table at the end.
pub(crate) static TABLE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The visible text of the one turn of a session on `layout` in `run`.
fn one_turn(
    agent: Agent,
    layout: &Layout,
    installed: &Installed,
    bin: &Path,
    run: &Path,
    hooked: bool,
) -> Result<String> {
    let dirs = Dirs::of_run(run, layout.cwd);
    let mut files: Vec<(String, String)> = layout
        .files
        .iter()
        .map(|(p, n)| ((*p).to_owned(), content(p, *n)))
        .collect();
    // Cline gives hook context only after a tool call: a plain file in its
    // cwd for the turn to read.
    let read = if agent == Agent::Cline {
        let rel = match layout.cwd {
            "." => super::cline_run::LAYOUT_READ.to_owned(),
            cwd => format!("{cwd}/{}", super::cline_run::LAYOUT_READ),
        };
        files.push((format!("ws/{rel}"), "plain file to read\n".to_owned()));
        Some(rel)
    } else {
        None
    };
    let plan = Plan {
        files,
        cwd: layout.cwd.to_owned(),
        steps: Vec::new(),
        needs: super::scenarios::Needs::Nothing,
        rule_formats: Vec::new(),
        against_native: false,
    };
    super::prepare(&plan, &dirs)?;
    let mut mock = super::mock_for(agent, &dirs)?;
    if hooked {
        super::inproc::install_product(agent, &dirs, bin)?;
    } else if agent == Agent::Gemini {
        // Gemini CLI loads only GEMINI.md by default; a user of AGENTS.md
        // names it (harness README, "Switching … off": measured).
        agents::enable_gemini_agents_md(&dirs)?;
    }
    let mut session = Session::new(agent, installed, &dirs, mock.port());
    let prompt = match &read {
        Some(rel) => format!("Hello [p:t1] [mock:read={rel}]"),
        None => "Hello [p:t1] [mock:text]".to_owned(),
    };
    let prompt = prompt.as_str();
    let r = session.prompt(prompt)?;
    if r.timed_out || r.code != Some(0) {
        bail!(
            "{} run: exit {:?} after {:.0}s: {}",
            if hooked { "hooked" } else { "native" },
            r.code,
            r.elapsed.as_secs_f64(),
            r.stderr_tail
        );
    }
    mock.stop();
    let records = mock.records();
    if let Some(s) = records.iter().find(|r| r.stray) {
        bail!("stray request {} {}", s.method, s.target);
    }
    let step = Step {
        label: "hello",
        before: Vec::new(),
        prompt: prompt.to_owned(),
        expect: Vec::new(),
        expect_turn: Vec::new(),
        file_contains: Vec::new(),
        compacts: false,
        expect_each: Vec::new(),
    };
    super::prove_event(&step, &records)?;
    let last = records
        .iter()
        .rev()
        .find(|r| r.is_turn())
        .context("no model turn request")?;
    Ok(last.body.as_ref().map(visible_text).unwrap_or_default())
}

/// A layout file's name as the adapter's heading and `explain` show it:
/// `~/…` below the home, root-relative in the workspace, absolute above it
/// (a file of `run`, the directory holding the repository).
fn shown_name(path: &str, run: &Path) -> String {
    if let Some(p) = path.strip_prefix("home/") {
        format!("~/{p}")
    } else if let Some(p) = path.strip_prefix("ws/") {
        p.to_owned()
    } else {
        run.join(path).display().to_string()
    }
}

/// Files `explain --preset claude --json` says are loaded (imports too).
fn explain_loaded(bin: &Path, run: &Path, cwd: &str) -> Result<Vec<String>> {
    let ws = run.join("ws");
    let out = Command::new(bin)
        .args(["explain", "--preset", "claude", "--json", "--cwd"])
        .arg(if cwd == "." { ws.clone() } else { ws.join(cwd) })
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", run.join("home"))
        .stdin(Stdio::null())
        .output()
        .context("cannot run dsh-instructions explain")?;
    let v: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "explain --preset claude --json: not JSON ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    let mut names = Vec::new();
    fn walk(c: &Value, names: &mut Vec<String>) {
        if c["fate"]["kind"] == "loaded"
            && let Some(p) = c["path"].as_str()
        {
            names.push(p.to_owned());
        }
        for i in c["imports"].as_array().into_iter().flatten() {
            walk(i, names);
        }
    }
    for c in v["candidates"].as_array().into_iter().flatten() {
        walk(c, &mut names);
    }
    Ok(names)
}

/// The label every part of a message in several parts starts with
/// (`hook --agent A --part K`, decision 0018).
const PART_LABEL: &str = "Workspace instructions, part ";

/// The heading the adapter gives a file of a baseline (R-REN-2).
const HEADING: &str = "Instructions from: ";

/// What one comparison found: its problems (empty = pass), its `bytes`
/// line (with `{spinning}` left for the caller), the layout's files and
/// what of each the native run showed.
pub(crate) struct Judged {
    pub problems: Vec<String>,
    pub line: String,
    pub files: Vec<(&'static str, String)>,
    pub native: Vec<Seen>,
}

/// Judges the native and the hooked request text of one layout (R-HOOK-7,
/// R-HOOK-8): every file the agent loaded natively whole and in order with
/// the hook, none twice, the files in composed order, the parts in number
/// order, a native run that delivered what the layout gives the agent, the
/// adapter's heading before every file it delivered, no native copy.
pub(crate) fn judge(
    agent: Agent,
    layout: &Layout,
    native: &str,
    hooked: &str,
    hook_dir: &Path,
) -> Judged {
    let files: Vec<(&'static str, String)> = layout
        .files
        .iter()
        .map(|(p, n)| (*p, content(p, *n)))
        .collect();
    let n: Vec<Seen> = files.iter().map(|(_, c)| seen(native, c)).collect();
    let h: Vec<Seen> = files.iter().map(|(_, c)| seen(hooked, c)).collect();
    let sum = |v: &[Seen]| -> (usize, usize, usize) {
        (
            v.iter().map(|s| s.bytes).sum(),
            v.iter().filter(|s| s.started).count(),
            v.iter().filter(|s| s.whole).count(),
        )
    };
    let (nb, nf, nw) = sum(&n);
    let (hb, hf, hw) = sum(&h);
    let mut problems = Vec::new();
    for (i, (path, _)) in files.iter().enumerate() {
        if n[i].started && !h[i].whole {
            problems.push(format!(
                "{path}: native {} B, hooked {} B{}",
                n[i].bytes,
                h[i].bytes,
                if h[i].doubled > 0 {
                    format!(", {} lines twice", h[i].doubled)
                } else {
                    String::new()
                }
            ));
        } else if h[i].doubled > 0 {
            problems.push(format!(
                "{path}: {} lines twice with the hook",
                h[i].doubled
            ));
        }
    }
    // The composed order (R-HOOK-4): the delivered files, by where they
    // start in the request, keep the layout's order — as the model reads
    // them, never reassembled from the parts' labels.
    // Where the agent's own loading stays on (decision 0067), its files
    // stand in its own order; the order of the adapter's is checked.
    let by_adapter = |i: usize| !(agent.native_kept() && n[i].started);
    let mut order: Vec<(usize, usize)> = h
        .iter()
        .enumerate()
        .filter(|(i, _)| by_adapter(*i))
        .filter_map(|(i, s)| s.at.map(|at| (at, i)))
        .collect();
    order.sort();
    let idx: Vec<usize> = order.iter().map(|(_, i)| *i).collect();
    if idx.windows(2).any(|w| w[0] > w[1]) {
        let names: Vec<&str> = idx.iter().map(|i| files[*i].0).collect();
        problems.push(format!("read out of composed order: {}", names.join(", ")));
    }
    // R-HOOK-7: parts in number order, complete, each within a part.
    if let Err(e) = check_parts(hooked, layout.min_parts(agent)) {
        problems.push(e);
    }
    let seq: Vec<String> = part_labels(hooked)
        .iter()
        .map(|l| l.0.to_string())
        .collect();
    let parts = if seq.is_empty() {
        "one part".to_owned()
    } else {
        format!("parts {}", seq.join(","))
    };
    // A comparison that cannot pass on an empty native run: the agent alone
    // must have delivered what the layout gives it ...
    let floor = layout.native(agent);
    // Cline alone loads nothing at sentry's cwd: there the hooked run must
    // have delivered, and what it delivered is judged (`cline_run.rs`).
    let vacuous = if agent == Agent::Cline && floor == 0 {
        hf == 0
    } else {
        nf == 0 || nf < floor
    };
    if vacuous {
        problems.push(format!(
            "the agent alone delivered {nf} files, the layout gives it {floor}: nothing to compare"
        ));
    }
    // ... and the hooked run must be the adapter's: its heading before every
    // file it delivered.
    for (i, (path, _)) in files.iter().enumerate() {
        let Some(at) = h[i].at.filter(|_| by_adapter(i)) else {
            continue;
        };
        let heading = format!("{HEADING}{}", shown_name(path, hook_dir));
        if !hooked[..at].contains(&heading) {
            problems.push(format!(
                "{path}: no `{heading}` before it in the hooked run"
            ));
        }
    }
    for sig in agent.double_delivery_signatures() {
        if hooked.contains(sig) {
            problems.push(format!(
                "a native copy reached the model with the hook (`{sig}`)"
            ));
        }
    }
    let missing: Vec<&str> = files
        .iter()
        .enumerate()
        .filter(|(i, _)| n[*i].started && !h[*i].whole)
        .map(|(_, (p, _))| *p)
        .collect();
    let line = format!(
        "bytes {agent:<6} {:<12} native {nb:>6} B in {nf} files ({nw} whole, in order)  hook {hb:>6} B in {hf} files ({hw} whole, in order), {parts}, {{spinning}} busy threads{}",
        layout.name,
        if missing.is_empty() {
            String::new()
        } else {
            format!("  short: {}", missing.join(", "))
        }
    );
    Judged {
        problems,
        line,
        files,
        native: n,
    }
}

/// What the agent alone delivered of a layout: bytes, and per file whole
/// or how much (`native <agent> <layout>: N B, a.md whole, b.md 120 B`).
pub(crate) fn native_line(agent: Agent, layout: &Layout, native: &str) -> String {
    let mut total = 0;
    let mut per: Vec<String> = Vec::new();
    for (p, size) in layout.files {
        let s = seen(native, &content(p, *size));
        total += s.bytes;
        per.push(if s.whole {
            format!("{p} whole")
        } else if s.started || s.bytes > 0 {
            format!("{p} {} B", s.bytes)
        } else {
            format!("{p} not loaded")
        });
    }
    format!(
        "native {agent:<7} {:<8} {total:>6} B: {}",
        layout.name,
        per.join(", ")
    )
}

/// Runs the comparison of one layout for one agent.
pub(crate) fn run(
    agent: Agent,
    layout: &Layout,
    installed: &Installed,
    bin: &Path,
    run: &Path,
) -> Result<()> {
    let native_dir = run.join("native");
    let hook_dir = run.join("hook");
    fs::create_dir_all(&native_dir)?;
    fs::create_dir_all(&hook_dir)?;
    // R-HOOK-7: under CPU load, a busy loop per core beside the agent,
    // where the parts' timing is least forgiving.
    let load = super::load::CpuLoad::per_core();
    let native = one_turn(agent, layout, installed, bin, &native_dir, false)?;
    // The native half on its own line, before the hooked run can fail.
    println!("     {}", native_line(agent, layout, &native));
    let hooked = one_turn(agent, layout, installed, bin, &hook_dir, true)?;
    let spinning = load.threads();
    drop(load);
    let Judged {
        mut problems,
        line,
        files,
        native: n,
    } = judge(agent, layout, &native, &hooked, &hook_dir);
    let line = line.replace("{spinning}", &spinning.to_string());
    println!("     {line}");
    super::lock_table().push(line);
    if agent == Agent::Claude {
        let mut native_names: Vec<String> = files
            .iter()
            .enumerate()
            .filter(|(i, _)| n[*i].started)
            .map(|(_, (p, _))| shown_name(p, &native_dir))
            .collect();
        let mut preset = explain_loaded(bin, &native_dir, layout.cwd)?;
        native_names.sort();
        preset.retain(|p| !p.starts_with("~/.dsh/"));
        preset.sort();
        if native_names != preset {
            problems.push(format!(
                "`explain --preset claude` loads [{}], Claude Code itself [{}]",
                preset.join(", "),
                native_names.join(", ")
            ));
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("ws/CLAUDE.md", 17_356)]
    #[case("ws/a/.claude/CLAUDE.md", 900)]
    #[case("home/x.md", 400)]
    fn files_have_the_asked_size_and_marker_lines(#[case] path: &str, #[case] size: usize) {
        let c = content(path, size);
        assert_eq!(c.len(), size);
        let lines: Vec<&str> = c.lines().collect();
        assert!(lines[0].ends_with("-START"));
        assert!(lines.last().unwrap().ends_with("-END"));
        let set: std::collections::HashSet<_> = lines.iter().collect();
        assert_eq!(set.len(), lines.len(), "lines are unique");
    }

    #[test]
    fn seen_tells_whole_cut_doubled_and_absent_apart() {
        let f = content("ws/AGENTS.md", 600);
        let whole = seen(&format!("x{f}y"), &f);
        assert!(whole.started && whole.whole && whole.bytes == 600 && whole.doubled == 0);
        let cut = seen(&f[..300], &f);
        assert!(cut.started && !cut.whole && cut.bytes < 300);
        let twice = seen(&format!("{f}{f}"), &f);
        assert!(!twice.whole && twice.doubled == f.lines().count());
        let none = seen("nothing", &f);
        assert!(!none.started && !none.whole && none.bytes == 0 && none.at.is_none());
    }

    #[test]
    fn lines_of_different_files_never_match_each_other() {
        for l in LAYOUTS {
            let all: Vec<String> = l.files.iter().map(|(p, n)| content(p, *n)).collect();
            for (i, a) in all.iter().enumerate() {
                for (j, b) in all.iter().enumerate() {
                    if i != j {
                        assert!(!seen(b, a).started, "{}: {i} in {j}", l.name);
                        assert_eq!(seen(b, a).bytes, 0, "{}: {i} in {j}", l.name);
                    }
                }
            }
        }
    }

    #[test]
    fn shown_names_match_the_layout_paths() {
        let run = Path::new("/r/hook");
        assert_eq!(shown_name("ws/static/CLAUDE.md", run), "static/CLAUDE.md");
        assert_eq!(
            shown_name("home/.claude/CLAUDE.md", run),
            "~/.claude/CLAUDE.md"
        );
        assert_eq!(shown_name("CLAUDE.md", run), "/r/hook/CLAUDE.md");
    }

    /// A file whose lines all arrived once but not in order is not whole
    /// (the shuffled parts of issue 30).
    #[test]
    fn a_file_with_its_lines_out_of_order_is_not_whole() {
        let f = content("ws/AGENTS.md", 2_000);
        let lines: Vec<&str> = f.lines().collect();
        let half = lines.len() / 2;
        let shuffled = format!(
            "{}\n{}\n",
            lines[half..].join("\n"),
            lines[..half].join("\n")
        );
        let s = seen(&shuffled, &f);
        assert!(
            s.started && !s.ordered && !s.whole && s.doubled == 0,
            "{s:?}"
        );
        assert!(seen(&f, &f).ordered && seen(&f, &f).whole);
    }

    fn label(k: u32, n: u32, body: &str) -> String {
        format!("{PART_LABEL}{k} of {n}. The {n} parts are one message.\n\n{body}\n")
    }

    #[rstest]
    #[case::in_order(vec![(1, 3), (2, 3), (3, 3)], 3, Ok(3))]
    #[case::one_part_no_label(vec![], 0, Ok(0))]
    #[case::one_part_but_more_wanted(vec![], 4, Err("0 parts"))]
    #[case::shuffled(vec![(1, 3), (3, 3), (2, 3)], 0, Err("[1, 3, 2]"))]
    #[case::missing(vec![(1, 3), (3, 3)], 0, Err("[1, 3]"))]
    #[case::twice(vec![(1, 2), (1, 2), (2, 2)], 0, Err("[1, 1, 2]"))]
    #[case::mixed_totals(vec![(1, 2), (2, 3)], 0, Err("not 1..=2"))]
    #[case::fewer_than_the_layout_makes(vec![(1, 2), (2, 2)], 4, Err("2 parts"))]
    fn parts_must_arrive_in_number_order_and_complete(
        #[case] labels: Vec<(u32, u32)>,
        #[case] min: u32,
        #[case] want: Result<u32, &str>,
    ) {
        let text: String = labels.iter().map(|(k, n)| label(*k, *n, "body")).collect();
        match (check_parts(&text, min), want) {
            (Ok(n), Ok(w)) => assert_eq!(n, w),
            (Err(e), Err(w)) => assert!(e.contains(w), "{e}"),
            (got, want) => panic!("{got:?}, want {want:?}"),
        }
    }

    /// The two files of the claude-user layout, as the model would get
    /// them: natively (no headings) and from the adapter (headings).
    fn user_layout_texts() -> (String, String) {
        let l = &super::super::layouts::CLAUDE_USER;
        let files: Vec<String> = l.files.iter().map(|(p, n)| content(p, *n)).collect();
        let native = files.join("\n");
        let hooked = format!(
            "{HEADING}~/.claude/CLAUDE.md\n\n{}\n\n{HEADING}CLAUDE.md\n\n{}",
            files[0], files[1]
        );
        (native, hooked)
    }

    fn judged(native: &str, hooked: &str) -> Vec<String> {
        judge(
            Agent::Claude,
            &super::super::layouts::CLAUDE_USER,
            native,
            hooked,
            Path::new("/r/hook"),
        )
        .problems
    }

    #[test]
    fn the_native_line_names_each_file_whole_cut_or_missing() {
        let l = &super::super::layouts::AIRFLOW;
        let first = content(l.files[0].0, l.files[0].1);
        let line = native_line(Agent::Qwen, l, &first);
        assert!(line.contains(&format!("{} B", first.len())), "{line}");
        assert!(line.contains("ws/AGENTS.md whole"), "{line}");
        assert!(line.contains("ws/providers/AGENTS.md not loaded"), "{line}");
        let cut = native_line(Agent::Qwen, l, &first[..first.len() / 2]);
        assert!(
            cut.contains("ws/AGENTS.md ") && !cut.contains("whole"),
            "{cut}"
        );
    }

    /// Copilot CLI keeps its own loading with the hook (decision 0067): its
    /// wrappers and order are no failure, a file arriving twice is. Qwen
    /// Code's loading is switched off, so the same text fails for it.
    #[test]
    fn a_kept_native_loading_passes_alone_and_fails_doubled() {
        let l = &super::super::layouts::AIRFLOW;
        let files: Vec<String> = l.files.iter().map(|(p, n)| content(p, *n)).collect();
        let copilot: String = files
            .iter()
            .map(|f| format!("<custom_instruction>\n{f}\n</custom_instruction>\n"))
            .collect();
        let j = judge(Agent::Copilot, l, &copilot, &copilot, Path::new("/r/hook"));
        assert_eq!(j.problems, Vec::<String>::new());
        let doubled = format!("{copilot}{HEADING}AGENTS.md\n\n{}", files[0]);
        let j = judge(Agent::Copilot, l, &copilot, &doubled, Path::new("/r/hook"));
        assert!(
            j.problems.iter().any(|p| p.contains("lines twice")),
            "{:?}",
            j.problems
        );
        let qwen: String = l
            .files
            .iter()
            .zip(&files)
            .map(|((p, _), f)| format!("--- Context from: {p} ---\n{f}"))
            .collect();
        let j = judge(Agent::Qwen, l, &qwen, &qwen, Path::new("/r/hook"));
        assert!(
            j.problems.iter().any(|p| p.contains("native copy")),
            "{:?}",
            j.problems
        );
        assert!(
            j.problems
                .iter()
                .any(|p| p.contains("no `Instructions from: ")),
            "{:?}",
            j.problems
        );
    }

    #[test]
    fn a_faithful_hooked_run_passes() {
        let (native, hooked) = user_layout_texts();
        assert_eq!(judged(&native, &hooked), Vec::<String>::new());
    }

    /// R-HOOK-7: a comparison cannot pass on an empty native run.
    #[rstest]
    #[case::nothing("")]
    #[case::one_of_two_files("E2E-L-HOME--CLAUDE-CLAUDE-MD-START\n")]
    fn an_empty_or_short_native_run_fails(#[case] native: &str) {
        let (_, hooked) = user_layout_texts();
        let p = judged(native, &hooked);
        assert!(
            p.iter().any(|p| p.contains("the agent alone delivered")),
            "{p:?}"
        );
    }

    /// The hooked run must be the adapter's: a native copy passing as the
    /// hook's (no headings) fails, and so does the native wrapper.
    #[test]
    fn a_hooked_run_without_the_adapters_headings_fails() {
        let (native, _) = user_layout_texts();
        let p = judged(&native, &native);
        assert!(
            p.iter().any(|p| p.contains("no `Instructions from: ")),
            "{p:?}"
        );
        let (_, hooked) = user_layout_texts();
        let copied = format!("{hooked}\n(project instructions, checked into the codebase)");
        assert!(
            judged(&native, &copied)
                .iter()
                .any(|p| p.contains("native copy"))
        );
    }

    #[test]
    fn a_shuffled_file_or_swapped_files_fail() {
        let (native, hooked) = user_layout_texts();
        let l = &super::super::layouts::CLAUDE_USER;
        let second = content(l.files[1].0, l.files[1].1);
        let lines: Vec<&str> = second.lines().collect();
        let half = lines.len() / 2;
        let shuffled = format!("{}\n{}", lines[half..].join("\n"), lines[..half].join("\n"));
        let p = judged(&native, &hooked.replace(second.trim_end(), &shuffled));
        assert!(
            p.iter().any(|p| p.starts_with("ws/CLAUDE.md: native")),
            "{p:?}"
        );
        let first = content(l.files[0].0, l.files[0].1);
        let swapped =
            format!("{HEADING}CLAUDE.md\n\n{second}\n\n{HEADING}~/.claude/CLAUDE.md\n\n{first}");
        let p = judged(&native, &swapped);
        assert!(
            p.iter().any(|p| p.contains("out of composed order")),
            "{p:?}"
        );
    }

    #[test]
    fn a_part_over_the_size_fails() {
        let text = format!(
            "{}{}",
            label(1, 2, &"x".repeat(PART_BYTES)),
            label(2, 2, "small")
        );
        let e = check_parts(&text, 0).unwrap_err();
        assert!(e.contains("part 1 holds"), "{e}");
        // Each part ends at its frame's close (Codex keeps our frame).
        let framed = format!(
            "<system-reminder>\n{}</system-reminder>\n<system-reminder>\n{}</system-reminder>\n",
            label(1, 2, "a"),
            label(2, 2, "b")
        );
        assert_eq!(check_parts(&framed, 2), Ok(2));
        assert!(part_labels(&framed).iter().all(|l| l.2 < 200));
    }
}
