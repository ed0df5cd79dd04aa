//! Behaviour of the adapter against the reference host and the in-memory
//! provider, one rule per test (SPEC §8). Expected texts are written from
//! SPEC R-REN-2/3 by hand.

mod common;
use common::config_of;
use std::sync::Arc;

use camino::Utf8PathBuf;
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::{
    CancellationToken,
    memory::{Errno, FsOp, MemNode, MemoryProvider},
};
use dsh_instructions_runtime::{
    BatchEntry, BatchItem, Decision, Host, Instance, SessionEvent, ToolExecution, WorkspaceMessage,
    host_support::MemoryHost,
};
use dsh_instructions_state::{Config, Digest, source::Action};

const INTRO: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";

struct World {
    fs: MemoryProvider,
    host: Arc<MemoryHost>,
    config: Option<Config>,
    instance: Instance,
    step: u32,
}

fn home() -> DshHome {
    DshHome {
        path: "/home/u/.dsh".into(),
        label: HomeLabel::Default,
    }
}

impl World {
    async fn new(files: &[(&str, &str)], cwd: &str) -> Self {
        Self::with_config(files, cwd, Some(Config::with_max_bytes(65_536))).await
    }

    async fn with_config(files: &[(&str, &str)], cwd: &str, config: Option<Config>) -> Self {
        let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
        fs.insert("/repo/.git".into(), MemNode::dir());
        fs.insert(cwd.into(), MemNode::dir());
        for (path, text) in files {
            fs.insert((*path).into(), MemNode::file(*text));
        }
        let host = Arc::new(MemoryHost::new(Utf8PathBuf::from(cwd)));
        let instance = mount(&fs, &host, config.clone()).await;
        Self {
            fs,
            host,
            config,
            instance,
            step: 0,
        }
    }

    /// A pre-step claiming one prompt, entering it.
    async fn prompt(&mut self, text: &str) -> Option<WorkspaceMessage> {
        self.pre_step(Decision::Enter(vec![BatchItem {
            message: text.to_owned(),
            claimed: true,
        }]))
        .await
    }

