//! Client of an ASP host's outer seam, shared by every front end of asp-bridge.
//!
//! Layers, bottom up, each knowing nothing of the ones above it: [`framing`] (NDJSON frames),
//! [`jsonrpc`] (envelopes), [`peer`] (a JSON-RPC peer, both directions, no method of its own),
//! [`child`] (a child process with a peer on its stdio),
//! [`proto`] (the outer seam on the wire), [`model`] (what front ends show), [`host`] (the typed
//! host client, the host process and its handshake, supervision), [`changeset`] (working tree → ChangeSet),
//! [`git`] (the one git runner: a deadline, caps, no program the repository names),
//! [`source`] (where a front end gets its host), [`worktree`] (the one evaluation of the working tree
//! every front end uses), [`confine`] (client paths kept inside the workspace), [`digest`] (canonical JSON and sha256 ids), [`text`] (untrusted
//! host text made safe), [`hygiene`] (the built-in hygiene rules, named once).
//! The public API can call only advisory call sites and never `host/applyProposal` or
//! `host/requestEditPlan`: the bridge relays, it never decides and never gates.

pub mod changeset;
pub mod child;
pub mod confine;
pub mod digest;
mod error;
pub mod framing;
pub mod git;
pub mod host;
pub mod hygiene;
pub mod jsonrpc;
pub mod model;
pub mod peer;
pub mod proto;
pub mod source;
mod sync;
pub mod text;
pub mod worktree;

pub use error::{Error, ExitStatus, FailClass, Result, Role};
pub use host::process::{DEFAULT_HOST_COMMAND, HostCommand, HostConfig, HostProcess};
pub use host::{
    CallOptions, ClientConfig, ClientStats, HostClient, Reply, RestartPolicy, Supervisor,
};
pub use peer::{Peer, PeerConfig};
pub use source::HostSource;
pub use sync::lock;
pub use worktree::Worktree;
