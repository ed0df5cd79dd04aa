//! The mock model's script, independent of any wire protocol.
//!
//! A scenario tags each prompt `[p:<id>]` and lists what the "model" does in
//! that turn, in order, one tool round per directive:
//!
//! - `[mock:read=a/x.txt,b/y.txt]` read these workspace-relative files (one
//!   parallel call per path where the agent can, one `cat` for Codex);
//! - `[mock:write=d/new.txt]` create this file with [`WRITE_CONTENT`];
//! - `[mock:edit=d/f.txt]` replace [`EDIT_BEFORE`] by [`EDIT_AFTER`] in it;
//! - `[mock:shell=CMD]` run this shell command line in the agent's shell tool
//!   (Claude Code `Bash`, Codex `exec_command`, Gemini CLI
//!   `run_shell_command`), from the agent's cwd.
//!
//! After the last round the answer is the text `MOCK-FINAL <id>`.
//! `[mock:usage=N]` reports N input tokens in the first answer to that prompt
//! (once, so compaction is triggered once and never loops). A request whose
//! last text asks for a summary gets [`SUMMARY_TEXT`]; a request without a
//! tagged prompt (titles, classifiers) gets `MOCK-PLAIN`.

use std::collections::HashSet;
use std::sync::Mutex;

/// Content of a file the model writes.
pub(crate) const WRITE_CONTENT: &str = "E2E-WRITTEN by the mock model\n";
/// The text an edit replaces; scenario files meant to be edited contain it.
pub(crate) const EDIT_BEFORE: &str = "E2E-EDIT-BEFORE";
/// What an edit puts in its place.
pub(crate) const EDIT_AFTER: &str = "E2E-EDIT-AFTER";
/// The answer to a summary request: Claude Code wants `<summary>`, Gemini CLI
/// `<state_snapshot>`; Codex takes any text.
pub(crate) const SUMMARY_TEXT: &str = "<analysis>mock analysis</analysis>\n<summary>MOCK-SUMMARY: the \
user ran scripted turns.</summary>\n<state_snapshot>MOCK-SUMMARY</state_snapshot>";
/// Input tokens reported when a prompt does not ask for more.
pub(crate) const DEFAULT_USAGE: u64 = 1200;

/// One conversation element, protocol-neutral, in conversation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    /// A text part of any role.
    Text(String),
    /// A tool call made by the model.
    ToolCall,
    /// The result of a tool call.
    ToolResult,
}

/// One tool round of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// Read these workspace-relative files.
    Read(Vec<String>),
    /// Create this workspace-relative file.
    Write(String),
    /// Edit this workspace-relative file.
    Edit(String),
    /// Run this command line in the agent's shell tool.
    Shell(String),
}

/// What the mock answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// A summary for a compaction request.
    Summary,
    /// `MOCK-PLAIN`: not part of a scripted turn.
    Plain,
    /// The turn's final text.
    Final { tag: String },
    /// The next tool round.
    Tool { tag: String, op: Op },
}

impl Action {
    /// Short name recorded in the request log.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Action::Summary => "summary",
            Action::Plain => "plain",
            Action::Final { .. } => "final",
            Action::Tool { .. } => "tool",
        }
    }

    /// The final text for this action (tool calls have none).
    pub(crate) fn text(&self) -> String {
        match self {
            Action::Summary => SUMMARY_TEXT.to_owned(),
            Action::Plain | Action::Tool { .. } => "MOCK-PLAIN".to_owned(),
            Action::Final { tag } => format!("MOCK-FINAL {tag}: done."),
        }
    }
}

/// A decision: the action and the input tokens to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    /// What to answer.
    pub action: Action,
    /// Input tokens for the usage block.
    pub usage: u64,
}

/// The last `[p:<id>]` tag in a text.
pub(crate) fn prompt_tag(text: &str) -> Option<&str> {
    let mut found = None;
    let mut rest = text;
    while let Some(i) = rest.find("[p:") {
        let after = &rest[i + 3..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(after.len());
        if end > 0 && after[end..].starts_with(']') {
            found = Some(&after[..end]);
        }
        rest = after;
    }
    found
}

/// `[mock:<key>=<value>]` and `[mock:<key>]` directives, in order.
fn directives(text: &str) -> Vec<(&str, Option<&str>)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("[mock:") {
        let after = &rest[i + 6..];
        let Some(end) = after.find(']') else { break };
        let body = &after[..end];
        out.push(match body.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (body, None),
        });
        rest = &after[end + 1..];
    }
    out
}

