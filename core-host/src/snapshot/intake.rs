//! Changeset intake: blob ids are checked, not trusted. An `after` blob must hash to the working
//! tree's bytes at its path, a `before` blob to the baseline's; anything else makes the changeset
//! stale. The checked blobs become the request's blob set, the only changeset content a provider
//! may read.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::{Baseline, Blob, Tree, Workspace, is_plain_relative, nowait};

/// A blob a provider may read during one request, and the path it belongs to.
#[derive(Clone, Debug)]
pub(crate) struct ScopedBlob {
    pub(crate) path: String,
    /// `None` past the size cap (hashed, not served).
    pub(crate) bytes: Option<Arc<Vec<u8>>>,
}

/// What intake found.
#[derive(Debug, Default)]
pub(crate) struct Intake {
    pub(crate) blobs: HashMap<String, ScopedBlob>,
    /// Why the changeset's blobs do not match the workspace (each a `stale` reason).
    pub(crate) stale: Vec<String>,
    /// Set when the changeset names another baseline than the host's current one.
    pub(crate) stale_baseline: Option<String>,
}

/// Checks `changeset` (already schema-valid) against the workspace at `baseline`; the baseline's
/// blobs are read from git by one process, which must finish by `deadline`. `Err` is an input
/// error (a path that is not a plain relative path). Blocking.
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
    for change in changes {
        let path = change["path"].as_str().unwrap_or_default();
        let kind = change["kind"].as_str().unwrap_or_default();
        if let Some(before) = change["before"].as_str() {
            check_before(&tree, &before_blobs, before_path(change), before, &mut out);
        }
        match (kind, change["after"].as_str()) {
            (_, Some(after)) => check_after(workspace, path, after, &mut out),
            ("delete", None) if workspace.read_worktree(path).is_ok() => {
                out.stale.push(format!(
                    "{path} is deleted in the changeset but present in the working tree"
                ));
            }
            ("rename", None) => {
                if let Some(before) = change["before"].as_str() {
                    check_after(workspace, path, before, &mut out);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

impl Intake {
    /// Keeps `blob` as the content of `path`, in scope for the providers' reads.
    fn keep(&mut self, path: &str, blob: Blob) {
        let scoped = ScopedBlob {
            path: path.to_owned(),
            bytes: blob.bytes,
        };
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
        Ok(blob) if blob.id == claimed => out.keep(path, blob),
        Ok(_) => out.stale.push(format!(
            "the before blob of {path} does not match the baseline"
        )),
        Err(e) => out.stale.push(format!(
            "the baseline content of {path} cannot be read: {e}"
        )),
    }
}

fn check_after(workspace: &Workspace, path: &str, claimed: &str, out: &mut Intake) {
    match workspace.read_worktree(path) {
        Ok(blob) if blob.id == claimed => out.keep(path, blob),
        Ok(_) => out.stale.push(format!(
            "the after blob of {path} does not match the working tree"
        )),
        Err(e) => out
            .stale
            .push(format!("{path} cannot be read from the working tree: {e}")),
    }
}
