//! Benchmarks of the bridge against floors measured in the same run, printed as ratios.
//!
//! Run with `cargo bench -p asp-bridge --bench bridge` (or `scripts/bench.sh` for every benchmark);
//! `-- round-trip`, `-- cold-start`, `-- pipelined` or `-- sarif` runs one part.
//! Each floor talks to the same fake host over the same kind of pipe, so the ratio is what the
//! bridge adds:
//!
//! - round trip: sequential MCP `asp_status` calls through `asp-bridge mcp` vs sequential
//!   `host/status` calls straight to a fake host, interleaved call by call; p50, p99, overhead;
//! - cold start: spawning `asp-bridge mcp` until its first `asp_status` result vs spawning the fake
//!   host until its first `host/status` answer, interleaved; medians;
//! - pipelined: `HostClient` with 64 calls in flight vs the fake host's own maximum rate with the
//!   same window (a minimal client that only counts answer lines), plus CPU per call;
//! - sarif: `asp-bridge sarif --from FILE --output OUT` on a saved answer of 25,000 findings (every one
//!   exported) and of 100,000 (capped at GitHub's 25,000) vs a `serde_json::Value` round trip of the
//!   same file (read, parse, write compact), each a process of its own, interleaved; wall time and
//!   peak resident memory (`wait4`), medians.
//! - changeset: the working-tree changeset of a later evaluation (`Worktree::changeset`: git, the
//!   before-blobs, hashing what changed) vs the one `git status --porcelain=v2` it runs; medians,
//!   and the git processes per evaluation.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use bridge_core::{HostCommand, HostConfig, HostProcess};
use serde_json::{Value, json};
use test_support::git::Repo;

#[path = "rusage.rs"]
mod rusage;

const BRIDGE: &str = env!("CARGO_BIN_EXE_asp-bridge");

const CALLS: usize = 20_000;
const IN_FLIGHT: usize = 64;
const ROUNDS: usize = 5;
const ROUND_TRIPS: usize = 2_000;
const WARM_UP: usize = 100;
const COLD_STARTS: usize = 15;

/// Runs every part, or only those named on the command line (`cargo bench --bench bridge -- pipelined`).
fn main() {
    if let Some(files) = std::env::var_os(sarif::FLOOR) {
        return sarif::floor(&files.to_string_lossy());
    }
    if let Some(what) = std::env::var_os(sarif::GENERATE) {
        return sarif::generate(&what.to_string_lossy());
    }
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |part: &str| named.is_empty() || named.iter().any(|n| n == part);
    let workspace = tempfile::tempdir().expect("tempdir");
    let repo = workspace.path().canonicalize().expect("workspace");
    if wanted("round-trip") {
        round_trip(&repo);
    }
    if wanted("cold-start") {
        cold_start(&repo);
    }
    if wanted("pipelined") {
        pipelined();
    }
    if wanted("sarif") {
        sarif::compare();
    }
    if wanted("changeset") {
        changeset();
    }
}

// ---- shared ----------------------------------------------------------------------------------------

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The `q` quantile (0..1) of sorted samples.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// CPU time (user and system, all threads) a process has used so far; Linux `/proc`, in ticks of
/// 10 ms (`USER_HZ`), so only differences over many calls mean anything.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // Fields after the command name, which is in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("comm") + 2..]
        .split(' ')
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

/// A child spoken to one JSON line at a time, as a blocking client would.
struct LineClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl LineClient {
    fn spawn(command: &mut Command) -> LineClient {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        LineClient {
            stdin: child.stdin.take(),
            stdout: BufReader::with_capacity(64 * 1024, child.stdout.take().expect("stdout")),
            child,
            line: String::new(),
        }
    }

