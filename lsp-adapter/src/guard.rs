//! A panic guard around the language server: a handler that panics answers its request with an
//! internal error and is logged, instead of taking the server (and the editor's session) down.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use tower::Service;
use tower_lsp_server::jsonrpc::{Error, Request, Response};

use bridge_core::source::BoxFuture;

/// Wraps a `Service<Request>` (the `LspService`) so that panics become internal errors.
#[derive(Debug)]
pub(crate) struct CatchPanic<S>(pub(crate) S);

impl<S> Service<Request> for CatchPanic<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let id = request.id().cloned();
        let method = request.method().to_owned();
        let failed = move || {
            tracing::error!(%method, "a language server handler panicked");
            Ok(id.map(|id| Response::from_error(id, Error::internal_error())))
        };
        match catch_unwind(AssertUnwindSafe(|| self.0.call(request))) {
            Ok(future) => Box::pin(async move {
                match (Unwinding {
                    future: Box::pin(future),
                })
                .await
                {
                    Some(outcome) => outcome,
                    None => failed(),
                }
            }),
            Err(_) => Box::pin(std::future::ready(failed())),
        }
    }
}

/// Polls a future inside `catch_unwind`: `None` if it panicked.
struct Unwinding<F> {
    future: F,
}

impl<F: Future + Unpin> Future for Unwinding<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = &mut self.future;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(future).poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Some(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A service whose handler panics when it runs.
    struct Panicky;

    impl Service<Request> for Panicky {
        type Response = Option<Response>;
        type Error = std::convert::Infallible;
        type Future = BoxFuture<'static, Result<Option<Response>, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request) -> Self::Future {
            Box::pin(async { panic!("handler bug") })
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_with_an_internal_error() {
        let request: Request = serde_json::from_value(
            json!({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {}}),
        )
        .unwrap();
        let response = CatchPanic(Panicky).call(request).await.unwrap().unwrap();
        let response = serde_json::to_value(response).unwrap();
        assert_eq!(response["id"], 7);
        assert_eq!(response["error"]["code"], -32603);
    }
}
