//! A scanned directory's path and key held once: every directory of a
//! root-to-cwd chain shares the deepest one's path (issue 35 item 3,
//! decision 0078).

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

/// A scanned directory's absolute path and, for a project directory, its
/// root-relative key, held in one shared string: every directory of a
/// root-to-cwd chain is a prefix of the deepest one, so a chain of any
/// depth holds its paths once ([`DirPath::chain`]). A 256-deep chain's
/// paths, copied per directory as path and key, were most of a
/// composition's memory (issue 35 item 3).
#[derive(Debug, Clone)]
pub(crate) struct DirPath {
    text: Arc<str>,
    /// The absolute path is `text[..len]`.
    len: usize,
    rel: Rel,
}

/// Where a [`DirPath`]'s root-relative key is.
#[derive(Debug, Clone, Copy)]
enum Rel {
    /// Not a project directory (the user-global file's home, the user's
    /// rules directory).
    Outside,
    /// The project root: `.`.
    Root,
    /// `text[start..end]`.
    At(usize, usize),
}

impl DirPath {
    /// A directory outside the project (no key).
    pub(crate) fn outside(abs: Utf8PathBuf) -> Self {
        let text: Arc<str> = Arc::from(abs.into_string());
        Self {
            len: text.len(),
            text,
            rel: Rel::Outside,
        }
    }

    /// The project directory `rel` at `abs` ([`dir_abs`] of the root and
    /// `rel`, whose end is then the key; any other pair is held as given).
    pub(crate) fn known(abs: &Utf8Path, rel: &str) -> Self {
        let abs = abs.as_str();
        if rel == "." {
            return Self {
                text: Arc::from(abs),
                len: abs.len(),
                rel: Rel::Root,
            };
        }
        if ends_with_component(abs, rel) {
            return Self {
                text: Arc::from(abs),
                len: abs.len(),
                rel: Rel::At(abs.len() - rel.len(), abs.len()),
            };
        }
        Self {
            text: Arc::from([abs, rel].concat()),
            len: abs.len(),
            rel: Rel::At(abs.len(), abs.len() + rel.len()),
        }
    }

    /// The directories of a root-to-cwd `chain` ([`crate::compose::chain_rel`]:
    /// each key a prefix of the next) under `root`, all sharing the
    /// deepest one's path.
    pub(crate) fn chain(root: &Utf8Path, chain: &[String]) -> Vec<Self> {
        let Some(deepest) = chain.last() else {
            return Vec::new();
        };
        let text: Arc<str> = Arc::from(dir_abs(root, deepest).into_string());
        chain
            .iter()
            .map(|rel| {
                let len = if rel == "." {
                    root.as_str().len()
                } else {
                    root.as_str().len() + usize::from(!root.as_str().ends_with('/')) + rel.len()
                };
                // What `dir_abs(root, rel)` would have built, checked (a
                // chain is made that way, but this costs a comparison): the
                // root, then (by the length) at most a `/`, then the key.
                let shared = text.get(..len).is_some_and(|abs| {
                    abs.starts_with(root.as_str()) && (rel == "." || ends_with_component(abs, rel))
                });
                if !shared {
                    return Self::known(&dir_abs(root, rel), rel);
                }
                Self {
                    text: Arc::clone(&text),
                    len,
                    rel: if rel == "." {
                        Rel::Root
                    } else {
                        Rel::At(len - rel.len(), len)
                    },
                }
            })
            .collect()
    }

    /// The absolute directory.
    pub(crate) fn abs(&self) -> &Utf8Path {
        Utf8Path::new(&self.text[..self.len])
    }

    /// The root-relative key (`.` for the root); `None` outside the project.
    pub(crate) fn rel(&self) -> Option<&str> {
        match self.rel {
            Rel::Outside => None,
            Rel::Root => Some("."),
            Rel::At(start, end) => Some(&self.text[start..end]),
        }
    }
}

/// Whether `path` ends with the relative path `rel` as whole components.
fn ends_with_component(path: &str, rel: &str) -> bool {
    !rel.is_empty() && path.ends_with(rel) && path[..path.len() - rel.len()].ends_with('/')
}

/// Absolute path of a project directory given by its root-relative key.
pub(crate) fn dir_abs(root: &Utf8Path, rel: &str) -> Utf8PathBuf {
    if rel == "." {
        return root.to_owned();
    }
    let mut out = String::with_capacity(root.as_str().len() + 1 + rel.len());
    out.push_str(root.as_str());
    if !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(rel);
    Utf8PathBuf::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Every directory of a chain shares the deepest one's path, and each
    /// still answers its own absolute path and key as [`dir_abs`] makes them
    /// (issue 35 item 3: a deep chain holds its paths once).
    #[rstest]
    #[case("/r", &[".", "a", "a/bb", "a/bb/c"])]
    #[case("/", &[".", "x", "x/y"])]
    #[case("/r/", &[".", "a", "a/b"])]
    #[case("/r", &["."])]
    fn a_chain_holds_its_paths_once(#[case] root: &str, #[case] chain: &[&str]) {
        let root = Utf8Path::new(root);
        let chain: Vec<String> = chain.iter().map(|&d| d.to_owned()).collect();
        let paths = DirPath::chain(root, &chain);
        assert_eq!(paths.len(), chain.len());
        for (path, rel) in paths.iter().zip(&chain) {
            assert_eq!(path.abs(), dir_abs(root, rel), "{rel}");
            assert_eq!(path.rel(), Some(rel.as_str()));
            assert!(Arc::ptr_eq(&path.text, &paths[0].text), "{rel}: a copy");
        }
        assert_eq!(Arc::strong_count(&paths[0].text), chain.len());
    }

    /// A pair that is no `dir_abs` pair still answers what it was given.
    #[rstest]
    #[case("/r/a", "a", Some("a"))]
    #[case("/r", ".", Some("."))]
    #[case("/r/ba", "a", Some("a"))]
    #[case("/r/x", "a/b", Some("a/b"))]
    fn a_known_directory_answers_its_path_and_key(
        #[case] abs: &str,
        #[case] rel: &str,
        #[case] key: Option<&str>,
    ) {
        let path = DirPath::known(Utf8Path::new(abs), rel);
        assert_eq!(path.abs(), abs);
        assert_eq!(path.rel(), key);
        let outside = DirPath::outside(abs.into());
        assert_eq!((outside.abs().as_str(), outside.rel()), (abs, None));
    }
}
