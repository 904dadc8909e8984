//! `asp_diagnostics`: `host/evaluateChangeset` at the interactive call site on the working-tree
//! changes (or on the given repo-relative paths; with `base`, on the changes since the merge base
//! of that revision and HEAD, the branch's commits included: the revision is checked before git
//! sees it and must name a commit). The host's decision, findings, coverage, assurance,
//! authority evidence and receipt are shown as data, labelled advisory. Findings are paginated: a
//! page holds at most `limit` findings and fits the output budget, and `nextCursor` continues the
//! same answer (the last few answers are kept in memory, so pages never mix two evaluations). The
//! kept answers are capped in bytes: an answer past its cap keeps its first findings and says how many
//! it dropped. A finding whose path the host put outside the workspace keeps no path and says so.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};

use bridge_core::changeset::check_rev;
use bridge_core::model;
use bridge_core::proto::{self, AdvisoryCallSite, Comparison, DecisionKind, Severity};
use bridge_core::worktree::{Base, Evaluate, Scope};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{AspTool, Budgeted, Call, Caveats, shrunk_len};
use crate::error::Error;
use crate::to_mcp::{self, Authority, Coverage, id, text};
use bridge_core::confine::{confine, host_path};

mod text;

pub(crate) struct AspDiagnostics;

/// Most paths accepted in one call.
const MAX_PATHS: usize = 256;
/// Findings per page unless `limit` says otherwise, and the most `limit` may ask for.
const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 200;
/// Answers kept for their cursors.
const KEPT_ANSWERS: usize = 16;
/// Most bytes (of JSON) of findings one kept answer holds; findings past it are dropped and counted.
const ANSWER_MAX_BYTES: usize = 8 * 1024 * 1024;
/// Most bytes (of JSON) of findings all kept answers hold; the oldest answers go first.
const KEPT_MAX_BYTES: usize = 32 * 1024 * 1024;
/// Longest cursor accepted.
const MAX_CURSOR_BYTES: usize = 64;
/// Most left-out paths listed in an answer.
const MAX_LEFT_OUT: usize = 100;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Args {
    /// Repo-relative files or directories to evaluate (at most 256); all working-tree changes
    /// against the host's baseline when absent.
    #[serde(default)]
    #[schemars(with = "Vec<String>", length(min = 1, max = 256))]
    pub(crate) paths: Option<Vec<String>>,
    /// `all` findings (default) or only those `introduced` by the changes.
    #[serde(default)]
    #[schemars(with = "ComparisonArg")]
    pub(crate) comparison: Option<ComparisonArg>,
    /// A branch, tag or commit (e.g. `main`, `origin/main`): evaluate the changes since its merge
    /// base with HEAD, the branch's commits included, instead of the working tree against the
    /// host's baseline. Must name a commit; it is never read as an option.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 256))]
    pub(crate) base: Option<String>,
    /// `nextCursor` of an earlier result: continues that answer (`paths`, `comparison` and `base`
    /// are then ignored).
    #[serde(default)]
    #[schemars(with = "String", length(max = 64))]
    pub(crate) cursor: Option<String>,
    /// Findings per page, 1 to 200 (default 50); a page may hold fewer to fit the output budget.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 200))]
    pub(crate) limit: Option<u32>,
    /// `changes` (default): only what changed, against the host's baseline (or `base`). `files`:
    /// the files under `paths` (every tracked file without `paths`) checked whole, each as new
    /// against the empty tree, changed or not (as `sarif --all-files` does); `base` is then ignored.
    #[serde(default)]
    #[schemars(with = "ScopeArg")]
    pub(crate) scope: Option<ScopeArg>,
    /// The least severe findings shown: `error`, `warning` or `info` (default, everything). The
    /// answer says how many it left out (`belowMinSeverity`); severities the bridge does not know
    /// are always shown.
    #[serde(default)]
    #[schemars(with = "SeverityArg")]
    pub(crate) min_severity: Option<SeverityArg>,
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ScopeArg {
    Changes,
    Files,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SeverityArg {
    Error,
    Warning,
    #[default]
    Info,
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ComparisonArg {
    All,
    Introduced,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    #[serde(flatten)]
    pub(crate) caveats: Caveats,
    /// Always `interactive`: these tools never use the `gate` call site.
    pub(crate) call_site: String,
    /// The host's decision on the changes (`allow`, `deny`, `indeterminate`), relayed as data:
    /// advisory here, not a pass/fail.
    pub(crate) decision: String,
    /// True when required coverage is incomplete (see `degraded`): never read such a result as clean.
    pub(crate) incomplete: bool,
    /// One line for people: decision, findings, coverage.
    pub(crate) summary: String,
    /// `all` or `introduced`.
    pub(crate) comparison: String,
    /// `changes` (what changed was sent) or `files` (the files were sent whole).
    pub(crate) scope: String,
    /// How many files were sent to the host: the changed ones, or with scope `files` every file
    /// named.
    pub(crate) changed_files: usize,
    /// True when no file was sent, so nothing was checked: no changes under the paths given (or in
    /// the working tree). Never read it as clean; use scope `files` to check files whole.
    pub(crate) nothing_checked: bool,
    /// With `base`: what it resolved to, the changes being those since `mergeBase`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base: Option<BaseOut>,
    /// Working-tree paths left out of the evaluation because they hold nothing to hash (a FIFO, a
    /// socket, a device, a nested repository): skipped, never opened, so not checked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) left_out: Vec<LeftOut>,
    /// This page of findings, the most severe first (`error`, `warning`, `info`), then by path and
    /// line.
    pub(crate) findings: Vec<Finding>,
    /// Findings in the whole answer (those dropped past the memory cap and those below
    /// `minSeverity` included).
    pub(crate) total_findings: usize,
    /// The `minSeverity` asked for (`info` shows everything).
    pub(crate) min_severity: String,
    /// Findings of the answer left out because they are less severe than `minSeverity`.
    pub(crate) below_min_severity: usize,
    /// Findings of this answer that no page will show: the answer passed the 8 MiB the bridge keeps
    /// of one answer. Narrow `paths` to see them.
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) dropped_findings: usize,
    /// Index of this page's first finding in the whole answer.
    pub(crate) offset: usize,
    pub(crate) coverage: Coverage,
    pub(crate) assurance: AssuranceOut,
    pub(crate) authority_evidence: Vec<Authority>,
    /// The authority evidence of the findings, once per provider (the findings' `source`); a
    /// finding whose evidence differs from its provider's carries its own `authority`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) finding_authority: BTreeMap<String, Authority>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) policy_digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) changeset_digest: Option<String>,
    /// Pass as `cursor` to get the next page of the same answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
    #[serde(skip)]
    page_key: u64,
    /// Bytes of JSON of `findings`, as kept.
    #[serde(skip)]
    kept_bytes: usize,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeftOut {
    /// The path, relative to the workspace root.
    pub(crate) path: String,
    /// Why it was left out.
    pub(crate) why: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BaseOut {
    /// The revision as given.
    pub(crate) rev: String,
    /// The commit it names.
    pub(crate) commit: String,
    /// The merge base of that commit and HEAD, whose tree the changes are compared with.
    pub(crate) merge_base: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AssuranceOut {
    /// The assurance mode the host achieved (e.g. `advisory`, `gated`).
    pub(crate) mode: String,
    pub(crate) transaction_guarantee: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

/// One finding: a provider's diagnostic with the host's disposition, next step and authority.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Finding {
    pub(crate) code: String,
    /// `error`, `warning` or `info`.
    pub(crate) severity: String,
    /// The provider that reported it.
    pub(crate) source: String,
    /// The provider's message (untrusted text).
    pub(crate) message: String,
    /// Repo-relative path; absent when the host gave a path outside the workspace (see
    /// `outsideWorkspace`) or none (see `projectLevel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// Why the host's path for this finding is not shown: it points outside the workspace (or is
    /// not a path inside it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) outside_workspace: Option<String>,
    /// `true` when the finding is about the workspace as a whole and names no file (e.g. a
    /// project configuration error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project_level: Option<bool>,
    /// Where it starts and ends, when the provider gave a range: 0-based lines and 0-based UTF-16
    /// characters (as LSP counts them), each field named with its base. The text block shows
    /// `path:line:column` 1-based, as compilers and editors do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) range_zero_based: Option<RangeOut>,
    /// Position-resilient id of the finding, stable within its source.
    pub(crate) fingerprint: String,
    /// Whether the changes introduced it (with comparison `introduced`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) introduced: Option<bool>,
    /// `gating` or `advisory`, as the host classifies it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) disposition: Option<String>,
    /// What to do about it (untrusted text); absent when it would only repeat `message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_step_origin: Option<String>,
    /// The provider's help (untrusted text); absent when it would only repeat `message` or
    /// `nextStep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) code_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) severity_note: Option<String>,
    /// Only when it differs from its provider's entry in `findingAuthority`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) authority: Option<Authority>,
}

/// A range, 0-based: lines from 0, characters in UTF-16 code units from 0.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RangeOut {
    pub(crate) start_line0: u32,
    pub(crate) start_character0: u32,
    pub(crate) end_line0: u32,
    pub(crate) end_character0: u32,
}

impl Budgeted for Output {
    fn text(&self, _json: String) -> String {
        text::render(self)
    }


    /// A page keeps at least one finding, so that its cursor moves on: a finding that does not fit
    /// on a page of its own makes the answer oversize, never an empty page pointing at itself.
    fn shrink(&mut self, keep: f64) -> bool {
        if self.findings.len() <= 1 {
            return false;
        }
        let keep = shrunk_len(self.findings.len(), keep).max(1);
        self.findings.truncate(keep);
        self.caveats.truncated = true;
        self.next_cursor = Some(cursor(self.page_key, self.offset + keep));
        true
    }
}

impl AspTool for AspDiagnostics {
    const NAME: &'static str = "asp_diagnostics";
    const TITLE: &'static str = "ASP advisory diagnostics";
    const DESCRIPTION: &'static str = "Asks the ASP host to evaluate the working-tree changes (or \
the given repo-relative paths, or with base the changes of the branch since its merge base with that \
revision) at the interactive call site (host/evaluateChangeset) and returns \
its decision, findings, coverage and receipt. Advisory: not a pass/fail, and it satisfies no gate. \
Only changes are checked unless scope is \"files\" (the named files checked whole); a path that does \
not exist is an error, and nothingChecked says when no file was sent. Findings come most severe \
first (minSeverity filters) and are paginated: pass nextCursor as cursor for more.";
    type Args = Args;
    type Output = Output;

    async fn run(call: Call, args: Args) -> Result<Output, Error> {
        let limit = match args.limit.unwrap_or(DEFAULT_LIMIT) {
            limit @ 1..=MAX_LIMIT => limit as usize,
            _ => {
                return Err(Error::Input(format!(
                    "limit must be between 1 and {MAX_LIMIT}"
                )));
            }
        };
        if let Some(raw) = &args.cursor {
            let (key, offset) = parse_cursor(raw)?;
            let Some(answer) = call.state.pages.get(key) else {
                return Err(Error::Input(format!(
                    "cursor {} has expired (the last {KEPT_ANSWERS} answers are kept); call \
                     asp_diagnostics again without a cursor",
                    id(raw)
                )));
            };
            return page(&answer, offset, limit);
        }
        let paths = confined_paths(&call, args.paths)?;
        let whole = matches!(args.scope, Some(ScopeArg::Files));
        let min_severity = args.min_severity.unwrap_or_default();
        let comparison = match args.comparison.unwrap_or(ComparisonArg::All) {
            ComparisonArg::All => Comparison::All,
            ComparisonArg::Introduced => Comparison::Introduced,
        };
        let base = match &args.base {
            Some(rev) => {
                check_rev(rev).map_err(|e| Error::Input(format!("base: {e}")))?;
                Base::Rev(rev.clone())
            }
            None => Base::Baseline,
        };
        let scope = match (paths, whole) {
            (None, false) => Scope::Changes,
            (None, true) => Scope::AllFiles,
            (Some(paths), false) => Scope::Paths(paths),
            (Some(paths), true) => Scope::Files(paths),
        };
        let base = if whole { Base::Baseline } else { base };
        missing_paths(&call, &scope, &base).await?;
        let client = call.client().await?;
        let request = Evaluate {
            comparison,
            scope,
            base,
            ..Evaluate::at(AdvisoryCallSite::Interactive)
        };
        let evaluation = call
            .with_progress(None, |options| {
                call.state.worktree.evaluate(&client, request, options)
            })
            .await
            .map_err(|error| match (&args.base, error) {
                // What the revision names (or the host's refusal of its baseline) is about `base`.
                (Some(_), Error::Host(bridge_core::Error::Input(message))) => {
                    Error::Input(format!("base: {message}"))
                }
                (_, error) => error,
            })?;
        let root = Some(call.state.repo.as_path());
        let base = evaluation.merge_base.as_ref().map(|found| BaseOut {
            rev: text(&found.rev),
            commit: id(&found.commit),
            merge_base: id(&found.base),
        });
        let left_out: Vec<LeftOut> = evaluation
            .skipped
            .iter()
            .take(MAX_LEFT_OUT)
            .map(|s| LeftOut {
                path: text(&s.path),
                why: text(&s.why),
            })
            .collect();
        let answer = call.state.pages.keep(|key| {
            let mut shown = answer(
                &evaluation.decision,
                comparison,
                evaluation.changed_files,
                key,
                root,
                min_severity,
            );
            if whole {
                shown.scope = "files".to_owned();
            }
            shown.base = base;
            shown.left_out = left_out;
            shown
        });
        page(&answer, 0, limit)
    }
}

/// Refuses, as an `input` error naming them, paths that are not in the working tree: not on disk
/// and, with scope `changes`, not a tracked file that was deleted either (a deletion is a change).
async fn missing_paths(call: &Call, scope: &Scope, base: &Base) -> Result<(), Error> {
    let (paths, whole) = match scope {
        Scope::Paths(paths) => (paths, false),
        Scope::Files(paths) => (paths, true),
        _ => return Ok(()),
    };
    let absent: Vec<String> = paths
        .iter()
        .filter(|p| {
            let path = call.state.repo.join(p);
            matches!(path.symlink_metadata(), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        })
        .cloned()
        .collect();
    if absent.is_empty() {
        return Ok(());
    }
    if !whole {
        // A path gone from the disk may be a deletion: the changes under it say.
        let plan = Evaluate {
            scope: Scope::Paths(absent.clone()),
            base: base.clone(),
            ..Evaluate::at(AdvisoryCallSite::Interactive)
        };
        let changes = call.state.worktree.plan(&plan).await?.built.changeset.changes;
        let missing: Vec<&String> = absent
            .iter()
            .filter(|p| !changes.iter().any(|c| under(&c.path, p)))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        return Err(not_found(&missing));
    }
    Err(not_found(&absent.iter().collect::<Vec<_>>()))
}

/// Whether `path` is `dir` or lies under it (`.` holds everything).
fn under(path: &str, dir: &str) -> bool {
    dir == "."
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/') || dir.ends_with('/'))
}

fn not_found(paths: &[&String]) -> Error {
    let named: Vec<String> = paths.iter().take(5).map(|p| text(p)).collect();
    let more = match paths.len().saturating_sub(named.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Error::Input(format!(
        "no such file or directory in the workspace: {}{more} (nothing was checked; paths are \
         relative to the workspace root)",
        named.join(", ")
    ))
}

fn confined_paths(call: &Call, paths: Option<Vec<String>>) -> Result<Option<Vec<String>>, Error> {
    let Some(paths) = paths else {
        return Ok(None);
    };
    if paths.is_empty() {
        return Err(Error::Input(
            "paths is empty; omit it to evaluate every working-tree change".to_owned(),
        ));
    }
    if paths.len() > MAX_PATHS {
        return Err(Error::Input(format!(
            "{} paths given; the limit is {MAX_PATHS}",
            paths.len()
        )));
    }
    let mut confined = Vec::with_capacity(paths.len());
    for raw in &paths {
        let path = confine(&call.state.repo, raw).map_err(Error::path)?;
        if !confined.contains(&path) {
            confined.push(path);
        }
    }
    Ok(Some(confined))
}

/// The whole answer as shown, the most severe findings first and only those at `min_severity` or
/// above, as many as fit [`ANSWER_MAX_BYTES`]; pages are cut from it. `root` is the workspace the
/// findings' paths must lie in.
pub(crate) fn answer(
    decision: &proto::Decision,
    comparison: Comparison,
    changed_files: usize,
    key: u64,
    root: Option<&Path>,
    min_severity: SeverityArg,
) -> Output {
    let mut order: Vec<(SeverityArg, Finding)> = decision
        .findings
        .iter()
        .map(|f| (rank(&f.diagnostic.severity), f))
        .filter(|(rank, _)| *rank <= min_severity)
        .map(|(rank, f)| (rank, finding(f, root)))
        .collect();
    let below_min_severity = decision.findings.len() - order.len();
    // By severity, then by the path as shown (none first: the workspace as a whole, or outside it)
    // and where the range starts; stable, so the host's order breaks ties.
    order.sort_by(|(a_rank, a), (b_rank, b)| {
        let start = |f: &Finding| {
            f.range_zero_based
                .as_ref()
                .map(|r| (r.start_line0, r.start_character0))
        };
        (a_rank, &a.path, start(a)).cmp(&(b_rank, &b.path, start(b)))
    });
    let mut findings: Vec<Finding> = Vec::new();
    let mut finding_authority: BTreeMap<String, Authority> = BTreeMap::new();
    let mut kept_bytes = 0;
    for (_, mut shown) in order {
        if let Some(authority) = shown.authority.take() {
            match finding_authority.get(&shown.source) {
                None => {
                    finding_authority.insert(shown.source.clone(), authority);
                }
                Some(same) if *same == authority => {}
                Some(_) => shown.authority = Some(authority),
            }
        }
        let size = serde_json::to_vec(&shown).map_or(usize::MAX, |b| b.len());
        if kept_bytes + size > ANSWER_MAX_BYTES {
            break;
        }
        kept_bytes += size + 1;
        findings.push(shown);
    }
    let dropped_findings = decision.findings.len() - below_min_severity - findings.len();
    let not_run = decision.not_run();
    let incomplete = decision.is_incomplete();
    let facts = Facts {
        changed_files,
        not_run: &not_run,
        dropped: dropped_findings,
        below: below_min_severity,
        min_severity,
    };
    Output {
        caveats: Caveats::new(
            to_mcp::not_run(&not_run),
            to_mcp::snapshot(&decision.valid_as_of),
            id(&decision.receipt.receipt_id),
        ),
        call_site: "interactive".to_owned(),
        decision: id(decision.decision.as_str()),
        incomplete,
        summary: summary(decision, &facts),
        comparison: match comparison {
            Comparison::All => "all",
            Comparison::Introduced => "introduced",
        }
        .to_owned(),
        scope: "changes".to_owned(),
        changed_files,
        nothing_checked: changed_files == 0,
        base: None,
        left_out: Vec::new(),
        total_findings: decision.findings.len(),
        min_severity: min_severity.as_str().to_owned(),
        below_min_severity,
        dropped_findings,
        findings,
        offset: 0,
        coverage: to_mcp::coverage(&decision.coverage),
        assurance: AssuranceOut {
            mode: id(&decision.assurance.mode),
            transaction_guarantee: id(&decision.assurance.transaction_guarantee),
            detail: decision.assurance.detail.as_deref().map(text),
        },
        authority_evidence: decision
            .authority_evidence
            .iter()
            .take(to_mcp::LIST_MAX)
            .map(to_mcp::authority)
            .collect(),
        finding_authority,
        policy_digest: decision.policy_digest.as_deref().map(id),
        changeset_digest: decision.changeset_digest.as_deref().map(id),
        next_cursor: None,
        page_key: key,
        kept_bytes,
    }
}

/// A severity as a [`SeverityArg`] to order and filter by; one the bridge does not know counts as
/// an error (shown first, never filtered out).
fn rank(severity: &proto::Open<Severity>) -> SeverityArg {
    match severity.known() {
        Some(Severity::Warning) => SeverityArg::Warning,
        Some(Severity::Info) => SeverityArg::Info,
        Some(Severity::Error) | None => SeverityArg::Error,
    }
}

impl SeverityArg {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SeverityArg::Error => "error",
            SeverityArg::Warning => "warning",
            SeverityArg::Info => "info",
        }
    }
}

fn finding(f: &proto::Finding, root: Option<&Path>) -> Finding {
    let d = &f.diagnostic;
    let workspace = d.location.is_workspace();
    let (path, outside_workspace) = match host_path(root, &d.location.path) {
        _ if workspace => (None, None),
        Ok(path) => (Some(text(&path)), None),
        Err(why) => (None, Some(why.to_owned())),
    };
    let message = text(&d.message);
    // Each thing is said once: a next step that repeats the message goes, and so does help that
    // repeats the next step.
    let next_step = f
        .next_step
        .as_deref()
        .map(text)
        .filter(|step| *step != message);
    let help = d
        .help
        .as_deref()
        .map(text)
        .filter(|help| Some(help) != next_step.as_ref() && *help != message);
    Finding {
        code: id(&d.code),
        severity: id(d.severity.as_str()),
        source: id(&d.source),
        message,
        path,
        outside_workspace,
        project_level: workspace.then_some(true),
        range_zero_based: d
            .location
            .range
            .as_ref()
            .filter(|_| !workspace)
            .map(|r| RangeOut {
                start_line0: r.start.line,
                start_character0: r.start.char,
                end_line0: r.end.line,
                end_character0: r.end.char,
            }),
        fingerprint: id(&d.fingerprint),
        introduced: d.introduced,
        disposition: f.disposition.as_ref().map(|d| id(d.as_str())),
        next_step,
        next_step_origin: f.next_step_origin.as_deref().map(id),
        help,
        code_description: d.code_description.as_ref().map(|c| text(&c.href)),
        severity_note: f.severity_note.as_deref().map(text),
        authority: f.authority.as_ref().map(to_mcp::authority),
    }
}

/// What the summary says besides the host's decision.
struct Facts<'a> {
    changed_files: usize,
    not_run: &'a [model::NotRun],
    dropped: usize,
    below: usize,
    min_severity: SeverityArg,
}

fn summary(decision: &proto::Decision, facts: &Facts<'_>) -> String {
    let kind = id(decision.decision.as_str());
    let count = |s: Severity| {
        decision
            .findings
            .iter()
            .filter(|f| f.diagnostic.severity.is(s))
            .count()
    };
    let findings = match decision.findings.len() {
        0 => "no findings".to_owned(),
        n => format!(
            "{n} finding(s): {} error, {} warning, {} info",
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info)
        ),
    };
    let coverage = if decision.is_incomplete() {
        let what: Vec<String> = facts
            .not_run
            .iter()
            .take(3)
            .map(|n| format!("{} ({})", id(&n.source), id(&n.reason)))
            .collect();
        let what = if what.is_empty() {
            "no reason given".to_owned()
        } else {
            what.join(", ")
        };
        format!("coverage INCOMPLETE, this is not a clean result: {what}")
    } else if facts.changed_files == 0 {
        "NOTHING CHECKED: no file was sent (no changes where asked), so this is no all-clear; \
         pass scope \"files\" to check files whole"
            .to_owned()
    } else {
        "coverage complete".to_owned()
    };
    let advisory = if decision.is(DecisionKind::Allow) {
        "advisory"
    } else {
        "advisory, not a gate result"
    };
    let below = if facts.below > 0 {
        format!(
            "; {} finding(s) below min severity {} not shown",
            facts.below,
            facts.min_severity.as_str()
        )
    } else {
        String::new()
    };
    let dropped = if facts.dropped > 0 {
        format!(
            "; {} finding(s) dropped: the answer passed the {} MiB the bridge keeps, narrow \
             paths to see them",
            facts.dropped,
            ANSWER_MAX_BYTES / (1024 * 1024)
        )
    } else {
        String::new()
    };
    format!(
        "host decision {kind} at the interactive call site ({advisory}): {findings} in {} \
         file(s) sent; {coverage}{below}{dropped}",
        facts.changed_files
    )
}

/// One page of `answer`, from `offset`, at most `limit` findings.
pub(crate) fn page(answer: &Output, offset: usize, limit: usize) -> Result<Output, Error> {
    let total = answer.findings.len();
    if offset > total {
        return Err(Error::Input(
            "cursor points past the last finding".to_owned(),
        ));
    }
    let end = (offset + limit).min(total);
    let mut out = Output {
        findings: Vec::new(),
        kept_bytes: 0,
        ..answer.clone()
    };
    out.findings = answer.findings[offset..end].to_vec();
    out.offset = offset;
    out.caveats.truncated = end < total;
    out.next_cursor = (end < total).then(|| cursor(answer.page_key, end));
    Ok(out)
}

fn cursor(key: u64, offset: usize) -> String {
    format!("d{key}.{offset}")
}

pub(crate) fn parse_cursor(raw: &str) -> Result<(u64, usize), Error> {
    let parsed = (raw.len() <= MAX_CURSOR_BYTES)
        .then(|| raw.strip_prefix('d')?.split_once('.'))
        .flatten()
        .and_then(|(key, offset)| Some((key.parse().ok()?, offset.parse().ok()?)));
    parsed.ok_or_else(|| {
        Error::Input(format!(
            "cursor {} is not one this server issued",
            bridge_core::text::untrusted(raw, 80)
        ))
    })
}

/// The last few answers, by key, for their cursors.
#[derive(Debug, Default)]
pub(crate) struct Pages {
    inner: Mutex<PagesInner>,
}

#[derive(Debug, Default)]
struct PagesInner {
    next: u64,
    kept: VecDeque<(u64, Arc<Output>)>,
    /// Sum of the kept answers' `kept_bytes`.
    bytes: usize,
}

impl Pages {
    /// Keeps the answer `build` makes for a fresh key; the oldest answers go when more than
    /// [`KEPT_ANSWERS`] or [`KEPT_MAX_BYTES`] are kept (the newest always stays).
    fn keep(&self, build: impl FnOnce(u64) -> Output) -> Arc<Output> {
        let key = {
            let mut inner = bridge_core::lock(&self.inner);
            inner.next += 1;
            inner.next
        };
        let answer = Arc::new(build(key));
        let mut inner = bridge_core::lock(&self.inner);
        inner.bytes += answer.kept_bytes;
        inner.kept.push_back((key, answer.clone()));
        while inner.kept.len() > KEPT_ANSWERS
            || (inner.bytes > KEPT_MAX_BYTES && inner.kept.len() > 1)
        {
            if let Some((_, old)) = inner.kept.pop_front() {
                inner.bytes -= old.kept_bytes;
            }
        }
        answer
    }

    fn get(&self, key: u64) -> Option<Arc<Output>> {
        let inner = bridge_core::lock(&self.inner);
        inner
            .kept
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| a.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(findings: usize) -> proto::Decision {
        let mut value = test_support::fixture("outer/evaluate.deny.gating.json");
        let one = value["findings"][0].clone();
        value["findings"] = serde_json::Value::Array(vec![one; findings]);
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn pages_follow_cursors_through_the_same_answer() {
        let pages = Pages::default();
        let answer = pages.keep(|key| answer(&decision(5), Comparison::All, 1, key, None, SeverityArg::Info));
        let first = page(&answer, 0, 2).unwrap();
        assert_eq!((first.findings.len(), first.caveats.truncated), (2, true));
        let (key, offset) = parse_cursor(first.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(offset, 2);
        let again = pages.get(key).unwrap();
        let last = page(&again, 4, 2).unwrap();
        assert_eq!(
            (
                last.findings.len(),
                last.caveats.truncated,
                last.next_cursor
            ),
            (1, false, None)
        );
    }

    #[test]
    fn old_answers_expire_and_bad_cursors_are_refused() {
        let pages = Pages::default();
        for _ in 0..=KEPT_ANSWERS {
            pages.keep(|key| answer(&decision(1), Comparison::All, 1, key, None, SeverityArg::Info));
        }
        assert!(pages.get(1).is_none());
        assert!(pages.get(KEPT_ANSWERS as u64 + 1).is_some());
        for bad in ["", "x1.2", "d1", "d1.-3", "d.1", &"d1.".repeat(40)] {
            assert!(parse_cursor(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shrinking_a_page_points_the_cursor_at_the_first_finding_left_out() {
        let answer = answer(&decision(10), Comparison::All, 1, 7, None, SeverityArg::Info);
        let mut first = page(&answer, 0, 10).unwrap();
        assert!(first.shrink(0.5));
        assert_eq!(first.findings.len(), 4);
        assert_eq!(first.next_cursor.as_deref(), Some("d7.4"));
    }

    /// Found by `fuzz/` (target `mcp_structured`, the exact input kept in the fixture): at a 2 KiB
    /// budget the first page could hold no finding, so it came back empty with a cursor to itself,
    /// and following the cursors never ended.
    #[test]
    fn a_page_that_cannot_hold_one_finding_is_oversize_not_a_cursor_to_itself() {
        let bytes =
            include_bytes!("../../../tests/fixtures/fuzz/mcp_structured/page-without-progress");
        let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let decision: proto::Decision = serde_json::from_value(value["result"].clone()).unwrap();
        let answer = answer(&decision, Comparison::All, 1, 1, None, SeverityArg::Info);
        // The fuzz input's budget was 2 KiB; a finding no longer repeats the authority block, so
        // the budget that cannot hold one finding is now measured: one byte less than that page.
        let one = super::super::fit(&mut page(&answer, 0, 1).unwrap(), 24 * 1024).unwrap();
        let budget = serde_json::to_vec(&one).unwrap().len() - 1;
        let err = super::super::fit(&mut page(&answer, 0, 7).unwrap(), budget).unwrap_err();
        assert!(matches!(err, Error::Oversize { budget: b } if b == budget), "{err}");
        let whole = super::super::fit(&mut page(&answer, 0, 7).unwrap(), 24 * 1024).unwrap();
        assert_eq!(whole["findings"].as_array().unwrap().len(), 2);
        assert!(whole.get("nextCursor").is_none());
    }

    #[test]
    fn a_shrunk_page_keeps_a_finding_and_moves_on() {
        let answer = answer(&decision(10), Comparison::All, 1, 7, None, SeverityArg::Info);
        let mut page = page(&answer, 3, 10).unwrap();
        assert!(page.shrink(0.01));
        assert_eq!(page.findings.len(), 1);
        assert_eq!(page.next_cursor.as_deref(), Some("d7.4"));
        assert!(!page.shrink(0.01), "one finding is as small as a page gets");
    }

    #[test]
    fn the_summary_never_reads_as_clean_when_coverage_is_incomplete() {
        let value = test_support::fixture("outer/evaluate.indeterminate.missing-provider.json");
        let decision: proto::Decision = serde_json::from_value(value).unwrap();
        let out = answer(&decision, Comparison::All, 2, 1, None, SeverityArg::Info);
        assert!(out.incomplete);
        assert!(out.summary.contains("INCOMPLETE"), "{}", out.summary);
        assert!(!out.caveats.degraded.is_empty());
    }

    #[test]
    fn host_paths_outside_the_workspace_are_flagged_not_shown() {
        let mut d = decision(4);
        for (f, path) in d.findings.iter_mut().zip([
            "../../etc/passwd",
            "file:///etc/passwd",
            "/etc/passwd",
            "/work/repo/src/a.ts",
        ]) {
            f.diagnostic.location.path = path.to_owned();
        }
        let out = answer(&d, Comparison::All, 1, 1, Some(Path::new("/work/repo")), SeverityArg::Info);
        for f in &out.findings[..3] {
            assert_eq!(f.path, None);
            assert!(f.outside_workspace.is_some());
        }
        assert_eq!(out.findings[3].path.as_deref(), Some("src/a.ts"));
        assert_eq!(out.findings[3].outside_workspace, None);
    }

    #[test]
    fn a_finding_on_the_workspace_as_a_whole_is_listed_as_project_level() {
        let mut d = decision(3);
        for (f, path) in d.findings.iter_mut().zip(["", ".", "src/a.ts"]) {
            f.diagnostic.location.path = path.to_owned();
        }
        let out = answer(&d, Comparison::All, 1, 1, Some(Path::new("/work/repo")), SeverityArg::Info);
        assert_eq!(out.findings.len(), 3, "nothing is dropped");
        for f in &out.findings[..2] {
            assert_eq!((f.path.as_deref(), f.project_level), (None, Some(true)));
            assert_eq!(f.outside_workspace, None);
        }
        assert_eq!(out.findings[2].path.as_deref(), Some("src/a.ts"));
        assert_eq!(out.findings[2].project_level, None);
    }

    #[test]
    fn kept_answers_are_capped_in_bytes_and_say_what_they_dropped() {
        let mut d = decision(1);
        let mut one = d.findings[0].clone();
        one.diagnostic.message = "m".repeat(900);
        d.findings = vec![one; 12_000];
        let out = answer(&d, Comparison::All, 1, 1, None, SeverityArg::Info);
        assert!(out.kept_bytes <= ANSWER_MAX_BYTES);
        assert!(out.dropped_findings > 0);
        assert_eq!(out.total_findings, 12_000);
        assert_eq!(out.findings.len() + out.dropped_findings, 12_000);
        assert!(out.summary.contains("dropped"), "{}", out.summary);

        let pages = Pages::default();
        let answers = KEPT_MAX_BYTES / ANSWER_MAX_BYTES + 2;
        for _ in 0..answers {
            pages.keep(|key| answer(&d, Comparison::All, 1, key, None, SeverityArg::Info));
        }
        let inner = pages.inner.lock().unwrap();
        assert!(inner.bytes <= KEPT_MAX_BYTES, "{}", inner.bytes);
        assert!(inner.kept.len() < answers);
        assert_eq!(
            inner.bytes,
            inner.kept.iter().map(|(_, a)| a.kept_bytes).sum::<usize>()
        );
    }
}
