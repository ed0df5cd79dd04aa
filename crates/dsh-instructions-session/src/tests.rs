//! Sessions across processes: each test mounts a new [`Session`] per
//! "process" over the same log, as the CLI and the hook adapter do.

use camino::Utf8Path;
use dsh_home_paths::HomeEnv;
use dsh_instructions_discovery::memory::{MemNode, MemoryProvider};
use dsh_instructions_state::{ConfigInput, config::NumberInput, source::Action};
use dsh_session_log::LockWait;
use serde_json::json;

use super::*;

struct World {
    _tmp: tempfile::TempDir,
    store: SessionStore,
    fs: MemoryProvider,
    env: HomeEnv,
    settings: SessionSettings,
}

fn world() -> World {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = SessionStore::new(Utf8Path::from_path(tmp.path()).expect("utf-8"));
    let fs = MemoryProvider::new(vec!["/".into()]);
    fs.insert("/w/repo/.git".into(), MemNode::dir());
    fs.insert("/w/repo/AGENTS.md".into(), MemNode::file("root rules"));
    fs.insert("/w/repo/pkg/AGENTS.md".into(), MemNode::file("pkg rules"));
    World {
        _tmp: tmp,
        store,
        fs,
        env: HomeEnv {
            home: Some("/home/u".into()),
            cwd: "/".into(),
            ..HomeEnv::default()
        },
        settings: SessionSettings {
            config: Some(ConfigInput {
                max_bytes: Some(NumberInput::Int(65_536)),
                ..ConfigInput::default()
            }),
            trust: Vec::new(),
        },
    }
}

impl World {
    async fn create(&self, cwd: &str) -> Session {
        let log = self
            .store
            .create("s", cwd.into(), &self.settings)
            .expect("create");
        self.mount(log).await
    }

    async fn reopen(&self) -> Session {
        let (log, _) = self.store.open("s").expect("open");
        self.mount(log).await
    }

    /// The process-level half of a mount: environment and filesystem.
    fn base(&self) -> MountBuilder {
        MountBuilder::default()
            .env(self.env.clone())
            .fs(self.fs.clone())
    }

    async fn mount(&self, log: SessionLog) -> Session {
        Session::mount(
            log,
            self.settings.apply(self.base()),
            &CancellationToken::new(),
        )
        .await
        .expect("mount")
    }
}

fn read(path: &str, token: &str) -> ToolExecution {
    ToolExecution {
        name: "read".into(),
        arguments: json!({ "file_path": path }),
        token: token.into(),
        parent: None,
        is_error: false,
        cancelled: false,
    }
}

fn changes(m: &WorkspaceMessage) -> Vec<(Action, String)> {
    m.source
        .changes
        .iter()
        .map(|c| (c.action, c.path.clone()))
        .collect()
}

