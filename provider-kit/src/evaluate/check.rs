//! The checks of the files in scope, a batch at a time: what the checker kept is recalled before
//! anything is read, the rest read through the host while the previous batch is checked, both
//! sides checked when the comparison needs them, and what each file gave added to the outcome.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use asp_wire::reason::Reason;

use super::{CHUNK, MAX_DEGRADED, Outcome, Target, is_link_target};
use crate::bounds::Cancel;
use crate::checker::{Blob, Checked, Checker, Named, Run, Side, Which};
use crate::request::{Comparison, Request};
use crate::wire::{CodeDescription, Diagnostic, Location};
use crate::workspace::{Read, Workspace, read};

pub(super) async fn check_all<C: Checker, W: Workspace>(
    checker: &C,
    workspace: &W,
    request: &Request<C::Rule, C::Settings>,
    targets: Vec<Target>,
    deadline: Instant,
    outcome: &mut Outcome,
) {
    let cancel = Cancel::on_drop();
    let total = targets.len();
    let comparison = request.comparison;
    let changes: HashMap<String, Option<String>> = request
        .changes
        .iter()
        .flat_map(|c| {
            let after = (c.kind != "delete").then(|| c.after.clone().or_else(|| c.before.clone()));
            let gone = c.from.clone().map(|from| (from, None));
            std::iter::once((c.path.clone(), after.flatten())).chain(gone)
        })
        .collect();
    // The checks stop at the deadline or once this evaluation is dropped (a `$/cancelRequest`
    // aborts it, which raises the stop signal), so no check outlives the request it serves.
    let run = Run {
        rules: &request.rules,
        settings: &request.settings,
        deadline,
        stop: cancel.signal(),
        workspace,
        changes: &changes,
        read: Mutex::default(),
    };
    let chunks: Vec<&[Target]> = targets.chunks(CHUNK).collect();
    // What the checker kept for chunk `n` and the blobs of the rest, unless there is no such
    // chunk or the deadline has passed. A target the checker answers from what it kept is not
    // read.
    let fetch = |n: usize| {
        let chunk = chunks.get(n).copied();
        let run = &run;
        async move {
            let chunk = chunk.filter(|_| Instant::now() < deadline)?;
            let recalled = recall(checker, run, chunk, comparison).await;
            let ids: BTreeSet<String> = chunk
                .iter()
                .zip(&recalled)
                .filter(|(target, recalled)| !recalled.whole(target, comparison))
                .flat_map(|(t, _)| t.before.iter().chain(t.after.iter()))
                .cloned()
                .collect();
            let read = read(workspace, ids.into_iter().collect(), deadline).await;
            Some((recalled, read))
        }
    };
    // The next chunk's blobs are read while this chunk's checks run: at most two chunks' blobs
    // are held at once.
    let mut next = fetch(0).await;
    for (n, chunk) in chunks.iter().enumerate() {
        let Some((recalled, Read { blobs, failures })) = next.take() else {
            outcome.degrade(
                Reason::TimedOut,
                format!(
                    "{} of {total} files were not checked before the deadline",
                    total - n * CHUNK
                ),
            );
            return;
        };
        outcome.read.extend(blobs.keys().cloned());
        let mut ready = Vec::new();
        for (target, recalled) in chunk.iter().zip(recalled) {
            if recalled.whole(target, comparison) {
                ready.push((target.clone(), recalled));
                continue;
            }
            let missing = target
                .before
                .iter()
                .chain(target.after.iter())
                .find(|id| !blobs.contains_key(*id));
            match missing {
                Some(id) => {
                    let why = failures.get(id).map_or("not sent", String::as_str);
                    outcome.degrade(
                        Reason::Incomplete,
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
                        let target = Target {
                            before: None,
                            ..target.clone()
                        };
                        ready.push((target, Recalled::default()));
                    }
                }
                None => ready.push((target.clone(), recalled)),
            }
        }
        let blobs: HashMap<String, Blob> = blobs
            .into_iter()
            .map(|(id, bytes)| (id, Arc::new(bytes)))
            .collect();
        let compared = compare(checker, &run, ready, &blobs, comparison);
        let (checked, prefetched) = tokio::join!(compared, fetch(n + 1));
        next = prefetched;
        outcome.read.append(&mut rpc_peer::lock(&run.read));
        match checked {
            Ok((files, unchecked)) => {
                for file in files {
                    outcome.diagnostics.cut += file.cut;
                    for diagnostic in file.diagnostics {
                        outcome.diagnostics.push(diagnostic);
                    }
                    for why in file.unchecked {
                        outcome.not_covered(why);
                    }
                    for note in file.notes {
                        if outcome.notes.len() < MAX_DEGRADED {
                            outcome.notes.push(note);
                        }
                    }
                }
                if unchecked > 0 {
                    outcome.degrade(
                        Reason::TimedOut,
                        format!(
                            "{} of {total} files were not checked before the deadline",
                            total - n * CHUNK - (chunk.len() - unchecked)
                        ),
                    );
                    return;
                }
            }
            Err(e) => {
                outcome.degrade(Reason::Error, format!("the checks stopped: {e}"));
                return;
            }
        }
    }
}

