//! One test per conformance requirement that applies to a host (`CORE-*`), through the real
//! `asp-bridge host serve` and the fake provider.

use serde_json::{Value, json};

use crate::support::{
    Config, Host, Provider, Repo, assert_fault_is_indeterminate, assert_indeterminate,
    evaluate_fault, evaluate_once, reasons, repo, valid, well_host,
};

/// A repository policy whose one requirement, `checks`, pins provider `pin_id` (its identity and
/// integrity) at one of `assurance`, for every call site.
fn policy(pin_id: &str, identity: &str, integrity: &str, assurance: &[&str]) -> Value {
    json!({
        "aspVersion": "asp/1.0",
        "requirements": [{
            "id": "checks",
            "capabilities": ["check"],
            "assurance": assurance,
            "authority": {"providers": [{"id": pin_id, "version": "1.0.0", "identity": identity,
                "integrity": integrity, "conformance": "asp-core-v1.0"}]}
        }],
        "gates": {
            "interactive": {"requiredRequirements": ["checks"], "optionalRequirements": []},
            "gate": {"requiredRequirements": ["checks"], "optionalRequirements": []},
            "sweep": {"requiredRequirements": ["checks"], "optionalRequirements": []}
        },
        "policy": {"policyChangeActivation": "base-policy-two-phase",
            "candidatePolicyAuthority": "trusted-base-or-organization-floor",
            "missingHost": {"interactive": "warn-open", "gate": "fail-closed", "sweep": "warn-open"},
            "authorityModel": "explicit-pinned-provider"}
    })
}

/// The policy pinning the fake provider by the fingerprint it reports, at one of `assurance`.
fn fake_pinned(assurance: &[&str]) -> Value {
    policy(
        "fake",
        "fake-provider",
        "sha256:fake-fake-provider",
        assurance,
    )
}

fn commit_policy(repo: &Repo, policy: &Value) {
    repo.write(
        ".asp/asp.json",
        &serde_json::to_string_pretty(policy).unwrap(),
    );
    repo.commit();
}

/// The host with the fake provider on a repository that committed `policy`, then changed `a.txt`
/// to `text`; the repository and the configuration last as long as the host is used.
fn under_policy(policy: &Value, text: &str) -> (Repo, Config, Host) {
    let repo = repo();
    commit_policy(&repo, policy);
    repo.write("a.txt", text);
    let (config, host) = Host::with_well_provider(repo.path());
    (repo, config, host)
}

