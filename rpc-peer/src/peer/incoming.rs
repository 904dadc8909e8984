//! Incoming requests: admission (running + queued limits, duplicate ids), one task per request,
//! panics and `$/cancelRequest` turned into error replies, and the room a handler reserves for a
//! large answer before it builds it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot, watch};

use super::{IncomingRequest, Peer, PeerConfig, Shared, error_object, outgoing};
use crate::error::FailClass;
use crate::jsonrpc::{ErrorObject, Id};

/// The requests being served on one connection.
pub(super) struct Served {
    /// Permits for the handlers running at once.
    running: Arc<Semaphore>,
    /// Running and queued requests by id.
    inflight: Mutex<HashMap<Id, Slot>>,
    /// Requests admitted and not yet answered (their reply queued).
    active: watch::Sender<usize>,
    limit: usize,
    refused: AtomicU64,
    /// Bytes of answers whose handlers reserved room for them, until they are written.
    room: Arc<Semaphore>,
    /// The whole of `room`, in permits.
    room_permits: u32,
}

/// One request being served.
#[derive(Default)]
struct Slot {
    /// Cancels the request (taken when used).
    cancel: Option<oneshot::Sender<()>>,
    /// The room its handler reserved for its answer; goes with the answer to the writer.
    room: Option<OwnedSemaphorePermit>,
}

impl Served {
    pub(super) fn new(config: &PeerConfig) -> Served {
        let running = config.max_concurrent_incoming.max(1);
        let room_permits = u32::try_from(config.max_reply_bytes.max(1)).unwrap_or(u32::MAX);
        Served {
            running: Arc::new(Semaphore::new(running)),
            inflight: Mutex::new(HashMap::new()),
            active: watch::Sender::new(0),
            limit: running.saturating_add(config.max_queued_incoming),
            refused: AtomicU64::new(0),
            room: Arc::new(Semaphore::new(room_permits as usize)),
            room_permits,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Id, Slot>> {
        crate::sync::lock(&self.inflight)
    }

    pub(super) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// `$/cancelRequest {id}` from the other side.
    pub(super) fn cancel(&self, id: &Id) {
        match self.lock().get_mut(id).and_then(|slot| slot.cancel.take()) {
            Some(cancel) => {
                let _ = cancel.send(());
            }
            None => tracing::debug!(?id, "cancel for a request not in flight"),
        }
    }

    pub(super) fn cancel_all(&self) {
        for cancel in self
            .lock()
            .values_mut()
            .filter_map(|slot| slot.cancel.take())
        {
            let _ = cancel.send(());
        }
    }

    /// Resolves once no request is being served.
    pub(super) async fn idle(&self) {
        let mut active = self.active.subscribe();
        let _ = active.wait_for(|n| *n == 0).await;
    }
}

/// Admits one incoming request and starts its task, or gives back the error reply it is owed (see
/// [`Shared::owe`]). A reused id is answered at once or not at all (see the module doc of `peer`).
pub(super) fn admit(
    shared: &Arc<Shared>,
    id: Id,
    method: String,
    params: Option<Box<RawValue>>,
) -> Option<Vec<u8>> {
    let served = &shared.served;
    let (cancel, cancelled) = oneshot::channel();
    {
        let mut inflight = served.lock();
        if inflight.contains_key(&id) {
            drop(inflight);
            shared.strike(&format!("request id {id:?} reused while in flight"));
            let error = error_object(
                crate::jsonrpc::INVALID_REQUEST,
                format!("invalid request: id {id} is already in flight"),
                FailClass::Contract,
                false,
            );
            shared.reply(Some(&id), Err(error));
            return None;
        }
        if inflight.len() >= served.limit {
            drop(inflight);
            served.refused.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%method, "refused a request: too many running and queued");
            let error = error_object(
                crate::jsonrpc::SERVER_ERROR,
                "too many concurrent requests".into(),
                FailClass::Health,
                true,
            );
            return outgoing::response_frame(Some(&id), Err(error));
        }
        inflight.insert(
            id.clone(),
            Slot {
                cancel: Some(cancel),
                room: None,
            },
        );
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
    None
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
                    Err(error_object(crate::jsonrpc::INTERNAL_ERROR, "internal error".into(), FailClass::Health, true))
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
    let room = shared.served.lock().remove(&id).and_then(|slot| slot.room);
    shared.reply_when_room(Some(&id), outcome, room).await;
    shared.served.active.send_modify(|n| *n -= 1);
}

fn cancelled_error() -> ErrorObject {
    error_object(
        crate::jsonrpc::REQUEST_CANCELLED,
        "request cancelled".into(),
        FailClass::Health,
        false,
    )
}

impl IncomingRequest {
    /// Waits until `bytes` of the connection's room for answers waiting to be written
    /// ([`PeerConfig::max_reply_bytes`]) are free, and holds them for this request's answer until it
    /// is written: a handler whose answer is large asks before it builds it, so answers that cannot
    /// be sent yet are never built. An answer larger than the whole room takes all of it. Fails with
    /// a retryable `health` error (for the handler to answer with) when there is no room within the
    /// connection's request deadline, or the connection closes first.
    pub async fn room(&self, bytes: usize) -> std::result::Result<(), ErrorObject> {
        let shared = &self.peer.shared;
        let served = &shared.served;
        let permits = u32::try_from(bytes.max(1))
            .unwrap_or(u32::MAX)
            .min(served.room_permits);
        let mut closed = shared.closed.subscribe();
        let mut written = shared.written.subscribe();
        let no_room = || {
            error_object(
                crate::jsonrpc::SERVER_ERROR,
                format!(
                    "no room to send an answer of {bytes} bytes: the other side is not reading"
                ),
                FailClass::Health,
                true,
            )
        };
        let permit = tokio::select! {
            permit = served.room.clone().acquire_many_owned(permits) => permit.map_err(|_| no_room())?,
            _ = closed.wait_for(|closed| *closed) => return Err(no_room()),
            _ = written.wait_for(|done| *done) => return Err(no_room()),
            () = tokio::time::sleep(shared.config.request_timeout) => return Err(no_room()),
        };
        if let Some(slot) = served.lock().get_mut(&self.id) {
            match &mut slot.room {
                Some(held) => held.merge(permit),
                room => *room = Some(permit),
            }
        }
        Ok(())
    }
}
