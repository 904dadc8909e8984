//! Enrolled providers: each a separate process on the inner seam, started on first need and kept
//! warm, restarted after a crash with a growing delay, quarantined after repeated failures.
//!
//! Start: spawn (bridge-core's child process handling: own process group, stderr to tracing, fixed
//! shutdown escalation, the group killed with the host however the host ends), `initialize` with
//! `protocolVersion: "asp/1.0"`, or `"asp/0.1"` through the compatibility layer ([`from_asp01`])
//! when the configuration says so (a contract refusal is `incompatible`, reason `skewed`), the
//! result checked against `initialize.schema.json`, then `initialized` with the narrowed grant
//! (requested ∩ configured read globs; write and network false). One evaluation runs at a time per
//! provider, so the blobs it reads belong to exactly one request.

pub(crate) mod from_asp01;
mod session;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use asp_wire::proto::{Enrollment, Lifecycle, ServerState};
use asp_wire::reason::Reason;
use serde_json::{Value, json};

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
/// Longest `initialize` takes.
const MAX_INITIALIZE: Duration = Duration::from_secs(10);

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

struct Life {
    session: Option<Arc<Session>>,
    failures: u32,
    retry_at: Option<Instant>,
    /// A failure no restart can fix (incompatible, malformed initialize, quarantined).
    permanent: Option<Failure>,
    last: Option<Failure>,
}

