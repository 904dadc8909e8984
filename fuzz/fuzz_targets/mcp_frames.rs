//! Fuzz target: arbitrary client bytes through the MCP line checker, with an rmcp that answers
//! nothing.
//!
//! Nothing panics. Every line rmcp gets is JSON as it was checked (no byte order mark, no carriage
//! return, no blank line), and no request reaches it with the id of one still in flight (here,
//! every request not cancelled). Every reply the checker writes itself is one line: a JSON-RPC
//! error with code -32700, -32600 or -32602 and an id that is null, a string or a number.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use mcp_adapter::fuzzing::checked_lines;
use serde_json::Value;

/// The id of a message as the checker keys it: its JSON text, when a string or a number.
fn key(id: Option<&Value>) -> Option<String> {
    id.filter(|id| id.is_string() || id.is_number())
        .map(Value::to_string)
}

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let (passed, replies) = runtime.block_on(checked_lines(data.to_vec()));

    let mut inflight = HashSet::new();
    if !passed.is_empty() {
        let lines = passed.strip_suffix(b"\n").expect("whole lines only");
        for line in lines.split(|b| *b == b'\n') {
            let message: Value = serde_json::from_slice(line)
                .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(line)));
            assert!(!line.starts_with("\u{feff}".as_bytes()) && !line.ends_with(b"\r"));
            let method = message.get("method").and_then(Value::as_str);
            if method == Some("notifications/cancelled") {
                if let Some(id) = key(message.get("params").and_then(|p| p.get("requestId"))) {
                    inflight.remove(&id);
                }
            } else if method.is_some()
                && let Some(id) = key(message.get("id"))
            {
                assert!(
                    inflight.insert(id.clone()),
                    "id {id} passed twice while in flight"
                );
            }
        }
    }

    for reply in replies {
        assert_eq!(reply.iter().filter(|b| **b == b'\n').count(), 1);
        assert!(reply.ends_with(b"\n"));
        let reply: Value = serde_json::from_slice(&reply).expect("a JSON reply");
        assert_eq!(reply["jsonrpc"], "2.0");
        let code = reply["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32700 | -32600 | -32602)), "{reply}");
        let id = &reply["id"];
        assert!(id.is_null() || id.is_string() || id.is_number(), "{reply}");
    }
});
