//! LSP base protocol for test clients: `Content-Length` frames written, and read back from a
//! server's output, blocking (a child's stdout) or async (an in-memory duplex).

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// `message` as one frame.
pub fn frame(message: &Value) -> Vec<u8> {
    frame_bytes(&serde_json::to_vec(message).expect("JSON"))
}

/// `body` as one frame, whatever it holds.
pub fn frame_bytes(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// What one frame's header line says: its `Content-Length`, if that is what the line is.
pub fn content_length(header: &str) -> Option<usize> {
    header
        .strip_prefix("Content-Length: ")
        .and_then(|v| v.trim_end().parse().ok())
}

/// The body of the next frame written exactly as `Content-Length: N`, a blank line and N bytes;
/// `Ok(None)` at the end of input, `Err` with what was read instead of a frame.
pub fn read_strict(reader: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut header = String::new();
    match reader.read_line(&mut header) {
        Ok(0) | Err(_) => return Ok(None),
        Ok(_) => {}
    }
    let length = content_length(&header);
    let mut blank = String::new();
    let framed = reader.read_line(&mut blank).is_ok() && blank == "\r\n";
    let (Some(length), true) = (length, framed) else {
        return Err(format!(
            "not one LSP header then a blank line: {header:?}{blank:?}"
        ));
    };
    let mut body = vec![0; length];
    reader
        .read_exact(&mut body)
        .map_err(|_| format!("a body shorter than {length} bytes"))?;
    Ok(Some(body))
}

/// Reads LSP frames from a server's stdout on a thread and delivers each message. Anything but
/// [`read_strict`] frames of JSON on its stdout fails the test (stdout is for protocol frames only).
pub fn frames(stdout: impl Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        while let Some(body) = read_strict(&mut reader).unwrap_or_else(|e| panic!("on stdout: {e}"))
        {
            let message: Value = serde_json::from_slice(&body).expect("a JSON body");
            if sender.send(message).is_err() {
                return;
            }
        }
    });
    receiver
}

/// The body of the next frame (any headers, `Content-Length` required); `None` at the end of input.
pub async fn read_frame(reader: &mut (impl AsyncBufRead + Unpin)) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return None;
        }
        if line.trim_end().is_empty() {
            break;
        }
        length = length.or(content_length(&line));
    }
    let mut body = vec![0; length.expect("a Content-Length header")];
    reader.read_exact(&mut body).await.ok()?;
    Some(body)
}
