//! Everything the server pushes to the client goes through one queue, in the order it was decided:
//! diagnostics (always with the document version) and messages. The handlers and workers enqueue
//! while they hold the document store, so what reaches the client is the store's own order.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{Diagnostic, MessageType, Uri};

/// How long the client gets to answer `workspace/diagnostic/refresh`.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
enum Message {
    Publish {
        uri: Uri,
        diagnostics: Vec<Diagnostic>,
        version: Option<i32>,
    },
    Show {
        kind: MessageType,
        text: String,
    },
    Refresh,
}

/// The sending end of the queue; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Outbox {
    queue: mpsc::UnboundedSender<Message>,
}

impl Outbox {
    /// Starts the task that sends the queue to `client`.
    pub(crate) fn start(client: Client) -> (Outbox, JoinHandle<()>) {
        let (queue, receiver) = mpsc::unbounded_channel();
        (Outbox { queue }, tokio::spawn(drain(client, receiver)))
    }

    /// `textDocument/publishDiagnostics`: the full set for the document, replacing the last one.
    pub(crate) fn publish(&self, uri: Uri, diagnostics: Vec<Diagnostic>, version: Option<i32>) {
        let _ = self.queue.send(Message::Publish {
            uri,
            diagnostics,
            version,
        });
    }

    /// `window/showMessage`.
    pub(crate) fn show(&self, kind: MessageType, text: String) {
        let _ = self.queue.send(Message::Show { kind, text });
    }

    /// `workspace/diagnostic/refresh`: the client pulls every document again.
    pub(crate) fn refresh(&self) {
        let _ = self.queue.send(Message::Refresh);
    }
}

async fn drain(client: Client, mut receiver: mpsc::UnboundedReceiver<Message>) {
    while let Some(message) = receiver.recv().await {
        match message {
            Message::Publish {
                uri,
                diagnostics,
                version,
            } => client.publish_diagnostics(uri, diagnostics, version).await,
            Message::Show { kind, text } => client.show_message(kind, text).await,
            // A request: its answer is not waited for here, so a slow client cannot stall the queue.
            Message::Refresh => {
                let client = client.clone();
                tokio::spawn(async move {
                    let answer = tokio::time::timeout(
                        REFRESH_TIMEOUT,
                        client.workspace_diagnostic_refresh(),
                    )
                    .await;
                    if !matches!(answer, Ok(Ok(()))) {
                        tracing::debug!("the client did not answer workspace/diagnostic/refresh");
                    }
                });
            }
        }
    }
}
