//! One evaluation of the working tree, the same for every front end: the host's baseline (asked with
//! `host/status` unless the caller already has it), the changeset of the working tree against it
//! (built off the async threads, see [`crate::changeset`]), then `host/evaluateChangeset` at an
//! advisory call site. MCP (`asp_diagnostics`), the language server and `sarif` all come through
//! [`Worktree::evaluate`].
//!
//! CI sweeps change the base: [`Base::Rev`] compares with the merge base of a revision and `HEAD`
//! (a branch and its commits), [`Scope::AllFiles`] sends every tracked file against the empty tree.
//! Either way the changeset names a baseline of its own, which the host verifies; a host that
//! refuses it (`stale-baseline`) is an error naming both baselines. A changeset larger than
//! [`Evaluate::batch_files`] files or [`Evaluate::batch_bytes`] bytes goes in several requests
//! whose decisions are merged into one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::changeset;
use crate::error::{Error, Result};
use crate::host::{CallOptions, HostClient};
use asp_wire::proto::{self, AdvisoryCallSite, ChangeSet, Comparison, Decision, EvaluateParams};
use asp_wire::text;

mod merge;

/// How many changes of `sizes` (bytes each) go in each request: in order, at most `files` changes
/// and `bytes` bytes a request, a change larger than `bytes` alone. At least one request.
pub(crate) fn batch_plan(sizes: &[u64], files: usize, bytes: u64) -> Vec<usize> {
    let files = files.max(1);
    let mut plan = vec![0usize];
    let mut held = 0u64;
    for &size in sizes {
        let last = plan.len() - 1;
        if plan[last] > 0 && (plan[last] == files || held.saturating_add(size) > bytes) {
            plan.push(0);
            held = 0;
        }
        let last = plan.len() - 1;
        plan[last] += 1;
        held = held.saturating_add(size);
    }
    plan
}

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
    /// Most files in one `host/evaluateChangeset`; a larger changeset is sent in batches whose
    /// decisions are merged into one (see [`merge`]). At least 1.
    pub batch_files: usize,
    /// Most bytes of working-tree content in one `host/evaluateChangeset` (the host reads and
    /// holds what a request names); a file larger than this goes alone. At least 1.
    pub batch_bytes: u64,
    /// Repo-relative paths kept out of the changeset: what the caller writes itself (the SARIF log
    /// `sarif --output` puts inside the workspace), which is no change of the user's.
    pub leave_out: Vec<String>,
}

/// Files per request of a sweep unless [`Evaluate::batch_files`] says otherwise.
pub const BATCH_FILES: usize = 500;
/// Bytes per request unless [`Evaluate::batch_bytes`] says otherwise: 64 MiB.
pub const BATCH_BYTES: u64 = 64 << 20;

/// Which files of the working tree are evaluated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// Every change of the working tree against the base (tracked and untracked files).
    #[default]
    Changes,
    /// The changes under these repo-relative paths (already confined by the caller).
    Paths(Vec<String>),
    /// Every tracked file as it is now, each a `create` against the empty tree (a full sweep); the
    /// base is then the empty tree whatever [`Base`] says.
    AllFiles,
    /// Every file under these repo-relative paths as it is now (tracked or not, already confined by
    /// the caller), each a `create` against the empty tree: those files checked whole; the base is
    /// then the empty tree whatever [`Base`] says.
    Files(Vec<String>),
}

/// Where the before-content of the changeset comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Base {
    /// The git tree or commit the host's baseline names, else `HEAD`, else the empty tree.
    #[default]
    Baseline,
    /// The merge base of this revision (a branch, a tag, a commit) and `HEAD`: the changes of a
    /// branch since it left the branch it is based on, its commits included. The changeset names
    /// the merge base's tree as its baseline, so the host must accept a baseline other than its own
    /// (one that refuses it, `stale-baseline`, is an error that says so).
    Rev(String),
}

