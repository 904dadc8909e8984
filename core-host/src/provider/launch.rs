//! A provider as rpc-peer's supervised child: its launch (today's session start and `initialize`),
//! what the host keeps of its failures, and the one mapping of the supervisor's [`Lifecycle`] to
//! the wire's `lifecycleState` and `serverStatus.state`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use asp_wire::proto::{self, Enrollment, ServerState};
use asp_wire::reason::Reason;
use rpc_peer::peer::{BoxFuture, Peer};
use rpc_peer::supervisor::{Launch, Lifecycle, Outage, StartFailure, Started};
use rpc_peer::{ExitStatus, FailClass, lock};

use super::session::Session;
use super::{Failure, Identity};
use crate::callbacks::Scope;
use crate::config::ProviderSpec;
use crate::snapshot::{Baseline, Workspace};

/// Longest `initialize` takes.
const MAX_INITIALIZE: Duration = Duration::from_secs(10);

/// Why a provider gave no session: a failed start (or a provider gone dead or hung), a start no
/// restart can fix, or the supervisor's outage.
#[derive(Debug)]
pub(crate) enum Down {
    Failed(Failure),
    Permanent(Failure),
    Outage(Outage),
}

impl std::fmt::Display for Down {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Down::Failed(failure) | Down::Permanent(failure) => f.write_str(&failure.detail),
            Down::Outage(Outage::Interrupted(why)) => f.write_str(why),
            Down::Outage(outage) => write!(f, "{outage:?}"),
        }
    }
}

impl From<Outage> for Down {
    fn from(outage: Outage) -> Down {
        Down::Outage(outage)
    }
}

/// A live provider's connection failed: it went dead (`crashed`), or the supervisor found it hung.
impl From<rpc_peer::Error> for Down {
    fn from(error: rpc_peer::Error) -> Down {
        Down::Failed(match error {
            rpc_peer::Error::Unavailable { why, .. } => Failure::new(
                Reason::TimedOut,
                proto::Lifecycle::TimedOut,
                format!("the provider is unavailable: {why}"),
            ),
            other => Failure::new(
                Reason::Crashed,
                proto::Lifecycle::Crashed,
                format!("the provider {other}"),
            ),
        })
    }
}

/// What the host keeps of a provider between starts, for its view and its refusals.
#[derive(Debug)]
pub(crate) struct Record {
    pub(crate) enrollment: Enrollment,
    /// The last failure that counted (kept until a start succeeds).
    pub(crate) last: Option<Failure>,
    /// A failure no restart can fix (incompatible, malformed initialize, quarantined).
    pub(crate) permanent: Option<Failure>,
    pub(crate) identity: Option<Identity>,
    /// Whether it advertised the check capability.
    pub(crate) advertised_check: bool,
    /// The view when the host began to stop the provider, and whether it was live then.
    pub(crate) stopped: Option<Stopped>,
}

/// How a provider stood when the host stopped it.
#[derive(Clone, Debug)]
pub(crate) struct Stopped {
    pub(crate) before: Lifecycle,
    /// Still stopping (the fixed escalation runs).
    pub(crate) stopping: bool,
}

/// Everything a start needs, shared by the slot and its supervisor.
#[derive(Debug)]
pub(crate) struct Provider {
    pub(crate) spec: Arc<ProviderSpec>,
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) cwd: PathBuf,
    pub(crate) scope: Arc<Scope>,
    /// The baseline the next start sends in `initialize` (that of the call that needs it).
    pub(crate) baseline: Mutex<Option<Baseline>>,
    pub(crate) record: Mutex<Record>,
}

/// How the supervisor starts, talks to and stops a provider.
#[derive(Clone, Debug)]
pub(crate) struct ProviderLaunch(pub(crate) Arc<Provider>);

impl Launch for ProviderLaunch {
    type Process = Arc<Session>;
    type Client = Arc<Session>;
    type Status = ();
    type Error = Down;

    fn launch(&self) -> BoxFuture<'static, Started<Self>> {
        let provider = self.0.clone();
        Box::pin(async move {
            let p = &*provider;
            let baseline = lock(&p.baseline)
                .clone()
                .unwrap_or_else(|| p.workspace.baseline());
            let deadline = p.spec.timeout.min(MAX_INITIALIZE);
            let started =
                Session::start(&p.spec, &p.cwd, &p.workspace, &p.scope, &baseline, deadline).await;
            let mut record = lock(&p.record);
            match started {
                Ok(session) => {
                    record.last = None;
                    record.identity = Some(session.identity.clone());
                    record.advertised_check = true;
                    Ok((Arc::new(session), ()))
                }
                Err(start) => {
                    if start.permanent {
                        record.permanent = Some(start.failure.clone());
                        record.enrollment = Enrollment::Incompatible;
                        record.identity = start.identity;
                        Err(Down::Permanent(start.failure))
                    } else {
                        Err(Down::Failed(start.failure))
                    }
                }
            }
        })
    }

    fn client(process: &Arc<Session>) -> Arc<Session> {
        process.clone()
    }

    fn peer(process: &Arc<Session>) -> &Peer {
        process.peer()
    }

    fn shutdown(process: Arc<Session>) -> BoxFuture<'static, ExitStatus> {
        Box::pin(async move { process.stop().await })
    }

    /// A start that no restart can fix (incompatible, malformed) is final; any other counts.
    fn start_failure(error: &Down) -> StartFailure {
        match error {
            Down::Permanent(_) => StartFailure::Final(FailClass::Contract),
            Down::Failed(_) | Down::Outage(_) => StartFailure::Counted,
        }
    }

    /// Keeps the failure for the view; after too many in a row, the provider is quarantined.
    fn failed(&self, why: &Down, failures: u32, gave_up: bool) {
        let failure = match why {
            Down::Failed(failure) | Down::Permanent(failure) => failure.clone(),
            Down::Outage(_) => Failure::new(
                Reason::Unavailable,
                proto::Lifecycle::Unavailable,
                why.to_string(),
            ),
        };
        let mut record = lock(&self.0.record);
        if gave_up {
            record.permanent = Some(quarantined(failures, &failure.detail));
            record.enrollment = Enrollment::Quarantined;
        } else {
            record.last = Some(failure);
        }
    }
}

