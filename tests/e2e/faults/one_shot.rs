//! The one-shot cells of the fault matrix: `asp-bridge status` and a live `asp-bridge sarif`.
//!
//! Each fault ends in exactly one outcome: a failure (one `asp-bridge: <class>: …` line, exit
//! 3/4/5/6, no document) or, when the fault did not cost the answer, exit 0 with a whole document.

use std::time::Duration;

use serde_json::Value;

use super::{
    DEADLINE_MS, Host, LATE_MS, Row, SARIF_OVERSIZE, UNSUPPORTED, UNSUPPORTED_FLAGS, assert_stderr,
    bent, logged, workspace,
};
use crate::support::{Run, Scratch, assert_failed, fixtures, run_bridge};

/// Longest run of one command: the 5 s shutdown escalation, plus a 256 MiB line skipped three times
/// by a debug build on a loaded machine.
const LIMIT: Duration = Duration::from_secs(90);
/// The deadlines of the sarif cell with 256 MiB lines.
const SLOW_SKIP_MS: u64 = 60_000;

/// What a run must end with.
#[derive(Clone, Debug)]
enum Expect {
    /// Exit 0 and the command's whole document.
    Answer,
    /// Exit `code`, one `asp-bridge: <class>: …` line containing `cause`, no document.
    Failed {
        code: i32,
        class: &'static str,
        cause: String,
    },
    /// `status` relays the bent status: exit 0 and what it makes of it.
    BentStatus,
    /// `sarif` exports the bent decision: exit 0 and a valid log that keeps what it can.
    BentLog,
}

/// One run of a one-shot command.
struct Case {
    host: Host,
    args: Vec<String>,
    expect: Expect,
}

fn case(host: Host, args: &[String], expect: Expect) -> Case {
    Case {
        host,
        args: args.to_vec(),
        expect,
    }
}

fn failed(code: i32, class: &'static str, cause: impl Into<String>) -> Expect {
    Expect::Failed {
        code,
        class,
        cause: cause.into(),
    }
}

fn health(cause: impl Into<String>) -> Expect {
    failed(3, "health", cause)
}

/// What a one-shot command asks of the host before `shutdown`, which says where each fault lands.
struct Command {
    /// The request that carries the command's answer: the crash, hang, late answer, closed stdout
    /// and refusal rows put their fault on it.
    request: &'static str,
    /// The flag of that request's deadline.
    deadline: &'static str,
    /// How many requests the host answers before `shutdown`: crashing after them crashes on
    /// `shutdown`, after the answer.
    requests: usize,
}

/// `asp-bridge status`: one request, `host/status`, within the handshake deadline.
const STATUS: Command = Command {
    request: "host/status",
    deadline: "--handshake-timeout-ms",
    requests: 1,
};

/// A live `asp-bridge sarif`: `host/status`, then `host/evaluateChangeset`.
const SARIF: Command = Command {
    request: "host/evaluateChangeset",
    deadline: "--timeout-ms",
    requests: 2,
};

/// The cases of `command` for `row`; the rows that differ between the commands (a schema bent in
/// what each reads, the sarif cell's 256 MiB lines) are given by the caller.
fn cases(command: &Command, row: Row) -> Vec<Case> {
    let request = command.request;
    let deadline = [command.deadline.to_owned(), DEADLINE_MS.to_string()];
    let within = format!("host did not answer {request} within {DEADLINE_MS} ms");
    if let Some(host) = super::harmless(row) {
        return vec![case(host, &[], Expect::Answer)];
    }
    let (host, args, expect) = match row {
        Row::CrashBeforeFirstAnswer => (
            Host::with("--crash-on host/status"),
            &[][..],
            health("host exited with status 3; stderr: fake-host: crashing on host/status"),
        ),
        Row::CrashMidRequest => (
            Host::with(format!("--crash-on {request} --exit-code 9")),
            &[][..],
            health(format!(
                "host exited with status 9; stderr: fake-host: crashing on {request}"
            )),
        ),
        Row::CrashBetweenRequests => (
            Host::with(format!("--crash-after {}", command.requests)),
            &[][..],
            Expect::Answer,
        ),
        Row::Hangs => (
            Host::with(format!("--hang-on {request}")),
            &deadline[..],
            health(within),
        ),
        Row::AnswersAfterTheDeadline => (
            Host::with(format!("--delay-ms {request}={LATE_MS}")),
            &deadline[..],
            health(within),
        ),
        Row::ClosesStdoutKeepsRunning => (
            Host::with(format!("--close-stdout-on {request}")),
            &[][..],
            health("host closed its stdout but is still running"),
        ),
        Row::RefusesWithEachFailClass => {
            return super::refusing(request)
                .map(|(host, class, code)| {
                    let cause = format!("host refused {request}: fake host refuses: {class}");
                    case(host, &[], failed(code, class, cause))
                })
                .collect();
        }
        Row::UnsupportedOuterProtocol => (
            Host::with(UNSUPPORTED_FLAGS),
            &[][..],
            failed(4, "contract", UNSUPPORTED),
        ),
        row => unreachable!("{row:?} is given by the caller"),
    };
    vec![case(host, args, expect)]
}

