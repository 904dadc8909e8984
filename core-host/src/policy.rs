//! Repository policy: `.asp/asp.json` of the baseline tree, validated against
//! `asp-config.schema.json`.
//!
//! It is read from the baseline, not the working tree, so that a changeset cannot authorize itself
//! (the candidate policy activates once committed). `policyDigest` is the sha256 of its bytes. An
//! invalid policy makes every decision indeterminate and the host degraded; no policy file means
//! the default policy: only the trusted configuration's `required-for` entries are required, and
//! `gate` fails closed (this host can never achieve gate assurance).

use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

use crate::config::CallSite;
use crate::json;
use crate::schema::{self, Shape};
use crate::snapshot::{Baseline, Blob, Workspace};

/// Where the repository policy lives.
pub(crate) const POLICY_PATH: &str = ".asp/asp.json";
/// Largest policy file read.
const MAX_POLICY_BYTES: usize = 1 << 20;

/// A provider pinned by a requirement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pinned {
    pub(crate) id: String,
    pub(crate) identity: String,
    pub(crate) integrity: String,
    pub(crate) conformance: String,
}

/// A named requirement of the policy, as a call site sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Requirement {
    pub(crate) id: String,
    pub(crate) capabilities: Vec<String>,
    pub(crate) assurance: Vec<String>,
    pub(crate) pinned: Vec<Pinned>,
    /// Required for the call site (else optional).
    pub(crate) required: bool,
}

/// The policy in force.
#[derive(Clone, Debug)]
pub(crate) struct Policy {
    /// `.asp/asp.json`, or the name of the default policy.
    pub(crate) source: String,
    pub(crate) digest: String,
    /// `Some(reason)` when the policy file is invalid.
    pub(crate) invalid: Option<String>,
    /// See [`Policy::blob`].
    blob: Option<String>,
    document: Option<Value>,
}

/// The last policy a host read, by its git object id. A policy depends only on its bytes, which
/// that id names: the last one read (valid or not) is kept; one that could not be read is tried
/// again next time.
#[derive(Debug, Default)]
pub(crate) struct Policies(Mutex<Option<(String, Policy)>>);

impl Policies {
    /// The policy of the baseline tree. Blocking.
    pub(crate) fn load(&self, workspace: &Workspace, baseline: &Baseline) -> Policy {
        let unreadable = |e: crate::error::Error| {
            Policy::invalid(String::new(), format!("the policy cannot be read: {e}"))
        };
        let entry = match workspace.tree_entry(&baseline.tree, POLICY_PATH) {
            Ok(entry) => entry,
            Err(e) => return unreadable(e),
        };
        let Some(entry) = entry else {
            return Policy::default_policy();
        };
        if let Some((oid, policy)) = rpc_peer::lock(&self.0).as_ref()
            && *oid == entry.oid
        {
            return policy.clone();
        }
        let blob = match workspace.git_blob(&entry.oid) {
            Ok(blob) => blob,
            Err(e) => return unreadable(e),
        };
        let policy = Policy::from_blob(blob);
        *rpc_peer::lock(&self.0) = Some((entry.oid, policy.clone()));
        policy
    }
}

impl Policy {
    /// The policy in the policy file's blob.
    fn from_blob(blob: Blob) -> Policy {
        let mut policy = match blob.bytes.filter(|b| b.len() <= MAX_POLICY_BYTES) {
            Some(bytes) => Policy::from_bytes(&bytes),
            None => Policy::invalid(
                digest_of_id(&blob.id),
                "the policy file is larger than 1 MiB".into(),
            ),
        };
        policy.blob = Some(blob.id);
        policy
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Policy {
        let digest = format!("sha256:{}", json::sha256_hex(bytes));
        let document: Value = match serde_json::from_slice(bytes) {
            Ok(document) => document,
            Err(e) => return Policy::invalid(digest, format!("{POLICY_PATH} is not JSON: {e}")),
        };
        if let Err(e) = schema::check(Shape::Policy, &document) {
            return Policy::invalid(
                digest,
                format!("{POLICY_PATH} does not match asp-config.schema.json: {e}"),
            );
        }
        if let Some(missing) = undefined_requirement(&document) {
            return Policy::invalid(
                digest,
                format!("{POLICY_PATH} names the undefined requirement {missing:?}"),
            );
        }
        Policy {
            source: POLICY_PATH.to_owned(),
            digest,
            invalid: None,
            blob: None,
            document: Some(document),
        }
    }

    pub(crate) fn default_policy() -> Policy {
        static DEFAULT: OnceLock<Policy> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let document = json!({
                    "policy": "asp-bridge embedded host default",
                    "requirements": "the trusted configuration's required-for entries",
                    "gate": "fail-closed",
                });
                Policy {
                    source: "default (no .asp/asp.json)".to_owned(),
                    digest: json::digest(&document),
                    invalid: None,
                    blob: None,
                    document: None,
                }
            })
            .clone()
    }

    fn invalid(digest: String, reason: String) -> Policy {
        Policy {
            source: POLICY_PATH.to_owned(),
            digest: if digest.is_empty() {
                "sha256:unreadable".to_owned()
            } else {
                digest
            },
            invalid: Some(reason),
            blob: None,
            document: None,
        }
    }

    /// The ASP blob id of the policy file at the baseline; `None` for the default policy or a file
    /// that could not be read.
    pub(crate) fn blob(&self) -> Option<&str> {
        self.blob.as_deref()
    }

    /// The requirements of `call_site`: required ones first, then optional ones.
    pub(crate) fn requirements(&self, call_site: CallSite) -> Vec<Requirement> {
        let Some(document) = &self.document else {
            return Vec::new();
        };
        let gate = &document["gates"][call_site.as_str()];
        let mut out = Vec::new();
        for (key, required) in [
            ("requiredRequirements", true),
            ("optionalRequirements", false),
        ] {
            for id in gate[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if let Some(def) = find_requirement(document, id) {
                    out.push(requirement(def, required));
                }
            }
        }
        out
    }

    /// The time budget of `call_site`, if the policy sets one.
    pub(crate) fn budget_ms(&self, call_site: CallSite) -> Option<u64> {
        let key = match call_site {
            CallSite::Interactive => "interactiveMs",
            CallSite::Gate => "gateMs",
            CallSite::Sweep => "sweepMs",
        };
        self.document.as_ref()?["budgets"][key].as_u64()
    }
}

