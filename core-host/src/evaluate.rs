//! `host/evaluateChangeset`: intake, the plan of the call site, the providers run concurrently,
//! and the decision.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::error_object;
use serde_json::Value;
use tokio::task::JoinSet;

use crate::config::CallSite;
use crate::decide::{self, Item, Outcome, Request};
use crate::host::Host;
use crate::plan::{self, Entry};
use crate::policy::{POLICY_PATH, Policy};
use crate::provider::{Evaluation, Failure};
use crate::receipt::{self, Degradation};
use crate::schema::{self, Shape};
use crate::snapshot::{self, Intake};
use crate::{assessment, json, leave_out};

/// Deadline of a whole evaluation when neither the request nor the policy sets one.
const DEFAULT_BUDGET: Duration = Duration::from_secs(120);

/// How long an evaluation may take: the request's `timeoutMs`, else the policy's budget for the
/// call site, else [`DEFAULT_BUDGET`].
fn budget(asked: Option<u64>, policy: &Policy, call_site: CallSite) -> Duration {
    asked
        .or_else(|| policy.budget_ms(call_site))
        .map_or(DEFAULT_BUDGET, Duration::from_millis)
}

pub(crate) async fn evaluate(host: &Host, params: Value) -> Result<Value, ErrorObject> {
    let started = SystemTime::now();
    let begun = Instant::now();
    let call_site =
        CallSite::parse(params["callSite"].as_str().unwrap_or_default()).unwrap_or(CallSite::Gate);
    let asked_budget = params["timeoutMs"].as_u64();
    // Shared, not copied: with the blocking work below, and later with the providers' calls.
    let params = Arc::new(params);

    let (workspace, policies) = (host.workspace.clone(), host.policies.clone());
    let submitted = params.clone();
    // The policy in force is always the one committed at the host's own baseline; the changeset
    // may name another baseline (verified), which its before-blobs and the providers then use.
    // The blocking work starts first, on this thread when everything it reads is at hand without
    // waiting, else on the blocking pool while the schema check of the params and the digests run
    // on this thread. Its outcome is used only for params that pass the check (intake takes any
    // JSON: paths are checked there, blob ids are compared, never trusted).
    let blocking = snapshot::hop(move || {
        let submitted = &submitted["changeset"];
        let (own, moved) = workspace.refresh().map_err(|e| e.to_string())?;
        let policy = policies.load(&workspace, &own);
        let (baseline, intake) = match workspace.named_baseline(&own, &submitted["baseline"]) {
            Ok(baseline) => {
                let deadline = Instant::now() + budget(asked_budget, &policy, call_site);
                let intake = snapshot::intake(&workspace, &baseline, submitted, deadline);
                (baseline, intake)
            }
            Err(refused) => (
                own.clone(),
                Ok(Intake {
                    stale_baseline: Some(refused),
                    ..Intake::default()
                }),
            ),
        };
        Ok::<_, String>((own, baseline, moved, policy, intake))
    });
    let checked = schema::check(Shape::EvaluateParams, &params).map(|()| {
        let request_digest = receipt::request_digest("host/evaluateChangeset", &params);
        (request_digest, json::digest(&params["changeset"]))
    });
    let finished = blocking.join().await;
    // A move of `HEAD` seen by the blocking work is passed on even when the params are refused.
    if let Ok(Ok((own, _, true, ..))) = &finished {
        for slot in &host.slots {
            slot.baseline_changed(own).await;
        }
    }
    // Refused params are an `input` error, whatever the blocking work made of them.
    let (request_digest, changeset_digest) = checked.map_err(|e| {
        error_object(
            rpc_peer::jsonrpc::INVALID_PARAMS,
            format!("invalid params for host/evaluateChangeset: {e}"),
            FailClass::Input,
            false,
        )
    })?;
    let finished = finished.map_err(|e| {
        error_object(
            rpc_peer::jsonrpc::INTERNAL_ERROR,
            format!("internal error: {e}"),
            FailClass::Health,
            true,
        )
    })?;
    let comparison = params["comparison"].as_str().unwrap_or("all").to_owned();
    let changeset = &params["changeset"];
    let (own, baseline, _, policy, intake) = finished.map_err(crate::outer::not_ready)?;
    let intake: Intake = intake.map_err(|e| {
        error_object(
            asp_wire::code::INVALID_CHANGESET,
            format!("invalid_changeset: {e}"),
            FailClass::Input,
            false,
        )
    })?;

    let mut host_degraded = Vec::new();
    if let Some(reason) = &policy.invalid {
        host_degraded.push(Degradation::new(
            POLICY_PATH,
            "malformed",
            format!("the repository policy is invalid, so no decision can be reached: {reason}"),
        ));
    }
    if let Some(detail) = &intake.stale_baseline {
        host_degraded.push(Degradation::new(
            "changeset",
            "stale-baseline",
            detail.clone(),
        ));
    }
    if let Some(detail) = &intake.timed_out {
        host_degraded.push(Degradation::new("changeset", "timed-out", detail.clone()));
    }
    for detail in &intake.stale {
        host_degraded.push(Degradation::new("changeset", "stale", detail.clone()));
    }
    // A change that leaves the policy as committed (an all-files sweep lists it as it is) does not
    // touch it. Against an older baseline (the base of a branch), a policy the branch committed
    // is in force at HEAD but is still the branch's own change: it cannot authorise itself either.
    let since_base = baseline.tree != own.tree && !baseline.is_empty_tree();
    let touches_policy = changeset["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| {
            (c["path"] == POLICY_PATH
                && (c["after"].as_str() != policy.blob()
                    || (since_base && c["before"] != c["after"])))
                || (c["from"] == POLICY_PATH && c["path"] != POLICY_PATH)
        });
    if touches_policy {
        host_degraded.push(Degradation::new(
            POLICY_PATH,
            "policy-self-authorization",
            "the changeset changes the repository policy; the base policy decides it, and the candidate policy is not active until committed",
        ));
    }

    let entries = plan::plan(&host.slots, &policy, call_site);
    let blocked = host_degraded
        .iter()
        .any(|d| d.reason != "policy-self-authorization");
    let items = if blocked {
        let first = &host_degraded[0];
        entries
            .iter()
            .map(|entry| {
                let failure =
                    Failure::new(first.reason, "active", format!("not run: {}", first.detail));
                item(host, entry, call_site, &policy.digest, Err(failure))
            })
            .collect()
    } else {
        let budget = budget(asked_budget, &policy, call_site);
        let evaluation = Evaluation {
            request: params.clone(),
            changeset_digest: changeset_digest.clone(),
            comparison,
            baseline: baseline.clone(),
            blobs: Arc::new(intake.blobs),
            // The budget covers the whole request: what intake took is no longer the providers'.
            deadline: budget.saturating_sub(begun.elapsed()),
            call_site,
        };
        let (mut outcomes, narrowed) = run(host, &entries, &evaluation).await;
        // What the trusted configuration leaves out, said once per answer; the decision stays.
        let mut excluded = Vec::new();
        for (index, outcome) in outcomes.iter_mut().enumerate() {
            let spec = &host.slots[index].spec;
            let assessment = match outcome {
                Some(Ok(accepted)) => Some(&mut accepted.assessment),
                Some(Err(failure)) => failure.assessment.as_mut(),
                None => None,
            };
            if let Some(assessment) = assessment {
                let dropped = leave_out::drop_findings(&spec.leave_out, assessment);
                host_degraded.extend(leave_out::findings_note(
                    &spec.id,
                    &spec.leave_out,
                    &dropped,
                ));
            }
            if let Some(narrowed) = &narrowed[index] {
                excluded.push((spec.id.as_str(), narrowed));
            }
        }
        host_degraded.extend(leave_out::paths_note(&excluded));
        entries
            .iter()
            .map(|entry| {
                let outcome = match (&entry.failure, entry.slot) {
                    (Some(failure), _) => Err(failure.clone()),
                    (None, Some(i)) => outcomes[i]
                        .clone()
                        .unwrap_or_else(|| Err(Failure::new("error", "active", "not run"))),
                    (None, None) => Err(Failure::new(
                        "missing-required-provider",
                        "unavailable",
                        "no provider",
                    )),
                };
                item(host, entry, call_site, &policy.digest, outcome)
            })
            .collect::<Vec<_>>()
    };
    Ok(decide::decide(
        Request {
            call_site,
            request_digest,
            changeset_digest: &changeset_digest,
            policy_digest: &policy.digest,
            baseline: &baseline.value,
            started,
            host_degraded,
        },
        &items,
    ))
}

