//! Tests of the supervisor's lifecycle over in-memory children: what [`Supervisor::state`] says at
//! each step, and how each kind of failed start counts.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{BufReader, DuplexStream};

use super::*;
use crate::peer::{ExitProbe, NoRequests, PeerConfig};

/// A child's error as a test sees it.
#[derive(Debug)]
enum TestError {
    Launch(StartFailure),
    Peer(String),
    Outage(Outage),
}

impl From<Outage> for TestError {
    fn from(outage: Outage) -> TestError {
        TestError::Outage(outage)
    }
}

impl From<Error> for TestError {
    fn from(error: Error) -> TestError {
        TestError::Peer(error.to_string())
    }
}

impl std::fmt::Display for TestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TestError::Peer(why) => f.write_str(why),
            other => write!(f, "{other:?}"),
        }
    }
}

/// Children over duplex pipes: each start takes the next planned outcome (a start succeeds once
/// the plan is empty); the far end of each live child is kept until the test ends it.
#[derive(Default)]
struct Children {
    plan: Mutex<VecDeque<StartFailure>>,
    far_ends: Arc<Mutex<Vec<DuplexStream>>>,
    /// What [`Launch::failed`] was told: the count in a row, and whether it gave up.
    told: Mutex<Vec<(u32, bool)>>,
}

impl Children {
    fn planned(failures: &[StartFailure]) -> Children {
        Children {
            plan: Mutex::new(failures.iter().copied().collect()),
            ..Children::default()
        }
    }
}

impl Launch for Children {
    type Process = Peer;
    type Client = Peer;
    type Status = u32;
    type Error = TestError;

    fn launch(&self) -> BoxFuture<'static, Result<(Peer, u32), TestError>> {
        let planned = lock(&self.plan).pop_front();
        let far_ends = self.far_ends.clone();
        Box::pin(async move {
            if let Some(failure) = planned {
                return Err(TestError::Launch(failure));
            }
            let (near, far) = tokio::io::duplex(1 << 16);
            let (reader, writer) = tokio::io::split(near);
            let probe: ExitProbe =
                Box::new(|| Box::pin(async { (ExitStatus::Code(3), String::new()) }));
            let peer = Peer::connect(
                BufReader::new(reader),
                writer,
                PeerConfig::default(),
                Arc::new(NoRequests),
                probe,
            );
            let mut far_ends = lock(&far_ends);
            far_ends.push(far);
            Ok((peer, u32::try_from(far_ends.len()).unwrap_or(u32::MAX)))
        })
    }

    fn client(process: &Peer) -> Peer {
        process.clone()
    }

    fn peer(process: &Peer) -> &Peer {
        process
    }

    fn shutdown(process: Peer) -> BoxFuture<'static, ExitStatus> {
        Box::pin(async move {
            process.close_input();
            ExitStatus::Unknown
        })
    }

    fn start_failure(error: &TestError) -> StartFailure {
        match error {
            TestError::Launch(failure) => *failure,
            _ => StartFailure::Counted,
        }
    }

    fn failed(&self, _why: &TestError, failures: u32, gave_up: bool) {
        lock(&self.told).push((failures, gave_up));
    }
}

fn policy(initial_delay: Duration, max_failures: u32) -> RestartPolicy {
    RestartPolicy {
        initial_delay,
        max_failures,
        max_delay: Duration::from_secs(7200),
        ..RestartPolicy::default()
    }
}

/// A supervisor of [`Children`] under `policy` whose first child was started and has died.
async fn with_a_dead_child(policy: RestartPolicy) -> Supervisor<Children> {
    let supervisor = Supervisor::new(Children::default(), policy);
    let child = supervisor.client().await.unwrap();
    lock(&supervisor.launch().far_ends).clear();
    child.closed().await;
    supervisor
}

#[tokio::test]
async fn the_state_follows_a_child_through_its_life() {
    let supervisor = Supervisor::new(Children::default(), policy(Duration::from_secs(3600), 8));
    assert_eq!(supervisor.state(), Lifecycle::NotStarted);
    let child = supervisor.client().await.unwrap();
    assert_eq!(supervisor.state(), Lifecycle::Ready);
    assert_eq!(supervisor.last_status(), Some(1));

    // The far end goes: the child is down until its restart is due.
    lock(&supervisor.launch().far_ends).clear();
    child.closed().await;
    assert!(matches!(supervisor.state(), Lifecycle::Failed { .. }));
    let Err(TestError::Outage(Outage::Down { last, retry_in })) = supervisor.client().await else {
        panic!("a child that went down is down until its restart");
    };
    assert!(last.contains("exited with status 3"), "{last}");
    assert!(retry_in > Duration::from_secs(3000), "{retry_in:?}");
    assert_eq!(supervisor.last_status(), Some(1), "kept through the outage");

    supervisor.shutdown().await;
    assert_eq!(supervisor.state(), Lifecycle::Stopped);
    assert!(matches!(
        supervisor.client().await,
        Err(TestError::Outage(Outage::ShuttingDown))
    ));
}

