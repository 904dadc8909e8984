//! `asp_capabilities`: `host/capabilities`, the composed inspect/check/edit surface: which families
//! are available from which providers, the providers themselves, and coverage.

use std::sync::Arc;

use bridge_core::model::NotRunView;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::Value;

use super::caveats::{Caveats, cut_to_budget};
use super::run::{AspTool, Call, NoArgs};
use crate::error::Error;
use crate::to_mcp::{self, Capability, Coverage, Server};

#[derive(Default)]
pub(crate) struct AspCapabilities;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    #[serde(flatten)]
    pub(crate) caveats: Caveats,
    /// The capability families (`inspect`, `check`, `edit`), canonical names.
    pub(crate) capabilities: Vec<Capability>,
    /// The providers behind them.
    pub(crate) sources: Vec<Server>,
    pub(crate) coverage: Coverage,
    /// Legacy role flags (`sense`, `judge`, `act`) the host still reports, with canonical names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) legacy_roles: Vec<LegacyRole>,
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) omitted_sources: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LegacyRole {
    /// `sense`, `judge` or `act`, as the host wrote it.
    pub(crate) legacy: String,
    /// `inspect`, `check` or `edit`.
    pub(crate) canonical: String,
    pub(crate) enabled: bool,
}

cut_to_budget!(Output, sources, omitted_sources);

impl AspTool for AspCapabilities {
    const NAME: &'static str = "asp_capabilities";
    const TITLE: &'static str = "ASP host capabilities";
    const DESCRIPTION: &'static str = "The inspect/check/edit capabilities the ASP host composes \
from its providers (host/capabilities), with coverage and what is degraded. Read-only and \
advisory: the result satisfies no gate.";
    type Args = NoArgs;
    type Output = Output;
    const READS_HOST_ONLY: bool = true;

    async fn run(self: Arc<Self>, call: Call, _args: NoArgs) -> Result<Output, Error> {
        let client = call.client().await?;
        let answer = client.capabilities().await?.value;
        Ok(Output {
            caveats: Caveats::of_answer(
                asp_wire::proto::CAPABILITIES,
                &answer.receipt,
                &answer.not_run(),
            )?,
            capabilities: to_mcp::capability_families(&answer.capabilities),
            sources: answer.sources.iter().map(to_mcp::server).collect(),
            coverage: to_mcp::coverage(&answer.coverage),
            legacy_roles: legacy_roles(answer.legacy_roles.as_ref()),
            omitted_sources: 0,
        })
    }
}

/// `{"sense": false, "judge": true, …}` as a list with canonical names, in protocol order.
fn legacy_roles(value: Option<&Value>) -> Vec<LegacyRole> {
    let Some(map) = value.and_then(Value::as_object) else {
        return Vec::new();
    };
    ["sense", "judge", "act"]
        .into_iter()
        .filter_map(|legacy| {
            let enabled = map.get(legacy)?.as_bool()?;
            Some(LegacyRole {
                legacy: legacy.to_owned(),
                canonical: bridge_core::model::canonical_capability(legacy).to_owned(),
                enabled,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_roles_are_shown_with_canonical_names() {
        let roles = legacy_roles(Some(
            &serde_json::json!({"act": false, "sense": true, "x": 1}),
        ));
        let shown: Vec<_> = roles
            .iter()
            .map(|r| (r.legacy.as_str(), r.canonical.as_str(), r.enabled))
            .collect();
        assert_eq!(shown, [("sense", "inspect", true), ("act", "edit", false)]);
    }
}
