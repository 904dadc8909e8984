//! The host callbacks a provider may call while it evaluates: `workspace/readBlob` and
//! `workspace/listTree`, served only within the current request's blob set and the baseline tree,
//! filtered by the provider's grant and capped. Anything else is refused with a `policy` error and
//! logged; `window/logMessage` is logged as untrusted text. A `workspace/readBlob` answer is built
//! only once the connection has room for it (the peer's byte budget for answers not yet written),
//! so a provider that floods reads and does not read its input holds at most that budget.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use asp_wire::inner;
use base64::display::Base64Display;
use base64::engine::general_purpose::STANDARD;
use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::{Answer, Handler, IncomingRequest, error_object, method_not_found};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::glob::GlobSet;
use crate::json;
use crate::schema::{self, Shape};
use crate::snapshot::{Baseline, ScopedBlob, Workspace};

/// Most entries one `workspace/listTree` answer lists; past it `truncated: true`.
pub(crate) const MAX_TREE_ENTRIES: usize = 10_000;
/// Longest `workspace/readBlob` answer, in bytes of JSON as sent (text counted escaped).
pub(crate) const MAX_READ_BYTES: usize = 12 << 20;

/// What a provider may read during the request it is evaluating.
#[derive(Debug)]
pub(crate) struct RequestScope {
    pub(crate) baseline: Baseline,
    pub(crate) blobs: Arc<HashMap<String, ScopedBlob>>,
    /// Blobs served to the provider during this request.
    pub(crate) served: BTreeSet<String>,
    /// Callbacks refused during this request.
    pub(crate) refused: u32,
}

/// The callback state of one provider: its grant and the request it is working on, if any.
#[derive(Debug)]
pub(crate) struct Scope {
    provider: String,
    /// Every set must allow a path: what the provider requested and what the configuration allows.
    grant: Mutex<Vec<GlobSet>>,
    current: Mutex<Option<RequestScope>>,
}

impl Scope {
    pub(crate) fn new(provider: &str) -> Scope {
        Scope {
            provider: provider.to_owned(),
            grant: Mutex::new(vec![GlobSet::new::<&str>(&[])]),
            current: Mutex::new(None),
        }
    }

    /// Sets the grant the provider was sent in `initialized`: requested ∩ configured.
    pub(crate) fn set_grant(&self, requested: GlobSet, configured: GlobSet) {
        *rpc_peer::lock(&self.grant) = vec![requested, configured];
    }

    fn grant(&self) -> Grant {
        Grant(rpc_peer::lock(&self.grant).clone())
    }

    /// Opens the request scope; it closes when the returned guard drops, whatever happens.
    pub(crate) fn open(self: &Arc<Self>, scope: RequestScope) -> ScopeGuard {
        *rpc_peer::lock(&self.current) = Some(scope);
        ScopeGuard {
            scope: self.clone(),
        }
    }

    fn with_current<T>(&self, f: impl FnOnce(Option<&mut RequestScope>) -> T) -> T {
        let mut current = rpc_peer::lock(&self.current);
        f(current.as_mut())
    }
}

/// The read grant: a path is readable when every set allows it.
struct Grant(Vec<GlobSet>);

impl Grant {
    fn allows(&self, path: &str) -> bool {
        self.0.iter().all(|set| set.allows(path))
    }
}

/// Closes a request scope on drop and gives back what was served.
#[derive(Debug)]
pub(crate) struct ScopeGuard {
    scope: Arc<Scope>,
}

impl ScopeGuard {
    /// The blobs served so far.
    pub(crate) fn served(&self) -> BTreeSet<String> {
        self.scope
            .with_current(|c| c.map(|c| c.served.clone()).unwrap_or_default())
    }

    /// How many callbacks were refused so far.
    pub(crate) fn refused(&self) -> u32 {
        self.scope.with_current(|c| c.map_or(0, |c| c.refused))
    }
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        *rpc_peer::lock(&self.scope.current) = None;
    }
}

/// The handler of one provider's connection.
#[derive(Clone)]
pub(crate) struct Callbacks {
    pub(crate) scope: Arc<Scope>,
    pub(crate) workspace: Arc<Workspace>,
}

impl Handler for Callbacks {
    fn request(&self, request: IncomingRequest) -> Answer {
        let callbacks = self.clone();
        Box::pin(async move {
            let params: Value = request.params()?;
            let answer = match request.method.as_str() {
                inner::READ_BLOB => read_blob(&callbacks, &request, params).await?,
                inner::LIST_TREE => list_tree(&callbacks, params).await?.to_string(),
                other => {
                    tracing::warn!(provider = %callbacks.scope.provider, method = other, "provider called an unknown host method");
                    return Err(method_not_found(other));
                }
            };
            RawValue::from_string(answer).map_err(|e| internal(&e.to_string()))
        })
    }

