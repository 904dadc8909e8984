//! Benchmark: a host reply to the `publishDiagnostics` frame the editor reads, as a ratio to
//! `serde_json` parsing the same reply into a `Value` in the same run. Two replies:
//!
//! - a repository-wide answer: 10,000 findings, of which 100 are on the open file (the others on 99
//!   other files), so the time is mostly reading the answer, not publishing;
//! - a crowded file: 5,000 findings, all on the open file, so the time is mostly publishing.
//!
//! The language server runs in-process over duplexes, against an in-process host; the clock starts
//! when the host writes its `host/evaluateChangeset` reply and stops when the client has read the
//! whole publish frame (before parsing it). Measured for a UTF-16 client (columns pass through) and a
//! UTF-8 client (columns converted with the document text). Medians of several saves are printed.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge_core::HostSource;
use bridge_core::source::BoxFuture;
use bridge_core::{ClientConfig, HostClient};
use lsp_adapter::Options;
use rpc_peer::ExitStatus;
use serde_json::{Value, json};
use test_support::fixture;
use test_support::git::Repo;
use test_support::lsp::frame;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};

const LINES: usize = 1_000;
const ROUNDS: usize = 15;

/// One host reply to measure: how many findings, how many of them on the open file.
#[derive(Clone, Copy)]
struct Shape {
    name: &'static str,
    findings: usize,
    on_file: usize,
}

const SHAPES: [Shape; 2] = [
    Shape {
        name: "10,000 findings, 100 on the open file",
        findings: 10_000,
        on_file: 100,
    },
    Shape {
        name: "5,000 findings, all on the open file",
        findings: 5_000,
        on_file: 5_000,
    },
];

/// The decision: the gating fixture with `shape.findings` findings spread over the lines of the
/// open file (`shape.on_file` of them, evenly among the others) and of 99 other files.
fn decision(shape: Shape) -> Value {
    let mut decision = fixture("outer/evaluate.deny.gating.json");
    let template = decision["findings"][0].clone();
    let every = shape.findings / shape.on_file;
    let findings: Vec<Value> = (0..shape.findings)
        .map(|i| {
            let mut finding = template.clone();
            let line = i % LINES;
            let path = if i % every == 0 {
                "src/big.ts".to_owned()
            } else {
                format!("src/other{}.ts", i % 99)
            };
            finding["diagnostic"]["location"] = json!({"path": path, "range": {
                "start": {"line": line, "char": 6}, "end": {"line": line, "char": 14}}});
            finding["diagnostic"]["fingerprint"] = json!(format!("sha256:bench{i}"));
            finding["diagnostic"]["message"] = json!(format!("naïve 漢字 😀 finding {i}"));
            finding
        })
        .collect();
    decision["findings"] = Value::Array(findings);
    decision
}

fn text() -> String {
    (0..LINES)
        .map(|i| format!("// 😀 key_{i:05} = \"漢字 value\";\n"))
        .collect()
}

/// A host that answers `host/status` and, with the prepared result, `host/evaluateChangeset`,
/// sending the time it starts writing each evaluation reply.
#[derive(Clone)]
struct BenchHost {
    result: Arc<String>,
    written: mpsc::UnboundedSender<Instant>,
    client: Arc<Mutex<Option<HostClient>>>,
    starts: Arc<watch::Sender<u64>>,
}

impl HostSource for BenchHost {
    fn client(&self) -> BoxFuture<'_, bridge_core::Result<HostClient>> {
        Box::pin(async move {
            let mut slot = self.client.lock().unwrap();
            if let Some(client) = slot.as_ref() {
                return Ok(client.clone());
            }
            let (bridge_end, host_end) = tokio::io::duplex(1 << 20);
            let (reader, writer) = tokio::io::split(bridge_end);
            let probe: bridge_core::host::ExitProbe =
                Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
            let client = HostClient::connect(
                BufReader::new(reader),
                writer,
                ClientConfig::default(),
                probe,
            );
            tokio::spawn(serve_host(
                host_end,
                self.result.clone(),
                self.written.clone(),
            ));
            self.starts.send_modify(|n| *n += 1);
            *slot = Some(client.clone());
            Ok(client)
        })
    }

    fn starts(&self) -> watch::Receiver<u64> {
        self.starts.subscribe()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(client) = self.client.lock().unwrap().take() {
                client.close_input();
            }
        })
    }
}

