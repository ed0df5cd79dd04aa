//! Names-only roots in memory: the same walk as on disk (the crate's
//! `named` module, docs/decisions/0044) over the model's nodes, so both
//! providers admit exactly the same paths.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

use super::state::State;
use super::{MemKind, MemoryProvider};
use crate::named::{Entry, Walk, admitted, walk};
use crate::paths::normalize;

use super::requests::Resolved;

/// The directories and the relative paths each of them admits.
#[derive(Debug)]
pub(super) struct MemNamed {
    dirs: Vec<Utf8PathBuf>,
    names: Vec<String>,
}

impl MemoryProvider {
    /// A handle on the same filesystem, gates and counters that also admits,
    /// in each of `dirs`, exactly the relative paths `names` where no
    /// trusted root contains them — the names-only roots of
    /// `CapStdProvider::names_only`, with the same rules (R-HOOK-8).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use camino::{Utf8Path, Utf8PathBuf};
    /// use dsh_instructions_discovery::{CancellationToken, FsProvider, memory::{MemNode, MemoryProvider}, provider::{Probe, Unavailable}};
    /// let fs = MemoryProvider::new(vec![Utf8PathBuf::from("/code/repo")])
    ///     .with_names_only(vec!["/code".into()], &["CLAUDE.md".to_owned()]);
    /// fs.insert(Utf8Path::new("/code/CLAUDE.md"), MemNode::file("all my repositories"));
    /// fs.insert(Utf8Path::new("/code/notes.md"), MemNode::file("private"));
    /// let cancel = CancellationToken::new();
    /// assert!(matches!(fs.probe(Utf8Path::new("/code/CLAUDE.md"), &cancel).await.unwrap(), Probe::Present(_)));
    /// assert_eq!(
    ///     fs.probe(Utf8Path::new("/code/notes.md"), &cancel).await.unwrap(),
    ///     Probe::Unavailable(Unavailable::OutsideTrustedRoots)
    /// );
    /// # });
    /// ```
    #[must_use]
    pub fn with_names_only(&self, dirs: Vec<Utf8PathBuf>, names: &[String]) -> Self {
        let mut dirs: Vec<Utf8PathBuf> = dirs
            .iter()
            .filter(|d| d.is_absolute())
            .map(|d| normalize(d))
            .collect();
        dirs.dedup();
        Self {
            named: Some(Arc::new(MemNamed {
                dirs,
                names: names.to_vec(),
            })),
            ..self.clone()
        }
    }

    /// The resolution of `path` through a names-only root, when one
    /// admits it (every path looked at joins `chain`, for faults and
    /// gates); `None` leaves it to the trusted roots.
    pub(super) fn resolve_named(
        &self,
        state: &State,
        path: &Utf8Path,
        chain: &mut Vec<Utf8PathBuf>,
    ) -> Option<Resolved> {
        let named = self.named.as_ref()?;
        if self.inside_roots(path) {
            return None;
        }
        let (dir, rel) = admitted(
            named.dirs.iter().map(Utf8PathBuf::as_path),
            &named.names,
            path,
        )?;
        let mut seen = Vec::new();
        let found = walk(dir, &named.names, &rel, |p| {
            let abs = dir.join(p);
            let entry = match state.nodes.get(&abs).map(|e| &e.kind) {
                None if abs.parent().is_none() => Entry::Dir,
                None => Entry::Missing,
                Some(MemKind::Dir) => Entry::Dir,
                Some(MemKind::File(_) | MemKind::Fifo) => Entry::Other,
                Some(MemKind::Link(text)) => Entry::Link(text.into()),
            };
            seen.push(abs);
            entry
        });
        chain.extend(seen);
        Some(match found {
            Walk::Target(target) => Resolved::Node(dir.join(target)),
            Walk::Absent => Resolved::Absent,
            Walk::Unavailable(reason) => Resolved::Unavailable(reason),
        })
    }
}
