//! Temporary git repositories: `git` run with a fixed identity and no signing, and a repository
//! with one commit that tests then change.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `git -C dir args…` as a throwaway identity: its stdout; fails the test (with git's stderr)
/// if git does.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    String::from_utf8(output.stdout).expect("git's output is UTF-8 here")
}

/// `git rev-parse rev` in `dir`: the full object id it names; fails the test if git cannot.
pub fn rev_parse(dir: &Path, rev: &str) -> String {
    git(dir, &["rev-parse", "--verify", "--end-of-options", rev])
        .trim()
        .to_owned()
}

/// Adds the repository at `source` (a local path) as a submodule at `path` of the repository in
/// `dir`; git refuses a local source unless told `protocol.file.allow=always`, here for this one
/// command only.
pub fn add_submodule(dir: &Path, source: &Path, path: &str) {
    let source = source.to_str().expect("a UTF-8 path");
    let allow = ["-c", "protocol.file.allow=always"];
    git(
        dir,
        &[&allow[..], &["submodule", "add", "-q", source, path]].concat(),
    );
}

/// A git repository in a temporary directory, removed when dropped.
#[derive(Debug)]
pub struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    /// A repository with one commit (`base`) holding `files` (`(path, text)`, parents created).
    pub fn new(files: &[(&str, &str)]) -> Repo {
        let repo = Repo::init();
        for (path, text) in files {
            repo.write(path, text);
        }
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "--allow-empty", "-m", "base"]);
        repo
    }

    /// A repository with no commit and no file.
    pub fn init() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        repo.git(&["init", "-q"]);
        repo
    }

    /// The directory, as created (not canonical).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The canonical path of the directory.
    pub fn root(&self) -> PathBuf {
        self.path()
            .canonicalize()
            .expect("canonical repository path")
    }

    /// The `file://` URI of `path` (repo-relative) under the canonical root.
    pub fn uri(&self, path: &str) -> String {
        format!("file://{}/{path}", self.root().display())
    }

    /// Writes `text` to `path` (repo-relative), creating its parents.
    pub fn write(&self, path: &str, text: &str) {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().expect("a parent")).expect("create parents");
        std::fs::write(full, text).expect("write a file");
    }

    /// Commits everything in the working tree (`git add -A`, then a commit named `change`).
    pub fn commit(&self) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "change"]);
    }

    /// Runs git in the repository.
    pub fn git(&self, args: &[&str]) {
        git(self.path(), args);
    }
}
