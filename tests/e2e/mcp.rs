//! End-to-end tests of `asp-bridge mcp`: the real binary against the fake host, driven by a bare
//! NDJSON MCP client (both eras), by the official Python MCP SDK (`ASP_BRIDGE_PYTHON`), and by the
//! MCP inspector CLI (`ASP_BRIDGE_MCP_INSPECTOR`). A missing client tool skips its test loudly, and
//! fails it where `ASP_BRIDGE_REQUIRE_TOOLS` is set.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::external_tool;
use test_support::mcp::{
    LEGACY, MODERN, McpClient, TOOLS, assert_cause_says, python_client_script,
};

use test_support::process::wait_output;

use crate::embedded::clean_env;
use crate::support::{Scratch, bridge, bridge_bin, fake_host_bin};

mod agent;
mod hostile;

/// What the Python driver `tests/e2e/mcp/<script>` printed, run with `python` and `args` in `repo`
/// with nothing installed (`home` as its home) within `limit`; fails the test if it failed.
pub(crate) fn python_driver(
    python: &str,
    script: &str,
    repo: &Path,
    args: &[&OsStr],
    home: &Path,
    limit: Duration,
) -> Vec<u8> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/e2e/mcp")
        .join(script);
    let mut command = Command::new(python);
    command
        .arg(script)
        .args(["--bridge", bridge_bin(), "--repo"])
        .arg(repo)
        .args(args)
        .current_dir(repo)
        // The drivers' shared module is imported from the source tree: no bytecode is left there.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    clean_env(&mut command, home);
    let output = wait_output(command.spawn().expect("run the Python client"), limit);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "python client failed:\n{stderr}");
    output.stdout
}

/// A git repository with one commit and one changed file (`README.txt`); what the tests themselves
/// write there (the host's record, markers) is ignored by git.
fn workspace() -> Scratch {
    let scratch = Scratch::git_repo();
    let exclude = scratch.path().join(".git/info/exclude");
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(
        exclude,
        "host-record.jsonl\ncrashed-once/\ninspector-home/\n",
    )
    .unwrap();
    std::fs::write(scratch.path().join("README.txt"), "changed\n").unwrap();
    scratch
}

/// A host that crashes on its second request the first time it is started, and behaves after.
fn crash_once(scratch: &Scratch) -> String {
    let fake = shlex::try_quote(fake_host_bin()).unwrap().into_owned();
    let record = scratch.marker().display().to_string();
    let gate = scratch.path().join("crashed-once").display().to_string();
    let script = format!(
        "if mkdir {gate} 2>/dev/null; then exec {fake} --record {record} --crash-after 1; \
         else exec {fake} --record {record}; fi"
    );
    format!("sh -c {}", shlex::try_quote(&script).unwrap())
}

fn arguments_for(tool: &str) -> Value {
    match tool {
        "asp_inspect" => json!({"request": {"kind": "fixture/graph"}}),
        _ => json!({}),
    }
}

// ---- a bare MCP client over the child's stdio --------------------------------------------------------

/// `asp-bridge mcp` on `scratch` with `host`, opened in `era` by test_support's NDJSON MCP client.
fn start(scratch: &Scratch, host: &str, extra: &[&str], era: &'static str) -> McpClient {
    let repo = scratch.path().to_str().expect("a UTF-8 path");
    let args = ["mcp", "--repo", repo, "--host-command", host];
    let mut command = bridge(args, scratch.path());
    command.args(["--restart-delay-ms", "0"]).args(extra);
    McpClient::spawn(command, era)
}

/// A [`workspace`] and the bridge serving it in `era` over the fake host answering as usual.
fn started(era: &'static str) -> (Scratch, McpClient) {
    let scratch = workspace();
    let bridge = start(&scratch, &scratch.fake_host(""), &[], era);
    (scratch, bridge)
}

fn assert_ok(result: &Value) -> &Value {
    assert_eq!(result["isError"], false, "{result:#}");
    let body = &result["structuredContent"];
    assert_eq!(body["authoritative"], false);
    body
}

