//! Names-only roots (docs/decisions/0044, R-HOOK-8): directories above the
//! project root in which exactly a fixed list of relative paths may be
//! probed and read — Claude Code's `CLAUDE.md`, `.claude/CLAUDE.md` and
//! `CLAUDE.local.md` — and nothing else. Both providers follow such a path
//! with the one walk of this module, so they agree on what it admits.
//!
//! The rules, each what makes a names-only root weaker than a trusted root:
//!
//! * A path is admitted only when no trusted root contains it (a trusted
//!   root, however broad, answers for its whole subtree as before) and it is
//!   exactly `<dir>/<name>` for a listed name: never a listing, never
//!   another entry of that directory.
//! * Only the path a caller asks for is admitted: a link met while following
//!   a path of a trusted root is re-anchored into trusted roots only, so no
//!   project file, import or link reaches a names-only file; and shell
//!   touches (`path_kinds`) never admit one.
//! * Every directory on the way below `<dir>` (the `.claude` of
//!   `.claude/CLAUDE.md`) must be a real directory, not a link.
//! * A link at the file is followed only to an entry of that same
//!   directory: `CLAUDE.md -> AGENTS.md` is read, a link into a
//!   subdirectory, a parent, another root or `/etc` is "outside trusted
//!   roots" and never re-anchored. So a names-only root at `/` admits
//!   `/CLAUDE.md` and what it links to next to it, nothing below.

use camino::{Utf8Path, Utf8PathBuf};

use crate::paths::normalize;
use crate::provider::{MAX_LINK_HOPS, Unavailable};

/// What one entry is, without following it (`lstat`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// No entry (`ENOENT`).
    Missing,
    /// A directory.
    Dir,
    /// A regular file or any other non-link, non-directory entry.
    Other,
    /// A symbolic link with this text.
    Link(Utf8PathBuf),
    /// The `lstat` (or the link read) failed.
    Failed(Unavailable),
}

/// Where a names-only path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Walk {
    /// The target, relative to the directory, reached through no link
    /// that left the admitted entries: its own kind decides.
    Target(Utf8PathBuf),
    Absent,
    Unavailable(Unavailable),
}

/// The directories (relative to the names-only directory, `""` for itself)
/// that hold a listed name: the only places a link may point to.
fn holds_a_name(names: &[String], parent: &str) -> bool {
    names.iter().any(|n| {
        Utf8Path::new(n)
            .parent()
            .is_some_and(|p| p.as_str() == parent)
    })
}

/// Follows the listed `name` of a names-only directory `dir` through
/// `lstat` (paths relative to `dir`), by the rules of the module docs.
pub(crate) fn walk(
    dir: &Utf8Path,
    names: &[String],
    name: &Utf8Path,
    mut lstat: impl FnMut(&Utf8Path) -> Entry,
) -> Walk {
    let mut rel = name.to_owned();
    let mut hops = 0u32;
    loop {
        let mut prefix = Utf8PathBuf::new();
        let parts: Vec<&str> = rel.iter().collect();
        let Some((_, parents)) = parts.split_last() else {
            return Walk::Unavailable(Unavailable::OutsideTrustedRoots);
        };
        for part in parents {
            prefix.push(part);
            match lstat(&prefix) {
                Entry::Dir => {}
                Entry::Missing | Entry::Other => return Walk::Absent,
                Entry::Link(_) => return Walk::Unavailable(Unavailable::OutsideTrustedRoots),
                Entry::Failed(reason) => return Walk::Unavailable(reason),
            }
        }
        let text = match lstat(&rel) {
            Entry::Missing => return Walk::Absent,
            Entry::Failed(reason) => return Walk::Unavailable(reason),
            Entry::Dir | Entry::Other => return Walk::Target(rel),
            Entry::Link(text) => text,
        };
        hops += 1;
        if hops > MAX_LINK_HOPS {
            return Walk::Unavailable(Unavailable::Loop);
        }
        let from = dir.join(rel.parent().unwrap_or(Utf8Path::new("")));
        let target = normalize(&from.join(&text));
        match target.strip_prefix(dir) {
            Ok(next)
                if !next.as_str().is_empty()
                    && holds_a_name(names, next.parent().map_or("", Utf8Path::as_str)) =>
            {
                rel = next.to_owned();
            }
            _ => return Walk::Unavailable(Unavailable::OutsideTrustedRoots),
        }
    }
}

