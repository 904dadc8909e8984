//! Newline-delimited JSON-RPC (the ASP and MCP stdio wires) for test clients.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;

use serde_json::Value;

/// Reads a child's stdout on a thread and delivers each line parsed; a line that is not JSON fails
/// the test (stdout is for protocol frames only).
pub fn json_lines(stdout: impl Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("not a JSON frame on stdout: {line}"));
            if sender.send(message).is_err() {
                return;
            }
        }
    });
    receiver
}
