//! A JSON-RPC 2.0 peer over NDJSON: one connection, both directions, no knowledge of any method.
//!
//! Outgoing requests: a request is registered and queued before its future is returned, so wire
//! order is call order. Every request has a deadline; on deadline or when the caller drops the
//! future, the peer sends `$/cancelRequest {id}` and forgets the id. A late reply to a forgotten id
//! is dropped and counted; a reply to an id never issued, or one with both `result` and `error`, is
//! a protocol strike (the latter also fails its request as malformed). `$/progress` whose token is
//! one of our pending request ids goes to that request's [`ProgressSender`]. When the input ends,
//! every pending request fails at once.
//!
//! Incoming requests are served by a [`Handler`], each on its own task: at most
//! `max_concurrent_incoming` run at once and `max_queued_incoming` wait; past that a request is
//! answered at once with a retryable `health` error. A handler that panics gets an error reply and
//! the peer keeps serving; `$/cancelRequest` from the other side aborts the handler. A request whose
//! id is already in flight is answered with an error, never silently merged.
//!
//! The peer knows two method names only, both JSON-RPC conventions shared with LSP:
//! [`CANCEL_REQUEST`] and [`PROGRESS`].

mod incoming;
mod progress;

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

pub use progress::{
    PROGRESS_QUEUE, ProgressReceiver, ProgressSender, progress_channel, progress_channel_with,
};

use crate::error::{Error, ExitStatus, FailClass, Result};
use crate::framing::{FrameReader, FrameStats, FrameWriter};
use crate::jsonrpc::{
    ErrorObject, Id, Incoming, Message, OutgoingNotification, OutgoingRequest, OutgoingResponse,
};

/// `$/cancelRequest {id}`: the sender no longer wants the answer to request `id`.
pub const CANCEL_REQUEST: &str = "$/cancelRequest";
/// `$/progress {token, value}`: a preview of the request whose id is `token`.
pub const PROGRESS: &str = "$/progress";

/// How many forgotten ids are remembered, so their late replies are recognised as late.
const FORGOTTEN_IDS: usize = 4096;
/// Read buffer of [`serve`].
const READ_BUFFER: usize = 64 * 1024;

/// A boxed future, as [`Handler::request`] returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Settings of one connection.
#[derive(Clone, Debug)]
pub struct PeerConfig {
    /// Deadline of an outgoing request that names none (default 30 s).
    pub request_timeout: Duration,
    /// Largest frame read (default 16 MiB).
    pub max_frame: usize,
    /// Incoming request handlers running at once (default 16).
    pub max_concurrent_incoming: usize,
    /// Incoming requests waiting beyond the running ones (default 256); past this an incoming
    /// request is answered at once with a retryable `health` error.
    pub max_queued_incoming: usize,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            request_timeout: Duration::from_secs(30),
            max_frame: crate::framing::DEFAULT_MAX_FRAME,
            max_concurrent_incoming: 16,
            max_queued_incoming: 256,
        }
    }
}

/// Per-call options.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Overrides the connection's request deadline.
    pub timeout: Option<Duration>,
    /// Receives the `value` of every `$/progress` whose token is this request's id (bounded: a
    /// consumer that falls behind sees the latest values).
    pub progress: Option<ProgressSender>,
}

/// A typed answer together with the result exactly as the other side sent it.
#[derive(Debug)]
pub struct Reply<T> {
    pub value: T,
    pub raw: Box<RawValue>,
}

/// Counters of what the connection dropped or refused; see the module doc.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Replies to requests that had already timed out or been dropped.
    pub late_replies: u64,
    /// Messages that broke the protocol (replies to ids never issued, conflicting replies, …).
    pub protocol_strikes: u64,
    /// Frames skipped by the reader: oversize, not UTF-8, not JSON.
    pub skipped_frames: u64,
    /// Incoming requests refused because too many were running and queued.
    pub refused_incoming: u64,
}

/// Resolves how the other side ended once its output closed: exit status and the tail of its
/// stderr (an in-process peer answers `ExitStatus::Unknown`).
pub type ExitProbe =
    Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = (ExitStatus, String)> + Send>> + Send>;

