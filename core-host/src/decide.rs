//! Decisions as the Core profile states them (`11-core-profile.md`, "Decision Rules").
//!
//! `allow` only when every required entry ran fresh, complete, well-formed and authorized, nothing
//! required is degraded, and no authorized gating finding remains; `deny` when such coverage finds
//! an error (reported as `blocking-diagnostic` too); `indeterminate` otherwise. A `gate` call site
//! is always `indeterminate` with `insufficient-assurance`: this host is advisory. Optional
//! degradation stays visible as `optional-degraded` without changing the decision.

use std::collections::BTreeSet;
use std::time::SystemTime;

use asp_wire::proto::Lifecycle;
use asp_wire::reason::Reason;
use serde_json::Value;

use crate::assessment;
use crate::config::CallSite;
use crate::receipt::{self, Degradation, HOST_NAME, ReceiptInput};

/// Cap on the findings of one decision; past it the most severe are kept and the rest counted in a
/// degradation. Above the hygiene provider's own cap (10,000), so that a provider's cut and the
/// host's are told apart.
pub(crate) const MAX_FINDINGS: usize = 20_000;

/// One coverage entry: a requirement (or a provider the configuration enrolled) and its outcome.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    /// The entry in `coverage.required` / `coverage.ran`.
    pub(crate) requirement: String,
    pub(crate) provider: String,
    pub(crate) required: bool,
    /// Whether an authority grant covers this provider for this requirement.
    pub(crate) authorized: bool,
    /// `authorityEvidence` of the provider for this requirement.
    pub(crate) authority: Value,
    /// `providerProvenance` when the provider was initialized.
    pub(crate) provenance: Option<Value>,
    pub(crate) outcome: Outcome,
}

#[derive(Clone, Debug)]
pub(crate) enum Outcome {
    /// A fresh, well-formed, complete Assessment.
    Ran(Value),
    /// Did not satisfy coverage; a well-formed fresh Assessment of another status is kept for
    /// its diagnostics.
    Degraded {
        reason: Reason,
        detail: String,
        state: Option<Lifecycle>,
        assessment: Option<Value>,
    },
}

/// The request being decided.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub(crate) call_site: CallSite,
    pub(crate) request_digest: String,
    pub(crate) changeset_digest: &'a str,
    pub(crate) policy_digest: &'a str,
    pub(crate) baseline: &'a Value,
    pub(crate) started: SystemTime,
    /// Degradations of the request itself (stale changeset, invalid policy, …).
    pub(crate) host_degraded: Vec<Degradation>,
}

/// The decision envelope (`verdict.schema.json`) for `request` given its coverage `items`, whose
/// diagnostics are moved into the decision's findings.
pub(crate) fn decide(request: Request<'_>, mut items: Vec<Item>) -> Value {
    let mut degraded = request.host_degraded.clone();
    if request.call_site == CallSite::Gate {
        degraded.push(Degradation {
            capability: Some("check"),
            ..Degradation::new(
                HOST_NAME,
                Reason::InsufficientAssurance,
                "the gate call site needs gated assurance; this embedded host achieves advisory only (providers run without a sandbox)",
            )
        });
    }
    let mut required = Vec::new();
    let mut ran = Vec::new();
    let mut blocking: BTreeSet<String> = BTreeSet::new();
    let mut blobs: BTreeSet<String> = BTreeSet::new();
    let mut authority = Vec::new();
    let mut provenance = Vec::new();
    // The diagnostics of every item, by the index of their item; only those kept become findings.
    let mut candidates: Vec<(usize, Value, bool)> = Vec::new();
    for (index, item) in items.iter_mut().enumerate() {
        if item.required && !required.contains(&item.requirement) {
            required.push(item.requirement.clone());
        }
        if let Some(p) = &item.provenance {
            provenance.push(p.clone());
        }
        let complete = matches!(item.outcome, Outcome::Ran(_));
        if let Outcome::Degraded {
            reason,
            detail,
            state,
            ..
        } = &item.outcome
        {
            degraded.push(degradation(item, *reason, detail, *state));
        }
        let assessment = match &mut item.outcome {
            Outcome::Ran(a) => Some(a),
            Outcome::Degraded { assessment, .. } => assessment.as_mut(),
        };
        let Some(assessment) = assessment else {
            continue;
        };
        if complete && !ran.contains(&item.requirement) {
            ran.push(item.requirement.clone());
        }
        authority.push(item.authority.clone());
        for blob in assessment["validAsOf"]["blobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            blobs.insert(blob.to_owned());
        }
        let Value::Array(diagnostics) = assessment["diagnostics"].take() else {
            continue;
        };
        for diagnostic in diagnostics {
            let gating =
                complete && item.required && item.authorized && diagnostic["severity"] == "error";
            if gating {
                blocking.insert(item.requirement.clone());
            }
            candidates.push((index, diagnostic, gating));
        }
    }
    let dropped = keep_most_severe(&mut candidates, MAX_FINDINGS);
    let findings: Vec<Value> = candidates
        .into_iter()
        .map(|(index, diagnostic, gating)| finding(&items[index], diagnostic, gating))
        .collect();
    if dropped > 0 {
        degraded.push(Degradation::new(
            HOST_NAME,
            Reason::Incomplete,
            format!(
                "{dropped} more findings were left out of this decision (at most {MAX_FINDINGS} are kept, the most severe first)"
            ),
        ));
    }
    let required_degraded = degraded
        .iter()
        .any(|d| d.reason != Reason::OptionalDegraded);
    let decision = if required_degraded {
        "indeterminate"
    } else if !blocking.is_empty() {
        for requirement in &blocking {
            degraded.push(Degradation {
                requirement: Some(requirement.clone()),
                capability: Some("check"),
                ..Degradation::new(
                    requirement,
                    Reason::BlockingDiagnostic,
                    "required coverage found an error-severity finding",
                )
            });
        }
        "deny"
    } else {
        "allow"
    };
    let exhaustive = degraded.is_empty() && required.iter().all(|r| ran.contains(r));
    let degraded: Vec<Value> = degraded.iter().map(Degradation::to_value).collect();
    // Built by moving the parts in (`json!` would serialise a copy of each); the receipt states
    // the same coverage, validity and authority, so those are cloned once for it.
    let required = Value::from(required);
    let coverage = object([
        ("exhaustive", Value::Bool(exhaustive)),
        ("enrolled", required.clone()),
        ("required", required),
        ("ran", Value::from(ran)),
        ("degraded", Value::Array(degraded.clone())),
    ]);
    let valid_as_of = object([
        ("rev", request.baseline["rev"].clone()),
        ("blobs", Value::from_iter(blobs)),
    ]);
    let provider_ids: Vec<String> = items.iter().map(|i| i.provider.clone()).collect();
    let receipt = receipt::receipt(ReceiptInput {
        kind: "evaluate",
        capability_family: "check",
        call_site: Some(request.call_site),
        request_digest: request.request_digest.clone(),
        changeset_digest: Some(request.changeset_digest),
        provider_ids,
        provenance,
        policy_digest: request.policy_digest,
        baseline: request.baseline,
        valid_as_of: valid_as_of.clone(),
        coverage: coverage.clone(),
        authority: authority.clone(),
        failures: degraded,
        started: request.started,
    });
    object([
        ("pass", Value::Bool(decision == "allow")),
        ("decision", Value::from(decision)),
        ("callSite", Value::from(request.call_site.as_str())),
        ("requestDigest", Value::from(request.request_digest)),
        ("changesetDigest", Value::from(request.changeset_digest)),
        ("findings", Value::Array(findings)),
        ("coverage", coverage),
        ("policyDigest", Value::from(request.policy_digest)),
        ("authorityEvidence", Value::Array(authority)),
        ("validAsOf", valid_as_of),
        ("assurance", receipt::assurance()),
        ("receipt", receipt),
    ])
}

