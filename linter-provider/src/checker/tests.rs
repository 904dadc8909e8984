//! Whole evaluations of a fake linter (a `sh` script each test writes) against the in-memory host:
//! every way a run can fail, flood or hang is an `incomplete` answer that names the program and
//! says why, never a clean one; the scratch tree (and the `{out}` folder) is gone afterwards; and
//! what is kept, the configuration files, `wants` and the introduced comparison work end to end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use provider_kit::memory::{Memory, evaluate_params as params, findings};
use provider_kit::{Identity, MAX_DIAGNOSTICS, Request, evaluate};
use serde_json::{Value, json};
use test_support::process::ends;

use super::*;
use crate::columns::Unit;
use crate::preset::Output;

mod flood;
mod recall;

/// The fake's file name: the program every failure must name.
const PROGRAM: &str = "fake-lint";

/// A SARIF log with a result on line 1 of each file it is given (`"$@"`).
const EACH_FILE: &str = r#"
sep=
printf '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"fake"}},"results":['
for f in "$@"; do
  printf '%s{"ruleId":"seen","message":{"text":"linted"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"%s"},"region":{"startLine":1}}}]}' "$sep" "$f"
  sep=,
done
printf ']}]}\n'
"#;

/// Lists the files of the tree the fake runs in, one a line, in its log's `tree`.
const LIST_TREE: &str = "find . -type f | sort > \"$log/tree\"";

