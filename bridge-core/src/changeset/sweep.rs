//! The two other bases a changeset can have, for CI sweeps: the merge base of a revision someone
//! names and `HEAD` (a branch against the branch it was based on, its commits included), and the
//! empty tree (every tracked file as it is now, for a sweep of the whole tree).
//!
//! A revision is data, not a command line: it is checked before git sees it (no leading `-`, so no
//! option such as `--output`; no control character; at most [`MAX_REV_BYTES`]), passed after
//! `--end-of-options`, and it must name a commit of the repository.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::git::GITLINK;
use super::{Built, Cache, Entry, Skipped, assemble, lossy};
use crate::error::{Error, Result};

/// Longest revision accepted, in bytes.
pub const MAX_REV_BYTES: usize = 256;

/// What a base revision resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeBase {
    /// The revision as given (`origin/main`, a commit id…).
    pub rev: String,
    /// The commit it names.
    pub commit: String,
    /// The merge base of that commit and `HEAD`.
    pub base: String,
    /// The merge base's tree: the changeset's baseline (`git:tree:<tree>`).
    pub tree: String,
}

/// Checks a revision given by a person or an agent before git sees it: not empty, at most
/// [`MAX_REV_BYTES`], no leading `-` (it would read as an option), no control character.
pub fn check_rev(rev: &str) -> Result<()> {
    let refuse = |why: String| Err(Error::Input(why));
    if rev.trim().is_empty() {
        return refuse("the base revision is empty; name a branch, a tag or a commit".to_owned());
    }
    if rev.len() > MAX_REV_BYTES {
        return refuse(format!(
            "the base revision is {} bytes long; the limit is {MAX_REV_BYTES}",
            rev.len()
        ));
    }
    if rev.starts_with('-') {
        return refuse(format!(
            "the base revision {rev:?} starts with `-`, like an option; name a branch, a tag or a commit"
        ));
    }
    if rev.chars().any(char::is_control) {
        return refuse(format!(
            "the base revision {rev:?} holds a control character"
        ));
    }
    Ok(())
}

/// Resolves `rev` to a commit and finds its merge base with `HEAD`. Every refusal is an `input`
/// error that says what to do.
pub(crate) async fn merge_base(root: &Path, cache: &Cache, rev: &str) -> Result<MergeBase> {
    check_rev(rev)?;
    let git = cache.git(root);
    let spec = format!("{rev}^{{commit}}");
    let commit = match git
        .run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ])
        .await
    {
        Ok(out) => String::from_utf8_lossy(&out).trim().to_owned(),
        Err(Error::Repo(repo_io::Error::Git(_))) => String::new(),
        Err(e) => return Err(e),
    };
    if commit.is_empty() {
        return Err(Error::Input(format!(
            "the base revision {rev:?} names no commit of this repository (in CI, fetch it: \
             actions/checkout needs fetch-depth: 0)"
        )));
    }
    let Some(head) = git.peel("HEAD", "commit").await? else {
        return Err(Error::Input(format!(
            "HEAD names no commit yet, so there is nothing to compare with {rev:?}"
        )));
    };
    let base = match git.run(&["merge-base", &commit, &head]).await {
        Ok(out) => String::from_utf8_lossy(&out).trim().to_owned(),
        Err(Error::Repo(repo_io::Error::Git(_))) => String::new(),
        Err(e) => return Err(e),
    };
    if base.is_empty() {
        return Err(Error::Input(format!(
            "the base revision {rev:?} and HEAD have no common ancestor (in CI, a shallow clone \
             hides it: actions/checkout needs fetch-depth: 0)"
        )));
    }
    let tree = git
        .peel(&base, "tree")
        .await?
        .ok_or_else(|| Error::git(format!("the merge base {base} has no tree")))?;
    Ok(MergeBase {
        rev: rev.to_owned(),
        commit,
        base,
        tree,
    })
}

/// git's empty tree in this repository's object format (`4b825dc…` for SHA-1).
pub(crate) async fn empty_tree(root: &Path, cache: &Cache) -> Result<String> {
    let git = cache.git(root);
    // stdin is empty: the id of an empty tree, computed, not written.
    let out = git.run(&["hash-object", "-t", "tree", "--stdin"]).await?;
    let tree = String::from_utf8_lossy(&out).trim().to_owned();
    if tree.is_empty() || !tree.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::git(format!("unexpected empty tree id {tree:?}")));
    }
    Ok(tree)
}

