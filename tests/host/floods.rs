//! Floods of findings through the real host and the built-in hygiene provider: the provider's
//! memory stays bounded and its work ends with the request it serves.

use std::time::{Duration, Instant};

use test_support::process::{command_line, cpu_time, descendants, peak_rss};

use crate::support::{Host, repo};

const MIB: u64 = 1 << 20;

#[tokio::test]
async fn sixteen_files_of_conflict_markers_cost_the_provider_little_and_end_with_the_request() {
    let repo = repo();
    // 16 files of 7 MiB of closing markers: each line a finding, about 15 million in all.
    let markers = ">>>>>>>\n".repeat((7 * MIB / 8) as usize);
    for i in 0..16 {
        repo.write(&format!("conflict-{i:02}.txt"), &format!("{i}\n{markers}"));
    }
    // Time enough to read 112 MiB through the callbacks in a debug build on a busy machine.
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("host.toml");
    std::fs::write(&file, "[hygiene]\ntimeout-ms = 110000\n").unwrap();
    let host = Host::start_with(repo.path(), &["--config", file.to_str().unwrap()]);
    let verdict = host.evaluate("interactive").await;
    let answered = Instant::now();
    let provider = descendants(host.child.id().unwrap())
        .into_iter()
        .find(|pid| command_line(*pid).contains("provider hygiene"))
        .expect("the hygiene provider runs");
    assert_eq!(
        verdict["decision"], "indeterminate",
        "capped: never an allow"
    );
    let findings = verdict["findings"].as_array().unwrap().len();
    assert_eq!(
        findings, 10_000,
        "the provider's cap, the most severe first"
    );
    // Before the caps applied while computing: 5.5 GiB and growing after the answer.
    let peak = peak_rss(provider);
    assert!(peak < 512 * MIB, "provider peak RSS {} MiB", peak / MIB);
    // Nothing of this request still runs: two seconds later the provider has used no CPU.
    let at_answer = cpu_time(provider);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = cpu_time(provider) - at_answer;
    assert!(
        after < Duration::from_millis(200),
        "{after:?} of CPU after the answer ({:?} ago)",
        answered.elapsed()
    );
    host.finish().await;
}
