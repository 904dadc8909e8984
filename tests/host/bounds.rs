//! Hostile sizes sent to the host: a path named many times, an intake that cannot finish within the
//! request's budget, a changeset of many large files (the host's peak memory stays bounded).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Config, Host, Provider, Repo};

/// A changeset creating `paths`, each with a made-up blob id (intake still reads every file to
/// check it).
fn creating(baseline: &Value, paths: &[String]) -> Value {
    let id = format!("blob:sha256:{}", "0".repeat(64));
    let changes: Vec<Value> = paths
        .iter()
        .map(|p| json!({"path": p, "kind": "create", "after": id}))
        .collect();
    json!({"baseline": baseline, "changes": changes})
}

/// Makes `path` in `repo` a sparse file of `size` bytes (no disk used, but all to read and hash).
fn sparse(repo: &Repo, path: &str, size: u64) {
    let file = std::fs::File::create(repo.path().join(path)).unwrap();
    file.set_len(size).unwrap();
}

async fn baseline(host: &Host) -> Value {
    host.status().await["workspace"]["baseline"].clone()
}

#[tokio::test]
async fn a_path_named_forty_times_in_a_changeset_is_read_once() {
    let repo = Repo::new(&[("a.txt", "first\n")]);
    sparse(&repo, "big", 256 << 20);
    let (_config, host) = Host::with_well_provider(repo.path());
    let changeset = creating(&baseline(&host).await, &vec!["big".to_owned(); 40]);
    let began = Instant::now();
    let params = json!({"callSite": "interactive", "changeset": changeset, "timeoutMs": 60_000});
    let verdict = host.call("host/evaluateChangeset", params).await.unwrap();
    let took = began.elapsed();
    // One read of 256 MiB, where each of the 40 changes read it (10 GiB, tens of seconds).
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    assert_eq!(verdict["decision"], "indeterminate", "{verdict:#}");
    let degraded = verdict["coverage"]["degraded"].to_string();
    assert!(
        degraded.contains("does not match the working tree"),
        "{degraded}"
    );
    host.finish().await;
}

#[tokio::test]
async fn an_intake_that_cannot_finish_within_the_budget_is_answered_soon_after_the_deadline() {
    let repo = Repo::new(&[("a.txt", "first\n")]);
    let paths: Vec<String> = (0..40).map(|i| format!("big{i}")).collect();
    for path in &paths {
        sparse(&repo, path, 1 << 30);
    }
    let (_config, host) = Host::with_well_provider(repo.path());
    let changeset = creating(&baseline(&host).await, &paths);
    let began = Instant::now();
    let params = json!({"callSite": "interactive", "changeset": changeset, "timeoutMs": 2000});
    let verdict = host.call("host/evaluateChangeset", params).await.unwrap();
    let took = began.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "answered after {took:?} for a budget of 2 s"
    );
    assert_eq!(verdict["decision"], "indeterminate", "{verdict:#}");
    let degraded = verdict["coverage"]["degraded"].to_string();
    assert!(degraded.contains("timed-out"), "{degraded}");
    assert!(degraded.contains("deadline passed"), "{degraded}");
    host.finish().await;
}

/// The peak resident memory of process `pid`, in bytes (`VmHWM`).
#[cfg(target_os = "linux")]
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kib * 1024
}

/// Elsewhere (no `/proc`): its resident memory now, which its peak bounds from above.
#[cfg(not(target_os = "linux"))]
fn peak_rss(pid: u32) -> u64 {
    test_support::process::peak_rss(pid)
}

#[tokio::test]
async fn a_changeset_of_many_large_files_keeps_the_hosts_memory_bounded() {
    const FILES: usize = 24;
    const SIZE: usize = 7 << 20;
    let repo = Repo::new(&[("a.txt", "first\n")]);
    let line = "x".repeat(63) + "\n";
    let text = line.repeat(SIZE / line.len() - 1);
    for i in 0..FILES {
        // Each file its own content, so that no two share a blob.
        let first = format!("{i:063}\n");
        std::fs::write(repo.path().join(format!("large{i}.txt")), first + &text).unwrap();
    }
    // A debug build serialises 420 MiB of JSON slowly.
    let config = Config::new(&[Provider::fake("none").timeout_ms(300_000)]);
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("interactive").await;
    let pid = host.child.id().expect("the host runs");
    let peak = peak_rss(pid);
    host.finish().await;
    // The provider read every file through the host.
    let reads = config
        .record("fake")
        .iter()
        .filter(|r| r["event"] == "readBlob.ok")
        .count();
    assert_eq!(reads, FILES, "{verdict:#}");
    // 24 files of 7 MiB are 168 MiB; intake keeps at most 32 MiB of them.
    assert!(
        peak < 128 << 20,
        "the host's peak RSS was {} MiB",
        peak >> 20
    );
}
