//! The child process as the leader of its process group: its end is awaited without reaping it
//! first, so that what it left in its group is killed while the group's id is still its own.
//!
//! A process group's id is its leader's pid. Once the leader is reaped that pid is free, and a
//! group signalled by it afterwards could (once pids wrap around) belong to another program. So the
//! group is killed between the leader's exit and its reaping: a zombie keeps its pid. The exit is
//! seen through a pidfd opened right after the spawn (Linux 5.3+), which reports it without
//! reaping; without one (an older kernel, or not Linux) the leader is reaped first and the group
//! signalled after.
//! Once the group is ended here it is never signalled again, and its watcher (which would SIGKILL
//! the group if this process died) is disarmed: both before the reap.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::process::Child;

use super::watcher::Watcher;
use crate::error::ExitStatus;

#[derive(Clone, Copy, Debug)]
pub(super) enum Signal {
    Term,
    Kill,
}

/// The child, its pid and how its exit is seen.
#[derive(Debug)]
pub(super) struct Leader {
    child: tokio::sync::Mutex<Child>,
    /// The pid, which is also the group's id; `None` when it cannot be a group id.
    pid: Option<libc::pid_t>,
    /// Readable once the child has exited, reaped or not.
    exit: Option<AsyncFd<OwnedFd>>,
    /// Set once the group was ended here (after its last signal, before the child is reaped):
    /// its id is never signalled after that.
    ended: AtomicBool,
    /// Kills the group if this process dies first; disarmed once the group was ended here.
    watcher: Watcher,
}

impl Leader {
    /// Must be called before anything waits for `child`, within the runtime. `watcher` watches
    /// `child`'s group.
    pub(super) fn new(child: Child, watcher: Watcher) -> Leader {
        let pid = child
            .id()
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|p| *p > 1);
        let exit = pid.and_then(|pid| match pidfd_open(pid).and_then(register) {
            Ok(fd) => Some(fd),
            Err(e) => {
                tracing::debug!(pid, "no pidfd ({e}): the group is signalled after the reap");
                None
            }
        });
        Leader {
            child: tokio::sync::Mutex::new(child),
            pid,
            exit,
            ended: AtomicBool::new(false),
            watcher,
        }
    }

    /// Sends `signal` to the child's group, unless the group was already ended here. The group id
    /// stays reserved while any member lives, so this reaches only the child and what it left
    /// behind.
    pub(super) fn signal_group(&self, signal: Signal) {
        let Some(pid) = self.pid else { return };
        if self.ended.load(Ordering::Acquire) {
            return;
        }
        let signal = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        kill_group(pid, signal);
    }

    /// Waits up to `limit` for the child to end; once it has, kills whatever is left in its group,
    /// then reaps it. `None` when it is still running at `limit`.
    pub(super) async fn end_within(&self, limit: Duration) -> Option<ExitStatus> {
        let mut child = self.child.lock().await;
        if let Some(exit) = &self.exit {
            let _exited = tokio::time::timeout(limit, exit.readable())
                .await
                .ok()?
                .ok()?;
            return Some(self.reap(&mut child).await);
        }
        let status = tokio::time::timeout(limit, child.wait()).await.ok()?;
        // No pidfd: reaped already, so this is the one signal sent after the reap.
        self.signal_group(Signal::Kill);
        self.ended();
        Some(status.map_or(ExitStatus::Unknown, exit_status))
    }

    /// SIGKILLs the child and its group and reaps it.
    pub(super) async fn kill(&self) -> ExitStatus {
        let mut child = self.child.lock().await;
        self.signal_group(Signal::Kill);
        let _ = child.start_kill();
        self.reap(&mut child).await
    }

    /// The group was ended here: its id is not signalled again, and the watcher stands down.
    pub(super) fn ended(&self) {
        self.ended.store(true, Ordering::Release);
        self.watcher.disarm();
    }

    /// Kills the group, marks it ended, then reaps the child (it has exited, or is being killed).
    async fn reap(&self, child: &mut Child) -> ExitStatus {
        self.signal_group(Signal::Kill);
        self.ended();
        match child.wait().await {
            Ok(status) => exit_status(status),
            Err(_) => ExitStatus::Unknown,
        }
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

/// A pidfd of `pid`, non-blocking and close-on-exec.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd as _;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; no memory is
    // passed. PIDFD_NONBLOCK is O_NONBLOCK; pidfds are always close-on-exec.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, libc::O_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("pidfd out of range"))?;
    // SAFETY: the descriptor was just returned to us and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Not Linux: no pidfd, so the leader is reaped first and its group signalled after.
#[cfg(not(target_os = "linux"))]
fn pidfd_open(_pid: libc::pid_t) -> io::Result<OwnedFd> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "pidfds are linux-only",
    ))
}