#[tokio::test]
async fn core_host_status() {
    let (_repo, _config, host) = well_host();
    let status = host.status().await;
    assert_eq!(status["host"]["outerProtocol"], "asp-outer/1.0");
    assert_eq!(status["host"]["state"], "ready", "{status:#}");
    assert!(
        status["workspace"]["baseline"]["rev"]
            .as_str()
            .unwrap()
            .starts_with("git:tree:")
    );
    assert_eq!(status["policy"]["source"], "default (no .asp/asp.json)");
    assert_eq!(status["policy"]["activation"], "active");
    assert!(
        status["policy"]["policyDigest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let server = &status["servers"][0];
    assert_eq!(server["id"], "fake");
    assert_eq!(server["lifecycleState"], "active");
    assert_eq!(server["state"], "ready");
    assert_eq!(server["requiredFor"], json!(["interactive", "sweep"]));
    assert_eq!(status["gates"]["interactive"]["available"], true);
    assert_eq!(
        status["gates"]["interactive"]["requiredProviders"],
        json!(["fake"])
    );
    assert_eq!(
        status["gates"]["gate"]["available"], false,
        "an advisory host never offers the gate"
    );
    assert_eq!(
        status["gates"]["gate"]["degraded"][0]["reason"],
        "insufficient-assurance"
    );
    assert_eq!(status["assuranceCapabilities"], json!(["advisory"]));
    let receipt = &status["receipt"];
    assert_eq!(receipt["kind"], "status");
    assert_eq!(receipt["assurance"]["mode"], "advisory");
    assert_eq!(receipt["privateOnly"], true);
    assert_eq!(receipt["trustArtifact"], false);
    assert_eq!(
        receipt["providerProvenance"][0]["identity"],
        "fake-provider"
    );
    host.finish().await;
}

#[tokio::test]
async fn core_host_capabilities() {
    let (_repo, _config, host) = well_host();
    host.status().await;
    let caps = host.call("host/capabilities", json!({})).await.unwrap();
    valid("capabilitiesResult", &caps);
    assert_eq!(caps["capabilities"]["check"]["available"], true);
    assert_eq!(caps["capabilities"]["check"]["providers"], json!(["fake"]));
    assert_eq!(caps["capabilities"]["inspect"]["available"], false);
    assert_eq!(caps["capabilities"]["edit"]["available"], false);
    assert_eq!(caps["coverage"]["required"], json!(["fake"]));
    assert_eq!(caps["coverage"]["enrolled"], caps["coverage"]["required"]);
    assert_eq!(caps["coverage"]["ran"], json!(["fake"]));
    assert_eq!(caps["coverage"]["degraded"], json!([]));
    assert_eq!(caps["receipt"]["kind"], "capabilities");
    let authority = host.call("host/authority/status", json!({})).await.unwrap();
    valid("authorityStatusResult", &authority);
    assert_eq!(
        authority["providers"][0]["authorityEvidence"]["authority"]["requirement"],
        "trusted-config"
    );
    host.finish().await;
}

#[tokio::test]
async fn core_host_evaluate() {
    let (repo, _config, host) = well_host();

    repo.write("a.txt", "clean change\n");
    let allow = host.evaluate("interactive").await;
    assert_eq!(allow["decision"], "allow", "{allow:#}");
    assert_eq!(allow["coverage"]["ran"], json!(["fake"]));
    assert_eq!(allow["coverage"]["exhaustive"], true);
    assert_eq!(allow["receipt"]["kind"], "evaluate");
    assert_eq!(allow["receipt"]["providerIds"], json!(["fake"]));
    assert!(
        allow["changesetDigest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    repo.write("a.txt", "one\nFAKE-WARNING here\n");
    repo.write("new.txt", "x FAKE-ERROR\n");
    let deny = host.evaluate("sweep").await;
    assert_eq!(deny["decision"], "deny", "{deny:#}");
    assert_eq!(reasons(&deny), ["blocking-diagnostic"]);
    let findings = deny["findings"].as_array().unwrap();
    assert_eq!(
        findings.len(),
        2,
        "a clean run carries the provider's findings"
    );
    let error = findings
        .iter()
        .find(|f| f["diagnostic"]["severity"] == "error")
        .unwrap();
    assert_eq!(error["disposition"], "gating");
    assert_eq!(error["diagnostic"]["location"]["path"], "new.txt");
    assert_eq!(
        error["diagnostic"]["location"]["range"]["start"],
        json!({"line": 0, "char": 2})
    );
    assert_eq!(error["nextStep"], "remove the marker");
    let warning = findings
        .iter()
        .find(|f| f["diagnostic"]["severity"] == "warning")
        .unwrap();
    assert_eq!(warning["disposition"], "advisory");
    assert_eq!(
        warning["diagnostic"]["location"]["range"]["start"]["line"],
        1
    );

    let gate = host.evaluate("gate").await;
    assert_eq!(gate["decision"], "indeterminate");
    host.finish().await;
}

#[tokio::test]
async fn core_insufficient_assurance() {
    let (verdict, _) = evaluate_fault("none", "gate").await;
    assert_eq!(verdict["decision"], "indeterminate");
    assert_eq!(reasons(&verdict), ["insufficient-assurance"]);
    assert_eq!(
        verdict["assurance"]["mode"], "advisory",
        "the achieved assurance is reported"
    );
    assert_eq!(verdict["assurance"]["transactionGuarantee"], "none");
    assert_eq!(
        verdict["coverage"]["ran"],
        json!(["fake"]),
        "coverage itself was fresh and complete"
    );

    // A requirement asking for gated assurance cannot be met on an advisory call site either.
    let (_repo, _config, host) = under_policy(&fake_pinned(&["gated"]), "changed\n");
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "indeterminate");
    assert_eq!(reasons(&verdict), ["insufficient-assurance"]);
    host.finish().await;
}

#[tokio::test]
async fn core_missing_required_provider() {
    let absent = policy("absent", "absent", "sha256:0", &["advisory"]);
    let (_repo, _config, host) = under_policy(&absent, "changed\n");
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "indeterminate");
    let degraded = verdict["coverage"]["degraded"].as_array().unwrap();
    assert!(
        degraded
            .iter()
            .any(|d| d["reason"] == "missing-required-provider" && d["requirement"] == "checks"),
        "{degraded:#?}"
    );
    assert_eq!(verdict["coverage"]["required"], json!(["checks", "fake"]));
    host.finish().await;
}

#[tokio::test]
async fn core_missing_authority() {
    let unpinned = policy(
        "fake",
        "fake-provider",
        "sha256:not-its-digest",
        &["advisory"],
    );
    let (repo, _config, host) = under_policy(&unpinned, "FAKE-ERROR\n");
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "indeterminate", "{verdict:#}");
    assert_eq!(reasons(&verdict), ["missing-authority"]);
    assert_eq!(
        verdict["findings"][0]["disposition"], "advisory",
        "unauthorized findings do not gate"
    );
    assert_eq!(
        verdict["authorityEvidence"][0]["authority"]["granted"],
        false
    );

    // The same provider pinned by its reported fingerprint is authorized.
    commit_policy(&repo, &fake_pinned(&["advisory"]));
    repo.write("a.txt", "FAKE-ERROR again\n");
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "deny", "{verdict:#}");
    assert_eq!(
        verdict["authorityEvidence"][0]["authority"]["granted"],
        true
    );
    assert_eq!(
        verdict["authorityEvidence"][0]["authority"]["requirement"],
        "checks"
    );
    host.finish().await;
}

