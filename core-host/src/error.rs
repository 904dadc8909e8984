//! The one error type of core-host; every variant knows its ASP failClass.
//!
//! Provider failures are not errors: they become degraded coverage in a decision. Only what stops
//! the host from answering at all (a bad configuration, a workspace that is not a git repository, a
//! request it refuses) is an `Error`.

use rpc_peer::FailClass;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trusted configuration file is unreadable or invalid: file, line and key are named.
    #[error("{file}:{line}: {key}: {message}")]
    Config {
        file: String,
        line: usize,
        key: String,
        message: String,
    },

    /// Any other failure is one of bridge-core's, which already has the classes this host needs:
    /// a request it refuses (`Input`), a git that fails (`Git`), a read that fails (`Io`).
    #[error(transparent)]
    Bridge(#[from] bridge_core::Error),
}

impl Error {
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Config { .. } => FailClass::Input,
            Error::Bridge(e) => e.fail_class(),
        }
    }

    pub(crate) fn input(message: impl Into<String>) -> Error {
        bridge_core::Error::Input(message.into()).into()
    }

    pub(crate) fn git(message: impl Into<String>) -> Error {
        bridge_core::Error::Git(message.into()).into()
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        bridge_core::Error::Io {
            context: context.into(),
            source,
        }
        .into()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
