//! R-RULE-1: a rules-directory listing is the same on both providers for
//! any small tree of files, directories, FIFOs and links (loops, escapes
//! and dangling ones included), sorted, bounded, and never a stall.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::{
    CancellationToken, CapStdProvider,
    cap_std::ambient_authority,
    listing::{RuleFiles, list_rule_files},
    memory::{MemNode, MemoryProvider},
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Kind {
    File,
    Dir,
    Fifo,
    Link(&'static str),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::File),
        2 => Just(Kind::Dir),
        1 => Just(Kind::Fifo),
        2 => prop_oneof![
            Just("."), Just(".."), Just("a.md"), Just("d"), Just("gone.md"),
            Just("/out/x.md"), Just("/r/.claude/rules"), Just("d/e.md"),
        ]
        .prop_map(Kind::Link),
    ]
}

fn rel() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        Just("a.md"),
        Just("b.md"),
        Just("d"),
        Just("e.md"),
        Just("x.txt"),
        Just(".md")
    ];
    prop::collection::vec(name, 1..4).prop_map(|v| v.join("/"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn list(provider: &dyn dsh_instructions_discovery::FsProvider, dir: &Utf8Path) -> RuleFiles {
    let cancel = CancellationToken::new();
    let run = list_rule_files(provider, dir, ".md", true, &cancel);
    // A hang guard (decision 0082): a listing here takes milliseconds.
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("no stall")
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn both_providers_list_alike(entries in prop::collection::vec((rel(), kind()), 0..10)) {
        let rules = "/r/.claude/rules";
        // Memory: later entries replace earlier ones at the same path, and
        // an entry below a non-directory is skipped; the disk build does
        // the same, so both trees are one tree.
        let mem = MemoryProvider::new(vec!["/r".into()]);
        mem.insert(Utf8Path::new("/r"), MemNode::dir());
        mem.insert(Utf8Path::new("/out/x.md"), MemNode::file("out"));
        mem.insert(Utf8Path::new(rules), MemNode::dir());
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
        std::fs::create_dir_all(base.join("r/.claude/rules")).unwrap();
        std::fs::create_dir_all(base.join("out")).unwrap();
        std::fs::write(base.join("out/x.md"), "out").unwrap();
        let mut placed: Vec<(String, bool)> = Vec::new(); // (rel, is a plain dir)
        for (rel, kind) in &entries {
            // Only below plain directories placed earlier (or the root), and
            // never twice at one path.
            let parent_ok = match rel.rsplit_once('/') {
                None => true,
                Some((p, _)) => placed.iter().any(|(r, dir)| r == p && *dir),
            };
            if !parent_ok || placed.iter().any(|(r, _)| r == rel || rel.starts_with(&format!("{r}/"))) {
                continue;
            }
            let vpath = Utf8PathBuf::from(format!("{rules}/{rel}"));
            let real = base.join(&vpath.as_str()[1..]);
            match kind {
                Kind::File => {
                    mem.insert(&vpath, MemNode::file("x"));
                    std::fs::write(&real, "x").unwrap();
                }
                Kind::Dir => {
                    mem.insert(&vpath, MemNode::dir());
                    std::fs::create_dir(&real).unwrap();
                }
                Kind::Fifo => {
                    mem.insert(&vpath, MemNode::fifo());
                    rustix::fs::mkfifoat(rustix::fs::CWD, real.as_std_path(), 0o644.into()).unwrap();
                }
                Kind::Link(target) => {
                    mem.insert(&vpath, MemNode::link(*target));
                    let t = match target.strip_prefix('/') {
                        Some(abs) => base.join(abs),
                        None => Utf8PathBuf::from(*target),
                    };
                    std::os::unix::fs::symlink(t, &real).unwrap();
                }
            }
            placed.push((rel.clone(), matches!(kind, Kind::Dir)));
        }
        let disk = CapStdProvider::new([base.join("r")], ambient_authority()).unwrap();
        let rt = runtime();
        let from_mem = rt.block_on(list(&mem, Utf8Path::new(rules)));
        let from_disk = rt.block_on(list(&disk, &base.join("r/.claude/rules")));
        prop_assert_eq!(&from_mem, &from_disk);
        prop_assert!(from_mem.files.len() <= RuleFiles::MAX_FILES);
        prop_assert!(from_mem.files.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
        prop_assert!(from_mem.files.iter().all(|f| f.split('/').count() <= RuleFiles::MAX_DEPTH));
    }
}
