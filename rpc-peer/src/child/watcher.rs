//! The watcher: a tiny process that SIGKILLs a child's process group when this process dies, however
//! it dies (SIGKILL included), so nothing a host or provider started outlives us.
//!
//! Forked (no exec) before the child is spawned, it holds the read end of a pipe whose write end
//! only this process holds (close-on-exec: no other child keeps it past its own `exec`). The child,
//! between its fork and its `exec`, writes `P` and its pid on the pipe, so the watcher knows the
//! group before the child runs any code of its own. Then the watcher blocks in `read`:
//!
//! - end of file (every copy of the write end is closed: this process is gone) → `kill(-P, SIGKILL)`
//!   and `kill(P, SIGKILL)` (for a child that left its group), then exit;
//! - `D` ("disarm", written once this process has itself ended the group) → exit without killing.
//!
//! It closes every other descriptor (it would otherwise keep the child's stdin and our stdout open),
//! blocks every signal and sits in a process group of its own, so neither a terminal's Ctrl-C nor a
//! signal to our group ends it before us. Between `fork` and `_exit` it makes only async-signal-safe
//! calls and allocates nothing. A disarmed watcher is reaped by a reaper thread, never waited for on
//! the caller's thread. Out of reach: a process that leaves the group into a session or group of its
//! own (`setsid`), and a watcher killed on purpose.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};

/// The message the child writes with its pid.
const PID: u8 = b'P';
/// The message that ends the watcher without killing.
const DISARM: u8 = b'D';

/// An armed watcher; [`Watcher::disarm`] (or dropping it) ends it without killing.
pub(crate) struct Watcher {
    pid: libc::pid_t,
    /// The write end; `None` once disarmed.
    arm: Mutex<Option<OwnedFd>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").field("pid", &self.pid).finish()
    }
}

impl Watcher {
    /// Forks a watcher that waits for a pid on [`Watcher::report_fd`].
    #[allow(unsafe_code)]
    pub(crate) fn start() -> io::Result<Watcher> {
        // Both ends close-on-exec, so no child keeps a copy past its own `exec`.
        let (read, write) = io::pipe()?;
        let (read, write) = (OwnedFd::from(read), OwnedFd::from(write));
        let descriptors = descriptor_limit();
        // Every signal stays blocked in the watcher; this thread gets its mask back right after.
        // SAFETY: sigset_t is plain data that sigfillset initialises; pthread_sigmask only changes
        // this thread's mask.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        }
        // SAFETY: the child runs only `watch`, which makes async-signal-safe calls and never returns.
        let pid = unsafe { libc::fork() };
        let forked = io::Error::last_os_error();
        if pid == 0 {
            watch(read.as_raw_fd(), descriptors);
        }
        // SAFETY: restores the mask saved above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        if pid < 0 {
            return Err(forked);
        }
        drop(read);
        Ok(Watcher {
            pid,
            arm: Mutex::new(Some(write)),
        })
    }

    /// The descriptor the child reports its pid on, from its `pre_exec` ([`report_pid`]). Valid
    /// until the watcher is disarmed.
    pub(crate) fn report_fd(&self) -> RawFd {
        self.arm
            .lock()
            .ok()
            .and_then(|arm| arm.as_ref().map(AsRawFd::as_raw_fd))
            .unwrap_or(-1)
    }

    /// Ends the watcher without killing anything; call it once the group was ended here. Idempotent.
    #[allow(unsafe_code)]
    pub(crate) fn disarm(&self) {
        let Some(arm) = self.arm.lock().ok().and_then(|mut arm| arm.take()) else {
            return;
        };
        // A watcher that is already gone cannot read it: nothing to do then (Rust ignores SIGPIPE).
        // SAFETY: writes one byte from a live buffer to a descriptor this watcher owns.
        unsafe {
            libc::write(arm.as_raw_fd(), [DISARM].as_ptr().cast(), 1);
        }
        drop(arm);
        reap_later(self.pid);
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.disarm();
    }
}

/// In the child between `fork` and `exec` (`pre_exec`): tells the watcher listening on `fd` the
/// child's pid. Async-signal-safe, allocates nothing.
#[allow(unsafe_code)]
pub(crate) fn report_pid(fd: RawFd) -> io::Result<()> {
    // SAFETY: getpid and write are async-signal-safe; the buffer lives on this stack.
    let pid = unsafe { libc::getpid() }.to_ne_bytes();
    let message = [PID, pid[0], pid[1], pid[2], pid[3]];
    // One write of 5 bytes (< PIPE_BUF) is atomic.
    if unsafe { libc::write(fd, message.as_ptr().cast(), message.len()) } == 5 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The highest descriptor number to close when `close_range` is missing.
#[allow(unsafe_code)]
fn descriptor_limit() -> libc::c_uint {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    libc::c_uint::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1024)
}