fn assert_failed<'a>(result: &'a Value, class: &str) -> &'a Value {
    assert_eq!(result["isError"], true, "{result:#}");
    let body = &result["structuredContent"];
    assert_eq!(body["failClass"], class, "{body:#}");
    assert_eq!(body["authoritative"], false);
    body
}

/// The client goes away (closes stdin): the bridge exits 0 and leaves no process behind.
pub(crate) fn close_cleanly(bridge: McpClient, scratch: &Scratch) {
    assert_eq!(bridge.close().0, Some(0));
    scratch.assert_no_orphans();
}

// ---- the bare client -------------------------------------------------------------------------------

#[test]
fn mcp_answers_both_eras_with_nothing_but_frames_on_stdout() {
    for era in [LEGACY, MODERN] {
        let (scratch, mut bridge) = started(era);
        assert_eq!(bridge.tools(), TOOLS, "{era}");
        for tool in TOOLS {
            let body = assert_ok(&bridge.call(tool, arguments_for(tool))).clone();
            assert!(
                !body["receiptId"].as_str().unwrap().is_empty(),
                "{era} {tool}"
            );
        }
        let diagnostics = bridge.call("asp_diagnostics", json!({}));
        assert_eq!(assert_ok(&diagnostics)["changedFiles"], 1);
        let stderr = bridge.stderr();
        let (code, lines) = bridge.close();
        assert_eq!(
            code,
            Some(0),
            "a client closing stdin is a clean end; stderr: {stderr}"
        );
        for line in lines {
            let frame: Value =
                serde_json::from_str(&line).unwrap_or_else(|_| panic!("not a frame: {line}"));
            assert_eq!(frame["jsonrpc"], "2.0", "{line}");
        }
        scratch.assert_no_orphans();
    }
}

#[test]
fn mcp_lists_tools_while_the_host_cannot_start_and_says_health_when_called() {
    let scratch = Scratch::new();
    let missing = scratch.path().join("no-such-host").display().to_string();
    let mut bridge = start(&scratch, &missing, &[], LEGACY);
    assert_eq!(bridge.tools(), TOOLS);
    let body = assert_failed(&bridge.call("asp_status", json!({})), "health").clone();
    assert_cause_says(&body, "could not start host");
    assert_eq!(bridge.close().0, Some(0));
}

#[test]
fn mcp_survives_a_host_crash_and_the_next_call_works() {
    let scratch = Scratch::new();
    let mut bridge = start(&scratch, &crash_once(&scratch), &[], MODERN);
    let body = assert_failed(&bridge.call("asp_status", json!({})), "health").clone();
    assert_cause_says(&body, "exited with status 3");
    assert_ok(&bridge.call("asp_status", json!({})));
    assert_ok(&bridge.call("asp_capabilities", json!({})));
    close_cleanly(bridge, &scratch);
    let handshakes = scratch.received("host/status").len();
    assert_eq!(
        handshakes, 4,
        "two starts, each with a handshake and a status call"
    );
}

#[test]
fn mcp_reports_a_hung_host_as_a_health_timeout() {
    let scratch = Scratch::new();
    let host = scratch.fake_host("--hang-on host/capabilities");
    let mut bridge = start(&scratch, &host, &["--timeout-ms", "300"], LEGACY);
    let body = assert_failed(&bridge.call("asp_capabilities", json!({})), "health").clone();
    assert_cause_says(&body, "within 300 ms");
    assert_ok(&bridge.call("asp_status", json!({})));
    close_cleanly(bridge, &scratch);
}

#[test]
fn mcp_names_each_fail_class_of_a_refusing_host() {
    for class in ["health", "contract", "policy", "input"] {
        let scratch = Scratch::new();
        let host = scratch.fake_host(&format!("--error host/capabilities={class}"));
        let mut bridge = start(&scratch, &host, &[], MODERN);
        let body = assert_failed(&bridge.call("asp_capabilities", json!({})), class).clone();
        assert_cause_says(&body, "fake host refuses");
        close_cleanly(bridge, &scratch);
    }
}

