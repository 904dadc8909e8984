//! End-to-end tests of `asp-bridge sarif`: live exports through the fake host (1,000 findings with
//! non-ASCII, emoji and BiDi text; 30,000 past GitHub's limit), every saved fixture converted and
//! validated (OASIS schema here; Microsoft's SARIF Multitool when `ASP_BRIDGE_SARIF_MULTITOOL` names
//! it), and every failure as one classed stderr line with its exit code, never a findings-based one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use test_support::external_tool;

use crate::support::{
    Run, Scratch, assert_failed, blob_id, fixtures, multitool_validate, run_against_fake_host,
    run_bridge,
};

/// How long a run may take before it counts as hung (a debug build on a loaded 2-core machine
/// needs tens of seconds for the 30,000-findings case).
const LIMIT: Duration = Duration::from_secs(180);

/// Runs `asp-bridge sarif` live against the fake host with `flags`, in a git repository.
fn live(scratch: &Scratch, flags: &str, extra: &[&str]) -> Run {
    run_against_fake_host(scratch, "sarif", flags, extra, LIMIT)
}

/// Runs `asp-bridge sarif --from FILE` with `extra` flags.
fn from(file: &Path, cwd: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["sarif", "--from", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    run_bridge(&args, cwd, LIMIT)
}

/// The saved decisions of the fixtures: every `evaluate*` answer of `outer/` and `core/`.
fn fixture_decisions() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in ["outer", "core"] {
        for entry in std::fs::read_dir(fixtures().join("asp").join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("evaluate") && name.ends_with(".json") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 15);
    files
}

fn read_log(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the SARIF log was written");
    serde_json::from_str(&text).expect("one JSON document")
}

fn assert_schema_valid(log: &Value, what: &str) {
    let errors = sarif_export::schema::errors(log);
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Writes `lines` lines of text at the path the fake host gives its finding `i`.
fn write_generated_file(repo: &Path, i: usize, lines: usize) {
    let path = repo.join(format!("src/ünï/файл-{i} 😀.ts"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = (0..lines)
        .map(|l| format!("export const v{l} = \"😀 {i}\";\n"))
        .collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_live_export_of_1000_hostile_findings_is_a_valid_sweep_log() {
    let scratch = Scratch::git_repo();
    for i in 0..3 {
        write_generated_file(scratch.path(), i, 60);
    }
    let out = scratch.path().join("out.sarif");
    let run = live(
        &scratch,
        "--findings 1000",
        &["--output", out.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(0), "a deny is not a failure: {}", run.stderr);
    assert!(run.stdout.is_empty(), "the log went to its file");
    let log = read_log(&out);
    assert_schema_valid(&log, "live export");
    let run_json = &log["runs"][0];
    let results = run_json["results"].as_array().unwrap();
    assert_eq!(results.len(), 1000);
    assert_eq!(run_json["properties"]["authoritative"], false);
    assert_eq!(run_json["properties"]["decision"], "deny");
    assert_eq!(run_json["properties"]["callSite"], "sweep");

    let evaluate = scratch.first_received("host/evaluateChangeset");
    assert_eq!(evaluate["params"]["callSite"], "sweep");
    assert_eq!(evaluate["params"]["comparison"], "all");
    assert!(
        scratch
            .recorded()
            .iter()
            .all(|m| m["params"]["callSite"] != "gate" && m["method"] != "host/applyProposal"),
        "the bridge never gates"
    );
    let created: Vec<&str> = evaluate["params"]["changeset"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert!(created.contains(&"src/ünï/файл-0 😀.ts"), "{created:?}");

    let first = &results[0];
    let location = &first["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        "src/%C3%BCn%C3%AF/%D1%84%D0%B0%D0%B9%D0%BB-0%20%F0%9F%98%80.ts"
    );
    assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    let base = run_json["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    for (i, result) in results.iter().enumerate() {
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.is_ascii() && !uri.contains(' '), "{uri}");
        let message = result["message"]["text"].as_str().unwrap();
        assert!(message.contains("naïve 漢字 😀"), "{message}");
        assert!(
            !message.contains('\u{202e}') && !message.contains('\u{202c}'),
            "BiDi controls never reach the log: {message:?}"
        );
        let hashed = result["partialFingerprints"]
            .get("primaryLocationLineHash")
            .is_some();
        assert_eq!(hashed, i < 3, "files on disk, and only they, are hashed");
    }
}

#[test]
fn thirty_thousand_findings_respect_githubs_limits_with_a_notification() {
    let scratch = Scratch::git_repo();
    // The test is about GitHub's limits, not deadlines: the host's answer may take its time.
    let run = live(&scratch, "--findings 30000", &["--timeout-ms", "150000"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let log: Value = serde_json::from_str(&run.stdout).expect("stdout is exactly the log");
    let run_json = &log["runs"][0];
    assert_eq!(log["runs"].as_array().unwrap().len(), 1);
    let results = run_json["results"].as_array().unwrap();
    assert_eq!(results.len(), 25_000);
    assert!(
        run_json["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .len()
            <= 25_000
    );
    let levels = |level: &str| results.iter().filter(|r| r["level"] == level).count();
    assert_eq!(levels("error"), 10_000, "every error is kept");
    assert_eq!(levels("warning"), 10_000, "every warning is kept");
    assert_eq!(levels("note"), 5_000, "then the first infos");
    let notes = run_json["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let note = notes
        .iter()
        .find(|n| n["descriptor"]["id"] == "asp-bridge/results-limit")
        .expect("a notification, never a silent cut");
    assert_eq!(note["properties"]["omitted"], 5_000);
    let text = note["message"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("5000 of 30000 findings were left out"),
        "{text}"
    );
    assert_eq!(run_json["properties"]["findings"], 30_000);
    assert_eq!(run_json["properties"]["omittedFindings"], 5_000);
}

#[test]
fn every_fixture_decision_converts_from_a_file_into_a_valid_log() {
    let scratch = Scratch::new();
    for file in fixture_decisions() {
        let out = scratch.path().join("out.sarif");
        let run = from(&file, scratch.path(), &["--output", out.to_str().unwrap()]);
        assert_eq!(run.code, Some(0), "{}: {}", file.display(), run.stderr);
        let log = read_log(&out);
        assert_schema_valid(&log, &file.display().to_string());
        assert_eq!(log["runs"][0]["properties"]["authoritative"], false);
        assert!(
            log["runs"][0].get("originalUriBaseIds").is_none(),
            "no --repo, no base URI"
        );
    }
}

#[test]
fn a_deny_exits_0_and_its_log_goes_to_stdout_by_default() {
    let scratch = Scratch::new();
    let file = fixtures().join("asp/outer/evaluate.deny.gating.json");
    let workspace = fixtures().join("sarif/workspace");
    let run = from(
        &file,
        scratch.path(),
        &[
            "--repo",
            workspace.to_str().unwrap(),
            "--category",
            "asp/sweep",
        ],
    );
    assert_eq!(
        run.code,
        Some(0),
        "exit status never depends on findings: {}",
        run.stderr
    );
    let log: Value = serde_json::from_str(&run.stdout).expect("stdout is exactly the log");
    let run_json = &log["runs"][0];
    assert_eq!(run_json["properties"]["decision"], "deny");
    assert_eq!(run_json["results"][0]["level"], "error");
    assert_eq!(run_json["automationDetails"]["id"], "asp/sweep/");
    assert!(
        run_json["results"][0]["partialFingerprints"]["primaryLocationLineHash"].is_string(),
        "--repo lets the file be hashed"
    );
}

#[test]
fn an_introduced_comparison_is_asked_of_the_host() {
    let scratch = Scratch::git_repo();
    let run = live(&scratch, "", &["--comparison", "introduced"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let evaluate = scratch.first_received("host/evaluateChangeset");
    assert_eq!(evaluate["params"]["comparison"], "introduced");
    assert_eq!(evaluate["params"]["callSite"], "sweep");
}

#[test]
fn a_bad_from_file_is_an_input_error() {
    let scratch = Scratch::new();
    let missing = scratch.path().join("missing.json");
    let run = from(&missing, scratch.path(), &[]);
    assert_failed(&run, 6, "input", "cannot read");
    for (name, text, cause) in [
        ("junk.json", "this is not json", "not a JSON document"),
        (
            "status.json",
            r#"{"jsonrpc":"2.0","id":1,"result":{"host":{}}}"#,
            "not a host decision",
        ),
        ("array.json", "[1,2]", "expected a JSON object"),
    ] {
        let file = scratch.path().join(name);
        std::fs::write(&file, text).unwrap();
        let run = from(&file, scratch.path(), &[]);
        assert_failed(&run, 6, "input", cause);
    }
}

#[test]
fn an_endless_from_is_refused_at_the_size_cap_with_an_input_error() {
    let scratch = Scratch::new();
    let run = from(Path::new("/dev/zero"), scratch.path(), &[]);
    assert_failed(
        &run,
        6,
        "input",
        "larger than 128 MiB, the limit of a host answer",
    );
    assert!(run.stdout.is_empty(), "no log");
}

#[test]
fn the_log_is_one_compact_line_unless_pretty_is_asked_for() {
    let scratch = Scratch::new();
    let file = fixtures().join("asp/outer/evaluate.deny.gating.json");
    let compact = from(&file, scratch.path(), &[]);
    assert_eq!(compact.code, Some(0), "{}", compact.stderr);
    assert_eq!(compact.stdout.lines().count(), 1, "{}", compact.stdout);
    let out = scratch.path().join("pretty.sarif");
    let pretty = from(
        &file,
        scratch.path(),
        &["--pretty", "--output", out.to_str().unwrap()],
    );
    assert_eq!(pretty.code, Some(0), "{}", pretty.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("{\n  \""), "indented: {text}");
    let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap();
    assert_eq!(parse(&text), parse(&compact.stdout), "the same log");
    let names: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert_eq!(names, Vec::<String>::new(), "no temporary file is left");
}

#[test]
fn a_saved_host_error_is_reported_with_its_own_class() {
    let scratch = Scratch::new();
    let file = fixtures().join("asp/judge/evaluate.error-health.json");
    let run = from(&file, scratch.path(), &[]);
    assert_failed(&run, 3, "health", "index not warm");
}

#[test]
fn a_host_crash_is_a_health_error_and_writes_no_log() {
    let scratch = Scratch::git_repo();
    let out = scratch.path().join("out.sarif");
    let run = live(
        &scratch,
        "--crash-on host/evaluateChangeset",
        &["--output", out.to_str().unwrap()],
    );
    assert_failed(&run, 3, "health", "host exited with status 3");
    assert!(
        !out.exists(),
        "nothing is written when there is no decision"
    );
}

#[test]
fn comparison_makes_no_sense_with_a_saved_answer() {
    let scratch = Scratch::new();
    let file = fixtures().join("asp/outer/evaluate.response.json");
    let run = from(&file, scratch.path(), &["--comparison", "introduced"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let run = from(&file, scratch.path(), &["--category", " "]);
    assert_failed(&run, 6, "input", "--category must not be empty");
}

/// Microsoft's SARIF Multitool (`validate --rule-kind "Sarif;Gh"`) on the log of every fixture
/// decision and of a live export: no error-level result. `ASP_BRIDGE_SARIF_MULTITOOL` names the
/// `Sarif.Multitool` binary; without it the test fails where `ASP_BRIDGE_REQUIRE_TOOLS` is set and is skipped (and recorded) elsewhere.
#[test]
fn microsofts_sarif_multitool_finds_no_error_in_any_exported_log() {
    let Some(multitool) = external_tool(
        "ASP_BRIDGE_SARIF_MULTITOOL",
        "Microsoft's SARIF Multitool (the Sarif.Multitool binary of @microsoft/sarif-multitool-linux)",
    ) else {
        return;
    };
    let scratch = Scratch::git_repo();
    let logs = scratch.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let workspace = fixtures().join("sarif/workspace");
    for file in fixture_decisions() {
        let sub = file
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let name = format!("{sub}-{}", file.file_stem().unwrap().to_string_lossy());
        let out = logs.join(format!("{name}.sarif"));
        let run = from(
            &file,
            scratch.path(),
            &[
                "--repo",
                workspace.to_str().unwrap(),
                "--output",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
    }
    write_generated_file(scratch.path(), 0, 60);
    let live_out = logs.join("live-200.sarif");
    let run = live(
        &scratch,
        "--findings 200",
        &["--output", live_out.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);

    // A control log with a result that has no message: the Multitool must call it an error
    // (GH1015), or this test would pass without checking anything.
    let control = scratch.path().join("control");
    std::fs::create_dir(&control).unwrap();
    let bad = r#"{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0",
        "runs":[{"tool":{"driver":{"name":"control"}},"results":[{"message":{}}]}]}"#;
    std::fs::write(control.join("bad.sarif"), bad).unwrap();

    let all = logs.join("*.sarif");
    let bad = control.join("bad.sarif");
    let report = scratch.path().join("multitool.sarif");
    let (console, report) = multitool_validate(&multitool, &[&all, &bad], &report);
    assert!(
        console.contains(&format!("{} files scanned", fixture_decisions().len() + 2)),
        "every log was validated: {console}"
    );
    let run_json = &report["runs"][0];
    assert_eq!(
        run_json["invocations"][0]["executionSuccessful"], true,
        "the Multitool ran: {console}"
    );
    let (control_errors, errors): (Vec<String>, Vec<String>) = run_json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "error")
        .map(|r| {
            format!(
                "{} {}: {}",
                r["ruleId"].as_str().unwrap_or_default(),
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or_default(),
                r["message"]["text"].as_str().unwrap_or_default()
            )
        })
        .partition(|e| e.contains("/control/bad.sarif"));
    assert!(
        errors.is_empty(),
        "Multitool errors:\n{}",
        errors.join("\n")
    );
    assert!(
        !control_errors.is_empty(),
        "the control log's error was not found: {console}"
    );
}

/// Links are hashed as their target's bytes and never followed (a link to `/dev/zero` ran out of
/// memory, one to a FIFO or `/dev/stdin` hung, one to `/etc/passwd` sent that file's hash), a FIFO is
/// never opened, links to a directory or nowhere are ordinary changes, and a submodule at another
/// commit is left out (its own repository): the export succeeds.
#[test]
fn a_hostile_working_tree_is_evaluated_without_following_anything() {
    let scratch = Scratch::git_repo();
    let links = crate::support::hostile_tree(&scratch);
    let run = live(&scratch, "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // What was left out (special files, never opened) is named on the success line.
    let line = run.stderr.lines().last().unwrap_or_default();
    assert!(
        line.contains("path(s) left out, not regular files:"),
        "{line}"
    );
    let evaluate = scratch.first_received("host/evaluateChangeset");
    let changes = evaluate["params"]["changeset"]["changes"]
        .as_array()
        .unwrap();
    let change = |path: &str| changes.iter().find(|c| c["path"] == path);
    for (name, target) in links {
        let link = change(name).unwrap_or_else(|| panic!("{name} is a change: {changes:#?}"));
        assert_eq!(link["kind"], "create", "{link}");
        assert_eq!(
            link["after"],
            blob_id(target.as_bytes()),
            "{name}: the blob of a link is its target"
        );
    }
    // A submodule is its own repository: named as left out, never sent as a file change.
    assert!(change("sub").is_none(), "{changes:#?}");
    assert!(line.contains("sub"), "{line}");
    assert!(change("tracked-fifo").is_none(), "a FIFO is never opened");
    assert!(change("pipe").is_none());
}