/// A fake linter in a folder of its own, which also holds what the fake logs there (`$log`): the
/// folder it ran in (`pwd`, one line a run) and its arguments (`argv`, one line a run).
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    /// A fake running `body` (sh) after the logging preamble.
    fn new(body: &str) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().display().to_string();
        let script = format!(
            "#!/bin/sh\nlog='{log}'\nprintf '%s\\n' \"$PWD\" >> \"$log/pwd\"\nprintf '%s\\n' \"$*\" >> \"$log/argv\"\n{body}\n"
        );
        let text = dir.path().join("script.txt");
        std::fs::write(&text, script).unwrap();
        // Installed by another process: this one never holds the executable open for writing, so
        // a fork elsewhere in the test binary cannot make its exec fail with ETXTBSY.
        let installed = std::process::Command::new("install")
            .args(["-m", "755"])
            .arg(&text)
            .arg(dir.path().join(PROGRAM))
            .status()
            .unwrap();
        assert!(installed.success());
        Fake { dir }
    }

    /// A fake running `first` (sh), then printing [`EACH_FILE`]'s log.
    fn each_file_after(first: &str) -> Fake {
        Fake::new(&format!("{first}\n{EACH_FILE}"))
    }

    /// A fake that prints `log` (a SARIF log) and exits 0.
    fn printing(log: &Value) -> Fake {
        let fake = Fake::new(r#"cat "$log/canned""#);
        std::fs::write(fake.path("canned"), log.to_string()).unwrap();
        fake
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The lines of a file the fake wrote (none when it wrote none).
    fn lines(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The arguments of each run so far.
    fn runs(&self) -> Vec<String> {
        self.lines("argv")
    }

    /// Python files, `pyproject.toml` and `ruff.toml` as configuration; `args` after the program.
    fn linter(&self, args: &[&str]) -> Linter {
        let mut command = vec![self.path(PROGRAM).display().to_string()];
        command.extend(args.iter().map(|a| (*a).to_owned()));
        Linter {
            id: "fake".into(),
            command,
            convert: None,
            files: vec!["**/*.py".into()],
            config_files: vec!["pyproject.toml".into(), "ruff.toml".into()],
            columns: Unit::Unicode,
            ok_exit: vec![0, 1],
            output: Output::Sarif,
            install: None,
            rule_uri: None,
        }
    }

    fn lint(&self, args: &[&str]) -> Lint {
        Lint::new(self.linter(args)).unwrap()
    }

    /// Every folder the fake ran in is gone.
    fn assert_scratch_gone(&self) {
        let folders = self.lines("pwd");
        assert!(!folders.is_empty(), "the fake ran");
        for folder in folders {
            assert!(!Path::new(&folder).exists(), "{folder} is still there");
        }
    }
}

fn identity() -> Identity {
    Identity {
        version: "0.1.0".into(),
        fingerprint: "sha256:build".into(),
    }
}

/// The assessment of `params` by `lint`, within `within`, checked against the schema.
async fn assess(lint: &Lint, memory: &Memory, params: Value, within: Duration) -> Value {
    let request = Request::parse(&params, lint).expect("valid request");
    let deadline = Instant::now() + within;
    let assessment = evaluate(lint, memory, request, deadline, &identity()).await;
    let assessment = serde_json::to_value(assessment).unwrap();
    let errors =
        test_support::schema::asp_errors("check-evaluate.schema.json", "result", &assessment);
    assert_eq!(errors, Vec::<String>::new(), "{assessment:#}");
    assessment
}

/// A change that creates `files` (path, text).
fn created(memory: &mut Memory, files: &[(&str, &str)]) -> Value {
    let changes: Vec<Value> = files
        .iter()
        .map(|(path, text)| {
            json!({"path": path, "kind": "create", "after": memory.add(text.as_bytes())})
        })
        .collect();
    Value::from(changes)
}

/// The assessment of a change that adds `a.py`, linted by `fake` run with `args`.
async fn lint_a_file(fake: &Fake, args: &[&str], within: Duration) -> Value {
    let mut memory = Memory::default();
    let changes = created(&mut memory, &[("a.py", "import os\n")]);
    assess(&fake.lint(args), &memory, params(changes, "all"), within).await
}

const LONG: Duration = Duration::from_secs(60);

/// The assessment of `changes` (comparison `all`) by `fake` run on `{files}`.
async fn lint_all(fake: &Fake, memory: &Memory, changes: Value) -> Value {
    assess(
        &fake.lint(&["{files}"]),
        memory,
        params(changes, "all"),
        LONG,
    )
    .await
}

/// The detail of the `error` that linting `a.py` with `fake` (run on `{files}`) is answered with.
async fn error_of(fake: &Fake) -> String {
    failure(&lint_a_file(fake, &["{files}"], LONG).await, fake, "error")
}

/// The detail of the failure `assessment` reports: `incomplete`, not exhaustive, no findings, one
/// degradation of `reason` that names the program; and the fake's scratch tree is gone.
fn failure(assessment: &Value, fake: &Fake, reason: &str) -> String {
    assert_eq!(assessment["status"], "incomplete", "{assessment:#}");
    assert_eq!(assessment["coverage"]["exhaustive"], false);
    assert_eq!(assessment["diagnostics"], json!([]));
    let degraded = assessment["coverage"]["degraded"].as_array().unwrap();
    assert_eq!(degraded.len(), 1, "{assessment:#}");
    assert_eq!(degraded[0]["reason"], reason, "{assessment:#}");
    assert_eq!(degraded[0]["source"], "fake");
    let detail = degraded[0]["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains(PROGRAM), "names the program: {detail}");
    fake.assert_scratch_gone();
    detail
}

/// A SARIF log of `results`.
fn sarif(results: Value) -> Value {
    json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "fake"}}, "results": results}]})
}

/// A result of rule `rule` at line `line` of `uri`.
fn result(uri: &str, line: u64, rule: &str) -> Value {
    json!({
        "ruleId": rule,
        "message": {"text": format!("{rule} here")},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri},
            "region": {"startLine": line}
        }}]
    })
}

