//! Every example decision of the ASP fixtures (allow, deny, each kind of indeterminate) converts into
//! a log that the OASIS schema accepts, that passes GitHub's own checks, and that matches its
//! committed whole-document snapshot under `tests/fixtures/sarif/` (`UPDATE_EXPECT=1` rewrites
//! them; the workspace path, the invocation times and the bridge version are normalised).

use std::path::{Path, PathBuf};

use serde_json::Value;

use sarif_export::{Options, export, read_saved, schema};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The saved decisions: every `evaluate*` answer with a `result`, as `(relative path, bytes)`.
fn saved_decisions() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["outer", "core"] {
        let dir = fixtures().join("asp").join(sub);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("evaluate") && n.ends_with(".json"))
            .collect();
        names.sort();
        for name in names {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            out.push((format!("{sub}/{name}"), bytes));
        }
    }
    assert!(out.len() >= 15, "the fixtures are where they should be");
    out
}

/// The sample workspace the deny fixtures point into, so line hashes are part of the snapshots.
fn workspace() -> PathBuf {
    fixtures()
        .join("sarif/workspace")
        .canonicalize()
        .expect("sample workspace")
}

fn convert(bytes: &[u8]) -> Value {
    let decision = read_saved(bytes).expect("a decision");
    let options = Options {
        repo: Some(workspace()),
        ..Options::default()
    };
    export(&decision, &options).to_json()
}

