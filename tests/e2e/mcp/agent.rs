//! What a new user's agent gets from `asp-bridge mcp`, through the official Python MCP SDK client
//! (`tests/e2e/mcp/agent.py`) on the embedded host and its hygiene provider: answers it can act
//! on. A path that is not there is an error, a path with no changes says nothing was checked, the
//! most severe finding comes first, each thing is said once, the text gives 1-based positions,
//! `asp_status` opens with one line, and `asp_inspect` is listed only when the host offers it.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::external_tool;

use super::python_driver;
use crate::embedded::{KEY, MERGE, outside_with_home};
use crate::support::{Scratch, fake_host_bin};

const LIMIT: Duration = Duration::from_secs(120);

/// The report of `agent.py` making `calls` against `asp-bridge mcp` on `repo` (the embedded host
/// unless `host` names another); `None` (a loud skip) without the Python SDK.
fn agent(repo: &Path, calls: Value, host: Option<&str>) -> Option<Value> {
    let python = external_tool("ASP_BRIDGE_PYTHON", "the Python MCP SDK (`mcp` on PyPI)")?;
    let (outside, home) = outside_with_home();
    let calls = calls.to_string();
    let mut args: Vec<&OsStr> = vec!["--calls".as_ref(), calls.as_ref()];
    if let Some(host) = host {
        args.extend([OsStr::new("--host-command"), host.as_ref()]);
    }
    let stdout = python_driver(&python, "agent.py", repo, &args, &home, LIMIT);
    drop(outside);
    Some(serde_json::from_slice(&stdout).expect("one JSON report"))
}

/// [`agent`]'s report of one `asp_status` call on a repository with nothing changed.
fn one_status_call() -> Option<Value> {
    let scratch = repository(&[], &[]);
    let calls = json!([{"tool": "asp_status", "arguments": {}}]);
    agent(scratch.path(), calls, None)
}

fn diagnostics(arguments: Value) -> Value {
    json!({"tool": "asp_diagnostics", "arguments": arguments})
}

/// A repository whose one commit holds `committed`, then `changed` written over it.
fn repository(committed: &[(&str, &str)], changed: &[(&str, &str)]) -> Scratch {
    let scratch = Scratch::git_repo();
    let write = |(path, text): &(&str, &str)| {
        let path = scratch.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    committed.iter().for_each(write);
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "--allow-empty", "-m", "files"]);
    changed.iter().for_each(write);
    scratch
}

#[test]
fn a_path_that_does_not_exist_is_an_input_error_naming_it() {
    let scratch = repository(&[("src.rs", "fn main() {}\n")], &[("src.rs", MERGE)]);
    let calls = json!([
        diagnostics(json!({"paths": ["no/such/file.py"]})),
        diagnostics(json!({"paths": ["no/such/file.py"], "scope": "files"})),
    ]);
    let Some(report) = agent(scratch.path(), calls, None) else {
        return;
    };
    for result in report["results"].as_array().unwrap() {
        assert_eq!(result["isError"], true, "{result:#}");
        let body = &result["structured"];
        assert_eq!(body["failClass"], "input", "{body:#}");
        assert!(
            body["cause"].as_str().unwrap().contains("no/such/file.py"),
            "{body:#}"
        );
    }
}

#[test]
fn a_deleted_file_is_a_change_not_a_missing_path() {
    let scratch = repository(&[("gone.json", "{}\n")], &[]);
    std::fs::remove_file(scratch.path().join("gone.json")).unwrap();
    let Some(report) = agent(
        scratch.path(),
        json!([diagnostics(json!({"paths": ["gone.json"]}))]),
        None,
    ) else {
        return;
    };
    let result = &report["results"][0];
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(result["structured"]["changedFiles"], 1, "{result:#}");
}

