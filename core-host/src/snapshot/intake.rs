//! Changeset intake: blob ids are checked, not trusted. An `after` blob must hash to the working
//! tree's bytes at its path, a `before` blob to the baseline's; anything else makes the changeset
//! stale. The checked blobs become the request's blob set, the only changeset content a provider
//! may read. Their bytes are kept up to [`KEPT_BYTES`] a request; past that only their ids are,
//! and a provider's read gets the bytes again (git's by object id, the working tree's checked
//! against the id). Intake stops at the request's deadline, and reads each path of the working tree
//! once, however many changes name it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::ErrorKind;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Baseline, Blob, Tree, Workspace, is_plain_relative, nowait};

/// Bytes of blob content one request's intake keeps in memory; past that it keeps ids.
pub(crate) const KEPT_BYTES: usize = 32 << 20;

/// Longest a working-tree file dropped by intake may take to be read again (it was at most
/// [`super::MAX_BLOB`] bytes when checked; a file grown since is given up, not hashed to its end).
const REREAD_DEADLINE: Duration = Duration::from_secs(10);

/// A blob a provider may read during one request, and the path it belongs to.
#[derive(Clone, Debug)]
pub(crate) struct ScopedBlob {
    pub(crate) path: String,
    /// `None` past the size cap (hashed, not served), or when intake did not keep them (`again`).
    pub(crate) bytes: Option<Arc<Vec<u8>>>,
    /// Where the bytes are read again when intake, past [`KEPT_BYTES`], did not keep them.
    pub(crate) again: Option<Again>,
}

/// Where the bytes of a blob intake did not keep are read again.
#[derive(Clone, Debug)]
pub(crate) enum Again {
    /// The working tree at the blob's path (the bytes may have changed since).
    Worktree,
    /// The git object (content-addressed, so the same bytes).
    Git(String),
}

impl ScopedBlob {
    /// This blob with its bytes: as kept, else read again and checked against `id`. `Err` says
    /// why they cannot be served (e.g. the file changed since intake). Blocking when not kept.
    pub(crate) fn with_bytes(&self, workspace: &Workspace, id: &str) -> Result<ScopedBlob, String> {
        let blob = match &self.again {
            None => return Ok(self.clone()),
            Some(Again::Git(oid)) => workspace.git_blob(oid).map_err(|e| e.to_string())?,
            Some(Again::Worktree) => workspace
                .read_worktree_until(&self.path, Instant::now() + REREAD_DEADLINE)
                .map_err(|e| format!("{} cannot be read again: {e}", self.path))?,
        };
        if blob.id != id {
            return Err(format!(
                "{} changed in the working tree since the request was checked",
                self.path
            ));
        }
        Ok(ScopedBlob {
            path: self.path.clone(),
            bytes: blob.bytes,
            again: None,
        })
    }
}

/// What intake found.
#[derive(Debug, Default)]
pub(crate) struct Intake {
    pub(crate) blobs: HashMap<String, ScopedBlob>,
    /// Why the changeset's blobs do not match the workspace (each a `stale` reason).
    pub(crate) stale: Vec<String>,
    /// Set when the changeset names another baseline than the host's current one.
    pub(crate) stale_baseline: Option<String>,
    /// Set when the request's deadline passed before every change was checked (`timed-out`).
    pub(crate) timed_out: Option<String>,
    /// Bytes of the blobs kept in memory, at most [`KEPT_BYTES`].
    pub(crate) kept: usize,
    /// The changed paths whose working-tree entry is a symbolic link (its blob is the link's target
    /// path: no content to check), as checked against their after blob.
    pub(crate) links: BTreeSet<String>,
}

