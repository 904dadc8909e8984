//! Tests of the peer over in-memory pipes: both directions at once, the handler's limits, panics,
//! cancellation, duplicate ids, conflicting replies and the server side.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::Semaphore;

use super::*;

/// A notification as the handler saw it: method and params text.
type Note = (String, Option<String>);

/// One end of an in-memory pipe.
type End = (
    BufReader<tokio::io::ReadHalf<DuplexStream>>,
    tokio::io::WriteHalf<DuplexStream>,
);

/// A handler with a few methods: `echo` (answers its params), `hold` (waits for the gate, counting
/// how many run at once), `panic`.
struct TestHandler {
    gate: Arc<Semaphore>,
    running: Arc<AtomicUsize>,
    max_running: Arc<AtomicUsize>,
    /// How many `hold` calls started, and how many were dropped before they finished.
    started: Arc<watch::Sender<usize>>,
    abandoned: Arc<watch::Sender<usize>>,
    notes: Arc<Mutex<Vec<Note>>>,
}

impl TestHandler {
    fn new() -> Arc<TestHandler> {
        Arc::new(TestHandler {
            gate: Arc::new(Semaphore::new(0)),
            running: Arc::default(),
            max_running: Arc::default(),
            started: Arc::new(watch::Sender::new(0)),
            abandoned: Arc::new(watch::Sender::new(0)),
            notes: Arc::default(),
        })
    }

    fn open_gate(&self) {
        self.gate.add_permits(1000);
    }

    async fn wait_started(&self, n: usize) {
        let mut started = self.started.subscribe();
        within(started.wait_for(|s| *s >= n)).await.unwrap();
    }
}

/// Counts a `hold` that was dropped (aborted) before it finished.
struct Abandon {
    abandoned: Arc<watch::Sender<usize>>,
    finished: bool,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if !self.finished {
            self.abandoned.send_modify(|n| *n += 1);
        }
    }
}

impl Handler for TestHandler {
    fn request(&self, request: IncomingRequest) -> Answer {
        match request.method.as_str() {
            "echo" => {
                let params = request
                    .params
                    .unwrap_or_else(|| RawValue::from_string("null".into()).unwrap());
                Box::pin(async move { Ok(params) })
            }
            "hold" => {
                let (gate, running, max_running) = (
                    self.gate.clone(),
                    self.running.clone(),
                    self.max_running.clone(),
                );
                let (started, abandoned) = (self.started.clone(), self.abandoned.clone());
                Box::pin(async move {
                    let mut guard = Abandon {
                        abandoned,
                        finished: false,
                    };
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    max_running.fetch_max(now, Ordering::SeqCst);
                    started.send_modify(|n| *n += 1);
                    gate.acquire().await.unwrap().forget();
                    running.fetch_sub(1, Ordering::SeqCst);
                    guard.finished = true;
                    Ok(RawValue::from_string("\"held\"".into()).unwrap())
                })
            }
            "panic" => panic!("a handler bug"),
            other => {
                let error = method_not_found(other);
                Box::pin(async move { Err(error) })
            }
        }
    }

    fn notification(&self, method: &str, params: Option<Box<RawValue>>) {
        self.notes
            .lock()
            .unwrap()
            .push((method.to_owned(), params.map(|p| p.get().to_owned())));
    }
}

/// Guards a wait that must end, so a broken peer fails the test instead of hanging it.
async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("the peer never got there")
}

/// The other side of a peer, speaking raw lines.
struct Raw {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    write: tokio::io::WriteHalf<DuplexStream>,
}

impl Raw {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = within(self.lines.next_line())
            .await
            .unwrap()
            .expect("the peer closed its output");
        serde_json::from_str(&line).unwrap()
    }

    async fn request(&mut self, id: Value, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }
}

fn probe() -> ExitProbe {
    Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }))
}

/// Both ends of an in-memory pipe that holds `bytes` before a writer waits for the reader.
fn pipe(bytes: usize) -> (End, End) {
    let (a, b) = tokio::io::duplex(bytes);
    let (a_read, a_write) = tokio::io::split(a);
    let (b_read, b_write) = tokio::io::split(b);
    (
        (BufReader::new(a_read), a_write),
        (BufReader::new(b_read), b_write),
    )
}

