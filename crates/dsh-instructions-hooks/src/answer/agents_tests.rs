//! The adapter end to end for GitHub Copilot CLI and Qwen Code, on their
//! recorded stdin payloads (`tests/fixtures/`, the harness's placeholders
//! `/WORKSPACE` and `/HOME` replaced by a test machine's directories):
//! each agent's answer shape, what each delivers, resume, compaction, Qwen's
//! empty-prompt firings and Copilot's cut tool context.

use serde_json::Value;

use super::machine_tests::Machine;
use crate::agent::Agent;

fn machine() -> Machine {
    Machine::new(&[("QWEN.md", "ROOT-QWEN be exact.\n")])
}

impl Machine {
    fn copilot(&self, name: &str, event: &str) -> Value {
        self.answer(
            Agent::Copilot,
            Some(event),
            &self.payload(Agent::Copilot, name),
        )
    }

    /// Copilot's recorded `postToolUse` of a `view`, as an `edit` of the
    /// same file: `view` is no touch (decision 0073).
    fn copilot_edit(&self) -> Value {
        let mut payload = self.payload(Agent::Copilot, "postToolUse-view");
        payload["toolName"] = "edit".into();
        self.answer(Agent::Copilot, Some("postToolUse"), &payload)
    }

    fn qwen(&self, name: &str) -> Value {
        self.answer(Agent::Qwen, None, &self.payload(Agent::Qwen, name))
    }

    fn hook_log(&self, agent: Agent) -> String {
        std::fs::read_to_string(
            self.home
                .join(".dsh/hooks")
                .join(agent.as_str())
                .join("hook.log"),
        )
        .unwrap_or_default()
    }
}

/// Copilot CLI's context: the top-level key, and nothing else.
fn copilot_context(answer: &Value) -> Option<&str> {
    let object = answer.as_object().expect("object");
    if object.is_empty() {
        return None;
    }
    assert_eq!(object.len(), 1, "only additionalContext: {answer}");
    Some(answer["additionalContext"].as_str().expect("text"))
}

/// Qwen Code's context: `hookSpecificOutput.additionalContext`, and no
/// top-level one.
fn qwen_context(answer: &Value) -> Option<&str> {
    let object = answer.as_object().expect("object");
    if object.is_empty() {
        return None;
    }
    assert!(answer.get("additionalContext").is_none(), "{answer}");
    Some(
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("text"),
    )
}

/// Decision 0067: Copilot CLI loads `AGENTS.md` itself and cannot be told
/// not to, so the hook gives what it lacks — here the overlay — in our
/// frame (Copilot shows the text verbatim), under the top-level key.
#[test]
fn copilot_start_gives_what_copilot_lacks_at_the_top_level() {
    let m = machine();
    let a = m.copilot("sessionStart-new", "sessionStart");
    let text = copilot_context(&a).expect("context");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");
    assert!(
        !text.contains("ROOT-AGENTS"),
        "Copilot loads AGENTS.md: {text}"
    );
    assert!(
        text.starts_with(dsh_instructions_render::text::FRAME_OPEN),
        "{text}"
    );
    // The event named on the command line is the one logged.
    assert!(
        m.hook_log(Agent::Copilot)
            .contains(" sessionStart session 0ee10845")
    );
}

/// Decision 0073: Copilot CLI attaches nested files only after a `view`,
/// and only for the next request. An `edit` (like `create`, `grep`,
/// `bash`) of a nested file gives its directory's `AGENTS.md`, kept in the
/// history; a `view` gives nothing (Copilot's own message has it); the
/// root's `AGENTS.md`, in Copilot's system prompt, is never given.
#[test]
fn copilot_gets_nested_files_on_the_touches_it_lacks() {
    let m = machine();
    std::fs::write(m.project.join("sub/AGENTS.md"), "SUB-AGENTS nested.\n").expect("write");
    let start = m.copilot("sessionStart-new", "sessionStart");
    assert!(
        !copilot_context(&start)
            .expect("overlay")
            .contains("ROOT-AGENTS")
    );
    assert_eq!(
        copilot_context(&m.copilot("postToolUse-view", "postToolUse")),
        None
    );
    let edit = m.copilot_edit();
    let text = copilot_context(&edit).expect("the nested file");
    assert!(
        text.contains("Additional instructions from: sub/AGENTS.md"),
        "{text}"
    );
    assert!(text.contains("SUB-AGENTS nested."), "{text}");
    assert!(!text.contains("ROOT-AGENTS"), "{text}");
}