/// What an incoming request or notification is answered with.
pub trait Handler: Send + Sync + 'static {
    /// Answers one incoming request; runs on its own task, concurrently with others (bounded).
    /// `Err(ErrorObject)` becomes the error reply. A panic becomes an error reply (-32603,
    /// "internal error", failClass `health`) and the peer keeps serving. If the other side sends
    /// `$/cancelRequest {id}` the task is aborted and the reply is an error (-32800).
    fn request(
        &self,
        request: IncomingRequest,
    ) -> BoxFuture<'static, std::result::Result<Box<RawValue>, ErrorObject>>;

    /// An incoming notification (other than `$/cancelRequest`, and `$/progress` for one of our own
    /// pending requests, which the peer routes itself). Runs on the reader task: keep it short.
    /// Default: logged at debug and ignored.
    fn notification(&self, method: &str, params: Option<Box<RawValue>>) {
        let _ = params;
        tracing::debug!(%method, "notification ignored");
    }
}

/// One incoming request, as a [`Handler`] gets it.
#[derive(Debug)]
pub struct IncomingRequest {
    pub method: String,
    pub params: Option<Box<RawValue>>,
    pub id: Id,
    /// The connection it came on: to send `$/progress` or to make calls back while handling it.
    pub peer: Peer,
}

impl IncomingRequest {
    /// The params decoded as `T` (absent params read as `null`); an `invalid params` error object
    /// (-32602, failClass `input`) when they do not fit.
    pub fn params<T: DeserializeOwned>(&self) -> std::result::Result<T, ErrorObject> {
        let text = self.params.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(text).map_err(|e| {
            error_object(
                -32602,
                format!("invalid params for {}: {e}", self.method),
                FailClass::Input,
                false,
            )
        })
    }
}

/// The handler of a peer that serves nothing: every incoming request gets -32601.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoRequests;

impl Handler for NoRequests {
    fn request(
        &self,
        request: IncomingRequest,
    ) -> BoxFuture<'static, std::result::Result<Box<RawValue>, ErrorObject>> {
        tracing::warn!(method = %request.method, "the other side sent a request; none is served here");
        let error = method_not_found(&request.method);
        Box::pin(async move { Err(error) })
    }
}

/// The `method not found` error object (-32601) for `method`, with failClass `contract`.
pub fn method_not_found(method: &str) -> ErrorObject {
    let mut error = error_object(
        -32601,
        "method not found".into(),
        FailClass::Contract,
        false,
    );
    if let Some(Value::Object(data)) = &mut error.data {
        data.insert("method".into(), Value::String(method.to_owned()));
    }
    error
}

/// An error object with `data: {failClass, retryable}`.
pub fn error_object(code: i64, message: String, class: FailClass, retryable: bool) -> ErrorObject {
    ErrorObject {
        code,
        message,
        data: Some(serde_json::json!({"failClass": class.as_str(), "retryable": retryable})),
    }
}

type ReplySender = oneshot::Sender<Result<Box<RawValue>>>;

struct Pending {
    method: String,
    reply: ReplySender,
    progress: Option<ProgressSender>,
}

#[derive(Default)]
struct State {
    pending: HashMap<i64, Pending>,
    forgotten: HashSet<i64>,
    forgotten_order: VecDeque<i64>,
    /// Set once the input ended: why, for every later call.
    closed: Option<(ExitStatus, String)>,
}

enum Outgoing {
    Frame(Vec<u8>),
    CloseInput,
}

/// What the other side answered to one of our requests.
enum Answer {
    Result(Box<RawValue>),
    Error(ErrorObject),
    /// Both `result` and `error`.
    Conflicting,
}

struct Shared {
    next_id: AtomicI64,
    state: Mutex<State>,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    late_replies: AtomicU64,
    /// Deadlines missed since the last reply that came in time.
    missed_in_a_row: AtomicU32,
    protocol_strikes: AtomicU64,
    frames: Arc<FrameStats>,
    config: PeerConfig,
    /// True once the input ended.
    closed: watch::Sender<bool>,
    /// True once the writer stopped (everything queued written, or writing failed).
    written: watch::Sender<bool>,
    handler: Arc<dyn Handler>,
    served: incoming::Served,
}

