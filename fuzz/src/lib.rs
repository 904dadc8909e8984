//! What the fuzz targets share: how an input is read as a host answer and a document text, or as
//! a byte of flags and a JSON document.
//!
//! An input is a host answer (JSON: a bare result, or a JSON-RPC response whose `result` is read),
//! optionally followed by a NUL byte and the text of the document the answer is about. The seed
//! corpus (`scripts/fuzz.sh`) is the ASP fixtures in that form. The embedded host's targets read a
//! byte of flags first ([`flagged`]).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// The answer's bytes and the document text (invalid UTF-8 read as U+FFFD; empty without a NUL).
pub fn split(data: &[u8]) -> (&[u8], String) {
    match data.iter().position(|&b| b == 0) {
        Some(at) => (
            &data[..at],
            String::from_utf8_lossy(&data[at + 1..]).into_owned(),
        ),
        None => (data, String::new()),
    }
}

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(borrow)]
    result: &'a RawValue,
}

/// `json` as a `T`: the `result` of a JSON-RPC response, or the whole document. Decoded from the
/// text as the host client decodes a result.
pub fn answer<T: DeserializeOwned>(json: &[u8]) -> Option<T> {
    if let Ok(response) = serde_json::from_slice::<Response<'_>>(json)
        && let Ok(value) = serde_json::from_str(response.result.get())
    {
        return Some(value);
    }
    serde_json::from_slice(json).ok()
}

/// The first byte of `data` (flags of the target) and the rest as JSON, unwrapped from the message
/// it may sit in: the `key` member when the document has one (`changeset` of evaluate params),
/// then a recorded exchange's `response`, then a JSON-RPC response's `result`. `None` when the
/// rest is not JSON.
pub fn flagged(data: &[u8], key: &str) -> Option<(u8, serde_json::Value)> {
    let (&flags, json) = data.split_first()?;
    let mut value: serde_json::Value = serde_json::from_slice(json).ok()?;
    for member in [key, "response"] {
        if value.get(member).is_some() {
            value = value[member].take();
        }
    }
    if value.get("jsonrpc").is_some() && value.get("result").is_some() {
        value = value["result"].take();
    }
    Some((flags, value))
}

/// Lines of `text` as LSP counts them: `\n`, `\r\n` and `\r` each end one.
pub fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(['\r', '\n']) {
        out.push(&rest[..at]);
        let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[at + skip..];
    }
    out.push(rest);
    out
}
