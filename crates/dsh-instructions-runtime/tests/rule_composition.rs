//! Rules composed into what the model sees (SPEC R-RULE-4, R-RULE-5), on
//! both providers: the in-memory one and cap-std over a temporary
//! directory, with the same tree, the same steps and the same expected
//! texts (written from SPEC R-REN-2/3 and R-RULE-5 by hand).

mod common;
use common::config_of;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::{
    CancellationToken, CapStdProvider,
    memory::{MemNode, MemoryProvider},
    provider::{Call, Forward, Observe},
};
use dsh_instructions_runtime::{
    BatchItem, Decision, Host, Instance, ToolExecution, WorkspaceMessage,
    discovery::{FsProvider, cap_std::ambient_authority},
    host_support::MemoryHost,
};
use dsh_instructions_state::{Config, Digest, source::Action};
use rstest::rstest;

const SET_TAIL: &str = "Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.";

/// Where the files live: `/repo` (marker `.git`) and the DSH home.
enum Files {
    Memory(MemoryProvider),
    Disk {
        _tmp: tempfile::TempDir,
        base: Utf8PathBuf,
    },
}

impl Files {
    fn new(kind: &str) -> Self {
        match kind {
            "memory" => {
                let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
                fs.insert("/repo/.git".into(), MemNode::dir());
                Files::Memory(fs)
            }
            _ => {
                let tmp = tempfile::tempdir().unwrap();
                let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
                for d in ["repo/.git", "home/u/.dsh"] {
                    std::fs::create_dir_all(base.join(d)).unwrap();
                }
                Files::Disk { _tmp: tmp, base }
            }
        }
    }

    fn path(&self, virtual_path: &str) -> Utf8PathBuf {
        match self {
            Files::Memory(_) => virtual_path.into(),
            Files::Disk { base, .. } => base.join(&virtual_path[1..]),
        }
    }

    fn write(&self, virtual_path: &str, text: &str) {
        match self {
            Files::Memory(fs) => fs.insert(Utf8Path::new(virtual_path), MemNode::file(text)),
            Files::Disk { .. } => {
                let real = self.path(virtual_path);
                std::fs::create_dir_all(real.parent().unwrap()).unwrap();
                std::fs::write(&real, text).unwrap();
            }
        }
    }

    fn remove(&self, virtual_path: &str) {
        match self {
            Files::Memory(fs) => assert!(fs.remove(Utf8Path::new(virtual_path))),
            Files::Disk { .. } => std::fs::remove_file(self.path(virtual_path)).unwrap(),
        }
    }

    fn provider(&self) -> Arc<dyn FsProvider> {
        match self {
            Files::Memory(fs) => Arc::new(fs.clone()),
            Files::Disk { .. } => {
                let roots = ["/repo", "/home/u/.dsh"].map(|r| self.path(r));
                Arc::new(CapStdProvider::new(roots, ambient_authority()).unwrap())
            }
        }
    }
}

/// Counts the listings of the provider it observes ([`Forward`] passes
/// every call on, its directory batches and `probe_dirs_missing` among
/// them, as a product's decorator must).
#[derive(Debug, Default)]
struct Listings(Arc<AtomicUsize>);