/// A cheap, clonable handle on one connection.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl Peer {
    /// Starts the reader and writer tasks of a connection over `reader` (the other side's output)
    /// and `writer` (its input). `probe` is asked how the other side ended once `reader` ends.
    pub fn connect<R, W>(
        reader: R,
        writer: W,
        config: PeerConfig,
        handler: Arc<dyn Handler>,
        probe: ExitProbe,
    ) -> Peer
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, queue) = mpsc::unbounded_channel();
        let frames = Arc::new(FrameStats::default());
        let shared = Arc::new(Shared {
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            outgoing,
            late_replies: AtomicU64::new(0),
            protocol_strikes: AtomicU64::new(0),
            missed_in_a_row: AtomicU32::new(0),
            frames: frames.clone(),
            closed: watch::Sender::new(false),
            written: watch::Sender::new(false),
            handler,
            served: incoming::Served::new(&config),
            config,
        });
        tokio::spawn(write_loop(writer, queue, shared.written.clone()));
        let framer = FrameReader::new(reader, shared.config.max_frame, frames);
        tokio::spawn(read_loop(framer, shared.clone(), probe));
        Peer { shared }
    }

    /// Sends a request now and returns the future of its raw result.
    pub fn request_raw<P: Serialize>(
        &self,
        method: &str,
        params: Option<&P>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Box<RawValue>>> + Send + 'static + use<P> {
        let timeout = options
            .timeout
            .unwrap_or(self.shared.config.request_timeout);
        let registered = self.register(method, params, options.progress);
        let method = method.to_owned();
        async move {
            let (receiver, mut guard) = registered?;
            match tokio::time::timeout(timeout, receiver).await {
                Ok(Ok(outcome)) => {
                    guard.answered = true;
                    outcome
                }
                Ok(Err(_)) => {
                    guard.answered = true;
                    Err(guard.shared.closed_error())
                }
                Err(_) => {
                    guard.shared.missed_in_a_row.fetch_add(1, Ordering::Relaxed);
                    Err(Error::Timeout {
                        method,
                        ms: timeout.as_millis() as u64,
                    })
                }
            }
        }
    }

    /// Sends a request now; the future decodes its result as `T`.
    pub fn request<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<&P>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<T>>> + Send + 'static + use<P, T> {
        let raw = self.request_raw(method, params, options);
        let method = method.to_owned();
        async move { decode(&method, raw.await?) }
    }

    /// Queues a notification, in call order with requests and replies.
    pub fn notify<P: Serialize>(&self, method: &str, params: Option<&P>) -> Result<()> {
        let frame = serde_json::to_vec(&OutgoingNotification {
            jsonrpc: "2.0",
            method,
            params,
        })
        .map_err(|e| Error::Input(format!("cannot encode {method} params: {e}")))?;
        self.shared
            .outgoing
            .send(Outgoing::Frame(frame))
            .map_err(|_| self.shared.closed_error())
    }

    /// Whether the input has ended.
    pub fn is_closed(&self) -> bool {
        *self.shared.closed.borrow()
    }

    /// Resolves once the input has ended.
    pub async fn closed(&self) {
        let mut watcher = self.shared.closed.subscribe();
        let _ = watcher.wait_for(|closed| *closed).await;
    }

    /// Why the connection is closed, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<Error> {
        self.is_closed().then(|| self.shared.closed_error())
    }

    /// Closes our output once everything queued before has been written.
    pub fn close_input(&self) {
        let _ = self.shared.outgoing.send(Outgoing::CloseInput);
    }

    pub fn stats(&self) -> PeerStats {
        PeerStats {
            late_replies: self.shared.late_replies.load(Ordering::Relaxed),
            protocol_strikes: self.shared.protocol_strikes.load(Ordering::Relaxed),
            skipped_frames: self.shared.frames.skipped(),
            refused_incoming: self.shared.served.refused(),
        }
    }

    /// How many requests in a row missed their deadline (0 once a reply comes in time): the other
    /// side may be hung.
    pub fn missed_deadlines_in_a_row(&self) -> u32 {
        self.shared.missed_in_a_row.load(Ordering::Relaxed)
    }

    /// Registers the request and queues its frame, synchronously.
    fn register<P: Serialize>(
        &self,
        method: &str,
        params: Option<&P>,
        progress: Option<ProgressSender>,
    ) -> Result<(oneshot::Receiver<Result<Box<RawValue>>>, Inflight)> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = serde_json::to_vec(&OutgoingRequest {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map_err(|e| Error::Input(format!("cannot encode {method} params: {e}")))?;
        let (reply, receiver) = oneshot::channel();
        let mut state = self.shared.lock();
        if state.closed.is_some() {
            drop(state);
            return Err(self.shared.closed_error());
        }
        state.pending.insert(
            id,
            Pending {
                method: method.to_owned(),
                reply,
                progress,
            },
        );
        // Queued under the lock, so the order of ids on the wire is the order of calls.
        if self.shared.outgoing.send(Outgoing::Frame(frame)).is_err() {
            state.pending.remove(&id);
            drop(state);
            return Err(self.shared.closed_error());
        }
        Ok((
            receiver,
            Inflight {
                shared: self.shared.clone(),
                id,
                answered: false,
            },
        ))
    }
}

