//! One running provider process: its start (spawn, `initialize`, `initialized`), its calls and its
//! shutdown. Process handling is rpc-peer's (`rpc_peer::child`), supervision rpc-peer's supervisor
//! ([`launch`](super::launch)).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use asp_wire::inner;
use asp_wire::proto::Lifecycle;
use asp_wire::reason::Reason;
use rpc_peer::child::{self, ChildPeer, ChildSpec};
use rpc_peer::peer::{CallOptions, Peer, PeerConfig};
use rpc_peer::{ExitStatus, FailClass};
use serde_json::{Value, json};

use super::{Failure, Identity, from_asp01};
use crate::callbacks::{Callbacks, Scope};
use crate::config::{Protocol, ProviderSpec};
use crate::glob::GlobSet;
use crate::json;
use crate::receipt::{HOST_NAME, HOST_VERSION};
use crate::schema::{self, Shape};
use crate::snapshot::{Baseline, Workspace};

/// Largest answer frame read from a provider.
const MAX_PROVIDER_FRAME: usize = 16 << 20;

/// Why a start failed, and whether trying again can help.
#[derive(Debug)]
pub(crate) struct StartFailure {
    pub(crate) failure: Failure,
    pub(crate) permanent: bool,
    pub(crate) identity: Option<Identity>,
}

fn retry(failure: Failure) -> StartFailure {
    StartFailure {
        failure,
        permanent: false,
        identity: None,
    }
}

/// A started, initialized provider.
#[derive(Debug)]
pub(crate) struct Session {
    child: tokio::sync::Mutex<Option<ChildPeer>>,
    peer: Peer,
    pub(crate) identity: Identity,
    turn: tokio::sync::Mutex<()>,
}

impl Session {
    pub(crate) async fn start(
        spec: &ProviderSpec,
        cwd: &Path,
        workspace: &Arc<Workspace>,
        scope: &Arc<Scope>,
        baseline: &Baseline,
        deadline: Duration,
    ) -> Result<Session, StartFailure> {
        // Resolved once: the file hashed is the file run. A program that cannot be found is
        // started by its name, so that the spawn's own error says what is wrong.
        let named = &spec.command[0];
        let resolved = child::program::resolve(named, cwd);
        let program = resolved
            .as_deref()
            .and_then(Path::to_str)
            .map_or_else(|| named.clone(), str::to_owned);
        // Hashed while the provider starts; cached, so a restart does not hash it again. A built-in
        // provider is this host's own executable: it is hashed first and the digest handed over,
        // so that the provider does not hash the same file again for its build fingerprint.
        let integrity = tokio::task::spawn_blocking(move || {
            resolved.map_or_else(|| UNKNOWN.to_owned(), |path| integrity_of(&path))
        });
        let integrity = if spec.builtin.is_some() {
            Integrity::Known(integrity.await.unwrap_or_else(|_| UNKNOWN.to_owned()))
        } else {
            Integrity::Hashing(integrity)
        };
        let handler = Arc::new(Callbacks {
            scope: scope.clone(),
            workspace: workspace.clone(),
        });
        let config = PeerConfig {
            request_timeout: spec.timeout,
            max_frame: MAX_PROVIDER_FRAME,
            role: rpc_peer::Role::Provider,
            classify: asp_wire::code::fail_class,
            ..PeerConfig::default()
        };
        let mut child_spec = ChildSpec::new(program, spec.command[1..].to_vec(), cwd.to_path_buf());
        if let Integrity::Known(digest) = &integrity
            && child::program::is_sha256_digest(digest)
        {
            child_spec.env.push((
                child::program::BUILD_FINGERPRINT_ENV.to_owned(),
                digest.clone(),
            ));
        }
        let child = ChildPeer::spawn(child_spec, config, handler).map_err(|e| {
            retry(Failure::new(
                Reason::Unavailable,
                Lifecycle::Unavailable,
                format!("the provider could not be started: {e}"),
            ))
        })?;
        let peer = child.peer().clone();
        let session = Session {
            child: tokio::sync::Mutex::new(Some(child)),
            peer,
            identity: Identity {
                name: spec.id.clone(),
                version: String::new(),
                fingerprint: String::new(),
                publisher: None,
                integrity: String::new(),
            },
            turn: tokio::sync::Mutex::new(()),
        };
        let initialized = session
            .initialize(spec, workspace, scope, baseline, deadline)
            .await;
        let integrity = match integrity {
            Integrity::Known(digest) => digest,
            Integrity::Hashing(task) => task.await.unwrap_or_else(|_| UNKNOWN.to_owned()),
        };
        match initialized {
            Ok(identity) => Ok(Session {
                identity: Identity {
                    integrity,
                    ..identity
                },
                ..session
            }),
            Err(mut failure) => {
                if let Some(identity) = &mut failure.identity {
                    identity.integrity = integrity;
                }
                session.abort().await;
                Err(failure)
            }
        }
    }

