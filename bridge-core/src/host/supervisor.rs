//! Supervision for the long-running front ends: start the host lazily, restart it with a growing
//! delay after a crash, fail fast during the outage, and give up (visibly) on a host that keeps dying.

use std::time::{Duration, Instant};

use tokio::sync::{Mutex, watch};

use super::HostClient;
use super::process::{HostConfig, HostProcess};
use crate::error::{Error, FailClass, Result};

/// When and how often a crashed host is restarted.
#[derive(Clone, Debug)]
pub struct RestartPolicy {
    /// Delay before the first restart (default 0.5 s); it doubles after each failure.
    pub initial_delay: Duration,
    /// Longest delay between restarts (default 30 s).
    pub max_delay: Duration,
    /// Consecutive failures after which the supervisor gives up (default 8).
    pub max_failures: u32,
    /// A host that ran this long before dying starts the count afresh (default 60 s).
    pub stable_after: Duration,
    /// A host that misses this many request deadlines in a row is taken as hung and replaced
    /// (default 3).
    pub max_missed_deadlines: u32,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_failures: 8,
            stable_after: Duration::from_secs(60),
            max_missed_deadlines: 3,
        }
    }
}

enum Phase {
    Idle,
    /// `failures`: consecutive failures before this start, carried in case it dies young.
    Up {
        process: HostProcess,
        since: Instant,
        failures: u32,
    },
    Down {
        retry_at: Instant,
        failures: u32,
        last: String,
    },
    GivenUp {
        failures: u32,
        last: String,
        class: FailClass,
    },
    Stopped,
}

/// Owns at most one host process at a time; see the module doc.
pub struct Supervisor {
    config: HostConfig,
    policy: RestartPolicy,
    phase: Mutex<Phase>,
    /// Counts successful starts; front ends watch it to refresh after a restart.
    starts: watch::Sender<u64>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("starts", &*self.starts.borrow())
            .finish()
    }
}

impl Supervisor {
    pub fn new(config: HostConfig, policy: RestartPolicy) -> Supervisor {
        Supervisor {
            config,
            policy,
            phase: Mutex::new(Phase::Idle),
            starts: watch::Sender::new(0),
        }
    }

    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    /// A client of a live host: starts or restarts the host when it is due, otherwise fails fast with
    /// a `health` error that says why the host is down and when it will be tried again.
    pub async fn client(&self) -> Result<HostClient> {
        let mut phase = self.phase.lock().await;
        if let Phase::Up {
            process,
            since,
            failures,
        } = &*phase
        {
            let client = process.client();
            let missed = client.missed_deadlines_in_a_row();
            let hung = (missed >= self.policy.max_missed_deadlines)
                .then(|| Error::Unavailable(format!("host missed {missed} deadlines in a row")));
            let Some(why) = client.closed_reason().or(hung) else {
                return Ok(client.clone());
            };
            let failures = if since.elapsed() >= self.policy.stable_after {
                1
            } else {
                failures + 1
            };
            tracing::warn!(%why, "host went down");
            // Dropping the old process kills whatever is left of it.
            *phase = self.after_failure(failures, why.to_string());
        }
        match &*phase {
            Phase::Up { .. } => unreachable!("handled above"),
            Phase::Stopped => return Err(Error::Unavailable("the bridge is shutting down".into())),
            Phase::GivenUp {
                failures,
                last,
                class,
            } => {
                return Err(Error::GaveUp {
                    failures: *failures,
                    last: last.clone(),
                    fail_class: *class,
                });
            }
            Phase::Down { retry_at, last, .. } if Instant::now() < *retry_at => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                return Err(Error::Unavailable(format!(
                    "{last}; restarting in {} ms",
                    wait.as_millis()
                )));
            }
            Phase::Down { .. } | Phase::Idle => {}
        }
        let failures = match &*phase {
            Phase::Down { failures, .. } => *failures,
            _ => 0,
        };
        match HostProcess::start(&self.config).await {
            Ok((process, _status)) => {
                let client = process.client().clone();
                *phase = Phase::Up {
                    process,
                    since: Instant::now(),
                    failures,
                };
                self.starts.send_modify(|n| *n += 1);
                Ok(client)
            }
            Err(error) if error.fail_class() == FailClass::Contract => {
                *phase = Phase::GivenUp {
                    failures: failures + 1,
                    last: error.to_string(),
                    class: FailClass::Contract,
                };
                Err(error)
            }
            Err(error) => {
                *phase = self.after_failure(failures + 1, error.to_string());
                Err(error)
            }
        }
    }

    fn after_failure(&self, failures: u32, last: String) -> Phase {
        if failures >= self.policy.max_failures {
            tracing::error!(failures, %last, "giving up on the host");
            return Phase::GivenUp {
                failures,
                last,
                class: FailClass::Health,
            };
        }
        let factor = 2u32.saturating_pow(failures.saturating_sub(1));
        let delay = self
            .policy
            .initial_delay
            .saturating_mul(factor)
            .min(self.policy.max_delay);
        Phase::Down {
            retry_at: Instant::now() + delay,
            failures,
            last,
        }
    }

    /// Watches the number of successful host starts (1 after the first start, 2 after a restart…).
    pub fn starts(&self) -> watch::Receiver<u64> {
        self.starts.subscribe()
    }

    /// Shuts the host down (fixed escalation) and refuses further calls.
    pub async fn shutdown(&self) {
        let previous = std::mem::replace(&mut *self.phase.lock().await, Phase::Stopped);
        if let Phase::Up { process, .. } = previous {
            let status = process.shutdown().await;
            tracing::debug!(%status, "host stopped");
        }
    }
}
