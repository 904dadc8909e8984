//! opcore-asp-provider 0.2.1 (a real third-party provider, `asp/0.1`) behind the embedded host, seen
//! through every front end: on a TypeScript repository whose changed `src/index.ts` calls
//! `add(1, "two")` and assigns a number to a string, `sarif` has opcore's TS2345 and TS2322 results on
//! that file (a valid log, for the OASIS schema and Microsoft's SARIF Multitool), `asp_diagnostics`
//! returns them to the Python MCP SDK client, and headless Neovim shows them on the file after it is
//! saved. Needs Node.js 20+ and the bundle in `shared/providers/`, and the client tools of
//! `scripts/test.sh`; each missing piece skips its test loudly, and fails it where `ASP_BRIDGE_REQUIRE_TOOLS` is set.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::external_tool;
use test_support::git::Repo;
use test_support::opcore::{INDEX_TS_CHANGED, Opcore, typescript_repo};
use test_support::process::wait_output;

use crate::embedded::{clean_env, multitool_errors};
use crate::lsp::{find_nvim, neovim};
use crate::mcp::python_driver;
use crate::support::{Scratch, run_bridge_with};

/// Each command evaluates once or twice with a cold TypeScript compiler (a few seconds under load).
const LIMIT: Duration = Duration::from_secs(240);
const TYPE_ERRORS: [&str; 2] = [
    "opcore/typescript.types/2322",
    "opcore/typescript.types/2345",
];

/// `asp-bridge sarif --repo R --config C` with nothing else installed: the log, checked against the
/// OASIS schema and (when at hand) the SARIF Multitool's SARIF and GitHub rules.
/// What a test of opcore runs with: opcore unpacked for `test` ([`Opcore::unpack`]: `None` where it
/// cannot be) and the TypeScript repository (`changed` as [`typescript_repo`] takes it).
fn unpack_with_repo(test: &str, changed: bool) -> Option<(Opcore, Repo)> {
    Some((Opcore::unpack(test)?, typescript_repo(changed)))
}

fn sarif(opcore: &Opcore, root: &Path) -> Value {
    let config = opcore.write_host_toml();
    let outside = Scratch::new();
    let log_path = outside.path().join("opcore.sarif");
    let run = run_bridge_with(
        &[
            "sarif",
            "--repo",
            root.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--output",
            log_path.to_str().unwrap(),
        ],
        root,
        LIMIT,
        |c| clean_env(c, outside.path()),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&log_path).unwrap()).unwrap();
    let errors = sarif_export::schema::errors(&log);
    assert!(errors.is_empty(), "{errors:#?}");
    match multitool_errors(&log_path, outside.path()) {
        Some(errors) => assert!(errors.is_empty(), "Multitool errors: {errors:#?}"),
        None => {
            external_tool("ASP_BRIDGE_SARIF_MULTITOOL", "Microsoft's SARIF Multitool");
        }
    }
    log
}

