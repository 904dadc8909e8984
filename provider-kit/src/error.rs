//! The one error type of the provider kit.

/// Why the provider could not serve.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection to the host failed.
    #[error("connection to the host: {0}")]
    Peer(#[from] rpc_peer::Error),
}

impl Error {
    /// The ASP failClass of the failure.
    pub fn fail_class(&self) -> rpc_peer::FailClass {
        match self {
            Error::Peer(error) => error.fail_class(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
