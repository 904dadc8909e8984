//! `fake-host`: a scriptable ASP host for the tests, answering from fixtures and injecting faults.
//!
//! Wire: JSON-RPC 2.0, newline-delimited JSON on stdin/stdout (one compact object per line, every frame
//! flushed). Diagnostics go to stderr. Plain std: the main thread reads stdin, a delayed answer gets
//! its own thread, and every group of frames is written under one `stdout().lock()`.
//!
//! # Normal behaviour
//!
//! Each request is answered with the `result` (or `error`) of a fixture from `--fixtures DIR`
//! (default `<asp-bridge crate>/../tests/fixtures/asp`), with the request's `id`; fixture-only keys
//! (`validates`, `//`) are dropped because only `result`/`error` is taken from the file.
//!
//! | method                   | answer                                              |
//! |--------------------------|-----------------------------------------------------|
//! | `host/status`            | `outer/status.response.json`                        |
//! | `host/capabilities`      | `core/capabilities.check-only.json`                 |
//! | `host/authority/status`  | `outer/authority.status.response.json`              |
//! | `host/queryInspect`      | `outer/query-inspect.response.json`                 |
//! | `host/evaluateChangeset` | `outer/evaluate.deny.gating.json` or `--evaluate`   |
//! | `shutdown`               | `result: null` (the host exits at stdin EOF)        |
//! | anything else            | error -32601 `method-not-found`, failClass contract |
//!
//! For `host/evaluateChangeset`, `result.callSite` (and `result.receipt.callSite` when the receipt has
//! one) is set to the request's `params.callSite`. A line that is not JSON gets error -32700 with
//! `id: null`; an object that is neither request, notification nor response gets -32600; blank lines
//! and responses from the client are ignored. `$/cancelRequest {id}` cancels a request that is being
//! delayed (`--delay-ms`): when its delay ends it is answered with error -32016 `cancelled`
//! (failClass health, retryable) instead of its result. Cancelling any other id does nothing (it was
//! already answered, or it hangs and stays unanswered). At stdin EOF the host waits for the delayed
//! answers still in flight, then exits 0. It never panics on input.
//!
//! # Flags
//!
//! [`Config`] is their one description: `fake-host --help` prints it (on stderr). Several flags may
//! combine; `METHOD` may be `*` for every request; `--flag=value` also works.
//!
//! Precedence for one request: crash, close-stdout, hang (and ignored shutdown), then the answer
//! (`--error`, else the fixture, else method-not-found), then progress, then delay or immediate send.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use clap::Parser;
use serde_json::{Value, json};

use content::{generated_finding, oversize_line, sample_authority, sample_diagnostic};

mod content;

/// Set in the environment of the image re-executed by `--close-stdout-on`.
const STDOUT_CLOSED_ENV: &str = "FAKE_HOST_STDOUT_CLOSED";
/// Set in the environment of the image re-executed (under `trap '' TERM`) by `--ignore-shutdown`.
const SIGTERM_IGNORED_ENV: &str = "FAKE_HOST_SIGTERM_IGNORED";

const EVALUATE: &str = "host/evaluateChangeset";
const INSPECT: &str = "host/queryInspect";
const STATUS: &str = "host/status";

/// Methods answered from a fixture, with their default fixture file.
const FIXTURES: [(&str, &str); 5] = [
    (STATUS, "outer/status.response.json"),
    ("host/capabilities", "core/capabilities.check-only.json"),
    (
        "host/authority/status",
        "outer/authority.status.response.json",
    ),
    (INSPECT, "outer/query-inspect.response.json"),
    (EVALUATE, "outer/evaluate.deny.gating.json"),
];

