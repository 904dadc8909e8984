//! A host in memory, for the tests of checkers on the kit (behind the `memory` feature): it serves
//! the blobs it was given, lists the tree it was given (by paths or globs, as the embedded host
//! does), refuses the blobs it is told to, and records every `workspace/readBlob` it is asked;
//! and [`findings`], what such a test reads back of an assessment.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::wire::{BlobData, TreeEntry};
use crate::workspace::Workspace;

/// A host that serves blobs from memory and records what it was asked.
#[derive(Default)]
pub struct Memory {
    pub blobs: HashMap<String, Vec<u8>>,
    /// The baseline's entries, as `workspace/listTree` lists them.
    pub tree: Vec<TreeEntry>,
    /// Blobs whose reading is refused (the whole call fails, as a grant refusal does).
    pub refuse: Vec<String>,
    /// Every `workspace/readBlob` call, its ids in order.
    pub asked: Mutex<Vec<Vec<String>>>,
    /// `workspace/listTree` fails (a host without it).
    pub no_list: bool,
}

impl Memory {
    /// Serves `bytes`; returns their blob id.
    pub fn add(&mut self, bytes: &[u8]) -> String {
        let id = crate::digest::blob_id(bytes);
        self.blobs.insert(id.clone(), bytes.to_vec());
        id
    }

    /// Puts `bytes` at `path` in the baseline's tree (and serves them); returns their blob id.
    pub fn commit(&mut self, path: &str, bytes: &[u8]) -> String {
        let id = self.add(bytes);
        self.tree.push(TreeEntry {
            path: path.to_owned(),
            blob_id: id.clone(),
            kind: "file".into(),
        });
        id
    }

    fn listing(&self, keep: impl Fn(&str) -> bool) -> Result<(Vec<TreeEntry>, bool), String> {
        if self.no_list {
            return Err("method not found: workspace/listTree (code -32601)".into());
        }
        let entries = self.tree.iter().filter(|e| keep(&e.path)).cloned();
        Ok((entries.collect(), false))
    }
}

impl Workspace for Memory {
    fn read_blobs(
        &self,
        ids: Vec<String>,
        _timeout: Duration,
    ) -> impl Future<Output = Result<Vec<BlobData>, String>> + Send {
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(ids.clone());
        let refused = ids.iter().any(|id| self.refuse.contains(id));
        let sent: Vec<BlobData> = ids
            .iter()
            .filter_map(|id| {
                self.blobs.get(id).map(|bytes| BlobData {
                    id: id.clone(),
                    encoding: "base64".into(),
                    bytes: STANDARD.encode(bytes),
                })
            })
            .collect();
        std::future::ready(if refused {
            Err(format!(
                "host refused workspace/readBlob: outside the grant (code {})",
                asp_wire::code::SCOPE_DENIED
            ))
        } else {
            Ok(sent)
        })
    }

    fn list_tree(
        &self,
        paths: Option<Vec<String>>,
        _timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send {
        let within = |path: &str, of: &str| {
            path == of || path.strip_prefix(of).is_some_and(|r| r.starts_with('/'))
        };
        std::future::ready(self.listing(|path| {
            paths
                .as_ref()
                .is_none_or(|paths| paths.iter().any(|p| within(path, p)))
        }))
    }

    fn list_globs(
        &self,
        globs: Vec<String>,
        _timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send {
        // The globs a checker asks for here are `**/<name>`: a file of that name at any depth.
        let names: Vec<String> = globs
            .iter()
            .map(|g| g.strip_prefix("**/").unwrap_or(g).to_owned())
            .collect();
        std::future::ready(self.listing(|path| {
            let name = path.rsplit('/').next().unwrap_or(path);
            names.iter().any(|n| n == name)
        }))
    }
}

/// The `check/evaluate` params of `changes` (a JSON array of changes) with `comparison`, on a
/// fixed baseline.
pub fn evaluate_params(changes: Value, comparison: &str) -> Value {
    serde_json::json!({
        "changeset": {
            "baseline": {"rev": "git:tree:9f3a1c", "stampedAt": "2026-06-16T10:00:00Z"},
            "changes": changes
        },
        "scope": "changeset",
        "comparison": comparison
    })
}

/// `(code, path, start line)` of each diagnostic of an assessment (as JSON), in order; a
/// file-level finding's line is `u64::MAX`. Panics on anything else: it is for tests.
pub fn findings(assessment: &Value) -> Vec<(String, String, u64)> {
    assessment["diagnostics"]
        .as_array()
        .expect("an assessment has diagnostics")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().expect("a code").to_owned(),
                d["location"]["path"].as_str().expect("a path").to_owned(),
                d["location"]["range"]["start"]["line"]
                    .as_u64()
                    .unwrap_or(u64::MAX),
            )
        })
        .collect()
}
