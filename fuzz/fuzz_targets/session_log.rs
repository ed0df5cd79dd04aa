//! The session-log reader over arbitrary bytes (R-LOG-2): never panics, and
//! with a valid header in front it always reads, keeping whole lines only.
#![no_main]

use dsh_session_log::parse::read_log;
use libfuzzer_sys::fuzz_target;

const HEADER: &[u8] =
    b"{\"schema\":1,\"id\":\"s\",\"created_at\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n";

fuzz_target!(|data: &[u8]| {
    let _ = read_log(data);
    let mut bytes = HEADER.to_vec();
    bytes.extend_from_slice(data);
    let parsed = read_log(&bytes).expect("a valid header always reads");
    let whole = usize::try_from(parsed.valid_len).expect("fits");
    assert!(whole <= bytes.len());
    assert_eq!(bytes[..whole].last(), Some(&b'\n'));
    for pair in parsed.events.windows(2) {
        assert!(pair[0].seq < pair[1].seq);
    }
    let _ = parsed.surface();
});
