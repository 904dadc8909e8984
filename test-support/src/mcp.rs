//! MCP clients for the tests: a bare NDJSON client over a child's stdio ([`McpClient`], both MCP
//! eras) and the official Python SDK's driver script ([`python_client_script`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The tools `asp-bridge mcp` lists, in the order it lists them.
pub const TOOLS: [&str; 5] = [
    "asp_authority_status",
    "asp_capabilities",
    "asp_diagnostics",
    "asp_inspect",
    "asp_status",
];
/// The stateful era: `initialize`, then `notifications/initialized`.
pub const LEGACY: &str = "2025-11-25";
/// The stateless era: `server/discover`, and the protocol version in every request's `_meta`.
pub const MODERN: &str = "2026-07-28";
/// How long a request may wait for its answer, unless the client was given another deadline.
pub const ANSWER: Duration = Duration::from_secs(20);

/// Asserts that a tool error's structured content (`body`) has a `cause` saying `part`.
pub fn assert_cause_says(body: &Value, part: &str) {
    let cause = body["cause"].as_str().unwrap_or_default();
    assert!(
        cause.contains(part),
        "expected {part:?} in the cause: {body:#}"
    );
}

/// An MCP server as a child process, spoken to one JSON line at a time; it keeps every stdout line
/// and the whole stderr for the test to look at.
#[derive(Debug)]
pub struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    era: &'static str,
    answer: Duration,
}

impl McpClient {
    /// Starts `command` with piped stdio and opens the session in `era` ([`LEGACY`] or [`MODERN`]).
    pub fn spawn(command: Command, era: &'static str) -> McpClient {
        McpClient::spawn_with_deadline(command, era, ANSWER)
    }

    /// [`McpClient::spawn`], with `answer` as the deadline of every request.
    pub fn spawn_with_deadline(
        mut command: Command,
        era: &'static str,
        answer: Duration,
    ) -> McpClient {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the MCP server");
        let (sender, lines) = channel();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let log = stdout.clone();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                log.lock().unwrap().push(line.clone());
                let _ = sender.send(line);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut err = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            sink.lock().unwrap().push_str(&text);
        });
        let mut client = McpClient {
            stdin: child.stdin.take(),
            child,
            lines,
            stdout,
            stderr,
            next_id: 0,
            era,
            answer,
        };
        client.open();
        client
    }

    /// The era's opening: `initialize` + `initialized`, or `server/discover`.
    fn open(&mut self) {
        if self.era == LEGACY {
            let result = self.result(
                "initialize",
                json!({"protocolVersion": LEGACY,
                "capabilities": {}, "clientInfo": {"name": "e2e", "version": "0"}}),
            );
            assert_eq!(result["protocolVersion"], LEGACY);
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        } else {
            let result = self.result("server/discover", json!({}));
            assert!(
                result["supportedVersions"].to_string().contains(MODERN),
                "{result}"
            );
        }
    }

    /// Writes one message as a line.
    pub fn send(&mut self, message: Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// Writes `line` and a newline, whatever the bytes are.
    pub fn send_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("write to the MCP server");
        stdin.write_all(b"\n").expect("write to the MCP server");
        stdin.flush().expect("flush to the MCP server");
    }

    /// The next frame on stdout whose `id` is `id`; fails the test after the answer deadline.
    pub fn frame_with_id(&self, id: &Value) -> Value {
        let deadline = Instant::now() + self.answer;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no frame with id {id} within {:?}; stderr: {}",
                    self.answer,
                    self.stderr()
                )
            });
            let frame: Value = serde_json::from_str(&line).expect("stdout carries JSON frames");
            if &frame["id"] == id {
                return frame;
            }
        }
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        if self.era == MODERN {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "0"}
            });
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.frame_with_id(&json!(id))
    }

    /// The `result` of a request; fails the test on an error response.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// The names of the listed tools, in order.
    pub fn tools(&mut self) -> Vec<String> {
        let result = self.result("tools/list", json!({}));
        result["tools"]
            .as_array()
            .expect("a tool list")
            .iter()
            .map(|t| t["name"].as_str().expect("a tool name").to_owned())
            .collect()
    }

    /// `tools/call`; returns the result (a tool failure is a result, never a JSON-RPC error).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin as a client that goes away does; returns the exit code and every stdout line.
    pub fn close(mut self) -> (Option<i32>, Vec<String>) {
        drop(self.stdin.take());
        self.wait()
    }

    /// Sends SIGTERM with stdin still open; returns the exit code and every stdout line.
    pub fn terminate(self) -> (Option<i32>, Vec<String>) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        self.wait()
    }

    /// Waits (10 s at most, then SIGKILL and a failed test) for the server to end.
    fn wait(self) -> (Option<i32>, Vec<String>) {
        let _stdin = self.stdin;
        let code = crate::process::wait_exit(self.child, Duration::from_secs(10));
        let lines = self.stdout.lock().unwrap().clone();
        (code, lines)
    }
}

/// The Python MCP SDK driver (`client.py`): it drives a bridge with the official SDK and prints one
/// JSON report; `python client.py --help` lists its flags.
pub fn python_client_script() -> PathBuf {
    crate::workspace_dir().join("test-support/mcp/client.py")
}
