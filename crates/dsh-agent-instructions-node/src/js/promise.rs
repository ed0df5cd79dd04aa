//! A call as a Promise: its work runs on the binding's Tokio runtime, off
//! the JavaScript thread; it settles on the JavaScript thread, where a
//! [`Failure`] becomes an `Error` with its `code`, `path` and `field`
//! (R-NODE-2, R-NODE-3).
//!
//! An `AbortSignal` cancels the call's token from its `abort` listener. The
//! listener is removed when the call settles, so a long-lived signal given
//! to many calls gathers no listeners.

use std::future::Future;
use std::sync::Arc;

use dsh_agent_instructions::CancellationToken;
use napi::bindgen_prelude::{
    FnArgs, Function, JsObjectValue, JsValue, Object, ObjectRef, PromiseRaw, ToNapiValue,
};
use napi::{Env, Status, Unknown, ValueType};

use crate::error::{Code, Failure};
use crate::queue::Serial;

/// `signal.addEventListener` / `removeEventListener`: `(type, listener)`.
type ListenerMethod<'env, L> = Function<'env, FnArgs<(&'static str, L)>, Unknown<'env>>;

/// The listener of one call on its signal: a JavaScript object holding the
/// signal and the listener function, kept alive by a reference until the
/// call settles.
struct Listening(ObjectRef<false>);

/// A call's cancellation, wired to its signal when it has one.
pub(super) struct Abort {
    pub(super) token: CancellationToken,
    listening: Option<Listening>,
    /// A `signal` argument that is not one: the call rejects with it, as
    /// every failure of a call does, instead of throwing.
    invalid: Option<Failure>,
}

impl Abort {
    /// Reads `signal`: an already aborted one cancels the token now; a live
    /// one gets an `abort` listener that cancels it later.
    pub(super) fn new(env: &Env, signal: Option<Unknown<'_>>) -> napi::Result<Self> {
        let token = CancellationToken::new();
        let Some(signal) = signal else {
            return Ok(Self {
                token,
                listening: None,
                invalid: None,
            });
        };
        if matches!(signal.get_type()?, ValueType::Undefined | ValueType::Null) {
            return Ok(Self {
                token,
                listening: None,
                invalid: None,
            });
        }
        let not_a_signal = |token| {
            Ok(Self {
                token,
                listening: None,
                invalid: Some(
                    Failure::new(
                        Code::InvalidArgument,
                        "signal must be an AbortSignal (or undefined)",
                    )
                    .with_field("signal"),
                ),
            })
        };
        if signal.get_type()? != ValueType::Object {
            return not_a_signal(token);
        }
        let signal = signal.coerce_to_object()?;
        let aborted: Unknown<'_> = signal.get_named_property("aborted")?;
        if aborted.get_type()? != ValueType::Boolean {
            return not_a_signal(token);
        }
        let mut holder = Object::new(env)?;
        holder.set_named_property("signal", signal)?;
        if aborted.coerce_to_bool()? {
            // Aborted before the call: no listener, but its reason is the
            // rejection's cause all the same.
            token.cancel();
            return Ok(Self {
                token,
                listening: Some(Listening(holder.create_ref::<false>()?)),
                invalid: None,
            });
        }
        let cancel = token.clone();
        let listener = env.create_function_from_closure::<(), (), _>("onDshAbort", move |_| {
            cancel.cancel();
            Ok(())
        })?;
        let add: ListenerMethod<'_, Function<'_, (), ()>> =
            signal.get_named_property("addEventListener")?;
        add.apply(signal, FnArgs::from(("abort", listener)))?;
        holder.set_named_property("listener", listener)?;
        Ok(Self {
            token,
            listening: Some(Listening(holder.create_ref::<false>()?)),
            invalid: None,
        })
    }

    /// Removes the listener; returns the signal's `reason` when it fired.
    fn finish<'env>(self, env: &'env Env) -> napi::Result<Option<Unknown<'env>>> {
        let Some(Listening(holder_ref)) = self.listening else {
            return Ok(None);
        };
        let holder = holder_ref.get_value(env)?;
        let signal: Object<'_> = holder.get_named_property("signal")?;
        let listener: Unknown<'_> = holder.get_named_property("listener")?;
        if listener.get_type()? == ValueType::Function {
            let remove: ListenerMethod<'_, Unknown<'_>> =
                signal.get_named_property("removeEventListener")?;
            remove.apply(signal, FnArgs::from(("abort", listener)))?;
        }
        let reason: Unknown<'_> = signal.get_named_property("reason")?;
        holder_ref.unref(env)?;
        Ok(self.token.is_cancelled().then_some(reason))
    }
}

/// A call queued on `line` (an [`Instance`](super::instance::Instance)'s
/// or a [`Session`](super::session::Session)'s): it takes its place in
/// line now, on the JavaScript thread, runs `job` when its turn comes and
/// settles with `to_js` of its result.
pub(super) fn queued<'env, S, T, V, Fut>(
    line: &Arc<Serial<S>>,
    env: &'env Env,
    op: &'static str,
    signal: Option<Unknown<'_>>,
    job: impl FnOnce(Arc<S>, CancellationToken) -> Fut + Send + 'static,
    to_js: impl FnOnce(&'env Env, T) -> napi::Result<V> + 'static,
) -> napi::Result<PromiseRaw<'env, V>>
where
    S: Send + Sync + 'static,
    T: Send + 'static,
    V: ToNapiValue,
    Fut: Future<Output = Result<T, Failure>> + Send + 'static,
{
    let abort = Abort::new(env, signal)?;
    let line = Arc::clone(line);
    settle(env, abort, |cancel| line.submit(op, cancel, job), to_js)
}

/// Runs `work` off the JavaScript thread and settles the returned Promise
/// with `to_js` of its value, or the `Error` of its failure.
pub(super) fn settle<'env, T, V, W, Fut>(
    env: &'env Env,
    mut abort: Abort,
    work: W,
    to_js: impl FnOnce(&'env Env, T) -> napi::Result<V> + 'static,
) -> napi::Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    W: FnOnce(CancellationToken) -> Fut,
    Fut: Future<Output = Result<T, Failure>> + Send + 'static,
{
    let run: std::pin::Pin<Box<dyn Future<Output = Result<T, Failure>> + Send>> =
        match abort.invalid.take() {
            Some(failure) => Box::pin(async move { Err(failure) }),
            None => Box::pin(work(abort.token.clone())),
        };
    env.spawn_future_with_callback(async move { Ok(run.await) }, move |env, result| {
        let reason = abort.finish(env)?;
        match result {
            Ok(value) => to_js(env, value),
            Err(failure) => Err(js_error(env, &failure, reason)?),
        }
    })
}

/// The `Error` of a failure: `code`, and `path` / `field` when it names
/// them; an abort is Node's `AbortError` with the signal's reason as its
/// `cause`.
pub(super) fn js_error(
    env: &Env,
    failure: &Failure,
    cause: Option<Unknown<'_>>,
) -> napi::Result<napi::Error> {
    let mut error = env.create_error(napi::Error::new(Status::GenericFailure, &failure.message))?;
    error.set_named_property("code", failure.code.as_str())?;
    if failure.code == Code::Aborted {
        error.set_named_property("name", "AbortError")?;
        if let Some(cause) = cause {
            error.set_named_property("cause", cause)?;
        }
    }
    if let Some(path) = &failure.path {
        error.set_named_property("path", path.as_str())?;
    }
    if let Some(field) = &failure.field {
        error.set_named_property("field", field.as_str())?;
    }
    Ok(napi::Error::from(error.to_unknown()))
}
