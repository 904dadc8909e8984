//! LSP framing (`Content-Length: N`, a blank line, N bytes), read by the crate's one parser
//! ([`Frames`]), and the client's byte stream checked frame by frame before tower-lsp reads it.
//!
//! tower-lsp stops reading at the first frame it cannot decode (invalid JSON, a body that is no
//! JSON-RPC message, a missing `Content-Length`): one bad frame would end the server. Here every
//! well-formed frame passes through unchanged, and a malformed one is replaced by a request to
//! [`MALFORMED`], which the server answers with the JSON-RPC error it deserves (`-32700` parse error
//! or `-32600` invalid request, with the message's id when it could be read, else `null`). The
//! server's output is cut into frames by the same parser ([`crate::outbox`]).

use rpc_peer::jsonrpc::{INVALID_REQUEST, PARSE_ERROR};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;
use tower_lsp_server::jsonrpc::{Request, Response};

/// The internal method a malformed frame becomes; its params say which error to answer.
pub(crate) const MALFORMED: &str = "$/asp-bridge/malformed";
/// Longest header line read; a longer one is garbage.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// How much input is read at once.
const CHUNK: usize = 64 * 1024;
/// Largest body accepted; a larger one is skipped and answered with an error.
const MAX_BODY: usize = 256 * 1024 * 1024;

/// The params of a [`MALFORMED`] request.
#[derive(Debug, Deserialize)]
pub(crate) struct Malformed {
    pub(crate) code: i64,
    pub(crate) message: String,
}

/// What tower-lsp accepts as a message (the same untagged shape its codec decodes).
#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)]
pub(crate) enum Message {
    Response(Response),
    Request(Request),
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Body(Vec<u8>),
    /// A frame whose body was skipped, with why.
    Skipped(&'static str),
}

/// Cuts a byte stream into frames, however it is chunked. Header blocks without `Content-Length`
/// and stray lines become a skipped frame; a body larger than the cap is skipped without being
/// held; a partial frame at the end of the stream is dropped.
#[derive(Debug, Default)]
pub(crate) struct Frames {
    pending: Vec<u8>,
    state: State,
}

#[derive(Debug)]
enum State {
    /// Reading header lines: how many so far, and the `Content-Length` they gave.
    Headers {
        count: usize,
        length: Option<usize>,
    },
    Body(usize),
    /// Dropping the rest of a body too large to keep.
    Skip(usize),
}

impl Default for State {
    fn default() -> State {
        State::Headers {
            count: 0,
            length: None,
        }
    }
}

impl Frames {
    /// Takes the next bytes of the stream; returns the frames they complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        self.pending.extend_from_slice(bytes);
        let mut frames = Vec::new();
        let mut at = 0;
        while let Some(frame) = self.step(&mut at) {
            frames.extend(frame);
        }
        self.pending.drain(..at);
        frames
    }

    /// One step over `pending[*at..]`: `Some` (with the frame it completed, if any) when it moved,
    /// `None` when it needs more bytes.
    fn step(&mut self, at: &mut usize) -> Option<Option<Frame>> {
        let rest = &self.pending[*at..];
        match self.state {
            State::Body(length) => {
                let body = rest.get(..length)?.to_vec();
                *at += length;
                self.state = State::default();
                Some(Some(Frame::Body(body)))
            }
            State::Skip(left) => {
                let skipped = left.min(rest.len());
                if skipped == 0 {
                    return None;
                }
                *at += skipped;
                if skipped < left {
                    self.state = State::Skip(left - skipped);
                    return Some(None);
                }
                self.state = State::default();
                Some(Some(Frame::Skipped("the message is too large")))
            }
            State::Headers { count, length } => {
                let line = match rest.iter().position(|&b| b == b'\n') {
                    Some(end) if end < MAX_HEADER_LINE => &rest[..=end],
                    _ if rest.len() >= MAX_HEADER_LINE => &rest[..MAX_HEADER_LINE],
                    _ => return None,
                };
                *at += line.len();
                let text = String::from_utf8_lossy(line);
                let text = text.trim_end_matches(['\r', '\n']);
                if !text.is_empty() {
                    let length = match text.split_once(':') {
                        Some((name, value))
                            if name.trim().eq_ignore_ascii_case("content-length") =>
                        {
                            value.trim().parse::<usize>().ok()
                        }
                        _ => length,
                    };
                    self.state = State::Headers {
                        count: count + 1,
                        length,
                    };
                    return Some(None);
                }
                Some(self.end_of_headers(count, length))
            }
        }
    }

    /// After the blank line that ends `count` header lines (none: a stray blank line, ignored).
    fn end_of_headers(&mut self, count: usize, length: Option<usize>) -> Option<Frame> {
        self.state = match length {
            _ if count == 0 => State::default(),
            Some(length) if length <= MAX_BODY => State::Body(length),
            Some(length) => State::Skip(length),
            None => {
                self.state = State::default();
                return Some(Frame::Skipped("a header without a valid Content-Length"));
            }
        };
        None
    }
}