/// The host's decision on the working tree (a [`Decision`], or what [`Worktree::evaluate_as`] was
/// asked to decode it as), with what was sent.
#[derive(Clone, Debug)]
pub struct Evaluation<T = Decision> {
    pub decision: T,
    /// How many files the changeset held.
    pub changed_files: usize,
    /// Paths of the working tree left out (a FIFO, a socket, a device, a nested repository), and
    /// the changed paths the host says its configuration left out (`exclude`), each with why.
    pub skipped: Vec<changeset::Skipped>,
    /// How many requests the changeset took (within [`Evaluate::batch_files`] and
    /// [`Evaluate::batch_bytes`] each).
    pub batches: usize,
    /// With [`Base::Rev`]: what the revision resolved to.
    pub merge_base: Option<changeset::MergeBase>,
}

/// What an evaluation sends, worked out before the host is asked ([`Worktree::plan`]).
#[derive(Clone, Debug)]
pub struct Plan {
    /// The changeset, whole; it is sent in `batches` requests.
    pub built: changeset::Built,
    /// With [`Base::Rev`]: what the revision resolved to.
    pub merge_base: Option<changeset::MergeBase>,
    pub batches: usize,
    /// How many changes each request takes, in order (`batches` of them).
    pub batch_files: Vec<usize>,
}

impl Plan {
    /// This plan, for a host whose status names `baseline`: kept, echoing `baseline` as the host
    /// issued it, when it names the revision the plan was made against; else `None` (plan again).
    pub fn for_baseline(mut self, baseline: &Value) -> Option<Plan> {
        fn rev(baseline: &Value) -> Option<&str> {
            baseline.get("rev").and_then(Value::as_str)
        }
        let same = rev(baseline).is_some_and(|r| rev(&self.built.changeset.baseline) == Some(r));
        same.then(|| {
            self.built.changeset.baseline = baseline.clone();
            self
        })
    }
}

