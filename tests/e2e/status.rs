//! End-to-end tests of `asp-bridge status`: a good answer relayed as received, and every fault of
//! the fake host turned into one classed stderr line and an exit code, with no orphaned host.

use std::time::Duration;

use serde_json::Value;

use crate::support::{Run, Scratch, assert_failed, run_against_fake_host, run_bridge};

const LIMIT: Duration = Duration::from_secs(20);

/// Runs `asp-bridge status` against the fake host with `flags` (plus `--record`, the orphan marker).
fn status(scratch: &Scratch, flags: &str, extra: &[&str]) -> Run {
    run_against_fake_host(scratch, "status", flags, extra, LIMIT)
}

#[test]
fn json_relays_the_status_as_received() {
    let scratch = Scratch::new();
    let run = status(&scratch, "", &["--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).expect("exactly one JSON document");
    assert_eq!(document["bridge"]["name"], "asp-bridge");
    assert_eq!(document["bridge"]["authoritative"], false);
    assert_eq!(
        document["status"],
        test_support::fixture("outer/status.response.json")
    );
    let schema = crate::support::fixtures().join("../../schemas/status.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "schemas/status.schema.json: {errors:?}");
    let recorded = scratch.recorded();
    assert_eq!(
        recorded[0]["method"], "host/status",
        "the handshake is the first call"
    );
    assert_eq!(
        recorded[1]["method"], "shutdown",
        "the host is shut down after answering"
    );
}

#[test]
fn text_output_names_state_policy_servers_gates_and_coverage() {
    let scratch = Scratch::new();
    let run = status(&scratch, "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for expected in [
        "host       @the-open-engine/asp 0.1.0-alpha.0 [asp-outer/1.0]: ready",
        "policy     .asp/asp.json (active, sha256:policyabc123)",
        "server     lattice: ready, enrollment enrolled",
        "call site  interactive: available",
        "coverage   complete",
        "receipt    status-2026-06-22T20:00:00Z",
    ] {
        assert!(
            run.stdout.contains(expected),
            "missing {expected:?} in\n{}",
            run.stdout
        );
    }
}

#[test]
fn noise_on_stdout_and_stderr_does_not_break_a_good_answer() {
    let scratch = Scratch::new();
    let oversize = 17 * 1024 * 1024;
    let flags =
        format!("--junk --unknown-id --duplicate --oversize {oversize} --stderr-flood 20000");
    let run = status(&scratch, &flags, &["--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        document["status"],
        test_support::fixture("outer/status.response.json")
    );
}

/// One test per way of failing `status`: the host's fake-host flags, the command's own flags, and
/// the cause its one `asp-bridge: health: …` line (exit 3) must name.
macro_rules! health_failures {
    ($($name:ident: $flags:literal, $extra:expr => $cause:literal;)+) => {
        $(
            #[test]
            fn $name() {
                let scratch = Scratch::new();
                let run = status(&scratch, $flags, $extra);
                assert_failed(&run, 3, "health", $cause);
            }
        )+
    };
}

health_failures! {
    a_host_that_crashes_is_a_health_error_with_its_exit_status_and_stderr:
        "--crash-on host/status --exit-code 7", &[]
        => "host exited with status 7; stderr: fake-host: crashing on host/status";
    a_host_that_hangs_fails_within_the_handshake_deadline:
        "--hang-on '*'", &["--handshake-timeout-ms", "800"]
        => "host did not answer host/status within 800 ms";
    an_answer_after_the_deadline_is_a_timeout:
        "--delay-ms host/status=5000", &["--handshake-timeout-ms", "300"]
        => "within 300 ms";
    a_host_that_closes_stdout_but_keeps_running_is_reported_and_stopped:
        "--close-stdout-on host/status", &[]
        => "host closed its stdout but is still running";
}

#[test]
fn a_host_that_ignores_shutdown_is_killed() {
    let scratch = Scratch::new();
    let run = status(&scratch, "--ignore-shutdown", &["--json"]);
    assert_eq!(run.code, Some(0), "the answer still counts: {}", run.stderr);
    assert!(serde_json::from_str::<Value>(&run.stdout).is_ok());
}

#[test]
fn each_refusal_keeps_its_fail_class_and_exit_code() {
    for (class, code) in [("health", 3), ("contract", 4), ("policy", 5), ("input", 6)] {
        let scratch = Scratch::new();
        let run = status(&scratch, &format!("--error host/status={class}"), &[]);
        assert_failed(
            &run,
            code,
            class,
            &format!("host refused host/status: fake host refuses: {class}"),
        );
    }
}

#[test]
fn an_unsupported_outer_protocol_is_refused_as_contract() {
    let scratch = Scratch::new();
    let run = status(&scratch, "--outer-protocol asp-outer/2.0", &["--json"]);
    assert_failed(
        &run,
        4,
        "contract",
        "unsupported outerProtocol \"asp-outer/2.0\"",
    );
}

#[test]
fn a_host_that_cannot_start_is_a_health_error() {
    let scratch = Scratch::new();
    let repo = scratch.path().to_str().unwrap();
    let run = run_bridge(
        &[
            "status",
            "--repo",
            repo,
            "--host-command",
            "/nonexistent/asp host serve",
        ],
        scratch.path(),
        LIMIT,
    );
    assert_failed(&run, 3, "health", "could not start host `/nonexistent/asp`");
}

#[test]
fn a_broken_host_command_line_is_an_input_error() {
    let scratch = Scratch::new();
    let repo = scratch.path().to_str().unwrap();
    let run = run_bridge(
        &["status", "--repo", repo, "--host-command", "asp 'unclosed"],
        scratch.path(),
        LIMIT,
    );
    assert_failed(&run, 6, "input", "invalid host command");
}

#[test]
fn a_host_that_must_be_stopped_is_one_failure_line_and_no_log_line() {
    let scratch = Scratch::new();
    // Never answers the handshake, and is stopped with SIGTERM after its shutdown wait.
    let run = run_bridge(
        &[
            "status",
            "--host-command",
            "sleep 100",
            "--handshake-timeout-ms",
            "300",
        ],
        scratch.path(),
        LIMIT,
    );
    assert_failed(&run, 3, "health", "did not answer host/status");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "the host choice and the failure: {}",
        run.stderr
    );
    assert!(
        lines[0].starts_with("asp-bridge uses the host given by"),
        "{}",
        run.stderr
    );
}
