//! The quiet memo: its format, and its answers against the full path's.

use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::HomeEnv;
use rstest::rstest;
use serde_json::json;

use std::collections::BTreeSet;

use super::format::{Memo, PathStamps, decode_path_line, hex};
use super::key::{build, keys_of};
use super::stamp::{Look, Stamp, look};
use super::*;
use crate::agent::Agent;
use crate::event::{Action, HookEvent};
use crate::testdir::respond;
use dsh_instructions_state::ConfigInput;

fn stamp(seed: u64) -> Stamp {
    Stamp([seed, 2, 0o100_644, 4, 5, 6, u64::MAX, 999_999_999])
}

fn memo() -> Memo {
    let mut m = Memo {
        log: Some(stamp(1)),
        settings: None,
        cwd: Some("/w".into()),
        keys: vec![
            ("ab12".into(), "nothing new".into()),
            ("cd34".into(), "nothing new; warning: x y".into()),
        ],
        claims: vec![("ef56".into(), "nothing new".into())],
        known: BTreeSet::from(["/w/a dir".to_owned()]),
        batches: BTreeSet::from(["0f".to_owned()]),
        paths: PathStamps::default(),
    };
    m.paths.insert("/w/AGENTS.md", Look::Entry, stamp(7));
    m.paths.insert("/w/a dir/x", Look::Target, stamp(8));
    m.paths.insert("/w/a dir", Look::Target, stamp(9));
    m
}

#[test]
fn a_memo_reads_back_as_written() {
    let m = memo();
    let text = m.encode();
    assert!(text.starts_with(
        "dsh-quiet-memo 2\nlog 1 2 81a4 4 5 6 ffffffffffffffff 3b9ac9ff\nsettings -\ncwd /w\n"
    ));
    // A known directory's target stamp is a `k` line, any other a `t` one.
    assert!(
        text.contains("\nk 9 2 81a4 4 5 6 ffffffffffffffff 3b9ac9ff /w/a dir\n"),
        "{text}"
    );
    assert!(text.contains("\nt 8 2 "), "{text}");
    assert!(text.contains("\nclaim ef56 nothing new\n"), "{text}");
    assert_eq!(Memo::decode(text.as_bytes()), Some(m));
}

/// Anything not whole and of this format is no memo (and is never read
/// as one): torn, another format, a bad word, a relative path.
#[rstest]
#[case::torn(|t: String| t[..t.len() - 1].to_owned())]
#[case::cut_mid_line(|t: String| t[..t.len() - 9].to_owned())]
#[case::other_header(|t: String| t.replace("dsh-quiet-memo 2", "dsh-quiet-memo 1"))]
#[case::relative_cwd(|t: String| t.replace("cwd /w\n", "cwd w\n"))]
#[case::claim_without_reason(|t: String| t.replace("claim ef56 nothing new\n", "claim ef56\n"))]
#[case::no_settings_line(|t: String| t.replace("settings -\n", ""))]
#[case::upper_hex(|t: String| t.replace(" 81a4 ", " 81A4 "))]
#[case::long_word(|t: String| t.replace(" 3b9ac9ff\nsettings", " 13b9ac9ff00000000\nsettings"))]
#[case::relative_path(|t: String| t.replace(" /w/AGENTS.md", " w/AGENTS.md"))]
#[case::unknown_kind(|t: String| t.replace("\ne ", "\nx "))]
#[case::key_without_reason(|t: String| t.replace("key ab12 nothing new\n", "key ab12\n"))]
fn damaged_memos_are_no_memos(#[case] damage: fn(String) -> String) {
    let text = damage(memo().encode());
    assert_eq!(Memo::decode(text.as_bytes()), None, "{text}");
}

#[rstest]
#[case("0", Some(0))]
#[case("ff", Some(255))]
#[case("ffffffffffffffff", Some(u64::MAX))]
#[case("", None)]
#[case("1ffffffffffffffff", None)]
#[case("-1", None)]
#[case("0x1", None)]
fn hex_words(#[case] text: &str, #[case] want: Option<u64>) {
    assert_eq!(hex(text), want);
}