    fn notification(&self, method: &str, params: Option<Box<RawValue>>) {
        if method == "window/logMessage" {
            let params: Value = params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default();
            let message =
                asp_wire::text::untrusted(params["message"].as_str().unwrap_or_default(), 500)
                    .into_owned();
            tracing::info!(provider = %self.scope.provider, level = params["level"].as_str().unwrap_or("info"), "{message}");
        } else {
            tracing::debug!(provider = %self.scope.provider, %method, "provider notification ignored");
        }
    }
}

fn refuse(scope: &Scope, method: &str, why: String) -> ErrorObject {
    tracing::warn!(provider = %scope.provider, method, "callback refused: {why}");
    scope.with_current(|c| {
        if let Some(c) = c {
            c.refused += 1;
        }
    });
    error_object(
        asp_wire::code::SCOPE_DENIED,
        format!("scope_denied: {why}"),
        FailClass::Policy,
        false,
    )
    .with_data("detail", json!(why))
}

fn internal(why: &str) -> ErrorObject {
    error_object(
        rpc_peer::jsonrpc::INTERNAL_ERROR,
        format!("internal error: {why}"),
        FailClass::Health,
        true,
    )
}

fn unavailable(why: String) -> ErrorObject {
    error_object(
        asp_wire::code::BLOB_UNAVAILABLE,
        format!("blob_unavailable: {why}"),
        FailClass::Health,
        false,
    )
}

/// Where a requested blob may come from.
enum Source {
    Scoped(ScopedBlob),
    Baseline { oid: String },
}

async fn read_blob(
    callbacks: &Callbacks,
    request: &IncomingRequest,
    params: Value,
) -> Result<String, ErrorObject> {
    let Callbacks { scope, workspace } = callbacks;
    const METHOD: &str = inner::READ_BLOB;
    schema::check(Shape::ReadBlobParams, &params)
        .map_err(|e| refuse(scope, METHOD, format!("invalid params: {e}")))?;
    let ids: Vec<String> = json::strings(&params["blobs"]);
    let grant = scope.grant();
    let Some((blobs, baseline)) =
        scope.with_current(|c| c.map(|c| (c.blobs.clone(), c.baseline.clone())))
    else {
        return Err(refuse(scope, METHOD, "no evaluation is in progress".into()));
    };
    // The request's own blobs are in memory: served without leaving this thread. Anything else
    // needs the baseline tree and maybe git, off the async threads, in one hop.
    let in_memory: Option<Vec<(String, Source, String)>> = ids
        .iter()
        .map(|id| {
            let blob = blobs.get(id).filter(|b| b.again.is_none())?;
            Some((id.clone(), Source::Scoped(blob.clone()), blob.path.clone()))
        })
        .collect();
    let answer = match in_memory {
        Some(sources) => encode(sources, &grant, &|_| unreachable_baseline())
            .map_err(|e| e.into_error(scope, METHOD))?,
        None => {
            let ws = workspace.clone();
            let wanted = ids.clone();
            tokio::task::spawn_blocking(move || {
                let sources = resolve(&ws, &baseline, &blobs, wanted)?;
                encode(sources, &grant, &|oid| ws.git_blob(oid).map(|b| b.bytes))
            })
            .await
            .map_err(|e| internal(&e.to_string()))?
            .map_err(|e| e.into_error(scope, METHOD))?
        }
    };
    // Built only once it can be sent: the answer waits for room in the connection's budget.
    request.room(answer_len(&answer)).await?;
    scope.with_current(|c| {
        if let Some(c) = c {
            c.served.extend(ids);
        }
    });
    serde_json::to_string(&ReadBlobResult { blobs: answer }).map_err(|e| internal(&e.to_string()))
}

/// Length of the answer as JSON, `{"blobs":[…]}`.
fn answer_len(blobs: &[Encoded]) -> usize {
    let entries: usize = blobs.iter().map(|blob| blob.len).sum();
    r#"{"blobs":[]}"#.len() + entries + blobs.len().saturating_sub(1)
}

/// A `workspace/readBlob` answer, serialised straight from the blobs' bytes.
#[derive(serde::Serialize)]
struct ReadBlobResult {
    blobs: Vec<Encoded>,
}

