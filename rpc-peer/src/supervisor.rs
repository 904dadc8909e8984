//! Supervision of a child with a peer on its stdio: start it lazily, restart it with a growing
//! delay after a crash, fail fast during the outage, and give up (visibly) on a child that keeps
//! dying. The bridge supervises its host with it; what is started is a [`Launch`].
//!
//! The supervisor owns recovery. It notices on its own when a live child's connection closes, and
//! after every failure it starts the child again by itself once the (growing) delay is over: a
//! caller need not keep calling to bring the child back, it watches [`Supervisor::starts`].
//! No lock is held while a child starts: whoever finds the child due for a start (that restart
//! task, or a call that comes first) runs it on a task of its own, so the start finishes even if
//! that caller goes away. One call waits for a restart (the call that ran it, or the first to come
//! while the supervisor runs it: a call made once the restart was due waits as before); the
//! others made meanwhile fail fast with an [`Outage`] instead of waiting for the handshake (it is
//! an outage). Calls made during the very first start wait for its outcome (there was no child
//! yet to be out of, and a client's first burst of calls should not fail).
//! The handshake's answer is kept ([`Supervisor::last_status`]); where the child is in its life is
//! [`Supervisor::state`], a [`Lifecycle`].

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::peer::{BoxFuture, Peer};
use crate::{Error, ExitStatus, FailClass, lock};

/// When and how often a crashed child is restarted.
#[derive(Clone, Debug)]
pub struct RestartPolicy {
    /// Delay before the first restart (default 0.5 s); it doubles after each failure.
    pub initial_delay: Duration,
    /// Longest delay between restarts (default 30 s).
    pub max_delay: Duration,
    /// Consecutive failures after which the supervisor gives up (default 8).
    pub max_failures: u32,
    /// A child that ran this long before dying starts the count afresh (default 60 s).
    pub stable_after: Duration,
    /// A child that misses this many request deadlines in a row is taken as hung and replaced
    /// (default 3).
    pub max_missed_deadlines: u32,
    /// Whether the supervisor restarts a child by itself once the delay is over (default); if not,
    /// the first call after the delay does.
    pub restart_unasked: bool,
    /// Whether every call made during a restart waits for it, as during the first start; by
    /// default one waits and the others fail fast.
    pub share_restarts: bool,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_failures: 8,
            stable_after: Duration::from_secs(60),
            max_missed_deadlines: 3,
            restart_unasked: true,
            share_restarts: false,
        }
    }
}

/// How a supervised child is started, talked to and stopped.
pub trait Launch: Send + Sync + 'static {
    /// A running child.
    type Process: Send + 'static;
    /// What callers get of a live child (cheap to clone).
    type Client: Clone + Send + Sync + 'static;
    /// What the start's handshake answered.
    type Status: Clone + Send + Sync + 'static;
    /// Why a start failed, or why callers get no client: the launch's own error, a failure of the
    /// child's connection, or the supervisor's [`Outage`].
    type Error: From<Outage> + From<Error> + std::fmt::Display + Send + 'static;

    /// Starts a child and completes its handshake (stopping the child again if that fails).
    fn launch(&self) -> BoxFuture<'static, Started<Self>>;
    fn client(process: &Self::Process) -> Self::Client;
    /// The connection whose health the supervisor watches.
    fn peer(process: &Self::Process) -> &Peer;
    /// Stops the child with the fixed escalation.
    fn shutdown(process: Self::Process) -> BoxFuture<'static, ExitStatus>;
    /// How a failed start counts.
    fn start_failure(error: &Self::Error) -> StartFailure;

    /// Told of each failure that counts (a failed start, a child gone dead or hung), with the
    /// count of failures in a row; `gave_up` when it made the supervisor give up. Called with the
    /// supervisor's state locked: it must not call the supervisor.
    fn failed(&self, why: &Self::Error, failures: u32, gave_up: bool) {
        let _ = (why, failures, gave_up);
    }
}

/// What a start ends with: a child and its handshake's answer, or why there is none.
pub type Started<L> = Result<(<L as Launch>::Process, <L as Launch>::Status), <L as Launch>::Error>;

/// A client of a live child, or why there is none.
type Outcome<L> = Result<<L as Launch>::Client, <L as Launch>::Error>;

/// How a failed start counts towards giving up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartFailure {
    /// A crash: tried again after the growing delay, given up on after too many in a row.
    Counted,
    /// Trying again cannot help (a child that speaks another protocol): given up on at once, for
    /// this failure class.
    Final(FailClass),
    /// Not a crash (a program that cannot be run at all): no delay, no count towards giving up;
    /// the next call tries again at once (someone may have installed it meanwhile).
    Uncounted,
}