/// One enrolled provider.
pub(crate) struct Slot {
    pub(crate) spec: ProviderSpec,
    workspace: Arc<Workspace>,
    cwd: PathBuf,
    scope: Arc<Scope>,
    life: tokio::sync::Mutex<Life>,
    view: Mutex<View>,
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
        let view = View {
            lifecycle: Lifecycle::Launched,
            state: ServerState::Installed,
            enrollment,
            failure: None,
            identity: None,
            advertised_check: false,
        };
        Slot {
            scope: Arc::new(Scope::new(&spec.id)),
            spec,
            workspace,
            cwd,
            life: tokio::sync::Mutex::new(Life {
                session: None,
                failures: 0,
                retry_at: None,
                permanent: None,
                last: None,
            }),
            view: Mutex::new(view),
        }
    }

    pub(crate) fn view(&self) -> View {
        rpc_peer::lock(&self.view).clone()
    }

    fn set_view(&self, update: impl FnOnce(&mut View)) {
        update(&mut rpc_peer::lock(&self.view));
    }

    /// Resolves once no start is in progress.
    pub(crate) async fn settled(&self) {
        let _ = self.life.lock().await;
    }

    /// Starts the provider ahead of its first evaluation (its failure is recorded in the view).
    pub(crate) async fn warm_up(&self, baseline: &Baseline) {
        if let Err(failure) = self.session(baseline).await {
            tracing::warn!(provider = %self.spec.id, reason = failure.reason.as_str(), "provider not started: {}", failure.detail);
        }
    }

    /// The live session, starting one when needed and allowed.
    pub(crate) async fn session(&self, baseline: &Baseline) -> Result<Arc<Session>, Failure> {
        let mut life = self.life.lock().await;
        if let Some(failure) = &life.permanent {
            return Err(failure.clone());
        }
        if let Some(session) = &life.session {
            if !session.is_closed() {
                return Ok(session.clone());
            }
            let failure = Failure::new(
                Reason::Crashed,
                Lifecycle::Crashed,
                format!("the provider {}", session.exit_detail()),
            );
            life.session = None;
            self.record_failure(&mut life, failure);
        }
        if let (Some(at), Some(last)) = (life.retry_at, &life.last) {
            let now = Instant::now();
            if at > now {
                let mut failure = last.clone();
                failure.detail = format!(
                    "{} (restarting in {} ms)",
                    failure.detail,
                    (at - now).as_millis()
                );
                return Err(failure);
            }
        }
        self.set_view(|v| {
            v.lifecycle = Lifecycle::Initializing;
            v.state = ServerState::Installed;
        });
        match Session::start(
            &self.spec,
            &self.cwd,
            &self.workspace,
            &self.scope,
            baseline,
            self.initialize_deadline(),
        )
        .await
        {
            Ok(session) => {
                let session = Arc::new(session);
                life.session = Some(session.clone());
                life.retry_at = None;
                life.last = None;
                let identity = session.identity.clone();
                self.set_view(|v| {
                    v.lifecycle = Lifecycle::Active;
                    v.state = ServerState::Ready;
                    v.failure = None;
                    v.identity = Some(identity);
                    v.advertised_check = true;
                });
                Ok(session)
            }
            Err(start) => {
                if start.permanent {
                    life.permanent = Some(start.failure.clone());
                    let failure = start.failure.clone();
                    self.set_view(|v| {
                        v.lifecycle = failure.lifecycle;
                        v.state = if failure.lifecycle == Lifecycle::Malformed {
                            ServerState::Degraded
                        } else {
                            ServerState::Incompatible
                        };
                        v.enrollment = Enrollment::Incompatible;
                        v.failure = Some(failure);
                        v.identity = start.identity;
                    });
                    return Err(start.failure);
                }
                self.record_failure(&mut life, start.failure.clone());
                Err(life.permanent.clone().unwrap_or(start.failure))
            }
        }
    }

    fn initialize_deadline(&self) -> Duration {
        self.spec.timeout.min(MAX_INITIALIZE)
    }

    /// Counts a failed start or a crash: schedules the next start, or quarantines.
    fn record_failure(&self, life: &mut Life, failure: Failure) {
        life.failures += 1;
        if life.failures >= QUARANTINE_AFTER {
            let quarantined = Failure::new(
                Reason::Quarantined,
                Lifecycle::Quarantined,
                format!(
                    "quarantined after {} failures in a row; last: {}",
                    life.failures, failure.detail
                ),
            );
            life.permanent = Some(quarantined.clone());
            self.set_view(|v| {
                v.lifecycle = Lifecycle::Quarantined;
                v.state = ServerState::Quarantined;
                v.enrollment = Enrollment::Quarantined;
                v.failure = Some(quarantined);
            });
            return;
        }
        let delay = self
            .spec
            .restart_delay
            .saturating_mul(1 << (life.failures - 1).min(16))
            .min(MAX_RESTART_DELAY);
        life.retry_at = Some(Instant::now() + delay);
        life.last = Some(failure.clone());
        let state = if matches!(failure.lifecycle, Lifecycle::Crashed | Lifecycle::TimedOut) {
            ServerState::Degraded
        } else {
            ServerState::Unavailable
        };
        self.set_view(|v| {
            v.lifecycle = failure.lifecycle;
            v.state = state;
            v.failure = Some(failure);
        });
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
        let guard = self.scope.open(RequestScope {
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
                    session.call("check/evaluate", &params, remaining).await
                }
                Err(e) => Err(Failure::new(
                    Reason::Error,
                    Lifecycle::Active,
                    format!("the check/evaluate params cannot be encoded: {e}"),
                )),
            }
        } else {
            session.call("check/evaluate", &params, remaining).await
        };
        let served = guard.served();
        let refused = guard.refused();
        drop(guard);
        let mut answer = match answer {
            Ok(answer) => answer,
            Err(failure) => return Err(self.after_call_failure(&session, failure).await),
        };
        if self.spec.protocol == Protocol::V0_1 {
            answer = from_asp01::assessment(answer, &mut applied);
            from_asp01::log(&self.spec.id, "check/evaluate", &applied);
        }
        let expected = Expected {
            baseline: &evaluation.baseline.value,
            changeset_digest: &evaluation.changeset_digest,
            blobs_read: &served,
        };
        match assessment::accept(answer, &expected) {
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
                self.life.lock().await.failures = 0;
                Ok(accepted)
            }
            Err(rejection) => {
                tracing::warn!(provider = %self.spec.id, reason = rejection.reason.as_str(), "assessment rejected: {}", rejection.detail);
                Err(Failure::rejected(rejection))
            }
        }
    }

    async fn after_call_failure(&self, session: &Arc<Session>, failure: Failure) -> Failure {
        match failure.reason {
            Reason::Crashed => {
                let mut life = self.life.lock().await;
                if life
                    .session
                    .as_ref()
                    .is_some_and(|s| Arc::ptr_eq(s, session))
                {
                    life.session = None;
                    self.record_failure(&mut life, failure.clone());
                }
            }
            Reason::TimedOut if session.missed_deadlines() >= HUNG_AFTER => {
                tracing::warn!(provider = %self.spec.id, "provider missed {HUNG_AFTER} deadlines in a row; replacing it");
                let mut life = self.life.lock().await;
                if let Some(old) = life.session.take() {
                    tokio::spawn(async move { old.stop().await });
                }
                self.record_failure(&mut life, failure.clone());
            }
            _ => {}
        }
        failure
    }

    /// Tells a live provider that the baseline moved.
    pub(crate) async fn baseline_changed(&self, baseline: &Baseline) {
        if let Some(session) = self.life.lock().await.session.clone() {
            session.notify(
                "workspace/baselineChanged",
                &json!({"baseline": baseline.value}),
            );
        }
    }

    /// Stops the provider with the fixed escalation.
    pub(crate) async fn shutdown(&self) {
        let session = self.life.lock().await.session.take();
        if let Some(session) = session {
            self.set_view(|v| v.lifecycle = Lifecycle::ShuttingDown);
            session.stop().await;
            self.set_view(|v| v.lifecycle = Lifecycle::Exited);
        }
    }
}
