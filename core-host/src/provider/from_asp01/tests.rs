//! The compatibility layer replayed on opcore-asp-provider 0.2.1's own messages
//! (`tests/fixtures/opcore/`): each answer, once mapped, is a v1.0 message the host accepts, and
//! together they apply every row of the table.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::*;
use crate::assessment::{self, Expected};
use crate::schema::{self, Shape};

fn fixture(name: &str) -> Value {
    let text = match name {
        "initialize" => include_str!("../../../../tests/fixtures/opcore/initialize.json"),
        "refused" => {
            include_str!("../../../../tests/fixtures/opcore/initialize.asp-1.0.refused.json")
        }
        "type-errors" => {
            include_str!("../../../../tests/fixtures/opcore/evaluate.type-errors.json")
        }
        "project-level" => {
            include_str!("../../../../tests/fixtures/opcore/evaluate.project-level.json")
        }
        "positions" => include_str!("../../../../tests/fixtures/opcore/evaluate.positions.json"),
        "own-digest" => include_str!("../../../../tests/fixtures/opcore/evaluate.own-digest.json"),
        "callbacks" => include_str!("../../../../tests/fixtures/opcore/callbacks.type-errors.json"),
        other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).unwrap()
}

/// The provider's answer to a recorded evaluation, mapped, with what was applied.
fn mapped(name: &str, applied: &mut Applied) -> Value {
    assessment(fixture(name)["response"]["result"].clone(), applied)
}