/// Why a call gets no client, as the supervisor saw it; the launch's error says it in its words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outage {
    /// A restart is under way and another call waits for it.
    Restarting,
    /// The child went down (`last` says why) and is tried again in `retry_in`.
    Down { last: String, retry_in: Duration },
    /// The supervisor stopped starting the child, for good: `fail_class` is that of the failure
    /// that made it stop.
    GaveUp {
        failures: u32,
        last: String,
        fail_class: FailClass,
    },
    /// The supervisor was shut down.
    ShuttingDown,
    /// The start's task ended without an outcome (it panicked).
    Interrupted(String),
}

/// Where the supervised child is in its life, as callers read it ([`Supervisor::state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// Nothing started yet (or the program could not be run: the next call tries again).
    NotStarted,
    /// A start (or restart) is under way.
    Starting,
    /// A live child.
    Ready,
    /// Down after a failure; started again at `retry_at`.
    Failed { retry_at: Instant },
    /// Given up on, for good.
    GaveUp,
    /// Shut down.
    Stopped,
}

enum Phase<P> {
    Idle,
    /// A start is running; `first`: no start has succeeded yet; `awaited`: a call waits for it
    /// (the call that ran it, or the first call to come during a restart the supervisor ran).
    Starting {
        first: bool,
        awaited: bool,
    },
    /// `failures`: consecutive failures before this start, carried in case it dies young.
    Up {
        process: P,
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

struct Inner<L: Launch> {
    /// This supervisor, for the tasks it spawns (a restart, a watch on the live child).
    me: Weak<Inner<L>>,
    launch: L,
    policy: RestartPolicy,
    phase: Mutex<Phase<L::Process>>,
    status: Mutex<Option<L::Status>>,
    /// Counts settled starts (successful or not), for the calls that wait on the first one.
    settled: watch::Sender<u64>,
    /// Counts successful starts; front ends watch it to refresh after a restart.
    starts: watch::Sender<u64>,
    /// The restart waiting for its time (at most one: a new failure replaces it).
    pending: Mutex<Option<JoinHandle<()>>>,
}

/// Owns at most one child at a time; see the module doc.
pub struct Supervisor<L: Launch> {
    inner: Arc<Inner<L>>,
}

impl<L: Launch> std::fmt::Debug for Supervisor<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("starts", &*self.inner.starts.borrow())
            .finish()
    }
}

impl<L: Launch> Supervisor<L> {
    pub fn new(launch: L, policy: RestartPolicy) -> Supervisor<L> {
        Supervisor {
            inner: Arc::new_cyclic(|me| Inner {
                me: me.clone(),
                launch,
                policy,
                phase: Mutex::new(Phase::Idle),
                status: Mutex::new(None),
                settled: watch::Sender::new(0),
                starts: watch::Sender::new(0),
                pending: Mutex::new(None),
            }),
        }
    }

    /// What starts the child.
    pub fn launch(&self) -> &L {
        &self.inner.launch
    }

    /// A client of a live child: starts or restarts it when it is due, otherwise fails fast with an
    /// [`Outage`] that says why it is down (or that a start is under way) and when it will be tried
    /// again.
    pub async fn client(&self) -> Result<L::Client, L::Error> {
        let mut waited = false;
        let failures = loop {
            let mut settled = self.inner.settled.subscribe();
            match self.inner.next_step(waited) {
                Step::Ready(outcome) => return outcome,
                Step::Start(failures) => break failures,
                Step::Wait => {
                    waited = true;
                    // Subscribed before the phase was read: a start that settled since is seen.
                    let _ = settled.changed().await;
                }
            }
        };
        let inner = self.inner.clone();
        match tokio::spawn(async move { inner.start(failures).await }).await {
            Ok(outcome) => outcome,
            Err(e) => Err(Outage::Interrupted(e.to_string()).into()),
        }
    }

    /// Where the child is in its life (a live child found dead or hung is taken as down).
    pub fn state(&self) -> Lifecycle {
        let mut phase = self.inner.lock();
        self.inner.check_up(&mut phase);
        match &*phase {
            Phase::Idle => Lifecycle::NotStarted,
            Phase::Starting { .. } => Lifecycle::Starting,
            Phase::Up { .. } => Lifecycle::Ready,
            Phase::Down { retry_at, .. } => Lifecycle::Failed {
                retry_at: *retry_at,
            },
            Phase::GivenUp { .. } => Lifecycle::GaveUp,
            Phase::Stopped => Lifecycle::Stopped,
        }
    }

    /// The client of the live child, if there is one (a child found dead or hung is taken as
    /// down); never starts one.
    pub fn live(&self) -> Option<L::Client> {
        let mut phase = self.inner.lock();
        self.inner.check_up(&mut phase)
    }

    /// The live child did its work: its count of failures in a row starts afresh.
    pub fn succeeded(&self) {
        if let Phase::Up { failures, .. } = &mut *self.inner.lock() {
            *failures = 0;
        }
    }

