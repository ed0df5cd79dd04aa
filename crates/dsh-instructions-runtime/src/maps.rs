//! Hashed maps the passes share, keyed by what a pass looks up for every
//! known directory on every composition. Seeded foldhash, not the standard
//! SipHash, which showed in touch-sequence profiles (issue 19 item 8).

use std::collections::HashMap;

use dsh_instructions_discovery::provider::FileIdentity;

/// A map keyed by file identity (identity dedup, own sections).
pub(crate) type IdentityMap<V> = HashMap<FileIdentity, V, foldhash::fast::RandomState>;
