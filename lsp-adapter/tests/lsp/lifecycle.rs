//! The server's life: it ends on `exit` even with its input open, shuts the host down, ignores
//! what is not in the workspace, and answers malformed messages with errors instead of dying.

use serde_json::{Value, json};

use crate::host::TestHost;
use crate::support::{TestClient, Workspace, clean, plain_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_ends_the_server_while_the_client_keeps_its_output_open_and_the_host_is_shut_down() {
    let workspace = Workspace::new(&[("a.ts", "a\n")]);
    let host = TestHost::new(clean());
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), "a.ts").await;
    client.published(&uri).await;
    let outcome = client.stop().await;
    assert!(outcome.shutdown_requested);
    assert_eq!(outcome.exit_code(), 0);
    assert_eq!(host.shutdowns(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_without_shutdown_asks_for_exit_status_1() {
    let workspace = Workspace::new(&[]);
    let host = TestHost::new(clean());
    let client = TestClient::initialized(&host, &workspace, plain_client()).await;
    client.notify("exit", Value::Null);
    let outcome = client.finished().await;
    assert_eq!(outcome.exit_code(), 1);
    assert_eq!(host.shutdowns(), 1, "the host is shut down all the same");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_that_ends_before_initialize_asks_for_exit_status_1() {
    let host = TestHost::new(clean());
    let options = lsp_adapter::Options::new(host.factory());
    let outcome = lsp_adapter::serve(tokio::io::empty(), tokio::io::sink(), options).await;
    assert!(!outcome.shutdown_requested);
    assert_eq!(outcome.exit_code(), 1);
    assert_eq!(
        host.starts(),
        0,
        "no host is started for a client that never came"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_after_shutdown_are_refused() {
    let workspace = Workspace::new(&[]);
    let host = TestHost::new(clean());
    let mut client = TestClient::initialized(&host, &workspace, plain_client()).await;
    client.request("shutdown", Value::Null).await;
    let refused = client
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": "file:///x"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    client.notify("exit", Value::Null);
    assert_eq!(client.finished().await.exit_code(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_outside_the_workspace_are_never_sent_to_the_host() {
    let workspace = Workspace::new(&[("inside.ts", "x\n")]);
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("secret.ts"), "x\n").unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), workspace.root().join("link")).unwrap();
    let host = TestHost::new(clean());
    let mut client = TestClient::initialized(&host, &workspace, plain_client()).await;
    for outside in [
        "file:///etc/hostname".to_owned(),
        workspace.uri("link/secret.ts"),
        workspace.uri("../escape.ts"),
        "untitled:Untitled-1".to_owned(),
    ] {
        client.open(&outside, 1, "x\n");
    }
    let inside = workspace.uri("inside.ts");
    client.open(&inside, 1, "x\n");
    client.published(&inside).await;
    let paths: Vec<Value> = host
        .evaluations()
        .iter()
        .map(|e| e["changeset"]["changes"].clone())
        .collect();
    assert_eq!(paths, [json!([])], "only the document inside was evaluated");
    assert!(
        client
            .seen
            .iter()
            .all(|m| m["params"]["uri"].as_str().is_none_or(|u| u == inside)),
        "nothing was published for the others"
    );
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_get_errors_and_the_server_keeps_serving() {
    let workspace = Workspace::new(&[]);
    let host = TestHost::new(clean());
    let mut client = TestClient::initialized(&host, &workspace, plain_client()).await;

    let bad_params = client
        .request("textDocument/diagnostic", json!({"textDocument": 5}))
        .await;
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");
    let unknown = client.request("asp/doSomething", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    client.send_raw(b"{this is not json");
    let parse_error = client.response(Value::Null).await;
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    client.send_raw(br#"{"jsonrpc": "1.0", "id": 9, "method": "initialize"}"#);
    let invalid = client.response(json!(9)).await;
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    client.notify("textDocument/didChange", json!({"nonsense": true}));
    client.notify("textDocument/didOpen", json!({"textDocument": {"uri": 42}}));

    client.barrier().await;
    assert_eq!(client.stop().await.exit_code(), 0, "still serving");
}
