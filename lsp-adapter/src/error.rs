//! The one error type of lsp-adapter: why a document or a workspace cannot be checked.

use rpc_peer::FailClass;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("the client named no workspace folder, so there is nothing to check")]
    NoWorkspace,

    #[error("workspace root {uri}: {reason}")]
    Root { uri: String, reason: String },

    #[error("{uri} is not a file in the workspace: {reason}")]
    Outside { uri: String, reason: String },

    #[error(transparent)]
    Host(#[from] bridge_core::Error),
}

impl Error {
    /// The ASP failClass reported for this error.
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Host(error) => error.fail_class(),
            Error::NoWorkspace | Error::Root { .. } | Error::Outside { .. } => FailClass::Input,
        }
    }
}
