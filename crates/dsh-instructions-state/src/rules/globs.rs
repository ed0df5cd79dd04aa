//! Rule globs (R-RULE-3): compiled with globset, a `*`/`?` never crossing
//! a `/`, `**` spanning segments, `[…]` classes and `{a,b}` alternatives; a
//! glob without `/` matches a file name at any depth, a leading `/` or
//! `./` anchors it at the rule's directory.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use std::fmt;

/// A problem that left the rule usable: a glob that did not compile was
/// dropped (R-RULE-2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleDiagnostic {
    /// The front matter key.
    pub field: &'static str,
    /// The glob as written.
    pub glob: String,
    /// The compiler's reason.
    pub reason: String,
}

impl fmt::Display for RuleDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: glob `{}` dropped: {}",
            self.field,
            self.glob.escape_debug(),
            self.reason
        )
    }
}

/// A rule's globs as written and compiled; matched against paths relative
/// to the rule's directory D.
#[derive(Clone, Debug, Default)]
pub struct RuleGlobs {
    written: Vec<String>,
    set: GlobSet,
}

impl PartialEq for RuleGlobs {
    /// Globs are the same when written the same (the compiled set follows).
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl Eq for RuleGlobs {}

/// Splits a comma-separated glob string on the commas outside `{…}`
/// (R-RULE-8), trimming items and dropping empty ones.
pub(crate) fn split_globs(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut push = |item: &str| {
        let item = item.trim();
        if !item.is_empty() {
            out.push(item.to_owned());
        }
    };
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&s[start..]);
    out
}

/// The glob globset compiles for a glob as written (R-RULE-3): anchored
/// without its `/` or `./`, else `**/` before one without `/`.
fn effective(glob: &str) -> String {
    if let Some(anchored) = glob.strip_prefix("./").or_else(|| glob.strip_prefix('/')) {
        anchored.to_owned()
    } else if glob.contains('/') {
        glob.to_owned()
    } else {
        format!("**/{glob}")
    }
}

impl RuleGlobs {
    /// Compiles `written` (the glob field `field`'s items); a glob that does
    /// not compile is dropped with a diagnostic (R-RULE-2).
    pub(crate) fn compile(field: &'static str, written: &[String]) -> (Self, Vec<RuleDiagnostic>) {
        let mut kept = Vec::new();
        let mut builder = GlobSetBuilder::new();
        let mut diagnostics = Vec::new();
        for glob in written {
            match GlobBuilder::new(&effective(glob))
                .literal_separator(true)
                .backslash_escape(true)
                .build()
            {
                Ok(g) => {
                    builder.add(g);
                    kept.push(glob.clone());
                }
                Err(e) => diagnostics.push(RuleDiagnostic {
                    field,
                    glob: glob.clone(),
                    reason: e.kind().to_string(),
                }),
            }
        }
        // Each glob compiled on its own, so the set builds; should it not,
        // the rule keeps no glob rather than a wrong one.
        let set = builder.build().unwrap_or_else(|e| {
            diagnostics.push(RuleDiagnostic {
                field,
                glob: kept.join(","),
                reason: e.to_string(),
            });
            kept.clear();
            GlobSet::empty()
        });
        (Self { written: kept, set }, diagnostics)
    }

    /// The kept globs as written (trimmed).
    pub fn written(&self) -> &[String] {
        &self.written
    }

    /// No glob kept.
    pub fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// Whether `rel`, a `/`-separated path relative to the rule's directory
    /// (no leading `./`), matches one of the globs.
    pub fn matches(&self, rel: &str) -> bool {
        !self.written.is_empty() && self.set.is_match(rel)
    }
}
