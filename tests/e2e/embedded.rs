//! The main job with nothing installed: no `asp` on `PATH`, no host command, no configuration. In a
//! fresh git repository whose changes hold a conflict-marked file, a private key and an invalid JSON
//! file, `status`, `sarif`, `mcp` and `lsp` all work on the embedded host and its built-in hygiene
//! provider; the SARIF log (OASIS schema; Microsoft's SARIF Multitool when
//! `ASP_BRIDGE_SARIF_MULTITOOL` names it) has the hygiene results on those files at the right lines
//! and none on a clean change; the workspace is left as it was.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Run, Scratch, bridge_bin, multitool_validate, run_bridge_with};
use test_support::lsp::{frame, frames};
use test_support::mcp::{LEGACY, McpClient};

const LIMIT: Duration = Duration::from_secs(120);
/// git and sh, and no `asp`.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// A file with an unresolved merge conflict (`hygiene/merge-conflict` on lines 2 to 6).
pub(crate) const MERGE: &str =
    "fn main() {\n<<<<<<< HEAD\n    let x = 1;\n=======\n    let x = 2;\n>>>>>>> topic\n}\n";
/// A private key (`hygiene/private-key` on line 1).
pub(crate) const KEY: &str =
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAexample\n-----END RSA PRIVATE KEY-----\n"; // pragma: allowlist secret
const JSON: &str = "{\n  \"name\": \"demo\",\n  \"version\": 1,,\n}\n";
const CLEAN: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

/// A fresh repository: one commit, then a change with the three problems and a clean file.
fn repository() -> Scratch {
    let scratch = Scratch::git_repo();
    let root = scratch.path();
    std::fs::write(root.join("src.rs"), "fn main() {\n}\n").unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "more"]);
    std::fs::write(root.join("src.rs"), MERGE).unwrap();
    std::fs::create_dir_all(root.join("deploy")).unwrap();
    std::fs::write(root.join("deploy/id_rsa"), KEY).unwrap();
    std::fs::create_dir_all(root.join("config")).unwrap();
    std::fs::write(root.join("config/app.json"), JSON).unwrap();
    std::fs::write(root.join("clean.rs"), CLEAN).unwrap();
    scratch
}

