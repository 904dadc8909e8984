//! The host as a real child process (small `sh` scripts): exit status and stderr reach the caller,
//! and the shutdown escalation ends even a host that ignores `shutdown`, stdin and SIGTERM.

use std::path::Path;
use std::time::Duration;

use bridge_core::{Error, HostCommand, HostConfig, HostProcess};
use rpc_peer::ExitStatus;
use test_support::process::{ended, ends};

fn sh(script: &str) -> HostConfig {
    let command = HostCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
    };
    let mut config = HostConfig::new(command, Path::new("/").to_path_buf());
    config.handshake_timeout = Duration::from_secs(5);
    config
}

#[tokio::test]
async fn a_crash_mid_request_names_the_exit_status_and_stderr_tail() {
    let process =
        HostProcess::spawn(&sh("read line; echo 'fatal: index corrupt' >&2; exit 4")).unwrap();
    let err = process.client().status().await.unwrap_err();
    match &err {
        Error::Peer(rpc_peer::Error::Exited {
            role,
            status,
            stderr_tail,
        }) => {
            assert_eq!(*role, rpc_peer::Role::Host);
            assert_eq!(*status, ExitStatus::Code(4));
            assert_eq!(stderr_tail, "fatal: index corrupt");
        }
        other => panic!("expected HostExited, got {other}"),
    }
    assert_eq!(process.shutdown().await, ExitStatus::Code(4));
}

#[tokio::test]
async fn a_host_that_ignores_everything_is_killed_by_the_escalation() {
    // Ignores SIGTERM and never reads stdin: only SIGKILL ends it.
    let process = HostProcess::spawn(&sh("trap '' TERM; while :; do sleep 1; done")).unwrap();
    // Signal 9 proves the last step ran: `shutdown`, closing stdin and SIGTERM did nothing.
    assert_eq!(process.shutdown().await, ExitStatus::Signal(9));
}

#[tokio::test]
async fn a_host_that_answers_shutdown_and_exits_on_eof_gets_no_signal() {
    // Answers `shutdown` (the first request, id 1), then exits when stdin closes.
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
    let process =
        HostProcess::spawn(&sh(&format!("read line; echo '{answer}'; cat >/dev/null"))).unwrap();
    assert_eq!(process.shutdown().await, ExitStatus::Code(0));
}

#[tokio::test]
async fn the_handshake_refuses_an_unsupported_outer_protocol() {
    let status = r#"{"jsonrpc":"2.0","id":1,"result":{"host":{"name":"h","version":"9","outerProtocol":"asp-outer/2.0","state":"ready"}}}"#;
    let err = HostProcess::start(&sh(&format!("read line; echo '{status}'; cat >/dev/null")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::UnsupportedProtocol { ref found } if found == "asp-outer/2.0"),
        "{err}"
    );
}

/// A host script that first starts a helper in its process group and writes the helper's pid.
fn with_helper(rest: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("helper.pid");
    let script = format!(
        "sleep 300 >/dev/null 2>&1 </dev/null & echo $! > '{}'; {rest}",
        pid_file.display()
    );
    (dir, pid_file, script)
}

async fn helper_pid(pid_file: &Path) -> u32 {
    // The host writes it first thing, before it reads anything.
    for _ in 0..500 {
        if let Ok(text) = std::fs::read_to_string(pid_file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the host never wrote its helper's pid");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_helper_in_the_host_group_does_not_outlive_an_orderly_shutdown() {
    // Answers `shutdown` and exits on EOF like a good host, but leaves its helper running.
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
    let (_dir, pid_file, script) =
        with_helper(&format!("read line; echo '{answer}'; cat >/dev/null"));
    let process = HostProcess::spawn(&sh(&script)).unwrap();
    let helper = helper_pid(&pid_file).await;
    assert!(!ended(helper));
    assert_eq!(process.shutdown().await, ExitStatus::Code(0));
    assert!(ends(helper).await, "helper {helper} outlived the host");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_helper_in_the_host_group_does_not_outlive_a_host_crash() {
    let (_dir, pid_file, script) = with_helper("read line; exit 4");
    let process = HostProcess::spawn(&sh(&script)).unwrap();
    let helper = helper_pid(&pid_file).await;
    let err = process.client().status().await.unwrap_err();
    assert!(
        matches!(err, Error::Peer(rpc_peer::Error::Exited { .. })),
        "{err}"
    );
    // The process handle is still held: the crash alone ends the helper.
    assert!(
        ends(helper).await,
        "helper {helper} outlived the crashed host"
    );
    drop(process);
}
