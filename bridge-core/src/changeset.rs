//! ChangeSets from a git working tree against the host's baseline.
//!
//! Before-content comes from git: the baseline's tree when its `rev` names a git tree or commit,
//! otherwise `HEAD` (or the empty tree in a repository without commits). After-content is the file on
//! disk. Blob ids are `blob:sha256:<hex of the raw bytes>`. The outer seam has no blob upload, so only
//! content on disk can be evaluated. Nothing here writes to the repository.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::proto::{Change, ChangeKind, ChangeSet};

/// git's empty tree, the base of a repository without commits.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The ASP blob id of some bytes.
pub fn blob_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut id = String::with_capacity(12 + 64);
    id.push_str("blob:sha256:");
    for byte in digest {
        id.push_str(&format!("{byte:02x}"));
    }
    id
}

/// The changes of the working tree of `repo` against `baseline`, limited to `paths` when given
/// (repo-relative, already confined by the caller). Blocking: run it off the async executor.
pub fn from_working_tree(
    repo: &Path,
    baseline: &Value,
    paths: Option<&[String]>,
) -> Result<ChangeSet> {
    let rev = baseline
        .get("rev")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let base = base_tree(repo, rev)?;
    // `--relative`: paths relative to `repo` even when it is a subdirectory of the repository.
    let mut diff_args = vec![
        "diff",
        "--relative",
        "--name-status",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        &base,
        "--",
    ];
    let mut ls_args = vec!["ls-files", "--others", "--exclude-standard", "-z", "--"];
    if let Some(paths) = paths {
        diff_args.extend(paths.iter().map(String::as_str));
        ls_args.extend(paths.iter().map(String::as_str));
    }
    let diff = git(repo, &diff_args)?;
    let untracked = git(repo, &ls_args)?;

    let mut changes = Vec::new();
    let mut fields = diff.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let path = String::from_utf8_lossy(path).into_owned();
        let change = match status.first() {
            Some(b'A') => create(repo, path)?,
            Some(b'D') => Change {
                before: Some(base_blob(repo, &base, &path)?),
                ..change(path, ChangeKind::Delete)
            },
            Some(_) => {
                let before = base_blob(repo, &base, &path)?;
                let after = disk_blob(repo, &path)?;
                Change {
                    before: Some(before),
                    after: Some(after),
                    ..change(path, ChangeKind::Modify)
                }
            }
            None => continue,
        };
        changes.push(change);
    }
    for path in untracked.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        changes.push(create(repo, String::from_utf8_lossy(path).into_owned())?);
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ChangeSet {
        baseline: baseline.clone(),
        changes,
    })
}

fn change(path: String, kind: ChangeKind) -> Change {
    Change {
        path,
        kind,
        from: None,
        before: None,
        after: None,
    }
}

fn create(repo: &Path, path: String) -> Result<Change> {
    let after = disk_blob(repo, &path)?;
    Ok(Change {
        after: Some(after),
        ..change(path, ChangeKind::Create)
    })
}

/// The git tree the baseline names, else `HEAD`, else the empty tree.
fn base_tree(repo: &Path, rev: &str) -> Result<String> {
    let named = ["git:tree:", "git:commit:", "git:", "tree:", "commit:"]
        .iter()
        .find_map(|prefix| rev.strip_prefix(prefix))
        .unwrap_or(rev);
    let looks_like_object =
        !named.is_empty() && named.len() <= 64 && named.bytes().all(|b| b.is_ascii_hexdigit());
    for candidate in [looks_like_object.then_some(named), Some("HEAD")]
        .into_iter()
        .flatten()
    {
        if let Ok(tree) = git(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{candidate}^{{tree}}"),
            ],
        ) {
            let tree = String::from_utf8_lossy(&tree).trim().to_owned();
            if !tree.is_empty() {
                return Ok(tree);
            }
        }
    }
    // Not a repository at all is an input error; a repository without commits diffs against nothing.
    git(repo, &["rev-parse", "--git-dir"])?;
    Ok(EMPTY_TREE.to_owned())
}

fn base_blob(repo: &Path, tree: &str, path: &str) -> Result<String> {
    // `./`: the path is relative to `repo`, which may be a subdirectory of the repository.
    Ok(blob_id(&git(
        repo,
        &["cat-file", "blob", &format!("{tree}:./{path}")],
    )?))
}

fn disk_blob(repo: &Path, path: &str) -> Result<String> {
    let full = repo.join(path);
    let bytes =
        std::fs::read(&full).map_err(|e| Error::io(format!("reading {}", full.display()), e))?;
    Ok(blob_id(&bytes))
}

