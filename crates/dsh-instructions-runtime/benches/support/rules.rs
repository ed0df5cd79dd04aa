//! The rules bench case (issue 32 item 4): a 1,000-file tree whose chain
//! root→cwd holds 10 `.claude/rules/` directories of 5 rules each (one
//! always on, four path-scoped), and the floor for the same job: list the
//! same directories, read every rule, take the globs from its front matter
//! line by line, compile them with globset (as the library does, `*` never
//! crossing `/`), read and hash the always-on ones; on a touch, match the
//! file against every rule of the directories above it and read and hash
//! the rules it attaches. Candidates are done by the plain floor
//! ([`floor::compose`], [`NaiveSession`]) on both sides.

use std::fs;
use std::io;

use camino::{Utf8Path, Utf8PathBuf};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use sha1::{Digest as _, Sha1};

use super::floor::{self, FloorCounts, NaiveSession};
use super::tree::{Shape, Tree, cache_dir};

/// Levels of the chain, the root included: one rules directory each.
pub(crate) const LEVELS: usize = 10;
/// Rules per directory.
pub(crate) const RULES_PER_DIR: usize = 5;
/// Files in the tree, rules and instruction files included.
pub(crate) const FILES: usize = 1_000;
/// Largest file either side reads.
const CAP: u64 = 1 << 20;

/// The front matter of rule `i` of a directory (0: always on).
fn front(i: usize) -> &'static str {
    match i {
        0 => "",
        1 => "---\npaths: \"**/*.rs\"\n---\n",
        2 => "---\npaths:\n  - \"src/**/*.ts\"\n  - \"lib/**/*.ts\"\n---\n",
        3 => "---\npaths: \"docs/*.md\"\n---\n",
        _ => "---\npaths:\n  - \"**/test_*.py\"\n  - \"tests/**\"\n---\n",
    }
}

/// The chain directory at `level` (0 = the root).
fn level_dir(root: &Utf8Path, level: usize) -> Utf8PathBuf {
    let mut d = root.to_owned();
    for l in 1..=level {
        d.push(format!("d{l}"));
    }
    d
}

/// Builds (or reuses) the tree: `repo/` with `.git`, `d1/…/d9` below it,
/// in each level an `AGENTS.md`, `.claude/rules/r0.md…r4.md` and plain
/// source files under `src/` up to [`FILES`] in all; cwd the deepest level.
///
/// # Errors
///
/// Any I/O error while building; a non-UTF-8 directory.
pub(crate) fn tree() -> io::Result<Tree> {
    let dir = cache_dir();
    fs::create_dir_all(&dir)?;
    let base = Utf8PathBuf::from_path_buf(fs::canonicalize(&dir)?.join("rules-50-v1"))
        .map_err(|_| io::Error::other("bench tree path is not UTF-8"))?;
    let root = base.join("repo");
    let home = base.join("home");
    let stamp = base.join(".complete");
    if !stamp.exists() {
        if base.exists() {
            fs::remove_dir_all(&base)?;
        }
        fs::create_dir_all(root.join(".git"))?;
        fs::create_dir_all(&home)?;
        fs::write(home.join("AGENTS.md"), "# user\nBe brief.\n")?;
        let fixed = LEVELS * (RULES_PER_DIR + 1) + 1;
        let per_level = (FILES - fixed) / LEVELS;
        let mut written = fixed;
        for level in 0..LEVELS {
            let d = level_dir(&root, level);
            let rules = d.join(".claude/rules");
            fs::create_dir_all(&rules)?;
            fs::write(
                d.join("AGENTS.md"),
                format!("# level {level}\nBuild with make at level {level}.\n"),
            )?;
            for i in 0..RULES_PER_DIR {
                let body = format!(
                    "# rule {i} of level {level}\n{}\n",
                    "Keep to it. ".repeat(40)
                );
                fs::write(
                    rules.join(format!("r{i}.md")),
                    format!("{}{body}", front(i)),
                )?;
            }
            let src = d.join("src");
            fs::create_dir_all(&src)?;
            let n = if level == LEVELS - 1 {
                FILES - written
            } else {
                per_level
            };
            for k in 0..n {
                let ext = ["rs", "ts", "txt", "py"][k % 4];
                fs::write(src.join(format!("f{k}.{ext}")), format!("// file {k}\n"))?;
            }
            written += n;
        }
        fs::write(&stamp, b"ok")?;
    }
    Ok(Tree {
        shape: Shape::Deep { depth: LEVELS - 1 },
        cwd: level_dir(&root, LEVELS - 1),
        root,
        home,
        base,
        candidate_bytes: 0,
        largest_on_chain: 0,
    })
}

/// The file the touch reads: a `.rs` file in the cwd, matched by the
/// `**/*.rs` rule of every level.
pub(crate) fn touched(tree: &Tree) -> Utf8PathBuf {
    tree.cwd.join("src/f0.rs")
}

/// The library configuration of the case: the defaults with the `claude`
/// rule format on.
///
/// # Panics
///
/// Never: the input is a valid configuration.
pub(crate) fn config() -> dsh_instructions_state::Config {
    let input = dsh_instructions_state::ConfigInput {
        max_bytes: Some(dsh_instructions_state::config::NumberInput::Int(65_536)),
        rule_formats: Some(vec!["claude".to_owned()]),
        ..Default::default()
    };
    input.resolve().expect("a valid configuration").config
}

