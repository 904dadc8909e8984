//! The linter runner against the linter run directly (issue 25, "Performance"; `LINTERS.md` §5):
//! ruff through the embedded host, cold and warm, against `ruff check` on the same files.
//!
//! Run with `cargo bench -p asp-bridge --bench linters` (or `scripts/bench.sh` for every
//! benchmark); `-- 1` runs one round, `-- files=200` fewer files, `-- keep` leaves the repositories
//! in place for a look, `-- config` commits a `pyproject.toml` (two rules beyond ruff's defaults)
//! that both sides read. ruff is found on `PATH`, else in `.tools/venv/bin`, else beside
//! `ASP_BRIDGE_PYTHON`, and put first on the bridge's `PATH` (the runner finds it there); without
//! it the benchmark says so and does nothing.
//!
//! Two seeded repositories of generated Python modules (`linters/python.rs`: a few hundred lines
//! each, with unused imports and locals, f-strings without placeholders, bare `except:`, `== None`
//! and `== True` planted; the last two are reported with `-- config` only), linted with ruff's
//! defaults: *one*, 1,000 modules committed and one of them changed; *many*, 1,000 modules
//! untracked (changed). The host's `host.toml` enrolls ruff alone (`[[linter]] preset = "ruff"`)
//! and disables hygiene, which is enrolled by default, so the figures are ruff's. Then,
//! interleaved, rounds of, on each repository:
//!
//! - direct: `ruff check --output-format sarif --no-cache FILES` in the repository (the changed
//!   files), from spawn to exit; its peak memory (`VmHWM`, sampled as below: `wait4` would count
//!   this process's own) and its CPU time;
//! - cold: `asp-bridge sarif --host-command embedded --config host.toml` (a new host and provider
//!   each time), from spawn to exit; the peak memory of its process tree (the CLI, the host, the
//!   provider, git and ruff): each process's high-water mark (`VmHWM`) sampled every 2 ms, summed
//!   over the processes alive together, the largest sum; the same for each part of the tree, and
//!   for the tree without ruff (a child not yet past its `exec` is not counted: it still shares
//!   its parent's memory); the CPU time of the whole tree (`wait4`);
//! - warm: one `asp-bridge mcp` session, `asp_diagnostics` twice with nothing changed in between:
//!   the time of the second call (the host and provider stay up; the runner answers from what it
//!   kept by blob).
//!
//! And where the time of *many* goes: `asp-bridge sarif` with no provider at all (the CLI, git,
//! the changeset and the host) and with a no-op linter (a command that prints an empty SARIF log:
//! everything but ruff's own work, i.e. the provider's start, its blob reads and scratch writes,
//! the runs); both again with the scratch trees on tmpfs (`XDG_RUNTIME_DIR` a private folder in `/dev/shm`, where there is one);
//! ruff run directly in the runner's batches, one after another (the bridge sends 500 files a
//! host request, the provider kit hands the checker 128 at a time); and the warm second call with
//! no provider and with the no-op linter. The figures are medians of the rounds, as ratios
//! against the direct run of the same round; the findings of the last round are compared.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::git::Repo;
use test_support::mcp::{LEGACY, McpClient};

use args::{Args, median};

#[path = "args.rs"]
mod args;
#[path = "linters/python.rs"]
mod python;
#[path = "rusage.rs"]
#[allow(dead_code, reason = "only reap and succeeded are used here")]
mod rusage;

const BRIDGE: &str = env!("CARGO_BIN_EXE_asp-bridge");
const FILES: usize = 1_000;
/// Rounds, unless the command line names another count (`-- 1`).
const ROUNDS: usize = 3;
const SEED: u64 = 0x11e7_2025;
/// How often the process tree's memory is sampled.
const SAMPLE: Duration = Duration::from_millis(2);
/// How long one MCP call may take.
const ANSWER: Duration = Duration::from_secs(300);
/// Files one host request carries, and files the provider kit hands the checker at once
/// (`provider_kit::evaluate::CHUNK`): the batches ruff runs in.
const BATCH_FILES: usize = bridge_core::worktree::BATCH_FILES;
const CHUNK: usize = 128;