/// Reads `input` on a task and returns the checked stream to give tower-lsp instead. The stream
/// ends when `input` does.
pub(crate) fn checked<I>(mut input: I) -> (DuplexStream, JoinHandle<()>)
where
    I: AsyncRead + Unpin + Send + 'static,
{
    let (mut pipe, server_side) = tokio::io::duplex(64 * 1024);
    let task = tokio::spawn(async move {
        let mut frames = Frames::default();
        let mut chunk = vec![0; CHUNK];
        loop {
            let read = match input.read(&mut chunk).await {
                Ok(0) => return,
                Ok(read) => read,
                Err(error) => {
                    tracing::warn!(%error, "reading the client's input failed");
                    return;
                }
            };
            for frame in frames.push(&chunk[..read]) {
                let body = match frame {
                    Frame::Body(body) => check(body),
                    Frame::Skipped(why) => malformed(Value::Null, PARSE_ERROR, why),
                };
                let header = format!("Content-Length: {}\r\n\r\n", body.len());
                let written = async {
                    pipe.write_all(header.as_bytes()).await?;
                    pipe.write_all(&body).await
                };
                if written.await.is_err() {
                    return;
                }
            }
        }
    });
    (server_side, task)
}

/// `body` if tower-lsp can decode it, else the request that has it answered with an error.
fn check(body: Vec<u8>) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(&body) else {
        return malformed(Value::Null, PARSE_ERROR, "the message is not UTF-8");
    };
    if serde_json::from_str::<Message>(text).is_ok() {
        return body;
    }
    match serde_json::from_str::<Value>(text) {
        Err(_) => malformed(Value::Null, PARSE_ERROR, "the message is not JSON"),
        Ok(value) => {
            let id = value
                .get("id")
                .filter(|id| id.is_i64() || id.is_string())
                .cloned()
                .unwrap_or(Value::Null);
            malformed(
                id,
                INVALID_REQUEST,
                "the message is not a JSON-RPC 2.0 request, notification or response",
            )
        }
    }
}

fn malformed(id: Value, code: i64, message: &str) -> Vec<u8> {
    tracing::warn!(code, message, "answered a malformed message with an error");
    let request = json!({"jsonrpc": "2.0", "id": id, "method": MALFORMED,
        "params": {"code": code, "message": message}});
    serde_json::to_vec(&request).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn pass(input: &[u8]) -> Vec<Value> {
        let (mut stream, task) = checked(std::io::Cursor::new(input.to_vec()));
        let mut output = Vec::new();
        stream.read_to_end(&mut output).await.unwrap();
        task.await.unwrap();
        Frames::default()
            .push(&output)
            .into_iter()
            .map(|frame| match frame {
                Frame::Body(body) => serde_json::from_slice(&body).unwrap(),
                Frame::Skipped(why) => panic!("the checker wrote a bad frame: {why}"),
            })
            .collect()
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn good_frames_pass_unchanged_and_bad_ones_become_error_requests() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let input = [
            frame(good),
            frame("{not json"),
            frame(r#"{"jsonrpc":"1.0","id":7,"method":"x"}"#),
            "garbage line\r\n\r\n".to_owned(),
            format!(
                "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n{}",
                frame(good)
            ),
        ]
        .concat();
        let out = pass(input.as_bytes()).await;
        assert_eq!(out.len(), 5);
        assert_eq!(out[0], serde_json::from_str::<Value>(good).unwrap());
        assert_eq!(out[1]["method"], MALFORMED);
        assert_eq!(out[1]["id"], Value::Null);
        assert_eq!(out[1]["params"]["code"], PARSE_ERROR);
        assert_eq!(out[2]["id"], 7, "the id is kept when it can be read");
        assert_eq!(out[2]["params"]["code"], INVALID_REQUEST);
        assert_eq!(out[3]["params"]["code"], PARSE_ERROR);
        assert_eq!(out[4], out[0]);
    }

    #[test]
    fn frames_come_out_whole_however_the_stream_is_cut() {
        let bodies = [r#"{"id":1}"#, "{}", "", r#"{"m":"漢字 😀"}"#];
        let stream: String = bodies.iter().map(|b| frame(b)).collect();
        let stream = format!("\r\n{stream}junk\r\n\r\n{}", frame("{}"));
        for cut in 1..=stream.len() {
            let mut frames = Frames::default();
            let mut out = Vec::new();
            for chunk in stream.as_bytes().chunks(cut) {
                out.extend(frames.push(chunk));
            }
            let mut expected: Vec<Frame> = bodies
                .iter()
                .map(|b| Frame::Body(b.as_bytes().to_vec()))
                .collect();
            expected.push(Frame::Skipped("a header without a valid Content-Length"));
            expected.push(Frame::Body(b"{}".to_vec()));
            assert_eq!(out, expected, "cut every {cut} bytes");
            assert!(frames.pending.is_empty());
        }
    }

    #[test]
    fn a_body_over_the_cap_is_skipped_without_being_held() {
        let mut frames = Frames::default();
        let header = format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1);
        assert_eq!(frames.push(header.as_bytes()), []);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..256 {
            assert_eq!(frames.push(&chunk), []);
            assert!(frames.pending.is_empty(), "nothing of the body is kept");
        }
        let rest = format!("x{}", frame("{}"));
        assert_eq!(
            frames.push(rest.as_bytes()),
            [
                Frame::Skipped("the message is too large"),
                Frame::Body(b"{}".to_vec())
            ]
        );
    }

    #[test]
    fn a_header_line_without_an_end_is_cut_at_the_cap() {
        let mut frames = Frames::default();
        assert_eq!(frames.push(&vec![b'h'; MAX_HEADER_LINE * 3]), []);
        assert!(frames.pending.is_empty(), "no unbounded header");
        assert_eq!(
            frames.push(b"\r\n\r\n"),
            [Frame::Skipped("a header without a valid Content-Length")]
        );
    }
}
