//! `host/status`, `host/capabilities`, `host/authority/status` and `host/queryInspect`: what the
//! host is, what it can do, and with which providers, each with its receipt.

use std::time::{Duration, SystemTime};

use asp_wire::proto::{self, HostState, Lifecycle, PolicyActivation, ProviderRole};
use asp_wire::reason::Reason;
use serde_json::{Value, json};

use crate::config::CallSite;
use crate::host::Host;
use crate::plan::{self, TRUSTED_CONFIG};
use crate::policy::{POLICY_PATH, Policy};
use crate::provider::{Slot, View};
use crate::receipt::{self, Degradation, HOST_NAME, HOST_VERSION, ReceiptInput};
use crate::snapshot::{self, Baseline};

/// How long a status waits for providers still starting before it reports them as starting.
const STATUS_WAIT: Duration = Duration::from_secs(3);

/// The state every status-like answer is built from.
pub(crate) struct Snapshot {
    pub(crate) baseline: Baseline,
    pub(crate) policy: Policy,
    pub(crate) views: Vec<View>,
}

pub(crate) async fn snapshot(host: &Host) -> Result<Snapshot, String> {
    let (workspace, policies) = (host.workspace.clone(), host.policies.clone());
    let (baseline, moved, policy) = snapshot::hop(move || {
        let (baseline, moved) = workspace.refresh().map_err(|e| e.to_string())?;
        let policy = policies.load(&workspace, &baseline);
        Ok::<_, String>((baseline, moved, policy))
    })
    .join()
    .await
    .map_err(|e| e.to_string())??;
    if moved {
        for slot in &host.slots {
            slot.baseline_changed(&baseline).await;
        }
    }
    let _ = tokio::time::timeout(STATUS_WAIT, async {
        for slot in &host.slots {
            slot.settled().await;
        }
    })
    .await;
    let views = host.slots.iter().map(|s| s.view()).collect();
    Ok(Snapshot {
        baseline,
        policy,
        views,
    })
}

fn failure_of(slot: &Slot, view: &View) -> Option<Degradation> {
    view.failure.as_ref().map(|f| Degradation {
        requirement: Some(slot.spec.id.clone()),
        capability: Some("check"),
        provider_state: Some(f.lifecycle),
        ..Degradation::new(&slot.spec.id, f.reason, f.detail.clone())
    })
}

fn server(host: &Host, slot: &Slot, view: &View, policy: &Policy) -> Value {
    let granted = !slot.spec.required_for.is_empty();
    let degraded: Vec<Value> = failure_of(slot, view)
        .iter()
        .map(Degradation::to_value)
        .collect();
    let family = |capability: &str, advertised: bool, available: bool, degraded: Vec<Value>| {
        json!({"capability": capability, "advertised": advertised, "available": available,
               "lifecycleState": view.lifecycle, "degraded": degraded})
    };
    let origin = if let Some(row) = slot.spec.builtin {
        row.origin.to_owned()
    } else {
        match &host.config_source {
            Some(path) => format!("enrolled by {}", path.display()),
            None => "enrolled by the trusted configuration".to_owned(),
        }
    };
    let required_for: Vec<&str> = slot.spec.required_for.iter().map(|c| c.as_str()).collect();
    json!({
        "id": slot.spec.id,
        "roles": ["judge"],
        "role": if granted { ProviderRole::Required } else { ProviderRole::Optional },
        "category": if slot.spec.builtin.is_some() { json!("built-in") } else { json!("trusted-config") },
        "capabilities": ["check"],
        "authorityEvidence": {
            "identity": view.identity.as_ref().map_or(slot.spec.id.as_str(), |i| i.name.as_str()),
            "integrity": view.identity.as_ref().map_or("unknown", |i| i.integrity.as_str()),
            "conformance": "unverified",
            "isolation": "advisory",
            "authority": {"granted": granted, "requirement": if granted { TRUSTED_CONFIG } else { "none (optional)" }, "policyDigest": policy.digest},
        },
        "state": view.state,
        "lifecycleState": view.lifecycle,
        "enrollmentState": view.enrollment,
        "capabilityStates": {
            "inspect": family("inspect", false, false, Vec::new()),
            "check": family("check", view.advertised_check, view.available(), degraded),
            "edit": family("edit", false, false, Vec::new()),
        },
        "requiredFor": required_for,
        "manifestState": "missing",
        "accessExpectationsDeclared": false,
        "detail": detail(slot, origin),
    })
}

/// How a provider came to be here and what the configuration leaves out of what it is sent and
/// says (so `status` tells it before anything is evaluated).
fn detail(slot: &Slot, origin: String) -> String {
    let mut detail = format!(
        "{origin}; protocol {}; started as {}",
        slot.spec.protocol.as_str(),
        slot.spec.command[0]
    );
    if let Some(left_out) = slot.spec.leave_out.describe() {
        detail.push_str("; ");
        detail.push_str(&left_out);
    }
    detail
}

