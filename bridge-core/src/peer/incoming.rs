//! Incoming requests: admission (running + queued limits, duplicate ids), one task per request,
//! panics and `$/cancelRequest` turned into error replies.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::value::RawValue;
use tokio::sync::{Semaphore, oneshot, watch};

use super::{IncomingRequest, Peer, PeerConfig, Shared, error_object};
use crate::error::FailClass;
use crate::jsonrpc::{ErrorObject, Id};

/// The requests being served on one connection.
pub(super) struct Served {
    /// Permits for the handlers running at once.
    running: Arc<Semaphore>,
    /// Running and queued requests by id; the sender cancels one (taken when used).
    inflight: Mutex<HashMap<Id, Option<oneshot::Sender<()>>>>,
    /// Requests admitted and not yet answered (their reply queued).
    active: watch::Sender<usize>,
    limit: usize,
    refused: AtomicU64,
}

impl Served {
    pub(super) fn new(config: &PeerConfig) -> Served {
        let running = config.max_concurrent_incoming.max(1);
        Served {
            running: Arc::new(Semaphore::new(running)),
            inflight: Mutex::new(HashMap::new()),
            active: watch::Sender::new(0),
            limit: running.saturating_add(config.max_queued_incoming),
            refused: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Id, Option<oneshot::Sender<()>>>> {
        crate::lock(&self.inflight)
    }

    pub(super) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// `$/cancelRequest {id}` from the other side.
    pub(super) fn cancel(&self, id: &Id) {
        match self.lock().get_mut(id).and_then(Option::take) {
            Some(cancel) => {
                let _ = cancel.send(());
            }
            None => tracing::debug!(?id, "cancel for a request not in flight"),
        }
    }

    pub(super) fn cancel_all(&self) {
        for cancel in self.lock().values_mut().filter_map(Option::take) {
            let _ = cancel.send(());
        }
    }

    /// Resolves once no request is being served.
    pub(super) async fn idle(&self) {
        let mut active = self.active.subscribe();
        let _ = active.wait_for(|n| *n == 0).await;
    }
}

/// Admits one incoming request and starts its task, or answers it at once with an error.
pub(super) fn admit(shared: &Arc<Shared>, id: Id, method: String, params: Option<Box<RawValue>>) {
    let served = &shared.served;
    let (cancel, cancelled) = oneshot::channel();
    {
        let mut inflight = served.lock();
        if inflight.contains_key(&id) {
            drop(inflight);
            shared.strike(&format!("request id {id:?} reused while in flight"));
            let error = error_object(
                -32600,
                format!("invalid request: id {id} is already in flight"),
                FailClass::Contract,
                false,
            );
            shared.reply(Some(&id), Err(error));
            return;
        }
        if inflight.len() >= served.limit {
            drop(inflight);
            served.refused.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%method, "refused a request: too many running and queued");
            let error = error_object(
                -32000,
                "too many concurrent requests".into(),
                FailClass::Health,
                true,
            );
            shared.reply(Some(&id), Err(error));
            return;
        }
        inflight.insert(id.clone(), Some(cancel));
        served.active.send_modify(|n| *n += 1);
    }
    let request = IncomingRequest {
        method,
        params,
        id,
        peer: Peer {
            shared: shared.clone(),
        },
    };
    tokio::spawn(run(shared.clone(), request, cancelled));
}

/// Waits for a running slot, runs the handler on a task of its own, and queues the reply.
async fn run(shared: Arc<Shared>, request: IncomingRequest, mut cancelled: oneshot::Receiver<()>) {
    let id = request.id.clone();
    let method = request.method.clone();
    let outcome = async {
        let running = shared.served.running.clone();
        let _permit = tokio::select! {
            permit = running.acquire_owned() => permit,
            _ = &mut cancelled => return Err(cancelled_error()),
        };
        let handler = shared.handler.clone();
        // Its own task, so that a panic (even one raised before the future is returned) is caught.
        let mut task = tokio::spawn(async move { handler.request(request).await });
        tokio::select! {
            joined = &mut task => match joined {
                Ok(outcome) => outcome,
                Err(e) if e.is_panic() => {
                    tracing::error!(%method, "a request handler panicked");
                    Err(error_object(-32603, "internal error".into(), FailClass::Health, true))
                }
                Err(_) => Err(cancelled_error()),
            },
            _ = &mut cancelled => {
                task.abort();
                Err(cancelled_error())
            }
        }
    }
    .await;
    shared.served.lock().remove(&id);
    shared.reply_when_room(Some(&id), outcome).await;
    shared.served.active.send_modify(|n| *n -= 1);
}

fn cancelled_error() -> ErrorObject {
    error_object(-32800, "request cancelled".into(), FailClass::Health, false)
}
