//! The workspace's directories, its ASP fixtures, temporary trees of files, and reading JSON arrays.

use std::path::{Path, PathBuf};

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
