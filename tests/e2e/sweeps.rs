//! CI sweeps on the embedded host with nothing installed: a branch that adds a conflict-marked file
//! and a private key in two commits, its working tree clean. `sarif --base <base>` reports both (and,
//! with `--comparison introduced`, only what the branch introduced); `--all-files` reports every such
//! problem in the tree, the same in one request or in batches (with a progress line per batch);
//! plain `sarif` on the clean tree reports none and says why on stderr; `status --base` and
//! `--all-files` say what would be evaluated; a bad `--base` is an `input` error; a host that
//! refuses the baseline is an error naming the option and the host's own baseline; an agent gets
//! the same with `asp_diagnostics`'s `base`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use test_support::mcp::{LEGACY, McpClient};

use crate::embedded::{KEY, MERGE, clean_env, outside_with_home, results, results_where};
use crate::support::{Run, Scratch, assert_failed, bridge_bin, host_command, run_bridge_with};

mod action;

const LIMIT: Duration = Duration::from_secs(120);

/// Already in the base branch: a problem that a pull request did not introduce.
const OLD_CONFLICT: &str = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\n";

/// A repository whose `main` holds a clean file and an old conflict, and whose checked-out branch
/// `topic` adds a conflict-marked file and then a private key, in two commits; the working tree is
/// clean.
struct Sweep {
    scratch: Scratch,
    outside: Scratch,
    repo: PathBuf,
    home: PathBuf,
}

