//! The inner seam as a provider reads and writes it: its own small structs (a provider knows no
//! host internals). Lenient on input (unknown fields are ignored), exact on output (what it writes
//! validates against `check-assessment.schema.json`).

use asp_wire::reason::Reason;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::text::Range;

/// The protocol major version a provider on the kit speaks.
pub const PROTOCOL: &str = "asp/1.0";
pub const CAPABILITY_VERSION: &str = "check/1.0";

/// How severe a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializedParams {
    #[serde(default)]
    pub granted_permissions: Granted,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Granted {
    #[serde(default)]
    pub resource_limits: Option<ResourceLimits>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLimits {
    #[serde(default)]
    pub wallclock_ms: Option<u64>,
}

/// One change of a changeset.
#[derive(Clone, Debug, Deserialize)]
pub struct Change {
    pub path: String,
    pub kind: String,
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
}

/// `workspace/readBlob` result.
#[derive(Debug, Deserialize)]
pub struct ReadBlobResult {
    pub blobs: Vec<BlobData>,
}

#[derive(Debug, Deserialize)]
pub struct BlobData {
    pub id: String,
    pub encoding: String,
    pub bytes: String,
}

/// `workspace/listTree` result.
#[derive(Debug, Deserialize)]
pub struct ListTreeResult {
    pub entries: Vec<TreeEntry>,
    #[serde(default)]
    pub truncated: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeEntry {
    pub path: String,
    pub blob_id: String,
    pub kind: String,
}

/// The provider's answer to `check/evaluate`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    pub status: Status,
    pub diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    pub coverage: Coverage,
    pub valid_as_of: ValidAsOf,
    pub provider: ProviderInfo,
    pub timing: Timing,
    pub cache: Cache,
}

/// Something the provider says about its evaluation beyond its findings.
#[derive(Debug, Serialize)]
pub struct Evidence {
    pub kind: &'static str,
    pub id: String,
    pub message: String,
    pub data: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Complete,
    Incomplete,
    Unsupported,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub code: String,
    pub severity: Severity,
    pub source: &'static str,
    pub message: String,
    pub location: Location,
    pub fingerprint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub introduced: Option<bool>,
    pub help: String,
    pub code_description: CodeDescription,
}

/// Where a rule is documented.
#[derive(Debug, Serialize)]
pub struct CodeDescription {
    pub href: String,
}

#[derive(Debug, Serialize)]
pub struct Location {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
}

#[derive(Debug, Serialize)]
pub struct Coverage {
    pub requested: CoveragePart,
    pub covered: CoveragePart,
    pub degraded: Vec<Degradation>,
    pub unsupported: Vec<Degradation>,
    pub exhaustive: bool,
    pub truncated: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoveragePart {
    pub scope: Value,
    pub diagnostic_sources: Vec<String>,
    pub rules: Vec<String>,
    pub comparison: String,
}

#[derive(Debug, Serialize)]
pub struct Degradation {
    pub source: &'static str,
    pub reason: Reason,
    pub detail: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidAsOf {
    pub baseline: Value,
    pub changeset_digest: String,
    pub blobs: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    pub id: &'static str,
    pub version: String,
    pub config_digest: String,
    pub capability_version: &'static str,
    pub build_digest: String,
    pub capability_family: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    pub elapsed_ms: u64,
}

#[derive(Debug, Serialize)]
pub struct Cache {
    pub status: &'static str,
}
