//! One session's line of calls (R-NODE-4, R-NODE-2, R-NODE-3): calls are
//! served one at a time in the order they arrived, each can be aborted
//! while it waits or while it runs, and a panic in one closes the session
//! instead of the host process.
//!
//! The place in line is taken synchronously, on the JavaScript thread, when
//! the call is made ([`Serial::submit`]), so arrival order is call order
//! whatever the worker threads do. Each call's work runs as a task of its
//! own, so a panic unwinds that task only and comes back as a `JoinError`.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_agent_instructions::CancellationToken;
use tokio::sync::oneshot;

use crate::error::{Code, Failure};

/// A value (the session) behind a line of calls.
#[derive(Debug)]
pub(crate) struct Serial<S> {
    state: Mutex<State<S>>,
}

#[derive(Debug)]
struct State<S> {
    /// Resolves (or errs) when the last call in line is done.
    tail: Option<oneshot::Receiver<()>>,
    /// The value, or why it is gone.
    target: Result<Arc<S>, String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic never happens under this lock (no user code runs under it),
    // but a poisoned lock must not turn into a second panic either.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<S: Send + Sync + 'static> Serial<S> {
    pub(crate) fn new(value: S) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                tail: None,
                target: Ok(Arc::new(value)),
            }),
        })
    }

    /// Why the value is gone, if it is.
    pub(crate) fn closed(&self) -> Option<String> {
        lock(&self.state).target.as_ref().err().cloned()
    }

    /// Takes the value out; later calls fail with [`Code::SessionClosed`]
    /// and `why`. Returns the value when it was still there (the caller
    /// drops it where dropping may block).
    pub(crate) fn close(&self, why: &str) -> Option<Arc<S>> {
        let mut st = lock(&self.state);
        match std::mem::replace(&mut st.target, Err(why.to_owned())) {
            Ok(v) => Some(v),
            Err(earlier) => {
                // The first reason stays.
                st.target = Err(earlier);
                None
            }
        }
    }

    /// Takes the next place in line now and returns the call: it waits for
    /// every call submitted before it, then runs `job` on its own task. An
    /// abort before its turn rejects at once (its place still waits for the
    /// calls ahead, so the next one keeps the order); an abort while it
    /// runs is the job's to honour through `cancel`.
    pub(crate) fn submit<T, F, Fut>(
        self: &Arc<Self>,
        op: &'static str,
        cancel: CancellationToken,
        job: F,
    ) -> impl Future<Output = Result<T, Failure>> + Send + 'static + use<S, T, F, Fut>
    where
        T: Send + 'static,
        F: FnOnce(Arc<S>, CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    {
        let (done, next) = oneshot::channel::<()>();
        let ahead = lock(&self.state).tail.replace(next);
        let this = Arc::clone(self);
        async move {
            if let Some(mut ahead) = ahead {
                tokio::select! {
                    biased;
                    _ = &mut ahead => {}
                    () = cancel.cancelled() => {
                        // Hand the place on only once the calls ahead are
                        // done, so an abort never lets a later call jump.
                        tokio::spawn(async move {
                            let _ = ahead.await;
                            drop(done);
                        });
                        return Err(Failure::aborted());
                    }
                }
            }
            let result = this.run(op, cancel, job).await;
            drop(done);
            result
        }
    }

    async fn run<T, F, Fut>(
        self: Arc<Self>,
        op: &'static str,
        cancel: CancellationToken,
        job: F,
    ) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(Arc<S>, CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    {
        let target = match &lock(&self.state).target {
            Ok(v) => Arc::clone(v),
            Err(why) => return Err(Failure::closed(why)),
        };
        if cancel.is_cancelled() {
            return Err(Failure::aborted());
        }
        match tokio::spawn(job(target, cancel)).await {
            Ok(result) => result,
            Err(e) if e.is_panic() => {
                let what = panic_text(e.into_panic());
                let why = format!("a panic in {op}: {what}");
                // What the panic left half done is not trusted again: the
                // session closes (its log keeps every whole line; a torn
                // tail is repaired by the next open, R-LOG-2).
                if let Some(value) = self.close(&why) {
                    drop_elsewhere(value);
                }
                Err(Failure::new(
                    Code::Panic,
                    format!("{why} (the session is closed; open it again to go on)"),
                ))
            }
            Err(_) => Err(Failure::closed("the runtime is shutting down")),
        }
    }
}

/// Drops `value` on a blocking thread: closing a session writes its side
/// files and releases its lock, which is no work for a worker or the
/// JavaScript thread.
pub(crate) fn drop_elsewhere<S: Send + Sync + 'static>(value: Arc<S>) {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => {
            rt.spawn_blocking(move || drop(value));
        }
        Err(_) => drop(value),
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// Calls submitted in one order finish in that order, even when the
    /// first one takes longest and all of them run on a pool.
    #[test]
    fn calls_are_served_in_arrival_order() {
        rt().block_on(async {
            let serial = Serial::new(Mutex::new(Vec::new()));
            let mut calls = Vec::new();
            for i in 0..8u64 {
                calls.push(tokio::spawn(serial.submit(
                    "push",
                    CancellationToken::new(),
                    move |log: Arc<Mutex<Vec<u64>>>, _| async move {
                        // Later calls are quicker: only the line keeps order.
                        tokio::time::sleep(Duration::from_millis(8 - i)).await;
                        lock(&log).push(i);
                        Ok(i)
                    },
                )));
            }
            for (i, c) in calls.into_iter().enumerate() {
                assert_eq!(c.await.expect("join").expect("ok"), i as u64);
            }
            let seen = serial.close("done").expect("open");
            assert_eq!(*lock(&seen), (0..8).collect::<Vec<_>>());
        });
    }

    /// A call aborted while it waits rejects at once, never runs, and the
    /// call behind it still waits for the one ahead of both.
    #[test]
    fn an_abort_in_line_rejects_without_running_or_reordering() {
        rt().block_on(async {
            let ran = Arc::new(AtomicUsize::new(0));
            let serial = Serial::new(Mutex::new(Vec::<&str>::new()));
            let (release, gate) = oneshot::channel::<()>();
            let first = tokio::spawn(serial.submit(
                "first",
                CancellationToken::new(),
                |log: Arc<Mutex<Vec<&str>>>, _| async move {
                    let _ = gate.await;
                    lock(&log).push("first");
                    Ok(())
                },
            ));
            let abort = CancellationToken::new();
            let r = ran.clone();
            let second = tokio::spawn(serial.submit("second", abort.clone(), move |_, _| {
                r.fetch_add(1, Ordering::SeqCst);
                async { Ok(()) }
            }));
            let third = tokio::spawn(serial.submit(
                "third",
                CancellationToken::new(),
                |log: Arc<Mutex<Vec<&str>>>, _| async move {
                    lock(&log).push("third");
                    Ok(())
                },
            ));
            abort.cancel();
            let e = second.await.expect("join").expect_err("aborted");
            assert_eq!(e.code, Code::Aborted);
            release.send(()).expect("first waits");
            first.await.expect("join").expect("ok");
            third.await.expect("join").expect("ok");
            assert_eq!(ran.load(Ordering::SeqCst), 0, "an aborted call never runs");
            let log = serial.close("done").expect("open");
            assert_eq!(*lock(&log), ["first", "third"]);
        });
    }

    /// An abort while a call runs reaches that call: the job's token fires
    /// (the runtime checks it at every filesystem operation, R-NODE-2), the
    /// call rejects as aborted, and the session serves the next call.
    #[test]
    fn an_abort_while_running_reaches_the_running_job() {
        rt().block_on(async {
            let serial = Serial::new(Mutex::new(Vec::<&str>::new()));
            let (started, is_running) = oneshot::channel::<()>();
            let abort = CancellationToken::new();
            let running = tokio::spawn(serial.submit(
                "walk",
                abort.clone(),
                move |log: Arc<Mutex<Vec<&str>>>, cancel| async move {
                    started.send(()).expect("the test waits");
                    // Work that would never end but for the abort.
                    cancel.cancelled().await;
                    lock(&log).push("saw the abort");
                    Err::<(), _>(Failure::aborted())
                },
            ));
            is_running.await.expect("the job started");
            abort.cancel();
            // A hang guard, not a speed bound: without the abort reaching
            // it, the job would wait forever.
            let e = tokio::time::timeout(Duration::from_secs(120), running)
                .await
                .expect("the abort reached the running job")
                .expect("join")
                .expect_err("aborted");
            assert_eq!(e.code, Code::Aborted);
            let next = serial
                .submit("next", CancellationToken::new(), |log, _| async move {
                    lock(&log).push("next");
                    Ok(())
                })
                .await;
            assert!(next.is_ok(), "the session is still usable: {next:?}");
            let log = serial.close("done").expect("open");
            assert_eq!(*lock(&log), ["saw the abort", "next"]);
        });
    }

    /// A panic comes back as an error of its own code, closes the value,
    /// and every later call says the session is closed and why.
    #[test]
    fn a_panic_closes_the_session_and_names_itself() {
        rt().block_on(async {
            let serial = Serial::new(());
            let e = serial
                .submit("prompt", CancellationToken::new(), |_, _| async {
                    if true {
                        panic!("boom");
                    }
                    Ok(())
                })
                .await
                .expect_err("panicked");
            assert_eq!(e.code, Code::Panic);
            assert!(
                e.message.contains("prompt") && e.message.contains("boom"),
                "{}",
                e.message
            );
            let later = serial
                .submit("touch", CancellationToken::new(), |_, _| async { Ok(()) })
                .await
                .expect_err("closed");
            assert_eq!(later.code, Code::SessionClosed);
            assert!(later.message.contains("boom"), "{}", later.message);
            assert!(serial.closed().is_some());
        });
    }

    #[test]
    fn a_closed_value_keeps_its_first_reason() {
        let serial = Serial::new(1u8);
        assert!(serial.close("closed by the host").is_some());
        assert!(serial.close("again").is_none());
        assert_eq!(serial.closed().as_deref(), Some("closed by the host"));
    }
}