type SlotOutcome = Result<assessment::Accepted, Failure>;

/// Runs every provider some entry needs, concurrently; one outcome per slot that ran, and per slot
/// the changeset it was sent when its configuration excluded some of the changes.
async fn run(
    host: &Host,
    entries: &[Entry],
    evaluation: &Evaluation,
) -> (Vec<Option<SlotOutcome>>, Vec<Option<leave_out::Narrowed>>) {
    let mut needed: Vec<usize> = entries
        .iter()
        .filter(|e| e.failure.is_none())
        .filter_map(|e| e.slot)
        .collect();
    needed.sort_unstable();
    needed.dedup();
    let mut tasks = JoinSet::new();
    let mut narrowed = vec![None; host.slots.len()];
    for index in needed {
        let slot = host.slots[index].clone();
        let mut evaluation = evaluation.clone();
        evaluation.deadline = evaluation.deadline.min(slot.spec.timeout);
        // An excluded change is not sent at all: the provider gets the changeset without it, and
        // the digest of that changeset (its read grant leaves the paths out too).
        if let Some(narrow) =
            leave_out::narrow(&slot.spec.leave_out, &evaluation.request["changeset"])
        {
            let mut request = (*evaluation.request).clone();
            request["changeset"] = narrow.changeset.clone();
            evaluation.request = Arc::new(request);
            evaluation.changeset_digest = narrow.digest.clone();
            narrowed[index] = Some(narrow);
        }
        tasks.spawn(async move { (index, slot.evaluate(&evaluation).await) });
    }
    let mut outcomes = vec![None; host.slots.len()];
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, outcome)) => outcomes[index] = Some(outcome),
            Err(e) => tracing::error!("provider task failed: {e}"),
        }
    }
    (outcomes, narrowed)
}

