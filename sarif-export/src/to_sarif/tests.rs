//! Tests of the mapping, one per point of the issue, on small decisions written inline.

use std::time::{Duration, UNIX_EPOCH};

use asp_wire::proto::Decision;
use serde_json::{Value, json};

use crate::{HostIdentity, Limits, Options, export};

/// A decision with `findings` and whole coverage, as a host would send it.
fn decision(findings: Value) -> Decision {
    decision_with(findings, json!({}))
}

fn decision_with(findings: Value, overrides: Value) -> Decision {
    let mut value = json!({
        "pass": false,
        "decision": "deny",
        "callSite": "sweep",
        "findings": findings,
        "coverage": {"exhaustive": true, "required": ["lattice"], "enrolled": ["lattice"],
                     "ran": ["lattice"], "degraded": []},
        "policyDigest": "sha256:policy",
        "requestDigest": "sha256:request",
        "authorityEvidence": [],
        "validAsOf": {"rev": "tree:abc"},
        "assurance": {"mode": "gated", "transactionGuarantee": "none"},
        "receipt": {"receiptId": "r-1", "issuedAt": "2026-06-22T20:02:00Z",
                    "host": {"name": "core-host", "version": "0.1.0-private"},
                    "timing": {"startedAt": "2026-06-23T00:00:00Z", "endedAt": "2026-06-23T00:00:01Z",
                               "elapsedMs": 1000},
                    "failures": []},
    });
    if let (Value::Object(base), Value::Object(extra)) = (&mut value, overrides) {
        base.extend(extra);
    }
    serde_json::from_value(value).expect("a decision")
}

fn finding(code: &str, severity: &str, path: &str, line: u32) -> Value {
    json!({
        "diagnostic": {
            "code": code, "severity": severity, "source": "lattice",
            "message": format!("{code} at {path}:{line}"),
            "location": {"path": path,
                         "range": {"start": {"line": line, "char": 4}, "end": {"line": line, "char": 9}}},
            "fingerprint": format!("sha256:{code}:{line}"),
        },
        "authority": {"identity": "the-open-engine", "integrity": "sha256:0", "isolation": "gated",
                      "authority": {"granted": true, "requirement": "lattice-check"}},
        "disposition": "advisory",
    })
}

/// An error `r/e` on the first line of `a.ts` whose message is `message`.
fn saying(message: &str) -> Value {
    let mut finding = finding("r/e", "error", "a.ts", 0);
    finding["diagnostic"]["message"] = json!(message);
    finding
}

fn sarif(decision: &Decision) -> Value {
    export(decision, &Options::default()).to_json()
}

fn run(log: &Value) -> &Value {
    &log["runs"][0]
}

/// The run's tool execution notifications.
fn notifications(log: &Value) -> &[Value] {
    let notes = &run(log)["invocations"][0]["toolExecutionNotifications"];
    notes.as_array().map_or(&[], Vec::as_slice)
}

/// The notification `id` of the run; fails the test if there is none.
fn notification<'a>(log: &'a Value, id: &str) -> &'a Value {
    let notes = notifications(log);
    let note = notes.iter().find(|n| n["descriptor"]["id"] == id);
    note.unwrap_or_else(|| panic!("no {id} notification: {notes:#?}"))
}

