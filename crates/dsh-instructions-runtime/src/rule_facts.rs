//! What a rule file's front matter said, by the version of the file it was
//! read at (R-RULE-2): its own module, because both the scan that carries
//! it and the rule slots that fill it name it.

use std::collections::HashMap;
use std::sync::Arc;

use dsh_instructions_discovery::provider::FileVersion;
use dsh_instructions_state::{
    ScopeKey,
    rules::{RuleGlobs, RuleKind},
};

/// What a rule file's front matter says (R-RULE-2), kept per loop instance
/// by the version it was read at: a composition that only needs to know
/// whether a rule loads — a path-scoped rule nothing attaches, a manual
/// rule — probes the file instead of reading and parsing it again
/// (issue 46 item 2: a touch re-read every unattached rule of its chain).
/// A version is trusted as far as the instance's version cache trusts one
/// (R-STATE-8), and an entry is a pure function of the file at that
/// version, so a cancelled composition that learnt one leaves nothing
/// wrong behind.
#[derive(Debug, Default)]
pub(crate) struct RuleFacts(std::sync::Mutex<HashMap<ScopeKey, RuleFact>>);

/// A rule's kind and globs at one version of its file, and for a
/// path-scoped rule its content (what follows the front matter, before the
/// agent's transform): a touch that attaches it needs no read while the
/// file is at that version (decision 0091).
#[derive(Debug, Clone)]
pub(crate) struct RuleFact {
    version: FileVersion,
    pub kind: RuleKind,
    pub globs: RuleGlobs,
    pub content: Option<Arc<str>>,
}

impl RuleFacts {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ScopeKey, RuleFact>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What `judge` says of `scope`'s rule if its file is still at
    /// `version` (nothing is cloned: a compiled glob set was the dearest
    /// part of a touch's rule work).
    pub(crate) fn with<R>(
        &self,
        scope: &ScopeKey,
        version: &FileVersion,
        judge: impl FnOnce(&RuleFact) -> R,
    ) -> Option<R> {
        self.lock()
            .get(scope)
            .filter(|f| &f.version == version)
            .map(judge)
    }

    /// Keeps what a read at `version` said; `content` only for a
    /// path-scoped rule (the only kind a later touch can attach: an
    /// always-on rule the model sees is vouched for by the version cache,
    /// a manual one never loads).
    pub(crate) fn learn(
        &self,
        scope: &ScopeKey,
        version: FileVersion,
        kind: RuleKind,
        globs: &RuleGlobs,
        content: &str,
    ) {
        let content = (kind == RuleKind::PathScoped).then(|| Arc::from(content));
        self.lock().insert(
            scope.clone(),
            RuleFact {
                version,
                kind,
                globs: globs.clone(),
                content,
            },
        );
    }

    /// Whether it knows anything about `scope`.
    pub(crate) fn knows(&self, scope: &ScopeKey) -> bool {
        self.lock().contains_key(scope)
    }
}