/// Decision 0073: Copilot's `copilot` rules are composed like its files —
/// its always-on ones (`.github/copilot-instructions.md`, `applyTo: "**"`)
/// are in its system prompt and never given; a path-scoped one, which
/// Copilot attaches only after a `view`, comes with an `edit` of a matching
/// file, with its globs line, once.
#[test]
fn copilot_gets_path_scoped_instructions_on_the_touches_it_lacks() {
    let m = machine();
    let dir = m.project.join(".github/instructions");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        m.project.join(".github/copilot-instructions.md"),
        "RULE-ALL always.\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("every.instructions.md"),
        "---\napplyTo: \"**\"\n---\nRULE-EVERY always.\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("sub.instructions.md"),
        "---\napplyTo: \"sub/**\"\n---\nRULE-SUB scoped.\n",
    )
    .expect("write");
    let start = m.copilot("sessionStart-new", "sessionStart");
    let text = copilot_context(&start).expect("overlay");
    assert!(
        !text.contains("RULE-"),
        "Copilot holds its always-on rules: {text}"
    );
    let edit = m.copilot_edit();
    let text = copilot_context(&edit).expect("the scoped rule");
    assert!(
        text.contains("Additional instructions from: .github/instructions/sub.instructions.md"),
        "{text}"
    );
    assert!(text.contains("files matching `sub/**`"), "{text}");
    assert_eq!(text.matches("RULE-SUB scoped.").count(), 1, "{text}");
    assert!(
        !text.contains("RULE-ALL") && !text.contains("RULE-EVERY"),
        "{text}"
    );
    assert_eq!(copilot_context(&m.copilot_edit()), None, "once");
}

/// Decision 0073: the chain's files Copilot holds are composed, so what
/// Copilot lacks about them — an edit while it runs — is said; a compaction
/// (which keeps Copilot's system prompt) brings back the overlay but not
/// the root file.
#[test]
fn copilot_gets_updates_of_the_files_it_loaded_itself() {
    let m = machine();
    assert!(copilot_context(&m.copilot("sessionStart-new", "sessionStart")).is_some());
    std::fs::write(m.project.join("AGENTS.md"), "ROOT-AGENTS-V2 be kinder.\n").expect("write");
    let prompt = m.copilot("userPromptSubmitted", "userPromptSubmitted");
    let text = copilot_context(&prompt).expect("the update");
    assert!(
        text.contains("Updated instructions from: AGENTS.md"),
        "{text}"
    );
    assert!(text.contains("ROOT-AGENTS-V2"), "{text}");
    assert_eq!(
        copilot_context(&m.copilot("preCompact-manual", "preCompact")),
        None
    );
    let after = m.copilot("userPromptSubmitted", "userPromptSubmitted");
    let text = copilot_context(&after).expect("the baseline again");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");
    assert!(
        !text.contains("ROOT-AGENTS"),
        "Copilot's system prompt has it: {text}"
    );
}

/// Qwen Code's loading is off (`context.fileName`), so the hook gives its
/// files — `QWEN.md` before `AGENTS.md`, and the overlay — without our
/// frame: Qwen wraps the context itself and escapes `<`/`>` (decision
/// 0019), under `hookSpecificOutput`.
#[test]
fn qwen_start_gives_qwen_md_and_agents_md_unframed() {
    let m = machine();
    let a = m.qwen("SessionStart-startup");
    let text = qwen_context(&a).expect("context");
    let (q, g, l) = (
        text.find("ROOT-QWEN").expect("QWEN.md"),
        text.find("ROOT-AGENTS").expect("AGENTS.md"),
        text.find("ROOT-LOCAL").expect("overlay"),
    );
    assert!(q < g && g < l, "{text}");
    assert!(!text.contains("<system-reminder>"), "{text}");
    assert_eq!(a["hookSpecificOutput"]["hookEventName"], "SessionStart");
}