/// A path line's path may hold spaces; its words are exactly eight.
#[rstest]
#[case("e 1 2 3 4 5 6 7 8 /a b", Some((Look::Entry, "/a b", false)))]
#[case("t 1 2 3 4 5 6 7 8 /", Some((Look::Target, "/", false)))]
#[case("k 1 2 3 4 5 6 7 8 /k", Some((Look::Target, "/k", true)))]
#[case("e 1 2 3 4 5 6 7 /a", None)]
#[case("e 1 2 3 4 5 6 7 8  /a", None)]
#[case("e 1 2 3 4 5 6 7 8 9 /a", None)]
#[case("e1 2 3 4 5 6 7 8 9 /a", None)]
fn path_lines(#[case] line: &str, #[case] want: Option<(Look, &str, bool)>) {
    assert_eq!(decode_path_line(line).map(|(h, _, p, k)| (h, p, k)), want);
}

/// A key names its build (a memo another build wrote, before an upgrade,
/// never answers for this one) and its event's action.
#[test]
fn keys_name_the_build_and_the_action() {
    let event = |action: Action| HookEvent {
        name: "UserPromptSubmit".into(),
        session_id: "s".into(),
        cwd: "/w".into(),
        action,
    };
    let (input, env) = (ConfigInput::default(), HomeEnv::default());
    let key = |e: &HookEvent, build: &str| keys_of(Agent::Claude, e, &input, &env, build).0;
    let prompt = event(Action::Prompt);
    assert_eq!(
        key(&prompt, "0.1.0 [1]"),
        key(&event(Action::Prompt), "0.1.0 [1]")
    );
    assert_ne!(key(&prompt, "0.1.0 [1]"), key(&prompt, "0.1.0 [2]"));
    assert_ne!(key(&prompt, "0.1.0 [1]"), key(&prompt, "0.2.0 [1]"));
    assert_ne!(
        key(&prompt, "0.1.0 [1]"),
        key(&event(Action::FollowUp), "0.1.0 [1]")
    );
    assert!(build().is_some_and(|b| b.starts_with(env!("CARGO_PKG_VERSION"))));
}

/// The margin: a change as old as the margin before the event vouches, a
/// newer one does not.
#[test]
fn only_old_changes_vouch() {
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
    let at = |secs: u64, nanos: u64| Stamp([0, 0, 0, 0, 0, 0, secs, nanos]);
    assert!(at(998, 0).old(t0));
    assert!(!at(998, 1).old(t0));
    assert!(!at(999, 0).old(t0));
    assert!(
        !at(2_000, 0).old(t0),
        "a change in the future never vouches"
    );
    assert!(Stamp([0, 0, 0, 0, 0, 0, (-5i64).cast_unsigned(), 0]).old(t0));
}

/// A test machine: a project with nested directories, a home, and
/// sessions answered in this process.
struct Machine {
    _tmp: Option<tempfile::TempDir>,
    root: Utf8PathBuf,
    ws: Utf8PathBuf,
    env: HomeEnv,
}

const DIRS: usize = 3;

