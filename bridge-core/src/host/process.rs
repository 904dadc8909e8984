//! The host as a child process: spawn, stderr drain, handshake, and the fixed shutdown escalation.
//!
//! The host runs in its own process group with piped stdio. Its stderr goes to `tracing` (the tail is
//! kept for error messages). It is killed if the bridge drops it, and on Linux also if the bridge dies.
//! Shutdown: `shutdown` (≤ 2 s), close stdin, wait until 2 s are over, SIGTERM the group, SIGKILL at 5 s.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use super::{CallOptions, ClientConfig, ExitProbe, HostClient, Reply};
use crate::error::{Error, ExitStatus, Result};
use crate::proto;

/// The command line used when none is given: the reference host.
pub const DEFAULT_HOST_COMMAND: &str = "asp host serve --repo {repo}";

/// Lines of host stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 12;
/// Longest stderr line kept or logged, in bytes.
const STDERR_LINE_MAX: usize = 2048;

const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
const SHUTDOWN_TOTAL: Duration = Duration::from_secs(5);

/// A host command line, split like a shell splits words, with `{repo}` replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCommand {
    pub program: String,
    pub args: Vec<String>,
}

impl HostCommand {
    pub fn parse(line: &str, repo: &Path) -> Result<HostCommand> {
        let words = shlex::split(line)
            .ok_or_else(|| Error::HostCommand(format!("unbalanced quotes in {line:?}")))?;
        let repo = repo.to_string_lossy();
        let mut words = words.into_iter().map(|w| w.replace("{repo}", &repo));
        let program = words
            .next()
            .ok_or_else(|| Error::HostCommand("empty command".into()))?;
        Ok(HostCommand {
            program,
            args: words.collect(),
        })
    }
}

/// Everything needed to start and talk to a host.
#[derive(Clone, Debug)]
pub struct HostConfig {
    pub command: HostCommand,
    /// The workspace root; the host's working directory.
    pub repo: PathBuf,
    pub client: ClientConfig,
    /// Deadline of the first `host/status` (default 10 s).
    pub handshake_timeout: Duration,
}

impl HostConfig {
    pub fn new(command: HostCommand, repo: PathBuf) -> HostConfig {
        HostConfig {
            command,
            repo,
            client: ClientConfig::default(),
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

/// A running host process and its connection.
pub struct HostProcess {
    client: HostClient,
    child: Arc<tokio::sync::Mutex<Child>>,
    pid: Option<u32>,
    finished: bool,
}

impl std::fmt::Debug for HostProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostProcess")
            .field("pid", &self.pid)
            .finish()
    }
}

impl HostProcess {
    /// Spawns the host; no message is sent yet.
    pub fn spawn(config: &HostConfig) -> Result<HostProcess> {
        let mut command = Command::new(&config.command.program);
        command
            .args(&config.command.args)
            .current_dir(&config.repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            program: config.command.program.clone(),
            source,
        })?;
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Error::Unavailable("host stdio was not piped".into()));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let drained = tokio::spawn(drain_stderr(stderr, tail.clone()));
        let child = Arc::new(tokio::sync::Mutex::new(child));
        let probe = exit_probe(child.clone(), drained, tail);
        let client = HostClient::connect(
            BufReader::with_capacity(64 * 1024, stdout),
            stdin,
            config.client.clone(),
            probe,
        );
        tracing::debug!(program = %config.command.program, pid, "host started");
        Ok(HostProcess {
            client,
            child,
            pid,
            finished: false,
        })
    }

    /// Spawns the host and completes the handshake: `host/status` within the handshake deadline, with
    /// a supported `outerProtocol`. On failure the host is shut down before the error is returned.
    pub async fn start(config: &HostConfig) -> Result<(HostProcess, Reply<proto::Status>)> {
        let process = HostProcess::spawn(config)?;
        let options = CallOptions {
            timeout: Some(config.handshake_timeout),
            progress: None,
        };
        let handshake = process
            .client
            .call(crate::proto::STATUS, Some(&super::EMPTY), options)
            .await;
        let outcome = handshake.and_then(|reply: Reply<proto::Status>| {
            check_outer_protocol(&reply.value.host.outer_protocol)?;
            Ok(reply)
        });
        match outcome {
            Ok(reply) => Ok((process, reply)),
            Err(error) => {
                // A host that did not answer `host/status` is not asked to shut down: stdin is closed
                // at once and the escalation runs from there.
                process.stop(false).await;
                Err(error)
            }
        }
    }

    pub fn client(&self) -> &HostClient {
        &self.client
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Stops the host with the fixed escalation and returns how it ended; at most about 5 s.
    pub async fn shutdown(self) -> ExitStatus {
        self.stop(true).await
    }

    async fn stop(mut self, ask: bool) -> ExitStatus {
        let started = Instant::now();
        if ask && !self.client.is_closed() {
            let options = CallOptions {
                timeout: Some(SHUTDOWN_GRACE),
                progress: None,
            };
            let _ = self
                .client
                .call_raw::<()>(crate::proto::SHUTDOWN, None, options)
                .await;
        }
        self.client.close_input();
        let status = self.escalate(started).await;
        self.finished = true;
        status
    }

    async fn escalate(&self, started: Instant) -> ExitStatus {
        let mut child = self.child.lock().await;
        if let Ok(Ok(status)) = tokio::time::timeout(
            SHUTDOWN_GRACE.saturating_sub(started.elapsed()),
            child.wait(),
        )
        .await
        {
            return exit_status(status);
        }
        tracing::warn!(
            pid = self.pid,
            "host still running after shutdown; sending SIGTERM"
        );
        signal_group(self.pid, Signal::Term);
        if let Ok(Ok(status)) = tokio::time::timeout(
            SHUTDOWN_TOTAL.saturating_sub(started.elapsed()),
            child.wait(),
        )
        .await
        {
            return exit_status(status);
        }
        tracing::warn!(pid = self.pid, "host ignored SIGTERM; sending SIGKILL");
        signal_group(self.pid, Signal::Kill);
        let _ = child.start_kill();
        match child.wait().await {
            Ok(status) => exit_status(status),
            Err(_) => ExitStatus::Unknown,
        }
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        if !self.finished {
            // `kill_on_drop` ends the host itself; this also ends whatever it started.
            signal_group(self.pid, Signal::Kill);
        }
    }
}

