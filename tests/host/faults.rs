//! With one required provider configured, each fault gives `indeterminate` (never `allow`) with
//! the matching reason in `coverage.degraded` and `receipt.failures`.

use serde_json::json;

use crate::support::{
    Config, Host, Provider, Repo, assert_fault_is_indeterminate, assert_indeterminate,
    evaluate_fault, evaluate_once, reasons, repo,
};

#[tokio::test]
async fn a_crash_during_evaluation_is_crashed() {
    assert_fault_is_indeterminate("crash", "interactive", "crashed", "crashed").await;
}

#[tokio::test]
async fn a_crash_during_initialize_is_crashed() {
    let (verdict, _) = evaluate_fault("crash-on-initialize", "interactive").await;
    assert_indeterminate(&verdict, "crashed");
}

#[tokio::test]
async fn a_hung_provider_times_out_and_is_cancelled() {
    let provider = Provider::fake("hang").timeout_ms(500);
    let (verdict, config) = evaluate_once(vec![provider], "changed\n", "interactive").await;
    assert_indeterminate(&verdict, "timed-out");
    assert_told_to_stop(&config);
}

#[tokio::test]
async fn a_provider_hung_in_initialize_times_out() {
    let provider = Provider::fake("hang-on-initialize").timeout_ms(500);
    let (verdict, _) = evaluate_once(vec![provider], "changed\n", "interactive").await;
    assert_indeterminate(&verdict, "timed-out");
}

#[tokio::test]
async fn each_non_complete_status_has_its_reason() {
    for (fault, reason) in [
        ("incomplete", "incomplete"),
        ("unsupported", "unsupported"),
        ("error-status", "error"),
        ("cancelled", "cancelled"),
        ("cancelled-reply", "cancelled"),
        ("no-check", "unsupported"),
    ] {
        let (verdict, _) = evaluate_fault(fault, "interactive").await;
        assert_indeterminate(&verdict, reason);
    }
}

#[tokio::test]
async fn a_provider_that_cannot_start_is_unavailable() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let mut provider = Provider::fake("none");
    provider.command = Some(vec!["/nonexistent/provider".into()]);
    let config = Config::new(&[provider]);
    let host = Host::start(repo.path(), &config);
    let status = host.status().await;
    assert_eq!(status["servers"][0]["state"], "unavailable");
    assert_eq!(status["host"]["state"], "degraded");
    assert_eq!(status["gates"]["interactive"]["available"], false);
    let verdict = host.evaluate("interactive").await;
    assert_indeterminate(&verdict, "unavailable");
    host.finish().await;
}

#[tokio::test]
async fn a_read_outside_the_request_is_refused_with_policy_and_not_covered() {
    let repo = Repo::new(&[("a.txt", "first\n"), ("secret", "s\n")]);
    repo.write("a.txt", "changed\n");
    let mut provider = Provider::fake("read-outside");
    provider.read = Some(r#"["**", "!secret"]"#);
    let config = Config::new(&[provider]);
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("interactive").await;
    assert_indeterminate(&verdict, "incomplete");
    host.finish().await;
    let record = config.record("fake");
    let refused = record
        .iter()
        .find(|r| r["event"] == "readBlob.refused")
        .expect("the outside read was refused");
    assert_eq!(refused["data"]["failClass"], "policy");
    let listed = record.iter().find(|r| r["event"] == "listTree").unwrap();
    let answer: serde_json::Value =
        serde_json::from_str(listed["data"]["answer"].as_str().unwrap()).unwrap();
    assert_eq!(
        answer["entries"],
        json!([]),
        "the tree is filtered by the grant"
    );
}

#[tokio::test]
async fn changeset_blob_ids_are_checked_against_the_workspace() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let (config, host) = Host::with_well_provider(repo.path());
    let mut changeset = host.changeset().await;
    changeset["changes"][0]["after"] = json!("blob:sha256:00");
    let verdict = host
        .evaluate_changeset("interactive", changeset.clone())
        .await;
    assert_eq!(verdict["decision"], "indeterminate");
    assert!(
        reasons(&verdict).iter().all(|r| r == "stale"),
        "{:#}",
        verdict["coverage"]
    );
    assert!(
        config
            .record("fake")
            .iter()
            .all(|r| r["event"] != "check/evaluate"),
        "no provider runs on a stale changeset"
    );

    changeset["baseline"] = json!({"rev": "git:tree:0123"});
    let verdict = host.evaluate_changeset("interactive", changeset).await;
    assert!(
        reasons(&verdict).iter().all(|r| r == "stale-baseline"),
        "{:#}",
        verdict["coverage"]
    );
    host.finish().await;
}

