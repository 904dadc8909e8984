//! The provider's side of the inner seam: the lifecycle (`initialize`, the `initialized` grant,
//! `shutdown`, `exit`) and `check/evaluate` (or its legacy name `judge/evaluate`) with a
//! [`Checker`]'s checks, served by bridge-core's JSON-RPC peer. Content is read only through the
//! host's callbacks on the same connection; `$/cancelRequest` aborts an evaluation (the peer drops
//! it and its pending callbacks, which raises the evaluation's stop signal).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use asp_wire::{inner, proto};
use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::{
    self, Answer, BoxFuture, CallOptions, Handler, IncomingRequest, Peer, PeerConfig, error_object,
    method_not_found,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use crate::checker::{Checker, Identity};

use crate::evaluate::evaluate;
use crate::request::{Comparison, Request};
use crate::wire::{
    BlobData, CAPABILITY_VERSION, InitializeParams, InitializedParams, ListTreeResult, PROTOCOL,
    ReadBlobResult, TreeEntry,
};
use crate::workspace::Workspace;

/// Largest frame read from the host: one `workspace/readBlob` answer carries up to a chunk of
/// files (`evaluate::CHUNK`), base64-encoded; a larger answer fails its call, and the provider then
/// reads the batch in halves.
const MAX_FRAME: usize = 64 * 1024 * 1024;
/// How long running evaluations may finish once the host closed its end.
const DRAIN: Duration = Duration::from_secs(2);
/// Deadline of an evaluation when the grant names no wall-clock limit.
const DEFAULT_BUDGET: Duration = Duration::from_secs(25);
/// Share of the granted wall clock spent checking; the rest is left for the answer to travel.
const BUDGET_SHARE: f64 = 0.8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Started; only `initialize` is served.
    Spawned,
    /// `initialize` answered; work is served (the `initialized` grant may still be on its way).
    Active,
    /// `shutdown` received: no more work.
    ShuttingDown,
}

struct State {
    phase: Phase,
    budget: Duration,
}

/// Serves the inner seam over `reader`/`writer` (the host's output and input) with `checker`'s
/// checks until the host closes its end or sends `exit`.
pub async fn serve<C, R, W>(
    reader: R,
    writer: W,
    checker: C,
    identity: Identity,
) -> crate::error::Result<()>
where
    C: Checker,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let exit = Arc::new(Notify::new());
    let provider = Provider::new(Arc::new(checker), identity, exit.clone());
    let config = PeerConfig {
        max_frame: MAX_FRAME,
        classify: asp_wire::code::fail_class,
        ..PeerConfig::default()
    };
    tokio::select! {
        served = peer::serve(reader, writer, config, Arc::new(provider), DRAIN) => served?,
        () = exit.notified() => tracing::debug!("exit received"),
    }
    Ok(())
}

/// The request handler; `exit` is signalled on `exit`.
struct Provider<C> {
    state: Mutex<State>,
    checker: Arc<C>,
    identity: Identity,
    exit: Arc<Notify>,
}

