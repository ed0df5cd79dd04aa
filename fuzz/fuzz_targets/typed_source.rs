//! The typed-source parser over arbitrary JSON (R-STATE-1): never panics,
//! and what it accepts survives a write/read round trip.
#![no_main]

use dsh_instructions_state::TypedSource;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Some(source) = TypedSource::from_json(&value) {
        let written = source.to_json();
        assert_eq!(TypedSource::from_json(&written), Some(source));
    }
});
