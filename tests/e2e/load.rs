//! Load through the real binary: concurrent MCP tool calls and a burst of LSP edits.
//!
//! - `mcp`: 1,000 `tools/call` requests (all five tools in turn) written at once on one stdio
//!   connection to `asp-bridge mcp`; every id must be answered exactly once, none with an error.
//! - `lsp`: 10,000 `textDocument/didChange` notifications written at once to `asp-bridge lsp`, each
//!   moving the host's finding; every version must be published once, in order, with the range moved
//!   by exactly that edit; then a save must bring the host's answer for the last version.
//!
//! Each test prints the bridge's peak RSS (`VmHWM`, read before it is closed) as a report; the only
//! memory assertion is a generous bound that proves it stays bounded. No sleeps: the tests wait on
//! the bridge's own frames, with a deadline only against a hang.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use test_support::lsp::{frame, frames};
use test_support::mcp::TOOLS;
use test_support::ndjson::json_lines;
use test_support::process::wait_exit;

use crate::support::{Scratch, spawn_bridge};

/// Against a hang only; a healthy run takes a few seconds.
const LIMIT: Duration = Duration::from_secs(120);
/// "Bounded": far above what either burst needs, far below what a leak per message would reach.
const RSS_BOUND_KIB: u64 = 512 * 1024;

const MCP_CALLS: i64 = 1_000;

const LSP_CHANGES: i32 = 10_000;

/// Keeps the host's record out of the working-tree changes.
fn ignore_the_record(scratch: &Scratch) {
    let exclude = scratch.path().join(".git/info/exclude");
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(exclude, "host-record.jsonl\n").unwrap();
}

/// `VmHWM` (peak resident set) of a live process, in KiB.
#[cfg(target_os = "linux")]
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

/// Elsewhere (no `/proc`): its resident set now, which its peak bounds from above.
#[cfg(not(target_os = "linux"))]
fn peak_rss_kib(pid: u32) -> u64 {
    test_support::process::peak_rss(pid) >> 10
}

/// The next message on `messages` (failing after `LIMIT`).
fn next(messages: &Receiver<Value>, what: &str) -> Value {
    messages
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("asp-bridge went silent waiting for {what}"))
}

// ---- MCP -------------------------------------------------------------------------------------------

/// A git repository with one commit and one changed file, the host's record ignored by git.
fn mcp_workspace() -> Scratch {
    let scratch = Scratch::git_repo();
    ignore_the_record(&scratch);
    std::fs::write(scratch.path().join("README.txt"), "changed\n").unwrap();
    scratch
}

fn tool_call(id: i64) -> Value {
    let tool = TOOLS[id as usize % TOOLS.len()];
    let arguments = match tool {
        "asp_inspect" => json!({"request": {"kind": "fixture/graph"}}),
        _ => json!({}),
    };
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

#[test]
fn a_thousand_concurrent_mcp_tool_calls_are_each_answered_once() {
    let scratch = mcp_workspace();
    let repo = scratch.path().to_str().expect("a UTF-8 path");
    let host = scratch.fake_host("");
    let args = ["mcp", "--repo", repo, "--host-command", &host];
    let (child, mut stdin, stdout) = spawn_bridge(args, scratch.path());
    let pid = child.id();
    let messages = json_lines(stdout);

    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "load", "version": "0"}}});
    writeln!(stdin, "{initialize}").unwrap();
    assert_eq!(next(&messages, "initialize")["id"], 0);
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();

    // Every request in one write: all of them are in flight before the first answer is read.
    let burst: String = (1..=MCP_CALLS)
        .map(|id| format!("{}\n", tool_call(id)))
        .collect();
    let started = Instant::now();
    stdin.write_all(burst.as_bytes()).unwrap();
    stdin.flush().unwrap();

    let mut answers: BTreeMap<i64, u32> = BTreeMap::new();
    while answers.len() < MCP_CALLS as usize {
        let message = next(&messages, "tool results");
        let Some(id) = message["id"].as_i64() else {
            continue;
        };
        let result = &message["result"];
        assert_eq!(result["isError"], false, "call {id}: {message}");
        assert_eq!(result["structuredContent"]["authoritative"], false);
        *answers.entry(id).or_default() += 1;
    }
    let elapsed = started.elapsed();
    let peak = peak_rss_kib(pid);

    // Closing stdin ends the session; every frame the bridge ever wrote is then read.
    drop(stdin);
    assert_eq!(wait_exit(child, LIMIT), Some(0));
    for message in messages.iter() {
        if let Some(id) = message["id"].as_i64() {
            *answers.entry(id).or_default() += 1;
        }
    }
    let expected: BTreeMap<i64, u32> = (1..=MCP_CALLS).map(|id| (id, 1)).collect();
    assert_eq!(answers, expected, "every request answered exactly once");
    scratch.assert_no_orphans();
    let recorded = scratch.recorded();
    let inspects = scratch.received("host/queryInspect").len();
    assert_eq!(
        inspects as i64,
        MCP_CALLS / 5,
        "one host call per asp_inspect"
    );

    eprintln!(
        "load/mcp: {MCP_CALLS} concurrent tools/call, {} answered once each in {:.0} ms; \
         host saw {} requests; asp-bridge peak RSS (VmHWM) {:.1} MiB",
        answers.len(),
        elapsed.as_secs_f64() * 1e3,
        recorded.iter().filter(|m| m.get("id").is_some()).count(),
        peak as f64 / 1024.0
    );
    assert!(peak < RSS_BOUND_KIB, "peak RSS {peak} KiB is not bounded");
}

