#![doc = include_str!("../README.md")]
// napi-derive's macros expand to unsafe FFI glue: unsafe code is denied
// here and allowed only in `js`, where the `#[napi]` items are and nothing
// unsafe is written by hand (decision 0084).
#![deny(unsafe_code)]
// JavaScript is the only caller of the `#[napi]` items, and a test build
// registers none of them with Node: what only they use is unused there.
#![cfg_attr(test, allow(dead_code))]

mod error;
mod hosted;
mod js;
mod ops;
mod queue;
