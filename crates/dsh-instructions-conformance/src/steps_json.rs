//! Each step's observed outcome as one JSON object, for another runner of
//! the same scenarios to agree with step by step (the Node binding's
//! runner, R-NODE-6): what a pre-step returned and, after a step with an
//! `expect`, the settled host state — with the disk fixture's temporary
//! root taken off every string, as the matcher sees them.

use serde_json::{Value, json};

use crate::runner::{DriverFactory, MountSpec, Observer, StepRecord, Trial, Verdict};
use crate::schema::Outcome;

/// An [`Observer`] that keeps one JSON object per step.
#[derive(Debug, Default)]
pub struct StepsJson {
    top: Option<String>,
    /// One object per step, in order: `index` (0-based), `action`, and
    /// where the step has them `step_number`, `outcome`, `batch`,
    /// `entered`, `inbox`, `history`, `visible` and `error`.
    pub steps: Vec<Value>,
}

impl StepsJson {
    /// Takes the fixture's root off every string of `v`, as
    /// `PathMap::unmap_in_text` does for the matcher.
    fn unmap(&self, v: Value) -> Value {
        let Some(top) = &self.top else { return v };
        match v {
            Value::String(s) if s.contains(top.as_str()) => Value::String(
                s.replace(&format!("{top}/"), "/")
                    .replace(top.as_str(), "/"),
            ),
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.unmap(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.into_iter().map(|(k, x)| (k, self.unmap(x))).collect())
            }
            other => other,
        }
    }
}

impl Observer for StepsJson {
    fn mounting(&mut self, spec: &MountSpec) {
        self.top = spec.fs_top.as_ref().map(ToString::to_string);
    }

    fn step(&mut self, r: &StepRecord<'_>) {
        let mut o = json!({ "index": r.index, "action": r.step.action.name() });
        if let Some(n) = r.step_number {
            o["step_number"] = json!(n);
        }
        if let Some(p) = r.pre_step {
            o["outcome"] = json!(match p.outcome {
                Outcome::Ok => "ok",
                Outcome::Cancelled => "cancelled",
            });
            o["batch"] = json!(p.batch);
            o["entered"] = json!(p.entered);
        }
        if let Some(h) = r.host {
            o["inbox"] = json!(h.inbox);
            o["history"] = json!(h.history);
            o["visible"] = json!(h.visible);
        }
        if let Some(e) = r.error {
            o["error"] = json!(e);
        }
        let o = self.unmap(o);
        self.steps.push(o);
    }
}

/// Runs one trial and returns its verdict with every step's JSON.
pub fn run_trial_json<F: DriverFactory>(trial: &Trial, factory: &F) -> (Verdict, Vec<Value>) {
    let mut observer = StepsJson::default();
    let verdict = crate::runner::run_trial_observed(trial, factory, &mut observer);
    (verdict, observer.steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A disk run's steps name no temporary root, and record what each
    /// step returned: the pre-step's batch and, after an `expect`, the
    /// settled history.
    #[test]
    fn a_disk_trial_keeps_each_step_without_its_temporary_root() {
        let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../conformance/scenarios/precedence/first-wins-basic.yaml");
        let scenario = crate::Scenario::load(&file).expect("scenario");
        let trial = Trial {
            scenario,
            provider: crate::ProviderKind::Disk,
        };
        let (verdict, steps) = run_trial_json(&trial, &crate::driver::RuntimeDriverFactory);
        assert_eq!(verdict, Verdict::Pass);
        assert!(!steps.is_empty());
        assert_eq!(steps[0]["index"], 0);
        assert_eq!(steps[0]["action"], "pre_step");
        assert!(steps[0]["batch"].as_array().is_some_and(|b| !b.is_empty()));
        let text = serde_json::to_string(&steps).expect("json");
        assert!(
            !text.contains(std::env::temp_dir().to_str().expect("utf-8")),
            "{text}"
        );
    }

    #[test]
    fn unmap_takes_the_root_off_every_string() {
        let o = StepsJson {
            top: Some("/tmp/t".into()),
            steps: Vec::new(),
        };
        let v = o.unmap(json!({"a": ["/tmp/t/w/CLAUDE.md", "x"], "b": "at /tmp/t", "n": 1}));
        assert_eq!(v, json!({"a": ["/w/CLAUDE.md", "x"], "b": "at /", "n": 1}));
    }
}
