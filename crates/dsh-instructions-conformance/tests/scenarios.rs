//! Every scenario under `<workspace>/conformance/scenarios/`, on each of its
//! providers, as one libtest trial — so `cargo test --workspace` fails on any
//! failing or unparsable scenario (R-CONF-1).

use std::path::Path;

use dsh_instructions_conformance::driver::RuntimeDriverFactory;
use dsh_instructions_conformance::runner::{RunOptions, Verdict, plan, run_trial};
use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/scenarios");
    let (trials, failures) = plan(&[root], &RunOptions::default());
    let mut tests: Vec<Trial> = failures
        .into_iter()
        .enumerate()
        .map(|(i, line)| Trial::test(format!("unparsable-{i}"), move || Err(Failed::from(line))))
        .collect();
    tests.extend(trials.into_iter().map(|t| {
        let name = format!("{} [{}]", t.scenario.name, t.provider);
        Trial::test(name, move || match run_trial(&t, &RuntimeDriverFactory) {
            Verdict::Pass => Ok(()),
            Verdict::Fail(reason) => Err(Failed::from(reason)),
        })
    }));
    libtest_mimic::run(&args, tests).exit();
}