/// Every tracked file of the working tree at `root` as it is now, each a `create` against
/// `baseline` (the empty tree). Files deleted from the working tree are left out; submodules,
/// FIFOs, sockets and devices are listed as skipped.
pub(crate) async fn build_all(root: &Path, cache: &Cache, baseline: &Value) -> Result<Built> {
    let git = cache.git(root);
    let prefix = cache.prefix(&git).await?;
    let mut entries: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
    let mut skipped = Vec::new();
    for (path, mode) in git.ls_files(&["."]).await? {
        let Some(path) = path.strip_prefix(prefix.as_bytes()) else {
            continue;
        };
        if mode == GITLINK {
            skipped.push(Skipped {
                path: lossy(path),
                why: super::SUBMODULE.to_owned(),
            });
            continue;
        }
        entries.entry(path.to_vec()).or_default().after = true;
    }
    assemble(root, &git, cache, baseline, entries, skipped).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use asp_wire::proto::ChangeKind;
    use serde_json::json;
    use test_support::git::{Repo, rev_parse};
    use test_support::runtime::block_on;

    #[test]
    fn a_revision_that_could_be_an_option_or_a_line_is_refused_before_git_sees_it() {
        for rev in [
            "",
            " ",
            "--output=/tmp/x",
            "-h",
            "--help",
            "main\nHEAD",
            "a\0b",
            &"x".repeat(300),
        ] {
            let err = check_rev(rev).unwrap_err();
            assert_eq!(err.fail_class(), rpc_peer::FailClass::Input, "{rev:?}");
        }
        for rev in ["main", "origin/main", "HEAD~2", "v1.0^{commit}", "abc123"] {
            check_rev(rev).unwrap();
        }
    }

    #[test]
    fn the_merge_base_of_a_branch_and_its_base_is_where_the_branch_started() {
        let repo = Repo::new(&[("a.txt", "one\n")]);
        repo.git(&["branch", "base"]);
        let start = rev_parse(repo.path(), "HEAD");
        repo.write("a.txt", "two\n");
        repo.git(&["commit", "-qam", "on the branch"]);
        // The base branch moves on too: the merge base stays where the branch started.
        repo.git(&["checkout", "-q", "base"]);
        repo.write("b.txt", "later\n");
        repo.git(&["add", "b.txt"]);
        repo.git(&["commit", "-qm", "on the base"]);
        repo.git(&["checkout", "-q", "-"]);
        let found = block_on(merge_base(repo.path(), &Cache::default(), "base")).unwrap();
        assert_eq!(found.base, start);
        assert_eq!(found.commit, rev_parse(repo.path(), "base"));
        assert_eq!(
            found.tree,
            rev_parse(repo.path(), &format!("{start}^{{tree}}"))
        );
    }

    #[test]
    fn an_unknown_revision_or_a_tree_is_an_input_error() {
        let repo = Repo::new(&[("a.txt", "one\n")]);
        let tree = rev_parse(repo.path(), "HEAD^{tree}");
        for rev in ["no-such-branch", tree.as_str(), "HEAD:a.txt"] {
            let err = block_on(merge_base(repo.path(), &Cache::default(), rev)).unwrap_err();
            assert_eq!(err.fail_class(), rpc_peer::FailClass::Input, "{rev}: {err}");
            assert!(err.to_string().contains("names no commit"), "{err}");
        }
    }

    #[test]
    fn every_tracked_file_is_a_create_against_the_empty_tree() {
        let repo = Repo::new(&[("a.txt", "one\n"), ("dir/b.txt", "two\n"), ("c.txt", "c\n")]);
        repo.write("a.txt", "edited\n");
        repo.write("untracked.txt", "not tracked\n");
        std::fs::remove_file(repo.path().join("c.txt")).unwrap();
        let cache = Cache::default();
        let tree = block_on(empty_tree(repo.path(), &cache)).unwrap();
        assert_eq!(tree, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
        let baseline = json!({"rev": format!("git:tree:{tree}")});
        let built = block_on(build_all(repo.path(), &cache, &baseline)).unwrap();
        let got: Vec<_> = built
            .changeset
            .changes
            .iter()
            .map(|c| {
                (
                    c.path.as_str(),
                    c.kind.clone(),
                    c.before.clone(),
                    c.after.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "a.txt",
                    ChangeKind::Create,
                    None,
                    Some(super::super::blob_id(b"edited\n"))
                ),
                (
                    "dir/b.txt",
                    ChangeKind::Create,
                    None,
                    Some(super::super::blob_id(b"two\n"))
                ),
            ],
            "tracked files as they are now; a deleted one and an untracked one are not there"
        );
        assert_eq!(built.changeset.baseline, baseline);
    }
}
