//! One run of a linter: its argv (never a shell) in the scratch folder, in a process group of its
//! own, with a deadline and capped output. Past the deadline, past the output cap, or when the run
//! is dropped (the evaluation cancelled), the whole group is killed while its leader is not yet
//! reaped, so the id signalled is still the group's; once the linter exits the group is killed too,
//! so that nothing it started outlives it or holds its output open, and its output is read as far
//! as it was written. What left the group is ended once the leader is reaped ([`strays`]).

use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use repo_io::read::Kept;
use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::error::{Error, Result};
use crate::strays::{self, Leader};

/// The bounds of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long the whole run may take: reading its output, then waiting for its exit.
    pub deadline: Duration,
    /// Bytes of stdout kept; past them the linter is stopped and the run says so.
    pub max_stdout: usize,
    /// Bytes of stderr kept: the last ones, which say why a run failed (the rest is read and
    /// dropped).
    pub max_stderr: usize,
}

/// What a finished run gave.
#[derive(Debug)]
pub struct Ran {
    /// The exit status; `None` when it ended by a signal (or was stopped past the output cap).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    /// Whether stdout went past [`Limits::max_stdout`] (the linter was stopped).
    pub stdout_over: bool,
    /// The last [`Limits::max_stderr`] bytes of stderr.
    pub stderr: Vec<u8>,
}

/// A process group, killed by its id while its leader is not yet reaped.
struct Group(Option<i32>);

impl Group {
    #[allow(unsafe_code)]
    fn kill(&self) {
        if let Some(id) = self.0 {
            // SAFETY: killpg takes plain integers; the group's leader is not reaped yet.
            unsafe { libc::killpg(id, libc::SIGKILL) };
        }
    }
}

/// A run's leader and its group. Dropped before it is reaped (the evaluation cancelled), the group
/// is killed and the leader reaped in the background, then what it left behind.
struct Running {
    group: Group,
    child: Option<Child>,
    leader: Option<Leader>,
}

impl Running {
    /// Waits for the leader's exit (its group killed first), reaps it, then ends the strays.
    async fn reap(&mut self) -> std::io::Result<ExitStatus> {
        self.group.kill();
        let status = match self.child.take() {
            Some(mut child) => child.wait().await,
            None => Err(std::io::ErrorKind::NotFound.into()),
        };
        // Reaped: its id is no longer the group's to signal, and the run is over.
        self.group.0 = None;
        drop(self.leader.take());
        strays::sweep().await;
        status
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.group.kill();
        if self.child.is_none() {
            return;
        }
        let mut rest = Running {
            group: Group(self.group.0.take()),
            child: self.child.take(),
            leader: self.leader.take(),
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = rest.reap().await;
                });
            }
            // No runtime left to wait on it (the provider is ending): the child's `kill_on_drop`
            // has it reaped, after which its id is no longer the group's to signal.
            Err(_) => {
                rest.group.0 = None;
                drop((rest.child.take(), rest.leader.take()));
            }
        }
    }
}

