//! A child process that speaks JSON-RPC on its stdio: spawn, stderr drain, process group, and the
//! fixed shutdown escalation. Knows no ASP: what the child is asked, and answers, is the caller's.
//!
//! The child runs in its own process group with piped stdio. Its stderr goes to `tracing` (the tail
//! is kept for error messages). Shutdown: a `shutdown` request (≤ 2 s), close stdin, wait until 2 s
//! are over, SIGTERM the group, SIGKILL at 5 s; once the child is gone, whatever is left in its group
//! (helpers it started) is killed too, however the child ended. Dropping a [`ChildPeer`] kills the
//! group at once. If this process dies without doing any of that (SIGKILL included), the child's
//! watcher (`child/watcher.rs`) kills the group: nothing the child started in its group outlives us.

mod leader;
pub mod program;
pub mod strays;
mod watcher;

use std::borrow::Borrow;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Command;

use self::leader::{Leader, Signal};
use self::watcher::Watcher;
use crate::error::{Error, ExitStatus, Result};
use crate::peer::{CallOptions, ExitProbe, Handler, Peer, PeerConfig};

/// Lines of stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 12;
/// Longest stderr line kept or logged, in bytes.
const STDERR_LINE_MAX: usize = 2048;
/// Read buffer of the child's stdout.
const READ_BUFFER: usize = 64 * 1024;

const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
const SHUTDOWN_TOTAL: Duration = Duration::from_secs(5);
/// The method asked first on shutdown.
const SHUTDOWN_METHOD: &str = "shutdown";

/// What to run: a program, its arguments, its working directory, and variables set in its
/// environment on top of this process's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
}

impl ChildSpec {
    pub fn new(program: impl Into<String>, args: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        ChildSpec {
            program: program.into(),
            args,
            cwd: cwd.into(),
            env: Vec::new(),
        }
    }
}

/// A running child process and the peer on its stdio.
#[derive(Debug)]
pub struct ChildPeer {
    peer: Peer,
    child: Arc<Leader>,
    pid: Option<u32>,
    program: String,
    finished: bool,
}

impl ChildPeer {
    /// Spawns the child and connects a peer to its stdio; incoming requests go to `handler`. No
    /// message is sent yet. Any thread of a runtime will do: nothing is tied to the spawning thread.
    pub fn spawn(
        spec: impl Borrow<ChildSpec>,
        config: PeerConfig,
        handler: Arc<dyn Handler>,
    ) -> Result<ChildPeer> {
        let spec = spec.borrow();
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let watcher = Watcher::start().map_err(|e| Error::Unavailable {
            role: config.role,
            why: format!(
                "{}: could not start the process that watches it: {e}",
                spec.program
            ),
        })?;
        report_to(&mut command, &watcher);
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            role: config.role,
            program: spec.program.clone(),
            source,
        })?;
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Error::Unavailable {
                role: config.role,
                why: format!("{}: stdio was not piped", spec.program),
            });
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let drained = tokio::spawn(drain_stderr(stderr, tail.clone()));
        let child = Arc::new(Leader::new(child, watcher));
        let probe = exit_probe(child.clone(), drained, tail);
        let peer = Peer::connect(
            BufReader::with_capacity(READ_BUFFER, stdout),
            stdin,
            config,
            handler,
            probe,
        );
        tracing::debug!(program = %spec.program, pid, "child started");
        Ok(ChildPeer {
            peer,
            child,
            pid,
            program: spec.program.clone(),
            finished: false,
        })
    }

    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Stops the child with the fixed escalation, starting with a `shutdown` request, and returns
    /// how it ended; at most about 5 s.
    pub async fn shutdown(self) -> ExitStatus {
        self.end(true).await
    }

    /// Stops the child without asking: stdin is closed at once and the escalation runs from there
    /// (for a child that never answered, e.g. a failed handshake).
    pub async fn stop(self) -> ExitStatus {
        self.end(false).await
    }

    async fn end(mut self, ask: bool) -> ExitStatus {
        let started = Instant::now();
        if ask && !self.peer.is_closed() {
            let options = CallOptions {
                timeout: Some(SHUTDOWN_GRACE),
                progress: None,
            };
            let _ = self
                .peer
                .request_raw::<()>(SHUTDOWN_METHOD, None, options)
                .await;
        }
        self.peer.close_input();
        // Whatever the child did, nothing it started outlives it: its group is killed as it ends.
        let status = self.escalate(started).await;
        self.finished = true;
        status
    }

    async fn escalate(&self, started: Instant) -> ExitStatus {
        // Each step waits until its deadline (from `started`), then signals harder.
        let steps = [
            (
                SHUTDOWN_GRACE,
                Signal::Term,
                "host still running after shutdown; sending SIGTERM",
            ),
            (
                SHUTDOWN_TOTAL,
                Signal::Kill,
                "host ignored SIGTERM; sending SIGKILL",
            ),
        ];
        for (deadline, signal, warning) in steps {
            let left = deadline.saturating_sub(started.elapsed());
            if let Some(status) = self.child.end_within(left).await {
                return status;
            }
            tracing::warn!(program = %self.program, pid = self.pid, "{warning}");
            self.child.signal_group(signal);
        }
        self.child.kill().await
    }
}

impl Drop for ChildPeer {
    fn drop(&mut self) {
        if !self.finished {
            // `kill_on_drop` ends the child itself; this also ends whatever it started.
            self.child.signal_group(Signal::Kill);
        }
        self.child.ended();
    }
}

fn exit_probe(
    child: Arc<Leader>,
    drained: tokio::task::JoinHandle<()>,
    tail: Arc<Mutex<VecDeque<String>>>,
) -> ExitProbe {
    Box::new(move || {
        Box::pin(async move {
            // A child that closes stdout is normally exiting: give it a moment to be reaped.
            let grace = Duration::from_millis(500);
            let status = child
                .end_within(grace)
                .await
                .unwrap_or(ExitStatus::StillRunning);
            if status != ExitStatus::StillRunning {
                // The child is gone, and so is anything it left in its group; its watcher too.
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

/// Blocks until `pid`, a child of this process, has exited, leaving it unreaped (`waitid` with
/// `WNOWAIT`): until it is reaped its pid, and so its process group's id, stay its own, and the
/// group can still be killed by that id.
#[allow(unsafe_code)]
pub fn wait_exited(pid: u32) -> std::io::Result<()> {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter, and waitid only writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: a plain system call on our own child; WNOWAIT leaves it unreaped.
        let done =
            unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if done == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Has the child report its pid to the watcher between its fork and its exec, before it runs any
/// code of its own: from then on, our death ends its group.
#[allow(unsafe_code)]
fn report_to(command: &mut Command, watcher: &Watcher) {
    let fd = watcher.report_fd();
    // SAFETY: `report_pid` makes only async-signal-safe calls and allocates nothing; the descriptor
    // stays open until the watcher is disarmed, which happens after the spawn.
    unsafe {
        command.pre_exec(move || watcher::report_pid(fd));
    }
}
