//! The errors at the runner's seams: what a [`crate::runner::Driver`] call
//! can fail with, and what a step can fail with around it (a timeout, the
//! filesystem fixture). A scenario that hits one fails with its message.

use std::path::PathBuf;

use dsh_instructions_runtime::RuntimeError;

/// Why a driver call failed.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The mount entry refused the scenario's mount; the message says
    /// which part (`config: …`, `home: …`) as the scenarios' expectations
    /// read it.
    #[error("{}", open_message(.0))]
    Open(#[from] RuntimeError),
    /// A step other than the mount ran before the mount.
    #[error("driver used before mount")]
    NotMounted,
}

fn open_message(e: &RuntimeError) -> String {
    match e {
        RuntimeError::Config(e) => format!("config: {e}"),
        RuntimeError::Home(e) => format!("home: {e}"),
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
    /// The filesystem fixture could not apply a `write`, `remove`,
    /// `release` or `blocked` step.
    #[error(transparent)]
    Fixture(#[from] FixtureError),
}

/// Why a filesystem fixture ([`crate::fsmodel::FsFixture`]) could not set
/// itself up or apply a change.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// A filesystem call of the disk fixture failed.
    #[error("cannot {what}: {source}")]
    Io {
        /// What the fixture was doing (`write /work/a.md`, …).
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The disk fixture's canonical temporary directory is not UTF-8.
    #[error("temporary directory is not UTF-8: {}", .0.display())]
    NotUtf8(PathBuf),
    /// A `release` step on a provider without gates.
    #[error("release {path}: gates exist only on the memory provider")]
    NoGates {
        /// The scenario path.
        path: String,
    },
    /// A `blocked` step found no operation waiting at the path's gate.
    #[error("no operation on {path} is blocked on its gate: the gate was never reached")]
    NotBlocked {
        /// The scenario path.
        path: String,
    },
}

impl FixtureError {
    /// [`FixtureError::Io`] of `source` while doing `what`.
    pub(crate) fn io(what: String, source: std::io::Error) -> Self {
        Self::Io { what, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_part_that_failed() {
        let e = DriverError::Open(RuntimeError::RelativeCwd { path: "x".into() });
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

    /// The fixture's errors read as its `String` messages did before they
    /// were typed, and a step failing on one shows the same text.
    #[test]
    fn fixture_messages_are_unchanged() {
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        let io = FixtureError::io("write /w/a.md".into(), gone);
        assert!(io.to_string().starts_with("cannot write /w/a.md: "));
        assert!(std::error::Error::source(&io).is_some());
        let release = FixtureError::NoGates {
            path: "/w/x".into(),
        };
        assert_eq!(
            StepError::from(release).to_string(),
            "release /w/x: gates exist only on the memory provider"
        );
        assert_eq!(
            FixtureError::NotBlocked {
                path: "/w/x".into()
            }
            .to_string(),
            "no operation on /w/x is blocked on its gate: the gate was never reached"
        );
    }
}
