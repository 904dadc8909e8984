//! The workspace's helper binaries (the fake host, the fake provider), found next to the binary
//! under test and built when missing or stale.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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
