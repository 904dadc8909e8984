//! Tests of the host client over in-memory pipes, one per rule of the module doc.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use super::*;
use rpc_peer::peer::progress_channel;
use rpc_peer::{ExitStatus, FailClass};

/// The host's side of an in-memory connection: reads what the bridge sent, writes raw lines back.
struct Peer {
    from_bridge: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    to_bridge: tokio::io::WriteHalf<DuplexStream>,
}

impl Peer {
    async fn recv(&mut self) -> Value {
        let line = self
            .from_bridge
            .next_line()
            .await
            .unwrap()
            .expect("bridge closed its output");
        serde_json::from_str(&line).unwrap()
    }

    async fn send(&mut self, line: &str) {
        self.to_bridge.write_all(line.as_bytes()).await.unwrap();
        self.to_bridge.write_all(b"\n").await.unwrap();
    }

    async fn reply(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
            .await;
    }
}

fn connect(timeout: Duration) -> (HostClient, Peer) {
    let (bridge, host) = tokio::io::duplex(1 << 20);
    let (bridge_read, bridge_write) = tokio::io::split(bridge);
    let (host_read, host_write) = tokio::io::split(host);
    let config = ClientConfig {
        request_timeout: timeout,
        ..ClientConfig::default()
    };
    let probe: ExitProbe =
        Box::new(|| Box::pin(async { (ExitStatus::Code(3), "panic: boom".to_owned()) }));
    let client = HostClient::connect(BufReader::new(bridge_read), bridge_write, config, probe);
    (
        client,
        Peer {
            from_bridge: BufReader::new(host_read).lines(),
            to_bridge: host_write,
        },
    )
}

fn status_json() -> Value {
    json!({"host": {"name": "h", "version": "1", "outerProtocol": "asp-outer/1.0", "state": "ready"}})
}

#[tokio::test]
async fn requests_reach_the_wire_in_call_order() {
    let (client, mut host) = connect(Duration::from_secs(5));
    let first = client.status();
    let second = client.capabilities();
    let third = client.authority_status();
    let methods: Vec<Value> = vec![host.recv().await, host.recv().await, host.recv().await];
    let names: Vec<&str> = methods
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["host/status", "host/capabilities", "host/authority/status"]
    );
    assert_eq!(methods[0]["params"], json!({}));
    // Answered out of order, each caller still gets its own answer.
    host.reply(
        &methods[2]["id"],
        json!({"policyActivation": "base-active"}),
    )
    .await;
    host.reply(&methods[0]["id"], status_json()).await;
    host.reply(&methods[1]["id"], json!({})).await;
    assert_eq!(first.await.unwrap().value.host.name, "h");
    assert!(second.await.is_ok());
    assert_eq!(third.await.unwrap().value.policy_activation, "base-active");
}

#[tokio::test]
async fn a_deadline_cancels_the_request_and_its_late_reply_is_counted() {
    let (client, mut host) = connect(Duration::from_millis(50));
    let call = client.status();
    let request = host.recv().await;
    let err = call.await.unwrap_err();
    assert!(
        matches!(err, Error::Peer(rpc_peer::Error::Timeout { .. })),
        "{err}"
    );
    assert_eq!(err.fail_class(), FailClass::Health);
    let cancel = host.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], request["id"]);
    assert!(cancel.get("id").is_none(), "a cancel is a notification");

    host.reply(&request["id"], status_json()).await;
    // A following exchange proves the late reply was read (and dropped) first.
    let next = client.status();
    let second = host.recv().await;
    host.reply(&second["id"], status_json()).await;
    next.await.unwrap();
    assert_eq!(
        client.stats(),
        ClientStats {
            late_replies: 1,
            protocol_strikes: 0,
            skipped_frames: 0,
            refused_incoming: 0,
            dropped_outgoing: 0,
        }
    );
}

#[tokio::test]
async fn dropping_the_caller_cancels_the_request() {
    let (client, mut host) = connect(Duration::from_secs(5));
    drop(client.status());
    let request = host.recv().await;
    let cancel = host.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], request["id"]);
}

#[tokio::test]
async fn a_reply_to_an_id_never_issued_is_a_strike() {
    let (client, mut host) = connect(Duration::from_secs(5));
    let call = client.status();
    let request = host.recv().await;
    host.reply(&json!(999_999), json!({})).await;
    host.reply(&json!("not-ours"), json!({})).await;
    host.reply(&request["id"], status_json()).await;
    call.await.unwrap();
    assert_eq!(client.stats().protocol_strikes, 2);
}