#[test]
fn one_log_of_version_2_1_0_with_one_run_and_a_results_array() {
    let log = sarif(&decision(json!([])));
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(
        log["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    assert_eq!(log["runs"].as_array().unwrap().len(), 1);
    assert_eq!(
        run(&log)["results"],
        json!([]),
        "an empty array closes alerts"
    );
}

#[test]
fn the_driver_is_the_host_with_its_version_and_semantic_version() {
    let log = sarif(&decision(json!([])));
    let driver = &run(&log)["tool"]["driver"];
    assert_eq!(driver["name"], "core-host");
    assert_eq!(driver["version"], "0.1.0-private");
    assert_eq!(driver["semanticVersion"], "0.1.0-private");
    assert_eq!(driver["rules"], json!([]));
}

#[test]
fn a_host_version_that_is_not_semver_has_no_semantic_version() {
    let mut d = decision(json!([]));
    d.receipt.raw["host"]["version"] = json!("build 7");
    let log = sarif(&d);
    let driver = &run(&log)["tool"]["driver"];
    assert_eq!(driver["version"], "build 7");
    assert!(driver.get("semanticVersion").is_none());
}

#[test]
fn without_a_host_in_the_receipt_the_driver_is_asp_host_or_the_status_host() {
    let mut d = decision(json!([]));
    d.receipt.raw = json!({"receiptId": "r-1"});
    let log = sarif(&d);
    assert_eq!(run(&log)["tool"]["driver"]["name"], "asp-host");
    assert!(run(&log)["tool"]["driver"].get("version").is_none());
    let options = Options {
        host: Some(HostIdentity {
            name: "@the-open-engine/asp".into(),
            version: "0.1.0-alpha.0".into(),
        }),
        ..Options::default()
    };
    let log = export(&d, &options).to_json();
    assert_eq!(run(&log)["tool"]["driver"]["name"], "@the-open-engine/asp");
    assert_eq!(
        run(&log)["tool"]["driver"]["semanticVersion"],
        "0.1.0-alpha.0"
    );
}

#[test]
fn asp_bridge_is_named_as_the_converter_not_the_tool() {
    let log = sarif(&decision(json!([])));
    let conversion = &run(&log)["conversion"];
    assert_eq!(conversion["tool"]["driver"]["name"], "asp-bridge");
    assert_eq!(conversion["properties"]["authoritative"], false);
}

#[test]
fn the_rules_catalogue_has_one_rule_per_code_and_results_point_at_it() {
    let mut second = finding("lattice/secrets", "error", "src/b.ts", 3);
    second["diagnostic"]["help"] = json!("Move the secret to runtime configuration.");
    second["diagnostic"]["codeDescription"] = json!({"href": "https://example.test/secrets"});
    let d = decision(json!([
        finding("lattice/style", "warning", "src/a.ts", 1),
        finding("lattice/secrets", "error", "src/a.ts", 2),
        second,
    ]));
    let log = sarif(&d);
    let rules = run(&log)["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .clone();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["lattice/style", "lattice/secrets"]);
    let results = run(&log)["results"].as_array().unwrap();
    let indices: Vec<i64> = results
        .iter()
        .map(|r| r["ruleIndex"].as_i64().unwrap())
        .collect();
    assert_eq!(indices, [0, 1, 1]);
    for result in results {
        let index = usize::try_from(result["ruleIndex"].as_i64().unwrap()).unwrap();
        assert_eq!(result["ruleId"], rules[index]["id"]);
    }
    let secrets = &rules[1];
    assert_eq!(secrets["name"], "LatticeSecrets");
    assert_eq!(
        secrets["shortDescription"]["text"],
        "lattice/secrets (reported by lattice)"
    );
    assert!(
        secrets["fullDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("lattice/secrets")
    );
    assert_eq!(
        secrets["help"]["text"],
        "Move the secret to runtime configuration."
    );
    assert_eq!(
        secrets["help"]["markdown"],
        "Move the secret to runtime configuration\\.\n\n[Rule documentation](<https://example.test/secrets>)"
    );
    assert_eq!(secrets["helpUri"], "https://example.test/secrets");
    assert_eq!(secrets["defaultConfiguration"]["level"], "error");
    assert_eq!(secrets["properties"]["tags"], json!(["asp", "lattice"]));
    assert_eq!(secrets["properties"]["problem.severity"], "error");
    let style = &rules[0];
    assert!(
        style["help"]["text"].as_str().unwrap().contains("no help"),
        "help is never empty"
    );
    assert!(style.get("helpUri").is_none());
    assert_eq!(style["properties"]["problem.severity"], "warning");
}

#[test]
fn a_diagnostic_without_a_code_gets_a_stable_rule_id() {
    let d = decision(json!([finding("", "info", "a.ts", 0)]));
    let log = sarif(&d);
    assert_eq!(run(&log)["results"][0]["ruleId"], "asp/unnamed-rule");
    assert_eq!(
        run(&log)["tool"]["driver"]["rules"][0]["id"],
        "asp/unnamed-rule"
    );
}

#[test]
fn providers_are_tool_extensions_with_their_authority_evidence() {
    let mut other = finding("acme/x", "info", "a.ts", 0);
    other["diagnostic"]["source"] = json!("acme-secrets");
    other["authority"]["authority"]["granted"] = json!(false);
    let d = decision(json!([
        finding("lattice/a", "error", "a.ts", 0),
        other,
        finding("lattice/b", "error", "a.ts", 1)
    ]));
    let log = sarif(&d);
    let extensions = run(&log)["tool"]["extensions"].as_array().unwrap().clone();
    let names: Vec<&str> = extensions
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lattice", "acme-secrets"]);
    let lattice = &extensions[0]["properties"];
    assert_eq!(lattice["findings"], 2);
    assert_eq!(
        lattice["authorityEvidence"],
        json!([{"identity": "the-open-engine", "integrity": "sha256:0", "isolation": "gated",
                "authority": {"granted": true, "requirement": "lattice-check"}}]),
        "the same evidence is listed once"
    );
    assert_eq!(
        extensions[1]["properties"]["authorityEvidence"][0]["authority"]["granted"],
        false
    );
    assert_eq!(
        run(&log)["results"][1]["properties"]["authorityGranted"],
        false
    );
    assert_eq!(
        run(&log)["results"][1]["properties"]["provider"],
        "acme-secrets"
    );
}

#[test]
fn levels_map_error_warning_info_to_error_warning_note() {
    let d = decision(json!([
        finding("r/e", "error", "a.ts", 0),
        finding("r/w", "warning", "a.ts", 0),
        finding("r/i", "info", "a.ts", 0),
        finding("r/x", "critical", "a.ts", 0),
    ]));
    let log = sarif(&d);
    let levels = test_support::strs(&run(&log)["results"], "level");
    assert_eq!(levels, ["error", "warning", "note", "warning"]);
    assert_eq!(
        run(&log)["results"][3]["properties"]["severity"],
        "critical",
        "an unknown severity is kept as sent"
    );
}

#[test]
fn the_message_carries_the_next_step() {
    let mut f = saying("introduced secret literal");
    f["nextStep"] = json!("Move the secret to runtime configuration.");
    f["nextStepOrigin"] = json!("server");
    f["disposition"] = json!("gating");
    f["severityNote"] = json!("capped by policy");
    let mut same = finding("r/e", "error", "a.ts", 1);
    same["nextStep"] = same["diagnostic"]["message"].clone();
    let log = sarif(&decision(json!([f, same])));
    let result = &run(&log)["results"][0];
    assert_eq!(
        result["message"]["text"],
        "introduced secret literal\n\nNext step: Move the secret to runtime configuration."
    );
    let properties = &result["properties"];
    assert_eq!(properties["disposition"], "gating");
    assert_eq!(
        properties["nextStep"],
        "Move the secret to runtime configuration."
    );
    assert_eq!(properties["nextStepOrigin"], "server");
    assert_eq!(properties["severityNote"], "capped by policy");
    assert_eq!(properties["severity"], "error");
    assert_eq!(
        run(&log)["results"][1]["message"]["text"],
        "r/e at a.ts:1",
        "a next step equal to the message is not repeated"
    );
}

#[test]
fn hidden_and_bidi_characters_never_reach_the_message_and_it_is_never_empty() {
    let f = saying("naïve 漢字 😀 \u{202E}rtl\u{202C} finding");
    let empty = saying("\u{200b}");
    let log = sarif(&decision(json!([f, empty])));
    assert_eq!(
        run(&log)["results"][0]["message"]["text"],
        "naïve 漢字 😀 rtl finding"
    );
    assert_eq!(run(&log)["results"][1]["message"]["text"], "(no message)");
}

#[test]
fn locations_are_relative_to_srcroot_percent_encoded_with_1_based_regions() {
    let d = decision(json!([finding("r/e", "error", "src/ünï/файл 😀.ts", 12)]));
    let log = sarif(&d);
    let physical = &run(&log)["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"],
        json!({"uri": "src/%C3%BCn%C3%AF/%D1%84%D0%B0%D0%B9%D0%BB%20%F0%9F%98%80.ts", "uriBaseId": "%SRCROOT%"})
    );
    assert_eq!(
        physical["region"],
        json!({"startLine": 13, "startColumn": 5, "endLine": 13, "endColumn": 10}),
        "0-based line 12 char 4..9 is 1-based line 13 columns 5..10 (end exclusive)"
    );
    assert_eq!(run(&log)["columnKind"], "utf16CodeUnits");
    assert!(
        run(&log).get("originalUriBaseIds").is_none(),
        "no workspace, no base URI"
    );
}

#[test]
fn host_paths_outside_the_workspace_are_never_locations_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let inside = format!("file://{}/src/a.ts", root.display());
    let paths = [
        "../../etc/passwd",
        "file:///etc/passwd",
        "/etc/passwd",
        "src/../../x",
        inside.as_str(),
    ];
    let findings: Vec<Value> = paths
        .iter()
        .map(|p| finding("r/e", "error", p, 1))
        .collect();
    let d = decision(Value::Array(findings));
    let options = Options {
        repo: Some(root),
        ..Options::default()
    };
    let log = export(&d, &options).to_json();
    let results = run(&log)["results"].as_array().unwrap();
    assert_eq!(results.len(), 5, "every finding is still a result");
    for (result, path) in results[..4].iter().zip(paths) {
        assert_eq!(
            result["locations"],
            json!([{"physicalLocation": {"artifactLocation": {"uri": ".", "uriBaseId": "%SRCROOT%"}}}]),
            "{path}: on the repository root, as GitHub refuses results without a location"
        );
        let why = result["properties"]["locationRefused"].as_str().unwrap();
        assert!(why.contains("is not shown"), "{why}");
    }
    assert!(
        results[0]["properties"]["locationRefused"]
            .as_str()
            .unwrap()
            .contains("`..`")
    );
    assert!(
        results[1]["properties"]["locationRefused"]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );
    let uri = &results[4]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(uri, &json!({"uri": "src/a.ts", "uriBaseId": "%SRCROOT%"}));
    assert!(results[4]["properties"].get("locationRefused").is_none());
    let note = notification(&log, "asp-bridge/paths-outside-workspace");
    assert_eq!(note["properties"]["results"], 4);
    let text = log.to_string();
    assert!(!text.contains("etc/passwd\""), "no URI names it: {text}");
}

#[test]
fn a_diagnostic_without_a_range_gets_a_file_level_location() {
    let mut f = finding("r/e", "error", "src/a.ts", 0);
    f["diagnostic"]["location"] = json!({"path": "src/a.ts"});
    let log = sarif(&decision(json!([f])));
    let physical = &run(&log)["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "src/a.ts");
    assert!(physical.get("region").is_none());
}

#[test]
fn a_finding_that_names_no_file_is_located_on_the_workspace_root() {
    let mut findings = Vec::new();
    for location in [json!({}), json!({"path": ""}), json!({"path": "."})] {
        let mut f = finding("opcore/typescript.types/6046", "error", "x", 0);
        f["diagnostic"]["location"] = location;
        findings.push(f);
    }
    let log = sarif(&decision(Value::Array(findings)));
    let results = run(&log)["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "nothing is dropped");
    for result in results {
        assert_eq!(
            result["locations"],
            json!([{"physicalLocation": {"artifactLocation": {"uri": ".", "uriBaseId": "%SRCROOT%"}}}])
        );
        assert_eq!(result["properties"]["projectLevel"], true);
        assert!(result["properties"].get("locationRefused").is_none());
    }
}

#[test]
fn a_range_that_ends_before_it_starts_becomes_an_empty_region() {
    let mut f = finding("r/e", "error", "a.ts", 0);
    f["diagnostic"]["location"]["range"] =
        json!({"start": {"line": 5, "char": 3}, "end": {"line": 2, "char": 0}});
    let log = sarif(&decision(json!([f])));
    assert_eq!(
        run(&log)["results"][0]["locations"][0]["physicalLocation"]["region"],
        json!({"startLine": 6, "startColumn": 4, "endLine": 6, "endColumn": 4})
    );
}

#[test]
fn with_a_workspace_the_base_uri_is_given_and_line_hashes_are_computed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), " a\nb\n  \t\tc\n d").unwrap();
    let d = decision(json!([
        finding("r/e", "error", "a.txt", 1),
        finding("r/e", "error", "gone.txt", 1)
    ]));
    let options = Options {
        repo: Some(root.clone()),
        ..Options::default()
    };
    let log = export(&d, &options).to_json();
    let base = run(&log)["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    assert_eq!(
        run(&log)["results"][0]["partialFingerprints"],
        json!({"aspFingerprint/v1": "sha256:r/e:1", "primaryLocationLineHash": "54703d4cd895b18:1"})
    );
    assert_eq!(
        run(&log)["results"][1]["partialFingerprints"],
        json!({"aspFingerprint/v1": "sha256:r/e:1"}),
        "an unreadable file has no line hash"
    );
}

#[test]
fn introduced_findings_are_new_to_the_baseline() {
    let mut new = finding("r/e", "error", "a.ts", 0);
    new["diagnostic"]["introduced"] = json!(true);
    let mut old = finding("r/e", "error", "a.ts", 1);
    old["diagnostic"]["introduced"] = json!(false);
    let log = sarif(&decision(json!([
        new,
        old,
        finding("r/e", "error", "a.ts", 2)
    ])));
    let results = run(&log)["results"].as_array().unwrap();
    assert_eq!(results[0]["baselineState"], "new");
    assert_eq!(results[0]["properties"]["introduced"], true);
    assert!(results[1].get("baselineState").is_none());
    assert_eq!(results[1]["properties"]["introduced"], false);
    assert!(results[2].get("baselineState").is_none());
}

#[test]
fn the_invocation_is_successful_and_names_what_did_not_run() {
    let d = decision_with(
        json!([]),
        json!({
            "decision": "indeterminate",
            "coverage": {"exhaustive": false, "required": ["lattice"], "ran": [],
                         "degraded": [{"source": "lattice", "reason": "crashed", "detail": "exit 9",
                                       "capability": "check"}]},
        }),
    );
    let mut d = d;
    d.receipt.failures = vec![
        d.coverage.degraded[0].clone(),
        serde_json::from_value(json!({"source": "acme", "reason": "timed-out", "detail": "30 s"}))
            .unwrap(),
    ];
    let log = sarif(&d);
    let invocation = &run(&log)["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    assert_eq!(
        invocation["startTimeUtc"], "2026-06-23T00:00:00Z",
        "the host's own timing"
    );
    assert_eq!(invocation["endTimeUtc"], "2026-06-23T00:00:01Z");
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(
        notes.len(),
        2,
        "coverage and receipt failures, each once: {notes:?}"
    );
    assert_eq!(notes[0]["level"], "warning");
    assert_eq!(notes[0]["descriptor"]["id"], "asp/coverage/crashed");
    assert_eq!(
        notes[0]["message"]["text"],
        "coverage degraded: lattice: crashed: exit 9"
    );
    assert_eq!(
        notes[0]["properties"],
        json!({"source": "lattice", "reason": "crashed", "detail": "exit 9", "capability": "check"})
    );
    assert_eq!(
        notes[1]["message"]["text"],
        "coverage degraded: acme: timed-out: 30 s"
    );
    assert_eq!(run(&log)["properties"]["coverage"]["complete"], false);
}

#[test]
fn required_coverage_that_ran_and_blocked_is_a_note_not_a_gap() {
    let d = decision_with(
        json!([finding("r/e", "error", "a.ts", 0)]),
        json!({
            "coverage": {"exhaustive": true, "required": ["lattice"], "ran": ["lattice"],
                         "degraded": [{"source": "lattice", "reason": "blocking-diagnostic",
                                       "detail": "1 error"}]},
        }),
    );
    let log = sarif(&d);
    let notes = notifications(&log);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["level"], "note");
    assert_eq!(
        notes[0]["descriptor"]["id"],
        "asp/coverage/blocking-diagnostic"
    );
    assert_eq!(
        notes[0]["message"]["text"],
        "ran and blocked: lattice: blocking-diagnostic: 1 error"
    );
}

