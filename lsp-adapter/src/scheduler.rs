//! One evaluation worker per open document: it waits for the document to ask for an evaluation, lets
//! the requests settle for the debounce delay (trailing edge), and runs one evaluation at a time.
//! Requests that arrive while one runs coalesce into a single re-run; the result of the one running
//! is then superseded and never published.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The handle on a document's worker; dropping it stops the worker (and its host call).
#[derive(Debug)]
pub(crate) struct Worker {
    requests: watch::Sender<u64>,
    task: AbortHandle,
}

impl Worker {
    /// Starts a document's worker with evaluation `seq` already asked for; `evaluate` runs one
    /// evaluation of the document (the session's, for that document).
    pub(crate) fn start<E, F>(evaluate: E, seq: u64, debounce: Duration) -> Worker
    where
        E: Fn(u64) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let (requests, receiver) = watch::channel(0);
        requests.send_replace(seq);
        let task = tokio::spawn(run(evaluate, receiver, debounce)).abort_handle();
        Worker { requests, task }
    }

    /// Asks for evaluation `seq`, the document's newest.
    pub(crate) fn request(&self, seq: u64) {
        self.requests.send_replace(seq);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run<E, F>(evaluate: E, mut requests: watch::Receiver<u64>, debounce: Duration)
where
    E: Fn(u64) -> F,
    F: Future<Output = ()>,
{
    loop {
        if requests.changed().await.is_err() {
            return;
        }
        loop {
            match tokio::time::timeout(debounce, requests.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => return,
                Err(_elapsed) => break,
            }
        }
        let seq = *requests.borrow_and_update();
        evaluate(seq).await;
    }
}