#[tokio::test]
async fn a_cancelled_evaluation_cancels_the_provider_request() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let provider = Provider::fake("hang").timeout_ms(600_000);
    let config = Config::new(&[provider]);
    let host = Host::start(repo.path(), &config);
    let changeset = host.changeset().await;
    let params = json!({"callSite": "interactive", "changeset": changeset});
    let options = rpc_peer::peer::CallOptions {
        timeout: Some(std::time::Duration::from_millis(800)),
        progress: None,
    };
    let outcome = host
        .peer
        .request_raw("host/evaluateChangeset", Some(&params), options)
        .await;
    assert!(
        outcome.is_err(),
        "the caller gave up and sent $/cancelRequest"
    );
    host.finish().await;
    assert_told_to_stop(&config);
}

/// The fake provider recorded that it was told to stop its evaluation.
fn assert_told_to_stop(config: &Config) {
    let record = config.record("fake");
    assert!(
        record
            .iter()
            .any(|r| r["event"] == "check/evaluate.cancelled"),
        "the provider is told to stop: {record:#?}"
    );
}

#[tokio::test]
async fn a_provider_requesting_more_read_globs_than_the_cap_is_refused_at_initialize() {
    let mut provider = Provider::fake("none");
    for i in 0..300 {
        provider
            .args
            .extend(["--read".into(), format!("src/{i}/**")]);
    }
    let (verdict, _) = evaluate_once(vec![provider], "changed\n", "interactive").await;
    assert_indeterminate(&verdict, "malformed");
    let failures = verdict["receipt"]["failures"].to_string();
    assert!(failures.contains("300 read globs"), "{failures}");
}

/// A provider sends 1,000 `workspace/readBlob` of a 2 MB blob of control characters (12 MB once
/// escaped, each answer just under the 12 MiB cap) and never reads its input. Every answer used
/// to be built and held while it waited for room (6 GiB and an abort); now an answer is built
/// only within the connection's byte budget. Watched while it runs, so a regression fails fast.
#[tokio::test]
async fn a_provider_that_floods_reads_and_stops_reading_costs_the_host_bounded_memory() {
    // About 110 MiB with the budget (64 MiB of answers, each copied once into its frame, plus the
    // host itself); 417 MiB and growing without it, even in a debug build.
    const BOUND_KIB: u64 = 320 << 10;
    let repo = repo();
    repo.write("a.txt", &"\u{1}".repeat(2_000_000));
    let config = Config::new(&[Provider::fake("flood-reads").timeout_ms(10_000)]);
    let host = Host::start(repo.path(), &config);
    let pid = host.child.id().expect("the host runs");
    let started = std::time::Instant::now();
    let verdict = {
        let evaluation = host.evaluate("interactive");
        tokio::pin!(evaluation);
        let mut watch = tokio::time::interval(std::time::Duration::from_millis(20));
        loop {
            tokio::select! {
                verdict = &mut evaluation => break verdict,
                _ = watch.tick() => {
                    let peak = test_support::process::peak_rss(pid) >> 10;
                    assert!(peak < BOUND_KIB, "host peak RSS {} MiB", peak >> 10);
                }
            }
        }
    };
    let elapsed = started.elapsed();
    let peak = test_support::process::peak_rss(pid) >> 10;
    assert!(peak > 0, "VmHWM is read");
    assert!(peak < BOUND_KIB, "host peak RSS {} MiB", peak >> 10);
    assert_eq!(verdict["decision"], "indeterminate", "{verdict:#}");
    assert_eq!(
        reasons(&verdict),
        ["timed-out"],
        "{:#}",
        verdict["coverage"]
    );
    assert!(
        elapsed < std::time::Duration::from_secs(30),
        "answered at the provider's deadline, not later: {elapsed:?}"
    );
    let waves = config
        .record("fake")
        .iter()
        .filter(|r| r["event"] == "flood.wave")
        .count();
    assert!(waves >= 1, "the provider flooded");
    eprintln!("host peak RSS {} MiB, answered in {elapsed:?}", peak >> 10);
    host.finish().await;
}
