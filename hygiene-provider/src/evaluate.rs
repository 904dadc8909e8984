//! One `check/evaluate`: which files to check, reading their blobs through the host in bounded
//! batches, the checks off the async threads, and the Assessment (with the exact `validAsOf`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::future::Future;
use std::time::{Duration, Instant};

use crate::bounds::{Cancel, Kept, MAX_DIAGNOSTICS, Stop};
use crate::checks::{self, Checked, Subject};
use crate::digest::{base64, blob_matches};
use crate::request::{Comparison, Request, Scope};
use crate::rules::{Rule, SOURCE};
use crate::wire::{
    Assessment, BlobData, CAPABILITY_VERSION, Cache, CodeDescription, Coverage, CoveragePart,
    Degradation, Diagnostic, Evidence, Location, ProviderInfo, Status, Timing, TreeEntry,
    ValidAsOf,
};

/// Files whose blobs are read in one `workspace/readBlob` call (both sides of each). A host
/// that refuses an answer this large (the embedded host caps one at 12 MiB) is asked for halves.
pub(crate) const CHUNK: usize = 128;
/// Deadline of one callback, within the evaluation's own deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Most `coverage.degraded` entries listed one by one; the rest are counted in one more entry.
const MAX_DEGRADED: usize = 50;
/// Paths asked about in one `workspace/listTree` call that tells which changed paths are links.
const LINK_PATHS: usize = 1_000;
/// Links named one by one in the evidence; the rest are counted.
const LINKS_NAMED: usize = 10;
/// Longest link target (Linux's `PATH_MAX`).
const MAX_LINK_TARGET: usize = 4_096;

/// The host's content callbacks, as the evaluation needs them.
pub(crate) trait Workspace: Send + Sync {
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
}

/// Who evaluates: reported in every assessment.
#[derive(Clone, Debug)]
pub(crate) struct Provenance {
    pub(crate) version: String,
    pub(crate) build_digest: String,
}

/// One file to check: its blobs on each side.
#[derive(Clone, Debug)]
struct Target {
    path: String,
    /// Where the before side was (differs from `path` for a rename).
    before_path: String,
    before: Option<String>,
    after: Option<String>,
    added: bool,
    /// The baseline holds a symbolic link at `before_path`: its blob is the link's target.
    link: bool,
}

/// What the evaluation found and could not do, gathered as it goes.
#[derive(Default)]
struct Outcome {
    diagnostics: Kept,
    degraded: Vec<Degradation>,
    /// Files, or parts of them, that could not be checked (`coverage.unsupported`).
    unsupported: Vec<Degradation>,
    read: BTreeSet<String>,
    truncated: bool,
    exhaustive: bool,
    /// Symbolic links not checked as content: how many, and the first few.
    links: usize,
    links_named: Vec<String>,
    /// Why the host could not say which changed paths are links (they were checked as files).
    links_unknown: Option<String>,
}

impl Outcome {
    fn link(&mut self, path: &str) {
        self.links += 1;
        if self.links_named.len() < LINKS_NAMED {
            self.links_named.push(path.to_owned());
        }
    }

    /// What the assessment says of the symbolic links: skipped (how many, which), or not known.
    fn evidence(&self) -> Vec<Evidence> {
        let mut evidence = Vec::new();
        if self.links > 0 {
            let more = self.links - self.links_named.len();
            evidence.push(Evidence {
                kind: "message",
                id: "hygiene/links-skipped",
                message: format!(
                    "{} not checked as content (a link's blob is its target path): {}{}",
                    if self.links == 1 {
                        "1 symbolic link was".to_owned()
                    } else {
                        format!("{} symbolic links were", self.links)
                    },
                    self.links_named.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ),
                data: serde_json::json!({"count": self.links, "paths": self.links_named}),
            });
        }
        if let Some(why) = &self.links_unknown {
            evidence.push(Evidence {
                kind: "message",
                id: "hygiene/links-unknown",
                message: format!(
                    "could not learn which changed paths are symbolic links, so any were checked as files: {why}"
                ),
                data: serde_json::json!({}),
            });
        }
        evidence
    }