/// Runs `argv` in `cwd` within `limits`. `Err` when it cannot start, misses its deadline (killed),
/// or its output cannot be read; an exit status of any kind is the caller's to judge.
pub async fn run(argv: &[String], cwd: &Path, limits: Limits) -> Result<Ran> {
    let program = argv.first().cloned().unwrap_or_default();
    if program.is_empty() {
        return Err(Error::Config("the linter's command is empty".into()));
    }
    let mut command = Command::new(&program);
    command
        .args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let (mut child, leader) = strays::spawn(&mut command).map_err(|source| Error::Spawn {
        program: program.clone(),
        source,
    })?;
    // One deadline for the whole run: its output and its exit.
    let until = tokio::time::Instant::now() + limits.deadline;
    let group = Group(child.id().and_then(|id| i32::try_from(id).ok()));
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut running = Running {
        group,
        child: Some(child),
        leader: Some(leader),
    };
    let io = |source| Error::Io {
        program: program.clone(),
        source,
    };
    let group = &running.group;
    // Set once the linter itself has exited and its group was killed: the pipes then hold all
    // the output the run will give.
    let (exit_seen, exit) = watch::channel(false);
    let outputs = async {
        let read = tokio::try_join!(
            // One byte more than the cap: a run that printed it went past the cap.
            read_capped(stdout, Kept::first(limits.max_stdout + 1), exit.clone()),
            read_capped(stderr, Kept::last(limits.max_stderr), exit.clone()),
        );
        // Past the output cap (or a failed read) the linter is stopped: it may never exit else.
        if !matches!(read, Ok(((_, false), _))) {
            group.kill();
        }
        read
    };
    // Once the linter itself has exited, what it started is killed, so that a helper that kept
    // its output open neither holds the run to its deadline nor outlives it; the output is then
    // read as far as it was written, so that a helper out of the group's reach (a session of its
    // own, ended once the run is over) cannot hold the run either. The exit is awaited without
    // reaping it, so that the group can still be killed by its id.
    let leader = group.0;
    let exited = async {
        if let Some(pid) = leader.and_then(|pid| u32::try_from(pid).ok()) {
            let _ = tokio::task::spawn_blocking(move || rpc_peer::child::wait_exited(pid)).await;
        }
        group.kill();
        let _ = exit_seen.send(true);
    };
    let both = async { tokio::join!(outputs, exited).0 };
    let ((mut stdout, stdout_over), (stderr, _)) = match tokio::time::timeout_at(until, both).await
    {
        Ok(read) => read.map_err(io)?,
        Err(_) => {
            let _ = running.reap().await;
            return Err(Error::Timeout {
                program,
                ms: limits.deadline.as_millis(),
            });
        }
    };
    let status = running.reap().await.map_err(io)?;
    stdout.truncate(limits.max_stdout);
    Ok(Ran {
        code: if stdout_over { None } else { status.code() },
        stdout,
        stdout_over,
        stderr,
    })
}

/// Reads `pipe` into `kept` to its end, or once `exit` is set, to what was written so far; reading
/// ends once `kept` has all it keeps, the second value saying so.
async fn read_capped<P: AsyncRead + AsRawFd + Unpin>(
    pipe: Option<P>,
    mut kept: Kept,
    mut exit: watch::Receiver<bool>,
) -> std::io::Result<(Vec<u8>, bool)> {
    let Some(mut pipe) = pipe else {
        return Ok((Vec::new(), false));
    };
    let mut chunk = vec![0u8; 64 * 1024];
    let full = loop {
        tokio::select! {
            read = pipe.read(&mut chunk) => match read? {
                0 => break false,
                n if kept.push(&chunk[..n]) => break true,
                _ => {}
            },
            // Nothing is lost: a read that did not complete took no bytes.
            Ok(_) = exit.wait_for(|exited| *exited) => {
                break drain(pipe.as_raw_fd(), &mut chunk, &mut kept)?;
            }
        }
    };
    Ok((kept.into_bytes(), full))
}

