//! One-line descriptions used by `session`; they live in the
//! state crate so the conformance transcript (`dsh-instructions-replay`) uses the same ones.

pub(crate) use dsh_instructions_state::describe::{source_summary, tool_outcome};
