//! `host/evaluateChangeset`: intake, the plan of the call site, the providers run concurrently,
//! and the decision.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use asp_wire::proto::{self, Lifecycle};
use asp_wire::reason::Reason;
use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::error_object;
use serde_json::Value;
use tokio::task::JoinSet;

use crate::config::CallSite;
use crate::decide::{self, Item, Outcome, Request};
use crate::host::Host;
use crate::outer_error::not_ready;
use crate::plan::{self, Entry};
use crate::policy::{POLICY_PATH, Policies, Policy};
use crate::provider::{Evaluation, Failure};
use crate::receipt::{self, Degradation};
use crate::schema::{self, Shape};
use crate::snapshot::{self, Baseline, Intake, Workspace};
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

/// `host/evaluateChangeset`, in the order of the Core profile's candidate flow and decision rules:
/// the candidate taken in, the host's own degradations, the providers the call site requires,
/// their Assessments (or why none counts), what the trusted configuration leaves out, and the
/// decision with its receipt.
pub(crate) async fn evaluate(host: &Host, params: Value) -> Result<Value, ErrorObject> {
    let started = SystemTime::now();
    let begun = Instant::now();
    let call_site =
        CallSite::parse(params["callSite"].as_str().unwrap_or_default()).unwrap_or(CallSite::Gate);
    let asked_budget = params["timeoutMs"].as_u64();
    // Shared, not copied: with the blocking work of intake, and later with the providers' calls.
    let params = Arc::new(params);
    let mut candidate = take_in(host, &params, call_site, asked_budget).await?;
    let taken_in = begun.elapsed();
    let mut host_degraded = host_degradations(&candidate, &params["changeset"]);
    let entries = plan::plan(&host.slots, &candidate.policy, call_site);
    let items = if blocks(&host_degraded) {
        not_run(host, &entries, call_site, &candidate, &host_degraded[0])
    } else {
        let budget = budget(asked_budget, &candidate.policy, call_site);
        let evaluation = Evaluation {
            request: params.clone(),
            changeset_digest: candidate.changeset_digest.clone(),
            comparison: params["comparison"]
                .as_str()
                .unwrap_or(proto::Comparison::All.as_str())
                .to_owned(),
            baseline: candidate.baseline.clone(),
            blobs: Arc::new(std::mem::take(&mut candidate.intake.blobs)),
            // The budget covers the whole request: what intake took is no longer the providers'.
            deadline: budget.saturating_sub(begun.elapsed()),
            call_site,
        };
        let links = std::mem::take(&mut candidate.intake.links);
        let (mut outcomes, narrowed) = run(host, &entries, &evaluation, &links).await;
        host_degraded.extend(leave_out(host, &mut outcomes, &narrowed));
        merge(host, &entries, call_site, &candidate, outcomes)
    };
    let ran = begun.elapsed();
    let decision = decide::decide(
        Request {
            call_site,
            request_digest: candidate.request_digest,
            changeset_digest: &candidate.changeset_digest,
            policy_digest: &candidate.policy.digest,
            baseline: &candidate.baseline.value,
            started,
            host_degraded,
        },
        items,
    );
    tracing::debug!(
        intake_ms = taken_in.as_millis(),
        providers_ms = (ran - taken_in).as_millis(),
        decision_ms = (begun.elapsed() - ran).as_millis(),
        "evaluated"
    );
    Ok(decision)
}

/// What intake made of a request whose params passed the schema check.
struct Candidate {
    request_digest: String,
    changeset_digest: String,
    /// The host's own baseline (`HEAD`), whose committed policy is in force.
    own: Baseline,
    /// The baseline the changeset is checked against: `own`, or the one it names (verified).
    baseline: Baseline,
    policy: Policy,
    intake: Intake,
}

