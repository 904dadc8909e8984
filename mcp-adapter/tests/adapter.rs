//! The MCP adapter in-process: an rmcp client over an in-memory duplex, in both MCP eras, against an
//! in-process fake host. Each test states one rule of the adapter (issue 4, DESIGN §2 and §4).

mod adapter {
    pub(crate) mod client;
    pub(crate) mod fake_host;
    mod faults;
}

use std::collections::BTreeSet;
use std::path::PathBuf;

use adapter::client::{ERAS, Era, content, open, open_well, open_with_budget};
use adapter::fake_host::{FakeHost, Script};
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};
use test_support::git::Repo;
use test_support::mcp::TOOLS;

/// A git repository with one commit and one modified file (`src/api.ts`).
fn workspace() -> Repo {
    let repo = Repo::new(&[
        ("src/api.ts", "export const a = 1;\n"),
        ("README.md", "hello\n"),
    ]);
    repo.write("src/api.ts", "export const a = 'sk_live_x';\n");
    repo
}

fn arguments_for(tool: &str) -> Value {
    match tool {
        "asp_inspect" => {
            json!({"request": {"kind": "fixture/graph", "symbol": {"path": "src/api.ts"}}})
        }
        _ => json!({}),
    }
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools.iter().find(|t| t.name == name).expect("tool listed")
}

/// Fails unless `value` conforms to `tool`'s outputSchema.
fn assert_conforms(tool: &Tool, value: &Value) {
    let schema = Value::Object(
        tool.output_schema
            .as_ref()
            .expect("outputSchema")
            .as_ref()
            .clone(),
    );
    let validator = jsonschema::validator_for(&schema).expect("output schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{} output does not match its schema: {errors:#?}\n{value:#}",
        tool.name
    );
}

/// Fails unless `result` is an isError result naming `fail_class`; returns its content.
fn assert_failed(result: &CallToolResult, fail_class: &str) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let body = content(result).clone();
    assert_eq!(body["failClass"], fail_class, "{body:#}");
    assert_eq!(body["authoritative"], false);
    assert!(
        body["cause"].as_str().is_some_and(|c| !c.is_empty()),
        "{body:#}"
    );
    assert!(
        body.get("findings").is_none(),
        "a failure is never an empty clean result"
    );
    let tool = body["tool"].as_str().expect("the failure names its tool");
    let path = schemas_dir().join(format!("{tool}.output.schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("output schema compiles");
    assert!(
        validator.is_valid(&body),
        "a failure conforms to the outputSchema too: {body:#}"
    );
    body
}

fn methods_received(host: &FakeHost, method: &str) -> Vec<Value> {
    host.received()
        .into_iter()
        .filter(|m| m["method"] == method)
        .collect()
}

// ---- the tool surface ------------------------------------------------------------------------------

fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas/mcp")
}

/// Compares `actual`, pretty-printed, with the committed file at `path` (`UPDATE_EXPECT=1` rewrites it).
fn check_file(path: PathBuf, actual: &Value) {
    let text = format!("{}\n", serde_json::to_string_pretty(actual).unwrap());
    expect_test::expect_file![path].assert_eq(&text);
}

#[tokio::test]
async fn tools_list_is_the_same_in_both_eras_and_matches_the_snapshot_and_schemas() {
    let repo = workspace();
    let mut lists = Vec::new();
    for era in ERAS {
        let (_, session) = open_well(repo.path(), era).await;
        lists.push(serde_json::to_value(session.tools().await).unwrap());
        session.close().await.unwrap();
    }
    assert_eq!(lists[0], lists[1], "both eras list the same tools");
    let mut listed = lists.remove(0);
    let names = test_support::strs(&listed, "name");
    assert_eq!(names, TOOLS, "five tools, in a deterministic order");
    assert_eq!(mcp_adapter::TOOL_NAMES, TOOLS);

    for tool in listed.as_array_mut().unwrap() {
        let name = tool["name"].as_str().unwrap().to_owned();
        let schema = tool
            .as_object_mut()
            .unwrap()
            .remove("outputSchema")
            .unwrap();
        check_file(
            schemas_dir().join(format!("{name}.output.schema.json")),
            &schema,
        );
        tool["outputSchema"] = json!({"$ref": format!("schemas/mcp/{name}.output.schema.json")});
    }
    check_file(snapshot_dir().join("tools-list.json"), &listed);
}