/// The watcher's whole life, in the forked child: only async-signal-safe calls, no allocation, never
/// returns.
#[allow(unsafe_code)]
fn watch(read: RawFd, descriptors: libc::c_uint) -> ! {
    // SAFETY: each call below is async-signal-safe and touches only this process and its stack.
    unsafe {
        libc::setpgid(0, 0);
        // Its command line is ours; the name `ps -o comm` and `top` show says what it is.
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, c"asp-watcher".as_ptr());
        // The pipe becomes stdin; everything else is closed (the child's pipes, our stdio).
        if libc::dup2(read, 0) != 0 {
            libc::_exit(1);
        }
        #[cfg(target_os = "linux")]
        let closed = libc::syscall(libc::SYS_close_range, 1, libc::c_uint::MAX, 0) == 0;
        #[cfg(not(target_os = "linux"))]
        let closed = false;
        if !closed {
            for fd in 1..descriptors {
                libc::close(fd as RawFd);
            }
        }
        let mut child: libc::pid_t = 0;
        loop {
            match read_byte() {
                Some(PID) => match read_pid() {
                    Some(pid) if pid > 1 => child = pid,
                    Some(_) => {}
                    None => break,
                },
                Some(DISARM) => libc::_exit(0),
                Some(_) => {}
                None => break,
            }
        }
        // This process is gone (or the pipe failed): end the child's group and the child.
        if child > 1 {
            libc::kill(-child, libc::SIGKILL);
            libc::kill(child, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}

/// One byte from stdin; `None` at end of file or on an error other than EINTR.
#[allow(unsafe_code)]
fn read_byte() -> Option<u8> {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads at most one byte into a live stack variable.
        match unsafe { libc::read(0, (&raw mut byte).cast(), 1) } {
            1 => return Some(byte),
            -1 if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => return None,
        }
    }
}

fn read_pid() -> Option<libc::pid_t> {
    let mut bytes = [0u8; 4];
    for byte in &mut bytes {
        *byte = read_byte()?;
    }
    Some(libc::pid_t::from_ne_bytes(bytes))
}

/// Waits for a disarmed watcher on the reaper thread (it exits at once, but a wait on the caller's
/// thread could block an async runtime if it were stopped).
#[allow(unsafe_code)]
fn reap_later(pid: libc::pid_t) {
    static REAPER: OnceLock<Option<Sender<libc::pid_t>>> = OnceLock::new();
    let reaper = REAPER.get_or_init(|| {
        let (send, receive) = mpsc::channel::<libc::pid_t>();
        std::thread::Builder::new()
            .name("asp-bridge-reaper".into())
            .spawn(move || {
                for pid in receive {
                    // SAFETY: waits for a child of this process; no memory is shared.
                    while unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) } < 0
                        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                    {
                    }
                }
            })
            .ok()
            .map(|_| send)
    });
    let sent = reaper.as_ref().is_some_and(|send| send.send(pid).is_ok());
    if !sent {
        // No reaper thread: collect it if it is already gone, else it stays a zombie until we exit.
        // SAFETY: as above, without blocking.
        unsafe {
            libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// A shell in its own group that starts a helper in that group; both hold its stdout, so reading
    /// it to the end returns once both are gone.
    #[allow(unsafe_code)]
    fn group_with_helper(watcher: &Watcher) -> std::process::Child {
        let fd = watcher.report_fd();
        let mut command = Command::new("sh");
        command
            .args(["-c", "sleep 600 & wait"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0);
        // SAFETY: report_pid is async-signal-safe and allocates nothing.
        unsafe {
            command.pre_exec(move || report_pid(fd));
        }
        command.spawn().expect("sh")
    }

    #[test]
    fn when_its_write_end_closes_without_a_disarm_the_watcher_kills_the_whole_group() {
        let watcher = Watcher::start().unwrap();
        let mut child = group_with_helper(&watcher);
        let mut stdout = child.stdout.take().unwrap();
        let (done, ended) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = stdout.read_to_end(&mut Vec::new());
            let _ = done.send(());
        });
        // What our death does: every copy of the write end closed, no `D` written.
        drop(watcher.arm.lock().unwrap().take());
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        // Named before it killed (it is not reaped yet: it is our child).
        #[cfg(target_os = "linux")]
        assert_eq!(
            std::fs::read_to_string(format!("/proc/{}/comm", watcher.pid)).ok(),
            Some("asp-watcher\n".to_owned()),
            "the watcher's name"
        );
        // A deadline against a hang only: the helper would otherwise live 600 s.
        assert!(
            ended.recv_timeout(Duration::from_secs(60)).is_ok(),
            "the helper in the group outlived the watcher's kill"
        );
    }
}
