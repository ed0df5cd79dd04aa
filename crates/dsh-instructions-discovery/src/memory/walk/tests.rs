//! How the in-memory provider follows links (decision 0042): each case is
//! what the cap-std provider answers on disk for the same tree, which the
//! differential property test of the conformance crate checks at random
//! (`tests/provider_parity.rs`).

use camino::{Utf8Path, Utf8PathBuf};
use rstest::rstest;

use crate::memory::{MemNode, MemoryProvider};
use crate::provider::{FsProvider, MarkerProbe, Probe, Unavailable};
use crate::{CancellationToken, DiscoveryError};

/// A file, or a link with this text (`->` prefix).
fn provider(tree: &[(&str, &str)], roots: &[&str]) -> MemoryProvider {
    let fs = MemoryProvider::new(Vec::new());
    for (path, value) in tree {
        let node = match value.strip_prefix("->") {
            Some(text) => MemNode::link(text),
            None if *value == "dir" => MemNode::dir(),
            None => MemNode::file(*value),
        };
        fs.insert(Utf8Path::new(path), node);
    }
    fs.with_trusted_roots(roots.iter().map(Utf8PathBuf::from).collect())
}

fn probe(fs: &MemoryProvider, path: &str) -> Probe {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime
        .block_on(fs.probe(Utf8Path::new(path), &CancellationToken::new()))
        .expect("not cancelled")
}

fn marker(fs: &MemoryProvider, path: &str) -> MarkerProbe {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime
        .block_on(fs.marker(Utf8Path::new(path), &CancellationToken::new()))
        .expect("not cancelled")
}

/// `Some(size)` present, `None` absent, else the reason.
fn class(probe: &Probe) -> Result<Option<u64>, Unavailable> {
    match probe {
        Probe::Present(file) => Ok(Some(file.size)),
        Probe::Absent => Ok(None),
        Probe::Unavailable(reason) => Err(reason.clone()),
    }
}

const OUTSIDE: Result<Option<u64>, Unavailable> = Err(Unavailable::OutsideTrustedRoots);
const LOOP: Result<Option<u64>, Unavailable> = Err(Unavailable::Loop);

#[rstest]
// The symlinked cwd (the root, no marker): read through its link, whether
// its text is absolute, relative or a chain (R-DISC-1, R-DISC-7).
#[case::linked_root_absolute(&[("/w/t/AGENTS.md", "rule"), ("/w/link", "->/w/t")], &["/w/link"], "/w/link/AGENTS.md", Ok(Some(4)))]
#[case::linked_root_relative(&[("/w/t/AGENTS.md", "rule"), ("/w/link", "->t")], &["/w/link"], "/w/link/AGENTS.md", Ok(Some(4)))]
#[case::linked_root_chain(&[("/w/t/AGENTS.md", "rule"), ("/w/l1", "->l2"), ("/w/l2", "->/w/t")], &["/w/l1"], "/w/l1/AGENTS.md", Ok(Some(4)))]
#[case::linked_root_through_parent(&[("/w/t/sub/AGENTS.md", "rule"), ("/w/link", "->t")], &["/w/link/sub"], "/w/link/sub/AGENTS.md", Ok(Some(4)))]
// A root that does not open as a directory: nothing below it.
#[case::dangling_root(&[("/w/link", "->missing")], &["/w/link"], "/w/link/AGENTS.md", Ok(None))]
#[case::root_linked_to_a_file(&[("/w/f", "x"), ("/w/link", "->f")], &["/w/link"], "/w/link", Ok(None))]
#[case::looping_root(&[("/w/a", "->b"), ("/w/b", "->a")], &["/w/a"], "/w/a/AGENTS.md", Ok(None))]
// Roots are matched lexically: the target's own spelling is another path.
#[case::target_spelling_outside(&[("/w/t/AGENTS.md", "rule"), ("/w/link", "->/w/t")], &["/w/link"], "/w/t/AGENTS.md", OUTSIDE)]
#[case::absolute_link_to_target_spelling(&[("/w/t/n.md", "rule"), ("/w/t/AGENTS.md", "->/w/t/n.md"), ("/w/link", "->t")], &["/w/link"], "/w/link/AGENTS.md", OUTSIDE)]
#[case::relative_link_inside_linked_root(&[("/w/t/n.md", "rule"), ("/w/t/AGENTS.md", "->n.md"), ("/w/link", "->t")], &["/w/link"], "/w/link/AGENTS.md", Ok(Some(4)))]
// `..` out of a linked root is re-anchored against the root's spelling.
#[case::dotdot_out_of_linked_root(&[("/w/t/AGENTS.md", "->../o/f"), ("/w/o/f", "rule"), ("/w/link", "->t")], &["/w/link", "/w/o"], "/w/link/AGENTS.md", Ok(Some(4)))]
#[case::dotdot_out_of_linked_root_untrusted(&[("/w/t/AGENTS.md", "->../o/f"), ("/w/o/f", "rule"), ("/w/link", "->t")], &["/w/link"], "/w/link/AGENTS.md", OUTSIDE)]
// Beneath a root `..` is the parent of the directory reached, not of the
// link text's spelling.
#[case::dotdot_after_a_linked_dir(&[("/r/d/e", "dir"), ("/r/x", "->d/e"), ("/r/l", "->x/../y"), ("/r/d/y", "deep"), ("/r/y", "shallow!")], &["/r"], "/r/l", Ok(Some(4)))]
#[case::dotdot_leaving_and_reentering(&[("/r/f", "rule"), ("/r/a", "->../r/f")], &["/r"], "/r/a", Ok(Some(4)))]
#[case::across_roots(&[("/h/f", "rule"), ("/r/a", "->/h/f")], &["/r", "/h"], "/r/a", Ok(Some(4)))]
#[case::dangling(&[("/r/a", "->nothing")], &["/r"], "/r/a", Ok(None))]
#[case::link_to_directory(&[("/r/d", "dir"), ("/r/a", "->d")], &["/r"], "/r/a", Ok(None))]
#[case::through_a_file(&[("/r/f", "x"), ("/r/a", "->f/g")], &["/r"], "/r/a", Ok(None))]
#[case::self_loop(&[("/r/a", "->a")], &["/r"], "/r/a", LOOP)]
#[case::absolute_loop(&[("/r/a", "->/r/b"), ("/r/b", "->/r/a")], &["/r"], "/r/a", LOOP)]
#[case::loop_in_a_middle_component(&[("/r/a", "->b"), ("/r/b", "->a")], &["/r"], "/r/a/AGENTS.md", LOOP)]
fn follows_links_like_the_disk_provider(
    #[case] tree: &[(&str, &str)],
    #[case] roots: &[&str],
    #[case] path: &str,
    #[case] expected: Result<Option<u64>, Unavailable>,
) {
    let fs = provider(tree, roots);
    assert_eq!(class(&probe(&fs, path)), expected);
}

