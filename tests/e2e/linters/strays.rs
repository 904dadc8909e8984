//! A linter that starts a process in a session of its own (`setsid`), out of reach of its run's
//! group, does not leave it running: the linter provider is the subreaper of what its linters
//! start, and ends such a process once the run is over, before it answers. Needs only `sh`,
//! `setsid` and `mkfifo`.

use super::*;

/// A fake linter: it starts a helper in a new session (its outputs redirected by `outputs`, else the
/// linter's own), learns its pid through a FIFO (so the pid is known before the linter goes on),
/// writes it beside itself, then does `then`.
fn leaves_a_helper(outputs: &str, then: &str) -> String {
    format!(
        r#"#!/bin/sh
dir=$(dirname "$0")
mkfifo "$dir/ready"
setsid sh -c 'echo $$ > "$1"; exec sleep 300' helper "$dir/ready" </dev/null {outputs} &
read pid < "$dir/ready"
echo "$pid" > "$dir/helper.pid"
{then}
"#
    )
}

/// An empty SARIF log.
const NOTHING_FOUND: &str =
    r#"printf '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"fake"}},"results":[]}]}\n'"#;

/// Kills the helper if the test fails, so that a failure leaves nothing behind either.
struct Helper(u32);

impl Drop for Helper {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0) {
            // Only while it still runs the helper's `sleep`: once reaped, its pid is anybody's.
            if test_support::process::command_line(self.0).contains("sleep") {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
    }
}

/// `asp-bridge sarif` of a change adding a Python file, linted by a fake that leaves a helper (its
/// outputs redirected by `outputs`) and then does `then`, with `settings` added to its
/// `[[linter]]`: the log, once the helper, which must be gone by then (ended and reaped before
/// the provider answered: not even a zombie is left), was checked.
fn lint_leaving_a_helper(outputs: &str, then: &str, settings: &str) -> Value {
    let tools = Scratch::new();
    let fake = tools.path().join("leaves-a-helper");
    std::fs::write(&fake, leaves_a_helper(outputs, then)).unwrap();
    let installed = Command::new("chmod")
        .args(["755", fake.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(installed.success());
    let host_toml = format!(
        "[hygiene]\nenabled = false\n\n[[linter]]\nid = \"fake\"\ncommand = [\"{}\", \"{{files}}\"]\nfiles = [\"**/*.py\"]\n{settings}",
        fake.display()
    );
    let user = User::new(tools.path(), &host_toml);
    let scratch = repository(&[("app.py", PYTHON)]);
    let log = user.sarif(scratch.path(), &[]);
    let pid: u32 = std::fs::read_to_string(tools.path().join("helper.pid"))
        .expect("the fake ran and started its helper")
        .trim()
        .parse()
        .unwrap();
    let helper = Helper(pid);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the helper {pid} outlived the run: {}",
        test_support::process::command_line(pid)
    );
    drop(helper);
    log
}

#[test]
fn a_process_a_linter_starts_in_a_session_of_its_own_is_ended_with_the_run() {
    let log = lint_leaving_a_helper(">/dev/null 2>&1", NOTHING_FOUND, "");
    assert_eq!(log["runs"][0]["results"], json!([]), "{log:#}");
}

#[test]
fn a_process_in_a_session_of_its_own_holding_the_linters_output_open_does_not_hold_the_run() {
    // Required, so that a run that missed its deadline could not be `allow`; the deadline is far
    // longer than the test takes: the run must end when the linter does.
    let settings = "timeout-ms = 60000\nrequired-for = [\"sweep\"]\n";
    let log = lint_leaving_a_helper("", NOTHING_FOUND, settings);
    assert_eq!(log["runs"][0]["results"], json!([]), "{log:#}");
    assert_eq!(log["runs"][0]["properties"]["decision"], "allow", "{log:#}");
}

#[test]
fn a_process_a_hung_linter_started_in_a_session_of_its_own_is_ended_at_the_deadline() {
    let log = lint_leaving_a_helper(">/dev/null 2>&1", "exec sleep 300", "timeout-ms = 1000\n");
    assert!(
        log.to_string()
            .contains("leaves-a-helper did not finish within"),
        "the run is said to have missed its deadline: {log:#}"
    );
}
