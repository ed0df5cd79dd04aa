//! Assertions on what the model saw: the text of one recorded request.
//!
//! "What the model sees" is every string in the request body except the tool
//! declarations, joined by newlines: JSON escapes are undone (so the escaped
//! `<\/system-reminder>` of R-REN-5 is compared as the model reads it), and
//! whichever field an agent puts a hook context in (a user block, a
//! developer message, a tool result) is covered.

use serde_json::Value;

/// Body keys that hold no conversation: tool schemas mention paths and
/// words like "AGENTS.md" and would only add noise.
const SKIP_KEYS: [&str; 4] = ["tools", "metadata", "generationConfig", "toolConfig"];

/// The model-visible text of a request body.
pub(crate) fn visible_text(body: &Value) -> String {
    let mut out = String::new();
    collect(body, &mut out);
    out
}

fn collect(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                if !SKIP_KEYS.contains(&k.as_str()) {
                    collect(x, out);
                }
            }
        }
        _ => {}
    }
}

/// Non-overlapping occurrences of `needle`.
pub(crate) fn count(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    hay.matches(needle).count()
}

/// Up to `radius` bytes either side of each occurrence (at most three), on
/// one line, for failure messages.
pub(crate) fn excerpts(hay: &str, needle: &str, radius: usize) -> String {
    let mut out = Vec::new();
    for (i, _) in hay.match_indices(needle).take(3) {
        let mut start = i.saturating_sub(radius);
        while !hay.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (i + needle.len() + radius).min(hay.len());
        while !hay.is_char_boundary(end) {
            end += 1;
        }
        out.push(format!("«{}»", hay[start..end].replace('\n', "⏎")));
    }
    out.join(" ")
}

/// One expectation on a request's visible text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Exactly once (R-HOOK-5: every applicable file once per history).
    Once(String),
    /// Not at all.
    Absent(String),
    /// At least once.
    Present(String),
    /// Zero times or once (a file that may or may not be re-delivered, but
    /// never twice).
    AtMostOnce(String),
    /// At least one of these is present (two wordings that each tell the
    /// model the same thing).
    AnyOf(Vec<String>),
    /// Every line of this file text exactly once, in the file's order (a
    /// file delivered in parts arrived whole and in order, R-HOOK-7).
    Whole(String),
    /// A file whole, line by line (R-HOOK-7): every line exactly once, in
    /// this order. Passes on no text only for no lines.
    Lines(Vec<String>),
}

impl Expect {
    /// Checks one expectation; `Err` says what was seen instead.
    pub(crate) fn check(&self, text: &str) -> Result<(), String> {
        let (needle, ok, want) = match self {
            Expect::Lines(lines) => return check_lines(lines, text),
            Expect::Once(s) => (s, count(text, s) == 1, "exactly once".to_owned()),
            Expect::Absent(s) => (s, count(text, s) == 0, "absent".to_owned()),
            Expect::Present(s) => (s, count(text, s) > 0, "present".to_owned()),
            Expect::AtMostOnce(s) => (s, count(text, s) <= 1, "at most once".to_owned()),
            Expect::Whole(file) => {
                let mut last = 0;
                for (i, line) in file.lines().enumerate() {
                    let n = count(text, line);
                    let at = text.find(line).unwrap_or(0);
                    if n != 1 || at < last {
                        return Err(format!(
                            "file line {} `{line}`: seen {n} times{}",
                            i + 1,
                            if n == 1 { ", out of order" } else { "" }
                        ));
                    }
                    last = at;
                }
                return Ok(());
            }
            Expect::AnyOf(all) => {
                if all.iter().any(|s| count(text, s) > 0) {
                    return Ok(());
                }
                let names: Vec<String> = all.iter().map(|s| format!("`{s}`")).collect();
                return Err(format!("none of {} is present", names.join(", ")));
            }
        };
        if ok {
            return Ok(());
        }
        let seen = count(text, needle);
        let ex = excerpts(text, needle, 60);
        Err(if ex.is_empty() {
            format!("`{needle}`: want {want}, seen 0 times")
        } else {
            format!("`{needle}`: want {want}, seen {seen} times: {ex}")
        })
    }
}

