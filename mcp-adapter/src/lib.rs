//! MCP front end of asp-bridge: read-only tools that relay an ASP host's answers to AI agents.
//!
//! One rmcp server serves both MCP eras (the `initialize` handshake of 2025-11-25 and the stateless
//! 2026-07-28 revision) with five tools: `asp_status`, `asp_capabilities`, `asp_authority_status`,
//! `asp_inspect` and `asp_diagnostics`. Every result is advisory (`"authoritative": false`) and
//! satisfies no gate (ADR 0025); a host that is down, slow or refusing becomes a tool result with
//! `isError: true` naming the ASP failClass, never a JSON-RPC error and never an empty clean result.
//!
//! Layout: `frames` (the client's lines checked before rmcp reads them), [`server`] (the
//! `ServerHandler`, thin), `tools` (one file per tool and the runner they
//! share), `to_mcp` (host answers and errors as MCP results), `policy`
//! (`.asp/asp.json`). The host comes from a [`bridge_core::HostSource`]: the supervisor, or anything
//! else that yields a [`bridge_core::HostClient`].

mod error;
mod frames;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod policy;
mod server;
mod to_mcp;
mod tools;

pub use error::Error;
pub use server::{EXTENSION_ID, serve, serve_lines, serve_stdio};
pub use tools::{DEFAULT_BUDGET_BYTES, TOOL_NAMES};
