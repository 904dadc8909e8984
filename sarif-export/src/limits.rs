//! GitHub code scanning's upload limits, and which findings a run keeps to respect them.
//!
//! An export is one run: GitHub rejects an upload with several runs of the same tool and category,
//! so splitting the results over runs would trade a truncation for a rejection. Past the results (or
//! rules) limit the run keeps the most severe findings (error, then warning, then note; gating before
//! advisory; host order otherwise) and says in a notification how many were left out. The other
//! limits cannot be reached by this exporter (one run per file, one location per result, at most
//! three tags per rule) and are checked by the tests.

use std::collections::HashSet;

use asp_wire::proto::{Disposition, Finding, Severity};

/// The limits an export respects (GitHub's by default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Results per run (GitHub rejects more than 25,000 and keeps only the top 5,000).
    pub results_per_run: usize,
    /// Rules per run.
    pub rules_per_run: usize,
    /// Tool extensions (providers) per run.
    pub extensions_per_run: usize,
    /// Runs per file.
    pub runs_per_file: usize,
    /// Locations per result.
    pub locations_per_result: usize,
    /// Tags per rule.
    pub tags_per_rule: usize,
    /// Gzip-compressed size of the file, in bytes; past it the writer warns.
    pub gzip_bytes: u64,
}

impl Limits {
    /// GitHub code scanning's limits (`docs.github.com`, "SARIF support for code scanning").
    pub const GITHUB: Limits = Limits {
        results_per_run: 25_000,
        rules_per_run: 25_000,
        extensions_per_run: 100,
        runs_per_file: 20,
        locations_per_result: 1_000,
        tags_per_rule: 20,
        gzip_bytes: 10 * 1000 * 1000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::GITHUB
    }
}

/// The findings a run keeps, in host order, and how many it left out and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) kept: Vec<usize>,
    /// Left out because the run already had as many results as allowed.
    pub(crate) over_results: usize,
    /// Left out because their rule would have been one rule too many.
    pub(crate) over_rules: usize,
}

impl Selection {
    pub(crate) fn omitted(&self) -> usize {
        self.over_results + self.over_rules
    }
}

/// How severe a finding is, most severe first.
fn rank(finding: &Finding) -> (u8, u8) {
    let severity = match finding.diagnostic.severity.known() {
        Some(Severity::Error) => 0,
        Some(Severity::Warning) | None => 1,
        Some(Severity::Info) => 2,
    };
    let gating = match &finding.disposition {
        Some(d) if d.is(Disposition::Gating) => 0,
        _ => 1,
    };
    (severity, gating)
}

/// Picks the findings to keep under `limits`.
pub(crate) fn select(findings: &[Finding], limits: &Limits) -> Selection {
    if findings.len() <= limits.results_per_run {
        let rules: HashSet<&str> = findings
            .iter()
            .map(|f| f.diagnostic.code.as_str())
            .collect();
        if rules.len() <= limits.rules_per_run {
            return Selection {
                kept: (0..findings.len()).collect(),
                ..Selection::default()
            };
        }
    }
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|&i| (rank(&findings[i]), i));
    let mut selection = Selection::default();
    let mut rules: HashSet<&str> = HashSet::new();
    for i in order {
        let code = findings[i].diagnostic.code.as_str();
        if selection.kept.len() >= limits.results_per_run {
            selection.over_results += 1;
        } else if rules.contains(code) || rules.len() < limits.rules_per_run {
            rules.insert(code);
            selection.kept.push(i);
        } else {
            selection.over_rules += 1;
        }
    }
    selection.kept.sort_unstable();
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use asp_wire::proto::Open;

    fn finding(code: &str, severity: Severity, gating: bool) -> Finding {
        let mut f = Finding::default();
        f.diagnostic.code = code.into();
        f.diagnostic.severity = Open::Known(severity);
        f.disposition = Some(Open::Known(if gating {
            Disposition::Gating
        } else {
            Disposition::Advisory
        }));
        f
    }

    fn limits(results: usize, rules: usize) -> Limits {
        Limits {
            results_per_run: results,
            rules_per_run: rules,
            ..Limits::GITHUB
        }
    }

    #[test]
    fn githubs_limits_are_the_default() {
        let l = Limits::default();
        assert_eq!(l.results_per_run, 25_000);
        assert_eq!(l.rules_per_run, 25_000);
        assert_eq!(l.runs_per_file, 20);
        assert_eq!(l.locations_per_result, 1_000);
        assert_eq!(l.tags_per_rule, 20);
        assert_eq!(l.extensions_per_run, 100);
        assert_eq!(l.gzip_bytes, 10_000_000);
    }

    #[test]
    fn within_limits_everything_is_kept_in_host_order() {
        let findings = vec![
            finding("a", Severity::Info, false),
            finding("b", Severity::Error, true),
        ];
        let s = select(&findings, &Limits::GITHUB);
        assert_eq!(s.kept, [0, 1]);
        assert_eq!(s.omitted(), 0);
    }

    #[test]
    fn past_the_results_limit_the_most_severe_are_kept_in_host_order() {
        let findings = vec![
            finding("a", Severity::Info, false),
            finding("a", Severity::Warning, false),
            finding("a", Severity::Error, false),
            finding("a", Severity::Error, true),
            finding("a", Severity::Info, false),
        ];
        let s = select(&findings, &limits(3, 10));
        assert_eq!(s.kept, [1, 2, 3]);
        assert_eq!(s.over_results, 2);
        assert_eq!(s.over_rules, 0);
        let s = select(&findings, &limits(1, 10));
        assert_eq!(s.kept, [3], "gating before advisory at the same severity");
    }

    #[test]
    fn past_the_rules_limit_findings_of_extra_rules_are_left_out() {
        let findings = vec![
            finding("a", Severity::Warning, false),
            finding("b", Severity::Error, false),
            finding("c", Severity::Info, false),
            finding("a", Severity::Info, false),
        ];
        let s = select(&findings, &limits(10, 2));
        assert_eq!(s.kept, [0, 1, 3]);
        assert_eq!(s.over_rules, 1);
        assert_eq!(s.omitted(), 1);
    }
}