#[test]
fn a_root_keeps_the_directory_it_opened_as() {
    // The disk provider holds a handle on the root: a link retargeted
    // later does not move it.
    let fs = provider(
        &[
            ("/w/t/AGENTS.md", "old"),
            ("/w/u/AGENTS.md", "newer"),
            ("/w/link", "->t"),
        ],
        &["/w/link"],
    );
    fs.insert(Utf8Path::new("/w/link"), MemNode::link("u"));
    assert_eq!(class(&probe(&fs, "/w/link/AGENTS.md")), Ok(Some(3)));
    // A new mount opens it again.
    let again = fs.with_trusted_roots(vec!["/w/link".into()]);
    assert_eq!(class(&probe(&again, "/w/link/AGENTS.md")), Ok(Some(5)));
}

#[test]
fn a_root_that_appears_later_is_opened_on_use() {
    let fs = provider(&[], &["/w/link"]);
    assert_eq!(class(&probe(&fs, "/w/link/AGENTS.md")), Ok(None));
    fs.insert(Utf8Path::new("/w/t/AGENTS.md"), MemNode::file("rule"));
    fs.insert(Utf8Path::new("/w/link"), MemNode::link("t"));
    assert_eq!(class(&probe(&fs, "/w/link/AGENTS.md")), Ok(Some(4)));
}

#[rstest]
#[case::looping(&["/w/a"], Some("/w/a"))]
#[case::second_of_two(&["/w/t", "/w/b"], Some("/w/b"))]
#[case::missing_is_fine(&["/w/missing", "/w/t"], None)]
#[case::dangling_is_fine(&["/w/dangling"], None)]
fn refuses_the_roots_the_disk_provider_refuses(
    #[case] roots: &[&str],
    #[case] refused: Option<&str>,
) {
    let fs = provider(
        &[
            ("/w/t", "dir"),
            ("/w/a", "->b"),
            ("/w/b", "->a"),
            ("/w/dangling", "->x"),
        ],
        &[],
    );
    let result = fs.try_with_trusted_roots(roots.iter().map(Utf8PathBuf::from).collect());
    match (result, refused) {
        (Ok(_), None) => {}
        (Err(DiscoveryError::OpenRoot { path, source }), Some(refused)) => {
            assert_eq!(path, refused);
            assert_eq!(
                source.raw_os_error(),
                Some(rustix::io::Errno::LOOP.raw_os_error())
            );
        }
        (other, refused) => panic!("{other:?} for {refused:?}"),
    }
}

#[test]
fn refuses_a_relative_root() {
    let fs = provider(&[], &[]);
    assert!(matches!(
        fs.try_with_trusted_roots(vec!["/w".into(), "rel".into()]),
        Err(DiscoveryError::RelativeRoot { path }) if path == "rel"
    ));
}

#[rstest]
// Markers check existence from `/`, any link but the last followed.
#[case::through_a_linked_cwd(&[("/w/t/.git", "dir"), ("/w/link", "->t")], "/w/link/.git", MarkerProbe::Exists)]
#[case::dangling_marker_link(&[("/w/.git", "->gone")], "/w/.git", MarkerProbe::Exists)]
#[case::through_a_dangling_link(&[("/w/link", "->gone")], "/w/link/.git", MarkerProbe::Missing)]
#[case::through_a_loop(&[("/w/a", "->b"), ("/w/b", "->a")], "/w/a/.git", MarkerProbe::Failed(Unavailable::Loop))]
#[case::outside_every_root(&[("/elsewhere/.git", "dir")], "/elsewhere/.git", MarkerProbe::Exists)]
fn markers_follow_links_but_the_last(
    #[case] tree: &[(&str, &str)],
    #[case] path: &str,
    #[case] expected: MarkerProbe,
) {
    let fs = provider(tree, &["/r"]);
    assert_eq!(marker(&fs, path), expected);
}