/// The cases of `asp-bridge status` for `row`.
fn status_cases(row: Row) -> Vec<Case> {
    match row {
        // `status` adds the flags: a fixture directory, built in the scratch, with the bent status.
        Row::BendsTheSchema => vec![case(Host::with(""), &[], Expect::BentStatus)],
        _ => cases(&STATUS, row),
    }
}

/// The cases of a live `asp-bridge sarif` for `row`.
fn sarif_cases(row: Row) -> Vec<Case> {
    match row {
        // Each answer follows a 256 MiB line: a debug build on a loaded machine takes seconds to
        // skip one, which is the host being slow, not this fault; the deadlines leave room for it.
        Row::JunkInvalidUtf8Oversize => vec![case(
            Host::with(format!("--junk --oversize {SARIF_OVERSIZE}")),
            &[
                "--handshake-timeout-ms".to_owned(),
                SLOW_SKIP_MS.to_string(),
                "--timeout-ms".to_owned(),
                SLOW_SKIP_MS.to_string(),
            ],
            Expect::Answer,
        )],
        Row::BendsTheSchema => vec![case(super::bent_evaluate(), &[], Expect::BentLog)],
        _ => cases(&SARIF, row),
    }
}

pub(super) fn status(row: Row) {
    for case in status_cases(row) {
        let scratch = Scratch::new();
        let bent_status = matches!(case.expect, Expect::BentStatus);
        let mut host = case.host.clone();
        let mut args = vec!["status".to_owned()];
        if bent_status {
            // The text view: what the bridge makes of the bent answer, not the answer relayed.
            host.flags = format!("--fixtures {}", bent_fixture_dir(&scratch));
        } else {
            args.push("--json".to_owned());
        }
        let run = run(&scratch, &host, args, &case.args);
        assert_stderr(&run.stderr, &logged(row));
        match &case.expect {
            Expect::Answer => {
                assert_eq!(run.code, Some(0), "{row:?}: {}", run.stderr);
                assert_no_error_line(&run);
                let document: Value =
                    serde_json::from_str(&run.stdout).expect("exactly one JSON document");
                assert_eq!(document["bridge"]["authoritative"], false);
                assert_eq!(
                    document["status"]["receipt"]["receiptId"],
                    super::fixture_receipt("outer/status.response.json")
                );
            }
            Expect::Failed { code, class, cause } => {
                assert_failed(&run, *code, class, cause);
            }
            Expect::BentStatus => assert_bent_status(&run),
            Expect::BentLog => unreachable!("status reads no decision"),
        }
        if row == Row::FloodsStderr {
            assert!(
                !run.stderr.contains("stderr flood"),
                "the host's stderr is not relayed"
            );
        }
    }
}

