//! The one error type of core-host; every variant knows its ASP failClass.
//!
//! Provider failures are not errors: they become degraded coverage in a decision. Only what stops
//! the host from answering at all (a bad configuration, a workspace that is not a git repository, a
//! request it refuses) is an `Error`.

use bridge_core::FailClass;

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

    #[error("{0}")]
    Input(String),

    #[error("git: {0}")]
    Git(String),

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    Bridge(#[from] bridge_core::Error),
}

impl Error {
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Config { .. } | Error::Input(_) | Error::Git(_) => FailClass::Input,
            Error::Io { .. } => FailClass::Health,
            Error::Bridge(e) => e.fail_class(),
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