    fn send(&mut self, message: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(message.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends `request` and reads lines until the answer to `id`; the answer stays in `self.line`.
    fn ask(&mut self, request: &str, id: u64) {
        self.send(request);
        let (more, last) = (format!("\"id\":{id},"), format!("\"id\":{id}}}"));
        loop {
            self.line.clear();
            let read = self.stdout.read_line(&mut self.line).expect("read");
            assert!(read > 0, "the child closed its stdout");
            if self.line.contains(&more) || self.line.trim_end().ends_with(&last) {
                return;
            }
        }
    }

    /// The last answer, parsed (outside any timed region).
    fn answer(&self) -> Value {
        serde_json::from_str(&self.line).expect("a JSON answer")
    }

    /// Closes stdin and waits for the child to end.
    fn close(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The fake host (`test-support`'s `fake-host`), built next to the bridge.
fn fake_host_path() -> String {
    test_support::fake_host_bin(BRIDGE).display().to_string()
}

fn fake_host() -> LineClient {
    LineClient::spawn(&mut Command::new(test_support::fake_host_bin(BRIDGE)))
}

/// The host of the round trip: the fake host, or a Python NDJSON host
/// (`benches/ndjson_host.py`) when `ASP_BRIDGE_BENCH_PYTHON` names a Python interpreter.
fn round_trip_host() -> Vec<String> {
    match std::env::var("ASP_BRIDGE_BENCH_PYTHON") {
        Ok(python) if !python.is_empty() => {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let script = dir.join("benches/ndjson_host.py");
            let status = dir.join("tests/fixtures/asp/outer/status.response.json");
            vec![
                python,
                script.display().to_string(),
                status.display().to_string(),
            ]
        }
        _ => vec![fake_host_path()],
    }
}

fn host_process(host: &[String]) -> LineClient {
    LineClient::spawn(Command::new(&host[0]).args(&host[1..]))
}

fn bridge_mcp(repo: &Path) -> LineClient {
    bridge_mcp_with(repo, &[fake_host_path()])
}

fn bridge_mcp_with(repo: &Path, host: &[String]) -> LineClient {
    let host = shlex::try_join(host.iter().map(String::as_str)).expect("quotable");
    LineClient::spawn(
        Command::new(BRIDGE)
            .args(["mcp", "--repo"])
            .arg(repo)
            .args(["--host-command", &host])
            .env_remove("ASP_BRIDGE_HOST_COMMAND")
            .env_remove("ASP_BRIDGE_LOG"),
    )
}

fn host_status(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"host/status","params":{{}}}}"#)
}

fn asp_status(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"asp_status","arguments":{{}}}}}}"#
    )
}

/// The MCP opening of the 2025-11-25 era: `initialize`, then `notifications/initialized`.
fn open_mcp(bridge: &mut LineClient) {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}});
    bridge.ask(&initialize.to_string(), 0);
    bridge.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

fn check_status_result(bridge: &LineClient) {
    let answer = bridge.answer();
    assert_eq!(
        answer["result"]["isError"], false,
        "asp_status failed: {answer}"
    );
}

fn check_host_status(host: &LineClient) {
    let answer = host.answer();
    assert!(
        answer["result"]["host"].is_object(),
        "host/status failed: {answer}"
    );
}

// ---- round trip ------------------------------------------------------------------------------------

/// Sequential calls, one bridge call then one direct call, so both see the same machine state.
fn round_trip(repo: &Path) {
    let command = round_trip_host();
    let mut host = host_process(&command);
    let mut bridge = bridge_mcp_with(repo, &command);
    open_mcp(&mut bridge);
    let mut direct_times = Vec::with_capacity(ROUND_TRIPS);
    let mut bridge_times = Vec::with_capacity(ROUND_TRIPS);
    let mut bridge_cpu = Duration::ZERO;
    for n in 0..(WARM_UP + ROUND_TRIPS) as u64 {
        if n == WARM_UP as u64 {
            bridge_cpu = cpu_time(bridge.child.id());
        }
        let id = n + 1;
        let (request, started) = (asp_status(id), Instant::now());
        bridge.ask(&request, id);
        let through_bridge = started.elapsed();
        check_status_result(&bridge);

        let (request, started) = (host_status(id), Instant::now());
        host.ask(&request, id);
        let direct = started.elapsed();
        check_host_status(&host);

        if n >= WARM_UP as u64 {
            bridge_times.push(through_bridge);
            direct_times.push(direct);
        }
    }
    bridge_cpu = cpu_time(bridge.child.id()) - bridge_cpu;
    bridge.close();
    host.close();
    bridge_times.sort();
    direct_times.sort();
    let (b50, d50) = (quantile(&bridge_times, 0.5), quantile(&direct_times, 0.5));
    let (b99, d99) = (quantile(&bridge_times, 0.99), quantile(&direct_times, 0.99));
    eprintln!(
        "round trip, {ROUND_TRIPS} sequential calls: MCP asp_status via asp-bridge vs host/status direct ({})",
        command.join(" ")
    );
    for (name, bridge, direct) in [("p50", b50, d50), ("p99", b99, d99)] {
        eprintln!(
            "  {name}: bridge {:.0} µs; direct floor {:.0} µs; ratio {:.2}; overhead {:+.0} µs",
            us(bridge),
            us(direct),
            us(bridge) / us(direct),
            us(bridge) - us(direct),
        );
    }
    eprintln!(
        "  asp-bridge CPU per call (user + system, all threads): {:.0} µs",
        us(bridge_cpu) / ROUND_TRIPS as f64
    );
}