fn git(repo: &Path, args: &[&str]) -> Result<Vec<u8>> {
    // Paths are data, never pathspec magic or globs.
    let output = Command::new("git")
        .arg("--literal-pathspecs")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Git(format!("cannot run git: {e}")))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(Error::Git(format!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            stderr.trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sh(repo: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("kept.txt"), "same\n").unwrap();
        std::fs::write(dir.path().join("edited.txt"), "old\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        sh(dir.path(), &["add", "."]);
        sh(dir.path(), &["commit", "-q", "-m", "base"]);
        dir
    }

    #[test]
    fn blob_ids_are_sha256_of_raw_bytes() {
        assert_eq!(
            blob_id(b""),
            "blob:sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn working_tree_changes_against_head() {
        let dir = repo();
        std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
        std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
        std::fs::write(dir.path().join("fresh ü.txt"), "hi\n").unwrap();
        let baseline = json!({"rev": "tree:not-a-git-object"});
        let set = from_working_tree(dir.path(), &baseline, None).unwrap();
        assert_eq!(
            set.baseline, baseline,
            "the baseline is echoed as the host issued it"
        );
        let summary: Vec<_> = set
            .changes
            .iter()
            .map(|c| (c.path.as_str(), c.kind.clone()))
            .collect();
        assert_eq!(
            summary,
            [
                ("edited.txt", ChangeKind::Modify),
                ("fresh ü.txt", ChangeKind::Create),
                ("gone.txt", ChangeKind::Delete)
            ]
        );
        let edited = &set.changes[0];
        assert_eq!(edited.before.as_deref(), Some(blob_id(b"old\n").as_str()));
        assert_eq!(edited.after.as_deref(), Some(blob_id(b"new\n").as_str()));
        assert_eq!(
            set.changes[2].before.as_deref(),
            Some(blob_id(b"bye\n").as_str())
        );
        assert_eq!(set.changes[2].after, None);
    }

    #[test]
    fn a_baseline_naming_a_commit_is_used_as_the_base() {
        let dir = repo();
        let head = git(dir.path(), &["rev-parse", "HEAD"]).unwrap();
        let head = String::from_utf8(head).unwrap().trim().to_owned();
        std::fs::write(dir.path().join("edited.txt"), "v2\n").unwrap();
        sh(dir.path(), &["commit", "-q", "-am", "second"]);
        let set =
            from_working_tree(dir.path(), &json!({"rev": format!("git:{head}")}), None).unwrap();
        assert_eq!(
            set.changes.len(),
            1,
            "committed change since the baseline commit is included"
        );
        assert_eq!(
            set.changes[0].before.as_deref(),
            Some(blob_id(b"old\n").as_str())
        );
    }

    #[test]
    fn paths_limit_the_changeset_and_nothing_changed_is_empty() {
        let dir = repo();
        std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
        let only = ["kept.txt".to_owned()];
        let set = from_working_tree(dir.path(), &json!({"rev": "x"}), Some(&only)).unwrap();
        assert!(set.changes.is_empty());
    }

    #[test]
    fn a_workspace_in_a_subdirectory_gets_paths_relative_to_it() {
        let dir = repo();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/inner.txt"), "one\n").unwrap();
        sh(dir.path(), &["add", "."]);
        sh(dir.path(), &["commit", "-q", "-m", "sub"]);
        std::fs::write(dir.path().join("sub/inner.txt"), "two\n").unwrap();
        std::fs::write(dir.path().join("sub/new.txt"), "n\n").unwrap();
        let set = from_working_tree(&dir.path().join("sub"), &json!({"rev": "x"}), None).unwrap();
        let paths: Vec<_> = set.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["inner.txt", "new.txt"]);
        assert_eq!(
            set.changes[0].before.as_deref(),
            Some(blob_id(b"one\n").as_str())
        );
    }

    #[test]
    fn paths_are_literal_not_globs() {
        let dir = repo();
        std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
        let glob = ["*.txt".to_owned()];
        let set = from_working_tree(dir.path(), &json!({"rev": "x"}), Some(&glob)).unwrap();
        assert!(
            set.changes.is_empty(),
            "`*.txt` names a file called `*.txt`, not every text file"
        );
    }

    #[test]
    fn outside_a_repository_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = from_working_tree(dir.path(), &json!({"rev": "x"}), None).unwrap_err();
        assert_eq!(err.fail_class(), crate::FailClass::Input);
    }
}