/// The names-only directory of `dirs` that admits `path` and the name it
/// has there: `path` is exactly `<dir>/<name>` for a listed name. The
/// caller checks first that no trusted root contains `path`.
pub(crate) fn admitted<'a>(
    dirs: impl IntoIterator<Item = &'a Utf8Path>,
    names: &[String],
    path: &Utf8Path,
) -> Option<(&'a Utf8Path, Utf8PathBuf)> {
    dirs.into_iter().find_map(|dir| {
        let rel = path.strip_prefix(dir).ok()?;
        names
            .iter()
            .any(|n| n == rel.as_str())
            .then(|| (dir, rel.to_owned()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::collections::BTreeMap;

    fn names() -> Vec<String> {
        ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"]
            .map(String::from)
            .to_vec()
    }

    /// A directory `/d` as a map of relative path to entry.
    fn run(entries: &[(&str, Entry)], name: &str) -> Walk {
        let map: BTreeMap<Utf8PathBuf, Entry> = entries
            .iter()
            .map(|(p, e)| (Utf8PathBuf::from(*p), e.clone()))
            .collect();
        walk(Utf8Path::new("/d"), &names(), Utf8Path::new(name), |p| {
            map.get(p).cloned().unwrap_or(Entry::Missing)
        })
    }

    fn link(text: &str) -> Entry {
        Entry::Link(text.into())
    }

    fn target(rel: &str) -> Walk {
        Walk::Target(rel.into())
    }

    const OUT: Walk = Walk::Unavailable(Unavailable::OutsideTrustedRoots);

    // R-HOOK-8: read by name only, no link that leaves that directory.
    #[rstest]
    #[case::plain_file(&[("CLAUDE.md", Entry::Other)], "CLAUDE.md", target("CLAUDE.md"))]
    #[case::missing(&[], "CLAUDE.md", Walk::Absent)]
    #[case::directory_is_its_own_kind(&[("CLAUDE.md", Entry::Dir)], "CLAUDE.md", target("CLAUDE.md"))]
    #[case::link_to_a_sibling(&[("CLAUDE.md", link("AGENTS.md")), ("AGENTS.md", Entry::Other)], "CLAUDE.md", target("AGENTS.md"))]
    #[case::absolute_link_to_a_sibling(&[("CLAUDE.md", link("/d/AGENTS.md")), ("AGENTS.md", Entry::Other)], "CLAUDE.md", target("AGENTS.md"))]
    #[case::link_into_claude_dir(&[("CLAUDE.md", link(".claude/CLAUDE.md")), (".claude", Entry::Dir), (".claude/CLAUDE.md", Entry::Other)], "CLAUDE.md", target(".claude/CLAUDE.md"))]
    #[case::link_out_of_claude_dir_to_the_dir(&[(".claude", Entry::Dir), (".claude/CLAUDE.md", link("../CLAUDE.md")), ("CLAUDE.md", Entry::Other)], ".claude/CLAUDE.md", target("CLAUDE.md"))]
    #[case::link_to_a_subdirectory(&[("CLAUDE.md", link("repo/AGENTS.md"))], "CLAUDE.md", OUT)]
    #[case::link_to_the_parent(&[("CLAUDE.md", link("../CLAUDE.md"))], "CLAUDE.md", OUT)]
    #[case::link_to_etc(&[("CLAUDE.md", link("/etc/passwd"))], "CLAUDE.md", OUT)]
    #[case::link_to_the_dir_itself(&[("CLAUDE.md", link("."))], "CLAUDE.md", OUT)]
    #[case::dangling_sibling(&[("CLAUDE.md", link("gone.md"))], "CLAUDE.md", Walk::Absent)]
    #[case::claude_dir_is_a_link(&[(".claude", link("elsewhere"))], ".claude/CLAUDE.md", OUT)]
    #[case::claude_dir_is_a_file(&[(".claude", Entry::Other)], ".claude/CLAUDE.md", Walk::Absent)]
    #[case::loop_of_siblings(&[("CLAUDE.md", link("a")), ("a", link("CLAUDE.md"))], "CLAUDE.md", Walk::Unavailable(Unavailable::Loop))]
    #[case::failure(&[("CLAUDE.md", Entry::Failed(Unavailable::PermissionDenied))], "CLAUDE.md", Walk::Unavailable(Unavailable::PermissionDenied))]
    fn walks(#[case] entries: &[(&str, Entry)], #[case] name: &str, #[case] expected: Walk) {
        assert_eq!(run(entries, name), expected);
    }

    #[rstest]
    #[case::listed("/a/CLAUDE.md", Some(("/a", "CLAUDE.md")))]
    #[case::listed_in_a_subdir("/a/.claude/CLAUDE.md", Some(("/a", ".claude/CLAUDE.md")))]
    #[case::deeper_dir("/a/b/CLAUDE.local.md", Some(("/a/b", "CLAUDE.local.md")))]
    #[case::at_slash("/CLAUDE.md", Some(("/", "CLAUDE.md")))]
    #[case::unlisted_name("/a/AGENTS.md", None)]
    #[case::below_a_dir("/a/c/CLAUDE.md", None)]
    #[case::the_dir_itself("/a", None)]
    fn admits_listed_names_only(#[case] path: &str, #[case] expected: Option<(&str, &str)>) {
        let dirs = [
            Utf8Path::new("/"),
            Utf8Path::new("/a"),
            Utf8Path::new("/a/b"),
        ];
        let got = admitted(dirs, &names(), Utf8Path::new(path));
        assert_eq!(
            got.as_ref().map(|(d, n)| (d.as_str(), n.as_str())),
            expected
        );
    }
}