/// [`Expect::Lines`]: the first line that is not there exactly once, or
/// the first that stands before its predecessor.
fn check_lines(lines: &[String], text: &str) -> Result<(), String> {
    let mut last: Option<(usize, &str)> = None;
    for line in lines {
        let n = count(text, line);
        if n != 1 {
            let ex = excerpts(text, line, 60);
            return Err(format!(
                "`{line}`: want exactly once (a whole file), seen {n} times{}",
                if ex.is_empty() {
                    String::new()
                } else {
                    format!(": {ex}")
                }
            ));
        }
        let at = text.find(line.as_str()).unwrap_or(0);
        if let Some((prev_at, prev)) = last
            && at < prev_at
        {
            return Err(format!(
                "`{line}` stands before `{prev}`: the file is out of order"
            ));
        }
        last = Some((at, line));
    }
    Ok(())
}

/// Every failed expectation, in order.
pub(crate) fn check_all(expects: &[Expect], text: &str) -> Vec<String> {
    expects.iter().filter_map(|e| e.check(text).err()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[test]
    fn visible_text_unescapes_and_skips_tool_schemas() {
        let body = json!({"tools": [{"description": "E2E-ROOT-V1 in a schema"}],
                          "messages": [{"content": [{"text": "a <\\/system-reminder> E2E-ROOT-V1"}]}],
                          "n": 3});
        let raw = body.to_string();
        assert!(raw.contains(r"<\\/system-reminder>"));
        let t = visible_text(&body);
        assert_eq!(count(&t, "E2E-ROOT-V1"), 1);
        assert_eq!(count(&t, r"<\/system-reminder>"), 1);
    }

    #[rstest]
    #[case(Expect::Once("M".into()), "x M y", true)]
    #[case(Expect::Once("M".into()), "M M", false)]
    #[case(Expect::Once("M".into()), "none", false)]
    #[case(Expect::Absent("M".into()), "none", true)]
    #[case(Expect::Absent("M".into()), "M", false)]
    #[case(Expect::Present("M".into()), "M M", true)]
    #[case(Expect::Present("M".into()), "", false)]
    #[case(Expect::AtMostOnce("M".into()), "", true)]
    #[case(Expect::AtMostOnce("M".into()), "M M", false)]
    #[case(Expect::AnyOf(vec!["A".into(), "B".into()]), "x B", true)]
    #[case(Expect::AnyOf(vec!["A".into(), "B".into()]), "x C", false)]
    #[case(Expect::Whole("L1\nL2\n".into()), "a L1 b L2", true)]
    #[case(Expect::Whole("L1\nL2\n".into()), "L2 L1", false)]
    #[case(Expect::Whole("L1\nL2\n".into()), "L1 L2 L2", false)]
    #[case(Expect::Whole("L1\nL2\n".into()), "L1", false)]
    #[case(Expect::Lines(vec!["L1".into(), "L2".into()]), "x L1 y L2", true)]
    #[case(Expect::Lines(vec!["L1".into(), "L2".into()]), "L2 L1", false)]
    #[case(Expect::Lines(vec!["L1".into(), "L2".into()]), "L1", false)]
    #[case(Expect::Lines(vec!["L1".into(), "L2".into()]), "L1 L2 L1 L2", false)]
    #[case(Expect::Lines(vec!["L1".into()]), "", false)]
    fn expectations(#[case] e: Expect, #[case] text: &str, #[case] ok: bool) {
        assert_eq!(e.check(text).is_ok(), ok);
    }

    #[test]
    fn failures_name_the_needle_and_show_where_it_was() {
        let text = "first E2E-A-V1 here\nand E2E-A-V1 again";
        let errs = check_all(
            &[
                Expect::Once("E2E-A-V1".into()),
                Expect::Present("E2E-A-V1".into()),
            ],
            text,
        );
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].contains("want exactly once, seen 2 times"),
            "{}",
            errs[0]
        );
        assert!(errs[0].contains("here⏎and"), "{}", errs[0]);
        let errs = check_all(&[Expect::Present("nope".into())], text);
        assert_eq!(errs, ["`nope`: want present, seen 0 times"]);
    }

    #[test]
    fn excerpts_respect_char_boundaries() {
        let text = "ééééé M ééééé";
        assert!(excerpts(text, "M", 3).contains('M'));
    }
}