// ---- LSP -------------------------------------------------------------------------------------------

/// The next `publishDiagnostics` params (other messages are skipped).
fn next_publish(frames: &Receiver<Value>) -> Value {
    loop {
        let message = next(frames, "publishDiagnostics");
        if message["method"] == "textDocument/publishDiagnostics" {
            return message["params"].clone();
        }
    }
}

/// Change `n` of the burst (version `n + 1`): the first half types `x` at the start of the
/// finding's line, the second half deletes them again, so the last version is the saved text.
fn change(uri: &str, n: i32) -> Value {
    let at = json!({"line": 12, "character": 0});
    let (range, text) = if n <= LSP_CHANGES / 2 {
        (json!({"start": at, "end": at}), "x")
    } else {
        (
            json!({"start": at, "end": {"line": 12, "character": 1}}),
            "",
        )
    };
    json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": n + 1},
        "contentChanges": [{"range": range, "text": text}]}})
}

/// Where the finding starts after change `n`: moved right by every `x` still there.
fn finding_column(n: i32) -> i32 {
    let typed = n.min(LSP_CHANGES / 2);
    let deleted = (n - LSP_CHANGES / 2).max(0);
    10 + typed - deleted
}

#[test]
fn a_burst_of_ten_thousand_lsp_changes_loses_nothing_and_the_server_stays_up() {
    let scratch = Scratch::git_repo();
    ignore_the_record(&scratch);
    std::fs::create_dir_all(scratch.path().join("src")).unwrap();
    std::fs::write(scratch.path().join("src/api.ts"), crate::lsp::api_ts()).unwrap();
    let host = scratch.fake_host("");
    let args = ["lsp", "--debounce-ms", "0", "--host-command", &host];
    let (child, mut stdin, stdout) = spawn_bridge(args, scratch.path());
    let pid = child.id();
    let frames = frames(stdout);

    let root = format!(
        "file://{}",
        scratch.path().canonicalize().unwrap().display()
    );
    let uri = format!("{root}/src/api.ts");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": root, "capabilities": {}}});
    stdin.write_all(&frame(&initialize)).unwrap();
    assert_eq!(next(&frames, "initialize")["id"], 1);
    let initialized = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
    stdin.write_all(&frame(&initialized)).unwrap();
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "typescript", "version": 1, "text": crate::lsp::api_ts()}}});
    stdin.write_all(&frame(&open)).unwrap();
    let opened = next_publish(&frames);
    assert_eq!(opened["version"], 1);
    assert_eq!(
        opened["diagnostics"][0]["range"]["start"],
        json!({"line": 12, "character": 10})
    );

    // The whole burst in one write; the bridge reads it as fast as it can.
    let burst: Vec<u8> = (1..=LSP_CHANGES)
        .flat_map(|n| frame(&change(&uri, n)))
        .collect();
    let started = Instant::now();
    stdin.write_all(&burst).unwrap();
    stdin.flush().unwrap();
    // Each change moves the finding, so each is published once, in order, with its version.
    for n in 1..=LSP_CHANGES {
        let published = next_publish(&frames);
        assert_eq!(published["version"], n + 1, "change {n}");
        let diagnostics = published["diagnostics"].as_array().unwrap();
        assert_eq!(diagnostics.len(), 1, "change {n}: {published}");
        let column = finding_column(n);
        assert_eq!(
            diagnostics[0]["range"],
            json!({"start": {"line": 12, "character": column},
                   "end": {"line": 12, "character": column + 32}}),
            "change {n}"
        );
    }
    let burst_time = started.elapsed();

    // A save of the last version (its text is what is on disk) brings the host's answer for it.
    let save = json!({"jsonrpc": "2.0", "method": "textDocument/didSave",
        "params": {"textDocument": {"uri": uri}}});
    stdin.write_all(&frame(&save)).unwrap();
    let saved = next_publish(&frames);
    assert_eq!(saved["version"], LSP_CHANGES + 1, "the last version");
    let diagnostic = &saved["diagnostics"][0];
    assert_eq!(
        diagnostic["range"],
        json!({"start": {"line": 12, "character": 10}, "end": {"line": 12, "character": 42}})
    );
    assert_eq!(diagnostic["code"], "lattice/secrets");
    let peak = peak_rss_kib(pid);

    // Still serving: `shutdown` is answered, then `exit` ends it cleanly.
    let shutdown = json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"});
    stdin.write_all(&frame(&shutdown)).unwrap();
    loop {
        let message = next(&frames, "the shutdown answer");
        assert_ne!(
            message["method"], "textDocument/publishDiagnostics",
            "nothing more was published: {message}"
        );
        if message["id"] == 2 {
            break;
        }
    }
    stdin
        .write_all(&frame(&json!({"jsonrpc": "2.0", "method": "exit"})))
        .unwrap();
    drop(stdin);
    assert_eq!(wait_exit(child, LIMIT), Some(0));
    scratch.assert_no_orphans();
    let evaluations = scratch.received("host/evaluateChangeset").len();
    assert_eq!(evaluations, 2, "the host is asked on open and on save only");

    eprintln!(
        "load/lsp: {LSP_CHANGES} didChange, {LSP_CHANGES} publishes in order in {:.0} ms, \
         then a save answered for version {}; asp-bridge peak RSS (VmHWM) {:.1} MiB",
        burst_time.as_secs_f64() * 1e3,
        LSP_CHANGES + 1,
        peak as f64 / 1024.0
    );
    assert!(peak < RSS_BOUND_KIB, "peak RSS {peak} KiB is not bounded");
}