/// Both agents replace the session-start context on a resume: the full
/// baseline is given again (Codex, which keeps it, gets nothing new).
#[test]
fn a_resume_gives_the_baseline_again() {
    let m = machine();
    assert!(copilot_context(&m.copilot("sessionStart-new", "sessionStart")).is_some());
    let again = m.copilot("sessionStart-resume", "sessionStart");
    let text = copilot_context(&again).expect("the baseline again");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");

    assert!(qwen_context(&m.qwen("SessionStart-startup")).is_some());
    let again = m.qwen("SessionStart-resume");
    let text = qwen_context(&again).expect("the baseline again");
    assert!(
        text.contains("ROOT-QWEN") && text.contains("ROOT-AGENTS"),
        "{text}"
    );

    let start = serde_json::json!({"session_id": "c1", "cwd": m.project,
        "hook_event_name": "SessionStart", "source": "startup"});
    let mut resume = start.clone();
    resume["source"] = "resume".into();
    assert_ne!(m.answer(Agent::Codex, None, &start), serde_json::json!({}));
    assert_eq!(m.answer(Agent::Codex, None, &resume), serde_json::json!({}));
}

/// Decision 0066, Copilot CLI: `preCompact` takes no context and no event
/// follows the compaction; it marks the session and the next event gives
/// the complete baseline.
#[test]
fn copilot_pre_compact_marks_and_the_next_prompt_gives_the_baseline() {
    let m = machine();
    assert!(copilot_context(&m.copilot("sessionStart-new", "sessionStart")).is_some());
    assert_eq!(
        copilot_context(&m.copilot("userPromptSubmitted", "userPromptSubmitted")),
        None,
        "nothing new"
    );
    assert_eq!(
        copilot_context(&m.copilot("preCompact-auto", "preCompact")),
        None
    );
    let next = m.copilot("userPromptSubmitted", "userPromptSubmitted");
    let text = copilot_context(&next).expect("the complete baseline");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");
    assert!(
        m.hook_log(Agent::Copilot)
            .contains("compaction ahead: marked")
    );
}

/// Decision 0066, Qwen Code: `PreCompact` marks (its context would go
/// into the compaction prompt), `SessionStart(compact)` answers nothing
/// (Qwen does not wait for it), and the next event — here the empty-prompt
/// `UserPromptSubmit` Qwen fires before a follow-up model call — gives the
/// complete baseline. Before the compaction those firings give only what
/// is new: nothing twice.
#[test]
fn qwen_compaction_gives_the_baseline_with_the_next_event() {
    let m = machine();
    assert!(qwen_context(&m.qwen("SessionStart-startup")).is_some());
    let mut follow_up = m.payload(Agent::Qwen, "UserPromptSubmit");
    follow_up["prompt"] = "".into();
    follow_up
        .as_object_mut()
        .expect("object")
        .remove("submitted_prompt");
    assert_eq!(qwen_context(&m.answer(Agent::Qwen, None, &follow_up)), None);
    assert_eq!(qwen_context(&m.qwen("PreCompact-auto")), None);
    assert_eq!(qwen_context(&m.qwen("SessionStart-compact")), None);
    let after = m.answer(Agent::Qwen, None, &follow_up);
    let text = qwen_context(&after).expect("the complete baseline");
    assert!(
        text.contains("ROOT-QWEN") && text.contains("ROOT-AGENTS"),
        "{text}"
    );
    assert_eq!(
        qwen_context(&m.answer(Agent::Qwen, None, &follow_up)),
        None,
        "once"
    );
}

/// Qwen Code's `read_file` touches its directory: the nested `QWEN.md`
/// arrives with the tool result (Qwen itself loads nothing nested).
#[test]
fn qwen_read_file_gives_the_nested_file() {
    let m = machine();
    std::fs::write(m.project.join("sub/QWEN.md"), "SUB-QWEN nested.\n").expect("write");
    assert!(qwen_context(&m.qwen("SessionStart-startup")).is_some());
    let a = m.qwen("PostToolUse-read_file");
    let text = qwen_context(&a).expect("nested");
    assert!(text.contains("SUB-QWEN nested."), "{text}");
    assert!(!text.contains("ROOT-QWEN"), "given once: {text}");
}

