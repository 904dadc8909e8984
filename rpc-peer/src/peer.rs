//! A JSON-RPC 2.0 peer over NDJSON: one connection, both directions, no knowledge of any method.
//!
//! Outgoing requests: a request is registered and queued before its future is returned, so wire
//! order is call order. The outgoing queue is bounded (`max_queued_outgoing` frames): when it is
//! full, a request waits for room inside its future (in the order the waiting futures are first
//! polled). Every request has a deadline, waiting for room included; on deadline or when the caller
//! drops the future, the peer sends `$/cancelRequest {id}` and forgets the id. A late reply to a
//! forgotten id is dropped and counted; a reply to an id never issued, or one with both `result` and
//! `error`, is a protocol strike (the latter also fails its request as malformed). A reply longer
//! than the frame cap, or not UTF-8, fails its request at once as malformed (`contract`): its id is
//! read from the head of the line or, when the head does not tell, it is the only request pending.
//! `$/progress` whose token is one of our pending request ids goes to that request's
//! [`ProgressSender`]. When the input ends, every pending request fails at once. Errors name the
//! other side by its [`Role`].
//!
//! What the reader task itself must send never waits on the reader while there is budget: an answer
//! it owes (the refusal of a request past the limits, the error reply to a line that is no message)
//! waits for room on a task of its own, up to 1 MiB of such answers at once; only past that does the
//! reader wait for room, which stops reading a side that sends and does not read, until it reads.
//! Each such wait ends at the request deadline (the answer is then dropped and counted). So every
//! request is answered exactly once. Two frames stay best effort, dropped and counted when the queue
//! is full, so that a side that does not read its input cannot stall our reading with them:
//! `$/cancelRequest`, and the refusal of a request whose id is already in flight (an answer its
//! sender cannot tell from the first request's).
//!
//! Incoming requests are served by a [`Handler`], each on its own task: at most
//! `max_concurrent_incoming` run at once and `max_queued_incoming` wait; past that a request is
//! answered with a retryable `health` error. A handler that panics gets an error reply and the peer
//! keeps serving; `$/cancelRequest` from the other side aborts the handler. A request whose id is
//! already in flight is refused, never silently merged. On the server side ([`serve`]), a line that
//! is not JSON or not UTF-8 gets -32700 and one that is no JSON-RPC 2.0 message (a batch, an id that
//! is no string or integer, no `"jsonrpc": "2.0"`) or is longer than the cap gets -32600, each with
//! the id if it can be read (`null` otherwise). A handler with a large answer reserves room for it
//! first ([`IncomingRequest::room`]): such answers waiting to be written are bounded in bytes
//! (`max_reply_bytes`), and one is built only once there is room to send it.
//!
//! The peer knows two method names only, both JSON-RPC conventions shared with LSP:
//! [`CANCEL_REQUEST`] and [`PROGRESS`].

mod head;
mod incoming;
mod outgoing;
mod progress;
mod reader;

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

pub use progress::{
    PROGRESS_QUEUE, ProgressReceiver, ProgressSender, progress_channel, progress_channel_with,
};

use crate::error::{Error, ExitStatus, FailClass, Result, Role};
use crate::framing::{FrameReader, FrameStats};
use crate::jsonrpc::{ErrorObject, Id, OutgoingNotification};

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
    /// Frames waiting to be written (default 1024); see the module doc for what waits and what is
    /// dropped when the queue is full.
    pub max_queued_outgoing: usize,
    /// Bytes of answers that handlers reserved room for ([`IncomingRequest::room`]) and that are
    /// not written yet (default 64 MiB).
    pub max_reply_bytes: usize,
    /// Who the other side is, as error messages name it (default [`Role::Host`]).
    pub role: Role,
    /// How an error reply that names no `failClass` is classed by its code (default
    /// [`FailClass::of_json_rpc_code`]; a protocol with codes of its own passes its table).
    pub classify: fn(i64) -> FailClass,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            request_timeout: Duration::from_secs(30),
            max_frame: crate::framing::DEFAULT_MAX_FRAME,
            max_concurrent_incoming: 16,
            max_queued_incoming: 256,
            max_queued_outgoing: 1024,
            max_reply_bytes: 64 << 20,
            role: Role::Host,
            classify: FailClass::of_json_rpc_code,
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
    /// Frames the reader task could not queue because the outgoing queue was full (`$/cancelRequest`,
    /// refusals of reused ids, and owed answers still without room at the deadline).
    pub dropped_outgoing: u64,
}

