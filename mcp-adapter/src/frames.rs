//! The client's byte stream, checked line by line before rmcp reads it.
//!
//! rmcp's stdio transport drops a line that is not JSON, or longer than its cap, without a word, and
//! answers a `tools/call` whose `params` it cannot decode (`arguments` that are no object) as an
//! unknown method (-32601). Here every line is looked at first: a well-formed one passes through
//! unchanged; one longer than [`MAX_LINE`] is skipped as it streams (never buffered whole) and
//! answered with -32600; one that is not UTF-8 or not JSON is answered with -32700 (both `id: null`,
//! as JSON-RPC asks when the id cannot be read); a request or notification without
//! `"jsonrpc": "2.0"` is answered with -32600; JSON nested deeper than serde_json reads (128 levels)
//! is answered with -32602 for a `tools/call` (its arguments) and -32600 otherwise, with its id when
//! the id can be read (rmcp would drop it); a `tools/call` with params or arguments that are no
//! object, or no tool name, is answered with -32602 and its own id. The replies go out on the same
//! stdout as rmcp's own frames, one whole line at a time.
//!
//! rmcp keys its requests in flight by id and keeps one per id: a request reusing the id of one
//! still in flight would leave one of the two unanswered. So the ids of the client's requests are
//! kept from the moment the request passes to rmcp until rmcp's answer with that id goes out (or the
//! client cancels it); a request reusing one of them is answered here with -32600 and its id, and
//! never reaches rmcp.

use rpc_peer::jsonrpc::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Longest line accepted from the client, in bytes. Tool arguments are capped at 64 KiB; this
/// leaves room for any other message a client sends.
pub(crate) const MAX_LINE: usize = 4 * 1024 * 1024;

/// Frames on their way to stdout, each a whole line; a few in flight at most.
const QUEUED_FRAMES: usize = 64;
/// Size of the in-memory pipes between the checker and rmcp.
const PIPE_BYTES: usize = 64 * 1024;

/// The checked connection: what rmcp reads and writes instead of the client's streams.
pub(crate) struct Checked {
    pub(crate) reader: DuplexStream,
    pub(crate) writer: DuplexStream,
    /// Reads the client; aborted once the session is over.
    pub(crate) checker: JoinHandle<()>,
    /// Writes to the client; ends once rmcp and the checker have both let go.
    pub(crate) output: JoinHandle<()>,
}

/// Puts the checker between `input`/`output` (the client's streams) and rmcp.
pub(crate) fn checked<R, W>(input: R, output: W) -> Checked
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, reader) = tokio::io::duplex(PIPE_BYTES);
    let (writer, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (frames, queue) = mpsc::channel(QUEUED_FRAMES);
    let inflight = Inflight::default();
    let checker = tokio::spawn(check(
        BufReader::new(input),
        to_rmcp,
        frames.clone(),
        inflight.clone(),
    ));
    tokio::spawn(pump(BufReader::new(from_rmcp), frames, inflight));
    let output = tokio::spawn(write(queue, output));
    Checked {
        reader,
        writer,
        checker,
        output,
    }
}

/// The ids of the client's requests that rmcp has and has not answered yet, each as its JSON text
/// (so `1` and `"1"` stay apart).
#[derive(Clone, Default)]
pub(crate) struct Inflight(Arc<Mutex<HashSet<String>>>);

impl Inflight {
    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        rpc_peer::lock(&self.0)
    }
}

/// The top level of a message too deep for a [`Value`]: nested values are skipped without
/// recursion.
#[derive(Deserialize)]
struct Shallow<'a> {
    #[serde(default, borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a serde_json::value::RawValue>,
}

/// The parts of a response the id bookkeeping needs.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// A string or number id as its JSON text.
fn id_text(id: &Value) -> Option<String> {
    (id.is_string() || id.is_number()).then(|| id.to_string())
}

/// The id text of a request (a message with a method name and a string or number id).
fn request_id(message: &Value) -> Option<String> {
    message.get("method")?.as_str()?;
    id_text(message.get("id")?)
}

