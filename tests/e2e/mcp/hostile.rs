//! `asp-bridge mcp` against hostile hosts and hostile clients: answers without a receipt, paths
//! outside the workspace in either direction, a host that cannot be run, a deadline named with the
//! client's figure, and lines that are no MCP message.

use std::io::Write as _;

use serde_json::{Value, json};

use test_support::mcp::{LEGACY, MODERN, assert_cause_says};

use super::{assert_failed, assert_ok, close_cleanly, start, started, workspace};
use crate::hostile::fixtures_with;
use crate::support::Scratch;

/// The fake host answering from the usual fixtures with `hostile` ones in place.
fn hostile_host(scratch: &Scratch, hostile: &[(&str, &str)], flags: &str) -> String {
    let dir = fixtures_with(scratch, hostile);
    let exclude = scratch.path().join(".git/info/exclude");
    if exclude.is_file() {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(exclude)
            .unwrap();
        writeln!(file, "fixtures/").unwrap();
    }
    scratch.fake_host(&format!("--fixtures {} {flags}", dir.display()))
}

#[test]
fn an_empty_object_or_array_is_no_answer_not_a_clean_empty_one() {
    let scratch = Scratch::new();
    let host = hostile_host(
        &scratch,
        &[
            (
                "core/capabilities.check-only.json",
                "result.empty-object.json",
            ),
            (
                "outer/authority.status.response.json",
                "result.empty-array.json",
            ),
            (
                "outer/query-inspect.response.json",
                "result.empty-object.json",
            ),
        ],
        "",
    );
    let mut bridge = start(&scratch, &host, &[], LEGACY);
    for (tool, arguments) in [
        ("asp_capabilities", json!({})),
        ("asp_authority_status", json!({})),
        ("asp_inspect", json!({"request": {"kind": "fixture/graph"}})),
    ] {
        let body = assert_failed(&bridge.call(tool, arguments), "contract").clone();
        assert_eq!(body["retryable"], false, "{tool}: {body:#}");
    }
    assert_ok(&bridge.call("asp_status", json!({})));
    close_cleanly(bridge, &scratch);
}

#[test]
fn inspect_requests_are_confined_by_the_shape_of_their_values() {
    let (scratch, mut bridge) = started(MODERN);
    for request in [
        json!({"uri": "file:///etc/passwd"}),
        json!({"textDocument": {"uri": "file:///etc/passwd"}}),
        json!({"filepath": "/etc/passwd"}),
        json!({"root": "/"}),
        json!({"include": ["../../etc/**"]}),
        json!({"deep": [{"deeper": {"x": "FILE:///etc/shadow"}}]}),
    ] {
        let body = assert_failed(
            &bridge.call("asp_inspect", json!({"request": request})),
            "input",
        )
        .clone();
        let hint = body["hint"].as_str().unwrap();
        assert!(hint.contains("relative to the workspace root"), "{hint}");
    }
    let inside = format!(
        "file://{}/README.txt",
        scratch.path().canonicalize().unwrap().display()
    );
    assert_ok(&bridge.call(
        "asp_inspect",
        json!({"request": {"kind": "fixture/graph", "textDocument": {"uri": inside}}}),
    ));
    assert_eq!(bridge.close().0, Some(0));
    let seen: Vec<String> = scratch
        .recorded()
        .iter()
        .filter(|m| m["method"] == "host/queryInspect")
        .map(Value::to_string)
        .collect();
    assert_eq!(seen.len(), 1, "only the confined request reached the host");
    assert!(!seen[0].contains("/etc/"), "{seen:?}");
    scratch.assert_no_orphans();
}