    async fn pre_step(&mut self, decision: Decision<String>) -> Option<WorkspaceMessage> {
        self.step += 1;
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

    fn tool(&self, name: &str, path: &str, token: &str, parent: Option<&str>, ok: bool) {
        self.instance.tool_result(&ToolExecution {
            name: name.into(),
            arguments: serde_json::json!({ "file_path": path }),
            token: token.into(),
            parent: parent.map(Into::into),
            is_error: !ok,
            cancelled: false,
        });
    }

    fn event(&self, event: SessionEvent) {
        self.host.append_event(event);
        self.instance.session_event(event);
    }

    async fn resume(&mut self) {
        self.instance.dispose();
        self.instance = mount(&self.fs, &self.host, self.config.clone()).await;
        self.step = 0;
    }

    async fn remount(&mut self, config: Option<Config>) {
        self.config = config;
        self.instance = mount_of(&self.fs, &self.host, self.config.clone())
            .await
            .remount(&self.instance, self.host.clone() as Arc<dyn Host>)
            .expect("remounted inside a runtime");
        self.step = 0;
    }
}

async fn mount_of(
    fs: &MemoryProvider,
    host: &MemoryHost,
    config: Option<Config>,
) -> dsh_instructions_runtime::Opened {
    common::open(fs.clone(), host.cwd().as_str(), config, &home()).await
}

async fn mount(fs: &MemoryProvider, host: &Arc<MemoryHost>, config: Option<Config>) -> Instance {
    mount_of(fs, host, config)
        .await
        .instance(host.clone() as Arc<dyn Host>)
        .expect("mounted inside a runtime")
}

fn frame(body: &str) -> String {
    format!("<system-reminder>\n{body}\n</system-reminder>")
}

fn actions(m: &WorkspaceMessage) -> Vec<(Action, String)> {
    m.source
        .changes
        .iter()
        .map(|c| (c.action, c.path.clone()))
        .collect()
}

#[tokio::test]
async fn first_pre_step_folds_baseline_after_the_prompt_r_rt_1() {
    let mut w = World::new(&[("/repo/AGENTS.md", "root rule")], "/repo").await;
    let entered = w.prompt("hi").await.expect("baseline entered");
    assert_eq!(
        entered.parts,
        vec![frame(&format!(
            "{INTRO}\n\nInstructions from: AGENTS.md\n\nroot rule"
        ))]
    );
    assert!(entered.source.baseline);
    assert_eq!(
        entered.source.changes[0].digest,
        Some(Digest::of("root rule"))
    );
    let users = w.host.user_messages();
    assert_eq!(
        users.len(),
        2,
        "prompt then workspace message persist together"
    );
    assert!(!users[0].is_workspace() && users[1].is_workspace());
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn reject_leaves_the_baseline_pending_and_the_next_step_folds_it_r_rt_1() {
    let mut w = World::new(&[("/repo/AGENTS.md", "root rule")], "/repo").await;
    assert_eq!(w.pre_step(Decision::Reject).await, None);
    assert_eq!(w.instance.pending().len(), 1);
    assert!(w.host.user_messages().is_empty());
    let entered = w.prompt("again").await.expect("pending message folded");
    assert!(entered.source.baseline);
    assert!(
        w.instance.pending().is_empty(),
        "entering removes the pending copy"
    );
}

#[tokio::test]
async fn empty_batch_pends_at_step_one_and_enters_alone_later_r_rt_1() {
    let mut w = World::new(&[("/repo/AGENTS.md", "root rule")], "/repo").await;
    assert_eq!(w.pre_step(Decision::Enter(vec![])).await, None);
    assert_eq!(w.instance.pending().len(), 1);
    let entered = w.pre_step(Decision::Enter(vec![])).await;
    assert!(
        entered.is_some(),
        "a tool continuation enters the message alone"
    );
    assert_eq!(w.host.user_messages().len(), 1);
}

#[tokio::test]
async fn nothing_is_composed_without_files_r_rt_1() {
    let mut w = World::new(&[], "/repo").await;
    assert_eq!(w.prompt("hi").await, None);
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn claimed_position_ignores_driver_messages_after_the_prompt_r_rt_1() {
    let mut w = World::new(&[("/repo/AGENTS.md", "r")], "/repo").await;
    w.step += 1;
    let out = w
        .instance
        .pre_step(
            w.step,
            Decision::Enter(vec![
                BatchItem {
                    message: "hi".to_owned(),
                    claimed: true,
                },
                BatchItem {
                    message: "ctx".to_owned(),
                    claimed: false,
                },
            ]),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let batch = out.batch.unwrap();
    assert!(matches!(&batch[0], BatchEntry::Host(t) if t == "hi"));
    assert!(matches!(&batch[1], BatchEntry::Workspace(_)));
    assert!(matches!(&batch[2], BatchEntry::Host(t) if t == "ctx"));
}

#[tokio::test]
async fn touch_below_cwd_discovers_a_nested_file_r_rt_3() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/pkg/AGENTS.md", "pkg rule"),
        ],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.tool("read", "pkg/src/lib.rs", "t1", None, true);
    w.instance.settle().await;
    let inbox = w.instance.pending();
    assert_eq!(inbox.len(), 1);
    assert_eq!(
        actions(&inbox[0]),
        vec![(Action::Set, "pkg/AGENTS.md".into())]
    );
    assert_eq!(
        inbox[0].parts,
        vec![frame(
            "Additional instructions from: pkg/AGENTS.md\n\nThese instructions apply to work under `pkg`. Follow them where they apply; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\npkg rule"
        )]
    );
}

#[tokio::test]
async fn shell_failed_and_cancelled_tools_never_touch_r_rt_3_r_disc_9() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/pkg/AGENTS.md", "pkg rule"),
        ],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.tool("bash", "pkg/src/lib.rs", "t1", None, true);
    w.tool("read", "pkg/src/lib.rs", "t2", None, false);
    w.instance.tool_result(&ToolExecution {
        name: "read".into(),
        arguments: serde_json::json!({ "file_path": "pkg/x" }),
        token: "t3".into(),
        parent: None,
        is_error: false,
        cancelled: true,
    });
    w.instance.settle().await;
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn touch_outside_the_cwd_discovers_nothing_new_r_rt_3() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/other/AGENTS.md", "other"),
        ],
        "/repo/pkg",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.tool("read", "/repo/other/x.rs", "t1", None, true);
    w.instance.settle().await;
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn parent_tokens_bubble_through_depth_and_failed_children_drop_r_rt_4() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/a/AGENTS.md", "a"),
            ("/repo/b/AGENTS.md", "b"),
        ],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    // grandchild ok -> child ok -> top (failed): projected.
    w.tool("read", "a/x.rs", "gc", Some("c"), true);
    w.tool("read", "a/y.rs", "c", Some("top"), true);
    // a failed child contributes nothing, not even what reached it.
    w.tool("read", "b/x.rs", "gc2", Some("c2"), true);
    w.tool("read", "b/y.rs", "c2", Some("top"), false);
    w.instance.settle().await;
    assert!(
        w.instance.pending().is_empty(),
        "nothing projects before the top-level result"
    );
    w.tool("code", "", "top", None, false);
    w.instance.settle().await;
    let inbox = w.instance.pending();
    assert_eq!(inbox.len(), 1);
    assert_eq!(
        actions(&inbox[0]),
        vec![(Action::Set, "a/AGENTS.md".into())]
    );
}