    /// A file (or part of one) that could not be checked: listed as not covered, at most
    /// [`MAX_DEGRADED`] one by one.
    fn not_covered(&mut self, detail: String) {
        if self.unsupported.len() < MAX_DEGRADED {
            self.unsupported.push(Degradation {
                source: SOURCE,
                reason: "unsupported",
                detail,
            });
        } else if self.unsupported.len() == MAX_DEGRADED {
            self.unsupported.push(Degradation {
                source: SOURCE,
                reason: "unsupported",
                detail: "more files could not be checked; the list stops here".into(),
            });
        }
    }

    fn degrade(&mut self, reason: &'static str, detail: String) {
        if self.degraded.len() < MAX_DEGRADED {
            self.degraded.push(Degradation {
                source: SOURCE,
                reason,
                detail,
            });
        } else if self.degraded.len() == MAX_DEGRADED {
            self.degraded.push(Degradation {
                source: SOURCE,
                reason,
                detail: "more files could not be checked; the list stops here".into(),
            });
        }
    }
}

pub(crate) async fn evaluate<W: Workspace>(
    workspace: &W,
    request: Request,
    deadline: Instant,
    provenance: &Provenance,
) -> Assessment {
    let started = Instant::now();
    let mut outcome = Outcome {
        exhaustive: true,
        ..Outcome::default()
    };
    let status = if request.is_unsupported() {
        Status::Unsupported
    } else {
        let targets = targets(workspace, &request, deadline, &mut outcome).await;
        check_all(workspace, &request, targets, deadline, &mut outcome).await;
        if outcome.diagnostics.cut > 0 {
            outcome.truncated = true;
            let cut = outcome.diagnostics.cut;
            outcome.degrade(
                "incomplete",
                format!(
                    "{cut} more {} left out (at most {MAX_DIAGNOSTICS} are sent, and {} of a rule in a file; the most severe first)",
                    if cut == 1 { "finding was" } else { "findings were" },
                    checks::PER_RULE
                ),
            );
        }
        if outcome.degraded.is_empty()
            && request.unsupported.is_empty()
            && outcome.unsupported.is_empty()
        {
            Status::Complete
        } else {
            Status::Incomplete
        }
    };
    if status != Status::Complete {
        outcome.exhaustive = false;
    }
    let covered = CoveragePart {
        scope: request.requested.scope.clone(),
        diagnostic_sources: if status == Status::Unsupported {
            vec![]
        } else {
            vec![SOURCE.to_owned()]
        },
        rules: if status == Status::Unsupported {
            vec![]
        } else {
            request.rules.iter().map(|r| r.id().to_owned()).collect()
        },
        comparison: request.requested.comparison.clone(),
    };
    let evidence = outcome.evidence();
    Assessment {
        status,
        diagnostics: outcome.diagnostics.into_diagnostics(),
        evidence,
        coverage: Coverage {
            requested: request.requested,
            covered,
            degraded: outcome.degraded,
            unsupported: request
                .unsupported
                .into_iter()
                .chain(outcome.unsupported)
                .collect(),
            exhaustive: outcome.exhaustive && !outcome.truncated,
            truncated: outcome.truncated,
        },
        valid_as_of: ValidAsOf {
            baseline: request.baseline,
            changeset_digest: request.changeset_digest,
            blobs: outcome.read.into_iter().collect(),
        },
        provider: ProviderInfo {
            id: SOURCE,
            version: provenance.version.clone(),
            config_digest: request.config_digest,
            capability_version: CAPABILITY_VERSION,
            build_digest: provenance.build_digest.clone(),
            capability_family: "check",
        },
        timing: Timing {
            elapsed_ms: started.elapsed().as_millis() as u64,
        },
        cache: Cache { status: "disabled" },
    }
}