/// Everything in the workspace that the commands could change: every file's bytes, and git's view.
fn snapshot(root: &Path) -> (BTreeSet<(String, Vec<u8>)>, String) {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeSet<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.insert((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut files = BTreeSet::new();
    walk(root, root, &mut files);
    let status = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--untracked-files=all"])
        .output()
        .unwrap();
    (files, String::from_utf8_lossy(&status.stdout).into_owned())
}

/// A clean environment: no `asp`, no host command, no configuration anywhere.
pub(crate) fn clean_env(command: &mut Command, home: &Path) {
    command
        .env("PATH", SYSTEM_PATH)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .env_remove("ASP_BRIDGE_CONFIG");
}

pub(crate) fn run(repo: &Path, home: &Path, args: &[&str]) -> Run {
    run_bridge_with(args, repo, LIMIT, |c| clean_env(c, home))
}

/// A directory outside the workspace holding an empty home directory (the second), for runs with
/// nothing installed.
pub(crate) fn outside_with_home() -> (Scratch, PathBuf) {
    let outside = Scratch::new();
    let home = outside.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    (outside, home)
}

/// `asp-bridge sarif --repo R --output LOG` with nothing installed: the log and the stderr.
pub(crate) fn sarif_run(repo: &Path, home: &Path, log_path: &Path) -> (Value, String) {
    let args = [
        "sarif",
        "--repo",
        repo.to_str().unwrap(),
        "--output",
        log_path.to_str().unwrap(),
    ];
    let sarif = run(repo, home, &args);
    assert_eq!(sarif.code, Some(0), "{}", sarif.stderr);
    let log: Value = serde_json::from_str(&std::fs::read_to_string(log_path).unwrap()).unwrap();
    (log, sarif.stderr)
}

/// [`sarif_run`]'s log, valid against the SARIF schema.
fn sarif_log(repo: &Path, home: &Path, log_path: &Path) -> Value {
    let (log, _) = sarif_run(repo, home, log_path);
    let errors = sarif_export::schema::errors(&log);
    assert!(errors.is_empty(), "{errors:#?}");
    log
}

/// `(ruleId, uri, startLine)` of every result of the log's first run.
pub(crate) fn results(log: &Value) -> BTreeSet<(String, String, u64)> {
    results_where(log, |_| true)
}

/// `(ruleId, uri, startLine)` of the results `keep` picks.
pub(crate) fn results_where(
    log: &Value,
    keep: impl Fn(&Value) -> bool,
) -> BTreeSet<(String, String, u64)> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| keep(r))
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                location["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                location["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect()
}

pub(crate) fn multitool_errors(log: &Path, scratch: &Path) -> Option<Vec<String>> {
    let multitool = std::env::var_os("ASP_BRIDGE_SARIF_MULTITOOL")?;
    let (console, report) = multitool_validate(multitool, &[log], &scratch.join("multitool.sarif"));
    assert!(console.contains("1 files scanned"), "{console}");
    Some(
        report["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["level"] == "error")
            .map(|r| r["message"]["text"].to_string())
            .collect(),
    )
}

#[test]
fn the_main_job_runs_on_the_embedded_host_with_nothing_installed() {
    let scratch = repository();
    let repo = scratch.path().canonicalize().unwrap();
    let (outside, home) = outside_with_home();
    let before = snapshot(&repo);
    let repo_arg = repo.to_str().unwrap();

    let status = run(&repo, &home, &["status", "--repo", repo_arg]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    status.one_line_starting("asp-bridge uses the embedded host");
    let shown = &status.stdout;
    assert!(shown.starts_with("host       "), "{shown}");
    assert!(
        shown.contains("hygiene"),
        "the built-in provider is enrolled: {shown}"
    );

    let log_path = outside.path().join("hygiene.sarif");
    let log = sarif_log(&repo, &home, &log_path);
    let found = results(&log);
    for expected in [
        ("hygiene/merge-conflict", "src.rs", 2),
        ("hygiene/private-key", "deploy/id_rsa", 1),
        ("hygiene/json-syntax", "config/app.json", 3),
    ] {
        assert!(
            found.contains(&(expected.0.into(), expected.1.into(), expected.2)),
            "{expected:?} in {found:#?}"
        );
    }
    assert!(
        found.iter().all(|(_, uri, _)| uri != "clean.rs"),
        "nothing on the clean file: {found:#?}"
    );
    if let Some(errors) = multitool_errors(&log_path, outside.path()) {
        assert!(errors.is_empty(), "Multitool errors: {errors:#?}");
    }

    let mcp = mcp_diagnostics(&repo, &home);
    let text = mcp.to_string();
    for code in [
        "hygiene/merge-conflict",
        "hygiene/private-key",
        "hygiene/json-syntax",
    ] {
        assert!(text.contains(code), "{code} in the MCP result: {mcp:#}");
    }

    let published = lsp_diagnostics(&repo, &home, "config/app.json", JSON);
    assert_eq!(published["code"], "hygiene/json-syntax", "{published:#}");
    assert_eq!(published["range"]["start"]["line"], 2, "{published:#}");

    assert_eq!(snapshot(&repo), before, "the workspace is unchanged");
    scratch.assert_no_orphans();
}

/// GitHub code scanning takes a leaked key for a security alert only with the `security` tag and a
/// `security-severity`; every hygiene rule is described (not named by its id) and linked to its
/// README section, so the Multitool has no rule metadata to ask for.
#[test]
fn a_private_key_is_a_security_alert_and_every_hygiene_rule_is_described_and_linked_in_sarif() {
    let scratch = repository();
    let repo = scratch.path().canonicalize().unwrap();
    let (outside, home) = outside_with_home();
    let log_path = outside.path().join("rules.sarif");
    let log = sarif_log(&repo, &home, &log_path);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let hygiene: Vec<&Value> = rules
        .iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with("hygiene/"))
        .collect();
    assert!(hygiene.len() >= 3, "{rules:#?}");
    for rule in &hygiene {
        let id = rule["id"].as_str().unwrap();
        let short = rule["shortDescription"]["text"].as_str().unwrap();
        assert!(!short.contains(id), "{id}: {short}");
        assert_ne!(
            rule["fullDescription"]["text"],
            rule["shortDescription"]["text"]
        );
        let uri = rule["helpUri"].as_str().unwrap_or_default();
        assert!(
            uri.starts_with("https://github.com/asp-bridge/asp-bridge#hygiene-"),
            "{id}: {rule:#}"
        );
        let tags = rule["properties"]["tags"].as_array().unwrap();
        assert_eq!(
            tags.contains(&Value::from("security")),
            id == "hygiene/private-key",
            "{id}: {tags:?}"
        );
    }
    let key = hygiene
        .iter()
        .find(|r| r["id"] == "hygiene/private-key")
        .unwrap();
    assert_eq!(key["properties"]["security-severity"], "9.0", "{key:#}");
    assert_eq!(key["shortDescription"]["text"], "Private key committed");
    if let Some(multitool) = std::env::var_os("ASP_BRIDGE_SARIF_MULTITOOL") {
        let (console, report) = multitool_validate(
            multitool,
            &[&log_path],
            &outside.path().join("multitool.sarif"),
        );
        let about_rules: Vec<String> = report["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                let text = r["message"].to_string();
                // Whether an address answers (SARIF2006) depends on the network, not the log.
                r["level"] == "error"
                    || r["ruleId"] == "SARIF2012"
                    || (text.contains("helpUri") && r["ruleId"] != "SARIF2006")
            })
            .map(|r| r["message"].to_string())
            .collect();
        assert_eq!(about_rules, Vec::<String>::new(), "{console}");
    }
    scratch.assert_no_orphans();
}

/// The tool execution notifications of a SARIF log's first run.
pub(crate) fn notifications(log: &Value) -> Vec<Value> {
    log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The paths a SARIF log's left-out notification names, each with why.
fn left_out(log: &Value) -> Vec<(String, String)> {
    notifications(log)
        .iter()
        .filter(|n| n["descriptor"]["id"] == "asp-bridge/paths-left-out")
        .flat_map(|n| {
            n["properties"]["paths"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|p| {
            (
                p["path"].as_str().unwrap_or_default().to_owned(),
                p["why"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A link's blob is its target path, wherever the link comes from: a new untracked link (no
/// baseline side to ask about) and every tracked link of an `--all-files` sweep (against the empty
/// tree) are sent to no provider, and each is named as left out, never reported clean; a plain file
/// beside them is still checked.
#[test]
fn a_new_link_and_the_links_of_a_sweep_are_left_out_and_named_never_checked_as_content() {
    let scratch = Scratch::git_repo();
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::write(repo.join("target.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink("target.json", repo.join("tracked.json")).unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "a link"]);
    std::os::unix::fs::symlink("target.json", repo.join("new.json")).unwrap();
    std::fs::write(repo.join("plain.txt"), "no final newline").unwrap();
    let (outside, home) = outside_with_home();
    let link =
        "a symbolic link (its blob is its target path: no content to check), not sent to hygiene";

    let changes = sarif_log(&repo, &home, &outside.path().join("changes.sarif"));
    let found = results(&changes);
    assert!(
        found.contains(&("hygiene/final-newline".into(), "plain.txt".into(), 1)),
        "{found:#?}"
    );
    assert!(
        found.iter().all(|(_, uri, _)| uri != "new.json"),
        "{found:#?}"
    );
    assert_eq!(
        left_out(&changes),
        [("new.json".to_owned(), link.to_owned())]
    );

    let sweep_path = outside.path().join("sweep.sarif");
    let args = [
        "sarif",
        "--repo",
        repo.to_str().unwrap(),
        "--all-files",
        "--output",
        sweep_path.to_str().unwrap(),
    ];
    let sweep = run(&repo, &home, &args);
    assert_eq!(sweep.code, Some(0), "{}", sweep.stderr);
    assert!(
        sweep
            .stderr
            .contains("1 path(s) left out by the host, not checked: tracked.json"),
        "{}",
        sweep.stderr
    );
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sweep_path).unwrap()).unwrap();
    assert_eq!(
        results(&log),
        Default::default(),
        "target.json is clean, the link unchecked"
    );
    assert_eq!(
        left_out(&log),
        [("tracked.json".to_owned(), link.to_owned())]
    );
    assert_eq!(log["runs"][0]["properties"]["decision"], "allow");
    scratch.assert_no_orphans();
}

/// A committed symbolic link's blob is its target path, not content: a `*.json` link changed to
/// point elsewhere is no invalid JSON and lacks no final newline, and a link replaced by a file is
/// that file, checked.
#[test]
fn a_committed_symlink_changed_to_another_target_is_not_checked_as_content() {
    let scratch = Scratch::git_repo();
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::write(repo.join("target"), "{}\n").unwrap();
    std::fs::write(repo.join("other"), "{}\n").unwrap();
    std::os::unix::fs::symlink("target", repo.join("config.json")).unwrap();
    std::os::unix::fs::symlink("target", repo.join("gone.json")).unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "links"]);
    std::fs::remove_file(repo.join("config.json")).unwrap();
    std::os::unix::fs::symlink("other", repo.join("config.json")).unwrap();
    // A link replaced by a file of bad JSON: the file is checked.
    std::fs::remove_file(repo.join("gone.json")).unwrap();
    std::fs::write(repo.join("gone.json"), "{\n  \"a\": 1,,\n}\n").unwrap();
    let (outside, home) = outside_with_home();
    let log = sarif_log(&repo, &home, &outside.path().join("links.sarif"));
    let found = results(&log);
    assert!(
        found.iter().all(|(_, uri, _)| uri != "config.json"),
        "nothing on the link: {found:#?}"
    );
    assert!(
        found.contains(&("hygiene/json-syntax".into(), "gone.json".into(), 2)),
        "{found:#?}"
    );
    scratch.assert_no_orphans();
}

#[test]
fn a_clean_change_has_no_hygiene_results() {
    let scratch = Scratch::git_repo();
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::write(repo.join("clean.rs"), CLEAN).unwrap();
    std::fs::write(repo.join("README.txt"), "hello\nworld\n").unwrap();
    let (outside, home) = outside_with_home();
    let log = sarif_log(&repo, &home, &outside.path().join("clean.sarif"));
    assert_eq!(results(&log), BTreeSet::new());
    scratch.assert_no_orphans();
}

/// `asp_diagnostics` over a bare MCP client: the tool result.
pub(crate) fn mcp_diagnostics(repo: &Path, home: &Path) -> Value {
    let mut command = Command::new(bridge_bin());
    command.args(["mcp", "--repo"]).arg(repo).current_dir(repo);
    clean_env(&mut command, home);
    let mut client = McpClient::spawn_with_deadline(command, LEGACY, LIMIT);
    let result = client.call("asp_diagnostics", json!({}));
    client.close();
    assert_ne!(result["isError"], true, "{result:#}");
    result
}

/// Opens `path` in `asp-bridge lsp` and returns the first diagnostic published for it.
pub(crate) fn lsp_diagnostics(repo: &Path, home: &Path, path: &str, text: &str) -> Value {
    lsp_published(repo, home, path, text, |d| d["source"] == "hygiene")
        .into_iter()
        .find(|d| d["source"] == "hygiene")
        .unwrap()
}

/// Opens `path` in `asp-bridge lsp` and returns the first list of diagnostics published for it
/// that holds one `wanted` accepts.
pub(crate) fn lsp_published(
    repo: &Path,
    home: &Path,
    path: &str,
    text: &str,
    wanted: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut command = lsp_command(repo);
    clean_env(&mut command, home);
    lsp_session(command, repo, path, text, wanted)
}

/// `asp-bridge lsp` with no debounce, in `repo`.
pub(crate) fn lsp_command(repo: &Path) -> Command {
    let mut command = Command::new(bridge_bin());
    command
        .args(["lsp", "--debounce-ms", "0"])
        .current_dir(repo);
    command
}

/// Runs `command` (an `asp-bridge lsp`) as a bare LSP client on `repo`: opens `path` with `text`,
/// returns the first list of diagnostics published for it that holds one `wanted` accepts, and
/// shuts the server down.
pub(crate) fn lsp_session(
    mut command: Command,
    repo: &Path,
    path: &str,
    text: &str,
    wanted: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let frames = frames(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let next = |wanted: &dyn Fn(&Value) -> bool| loop {
        let message = frames.recv_timeout(LIMIT).expect("the server went silent");
        if wanted(&message) {
            return message;
        }
    };
    let root = format!("file://{}", repo.display());
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": root, "capabilities": {}}}),
        ))
        .unwrap();
    next(&|m| m["id"] == 1);
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ))
        .unwrap();
    let uri = format!("{root}/{path}");
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": text}}}),
        ))
        .unwrap();
    let published = next(&|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri.as_str()
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(&wanted))
    });
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        ))
        .unwrap();
    next(&|m| m["id"] == 2);
    stdin
        .write_all(&frame(&json!({"jsonrpc": "2.0", "method": "exit"})))
        .unwrap();
    let _ = child.wait();
    published["params"]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap()
}

