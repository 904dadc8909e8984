//! What a linter leaves behind. The provider process is the subreaper of everything its linters
//! start ([`adopt`], `PR_SET_CHILD_SUBREAPER`), so a process that left its run's group (`setsid`, a
//! double fork into a group of its own) and outlived the run becomes the provider's child instead
//! of init's. Once the last run in flight has ended, every child of the provider (a stray: no run
//! is left to own it) is killed with its group and reaped, round after round as the strays' own
//! children come back; so are the exited ones that come back the same way, and whatever is left
//! when the provider ends. A sweep while another run is in flight would end what that run still
//! uses (a linter's daemon), so the last run to end sweeps.
//!
//! A run is in flight from its leader's spawn ([`spawn`], under the lock a sweep takes while it
//! chooses whom to kill) until its leader is reaped ([`Leader`]). Out of reach: what a linter
//! leaves behind when the provider itself is killed (SIGKILL), which goes to the nearest subreaper
//! above, or to init.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rpc_peer::lock;
use tokio::process::{Child, Command};

/// Whether this process is its descendants' subreaper (only the provider's own process is).
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// The runs in flight: their leaders, from their spawn until they are reaped.
static IN_FLIGHT: Mutex<usize> = Mutex::new(0);
/// One sweep at a time: a pid one sweep reaped is never signalled by another.
static SWEEPING: Mutex<()> = Mutex::new(());
/// Most rounds of one sweep: each ends one generation of strays, whose children come back next.
const ROUNDS: usize = 16;
/// How long a sweep is waited for: the strays it killed reaped (it goes on alone past that).
const LIMIT: Duration = Duration::from_secs(2);

/// Makes this process the subreaper of its descendants, so that strays come back to it. The
/// provider's process does this once at its start; until then (in tests, which share their
/// process) nothing is swept.
#[allow(unsafe_code)]
pub fn adopt() -> std::io::Result<()> {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes plain integers.
    let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    ADOPTING.store(true, Ordering::SeqCst);
    Ok(())
}

/// A run in flight: drop it once its leader is reaped, never before.
pub(crate) struct Leader(());

impl Drop for Leader {
    fn drop(&mut self) {
        *lock(&IN_FLIGHT) -= 1;
    }
}

/// Spawns `command` as a run's leader, in flight before any sweep can see it.
pub(crate) fn spawn(command: &mut Command) -> std::io::Result<(Child, Leader)> {
    let mut in_flight = lock(&IN_FLIGHT);
    let child = command.spawn()?;
    *in_flight += 1;
    Ok((child, Leader(())))
}

/// Ends every stray, waiting at most [`LIMIT`] for them to be reaped (off the async threads).
pub(crate) async fn sweep() {
    if ADOPTING.load(Ordering::SeqCst) {
        let _ = tokio::time::timeout(LIMIT, tokio::task::spawn_blocking(sweep_now)).await;
    }
}

/// Kills each stray with its group, then reaps it; again for the strays that came back meanwhile.
/// Nothing while a run is in flight.
#[allow(unsafe_code)]
fn sweep_now() {
    let _one = lock(&SWEEPING);
    for _ in 0..ROUNDS {
        let strays: Vec<Stray> = {
            let in_flight = lock(&IN_FLIGHT);
            if *in_flight > 0 {
                return;
            }
            let strays = children();
            for stray in &strays {
                // SAFETY: kill and killpg take plain integers. Each pid is this process's unreaped
                // child, so neither it nor the group it leads can be another process's id.
                unsafe {
                    if stray.group == stray.pid {
                        libc::killpg(stray.pid, libc::SIGKILL);
                    }
                    libc::kill(stray.pid, libc::SIGKILL);
                }
            }
            strays
        };
        if strays.is_empty() {
            return;
        }
        for stray in strays {
            if stray.state != 'Z' {
                tracing::warn!(
                    pid = stray.pid,
                    name = %stray.name,
                    "a process a linter left behind was killed"
                );
            }
            reap(stray.pid);
        }
    }
}

/// Waits for child `pid` to end and reaps it.
#[allow(unsafe_code)]
fn reap(pid: i32) {
    loop {
        // SAFETY: a null status pointer is allowed; waitpid writes nothing then.
        let done = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if done >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// A child of this process, as `/proc/<pid>/stat` describes it.
#[derive(Debug, PartialEq)]
struct Stray {
    pid: i32,
    group: i32,
    /// `Z` once it exited and awaits its reaping.
    state: char,
    /// Its command's name, filtered (it is the process's own to set).
    name: String,
}

/// This process's children, from every process's `/proc/<pid>/stat` (the kernel's per-task
/// `children` lists are not built everywhere).
fn children() -> Vec<Stray> {
    let me = std::process::id();
    let Ok(folder) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    folder
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (parent, stray) = from_stat(pid, &stat)?;
            (parent == me).then_some(stray)
        })
        .collect()
}

/// The parent and the rest of what a `/proc/<pid>/stat` line says of process `pid`: `pid (name)
/// state ppid pgrp …`, where the name may hold spaces and parentheses.
fn from_stat(pid: i32, stat: &str) -> Option<(u32, Stray)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?;
    let mut fields = stat.get(close + 1..)?.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let name = name.chars().filter(|c| !c.is_control()).collect();
    Some((
        parent,
        Stray {
            pid,
            group,
            state,
            name,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (evil) (x) 1\x07) S 17 4242 4242 0 -1 4194560 101 0 0 0";
        let (parent, stray) = from_stat(4242, stat).unwrap();
        assert_eq!(parent, 17);
        assert_eq!(
            stray,
            Stray {
                pid: 4242,
                group: 4242,
                state: 'S',
                name: "evil) (x) 1".into(),
            }
        );
    }

    #[test]
    fn a_torn_stat_line_is_nobody() {
        assert_eq!(from_stat(1, "1 (sh) S"), None);
        assert_eq!(from_stat(1, "1 sh S 0 1"), None);
    }

    #[test]
    fn this_process_reads_with_its_parent_and_its_name() {
        let me = i32::try_from(std::process::id()).unwrap();
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let (parent, stray) = from_stat(me, &stat).unwrap();
        assert_eq!(parent, std::os::unix::process::parent_id());
        let name = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert_eq!(stray.name, name.trim_end());
    }
}