/// Resolves how the other side ended once its output closed: exit status and the tail of its
/// stderr (an in-process peer answers `ExitStatus::Unknown`).
pub type ExitProbe =
    Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = (ExitStatus, String)> + Send>> + Send>;

/// What a [`Handler`] answers an incoming request with: its result, or the error reply.
pub type Answer = BoxFuture<'static, std::result::Result<Box<RawValue>, ErrorObject>>;

/// What an incoming request or notification is answered with.
pub trait Handler: Send + Sync + 'static {
    /// Answers one incoming request; runs on its own task, concurrently with others (bounded).
    /// `Err(ErrorObject)` becomes the error reply. A panic becomes an error reply (-32603,
    /// "internal error", failClass `health`) and the peer keeps serving. If the other side sends
    /// `$/cancelRequest {id}` the task is aborted and the reply is an error (-32800).
    fn request(&self, request: IncomingRequest) -> Answer;

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
                crate::jsonrpc::INVALID_PARAMS,
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
    fn request(&self, request: IncomingRequest) -> Answer {
        tracing::warn!(method = %request.method, "the other side sent a request; none is served here");
        let error = method_not_found(&request.method);
        Box::pin(async move { Err(error) })
    }
}

/// The `method not found` error object (-32601) for `method`, with failClass `contract`.
pub fn method_not_found(method: &str) -> ErrorObject {
    error_object(
        crate::jsonrpc::METHOD_NOT_FOUND,
        "method not found".into(),
        FailClass::Contract,
        false,
    )
    .with_data("method", Value::String(method.to_owned()))
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
    /// An answer and the room its handler reserved for it, given back once it is written.
    Reply {
        frame: Vec<u8>,
        /// Held until the frame is written.
        _room: tokio::sync::OwnedSemaphorePermit,
    },
    CloseInput,
}

/// What the other side answered to one of our requests.
enum Answered {
    Result(Box<RawValue>),
    Error(ErrorObject),
    /// Both `result` and `error`.
    Conflicting,
}

