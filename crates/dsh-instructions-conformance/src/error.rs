//! The errors at the runner's seams: what a [`crate::runner::Driver`] call
//! can fail with, and what a step can fail with around it (a timeout, the
//! filesystem fixture). A scenario that hits one fails with its message.

use dsh_instructions_runtime::{MountError, OpenError};

/// Why a driver call failed.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// `open_mount` refused the scenario's mount; the message says which
    /// part (`config: …`, `home: …`) as the scenarios' expectations read it.
    #[error("{}", open_message(.0))]
    Open(#[from] OpenError),
    /// The runtime refused to mount the instance.
    #[error(transparent)]
    Mount(#[from] MountError),
    /// A step other than the mount ran before the mount.
    #[error("driver used before mount")]
    NotMounted,
}

fn open_message(e: &OpenError) -> String {
    match e {
        OpenError::Config(e) => format!("config: {e}"),
        OpenError::Home(e) => format!("home: {e}"),
        other => other.to_string(),
    }
}

/// Why a step failed before its expectation was checked.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The driver call failed.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// The driver call did not finish in time (a gate left closed).
    #[error("{what} did not finish within {secs} s (blocked on a gate?)")]
    Timeout {
        /// The driver call (`pre_step`, `settle`, …).
        what: &'static str,
        /// The limit.
        secs: u64,
    },
    /// The filesystem fixture could not apply a `write`, `remove` or
    /// `release` step; the fixture's message.
    #[error("{0}")]
    Fixture(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_part_that_failed() {
        let e = DriverError::Open(OpenError::RelativeCwd("x".into()));
        assert_eq!(e.to_string(), "session cwd x is not absolute");
        let t = StepError::Timeout {
            what: "settle",
            secs: 5,
        };
        assert_eq!(
            t.to_string(),
            "settle did not finish within 5 s (blocked on a gate?)"
        );
        assert_eq!(
            StepError::from(DriverError::NotMounted).to_string(),
            "driver used before mount"
        );
    }
}