#[tokio::test]
async fn touches_wait_for_the_step_to_close_r_rt_5() {
    let mut w = World::new(
        &[("/repo/AGENTS.md", "root"), ("/repo/pkg/AGENTS.md", "pkg")],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.event(SessionEvent::StepStart);
    w.tool("read", "pkg/x.rs", "t1", None, true);
    w.instance.settle().await;
    assert!(
        w.instance.pending().is_empty(),
        "staged while the step is open"
    );
    w.event(SessionEvent::StepEnd);
    w.instance.settle().await;
    assert_eq!(w.instance.pending().len(), 1);
}

#[tokio::test]
async fn one_pending_message_replaced_in_place_r_rt_2_r_rt_6() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "root"),
            ("/repo/a/AGENTS.md", "a"),
            ("/repo/b/AGENTS.md", "b"),
        ],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.tool("read", "a/x.rs", "t1", None, true);
    w.tool("read", "b/x.rs", "t2", None, true);
    w.instance.settle().await;
    let inbox = w.instance.pending();
    assert_eq!(inbox.len(), 1, "one pending workspace message at most");
    assert_eq!(
        actions(&inbox[0]),
        vec![
            (Action::Set, "a/AGENTS.md".into()),
            (Action::Set, "b/AGENTS.md".into())
        ]
    );
}

#[tokio::test]
async fn external_edit_surfaces_at_the_next_pre_step_r_rt_10() {
    let mut w = World::new(&[("/repo/AGENTS.md", "v1")], "/repo").await;
    w.prompt("hi").await.unwrap();
    w.fs.counters();
    w.fs.reset_counters();
    assert_eq!(w.prompt("unchanged").await, None);
    assert_eq!(
        w.fs.counters().reads,
        0,
        "unchanged files cost a probe, not a read"
    );
    w.fs.insert("/repo/AGENTS.md".into(), MemNode::file("v2"));
    let m = w.prompt("next").await.expect("replace enters");
    assert_eq!(actions(&m), vec![(Action::Replace, "AGENTS.md".into())]);
    assert_eq!(
        m.parts,
        vec![frame(
            "Updated instructions from: AGENTS.md\n\nThis file changed after it was loaded. Use the content below instead of the instructions previously loaded from it.\n\nv2"
        )]
    );
}

