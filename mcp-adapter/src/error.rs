//! The one error type of mcp-adapter; every variant knows its ASP failClass.
//!
//! A tool never turns one of these into a JSON-RPC error: `to_mcp` makes each a tool result with
//! `isError: true` (see `to_mcp::failure`). Only [`Error::Session`] ends `serve`.

use rpc_peer::FailClass;

/// Every way a tool call (or the MCP session itself) can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The host could not answer: down, crashed, slow, refusing, or speaking another protocol.
    #[error(transparent)]
    Host(#[from] bridge_core::Error),

    /// A tool argument is invalid or too large.
    #[error("{0}")]
    Input(String),

    /// A path in the arguments was refused: outside the workspace, or not a plain path.
    #[error("{0}")]
    Path(String),

    /// Repository policy (`.asp/asp.json`) refuses the MCP tools.
    #[error("{0}")]
    Policy(String),

    /// The client cancelled the call before the host answered.
    #[error("the client cancelled the call")]
    Cancelled,

    /// The host's answer does not fit the output budget even with its lists cut.
    #[error("the host's answer does not fit in {budget} bytes even when truncated")]
    Oversize { budget: usize },

    /// Something inside the bridge failed (a worker task, an encoder).
    #[error("internal error: {0}")]
    Internal(String),

    /// The MCP session could not start or broke down.
    #[error("mcp session: {0}")]
    Session(String),
}

impl Error {
    /// The ASP failClass reported for this error.
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Host(error) => error.fail_class(),
            Error::Input(_) | Error::Path(_) => FailClass::Input,
            Error::Policy(_) => FailClass::Policy,
            Error::Oversize { .. } => FailClass::Contract,
            Error::Cancelled | Error::Internal(_) | Error::Session(_) => FailClass::Health,
        }
    }

    /// Whether calling again later may succeed.
    pub fn retryable(&self) -> bool {
        match self {
            Error::Host(error) => error.retryable(),
            Error::Input(_) | Error::Path(_) | Error::Policy(_) | Error::Oversize { .. } => false,
            Error::Cancelled | Error::Internal(_) | Error::Session(_) => true,
        }
    }
}

impl Error {
    /// A refused path (from [`bridge_core::confine`]), kept apart from other argument errors so
    /// that its hint is about paths.
    pub(crate) fn path(error: bridge_core::Error) -> Error {
        match error {
            bridge_core::Error::Input(message) => Error::Path(message),
            other => Error::Host(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_names_its_fail_class() {
        let timeout = Error::from(bridge_core::Error::Peer(rpc_peer::Error::Timeout {
            role: rpc_peer::Role::Host,
            method: "host/status".into(),
            ms: 5,
        }));
        assert_eq!(timeout.fail_class(), FailClass::Health);
        assert!(timeout.retryable());
        assert_eq!(Error::Input("bad".into()).fail_class(), FailClass::Input);
        assert_eq!(Error::Policy("off".into()).fail_class(), FailClass::Policy);
        let contract = Error::from(bridge_core::Error::UnsupportedProtocol {
            found: "asp-outer/2.0".into(),
        });
        assert_eq!(contract.fail_class(), FailClass::Contract);
        assert!(!contract.retryable());
    }
}