fn digest_of_id(blob_id: &str) -> String {
    blob_id
        .strip_prefix("blob:")
        .map_or_else(String::new, str::to_owned)
}

fn find_requirement<'a>(document: &'a Value, id: &str) -> Option<&'a Value> {
    document["requirements"]
        .as_array()?
        .iter()
        .find(|r| r["id"] == id)
}

fn undefined_requirement(document: &Value) -> Option<String> {
    for site in CallSite::ALL {
        for key in ["requiredRequirements", "optionalRequirements"] {
            for id in document["gates"][site.as_str()][key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if find_requirement(document, id).is_none() {
                    return Some(id.to_owned());
                }
            }
        }
    }
    None
}

fn requirement(def: &Value, required: bool) -> Requirement {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Requirement {
        id: text(&def["id"]),
        capabilities: json::strings(&def["capabilities"]),
        assurance: json::strings(&def["assurance"]),
        pinned: def["authority"]["providers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| Pinned {
                id: text(&p["id"]),
                identity: text(&p["identity"]),
                integrity: text(&p["integrity"]),
                conformance: text(&p["conformance"]),
            })
            .collect(),
        required,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Value {
        json!({
            "aspVersion": "asp/1.0",
            "requirements": [{
                "id": "secrets",
                "capabilities": ["check"],
                "assurance": ["advisory"],
                "authority": {"providers": [{"id": "fake", "version": "1", "identity": "fake-provider",
                    "integrity": "sha256:abc", "conformance": "asp-core-v1.0"}]}
            }],
            "gates": {
                "interactive": {"requiredRequirements": ["secrets"], "optionalRequirements": []},
                "gate": {"requiredRequirements": ["secrets"], "optionalRequirements": []},
                "sweep": {"requiredRequirements": [], "optionalRequirements": ["secrets"]}
            },
            "policy": {"policyChangeActivation": "base-policy-two-phase",
                "candidatePolicyAuthority": "trusted-base-or-organization-floor",
                "missingHost": {"interactive": "warn-open", "gate": "fail-closed", "sweep": "warn-open"},
                "authorityModel": "explicit-pinned-provider"},
            "budgets": {"interactiveMs": 5000}
        })
    }

    #[test]
    fn a_valid_policy_is_digested_over_its_bytes_and_names_its_requirements() {
        let bytes = serde_json::to_vec_pretty(&sample()).unwrap();
        let policy = Policy::from_bytes(&bytes);
        assert_eq!(policy.invalid, None);
        assert_eq!(
            policy.digest,
            format!("sha256:{}", json::sha256_hex(&bytes))
        );
        let interactive = policy.requirements(CallSite::Interactive);
        assert_eq!(interactive.len(), 1);
        assert!(interactive[0].required);
        assert_eq!(interactive[0].pinned[0].identity, "fake-provider");
        assert!(!policy.requirements(CallSite::Sweep)[0].required);
        assert_eq!(policy.budget_ms(CallSite::Interactive), Some(5000));
    }

    #[test]
    fn an_invalid_policy_says_why() {
        assert!(
            Policy::from_bytes(b"{")
                .invalid
                .unwrap()
                .contains("not JSON")
        );
        let mut doc = sample();
        doc["requirements"][0]["command"] = json!(["sh", "-c", "x"]);
        let policy = Policy::from_bytes(&serde_json::to_vec(&doc).unwrap());
        assert!(policy.invalid.unwrap().contains("asp-config.schema.json"));
        let mut doc = sample();
        doc["gates"]["gate"]["requiredRequirements"] = json!(["nope"]);
        assert!(
            Policy::from_bytes(&serde_json::to_vec(&doc).unwrap())
                .invalid
                .unwrap()
                .contains("nope")
        );
    }

    #[test]
    fn the_default_policy_requires_nothing_by_itself() {
        let policy = Policy::default_policy();
        assert!(policy.requirements(CallSite::Gate).is_empty());
        assert!(policy.digest.starts_with("sha256:"));
    }
}
