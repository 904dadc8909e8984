//! What a git process wrote, read with caps: at most [`MAX_LISTING`] + 1 bytes of stdout (git is
//! killed past that) and the first 4 KiB of its stderr, async or blocking.

use std::process::ExitStatus;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use tokio::io::AsyncReadExt as _;

use crate::error::{Error, Result};
use crate::read::Kept;

/// Most bytes of a git listing read whole (status, diff-index, ls-files, ls-tree, rev-parse).
pub const MAX_LISTING: usize = 64 * 1024 * 1024;

const STDERR_KEPT: usize = 4096;

/// A finished git process: its status (`None` when it was killed for writing too much) and output.
pub(super) struct Output {
    status: Option<ExitStatus>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Output {
    /// The stdout of a git that succeeded within the cap; else why not.
    pub(super) fn into_result(self, what: &str) -> Result<Vec<u8>> {
        if self.stdout.len() > MAX_LISTING {
            return Err(Error::Git(format!(
                "git {what} listed more than {} MiB",
                MAX_LISTING >> 20
            )));
        }
        match self.status {
            Some(status) if status.success() => Ok(self.stdout),
            _ => {
                let stderr = String::from_utf8_lossy(&self.stderr);
                Err(Error::Git(format!(
                    "git {what} failed: {}",
                    asp_wire::text::untrusted(stderr.trim(), 400)
                )))
            }
        }
    }
}

/// Waits for `child` (stdout and stderr piped), keeping what the caps allow; dropping the child
/// kills it (`kill_on_drop`).
pub(super) async fn capped(mut child: tokio::process::Child) -> std::io::Result<Output> {
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let (out, err) = tokio::join!(
        keep(stdout, MAX_LISTING + 1, true),
        keep(stderr, STDERR_KEPT, false)
    );
    let (stdout, stderr) = (out?, err?);
    if stdout.len() > MAX_LISTING {
        return Ok(Output {
            status: None,
            stdout,
            stderr,
        });
    }
    let status = Some(child.wait().await?);
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Reads `reader` to its end keeping the first `cap` bytes; stops at the cap when `stop`, else
/// drains the rest (so the writer never blocks on a full pipe).
async fn keep<R: tokio::io::AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    stop: bool,
) -> std::io::Result<Vec<u8>> {
    let mut kept = Kept::first(cap);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 || (kept.push(&chunk[..n]) && stop) {
            return Ok(kept.into_bytes());
        }
    }
}

/// Why a blocking run gave no output.
pub(super) enum Blocking {
    Late,
    Io(std::io::Error),
}

/// [`capped`] for a thread that may block: git is killed at `deadline` by a watchdog thread, and
/// always reaped before this returns. The watchdog kills only a process that has not been reaped
/// (git's exit is seen with `WNOWAIT` first), so it can never signal a process id reused since.
pub(super) fn capped_blocking(
    mut child: std::process::Child,
    deadline: Instant,
) -> Result<Output, Blocking> {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let pid = child.id();
    // `true` once git has exited (not yet reaped): the watchdog must not signal it then.
    let exited = Arc::new(Mutex::new(false));
    let (stop, stopped) = mpsc::channel::<()>();
    let watchdog = {
        let exited = exited.clone();
        std::thread::Builder::new()
            .name("git-deadline".into())
            .spawn(move || {
                let left = deadline.saturating_duration_since(Instant::now());
                match stopped.recv_timeout(left) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let exited = rpc_peer::lock(&exited);
                        if !*exited {
                            kill(pid);
                        }
                        true
                    }
                    _ => false,
                }
            })
    };
    let watchdog = match watchdog {
        Ok(watchdog) => watchdog,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Blocking::Io(e));
        }
    };
    let errors = stderr.map(|stderr| {
        std::thread::Builder::new()
            .name("git-stderr".into())
            .spawn(move || keep_blocking(stderr, STDERR_KEPT, false))
    });
    let out = stdout.map_or_else(
        || Ok(Vec::new()),
        |s| keep_blocking(s, MAX_LISTING + 1, true),
    );
    let over = out.as_ref().is_ok_and(|o| o.len() > MAX_LISTING) || out.is_err();
    if over {
        // Not reaped yet, so its id is still its own.
        let _ = child.kill();
    }
    let waited = rpc_peer::child::wait_exited(pid);
    *rpc_peer::lock(&exited) = true;
    let _ = stop.send(());
    let late = watchdog.join().unwrap_or(false);
    let status = child.wait();
    let stderr = match errors {
        Some(Ok(thread)) => thread.join().ok().and_then(Result::ok).unwrap_or_default(),
        _ => Vec::new(),
    };
    if late {
        return Err(Blocking::Late);
    }
    let stdout = out.map_err(Blocking::Io)?;
    waited.map_err(Blocking::Io)?;
    let status = status.map_err(Blocking::Io)?;
    Ok(Output {
        status: (stdout.len() <= MAX_LISTING).then_some(status),
        stdout,
        stderr,
    })
}

fn keep_blocking(
    mut reader: impl std::io::Read,
    cap: usize,
    stop: bool,
) -> std::io::Result<Vec<u8>> {
    let mut kept = Kept::first(cap);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 || (kept.push(&chunk[..n]) && stop) {
            return Ok(kept.into_bytes());
        }
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn kill(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: `pid` is our child and has not been reaped (see `capped_blocking`).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}
