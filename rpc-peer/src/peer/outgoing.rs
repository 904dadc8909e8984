//! The outgoing side of a connection: requests registered and queued (waiting for room when the
//! bounded queue is full), the answers the reader task owes (waiting for room off the reader, within
//! a budget), notifications queued without waiting, and the writer task.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::AsyncWrite;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot, watch};

use super::{Inflight, Outgoing, Pending, ProgressSender, Shared};
use crate::error::{Error, Result};
use crate::framing::FrameWriter;
use crate::jsonrpc::{ErrorObject, Id, OutgoingNotification, OutgoingRequest, OutgoingResponse};

/// A request encoded and waiting to be registered and queued.
pub(super) struct Prepared {
    id: i64,
    frame: Vec<u8>,
    method: String,
    progress: Option<ProgressSender>,
}

impl Prepared {
    pub(super) fn take(&mut self) -> Prepared {
        Prepared {
            id: self.id,
            frame: std::mem::take(&mut self.frame),
            method: std::mem::take(&mut self.method),
            progress: self.progress.take(),
        }
    }
}

pub(super) type Registered = Result<(oneshot::Receiver<Result<Box<RawValue>>>, Inflight)>;

impl Shared {
    /// Encodes a request under a fresh id.
    pub(super) fn prepare<P: Serialize>(
        &self,
        method: &str,
        params: Option<&P>,
        progress: Option<ProgressSender>,
    ) -> Result<Prepared> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = serde_json::to_vec(&OutgoingRequest {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map_err(|e| Error::Input(format!("cannot encode {method} params: {e}")))?;
        Ok(Prepared {
            id,
            frame,
            method: method.to_owned(),
            progress,
        })
    }

    /// Registers the request and queues its frame into the room `permit` holds.
    pub(super) fn register(
        self: &Arc<Self>,
        request: Prepared,
        permit: mpsc::OwnedPermit<Outgoing>,
    ) -> Registered {
        let (reply, receiver) = oneshot::channel();
        let mut state = self.lock();
        if state.closed.is_some() {
            drop(state);
            return Err(self.closed_error());
        }
        state.pending.insert(
            request.id,
            Pending {
                method: request.method,
                reply,
                progress: request.progress,
            },
        );
        // Queued under the lock, so the order of ids on the wire is the order of registration.
        permit.send(Outgoing::Frame(request.frame));
        drop(state);
        Ok((
            receiver,
            Inflight {
                shared: self.clone(),
                id: request.id,
                answered: false,
            },
        ))
    }

    /// Waits for room in the outgoing queue (or for the connection to close), then registers.
    pub(super) async fn register_when_room(self: &Arc<Self>, request: Prepared) -> Registered {
        let mut closed = self.closed.subscribe();
        tokio::select! {
            permit = self.outgoing.clone().reserve_owned() => match permit {
                Ok(permit) => self.register(request, permit),
                Err(_) => Err(self.closed_error()),
            },
            _ = closed.wait_for(|closed| *closed) => Err(self.closed_error()),
        }
    }

    /// Queues a frame the reader task (or a `Drop`) sends: never waits; dropped and counted when
    /// the queue is full.
    pub(super) fn send_now(&self, frame: Vec<u8>, what: &str) {
        if let Err(mpsc::error::TrySendError::Full(_)) =
            self.outgoing.try_send(Outgoing::Frame(frame))
        {
            self.dropped_outgoing.fetch_add(1, Ordering::Relaxed);
            tracing::debug!("the outgoing queue is full: {what} dropped");
        }
    }

    pub(super) fn send_notification(&self, method: &str, params: &Value) {
        let notification = OutgoingNotification {
            jsonrpc: "2.0",
            method,
            params: Some(params),
        };
        if let Ok(frame) = serde_json::to_vec(&notification) {
            self.send_now(frame, method);
        }
    }

    /// Queues the answer to a request whose id is already in flight, from the reader task: never
    /// waits (see [`Shared::send_now`]).
    pub(super) fn reply(
        &self,
        id: Option<&Id>,
        outcome: std::result::Result<Box<RawValue>, ErrorObject>,
    ) {
        if let Some(frame) = response_frame(id, outcome) {
            self.send_now(frame, "a reply");
        }
    }

    /// Queues the answer to an incoming request from its handler task, waiting for room; `room`,
    /// what its handler reserved, is given back once the answer is written.
    pub(super) async fn reply_when_room(
        &self,
        id: Option<&Id>,
        outcome: std::result::Result<Box<RawValue>, ErrorObject>,
        room: Option<OwnedSemaphorePermit>,
    ) {
        if let Some(frame) = response_frame(id, outcome) {
            let message = match room {
                Some(room) => Outgoing::Reply { frame, _room: room },
                None => Outgoing::Frame(frame),
            };
            let _ = self.outgoing.send(message).await;
        }
    }

    /// Queues an answer the reader task owes (a refusal, or the error reply to a line that is no
    /// message): at once when there is room; else a task of its own waits for room, while at most
    /// [`OWED_BYTES`] of such answers wait; past that the reader itself waits (it stops reading the
    /// other side until that side reads). Each wait ends at the request deadline; an answer not
    /// queued by then is dropped and counted.
    pub(super) async fn owe(self: &Arc<Self>, frame: Vec<u8>) {
        let cost = frame.len().saturating_add(OWED_TASK_BYTES).min(OWED_BYTES) as u32;
        let frame = match self.outgoing.try_send(Outgoing::Frame(frame)) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => return,
            Err(mpsc::error::TrySendError::Full(frame)) => frame,
        };
        let deadline = tokio::time::Instant::now() + self.config.request_timeout;
        let permit = tokio::time::timeout_at(deadline, self.owed.clone().acquire_many_owned(cost));
        let Ok(Ok(permit)) = permit.await else {
            self.dropped_outgoing.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("no room for a reply within the deadline: dropped");
            return;
        };
        let shared = self.clone();
        tokio::spawn(async move {
            let queued = tokio::time::timeout_at(deadline, shared.outgoing.send(frame)).await;
            if queued.is_err() {
                shared.dropped_outgoing.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("no room for a reply within the deadline: dropped");
            }
            drop(permit);
        });
    }