// ---- cold start ------------------------------------------------------------------------------------

/// Spawn to first answer, alternating the bridge and the bare host.
fn cold_start(repo: &Path) {
    let mut bridge_times = Vec::with_capacity(COLD_STARTS);
    let mut direct_times = Vec::with_capacity(COLD_STARTS);
    for _ in 0..COLD_STARTS {
        let started = Instant::now();
        let mut bridge = bridge_mcp(repo);
        open_mcp(&mut bridge);
        bridge.ask(&asp_status(1), 1);
        bridge_times.push(started.elapsed());
        check_status_result(&bridge);
        bridge.close();

        let started = Instant::now();
        let mut host = fake_host();
        host.ask(&host_status(1), 1);
        direct_times.push(started.elapsed());
        check_host_status(&host);
        host.close();
    }
    let (bridge, direct) = (median(bridge_times), median(direct_times));
    eprintln!(
        "cold start to first answer (median of {COLD_STARTS}): asp-bridge mcp -> initialize -> asp_status {:.1} ms; \
         fake host -> host/status (floor) {:.1} ms; ratio {:.2}; overhead {:+.1} ms",
        ms(bridge),
        ms(direct),
        ms(bridge) / ms(direct),
        ms(bridge) - ms(direct),
    );
}

// ---- pipelined -------------------------------------------------------------------------------------

fn pipelined() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut direct = Vec::with_capacity(ROUNDS);
    let mut bridge = Vec::with_capacity(ROUNDS);
    let mut cpu = Duration::ZERO;
    for _ in 0..ROUNDS {
        direct.push(direct_pipelined(CALLS, IN_FLIGHT));
        let before = cpu_time(std::process::id());
        bridge.push(runtime.block_on(bridge_pipelined(CALLS, IN_FLIGHT)));
        cpu += cpu_time(std::process::id()) - before;
    }
    let (bridge, direct) = (median(bridge), median(direct));
    let rate = |time: Duration| CALLS as f64 / time.as_secs_f64();
    eprintln!(
        "pipelined host/status x{CALLS} (median of {ROUNDS}): HostClient, {IN_FLIGHT} in flight, {:.1} ms ({:.0}/s); \
         the fake host's own maximum rate, same window (floor) {:.1} ms ({:.0}/s); ratio {:.2}",
        ms(bridge),
        rate(bridge),
        ms(direct),
        rate(direct),
        ms(bridge) / ms(direct),
    );
    eprintln!(
        "  HostClient CPU per call (user + system, all threads, typed decode included): {:.1} µs",
        us(cpu) / (CALLS * ROUNDS) as f64
    );
}

/// The floor, the fake host's own maximum rate with the same window: a minimal client that keeps
/// `window` requests in flight, counts the newlines of whatever answers arrive, and tops the window
/// up with one write for all of them.
fn direct_pipelined(calls: usize, window: usize) -> Duration {
    let mut host = fake_host();
    let mut stdin = host.stdin.take().expect("stdin");
    let mut requests = String::new();
    let mut send = |stdin: &mut ChildStdin, from: usize, to: usize| {
        requests.clear();
        for id in from..to {
            requests.push_str(&host_status(id as u64));
            requests.push('\n');
        }
        stdin.write_all(requests.as_bytes()).expect("write");
    };
    let started = Instant::now();
    let mut sent = window.min(calls);
    send(&mut stdin, 0, sent);
    let mut answers = 0;
    while answers < calls {
        let read = host.stdout.fill_buf().expect("read");
        assert!(!read.is_empty(), "the fake host closed its stdout");
        let complete = read.iter().filter(|&&b| b == b'\n').count();
        let read = read.len();
        host.stdout.consume(read);
        answers += complete;
        let next = (sent + complete).min(calls);
        send(&mut stdin, sent, next);
        sent = next;
    }
    let elapsed = started.elapsed();
    drop(stdin);
    host.close();
    elapsed
}

