//! `asp_status`: `host/status` summarised for an agent: host state, policy, providers, each call
//! site with what it requires, the capability families, degraded coverage with reasons, receipt id.

use std::sync::Arc;

use asp_wire::proto;
use bridge_core::model::NotRunView;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::caveats::{Budgeted, Caveats};
use super::run::{AspTool, Call, NoArgs};
use crate::error::Error;
use crate::policy::{EFFECTIVE_MODE, POLICY_FILE};
use crate::to_mcp::{self, Capability, NotRun, Server, Snapshot, id, ids, text};

#[derive(Default)]
pub(crate) struct AspStatus;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    /// One line for people: the host, whether it is ready, the providers and their state, which
    /// call sites are available. The fields below give the details.
    pub(crate) summary: String,
    #[serde(flatten)]
    pub(crate) caveats: Caveats,
    /// The host's own state: `ready` means nothing is degraded.
    pub(crate) host: HostOut,
    pub(crate) workspace: WorkspaceOut,
    pub(crate) policy: PolicyOut,
    /// What this MCP front end offers here, whatever the policy's `adapters.mcp.mode` asks for.
    pub(crate) adapter: AdapterOut,
    /// The providers (servers) the host knows.
    pub(crate) servers: Vec<Server>,
    /// Each call site (`interactive`, `gate`, `sweep`) with what it requires. Shown for information:
    /// these tools run only at `interactive` and satisfy no gate.
    pub(crate) call_sites: Vec<CallSiteOut>,
    /// The capability families, canonical names.
    pub(crate) capabilities: Vec<Capability>,
    /// Assurance modes the host can achieve.
    pub(crate) assurance_capabilities: Vec<String>,
    /// How many providers were left out.
    #[serde(skip_serializing_if = "to_mcp::is_zero")]
    pub(crate) omitted_servers: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HostOut {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) outer_protocol: String,
    /// `ready`, `degraded` or `unavailable`.
    pub(crate) state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) binding_candidate: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkspaceOut {
    /// The workspace root as the host sees it.
    pub(crate) root: String,
    /// The host's baseline, which every answer is relative to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline: Option<Snapshot>,
    /// Why the host considers its view stale, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stale_reason: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PolicyOut {
    pub(crate) source: String,
    /// `active`, `pending` or `rejected`.
    pub(crate) activation: String,
    pub(crate) policy_digest: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AdapterOut {
    /// Always `inspect-status-only`.
    pub(crate) mode: String,
    /// `adapters.mcp.mode` as the workspace policy writes it, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) configured_mode: Option<String>,
    /// Where that policy comes from.
    pub(crate) policy_file: String,
    /// Call sites these tools use: only `interactive`.
    pub(crate) call_sites: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallSiteOut {
    /// `interactive`, `gate` or `sweep`.
    pub(crate) call_site: String,
    /// Whether the host reported this call site at all.
    pub(crate) reported: bool,
    pub(crate) available: bool,
    pub(crate) required_providers: Vec<String>,
    /// Capability families required, canonical names.
    pub(crate) required_capabilities: Vec<String>,
    pub(crate) degraded: Vec<NotRun>,
}

impl Budgeted for Output {
    fn shrink(&mut self, keep: f64) -> bool {
        self.caveats
            .cut(&mut self.servers, &mut self.omitted_servers, keep)
    }

    /// The text opens with the summary line and the details follow.
    const ORDERED_TEXT: bool = true;
}

impl AspTool for AspStatus {
    const NAME: &'static str = "asp_status";
    const TITLE: &'static str = "ASP host status";
    const DESCRIPTION: &'static str = "Status of the ASP host that owns code-check decisions for \
this workspace (host/status): host state, policy, providers, what each call site requires, and \
degraded coverage with reasons. Read-only and advisory: the result satisfies no gate.";
    type Args = NoArgs;
    type Output = Output;
    const READS_HOST_ONLY: bool = true;

    async fn run(self: Arc<Self>, call: Call, _args: NoArgs) -> Result<Output, Error> {
        let client = call.client().await?;
        let status = client.status().await?.value;
        Ok(output(&status, call.policy().await?.configured_mode))
    }
}

/// The host's status as shown; `configured_mode` is the workspace policy's `adapters.mcp.mode`.
pub(crate) fn output(status: &proto::Status, configured_mode: Option<String>) -> Output {
    let host = &status.host;
    let workspace = &status.workspace;
    let call_sites: Vec<CallSiteOut> = status
        .gates()
        .into_iter()
        .map(|(name, gate)| CallSiteOut {
            call_site: name.to_owned(),
            reported: gate.is_some(),
            available: gate.is_some_and(|g| g.available),
            required_providers: gate.map(|g| ids(&g.required_providers)).unwrap_or_default(),
            required_capabilities: gate
                .map(|g| to_mcp::capabilities(&g.required_capabilities))
                .unwrap_or_default(),
            degraded: gate
                .map(|g| to_mcp::degradations(&g.degraded))
                .unwrap_or_default(),
        })
        .collect();
    let valid_as_of = workspace
        .valid_as_of
        .as_ref()
        .and_then(to_mcp::snapshot)
        .or_else(|| to_mcp::snapshot_value(status.receipt.raw.get("validAsOf")))
        .or_else(|| to_mcp::snapshot_value(Some(&workspace.baseline)));
    let servers: Vec<Server> = status.servers.iter().map(to_mcp::server).collect();
    let summary = summary(&host_line(host), &servers, &call_sites);
    Output {
        summary,
        caveats: Caveats::new(
            to_mcp::not_run(&status.not_run()),
            valid_as_of,
            id(&status.receipt.receipt_id),
        ),
        host: HostOut {
            name: id(&host.name),
            version: id(&host.version),
            outer_protocol: id(&host.outer_protocol),
            state: id(host.state.as_str()),
            binding_candidate: host.binding_candidate.as_deref().map(id),
        },
        workspace: WorkspaceOut {
            root: text(&workspace.root),
            baseline: to_mcp::snapshot_value(Some(&workspace.baseline)),
            stale_reason: workspace.stale_reason.as_deref().map(text),
        },
        policy: PolicyOut {
            source: id(&status.policy.source),
            activation: id(&status.policy.activation),
            policy_digest: id(&status.policy.policy_digest),
        },
        adapter: AdapterOut {
            mode: EFFECTIVE_MODE.to_owned(),
            configured_mode,
            policy_file: POLICY_FILE.to_owned(),
            call_sites: vec!["interactive".to_owned()],
        },
        servers,
        call_sites,
        capabilities: to_mcp::capability_families(&status.capabilities),
        assurance_capabilities: ids(&status.assurance_capabilities),
        omitted_servers: 0,
    }
}

fn host_line(host: &proto::HostInfo) -> String {
    format!(
        "host {} {} {}",
        id(&host.name),
        id(&host.version),
        id(host.state.as_str())
    )
}

/// `host asp-bridge-host 0.1.0 ready, advisory only (these tools satisfy no gate); providers:
/// hygiene (ready); call sites available: interactive, sweep; not available: gate`.
fn summary(host: &str, servers: &[Server], call_sites: &[CallSiteOut]) -> String {
    const SHOWN: usize = 8;
    let mut providers: Vec<String> = servers
        .iter()
        .take(SHOWN)
        .map(|s| format!("{} ({})", s.id, s.state))
        .collect();
    if servers.len() > SHOWN {
        providers.push(format!("{} more", servers.len() - SHOWN));
    }
    let providers = if providers.is_empty() {
        "none".to_owned()
    } else {
        providers.join(", ")
    };
    let sites = |available: bool| {
        let names: Vec<&str> = call_sites
            .iter()
            .filter(|c| c.available == available)
            .map(|c| c.call_site.as_str())
            .collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    format!(
        "{host}, advisory only (these tools satisfy no gate); providers: {providers}; call sites \
         available: {}; not available: {}",
        sites(true),
        sites(false)
    )
}