#[tokio::test]
async fn junk_between_frames_is_skipped_and_counted() {
    let (client, mut host) = connect(Duration::from_secs(5));
    let call = client.status();
    let request = host.recv().await;
    host.send("this is not json").await;
    host.send("").await;
    host.to_bridge.write_all(b"\xff\xfe junk\n").await.unwrap();
    host.send(r#"{"jsonrpc":"2.0","method":"host/log","params":{}}"#)
        .await;
    host.reply(&request["id"], status_json()).await;
    assert_eq!(
        call.await.unwrap().value.host.outer_protocol,
        "asp-outer/1.0"
    );
    assert_eq!(client.stats().skipped_frames, 2);
}

#[tokio::test]
async fn progress_goes_to_the_request_whose_id_is_the_token() {
    let (client, mut host) = connect(Duration::from_secs(5));
    let (sink, mut progress) = progress_channel();
    let call = client.peer().request_raw(
        proto::QUERY_INSPECT,
        Some(&json!({})),
        CallOptions {
            progress: Some(sink),
            ..Default::default()
        },
    );
    let other = client.status();
    let request = host.recv().await;
    let other_request = host.recv().await;
    let note = |token: &Value, pct: u64| {
        json!({"jsonrpc":"2.0","method":"$/progress","params":{"token":token,"value":{"kind":"report","percentage":pct}}}).to_string()
    };
    host.send(&note(&other_request["id"], 10)).await;
    host.send(&note(&request["id"], 50)).await;
    host.reply(&request["id"], json!({"final": true})).await;
    host.reply(&other_request["id"], status_json()).await;
    assert_eq!(call.await.unwrap().get(), r#"{"final":true}"#);
    other.await.unwrap();
    assert_eq!(progress.recv().await.unwrap()["percentage"], 50);
    assert!(
        progress.try_recv().is_none(),
        "only this request's progress arrives"
    );
}

#[tokio::test]
async fn when_the_host_stdout_ends_every_pending_request_fails_at_once() {
    let (client, mut host) = connect(Duration::from_secs(30));
    let a = client.status();
    let b = client.capabilities();
    host.recv().await;
    host.recv().await;
    drop(host);
    for err in [a.await.unwrap_err(), b.await.unwrap_err()] {
        assert_eq!(
            err.to_string(),
            "host exited with status 3; stderr: panic: boom"
        );
        assert_eq!(err.fail_class(), FailClass::Health);
    }
    client.closed().await;
    let later = client.status().await.unwrap_err();
    assert!(
        matches!(later, Error::Peer(rpc_peer::Error::Exited { .. })),
        "a call after the end fails at once"
    );
    assert!(client.closed_reason().is_some());
}

#[tokio::test]
async fn host_errors_keep_their_fail_class() {
    for (class, code) in [
        ("health", -32010),
        ("contract", -32014),
        ("policy", -32012),
        ("input", -32013),
    ] {
        let (client, mut host) = connect(Duration::from_secs(5));
        let call = client.status();
        let request = host.recv().await;
        let error = json!({"jsonrpc":"2.0","id":request["id"],"error":{"code":code,"message":"no","data":{"failClass":class}}});
        host.send(&error.to_string()).await;
        let err = call.await.unwrap_err();
        assert_eq!(err.fail_class().as_str(), class);
        assert!(
            err.to_string().contains("host refused host/status: no"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_result_that_bends_the_schema_is_read_leniently_and_a_broken_one_is_a_contract_error() {
    let (client, mut host) = connect(Duration::from_secs(5));
    let good = client.status();
    let bad = client.status();
    let (r1, r2) = (host.recv().await, host.recv().await);
    let mut bent = status_json();
    bent["host"]["state"] = json!("warming-up");
    bent["brandNew"] = json!({"x": 1});
    host.reply(&r1["id"], bent).await;
    host.reply(&r2["id"], json!({"host": 42})).await;
    let reply = good.await.unwrap();
    assert_eq!(reply.value.host.state.as_str(), "warming-up");
    assert!(
        reply.raw.get().contains("brandNew"),
        "the raw answer is kept as received"
    );
    assert_eq!(bad.await.unwrap_err().fail_class(), FailClass::Contract);
}

#[tokio::test]
async fn evaluate_sends_an_advisory_call_site() {
    let (client, mut host) = connect(Duration::from_secs(5));
    let changeset = ChangeSet {
        baseline: json!({"rev": "tree:1"}),
        changes: vec![],
    };
    let call = client.evaluate_changeset(
        AdvisoryCallSite::Sweep,
        changeset,
        Some(Comparison::Introduced),
        CallOptions::default(),
    );
    let request = host.recv().await;
    assert_eq!(request["method"], "host/evaluateChangeset");
    assert_eq!(request["params"]["callSite"], "sweep");
    assert_eq!(request["params"]["comparison"], "introduced");
    assert_eq!(
        request["params"]["changeset"],
        json!({"baseline": {"rev": "tree:1"}, "changes": []})
    );
    host.reply(&request["id"], json!({"decision": "allow", "findings": []}))
        .await;
    assert!(call.await.unwrap().value.is(proto::DecisionKind::Allow));
}