    /// Resolves once no start is under way.
    pub async fn settled(&self) {
        loop {
            let mut settled = self.inner.settled.subscribe();
            if !matches!(*self.inner.lock(), Phase::Starting { .. }) {
                return;
            }
            // Subscribed before the phase was read: a start that settled since is seen.
            if settled.changed().await.is_err() {
                return;
            }
        }
    }

    /// What the last successful start's handshake answered (kept across an outage).
    pub fn last_status(&self) -> Option<L::Status> {
        lock(&self.inner.status).clone()
    }

    /// Watches the number of successful starts (1 after the first start, 2 after a restart…).
    pub fn starts(&self) -> watch::Receiver<u64> {
        self.inner.starts.subscribe()
    }

    /// Shuts the child down (fixed escalation) and refuses further calls; a restart waiting for its
    /// time is cancelled, and a start under way is stopped as soon as it completes.
    pub async fn shutdown(&self) {
        let previous = std::mem::replace(&mut *self.inner.lock(), Phase::Stopped);
        // Restarts are scheduled under the phase lock, so none can be scheduled after `Stopped`.
        let pending = lock(&self.inner.pending).take();
        if let Some(pending) = pending {
            pending.abort();
            let _ = pending.await;
        }
        if let Phase::Up { process, .. } = previous {
            let status = L::shutdown(process).await;
            tracing::debug!(%status, "child stopped");
        }
    }
}

impl<L: Launch> Drop for Supervisor<L> {
    /// A supervisor dropped without `shutdown` starts nothing more (its child, if any, goes with it).
    fn drop(&mut self) {
        if let Some(pending) = lock(&self.inner.pending).take() {
            pending.abort();
        }
    }
}

/// Leaves `Starting` for `Down` if a start ends without an outcome (its launch panicked or its
/// task was dropped), so no call waits on it for ever.
struct Unsettled<'a, L: Launch> {
    inner: &'a Inner<L>,
    failures: u32,
    armed: bool,
}

impl<L: Launch> Drop for Unsettled<'_, L> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        {
            let mut phase = self.inner.lock();
            if matches!(*phase, Phase::Starting { .. }) {
                let last = "a start was interrupted";
                let why = Outage::Interrupted(last.into()).into();
                *phase = self
                    .inner
                    .after_failure(self.failures + 1, &why, last.into());
            }
        }
        self.inner.settled.send_modify(|n| *n += 1);
    }
}

/// What a call to [`Supervisor::client`] does next.
enum Step<C, E> {
    Ready(Result<C, E>),
    /// Start the child (the phase is `Starting` now), after this many consecutive failures.
    Start(u32),
    /// Wait for the start under way (the first one, or a restart no other call waits for).
    Wait,
}

