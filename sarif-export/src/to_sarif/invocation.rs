//! How the run went: `invocations[0]` (always `executionSuccessful: true`, since GitHub drops the
//! results of an unsuccessful run) with one notification per thing that did not run or was left out,
//! and the run `properties` that carry the decision, labelled advisory.

use asp_wire::proto::{Decision, Degradation};
use bridge_core::model::DecisionView;
use serde_json::{Value, json};
use serde_sarif::sarif::{
    Invocation, Message, Notification, PropertyBag, ReportingDescriptorReference,
};

use super::catalogue::authority_json;
use super::{DETAIL_MAX, bag};
use crate::limits::{Limits, Selection};
use crate::options::Options;
use crate::values::{clean, is_date_time, utc};

/// Descriptor ids of the notifications the bridge itself adds.
pub(crate) const RESULTS_LIMIT: &str = "asp-bridge/results-limit";
pub(crate) const EXTENSIONS_LIMIT: &str = "asp-bridge/extensions-limit";
pub(crate) const UNEXPLAINED: &str = "asp-bridge/unexplained-decision";
pub(crate) const OUTSIDE_PATHS: &str = "asp-bridge/paths-outside-workspace";
pub(crate) const LEFT_OUT: &str = "asp-bridge/paths-left-out";
/// Most left-out paths named in the notification.
const LEFT_OUT_NAMED: usize = 100;
/// Prefix of the descriptor id of a degraded-coverage notification; the reason follows.
pub(crate) const COVERAGE: &str = "asp/coverage/";

/// Degraded coverage and receipt failures, each `(source, reason)` once, in that order.
fn degradations(decision: &Decision) -> Vec<&Degradation> {
    let mut out: Vec<&Degradation> = Vec::new();
    for d in decision
        .coverage
        .degraded
        .iter()
        .chain(&decision.receipt.failures)
    {
        if !out
            .iter()
            .any(|seen| seen.source == d.source && seen.reason == d.reason)
        {
            out.push(d);
        }
    }
    out
}

/// One notification per degraded entry, and one more when the host refused without saying why, so
/// that an incomplete answer never reads as a clean one. A path the host's configuration left out
/// that is among `left_out` is said in that list's notification ([`left_out`]) instead.
pub(crate) fn not_run(
    decision: &Decision,
    left_out: &[bridge_core::changeset::Skipped],
) -> Vec<Notification> {
    let mut degraded = degradations(decision);
    degraded.retain(|d| {
        !(bridge_core::model::NotRun::from(*d).is_left_out()
            && left_out.iter().any(|s| s.path == d.source))
    });
    let mut notes: Vec<Notification> = degraded.iter().map(|d| degraded_note(d)).collect();
    if degraded.is_empty() && decision.is_incomplete() {
        let kind = clean(decision.decision.as_str(), 100, "(no decision)");
        notes.push(notice(
            UNEXPLAINED,
            "warning",
            format!(
                "the host decided {kind} without findings or degraded coverage; \
                 this is not a clean result"
            ),
            bag([("decision", json!(kind))]),
        ));
    }
    notes
}

fn degraded_note(d: &Degradation) -> Notification {
    let source = clean(&d.source, 255, "(unknown source)");
    let reason = clean(&d.reason, 255, "unknown");
    let detail = clean(&d.detail, DETAIL_MAX, "");
    // Required coverage that ran and found a blocking problem is listed in `coverage.degraded`
    // (the Core profile's machine-readable deny), but nothing was left unchecked.
    let blocked = d.is(asp_wire::reason::Reason::BlockingDiagnostic);
    // What the user's own configuration left out (disabled rules, a severity floor) is said once,
    // as a note: the user chose it.
    let chosen = bridge_core::model::NotRun::from(d).is_left_out();
    let (level, what) = if blocked {
        ("note", "ran and blocked")
    } else if chosen {
        ("note", "left out")
    } else {
        ("warning", "coverage degraded")
    };
    let text = if detail.is_empty() {
        format!("{what}: {source}: {reason}")
    } else {
        format!("{what}: {source}: {reason}: {detail}")
    };
    let optional = |v: &Option<String>| {
        v.as_deref()
            .map_or(Value::Null, |v| json!(clean(v, 255, "")))
    };
    notice(
        &format!("{COVERAGE}{reason}"),
        level,
        text,
        bag([
            ("source", json!(source)),
            ("reason", json!(reason)),
            ("detail", json!(detail)),
            ("requirement", optional(&d.requirement)),
            ("capability", optional(&d.capability)),
            ("providerState", optional(&d.provider_state)),
        ]),
    )
}

/// Notifications for what a limit left out (never a silent cut).
pub(crate) fn limit_notices(
    selection: &Selection,
    total: usize,
    extensions_omitted: usize,
    limits: &Limits,
) -> Vec<Notification> {
    let mut notes = Vec::new();
    let omitted = selection.omitted();
    if omitted > 0 {
        notes.push(notice(
            RESULTS_LIMIT,
            "warning",
            format!(
                "{omitted} of {total} findings were left out to respect GitHub code scanning's \
                 limits of {} results and {} rules per run; the {} most severe are kept",
                limits.results_per_run,
                limits.rules_per_run,
                selection.kept.len()
            ),
            bag([
                ("findings", json!(total)),
                ("kept", json!(selection.kept.len())),
                ("omitted", json!(omitted)),
                ("omittedOverResultsLimit", json!(selection.over_results)),
                ("omittedOverRulesLimit", json!(selection.over_rules)),
            ]),
        ));
    }
    if extensions_omitted > 0 {
        notes.push(notice(
            EXTENSIONS_LIMIT,
            "warning",
            format!(
                "{extensions_omitted} providers are not listed as tool extensions, to respect \
                 GitHub code scanning's limit of {} per run; their results are kept",
                limits.extensions_per_run
            ),
            bag([("omitted", json!(extensions_omitted))]),
        ));
    }
    notes
}

