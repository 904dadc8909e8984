//! The host client: one connection to an ASP host over any byte-stream pair.
//!
//! A request is registered and queued before its future is returned, so wire order is call order.
//! Every request has a deadline; on deadline or when the caller drops the future, the bridge sends
//! `$/cancelRequest {id}` and forgets the id. A late reply to a forgotten id is dropped and counted; a
//! reply to an id never issued is a protocol strike. `$/progress` is routed to the caller whose request
//! id is the token. When the host's stdout ends, every pending request fails at once.

pub mod process;
mod supervisor;

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
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

pub use supervisor::{RestartPolicy, Supervisor};

use crate::error::{Error, ExitStatus, FailClass, Result};
use crate::framing::{FrameReader, FrameStats, FrameWriter};
use crate::jsonrpc::{ErrorObject, Id, Incoming, Message, OutgoingNotification, OutgoingRequest};
use crate::proto::{
    self, AdvisoryCallSite, ChangeSet, Comparison, EvaluateParams, QueryInspectParams,
};

/// How many forgotten ids are remembered, so their late replies are recognised as late.
const FORGOTTEN_IDS: usize = 4096;

/// Settings of one connection.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Deadline of a request that names none (default 30 s).
    pub request_timeout: Duration,
    /// Largest frame read from the host (default 16 MiB).
    pub max_frame: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            request_timeout: Duration::from_secs(30),
            max_frame: crate::framing::DEFAULT_MAX_FRAME,
        }
    }
}

/// Per-call options.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Overrides the connection's request deadline.
    pub timeout: Option<Duration>,
    /// Receives the `value` of every `$/progress` whose token is this request's id.
    pub progress: Option<mpsc::UnboundedSender<Value>>,
}

/// A typed answer together with the result exactly as the host sent it.
#[derive(Debug)]
pub struct Reply<T> {
    pub value: T,
    pub raw: Box<RawValue>,
}

/// Counters of what the connection dropped; see the module doc.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    pub late_replies: u64,
    pub protocol_strikes: u64,
    pub skipped_frames: u64,
}

/// Resolves how the host ended once its stdout closed: exit status and the tail of its stderr.
pub type ExitProbe =
    Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = (ExitStatus, String)> + Send>> + Send>;

type ReplySender = oneshot::Sender<Result<Box<RawValue>>>;

struct Pending {
    method: String,
    reply: ReplySender,
    progress: Option<mpsc::UnboundedSender<Value>>,
}

#[derive(Default)]
struct State {
    pending: HashMap<i64, Pending>,
    forgotten: HashSet<i64>,
    forgotten_order: VecDeque<i64>,
    /// Set once the host's stdout ended: why, for every later call.
    closed: Option<(ExitStatus, String)>,
}

enum Outgoing {
    Frame(Vec<u8>),
    CloseInput,
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
    config: ClientConfig,
    closed: watch::Sender<bool>,
}

