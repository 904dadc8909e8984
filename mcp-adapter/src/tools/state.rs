//! What one server's calls share ([`State`]): the host, the workspace, the output budget, the
//! host client the last call reached, and whether the host offers inspect.
//!
//! Whether `asp_inspect` is listed: only when the host offers inspect (its `host/status` says a
//! provider has the capability, or the family is available). The server learns it when a client
//! lists the tools (starting the host once the policy allows it, within a deadline) and again after
//! a call whenever the host was started anew; when a restarted host offers otherwise than what was
//! listed, the client gets `notifications/tools/list_changed`. Unknown (no host, a refusal, no
//! answer in time) lists the tool: a call then says why it cannot answer.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use asp_wire::proto;
use bridge_core::model::canonical_capability;
use bridge_core::{HostClient, HostSource, Worktree};
use rmcp::RoleServer;
use rmcp::service::Peer;

use crate::policy;

/// Default size limit of one result's `structuredContent`, in bytes of JSON. The text block mirrors
/// it (or, for `asp_diagnostics`, is a shorter summary), so a whole result stays under 48 KiB: far below the ~25k-token cap agents put on a result.
pub const DEFAULT_BUDGET_BYTES: usize = 24 * 1024;

/// What every call can reach: the host, the workspace, the budget.
pub(crate) struct State {
    pub(crate) host: Arc<dyn HostSource>,
    /// The canonical workspace root.
    pub(crate) repo: PathBuf,
    /// The working tree `asp_diagnostics` evaluates (rooted at `repo`).
    pub(crate) worktree: Worktree,
    pub(crate) budget: usize,
    /// The host client the last call got, to reach a host that is up before the policy is read.
    live: Mutex<Option<HostClient>>,
    /// Whether the host offers inspect, and whether `asp_inspect` was listed.
    offer: Mutex<Offer>,
}

impl State {
    pub(crate) fn new(host: Arc<dyn HostSource>, repo: PathBuf, budget: usize) -> State {
        State {
            host,
            worktree: Worktree::new(repo.clone()),
            repo,
            budget,
            live: Mutex::new(None),
            offer: Mutex::default(),
        }
    }

    /// Remembers the client a call reached, for [`State::live`].
    pub(crate) fn reached(&self, client: &HostClient) {
        *rpc_peer::lock(&self.live) = Some(client.clone());
    }

    /// The client of the host the last call reached, if that host is still up and answering in
    /// time (else the supervisor decides what to do, after the policy is read).
    pub(crate) fn live(&self) -> Option<HostClient> {
        let live = rpc_peer::lock(&self.live);
        live.as_ref()
            .filter(|c| !c.is_closed() && c.missed_deadlines_in_a_row() == 0)
            .cloned()
    }
}

/// How long listing the tools waits for the host to say what it offers.
const LEARN_DEADLINE: Duration = Duration::from_secs(5);

/// What the server knows of the host's inspect offer, and what it listed.
#[derive(Debug, Default)]
pub(crate) struct Offer {
    /// The host start the offer was learned from ([`bridge_core::HostSource::starts`]).
    starts: u64,
    /// Whether that host offers inspect; `None` until known.
    offered: Option<bool>,
    /// Whether the last tool list (or list_changed) had `asp_inspect`; `None` before any list.
    listed: Option<bool>,
    /// Whether a re-check after a call is under way ([`State::recheck_offer`]).
    checking: bool,
}

/// Whether `status` offers inspect: the family is available or a provider has it.
pub(crate) fn offers_inspect(status: &proto::Status) -> bool {
    let family = status
        .capabilities
        .inspect
        .as_ref()
        .is_some_and(|c| c.available);
    family
        || status.servers.iter().any(|s| {
            s.capabilities
                .iter()
                .any(|c| canonical_capability(c) == "inspect")
        })
}

impl State {
    /// Whether to list `asp_inspect` now; may start the host (once the policy allows it). A list
    /// that differs from the last one also sends `tools/list_changed` (when a re-check after a
    /// call has not sent it already), so a change is announced once whichever notices it first.
    pub(crate) async fn lists_inspect(&self, peer: &Peer<RoleServer>) -> bool {
        let starts = *self.host.starts().borrow();
        let known = {
            let offer = rpc_peer::lock(&self.offer);
            offer.offered.filter(|_| offer.starts == starts)
        };
        let offered = match known {
            Some(offered) => Some(offered),
            None => self.learn(true).await,
        };
        let listed = offered.unwrap_or(true);
        let changed = {
            let mut offer = rpc_peer::lock(&self.offer);
            if offered.is_some() {
                offer.starts = *self.host.starts().borrow();
                offer.offered = offered;
            }
            offer
                .listed
                .replace(listed)
                .is_some_and(|was| was != listed)
        };
        if changed {
            changed_list(peer, listed).await;
        }
        listed
    }

    /// After a call for which [`State::offer_to_recheck`] said so (run on its own, so that no
    /// result waits for it): learns the offer again from the live host, and tells the client the
    /// tool list changed if it no longer matches what was listed.
    pub(crate) async fn recheck_offer(&self, peer: &Peer<RoleServer>) {
        let starts = *self.host.starts().borrow();
        let learned = self.learn(false).await;
        let offered = {
            let mut offer = rpc_peer::lock(&self.offer);
            offer.checking = false;
            let (Some(offered), Some(listed)) = (learned, offer.listed) else {
                return;
            };
            offer.starts = starts;
            offer.offered = Some(offered);
            if offered == listed {
                return;
            }
            offer.listed = Some(offered);
            offered
        };
        changed_list(peer, offered).await;
    }

    /// The host's inspect offer from its `host/status`: from a host started if need be (`start`,
    /// once the policy allows it) or only from one already up; `None` when it cannot be known in
    /// time.
    async fn learn(&self, start: bool) -> Option<bool> {
        let learn = async {
            let client: HostClient = if start {
                policy::check(&self.worktree).await.ok()?;
                let client = self.host.client().await.ok()?;
                self.reached(&client);
                client
            } else {
                self.live()?
            };
            let status = client.status().await.ok()?;
            Some(offers_inspect(&status.value))
        };
        tokio::time::timeout(LEARN_DEADLINE, learn)
            .await
            .ok()
            .flatten()
    }

    /// Whether the offer must be learned again after a call: a list was sent and the host was
    /// started anew since (or the offer is still unknown), and no re-check is under way. Marks the
    /// re-check under way when it is.
    pub(crate) fn offer_to_recheck(&self) -> bool {
        let starts = *self.host.starts().borrow();
        let mut offer = rpc_peer::lock(&self.offer);
        let stale = offer.listed.is_some()
            && !(offer.starts == starts && offer.offered.is_some())
            && !offer.checking;
        offer.checking |= stale;
        stale
    }
}

/// Tells the client the tool list changed (`asp_inspect` now listed or not).
async fn changed_list(peer: &Peer<RoleServer>, inspect: bool) {
    tracing::info!(
        inspect,
        "the host's inspect offer changed: tools/list_changed"
    );
    if let Err(error) = peer.notify_tool_list_changed().await {
        tracing::debug!(%error, "could not send tools/list_changed");
    }
}
