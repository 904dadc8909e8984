//! The `LanguageServer` implementation, kept thin: each handler delegates to the [`Session`] and
//! none of them awaits the host or the client. [`serve`] runs it over a byte-stream pair.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bridge_core::source::BoxFuture;
use futures_util::FutureExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Request, Response, Result};
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, DocumentDiagnosticParams, DocumentDiagnosticReportResult,
    InitializeParams, InitializeResult, InitializedParams,
};
use tower_lsp_server::{LanguageServer, LspService, Server};

use crate::frames;
use crate::host::HostFactory;
use crate::outbox::{self, Queue};
use crate::session::{Session, Settings};

/// Capacity of the pipe between tower-lsp's output and the outbox's writer.
const OUTPUT_PIPE: usize = 64 * 1024;

/// How [`serve`] runs.
pub struct Options {
    /// Builds the host once the client has named the workspace root.
    pub host: HostFactory,
    /// How long a document's evaluation requests settle before it runs (default 250 ms).
    pub debounce: Duration,
    /// Deadline of an evaluation, overriding the host client's request deadline.
    pub evaluate_timeout: Option<Duration>,
}

impl Options {
    pub fn new(host: HostFactory) -> Options {
        Options {
            host,
            debounce: Duration::from_millis(250),
            evaluate_timeout: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("debounce", &self.debounce)
            .field("evaluate_timeout", &self.evaluate_timeout)
            .finish_non_exhaustive()
    }
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The client sent `shutdown` before `exit` (or before closing the stream).
    pub shutdown_requested: bool,
}

impl Outcome {
    /// The process exit code LSP asks for: 0 after `shutdown`, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.shutdown_requested { 0 } else { 1 }
    }
}

/// Serves the language server on `input`/`output` until `exit` (even with `input` still open) or
/// the end of `input`; then shuts the host down and returns. A malformed frame on `input` is
/// answered with a JSON-RPC error and the server goes on.
pub async fn serve<I, O>(input: I, output: O, options: Options) -> Outcome
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
{
    let settings = Settings {
        debounce: options.debounce,
        timeout: options.evaluate_timeout,
    };
    let host = options.host;
    let (queue, queued) = Queue::new();
    let (service, socket) = LspService::build(move |client| Backend {
        session: Session::new(client, settings, host, queue),
    })
    .custom_method(frames::MALFORMED, Backend::malformed)
    .finish();
    let session = service.inner().session.clone();
    let (input, reading) = frames::checked(input);
    // tower-lsp writes into a pipe; the outbox merges its frames with the session's own pushes.
    let (server_output, from_server) = tokio::io::duplex(OUTPUT_PIPE);
    let serving = Server::new(input, server_output, socket).serve(CatchPanic(service));
    tokio::join!(serving, outbox::write(from_server, queued, output));
    reading.abort();
    Outcome {
        shutdown_requested: session.finish().await,
    }
}

struct Backend {
    session: Arc<Session>,
}

impl Backend {
    /// Answers a malformed frame (see [`frames`]) with the error it deserves.
    async fn malformed(&self, params: frames::Malformed) -> Result<()> {
        Err(Error {
            code: ErrorCode::from(params.code),
            message: params.message.into(),
            data: None,
        })
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        Ok(self.session.initialize(&params).await)
    }

    async fn initialized(&self, _: InitializedParams) {
        self.session.initialized();
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.shutdown();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        self.session.open(params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        self.session.change(params);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.session.save(params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.session.close(params);
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        Ok(self.session.pull(&params))
    }
}

/// The language server's service, with each handler's panic caught: its request is answered with an
/// internal error and logged, instead of taking the server (and the editor's session) down.
#[derive(Debug)]
struct CatchPanic<S>(S);

impl<S> Service<Request> for CatchPanic<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, std::result::Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let id = request.id().cloned();
        let method = request.method().to_owned();
        let failed = move || {
            tracing::error!(%method, "a language server handler panicked");
            Ok(id.map(|id| Response::from_error(id, Error::internal_error())))
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.0.call(request))) {
            Ok(future) => Box::pin(
                AssertUnwindSafe(future)
                    .catch_unwind()
                    .map(|outcome| outcome.unwrap_or_else(|_| failed())),
            ),
            Err(_) => Box::pin(std::future::ready(failed())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A service whose handler panics when it runs, or already when it is called.
    struct Panicky {
        at_call: bool,
    }

    impl Service<Request> for Panicky {
        type Response = Option<Response>;
        type Error = std::convert::Infallible;
        type Future = BoxFuture<'static, std::result::Result<Option<Response>, Self::Error>>;

        fn poll_ready(
            &mut self,
            _: &mut Context<'_>,
        ) -> Poll<std::result::Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request) -> Self::Future {
            assert!(!self.at_call, "handler bug at call");
            Box::pin(async { panic!("handler bug") })
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_with_an_internal_error() {
        for at_call in [false, true] {
            let request: Request = serde_json::from_value(
                json!({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {}}),
            )
            .unwrap();
            let mut service = CatchPanic(Panicky { at_call });
            let response = service.call(request).await.unwrap().unwrap();
            let response = serde_json::to_value(response).unwrap();
            assert_eq!(response["id"], 7);
            assert_eq!(response["error"]["code"], -32603);
        }
    }
}