fn notes(assessment: &Value) -> Vec<String> {
    assessment["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_configuration_file_applies_to_the_files_below_its_folder() {
    assert!(applies("pyproject.toml", "src/a.py"));
    assert!(applies("src/pyproject.toml", "src/a.py"));
    assert!(applies("src/pyproject.toml", "src/deep/a.py"));
    assert!(!applies("src/pyproject.toml", "srcx/a.py"));
    assert!(!applies("lib/pyproject.toml", "src/a.py"));
    assert_eq!(
        folders_of("src/pkg/a.py").collect::<Vec<_>>(),
        ["", "src", "src/pkg"]
    );
}

#[tokio::test]
async fn an_exit_status_outside_ok_exit_is_an_error_that_sends_the_stderr_to_the_log_only() {
    let fake = Fake::new(r"printf 'config is broken\033[31m here\001 and\tthere\n' >&2; exit 3");
    let assessment = lint_a_file(&fake, &["{files}"], LONG).await;
    let detail = failure(&assessment, &fake, "error");
    assert!(detail.contains("exited with status 3"), "{detail}");
    assert!(
        detail.contains("its stderr is in the log") && !detail.contains("config is broken"),
        "what the linter printed is not in the answer: {detail}"
    );
    assert!(
        !detail.chars().any(|c| c.is_control()),
        "no escape, control character or tab comes through raw: {detail:?}"
    );
}

#[tokio::test]
async fn a_linter_that_prints_nothing_is_an_error_not_a_clean_file() {
    let detail = error_of(&Fake::new("exit 0")).await;
    assert!(detail.contains("printed nothing"), "{detail}");
}

#[tokio::test]
async fn output_that_is_not_json_is_an_error() {
    let detail = error_of(&Fake::new("echo 'All checks passed!'")).await;
    assert!(detail.contains("is not JSON"), "{detail}");
}

#[tokio::test]
async fn sarif_cut_short_in_the_middle_is_an_error() {
    let log = sarif(json!([result("a.py", 1, "F401")])).to_string();
    let fake = Fake::new(&format!("printf '%s' '{}'", &log[..log.len() / 2]));
    let detail = error_of(&fake).await;
    assert!(detail.contains("is not JSON (cut short"), "{detail}");
}

// What printed past the output cap: `checker/tests/flood.rs`.

#[tokio::test]
async fn a_hanging_linter_is_killed_at_the_deadline_with_what_it_started() {
    let fake = Fake::new(r#"sleep 300 & echo $! > "$log/helper"; sleep 300"#);
    let started = Instant::now();
    let assessment = lint_a_file(&fake, &["{files}"], Duration::from_secs(2)).await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "answered long before the hang would end"
    );
    let detail = failure(&assessment, &fake, "error");
    assert!(detail.contains("did not finish within"), "{detail}");
    let helper: u32 = fake.lines("helper")[0].parse().unwrap();
    assert!(ends(helper).await, "the helper is still running after 10 s");
}

#[tokio::test]
async fn a_log_that_says_its_execution_failed_is_an_error() {
    let mut log = sarif(json!([]));
    log["runs"][0]["invocations"] = json!([{
        "executionSuccessful": false,
        "toolExecutionNotifications": [{"message": {"text": "cannot parse pyproject.toml"}}]
    }]);
    let detail = error_of(&Fake::printing(&log)).await;
    assert!(
        detail.contains("said its run failed: cannot parse pyproject.toml"),
        "{detail}"
    );
}

#[tokio::test]
async fn results_outside_the_scratch_tree_or_on_other_files_are_dropped_and_counted() {
    let mut based = result("passwd", 1, "outside");
    based["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] = json!("ETC");
    let mut log = sarif(json!([
        result("a.py", 1, "kept"),
        result("/etc/passwd", 1, "outside"),
        result("file:///etc/hosts", 2, "outside"),
        result("../escape.py", 1, "outside"),
        result("%2e%2e/escape.py", 1, "outside"),
        result("https://example.com/a.py", 1, "outside"),
        based,
        result("other.py", 1, "elsewhere"),
        result("pyproject.toml", 1, "elsewhere"),
    ]));
    log["runs"][0]["originalUriBaseIds"] = json!({"ETC": {"uri": "file:///etc/"}});
    let fake = Fake::printing(&log);
    let mut memory = Memory::default();
    memory.commit("pyproject.toml", b"[tool.ruff]\n");
    memory.commit("other.py", b"x = 1\n");
    let changes = created(&mut memory, &[("a.py", "import os\n")]);
    let assessment = lint_all(&fake, &memory, changes).await;
    // The results on the change are all there: complete, with what was dropped in the evidence.
    assert_eq!(assessment["status"], "complete", "{assessment:#}");
    assert_eq!(
        findings(&assessment),
        [("fake/kept".into(), "a.py".into(), 0)]
    );
    let notes = notes(&assessment);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("6 results located outside")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2 results on files that are not in the change")),
        "{notes:?}"
    );
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn a_hundred_thousand_results_are_capped_and_what_was_left_out_is_counted() {
    // Written to a file first, so that its size can be checked: under the output cap.
    let fake = Fake::new(
        r#"awk 'BEGIN {
  printf "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"fake\"}},\"results\":["
  for (i = 0; i < 100000; i++) {
    if (i) printf ","
    printf "{\"ruleId\":\"R%d\",\"message\":{\"text\":\"m\"},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":\"a.py\"},\"region\":{\"startLine\":1}}}]}", i % 7
  }
  print "]}]}"
}' > "$log/flood.sarif"
cat "$log/flood.sarif""#,
    );
    let assessment = lint_a_file(&fake, &["{files}"], LONG).await;
    let size = std::fs::metadata(fake.path("flood.sarif")).unwrap().len();
    assert!(size < lint::MAX_OUTPUT as u64, "{size} bytes");
    assert_eq!(assessment["status"], "incomplete");
    assert_eq!(assessment["coverage"]["truncated"], true);
    assert_eq!(
        assessment["diagnostics"].as_array().unwrap().len(),
        MAX_DIAGNOSTICS
    );
    let degraded = &assessment["coverage"]["degraded"];
    assert_eq!(degraded.as_array().unwrap().len(), 1, "{degraded:#}");
    assert_eq!(degraded[0]["reason"], "incomplete");
    let left_out = format!("{} more findings were left out", 100_000 - MAX_DIAGNOSTICS);
    let detail = degraded[0]["detail"].as_str().unwrap();
    assert!(detail.contains(&left_out), "{detail}");
    fake.assert_scratch_gone();
}

/// A fake that writes [`EACH_FILE`]'s log to the file after `--output`, and logs that folder.
const TO_OUT: &str = r#"out=$2; shift 2
dirname "$out" >> "$log/outdirs"
{
"#;

fn writing_to_out(then: &str) -> Fake {
    Fake::new(&format!("{TO_OUT}{EACH_FILE}}} > \"$out\"\n{then}"))
}

#[tokio::test]
async fn sarif_written_to_out_is_read_and_its_folder_removed() {
    let fake = writing_to_out("");
    let assessment = lint_a_file(&fake, &["--output", "{out}", "{files}"], LONG).await;
    assert_eq!(assessment["status"], "complete", "{assessment:#}");
    assert_eq!(
        findings(&assessment),
        [("fake/seen".into(), "a.py".into(), 0)]
    );
    fake.assert_scratch_gone();
    let out = fake.lines("outdirs");
    assert_eq!(out.len(), 1);
    assert!(!Path::new(&out[0]).exists(), "{} is still there", out[0]);
}

#[tokio::test]
async fn an_out_replaced_by_a_link_or_a_fifo_is_refused_without_hanging() {
    // A link to a valid log elsewhere: still refused, it is not the file the linter was given.
    let link = writing_to_out(r#"mv "$out" "$log/real.sarif"; ln -s "$log/real.sarif" "$out""#);
    let fifo = writing_to_out(r#"rm "$out"; mkfifo "$out""#);
    for fake in [link, fifo] {
        let started = Instant::now();
        let assessment = lint_a_file(&fake, &["--output", "{out}", "{files}"], LONG).await;
        assert!(started.elapsed() < Duration::from_secs(20), "no hang");
        let detail = failure(&assessment, &fake, "error");
        assert!(detail.contains("wrote no readable output"), "{detail}");
        let out = fake.lines("outdirs");
        assert!(!Path::new(&out[0]).exists(), "{} is still there", out[0]);
    }
}

#[tokio::test]
async fn a_command_with_path_runs_once_for_each_file() {
    let fake = Fake::new(EACH_FILE);
    let mut memory = Memory::default();
    let changes = created(&mut memory, &[("a.py", "a = 1\n"), ("src/b.py", "b = 2\n")]);
    let lint = fake.lint(&["--stdin-filename", "{path}"]);
    let assessment = assess(&lint, &memory, params(changes, "all"), LONG).await;
    assert_eq!(assessment["status"], "complete", "{assessment:#}");
    assert_eq!(
        findings(&assessment),
        [
            ("fake/seen".into(), "a.py".into(), 0),
            ("fake/seen".into(), "src/b.py".into(), 0)
        ]
    );
    assert_eq!(
        fake.runs(),
        ["--stdin-filename a.py", "--stdin-filename src/b.py"]
    );
    fake.assert_scratch_gone();
}

/// A change that modifies `path` from `before` to `after`.
fn modified(memory: &mut Memory, path: &str, before: &str, after: &str) -> Value {
    json!({
        "path": path,
        "kind": "modify",
        "before": memory.add(before.as_bytes()),
        "after": memory.add(after.as_bytes())
    })
}

#[tokio::test]
async fn files_already_linted_are_not_linted_again_until_their_bytes_or_configuration_change() {
    let fake = Fake::new(EACH_FILE);
    let lint = fake.lint(&["{files}"]);
    let mut memory = Memory::default();
    memory.commit("src/pyproject.toml", b"[tool.ruff]\n");
    memory.commit("lib/ruff.toml", b"line-length = 80\n");
    let a = json!({"path": "src/a.py", "kind": "create", "after": memory.add(b"a = 1\n")});
    let b = json!({"path": "b.py", "kind": "create", "after": memory.add(b"b = 1\n")});
    let first = assess(&lint, &memory, params(json!([a, b]), "all"), LONG).await;
    assert_eq!(findings(&first).len(), 2);
    assert_eq!(fake.runs(), ["src/a.py b.py"]);
    // The same change again: no linter runs, the same answer.
    let again = assess(&lint, &memory, params(json!([a, b]), "all"), LONG).await;
    assert_eq!(fake.runs().len(), 1, "{:?}", fake.runs());
    assert_eq!(again["diagnostics"], first["diagnostics"]);
    // One file's bytes changed: only it is linted.
    let b2 = json!({"path": "b.py", "kind": "create", "after": memory.add(b"b = 2\n")});
    assess(&lint, &memory, params(json!([a, b2]), "all"), LONG).await;
    assert_eq!(fake.runs()[1..], ["b.py"]);
    // A configuration file that does not apply to either changed: nothing is linted.
    let other = modified(&mut memory, "lib/ruff.toml", "line-length = 80\n", "x\n");
    assess(&lint, &memory, params(json!([a, b2, other]), "all"), LONG).await;
    assert_eq!(fake.runs().len(), 2, "{:?}", fake.runs());
    // The one above src/a.py changed in the change: it is linted again, b.py is not.
    let config = modified(&mut memory, "src/pyproject.toml", "[tool.ruff]\n", "[x]\n");
    assess(&lint, &memory, params(json!([a, b2, config]), "all"), LONG).await;
    assert_eq!(fake.runs()[2..], ["src/a.py"]);
    // A configuration file new in the baseline that applies to both: both are linted again.
    memory.commit("pyproject.toml", b"[tool.ruff]\nselect = [\"E\"]\n");
    assess(&lint, &memory, params(json!([a, b2]), "all"), LONG).await;
    assert_eq!(fake.runs()[3..], ["src/a.py b.py"]);
    // The baseline's version of one changed (the tree moved on): what it applies to is re-linted.
    memory.tree.retain(|e| e.path != "src/pyproject.toml");
    memory.commit("src/pyproject.toml", b"[tool.ruff]\nline-length = 100\n");
    assess(&lint, &memory, params(json!([a, b2]), "all"), LONG).await;
    assert_eq!(fake.runs()[4..], ["src/a.py"]);
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn configuration_files_reach_the_scratch_tree_at_their_repository_paths() {
    let fake = Fake::each_file_after(&format!(
        "{LIST_TREE}\ncat src/pkg/ruff.toml > \"$log/ruff\""
    ));
    let mut memory = Memory::default();
    memory.commit("pyproject.toml", b"[tool.ruff]\n");
    memory.commit("src/pkg/ruff.toml", b"old = true\n");
    memory.commit("src/old/pyproject.toml", b"[tool.ruff]\n");
    memory.commit("lib/pyproject.toml", b"[tool.ruff]\n");
    memory.commit("src/pkg/README.md", b"not a configuration file\n");
    let mut changes = created(&mut memory, &[("src/pkg/a.py", "import os\n")]);
    let changes = changes.as_array_mut().unwrap();
    changes.push(modified(
        &mut memory,
        "src/pkg/ruff.toml",
        "old = true\n",
        "new = true\n",
    ));
    let gone = memory.commit("src/pyproject.toml", b"[tool.ruff]\n");
    changes.push(json!({"path": "src/pyproject.toml", "kind": "delete", "before": gone}));
    let assessment = lint_all(&fake, &memory, json!(changes)).await;
    assert_eq!(assessment["status"], "complete", "{assessment:#}");
    // The baseline's on the way to the file, the change's version where it changed one, none
    // that the change deleted, none elsewhere.
    assert_eq!(
        fake.lines("tree"),
        ["./pyproject.toml", "./src/pkg/a.py", "./src/pkg/ruff.toml"]
    );
    assert_eq!(fake.lines("ruff"), ["new = true"]);
    // What the answer is valid for names the configuration files read too, as the host requires.
    let valid: Vec<&str> = assessment["validAsOf"]["blobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    for config in ["pyproject.toml", "src/pkg/ruff.toml"] {
        let bytes: &[u8] = if config == "pyproject.toml" {
            b"[tool.ruff]\n"
        } else {
            b"new = true\n"
        };
        let id = provider_kit::digest::blob_id(bytes);
        assert!(valid.contains(&id.as_str()), "{config}: {valid:?}");
    }
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn a_host_that_cannot_list_configuration_files_still_gets_the_file_linted_and_is_told() {
    let fake = Fake::each_file_after(LIST_TREE);
    let mut memory = Memory::default();
    memory.commit("pyproject.toml", b"[tool.ruff]\n");
    memory.no_list = true;
    let changes = created(&mut memory, &[("a.py", "import os\n")]);
    let assessment = lint_all(&fake, &memory, changes).await;
    assert_eq!(findings(&assessment).len(), 1, "{assessment:#}");
    assert_eq!(
        fake.lines("tree"),
        ["./a.py"],
        "no configuration file was known"
    );
    let said = notes(&assessment).join("\n");
    assert!(
        said.contains("could not all be listed") && said.contains("pyproject.toml"),
        "{said}"
    );
}

#[tokio::test]
async fn a_file_the_globs_do_not_name_is_neither_read_nor_reported() {
    // The fake reports on README.md as well, as if it had found it itself.
    let fake = Fake::new(&EACH_FILE.replace(r#""$@""#, r#""$@" README.md"#));
    let mut memory = Memory::default();
    let changes = created(
        &mut memory,
        &[("README.md", "# readme\n"), ("a.py", "import os\n")],
    );
    let readme = changes[0]["after"].as_str().unwrap().to_owned();
    let assessment = lint_all(&fake, &memory, changes).await;
    assert_eq!(
        findings(&assessment),
        [("fake/seen".into(), "a.py".into(), 0)]
    );
    assert_eq!(fake.runs(), ["a.py"]);
    let asked = memory.asked.lock().unwrap();
    assert!(!asked.iter().flatten().any(|id| *id == readme), "{asked:?}");
    let blobs = assessment["validAsOf"]["blobs"].as_array().unwrap();
    assert!(!blobs.iter().any(|id| *id == readme.as_str()));
}

/// A finding on each line with `BAD`, over the word that starts there; its columns count code
/// points (the bytes that are not UTF-8 continuation bytes before it).
const EACH_BAD: &str = r#"
sep=
printf '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"fake"}},"results":['
for f in "$@"; do
  n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case $line in
      *BAD*)
        prefix=${line%%BAD*}
        rest=${line#"$prefix"}
        word=${rest%% *}
        col=$(( $(printf '%s' "$prefix" | LC_ALL=C tr -d '\200-\277' | wc -c) + 1 ))
        printf '%s{"ruleId":"bad","message":{"text":"BAD is bad"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"%s"},"region":{"startLine":%d,"startColumn":%d,"endColumn":%d}}}]}' "$sep" "$f" "$n" "$col" $((col + ${#word}))
        sep=,
        ;;
    esac
  done < "$f"
done
printf ']}]}\n'
"#;

#[tokio::test]
async fn introduced_findings_are_the_new_ones_not_those_moved_or_on_edited_lines() {
    let fake = Fake::new(EACH_BAD);
    let mut memory = Memory::default();
    let before = "é😀 x = BAD_old\nkeep BAD_edit here\n";
    let after =
        "# an inserted line\né😀 x = BAD_old\nchanged: keep BAD_edit here too\nновый 😀 BAD_new\n";
    let change = modified(&mut memory, "a.py", before, after);
    let lint = fake.lint(&["{files}"]);
    let all = assess(&lint, &memory, params(json!([change]), "all"), LONG).await;
    assert_eq!(
        findings(&all).iter().map(|f| f.2).collect::<Vec<_>>(),
        [1, 2, 3],
        "{all:#}"
    );
    let introduced = assess(&lint, &memory, params(json!([change]), "introduced"), LONG).await;
    assert_eq!(introduced["status"], "complete", "{introduced:#}");
    let diagnostics = introduced["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{introduced:#}");
    assert_eq!(diagnostics[0]["introduced"], true);
    // Code point 8 of `новый 😀 BAD_new` is UTF-16 unit 9: `😀` is two units.
    assert_eq!(
        diagnostics[0]["location"]["range"],
        json!({"start": {"line": 3, "char": 9}, "end": {"line": 3, "char": 16}})
    );
    // Both sides were linted (the before side once, then kept).
    assert_eq!(fake.runs(), ["a.py", "a.py"]);
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn a_missing_program_is_an_error_naming_it() {
    let fake = Fake::new("exit 0");
    let mut linter = fake.linter(&["{files}"]);
    linter.command[0] = fake.path("no-such").join(PROGRAM).display().to_string();
    let mut memory = Memory::default();
    let changes = created(&mut memory, &[("a.py", "import os\n")]);
    let lint = Lint::new(linter).unwrap();
    let assessment = assess(&lint, &memory, params(changes, "all"), LONG).await;
    assert_eq!(assessment["status"], "incomplete", "{assessment:#}");
    let detail = assessment["coverage"]["degraded"][0]["detail"]
        .as_str()
        .unwrap();
    assert!(detail.contains(PROGRAM), "{detail}");
    assert!(detail.contains("could not be started"), "{detail}");
}

#[tokio::test]
async fn a_linter_ended_by_a_signal_is_an_error() {
    let detail = error_of(&Fake::new("kill -KILL $$")).await;
    assert!(detail.contains("was ended by a signal"), "{detail}");
}

#[test]
fn the_end_of_a_long_stderr_is_what_the_log_says() {
    let mut text: String = (0..2000).map(|i| format!("checking file {i}\n")).collect();
    text.push_str("fatal: the real \u{1b}[31mreason\n");
    let said = lint::tail(text.trim());
    assert!(
        said.starts_with('…') && said.ends_with("fatal: the real [31mreason"),
        "{said}"
    );
    assert!(said.chars().count() <= 601, "capped: {said}");
    assert!(!said.chars().any(char::is_control), "filtered: {said:?}");
}

#[tokio::test]
async fn with_path_and_out_a_run_that_wrote_nothing_is_not_read_as_the_one_before() {
    // It writes its log for a.py only, then exits 0 for src/b.py without writing.
    let fake = Fake::new(&format!(
        "out=$2; shift 2\n[ \"$1\" = a.py ] || exit 0\n{{\n{EACH_FILE}}} > \"$out\""
    ));
    let mut memory = Memory::default();
    let changes = created(&mut memory, &[("a.py", "a = 1\n"), ("src/b.py", "b = 2\n")]);
    let lint = fake.lint(&["--output", "{out}", "{path}"]);
    let assessment = assess(&lint, &memory, params(changes, "all"), LONG).await;
    assert_eq!(fake.runs().len(), 2);
    let detail = failure(&assessment, &fake, "error");
    assert!(detail.contains("wrote no readable output"), "{detail}");
}

#[tokio::test]
async fn a_linter_that_closes_its_output_and_hangs_is_killed_at_the_evaluation_deadline() {
    let fake = Fake::new(
        r#"sleep 3
exec >/dev/null 2>&1
sleep 300 & echo $! > "$log/helper"
sleep 300"#,
    );
    let started = Instant::now();
    let assessment = lint_a_file(&fake, &["{files}"], Duration::from_secs(4)).await;
    let elapsed = started.elapsed();
    let detail = failure(&assessment, &fake, "error");
    assert!(detail.contains("did not finish within"), "{detail}");
    // The deadline is the evaluation's, not one more for the wait after the output closed.
    assert!(
        elapsed < Duration::from_secs(6),
        "answered after {elapsed:?}"
    );
    let helper: u32 = fake.lines("helper")[0].parse().unwrap();
    assert!(ends(helper).await, "the helper is still running after 10 s");
}

#[tokio::test]
async fn a_helper_left_holding_the_output_neither_holds_the_answer_nor_outlives_the_run() {
    // A daemon of the linter's that inherits its stdout, as a server a tool starts would.
    let fake = Fake::each_file_after("sleep 300 & echo $! > \"$log/helper\"");
    let started = Instant::now();
    let assessment = lint_a_file(&fake, &["{files}"], Duration::from_secs(10)).await;
    let elapsed = started.elapsed();
    assert_eq!(assessment["status"], "complete", "{assessment:#}");
    assert_eq!(
        findings(&assessment),
        [("fake/seen".into(), "a.py".into(), 0)]
    );
    assert!(
        elapsed < Duration::from_secs(8),
        "answered after {elapsed:?}"
    );
    let helper: u32 = fake.lines("helper")[0].parse().unwrap();
    assert!(ends(helper).await, "the helper is still running after 10 s");
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn a_file_name_that_starts_with_a_dash_is_never_an_option() {
    let fake = Fake::new(EACH_FILE);
    let mut memory = Memory::default();
    let changes = created(
        &mut memory,
        &[("--config=x.py", "a = 1\n"), ("-x/a.py", "b = 1\n")],
    );
    let assessment = lint_all(&fake, &memory, changes).await;
    assert_eq!(fake.runs(), ["./--config=x.py ./-x/a.py"]);
    assert_eq!(
        findings(&assessment),
        [
            ("fake/seen".into(), "--config=x.py".into(), 0),
            ("fake/seen".into(), "-x/a.py".into(), 0)
        ]
    );
}

#[tokio::test]
async fn overlapping_evaluations_take_turns_at_the_linter() {
    // Each run marks itself running for up to 2 s, and says so when it sees another run's mark.
    let fake = Fake::each_file_after(
        r#"touch "$log/running-$$"
i=0
while [ $i -lt 20 ]; do
  if [ "$(ls "$log" | grep -c '^running-')" -gt 1 ]; then echo together >> "$log/seen"; break; fi
  sleep 0.1
  i=$((i+1))
done
rm "$log/running-$$""#,
    );
    let lint = fake.lint(&["{files}"]);
    let mut memory = Memory::default();
    let a = created(&mut memory, &[("a.py", "a = 1\n")]);
    let b = created(&mut memory, &[("b.py", "b = 1\n")]);
    let (first, second) = tokio::join!(
        assess(&lint, &memory, params(a, "all"), LONG),
        assess(&lint, &memory, params(b, "all"), LONG),
    );
    assert_eq!(fake.runs().len(), 2, "{:?}", fake.runs());
    assert_eq!(
        fake.lines("seen"),
        Vec::<String>::new(),
        "one run at a time"
    );
    assert_eq!(findings(&first).len(), 1, "{first:#}");
    assert_eq!(findings(&second).len(), 1, "{second:#}");
}
