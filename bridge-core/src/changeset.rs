//! ChangeSets from a git working tree against the host's baseline.
//!
//! Before-content comes from git: the baseline's tree when its `rev` names a git tree or commit,
//! otherwise `HEAD` (or the empty tree in a repository without commits). After-content is what the
//! working tree holds, read without following links ([`disk`]). Blob ids are
//! `blob:sha256:<hex of the raw bytes>`: of a file's bytes, of a symlink's target (as git stores it),
//! of a submodule's commit id in hex (a gitlink's "blob"). FIFOs, sockets and devices are never opened
//! and are listed as skipped. One `git status` per evaluation finds the changes ([`git`]); what the
//! baseline names and the ids of before-blobs are cached across evaluations ([`Cache`]). The outer
//! seam has no blob upload, so only content on disk can be evaluated. Nothing here writes to the
//! repository.

mod disk;
mod git;
mod sweep;

pub(crate) use repo_io::read::read_small;
pub use sweep::{MAX_REV_BYTES, MergeBase, check_rev};
pub(crate) use sweep::{build_all, empty_tree, merge_base};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Error, Result};
use asp_wire::proto::{Change, ChangeKind, ChangeSet};
use disk::Found;
use git::{GITLINK, Git, Object};
use repo_io::git::{FilterCache, Filters};
use rpc_peer::lock;

/// How long building one changeset may take (git, and hashing what changed).
const DEADLINE: Duration = Duration::from_secs(60);
/// Why a submodule is never part of a changeset.
pub const SUBMODULE: &str = "submodule: its own repository, not evaluated";
/// Why a path whose name is not UTF-8 is never part of a changeset.
pub const NOT_UTF8: &str = "a name that is not UTF-8 (ASP paths are JSON strings), not evaluated";
/// Baselines and before-blob ids remembered; past this the cache starts over.
const CACHED_BASES: usize = 64;
const CACHED_BLOBS: usize = 8192;

pub use asp_wire::digest::blob_id;
use asp_wire::digest::blob_id_of_digest;

/// A changeset and what could not go into it.
#[derive(Clone, Debug)]
pub struct Built {
    pub changeset: ChangeSet,
    /// Paths left out because they hold nothing to hash (a FIFO, a socket, a device, a nested
    /// repository), with why.
    pub skipped: Vec<Skipped>,
    /// The length of each change's working-tree file as it was read (a link's: its target's), by
    /// path: what the host will read and hold for it.
    pub sizes: HashMap<String, u64>,
}

/// A path of the working tree that was not evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

/// What stays true between evaluations of one working tree: where it sits in its repository, what
/// each baseline names, the ids of before-blobs (content-addressed, so never stale).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    layout: Mutex<Option<Layout>>,
    /// The filter overrides of every git command that reads working-tree content.
    filters: FilterCache,
    /// The submodules a commit has (repository-relative), for the last commit asked about.
    submodules: Mutex<Option<(String, Vec<Vec<u8>>)>>,
    bases: Mutex<HashMap<String, BaseRef>>,
    blobs: Mutex<HashMap<String, String>>,
    /// git processes started, for tests and logs.
    pub(crate) git_runs: AtomicU64,
}

/// The git object a baseline names.
#[derive(Clone, Debug, PartialEq, Eq)]
enum BaseRef {
    /// Nothing git knows: compare with `HEAD` (or nothing, before the first commit).
    Head,
    Commit(String),
    Tree(String),
}

/// Where the working tree sits: its path inside the repository and git's directories.
#[derive(Clone, Debug)]
struct Layout {
    /// `""` at the top, else ending with `/`.
    prefix: String,
    git_dir: PathBuf,
    common_dir: PathBuf,
}

impl Cache {
    /// git in `root`, with a deadline from now, its runs counted here, no filter driver.
    pub(crate) fn git<'a>(&'a self, root: &'a Path) -> Git<'a> {
        Git {
            dir: root,
            deadline: Instant::now() + DEADLINE,
            runs: &self.git_runs,
            filters: None,
        }
    }

