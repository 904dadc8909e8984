//! The host's content callbacks as a provider uses them: `workspace/readBlob` in one call per
//! batch, halving a batch the host refuses, each blob checked against its id; `workspace/listTree`.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::time::{Duration, Instant};

use crate::digest::{base64, blob_matches};
use crate::wire::{BlobData, TreeEntry};

/// Deadline of one callback, within the evaluation's own deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The host's content callbacks, as the evaluation needs them.
pub trait Workspace: Send + Sync {
    /// `workspace/readBlob`: the blobs as the host sent them.
    fn read_blobs(
        &self,
        ids: Vec<String>,
        timeout: Duration,
    ) -> impl Future<Output = Result<Vec<BlobData>, String>> + Send;
    /// `workspace/listTree` of the baseline (`paths` narrows it): the entries and whether the
    /// host cut the list.
    fn list_tree(
        &self,
        paths: Option<Vec<String>>,
        timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send;
    /// `workspace/listTree` of the baseline's files that match `globs` (one pass over the tree,
    /// however many files a checker looks for). A host without it answers an error.
    fn list_globs(
        &self,
        globs: Vec<String>,
        timeout: Duration,
    ) -> impl Future<Output = Result<(Vec<TreeEntry>, bool), String>> + Send {
        let _ = (globs, timeout);
        std::future::ready(Err("this host lists no globs".to_owned()))
    }
}

/// Blobs read through the host: those read (decoded, checked against their ids) and why the
/// others were not.
#[derive(Debug, Default)]
pub struct Read {
    pub blobs: HashMap<String, Vec<u8>>,
    pub failures: HashMap<String, String>,
}

pub(crate) fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .min(CALL_TIMEOUT)
}

/// Reads `ids` in one call; when a batch fails (a blob refused, or an answer past the host's size
/// cap) its halves are read, down to single blobs. Returns the blobs read (decoded, checked
/// against their ids) and why the others were not.
pub(crate) async fn read<W: Workspace>(workspace: &W, ids: Vec<String>, deadline: Instant) -> Read {
    let mut blobs = HashMap::new();
    let mut failures = HashMap::new();
    let mut batches = vec![ids];
    while let Some(batch) = batches.pop() {
        let Some(first) = batch.first() else {
            continue;
        };
        if Instant::now() >= deadline {
            failures.insert(first.clone(), "the deadline passed".into());
            continue;
        }
        match workspace
            .read_blobs(batch.clone(), remaining(deadline))
            .await
        {
            Ok(sent) => accept(&batch, sent, &mut blobs, &mut failures),
            Err(error) if batch.len() == 1 => {
                failures.insert(first.clone(), error);
            }
            Err(error) => {
                tracing::debug!(%error, blobs = batch.len(), "a batch read failed; reading its halves");
                let mut batch = batch;
                let second = batch.split_off(batch.len() / 2);
                batches.push(second);
                batches.push(batch);
            }
        }
    }
    Read { blobs, failures }
}

/// Keeps the blobs that were asked for, decode, and hash to their id.
fn accept(
    asked: &[String],
    sent: Vec<BlobData>,
    blobs: &mut HashMap<String, Vec<u8>>,
    failures: &mut HashMap<String, String>,
) {
    let asked: HashSet<&str> = asked.iter().map(String::as_str).collect();
    for blob in sent {
        if !asked.contains(blob.id.as_str()) {
            tracing::debug!(id = %blob.id, "the host sent a blob that was not asked for");
            continue;
        }
        let bytes = match blob.encoding.as_str() {
            "utf-8" => Some(blob.bytes.into_bytes()),
            "base64" => base64(&blob.bytes),
            _ => None,
        };
        match bytes {
            Some(bytes) if blob_matches(&blob.id, &bytes) => {
                blobs.insert(blob.id, bytes);
            }
            Some(_) => {
                failures.insert(blob.id, "its content does not match its id".into());
            }
            None => {
                failures.insert(
                    blob.id,
                    format!("cannot decode encoding {:?}", blob.encoding),
                );
            }
        }
    }
}
