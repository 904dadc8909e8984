//! One evaluation of the working tree, the same for every front end: the host's baseline (asked with
//! `host/status` unless the caller already has it), the changeset of the working tree against it
//! (built off the async threads, see [`crate::changeset`]), then `host/evaluateChangeset` at an
//! advisory call site. MCP (`asp_diagnostics`), the language server and `sarif` all come through
//! [`Worktree::evaluate`].

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::changeset;
use crate::error::{Error, Result};
use crate::host::{CallOptions, HostClient};
use crate::proto::{AdvisoryCallSite, Comparison, Decision};

/// A workspace whose working tree is evaluated: its canonical root.
#[derive(Clone, Debug)]
pub struct Worktree {
    root: PathBuf,
}

/// What to evaluate and how. Start from [`Evaluate::at`] and set what differs.
#[derive(Clone, Debug)]
pub struct Evaluate {
    /// Where the decision is asked for; the type cannot say `gate`.
    pub call_site: AdvisoryCallSite,
    /// `all` findings or only those `introduced` by the changes.
    pub comparison: Comparison,
    /// Which files go into the changeset.
    pub scope: Scope,
    /// Which tree the before-content comes from.
    pub base: Base,
    /// The host's baseline when the caller has just read it (the handshake's `host/status`); `None`
    /// asks the host for it first, as a long-running front end must (the baseline moves).
    pub baseline: Option<Value>,
}

/// Which files of the working tree are evaluated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// Every change of the working tree against the base (tracked and untracked files).
    #[default]
    Changes,
    /// The changes under these repo-relative paths (already confined by the caller).
    Paths(Vec<String>),
    // A later `AllFiles` (every file of the tree, changed or not) belongs here.
}

/// Where the before-content of the changeset comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Base {
    /// The git tree or commit the host's baseline names, else `HEAD`, else the empty tree.
    #[default]
    Baseline,
    // A later `Rev(String)` (a revision the user names, e.g. the base of a pull request) belongs
    // here; the changeset still echoes the host's baseline.
}

/// The host's decision on the working tree, with what was sent.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub decision: Decision,
    /// How many files the changeset held.
    pub changed_files: usize,
}

impl Evaluate {
    /// Every working-tree change, all findings, against the host's current baseline.
    pub fn at(call_site: AdvisoryCallSite) -> Evaluate {
        Evaluate {
            call_site,
            comparison: Comparison::All,
            scope: Scope::default(),
            base: Base::default(),
            baseline: None,
        }
    }
}

impl Worktree {
    /// The working tree at `root` (canonical, absolute; a repository or a directory inside one).
    pub fn new(root: impl Into<PathBuf>) -> Worktree {
        Worktree { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Asks `client`'s host for its decision on the working tree; `call` carries the evaluation's
    /// deadline and where its `$/progress` goes.
    pub async fn evaluate(
        &self,
        client: &HostClient,
        request: Evaluate,
        call: CallOptions,
    ) -> Result<Evaluation> {
        let Evaluate {
            call_site,
            comparison,
            scope,
            base: Base::Baseline,
            baseline,
        } = request;
        let baseline = match baseline {
            Some(baseline) => baseline,
            None => client.status().await?.value.workspace.baseline,
        };
        let root = self.root.clone();
        let changeset = tokio::task::spawn_blocking(move || {
            let paths = match &scope {
                Scope::Changes => None,
                Scope::Paths(paths) => Some(paths.as_slice()),
            };
            changeset::from_working_tree(&root, &baseline, paths)
        })
        .await
        .map_err(|e| Error::Unavailable(format!("building the changeset stopped: {e}")))??;
        let changed_files = changeset.changes.len();
        let reply = client
            .evaluate_changeset(call_site, changeset, Some(comparison), call)
            .await?;
        Ok(Evaluation {
            decision: reply.value,
            changed_files,
        })
    }
}
