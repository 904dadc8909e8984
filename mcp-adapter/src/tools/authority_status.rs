//! `asp_authority_status`: `host/authority/status`: policy activation and, per provider, enrollment,
//! lifecycle and the authority evidence the host holds for it.

use std::sync::Arc;

use bridge_core::model::NotRunView;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::caveats::{Caveats, cut_to_budget};
use super::run::{AspTool, Call, NoArgs};
use crate::error::Error;
use crate::to_mcp::{self, Server, id};

#[derive(Default)]
pub(crate) struct AspAuthorityStatus;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    #[serde(flatten)]
    pub(crate) caveats: Caveats,
    /// `base-active`, `candidate-pending` or `candidate-approved`.
    pub(crate) policy_activation: String,
    pub(crate) policy_digest: String,
    /// Each provider with its enrollment, lifecycle and authority evidence.
    pub(crate) providers: Vec<Server>,
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) omitted_providers: usize,
}

cut_to_budget!(Output, providers, omitted_providers);

impl AspTool for AspAuthorityStatus {
    const NAME: &'static str = "asp_authority_status";
    const TITLE: &'static str = "ASP authority status";
    const DESCRIPTION: &'static str = "Authority status of the ASP host's providers \
(host/authority/status): policy activation, enrollment, lifecycle and authority evidence per \
provider. Read-only and advisory: the result satisfies no gate.";
    type Args = NoArgs;
    type Output = Output;
    const READS_HOST_ONLY: bool = true;

    async fn run(self: Arc<Self>, call: Call, _args: NoArgs) -> Result<Output, Error> {
        let client = call.client().await?;
        let answer = client.authority_status().await?.value;
        Ok(Output {
            caveats: Caveats::of_answer(
                asp_wire::proto::AUTHORITY_STATUS,
                &answer.receipt,
                &answer.not_run(),
            )?,
            policy_activation: id(&answer.policy_activation),
            policy_digest: id(&answer.policy_digest),
            providers: answer.providers.iter().map(to_mcp::server).collect(),
            omitted_providers: 0,
        })
    }
}
