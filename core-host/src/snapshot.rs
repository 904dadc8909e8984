//! The workspace as the host sees it: the git baseline, working-tree reads and baseline blobs.
//!
//! The baseline is `git:tree:<HEAD^{tree}>` with the time it was stamped, restamped when `HEAD`
//! moves. A changeset may name another git tree or commit of the repository as its baseline (a
//! pull request's merge base, the empty tree of a full sweep): it is verified, not trusted.
//! Workspace content is hostile: files are read without following symlinks (a symlink is the blob
//! of its target bytes, as git stores it), only regular files are read, every read is capped, and
//! nothing here waits on an async thread: callers use [`hop`], which tries the work there with
//! reads that never wait, else on the blocking pool. Blob ids are
//! `blob:sha256:<hex of the raw bytes>`.

mod git;
mod intake;
pub(crate) mod nowait;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) use intake::{Intake, ScopedBlob, intake};
pub(crate) use nowait::hop;

use crate::error::{Error, Result};
use crate::json;

/// Largest blob whose bytes are kept and served, in bytes; larger ones are hashed, not served.
pub(crate) const MAX_BLOB: usize = 8 << 20;

/// A host-issued baseline.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Baseline {
    /// The git tree id it names.
    pub(crate) tree: String,
    /// `{rev, stampedAt}` as sent on both seams.
    pub(crate) value: Value,
}

impl Baseline {
    pub(crate) fn rev(&self) -> &str {
        self.value["rev"].as_str().unwrap_or_default()
    }

    /// Whether it names git's empty tree (the baseline of an all-files sweep).
    pub(crate) fn is_empty_tree(&self) -> bool {
        self.tree == git::EMPTY_TREE
    }
}

/// Some bytes and their id; `bytes` is `None` past [`MAX_BLOB`].
#[derive(Clone, Debug)]
pub(crate) struct Blob {
    pub(crate) id: String,
    pub(crate) bytes: Option<Arc<Vec<u8>>>,
    /// Read from a symbolic link of the working tree (the bytes are its target path).
    pub(crate) link: bool,
}

/// One file of the baseline tree.
#[derive(Clone, Debug)]
pub(crate) struct TreeEntry {
    pub(crate) path: String,
    pub(crate) oid: String,
    pub(crate) symlink: bool,
}

/// Every file of a baseline tree, found by path or by git object id without a scan.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    entries: Vec<TreeEntry>,
    by_path: HashMap<String, usize>,
    by_oid: HashMap<String, usize>,
}

impl Tree {
    fn new(entries: Vec<TreeEntry>) -> Tree {
        let by_path = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.clone(), i))
            .collect();
        let mut by_oid = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            by_oid.entry(e.oid.clone()).or_insert(i);
        }
        Tree {
            entries,
            by_path,
            by_oid,
        }
    }

    /// The entry at `path`.
    pub(crate) fn get(&self, path: &str) -> Option<&TreeEntry> {
        self.by_path.get(path).map(|&i| &self.entries[i])
    }

    /// An entry whose content is the git object `oid` (the first listed).
    pub(crate) fn with_oid(&self, oid: &str) -> Option<&TreeEntry> {
        self.by_oid.get(oid).map(|&i| &self.entries[i])
    }
}

impl std::ops::Deref for Tree {
    type Target = [TreeEntry];

    fn deref(&self) -> &[TreeEntry] {
        &self.entries
    }
}

/// The workspace root and what the host knows of its git state.
pub(crate) struct Workspace {
    root: PathBuf,
    /// What `HEAD` looked like when the baseline was last checked (to skip git when unchanged).
    head: Mutex<(git::HeadWatch, Option<git::HeadStamp>)>,
    baseline: Mutex<Baseline>,
    /// Baselines other than the host's own that changesets named, verified: rev → tree id.
    named: Mutex<HashMap<String, String>>,
    trees: Mutex<HashMap<String, Arc<Tree>>>,
    /// git object id → ASP blob id, and back.
    ids: Mutex<(HashMap<String, String>, HashMap<String, String>)>,
    /// Baseline blobs by git object id (immutable), up to [`BLOB_CACHE_BYTES`] of content.
    blobs: Mutex<(HashMap<String, Blob>, usize)>,
}

/// Bytes of baseline content kept between requests.
const BLOB_CACHE_BYTES: usize = 64 << 20;
/// Longest a git read of one baseline blob may take.
const GIT_DEADLINE: Duration = Duration::from_secs(30);

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .finish()
    }
}