/// `fd` registered with the runtime's reactor, to be awaited readable.
#[allow(unsafe_code)]
fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the `OwnedFd` is moved into the `AsyncFd`, so the descriptor stays open, and the
    // same, for as long as the registration lives.
    Ok(unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }?)
}

#[allow(unsafe_code)]
fn kill_group(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid only sends a signal to that process group; no memory is
    // shared.
    unsafe {
        libc::kill(-pid, signal);
    }
}

#[cfg(test)]
mod tests {
    use test_support::process::{ended, ends};
    use tokio::io::{AsyncBufReadExt as _, BufReader};

    use super::*;

    /// A leader running `sh -c script` in a group of its own, after it started a helper in that
    /// group, and the helper's pid.
    async fn with_helper(script: &str) -> (Leader, u32) {
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", &format!("sleep 300 >/dev/null & echo $!; {script}")])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("sh");
        let stdout = child.stdout.take().expect("piped");
        let leader = Leader::new(child, Watcher::start().expect("a watcher"));
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .expect("the helper's pid");
        (leader, line.trim().parse().expect("a pid"))
    }

    /// The leader of [`with_helper`]`("exit 7")` is answered with its status, and its helper ends
    /// with it.
    async fn ends_with_code_7_and_takes_its_group(leader: Leader, helper: u32) {
        assert_eq!(
            leader.end_within(Duration::from_secs(10)).await,
            Some(ExitStatus::Code(7))
        );
        assert!(leader.ended.load(Ordering::Acquire));
        assert!(ends(helper).await, "the helper outlived its leader");
    }

    // A pidfd and `/proc` are Linux's; elsewhere the exit is seen by the reap (the next test).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_exit_is_seen_before_the_reap_so_the_group_is_killed_while_its_id_is_still_taken() {
        let (leader, helper) = with_helper("exit 7").await;
        let pid = leader.pid.expect("a pid");
        let exit = leader.exit.as_ref().expect("this kernel has pidfds");
        let _ready = tokio::time::timeout(Duration::from_secs(10), exit.readable())
            .await
            .expect("the leader exits")
            .expect("readable");
        assert!(
            std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "seen exited, the leader is still a zombie, so its pid and group id are taken"
        );
        assert!(!ended(helper));
        ends_with_code_7_and_takes_its_group(leader, helper).await;
    }

    #[tokio::test]
    async fn a_leader_that_exits_is_answered_with_its_status_and_its_group_is_killed() {
        let (leader, helper) = with_helper("exit 7").await;
        ends_with_code_7_and_takes_its_group(leader, helper).await;
    }

    #[tokio::test]
    async fn a_child_still_running_at_the_limit_is_killed_with_its_group_on_demand() {
        let (leader, helper) = with_helper("sleep 300").await;
        assert_eq!(leader.end_within(Duration::from_millis(50)).await, None);
        assert!(!leader.ended.load(Ordering::Acquire));
        assert!(!ended(helper));
        assert_eq!(leader.kill().await, ExitStatus::Signal(libc::SIGKILL));
        assert!(leader.ended.load(Ordering::Acquire));
        assert!(ends(helper).await, "the helper outlived its leader");
    }
}