/// Where a test machine is built. The memo depends on every directory
/// above the project (an instruction file may appear there, R-HOOK-8), and
/// `/tmp` changes whenever any test makes a temporary directory: built
/// there, a machine would rarely see a hit. So machines are built in slots
/// made all at once before the first, below the build's own directory,
/// where nothing else changes while the tests run; past the slots, in a
/// temporary directory (correct, only fewer hits).
fn slot() -> (Option<tempfile::TempDir>, Utf8PathBuf) {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const SLOTS: usize = 256;
    static BASE: OnceLock<Option<Utf8PathBuf>> = OnceLock::new();
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let base = BASE.get_or_init(|| {
        // target/<profile>/deps/<test binary> -> target/<profile>/quiet-tests
        let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
        let dir = Utf8PathBuf::from_path_buf(exe.parent()?.parent()?.join("quiet-tests")).ok()?;
        let _ = std::fs::remove_dir_all(&dir);
        for i in 0..SLOTS {
            std::fs::create_dir_all(dir.join(i.to_string())).ok()?;
        }
        Some(dir)
    });
    match base {
        Some(base) if NEXT.load(Ordering::SeqCst) < SLOTS => {
            let i = NEXT.fetch_add(1, Ordering::SeqCst);
            if i < SLOTS {
                return (None, base.join(i.to_string()));
            }
        }
        _ => {}
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = Utf8PathBuf::from_path_buf(tmp.path().canonicalize().expect("real")).expect("utf-8");
    (Some(tmp), root)
}

fn machine() -> Machine {
    let (tmp, root) = slot();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join(".git")).expect("mkdir");
    std::fs::create_dir_all(root.join("home")).expect("mkdir");
    std::fs::write(ws.join("AGENTS.md"), "ROOT v1\n").expect("write");
    for d in 0..DIRS {
        std::fs::create_dir_all(ws.join(format!("d{d}"))).expect("mkdir");
        std::fs::write(ws.join(format!("d{d}/file.txt")), "x\n").expect("write");
    }
    std::fs::write(ws.join("d0/AGENTS.md"), "D0 v1\n").expect("write");
    let env = HomeEnv {
        home: Some(root.join("home").into_std_path_buf().into_os_string()),
        dsh_home: Some(root.join("home/.dsh").into_std_path_buf().into_os_string()),
        cwd: ws.clone().into_std_path_buf(),
        account_home: None,
    };
    Machine {
        _tmp: tmp,
        root,
        ws,
        env,
    }
}

/// One Claude Code event.
#[derive(Clone, Debug)]
enum Ev {
    Prompt,
    Read(usize),
    Shell(usize),
    /// A read of a file no event named before (it may not exist), in a
    /// directory of the tree or one below it: what a claim answers when
    /// the directories it reaches are known (decision 0085).
    ReadNew(usize, u8, bool),
    /// An edit of a directory's file.
    Edit(usize),
    /// A listing of a directory.
    List(usize),
}

impl Machine {
    fn input(&self, session: &str, name: &str, extra: serde_json::Value) -> Vec<u8> {
        let mut v = json!({"session_id": session, "hook_event_name": name, "cwd": self.ws});
        if let (Some(o), Some(more)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(more.clone());
        }
        v.to_string().into_bytes()
    }

    fn start(&self, session: &str) -> String {
        respond(
            Agent::Claude,
            &self.input(session, "SessionStart", json!({"source": "startup"})),
            &self.env,
        )
    }

    fn event(&self, session: &str, ev: &Ev) -> String {
        let input = match ev {
            Ev::Prompt => self.input(session, "UserPromptSubmit", json!({"prompt": "go on"})),
            Ev::Read(d) => self.input(
                session,
                "PostToolUse",
                json!({"tool_name": "Read",
                    "tool_input": {"file_path": self.ws.join(format!("d{d}/file.txt"))},
                    "tool_response": {}}),
            ),
            Ev::Shell(d) => self.input(
                session,
                "PostToolUse",
                json!({"tool_name": "Bash",
                    "tool_input": {"command": format!("cat d{d}/file.txt")},
                    "tool_response": {}}),
            ),
            Ev::ReadNew(d, n, deeper) => {
                let sub = if *deeper { "sub/" } else { "" };
                let file = self.dir(*d).join(format!("{sub}n{n}.rs"));
                self.input(
                    session,
                    "PostToolUse",
                    json!({"tool_name": "Read", "tool_input": {"file_path": file},
                        "tool_response": {}}),
                )
            }
            Ev::Edit(d) => self.input(
                session,
                "PostToolUse",
                json!({"tool_name": "Edit",
                    "tool_input": {"file_path": self.dir(*d).join("file.txt"),
                        "old_string": "x", "new_string": "y"},
                    "tool_response": {}}),
            ),
            Ev::List(d) => self.input(
                session,
                "PostToolUse",
                json!({"tool_name": "LS", "tool_input": {"path": self.dir(*d)},
                    "tool_response": {}}),
            ),
        };
        respond(Agent::Claude, &input, &self.env)
    }