    async fn layout(&self, git: &Git<'_>) -> Result<Layout> {
        if let Some(layout) = lock(&self.layout).clone() {
            return Ok(layout);
        }
        let out = git
            .run(&[
                "rev-parse",
                "--show-prefix",
                "--absolute-git-dir",
                "--git-common-dir",
            ])
            .await?;
        let text = String::from_utf8_lossy(&out);
        let mut lines = text.split('\n');
        let (Some(prefix), Some(git_dir), Some(common)) =
            (lines.next(), lines.next(), lines.next())
        else {
            return Err(Error::git(format!(
                "unexpected git rev-parse output {text:?}"
            )));
        };
        let common_dir = git.dir.join(common);
        let layout = Layout {
            prefix: prefix.to_owned(),
            git_dir: PathBuf::from(git_dir),
            common_dir,
        };
        *lock(&self.layout) = Some(layout.clone());
        Ok(layout)
    }

    /// The working tree's path inside its repository (`""` at the top, else ending with `/`).
    async fn prefix(&self, git: &Git<'_>) -> Result<String> {
        Ok(self.layout(git).await?.prefix)
    }

    /// The filter overrides for this repository's configuration as it is now.
    async fn filters(&self, git: &Git<'_>) -> Result<Filters> {
        let layout = self.layout(git).await?;
        Ok(git
            .runner()
            .filter_overrides(&self.filters, &layout.git_dir, &layout.common_dir)
            .await?)
    }

    /// The submodules (gitlinks) of `commit`, repository-relative, looked up once per commit.
    async fn submodules(&self, git: &Git<'_>, commit: &str) -> Result<Vec<Vec<u8>>> {
        if let Some((known, paths)) = lock(&self.submodules).as_ref()
            && known == commit
        {
            return Ok(paths.clone());
        }
        let out = git
            .run(&["ls-tree", "-r", "-z", "--full-tree", commit])
            .await?;
        let paths = git::parse_gitlinks(&out);
        *lock(&self.submodules) = Some((commit.to_owned(), paths.clone()));
        Ok(paths)
    }

    /// What `rev` names, looked up once per baseline.
    async fn base(&self, git: &Git<'_>, rev: &str) -> Result<BaseRef> {
        if let Some(base) = lock(&self.bases).get(rev) {
            return Ok(base.clone());
        }
        let named = ["git:tree:", "git:commit:", "git:", "tree:", "commit:"]
            .iter()
            .find_map(|prefix| rev.strip_prefix(prefix))
            .unwrap_or(rev);
        let looks_like_object =
            !named.is_empty() && named.len() <= 64 && named.bytes().all(|b| b.is_ascii_hexdigit());
        let base = if !looks_like_object {
            BaseRef::Head
        } else if let Some(commit) = git.peel(named, "commit").await? {
            BaseRef::Commit(commit)
        } else if let Some(tree) = git.peel(named, "tree").await? {
            BaseRef::Tree(tree)
        } else {
            BaseRef::Head
        };
        self.know_base(rev.to_owned(), base.clone());
        Ok(base)
    }

    /// Remembers what `rev` names, found another way than [`Cache::base`] would.
    fn know_base(&self, rev: String, base: BaseRef) {
        let mut bases = lock(&self.bases);
        if bases.len() >= CACHED_BASES {
            bases.clear();
        }
        bases.insert(rev, base);
    }

    /// The ASP blob ids of these git blobs, asking git only for those not seen before.
    async fn blob_ids(&self, git: &Git<'_>, oids: Vec<String>) -> Result<HashMap<String, String>> {
        let mut known = HashMap::new();
        let mut missing = Vec::new();
        {
            let blobs = lock(&self.blobs);
            for oid in oids {
                match blobs.get(&oid) {
                    Some(id) => {
                        known.insert(oid, id.clone());
                    }
                    None if !missing.contains(&oid) => missing.push(oid),
                    None => {}
                }
            }
        }
        if missing.is_empty() {
            return Ok(known);
        }
        let ids = git.blob_ids(&missing).await?;
        let mut blobs = lock(&self.blobs);
        if blobs.len() + missing.len() > CACHED_BLOBS {
            blobs.clear();
        }
        for (oid, id) in missing.into_iter().zip(ids) {
            blobs.insert(oid.clone(), id.clone());
            known.insert(oid, id);
        }
        Ok(known)
    }
}

/// The baseline the embedded host names on a clean start, `git:tree:` of `HEAD`'s tree (`None`
/// before the first commit); what it names is cached, as [`Cache::base`] would find it.
pub(crate) async fn head_baseline(root: &Path, cache: &Cache) -> Result<Option<String>> {
    let Some(tree) = cache.git(root).peel("HEAD", "tree").await? else {
        return Ok(None);
    };
    let rev = format!("git:tree:{tree}");
    cache.know_base(rev.clone(), BaseRef::Tree(tree));
    Ok(Some(rev))
}

