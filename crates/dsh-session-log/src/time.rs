//! RFC 3339 timestamps (through `humantime`) and session ids.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Formats a time as RFC 3339 in UTC with milliseconds, e.g.
/// `2023-11-14T22:13:20.000Z` (`humantime`'s formatter). Times before 1970
/// are clamped to the epoch, times after 9999 to its last millisecond: the
/// format has four year digits and this never fails.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
/// assert_eq!(dsh_session_log::rfc3339_utc(t), "2023-11-14T22:13:20.000Z");
/// ```
pub fn rfc3339_utc(time: SystemTime) -> String {
    // 9999-12-31T23:59:59.999Z, the last instant with four year digits.
    let last = UNIX_EPOCH + Duration::from_millis(253_402_300_799_999);
    humantime::format_rfc3339_millis(time.clamp(UNIX_EPOCH, last)).to_string()
}

/// A new session id: `<nanoseconds since epoch, 16 hex>-<pid, 8 hex>-<salt, 8 hex>`.
///
/// Ids created later sort later (until 2554); the pid and a per-process salt
/// (a randomly keyed std hash of a counter) keep ids from concurrent processes
/// and from one process apart. Ids only contain `[0-9a-f-]`, so they are valid
/// directory names ([`crate::session_dir`]).
///
/// ```
/// let a = dsh_session_log::new_session_id();
/// let b = dsh_session_log::new_session_id();
/// assert_ne!(a, b);
/// assert_eq!(a.len(), 16 + 1 + 8 + 1 + 8);
/// ```
pub fn new_session_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_nanos();
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(nanos);
    // Truncations are intended: the low bits are the ones that vary.
    format!(
        "{:016x}-{:08x}-{:08x}",
        nanos as u64,
        std::process::id(),
        hasher.finish() as u32
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    // Expected values checked independently with `date -u -d @SECS`.
    #[rstest]
    #[case(0, "1970-01-01T00:00:00.000Z")]
    #[case(951_782_400, "2000-02-29T00:00:00.000Z")]
    #[case(951_868_799, "2000-02-29T23:59:59.000Z")]
    #[case(1_700_000_000, "2023-11-14T22:13:20.000Z")]
    #[case(4_107_542_400, "2100-03-01T00:00:00.000Z")]
    #[case(1_709_164_800, "2024-02-29T00:00:00.000Z")]
    #[case(1_735_689_599, "2024-12-31T23:59:59.000Z")]
    fn formats_known_instants(#[case] secs: u64, #[case] expected: &str) {
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs)),
            expected
        );
    }

    #[test]
    fn keeps_milliseconds_and_clamps_pre_epoch() {
        let t = UNIX_EPOCH + Duration::from_millis(1_500);
        assert_eq!(rfc3339_utc(t), "1970-01-01T00:00:01.500Z");
        let before = UNIX_EPOCH - Duration::from_secs(10);
        assert_eq!(rfc3339_utc(before), "1970-01-01T00:00:00.000Z");
        // Milliseconds are truncated, not rounded.
        let t = UNIX_EPOCH + Duration::from_nanos(1_999_999_999);
        assert_eq!(rfc3339_utc(t), "1970-01-01T00:00:01.999Z");
    }

    #[rstest]
    #[case::last_second(253_402_300_799, "9999-12-31T23:59:59.000Z")]
    #[case::year_10000(253_402_300_800, "9999-12-31T23:59:59.999Z")]
    #[case::far_future(400_000_000_000, "9999-12-31T23:59:59.999Z")]
    fn clamps_past_year_9999_instead_of_failing(#[case] secs: u64, #[case] expected: &str) {
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs)),
            expected
        );
    }

    #[test]
    fn ids_are_distinct_and_directory_safe() {
        let ids: Vec<String> = (0..200).map(|_| new_session_id()).collect();
        let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        for id in &ids {
            assert!(
                id.chars().all(|c| c.is_ascii_hexdigit() || c == '-'),
                "{id}"
            );
            assert!(crate::session_dir("/s".into(), id).is_ok());
        }
    }
}