/// A rule as the floor holds it.
struct FloorRule {
    path: Utf8PathBuf,
    /// Its directory D.
    dir: Utf8PathBuf,
    /// `None`: always on.
    globs: Option<GlobSet>,
    /// Metadata when read (inode, size, mtime), to see it changed.
    stamp: (u64, u64, i64, i64),
}

fn stamp_of(m: &fs::Metadata) -> (u64, u64, i64, i64) {
    use std::os::unix::fs::MetadataExt as _;
    (m.ino(), m.size(), m.mtime(), m.mtime_nsec())
}

/// The rule files of D's `.claude/rules/` (top level: the bench has no
/// subdirectories), sorted, with their metadata; one `read_dir` and one
/// `stat` per file.
fn list(dir: &Utf8Path, counts: &mut FloorCounts) -> Vec<(Utf8PathBuf, fs::Metadata)> {
    let rules = dir.join(".claude/rules");
    counts.stats += 1;
    let Ok(entries) = fs::read_dir(&rules) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|n| {
            let path = rules.join(n);
            counts.stats += 1;
            let m = fs::metadata(&path).ok().filter(fs::Metadata::is_file)?;
            Some((path, m))
        })
        .collect()
}

/// Reads and parses one rule file.
fn load(
    path: Utf8PathBuf,
    dir: &Utf8Path,
    m: &fs::Metadata,
    counts: &mut FloorCounts,
) -> Option<FloorRule> {
    let bytes = hash(&path, counts)?;
    let text = String::from_utf8_lossy(&bytes);
    let globs = globs_of(&text).and_then(|g| compile(&g));
    Some(FloorRule {
        path,
        dir: dir.to_owned(),
        globs,
        stamp: stamp_of(m),
    })
}

/// The floor's globs of a front matter: the `paths:` value, a quoted
/// string or the `- "…"` items under it.
fn globs_of(text: &str) -> Option<Vec<String>> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---")?;
    let mut out = Vec::new();
    let mut in_list = false;
    for line in rest[..end].lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("paths:") {
            let v = v.trim().trim_matches('"');
            in_list = v.is_empty();
            out.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(String::from),
            );
        } else if in_list && let Some(item) = t.strip_prefix("- ") {
            out.push(item.trim().trim_matches('"').to_owned());
        } else {
            in_list = false;
        }
    }
    (!out.is_empty()).then_some(out)
}

fn compile(globs: &[String]) -> Option<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        // The anchoring of R-RULE-3: a glob with no `/` matches at any depth.
        let g = if g.contains('/') {
            g.clone()
        } else {
            format!("**/{g}")
        };
        b.add(GlobBuilder::new(&g).literal_separator(true).build().ok()?);
    }
    b.build().ok()
}

fn hash(path: &Utf8Path, counts: &mut FloorCounts) -> Option<Vec<u8>> {
    let bytes = fs::read(path).ok()?;
    counts.reads += 1;
    counts.bytes_read += bytes.len() as u64;
    std::hint::black_box(Sha1::digest(&bytes));
    Some(bytes)
}

/// The floor's session: the candidates' naive session and the rules.
pub(crate) struct FloorRules {
    session: NaiveSession,
    rules: Vec<FloorRule>,
    attached: Vec<bool>,
    /// Running totals of the rule work.
    pub counts: FloorCounts,
}

impl FloorRules {
    /// A complete baseline with rules: the candidates (as [`floor::compose`]
    /// does), then every rules directory of the chain listed, every rule
    /// read and its globs compiled, the always-on ones hashed.
    pub(crate) fn baseline(tree: &Tree) -> Self {
        let session = NaiveSession::start(&tree.home, &tree.cwd, CAP);
        let mut counts = FloorCounts::default();
        let mut rules = Vec::new();
        for dir in floor::chain(&tree.root, &tree.cwd) {
            for (path, m) in list(&dir, &mut counts) {
                rules.extend(load(path, &dir, &m, &mut counts));
            }
        }
        let attached = rules.iter().map(|r| r.globs.is_none()).collect();
        Self {
            session,
            rules,
            attached,
            counts,
        }
    }

    /// A touch of `file`: the candidates' reconcile; every rules directory
    /// of the chain listed again and each rule stated (one read again if its
    /// metadata moved, as ours revalidates); then every rule not yet
    /// attached whose directory holds the file, matched, and the matches
    /// read and hashed.
    pub(crate) fn touch(&mut self, file: &Utf8Path) {
        self.session.touch(file);
        let dirs: Vec<Utf8PathBuf> = self
            .rules
            .iter()
            .map(|r| r.dir.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        for dir in dirs {
            for (path, m) in list(&dir, &mut self.counts) {
                let Some(i) = self.rules.iter().position(|r| r.path == path) else {
                    if let Some(r) = load(path, &dir, &m, &mut self.counts) {
                        self.attached.push(r.globs.is_none());
                        self.rules.push(r);
                    }
                    continue;
                };
                if self.rules[i].stamp != stamp_of(&m)
                    && let Some(r) = load(path, &dir, &m, &mut self.counts)
                {
                    self.rules[i] = r;
                }
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            if self.attached[i] {
                continue;
            }
            let (Some(set), Ok(rel)) = (&r.globs, file.strip_prefix(&r.dir)) else {
                continue;
            };
            if set.is_match(rel.as_str()) && hash(&r.path, &mut self.counts).is_some() {
                self.attached[i] = true;
            }
        }
    }

    /// Rules attached so far (always-on ones included).
    pub(crate) fn attached(&self) -> usize {
        self.attached.iter().filter(|a| **a).count()
    }

    /// Content bytes of candidates and rules read so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.session.counts.bytes_read + self.counts.bytes_read
    }
}