async fn serve_host(
    end: tokio::io::DuplexStream,
    result: Arc<String>,
    written: mpsc::UnboundedSender<Instant>,
) {
    let status = fixture("outer/status.response.json").to_string();
    let (reader, mut writer) = tokio::io::split(end);
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let request: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = request.get("id") else {
            continue;
        };
        let (body, timed) = match request["method"].as_str() {
            Some("host/status") => (&status, false),
            Some("host/evaluateChangeset") => (&*result, true),
            _ => continue,
        };
        let reply = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{body}}}\n");
        if timed {
            let _ = written.send(Instant::now());
        }
        if writer.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// The body of the server's next frame.
async fn read_frame(
    reader: &mut BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
) -> Vec<u8> {
    test_support::lsp::read_frame(reader)
        .await
        .expect("server output closed")
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Times `rounds` saves for a client with these capabilities: (bridge, publish bytes).
async fn run(
    capabilities: Value,
    root: &Path,
    result: Arc<String>,
    on_file: usize,
    rounds: usize,
) -> (Duration, usize) {
    let (written, mut writes) = mpsc::unbounded_channel();
    let host = BenchHost {
        result,
        written,
        client: Arc::default(),
        starts: Arc::new(watch::Sender::new(0)),
    };
    let mut options = Options::new(Box::new(move |_| Ok(Arc::new(host) as Arc<dyn HostSource>)));
    options.debounce = Duration::ZERO;
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server_end);
    let server = tokio::spawn(lsp_adapter::serve(server_in, server_out, options));
    let (reader, mut writer) = tokio::io::split(client_end);
    let mut reader = BufReader::new(reader);

    let root_uri = format!("file://{}", root.display());
    let uri = format!("{root_uri}/src/big.ts");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": root_uri, "capabilities": capabilities}});
    writer.write_all(&frame(&init)).await.unwrap();
    read_frame(&mut reader).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
    writer.write_all(&frame(&initialized)).await.unwrap();
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
        {"uri": uri, "languageId": "typescript", "version": 1, "text": text()}}});
    writer.write_all(&frame(&open)).await.unwrap();

    let mut times = Vec::new();
    let mut size = 0;
    for round in 0..=rounds {
        if round > 0 {
            let save = json!({"jsonrpc": "2.0", "method": "textDocument/didSave",
                "params": {"textDocument": {"uri": uri}}});
            writer.write_all(&frame(&save)).await.unwrap();
        }
        let body = loop {
            let body = read_frame(&mut reader).await;
            if body
                .windows(31)
                .any(|w| w == b"textDocument/publishDiagnostics")
            {
                break body;
            }
        };
        let done = Instant::now();
        let started = writes.recv().await.unwrap();
        let published: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            published["params"]["diagnostics"].as_array().unwrap().len(),
            on_file
        );
        if round > 0 {
            times.push(done - started);
        }
        size = body.len();
    }
    let shutdown = json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"});
    writer.write_all(&frame(&shutdown)).await.unwrap();
    read_frame(&mut reader).await;
    writer
        .write_all(&frame(&json!({"jsonrpc": "2.0", "method": "exit"})))
        .await
        .unwrap();
    server.await.unwrap();
    (median(times), size)
}

fn main() {
    let workspace = Repo::new(&[("src/big.ts", &text())]);
    let root = workspace.root();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for shape in SHAPES {
        let result = Arc::new(decision(shape).to_string());
        let reply = format!("{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{result}}}");
        let parse = median(
            (0..ROUNDS)
                .map(|_| {
                    let started = Instant::now();
                    let value: Value = serde_json::from_str(&reply).unwrap();
                    let elapsed = started.elapsed();
                    assert!(value["result"]["findings"].is_array());
                    elapsed
                })
                .collect(),
        );
        let utf8_caps = json!({"general": {"positionEncodings": ["utf-8"]}});
        // A warm-up: the first server after the floor's parses otherwise pays for freeing their
        // values (the allocator consolidates them), which made whichever client ran first slower.
        runtime.block_on(run(
            utf8_caps.clone(),
            &root,
            result.clone(),
            shape.on_file,
            2,
        ));
        let utf16 = runtime.block_on(run(json!({}), &root, result.clone(), shape.on_file, ROUNDS));
        let utf8 = runtime.block_on(run(utf8_caps, &root, result, shape.on_file, ROUNDS));
        eprintln!(
            "host reply: {}, {} bytes; serde_json parse to Value (floor): {:.2} ms (median of {ROUNDS})",
            shape.name,
            reply.len(),
            parse.as_secs_f64() * 1e3
        );
        for (name, (time, size)) in [("utf-16", utf16), ("utf-8", utf8)] {
            eprintln!(
                "  reply -> publishDiagnostics frame read ({name} client, {size} bytes): {:.2} ms = {:.2}x the parse",
                time.as_secs_f64() * 1e3,
                time.as_secs_f64() / parse.as_secs_f64()
            );
        }
    }
}