/// The targets of issue 25.
const COLD_TARGET: f64 = 1.25;
const WARM_TARGET: f64 = 0.1;
const MEMORY_TARGET_MIB: f64 = 64.0;

/// ruff, wherever it is.
fn find_ruff() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let venv = test_support::workspace_dir().join(".tools/venv/bin");
    let python = std::env::var_os("ASP_BRIDGE_PYTHON")
        .and_then(|p| Path::new(&p).parent().map(Path::to_owned));
    on_path
        .into_iter()
        .chain([venv])
        .chain(python)
        .map(|dir| dir.join("ruff"))
        .find(|ruff| ruff.is_file())
}

/// A repository of generated modules: the paths changed, and what `ruff check` is given.
struct Corpus {
    repo: Repo,
    changed: Vec<String>,
    bytes: usize,
}

/// *one* (`all_changed` false: every module committed, then the first changed) or *many* (every
/// module untracked); with `config`, a committed `pyproject.toml` too.
fn corpus(files: usize, all_changed: bool, config: bool) -> Corpus {
    let repo = if config {
        Repo::new(&[("pyproject.toml", python::PYPROJECT)])
    } else {
        Repo::new(&[])
    };
    let mut rng = python::Rng::new(SEED);
    let mut bytes = 0;
    let paths: Vec<String> = (0..files).map(python::path).collect();
    for (i, path) in paths.iter().enumerate() {
        let text = python::module(&mut rng, i);
        bytes += text.len();
        repo.write(path, &text);
    }
    let changed = if all_changed {
        paths
    } else {
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "modules"]);
        let first = &paths[0];
        let mut text = std::fs::read_to_string(repo.root().join(first)).expect("a module");
        text.push_str(
            "\n\ndef added(value):\n    if value == None:\n        return 0\n    return value\n",
        );
        repo.write(first, &text);
        vec![first.clone()]
    };
    // A working copy's index is written after its files, as any git command a person runs leaves
    // it. Files written in the same second as the index are "racily clean" to git, which hashes
    // them again at every `git status` (the bridge's runs with `--no-optional-locks`, so they never
    // write the refreshed index): without this, every evaluation of *one* re-hashed all 1,000
    // committed modules, an artefact of a repository made a moment ago.
    std::thread::sleep(Duration::from_millis(1100));
    repo.git(&["status", "--porcelain"]);
    Corpus {
        repo,
        changed,
        bytes,
    }
}

/// How a child ended and what it used.
struct Ran {
    wall: Duration,
    /// CPU time (user and system) of the process and every descendant it reaped.
    cpu: Duration,
    /// The peak resident memory of its process tree (KiB, sampled).
    peak_kib: u64,
    /// Sampled runs: the peak of each part of the tree, and of the tree without the linter.
    parts: Parts,
}

/// The parts of the bridge's process tree.
#[derive(Clone, Copy)]
enum Part {
    Cli,
    Host,
    Provider,
    /// ruff, or the no-op linter's `printf`.
    Linter,
    Git,
}

/// Peaks (KiB) of the processes of each [`Part`] alive together, and of the tree without the
/// linter.
#[derive(Clone, Copy, Default)]
struct Parts {
    each: [u64; 5],
    without_linter: u64,
}

/// `ruff check --output-format sarif --no-cache FILES` in `root`, its log written to `log`.
fn direct(ruff: &Path, root: &Path, files: &[String], log: &Path) -> Ran {
    let started = Instant::now();
    let child = Command::new(ruff)
        .args(["check", "--output-format", "sarif", "--no-cache"])
        .args(files)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(log).expect("the direct log"))
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ruff");
    let (status, ran) = watch(child, started);
    // 1: findings.
    assert!(
        libc::WIFEXITED(status) && matches!(libc::WEXITSTATUS(status), 0 | 1),
        "ruff failed: status {status}"
    );
    ran
}