fn servers(host: &Host, snap: &Snapshot) -> Vec<Value> {
    host.slots
        .iter()
        .zip(&snap.views)
        .map(|(slot, view)| server(host, slot, view, &snap.policy))
        .collect()
}

/// Degradations of one call site, and its required providers.
fn gate(host: &Host, snap: &Snapshot, call_site: CallSite) -> (Value, Vec<Degradation>) {
    let entries = plan::plan(&host.slots, &snap.policy, call_site);
    let mut degraded = Vec::new();
    if let Some(reason) = &snap.policy.invalid {
        degraded.push(Degradation::new(
            POLICY_PATH,
            Reason::Malformed,
            reason.clone(),
        ));
    }
    if call_site == CallSite::Gate {
        degraded.push(Degradation {
            capability: Some("check"),
            ..Degradation::new(HOST_NAME, Reason::InsufficientAssurance, "the embedded host is advisory: it runs providers without a sandbox, so it can never satisfy a blocking gate")
        });
    }
    let mut required = Vec::new();
    for entry in entries.iter().filter(|e| e.required) {
        required.push(entry.source.clone());
        let failure = entry
            .failure
            .clone()
            .or_else(|| entry.slot.and_then(|i| snap.views[i].failure.clone()));
        if let Some(f) = failure {
            degraded.push(Degradation {
                requirement: Some(entry.requirement.clone()),
                capability: Some("check"),
                provider_state: Some(f.lifecycle),
                ..Degradation::new(&entry.source, f.reason, f.detail)
            });
        }
    }
    let capabilities: Vec<&str> = if required.is_empty() {
        Vec::new()
    } else {
        vec!["check"]
    };
    let value = json!({
        "available": degraded.is_empty(),
        "requiredProviders": required,
        "requiredCapabilities": capabilities,
        "degraded": degraded.iter().map(Degradation::to_value).collect::<Vec<_>>(),
    });
    (value, degraded)
}

fn capabilities(host: &Host, snap: &Snapshot) -> Value {
    let mut states = Vec::new();
    let mut degraded = Vec::new();
    for (slot, view) in host.slots.iter().zip(&snap.views) {
        let own: Vec<Value> = failure_of(slot, view)
            .iter()
            .map(Degradation::to_value)
            .collect();
        degraded.extend(own.iter().cloned());
        states.push(json!({
            "provider": slot.spec.id,
            "role": if slot.spec.required_for.is_empty() { ProviderRole::Optional } else { ProviderRole::Required },
            "capability": "check",
            "advertised": view.advertised_check,
            "available": view.available(),
            "lifecycleState": view.lifecycle,
            "degraded": own,
        }));
    }
    let required_for: Vec<&str> = CallSite::ALL
        .into_iter()
        .filter(|c| {
            plan::plan(&host.slots, &snap.policy, *c)
                .iter()
                .any(|e| e.required)
        })
        .map(CallSite::as_str)
        .collect();
    let none = |alias: &str| json!({"available": false, "providers": [], "requiredFor": [], "degraded": [], "capabilityStates": [], "legacyAliases": [alias]});
    json!({
        "inspect": none("sense"),
        "check": {
            "available": snap.views.iter().any(View::available),
            "providers": host.slots.iter().map(|s| s.spec.id.clone()).collect::<Vec<_>>(),
            "requiredFor": required_for,
            "degraded": degraded,
            "capabilityStates": states,
            "legacyAliases": ["judge"],
        },
        "edit": none("act"),
    })
}

/// Provider-level coverage for status-like receipts.
fn coverage(host: &Host, snap: &Snapshot) -> (Value, Vec<Value>) {
    let mut required = Vec::new();
    let mut ran = Vec::new();
    let mut degraded = Vec::new();
    for (slot, view) in host.slots.iter().zip(&snap.views) {
        if !slot.spec.required_for.is_empty() {
            required.push(slot.spec.id.clone());
        }
        if view.lifecycle == Lifecycle::Active {
            ran.push(slot.spec.id.clone());
        }
        if let Some(d) = failure_of(slot, view) {
            let d = if slot.spec.required_for.is_empty() {
                Degradation {
                    reason: Reason::OptionalDegraded,
                    detail: format!("{}: {}", d.reason, d.detail),
                    ..d
                }
            } else {
                d
            };
            degraded.push(d.to_value());
        }
    }
    if let Some(reason) = &snap.policy.invalid {
        degraded.push(Degradation::new(POLICY_PATH, Reason::Malformed, reason.clone()).to_value());
    }
    let coverage = json!({
        "exhaustive": degraded.is_empty(),
        "required": required,
        "enrolled": required,
        "ran": ran,
        "degraded": degraded,
    });
    (coverage, degraded)
}