    /// Resolves once no owed answer waits for room (all queued or dropped).
    pub(super) async fn owed_queued(&self) {
        let _ = self.owed.acquire_many(OWED_BYTES as u32).await;
    }
}

/// Most bytes of answers the reader task owes that wait for room at once (each counted with
/// [`OWED_TASK_BYTES`] for its task).
pub(super) const OWED_BYTES: usize = 1 << 20;
/// What the task of one owed answer costs, counted against [`OWED_BYTES`].
const OWED_TASK_BYTES: usize = 256;

/// The encoded response to an incoming request.
pub(super) fn response_frame(
    id: Option<&Id>,
    outcome: std::result::Result<Box<RawValue>, ErrorObject>,
) -> Option<Vec<u8>> {
    let response = match &outcome {
        Ok(result) => OutgoingResponse {
            jsonrpc: "2.0",
            id,
            result: Some(result),
            error: None,
        },
        Err(error) => OutgoingResponse {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(error),
        },
    };
    match serde_json::to_vec(&response) {
        Ok(frame) => Some(frame),
        Err(e) => {
            tracing::error!(error = %e, "could not encode a reply");
            None
        }
    }
}

/// Writes the queued frames in order; frames queued meanwhile are written together, and flushed
/// once the queue is empty (so the other side gets many messages in one read, not one read each).
pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut queue: mpsc::Receiver<Outgoing>,
    written: watch::Sender<bool>,
) {
    let mut writer = FrameWriter::new(writer);
    while let Some(message) = queue.recv().await {
        let outcome = match message {
            Outgoing::Frame(frame) | Outgoing::Reply { frame, .. } => {
                match writer.write(&frame).await {
                    Ok(()) if queue.is_empty() => writer.flush().await,
                    outcome => outcome,
                }
            }
            Outgoing::CloseInput => {
                let _ = writer.flush().await;
                break;
            }
        };
        if let Err(e) = outcome {
            tracing::warn!(error = %e, "writing to the connection failed");
            break;
        }
    }
    // Dropping the writer closes the other side's input.
    drop(writer);
    written.send_replace(true);
}
