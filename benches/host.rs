//! Benchmark of the embedded host against a floor measured in the same run, printed as a ratio.
//!
//! Run with `cargo bench -p asp-bridge --bench host` (or `scripts/bench.sh` for every benchmark).
//! Warm `host/evaluateChangeset` calls through `asp-bridge host serve` with the fake provider
//! enrolled, vs warm `check/evaluate` calls straight to another fake provider process over the same
//! kind of pipe, with the callbacks it makes (`workspace/readBlob`) served by the floor client
//! from memory; interleaved call by call; p50, p99, overhead. Also one bare round trip to the
//! provider process (a call it refuses at once): the host runs in a process of its own, so each
//! call through it crosses to it and back once more than the direct call, and the second ratio
//! counts that crossing in the floor. Both ratios are printed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpc_peer::peer::NoRequests;
use serde_json::json;
use test_support::git::Repo;

#[path = "peers.rs"]
mod peers;
use peers::{Blobs, Child, call, within};
#[path = "rusage.rs"]
#[allow(dead_code, reason = "only wait4 is used here")]
mod rusage;

const BRIDGE: &str = env!("CARGO_BIN_EXE_asp-bridge");
/// Calls measured, unless the command line names another count (`-- 5000`, e.g. to profile).
const CALLS: usize = 300;
const WARM_UP: usize = 20;
/// How long any one call may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// The fake provider (package `fake-provider`, built beside the bridge).
fn fake() -> &'static str {
    test_support::fake_provider_bin(BRIDGE)
        .to_str()
        .expect("a UTF-8 path")
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

#[tokio::main]
async fn main() {
    let workspace = Repo::new(&[("a.txt", "first\n")]);
    let text = "second line FAKE-WARNING\n";
    workspace.write("a.txt", text);
    let repo = workspace.root();
    // Untracked in the working tree: the changeset carries it beside a.txt.
    let config = repo.join("host.toml");
    std::fs::write(
        &config,
        format!("[hygiene]\nenabled = false\n[[provider]]\nid = \"fake\"\ncommand = [{:?}]\nrequired-for = [\"interactive\"]\n", fake()),
    )
    .expect("config");

    let host_child = Child::spawn(
        BRIDGE,
        &peers::host_serve(&repo, &config),
        Arc::new(NoRequests),
    );
    let host = host_child.peer.clone();
    let evaluation = peers::evaluation(&host, &repo, DEADLINE).await;
    let after = evaluation.changeset["changes"][0]["after"]
        .as_str()
        .expect("after")
        .to_owned();
    let provider_child = Child::spawn(
        fake(),
        &[],
        Arc::new(Blobs(HashMap::from([(after, text.to_owned())]))),
    );
    let provider = provider_child.peer.clone();
    let check = peers::open_provider(&provider, &repo, &evaluation, json!({}), DEADLINE).await;

    let calls = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(CALLS)
        .max(1);
    let (mut through, mut direct, mut crossing) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARM_UP + calls {
        let started = Instant::now();
        let verdict = call(
            &host,
            "host/evaluateChangeset",
            &evaluation.params,
            DEADLINE,
        )
        .await;
        let host_time = started.elapsed();
        assert_eq!(verdict["decision"], "allow", "{verdict}");
        let started = Instant::now();
        let assessment = call(&provider, "check/evaluate", &check, DEADLINE).await;
        let direct_time = started.elapsed();
        assert_eq!(assessment["status"], "complete");
        // A call the provider answers at once (an unknown method): the price of one round trip
        // to another process, which the host, a process of its own by design, adds to each call.
        let started = Instant::now();
        let unknown = provider
            .request_raw("bench/roundTrip", Some(&json!({})), within(DEADLINE))
            .await;
        let crossing_time = started.elapsed();
        assert!(unknown.is_err(), "an unknown method is refused");
        if i >= WARM_UP {
            through.push(host_time);
            direct.push(direct_time);
            crossing.push(crossing_time);
        }
    }
    through.sort();
    direct.sort();
    crossing.sort();
    let (h50, d50, c50) = (
        quantile(&through, 0.5),
        quantile(&direct, 0.5),
        quantile(&crossing, 0.5),
    );
    eprintln!(
        "embedded host: warm host/evaluateChangeset vs direct check/evaluate to the same fake provider ({calls} calls, interleaved)"
    );
    eprintln!(
        "  through the host  p50 {h50:>10.2?}  p99 {:>10.2?}",
        quantile(&through, 0.99)
    );
    eprintln!(
        "  direct            p50 {d50:>10.2?}  p99 {:>10.2?}",
        quantile(&direct, 0.99)
    );
    eprintln!(
        "  one round trip    p50 {c50:>10.2?}  p99 {:>10.2?}  (an unknown method to the provider)",
        quantile(&crossing, 0.99)
    );
    eprintln!(
        "  ratio p50 {:.2}x, overhead p50 {:.2?}",
        h50.as_secs_f64() / d50.as_secs_f64(),
        h50.saturating_sub(d50)
    );
    eprintln!(
        "  with the host's own round trip in the floor: ratio p50 {:.2}x, overhead p50 {:.2?}",
        h50.as_secs_f64() / (d50 + c50).as_secs_f64(),
        h50.saturating_sub(d50 + c50)
    );
    host_child.finish().await;
    provider_child.finish().await;
}