fn item(
    host: &Host,
    entry: &Entry,
    call_site: CallSite,
    policy_digest: &str,
    outcome: SlotOutcome,
) -> Item {
    let slot = entry.slot.map(|i| &host.slots[i]);
    let provider = slot.map_or_else(|| entry.source.clone(), |s| s.spec.id.clone());
    let identity = slot.and_then(|s| s.view().identity);
    let (authorized, refusal) = match entry.authorize(identity.as_ref(), &provider) {
        Ok(granted) => (granted, None),
        Err(why) => (false, Some(why)),
    };
    let authority = plan::evidence(
        entry,
        &provider,
        identity.as_ref(),
        authorized,
        Some(call_site),
        policy_digest,
    );
    let provenance = identity.as_ref().map(|i| plan::provenance(&provider, i));
    let mut outcome = match outcome {
        Ok(accepted) => decide::outcome_of(accepted),
        Err(failure) => failure.into(),
    };
    if let (Some(why), Outcome::Ran(assessment)) = (&refusal, &outcome) {
        outcome = Outcome::Degraded {
            reason: "missing-authority",
            detail: why.clone(),
            state: Some("active"),
            assessment: Some(assessment.clone()),
        };
    }
    Item {
        requirement: entry.requirement.clone(),
        provider,
        required: entry.required,
        authorized,
        authority,
        provenance,
        outcome,
    }
}