/// A notification naming the working-tree paths left out of the evaluation (not checked).
pub(crate) fn left_out(paths: &[bridge_core::changeset::Skipped]) -> Option<Notification> {
    (!paths.is_empty()).then(|| {
        let named: Vec<Value> = paths
            .iter()
            .take(LEFT_OUT_NAMED)
            .map(|s| json!({"path": clean(&s.path, 1024, ""), "why": clean(&s.why, 255, "")}))
            .collect();
        notice(
            LEFT_OUT,
            "warning",
            format!(
                "{} working-tree paths were left out of the evaluation and not checked (FIFOs, \
                 sockets, devices or nested repositories, never opened, or paths the host's \
                 configuration excludes); the `paths` property names them and why",
                paths.len()
            ),
            bag([("count", json!(paths.len())), ("paths", json!(named))]),
        )
    })
}

/// A notification when some results name a path outside the workspace (located on its root).
pub(crate) fn refused_locations(count: usize) -> Option<Notification> {
    (count > 0).then(|| {
        notice(
            OUTSIDE_PATHS,
            "warning",
            format!(
                "{count} results name a path outside the workspace (`..`, an absolute path or a \
                 `file:` URI elsewhere); they are kept, located on the repository root, and each \
                 says why in its `locationRefused` property"
            ),
            bag([("results", json!(count))]),
        )
    })
}

fn notice(id: &str, level: &str, text: String, properties: PropertyBag) -> Notification {
    Notification::builder()
        .descriptor(ReportingDescriptorReference::builder().id(id).build())
        .level(json!(level))
        .message(Message::builder().text(text).build())
        .properties(properties)
        .build()
}

/// The host's evaluation as the run's invocation: successful (the host answered), with the host's
/// own start and end times when its receipt has them, else the bridge's.
pub(crate) fn invocation(
    decision: &Decision,
    options: &Options,
    notifications: Vec<Notification>,
) -> Invocation {
    let timing = &decision.receipt.raw["timing"];
    let host_time = |key: &str| {
        timing
            .get(key)
            .and_then(Value::as_str)
            .filter(|t| is_date_time(t))
            .map(str::to_owned)
    };
    let (start, end) = match (host_time("startedAt"), host_time("endedAt")) {
        (Some(start), Some(end)) => (Some(start), Some(end)),
        _ => (options.started_at.map(utc), options.ended_at.map(utc)),
    };
    Invocation::builder()
        .execution_successful(true)
        .opt_start_time_utc(start)
        .opt_end_time_utc(end)
        .opt_tool_execution_notifications((!notifications.is_empty()).then_some(notifications))
        .build()
}

/// The decision envelope, minus the findings (they are the results): `authoritative: false`, the
/// decision, call site, digests, `validAsOf`, assurance, authority evidence, a coverage summary, the
/// receipt id and the whole receipt as received.
pub(crate) fn run_properties(decision: &Decision, selection: &Selection) -> PropertyBag {
    let text = |t: &str| {
        if t.is_empty() { Value::Null } else { json!(t) }
    };
    let optional = |t: &Option<String>| t.as_deref().map_or(Value::Null, text);
    let coverage = &decision.coverage;
    let degraded: Vec<Value> = degradations(decision)
        .into_iter()
        .map(|d| json!({"source": d.source, "reason": d.reason, "detail": d.detail}))
        .collect();
    let assurance = &decision.assurance;
    let mut assurance_json = json!({
        "mode": assurance.mode,
        "transactionGuarantee": assurance.transaction_guarantee,
    });
    if let Some(detail) = &assurance.detail {
        assurance_json["detail"] = json!(detail);
    }
    bag([
        ("authoritative", json!(false)),
        ("decision", json!(decision.decision.as_str())),
        ("callSite", text(decision.call_site.as_str())),
        ("policyDigest", optional(&decision.policy_digest)),
        ("requestDigest", optional(&decision.request_digest)),
        ("changesetDigest", optional(&decision.changeset_digest)),
        (
            "validAsOf",
            serde_json::to_value(&decision.valid_as_of).unwrap_or(Value::Null),
        ),
        ("assurance", assurance_json),
        (
            "authorityEvidence",
            Value::Array(
                decision
                    .authority_evidence
                    .iter()
                    .map(authority_json)
                    .collect(),
            ),
        ),
        (
            "coverage",
            json!({
                "complete": !decision.is_incomplete(),
                "exhaustive": coverage.exhaustive,
                "required": coverage.required,
                "ran": coverage.ran,
                "degraded": degraded,
            }),
        ),
        ("findings", json!(decision.findings.len())),
        (
            "omittedFindings",
            match selection.omitted() {
                0 => Value::Null,
                n => json!(n),
            },
        ),
        ("receiptId", text(&decision.receipt.receipt_id)),
        (
            "receipt",
            match &decision.receipt.raw {
                Value::Object(_) => decision.receipt.raw.clone(),
                _ => Value::Null,
            },
        ),
    ])
}
