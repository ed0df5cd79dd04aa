//! Helpers shared by the runtime's integration tests.

use dsh_instructions_state::Config;

/// A validated configuration from its JSON input (the one way a `Config`
/// is built, `ConfigInput::resolve`).
pub(crate) fn config_of(v: serde_json::Value) -> Config {
    serde_json::from_value::<dsh_instructions_state::ConfigInput>(v)
        .expect("config input")
        .resolve()
        .expect("valid config")
        .config
}
