//! The hygiene sweep side by side with pre-commit-hooks on the same generated repository: wall time
//! and peak memory of each side, their ratios, and the agreement of their findings check by check.
//!
//! Run with `cargo bench -p asp-bridge --bench precommit` (or `scripts/bench.sh` for every
//! benchmark); `-- 1` runs one round, `-- files=500` a smaller repository, `-- keep` leaves the
//! repository in place for a look. A seeded repository of
//! 5,000 files (`test_support::precommit::corpus`: JSON, YAML, TOML, Python, text, Markdown, a few
//! PNGs; planted problems of every kind both sides check), committed; then, interleaved, rounds of:
//!
//! - hooks: the pre-commit-hooks 6.0.0 console scripts (`scripts/tools/requirements.txt`, found in
//!   `ASP_BRIDGE_PRECOMMIT_HOOKS`, else `.tools/venv/bin`, else beside `ASP_BRIDGE_PYTHON`) over every
//!   tracked file as `pre-commit run --all-files` runs them (`test_support::precommit::hooks`): the
//!   wall time of all nine hooks, and the peak resident memory of the batches that ran together
//!   (`wait4` of each), the largest of any hook; pre-commit's own process is not counted;
//! - asp-bridge: `asp-bridge sarif --all-files --host-command embedded` (this build, release), from
//!   spawn to exit; its peak memory is that of its whole process tree (the CLI, the embedded host,
//!   the hygiene provider, git): the CLI's own by `wait4`, each descendant's high-water mark
//!   (`VmHWM`) sampled every 2 ms, summed over the processes alive together, the largest sum.
//!
//! Summing each process's high-water mark counts the pages processes share once per process (the
//! asp-bridge executable's own, in each of its three processes; the interpreter's, in each Python
//! process). So one more run of each side, not timed, samples the memory of its processes with
//! shared pages divided among them (`Pss`, `test_support::process::proportional_rss`) every 2 ms,
//! summed over the processes alive together: the largest sum of each side, and their ratio.
//!
//! Then the agreement table of the last round (`test_support::precommit::agreement`). Without
//! pre-commit-hooks installed the benchmark says so and does nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use test_support::precommit::{agreement, corpus, hooks};

use args::{Args, median};

#[path = "args.rs"]
mod args;
#[path = "rusage.rs"]
#[allow(dead_code, reason = "only wait4 and succeeded are used here")]
mod rusage;

const BRIDGE: &str = env!("CARGO_BIN_EXE_asp-bridge");
const FILES: usize = 5_000;
/// Rounds, unless the command line names another count (`-- 1`).
const ROUNDS: usize = 3;
/// How often the process tree's memory is sampled.
const SAMPLE: Duration = Duration::from_millis(2);

/// Where the hooks' console scripts are, if anywhere.
fn hooks_bin() -> Option<PathBuf> {
    let given = std::env::var_os("ASP_BRIDGE_PRECOMMIT_HOOKS").map(PathBuf::from);
    let venv = Some(test_support::workspace_dir().join(".tools/venv/bin"));
    let python = std::env::var_os("ASP_BRIDGE_PYTHON")
        .and_then(|p| Path::new(&p).parent().map(Path::to_owned));
    [given, venv, python]
        .into_iter()
        .flatten()
        .find(|bin| hooks::installed(bin))
}

/// One hook process to its end: its output and peak resident set (`wait4`).
// The child is reaped by `wait4` itself, which `Child::wait` cannot be combined with.
#[allow(clippy::zombie_processes)]
fn hook_process(command: &mut Command) -> hooks::Ran {
    use std::io::Read as _;
    let (mut reader, writer) = std::io::pipe().expect("a pipe");
    let child = command
        .stdin(Stdio::null())
        .stdout(writer.try_clone().expect("a pipe"))
        .stderr(writer)
        .spawn()
        .expect("spawn a hook");
    // The command keeps the write ends until it is dropped.
    drop(std::mem::replace(command, Command::new("true")));
    let mut output = String::new();
    let _ = reader.read_to_string(&mut output);
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let (_status, peak_kib) = rusage::wait4(pid);
    hooks::Ran { output, peak_kib }
}

/// `asp-bridge sarif --all-files` over `root`, this build, the embedded host.
fn bridge_command(root: &Path, config: &Path, log: &Path) -> Command {
    let mut command = Command::new(BRIDGE);
    command
        .args([
            "sarif",
            "--all-files",
            "--host-command",
            "embedded",
            "--repo",
        ])
        .arg(root)
        .arg("--config")
        .arg(config)
        .arg("--output")
        .arg(log)
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// `asp-bridge sarif --all-files` over `root`: wall time and the peak of its process tree (KiB).
// The child is reaped by `wait4` itself, which `Child::wait` cannot be combined with.
#[allow(clippy::zombie_processes)]
fn bridge(root: &Path, config: &Path, log: &Path) -> (Duration, u64) {
    let started = Instant::now();
    let child = bridge_command(root, config, log)
        .spawn()
        .expect("spawn asp-bridge");
    let pid = child.id();
    let done = AtomicBool::new(false);
    let descendants_peak = AtomicU64::new(0);
    let (status, own_kib) = std::thread::scope(|scope| {
        scope.spawn(|| {
            // Each process's high-water mark, summed over the processes seen alive together.
            while !done.load(Ordering::Relaxed) {
                let together: u64 = test_support::process::descendants(pid)
                    .into_iter()
                    .map(test_support::process::peak_rss)
                    .sum();
                descendants_peak.fetch_max(together >> 10, Ordering::Relaxed);
                std::thread::sleep(SAMPLE);
            }
        });
        let reaped = rusage::wait4(libc::pid_t::try_from(pid).expect("a pid"));
        done.store(true, Ordering::Relaxed);
        reaped
    });
    let elapsed = started.elapsed();
    assert!(
        rusage::succeeded(status),
        "asp-bridge sarif failed: {status}"
    );
    (elapsed, own_kib + descendants_peak.into_inner())
}

/// Runs `work` while the memory of the processes under `root` (and `root` itself, with
/// `with_root`) is sampled with shared pages counted once: the largest sum seen, in KiB.
fn shared_once<T>(root: u32, with_root: bool, work: impl FnOnce() -> T) -> (T, u64) {
    let done = AtomicBool::new(false);
    let peak = AtomicU64::new(0);
    let out = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let mut pids = test_support::process::descendants(root);
                if with_root {
                    pids.push(root);
                }
                let together: u64 = pids
                    .into_iter()
                    .map(test_support::process::proportional_rss)
                    .sum();
                peak.fetch_max(together >> 10, Ordering::Relaxed);
                std::thread::sleep(SAMPLE);
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    });
    (out, peak.into_inner())
}