#[test]
fn a_path_with_no_changes_says_nothing_was_checked_and_scope_files_checks_it_whole() {
    let scratch = repository(&[("deploy/id_rsa", KEY)], &[]);
    let calls = json!([
        diagnostics(json!({"paths": ["deploy/id_rsa"]})),
        diagnostics(json!({})),
        diagnostics(json!({"paths": ["deploy"], "scope": "files"})),
        diagnostics(json!({"paths": ["deploy"], "scope": "files", "base": "HEAD"})),
    ]);
    let Some(report) = agent(scratch.path(), calls, None) else {
        return;
    };
    let results = report["results"].as_array().unwrap();
    for unchanged in &results[..2] {
        assert_eq!(unchanged["isError"], false, "{unchanged:#}");
        let body = &unchanged["structured"];
        assert_eq!(body["nothingChecked"], true, "{body:#}");
        assert_eq!(body["changedFiles"], 0, "{body:#}");
        let summary = body["summary"].as_str().unwrap();
        assert!(summary.contains("NOTHING CHECKED"), "{summary}");
        assert!(!summary.contains("coverage complete"), "{summary}");
        let text = unchanged["text"].as_str().unwrap();
        assert!(text.contains("NOTHING CHECKED"), "{text}");
        assert!(!text.contains("coverage complete"), "{text}");
    }
    let whole = &results[2];
    assert_eq!(whole["isError"], false, "{whole:#}");
    let body = &whole["structured"];
    assert_eq!(
        (
            &body["scope"],
            &body["changedFiles"],
            &body["nothingChecked"]
        ),
        (&json!("files"), &json!(1), &json!(false)),
        "{body:#}"
    );
    assert_eq!(
        body["findings"][0]["code"], "hygiene/private-key",
        "{body:#}"
    );
    assert_eq!(body["findings"][0]["path"], "deploy/id_rsa", "{body:#}");
    let both = &results[3];
    assert_eq!(both["isError"], true, "{both:#}");
    assert_eq!(both["structured"]["failClass"], "input", "{both:#}");
}

