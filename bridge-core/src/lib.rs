//! Client of an ASP host's outer seam, shared by every front end of asp-bridge.
//!
//! It stands on `rpc-peer` (the JSON-RPC peer and child processes, no ASP), `asp-wire` (the ASP
//! wire vocabulary, digests, untrusted text) and `repo-io` (git, path containment, no-follow reads). Its modules: [`model`] (what front ends show), [`host`] (the typed
//! host client, the host process and its handshake, supervision), [`changeset`] (working tree → ChangeSet),
//! [`git`] (the one git runner: a deadline, caps, no program the repository names),
//! [`source`] (where a front end gets its host), [`worktree`] (the one evaluation of the working tree
//! every front end uses), [`confine`] (client paths kept inside the workspace).
//! The public API can call only advisory call sites and never `host/applyProposal` or
//! `host/requestEditPlan`: the bridge relays, it never decides and never gates.

pub mod changeset;
pub mod confine;
mod error;
pub mod host;
pub mod model;
pub mod source;
pub mod worktree;

pub use error::{Error, Result};
pub use host::process::{DEFAULT_HOST_COMMAND, HostCommand, HostConfig, HostProcess};
pub use host::{
    CallOptions, ClientConfig, ClientStats, HostClient, Reply, RestartPolicy, Supervisor,
};
/// The one git runner, in `repo-io` since the embedded host and the providers use it too.
pub use repo_io::git;
pub use source::HostSource;
pub use worktree::Worktree;
