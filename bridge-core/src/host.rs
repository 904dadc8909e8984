//! The ASP layer above the [`peer`](rpc_peer::peer): the typed outer-seam calls of a host client, the
//! host process with its `host/status` handshake, and the host under rpc-peer's supervisor.
//!
//! A [`HostClient`] is a [`Peer`] that serves no requests ([`NoRequests`]) and names its calls by the
//! ASP outer seam; deadlines, cancellation, late replies and progress routing are the peer's.

pub mod process;
mod supervisor;

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncWrite};

pub use rpc_peer::peer::{CallOptions, ExitProbe, Reply};
pub use rpc_peer::supervisor::{Launch, Lifecycle, Outage, RestartPolicy, StartFailure};
pub use supervisor::{HostLaunch, Supervisor};

use crate::error::{Error, Result};
use asp_wire::proto::{
    self, AdvisoryCallSite, ChangeSet, Comparison, EvaluateParams, QueryInspectParams,
};
use rpc_peer::peer::{NoRequests, Peer, PeerConfig, PeerStats};

/// Settings of one host connection: the peer's.
pub type ClientConfig = PeerConfig;
/// Counters of one host connection: the peer's.
pub type ClientStats = PeerStats;

/// A cheap, clonable handle on one host connection.
#[derive(Clone, Debug)]
pub struct HostClient {
    peer: Peer,
}

impl HostClient {
    /// Starts the reader and writer tasks of a connection over `reader` (the host's stdout) and
    /// `writer` (its stdin). `probe` is asked how the host ended once `reader` ends. An error
    /// reply without a `failClass` is classed by ASP's registry of codes.
    pub fn connect<R, W>(reader: R, writer: W, config: ClientConfig, probe: ExitProbe) -> HostClient
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        HostClient::from_peer(Peer::connect(
            reader,
            writer,
            ClientConfig {
                classify: asp_wire::code::fail_class,
                ..config
            },
            Arc::new(NoRequests),
            probe,
        ))
    }

    /// The host client of an existing connection.
    pub fn from_peer(peer: Peer) -> HostClient {
        HostClient { peer }
    }

    /// The connection underneath.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Sends a request now; the future decodes its result as `T`.
    pub fn call<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Option<&P>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<T>>> + Send + 'static + use<P, T> {
        let request = self.peer.request(method, params, options);
        async move { Ok(request.await?) }
    }

    pub fn status(
        &self,
    ) -> impl Future<Output = Result<Reply<proto::Status>>> + Send + 'static + use<> {
        self.call(proto::STATUS, Some(&EMPTY), CallOptions::default())
    }

    pub fn capabilities(
        &self,
    ) -> impl Future<Output = Result<Reply<proto::Capabilities>>> + Send + 'static + use<> {
        self.call(proto::CAPABILITIES, Some(&EMPTY), CallOptions::default())
    }

    pub fn authority_status(
        &self,
    ) -> impl Future<Output = Result<Reply<proto::AuthorityStatus>>> + Send + 'static + use<> {
        self.call(
            proto::AUTHORITY_STATUS,
            Some(&EMPTY),
            CallOptions::default(),
        )
    }

    /// `host/queryInspect` at the interactive call site.
    pub fn query_inspect(
        &self,
        request: Value,
        timeout_ms: Option<u64>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<proto::Inspection>>> + Send + 'static + use<> {
        let params = QueryInspectParams {
            call_site: AdvisoryCallSite::Interactive,
            request,
            baseline: None,
            timeout_ms,
        };
        self.call(proto::QUERY_INSPECT, Some(&params), options)
    }

    /// `host/evaluateChangeset` at an advisory call site: the type has no way to say `gate`.
    pub fn evaluate_changeset(
        &self,
        call_site: AdvisoryCallSite,
        changeset: ChangeSet,
        comparison: Option<Comparison>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Reply<proto::Decision>>> + Send + 'static + use<> {
        let params = EvaluateParams {
            call_site,
            changeset,
            comparison,
            timeout_ms: None,
        };
        self.call(proto::EVALUATE_CHANGESET, Some(&params), options)
    }

    /// Whether the host's stdout has ended.
    pub fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// How many requests in a row missed their deadline (0 once a reply comes in time): a host that
    /// keeps missing them is hung, and the supervisor replaces it.
    pub fn missed_deadlines_in_a_row(&self) -> u32 {
        self.peer.missed_deadlines_in_a_row()
    }

    /// Why the connection is closed, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<Error> {
        self.peer.closed_reason().map(Error::from)
    }

    /// Resolves once the host's stdout has ended.
    pub async fn closed(&self) {
        self.peer.closed().await
    }

    /// Closes the host's stdin once everything queued before has been written.
    pub fn close_input(&self) {
        self.peer.close_input()
    }

    pub fn stats(&self) -> ClientStats {
        self.peer.stats()
    }
}

/// Params of the methods that take none: `{}`.
#[derive(Serialize)]
pub(crate) struct Empty {}

pub(crate) const EMPTY: Empty = Empty {};

#[cfg(test)]
mod tests;