fn raw_pair(config: PeerConfig, handler: Arc<dyn Handler>) -> (Peer, Raw) {
    raw_pair_over(1 << 20, config, handler)
}

/// [`raw_pair`] over a pipe that holds `bytes` (64, smaller than one frame: the writer waits on its
/// first frame until the other side reads).
fn raw_pair_over(bytes: usize, config: PeerConfig, handler: Arc<dyn Handler>) -> (Peer, Raw) {
    let ((read, write), (raw_read, raw_write)) = pipe(bytes);
    let peer = Peer::connect(read, write, config, handler, probe());
    let raw = Raw {
        lines: raw_read.lines(),
        write: raw_write,
    };
    (peer, raw)
}

/// Two calls in flight on `peer`: `first`, then `second`.
fn first_and_second(
    peer: &Peer,
) -> (
    impl Future<Output = Result<Box<RawValue>>> + use<>,
    impl Future<Output = Result<Box<RawValue>>> + use<>,
) {
    let first = peer.request_raw("first", Some(&json!({})), CallOptions::default());
    let second = peer.request_raw("second", Some(&json!({})), CallOptions::default());
    (first, second)
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error reply: {reply}"))
}

#[tokio::test]
async fn incoming_requests_are_answered_while_outgoing_ones_are_pending() {
    let ((a_read, a_write), (b_read, b_write)) = pipe(1 << 20);
    let (a_handler, b_handler) = (TestHandler::new(), TestHandler::new());
    let a = Peer::connect(a_read, a_write, PeerConfig::default(), a_handler, probe());
    let b = Peer::connect(
        b_read,
        b_write,
        PeerConfig::default(),
        b_handler.clone(),
        probe(),
    );

    let held = a.request_raw("hold", Some(&json!({})), CallOptions::default());
    b_handler.wait_started(1).await;
    // While A waits for B, B calls A, and A calls B again: both are answered.
    let back: Reply<Value> =
        within(b.request("echo", Some(&json!({"from": "b"})), CallOptions::default()))
            .await
            .unwrap();
    assert_eq!(back.value, json!({"from": "b"}));
    let again: Reply<Value> =
        within(a.request("echo", Some(&json!([1, 2])), CallOptions::default()))
            .await
            .unwrap();
    assert_eq!(again.value, json!([1, 2]));

    b_handler.open_gate();
    assert_eq!(within(held).await.unwrap().get(), "\"held\"");
}

#[tokio::test]
async fn an_unknown_incoming_method_gets_method_not_found() {
    let (_peer, mut raw) = raw_pair(PeerConfig::default(), Arc::new(NoRequests));
    raw.request(json!(1), "no/such", json!({})).await;
    let reply = raw.recv().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(error_code(&reply), -32601);
    assert_eq!(reply["error"]["data"]["failClass"], "contract");
    assert_eq!(reply["error"]["data"]["method"], "no/such");
}

#[tokio::test]
async fn a_handler_that_panics_gets_an_error_reply_and_the_peer_keeps_serving() {
    let (_peer, mut raw) = raw_pair(PeerConfig::default(), TestHandler::new());
    raw.request(json!(1), "panic", json!({})).await;
    let reply = raw.recv().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(error_code(&reply), -32603);
    assert_eq!(reply["error"]["message"], "internal error");
    assert_eq!(reply["error"]["data"]["failClass"], "health");

    raw.request(json!("two"), "echo", json!({"still": "here"}))
        .await;
    let reply = raw.recv().await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "two", "result": {"still": "here"}})
    );
}

