//! A client of a long-running mode (`mcp` or `lsp`) over the bridge's stdio, for the fault matrix:
//! every frame and every stderr line arrives as an event, so a test waits on what it needs (a
//! response, a notification, a log line) without sleeping, and at the end can count what it got.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Scratch, bridge};

/// Longest wait for any one message, and for the process to end.
pub(crate) const LIMIT: Duration = Duration::from_secs(30);
/// What the bridge logs at: warnings, plus the host client's debug lines (late replies).
const LOG: &str = "warn,bridge_core::host=debug,rpc_peer::peer=debug";

/// How frames are delimited on stdout and stdin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One JSON object per line (MCP over stdio).
    Lines,
    /// `Content-Length` headers (LSP).
    Headers,
}

enum Event {
    Frame(Value),
    /// Something on stdout that is not a frame.
    Garbage(String),
    Stderr(String),
}

/// The bridge as a child process; see the module doc.
pub(crate) struct Session {
    /// The running bridge; `None` once it was waited for.
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    framing: Framing,
    events: Receiver<Event>,
    /// Every frame received so far, in order.
    pub(crate) frames: Vec<Value>,
    stderr: Vec<String>,
    garbage: Vec<String>,
    /// The ids of the requests sent.
    pub(crate) sent: Vec<i64>,
    next_id: i64,
}

/// How a session ended.
pub(crate) struct Ended {
    pub(crate) code: Option<i32>,
    pub(crate) frames: Vec<Value>,
    pub(crate) stderr: String,
    pub(crate) sent: Vec<i64>,
}

impl Session {
    /// Starts `asp-bridge <args>` in the scratch directory.
    pub(crate) fn start(scratch: &Scratch, args: &[String], framing: Framing) -> Session {
        let mut child = bridge(args, scratch.path())
            .env("ASP_BRIDGE_LOG", LOG)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn asp-bridge");
        let (sender, events) = channel();
        let stdout = child.stdout.take().unwrap();
        let frames = sender.clone();
        std::thread::spawn(move || match framing {
            Framing::Lines => read_lines(stdout, &frames),
            Framing::Headers => read_headers(stdout, &frames),
        });
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sender.send(Event::Stderr(line)).is_err() {
                    return;
                }
            }
        });
        Session {
            stdin: child.stdin.take(),
            child: Some(child),
            framing,
            events,
            frames: Vec::new(),
            stderr: Vec::new(),
            garbage: Vec::new(),
            sent: Vec::new(),
            next_id: 0,
        }
    }

    pub(crate) fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let bytes = match self.framing {
            Framing::Lines => format!("{body}\n"),
            Framing::Headers => format!("Content-Length: {}\r\n\r\n{body}", body.len()),
        };
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(bytes.as_bytes())
            .and_then(|()| stdin.flush())
            .expect("write to asp-bridge");
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response (`result` or `error`).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.sent.push(id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut from = 0;
        self.next_frame(&mut from, &format!("the response to {method}"), |f| {
            f["id"] == id && f.get("method").is_none()
        })
    }

    /// The first frame at or after `*from` that satisfies `wanted`, waiting for it if needed;
    /// `*from` moves past it, so the next call finds the next such frame.
    pub(crate) fn next_frame(
        &mut self,
        from: &mut usize,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        loop {
            if let Some(at) = self.frames[*from..].iter().position(&wanted) {
                *from += at + 1;
                return self.frames[*from - 1].clone();
            }
            *from = self.frames.len();
            self.receive(what);
        }
    }

    /// Waits until the bridge has logged a line containing `needle` (perhaps already).
    pub(crate) fn await_stderr(&mut self, needle: &str) {
        while !self.stderr.iter().any(|l| l.contains(needle)) {
            self.receive(&format!("{needle:?} on stderr"));
        }
    }

    /// Takes one event, failing the test after `LIMIT` of silence.
    fn receive(&mut self, what: &str) {
        match self.events.recv_timeout(LIMIT) {
            Ok(event) => self.keep(event),
            Err(e) => panic!(
                "waiting for {what}: {e:?} after {LIMIT:?}; stderr:\n{}",
                self.stderr.join("\n")
            ),
        }
    }

    fn keep(&mut self, event: Event) {
        match event {
            Event::Frame(frame) => self.frames.push(frame),
            Event::Garbage(text) => self.garbage.push(text),
            Event::Stderr(line) => self.stderr.push(line),
        }
    }

    /// Closes stdin, as a client that goes away does.
    pub(crate) fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Waits for the process to close its stdout and stderr, then to end; fails after `LIMIT` for
    /// each.
    pub(crate) fn wait(mut self) -> Ended {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(event) => self.keep(event),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "asp-bridge still running after {LIMIT:?}; stderr:\n{}",
                    self.stderr.join("\n")
                ),
            }
        }
        // Its stdout and stderr are closed: the process is ending.
        let child = self.child.take().expect("a session ends once");
        let code = test_support::process::wait_exit(child, LIMIT);
        drop(self.stdin.take());
        assert!(
            self.garbage.is_empty(),
            "stdout is the protocol, but it carried: {:?}",
            self.garbage
        );
        Ended {
            code,
            frames: std::mem::take(&mut self.frames),
            stderr: self.stderr.join("\n"),
            sent: std::mem::take(&mut self.sent),
        }
    }
}

impl Drop for Session {
    /// A failed test must not leave the bridge (and so its host) running.
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Ended {
    /// Every request sent was answered exactly once, nothing else was answered, and the server sent
    /// no request of its own.
    pub(crate) fn assert_answered_once(&self) {
        for id in &self.sent {
            let answers = self
                .frames
                .iter()
                .filter(|f| f["id"] == *id && f.get("method").is_none())
                .count();
            assert_eq!(answers, 1, "request {id} was answered {answers} times");
        }
        for frame in &self.frames {
            if let Some(id) = frame.get("id").and_then(Value::as_i64) {
                assert!(
                    self.sent.contains(&id) && frame.get("method").is_none(),
                    "unexpected frame with an id: {frame}"
                );
            }
            assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
        }
    }
}

fn read_lines(stdout: impl Read, events: &Sender<Event>) {
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let event = match serde_json::from_str::<Value>(&line) {
            Ok(frame) if frame.is_object() => Event::Frame(frame),
            _ => Event::Garbage(line),
        };
        if events.send(event).is_err() {
            return;
        }
    }
}

fn read_headers(stdout: impl Read, events: &Sender<Event>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let body = match test_support::lsp::read_strict(&mut reader) {
            Ok(Some(body)) => body,
            Ok(None) => return,
            Err(garbage) => {
                let _ = events.send(Event::Garbage(garbage));
                return;
            }
        };
        let event = match serde_json::from_slice::<Value>(&body) {
            Ok(frame) if frame.is_object() => Event::Frame(frame),
            _ => Event::Garbage(String::from_utf8_lossy(&body).into_owned()),
        };
        if events.send(event).is_err() {
            return;
        }
    }
}
