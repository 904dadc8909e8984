//! The client's byte stream, checked frame by frame before tower-lsp reads it.
//!
//! tower-lsp stops reading at the first frame it cannot decode (invalid JSON, a body that is no
//! JSON-RPC message, a missing `Content-Length`): one bad frame would end the server. Here every
//! well-formed frame passes through unchanged, and a malformed one is replaced by a request to
//! [`MALFORMED`], which the server answers with the JSON-RPC error it deserves (`-32700` parse error
//! or `-32600` invalid request, with the message's id when it could be read, else `null`).

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;
use tower_lsp_server::jsonrpc::{Request, Response};

/// The internal method a malformed frame becomes; its params say which error to answer.
pub(crate) const MALFORMED: &str = "$/asp-bridge/malformed";
/// Longest header line read; a longer one is garbage.
const MAX_HEADER_LINE: u64 = 8 * 1024;
/// Largest body accepted; a larger one is skipped and answered with an error.
const MAX_BODY: usize = 256 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

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

pub(crate) enum Frame {
    Body(Vec<u8>),
    /// A frame whose body was skipped, with why.
    Skipped(&'static str),
}

/// Reads `input` on a task and returns the checked stream to give tower-lsp instead. The stream
/// ends when `input` does.
pub(crate) fn checked<I>(input: I) -> (DuplexStream, JoinHandle<()>)
where
    I: AsyncRead + Unpin + Send + 'static,
{
    let (mut pipe, server_side) = tokio::io::duplex(64 * 1024);
    let task = tokio::spawn(async move {
        let mut reader = BufReader::new(input);
        loop {
            let frame = match next_frame(&mut reader).await {
                Ok(Some(frame)) => frame,
                Ok(None) => return,
                Err(error) => {
                    tracing::warn!(%error, "reading the client's input failed");
                    return;
                }
            };
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
    });
    (server_side, task)
}

/// The next frame, `None` at the end of input. Header blocks without `Content-Length` and stray
/// lines are skipped (and reported as a skipped frame).
pub(crate) async fn next_frame<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> std::io::Result<Option<Frame>> {
    let mut length = None;
    let mut headers = 0;
    loop {
        let mut line = Vec::new();
        let read = (&mut *reader)
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)
            .await?;
        if read == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if headers > 0 {
                break;
            }
            continue;
        }
        headers += 1;
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    match length {
        Some(length) if length <= MAX_BODY => {
            let mut body = vec![0; length];
            reader.read_exact(&mut body).await?;
            Ok(Some(Frame::Body(body)))
        }
        Some(length) => {
            let skipped = tokio::io::copy(
                &mut (&mut *reader).take(length as u64),
                &mut tokio::io::sink(),
            )
            .await?;
            if skipped < length as u64 {
                return Ok(None);
            }
            Ok(Some(Frame::Skipped("the message is too large")))
        }
        None => Ok(Some(Frame::Skipped(
            "a header without a valid Content-Length",
        ))),
    }
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
        let (stream, task) = checked(std::io::Cursor::new(input.to_vec()));
        let mut reader = BufReader::new(stream);
        let mut out = Vec::new();
        while let Some(Frame::Body(body)) = next_frame(&mut reader).await.unwrap() {
            out.push(serde_json::from_slice(&body).unwrap());
        }
        task.await.unwrap();
        out
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
}