/// `(ruleId, uri, level)` of every result.
fn results(run: &Value) -> BTreeSet<(String, String, String)> {
    run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let artifact = &r["locations"][0]["physicalLocation"]["artifactLocation"];
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                artifact["uri"].as_str().unwrap().to_owned(),
                r["level"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn sarif_has_opcores_type_errors_on_the_changed_file() {
    const TEST: &str = "sarif_has_opcores_type_errors_on_the_changed_file";
    let Some((opcore, repo)) = unpack_with_repo(TEST, true) else {
        return;
    };
    let log = sarif(&opcore, &repo.root());
    let sarif_run = &log["runs"][0];
    let expected: BTreeSet<(String, String, String)> = TYPE_ERRORS
        .iter()
        .map(|code| ((*code).into(), "src/index.ts".into(), "error".into()))
        .collect();
    assert_eq!(results(sarif_run), expected, "{sarif_run:#}");
    let rules = test_support::strs(&sarif_run["tool"]["driver"]["rules"], "id");
    assert_eq!(rules, TYPE_ERRORS, "opcore's rule ids are the catalogue");
    let coverage = &sarif_run["properties"]["coverage"];
    assert_eq!(coverage["ran"], json!(["opcore"]), "{coverage:#}");
    assert_eq!(sarif_run["properties"]["decision"], "deny");
}

/// A tsconfig error names no file: the result sits on the workspace root, which GitHub's rules
/// accept (a result without a location they refuse).
#[test]
fn sarif_places_opcores_project_level_finding_on_the_workspace_root() {
    const TEST: &str = "sarif_places_opcores_project_level_finding_on_the_workspace_root";
    let Some((opcore, repo)) = unpack_with_repo(TEST, false) else {
        return;
    };
    repo.write(
        "tsconfig.json",
        "{\n  \"compilerOptions\": {\"target\": \"nope\", \"strict\": true},\n  \"include\": [\"src\"]\n}\n",
    );
    // opcore checks the TypeScript files of the changeset, under the changed configuration.
    repo.write("src/index.ts", "export const x = 1;\n");
    let log = sarif(&opcore, &repo.root());
    let sarif_run = &log["runs"][0];
    assert_eq!(
        results(sarif_run),
        BTreeSet::from([(
            "opcore/typescript.types/6046".to_owned(),
            ".".to_owned(),
            "error".to_owned()
        )]),
        "{sarif_run:#}"
    );
    assert_eq!(sarif_run["results"][0]["properties"]["projectLevel"], true);
}

#[test]
fn the_python_mcp_client_gets_opcores_type_errors_from_asp_diagnostics() {
    const TEST: &str = "the_python_mcp_client_gets_opcores_type_errors_from_asp_diagnostics";
    let Some(python) = external_tool("ASP_BRIDGE_PYTHON", "the Python MCP SDK (`mcp` on PyPI)")
    else {
        return;
    };
    let Some((opcore, repo)) = unpack_with_repo(TEST, true) else {
        return;
    };
    let (config, outside) = (opcore.write_host_toml(), Scratch::new());
    let root = repo.root();
    let args = [OsStr::new("--config"), config.as_ref()];
    let stdout = python_driver(
        &python,
        "diagnostics.py",
        &root,
        &args,
        outside.path(),
        LIMIT,
    );
    let body: Value = serde_json::from_slice(&stdout).expect("one JSON document");
    let found: Vec<(&str, &str, &str)> = body["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap(),
                f["path"].as_str().unwrap(),
                f["source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        TYPE_ERRORS.map(|code| (code, "src/index.ts", "opcore")),
        "{body:#}"
    );
    assert_eq!(body["decision"], "deny", "{body:#}");
}

#[test]
fn neovim_shows_opcores_type_errors_after_save() {
    const TEST: &str = "neovim_shows_opcores_type_errors_after_save";
    let Some(nvim) = find_nvim() else {
        external_tool("ASP_BRIDGE_NVIM", "Neovim (`nvim`)");
        return;
    };
    // Committed and unchanged: the type errors only exist once Neovim has saved the new text.
    let Some((opcore, repo)) = unpack_with_repo(TEST, false) else {
        return;
    };
    let (config, outside) = (opcore.write_host_toml(), Scratch::new());
    let root = repo.root();
    let cache = outside.path().join("nvim-cache");
    let config = config.display().to_string();
    let mut command = neovim(&nvim, &root, &["--config", &config], &cache);
    command
        .env("ASP_BRIDGE_LSP_FILE", "src/index.ts")
        .env("ASP_BRIDGE_LSP_WRITE", INDEX_TS_CHANGED)
        .env("ASP_BRIDGE_LSP_WANT", "opcore/")
        .env("ASP_BRIDGE_LSP_WAIT_MS", "120000");
    clean_env(&mut command, outside.path());
    let output = wait_output(command.spawn().expect("spawn nvim"), LIMIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // lnum col end_lnum end_col severity (1 = ERROR) code source: opcore gives no position, so the
    // findings sit at the top of the file. (The bridge's own notices, source asp-bridge, may sit
    // beside them.)
    let mut diagnostics: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("DIAG ") && !l.ends_with(" asp-bridge"))
        .collect();
    diagnostics.sort_unstable();
    assert_eq!(
        diagnostics,
        TYPE_ERRORS.map(|code| format!("DIAG 0 0 0 0 1 {code} opcore")),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("STOPPED true"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(
        std::fs::read_to_string(root.join("src/index.ts")).unwrap(),
        INDEX_TS_CHANGED,
        "Neovim saved the new text"
    );
}