#[test]
fn mcp_refuses_paths_outside_the_workspace() {
    let (scratch, mut bridge) = started(LEGACY);
    for (tool, arguments) in [
        ("asp_diagnostics", json!({"paths": ["../outside"]})),
        ("asp_diagnostics", json!({"paths": ["/etc/passwd"]})),
        (
            "asp_inspect",
            json!({"request": {"symbol": {"path": "../../etc/passwd"}}}),
        ),
    ] {
        let body = assert_failed(&bridge.call(tool, arguments), "input").clone();
        assert_cause_says(&body, "refused");
    }
    assert_eq!(bridge.close().0, Some(0));
    let work = scratch
        .recorded()
        .into_iter()
        .filter(|m| m["method"] == "host/evaluateChangeset" || m["method"] == "host/queryInspect")
        .count();
    assert_eq!(work, 0, "the host never saw a refused path");
}

#[test]
fn mcp_refuses_every_tool_when_the_repository_policy_disables_it() {
    let scratch = workspace();
    std::fs::create_dir(scratch.path().join(".asp")).unwrap();
    std::fs::write(
        scratch.path().join(".asp/asp.json"),
        r#"{"adapters": {"mcp": {"enabled": false}}}"#,
    )
    .unwrap();
    let mut bridge = start(&scratch, &scratch.fake_host(""), &[], MODERN);
    for tool in TOOLS {
        let body = assert_failed(&bridge.call(tool, arguments_for(tool)), "policy").clone();
        assert_cause_says(&body, ".asp/asp.json");
    }
    assert_eq!(bridge.close().0, Some(0));
    assert!(
        scratch.recorded().is_empty(),
        "a disabled adapter never starts the host"
    );
}

#[test]
fn mcp_shuts_the_host_down_when_the_client_goes_away_and_never_gates() {
    let scratch = workspace();
    let mut bridge = start(&scratch, &scratch.fake_host("--progress"), &[], LEGACY);
    for tool in TOOLS {
        assert_ok(&bridge.call(tool, arguments_for(tool)));
    }
    let started = Instant::now();
    assert_eq!(bridge.close().0, Some(0));
    assert!(started.elapsed() < Duration::from_secs(5), "prompt exit");
    scratch.assert_no_orphans();
    let recorded = scratch.recorded();
    assert!(
        recorded.iter().any(|m| m["method"] == "shutdown"),
        "the host was asked to shut down"
    );
    for message in recorded {
        assert_ne!(message["params"]["callSite"], "gate", "{message}");
        let method = message["method"].as_str().unwrap_or_default();
        assert!(!method.contains("applyProposal") && !method.contains("requestEditPlan"));
    }
}

#[test]
fn mcp_stops_on_sigterm_and_takes_the_host_with_it() {
    let (scratch, mut bridge) = started(MODERN);
    assert_ok(&bridge.call("asp_status", json!({})));
    let (code, _) = bridge.terminate();
    assert_eq!(code, Some(0));
    scratch.assert_no_orphans();
    assert!(scratch.recorded().iter().any(|m| m["method"] == "shutdown"));
}

// ---- real clients ----------------------------------------------------------------------------------

