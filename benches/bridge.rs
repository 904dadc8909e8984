//! Benchmarks of the bridge against floors measured in the same run, printed as ratios.
//!
//! Run with `cargo bench -p asp-bridge --bench bridge` (or `scripts/bench.sh` for every benchmark).
//! Each figure is the median of several rounds; each floor uses the same fake host over the same
//! kind of pipe, so the ratio is what the bridge adds.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bridge_core::{HostCommand, HostConfig, HostProcess};

const FAKE_HOST: &str = env!("CARGO_BIN_EXE_fake-host");
const CALLS: usize = 20_000;
const IN_FLIGHT: usize = 64;
const ROUNDS: usize = 5;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let direct = median(
        (0..ROUNDS)
            .map(|_| direct_pipelined(CALLS, IN_FLIGHT))
            .collect(),
    );
    let bridge = median(
        (0..ROUNDS)
            .map(|_| runtime.block_on(bridge_pipelined(CALLS, IN_FLIGHT)))
            .collect(),
    );
    report(
        &format!("pipelined host/status x{CALLS}, {IN_FLIGHT} in flight"),
        bridge,
        direct,
    );
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn rate(calls: usize, time: Duration) -> f64 {
    calls as f64 / time.as_secs_f64()
}

fn report(name: &str, bridge: Duration, floor: Duration) {
    let ratio = bridge.as_secs_f64() / floor.as_secs_f64();
    eprintln!(
        "{name}: bridge {:.1} ms ({:.0}/s); direct floor {:.1} ms ({:.0}/s); ratio {ratio:.2}",
        bridge.as_secs_f64() * 1e3,
        rate(CALLS, bridge),
        floor.as_secs_f64() * 1e3,
        rate(CALLS, floor),
    );
}

/// The floor: a plain blocking client that keeps `window` requests in flight and only counts lines.
fn direct_pipelined(calls: usize, window: usize) -> Duration {
    let mut child = Command::new(FAKE_HOST)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fake host");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let request = |id: usize| {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"host/status\",\"params\":{{}}}}\n")
    };
    let started = Instant::now();
    let mut sent = 0;
    while sent < window.min(calls) {
        stdin.write_all(request(sent).as_bytes()).expect("write");
        sent += 1;
    }
    stdin.flush().expect("flush");
    let mut line = String::new();
    for _ in 0..calls {
        line.clear();
        stdout.read_line(&mut line).expect("read");
        if sent < calls {
            stdin.write_all(request(sent).as_bytes()).expect("write");
            stdin.flush().expect("flush");
            sent += 1;
        }
    }
    let elapsed = started.elapsed();
    drop(stdin);
    let _ = child.wait();
    elapsed
}

/// The bridge: `window` tasks sharing one `HostClient`, each awaiting typed `host/status` answers.
async fn bridge_pipelined(calls: usize, window: usize) -> Duration {
    let command = HostCommand {
        program: FAKE_HOST.into(),
        args: vec![],
    };
    let config = HostConfig::new(command, std::env::temp_dir());
    let process = HostProcess::spawn(&config).expect("fake host");
    let client = process.client().clone();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for task in 0..window {
        let client = client.clone();
        let share = calls / window + usize::from(task < calls % window);
        tasks.push(tokio::spawn(async move {
            for _ in 0..share {
                client.status().await.expect("status");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    let elapsed = started.elapsed();
    process.shutdown().await;
    elapsed
}