#[tokio::test]
async fn removal_and_tombstone_reappearance_r_state_5() {
    let mut w = World::new(&[("/repo/AGENTS.md", "v1")], "/repo").await;
    w.prompt("hi").await.unwrap();
    w.fs.remove("/repo/AGENTS.md".into());
    let m = w.prompt("gone").await.expect("remove enters");
    assert_eq!(actions(&m), vec![(Action::Remove, "AGENTS.md".into())]);
    assert_eq!(m.source.changes[0].digest, None);
    w.fs.insert("/repo/AGENTS.md".into(), MemNode::file("v1"));
    let m = w.prompt("back").await.expect("reappearance is a new set");
    assert_eq!(actions(&m), vec![(Action::Set, "AGENTS.md".into())]);
}

#[tokio::test]
async fn unavailable_never_removes_r_disc_5() {
    let mut w = World::new(&[("/repo/AGENTS.md", "v1")], "/repo").await;
    w.prompt("hi").await.unwrap();
    w.fs.insert(
        "/repo/AGENTS.md".into(),
        MemNode::file("v1").with_fault(FsOp::Stat, Errno::Eacces),
    );
    assert_eq!(w.prompt("next").await, None);
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn resume_with_offline_edit_appends_only_transitions_r_rt_7() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "v1"),
            ("/repo/CLAUDE.local.md", "local"),
        ],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.resume().await;
    w.fs.insert("/repo/AGENTS.md".into(), MemNode::file("v2"));
    w.fs.remove("/repo/CLAUDE.local.md".into());
    let m = w.prompt("resumed").await.expect("transitions");
    assert!(!m.source.baseline);
    assert_eq!(
        actions(&m),
        vec![
            (Action::Replace, "AGENTS.md".into()),
            (Action::Remove, "CLAUDE.local.md".into())
        ]
    );
}

#[tokio::test]
async fn remount_with_new_config_supersedes_the_baseline_r_rt_7() {
    let mut w = World::new(
        &[("/repo/AGENTS.md", "a"), ("/repo/CLAUDE.md", "c")],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    let claude_only = config_of(
        serde_json::json!({"max_bytes": 65_536, "instruction_file_candidates": ["CLAUDE.md"]}),
    );
    w.remount(Some(claude_only)).await;
    let m = w.prompt("after").await.expect("replacement baseline");
    assert!(m.source.baseline);
    assert!(m.parts[0].starts_with(
        "<system-reminder>\nThis complete workspace instruction baseline supersedes every earlier one. The following"
    ));
    assert_eq!(
        actions(&m),
        vec![(Action::Set, "CLAUDE.md".into())],
        "same scope key (base slot) is re-set, not removed"
    );
}

#[tokio::test]
async fn empty_replacement_when_nothing_remains_r_rt_7() {
    let mut w = World::new(&[("/repo/AGENTS.md", "a")], "/repo").await;
    w.prompt("hi").await.unwrap();
    w.fs.remove("/repo/AGENTS.md".into());
    w.remount(Some(Config::with_max_bytes(1_000))).await;
    let m = w.prompt("after").await.expect("empty replacement");
    assert_eq!(
        m.parts,
        vec![frame(
            "This complete workspace instruction baseline supersedes every earlier one. No workspace instructions are active now."
        )]
    );
    assert_eq!(actions(&m), vec![(Action::Remove, "AGENTS.md".into())]);
}

#[tokio::test]
async fn compaction_recomposes_a_complete_baseline_r_rt_8() {
    let mut w = World::new(&[("/repo/AGENTS.md", "a")], "/repo").await;
    w.prompt("hi").await.unwrap();
    w.host.compact_baseline();
    let m = w.prompt("after compaction").await.expect("new baseline");
    assert!(m.source.baseline);
    assert_eq!(actions(&m), vec![(Action::Set, "AGENTS.md".into())]);
}

#[tokio::test]
async fn disabled_and_providerless_are_no_ops_r_rt_9() {
    let mut w = World::with_config(&[("/repo/AGENTS.md", "a")], "/repo", None).await;
    assert!(!w.instance.is_active());
    assert_eq!(w.prompt("hi").await, None);
    let mut zero = World::with_config(
        &[("/repo/AGENTS.md", "a")],
        "/repo",
        Some(Config::with_max_bytes(0)),
    )
    .await;
    assert_eq!(zero.prompt("hi").await, None);
    let host = Arc::new(MemoryHost::new("/repo".into()));
    // No filesystem: a no-op (R-RT-9).
    let none = dsh_instructions_runtime::MountBuilder::new("/repo")
        .validated(Config::with_max_bytes(100))
        .env(common::env_for(&home()))
        .open(&CancellationToken::new())
        .await
        .expect("opens")
        .instance(host as Arc<dyn Host>)
        .expect("mounted inside a runtime");
    assert!(!none.is_active());
}

#[tokio::test]
async fn cancelled_pre_step_returns_promptly_and_changes_nothing_r_disc_8() {
    let mut w = World::new(&[], "/repo").await;
    w.fs.insert(
        "/repo/AGENTS.md".into(),
        MemNode::file("gated").with_gate(FsOp::Read),
    );
    let cancel = CancellationToken::new();
    let fs = w.fs.clone();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        fs.wait_blocked("/repo/AGENTS.md".into()).await;
        c2.cancel();
    });
    // "Promptly" is: before the gated read is ever released. The bound is
    // only a hang guard (decision 0082); a cancelled pre-step returns in
    // microseconds.
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        w.instance.pre_step(
            1,
            Decision::Enter(vec![BatchItem {
                message: "hi".to_owned(),
                claimed: true,
            }]),
            &cancel,
        ),
    )
    .await
    .expect("returns promptly");
    assert!(out.is_err());
    assert!(w.instance.pending().is_empty());
    assert!(w.host.user_messages().is_empty());
    // The gate is spent: the next pre-step composes normally.
    w.step = 0;
    assert!(w.prompt("retry").await.is_some());
}

