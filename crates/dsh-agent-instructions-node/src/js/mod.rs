//! The Node API: every `#[napi]` item of the binding, and nothing else.
//!
//! napi-derive's macros expand to `unsafe` FFI glue, so unsafe code is
//! allowed in this module and its children only; none is written here by
//! hand (decision 0084, checked by `every_crate_root_forbids_unsafe_code`).
//! What a call does lives in `ops.rs`; this module converts values, turns a
//! call into a Promise settled on the JavaScript thread, and wires an
//! `AbortSignal` to the call's cancellation token.
#![allow(unsafe_code)]
// The `#[napi]` items are public to JavaScript, not to Rust (this is a
// cdylib): `pub` is what napi-derive exports.
#![allow(unreachable_pub)]

mod instance;
mod promise;
mod session;
mod types;
