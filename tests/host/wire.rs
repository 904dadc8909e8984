//! The outer seam's wire floor through the real `asp-bridge host serve`: every line a client sends
//! gets one answer, the JSON-RPC 2.0 error when it is no request the host can serve.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{host_serve, repo};

/// Lines that are not UTF-8, batches, ids that are no string or integer and messages without
/// `"jsonrpc": "2.0"` each get -32700 or -32600 (`id: null` when the id cannot be used), and the
/// host goes on serving.
#[tokio::test]
async fn host_serve_answers_every_line_that_is_no_usable_request_with_the_error_json_rpc_names() {
    let repo = repo();
    let mut child = host_serve(repo.path())
        .env("XDG_CONFIG_HOME", repo.path().join(".no-config"))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // A line whose id cannot be used is answered with `id: null`; the others with their id.
    let no_usable_id: [(&[u8], i64); 8] = [
        (b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":1}", -32700),
        (b"{\"jsonrpc\":\"2.0\",", -32700),
        (
            br#"[{"jsonrpc":"2.0","id":2,"method":"host/status"}]"#,
            -32600,
        ),
        (b"[]", -32600),
        (
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"host/status"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":[3],"method":"host/status"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1.5,"method":"host/status"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":true,"method":"host/status"}"#,
            -32600,
        ),
    ];
    let with_id: [(&[u8], i64, Value); 2] = [
        (
            br#"{"jsonrpc":"1.0","id":7,"method":"host/status"}"#,
            -32600,
            json!(7),
        ),
        (
            br#"{"id":"eight","method":"host/status"}"#,
            -32600,
            json!("eight"),
        ),
    ];
    let cases: Vec<(&[u8], i64, Value)> = no_usable_id
        .into_iter()
        .map(|(line, code)| (line, code, Value::Null))
        .chain(with_id)
        .collect();
    for (line, _, _) in &cases {
        stdin.write_all(line).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
    }
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"host/status\"}\n")
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the host answers")
            .unwrap()
            .expect("the host's stdout is open");
        serde_json::from_str(&line).unwrap()
    };
    for (line, code, id) in cases {
        let reply = next().await;
        let line = String::from_utf8_lossy(line);
        assert_eq!(reply["jsonrpc"], "2.0", "{line}: {reply}");
        assert_eq!(reply["error"]["code"], code, "{line}: {reply}");
        assert_eq!(reply["id"], id, "{line}: {reply}");
        assert_eq!(
            reply["error"]["data"]["failClass"], "contract",
            "{line}: {reply}"
        );
    }
    let status = next().await;
    assert_eq!(status["id"], 9, "{status}");
    assert!(status["result"]["host"].is_object(), "{status}");
    drop(stdin);
    let exit = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the host exits once its input ends")
        .unwrap();
    assert!(exit.success(), "{exit}");
}
