//! The ASP v1 wire vocabulary, named once, for the bridge, the embedded host and the providers.
//!
//! [`code`] (the ASP error codes), [`proto`] (the outer seam on the wire: types, method names, provider states), [`inner`] (the inner seam's method names), [`reason`] (degradation reasons), [`digest`] (canonical JSON and
//! sha256 ids, so every side's digests agree), [`text`] (untrusted text made safe to show); `open`
//! declares the closed sets of wire strings and reads a peer's value that may be none of them.
//! It stands on `rpc-peer` only (for the JSON-RPC envelope types) and knows no host or front end.

pub mod code;
pub mod digest;
pub mod inner;
mod open;
pub mod proto;
pub mod reason;
pub mod text;
