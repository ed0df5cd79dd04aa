//! What a test puts into the in-memory filesystem and reads back: nodes
//! and their kinds ([`MemNode`](crate::memory::MemNode), [`MemKind`](crate::memory::MemKind)), the operations faults and
//! gates apply to ([`FsOp`](crate::memory::FsOp)) with their injected errors ([`Errno`],
//! [`Fault`](crate::memory::Fault)), and the operation counters ([`OpCounters`](crate::memory::OpCounters)). Separate
//! because it is the provider's public vocabulary, apart from how the
//! provider runs an operation.

use std::fmt;
use std::str::FromStr;

#[cfg(doc)]
use super::MemoryProvider;
use crate::provider::Unavailable;

/// Operation counts since creation or the last [`MemoryProvider::reset_counters`](crate::memory::MemoryProvider::reset_counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounters {
    /// Files opened for content: one per `read_text` call that found a regular
    /// file within the size cap by metadata (whatever the number of chunks).
    pub reads: u64,
    /// One per probe (resolve + stat), per name in `probe_many`, per marker
    /// check.
    pub probes: u64,
    /// Raw bytes consumed by reads.
    pub bytes_read: u64,
}

/// What a path holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A regular file with these bytes.
    File(Vec<u8>),
    /// A directory.
    Dir,
    /// A symbolic link with this target text (relative or absolute).
    Link(String),
    /// A named pipe: always absent, never opened.
    Fifo,
}

/// One name table per enum, so `as_str`, `Display` and `FromStr` cannot
/// drift apart.
macro_rules! named {
    ($ty:ident, $what:literal, $doc:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            const ALL: &'static [Self] = &[$(Self::$variant),+];

            #[doc = $doc]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = crate::DiscoveryError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| crate::DiscoveryError::UnknownName {
                        what: $what,
                        value: s.to_owned(),
                    })
            }
        }
    };
}

/// A filesystem operation, the unit faults and gates apply to.
///
/// ```
/// use dsh_instructions_discovery::memory::FsOp;
/// assert_eq!(FsOp::Stat.as_str(), "stat");
/// assert_eq!("stat".parse::<FsOp>().ok(), Some(FsOp::Stat));
/// assert!("open".parse::<FsOp>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsOp {
    /// Following the path and its links to a target.
    Resolve,
    /// Reading the target's metadata (also the root-marker check).
    Stat,
    /// Reading the target's content.
    Read,
}

named!(FsOp, "filesystem operation", "The name used by the conformance format.", {
    Resolve => "resolve",
    Stat => "stat",
    Read => "read",
});

/// An injectable error.
///
/// ```
/// use dsh_instructions_discovery::memory::Errno;
/// assert_eq!("EACCES".parse::<Errno>().ok(), Some(Errno::Eacces));
/// assert_eq!(Errno::Eio.as_str(), "EIO");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Errno {
    /// Permission denied → [`Unavailable::PermissionDenied`](crate::provider::Unavailable::PermissionDenied).
    Eacces,
    /// I/O error → [`Unavailable::Io`](crate::provider::Unavailable::Io).
    Eio,
    /// Too many symlink levels → [`Unavailable::Loop`](crate::provider::Unavailable::Loop).
    Eloop,
    /// Timed out → [`Unavailable::TimedOut`](crate::provider::Unavailable::TimedOut).
    Etimedout,
}

named!(Errno, "fault error", "The errno name used by the conformance format.", {
    Eacces => "EACCES",
    Eio => "EIO",
    Eloop => "ELOOP",
    Etimedout => "ETIMEDOUT",
});

impl Errno {
    /// The classification a real error of this kind gets (R-DISC-4).
    ///
    /// ```
    /// use dsh_instructions_discovery::{memory::Errno, provider::Unavailable};
    /// assert_eq!(Errno::Eloop.unavailable(), Unavailable::Loop);
    /// ```
    pub fn unavailable(self) -> Unavailable {
        match self {
            Self::Eacces => Unavailable::PermissionDenied,
            Self::Eio => Unavailable::Io("input/output error (injected)".to_owned()),
            Self::Eloop => Unavailable::Loop,
            Self::Etimedout => Unavailable::TimedOut,
        }
    }
}

/// An operation on a path that fails with an error until the path is written
/// again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The failing operation.
    pub op: FsOp,
    /// The error it fails with.
    pub error: Errno,
}

/// A node to [`MemoryProvider::insert`](crate::memory::MemoryProvider::insert), with its injections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemNode {
    /// What the path holds.
    pub kind: MemKind,
    /// An operation that fails on this path.
    pub fault: Option<Fault>,
    /// Size reported by `stat` instead of the real one.
    pub stale_size: Option<u64>,
    /// The first operation of this kind on this path blocks until released or
    /// cancelled.
    pub gate: Option<FsOp>,
    /// Keep the file's previous version although its content changes.
    pub keep_version: bool,
}

impl MemNode {
    fn new(kind: MemKind) -> Self {
        Self {
            kind,
            fault: None,
            stale_size: None,
            gate: None,
            keep_version: false,
        }
    }

    /// A regular file with these bytes.
    pub fn file(bytes: impl Into<Vec<u8>>) -> Self {
        Self::new(MemKind::File(bytes.into()))
    }

    /// A directory (inserting one where a directory exists keeps its content).
    pub fn dir() -> Self {
        Self::new(MemKind::Dir)
    }

    /// A symbolic link with this target text.
    pub fn link(target: impl Into<String>) -> Self {
        Self::new(MemKind::Link(target.into()))
    }

    /// A named pipe.
    pub fn fifo() -> Self {
        Self::new(MemKind::Fifo)
    }

    /// Makes `op` on this path fail with `error`.
    pub fn with_fault(self, op: FsOp, error: Errno) -> Self {
        Self {
            fault: Some(Fault { op, error }),
            ..self
        }
    }

    /// Makes `stat` report `size` instead of the real size.
    pub fn with_stale_size(self, size: u64) -> Self {
        Self {
            stale_size: Some(size),
            ..self
        }
    }

    /// Blocks the first `op` on this path until released or cancelled.
    pub fn with_gate(self, op: FsOp) -> Self {
        Self {
            gate: Some(op),
            ..self
        }
    }

    /// Keeps the previous version of the file at this path on insert.
    pub fn keeping_version(self) -> Self {
        Self {
            keep_version: true,
            ..self
        }
    }
}