/// ruff run directly as the runner runs it: in batches of `BATCH_FILES` cut into chunks of
/// `CHUNK`, one after another; wall and CPU time.
fn direct_in_chunks(
    ruff: &Path,
    root: &Path,
    files: &[String],
    log: &Path,
) -> (Duration, Duration) {
    let started = Instant::now();
    let mut cpu = Duration::ZERO;
    for batch in files.chunks(BATCH_FILES) {
        for chunk in batch.chunks(CHUNK) {
            cpu += direct(ruff, root, chunk, log).cpu;
        }
    }
    (started.elapsed(), cpu)
}

/// The high-water mark (KiB) of process `pid` (`VmHWM`).
fn hwm(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
}

fn command_line(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// The part of the tree a process is, by its command line.
fn part(line: &[u8]) -> Part {
    let args: Vec<&[u8]> = line.split(|&b| b == 0).collect();
    let program = args[0].rsplit(|&b| b == b'/').next().unwrap_or_default();
    let has = |word: &[u8]| args.contains(&word);
    match program {
        b"git" => Part::Git,
        b"asp-bridge" if has(b"host") => Part::Host,
        b"asp-bridge" if has(b"provider") => Part::Provider,
        b"asp-bridge" => Part::Cli,
        _ => Part::Linter,
    }
}

/// One look at the tree under `root`: each process's high-water mark, added up by part. A child
/// not yet past its `exec` (its command line still its parent's) shares or copies its parent's
/// memory and is not counted.
fn look(root: u32) -> [u64; 5] {
    let mut each = [0; 5];
    let mut next = vec![(root, command_line(std::process::id()))];
    while let Some((pid, parent_line)) = next.pop() {
        let line = command_line(pid);
        if line.is_empty() || line == parent_line {
            continue;
        }
        each[part(&line) as usize] += hwm(pid);
        for child in test_support::process::children(pid) {
            next.push((child, line.clone()));
        }
    }
    each
}

/// Runs `command` to its end (exit 0), its stdio null.
fn sampled(command: &mut Command) -> Ran {
    let started = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let (status, ran) = watch(child, started);
    assert!(
        rusage::succeeded(status),
        "{command:?} failed: status {status}"
    );
    ran
}

/// Samples the memory of `child`'s process tree until it ends, then reaps it: its wait status,
/// and what it used since `started`.
// The child is reaped by `wait4` itself, which `Child::wait` cannot be combined with.
#[allow(clippy::zombie_processes)]
fn watch(child: std::process::Child, started: Instant) -> (libc::c_int, Ran) {
    let pid = child.id();
    let done = AtomicBool::new(false);
    let peaks: [AtomicU64; 7] = Default::default();
    let (status, cpu) = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let each = look(pid);
                for (peak, kib) in peaks.iter().zip(each) {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                let all: u64 = each.iter().sum();
                peaks[5].fetch_max(all, Ordering::Relaxed);
                peaks[6].fetch_max(all - each[Part::Linter as usize], Ordering::Relaxed);
                std::thread::sleep(SAMPLE);
            }
        });
        let (status, _, cpu) = rusage::reap(libc::pid_t::try_from(pid).expect("a pid"));
        done.store(true, Ordering::Relaxed);
        (status, cpu)
    });
    let wall = started.elapsed();
    let peak = |i: usize| peaks[i].load(Ordering::Relaxed);
    let ran = Ran {
        wall,
        cpu,
        peak_kib: peak(5),
        parts: Parts {
            each: [peak(0), peak(1), peak(2), peak(3), peak(4)],
            without_linter: peak(6),
        },
    };
    (status, ran)
}

/// `asp-bridge SUBCOMMAND` on the embedded host in `root` with `config`, in the bridge's
/// environment: ruff first on `PATH`, no host or configuration from outside, and the scratch trees
/// under `tmp` if given.
fn bridge_command(
    ruff: &Path,
    subcommand: &str,
    root: &Path,
    config: &Path,
    tmp: Option<&Path>,
) -> Command {
    let mut path = OsString::from(ruff.parent().expect("ruff in a folder"));
    if let Some(outer) = std::env::var_os("PATH") {
        path.push(":");
        path.push(outer);
    }
    let mut command = Command::new(BRIDGE);
    command
        .args([subcommand, "--host-command", "embedded", "--repo"])
        .arg(root)
        .arg("--config")
        .arg(config)
        .current_dir(root)
        .env("PATH", path)
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .env_remove("ASP_BRIDGE_CONFIG")
        .env_remove("ASP_BRIDGE_LOG");
    if let Some(tmp) = tmp {
        // The runner makes its scratch trees in a private XDG_RUNTIME_DIR.
        command.env("XDG_RUNTIME_DIR", tmp);
    }
    command
}