/// How far a batched evaluation has come, after each answered batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Batches answered so far, of `batches`.
    pub batch: usize,
    pub batches: usize,
    /// Files sent so far, of `files`.
    pub sent_files: usize,
    pub files: usize,
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
            batch_files: BATCH_FILES,
            batch_bytes: BATCH_BYTES,
            leave_out: Vec::new(),
        }
    }

    /// Whether the changeset names a baseline of its own rather than the host's.
    pub fn own_baseline(&self) -> bool {
        self.whole_files() || matches!(self.base, Base::Rev(_))
    }

    /// Whether files are sent whole, against the empty tree.
    fn whole_files(&self) -> bool {
        matches!(self.scope, Scope::AllFiles | Scope::Files(_))
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

    /// The changeset of the working tree against `baseline` (echoed as the host issued it); with
    /// [`Scope::AllFiles`], every tracked file against the empty tree (`baseline` is not used).
    pub async fn changeset(&self, baseline: &Value, scope: &Scope) -> Result<changeset::Built> {
        let paths = match scope {
            Scope::Changes => None,
            Scope::Paths(paths) => Some(paths.as_slice()),
            Scope::AllFiles => {
                let tree = changeset::empty_tree(&self.root, &self.cache).await?;
                let empty = json!({"rev": format!("git:tree:{tree}")});
                return changeset::build_all(&self.root, &self.cache, &empty).await;
            }
            Scope::Files(paths) => {
                let tree = changeset::empty_tree(&self.root, &self.cache).await?;
                let empty = json!({"rev": format!("git:tree:{tree}")});
                return changeset::build(&self.root, &self.cache, &empty, Some(paths)).await;
            }
        };
        changeset::build(&self.root, &self.cache, baseline, paths).await
    }

    /// What `request` would send, without asking the host: the base resolved, the changeset built
    /// (against `request.baseline` with [`Base::Baseline`]; `HEAD` when that is `None`) and how
    /// many requests it takes.
    pub async fn plan(&self, request: &Evaluate) -> Result<Plan> {
        let (baseline, merge_base) = match (&request.scope, &request.base) {
            (_, Base::Rev(rev)) if !request.whole_files() => {
                let found = changeset::merge_base(&self.root, &self.cache, rev).await?;
                (
                    json!({"rev": format!("git:tree:{}", found.tree)}),
                    Some(found),
                )
            }
            _ => (request.baseline.clone().unwrap_or(Value::Null), None),
        };
        let mut built = self.changeset(&baseline, &request.scope).await?;
        if !request.leave_out.is_empty() {
            built
                .changeset
                .changes
                .retain(|change| !request.leave_out.contains(&change.path));
        }
        // What the host reads and holds for each change: its working-tree file's length, as read.
        let sizes: Vec<u64> = built
            .changeset
            .changes
            .iter()
            .map(|c| built.sizes.get(&c.path).copied().unwrap_or(0))
            .collect();
        let batch_files = batch_plan(&sizes, request.batch_files, request.batch_bytes);
        Ok(Plan {
            built,
            merge_base,
            batches: batch_files.len(),
            batch_files,
        })
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
    /// deadline and where its `$/progress` goes. A changeset of more than
    /// [`Evaluate::batch_files`] files is sent in batches, their decisions merged into one.
    pub async fn evaluate(
        &self,
        client: &HostClient,
        request: Evaluate,
        call: CallOptions,
    ) -> Result<Evaluation> {
        self.evaluate_with(client, request, call, |_| {}).await
    }

    /// [`Worktree::evaluate`], telling `progress` after each batch. Each batch has `call`'s
    /// deadline; host `$/progress` is relayed for the first batch only.
    pub async fn evaluate_with(
        &self,
        client: &HostClient,
        mut request: Evaluate,
        call: CallOptions,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<Evaluation> {
        self.host_baseline(client, &mut request).await?;
        let plan = self.plan(&request).await?;
        self.evaluate_plan(client, &request, plan, call, progress)
            .await
    }

    /// A plan made before the host names its baseline, against the one the embedded host names on
    /// a clean start (`git:tree:` of `HEAD`'s tree), so that the working tree is read while the
    /// host starts; [`Plan::for_baseline`] keeps it only if the host names that tree. `None`
    /// before the first commit.
    pub async fn plan_at_head(&self, request: &Evaluate) -> Result<Option<Plan>> {
        let Some(rev) = changeset::head_baseline(&self.root, &self.cache).await? else {
            return Ok(None);
        };
        let guess = Evaluate {
            baseline: Some(json!({ "rev": rev })),
            ..request.clone()
        };
        Ok(Some(self.plan(&guess).await?))
    }

    /// [`Worktree::evaluate_with`] of a plan made already: a sweep with a baseline of its own
    /// ([`Evaluate::own_baseline`]) can be planned while the host starts.
    pub async fn evaluate_plan(
        &self,
        client: &HostClient,
        request: &Evaluate,
        plan: Plan,
        call: CallOptions,
        mut progress: impl FnMut(Progress) + Send,
    ) -> Result<Evaluation> {
        let changeset::Built {
            changeset,
            mut skipped,
            ..
        } = plan.built;
        let files = changeset.changes.len();
        let timeout = call.timeout;
        let mut call = Some(call);
        let mut decisions = Vec::with_capacity(plan.batches);
        let mut changes = changeset.changes.into_iter();
        let mut sent_files = 0;
        for (batch, &size) in (1..).zip(&plan.batch_files) {
            let part = ChangeSet {
                baseline: changeset.baseline.clone(),
                changes: changes.by_ref().take(size).collect(),
            };
            sent_files += part.changes.len();
            let options = call.take().unwrap_or(CallOptions {
                timeout,
                progress: None,
            });
            let (decision, left) = self
                .send(client, request, plan.merge_base.as_ref(), part, options)
                .await?;
            decisions.push(decision);
            skipped.extend(left);
            progress(Progress {
                batch,
                batches: plan.batches,
                sent_files,
                files,
            });
        }
        Ok(Evaluation {
            decision: merge::merge(decisions),
            changed_files: files,
            skipped,
            batches: plan.batches,
            merge_base: plan.merge_base,
        })
    }

    /// [`Worktree::evaluate`] in one request, with the host's decision decoded as `T`: a front end
    /// that shows only part of it (the language server: the findings of one document) decodes only
    /// that part. A changeset past [`Evaluate::batch_files`] files or [`Evaluate::batch_bytes`]
    /// bytes is an `input` error here.
    pub async fn evaluate_as<T: DeserializeOwned>(
        &self,
        client: &HostClient,
        mut request: Evaluate,
        call: CallOptions,
    ) -> Result<Evaluation<T>> {
        self.host_baseline(client, &mut request).await?;
        let plan = self.plan(&request).await?;
        let changeset = plan.built.changeset;
        let changed_files = changeset.changes.len();
        if plan.batches > 1 {
            return Err(Error::Input(format!(
                "{changed_files} changed files do not fit one request of at most {} files and {} bytes",
                request.batch_files, request.batch_bytes
            )));
        }
        let (decision, left) = self
            .send(client, &request, plan.merge_base.as_ref(), changeset, call)
            .await?;
        let mut skipped = plan.built.skipped;
        skipped.extend(left);
        Ok(Evaluation {
            decision,
            changed_files,
            skipped,
            batches: 1,
            merge_base: plan.merge_base,
        })
    }

    /// Reads the host's baseline into `request` when the changeset is to be built against it and
    /// the caller does not have it.
    async fn host_baseline(&self, client: &HostClient, request: &mut Evaluate) -> Result<()> {
        if !request.own_baseline() && request.baseline.is_none() {
            request.baseline = Some(client.status().await?.value.workspace.baseline);
        }
        Ok(())
    }

    /// One `host/evaluateChangeset`. When the changeset names a baseline of its own and the host
    /// refuses it (`stale-baseline`, as an error or in its coverage), the error says which baseline
    /// was sent, why, and the host's own.
    async fn send<T: DeserializeOwned>(
        &self,
        client: &HostClient,
        request: &Evaluate,
        merge_base: Option<&changeset::MergeBase>,
        changeset: ChangeSet,
        call: CallOptions,
    ) -> Result<(T, Vec<changeset::Skipped>)> {
        let sent = changeset.baseline["rev"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let paths: std::collections::HashSet<String> =
            changeset.changes.iter().map(|c| c.path.clone()).collect();
        let params = EvaluateParams {
            call_site: request.call_site,
            changeset,
            comparison: Some(request.comparison),
            timeout_ms: None,
        };
        let reply = client
            .call(proto::EVALUATE_CHANGESET, Some(&params), call)
            .await;
        // The changed paths the host's configuration left out: reported left out, never clean.
        let left_out = |raw: &serde_json::value::RawValue| {
            let seen: Refusals = serde_json::from_str(raw.get()).unwrap_or_default();
            seen.left_out(&paths)
        };
        if !request.own_baseline() {
            let reply = reply?;
            let left = left_out(&reply.raw);
            return Ok((reply.value, left));
        }
        let what = match merge_base {
            Some(found) => format!(
                "the tree of {}, the merge base of {:?} and HEAD",
                short(&found.base),
                found.rev
            ),
            None => "the empty tree of an all-files sweep".to_owned(),
        };
        match reply {
            Err(Error::Peer(rpc_peer::Error::Refused {
                role,
                method,
                code: STALE_BASELINE_CODE,
                message,
                detail,
                fail_class,
                retryable,
            })) => Err(Error::Peer(rpc_peer::Error::Refused {
                role,
                message: self
                    .refused_baseline(client, request, &sent, &what, &message)
                    .await,
                method,
                code: STALE_BASELINE_CODE,
                detail,
                fail_class,
                retryable,
            })),
            Err(error) => Err(error),
            Ok(reply) => {
                let seen: Refusals = serde_json::from_str(reply.raw.get()).unwrap_or_default();
                match seen.stale_baseline() {
                    Some(detail) => Err(Error::Input(
                        self.refused_baseline(client, request, &sent, &what, &detail)
                            .await,
                    )),
                    None => Ok((reply.value, seen.left_out(&paths))),
                }
            }
        }
    }

    async fn refused_baseline(
        &self,
        client: &HostClient,
        request: &Evaluate,
        sent: &str,
        what: &str,
        detail: &str,
    ) -> String {
        let own = match &request.baseline {
            Some(baseline) => Some(baseline.clone()),
            None => client
                .status()
                .await
                .ok()
                .map(|s| s.value.workspace.baseline),
        };
        let own = own.as_ref().and_then(|b| b["rev"].as_str()).map_or_else(
            || "unknown".to_owned(),
            |rev| text::one_line(rev, 120).into_owned(),
        );
        format!(
            "the host refused the baseline {sent} ({what}) as stale-baseline: {}; the host's own \
             baseline is {own}, and this host evaluates changes against that one only",
            text::one_line(detail, 300)
        )
    }
}

/// `stale_baseline` in the ASP error registry (`spec/02`).
const STALE_BASELINE_CODE: i64 = asp_wire::code::STALE_BASELINE;

/// Where a host that answers says it refused the changeset's baseline.
#[derive(Debug, Default, Deserialize)]
struct Refusals {
    #[serde(default)]
    coverage: RefusedCoverage,
    #[serde(default)]
    receipt: RefusedReceipt,
}

#[derive(Debug, Default, Deserialize)]
struct RefusedCoverage {
    #[serde(default)]
    degraded: Vec<proto::Degradation>,
}

#[derive(Debug, Default, Deserialize)]
struct RefusedReceipt {
    #[serde(default)]
    failures: Vec<proto::Degradation>,
}

impl Refusals {
    fn stale_baseline(&self) -> Option<String> {
        self.coverage
            .degraded
            .iter()
            .chain(&self.receipt.failures)
            .find(|d| d.is(asp_wire::reason::Reason::StaleBaseline))
            .map(|d| d.detail.clone())
    }

    /// The entries that say a path of `sent` was left out by the host's configuration
    /// ([`asp_wire::reason::LEFT_OUT_BY_CONFIGURATION`]), each path once, with the host's reason.
    fn left_out(&self, sent: &std::collections::HashSet<String>) -> Vec<changeset::Skipped> {
        let mut out: Vec<changeset::Skipped> = Vec::new();
        for d in self.coverage.degraded.iter().chain(&self.receipt.failures) {
            let entry = crate::model::NotRun::from(d);
            if !entry.is_left_out() || !sent.contains(&d.source) {
                continue;
            }
            if out.iter().all(|s| s.path != d.source) {
                let why = d
                    .detail
                    .strip_prefix(asp_wire::reason::LEFT_OUT_BY_CONFIGURATION)
                    .unwrap_or(&d.detail);
                out.push(changeset::Skipped {
                    path: d.source.clone(),
                    why: text::one_line(why, 300).into_owned(),
                });
            }
        }
        out
    }
}

/// The first 12 characters of an object id.
fn short(oid: &str) -> &str {
    oid.get(..12).unwrap_or(oid)
}

#[cfg(test)]
mod tests {
    use super::batch_plan;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_changeset_is_split_by_bytes_as_well_as_by_files() {
        // 300 files of 7 MiB: 9 a request of 64 MiB, where by files alone one request held them all.
        let plan = batch_plan(&[7 * MIB; 300], 500, 64 * MIB);
        assert_eq!(plan.len(), 34);
        assert!(plan[..33].iter().all(|&n| n == 9), "{plan:?}");
        assert_eq!(plan[33], 3);
        assert_eq!(plan.iter().sum::<usize>(), 300);
        // By files when the files are small.
        assert_eq!(batch_plan(&[1; 7], 3, 64 * MIB), [3, 3, 1]);
        // A file larger than the byte budget goes alone, between its neighbours.
        assert_eq!(batch_plan(&[MIB, 100 * MIB, MIB], 500, 64 * MIB), [1, 1, 1]);
        // An empty changeset is one (empty) request.
        assert_eq!(batch_plan(&[], 500, 64 * MIB), [0]);
    }
}
