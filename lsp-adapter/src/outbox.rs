//! Everything the server pushes to the client goes through one queue, in the order it was decided:
//! diagnostics (always with the document version) and messages. The handlers and workers enqueue
//! while they hold the document store, so what reaches the client is the store's own order.
//!
//! Notifications are serialised here, straight from the diagnostics the store holds, into the frame
//! the client reads. Through tower-lsp's `Client` each publish would be cloned, turned into a
//! `serde_json::Value` tree and only then serialised: for a large result most of the time went to
//! building and freeing those copies. [`wire`] writes these frames and tower-lsp's own (responses,
//! requests, progress) to the output, each one whole. Like tower-lsp's `Client`, nothing is pushed
//! before `initialize` is answered: pushes come from the `did*` handlers, `initialized` and
//! evaluations, which tower-lsp runs only once the server is initialized.

mod wire;

use std::time::Duration;

use serde::{Serialize, Serializer};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::{Notification, PublishDiagnostics, ShowMessage};
use tower_lsp_server::ls_types::{Diagnostic, MessageType, ShowMessageParams, Uri};

pub(crate) use wire::{Queue, write};

/// How long the client gets to answer `workspace/diagnostic/refresh`.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);

/// The sending end of the queue; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Outbox {
    queue: Queue,
    client: Client,
}

/// A JSON-RPC notification, as tower-lsp would write it.
#[derive(Serialize)]
struct Message<P> {
    jsonrpc: &'static str,
    method: &'static str,
    params: P,
}

/// `PublishDiagnosticsParams`, borrowing the diagnostics instead of owning a copy.
#[derive(Serialize)]
struct PublishParams<'a, D: Serialize> {
    uri: &'a Uri,
    diagnostics: D,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i32>,
}

/// Diagnostics serialised as one array from any (cloneable) iterator over them.
struct List<I>(I);

impl<'a, I: Iterator<Item = &'a Diagnostic> + Clone> Serialize for List<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.clone())
    }
}

impl Outbox {
    /// The outbox of the server whose output is written from `queue` (see [`write`]).
    pub(crate) fn new(client: Client, queue: Queue) -> Outbox {
        Outbox { queue, client }
    }

    /// `textDocument/publishDiagnostics`: the full set for the document, replacing the last one.
    pub(crate) fn publish<'a>(
        &self,
        uri: &Uri,
        diagnostics: impl Iterator<Item = &'a Diagnostic> + Clone,
        version: Option<i32>,
    ) {
        let params = PublishParams {
            uri,
            diagnostics: List(diagnostics),
            version,
        };
        self.notify(PublishDiagnostics::METHOD, params);
    }

    /// `window/showMessage`.
    pub(crate) fn show(&self, kind: MessageType, text: String) {
        let params = ShowMessageParams {
            typ: kind,
            message: text,
        };
        self.notify(ShowMessage::METHOD, params);
    }

    /// `workspace/diagnostic/refresh`: the client pulls every document again. A request: its answer
    /// is not waited for here, so a slow client cannot stall the queue.
    pub(crate) fn refresh(&self) {
        let client = self.client.clone();
        tokio::spawn(async move {
            let answer =
                tokio::time::timeout(REFRESH_TIMEOUT, client.workspace_diagnostic_refresh()).await;
            if !matches!(answer, Ok(Ok(()))) {
                tracing::debug!("the client did not answer workspace/diagnostic/refresh");
            }
        });
    }

    fn notify<P: Serialize>(&self, method: &'static str, params: P) {
        let message = Message {
            jsonrpc: "2.0",
            method,
            params,
        };
        match serde_json::to_vec(&message) {
            Ok(body) => self.queue.send(body),
            Err(error) => tracing::error!(method, %error, "a notification did not serialise"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use tower_lsp_server::ls_types::notification::PublishDiagnostics;
    use tower_lsp_server::ls_types::{
        CodeDescription, DiagnosticSeverity, NumberOrString, Position, PublishDiagnosticsParams,
        Range,
    };

    fn diagnostic(line: u32) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 1), Position::new(line, 4)),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String("x/rule".into())),
            code_description: Some(CodeDescription {
                href: "https://example.test/r".parse().unwrap(),
            }),
            source: Some("x".into()),
            message: "naïve 漢字 😀 \"quoted\"\nnext".into(),
            data: Some(json!({"fingerprint": "sha256:1", "authoritative": false})),
            ..Diagnostic::default()
        }
    }

    /// What tower-lsp's `Client::publish_diagnostics` puts on the wire, as JSON.
    fn tower_lsp_publish(uri: &Uri, diagnostics: Vec<Diagnostic>, version: Option<i32>) -> Value {
        let params = PublishDiagnosticsParams::new(uri.clone(), diagnostics, version);
        json!({"jsonrpc": "2.0", "method": PublishDiagnostics::METHOD,
            "params": serde_json::to_value(params).unwrap()})
    }

    #[test]
    fn a_publish_is_the_json_tower_lsp_would_send() {
        let uri: Uri = "file:///w/src/a%20b.ts".parse().unwrap();
        let list = [diagnostic(0), diagnostic(7)];
        for version in [Some(3), None] {
            let params = PublishParams {
                uri: &uri,
                diagnostics: List(list.iter()),
                version,
            };
            let message = Message {
                jsonrpc: "2.0",
                method: PublishDiagnostics::METHOD,
                params,
            };
            let ours: Value =
                serde_json::from_slice(&serde_json::to_vec(&message).unwrap()).unwrap();
            assert_eq!(ours, tower_lsp_publish(&uri, list.to_vec(), version));
        }
    }
}