/// The files in scope: the changes, and for a workspace or paths scope the baseline's other files.
async fn targets<W: Workspace>(
    workspace: &W,
    request: &Request,
    deadline: Instant,
    outcome: &mut Outcome,
) -> Vec<Target> {
    let mut targets: Vec<Target> = request
        .changes
        .iter()
        .filter(|c| request.scope.covers(&c.path))
        .map(|change| Target {
            path: change.path.clone(),
            before_path: change.from.clone().unwrap_or_else(|| change.path.clone()),
            before: change.before.clone(),
            after: match change.kind.as_str() {
                "delete" => None,
                // A pure rename keeps the content.
                _ => change.after.clone().or_else(|| change.before.clone()),
            },
            added: change.kind == "create",
            link: false,
        })
        .collect();
    let paths = match &request.scope {
        Scope::Changeset => {
            mark_links(workspace, &mut targets, deadline, outcome).await;
            return targets;
        }
        Scope::Workspace => None,
        Scope::Paths(paths) => Some(paths.clone()),
    };
    let touched: HashSet<&str> = request
        .changes
        .iter()
        .flat_map(|c| std::iter::once(c.path.as_str()).chain(c.from.as_deref()))
        .collect();
    match workspace.list_tree(paths, remaining(deadline)).await {
        Ok((entries, truncated)) => {
            if truncated {
                outcome.degrade(
                    "incomplete",
                    "the host cut the baseline listing short".into(),
                );
            }
            let links: HashSet<&str> = entries
                .iter()
                .filter(|e| e.kind == "symlink")
                .map(|e| e.path.as_str())
                .collect();
            for target in &mut targets {
                target.link = links.contains(target.before_path.as_str());
            }
            let mut unchanged = Vec::new();
            for entry in entries {
                if touched.contains(entry.path.as_str()) || !request.scope.covers(&entry.path) {
                    continue;
                }
                match entry.kind.as_str() {
                    "file" => unchanged.push(Target {
                        before_path: entry.path.clone(),
                        path: entry.path,
                        before: Some(entry.blob_id.clone()),
                        after: Some(entry.blob_id),
                        added: false,
                        link: false,
                    }),
                    "symlink" => outcome.link(&entry.path),
                    _ => {}
                }
            }
            targets.extend(unchanged);
        }
        Err(error) => outcome.degrade(
            "incomplete",
            format!("could not list the baseline: {error}"),
        ),
    }
    targets
}

