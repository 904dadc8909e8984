//! `asp_inspect`: `host/queryInspect` at the interactive call site. The request is the client's
//! (size- and depth-capped); every path in it is confined to the workspace before the host sees it,
//! found by its shape (an absolute path, a `file:` URI, a `..` part, a name that exists in the
//! workspace) at any depth and under any key, and by the usual path keys. The host's data is relayed
//! with its text made safe, paths it gives outside the workspace replaced by a marker, and its lists
//! cut to the output budget.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use asp_wire::proto::Inspection;
use rmcp::model::JsonObject;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::caveats::{Budgeted, Caveats};
use super::run::{AspTool, Call};
use crate::error::Error;
use crate::to_mcp::{self, Coverage, id};
use bridge_core::confine::{confine, confine_uri, file_uri_path, host_path, is_path_shaped};

#[derive(Default)]
pub(crate) struct AspInspect;

/// Largest `request`, in bytes of JSON.
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// Deepest nesting of `request`.
const MAX_REQUEST_DEPTH: usize = 16;
/// Longest `timeoutMs`.
const MAX_TIMEOUT_MS: u32 = 300_000;
/// How much longer than `timeoutMs` the bridge waits, so the host can answer with what it has. A
/// deadline missed is reported with the client's `timeoutMs`, the figure it knows.
const GRACE: Duration = Duration::from_secs(2);
/// What a path in the host's data that points outside the workspace is replaced with.
pub(crate) const OUTSIDE_MARKER: &str = "<a path outside the workspace, not shown>";
/// Keys whose values are workspace paths (a string or a list of strings).
const PATH_KEYS: [&str; 7] = [
    "path",
    "paths",
    "file",
    "files",
    "filePath",
    "dir",
    "directory",
];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Args {
    /// The inspect query for the host's providers, e.g. `{"kind": "inspect/references", "symbol":
    /// {"path": "src/a.ts", "position": {"line": 3, "char": 7}}}`. Paths must be relative to the
    /// workspace root. At most 16 KiB of JSON.
    pub(crate) request: JsonObject,
    /// Deadline of the host's work in milliseconds (1 to 300000); the host's default when absent.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 300000))]
    pub(crate) timeout_ms: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    #[serde(flatten)]
    pub(crate) caveats: Caveats,
    /// Always `interactive`.
    pub(crate) call_site: String,
    /// The host's answer (`data.results[]` per provider), its text made safe, cut to the budget.
    pub(crate) data: JsonObject,
    /// Missing inspect coverage (see `degraded`) is not an empty result.
    pub(crate) coverage: Coverage,
    /// How many list entries or members of `data` were left out (at least).
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) omitted_items: usize,
    /// How many paths in `data` pointed outside the workspace; each was replaced by a marker.
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) outside_paths: usize,
}

impl Budgeted for Output {
    fn shrink(&mut self, keep: f64) -> bool {
        if self.data.is_empty() {
            return false;
        }
        let data = Value::Object(std::mem::take(&mut self.data));
        let size = serde_json::to_vec(&data).map_or(0, |b| b.len());
        let allowance = (size as f64 * keep.clamp(0.0, 1.0) * 0.9) as usize;
        let (fitted, _) = to_mcp::relay::fit(&data, allowance, &mut self.omitted_items);
        self.data = object(fitted);
        self.caveats.truncated = true;
        true
    }
}

impl AspTool for AspInspect {
    const NAME: &'static str = "asp_inspect";
    const TITLE: &'static str = "ASP inspect query";
    const DESCRIPTION: &'static str = "Runs a read-only inspect query (references, symbols, impact, \
graph…) through the ASP host's providers (host/queryInspect, call site interactive). Paths are \
relative to the workspace root. Advisory: the result satisfies no gate.";
    type Args = Args;
    type Output = Output;

