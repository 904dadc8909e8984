//! One evaluation of the working tree, the same for every front end: the host's baseline (asked with
//! `host/status` unless the caller already has it), the changeset of the working tree against it
//! (built off the async threads, see [`crate::changeset`]), then `host/evaluateChangeset` at an
//! advisory call site. MCP (`asp_diagnostics`), the language server and `sarif` all come through
//! [`Worktree::evaluate`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::changeset;
use crate::error::Result;
use crate::host::{CallOptions, HostClient};
use crate::proto::{self, AdvisoryCallSite, Comparison, Decision, EvaluateParams};

/// A workspace whose working tree is evaluated: its canonical root.
#[derive(Clone, Debug)]
pub struct Worktree {
    root: PathBuf,
    /// What stays true between evaluations (baselines looked up, before-blob ids).
    cache: Arc<changeset::Cache>,
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

/// The host's decision on the working tree (a [`Decision`], or what [`Worktree::evaluate_as`] was
/// asked to decode it as), with what was sent.
#[derive(Clone, Debug)]
pub struct Evaluation<T = Decision> {
    pub decision: T,
    /// How many files the changeset held.
    pub changed_files: usize,
    /// Paths of the working tree left out (a FIFO, a socket, a device, a nested repository).
    pub skipped: Vec<changeset::Skipped>,
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
        Worktree {
            root: root.into(),
            cache: Arc::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The changeset of the working tree against `baseline` (echoed as the host issued it).
    pub async fn changeset(&self, baseline: &Value, scope: &Scope) -> Result<changeset::Built> {
        let paths = match scope {
            Scope::Changes => None,
            Scope::Paths(paths) => Some(paths.as_slice()),
        };
        changeset::build(&self.root, &self.cache, baseline, paths).await
    }

    /// A small configuration file of the workspace (such as `.asp/asp.json`), read whole if it is a
    /// regular file of at most `max_bytes`, off the async threads. A link anywhere on its path, a
    /// FIFO, a device, a socket or a larger file is refused with why (links are never followed,
    /// special files never opened); `Ok(None)` when there is no such file.
    pub async fn read_config(
        &self,
        relative: &str,
        max_bytes: u64,
    ) -> std::io::Result<Option<Vec<u8>>> {
        let root = self.root.clone();
        let relative = PathBuf::from(relative);
        tokio::task::spawn_blocking(move || changeset::read_small(&root, &relative, max_bytes))
            .await
            .map_err(std::io::Error::other)?
    }

    /// How many git processes this working tree's changesets have started so far.
    pub fn git_runs(&self) -> u64 {
        self.cache
            .git_runs
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Asks `client`'s host for its decision on the working tree; `call` carries the evaluation's
    /// deadline and where its `$/progress` goes.
    pub async fn evaluate(
        &self,
        client: &HostClient,
        request: Evaluate,
        call: CallOptions,
    ) -> Result<Evaluation> {
        self.evaluate_as(client, request, call).await
    }

    /// [`Worktree::evaluate`], with the host's decision decoded as `T`: a front end that shows only
    /// part of it (the language server: the findings of one document) decodes only that part.
    pub async fn evaluate_as<T: DeserializeOwned>(
        &self,
        client: &HostClient,
        request: Evaluate,
        call: CallOptions,
    ) -> Result<Evaluation<T>> {
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
        let built = self.changeset(&baseline, &scope).await?;
        let changeset = built.changeset;
        let changed_files = changeset.changes.len();
        let params = EvaluateParams {
            call_site,
            changeset,
            comparison: Some(comparison),
            timeout_ms: None,
        };
        let reply = client
            .call(proto::EVALUATE_CHANGESET, Some(&params), call)
            .await?;
        Ok(Evaluation {
            decision: reply.value,
            changed_files,
            skipped: built.skipped,
        })
    }
}