/// The bridge: `window` tasks sharing one `HostClient`, each awaiting typed `host/status` answers.
async fn bridge_pipelined(calls: usize, window: usize) -> Duration {
    let command = HostCommand {
        program: test_support::fake_host_bin(BRIDGE).display().to_string(),
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

// ---- sarif -----------------------------------------------------------------------------------------

mod sarif {
    use std::io::Write as _;
    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::rusage::measure;

    /// Set in the child that runs the floor: `INPUT\nOUTPUT`.
    pub(super) const FLOOR: &str = "ASP_BRIDGE_BENCH_SARIF_FLOOR";
    /// Set in the child that writes a saved answer: `FINDINGS\nPATH`.
    pub(super) const GENERATE: &str = "ASP_BRIDGE_BENCH_SARIF_GENERATE";
    const ROUNDS: usize = 5;

    /// Writes a saved answer, in a child process: a child's peak resident set counts its parent's
    /// at the spawn (the memory map it starts from), so the parent must stay small.
    pub(super) fn generate(what: &str) {
        let (findings, path) = what.split_once('\n').expect("findings and path");
        let findings = findings.parse().expect("a count");
        std::fs::write(path, saved_answer(findings)).expect("input");
    }

    /// The floor, in a process of its own: the file read whole, parsed into a `Value`, written back
    /// compact through a buffer.
    pub(super) fn floor(files: &str) {
        let (input, output) = files.split_once('\n').expect("input and output");
        let bytes = std::fs::read(input).expect("input");
        let value: Value = serde_json::from_slice(&bytes).expect("JSON");
        let file = std::fs::File::create(output).expect("output");
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, file);
        serde_json::to_writer(&mut out, &value).expect("written");
        out.write_all(b"\n")
            .and_then(|()| out.flush())
            .expect("written");
    }

    /// A JSON-RPC response with `n` findings shaped like a real host's (non-ASCII text, ranges,
    /// help, authority evidence, next steps on gating findings).
    fn saved_answer(n: usize) -> String {
        let authority = json!({
            "identity": "fake-check", "integrity": "sha256:fake", "conformance": "fake-check",
            "isolation": "gated", "authority": {"granted": true, "requirement": "fake-check"},
        });
        let findings: Vec<Value> = (0..n)
            .map(|i| {
                let severity = ["error", "warning", "info"][i % 3];
                let line = i % 50;
                let mut finding = json!({
                    "diagnostic": {
                        "code": format!("fake/rule-{}", i % 7),
                        "severity": severity,
                        "source": "fake-check",
                        "message": format!("naïve 漢字 😀 \u{202E}rtl\u{202C} finding {i}"),
                        "location": {
                            "path": format!("src/ünï/файл-{i} 😀.ts"),
                            "range": {"start": {"line": line, "char": 2}, "end": {"line": line, "char": 9}},
                        },
                        "fingerprint": format!("sha256:fake{i}"),
                        "introduced": i % 2 == 0,
                        "help": format!("see fake rule {} for finding {i}", i % 7),
                        "codeDescription": {"href": format!("https://example.test/rules/{}", i % 7)},
                    },
                    "authority": authority,
                    "disposition": if severity == "error" { "gating" } else { "advisory" },
                });
                if severity == "error" {
                    finding["nextStep"] = json!(format!("fix {i}"));
                    finding["nextStepOrigin"] = json!("synthesized");
                }
                finding
            })
            .collect();
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "pass": false, "decision": "deny", "callSite": "sweep", "findings": findings,
                "coverage": {"exhaustive": true, "required": ["fake-check"], "enrolled": ["fake-check"],
                             "ran": ["fake-check"], "degraded": []},
                "policyDigest": "sha256:policy", "authorityEvidence": [authority],
                "validAsOf": {"rev": "tree:abc"}, "assurance": {"mode": "gated", "transactionGuarantee": "none"},
                "receipt": {"receiptId": "bench", "host": {"name": "bench-host", "version": "1.0.0"},
                            "failures": []},
            },
        })
        .to_string()
    }

    fn median<T: Ord + Copy>(mut samples: Vec<T>) -> T {
        samples.sort();
        samples[samples.len() / 2]
    }

    pub(super) fn compare() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (findings, what) in [
            (25_000, "every one exported"),
            (100_000, "capped at GitHub's 25,000"),
        ] {
            let input = dir.path().join(format!("answer-{findings}.json"));
            let job = format!("{findings}\n{}", input.display());
            measure(Command::new(std::env::current_exe().expect("this bench")).env(GENERATE, job));
            one(&input, &dir.path().join("out.sarif"), findings, what);
        }
    }

    fn one(input: &Path, output: &Path, findings: usize, what: &str) {
        let mut bridge = Vec::new();
        let mut floor = Vec::new();
        for _ in 0..ROUNDS {
            bridge.push(measure(
                Command::new(super::BRIDGE)
                    .args(["sarif", "--from"])
                    .arg(input)
                    .arg("--output")
                    .arg(output)
                    .env_remove("ASP_BRIDGE_LOG"),
            ));
            let files = format!("{}\n{}", input.display(), output.display());
            floor.push(measure(
                Command::new(std::env::current_exe().expect("this bench")).env(FLOOR, files),
            ));
        }
        let time = |runs: &[(Duration, u64)]| median(runs.iter().map(|r| r.0).collect());
        let peak =
            |runs: &[(Duration, u64)]| median(runs.iter().map(|r| r.1).collect()) as f64 / 1024.0;
        let (bt, ft) = (time(&bridge), time(&floor));
        let (bm, fm) = (peak(&bridge), peak(&floor));
        let size = std::fs::metadata(input).map_or(0, |m| m.len()) as f64 / 1e6;
        eprintln!(
            "sarif --from, {findings} findings ({what}; {size:.0} MB of input; median of {ROUNDS}): \
             asp-bridge {:.0} ms, peak {bm:.0} MiB; serde_json Value round trip (floor) {:.0} ms, \
             peak {fm:.0} MiB; ratio time {:.2}, memory {:.2}",
            super::ms(bt),
            super::ms(ft),
            super::ms(bt) / super::ms(ft),
            bm / fm,
        );
    }
}

