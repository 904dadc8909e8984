//! One decision from the decisions on the batches of a sweep, so that a front end shows one answer
//! (SARIF: one run, as GitHub accepts one run per tool and category).
//!
//! - decision: the most severe of the batches': `deny`, then `indeterminate` (a value the bridge does
//!   not know counts as indeterminate and is kept as sent), then `allow`; `pass` only if every batch
//!   passed;
//! - findings: every batch's, in batch order; coverage: `required` and `enrolled` of any batch,
//!   `ran` only what ran in every batch, every degradation once, `exhaustive` only if every batch
//!   was;
//! - receipt: every batch's receipt kept whole under `batches`, the ids joined, failures merged;
//!   request and changeset digests are per request, so the merged decision has none (each batch's
//!   receipt has its own).

use std::collections::HashSet;
use std::hash::Hash;

use serde_json::{Value, json};

use asp_wire::proto::{Decision, DecisionKind, Degradation, Open, Receipt};

/// Severity order of decisions: a batch that denies makes the sweep deny.
fn rank(decision: &Open<DecisionKind>) -> u8 {
    match decision {
        Open::Known(DecisionKind::Deny) => 3,
        Open::Known(DecisionKind::Indeterminate) | Open::Other(_) => 2,
        Open::Known(DecisionKind::Allow) => 1,
    }
}

/// Appends the items `into` does not hold yet, in their order, each once. Sets, not a search of
/// `into` for each item: a sweep's `validAsOf.blobs` has an id for every file it read.
fn push_new<T: Eq + Hash + Clone>(into: &mut Vec<T>, items: &[T]) {
    let held: HashSet<&T> = into.iter().collect();
    let mut fresh = HashSet::new();
    let new: Vec<T> = items
        .iter()
        .filter(|item| !held.contains(item) && fresh.insert(*item))
        .cloned()
        .collect();
    into.extend(new);
}

fn same(a: &Degradation, b: &Degradation) -> bool {
    (&a.source, &a.reason, &a.detail, &a.requirement)
        == (&b.source, &b.reason, &b.detail, &b.requirement)
}

fn push_degradations(into: &mut Vec<Degradation>, items: &[Degradation]) {
    for item in items {
        if !into.iter().any(|d| same(d, item)) {
            into.push(item.clone());
        }
    }
}

/// The decisions of a sweep's batches as one. `decisions` must not be empty; one decision is
/// returned as it is.
pub(crate) fn merge(mut decisions: Vec<Decision>) -> Decision {
    if decisions.len() <= 1 {
        return decisions.pop().unwrap_or_else(empty);
    }
    // The first decision is the template of the merged one; what every batch has much of (its
    // findings, the blobs read, its receipt) is moved, not copied, and put back for the loop below.
    let first = &mut decisions[0];
    let parts = (
        std::mem::take(&mut first.findings),
        std::mem::take(&mut first.valid_as_of.blobs),
        std::mem::take(&mut first.receipt.raw),
    );
    let mut merged = first.clone();
    (first.findings, first.valid_as_of.blobs, first.receipt.raw) = parts;
    merged.decision = decisions
        .iter()
        .map(|d| &d.decision)
        .fold(None::<&Open<DecisionKind>>, |worst, d| match worst {
            Some(w) if rank(w) >= rank(d) => Some(w),
            _ => Some(d),
        })
        .cloned()
        .unwrap_or(Open::Known(DecisionKind::Indeterminate));
    merged.pass = decisions
        .iter()
        .map(|d| d.pass)
        .try_fold(true, |all, pass| pass.map(|p| all && p));
    merged.request_digest = None;
    merged.changeset_digest = None;
    merged.findings = Vec::new();
    merged.valid_as_of.blobs = Vec::new();
    let coverage = &mut merged.coverage;
    coverage.degraded = Vec::new();
    coverage.required = Vec::new();
    coverage.enrolled = Vec::new();
    coverage.exhaustive = decisions
        .iter()
        .map(|d| d.coverage.exhaustive)
        .try_fold(true, |all, e| e.map(|e| all && e));
    let mut receipts = Vec::with_capacity(decisions.len());
    let mut ids = Vec::with_capacity(decisions.len());
    let mut failures = Vec::new();
    for decision in &mut decisions {
        merged.findings.append(&mut decision.findings);
        let coverage = &mut merged.coverage;
        push_new(&mut coverage.required, &decision.coverage.required);
        push_new(&mut coverage.enrolled, &decision.coverage.enrolled);
        coverage.ran.retain(|r| decision.coverage.ran.contains(r));
        push_degradations(&mut coverage.degraded, &decision.coverage.degraded);
        push_degradations(&mut failures, &decision.receipt.failures);
        for evidence in &decision.authority_evidence {
            let known = merged.authority_evidence.iter().any(|e| {
                (&e.identity, &e.integrity, &e.authority.requirement)
                    == (
                        &evidence.identity,
                        &evidence.integrity,
                        &evidence.authority.requirement,
                    )
            });
            if !known {
                merged.authority_evidence.push(evidence.clone());
            }
        }
        push_new(
            &mut merged.valid_as_of.blobs,
            &std::mem::take(&mut decision.valid_as_of.blobs),
        );
        ids.push(decision.receipt.receipt_id.clone());
        receipts.push(std::mem::take(&mut decision.receipt.raw));
    }
    let first = &decisions[0].receipt;
    let last = &decisions[decisions.len() - 1].receipt;
    let receipt_id = ids.join(", ");
    let started = receipts[0]["timing"]["startedAt"].clone();
    let ended = receipts[receipts.len() - 1]["timing"]["endedAt"].clone();
    let mut raw = json!({
        "receiptId": receipt_id,
        "batched": receipts.len(),
        "host": receipts[0]["host"].clone(),
        "failures": failures.iter().map(degradation_json).collect::<Vec<_>>(),
    });
    if started.is_string() && ended.is_string() {
        raw["timing"] = json!({"startedAt": started, "endedAt": ended});
    }
    raw["batches"] = Value::Array(receipts);
    merged.receipt = Receipt {
        receipt_id,
        issued_at: last.issued_at.clone(),
        kind: first.kind.clone(),
        failures,
        raw,
    };
    merged
}