impl<C: Checker> Provider<C> {
    fn new(checker: Arc<C>, identity: Identity, exit: Arc<Notify>) -> Provider<C> {
        Provider {
            state: Mutex::new(State {
                phase: Phase::Spawned,
                budget: DEFAULT_BUDGET,
            }),
            checker,
            identity,
            exit,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        rpc_peer::lock(&self.state)
    }

    fn initialize(&self, request: &IncomingRequest) -> Result<Value, ErrorObject> {
        let params: InitializeParams = request.params()?;
        let mut state = self.state();
        if state.phase != Phase::Spawned {
            return Err(error_object(
                rpc_peer::jsonrpc::INVALID_REQUEST,
                "already initialized".into(),
                FailClass::Contract,
                false,
            ));
        }
        if params.protocol_version.split('.').next() != PROTOCOL.split('.').next() {
            return Err(error_object(
                asp_wire::code::UNSUPPORTED_VERSION,
                format!(
                    "unsupported protocol version {:?}: this provider speaks {PROTOCOL}",
                    params.protocol_version
                ),
                FailClass::Contract,
                false,
            ));
        }
        state.phase = Phase::Active;
        let about = self.checker.about();
        Ok(json!({
            "serverInfo": {
                "name": about.id,
                "version": self.identity.version,
                "fingerprint": self.identity.fingerprint,
            },
            "capabilityFamilies": ["check"],
            "capabilities": {
                "check": {
                    "capabilityVersion": CAPABILITY_VERSION,
                    "diagnosticSources": [about.source],
                    "scopes": ["changeset", "workspace"],
                    "comparisons": Comparison::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
                    "partialResults": false,
                    "incremental": false,
                    "unsupportedReporting": "assessment-status",
                    "fixes": false,
                }
            },
            "requestedPermissions": {"read": ["**/*"], "write": false, "network": false},
            "provenance": {"publisher": about.publisher},
        }))
    }

    /// Checks the phase and gives the evaluation's deadline.
    fn admit(&self) -> Result<Instant, ErrorObject> {
        let state = self.state();
        match state.phase {
            Phase::Spawned => Err(error_object(
                asp_wire::code::NOT_INITIALIZED,
                "not initialized: send `initialize` first".into(),
                FailClass::Contract,
                false,
            )),
            Phase::ShuttingDown => Err(error_object(
                asp_wire::code::HEALTH_NOT_READY,
                "shutting down".into(),
                FailClass::Health,
                false,
            )),
            Phase::Active => Ok(Instant::now() + state.budget),
        }
    }
}

impl<C: Checker> Handler for Provider<C> {
    fn request(&self, request: IncomingRequest) -> Answer {
        let immediate = |value: Result<Value, ErrorObject>| -> BoxFuture<'static, _> {
            Box::pin(async move { value.and_then(|v| raw(&v)) })
        };
        match request.method.as_str() {
            inner::INITIALIZE => immediate(self.initialize(&request)),
            proto::SHUTDOWN => {
                self.state().phase = Phase::ShuttingDown;
                immediate(Ok(Value::Null))
            }
            inner::CHECK_EVALUATE | inner::JUDGE_EVALUATE => {
                let deadline = match self.admit() {
                    Ok(deadline) => deadline,
                    Err(error) => return immediate(Err(error)),
                };
                let params: Value = match request.params() {
                    Ok(params) => params,
                    Err(error) => return immediate(Err(error)),
                };
                let parsed = match Request::parse(&params, &*self.checker) {
                    Ok(parsed) => parsed,
                    Err(why) => {
                        return immediate(Err(error_object(
                            rpc_peer::jsonrpc::INVALID_PARAMS,
                            format!("invalid check/evaluate params: {why}"),
                            FailClass::Input,
                            false,
                        )));
                    }
                };
                let (checker, identity) = (self.checker.clone(), self.identity.clone());
                let callbacks = Callbacks { peer: request.peer };
                Box::pin(async move {
                    let assessment =
                        evaluate(&*checker, &callbacks, parsed, deadline, &identity).await;
                    // Written straight from the structs: no `Value` tree of every finding.
                    raw(&assessment)
                })
            }
            other => immediate(Err(method_not_found(other))),
        }
    }

    fn notification(&self, method: &str, params: Option<Box<RawValue>>) {
        match method {
            inner::INITIALIZED => {
                let text = params.as_deref().map_or("{}", RawValue::get);
                match serde_json::from_str::<InitializedParams>(text) {
                    Ok(grant) => {
                        let wallclock = grant
                            .granted_permissions
                            .resource_limits
                            .and_then(|l| l.wallclock_ms)
                            .filter(|ms| *ms > 0);
                        if let Some(ms) = wallclock {
                            self.state().budget = Duration::from_millis(ms).mul_f64(BUDGET_SHARE);
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "an `initialized` grant that does not parse")
                    }
                }
            }
            proto::EXIT => self.exit.notify_one(),
            other => tracing::debug!(method = %other, "notification ignored"),
        }
    }
}

fn raw(value: &impl serde::Serialize) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(value).map_err(|e| internal(&e))
}

fn internal(error: &dyn std::fmt::Display) -> ErrorObject {
    error_object(
        rpc_peer::jsonrpc::INTERNAL_ERROR,
        format!("internal error: {error}"),
        FailClass::Health,
        false,
    )
}

/// The host's callbacks on the connection the request came on.
struct Callbacks {
    peer: Peer,
}

impl Workspace for Callbacks {
    fn read_blobs(
        &self,
        ids: Vec<String>,
        timeout: Duration,
    ) -> impl Future<Output = Result<Vec<BlobData>, String>> + Send {
        let call = self.peer.request::<_, ReadBlobResult>(
            inner::READ_BLOB,
            Some(&json!({ "blobs": ids })),
            CallOptions {
                timeout: Some(timeout),
                ..CallOptions::default()
            },
        );
        async move {
            call.await
                .map(|reply| reply.value.blobs)
                .map_err(|e| e.to_string())
        }
    }

    fn list_tree(
        &self,
        paths: Option<Vec<String>>,
        timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send {
        let params = match paths {
            Some(paths) => json!({ "paths": paths }),
            None => json!({}),
        };
        self.list(params, timeout)
    }

    fn list_globs(
        &self,
        globs: Vec<String>,
        timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send {
        self.list(json!({ "globs": globs }), timeout)
    }
}

impl Callbacks {
    /// `workspace/listTree` with `params`.
    fn list(
        &self,
        params: Value,
        timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send + use<> {
        let call = self.peer.request::<_, ListTreeResult>(
            inner::LIST_TREE,
            Some(&params),
            CallOptions {
                timeout: Some(timeout),
                ..CallOptions::default()
            },
        );
        async move {
            call.await
                .map(|reply| (reply.value.entries, reply.value.truncated))
                .map_err(|e| e.to_string())
        }
    }
}
