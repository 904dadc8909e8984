//! The outer seam on the wire: method names, params and results (`outer-host.schema.json`).
//!
//! The only serde boundary of the host wire format. Lenient on input: unknown fields are ignored,
//! unknown enum values are kept as [`Open::Other`], absent arrays are empty, and receipts are kept
//! whole for audit. Strict on output: the call-site type cannot express `gate`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::open::wire_enum;
pub use crate::open::{Open, Wire};
use crate::reason::Reason;

pub const STATUS: &str = "host/status";
pub const CAPABILITIES: &str = "host/capabilities";
pub const AUTHORITY_STATUS: &str = "host/authority/status";
pub const QUERY_INSPECT: &str = "host/queryInspect";
pub const EVALUATE_CHANGESET: &str = "host/evaluateChangeset";
/// The outer seam's edit methods: the bridge never calls them, the embedded host refuses them.
pub const REQUEST_EDIT_PLAN: &str = "host/requestEditPlan";
pub const APPLY_PROPOSAL: &str = "host/applyProposal";
/// The end of a session, on both seams: the `shutdown` request, then the `exit` notification.
pub const SHUTDOWN: &str = "shutdown";
pub const EXIT: &str = "exit";

wire_enum!(
    /// `allow | deny | indeterminate`: the host's decision.
    DecisionKind { Allow = "allow", Deny = "deny", Indeterminate = "indeterminate" }
);
wire_enum!(
    /// Every call site of the protocol, as read from host answers.
    CallSite { Interactive = "interactive", Gate = "gate", Sweep = "sweep" }
);
wire_enum!(
    /// Diagnostic severity; ASP has no `hint`.
    Severity { Error = "error", Warning = "warning", Info = "info" }
);
wire_enum!(
    /// Whether a finding blocks a gate or only informs.
    Disposition { Gating = "gating", Advisory = "advisory" }
);
wire_enum!(
    /// The host's own state in `host/status`.
    HostState { Ready = "ready", Degraded = "degraded", Unavailable = "unavailable" }
);
wire_enum!(
    /// A provider's `serverStatus.state` in `host/status`.
    ServerState {
        Ready = "ready",
        Installed = "installed",
        Degraded = "degraded",
        Unavailable = "unavailable",
        Quarantined = "quarantined",
        Incompatible = "incompatible",
    }
);
wire_enum!(
    /// A provider's lifecycle (`providerLifecycleState`): `lifecycleState` in `host/status`,
    /// `providerState` of a degradation.
    Lifecycle {
        Launched = "launched",
        Initializing = "initializing",
        Initialized = "initialized",
        Active = "active",
        Cancelled = "cancelled",
        ShuttingDown = "shutting-down",
        Exited = "exited",
        Crashed = "crashed",
        TimedOut = "timed-out",
        Incompatible = "incompatible",
        Malformed = "malformed",
        Unavailable = "unavailable",
        Quarantined = "quarantined",
        Degraded = "degraded",
    }
);
wire_enum!(
    /// A provider's `enrollmentState` in `host/status`.
    Enrollment {
        Enrolled = "enrolled",
        Optional = "optional",
        Missing = "missing",
        Quarantined = "quarantined",
        Incompatible = "incompatible",
        Disabled = "disabled",
        Error = "error",
        InstalledNotEnrolled = "installed-not-enrolled",
    }
);

wire_enum!(
    /// A provider's `role` in `host/status` (`servers[]` and each capability's states).
    ProviderRole { Required = "required", Optional = "optional", Advisory = "advisory", Disabled = "disabled" }
);
wire_enum!(
    /// `policy.activation` in `host/status`.
    PolicyActivation { Active = "active", Pending = "pending", Rejected = "rejected" }
);
wire_enum!(
    /// An assessment's `status` (`assessmentStatus`), as a host reads a provider's answer.
    AssessmentStatus {
        Complete = "complete",
        Incomplete = "incomplete",
        Unsupported = "unsupported",
        Error = "error",
        Cancelled = "cancelled",
    }
);

/// The call sites this bridge may use. `gate` is not one of them: the bridge never gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdvisoryCallSite {
    Interactive,
    Sweep,
}

// `comparison` of `host/evaluateChangeset`, and the one parser of it: serde's, clap's for the CLI's
// `--comparison` (feature `clap`), and the schema of the MCP tools' argument (feature `schemars`),
// under the name MCP clients have always seen. (A plain comment: schemars would show a doc comment.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(rename = "ComparisonArg"))]
#[serde(rename_all = "lowercase")]
pub enum Comparison {
    #[default]
    All,
    Introduced,
}