/// Marks the changed paths that are symbolic links in the baseline, asking the host in calls of
/// at most [`LINK_PATHS`] paths. A host that cannot say (no `workspace/listTree`, an error, the
/// deadline) loses no check: the paths are checked as files, and the assessment says so.
async fn mark_links<W: Workspace>(
    workspace: &W,
    targets: &mut [Target],
    deadline: Instant,
    outcome: &mut Outcome,
) {
    let asked: Vec<String> = targets
        .iter()
        .filter(|t| t.before.is_some())
        .map(|t| t.before_path.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut links = HashSet::new();
    for paths in asked.chunks(LINK_PATHS) {
        if Instant::now() >= deadline {
            outcome.links_unknown = Some("the deadline passed".into());
            break;
        }
        let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
        match workspace
            .list_tree(Some(paths.to_vec()), remaining(deadline))
            .await
        {
            Ok((entries, _)) => links.extend(
                entries
                    .into_iter()
                    .filter(|e| e.kind == "symlink" && wanted.contains(e.path.as_str()))
                    .map(|e| e.path),
            ),
            Err(error) => {
                outcome.links_unknown = Some(format!("workspace/listTree: {error}"));
                break;
            }
        }
    }
    for target in targets {
        target.link = links.contains(&target.before_path);
    }
}

/// Whether `bytes` can be a symbolic link's target: a path, one line, no NUL, at most
/// [`MAX_LINK_TARGET`] bytes. A link replaced by a file holds other content, and is checked.
fn is_link_target(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.len() <= MAX_LINK_TARGET
        && !bytes.iter().any(|b| matches!(b, 0 | b'\n' | b'\r'))
}

async fn check_all<W: Workspace>(
    workspace: &W,
    request: &Request,
    targets: Vec<Target>,
    deadline: Instant,
    outcome: &mut Outcome,
) {
    let cancel = Cancel::on_drop();
    let total = targets.len();
    let chunks: Vec<&[Target]> = targets.chunks(CHUNK).collect();
    // The blobs of chunk `n`, unless there is no such chunk or the deadline has passed.
    let fetch = |n: usize| {
        let chunk = chunks.get(n).copied();
        async move {
            let chunk = chunk.filter(|_| Instant::now() < deadline)?;
            let ids: BTreeSet<String> = chunk
                .iter()
                .flat_map(|t| t.before.iter().chain(t.after.iter()))
                .cloned()
                .collect();
            Some(read(workspace, ids.into_iter().collect(), deadline).await)
        }
    };
    // The next chunk's blobs are read while this chunk's checks run: at most two chunks' blobs
    // are held at once.
    let mut next = fetch(0).await;
    for (n, chunk) in chunks.iter().enumerate() {
        let Some((blobs, failures)) = next.take() else {
            outcome.degrade(
                "timed-out",
                format!(
                    "{} of {total} files were not checked before the deadline",
                    total - n * CHUNK
                ),
            );
            return;
        };
        outcome.read.extend(blobs.keys().cloned());
        let mut ready = Vec::new();
        for target in chunk.iter() {
            let missing = target
                .before
                .iter()
                .chain(target.after.iter())
                .find(|id| !blobs.contains_key(*id));
            match missing {
                Some(id) => {
                    let why = failures.get(id).map_or("not sent", String::as_str);
                    outcome.degrade(
                        "incomplete",
                        format!("{}: could not read {id}: {why}", target.path),
                    );
                }
                None if target.link => {
                    // The baseline side is a link: never content. The other side is one too
                    // while it still reads as a link's target (a link to elsewhere).
                    let after = target.after.as_ref().and_then(|id| blobs.get(id));
                    if after.is_none_or(|bytes| is_link_target(bytes)) {
                        outcome.link(&target.path);
                    } else {
                        ready.push(Target {
                            before: None,
                            ..target.clone()
                        });
                    }
                }
                None => ready.push(target.clone()),
            }
        }
        let rules = request.rules.clone();
        let (settings, comparison) = (request.settings, request.comparison);
        // The kept findings go to the blocking pool and come back: the cap applies as each file
        // is checked, and the loop stops at the deadline or once this evaluation is dropped (a
        // `$/cancelRequest` aborts it), so no check outlives the request it serves.
        let mut kept = std::mem::take(&mut outcome.diagnostics);
        let stop = cancel.signal();
        let checks = tokio::task::spawn_blocking(move || {
            let checks = Checks {
                rules: &rules,
                settings,
                comparison,
                stop: &stop,
                deadline,
            };
            let mut not_covered = Vec::new();
            let unchecked = checks.run(&ready, &blobs, &mut kept, &mut not_covered);
            (kept, unchecked, not_covered)
        });
        let (checked, prefetched) = tokio::join!(checks, fetch(n + 1));
        next = prefetched;
        match checked {
            Ok((kept, unchecked, not_covered)) => {
                outcome.diagnostics = kept;
                for why in not_covered {
                    outcome.not_covered(why);
                }
                if unchecked > 0 {
                    outcome.degrade(
                        "timed-out",
                        format!(
                            "{} of {total} files were not checked before the deadline",
                            total - n * CHUNK - (chunk.len() - unchecked)
                        ),
                    );
                    return;
                }
            }
            Err(e) => {
                outcome.degrade("error", format!("the checks stopped: {e}"));
                return;
            }
        }
    }
}

/// The checks of one chunk, on the blocking pool.
struct Checks<'a> {
    rules: &'a [Rule],
    settings: checks::Settings,
    comparison: Comparison,
    stop: &'a Stop,
    deadline: Instant,
}

