//! Checking an [`Expect`] against what a driver observed after a step.
//!
//! Failure reasons read `<field>: expected <x>, got <y>` with values rendered
//! as JSON, so newlines and quotes stay visible on one output line; the runner
//! prefixes `step N (action): `.

use serde::Serialize;

use crate::schema::{
    ChangeAction, ChangeExpect, DigestExpect, Expect, IdentityExpect, Intro, MessageMatcher,
    Outcome, SourceExpect, VisibleExpect,
};

/// One change of an observed message source (R-STATE-1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedChange {
    /// `set`, `replace` or `remove`.
    pub action: ChangeActionObs,
    /// Scope key (NUL-separated, R-STATE-2).
    pub scope: String,
    /// Display path.
    pub path: String,
    /// Previous display path of a path-changing replace.
    pub previous_path: Option<String>,
    /// Digest (absent on a remove).
    pub digest: Option<String>,
}

/// Observed change action (serializes as the wire spelling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeActionObs {
    /// `set`.
    Set,
    /// `replace`.
    Replace,
    /// `remove`.
    Remove,
}

impl ChangeActionObs {
    fn matches(self, expected: ChangeAction) -> bool {
        matches!(
            (self, expected),
            (Self::Set, ChangeAction::Set)
                | (Self::Replace, ChangeAction::Replace)
                | (Self::Remove, ChangeAction::Remove)
        )
    }
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
        }
    }
}

/// The typed source of an observed workspace message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ObservedSource {
    /// `baseline: true` present.
    pub baseline: bool,
    /// `baselineIdentity`, when present.
    pub identity: Option<String>,
    /// Changes in order.
    pub changes: Vec<ObservedChange>,
}

/// An observed workspace message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ObservedMessage {
    /// Text parts in order.
    pub parts: Vec<String>,
    /// Its typed source.
    pub source: ObservedSource,
}

/// Operation counts of the memory provider during one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCounters {
    /// Files opened for content.
    pub reads: u64,
    /// Resolve+stat calls, root-marker probes included.
    pub probes: u64,
}

/// What a driver observed after a (settled) step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observation {
    /// Pre-step outcome; `None` for other actions.
    pub outcome: Option<Outcome>,
    /// Labels of the decision's messages; `None` for other actions.
    pub batch: Option<Vec<String>>,
    /// The workspace message folded into this step's batch.
    pub entered: Option<ObservedMessage>,
    /// Pending workspace messages in the next-step inbox, in order.
    pub inbox: Vec<ObservedMessage>,
    /// Labels of every persisted user message.
    pub history: Vec<String>,
    /// Sources of the visible workspace messages, oldest first.
    pub visible: Vec<ObservedSource>,
    /// Memory provider counters for this step (`None` on disk).
    pub counters: Option<StepCounters>,
}

fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "<unrenderable>".to_owned())
}

fn mismatch<T: Serialize + ?Sized, U: Serialize + ?Sized>(field: &str, exp: &T, got: &U) -> String {
    format!("{field}: expected {}, got {}", json(exp), json(got))
}

/// Checks every key written in `expect`; returns one reason per mismatch.
pub fn check(expect: &Expect, obs: &Observation) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(exp) = expect.outcome {
        match obs.outcome {
            Some(got) if got == exp => {}
            Some(got) => out.push(format!(
                "outcome: expected {}, got {}",
                outcome_name(exp),
                outcome_name(got)
            )),
            None => out.push("outcome: only a pre_step has an outcome".to_owned()),
        }
    }
    if let Some(exp) = &expect.batch {
        match &obs.batch {
            Some(got) if got == exp => {}
            Some(got) => out.push(mismatch("batch", exp, got)),
            None => out.push("batch: only a pre_step has a batch".to_owned()),
        }
    }
    if let Some(exp) = &expect.entered {
        match (exp, &obs.entered) {
            (None, None) => {}
            (None, Some(got)) => out.push(format!(
                "entered: expected null, got a message {}",
                json(&got.parts.join("\n"))
            )),
            (Some(_), None) => out.push("entered: expected a message, got null".to_owned()),
            (Some(m), Some(got)) => check_message("entered", m, got, &mut out),
        }
    }
    if let Some(exp) = &expect.inbox {
        if exp.len() != obs.inbox.len() {
            let texts: Vec<String> = obs.inbox.iter().map(|m| m.parts.join("\n")).collect();
            out.push(format!(
                "inbox: expected {} message(s), got {} {}",
                exp.len(),
                obs.inbox.len(),
                json(&texts)
            ));
        } else {
            for (i, (m, got)) in exp.iter().zip(&obs.inbox).enumerate() {
                check_message(&format!("inbox[{i}]"), m, got, &mut out);
            }
        }
    }
    if let Some(exp) = &expect.history
        && *exp != obs.history
    {
        out.push(mismatch("history", exp, &obs.history));
    }
    if let Some(exp) = &expect.visible {
        for (path, v) in &exp.0 {
            check_visible(path, v, &obs.visible, &mut out);
        }
    }
    if let Some(exp) = expect.reads {
        match obs.counters {
            Some(c) if c.reads == exp => {}
            Some(c) => out.push(format!("reads: expected {exp}, got {}", c.reads)),
            None => out.push("reads: no op counters on this provider".to_owned()),
        }
    }
    if let Some(max) = expect.probes_max {
        match obs.counters {
            Some(c) if c.probes <= max => {}
            Some(c) => out.push(format!(
                "probes_max: expected at most {max}, got {}",
                c.probes
            )),
            None => out.push("probes_max: no op counters on this provider".to_owned()),
        }
    }
    out
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Ok => "ok",
        Outcome::Cancelled => "cancelled",
    }
}

