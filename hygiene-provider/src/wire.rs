//! The inner seam as this provider reads and writes it: its own small structs (a provider knows no
//! host internals). Lenient on input (unknown fields are ignored), exact on output (what it writes
//! validates against `check-assessment.schema.json`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rules::Severity;
use crate::text::Range;

/// The protocol major version this provider speaks.
pub(crate) const PROTOCOL: &str = "asp/1.0";
pub(crate) const CAPABILITY_VERSION: &str = "check/1.0";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    pub(crate) protocol_version: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializedParams {
    #[serde(default)]
    pub(crate) granted_permissions: Granted,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Granted {
    #[serde(default)]
    pub(crate) resource_limits: Option<ResourceLimits>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourceLimits {
    #[serde(default)]
    pub(crate) wallclock_ms: Option<u64>,
}

/// One change of a changeset.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Change {
    pub(crate) path: String,
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) from: Option<String>,
    #[serde(default)]
    pub(crate) before: Option<String>,
    #[serde(default)]
    pub(crate) after: Option<String>,
}

/// `workspace/readBlob` result.
#[derive(Debug, Deserialize)]
pub(crate) struct ReadBlobResult {
    pub(crate) blobs: Vec<BlobData>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct BlobData {
    pub(crate) id: String,
    pub(crate) encoding: String,
    pub(crate) bytes: String,
}

/// `workspace/listTree` result.
#[derive(Debug, Deserialize)]
pub(crate) struct ListTreeResult {
    pub(crate) entries: Vec<TreeEntry>,
    #[serde(default)]
    pub(crate) truncated: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TreeEntry {
    pub(crate) path: String,
    pub(crate) blob_id: String,
    pub(crate) kind: String,
}

/// The provider's answer to `check/evaluate`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Assessment {
    pub(crate) status: Status,
    pub(crate) diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) evidence: Vec<Evidence>,
    pub(crate) coverage: Coverage,
    pub(crate) valid_as_of: ValidAsOf,
    pub(crate) provider: ProviderInfo,
    pub(crate) timing: Timing,
    pub(crate) cache: Cache,
}

/// Something the provider says about its evaluation beyond its findings.
#[derive(Debug, Serialize)]
pub(crate) struct Evidence {
    pub(crate) kind: &'static str,
    pub(crate) id: &'static str,
    pub(crate) message: String,
    pub(crate) data: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Complete,
    Incomplete,
    Unsupported,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Diagnostic {
    pub(crate) code: &'static str,
    pub(crate) severity: Severity,
    pub(crate) source: &'static str,
    pub(crate) message: String,
    pub(crate) location: Location,
    pub(crate) fingerprint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) introduced: Option<bool>,
    pub(crate) help: &'static str,
    pub(crate) code_description: CodeDescription,
}

/// Where a rule is documented.
#[derive(Debug, Serialize)]
pub(crate) struct CodeDescription {
    pub(crate) href: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct Location {
    pub(crate) path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) range: Option<Range>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Coverage {
    pub(crate) requested: CoveragePart,
    pub(crate) covered: CoveragePart,
    pub(crate) degraded: Vec<Degradation>,
    pub(crate) unsupported: Vec<Degradation>,
    pub(crate) exhaustive: bool,
    pub(crate) truncated: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CoveragePart {
    pub(crate) scope: Value,
    pub(crate) diagnostic_sources: Vec<String>,
    pub(crate) rules: Vec<String>,
    pub(crate) comparison: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct Degradation {
    pub(crate) source: &'static str,
    pub(crate) reason: &'static str,
    pub(crate) detail: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ValidAsOf {
    pub(crate) baseline: Value,
    pub(crate) changeset_digest: String,
    pub(crate) blobs: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProviderInfo {
    pub(crate) id: &'static str,
    pub(crate) version: String,
    pub(crate) config_digest: String,
    pub(crate) capability_version: &'static str,
    pub(crate) build_digest: String,
    pub(crate) capability_family: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Timing {
    pub(crate) elapsed_ms: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Cache {
    pub(crate) status: &'static str,
}
