//! JSON-RPC 2.0 envelopes: ids, outgoing requests and notifications, incoming messages. No I/O.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// JSON-RPC 2.0's own error codes, and the two server codes every peer answers with.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// A server error: this peer is past its limits (too many requests at once, answers too large).
pub const SERVER_ERROR: i64 = -32000;
/// The request was cancelled (`$/cancelRequest`), as LSP names it.
pub const REQUEST_CANCELLED: i64 = -32800;

/// A request id. A [`crate::peer::Peer`] issues integers; the other side may use strings too.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    Number(i64),
    String(String),
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

#[derive(Serialize)]
pub(crate) struct OutgoingRequest<'a, P: Serialize> {
    pub(crate) jsonrpc: &'static str,
    pub(crate) id: i64,
    pub(crate) method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) params: Option<&'a P>,
}

#[derive(Serialize)]
pub(crate) struct OutgoingNotification<'a, P: Serialize> {
    pub(crate) jsonrpc: &'static str,
    pub(crate) method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) params: Option<&'a P>,
}

/// The answer to an incoming request: exactly one of `result` and `error`; `id: null` when the
/// request's id could not be read.
#[derive(Serialize)]
pub(crate) struct OutgoingResponse<'a> {
    pub(crate) jsonrpc: &'static str,
    pub(crate) id: Option<&'a Id>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<&'a ErrorObject>,
}

/// The JSON-RPC error object; `data.failClass` says how the failure is classed.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ErrorObject {
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// The error with `key: value` added to its `data` object (left as it is when `data` is no
    /// object).
    pub fn with_data(mut self, key: &str, value: Value) -> ErrorObject {
        if let Some(Value::Object(data)) = &mut self.data {
            data.insert(key.to_owned(), value);
        }
        self
    }
}

/// Any message the other side may send, decoded only as far as routing needs.
#[derive(Debug, Deserialize)]
pub(crate) struct Incoming {
    /// Kept raw: only compared with `"2.0"`.
    #[serde(default)]
    pub(crate) jsonrpc: Option<Box<RawValue>>,
    #[serde(default)]
    pub(crate) id: Option<Id>,
    #[serde(default)]
    pub(crate) method: Option<String>,
    /// Kept raw, like `result`: whoever handles the message parses it.
    #[serde(default)]
    pub(crate) params: Option<Box<RawValue>>,
    /// Kept raw so a large result is parsed once, by whoever asked for it.
    #[serde(default)]
    pub(crate) result: Option<Box<RawValue>>,
    #[serde(default)]
    pub(crate) error: Option<ErrorObject>,
}

/// What an incoming message is, by the JSON-RPC 2.0 rules.
#[derive(Debug)]
pub(crate) enum Message {
    Response {
        id: Id,
        outcome: Result<Box<RawValue>, ErrorObject>,
    },
    /// An error response with a null id (e.g. a parse error at the host).
    OrphanError(ErrorObject),
    /// A response carrying both `result` and `error`: a protocol error, answered as such.
    Conflicting {
        id: Id,
    },
    Notification {
        method: String,
        params: Option<Box<RawValue>>,
    },
    Request {
        id: Id,
        method: String,
        params: Option<Box<RawValue>>,
    },
    Invalid(&'static str),
}

impl Incoming {
    /// Whether the message says `"jsonrpc": "2.0"`, as JSON-RPC 2.0 requires of every message.
    pub(crate) fn is_v2(&self) -> bool {
        self.jsonrpc
            .as_deref()
            .is_some_and(|v| v.get() == r#""2.0""#)
    }

    pub(crate) fn classify(self) -> Message {
        match (self.method, self.id) {
            (Some(method), Some(id)) => Message::Request {
                id,
                method,
                params: self.params,
            },
            (Some(method), None) => Message::Notification {
                method,
                params: self.params,
            },
            (None, id) => match (self.result, self.error, id) {
                (Some(result), None, Some(id)) => Message::Response {
                    id,
                    outcome: Ok(result),
                },
                (None, Some(error), Some(id)) => Message::Response {
                    id,
                    outcome: Err(error),
                },
                (None, Some(error), None) => Message::OrphanError(error),
                // `"result": null` deserialises as no result at all.
                (None, None, Some(id)) => Message::Response {
                    id,
                    outcome: Ok(RawValue::from_string("null".into()).expect("null is JSON")),
                },
                (Some(_), Some(_), Some(id)) => Message::Conflicting { id },
                (Some(_), Some(_), None) => {
                    Message::Invalid("a response with both result and error, and no id")
                }
                _ => Message::Invalid("neither a request, a notification nor a response"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(line: &str) -> Message {
        serde_json::from_str::<Incoming>(line).unwrap().classify()
    }

    #[test]
    fn tells_responses_notifications_and_requests_apart() {
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#),
            Message::Response {
                id: Id::Number(1),
                outcome: Ok(_)
            }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32010,"message":"m"}}"#),
            Message::Response {
                id: Id::String(_),
                outcome: Err(_)
            }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#),
            Message::OrphanError(_)
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","method":"$/progress","params":{"token":7}}"#),
            Message::Notification { .. }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":4,"method":"workspace/x"}"#),
            Message::Request { .. }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0"}"#),
            Message::Invalid(_)
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"m"}}"#),
            Message::Conflicting { id: Id::Number(5) }
        ));
    }

    #[test]
    fn a_null_result_is_a_successful_response() {
        let Message::Response {
            outcome: Ok(raw), ..
        } = classify(r#"{"jsonrpc":"2.0","id":2,"result":null}"#)
        else {
            panic!("expected a response");
        };
        assert_eq!(raw.get(), "null");
    }
}
