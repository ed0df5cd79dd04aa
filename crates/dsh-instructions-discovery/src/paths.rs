//! Lexical path helpers shared by the providers and root discovery.

use camino::{Utf8Path, Utf8PathBuf};

/// Lexical normalization, shared with home resolution so both agree on
/// what a path means (`.`/`..` removed, never above `/`).
pub(crate) fn normalize(path: &Utf8Path) -> Utf8PathBuf {
    dsh_home_paths::normalize_lexically(path)
}

/// `path` without copying when it is already absolute and normal (what
/// callers almost always pass), normalized otherwise.
pub(crate) fn normalized(path: &Utf8Path) -> std::borrow::Cow<'_, Utf8Path> {
    if path.as_str().starts_with('/') && dsh_home_paths::is_lexically_normal(path) {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(normalize(path))
    }
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
        assert_eq!(normalized(Utf8Path::new(input)).as_str(), expected);
    }

    #[rstest]
    #[case("/a/b", true)]
    #[case("/", true)]
    #[case("/a/b/", false)]
    #[case("/a//b", false)]
    #[case("/a/.hidden/..b", true)]
    #[case("a/b", false)]
    fn borrows_only_normal_absolute_paths(#[case] input: &str, #[case] borrowed: bool) {
        let got = normalized(Utf8Path::new(input));
        assert_eq!(matches!(got, std::borrow::Cow::Borrowed(_)), borrowed);
        assert_eq!(got.as_ref(), normalize(Utf8Path::new(input)));
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
