//! The views every front end needs of the host's answers, derived in one place: what did not run
//! ([`NotRun`], merged from coverage and receipt failures), whether a decision is incomplete (never to
//! be shown as clean), the status summary, canonical capability names.
//!
//! One degradation reason is no gap in coverage: [`Reason::BlockingDiagnostic`] says that required
//! coverage ran and found a blocking finding. It is kept apart ([`Decision::blocking`]) and never
//! listed as something that did not run.
//!
//! The answer types themselves are the lenient [`asp_wire::proto`] structs, under their one name
//! (`proto::Decision`, `proto::Status`…); this module only adds what front ends would otherwise
//! compute on their own.

use asp_wire::proto::{AuthorityStatus, Capabilities, Decision, DecisionKind, Degradation, Status};
use asp_wire::reason::{LEFT_OUT_BY_CONFIGURATION, Reason};

/// The canonical name of a capability or role, mapping the legacy `sense`, `judge`, `act`.
pub fn canonical_capability(name: &str) -> &str {
    match name {
        "sense" => "inspect",
        "judge" => "check",
        "act" => "edit",
        other => other,
    }
}

/// One thing that did not run, or ran degraded, and why: from coverage or from receipt failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRun {
    pub source: String,
    pub reason: String,
    pub detail: String,
}

impl From<&Degradation> for NotRun {
    fn from(d: &Degradation) -> Self {
        NotRun {
            source: d.source.clone(),
            reason: d.reason.clone(),
            detail: d.detail.clone(),
        }
    }
}

impl NotRun {
    /// Whether its reason is `reason` (it is kept as the host sent it).
    pub fn is(&self, reason: Reason) -> bool {
        self.reason == reason.as_str()
    }

    /// Whether this is something the user's configuration left out ([`LEFT_OUT_BY_CONFIGURATION`]).
    pub fn is_left_out(&self) -> bool {
        self.is(Reason::OptionalDegraded) && self.detail.starts_with(LEFT_OUT_BY_CONFIGURATION)
    }
}

/// Merges degradation lists, keeping the first of each `(source, reason)` pair, in order, and only
/// the entries `keep` accepts.
fn merge_where<'a>(
    lists: impl IntoIterator<Item = &'a [Degradation]>,
    keep: impl Fn(&Degradation) -> bool,
) -> Vec<NotRun> {
    let mut out: Vec<NotRun> = Vec::new();
    for degradation in lists.into_iter().flatten().filter(|d| keep(d)) {
        if !out
            .iter()
            .any(|n| n.source == degradation.source && n.reason == degradation.reason)
        {
            out.push(degradation.into());
        }
    }
    out
}

/// What did not run or ran degraded: every degradation but [`Reason::BlockingDiagnostic`].
fn merge<'a>(lists: impl IntoIterator<Item = &'a [Degradation]>) -> Vec<NotRun> {
    merge_where(lists, |d| !d.is(Reason::BlockingDiagnostic))
}

/// What did not run or ran degraded, as a part of an answer tells it.
pub trait NotRunView {
    /// Everything the host says did not run or ran degraded; empty only when coverage is whole.
    /// Required coverage that ran and blocked is not in it (see [`DecisionView::blocking`]).
    fn not_run(&self) -> Vec<NotRun>;
}

/// The views of a decision front ends show.
pub trait DecisionView {
    /// The required coverage that ran and found a blocking finding ([`Reason::BlockingDiagnostic`]).
    fn blocking(&self) -> Vec<NotRun>;

    /// Whether required coverage is incomplete: a result that must never be shown as "clean".
    fn is_incomplete(&self) -> bool;
}

impl NotRunView for Decision {
    fn not_run(&self) -> Vec<NotRun> {
        merge(self.degradation_lists())
    }
}

impl DecisionView for Decision {
    fn blocking(&self) -> Vec<NotRun> {
        merge_where(self.degradation_lists(), |d| {
            d.is(Reason::BlockingDiagnostic)
        })
    }

    fn is_incomplete(&self) -> bool {
        let unexplained_refusal = !self.is(DecisionKind::Allow) && self.findings.is_empty();
        self.is(DecisionKind::Indeterminate)
            || unexplained_refusal
            || self.not_run().iter().any(|n| !n.is_left_out())
    }
}

