//! The git commands a changeset needs, each through the one runner ([`repo_io::git`]: a deadline, a
//! cap on what is read whole, no program the repository names).
//!
//! One `git status --porcelain=v2` per evaluation lists every change with its modes and the
//! before-blob ids at `HEAD` (a base other than `HEAD` adds one `git diff-index`). Lookups that do not
//! change between evaluations (the workspace's place in the repository, what the baseline names, the
//! filter overrides, the submodules of a commit) are cached by the caller. Before-content is streamed
//! through `git cat-file --batch` into the hash. Submodules are compared by their commit only
//! (`--ignore-submodules=dirty`), so git starts no git of its own inside them.

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::error::{Error, Result};
use repo_io::git::Filters;

/// git's all-zero id: no object on that side.
const ZERO: &str = "0000000000000000000000000000000000000000";

/// Runs git in one directory, counting the processes it starts.
#[derive(Debug)]
pub(crate) struct Git<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) deadline: Instant,
    pub(crate) runs: &'a AtomicU64,
    /// The filter overrides, once known (status and diff-index look them up otherwise).
    pub(crate) filters: Option<&'a Filters>,
}

/// One side of a tracked change: its git mode and object id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Object {
    pub(crate) mode: u32,
    pub(crate) oid: String,
}

/// A tracked path that differs between the base and the working tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tracked {
    /// Repository-relative (from the top level), as git printed it.
    pub(crate) path: Vec<u8>,
    /// In the base, if there.
    pub(crate) before: Option<Object>,
    /// The working tree's mode; `None` when the path is gone from it.
    pub(crate) after_mode: Option<u32>,
}

/// What `git status` said.
#[derive(Debug, Default)]
pub(crate) struct Status {
    /// The commit `HEAD` points at; `None` before the first commit.
    pub(crate) head: Option<String>,
    /// Changes against `HEAD`.
    pub(crate) tracked: Vec<Tracked>,
    /// Untracked files (directories end with `/`: nested repositories).
    pub(crate) untracked: Vec<Vec<u8>>,
}

pub(crate) const GITLINK: u32 = 0o160000;

