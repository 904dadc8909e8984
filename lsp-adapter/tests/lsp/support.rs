//! The test's side of the language server: an LSP client over an in-memory duplex (framing, ids,
//! answers to the server's own requests), a git workspace, and host decisions built from fixtures.
//!
//! Every wait is for a message or an event; the only clock is a hang guard that fails the test if
//! the server goes silent.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_adapter::{Options, Outcome};
use serde_json::{Value, json};
use test_support::lsp::{frame, frame_bytes, read_frame};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::host::TestHost;

/// How long the server may stay silent before a test is declared hung.
const HANG: Duration = Duration::from_secs(30);

pub(crate) use test_support::fixture;

/// A finding like the gating fixture's, on `path` from `start` to `end` (`(line, utf-16 char)`).
pub(crate) fn finding(path: &str, start: (u32, u32), end: (u32, u32), code: &str) -> Value {
    let mut finding = fixture("outer/evaluate.deny.gating.json")["findings"][0].clone();
    let diagnostic = &mut finding["diagnostic"];
    diagnostic["location"] = json!({"path": path, "range": {
        "start": {"line": start.0, "char": start.1},
        "end": {"line": end.0, "char": end.1},
    }});
    diagnostic["code"] = json!(code);
    diagnostic["codeDescription"] = json!({"href": format!("https://example.test/rules/{code}")});
    finding
}

/// A deny decision (the gating fixture) with these findings.
pub(crate) fn decision(findings: Vec<Value>) -> Value {
    let mut decision = fixture("outer/evaluate.deny.gating.json");
    decision["findings"] = Value::Array(findings);
    decision
}

/// The file most tests open.
pub(crate) const API_TS: &str = "src/api.ts";

/// A deny decision with one finding, `code`, on [`API_TS`] from `start` to `end`.
pub(crate) fn denies_in_api_ts(start: (u32, u32), end: (u32, u32), code: &str) -> Value {
    decision(vec![finding(API_TS, start, end, code)])
}

/// A workspace whose [`API_TS`] holds `text`, and a host that denies it with one finding, `code`,
/// from `start` to `end`.
pub(crate) fn api_ts_denied(
    text: &str,
    start: (u32, u32),
    end: (u32, u32),
    code: &str,
) -> (Workspace, TestHost) {
    let workspace = Workspace::new(&[(API_TS, text)]);
    (workspace, TestHost::new(denies_in_api_ts(start, end, code)))
}

/// An allow decision with whole coverage: nothing to show.
pub(crate) fn clean() -> Value {
    fixture("core/evaluate.allow.json")
}

/// A git repository with one commit and the given files.
pub(crate) use test_support::git::Repo as Workspace;

/// Capabilities of a plain client: UTF-16, push only, no progress.
pub(crate) fn plain_client() -> Value {
    json!({})
}

/// Capabilities of a client like VS Code: code descriptions, pull with refresh, progress.
pub(crate) fn rich_client() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-16"]},
        "textDocument": {
            "publishDiagnostics": {"codeDescriptionSupport": true, "dataSupport": true},
            "diagnostic": {"dynamicRegistration": false},
        },
        "workspace": {"diagnostics": {"refreshSupport": true}},
        "window": {"workDoneProgress": true},
    })
}

/// Capabilities of a client that prefers UTF-8 (Neovim 0.11, Emacs, Helix).
pub(crate) fn utf8_client() -> Value {
    json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}})
}

/// Server requests whose answer waits until the test releases it, by method.
type Holds = Arc<Mutex<HashMap<String, watch::Receiver<bool>>>>;

/// An LSP client connected to a server running in this process.
pub(crate) struct TestClient {
    frames: mpsc::UnboundedSender<Vec<u8>>,
    holds: Holds,
    incoming: mpsc::UnboundedReceiver<Value>,
    backlog: VecDeque<Value>,
    next_id: i64,
    server: JoinHandle<Outcome>,
    /// Every message the server sent, in order.
    pub(crate) seen: Vec<Value>,
}

impl TestClient {
    /// Starts a server for `host` (no debounce) and connects to it.
    pub(crate) fn start(host: &TestHost) -> TestClient {
        let mut options = Options::new(host.factory());
        options.debounce = Duration::ZERO;
        TestClient::with_options(options)
    }

    /// [`TestClient::start`], then `initialize` at the workspace's root with `capabilities`.
    pub(crate) async fn initialized(
        host: &TestHost,
        workspace: &Workspace,
        capabilities: Value,
    ) -> TestClient {
        let mut client = TestClient::start(host);
        client.initialize(&workspace.root(), capabilities).await;
        client
    }

    /// [`TestClient::initialized`] with the workspace file `path` open (version 1, its text on
    /// disk): the client and the document's URI.
    pub(crate) async fn opened(
        host: &TestHost,
        workspace: &Workspace,
        capabilities: Value,
        path: &str,
    ) -> (TestClient, String) {
        let client = TestClient::initialized(host, workspace, capabilities).await;
        let uri = workspace.uri(path);
        let text = std::fs::read_to_string(workspace.root().join(path)).expect("a workspace file");
        client.open(&uri, 1, &text);
        (client, uri)
    }