impl Sweep {
    fn new() -> Sweep {
        let scratch = Scratch::new();
        scratch.git(&["init", "-q", "-b", "main"]);
        let root = scratch.path();
        std::fs::write(root.join("README.txt"), "hello\n").unwrap();
        std::fs::write(root.join("old.txt"), OLD_CONFLICT).unwrap();
        scratch.git(&["add", "."]);
        scratch.git(&["commit", "-q", "-m", "base"]);
        scratch.git(&["checkout", "-q", "-b", "topic"]);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), MERGE).unwrap();
        scratch.git(&["add", "."]);
        scratch.git(&["commit", "-q", "-m", "a merge gone wrong"]);
        std::fs::create_dir_all(root.join("deploy")).unwrap();
        std::fs::write(root.join("deploy/id_rsa"), KEY).unwrap();
        scratch.git(&["add", "."]);
        scratch.git(&["commit", "-q", "-m", "a key"]);
        let (outside, home) = outside_with_home();
        Sweep {
            repo: scratch.path().canonicalize().unwrap(),
            scratch,
            outside,
            home,
        }
    }

    /// `asp-bridge args…` with nothing installed (no `asp`, no host command, no configuration).
    fn run(&self, args: &[&str]) -> Run {
        let run = run_bridge_with(args, &self.repo, LIMIT, |c| clean_env(c, &self.home));
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        run
    }

    /// `sarif --repo R --output F extra…`: the run and the log (`Null` when none was written).
    fn sarif(&self, name: &str, extra: &[&str]) -> (Run, Value) {
        let log = self.outside.path().join(name);
        let mut args = vec![
            "sarif",
            "--repo",
            self.repo.to_str().unwrap(),
            "--output",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let run = self.run(&args);
        let log = std::fs::read_to_string(&log)
            .map(|text| serde_json::from_str(&text).unwrap())
            .unwrap_or(Value::Null);
        if !log.is_null() {
            let errors = sarif_export::schema::errors(&log);
            assert!(errors.is_empty(), "{errors:#?}");
        }
        (run, log)
    }

    fn git_status(&self) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["status", "--porcelain", "--untracked-files=all"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

fn set(items: &[(&str, &str, u64)]) -> BTreeSet<(String, String, u64)> {
    items
        .iter()
        .map(|(rule, uri, line)| ((*rule).to_owned(), (*uri).to_owned(), *line))
        .collect()
}

/// `(ruleId, uri, startLine)` of the error-level results only (hygiene also reports
/// information-level findings such as a missing final newline).
fn errors(log: &Value) -> BTreeSet<(String, String, u64)> {
    results_where(log, |r| r["level"] == "error")
}

#[test]
fn a_branch_is_evaluated_against_its_base_with_its_commits() {
    let sweep = Sweep::new();
    assert_eq!(sweep.git_status(), "", "the working tree is clean");

    let (run, log) = sweep.sarif("base.sarif", &["--base", "main"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.one_line_starting("asp-bridge uses the embedded host");
    assert_eq!(
        errors(&log),
        set(&[
            ("hygiene/merge-conflict", "src/main.rs", 2),
            ("hygiene/private-key", "deploy/id_rsa", 1),
        ]),
        "both problems of the branch, nothing of the base: {log:#}"
    );
    assert_eq!(log["runs"][0]["properties"]["decision"], "deny");

    let (run, log) = sweep.sarif(
        "introduced.sarif",
        &["--base", "main", "--comparison", "introduced"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let found = errors(&log);
    assert_eq!(found.len(), 2, "{found:#?}");
    for result in log["runs"][0]["results"].as_array().unwrap() {
        assert_ne!(
            result["properties"]["introduced"], false,
            "only what the branch introduced: {result:#}"
        );
    }
    assert_eq!(sweep.git_status(), "", "nothing written in the workspace");
    sweep.scratch.assert_no_orphans();
}

#[test]
fn plain_sarif_on_a_clean_tree_reports_nothing_and_says_which_option_to_use() {
    let sweep = Sweep::new();
    let (run, log) = sweep.sarif("plain.sarif", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(results(&log), BTreeSet::new());
    let empty: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("the changeset is empty"))
        .collect();
    assert_eq!(empty.len(), 1, "{}", run.stderr);
    assert!(
        empty[0].contains("--base") && empty[0].contains("--all-files"),
        "{}",
        empty[0]
    );
    sweep.scratch.assert_no_orphans();
}

#[test]
fn all_files_reports_every_problem_in_the_tree_in_one_request_or_in_batches() {
    let sweep = Sweep::new();
    let every = set(&[
        ("hygiene/merge-conflict", "old.txt", 2),
        ("hygiene/merge-conflict", "src/main.rs", 2),
        ("hygiene/private-key", "deploy/id_rsa", 1),
    ]);
    let (run, whole) = sweep.sarif("all.sarif", &["--all-files"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(errors(&whole), every, "{whole:#}");
    assert!(
        !run.stderr.contains("batch "),
        "one request: {}",
        run.stderr
    );

    let (run, batched) = sweep.sarif("batched.sarif", &["--all-files", "--batch-files", "1"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        results(&batched),
        results(&whole),
        "the same results, one file per request"
    );
    let progress = run.lines_starting("asp-bridge: sarif: batch ");
    assert_eq!(
        progress,
        [
            "asp-bridge: sarif: batch 1 of 4 evaluated (1 of 4 files)",
            "asp-bridge: sarif: batch 2 of 4 evaluated (2 of 4 files)",
            "asp-bridge: sarif: batch 3 of 4 evaluated (3 of 4 files)",
            "asp-bridge: sarif: batch 4 of 4 evaluated (4 of 4 files)",
        ],
        "{}",
        run.stderr
    );
    let properties = &batched["runs"][0]["properties"];
    assert_eq!(properties["decision"], "deny", "a batch that denies: deny");
    assert_eq!(properties["receipt"]["batched"], 4);
    assert_eq!(
        properties["receipt"]["batches"].as_array().unwrap().len(),
        4,
        "every batch's receipt is kept"
    );
    sweep.scratch.assert_no_orphans();
}

#[test]
fn status_says_what_would_be_evaluated() {
    let sweep = Sweep::new();
    let plain = sweep.run(&["status"]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    assert!(
        plain.stdout.contains("evaluate   0 file(s)"),
        "{}",
        plain.stdout
    );
    let base = sweep.run(&["status", "--base", "main"]);
    assert_eq!(base.code, Some(0), "{}", base.stderr);
    assert!(
        base.stdout.contains("evaluate   2 file(s)") && base.stdout.contains("\"main\""),
        "{}",
        base.stdout
    );
    let all = sweep.run(&["status", "--all-files", "--batch-files", "3", "--json"]);
    assert_eq!(all.code, Some(0), "{}", all.stderr);
    let document: Value = serde_json::from_str(&all.stdout).unwrap();
    assert_eq!(document["evaluate"]["scope"], "all-files", "{document:#}");
    assert_eq!(document["evaluate"]["files"], 4);
    assert_eq!(document["evaluate"]["batches"], 2);
    sweep.scratch.assert_no_orphans();
}

#[test]
fn a_bad_base_is_an_input_error_that_names_the_option() {
    let sweep = Sweep::new();
    for (arg, cause) in [
        ("--base=no-such-branch", "names no commit"),
        ("--base=--output=stolen", "like an option"),
        ("--base=--help", "like an option"),
    ] {
        let (run, log) = sweep.sarif("bad.sarif", &[arg]);
        assert_failed(&run, 6, "input", cause);
        assert!(run.stderr.contains("--base "), "{}", run.stderr);
        assert!(log.is_null(), "no log written");
        assert!(!sweep.repo.join("stolen").exists());
        assert!(!Path::new("stolen").exists());
    }
    // A branch with no common history.
    sweep.scratch.git(&["checkout", "-q", "--orphan", "alone"]);
    sweep.scratch.git(&["commit", "-q", "-m", "alone"]);
    sweep.scratch.git(&["checkout", "-q", "topic"]);
    let (run, _) = sweep.sarif("alone.sarif", &["--base", "alone"]);
    assert_failed(&run, 6, "input", "no common ancestor");
    sweep.scratch.assert_no_orphans();
}

#[test]
fn a_host_that_refuses_the_baseline_is_an_error_naming_the_option_and_its_baseline() {
    let sweep = Sweep::new();
    let host = host_command("--evaluate outer/evaluate.indeterminate.stale-baseline.json");
    let (run, log) = sweep.sarif(
        "stale.sarif",
        &["--base", "main", "--host-command", host.as_str()],
    );
    assert_failed(&run, 6, "input", "stale-baseline");
    let line = run.one_line_starting("asp-bridge: input");
    assert!(line.contains("--base main"), "{line}");
    assert!(line.contains("the host's own baseline is"), "{line}");
    assert!(log.is_null());
    sweep.scratch.assert_no_orphans();
}

#[test]
fn an_agent_asks_for_the_changes_of_a_branch_with_base() {
    let sweep = Sweep::new();
    let mut command = std::process::Command::new(bridge_bin());
    command
        .args(["mcp", "--repo"])
        .arg(&sweep.repo)
        .current_dir(&sweep.repo);
    clean_env(&mut command, &sweep.home);
    let mut client = McpClient::spawn_with_deadline(command, LEGACY, LIMIT);

    let plain = client.call("asp_diagnostics", json!({}));
    assert_ne!(plain["isError"], true, "{plain:#}");
    assert_eq!(plain["structuredContent"]["changedFiles"], 0, "{plain:#}");

    let branch = client.call("asp_diagnostics", json!({"base": "main"}));
    assert_ne!(branch["isError"], true, "{branch:#}");
    let content = &branch["structuredContent"];
    assert_eq!(content["changedFiles"], 2, "{content:#}");
    assert_eq!(content["base"]["rev"], "main");
    let codes: BTreeSet<&str> = content["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        BTreeSet::from(["hygiene/merge-conflict", "hygiene/private-key"])
    );

    for (base, cause) in [
        ("--output=/tmp/stolen", "like an option"),
        ("no-such-branch", "names no commit"),
    ] {
        let refused = client.call("asp_diagnostics", json!({ "base": base }));
        assert_eq!(refused["isError"], true, "{refused:#}");
        let body = &refused["structuredContent"];
        assert_eq!(body["failClass"], "input", "{body:#}");
        let said = body["cause"].as_str().unwrap();
        assert!(said.starts_with("base: ") && said.contains(cause), "{said}");
    }
    let (code, _) = client.close();
    assert_eq!(code, Some(0));
    sweep.scratch.assert_no_orphans();
}

#[test]
fn a_base_with_no_commits_of_its_own_is_decided_not_blamed_on_a_stale_provider() {
    let sweep = Sweep::new();
    std::fs::write(sweep.repo.join("src/main.rs"), "fn main() {}\n").unwrap();
    // `HEAD` itself, and a branch at `HEAD` with nothing of its own: the merge base is the
    // host's own baseline.
    sweep.scratch.git(&["branch", "here"]);
    for base in ["HEAD", "here"] {
        let (run, log) = sweep.sarif("head.sarif", &["--base", base]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let properties = &log["runs"][0]["properties"];
        assert_eq!(properties["decision"], "allow", "--base {base}: {log:#}");
        assert!(!log.to_string().contains("\"stale\""), "{log:#}");
    }
    sweep.scratch.assert_no_orphans();
}

#[test]
fn a_private_key_behind_ten_thousand_notes_is_reported_and_never_allowed() {
    let sweep = Sweep::new();
    // The notes sort before the key and pass the provider's cap of 10,000 on their own.
    std::fs::write(sweep.repo.join("a-notes.txt"), "x \n".repeat(10_001)).unwrap();
    std::fs::write(sweep.repo.join("z-key.pem"), KEY).unwrap();
    sweep.scratch.git(&["add", "."]);
    sweep
        .scratch
        .git(&["commit", "-q", "-m", "notes and a key"]);
    for extra in [&["--base", "main"][..], &["--all-files"][..]] {
        let (run, log) = sweep.sarif("notes.sarif", extra);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let run0 = &log["runs"][0];
        assert_eq!(run0["properties"]["decision"], "indeterminate", "{extra:?}");
        assert!(
            errors(&log).contains(&("hygiene/private-key".into(), "z-key.pem".into(), 1)),
            "{extra:?}: the key is reported"
        );
        let said = run0["invocations"][0]["toolExecutionNotifications"].to_string();
        assert!(said.contains("left out"), "{extra:?}: {said}");
    }
}

#[test]
fn a_sweep_is_split_by_bytes_as_well_as_by_files() {
    let sweep = Sweep::new();
    let (run, whole) = sweep.sarif("whole.sarif", &["--all-files"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Every file is larger than one byte: each goes alone, whatever --batch-files says.
    let (run, batched) = sweep.sarif("bytes.sarif", &["--all-files", "--batch-bytes", "1"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(results(&batched), results(&whole), "the same results");
    let progress = run.lines_starting("asp-bridge: sarif: batch ");
    assert_eq!(progress.len(), 4, "{}", run.stderr);
    let status = sweep.run(&["status", "--all-files", "--batch-bytes", "1", "--json"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let document: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(document["evaluate"]["batches"], 4, "{document:#}");
    assert_eq!(document["evaluate"]["batchBytes"], 1, "{document:#}");
    let default = sweep.run(&["status", "--all-files", "--json"]);
    let document: Value = serde_json::from_str(&default.stdout).unwrap();
    assert_eq!(document["evaluate"]["batches"], 1, "{document:#}");
    assert_eq!(document["evaluate"]["batchBytes"], 64 << 20, "{document:#}");
    sweep.scratch.assert_no_orphans();
}
