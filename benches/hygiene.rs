//! Benchmark of the hygiene provider on a 10,000-file changeset, against a floor measured in the
//! same run, printed as ratios.
//!
//! Run with `cargo bench -p asp-bridge --bench hygiene` (or `scripts/bench.sh` for every benchmark).
//! A repository of 10,000 committed text files, every one of them edited (so 20,000 blobs, a few
//! hundred findings):
//!
//! - provider: a warm `check/evaluate` of the whole changeset sent straight to
//!   `asp-bridge provider hygiene`, its `workspace/readBlob` callbacks served from memory by the
//!   bench, then the provider's peak resident memory (`wait4`) once it has exited;
//! - through the host: the same changeset as `host/evaluateChangeset` to `asp-bridge host serve`
//!   (intake: every after blob read and hashed from the working tree, every before blob from git),
//!   its first (cold) evaluation and a warm one, then the host's peak resident memory;
//! - floor: `git diff --numstat HEAD` in the same repository, which reads both sides of every
//!   changed file and diffs them; its time and peak resident memory. Interleaved; medians.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpc_peer::peer::NoRequests;
use serde_json::{Value, json};
use test_support::git::Repo;

#[path = "peers.rs"]
mod peers;
use peers::{Blobs, Child, call};
#[path = "rusage.rs"]
mod rusage;

const BRIDGE: &str = env!("CARGO_BIN_EXE_asp-bridge");
const FILES: usize = 10_000;
/// Rounds, unless the command line names another count (`-- 1`).
const ROUNDS: usize = 3;
/// How long any one call may take.
const DEADLINE: Duration = Duration::from_secs(600);

/// The text of file `i`, before and after the edit: 40 lines; every 50th file gains trailing
/// whitespace on a changed line, every 500th a conflict marker.
fn text(i: usize, edited: bool) -> String {
    let mut text: String = (0..40)
        .map(|n| format!("line {n} of file {i}: some ordinary text\n"))
        .collect();
    if edited {
        text.push_str(&format!("edited line of file {i}\n"));
        if i.is_multiple_of(50) {
            text.push_str("trailing space \n");
        }
        if i.is_multiple_of(500) {
            text.push_str("<<<<<<< HEAD\n");
        }
    }
    text
}

/// The bench's repository: [`FILES`] committed files, every one of them edited since.
fn repository() -> Repo {
    let repo = Repo::init();
    let path = |i: usize| format!("d{}/f{i}.txt", i / 100);
    for i in 0..FILES {
        repo.write(&path(i), &text(i, false));
    }
    repo.commit();
    for i in 0..FILES {
        repo.write(&path(i), &text(i, true));
    }
    repo
}

/// `git diff --numstat HEAD`: wall time and peak resident set (KiB).
fn floor(root: &Path) -> (Duration, u64) {
    rusage::measure(
        Command::new("git")
            .args(["--no-optional-locks", "-C"])
            .arg(root)
            .args(["diff", "--numstat", "HEAD"])
            .stderr(Stdio::null()),
    )
}

fn median<T: Ord + Copy>(mut samples: Vec<T>) -> T {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let repo = repository();
    let root = repo.root();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("host.toml");
    std::fs::write(&config, "[hygiene]\nenabled = true\n").expect("config");

    let rounds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(ROUNDS)
        .max(1);
    let mut floors = Vec::new();
    let mut providers = Vec::new();
    let mut hosts = Vec::new();
    let mut findings = (0, 0);
    // The host's first evaluation: the provider starts, and intake reads every before blob from git.
    let mut firsts = Vec::new();
    for _ in 0..rounds {
        floors.push(floor(&root));

        // Through the host: a fresh host, one warm-up evaluation (starts the provider, fills the
        // caches), then the timed one.
        let host = Child::spawn(
            BRIDGE,
            &peers::host_serve(&root, &config),
            Arc::new(NoRequests),
        );
        let evaluation = peers::evaluation(&host.peer, &root, DEADLINE).await;
        let changeset = &evaluation.changeset;
        assert_eq!(changeset["changes"].as_array().map_or(0, Vec::len), FILES);
        let evaluate = || {
            call(
                &host.peer,
                "host/evaluateChangeset",
                &evaluation.params,
                DEADLINE,
            )
        };
        let started = Instant::now();
        let verdict = evaluate().await;
        firsts.push(started.elapsed());
        let reasons: Vec<&Value> = verdict["coverage"]["degraded"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| &d["reason"])
            .collect();
        // The conflict markers are error-severity findings of required coverage: nothing else.
        assert!(
            reasons.iter().all(|r| *r == "blocking-diagnostic"),
            "{}",
            verdict["coverage"]
        );
        let started = Instant::now();
        let verdict = evaluate().await;
        let through = started.elapsed();
        findings.1 = verdict["findings"].as_array().map_or(0, Vec::len);
        hosts.push((through, host.finish().await));

        // Straight to a provider: blobs served from memory.
        let mut contents = HashMap::new();
        for i in 0..FILES {
            let change = &changeset["changes"][i];
            let path = change["path"].as_str().expect("path");
            let n: usize = path
                .rsplit_once("/f")
                .and_then(|(_, f)| f.strip_suffix(".txt"))
                .and_then(|n| n.parse().ok())
                .expect("a bench file");
            for (side, edited) in [("before", false), ("after", true)] {
                let id = change[side].as_str().expect("blob id").to_owned();
                contents.insert(id, text(n, edited));
            }
        }
        let provider = Child::spawn(
            BRIDGE,
            &["provider".to_owned(), "hygiene".to_owned()],
            Arc::new(Blobs(contents)),
        );
        let limits = json!({"wallclockMs": 600_000});
        let check =
            peers::open_provider(&provider.peer, &root, &evaluation, limits, DEADLINE).await;
        let warm = call(&provider.peer, "check/evaluate", &check, DEADLINE).await;
        assert_eq!(warm["status"], "complete", "{}", warm["coverage"]);
        let started = Instant::now();
        let assessment = call(&provider.peer, "check/evaluate", &check, DEADLINE).await;
        let direct = started.elapsed();
        findings.0 = assessment["diagnostics"].as_array().map_or(0, Vec::len);
        providers.push((direct, provider.finish().await));
    }
    let time = |runs: &[(Duration, u64)]| median(runs.iter().map(|r| r.0).collect());
    let peak = |runs: &[(Duration, u64)]| median(runs.iter().map(|r| r.1).collect());
    let (ft, fm) = (time(&floors), peak(&floors));
    eprintln!(
        "hygiene on a changeset of {FILES} edited files (20,000 blobs; median of {rounds}, interleaved); \
         floor: git diff --numstat HEAD {:.0} ms, peak {:.1} MiB",
        ms(ft),
        mib(fm)
    );
    eprintln!(
        "  through the embedded host, first (cold) evaluation: {:.0} ms (the provider starts; intake reads the before blobs from git)",
        ms(median(firsts))
    );
    for (name, runs, found) in [
        ("provider, blobs from memory", &providers, findings.0),
        ("through the embedded host  ", &hosts, findings.1),
    ] {
        let (t, m) = (time(runs), peak(runs));
        eprintln!(
            "  {name}: warm evaluation {:.0} ms ({found} findings), peak {:.1} MiB; ratio time {:.2}, memory {:.2}",
            ms(t),
            mib(m),
            ms(t) / ms(ft),
            mib(m) / mib(fm),
        );
    }
}