/// A branch evaluated against its base (`sarif --base`) carries its commits in the changeset: a
/// policy it committed is in force at HEAD, but it is still the branch's own change to the policy.
#[tokio::test]
async fn a_branch_that_commits_a_policy_change_cannot_authorize_itself() {
    let repo = repo();
    commit_policy(&repo, &fake_pinned(&["gated"]));
    repo.git(&["tag", "base"]);
    commit_policy(&repo, &fake_pinned(&["advisory"]));
    repo.write("a.txt", "changed\n");
    repo.commit();
    let (_config, host) = Host::with_well_provider(repo.path());
    let mut request =
        bridge_core::worktree::Evaluate::at(asp_wire::proto::AdvisoryCallSite::Interactive);
    request.base = bridge_core::worktree::Base::Rev("base".into());
    let plan = bridge_core::Worktree::new(repo.path())
        .plan(&request)
        .await
        .unwrap();
    let changeset = serde_json::to_value(plan.built.changeset).unwrap();
    let verdict = host.evaluate_changeset("interactive", changeset).await;
    assert_eq!(verdict["decision"], "indeterminate", "{verdict:#}");
    assert!(
        reasons(&verdict).contains(&"policy-self-authorization".to_owned()),
        "{:#}",
        verdict["coverage"]
    );
    host.finish().await;
}

