//! Errors of mounting the adapter.

/// Why [`Instance::mount`](crate::Instance::mount) could not mount.
///
/// Nothing the session or the filesystem does makes a mount fail (R-RT-9):
/// these are embedding mistakes, reported as values instead of panics so a
/// product can say what went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MountError {
    /// `Instance::mount` was called outside a Tokio runtime. The instance
    /// runs its serial lane (R-RT-6) as a task on the current runtime, so
    /// mount from inside one (e.g. within `Runtime::block_on` or a
    /// `#[tokio::main]` function).
    #[error("the instructions adapter must be mounted inside a Tokio runtime")]
    NoRuntime,
}