/// Decision 0072: a Qwen resume replaces only the session-start context;
/// the nested file a tool result delivered stays in the history, so when
/// it was removed while Qwen was not running the resume says so beside
/// the new baseline, and the root's new version is given once.
#[test]
fn a_qwen_resume_says_a_nested_file_left_while_away() {
    let m = machine();
    std::fs::write(m.project.join("sub/QWEN.md"), "SUB-QWEN nested.\n").expect("write");
    assert!(qwen_context(&m.qwen("SessionStart-startup")).is_some());
    assert!(qwen_context(&m.qwen("PostToolUse-read_file")).is_some());
    std::fs::remove_file(m.project.join("sub/QWEN.md")).expect("remove");
    std::fs::write(m.project.join("QWEN.md"), "ROOT-QWEN-V2 be exact.\n").expect("write");
    let again = m.qwen("SessionStart-resume");
    let text = qwen_context(&again).expect("the baseline and the removal");
    assert!(text.contains("Instructions removed: sub/QWEN.md"), "{text}");
    assert_eq!(text.matches("ROOT-QWEN-V2").count(), 1, "{text}");
    assert!(text.contains("ROOT-AGENTS"), "the whole baseline: {text}");
    assert!(!text.contains("SUB-QWEN"), "{text}");
}

/// Decision 0072: what Qwen's empty-prompt follow-up delivered is gone
/// after a resume, like the session start's context, so it comes again.
#[test]
fn a_qwen_resume_gives_again_what_a_follow_up_gave() {
    let m = machine();
    assert!(qwen_context(&m.qwen("SessionStart-startup")).is_some());
    std::fs::write(m.project.join("AGENTS.md"), "ROOT-AGENTS-V2 be kind.\n").expect("write");
    let mut follow_up = m.payload(Agent::Qwen, "UserPromptSubmit");
    follow_up["prompt"] = "".into();
    let update = m.answer(Agent::Qwen, None, &follow_up);
    let text = qwen_context(&update).expect("the update");
    assert!(text.contains("ROOT-AGENTS-V2"), "{text}");
    let again = m.qwen("SessionStart-resume");
    let text = qwen_context(&again).expect("the baseline");
    assert_eq!(text.matches("ROOT-AGENTS-V2").count(), 1, "{text}");
    assert!(!text.contains("Updated instructions"), "{text}");
}

/// Copilot CLI cuts `postToolUse` context at 10,240 characters, silently:
/// a larger message is given a part at a time, each whole, and the rest
/// with the next event (here the next prompt), in order and complete.
#[test]
fn copilot_tool_context_is_cut_into_parts_that_arrive_complete() {
    let m = machine();
    let lines: Vec<String> = (0..700)
        .map(|i| format!("SUB-LINE {i:04} of the nested overlay"))
        .collect();
    std::fs::write(
        m.project.join("sub/AGENTS.local.md"),
        lines.join("\n") + "\n",
    )
    .expect("write");
    assert!(copilot_context(&m.copilot("sessionStart-new", "sessionStart")).is_some());
    let first = m.copilot_edit();
    let first = copilot_context(&first).expect("a part").to_owned();
    assert!(first.chars().count() <= 10_240, "{}", first.chars().count());
    assert!(
        first.contains("SUB-LINE 0000"),
        "the first part comes first"
    );
    let rest = m.copilot("userPromptSubmitted", "userPromptSubmitted");
    let rest = copilot_context(&rest).expect("the rest").to_owned();
    let all = format!("{first}\n{rest}");
    let mut at = 0;
    for line in &lines {
        let found = all[at..]
            .find(line.as_str())
            .unwrap_or_else(|| panic!("{line} missing or out of order"));
        at += found + line.len();
    }
    assert!(
        m.hook_log(Agent::Copilot)
            .contains("given with the next event")
    );
}