    fn session_dir(&self, session: &str) -> Utf8PathBuf {
        self.root
            .join("home/.dsh/hooks/claude/sessions")
            .join(session)
    }

    fn hook_log(&self) -> String {
        std::fs::read_to_string(self.root.join("home/.dsh/hooks/claude/hook.log"))
            .unwrap_or_default()
    }

    /// Lines of the hook log that answered from the memo.
    fn memo_answers(&self) -> usize {
        self.hook_log()
            .lines()
            .filter(|l| l.contains("unchanged since a quiet event"))
            .count()
    }
}

/// Runs `f` with the memo's margin at zero (the test's files are fresh),
/// and, when `off`, the memo switched off.
fn with_memo<T>(margin: Option<Duration>, off: bool, f: impl FnOnce() -> T) -> T {
    TEST_MARGIN.with(|m| m.set(margin));
    TEST_OFF.with(|o| o.set(off));
    let out = f();
    TEST_MARGIN.with(|m| m.set(None));
    TEST_OFF.with(|o| o.set(false));
    out
}

/// The stamps of the directories above a machine, up to `/`. The memo
/// depends on them (an instruction file may appear there, R-HOOK-8), and
/// they are the only ones other tests and processes change: `/tmp`, or a
/// checkout's parents while other work runs (a directory created there).
fn above(m: &Machine) -> Vec<Option<Stamp>> {
    m.root
        .ancestors()
        .skip(1)
        .map(|dir| look(dir, Look::Target).ok())
        .collect()
}

/// Attempts at most of [`answers_from_memo`]: a hang guard against
/// directories above the machine that change without pause, never reached
/// when the memo works and the machine is quiet (a hit takes two).
const ATTEMPTS: usize = 200;

/// Repeats the quiet event `ev` until it answers from the memo. The first
/// may take the full path (which writes the memo). A later miss must be
/// explained by a directory above the machine that changed since the
/// attempt before (decision 0082): then that attempt's memo rightly did
/// not vouch. A miss with nothing changed is a failure, however slow the
/// machine is: nothing here depends on time.
fn answers_from_memo(m: &Machine, session: &str, ev: &Ev) {
    let mut before_last: Option<Vec<Option<Stamp>>> = None;
    for _ in 0..ATTEMPTS {
        let now = above(m);
        let answered = m.memo_answers();
        assert_eq!(m.event(session, ev), "{}");
        if m.memo_answers() > answered {
            return;
        }
        if let Some(before) = &before_last {
            assert_ne!(
                above(m),
                *before,
                "the memo did not answer and nothing it depends on changed: {}",
                m.hook_log()
            );
        }
        before_last = Some(now);
    }
    panic!("the directories above the machine changed at each of {ATTEMPTS} attempts");
}

/// Runs `change` on `path` (inside the machine) and gives every entry it
/// changed a modification time no entry ever had: the file itself when it
/// is one, and each directory whose entries it changed (an entry created,
/// removed, or, when `relinked`, a link replaced). At the tests' zero
/// margin two changes within one timestamp tick would otherwise share a
/// stamp (the real margin excludes that); a distinct time makes each
/// change visible without waiting for the clock (decision 0045 item 6).
fn changed(m: &Machine, path: &Utf8Path, relinked: bool, change: impl FnOnce()) {
    let chain: Vec<&Utf8Path> = path
        .ancestors()
        .take_while(|p| p.starts_with(&m.root))
        .collect();
    let present = |p: &Utf8Path| std::fs::symlink_metadata(p).is_ok();
    let existed: Vec<bool> = chain.iter().map(|p| present(p)).collect();
    change();
    let mut stale = Vec::new();
    if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file()) {
        stale.push(path);
    }
    for (i, pair) in chain.windows(2).enumerate() {
        if present(pair[0]) != existed[i] || (i == 0 && relinked) {
            stale.push(pair[1]);
        }
    }
    for entry in stale {
        restamp(entry);
    }
}