/// The side a comparison reports on, and the other side it compares with (if any).
fn sides_of(comparison: Comparison) -> (Which, Option<Which>) {
    match comparison {
        Comparison::All => (Which::After, None),
        Comparison::Introduced => (Which::After, Some(Which::Before)),
        Comparison::Resolved => (Which::Before, Some(Which::After)),
    }
}

impl Target {
    /// The blob of one side, if the file is there on that side.
    fn blob(&self, which: Which) -> Option<&String> {
        match which {
            Which::After => self.after.as_ref(),
            Which::Before => self.before.as_ref(),
        }
    }

    /// One side, named for [`Checker::recall`].
    fn named(&self, which: Which) -> Option<Named> {
        Some(Named {
            path: self.path.clone(),
            change: self.change,
            which,
            blob: self.blob(which)?.clone(),
            added: which == Which::After && self.added,
        })
    }
}

/// What the checker kept for one target, asked before its blobs are read: for the side reported
/// on, and for the other side when the comparison needs it.
#[derive(Debug, Default)]
struct Recalled {
    first: Option<Checked>,
    second: Option<Checked>,
}

impl Recalled {
    /// Whether the target is answered without reading its blobs: the side reported on was kept,
    /// and the other side too unless it is not needed (no findings to compare, or no such side).
    fn whole(&self, target: &Target, comparison: Comparison) -> bool {
        let (_, second) = sides_of(comparison);
        let Some(first) = &self.first else {
            return false;
        };
        match second {
            None => true,
            Some(which) => {
                first.findings.is_empty() || self.second.is_some() || target.blob(which).is_none()
            }
        }
    }
}

/// Asks the checker what it kept for the sides of `chunk`, before any is read: the side reported
/// on, then the other side of those whose kept findings are to be compared. A link is always read
/// (its content tells whether it is a link still).
async fn recall<C: Checker, W: Workspace>(
    checker: &C,
    run: &Run<'_, C, W>,
    chunk: &[Target],
    comparison: Comparison,
) -> Vec<Recalled> {
    let (first, second) = sides_of(comparison);
    let mut recalled: Vec<Recalled> = chunk.iter().map(|_| Recalled::default()).collect();
    let asked: Vec<(usize, Named)> = chunk
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.link)
        .filter_map(|(i, t)| t.named(first).map(|named| (i, named)))
        .collect();
    for (i, kept) in kept_for(checker, run, asked).await {
        recalled[i].first = kept;
    }
    if let Some(second) = second {
        let asked: Vec<(usize, Named)> = chunk
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                recalled[*i]
                    .first
                    .as_ref()
                    .is_some_and(|c| !c.findings.is_empty())
            })
            .filter_map(|(i, t)| t.named(second).map(|named| (i, named)))
            .collect();
        for (i, kept) in kept_for(checker, run, asked).await {
            recalled[i].second = kept;
        }
    }
    recalled
}

/// The checker's [`Checker::recall`] of `asked` (none asked: no call), each with its index.
async fn kept_for<C: Checker, W: Workspace>(
    checker: &C,
    run: &Run<'_, C, W>,
    asked: Vec<(usize, Named)>,
) -> Vec<(usize, Option<Checked>)> {
    if asked.is_empty() {
        return Vec::new();
    }
    let (indices, named): (Vec<usize>, Vec<Named>) = asked.into_iter().unzip();
    let kept = checker.recall(&named, run).await;
    indices.into_iter().zip(kept).collect()
}

/// What one file gave for the comparison asked for, on the side it is reported on.
struct FileOutcome {
    diagnostics: Vec<Diagnostic>,
    /// Findings the checker's cap cut.
    cut: usize,
    /// What could not be checked, by path, and why.
    unchecked: Vec<String>,
    /// What the checks said beyond findings.
    notes: Vec<String>,
}

