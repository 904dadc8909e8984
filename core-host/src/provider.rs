//! Enrolled providers: each a separate process on the inner seam, started on first need and kept
//! warm, restarted after a crash with a growing delay, quarantined after repeated failures. The
//! supervision is rpc-peer's supervisor, the one the bridge uses for its host ([`launch`]).
//!
//! Start: spawn (rpc-peer's child process handling: own process group, stderr to tracing, fixed
//! shutdown escalation, the group killed with the host however the host ends), `initialize` with
//! `protocolVersion: "asp/1.0"`, or `"asp/0.1"` through the compatibility layer ([`from_asp01`])
//! when the configuration says so (a contract refusal is `incompatible`, reason `skewed`), the
//! result checked against `initialize.schema.json`, then `initialized` with the narrowed grant
//! (requested ∩ configured read globs; write and network false). One evaluation runs at a time per
//! provider, so the blobs it reads belong to exactly one request.

pub(crate) mod from_asp01;
mod launch;
mod session;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use asp_wire::inner;
use asp_wire::proto::{Enrollment, Lifecycle, ServerState};
use asp_wire::reason::Reason;
use rpc_peer::lock;
use rpc_peer::supervisor::{Outage, RestartPolicy, Supervisor};
use serde_json::{Value, json};

use launch::{Down, Provider, ProviderLaunch, Record, Stopped};
pub(crate) use session::Session;

use crate::assessment::{self, Accepted, Expected};
use crate::callbacks::{RequestScope, Scope};
use crate::config::{CallSite, Protocol, ProviderSpec};
use crate::decide::Outcome;
use crate::snapshot::{Baseline, ScopedBlob, Workspace};

/// The restart delay doubles from the configured one up to this.
const MAX_RESTART_DELAY: Duration = Duration::from_secs(30);
/// Failed starts or crashes in a row after which a provider is quarantined.
const QUARANTINE_AFTER: u32 = 8;
/// Missed deadlines in a row after which a live provider is replaced.
const HUNG_AFTER: u32 = 3;

/// Why a provider gave no usable assessment: a degradation reason, a detail and its lifecycle state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Failure {
    pub(crate) reason: Reason,
    pub(crate) detail: String,
    pub(crate) lifecycle: Lifecycle,
    /// A well-formed fresh assessment of a non-complete status, kept for its diagnostics.
    pub(crate) assessment: Option<Value>,
}

impl Failure {
    pub(crate) fn new(reason: Reason, lifecycle: Lifecycle, detail: impl Into<String>) -> Failure {
        Failure {
            reason,
            detail: detail.into(),
            lifecycle,
            assessment: None,
        }
    }

    /// An answer the host did not accept: a malformed one leaves the provider `malformed`.
    pub(crate) fn rejected(rejection: assessment::Rejection) -> Failure {
        let lifecycle = if rejection.reason == Reason::Malformed {
            Lifecycle::Malformed
        } else {
            Lifecycle::Active
        };
        Failure::new(rejection.reason, lifecycle, rejection.detail)
    }
}

impl From<Failure> for Outcome {
    fn from(failure: Failure) -> Outcome {
        Outcome::Degraded {
            reason: failure.reason,
            detail: failure.detail,
            state: Some(failure.lifecycle),
            assessment: failure.assessment,
        }
    }
}

/// Who the provider says it is, and what the host measured.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) fingerprint: String,
    pub(crate) publisher: Option<String>,
    /// `sha256:<hex>` of the executable the host started.
    pub(crate) integrity: String,
}

/// What `host/status` shows of a provider.
#[derive(Clone, Debug)]
pub(crate) struct View {
    pub(crate) lifecycle: Lifecycle,
    /// `serverStatus.state`.
    pub(crate) state: ServerState,
    pub(crate) enrollment: Enrollment,
    pub(crate) failure: Option<Failure>,
    pub(crate) identity: Option<Identity>,
    /// Whether it advertised the check capability.
    pub(crate) advertised_check: bool,
}

impl View {
    pub(crate) fn available(&self) -> bool {
        self.failure.is_none() && self.lifecycle != Lifecycle::Incompatible
    }
}

/// `check/evaluate` params (asp/1.0).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckEvaluate<'a> {
    changeset: &'a Value,
    scope: &'static str,
    comparison: &'a str,
    changeset_digest: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    configuration: Option<&'a Value>,
}

/// One evaluation to run.
#[derive(Clone, Debug)]
pub(crate) struct Evaluation {
    /// The outer request's params, whose `changeset` is evaluated.
    pub(crate) request: Arc<Value>,
    pub(crate) changeset_digest: String,
    pub(crate) comparison: String,
    pub(crate) baseline: Baseline,
    pub(crate) blobs: Arc<std::collections::HashMap<String, ScopedBlob>>,
    pub(crate) deadline: Duration,
    /// The outer request's call site (an `asp/0.1` provider is told it).
    pub(crate) call_site: CallSite,
}

