//! Which providers a call site needs: the repository policy's requirements (each satisfied only by
//! an enrolled provider whose identity and integrity match a pin), then the trusted
//! configuration's `required-for` entries, then every other enrolled provider as optional.

use std::sync::Arc;

use asp_wire::proto::Lifecycle;
use asp_wire::reason::Reason;
use serde_json::{Value, json};

use crate::config::CallSite;
use crate::policy::{Pinned, Policy};
use crate::provider::{Failure, Identity, Slot};

/// The authority requirement of a provider enrolled by the trusted configuration.
pub(crate) const TRUSTED_CONFIG: &str = "trusted-config";
/// The coverage entry of a call site that no enrolled provider can check.
pub(crate) const NO_PROVIDER: &str = "check-provider";

/// One coverage entry of a call site.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// The entry in `coverage.required` / `coverage.ran`.
    pub(crate) requirement: String,
    /// The provider that can satisfy it, by index into the host's slots.
    pub(crate) slot: Option<usize>,
    /// The source named in degradations: the provider id, or the pinned ids.
    pub(crate) source: String,
    pub(crate) required: bool,
    /// The authority requirement its evidence names.
    pub(crate) authority_requirement: String,
    /// Providers a policy requirement pins; empty for the trusted configuration's entries.
    pub(crate) pinned: Vec<Pinned>,
    /// Known before running: why the entry cannot be satisfied.
    pub(crate) failure: Option<Failure>,
}

/// The entries of `call_site`.
pub(crate) fn plan(slots: &[Arc<Slot>], policy: &Policy, call_site: CallSite) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut covered = vec![false; slots.len()];
    for requirement in policy.requirements(call_site) {
        let slot = slots
            .iter()
            .position(|s| requirement.pinned.iter().any(|p| p.id == s.spec.id));
        let source = match slot {
            Some(i) => slots[i].spec.id.clone(),
            None => requirement
                .pinned
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(","),
        };
        let failure = if slot.is_none() {
            Some(Failure::new(
                Reason::MissingRequiredProvider,
                Lifecycle::Unavailable,
                format!(
                    "no enrolled provider is one of those requirement {} pins ({source})",
                    requirement.id
                ),
            ))
        } else if !requirement.capabilities.iter().any(|c| c == "check") {
            Some(Failure::new(
                Reason::Unsupported,
                Lifecycle::Active,
                format!(
                    "requirement {} needs {}; this host offers check only",
                    requirement.id,
                    requirement.capabilities.join(", ")
                ),
            ))
        } else if !requirement.assurance.iter().any(|a| a == "advisory") {
            Some(Failure::new(
                Reason::InsufficientAssurance,
                Lifecycle::Active,
                format!(
                    "requirement {} needs {} assurance; this host achieves advisory",
                    requirement.id,
                    requirement.assurance.join(" or ")
                ),
            ))
        } else {
            None
        };
        if let Some(i) = slot {
            covered[i] = true;
        }
        entries.push(Entry {
            authority_requirement: requirement.id.clone(),
            requirement: requirement.id,
            slot,
            source,
            required: requirement.required,
            pinned: requirement.pinned,
            failure,
        });
    }
    for (i, slot) in slots.iter().enumerate() {
        if covered[i] {
            continue;
        }
        let required = slot.spec.required_for.contains(&call_site);
        entries.push(Entry {
            requirement: slot.spec.id.clone(),
            slot: Some(i),
            source: slot.spec.id.clone(),
            required,
            authority_requirement: if required {
                TRUSTED_CONFIG.to_owned()
            } else {
                "none (optional)".to_owned()
            },
            pinned: Vec::new(),
            failure: None,
        });
    }
    if entries.is_empty() {
        // Nothing enrolled can check this call site: its decision has no coverage to stand on, so
        // it is never an `allow` of nothing.
        entries.push(Entry {
            requirement: NO_PROVIDER.to_owned(),
            slot: None,
            source: NO_PROVIDER.to_owned(),
            required: true,
            authority_requirement: "none (no provider)".to_owned(),
            pinned: Vec::new(),
            failure: Some(Failure::new(
                Reason::MissingRequiredProvider,
                Lifecycle::Unavailable,
                format!(
                    "no check provider is enrolled for the {} call site: the built-in hygiene provider is turned off and the trusted configuration enrolls no [[provider]]",
                    call_site.as_str()
                ),
            )),
        });
    }
    entries
}

impl Entry {
    /// Whether an authority grant covers `identity` for this entry; `Err` says why not.
    pub(crate) fn authorize(
        &self,
        identity: Option<&Identity>,
        provider_id: &str,
    ) -> Result<bool, String> {
        if !self.required {
            return Ok(false);
        }
        if self.pinned.is_empty() {
            return Ok(true);
        }
        let Some(identity) = identity else {
            return Err("the provider was not initialized, so its identity is unknown".into());
        };
        let matches = |pin: &Pinned| {
            let names = [
                provider_id,
                identity.name.as_str(),
                identity.publisher.as_deref().unwrap_or(""),
            ];
            let digests = [identity.integrity.as_str(), identity.fingerprint.as_str()];
            pin.id == provider_id
                && names.contains(&pin.identity.as_str())
                && digests.contains(&pin.integrity.as_str())
        };
        if self.pinned.iter().any(matches) {
            Ok(true)
        } else {
            Err(format!(
                "requirement {} pins identity/integrity that the enrolled provider does not have (identity {}, integrity {}, fingerprint {})",
                self.requirement, identity.name, identity.integrity, identity.fingerprint
            ))
        }
    }
}

/// `authorityEvidence` of a provider for one entry.
pub(crate) fn evidence(
    entry: &Entry,
    provider_id: &str,
    identity: Option<&Identity>,
    granted: bool,
    call_site: Option<CallSite>,
    policy_digest: &str,
) -> Value {
    let mut authority = json!({"granted": granted, "requirement": entry.authority_requirement, "policyDigest": policy_digest});
    if let Some(call_site) = call_site {
        authority["callSite"] = json!(call_site.as_str());
    }
    json!({
        "identity": identity.map_or(provider_id, |i| i.name.as_str()),
        "integrity": identity.map_or("unknown", |i| i.integrity.as_str()),
        "conformance": "unverified",
        "isolation": "advisory",
        "authority": authority,
    })
}

/// `providerProvenance` of an initialized provider.
pub(crate) fn provenance(provider_id: &str, identity: &Identity) -> Value {
    json!({
        "provider": provider_id,
        "capability": "check",
        "identity": identity.name,
        "integrity": identity.integrity,
        "conformance": "unverified",
    })
}