#[tokio::test]
async fn every_tool_is_a_read_only_hint_with_object_schemas() {
    let repo = workspace();
    let (_, session) = open_well(repo.path(), Era::Legacy).await;
    for tool in session.tools().await {
        let hints = tool.annotations.as_ref().expect("annotations");
        assert_eq!(
            (
                hints.read_only_hint,
                hints.destructive_hint,
                hints.idempotent_hint,
                hints.open_world_hint
            ),
            (Some(true), Some(false), Some(true), Some(false)),
            "{}",
            tool.name
        );
        assert_eq!(tool.input_schema["type"], "object");
        assert_eq!(tool.output_schema.as_ref().unwrap()["type"], "object");
        let nullable = serde_json::to_string(&tool.input_schema)
            .unwrap()
            .contains("\"null\"");
        assert!(
            !nullable,
            "{}: no nullable argument types (unportable)",
            tool.name
        );
        assert!(tool.name.len() <= 20);
    }
    session.close().await.unwrap();
}

#[tokio::test]
async fn the_server_advertises_a_non_authoritative_asp_entry_and_advisory_instructions() {
    let repo = workspace();
    for era in ERAS {
        let (_, session) = open_well(repo.path(), era).await;
        let info = session.client.peer_info().expect("server info");
        let info = serde_json::to_value(&*info).unwrap();
        let entry = &info["capabilities"]["experimental"]["dev.asp-bridge/asp"];
        assert_eq!(entry["authoritative"], false, "{era:?}: {info:#}");
        assert_eq!(entry["bindingCandidate"], "mcp-extension");
        assert_eq!(entry["gateCallSites"], json!([]));
        assert_eq!(entry["outerProtocol"], "asp-outer/1.x");
        let extensions = &info["capabilities"]["extensions"]["dev.asp-bridge/asp"];
        match era {
            Era::Legacy => assert!(
                extensions.is_null(),
                "extensions is a 2026-07-28 capability"
            ),
            Era::Modern => assert_eq!(extensions, entry),
        }
        let instructions = info["instructions"].as_str().expect("instructions");
        assert!(instructions.contains("advisory") && instructions.contains("satisfies no gate"));
        session.close().await.unwrap();
    }
}

// ---- every tool against the host -------------------------------------------------------------------