#[test]
fn python_sdk_client_in_both_eras_with_progress_crash_recovery_and_traversal() {
    let Some(python) = external_tool("ASP_BRIDGE_PYTHON", "the Python MCP SDK (`mcp` on PyPI)")
    else {
        return;
    };
    for mode in ["legacy", MODERN] {
        let scratch = workspace();
        let output = Command::new(&python)
            .arg(python_client_script())
            .args(["--bridge", bridge_bin(), "--mode", mode, "--repo"])
            .arg(scratch.path())
            .args(["--host-command", &scratch.fake_host("--progress")])
            .args(["--crash-host-command", &crash_once(&scratch)])
            .env_remove("ASP_BRIDGE_HOST_COMMAND")
            .output()
            .expect("run the Python client");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "python client ({mode}) failed:\n{stderr}"
        );
        let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON report");
        assert_eq!(report["mode"], mode);
        assert_eq!(report["tools"], json!(TOOLS));
        assert_eq!(report["readOnly"], true);
        assert_eq!(report["called"], json!(TOOLS));
        assert!(
            report["progress"].as_array().unwrap().len() >= 2,
            "{report:#}"
        );
        assert_eq!(report["crash"], json!(["health", "recovered"]));
        assert_eq!(report["traversal"], "input");
        scratch.assert_no_orphans();
    }
}

/// The MCP inspector's CLI, run against the bridge on a workspace with the fake host.
struct Inspector {
    /// Its CLI launcher (`ASP_BRIDGE_MCP_INSPECTOR`).
    launcher: String,
    scratch: Scratch,
}

impl Inspector {
    /// The inspector on `scratch`, or `None` with a loud skip when it is not installed.
    fn on(scratch: Scratch) -> Option<Inspector> {
        let launcher = external_tool(
            "ASP_BRIDGE_MCP_INSPECTOR",
            "@modelcontextprotocol/inspector",
        )?;
        Some(Inspector { launcher, scratch })
    }

    /// Runs the CLI with `args`, quiet; returns (exit code, stdout, stderr).
    fn quiet(&self, args: &[&str]) -> (Option<i32>, String, String) {
        self.run(&[args, &["-q"]].concat())
    }

