//! A saved host answer: a JSON-RPC response to `host/evaluateChangeset` or a bare decision envelope.
//!
//! Fixture-only keys (`validates`, `//`) and anything else besides `result`/`error` are ignored. An
//! `error` response is the host's error, returned with its failClass so the caller can report it as
//! the host would have been reported live. Nothing in the file can make this panic.

use std::io::Read;

use asp_wire::proto;
use asp_wire::proto::Decision;
use rpc_peer::jsonrpc::ErrorObject;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// The top-level keys that tell a response from a decision; the result stays raw, so a large
/// decision is parsed once, straight into its type.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(default)]
    jsonrpc: Option<IgnoredAny>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    decision: Option<IgnoredAny>,
}

/// Largest host answer converted, in bytes, saved or live: 128 MiB holds well over 100,000 findings,
/// four times what GitHub accepts in a run, and keeps the memory an export takes within a few
/// hundred MiB whatever a host sends.
pub const MAX_ANSWER_BYTES: usize = 128 * 1024 * 1024;

/// The decision in a saved host answer read from `reader`; more than [`MAX_ANSWER_BYTES`] is refused
/// as soon as the cap is passed (an `input` error that names the cap), so no file or device can make
/// the reader hold more.
pub fn read_saved_from(reader: impl Read) -> Result<Decision> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_ANSWER_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Input(format!("cannot read it: {e}")))?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(Error::Input(format!(
            "larger than {} MiB, the limit of a host answer",
            MAX_ANSWER_BYTES / (1024 * 1024)
        )));
    }
    read_saved(&bytes)
}

/// The decision in a saved host answer.
pub fn read_saved(bytes: &[u8]) -> Result<Decision> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::Input(format!("not a JSON document: {e}")))?;
    // A struct also deserialises from an array (by position): only an object may be probed.
    let probe = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Probe<'_>>(text)
    } else {
        serde_json::from_str::<IgnoredAny>(text)
            .and_then(|_| Err(serde::de::Error::custom("the document is not an object")))
    };
    let probe = probe.map_err(|e| {
        Error::Input(match e.classify() {
            serde_json::error::Category::Data => {
                format!("expected a JSON object: a JSON-RPC response or a decision ({e})")
            }
            _ => format!("not a JSON document: {e}"),
        })
    })?;
    let decision = if probe.decision.is_some() {
        text
    } else if probe.jsonrpc.is_none() && probe.result.is_none() && probe.error.is_none() {
        return Err(Error::Input(
            "neither a JSON-RPC response nor a decision (no `result`, `error` or `decision`)"
                .into(),
        ));
    } else {
        match (probe.result, probe.error) {
            (Some(_), Some(_)) => {
                return Err(Error::Input(
                    "a JSON-RPC response with both `result` and `error`".into(),
                ));
            }
            (_, Some(error)) => return Err(Error::HostAnswer(host_error(error))),
            (Some(result), None) if result.get().starts_with('{') => result.get(),
            (Some(_), None) => {
                return Err(Error::Input(
                    "the response's `result` is not a decision object".into(),
                ));
            }
            (None, None) => {
                return Err(Error::Input("a JSON-RPC response without `result`".into()));
            }
        }
    };
    serde_json::from_str(decision).map_err(|e| Error::Input(format!("not a host decision: {e}")))
}

/// The host's error as bridge-core reports a refused call, keeping its failClass and detail.
fn host_error(error: Value) -> bridge_core::Error {
    match serde_json::from_value::<ErrorObject>(error) {
        Ok(error) => rpc_peer::Error::refused(
            rpc_peer::Role::Host,
            proto::EVALUATE_CHANGESET,
            error,
            asp_wire::code::fail_class,
        )
        .into(),
        Err(_) => {
            bridge_core::Error::Input("the saved answer has a malformed `error` object".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use rpc_peer::FailClass;

    use super::*;
    use asp_wire::proto::DecisionKind;

    fn input_error(text: &str) -> String {
        match read_saved(text.as_bytes()) {
            Err(Error::Input(message)) => message,
            other => panic!("expected an input error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn a_response_gives_its_result_and_ignores_fixture_keys() {
        let text = r#"{"jsonrpc":"2.0","id":3,"validates":"x","//":"note",
            "result":{"decision":"allow","findings":[]}}"#;
        let decision = read_saved(text.as_bytes()).unwrap();
        assert!(decision.is(DecisionKind::Allow));
    }

    #[test]
    fn a_bare_decision_is_read_as_is() {
        let decision = read_saved(br#"{"decision":"deny","callSite":"sweep"}"#).unwrap();
        assert!(decision.is(DecisionKind::Deny));
    }

    #[test]
    fn an_error_response_keeps_the_hosts_fail_class() {
        let text = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"index not warm",
            "data":{"failClass":"health","retryable":true}}}"#;
        let Err(Error::HostAnswer(error)) = read_saved(text.as_bytes()) else {
            panic!("expected the host's error");
        };
        assert_eq!(error.fail_class(), FailClass::Health);
        assert!(error.to_string().contains("index not warm"), "{error}");
    }

    #[test]
    fn an_error_without_fail_class_is_classed_by_its_code() {
        let text = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32012,"message":"no"}}"#;
        let Err(Error::HostAnswer(error)) = read_saved(text.as_bytes()) else {
            panic!("expected the host's error");
        };
        assert_eq!(error.fail_class(), FailClass::Policy);
    }

    #[test]
    fn an_endless_or_oversized_input_is_refused_at_the_cap() {
        let endless = std::io::repeat(b' ');
        let Err(Error::Input(message)) = read_saved_from(endless) else {
            panic!("an endless input is refused");
        };
        assert_eq!(message, "larger than 128 MiB, the limit of a host answer");
        let decision = read_saved_from(&br#"{"decision":"allow"}"#[..]).unwrap();
        assert!(decision.is(DecisionKind::Allow));
    }

    #[test]
    fn anything_else_is_an_input_error_never_a_panic() {
        for text in [
            "",
            "not json",
            "[]",
            "[1, 2]",
            "42",
            "{}",
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"decision":"allow"},"error":{"code":1}}"#,
            r#"{"result":{"findings":[]}}"#,
            r#"{"decision":42}"#,
            r#"{"decision":"deny","findings":[{"diagnostic":{"location":{"range":{"start":{"line":-1}}}}}]}"#,
            "\u{feff}{}",
            &"[".repeat(100_000),
        ] {
            assert!(!input_error(text).is_empty());
        }
        assert!(matches!(read_saved(b"\xff\xfe"), Err(Error::Input(_))));
        assert!(input_error("[1, 2]").starts_with("expected a JSON object"));
        assert!(input_error("{").starts_with("not a JSON document"));
        let error_not_object = r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#;
        let Err(Error::HostAnswer(error)) = read_saved(error_not_object.as_bytes()) else {
            panic!("an error response is the host's error even when malformed");
        };
        assert_eq!(error.fail_class(), FailClass::Input);
    }
}