/// A scriptable ASP host for tests: NDJSON JSON-RPC on stdin/stdout, answers from fixtures, faults
/// on request.
#[derive(Debug, Default, Parser)]
#[command(
    name = "fake-host",
    allow_hyphen_values = true,
    args_override_self = true,
    after_help = "A cancelled ($/cancelRequest) delayed request is answered with error -32016 cancelled."
)]
struct Config {
    /// Fixture directory (default: the crate's ../tests/fixtures/asp).
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// host/evaluateChangeset fixture, relative to DIR or absolute (default
    /// outer/evaluate.deny.gating.json).
    #[arg(long, value_name = "FILE")]
    evaluate: Option<PathBuf>,
    /// Append every received line to FILE, verbatim, one per line, flushed.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Evaluate answers get N generated findings (non-ASCII, emoji and BiDi text) and `decision:
    /// deny`, `pass: false`; the rest of the fixture is kept.
    #[arg(long, value_name = "N", value_parser = number::<usize>)]
    findings: Option<usize>,
    /// Every generated finding uses PATH and lines i % 5 (otherwise `src/ünï/файл-{i} 😀.ts`, lines
    /// i % 50).
    #[arg(long, value_name = "PATH")]
    findings_path: Option<String>,
    /// Exit without answering on METHOD, requests and notifications (* = the first message), after
    /// writing `fake-host: crashing on METHOD` to stderr. Repeatable.
    #[arg(long, value_name = "METHOD")]
    crash_on: Vec<String>,
    /// Answer N requests, crash on the next (hung requests count).
    #[arg(long, value_name = "N", value_parser = number::<u64>)]
    crash_after: Option<u64>,
    /// Exit status of a crash (default 3).
    #[arg(long, value_name = "N", value_parser = number::<i32>)]
    exit_code: Option<i32>,
    /// Never answer METHOD (* = all); other requests are still answered. Repeatable.
    #[arg(long, value_name = "METHOD")]
    hang_on: Vec<String>,
    /// Answer METHOD after MS ms on a thread, others meanwhile. Repeatable; the first matching entry
    /// wins.
    #[arg(long = "delay-ms", value_name = "METHOD=MS", value_parser = delay)]
    delays: Vec<(String, u64)>,
    /// Answer METHOD with an error of failClass CLASS: health -32010, policy -32012, input -32013,
    /// contract -32014; message `fake host refuses: CLASS`. Repeatable.
    #[arg(long = "error", value_name = "METHOD=CLASS", value_parser = refusal)]
    errors: Vec<(String, String)>,
    /// Before every answer write `this is not json`, an empty line, a CRLF-terminated `host/log`
    /// notification and a line with invalid UTF-8.
    #[arg(long)]
    junk: bool,
    /// Before every answer write one valid JSON notification line of BYTES bytes (newline not
    /// counted).
    #[arg(long, value_name = "BYTES", value_parser = number::<usize>)]
    oversize: Option<usize>,
    /// Before every answer write two responses to ids never issued (`"fake-unknown-<n>"` and
    /// 999999).
    #[arg(long)]
    unknown_id: bool,
    /// Write every answer twice.
    #[arg(long)]
    duplicate: bool,
    /// Before answering host/evaluateChangeset or host/queryInspect (before any delay) send two
    /// `$/progress` notifications with token = the request id: a report (50 %) and a diagnostics
    /// batch (the answer's first finding, or a sample diagnostic).
    #[arg(long)]
    progress: bool,
    /// Rewrite `result.host.outerProtocol` of the host/status answer.
    #[arg(long, value_name = "VALUE")]
    outer_protocol: Option<String>,
    /// Write N lines of ~100 bytes to stderr at start-up, then one per received line.
    #[arg(long, value_name = "N", value_parser = number::<u64>)]
    stderr_flood: Option<u64>,
    /// On METHOD, close stdout and keep running (same pid): on Unix the host re-executes itself
    /// with stdout on /dev/null (`CommandExt::exec`, no `unsafe`), so the pipe's write end is
    /// really closed; the new image records stdin lines and exits 0 at EOF. Lines read but not yet
    /// handled by the old image are lost; other flags stop applying. Elsewhere (or if exec fails) it
    /// only stops writing.
    #[arg(long, value_name = "METHOD")]
    close_stdout_on: Vec<String>,
    /// Never answer shutdown, keep running after stdin EOF, and ignore SIGTERM (on Unix the host
    /// re-executes itself once at start-up through `/bin/sh -c "trap '' TERM; exec …"`; an ignored
    /// signal stays ignored across exec). Only SIGKILL stops it.
    #[arg(long)]
    ignore_shutdown: bool,
    /// Sleep MS ms before reading anything.
    #[arg(long, value_name = "MS", value_parser = number::<u64>)]
    sleep_before_ms: Option<u64>,
}

