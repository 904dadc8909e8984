//! Supervision with real child processes (small `sh` hosts): lazy start, fail-fast outage (also
//! while a start is under way), restart with a growing delay (by the supervisor itself, with no
//! call asking), giving up visibly, and the handshake's status kept for callers.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bridge_core::host::{HostLaunch, Launch, StartFailure};
use bridge_core::{Error, HostCommand, HostConfig, RestartPolicy, Supervisor};
use rpc_peer::peer::{BoxFuture, Peer};
use rpc_peer::{ExitStatus, FailClass};

const STATUS: &str = r#"{"jsonrpc":"2.0","id":ID,"result":{"host":{"name":"sh-host","version":"1","outerProtocol":"PROTO","state":"ready"}}}"#;

/// A host that answers the handshake (and `answers` more `host/status` calls), then exits 3 on the
/// next request. `read` keeps the ids in step: the bridge numbers its requests from 1.
fn host(answers: usize, proto: &str) -> HostConfig {
    let mut script = String::new();
    for id in 1..=answers + 1 {
        let reply = STATUS
            .replace("ID", &id.to_string())
            .replace("PROTO", proto);
        script.push_str(&format!("read line; echo '{reply}'; "));
    }
    script.push_str("read line; echo 'sh-host: dying' >&2; exit 3");
    let command = HostCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script],
    };
    HostConfig::new(command, Path::new("/").to_path_buf())
}

/// The host `config` names, supervised.
fn supervise(config: HostConfig, policy: RestartPolicy) -> Supervisor {
    Supervisor::new(HostLaunch(config), policy)
}

fn policy(initial_delay: Duration, max_failures: u32) -> RestartPolicy {
    RestartPolicy {
        initial_delay,
        max_failures,
        ..RestartPolicy::default()
    }
}

#[tokio::test]
async fn the_host_starts_on_first_use_and_restarts_after_a_crash() {
    let supervisor = supervise(host(0, "asp-outer/1.0"), policy(Duration::ZERO, 8));
    let starts = supervisor.starts();
    assert_eq!(
        *starts.borrow(),
        0,
        "nothing is started before it is needed"
    );

    let client = supervisor.client().await.expect("first start");
    assert_eq!(*starts.borrow(), 1);
    let crash = client.status().await.unwrap_err();
    assert!(
        crash.to_string().contains("exited with status 3"),
        "{crash}"
    );

    // With no restart delay, a new host is started at once (by the supervisor or by a call).
    let mut starts = starts;
    tokio::time::timeout(Duration::from_secs(60), starts.wait_for(|n| *n >= 2))
        .await
        .expect("the host is restarted")
        .expect("the supervisor is alive");
    let client = supervisor.client().await.expect("restart");
    assert_eq!(*starts.borrow(), 2);
    assert!(!client.is_closed());
    supervisor.shutdown().await;
}

#[tokio::test]
async fn during_the_restart_delay_calls_fail_fast_with_a_health_error() {
    let supervisor = supervise(host(0, "asp-outer/1.0"), policy(Duration::from_secs(60), 8));
    let client = supervisor.client().await.unwrap();
    let _ = client.status().await;
    client.closed().await;
    let err = supervisor.client().await.unwrap_err();
    assert_eq!(err.fail_class(), FailClass::Health);
    let text = err.to_string();
    assert!(
        text.contains("host exited with status 3") && text.contains("restarting in"),
        "{text}"
    );
}

#[tokio::test]
async fn a_host_that_keeps_dying_is_given_up_on() {
    let command = HostCommand {
        program: "sh".into(),
        args: vec!["-c".into(), "exit 9".into()],
    };
    let supervisor = supervise(
        HostConfig::new(command, "/".into()),
        policy(Duration::ZERO, 3),
    );
    assert!(matches!(
        supervisor.client().await,
        Err(Error::Peer(rpc_peer::Error::Exited { .. }))
    ));
    // The supervisor tries again by itself; until it gives up, calls see a health failure.
    let err = loop {
        match supervisor.client().await {
            Err(err @ Error::GaveUp { .. }) => break err,
            Err(err) => assert_eq!(err.fail_class(), FailClass::Health, "{err}"),
            Ok(_) => panic!("this host never starts"),
        }
        tokio::task::yield_now().await;
    };
    assert!(
        err.to_string().contains("gave up after 3 failed starts"),
        "{err}"
    );
    assert_eq!(err.fail_class(), FailClass::Health);
    assert!(
        !err.retryable(),
        "given up on for good: calling again cannot help"
    );
    assert!(err.to_string().contains("restart asp-bridge"), "{err}");
}

