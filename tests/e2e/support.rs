//! Helpers shared by the end-to-end tests: paths of the binaries, the bridge as a child, runs with a
//! deadline, scratch repositories, and the orphan check. What other crates' tests need too lives in
//! `test-support`.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn bridge_bin() -> &'static str {
    env!("CARGO_BIN_EXE_asp-bridge")
}

/// The fake host (`test-support`'s `fake-host`), built next to the bridge.
pub(crate) fn fake_host_bin() -> &'static str {
    test_support::fake_host_bin(bridge_bin())
        .to_str()
        .expect("a UTF-8 path")
}

pub(crate) fn fixtures() -> PathBuf {
    test_support::fixtures_dir()
}

/// `asp-bridge args…` in `cwd` with stdin and stdout piped (stderr is the caller's choice), without
/// the host command of the environment the tests run in.
pub(crate) fn bridge<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>, cwd: &Path) -> Command {
    let mut command = Command::new(bridge_bin());
    command
        .args(args)
        .current_dir(cwd)
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    command
}

/// [`bridge`] started, its stderr dropped: the process, its stdin and its stdout.
pub(crate) fn spawn_bridge<S: AsRef<OsStr>>(
    args: impl IntoIterator<Item = S>,
    cwd: &Path,
) -> (Child, ChildStdin, ChildStdout) {
    let mut child = bridge(args, cwd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn asp-bridge");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, stdin, stdout)
}

/// A `--host-command` that runs the fake host with `flags`.
pub(crate) fn host_command(flags: &str) -> String {
    format!(
        "{} {flags}",
        shlex::try_quote(fake_host_bin()).expect("quotable path")
    )
}

/// A scratch directory; `marker()` is a unique path the fake host can be given (e.g. `--record`),
/// so the orphan check can find every process started for this test.
pub(crate) struct Scratch {
    pub(crate) dir: tempfile::TempDir,
}

impl Scratch {
    pub(crate) fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// A git repository with one commit, for commands that build changesets.
    pub(crate) fn git_repo() -> Scratch {
        let scratch = Scratch::new();
        scratch.git(&["init", "-q"]);
        std::fs::write(scratch.path().join("README.txt"), "hello\n").unwrap();
        scratch.git(&["add", "."]);
        scratch.git(&["commit", "-q", "-m", "base"]);
        scratch
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn marker(&self) -> PathBuf {
        self.path().join("host-record.jsonl")
    }

    /// A fake-host command line with `flags`, recording to [`Scratch::marker`] (so the orphan
    /// check finds the host).
    pub(crate) fn fake_host(&self, flags: &str) -> String {
        host_command(&format!("--record {} {flags}", self.marker().display()))
    }

    /// What the fake host recorded with `--record {marker}`: one JSON value per line.
    pub(crate) fn recorded(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.marker())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The messages of `method` the fake host recorded, in order.
    pub(crate) fn received(&self, method: &str) -> Vec<serde_json::Value> {
        let mut recorded = self.recorded();
        recorded.retain(|m| m["method"] == method);
        recorded
    }

    /// The first message of `method` the fake host recorded; fails the test if there is none.
    pub(crate) fn first_received(&self, method: &str) -> serde_json::Value {
        let first = self.received(method).into_iter().next();
        first.unwrap_or_else(|| panic!("the host received no {method}: {:?}", self.recorded()))
    }

    pub(crate) fn git(&self, args: &[&str]) {
        test_support::git::git(self.path(), args);
    }

    /// Fails if any process still mentions this scratch directory on its command line.
    pub(crate) fn assert_no_orphans(&self) {
        let needle = self.path().to_string_lossy().into_owned();
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let alive = processes_mentioning(&needle);
            if alive.is_empty() {
                return;
            }
            // A killed process can take a moment to be reaped by its parent; anything left after the
            // deadline is an orphan.
            assert!(Instant::now() < deadline, "orphaned processes: {alive:?}");
            std::thread::yield_now();
        }
    }
}

/// The command lines of the live processes (no zombies) that mention `needle`, from `/proc`.
#[cfg(target_os = "linux")]
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie =
            std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| s.contains(") Z "));
        if cmdline.contains(needle) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

/// The command lines of the live processes (no zombies) that mention `needle`, from `ps` (no
/// `/proc` here).
#[cfg(not(target_os = "linux"))]
fn processes_mentioning(needle: &str) -> Vec<String> {
    let Ok(output) = Command::new("ps")
        .args(["-A", "-o", "stat=,command="])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim_start().split_once(char::is_whitespace))
        .filter(|(stat, command)| !stat.starts_with('Z') && command.contains(needle))
        .map(|(_, command)| command.trim().to_owned())
        .collect()
}

/// A finished run of the bridge.
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
}

impl Run {
    /// The stderr lines that start with `prefix`.
    pub(crate) fn lines_starting(&self, prefix: &str) -> Vec<&str> {
        let lines = self.stderr.lines();
        lines.filter(|l| l.starts_with(prefix)).collect()
    }

    /// The one stderr line that starts with `prefix`; fails the test unless there is exactly one.
    pub(crate) fn one_line_starting(&self, prefix: &str) -> &str {
        let lines = self.lines_starting(prefix);
        assert_eq!(lines.len(), 1, "one line {prefix:?}…: {}", self.stderr);
        lines[0]
    }
}

