//! The pre-commit-hooks comparison of `benches/precommit.rs` on a repository of 50 files: the
//! generator plants every problem, and the agreement table, from the real hooks (pre-commit-hooks
//! in the test venv, beside `ASP_BRIDGE_PYTHON`) and a real `asp-bridge sarif --all-files`, puts
//! each planted file where it belongs.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use test_support::precommit::agreement::Row;
use test_support::precommit::corpus::{self, Plant};
use test_support::precommit::{agreement, hooks};

use crate::support::run_bridge;

const LIMIT: Duration = Duration::from_secs(120);

fn hook_process(command: &mut Command) -> hooks::Ran {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a hook");
    let output = test_support::process::wait_output(child, LIMIT);
    hooks::Ran {
        output: String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
        peak_kib: 0,
    }
}

#[test]
fn the_generated_repository_plants_every_problem_and_the_same_seed_gives_the_same_files() {
    let one = corpus::generate(corpus::SEED, 50);
    let two = corpus::generate(corpus::SEED, 50);
    assert_eq!(one.files.len(), 50);
    assert_eq!(one.files, two.files);
    assert_eq!(one.planted, two.planted);
    assert_eq!(one.planted.len(), 14, "{:?}", one.planted.keys());
    for file in &one.files {
        let read = |c: &corpus::Corpus| std::fs::read(c.repo.path().join(file)).expect("a file");
        assert_eq!(read(&one), read(&two), "{file}");
    }
}

#[test]
fn each_planted_problem_is_found_by_the_hook_and_the_rule_that_check_it() {
    let Some(python) = test_support::external_tool(
        "ASP_BRIDGE_PYTHON",
        "pre-commit-hooks (scripts/tools/requirements.txt)",
    ) else {
        return;
    };
    let bin = Path::new(&python).parent().expect("a venv's bin folder");
    if !hooks::installed(bin) {
        test_support::skip::skip(&format!(
            "pre-commit-hooks is not installed beside {python} (scripts/test.sh installs it)"
        ));
        return;
    }
    let corpus = corpus::generate(corpus::SEED, 50);
    let root = corpus.repo.root();
    let sweep = hooks::sweep(bin, &root, &corpus.files, 2, &hook_process);

    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("host.toml");
    std::fs::write(&config, "[hygiene]\nenabled = true\n").expect("config");
    let log = dir.path().join("sweep.sarif");
    let run = run_bridge(
        &[
            "sarif",
            "--all-files",
            "--host-command",
            "embedded",
            "--config",
            config.to_str().expect("UTF-8"),
            "--output",
            log.to_str().expect("UTF-8"),
        ],
        &root,
        LIMIT,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let sarif = serde_json::from_slice(&std::fs::read(&log).expect("the log")).expect("JSON");
    let rows = agreement::table(&sweep.flagged(), &agreement::sarif_files(&sarif));
    let table = agreement::render(&rows);
    let row = |hook: &str| -> &Row { rows.iter().find(|r| r.hook == hook).expect("a row") };
    let planted =
        |plant: Plant| -> BTreeSet<String> { corpus.planted[&plant].iter().cloned().collect() };

    // Planted where both check: found by both.
    for (plant, hook) in [
        (Plant::TrailingWhitespace, "trailing-whitespace"),
        (Plant::MissingFinalNewline, "end-of-file-fixer"),
        (Plant::MergeConflict, "check-merge-conflict"),
        (Plant::PrivateKey, "detect-private-key"),
        (Plant::JsonSyntax, "check-json"),
        (Plant::DuplicateJsonKey, "check-json"),
        (Plant::YamlSyntax, "check-yaml"),
        (Plant::DuplicateYamlKey, "check-yaml"),
        (Plant::TomlSyntax, "check-toml"),
        (Plant::LargeFile, "check-added-large-files"),
        (Plant::MixedLineEndings, "mixed-line-ending"),
    ] {
        assert!(
            planted(plant).is_subset(&row(hook).agree),
            "{plant:?} in {:?}:\n{table}",
            planted(plant)
        );
    }
    // Where they are known to differ, each on its own side.
    assert_eq!(
        row("check-merge-conflict").only_hook,
        planted(Plant::SetextHeading),
        "{table}"
    );
    assert_eq!(
        row("detect-private-key").only_bridge,
        planted(Plant::KeyInBinary),
        "{table}"
    );
    assert_eq!(
        row("end-of-file-fixer").only_hook,
        planted(Plant::ExtraFinalNewlines),
        "{table}"
    );
    // And nothing else: every other file is flagged by both sides or by neither.
    for row in &rows {
        let expected = |side: &BTreeSet<String>| match row.hook {
            "check-merge-conflict" | "detect-private-key" | "end-of-file-fixer" => true,
            _ => side.is_empty(),
        };
        assert!(
            expected(&row.only_hook) && expected(&row.only_bridge),
            "{}:\n{table}",
            row.hook
        );
    }
}
