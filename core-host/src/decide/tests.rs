//! The decision rules, one case each, with every envelope checked against the outer schema.

use serde_json::json;

use super::*;
use Role::{Optional, Required};

fn assessment(severity: &str) -> Value {
    json!({
        "status": "complete",
        "diagnostics": [{"code": "fake/x", "severity": severity, "source": "forged", "message": "m",
            "location": {"path": "a.txt"}, "fingerprint": "f"}],
        "validAsOf": {"baseline": {"rev": "git:tree:1"}, "changesetDigest": "sha256:c", "blobs": ["blob:sha256:aa"]},
    })
}

fn item(required: bool, outcome: Outcome) -> Item {
    crate::fuzzing::authorized_item("fake", required, outcome)
}

fn degraded(reason: &'static str) -> Outcome {
    Outcome::Degraded {
        reason: Reason::from_wire(reason).expect("a reason of the schema"),
        detail: "d".into(),
        state: Some(Lifecycle::Crashed),
        assessment: None,
    }
}

fn run(call_site: CallSite, items: &[Item]) -> Value {
    let baseline = json!({"rev": "git:tree:1", "stampedAt": "2026-01-01T00:00:00.000Z"});
    let verdict = decide(
        Request {
            call_site,
            request_digest: "sha256:r".into(),
            changeset_digest: "sha256:c",
            policy_digest: "sha256:p",
            baseline: &baseline,
            started: SystemTime::now(),
            host_degraded: Vec::new(),
        },
        items.to_vec(),
    );
    crate::schema::check_outer("evaluateChangesetResult", &verdict).unwrap();
    verdict
}

/// Whether the one provider of [`ran`] is required at the call site.
#[derive(Clone, Copy)]
enum Role {
    Required,
    Optional,
}

/// The verdict at `call_site` on one provider that ran and found one diagnostic of `severity`.
fn ran(call_site: CallSite, role: Role, severity: &str) -> Value {
    let required = matches!(role, Role::Required);
    run(
        call_site,
        &[item(required, Outcome::Ran(assessment(severity)))],
    )
}

fn reasons(verdict: &Value) -> Vec<&str> {
    test_support::strs(&verdict["coverage"]["degraded"], "reason")
}

#[test]
fn clean_required_coverage_allows_and_carries_the_findings() {
    let verdict = ran(CallSite::Interactive, Required, "warning");
    assert_eq!(verdict["decision"], "allow");
    assert_eq!(verdict["pass"], true);
    assert_eq!(verdict["coverage"]["ran"], json!(["fake"]));
    assert_eq!(verdict["coverage"]["exhaustive"], true);
    let finding = &verdict["findings"][0];
    assert_eq!(finding["disposition"], "advisory");
    assert_eq!(
        finding["diagnostic"]["source"], "fake",
        "the host stamps the source"
    );
    assert_eq!(finding["nextStepOrigin"], "synthesized");
}

#[test]
fn an_error_from_required_authorized_coverage_denies_with_blocking_diagnostic() {
    let verdict = ran(CallSite::Sweep, Required, "error");
    assert_eq!(verdict["decision"], "deny");
    assert_eq!(reasons(&verdict), ["blocking-diagnostic"]);
    assert_eq!(verdict["findings"][0]["disposition"], "gating");
    assert_eq!(
        verdict["receipt"]["failures"],
        verdict["coverage"]["degraded"]
    );
}

#[test]
fn an_optional_provider_cannot_deny_and_its_failure_stays_visible() {
    let verdict = ran(CallSite::Interactive, Optional, "error");
    assert_eq!(verdict["decision"], "allow");
    let verdict = run(CallSite::Interactive, &[item(false, degraded("crashed"))]);
    assert_eq!(verdict["decision"], "allow");
    assert_eq!(reasons(&verdict), ["optional-degraded"]);
}

