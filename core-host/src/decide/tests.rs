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
        reason,
        detail: "d".into(),
        state: Some("crashed"),
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
        items,
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