#[tokio::test]
async fn a_flood_of_incoming_requests_runs_bounded_and_refuses_past_the_queue() {
    let config = PeerConfig {
        max_concurrent_incoming: 4,
        max_queued_incoming: 8,
        ..PeerConfig::default()
    };
    let handler = TestHandler::new();
    let (peer, mut raw) = raw_pair(config, handler.clone());
    for id in 1..=100 {
        raw.request(json!(id), "hold", json!({})).await;
    }
    // 4 run and 8 wait; the other 88 are refused at once, in the order they came.
    for id in 13..=100 {
        let reply = raw.recv().await;
        assert_eq!(reply["id"], id);
        assert_eq!(error_code(&reply), -32000);
        assert_eq!(reply["error"]["message"], "too many concurrent requests");
        assert_eq!(
            reply["error"]["data"],
            json!({"failClass": "health", "retryable": true})
        );
    }
    handler.wait_started(4).await;
    handler.open_gate();
    let mut answered: Vec<i64> = Vec::new();
    for _ in 1..=12 {
        let reply = raw.recv().await;
        assert_eq!(reply["result"], "held", "{reply}");
        answered.push(reply["id"].as_i64().unwrap());
    }
    answered.sort();
    assert_eq!(answered, (1..=12).collect::<Vec<_>>());
    assert_eq!(handler.max_running.load(Ordering::SeqCst), 4);
    assert_eq!(peer.stats().refused_incoming, 88);
}

#[tokio::test]
async fn an_incoming_cancel_aborts_the_handler() {
    let handler = TestHandler::new();
    let (_peer, mut raw) = raw_pair(PeerConfig::default(), handler.clone());
    raw.request(json!(7), "hold", json!({})).await;
    handler.wait_started(1).await;
    raw.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 7}}))
        .await;
    let reply = raw.recv().await;
    assert_eq!(reply["id"], 7);
    assert_eq!(error_code(&reply), -32800);
    let mut abandoned = handler.abandoned.subscribe();
    within(abandoned.wait_for(|n| *n == 1)).await.unwrap();
}

#[tokio::test]
async fn a_request_id_already_in_flight_gets_an_error_reply() {
    let handler = TestHandler::new();
    let (peer, mut raw) = raw_pair(PeerConfig::default(), handler.clone());
    raw.request(json!(3), "hold", json!({})).await;
    raw.request(json!(3), "echo", json!({})).await;
    let duplicate = raw.recv().await;
    assert_eq!(duplicate["id"], 3);
    assert_eq!(error_code(&duplicate), -32600);
    handler.open_gate();
    let first = raw.recv().await;
    assert_eq!(first, json!({"jsonrpc": "2.0", "id": 3, "result": "held"}));
    assert_eq!(peer.stats().protocol_strikes, 1);
}

#[tokio::test]
async fn a_reply_with_both_result_and_error_is_a_protocol_error_not_a_timeout() {
    let (peer, mut raw) = raw_pair(PeerConfig::default(), Arc::new(NoRequests));
    let call = peer.request_raw("ask", Some(&json!({})), CallOptions::default());
    let request = raw.recv().await;
    raw.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {},
        "error": {"code": -32603, "message": "both"}}))
        .await;
    let err = within(call).await.unwrap_err();
    assert!(matches!(err, Error::Malformed { .. }), "{err}");
    assert_eq!(err.fail_class(), FailClass::Contract);
    assert!(
        err.to_string().contains("both a result and an error"),
        "{err}"
    );
    assert_eq!(peer.stats().protocol_strikes, 1);
}

#[tokio::test]
async fn notifications_go_both_ways() {
    let handler = TestHandler::new();
    let (peer, mut raw) = raw_pair(PeerConfig::default(), handler.clone());
    peer.notify("note", Some(&json!({"n": 1}))).unwrap();
    peer.notify::<Value>("bare", None).unwrap();
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "method": "note", "params": {"n": 1}})
    );
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "method": "bare"})
    );

    raw.send(json!({"jsonrpc": "2.0", "method": "told", "params": [true]}))
        .await;
    // Progress for a token that is not one of our requests is the handler's to see.
    raw.send(
        json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "t", "value": 1}}),
    )
    .await;
    // A reply proves the notifications before it were dispatched.
    raw.request(json!(1), "echo", json!(null)).await;
    raw.recv().await;
    let notes = handler.notes.lock().unwrap().clone();
    assert_eq!(
        notes,
        [
            ("told".to_owned(), Some("[true]".to_owned())),
            (
                "$/progress".to_owned(),
                Some(r#"{"token":"t","value":1}"#.to_owned())
            ),
        ]
    );
}