impl Git<'_> {
    /// The one runner, for this directory and deadline.
    pub(crate) fn runner(&self) -> repo_io::git::Git<'_> {
        repo_io::git::Git {
            dir: self.dir,
            deadline: self.deadline,
            runs: Some(self.runs),
            filters: self.filters,
        }
    }

    /// Runs `git args` and returns its stdout (at most [`repo_io::git::MAX_LISTING`] bytes).
    pub(crate) async fn run(&self, args: &[&str]) -> Result<Vec<u8>> {
        Ok(self.runner().run(args).await?)
    }

    /// The working tree's changes against `HEAD` under `pathspecs`, untracked files included.
    pub(crate) async fn status(&self, pathspecs: &[&str]) -> Result<Status> {
        let mut args = vec![
            "status",
            "--porcelain=v2",
            "-z",
            "--branch",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=dirty",
            "--",
        ];
        args.extend_from_slice(pathspecs);
        parse_status(&self.run(&args).await?)
    }

    /// The tracked changes between the tree-ish `base` and the working tree under `pathspecs`.
    pub(crate) async fn diff_index(&self, base: &str, pathspecs: &[&str]) -> Result<Vec<Tracked>> {
        let mut args = vec![
            "diff-index",
            "--raw",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=dirty",
            base,
            "--",
        ];
        args.extend_from_slice(pathspecs);
        parse_diff_index(&self.run(&args).await?)
    }

    /// Every path of the index under `pathspecs` (repository-relative), with its mode; a path in
    /// conflict is listed once.
    pub(crate) async fn ls_files(&self, pathspecs: &[&str]) -> Result<Vec<(Vec<u8>, u32)>> {
        let mut args = vec!["ls-files", "-z", "--stage", "--full-name", "--"];
        args.extend_from_slice(pathspecs);
        parse_ls_files(&self.run(&args).await?)
    }

    /// `rev`'s object id peeled to `kind` (`commit`, `tree`), if it names one.
    pub(crate) async fn peel(&self, rev: &str, kind: &str) -> Result<Option<String>> {
        let spec = format!("{rev}^{{{kind}}}");
        match self.run(&["rev-parse", "--verify", "--quiet", &spec]).await {
            Ok(out) => {
                Ok(Some(String::from_utf8_lossy(&out).trim().to_owned())
                    .filter(|oid| !oid.is_empty()))
            }
            Err(Error::Repo(repo_io::Error::Git(_))) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The ASP blob ids (sha256 of the raw bytes) of these blobs, streamed through one
    /// `git cat-file --batch`, in order.
    pub(crate) async fn blob_ids(&self, oids: &[String]) -> Result<Vec<String>> {
        let runner = self.runner();
        let mut command = Command::from(runner.command(&["cat-file", "--batch"]));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        runner.count();
        let mut child = command
            .spawn()
            .map_err(|e| Error::git(format!("cannot run git cat-file: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let input: Vec<u8> = oids
            .iter()
            .flat_map(|o| [o.as_bytes(), b"\n"])
            .flatten()
            .copied()
            .collect();
        let feed = async move {
            // A write error means git stopped early: reading its output says why.
            let _ = stdin.write_all(&input).await;
        };
        let read = async {
            let mut reader = BufReader::new(stdout);
            let mut ids = Vec::with_capacity(oids.len());
            for oid in oids {
                ids.push(read_blob(&mut reader, oid).await?);
            }
            Ok::<_, Error>(ids)
        };
        let both = async { tokio::join!(feed, read).1 };
        let ids = tokio::time::timeout_at(self.deadline.into(), both)
            .await
            .map_err(|_| Error::git("git cat-file did not finish in time"))??;
        let _ = child.wait().await;
        Ok(ids)
    }
}

/// Reads one `--batch` answer for `oid` and hashes its content as it streams.
async fn read_blob<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    oid: &str,
) -> Result<String> {
    let broken = |why: &str| Error::git(format!("git cat-file {why} for {oid}"));
    let mut header = Vec::new();
    (&mut *reader)
        .take(256)
        .read_until(b'\n', &mut header)
        .await
        .map_err(|e| broken(&e.to_string()))?;
    let header = String::from_utf8_lossy(&header);
    let mut fields = header.split_whitespace();
    let (Some(_), Some(kind), Some(size)) = (fields.next(), fields.next(), fields.next()) else {
        return Err(broken(&format!("answered {:?}", header.trim())));
    };
    let size: u64 = size.parse().map_err(|_| broken("gave no size"))?;
    if kind != "blob" {
        return Err(broken(&format!("found a {kind}")));
    }
    let mut hasher = Sha256::new();
    let mut left = size;
    let mut chunk = vec![0u8; 64 * 1024];
    while left > 0 {
        let want = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = reader
            .read(&mut chunk[..want])
            .await
            .map_err(|e| broken(&e.to_string()))?;
        if n == 0 {
            return Err(broken("ended early"));
        }
        hasher.update(&chunk[..n]);
        left -= n as u64;
    }
    let mut newline = [0u8; 1];
    reader
        .read_exact(&mut newline)
        .await
        .map_err(|e| broken(&e.to_string()))?;
    Ok(super::blob_id_of_digest(&hasher.finalize()))
}

fn mode(field: &str) -> Result<u32> {
    u32::from_str_radix(field, 8).map_err(|_| Error::git(format!("unexpected mode {field:?}")))
}

fn side(mode_field: &str, oid: &str) -> Result<Option<Object>> {
    let mode = mode(mode_field)?;
    Ok((mode != 0 && oid != ZERO).then(|| Object {
        mode,
        oid: oid.to_owned(),
    }))
}

fn malformed(what: &str) -> Error {
    Error::git(format!("unexpected git output: {what}"))
}

/// Parses `git status --porcelain=v2 -z --branch`.
pub(crate) fn parse_status(out: &[u8]) -> Result<Status> {
    let mut status = Status::default();
    let mut records = out.split(|&b| b == 0).filter(|r| !r.is_empty());
    while let Some(record) = records.next() {
        let text = |r: &[u8]| String::from_utf8_lossy(r).into_owned();
        match record.first() {
            Some(b'#') => {
                if let Some(oid) = record.strip_prefix(b"# branch.oid ") {
                    let oid = text(oid);
                    status.head = (oid != "(initial)").then_some(oid);
                }
            }
            Some(b'?') => status
                .untracked
                .push(record.get(2..).unwrap_or_default().to_vec()),
            Some(b'!') => {}
            // `1 XY sub mH mI mW hH hI path`
            Some(b'1') => {
                let fields: Vec<&[u8]> = record.splitn(9, |&b| b == b' ').collect();
                let [_, _, _, m_head, _, m_work, h_head, _, path] = fields[..] else {
                    return Err(malformed(&text(record)));
                };
                status
                    .tracked
                    .push(tracked(path, &text(m_head), &text(h_head), &text(m_work))?);
            }
            // `2 XY sub mH mI mW hH hI Xscore path` then the original path (renames, copies).
            Some(b'2') => {
                let fields: Vec<&[u8]> = record.splitn(10, |&b| b == b' ').collect();
                let [_, _, _, m_head, _, m_work, h_head, _, _, path] = fields[..] else {
                    return Err(malformed(&text(record)));
                };
                status
                    .tracked
                    .push(tracked(path, &text(m_head), &text(h_head), &text(m_work))?);
                let original = records
                    .next()
                    .ok_or_else(|| malformed("a rename without its source"))?;
                status
                    .tracked
                    .push(tracked(original, &text(m_head), &text(h_head), "000000")?);
            }
            // `u XY sub m1 m2 m3 mW h1 h2 h3 path`: stage 2 is ours, the side `HEAD` has.
            Some(b'u') => {
                let fields: Vec<&[u8]> = record.splitn(11, |&b| b == b' ').collect();
                let [_, _, _, _, m_ours, _, m_work, _, h_ours, _, path] = fields[..] else {
                    return Err(malformed(&text(record)));
                };
                status
                    .tracked
                    .push(tracked(path, &text(m_ours), &text(h_ours), &text(m_work))?);
            }
            _ => return Err(malformed(&text(record))),
        }
    }
    Ok(status)
}

fn tracked(path: &[u8], m_before: &str, h_before: &str, m_work: &str) -> Result<Tracked> {
    let after_mode = mode(m_work)?;
    Ok(Tracked {
        path: path.to_vec(),
        before: side(m_before, h_before)?,
        after_mode: (after_mode != 0).then_some(after_mode),
    })
}

/// Parses `git diff-index --raw -z`: `:srcmode dstmode srcoid dstoid status` then the path.
pub(crate) fn parse_diff_index(out: &[u8]) -> Result<Vec<Tracked>> {
    let mut changes = Vec::new();
    let mut records = out.split(|&b| b == 0).filter(|r| !r.is_empty());
    while let Some(record) = records.next() {
        let text = String::from_utf8_lossy(record);
        let fields: Vec<&str> = text.trim_start_matches(':').split(' ').collect();
        let [m_before, m_work, h_before, _, _] = fields[..] else {
            return Err(malformed(&text));
        };
        let path = records
            .next()
            .ok_or_else(|| malformed("a change without its path"))?;
        changes.push(tracked(path, m_before, h_before, m_work)?);
    }
    Ok(changes)
}

/// Parses `git ls-files -z --stage`: `mode oid stage\tpath`.
pub(crate) fn parse_ls_files(out: &[u8]) -> Result<Vec<(Vec<u8>, u32)>> {
    let mut files: Vec<(Vec<u8>, u32)> = Vec::new();
    for record in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let tab = record
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| malformed(&String::from_utf8_lossy(record)))?;
        let head = String::from_utf8_lossy(&record[..tab]);
        let Some(mode_field) = head.split(' ').next() else {
            return Err(malformed(&head));
        };
        let path = record[tab + 1..].to_vec();
        // The stages of a conflicted path come one after the other.
        if files.last().is_some_and(|(last, _)| *last == path) {
            continue;
        }
        files.push((path, mode(mode_field)?));
    }
    Ok(files)
}

/// The gitlinks of `git ls-tree -r -z` (`mode type oid\tpath`), repository-relative.
pub(crate) fn parse_gitlinks(out: &[u8]) -> Vec<Vec<u8>> {
    out.split(|&b| b == 0)
        .filter_map(|record| {
            let tab = record.iter().position(|&b| b == b'\t')?;
            let mode = record[..tab].split(|&b| b == b' ').next()?;
            (mode == b"160000").then(|| record[tab + 1..].to_vec())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lists_modes_and_before_ids() {
        let head = "1111111111111111111111111111111111111111";
        let out = format!(
            "# branch.oid {head}\0# branch.head main\0\
             1 .M N... 100644 100644 100644 {head} {head} a b.txt\0\
             1 .M SC.. 160000 160000 160000 {head} {head} sub\0\
             1 D. N... 100644 000000 000000 {head} {ZERO} gone\0\
             1 A. N... 000000 100644 100644 {ZERO} {head} staged\0\
             ? new file\0? nested/\0"
        );
        let status = parse_status(out.as_bytes()).unwrap();
        assert_eq!(status.head.as_deref(), Some(head));
        let object = |mode| {
            Some(Object {
                mode,
                oid: head.to_owned(),
            })
        };
        assert_eq!(
            status.tracked,
            [
                Tracked {
                    path: b"a b.txt".to_vec(),
                    before: object(0o100644),
                    after_mode: Some(0o100644)
                },
                Tracked {
                    path: b"sub".to_vec(),
                    before: object(GITLINK),
                    after_mode: Some(GITLINK)
                },
                Tracked {
                    path: b"gone".to_vec(),
                    before: object(0o100644),
                    after_mode: None
                },
                Tracked {
                    path: b"staged".to_vec(),
                    before: None,
                    after_mode: Some(0o100644)
                },
            ]
        );
        assert_eq!(
            status.untracked,
            [b"new file".to_vec(), b"nested/".to_vec()]
        );
    }

    #[test]
    fn ls_files_lists_each_path_once_with_its_mode() {
        let oid = "1111111111111111111111111111111111111111";
        let out = format!(
            "100644 {oid} 0\ta b.txt\0160000 {oid} 0\tsub\0\
             100644 {oid} 1\tboth\0100644 {oid} 2\tboth\0100644 {oid} 3\tboth\0"
        );
        assert_eq!(
            parse_ls_files(out.as_bytes()).unwrap(),
            [
                (b"a b.txt".to_vec(), 0o100644),
                (b"sub".to_vec(), GITLINK),
                (b"both".to_vec(), 0o100644)
            ]
        );
        assert!(parse_ls_files(b"100644 no tab\0").is_err());
    }

    #[test]
    fn a_repository_without_commits_has_no_head() {
        let status = parse_status(b"# branch.oid (initial)\0# branch.head main\0").unwrap();
        assert_eq!(status.head, None);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for out in [
            &b"1 short"[..],
            b"2 .R N... 1 2",
            b"u x",
            b"zzz",
            b":100644 100644\0p\0",
        ] {
            assert!(
                parse_status(out).is_err() || parse_diff_index(out).is_err(),
                "{out:?}"
            );
        }
    }
}