/// What a request is answered with: the `result` or the `error` member of a response.
#[derive(Debug, Clone)]
enum Reply {
    Result(Value),
    Error(Value),
}

/// State shared by the reading loop and the threads of delayed answers.
#[derive(Debug)]
struct Host {
    cfg: Config,
    fixtures: HashMap<&'static str, Reply>,
    /// Delayed requests not answered yet (key: the id as JSON text) -> cancelled?
    pending: Mutex<HashMap<String, bool>>,
    unknown_seq: AtomicU64,
}

fn main() {
    let cfg = match Config::try_parse() {
        Ok(cfg) => cfg,
        Err(error) => {
            // Help and errors alike go to stderr: stdout carries frames only.
            log(error.render().to_string().trim_end());
            std::process::exit(if error.use_stderr() { 2 } else { 0 });
        }
    };
    if std::env::var_os(STDOUT_CLOSED_ENV).is_some() {
        drain_stdin_without_stdout(&cfg);
    }
    if cfg.ignore_shutdown && std::env::var_os(SIGTERM_IGNORED_ENV).is_none() {
        reexec_ignoring_sigterm();
    }
    let fixtures = match load_fixtures(&cfg) {
        Ok(fixtures) => fixtures,
        Err(message) => {
            log(&format!("fake-host: {message}"));
            std::process::exit(2);
        }
    };
    if let Some(n) = cfg.stderr_flood {
        for i in 0..n {
            log(&format!(
                "fake-host: stderr flood {i:08} {}",
                "x".repeat(70)
            ));
        }
    }
    if let Some(ms) = cfg.sleep_before_ms {
        thread::sleep(Duration::from_millis(ms));
    }
    let host = Arc::new(Host {
        cfg,
        fixtures,
        pending: Mutex::default(),
        unknown_seq: AtomicU64::new(0),
    });
    serve(&host);
}

// ---------------------------------------------------------------------------------------------------
// Command line

/// A number, surrounding white space allowed.
fn number<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("not a number: {text:?}"))
}

/// Splits `METHOD=VALUE` at its last `=` (method names contain no `=`).
fn pair(text: &str) -> Result<(String, String), String> {
    match text.rsplit_once('=') {
        Some((method, value)) if !method.is_empty() => Ok((method.to_owned(), value.to_owned())),
        _ => Err(format!("expected METHOD=VALUE, got {text:?}")),
    }
}

/// `--delay-ms METHOD=MS`.
fn delay(text: &str) -> Result<(String, u64), String> {
    let (method, ms) = pair(text)?;
    Ok((method, number(&ms)?))
}

/// `--error METHOD=CLASS`, with a failClass the host knows.
fn refusal(text: &str) -> Result<(String, String), String> {
    let (method, class) = pair(text)?;
    match error_code(&class) {
        Some(_) => Ok((method, class)),
        None => Err(format!("unknown failClass {class:?}")),
    }
}

fn error_code(class: &str) -> Option<i64> {
    match class {
        "health" => Some(-32010),
        "policy" => Some(-32012),
        "input" => Some(-32013),
        "contract" => Some(-32014),
        _ => None,
    }
}

fn matches(pattern: &str, method: &str) -> bool {
    pattern == "*" || pattern == method
}

// ---------------------------------------------------------------------------------------------------
// Fixtures

fn load_fixtures(cfg: &Config) -> Result<HashMap<&'static str, Reply>, String> {
    let dir = cfg.fixtures.clone().unwrap_or_else(|| {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/asp"
        ))
    });
    let mut fixtures = HashMap::new();
    for (method, file) in FIXTURES {
        let path = match (&cfg.evaluate, method) {
            (Some(evaluate), EVALUATE) => dir.join(evaluate),
            _ => dir.join(file),
        };
        fixtures.insert(method, load_reply(&path)?);
    }
    Ok(fixtures)
}

/// Reads a fixture response and keeps only its `result` or `error` member.
fn load_reply(path: &Path) -> Result<Reply, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(&text) else {
        return Err(format!("{} is not a JSON object", path.display()));
    };
    if let Some(result) = object.remove("result") {
        return Ok(Reply::Result(result));
    }
    if let Some(error) = object.remove("error") {
        return Ok(Reply::Error(error));
    }
    Err(format!("{} has neither result nor error", path.display()))
}