fn status_receipt(
    host: &Host,
    snap: &Snapshot,
    kind: &'static str,
    family: &'static str,
    method: &str,
    params: &Value,
    started: SystemTime,
) -> Value {
    let (coverage, failures) = coverage(host, snap);
    let provenance = host
        .slots
        .iter()
        .zip(&snap.views)
        .filter_map(|(slot, view)| {
            view.identity
                .as_ref()
                .map(|i| plan::provenance(&slot.spec.id, i))
        })
        .collect();
    let authority = servers(host, snap)
        .iter()
        .map(|s| s["authorityEvidence"].clone())
        .collect();
    receipt::receipt(ReceiptInput {
        kind,
        capability_family: family,
        call_site: None,
        request_digest: receipt::request_digest(method, params),
        changeset_digest: None,
        provider_ids: host.slots.iter().map(|s| s.spec.id.clone()).collect(),
        provenance,
        policy_digest: &snap.policy.digest,
        baseline: &snap.baseline.value,
        valid_as_of: json!({"rev": snap.baseline.rev()}),
        coverage,
        authority,
        failures,
        started,
    })
}

pub(crate) fn status(host: &Host, snap: &Snapshot, params: &Value, started: SystemTime) -> Value {
    let mut gates = serde_json::Map::new();
    let mut degraded_advisory = false;
    for call_site in CallSite::ALL {
        let (value, degraded) = gate(host, snap, call_site);
        if call_site != CallSite::Gate && !degraded.is_empty() {
            degraded_advisory = true;
        }
        gates.insert(call_site.as_str().into(), value);
    }
    let state = if degraded_advisory || snap.policy.invalid.is_some() {
        HostState::Degraded
    } else {
        HostState::Ready
    };
    json!({
        "host": {"name": HOST_NAME, "version": HOST_VERSION, "outerProtocol": "asp-outer/1.0", "state": state,
                 "bindingCandidate": "json-rpc-stdio"},
        "workspace": {"root": host.workspace.root().to_string_lossy(), "baseline": snap.baseline.value, "validAsOf": snap.baseline.value},
        "policy": {
            "source": snap.policy.source,
            "activation": if snap.policy.invalid.is_some() { PolicyActivation::Rejected } else { PolicyActivation::Active },
            "policyDigest": snap.policy.digest,
            "localOverride": {"present": false, "path": null, "authorityEffect": "none",
                "detail": "this host reads no local override; providers come only from the trusted configuration"},
        },
        "servers": servers(host, snap),
        "gates": gates,
        "capabilities": capabilities(host, snap),
        "assuranceCapabilities": ["advisory"],
        "receipt": status_receipt(host, snap, "status", "check", proto::STATUS, params, started),
    })
}

pub(crate) fn capabilities_result(
    host: &Host,
    snap: &Snapshot,
    params: &Value,
    started: SystemTime,
) -> Value {
    let (coverage, _) = coverage(host, snap);
    let mut coverage = coverage;
    if let Some(map) = coverage.as_object_mut() {
        map.remove("exhaustive");
    }
    json!({
        "capabilities": capabilities(host, snap),
        "sources": servers(host, snap),
        "coverage": coverage,
        "legacyRoles": {"sense": false, "judge": true, "act": false},
        "receipt": status_receipt(host, snap, "capabilities", "check", proto::CAPABILITIES, params, started),
    })
}

pub(crate) fn authority_status(
    host: &Host,
    snap: &Snapshot,
    params: &Value,
    started: SystemTime,
) -> Value {
    json!({
        "policyActivation": "base-active",
        "policyDigest": snap.policy.digest,
        "providers": servers(host, snap),
        "receipt": status_receipt(host, snap, "authority-status", "check", proto::AUTHORITY_STATUS, params, started),
    })
}

pub(crate) fn query_inspect(
    host: &Host,
    snap: &Snapshot,
    params: &Value,
    started: SystemTime,
) -> Value {
    let unsupported = Degradation {
        capability: Some("inspect"),
        ..Degradation::new(
            HOST_NAME,
            Reason::Unsupported,
            "no enrolled provider offers inspect; this host answers status, capabilities and check evaluations",
        )
    };
    let coverage = json!({"exhaustive": false, "required": [], "enrolled": [], "ran": [], "degraded": [unsupported.to_value()]});
    let receipt = receipt::receipt(ReceiptInput {
        kind: "inspect",
        capability_family: "inspect",
        call_site: params["callSite"].as_str().and_then(CallSite::parse),
        request_digest: receipt::request_digest(proto::QUERY_INSPECT, params),
        changeset_digest: None,
        provider_ids: Vec::new(),
        provenance: Vec::new(),
        policy_digest: &snap.policy.digest,
        baseline: &snap.baseline.value,
        valid_as_of: json!({"rev": snap.baseline.rev()}),
        coverage: coverage.clone(),
        authority: Vec::new(),
        failures: vec![unsupported.to_value()],
        started,
    });
    let _ = host;
    json!({
        "data": {"results": []},
        "validAsOf": {"rev": snap.baseline.rev()},
        "coverage": {"required": [], "enrolled": [], "ran": [], "degraded": [unsupported.to_value()]},
        "receipt": receipt,
    })
}