/// Serves one byte-stream pair (e.g. this process's stdin and stdout) until the input ends, then
/// waits up to `drain` for the running handlers (cancelling those still running after it) and for
/// their replies to be written.
pub async fn serve<R, W>(
    reader: R,
    writer: W,
    config: PeerConfig,
    handler: Arc<dyn Handler>,
    drain: Duration,
) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let probe: ExitProbe = Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
    let reader = BufReader::with_capacity(READ_BUFFER, reader);
    let peer = Peer::connect(reader, writer, config, handler, probe);
    peer.closed().await;
    let served = &peer.shared.served;
    if tokio::time::timeout(drain, served.idle()).await.is_err() {
        tracing::warn!("requests still running after the input ended; cancelling them");
        served.cancel_all();
        // Each cancelled handler replies at once; bounded anyway.
        let _ = tokio::time::timeout(drain, served.idle()).await;
    }
    peer.close_input();
    let mut written = peer.shared.written.subscribe();
    if tokio::time::timeout(drain, written.wait_for(|done| *done))
        .await
        .is_err()
    {
        tracing::warn!("the last replies could not be written in time");
    }
    Ok(())
}

fn decode<T: DeserializeOwned>(method: &str, raw: Box<RawValue>) -> Result<Reply<T>> {
    match serde_json::from_str(raw.get()) {
        Ok(value) => Ok(Reply { value, raw }),
        Err(e) => Err(Error::Malformed {
            method: method.to_owned(),
            detail: e.to_string(),
        }),
    }
}

/// Forgets its request unless it was answered: the deadline passed or the caller went away.
struct Inflight {
    shared: Arc<Shared>,
    id: i64,
    answered: bool,
}

impl Drop for Inflight {
    fn drop(&mut self) {
        if !self.answered {
            self.shared.forget(self.id);
        }
    }
}

/// The params of `$/progress`.
#[derive(Deserialize)]
struct ProgressParams {
    token: Id,
    #[serde(default)]
    value: Value,
}

/// The params of `$/cancelRequest`.
#[derive(Deserialize)]
struct CancelParams {
    id: Id,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn closed_error(&self) -> Error {
        match &self.lock().closed {
            Some((status, tail)) => Error::HostExited {
                status: status.clone(),
                stderr_tail: tail.clone(),
            },
            None => Error::HostExited {
                status: ExitStatus::Unknown,
                stderr_tail: String::new(),
            },
        }
    }

    fn forget(&self, id: i64) {
        let mut state = self.lock();
        if state.pending.remove(&id).is_none() || state.closed.is_some() {
            return;
        }
        state.forgotten.insert(id);
        state.forgotten_order.push_back(id);
        if state.forgotten_order.len() > FORGOTTEN_IDS
            && let Some(old) = state.forgotten_order.pop_front()
        {
            state.forgotten.remove(&old);
        }
        drop(state);
        let params = serde_json::json!({ "id": id });
        self.send_notification(CANCEL_REQUEST, &params);
    }

    fn send_notification(&self, method: &str, params: &Value) {
        let notification = OutgoingNotification {
            jsonrpc: "2.0",
            method,
            params: Some(params),
        };
        if let Ok(frame) = serde_json::to_vec(&notification) {
            let _ = self.outgoing.send(Outgoing::Frame(frame));
        }
    }