/// The findings of `ready` for `comparison`: the side reported on is checked first, in one batch,
/// and the other side of the files that have findings in a second one (a finding both sides have
/// is not introduced, nor resolved); a side the checker kept is not checked again. Returns the
/// files checked, in order, and how many at the end were not (the checker stopped early).
async fn compare<C: Checker, W: Workspace>(
    checker: &C,
    run: &Run<'_, C, W>,
    ready: Vec<(Target, Recalled)>,
    blobs: &HashMap<String, Blob>,
    comparison: Comparison,
) -> Result<(Vec<FileOutcome>, usize), String> {
    let blob = |id: &Option<String>| id.as_ref().and_then(|id| blobs.get(id)).cloned();
    // Both sides are checked under the new path, so a rename does not look like new findings.
    let side = |target: &Target, which: Which| -> Option<Side> {
        let (id, other, added) = match which {
            Which::After => (&target.after, blob(&target.before), target.added),
            Which::Before => (&target.before, blob(&target.after), false),
        };
        blob(id).map(|bytes| Side {
            path: target.path.clone(),
            change: target.change,
            which,
            blob: id.clone().unwrap_or_default(),
            bytes,
            other,
            added,
        })
    };
    let (first, second) = sides_of(comparison);
    let (ready, recalled): (Vec<Target>, Vec<Recalled>) = ready.into_iter().unzip();
    let (kept_first, mut kept_second): (Vec<_>, Vec<_>) =
        recalled.into_iter().map(|r| (r.first, r.second)).unzip();
    let all: Vec<&Target> = ready.iter().collect();
    let (mut reported, mut done) =
        check_sides(checker, run, &all, kept_first, |t| side(t, first)).await?;
    let mut others: Vec<Option<Checked>> = ready.iter().map(|_| None).collect();
    if let Some(second) = second {
        let needed: Vec<usize> = (0..done)
            .filter(|&i| reported[i].as_ref().is_some_and(|c| !c.findings.is_empty()))
            .collect();
        let wanted: Vec<&Target> = needed.iter().map(|&i| &ready[i]).collect();
        let kept = needed.iter().map(|&i| kept_second[i].take()).collect();
        let (found, answered) =
            check_sides(checker, run, &wanted, kept, |t| side(t, second)).await?;
        for (&i, found) in needed.iter().zip(found).take(answered) {
            others[i] = found;
        }
        if let Some(&first_unanswered) = needed.get(answered) {
            done = first_unanswered;
        }
    }
    let introduced = (comparison == Comparison::Introduced).then_some(true);
    let about = checker.about();
    let files = ready
        .iter()
        .zip(reported.iter_mut())
        .zip(others)
        .take(done)
        .map(|((target, found), other)| {
            let found = found.take().unwrap_or_default();
            let seen: HashSet<String> = other
                .map(|o| o.findings.into_iter().map(|f| f.fingerprint).collect())
                .unwrap_or_default();
            let path = match comparison {
                Comparison::Resolved => &target.before_path,
                _ => &target.path,
            };
            FileOutcome {
                diagnostics: found
                    .findings
                    .into_iter()
                    .filter(|f| !seen.contains(&f.fingerprint))
                    .map(|f| Diagnostic {
                        code: f.code,
                        severity: f.severity,
                        source: about.source,
                        message: f.message,
                        location: Location {
                            path: path.clone(),
                            range: f.range,
                        },
                        fingerprint: f.fingerprint,
                        introduced,
                        help: f.help,
                        code_description: CodeDescription { href: f.help_uri },
                    })
                    .collect(),
                cut: found.cut,
                unchecked: found
                    .unchecked
                    .into_iter()
                    .map(|why| format!("{}: {why}", target.path))
                    .collect(),
                notes: found.notes,
            }
        })
        .collect();
    Ok((files, ready.len() - done))
}

/// Checks the side `pick` gives of each target in one batch, but for those `kept` already holds:
/// one result per target (`None` when it has no such side), and how many targets from the start
/// were answered.
async fn check_sides<C: Checker, W: Workspace>(
    checker: &C,
    run: &Run<'_, C, W>,
    ready: &[&Target],
    kept: Vec<Option<Checked>>,
    pick: impl Fn(&Target) -> Option<Side>,
) -> Result<(Vec<Option<Checked>>, usize), String> {
    let picked: Vec<Option<Side>> = ready
        .iter()
        .zip(&kept)
        .map(|(t, kept)| if kept.is_some() { None } else { pick(t) })
        .collect();
    let sides: Vec<Side> = picked.iter().flatten().cloned().collect();
    let asked = sides.len();
    let mut checked = if asked == 0 {
        Vec::new()
    } else {
        checker.check(sides, run).await?
    }
    .into_iter()
    .take(asked);
    let mut results = Vec::with_capacity(ready.len());
    for (side, kept) in picked.iter().zip(kept) {
        match (kept, side) {
            (Some(kept), _) => results.push(Some(kept)),
            (None, None) => results.push(Some(Checked::default())),
            (None, Some(_)) => match checked.next() {
                Some(found) => results.push(Some(found)),
                None => break,
            },
        }
    }
    let done = results.len();
    results.resize_with(ready.len(), || None);
    Ok((results, done))
}