/// Lines of `text` that are section headers (conformance format, "Message matcher").
///
/// ```
/// use dsh_instructions_conformance::matcher::section_lines;
/// let t = "<system-reminder>\nintro\n\nInstructions from: AGENTS.md\n\nx\n</system-reminder>";
/// assert_eq!(section_lines(t), vec!["Instructions from: AGENTS.md"]);
/// ```
pub fn section_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| SECTION_HEADERS.iter().any(|p| l.starts_with(p)))
        .collect()
}

/// R-REN-2 normal intro.
pub const INTRO_NORMAL: &str = "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";
/// R-REN-2 SUPERSEDE sentence (with its trailing space).
pub const SUPERSEDE: &str =
    "This complete workspace instruction baseline supersedes every earlier one. ";
/// R-REN-2 empty replacement baseline sentence pair.
pub const INTRO_EMPTY_REPLACEMENT: &str = "This complete workspace instruction baseline supersedes every earlier one. No workspace instructions are active now.";
/// R-REN-2 compact intro.
pub const INTRO_COMPACT: &str =
    "Workspace instructions were shortened to fit the configured byte budget.";
const NOTICE_PREFIX: &str = "Workspace instruction budget";

/// The body of a `<system-reminder>` frame, or the text itself when unframed.
fn body(part: &str) -> &str {
    part.strip_prefix("<system-reminder>\n")
        .and_then(|b| b.strip_suffix("\n</system-reminder>"))
        .unwrap_or(part)
}

/// Splits a part into its notice line (if its first block is one) and the
/// block after it.
fn notice_and_intro_block(part: &str) -> (Option<&str>, Option<&str>) {
    let mut blocks = body(part).split("\n\n").filter(|b| !b.is_empty());
    let first = blocks.next();
    let first_line = first.and_then(|b| b.lines().next()).unwrap_or_default();
    // A replacement notice-only frame puts SUPERSEDE before the notice on the
    // same line, so the notice is taken from its prefix to the end of line.
    let notice_at = if first_line.starts_with(NOTICE_PREFIX) {
        Some(0)
    } else if first_line.starts_with(SUPERSEDE)
        && first_line[SUPERSEDE.len()..].starts_with(NOTICE_PREFIX)
    {
        Some(SUPERSEDE.len())
    } else {
        None
    };
    match notice_at {
        Some(i) => (Some(&first_line[i..]), blocks.next()),
        None => (None, first),
    }
}

/// The budget notice line of a part, if any.
///
/// ```
/// use dsh_instructions_conformance::matcher::notice_of;
/// let t = "<system-reminder>\nWorkspace instruction budget 10 bytes: omitted AGENTS.md\n</system-reminder>";
/// assert_eq!(notice_of(t), Some("Workspace instruction budget 10 bytes: omitted AGENTS.md"));
/// ```
pub fn notice_of(part: &str) -> Option<&str> {
    notice_and_intro_block(part).0
}

/// Classifies the first block after any notice (R-REN-2).
///
/// ```
/// use dsh_instructions_conformance::matcher::{classify_intro, INTRO_COMPACT};
/// use dsh_instructions_conformance::schema::Intro;
/// let t = format!("<system-reminder>\n{INTRO_COMPACT}\n\nInstructions from: a\n\nx\n</system-reminder>");
/// assert_eq!(classify_intro(&t), Intro::Compact);
/// ```
pub fn classify_intro(part: &str) -> Intro {
    let Some(block) = notice_and_intro_block(part).1 else {
        return Intro::None;
    };
    if block == INTRO_NORMAL {
        Intro::Normal
    } else if block == INTRO_EMPTY_REPLACEMENT {
        Intro::EmptyReplacement
    } else if block == INTRO_COMPACT {
        Intro::Compact
    } else if let Some(rest) = block.strip_prefix(SUPERSEDE) {
        match rest {
            INTRO_NORMAL => Intro::Replacement,
            INTRO_COMPACT => Intro::ReplacementCompact,
            _ => Intro::Unrecognised,
        }
    } else if SECTION_HEADERS.iter().any(|h| block.starts_with(h)) {
        // FORMAT.md: `none` is "no intro block" — the first block is already
        // a section (a dynamic batch, or a baseline without intro).
        Intro::None
    } else {
        Intro::Unrecognised
    }
}