/// `asp-bridge sarif` on the working-tree changes of `root`, a new host each time.
fn cold(ruff: &Path, root: &Path, config: &Path, log: &Path, tmp: Option<&Path>) -> Ran {
    let mut command = bridge_command(ruff, "sarif", root, config, tmp);
    command.arg("--output").arg(log);
    sampled(&mut command)
}

/// One `asp-bridge mcp` session: the times of two `asp_diagnostics` calls, nothing changed
/// between them, and the findings each saw. With `linted`, each must say that every provider ran.
fn warm(ruff: &Path, root: &Path, config: &Path, linted: bool) -> [(Duration, u64); 2] {
    let command = bridge_command(ruff, "mcp", root, config, None);
    let mut client = McpClient::spawn_with_deadline(command, LEGACY, ANSWER);
    let mut call = || {
        let started = Instant::now();
        let result = client.call("asp_diagnostics", json!({}));
        let took = started.elapsed();
        let body = &result["structuredContent"];
        assert!(
            result["isError"] != true && (!linted || body["incomplete"] == false),
            "asp_diagnostics: {result:#}"
        );
        (took, body["totalFindings"].as_u64().unwrap_or(u64::MAX))
    };
    let answers = [call(), call()];
    client.close();
    answers
}

/// Fails unless the SARIF log says every provider ran (a degraded run linted nothing).
fn assert_complete(log: &Path) {
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(log).expect("a SARIF log")).expect("SARIF JSON");
    let coverage = &sarif["runs"][0]["properties"]["coverage"];
    assert!(
        coverage["complete"] == true,
        "asp-bridge sarif: ruff did not run: {coverage:#}"
    );
}

/// Each result of a SARIF log as (rule without its `ruff/` namespace, repository path, line).
fn results(log: &Path, root: &Path) -> BTreeSet<(String, String, u64)> {
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(log).expect("a SARIF log")).expect("SARIF JSON");
    let prefix = format!("file://{}/", root.display());
    let mut found = BTreeSet::new();
    for run in sarif["runs"].as_array().into_iter().flatten() {
        for result in run["results"].as_array().into_iter().flatten() {
            let rule = result["ruleId"].as_str().unwrap_or_default();
            let location = &result["locations"][0]["physicalLocation"];
            let uri = location["artifactLocation"]["uri"]
                .as_str()
                .unwrap_or_default();
            found.insert((
                rule.strip_prefix("ruff/").unwrap_or(rule).to_owned(),
                uri.strip_prefix(&prefix).unwrap_or(uri).to_owned(),
                location["region"]["startLine"].as_u64().unwrap_or(0),
            ));
        }
    }
    found
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The lowest and highest of some ratios.
fn range(ratios: &[f64]) -> (f64, f64) {
    ratios
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &r| (l.min(r), h.max(r)))
}

/// One repository's rounds.
#[derive(Default)]
struct Rounds {
    direct: Vec<Ran>,
    cold: Vec<Ran>,
    warm: Vec<[(Duration, u64); 2]>,
}

impl Rounds {
    fn run(&mut self, ruff: &Path, corpus: &Corpus, config: &Path, logs: &Path) {
        let root = corpus.repo.root();
        let direct_log = logs.join("direct.sarif");
        self.direct
            .push(direct(ruff, &root, &corpus.changed, &direct_log));
        let log = logs.join("bridge.sarif");
        self.cold.push(cold(ruff, &root, config, &log, None));
        assert_complete(&log);
        self.warm.push(warm(ruff, &root, config, true));
    }

    fn direct(&self) -> Duration {
        median(self.direct.iter().map(|r| r.wall).collect())
    }