impl Observe for Listings {
    fn before(&self, call: Call<'_>) {
        if let Call::ListDir(_) = call {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct World {
    /// Directory listings the instance's provider made so far.
    lists: Arc<AtomicUsize>,
    files: Files,
    host: Arc<MemoryHost>,
    instance: Instance,
    step: u32,
}

impl World {
    async fn new(kind: &str, files: &[(&str, &str)], config: Config) -> Self {
        Self::at(kind, files, config, "/repo").await
    }

    async fn at(kind: &str, files: &[(&str, &str)], config: Config, cwd: &str) -> Self {
        let fs = Files::new(kind);
        for (path, text) in files {
            fs.write(path, text);
        }
        let cwd = fs.path(cwd);
        let host = Arc::new(MemoryHost::new(cwd.clone()));
        let lists = Arc::new(AtomicUsize::new(0));
        let provider: Arc<dyn FsProvider> =
            Arc::new(Forward::new(fs.provider(), Listings(Arc::clone(&lists))));
        let home = DshHome {
            path: fs.path("/home/u/.dsh"),
            label: HomeLabel::EnvVar,
        };
        let instance = common::open(provider, cwd.as_str(), Some(config), &home)
            .await
            .instance(host.clone() as Arc<dyn Host>)
            .expect("mounted inside a runtime");
        Self {
            lists,
            files: fs,
            host,
            instance,
            step: 0,
        }
    }

    async fn prompt(&mut self) -> Option<WorkspaceMessage> {
        self.step += 1;
        let decision = Decision::Enter(vec![BatchItem {
            message: "hi".to_owned(),
            claimed: true,
        }]);
        let out = self
            .instance
            .pre_step(self.step, decision, &CancellationToken::new())
            .await
            .expect("not cancelled");
        if let Some(batch) = &out.batch {
            self.host.append_batch(batch);
        }
        out.entered
    }

    async fn read(&self, virtual_path: &str) {
        self.instance.tool_result(&ToolExecution {
            name: "read".into(),
            arguments: serde_json::json!({ "file_path": self.files.path(virtual_path).as_str() }),
            token: format!("t{}", self.step),
            parent: None,
            is_error: false,
            cancelled: false,
        });
        self.instance.settle().await;
    }
}

fn rules_config(formats: &[&str], max_bytes: u64) -> Config {
    config_of(serde_json::json!({ "max_bytes": max_bytes, "rule_formats": formats }))
}

fn changes(m: &WorkspaceMessage) -> Vec<(Action, String)> {
    m.source
        .changes
        .iter()
        .map(|c| (c.action, c.path.clone()))
        .collect()
}

fn frame(body: &str) -> String {
    format!("<system-reminder>\n{body}\n</system-reminder>")
}

/// The fast path that skips settled directories must not hide a rule's
/// edit: the directory's candidate files are unchanged, only its rules
/// directory moved (R-RULE-4).
#[rstest]
#[tokio::test]
async fn an_always_on_rule_edit_in_a_known_directory_is_a_replace_r_rule_4(
    #[values("memory", "disk")] kind: &str,
) {
    let mut w = World::new(
        kind,
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/pkg/AGENTS.md", "pkg"),
            ("/repo/pkg/.claude/rules/style.md", "style one"),
            ("/repo/pkg/lib.rs", "code"),
        ],
        rules_config(&["claude"], 65_536),
    )
    .await;
    w.prompt().await.expect("baseline");
    w.read("/repo/pkg/lib.rs").await;
    let inbox = w.instance.pending();
    assert_eq!(
        changes(&inbox[0]),
        [
            (Action::Set, "pkg/AGENTS.md".to_owned()),
            (Action::Set, "pkg/.claude/rules/style.md".to_owned())
        ]
    );
    w.prompt().await.expect("the set enters");
    // Unchanged: nothing to say.
    assert_eq!(w.prompt().await, None);
    w.files
        .write("/repo/pkg/.claude/rules/style.md", "style two, longer");
    let m = w.prompt().await.expect("the edit is seen");
    assert_eq!(
        changes(&m),
        [(Action::Replace, "pkg/.claude/rules/style.md".to_owned())]
    );
    assert_eq!(
        m.source.changes[0].digest,
        Some(Digest::of("style two, longer"))
    );
    w.files.remove("/repo/pkg/.claude/rules/style.md");
    let m = w.prompt().await.expect("the removal is seen");
    assert_eq!(
        changes(&m),
        [(Action::Remove, "pkg/.claude/rules/style.md".to_owned())]
    );
}

/// A known directory with no rules directory settles on its probes
/// (decision 0075: the probe call says its `.claude/rules` is missing), yet
/// a rules directory created there later is listed at the next prompt, and
/// when the whole `.claude` goes away the rule it held is removed: a
/// directory whose rule the model sees never settles on probes alone.
#[rstest]
#[tokio::test]
async fn a_rules_directory_created_or_removed_in_a_known_directory_is_seen_r_rule_4(
    #[values("memory", "disk")] kind: &str,
    // With `.claude/CLAUDE.md` probed, `.claude/rules` is known missing
    // from `.claude` itself; without it, from a probe of its own.
    #[values(false, true)] claude_dir: bool,
) {
    let config = config_of(serde_json::json!({
        "max_bytes": 65_536, "rule_formats": ["claude"], "claude_dir": claude_dir,
    }));
    let mut w = World::new(
        kind,
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/pkg/AGENTS.md", "pkg"),
            ("/repo/pkg/lib.rs", "code"),
        ],
        config,
    )
    .await;
    w.prompt().await.expect("baseline");
    w.read("/repo/pkg/lib.rs").await;
    assert_eq!(
        changes(&w.instance.pending()[0]),
        [(Action::Set, "pkg/AGENTS.md".to_owned())]
    );
    w.prompt().await.expect("the set enters");
    let before = w.lists.load(Ordering::Relaxed);
    assert_eq!(w.prompt().await, None, "nothing new");
    if kind == "disk" {
        // Decision 0075: the probe call proved every `.claude/rules`
        // missing (the root's and pkg's), so nothing is listed.
        assert_eq!(w.lists.load(Ordering::Relaxed), before, "no listing");
    }
    // An edit takes pkg off the settled path; its rules are still known
    // missing: composed, and still not listed.
    w.files.write("/repo/pkg/AGENTS.md", "pkg, edited");
    let m = w.prompt().await.expect("the edit is seen");
    assert_eq!(changes(&m), [(Action::Replace, "pkg/AGENTS.md".to_owned())]);
    if kind == "disk" {
        assert_eq!(w.lists.load(Ordering::Relaxed), before, "no listing");
    }
    w.files
        .write("/repo/pkg/.claude/rules/style.md", "style one");
    let m = w.prompt().await.expect("the new rule is seen");
    assert_eq!(
        changes(&m),
        [(Action::Set, "pkg/.claude/rules/style.md".to_owned())]
    );
    assert_eq!(w.prompt().await, None, "nothing new");
    match &w.files {
        Files::Memory(fs) => {
            // The subtree goes with it.
            fs.remove(Utf8Path::new("/repo/pkg/.claude"));
        }
        Files::Disk { .. } => {
            std::fs::remove_dir_all(w.files.path("/repo/pkg/.claude")).unwrap();
        }
    }
    let m = w.prompt().await.expect("the removal is seen");
    assert_eq!(
        changes(&m),
        [(Action::Remove, "pkg/.claude/rules/style.md".to_owned())]
    );
    assert_eq!(w.prompt().await, None, "settled again");
}

#[rstest]
#[tokio::test]
async fn a_path_scoped_rule_attaches_on_a_matching_read_only_r_rule_4_r_rule_5(
    #[values("memory", "disk")] kind: &str,
) {
    let mut w = World::new(
        kind,
        &[
            ("/repo/AGENTS.md", "root"),
            (
                "/repo/.claude/rules/ts.md",
                "---\npaths: \"src/*.ts\"\n---\nTS rule",
            ),
        ],
        rules_config(&["claude"], 65_536),
    )
    .await;
    let baseline = w.prompt().await.expect("baseline");
    assert!(!baseline.parts.concat().contains("TS rule"));
    // `*.ts` anchored in `src`: a file at the root does not match.
    w.read("/repo/a.ts").await;
    assert!(w.instance.pending().is_empty());
    w.read("/repo/src/a.ts").await;
    let inbox = w.instance.pending();
    assert_eq!(
        inbox[0].parts,
        [frame(&format!(
            "Additional instructions from: .claude/rules/ts.md\n\nThese instructions apply to files matching `src/*.ts` under `.`. {SET_TAIL}\n\nTS rule"
        ))]
    );
}

/// A rule is as specific as its directory's files: a budget that keeps
/// only the cwd's file leaves out the root's file and the root's rule,
/// and names both (R-RULE-5, R-REN-6).
#[rstest]
#[tokio::test]
async fn the_budget_ranks_a_rule_with_its_directory_r_rule_5(
    #[values("memory", "disk")] kind: &str,
) {
    let big = "x".repeat(300);
    let mut w = World::at(
        kind,
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/.claude/rules/big.md", &big),
            ("/repo/pkg/AGENTS.md", "pkg"),
        ],
        rules_config(&["claude"], 600),
        "/repo/pkg",
    )
    .await;
    let m = w.prompt().await.expect("a baseline");
    let text = m.parts.concat();
    assert!(
        text.contains(
            "Workspace instruction budget 600 bytes: omitted AGENTS.md, .claude/rules/big.md"
        ),
        "{text}"
    );
    assert_eq!(changes(&m), [(Action::Set, "pkg/AGENTS.md".to_owned())]);
}

