//! What the workspace's tests share, so that no crate keeps its own copy: temporary git repositories
//! ([`git`]), LSP frames and clients ([`lsp`]), NDJSON JSON-RPC clients ([`ndjson`]), child
//! processes waited for with a deadline ([`process`]), the ASP fixtures ([`fixture`]) and schemas
//! ([`schema`]), MCP clients ([`mcp`]), external test tools that skip loudly and are recorded ([`external_tool`], [`skip`]), the
//! opcore bundle and its TypeScript repository ([`opcore`]), the side-by-side comparison with
//! pre-commit-hooks ([`precommit`]), and the path of the scriptable fake host
//! ([`fake_host_bin`], built from `tests/fake_host/`).
//!
//! A dev-dependency only: it depends on no crate of the workspace, so any of them can use it.

pub mod git;
pub mod lsp;
pub mod mcp;
pub mod ndjson;
pub mod opcore;
pub mod precommit;
pub mod process;
pub mod schema;
pub mod skip;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

/// The workspace's root directory.
pub fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace's `tests/fixtures` directory.
pub fn fixtures_dir() -> PathBuf {
    workspace_dir().join("tests/fixtures")
}

/// The `result` of the ASP fixture `name` (relative to `tests/fixtures/asp`).
pub fn fixture(name: &str) -> Value {
    let path = fixtures_dir().join("asp").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut value: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    value["result"].take()
}

/// The string `key` of each element of the JSON array `array`; fails the test on anything else.
pub fn strs<'a>(array: &'a Value, key: &str) -> Vec<&'a str> {
    let elements = array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array:#}"));
    let field = |e: &'a Value| e[key].as_str();
    let strs = elements
        .iter()
        .map(|e| field(e).unwrap_or_else(|| panic!("no {key}: {e:#}")));
    strs.collect()
}

/// A temporary directory holding `files` (`(path, text)`, parents created), and its canonical path:
/// what code that confines paths to a root sees. The directory is removed when the first is dropped.
pub fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path().canonicalize().expect("its canonical path");
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a file in a directory")).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, root)
}

/// The `fake-host` binary of this crate, next to `sibling`, a binary of the same build (e.g. the
/// caller's `CARGO_BIN_EXE_asp-bridge`). `cargo test --workspace` builds it; a narrower run would
/// find it missing or stale, so it is brought up to date here, once per test process, into the same
/// target directory and profile (a no-op when it is fresh).
pub fn fake_host_bin(sibling: &str) -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| workspace_bin("test-support", "fake-host", sibling))
}

/// The `fake-provider` binary (package `fake-provider`, source in `tests/fake_provider/`), found and
/// built like [`fake_host_bin`].
pub fn fake_provider_bin(sibling: &str) -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| workspace_bin("fake-provider", "fake-provider", sibling))
}

/// The binary `name` of the workspace package `package`, next to `sibling`, up to date.
fn workspace_bin(package: &str, name: &str, sibling: &str) -> PathBuf {
    let path = Path::new(sibling).with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    build(package, name, &path);
    path
}

fn build(package: &str, name: &str, path: &Path) {
    let profile_dir = path.parent().expect("a binary in a profile directory");
    let target_dir = profile_dir
        .parent()
        .expect("a profile directory in a target directory");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => "dev",
    };
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", package, "--bin", name])
        .args(["--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|e| panic!("run cargo to build {name}: {e}"));
    assert!(
        status.success() && path.exists(),
        "could not build {}: run `cargo build -p {package} --bin {name}`",
        path.display()
    );
}

/// The path that the environment variable `var` names, or `None` after a recorded skip
/// ([`skip::skip`]; a failure instead where every tool is required).
pub fn external_tool(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            skip::skip(&format!(
                "{var} is not set; install {what} (scripts/test.sh does) to run it"
            ));
            None
        }
    }
}
