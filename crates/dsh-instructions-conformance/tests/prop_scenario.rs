//! Large-case property tests for the scenario loader (R-QUAL-1: no panic on
//! any scenario YAML): arbitrary text, YAML-shaped noise, and random
//! mutations of the real scenarios under `conformance/scenarios`.

use std::path::{Path, PathBuf};

use dsh_instructions_conformance::schema::Scenario;
use proptest::prelude::*;

fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            scenario_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

/// Every checked-in scenario's text (empty if the directory is missing).
fn corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(load_corpus)
}

fn load_corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/scenarios");
    let mut files = Vec::new();
    scenario_files(&root, &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect()
}

/// Pieces of YAML and of this schema, to build plausible noise.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "cwd: /r\n",
            "steps:\n",
            "  - ",
            "pre_step: {}",
            "fs:\n",
            "config:",
            " {max_bytes: ",
            "-1",
            "1e999",
            ".nan",
            "~",
            "&a ",
            "*a",
            "!!binary ",
            "? ",
            ": ",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "'",
            "|\n",
            ">\n",
            "\t",
            "\n",
            "#",
            "%YAML 1.2\n",
            "---\n",
            "...\n",
            "<<: *a\n",
            "touch: ",
            "expect:",
            "\u{FEFF}",
            "\u{0}",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

enum Edit {
    DeleteLine(prop::sample::Index),
    DuplicateLine(prop::sample::Index),
    Insert(prop::sample::Index, String),
    Truncate(prop::sample::Index),
}

impl std::fmt::Debug for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::DeleteLine(i) => write!(f, "DeleteLine({i:?})"),
            Self::DuplicateLine(i) => write!(f, "DuplicateLine({i:?})"),
            Self::Insert(i, s) => write!(f, "Insert({i:?}, {s:?})"),
            Self::Truncate(i) => write!(f, "Truncate({i:?})"),
        }
    }
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Edit::DeleteLine),
        any::<prop::sample::Index>().prop_map(Edit::DuplicateLine),
        (any::<prop::sample::Index>(), token()).prop_map(|(i, s)| Edit::Insert(i, s)),
        any::<prop::sample::Index>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, edit: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    match edit {
        Edit::DeleteLine(i) if !lines.is_empty() => {
            lines.remove(i.index(lines.len()));
        }
        Edit::DuplicateLine(i) if !lines.is_empty() => {
            let at = i.index(lines.len());
            lines.insert(at, lines[at].clone());
        }
        Edit::Insert(i, s) => {
            // Insert at a char boundary of the whole text.
            let joined = lines.join("\n");
            let bounds: Vec<usize> = joined.char_indices().map(|(b, _)| b).collect();
            let at = if bounds.is_empty() {
                0
            } else {
                bounds[i.index(bounds.len())]
            };
            return format!("{}{s}{}", &joined[..at], &joined[at..]);
        }
        Edit::Truncate(i) => {
            let joined = lines.join("\n");
            let bounds: Vec<usize> = joined.char_indices().map(|(b, _)| b).collect();
            let at = if bounds.is_empty() {
                0
            } else {
                bounds[i.index(bounds.len())]
            };
            return joined[..at].to_owned();
        }
        _ => {}
    }
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(s in any::<String>()) {
        let _ = Scenario::parse(Path::new("fuzz.yaml"), &s);
    }

    #[test]
    fn yaml_shaped_noise_never_panics(tokens in prop::collection::vec(token(), 0..40)) {
        let _ = Scenario::parse(Path::new("fuzz.yaml"), &tokens.concat());
    }

    #[test]
    fn mutated_scenarios_never_panic(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let corpus = corpus();
        prop_assume!(!corpus.is_empty());
        let mut text = corpus[pick.index(corpus.len())].clone();
        for e in &edits {
            text = apply(&text, e);
        }
        match Scenario::parse(Path::new("fuzz.yaml"), &text) {
            Ok(_) => {}
            // Errors must point inside the text they describe.
            Err(dsh_instructions_conformance::ConformanceError::Scenario { message, .. }) => {
                prop_assert!(!message.is_empty())
            }
            Err(other) => prop_assert!(false, "not a scenario error: {other:?}"),
        }
    }
}

#[test]
fn every_checked_in_scenario_parses() {
    // The seed corpus for the mutation test (and for fuzz/corpus) is valid.
    assert!(!corpus().is_empty(), "conformance/scenarios not found");
    for text in corpus() {
        assert!(
            Scenario::parse(Path::new("seed.yaml"), text).is_ok(),
            "{text}"
        );
    }
}