/// An all-files sweep lists every tracked file as a `create` against the empty tree, the committed
/// policy among them, unchanged: listing the policy as it is in force does not change it.
#[tokio::test]
async fn a_sweep_that_lists_the_committed_policy_as_it_is_does_not_touch_it() {
    let (repo, _config, host) = under_policy(&fake_pinned(&["advisory"]), "first\n");
    let mut request = bridge_core::worktree::Evaluate::at(asp_wire::proto::AdvisoryCallSite::Sweep);
    request.scope = bridge_core::worktree::Scope::AllFiles;
    let plan = bridge_core::Worktree::new(repo.path())
        .plan(&request)
        .await
        .unwrap();
    let changeset = serde_json::to_value(plan.built.changeset).unwrap();
    let paths = test_support::strs(&changeset["changes"], "path");
    assert!(paths.contains(&".asp/asp.json"), "{paths:?}");
    let verdict = host.evaluate_changeset("sweep", changeset).await;
    assert_eq!(verdict["decision"], "allow", "{:#}", verdict["coverage"]);
    assert!(!reasons(&verdict).contains(&"policy-self-authorization".to_owned()));
    host.finish().await;
}

#[tokio::test]
async fn core_stale_valid_as_of() {
    for fault in ["stale-baseline", "stale-digest", "stale-blobs"] {
        let (verdict, _) = evaluate_fault(fault, "interactive").await;
        assert_indeterminate(&verdict, "stale");
    }
}

#[tokio::test]
async fn core_provider_forbidden_fields() {
    for fault in ["host-owned", "nested-host-owned"] {
        let (verdict, _) = evaluate_fault(fault, "interactive").await;
        assert_indeterminate(&verdict, "malformed");
        assert_eq!(
            verdict["findings"],
            json!([]),
            "nothing of a malformed answer is shown"
        );
    }
}

#[tokio::test]
async fn core_malformed_required_provider() {
    assert_fault_is_indeterminate("malformed", "sweep", "malformed", "malformed").await;
}

#[tokio::test]
async fn core_provider_skewed() {
    assert_fault_is_indeterminate("refuse-protocol", "interactive", "skewed", "incompatible").await;

    skewed_when_asp_0_1_is_refused().await;
}

/// An `asp/0.1` provider that refuses `asp/0.1` is skewed too: the host asked for the version the
/// configuration named.
async fn skewed_when_asp_0_1_is_refused() {
    let mut old = Provider::fake("refuse-protocol");
    old.protocol = "asp/0.1";
    let (verdict, config) = evaluate_once(vec![old], "changed\n", "interactive").await;
    assert_indeterminate(&verdict, "skewed");
    let record = config.record("fake");
    assert_eq!(record[0]["event"], "initialize", "{record:#?}");
    assert_eq!(record[0]["data"]["protocolVersion"], "asp/0.1");
}

/// A provider enrolled with `protocol = "asp/0.1"` is started through the compatibility layer:
/// `initialize` asks for asp/0.1, `check/evaluate` carries the call site and the configuration's keys
/// as params (opcore's `checks`), and its answer counts like any other.
#[tokio::test]
async fn core_provider_asp_0_1_is_enrolled_through_the_compatibility_layer() {
    let repo = repo();
    repo.write("a.txt", "FAKE-ERROR here\n");
    let mut old = Provider::fake("none");
    old.protocol = "asp/0.1";
    old.extra = "configuration = { checks = [\"typescript.types\"] }\n".into();
    let config = Config::new(&[old]);
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("sweep").await;
    assert_eq!(verdict["decision"], "deny", "{verdict:#}");
    assert_eq!(verdict["coverage"]["ran"], json!(["fake"]), "{verdict:#}");
    let status = host.status().await;
    assert_eq!(
        status["servers"][0]["enrollmentState"], "enrolled",
        "{status:#}"
    );
    host.finish().await;
    let record = config.record("fake");
    let initialize = record.iter().find(|r| r["event"] == "initialize").unwrap();
    assert_eq!(initialize["data"]["protocolVersion"], "asp/0.1");
    let evaluate = record
        .iter()
        .find(|r| r["event"] == "check/evaluate")
        .unwrap();
    assert_eq!(evaluate["data"]["callSite"], "sweep");
    assert_eq!(evaluate["data"]["checks"], json!(["typescript.types"]));
    assert!(
        evaluate["data"].get("configuration").is_none(),
        "{evaluate:#}"
    );
    assert!(evaluate["data"]["changesetDigest"].is_string());
}