impl Workspace {
    /// Opens `root`, which must be inside a git repository. Blocking.
    pub(crate) fn open(root: &Path) -> Result<Workspace> {
        let (git_dir, common) = git_dirs(root)?;
        let head = git::HeadWatch::new(git_dir, common);
        let stamp_now = head.stamp();
        let tree = git::head_tree(root)?;
        Ok(Workspace {
            head: Mutex::new((head, stamp_now)),
            root: root.to_path_buf(),
            baseline: Mutex::new(stamp(tree)),
            named: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
            ids: Mutex::new((HashMap::new(), HashMap::new())),
            blobs: Mutex::new((HashMap::new(), 0)),
        })
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The last baseline issued, without asking git.
    pub(crate) fn baseline(&self) -> Baseline {
        rpc_peer::lock(&self.baseline).clone()
    }

    /// The baseline now: restamped when `HEAD`'s tree moved. The bool says whether it moved. Blocking.
    pub(crate) fn refresh(&self) -> Result<(Baseline, bool)> {
        {
            let mut head = nowait::lock(&self.head).map_err(|e| Error::io("HEAD", e))?;
            let now = head.0.stamp();
            if now.is_some() && now == head.1 {
                return Ok((self.baseline(), false));
            }
            // What moved is asked of git, which an attempt never starts: the stamp is kept as it
            // was, so that the blocking run sees the move too.
            if nowait::active() {
                return Err(Error::io("HEAD", nowait::refuse()));
            }
            head.1 = now;
        }
        let tree = git::head_tree(&self.root)?;
        let mut current = rpc_peer::lock(&self.baseline);
        if current.tree == tree {
            return Ok((current.clone(), false));
        }
        *current = stamp(tree);
        tracing::info!(rev = current.rev(), "HEAD moved; baseline restamped");
        Ok((current.clone(), true))
    }

    /// The baseline a changeset names: the host's own (`own`), or any git tree or commit of the
    /// repository named by its full id (`git:tree:<id>`, `git:commit:<id>`, e.g. the merge base of a
    /// pull request, or the empty tree of an all-files sweep). It is verified with git, never
    /// trusted: the object must exist and be of that kind. `Err` is why it is refused, naming the
    /// host's own baseline (a `stale-baseline` reason). Blocking.
    pub(crate) fn named_baseline(&self, own: &Baseline, named: &Value) -> Result<Baseline, String> {
        let rev = named["rev"].as_str().unwrap_or_default();
        if rev == own.rev() {
            return Ok(own.clone());
        }
        let refuse = |why: &str| {
            Err(format!(
                "the changeset names baseline {:?}, {why}; the host's baseline is {:?}",
                asp_wire::text::one_line(rev, 120),
                own.rev()
            ))
        };
        let (kind, oid) = match (
            rev.strip_prefix("git:tree:"),
            rev.strip_prefix("git:commit:"),
        ) {
            (Some(oid), _) => ("tree", oid),
            (_, Some(oid)) => ("commit", oid),
            _ => {
                return refuse(
                    "which names no git tree or commit (git:tree:<id>, git:commit:<id>)",
                );
            }
        };
        let full = matches!(oid.len(), 40 | 64)
            && oid
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !full {
            return refuse("which is not a full git object id");
        }
        if let Some(tree) = rpc_peer::lock(&self.named).get(rev) {
            return Ok(Baseline {
                tree: tree.clone(),
                value: named.clone(),
            });
        }
        let is_kind = git::peel(&self.root, oid, kind).is_some_and(|found| found == oid);
        let tree = if is_kind {
            git::peel(&self.root, oid, "tree")
        } else {
            None
        };
        let Some(tree) = tree else {
            return refuse(&format!("which is no git {kind} of this repository"));
        };
        let mut cache = rpc_peer::lock(&self.named);
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(rev.to_owned(), tree.clone());
        Ok(Baseline {
            tree,
            value: named.clone(),
        })
    }

    /// The bytes at `path` in the working tree ([`read_no_follow_until`]), given up (`TimedOut`)
    /// once `deadline` passes. Blocking.
    pub(crate) fn read_worktree_until(
        &self,
        path: &str,
        deadline: Instant,
    ) -> std::io::Result<Blob> {
        read_no_follow_until(&self.root, path, Some(deadline))
    }

    /// Every file of a baseline tree (cached per tree). Blocking.
    pub(crate) fn tree(&self, tree: &str) -> Result<Arc<Tree>> {
        if let Some(entries) = self.trees.lock().ok().and_then(|t| t.get(tree).cloned()) {
            return Ok(entries);
        }
        let entries = Arc::new(Tree::new(git::list_tree(&self.root, tree)?));
        if let Ok(mut trees) = self.trees.lock() {
            if trees.len() > 4 {
                trees.clear();
            }
            trees.insert(tree.to_owned(), entries.clone());
        }
        Ok(entries)
    }

    /// The entry at `path` in a baseline tree. Blocking.
    pub(crate) fn tree_entry(&self, tree: &str, path: &str) -> Result<Option<TreeEntry>> {
        Ok(self.tree(tree)?.get(path).cloned())
    }

    /// The blob of a git object (its bytes when within the cap). Blocking.
    pub(crate) fn git_blob(&self, oid: &str) -> Result<Blob> {
        if let Some(blob) = self.blobs.lock().ok().and_then(|b| b.0.get(oid).cloned()) {
            return Ok(blob);
        }
        let blob = git::cat_blob(&self.root, oid, Instant::now() + GIT_DEADLINE)?;
        self.keep(oid, &blob);
        Ok(blob)
    }

    /// The blobs of many git objects (each as [`Workspace::git_blob`] gives it, the error as
    /// text); those not cached are read by one git process, which must finish by `deadline`.
    /// Blocking.
    pub(crate) fn git_blobs(
        &self,
        oids: &[&str],
        deadline: Instant,
    ) -> HashMap<String, Result<Blob, String>> {
        let mut found = HashMap::with_capacity(oids.len());
        let mut wanted = Vec::new();
        {
            let cache = rpc_peer::lock(&self.blobs);
            for oid in oids {
                match cache.0.get(*oid) {
                    Some(blob) => {
                        found.insert((*oid).to_owned(), Ok(blob.clone()));
                    }
                    None => wanted.push((*oid).to_owned()),
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        match git::cat_blobs(&self.root, &wanted, deadline) {
            Ok(blobs) => {
                for (oid, blob) in wanted.into_iter().zip(blobs) {
                    let blob = blob.map_err(|e| e.to_string());
                    if let Ok(blob) = &blob {
                        self.keep(&oid, blob);
                    }
                    found.insert(oid, blob);
                }
            }
            Err(e) => {
                let why = e.to_string();
                for oid in wanted {
                    found.insert(oid, Err(why.clone()));
                }
            }
        }
        found
    }

    /// Remembers a git object's blob: its id always, its bytes while the cache has room.
    fn keep(&self, oid: &str, blob: &Blob) {
        self.remember(oid, &blob.id);
        if let (Ok(mut cache), Some(bytes)) = (self.blobs.lock(), &blob.bytes) {
            if cache.1 + bytes.len() > BLOB_CACHE_BYTES {
                *cache = (HashMap::new(), 0);
            }
            cache.1 += bytes.len();
            cache.0.insert(oid.to_owned(), blob.clone());
        }
    }

    /// The ASP blob id of a git object, hashing it on first use. Blocking.
    pub(crate) fn blob_id_of(&self, oid: &str) -> Result<String> {
        if let Some(id) = self.ids.lock().ok().and_then(|ids| ids.0.get(oid).cloned()) {
            return Ok(id);
        }
        Ok(self.git_blob(oid)?.id)
    }

    /// The git object whose ASP blob id is `id`, if the host has hashed it.
    pub(crate) fn oid_of(&self, id: &str) -> Option<String> {
        self.ids.lock().ok().and_then(|ids| ids.1.get(id).cloned())
    }

    fn remember(&self, oid: &str, id: &str) {
        if let Ok(mut ids) = self.ids.lock() {
            if ids.0.len() > 200_000 {
                ids.0.clear();
                ids.1.clear();
            }
            ids.0.insert(oid.to_owned(), id.to_owned());
            ids.1.insert(id.to_owned(), oid.to_owned());
        }
    }
}

/// The git directory and the common directory of the repository `root` is in; an `input` error
/// when it is in none. Blocking.
pub(crate) fn git_dirs(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let dirs = git::run(
        root,
        &["rev-parse", "--absolute-git-dir", "--git-common-dir"],
    )
    .map_err(|e| {
        Error::input(format!(
            "{} is not inside a git repository ({e})",
            root.display()
        ))
    })?;
    let dirs = String::from_utf8_lossy(&dirs).into_owned();
    let mut lines = dirs.lines();
    let git_dir = PathBuf::from(lines.next().unwrap_or_default());
    let common = lines.next().map_or_else(
        || git_dir.clone(),
        |c| {
            let c = PathBuf::from(c);
            if c.is_absolute() { c } else { root.join(c) }
        },
    );
    Ok((git_dir, common))
}

fn stamp(tree: String) -> Baseline {
    Baseline {
        value: json!({"rev": format!("git:tree:{tree}"), "stampedAt": json::now_rfc3339()}),
        tree,
    }
}

/// Whether `path` is a plain relative path: no root, no `..`, no `.`, no empty segment, no NUL or
/// backslash.
pub(crate) fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['\0', '\\'])
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

/// A small text file read whole, with the metadata of the file read (one open): opened
/// non-blocking, so that a FIFO put at `path` cannot hold the open, and refused unless it is a
/// regular file. `Ok(None)` when it is larger than `max` bytes. Blocking.
pub(crate) fn read_small_text(
    path: &Path,
    max: u64,
) -> std::io::Result<Option<(String, std::fs::Metadata)>> {
    use std::io::Read as _;
    let file = nowait::open(path, libc::O_NONBLOCK)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > max {
        return Ok(None);
    }
    let mut text = String::with_capacity(usize::try_from(meta.len()).unwrap_or_default() + 1);
    nowait::Reader::new(file)
        .take(max + 1)
        .read_to_string(&mut text)?;
    Ok((text.len() as u64 <= max).then_some((text, meta)))
}

/// [`read_no_follow_until`] with no deadline.
#[cfg(test)]
pub(crate) fn read_no_follow(root: &Path, path: &str) -> std::io::Result<Blob> {
    read_no_follow_until(root, path, None)
}

/// Reads `root/path` without following any symlink: every directory on the way must be a real
/// directory; a final symlink gives its target bytes; anything but a regular file or a symlink is
/// refused; the bytes are hashed as they stream and kept up to [`MAX_BLOB`]; a read fails
/// (`TimedOut`) once `deadline` passes.
fn read_no_follow_until(
    root: &Path,
    path: &str,
    deadline: Option<Instant>,
) -> std::io::Result<Blob> {
    use std::io::{Error as IoError, ErrorKind};
    if !is_plain_relative(path) {
        return Err(IoError::new(
            ErrorKind::InvalidInput,
            "not a plain relative path",
        ));
    }
    // One system call that refuses a symlink anywhere on the way; when it fails for any reason (a
    // symlink on the path or in the root, an older kernel, not Linux, a missing file …) the path
    // is walked here, which also reads a final symlink and names what it refused. An attempt that
    // cannot open the file at once leaves the walk to the blocking run.
    match nowait::open_no_symlinks(&root.join(path), libc::O_NOFOLLOW | libc::O_NONBLOCK) {
        Ok(file) => return hash_file(file, deadline),
        Err(e) if nowait::active() => return Err(e),
        Err(_) => {}
    }
    let relative = Path::new(path);
    let mut at = root.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        let Component::Normal(name) = component else {
            return Err(IoError::new(
                ErrorKind::InvalidInput,
                "not a plain relative path",
            ));
        };
        at.push(name);
        let meta = std::fs::symlink_metadata(&at)?;
        if components.peek().is_some() && !meta.is_dir() {
            return Err(IoError::new(
                ErrorKind::InvalidInput,
                "a directory on the path is a symlink or a file",
            ));
        }
        if components.peek().is_none() && meta.file_type().is_symlink() {
            use std::os::unix::ffi::OsStrExt as _;
            let target = std::fs::read_link(&at)?;
            return Ok(Blob {
                link: true,
                ..blob_of(target.as_os_str().as_bytes().to_vec())
            });
        }
    }
    hash_file(repo_io::read::open_no_follow(&at)?, deadline)
}

/// The blob of an open file, which must be a regular file, read until `deadline` (`TimedOut`
/// after) through reads that never wait during an attempt: repo-io's check and hash, with the
/// attempt's allowance.
fn hash_file(file: std::fs::File, deadline: Option<Instant>) -> std::io::Result<Blob> {
    let Some(file) = repo_io::read::Regular::check(file, None)? else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    };
    if nowait::active() && file.metadata().len() > nowait::INLINE_BYTES {
        return Err(nowait::refuse());
    }
    file.hash_through(nowait::Reader::new, MAX_BLOB, deadline)
        .map(blob_of_hashed)
}

/// The blob of some bytes already in memory.
pub(crate) fn blob_of(bytes: Vec<u8>) -> Blob {
    let id = asp_wire::digest::blob_id(&bytes);
    let bytes = (bytes.len() <= MAX_BLOB).then(|| Arc::new(bytes));
    Blob {
        id,
        bytes,
        link: false,
    }
}

/// The blob of what repo-io hashed.
fn blob_of_hashed(hashed: repo_io::read::Hashed) -> Blob {
    Blob {
        id: asp_wire::digest::blob_id_of_digest(&hashed.sha256),
        bytes: hashed.bytes.map(Arc::new),
        link: false,
    }
}

/// Hashes a stream whose length is about `size` (a file's, a git object's) to its end, keeping its
/// bytes up to [`MAX_BLOB`] ([`repo_io::read::hash`]).
pub(crate) fn hash_sized(reader: impl std::io::Read, size: u64) -> std::io::Result<Blob> {
    repo_io::read::hash(reader, size, MAX_BLOB).map(blob_of_hashed)
}

#[cfg(test)]
mod tests;
