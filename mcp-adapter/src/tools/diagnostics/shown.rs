//! The host's decision as `asp_diagnostics` shows it: findings converted (untrusted text made safe,
//! host paths placed in the workspace), ordered by severity then path and line, filtered by
//! `minSeverity`, each thing said once (authority per provider, no repeated step), capped in bytes,
//! and the one-line summary.

use bridge_core::model::{DecisionView, NotRunView};
use std::collections::BTreeMap;
use std::path::Path;

use asp_wire::proto::{self, Comparison, DecisionKind, Severity};
use bridge_core::confine::host_path;
use bridge_core::model;

use super::{ANSWER_MAX_BYTES, AssuranceOut, Finding, Output, RangeOut, SeverityArg};
use crate::to_mcp::{self, Authority, id, text};
use crate::tools::caveats::Caveats;

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
        let size = to_mcp::json_len(&shown);
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
        comparison: comparison.as_str().to_owned(),
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
        let chosen: Vec<String> = facts
            .not_run
            .iter()
            .filter(|n| n.is_left_out())
            .map(|n| id(&n.source))
            .collect();
        match chosen.len() {
            0 => "coverage complete".to_owned(),
            n => format!(
                "coverage complete but for what the host's configuration leaves out, not checked ({n}: {}{}; see leftOut and caveats)",
                chosen[..n.min(3)].join(", "),
                if n > 3 { ", …" } else { "" }
            ),
        }
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