    fn report(&self, name: &str, corpus: &Corpus, logs: &Path) {
        let root = corpus.repo.root();
        let direct = self.direct();
        let cold = median(self.cold.iter().map(|r| r.wall).collect());
        let second = median(self.warm.iter().map(|w| w[1].0).collect());
        let first = median(self.warm.iter().map(|w| w[0].0).collect());
        let ratios = |of: &dyn Fn(usize) -> Duration| -> Vec<f64> {
            (0..self.direct.len())
                .map(|i| of(i).as_secs_f64() / self.direct[i].wall.as_secs_f64())
                .collect()
        };
        let (cold_low, cold_high) = range(&ratios(&|i| self.cold[i].wall));
        let (warm_low, warm_high) = range(&ratios(&|i| self.warm[i][1].0));
        eprintln!(
            "  {name}: {} changed file(s) of {:.1} MiB of Python",
            corpus.changed.len(),
            corpus.bytes as f64 / (1 << 20) as f64
        );
        eprintln!(
            "    direct `ruff check --output-format sarif --no-cache`: {:.1} ms, peak {:.1} MiB",
            ms(direct),
            mib(median(self.direct.iter().map(|r| r.peak_kib).collect()))
        );
        eprintln!(
            "    cold `asp-bridge sarif` (embedded host): {:.1} ms, ratio {:.2} (rounds {cold_low:.2}–{cold_high:.2}; \
             target ≤ {COLD_TARGET}), overhead {:+.1} ms",
            ms(cold),
            cold.as_secs_f64() / direct.as_secs_f64(),
            ms(cold) - ms(direct)
        );
        eprintln!(
            "    warm MCP asp_diagnostics, second call: {:.1} ms, ratio {:.3} (rounds {warm_low:.3}–{warm_high:.3}; \
             target ≤ {WARM_TARGET}); the session's first call {:.1} ms",
            ms(second),
            second.as_secs_f64() / direct.as_secs_f64(),
            ms(first)
        );
        let peak = |of: &dyn Fn(&Ran) -> u64| mib(median(self.cold.iter().map(of).collect()));
        let cpu = |runs: &[Ran]| ms(median(runs.iter().map(|r| r.cpu).collect()));
        eprintln!(
            "    CPU (user + system): cold tree {:.0} ms, ruff directly {:.0} ms",
            cpu(&self.cold),
            cpu(&self.direct)
        );
        let own = mib(median(self.direct.iter().map(|r| r.peak_kib).collect()));
        let tree = peak(&|r| r.peak_kib);
        eprintln!(
            "    memory: tree peak {tree:.1} MiB, ruff directly {own:.1} MiB, difference {:.1} MiB \
             (target ≤ {MEMORY_TARGET_MIB}); the tree without ruff {:.1} MiB (CLI {:.1}, host {:.1}, \
             provider {:.1}, git {:.1}), ruff in it {:.1} MiB",
            tree - own,
            peak(&|r| r.parts.without_linter),
            peak(&|r| r.parts.each[Part::Cli as usize]),
            peak(&|r| r.parts.each[Part::Host as usize]),
            peak(&|r| r.parts.each[Part::Provider as usize]),
            peak(&|r| r.parts.each[Part::Git as usize]),
            peak(&|r| r.parts.each[Part::Linter as usize]),
        );
        let (direct_found, bridge_found) = (
            results(&logs.join("direct.sarif"), &root),
            results(&logs.join("bridge.sarif"), &root),
        );
        let warm_found: BTreeSet<u64> = self.warm.iter().flatten().map(|w| w.1).collect();
        eprintln!(
            "    findings (last round): ruff {}, asp-bridge sarif {}, both {}; asp_diagnostics {warm_found:?}",
            direct_found.len(),
            bridge_found.len(),
            direct_found.intersection(&bridge_found).count(),
        );
    }
}