#[tokio::test]
async fn all_distinct_loads_every_candidate_and_dedups_links_r_cfg_7_r_disc_3() {
    let config =
        config_of(serde_json::json!({"max_bytes": 65_536, "candidate_policy": "all-distinct"}));
    let mut w = World::with_config(
        &[
            ("/repo/AGENTS.md", "agents"),
            ("/repo/CLAUDE.md", "claude"),
            ("/repo/CLAUDE.local.md", "  agents\n"),
        ],
        "/repo",
        Some(config),
    )
    .await;
    w.fs.insert("/repo/AGENTS.local.md".into(), MemNode::link("AGENTS.md"));
    let m = w.prompt("hi").await.unwrap();
    assert_eq!(
        actions(&m),
        vec![
            (Action::Set, "AGENTS.md".into()),
            (Action::Set, "CLAUDE.md".into())
        ],
        "the link (same file) and the whitespace-only copy render once"
    );
}

#[tokio::test]
async fn precedence_switch_replaces_with_previous_path_r_state_6() {
    let mut w = World::new(
        &[("/repo/AGENTS.md", "agents"), ("/repo/CLAUDE.md", "claude")],
        "/repo",
    )
    .await;
    let m = w.prompt("hi").await.unwrap();
    assert_eq!(actions(&m), vec![(Action::Set, "AGENTS.md".into())]);
    w.fs.remove("/repo/AGENTS.md".into());
    let m = w.prompt("next").await.unwrap();
    assert_eq!(m.source.changes.len(), 1);
    let c = &m.source.changes[0];
    assert_eq!((c.action, c.path.as_str()), (Action::Replace, "CLAUDE.md"));
    assert_eq!(c.previous_path.as_deref(), Some("AGENTS.md"));
    assert_eq!(
        m.parts,
        vec![frame(
            "Updated instructions from: CLAUDE.md\n\nThese instructions take the place of the instructions previously loaded from AGENTS.md, which no longer apply.\n\nclaude"
        )]
    );
}