/// One enrolled provider, under its supervisor.
pub(crate) struct Slot {
    pub(crate) spec: Arc<ProviderSpec>,
    provider: Arc<Provider>,
    supervisor: Supervisor<ProviderLaunch>,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").field("id", &self.spec.id).finish()
    }
}

impl Slot {
    pub(crate) fn new(spec: ProviderSpec, workspace: Arc<Workspace>, cwd: PathBuf) -> Slot {
        let enrollment = if spec.required_for.is_empty() {
            Enrollment::Optional
        } else {
            Enrollment::Enrolled
        };
        // Restarted by the next call that needs it once the delay is over (not by the
        // supervisor on its own), every call during a start waits for it, and only an accepted
        // assessment starts the count of failures afresh.
        let policy = RestartPolicy {
            initial_delay: spec.restart_delay,
            max_delay: MAX_RESTART_DELAY,
            max_failures: QUARANTINE_AFTER,
            stable_after: Duration::MAX,
            max_missed_deadlines: HUNG_AFTER,
            restart_unasked: false,
            share_restarts: true,
        };
        let spec = Arc::new(spec);
        let provider = Arc::new(Provider {
            scope: Arc::new(Scope::new(&spec.id)),
            spec: spec.clone(),
            workspace,
            cwd,
            baseline: Mutex::new(None),
            record: Mutex::new(Record {
                enrollment,
                last: None,
                permanent: None,
                identity: None,
                advertised_check: false,
                stopped: None,
            }),
        });
        Slot {
            spec,
            supervisor: Supervisor::new(ProviderLaunch(provider.clone()), policy),
            provider,
        }
    }

    /// What `host/status` shows of the provider now (a provider found dead or hung is down).
    pub(crate) fn view(&self) -> View {
        let state = self.supervisor.state();
        let record = lock(&self.provider.record);
        let (lifecycle, state, failure) = launch::wire(state, &record);
        View {
            lifecycle,
            state,
            enrollment: record.enrollment,
            failure,
            identity: record.identity.clone(),
            advertised_check: record.advertised_check,
        }
    }

    /// Resolves once no start is in progress.
    pub(crate) async fn settled(&self) {
        self.supervisor.settled().await;
    }

    /// Starts the provider ahead of its first evaluation (its failure is recorded in the view).
    pub(crate) async fn warm_up(&self, baseline: &Baseline) {
        if let Err(failure) = self.session(baseline).await {
            tracing::warn!(provider = %self.spec.id, reason = failure.reason.as_str(), "provider not started: {}", failure.detail);
        }
    }

    /// The live session, starting one when needed and allowed.
    pub(crate) async fn session(&self, baseline: &Baseline) -> Result<Arc<Session>, Failure> {
        *lock(&self.provider.baseline) = Some(baseline.clone());
        let down = match self.supervisor.client().await {
            Ok(session) => return Ok(session),
            Err(down) => down,
        };
        let record = lock(&self.provider.record);
        if let Some(permanent) = &record.permanent {
            return Err(permanent.clone());
        }
        Err(match down {
            Down::Failed(failure) | Down::Permanent(failure) => failure,
            Down::Outage(Outage::Down { last, retry_in }) => {
                let mut failure = record.last.clone().unwrap_or_else(|| {
                    Failure::new(Reason::Unavailable, Lifecycle::Unavailable, last)
                });
                failure.detail = format!(
                    "{} (restarting in {} ms)",
                    failure.detail,
                    retry_in.as_millis()
                );
                failure
            }
            Down::Outage(Outage::GaveUp { failures, last, .. }) => {
                launch::quarantined(failures, &last)
            }
            Down::Outage(Outage::Restarting) => Failure::new(
                Reason::Unavailable,
                Lifecycle::Initializing,
                "restarting; try again shortly",
            ),
            Down::Outage(Outage::ShuttingDown) => Failure::new(
                Reason::Unavailable,
                Lifecycle::ShuttingDown,
                "the host is shutting down",
            ),
            Down::Outage(Outage::Interrupted(why)) => Failure::new(
                Reason::Unavailable,
                Lifecycle::Unavailable,
                format!("the provider could not be started: {why}"),
            ),
        })
    }