#[test]
fn the_one_error_comes_before_the_notes_and_min_severity_says_what_it_left_out() {
    // 24 files with a trailing-whitespace note each, sorted before the one private key.
    let notes: Vec<(String, &str)> = (0..24)
        .map(|i| (format!("a/note-{i:02}.txt"), "text \n"))
        .collect();
    let mut changed: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    changed.push(("z/id_rsa", KEY));
    let scratch = repository(&[], &changed);
    let calls = json!([
        diagnostics(json!({"limit": 5})),
        diagnostics(json!({"minSeverity": "error"})),
    ]);
    let Some(report) = agent(scratch.path(), calls, None) else {
        return;
    };
    let first = &report["results"][0];
    let body = &first["structured"];
    assert_eq!(
        body["findings"][0]["code"], "hygiene/private-key",
        "{body:#}"
    );
    assert_eq!(body["findings"][0]["severity"], "error", "{body:#}");
    let text = first["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("error ")).unwrap();
    assert!(lines[at].contains(" z/id_rsa:1:"), "{text}");
    assert!(text.contains("cursor"), "{text}");

    let errors = &report["results"][1]["structured"];
    let findings = errors["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{errors:#}");
    assert_eq!(findings[0]["code"], "hygiene/private-key");
    assert_eq!(errors["minSeverity"], "error");
    assert_eq!(errors["belowMinSeverity"], 24, "{errors:#}");
    let summary = errors["summary"].as_str().unwrap();
    assert!(
        summary.contains("24 finding(s) below min severity error"),
        "{summary}"
    );
    assert!(
        report["results"][1]["text"]
            .as_str()
            .unwrap()
            .contains(summary)
    );
}

#[test]
fn seven_findings_cost_under_two_and_a_half_kilobytes_of_text_each_thing_said_once() {
    let changed: Vec<(String, &str)> = (0..7)
        .map(|i| (format!("src/part-{i}.rs"), MERGE))
        .collect();
    let changed: Vec<(&str, &str)> = changed.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let scratch = repository(&[], &changed);
    let Some(report) = agent(scratch.path(), json!([diagnostics(json!({}))]), None) else {
        return;
    };
    let result = &report["results"][0];
    let body = &result["structured"];
    let findings = body["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 7, "{body:#}");
    let text = result["text"].as_str().unwrap();
    assert!(text.len() < 2_500, "{} bytes of text:\n{text}", text.len());
    for caveat in [
        "ADVISORY",
        "authoritative: false",
        "untrusted",
        body["receiptId"].as_str().unwrap(),
    ] {
        assert!(text.contains(caveat), "{caveat:?} missing from:\n{text}");
    }
    assert_eq!(
        text.lines().filter(|l| l.starts_with("error ")).count(),
        7,
        "{text}"
    );
    for finding in findings {
        assert!(finding.get("authority").is_none(), "{finding:#}");
        assert!(
            finding.get("nextStep").is_none()
                || (finding["nextStep"] != finding["help"]
                    && finding["nextStep"] != finding["message"]),
            "{finding:#}"
        );
    }
    assert!(body["findingAuthority"]["hygiene"].is_object(), "{body:#}");
}

#[test]
fn the_text_gives_one_based_positions_and_the_structure_names_its_base() {
    let scratch = repository(&[("src.rs", "fn main() {}\n")], &[("src.rs", MERGE)]);
    let Some(report) = agent(scratch.path(), json!([diagnostics(json!({}))]), None) else {
        return;
    };
    let result = &report["results"][0];
    let finding = &result["structured"]["findings"][0];
    assert_eq!(finding["code"], "hygiene/merge-conflict", "{finding:#}");
    assert_eq!(finding["rangeZeroBased"]["startLine0"], 1, "{finding:#}");
    assert_eq!(
        finding["rangeZeroBased"]["startCharacter0"], 0,
        "{finding:#}"
    );
    assert!(finding.get("range").is_none(), "{finding:#}");
    let text = result["text"].as_str().unwrap();
    assert!(text.contains("src.rs:2:1 hygiene/merge-conflict"), "{text}");
}

#[test]
fn asp_status_opens_with_one_line_a_person_understands() {
    let Some(report) = one_status_call() else {
        return;
    };
    let result = &report["results"][0];
    assert_eq!(result["isError"], false, "{result:#}");
    let summary = result["structured"]["summary"].as_str().unwrap();
    assert!(!summary.contains('\n'), "{summary}");
    for part in [
        "asp-bridge",
        "ready",
        "advisory only",
        "providers: hygiene (ready)",
        "gate",
    ] {
        assert!(summary.contains(part), "{part:?} missing from {summary:?}");
    }
    let text = result["text"].as_str().unwrap();
    let opening = format!("{{\"summary\":{}", json!(summary));
    assert!(
        text.starts_with(&opening),
        "the text opens with the summary: {text}"
    );
}

#[test]
fn asp_inspect_is_listed_only_when_the_host_offers_it() {
    let Some(report) = one_status_call() else {
        return;
    };
    let listed = |tools: &Value| -> Vec<String> {
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    };
    let expected = [
        "asp_authority_status",
        "asp_capabilities",
        "asp_diagnostics",
        "asp_status",
    ];
    assert_eq!(listed(&report["tools"]), expected, "{report:#}");
    assert_eq!(
        listed(&report["results"][0]["toolsAfter"]),
        expected,
        "{report:#}"
    );
}

/// The first host offers inspect (the fake host's fixtures) and crashes on its second request; the
/// one started after it answers a status that offers no inspect.
#[test]
fn the_tool_list_changes_when_a_restarted_host_no_longer_offers_inspect() {
    let scratch = repository(&[], &[]);
    let fixtures = scratch.path().join("fixtures-no-inspect");
    copy_dir(&crate::support::fixtures().join("asp"), &fixtures);
    let status = fixtures.join("outer/status.response.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(&status).unwrap()).unwrap();
    without_inspect(&mut value);
    std::fs::write(&status, value.to_string()).unwrap();
    let fake = shlex::try_quote(fake_host_bin()).unwrap().into_owned();
    let record = scratch.marker().display().to_string();
    let gate = scratch.path().join("crashed-once").display().to_string();
    let script = format!(
        "if mkdir {gate} 2>/dev/null; then exec {fake} --record {record} --crash-after 1; \
         else exec {fake} --record {record} --fixtures {}; fi",
        fixtures.display()
    );
    let host = format!("sh -c {}", shlex::try_quote(&script).unwrap());
    let calls = json!([
        {"tool": "asp_status", "arguments": {}},
        {"tool": "asp_status", "arguments": {}},
    ]);
    let Some(report) = agent(scratch.path(), calls, Some(&host)) else {
        return;
    };
    assert_eq!(
        report["tools"],
        json!(test_support::mcp::TOOLS),
        "{report:#}"
    );
    let last = &report["results"][1];
    assert_eq!(last["isError"], false, "{report:#}");
    assert_eq!(
        last["toolsAfter"],
        json!([
            "asp_authority_status",
            "asp_capabilities",
            "asp_diagnostics",
            "asp_status"
        ]),
        "{report:#}"
    );
    assert!(report["listChanged"].as_u64().unwrap() >= 1, "{report:#}");
}

/// `status` (a `host/status` answer or fixture) with inspect offered nowhere.
fn without_inspect(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("inspect");
            map.remove("sense");
            for (_, v) in map.iter_mut() {
                without_inspect(v);
            }
        }
        Value::Array(items) => {
            items.retain(|v| v != "inspect" && v != "sense");
            items.iter_mut().for_each(without_inspect);
        }
        _ => {}
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
