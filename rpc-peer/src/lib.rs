//! A role-neutral JSON-RPC 2.0 peer over NDJSON, used alike by the bridge, the embedded host and the providers.
//!
//! Layers, bottom up, each knowing nothing of the ones above it: [`framing`] (NDJSON frames),
//! [`jsonrpc`] (envelopes), [`peer`] (a JSON-RPC peer, both directions, no method of its own),
//! [`child`] (a child process with a peer on its stdio), [`supervisor`] (such a child started
//! lazily, restarted after a crash, given up on). It knows no ASP method: what is asked and
//! answered is the caller's.

pub mod child;
mod error;
pub mod framing;
pub mod jsonrpc;
pub mod peer;
pub mod supervisor;
mod sync;

pub use error::{Error, ExitStatus, FailClass, Result, Role};
pub use peer::{Peer, PeerConfig};
pub use sync::lock;