/// A cheap, clonable handle on one host connection.
#[derive(Clone)]
pub struct HostClient {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HostClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostClient")
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl HostClient {
    /// Starts the reader and writer tasks of a connection over `reader` (the host's stdout) and
    /// `writer` (its stdin). `probe` is asked how the host ended once `reader` ends.
    pub fn connect<R, W>(reader: R, writer: W, config: ClientConfig, probe: ExitProbe) -> HostClient
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
            config,
        });
        tokio::spawn(write_loop(writer, queue));
        let framer = FrameReader::new(reader, shared.config.max_frame, frames);
        tokio::spawn(read_loop(framer, shared.clone(), probe));
        HostClient { shared }
    }

    /// Sends a request now and returns the future of its raw result.
    pub fn call_raw<P: Serialize>(
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
    pub fn call<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Option<&P>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<T>>> + Send + 'static + use<P, T> {
        let raw = self.call_raw(method, params, options);
        async move { decode(method, raw.await?) }
    }

    pub fn status(
        &self,
    ) -> impl Future<Output = Result<Reply<proto::Status>>> + Send + 'static + use<> {
        self.call(proto::STATUS, Some(&EMPTY), CallOptions::default())
    }

    pub fn capabilities(
        &self,
    ) -> impl Future<Output = Result<Reply<proto::Capabilities>>> + Send + 'static + use<> {
        self.call(proto::CAPABILITIES, Some(&EMPTY), CallOptions::default())
    }

    pub fn authority_status(
        &self,
    ) -> impl Future<Output = Result<Reply<proto::AuthorityStatus>>> + Send + 'static + use<> {
        self.call(
            proto::AUTHORITY_STATUS,
            Some(&EMPTY),
            CallOptions::default(),
        )
    }

    /// `host/queryInspect` at the interactive call site.
    pub fn query_inspect(
        &self,
        request: Value,
        timeout_ms: Option<u64>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<proto::Inspection>>> + Send + 'static + use<> {
        let params = QueryInspectParams {
            call_site: AdvisoryCallSite::Interactive,
            request,
            baseline: None,
            timeout_ms,
        };
        self.call(proto::QUERY_INSPECT, Some(&params), options)
    }

    /// `host/evaluateChangeset` at an advisory call site: the type has no way to say `gate`.
    pub fn evaluate_changeset(
        &self,
        call_site: AdvisoryCallSite,
        changeset: ChangeSet,
        comparison: Option<Comparison>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<proto::Decision>>> + Send + 'static + use<> {
        let params = EvaluateParams {
            call_site,
            changeset,
            comparison,
            timeout_ms: None,
        };
        self.call(proto::EVALUATE_CHANGESET, Some(&params), options)
    }

    /// Whether the host's stdout has ended.
    pub fn is_closed(&self) -> bool {
        *self.shared.closed.borrow()
    }

    /// How many requests in a row missed their deadline (0 once a reply comes in time): a host that
    /// keeps missing them is hung, and the supervisor replaces it.
    pub fn missed_deadlines_in_a_row(&self) -> u32 {
        self.shared.missed_in_a_row.load(Ordering::Relaxed)
    }

    /// Why the connection is closed, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<Error> {
        self.is_closed().then(|| self.shared.closed_error())
    }

    /// Resolves once the host's stdout has ended.
    pub async fn closed(&self) {
        let mut watcher = self.shared.closed.subscribe();
        let _ = watcher.wait_for(|closed| *closed).await;
    }

    /// Closes the host's stdin once everything queued before has been written.
    pub fn close_input(&self) {
        let _ = self.shared.outgoing.send(Outgoing::CloseInput);
    }

    pub fn stats(&self) -> ClientStats {
        ClientStats {
            late_replies: self.shared.late_replies.load(Ordering::Relaxed),
            protocol_strikes: self.shared.protocol_strikes.load(Ordering::Relaxed),
            skipped_frames: self.shared.frames.skipped(),
        }
    }

    /// Registers the request and queues its frame, synchronously.
    fn register<P: Serialize>(
        &self,
        method: &str,
        params: Option<&P>,
        progress: Option<mpsc::UnboundedSender<Value>>,
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

/// Params of the methods that take none: `{}`.
#[derive(Serialize)]
pub(crate) struct Empty {}

pub(crate) const EMPTY: Empty = Empty {};

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
        let cancel = OutgoingNotification {
            jsonrpc: "2.0",
            method: proto::CANCEL_REQUEST,
            params: &params,
        };
        if let Ok(frame) = serde_json::to_vec(&cancel) {
            let _ = self.outgoing.send(Outgoing::Frame(frame));
        }
    }

    fn strike(&self, what: &str) {
        self.protocol_strikes.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("protocol strike: {what}");
    }

    fn dispatch(&self, line: &str) {
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
            } => self.answer(id, outcome),
            Message::Response {
                id: Id::String(id), ..
            } => self.strike(&format!("reply to id {id:?}, never issued")),
            Message::OrphanError(error) => {
                self.strike(&format!("error without id: {}", error.message))
            }
            Message::Notification { method, params } if method == proto::PROGRESS => {
                self.progress(params)
            }
            Message::Notification { method, .. } => {
                tracing::debug!(%method, "host notification ignored")
            }
            Message::Request { id, method } => {
                tracing::warn!(%method, "the host sent a request; the bridge serves none");
                let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32601, "message": "method not found", "data": {"failClass": "contract"}}});
                let _ = self
                    .outgoing
                    .send(Outgoing::Frame(reply.to_string().into_bytes()));
            }
            Message::Invalid(why) => self.strike(why),
        }
    }

    fn answer(&self, id: i64, outcome: std::result::Result<Box<RawValue>, ErrorObject>) {
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
        let outcome = outcome.map_err(|error| refused(&pending.method, error));
        let _ = pending.reply.send(outcome);
    }

    fn progress(&self, params: Option<Value>) {
        let Some(params) =
            params.and_then(|p| serde_json::from_value::<proto::ProgressParams>(p).ok())
        else {
            tracing::debug!("ignored a malformed $/progress");
            return;
        };
        let Id::Number(token) = params.token else {
            return;
        };
        if let Some(sink) = self
            .lock()
            .pending
            .get(&token)
            .and_then(|p| p.progress.as_ref())
        {
            let _ = sink.send(params.value);
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

/// A host error response as an [`Error`], classed by `data.failClass` (or by its code).
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
                tracing::warn!(error = %e, "reading the host's stdout failed");
                break;
            }
        }
    }
    let (status, tail) = probe().await;
    tracing::debug!(%status, "host connection closed");
    shared.close(status, tail);
}

/// Writes the queued frames in order; frames queued meanwhile are written together, and flushed
/// once the queue is empty (so the host gets many requests in one read, not one read each).
async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
) {
    let mut writer = FrameWriter::new(writer);
    while let Some(message) = queue.recv().await {
        let written = match message {
            Outgoing::Frame(frame) => match writer.write(&frame).await {
                Ok(()) if queue.is_empty() => writer.flush().await,
                outcome => outcome,
            },
            Outgoing::CloseInput => {
                let _ = writer.flush().await;
                return;
            }
        };
        if let Err(e) = written {
            tracing::warn!(error = %e, "writing to the host's stdin failed");
            return;
        }
    }
}

#[cfg(test)]
mod tests;
