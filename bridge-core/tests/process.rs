//! The host as a real child process (small `sh` scripts): exit status and stderr reach the caller,
//! and the shutdown escalation ends even a host that ignores `shutdown`, stdin and SIGTERM.

use std::path::Path;
use std::time::Duration;

use bridge_core::{Error, ExitStatus, HostCommand, HostConfig, HostProcess};

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
        Error::HostExited {
            status,
            stderr_tail,
        } => {
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