#[tokio::test]
async fn a_contract_refusal_is_not_retried() {
    let supervisor = supervise(host(0, "asp-outer/2.0"), policy(Duration::ZERO, 8));
    let first = supervisor.client().await.unwrap_err();
    assert_eq!(first.fail_class(), FailClass::Contract);
    let again = supervisor.client().await.unwrap_err();
    assert!(
        again.to_string().contains("unsupported outerProtocol"),
        "{again}"
    );
    assert!(
        again.to_string().contains("gave up after 1 failed start"),
        "{again}"
    );
    assert_eq!(
        again.fail_class(),
        FailClass::Contract,
        "given up on for a contract reason, it stays a contract failure"
    );
    assert!(!again.retryable(), "retrying cannot help");
}

#[tokio::test]
async fn after_shutdown_calls_are_refused() {
    let supervisor = supervise(host(1, "asp-outer/1.0"), policy(Duration::ZERO, 8));
    supervisor.client().await.unwrap();
    supervisor.shutdown().await;
    let err = supervisor.client().await.unwrap_err();
    assert!(err.to_string().contains("shutting down"), "{err}");
}

#[tokio::test]
async fn a_host_that_misses_three_deadlines_in_a_row_is_replaced() {
    // Answers the handshake, then reads requests and never answers them.
    let reply = STATUS.replace("ID", "1").replace("PROTO", "asp-outer/1.0");
    let script = format!("read line; echo '{reply}'; cat >/dev/null");
    let command = HostCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script],
    };
    let mut config = HostConfig::new(command, "/".into());
    config.client.request_timeout = Duration::from_millis(50);
    let supervisor = supervise(config, policy(Duration::ZERO, 8));
    let starts = supervisor.starts();
    for missed in 1..=3 {
        let client = supervisor.client().await.unwrap();
        assert!(matches!(
            client.status().await,
            Err(Error::Peer(rpc_peer::Error::Timeout { .. }))
        ));
        assert_eq!(client.missed_deadlines_in_a_row(), missed);
        assert_eq!(
            *starts.borrow(),
            1,
            "two missed deadlines are not yet a hung host"
        );
    }
    let replacement = supervisor.client().await.unwrap();
    assert_eq!(*starts.borrow(), 2, "the hung host was replaced");
    assert_eq!(replacement.missed_deadlines_in_a_row(), 0);
    supervisor.shutdown().await;
}

#[tokio::test]
async fn calls_during_the_first_start_share_it() {
    let supervisor = supervise(host(1, "asp-outer/1.0"), policy(Duration::ZERO, 8));
    let (a, b, c) = tokio::join!(
        supervisor.client(),
        supervisor.client(),
        supervisor.client()
    );
    assert!(a.is_ok() && b.is_ok() && c.is_ok());
    assert_eq!(
        *supervisor.starts().borrow(),
        1,
        "one host for the three calls"
    );
    supervisor.shutdown().await;
}

#[tokio::test]
async fn calls_during_a_restart_fail_fast_and_the_handshake_status_is_kept() {
    // The first host answers the handshake and dies on the next request; the second answers its
    // handshake only once the test creates `go`.
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let reply = STATUS.replace("ID", "1").replace("PROTO", "asp-outer/1.0");
    let script = format!(
        "if [ ! -e '{started}' ]; then : > '{started}'; read line; echo '{reply}'; read line; exit 3; \
         else read line; while [ ! -e '{go}' ]; do sleep 0.02; done; echo '{reply}'; cat >/dev/null; fi",
        started = started.display(),
        go = go.display()
    );
    let command = HostCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script],
    };
    let mut config = HostConfig::new(command, "/".into());
    config.handshake_timeout = Duration::from_secs(60);
    let supervisor = supervise(config, policy(Duration::ZERO, 8));
    assert!(supervisor.last_status().is_none());
    let client = supervisor.client().await.unwrap();
    assert_eq!(supervisor.last_status().unwrap().host.name, "sh-host");
    assert!(client.status().await.is_err(), "the first host dies");
    client.closed().await;

    // The supervisor restarts the host by itself (or this call does, if it comes first); either
    // way this call, the first once the restart is due, waits for it: one poll sets that up.
    let mut restart = Box::pin(supervisor.client());
    tokio::select! {
        biased;
        _ = &mut restart => panic!("the handshake cannot be done yet"),
        () = std::future::ready(()) => {}
    }
    // Meanwhile another call fails fast instead of waiting for the handshake.
    let err = supervisor.client().await.unwrap_err();
    assert_eq!(err.fail_class(), FailClass::Health);
    assert!(err.retryable());
    assert!(err.to_string().contains("restarting"), "{err}");
    assert!(
        supervisor.last_status().is_some(),
        "the last status is kept through the outage"
    );

    std::fs::write(&go, "").unwrap();
    let client = restart.await.expect("the restart completes");
    assert!(!client.is_closed());
    assert_eq!(*supervisor.starts().borrow(), 2);
    supervisor.shutdown().await;
}