/// Copilot CLI fires `sessionStart(new)` and the first prompt in either
/// order: the prompt that came first gives the baseline, the start after it
/// nothing again (the baseline is in the history once).
#[test]
fn copilot_start_after_its_first_prompt_gives_nothing_twice() {
    let m = machine();
    let first = m.copilot("userPromptSubmitted", "userPromptSubmitted");
    let text = copilot_context(&first).expect("the baseline");
    assert!(text.contains("ROOT-LOCAL be brief."), "{text}");
    assert_eq!(
        copilot_context(&m.copilot("sessionStart-new", "sessionStart")),
        None
    );
}

/// Decision 0065: a Copilot CLI event whose command line names no event
/// (a hand-written handler) is answered `{}` and logged, never guessed.
#[test]
fn a_copilot_event_without_its_name_is_answered_empty() {
    let m = machine();
    let payload = m.payload(Agent::Copilot, "sessionStart-new");
    assert_eq!(
        m.answer(Agent::Copilot, None, &payload),
        serde_json::json!({})
    );
    assert!(
        m.hook_log(Agent::Copilot)
            .contains("error: the event has no usable `hook_event_name`"),
        "{}",
        m.hook_log(Agent::Copilot)
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
    /// Copilot CLI's 10,240-character cut of tool context, for nested files
    /// of any size and line length: the tool answer never passes it, and
    /// with the next prompt's answer every line arrives, once, in order.
    #[test]
    fn copilot_tool_answers_fit_the_cut_and_complete_the_file(
        lines in 1usize..400,
        width in 8usize..160,
    ) {
        let m = machine();
        let text: Vec<String> = (0..lines)
            .map(|i| format!("L{i:04} {}", "x".repeat(width)))
            .collect();
        std::fs::write(m.project.join("sub/AGENTS.local.md"), text.join("\n") + "\n")
            .expect("write");
        m.copilot("sessionStart-new", "sessionStart");
        let tool = m.copilot_edit();
        let tool = copilot_context(&tool).unwrap_or_default().to_owned();
        proptest::prop_assert!(tool.chars().count() <= 10_240, "{}", tool.chars().count());
        let next = m.copilot("userPromptSubmitted", "userPromptSubmitted");
        let all = format!("{tool}\n{}", copilot_context(&next).unwrap_or_default());
        let mut at = 0;
        for line in &text {
            let found = all[at..].find(line.as_str());
            proptest::prop_assert!(found.is_some(), "{} missing or out of order", &line[..5]);
            at += found.unwrap_or_default() + line.len();
            proptest::prop_assert!(!all[at..].contains(line.as_str()), "{} twice", &line[..5]);
        }
    }
}

/// Decision 0072 through the whole adapter: Qwen Code's empty-prompt
/// firing is read as a follow-up, so what it delivers is marked in the
/// log (and hidden on resume); a prompt with text delivers unmarked.
#[test]
fn a_qwen_empty_prompt_delivers_as_a_follow_up() {
    let m = machine();
    assert!(qwen_context(&m.qwen("SessionStart-startup")).is_some());
    let log = m
        .home
        .join(".dsh/hooks/qwen/sessions/ebd60154-88bd-4664-9d8a-c1780aaad1e9/session.jsonl");
    let marked = || {
        std::fs::read_to_string(&log)
            .expect("log")
            .matches("\"followUp\":true")
            .count()
    };
    assert_eq!(marked(), 0);
    std::fs::write(m.project.join("AGENTS.md"), "ROOT-AGENTS-V2 be kind.\n").expect("write");
    let mut follow_up = m.payload(Agent::Qwen, "UserPromptSubmit");
    follow_up["prompt"] = "".into();
    assert!(qwen_context(&m.answer(Agent::Qwen, None, &follow_up)).is_some());
    assert_eq!(marked(), 1, "the follow-up's delivery is marked");
    std::fs::write(m.project.join("AGENTS.md"), "ROOT-AGENTS-V3 be kind.\n").expect("write");
    let mut prompt = follow_up.clone();
    prompt["prompt"] = "go on".into();
    assert!(qwen_context(&m.answer(Agent::Qwen, None, &prompt)).is_some());
    assert_eq!(marked(), 1, "a prompt's delivery is not");
}
