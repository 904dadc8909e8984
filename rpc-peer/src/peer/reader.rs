//! The reading side of a connection: each line routed (replies to their pending requests,
//! requests to the handler, notifications), and what a line that cannot be used is owed.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::AsyncBufRead;

use super::{
    Answered, CANCEL_REQUEST, ExitProbe, PROGRESS, Pending, Shared, error_object, head, incoming,
    outgoing,
};
use crate::error::{Error, ExitStatus, FailClass};
use crate::framing::{Frame, FrameReader};
use crate::jsonrpc::{Id, Incoming, Message};

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
    /// A line that is no message: the answer the server side owes it (`id` when known, else
    /// `null`).
    fn unreadable(&self, id: Option<&Id>, code: i64, why: &str) -> Option<Vec<u8>> {
        if !self.serving {
            return None;
        }
        let error = error_object(code, why.to_owned(), FailClass::Contract, false);
        outgoing::response_frame(id, Err(error))
    }

    /// A line longer than the frame cap: fails the request it answers, or gives the answer the
    /// server side owes the request it is; see the module doc.
    fn oversize(&self, head: &[u8]) -> Option<Vec<u8>> {
        let head = head::read(head);
        let max = self.config.max_frame;
        if head.method {
            let why = format!("invalid request: the message is longer than {max} bytes");
            return self.unreadable(head.id.as_ref(), crate::jsonrpc::INVALID_REQUEST, &why);
        }
        self.unusable_reply(
            head,
            &format!("the reply is longer than the {max}-byte frame cap"),
        );
        None
    }

    /// A line that is not UTF-8: fails the request it answers, or gives the answer the server side
    /// owes it (-32700, `id: null`).
    fn not_utf8(&self, head: &[u8]) -> Option<Vec<u8>> {
        if self.serving {
            return self.unreadable(
                None,
                crate::jsonrpc::PARSE_ERROR,
                "parse error: the message is not UTF-8",
            );
        }
        // Only a line that reads as a reply: junk that names no id is counted and skipped.
        let (head, reply) = head::read_reply(head);
        if !head.method && (reply || head.id.is_some()) {
            self.unusable_reply(head, "the reply is not valid UTF-8");
        }
        None
    }

    /// A reply that cannot be read (`detail` says why): fails the request whose id its head names,
    /// or the only request pending; else a protocol strike.
    fn unusable_reply(&self, head: head::Head, detail: &str) {
        let pending = {
            let mut state = self.lock();
            let id = match head.id {
                Some(Id::Number(id)) => Some(id),
                Some(_) => None,
                None if state.pending.len() == 1 => state.pending.keys().next().copied(),
                None => None,
            };
            id.and_then(|id| state.pending.remove(&id))
        };
        let Some(pending) = pending else {
            self.strike(&format!("{detail}, to no request pending"));
            return;
        };
        self.missed_in_a_row.store(0, Ordering::Relaxed);
        let error = Error::Malformed {
            role: self.config.role,
            method: pending.method,
            detail: detail.to_owned(),
        };
        let _ = pending.reply.send(Err(error));
    }
}

impl Shared {
    /// A line that is no message (a `batch` array, or no JSON-RPC object): counted, and the answer
    /// the server side owes it (-32700 or -32600, `id: null`).
    fn no_message(&self, line: &str, batch: bool) -> Option<Vec<u8>> {
        self.frames.not_json.fetch_add(1, Ordering::Relaxed);
        if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
            return self.unreadable(
                None,
                crate::jsonrpc::PARSE_ERROR,
                "parse error: the message is not JSON",
            );
        }
        let why = if batch {
            "invalid request: batches are not supported, send one message a line"
        } else {
            "invalid request: not a JSON-RPC message"
        };
        self.unreadable(None, crate::jsonrpc::INVALID_REQUEST, why)
    }

    /// Routes one line; gives back the answer it is owed, if any (see [`Shared::owe`]).
    fn dispatch(self: &Arc<Self>, line: &str) -> Option<Vec<u8>> {
        // serde would read an array as the struct's fields in order.
        if line.trim_start().starts_with('[') {
            return self.no_message(line, true);
        }
        let incoming: Incoming = match serde_json::from_str(line) {
            Ok(incoming) => incoming,
            Err(e) => {
                let role = self.config.role;
                tracing::warn!(error = %e, line = %preview(line), "skipped a {role} line that is not a JSON-RPC message");
                return self.no_message(line, false);
            }
        };
        if self.serving && !incoming.is_v2() && incoming.method.is_some() {
            self.frames.not_json.fetch_add(1, Ordering::Relaxed);
            self.strike("a request or notification without \"jsonrpc\": \"2.0\"");
            let why = "invalid request: jsonrpc must be \"2.0\"";
            return self.unreadable(incoming.id.as_ref(), crate::jsonrpc::INVALID_REQUEST, why);
        }
        match incoming.classify() {
            Message::Response {
                id: Id::Number(id),
                outcome,
            } => self.answer(
                id,
                match outcome {
                    Ok(result) => Answered::Result(result),
                    Err(error) => Answered::Error(error),
                },
            ),
            Message::Response {
                id: Id::String(id), ..
            } => self.strike(&format!("reply to id {id:?}, never issued")),
            Message::Conflicting { id } => {
                self.strike(&format!("reply to id {id:?} with both result and error"));
                if let Id::Number(id) = id {
                    self.answer(id, Answered::Conflicting);
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
            Message::Request { id, method, params } => {
                return incoming::admit(self, id, method, params);
            }
            Message::Invalid(why) => {
                self.strike(why);
                return self.unreadable(
                    None,
                    crate::jsonrpc::INVALID_REQUEST,
                    &format!("invalid request: {why}"),
                );
            }
        }
        None
    }

    fn answer(&self, id: i64, answer: Answered) {
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
            Answered::Result(result) => Ok(result),
            Answered::Error(error) => Err(Error::refused(
                self.config.role,
                &pending.method,
                error,
                self.config.classify,
            )),
            Answered::Conflicting => Err(Error::Malformed {
                role: self.config.role,
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
            let _ = p.reply.send(Err(Error::Exited {
                role: self.config.role,
                status: status.clone(),
                stderr_tail: tail.clone(),
            }));
        }
    }
}

fn preview(line: &str) -> &str {
    match line.char_indices().nth(120) {
        Some((at, _)) => &line[..at],
        None => line,
    }
}

pub(super) async fn read_loop<R: AsyncBufRead + Unpin>(
    mut framer: FrameReader<R>,
    shared: Arc<Shared>,
    probe: ExitProbe,
) {
    loop {
        match framer.next_frame().await {
            Ok(Some(Frame::Text(line))) => {
                if let Some(owed) = shared.dispatch(line) {
                    shared.owe(owed).await;
                }
            }
            Ok(Some(Frame::Oversize { head })) => {
                let (role, max) = (shared.config.role, shared.config.max_frame);
                tracing::warn!(max, "skipped a {role} line longer than the frame cap");
                if let Some(owed) = shared.oversize(head) {
                    shared.owe(owed).await;
                }
            }
            Ok(Some(Frame::NotUtf8)) => {
                let role = shared.config.role;
                tracing::warn!("skipped a {role} line that is not valid UTF-8");
                if let Some(owed) = shared.not_utf8(framer.skipped_head()) {
                    shared.owe(owed).await;
                }
            }
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