pub(super) fn sarif(row: Row) {
    for case in sarif_cases(row) {
        let scratch = workspace();
        let out = scratch.path().join("out.sarif");
        let args = vec![
            "sarif".to_owned(),
            "--output".to_owned(),
            out.display().to_string(),
        ];
        let run = run(&scratch, &case.host, args, &case.args);
        assert_stderr(&run.stderr, &logged(row));
        match &case.expect {
            Expect::Answer | Expect::BentLog => {
                assert_eq!(run.code, Some(0), "{row:?}: {}", run.stderr);
                assert_no_error_line(&run);
                assert!(run.stdout.is_empty(), "the log went to its file");
                let text = std::fs::read_to_string(&out).expect("the SARIF log was written");
                let log: Value = serde_json::from_str(&text).expect("one JSON document");
                let errors = sarif_export::schema::errors(&log);
                assert!(errors.is_empty(), "{row:?}: {errors:#?}");
                let run_json = &log["runs"][0];
                assert_eq!(run_json["properties"]["authoritative"], false);
                if matches!(case.expect, Expect::BentLog) {
                    assert_bent_log(run_json);
                } else {
                    assert_eq!(run_json["properties"]["decision"], "deny");
                    assert_eq!(run_json["results"][0]["ruleId"], "lattice/secrets");
                }
            }
            Expect::Failed { code, class, cause } => {
                assert_failed(&run, *code, class, cause);
                assert!(!out.exists(), "no log without a decision");
            }
            Expect::BentStatus => unreachable!("sarif reads a decision"),
        }
    }
}

/// Runs `command` (its words in `args`) against the host, with `extra` flags; checks for orphans.
fn run(scratch: &Scratch, host: &Host, mut args: Vec<String>, extra: &[String]) -> Run {
    let command = host.command(scratch);
    args.extend([
        "--repo".to_owned(),
        scratch.path().display().to_string(),
        "--host-command".to_owned(),
        command,
    ]);
    args.extend_from_slice(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_bridge(&args, scratch.path(), LIMIT);
    scratch.assert_no_orphans();
    run
}

/// A fixture directory for the fake host in which `host/status` answers with `bent/status.json`.
fn bent_fixture_dir(scratch: &Scratch) -> String {
    let dir = scratch.path().join("fixtures");
    for file in [
        "outer/status.response.json",
        "core/capabilities.check-only.json",
        "outer/authority.status.response.json",
        "outer/query-inspect.response.json",
        "outer/evaluate.deny.gating.json",
    ] {
        let target = dir.join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(fixtures().join("asp").join(file), &target).unwrap();
    }
    std::fs::copy(bent("status.json"), dir.join("outer/status.response.json")).unwrap();
    shlex::try_quote(&dir.display().to_string())
        .unwrap()
        .into_owned()
}

/// A successful run reports no failure (`asp-bridge: <failClass>: …`; `sarif`'s success line is no failure).
fn assert_no_error_line(run: &Run) {
    let failure = |line: &str| {
        ["health", "contract", "policy", "input"]
            .iter()
            .any(|class| line.starts_with(&format!("asp-bridge: {class}: ")))
    };
    assert!(
        !run.stderr.lines().any(failure),
        "no failure line when the answer came: {}",
        run.stderr
    );
}

/// The text view of the bent status: unknown values shown as sent, the unknown host state as
/// degraded, the degraded gate named; nothing invented for what is missing.
fn assert_bent_status(run: &Run) {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_no_error_line(run);
    for expected in [
        "host       bent-host 9.9.9 [asp-outer/1.9]: degraded (host state: warming)",
        "policy     .asp/asp.json (probation, sha256:bent)",
        "server     lattice: rebooting, enrollment pending-review; capabilities check, teleport; required for gate",
        "call site  interactive: UNAVAILABLE; requires lattice",
        "call site  sweep: available",
        "degraded   lattice: rebooting (back soon)",
        "receipt    status-bent-0001",
    ] {
        assert!(
            run.stdout.contains(expected),
            "missing {expected:?} in\n{}",
            run.stdout
        );
    }
    assert!(
        !run.stdout.contains("coverage   complete"),
        "{}",
        run.stdout
    );
}

/// The log of the bent decision: the unknown decision relayed, both findings kept (the unknown
/// severity as a warning, the one without a range without a region), the degraded provider as a
/// notification.
fn assert_bent_log(run_json: &Value) {
    assert_eq!(run_json["properties"]["decision"], "escalate");
    let results = run_json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(results[0]["ruleId"], "lattice/secrets");
    assert_eq!(results[0]["level"], "warning", "unknown severity");
    assert_eq!(results[1]["ruleId"], "lattice/style");
    assert!(
        results[1]["locations"][0]["physicalLocation"]
            .get("region")
            .is_none(),
        "no range, no region: {:#}",
        results[1]
    );
    let notes = run_json["invocations"][0]["toolExecutionNotifications"].to_string();
    assert!(notes.contains("sentinel"), "degraded coverage: {notes}");
}
