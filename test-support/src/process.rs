//! Child processes waited for with a deadline against a hang: a test never blocks for ever.

use std::process::{Child, Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// Waits for `child` to end and returns its exit code; kills it (SIGKILL) and fails the test if it
/// is still running after `limit`.
pub fn wait_exit(child: Child, limit: Duration) -> Option<i32> {
    let pid = child.id();
    let mut child = child;
    let (done, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    match waiting.recv_timeout(limit) {
        Ok(status) => status.expect("wait").code(),
        Err(_) => {
            kill(pid);
            panic!("process {pid} still running after {limit:?}");
        }
    }
}

/// Waits for `child` and collects its output; kills it and fails the test after `limit`.
pub fn wait_output(child: Child, limit: Duration) -> Output {
    let pid = child.id();
    let (done, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waiting.recv_timeout(limit) {
        Ok(output) => output.expect("wait"),
        Err(_) => {
            kill(pid);
            panic!("process {pid} still running after {limit:?}");
        }
    }
}

/// `program args` started with its stdin and stdout piped and its stderr discarded.
pub fn piped<S: AsRef<std::ffi::OsStr>>(program: impl AsRef<std::ffi::OsStr>, args: &[S]) -> Child {
    use std::process::Stdio;
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn")
}

/// What a reference implementation makes of each of `cases`: `program` runs `args` with the JSON
/// list of the cases on stdin and prints one JSON value (a test's script prints a list of verdicts,
/// or `null` when what it needs is not installed), within `limit`.
pub fn json_verdicts(
    program: &std::ffi::OsStr,
    args: &[&str],
    cases: &[&str],
    limit: Duration,
) -> serde_json::Value {
    use std::io::Write as _;
    let mut child = piped(program, args);
    let input = serde_json::to_vec(cases).expect("the cases as JSON");
    let mut stdin = child.stdin.take().expect("its stdin");
    // Written from a thread of its own, so a reference that prints before it has read all its
    // input cannot leave both sides waiting; the deadline below covers both.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = wait_output(child, limit);
    serde_json::from_slice(&output.stdout).expect("the reference prints JSON")
}

/// Whether the process `pid` has ended: gone, or a zombie nobody has reaped yet.
#[cfg(target_os = "linux")]
pub fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Whether the process `pid` has ended: gone, or a zombie nobody has reaped yet (`ps`, where there
/// is no `/proc`).
#[cfg(not(target_os = "linux"))]
pub fn ended(pid: u32) -> bool {
    let stat = ps(&["-o", "stat=", "-p", &pid.to_string()]);
    stat.trim().is_empty() || stat.trim_start().starts_with('Z')
}

/// What `ps ARGS` printed; empty when it failed (`ps` exits 1 when no process matched).
#[cfg(not(target_os = "linux"))]
fn ps(args: &[&str]) -> String {
    let output = Command::new("ps")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => {
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
        _ => String::new(),
    }
}

/// Waits until `pid` has ended ([`ended`]); false if it is still running after 10 s. The runtime
/// goes on meanwhile, so the code under test can end it.
pub async fn ends(pid: u32) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !ended(pid) {
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The live children of `pid` (of each of its threads), from `/proc`.
#[cfg(target_os = "linux")]
pub fn children(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    tasks
        .flatten()
        .flat_map(|task| {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            children
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Every live descendant of `pid` (children first, then theirs), from `/proc`.
#[cfg(target_os = "linux")]
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for child in children(parent) {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// Every live descendant of `pid` (children first, then theirs), from `ps`'s table of every
/// process and its parent.
#[cfg(not(target_os = "linux"))]
pub fn descendants(pid: u32) -> Vec<u32> {
    let table: Vec<(u32, u32)> = ps(&["-A", "-o", "pid=,ppid="])
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().map(|f| f.parse().ok());
            Some((fields.next()??, fields.next()??))
        })
        .collect();
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for &(child, _) in table.iter().filter(|(_, p)| *p == parent) {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// The command line of `pid`, its arguments joined by spaces (empty once it has ended).
#[cfg(target_os = "linux")]
pub fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw)
        .replace('\0', " ")
        .trim_end()
        .to_owned()
}

/// The command line of `pid`, its arguments joined by spaces (empty once it has ended).
#[cfg(not(target_os = "linux"))]
pub fn command_line(pid: u32) -> String {
    ps(&["-o", "command=", "-p", &pid.to_string()])
        .trim()
        .to_owned()
}

/// The peak resident memory of `pid` so far, in bytes (`VmHWM` in `/proc/PID/status`).
#[cfg(target_os = "linux")]
pub fn peak_rss(pid: u32) -> u64 {
    kib_field(&format!("/proc/{pid}/status"), "VmHWM:")
}

/// The `field` line's `N kB` of the `/proc` file at `path`, in bytes; 0 when there is none.
#[cfg(target_os = "linux")]
fn kib_field(path: &str, field: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// The memory of `pid` now, its shared pages divided among the processes that share them (`Pss` in
/// `/proc/PID/smaps_rollup`), in bytes: summed over processes that run the same executable, the
/// executable's pages count once. 0 once it has ended.
#[cfg(target_os = "linux")]
pub fn proportional_rss(pid: u32) -> u64 {
    kib_field(&format!("/proc/{pid}/smaps_rollup"), "Pss:")
}

/// Where there is no `/proc` (macOS) there is no `Pss` either: the resident memory now, shared
/// pages counted in full (an upper bound).
#[cfg(not(target_os = "linux"))]
pub fn proportional_rss(pid: u32) -> u64 {
    peak_rss(pid)
}

/// The CPU time `pid` has used so far, user and system (`/proc/PID/stat`, in clock ticks of
/// 10 ms, as Linux reports them to processes).
#[cfg(target_os = "linux")]
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Where there is no `/proc` (macOS) no process can read another's peak: this is its resident
/// memory now (`ps -o rss=`, in KiB), which the peak bounds from above, so a bound on it is a weaker
/// check than on Linux but still one. In bytes; 0 once it has ended.
#[cfg(not(target_os = "linux"))]
pub fn peak_rss(pid: u32) -> u64 {
    let kib = ps(&["-o", "rss=", "-p", &pid.to_string()]);
    kib.trim().parse::<u64>().map_or(0, |kib| kib * 1024)
}

/// The CPU time `pid` has used so far, user and system (`ps -o time=`: `[[DD-]HH:]MM:SS[.CC]`).
#[cfg(not(target_os = "linux"))]
pub fn cpu_time(pid: u32) -> Duration {
    let time = ps(&["-o", "time=", "-p", &pid.to_string()]);
    let (days, time) = time.trim().split_once('-').unwrap_or(("0", time.trim()));
    let mut seconds = days.parse::<f64>().unwrap_or(0.0) * 86_400.0;
    for (field, scale) in time.rsplit(':').zip([1.0, 60.0, 3_600.0]) {
        seconds += field.parse::<f64>().unwrap_or(0.0) * scale;
    }
    Duration::from_secs_f64(seconds)
}

fn kill(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

/// Makes a FIFO at `path` (`mkfifo`), failing the test when it cannot.
pub fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A FIFO that tells whether processes hold it open for writing, for tests that must know when a
/// process has started and when it is gone without polling: a thread opens the read end (which waits
/// for a first writer) and reads until every writer has closed it, which a process does when it ends.
pub struct FifoWriters {
    path: std::path::PathBuf,
    opened: mpsc::Receiver<()>,
    closed: mpsc::Receiver<()>,
}

impl FifoWriters {
    /// Makes the FIFO at `path` and starts reading it.
    pub fn new(path: &std::path::Path) -> FifoWriters {
        mkfifo(path);
        let (open, opened) = mpsc::channel();
        let (close, closed) = mpsc::channel();
        let reading = path.to_owned();
        std::thread::spawn(move || {
            let Ok(mut fifo) = std::fs::File::open(&reading) else {
                return;
            };
            let _ = open.send(());
            let _ = std::io::copy(&mut fifo, &mut std::io::sink());
            let _ = close.send(());
        });
        FifoWriters {
            path: path.to_owned(),
            opened,
            closed,
        }
    }

    /// Waits until a process has opened it for writing; fails the test after `limit`.
    pub fn wait_opened(&self, limit: Duration) {
        assert!(
            self.opened.recv_timeout(limit).is_ok(),
            "no process opened {} within {limit:?}",
            self.path.display()
        );
    }

    /// Waits until every process that opened it has closed it (or ended); fails the test after
    /// `limit`.
    pub fn wait_closed(&self, limit: Duration) {
        assert!(
            self.closed.recv_timeout(limit).is_ok(),
            "a process still holds {} open after {limit:?}",
            self.path.display()
        );
    }
}