/// Where the time of *many* goes, one round of each: wall and CPU time.
#[derive(Default)]
struct Breakdown {
    /// `asp-bridge sarif` with no provider, then with the no-op linter.
    bare: Vec<(Duration, Duration)>,
    noop: Vec<(Duration, Duration)>,
    /// The peaks of the tree with the no-op linter: what the files cost without findings.
    noop_parts: Vec<Parts>,
    /// `asp-bridge sarif` with the no-op linter and with ruff, the scratch trees on tmpfs.
    noop_tmpfs: Vec<(Duration, Duration)>,
    ruff_tmpfs: Vec<(Duration, Duration)>,
    /// ruff directly, in the runner's chunks.
    chunks: Vec<(Duration, Duration)>,
    /// The second `asp_diagnostics` of a session with no provider, then with the no-op linter.
    bare_warm: Vec<Duration>,
    noop_warm: Vec<Duration>,
}

/// A private folder (mode 0700) on tmpfs, if the machine has one: what a desktop session's
/// `XDG_RUNTIME_DIR` is.
fn tmpfs() -> Option<tempfile::TempDir> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mounted = mounts.lines().any(|l| {
        let fields: Vec<&str> = l.split(' ').collect();
        fields.get(1) == Some(&"/dev/shm") && fields.get(2) == Some(&"tmpfs")
    });
    mounted
        .then(|| {
            tempfile::Builder::new()
                .prefix("asp-bridge-bench-")
                .tempdir_in("/dev/shm")
                .ok()
        })
        .flatten()
}

impl Breakdown {
    fn run(&mut self, ruff: &Path, corpus: &Corpus, dir: &Path, tmpfs: Option<&Path>) {
        let root = corpus.repo.root();
        let log = dir.join("breakdown.sarif");
        let (bare, noop) = (dir.join("bare.toml"), dir.join("noop.toml"));
        let times = |ran: Ran| (ran.wall, ran.cpu);
        self.bare.push(times(cold(ruff, &root, &bare, &log, None)));
        let ran = cold(ruff, &root, &noop, &log, None);
        self.noop_parts.push(ran.parts);
        self.noop.push(times(ran));
        assert_complete(&log);
        if let Some(tmp) = tmpfs {
            self.noop_tmpfs
                .push(times(cold(ruff, &root, &noop, &log, Some(tmp))));
            let ruff_config = dir.join("host.toml");
            self.ruff_tmpfs
                .push(times(cold(ruff, &root, &ruff_config, &log, Some(tmp))));
            assert_complete(&log);
        }
        self.chunks
            .push(direct_in_chunks(ruff, &root, &corpus.changed, &log));
        self.bare_warm.push(warm(ruff, &root, &bare, false)[1].0);
        self.noop_warm.push(warm(ruff, &root, &noop, true)[1].0);
    }

    fn report(&self, many: &Rounds, files: usize) {
        let direct = many.direct();
        let cold = median(many.cold.iter().map(|r| r.wall).collect());
        let second = median(many.warm.iter().map(|w| w[1].0).collect());
        // Wall time (ms), and "ms (CPU ms)".
        let wall =
            |samples: &[(Duration, Duration)]| ms(median(samples.iter().map(|s| s.0).collect()));
        let of = |samples: &[(Duration, Duration)]| {
            let cpu = median(samples.iter().map(|s| s.1).collect());
            format!("{:.1} ms (CPU {:.0} ms)", wall(samples), ms(cpu))
        };
        let runs = files.div_ceil(BATCH_FILES) * BATCH_FILES.min(files).div_ceil(CHUNK);
        eprintln!(
            "  where the time of many goes (medians; direct ruff {:.1} ms):",
            ms(direct)
        );
        eprintln!(
            "    cold: no provider (CLI, git, the changeset, the host) {}; a no-op linter \
             (+ the provider, its blob reads and scratch writes, {runs} runs of printf) {}; \
             with ruff {:.1} ms",
            of(&self.bare),
            of(&self.noop),
            ms(cold)
        );
        let peak =
            |of: &dyn Fn(&Parts) -> u64| mib(median(self.noop_parts.iter().map(of).collect()));
        eprintln!(
            "    memory with the no-op linter (no findings): the tree without it {:.1} MiB (CLI {:.1}, \
             host {:.1}, provider {:.1})",
            peak(&|p| p.without_linter),
            peak(&|p| p.each[Part::Cli as usize]),
            peak(&|p| p.each[Part::Host as usize]),
            peak(&|p| p.each[Part::Provider as usize]),
        );
        if !self.noop_tmpfs.is_empty() {
            eprintln!(
                "    cold, the scratch trees on tmpfs (XDG_RUNTIME_DIR in /dev/shm): a no-op linter {}, \
                 with ruff {} (ratio {:.2})",
                of(&self.noop_tmpfs),
                of(&self.ruff_tmpfs),
                wall(&self.ruff_tmpfs) / ms(direct)
            );
        }
        eprintln!(
            "    ruff directly in the runner's {runs} chunks of ≤ {CHUNK} files, one after another: \
             {} (ratio {:.2} to one run)",
            of(&self.chunks),
            wall(&self.chunks) / ms(direct)
        );
        let warm = |samples: &[Duration]| ms(median(samples.to_vec()));
        eprintln!(
            "    warm second call: no provider {:.1} ms; a no-op linter {:.1} ms; with ruff {:.1} ms",
            warm(&self.bare_warm),
            warm(&self.noop_warm),
            ms(second)
        );
    }
}

