//! One `check/evaluate`: which files to check, reading their blobs through the host in bounded
//! batches, the checker's checks on them (both sides when the comparison needs them), and the
//! Assessment (with the exact `validAsOf`).

use std::collections::{BTreeSet, HashSet};
use std::time::Instant;

use asp_wire::reason::Reason;

use crate::bounds::{Kept, MAX_DIAGNOSTICS};
use crate::checker::{ChangeKind, Checker, Identity};
use crate::request::{Request, Scope};
use crate::wire::{
    Assessment, CAPABILITY_VERSION, Cache, Coverage, CoveragePart, Degradation, Evidence,
    ProviderInfo, Status, Timing, ValidAsOf,
};
use crate::workspace::{Workspace, remaining};

mod check;

use check::check_all;

/// Files whose blobs are read in one `workspace/readBlob` call (both sides of each). A host
/// that refuses an answer this large (the embedded host caps one at 12 MiB) is asked for halves.
pub const CHUNK: usize = 128;
/// Most `coverage.degraded` entries listed one by one; the rest are counted in one more entry.
const MAX_DEGRADED: usize = 50;
/// Paths asked about in one `workspace/listTree` call that tells which changed paths are links.
const LINK_PATHS: usize = 1_000;
/// Links named one by one in the evidence; the rest are counted.
const LINKS_NAMED: usize = 10;
/// Longest link target (Linux's `PATH_MAX`).
const MAX_LINK_TARGET: usize = 4_096;

/// One file to check: its blobs on each side.
#[derive(Clone, Debug)]
struct Target {
    path: String,
    /// Where the before side was (differs from `path` for a rename).
    before_path: String,
    before: Option<String>,
    after: Option<String>,
    change: ChangeKind,
    added: bool,
    /// The baseline holds a symbolic link at `before_path`: its blob is the link's target.
    link: bool,
}

/// What the evaluation found and could not do, gathered as it goes.
struct Outcome {
    /// The checker's diagnostic source: the source of every degradation.
    source: &'static str,
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
    /// What the checks said beyond findings, at most [`MAX_DEGRADED`].
    notes: Vec<String>,
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
                id: format!("{}/links-skipped", self.source),
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
        for (n, note) in self.notes.iter().enumerate() {
            evidence.push(Evidence {
                kind: "message",
                id: format!("{}/note-{n}", self.source),
                message: note.clone(),
                data: serde_json::json!({}),
            });
        }
        if let Some(why) = &self.links_unknown {
            evidence.push(Evidence {
                kind: "message",
                id: format!("{}/links-unknown", self.source),
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
                source: self.source,
                reason: Reason::Unsupported,
                detail,
            });
        } else if self.unsupported.len() == MAX_DEGRADED {
            self.unsupported.push(Degradation {
                source: self.source,
                reason: Reason::Unsupported,
                detail: "more files could not be checked; the list stops here".into(),
            });
        }
    }

    fn degrade(&mut self, reason: Reason, detail: String) {
        if self.degraded.len() < MAX_DEGRADED {
            self.degraded.push(Degradation {
                source: self.source,
                reason,
                detail,
            });
        } else if self.degraded.len() == MAX_DEGRADED {
            self.degraded.push(Degradation {
                source: self.source,
                reason,
                detail: "more files could not be checked; the list stops here".into(),
            });
        }
    }
}

/// Evaluates `request` with `checker`'s checks, reading through `workspace`, until `deadline`.
pub async fn evaluate<C: Checker, W: Workspace>(
    checker: &C,
    workspace: &W,
    request: Request<C::Rule, C::Settings>,
    deadline: Instant,
    identity: &Identity,
) -> Assessment {
    let started = Instant::now();
    let about = checker.about();
    let mut outcome = Outcome {
        source: about.source,
        diagnostics: Kept::default(),
        degraded: Vec::new(),
        unsupported: Vec::new(),
        read: BTreeSet::new(),
        truncated: false,
        exhaustive: true,
        links: 0,
        links_named: Vec::new(),
        links_unknown: None,
        notes: Vec::new(),
    };
    let status = if request.is_unsupported() {
        Status::Unsupported
    } else {
        let wants = |path: &str| checker.wants(&request.settings, path);
        let targets = targets(workspace, &request, wants, deadline, &mut outcome).await;
        check_all(
            checker,
            workspace,
            &request,
            targets,
            deadline,
            &mut outcome,
        )
        .await;
        if outcome.diagnostics.cut > 0 {
            outcome.truncated = true;
            let cut = outcome.diagnostics.cut;
            let per_rule = about
                .per_rule_cap
                .map_or_else(String::new, |n| format!(", and {n} of a rule in a file"));
            outcome.degrade(
                Reason::Incomplete,
                format!(
                    "{cut} more {} left out (at most {MAX_DIAGNOSTICS} are sent{per_rule}; the most severe first)",
                    if cut == 1 { "finding was" } else { "findings were" },
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
            vec![about.source.to_owned()]
        },
        rules: if status == Status::Unsupported {
            vec![]
        } else {
            request
                .rules
                .iter()
                .map(|r| checker.rule_id(r).to_owned())
                .collect()
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
            id: about.id,
            version: identity.version.clone(),
            config_digest: request.config_digest,
            capability_version: CAPABILITY_VERSION,
            build_digest: identity.fingerprint.clone(),
            capability_family: "check",
        },
        timing: Timing {
            elapsed_ms: started.elapsed().as_millis() as u64,
        },
        cache: Cache { status: "disabled" },
    }
}

/// The files in scope: the changes, and for a workspace or paths scope the baseline's other files.
async fn targets<R, S, W: Workspace>(
    workspace: &W,
    request: &Request<R, S>,
    wants: impl Fn(&str) -> bool,
    deadline: Instant,
    outcome: &mut Outcome,
) -> Vec<Target> {
    let mut targets: Vec<Target> = request
        .changes
        .iter()
        .filter(|c| request.scope.covers(&c.path) && wants(&c.path))
        .map(|change| Target {
            path: change.path.clone(),
            before_path: change.from.clone().unwrap_or_else(|| change.path.clone()),
            before: change.before.clone(),
            after: match change.kind.as_str() {
                "delete" => None,
                // A pure rename keeps the content.
                _ => change.after.clone().or_else(|| change.before.clone()),
            },
            change: ChangeKind::parse(&change.kind),
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
                    Reason::Incomplete,
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
                if touched.contains(entry.path.as_str())
                    || !request.scope.covers(&entry.path)
                    || !wants(&entry.path)
                {
                    continue;
                }
                match entry.kind.as_str() {
                    "file" => unchanged.push(Target {
                        before_path: entry.path.clone(),
                        path: entry.path,
                        before: Some(entry.blob_id.clone()),
                        after: Some(entry.blob_id),
                        change: ChangeKind::Unchanged,
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
            Reason::Incomplete,
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
