//! `cargo xtask tidy`: the checks that keep the docs true of the code and
//! the code inside its architecture (issue 46 item 5).
//!
//! Every check is a plain function over the working tree ([`CHECKS`]).
//! `cargo xtask tidy` runs them all and prints each failure; each also has
//! a `#[test]` of the same name below, so `cargo test --workspace` runs
//! them as well (the README's test command), and a failing check fails
//! both the same way. The modules hold the checks and their own tests on
//! inputs that break the rules, so a check that stopped catching anything
//! would fail its tests.

mod arch;
mod decisions;
mod doc;
mod figures;
mod modules;
mod source;
mod spec_ids;
mod spec_index;
mod surface;
mod tree;
mod workspace;

#[cfg(test)]
pub(crate) use tree::is_build_output;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};

use tree::{CheckFn, Report, Tree};

const USAGE: &str = "usage: cargo xtask tidy [--bless] [--verbose]";

/// One named check; the name is also its `#[test]`'s.
pub(crate) struct Check {
    pub(crate) name: &'static str,
    pub(crate) run: CheckFn,
}

/// Every tidy check, in the order `cargo xtask tidy` runs them.
pub(crate) const CHECKS: &[Check] = &[
    Check {
        name: "crate_dependencies_follow_the_layer_table",
        run: arch::crate_dependencies_follow_the_layer_table,
    },
    Check {
        name: "the_crate_diagram_is_the_dependency_graph",
        run: arch::the_crate_diagram_is_the_dependency_graph,
    },
    Check {
        name: "pure_crates_touch_no_io_clock_or_runtime",
        run: arch::pure_crates_touch_no_io_clock_or_runtime,
    },
    Check {
        name: "only_the_listed_crates_touch_the_filesystem",
        run: arch::only_the_listed_crates_touch_the_filesystem,
    },
    Check {
        name: "the_cli_grants_ambient_authority_once",
        run: arch::the_cli_grants_ambient_authority_once,
    },
    Check {
        name: "the_shipped_binary_does_not_link_the_conformance_harness",
        run: arch::the_shipped_binary_does_not_link_the_conformance_harness,
    },
    Check {
        name: "yaml_is_parsed_only_by_the_harness_xtask_cli_and_state",
        run: arch::yaml_is_parsed_only_by_the_harness_xtask_cli_and_state,
    },
    Check {
        name: "no_module_imports_another_in_a_loop",
        run: modules::no_module_imports_another_in_a_loop,
    },
    Check {
        name: "root_names_per_crate_are_counted_and_justified",
        run: surface::root_names_per_crate_are_counted_and_justified,
    },
    Check {
        name: "compose_rs_makes_no_provider_call",
        run: arch::compose_rs_makes_no_provider_call,
    },
    Check {
        name: "every_source_file_the_doc_names_exists",
        run: arch::every_source_file_the_doc_names_exists,
    },
    Check {
        name: "every_crate_root_forbids_unsafe_code",
        run: arch::every_crate_root_forbids_unsafe_code,
    },
    Check {
        name: "every_architecture_invariant_names_a_test_that_exists",
        run: arch::every_architecture_invariant_names_a_test_that_exists,
    },
    Check {
        name: "every_figure_of_the_architecture_page_holds",
        run: figures::every_figure_of_the_architecture_page_holds,
    },
    Check {
        name: "no_source_file_is_over_the_line_limit",
        run: figures::no_source_file_is_over_the_line_limit,
    },
    Check {
        name: "every_cited_requirement_id_is_defined_in_docs_spec",
        run: spec_ids::every_cited_requirement_id_is_defined_in_docs_spec,
    },
    Check {
        name: "every_requirement_id_in_docs_spec_is_cited_or_not_yet_implemented",
        run: spec_ids::every_requirement_id_in_docs_spec_is_cited_or_not_yet_implemented,
    },
    Check {
        name: "the_spec_index_lists_every_page_with_its_ids",
        run: spec_index::the_spec_index_lists_every_page_with_its_ids,
    },
    Check {
        name: "the_spec_index_names_every_supported_agent",
        run: spec_index::the_spec_index_names_every_supported_agent,
    },
    Check {
        name: "the_spec_index_lists_every_marked_difference",
        run: spec_index::the_spec_index_lists_every_marked_difference,
    },
    Check {
        name: "every_decision_record_has_a_status_and_a_citation",
        run: decisions::every_decision_record_has_a_status_and_a_citation,
    },
    Check {
        name: "the_decision_index_is_current",
        run: decisions::the_decision_index_is_current,
    },
];