/// Runs `asp-bridge <command>` on the scratch against the fake host with `flags` (plus `--record`,
/// the orphan marker) and `extra` flags of the command; checks that no process outlives it.
pub(crate) fn run_against_fake_host(
    scratch: &Scratch,
    command: &str,
    flags: &str,
    extra: &[&str],
    limit: Duration,
) -> Run {
    let host = scratch.fake_host(flags);
    let repo = scratch.path().to_str().unwrap();
    let mut args = vec![command, "--repo", repo, "--host-command", &host];
    args.extend_from_slice(extra);
    let run = run_bridge(&args, scratch.path(), limit);
    scratch.assert_no_orphans();
    run
}

/// Runs the bridge with `args` and no stdin; fails the test if it outlives `limit`.
pub(crate) fn run_bridge(args: &[&str], cwd: &Path, limit: Duration) -> Run {
    run_bridge_with(args, cwd, limit, |_| {})
}

/// [`run_bridge`], with the command adjusted by `setup` (e.g. its environment) before it starts.
pub(crate) fn run_bridge_with(
    args: &[&str],
    cwd: &Path,
    limit: Duration,
    setup: impl FnOnce(&mut Command),
) -> Run {
    let started = Instant::now();
    let mut command = bridge(args, cwd);
    setup(&mut command);
    let child = command
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn asp-bridge");
    let output: Output = test_support::process::wait_output(child, limit);
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

/// Asserts a failed one-shot run: its exit code, exactly one stderr line
/// `asp-bridge: <class>: <cause>`, nothing on stdout, and no panic.
pub(crate) fn assert_failed(run: &Run, code: i32, class: &str, cause: &str) {
    assert_eq!(run.code, Some(code), "stderr: {}", run.stderr);
    let line = run.one_line_starting("asp-bridge: ");
    assert!(
        line.starts_with(&format!("asp-bridge: {class}: ")),
        "stderr: {}",
        run.stderr
    );
    assert!(line.contains(cause), "expected {cause:?} in {line:?}");
    assert!(
        run.stdout.is_empty(),
        "nothing on stdout without an answer: {}",
        run.stdout
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

/// Adds to `scratch` (a git repository) what a pull request can add that is no ordinary file:
/// untracked links to `/dev/zero`, `/dev/stdin`, `/etc/passwd`, a FIFO, a directory and nowhere, a
/// tracked file replaced by a FIFO, and a submodule checked out at another commit than the one
/// committed. Returns the links' names and targets.
pub(crate) fn hostile_tree(scratch: &Scratch) -> Vec<(&'static str, &'static str)> {
    use std::os::unix::fs::symlink;
    let root = scratch.path();
    let upstream = Scratch::git_repo();
    std::fs::write(upstream.path().join("README.txt"), "second\n").unwrap();
    upstream.git(&["commit", "-q", "-am", "second"]);
    std::fs::write(root.join("tracked-fifo"), "a file\n").unwrap();
    scratch.git(&["add", "tracked-fifo"]);
    test_support::git::add_submodule(root, upstream.path(), "sub");
    scratch.git(&["commit", "-q", "-m", "a submodule and a file"]);
    let checkout = Command::new("git")
        .arg("-C")
        .arg(root.join("sub"))
        .args(["checkout", "-q", "HEAD~1"])
        .status()
        .unwrap();
    assert!(checkout.success());
    std::fs::remove_file(root.join("tracked-fifo")).unwrap();
    for fifo in ["tracked-fifo", "pipe"] {
        test_support::process::mkfifo(&root.join(fifo));
    }
    std::fs::create_dir(root.join("plain-dir")).unwrap();
    std::fs::write(root.join("plain-dir/inside.txt"), "inside\n").unwrap();
    let links = vec![
        ("to-zero", "/dev/zero"),
        ("to-stdin", "/dev/stdin"),
        ("to-passwd", "/etc/passwd"),
        ("to-pipe", "pipe"),
        ("to-dir", "plain-dir"),
        ("dangling", "no/such/file"),
    ];
    for (name, target) in &links {
        symlink(target, root.join(name)).unwrap();
    }
    // The upstream repository is only needed while the submodule is added.
    drop(upstream);
    links
}

/// The ASP blob id of `bytes`, computed by `sha256sum` (independent of the bridge's own hashing).
pub(crate) fn blob_id(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum");
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    format!("blob:sha256:{}", hex.split_whitespace().next().unwrap())
}

/// Runs Microsoft's SARIF Multitool (`multitool`) as `validate --rule-kind "Sarif;Gh"` on `logs`
/// (paths or globs), writing its own log to `report`; returns what it printed and that log.
pub(crate) fn multitool_validate(
    multitool: impl AsRef<OsStr>,
    logs: &[&Path],
    report: &Path,
) -> (String, serde_json::Value) {
    let output = Command::new(multitool)
        .arg("validate")
        .args(logs)
        .args(["--rule-kind", "Sarif;Gh", "--level", "Error;Warning;Note"])
        .arg("--output")
        .arg(report)
        .args(["--log", "ForceOverwrite"])
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .output()
        .expect("run the SARIF Multitool");
    let console = String::from_utf8_lossy(&output.stdout).into_owned();
    let text = std::fs::read_to_string(report)
        .unwrap_or_else(|e| panic!("the Multitool wrote no report ({e}): {console}"));
    let log = serde_json::from_str(&text).expect("the Multitool's report is JSON");
    (console, log)
}

/// The first `lang` code block of the README after the text `after`, as it stands there.
pub(crate) fn readme_block(after: &str, lang: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("the README");
    let (_, rest) = readme
        .split_once(after)
        .unwrap_or_else(|| panic!("the README has {after:?}"));
    let (_, block) = rest
        .split_once(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("a {lang} block after {after:?}"));
    block
        .split_once("```")
        .expect("a closed block")
        .0
        .to_owned()
}