impl Comparison {
    /// Its text on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Comparison::All => "all",
            Comparison::Introduced => "introduced",
        }
    }
}

// ---- shared shapes -------------------------------------------------------------------------------

/// A baseline or `validAsOf` snapshot reference; the host is its only issuer.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    #[serde(default)]
    pub rev: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamped_at: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blobs: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Degradation {
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub requirement: Option<String>,
    #[serde(default)]
    pub capability: Option<String>,
    #[serde(default)]
    pub provider_state: Option<String>,
}

impl Degradation {
    /// Whether its reason is `reason` (it is read as sent: a host may send one we do not know).
    pub fn is(&self, reason: Reason) -> bool {
        self.reason == reason.as_str()
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    #[serde(default)]
    pub exhaustive: Option<bool>,
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default)]
    pub enrolled: Vec<String>,
    #[serde(default)]
    pub ran: Vec<String>,
    #[serde(default)]
    pub degraded: Vec<Degradation>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityGrant {
    #[serde(default)]
    pub granted: bool,
    #[serde(default)]
    pub requirement: String,
    #[serde(default)]
    pub call_site: Option<String>,
    #[serde(default)]
    pub policy_digest: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityEvidence {
    #[serde(default)]
    pub identity: String,
    #[serde(default)]
    pub integrity: String,
    #[serde(default)]
    pub conformance: Option<String>,
    #[serde(default)]
    pub isolation: Option<String>,
    #[serde(default)]
    pub authority: AuthorityGrant,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Assurance {
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub transaction_guarantee: String,
    #[serde(default)]
    pub detail: Option<String>,
}

/// The host's audit receipt: the fields the bridge shows, plus the whole object as received.
#[derive(Clone, Debug, Default)]
pub struct Receipt {
    pub receipt_id: String,
    pub issued_at: Option<String>,
    pub kind: Option<String>,
    pub failures: Vec<Degradation>,
    pub raw: Value,
}

impl<'de> Deserialize<'de> for Receipt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(deserializer)?;
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
        let failures = match raw.get("failures") {
            Some(list) => {
                Vec::<Degradation>::deserialize(list).map_err(serde::de::Error::custom)?
            }
            None => Vec::new(),
        };
        Ok(Receipt {
            receipt_id: text("receiptId").unwrap_or_default(),
            issued_at: text("issuedAt"),
            kind: text("kind"),
            failures,
            raw,
        })
    }
}