/// Takes the candidate in: the params checked against the schema, the host's baseline refreshed
/// (a move of `HEAD` passed on to the providers), the policy in force loaded and the changeset's
/// blobs checked against the workspace. Refused params are an `input` error, an unreadable
/// workspace a retryable `health` one, a changeset that cannot be read `invalid_changeset`.
async fn take_in(
    host: &Host,
    params: &Arc<Value>,
    call_site: CallSite,
    asked_budget: Option<u64>,
) -> Result<Candidate, ErrorObject> {
    let (workspace, policies) = (host.workspace.clone(), host.policies.clone());
    let submitted = params.clone();
    // The policy in force is always the one committed at the host's own baseline; the changeset
    // may name another baseline (verified), which its before-blobs and the providers then use.
    // The blocking work starts first, on this thread when everything it reads is at hand without
    // waiting, else on the blocking pool while the schema check of the params and the digests run
    // on this thread. Its outcome is used only for params that pass the check (intake takes any
    // JSON: paths are checked there, blob ids are compared, never trusted).
    let blocking = snapshot::hop(move || {
        read_workspace(
            &workspace,
            &policies,
            &submitted["changeset"],
            call_site,
            asked_budget,
        )
    });
    let checked = schema::check(Shape::EvaluateParams, params).map(|()| {
        let request_digest = receipt::request_digest(proto::EVALUATE_CHANGESET, params);
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
    let (own, baseline, _, policy, intake) = finished.map_err(not_ready)?;
    let intake: Intake = intake.map_err(|e| {
        error_object(
            asp_wire::code::INVALID_CHANGESET,
            format!("invalid_changeset: {e}"),
            FailClass::Input,
            false,
        )
    })?;
    Ok(Candidate {
        request_digest,
        changeset_digest,
        own,
        baseline,
        policy,
        intake,
    })
}

/// What the blocking work of intake read: the host's own baseline, the baseline the changeset is
/// checked against, whether `HEAD` moved, the policy in force and the changeset's intake.
type Read = (Baseline, Baseline, bool, Policy, Result<Intake, String>);

/// The blocking work of intake: the host's baseline refreshed, the policy committed there loaded,
/// and the changeset's blobs checked against the baseline it names (a baseline the host refuses
/// is a stale one, and nothing is checked). `Err` when the workspace cannot be read.
fn read_workspace(
    workspace: &Workspace,
    policies: &Policies,
    submitted: &Value,
    call_site: CallSite,
    asked_budget: Option<u64>,
) -> Result<Read, String> {
    let (own, moved) = workspace.refresh().map_err(|e| e.to_string())?;
    let policy = policies.load(workspace, &own);
    let (baseline, intake) = match workspace.named_baseline(&own, &submitted["baseline"]) {
        Ok(baseline) => {
            let deadline = Instant::now() + budget(asked_budget, &policy, call_site);
            let intake = snapshot::intake(workspace, &baseline, submitted, deadline);
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
    Ok((own, baseline, moved, policy, intake))
}

/// What the host itself finds wrong with the candidate, before any provider runs: an invalid
/// policy, a stale baseline, an intake that timed out, stale blobs, and a changeset that changes
/// the policy deciding it (`policy-self-authorization`).
fn host_degradations(candidate: &Candidate, changeset: &Value) -> Vec<Degradation> {
    let (policy, intake) = (&candidate.policy, &candidate.intake);
    let mut host_degraded = Vec::new();
    if let Some(reason) = &policy.invalid {
        host_degraded.push(Degradation::new(
            POLICY_PATH,
            Reason::Malformed,
            format!("the repository policy is invalid, so no decision can be reached: {reason}"),
        ));
    }
    if let Some(detail) = &intake.stale_baseline {
        host_degraded.push(Degradation::new(
            "changeset",
            Reason::StaleBaseline,
            detail.clone(),
        ));
    }
    if let Some(detail) = &intake.timed_out {
        host_degraded.push(Degradation::new(
            "changeset",
            Reason::TimedOut,
            detail.clone(),
        ));
    }
    for detail in &intake.stale {
        host_degraded.push(Degradation::new("changeset", Reason::Stale, detail.clone()));
    }
    if touches_policy(candidate, changeset) {
        host_degraded.push(Degradation::new(
            POLICY_PATH,
            Reason::PolicySelfAuthorization,
            "the changeset changes the repository policy; the base policy decides it, and the candidate policy is not active until committed",
        ));
    }
    host_degraded
}

/// Whether `changeset` changes the policy in force. A change that leaves the policy as committed
/// (an all-files sweep lists it as it is) does not touch it. Against an older baseline (the base of
/// a branch), a policy the branch committed is in force at HEAD but is still the branch's own
/// change: it cannot authorise itself either.
fn touches_policy(candidate: &Candidate, changeset: &Value) -> bool {
    let (own, baseline, policy) = (&candidate.own, &candidate.baseline, &candidate.policy);
    let since_base = baseline.tree != own.tree && !baseline.is_empty_tree();
    changeset["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| {
            (c["path"] == POLICY_PATH
                && (c["after"].as_str() != policy.blob()
                    || (since_base && c["before"] != c["after"])))
                || (c["from"] == POLICY_PATH && c["path"] != POLICY_PATH)
        })
}

/// Whether the host's own degradations leave nothing for the providers to decide: any but a
/// policy self-authorization (which the base policy still decides).
fn blocks(host_degraded: &[Degradation]) -> bool {
    host_degraded
        .iter()
        .any(|d| d.reason != Reason::PolicySelfAuthorization)
}

/// The coverage entries when no provider runs: each one not run, for the host's first reason.
fn not_run(
    host: &Host,
    entries: &[Entry],
    call_site: CallSite,
    candidate: &Candidate,
    first: &Degradation,
) -> Vec<Item> {
    entries
        .iter()
        .map(|entry| {
            let failure = Failure::new(
                first.reason,
                Lifecycle::Active,
                format!("not run: {}", first.detail),
            );
            item(
                host,
                entry,
                call_site,
                &candidate.policy.digest,
                Err(failure),
            )
        })
        .collect()
}

/// Applies what the trusted configuration leaves out: the findings it drops from each answer, and
/// the changes it kept from each provider, said once per answer; the decision stays.
fn leave_out(
    host: &Host,
    outcomes: &mut [Option<SlotOutcome>],
    narrowed: &[Option<leave_out::Narrowed>],
) -> Vec<Degradation> {
    let mut notes = Vec::new();
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
            notes.extend(leave_out::findings_note(
                &spec.id,
                &spec.leave_out,
                &dropped,
            ));
        }
        if let Some(narrowed) = &narrowed[index] {
            excluded.push((spec.id.as_str(), narrowed));
        }
    }
    notes.extend(leave_out::paths_note(&excluded));
    notes
}

/// Merges the providers' outcomes into the plan: one coverage entry per entry, from the
/// provider's outcome, the plan's own failure, or a required provider that is missing. An outcome
/// is moved into the last entry that uses it, and copied only for the others (a provider that
/// several requirements name).
fn merge(
    host: &Host,
    entries: &[Entry],
    call_site: CallSite,
    candidate: &Candidate,
    mut outcomes: Vec<Option<SlotOutcome>>,
) -> Vec<Item> {
    let mut uses = vec![0usize; outcomes.len()];
    for entry in entries.iter().filter(|e| e.failure.is_none()) {
        if let Some(i) = entry.slot {
            uses[i] += 1;
        }
    }
    entries
        .iter()
        .map(|entry| {
            let outcome = match (&entry.failure, entry.slot) {
                (Some(failure), _) => Err(failure.clone()),
                (None, Some(i)) => {
                    uses[i] -= 1;
                    let outcome = if uses[i] == 0 {
                        outcomes[i].take()
                    } else {
                        outcomes[i].clone()
                    };
                    outcome.unwrap_or_else(|| {
                        Err(Failure::new(Reason::Error, Lifecycle::Active, "not run"))
                    })
                }
                (None, None) => Err(Failure::new(
                    Reason::MissingRequiredProvider,
                    Lifecycle::Unavailable,
                    "no provider",
                )),
            };
            item(host, entry, call_site, &candidate.policy.digest, outcome)
        })
        .collect()
}

type SlotOutcome = Result<assessment::Accepted, Failure>;

/// Runs the providers: every one some entry needs, concurrently; one outcome per slot that ran, and
/// per slot the changeset it was sent when its configuration excluded some of the changes or some
/// are symbolic `links`.
async fn run(
    host: &Host,
    entries: &[Entry],
    evaluation: &Evaluation,
    links: &BTreeSet<String>,
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
        // An excluded change, or one to a symbolic link, is not sent at all: the provider gets the
        // changeset without it, and the digest of that changeset (its read grant leaves excluded
        // paths out too).
        if let Some(narrow) = leave_out::narrow(
            &slot.spec.leave_out,
            links,
            &evaluation.request["changeset"],
        ) {
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

/// The coverage entry of `entry` given its provider's `outcome`: the authority evidence and
/// provenance, and the outcome degraded to `missing-authority` when no grant covers the provider.
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
            reason: Reason::MissingAuthority,
            detail: why.clone(),
            state: Some(Lifecycle::Active),
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
