//! Lexical path helpers shared by the providers and root discovery.

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};

/// Removes `.` and resolves `..` lexically (never above the root), without
/// touching the filesystem.
///
/// Private stand-in for `dsh_home_paths::normalize_lexically`, which is being
/// written concurrently; the semantics are the same for absolute paths.
pub(crate) fn normalize(path: &Utf8Path) -> Utf8PathBuf {
    let mut out = Utf8PathBuf::new();
    for component in path.components() {
        match component {
            Utf8Component::Prefix(p) => out.push(p.as_str()),
            Utf8Component::RootDir => out.push("/"),
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => {
                // Popping at "/" is a no-op, so ".." never climbs above the root.
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Utf8Component::Normal(name) => out.push(name),
        }
    }
    if out.as_str().is_empty() {
        out.push(".");
    }
    out
}

/// Resolves the text of a symlink found at `link` against the link's parent
/// directory and normalizes the result.
pub(crate) fn link_target(link: &Utf8Path, text: &Utf8Path) -> Utf8PathBuf {
    let parent = link.parent().unwrap_or(Utf8Path::new("/"));
    normalize(&parent.join(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/a/b", "/a/b")]
    #[case("/a/./b/", "/a/b")]
    #[case("/a/../b", "/b")]
    #[case("/../../a", "/a")]
    #[case("/", "/")]
    #[case("/a/b/../..", "/")]
    #[case("a/../..", "..")]
    #[case("", ".")]
    fn normalizes(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(normalize(Utf8Path::new(input)), Utf8PathBuf::from(expected));
    }

    #[rstest]
    #[case("/r/a/link", "t", "/r/a/t")]
    #[case("/r/a/link", "../b/t", "/r/b/t")]
    #[case("/r/a/link", "/x/../y", "/y")]
    #[case("/link", "../../t", "/t")]
    fn resolves_link_text(#[case] link: &str, #[case] text: &str, #[case] expected: &str) {
        assert_eq!(
            link_target(Utf8Path::new(link), Utf8Path::new(text)),
            Utf8PathBuf::from(expected)
        );
    }
}