#[test]
fn an_unexplained_refusal_is_never_a_silent_clean() {
    let log = sarif(&decision(json!([])));
    let notes = &run(&log)["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(
        notes[0]["descriptor"]["id"],
        "asp-bridge/unexplained-decision"
    );
    assert!(
        notes[0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("decided deny")
    );
}

#[test]
fn a_clean_allow_has_no_notifications() {
    let log = sarif(&decision_with(
        json!([]),
        json!({"decision": "allow", "pass": true}),
    ));
    let invocation = &run(&log)["invocations"][0];
    assert!(invocation.get("toolExecutionNotifications").is_none());
    assert_eq!(run(&log)["properties"]["coverage"]["complete"], true);
}

#[test]
fn without_host_timing_the_invocation_has_the_bridges_times() {
    let mut d = decision(json!([]));
    d.receipt.raw["timing"] = json!({"startedAt": "soon"});
    let options = Options {
        started_at: Some(UNIX_EPOCH + Duration::from_secs(86_400)),
        ended_at: Some(UNIX_EPOCH + Duration::from_millis(86_400_250)),
        ..Options::default()
    };
    let log = export(&d, &options).to_json();
    let invocation = &run(&log)["invocations"][0];
    assert_eq!(invocation["startTimeUtc"], "1970-01-02T00:00:00.000Z");
    assert_eq!(invocation["endTimeUtc"], "1970-01-02T00:00:00.250Z");
    let log = sarif(&d);
    assert!(
        log["runs"][0]["invocations"][0]
            .get("startTimeUtc")
            .is_none()
    );
}

#[test]
fn run_properties_carry_the_decision_and_say_it_is_not_authoritative() {
    let log = sarif(&decision(json!([finding("r/e", "error", "a.ts", 0)])));
    let p = &run(&log)["properties"];
    assert_eq!(p["authoritative"], false);
    assert_eq!(p["decision"], "deny");
    assert_eq!(p["callSite"], "sweep");
    assert_eq!(p["policyDigest"], "sha256:policy");
    assert_eq!(p["requestDigest"], "sha256:request");
    assert_eq!(p["validAsOf"], json!({"rev": "tree:abc"}));
    assert_eq!(p["receiptId"], "r-1");
    assert_eq!(
        p["receipt"]["issuedAt"], "2026-06-22T20:02:00Z",
        "the receipt is kept whole"
    );
    assert_eq!(
        p["assurance"],
        json!({"mode": "gated", "transactionGuarantee": "none"})
    );
    assert_eq!(
        p["coverage"],
        json!({"complete": true, "exhaustive": true, "required": ["lattice"], "ran": ["lattice"], "degraded": []})
    );
    assert_eq!(p["findings"], 1);
    assert!(p.get("omittedFindings").is_none());
}

#[test]
fn automation_details_only_with_a_category_which_ends_with_a_slash() {
    let d = decision(json!([]));
    assert!(run(&sarif(&d)).get("automationDetails").is_none());
    for (category, id) in [("asp", "asp/"), ("asp/", "asp/"), ("ci/asp", "ci/asp/")] {
        let options = Options {
            category: Some(category.into()),
            ..Options::default()
        };
        let log = export(&d, &options).to_json();
        assert_eq!(run(&log)["automationDetails"], json!({"id": id}));
    }
}

#[test]
fn past_the_results_limit_the_most_severe_are_kept_and_a_notification_says_how_many_not() {
    let findings: Vec<Value> = (0..10)
        .map(|i| {
            finding(
                &format!("r/{}", i % 3),
                if i % 4 == 0 { "error" } else { "info" },
                "a.ts",
                i,
            )
        })
        .collect();
    let options = crate::options::limited(|l| l.results_per_run = 4);
    let decision = decision(Value::Array(findings));
    let export = export(&decision, &options);
    let log = export.to_json();
    let results = run(&log)["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let lines: Vec<i64> = results
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        lines,
        [1, 2, 5, 9],
        "the three errors, then the first info, in host order"
    );
    let note = notification(&log, "asp-bridge/results-limit");
    let text = note["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("6 of 10 findings were left out"), "{text}");
    assert_eq!(note["properties"]["omitted"], 6);
    assert_eq!(run(&log)["properties"]["omittedFindings"], 6);
    assert_eq!(export.summary().omitted_results, 6);
    let rules = run(&log)["tool"]["driver"]["rules"].as_array().unwrap();
    for result in results {
        assert!(usize::try_from(result["ruleIndex"].as_i64().unwrap()).unwrap() < rules.len());
    }
}

#[test]
fn past_the_extensions_limit_providers_are_left_out_with_a_notification() {
    let findings: Vec<Value> = (0..5)
        .map(|i| {
            let mut f = finding("r/e", "error", "a.ts", i);
            f["diagnostic"]["source"] = json!(format!("p{i}"));
            f
        })
        .collect();
    let options = crate::options::limited(|l| l.extensions_per_run = 2);
    let decision = decision(Value::Array(findings));
    let log = export(&decision, &options).to_json();
    assert_eq!(run(&log)["tool"]["extensions"].as_array().unwrap().len(), 2);
    assert_eq!(
        run(&log)["results"].as_array().unwrap().len(),
        5,
        "results are all kept"
    );
    let note = notification(&log, "asp-bridge/extensions-limit");
    assert_eq!(note["properties"]["omitted"], 3);
}

#[test]
fn tags_locations_and_runs_stay_within_githubs_limits() {
    let findings: Vec<Value> = (0..50)
        .map(|i| finding(&format!("r/{i}"), "error", "a.ts", i))
        .collect();
    let log = sarif(&decision(Value::Array(findings)));
    let limits = Limits::GITHUB;
    assert!(log["runs"].as_array().unwrap().len() <= limits.runs_per_file);
    for rule in run(&log)["tool"]["driver"]["rules"].as_array().unwrap() {
        assert!(rule["properties"]["tags"].as_array().unwrap().len() <= limits.tags_per_rule);
        assert!(
            rule["shortDescription"]["text"]
                .as_str()
                .unwrap()
                .chars()
                .count()
                <= 1024
        );
        assert!(
            rule["fullDescription"]["text"]
                .as_str()
                .unwrap()
                .chars()
                .count()
                <= 1024
        );
    }
    for result in run(&log)["results"].as_array().unwrap() {
        assert!(result["locations"].as_array().unwrap().len() <= limits.locations_per_result);
    }
}

#[test]
fn paths_left_out_of_the_evaluation_are_named_in_one_notification() {
    let options = Options {
        left_out: vec![bridge_core::changeset::Skipped {
            path: "pipe\u{1b}[2K".into(),
            why: "a FIFO".into(),
        }],
        ..Options::default()
    };
    let log = export(&decision(json!([])), &options).to_json();
    let note = notification(&log, "asp-bridge/paths-left-out");
    assert_eq!(note["level"], "warning");
    assert_eq!(
        note["properties"],
        json!({"count": 1, "paths": [{"path": "pipe[2K", "why": "a FIFO"}]})
    );
}