    async fn run(self: Arc<Self>, call: Call, args: Args) -> Result<Output, Error> {
        let timeout_ms = match args.timeout_ms {
            Some(ms) if !(1..=MAX_TIMEOUT_MS).contains(&ms) => {
                return Err(Error::Input(format!(
                    "timeoutMs must be between 1 and {MAX_TIMEOUT_MS}"
                )));
            }
            other => other,
        };
        let mut request = Value::Object(args.request);
        check_size(&request)?;
        let root = call.state.repo.clone();
        // Confining reads the workspace (symlinks): off the async threads.
        let request = tokio::task::spawn_blocking(move || {
            confine_paths(&root, &mut request, None).map(|()| request)
        })
        .await
        .map_err(|e| Error::Internal(format!("the path check stopped: {e}")))??;
        let client = call.client().await?;
        let deadline = timeout_ms.map(|ms| Duration::from_millis(u64::from(ms)) + GRACE);
        let mut inspection = call
            .with_progress(deadline, |options| {
                client.query_inspect(request, timeout_ms.map(u64::from), options)
            })
            .await
            .map_err(|error| client_deadline(error, timeout_ms))?
            .value;
        to_mcp::answered(asp_wire::proto::QUERY_INSPECT, &inspection.receipt)?;
        let outside = flag_outside_paths(&call.state.repo, &mut inspection.data);
        let mut out = output(&inspection, call.state.budget);
        out.outside_paths = outside;
        Ok(out)
    }
}

/// A missed deadline named with the client's `timeoutMs` rather than the bridge's longer wait.
fn client_deadline(error: Error, timeout_ms: Option<u32>) -> Error {
    match (error, timeout_ms) {
        (
            Error::Host(bridge_core::Error::Peer(rpc_peer::Error::Timeout {
                role, method, ..
            })),
            Some(ms),
        ) => Error::Host(bridge_core::Error::Peer(rpc_peer::Error::Timeout {
            role,
            method,
            ms: u64::from(ms),
        })),
        (error, _) => error,
    }
}

/// Replaces, in place, every path-shaped string of the host's `data` that points outside the
/// workspace by [`OUTSIDE_MARKER`]; returns how many were replaced.
fn flag_outside_paths(root: &Path, value: &mut Value) -> usize {
    match value {
        Value::String(text)
            if is_path_shaped(text)
                && Path::new(text.as_str()) != root
                && host_path(Some(root), text).is_err() =>
        {
            *text = OUTSIDE_MARKER.to_owned();
            1
        }
        Value::Array(items) => items.iter_mut().map(|v| flag_outside_paths(root, v)).sum(),
        Value::Object(map) => map.values_mut().map(|v| flag_outside_paths(root, v)).sum(),
        _ => 0,
    }
}

/// The host's answer as shown, its `data` cut to `budget` bytes of JSON.
pub(crate) fn output(inspection: &Inspection, budget: usize) -> Output {
    let mut omitted = 0;
    let (data, _) = to_mcp::relay::fit(&inspection.data, budget, &mut omitted);
    let mut degraded = inspection.coverage.degraded.clone();
    degraded.extend(inspection.receipt.failures.iter().cloned());
    let mut caveats = Caveats::new(
        to_mcp::degradations(&dedup(degraded)),
        to_mcp::snapshot(&inspection.valid_as_of),
        id(&inspection.receipt.receipt_id),
    );
    caveats.truncated = omitted > 0;
    Output {
        caveats,
        call_site: "interactive".to_owned(),
        data: object(data),
        coverage: to_mcp::coverage(&inspection.coverage),
        omitted_items: omitted,
        outside_paths: 0,
    }
}

/// A host `data` value as an object: objects as they are, anything else under `value`.
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        Value::Null => JsonObject::new(),
        other => JsonObject::from_iter([("value".to_owned(), other)]),
    }
}