/// One more run of `asp-bridge sarif --all-files`, not timed: its tree's largest memory with shared
/// pages counted once (KiB).
fn bridge_shared_once(root: &Path, config: &Path, log: &Path) -> u64 {
    let mut child = bridge_command(root, config, log)
        .spawn()
        .expect("spawn asp-bridge");
    let pid = child.id();
    let (status, peak) = shared_once(pid, true, || child.wait().expect("wait for asp-bridge"));
    assert!(status.success(), "asp-bridge sarif failed: {status}");
    peak
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let args = Args::from_env();
    let rounds = args.rounds(ROUNDS);
    let files = args.files(FILES, 50);
    let Some(bin) = hooks_bin() else {
        eprintln!(
            "pre-commit-hooks side by side: skipped, pre-commit-hooks is not installed (no `{}` in \
             ASP_BRIDGE_PRECOMMIT_HOOKS, .tools/venv/bin or beside ASP_BRIDGE_PYTHON; \
             scripts/test.sh installs scripts/tools/requirements.txt into .tools/venv)",
            hooks::PROBE
        );
        return;
    };
    let corpus = corpus::generate(corpus::SEED, files);
    let root = corpus.repo.root();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("host.toml");
    std::fs::write(&config, "[hygiene]\nenabled = true\n").expect("config");
    let log = dir.path().join("sweep.sarif");
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());

    let mut hook_runs = Vec::new();
    let mut bridge_runs = Vec::new();
    let mut last = None;
    for _ in 0..rounds {
        let sweep = hooks::sweep(&bin, &root, &corpus.files, jobs, &hook_process);
        hook_runs.push((sweep.wall(), sweep.peak_kib()));
        bridge_runs.push(bridge(&root, &config, &log));
        last = Some(sweep);
    }
    let sweep = last.expect("one round at least");
    // Not timed: the memory of each side with shared pages counted once.
    let (_, hooks_shared) = shared_once(std::process::id(), false, || {
        hooks::sweep(&bin, &root, &corpus.files, jobs, &hook_process)
    });
    let bridge_shared = bridge_shared_once(&root, &config, &log);
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&log).expect("the SARIF log")).expect("SARIF JSON");
    let rows = agreement::table(&sweep.flagged(), &agreement::sarif_files(&sarif));

    let (ht, hm) = (
        median(hook_runs.iter().map(|r| r.0).collect()),
        median(hook_runs.iter().map(|r| r.1).collect()),
    );
    let (bt, bm) = (
        median(bridge_runs.iter().map(|r| r.0).collect()),
        median(bridge_runs.iter().map(|r| r.1).collect()),
    );
    let speedups: Vec<f64> = hook_runs
        .iter()
        .zip(&bridge_runs)
        .map(|(h, b)| h.0.as_secs_f64() / b.0.as_secs_f64())
        .collect();
    let (low, high) = speedups
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &s| (l.min(s), h.max(s)));
    eprintln!(
        "pre-commit-hooks side by side: {} tracked files ({:.1} MiB, seed {:#x}), median of {rounds} \
         interleaved rounds, {jobs} jobs",
        corpus.files.len(),
        mib(corpus.bytes as u64 / 1024),
        corpus::SEED
    );
    eprintln!(
        "  hooks (9 console scripts, {} processes): {:.2} s, peak {:.1} MiB (batches running together)",
        sweep.processes(),
        ht.as_secs_f64(),
        mib(hm)
    );
    for hook in &sweep.hooks {
        eprintln!(
            "    {:<25} {:>7.0} ms, {} process(es), peak {:.1} MiB",
            hook.id,
            hook.wall.as_secs_f64() * 1e3,
            hook.processes,
            mib(hook.peak_kib)
        );
    }
    eprintln!(
        "  asp-bridge sarif --all-files (embedded host): {:.2} s, peak {:.1} MiB (whole process tree)",
        bt.as_secs_f64(),
        mib(bm)
    );
    eprintln!(
        "  ratio hooks / asp-bridge: time {:.2} (rounds {low:.2}–{high:.2}; target ≥ 15), memory {:.2} \
         (target ≥ 1.0)",
        ht.as_secs_f64() / bt.as_secs_f64(),
        mib(hm) / mib(bm)
    );
    eprintln!(
        "  counting shared pages once (Pss, one more run of each, not timed): hooks {:.1} MiB, \
         asp-bridge {:.1} MiB, ratio {:.2} (target ≥ 1.0)",
        mib(hooks_shared),
        mib(bridge_shared),
        mib(hooks_shared) / mib(bridge_shared)
    );
    eprintln!("  agreement, files flagged (last round):");
    eprint!("{}", agreement::render(&rows));
    if args.has("keep") {
        eprintln!("  the repository is kept: {}", root.display());
        std::mem::forget(corpus);
    }
}
