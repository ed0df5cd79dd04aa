//! The crate's one error type: a scenario file that does not read, and
//! what a step can fail with at the runner's seams — a driver call, a
//! timeout, the filesystem fixture. A scenario that hits one fails with
//! its message; each names the file, step, key, call or path it concerns.

use std::path::PathBuf;

use dsh_instructions_runtime::RuntimeError;

use crate::schema::Place;

/// Why a scenario could not be read, or a step failed before its
/// expectation was checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConformanceError {
    /// A scenario file that could not be read or parsed. Never a skip: the
    /// runner counts it as a failure.
    #[error("{}", render(file, at, message))]
    Scenario {
        /// The file.
        file: PathBuf,
        /// Where in it, as far as known.
        at: Box<Place>,
        /// What is wrong.
        message: String,
    },
    /// The mount entry refused the scenario's mount; the message says
    /// which part (`config: …`, `home: …`) as the scenarios' expectations
    /// read it.
    #[error("{}", open_message(.0))]
    Mount(#[from] RuntimeError),
    /// A step other than the mount ran before the mount.
    #[error("driver used before mount")]
    NotMounted,
    /// A driver call did not finish in time (a gate left closed).
    #[error("{what} did not finish within {secs} s (blocked on a gate?)")]
    Timeout {
        /// The driver call (`pre_step`, `settle`, …).
        what: &'static str,
        /// The limit.
        secs: u64,
    },
    /// A filesystem call of the disk fixture failed.
    #[error("cannot {what}: {source}")]
    FixtureIo {
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

fn open_message(e: &RuntimeError) -> String {
    match e {
        RuntimeError::Config(e) => format!("config: {e}"),
        RuntimeError::Home(e) => format!("home: {e}"),
        other => other.to_string(),
    }
}

/// `file[:line:col][: step N (action)][: key `k`]: message`.
fn render(file: &std::path::Path, at: &Place, message: &str) -> String {
    let mut out = file.display().to_string();
    if let Some((l, c)) = at.position {
        out.push_str(&format!(":{l}:{c}"));
    }
    if let Some(s) = &at.step {
        out.push_str(&format!(": step {} ({})", s.index, s.action));
    }
    if let Some(k) = &at.key {
        out.push_str(&format!(": key `{k}`"));
    }
    out.push_str(": ");
    out.push_str(message);
    out
}

impl ConformanceError {
    /// [`ConformanceError::FixtureIo`] of `source` while doing `what`.
    pub(crate) fn io(what: String, source: std::io::Error) -> Self {
        Self::FixtureIo { what, source }
    }

    /// A scenario file's error of `message` alone (no step, key or
    /// position).
    pub(crate) fn scenario(file: PathBuf, message: String) -> Self {
        Self::Scenario {
            file,
            at: Box::default(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_part_that_failed() {
        let e = ConformanceError::Mount(RuntimeError::RelativeCwd { path: "x".into() });
        assert_eq!(e.to_string(), "session cwd x is not absolute");
        let t = ConformanceError::Timeout {
            what: "settle",
            secs: 5,
        };
        assert_eq!(
            t.to_string(),
            "settle did not finish within 5 s (blocked on a gate?)"
        );
        assert_eq!(
            ConformanceError::NotMounted.to_string(),
            "driver used before mount"
        );
    }

    /// The fixture's errors read as its `String` messages did before they
    /// were typed, and a step failing on one shows the same text.
    #[test]
    fn fixture_messages_are_unchanged() {
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        let io = ConformanceError::io("write /w/a.md".into(), gone);
        assert!(io.to_string().starts_with("cannot write /w/a.md: "));
        assert!(std::error::Error::source(&io).is_some());
        let release = ConformanceError::NoGates {
            path: "/w/x".into(),
        };
        assert_eq!(
            release.to_string(),
            "release /w/x: gates exist only on the memory provider"
        );
        assert_eq!(
            ConformanceError::NotBlocked {
                path: "/w/x".into()
            }
            .to_string(),
            "no operation on /w/x is blocked on its gate: the gate was never reached"
        );
    }
}