#[tokio::test]
async fn serve_answers_until_the_input_ends_then_flushes_and_closes() {
    let (server, mut raw) = serving(
        TestHandler::new(),
        PeerConfig::default(),
        Duration::from_secs(20),
    );
    raw.request(json!(1), "echo", json!("first")).await;
    raw.request(json!(2), "echo", json!("last")).await;
    raw.write.shutdown().await.unwrap();
    within(server).await.unwrap().unwrap();
    let mut replies = [raw.recv().await, raw.recv().await];
    replies.sort_by_key(|r| r["id"].as_i64());
    assert_eq!(replies[0]["result"], "first");
    assert_eq!(replies[1]["result"], "last");
    assert!(
        raw.lines.next_line().await.unwrap().is_none(),
        "output closed"
    );
}

#[tokio::test]
async fn serve_cancels_what_is_still_running_after_the_drain() {
    let handler = TestHandler::new();
    let drain = Duration::from_millis(50);
    let (server, mut raw) = serving(handler.clone(), PeerConfig::default(), drain);
    raw.request(json!(1), "hold", json!({})).await;
    handler.wait_started(1).await;
    raw.write.shutdown().await.unwrap();
    within(server).await.unwrap().unwrap();
    assert_eq!(error_code(&raw.recv().await), -32800);
}

/// A server over in-memory pipes, as [`serve`] runs it, and the client's raw end.
fn served(handler: Arc<dyn Handler>, config: PeerConfig) -> Raw {
    serving(handler, config, Duration::from_secs(20)).1
}

/// [`served`] with `drain` for what is still running when the input ends, and the server's task.
fn serving(
    handler: Arc<dyn Handler>,
    config: PeerConfig,
    drain: Duration,
) -> (tokio::task::JoinHandle<Result<()>>, Raw) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(ours);
    let server = tokio::spawn(serve(read, write, config, handler, drain));
    let (raw_read, raw_write) = tokio::io::split(theirs);
    let raw = Raw {
        lines: BufReader::new(raw_read).lines(),
        write: raw_write,
    };
    (server, raw)
}

#[tokio::test]
async fn serve_answers_lines_that_are_no_message_with_a_null_id_and_goes_on() {
    let config = PeerConfig {
        max_frame: 256,
        ..PeerConfig::default()
    };
    let mut raw = served(TestHandler::new(), config);
    raw.write.write_all(b"this is not json\n").await.unwrap();
    raw.write.write_all(b"\xff\xfe\n").await.unwrap();
    raw.write.write_all(b"[1, 2]\n").await.unwrap();
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"echo","params":"{}"}}"#,
        "x".repeat(300)
    );
    raw.write.write_all(long.as_bytes()).await.unwrap();
    raw.write.write_all(b"\n").await.unwrap();
    raw.request(json!(1), "echo", json!("still here")).await;
    for (code, id) in [
        (-32700, Value::Null),
        (-32700, Value::Null),
        (-32600, Value::Null),
        (-32600, json!(9)),
    ] {
        let reply = raw.recv().await;
        assert_eq!(error_code(&reply), code, "{reply}");
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["jsonrpc"], "2.0");
    }
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": "still here"})
    );
}

#[tokio::test]
async fn a_client_peer_does_not_answer_junk_lines() {
    let (peer, mut raw) = raw_pair(PeerConfig::default(), Arc::new(NoRequests));
    raw.write.write_all(b"junk\n").await.unwrap();
    let call = peer.request_raw("ask", Some(&json!({})), CallOptions::default());
    let request = raw.recv().await;
    assert_eq!(request["method"], "ask", "the junk got no reply: {request}");
    raw.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": 1}))
        .await;
    within(call).await.unwrap();
}

