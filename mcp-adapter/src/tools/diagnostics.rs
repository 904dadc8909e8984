//! `asp_diagnostics`: `host/evaluateChangeset` at the interactive call site on the working-tree
//! changes (or on the given repo-relative paths; with `base`, on the changes since the merge base
//! of that revision and HEAD, the branch's commits included: the revision is checked before git
//! sees it and must name a commit). The host's decision, findings, coverage, assurance,
//! authority evidence and receipt are shown as data, labelled advisory. Findings are paginated: a
//! page holds at most `limit` findings and fits the output budget, and `nextCursor` continues the
//! same answer (the last few answers are kept in memory, so pages never mix two evaluations). The
//! kept answers are capped in bytes: an answer past its cap keeps its first findings and says how many
//! it dropped. A finding whose path the host put outside the workspace keeps no path and says so.

use std::collections::BTreeMap;
use std::sync::Arc;

use asp_wire::proto::{AdvisoryCallSite, Comparison};
use bridge_core::changeset::check_rev;
use bridge_core::worktree::{Base, Evaluate, Scope};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::caveats::{Budgeted, Caveats, shrunk_len};
use super::run::{AspTool, Call};
use crate::error::Error;
use crate::to_mcp::{self, Authority, Coverage, id, text};

mod pages;
mod paths;
mod shown;
mod text;

use pages::cursor;
pub(crate) use pages::{Pages, page, parse_cursor};
use paths::{confined_paths, missing_paths};
pub(crate) use shown::answer;

/// The tool, with the last few answers kept for their cursors.
#[derive(Default)]
pub(crate) struct AspDiagnostics {
    pages: Pages,
}

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
    #[schemars(with = "Comparison")]
    pub(crate) comparison: Option<Comparison>,
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
    /// against the empty tree, changed or not (as `sarif --all-files` does); not with `base`.
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

    async fn run(self: Arc<Self>, call: Call, args: Args) -> Result<Output, Error> {
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
            let Some(answer) = self.pages.get(key) else {
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
        let comparison = args.comparison.unwrap_or_default();
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
        if whole && args.base.is_some() {
            return Err(Error::Input(
                "base applies to scope changes only: scope files checks the files whole, against \
                 nothing"
                    .to_owned(),
            ));
        }
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
        let answer = self.pages.keep(|key| {
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use asp_wire::proto::{self, Severity};

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
        let answer = pages.keep(|key| {
            answer(
                &decision(5),
                Comparison::All,
                1,
                key,
                None,
                SeverityArg::Info,
            )
        });
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
            pages.keep(|key| {
                answer(
                    &decision(1),
                    Comparison::All,
                    1,
                    key,
                    None,
                    SeverityArg::Info,
                )
            });
        }
        assert!(pages.get(1).is_none());
        assert!(pages.get(KEPT_ANSWERS as u64 + 1).is_some());
        for bad in ["", "x1.2", "d1", "d1.-3", "d.1", &"d1.".repeat(40)] {
            assert!(parse_cursor(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shrinking_a_page_points_the_cursor_at_the_first_finding_left_out() {
        let answer = answer(
            &decision(10),
            Comparison::All,
            1,
            7,
            None,
            SeverityArg::Info,
        );
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
        let one = super::super::run::fit(&mut page(&answer, 0, 1).unwrap(), 24 * 1024).unwrap();
        let budget = serde_json::to_vec(&one).unwrap().len() - 1;
        let err = super::super::run::fit(&mut page(&answer, 0, 7).unwrap(), budget).unwrap_err();
        assert!(
            matches!(err, Error::Oversize { budget: b } if b == budget),
            "{err}"
        );
        let whole = super::super::run::fit(&mut page(&answer, 0, 7).unwrap(), 24 * 1024).unwrap();
        assert_eq!(whole["findings"].as_array().unwrap().len(), 2);
        assert!(whole.get("nextCursor").is_none());
    }

    #[test]
    fn a_shrunk_page_keeps_a_finding_and_moves_on() {
        let answer = answer(
            &decision(10),
            Comparison::All,
            1,
            7,
            None,
            SeverityArg::Info,
        );
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
        let out = answer(
            &d,
            Comparison::All,
            1,
            1,
            Some(Path::new("/work/repo")),
            SeverityArg::Info,
        );
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
        let out = answer(
            &d,
            Comparison::All,
            1,
            1,
            Some(Path::new("/work/repo")),
            SeverityArg::Info,
        );
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

    #[test]
    fn findings_come_most_severe_first_and_those_below_min_severity_are_counted() {
        let mut d = decision(4);
        for (f, (severity, path)) in d.findings.iter_mut().zip([
            (Severity::Info, "a.txt"),
            (Severity::Warning, "b.txt"),
            (Severity::Info, "0.txt"),
            (Severity::Error, "z.txt"),
        ]) {
            f.diagnostic.severity = proto::Open::Known(severity);
            f.diagnostic.location.path = path.to_owned();
        }
        let all = answer(&d, Comparison::All, 4, 1, None, SeverityArg::Info);
        let order: Vec<_> = all
            .findings
            .iter()
            .map(|f| f.path.clone().unwrap())
            .collect();
        assert_eq!(order, ["z.txt", "b.txt", "0.txt", "a.txt"]);
        let errors = answer(&d, Comparison::All, 4, 1, None, SeverityArg::Warning);
        assert_eq!(errors.findings.len(), 2);
        assert_eq!(errors.below_min_severity, 2);
        assert!(
            errors
                .summary
                .contains("2 finding(s) below min severity warning")
        );
    }

    #[test]
    fn a_finding_says_its_authority_and_its_step_once() {
        let out = answer(&decision(3), Comparison::All, 1, 1, None, SeverityArg::Info);
        assert_eq!(out.finding_authority.len(), 1, "one provider");
        for f in &out.findings {
            assert!(f.authority.is_none(), "{f:?}");
            assert!(f.next_step.is_some());
            assert_ne!(f.help, f.next_step, "{f:?}");
        }
    }
}