    /// Runs the CLI with `args`; returns (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let home = self.scratch.path().join("inspector-home");
        std::fs::create_dir_all(&home).unwrap();
        let repo = self.scratch.path().display().to_string();
        let host = self.scratch.fake_host("");
        let output = Command::new("node")
            .arg(&self.launcher)
            .arg("--cli")
            .arg(bridge_bin())
            .args(["mcp", "--repo", &repo, "--host-command", &host])
            .args(args)
            .args(["--format", "json"])
            .env("HOME", &home)
            .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
            .env_remove("ASP_BRIDGE_HOST_COMMAND")
            .output()
            .expect("run node (the MCP inspector needs Node.js)");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

#[test]
fn inspector_lists_the_tools_strictly_without_schema_warnings_in_both_eras() {
    for era in ["legacy", "modern"] {
        let Some(inspector) = Inspector::on(Scratch::new()) else {
            return;
        };
        let (code, stdout, stderr) =
            inspector.quiet(&["--method", "tools/list", "--strict", "--protocol-era", era]);
        assert_eq!(code, Some(0), "{era}: {stderr}");
        let lint = [
            "type-union",
            "untyped-schema",
            "boolean-schema",
            "remote-ref",
            "portab",
        ];
        assert!(
            !lint.iter().any(|w| stderr.contains(w)),
            "{era}: schema findings:\n{stderr}"
        );
        let listed: Value = serde_json::from_str(&stdout).expect("JSON");
        let names = test_support::strs(&listed["result"]["tools"], "name");
        assert_eq!(names, TOOLS);
        inspector.scratch.assert_no_orphans();
    }
}

#[test]
fn inspector_calls_every_tool_without_schema_warnings() {
    let Some(inspector) = Inspector::on(workspace()) else {
        return;
    };
    for tool in TOOLS {
        let arguments = arguments_for(tool).to_string();
        let args = [
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            &arguments,
        ];
        // Not quiet: the inspector's schema warnings go to stderr.
        let (code, stdout, stderr) = inspector.run(&args);
        assert_eq!(code, Some(0), "{tool}: {stderr}");
        assert!(
            !stderr.contains("unknown format") && !stderr.contains("ignored in schema"),
            "{tool}: schema warnings:\n{stderr}"
        );
        let result: Value = serde_json::from_str(&stdout).expect("JSON");
        assert_eq!(
            result["result"]["structuredContent"]["authoritative"], false,
            "{tool}: {stdout}"
        );
    }
    inspector.scratch.assert_no_orphans();
}

#[test]
fn inspector_calls_a_tool_and_sees_a_refusal_as_a_tool_error() {
    let Some(inspector) = Inspector::on(workspace()) else {
        return;
    };
    let call = ["--method", "tools/call", "--tool-name"];
    let (code, stdout, stderr) = inspector.quiet(&[&call[..], &["asp_status"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let result: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        result["result"]["structuredContent"]["authoritative"],
        false
    );
    let refused = [
        &call[..],
        &[
            "asp_diagnostics",
            "--tool-args-json",
            r#"{"paths": ["../x"]}"#,
        ],
    ]
    .concat();
    let (code, stdout, stderr) = inspector.quiet(&refused);
    assert_eq!(
        code,
        Some(5),
        "isError is the inspector's tool-error exit: {stderr}"
    );
    let result: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(result["result"]["structuredContent"]["failClass"], "input");
    inspector.scratch.assert_no_orphans();
}

/// A working tree with links to `/dev/zero`, `/dev/stdin`, `/etc/passwd` and a FIFO, a FIFO, and a
/// submodule at another commit is evaluated (it used to hang, run out of memory or fail as `health`).
#[test]
fn mcp_evaluates_a_hostile_working_tree() {
    let scratch = workspace();
    let links = crate::support::hostile_tree(&scratch);
    let mut bridge = start(&scratch, &scratch.fake_host(""), &[], MODERN);
    let result = bridge.call("asp_diagnostics", json!({}));
    let body = assert_ok(&result);
    let changed = body["changedFiles"].as_u64().unwrap();
    assert_eq!(
        changed as usize,
        links.len() + 2,
        "the links, README.txt and plain-dir/inside.txt; never the FIFOs nor the submodule: {body:#}"
    );
    // The submodule (its own repository) and the tracked FIFO are named as left out, so an agent
    // knows they were not checked (git itself does not list an untracked FIFO).
    let left_out: Vec<&str> = body["leftOut"]
        .as_array()
        .unwrap_or_else(|| panic!("no leftOut: {body:#}"))
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(left_out, ["sub", "tracked-fifo"], "{body:#}");
    assert_eq!(bridge.close().0, Some(0));
}

/// A committed `.asp/asp.json` that links to `/dev/stdin` or to a FIFO, or is a FIFO, froze the
/// server on a runtime thread; now each is a `policy` refusal that says why, and the server serves on.
#[test]
fn mcp_refuses_a_policy_file_that_is_a_link_or_a_fifo_and_keeps_serving() {
    let pipe_dir = tempfile::tempdir().unwrap();
    let pipe = pipe_dir.path().join("pipe");
    test_support::process::mkfifo(&pipe);
    for (make, why) in [
        ("stdin", "symbolic link"),
        ("fifo-link", "symbolic link"),
        ("fifo", "FIFO"),
    ] {
        let scratch = workspace();
        let policy = scratch.path().join(".asp/asp.json");
        std::fs::create_dir(policy.parent().unwrap()).unwrap();
        match make {
            "stdin" => std::os::unix::fs::symlink("/dev/stdin", &policy).unwrap(),
            "fifo-link" => std::os::unix::fs::symlink(&pipe, &policy).unwrap(),
            _ => test_support::process::mkfifo(&policy),
        }
        let mut bridge = start(&scratch, &scratch.fake_host(""), &[], LEGACY);
        for tool in ["asp_status", "asp_diagnostics"] {
            let body = assert_failed(&bridge.call(tool, arguments_for(tool)), "policy").clone();
            let cause = body["cause"].as_str().unwrap();
            assert!(
                cause.contains(".asp/asp.json") && cause.contains(why),
                "{make}: {body:#}"
            );
        }
        assert_eq!(bridge.tools().len(), TOOLS.len(), "{make}: still serving");
        assert_eq!(bridge.close().0, Some(0), "{make}");
    }
}