/// Checks `changeset` (already schema-valid) against the workspace at `baseline`; the baseline's
/// blobs are read from git by one process, which must finish by `deadline`. `Err` is an input
/// error (a path that is not a plain relative path). Checking stops
/// once `deadline` passes, with `timed_out` set. Blocking.
pub(crate) fn intake(
    workspace: &Workspace,
    baseline: &Baseline,
    changeset: &Value,
    deadline: Instant,
) -> Result<Intake, String> {
    let mut out = Intake::default();
    let changes = changeset["changes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for change in changes {
        for key in ["path", "from"] {
            if let Some(path) = change[key].as_str()
                && !is_plain_relative(path)
            {
                return Err(format!(
                    "changeset path {path:?} is not a plain relative path"
                ));
            }
        }
    }
    let rev = changeset["baseline"]["rev"].as_str().unwrap_or_default();
    if rev != baseline.rev() {
        out.stale_baseline = Some(format!(
            "the changeset names baseline {rev:?}; the host's baseline is {:?}",
            baseline.rev()
        ));
        return Ok(out);
    }
    // An attempt that cannot wait would refuse past its allowance of opens: a larger changeset
    // leaves it at once rather than going through every change in vain.
    if nowait::active() && changes.len() > nowait::INLINE_OPENS as usize {
        return Err(nowait::refuse().to_string());
    }
    let tree = match workspace.tree(&baseline.tree) {
        Ok(tree) => tree,
        Err(e) => {
            out.stale
                .push(format!("the baseline tree cannot be read: {e}"));
            return Ok(out);
        }
    };
    fn before_path(change: &Value) -> &str {
        let path = change["path"].as_str().unwrap_or_default();
        change["from"]
            .as_str()
            .filter(|_| change["kind"] == "rename")
            .unwrap_or(path)
    }
    let before_oids: Vec<&str> = changes
        .iter()
        .filter(|change| change["before"].is_string())
        .filter_map(|change| tree.get(before_path(change)))
        .map(|entry| entry.oid.as_str())
        .collect();
    let before_blobs = workspace.git_blobs(&before_oids, deadline);
    let mut reads = Reads {
        workspace,
        deadline,
        found: HashMap::new(),
        links: HashSet::new(),
    };
    for (checked, change) in changes.iter().enumerate() {
        if out.timed_out.is_some() {
            break;
        }
        if Instant::now() >= deadline {
            out.timed_out = Some(format!(
                "the request's deadline passed while the changeset was checked ({checked} of {} changes)",
                changes.len()
            ));
            break;
        }
        let path = change["path"].as_str().unwrap_or_default();
        let kind = change["kind"].as_str().unwrap_or_default();
        if let Some(before) = change["before"].as_str() {
            check_before(&tree, &before_blobs, before_path(change), before, &mut out);
        }
        let progress = (checked, changes.len());
        match (kind, change["after"].as_str()) {
            (_, Some(after)) => check_after(&mut reads, path, after, &mut out, progress),
            ("delete", None) if reads.read(path).0.is_ok() => {
                out.stale.push(format!(
                    "{path} is deleted in the changeset but present in the working tree"
                ));
            }
            ("rename", None) => {
                if let Some(before) = change["before"].as_str() {
                    check_after(&mut reads, path, before, &mut out, progress);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

impl Intake {
    /// Keeps `blob` as the content of `path`, in scope for the providers' reads: its bytes while
    /// [`KEPT_BYTES`] has room, else where to read them `again`.
    fn keep(&mut self, path: &str, blob: Blob, again: Again) {
        let mut scoped = ScopedBlob {
            path: path.to_owned(),
            bytes: blob.bytes,
            again: None,
        };
        if let Some(bytes) = &scoped.bytes {
            if self.kept + bytes.len() > KEPT_BYTES {
                scoped.bytes = None;
                scoped.again = Some(again);
            } else {
                self.kept += bytes.len();
            }
        }
        self.blobs.insert(blob.id, scoped);
    }
}

fn check_before(
    tree: &Tree,
    blobs: &HashMap<String, Result<Blob, String>>,
    path: &str,
    claimed: &str,
    out: &mut Intake,
) {
    let Some(entry) = tree.get(path) else {
        out.stale.push(format!(
            "{path} is not in the baseline, but the changeset names a before blob"
        ));
        return;
    };
    let read = blobs
        .get(&entry.oid)
        .cloned()
        .unwrap_or_else(|| Err("it was not read".to_owned()));
    match read {
        Ok(blob) if blob.id == claimed => out.keep(path, blob, Again::Git(entry.oid.clone())),
        Ok(_) => out.stale.push(format!(
            "the before blob of {path} does not match the baseline"
        )),
        Err(e) => out.stale.push(format!(
            "the baseline content of {path} cannot be read: {e}"
        )),
    }
}

/// What a read of a path found: the blob id there and whether its bytes were within the cap, or
/// the error.
type Found = Result<(String, bool), (ErrorKind, String)>;

/// The working tree as intake reads it: each path once, however many changes name it.
struct Reads<'a> {
    workspace: &'a Workspace,
    deadline: Instant,
    found: HashMap<String, Found>,
    /// The paths read that are symbolic links.
    links: HashSet<String>,
}

impl Reads<'_> {
    /// What is at `path`, with its blob when this is the first read of it. Blocking.
    fn read(&mut self, path: &str) -> (Found, Option<Blob>) {
        if let Some(found) = self.found.get(path) {
            return (found.clone(), None);
        }
        let (found, blob) = match self.workspace.read_worktree_until(path, self.deadline) {
            Ok(blob) => {
                if blob.link {
                    self.links.insert(path.to_owned());
                }
                (Ok((blob.id.clone(), blob.bytes.is_some())), Some(blob))
            }
            Err(e) => (Err((e.kind(), e.to_string())), None),
        };
        self.found.insert(path.to_owned(), found.clone());
        (found, blob)
    }
}

/// Checks the blob `claimed` for `path` against the working tree (the change `checked` of
/// `changes`). A path read before is not read again: its blob is kept without its bytes, which a
/// provider's read gets again.
fn check_after(
    reads: &mut Reads<'_>,
    path: &str,
    claimed: &str,
    out: &mut Intake,
    (checked, changes): (usize, usize),
) {
    let read = reads.read(path);
    if matches!(&read.0, Ok((id, _)) if id == claimed) && reads.links.contains(path) {
        out.links.insert(path.to_owned());
    }
    match read {
        (Ok((id, _)), Some(blob)) if id == claimed => out.keep(path, blob, Again::Worktree),
        (Ok((id, within)), None) if id == claimed => {
            if out.blobs.get(&id).is_none_or(|b| b.path != path) {
                out.blobs.insert(
                    id,
                    ScopedBlob {
                        path: path.to_owned(),
                        bytes: None,
                        again: within.then_some(Again::Worktree),
                    },
                );
            }
        }
        (Ok(_), _) => out.stale.push(format!(
            "the after blob of {path} does not match the working tree"
        )),
        (Err((ErrorKind::TimedOut, _)), _) => {
            out.timed_out = Some(format!(
                "the request's deadline passed while {path} was read ({checked} of {changes} changes checked)"
            ));
        }
        (Err((_, e)), _) => out
            .stale
            .push(format!("{path} cannot be read from the working tree: {e}")),
    }
}