/// The tool rounds a prompt asks for, in order.
pub(crate) fn ops(prompt: &str) -> Vec<Op> {
    directives(prompt)
        .into_iter()
        .filter_map(|(k, v)| {
            let v = v?.trim();
            match k {
                "read" => Some(Op::Read(
                    v.split(',')
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned)
                        .collect(),
                )),
                "write" => Some(Op::Write(v.to_owned())),
                "edit" => Some(Op::Edit(v.to_owned())),
                "shell" => Some(Op::Shell(v.to_owned())),
                _ => None,
            }
        })
        .collect()
}

fn usage_of(prompt: &str) -> Option<u64> {
    directives(prompt)
        .into_iter()
        .find(|(k, _)| *k == "usage")
        .and_then(|(_, v)| v?.parse().ok())
}

/// Whether a text is an agent's compaction/summary instruction.
pub(crate) fn asks_for_summary(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    [
        "summary of the conversation",
        "context checkpoint compaction",
        "state_snapshot",
        "summarize the conversation",
        "summarize this conversation",
        "summarization the conversation",
        // Qwen Code's `/compress` and auto-compression prompt.
        "summarizes a conversation when its context window",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// Whether a text is a summary request that carries the conversation
/// serialized, prompt tags included: pi's (`<conversation>…</conversation>`
/// then its instructions) and opencode's (`Here is the conversation so
/// far:` then `<conversation>`; agents/pi.md, agents/opencode.md).
fn serialized_for_summary(text: &str) -> bool {
    (text.starts_with("<conversation>\n") && text.contains("\n</conversation>\n\n"))
        || text
            .strip_prefix("Here is the conversation so far:")
            .is_some_and(|rest| rest.trim_start().starts_with("<conversation>"))
}

/// Tool rounds after position `from`: a call that follows a result (or
/// nothing) starts a new round; parallel calls of one answer are one round.
fn rounds_after(items: &[Item], from: usize) -> usize {
    let mut rounds = 0;
    let mut in_calls = false;
    for item in &items[from..] {
        match item {
            Item::ToolCall if !in_calls => {
                rounds += 1;
                in_calls = true;
            }
            Item::ToolResult => in_calls = false,
            _ => {}
        }
    }
    rounds
}

/// Decides the answer to one request. `usage_done` remembers the tags whose
/// big usage was already reported.
pub(crate) fn decide(
    items: &[Item],
    has_tools: bool,
    usage_done: &Mutex<HashSet<String>>,
) -> Decision {
    let plain = |action| Decision {
        action,
        usage: DEFAULT_USAGE,
    };
    let last_text = items.iter().rev().find_map(|i| match i {
        Item::Text(t) => Some(t.as_str()),
        _ => None,
    });
    if let Some(t) = last_text
        && ((asks_for_summary(t) && prompt_tag(t).is_none()) || serialized_for_summary(t))
    {
        return plain(Action::Summary);
    }
    let Some((pos, prompt)) = items.iter().enumerate().rev().find_map(|(i, it)| match it {
        Item::Text(t) if prompt_tag(t).is_some() => Some((i, t.as_str())),
        _ => None,
    }) else {
        return plain(Action::Plain);
    };
    let tag = prompt_tag(prompt).unwrap_or_default().to_owned();
    let mut usage = DEFAULT_USAGE;
    if let Some(n) = usage_of(prompt) {
        let mut done = usage_done.lock().unwrap_or_else(|p| p.into_inner());
        if done.insert(tag.clone()) {
            usage = n;
        }
    }
    let planned = ops(prompt);
    let round = rounds_after(items, pos + 1);
    let action = match planned.into_iter().nth(round) {
        Some(op) if has_tools => Action::Tool { tag, op },
        _ => Action::Final { tag },
    };
    Decision { action, usage }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn t(s: &str) -> Item {
        Item::Text(s.to_owned())
    }

    #[rstest]
    #[case("do it [p:t1]", Some("t1"))]
    #[case("[p:a] then [p:b-2]", Some("b-2"))]
    #[case("no tag", None)]
    #[case("[p:] [p:x y]", None)]
    fn tags(#[case] text: &str, #[case] want: Option<&str>) {
        assert_eq!(prompt_tag(text), want);
    }

    #[rstest]
    #[case(
        "<conversation>\n[User]: hi [p:t1]\n</conversation>\n\n<instructions>",
        true
    )]
    #[case(
        "Here is the conversation so far:\n\n<conversation>\n[User]: x [p:t1]\n</conversation>",
        true
    )]
    #[case("Quote <conversation>\n</conversation>\n\n in a prompt [p:t2]", false)]
    #[case("Here is the conversation so far: nothing [p:t2]", false)]
    fn serialized_conversations_are_summary_requests(#[case] text: &str, #[case] want: bool) {
        let d = decide(&[t(text)], false, &Mutex::new(HashSet::new()));
        assert_eq!(d.action == Action::Summary, want, "{d:?}");
    }

    #[test]
    fn shell_directives_keep_the_command_line_whole() {
        assert_eq!(
            ops("x [mock:shell=cd s3 && sed -n '1,2p' f.txt]"),
            vec![Op::Shell("cd s3 && sed -n '1,2p' f.txt".into())]
        );
    }

    #[test]
    fn ops_keep_prompt_order() {
        let p =
            "x [mock:read=a/f.txt, b/g.txt] [mock:text] [mock:edit=a/f.txt] [mock:write=n/new.txt]";
        assert_eq!(
            ops(p),
            vec![
                Op::Read(vec!["a/f.txt".into(), "b/g.txt".into()]),
                Op::Edit("a/f.txt".into()),
                Op::Write("n/new.txt".into()),
            ]
        );
    }

    #[test]
    fn rounds_advance_after_results_and_parallel_calls_are_one_round() {
        let done = Mutex::new(HashSet::new());
        let p = t("go [p:t1] [mock:read=a,b] [mock:edit=a]");
        let first = decide(std::slice::from_ref(&p), true, &done);
        assert_eq!(
            first.action,
            Action::Tool {
                tag: "t1".into(),
                op: Op::Read(vec!["a".into(), "b".into()])
            }
        );
        // Two parallel calls, a hook context between them and their results.
        let after_read = [
            p.clone(),
            Item::ToolCall,
            Item::ToolCall,
            t("hook context"),
            Item::ToolResult,
            Item::ToolResult,
        ];
        assert_eq!(
            decide(&after_read, true, &done).action,
            Action::Tool {
                tag: "t1".into(),
                op: Op::Edit("a".into())
            }
        );
        let mut after_edit = after_read.to_vec();
        after_edit.extend([Item::ToolCall, Item::ToolResult]);
        assert_eq!(
            decide(&after_edit, true, &done).action,
            Action::Final { tag: "t1".into() }
        );
    }

    #[test]
    fn an_earlier_prompt_does_not_count_and_no_tools_means_final() {
        let done = Mutex::new(HashSet::new());
        let items = [
            t("old [p:t1] [mock:read=a]"),
            Item::ToolCall,
            Item::ToolResult,
            t("MOCK-FINAL t1"),
            t("new [p:t2] [mock:read=b]"),
        ];
        assert_eq!(
            decide(&items, true, &done).action,
            Action::Tool {
                tag: "t2".into(),
                op: Op::Read(vec!["b".into()])
            }
        );
        assert_eq!(
            decide(&items, false, &done).action,
            Action::Final { tag: "t2".into() }
        );
    }

    #[test]
    fn big_usage_is_reported_once_per_prompt() {
        let done = Mutex::new(HashSet::new());
        let items = [t("big [p:t3] [mock:usage=150000]")];
        assert_eq!(decide(&items, true, &done).usage, 150_000);
        assert_eq!(decide(&items, true, &done).usage, DEFAULT_USAGE);
    }

    #[rstest]
    #[case("You are performing a CONTEXT CHECKPOINT COMPACTION. …")]
    #[case("Your task is to create a detailed summary of the conversation so far")]
    #[case("generate the <state_snapshot>")]
    #[case(
        "You are the component that summarizes a conversation when its context window is about to overflow."
    )]
    fn summary_requests(#[case] text: &str) {
        let done = Mutex::new(HashSet::new());
        let items = [t("earlier [p:t1]"), t(text)];
        assert_eq!(decide(&items, true, &done).action, Action::Summary);
    }

    #[test]
    fn untagged_requests_are_plain() {
        let done = Mutex::new(HashSet::new());
        assert_eq!(
            decide(&[t("write a title")], false, &done).action,
            Action::Plain
        );
    }
}
