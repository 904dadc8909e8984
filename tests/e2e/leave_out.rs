//! What `host.toml` leaves out, said in every front end on the embedded host: an excluded file is
//! listed left out (a SARIF notification naming it, MCP `leftOut`, the editor's left-out notice),
//! never reported clean, and what was dropped of the findings is said once per answer.

use std::path::Path;

use serde_json::Value;

use crate::embedded::{
    MERGE, lsp_published, mcp_diagnostics, notifications, outside_with_home, results, run,
};
use crate::support::Scratch;

const WHY: &str = "excluded by host.toml `exclude` (`tests/fixtures/**`), not sent to hygiene";

/// A repository whose change holds a conflict-marked fixture and a file with trailing whitespace,
/// and a home whose `host.toml` excludes the fixtures and disables the whitespace rule.
fn repository() -> (Scratch, std::path::PathBuf, Scratch, std::path::PathBuf) {
    let scratch = Scratch::git_repo();
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::create_dir_all(repo.join("tests/fixtures")).unwrap();
    std::fs::write(repo.join("tests/fixtures/conflict.rs"), MERGE).unwrap();
    std::fs::write(repo.join("notes.txt"), "spaces   \n").unwrap();
    let (outside, home) = outside_with_home();
    std::fs::create_dir_all(home.join("asp-bridge")).unwrap();
    std::fs::write(
        home.join("asp-bridge/host.toml"),
        "exclude = [\"tests/fixtures/**\"]\n\n[hygiene]\ndisable = [\"hygiene/trailing-whitespace\"]\n",
    )
    .unwrap();
    (scratch, repo, outside, home)
}

#[test]
fn sarif_names_an_excluded_file_and_the_disabled_rule_and_reports_neither() {
    let (scratch, repo, outside, home) = repository();
    let log_path = outside.path().join("out.sarif");
    let repo_arg = repo.to_str().unwrap();
    let sarif = run(
        &repo,
        &home,
        &[
            "sarif",
            "--repo",
            repo_arg,
            "--output",
            log_path.to_str().unwrap(),
        ],
    );
    assert_eq!(sarif.code, Some(0), "{}", sarif.stderr);
    assert!(
        sarif.stderr.contains(
            "1 path(s) excluded by the host's configuration, not checked: tests/fixtures/conflict.rs"
        ),
        "{}",
        sarif.stderr
    );
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&log_path).unwrap()).unwrap();
    let errors = sarif_export::schema::errors(&log);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(results(&log), Default::default(), "nothing reported");
    assert_eq!(log["runs"][0]["properties"]["decision"], "allow");
    let notes = notifications(&log);
    let left = notes
        .iter()
        .find(|n| n["descriptor"]["id"] == "asp-bridge/paths-left-out")
        .unwrap_or_else(|| panic!("a left-out notification: {notes:#?}"));
    assert_eq!(
        left["properties"]["paths"][0]["path"],
        "tests/fixtures/conflict.rs"
    );
    assert_eq!(left["properties"]["paths"][0]["why"], WHY);
    let dropped: Vec<&Value> = notes
        .iter()
        .filter(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("disabled rules")
        })
        .collect();
    assert_eq!(dropped.len(), 1, "once per answer: {notes:#?}");
    assert_eq!(dropped[0]["level"], "note");
    assert!(
        dropped[0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("hygiene/trailing-whitespace (1 dropped)"),
        "{:#}",
        dropped[0]
    );
    assert!(
        notes.iter().all(|n| n["message"]["text"]
            .as_str()
            .is_none_or(|t| !t.contains("coverage degraded"))),
        "an exclusion is no degraded coverage: {notes:#?}"
    );
    scratch.assert_no_orphans();
}

#[test]
fn mcp_lists_an_excluded_file_under_left_out_and_never_calls_coverage_complete() {
    let (scratch, repo, _outside, home) = repository();
    let result = mcp_diagnostics(&repo, &home);
    let structured = &result["structuredContent"];
    assert_eq!(
        structured["leftOut"][0]["path"], "tests/fixtures/conflict.rs",
        "{result:#}"
    );
    assert_eq!(structured["leftOut"][0]["why"], WHY);
    assert_eq!(
        structured["incomplete"], false,
        "the user's choice is no gap"
    );
    let summary = structured["summary"].as_str().unwrap();
    assert!(
        summary.contains("but for what the host's configuration leaves out"),
        "{summary}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "LEFT OUT, not checked: tests/fixtures/conflict.rs ({WHY})"
        )),
        "{text}"
    );
    assert!(
        text.contains("LEFT OUT by the host's configuration: hygiene: findings of the disabled rules hygiene/trailing-whitespace (1 dropped)"),
        "{text}"
    );
    assert!(
        text.lines().all(
            |l| !(l.starts_with("DEGRADED") || l.starts_with("LEFT OUT by"))
                || !l.contains("conflict.rs")
        ),
        "the path is said once, as left out: {text}"
    );
    scratch.assert_no_orphans();
}

#[test]
fn the_editor_shows_an_excluded_document_as_left_out_not_clean() {
    let (scratch, repo, _outside, home) = repository();
    let shown = lsp_published(
        Path::new(&repo),
        &home,
        "tests/fixtures/conflict.rs",
        MERGE,
        |d| d["code"] == "left-out",
    );
    assert_eq!(shown.len(), 1, "the notice alone: {shown:#?}");
    let message = shown[0]["message"].as_str().unwrap();
    assert!(
        message.contains(WHY) && message.ends_with("it was not checked"),
        "{message}"
    );
    scratch.assert_no_orphans();
}
