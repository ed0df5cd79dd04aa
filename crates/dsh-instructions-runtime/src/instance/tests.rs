//! The instance's tests: mounting, waiting parents, and the touches shell,
//! typed and touch-tool reports make.

use super::front::MAX_WAITING_PARENTS;
use super::*;
use crate::memory_host::MemoryHost;
use dsh_home_paths::{DshHome, HomeLabel};
use dsh_instructions_discovery::memory::{MemNode, MemoryProvider};
use rstest::rstest;

fn mount_of(config: Option<Config>) -> (Mount, Arc<MemoryHost>) {
    let fs = MemoryProvider::new(vec!["/repo".into(), "/home/u/.dsh".into()]);
    fs.insert("/repo/.git".into(), MemNode::dir());
    fs.insert("/repo/AGENTS.md".into(), MemNode::file("root rule"));
    fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("pkg rule"));
    fs.insert("/repo/lib/AGENTS.md".into(), MemNode::file("lib rule"));
    let mount = Mount {
        config,
        provider: Some(Arc::new(fs)),
        home: DshHome {
            path: "/home/u/.dsh".into(),
            label: HomeLabel::Default,
        },
        root: None,
        user_files: Vec::new(),
    };
    (mount, Arc::new(MemoryHost::new("/repo".into())))
}

fn read(path: &str, token: &str, parent: Option<&str>) -> ToolExecution {
    ToolExecution {
        name: "read".into(),
        arguments: serde_json::json!({ "file_path": path }),
        token: token.into(),
        parent: parent.map(str::to_owned),
        is_error: false,
        cancelled: false,
    }
}

fn file(path: &str) -> Touch {
    Touch::Path(crate::touch::Resolved::File(path.into()))
}

/// Mounting from plain synchronous code is an embedding mistake reported
/// as a value, never a panic — active or no-op alike (R-RT-9).
#[rstest]
#[case::active(Some(Config::with_max_bytes(4096)))]
#[case::disabled(None)]
fn mount_outside_a_runtime_is_no_runtime(#[case] config: Option<Config>) {
    let (mount, host) = mount_of(config);
    let got = Instance::mount(mount, host as Arc<dyn Host>);
    assert!(matches!(got, Err(RuntimeError::NoRuntime)), "{got:?}");
}

#[tokio::test]
async fn mount_inside_a_runtime_runs_the_lane() {
    let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
    let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
    assert!(instance.is_active());
    instance.tool_result(&read("pkg/x.ts", "t1", None));
    instance.settle().await;
    assert_eq!(instance.pending().len(), 1, "the lane projected the touch");
}

/// R-RT-4 keeps a child's touches until its parent settles; a parent
/// that never reports holds nothing past the end of the turn (decision
/// 0011), but still gets its touches within the turn, across step ends.
#[tokio::test]
async fn waiting_parents_are_dropped_at_turn_end() {
    let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
    let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
    instance.tool_result(&read("pkg/a.ts", "c1", Some("p1")));
    instance.tool_result(&read("lib/b.ts", "c2", Some("lost")));
    instance.session_event(SessionEvent::StepEnd);
    assert_eq!(instance.waiting_parents(), 2);

    instance.tool_result(&read("x", "p1", None));
    assert_eq!(instance.waiting_parents(), 1, "a settled parent is freed");
    instance.settle().await;
    let inbox = instance.pending();
    let paths: Vec<&str> = inbox[0]
        .source
        .changes
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert!(paths.contains(&"pkg/AGENTS.md"), "{paths:?}");
    assert!(!paths.contains(&"lib/AGENTS.md"), "{paths:?}");

    instance.session_event(SessionEvent::TurnEnd);
    assert_eq!(instance.waiting_parents(), 0);
}

fn bash(command: &str, workdir: Option<&str>) -> ToolExecution {
    let mut arguments = serde_json::json!({ "command": command });
    if let Some(dir) = workdir {
        arguments["workdir"] = dir.into();
    }
    ToolExecution {
        name: "Bash".into(),
        arguments,
        token: "b1".into(),
        parent: None,
        is_error: false,
        cancelled: false,
    }
}

fn shell_config(also_a_touch_tool: bool) -> Config {
    let mut input = serde_json::json!({"max_bytes": 4096, "shell_tools": {"Bash": ["command"]}});
    if also_a_touch_tool {
        input["touch_tools"] = serde_json::json!({"Bash": ["command"]});
    }
    serde_json::from_value::<dsh_instructions_state::ConfigInput>(input)
        .expect("config input")
        .resolve()
        .expect("valid")
        .config
}