#[test]
fn an_output_folder_that_does_not_exist_is_an_input_error_before_any_evaluation() {
    let scratch = repository();
    let (outside, home) = outside_with_home();
    let log = outside.path().join("no/such/folder/asp.sarif");
    // A host that cannot start: had the evaluation come first, this would be a health error.
    let args = [
        "sarif",
        "--repo",
        scratch.path().to_str().unwrap(),
        "--output",
        log.to_str().unwrap(),
        "--host-command",
        "/nonexistent/asp-host serve",
    ];
    let run = run(scratch.path(), &home, &args);
    crate::support::assert_failed(&run, 6, "input", "does not exist");
    assert!(run.stderr.contains("no/such/folder"), "{}", run.stderr);
}

#[test]
fn a_log_written_inside_the_workspace_is_not_part_of_the_next_runs_changeset() {
    let scratch = repository();
    let (_outside, home) = outside_with_home();
    let log = scratch.path().join("asp-bridge.sarif");
    let first = sarif_log(scratch.path(), &home, &log);
    // The first log quotes the private key's marker in its messages; evaluated, it would be a
    // private key of its own.
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("PRIVATE KEY")
    );
    let second = sarif_log(scratch.path(), &home, &log);
    assert_eq!(results(&second), results(&first));
    assert!(
        !results(&second)
            .iter()
            .any(|(_, uri, _)| uri.contains("asp-bridge.sarif")),
        "{second:#}"
    );
    scratch.assert_no_orphans();
}

#[test]
fn the_main_job_says_its_first_build_takes_minutes_and_lets_cargo_show_progress() {
    let scratch = Scratch::new();
    // A cargo that records its arguments and fails, so the job stops after its build step; a
    // target folder with no binary yet, as on a fresh clone.
    let record = scratch.path().join("cargo-args");
    let cargo = scratch.path().join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\necho \"$@\" > '{}'\nexit 1\n", record.display()),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/demo.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg(scratch.path().join("demo"))
        .env("CARGO", &cargo)
        .env("CARGO_TARGET_DIR", scratch.path().join("target"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the stub cargo fails: {stderr}");
    let said = stderr
        .lines()
        .find(|l| l.starts_with("== cargo build"))
        .unwrap_or_else(|| panic!("nothing said before the build: {stderr}"));
    assert!(said.contains("several minutes"), "{said}");
    let args = std::fs::read_to_string(&record).unwrap();
    assert_eq!(
        args.trim(),
        "build --release --bin asp-bridge",
        "no --quiet: {args}"
    );
}