/// One blob of the answer.
#[derive(serde::Serialize)]
struct Encoded {
    id: String,
    encoding: &'static str,
    bytes: EncodedBytes,
    /// Its length as JSON ([`entry_len`]).
    #[serde(skip)]
    len: usize,
}

/// The bytes as sent: UTF-8 text as it is, anything else in base64 (encoded as it is written).
enum EncodedBytes {
    Text(Arc<Vec<u8>>),
    Base64(Arc<Vec<u8>>),
}

impl serde::Serialize for EncodedBytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            EncodedBytes::Text(bytes) => serializer
                .serialize_str(std::str::from_utf8(bytes).map_err(serde::ser::Error::custom)?),
            EncodedBytes::Base64(bytes) => {
                serializer.collect_str(&Base64Display::new(bytes, &STANDARD))
            }
        }
    }
}

/// Why a `workspace/readBlob` was not served: refused (policy, logged) or unavailable.
enum ReadFailure {
    Refused(String),
    Error(ErrorObject),
}

impl ReadFailure {
    fn into_error(self, scope: &Scope, method: &str) -> ErrorObject {
        match self {
            ReadFailure::Refused(why) => refuse(scope, method, why),
            ReadFailure::Error(error) => error,
        }
    }
}

/// The bytes of a blob (`None` past the size cap), or why they cannot be read.
type Bytes = crate::error::Result<Option<Arc<Vec<u8>>>>;

fn unreachable_baseline() -> Bytes {
    Err(crate::error::Error::git(
        "no baseline blob is read for the request's own blobs",
    ))
}

/// Where each requested blob comes from: the request's blob set, else the baseline tree. Decided
/// for every blob before any is read. Blocking (the tree may need git).
fn resolve(
    ws: &Workspace,
    baseline: &Baseline,
    blobs: &HashMap<String, ScopedBlob>,
    wanted: Vec<String>,
) -> Result<Vec<(String, Source, String)>, ReadFailure> {
    let tree = ws
        .tree(&baseline.tree)
        .map_err(|e| ReadFailure::Refused(e.to_string()))?;
    let mut out = Vec::new();
    // Bytes read again for blobs intake did not keep: within what one answer may carry.
    let mut again = 0;
    for id in wanted {
        if let Some(blob) = blobs.get(&id) {
            let path = blob.path.clone();
            let read_again = blob.again.is_some();
            let blob = blob
                .with_bytes(ws, &id)
                .map_err(|e| ReadFailure::Error(unavailable(e)))?;
            again += blob
                .bytes
                .as_ref()
                .filter(|_| read_again)
                .map_or(0, |b| b.len());
            if again > MAX_READ_BYTES {
                return Err(ReadFailure::Error(unavailable(format!(
                    "the answer would pass {MAX_READ_BYTES} bytes: ask for fewer blobs at once"
                ))));
            }
            out.push((id, Source::Scoped(blob), path));
        } else if let Some(entry) = ws.oid_of(&id).and_then(|oid| tree.with_oid(&oid)) {
            out.push((
                id,
                Source::Baseline {
                    oid: entry.oid.clone(),
                },
                entry.path.clone(),
            ));
        } else {
            return Err(ReadFailure::Refused(format!(
                "{id} is neither in this request's changeset nor in the baseline tree"
            )));
        }
    }
    Ok(out)
}

/// The answer's blobs: every path within the grant (else refused), each blob within the size caps.
/// `baseline` reads a baseline blob by its git object id.
fn encode(
    sources: Vec<(String, Source, String)>,
    grant: &Grant,
    baseline: &dyn Fn(&str) -> Bytes,
) -> Result<Vec<Encoded>, ReadFailure> {
    if let Some((id, _, path)) = sources.iter().find(|(_, _, path)| !grant.allows(path)) {
        return Err(ReadFailure::Refused(format!(
            "{id} ({path}) is outside the read grant"
        )));
    }
    let mut total = r#"{"blobs":[]}"#.len();
    let mut out = Vec::new();
    for (id, source, path) in sources {
        let bytes = match source {
            Source::Scoped(blob) => blob.bytes,
            Source::Baseline { oid } => {
                baseline(&oid).map_err(|e| ReadFailure::Error(unavailable(e.to_string())))?
            }
        };
        let Some(bytes) = bytes else {
            return Err(ReadFailure::Error(unavailable(format!(
                "{path} is larger than {} bytes",
                crate::snapshot::MAX_BLOB
            ))));
        };
        let (encoding, text, length) = match std::str::from_utf8(&bytes) {
            Ok(text) => (
                "utf-8",
                EncodedBytes::Text(bytes.clone()),
                escaped_len(text),
            ),
            Err(_) => {
                let length = base64::encoded_len(bytes.len(), true).unwrap_or(MAX_READ_BYTES + 1);
                ("base64", EncodedBytes::Base64(bytes.clone()), length)
            }
        };
        let len = entry_len(&id, encoding, length);
        total = total.saturating_add(len + usize::from(!out.is_empty()));
        if total > MAX_READ_BYTES {
            return Err(ReadFailure::Error(unavailable(format!(
                "the answer would pass {MAX_READ_BYTES} bytes: ask for fewer blobs at once"
            ))));
        }
        out.push(Encoded {
            id,
            encoding,
            bytes: text,
            len,
        });
    }
    Ok(out)
}

