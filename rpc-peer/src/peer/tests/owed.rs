//! Tests of what the peer owes: every request answered exactly once under a flood, replies and
//! lines that cannot be used, and the room a large answer waits for.

use super::*;

/// A client that writes requests and reads all the time, over a pipe smaller than one reply: the
/// peer's outgoing queue fills while refusals are due.
#[tokio::test]
async fn a_refusal_waits_for_room_and_every_request_is_answered_once() {
    const REQUESTS: usize = 3000;
    let config = PeerConfig {
        max_queued_outgoing: 8,
        ..PeerConfig::default()
    };
    let handler = TestHandler::new();
    // The requests come in faster than the answers can go out.
    let (read, mut raw_write) = tokio::io::duplex(1 << 20);
    let (write, raw_read) = tokio::io::duplex(64);
    let peer = Peer::connect(
        BufReader::new(read),
        write,
        config,
        handler.clone(),
        probe(),
    );
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(raw_read).lines();
        let (mut answered, mut refused) = (std::collections::BTreeMap::new(), 0u64);
        while answered.len() < REQUESTS {
            let line = within(lines.next_line()).await.unwrap().unwrap();
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply.get("error").is_some() {
                assert_eq!(error_code(&reply), -32000, "{reply}");
                refused += 1;
            } else {
                assert_eq!(reply["result"], "held", "{reply}");
            }
            *answered.entry(reply["id"].as_i64().unwrap()).or_insert(0) += 1;
        }
        (answered, refused, lines)
    });
    for id in 1..=REQUESTS {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "hold", "params": {}});
        within(raw_write.write_all(format!("{line}\n").as_bytes()))
            .await
            .unwrap();
    }
    handler.open_gate();
    let (answered, refused, mut lines) = within(reader).await.unwrap();
    assert!(
        answered.values().all(|n| *n == 1),
        "an id answered twice: {:?}",
        answered.iter().find(|(_, n)| **n != 1)
    );
    assert_eq!(refused, peer.stats().refused_incoming);
    assert!(refused > 0, "the flood was refused in part");
    // Nothing else comes before the answer to a last request.
    let last = json!({"jsonrpc": "2.0", "id": "last", "method": "echo", "params": 1});
    raw_write
        .write_all(format!("{last}\n").as_bytes())
        .await
        .unwrap();
    let line = within(lines.next_line()).await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap(),
        json!({"jsonrpc": "2.0", "id": "last", "result": 1})
    );
    assert_eq!(peer.stats().dropped_outgoing, 0, "{:?}", peer.stats());
}

#[tokio::test]
async fn a_reply_that_is_not_utf8_fails_its_request_at_once_as_a_contract_error() {
    let config = PeerConfig {
        request_timeout: Duration::from_secs(3600),
        ..PeerConfig::default()
    };
    let (peer, mut raw) = raw_pair(config, Arc::new(NoRequests));
    let (first, second) = first_and_second(&peer);
    let (a, b) = (raw.recv().await, raw.recv().await);
    // The id in its head names the call it answers.
    let reply = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"text":"#, b["id"]);
    raw.write.write_all(reply.as_bytes()).await.unwrap();
    raw.write.write_all(b"\"\xff\xfe\"}}\n").await.unwrap();
    let err = within(second).await.unwrap_err();
    assert!(matches!(err, Error::Malformed { .. }), "{err}");
    assert_eq!(err.fail_class(), FailClass::Contract, "{err}");
    assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    // A line that reads as no reply fails nothing; the first call still gets its answer.
    raw.write.write_all(b"\xff\xfe junk\n").await.unwrap();
    raw.send(json!({"jsonrpc": "2.0", "id": a["id"], "result": "one"}))
        .await;
    assert_eq!(within(first).await.unwrap().get(), "\"one\"");
    // A reply whose head names no id is the only call pending's.
    let third = peer.request_raw("third", Some(&json!({})), CallOptions::default());
    raw.recv().await;
    raw.write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"result\":\"\xc3\"}\n")
        .await
        .unwrap();
    let err = within(third).await.unwrap_err();
    assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    assert_eq!(peer.stats().skipped_frames, 3);
}

#[tokio::test]
async fn serve_refuses_batches_odd_ids_and_messages_that_are_not_jsonrpc_2_0() {
    let mut raw = served(TestHandler::new(), PeerConfig::default());
    let lines = [
        r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":1}]"#,
        "[]",
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"echo"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"echo"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"echo"}"#,
        r#"{"jsonrpc":"1.0","id":7,"method":"echo","params":7}"#,
        r#"{"id":8,"method":"echo","params":8}"#,
        r#"{"jsonrpc":2.0,"method":"note"}"#,
    ];
    for line in lines {
        raw.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    raw.request(json!(1), "echo", json!("still here")).await;
    let ids = [
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        json!(7),
        json!(8),
        Value::Null,
    ];
    for (line, id) in lines.iter().zip(ids) {
        let reply = raw.recv().await;
        assert_eq!(error_code(&reply), -32600, "{line}: {reply}");
        assert_eq!(reply["id"], id, "{line}: {reply}");
    }
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": "still here"})
    );
}

/// A handler that reserves room for its answer, then builds it: `big` answers a string of
/// `params` bytes.
struct Roomy {
    built: Arc<watch::Sender<usize>>,
    refused: Arc<watch::Sender<usize>>,
}

impl Handler for Roomy {
    fn request(&self, request: IncomingRequest) -> Answer {
        let (built, refused) = (self.built.clone(), self.refused.clone());
        Box::pin(async move {
            let bytes: usize = request.params()?;
            if let Err(error) = request.room(bytes).await {
                refused.send_modify(|n| *n += 1);
                return Err(error);
            }
            built.send_modify(|n| *n += 1);
            let text = serde_json::to_string(&"z".repeat(bytes)).unwrap();
            Ok(RawValue::from_string(text).unwrap())
        })
    }
}

#[tokio::test]
async fn answers_are_built_only_within_their_room_in_bytes_until_written() {
    const BYTES: usize = 10_000;
    let config = PeerConfig {
        max_reply_bytes: 3 * BYTES,
        request_timeout: Duration::from_millis(300),
        ..PeerConfig::default()
    };
    let handler = Arc::new(Roomy {
        built: Arc::new(watch::Sender::new(0)),
        refused: Arc::new(watch::Sender::new(0)),
    });
    // A pipe smaller than one answer, and a side that does not read yet: no answer is written.
    let (_peer, mut raw) = raw_pair_over(64, config, handler.clone());
    for id in 1..=10 {
        raw.request(json!(id), "big", json!(BYTES)).await;
    }
    // Three fit; the seven others find no room before the deadline and are refused unbuilt.
    let mut refused = handler.refused.subscribe();
    within(refused.wait_for(|n| *n == 7)).await.unwrap();
    assert_eq!(*handler.built.borrow(), 3);
    let (mut results, mut errors) = (0, 0);
    for _ in 0..10 {
        let reply = raw.recv().await;
        if reply.get("result").is_some() {
            results += 1;
        } else {
            assert_eq!(error_code(&reply), -32000, "{reply}");
            assert_eq!(reply["error"]["data"]["retryable"], true, "{reply}");
            errors += 1;
        }
    }
    assert_eq!((results, errors), (3, 7));
    // Written, the room is free again.
    raw.request(json!(11), "big", json!(3 * BYTES)).await;
    assert_eq!(
        raw.recv().await["result"].as_str().unwrap().len(),
        3 * BYTES
    );
}