/// `cargo xtask tidy [--bless] [--verbose]`.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<ExitCode> {
    let mut bless = false;
    let mut verbose = false;
    for a in args {
        match a.as_str() {
            "--bless" => bless = true,
            "--verbose" | "-v" => verbose = true,
            other => bail!("tidy: unknown argument `{other}`\n{USAGE}"),
        }
    }
    let tree = Tree::at(root);
    if bless {
        let path = decisions::bless(&tree)?;
        println!("tidy: wrote {path}");
    }
    let failed = run_checks(&tree, CHECKS, verbose, &mut std::io::stdout().lock())?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs `checks`, printing one line per check and every problem under the
/// check that found it; returns how many failed.
fn run_checks(tree: &Tree, checks: &[Check], verbose: bool, out: &mut impl Write) -> Result<usize> {
    let mut failed = 0;
    for check in checks {
        let report = run_one(tree, check.run);
        let ok = report.problems.is_empty();
        writeln!(out, "{} {}", if ok { "ok  " } else { "FAIL" }, check.name)?;
        if verbose {
            for note in &report.notes {
                writeln!(out, "       {note}")?;
            }
        }
        for problem in &report.problems {
            writeln!(out, "  - {problem}")?;
        }
        failed += usize::from(!ok);
    }
    if failed == 0 {
        writeln!(out, "tidy: all {} checks pass", checks.len())?;
    } else {
        writeln!(out, "tidy: {failed} of {} checks failed", checks.len())?;
    }
    Ok(failed)
}

/// A check's report; a check that could not run fails with the reason.
fn run_one(tree: &Tree, check: CheckFn) -> Report {
    let mut report = Report::default();
    if let Err(e) = check(tree, &mut report) {
        report.fail(format!("the check could not run: {e:#}"));
    }
    report
}

