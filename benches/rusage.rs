//! How the benchmarks read a finished child: reaped by `wait4`, which also gives its peak resident
//! memory, and a whole command timed from spawn to exit.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Waits for `pid` (a child of this process, not yet reaped): its raw wait status and its peak
/// resident set (KiB). The peak is never below this process's resident set when the child was
/// spawned (the kernel counts what the child shared or copied before its `exec`): the peak of a
/// child smaller than this process is read from `/proc` instead (`VmHWM`).
pub(crate) fn wait4(pid: libc::pid_t) -> (libc::c_int, u64) {
    let (status, peak, _) = reap(pid);
    (status, peak)
}

/// [`wait4`], and the CPU time (user and system) of the child and of every descendant it reaped.
#[allow(unsafe_code)]
pub(crate) fn reap(pid: libc::pid_t) -> (libc::c_int, u64, Duration) {
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is this process's child, not yet reaped (`Child` never waits on drop);
    // `status` and `usage` are valid for writes for the duration of the call.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    (
        status,
        u64::try_from(usage.ru_maxrss).unwrap_or(0),
        time(usage.ru_utime) + time(usage.ru_stime),
    )
}

/// Whether a wait status is an exit with status 0.
pub(crate) fn succeeded(status: libc::c_int) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// Runs `command` to its end, with stdin and stdout null (stderr as the caller set it, inherited
/// by default): wall time and peak resident set (KiB). It must exit 0.
// The child is reaped by `wait4` itself, which `Child::wait` cannot be combined with.
#[allow(clippy::zombie_processes)]
pub(crate) fn measure(command: &mut Command) -> (Duration, u64) {
    let started = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let (status, peak) = wait4(pid);
    let elapsed = started.elapsed();
    assert!(succeeded(status), "{command:?} failed: status {status}");
    (elapsed, peak)
}
