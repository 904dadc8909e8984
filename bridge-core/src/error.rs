//! The one error type of bridge-core; every variant knows its ASP failClass.
//!
//! `deny` and `indeterminate` decisions are results, never errors: only a failure to get an answer
//! from the host (or to build a request for it) is an `Error`.

use rpc_peer::FailClass;

/// Every way a call to the host can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A failure of the JSON-RPC connection to the host, or an error reply from it.
    #[error(transparent)]
    Peer(#[from] rpc_peer::Error),

    #[error("invalid host command: {0}")]
    HostCommand(String),

    #[error("unsupported outerProtocol {found:?}: this bridge speaks asp-outer/1.x")]
    UnsupportedProtocol { found: String },

    #[error("host unavailable: {0}")]
    Unavailable(String),

    /// The supervisor stopped starting the host, for good: `fail_class` is that of the failure that
    /// made it stop (a host that keeps crashing: `health`; one that speaks another protocol:
    /// `contract`). Not retryable: only a restart of the bridge starts the host again.
    #[error(
        "host unavailable: gave up after {failures} failed starts (fix the host, then restart \
         asp-bridge); last: {last}"
    )]
    GaveUp {
        failures: u32,
        last: String,
        fail_class: FailClass,
    },

    #[error("{0}")]
    Input(String),

    /// Reading the repository failed: git (run through `repo_io::git`), or a read.
    #[error(transparent)]
    Repo(#[from] repo_io::Error),
}

impl Error {
    /// The ASP failClass the front ends report for this error.
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Peer(peer) => peer.fail_class(),
            Error::Repo(repo) => repo.fail_class(),
            Error::Unavailable(_) => FailClass::Health,
            Error::GaveUp { fail_class, .. } => *fail_class,
            Error::UnsupportedProtocol { .. } => FailClass::Contract,
            Error::HostCommand(_) | Error::Input(_) => FailClass::Input,
        }
    }

    /// Whether trying again later may succeed.
    pub fn retryable(&self) -> bool {
        match self {
            Error::Peer(peer) => peer.retryable(),
            Error::GaveUp { .. } => false,
            other => other.fail_class() == FailClass::Health,
        }
    }

    pub(crate) fn git(message: impl Into<String>) -> Error {
        repo_io::Error::Git(message.into()).into()
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        repo_io::Error::io(context, source).into()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_names_its_fail_class() {
        assert_eq!(
            Error::UnsupportedProtocol {
                found: "asp-outer/2.0".into()
            }
            .fail_class(),
            FailClass::Contract
        );
        assert_eq!(
            Error::Input("bad path".into()).fail_class(),
            FailClass::Input
        );
    }
}