/// The configurations: ruff alone, a no-op linter alone, no provider.
fn configs(dir: &Path) {
    let off = "[hygiene]\nenabled = false\n";
    let ruff = format!("{off}\n[[linter]]\npreset = \"ruff\"\n");
    std::fs::write(dir.join("host.toml"), ruff).expect("host.toml");
    // The preset's files and configuration files; a command that prints an empty SARIF log.
    let empty = r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"noop"}},"results":[]}]}"#;
    let noop = format!(
        "{off}\n[[linter]]\nid = \"noop\"\npreset = \"ruff\"\ncommand = [\"printf\", \"%s\", '{empty}']\n"
    );
    std::fs::write(dir.join("noop.toml"), noop).expect("noop.toml");
    std::fs::write(dir.join("bare.toml"), off).expect("bare.toml");
}

fn main() {
    let args = Args::from_env();
    let rounds = args.rounds(ROUNDS);
    let files = args.files(FILES, 1);
    let Some(ruff) = find_ruff() else {
        eprintln!(
            "linters against ruff directly: skipped, ruff is not installed (not on PATH, in \
             .tools/venv/bin or beside ASP_BRIDGE_PYTHON; scripts/test.sh installs it)"
        );
        return;
    };
    let version = Command::new(&ruff).arg("--version").output().map_or_else(
        |_| "ruff (version unknown)".to_owned(),
        |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
    );
    let config_file = args.has("config");
    let one = corpus(files, false, config_file);
    let many = corpus(files, true, config_file);
    let dir = tempfile::tempdir().expect("tempdir");
    configs(dir.path());
    let config = dir.path().join("host.toml");
    let (one_logs, many_logs) = (dir.path().join("one"), dir.path().join("many"));
    std::fs::create_dir_all(&one_logs).expect("a folder");
    std::fs::create_dir_all(&many_logs).expect("a folder");
    let tmpfs = tmpfs();

    let (mut small, mut large) = (Rounds::default(), Rounds::default());
    let mut parts = Breakdown::default();
    for _ in 0..rounds {
        small.run(&ruff, &one, &config, &one_logs);
        large.run(&ruff, &many, &config, &many_logs);
        parts.run(&ruff, &many, dir.path(), tmpfs.as_ref().map(|d| d.path()));
    }
    eprintln!(
        "linters against ruff directly: {version} ({}), seed {SEED:#x}, median of {rounds} interleaved \
         rounds, {} cores; hygiene disabled{}",
        ruff.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        if config_file {
            "; a committed pyproject.toml"
        } else {
            ""
        }
    );
    small.report("one", &one, &one_logs);
    large.report("many", &many, &many_logs);
    parts.report(&large, files);
    if args.has("keep") {
        eprintln!(
            "  the repositories are kept: {} (one), {} (many); the configurations: {}",
            one.repo.root().display(),
            many.repo.root().display(),
            dir.path().display()
        );
        std::mem::forget((one, many, dir));
    }
}