/// Accepts `asp-outer/1` and `asp-outer/1.x`; refuses anything else with a contract error.
pub fn check_outer_protocol(found: &str) -> Result<()> {
    let major = found
        .strip_prefix("asp-outer/")
        .map(|v| v.split('.').next().unwrap_or(v));
    if major == Some("1") {
        Ok(())
    } else {
        Err(Error::UnsupportedProtocol {
            found: found.to_owned(),
        })
    }
}

fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Code(code),
        (None, Some(signal)) => ExitStatus::Signal(signal),
        (None, None) => ExitStatus::Unknown,
    }
}

fn exit_probe(
    child: Arc<tokio::sync::Mutex<Child>>,
    drained: tokio::task::JoinHandle<()>,
    tail: Arc<Mutex<VecDeque<String>>>,
) -> ExitProbe {
    Box::new(move || {
        Box::pin(async move {
            // A host that closes stdout is normally exiting: give it a moment to be reaped.
            let grace = Duration::from_millis(500);
            let status = {
                let mut child = child.lock().await;
                match tokio::time::timeout(grace, child.wait()).await {
                    Ok(Ok(status)) => exit_status(status),
                    _ => ExitStatus::StillRunning,
                }
            };
            if status != ExitStatus::StillRunning {
                let _ = tokio::time::timeout(Duration::from_millis(200), drained).await;
            }
            let tail = tail
                .lock()
                .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
                .unwrap_or_default();
            (status, tail)
        })
    })
}

async fn drain_stderr(stderr: impl AsyncRead + Unpin, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(STDERR_LINE_MAX as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        tracing::debug!(target: "asp_bridge::host_stderr", "{text}");
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text.to_owned());
        }
    }
}

use tokio::io::AsyncReadExt as _;

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

/// Sends a signal to the host's process group (its pid, since it leads its own group).
#[allow(unsafe_code)]
fn signal_group(pid: Option<u32>, signal: Signal) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1) else {
        return;
    };
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) with a negative pid only sends a signal to that process group; no memory is shared.
    unsafe {
        libc::kill(-pid, signal);
    }
}

/// On Linux, asks the kernel to SIGKILL the host when the bridge's thread dies, so a bridge killed
/// with SIGKILL leaves no orphan.
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: prctl and getppid are async-signal-safe; the closure allocates nothing.
        unsafe {
            command.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell_and_fills_in_the_repo() {
        let cmd = HostCommand::parse(
            "asp host serve --repo {repo} --name 'a b'",
            Path::new("/w/my repo"),
        )
        .unwrap();
        assert_eq!(cmd.program, "asp");
        assert_eq!(
            cmd.args,
            ["host", "serve", "--repo", "/w/my repo", "--name", "a b"]
        );
    }

    #[test]
    fn refuses_a_broken_command_line() {
        assert!(HostCommand::parse("asp 'open", Path::new("/")).is_err());
        assert!(HostCommand::parse("   ", Path::new("/")).is_err());
    }

    #[test]
    fn accepts_only_outer_protocol_major_1() {
        assert!(check_outer_protocol("asp-outer/1.0").is_ok());
        assert!(check_outer_protocol("asp-outer/1.7").is_ok());
        assert!(check_outer_protocol("asp-outer/1").is_ok());
        for bad in ["asp-outer/2.0", "asp-outer/10.0", "asp/1.0", ""] {
            let err = check_outer_protocol(bad).unwrap_err();
            assert_eq!(err.fail_class(), crate::FailClass::Contract, "{bad}");
        }
    }
}