/// Gives `path` a modification time never handed out before.
fn restamp(path: &Utf8Path) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let at = SystemTime::UNIX_EPOCH
        + Duration::from_secs(1_000_000_000 + NEXT.fetch_add(1, Ordering::SeqCst));
    std::fs::File::open(path)
        .and_then(|f| f.set_times(std::fs::FileTimes::new().set_modified(at)))
        .expect("restamp");
}

impl Machine {
    /// Writes `text` to `path` (creating its directories), as [`changed`].
    fn write(&self, path: &Utf8Path, text: &str) {
        changed(self, path, false, || {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        });
    }
}

/// Decision 0076: once a quiet event wrote the memo, the same event again
/// answers from it; a change of anything it read takes the full path and
/// gives the change.
#[rstest]
#[case::prompt(Ev::Prompt)]
#[case::read(Ev::Read(0))]
#[case::shell(Ev::Shell(1))]
fn a_quiet_event_again_answers_from_the_memo_until_something_changes(#[case] ev: Ev) {
    let m = machine();
    with_memo(Some(Duration::ZERO), false, || {
        assert!(m.start("s").contains("ROOT v1"));
        // The first read of a directory gives its file.
        m.event("s", &ev);
        answers_from_memo(&m, "s", &ev);
        // An edit of a file the composition read.
        m.write(&m.ws.join("AGENTS.md"), "ROOT v2\n");
        let answer = m.event("s", &ev);
        assert!(answer.contains("ROOT v2"), "{answer}");
        // A file appearing where the composition found none.
        answers_from_memo(&m, "s", &ev);
        m.write(&m.ws.join("CLAUDE.md"), "ROOT CLAUDE\n");
        let answer = m.event("s", &ev);
        assert!(answer.contains("ROOT CLAUDE"), "{answer}");
    });
}

/// A memo rewritten after a change takes over what still holds of the one
/// before (decision 0077): the directory that changed is looked at again,
/// so a later change there is seen too.
#[rstest]
#[case::read(Ev::Read(1))]
#[case::shell(Ev::Shell(1))]
fn a_rewritten_memo_still_sees_the_directory_that_changed(#[case] ev: Ev) {
    let m = machine();
    with_memo(Some(Duration::ZERO), false, || {
        m.start("s");
        m.event("s", &Ev::Read(1));
        answers_from_memo(&m, "s", &ev);
        m.write(&m.ws.join("d1/AGENTS.md"), "D1 v1\n");
        assert!(m.event("s", &ev).contains("D1 v1"));
        // Quiet again: the memo is written anew from the old one.
        assert_eq!(m.event("s", &ev), "{}");
        answers_from_memo(&m, "s", &ev);
        m.write(&m.ws.join("d1/CLAUDE.md"), "D1 CLAUDE\n");
        let answer = m.event("s", &ev);
        assert!(answer.contains("D1 CLAUDE"), "{answer}");
    });
}

/// Files changed within the margin never vouch: no memo. The margin here
/// is a day, longer than any run of the test, so a slow machine cannot
/// age the files past it (the real margin's value is `only_old_changes_vouch`'s).
#[test]
fn fresh_files_write_no_memo() {
    let m = machine();
    let day = Some(Duration::from_secs(24 * 3600));
    with_memo(day, false, || {
        m.start("s");
        for _ in 0..3 {
            assert_eq!(m.event("s", &Ev::Prompt), "{}");
        }
    });
    assert!(!m.session_dir("s").join(MEMO_FILE_NAME).exists());
    assert_eq!(m.memo_answers(), 0);
}

