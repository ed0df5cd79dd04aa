//! Where the blocking filesystem work runs: on tokio's blocking pool, or
//! inline on the polling thread (decision 0014), returning as soon as the
//! token fires either way it can (R-DISC-8).

use std::cell::Cell;
use std::future::Future;

use tokio_util::sync::CancellationToken;

use crate::provider::Cancelled;

thread_local! {
    /// Set on the pool thread that runs an [`offload`]ed job: the job is
    /// off the executor already, so its calls run where it runs.
    static OFFLOADED: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn check(cancel: &CancellationToken) -> Result<(), Cancelled> {
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
pub(crate) async fn run_blocking<T, F>(
    inline: bool,
    cancel: &CancellationToken,
    work: F,
) -> Result<T, Cancelled>
where
    T: Send + 'static,
    F: FnOnce(&CancellationToken) -> Result<T, Cancelled> + Send + 'static,
{
    check(cancel)?;
    if inline || OFFLOADED.with(Cell::get) {
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

/// Clears [`OFFLOADED`] when the job ends, however it ends: pool threads
/// are reused.
struct Offloaded;

impl Offloaded {
    fn enter() -> Self {
        OFFLOADED.with(|o| o.set(true));
        Self
    }
}

impl Drop for Offloaded {
    fn drop(&mut self) {
        OFFLOADED.with(|o| o.set(false));
    }
}

/// Runs `job` on one thread of tokio's blocking pool, where every call of
/// a pooled provider runs inline instead of being handed off again; returns
/// as soon as `cancel` fires, leaving the job to notice the token at its
/// next check (R-DISC-8). A job of several provider calls then costs one
/// hand-off and one wake-up in all (decision 0092).
///
/// # Errors
///
/// [`Cancelled`] when `cancel` fires, or as the job returns it.
///
/// # Panics
///
/// When called outside a tokio runtime; a panic of the job resumes here.
pub async fn offload<T, F, Fut>(cancel: &CancellationToken, job: F) -> Result<T, Cancelled>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Cancelled>>,
{
    if OFFLOADED.with(Cell::get) {
        // Already off the executor: a nested job runs where it is, as its
        // provider calls do (a second `block_on` here would panic).
        check(cancel)?;
        return job().await;
    }
    let handle = tokio::runtime::Handle::current();
    run_blocking(false, cancel, move |_| {
        let _offloaded = Offloaded::enter();
        handle.block_on(job())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job offloaded from inside an offloaded job runs there, on the same
    /// pool thread, and its result comes back (no nested `block_on`).
    #[tokio::test(flavor = "current_thread")]
    async fn a_nested_offload_runs_where_it_is() {
        let cancel = CancellationToken::new();
        let inner_cancel = cancel.clone();
        let (outer, inner) = offload(&cancel, move || async move {
            let outer = std::thread::current().id();
            let inner =
                offload(&inner_cancel, || async { Ok(std::thread::current().id()) }).await?;
            Ok((outer, inner))
        })
        .await
        .expect("both jobs finish");
        assert_eq!(outer, inner);
        assert_ne!(
            outer,
            std::thread::current().id(),
            "the outer job left this thread"
        );
        assert!(!OFFLOADED.with(Cell::get), "this thread was never marked");
    }
}