#[test]
fn host_paths_outside_the_workspace_are_flagged_not_relayed() {
    let scratch = workspace();
    let evaluate = crate::support::fixtures().join("hostile/evaluate.outside-paths.json");
    let host = hostile_host(
        &scratch,
        &[(
            "outer/query-inspect.response.json",
            "query-inspect.outside-paths.json",
        )],
        &format!("--evaluate {}", evaluate.display()),
    );
    let mut bridge = start(&scratch, &host, &[], LEGACY);
    let result = bridge.call("asp_diagnostics", json!({}));
    let body = assert_ok(&result).clone();
    let findings = body["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 4, "{body:#}");
    for finding in &findings[..3] {
        assert!(finding.get("path").is_none(), "{finding:#}");
        assert!(finding["outsideWorkspace"].is_string(), "{finding:#}");
    }
    assert_eq!(findings[3]["path"], "src/api.ts");
    let inspected = bridge.call("asp_inspect", json!({"request": {"kind": "fixture/graph"}}));
    let body = assert_ok(&inspected).clone();
    assert_eq!(body["outsidePaths"], 2, "{body:#}");
    for text in [result.to_string(), inspected.to_string()] {
        assert!(!text.contains("etc/passwd"), "{text}");
    }
    close_cleanly(bridge, &scratch);
}

#[test]
fn a_host_that_is_not_installed_is_not_retryable_and_says_what_to_do() {
    let scratch = Scratch::new();
    let missing = scratch.path().join("no-such-asp").display().to_string();
    let mut bridge = start(&scratch, &missing, &[], LEGACY);
    for _ in 0..2 {
        let body = assert_failed(&bridge.call("asp_status", json!({})), "health").clone();
        assert_eq!(body["retryable"], false, "{body:#}");
        assert_cause_says(&body, "could not start host");
        let hint = body["hint"].as_str().unwrap();
        assert!(!hint.contains("retry shortly"), "{hint}");
        assert!(hint.contains("ASP_BRIDGE_HOST_COMMAND"), "{hint}");
        assert!(
            body["untrustedText"]
                .as_str()
                .is_some_and(|t| t.contains("untrusted")),
            "a failure carries the untrusted marker too: {body:#}"
        );
    }
    assert_eq!(bridge.close().0, Some(0));
}

#[test]
fn an_inspect_deadline_is_reported_with_the_clients_timeout() {
    let scratch = Scratch::new();
    let host = scratch.fake_host("--hang-on host/queryInspect");
    let mut bridge = start(&scratch, &host, &[], LEGACY);
    let body = assert_failed(
        &bridge.call(
            "asp_inspect",
            json!({"request": {"kind": "fixture/graph"}, "timeoutMs": 1000}),
        ),
        "health",
    )
    .clone();
    assert_cause_says(&body, "within 1000 ms");
    close_cleanly(bridge, &scratch);
}

#[test]
fn argument_hints_follow_the_field() {
    let (scratch, mut bridge) = started(LEGACY);
    let body = assert_failed(
        &bridge.call("asp_diagnostics", json!({"limit": 0})),
        "input",
    )
    .clone();
    let hint = body["hint"].as_str().unwrap();
    assert!(!hint.contains("paths"), "a limit is no path: {hint}");
    let body = assert_failed(
        &bridge.call("asp_diagnostics", json!({"paths": ["../x"]})),
        "input",
    )
    .clone();
    let hint = body["hint"].as_str().unwrap();
    assert!(hint.contains("relative to the workspace root"), "{hint}");
    close_cleanly(bridge, &scratch);
}

#[test]
fn lines_that_are_no_mcp_message_get_an_error_reply_and_the_session_goes_on() {
    let scratch = Scratch::new();
    let mut bridge = start(&scratch, &scratch.fake_host(""), &[], LEGACY);
    bridge.send_line(b"this is not json");
    let error = bridge.frame_with_id(&Value::Null);
    assert_eq!(error["error"]["code"], -32700, "{error}");
    bridge.send_line(&vec![b'x'; 5 * 1024 * 1024]);
    let error = bridge.frame_with_id(&Value::Null);
    assert_eq!(error["error"]["code"], -32600, "{error}");
    for (id, params) in [
        (json!(901), json!({"name": "asp_status", "arguments": [1]})),
        (json!("a"), json!({"name": "asp_status", "arguments": "x"})),
        (json!(902), json!([])),
    ] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        bridge.send_line(request.to_string().as_bytes());
        let error = bridge.frame_with_id(&id);
        assert_eq!(error["error"]["code"], -32602, "{error}");
    }
    assert_ok(&bridge.call("asp_status", json!({})));
    close_cleanly(bridge, &scratch);
}

#[test]
fn a_request_id_reused_while_in_flight_is_refused_and_every_request_is_answered_once() {
    let scratch = Scratch::new();
    let host = scratch.fake_host("--hang-on host/capabilities");
    let mut bridge = start(&scratch, &host, &["--timeout-ms", "1500"], LEGACY);
    let call = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}})
        .to_string()
    };
    // Both in one write: the second comes while the first waits for the hung host.
    let both = format!("{}\n{}", call("asp_capabilities"), call("asp_status"));
    bridge.send_line(both.as_bytes());
    let refusal = bridge.frame_with_id(&json!(7));
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already in flight")),
        "{refusal}"
    );
    let first = bridge.frame_with_id(&json!(7));
    assert_failed(&first["result"], "health");
    // Answered, the id may be used again.
    bridge.send_line(call("asp_status").as_bytes());
    assert_ok(&bridge.frame_with_id(&json!(7))["result"]);
    let (code, stdout) = bridge.close();
    assert_eq!(code, Some(0));
    let answers = stdout
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|frame| frame["id"] == 7)
        .count();
    assert_eq!(
        answers, 3,
        "each of the three requests answered once: {stdout:#?}"
    );
    scratch.assert_no_orphans();
}