/// Length of one blob of the answer as JSON, `{"id":…,"encoding":…,"bytes":…}`, where `bytes` is
/// `length` bytes long once escaped.
fn entry_len(id: &str, encoding: &str, length: usize) -> usize {
    r#"{"id":"","encoding":"","bytes":""}"#.len() + escaped_len(id) + encoding.len() + length
}

/// Length of `text` inside a JSON string as serde_json writes it: a quote, a backslash and the
/// control characters with a short escape take two bytes, the other control characters six.
/// Counted in runs of 255 bytes with byte-sized counters, which the compiler vectorises: this
/// runs over every text blob served.
fn escaped_len(text: &str) -> usize {
    let mut extra = 0usize;
    for run in text.as_bytes().chunks(255) {
        let (mut control, mut short, mut quote) = (0u8, 0u8, 0u8);
        for &b in run {
            control += u8::from(b < 0x20);
            short += u8::from(matches!(b, b'\n' | b'\r' | b'\t' | 0x08 | 0x0c));
            quote += u8::from(b == b'"' || b == b'\\');
        }
        extra += usize::from(quote) + usize::from(short) + 5 * usize::from(control - short);
    }
    text.len() + extra
}

async fn list_tree(callbacks: &Callbacks, params: Value) -> Result<Value, ErrorObject> {
    let Callbacks { scope, workspace } = callbacks;
    const METHOD: &str = inner::LIST_TREE;
    schema::check(Shape::ListTreeParams, &params)
        .map_err(|e| refuse(scope, METHOD, format!("invalid params: {e}")))?;
    let Some(baseline) = scope.with_current(|c| c.map(|c| c.baseline.clone())) else {
        return Err(refuse(scope, METHOD, "no evaluation is in progress".into()));
    };
    if let Some(rev) = params["baseline"]["rev"].as_str()
        && rev != baseline.rev()
    {
        return Err(error_object(
            asp_wire::code::STALE_BASELINE,
            format!(
                "stale_baseline: {rev:?} is not the baseline of this request ({:?})",
                baseline.rev()
            ),
            FailClass::Health,
            true,
        ));
    }
    let globs = GlobSet::bounded(&json::strings::<Vec<_>>(&params["globs"]))
        .map_err(|e| refuse(scope, METHOD, e))?;
    let paths: Vec<String> = json::strings(&params["paths"]);
    let filter_globs = params["globs"].as_array().is_some_and(|g| !g.is_empty());
    let grant = scope.grant();
    let ws = workspace.clone();
    tokio::task::spawn_blocking(move || -> Result<Value, ErrorObject> {
        let tree = ws
            .tree(&baseline.tree)
            .map_err(|e| internal(&e.to_string()))?;
        let mut entries = Vec::new();
        let mut truncated = false;
        for entry in tree.iter() {
            let wanted = (!filter_globs || globs.allows(&entry.path))
                && (paths.is_empty()
                    || paths
                        .iter()
                        .any(|p| repo_io::path::is_within(&entry.path, p)));
            if !wanted || !grant.allows(&entry.path) {
                continue;
            }
            if entries.len() == MAX_TREE_ENTRIES {
                truncated = true;
                break;
            }
            let id = ws
                .blob_id_of(&entry.oid)
                .map_err(|e| internal(&e.to_string()))?;
            let kind = if entry.symlink { "symlink" } else { "file" };
            entries.push(json!({"path": entry.path, "blobId": id, "kind": kind}));
        }
        Ok(json!({"entries": entries, "truncated": truncated}))
    })
    .await
    .map_err(|e| internal(&e.to_string()))?
}

#[cfg(test)]
mod tests;
