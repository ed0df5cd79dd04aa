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
use super::layouts::Layout;
use super::mock::Mock;
use super::scenarios::{Plan, Step};

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

/// What of one file reached the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Its first line was there.
    pub started: bool,
    /// Every line exactly once.
    pub whole: bool,
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
        doubled: 0,
        bytes: 0,
        at: None,
    };
    for (i, line) in file.lines().enumerate() {
        let n = count(text, line);
        if i == 0 {
            s.started = n > 0;
            s.at = text.find(line);
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
    }
    s
}

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
    let ws = run.join("ws");
    let dirs = Dirs {
        run: run.to_owned(),
        ws: ws.clone(),
        home: run.join("home"),
        cwd: if layout.cwd == "." {
            ws.clone()
        } else {
            ws.join(layout.cwd)
        },
    };
    let plan = Plan {
        files: layout
            .files
            .iter()
            .map(|(p, n)| ((*p).to_owned(), content(p, *n)))
            .collect(),
        cwd: layout.cwd.to_owned(),
        steps: Vec::new(),
        needs: super::scenarios::Needs::Nothing,
    };
    super::prepare(&plan, &dirs)?;
    let mut mock = Mock::start(
        &dirs.ws,
        &dirs.cwd,
        &run.join("requests.jsonl"),
        super::MOCK_BOUND,
    )?;
    agents::write_endpoint_config(agent, &dirs, mock.port())?;
    if hooked {
        agents::run_installer(agent, &dirs, bin)?;
    } else if agent == Agent::Gemini {
        // Gemini CLI loads only GEMINI.md by default; a user of AGENTS.md
        // names it (harness README, "Switching … off": measured).
        agents::enable_gemini_agents_md(&dirs)?;
    }
    let mut session = Session::new(agent, installed, &dirs, mock.port());
    let prompt = "Hello [p:t1] [mock:text]";
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

/// The run-dir path of a file as `explain` names it (`~/…` or root-relative).
fn explain_name(path: &str) -> String {
    match path.strip_prefix("home/") {
        Some(p) => format!("~/{p}"),
        None => path.strip_prefix("ws/").unwrap_or(path).to_owned(),
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

/// The number of the part whose text holds byte `at` of `text`: the label
/// nearest before it; 0 for a message in one part (no label).
fn part_at(text: &str, at: usize) -> u32 {
    let before = &text[..text.floor_char_boundary(at)];
    before.rfind(PART_LABEL).map_or(0, |i| {
        before[i + PART_LABEL.len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|k| k.parse().ok())
            .unwrap_or(0)
    })
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
    let native = one_turn(agent, layout, installed, bin, &native_dir, false)?;
    let hooked = one_turn(agent, layout, installed, bin, &hook_dir, true)?;
    let files: Vec<(&str, String)> = layout
        .files
        .iter()
        .map(|(p, n)| (*p, content(p, *n)))
        .collect();
    let n: Vec<Seen> = files.iter().map(|(_, c)| seen(&native, c)).collect();
    let h: Vec<Seen> = files.iter().map(|(_, c)| seen(&hooked, c)).collect();
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
    // The composed order: delivered files sorted by where they start must
    // keep the layout's order. A message in several parts is read in the
    // order of the parts' own labels ("part K of N", decision 0018): Claude
    // Code places hook answers in the order they finished, so the order of
    // the blocks in the request is not the order the model is told to read.
    let mut order: Vec<((u32, usize), usize)> = h
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.at.map(|at| ((part_at(&hooked, at), at), i)))
        .collect();
    order.sort();
    let idx: Vec<usize> = order.iter().map(|(_, i)| *i).collect();
    if idx.windows(2).any(|w| w[0] > w[1]) {
        let names: Vec<&str> = idx.iter().map(|i| files[*i].0).collect();
        problems.push(format!("read out of composed order: {}", names.join(", ")));
    }
    for sig in agent.native_signatures() {
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
        "bytes {agent:<6} {:<12} native {nb:>6} B in {nf} files ({nw} whole)  hook {hb:>6} B in {hf} files ({hw} whole){}",
        layout.name,
        if missing.is_empty() {
            String::new()
        } else {
            format!("  short: {}", missing.join(", "))
        }
    );
    println!("     {line}");
    super::lock_table().push(line);
    if agent == Agent::Claude {
        let mut native_names: Vec<String> = files
            .iter()
            .enumerate()
            .filter(|(i, _)| n[*i].started)
            .map(|(_, (p, _))| explain_name(p))
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
mod part_order_tests {
    use super::*;

    /// Blocks that arrived 2, 1 are read 1, 2: the label decides.
    #[test]
    fn the_part_label_decides_the_reading_order() {
        let text = "x Workspace instructions, part 2 of 2. B-FILE y Workspace instructions, part 1 of 2. A-FILE";
        let b = text.find("B-FILE").unwrap();
        let a = text.find("A-FILE").unwrap();
        assert_eq!(part_at(text, b), 2);
        assert_eq!(part_at(text, a), 1);
        assert_eq!(part_at("one part only A-FILE", 10), 0);
    }
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
    fn explain_names_match_the_layout_paths() {
        assert_eq!(explain_name("ws/static/CLAUDE.md"), "static/CLAUDE.md");
        assert_eq!(
            explain_name("home/.claude/CLAUDE.md"),
            "~/.claude/CLAUDE.md"
        );
    }
}
