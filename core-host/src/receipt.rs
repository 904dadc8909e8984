//! Host-authored receipts: every answer of the outer seam carries one, with what the Core
//! adoption receipt lists (id, times, provider provenance, policy digest, baseline, `validAsOf`,
//! coverage, authority evidence, assurance, request digest, provider ids, timing, failures, and the
//! private/experimental/non-trust-artifact flags).

use std::time::SystemTime;

use asp_wire::proto::Lifecycle;
use asp_wire::reason::Reason;
use serde_json::{Map, Value, json};

use crate::config::CallSite;
use crate::json;

/// The host's name on the outer seam.
pub const HOST_NAME: &str = "asp-bridge-host";
/// The host's version.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What this host can achieve, in every answer.
pub(crate) fn assurance() -> Value {
    json!({
        "mode": "advisory",
        "transactionGuarantee": "none",
        "detail": "providers run as local processes without a sandbox; this host reports checks but cannot enforce a boundary"
    })
}

/// A coverage degradation entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Degradation {
    pub(crate) source: String,
    pub(crate) reason: Reason,
    pub(crate) requirement: Option<String>,
    pub(crate) detail: String,
    pub(crate) capability: Option<&'static str>,
    pub(crate) provider_state: Option<Lifecycle>,
}

impl Degradation {
    pub(crate) fn new(source: &str, reason: Reason, detail: impl Into<String>) -> Degradation {
        Degradation {
            source: source.to_owned(),
            reason,
            requirement: None,
            detail: detail.into(),
            capability: None,
            provider_state: None,
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("source".into(), json!(self.source));
        map.insert("reason".into(), json!(self.reason));
        if let Some(requirement) = &self.requirement {
            map.insert("requirement".into(), json!(requirement));
        }
        map.insert("detail".into(), json!(self.detail));
        if let Some(capability) = self.capability {
            map.insert("capability".into(), json!(capability));
        }
        if let Some(state) = self.provider_state {
            map.insert("providerState".into(), json!(state));
        }
        Value::Object(map)
    }
}

/// Everything a receipt states.
#[derive(Debug)]
pub(crate) struct ReceiptInput<'a> {
    pub(crate) kind: &'static str,
    pub(crate) capability_family: &'static str,
    pub(crate) call_site: Option<CallSite>,
    pub(crate) request_digest: String,
    pub(crate) changeset_digest: Option<&'a str>,
    pub(crate) provider_ids: Vec<String>,
    pub(crate) provenance: Vec<Value>,
    pub(crate) policy_digest: &'a str,
    pub(crate) baseline: &'a Value,
    pub(crate) valid_as_of: Value,
    /// A verdict-shaped coverage object (with `exhaustive`).
    pub(crate) coverage: Value,
    pub(crate) authority: Vec<Value>,
    pub(crate) failures: Vec<Value>,
    pub(crate) started: SystemTime,
}

pub(crate) fn receipt(input: ReceiptInput<'_>) -> Value {
    let ended = SystemTime::now();
    let elapsed = ended
        .duration_since(input.started)
        .unwrap_or_default()
        .as_millis();
    let mut ids = input.provider_ids;
    ids.sort();
    ids.dedup();
    let mut map = Map::new();
    map.insert("receiptId".into(), json!(json::receipt_id(input.kind)));
    map.insert("issuedAt".into(), json!(json::rfc3339(ended)));
    map.insert("kind".into(), json!(input.kind));
    map.insert(
        "host".into(),
        json!({"name": HOST_NAME, "version": HOST_VERSION}),
    );
    map.insert("capabilityFamily".into(), json!(input.capability_family));
    if let Some(call_site) = input.call_site {
        map.insert("callSite".into(), json!(call_site.as_str()));
    }
    map.insert("requestDigest".into(), json!(input.request_digest));
    if let Some(digest) = input.changeset_digest {
        map.insert("changesetDigest".into(), json!(digest));
    }
    map.insert("providerIds".into(), json!(ids));
    map.insert("providerProvenance".into(), Value::Array(input.provenance));
    map.insert("policyDigest".into(), json!(input.policy_digest));
    map.insert("baseline".into(), input.baseline.clone());
    map.insert("validAsOf".into(), input.valid_as_of);
    map.insert("coverage".into(), input.coverage);
    map.insert("authorityEvidence".into(), Value::Array(input.authority));
    map.insert("assurance".into(), assurance());
    map.insert(
        "timing".into(),
        json!({
            "startedAt": json::rfc3339(input.started),
            "endedAt": json::rfc3339(ended),
            "elapsedMs": u64::try_from(elapsed).unwrap_or(u64::MAX),
        }),
    );
    map.insert("failures".into(), Value::Array(input.failures));
    map.insert("privateOnly".into(), json!(true));
    map.insert("experimental".into(), json!(true));
    map.insert("trustArtifact".into(), json!(false));
    Value::Object(map)
}

/// The digest of a request: its method and params.
/// The canonical JSON of `{"method", "params"}` is written around the params' own, without a copy
/// of them ("method" sorts before "params").
pub(crate) fn request_digest(method: &str, params: &Value) -> String {
    let mut text = String::from("{\"method\":");
    text.push_str(&Value::from(method).to_string());
    text.push_str(",\"params\":");
    text.push_str(&asp_wire::digest::canonical_json(params));
    text.push('}');
    format!("sha256:{}", json::sha256_hex(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_digest_is_the_digest_of_method_and_params() {
        let params = json!({"z": [1, {"b": "\u{e9}", "a": null}], "callSite": "gate"});
        for method in ["host/evaluateChangeset", "a\"b"] {
            assert_eq!(
                request_digest(method, &params),
                json::digest(&json!({"method": method, "params": params}))
            );
        }
    }
}