#[tokio::test]
async fn core_host_initialize_contract_refusal() {
    let (verdict, config) = evaluate_fault("refuse-protocol", "interactive").await;
    assert_indeterminate(&verdict, "skewed");
    assert_eq!(
        verdict["receipt"]["providerProvenance"],
        json!([]),
        "no initialized provider provenance"
    );
    let record = config.record("fake");
    assert!(
        record
            .iter()
            .all(|r| r["event"] != "initialized" && r["event"] != "check/evaluate"),
        "{record:#?}"
    );
}

#[tokio::test]
async fn core_provider_fail_open() {
    // A health failure of a required provider on an advisory call site is visible, never allow.
    let (verdict, _) = evaluate_fault("error-reply", "interactive").await;
    assert_indeterminate(&verdict, "error");
    let detail = verdict["coverage"]["degraded"][0]["detail"]
        .as_str()
        .unwrap();
    assert!(detail.contains("health"), "{detail}");
    assert!(
        detail.contains("disk quota") && detail.contains("exceeded") && !detail.contains('\u{1b}'),
        "the provider's error.data.detail is kept, filtered: {detail}"
    );
}

#[tokio::test]
async fn core_required_coverage_visible() {
    let mut clean = Provider::fake("none");
    clean.id = "clean";
    let mut crashing = Provider::fake("crash");
    crashing.id = "crashing";
    let mut optional = Provider::fake("incomplete");
    optional.id = "optional";
    optional.required_for = "[]";
    let providers = vec![clean, crashing, optional];
    let (verdict, _) = evaluate_once(providers, "changed\n", "interactive").await;
    assert_eq!(verdict["decision"], "indeterminate");
    assert_eq!(
        verdict["coverage"]["required"],
        json!(["clean", "crashing"])
    );
    assert_eq!(verdict["coverage"]["ran"], json!(["clean"]));
    let degraded = verdict["coverage"]["degraded"].as_array().unwrap();
    let by: Vec<(&str, &str)> = degraded
        .iter()
        .map(|d| (d["source"].as_str().unwrap(), d["reason"].as_str().unwrap()))
        .collect();
    assert!(by.contains(&("crashing", "crashed")), "{by:?}");
    assert!(by.contains(&("optional", "optional-degraded")), "{by:?}");
    assert_eq!(
        verdict["receipt"]["failures"],
        verdict["coverage"]["degraded"]
    );
}

#[tokio::test]
async fn core_provider_quarantined() {
    // A provider that keeps failing to start is quarantined after repeated failures; it is then
    // reported as such and never allows.
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let mut provider = Provider::fake("crash-on-initialize");
    provider.restart_ms();
    let config = Config::new(&[provider]);
    let host = Host::start(repo.path(), &config);
    let mut last = Value::Null;
    for _ in 0..400 {
        last = host.evaluate("interactive").await;
        assert_eq!(last["decision"], "indeterminate");
        if reasons(&last) == ["quarantined"] {
            break;
        }
    }
    assert_indeterminate(&last, "quarantined");
    let status = host.status().await;
    assert_eq!(status["servers"][0]["state"], "quarantined");
    host.finish().await;
}

#[tokio::test]
async fn core_host_decision_authoritative() {
    // A provider that claims `decision: allow` does not decide: the host's envelope does.
    let providers = vec![Provider::fake("host-owned")];
    let (verdict, _) = evaluate_once(providers, "FAKE-ERROR\n", "interactive").await;
    assert_indeterminate(&verdict, "malformed");
    assert_eq!(verdict["receipt"]["host"]["name"], "asp-bridge-host");
    assert_eq!(verdict["receipt"]["kind"], "evaluate");
    assert_eq!(
        verdict["requestDigest"],
        verdict["receipt"]["requestDigest"]
    );
}