    /// Queues the answer to an incoming request.
    fn reply(&self, id: &Id, outcome: std::result::Result<Box<RawValue>, ErrorObject>) {
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
            Ok(frame) => {
                let _ = self.outgoing.send(Outgoing::Frame(frame));
            }
            Err(e) => tracing::error!(error = %e, "could not encode a reply"),
        }
    }

    fn strike(&self, what: &str) {
        self.protocol_strikes.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("protocol strike: {what}");
    }

    fn dispatch(self: &Arc<Self>, line: &str) {
        let incoming: Incoming = match serde_json::from_str(line) {
            Ok(incoming) => incoming,
            Err(e) => {
                self.frames.not_json.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, line = %preview(line), "skipped a host line that is not a JSON-RPC message");
                return;
            }
        };
        match incoming.classify() {
            Message::Response {
                id: Id::Number(id),
                outcome,
            } => self.answer(
                id,
                match outcome {
                    Ok(result) => Answer::Result(result),
                    Err(error) => Answer::Error(error),
                },
            ),
            Message::Response {
                id: Id::String(id), ..
            } => self.strike(&format!("reply to id {id:?}, never issued")),
            Message::Conflicting { id } => {
                self.strike(&format!("reply to id {id:?} with both result and error"));
                if let Id::Number(id) = id {
                    self.answer(id, Answer::Conflicting);
                }
            }
            Message::OrphanError(error) => {
                self.strike(&format!("error without id: {}", error.message))
            }
            Message::Notification { method, params } if method == CANCEL_REQUEST => {
                match params.and_then(|p| serde_json::from_str::<CancelParams>(p.get()).ok()) {
                    Some(cancel) => self.served.cancel(&cancel.id),
                    None => tracing::debug!("ignored a malformed $/cancelRequest"),
                }
            }
            Message::Notification { method, params } if method == PROGRESS => {
                if let Some(params) = self.progress(params) {
                    self.handler.notification(&method, params);
                }
            }
            Message::Notification { method, params } => self.handler.notification(&method, params),
            Message::Request { id, method, params } => incoming::admit(self, id, method, params),
            Message::Invalid(why) => self.strike(why),
        }
    }

    fn answer(&self, id: i64, answer: Answer) {
        let mut state = self.lock();
        let Some(pending) = state.pending.remove(&id) else {
            if state.forgotten.remove(&id) {
                drop(state);
                self.late_replies.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(id, "dropped a late reply to a forgotten request");
            } else {
                drop(state);
                self.strike(&format!("reply to id {id}, never issued"));
            }
            return;
        };
        drop(state);
        self.missed_in_a_row.store(0, Ordering::Relaxed);
        let outcome = match answer {
            Answer::Result(result) => Ok(result),
            Answer::Error(error) => Err(refused(&pending.method, error)),
            Answer::Conflicting => Err(Error::Malformed {
                method: pending.method.clone(),
                detail: "the reply has both a result and an error".into(),
            }),
        };
        let _ = pending.reply.send(outcome);
    }

    /// Routes `$/progress` to the pending request whose id is its token; gives the params back when
    /// the token is not one of ours.
    fn progress(&self, params: Option<Box<RawValue>>) -> Option<Option<Box<RawValue>>> {
        let parsed = params
            .as_deref()
            .and_then(|p| serde_json::from_str::<ProgressParams>(p.get()).ok());
        let Some(ProgressParams {
            token: Id::Number(token),
            value,
        }) = parsed
        else {
            return Some(params);
        };
        let state = self.lock();
        match state.pending.get(&token) {
            Some(pending) => {
                if let Some(sink) = &pending.progress {
                    sink.send(value);
                }
                None
            }
            None => Some(params),
        }
    }

    fn close(&self, status: ExitStatus, tail: String) {
        let pending: Vec<Pending> = {
            let mut state = self.lock();
            state.closed = Some((status.clone(), tail.clone()));
            state.pending.drain().map(|(_, p)| p).collect()
        };
        // Closed before anyone hears of it, so a caller that sees the failure also sees `is_closed`.
        self.closed.send_replace(true);
        for p in pending {
            let _ = p.reply.send(Err(Error::HostExited {
                status: status.clone(),
                stderr_tail: tail.clone(),
            }));
        }
    }
}

/// An error response as an [`Error`], classed by `data.failClass` (or by its code).
fn refused(method: &str, error: ErrorObject) -> Error {
    let data = error.data.as_ref();
    let class = data
        .and_then(|d| d.get("failClass"))
        .and_then(Value::as_str)
        .and_then(FailClass::parse);
    let retryable = data
        .and_then(|d| d.get("retryable"))
        .and_then(Value::as_bool);
    let fail_class = class.unwrap_or_else(|| FailClass::from_code(error.code));
    Error::Refused {
        method: method.to_owned(),
        code: error.code,
        message: error.message,
        fail_class,
        retryable: retryable.unwrap_or(fail_class == FailClass::Health),
    }
}

fn preview(line: &str) -> &str {
    match line.char_indices().nth(120) {
        Some((at, _)) => &line[..at],
        None => line,
    }
}

async fn read_loop<R: AsyncBufRead + Unpin>(
    mut framer: FrameReader<R>,
    shared: Arc<Shared>,
    probe: ExitProbe,
) {
    loop {
        match framer.next_frame().await {
            Ok(Some(line)) => shared.dispatch(line),
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(error = %e, "reading the connection failed");
                break;
            }
        }
    }
    let (status, tail) = probe().await;
    tracing::debug!(%status, "connection closed");
    shared.close(status, tail);
}

/// Writes the queued frames in order; frames queued meanwhile are written together, and flushed
/// once the queue is empty (so the other side gets many messages in one read, not one read each).
async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
    written: watch::Sender<bool>,
) {
    let mut writer = FrameWriter::new(writer);
    while let Some(message) = queue.recv().await {
        let outcome = match message {
            Outgoing::Frame(frame) => match writer.write(&frame).await {
                Ok(()) if queue.is_empty() => writer.flush().await,
                outcome => outcome,
            },
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

#[cfg(test)]
mod tests;
