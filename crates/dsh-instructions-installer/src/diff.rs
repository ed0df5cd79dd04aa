//! The unified diff `--dry-run` prints (R-HOOK-5), by `similar`: Myers'
//! diff with a deadline-free line algorithm, in the format `patch` and `git
//! apply` read (GNU hunk ranges: a one-line range is written `N`; a file
//! without a final newline is marked `\ No newline at end of file`).

/// Lines of context around each change, as `diff -u`.
const CONTEXT: usize = 3;

/// A unified diff from `before` to `after` (`None`: the file does not
/// exist), labelled with `label`. Empty when the texts are equal.
pub(crate) fn unified(label: &str, before: Option<&str>, after: Option<&str>) -> String {
    if before == after {
        return String::new();
    }
    let old = before.map_or_else(|| "/dev/null".to_owned(), |_| format!("a/{label}"));
    let new = after.map_or_else(|| "/dev/null".to_owned(), |_| format!("b/{label}"));
    similar::TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""))
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&old, &new)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("f", Some("a\nb\n"), Some("a\nb\n")), "");
        assert_eq!(unified("f", None, None), "");
    }

    #[test]
    fn one_changed_line_in_the_middle() {
        let a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let b = "1\n2\n3\n4\nX\n6\n7\n8\n9\n";
        assert_eq!(
            unified("s.json", Some(a), Some(b)),
            "--- a/s.json\n+++ b/s.json\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n"
        );
    }

    #[rstest]
    #[case(None, Some("x\n"), "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n")]
    #[case(Some("x\n"), None, "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")]
    fn creation_and_deletion(
        #[case] before: Option<&str>,
        #[case] after: Option<&str>,
        #[case] want: &str,
    ) {
        assert_eq!(unified("f", before, after), want);
    }

    #[test]
    fn distant_changes_make_two_hunks() {
        let a: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let b: String = (1..=20)
            .map(|i| match i {
                2 => "two\n".to_owned(),
                19 => "nineteen\n".to_owned(),
                _ => format!("{i}\n"),
            })
            .collect();
        let d = unified("f", Some(&a), Some(&b));
        assert_eq!(d.lines().filter(|l| l.starts_with("@@ ")).count(), 2);
        assert!(d.contains("-2\n+two\n") && d.contains("-19\n+nineteen\n"));
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let d = unified("f", Some("a\nb"), Some("a\nb\n"));
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
    }

    /// The dry run must show every change whatever the size: a large file
    /// with one edit gives one small hunk, not the whole file twice.
    #[test]
    fn one_edit_in_a_large_file_is_one_small_hunk() {
        let a: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let b = a.replace("line 12345\n", "changed\n");
        let d = unified("big", Some(&a), Some(&b));
        assert_eq!(d.lines().count(), 2 + 1 + 8, "{d}");
        assert!(d.contains("@@ -12343,7 +12343,7 @@\n"), "{d}");
    }
}
