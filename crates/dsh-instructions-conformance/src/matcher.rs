//! Checking an [`Expect`] against what a driver observed after a step.
//!
//! Failure reasons read `<field>: expected <x>, got <y>` with values rendered
//! as JSON, so newlines and quotes stay visible on one output line; the runner
//! prefixes `step N (action): `.
//!
//! The parts: what a driver observed (`observed`) and how a message's text
//! reads (`text`); this file holds the checks themselves.

mod observed;
#[cfg(test)]
mod tests;
mod text;

pub use observed::{
    ChangeActionObs, Observation, ObservedChange, ObservedMessage, ObservedSource, StepCounters,
};
pub use text::{
    INTRO_COMPACT, INTRO_EMPTY_REPLACEMENT, INTRO_NORMAL, SUPERSEDE, classify_intro, notice_of,
    section_lines,
};

use serde::Serialize;

use crate::schema::{
    ChangeAction, ChangeExpect, DigestExpect, Expect, IdentityExpect, MessageMatcher, Outcome,
    SourceExpect, VisibleExpect,
};

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
