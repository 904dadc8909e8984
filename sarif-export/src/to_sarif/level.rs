//! A finding's SARIF level, which its result carries and its rule's default configuration names.

use asp_wire::proto::{Finding, Severity};
use serde_sarif::sarif::ResultLevel;

/// error → `error`, warning → `warning`, info → `note`; a severity ASP does not define → `warning`.
pub(crate) fn level(finding: &Finding) -> ResultLevel {
    match finding.diagnostic.severity.known() {
        Some(Severity::Error) => ResultLevel::Error,
        Some(Severity::Warning) | None => ResultLevel::Warning,
        Some(Severity::Info) => ResultLevel::Note,
    }
}

/// `level` as SARIF spells it.
pub(crate) fn level_name(level: ResultLevel) -> &'static str {
    match level {
        ResultLevel::None => "none",
        ResultLevel::Note => "note",
        ResultLevel::Warning => "warning",
        ResultLevel::Error => "error",
    }
}