// ---- host/status ---------------------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostInfo {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub outer_protocol: String,
    #[serde(default)]
    pub state: Open<HostState>,
    #[serde(default)]
    pub binding_candidate: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    #[serde(default)]
    pub root: String,
    #[serde(default)]
    pub baseline: Value,
    #[serde(default)]
    pub valid_as_of: Option<Snapshot>,
    #[serde(default)]
    pub stale_reason: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyInfo {
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub activation: String,
    #[serde(default)]
    pub policy_digest: String,
    /// An object in the schema, a string in some examples: kept as sent.
    #[serde(default)]
    pub local_override: Option<Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub roles: Vec<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default)]
    pub authority_evidence: Option<AuthorityEvidence>,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub lifecycle_state: Option<String>,
    #[serde(default)]
    pub enrollment_state: String,
    #[serde(default)]
    pub required_for: Vec<String>,
    #[serde(default)]
    pub coverage: Option<Coverage>,
    #[serde(default)]
    pub manifest_state: Option<String>,
    #[serde(default)]
    pub detail: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateStatus {
    #[serde(default)]
    pub available: bool,
    #[serde(default)]
    pub required_providers: Vec<String>,
    #[serde(default)]
    pub required_capabilities: Vec<String>,
    #[serde(default)]
    pub degraded: Vec<Degradation>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Gates {
    #[serde(default)]
    pub interactive: Option<GateStatus>,
    #[serde(default)]
    pub gate: Option<GateStatus>,
    #[serde(default)]
    pub sweep: Option<GateStatus>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityStatus {
    #[serde(default)]
    pub available: bool,
    #[serde(default)]
    pub providers: Vec<String>,
    #[serde(default)]
    pub required_for: Vec<String>,
    #[serde(default)]
    pub degraded: Vec<Degradation>,
    #[serde(default)]
    pub legacy_aliases: Vec<String>,
}

/// `{inspect, check, edit}`; hosts that still say `sense`, `judge`, `act` are read the same way.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CapabilityCoverage {
    #[serde(default, alias = "sense")]
    pub inspect: Option<CapabilityStatus>,
    #[serde(default, alias = "judge")]
    pub check: Option<CapabilityStatus>,
    #[serde(default, alias = "act")]
    pub edit: Option<CapabilityStatus>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub host: HostInfo,
    #[serde(default)]
    pub workspace: WorkspaceInfo,
    #[serde(default)]
    pub policy: PolicyInfo,
    #[serde(default)]
    pub servers: Vec<ServerStatus>,
    #[serde(default)]
    pub gates: Gates,
    #[serde(default)]
    pub capabilities: CapabilityCoverage,
    #[serde(default)]
    pub assurance_capabilities: Vec<String>,
    #[serde(default)]
    pub receipt: Receipt,
}

// ---- host/capabilities, host/authority/status, host/queryInspect ---------------------------------

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    #[serde(default)]
    pub capabilities: CapabilityCoverage,
    #[serde(default)]
    pub sources: Vec<ServerStatus>,
    #[serde(default)]
    pub coverage: Coverage,
    #[serde(default)]
    pub legacy_roles: Option<Value>,
    #[serde(default)]
    pub receipt: Receipt,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityStatus {
    #[serde(default)]
    pub policy_activation: String,
    #[serde(default)]
    pub policy_digest: String,
    #[serde(default)]
    pub providers: Vec<ServerStatus>,
    #[serde(default)]
    pub receipt: Receipt,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryInspectParams {
    pub call_site: AdvisoryCallSite,
    pub request: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inspection {
    #[serde(default)]
    pub data: Value,
    #[serde(default)]
    pub valid_as_of: Snapshot,
    #[serde(default)]
    pub coverage: Coverage,
    #[serde(default)]
    pub receipt: Receipt,
}

// ---- host/evaluateChangeset ----------------------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateParams {
    pub call_site: AdvisoryCallSite,
    pub changeset: ChangeSet,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// A content-addressed changeset against the host's baseline (`changeset.schema.json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeSet {
    /// Echoed exactly as the host issued it.
    pub baseline: Value,
    pub changes: Vec<Change>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Create,
    Modify,
    Delete,
    Rename,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Position {
    #[serde(default)]
    pub line: u32,
    #[serde(default)]
    pub char: u32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Range {
    #[serde(default)]
    pub start: Position,
    #[serde(default)]
    pub end: Position,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Location {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub range: Option<Range>,
}

impl Location {
    /// Whether it names the workspace as a whole rather than a file ([`is_workspace_path`]).
    pub fn is_workspace(&self) -> bool {
        is_workspace_path(&self.path)
    }
}

/// Whether a location's `path` names the workspace as a whole rather than a file: absent, `""` or
/// `.` (a project-level finding, such as a provider's configuration error).
pub fn is_workspace_path(path: &str) -> bool {
    matches!(path, "" | "." | "./")
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct CodeDescription {
    #[serde(default)]
    pub href: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub severity: Open<Severity>,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub location: Location,
    #[serde(default)]
    pub fingerprint: String,
    #[serde(default)]
    pub introduced: Option<bool>,
    #[serde(default)]
    pub help: Option<String>,
    #[serde(default)]
    pub code_description: Option<CodeDescription>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub diagnostic: Diagnostic,
    #[serde(default)]
    pub authority: Option<AuthorityEvidence>,
    #[serde(default)]
    pub disposition: Option<Open<Disposition>>,
    #[serde(default)]
    pub next_step: Option<String>,
    #[serde(default)]
    pub next_step_origin: Option<String>,
    #[serde(default)]
    pub severity_note: Option<String>,
}

/// The host's decision envelope (`verdict.schema.json`).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    #[serde(default)]
    pub pass: Option<bool>,
    pub decision: Open<DecisionKind>,
    #[serde(default)]
    pub call_site: Open<CallSite>,
    #[serde(default)]
    pub request_digest: Option<String>,
    #[serde(default)]
    pub changeset_digest: Option<String>,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub coverage: Coverage,
    #[serde(default)]
    pub policy_digest: Option<String>,
    #[serde(default)]
    pub authority_evidence: Vec<AuthorityEvidence>,
    #[serde(default)]
    pub valid_as_of: Snapshot,
    #[serde(default)]
    pub assurance: Assurance,
    #[serde(default)]
    pub receipt: Receipt,
}

/// `$/progress` params; `token` echoes the request id.
#[derive(Clone, Debug, Deserialize)]
pub struct ProgressParams {
    pub token: rpc_peer::jsonrpc::Id,
    #[serde(default)]
    pub value: Value,
}

impl Decision {
    /// The degradations of the coverage and of the receipt, in that order.
    pub fn degradation_lists(&self) -> [&[Degradation]; 2] {
        [
            self.coverage.degraded.as_slice(),
            self.receipt.failures.as_slice(),
        ]
    }

    pub fn is(&self, kind: DecisionKind) -> bool {
        self.decision.is(kind)
    }
}

impl Status {
    /// Whether the host says it is anything but fully ready.
    pub fn is_degraded(&self) -> bool {
        !self.host.state.is(HostState::Ready)
    }

    /// Each call site with its gate status, in protocol order.
    pub fn gates(&self) -> [(&'static str, Option<&GateStatus>); 3] {
        [
            ("interactive", self.gates.interactive.as_ref()),
            ("gate", self.gates.gate.as_ref()),
            ("sweep", self.gates.sweep.as_ref()),
        ]
    }

    /// Each capability family with its status, canonical names only.
    pub fn capability_families(&self) -> [(&'static str, Option<&CapabilityStatus>); 3] {
        [
            ("inspect", self.capabilities.inspect.as_ref()),
            ("check", self.capabilities.check.as_ref()),
            ("edit", self.capabilities.edit.as_ref()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provider_states_are_the_schemas() {
        use crate::reason::tests::assert_is_schema_enum;
        let outer = "outer-host.schema.json";
        assert_is_schema_enum::<ServerState>(outer, "/$defs/serverStatus/properties/state/enum");
        assert_is_schema_enum::<Enrollment>(outer, "/$defs/enrollmentState/enum");
        assert_is_schema_enum::<Lifecycle>(
            "assurance.schema.json",
            "/$defs/providerLifecycleState/enum",
        );
        assert_is_schema_enum::<AssessmentStatus>(
            "assurance.schema.json",
            "/$defs/assessmentStatus/enum",
        );
        assert_eq!(
            Lifecycle::from_wire("shutting-down"),
            Some(Lifecycle::ShuttingDown)
        );
        assert_eq!(Lifecycle::from_wire("gone"), None);
    }

    #[test]
    fn unknown_enum_values_are_kept() {
        let d: Diagnostic = serde_json::from_str(r#"{"severity":"critical","code":"x"}"#).unwrap();
        assert_eq!(d.severity, Open::Other("critical".into()));
        assert_eq!(d.severity.as_str(), "critical");
        let d: Diagnostic = serde_json::from_str(r#"{"severity":"warning"}"#).unwrap();
        assert!(d.severity.is(Severity::Warning));
    }

    #[test]
    fn the_call_site_sent_can_only_be_interactive_or_sweep() {
        let text = serde_json::to_string(&[AdvisoryCallSite::Interactive, AdvisoryCallSite::Sweep])
            .unwrap();
        assert_eq!(text, r#"["interactive","sweep"]"#);
    }

    #[test]
    fn legacy_capability_names_are_read_as_canonical() {
        let c: CapabilityCoverage =
            serde_json::from_str(r#"{"judge":{"available":true}}"#).unwrap();
        assert!(c.check.unwrap().available);
    }

    #[test]
    fn a_location_without_a_file_names_the_workspace() {
        for text in [
            r#"{}"#,
            r#"{"path":""}"#,
            r#"{"path":"."}"#,
            r#"{"path":"./"}"#,
        ] {
            let location: Location = serde_json::from_str(text).unwrap();
            assert!(location.is_workspace(), "{text}");
        }
        for path in ["/", "src/a.ts", "./a", ".."] {
            let location = Location {
                path: path.into(),
                range: None,
            };
            assert!(!location.is_workspace(), "{path}");
        }
    }

    #[test]
    fn the_receipt_is_kept_whole() {
        let r: Receipt = serde_json::from_str(
            r#"{"receiptId":"r1","kind":"evaluate","privateOnly":true,"failures":[]}"#,
        )
        .unwrap();
        assert_eq!(r.receipt_id, "r1");
        assert_eq!(r.raw["privateOnly"], Value::Bool(true));
    }
}