/// Cuts `candidates` to `cap`, keeping the most severe (errors, then warnings, then the rest) in
/// their order; returns how many were left out.
fn keep_most_severe(candidates: &mut Vec<(usize, Value, bool)>, cap: usize) -> usize {
    let total = candidates.len();
    if total <= cap {
        return 0;
    }
    let rank = |diagnostic: &Value| match diagnostic["severity"].as_str() {
        Some("error") => 0,
        Some("warning") => 1,
        _ => 2,
    };
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| rank(&candidates[i].1));
    let mut kept = vec![false; total];
    for &i in &order[..cap] {
        kept[i] = true;
    }
    let mut index = 0;
    candidates.retain(|_| {
        index += 1;
        kept[index - 1]
    });
    total - cap
}

/// A JSON object of owned values.
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

fn degradation(item: &Item, reason: Reason, detail: &str, state: Option<Lifecycle>) -> Degradation {
    let (reason, detail) = if item.required {
        (reason, detail.to_owned())
    } else {
        (Reason::OptionalDegraded, format!("{reason}: {detail}"))
    };
    Degradation {
        requirement: Some(item.requirement.clone()),
        capability: Some("check"),
        provider_state: state,
        ..Degradation::new(&item.provider, reason, detail)
    }
}

/// A finding: the diagnostic with its source stamped by the host, authority and disposition.
fn finding(item: &Item, mut diagnostic: Value, gating: bool) -> Value {
    diagnostic["source"] = Value::from(item.provider.as_str());
    let (next_step, origin) = match (
        diagnostic["help"].as_str(),
        diagnostic["codeDescription"]["href"].as_str(),
    ) {
        (Some(help), _) if !help.trim().is_empty() => (help.to_owned(), "server"),
        (_, Some(href)) => (format!("see {href}"), "server"),
        _ => (
            format!(
                "fix the {} finding reported by {} in {}",
                diagnostic["code"].as_str().unwrap_or("reported"),
                item.provider,
                diagnostic["location"]["path"]
                    .as_str()
                    .filter(|path| !path.is_empty())
                    .unwrap_or("the project")
            ),
            "synthesized",
        ),
    };
    object([
        ("diagnostic", diagnostic),
        ("authority", item.authority.clone()),
        (
            "disposition",
            Value::from(if gating { "gating" } else { "advisory" }),
        ),
        ("nextStep", Value::from(next_step)),
        ("nextStepOrigin", Value::from(origin)),
    ])
}

/// An `Item` outcome for a checked answer: a complete run whose own coverage is whole. Any other
/// status degrades, and so does `complete` with coverage that says it is truncated, degraded,
/// unsupported or not exhaustive: a provider's `complete` never hides what it left out.
pub(crate) fn outcome_of(accepted: assessment::Accepted) -> Outcome {
    let short = match assessment::status_reason(&accepted.status) {
        Some(reason) => Some((
            reason,
            format!(
                "the provider returned an assessment with status {}{}",
                accepted.status,
                assessment::first_degraded(&accepted.assessment)
                    .map(|why| format!(": {why}"))
                    .unwrap_or_default()
            ),
        )),
        None => assessment::coverage_gap(&accepted.assessment).map(|gap| {
            (
                Reason::Incomplete,
                format!("the provider answered complete, but {gap}"),
            )
        }),
    };
    match short {
        None => Outcome::Ran(accepted.assessment),
        Some((reason, detail)) => Outcome::Degraded {
            reason,
            detail,
            state: Some(Lifecycle::Active),
            assessment: Some(accepted.assessment),
        },
    }
}

#[cfg(test)]
mod tests;