fn dedup(list: Vec<asp_wire::proto::Degradation>) -> Vec<asp_wire::proto::Degradation> {
    let mut out: Vec<asp_wire::proto::Degradation> = Vec::new();
    for d in list {
        if !out
            .iter()
            .any(|o| o.source == d.source && o.reason == d.reason)
        {
            out.push(d);
        }
    }
    out
}

fn check_size(request: &Value) -> Result<(), Error> {
    let size = to_mcp::json_len(request);
    if size > MAX_REQUEST_BYTES {
        return Err(Error::Input(format!(
            "request is {size} bytes of JSON; the limit is {MAX_REQUEST_BYTES}"
        )));
    }
    if depth(request) > MAX_REQUEST_DEPTH {
        return Err(Error::Input(format!(
            "request is nested deeper than {MAX_REQUEST_DEPTH} levels"
        )));
    }
    Ok(())
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Confines, in place, every path in `value`: each string shaped like a path or naming an entry of
/// the workspace, whatever its key and depth; the values of [`PATH_KEYS`], which must be paths (or
/// lists of them); and `from` in a changeset change (an object with `kind` and `path`). `key` is the
/// key `value` sits under. Blocking: it reads the workspace.
fn confine_paths(root: &Path, value: &mut Value, key: Option<&str>) -> Result<(), Error> {
    let is_path = key.is_some_and(|k| PATH_KEYS.contains(&k));
    match value {
        Value::String(raw) if is_path || looks_like_a_path(root, raw) => {
            *raw = confine_one(root, raw)?;
        }
        Value::Array(items) if is_path => {
            for item in items {
                match item {
                    Value::String(raw) => *raw = confine_one(root, raw)?,
                    _ => return Err(not_a_path(key)),
                }
            }
        }
        _ if is_path => return Err(not_a_path(key)),
        Value::Array(items) => {
            for item in items {
                confine_paths(root, item, None)?;
            }
        }
        Value::Object(map) => {
            let is_change = map.contains_key("kind") && map.contains_key("path");
            for (name, item) in map.iter_mut() {
                if is_change && name == "from" {
                    confine_paths(root, item, Some("path"))?;
                } else {
                    confine_paths(root, item, Some(name))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// A path made repo-relative, or a `file:` URI checked and kept as the client wrote it (the host
/// reads a URI where the client gave one).
fn confine_one(root: &Path, raw: &str) -> Result<String, Error> {
    if file_uri_path(raw).is_some() {
        confine_uri(root, raw).map_err(Error::path)?;
        Ok(raw.to_owned())
    } else {
        confine(root, raw).map_err(Error::path)
    }
}

/// Whether a string under no path key is a path all the same: by its shape, or because its first
/// part names something in the workspace (which a symlink could lead out of).
fn looks_like_a_path(root: &Path, raw: &str) -> bool {
    if is_path_shaped(raw) {
        return true;
    }
    let first = raw.split('/').find(|part| !part.is_empty() && *part != ".");
    first.is_some_and(|first| {
        raw.len() <= bridge_core::confine::MAX_PATH_BYTES
            && !first.contains('\0')
            && root.join(first).symlink_metadata().is_ok()
    })
}

fn not_a_path(key: Option<&str>) -> Error {
    Error::Path(format!(
        "request.{} must be a path relative to the workspace root (or a list of them)",
        key.unwrap_or("path")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_anywhere_in_the_request_are_confined_and_normalised() {
        let (_dir, root) = test_support::tree(&[]);
        let mut request = json!({
            "kind": "inspect/references",
            "symbol": {"path": "./src/a.ts", "position": {"line": 1, "char": 2}},
            "scope": {"paths": ["src", "lib//x.rs"]},
            "changeset": {"changes": [{"kind": "rename", "path": "b.ts", "from": "a.ts"}]},
            "note": "see the references of a.ts"
        });
        confine_paths(&root, &mut request, None).unwrap();
        assert_eq!(request["symbol"]["path"], "src/a.ts");
        assert_eq!(request["scope"]["paths"], json!(["src", "lib/x.rs"]));
        assert_eq!(request["changeset"]["changes"][0]["from"], "a.ts");
        assert_eq!(request["note"], "see the references of a.ts");
    }

    #[test]
    fn paths_are_confined_by_their_shape_under_any_key_at_any_depth() {
        let (_dir, root) = test_support::tree(&[("src/a.ts", "x")]);
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc", root.join("etc-link")).unwrap();
        let inside = format!("file://{}/src/a.ts", root.display());
        let mut ok =
            json!({"textDocument": {"uri": inside}, "root": "./src//a.ts", "q": "references"});
        confine_paths(&root, &mut ok, None).unwrap();
        assert_eq!(ok["textDocument"]["uri"], inside.as_str());
        assert_eq!(ok["root"], "src/a.ts");
        assert_eq!(ok["q"], "references");
        let mut refused = vec![
            json!({"uri": "file:///etc/passwd"}),
            json!({"textDocument": {"uri": "file:///etc/passwd"}}),
            json!({"filepath": "/etc/passwd"}),
            json!({"root": "/"}),
            json!({"include": ["src/**", "../../secrets/**"]}),
            json!({"a": [{"b": {"c": "FILE:///etc/shadow"}}]}),
            json!({"uri": "file://attacker.example/share/x"}),
            json!({"note": "../not/a/path/key"}),
        ];
        #[cfg(unix)]
        refused.push(json!({"uri": "etc-link/passwd"}));
        for mut request in refused {
            let err = confine_paths(&root, &mut request, None).unwrap_err();
            assert!(matches!(err, Error::Path(_)), "{request}: {err}");
        }
    }

    #[test]
    fn host_paths_outside_the_workspace_are_replaced_in_the_data() {
        let root = Path::new("/work/repo");
        let mut data = json!({"results": [{"path": "../../etc/passwd", "uri": "file:///etc/passwd",
            "inside": "/work/repo/src/a.ts", "name": "a", "nested": [["/etc/shadow"]]}]});
        assert_eq!(flag_outside_paths(root, &mut data), 3);
        let r = &data["results"][0];
        assert_eq!(r["path"], OUTSIDE_MARKER);
        assert_eq!(r["uri"], OUTSIDE_MARKER);
        assert_eq!(r["nested"][0][0], OUTSIDE_MARKER);
        assert_eq!(r["inside"], "/work/repo/src/a.ts");
        assert_eq!(r["name"], "a");
    }

    #[test]
    fn a_missed_deadline_names_the_clients_timeout() {
        let late = Error::Host(bridge_core::Error::Peer(rpc_peer::Error::Timeout {
            role: rpc_peer::Role::Host,
            method: "host/queryInspect".into(),
            ms: 3000,
        }));
        let shown = client_deadline(late, Some(1000)).to_string();
        assert!(shown.contains("within 1000 ms"), "{shown}");
    }

    #[test]
    fn escaping_or_malformed_paths_refuse_the_whole_request() {
        let (_dir, root) = test_support::tree(&[]);
        for request in [
            json!({"symbol": {"path": "../outside.ts"}}),
            json!({"scope": {"paths": ["ok", "/etc/passwd"]}}),
            json!({"changes": [{"kind": "rename", "path": "b", "from": "../a"}]}),
            json!({"file": 7}),
        ] {
            let mut request = request;
            let err = confine_paths(&root, &mut request, None).unwrap_err();
            assert_eq!(err.fail_class(), rpc_peer::FailClass::Input, "{request}");
        }
    }

    #[test]
    fn oversized_and_deep_requests_are_refused() {
        let big = json!({"q": "x".repeat(MAX_REQUEST_BYTES)});
        assert!(check_size(&big).is_err());
        let mut deep = json!(1);
        for _ in 0..20 {
            deep = json!({"d": deep});
        }
        assert!(
            check_size(&deep)
                .unwrap_err()
                .to_string()
                .contains("nested")
        );
    }
}
