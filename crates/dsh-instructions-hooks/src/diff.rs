//! A small unified diff of two texts, for `--dry-run` (R-HOOK-5). Settings
//! files are a few hundred lines at most, so a quadratic longest-common-
//! subsequence table is fine; beyond [`MAX_LINES`] the diff falls back to
//! "everything removed, everything added", which is still a correct diff.

const CONTEXT: usize = 3;
/// Above this many lines on either side the LCS table is skipped.
const MAX_LINES: usize = 4000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Del,
    Add,
}

/// A unified diff from `before` to `after` (`None`: the file does not
/// exist), labelled with `label`. Empty when the texts are equal.
pub(crate) fn unified(label: &str, before: Option<&str>, after: Option<&str>) -> String {
    if before == after {
        return String::new();
    }
    let a: Vec<&str> = before.map(split).unwrap_or_default();
    let b: Vec<&str> = after.map(split).unwrap_or_default();
    let ops = script(&a, &b);
    let mut out = String::new();
    out.push_str(&format!(
        "--- {}\n+++ {}\n",
        if before.is_some() {
            format!("a/{label}")
        } else {
            "/dev/null".to_owned()
        },
        if after.is_some() {
            format!("b/{label}")
        } else {
            "/dev/null".to_owned()
        },
    ));
    // Walk the edit script, emitting hunks with CONTEXT lines around changes.
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, (op, _))| *op != Op::Keep)
        .map(|(i, _)| i)
        .collect();
    let mut i = 0;
    while i < changed.len() {
        let start = changed[i].saturating_sub(CONTEXT);
        let mut end = changed[i];
        while i < changed.len() && changed[i] <= end + 2 * CONTEXT + 1 {
            end = changed[i];
            i += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (mut a_line, mut b_line) = (0, 0);
        for (op, _) in &ops[..start] {
            match op {
                Op::Keep => {
                    a_line += 1;
                    b_line += 1;
                }
                Op::Del => a_line += 1,
                Op::Add => b_line += 1,
            }
        }
        let a_len = ops[start..end]
            .iter()
            .filter(|(o, _)| *o != Op::Add)
            .count();
        let b_len = ops[start..end]
            .iter()
            .filter(|(o, _)| *o != Op::Del)
            .count();
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            if a_len == 0 { a_line } else { a_line + 1 },
            a_len,
            if b_len == 0 { b_line } else { b_line + 1 },
            b_len
        ));
        for (op, line) in &ops[start..end] {
            let sign = match op {
                Op::Keep => ' ',
                Op::Del => '-',
                Op::Add => '+',
            };
            out.push(sign);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn split(text: &str) -> Vec<&str> {
    text.lines().collect()
}

fn script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Op, &'a str)> {
    if a.len() > MAX_LINES || b.len() > MAX_LINES {
        let mut ops: Vec<(Op, &str)> = a.iter().map(|l| (Op::Del, *l)).collect();
        ops.extend(b.iter().map(|l| (Op::Add, *l)));
        return ops;
    }
    // lcs[i][j] = length of the LCS of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(a.len() + b.len());
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            ops.push((Op::Keep, a[i]));
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            ops.push((Op::Del, a[i]));
            i += 1;
        } else {
            ops.push((Op::Add, b[j]));
            j += 1;
        }
    }
    ops.extend(a[i..].iter().map(|l| (Op::Del, *l)));
    ops.extend(b[j..].iter().map(|l| (Op::Add, *l)));
    ops
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
    #[case(None, Some("x\n"), "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n")]
    #[case(Some("x\n"), None, "--- a/f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n")]
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
}
