//! The adapter under faults: a host that is down, refusing, hung or crashing, hostile paths and
//! arguments, a disabled policy; and progress, cancellation and the end of a session.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::json;
use test_support::mcp::assert_cause_says;

use super::client::{ERAS, Era, content, open, open_well};
use super::fake_host::{FakeHost, Script};
use crate::{TOOLS, arguments_for, assert_failed, methods_received, workspace};

// ---- faults ------------------------------------------------------------------------------------------

#[tokio::test]
async fn tools_list_answers_while_the_host_is_down_and_calls_say_health() {
    let repo = workspace();
    for era in ERAS {
        let script = Script {
            down: true,
            ..Script::default()
        };
        let session = open(FakeHost::new(script), repo.path(), era).await;
        assert_eq!(session.tools().await.len(), 5);
        for name in TOOLS {
            let body = assert_failed(&session.call(name, arguments_for(name)).await, "health");
            assert_cause_says(&body, "restarting");
            assert_eq!(body["retryable"], true);
            assert_eq!(body["tool"], name);
        }
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn each_host_refusal_is_a_tool_error_naming_its_fail_class() {
    let repo = workspace();
    for class in ["health", "contract", "policy", "input"] {
        let script = Script {
            errors: HashMap::from([("host/status", class), ("host/queryInspect", class)]),
            ..Script::default()
        };
        let session = open(FakeHost::new(script), repo.path(), Era::Modern).await;
        for name in ["asp_status", "asp_inspect", "asp_diagnostics"] {
            let body = assert_failed(&session.call(name, arguments_for(name)).await, class);
            assert_cause_says(&body, "fake host refuses");
        }
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_hung_host_times_out_as_a_health_error_and_is_told_to_cancel() {
    let repo = workspace();
    let script = Script {
        hang: HashSet::from(["host/capabilities", "host/queryInspect"]),
        timeout: Duration::from_millis(200),
        ..Script::default()
    };
    let host = FakeHost::new(script);
    let session = open(host.clone(), repo.path(), Era::Legacy).await;
    let body = assert_failed(&session.call("asp_capabilities", json!({})).await, "health");
    assert_cause_says(&body, "did not answer host/capabilities");
    let inspect = json!({"request": {"kind": "fixture/graph"}, "timeoutMs": 1});
    assert_failed(&session.call("asp_inspect", inspect).await, "health");
    assert!(
        !methods_received(&host, "$/cancelRequest").is_empty(),
        "the host is told to stop"
    );
    let status = session.call("asp_status", json!({})).await;
    assert_eq!(status.is_error, Some(false), "other calls still work");
    session.close().await.unwrap();
}

#[tokio::test]
async fn a_host_crash_is_a_tool_error_and_the_next_call_works() {
    let repo = workspace();
    for era in ERAS {
        let script = Script {
            crash_on_first: Some("host/authority/status"),
            ..Script::default()
        };
        let host = FakeHost::new(script);
        let session = open(host.clone(), repo.path(), era).await;
        let body = assert_failed(
            &session.call("asp_authority_status", json!({})).await,
            "health",
        );
        assert_cause_says(&body, "exited with status 3");
        let again = session.call("asp_authority_status", json!({})).await;
        assert_eq!(again.is_error, Some(false), "{again:?}");
        assert_eq!(host.starts(), 2, "the host was started again");
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn paths_that_leave_the_workspace_are_refused_before_the_host_sees_them() {
    let repo = workspace();
    let outside = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), repo.path().join("escape")).unwrap();
    let (host, session) = open_well(repo.path(), Era::Modern).await;
    let evil_sibling = format!("{}_evil/x", repo.path().canonicalize().unwrap().display());
    let mut attempts = vec![
        ("asp_diagnostics", json!({"paths": ["../outside"]})),
        ("asp_diagnostics", json!({"paths": ["src", "/etc/passwd"]})),
        ("asp_diagnostics", json!({"paths": [evil_sibling]})),
        ("asp_diagnostics", json!({"paths": ["src/a\u{0}.ts"]})),
        ("asp_diagnostics", json!({"paths": [":/"]})),
        (
            "asp_inspect",
            json!({"request": {"symbol": {"path": "../../etc/passwd"}}}),
        ),
        (
            "asp_inspect",
            json!({"request": {"scope": {"paths": ["/etc"]}}}),
        ),
    ];
    if cfg!(unix) {
        attempts.push(("asp_diagnostics", json!({"paths": ["escape/secret"]})));
        attempts.push(("asp_inspect", json!({"request": {"file": "escape"}})));
    }
    for (name, arguments) in attempts {
        let body = assert_failed(&session.call(name, arguments.clone()).await, "input");
        assert!(
            body["cause"].as_str().unwrap().contains("refused"),
            "{arguments}: {body:#}"
        );
    }
    let work: Vec<String> = host
        .methods()
        .into_iter()
        .filter(|m| m == "host/evaluateChangeset" || m == "host/queryInspect")
        .collect();
    assert!(
        work.is_empty(),
        "the host never saw a refused path: {work:?}"
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_are_input_errors_and_unknown_tools_protocol_errors() {
    let repo = workspace();
    let (_, session) = open_well(repo.path(), Era::Legacy).await;
    for (name, arguments) in [
        ("asp_status", json!({"verbose": true})),
        ("asp_inspect", json!({})),
        ("asp_inspect", json!({"request": "not an object"})),
        ("asp_inspect", json!({"request": {}, "timeoutMs": 0})),
        ("asp_inspect", json!({"request": {"q": "x".repeat(20_000)}})),
        ("asp_diagnostics", json!({"limit": 0})),
        ("asp_diagnostics", json!({"limit": 201})),
        ("asp_diagnostics", json!({"paths": []})),
        ("asp_diagnostics", json!({"comparison": "gate"})),
        ("asp_diagnostics", json!({"cursor": "not-a-cursor"})),
        ("asp_diagnostics", json!({"paths": vec!["a"; 257]})),
        ("asp_status", json!({"x": "y".repeat(70_000)})),
    ] {
        assert_failed(&session.call(name, arguments).await, "input");
    }
    let unknown = session.try_call("asp_apply", json!({})).await;
    assert!(
        unknown.is_err(),
        "an unknown tool is a protocol error: {unknown:?}"
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn a_disabled_adapter_refuses_every_tool_naming_the_policy() {
    let repo = workspace();
    repo.write(
        ".asp/asp.json",
        r#"{"adapters": {"mcp": {"enabled": false, "mode": "full-outer-seam"}}}"#,
    );
    let host = FakeHost::new(Script::default());
    for era in ERAS {
        let session = open(host.clone(), repo.path(), era).await;
        assert_eq!(
            session.tools().await.len(),
            5,
            "the tools are listed, and refuse"
        );
        for name in TOOLS {
            let body = assert_failed(&session.call(name, arguments_for(name)).await, "policy");
            let cause = body["cause"].as_str().unwrap();
            assert!(
                cause.contains(".asp/asp.json") && cause.contains("adapters.mcp.enabled"),
                "{cause}"
            );
        }
        session.close().await.unwrap();
    }
    assert_eq!(host.starts(), 0, "a disabled adapter never starts the host");
}

#[tokio::test]
async fn disabling_the_adapter_applies_at_the_next_call_with_the_host_up() {
    let repo = workspace();
    std::fs::create_dir(repo.path().join(".asp")).unwrap();
    let policy = repo.path().join(".asp/asp.json");
    let host = FakeHost::new(Script::default());
    let session = open(host.clone(), repo.path(), Era::Modern).await;
    for name in TOOLS {
        let result = session.call(name, arguments_for(name)).await;
        assert_eq!(result.is_error, Some(false), "{name} with no policy file");
    }
    std::fs::write(&policy, r#"{"adapters": {"mcp": {"enabled": false}}}"#).unwrap();
    for name in TOOLS {
        assert_failed(&session.call(name, arguments_for(name)).await, "policy");
    }
    std::fs::write(
        &policy,
        r#"{"adapters": {"mcp": {"enabled": true, "mode": "m"}}}"#,
    )
    .unwrap();
    let body = content(&session.call("asp_status", json!({})).await).clone();
    assert_eq!(body["adapter"]["configuredMode"], "m");
    session.close().await.unwrap();
    assert_eq!(host.starts(), 1);
}

#[tokio::test]
async fn any_configured_mode_still_gets_inspect_status_only() {
    let repo = workspace();
    repo.write(
        ".asp/asp.json",
        r#"{"adapters": {"mcp": {"enabled": true, "mode": "full-outer-seam"}}}"#,
    );
    let (_, session) = open_well(repo.path(), Era::Modern).await;
    let body = content(&session.call("asp_status", json!({})).await).clone();
    assert_eq!(body["adapter"]["configuredMode"], "full-outer-seam");
    assert_eq!(body["adapter"]["mode"], "inspect-status-only");
    session.close().await.unwrap();
}

// ---- progress, the gate, the end of a session ---------------------------------------------------------

#[tokio::test]
async fn host_progress_reaches_the_client_as_progress_notifications_in_both_eras() {
    let repo = workspace();
    for era in ERAS {
        let script = Script {
            progress: true,
            ..Script::default()
        };
        let mut session = open(FakeHost::new(script), repo.path(), era).await;
        for name in ["asp_diagnostics", "asp_inspect"] {
            // rmcp's client puts a progress token on every request.
            let result = session.call(name, arguments_for(name)).await;
            assert_eq!(result.is_error, Some(false), "{era:?} {name}");
            let first = session.next_progress().await;
            let second = session.next_progress().await;
            assert_eq!(first.progress_token, second.progress_token);
            assert_eq!(
                (first.progress, second.progress),
                (1.0, 2.0),
                "progress increases"
            );
            assert_eq!(first.message.as_deref(), Some("host: 50% halfway"));
            assert!(second.message.unwrap().contains("preview diagnostic"));
            assert!(
                session.progress.try_recv().is_err(),
                "nothing follows the result"
            );
        }
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn no_call_ever_uses_the_gate_call_site_or_an_edit_method() {
    let repo = workspace();
    let (host, session) = open_well(repo.path(), Era::Legacy).await;
    for name in TOOLS {
        session.call(name, arguments_for(name)).await;
    }
    session.close().await.unwrap();
    for message in host.received() {
        let method = message["method"].as_str().unwrap_or_default();
        assert!(
            !method.contains("applyProposal") && !method.contains("requestEditPlan"),
            "{message}"
        );
        assert_ne!(message["params"]["callSite"], "gate", "{message}");
    }
}

#[tokio::test]
async fn when_the_client_goes_away_the_session_ends_and_the_host_is_shut_down() {
    let repo = workspace();
    let (host, session) = open_well(repo.path(), Era::Modern).await;
    session.call("asp_status", json!({})).await;
    session
        .close()
        .await
        .expect("a client going away is a clean end");
    assert_eq!(host.shutdowns(), 1);
}

#[tokio::test]
async fn a_call_the_client_cancels_is_cancelled_at_the_host() {
    let repo = workspace();
    let script = Script {
        hang: HashSet::from(["host/queryInspect"]),
        ..Script::default()
    };
    let host = FakeHost::new(script);
    let session = open(host.clone(), repo.path(), Era::Modern).await;
    // Dropping the call's future makes rmcp's client send notifications/cancelled.
    let call = session.call("asp_inspect", arguments_for("asp_inspect"));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err()
    );
    let cancelled =
        host.wait_until(|received| received.iter().any(|m| m["method"] == "$/cancelRequest"));
    tokio::time::timeout(Duration::from_secs(5), cancelled)
        .await
        .expect("the bridge cancels the host request");
    let status = session.call("asp_status", json!({})).await;
    assert_eq!(status.is_error, Some(false), "the session goes on");
    session.close().await.unwrap();
}