#[tokio::test]
async fn a_program_that_cannot_be_run_is_tried_again_at_once_and_never_given_up_on() {
    let command = HostCommand {
        program: "/nonexistent/asp-host".into(),
        args: Vec::new(),
    };
    let config = HostConfig::new(command, Path::new("/").to_path_buf());
    // A long restart delay and a single allowed failure: neither applies to a spawn failure.
    let supervisor = supervise(config, policy(Duration::from_secs(3600), 1));
    for _ in 0..3 {
        let error = supervisor.client().await.unwrap_err();
        assert!(
            matches!(error, Error::Peer(rpc_peer::Error::Spawn { .. })),
            "tried again, not delayed or given up: {error}"
        );
        assert!(!error.retryable());
        assert_eq!(error.fail_class(), FailClass::Health);
    }
}

/// A host whose first run answers the handshake and exits on its own at once; later runs stay up.
fn host_that_crashes_once(dir: &Path) -> HostConfig {
    let started = dir.join("started");
    let reply = STATUS.replace("ID", "1").replace("PROTO", "asp-outer/1.0");
    let script = format!(
        "if [ ! -e '{started}' ]; then : > '{started}'; read line; echo '{reply}'; exit 3; \
         else read line; echo '{reply}'; cat >/dev/null; fi",
        started = started.display()
    );
    let command = HostCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script],
    };
    HostConfig::new(command, "/".into())
}

#[tokio::test]
async fn a_crashed_host_comes_back_with_no_caller_asking() {
    let dir = tempfile::tempdir().unwrap();
    let supervisor = supervise(
        host_that_crashes_once(dir.path()),
        policy(Duration::from_millis(1), 8),
    );
    let mut starts = supervisor.starts();
    let client = supervisor.client().await.expect("first start");
    assert_eq!(*starts.borrow_and_update(), 1);
    client.closed().await;

    // Nobody calls `client()` again: the supervisor restarts the host by itself.
    let restarted = tokio::time::timeout(Duration::from_secs(60), starts.wait_for(|n| *n >= 2))
        .await
        .expect("the host is restarted without a call")
        .map(|n| *n)
        .expect("the supervisor is alive");
    assert_eq!(restarted, 2);
    let client = supervisor.client().await.expect("the restarted host");
    assert!(!client.is_closed());
    assert_eq!(*supervisor.starts().borrow(), 2, "one restart, not a storm");
    supervisor.shutdown().await;
}

/// The host launch, with a token that lives as long as the supervisor's state does.
struct Tracked {
    launch: HostLaunch,
    _alive: Arc<()>,
}

impl Launch for Tracked {
    type Process = <HostLaunch as Launch>::Process;
    type Client = <HostLaunch as Launch>::Client;
    type Status = <HostLaunch as Launch>::Status;
    type Error = Error;

    fn launch(&self) -> BoxFuture<'static, bridge_core::Result<(Self::Process, Self::Status)>> {
        self.launch.launch()
    }

    fn client(process: &Self::Process) -> Self::Client {
        HostLaunch::client(process)
    }

    fn peer(process: &Self::Process) -> &Peer {
        HostLaunch::peer(process)
    }

    fn shutdown(process: Self::Process) -> BoxFuture<'static, ExitStatus> {
        HostLaunch::shutdown(process)
    }

    fn start_failure(error: &Error) -> StartFailure {
        HostLaunch::start_failure(error)
    }
}

#[tokio::test]
async fn shutdown_cancels_a_restart_waiting_for_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let alive = Arc::new(());
    let launch = Tracked {
        launch: HostLaunch(host_that_crashes_once(dir.path())),
        _alive: alive.clone(),
    };
    let supervisor = Supervisor::new(launch, policy(Duration::from_secs(3600), 8));
    let client = supervisor.client().await.unwrap();
    client.closed().await;
    let err = supervisor.client().await.unwrap_err();
    assert!(err.to_string().contains("restarting in"), "{err}");

    supervisor.shutdown().await;
    drop(supervisor);
    assert_eq!(
        Arc::strong_count(&alive),
        1,
        "no restart task is left holding the supervisor"
    );
}