    /// Runs one `check/evaluate` and checks the answer.
    pub(crate) async fn evaluate(&self, evaluation: &Evaluation) -> Result<Accepted, Failure> {
        let started = Instant::now();
        let session = tokio::time::timeout(evaluation.deadline, self.session(&evaluation.baseline))
            .await
            .map_err(|_| {
                Failure::new(
                    Reason::TimedOut,
                    Lifecycle::Initializing,
                    "the provider did not start within the deadline",
                )
            })??;
        let remaining = evaluation.deadline.saturating_sub(started.elapsed());
        let _turn = tokio::time::timeout(remaining, session.turn())
            .await
            .map_err(|_| {
                Failure::new(
                    Reason::TimedOut,
                    Lifecycle::Active,
                    "the provider was busy with another evaluation until the deadline",
                )
            })?;
        let guard = self.provider.scope.open(RequestScope {
            baseline: evaluation.baseline.clone(),
            blobs: evaluation.blobs.clone(),
            served: Default::default(),
            refused: 0,
        });
        let remaining = evaluation
            .deadline
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(1));
        // Serialised from borrowed parts: the changeset is not copied for each provider.
        let params = CheckEvaluate {
            changeset: &evaluation.request["changeset"],
            scope: "changeset",
            comparison: &evaluation.comparison,
            changeset_digest: &evaluation.changeset_digest,
            configuration: self.spec.configuration.as_ref(),
        };
        let mut applied = from_asp01::Applied::new();
        let asked = std::time::Instant::now();
        let answer = if self.spec.protocol == Protocol::V0_1 {
            // The asp/0.1 params are the v1.0 ones, mapped.
            match serde_json::to_value(&params) {
                Ok(params) => {
                    let params = from_asp01::evaluate_params(
                        params,
                        evaluation.call_site,
                        &evaluation.changeset_digest,
                        &mut applied,
                    );
                    session
                        .call(inner::CHECK_EVALUATE, &params, remaining)
                        .await
                }
                Err(e) => Err(Failure::new(
                    Reason::Error,
                    Lifecycle::Active,
                    format!("the check/evaluate params cannot be encoded: {e}"),
                )),
            }
        } else {
            session
                .call(inner::CHECK_EVALUATE, &params, remaining)
                .await
        };
        let served = guard.served();
        let refused = guard.refused();
        drop(guard);
        let mut answer = match answer {
            Ok(answer) => answer,
            Err(failure) => return Err(self.after_call_failure(&session, failure)),
        };
        if self.spec.protocol == Protocol::V0_1 {
            answer = from_asp01::assessment(answer, &mut applied);
            from_asp01::log(&self.spec.id, inner::CHECK_EVALUATE, &applied);
        }
        let expected = Expected {
            baseline: &evaluation.baseline.value,
            changeset_digest: &evaluation.changeset_digest,
            blobs_read: &served,
        };
        let answered = asked.elapsed();
        let accepted = assessment::accept(answer, &expected);
        tracing::debug!(
            provider = %self.spec.id,
            answered_ms = answered.as_millis(),
            checked_ms = (asked.elapsed() - answered).as_millis(),
            "provider answered"
        );
        match accepted {
            Ok(accepted) if refused > 0 => Err(Failure {
                assessment: Some(accepted.assessment),
                ..Failure::new(
                    Reason::Incomplete,
                    Lifecycle::Active,
                    format!(
                        "{refused} of the provider's reads were outside its request or its grant and were refused (logged); what it could not read is not covered"
                    ),
                )
            }),
            Ok(accepted) => {
                self.supervisor.succeeded();
                Ok(accepted)
            }
            Err(rejection) => {
                tracing::warn!(provider = %self.spec.id, reason = rejection.reason.as_str(), "assessment rejected: {}", rejection.detail);
                Err(Failure::rejected(rejection))
            }
        }
    }

    /// A provider that crashed or missed too many deadlines in a row is down (the supervisor
    /// counts it, and replaces it on the next call once the delay is over): its view shows the
    /// call's failure. A hung one is stopped with the fixed escalation.
    fn after_call_failure(&self, session: &Arc<Session>, failure: Failure) -> Failure {
        let hung = failure.reason == Reason::TimedOut
            && session.peer().missed_deadlines_in_a_row() >= HUNG_AFTER;
        if hung {
            tracing::warn!(provider = %self.spec.id, "provider missed {HUNG_AFTER} deadlines in a row; replacing it");
            let old = session.clone();
            tokio::spawn(async move { old.stop().await });
        }
        if (hung || failure.reason == Reason::Crashed)
            && let rpc_peer::supervisor::Lifecycle::Failed { .. } = self.supervisor.state()
        {
            lock(&self.provider.record).last = Some(failure.clone());
        }
        failure
    }

    /// Tells a live provider that the baseline moved (one being started is told once it is up).
    pub(crate) async fn baseline_changed(&self, baseline: &Baseline) {
        self.supervisor.settled().await;
        if let Some(session) = self.supervisor.live() {
            session.notify(
                inner::BASELINE_CHANGED,
                &json!({"baseline": baseline.value}),
            );
        }
    }

    /// Stops the provider with the fixed escalation (once a start under way has completed).
    pub(crate) async fn shutdown(&self) {
        self.supervisor.settled().await;
        let before = self.supervisor.state();
        lock(&self.provider.record).stopped = Some(Stopped {
            before,
            stopping: true,
        });
        self.supervisor.shutdown().await;
        if let Some(stopped) = &mut lock(&self.provider.record).stopped {
            stopped.stopping = false;
        }
    }
}