/// Runs one Bash call after the baseline entered, on a memory tree with
/// `pkg/src/x.ts` and `/outside/o.ts`; returns the paths the projected
/// message changes and the reads the projection made.
async fn shell_run(config: Config, exec: ToolExecution) -> (Vec<String>, u64) {
    run_after_baseline(config, |i| i.tool_result(&exec)).await
}

/// [`shell_run`] for any report the instance gets.
async fn run_after_baseline(config: Config, report: impl FnOnce(&Instance)) -> (Vec<String>, u64) {
    let fs = Arc::new(MemoryProvider::new(vec![
        "/repo".into(),
        "/home/u/.dsh".into(),
    ]));
    fs.insert("/repo/.git".into(), MemNode::dir());
    fs.insert("/repo/AGENTS.md".into(), MemNode::file("root rule"));
    fs.insert("/repo/pkg/AGENTS.md".into(), MemNode::file("pkg rule"));
    fs.insert("/repo/pkg/src/x.ts".into(), MemNode::file("code"));
    fs.insert("/outside/pkg/AGENTS.md".into(), MemNode::file("no"));
    fs.insert("/outside/o.ts".into(), MemNode::file("no"));
    let mount = Mount {
        config: Some(config),
        provider: Some(fs.clone()),
        home: DshHome {
            path: "/home/u/.dsh".into(),
            label: HomeLabel::Default,
        },
        root: None,
        user_files: Vec::new(),
    };
    let host = Arc::new(MemoryHost::new("/repo".into()));
    let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
    let entered = instance
        .pre_step(
            1,
            Decision::Enter(vec![crate::host::BatchItem {
                message: "prompt".to_owned(),
                claimed: true,
            }]),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(entered.entered.is_some(), "the baseline entered");
    host.append_batch(&entered.batch.expect("entered"));
    fs.reset_counters();
    report(&instance);
    instance.settle().await;
    let paths = instance
        .pending()
        .iter()
        .flat_map(|m| m.source.changes.iter().map(|c| c.path.clone()))
        .collect();
    (paths, fs.counters().reads)
}

/// R-DISC-10 / R-CFG-11: which shell calls touch which directories.
#[rstest]
#[case::file_word(shell_config(false), bash("cat pkg/src/x.ts", None), &["pkg/AGENTS.md"])]
#[case::directory_word(shell_config(false), bash("ls pkg", None), &["pkg/AGENTS.md"])]
#[case::cd_then_file(shell_config(false), bash("cd pkg && cat src/x.ts", None), &["pkg/AGENTS.md"])]
#[case::workdir_relative(shell_config(false), bash("cat src/x.ts", Some("pkg")), &["pkg/AGENTS.md"])]
#[case::workdir_absolute(shell_config(false), bash("cat x.ts", Some("/repo/pkg/src")), &["pkg/AGENTS.md"])]
#[case::in_both_maps_is_a_shell_tool(shell_config(true), bash("cat pkg/src/x.ts", None), &["pkg/AGENTS.md"])]
#[case::off_by_default(Config::with_max_bytes(4096), bash("cat pkg/src/x.ts", None), &[])]
#[case::missing_path(shell_config(false), bash("cat pkg/nope.ts", None), &[])]
#[case::glob_is_no_path(shell_config(false), bash("cat pkg/*", None), &[])]
#[case::outside_the_roots(shell_config(false), bash("cat /outside/o.ts /outside/pkg", None), &[])]
#[tokio::test]
async fn shell_touches(
    #[case] config: Config,
    #[case] exec: ToolExecution,
    #[case] expected: &[&str],
) {
    let (paths, reads) = shell_run(config, exec).await;
    assert_eq!(paths, expected);
    if expected.is_empty() {
        // R-HOOK-6: words that name nothing cost no read.
        assert_eq!(reads, 0);
    }
}

fn shell(command: &str) -> TouchKind {
    TouchKind::Shell {
        command: command.to_owned(),
    }
}

/// Typed touches (issue 19): a file kind touches the file's directory,
/// existing or not; a directory kind the directory itself; a shell
/// touch reads its words from the path as workdir — none of them needs
/// a `touch_tools` or `shell_tools` entry.
#[rstest]
#[case::read_missing_file("pkg/new.ts", TouchKind::Read, &["pkg/AGENTS.md"])]
#[case::write_absolute("/repo/pkg/src/x.ts", TouchKind::Write, &["pkg/AGENTS.md"])]
#[case::read_of_a_directory_is_its_parent("pkg", TouchKind::Read, &[])]
#[case::list_directory("pkg", TouchKind::List, &["pkg/AGENTS.md"])]
#[case::search_missing_directory("pkg/gone", TouchKind::Search, &["pkg/AGENTS.md"])]
#[case::list_normalized("pkg/src/..", TouchKind::List, &["pkg/AGENTS.md"])]
#[case::shell_in_workdir("pkg", shell("cat src/x.ts"), &["pkg/AGENTS.md"])]
#[case::shell_blank_workdir_is_the_cwd("", shell("ls pkg"), &["pkg/AGENTS.md"])]
#[case::shell_missing_word("pkg", shell("cat nope.ts"), &[])]
#[case::blank_path("  ", TouchKind::Read, &[])]
#[case::outside_the_cwd("/outside/pkg", TouchKind::List, &[])]
#[tokio::test]
async fn typed_touches(#[case] path: &str, #[case] kind: TouchKind, #[case] expected: &[&str]) {
    // The default config: no shell tools, no tool named for the kind.
    let (paths, reads) = run_after_baseline(Config::with_max_bytes(4096), |i| {
        i.touch(Utf8Path::new(path), kind)
    })
    .await;
    assert_eq!(paths, expected);
    if expected.is_empty() {
        assert_eq!(reads, 0);
    }
}

/// R-CFG-8: a `touch_tools` argument listed with a trailing `/` holds a
/// directory, touched itself; without it, the path is a file's.
#[rstest]
#[case::directory_argument(&["path/"], "pkg", &["pkg/AGENTS.md"])]
#[case::file_argument(&["path"], "pkg", &[])]
#[case::first_argument_that_holds_a_string(&["dir/", "path"], "pkg/src/x.ts", &["pkg/AGENTS.md"])]
#[tokio::test]
async fn touch_tool_directory_arguments(
    #[case] args: &[&str],
    #[case] value: &str,
    #[case] expected: &[&str],
) {
    let input = serde_json::json!({"max_bytes": 4096, "touch_tools": {"ls": args}});
    let config = serde_json::from_value::<dsh_instructions_state::ConfigInput>(input)
        .expect("input")
        .resolve()
        .expect("valid")
        .config;
    let exec = ToolExecution {
        name: "ls".into(),
        arguments: serde_json::json!({ "path": value }),
        token: "l1".into(),
        parent: None,
        is_error: false,
        cancelled: false,
    };
    let (paths, _) = shell_run(config, exec).await;
    assert_eq!(paths, expected);
}

/// A touch while a step is open waits for the step's end (R-RT-5), as a
/// tool result does.
#[tokio::test]
async fn typed_touches_wait_for_the_step_end() {
    let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
    let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
    instance.session_event(SessionEvent::StepStart);
    instance.touch(Utf8Path::new("pkg"), TouchKind::List);
    instance.settle().await;
    assert!(
        instance.pending().is_empty(),
        "staged while the step is open"
    );
    instance.session_event(SessionEvent::StepEnd);
    instance.settle().await;
    assert_eq!(instance.pending().len(), 1);
}

/// A failed or cancelled shell call touches nothing, like any tool
/// (R-RT-3).
#[rstest]
#[case::error(true, false)]
#[case::cancelled(false, true)]
#[tokio::test]
async fn failed_shell_calls_touch_nothing(#[case] is_error: bool, #[case] cancelled: bool) {
    let mut exec = bash("cat pkg/src/x.ts", None);
    exec.is_error = is_error;
    exec.cancelled = cancelled;
    let (paths, _) = shell_run(shell_config(false), exec).await;
    assert!(paths.is_empty(), "{paths:?}");
}

#[rstest]
fn the_oldest_waiting_parent_goes_beyond_the_bound() {
    let mut front = Front::default();
    for i in 0..MAX_WAITING_PARENTS {
        front.bubble(&format!("p{i}"), [file(&format!("/r/{i}"))]);
    }
    // A later touch for p0 does not make it younger: age is first bubble.
    front.bubble("p0", [file("/r/again")]);
    assert_eq!(front.children.len(), MAX_WAITING_PARENTS);
    front.bubble("newest", [file("/r/n")]);
    assert_eq!(front.children.len(), MAX_WAITING_PARENTS);
    assert!(!front.children.contains_key("p0"));
    assert!(front.children.contains_key("p1"));
    assert_eq!(front.children["newest"].touches, [file("/r/n")]);
}

#[rstest]
fn turn_end_forgets_every_waiting_parent() {
    let mut front = Front::default();
    front.bubble("p", [file("/r/a")]);
    front.bubble("q", []);
    front.end_turn();
    assert!(front.children.is_empty());
}

/// A seeded version cache that nothing changed is no news: the hook writes
/// nothing and copies nothing at the end of an event (issue 35), while the
/// entries themselves are still there for a host that asks for all.
#[tokio::test]
async fn unchanged_remembered_versions_are_no_news() {
    use dsh_instructions_state::{Digest, ScopeKey, cache::CacheEntry};
    let (mount, host) = mount_of(None);
    let seed = vec![(
        ScopeKey::project("pkg", "base"),
        CacheEntry {
            path: "pkg/AGENTS.md".into(),
            version: FileVersion::settled([1, 2, 3, 4]),
            digest: Digest::of("pkg rule"),
            trimmed_digest: Digest::of("pkg rule"),
            imports: Vec::new(),
        },
    )];
    let instance = Instance::mount_remembering(mount, host as Arc<dyn Host>, seed.clone()).unwrap();
    assert_eq!(instance.remembered_versions(), (seed, false));
    assert_eq!(instance.changed_remembered_versions(), None);
}

/// The known directories (R-RT-3 b) are those a visible message holds a
/// file of: before any composition none; after the baseline the root; after
/// a touch's message entered, its directory too. A touch that reaches only
/// known directories composes nothing new (what the agent hook's quiet
/// memo relies on, decision 0085); one that reaches another does.
#[tokio::test]
async fn known_directories_are_those_the_model_sees_files_of() {
    let (mount, host) = mount_of(Some(Config::with_max_bytes(4096)));
    let instance = Instance::mount(mount, host.clone() as Arc<dyn Host>).unwrap();
    assert!(
        instance.known_directories().await.is_empty(),
        "no composition yet"
    );
    let cancel = CancellationToken::new();
    let enter = |step| {
        instance.pre_step(
            step,
            Decision::Enter(vec![crate::host::BatchItem {
                message: "go".to_owned(),
                claimed: true,
            }]),
            &cancel,
        )
    };
    let first = enter(1).await.unwrap();
    host.append_batch(&first.batch.expect("entered"));
    // The view is refreshed by the next composition.
    instance.touch("lib/x.rs".into(), TouchKind::Read);
    instance.settle().await;
    assert_eq!(instance.known_directories().await, ["/repo"]);
    let second = enter(2).await.unwrap();
    assert!(second.entered.is_some(), "lib/AGENTS.md entered");
    host.append_batch(&second.batch.expect("entered"));
    instance.touch("pkg/y.rs".into(), TouchKind::Write);
    instance.settle().await;
    let known = instance.known_directories().await;
    assert_eq!(known, ["/repo", "/repo/lib"]);
    // pkg reached a directory nobody knew: a message is pending.
    assert_eq!(instance.pending().len(), 1);
    let read = crate::tool_args::TouchedPath {
        path: "pkg/y.rs".into(),
        kind: TouchKind::Read,
    };
    assert_eq!(read.reaches("/repo".into()).unwrap(), ["/repo/pkg"]);
}

/// [`crate::tool_args::TouchedPath::reaches`] names, absolute, exactly the
/// directories the lane reconciles for the same touch (as root-relative
/// keys), for file and directory kinds, inside and outside the cwd.
#[rstest]
#[case("a/b/c.rs", TouchKind::Read)]
#[case("/repo/sub/a/b", TouchKind::List)]
#[case("a/../b/./c/", TouchKind::Search)]
#[case("../x/y.rs", TouchKind::Write)]
#[case("/elsewhere/a.rs", TouchKind::Read)]
#[case("c.rs", TouchKind::Read)]
#[case("/", TouchKind::Read)]
#[case("  ", TouchKind::Read)]
fn reaches_is_what_the_lane_reconciles(#[case] path: &str, #[case] kind: TouchKind) {
    let (root, cwd) = (Utf8Path::new("/repo"), Utf8Path::new("/repo/sub"));
    let touched = crate::tool_args::TouchedPath {
        path: path.to_owned(),
        kind: kind.clone(),
    };
    let reaches: Vec<String> = touched
        .reaches(cwd)
        .expect("not a shell touch")
        .iter()
        .map(|d| d.strip_prefix(root).expect("under the root").to_string())
        .collect();
    let mut lane = std::collections::BTreeSet::new();
    if let Some(Touch::Path(resolved)) = typed_touch(cwd, Utf8Path::new(path), &kind)
        && let Some(dir) = resolved.dir()
    {
        super::lane::touched_dirs(root, cwd, dir, &mut lane);
    }
    assert_eq!(reaches, lane.into_iter().collect::<Vec<_>>(), "{path}");
}