// ---- changeset -------------------------------------------------------------------------------------

const CHANGESETS: usize = 40;

/// A repository of 500 committed files, 50 of them edited and 10 untracked files added.
fn changed_repo() -> Repo {
    let repo = Repo::init();
    let text = |i: usize| format!("line {i}\n").repeat(200);
    for i in 0..500 {
        repo.write(&format!("f{i}.txt"), &text(i));
    }
    repo.commit();
    for i in 0..50 {
        repo.write(&format!("f{i}.txt"), &text(i + 1000));
    }
    for i in 0..10 {
        repo.write(&format!("new{i}.txt"), &text(i));
    }
    repo
}

fn changeset() {
    use bridge_core::Worktree;
    use bridge_core::worktree::Scope;
    let repo = changed_repo();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let worktree = Worktree::new(repo.path());
    let baseline = json!({"rev": "not-a-git-object"});
    let build = || {
        runtime
            .block_on(worktree.changeset(&baseline, &Scope::Changes))
            .expect("changeset")
    };
    assert_eq!(
        build().changeset.changes.len(),
        60,
        "the first evaluation fills the caches"
    );
    let mut bridge = Vec::with_capacity(CHANGESETS);
    let mut direct = Vec::with_capacity(CHANGESETS);
    let runs_before = worktree.git_runs();
    for _ in 0..CHANGESETS {
        let started = Instant::now();
        let out = Command::new("git")
            .args(["--no-optional-locks", "-C"])
            .arg(repo.path())
            .args(["status", "--porcelain=v2", "-z", "--untracked-files=all"])
            .output()
            .expect("git status");
        assert!(out.status.success());
        direct.push(started.elapsed());
        let started = Instant::now();
        build();
        bridge.push(started.elapsed());
    }
    let per_evaluation = (worktree.git_runs() - runs_before) as f64 / CHANGESETS as f64;
    let (bridge, direct) = (median(bridge), median(direct));
    eprintln!(
        "changeset of 60 changed files in 500 (median of {CHANGESETS}, caches warm): {:.2} ms; one \
         `git status --porcelain=v2` (floor) {:.2} ms; ratio {:.2}; git processes per evaluation {per_evaluation:.1}",
        ms(bridge),
        ms(direct),
        ms(bridge) / ms(direct),
    );
}