fn degradation_json(d: &Degradation) -> Value {
    let mut value = json!({"source": d.source, "reason": d.reason, "detail": d.detail});
    if let Some(requirement) = &d.requirement {
        value["requirement"] = json!(requirement);
    }
    value
}

fn empty() -> Decision {
    serde_json::from_value(json!({"decision": "indeterminate"})).unwrap_or_else(|_| unreachable!())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DecisionView, NotRunView};

    fn decision(kind: &str, finding: &str, ran: &[&str], degraded: &[&str]) -> Decision {
        let degraded: Vec<Value> = degraded
            .iter()
            .map(|r| json!({"source": "p", "reason": r, "detail": "d"}))
            .collect();
        serde_json::from_value(json!({
            "pass": kind == "allow",
            "decision": kind,
            "requestDigest": "sha256:r",
            "findings": [{"diagnostic": {"code": finding, "severity": "error", "message": finding}}],
            "coverage": {"exhaustive": degraded.is_empty(), "required": ["p"], "ran": ran, "degraded": degraded},
            "validAsOf": {"rev": "git:tree:e", "blobs": [format!("blob:sha256:{finding}")]},
            "receipt": {"receiptId": format!("r-{finding}"), "host": {"name": "h"},
                        "timing": {"startedAt": format!("t-{finding}"), "endedAt": format!("e-{finding}")},
                        "failures": degraded},
        }))
        .unwrap()
    }

    #[test]
    fn one_decision_is_kept_as_it_is() {
        let one = decision("allow", "a", &["p"], &[]);
        let merged = merge(vec![one.clone()]);
        assert_eq!(merged.receipt.raw, one.receipt.raw);
        assert_eq!(merged.request_digest.as_deref(), Some("sha256:r"));
    }

    #[test]
    fn a_deny_in_any_batch_makes_the_sweep_deny_with_every_finding() {
        let merged = merge(vec![
            decision("allow", "a", &["p"], &[]),
            decision("deny", "b", &["p"], &[]),
            decision("indeterminate", "c", &[], &["crashed"]),
        ]);
        assert!(merged.is(DecisionKind::Deny));
        assert_eq!(merged.pass, Some(false));
        let codes: Vec<_> = merged
            .findings
            .iter()
            .map(|f| f.diagnostic.code.as_str())
            .collect();
        assert_eq!(codes, ["a", "b", "c"]);
        assert!(
            merged.coverage.ran.is_empty(),
            "p did not run in every batch"
        );
        assert_eq!(merged.coverage.exhaustive, Some(false));
        assert_eq!(merged.not_run().len(), 1, "{:?}", merged.not_run());
        assert_eq!(merged.valid_as_of.blobs.len(), 3);
        assert_eq!(merged.receipt.receipt_id, "r-a, r-b, r-c");
        assert_eq!(merged.receipt.raw["batched"], 3);
        assert_eq!(merged.receipt.raw["batches"][1]["receiptId"], "r-b");
        assert_eq!(
            merged.receipt.raw["timing"],
            json!({"startedAt": "t-a", "endedAt": "e-c"})
        );
        assert_eq!(merged.receipt.raw["host"]["name"], "h");
        assert_eq!(
            merged.request_digest, None,
            "each batch had its own request"
        );
    }

    #[test]
    fn without_a_deny_an_indeterminate_or_unknown_batch_wins_over_allow() {
        let merged = merge(vec![
            decision("allow", "a", &["p"], &[]),
            decision("indeterminate", "b", &[], &["timed-out"]),
        ]);
        assert!(merged.is(DecisionKind::Indeterminate));
        assert!(merged.is_incomplete());
        let merged = merge(vec![
            decision("allow", "a", &["p"], &[]),
            decision("maybe", "b", &["p"], &[]),
        ]);
        assert_eq!(merged.decision.as_str(), "maybe", "kept as sent");
        let merged = merge(vec![
            decision("allow", "a", &["p"], &[]),
            decision("allow", "b", &["p"], &[]),
        ]);
        assert!(merged.is(DecisionKind::Allow));
        assert_eq!(merged.pass, Some(true));
        assert_eq!(merged.coverage.ran, ["p"]);
        assert!(!merged.is_incomplete());
    }

    #[test]
    fn what_the_batches_were_valid_for_is_every_blob_once_in_batch_order() {
        let mut first = decision("allow", "a", &["p"], &[]);
        let mut second = decision("allow", "b", &["p"], &[]);
        first.valid_as_of.blobs = ["x", "y", "x"].map(String::from).to_vec();
        second.valid_as_of.blobs = ["y", "z", "z", "w"].map(String::from).to_vec();
        let merged = merge(vec![first, second]);
        assert_eq!(merged.valid_as_of.blobs, ["x", "y", "z", "w"]);
        assert_eq!(merged.coverage.required, ["p"]);
    }
}
