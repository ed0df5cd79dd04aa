//! Invariants over spaces a table cannot cover.

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_discovery::provider::decode_text;
use dsh_instructions_discovery::root::{chain, relative_dir};
use dsh_instructions_discovery::{
    CancellationToken, FsProvider,
    memory::{MemNode, MemoryProvider},
    provider::{ReadOutcome, Unavailable},
};
use proptest::prelude::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #[test]
    fn decoding_valid_text_is_identity_minus_one_bom(s in "\\PC*", bom in any::<bool>()) {
        let mut bytes = Vec::new();
        if bom {
            bytes.extend_from_slice("\u{FEFF}".as_bytes());
        }
        bytes.extend_from_slice(s.as_bytes());
        prop_assert_eq!(decode_text(&bytes), s);
    }

    #[test]
    fn decoding_never_fails_and_replaces_only_invalid_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let text = decode_text(&bytes);
        if let Ok(valid) = std::str::from_utf8(&bytes) {
            prop_assert_eq!(text, valid.strip_prefix('\u{FEFF}').unwrap_or(valid));
        } else {
            prop_assert!(text.contains(char::REPLACEMENT_CHARACTER), "no replacement in {:?}", text);
        }
    }

    /// R-DISC-6: loaded iff the content fits, whatever stat claims; a read
    /// never consumes more than one byte past the cap.
    #[test]
    fn bounded_read_respects_the_cap(len in 0usize..40_000, cap in 0u64..40_000, lie in proptest::option::of(0u64..40_000)) {
        let fs = MemoryProvider::new(vec!["/r".into()]);
        let mut node = MemNode::file(vec![b'x'; len]);
        if let Some(size) = lie {
            node = node.with_stale_size(size);
        }
        fs.insert(Utf8Path::new("/r/f"), node);
        let outcome = runtime()
            .block_on(fs.read_text(Utf8Path::new("/r/f"), cap, &CancellationToken::new()))
            .unwrap();
        let reported = lie.unwrap_or(len as u64);
        match outcome {
            ReadOutcome::Loaded(loaded) => {
                prop_assert!(len as u64 <= cap && reported <= cap);
                prop_assert_eq!(loaded.bytes_read, len as u64);
            }
            ReadOutcome::Unavailable(Unavailable::TooLarge { limit }) => {
                prop_assert_eq!(limit, cap);
                prop_assert!(len as u64 > cap || reported > cap);
            }
            other => prop_assert!(false, "unexpected {:?}", other),
        }
        prop_assert!(fs.counters().bytes_read <= cap + 1);
        if reported > cap {
            prop_assert_eq!(fs.counters().reads, 0);
        }
    }

    #[test]
    fn chain_walks_from_root_to_cwd(root in "(/[a-c]{1,2}){0,3}", rest in "(/[a-c]{1,2}){0,4}") {
        let root = if root.is_empty() { "/".to_owned() } else { root };
        let root = Utf8PathBuf::from(root);
        let cwd = Utf8PathBuf::from(format!("{}{rest}", root.as_str().trim_end_matches('/')));
        let cwd = if cwd.as_str().is_empty() { Utf8PathBuf::from("/") } else { cwd };
        let dirs = chain(&root, &cwd);
        prop_assert_eq!(dirs.first(), Some(&root));
        prop_assert_eq!(dirs.last(), Some(&cwd));
        for pair in dirs.windows(2) {
            prop_assert_eq!(pair[1].parent(), Some(pair[0].as_path()));
        }
        for dir in &dirs {
            let rel = relative_dir(&root, dir).unwrap();
            let rejoined = if rel == "." { root.clone() } else { root.join(&rel) };
            prop_assert_eq!(&rejoined, dir);
        }
    }
}
