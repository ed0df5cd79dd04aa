//! The byte budget, one type from the configuration to the render
//! (R-CFG-2, R-REN-4).

use std::fmt;

/// A byte budget: loading disabled, or at most this many bytes per rendered
/// part.
///
/// The configuration's `max_bytes` (R-CFG-2: `<= 0` or non-finite disables
/// loading) is resolved into one of these, and the same value is what the
/// render fills. A disabled budget renders nothing, like a budget too small
/// for any frame.
///
/// ```
/// use dsh_instructions_render::Budget;
/// assert_eq!(Budget::from_signed(-5), Budget::DISABLED);
/// assert_eq!(Budget::from_signed(0).enabled(), None);
/// assert_eq!(Budget::bytes(4096).enabled(), Some(4096));
/// assert_eq!(Budget::bytes(0), Budget::DISABLED);
/// assert_eq!(Budget::bytes(420).to_string(), "420");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Budget(u64);

impl Budget {
    /// No loading at all (R-CFG-2).
    pub const DISABLED: Budget = Budget(0);

    /// At most `n` bytes; `0` is [`Budget::DISABLED`].
    pub const fn bytes(n: u64) -> Self {
        Self(n)
    }

    /// The configuration's signed reading (R-CFG-2): `<= 0` disables.
    pub const fn from_signed(n: i64) -> Self {
        if n <= 0 {
            Self::DISABLED
        } else {
            Self(n as u64)
        }
    }

    /// The byte count, or `None` when loading is disabled.
    pub const fn enabled(self) -> Option<u64> {
        if self.0 == 0 { None } else { Some(self.0) }
    }

    /// Whether loading is disabled.
    pub const fn is_disabled(self) -> bool {
        self.0 == 0
    }

    /// The most bytes a part may hold (`0` when disabled).
    pub const fn max_bytes(self) -> u64 {
        self.0
    }
}

impl From<u64> for Budget {
    fn from(n: u64) -> Self {
        Self(n)
    }
}

impl fmt::Display for Budget {
    /// The byte count (`0` when disabled), as the budget notice and the
    /// CLI show it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
