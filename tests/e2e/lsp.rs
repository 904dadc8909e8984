//! End-to-end tests of `asp-bridge lsp`: the real binary against the fake host, driven by a bare
//! LSP client over its stdio and by headless Neovim (the editor users have).

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use test_support::lsp::{frame, frames};
use test_support::process::{wait_exit, wait_output};

use crate::support::{Scratch, bridge, bridge_bin, spawn_bridge};

const LIMIT: Duration = Duration::from_secs(60);

/// Thirteen lines; the fixture's finding is on line 12 (0-based), columns 10 to 42.
pub(crate) fn api_ts() -> String {
    let mut text: String = (0..12).map(|i| format!("// line {i}\n")).collect();
    text.push_str("const k = \"AKIAIOSFODNN7EXAMPLE-secret-literal\";\nexport {};\n");
    text
}

/// Where the host puts the fixture's finding in [`api_ts`]: line 12, columns 10 to 42.
pub(crate) fn assert_at_the_fixture_finding(diagnostic: &Value) {
    let range =
        json!({"start": {"line": 12, "character": 10}, "end": {"line": 12, "character": 42}});
    assert_eq!(diagnostic["range"], range, "{diagnostic:#}");
}

/// A git workspace holding `src/api.ts`, and the fake host's command line (recording into it).
fn workspace() -> (Scratch, String) {
    let scratch = Scratch::git_repo();
    std::fs::create_dir_all(scratch.path().join("src")).unwrap();
    std::fs::write(scratch.path().join("src/api.ts"), api_ts()).unwrap();
    let host = scratch.fake_host("");
    (scratch, host)
}

/// The next message satisfying `wanted`.
fn next(frames: &mpsc::Receiver<Value>, wanted: impl Fn(&Value) -> bool) -> Value {
    loop {
        let message = frames.recv_timeout(LIMIT).expect("the server went silent");
        if wanted(&message) {
            return message;
        }
    }
}

/// `asp-bridge lsp` against `host`, initialized by a bare client: the process, its stdin and the
/// frames it writes.
fn start(scratch: &Scratch, host: &str) -> (Child, ChildStdin, mpsc::Receiver<Value>) {
    let args = ["lsp", "--debounce-ms", "0", "--host-command", host];
    let (child, mut stdin, stdout) = spawn_bridge(args, scratch.path());
    let frames = frames(stdout);
    initialize(&mut stdin, &frames, scratch.path());
    (child, stdin, frames)
}

/// Writes one framed message.
fn send(stdin: &mut impl Write, message: Value) {
    stdin.write_all(&frame(&message)).unwrap();
}

fn initialize(stdin: &mut impl Write, frames: &mpsc::Receiver<Value>, root: &Path) {
    let uri = format!("file://{}", root.canonicalize().unwrap().display());
    let params = json!({"processId": null, "rootUri": uri, "capabilities": {}});
    send(
        stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
    );
    next(frames, |m| m["id"] == 1);
    send(
        stdin,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
}

/// `shutdown` then `exit`: the server must end with status 0 (stdin stays open until it has).
fn shut_down(child: Child, mut stdin: ChildStdin, frames: &mpsc::Receiver<Value>) {
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    );
    next(frames, |m| m["id"] == 2);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(child, LIMIT), Some(0));
    drop(stdin);
}

#[test]
fn a_bare_client_gets_the_finding_and_exit_ends_the_server_with_stdin_still_open() {
    let (scratch, host) = workspace();
    let (child, mut stdin, frames) = start(&scratch, &host);
    let uri = format!(
        "file://{}/src/api.ts",
        scratch.path().canonicalize().unwrap().display()
    );
    let open = json!({"textDocument": {"uri": uri, "languageId": "typescript", "version": 1, "text": api_ts()}});
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": open}),
    );
    let published = next(&frames, |m| {
        m["method"] == "textDocument/publishDiagnostics"
    });
    let diagnostic = &published["params"]["diagnostics"][0];
    assert_eq!(published["params"]["version"], 1);
    assert_at_the_fixture_finding(diagnostic);
    assert_eq!(diagnostic["severity"], 1);
    assert_eq!(diagnostic["code"], "lattice/secrets");
    assert_eq!(diagnostic["source"], "lattice");

    shut_down(child, stdin, &frames);
    scratch.assert_no_orphans();
    let methods: Vec<Value> = scratch
        .recorded()
        .iter()
        .map(|r| r["method"].clone())
        .collect();
    assert_eq!(
        methods.last(),
        Some(&json!("shutdown")),
        "the host was shut down: {methods:?}"
    );
    assert!(
        methods.iter().all(|m| m != "host/applyProposal"),
        "the bridge never applies anything"
    );
}

#[test]
fn exit_without_shutdown_ends_with_status_1_and_no_orphan() {
    let (scratch, host) = workspace();
    let (child, mut stdin, _frames) = start(&scratch, &host);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(child, LIMIT), Some(1));
    drop(stdin);
    scratch.assert_no_orphans();
}

#[test]
fn stdin_closed_before_initialize_ends_with_status_1_and_says_nothing() {
    let (scratch, host) = workspace();
    let child = bridge(["lsp", "--host-command", &host], scratch.path())
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn asp-bridge lsp");
    let output = wait_output(child, LIMIT);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Only the line that names the host (printed at start by every command).
    assert_eq!(stdout, "");
    assert!(
        stderr.lines().count() == 1 && stderr.starts_with("asp-bridge uses the host given by"),
        "{stderr}"
    );
    assert!(!scratch.marker().exists(), "no host was started");
    scratch.assert_no_orphans();
}

