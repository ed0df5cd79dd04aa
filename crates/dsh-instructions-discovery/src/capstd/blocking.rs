//! Where the blocking filesystem work runs: on tokio's blocking pool, or
//! inline on the polling thread (decision 0014), returning as soon as the
//! token fires either way it can (R-DISC-8).

use tokio_util::sync::CancellationToken;

use crate::provider::Cancelled;

pub(super) fn check(cancel: &CancellationToken) -> Result<(), Cancelled> {
    if cancel.is_cancelled() {
        Err(Cancelled)
    } else {
        Ok(())
    }
}

/// Runs blocking filesystem work on the blocking pool; returns as soon as the
/// token fires, leaving the worker to notice the token at its next check.
/// `inline`: on the calling thread instead (the work still checks the token
/// at its own checkpoints, but a stuck syscall is not abandoned).
pub(super) async fn run_blocking<T, F>(
    inline: bool,
    cancel: &CancellationToken,
    work: F,
) -> Result<T, Cancelled>
where
    T: Send + 'static,
    F: FnOnce(&CancellationToken) -> Result<T, Cancelled> + Send + 'static,
{
    check(cancel)?;
    if inline {
        return work(cancel);
    }
    let token = cancel.clone();
    let handle = tokio::task::spawn_blocking(move || work(&token));
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Cancelled),
        joined = handle => match joined {
            Ok(result) => result,
            // A panic in the worker is a bug: surface it where it would have
            // surfaced had the code run inline.
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // The runtime is shutting down.
            Err(_) => Err(Cancelled),
        },
    }
}
