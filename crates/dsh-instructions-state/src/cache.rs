//! Per-loop-instance version cache (R-STATE-8).

use std::collections::HashMap;

use crate::digest::Digest;
use crate::scope::ScopeKey;
use crate::visible::VisibleEntry;

/// What the cache remembers about one scope: never instruction text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEntry<V> {
    /// Display path of the file that was read.
    pub path: String,
    /// The provider's opaque version of that file when it was read.
    pub version: V,
    /// [`Digest::of`] its full text.
    pub digest: Digest,
    /// [`Digest::of_trimmed`] its text (dedup key, R-CFG-7).
    pub trimmed_digest: Digest,
    /// The import targets the digest depends on (R-IMP-4); empty with
    /// imports off or when the file names none. The read may be skipped only
    /// when every one of them still probes as recorded.
    pub imports: Vec<ImportKey<V>>,
}

/// One `@path` target a scope's expanded content depends on (R-IMP-4): an
/// edit, creation or removal of it changes the content, so it is part of the
/// scope's version key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportKey<V> {
    /// Absolute, normalized path the token resolved to.
    pub path: String,
    /// The provider's version when it was a regular file, `None` when it was
    /// missing or unreadable (so its creation is noticed).
    pub version: Option<V>,
    /// Whether it was rendered as `(loaded as its own section)` (R-IMP-3),
    /// which depends on the candidates around it, not on the file.
    pub own_section: bool,
}

/// Version cache of one loop instance (R-STATE-8): a resume or remount starts
/// a new, empty one; it is never shared between sessions. Generic over the
/// provider's version type so this crate needs no I/O dependency.
///
/// The cache only lets a read be skipped ([`VersionCache::fresh`](crate::cache::VersionCache::fresh)); it never
/// decides a transition on its own.
///
/// ```
/// use dsh_instructions_state::{Digest, ScopeKey, cache::{CacheEntry, VersionCache}, source::Action, visible::VisibleEntry};
/// let scope = ScopeKey::project(".", "base");
/// let digest = Digest::of("root rule");
/// let mut cache = VersionCache::new();
/// cache.insert(scope.clone(), CacheEntry {
///     path: "AGENTS.md".into(), version: 7u64, digest, trimmed_digest: digest, imports: vec![],
/// });
/// let visible = VisibleEntry { action: Action::Set, path: "AGENTS.md".into(), digest: Some(digest), message: 0 };
/// assert!(cache.fresh(&scope, "AGENTS.md", &7, Some(&visible)).is_some());
/// assert!(cache.fresh(&scope, "AGENTS.md", &8, Some(&visible)).is_none()); // version moved
/// assert!(cache.fresh(&scope, "AGENTS.md", &7, None).is_none()); // model no longer sees it
/// ```
#[derive(Clone, Debug)]
pub struct VersionCache<V> {
    /// Hashed: a revalidation looks up every known scope, and nothing here
    /// needs key order.
    entries: HashMap<ScopeKey, CacheEntry<V>, foldhash::fast::RandomState>,
}

impl<V> Default for VersionCache<V> {
    fn default() -> Self {
        Self {
            entries: HashMap::default(),
        }
    }
}

impl<V: Clone + PartialEq> VersionCache<V> {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached entry of `scope`.
    pub fn get(&self, scope: &ScopeKey) -> Option<&CacheEntry<V>> {
        self.entries.get(scope)
    }

    /// Records a read (only for committed changes or confirmed reads, R-STATE-7).
    pub fn insert(&mut self, scope: ScopeKey, entry: CacheEntry<V>) {
        self.entries.insert(scope, entry);
    }

    /// Forgets `scope`.
    pub fn remove(&mut self, scope: &ScopeKey) {
        self.entries.remove(scope);
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Number of cached scopes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cached entry when the read of `scope` may be skipped (R-STATE-8):
    /// the cached path and version equal the probed ones AND the model still
    /// sees that scope loaded with the same path and digest. Otherwise `None`
    /// and the caller reads and hashes; a compaction that hid the scope thus
    /// re-arms it even with an unchanged version.
    pub fn fresh(
        &self,
        scope: &ScopeKey,
        path: &str,
        version: &V,
        visible: Option<&VisibleEntry>,
    ) -> Option<&CacheEntry<V>> {
        let entry = self.get(scope)?;
        let visible = visible.filter(|v| v.is_loaded())?;
        (entry.path == path
            && entry.version == *version
            && visible.path == path
            && visible.digest == Some(entry.digest))
        .then_some(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Action;
    use rstest::rstest;

    fn scope() -> ScopeKey {
        ScopeKey::project("a", "base")
    }

    fn cached() -> VersionCache<u32> {
        let d = Digest::of("text");
        let mut c = VersionCache::new();
        c.insert(
            scope(),
            CacheEntry {
                path: "a/AGENTS.md".into(),
                version: 1,
                digest: d,
                trimmed_digest: Digest::of_trimmed("text"),
                imports: Vec::new(),
            },
        );
        c
    }

    fn vis(action: Action, path: &str, text: &str) -> VisibleEntry {
        VisibleEntry {
            action,
            path: path.into(),
            digest: action.loads().then(|| Digest::of(text)),
            message: 0,
        }
    }

    // R-STATE-8: the read is skipped only when version AND visible state match.
    #[rstest]
    #[case::all_match("a/AGENTS.md", 1, Some(vis(Action::Set, "a/AGENTS.md", "text")), true)]
    #[case::after_replace(
        "a/AGENTS.md",
        1,
        Some(vis(Action::Replace, "a/AGENTS.md", "text")),
        true
    )]
    #[case::version_moved("a/AGENTS.md", 2, Some(vis(Action::Set, "a/AGENTS.md", "text")), false)]
    #[case::probed_other_path(
        "a/CLAUDE.md",
        1,
        Some(vis(Action::Set, "a/CLAUDE.md", "text")),
        false
    )]
    #[case::visible_other_digest(
        "a/AGENTS.md",
        1,
        Some(vis(Action::Set, "a/AGENTS.md", "older")),
        false
    )]
    #[case::visible_other_path(
        "a/AGENTS.md",
        1,
        Some(vis(Action::Set, "a/CLAUDE.md", "text")),
        false
    )]
    #[case::hidden_by_compaction("a/AGENTS.md", 1, None, false)]
    #[case::tombstone("a/AGENTS.md", 1, Some(vis(Action::Remove, "a/AGENTS.md", "")), false)]
    fn fresh_rules(
        #[case] path: &str,
        #[case] version: u32,
        #[case] visible: Option<VisibleEntry>,
        #[case] skip: bool,
    ) {
        assert_eq!(
            cached()
                .fresh(&scope(), path, &version, visible.as_ref())
                .is_some(),
            skip
        );
    }

    #[test]
    fn unknown_scope_is_never_fresh() {
        let v = vis(Action::Set, "a/AGENTS.md", "text");
        let other = ScopeKey::project("a", "local");
        assert!(
            cached()
                .fresh(&other, "a/AGENTS.md", &1, Some(&v))
                .is_none()
        );
    }

    #[test]
    fn remove_and_clear() {
        let mut c = cached();
        assert_eq!((c.len(), c.is_empty()), (1, false));
        c.remove(&scope());
        assert!(c.get(&scope()).is_none());
        let mut c = cached();
        c.clear();
        assert!(c.is_empty());
    }
}