/// A path-scoped rule nothing attaches is read once to learn its globs and
/// content; later touches that do not match it probe it and read nothing
/// (issue 46 item 2: a touch re-read every unattached rule of its chain),
/// a touch that matches attaches it from the content known at its version
/// without a read either (decision 0091), and an edit reads it again. With
/// imports on, a content that may import is read on the match (its
/// targets are expanded from the read, R-RULE-8): the rule and its target.
#[rstest]
#[case::plain(false, "TS rule", 0)]
#[case::importing(true, "TS rule, see @../../docs/notes.md", 2)]
#[tokio::test]
async fn an_unattached_rule_is_read_again_only_when_its_file_moves_r_rule_3(
    #[case] imports: bool,
    #[case] body: &str,
    #[case] match_reads: u64,
) {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    fs.insert("/repo/.git".into(), MemNode::dir());
    fs.insert("/repo/AGENTS.md".into(), MemNode::file("root"));
    fs.insert(
        "/repo/.claude/rules/ts.md".into(),
        MemNode::file(format!("---\npaths: \"src/*.ts\"\n---\n{body}")),
    );
    fs.insert("/repo/docs/notes.md".into(), MemNode::file("notes"));
    for f in ["a.rs", "b.rs", "c.rs", "d.ts"] {
        fs.insert(&Utf8Path::new("/repo/src").join(f), MemNode::file("code"));
    }
    let home = DshHome {
        path: "/home/u/.dsh".into(),
        label: HomeLabel::EnvVar,
    };
    let host = Arc::new(MemoryHost::new("/repo".into()));
    let config = config_of(serde_json::json!({
        "max_bytes": 65_536, "rule_formats": ["claude"], "imports": imports
    }));
    let instance = common::open(fs.clone(), "/repo", Some(config), &home)
        .await
        .instance(host.clone() as Arc<dyn Host>)
        .expect("mounted inside a runtime");
    let cancel = CancellationToken::new();
    let prompt = Decision::Enter(vec![BatchItem {
        message: "hi".to_owned(),
        claimed: true,
    }]);
    let out = instance
        .pre_step(1, prompt, &cancel)
        .await
        .expect("not cancelled");
    host.append_batch(out.batch.as_deref().expect("entered"));
    // Reads during one touch of `file` and its settling.
    let touch = async |file: &str| {
        fs.reset_counters();
        instance.touch(
            Utf8Path::new(file),
            dsh_instructions_runtime::TouchKind::Read,
        );
        instance.settle().await;
        fs.counters().reads
    };
    assert_eq!(
        touch("/repo/src/a.rs").await,
        0,
        "its kind and globs are known"
    );
    assert_eq!(touch("/repo/src/b.rs").await, 0, "and stay known");
    assert!(instance.pending().is_empty(), "nothing attached");
    assert_eq!(
        touch("/repo/src/d.ts").await,
        match_reads,
        "a match attaches the content known at its version"
    );
    assert_eq!(
        changes(&instance.pending()[0]),
        [(Action::Set, ".claude/rules/ts.md".to_owned())]
    );
    if !imports {
        assert_eq!(
            instance.pending()[0].parts,
            [frame(&format!(
                "Additional instructions from: .claude/rules/ts.md\n\nThese instructions apply to files matching `src/*.ts` under `.`. {SET_TAIL}\n\n{body}"
            ))],
            "the section a read would have made"
        );
    }
    // The file moves: what it says must be read again (now it names `.rs`).
    fs.insert(
        "/repo/.claude/rules/ts.md".into(),
        MemNode::file("---\npaths: \"src/*.rs\"\n---\nRS rule"),
    );
    assert_eq!(touch("/repo/src/c.rs").await, 1, "an edited rule is read");
}
