//! The files read by name above the project root
//! (`ancestor_instruction_files`, R-HOOK-8, docs/decisions/0044): which
//! directories and paths they are, derived from the root alone, so the
//! mount (which opens the provider's names-only roots), the gather passes
//! and the import resolver agree on them without carrying them around.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_home_paths::normalize_lexically;
use dsh_instructions_state::{Config, ScopeKey};

/// The directories strictly above `root`, broadest first: `/` down to the
/// root's parent (none for `/` itself).
///
/// ```text
/// /home/u/code/repo  ->  /, /home, /home/u, /home/u/code
/// ```
pub(crate) fn ancestor_dirs(root: &Utf8Path) -> Vec<Utf8PathBuf> {
    let root = normalize_lexically(root);
    let mut dirs: Vec<Utf8PathBuf> = root.ancestors().skip(1).map(Utf8Path::to_owned).collect();
    dirs.reverse();
    dirs
}

/// One ancestor file: its scope and absolute path (also its display path:
/// Claude Code shows absolute paths there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AncestorFile {
    pub scope: ScopeKey,
    pub path: Utf8PathBuf,
}

/// The ancestor files of `config` above `root`, in section order: broadest
/// directory first, within a directory the configured order.
pub(crate) fn ancestor_files(root: &Utf8Path, config: &Config) -> Vec<AncestorFile> {
    let names = config.ancestor_instruction_files();
    if names.is_empty() {
        return Vec::new();
    }
    ancestor_dirs(root)
        .iter()
        .flat_map(|dir| {
            names.iter().filter_map(move |name| {
                Some(AncestorFile {
                    scope: ScopeKey::ancestor(dir.as_str(), name)?,
                    path: dir.join(name),
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::{Preset, scope::section_order};
    use rstest::rstest;

    #[rstest]
    #[case::nested("/home/u/code/repo", &["/", "/home", "/home/u", "/home/u/code"])]
    #[case::one_below_slash("/repo", &["/"])]
    #[case::slash("/", &[])]
    #[case::not_normal("/a/./b/../c", &["/", "/a"])]
    fn dirs_are_strictly_above_the_root_broadest_first(
        #[case] root: &str,
        #[case] expected: &[&str],
    ) {
        let got = ancestor_dirs(Utf8Path::new(root));
        assert_eq!(
            got,
            expected.iter().map(Utf8PathBuf::from).collect::<Vec<_>>()
        );
    }

    #[test]
    fn files_are_in_section_order_and_only_with_the_field() {
        let claude = Config::preset(Preset::Claude);
        let files = ancestor_files(Utf8Path::new("/x/repo"), &claude);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/CLAUDE.md",
                "/.claude/CLAUDE.md",
                "/CLAUDE.local.md",
                "/x/CLAUDE.md",
                "/x/.claude/CLAUDE.md",
                "/x/CLAUDE.local.md",
            ]
        );
        let mut scopes: Vec<ScopeKey> = files.iter().rev().map(|f| f.scope.clone()).collect();
        scopes.sort_by(|a, b| section_order(a, b, &claude));
        assert_eq!(
            scopes,
            files.iter().map(|f| f.scope.clone()).collect::<Vec<_>>()
        );
        assert!(ancestor_files(Utf8Path::new("/x/repo"), &Config::preset(Preset::Dsh)).is_empty());
    }
}