#[tokio::test]
async fn an_oversize_reply_fails_its_request_at_once_as_a_contract_error() {
    let config = PeerConfig {
        max_frame: 4096,
        // The answer must not wait for the deadline.
        request_timeout: Duration::from_secs(3600),
        ..PeerConfig::default()
    };
    let (peer, mut raw) = raw_pair(config, Arc::new(NoRequests));
    let (first, second) = first_and_second(&peer);
    let (a, b) = (raw.recv().await, raw.recv().await);
    let huge = "x".repeat(10_000);
    // The id comes first, as JSON-RPC envelopes put it: the second call fails, the first waits on.
    raw.send(json!({"jsonrpc": "2.0", "id": b["id"], "result": {"findings": huge}}))
        .await;
    let err = within(second).await.unwrap_err();
    assert_eq!(err.fail_class(), FailClass::Contract, "{err}");
    assert!(
        err.to_string()
            .contains("second with a malformed result: the reply is longer than the 4096-byte"),
        "{err}"
    );
    // With one call left, a reply whose head does not tell its id is that call's.
    raw.write
        .write_all(format!("{{\"result\":\"{huge}\",\"id\":{}}}\n", a["id"]).as_bytes())
        .await
        .unwrap();
    let err = within(first).await.unwrap_err();
    assert!(matches!(err, Error::Malformed { .. }), "{err}");
    assert_eq!(peer.stats().skipped_frames, 2);
    assert_eq!(peer.stats().protocol_strikes, 0);
}

#[tokio::test]
async fn errors_name_the_role_of_the_other_side() {
    let config = PeerConfig {
        role: Role::Provider,
        ..PeerConfig::default()
    };
    let (peer, mut raw) = raw_pair(config, Arc::new(NoRequests));
    let call = peer.request_raw(
        "provider/check",
        Some(&json!({})),
        CallOptions {
            timeout: Some(Duration::from_millis(1)),
            progress: None,
        },
    );
    let err = within(call).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "provider did not answer provider/check within 1 ms"
    );
    let refused = peer.request_raw("provider/x", Some(&json!({})), CallOptions::default());
    let mut request = raw.recv().await;
    while request["method"] != "provider/x" {
        request = raw.recv().await;
    }
    raw.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "error": {"code": -32602, "message": "no"}}))
        .await;
    let err = within(refused).await.unwrap_err();
    assert!(
        err.to_string().starts_with("provider refused provider/x"),
        "{err}"
    );
    drop(raw);
    peer.closed().await;
    let err = peer.closed_reason().unwrap();
    assert!(
        err.to_string().starts_with("provider closed its stdout"),
        "{err}"
    );
}

#[tokio::test]
async fn the_outgoing_queue_is_bounded_and_a_full_queue_does_not_stall_the_reader() {
    let config = PeerConfig {
        max_queued_outgoing: 4,
        ..PeerConfig::default()
    };
    // A pipe smaller than one frame: the writer blocks on the first frame until the other side reads.
    let (peer, mut raw) = raw_pair_over(64, config, Arc::new(NoRequests));
    let big = "y".repeat(100_000);
    let mut calls = Vec::new();
    for _ in 0..50 {
        let call = peer.request_raw("big", Some(&json!({"big": &big})), CallOptions::default());
        calls.push(tokio::spawn(call));
        assert!(peer.queued_outgoing() <= 4, "{}", peer.queued_outgoing());
    }
    // The other side still does not read, and floods us with requests under one id (each but the
    // first refused by the reader, with a reply that cannot be queued): the reader goes on, and
    // routes the reply to the first call.
    for _ in 0..20 {
        raw.request(json!("r"), "x", json!({})).await;
    }
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "result": "one"}))
        .await;
    let first = within(calls.remove(0)).await.unwrap().unwrap();
    assert_eq!(first.get(), "\"one\"");
    assert!(peer.queued_outgoing() <= 4);
    assert!(peer.stats().dropped_outgoing > 0, "{:?}", peer.stats());

    // Once the other side reads, every waiting request goes out, each exactly once.
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 50 {
        let message = raw.recv().await;
        if message["id"] == "r" {
            assert_eq!(error_code(&message), -32601, "{message}");
        }
        if message["method"] == "big" {
            let id = message["id"].as_i64().unwrap();
            assert!(seen.insert(id), "id {id} sent twice");
            if id != 1 {
                raw.send(json!({"jsonrpc": "2.0", "id": id, "result": id}))
                    .await;
            }
        }
    }
    for call in calls {
        within(call).await.unwrap().unwrap();
    }
}

mod owed;