/// The failure of a provider quarantined after `failures` in a row.
pub(crate) fn quarantined(failures: u32, last: &str) -> Failure {
    Failure::new(
        Reason::Quarantined,
        proto::Lifecycle::Quarantined,
        format!("quarantined after {failures} failures in a row; last: {last}"),
    )
}

/// The wire's `lifecycleState` and `serverStatus.state` of a provider, and the failure its view
/// shows: the one place the supervisor's [`Lifecycle`] becomes the wire's states.
pub(crate) fn wire(
    state: Lifecycle,
    record: &Record,
) -> (proto::Lifecycle, ServerState, Option<Failure>) {
    use proto::Lifecycle as Wire;
    match state {
        Lifecycle::NotStarted => (Wire::Launched, ServerState::Installed, None),
        Lifecycle::Starting => (
            Wire::Initializing,
            ServerState::Installed,
            record.last.clone(),
        ),
        Lifecycle::Ready => (Wire::Active, ServerState::Ready, None),
        Lifecycle::Failed { .. } => match &record.last {
            Some(failure) => {
                let state = if matches!(failure.lifecycle, Wire::Crashed | Wire::TimedOut) {
                    ServerState::Degraded
                } else {
                    ServerState::Unavailable
                };
                (failure.lifecycle, state, Some(failure.clone()))
            }
            None => (Wire::Unavailable, ServerState::Unavailable, None),
        },
        Lifecycle::GaveUp => match &record.permanent {
            Some(failure) => {
                let state = match failure.lifecycle {
                    Wire::Quarantined => ServerState::Quarantined,
                    Wire::Malformed => ServerState::Degraded,
                    _ => ServerState::Incompatible,
                };
                (failure.lifecycle, state, Some(failure.clone()))
            }
            None => (Wire::Unavailable, ServerState::Unavailable, None),
        },
        Lifecycle::Stopped => match &record.stopped {
            Some(Stopped {
                before: Lifecycle::Ready,
                stopping,
            }) => {
                let lifecycle = if *stopping {
                    Wire::ShuttingDown
                } else {
                    Wire::Exited
                };
                (lifecycle, ServerState::Ready, None)
            }
            Some(Stopped { before, .. }) if *before != Lifecycle::Stopped => wire(*before, record),
            _ => (Wire::Exited, ServerState::Installed, record.last.clone()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(last: Option<Failure>, permanent: Option<Failure>) -> Record {
        Record {
            enrollment: Enrollment::Enrolled,
            last,
            permanent,
            identity: None,
            advertised_check: false,
            stopped: None,
        }
    }

    fn strings(state: Lifecycle, record: &Record) -> (&'static str, &'static str) {
        let (lifecycle, state, _) = wire(state, record);
        (lifecycle.as_str(), state.as_str())
    }

    /// A failure whose lifecycle state is `lifecycle` on the wire.
    fn failure(lifecycle: &str) -> Failure {
        let lifecycle = proto::Lifecycle::from_wire(lifecycle).expect("a wire lifecycle state");
        Failure::new(Reason::Error, lifecycle, "d")
    }

    #[test]
    fn each_lifecycle_has_the_wire_strings_of_host_status() {
        let none = record(None, None);
        let retry_at = std::time::Instant::now();
        assert_eq!(
            strings(Lifecycle::NotStarted, &none),
            ("launched", "installed")
        );
        assert_eq!(
            strings(Lifecycle::Starting, &none),
            ("initializing", "installed")
        );
        assert_eq!(strings(Lifecycle::Ready, &none), ("active", "ready"));
        for (lifecycle, state) in [
            ("crashed", "degraded"),
            ("timed-out", "degraded"),
            ("unavailable", "unavailable"),
        ] {
            let down = record(Some(failure(lifecycle)), None);
            let (wire_lifecycle, wire_state, failure) = wire(Lifecycle::Failed { retry_at }, &down);
            assert_eq!(
                (wire_lifecycle.as_str(), wire_state.as_str()),
                (lifecycle, state)
            );
            assert!(failure.is_some(), "a provider down shows why");
        }
        for (lifecycle, state) in [
            ("quarantined", "quarantined"),
            ("malformed", "degraded"),
            ("incompatible", "incompatible"),
        ] {
            let given_up = record(None, Some(failure(lifecycle)));
            assert_eq!(strings(Lifecycle::GaveUp, &given_up), (lifecycle, state));
        }
    }

    #[test]
    fn a_stopped_provider_shows_how_it_stood_when_the_host_stopped_it() {
        let mut stopped = record(None, None);
        stopped.stopped = Some(Stopped {
            before: Lifecycle::Ready,
            stopping: true,
        });
        assert_eq!(
            strings(Lifecycle::Stopped, &stopped),
            ("shutting-down", "ready")
        );
        stopped.stopped = Some(Stopped {
            before: Lifecycle::Ready,
            stopping: false,
        });
        assert_eq!(strings(Lifecycle::Stopped, &stopped), ("exited", "ready"));
        stopped.stopped = Some(Stopped {
            before: Lifecycle::NotStarted,
            stopping: false,
        });
        assert_eq!(
            strings(Lifecycle::Stopped, &stopped),
            ("launched", "installed")
        );
    }
}
