//! Directories interned once per process (issue 46 item 2, decision 0093):
//! a [`DirId`] is a small `Copy` key that stands for one root-relative
//! directory key (`.`, `pkg/a`) for the life of the process, so maps the
//! runtime consults for every known directory on every touch key by a
//! number instead of hashing and comparing the directory's path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// One root-relative directory key, interned ([`DirId::of`]). Two ids are
/// equal exactly when their keys are equal strings; an id never changes
/// meaning within the process, so a map keyed by ids never confuses two
/// directories whatever is rebuilt around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct DirId(u32);

/// The process's interned keys: the id of each key and the key of each id.
#[derive(Default)]
struct Interner {
    ids: HashMap<Arc<str>, DirId, foldhash::fast::RandomState>,
    keys: Vec<Arc<str>>,
}

fn interner() -> &'static Mutex<Interner> {
    static INTERNER: OnceLock<Mutex<Interner>> = OnceLock::new();
    INTERNER.get_or_init(Mutex::default)
}

impl DirId {
    /// The id of the directory key `rel`, given on its first use. The
    /// interner only grows: it holds each distinct key once (a few bytes
    /// per directory the process ever knew), never a path per session.
    /// `None` once the process has interned `u32::MAX` keys: the caller
    /// then takes the path it would take without an id.
    pub(crate) fn of(rel: &str) -> Option<Self> {
        // A poisoned lock holds a consistent map: every update below is
        // one insert after a push.
        let mut interner = interner().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&id) = interner.ids.get(rel) {
            return Some(id);
        }
        let id = Self(u32::try_from(interner.keys.len()).ok()?);
        let key: Arc<str> = Arc::from(rel);
        interner.keys.push(Arc::clone(&key));
        interner.ids.insert(key, id);
        Some(id)
    }

    /// The directory key this id was given for (made at the edge: for a
    /// log line or a test, never on a touch's way).
    #[cfg(test)]
    pub(crate) fn key(self) -> Arc<str> {
        let interner = interner().lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&interner.keys[self.0 as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Equal keys get equal ids, distinct keys distinct ones, and each
        /// id gives its key back (decision 0093).
        #[test]
        fn ids_are_equal_exactly_when_keys_are(
            a in "[a-c]{1,2}(/[a-c]{1,2}){0,2}|\\.",
            b in "[a-c]{1,2}(/[a-c]{1,2}){0,2}|\\.",
        ) {
            let (ia, ib) = (DirId::of(&a).unwrap(), DirId::of(&b).unwrap());
            prop_assert_eq!(ia == ib, a == b);
            prop_assert_eq!(DirId::of(&a), Some(ia));
            prop_assert_eq!(&*ia.key(), a.as_str());
            prop_assert_eq!(&*ib.key(), b.as_str());
        }
    }
}
