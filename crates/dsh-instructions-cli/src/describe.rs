//! One-line descriptions shared by `session` and `replay`; they live in the
//! state crate so the conformance transcript (`replay`) uses the same ones.

pub(crate) use dsh_instructions_state::describe::{source_summary, tool_outcome};