// One test per check, named as the check (docs/architecture.md names them
// as invariants), so `cargo test --workspace` runs every check.
#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;

    /// One tree per test process: `cargo metadata` and the walk run once.
    fn tree() -> &'static Tree {
        static TREE: OnceLock<Tree> = OnceLock::new();
        TREE.get_or_init(Tree::workspace)
    }

    #[track_caller]
    fn passes(name: &str) {
        let check = CHECKS
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no tidy check {name}"));
        let report = run_one(tree(), check.run);
        for note in &report.notes {
            println!("{note}");
        }
        assert!(
            report.problems.is_empty(),
            "\n{}\n(run `cargo xtask tidy` for every check)\n",
            report.problems.join("\n")
        );
    }

    #[test]
    fn crate_dependencies_follow_the_layer_table() {
        passes("crate_dependencies_follow_the_layer_table");
    }

    #[test]
    fn the_crate_diagram_is_the_dependency_graph() {
        passes("the_crate_diagram_is_the_dependency_graph");
    }

    #[test]
    fn pure_crates_touch_no_io_clock_or_runtime() {
        passes("pure_crates_touch_no_io_clock_or_runtime");
    }

    #[test]
    fn only_the_listed_crates_touch_the_filesystem() {
        passes("only_the_listed_crates_touch_the_filesystem");
    }

    #[test]
    fn the_cli_grants_ambient_authority_once() {
        passes("the_cli_grants_ambient_authority_once");
    }

    #[test]
    fn the_shipped_binary_does_not_link_the_conformance_harness() {
        passes("the_shipped_binary_does_not_link_the_conformance_harness");
    }

    #[test]
    fn yaml_is_parsed_only_by_the_harness_xtask_cli_and_state() {
        passes("yaml_is_parsed_only_by_the_harness_xtask_cli_and_state");
    }

    #[test]
    fn no_module_imports_another_in_a_loop() {
        passes("no_module_imports_another_in_a_loop");
    }

    #[test]
    fn root_names_per_crate_are_counted_and_justified() {
        passes("root_names_per_crate_are_counted_and_justified");
    }

    #[test]
    fn compose_rs_makes_no_provider_call() {
        passes("compose_rs_makes_no_provider_call");
    }

    #[test]
    fn every_source_file_the_doc_names_exists() {
        passes("every_source_file_the_doc_names_exists");
    }

    #[test]
    fn every_crate_root_forbids_unsafe_code() {
        passes("every_crate_root_forbids_unsafe_code");
    }

    #[test]
    fn every_architecture_invariant_names_a_test_that_exists() {
        passes("every_architecture_invariant_names_a_test_that_exists");
    }

    #[test]
    fn every_figure_of_the_architecture_page_holds() {
        passes("every_figure_of_the_architecture_page_holds");
    }

    #[test]
    fn no_source_file_is_over_the_line_limit() {
        passes("no_source_file_is_over_the_line_limit");
    }

    #[test]
    fn every_cited_requirement_id_is_defined_in_docs_spec() {
        passes("every_cited_requirement_id_is_defined_in_docs_spec");
    }

    #[test]
    fn every_requirement_id_in_docs_spec_is_cited_or_not_yet_implemented() {
        passes("every_requirement_id_in_docs_spec_is_cited_or_not_yet_implemented");
    }

    #[test]
    fn the_spec_index_lists_every_page_with_its_ids() {
        passes("the_spec_index_lists_every_page_with_its_ids");
    }

    #[test]
    fn the_spec_index_names_every_supported_agent() {
        passes("the_spec_index_names_every_supported_agent");
    }

    #[test]
    fn the_spec_index_lists_every_marked_difference() {
        passes("the_spec_index_lists_every_marked_difference");
    }

    #[test]
    fn every_decision_record_has_a_status_and_a_citation() {
        passes("every_decision_record_has_a_status_and_a_citation");
    }

    #[test]
    fn the_decision_index_is_current() {
        passes("the_decision_index_is_current");
    }

    /// `cargo test` runs a check only through its test: every check has
    /// one of its name in this file, and no two checks share a name.
    #[test]
    fn every_check_has_a_test_of_its_name() {
        let this = tree().read("xtask/src/tidy.rs").expect("readable");
        let files = [(std::path::PathBuf::from("tidy.rs"), this)];
        let mut names = std::collections::BTreeSet::new();
        for check in CHECKS {
            assert!(names.insert(check.name), "{} twice", check.name);
            assert!(
                arch::test_fn_exists(check.name, &files),
                "no #[test] fn {}() in xtask/src/tidy.rs",
                check.name
            );
        }
        assert!(CHECKS.len() >= 20, "{}", CHECKS.len());
    }

    fn failing(_: &Tree, report: &mut Report) -> Result<()> {
        report.note("saw one file");
        report.fail("first problem");
        report.fail("second problem");
        Ok(())
    }

    fn erring(_: &Tree, _: &mut Report) -> Result<()> {
        bail!("docs/x.md: no `## Table` section")
    }

    fn passing(_: &Tree, report: &mut Report) -> Result<()> {
        report.note("all fine");
        Ok(())
    }

    #[test]
    fn the_run_prints_every_problem_under_its_check_and_counts_failures() {
        let checks = [
            Check {
                name: "fails",
                run: failing,
            },
            Check {
                name: "errs",
                run: erring,
            },
            Check {
                name: "passes",
                run: passing,
            },
        ];
        let mut out = Vec::new();
        let failed = run_checks(tree(), &checks, false, &mut out).expect("written");
        assert_eq!(failed, 2);
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "FAIL fails\n  - first problem\n  - second problem\n\
             FAIL errs\n  - the check could not run: docs/x.md: no `## Table` section\n\
             ok   passes\n\
             tidy: 2 of 3 checks failed\n"
        );
        let mut out = Vec::new();
        let failed = run_checks(tree(), &checks[2..], true, &mut out).expect("written");
        assert_eq!(failed, 0);
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "ok   passes\n       all fine\ntidy: all 1 checks pass\n"
        );
    }
}