/// The section header prefixes of R-REN-1 and R-REN-3, typed from SPEC.
const SECTION_HEADERS: [&str; 4] = [
    "Instructions from: ",
    "Additional instructions from: ",
    "Updated instructions from: ",
    "Instructions removed: ",
];

/// Checks one message against its matcher, pushing reasons prefixed by `at`.
pub fn check_message(at: &str, m: &MessageMatcher, got: &ObservedMessage, out: &mut Vec<String>) {
    let joined = got.parts.join("\n");
    let first = got.parts.first().map(String::as_str).unwrap_or_default();
    if let Some(exp) = &m.text
        && *exp != joined
    {
        out.push(mismatch(&format!("{at}.text"), exp, &joined));
    }
    if let Some(exp) = &m.sections {
        let got_sections = section_lines(&joined);
        if *exp != got_sections {
            out.push(mismatch(&format!("{at}.sections"), exp, &got_sections));
        }
    }
    if let Some(subs) = &m.contains {
        for s in subs {
            if !joined.contains(s.as_str()) {
                out.push(format!(
                    "{at}.contains: {} not found in {}",
                    json(s),
                    json(&joined)
                ));
            }
        }
    }
    if let Some(subs) = &m.not_contains {
        for s in subs {
            if joined.contains(s.as_str()) {
                out.push(format!(
                    "{at}.not_contains: {} found in {}",
                    json(s),
                    json(&joined)
                ));
            }
        }
    }
    if let Some(exp) = m.intro {
        let got_intro = classify_intro(first);
        if got_intro != exp {
            out.push(format!(
                "{at}.intro: expected {}, got {}",
                exp.name(),
                got_intro.name()
            ));
        }
    }
    if let Some(exp) = &m.notice {
        let got_notice = notice_of(first);
        if exp.as_deref() != got_notice {
            out.push(mismatch(&format!("{at}.notice"), exp, &got_notice));
        }
    }
    if let Some(exp) = m.parts
        && exp != got.parts.len()
    {
        out.push(format!(
            "{at}.parts: expected {exp}, got {}",
            got.parts.len()
        ));
    }
    if let Some(max) = m.max_len {
        for (i, p) in got.parts.iter().enumerate() {
            if p.len() > max {
                out.push(format!(
                    "{at}.max_len: expected at most {max}, got {} (part {i})",
                    p.len()
                ));
            }
        }
    }
    if let Some(exp) = m.len {
        match got.parts.as_slice() {
            [only] if only.len() == exp => {}
            [only] => out.push(format!("{at}.len: expected {exp}, got {}", only.len())),
            parts => out.push(format!(
                "{at}.len: expected a single part of {exp} bytes, got {} parts",
                parts.len()
            )),
        }
    }
    if let Some(src) = &m.source {
        check_source(&format!("{at}.source"), src, &got.source, out);
    }
}

fn check_source(at: &str, exp: &SourceExpect, got: &ObservedSource, out: &mut Vec<String>) {
    if let Some(b) = exp.baseline
        && b != got.baseline
    {
        out.push(format!("{at}.baseline: expected {b}, got {}", got.baseline));
    }
    match (&exp.identity, &got.identity) {
        (None, _) | (Some(IdentityExpect::Any), Some(_)) => {}
        (Some(IdentityExpect::Any), None) => {
            out.push(format!("{at}.identity: expected any, got absent"));
        }
        (Some(IdentityExpect::Exact(e)), g) => {
            if Some(e) != g.as_ref() {
                out.push(mismatch(&format!("{at}.identity"), e, g));
            }
        }
    }
    if let Some(changes) = &exp.changes {
        if changes.len() != got.changes.len() {
            out.push(format!(
                "{at}.changes: expected {} entries, got {} {}",
                changes.len(),
                got.changes.len(),
                json(&got.changes)
            ));
            return;
        }
        for (i, (e, g)) in changes.iter().zip(&got.changes).enumerate() {
            check_change(&format!("{at}.changes[{i}]"), e, g, out);
        }
    }
}