#[tokio::test]
async fn a_final_start_failure_gives_up_at_once_with_its_class() {
    let children = Children::planned(&[StartFailure::Final(FailClass::Contract)]);
    let supervisor = Supervisor::new(children, policy(Duration::ZERO, 8));
    assert!(matches!(
        supervisor.client().await,
        Err(TestError::Launch(_))
    ));
    assert_eq!(supervisor.state(), Lifecycle::GaveUp);
    let Err(TestError::Outage(Outage::GaveUp {
        failures,
        fail_class,
        ..
    })) = supervisor.client().await
    else {
        panic!("given up on");
    };
    assert_eq!((failures, fail_class), (1, FailClass::Contract));
}

#[tokio::test]
async fn an_uncounted_start_failure_is_tried_again_at_once() {
    let supervisor = Supervisor::new(
        Children::planned(&[StartFailure::Uncounted; 3]),
        policy(Duration::from_secs(3600), 1),
    );
    for _ in 0..3 {
        assert!(matches!(
            supervisor.client().await,
            Err(TestError::Launch(StartFailure::Uncounted))
        ));
        assert_eq!(supervisor.state(), Lifecycle::NotStarted);
    }
    supervisor.client().await.unwrap();
    assert_eq!(supervisor.state(), Lifecycle::Ready);
    supervisor.shutdown().await;
}

#[tokio::test]
async fn counted_start_failures_grow_the_delay_then_give_up() {
    let counted = [StartFailure::Counted; 3];
    let supervisor = Supervisor::new(
        Children::planned(&counted),
        policy(Duration::from_secs(1800), 2),
    );
    assert!(supervisor.client().await.is_err());
    let Lifecycle::Failed { retry_at } = supervisor.state() else {
        panic!("one failure is not yet giving up");
    };
    let delay = retry_at.saturating_duration_since(Instant::now());
    assert!(delay > Duration::from_secs(1700), "{delay:?}");
    assert!(matches!(
        supervisor.client().await,
        Err(TestError::Outage(Outage::Down { .. }))
    ));
    supervisor.shutdown().await;

    // With no delay, the supervisor's own restart fails too, and it gives up after the second.
    let supervisor = Supervisor::new(Children::planned(&counted), policy(Duration::ZERO, 2));
    assert!(supervisor.client().await.is_err());
    let given_up = loop {
        match supervisor.client().await {
            Err(TestError::Outage(Outage::GaveUp { failures, .. })) => break failures,
            Err(_) => tokio::task::yield_now().await,
            Ok(_) => panic!("two failures give up before the third start"),
        }
    };
    assert_eq!(given_up, 2);
    assert_eq!(supervisor.state(), Lifecycle::GaveUp);
}

#[tokio::test]
async fn without_restart_unasked_the_next_call_restarts_the_child() {
    let policy = RestartPolicy {
        restart_unasked: false,
        ..policy(Duration::ZERO, 8)
    };
    let supervisor = with_a_dead_child(policy).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(matches!(supervisor.state(), Lifecycle::Failed { .. }));
    assert_eq!(
        *supervisor.starts().borrow(),
        1,
        "nothing restarted it unasked"
    );
    assert!(supervisor.live().is_none());
    supervisor.client().await.unwrap();
    assert_eq!(*supervisor.starts().borrow(), 2);
    assert_eq!(*lock(&supervisor.launch().told), [(1, false)]);
    supervisor.shutdown().await;
}

#[tokio::test]
async fn with_share_restarts_every_call_during_a_restart_waits_for_it() {
    let policy = RestartPolicy {
        restart_unasked: false,
        share_restarts: true,
        ..policy(Duration::ZERO, 8)
    };
    let supervisor = with_a_dead_child(policy).await;
    let (a, b, c) = tokio::join!(
        supervisor.client(),
        supervisor.client(),
        supervisor.client()
    );
    assert!(a.is_ok() && b.is_ok() && c.is_ok());
    assert_eq!(
        *supervisor.starts().borrow(),
        2,
        "one restart for the three calls"
    );
    supervisor.settled().await;
    assert!(supervisor.live().is_some());
    supervisor.shutdown().await;
}

#[tokio::test]
async fn a_success_starts_the_count_of_failures_afresh() {
    let policy = RestartPolicy {
        restart_unasked: false,
        stable_after: Duration::MAX,
        ..policy(Duration::ZERO, 2)
    };
    let supervisor = Supervisor::new(Children::default(), policy);
    for _ in 0..3 {
        let child = supervisor.client().await.unwrap();
        supervisor.succeeded();
        lock(&supervisor.launch().far_ends).clear();
        child.closed().await;
        assert!(matches!(supervisor.state(), Lifecycle::Failed { .. }));
    }
    assert_eq!(*lock(&supervisor.launch().told), [(1, false); 3]);

    // Without a success in between, the second crash in a row gives up.
    let child = supervisor.client().await.unwrap();
    lock(&supervisor.launch().far_ends).clear();
    child.closed().await;
    assert_eq!(supervisor.state(), Lifecycle::GaveUp);
    assert_eq!(lock(&supervisor.launch().told).last(), Some(&(2, true)));
}