/// A damaged memo is removed and the event takes the full path, which
/// writes it anew. (That the hook's log says so is checked process by
/// process, in the CLI's heal tests: in one test process the reports are
/// shared by every test's thread.)
#[rstest]
#[case::garbage(b"not a memo\n".as_slice())]
#[case::torn(b"dsh-quiet-memo 1\nlog 1 2".as_slice())]
#[case::empty(b"".as_slice())]
fn a_damaged_memo_is_replaced(#[case] damage: &[u8]) {
    let m = machine();
    with_memo(Some(Duration::ZERO), false, || {
        m.start("s");
        let memo = m.session_dir("s").join(MEMO_FILE_NAME);
        std::fs::write(&memo, damage).expect("damage");
        std::fs::write(m.ws.join("d1/AGENTS.md"), "D1 v1\n").expect("write");
        let answer = m.event("s", &Ev::Prompt);
        assert!(answer.contains("D1 v1") || answer == "{}", "{answer}");
        let now = std::fs::read(&memo).unwrap_or_default();
        assert_ne!(now, damage, "removed or rewritten");
        if !now.is_empty() {
            assert!(Memo::decode(&now).is_some());
        }
    });
}

/// Touches a busy session kept for later make the next event's
/// composition: the memo does not answer for it.
#[test]
fn deferred_touches_take_the_full_path() {
    let m = machine();
    with_memo(Some(Duration::ZERO), false, || {
        m.start("s");
        answers_from_memo(&m, "s", &Ev::Prompt);
        let touch = dsh_instructions_runtime::tool_args::TouchedPath {
            path: m.ws.join("d2/file.txt").to_string(),
            kind: dsh_instructions_runtime::TouchKind::Read,
        };
        crate::deferred::push(&m.session_dir("s"), &[touch]).expect("defer");
        m.write(&m.ws.join("d2/AGENTS.md"), "D2 v1\n");
        let before = m.memo_answers();
        let answer = m.event("s", &Ev::Prompt);
        assert!(answer.contains("D2 v1"), "{answer}");
        assert_eq!(m.memo_answers(), before);
    });
}

/// Decision 0085: once a quiet event wrote the memo's claim, a read of a
/// file no event named before answers from it when the directories it
/// reaches are known (here `d0`, which holds an `AGENTS.md`, and the
/// root), an edit and a listing likewise; a read reaching a directory
/// nobody knows takes the full path, and so does every touch once a rules
/// directory holds a file (a path-scoped rule may attach on the path).
#[test]
fn a_claim_answers_new_paths_in_known_directories() {
    let m = machine();
    let zero = Some(Duration::ZERO);
    with_memo(zero, false, || {
        assert!(m.start("s").contains("ROOT v1"));
        assert!(m.event("s", &Ev::Read(0)).contains("D0 v1"), "d0 known now");
        answers_from_memo(&m, "s", &Ev::Prompt);
        for (i, ev) in [
            Ev::ReadNew(0, 0, false),
            Ev::ReadNew(0, 1, false),
            Ev::ReadNew(DIRS, 2, false),
            Ev::Edit(0),
            Ev::List(0),
        ]
        .iter()
        .enumerate()
        {
            let before = m.memo_answers();
            assert_eq!(m.event("s", ev), "{}", "{ev:?}");
            assert_eq!(
                m.memo_answers(),
                before + 1,
                "{i}: {ev:?}\n{}",
                m.hook_log()
            );
        }
        // `d1` holds no instruction file: not known, so the full path.
        let before = m.memo_answers();
        assert_eq!(m.event("s", &Ev::ReadNew(1, 0, false)), "{}");
        assert_eq!(m.memo_answers(), before, "{}", m.hook_log());
        // A rules directory with a file: no claim is written any more.
        m.write(&m.ws.join(".claude/rules/r.md"), "RULE\n");
        assert!(m.event("s", &Ev::Prompt).contains("RULE"));
        answers_from_memo(&m, "s", &Ev::Prompt);
        let before = m.memo_answers();
        assert_eq!(m.event("s", &Ev::ReadNew(0, 3, false)), "{}");
        assert_eq!(m.memo_answers(), before, "{}", m.hook_log());
    });
}