// ---------------------------------------------------------------------------------------------------
// The reading loop

fn serve(host: &Arc<Host>) {
    let cfg = &host.cfg;
    let mut record = cfg.record.as_deref().and_then(open_record);
    let mut stdin = BufReader::new(io::stdin().lock());
    let mut delayed: Vec<JoinHandle<()>> = Vec::new();
    let mut requests_seen: u64 = 0;
    let mut lines_seen: u64 = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                log(&format!("fake-host: stdin read error: {e}"));
                break;
            }
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        record_line(&mut record, text);
        lines_seen += 1;
        if cfg.stderr_flood.is_some() {
            log(&format!(
                "fake-host: received line {lines_seen:08}, {} bytes {}",
                text.len(),
                "y".repeat(50)
            ));
        }
        let Some(message) = parse_message(host, text) else {
            continue;
        };
        if cfg.crash_on.iter().any(|p| matches(p, &message.method)) {
            crash(cfg, &message.method);
        }
        if cfg
            .close_stdout_on
            .iter()
            .any(|p| matches(p, &message.method))
        {
            close_stdout_and_continue();
        }
        let Some(id) = message.id else {
            handle_notification(host, &message.method, &message.params);
            continue;
        };
        requests_seen += 1;
        if cfg.crash_after.is_some_and(|n| requests_seen > n) {
            crash(cfg, &message.method);
        }
        if let Some(handle) = handle_request(host, id, &message.method, &message.params) {
            delayed.push(handle);
        }
        delayed.retain(|handle| !handle.is_finished());
    }
    for handle in delayed {
        let _ = handle.join();
    }
    if cfg.ignore_shutdown {
        log("fake-host: stdin closed; --ignore-shutdown keeps the host running");
        sleep_forever();
    }
    std::process::exit(0);
}

/// A request (`id` is `Some`) or a notification.
#[derive(Debug)]
struct Message {
    id: Option<Value>,
    method: String,
    params: Value,
}

/// Parses one line; answers parse and envelope errors itself and returns `None` for them, for blank
/// lines and for responses sent by the client.
fn parse_message(host: &Host, text: &[u8]) -> Option<Message> {
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let Ok(value) = serde_json::from_slice::<Value>(text) else {
        let error = error_object(-32700, "parse-error", "contract", false);
        host.send_answer(&frame(&Value::Null, Reply::Error(error)));
        return None;
    };
    let Value::Object(mut object) = value else {
        host.send_answer(&frame(&Value::Null, invalid_request()));
        return None;
    };
    let id = object.remove("id");
    match object.remove("method") {
        Some(Value::String(method)) => {
            let params = object.remove("params").unwrap_or(Value::Null);
            Some(Message { id, method, params })
        }
        None if id.is_some() => None, // a response from the client: nothing to do
        _ => {
            host.send_answer(&frame(&id.unwrap_or(Value::Null), invalid_request()));
            None
        }
    }
}

fn invalid_request() -> Reply {
    Reply::Error(error_object(-32600, "invalid-request", "contract", false))
}

fn handle_notification(host: &Host, method: &str, params: &Value) {
    if method != "$/cancelRequest" {
        return;
    }
    let Some(id) = params.get("id") else { return };
    if let Some(cancelled) = host.lock_pending().get_mut(&id.to_string()) {
        *cancelled = true;
    }
}

/// Answers one request now, or on a thread that is returned when the answer is delayed.
fn handle_request(
    host: &Arc<Host>,
    id: Value,
    method: &str,
    params: &Value,
) -> Option<JoinHandle<()>> {
    let cfg = &host.cfg;
    if cfg.hang_on.iter().any(|p| matches(p, method))
        || (method == "shutdown" && cfg.ignore_shutdown)
    {
        return None;
    }
    let reply = host.reply(method, params);
    if cfg.progress && (method == EVALUATE || method == INSPECT) {
        host.send_progress(&id, &reply);
    }
    let Some(&(_, ms)) = cfg.delays.iter().find(|(p, _)| matches(p, method)) else {
        host.send_answer(&frame(&id, reply));
        return None;
    };
    let key = id.to_string();
    host.lock_pending().insert(key.clone(), false);
    let host = Arc::clone(host);
    Some(thread::spawn(move || {
        thread::sleep(Duration::from_millis(ms));
        let cancelled = host.lock_pending().remove(&key).unwrap_or(false);
        let reply = if cancelled {
            Reply::Error(error_object(-32016, "cancelled", "health", true))
        } else {
            reply
        };
        host.send_answer(&frame(&id, reply));
    }))
}