#[test]
fn every_required_degradation_is_indeterminate_never_allow() {
    for reason in [
        "crashed",
        "timed-out",
        "malformed",
        "stale",
        "unsupported",
        "incomplete",
        "error",
        "cancelled",
        "skewed",
        "incompatible",
        "unavailable",
        "missing-required-provider",
        "missing-authority",
        "quarantined",
    ] {
        let verdict = run(CallSite::Interactive, &[item(true, degraded(reason))]);
        assert_eq!(verdict["decision"], "indeterminate", "{reason}");
        assert_eq!(reasons(&verdict), [reason]);
        assert_eq!(verdict["receipt"]["failures"][0]["reason"], reason);
        assert_eq!(verdict["coverage"]["required"], json!(["fake"]));
        assert_eq!(verdict["coverage"]["ran"], json!([]));
    }
}

#[test]
fn a_gate_is_indeterminate_with_insufficient_assurance_even_when_clean() {
    let verdict = ran(CallSite::Gate, Required, "info");
    assert_eq!(verdict["decision"], "indeterminate");
    assert_eq!(reasons(&verdict), ["insufficient-assurance"]);
    assert_eq!(verdict["assurance"]["mode"], "advisory");
    assert_eq!(
        verdict["receipt"]["assurance"]["transactionGuarantee"],
        "none"
    );
    assert_eq!(
        verdict["receipt"]["failures"][0]["reason"],
        "insufficient-assurance"
    );
}

/// An accepted `complete` answer whose coverage is `coverage`, with one diagnostic of `severity`.
fn complete_with(coverage: Value, severity: &str) -> Outcome {
    let mut answer = assessment(severity);
    answer["coverage"] = coverage;
    outcome_of(assessment::Accepted {
        status: "complete".into(),
        assessment: answer,
    })
}

#[test]
fn required_coverage_that_says_it_was_truncated_is_incomplete_never_allow() {
    let whole = json!({"degraded": [], "unsupported": [], "exhaustive": true, "truncated": false});
    let verdict = run(
        CallSite::Sweep,
        &[item(true, complete_with(whole.clone(), "info"))],
    );
    assert_eq!(verdict["decision"], "allow");
    for (key, value) in [
        ("truncated", json!(true)),
        ("exhaustive", json!(false)),
        (
            "degraded",
            json!([{"source": "fake", "reason": "incomplete"}]),
        ),
        (
            "unsupported",
            json!([{"source": "fake", "reason": "unsupported"}]),
        ),
    ] {
        let mut coverage = whole.clone();
        coverage[key] = value;
        let verdict = run(
            CallSite::Sweep,
            &[item(true, complete_with(coverage, "info"))],
        );
        assert_eq!(verdict["decision"], "indeterminate", "{key}");
        assert_eq!(reasons(&verdict), ["incomplete"], "{key}");
        assert_eq!(verdict["coverage"]["exhaustive"], false, "{key}");
        assert_eq!(verdict["coverage"]["ran"], json!([]), "{key}");
        assert_eq!(
            verdict["findings"].as_array().unwrap().len(),
            1,
            "its findings stay visible"
        );
    }
}

#[test]
fn past_the_host_cap_the_most_severe_findings_are_kept_and_the_rest_counted() {
    let mut answer = assessment("info");
    let note = answer["diagnostics"][0].clone();
    let mut key = note.clone();
    key["severity"] = json!("error");
    key["code"] = json!("fake/key");
    let mut diagnostics = vec![note; MAX_FINDINGS];
    diagnostics.push(key);
    answer["diagnostics"] = Value::from(diagnostics);
    let verdict = run(CallSite::Sweep, &[item(true, Outcome::Ran(answer))]);
    let findings = verdict["findings"].as_array().unwrap();
    assert_eq!(findings.len(), MAX_FINDINGS);
    assert!(
        findings
            .iter()
            .any(|f| f["diagnostic"]["code"] == "fake/key"),
        "the error is kept, a note is left out"
    );
    assert_eq!(verdict["decision"], "indeterminate");
    let degraded = &verdict["coverage"]["degraded"];
    assert!(
        degraded
            .to_string()
            .contains("1 more findings were left out"),
        "{degraded}"
    );
}
