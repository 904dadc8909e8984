//! The one error type of sarif-export.
//!
//! Converting a decision never fails; only reading a saved host answer and writing the log can.

/// Every way an export can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The saved answer is not a host decision (not JSON, not a response, not a decision envelope).
    #[error("{0}")]
    Input(String),

    /// The saved answer is a JSON-RPC error response: the host's own error, with its failClass.
    #[error("the saved answer is a host error")]
    HostAnswer(#[source] bridge_core::Error),

    /// The log could not be serialised or written.
    #[error("cannot write the SARIF log")]
    Write(#[source] std::io::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