/// The mapped answer is accepted as the host accepts any: schema, host-owned fields, `validAsOf`.
fn accepted(name: &str, answer: &Value) {
    let request = &fixture(name)["request"]["params"];
    let blobs: BTreeSet<String> = answer["validAsOf"]["blobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_owned())
        .collect();
    let expected = Expected {
        baseline: &request["changeset"]["baseline"],
        changeset_digest: request["changesetDigest"].as_str().unwrap(),
        blobs_read: &blobs,
    };
    if let Err(rejection) = assessment::accept(answer.clone(), &expected) {
        panic!("{name}: {rejection:?}\n{answer:#}");
    }
}

#[test]
fn the_table_names_every_mapping_once() {
    let all = [
        Mapping::Handshake,
        Mapping::CapabilityFields,
        Mapping::CapabilityExtras,
        Mapping::PathsScope,
        Mapping::CallSite,
        Mapping::Checks,
        Mapping::ChangesetDigest,
        Mapping::ColumnPositions,
        Mapping::PathlessLocation,
        Mapping::Timing,
        Mapping::EvidenceKind,
    ];
    let listed: Vec<Mapping> = TABLE.iter().map(|row| row.0).collect();
    assert_eq!(listed, all);
    let names: BTreeSet<&str> = TABLE.iter().map(|row| row.1).collect();
    assert_eq!(names.len(), TABLE.len(), "names are unique");
}

#[test]
fn opcores_own_messages_apply_every_row_of_the_table() {
    let mut applied = Applied::new();
    let _ = initialize_params(
        fixture("initialize")["request"]["params"].clone(),
        &mut applied,
    );
    let _ = initialize_result(
        fixture("initialize")["response"]["result"].clone(),
        &mut applied,
    );
    let _ = evaluate_params(
        v1_params(&fixture("type-errors")),
        CallSite::Interactive,
        "sha256:0",
        &mut applied,
    );
    for name in ["type-errors", "project-level", "positions"] {
        let _ = mapped(name, &mut applied);
    }
    let missing: Vec<&str> = TABLE
        .iter()
        .filter(|row| !applied.contains(&row.0))
        .map(|row| row.1)
        .collect();
    assert!(missing.is_empty(), "rows no fixture applies: {missing:?}");
}

#[test]
fn the_handshake_asks_for_asp_0_1_which_opcore_accepts_and_asp_1_0_it_refuses() {
    let recorded = fixture("initialize")["request"]["params"].clone();
    let mut v1 = recorded.clone();
    v1["protocolVersion"] = json!("asp/1.0");
    assert_eq!(initialize_params(v1, &mut Applied::new()), recorded);
    let refused = &fixture("refused")["response"]["error"];
    assert_eq!(refused["code"], -32014);
    assert_eq!(refused["data"]["failClass"], "contract");
}

#[test]
fn opcores_initialize_result_becomes_a_v1_initialize_result() {
    let raw = fixture("initialize")["response"]["result"].clone();
    assert!(schema::check(Shape::InitializeResult, &raw).is_err());
    let result = initialize_result(raw, &mut Applied::new());
    schema::check(Shape::InitializeResult, &result).unwrap();
    let check = &result["capabilities"]["check"];
    assert_eq!(check["capabilityVersion"], "check/0.1");
    assert_eq!(check["scopes"], json!(["changeset"]));
    assert_eq!(check["diagnosticSources"], json!(["opcore"]));
    assert!(check.get("manifest").is_none() && check.get("rules").is_none());
    assert_eq!(result["serverInfo"]["name"], "opcore");
    assert_eq!(result["requestedPermissions"]["read"], json!(["**/*"]));
}

/// The v1.0 params the host builds for the recorded request (what `Slot::evaluate` sends).
fn v1_params(recorded: &Value) -> Value {
    let params = &recorded["request"]["params"];
    json!({
        "changeset": params["changeset"],
        "scope": "changeset",
        "comparison": "all",
        "changesetDigest": params["changesetDigest"],
        "configuration": {"checks": params["checks"]},
    })
}

#[test]
fn evaluate_params_are_the_ones_opcore_answered() {
    let recorded = fixture("type-errors");
    let params = evaluate_params(
        v1_params(&recorded),
        CallSite::Interactive,
        recorded["request"]["params"]["changesetDigest"]
            .as_str()
            .unwrap(),
        &mut Applied::new(),
    );
    assert_eq!(params, recorded["request"]["params"]);
}

#[test]
fn a_configuration_key_never_replaces_a_host_parameter() {
    let params = evaluate_params(
        json!({"changeset": {"changes": []}, "scope": "changeset", "comparison": "all",
               "configuration": {"checks": ["typescript.types"], "callSite": "gate", "changeset": 1}}),
        CallSite::Sweep,
        "sha256:d",
        &mut Applied::new(),
    );
    assert_eq!(params["callSite"], "sweep");
    assert_eq!(params["changeset"], json!({"changes": []}));
    assert_eq!(params["changesetDigest"], "sha256:d");
    assert_eq!(params["checks"], json!(["typescript.types"]));
    assert!(params.get("configuration").is_none());
}

#[test]
fn the_host_digest_is_the_one_opcore_computes_itself() {
    let own = fixture("own-digest");
    assert_eq!(
        crate::json::digest(&own["changeset"]),
        own["validAsOf"]["changesetDigest"].as_str().unwrap()
    );
}

#[test]
fn type_errors_become_file_level_v1_findings() {
    let answer = mapped("type-errors", &mut Applied::new());
    accepted("type-errors", &answer);
    let found: Vec<(&str, &Value)> = answer["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), &d["location"]))
        .collect();
    assert_eq!(
        found,
        [
            (
                "opcore/typescript.types/2322",
                &json!({"path": "src/index.ts"})
            ),
            (
                "opcore/typescript.types/2345",
                &json!({"path": "src/index.ts"})
            ),
        ]
    );
    let raw = &fixture("type-errors")["response"]["result"]["timing"];
    assert_eq!(answer["timing"], json!({"elapsedMs": raw["durationMs"]}));
}

#[test]
fn a_project_level_finding_stays_a_finding_on_the_workspace() {
    let answer = mapped("project-level", &mut Applied::new());
    accepted("project-level", &answer);
    let diagnostic = &answer["diagnostics"][0];
    assert_eq!(diagnostic["code"], "opcore/typescript.types/6046");
    assert_eq!(diagnostic["location"], json!({"path": ""}));
    assert_eq!(
        fixture("project-level")["response"]["result"]["diagnostics"][0]["location"],
        json!({})
    );
}

#[test]
fn one_based_columns_become_zero_based_chars() {
    let answer = mapped("positions", &mut Applied::new());
    accepted("positions", &answer);
    assert_eq!(answer["status"], "incomplete");
    let syntax = &answer["diagnostics"][0];
    assert_eq!(syntax["code"], "opcore/python.syntax/PY_SYNTAX_ERROR");
    // `def f(:` reported at line 1, columns 7 to 8: the `:` (0-based line 0, char 6).
    assert_eq!(
        syntax["location"],
        json!({"path": "app.py", "range": {"start": {"line": 0, "char": 6}, "end": {"line": 0, "char": 7}}})
    );
    let context = answer["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["data"]["evidenceKind"] == "python_project_context")
        .expect("the python_project_context evidence is kept");
    assert_eq!(context["kind"], "message");
    assert_eq!(context["data"]["target"], "app.py");
}

#[test]
fn partial_positions_and_v1_positions() {
    let mut applied = Applied::new();
    let answer = assessment(
        json!({"diagnostics": [
            {"location": {"path": "a", "range": {"start": {"line": 3}}}},
            {"location": {"path": "b", "range": {"start": {"line": 2, "column": 5}, "end": {"line": 1}}}},
            {"location": {"path": "c", "range": {"start": {"line": 2, "char": 5}, "end": {"line": 2, "char": 9}}}},
            {"location": {"path": "d", "range": {"end": {"line": 2}}}},
            {"message": "no location at all"},
            {"location": {"range": {"start": {"line": 1, "column": 1}}}},
        ]}),
        &mut applied,
    );
    let locations: Vec<&Value> = answer["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["location"])
        .collect();
    assert_eq!(
        locations,
        [
            &json!({"path": "a", "range": {"start": {"line": 2, "char": 0}, "end": {"line": 2, "char": 0}}}),
            &json!({"path": "b", "range": {"start": {"line": 1, "char": 4}, "end": {"line": 1, "char": 4}}}),
            &json!({"path": "c", "range": {"start": {"line": 2, "char": 5}, "end": {"line": 2, "char": 9}}}),
            &json!({"path": "d"}),
            &json!({"path": ""}),
            &json!({"path": ""}),
        ]
    );
}