#[tokio::test]
async fn group_safety_keeps_the_directory_when_a_loaded_member_is_unavailable_r_state_9() {
    let mut w = World::new(
        &[
            ("/repo/AGENTS.md", "base"),
            ("/repo/AGENTS.local.md", "local"),
        ],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.fs.insert(
        "/repo/AGENTS.local.md".into(),
        MemNode::file("local").with_fault(FsOp::Stat, Errno::Eio),
    );
    w.fs.remove("/repo/AGENTS.md".into());
    assert_eq!(
        w.prompt("next").await,
        None,
        "no transition for the directory"
    );
    // Once readable again the removal goes through.
    w.fs.insert("/repo/AGENTS.local.md".into(), MemNode::file("local"));
    let m = w.prompt("later").await.unwrap();
    assert_eq!(actions(&m), vec![(Action::Remove, "AGENTS.md".into())]);
}

#[tokio::test]
async fn files_left_out_by_the_budget_are_not_reprobed_r_rt_10() {
    let big = "x".repeat(400);
    let mut w = World::with_config(
        &[
            ("/repo/AGENTS.md", big.as_str()),
            ("/repo/pkg/AGENTS.md", "pkg"),
        ],
        "/repo/pkg",
        Some(Config::with_max_bytes(300)),
    )
    .await;
    let m = w.prompt("hi").await.unwrap();
    assert_eq!(actions(&m), vec![(Action::Set, "pkg/AGENTS.md".into())]);
    assert!(m.parts[0].contains("omitted AGENTS.md"));
    w.fs.insert("/repo/AGENTS.md".into(), MemNode::file("small now"));
    assert_eq!(
        w.prompt("next").await,
        None,
        "the omitted file is not re-probed"
    );
}

#[tokio::test]
async fn hot_remount_keeps_the_pending_message_r_rt_7() {
    let mut w = World::new(&[("/repo/AGENTS.md", "a")], "/repo").await;
    assert_eq!(w.pre_step(Decision::Reject).await, None);
    assert_eq!(w.instance.pending().len(), 1);
    w.remount(w.config.clone()).await;
    assert_eq!(
        w.instance.pending().len(),
        1,
        "the inbox survives a hot remount"
    );
    let m = w.prompt("hi").await.unwrap();
    assert!(m.source.baseline);
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn dispose_during_a_blocked_projection_writes_nothing_r_disc_8() {
    let mut w = World::new(&[("/repo/AGENTS.md", "a")], "/repo").await;
    w.prompt("hi").await.unwrap();
    w.fs.insert(
        "/repo/pkg/AGENTS.md".into(),
        MemNode::file("pkg").with_gate(FsOp::Read),
    );
    w.tool("read", "pkg/x.rs", "t1", None, true);
    // Hang guards (decision 0082): each wait ends in microseconds.
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        w.fs.wait_blocked("/repo/pkg/AGENTS.md".into()),
    )
    .await
    .expect("the projection reaches the gate");
    w.instance.dispose();
    w.fs.release("/repo/pkg/AGENTS.md".into());
    // The lane runs one request at a time: `settle` resolves only once the
    // released projection has returned (its reply is sent after it, or
    // dropped when the cancelled lane exits), so the check below sees the
    // projection's final effect, not a moment picked by a timer.
    tokio::time::timeout(std::time::Duration::from_secs(60), w.instance.settle())
        .await
        .expect("the lane finishes the released projection");
    assert!(w.instance.pending().is_empty());
}

#[tokio::test]
async fn compaction_of_the_baseline_removes_surviving_scopes_it_no_longer_holds_r_rt_8() {
    let mut w = World::new(
        &[("/repo/AGENTS.md", "a"), ("/repo/AGENTS.local.md", "l1")],
        "/repo",
    )
    .await;
    w.prompt("hi").await.unwrap();
    w.fs.insert("/repo/AGENTS.local.md".into(), MemNode::file("l2"));
    let m = w.prompt("edit").await.unwrap();
    assert_eq!(
        actions(&m),
        vec![(Action::Replace, "AGENTS.local.md".into())]
    );
    w.host.compact_baseline();
    w.fs.remove("/repo/AGENTS.local.md".into());
    let m = w.prompt("after").await.unwrap();
    assert_eq!(m.parts.len(), 2, "baseline part plus a dynamic part");
    assert!(m.source.baseline);
    assert_eq!(
        actions(&m),
        vec![
            (Action::Set, "AGENTS.md".into()),
            (Action::Remove, "AGENTS.local.md".into())
        ]
    );
    assert!(m.parts[1].contains("Instructions removed: AGENTS.local.md"));
}

#[tokio::test]
async fn a_changed_root_replaces_and_removes_the_old_chain_r_rt_7() {
    let mut w = World::new(
        &[("/repo/AGENTS.md", "root"), ("/repo/pkg/AGENTS.md", "pkg")],
        "/repo/pkg",
    )
    .await;
    let m = w.prompt("hi").await.unwrap();
    assert_eq!(
        actions(&m),
        vec![
            (Action::Set, "AGENTS.md".into()),
            (Action::Set, "pkg/AGENTS.md".into())
        ]
    );
    // A marker in pkg makes pkg the root on the next mount.
    w.fs.insert("/repo/pkg/.git".into(), MemNode::dir());
    w.remount(w.config.clone()).await;
    let m = w.prompt("again").await.unwrap();
    assert!(m.source.baseline);
    assert!(m.parts[0].contains("supersedes every earlier one"));
    // Old scope keys are relative to the old root: "." base (the old root's
    // AGENTS.md) is re-set by the new root's AGENTS.md; "pkg" base is removed.
    assert_eq!(
        actions(&m),
        vec![
            (Action::Remove, "pkg/AGENTS.md".into()),
            (Action::Set, "AGENTS.md".into())
        ]
    );
}

#[tokio::test]
async fn a_budgeted_baseline_reads_only_what_it_can_keep_issue_7() {
    let mut files = Vec::new();
    let mut dir = String::from("/repo");
    let body = "r".repeat(4096);
    for depth in 0..32 {
        if depth > 0 {
            dir.push_str(&format!("/d{depth}"));
        }
        files.push((format!("{dir}/AGENTS.md"), body.clone()));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let config = config_of(serde_json::json!({"max_bytes": 8_192, "max_source_bytes": 8_192}));
    let mut w = World::with_config(&refs, &dir, Some(config)).await;
    let m = w
        .prompt("hi")
        .await
        .expect("a truncated or partial baseline");
    // Bound from issue 7: max_bytes + candidates per directory x max_source_bytes.
    let bound = 8_192 + 4 * 8_192;
    let read = w.fs.counters().bytes_read;
    assert!(read <= bound, "read {read} bytes, bound {bound}");
    assert!(read >= 4_096, "the most specific file is read");
    // The notice still names every broad file as omitted.
    assert!(m.parts[0].contains("omitted AGENTS.md, d1/AGENTS.md"));
}

/// Found by the fault soak: a slot whose new winner is the same file as an
/// unreadable broader one must not remove the slot's loaded scope.
#[tokio::test]
async fn an_unreadable_identity_duplicate_never_removes_r_disc_5() {
    let mut w = World::new(&[("/repo/AGENTS.md", "root rule")], "/repo").await;
    w.fs.insert(
        "/repo/CLAUDE.md".into(),
        MemNode::file("shared").with_fault(FsOp::Read, Errno::Eacces),
    );
    w.fs.insert(
        "/home/u/.dsh/AGENTS.md".into(),
        MemNode::link("/repo/CLAUDE.md"),
    );
    let m = w.prompt("hi").await.expect("baseline");
    assert_eq!(actions(&m), vec![(Action::Set, "AGENTS.md".into())]);
    w.fs.remove("/repo/AGENTS.md".into());
    assert_eq!(
        w.prompt("next").await,
        None,
        "the slot is unavailable, not a duplicate"
    );
}

/// The benchmark's deep-256 shape (docs/decisions/0006, resolved by the
/// amended R-REN-4): 256 nested directories below the root, each with an
/// `AGENTS.md`, cwd at the bottom, a 64 KiB budget. The omitted paths alone
/// are ~165 KB, so before the bound nothing rendered; now the baseline keeps
/// the most specific files and the notice lists a bounded prefix.
#[tokio::test]
async fn a_deep_256_chain_keeps_its_most_specific_files_r_ren_4() {
    const DEPTH: usize = 256;
    let mut rels = Vec::new();
    let mut dir = String::new();
    for level in 0..=DEPTH {
        if level > 0 {
            dir.push_str(&format!("l{level:03}/"));
        }
        rels.push(format!("{dir}AGENTS.md"));
    }
    let files: Vec<(String, String)> = rels
        .iter()
        .enumerate()
        .map(|(level, rel)| (format!("/repo/{rel}"), format!("rule {level}\n").repeat(40)))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let cwd = format!("/repo/{}", dir.trim_end_matches('/'));
    let mut w = World::new(&refs, &cwd).await;
    let m = w.prompt("hi").await.expect("a non-empty baseline");
    assert_eq!(m.parts.len(), 1);
    let text = &m.parts[0];
    assert!(text.len() <= 65_536, "{} bytes", text.len());

    // The kept files are a most-specific suffix of the chain, in order.
    let kept: Vec<String> = actions(&m).into_iter().map(|(_, path)| path).collect();
    assert!(kept.len() > 1, "only {} files kept", kept.len());
    assert_eq!(kept[..], rels[rels.len() - kept.len()..]);
    let deepest = format!("Instructions from: {}\n\n", rels[DEPTH]);
    assert!(text.contains(&deepest), "the deepest file is shown");

    // The notice: "omitted p1, …, pj and <k> more", j + k covering every
    // omitted file, the omitted part within L = 65536 / 16 = 4096 bytes.
    let notice = text.lines().nth(1).expect("the notice is the first block");
    let omitted_part = notice
        .strip_prefix("Workspace instruction budget 65536 bytes: ")
        .expect("a budget notice");
    assert!(omitted_part.len() <= 4_096, "{} bytes", omitted_part.len());
    let (listed, more) = omitted_part
        .strip_prefix("omitted ")
        .and_then(|rest| rest.strip_suffix(" more"))
        .and_then(|rest| rest.rsplit_once(" and "))
        .expect("a bounded omitted list");
    let listed: Vec<&str> = listed.split(", ").collect();
    assert_eq!(listed[..], rels[..listed.len()], "broadest first");
    let more: usize = more.parse().expect("a count");
    assert_eq!(listed.len() + more + kept.len(), DEPTH + 1);
}

/// `ceiling` bounds the ancestor files (R-HOOK-8) a mount admits, and
/// `trust_only` replaces the derived trusted roots: what a harness whose
/// filesystem starts below `/` needs (the conformance suite, the Node
/// binding's `fsTop` and `trustedRoots`).
#[tokio::test]
async fn a_ceiling_hides_the_ancestor_files_above_it_and_trust_only_replaces_the_roots() {
    let fs = MemoryProvider::new(vec!["/work/repo".into()]);
    fs.insert("/work/repo/.git".into(), MemNode::dir());
    fs.insert("/work/repo/CLAUDE.md".into(), MemNode::file("in the repo"));
    fs.insert("/work/CLAUDE.md".into(), MemNode::file("above the repo"));
    let base = dsh_instructions_runtime::MountBuilder::new("/work/repo")
        .config(dsh_instructions_state::ConfigInput {
            preset: Some(dsh_instructions_state::Preset::Claude),
            ..Default::default()
        })
        .env(common::env_for(&home()))
        .fs(fs.clone());
    let cancel = CancellationToken::new();
    for (mount, above) in [
        (base.clone(), true),
        (base.clone().ceiling("/work/repo"), false),
    ] {
        let opened = mount.open(&cancel).await.expect("opens");
        let text = opened.preview(&cancel).await.expect("a preview").text;
        assert_eq!(text.contains("above the repo"), above, "{text}");
        assert!(text.contains("in the repo"), "{text}");
    }

    let only = base
        .clone()
        .trust_only(["/srv".into()])
        .open(&cancel)
        .await
        .expect("opens");
    assert_eq!(only.trusted_roots(), [Utf8PathBuf::from("/srv")]);
    let relative = base.trust_only(["srv".into()]).open(&cancel).await;
    assert!(relative.is_err(), "a relative root is refused");
}
