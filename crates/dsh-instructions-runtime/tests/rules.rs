//! The rule files around a cwd (SPEC §14, R-RULE-1..3, R-RULE-8), as
//! `inspect_rules` reports them for `explain` and `check`, on both
//! providers: the in-memory one and cap-std over a temporary directory,
//! with the same tree and the same expectations.

mod common;

use std::sync::Arc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::CapStdProvider;
use dsh_instructions_runtime::{
    discovery::{
        CancellationToken, FsProvider,
        cap_std::ambient_authority,
        memory::{MemNode, MemoryProvider},
    },
    home::{DshHome, HomeLabel},
    report::{InspectedRules, RuleFate},
    state::ConfigInput,
};
use dsh_instructions_state::{Config, config::RuleFormat};

/// One fixture entry: a file, a FIFO, or a link (target text).
enum Node {
    File(String),
    Fifo,
    Link(&'static str),
}

fn file(text: &str) -> Node {
    Node::File(text.to_owned())
}

/// A tree below `/p` (the project, marker `.git`) and `/h` (the OS home;
/// `/h/.dsh` the default DSH home), built on either provider.
trait Fixture: Sized {
    fn build(nodes: &[(&str, Node)]) -> Self;
    fn provider(&self) -> Arc<dyn FsProvider>;
    fn path(&self, virtual_path: &str) -> Utf8PathBuf;
}

struct Memory(MemoryProvider);

impl Fixture for Memory {
    fn build(nodes: &[(&str, Node)]) -> Self {
        let fs = MemoryProvider::new(vec!["/p".into(), "/h/.dsh".into(), "/h/.claude".into()]);
        fs.insert(Utf8Path::new("/p/.git"), MemNode::dir());
        fs.insert(Utf8Path::new("/h/.dsh"), MemNode::dir());
        for (path, node) in nodes {
            let node = match node {
                Node::File(t) => MemNode::file(t.as_bytes().to_vec()),
                Node::Fifo => MemNode::fifo(),
                Node::Link(target) => MemNode::link(*target),
            };
            fs.insert(Utf8Path::new(path), node);
        }
        Self(fs)
    }
    fn provider(&self) -> Arc<dyn FsProvider> {
        Arc::new(self.0.clone())
    }
    fn path(&self, virtual_path: &str) -> Utf8PathBuf {
        virtual_path.into()
    }
}

struct Disk {
    _tmp: tempfile::TempDir,
    base: Utf8PathBuf,
    provider: CapStdProvider,
}

impl Fixture for Disk {
    fn build(nodes: &[(&str, Node)]) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        for d in ["p/.git", "h/.dsh", "h/.claude"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        for (path, node) in nodes {
            let real = base.join(&path[1..]);
            std::fs::create_dir_all(real.parent().unwrap()).unwrap();
            match node {
                Node::File(t) => std::fs::write(&real, t).unwrap(),
                Node::Fifo => {
                    rustix::fs::mkfifoat(rustix::fs::CWD, real.as_std_path(), 0o644.into())
                        .unwrap();
                }
                Node::Link(target) => {
                    let target = if let Some(abs) = target.strip_prefix('/') {
                        base.join(abs)
                    } else {
                        Utf8PathBuf::from(*target)
                    };
                    std::os::unix::fs::symlink(target, &real).unwrap();
                }
            }
        }
        let roots = ["p", "h/.dsh", "h/.claude"].map(|r| base.join(r));
        let provider = CapStdProvider::new(roots, ambient_authority()).unwrap();
        Self {
            _tmp: tmp,
            base,
            provider,
        }
    }
    fn provider(&self) -> Arc<dyn FsProvider> {
        Arc::new(self.provider.clone())
    }
    fn path(&self, virtual_path: &str) -> Utf8PathBuf {
        self.base.join(&virtual_path[1..])
    }
}

fn config(formats: &[&str]) -> Config {
    let input: ConfigInput = serde_json::from_value(serde_json::json!({
        "max_bytes": 65536,
        "rule_formats": formats,
    }))
    .unwrap();
    input.resolve().unwrap().config
}

async fn seen<F: Fixture>(fx: &F, config: &Config, cwd: &str, touches: &[&str]) -> InspectedRules {
    let home = DshHome {
        path: fx.path("/h/.dsh"),
        label: HomeLabel::Default,
    };
    let touches: Vec<Utf8PathBuf> = touches.iter().map(|t| fx.path(t)).collect();
    let cwd = fx.path(cwd);
    let cancel = CancellationToken::new();
    let run = async {
        let opened = common::open(fx.provider(), cwd.as_str(), Some(config.clone()), &home).await;
        opened.inspect_rules(&touches, &cancel).await
    };
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("no stall")
        .unwrap()
}

/// (display path, kind word, attached at cwd) of every rule, in order.
fn rows(seen: &InspectedRules) -> Vec<(String, String, bool)> {
    seen.rules
        .iter()
        .map(|r| {
            let kind = match &r.fate {
                RuleFate::AlwaysOn => "always on".to_owned(),
                RuleFate::PathScoped { globs } => format!("path-scoped {}", globs.join(" ")),
                RuleFate::Manual => "manual".to_owned(),
                RuleFate::Unavailable { field, .. } => {
                    format!("unavailable {}", field.as_deref().unwrap_or("read"))
                }
            };
            (r.path.clone(), kind, r.attached_at_cwd)
        })
        .collect()
}

fn row(path: &str, kind: &str, attached: bool) -> (String, String, bool) {
    (path.to_owned(), kind.to_owned(), attached)
}

fn every_format_tree() -> Vec<(&'static str, Node)> {
    vec![
        (
            "/p/.claude/rules/api.md",
            file("---\npaths: \"src/api/**\"\n---\nAPI."),
        ),
        ("/p/.claude/rules/a/z.md", file("Always, nested.")),
        ("/p/.claude/rules/a.md", file("Always.")),
        (
            "/p/.cursor/rules/ts.mdc",
            file("---\nglobs: *.ts,*.tsx\nalwaysApply: false\n---\nTS."),
        ),
        (
            "/p/.cursor/rules/m.mdc",
            file("---\ndescription: on request\n---\nManual."),
        ),
        ("/p/.github/copilot-instructions.md", file("Copilot root.")),
        (
            "/p/.github/instructions/py.instructions.md",
            file("---\napplyTo: \"**/*.py\"\n---\nPy."),
        ),
        (
            "/p/.windsurf/rules/w.md",
            file("---\ntrigger: always_on\n---\nW."),
        ),
        (
            "/p/.windsurf/rules/deep/x.md",
            file("not read: windsurf is flat"),
        ),
        ("/p/pkg/.claude/rules/pkg.md", file("Pkg always.")),
        ("/p/pkg/sub/.claude/rules/sub.md", file("Sub always.")),
        (
            "/h/.claude/rules/mine.md",
            file("---\npaths: [\"docs/*.md\"]\n---\nMine."),
        ),
    ]
}

async fn every_format_in_order_with_kinds<F: Fixture>() {
    // R-RULE-1 (places, formats, the user's rules), R-RULE-2 (kinds),
    // R-RULE-8 (order: user rules first, then by directory, formats in
    // fixed order, byte order within a format; `a.md` before `a/z.md`).
    let fx = F::build(&every_format_tree());
    let all = config(&["windsurf", "copilot", "cursor", "claude"]);
    let got = seen(&fx, &all, "/p/pkg", &[]).await;
    assert_eq!(
        rows(&got),
        [
            row("~/.claude/rules/mine.md", "path-scoped docs/*.md", false),
            row(".claude/rules/a.md", "always on", true),
            row(".claude/rules/a/z.md", "always on", true),
            row(".claude/rules/api.md", "path-scoped src/api/**", false),
            row(".cursor/rules/m.mdc", "manual", false),
            row(".cursor/rules/ts.mdc", "path-scoped *.ts *.tsx", false),
            row(".github/copilot-instructions.md", "always on", true),
            row(
                ".github/instructions/py.instructions.md",
                "path-scoped **/*.py",
                false
            ),
            row(".windsurf/rules/w.md", "always on", true),
            row("pkg/.claude/rules/pkg.md", "always on", true),
        ]
    );
    assert!(got.skipped.is_empty() && got.notes.is_empty(), "{got:?}");
    assert!(!got.has_unloadable());
    assert_eq!(got.rules[9].dir.as_deref(), Some("pkg"));
    assert_eq!(got.rules[0].dir, None);
    // Only the configured formats (R-CFG-12).
    let claude = seen(&fx, &config(&["claude"]), "/p", &[]).await;
    assert!(claude.rules.iter().all(|r| r.format == RuleFormat::Claude));
    assert_eq!(claude.rules.len(), 4);
    // None at all by default.
    assert_eq!(
        seen(&fx, &config(&[]), "/p/pkg", &[]).await,
        InspectedRules::default()
    );
}

async fn touches_attach_matching_and_nested_rules<F: Fixture>() {
    // R-RULE-3 (globs relative to D, names at any depth, the user's globs
    // relative to the project root) and the lifecycle's reading (a nested directory's
    // always-on rules load where a touch reconciles it).
    let fx = F::build(&every_format_tree());
    let all = config(&["claude", "cursor", "copilot", "windsurf"]);
    let touches = [
        "/p/src/api/v1/h.ts",
        "/p/pkg/sub/main.py",
        "/p/docs/guide.md",
    ];
    let got = seen(&fx, &all, "/p", &touches).await;
    let by = |path: &str| -> Vec<String> {
        let rule = got.rules.iter().find(|r| r.path == path).expect(path);
        rule.attached_by
            .iter()
            .map(|p| p.as_str().rsplit_once("/p/").unwrap().1.to_owned())
            .collect()
    };
    assert_eq!(by(".claude/rules/api.md"), ["src/api/v1/h.ts"]);
    assert_eq!(by(".cursor/rules/ts.mdc"), ["src/api/v1/h.ts"]);
    assert_eq!(
        by(".github/instructions/py.instructions.md"),
        ["pkg/sub/main.py"]
    );
    assert_eq!(by("~/.claude/rules/mine.md"), ["docs/guide.md"]);
    // Not in the chain at the root: attached by the touch below it.
    assert_eq!(by("pkg/.claude/rules/pkg.md"), ["pkg/sub/main.py"]);
    assert_eq!(by("pkg/sub/.claude/rules/sub.md"), ["pkg/sub/main.py"]);
    let pkg = got
        .rules
        .iter()
        .find(|r| r.path == "pkg/.claude/rules/pkg.md")
        .unwrap();
    assert!(!pkg.attached_at_cwd);
    // Manual rules and chain always-on rules are attached by no touch.
    assert!(by(".cursor/rules/m.mdc").is_empty());
    assert!(by(".claude/rules/a.md").is_empty());
    // A directory touch matches only a glob that matches the directory.
    let dir_touch = seen(&fx, &all, "/p", &["/p/src/api"]).await;
    let api = dir_touch
        .rules
        .iter()
        .find(|r| r.path == ".claude/rules/api.md")
        .unwrap();
    assert!(api.attached_by.is_empty());
}

async fn bad_rules_are_reported_and_disturb_nothing_else<F: Fixture>() {
    // R-RULE-1 (bounds, FIFOs, loops), R-RULE-2 (unavailable with the
    // field named, a glob that does not compile dropped).
    let many: Vec<String> = (0..65).map(|i| format!("g{i}")).collect();
    let mut nodes = vec![
        ("/p/.claude/rules/good.md", file("Good.")),
        ("/p/.claude/rules/list.md", file("---\n- a\n---\nx")),
        ("/p/.claude/rules/num.md", file("---\npaths: 3\n---\nx")),
        (
            "/p/.claude/rules/dropped.md",
            file("---\npaths: [\"src/[a\", \"*.rs\"]\n---\nx"),
        ),
        (
            "/p/.claude/rules/none.md",
            file("---\npaths: \"src/[a\"\n---\nx"),
        ),
        ("/p/.claude/rules/x.md", Node::Fifo),
        ("/p/.claude/rules/loop", Node::Link(".")),
        ("/p/.claude/rules/out.md", Node::Link("/h/secret.md")),
        ("/h/secret.md", file("secret")),
    ];
    let too_many = format!("---\nglobs: \"{}\"\n---\nx", many.join(","));
    nodes.push(("/p/.cursor/rules/many.mdc", Node::File(too_many)));
    let big: Vec<String> = (0..10_000)
        .map(|i| format!("/p/.windsurf/rules/f{i:05}.md"))
        .collect();
    for p in &big {
        nodes.push((p.as_str(), file("")));
    }
    let fx = F::build(&nodes);
    let got = seen(&fx, &config(&["claude", "cursor", "windsurf"]), "/p", &[]).await;
    let fate = |path: &str| {
        got.rules
            .iter()
            .find(|r| r.path == path)
            .map(|r| r.fate.clone())
            .unwrap_or_else(|| panic!("{path} not listed"))
    };
    let field = |path: &str| match fate(path) {
        RuleFate::Unavailable { field, .. } => field,
        other => panic!("{path}: {other:?}"),
    };
    assert_eq!(fate(".claude/rules/good.md"), RuleFate::AlwaysOn);
    assert_eq!(
        field(".claude/rules/list.md").as_deref(),
        Some("front matter")
    );
    assert_eq!(field(".claude/rules/num.md").as_deref(), Some("paths"));
    assert_eq!(field(".claude/rules/none.md").as_deref(), Some("paths"));
    assert_eq!(field(".cursor/rules/many.mdc").as_deref(), Some("globs"));
    assert_eq!(
        fate(".claude/rules/dropped.md"),
        RuleFate::PathScoped {
            globs: vec!["*.rs".into()]
        }
    );
    assert_eq!(got.notes.len(), 1, "{:?}", got.notes);
    assert!(got.notes[0].starts_with(".claude/rules/dropped.md: paths: glob `src/[a` dropped"));
    let skipped = got.skipped.join("\n");
    assert!(
        skipped.contains(".claude/rules/x.md: not a regular file, never opened"),
        "{skipped}"
    );
    assert!(
        skipped.contains(".claude/rules/out.md: outside trusted roots"),
        "{skipped}"
    );
    assert!(
        skipped.contains(".windsurf/rules: more than 256 rule files, 9744 skipped"),
        "{skipped}"
    );
    // The loop re-lists the directory to the depth bound; the same files
    // under the longer names are one rule each, at their first name.
    assert!(
        !got.rules.iter().any(|r| r.path.contains("loop/")),
        "{:?}",
        rows(&got)
    );
    assert!(got.has_unloadable());
    assert_eq!(
        got.rules
            .iter()
            .filter(|r| r.path.starts_with(".windsurf/"))
            .count(),
        256
    );
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $( #[tokio::test] async fn $name() { super::$name::<super::Memory>().await; } )*
        }
        mod disk {
            $( #[tokio::test] async fn $name() { super::$name::<super::Disk>().await; } )*
        }
    };
}

both!(
    every_format_in_order_with_kinds,
    touches_attach_matching_and_nested_rules,
    bad_rules_are_reported_and_disturb_nothing_else,
);