impl<L: Launch> Inner<L> {
    fn lock(&self) -> MutexGuard<'_, Phase<L::Process>> {
        lock(&self.phase)
    }

    /// Decides under the lock, without waiting. `waited`: this call already waited for a start, so
    /// it reports that start's outcome rather than starting another.
    fn next_step(&self, waited: bool) -> Step<L::Client, L::Error> {
        let mut phase = self.lock();
        if let Some(ready) = self.check_up(&mut phase) {
            return Step::Ready(Ok(ready));
        }
        let failures = match &mut *phase {
            Phase::Up { .. } => unreachable!("check_up handles a live child"),
            Phase::Starting { first, .. } if !waited && (*first || self.policy.share_restarts) => {
                return Step::Wait;
            }
            // A restart that came due before this call: the call waits for it as it would have
            // waited for the start it ran itself; calls that come meanwhile fail fast.
            Phase::Starting { awaited, .. } if !waited && !*awaited => {
                *awaited = true;
                return Step::Wait;
            }
            Phase::Starting { .. } => return Step::Ready(Err(Outage::Restarting.into())),
            Phase::Stopped => return Step::Ready(Err(Outage::ShuttingDown.into())),
            Phase::GivenUp {
                failures,
                last,
                class,
            } => {
                return Step::Ready(Err(Outage::GaveUp {
                    failures: *failures,
                    last: last.clone(),
                    fail_class: *class,
                }
                .into()));
            }
            Phase::Down { retry_at, last, .. } if waited || Instant::now() < *retry_at => {
                return Step::Ready(Err(Outage::Down {
                    last: last.clone(),
                    retry_in: retry_at.saturating_duration_since(Instant::now()),
                }
                .into()));
            }
            Phase::Down { failures, .. } => *failures,
            Phase::Idle => 0,
        };
        let first = *self.starts.borrow() == 0;
        *phase = Phase::Starting {
            first,
            awaited: true,
        };
        Step::Start(failures)
    }

    /// The client of a healthy live child; a child found dead or hung is dropped (which kills what
    /// is left of it) and the phase moves on to `Down` or `GivenUp`.
    fn check_up(&self, phase: &mut Phase<L::Process>) -> Option<L::Client> {
        let Phase::Up {
            process,
            since,
            failures,
        } = &*phase
        else {
            return None;
        };
        let peer = L::peer(process);
        let missed = peer.missed_deadlines_in_a_row();
        let hung = (missed >= self.policy.max_missed_deadlines).then(|| Error::Unavailable {
            role: peer.role(),
            why: format!("it missed {missed} deadlines in a row"),
        });
        let Some(why) = peer.closed_reason().or(hung).map(L::Error::from) else {
            return Some(L::client(process));
        };
        let failures = if since.elapsed() >= self.policy.stable_after {
            1
        } else {
            failures + 1
        };
        tracing::warn!(%why, "supervised child went down");
        *phase = self.after_failure(failures, &why, why.to_string());
        None
    }

    async fn start(&self, failures: u32) -> Result<L::Client, L::Error> {
        let mut unsettled = Unsettled {
            inner: self,
            failures,
            armed: true,
        };
        let outcome = self.launch.launch().await;
        unsettled.armed = false;
        let settled = self.settle(failures, outcome);
        self.settled.send_modify(|n| *n += 1);
        let late = match settled {
            Ok(client) => return client,
            Err(late) => late,
        };
        // Shut down while this start ran: the new child goes at once.
        if let Some(process) = late {
            L::shutdown(process).await;
        }
        Err(Outage::ShuttingDown.into())
    }

    /// Records the outcome of a start; `Err` with the new child when the supervisor was shut down
    /// meanwhile.
    fn settle(&self, failures: u32, outcome: Started<L>) -> Result<Outcome<L>, Option<L::Process>> {
        let mut phase = self.lock();
        if matches!(*phase, Phase::Stopped) {
            return Err(outcome.ok().map(|(process, _)| process));
        }
        Ok(match outcome {
            Ok((process, status)) => {
                let client = L::client(&process);
                let peer = L::peer(&process).clone();
                *lock(&self.status) = Some(status);
                *phase = Phase::Up {
                    process,
                    since: Instant::now(),
                    failures,
                };
                drop(phase);
                self.starts.send_modify(|n| *n += 1);
                self.watch_exit(peer);
                Ok(client)
            }
            Err(error) => {
                *phase = match L::start_failure(&error) {
                    StartFailure::Final(class) => Phase::GivenUp {
                        failures: failures + 1,
                        last: error.to_string(),
                        class,
                    },
                    StartFailure::Uncounted => Phase::Idle,
                    StartFailure::Counted => {
                        self.after_failure(failures + 1, &error, error.to_string())
                    }
                };
                Err(error)
            }
        })
    }

    /// The phase after a failure that counts; `last` says `why` to callers.
    fn after_failure(&self, failures: u32, why: &L::Error, last: String) -> Phase<L::Process> {
        let gave_up = failures >= self.policy.max_failures;
        self.launch.failed(why, failures, gave_up);
        if gave_up {
            tracing::error!(failures, %last, "giving up on the supervised child");
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
        let retry_at = Instant::now() + delay;
        if self.policy.restart_unasked {
            self.schedule_restart(retry_at);
        }
        Phase::Down {
            retry_at,
            failures,
            last,
        }
    }

    /// Starts the child again once `retry_at` comes, unless something else (a call, a shutdown)
    /// moved the phase on meanwhile. Called under the phase lock, as the phase becomes `Down`.
    fn schedule_restart(&self, retry_at: Instant) {
        let (Some(inner), Ok(runtime)) = (self.me.upgrade(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let task = runtime.spawn(async move {
            tokio::time::sleep_until(retry_at.into()).await;
            let failures = {
                let mut phase = inner.lock();
                let Phase::Down {
                    retry_at: due,
                    failures,
                    ..
                } = &*phase
                else {
                    return;
                };
                if *due != retry_at {
                    return;
                }
                let failures = *failures;
                *phase = Phase::Starting {
                    first: *inner.starts.borrow() == 0,
                    awaited: false,
                };
                failures
            };
            // On a task of its own: cancelling this restart (shutdown) never cuts a start short.
            tokio::spawn(async move {
                if let Err(why) = inner.start(failures).await {
                    tracing::debug!(%why, "a restart failed");
                }
            });
        });
        if let Some(previous) = lock(&self.pending).replace(task) {
            previous.abort();
        }
    }

    /// Notices a live child's connection closing without waiting for a call to find it dead.
    fn watch_exit(&self, peer: Peer) {
        let me = self.me.clone();
        tokio::spawn(async move {
            peer.closed().await;
            if let Some(inner) = me.upgrade() {
                let mut phase = inner.lock();
                inner.check_up(&mut phase);
            }
        });
    }
}

#[cfg(test)]
mod tests;