fn check_change(at: &str, e: &ChangeExpect, g: &ObservedChange, out: &mut Vec<String>) {
    if let Some(a) = e.action
        && !g.action.matches(a)
    {
        out.push(format!(
            "{at}.action: expected {}, got {}",
            a.name(),
            g.action.name()
        ));
    }
    if let Some(p) = &e.path
        && *p != g.path
    {
        out.push(mismatch(&format!("{at}.path"), p, &g.path));
    }
    // `Some(None)` (written `null`) asserts the field is absent: a `set`
    // names no previous path, a `remove` carries no digest.
    if let Some(p) = &e.previous_path
        && p.as_ref() != g.previous_path.as_ref()
    {
        out.push(mismatch(
            &format!("{at}.previous_path"),
            p,
            &g.previous_path,
        ));
    }
    if let Some(d) = &e.digest {
        let hex = d.as_ref().map(DigestExpect::hex);
        if hex != g.digest {
            out.push(mismatch(&format!("{at}.digest"), &hex, &g.digest));
        }
    }
    if let Some(s) = &e.scope
        && *s != g.scope
    {
        out.push(mismatch(&format!("{at}.scope"), s, &g.scope));
    }
}

/// The latest visible change naming `path`: per scope the last change wins,
/// then the scope whose latest change names `path` (the most recent one if
/// several do).
pub fn visible_lookup<'a>(visible: &'a [ObservedSource], path: &str) -> Option<&'a ObservedChange> {
    let mut latest: Vec<(&str, usize, &ObservedChange)> = Vec::new();
    let all = visible.iter().flat_map(|s| s.changes.iter()).enumerate();
    for (seq, c) in all {
        match latest.iter_mut().find(|(scope, _, _)| *scope == c.scope) {
            Some(slot) => *slot = (c.scope.as_str(), seq, c),
            None => latest.push((c.scope.as_str(), seq, c)),
        }
    }
    latest
        .into_iter()
        .filter(|(_, _, c)| c.path == path)
        .max_by_key(|(_, seq, _)| *seq)
        .map(|(_, _, c)| c)
}

