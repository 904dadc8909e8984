//! End-to-end tests of the one-shot commands against hostile hosts (`tests/fixtures/hostile/`): what
//! a host says reaches the terminal filtered, on its own line, capped; a host that cannot be run says
//! what to do; `sarif` reports its success in one line and stops quietly when its reader leaves.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use test_support::process::FifoWriters;

use crate::support::{Run, Scratch, assert_failed, fixtures, run_against_fake_host, run_bridge};

const LIMIT: Duration = Duration::from_secs(30);

/// The fake host's fixture files (relative to `tests/fixtures/asp/`), which [`fixtures_with`] copies.
const FIXTURES: [&str; 5] = [
    "outer/status.response.json",
    "core/capabilities.check-only.json",
    "outer/authority.status.response.json",
    "outer/query-inspect.response.json",
    "outer/evaluate.deny.gating.json",
];

/// A fixture directory for `fake-host --fixtures` inside `scratch`: the usual answers, with each
/// `(fixture, hostile file)` pair's hostile answer (from `tests/fixtures/hostile/`) in its place.
pub(crate) fn fixtures_with(scratch: &Scratch, hostile: &[(&str, &str)]) -> PathBuf {
    let dir = scratch.path().join("fixtures");
    for file in FIXTURES {
        let from = hostile
            .iter()
            .find(|(fixture, _)| *fixture == file)
            .map_or_else(
                || fixtures().join("asp").join(file),
                |(_, h)| fixtures().join("hostile").join(h),
            );
        let to = dir.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    dir
}

/// The fake host answering from `fixtures_with(hostile)`, recording to the orphan marker.
fn hostile_host(scratch: &Scratch, hostile: &[(&str, &str)]) -> String {
    let dir = fixtures_with(scratch, hostile);
    scratch.fake_host(&format!("--fixtures {}", dir.display()))
}

/// `asp-bridge status` against the fake host answering `host/status` with `hostile` (a file of
/// `tests/fixtures/hostile/`).
fn status_answered_with(scratch: &Scratch, hostile: &str) -> Run {
    let host = hostile_host(scratch, &[("outer/status.response.json", hostile)]);
    let repo = scratch.path().to_str().unwrap();
    bridge(
        scratch,
        &["status", "--repo", repo, "--host-command", &host],
    )
}

fn bridge(scratch: &Scratch, args: &[&str]) -> Run {
    let run = run_bridge(args, scratch.path(), LIMIT);
    scratch.assert_no_orphans();
    run
}

/// No byte that moves the cursor, restyles the terminal or starts a line of its own.
fn assert_terminal_safe(text: &str) {
    assert!(
        !text.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}', '\u{9b}']),
        "raw control characters reached the terminal: {text:?}"
    );
    for line in text.lines() {
        assert!(
            !line.starts_with("asp-bridge: ok"),
            "a host forged a line: {text:?}"
        );
    }
}

#[test]
fn a_hostile_error_message_reaches_the_terminal_as_one_filtered_line() {
    let scratch = Scratch::new();
    let run = status_answered_with(&scratch, "status.forged-error.json");
    assert_failed(&run, 3, "health", "host refused host/status: boom");
    assert_terminal_safe(&run.stderr);
}

#[test]
fn a_hostile_stderr_tail_is_filtered_and_capped() {
    let scratch = Scratch::new();
    let script = fixtures().join("hostile/forge-stderr.sh");
    // The scratch path on the command line lets the orphan check find the host.
    let host = format!("sh {} {}", script.display(), scratch.path().display());
    let repo = scratch.path().to_str().unwrap();
    for command in ["status", "sarif"] {
        let run = bridge(
            &scratch,
            &[command, "--repo", repo, "--host-command", &host],
        );
        assert_failed(&run, 3, "health", "host exited with status 1");
        assert_terminal_safe(&run.stderr);
        assert!(
            run.stderr.len() < 4096,
            "{command}: {} bytes on stderr",
            run.stderr.len()
        );
    }
}

#[test]
fn line_breaks_in_host_identifiers_do_not_forge_lines_of_status() {
    let scratch = Scratch::new();
    let run = status_answered_with(&scratch, "status.forged-lines.json");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let labels = [
        "host ",
        "policy ",
        "server ",
        "call site ",
        "coverage ",
        "degraded ",
        "receipt ",
        "evaluate ",
        "note ",
    ];
    for line in run.stdout.lines() {
        assert!(
            labels.iter().any(|l| line.starts_with(l)),
            "a line the bridge did not write: {line:?}\n{}",
            run.stdout
        );
    }
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.starts_with("host "))
            .count(),
        1
    );
    assert_terminal_safe(&run.stdout);
}

#[test]
fn a_host_that_is_not_installed_is_one_line_with_the_cause_once_and_what_to_do() {
    let scratch = Scratch::new();
    let repo = scratch.path().to_str().unwrap();
    let missing = scratch.path().join("no-such-asp");
    let missing = missing.to_str().unwrap();
    for command in ["status", "sarif"] {
        let run = bridge(
            &scratch,
            &[command, "--repo", repo, "--host-command", missing],
        );
        assert_failed(&run, 3, "health", "could not start host");
        let line = run.one_line_starting("asp-bridge: ");
        assert_eq!(
            line.matches("No such file or directory").count(),
            1,
            "{command}: the cause once: {line}"
        );
        assert!(line.contains("install an ASP host"), "{line}");
        assert!(line.contains("--host-command"), "{line}");
        assert!(line.contains("ASP_BRIDGE_HOST_COMMAND"), "{line}");
    }
}