fn crash(cfg: &Config, method: &str) -> ! {
    log(&format!("fake-host: crashing on {method}"));
    std::process::exit(cfg.exit_code.unwrap_or(3));
}

fn open_record(path: &Path) -> Option<File> {
    match OpenOptions::new().create(true).append(true).open(path) {
        Ok(file) => Some(file),
        Err(e) => {
            log(&format!(
                "fake-host: cannot open --record {}: {e}",
                path.display()
            ));
            None
        }
    }
}

fn record_line(record: &mut Option<File>, text: &[u8]) {
    if let Some(file) = record {
        let mut bytes = text.to_vec();
        bytes.push(b'\n');
        if let Err(e) = file.write_all(&bytes).and_then(|()| file.flush()) {
            log(&format!("fake-host: cannot write --record: {e}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Answers

impl Host {
    fn lock_pending(&self) -> MutexGuard<'_, HashMap<String, bool>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The answer to `method`, before any delay.
    fn reply(&self, method: &str, params: &Value) -> Reply {
        if let Some((_, class)) = self.cfg.errors.iter().find(|(p, _)| matches(p, method)) {
            let code = error_code(class).unwrap_or(-32010);
            let message = format!("fake host refuses: {class}");
            return Reply::Error(error_object(code, &message, class, class == "health"));
        }
        if method == "shutdown" {
            return Reply::Result(Value::Null);
        }
        let Some(reply) = self.fixtures.get(method) else {
            return Reply::Error(error_object(-32601, "method-not-found", "contract", false));
        };
        let Reply::Result(mut result) = reply.clone() else {
            return reply.clone();
        };
        match method {
            STATUS => {
                if let (Some(protocol), Some(host)) =
                    (&self.cfg.outer_protocol, result.get_mut("host"))
                {
                    set(host, "outerProtocol", json!(protocol));
                }
            }
            EVALUATE => self.shape_evaluation(&mut result, params),
            _ => {}
        }
        Reply::Result(result)
    }

    /// Echoes the request's call site and applies `--findings`.
    fn shape_evaluation(&self, result: &mut Value, params: &Value) {
        if let Some(call_site) = params.get("callSite") {
            set(result, "callSite", call_site.clone());
            if let Some(receipt) = result
                .get_mut("receipt")
                .filter(|r| r.get("callSite").is_some())
            {
                set(receipt, "callSite", call_site.clone());
            }
        }
        let Some(n) = self.cfg.findings else { return };
        let authority = result
            .pointer("/authorityEvidence/0")
            .cloned()
            .unwrap_or_else(sample_authority);
        let path = self.cfg.findings_path.as_deref();
        let findings: Vec<Value> = (0..n)
            .map(|i| generated_finding(i, path, &authority))
            .collect();
        set(result, "findings", Value::Array(findings));
        set(result, "decision", json!("deny"));
        set(result, "pass", json!(false));
    }

    /// Two `$/progress` notifications for the request `id`: a report and a diagnostics batch.
    fn send_progress(&self, id: &Value, reply: &Reply) {
        let diagnostic = match reply {
            Reply::Result(result) => result.pointer("/findings/0/diagnostic").cloned(),
            Reply::Error(_) => None,
        };
        let values = [
            json!({"kind": "report", "percentage": 50, "message": "half way"}),
            json!({"kind": "diagnostics", "diagnostics": [diagnostic.unwrap_or_else(sample_diagnostic)]}),
        ];
        let mut out = io::stdout().lock();
        for value in values {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "$/progress",
                "params": {"token": id, "value": value},
            });
            write_frame(&mut out, &to_line(&notification));
        }
    }

    /// Writes one answer with the decorations the flags ask for, under one stdout lock.
    fn send_answer(&self, answer: &Value) {
        let cfg = &self.cfg;
        let line = to_line(answer);
        let mut out = io::stdout().lock();
        if cfg.junk {
            write_frame(&mut out, b"this is not json\n");
            write_frame(&mut out, b"\n");
            write_frame(
                &mut out,
                b"{\"jsonrpc\":\"2.0\",\"method\":\"host/log\",\"params\":{}}\r\n",
            );
            write_frame(&mut out, b"\xff\xfe junk\n");
        }
        if let Some(bytes) = cfg.oversize {
            write_frame(&mut out, &oversize_line(bytes));
        }
        if cfg.unknown_id {
            let n = self.unknown_seq.fetch_add(1, Ordering::Relaxed) + 1;
            for id in [json!(format!("fake-unknown-{n}")), json!(999_999)] {
                write_frame(&mut out, &to_line(&frame(&id, Reply::Result(json!({})))));
            }
        }
        write_frame(&mut out, &line);
        if cfg.duplicate {
            write_frame(&mut out, &line);
        }
    }
}

fn frame(id: &Value, reply: Reply) -> Value {
    match reply {
        Reply::Result(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Reply::Error(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
}

fn error_object(code: i64, message: &str, fail_class: &str, retryable: bool) -> Value {
    json!({"code": code, "message": message, "data": {"failClass": fail_class, "retryable": retryable}})
}

/// Sets `key` on `value` when it is an object; does nothing otherwise.
fn set(value: &mut Value, key: &str, new: Value) {
    if let Some(object) = value.as_object_mut() {
        object.insert(key.to_owned(), new);
    }
}

fn to_line(value: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    line.push(b'\n');
    line
}

/// Writes and flushes; write errors (the reader went away) are ignored: stdin EOF ends the host.
fn write_frame(out: &mut impl Write, bytes: &[u8]) {
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

// ---------------------------------------------------------------------------------------------------
// Process tricks (safe std only)

/// `--close-stdout-on`: replaces this process image (same pid) by a copy of itself whose stdout is
/// `/dev/null`, which closes the pipe the client reads. Falls back to writing nothing.
fn close_stdout_and_continue() -> ! {
    log("fake-host: closing stdout");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        match std::env::current_exe() {
            Ok(exe) => {
                let error = Command::new(exe)
                    .args(std::env::args_os().skip(1))
                    .env(STDOUT_CLOSED_ENV, "1")
                    .stdout(Stdio::null())
                    .exec();
                log(&format!(
                    "fake-host: cannot re-exec to close stdout: {error}"
                ));
            }
            Err(e) => log(&format!("fake-host: cannot find own executable: {e}")),
        }
    }
    drain_stdin_without_stdout(&Config::try_parse().unwrap_or_default())
}

/// Life after stdout is closed: record stdin lines, exit 0 at EOF (or keep running with
/// `--ignore-shutdown`). Nothing is written to stdout.
fn drain_stdin_without_stdout(cfg: &Config) -> ! {
    let mut record = cfg.record.as_deref().and_then(open_record);
    let mut stdin = BufReader::new(io::stdin().lock());
    let mut line = Vec::new();
    while matches!(stdin.read_until(b'\n', &mut line), Ok(n) if n > 0) {
        record_line(&mut record, line.strip_suffix(b"\n").unwrap_or(&line));
        line.clear();
    }
    if cfg.ignore_shutdown {
        sleep_forever();
    }
    std::process::exit(0);
}

/// `--ignore-shutdown`: re-executes this program (same pid) under `trap '' TERM`, so SIGTERM is
/// ignored from then on. Continues without it if that fails.
fn reexec_ignoring_sigterm() {
    #[cfg(unix)]
    {
        use std::ffi::OsString;
        use std::os::unix::process::CommandExt;
        use std::process::Command;
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args: Vec<OsString> = vec!["-c".into(), "trap '' TERM; exec \"$0\" \"$@\"".into()];
        args.push(exe.into_os_string());
        args.extend(std::env::args_os().skip(1));
        let error = Command::new("/bin/sh")
            .args(args)
            .env(SIGTERM_IGNORED_ENV, "1")
            .exec();
        log(&format!(
            "fake-host: cannot re-exec to ignore SIGTERM: {error}"
        ));
    }
}

fn sleep_forever() -> ! {
    loop {
        thread::sleep(Duration::from_secs(3600));
    }
}

/// One line to stderr; never panics (unlike `eprintln!` when stderr is closed).
fn log(message: &str) {
    let _ = writeln!(io::stderr().lock(), "{message}");
}