impl NotRunView for Status {
    /// Degraded coverage from every part of the status (gates, capabilities, servers, receipt).
    fn not_run(&self) -> Vec<NotRun> {
        let gates = self
            .gates()
            .into_iter()
            .filter_map(|(_, g)| g.map(|g| g.degraded.as_slice()));
        let caps = self
            .capability_families()
            .into_iter()
            .filter_map(|(_, c)| c.map(|c| c.degraded.as_slice()));
        let servers = self
            .servers
            .iter()
            .filter_map(|s| s.coverage.as_ref().map(|c| c.degraded.as_slice()));
        merge(
            gates
                .chain(caps)
                .chain(servers)
                .chain([self.receipt.failures.as_slice()]),
        )
    }
}

impl NotRunView for Capabilities {
    /// Degraded coverage of every capability family, of the host's coverage and of the receipt.
    fn not_run(&self) -> Vec<NotRun> {
        let families = [
            &self.capabilities.inspect,
            &self.capabilities.check,
            &self.capabilities.edit,
        ];
        let families = families
            .into_iter()
            .flatten()
            .map(|c| c.degraded.as_slice());
        merge(families.chain([
            self.coverage.degraded.as_slice(),
            self.receipt.failures.as_slice(),
        ]))
    }
}

impl NotRunView for AuthorityStatus {
    /// Degraded coverage of every provider and of the receipt.
    fn not_run(&self) -> Vec<NotRun> {
        let providers = self.providers.iter().filter_map(|p| p.coverage.as_ref());
        merge(
            providers
                .map(|c| c.degraded.as_slice())
                .chain([self.receipt.failures.as_slice()]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use asp_wire::proto::Inspection;

    fn fixture<T: serde::de::DeserializeOwned>(path: &str) -> T {
        serde_json::from_value(test_support::fixture(path)).expect("model")
    }

    #[test]
    fn legacy_names_map_to_canonical_ones() {
        assert_eq!(canonical_capability("sense"), "inspect");
        assert_eq!(canonical_capability("judge"), "check");
        assert_eq!(canonical_capability("act"), "edit");
        assert_eq!(canonical_capability("check"), "check");
    }

    #[test]
    fn an_indeterminate_decision_says_what_did_not_run() {
        let decision: Decision = fixture("outer/evaluate.indeterminate.missing-provider.json");
        assert!(decision.is(DecisionKind::Indeterminate));
        let not_run = decision.not_run();
        assert!(
            !not_run.is_empty(),
            "an indeterminate decision names what did not run"
        );
        assert!(decision.is_incomplete());
    }

    #[test]
    fn a_deny_with_whole_coverage_is_complete() {
        let decision: Decision = fixture("outer/evaluate.deny.gating.json");
        assert!(decision.not_run().is_empty());
        assert!(!decision.is_incomplete());
        assert_eq!(decision.findings.len(), 1);
    }

    #[test]
    fn required_coverage_that_ran_and_blocked_is_not_listed_as_not_run() {
        let decision: Decision = fixture("core/evaluate.deny.json");
        assert!(decision.is(DecisionKind::Deny));
        assert_eq!(decision.not_run(), [], "the required check ran");
        assert!(!decision.is_incomplete());
        let blocking = decision.blocking();
        assert_eq!(blocking.len(), 1, "{blocking:?}");
        assert_eq!(blocking[0].source, "core-required-check");
        assert_eq!(blocking[0].reason, Reason::BlockingDiagnostic.as_str());
    }

    #[test]
    fn status_lists_gates_in_protocol_order() {
        let status: Status = fixture("outer/status.response.json");
        assert!(!status.is_degraded());
        let names: Vec<_> = status.gates().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["interactive", "gate", "sweep"]);
    }

    #[test]
    fn every_example_answer_reads() {
        let dir = test_support::fixtures_dir().join("asp");
        for sub in ["outer", "core"] {
            for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let rel = format!("{sub}/{name}");
                if name.starts_with("evaluate") {
                    let _: Decision = fixture(&rel);
                } else if name.starts_with("status") {
                    let _: Status = fixture(&rel);
                } else if name.starts_with("capabilities") {
                    let _: Capabilities = fixture(&rel);
                } else if name.starts_with("authority") {
                    let _: AuthorityStatus = fixture(&rel);
                } else if name.starts_with("query-inspect") {
                    let _: Inspection = fixture(&rel);
                }
            }
        }
    }
}