#[tokio::test]
async fn every_tool_relays_the_host_in_both_eras_as_advisory_structured_content() {
    let repo = workspace();
    for era in ERAS {
        let host = FakeHost::new(Script::default());
        let session = open(host.clone(), repo.path(), era).await;
        let tools = session.tools().await;
        for name in TOOLS {
            let result = session.call(name, arguments_for(name)).await;
            assert_eq!(result.is_error, Some(false), "{era:?} {name}: {result:?}");
            let body = content(&result);
            assert_conforms(tool(&tools, name), body);
            assert_eq!(body["authoritative"], false, "{name}");
            assert!(
                body["notice"]
                    .as_str()
                    .unwrap()
                    .contains("satisfies no gate")
            );
            assert!(
                !body["receiptId"].as_str().unwrap().is_empty(),
                "{name}: {body:#}"
            );
            assert!(body["degraded"].is_array(), "{name}");
            assert_eq!(body["truncated"], false, "{name}");
            assert!(body["validAsOf"]["rev"].is_string(), "{name}: {body:#}");
            let text = result.content[0]
                .as_text()
                .expect("a text block")
                .text
                .clone();
            if name == "asp_diagnostics" {
                // Its text is a compact summary (one line per finding) with every caveat.
                for part in ["authoritative: false", body["receiptId"].as_str().unwrap()] {
                    assert!(text.contains(part), "{name}: {part:?} not in {text}");
                }
                assert!(
                    text.contains(body["summary"].as_str().unwrap()),
                    "{name}: {text}"
                );
            } else {
                assert_eq!(
                    serde_json::from_str::<Value>(&text).unwrap(),
                    *body,
                    "the text mirrors it"
                );
            }
        }
        assert_eq!(host.starts(), 1, "one host serves every call");
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn status_shows_the_host_call_sites_and_canonical_capability_names() {
    let repo = workspace();
    let (_, session) = open_well(repo.path(), Era::Modern).await;
    let body = content(&session.call("asp_status", json!({})).await).clone();
    assert_eq!(body["host"]["state"], "ready");
    assert_eq!(body["host"]["outerProtocol"], "asp-outer/1.0");
    assert_eq!(body["receiptId"], "status-2026-06-22T20:00:00Z");
    let sites = test_support::strs(&body["callSites"], "callSite");
    assert_eq!(sites, ["interactive", "gate", "sweep"]);
    assert_eq!(
        body["callSites"][1]["requiredProviders"],
        json!(["lattice"])
    );
    let families = test_support::strs(&body["capabilities"], "capability");
    assert_eq!(families, ["inspect", "check", "edit"]);
    assert_eq!(body["capabilities"][0]["legacyAliases"], json!(["sense"]));
    assert_eq!(body["adapter"]["mode"], "inspect-status-only");
    assert_eq!(body["adapter"]["callSites"], json!(["interactive"]));
    assert_eq!(body["servers"][0]["authority"]["granted"], true);
    session.close().await.unwrap();
}

#[tokio::test]
async fn capabilities_show_legacy_roles_with_canonical_names() {
    let repo = workspace();
    let (_, session) = open_well(repo.path(), Era::Legacy).await;
    let body = content(&session.call("asp_capabilities", json!({})).await).clone();
    assert_eq!(
        body["legacyRoles"],
        json!([
            {"legacy": "sense", "canonical": "inspect", "enabled": false},
            {"legacy": "judge", "canonical": "check", "enabled": true},
            {"legacy": "act", "canonical": "edit", "enabled": false}
        ])
    );
    assert_eq!(
        body["capabilities"][1]["providers"],
        json!(["core-check-provider"])
    );
    let authority = content(&session.call("asp_authority_status", json!({})).await).clone();
    assert_eq!(authority["policyActivation"], "base-active");
    assert_eq!(authority["providers"][1]["authority"]["granted"], false);
    session.close().await.unwrap();
}

#[tokio::test]
async fn inspect_sends_the_confined_request_at_the_interactive_call_site() {
    let repo = workspace();
    let (host, session) = open_well(repo.path(), Era::Modern).await;
    let absolute = repo.path().canonicalize().unwrap().join("src/api.ts");
    let request = json!({"request": {"kind": "fixture/graph", "symbol": {"path": absolute}, "scope": {"paths": ["./src"]}}, "timeoutMs": 5000});
    let body = content(&session.call("asp_inspect", request).await).clone();
    assert_eq!(body["callSite"], "interactive");
    assert_eq!(body["data"]["results"][0]["provider"], "fake-inspect");
    let sent = &methods_received(&host, "host/queryInspect")[0]["params"];
    assert_eq!(sent["callSite"], "interactive");
    assert_eq!(sent["timeoutMs"], 5000);
    assert_eq!(
        sent["request"]["symbol"]["path"], "src/api.ts",
        "absolute paths inside the root become relative"
    );
    assert_eq!(sent["request"]["scope"]["paths"], json!(["src"]));
    session.close().await.unwrap();
}

#[tokio::test]
async fn diagnostics_evaluate_the_working_tree_at_the_interactive_call_site() {
    let repo = workspace();
    let (host, session) = open_well(repo.path(), Era::Legacy).await;
    let tools = session.tools().await;
    let result = session.call("asp_diagnostics", json!({})).await;
    let body = content(&result).clone();
    assert_conforms(tool(&tools, "asp_diagnostics"), &body);
    assert_eq!(body["callSite"], "interactive");
    assert_eq!(body["decision"], "deny");
    assert_eq!(body["incomplete"], false);
    assert_eq!(body["changedFiles"], 1);
    assert_eq!(body["findings"][0]["code"], "lattice/secrets");
    assert_eq!(
        body["findings"][0]["nextStep"],
        "Move the secret to runtime configuration."
    );
    assert_eq!(body["findings"][0]["disposition"], "gating");
    assert_eq!(body["assurance"]["mode"], "gated");
    assert_eq!(body["authorityEvidence"][0]["granted"], true);
    assert_eq!(body["receiptId"], "eval-deny-0001");
    assert!(
        body["summary"]
            .as_str()
            .unwrap()
            .contains("host decision deny")
    );

    let sent = &methods_received(&host, "host/evaluateChangeset")[0]["params"];
    assert_eq!(sent["callSite"], "interactive");
    assert_eq!(sent["comparison"], "all");
    assert_eq!(
        sent["changeset"]["baseline"]["rev"], "tree:abc123",
        "the baseline comes from host/status"
    );
    assert_eq!(sent["changeset"]["changes"][0]["path"], "src/api.ts");
    assert_eq!(sent["changeset"]["changes"][0]["kind"], "modify");

    let only = session
        .call(
            "asp_diagnostics",
            json!({"paths": ["README.md"], "comparison": "introduced"}),
        )
        .await;
    assert_eq!(content(&only)["changedFiles"], 0);
    assert_eq!(content(&only)["comparison"], "introduced");
    let sent = &methods_received(&host, "host/evaluateChangeset")[1]["params"];
    assert_eq!(sent["changeset"]["changes"], json!([]));
    assert_eq!(sent["comparison"], "introduced");
    session.close().await.unwrap();
}

#[tokio::test]
async fn incomplete_coverage_is_never_shown_as_clean() {
    let repo = workspace();
    let script = Script {
        evaluate: "outer/evaluate.indeterminate.missing-provider.json",
        ..Script::default()
    };
    let session = open(FakeHost::new(script), repo.path(), Era::Modern).await;
    let body = content(&session.call("asp_diagnostics", json!({})).await).clone();
    assert_eq!(body["decision"], "indeterminate");
    assert_eq!(body["incomplete"], true);
    assert!(!body["degraded"].as_array().unwrap().is_empty(), "{body:#}");
    assert!(
        body["summary"]
            .as_str()
            .unwrap()
            .contains("not a clean result")
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn findings_are_paginated_within_the_byte_budget_and_cursors_cover_every_finding() {
    let repo = workspace();
    let script = Script {
        findings: Some(230),
        ..Script::default()
    };
    let budget = 12 * 1024;
    let session = open_with_budget(FakeHost::new(script), repo.path(), Era::Legacy, budget).await;
    let tools = session.tools().await;
    let mut seen = BTreeSet::new();
    let mut arguments = json!({"limit": 200});
    let mut pages = 0;
    loop {
        let result = session.call("asp_diagnostics", arguments.clone()).await;
        let body = content(&result).clone();
        assert_conforms(tool(&tools, "asp_diagnostics"), &body);
        let size = serde_json::to_vec(&body).unwrap().len();
        assert!(
            size <= budget,
            "page of {size} bytes exceeds the {budget}-byte budget"
        );
        assert_eq!(body["totalFindings"], 230);
        assert_eq!(body["offset"].as_u64().unwrap() as usize, seen.len());
        for finding in body["findings"].as_array().unwrap() {
            assert!(
                seen.insert(finding["fingerprint"].as_str().unwrap().to_owned()),
                "no finding twice"
            );
        }
        pages += 1;
        match body.get("nextCursor") {
            Some(cursor) => {
                assert_eq!(body["truncated"], true);
                arguments = json!({"cursor": cursor, "limit": 200});
            }
            None => {
                assert_eq!(body["truncated"], false);
                break;
            }
        }
    }
    assert_eq!(seen.len(), 230, "the cursors cover every finding once");
    assert!(pages > 2, "the budget, not only the limit, cut pages");
    let expired = session
        .call("asp_diagnostics", json!({"cursor": "d999.0"}))
        .await;
    assert_failed(&expired, "input");
    session.close().await.unwrap();
}

#[tokio::test]
async fn provider_text_is_stripped_of_invisible_and_bidi_characters() {
    let repo = workspace();
    let script = Script {
        findings: Some(3),
        ..Script::default()
    };
    let session = open(FakeHost::new(script), repo.path(), Era::Legacy).await;
    let result = session.call("asp_diagnostics", json!({})).await;
    let text = serde_json::to_string(content(&result)).unwrap();
    for hidden in ['\u{202e}', '\u{202c}', '\u{200b}', '\u{e0041}'] {
        assert!(!text.contains(hidden), "{hidden:?} reached the agent");
    }
    let finding = &content(&result)["findings"][0];
    assert_eq!(finding["message"], "finding 0 reversed hidden 😀 ünï");
    assert_eq!(finding["path"], "src/файл-0.ts");
    session.close().await.unwrap();
}