/// Reads what `fd` (a pipe) holds now into `kept`, without waiting for more: until it is empty or
/// ends, or `kept` has all it keeps (then `true`).
#[allow(unsafe_code)]
fn drain(fd: RawFd, chunk: &mut [u8], kept: &mut Kept) -> std::io::Result<bool> {
    // SAFETY: fcntl on an open descriptor takes plain integers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above; it only adds O_NONBLOCK, which the async pipe has already.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    loop {
        // SAFETY: `chunk` is valid for writes of its length.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        match usize::try_from(n) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                if kept.push(&chunk[..n]) {
                    return Ok(true);
                }
            }
            Err(_) => {
                let error = std::io::Error::last_os_error();
                match error.kind() {
                    std::io::ErrorKind::Interrupted => {}
                    std::io::ErrorKind::WouldBlock => return Ok(false),
                    _ => return Err(error),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use test_support::process::ends;

    use super::*;

    fn limits() -> Limits {
        Limits {
            deadline: Duration::from_secs(20),
            max_stdout: 1 << 20,
            max_stderr: 4096,
        }
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    /// A script that starts `helper` in the background, writes its pid to `helper.pid` in `dir`
    /// (see [`helper_in`]), then does `then`.
    fn with_helper(dir: &Path, helper: &str, then: &str) -> Vec<String> {
        let pid_file = dir.join("helper.pid");
        sh(&format!(
            "{helper} & echo $! > {}; {then}",
            pid_file.display()
        ))
    }

    /// The pid of the helper [`with_helper`] started.
    fn helper_in(dir: &Path) -> u32 {
        pid_in(&dir.join("helper.pid"))
    }

    /// The helper [`with_helper`] started is gone (within 10 s).
    async fn assert_helper_ended(dir: &Path) {
        assert!(
            ends(helper_in(dir)).await,
            "the helper still runs after 10 s"
        );
    }

    /// The pid a test script wrote to `file`.
    fn pid_in(file: &std::path::Path) -> u32 {
        let text = std::fs::read_to_string(file).unwrap();
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("a pid: {text:?}"))
    }

    #[tokio::test]
    async fn a_run_gives_its_status_its_output_and_a_capped_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let script = "printf out; printf '%5000s' err >&2; exit 3";
        let ran = run(&sh(script), dir.path(), limits()).await.unwrap();
        assert_eq!((ran.code, ran.stdout.as_slice()), (Some(3), &b"out"[..]));
        assert_eq!(ran.stderr.len(), 4096);
        assert!(!ran.stdout_over);
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let argv = vec!["no-such-linter-anywhere".to_owned()];
        let error = run(&argv, dir.path(), limits()).await.unwrap_err();
        assert!(matches!(error, Error::Spawn { .. }), "{error}");
        assert!(error.to_string().contains("no-such-linter-anywhere"));
    }

    #[tokio::test]
    async fn past_the_deadline_the_linter_and_what_it_started_are_killed() {
        let dir = tempfile::tempdir().unwrap();
        let script = with_helper(dir.path(), "sleep 300", "wait");
        let started = Instant::now();
        let short = Limits {
            deadline: Duration::from_millis(500),
            ..limits()
        };
        let error = run(&script, dir.path(), short).await.unwrap_err();
        assert!(matches!(error, Error::Timeout { .. }), "{error}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "long before the sleep ends"
        );
        assert_helper_ended(dir.path()).await;
    }

    #[tokio::test]
    async fn a_flood_of_output_stops_the_linter_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let capped = Limits {
            max_stdout: 100_000,
            ..limits()
        };
        let ran = run(&sh("yes flood"), dir.path(), capped).await.unwrap();
        assert!(ran.stdout_over);
        assert_eq!(ran.stdout.len(), 100_000);
        assert_eq!(ran.code, None, "stopped, not exited");
    }

    #[tokio::test]
    async fn a_helper_left_behind_after_a_normal_exit_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        // The helper keeps no pipe open, so the run ends when the shell exits.
        let script = with_helper(dir.path(), "sleep 300 >/dev/null 2>&1 </dev/null", "exit 0");
        let ran = run(&script, dir.path(), limits()).await.unwrap();
        assert_eq!(ran.code, Some(0));
        assert_helper_ended(dir.path()).await;
    }

    #[tokio::test]
    async fn a_helper_out_of_the_group_holding_the_output_open_does_not_hold_the_run() {
        let dir = tempfile::tempdir().unwrap();
        // The helper, in a session of its own, keeps both pipes open after the shell exits.
        let then = "printf out; printf err >&2; exit 0";
        let script = with_helper(dir.path(), "setsid sleep 300", then);
        let started = Instant::now();
        let ran = run(&script, dir.path(), limits()).await;
        // Not swept here: tests share their process, which is no subreaper.
        let _ = std::process::Command::new("kill")
            .args(["-9", &helper_in(dir.path()).to_string()])
            .status();
        let ran = ran.unwrap();
        assert_eq!((ran.code, ran.stdout.as_slice()), (Some(0), &b"out"[..]));
        assert_eq!(ran.stderr, b"err");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "long before the deadline"
        );
    }

    #[tokio::test]
    async fn a_dropped_run_kills_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("leader.pid");
        let script = format!("echo $$ > {}; sleep 300", pid_file.display());
        let argv = sh(&script);
        let pending = run(&argv, dir.path(), limits());
        // Polled until the leader wrote its pid, then dropped: the evaluation was cancelled.
        tokio::select! {
            _ = pending => panic!("the run cannot finish"),
            () = async {
                while !std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
                    tokio::task::yield_now().await;
                }
            } => {}
        }
        let leader = pid_in(&pid_file);
        assert!(ends(leader).await, "still running after 10 s");
    }
}