/// Decision 0085: a path-scoped rule not yet attached attaches on the
/// first touch of a path it matches, even in a known directory: a memo
/// written while a rules directory holds a file has no claim, so that
/// touch takes the full path and gives the rule.
#[test]
fn an_unattached_path_scoped_rule_is_never_answered_from_a_claim() {
    let m = machine();
    let zero = Some(Duration::ZERO);
    with_memo(zero, false, || {
        m.write(
            &m.ws.join(".claude/rules/scoped.md"),
            "---\npaths: \"d0/*.rs\"\n---\nSCOPED-RS\n",
        );
        assert!(m.start("s").contains("ROOT v1"));
        let d0 = m.event("s", &Ev::Read(0));
        assert!(d0.contains("D0 v1") && !d0.contains("SCOPED-RS"), "{d0}");
        answers_from_memo(&m, "s", &Ev::Prompt);
        let rs = m.event("s", &Ev::ReadNew(0, 0, false));
        assert!(rs.contains("SCOPED-RS"), "{rs}\n{}", m.hook_log());
    });
}

/// What may change between events.
#[derive(Clone, Debug)]
enum Op {
    Edit(usize, u8),
    Remove(usize),
    Rule(u8, u8),
    /// A path-scoped rule for the `.rs` files of one directory (the files
    /// `Ev::ReadNew` reads; not `file.txt`, which `Ev::Read` reads).
    ScopedRule(usize, u8),
    NoRules,
    AboveRoot(u8),
    Claude(usize),
    Link(usize, bool),
}

fn change() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0..=DIRS, 0u8..3).prop_map(|(d, v)| Op::Edit(d, v)),
        1 => (0..=DIRS).prop_map(Op::Remove),
        1 => (0u8..2, 0u8..2).prop_map(|(n, v)| Op::Rule(n, v)),
        1 => (0..DIRS, 0u8..2).prop_map(|(d, v)| Op::ScopedRule(d, v)),
        1 => Just(Op::NoRules),
        1 => (0u8..2).prop_map(Op::AboveRoot),
        2 => (0..DIRS).prop_map(Op::Claude),
        1 => (0..DIRS, proptest::bool::ANY).prop_map(|(d, up)| Op::Link(d, up)),
    ]
}

fn event() -> impl proptest::strategy::Strategy<Value = Ev> {
    use proptest::prelude::*;
    prop_oneof![
        3 => Just(Ev::Prompt),
        2 => (0..DIRS).prop_map(Ev::Read),
        1 => (0..DIRS).prop_map(Ev::Shell),
        3 => (0..=DIRS, 0u8..4, proptest::bool::weighted(0.2)).prop_map(|(d, n, deeper)| Ev::ReadNew(d, n, deeper)),
        1 => (0..=DIRS).prop_map(Ev::Edit),
        1 => (0..=DIRS).prop_map(Ev::List),
    ]
}

/// A round: maybe a change, then one event one to three times (the first
/// after a change takes the full path, the next may answer from the memo).
fn round() -> impl proptest::strategy::Strategy<Value = (Option<Op>, Ev, usize)> {
    (
        proptest::option::weighted(0.8, change()),
        event(),
        1..=3usize,
    )
}

impl Machine {
    /// Directory `d` of the tree; `DIRS` is the root.
    fn dir(&self, d: usize) -> Utf8PathBuf {
        if d == DIRS {
            self.ws.clone()
        } else {
            self.ws.join(format!("d{d}"))
        }
    }