impl Checks<'_> {
    /// Checks `targets` into `kept` (and what could not be checked, by path, into `unchecked`),
    /// file by file, until the deadline passes or the evaluation is gone; returns how many files
    /// were not checked.
    fn run(
        &self,
        targets: &[Target],
        blobs: &HashMap<String, Vec<u8>>,
        kept: &mut Kept,
        unchecked: &mut Vec<String>,
    ) -> usize {
        for (n, target) in targets.iter().enumerate() {
            if self.stop.is_set() || Instant::now() >= self.deadline {
                return targets.len() - n;
            }
            let found = diagnostics(target, blobs, self.rules, self.settings, self.comparison);
            kept.cut += found.cut;
            for diagnostic in found.diagnostics {
                kept.push(diagnostic);
            }
            unchecked.extend(
                found
                    .unchecked
                    .into_iter()
                    .map(|why| format!("{}: {why}", target.path)),
            );
        }
        0
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .min(CALL_TIMEOUT)
}

/// Reads `ids` in one call; when a batch fails (a blob refused, or an answer past the host's size
/// cap) its halves are read, down to single blobs. Returns the blobs read (decoded, checked
/// against their ids) and why the others were not.
async fn read<W: Workspace>(
    workspace: &W,
    ids: Vec<String>,
    deadline: Instant,
) -> (HashMap<String, Vec<u8>>, HashMap<String, String>) {
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
    (blobs, failures)
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

/// What one file gave for the comparison asked for, on the side it is reported on.
struct FileOutcome {
    diagnostics: Vec<Diagnostic>,
    /// Findings the per-rule cap cut.
    cut: usize,
    /// What could not be checked, and why.
    unchecked: Vec<String>,
}

/// The diagnostics of one file for the comparison asked for.
fn diagnostics(
    target: &Target,
    blobs: &HashMap<String, Vec<u8>>,
    rules: &[Rule],
    settings: checks::Settings,
    comparison: Comparison,
) -> FileOutcome {
    let bytes = |id: &Option<String>| id.as_ref().and_then(|id| blobs.get(id)).map(Vec::as_slice);
    let (before, after) = (bytes(&target.before), bytes(&target.after));
    // Both sides are fingerprinted under the new path, so a rename does not look like new findings.
    let side = |this: Option<&[u8]>, other: Option<&[u8]>, added: bool| -> Checked {
        this.map_or_else(Checked::default, |bytes| {
            checks::check(
                Subject {
                    path: &target.path,
                    bytes,
                    other,
                    added,
                },
                rules,
                settings,
            )
        })
    };
    let minus = |found: Checked, other: &Checked| -> Checked {
        let seen: HashSet<&str> = other
            .findings
            .iter()
            .map(|f| f.fingerprint.as_str())
            .collect();
        Checked {
            findings: found
                .findings
                .into_iter()
                .filter(|f| !seen.contains(f.fingerprint.as_str()))
                .collect(),
            cut: found.cut,
            unchecked: found.unchecked,
        }
    };
    let (found, path, introduced) = match comparison {
        Comparison::All => (side(after, before, target.added), &target.path, None),
        Comparison::Introduced => {
            let found = side(after, before, target.added);
            let old = if found.findings.is_empty() {
                Checked::default()
            } else {
                side(before, after, false)
            };
            (minus(found, &old), &target.path, Some(true))
        }
        Comparison::Resolved => {
            let old = side(before, after, false);
            let new = if old.findings.is_empty() {
                Checked::default()
            } else {
                side(after, before, target.added)
            };
            (minus(old, &new), &target.before_path, None)
        }
    };
    let diagnostics = found
        .findings
        .into_iter()
        .map(|f| Diagnostic {
            code: f.finding.rule.id(),
            severity: f.finding.rule.severity(),
            source: SOURCE,
            message: f.finding.message,
            location: Location {
                path: path.clone(),
                range: f.finding.range,
            },
            fingerprint: f.fingerprint,
            introduced,
            help: f.finding.rule.help(),
            code_description: CodeDescription {
                href: f.finding.rule.info().help_uri(),
            },
        })
        .collect();
    FileOutcome {
        diagnostics,
        cut: found.cut,
        unchecked: found.unchecked,
    }
}

#[cfg(test)]
mod tests;
