//! What a child leaves behind. A process that left its group (`setsid`, a double fork into a group
//! of its own) escapes the group kill that ends a child and its helpers. [`adopt`] makes this
//! process the subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`), so such a process comes
//! back to it when its parent ends, instead of going to init; [`children`] lists this process's
//! children (from `/proc`: the kernel's per-task `children` lists are not built everywhere), kills
//! each with its group and reaps it, round after round. The embedded host ends whatever is left
//! once its providers are stopped ([`end_all`]); the linter provider once no linter run is in
//! flight ([`end_all_while`]).
//!
//! Only a process that adopted ends anything: tests share their process with other tests'
//! children, and never adopt. Out of reach: what is left when this process itself is killed
//! (SIGKILL), which goes to the nearest subreaper above, or to init.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::lock;

/// Whether this process is its descendants' subreaper.
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// One sweep at a time: a pid one sweep reaped is never signalled by another.
static SWEEPING: Mutex<()> = Mutex::new(());
/// Most rounds of a sweep: each ends one generation, whose children come back next.
const ROUNDS: usize = 16;
/// How long a sweep is waited for: what it ended reaped (it goes on alone past that).
const LIMIT: Duration = Duration::from_secs(2);

/// Makes this process the subreaper of its descendants, so that what they leave comes back to it.
/// A command's process does this once at its start.
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

/// Whether [`adopt`] made this process a subreaper.
pub fn adopting() -> bool {
    ADOPTING.load(Ordering::SeqCst)
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

/// This process's children, from every process's `/proc/<pid>/stat`.
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

/// Kills `stray` with the group it leads (a child of this process not reaped yet: neither its id
/// nor its group's can be another process's). Reap it afterwards.
#[allow(unsafe_code)]
fn end(stray: &Stray) {
    // SAFETY: kill and killpg take plain integers.
    unsafe {
        if stray.group == stray.pid {
            libc::killpg(stray.pid, libc::SIGKILL);
        }
        libc::kill(stray.pid, libc::SIGKILL);
    }
    if stray.state != 'Z' {
        tracing::warn!(
            pid = stray.pid,
            name = %stray.name,
            "a process left behind was killed"
        );
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

/// Ends every child of this process, round after round as their own children come back: for a
/// process whose own children are all done with. Only in a process that adopted; off the async
/// threads, waited for at most [`LIMIT`].
pub async fn end_all() {
    end_all_while(|| Some(())).await;
}

/// [`end_all`] for as long as `may` gives a guard, held while a round's children are chosen and
/// killed: a caller that spawns its own children under the same lock keeps them out of reach, and
/// `None` ends the sweep.
pub async fn end_all_while<G>(may: impl FnMut() -> Option<G> + Send + 'static) {
    if adopting() {
        let sweep = tokio::task::spawn_blocking(move || end_rounds(may));
        let _ = tokio::time::timeout(LIMIT, sweep).await;
    }
}

/// Kills each child with its group, then reaps it; again for those that came back meanwhile.
fn end_rounds<G>(mut may: impl FnMut() -> Option<G>) {
    let _one = lock(&SWEEPING);
    for _ in 0..ROUNDS {
        let strays = {
            let Some(_held) = may() else {
                return;
            };
            let strays = children();
            strays.iter().for_each(end);
            strays
        };
        if strays.is_empty() {
            return;
        }
        for stray in strays {
            reap(stray.pid);
        }
    }
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