struct Shared {
    next_id: AtomicI64,
    state: Mutex<State>,
    outgoing: mpsc::Sender<Outgoing>,
    /// Frames dropped because the outgoing queue was full.
    dropped_outgoing: AtomicU64,
    /// Room for the answers the reader task owes that wait for room ([`outgoing::OWED_BYTES`]).
    owed: Arc<tokio::sync::Semaphore>,
    /// The server side of [`serve`]: unreadable lines get an error reply.
    serving: bool,
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
        Peer::start(reader, writer, config, handler, probe, false)
    }

    fn start<R, W>(
        reader: R,
        writer: W,
        config: PeerConfig,
        handler: Arc<dyn Handler>,
        probe: ExitProbe,
        serving: bool,
    ) -> Peer
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, queue) = mpsc::channel(config.max_queued_outgoing.max(1));
        let frames = Arc::new(FrameStats::default());
        let shared = Arc::new(Shared {
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            outgoing,
            dropped_outgoing: AtomicU64::new(0),
            owed: Arc::new(tokio::sync::Semaphore::new(outgoing::OWED_BYTES)),
            serving,
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
        tokio::spawn(outgoing::write_loop(writer, queue, shared.written.clone()));
        let framer = FrameReader::new(reader, shared.config.max_frame, frames);
        tokio::spawn(reader::read_loop(framer, shared.clone(), probe));
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
        let shared = self.shared.clone();
        let mut prepared = shared.prepare(method, params, options.progress);
        // Queued now when there is room, so that the wire order is the call order.
        let queued = match &mut prepared {
            Ok(request) => shared
                .outgoing
                .clone()
                .try_reserve_owned()
                .ok()
                .map(|permit| shared.register(request.take(), permit)),
            Err(_) => None,
        };
        let method = method.to_owned();
        async move {
            let request = prepared?;
            let answer = async {
                let (receiver, guard) = match queued {
                    Some(registered) => registered?,
                    None => shared.register_when_room(request).await?,
                };
                Ok::<_, Error>((receiver.await, guard))
            };
            match tokio::time::timeout(timeout, answer).await {
                Ok(Err(error)) => Err(error),
                Ok(Ok((outcome, mut guard))) => {
                    guard.answered = true;
                    outcome.unwrap_or_else(|_| Err(shared.closed_error()))
                }
                Err(_) => {
                    shared.missed_in_a_row.fetch_add(1, Ordering::Relaxed);
                    Err(Error::Timeout {
                        role: shared.config.role,
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
        let role = self.shared.config.role;
        async move { decode(role, &method, raw.await?) }
    }

    /// Queues a notification, in call order with requests and replies. Fails (and sends nothing)
    /// when the outgoing queue is full: the other side is not reading.
    pub fn notify<P: Serialize>(&self, method: &str, params: Option<&P>) -> Result<()> {
        let frame = serde_json::to_vec(&OutgoingNotification {
            jsonrpc: "2.0",
            method,
            params,
        })
        .map_err(|e| Error::Input(format!("cannot encode {method} params: {e}")))?;
        match self.shared.outgoing.try_send(Outgoing::Frame(frame)) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => Err(Error::Unavailable {
                role: self.shared.config.role,
                why: format!("it does not read its input; {method} was not sent"),
            }),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(self.shared.closed_error()),
        }
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

    /// Who the other side is.
    pub fn role(&self) -> Role {
        self.shared.config.role
    }

    /// Why the connection is closed, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<Error> {
        self.is_closed().then(|| self.shared.closed_error())
    }

    /// Closes our output once everything queued before has been written.
    pub fn close_input(&self) {
        if let Err(mpsc::error::TrySendError::Full(close)) =
            self.shared.outgoing.try_send(Outgoing::CloseInput)
        {
            let outgoing = self.shared.outgoing.clone();
            tokio::spawn(async move { outgoing.send(close).await });
        }
    }

    /// How many frames wait in the outgoing queue.
    pub fn queued_outgoing(&self) -> usize {
        let outgoing = &self.shared.outgoing;
        outgoing.max_capacity() - outgoing.capacity()
    }

    pub fn stats(&self) -> PeerStats {
        PeerStats {
            late_replies: self.shared.late_replies.load(Ordering::Relaxed),
            protocol_strikes: self.shared.protocol_strikes.load(Ordering::Relaxed),
            skipped_frames: self.shared.frames.skipped(),
            refused_incoming: self.shared.served.refused(),
            dropped_outgoing: self.shared.dropped_outgoing.load(Ordering::Relaxed),
        }
    }

    /// How many requests in a row missed their deadline (0 once a reply comes in time): the other
    /// side may be hung.
    pub fn missed_deadlines_in_a_row(&self) -> u32 {
        self.shared.missed_in_a_row.load(Ordering::Relaxed)
    }
}

/// Serves one byte-stream pair (e.g. this process's stdin and stdout) until the input ends, then
/// waits up to `drain` for the running handlers (cancelling those still running after it) and for
/// their replies to be written. Lines that are no JSON-RPC message get an error reply (see the
/// module doc).
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
    let peer = Peer::start(reader, writer, config, handler, probe, true);
    peer.closed().await;
    let served = &peer.shared.served;
    if tokio::time::timeout(drain, served.idle()).await.is_err() {
        tracing::warn!("requests still running after the input ended; cancelling them");
        served.cancel_all();
        // Each cancelled handler replies at once; bounded anyway.
        let _ = tokio::time::timeout(drain, served.idle()).await;
    }
    if tokio::time::timeout(drain, peer.shared.owed_queued())
        .await
        .is_err()
    {
        tracing::warn!("replies owed to the client still wait for room");
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

fn decode<T: DeserializeOwned>(role: Role, method: &str, raw: Box<RawValue>) -> Result<Reply<T>> {
    match serde_json::from_str(raw.get()) {
        Ok(value) => Ok(Reply { value, raw }),
        Err(e) => Err(Error::Malformed {
            role,
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

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    fn closed_error(&self) -> Error {
        let role = self.config.role;
        match &self.lock().closed {
            Some((status, tail)) => Error::Exited {
                role,
                status: status.clone(),
                stderr_tail: tail.clone(),
            },
            None => Error::Exited {
                role,
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

    fn strike(&self, what: &str) {
        self.protocol_strikes.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("protocol strike: {what}");
    }
}

#[cfg(test)]
mod tests;