/// The id text a `notifications/cancelled` names.
fn cancelled_id(message: &Value) -> Option<String> {
    if message.get("method")?.as_str()? != "notifications/cancelled" {
        return None;
    }
    id_text(message.get("params")?.get("requestId")?)
}

/// How rmcp opens a response: its fields in declaration order, `jsonrpc` then `id`.
const RESPONSE_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// The id text of a response (a message with an id and no method).
///
/// A result can be large, so the usual case is read from the head rmcp writes: `id` right after
/// `jsonrpc`, then `result` or `error`, which only a response has. Anything else is parsed whole.
fn response_id(line: &[u8]) -> Option<String> {
    if let Some(rest) = line.strip_prefix(RESPONSE_HEAD) {
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
        if let Some(Ok(id)) = values.next() {
            let after = &rest[values.byte_offset()..];
            if after.starts_with(br#","result":"#) || after.starts_with(br#","error":"#) {
                return id_text(&id);
            }
        }
    }
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    if envelope.method.is_some() {
        return None;
    }
    envelope.id.as_ref().and_then(id_text)
}

/// Reads the client's lines, passes the good ones to rmcp, answers the others.
pub(crate) async fn check<R: AsyncBufRead + Unpin>(
    mut input: R,
    mut to_rmcp: DuplexStream,
    frames: mpsc::Sender<Vec<u8>>,
    inflight: Inflight,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let reply = match read_line(&mut input, &mut line, MAX_LINE).await {
            Ok(Line::End) | Err(_) => return,
            Ok(Line::Oversize) => Some(error_frame(
                &Value::Null,
                INVALID_REQUEST,
                &format!("Invalid Request: the message is longer than {MAX_LINE} bytes"),
            )),
            Ok(Line::Whole) => match verdict(trim(&line)) {
                Ok(Some(message)) => admit(&message, &inflight),
                Ok(None) => None,
                Err(reply) => Some(reply),
            },
        };
        match reply {
            Some(frame) => {
                if frames.send(frame).await.is_err() {
                    return;
                }
            }
            None if trim(&line).is_empty() => {}
            // What was checked, and nothing else, goes to rmcp (which reads neither a byte order
            // mark nor a carriage return).
            None => {
                let passed = async {
                    to_rmcp.write_all(trim(&line)).await?;
                    to_rmcp.write_all(b"\n").await
                };
                if passed.await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Records the id of a request that goes to rmcp; the -32600 reply when that id is in flight.
fn admit(message: &Value, inflight: &Inflight) -> Option<Vec<u8>> {
    if let Some(id) = cancelled_id(message) {
        // rmcp sends no answer to a cancelled request: its id is free again.
        inflight.lock().remove(&id);
        return None;
    }
    let id = request_id(message)?;
    if inflight.lock().insert(id.clone()) {
        return None;
    }
    tracing::warn!(%id, "refused a request reusing the id of one in flight");
    let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
    Some(error_frame(
        &id,
        INVALID_REQUEST,
        &format!("Invalid Request: id {id} is already in flight"),
    ))
}

/// A line parsed, when rmcp should have it (`None` for a blank line), or the error reply it
/// deserves.
fn verdict(line: &[u8]) -> Result<Option<Value>, Vec<u8>> {
    if line.is_empty() {
        return Ok(None);
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(error_frame(
            &Value::Null,
            PARSE_ERROR,
            "Parse error: the message is not UTF-8",
        ));
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(_) if serde_json::from_str::<IgnoredAny>(text).is_ok() => return Err(too_deep(text)),
        Err(_) => {
            return Err(error_frame(
                &Value::Null,
                PARSE_ERROR,
                "Parse error: the message is not JSON",
            ));
        }
    };
    if value.get("method").is_some() && value.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
    {
        let id = value
            .get("id")
            .filter(|id| id.is_string() || id.is_number());
        return Err(error_frame(
            id.unwrap_or(&Value::Null),
            INVALID_REQUEST,
            "Invalid Request: jsonrpc must be \"2.0\"",
        ));
    }
    let Some(id) = value.get("id") else {
        return Ok(Some(value));
    };
    if value.get("method").and_then(Value::as_str) != Some("tools/call")
        || !(id.is_string() || id.is_number())
    {
        return Ok(Some(value));
    }
    let why = match value.get("params") {
        Some(Value::Object(params)) => match (params.get("name"), params.get("arguments")) {
            (Some(Value::String(_)), None | Some(Value::Null | Value::Object(_))) => {
                return Ok(Some(value));
            }
            (Some(Value::String(_)), Some(_)) => "arguments must be an object",
            _ => "name must be the name of a tool",
        },
        _ => "params must be an object with the tool's name and arguments",
    };
    Err(error_frame(
        id,
        INVALID_PARAMS,
        &format!("Invalid params: {why}"),
    ))
}

/// The reply to JSON too deep to read whole: -32602 for a tool call (its arguments are what nests),
/// else -32600; with its id when the top level names a string or number.
fn too_deep(text: &str) -> Vec<u8> {
    let shallow = serde_json::from_str::<Shallow>(text).ok();
    let id = shallow
        .as_ref()
        .and_then(|s| s.id)
        .and_then(|id| serde_json::from_str::<Value>(id.get()).ok())
        .filter(|id| id.is_string() || id.is_number())
        .unwrap_or(Value::Null);
    let tool_call = shallow
        .and_then(|s| s.method)
        .is_some_and(|method| method.get() == r#""tools/call""#);
    if tool_call && !id.is_null() {
        error_frame(
            &id,
            INVALID_PARAMS,
            "Invalid params: the arguments are nested too deep",
        )
    } else {
        error_frame(
            &id,
            INVALID_REQUEST,
            "Invalid Request: the message is nested too deep",
        )
    }
}

fn error_frame(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let frame = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut bytes = serde_json::to_vec(&frame).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Passes rmcp's frames on, one whole line each; an answer frees its id.
async fn pump<R: AsyncBufRead + Unpin>(
    mut from_rmcp: R,
    frames: mpsc::Sender<Vec<u8>>,
    inflight: Inflight,
) {
    loop {
        let mut line = Vec::new();
        match from_rmcp.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if let Some(id) = response_id(&line) {
                    inflight.lock().remove(&id);
                }
                if frames.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes every frame to the client, flushed, until no one sends any more.
async fn write<W: AsyncWrite + Unpin>(mut queue: mpsc::Receiver<Vec<u8>>, mut output: W) {
    while let Some(frame) = queue.recv().await {
        let written = async {
            output.write_all(&frame).await?;
            output.flush().await
        };
        if let Err(error) = written.await {
            tracing::debug!(%error, "the client's stdout is gone");
            return;
        }
    }
}

enum Line {
    /// A whole line (without its `\n`) is in the buffer.
    Whole,
    /// A line longer than the cap was skipped.
    Oversize,
    End,
}

/// Reads one line into `line` without letting it grow past `max`; a longer line is skipped to its
/// end as it streams. A last line without `\n` still counts.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut oversize = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (oversize, line.is_empty()) {
                (true, _) => Line::Oversize,
                (false, true) => Line::End,
                (false, false) => Line::Whole,
            });
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (&available[..at], at + 1),
            None => (available, available.len()),
        };
        let ends = done > chunk.len();
        if !oversize && line.len() + chunk.len() > max {
            oversize = true;
            line.clear();
        }
        if !oversize {
            line.extend_from_slice(chunk);
        }
        input.consume(done);
        if ends {
            return Ok(if oversize {
                Line::Oversize
            } else {
                Line::Whole
            });
        }
    }
}

/// A line without its byte order mark and the white space around it (every carriage return at its
/// end, not only the last); empty when nothing else is left.
fn trim(line: &[u8]) -> &[u8] {
    line.strip_prefix("\u{feff}".as_bytes())
        .unwrap_or(line)
        .trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Option<Value> {
        verdict(line.as_bytes())
            .err()
            .map(|frame| serde_json::from_slice(&frame).unwrap())
    }

    fn admit(line: &[u8], inflight: &Inflight) -> Option<Vec<u8>> {
        super::admit(&serde_json::from_slice(line).unwrap(), inflight)
    }

    #[test]
    fn lines_that_are_no_json_get_a_parse_error_with_a_null_id() {
        let error = reply("this is not json").unwrap();
        assert_eq!(error["error"]["code"], PARSE_ERROR);
        assert_eq!(error["id"], Value::Null);
        assert_eq!(
            verdict(b"\xff\xfe{}")
                .err()
                .map(|f| serde_json::from_slice::<Value>(&f).unwrap()["error"]["code"].clone()),
            Some(json!(PARSE_ERROR))
        );
    }

    #[test]
    fn tool_calls_with_arguments_that_are_no_object_get_invalid_params_with_their_id() {
        for (line, id) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"asp_status","arguments":[1]}}"#,
                json!(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"asp_status","arguments":"x"}}"#,
                json!("a"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}"#,
                json!(8),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":3}}"#,
                json!(9),
            ),
        ] {
            let error = reply(line).unwrap_or_else(|| panic!("passed: {line}"));
            assert_eq!(error["error"]["code"], INVALID_PARAMS, "{line}");
            assert_eq!(error["id"], id, "{line}");
        }
    }

    #[test]
    fn arguments_nested_too_deep_for_serde_get_invalid_params_with_their_id() {
        let deep = format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000));
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"asp_status","arguments":{deep}}}}}"#
        );
        let error = reply(&call).expect("answered");
        assert_eq!(error["error"]["code"], INVALID_PARAMS, "{error}");
        assert_eq!(error["id"], 4);
        let other =
            format!(r#"{{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{deep}}}"#);
        let error = reply(&other).expect("answered");
        assert_eq!(error["error"]["code"], INVALID_REQUEST, "{error}");
        assert_eq!(error["id"], "x");
        let id_too = format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"tools/call"}}"#);
        let error = reply(&id_too).expect("answered");
        assert_eq!(error["error"]["code"], INVALID_REQUEST, "{error}");
        assert_eq!(error["id"], Value::Null);
    }

    #[test]
    fn messages_that_are_not_jsonrpc_2_0_get_invalid_request_with_their_id() {
        for (line, id) in [
            (
                r#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#,
                json!(3),
            ),
            (r#"{"id":"a","method":"tools/list"}"#, json!("a")),
            (
                r#"{"jsonrpc":2,"method":"notifications/initialized"}"#,
                Value::Null,
            ),
        ] {
            let error = reply(line).unwrap_or_else(|| panic!("passed: {line}"));
            assert_eq!(error["error"]["code"], INVALID_REQUEST, "{line}");
            assert_eq!(error["id"], id, "{line}");
        }
    }

    #[test]
    fn good_messages_pass_through() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asp_status","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asp_status"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "[1,2]",
        ] {
            assert_eq!(reply(line), None, "{line}");
        }
    }

    #[test]
    fn a_request_id_in_flight_is_refused_until_its_answer_goes_out() {
        let inflight = Inflight::default();
        let call =
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"asp_status"}}"#;
        assert_eq!(admit(call, &inflight), None, "the first goes to rmcp");
        let refusal: Value = serde_json::from_slice(&admit(call, &inflight).unwrap()).unwrap();
        assert_eq!(refusal["error"]["code"], INVALID_REQUEST);
        assert_eq!(refusal["id"], 7);
        let other = br#"{"jsonrpc":"2.0","id":"7","method":"tools/list"}"#;
        assert_eq!(admit(other, &inflight), None, "\"7\" is another id than 7");
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).as_deref(),
            Some("7")
        );
        inflight.lock().remove("7");
        assert_eq!(
            admit(call, &inflight),
            None,
            "answered, the id is free again"
        );
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
        assert_eq!(admit(cancel, &inflight), None);
        assert_eq!(
            admit(call, &inflight),
            None,
            "cancelled, the id is free again"
        );
        let nameless = br#"{"jsonrpc":"2.0","id":8,"method":null}"#;
        assert_eq!(admit(nameless, &inflight), None);
        assert_eq!(
            admit(nameless, &inflight),
            None,
            "no method name, no request"
        );
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(admit(note, &inflight), None);
        assert_eq!(admit(note, &inflight), None, "notifications have no id");
    }

    #[test]
    fn a_response_id_is_read_from_the_head_of_the_answer_or_from_the_whole_message() {
        for (line, id) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
                Some("7"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a,b","error":{"code":1}}"#,
                Some(r#""a,b""#),
            ),
            (
                r#"{"jsonrpc":"2.0","id":-1.5e3,"result":null}"#,
                Some("-1500.0"),
            ),
            (r#"{"id":8,"jsonrpc":"2.0","result":{}}"#, Some("8")),
            (r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#, None),
            (r#"{"jsonrpc":"2.0","id":null,"error":{"code":1}}"#, None),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
                None,
            ),
            (r#"{"jsonrpc":"2.0","id":{"x":1},"result":{}}"#, None),
            ("not json", None),
        ] {
            assert_eq!(response_id(line.as_bytes()).as_deref(), id, "{line}");
        }
    }

    /// `input` through the checker: what rmcp gets, and the checker's own replies.
    async fn through(input: &[u8]) -> (String, Vec<Value>) {
        use tokio::io::AsyncReadExt as _;
        let (to_rmcp, mut rmcp) = tokio::io::duplex(1024);
        let (frames, mut replies) = mpsc::channel(4);
        check(BufReader::new(input), to_rmcp, frames, Inflight::default()).await;
        let mut passed = String::new();
        rmcp.read_to_string(&mut passed).await.unwrap();
        let mut answered = Vec::new();
        while let Ok(reply) = replies.try_recv() {
            answered.push(serde_json::from_slice(&reply).unwrap());
        }
        (passed, answered)
    }

    /// A line with a byte order mark used to be checked without it but passed to rmcp with it, which
    /// dropped it unanswered.
    #[tokio::test]
    async fn rmcp_gets_the_line_that_was_checked_without_a_byte_order_mark_or_carriage_return() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let input = format!("\u{feff}{call}\r\n \r\n{call}\n");
        let (passed, replies) = through(input.as_bytes()).await;
        assert_eq!(passed, format!("{call}\n"), "the blank line is skipped");
        assert_eq!(
            replies[0]["error"]["code"], INVALID_REQUEST,
            "id 1 is in flight"
        );
    }

    /// Found by the `mcp_frames` fuzz target: a line that ends in two carriage returns is JSON
    /// (white space may follow a value), and rmcp got it with one of them.
    #[tokio::test]
    async fn a_line_ending_in_two_carriage_returns_reaches_rmcp_without_them() {
        let input = include_bytes!("../../tests/fixtures/fuzz/mcp_frames/two-carriage-returns");
        let (passed, replies) = through(input).await;
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        );
        assert!(replies.is_empty(), "{replies:?}");
    }

    #[tokio::test]
    async fn an_oversize_line_is_skipped_as_it_streams_and_the_next_one_is_read() {
        let mut input = format!("{}\n{{\"next\":1}}\n", "x".repeat(100)).into_bytes();
        input.extend_from_slice(b"tail");
        let mut reader = BufReader::with_capacity(8, input.as_slice());
        let mut line = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut line, 16).await.unwrap(),
            Line::Oversize
        ));
        assert!(line.len() <= 16);
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line, 16).await.unwrap(),
            Line::Whole
        ));
        assert_eq!(line, b"{\"next\":1}");
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line, 16).await.unwrap(),
            Line::Whole
        ));
        assert_eq!(line, b"tail");
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line, 16).await.unwrap(),
            Line::End
        ));
    }
}