#[test]
fn with_the_embedded_host_a_root_outside_git_is_shown_as_an_input_failure_at_once() {
    let scratch = Scratch::new();
    let config = scratch.path().join("host.toml");
    std::fs::write(&config, "[hygiene]\nenabled = true\n").unwrap();
    let config = config.to_str().unwrap();
    let args = ["lsp", "--host-command", "embedded", "--config", config];
    let (child, mut stdin, stdout) = spawn_bridge(args, scratch.path());
    let frames = frames(stdout);
    initialize(&mut stdin, &frames, scratch.path());
    let shown = next(&frames, |m| m["method"] == "window/showMessage");
    let text = shown["params"]["message"].as_str().unwrap();
    assert!(
        text.contains("did not run (input)") && text.contains("is not inside a git repository"),
        "{text}"
    );
    shut_down(child, stdin, &frames);
    scratch.assert_no_orphans();
}

/// Headless Neovim (Debian's `neovim`; 0.7 and later) opens `src/api.ts` with `asp-bridge lsp` as
/// its language server and must see the fake host's finding as an error at the same place.
#[test]
fn neovim_shows_the_hosts_finding_and_stops_the_server_and_host() {
    let Some(nvim) = nvim_or_skip() else { return };
    let (scratch, host) = workspace();
    let cache = scratch.path().join(".nvim-cache");
    let child = neovim(&nvim, scratch.path(), &["--host-command", &host], &cache)
        .env("ASP_BRIDGE_LSP_FILE", "src/api.ts")
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .spawn()
        .expect("spawn nvim");
    let output = wait_output(child, LIMIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let diagnostics: Vec<&str> = stdout.lines().filter(|l| l.starts_with("DIAG ")).collect();
    // lnum col end_lnum end_col severity (1 = ERROR) code source
    assert_eq!(
        diagnostics,
        ["DIAG 12 10 12 42 1 lattice/secrets lattice"],
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("STOPPED true"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    scratch.assert_no_orphans();
    let evaluate = scratch.first_received("host/evaluateChangeset");
    assert_eq!(evaluate["params"]["callSite"], "interactive");
    assert_eq!(scratch.recorded().last().unwrap()["method"], "shutdown");
}

/// Headless Neovim in `dir` running `tests/e2e/lsp/diagnostics.lua`: it starts `asp-bridge lsp`
/// with `flags` as the language server, opens the file `ASP_BRIDGE_LSP_FILE` (set by the caller)
/// and prints what it shows (`DIAG …` lines); stdout and stderr piped, its state in `cache`.
pub(crate) fn neovim(nvim: &Path, dir: &Path, flags: &[&str], cache: &Path) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/lsp/diagnostics.lua");
    let mut server = vec![bridge_bin().to_owned(), "lsp".to_owned()];
    server.extend(
        ["--debounce-ms", "0"]
            .iter()
            .chain(flags)
            .map(|f| f.to_string()),
    );
    let mut command = Command::new(nvim);
    command
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .current_dir(dir)
        .env("ASP_BRIDGE_LSP_CMD", json!(server).to_string())
        .env("XDG_CACHE_HOME", cache)
        .env("XDG_STATE_HOME", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// [`find_nvim`], or `None` after a recorded skip (`test_support::skip`).
pub(crate) fn nvim_or_skip() -> Option<std::path::PathBuf> {
    let nvim = find_nvim();
    if nvim.is_none() {
        test_support::skip::skip(
            "`nvim` is not installed (scripts/test.sh installs Debian's neovim)",
        );
    }
    nvim
}

/// `nvim` from `ASP_BRIDGE_NVIM` or the `PATH`.
pub(crate) fn find_nvim() -> Option<std::path::PathBuf> {
    if let Some(path) = std::env::var_os("ASP_BRIDGE_NVIM") {
        return Some(path.into());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nvim"))
            .find(|candidate| candidate.is_file())
    })
}

/// The README's `init.lua` for Neovim 0.7, as it stands there (the `lua` block after the line
/// that introduces it).
fn readme_neovim_0_7_snippet() -> String {
    crate::support::readme_block("Neovim 0.7 (what Debian 12 installs)", "lua")
}

/// Headless Neovim with the README's 0.7 `init.lua` verbatim (`asp-bridge` found on `PATH`, the
/// embedded host, nothing else installed) opens a broken YAML file and shows the hygiene finding.
#[test]
fn the_readmes_neovim_0_7_init_lua_shows_a_yaml_finding() {
    let Some(nvim) = nvim_or_skip() else { return };
    let scratch = Scratch::git_repo();
    let root = scratch.path();
    std::fs::create_dir_all(root.join("config")).unwrap();
    std::fs::write(root.join("config/app.yaml"), "name: demo\n").unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "config"]);
    std::fs::write(root.join("config/app.yaml"), "name: demo\nlist: [1, 2\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let init = home.path().join("init.lua");
    std::fs::write(&init, readme_neovim_0_7_snippet()).unwrap();
    let driver =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/lsp/wait_for_diagnostics.lua");
    let bin_dir = Path::new(bridge_bin()).parent().unwrap();
    let child = Command::new(&nvim)
        .args(["--headless", "-n", "-i", "NONE", "-u"])
        .arg(&init)
        .arg("-c")
        .arg(format!("luafile {}", driver.display()))
        .arg("config/app.yaml")
        .current_dir(root)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("XDG_CACHE_HOME", home.path())
        .env("XDG_STATE_HOME", home.path())
        .env("XDG_DATA_HOME", home.path())
        .env_remove("ASP_BRIDGE_HOST_COMMAND")
        .env_remove("ASP_BRIDGE_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nvim");
    let output = wait_output(child, LIMIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("CLIENTS 1"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    let yaml: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("DIAG ") && l.contains("hygiene/yaml-syntax"))
        .collect();
    assert_eq!(yaml.len(), 1, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    scratch.assert_no_orphans();
}
