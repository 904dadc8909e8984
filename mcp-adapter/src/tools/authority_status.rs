//! `asp_authority_status`: `host/authority/status`: policy activation and, per provider, enrollment,
//! lifecycle and the authority evidence the host holds for it.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{AspTool, Budgeted, Call, shrink_list};
use crate::error::Error;
use crate::to_mcp::{self, Advisory, NotRun, Server, Snapshot, id};

pub(crate) struct AspAuthorityStatus;

/// `asp_authority_status` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    #[serde(flatten)]
    pub(crate) advisory: Advisory,
    /// `base-active`, `candidate-pending` or `candidate-approved`.
    pub(crate) policy_activation: String,
    pub(crate) policy_digest: String,
    /// Each provider with its enrollment, lifecycle and authority evidence.
    pub(crate) providers: Vec<Server>,
    /// Everything that did not run or ran degraded, and why.
    pub(crate) degraded: Vec<NotRun>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_as_of: Option<Snapshot>,
    pub(crate) receipt_id: String,
    /// Whether providers were left out to fit the output budget.
    pub(crate) truncated: bool,
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) omitted_providers: usize,
}

impl Budgeted for Output {
    fn shrink(&mut self, keep: f64) -> bool {
        let shrunk = shrink_list(&mut self.providers, &mut self.omitted_providers, keep);
        self.truncated |= shrunk;
        shrunk
    }
}

impl AspTool for AspAuthorityStatus {
    const NAME: &'static str = "asp_authority_status";
    const TITLE: &'static str = "ASP authority status";
    const DESCRIPTION: &'static str = "Authority status of the ASP host's providers \
(host/authority/status): policy activation, enrollment, lifecycle and authority evidence per \
provider. Read-only and advisory: the result satisfies no gate.";
    type Args = Args;
    type Output = Output;

    async fn run(call: Call, _args: Args) -> Result<Output, Error> {
        let client = call.client().await?;
        let answer = client.authority_status().await?.value;
        Ok(Output {
            advisory: Advisory::new(),
            policy_activation: id(&answer.policy_activation),
            policy_digest: id(&answer.policy_digest),
            providers: answer.providers.iter().map(to_mcp::server).collect(),
            degraded: to_mcp::not_run(&answer.not_run()),
            valid_as_of: to_mcp::snapshot_value(answer.receipt.raw.get("validAsOf")),
            receipt_id: id(&answer.receipt.receipt_id),
            truncated: false,
            omitted_providers: 0,
        })
    }
}
