//! `asp_inspect`: `host/queryInspect` at the interactive call site. The request is the client's
//! (size- and depth-capped); every path in it is confined to the workspace and made repo-relative
//! before the host sees it. The host's data is relayed with its text made safe and its lists cut to
//! the output budget.

use std::time::Duration;

use bridge_core::proto::Inspection;
use rmcp::model::JsonObject;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AspTool, Budgeted, Call, Caveats};
use crate::error::Error;
use crate::to_mcp::{self, Coverage, id};
use bridge_core::confine::confine;

pub(crate) struct AspInspect;

/// Largest `request`, in bytes of JSON.
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// Deepest nesting of `request`.
const MAX_REQUEST_DEPTH: usize = 16;
/// Longest `timeoutMs`.
const MAX_TIMEOUT_MS: u32 = 300_000;
/// How much longer than `timeoutMs` the bridge waits, so the host can answer with what it has.
const GRACE: Duration = Duration::from_secs(2);
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

    async fn run(call: Call, args: Args) -> Result<Output, Error> {
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
        confine_paths(&call.state.repo, &mut request, None)?;
        let client = call.client().await?;
        let deadline = timeout_ms.map(|ms| Duration::from_millis(u64::from(ms)) + GRACE);
        let inspection = call
            .with_progress(deadline, |options| {
                client.query_inspect(request, timeout_ms.map(u64::from), options)
            })
            .await?
            .value;
        Ok(output(&inspection, call.state.budget))
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

fn dedup(list: Vec<bridge_core::proto::Degradation>) -> Vec<bridge_core::proto::Degradation> {
    let mut out: Vec<bridge_core::proto::Degradation> = Vec::new();
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
    let size = serde_json::to_vec(request).map_or(usize::MAX, |b| b.len());
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

/// Confines, in place, every path in `value`: the values of [`PATH_KEYS`], and `from` in a changeset
/// change (an object with `kind` and `path`). `key` is the key `value` sits under.
fn confine_paths(
    root: &std::path::Path,
    value: &mut Value,
    key: Option<&str>,
) -> Result<(), Error> {
    let is_path = key.is_some_and(|k| PATH_KEYS.contains(&k));
    match value {
        Value::String(raw) if is_path => *raw = confine(root, raw)?,
        Value::Array(items) if is_path => {
            for item in items {
                match item {
                    Value::String(raw) => *raw = confine(root, raw)?,
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

fn not_a_path(key: Option<&str>) -> Error {
    Error::Input(format!(
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
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut request = json!({
            "kind": "inspect/references",
            "symbol": {"path": "./src/a.ts", "position": {"line": 1, "char": 2}},
            "scope": {"paths": ["src", "lib//x.rs"]},
            "changeset": {"changes": [{"kind": "rename", "path": "b.ts", "from": "a.ts"}]},
            "note": "../not/a/path/key"
        });
        confine_paths(&root, &mut request, None).unwrap();
        assert_eq!(request["symbol"]["path"], "src/a.ts");
        assert_eq!(request["scope"]["paths"], json!(["src", "lib/x.rs"]));
        assert_eq!(request["changeset"]["changes"][0]["from"], "a.ts");
        assert_eq!(request["note"], "../not/a/path/key");
    }

    #[test]
    fn escaping_or_malformed_paths_refuse_the_whole_request() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for request in [
            json!({"symbol": {"path": "../outside.ts"}}),
            json!({"scope": {"paths": ["ok", "/etc/passwd"]}}),
            json!({"changes": [{"kind": "rename", "path": "b", "from": "../a"}]}),
            json!({"file": 7}),
        ] {
            let mut request = request;
            let err = confine_paths(&root, &mut request, None).unwrap_err();
            assert_eq!(err.fail_class(), bridge_core::FailClass::Input, "{request}");
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