    async fn initialize(
        &self,
        spec: &ProviderSpec,
        workspace: &Workspace,
        scope: &Scope,
        baseline: &Baseline,
        deadline: Duration,
    ) -> Result<Identity, StartFailure> {
        let mut applied = from_asp01::Applied::new();
        let mut params = json!({
            "protocolVersion": "asp/1.0",
            "host": {"name": HOST_NAME, "version": HOST_VERSION},
            "hostCapabilities": {"readBlob": true, "putBlob": false, "progress": false, "pullDiagnostics": false},
            "workspace": {"root": workspace.root().to_string_lossy(), "baseline": baseline.value},
            "assuranceMode": "advisory",
        });
        let old = spec.protocol == Protocol::V0_1;
        if old {
            params = from_asp01::initialize_params(params, &mut applied);
        }
        let result = match self
            .peer
            .request_raw(inner::INITIALIZE, Some(&params), options(deadline))
            .await
        {
            Ok(raw) => serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null),
            Err(rpc_peer::Error::Refused {
                code,
                message,
                fail_class,
                ..
            }) if fail_class == FailClass::Contract
                || code == asp_wire::code::UNSUPPORTED_VERSION =>
            {
                return Err(StartFailure {
                    failure: Failure::new(
                        Reason::Skewed,
                        Lifecycle::Incompatible,
                        format!(
                            "the provider refused protocol {} (code {code}): {}",
                            spec.protocol.as_str(),
                            asp_wire::text::untrusted(&message, 300)
                        ),
                    ),
                    permanent: true,
                    identity: None,
                });
            }
            Err(e) => return Err(retry(call_failure(&e, inner::INITIALIZE))),
        };
        let result = if old {
            let result = from_asp01::initialize_result(result, &mut applied);
            from_asp01::log(&spec.id, inner::INITIALIZE, &applied);
            result
        } else {
            result
        };
        if let Err(e) = schema::check(Shape::InitializeResult, &result) {
            return Err(StartFailure {
                failure: Failure::new(
                    Reason::Malformed,
                    Lifecycle::Malformed,
                    format!("its initialize result does not match initialize.schema.json: {e}"),
                ),
                permanent: true,
                identity: None,
            });
        }
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let identity = Identity {
            name: text(&result["serverInfo"]["name"]),
            version: text(&result["serverInfo"]["version"]),
            fingerprint: text(&result["serverInfo"]["fingerprint"]),
            publisher: result["provenance"]["publisher"]
                .as_str()
                .map(str::to_owned),
            integrity: String::new(),
        };
        let families = result["capabilityFamilies"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !families.iter().any(|f| f == "check") || result["capabilities"]["check"].is_null() {
            return Err(StartFailure {
                failure: Failure::new(
                    Reason::Unsupported,
                    Lifecycle::Incompatible,
                    "the provider does not advertise the check capability it is enrolled for",
                ),
                permanent: true,
                identity: Some(identity),
            });
        }
        let requested = GlobSet::bounded(&json::strings::<Vec<_>>(
            &result["requestedPermissions"]["read"],
        ))
        .map_err(|e| StartFailure {
            failure: Failure::new(
                Reason::Malformed,
                Lifecycle::Malformed,
                format!("its initialize result requests too much: {e}"),
            ),
            permanent: true,
            identity: Some(identity.clone()),
        })?;
        // What `exclude` leaves out is never readable: `!glob` in the grant the provider is sent,
        // so `workspace/readBlob` refuses it and `workspace/listTree` does not list it.
        let configured: Vec<String> = spec
            .read
            .iter()
            .cloned()
            .chain(
                spec.leave_out
                    .exclude
                    .iter()
                    .map(|e| format!("!{}", e.glob)),
            )
            .collect();
        let configured = GlobSet::new(&configured);
        let read = requested.narrowed(&configured);
        scope.set_grant(requested, configured);
        let granted = json!({
            "grantedPermissions": {
                "read": read,
                "write": false,
                "network": false,
                "resourceLimits": {"wallclockMs": u64::try_from(spec.timeout.as_millis()).unwrap_or(u64::MAX)},
            },
            "baseline": baseline.value,
        });
        self.peer
            .notify(inner::INITIALIZED, Some(&granted))
            .map_err(|e| retry(call_failure(&e, inner::INITIALIZED)))?;
        tracing::info!(provider = %spec.id, name = %identity.name, version = %identity.version, "provider initialized");
        Ok(identity)
    }