    pub(crate) fn with_options(options: Options) -> TestClient {
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (server_in, server_out) = tokio::io::split(server_end);
        let server = tokio::spawn(lsp_adapter::serve(server_in, server_out, options));
        let (reader, mut writer) = tokio::io::split(client_end);
        let (frames, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(frame) = outgoing.recv().await {
                if writer.write_all(&frame).await.is_err() {
                    return;
                }
            }
        });
        let (deliver, incoming) = mpsc::unbounded_channel();
        let holds = Holds::default();
        let reader = BufReader::new(reader);
        tokio::spawn(read_frames(reader, deliver, frames.clone(), holds.clone()));
        TestClient {
            frames,
            holds,
            incoming,
            backlog: VecDeque::new(),
            next_id: 1,
            server,
            seen: Vec::new(),
        }
    }

    /// From now on the server's `method` requests are answered only once the test sends `true`.
    pub(crate) fn hold(&self, method: &str) -> watch::Sender<bool> {
        let (release, held) = watch::channel(false);
        self.holds.lock().unwrap().insert(method.to_owned(), held);
        release
    }

    fn send(&self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        self.send_raw(&body);
    }

    /// Sends `body` as one frame, whatever it holds.
    pub(crate) fn send_raw(&self, body: &[u8]) {
        let _ = self.frames.send(frame_bytes(body));
    }

    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns the whole response message.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(json!(id)).await
    }

    /// Returns once the server has handled every message sent before: a request is answered only
    /// after the notifications ahead of it have run (their handlers never wait).
    pub(crate) async fn barrier(&mut self) {
        let params = json!({"textDocument": {"uri": "file:///barrier"}});
        self.request("textDocument/diagnostic", params).await;
    }

    /// The response with this id; other messages stay queued for [`TestClient::wait_for`].
    pub(crate) async fn response(&mut self, id: Value) -> Value {
        let mut skipped = VecDeque::new();
        loop {
            let message = self.receive().await;
            if message.get("method").is_none() && message["id"] == id {
                skipped.extend(self.backlog.drain(..));
                self.backlog = skipped;
                return message;
            }
            skipped.push_back(message);
        }
    }

    async fn receive(&mut self) -> Value {
        if let Some(message) = self.backlog.pop_front() {
            return message;
        }
        let message = tokio::time::timeout(HANG, self.incoming.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the server sent nothing for {HANG:?}; seen: {:#?}",
                    self.seen
                )
            })
            .expect("the server closed its output");
        self.seen.push(message.clone());
        message
    }

    /// The next server message that satisfies `wanted`; the ones before it are passed over.
    pub(crate) async fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.receive().await;
            if wanted(&message) {
                return message;
            }
        }
    }

    /// The next `publishDiagnostics` for `uri` (its params).
    pub(crate) async fn published(&mut self, uri: &str) -> Value {
        let message = self
            .wait_for(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
            })
            .await;
        message["params"].clone()
    }

    /// The next `window/showMessage` (its params).
    pub(crate) async fn shown(&mut self) -> Value {
        self.wait_for(|m| m["method"] == "window/showMessage").await["params"].clone()
    }

    /// `initialize` for a workspace at `root` with these client capabilities, then `initialized`.
    pub(crate) async fn initialize(&mut self, root: &Path, capabilities: Value) -> Value {
        let uri = format!("file://{}", root.display());
        let response = self
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": "w"}],
                    "capabilities": capabilities,
                }),
            )
            .await;
        self.notify("initialized", json!({}));
        response["result"].clone()
    }

    pub(crate) fn open(&self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "typescript", "version": version, "text": text}}),
        );
    }

    /// One incremental change: `text` replaces the range from `start` to `end`.
    pub(crate) fn change(
        &self,
        uri: &str,
        version: i32,
        start: (u32, u32),
        end: (u32, u32),
        text: &str,
    ) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {
                    "start": {"line": start.0, "character": start.1},
                    "end": {"line": end.0, "character": end.1},
                }, "text": text}],
            }),
        );
    }

    pub(crate) fn save(&self, uri: &str) {
        self.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    pub(crate) fn close(&self, uri: &str) {
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    /// `shutdown` then `exit`, with the client's output left open; returns how the server ended.
    pub(crate) async fn stop(mut self) -> Outcome {
        let response = self.request("shutdown", Value::Null).await;
        assert_eq!(response["result"], Value::Null, "{response}");
        self.notify("exit", Value::Null);
        self.finished().await
    }

    /// Waits for the server to end, keeping the client's output open.
    pub(crate) async fn finished(self) -> Outcome {
        let TestClient { frames, server, .. } = self;
        let outcome = tokio::time::timeout(HANG, server)
            .await
            .expect("the server is still running")
            .expect("the server task panicked");
        drop(frames);
        outcome
    }
}

/// Reads LSP frames; answers the server's requests (progress creation, refresh) with `null`, at
/// once or when released (see [`TestClient::hold`]), and delivers every message.
async fn read_frames(
    mut reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    deliver: mpsc::UnboundedSender<Value>,
    frames: mpsc::UnboundedSender<Vec<u8>>,
    holds: Holds,
) {
    while let Some(body) = read_frame(&mut reader).await {
        let message: Value = serde_json::from_slice(&body).expect("a JSON body");
        if message.get("method").is_some() && message.get("id").is_some() {
            let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": null});
            let answer = frame(&answer);
            let held = message["method"]
                .as_str()
                .and_then(|method| holds.lock().unwrap().get(method).cloned());
            let frames = frames.clone();
            tokio::spawn(async move {
                if let Some(mut held) = held {
                    let _ = held.wait_for(|released| *released).await;
                }
                let _ = frames.send(answer);
            });
        }
        if deliver.send(message).is_err() {
            return;
        }
    }
}

/// `(line, character)` of a diagnostic's start and end.
pub(crate) fn span(diagnostic: &Value) -> ((u64, u64), (u64, u64)) {
    let at = |p: &Value| {
        (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        )
    };
    (
        at(&diagnostic["range"]["start"]),
        at(&diagnostic["range"]["end"]),
    )
}
