//! One-line descriptions of workspace message sources and tool outcomes,
//! shared by every printer — the CLI's `session` commands (sources read back
//! from a log) and the conformance transcript behind `replay` (sources a
//! driver observed) — so all describe the same message the same way.

/// `baseline: set AGENTS.md, replace b.md (was a.md)`, or `dynamic, no
/// changes`: the kind of a workspace message source and its changes as
/// `(action, path, previous path)`, in order.
pub fn source_summary<'a>(
    baseline: bool,
    changes: impl IntoIterator<Item = (&'a str, &'a str, Option<&'a str>)>,
) -> String {
    let changes: Vec<String> = changes
        .into_iter()
        .map(|(action, path, previous)| match previous {
            Some(prev) => format!("{action} {path} (was {prev})"),
            None => format!("{action} {path}"),
        })
        .collect();
    let kind = if baseline { "baseline" } else { "dynamic" };
    if changes.is_empty() {
        format!("{kind}, no changes")
    } else {
        format!("{kind}: {}", changes.join(", "))
    }
}

/// How a tool execution ended: a cancellation wins over the result flag.
pub fn tool_outcome(ok: bool, cancelled: bool) -> &'static str {
    match (ok, cancelled) {
        (_, true) => "cancelled",
        (true, false) => "ok",
        (false, false) => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    type Change = (&'static str, &'static str, Option<&'static str>);

    #[rstest]
    #[case::empty_baseline(true, &[], "baseline, no changes")]
    #[case::empty_dynamic(false, &[], "dynamic, no changes")]
    #[case::one_set(true, &[("set", "AGENTS.md", None)], "baseline: set AGENTS.md")]
    #[case::rename_names_the_old_path(
        false,
        &[("replace", "CLAUDE.md", Some("AGENTS.md"))],
        "dynamic: replace CLAUDE.md (was AGENTS.md)"
    )]
    #[case::changes_keep_their_order(
        false,
        &[("set", "b/AGENTS.md", None), ("remove", "a/AGENTS.md", None)],
        "dynamic: set b/AGENTS.md, remove a/AGENTS.md"
    )]
    fn sources_read_as_one_line(
        #[case] baseline: bool,
        #[case] changes: &[Change],
        #[case] want: &str,
    ) {
        assert_eq!(source_summary(baseline, changes.iter().copied()), want);
    }

    #[rstest]
    #[case(true, false, "ok")]
    #[case(false, false, "error")]
    #[case(true, true, "cancelled")]
    #[case(false, true, "cancelled")]
    fn tool_outcomes(#[case] ok: bool, #[case] cancelled: bool, #[case] want: &str) {
        assert_eq!(tool_outcome(ok, cancelled), want);
    }
}