/// One path's two sides while the changeset is assembled.
#[derive(Debug, Default)]
struct Entry {
    before: Option<Object>,
    /// The working tree has something there.
    after: bool,
}

/// The changes of the working tree at `root` against `baseline`, limited to `paths` when given
/// (repo-relative, already confined by the caller). Submodules are left out with the reason
/// [`SUBMODULE`]: every one `HEAD` has or the working tree adds (what changed inside one, its
/// commit included, is another repository's, never evaluated here).
pub(crate) async fn build(
    root: &Path,
    cache: &Cache,
    baseline: &Value,
    paths: Option<&[String]>,
) -> Result<Built> {
    let deadline = Instant::now() + DEADLINE;
    let plain = Git {
        dir: root,
        deadline,
        runs: &cache.git_runs,
        filters: None,
    };
    let prefix = cache.prefix(&plain).await?;
    let filters = cache.filters(&plain).await?;
    let git = Git {
        filters: Some(&filters),
        ..plain
    };
    let rev = baseline
        .get("rev")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let base = cache.base(&git, rev).await?;
    let pathspecs: Vec<&str> = match paths {
        Some(paths) => paths.iter().map(String::as_str).collect(),
        None => vec!["."],
    };
    let status = git.status(&pathspecs).await?;
    let tracked = match &base {
        BaseRef::Commit(commit) if status.head.as_ref() == Some(commit) => status.tracked,
        BaseRef::Head => status.tracked,
        BaseRef::Commit(oid) | BaseRef::Tree(oid) => git.diff_index(oid, &pathspecs).await?,
    };

    let relative = |path: &[u8]| path.strip_prefix(prefix.as_bytes()).map(<[u8]>::to_vec);
    let mut entries: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut submodules: Vec<Vec<u8>> = Vec::new();
    for change in tracked {
        let Some(path) = relative(&change.path) else {
            continue;
        };
        let gitlink = change.before.as_ref().is_some_and(|b| b.mode == GITLINK)
            || change.after_mode == Some(GITLINK);
        if gitlink {
            submodules.push(path);
            continue;
        }
        let entry = entries.entry(path).or_default();
        entry.before = change.before;
        entry.after = change.after_mode.is_some();
    }
    if let Some(head) = &status.head {
        let wanted = |path: &[u8]| match paths {
            None => true,
            Some(paths) => paths.iter().any(|p| {
                let p = p.as_bytes();
                p == path
                    || p.strip_prefix(path)
                        .is_some_and(|rest| rest.starts_with(b"/"))
            }),
        };
        // A listing past the cap (a tree of millions of files) names no submodule: said in the
        // log, and the evaluation goes on without that list.
        let listed = cache.submodules(&git, head).await.unwrap_or_else(|e| {
            tracing::warn!("the submodules of HEAD could not be listed: {e}");
            Vec::new()
        });
        for path in listed {
            let Some(path) = relative(&path) else {
                continue;
            };
            if wanted(&path) {
                submodules.push(path);
            }
        }
    }
    submodules.sort();
    submodules.dedup();
    skipped.extend(submodules.iter().map(|path| Skipped {
        path: lossy(path),
        why: SUBMODULE.to_owned(),
    }));
    for path in status.untracked {
        let Some(path) = relative(&path) else {
            continue;
        };
        if let Some(dir) = path.strip_suffix(b"/") {
            skipped.push(Skipped {
                path: lossy(dir),
                why: "a nested repository".to_owned(),
            });
        } else {
            entries.entry(path).or_default().after = true;
        }
    }

    assemble(root, &git, cache, baseline, entries, skipped).await
}