    /// Whether a link of the tree leads nowhere.
    fn dangling(&self) -> bool {
        (0..DIRS).any(|d| {
            let link = self.dir(d).join("CLAUDE.local.md");
            std::fs::symlink_metadata(&link).is_ok() && std::fs::metadata(&link).is_err()
        })
    }

    fn apply(&self, op: &Op) {
        match op {
            // Same length each version: only the stamps tell them apart.
            Op::Edit(d, v) => self.write(&self.dir(*d).join("AGENTS.md"), &format!("AG{d} v{v}\n")),
            Op::Remove(d) => {
                let file = self.dir(*d).join("AGENTS.md");
                changed(self, &file, false, || {
                    let _ = std::fs::remove_file(&file);
                });
            }
            Op::Rule(n, v) => self.write(
                &self.ws.join(format!(".claude/rules/r{n}.md")),
                &format!("RULE{n} v{v}\n"),
            ),
            Op::ScopedRule(d, v) => self.write(
                &self.ws.join(".claude/rules/scoped.md"),
                &format!("---\npaths: \"d{d}/*.rs\"\n---\nSCOPED{d} v{v}\n"),
            ),
            Op::NoRules => {
                let rules = self.ws.join(".claude");
                changed(self, &rules, false, || {
                    let _ = std::fs::remove_dir_all(&rules);
                });
            }
            Op::AboveRoot(v) => self.write(&self.root.join("CLAUDE.md"), &format!("ABOVE v{v}\n")),
            Op::Claude(d) => self.write(&self.dir(*d).join("CLAUDE.md"), &format!("CL{d}\n")),
            // A link to the root's file or to its own directory's (which
            // may be missing: a dangling link).
            Op::Link(d, up) => {
                let link = self.dir(*d).join("CLAUDE.local.md");
                changed(self, &link, true, || {
                    let _ = std::fs::remove_file(&link);
                    let target = if *up { "../AGENTS.md" } else { "AGENTS.md" };
                    std::os::unix::fs::symlink(target, &link).expect("symlink");
                });
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 40,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Decision 0076's claim: over any sequence of edits and events, the
    /// session answering from the memo gives exactly what its twin on the
    /// full path gives, event by event.
    #[test]
    fn the_memo_answers_as_the_full_path_does(rounds in proptest::collection::vec(round(), 1..12)) {
        let m = machine();
        let zero = Some(Duration::ZERO);
        let (a, b) = (
            with_memo(zero, false, || m.start("memo")),
            with_memo(zero, true, || m.start("full")),
        );
        proptest::prop_assert_eq!(a, b);
        for (i, (op, ev, times)) in rounds.iter().enumerate() {
            if let Some(op) = op {
                m.apply(op);
            }
            for _ in 0..*times {
                let memo = with_memo(zero, false, || m.event("memo", ev));
                let full = with_memo(zero, true, || m.event("full", ev));
                proptest::prop_assert_eq!(memo, full, "round {} {:?} {:?}", i, op, ev);
            }
        }
        // Not a vacuous claim: quiet twice over, the memo answers, unless
        // a dangling link leaves it nothing to vouch with, or a directory
        // above the machine changed meanwhile (another test's or process's
        // doing, which the memo rightly sees: decision 0082).
        let still = above(&m);
        for _ in 0..2 {
            let memo = with_memo(zero, false, || m.event("memo", &Ev::Prompt));
            let full = with_memo(zero, true, || m.event("full", &Ev::Prompt));
            proptest::prop_assert_eq!(memo, full);
        }
        let before = m.memo_answers();
        let again = with_memo(zero, false, || m.event("memo", &Ev::Prompt));
        proptest::prop_assert_eq!(again, "{}");
        if !m.dangling() && above(&m) == still {
            proptest::prop_assert_eq!(m.memo_answers(), before + 1, "{}", m.hook_log());
        }
    }
}