#[tokio::test]
async fn a_recorded_touch_is_composed_again_by_the_next_process() {
    let w = world();
    let cancel = CancellationToken::new();
    let first = w.create("/w/repo").await;
    first
        .enter(1, Some("hi".into()), &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    let pending = first
        .tool(&read("pkg/x.ts", "t1"), Record::Keep)
        .await
        .expect("tool")
        .expect("a pending set");
    assert_eq!(changes(&pending), [(Action::Set, "pkg/AGENTS.md".into())]);
    drop(first); // the process ends; its inbox is gone

    let second = w.reopen().await;
    assert_eq!(second.pending(), Some(pending.clone()), "re-derived");
    let entered = second.step_end(&cancel).await.expect("step end");
    assert_eq!(entered, Some(pending));
    drop(second);

    // Once entered, a third process has nothing pending and nothing new.
    let third = w.reopen().await;
    assert_eq!(third.pending(), None);
    assert_eq!(third.enter(2, None, &cancel).await.expect("enter"), None);
}

#[tokio::test]
async fn an_unrecorded_touch_that_enters_leaves_nothing_to_replay() {
    let w = world();
    let cancel = CancellationToken::new();
    let s = w.create("/w/repo").await;
    s.enter(2, None, &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    s.tool(&read("pkg/x.ts", "t1"), Record::Transient)
        .await
        .expect("tool");
    let set = s
        .enter(2, None, &cancel)
        .await
        .expect("enter")
        .expect("set");
    assert_eq!(changes(&set), [(Action::Set, "pkg/AGENTS.md".into())]);
    assert!(s.host().replay_since_last_message().is_empty());
}

#[tokio::test]
async fn compaction_brings_back_one_complete_baseline() {
    let w = world();
    let cancel = CancellationToken::new();
    let s = w.create("/w/repo/pkg").await;
    let baseline = s
        .enter(2, None, &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    assert!(baseline.source.baseline);
    drop(s);
    let s = w.reopen().await;
    assert_eq!(
        s.enter(2, None, &cancel).await.expect("enter"),
        None,
        "a resume with nothing changed adds nothing"
    );
    assert_eq!(s.compact_workspace().expect("compact").len(), 1);
    drop(s);
    let s = w.reopen().await;
    let again = s
        .enter(2, None, &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    assert!(again.source.baseline);
    assert_eq!(again.parts, baseline.parts, "the same complete baseline");
    assert_eq!(
        s.compact_workspace().expect("compact").len(),
        1,
        "only the visible one is hidden"
    );
}

/// The external-suite failure of issue 12: after a resume in which the root
/// moved up (a nested `.git` removed), the provider must trust the new root.
#[tokio::test]
async fn a_resume_after_the_root_moved_opens_the_provider_for_the_new_root() {
    let w = world();
    let cancel = CancellationToken::new();
    w.fs.insert("/w/repo/pkg/.git".into(), MemNode::dir());
    let s = w.create("/w/repo/pkg").await;
    let first = s
        .enter(2, None, &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    assert_eq!(
        changes(&first),
        [(Action::Set, "AGENTS.md".into())],
        "pkg is the root"
    );
    drop(s);
    w.fs.remove("/w/repo/pkg/.git".into());
    let s = w.reopen().await;
    assert_eq!(s.opened().root().expect("root").root, "/w/repo");
    assert_eq!(s.opened().trusted_roots()[0], "/w/repo");
    let replaced = s
        .enter(2, None, &cancel)
        .await
        .expect("enter")
        .expect("replacement");
    assert!(
        replaced.source.baseline,
        "a new identity: a replacement baseline"
    );
    assert!(
        replaced.joined_text().contains("root rules"),
        "the new root's file reads (it is inside the trusted roots): {}",
        replaced.joined_text()
    );
}

#[tokio::test]
async fn a_relative_header_cwd_is_refused() {
    let w = world();
    let log = w
        .store
        .create("s", "relative".into(), &w.settings)
        .expect("create");
    let err = Session::mount(log, w.settings.apply(w.base()), &CancellationToken::new())
        .await
        .expect_err("refused");
    assert!(matches!(err, SessionError::RelativeCwd { .. }), "{err:?}");
}

/// R-LOG-5, issue 18 item 7: a `session touch` that finds nothing new costs
/// the same number of provider operations at the 60th touch as at the 3rd:
/// a mount replays no tool event that produced nothing.
#[tokio::test]
async fn touches_that_find_nothing_are_not_replayed_r_log_5() {
    let w = world();
    let cancel = CancellationToken::new();
    let s = w.create("/w/repo").await;
    s.enter(1, Some("hi".into()), &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    drop(s);
    // One "process" per touch of an already known directory, as the CLI runs.
    let mut cost = Vec::new();
    for n in 0..60 {
        w.fs.reset_counters();
        let s = w.reopen().await;
        let pending = s
            .tool(&read("x.ts", &format!("t{n}")), Record::Keep)
            .await
            .expect("tool");
        assert_eq!(pending, None, "the root is known: nothing new");
        cost.push(w.fs.counters());
        drop(s);
    }
    assert_eq!(cost[59].probes, cost[2].probes, "probes per touch");
    assert_eq!(cost[59].reads, cost[2].reads, "reads per touch");
    let s = w.reopen().await;
    assert!(s.host().replay_since_last_message().is_empty());
}

/// A touch whose message is still pending is replayed by the next process,
/// even after later touches found nothing (the `settled` mark never hides
/// a pending message).
#[tokio::test]
async fn a_pending_touch_survives_later_empty_touches() {
    let w = world();
    let cancel = CancellationToken::new();
    let s = w.create("/w/repo").await;
    s.enter(1, Some("hi".into()), &cancel)
        .await
        .expect("enter")
        .expect("baseline");
    let pending = s
        .tool(&read("pkg/x.ts", "t1"), Record::Keep)
        .await
        .expect("tool")
        .expect("pending");
    drop(s);
    let s = w.reopen().await;
    assert_eq!(
        s.tool(&read("x.ts", "t2"), Record::Keep)
            .await
            .expect("tool"),
        Some(pending.clone())
    );
    drop(s);
    let s = w.reopen().await;
    assert_eq!(s.pending(), Some(pending));
}

/// A kept typed touch is composed again by the next process, whatever the
/// configured tool maps say (none of them names it).
#[rstest::rstest]
#[case::list("pkg", TouchKind::List)]
#[case::read("pkg/x.ts", TouchKind::Read)]
#[case::shell("/w/repo", TouchKind::Shell { command: "ls pkg".into() })]
#[tokio::test]
async fn a_kept_typed_touch_is_composed_again(#[case] path: &str, #[case] kind: TouchKind) {
    let mut w = world();
    // No touch tool at all: only the typed record can bring the touch back.
    w.settings.config = Some(ConfigInput {
        max_bytes: Some(NumberInput::Int(65_536)),
        touch_tools: Some(Default::default()),
        ..ConfigInput::default()
    });
    let cancel = CancellationToken::new();
    let first = w.create("/w/repo").await;
    first
        .enter(1, Some("hi".into()), &cancel)
        .await
        .expect("enter");
    let pending = first
        .touch(Utf8Path::new(path), kind, Record::Keep)
        .await
        .expect("touch")
        .expect("a pending set");
    assert_eq!(changes(&pending), [(Action::Set, "pkg/AGENTS.md".into())]);
    drop(first);
    let second = w.reopen().await;
    assert_eq!(second.pending(), Some(pending), "re-derived from the log");
}

/// A transient touch leaves nothing in the log.
#[tokio::test]
async fn a_transient_touch_records_nothing() {
    let w = world();
    let cancel = CancellationToken::new();
    let s = w.create("/w/repo").await;
    s.enter(1, Some("hi".into()), &cancel).await.expect("enter");
    let before = s.host().events().expect("events").len();
    s.touch(Utf8Path::new("pkg"), TouchKind::List, Record::Transient)
        .await
        .expect("touch")
        .expect("pending");
    assert_eq!(s.host().events().expect("events").len(), before);
}

/// Decision 0027: a log the previous version wrote — the hook's internal
/// `touch` tool, a directory as a `.dsh-touch` entry inside it — still
/// mounts and composes the touches it kept, under a configuration that
/// (as new sessions') has no `touch` tool. The log is an earlier build's:
/// its header has no `touch_events` (decision 0054).
#[rstest::rstest]
#[case::directory_entry("/w/repo/pkg/.dsh-touch")]
#[case::file("/w/repo/pkg/x.ts")]
#[tokio::test]
async fn a_previous_versions_touch_records_still_mount(#[case] path: &str) {
    let w = world();
    let first = w.create("/w/repo").await;
    enter_baseline(&first).await;
    drop(first);
    as_an_earlier_build_wrote_it(
        &w,
        &format!(
            r#"{{"seq":3,"type":"tool","name":"touch","args":{{"path":"{path}"}},"ok":true,"cancelled":false,"token":"hook-0"}}"#
        ),
    );
    let second = w.reopen().await;
    let pending = second.pending().expect("composed from the old record");
    assert_eq!(changes(&pending), [(Action::Set, "pkg/AGENTS.md".into())]);
}

/// Decision 0054: the line the version before this one wrote for a typed
/// touch, verbatim, still replays as the touch it was.
#[tokio::test]
async fn an_earlier_builds_typed_touch_line_still_replays_as_a_touch() {
    let mut w = world();
    // No touch tool at all: only the typed record can bring the touch back.
    w.settings.config = Some(ConfigInput {
        max_bytes: Some(NumberInput::Int(65_536)),
        touch_tools: Some(Default::default()),
        ..ConfigInput::default()
    });
    let first = w.create("/w/repo").await;
    enter_baseline(&first).await;
    drop(first);
    as_an_earlier_build_wrote_it(
        &w,
        r#"{"seq":3,"type":"tool","name":"touch","args":{"path":"pkg","kind":"list"},"ok":true,"cancelled":false,"token":"touch-0a1b2c3d"}"#,
    );
    let second = w.reopen().await;
    let pending = second.pending().expect("composed from the old record");
    assert_eq!(changes(&pending), [(Action::Set, "pkg/AGENTS.md".into())]);
}

/// Decision 0054: in a log this build writes, a product tool that is
/// called `touch` is a tool call: replayed through the tool map, not as a
/// touch of the path in its arguments.
#[tokio::test]
async fn a_tool_named_touch_is_a_tool_call_in_a_new_log() {
    let mut w = world();
    w.settings.config = Some(ConfigInput {
        max_bytes: Some(NumberInput::Int(65_536)),
        touch_tools: Some(Default::default()),
        ..ConfigInput::default()
    });
    let first = w.create("/w/repo").await;
    enter_baseline(&first).await;
    let tool = ToolExecution {
        name: "touch".into(),
        arguments: json!({ "path": "/w/repo/pkg/x.ts" }),
        token: "product-1".into(),
        parent: None,
        is_error: false,
        cancelled: false,
    };
    let pending = first.tool(&tool, Record::Keep).await.expect("tool");
    assert_eq!(pending, None, "no tool map names `touch`");
    drop(first);
    let second = w.reopen().await;
    assert_eq!(second.pending(), None);
    // Not settled away either: the tool is kept, as a tool.
    let events = second.host().events().expect("events");
    assert!(events.iter().any(|e| matches!(
        &e.kind,
        EventKind::Tool { name, .. } if name == "touch"
    )));
}

/// A kept touch is a `touch` event in the log, not a tool event.
#[tokio::test]
async fn a_kept_touch_is_a_touch_event() {
    let w = world();
    let first = w.create("/w/repo").await;
    enter_baseline(&first).await;
    first
        .touch(Utf8Path::new("pkg/x.ts"), TouchKind::Read, Record::Keep)
        .await
        .expect("touch");
    let kinds: Vec<_> = first
        .host()
        .events()
        .expect("events")
        .iter()
        .filter_map(|e| e.kind.type_name().map(str::to_owned))
        .collect();
    assert!(kinds.contains(&"touch".to_owned()), "{kinds:?}");
    assert!(!kinds.contains(&"tool".to_owned()), "{kinds:?}");
}

/// Enters the baseline as a prompt's step (seq 1: the prompt, seq 2: the
/// workspace message).
async fn enter_baseline(s: &Session) {
    s.enter(1, Some("hi".into()), &CancellationToken::new())
        .await
        .expect("enter")
        .expect("baseline");
    assert_eq!(s.host().events().expect("events").len(), 2);
}

/// Rewrites the session's log as an earlier build had it: the header line
/// without `touch_events`, then `line` appended.
fn as_an_earlier_build_wrote_it(w: &World, line: &str) {
    let path = w.store.log_path("s").expect("path");
    let text = std::fs::read_to_string(&path).expect("read");
    let (header, rest) = text.split_once('\n').expect("a header line");
    let old = header.replace(r#","touch_events":true"#, "");
    assert_ne!(old, header, "the new header says touch_events");
    std::fs::write(&path, format!("{old}\n{rest}{line}\n")).expect("write");
}

/// `close_for_exit` ends a session as dropping it does (issue 35): the same
/// side files with the same bytes (remembered versions, kept fold), and the
/// session lock released, so the next process opens it without waiting.
#[tokio::test]
async fn closing_for_exit_saves_and_unlocks_as_dropping_does() {
    let mut kept = Vec::new();
    for for_exit in [false, true] {
        let w = world();
        let cancel = CancellationToken::new();
        let s = w.create("/w/repo").await;
        s.enter(1, Some("hi".into()), &cancel)
            .await
            .expect("enter")
            .expect("baseline");
        s.tool(&read("pkg/x.ts", "t1"), Record::Keep)
            .await
            .expect("tool");
        s.step_end(&cancel).await.expect("step end");
        if for_exit {
            s.close_for_exit();
        } else {
            drop(s);
        }
        let dir = w.store.log_path("s").expect("path");
        let dir = dir.parent().expect("session dir");
        let side: Vec<Option<Vec<u8>>> = [crate::versions::VERSIONS_FILE_NAME, VIEW_FILE_NAME]
            .iter()
            .map(|name| std::fs::read(dir.join(name)).ok())
            .collect();
        // The memory provider's versions never settle, so only the fold is
        // kept here; both files are compared all the same.
        assert!(side[1].is_some(), "the kept fold is written");
        // Unlocked: a zero wait would fail on a held lock.
        let store = SessionStore::new(w.store.dir()).with_lock_wait(LockWait::no_wait());
        let (log, _) = store.open("s").expect("the lock is released");
        drop(log);
        kept.push(side);
    }
    assert_eq!(kept[0], kept[1]);
}
