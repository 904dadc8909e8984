//! The provider's side of the inner seam: the lifecycle (`initialize`, the `initialized` grant,
//! `shutdown`, `exit`) and `check/evaluate` (or its legacy name `judge/evaluate`), served by
//! bridge-core's JSON-RPC peer. Content is read only through the host's callbacks on the same
//! connection; `$/cancelRequest` aborts an evaluation (the peer drops it and its pending callbacks).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::{
    Answer, BoxFuture, CallOptions, Handler, IncomingRequest, Peer, error_object, method_not_found,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::evaluate::{Provenance, Workspace, evaluate};
use crate::request::Request;
use crate::rules::SOURCE;
use crate::wire::{
    BlobData, CAPABILITY_VERSION, InitializeParams, InitializedParams, ListTreeResult, PROTOCOL,
    ReadBlobResult, TreeEntry,
};

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

/// The request handler; `exit` is signalled on `exit`.
pub(crate) struct Provider {
    state: Mutex<State>,
    provenance: Provenance,
    exit: Arc<Notify>,
}

impl Provider {
    pub(crate) fn new(provenance: Provenance, exit: Arc<Notify>) -> Provider {
        Provider {
            state: Mutex::new(State {
                phase: Phase::Spawned,
                budget: DEFAULT_BUDGET,
            }),
            provenance,
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
        Ok(json!({
            "serverInfo": {
                "name": SOURCE,
                "version": self.provenance.version,
                "fingerprint": self.provenance.build_digest,
            },
            "capabilityFamilies": ["check"],
            "capabilities": {
                "check": {
                    "capabilityVersion": CAPABILITY_VERSION,
                    "diagnosticSources": [SOURCE],
                    "scopes": ["changeset", "workspace"],
                    "comparisons": ["introduced", "all", "resolved"],
                    "partialResults": false,
                    "incremental": false,
                    "unsupportedReporting": "assessment-status",
                    "fixes": false,
                }
            },
            "requestedPermissions": {"read": ["**/*"], "write": false, "network": false},
            "provenance": {"publisher": "asp-bridge"},
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

impl Handler for Provider {
    fn request(&self, request: IncomingRequest) -> Answer {
        let immediate = |value: Result<Value, ErrorObject>| -> BoxFuture<'static, _> {
            Box::pin(async move { value.and_then(|v| raw(&v)) })
        };
        match request.method.as_str() {
            "initialize" => immediate(self.initialize(&request)),
            "shutdown" => {
                self.state().phase = Phase::ShuttingDown;
                immediate(Ok(Value::Null))
            }
            "check/evaluate" | "judge/evaluate" => {
                let deadline = match self.admit() {
                    Ok(deadline) => deadline,
                    Err(error) => return immediate(Err(error)),
                };
                let params: Value = match request.params() {
                    Ok(params) => params,
                    Err(error) => return immediate(Err(error)),
                };
                let parsed = match Request::parse(&params) {
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
                let provenance = self.provenance.clone();
                let callbacks = Callbacks { peer: request.peer };
                Box::pin(async move {
                    let assessment = evaluate(&callbacks, parsed, deadline, &provenance).await;
                    let value = serde_json::to_value(assessment).map_err(|e| internal(&e))?;
                    raw(&value)
                })
            }
            other => immediate(Err(method_not_found(other))),
        }
    }

    fn notification(&self, method: &str, params: Option<Box<RawValue>>) {
        match method {
            "initialized" => {
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
            "exit" => self.exit.notify_one(),
            other => tracing::debug!(method = %other, "notification ignored"),
        }
    }
}

fn raw(value: &Value) -> Result<Box<RawValue>, ErrorObject> {
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
            "workspace/readBlob",
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
        let call = self.peer.request::<_, ListTreeResult>(
            "workspace/listTree",
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
