//! What the benchmarks of the embedded host and of the hygiene provider share: a child process with
//! a peer on its stdio, reaped with its peak memory; calls with a deadline; a host's
//! `workspace/readBlob` served from memory; and the requests that open and ask each side, so that
//! both sides are asked the same way in every benchmark.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rpc_peer::ExitStatus;
use rpc_peer::peer::{Answer, CallOptions, ExitProbe, Handler, IncomingRequest, Peer, PeerConfig};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::{ChildStdin, ChildStdout};

/// A child process reaped with `wait4`, so that its peak resident memory can be read.
pub(crate) struct Child {
    pid: libc::pid_t,
    pub(crate) peer: Peer,
}

impl Child {
    /// Spawns `program args` with piped stdio and connects a peer; stderr is discarded.
    // The child is reaped by `wait4` (in `finish`), which `Child::wait` cannot be combined with.
    #[allow(clippy::zombie_processes)]
    pub(crate) fn spawn(program: &str, args: &[String], handler: Arc<dyn Handler>) -> Child {
        let mut child = test_support::process::piped(program, args);
        let pid = libc::pid_t::try_from(child.id()).expect("a pid");
        let (stdin, stdout) = (
            child.stdin.take().expect("stdin"),
            child.stdout.take().expect("stdout"),
        );
        // The std handles go to tokio; `Child` is dropped unwaited, and `wait4` reaps it below.
        let stdin = ChildStdin::from_std(stdin).expect("stdin");
        let stdout = ChildStdout::from_std(stdout).expect("stdout");
        let probe: ExitProbe =
            Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
        let config = PeerConfig {
            max_frame: 256 << 20,
            ..PeerConfig::default()
        };
        let peer = Peer::connect(BufReader::new(stdout), stdin, config, handler, probe);
        Child { pid, peer }
    }

    /// Closes the child's stdin, waits for it to exit: its peak resident set, in KiB. The wait is
    /// off the runtime's thread, which must go on to close the pipe.
    pub(crate) async fn finish(self) -> u64 {
        self.peer.close_input();
        let pid = self.pid;
        let waited = tokio::task::spawn_blocking(move || super::rusage::wait4(pid));
        let (status, peak) = waited.await.expect("wait4");
        assert!(
            super::rusage::succeeded(status),
            "the child failed: status {status}"
        );
        drop(self.peer);
        peak
    }
}

/// Serves `workspace/readBlob` from memory: blob id → text, as cheaply as a host could, so that
/// what is timed is the other side.
pub(crate) struct Blobs(pub(crate) HashMap<String, String>);

impl Handler for Blobs {
    fn request(&self, request: IncomingRequest) -> Answer {
        let params: Value = request.params().unwrap_or_default();
        let blobs: Vec<Value> = params["blobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|id| id.as_str())
            .map(|id| json!({"id": id, "encoding": "utf-8", "bytes": self.0.get(id).cloned().unwrap_or_default()}))
            .collect();
        let answer = json!({"blobs": blobs}).to_string();
        Box::pin(async move { Ok(RawValue::from_string(answer).expect("json")) })
    }
}

/// A call's options: no progress, `deadline`.
pub(crate) fn within(deadline: Duration) -> CallOptions {
    CallOptions {
        timeout: Some(deadline),
        progress: None,
    }
}

/// Calls `method` and parses its result; anything else ends the benchmark.
pub(crate) async fn call(peer: &Peer, method: &str, params: &Value, deadline: Duration) -> Value {
    let raw = peer
        .request_raw(method, Some(params), within(deadline))
        .await
        .expect(method);
    serde_json::from_str(raw.get()).expect("json")
}

/// The arguments of `asp-bridge host serve` on `repo` with the trusted configuration `config`.
pub(crate) fn host_serve(repo: &Path, config: &Path) -> Vec<String> {
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
    [
        "host",
        "serve",
        "--repo",
        &path(repo),
        "--config",
        &path(config),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// What a host is asked to evaluate: the working tree of `repo` against its baseline.
pub(crate) struct Evaluation {
    /// `workspace.baseline` of `host/status`.
    pub(crate) baseline: Value,
    /// The ChangeSet of the working tree.
    pub(crate) changeset: Value,
    /// `host/evaluateChangeset` params: the changeset at `interactive`, comparison `all`.
    pub(crate) params: Value,
}

/// Asks `host` for its baseline and builds the changeset of `repo`'s working tree against it, as
/// every front end of the bridge does.
pub(crate) async fn evaluation(host: &Peer, repo: &Path, deadline: Duration) -> Evaluation {
    let status = call(host, "host/status", &json!({}), deadline).await;
    let baseline = status["workspace"]["baseline"].clone();
    let built = bridge_core::Worktree::new(repo)
        .changeset(&baseline, &bridge_core::worktree::Scope::Changes)
        .await
        .expect("changeset");
    let changeset = serde_json::to_value(&built.changeset).expect("json");
    let params = json!({"callSite": "interactive", "changeset": changeset, "comparison": "all"});
    Evaluation {
        baseline,
        changeset,
        params,
    }
}

/// Opens a provider's session as a host would: `initialize`, then `initialized` with a grant to
/// read everything within `resource_limits`. Returns the `check/evaluate` params of `evaluation`.
pub(crate) async fn open_provider(
    provider: &Peer,
    repo: &Path,
    evaluation: &Evaluation,
    resource_limits: Value,
    deadline: Duration,
) -> Value {
    let baseline = &evaluation.baseline;
    let init = json!({"protocolVersion": "asp/1.0", "host": {"name": "bench", "version": "0"},
        "workspace": {"root": repo, "baseline": baseline}});
    call(provider, "initialize", &init, deadline).await;
    let grant = json!({"read": ["**"], "write": false, "network": false,
        "resourceLimits": resource_limits});
    provider
        .notify(
            "initialized",
            Some(&json!({"grantedPermissions": grant, "baseline": baseline})),
        )
        .expect("initialized");
    json!({"changeset": evaluation.changeset, "scope": "changeset", "comparison": "all",
        "changesetDigest": "sha256:bench"})
}
