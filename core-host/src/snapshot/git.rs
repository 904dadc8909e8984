//! The few git commands the host runs: the `HEAD` tree, a tree listing and blob contents, each
//! through the one runner ([`repo_io::git`]: a deadline, a cap on what is read whole, no program
//! the repository names). Paths are data (`--literal-pathspecs`); nothing here writes to the
//! repository, and none of these commands reads working-tree content.

mod batch;

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) use batch::cat_blobs;

use super::{Blob, TreeEntry, hash_sized, nowait, read_small_text};
use crate::error::{Error, Result};

/// git's empty tree, the baseline of a repository without commits.
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Longest one of these commands may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// The hardened git command for `args` in `repo`; refused during an attempt that cannot wait (a git
/// process always may).
fn command(repo: &Path, args: &[&str]) -> Result<Command> {
    if nowait::active() {
        return Err(Error::io("git", nowait::refuse()));
    }
    Ok(repo_io::git::Git::new(repo, Instant::now() + DEADLINE).command(args))
}

/// Runs `git args` in `repo` within [`DEADLINE`]: its stdout, capped. Blocking.
pub(crate) fn run(repo: &Path, args: &[&str]) -> Result<Vec<u8>> {
    if nowait::active() {
        return Err(Error::io("git", nowait::refuse()));
    }
    Ok(repo_io::git::Git::new(repo, Instant::now() + DEADLINE).run_blocking(args)?)
}

/// The tree `HEAD` names, or the empty tree before the first commit.
pub(crate) fn head_tree(repo: &Path) -> Result<String> {
    match run(repo, &["rev-parse", "--verify", "--quiet", "HEAD^{tree}"]) {
        Ok(out) => {
            let tree = String::from_utf8_lossy(&out).trim().to_owned();
            Ok(if tree.is_empty() {
                EMPTY_TREE.to_owned()
            } else {
                tree
            })
        }
        Err(_) => Ok(EMPTY_TREE.to_owned()),
    }
}

/// `oid` peeled to `kind` (`tree`, `commit`), if the repository has such an object. `oid` must be
/// hexadecimal (checked by the caller), so git cannot read it as an option.
pub(crate) fn peel(repo: &Path, oid: &str, kind: &str) -> Option<String> {
    let spec = format!("{oid}^{{{kind}}}");
    let out = run(repo, &["rev-parse", "--verify", "--quiet", &spec]).ok()?;
    let found = String::from_utf8_lossy(&out).trim().to_owned();
    (!found.is_empty()).then_some(found)
}

/// Every blob entry of `tree` under the workspace (relative to it), submodules left out.
pub(crate) fn list_tree(repo: &Path, tree: &str) -> Result<Vec<TreeEntry>> {
    let out = run(repo, &["ls-tree", "-r", "-z", tree])?;
    let mut entries = Vec::new();
    for record in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let Some(tab) = record.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let head = String::from_utf8_lossy(&record[..tab]);
        let mut fields = head.split(' ');
        let (Some(mode), Some(kind), Some(oid)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if kind != "blob" {
            continue;
        }
        let Ok(path) = std::str::from_utf8(&record[tab + 1..]) else {
            tracing::debug!("baseline path that is not UTF-8 left out of the tree");
            continue;
        };
        entries.push(TreeEntry {
            path: path.to_owned(),
            oid: oid.to_owned(),
            symlink: mode == "120000",
        });
    }
    Ok(entries)
}

/// Whether `oid` is a full git object id (SHA-1 or SHA-256, hexadecimal), so that git can read it
/// neither as an option nor as more than one request.
pub(crate) fn is_object_id(oid: &str) -> bool {
    matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The content of a git blob, hashed as it streams.
pub(crate) fn cat_blob(repo: &Path, oid: &str, deadline: Instant) -> Result<Blob> {
    cat_blobs(repo, &[oid.to_owned()], deadline)?
        .pop()
        .unwrap_or_else(|| Err(Error::git(format!("git cat-file gave no answer for {oid}"))))
}

/// The files that say where `HEAD` points: `HEAD` itself, the ref it names, `packed-refs`.
#[derive(Debug)]
pub(crate) struct HeadWatch {
    git_dir: PathBuf,
    common_dir: PathBuf,
}

/// What those files looked like: `HEAD`'s text and each file's inode, size and modification time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeadStamp {
    head: String,
    files: Vec<Option<(u64, u64, i64, i64)>>,
}

impl HeadWatch {
    pub(crate) fn new(git_dir: PathBuf, common_dir: PathBuf) -> HeadWatch {
        HeadWatch {
            git_dir,
            common_dir,
        }
    }

    /// `None` when `HEAD` cannot be read (then git is always asked).
    pub(crate) fn stamp(&self) -> Option<HeadStamp> {
        let (head, head_file) = read_head(&self.git_dir.join("HEAD"))?;
        let mut paths = vec![self.common_dir.join("packed-refs")];
        if let Some(reference) = head.trim().strip_prefix("ref: ") {
            if reference.split('/').any(|s| s == ".." || s.is_empty()) {
                return None;
            }
            paths.push(self.common_dir.join(reference));
            // A linked worktree may keep some refs of its own; the main one has one directory.
            if self.git_dir != self.common_dir {
                paths.push(self.git_dir.join(reference));
            }
        }
        let files = std::iter::once(Some(head_file))
            .chain(
                paths
                    .iter()
                    .map(|p| nowait::metadata(p).ok().map(|m| file_stamp(&m))),
            )
            .collect();
        Some(HeadStamp { head, files })
    }
}

/// Inode, size and modification time.
fn file_stamp(meta: &std::fs::Metadata) -> (u64, u64, i64, i64) {
    (meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec())
}

/// Longest `HEAD` read (a symbolic ref or an object id is far shorter).
const MAX_HEAD: u64 = 4096;

/// `HEAD`'s text and the stamp of the file it was read from (one open: the stamp is the open
/// file's). `None` unless it is a regular file of at most [`MAX_HEAD`] bytes of UTF-8; opened
/// non-blocking, so that a FIFO put there cannot hold the read.
fn read_head(path: &Path) -> Option<(String, (u64, u64, i64, i64))> {
    let (head, meta) = read_small_text(path, MAX_HEAD).ok()??;
    Some((head, file_stamp(&meta)))
}
