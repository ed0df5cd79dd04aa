//! The conformance scenario loader over arbitrary text (R-QUAL-1: no panic
//! on any scenario YAML).
#![no_main]

use std::path::Path;

use dsh_instructions_conformance::schema::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Scenario::parse(Path::new("fuzz.yaml"), text);
    }
});
