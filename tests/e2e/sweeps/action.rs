//! The composite action at the repository root (`action.yml`): its shell steps run here as a runner
//! would run them (`bash -eo pipefail`, inputs through `env`, `GITHUB_PATH` and `GITHUB_OUTPUT`
//! files), against a local bare repository standing in for GitHub: a shallow checkout of the pull
//! request's branch is deepened and evaluated against its base commit; a push is swept whole. The
//! install step installs the package pinned to the workspace version, through stand-ins for `pipx`
//! and `cargo` (they record their arguments and "install" the binary under test), and for real with
//! pip from the wheel `scripts/package.sh` built, when there is one.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Map, Value};
use test_support::git::{git, rev_parse};
use test_support::process::wait_output;

use super::{Sweep, errors, set};
use crate::embedded::clean_env;
use crate::support::{Scratch, bridge_bin};

/// `action.yml` as JSON: mappings, sequences and scalars (all strings).
fn yaml(text: &str) -> Value {
    use saphyr_parser::{Event, Parser};
    let mut stack: Vec<(Value, Option<String>)> = Vec::new();
    let mut root = Value::Null;
    for event in Parser::new_from_str(text) {
        let (event, _) = event.expect("action.yml is YAML");
        let value = match event {
            Event::MappingStart(..) => {
                stack.push((Value::Object(Map::new()), None));
                continue;
            }
            Event::SequenceStart(..) => {
                stack.push((Value::Array(Vec::new()), None));
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => stack.pop().expect("an open node").0,
            Event::Scalar(text, ..) => Value::String(text.into_owned()),
            _ => continue,
        };
        match stack.last_mut() {
            None => root = value,
            Some((Value::Array(items), _)) => items.push(value),
            Some((Value::Object(map), key)) => match key.take() {
                Some(key) => {
                    map.insert(key, value);
                }
                None => *key = Some(value.as_str().expect("a scalar key").to_owned()),
            },
            Some(_) => unreachable!("only mappings and sequences are pushed"),
        }
    }
    root
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The runner's side: its temporary directory, the files steps write to, stand-ins for `cargo` and
/// `pipx`, and what else its environment holds.
struct Runner {
    dir: Scratch,
    env: Vec<(String, String)>,
}

impl Runner {
    fn new() -> Runner {
        let dir = Scratch::new();
        for sub in ["temp", "tools", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let tool = |name: &str, script: &str| {
            let file = dir.path().join("tools").join(name);
            std::fs::write(&file, script).unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        tool(
            "cargo",
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$CARGO_LOG\"\nroot=\n\
             while [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n\
             mkdir -p \"$root/bin\" && cp \"$BRIDGE\" \"$root/bin/asp-bridge\"\n",
        );
        // pipx puts its venvs in PIPX_HOME and links the package's commands into PIPX_BIN_DIR.
        tool(
            "pipx",
            "#!/bin/sh\nprintf '%s | %s | %s\\n' \"$*\" \"$PIPX_HOME\" \"$PIPX_BIN_DIR\" >> \"$PIPX_LOG\"\n\
             mkdir -p \"$PIPX_BIN_DIR\" && cp \"$BRIDGE\" \"$PIPX_BIN_DIR/asp-bridge\"\n",
        );
        for file in ["path", "output", "cargo.log", "pipx.log"] {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        Runner {
            dir,
            env: Vec::new(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    /// Runs one step's script in `cwd` with the step's `env` keys set from `inputs` (every key must
    /// have a value: a script reading a variable its step does not define would fail on GitHub),
    /// `PATH` and the action's directory as given.
    /// The action's install step run from the repository root with `install: package` and
    /// `version`, on `path`.
    fn install_package(&self, install: &Value, version: &str, path: &str) -> (i32, String) {
        let inputs = [
            ("SWEEP_INSTALL", "package"),
            ("SWEEP_VERSION", version),
            ("SWEEP_SOURCE", ""),
        ];
        let action_path = repository_root();
        self.step(install, &action_path, &inputs, path, &action_path)
    }

    fn step(
        &self,
        step: &Value,
        cwd: &Path,
        inputs: &[(&str, &str)],
        path: &str,
        action_path: &Path,
    ) -> (i32, String) {
        assert_eq!(step["shell"], "bash", "{step:#}");
        let script = step["run"].as_str().expect("a run step");
        assert!(
            !script.contains("${{"),
            "inputs reach the script through env, never pasted into it: {script}"
        );
        let keys: BTreeSet<&str> = step["env"]
            .as_object()
            .map(|env| env.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let given: BTreeSet<&str> = inputs.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, given, "the step's env");
        let file = self.path("step.sh");
        std::fs::write(&file, script).unwrap();
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(cwd);
        clean_env(&mut command, &self.path("home"));
        command
            .env("PATH", path)
            .env("RUNNER_TEMP", self.path("temp"))
            .env("GITHUB_PATH", self.path("path"))
            .env("GITHUB_OUTPUT", self.path("output"))
            .env("GITHUB_ACTION_PATH", action_path)
            .env("CARGO_LOG", self.path("cargo.log"))
            .env("PIPX_LOG", self.path("pipx.log"))
            .env("BRIDGE", bridge_bin());
        for (key, value) in &self.env {
            command.env(key, value);
        }
        for (key, value) in inputs {
            command.env(key, value);
        }
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = command.spawn().expect("run bash");
        // pip builds a venv and installs a 5 MB wheel in seconds; a debug build sweeps in seconds.
        let output = wait_output(child, Duration::from_secs(300));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code().unwrap_or(-1), said)
    }
}

#[test]
fn the_composite_action_installs_evaluates_a_pull_request_or_a_push_and_uploads() {
    let action = yaml(&std::fs::read_to_string(repository_root().join("action.yml")).unwrap());
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["Install asp-bridge", "Evaluate", "Upload to code scanning"]
    );
    let (install, sweep_step, upload) = (&steps[0], &steps[1], &steps[2]);
    assert_eq!(upload["uses"], "github/codeql-action/upload-sarif@v3");
    assert_eq!(
        upload["with"]["sarif_file"],
        "${{ steps.sweep.outputs.sarif }}"
    );
    assert_eq!(sweep_step["id"], "sweep");
    assert_eq!(
        action["inputs"]["base"]["default"],
        "${{ github.event.pull_request.base.sha }}"
    );

    // GitHub: a remote whose `main` is the base and whose `topic` is the pull request's branch.
    let sweep = Sweep::new();
    let base = rev_parse(&sweep.repo, "main");
    let clone = |args: &[&str]| git(sweep.outside.path(), &[&["clone", "-q"], args].concat());
    let remote = sweep.outside.path().join("remote.git");
    clone(&["--bare", sweep.repo.to_str().unwrap(), "remote.git"]);
    let runner = Runner::new();
    let system = format!("{}:/usr/bin:/bin", runner.path("tools").display());

    // Install: the package by default, pinned to this workspace's version, through pipx.
    assert_eq!(action["inputs"]["install"]["default"], "package");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(action["inputs"]["version"]["default"], version);
    let action_path = repository_root();
    let install_package = |version: &str| runner.install_package(install, version, &system);
    let (code, said) = install_package(version);
    assert_eq!(code, 0, "{said}");
    let root = runner.path("temp").join("asp-bridge");
    assert_eq!(
        runner.read("pipx.log"),
        format!(
            "install asp-bridge=={version} | {0}/pipx | {0}/bin\n",
            root.display()
        )
    );
    assert_eq!(runner.read("cargo.log"), "", "nothing is compiled");
    assert_eq!(runner.read("path"), format!("{}/bin\n", root.display()));
    assert!(said.contains(&format!("asp-bridge {version}")), "{said}");
    // A version is a release, never an option or a requirement of pip's own.
    for bad in [
        "",
        "--index-url=https://evil.invalid",
        "0.1 ; rm",
        "latest",
        "1.0 -e .",
    ] {
        let (code, said) = install_package(bad);
        assert_eq!(code, 1, "{bad}: {said}");
        assert!(said.contains("::error::version"), "{said}");
    }
    assert_eq!(runner.read("pipx.log").lines().count(), 1);
    std::fs::write(runner.path("path"), "").unwrap();

    // The fallback, `install: source`: from the action's own checkout, else from `source`, never
    // from an option.
    // The install step run from the action's checkout in `action_path`, with the input `source`.
    let install_from = |action_path: &Path, source: &str| {
        let inputs = [
            ("SWEEP_INSTALL", "source"),
            ("SWEEP_VERSION", version),
            ("SWEEP_SOURCE", source),
        ];
        runner.step(install, action_path, &inputs, &system, action_path)
    };
    let (code, said) = install_from(&action_path, "");
    assert_eq!(code, 0, "{said}");
    assert_eq!(
        runner.read("cargo.log"),
        format!(
            "install --locked --quiet --root {} --path {}/asp-bridge\n",
            root.display(),
            repository_root().display()
        )
    );
    assert_eq!(runner.read("path"), format!("{}/bin\n", root.display()));
    let copied = runner.path("copied");
    std::fs::create_dir_all(&copied).unwrap();
    let (code, said) = install_from(&copied, "https://example.invalid/asp-bridge.git");
    assert_eq!(code, 0, "{said}");
    assert!(
        runner
            .read("cargo.log")
            .ends_with("--git https://example.invalid/asp-bridge.git asp-bridge\n"),
        "{}",
        runner.read("cargo.log")
    );
    for source in ["", "--config=evil"] {
        let (code, said) = install_from(&copied, source);
        assert_eq!(code, 1, "{said}");
        assert!(said.contains("::error::"), "{said}");
    }
    let inputs = [
        ("SWEEP_INSTALL", "--source"),
        ("SWEEP_VERSION", version),
        ("SWEEP_SOURCE", ""),
    ];
    let (code, said) = runner.step(install, &action_path, &inputs, &system, &action_path);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("::error::install must be"), "{said}");

    // The pull request: actions/checkout's default shallow clone of the branch.
    let workspace = sweep.outside.path().join("workspace");
    let remote = format!("file://{}", remote.display());
    clone(&[
        "--depth",
        "1",
        "--branch",
        "topic",
        &remote,
        workspace.to_str().unwrap(),
    ]);
    let installed = format!("{}/bin:/usr/bin:/bin", root.display());
    let sarif = runner.path("temp").join("asp-bridge.sarif");
    let (repo, log_path) = (workspace.to_str().unwrap(), sarif.to_str().unwrap());
    let inputs = |base| {
        [
            ("SWEEP_BASE", base),
            ("SWEEP_ALL_FILES", "false"),
            ("SWEEP_COMPARISON", "all"),
            ("SWEEP_REPO", repo),
            ("SWEEP_SARIF", log_path),
        ]
    };
    let (code, said) = runner.step(
        sweep_step,
        &workspace,
        &inputs(&base),
        &installed,
        &action_path,
    );
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("asp-bridge: sarif: wrote"), "{said}");
    assert_eq!(
        git(&workspace, &["rev-parse", "--is-shallow-repository"]).trim(),
        "false",
        "deepened to reach the merge base"
    );
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(
        errors(&log),
        set(&[
            ("hygiene/merge-conflict", "src/main.rs", 2),
            ("hygiene/private-key", "deploy/id_rsa", 1),
        ])
    );
    assert_eq!(
        runner.read("output"),
        format!("sarif={}\n", sarif.display())
    );

    // A push to the default branch: no base, every tracked file.
    std::fs::remove_file(&sarif).unwrap();
    let (code, said) = runner.step(
        sweep_step,
        &workspace,
        &inputs(""),
        &installed,
        &action_path,
    );
    assert_eq!(code, 0, "{said}");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert!(
        errors(&log).contains(&("hygiene/merge-conflict".into(), "old.txt".into(), 2)),
        "{log:#}"
    );

    // A base that is an option never reaches git.
    let pwned = runner.path("pwned");
    let evil = format!("--upload-pack=touch {}", pwned.display());
    let (code, said) = runner.step(
        sweep_step,
        &workspace,
        &inputs(&evil),
        &installed,
        &action_path,
    );
    assert_eq!(code, 1, "{said}");
    assert!(!pwned.exists());
    sweep.scratch.assert_no_orphans();
}

/// The install step for real where pipx is missing: pip, in a venv of its own, installs the wheel
/// `scripts/package.sh` built (found through pip's own `PIP_FIND_LINKS`, no index: a stand-in for
/// PyPI), pinned to the workspace version; a version that is not published fails the step before
/// anything reaches `GITHUB_PATH`.
#[test]
fn without_pipx_the_action_installs_the_pinned_wheel_with_pip_in_a_venv() {
    let version = env!("CARGO_PKG_VERSION");
    let dist = std::env::var_os("ASP_BRIDGE_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join("target/package"));
    let wheels = dist.join("wheels");
    let prefix = format!("asp_bridge-{version}-");
    let built = std::fs::read_dir(&wheels)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(&prefix));
    if !built {
        test_support::skip::skip(&format!(
            "no asp-bridge {version} wheel in {} (scripts/package.sh builds it; ASP_BRIDGE_DIST names another folder)",
            wheels.display()
        ));
        return;
    }
    let Some(python) = test_support::external_tool("ASP_BRIDGE_PYTHON", "Python 3 with venv")
    else {
        return;
    };
    let action = yaml(&std::fs::read_to_string(repository_root().join("action.yml")).unwrap());
    let install = &action["runs"]["steps"][0];
    let mut runner = Runner::new();
    // A runner without pipx: bash, python3, mkdir and ln are all the step finds on PATH.
    let bin = runner.path("no-pipx");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("python3"),
        format!("#!/bin/sh\nexec '{python}' \"$@\"\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(bin.join("python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
    for tool in ["bash", "mkdir", "ln"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .expect("coreutils");
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    runner.env = vec![
        ("PIP_NO_INDEX".into(), "1".into()),
        ("PIP_FIND_LINKS".into(), wheels.display().to_string()),
    ];
    let path = bin.display().to_string();
    let install_package = |version: &str| runner.install_package(install, version, &path);

    let (code, said) = install_package("999.0.0");
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("999.0.0"), "{said}");
    assert_eq!(runner.read("path"), "", "nothing reached GITHUB_PATH");

    let (code, said) = install_package(version);
    assert_eq!(code, 0, "{said}");
    let root = runner.path("temp").join("asp-bridge");
    assert_eq!(runner.read("path"), format!("{}/bin\n", root.display()));
    assert!(said.contains(&format!("asp-bridge {version}")), "{said}");
    assert_eq!(
        std::fs::read_link(root.join("bin/asp-bridge")).unwrap(),
        root.join("venv/bin/asp-bridge"),
        "the package's command, installed by pip"
    );
    let output = Command::new(root.join("bin/asp-bridge"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("asp-bridge {version}")
    );
    assert_eq!(runner.read("cargo.log"), "", "nothing is compiled");
}