/// The changeset of `entries` (each path's base side and whether the working tree has something
/// there): before-blob ids from git, after-blobs hashed from the working tree.
async fn assemble(
    root: &Path,
    git: &Git<'_>,
    cache: &Cache,
    baseline: &Value,
    mut entries: BTreeMap<Vec<u8>, Entry>,
    mut skipped: Vec<Skipped>,
) -> Result<Built> {
    // An ASP path is a JSON string: a name that is not UTF-8 is reported, never sent altered.
    entries.retain(|path, _| {
        let utf8 = std::str::from_utf8(path).is_ok();
        if !utf8 {
            skipped.push(Skipped {
                path: lossy(path),
                why: NOT_UTF8.to_owned(),
            });
        }
        utf8
    });
    let before_blobs: Vec<String> = entries
        .values()
        .filter_map(|e| e.before.as_ref())
        .filter(|b| b.mode != GITLINK)
        .map(|b| b.oid.clone())
        .collect();
    let before_ids = cache.blob_ids(git, before_blobs).await?;
    let mut afters = after_side(root, git.deadline, &entries).await?;

    let mut changes = Vec::new();
    let mut sizes = HashMap::new();
    for (path, entry) in entries {
        let before = entry.before.as_ref().map(|b| match b.mode {
            GITLINK => blob_id(b.oid.as_bytes()),
            _ => before_ids.get(&b.oid).cloned().unwrap_or_default(),
        });
        let after = afters.remove(&path).unwrap_or(Found::Gone);
        let path = lossy(&path);
        let after = match after {
            Found::Blob { id, len } => {
                sizes.insert(path.clone(), len);
                Some(id)
            }
            Found::Gone => None,
            Found::Directory => {
                skipped.push(Skipped {
                    path,
                    why: "a directory".to_owned(),
                });
                continue;
            }
            Found::Special(why) => {
                skipped.push(Skipped {
                    path,
                    why: why.to_owned(),
                });
                continue;
            }
        };
        let kind = match (&before, &after) {
            (Some(b), Some(a)) if a == b => continue,
            (Some(_), Some(_)) => ChangeKind::Modify,
            (None, Some(_)) => ChangeKind::Create,
            (Some(_), None) => ChangeKind::Delete,
            (None, None) => continue,
        };
        changes.push(Change {
            path,
            kind,
            from: None,
            before,
            after,
        });
    }
    for skip in &skipped {
        tracing::info!(path = %skip.path, why = %skip.why, "left out of the changeset");
    }
    tracing::debug!(
        git_runs = cache.git_runs.load(Ordering::Relaxed),
        changes = changes.len(),
        "changeset built"
    );
    Ok(Built {
        changeset: ChangeSet {
            baseline: baseline.clone(),
            changes,
        },
        skipped,
        sizes,
    })
}

/// Files past which the working tree is read by more than one thread.
const READ_ALONE: usize = 256;
/// Most threads that read the working tree at once.
const MAX_READERS: usize = 4;

/// The after-side of every entry that has one, read off the async threads: a large changeset (an
/// `--all-files` sweep) by one thread a core, up to [`MAX_READERS`], each reading its share (small
/// files are read at the cost of their system calls, which threads overlap).
async fn after_side(
    root: &Path,
    deadline: Instant,
    entries: &BTreeMap<Vec<u8>, Entry>,
) -> Result<HashMap<Vec<u8>, Found>> {
    let wanted: Vec<Vec<u8>> = entries
        .iter()
        .filter(|(_, e)| e.after)
        .map(|(path, _)| path.clone())
        .collect();
    let readers = if wanted.len() <= READ_ALONE {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_READERS))
    };
    let share = wanted.len().div_ceil(readers).max(1);
    let mut tasks = tokio::task::JoinSet::new();
    for part in wanted.chunks(share) {
        let (dir, part) = (root.to_path_buf(), part.to_vec());
        tasks.spawn_blocking(move || {
            part.into_iter()
                .map(|path| {
                    let after = disk::read(&dir, &os_path(&path), deadline)?;
                    Ok((path, after))
                })
                .collect::<Result<Vec<_>>>()
        });
    }
    // Every reader is waited for, a failed one's error kept: none goes on reading after this.
    let mut found = HashMap::with_capacity(wanted.len());
    let mut failed = None;
    while let Some(read) = tasks.join_next().await {
        match read {
            Ok(Ok(read)) => found.extend(read),
            Ok(Err(e)) => failed = failed.or(Some(e)),
            Err(e) => {
                failed = failed.or(Some(Error::Unavailable(format!(
                    "reading the working tree stopped: {e}"
                ))))
            }
        }
    }
    failed.map_or(Ok(found), Err)
}

fn lossy(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

#[cfg(unix)]
fn os_path(path: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    PathBuf::from(std::ffi::OsStr::from_bytes(path))
}

#[cfg(not(unix))]
fn os_path(path: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(path).into_owned())
}

/// The bytes of `path` as git and a `file:` URI take them (a symlink's target is hashed as these):
/// the path's own bytes on Unix, its text with `/` separators elsewhere. The inverse of `os_path`.
#[cfg(unix)]
pub fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
pub fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().replace('\\', "/").into_bytes()
}

#[cfg(test)]
mod tests;