fn check_visible(
    path: &str,
    exp: &VisibleExpect,
    visible: &[ObservedSource],
    out: &mut Vec<String>,
) {
    let at = format!("visible[{}]", json(path));
    let got = visible_lookup(visible, path);
    let describe = |c: Option<&ObservedChange>| match c {
        None => "none".to_owned(),
        Some(c) if c.action == ChangeActionObs::Remove => "removed".to_owned(),
        Some(c) => format!(
            "{{action: {}, digest: {}}}",
            c.action.name(),
            c.digest.as_deref().unwrap_or("absent")
        ),
    };
    let ok = match (exp, got) {
        (VisibleExpect::None, None) => true,
        (VisibleExpect::Removed, Some(c)) => c.action == ChangeActionObs::Remove,
        (VisibleExpect::Loaded { action, digest }, Some(c)) => {
            c.action != ChangeActionObs::Remove
                && action.is_none_or(|a| c.action.matches(a))
                && digest.as_ref().is_none_or(|d| Some(d.hex()) == c.digest)
        }
        _ => false,
    };
    if !ok {
        let want = match exp {
            VisibleExpect::None => "none".to_owned(),
            VisibleExpect::Removed => "removed".to_owned(),
            VisibleExpect::Loaded { action, digest } => format!(
                "{{action: {}, digest: {}}}",
                action.map_or("set|replace", ChangeAction::name),
                digest
                    .as_ref()
                    .map_or_else(|| "any".to_owned(), |d| d.hex())
            ),
        };
        out.push(format!("{at}: expected {want}, got {}", describe(got)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha1_hex;
    use crate::schema::{ChangeExpect, DigestExpect, Expect, VisibleMap};
    use rstest::rstest;

    fn frame(body: &str) -> String {
        format!("<system-reminder>\n{body}\n</system-reminder>")
    }

    fn change(
        action: ChangeActionObs,
        scope: &str,
        path: &str,
        digest: Option<&str>,
    ) -> ObservedChange {
        ObservedChange {
            action,
            scope: scope.to_owned(),
            path: path.to_owned(),
            previous_path: None,
            digest: digest.map(str::to_owned),
        }
    }

    fn msg(parts: &[&str]) -> ObservedMessage {
        ObservedMessage {
            parts: parts.iter().map(|p| (*p).to_owned()).collect(),
            source: ObservedSource::default(),
        }
    }

    fn reasons(m: &MessageMatcher, got: &ObservedMessage) -> Vec<String> {
        let mut out = Vec::new();
        check_message("inbox[0]", m, got, &mut out);
        out
    }

    #[test]
    fn sha1_hex_matches_known_vectors() {
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1_hex("root rule".as_bytes()).len(),
            40,
            "always 40 lowercase hex digits"
        );
    }

    #[rstest]
    #[case::normal(frame(&format!("{INTRO_NORMAL}\n\nInstructions from: AGENTS.md\n\nx")), Intro::Normal)]
    #[case::replacement(frame(&format!("{SUPERSEDE}{INTRO_NORMAL}\n\nInstructions from: A\n\nx")), Intro::Replacement)]
    #[case::empty_replacement(frame(INTRO_EMPTY_REPLACEMENT), Intro::EmptyReplacement)]
    #[case::compact(frame(&format!("Workspace instruction budget 9 bytes: truncated A from 9 to 1 bytes\n\n{INTRO_COMPACT}\n\nInstructions from: A\n\nx")), Intro::Compact)]
    #[case::replacement_compact(frame(&format!("{SUPERSEDE}{INTRO_COMPACT}\n\nInstructions from: A\n\nx")), Intro::ReplacementCompact)]
    #[case::dynamic(
        frame("Additional instructions from: a/AGENTS.md\n\nThese…"),
        Intro::None
    )]
    #[case::notice_only(
        frame("Workspace instruction budget 5 bytes: omitted AGENTS.md"),
        Intro::None
    )]
    #[case::replacement_notice_only(frame(&format!("{SUPERSEDE}Workspace instruction budget 5 bytes: omitted AGENTS.md")), Intro::None)]
    #[case::empty(String::new(), Intro::None)]
    #[case::unknown_first_block(
        frame("Some other text\n\nInstructions from: A\n\nx"),
        Intro::Unrecognised
    )]
    #[case::supersede_then_unknown(frame(&format!("{SUPERSEDE}something else\n\nInstructions from: A\n\nx")), Intro::Unrecognised)]
    fn intro_classification(#[case] text: String, #[case] want: Intro) {
        assert_eq!(classify_intro(&text), want);
    }

    #[rstest]
    #[case::plain(
        frame("Workspace instruction budget 5 bytes: omitted A\n\nintro"),
        Some("Workspace instruction budget 5 bytes: omitted A")
    )]
    #[case::after_supersede(frame(&format!("{SUPERSEDE}Workspace instruction budget 5 bytes: omitted A")), Some("Workspace instruction budget 5 bytes: omitted A"))]
    #[case::none(frame(&format!("{INTRO_NORMAL}\n\nInstructions from: A\n\nWorkspace instruction budget in content")), None)]
    fn notice_extraction(#[case] text: String, #[case] want: Option<&str>) {
        assert_eq!(notice_of(&text), want);
    }

    #[test]
    fn multi_part_messages_are_joined_and_intro_uses_the_first_part() {
        let base = frame(&format!(
            "{INTRO_NORMAL}\n\nInstructions from: AGENTS.md\n\nroot"
        ));
        let dynamic = frame(
            "Instructions removed: old/AGENTS.md\n\nThe instructions previously loaded from this file no longer apply.",
        );
        let got = msg(&[&base, &dynamic]);
        let m = MessageMatcher {
            text: Some(format!("{base}\n{dynamic}")),
            sections: Some(vec![
                "Instructions from: AGENTS.md".into(),
                "Instructions removed: old/AGENTS.md".into(),
            ]),
            contains: Some(vec!["</system-reminder>\n<system-reminder>".into()]),
            intro: Some(Intro::Normal),
            notice: Some(None),
            parts: Some(2),
            max_len: Some(base.len().max(dynamic.len())),
            ..MessageMatcher::default()
        };
        assert_eq!(reasons(&m, &got), Vec::<String>::new());
        // `len` needs a single part.
        let m = MessageMatcher {
            len: Some(base.len()),
            ..MessageMatcher::default()
        };
        assert_eq!(
            reasons(&m, &got),
            vec![format!(
                "inbox[0].len: expected a single part of {} bytes, got 2 parts",
                base.len()
            )]
        );
    }

    #[test]
    fn each_message_key_reports_its_mismatch() {
        let text = frame(&format!(
            "{INTRO_NORMAL}\n\nInstructions from: AGENTS.md\n\nroot rule"
        ));
        let got = msg(&[&text]);
        let cases: Vec<(MessageMatcher, &str)> = vec![
            (
                MessageMatcher {
                    text: Some("x".into()),
                    ..Default::default()
                },
                "inbox[0].text: expected \"x\", got \"<system-reminder>\\n",
            ),
            (
                MessageMatcher {
                    sections: Some(vec!["Instructions from: CLAUDE.md".into()]),
                    ..Default::default()
                },
                "inbox[0].sections: expected [\"Instructions from: CLAUDE.md\"], got [\"Instructions from: AGENTS.md\"]",
            ),
            (
                MessageMatcher {
                    contains: Some(vec!["nope".into()]),
                    ..Default::default()
                },
                "inbox[0].contains: \"nope\" not found",
            ),
            (
                MessageMatcher {
                    not_contains: Some(vec!["root rule".into()]),
                    ..Default::default()
                },
                "inbox[0].not_contains: \"root rule\" found",
            ),
            (
                MessageMatcher {
                    intro: Some(Intro::Compact),
                    ..Default::default()
                },
                "inbox[0].intro: expected compact, got normal",
            ),
            (
                MessageMatcher {
                    notice: Some(Some("Workspace instruction budget 1 bytes".into())),
                    ..Default::default()
                },
                "inbox[0].notice: expected \"Workspace instruction budget 1 bytes\", got null",
            ),
            (
                MessageMatcher {
                    parts: Some(2),
                    ..Default::default()
                },
                "inbox[0].parts: expected 2, got 1",
            ),
            (
                MessageMatcher {
                    max_len: Some(10),
                    ..Default::default()
                },
                "inbox[0].max_len: expected at most 10, got",
            ),
            (
                MessageMatcher {
                    len: Some(1),
                    ..Default::default()
                },
                "inbox[0].len: expected 1, got",
            ),
        ];
        for (m, want) in cases {
            let r = reasons(&m, &got);
            assert_eq!(r.len(), 1, "{r:?}");
            assert!(
                r[0].starts_with(want),
                "{:?} does not start with {want:?}",
                r[0]
            );
        }
        // And the exact values pass.
        let m = MessageMatcher {
            len: Some(text.len()),
            max_len: Some(text.len()),
            text: Some(text.clone()),
            ..Default::default()
        };
        assert!(reasons(&m, &got).is_empty());
    }

    #[test]
    fn source_matching() {
        let mut got = msg(&["x"]);
        got.source = ObservedSource {
            baseline: true,
            identity: Some("{\"schema\":1}".into()),
            changes: vec![
                change(
                    ChangeActionObs::Set,
                    "project\0.\0base",
                    "AGENTS.md",
                    Some(&sha1_hex(b"root rule")),
                ),
                ObservedChange {
                    previous_path: Some("AGENTS.md".into()),
                    ..change(
                        ChangeActionObs::Replace,
                        "project\0.\0base",
                        "CLAUDE.md",
                        Some(&sha1_hex(b"c")),
                    )
                },
            ],
        };
        let good = MessageMatcher {
            source: Some(SourceExpect {
                baseline: Some(true),
                identity: Some(IdentityExpect::Any),
                changes: Some(vec![
                    ChangeExpect {
                        action: Some(ChangeAction::Set),
                        path: Some("AGENTS.md".into()),
                        previous_path: None,
                        digest: Some(Some(DigestExpect::Of("root rule".into()))),
                        scope: Some("project\0.\0base".into()),
                    },
                    ChangeExpect {
                        action: Some(ChangeAction::Replace),
                        path: None,
                        previous_path: Some(Some("AGENTS.md".into())),
                        digest: Some(Some(DigestExpect::Literal(sha1_hex(b"c")))),
                        scope: None,
                    },
                ]),
            }),
            ..Default::default()
        };
        assert!(
            reasons(&good, &got).is_empty(),
            "{:?}",
            reasons(&good, &got)
        );

        let bad = MessageMatcher {
            source: Some(SourceExpect {
                baseline: Some(false),
                identity: Some(IdentityExpect::Exact("other".into())),
                changes: Some(vec![
                    ChangeExpect {
                        action: Some(ChangeAction::Remove),
                        path: Some("B.md".into()),
                        previous_path: None,
                        digest: Some(Some(DigestExpect::Of("other".into()))),
                        scope: Some("user\0AGENTS.md".into()),
                    },
                    ChangeExpect {
                        action: None,
                        path: None,
                        previous_path: Some(Some("X.md".into())),
                        digest: None,
                        scope: None,
                    },
                ]),
            }),
            ..Default::default()
        };
        let r = reasons(&bad, &got);
        let fields: Vec<&str> = r
            .iter()
            .map(|s| s.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(
            fields,
            [
                "inbox[0].source.baseline",
                "inbox[0].source.identity",
                "inbox[0].source.changes[0].action",
                "inbox[0].source.changes[0].path",
                "inbox[0].source.changes[0].digest",
                "inbox[0].source.changes[0].scope",
                "inbox[0].source.changes[1].previous_path",
            ]
        );
        let count = MessageMatcher {
            source: Some(SourceExpect {
                baseline: None,
                identity: None,
                changes: Some(vec![]),
            }),
            ..Default::default()
        };
        assert!(
            reasons(&count, &got)[0]
                .starts_with("inbox[0].source.changes: expected 0 entries, got 2")
        );
    }

    /// `null` asserts absence: it passes on an absent field, fails on a
    /// present one; a value fails on an absent field or another value; a
    /// key left out passes whatever the field holds.
    #[rstest]
    #[case::prev_absent_expected_absent(Some(None), None, None, None, None)]
    #[case::prev_present_expected_absent(
        Some(None),
        None,
        Some("AGENTS.md"),
        None,
        Some(r#"c.previous_path: expected null, got "AGENTS.md""#)
    )]
    #[case::prev_absent_expected_value(
        Some(Some("AGENTS.md")),
        None,
        None,
        None,
        Some(r#"c.previous_path: expected "AGENTS.md", got null"#)
    )]
    #[case::prev_other_value(
        Some(Some("AGENTS.md")),
        None,
        Some("CLAUDE.md"),
        None,
        Some(r#"c.previous_path: expected "AGENTS.md", got "CLAUDE.md""#)
    )]
    #[case::prev_same_value(Some(Some("AGENTS.md")), None, Some("AGENTS.md"), None, None)]
    #[case::prev_unchecked(None, None, Some("AGENTS.md"), None, None)]
    #[case::digest_absent_expected_absent(None, Some(None), None, None, None)]
    #[case::digest_present_expected_absent(
        None,
        Some(None),
        None,
        Some("x"),
        Some(r#"c.digest: expected null, got "11f6ad8ec52a2984abaafd7c3b516503785c2072""#)
    )]
    #[case::digest_absent_expected_value(
        None,
        Some(Some("x")),
        None,
        None,
        Some(r#"c.digest: expected "11f6ad8ec52a2984abaafd7c3b516503785c2072", got null"#)
    )]
    #[case::digest_same_value(None, Some(Some("x")), None, Some("x"), None)]
    #[case::digest_unchecked(None, None, None, Some("x"), None)]
    fn null_asserts_absence_of_previous_path_and_digest(
        #[case] want_prev: Option<Option<&str>>,
        #[case] want_digest_of: Option<Option<&str>>,
        #[case] got_prev: Option<&str>,
        #[case] got_digest_of: Option<&str>,
        #[case] reason: Option<&str>,
    ) {
        // SHA-1 of "x", from the published test vectors of that input, so
        // the reasons above do not come from `sha1_hex` itself.
        assert_eq!(sha1_hex(b"x"), "11f6ad8ec52a2984abaafd7c3b516503785c2072");
        let e = ChangeExpect {
            action: None,
            path: None,
            previous_path: want_prev.map(|p| p.map(str::to_owned)),
            digest: want_digest_of.map(|d| d.map(|t| DigestExpect::Of(t.to_owned()))),
            scope: None,
        };
        let g = ObservedChange {
            previous_path: got_prev.map(str::to_owned),
            ..change(
                ChangeActionObs::Replace,
                "project\0.\0base",
                "CLAUDE.md",
                got_digest_of.map(|t| sha1_hex(t.as_bytes())).as_deref(),
            )
        };
        let mut out = Vec::new();
        check_change("c", &e, &g, &mut out);
        assert_eq!(
            out,
            reason.into_iter().map(str::to_owned).collect::<Vec<_>>()
        );
    }

    #[test]
    fn visible_lookup_takes_the_latest_change_per_scope() {
        let d1 = sha1_hex(b"one");
        let d2 = sha1_hex(b"two");
        let visible = vec![
            ObservedSource {
                baseline: true,
                identity: Some("i".into()),
                changes: vec![
                    change(
                        ChangeActionObs::Set,
                        "project\0.\0base",
                        "AGENTS.md",
                        Some(&d1),
                    ),
                    change(
                        ChangeActionObs::Set,
                        "project\0old\0base",
                        "old/AGENTS.md",
                        Some(&d1),
                    ),
                ],
            },
            ObservedSource {
                baseline: false,
                identity: None,
                changes: vec![
                    // The root slot moved to CLAUDE.md: AGENTS.md is no longer named by any scope's latest change.
                    ObservedChange {
                        previous_path: Some("AGENTS.md".into()),
                        ..change(
                            ChangeActionObs::Replace,
                            "project\0.\0base",
                            "CLAUDE.md",
                            Some(&d2),
                        )
                    },
                    change(
                        ChangeActionObs::Remove,
                        "project\0old\0base",
                        "old/AGENTS.md",
                        None,
                    ),
                ],
            },
        ];
        let exp = Expect {
            visible: Some(VisibleMap(vec![
                ("AGENTS.md".into(), VisibleExpect::None),
                (
                    "CLAUDE.md".into(),
                    VisibleExpect::Loaded {
                        action: Some(ChangeAction::Replace),
                        digest: Some(DigestExpect::Of("two".into())),
                    },
                ),
                ("old/AGENTS.md".into(), VisibleExpect::Removed),
            ])),
            ..Default::default()
        };
        let obs = Observation {
            visible: visible.clone(),
            ..Default::default()
        };
        assert_eq!(check(&exp, &obs), Vec::<String>::new());

        let wrong = Expect {
            visible: Some(VisibleMap(vec![
                (
                    "AGENTS.md".into(),
                    VisibleExpect::Loaded {
                        action: None,
                        digest: None,
                    },
                ),
                (
                    "CLAUDE.md".into(),
                    VisibleExpect::Loaded {
                        action: Some(ChangeAction::Set),
                        digest: None,
                    },
                ),
                ("old/AGENTS.md".into(), VisibleExpect::None),
            ])),
            ..Default::default()
        };
        assert_eq!(
            check(&wrong, &obs),
            vec![
                "visible[\"AGENTS.md\"]: expected {action: set|replace, digest: any}, got none"
                    .to_owned(),
                format!(
                    "visible[\"CLAUDE.md\"]: expected {{action: set, digest: any}}, got {{action: replace, digest: {d2}}}"
                ),
                "visible[\"old/AGENTS.md\"]: expected none, got removed".to_owned(),
            ]
        );
    }

    #[test]
    fn step_level_keys() {
        let obs = Observation {
            outcome: Some(Outcome::Ok),
            batch: Some(vec!["hi".into(), "workspace".into()]),
            entered: None,
            inbox: vec![msg(&["a"])],
            history: vec!["hi".into(), "workspace".into()],
            visible: vec![],
            counters: Some(StepCounters {
                reads: 2,
                probes: 13,
            }),
        };
        let good = Expect {
            outcome: Some(Outcome::Ok),
            batch: Some(vec!["hi".into(), "workspace".into()]),
            entered: Some(None),
            inbox: Some(vec![MessageMatcher::default()]),
            history: Some(vec!["hi".into(), "workspace".into()]),
            visible: None,
            reads: Some(2),
            probes_max: Some(13),
        };
        assert!(check(&good, &obs).is_empty());
        let bad = Expect {
            outcome: Some(Outcome::Cancelled),
            batch: Some(vec!["hi".into()]),
            entered: Some(Some(MessageMatcher::default())),
            inbox: Some(vec![]),
            history: Some(vec![]),
            visible: None,
            reads: Some(0),
            probes_max: Some(12),
        };
        assert_eq!(
            check(&bad, &obs),
            vec![
                "outcome: expected cancelled, got ok",
                "batch: expected [\"hi\"], got [\"hi\",\"workspace\"]",
                "entered: expected a message, got null",
                "inbox: expected 0 message(s), got 1 [\"a\"]",
                "history: expected [], got [\"hi\",\"workspace\"]",
                "reads: expected 0, got 2",
                "probes_max: expected at most 12, got 13",
            ]
        );
        // Keys not written are not checked; counters are absent on disk.
        let disk = Observation {
            counters: None,
            outcome: None,
            batch: None,
            ..obs
        };
        assert_eq!(check(&Expect::default(), &disk), Vec::<String>::new());
        let r = check(
            &Expect {
                reads: Some(0),
                batch: Some(vec![]),
                ..Default::default()
            },
            &disk,
        );
        assert_eq!(
            r,
            vec![
                "batch: only a pre_step has a batch",
                "reads: no op counters on this provider"
            ]
        );
    }

    mod props {
        use super::super::*;
        use crate::digest::sha1_hex;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn sha1_hex_is_40_lowercase_hex(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
                let h = sha1_hex(&bytes);
                prop_assert_eq!(h.len(), 40);
                prop_assert!(h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            }

            #[test]
            fn section_lines_finds_exactly_the_header_lines(
                lines in prop::collection::vec(
                    prop_oneof![
                        "[a-z ]{0,12}",
                        "[a-z]{1,8}".prop_map(|p| format!("Instructions from: {p}")),
                        "[a-z]{1,8}".prop_map(|p| format!("Additional instructions from: {p}")),
                        "[a-z]{1,8}".prop_map(|p| format!("Updated instructions from: {p}")),
                        "[a-z]{1,8}".prop_map(|p| format!("Instructions removed: {p}")),
                        "[a-z]{1,8}".prop_map(|p| format!(" Instructions from: {p}")),
                    ],
                    0..12,
                )
            ) {
                let text = lines.join("\n");
                let want: Vec<&str> = lines
                    .iter()
                    .map(String::as_str)
                    .filter(|l| l.contains(": ") && !l.starts_with(' '))
                    .collect();
                prop_assert_eq!(section_lines(&text), want);
            }
        }
    }
}