    /// Waits for this provider's turn: one evaluation at a time.
    pub(crate) async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// One request; a failure is already a coverage failure.
    pub(crate) async fn call<P: serde::Serialize>(
        &self,
        method: &str,
        params: &P,
        deadline: Duration,
    ) -> Result<Value, Failure> {
        match self
            .peer
            .request_raw(method, Some(params), options(deadline))
            .await
        {
            Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                Failure::new(
                    Reason::Malformed,
                    Lifecycle::Malformed,
                    format!("its {method} answer is not JSON: {e}"),
                )
            }),
            Err(e) => Err(call_failure(&e, method)),
        }
    }

    pub(crate) fn notify(&self, method: &str, params: &Value) {
        if let Err(e) = self.peer.notify(method, Some(params)) {
            tracing::debug!(%method, "notification not sent: {e}");
        }
    }

    /// The connection whose health the supervisor watches.
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Stops a process that never completed `initialize`: no `shutdown` is asked.
    async fn abort(&self) {
        if let Some(child) = self.child.lock().await.take() {
            child.stop().await;
        }
    }

    /// Stops the process with the fixed escalation (at most about 5 s); `Unknown` when it was
    /// stopped already.
    pub(crate) async fn stop(&self) -> ExitStatus {
        let Some(child) = self.child.lock().await.take() else {
            return ExitStatus::Unknown;
        };
        let status = child.shutdown().await;
        tracing::debug!(provider = %self.identity.name, %status, "provider stopped");
        status
    }
}

fn options(deadline: Duration) -> CallOptions {
    CallOptions {
        timeout: Some(deadline),
        progress: None,
    }
}

/// The coverage failure of a failed call.
fn call_failure(error: &rpc_peer::Error, method: &str) -> Failure {
    use rpc_peer::Error as E;
    match error {
        E::Timeout { ms, .. } => Failure::new(
            Reason::TimedOut,
            Lifecycle::TimedOut,
            format!("the provider did not answer {method} within {ms} ms"),
        ),
        E::Exited {
            status,
            stderr_tail,
            ..
        } => Failure::new(
            Reason::Crashed,
            Lifecycle::Crashed,
            format!(
                "the provider {status} during {method}{}",
                if stderr_tail.trim().is_empty() {
                    String::new()
                } else {
                    format!(
                        "; stderr: {}",
                        asp_wire::text::untrusted(stderr_tail.trim(), 500)
                    )
                }
            ),
        ),
        E::Refused {
            code,
            message,
            fail_class,
            ..
        } if *code == asp_wire::code::CANCELLED
            || *code == rpc_peer::jsonrpc::REQUEST_CANCELLED =>
        {
            Failure::new(
                Reason::Cancelled,
                Lifecycle::Cancelled,
                format!(
                    "the provider cancelled {method} ({fail_class}): {}",
                    asp_wire::text::untrusted(message, 300)
                ),
            )
        }
        E::Refused {
            code,
            message,
            detail,
            fail_class,
            ..
        } => Failure::new(
            Reason::Error,
            Lifecycle::Active,
            format!(
                "the provider answered {method} with an error ({fail_class}, code {code}): {}{}",
                asp_wire::text::untrusted(message, 300),
                detail.as_deref().map_or(String::new(), |detail| format!(
                    " ({})",
                    asp_wire::text::untrusted(detail, 300)
                )),
            ),
        ),
        E::Malformed { detail, .. } => Failure::new(
            Reason::Malformed,
            Lifecycle::Malformed,
            asp_wire::text::untrusted(detail, 300).into_owned(),
        ),
        other => Failure::new(
            Reason::Unavailable,
            Lifecycle::Unavailable,
            other.to_string(),
        ),
    }
}

/// The integrity of a program that could not be hashed.
const UNKNOWN: &str = "sha256:unknown";

/// A provider's integrity: known before it started, or being hashed while it starts.
enum Integrity {
    Known(String),
    Hashing(tokio::task::JoinHandle<String>),
}

/// `sha256:<hex>` of the executable at `path` (as [`child::program::resolve`] found it).
fn integrity_of(path: &Path) -> String {
    /// Path, size and modification time of a hashed executable, and its digest.
    type Hashed = (PathBuf, u64, Option<SystemTime>, String);
    static CACHE: Mutex<Vec<Hashed>> = Mutex::new(Vec::new());
    let Ok(meta) = std::fs::metadata(path) else {
        return UNKNOWN.to_owned();
    };
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    let cached = CACHE.lock().ok().and_then(|c| {
        c.iter()
            .find(|e| (&e.0, e.1, e.2) == (&key.0, key.1, key.2))
            .map(|e| e.3.clone())
    });
    if let Some(digest) = cached {
        return digest;
    }
    // Hashed as it streams, nothing kept: an executable is tens of megabytes.
    let digest =
        match std::fs::File::open(path).and_then(|file| repo_io::read::hash(file, meta.len(), 0)) {
            Ok(hashed) => format!("sha256:{}", asp_wire::digest::hex(&hashed.sha256)),
            Err(_) => return UNKNOWN.to_owned(),
        };
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|e| e.0 != key.0);
        cache.push((key.0, key.1, key.2, digest.clone()));
    }
    digest
}