#[test]
fn sarif_bounds_the_first_status_call_by_its_timeout() {
    let scratch = Scratch::git_repo();
    let timeout = ["--timeout-ms", "700"];
    let run = run_against_fake_host(&scratch, "sarif", "--hang-on host/status", &timeout, LIMIT);
    assert_failed(
        &run,
        3,
        "health",
        "host did not answer host/status within 700 ms",
    );
}

#[test]
fn sarif_says_in_one_line_what_it_wrote() {
    let scratch = Scratch::new();
    let out = scratch.path().join("out.sarif");
    let from = fixtures().join("asp/outer/evaluate.deny.gating.json");
    let run = bridge(
        &scratch,
        &[
            "sarif",
            "--from",
            from.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(out.is_file());
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on success: {}", run.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "asp-bridge: sarif: wrote 1 result(s) to {} (host decision deny",
            out.display()
        )),
        "{}",
        lines[0]
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn sarif_names_what_did_not_run_in_its_success_line() {
    let scratch = Scratch::new();
    let from = fixtures().join("asp/outer/evaluate.indeterminate.missing-provider.json");
    let run = bridge(&scratch, &["sarif", "--from", from.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let line = run.stderr.lines().last().unwrap_or_default();
    assert!(line.contains("host decision indeterminate"), "{line}");
    assert!(line.contains("did not run: "), "{line}");
}

#[test]
fn sarif_to_a_reader_that_leaves_early_exits_zero_quietly() {
    let scratch = Scratch::git_repo();
    let host = scratch.fake_host("--findings 3000");
    let mut child = Command::new(crate::support::bridge_bin())
        .args(["sarif", "--repo"])
        .arg(scratch.path())
        .args(["--host-command", &host, "--output", "-"])
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn asp-bridge sarif");
    let mut head = [0u8; 10];
    child
        .stdout
        .take()
        .unwrap()
        .read_exact(&mut head)
        .expect("the log starts");
    // The reader is gone (`| head -c 10`); the rest of a log of thousands of results cannot fit a pipe.
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    scratch.assert_no_orphans();
}

#[test]
fn a_from_file_that_cannot_be_read_is_named_with_the_flag() {
    let scratch = Scratch::new();
    let missing = scratch.path().join("missing.json");
    let run = bridge(&scratch, &["sarif", "--from", missing.to_str().unwrap()]);
    assert_failed(&run, 6, "input", &format!("--from {}", missing.display()));
}

/// An untracked file larger than the address space the bridge may use: a whole-file read to hash it
/// would fail (an allocation failure aborts the process); read as it streams, it is hashed.
/// Linux only: macOS neither enforces `RLIMIT_AS` nor lets `ulimit -v` lower it.
#[cfg(target_os = "linux")]
#[test]
fn an_untracked_file_larger_than_the_memory_limit_is_hashed_as_it_streams() {
    const GIB: u64 = 1024 * 1024 * 1024;
    let scratch = Scratch::git_repo();
    let big = std::fs::File::create(scratch.path().join("big.bin")).unwrap();
    big.set_len(GIB + GIB / 2).unwrap(); // sparse: no disk space used
    drop(big);
    let host = scratch.fake_host("");
    // `ulimit -v` (KiB) sets RLIMIT_AS for the bridge and what it starts; two malloc arenas keep
    // the ordinary use of address space well under the limit.
    let limited = format!("ulimit -v {}; exec \"$0\" \"$@\"", GIB / 1024);
    let output = Command::new("sh")
        .args(["-c", &limited])
        .arg(crate::support::bridge_bin())
        .args(["sarif", "--repo"])
        .arg(scratch.path())
        .args(["--host-command", &host, "--output", "-"])
        .args(["--timeout-ms", "600000"])
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .output()
        .expect("run asp-bridge sarif under a memory limit");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let sent = scratch
        .recorded()
        .into_iter()
        .find(|m| m["method"] == "host/evaluateChangeset")
        .unwrap_or_else(|| panic!("no evaluation sent; stderr: {stderr}"));
    let changes = sent["params"]["changeset"]["changes"].as_array().unwrap();
    let change = changes
        .iter()
        .find(|c| c["path"] == "big.bin")
        .unwrap_or_else(|| panic!("big.bin not sent: {changes:?}"));
    assert!(
        change["after"]
            .as_str()
            .is_some_and(|id| id.starts_with("blob:sha256:")),
        "{change}"
    );
    scratch.assert_no_orphans();
}

/// A SIGKILL of the bridge (no orderly end can run) still ends what the host started in its process
/// group: the host is a script that starts a helper and never answers; the helper holds a FIFO open
/// as long as it lives, so the test knows without polling when it has started and when it is gone.
#[test]
fn a_helper_the_host_started_does_not_outlive_a_sigkill_of_the_bridge() {
    let scratch = Scratch::new();
    let helper = FifoWriters::new(&scratch.path().join("helper"));
    let script = fixtures().join("hostile/helper-then-silent.sh");
    let host = format!("sh {} {}", script.display(), scratch.path().display());
    let repo = scratch.path().to_str().unwrap();
    // The host never answers: without the SIGKILL the bridge would wait for it for 10 minutes.
    let args = ["status", "--repo", repo, "--host-command", &host];
    let mut bridge = crate::support::bridge(args, scratch.path())
        .args(["--timeout-ms", "600000"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    helper.wait_opened(LIMIT);
    bridge.kill().unwrap();
    bridge.wait().unwrap();
    helper.wait_closed(LIMIT);
    scratch.assert_no_orphans();
}