/// GitHub's checks that the schema does not make (codeql-action `upload-lib.ts` and the documented
/// limits): a `results` array in every run, rule indices that point at the rule named, required
/// strings that are not empty, and descriptions within 1,024 characters.
fn github_problems(log: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let runs = log["runs"].as_array().cloned().unwrap_or_default();
    if runs.is_empty() || runs.len() > 20 {
        problems.push(format!("{} runs", runs.len()));
    }
    for run in &runs {
        let Some(results) = run["results"].as_array() else {
            problems.push("a run without a results array".into());
            continue;
        };
        let rules = run["tool"]["driver"]["rules"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if run["tool"]["driver"]["name"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            problems.push("no driver name".into());
        }
        for rule in &rules {
            for key in ["shortDescription", "fullDescription", "help"] {
                let text = rule[key]["text"].as_str().unwrap_or_default();
                if text.is_empty() || text.chars().count() > 1024 && key != "help" {
                    problems.push(format!("rule {}: bad {key}", rule["id"]));
                }
            }
        }
        for result in results {
            let index = result["ruleIndex"].as_u64().map(|i| i as usize);
            match index.and_then(|i| rules.get(i)) {
                Some(rule) if rule["id"] == result["ruleId"] => {}
                _ => problems.push(format!("result with rule index {index:?}")),
            }
            if result["message"]["text"].as_str().is_none_or(str::is_empty) {
                problems.push("a result without a message".into());
            }
            if result["partialFingerprints"].as_object().is_none() {
                problems.push("a result without partial fingerprints".into());
            }
        }
    }
    problems
}

/// What changes between machines, runs and releases: the workspace's absolute path, the invocation
/// times and the bridge version.
fn normalise(mut log: Value) -> Value {
    let run = &mut log["runs"][0];
    for key in ["startTimeUtc", "endTimeUtc"] {
        if let Some(time) = run.pointer_mut(&format!("/invocations/0/{key}")) {
            *time = Value::from("<time>");
        }
    }
    if let Some(base) = run.pointer_mut("/originalUriBaseIds/%SRCROOT%/uri") {
        *base = Value::from("file:///<workspace>/");
    }
    for key in ["version", "semanticVersion"] {
        if let Some(v) = run.pointer_mut(&format!("/conversion/tool/driver/{key}")) {
            *v = Value::from("<asp-bridge version>");
        }
    }
    log
}

#[test]
fn every_fixture_decision_validates_against_the_oasis_schema_and_githubs_checks() {
    for (name, bytes) in saved_decisions() {
        let log = convert(&bytes);
        let errors = schema::errors(&log);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        let problems = github_problems(&log);
        assert!(problems.is_empty(), "{name}: {problems:#?}");
        assert_eq!(
            log["runs"][0]["properties"]["authoritative"], false,
            "{name}"
        );
        assert_eq!(
            log["runs"][0]["invocations"][0]["executionSuccessful"], true,
            "{name}"
        );
    }
}

#[test]
fn an_indeterminate_fixture_is_never_a_silent_clean() {
    for (name, bytes) in saved_decisions() {
        let log = convert(&bytes);
        let run = &log["runs"][0];
        if run["properties"]["decision"] == "allow" {
            continue;
        }
        let notes = run["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let results = run["results"].as_array().unwrap();
        assert!(
            !notes.is_empty() || !results.is_empty(),
            "{name}: a deny or indeterminate decision says why"
        );
        if run["properties"]["decision"] == "indeterminate" {
            assert!(!notes.is_empty(), "{name}: what did not run is named");
            assert_eq!(run["properties"]["coverage"]["complete"], false, "{name}");
        }
    }
}

#[test]
fn the_deny_fixtures_point_at_their_lines_with_githubs_line_hash() {
    let bytes = std::fs::read(fixtures().join("asp/outer/evaluate.deny.gating.json")).unwrap();
    let log = convert(&bytes);
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "lattice/secrets");
    assert_eq!(result["level"], "error");
    assert_eq!(result["baselineState"], "new");
    let region = &result["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 13);
    assert_eq!(region["startColumn"], 11);
    assert_eq!(region["endColumn"], 43);
    let fingerprints = result["partialFingerprints"].as_object().unwrap();
    assert_eq!(fingerprints["aspFingerprint/v1"], "sha256:deny0001");
    assert!(fingerprints.contains_key("primaryLocationLineHash"));
}

#[test]
fn every_fixture_decision_matches_its_snapshot() {
    let dir = fixtures().join("sarif");
    for (name, bytes) in saved_decisions() {
        let log = normalise(convert(&bytes));
        let mut text = serde_json::to_string_pretty(&log).unwrap();
        text.push('\n');
        let path = dir.join(name.replace(".json", ".sarif"));
        expect_test::expect_file![path].assert_eq(&text);
    }
}

#[test]
fn hostile_findings_still_give_a_valid_log() {
    let findings: Vec<Value> = (0..300)
        .map(|i| {
            serde_json::json!({
                "diagnostic": {
                    "code": (["x/a", "", "\u{202e}rtl/code", "ünï/😀"][i % 4]),
                    "severity": (["error", "warning", "info", "fatal", ""][i % 5]),
                    "source": (["", "p\u{200b}", "p", "ünï"][i % 4]),
                    "message": (["", "\u{0}\u{1b}[2J", "naïve 😀 \u{202E}x\u{202C}", "ok"][i % 4]),
                    "location": {
                        "path": (["", "./a b.ts", "/abs/outside.ts", "src/%41:b#c?.ts", "../up.ts"][i % 5]),
                        "range": {"start": {"line": i, "char": 4_000_000_000_u32},
                                  "end": {"line": 0, "char": 0}}
                    },
                    "fingerprint": "",
                    "help": (["", "[link](javascript:alert(1))"][i % 2]),
                    "codeDescription": {"href": (["not a uri", "https://ok.test/r", ""][i % 3])},
                },
                "disposition": (["gating", "advisory", "weird"][i % 3]),
                "nextStep": (["", "do \u{202e}this"][i % 2]),
            })
        })
        .collect();
    let decision = serde_json::json!({"decision": "mystery", "callSite": "", "findings": findings,
        "receipt": {"host": {"name": "", "version": 7}, "timing": {"startedAt": 5}}});
    let log = convert(decision.to_string().as_bytes());
    let errors = schema::errors(&log);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(
        github_problems(&log)
            .iter()
            .all(|p| p.contains("partial fingerprints"))
    );
}
