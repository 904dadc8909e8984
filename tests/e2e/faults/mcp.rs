//! The MCP cells of the fault matrix: `asp-bridge mcp` over its stdio, one JSON line per message
//! (2025-11-25 lifecycle). A host failure is a tool result with `isError: true` and its failClass,
//! never a JSON-RPC error; the next call after the fault gets a normal answer.

use serde_json::{Value, json};

use super::session::{Framing, Session};
use super::{
    DEADLINE_MS, Host, LATE_LOGGED, LATE_MS, Row, UNSUPPORTED, UNSUPPORTED_FLAGS, assert_stderr,
    fixture_receipt, logged, workspace,
};

/// What a tool call must answer.
#[derive(Clone, Debug)]
enum Answer {
    /// `isError: false`, the host's answer to this tool (its fixture's receipt id).
    Ok,
    /// `isError: true`, this failClass, a cause containing this text.
    Failed(&'static str, String),
    /// The bent decision, relayed with what it bends.
    Bent,
}

#[derive(Clone, Debug)]
enum Step {
    Call(&'static str, Answer),
    /// Wait until the bridge logs this line.
    AwaitStderr(&'static str),
}

struct Case {
    host: Host,
    args: Vec<String>,
    steps: Vec<Step>,
    /// Host processes started (handshakes received), when the row says.
    handshakes: Option<usize>,
}

fn call(tool: &'static str, answer: Answer) -> Step {
    Step::Call(tool, answer)
}

fn failed(class: &'static str, cause: impl Into<String>) -> Answer {
    Answer::Failed(class, cause.into())
}

fn case(host: Host, args: &[String], steps: Vec<Step>) -> Case {
    Case {
        host,
        args: args.to_vec(),
        steps,
        handshakes: None,
    }
}

/// A crash the bridge recovers from, after the calls `first`: `tool` fails with `health` naming
/// `cause`, and the same call answers once the host is restarted.
fn recovers(flags: &str, first: &[Step], tool: &'static str, cause: &'static str) -> Vec<Case> {
    let steps = [call(tool, failed("health", cause)), call(tool, Answer::Ok)];
    vec![case(Host::first_only(flags), &[], [first, &steps].concat())]
}

fn cases(row: Row) -> Vec<Case> {
    let timeout = ["--timeout-ms".to_owned(), DEADLINE_MS.to_string()];
    let within = format!("host did not answer host/queryInspect within {DEADLINE_MS} ms");
    if let Some(host) = super::harmless(row) {
        let healthy = ["asp_status", "asp_diagnostics", "asp_inspect"].map(|t| call(t, Answer::Ok));
        return vec![case(host, &[], healthy.to_vec())];
    }
    match row {
        Row::CrashBeforeFirstAnswer => recovers(
            "--crash-on host/status",
            &[],
            "asp_status",
            "crashing on host/status",
        ),
        Row::CrashMidRequest => recovers(
            "--crash-on host/evaluateChangeset",
            &[],
            "asp_diagnostics",
            "crashing on host/evaluateChangeset",
        ),
        // Handshake and asp_status answered; the host dies on the next request.
        Row::CrashBetweenRequests => recovers(
            "--crash-after 2",
            &[call("asp_status", Answer::Ok)],
            "asp_capabilities",
            "host exited with status 3",
        ),
        Row::Hangs => vec![case(
            Host::with("--hang-on host/queryInspect"),
            &timeout,
            vec![
                call("asp_inspect", failed("health", within)),
                call("asp_status", Answer::Ok),
            ],
        )],
        Row::AnswersAfterTheDeadline => vec![case(
            Host::with(format!("--delay-ms host/queryInspect={LATE_MS}")),
            &timeout,
            vec![
                call("asp_inspect", failed("health", within)),
                Step::AwaitStderr(LATE_LOGGED),
                call("asp_status", Answer::Ok),
            ],
        )],
        Row::ClosesStdoutKeepsRunning => vec![case(
            Host::with("--close-stdout-on host/queryInspect"),
            &[],
            vec![
                call(
                    "asp_inspect",
                    failed("health", "host closed its stdout but is still running"),
                ),
                call("asp_status", Answer::Ok),
            ],
        )],
        Row::RefusesWithEachFailClass => super::refusing("host/evaluateChangeset")
            .map(|(host, class, _)| {
                let cause = format!("fake host refuses: {class}");
                let steps = vec![
                    call("asp_diagnostics", failed(class, cause)),
                    call("asp_status", Answer::Ok),
                ];
                case(host, &[], steps)
            })
            .collect(),
        // The contract failure is final: the host is not restarted, and every later call says so.
        Row::UnsupportedOuterProtocol => vec![Case {
            handshakes: Some(1),
            ..case(
                Host::with(UNSUPPORTED_FLAGS),
                &[],
                vec![
                    call("asp_status", failed("contract", UNSUPPORTED)),
                    call("asp_capabilities", failed("contract", UNSUPPORTED)),
                ],
            )
        }],
        Row::BendsTheSchema => vec![case(
            super::bent_evaluate(),
            &[],
            vec![call("asp_diagnostics", Answer::Bent)],
        )],
        row => unreachable!("{row:?} is harmless"),
    }
}

pub(super) fn cell(row: Row) {
    for case in cases(row) {
        let scratch = workspace();
        let mut args = vec![
            "mcp".to_owned(),
            "--repo".to_owned(),
            scratch.path().display().to_string(),
            "--host-command".to_owned(),
            case.host.command(&scratch),
            "--restart-delay-ms".to_owned(),
            "0".to_owned(),
        ];
        args.extend(case.args.iter().cloned());
        let mut session = Session::start(&scratch, &args, Framing::Lines);
        let init = session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "faults", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        session.notify("notifications/initialized", json!({}));
        for step in &case.steps {
            match step {
                Step::Call(tool, answer) => {
                    let response = session.request(
                        "tools/call",
                        json!({"name": tool, "arguments": arguments(tool)}),
                    );
                    check(row, tool, answer, &response);
                }
                Step::AwaitStderr(line) => session.await_stderr(line),
            }
        }
        // Still serving: the tool list, whatever happened to the host.
        let listed = session.request("tools/list", json!({}));
        assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(5));
        session.close_stdin();
        let ended = session.wait();
        assert_eq!(
            ended.code,
            Some(0),
            "a client closing stdin is a clean end: {}",
            ended.stderr
        );
        ended.assert_answered_once();
        assert_stderr(&ended.stderr, &logged(row));
        scratch.assert_no_orphans();
        if let Some(handshakes) = case.handshakes {
            assert_eq!(
                scratch.received("host/status").len(),
                handshakes,
                "no restarts"
            );
        }
    }
}

fn arguments(tool: &str) -> Value {
    match tool {
        "asp_inspect" => json!({"request": {"kind": "fixture/graph"}}),
        _ => json!({}),
    }
}

/// The fixture whose receipt a healthy answer of `tool` carries.
fn fixture_of(tool: &str) -> &'static str {
    match tool {
        "asp_status" => "outer/status.response.json",
        "asp_capabilities" => "core/capabilities.check-only.json",
        "asp_authority_status" => "outer/authority.status.response.json",
        "asp_inspect" => "outer/query-inspect.response.json",
        _ => "outer/evaluate.deny.gating.json",
    }
}

fn check(row: Row, tool: &str, answer: &Answer, response: &Value) {
    assert!(
        response.get("error").is_none(),
        "{row:?} {tool}: a host failure is a tool result, never a JSON-RPC error: {response}"
    );
    let result = &response["result"];
    let body = &result["structuredContent"];
    assert_eq!(body["authoritative"], false, "{result:#}");
    match answer {
        Answer::Ok => {
            assert_eq!(result["isError"], false, "{row:?} {tool}: {result:#}");
            assert_eq!(
                body["receiptId"],
                fixture_receipt(fixture_of(tool)),
                "{row:?} {tool}: the answer to this call, not another one"
            );
        }
        Answer::Failed(class, cause) => {
            assert_eq!(result["isError"], true, "{row:?} {tool}: {result:#}");
            assert_eq!(body["failClass"], *class, "{row:?} {tool}: {body:#}");
            assert_eq!(
                body["retryable"],
                *class == "health",
                "{row:?} {tool}: only a health failure is worth retrying: {body:#}"
            );
            let said = body["cause"].as_str().unwrap_or_default();
            assert!(
                said.contains(cause.as_str()),
                "{row:?} {tool}: expected {cause:?} in {said:?}"
            );
        }
        Answer::Bent => {
            assert_eq!(result["isError"], false, "{result:#}");
            assert_eq!(body["receiptId"], "eval-bent-0001");
            assert_eq!(body["decision"], "escalate");
            assert_eq!(body["incomplete"], true, "degraded coverage: {body:#}");
            let degraded = body["degraded"].to_string();
            assert!(degraded.contains("provider-rebooting"), "{degraded}");
            let findings = body["findings"].as_array().unwrap();
            assert_eq!(findings.len(), 2, "{body:#}");
            assert_eq!(findings[0]["severity"], "critical");
            assert_eq!(findings[0]["disposition"], "quarantined");
            assert!(findings[1].get("range").is_none(), "{:#}", findings[1]);
        }
    }
}
